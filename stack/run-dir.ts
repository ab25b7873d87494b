import { chmodSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Cleanup } from './cleanup';

/**
 * A run's temp dir (`od-<name>-…`), by its realpath: what the service stores and compares paths
 * by. Removed at cleanup unless `keep`, for a post-mortem.
 */
export function makeRunDir(name: string, cleanup: Cleanup | null, keep = false): string {
  const tmp = mkdtempSync(path.join(os.tmpdir(), `od-${name}-`));
  chmodSync(tmp, 0o755); // the embedded PostgreSQL runs as its own user and must reach its data dir
  const root = realpathSync(tmp);
  if (cleanup && !keep) {
    cleanup.add('remove temp dir', () => rmSync(root, { recursive: true, force: true }), 60_000);
    cleanup.addLastResort(() => rmSync(root, { recursive: true, force: true }));
  }
  return root;
}
