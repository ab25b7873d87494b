import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { readFileIfExists, writeFileAtomic } from './atomic';
import { GitSideError } from './errors';
import type { WorktreeDirs } from './repo';

const seconds = z.number().int().nonnegative();

/** Spec §10 lock projection, schema 2, plus the tenure epoch (ARCHITECTURE §4). */
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

export const LOCK_FILE = 'overdeck.lock.json';

export function lockPathIn(dirs: WorktreeDirs): string {
  return path.join(dirs.privateDir, LOCK_FILE);
}

export async function writeLockIn(dirs: WorktreeDirs, lock: LockJson): Promise<void> {
  const valid = LockJsonSchema.parse(lock);
  await writeFileAtomic(lockPathIn(dirs), `${JSON.stringify(valid, null, 2)}\n`);
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
  await fs.rm(lockPathIn(dirs), { force: true });
}
