import { z } from 'zod';
import type { RemovedReceipt } from './events';
import { type Refusal, refusal } from './reasons';
import { isFreeState } from './states';

/**
 * Whether a worktree may be removed, and what its removal keeps (docs/cleanup.md). Pure: the git
 * side (src/git/removal.ts) gathers the facts, this decides, and nothing is deleted unless the
 * answer is `remove`. The rule exists so that cleanup never loses work:
 *
 *  - a worktree some other session holds is never removed (`owner_alive` when its owner is known
 *    alive, `worktree_owned` otherwise: stale, silent or unknown owners are reclaimed first, which
 *    preserves their work under their own tenure);
 *  - every commit of its branch is on a landed branch, named by a landing receipt, landed as the
 *    same patch (rebase, cherry-pick) or as part of a squash, or kept by a preserved ref; any other
 *    commit refuses (`unlanded_commits`, with the shas);
 *  - uncommitted and untracked files are removed only once a snapshot of them is a ref
 *    (`snapshot_failed` when taking it failed, `dirty_files` when none can be taken: no ownership
 *    to file it under, or content a snapshot cannot hold such as a nested repository).
 */

const Sha = z.string().regex(/^[0-9a-f]{40,64}$/);

/** How a commit of the branch was found accounted for. */
export const ACCOUNTED_METHODS = ['ancestry', 'receipt', 'patch_id', 'squash', 'clean_merge', 'preserved'] as const;
export type AccountedMethod = (typeof ACCOUNTED_METHODS)[number];

export const AccountedCommitSchema = z.strictObject({
  sha: Sha,
  method: z.enum(ACCOUNTED_METHODS),
  /** what accounts for it: the landed commit of the same patch or squash, the receipt's landed head, the ref that holds it */
  via: z.string(),
});
export type AccountedCommit = z.infer<typeof AccountedCommitSchema>;

export const OwnershipFactSchema = z.strictObject({
  ownershipId: z.string(),
  /** a durable state (src/domain/states.ts) or a local projection's own (a provisional claim) */
  state: z.string(),
  executionSessionId: z.string().nullable(),
  /** where the state was read: the worktree's local projection, the service, or both (held wins) */
  source: z.enum(['projection', 'service', 'both']),
  /** the child holds under the owner's tenure (docs/ownership-record.md#child-holds): while any lives, the worktree stays */
  holds: z.array(z.strictObject({ holdId: z.string(), executionSessionId: z.string(), runtime: z.string().nullable() })).optional(),
});
export type OwnershipFact = z.infer<typeof OwnershipFactSchema>;

export const SnapshotFactSchema = z.discriminatedUnion('status', [
  /** nothing uncommitted or untracked */
  z.strictObject({ status: z.literal('not_needed') }),
  /** a dry run: a snapshot would be taken before removal */
  z.strictObject({ status: z.literal('planned'), ownershipId: z.string() }),
  z.strictObject({ status: z.literal('taken'), ref: z.string(), sha: Sha }),
  /** no snapshot can be taken (no ownership to file it under) */
  z.strictObject({ status: z.literal('unavailable'), why: z.string() }),
  z.strictObject({ status: z.literal('failed'), detail: z.string() }),
]);
export type SnapshotFact = z.infer<typeof SnapshotFactSchema>;

export const RemovalFactsSchema = z.strictObject({
  worktreePath: z.string(),
  branch: z.string().nullable(),
  head: Sha.nullable(),
  /** null: no ownership is known for the worktree (never claimed, or the record is gone) */
  ownership: OwnershipFactSchema.nullable(),
  /** the caller passes the worktree's guard as its owner (the hooks' rule, tenure proof included) */
  callerIsOwner: z.boolean(),
  /** the holding session's liveness as the service judged it; unknown offline */
  liveness: z.enum(['alive', 'dead', 'unknown']),
  /** the landed ref the branch head is reachable from (every commit of the branch is on it), or null */
  headLandedOn: z.string().nullable(),
  accounted: z.array(AccountedCommitSchema),
  /** commits of the branch nothing accounts for: what removal could lose */
  unlanded: z.array(Sha),
  /** more unaccounted commits than were listed */
  unlandedTruncated: z.boolean(),
  /** paths modified, staged, deleted or untracked (not ignored) */
  dirtyFiles: z.array(z.string()),
  /** paths a snapshot cannot hold: nested repositories, populated submodules */
  unpreservable: z.array(z.string()),
  snapshot: SnapshotFactSchema,
});
export type RemovalFacts = z.infer<typeof RemovalFactsSchema>;

export const RemovalReceiptSchema = z.strictObject({
  worktreePath: z.string(),
  branch: z.string().nullable(),
  head: Sha.nullable(),
  ownershipId: z.string().nullable(),
  ownershipState: z.string().nullable(),
  /** where the uncommitted and untracked files went */
  preserved: z.array(z.strictObject({ ref: z.string(), sha: Sha, files: z.number().int().nonnegative() })),
  /** planned: a dry run, the snapshot is not taken yet */
  snapshotPlanned: z.boolean(),
  headLandedOn: z.string().nullable(),
  accounted: z.array(AccountedCommitSchema),
});
export type RemovalReceipt = z.infer<typeof RemovalReceiptSchema>;

export type RemovalDecision = { verdict: 'remove'; receipt: RemovalReceipt } | { verdict: 'refuse'; refusal: Refusal; refusals: Refusal[] };

/** How long the service waits for a host to say whether a worktree reported removed is still there (src/git/presence.ts). */
export const PRESENCE_TIMEOUT_MS = 20_000;

/** How long a removal through the service may take on the worktree's host, snapshot included (src/workflows/removal.ts). */
export const REMOVAL_TIMEOUT_MS = 50_000;

/** Shas listed in a refusal, at most; the count says how many there are. */
export const LISTED_SHAS = 50;
export const LISTED_FILES = 50;

/** The ownership holds the worktree (any held state, and a local provisional claim): only its owner may remove it. */
export function holdsWorktree(o: OwnershipFact | null): boolean {
  return o !== null && !isFreeState(o.state);
}

/**
 * One ownership from the worktree's local projection and the service's record of it. Either
 * holding the worktree is enough to keep it (a projection the host agent has not caught up with,
 * a service that has not heard of an offline claim): the held one wins, the same ownership from
 * both is `both`, and otherwise the service's record, which is the newer, answers.
 */
export function mergeOwnership(local: OwnershipFact | null, service: OwnershipFact | null): OwnershipFact | null {
  if (local === null || service === null) return local ?? service;
  if (local.ownershipId === service.ownershipId) {
    const held = holdsWorktree(service) ? service : local;
    // A child hold either side knows keeps the worktree too (the service's record answers
    // for the runtime; a projection behind it may still name a hold the record ended: kept).
    const holds = new Map<string, NonNullable<OwnershipFact['holds']>[number]>();
    for (const h of [...(local.holds ?? []), ...(service.holds ?? [])]) holds.set(h.holdId, h);
    return { ...held, source: 'both', ...(holds.size > 0 ? { holds: [...holds.values()] } : {}) };
  }
  if (holdsWorktree(local) && !holdsWorktree(service)) return local;
  return service;
}

export function decideRemoval(input: RemovalFacts): RemovalDecision {
  const f = RemovalFactsSchema.parse(input);
  const out: Refusal[] = [];
  const o = f.ownership;

  // Children write in the worktree under the owner's tenure: not even the owner removes it from under them.
  if (o !== null && o.holds !== undefined && o.holds.length > 0) {
    out.push(refusal('holds_live', { children: o.holds }, 'child sessions hold this worktree: end their holds first'));
  }

  if (o !== null && holdsWorktree(o) && !f.callerIsOwner) {
    const owner = { ownershipId: o.ownershipId, executionSessionId: o.executionSessionId, state: o.state, liveness: f.liveness, source: o.source };
    out.push(
      f.liveness === 'alive'
        ? refusal('owner_alive', owner, 'the owner session is alive: its worktree is not removed')
        : refusal('worktree_owned', owner, `another session holds this worktree (liveness ${f.liveness}): release or reclaim it first`),
    );
  }

  if (f.unlanded.length > 0) {
    const count = f.unlanded.length;
    out.push(
      refusal(
        'unlanded_commits',
        { count, truncated: f.unlandedTruncated, commits: f.unlanded.slice(0, LISTED_SHAS) },
        `${count}${f.unlandedTruncated ? '+' : ''} commit${count === 1 ? '' : 's'} of the branch landed nowhere and no ref preserves ${count === 1 ? 'it' : 'them'}`,
      ),
    );
  }

  if (f.unpreservable.length > 0) {
    out.push(
      refusal(
        'dirty_files',
        { count: f.unpreservable.length, files: f.unpreservable.slice(0, LISTED_FILES), unpreservable: true },
        'the worktree holds content no snapshot can keep (a nested repository or populated submodule)',
      ),
    );
  } else if (f.dirtyFiles.length > 0) {
    const files = { count: f.dirtyFiles.length, files: f.dirtyFiles.slice(0, LISTED_FILES) };
    if (f.snapshot.status === 'failed') out.push(refusal('snapshot_failed', { ...files, detail: f.snapshot.detail }));
    else if (f.snapshot.status === 'unavailable') out.push(refusal('dirty_files', { ...files, why: f.snapshot.why }));
    else if (f.snapshot.status === 'not_needed') {
      // Dirty files with no snapshot asked for: a caller's bug, never a silent loss.
      out.push(refusal('dirty_files', { ...files, why: 'no snapshot was taken' }));
    }
  }

  const [first] = out;
  if (first !== undefined) return { verdict: 'refuse', refusal: first, refusals: out };
  const s = f.snapshot;
  return {
    verdict: 'remove',
    receipt: {
      worktreePath: f.worktreePath,
      branch: f.branch,
      head: f.head,
      ownershipId: o?.ownershipId ?? null,
      ownershipState: o?.state ?? null,
      preserved: s.status === 'taken' ? [{ ref: s.ref, sha: s.sha, files: f.dirtyFiles.length }] : [],
      snapshotPlanned: s.status === 'planned',
      headLandedOn: f.headLandedOn,
      accounted: f.accounted,
    },
  };
}

/** The receipt as the `worktree_removed` event keeps it: counts per method, the snapshots, the branch's fate. */
export function removedReceipt(r: RemovalReceipt, branch: RemovedReceipt['branch'] | null): RemovedReceipt {
  const accounted: RemovedReceipt['accounted'] = {};
  for (const a of r.accounted) accounted[a.method] = (accounted[a.method] ?? 0) + 1;
  return {
    head: r.head,
    headLandedOn: r.headLandedOn,
    accounted,
    preserved: r.preserved.slice(0, 8).map((p) => ({ ref: p.ref, sha: p.sha, files: p.files })),
    ...(branch !== null && branch !== undefined ? { branch } : {}),
  };
}
