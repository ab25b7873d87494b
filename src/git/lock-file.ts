import path from 'node:path';
import { z } from 'zod';
import { readFileIfExists } from './atomic';
import { removeInDir, writeInDir } from './confine';
import { GitSideError } from './errors';
import type { WorktreeDirs } from './repo';

const seconds = z.number().int().nonnegative();

/**
 * The lock file of docs/git-projection.md#lock-file, schema 2, with the tenure epoch. A DERIVED copy:
 * written after the config projection (overdeck.config, what the hooks read) from the same
 * state, for tools that read lock files. Nothing on the host decides who may mutate
 * from it; the config projection is the one authority.
 */
export const LockJsonSchema = z.object({
  schema_version: z.literal(2),
  ownership_id: z.string().min(1),
  execution_session_id: z.string().min(1),
  conversation_id: z.string().nullable(),
  claimed_at: seconds,
  last_seen_at: seconds,
  epoch: z.number().int().nonnegative(),
});

export type LockJson = z.infer<typeof LockJsonSchema>;

export { LOCK_FILE } from './projection-keys';
import { LOCK_FILE } from './projection-keys';

export function lockPathIn(dirs: WorktreeDirs): string {
  return path.join(dirs.privateDir, LOCK_FILE);
}

export async function writeLockIn(dirs: WorktreeDirs, lock: LockJson): Promise<void> {
  const valid = LockJsonSchema.parse(lock);
  await writeInDir(dirs.privateDir, LOCK_FILE, `${JSON.stringify(valid, null, 2)}\n`);
}

export async function readLockIn(dirs: WorktreeDirs): Promise<LockJson | null> {
  const raw = await readFileIfExists(lockPathIn(dirs));
  if (raw === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new GitSideError('lock_corrupt', 'lock file is not JSON');
  }
  const parsed = LockJsonSchema.safeParse(json);
  if (!parsed.success) throw new GitSideError('lock_corrupt', 'lock file does not match schema_version 2');
  return parsed.data;
}

export async function clearLockIn(dirs: WorktreeDirs): Promise<void> {
  await removeInDir(dirs.privateDir, LOCK_FILE);
}
