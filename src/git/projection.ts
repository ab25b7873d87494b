import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { readFileIfExists, writeFileAtomic } from './atomic';
import { GitSideError } from './errors';
import { git, requireWorktreeConfigSupport } from './exec';
import { lockFromProjection, lockWorktree, unlockWorktree, worktreeLockReason } from './lock';
import { clearLockIn, writeLockIn } from './lock-file';
import { type WorktreeDirs, worktreeDirs } from './repo';
import { serialisePerWorktree } from './serial';

/** Values go into git config and into hook messages: one line, no control characters. */
const text = z.string().max(2048).regex(/^[^\x00-\x1f\x7f]*$/, 'control characters are not allowed');
const required = text.min(1);
const instant = required.refine((s) => !Number.isNaN(Date.parse(s)), 'not a timestamp');
const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

export const LocalProjectionSchema = z.object({
  ownershipId: required,
  executionSessionId: required,
  runtime: required,
  conversationId: text.nullable(),
  conversationUrl: text.nullable(),
  workerId: text.nullable(),
  runId: text.nullable(),
  lane: text.nullable(),
  planRef: text.nullable(),
  epoch: count,
  seq: count,
  state: required,
  claimedAt: instant,
  lastSeenAt: instant,
  provisional: z.boolean().optional(),
  idempotencyKey: text.nullable().optional(),
});

export type LocalProjection = z.infer<typeof LocalProjectionSchema>;

/** States in which nobody holds the worktree: the guard lets anyone through and the lock is dropped. */
export const NON_LIVE_STATES: readonly string[] = ['released', 'landed', 'closed'];

export function isLiveState(state: string): boolean {
  return !NON_LIVE_STATES.includes(state);
}

type Field = keyof LocalProjection;

/** git config key of every field (spec §9 plus epoch/seq/state/times): the one table both directions use. */
export const PROJECTION_KEYS: Readonly<Record<Field, string>> = {
  ownershipId: 'overdeck.owner.ownership-id',
  executionSessionId: 'overdeck.owner.execution-session-id',
  runtime: 'overdeck.owner.runtime',
  conversationId: 'overdeck.owner.conversation-id',
  conversationUrl: 'overdeck.owner.conversation-url',
  workerId: 'overdeck.owner.worker-id',
  runId: 'overdeck.owner.run-id',
  lane: 'overdeck.lane',
  planRef: 'overdeck.plan-ref',
  epoch: 'overdeck.owner.epoch',
  seq: 'overdeck.owner.seq',
  state: 'overdeck.owner.state',
  claimedAt: 'overdeck.owner.claimed-at',
  lastSeenAt: 'overdeck.owner.last-seen-at',
  provisional: 'overdeck.owner.provisional',
  idempotencyKey: 'overdeck.owner.idempotency-key',
};

const NUMERIC: ReadonlySet<Field> = new Set<Field>(['epoch', 'seq']);
const BOOLEAN: ReadonlySet<Field> = new Set<Field>(['provisional']);
const FIELD_BY_KEY = new Map<string, Field>(Object.entries(PROJECTION_KEYS).map(([f, k]) => [k, f as Field]));

/** Include target, relative so git resolves it next to config.worktree (the private git dir) even if the repo moves. */
export const PROJECTION_FILE = 'overdeck.config';

// ---------------------------------------------------------------------------------------------
// Rendering

function quote(v: string): string {
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The whole key set as one config file; absent (null/undefined) fields are simply not written. */
export function renderProjection(p: LocalProjection): string {
  const sections = new Map<string, string[]>();
  for (const [field, key] of Object.entries(PROJECTION_KEYS) as [Field, string][]) {
    const value = p[field];
    if (value === null || value === undefined) continue;
    const parts = key.split('.');
    const name = parts.pop() as string;
    const header = parts.length === 2 ? `[${parts[0]} "${parts[1]}"]` : `[${parts[0]}]`;
    const lines = sections.get(header) ?? [];
    lines.push(`\t${name} = ${quote(String(value))}`);
    sections.set(header, lines);
  }
  const body = [...sections].map(([header, lines]) => `${header}\n${lines.join('\n')}\n`).join('');
  return `# Written by od-worktree; replaced as a whole on every change. Do not edit.\n${body}`;
}

/** Inverse of renderProjection over `git config` output; null when no projection key is present. */
export function parseProjectionEntries(entries: ReadonlyMap<string, string>): LocalProjection | null {
  const raw: Record<string, unknown> = {};
  let any = false;
  for (const [key, value] of entries) {
    const field = FIELD_BY_KEY.get(key);
    if (field === undefined) continue;
    any = true;
    if (NUMERIC.has(field)) raw[field] = /^\d+$/.test(value) ? Number(value) : value;
    else if (BOOLEAN.has(field)) raw[field] = value === 'true' ? true : value === 'false' ? false : value;
    else raw[field] = value;
  }
  if (!any) return null;
  for (const field of ['conversationId', 'conversationUrl', 'workerId', 'runId', 'lane', 'planRef'] as const) raw[field] ??= null;
  const parsed = LocalProjectionSchema.safeParse(raw);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => i.path.join('.')).join(', ');
    throw new GitSideError('projection_corrupt', `overdeck keys present but invalid (${fields})`);
  }
  return parsed.data;
}

/** `git config -z` output: entries are `key\nvalue\0` (or `key\0` for a valueless boolean). */
export function parseConfigZ(out: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const entry of out.split('\0')) {
    if (entry === '') continue;
    const nl = entry.indexOf('\n');
    if (nl === -1) map.set(entry, 'true');
    else map.set(entry.slice(0, nl), entry.slice(nl + 1)); // later entries win, as in git
  }
  return map;
}

// ---------------------------------------------------------------------------------------------
// Setup: per-worktree config with one include of a file we replace by rename

const extensionReady = new Map<string, Promise<void>>();

/**
 * Turns on extensions.worktreeConfig once per repository. Refuses when shared config holds
 * core.bare=true or core.worktree: with the extension on, git would apply those to every worktree
 * (git-worktree(1)), so enabling it blindly could break the repository.
 */
function ensureWorktreeConfigExtension(dirs: WorktreeDirs, cwd: string): Promise<void> {
  let ready = extensionReady.get(dirs.commonDir);
  if (ready === undefined) {
    ready = (async () => {
      await requireWorktreeConfigSupport(cwd);
      const shared = path.join(dirs.commonDir, 'config');
      const res = await git(['config', '-z', '--file', shared, '--get-regexp', '^(extensions\\.worktreeconfig|core\\.bare|core\\.worktree)$'], {
        cwd,
        okCodes: [1],
      });
      const cfg = parseConfigZ(res.stdout);
      if (isTrue(cfg.get('extensions.worktreeconfig'))) return;
      if (isTrue(cfg.get('core.bare')) || cfg.has('core.worktree')) {
        throw new GitSideError('worktree_config_unsafe', 'shared config sets core.bare or core.worktree; move them to config.worktree first');
      }
      await git(['config', '--file', shared, 'extensions.worktreeConfig', 'true'], { cwd });
    })();
    extensionReady.set(dirs.commonDir, ready);
    ready.catch(() => extensionReady.delete(dirs.commonDir));
  }
  return ready;
}

function isTrue(v: string | undefined): boolean {
  return v !== undefined && ['true', 'yes', 'on', '1'].includes(v.toLowerCase());
}

/** What is on disk before a write: the seq order check and the superseded-provisional stash need it. */
interface Probed {
  seq: number | null;
  /** The projection currently included, null when none, 'corrupt' when its keys do not parse. */
  current: LocalProjection | null | 'corrupt';
}

/**
 * Reads, in one git process, whether config.worktree already includes our file and the projection
 * the included file currently holds; adds the include when missing. `--file` on the private
 * config.worktree (rather than `--worktree`) guarantees nothing lands in shared config even if the
 * extension check were wrong.
 */
async function probe(dirs: WorktreeDirs, cwd: string): Promise<Probed> {
  const file = path.join(dirs.privateDir, 'config.worktree');
  const res = await git(['config', '-z', '--file', file, '--includes', '--get-regexp', '^(include\\.path|overdeck\\..*)$'], {
    cwd,
    okCodes: [1],
  });
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
    await git(['config', '--file', file, '--add', 'include.path', PROJECTION_FILE], { cwd });
  }
  return { seq, current };
}

export interface WriteOptions {
  /** For clears: skip when the projection on disk has a higher seq (a late clear must not erase a newer owner). */
  clearIfSeqAtMost?: number;
  /**
   * Replace whatever is on disk, whatever its seq: only for explicit paths (an offline claim over a
   * non-live projection, `od-worktree reconcile --repair`), never for the host agent's writes.
   */
  force?: boolean;
  /**
   * Compare-and-swap: write only when the seq on disk is still this one (null: no projection), else
   * 'skipped'; the order check is bypassed. For explicit writers that decided on what they read
   * (offline claim, reconcile), so a projection the host agent wrote meanwhile is never overwritten.
   */
  expectSeq?: number | null;
}

/** State of a provisional (offline, spec §14.5) claim not yet submitted to the service. */
export const PROVISIONAL_STATE = 'provisional';
/** State of a provisional claim that lost to a durable owner: the guard refuses its session (hooks/overdeck-guard.sh). */
export const PROVISIONAL_CONFLICT_STATE = 'provisional-conflict';

/**
 * Where a provisional claim goes when a write replaces it before it was reconciled (the host agent
 * projecting another session's durable ownership, or a clear): `od-worktree reconcile` reads it so
 * the claim is submitted or recorded as a conflict instead of vanishing.
 */
export const SUPERSEDED_PROVISIONAL_FILE = 'overdeck.provisional.json';

function supersedes(current: Probed['current'], next: LocalProjection | null): current is LocalProjection {
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

export async function clearSupersededProvisional(worktreePath: string): Promise<void> {
  const dirs = await worktreeDirs(worktreePath);
  await fs.rm(path.join(dirs.privateDir, SUPERSEDED_PROVISIONAL_FILE), { force: true });
}

/** Unserialised body shared by writeProjection and applyLocalProjection (which holds the chain itself). */
export async function writeProjectionIn(worktreePath: string, p: LocalProjection | null, opts: WriteOptions = {}): Promise<'written' | 'skipped'> {
  const valid = p === null ? null : LocalProjectionSchema.parse(p);
  const dirs = await worktreeDirs(worktreePath);
  await ensureWorktreeConfigExtension(dirs, worktreePath);
  const { seq, current } = await probe(dirs, worktreePath);
  const target = path.join(dirs.privateDir, PROJECTION_FILE);
  if (opts.expectSeq !== undefined && opts.expectSeq !== seq) return 'skipped';
  const force = opts.force === true || opts.expectSeq !== undefined;
  if (valid === null) {
    if (!force && seq !== null && opts.clearIfSeqAtMost !== undefined && seq > opts.clearIfSeqAtMost) return 'skipped';
    if (supersedes(current, valid)) await stashProvisional(dirs, current);
    // An empty file rather than unlink: the include stays valid and readers see "no keys" atomically.
    if ((await readFileIfExists(target)) !== null) await writeFileAtomic(target, '');
    await clearLockIn(dirs);
    return 'written';
  }
  if (!force && seq !== null && valid.seq < seq) return 'skipped';
  if (supersedes(current, valid)) await stashProvisional(dirs, current);
  await writeFileAtomic(target, renderProjection(valid));
  return 'written';
}

async function stashProvisional(dirs: WorktreeDirs, p: LocalProjection): Promise<void> {
  await writeFileAtomic(path.join(dirs.privateDir, SUPERSEDED_PROVISIONAL_FILE), `${JSON.stringify(p, null, 2)}\n`);
}

/**
 * Replaces this worktree's projection as a whole (null clears it and the lock file). Returns
 * 'skipped' for a write older (lower seq) than what is on disk, so a late retry cannot roll back
 * a newer owner.
 */
export function writeProjection(worktreePath: string, p: LocalProjection | null, opts: WriteOptions = {}): Promise<'written' | 'skipped'> {
  return serialisePerWorktree(worktreePath, () => writeProjectionIn(worktreePath, p, opts));
}

/**
 * What the hooks see: worktree-scope config with includes followed. (`--worktree` alone does NOT
 * follow includes, as for any single-file scope; git 2.39 verified.)
 */
export async function readProjection(worktreePath: string): Promise<LocalProjection | null> {
  const res = await git(['config', '-z', '--worktree', '--includes', '--get-regexp', '^overdeck\\.'], {
    cwd: path.resolve(worktreePath),
    okCodes: [1, 128],
  });
  if (res.code === 1) return null;
  if (res.code === 128) {
    // Without the extension git refuses --worktree in a multi-worktree repo; we never wrote there.
    if (/worktreeConfig/i.test(res.stderr)) return null;
    throw new GitSideError('git_failed', `git config exited 128: ${res.stderr.split('\n')[0] ?? ''}`.slice(0, 240));
  }
  return parseProjectionEntries(parseConfigZ(res.stdout));
}

export interface ApplyOptions extends WriteOptions {
  /**
   * Whether git's own worktree lock should be held (so `git worktree remove`/`prune` refuse): held
   * while the state is live, dropped otherwise. false drops a lock we placed earlier but never a
   * lock someone else placed (reason without our prefix).
   */
  gitLock: boolean;
  /** Shown by `git worktree list`; prefixed with "overdeck: ". Default names session, ownership, epoch. */
  lockReason?: string;
}

export const GIT_LOCK_PREFIX = 'overdeck: ';

/** Ids only, never the conversation URL (spec §13). */
export function gitLockReason(p: LocalProjection): string {
  return `owned by session ${p.executionSessionId} (ownership ${p.ownershipId}, epoch ${p.epoch})`;
}

/**
 * Brings all three local artefacts to one ownership state under the per-worktree chain: config
 * projection first (what hooks read), then the lock JSON, then git's worktree lock. A skipped
 * (older) projection leaves the locks alone too, so they never describe different owners.
 */
export function applyLocalProjection(worktreePath: string, p: LocalProjection | null, opts: ApplyOptions): Promise<'written' | 'skipped'> {
  return serialisePerWorktree(worktreePath, async () => {
    const result = await writeProjectionIn(worktreePath, p, opts);
    if (result === 'skipped') return result;
    const dirs = await worktreeDirs(worktreePath);
    const live = p !== null && isLiveState(p.state);
    if (p !== null && live) await writeLockIn(dirs, lockFromProjection(p));
    else await clearLockIn(dirs);
    if (p !== null && live && opts.gitLock) {
      await lockWorktree(worktreePath, GIT_LOCK_PREFIX + (opts.lockReason ?? gitLockReason(p)));
    } else if ((await worktreeLockReason(worktreePath))?.startsWith(GIT_LOCK_PREFIX) === true) {
      await unlockWorktree(worktreePath);
    }
    return result;
  });
}

