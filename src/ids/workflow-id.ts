import { createHash } from 'node:crypto';
import path from 'node:path';
import { ulid } from 'ulidx';

/**
 * Workflow id per worktree: readable in the Temporal UI and unique per worktree, whose identity is
 * (host id, canonical worktree path). Nothing a caller spells differently (the repository root
 * above all) takes part, so no spelling can yield a second id, and so a second live owner, for
 * one worktree: Temporal's one-running-workflow-per-id is what makes ownership exclusive.
 * Not workflow code: it uses node:crypto.
 */
export function ownershipWorkflowId(hostId: string, worktreePath: string): string {
  const digest = createHash('sha256').update(`${hostId}\0${worktreePath}`).digest('hex').slice(0, 12);
  const clean = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_') || '_';
  return `ownership/${clean(path.basename(worktreePath))}/${digest}`;
}

/** The removal of a worktree (src/workflows/removal.ts): one id per worktree, so two removals of it never run at once. */
export function removalWorkflowId(hostId: string, worktreePath: string): string {
  return ownershipWorkflowId(hostId, worktreePath).replace(/^ownership\//, 'removal/');
}

export function newOwnershipId(): string {
  return `own_${ulid()}`;
}
