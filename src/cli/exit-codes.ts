/** Documented exit codes of od-worktree (docs/cli.md#exit-codes): scripts branch on these. */
export const EXIT = {
  ok: 0,
  /** refused: owned by someone else, stale epoch, not the owner (guard refusals too); also no, an unknown or an insufficient token (401/403) */
  refused: 1,
  usage: 2,
  notFound: 3,
  /** the service is unreachable (or answered 503) */
  unreachable: 4,
  /** local projection disagrees with the durable record (reconcile needed) */
  conflict: 5,
  internal: 70,
} as const;
