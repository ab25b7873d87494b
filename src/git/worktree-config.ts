import { promises as fs } from 'node:fs';
import path from 'node:path';
import { assertDirUnchanged } from './confine';
import { GitSideError } from './errors';
import { git, requireWorktreeConfigSupport } from './exec';
import { type LocalProjection, parseConfigZ, parseProjectionEntries, PROJECTION_FILE, PROJECTION_KEYS } from './projection-format';
import { pinnedGit, type WorktreeDirs } from './repo';

/**
 * Setup of the per-worktree config: extensions.worktreeConfig once per repository, and one include
 * in the private config.worktree of the file we replace by rename; then what that file holds.
 */

const extensionReady = new Map<string, Promise<void>>();

/**
 * Turns on extensions.worktreeConfig once per repository. Refuses when shared config holds
 * core.bare=true or core.worktree: with the extension on, git would apply those to every worktree
 * (git-worktree(1)), so enabling it blindly could break the repository.
 */
export function ensureWorktreeConfigExtension(dirs: WorktreeDirs): Promise<void> {
  let ready = extensionReady.get(dirs.commonDir);
  if (ready === undefined) {
    ready = (async () => {
      const opts = pinnedGit(dirs);
      await requireWorktreeConfigSupport(opts.cwd);
      const shared = path.join(dirs.commonDir, 'config');
      const read = async () =>
        parseConfigZ(
          (
            await git(['config', '-z', '--file', shared, '--get-regexp', '^(extensions\\.worktreeconfig|core\\.bare|core\\.worktree)$'], {
              ...opts,
              okCodes: [1],
            })
          ).stdout,
        );
      const cfg = await read();
      if (isTrue(cfg.get('extensions.worktreeconfig'))) return;
      if (isTrue(cfg.get('core.bare')) || cfg.has('core.worktree')) {
        throw new GitSideError('worktree_config_unsafe', 'shared config sets core.bare or core.worktree; move them to config.worktree first');
      }
      await assertDirUnchanged(dirs.commonDir);
      // Writers of other worktrees of this repository do not share our lock: one that loses git's
      // own config.lock race is fine as long as the switch is on afterwards.
      const set = await git(['config', '--file', shared, 'extensions.worktreeConfig', 'true'], { ...opts, okCodes: [255] });
      if (set.code !== 0 && !isTrue((await read()).get('extensions.worktreeconfig'))) {
        throw new GitSideError('git_failed', 'could not turn on extensions.worktreeConfig (shared config locked)');
      }
    })();
    extensionReady.set(dirs.commonDir, ready);
    ready.catch(() => extensionReady.delete(dirs.commonDir));
  }
  return ready;
}

function isTrue(v: string | undefined): boolean {
  return v !== undefined && ['true', 'yes', 'on', '1'].includes(v.toLowerCase());
}

/** What is on disk before a write: the order check, the conflict check and the provisional stash need it. */
export interface Probed {
  seq: number | null;
  /** The projection currently included, null when none, 'corrupt' when its keys do not parse. */
  current: LocalProjection | null | 'corrupt';
}

/**
 * Reads, in one git process, whether config.worktree already includes our file and the projection
 * the included file currently holds; adds the include when missing. `--file` on the private
 * config.worktree (rather than `--worktree`) guarantees nothing lands in shared config even if the
 * extension check were wrong. This reads the config projection, the one the hooks read: the lock
 * JSON is never consulted for a decision.
 */
export async function probe(dirs: WorktreeDirs): Promise<Probed> {
  const file = path.join(dirs.privateDir, 'config.worktree');
  // A fresh worktree has no config.worktree: nothing to read, and the include is all it holds.
  if (await createWithInclude(dirs, file)) return { seq: null, current: null };
  const opts = pinnedGit(dirs);
  const res = await git(['config', '-z', '--file', file, '--includes', '--get-regexp', '^(include\\.path|overdeck\\..*)$'], { ...opts, okCodes: [1] });
  const entries = parseConfigZ(res.stdout);
  const includes: string[] = [];
  for (const entry of res.stdout.split('\0')) {
    const nl = entry.indexOf('\n');
    if (nl !== -1 && entry.slice(0, nl) === 'include.path') includes.push(entry.slice(nl + 1));
  }
  const rawSeq = entries.get(PROJECTION_KEYS.seq);
  const seq = rawSeq !== undefined && /^\d+$/.test(rawSeq) ? Number(rawSeq) : null;
  let current: Probed['current'];
  try {
    current = parseProjectionEntries(entries);
  } catch {
    current = 'corrupt';
  }
  if (!includes.includes(PROJECTION_FILE)) {
    await assertDirUnchanged(dirs.privateDir);
    await git(['config', '--file', file, '--add', 'include.path', PROJECTION_FILE], opts);
  }
  return { seq, current };
}

/** What `git config --file F --add include.path overdeck.config` writes into a file that does not exist. */
export const INCLUDE_ONLY = `[include]\n\tpath = ${PROJECTION_FILE}\n`;

/**
 * Creates config.worktree holding only our include, without a git process (a first projection
 * into a fresh worktree is inside the bind's acknowledgement), by git's own protocol for config
 * writes: take `config.worktree.lock` exclusively, then look, then rename the lock over the file.
 * False, changing nothing, when the file exists or another writer holds the lock: the caller
 * then goes through git as before.
 */
async function createWithInclude(dirs: WorktreeDirs, file: string): Promise<boolean> {
  if (await exists(file)) return false;
  await assertDirUnchanged(dirs.privateDir);
  const lock = `${file}.lock`;
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(lock, 'wx', 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    if (await exists(file)) {
      await handle.close();
      await fs.rm(lock, { force: true });
      return false;
    }
    await handle.writeFile(INCLUDE_ONLY);
    await handle.close();
    await fs.rename(lock, file);
    return true;
  } catch (err) {
    await handle.close().catch(() => undefined);
    await fs.rm(lock, { force: true });
    throw err;
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
