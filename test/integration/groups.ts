import path from 'node:path';

/**
 * The integration suites (test/integration/*.suite.ts), in the jest files that run them: each
 * `<group>.test.ts` runs its suites one after another, each in a describe block of its name (its
 * hooks scoped to it, as in a file of its own). jest loads the product's modules afresh for every
 * file (about a CPU-second of each integration file, before its tests did anything); suites that
 * share a file share that load. One suite alone: `npx jest test/integration/<group>.test.ts -t <suite>`.
 * test/unit/suite-groups.test.ts holds that every suite is in exactly one group and every group has its file.
 */
export const GROUPS = {
  api: [
    'api-input-bounds',
    'api-lookups',
    'api-ownerships',
    'api-unavailable',
    'remove-api',
    'payload-codec',
    'sealed-messages',
    'secret-canaries',
    'message-outcomes',
    'settings',
    'tenure',
  ],
  cli: ['cli-admin', 'cli-diagnostics', 'cli-lifecycle', 'cli-service', 'cli-who', 'cli-write-auth'],
  'day-one': ['day-one-cli', 'day-one-temporal-queries', 'day-one-worker-logs', 'namespace-check', 'health-truth'],
  authorship: ['provenance', 'provenance-authors', 'provenance-cli', 'provenance-notes', 'provenance-score'],
  landings: ['late-commits', 'log-ahead', 'landings-scan', 'attribution-disputes'],
  git: ['git-e2e', 'git-gate-history', 'branch-from-git', 'head-on-change', 'hostile-repo', 'safety', 'projection-bound', 'reconcile'],
  ownerships: ['ownership', 'one-live-owner', 'liveness', 'observers', 'heartbeats-store', 'lookups'],
  lifecycle: ['durability', 'cleanup-e2e'],
  mcp: ['mcp-lifecycle', 'mcp-tools'],
} as const satisfies Record<string, readonly string[]>;

export type GroupName = keyof typeof GROUPS;

/** The suites of the group whose file calls this (its `__filename`), each in its describe block. */
export function runGroup(testFile: string): void {
  const group = path.basename(testFile, '.test.ts');
  if (!(group in GROUPS)) throw new Error(`${testFile}: no group ${group} in test/integration/groups.ts`);
  for (const suite of GROUPS[group as GroupName])
    describe(suite, () => {
      // Loaded inside the block so that the suite's hooks and tests are registered in it.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require(path.join(__dirname, `${suite}.suite`));
    });
}
