import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

/**
 * Replace `target` by writing a sibling temp file and renaming it over the target: rename within a
 * directory is atomic, so a concurrent reader opens either the old file or the new one, never a mix.
 * fsync before rename so a crash cannot leave the new name pointing at an empty file.
 */
export interface AtomicWriteOptions {
  /** Runs after the data is synced, right before the rename (see confine.ts: re-verifies the directory). */
  beforeRename?: () => Promise<void>;
}

export async function writeFileAtomic(target: string, data: string, mode = 0o644, opts: AtomicWriteOptions = {}): Promise<void> {
  const tmp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'wx', mode);
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await opts.beforeRename?.();
    await fs.rename(tmp, target);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

export async function readFileIfExists(file: string): Promise<string | null> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

export function isNotFound(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
