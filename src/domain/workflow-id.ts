import { createHash } from 'node:crypto';
import path from 'node:path';
import { ulid } from 'ulidx';

/**
 * Workflow id per worktree (ARCHITECTURE §2): readable in the Temporal UI and unique per
 * (repoRoot, worktreePath). Temporal's one-running-workflow-per-id is what makes "one live
 * mutating owner per worktree" atomic. Not workflow code: it uses node:crypto.
 */
export function ownershipWorkflowId(repoRoot: string, worktreePath: string): string {
  const digest = createHash('sha256').update(`${repoRoot}\0${worktreePath}`).digest('hex').slice(0, 12);
  const clean = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_') || '_';
  return `ownership/${clean(path.basename(repoRoot))}/${clean(path.basename(worktreePath))}/${digest}`;
}

export function newOwnershipId(): string {
  return `own_${ulid()}`;
}
