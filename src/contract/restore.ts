import { z } from 'zod';

/**
 * A WIP snapshot read back (src/git/wip.ts readWipSnapshot) and the answer of
 * `od-worktree restore --json` (src/git/restore.ts). What a snapshot commit holds and how it is
 * laid out: docs/restore.md.
 */

const Oid = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/);

/** Ignored files: stored only when asked for (opt-in, with a byte bound), all or none. */
export const SnapshotIgnoredSchema = z.union([
  z.strictObject({ stored: z.literal(true), tree: Oid, commit: Oid.nullable(), bytes: z.number().int().nonnegative() }),
  z.strictObject({ stored: z.literal(false), reason: z.literal('not_requested') }),
  /** more bytes than the bound: none of them is in the snapshot */
  z.strictObject({ stored: z.literal(false), reason: z.literal('over_bound'), bytes: z.number().int().nonnegative(), bound: z.number().int().nonnegative() }),
]);

export const SnapshotDescriptionSchema = z.strictObject({
  /** 1: taken with its trailers (index, branch, path); 0: an older snapshot, files and HEAD only (its first parent) */
  format: z.union([z.literal(0), z.literal(1)]),
  sha: Oid,
  /** the worktree's files as they were on disk: tracked (modified or not) and untracked, not ignored */
  tree: Oid,
  /** HEAD the snapshot was taken against; null on an unborn branch */
  head: Oid.nullable(),
  /** the branch HEAD named then and its tip (= head; null while unborn); null: HEAD was detached, or not recorded (format 0) */
  branch: z.strictObject({ ref: z.string().startsWith('refs/'), tip: Oid.nullable() }).nullable(),
  /** the staged state; null: not recorded (format 0) or unmerged at the time (`indexUnmerged`) */
  index: z.strictObject({ tree: Oid, commit: Oid.nullable() }).nullable(),
  indexUnmerged: z.boolean(),
  ignored: SnapshotIgnoredSchema,
  /** the worktree's real path when it was taken; null: not recorded (format 0) */
  worktreePath: z.string().nullable(),
  /** further parents the snapshot keeps reachable (late work: commits a reset took off the branch) */
  alsoKeep: z.array(Oid),
  /** committer date of the snapshot commit */
  takenAt: z.string(),
});
export type SnapshotDescription = z.infer<typeof SnapshotDescriptionSchema>;

/** Stable codes of a restore that did not succeed (docs/reason-codes.md#restore). */
export const RESTORE_REASONS = {
  invalid_argument: 'the arguments do not name a snapshot, a path or a branch that can be used',
  snapshot_not_found: 'no WIP snapshot matches: not a snapshot ref, a commit, or the recorded path of one',
  snapshot_corrupt: 'the snapshot cannot be read whole: an object it needs is missing, or its trailers do not parse',
  path_exists: 'the target path exists and is not an empty directory; nothing was changed',
  path_outside_allowed_roots: 'the target path is not under a configured allowed root',
  restore_failed: 'a git step of the restore failed; the message says which',
  restore_mismatch: 'the restored worktree does not match the snapshot byte for byte; it is left in place for inspection',
} as const;
export type RestoreReasonCode = keyof typeof RESTORE_REASONS;
export const RestoreReasonCodeSchema = z.enum(Object.keys(RESTORE_REASONS) as [RestoreReasonCode, ...RestoreReasonCode[]]);

/** Why HEAD is detached in the restored worktree instead of on the recorded branch. */
export const DetachedWhySchema = z.enum([
  /** HEAD was detached when the snapshot was taken */
  'detached_when_taken',
  /** the snapshot does not say (format 0) */
  'not_recorded',
  /** the branch no longer exists */
  'branch_gone',
  /** the branch points elsewhere than the recorded HEAD now */
  'branch_moved',
  /** another worktree has the branch checked out */
  'branch_in_use',
]);

export const RestoreHeadSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('branch'), ref: z.string(), sha: Oid, created: z.boolean() }),
  z.strictObject({ mode: z.literal('detached'), sha: Oid, why: DetachedWhySchema, branch: z.string().nullable(), branchTip: Oid.nullable() }),
]);

export const RestoreOutputSchema = z.strictObject({
  ok: z.literal(true),
  worktreePath: z.string(),
  snapshot: z.strictObject({ sha: Oid, ref: z.string().nullable() }),
  head: RestoreHeadSchema,
  /** what was put back: files of the worktree tree (tracked and untracked), ignored files, and whether the staged state was */
  restored: z.strictObject({
    files: z.number().int().nonnegative(),
    untracked: z.number().int().nonnegative(),
    ignored: z.number().int().nonnegative(),
    index: z.enum(['restored', 'not_recorded']),
  }),
  /** every file (bytes and mode), the index and HEAD were compared with the snapshot after the restore */
  verified: z.literal(true),
  /** a restored worktree has no owner: one comes only through bind or reclaim */
  owner: z.null(),
});
export type RestoreOutput = z.infer<typeof RestoreOutputSchema>;

export const RestoreFailureOutputSchema = z.strictObject({
  ok: z.literal(false),
  code: RestoreReasonCodeSchema,
  error: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type RestoreFailureOutput = z.infer<typeof RestoreFailureOutputSchema>;
