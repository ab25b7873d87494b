import { z } from 'zod';
import type { ReasonCode } from '../domain/reasons';

/**
 * The failure half of the wire contract, for every route and the MCP tools: the error body and
 * the HTTP status of each reason code. Its own module, loading zod and nothing of Temporal, so
 * that `worktree-ownership/schemas` exports it as it is served (./errors.ts maps failures onto it).
 */

/** The error body of every route. `internal` is the one code outside the refusal table: a bug, not a refusal. */
export const ErrorBodySchema = z
  .strictObject({
    code: z.string().describe('a stable reason code (src/domain/reasons.ts), or `internal`'),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .describe('A refusal or failure; never echoes the request payload');
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

export type ApiErrorCode = ReasonCode | 'internal';

/**
 * The HTTP status each reason code is answered with (and `internal`, 500). Part of the wire
 * contract: a code answered with another status is a breaking change (docs/integrating.md#versioning-of-the-wire-schemas).
 */
export const REASON_HTTP_STATUS: Readonly<Record<ApiErrorCode, number>> = Object.freeze({
  invalid_input: 400,
  unknown_field: 400,
  nil_uuid: 400,
  conversation_mismatch: 400,
  conversation_forbidden: 400,
  observation_too_old: 400,
  observation_in_future: 400,
  path_outside_allowed_roots: 400,
  path_not_found: 400,
  force_requires_reason: 400,
  unauthenticated: 401,
  forbidden: 403,
  worker_mismatch: 403,
  force_requires_admin: 403,
  not_found: 404,
  conversation_taken: 409,
  sequence_not_increasing: 409,
  worktree_owned: 409,
  not_owner: 409,
  stale_epoch: 409,
  invalid_state: 409,
  ownership_closed: 409,
  not_a_worktree: 400,
  // 409 rather than 410: the worktree may be recreated at the same path, and the ownership stays.
  worktree_missing: 409,
  projection_conflict: 409,
  owner_alive: 409,
  liveness_unknown: 409,
  no_pending_handoff: 409,
  handoff_mismatch: 409,
  worktree_mismatch: 409,
  ownership_mismatch: 409,
  repo_root_mismatch: 400,
  // 409 like worktree_mismatch: what git says of the worktree now, not a malformed request.
  branch_mismatch: 409,
  detached_head: 409,
  ambiguous: 409,
  // Worktree removal (docs/cleanup.md): what removing it would lose.
  unlanded_commits: 409,
  dirty_files: 409,
  snapshot_failed: 409,
  removal_in_progress: 409,
  worktree_present: 409,
  holds_live: 409,
  holds_exhausted: 409,
  process_not_session: 400,
  host_unavailable: 503,
  // The worker did not accept the API's seal: the deployment's processes hold different service keys.
  message_unsealed: 503,
  unavailable: 503,
  internal: 500,
});
