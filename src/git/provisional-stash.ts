import path from 'node:path';
import { readFileIfExists } from './atomic';
import { removeInDir, writeInDir } from './confine';
import { type LocalProjection, LocalProjectionSchema, PROVISIONAL_STATE } from './projection-format';
import { type WorktreeDirs, worktreeDirs } from './repo';
import { serialisePerWorktree } from './serial';
import type { Probed } from './worktree-config';
import { withWriterLock } from './writer-lock';

/**
 * Where a provisional claim goes when a write replaces it before it was reconciled (the host agent
 * projecting another session's durable ownership, or a clear): `od-worktree reconcile` reads it so
 * the claim is submitted or recorded as a conflict instead of vanishing.
 */
export const SUPERSEDED_PROVISIONAL_FILE = 'overdeck.provisional.json';

export function supersedes(current: Probed['current'], next: LocalProjection | null): current is LocalProjection {
  if (current === null || current === 'corrupt' || current.provisional !== true || current.state !== PROVISIONAL_STATE) return false;
  if (next === null) return true;
  return next.provisional !== true && next.executionSessionId !== current.executionSessionId;
}

/** The provisional claim a write replaced before reconciliation, or null. */
export async function readSupersededProvisional(worktreePath: string): Promise<LocalProjection | null> {
  const dirs = await worktreeDirs(worktreePath);
  const raw = await readFileIfExists(path.join(dirs.privateDir, SUPERSEDED_PROVISIONAL_FILE));
  if (raw === null) return null;
  try {
    const parsed = LocalProjectionSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * Drops the stashed provisional claim, under the writer lock. With `idempotencyKey`, only when the
 * stash still holds that claim: one stashed after the caller read it is not erased unreconciled.
 */
export async function clearSupersededProvisional(worktreePath: string, idempotencyKey?: string | null): Promise<void> {
  const dirs = await worktreeDirs(worktreePath);
  await serialisePerWorktree(dirs.worktreePath, () =>
    withWriterLock(dirs, async () => {
      if (idempotencyKey !== undefined) {
        const stashed = await readSupersededProvisional(dirs.worktreePath);
        if (stashed !== null && (stashed.idempotencyKey ?? null) !== idempotencyKey) return;
      }
      await removeInDir(dirs.privateDir, SUPERSEDED_PROVISIONAL_FILE);
    }),
  );
}

export async function stashProvisional(dirs: WorktreeDirs, p: LocalProjection): Promise<void> {
  await writeInDir(dirs.privateDir, SUPERSEDED_PROVISIONAL_FILE, `${JSON.stringify(p, null, 2)}\n`);
}
