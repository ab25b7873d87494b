import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { isNotFound, readFileIfExists } from './atomic';
import { writeInDir } from './confine';
import { GitSideError } from './errors';
import { LOCK_FILE, LockJsonSchema } from './lock-file';

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

/** What the registry says now, from the disk: every worktree of the common dir whose lock JSON names a live owner. */
export async function scanRegistry(commonDir: string): Promise<Registry> {
  const found: RegistryEntry[] = [];
  const mainPath = path.basename(commonDir) === '.git' ? path.dirname(commonDir) : null;
  const main = await entryOf(commonDir, mainPath, true);
  if (main) found.push(main);
  let names: string[] = [];
  try {
    names = await fs.readdir(path.join(commonDir, 'worktrees'));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  for (const name of names.sort()) {
    const gitDir = path.join(commonDir, 'worktrees', name);
    const dotGit = (await readFileIfExists(path.join(gitDir, 'gitdir')))?.trim();
    // git records the path as it was given; readers compare resolved paths (`pwd -P`), so the registry holds the real one.
    const given = dotGit ? path.dirname(dotGit) : null;
    const e = await entryOf(gitDir, given === null ? null : await fs.realpath(given).catch(() => given), false);
    if (e) found.push(e);
  }
  found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { schema: REGISTRY_SCHEMA, commonDir, worktrees: found };
}

export async function readRegistry(commonDir: string): Promise<Registry | null> {
  const raw = await readFileIfExists(registryPath(commonDir));
  return raw === null ? null : RegistrySchema.parse(JSON.parse(raw));
}

const render = (r: Registry) => `${JSON.stringify(RegistrySchema.parse(r), null, 2)}\n`;

/**
 * Rebuilds the registry from the disk and replaces it (temp file + rename) when it changed. Many
 * worktrees of one repository project at once without a lock between them, so a writer that
 * scanned before another's lock changed could rename last with the older picture: each writer
 * scans again after its rename and writes again until what is on disk is what it just saw. The
 * last rename is always followed by such a check, so the file converges on the disk's state.
 */
export async function refreshRegistry(commonDir: string): Promise<Registry> {
  const dir = path.join(commonDir, REGISTRY_DIR);
  for (let round = 0; ; round++) {
    const now = await scanRegistry(commonDir);
    const text = render(now);
    if ((await readFileIfExists(registryPath(commonDir))) === text) return now;
    if (round >= 8) return now;
    await fs.mkdir(dir, { recursive: true, mode: 0o755 });
    // A directory of the repository's, never a symlink out of it (the common dir is a realpath already).
    if ((await fs.realpath(dir)) !== dir) throw new GitSideError('git_failed', `${REGISTRY_DIR} in the common git dir is not a directory of its own`);
    await writeInDir(dir, REGISTRY_FILE, text, 0o644);
  }
}

/**
 * The projection's call: the registry must never fail or undo the projection it follows (the
 * config projection is the authority and is already written). A failure leaves the previous
 * registry, which the next projection of any worktree of the repository rebuilds.
 */
export async function refreshRegistryQuietly(commonDir: string): Promise<void> {
  try {
    await refreshRegistry(commonDir);
  } catch {
    // Derived and rebuilt on the next projection: see above.
  }
}
