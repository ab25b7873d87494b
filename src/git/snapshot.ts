import path from 'node:path';
import { guardCheck, type GuardResult } from './guard';
import { isLiveState, readProjection } from './projection';
import { preserveWipByTree, type WipSnapshot } from './wip';

/**
 * `od-worktree snapshot`: the WIP preservation a reclaim runs for a dead owner, run by the owner
 * itself before something risky, offline. Who may is the hooks' rule on the local projection
 * (guardCheck); the ref is under the ownership's WIP namespace and named after the tree
 * (wipTreeRef), so snapshotting the same content again makes no second ref.
 */

export type SnapshotOutcome =
  | { status: 'saved'; ownershipId: string; snapshot: WipSnapshot }
  | { status: 'clean'; ownershipId: string }
  | { status: 'unowned' }
  | { status: 'refused'; ownershipId: string; guard: GuardResult };

export interface SnapshotOptions {
  /** OVERDECK_EXECUTION_SESSION_ID and OVERDECK_EPOCH, as the hooks would see them. */
  env: Readonly<Record<string, string | undefined>>;
  allowedRoots?: readonly string[];
  /** Also keep the worktree's ignored files, when together at most this many bytes (else none, said in the snapshot). */
  ignoredMaxBytes?: number;
}

export async function snapshotWorktree(worktreePath: string, opts: SnapshotOptions): Promise<SnapshotOutcome> {
  const top = path.resolve(worktreePath);
  const p = await readProjection(top);
  // No live ownership, no namespace to put it under: a free worktree's work belongs to nobody yet.
  if (p === null || !isLiveState(p.state)) return { status: 'unowned' };
  const guard = await guardCheck(top, opts.env);
  if (!guard.allowed) return { status: 'refused', ownershipId: p.ownershipId, guard };
  const made = await preserveWipByTree(top, p.ownershipId, {
    ...(opts.allowedRoots !== undefined ? { allowedRoots: opts.allowedRoots } : {}),
    ...(opts.ignoredMaxBytes !== undefined ? { ignored: { maxBytes: opts.ignoredMaxBytes } } : {}),
  });
  return made === null ? { status: 'clean', ownershipId: p.ownershipId } : { status: 'saved', ownershipId: p.ownershipId, snapshot: made };
}
