/**
 * The search attributes an ownership workflow publishes: the one home of their names. The workflow
 * defines its keys from this (src/workflows/publish.ts), src/config.ts derives the table every
 * Temporal server the project starts registers, and test/unit/compose.test.ts holds deploy/ to it.
 * All are keywords but the lineage's list (SEARCH_ATTRIBUTE_TYPES). Pure and stateless: preloaded into the workflow sandbox.
 */
export const SEARCH_ATTRIBUTE_NAMES = {
  ownershipId: 'OwnershipId',
  repoRoot: 'OwnershipRepoRoot',
  worktree: 'OwnershipWorktree',
  branch: 'OwnershipBranch',
  state: 'OwnershipState',
  session: 'OwnerSessionId',
  worker: 'OwnerWorkerId',
  conversation: 'OwnerConversationId',
  landedHead: 'LandedHead',
  /** every session that ever owned the ownership (its lineage), a keyword list */
  sessions: 'OwnershipSessions',
} as const;

/** Each attribute's Temporal type: keywords, but the lineage's list of sessions. */
export const SEARCH_ATTRIBUTE_TYPES: Readonly<Record<keyof typeof SEARCH_ATTRIBUTE_NAMES, 'Keyword' | 'KeywordList'>> = {
  ownershipId: 'Keyword',
  repoRoot: 'Keyword',
  worktree: 'Keyword',
  branch: 'Keyword',
  state: 'Keyword',
  session: 'Keyword',
  worker: 'Keyword',
  conversation: 'Keyword',
  landedHead: 'Keyword',
  sessions: 'KeywordList',
};

export type SearchAttributeField = keyof typeof SEARCH_ATTRIBUTE_NAMES;
export type SearchAttributeName = (typeof SEARCH_ATTRIBUTE_NAMES)[SearchAttributeField];
