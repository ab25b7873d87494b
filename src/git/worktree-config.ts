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
          (await git(['config', '-z', '--file', shared, '--get-regexp', '^(extensions\\.worktreeconfig|core\\.bare|core\\.worktree)$'], { ...opts, okCodes: [1] })).stdout,
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
