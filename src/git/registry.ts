import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { isNotFound, readFileIfExists } from './atomic';
import { writeInDir } from './confine';
import { GitSideError } from './errors';
import { LOCK_FILE, LockJsonSchema } from './lock-file';
import { withDirLock } from './writer-lock';

/**
 * The repository's registry of owned worktrees, for tools that are not ours (a cleanup script, an
 * IDE, another agent runtime): `<git common dir>/od-worktree/registry.json`, readable with `cat`
 * and `jq`, documented in docs/integrating.md#the-registry. It is DERIVED: rebuilt from every
 * worktree's lock JSON (lock-file.ts) and git's worktree lock each time the host projects, never
 * read back by anything here to decide who may mutate (the config projection stays the authority).
 * Ids only: no tenure hash, no conversation URL, nothing a secret could be derived from.
 */

export const REGISTRY_DIR = 'od-worktree';
export const REGISTRY_FILE = 'registry.json';
export const REGISTRY_SCHEMA = 'od-worktree.registry/1';

export const RegistryEntrySchema = z.strictObject({
  /** the worktree's directory as git records it (`<private git dir>/gitdir` without `/.git`) */
  path: z.string(),
  /** the worktree's private git dir (for the main worktree, the common dir) */
  gitDir: z.string(),
  main: z.boolean(),
  ownershipId: z.string(),
  executionSessionId: z.string(),
  conversationId: z.string().nullable(),
  epoch: z.number().int().nonnegative(),
  /** unix seconds */
  claimedAt: z.number().int().nonnegative(),
  /** git's worktree lock reason when od-worktree placed it (`overdeck: …`), else null */
  lockReason: z.string().nullable(),
});
export type RegistryEntry = z.infer<typeof RegistryEntrySchema>;

export const RegistrySchema = z.strictObject({
  schema: z.literal(REGISTRY_SCHEMA),
  commonDir: z.string(),
  worktrees: z.array(RegistryEntrySchema),
});
export type Registry = z.infer<typeof RegistrySchema>;

export function registryPath(commonDir: string): string {
  return path.join(commonDir, REGISTRY_DIR, REGISTRY_FILE);
}

/**
 * git's lock reason as od-worktree writes it (projection.ts gitLockReason), parsed: the reason is
 * one line with a fixed grammar so a tool that only runs `git worktree list --porcelain` can read
 * the owner without us. null for a reason we did not write, or a provisional claim's other wording.
 */
const LOCK_REASON = /^overdeck: owned by session (\S+) \(ownership (\S+), epoch (\d+)\)$/;
export function parseLockReason(reason: string): { executionSessionId: string; ownershipId: string; epoch: number } | null {
  const m = LOCK_REASON.exec(reason.trim());
  return m ? { executionSessionId: m[1]!, ownershipId: m[2]!, epoch: Number(m[3]) } : null;
}

async function entryOf(gitDir: string, worktreePath: string | null, main: boolean): Promise<RegistryEntry | null> {
  const raw = await readFileIfExists(path.join(gitDir, LOCK_FILE));
  if (raw === null || worktreePath === null) return null;
  let lock;
  try {
    lock = LockJsonSchema.parse(JSON.parse(raw));
  } catch {
    // A lock file being replaced is never torn (rename); one that does not parse is someone else's damage, not an owner.
    return null;
  }
  const locked = main ? null : await readFileIfExists(path.join(gitDir, 'locked'));
  const reason = locked?.replace(/\n$/, '') ?? null;
  return {
    path: worktreePath,
    gitDir,
    main,
    ownershipId: lock.ownership_id,
    executionSessionId: lock.execution_session_id,
    conversationId: lock.conversation_id,
    epoch: lock.epoch,
    claimedAt: lock.claimed_at,
    lockReason: reason?.startsWith('overdeck: ') === true ? reason : null,
  };
}

/** The entry for one git dir of the common dir (its main worktree's or a linked one's), null when it names no live owner. */
async function entryAt(commonDir: string, gitDir: string): Promise<RegistryEntry | null> {
  if (gitDir === commonDir) return entryOf(commonDir, path.basename(commonDir) === '.git' ? path.dirname(commonDir) : null, true);
  const dotGit = (await readFileIfExists(path.join(gitDir, 'gitdir')))?.trim();
  // git records the path as it was given; readers compare resolved paths (`pwd -P`), so the registry holds the real one.
  const given = dotGit ? path.dirname(dotGit) : null;
  return entryOf(gitDir, given === null ? null : await fs.realpath(given).catch(() => given), false);
}

const byPath = (a: RegistryEntry, b: RegistryEntry) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** What the registry says now, from the disk: every worktree of the common dir whose lock JSON names a live owner. */
export async function scanRegistry(commonDir: string): Promise<Registry> {
  let names: string[] = [];
  try {
    names = await fs.readdir(path.join(commonDir, 'worktrees'));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const found: RegistryEntry[] = [];
  for (const gitDir of [commonDir, ...names.sort().map((n) => path.join(commonDir, 'worktrees', n))]) {
    const e = await entryAt(commonDir, gitDir);
    if (e) found.push(e);
  }
  return { schema: REGISTRY_SCHEMA, commonDir, worktrees: found.sort(byPath) };
}

export async function readRegistry(commonDir: string): Promise<Registry | null> {
  const raw = await readFileIfExists(registryPath(commonDir));
  return raw === null ? null : RegistrySchema.parse(JSON.parse(raw));
}

const render = (r: Registry) => `${JSON.stringify(RegistrySchema.parse(r), null, 2)}\n`;

/** The lock every writer of the registry holds: one worktree's update is a read, a change and a rename. */
const REGISTRY_LOCK = 'registry.lock';
/** Left by an update that failed: the next writer rebuilds the registry whole, whichever worktree it projects. */
const REBUILD_MARK = 'rebuild';

/** `<common dir>/od-worktree`, made if missing: a directory of the repository's, never a symlink out of it. */
async function registryDir(commonDir: string): Promise<string> {
  const dir = path.join(commonDir, REGISTRY_DIR);
  await fs.mkdir(dir, { recursive: true, mode: 0o755 });
  // The common dir is a realpath already, so anything else is a link somewhere.
  if ((await fs.realpath(dir)) !== dir) throw new GitSideError('git_failed', `${REGISTRY_DIR} in the common git dir is not a directory of its own`);
  return dir;
}

/** Replaces the file (temp file + rename) only when `next` is not what it holds. */
async function writeIfChanged(dir: string, commonDir: string, next: Registry): Promise<Registry> {
  const text = render(next);
  if ((await readFileIfExists(registryPath(commonDir))) !== text) await writeInDir(dir, REGISTRY_FILE, text, 0o644);
  return next;
}

/** Rebuilds the registry from every worktree of the repository and replaces it when it changed. */
export async function refreshRegistry(commonDir: string): Promise<Registry> {
  const dir = await registryDir(commonDir);
  return withDirLock(dir, REGISTRY_LOCK, async () => writeIfChanged(dir, commonDir, await scanRegistry(commonDir)));
}

/**
 * One worktree's projection changed: its entry is read again from its own git dir and replaced (or
 * dropped) in the registry, so a projection costs the same in a repository of ten worktrees as in
 * one of ten thousand. A registry that is missing, or not one this code can read, is rebuilt whole.
 */
export async function updateRegistryEntry(commonDir: string, gitDir: string): Promise<Registry> {
  const dir = await registryDir(commonDir);
  return withDirLock(dir, REGISTRY_LOCK, async () => {
    const behind = await fs.stat(path.join(dir, REBUILD_MARK)).then(
      () => true,
      () => false,
    );
    const current = behind ? null : await readRegistry(commonDir).catch(() => null);
    if (current === null || current.commonDir !== commonDir) {
      const whole = await writeIfChanged(dir, commonDir, await scanRegistry(commonDir));
      await fs.rm(path.join(dir, REBUILD_MARK), { force: true });
      return whole;
    }
    const entry = await entryAt(commonDir, gitDir);
    const rest = current.worktrees.filter((w) => w.gitDir !== gitDir);
    return writeIfChanged(dir, commonDir, { ...current, worktrees: (entry ? [...rest, entry] : rest).sort(byPath) });
  });
}

/**
 * The projection's call: the registry must never fail or undo the projection it follows (the
 * config projection is the authority and is already written). A failure leaves the previous
 * registry and a mark, so the next projection of any worktree of the repository rebuilds it whole.
 */
export async function updateRegistryQuietly(commonDir: string, gitDir: string): Promise<void> {
  try {
    await updateRegistryEntry(commonDir, gitDir);
  } catch {
    const dir = path.join(commonDir, REGISTRY_DIR);
    // Only into a directory of its own (never through a link out of the common dir).
    await fs
      .realpath(dir)
      .then((real) => (real === dir ? fs.writeFile(path.join(dir, REBUILD_MARK), '') : undefined))
      .catch(() => undefined);
  }
}
