/**
 * The ownership rule, its one implementation: the gate program runs it for the PATH gate, for the
 * installed hooks (./hooks.ts: every refusal of theirs) and for `od-worktree guard`, for the
 * worktree whose private git dir is given and the caller's OVERDECK_* variables. The shell fast
 * path (hooks/overdeck-guard.sh od_mine) only ever accepts what this accepts. The statuses and their
 * reason codes are GUARD_REFUSALS of src/domain/git-rules.ts.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { guardStatusOf, type GuardReason } from '../domain/git-rules';
import { FREE_STATES } from '../domain/states';
import { standingOf, type ProjectedHolders } from '../domain/tenure';
import { firstLine } from './files';
import { HOLD_KEY_PREFIX, HOLD_KEYS, LOCK_FILE, PROVISIONAL_CONFLICT_STATES } from '../git/projection-keys';

export type Env = Readonly<Record<string, string | undefined>>;

export interface Owner {
  any: boolean;
  owner: string;
  runtime: string;
  ownership: string;
  epoch: string;
  state: string;
  worker: string;
  conversation: string;
  tenure: string;
  /** The live child holds the projection names (`[overdeck "hold.<holdId>"]`, src/git/projection-format.ts), each with its child session and hash words. */
  holds: Array<{ holdId: string; executionSessionId: string; tenureHash: string }>;
}

const KEYS: Readonly<Record<string, keyof Owner>> = {
  'execution-session-id': 'owner',
  runtime: 'runtime',
  'ownership-id': 'ownership',
  epoch: 'epoch',
  state: 'state',
  'worker-id': 'worker',
  'conversation-id': 'conversation',
  'tenure-hash': 'tenure',
};

const empty = (): Owner => ({ any: false, owner: '', runtime: '', ownership: '', epoch: '', state: '', worker: '', conversation: '', tenure: '', holds: [] });

function setKey(o: Owner, key: string, value: string): void {
  const field = KEYS[key];
  if (field !== undefined && field !== 'any' && field !== 'holds') o[field] = value;
  o.any = true;
}

/** A key of a child hold's section; a hold without both its session and its hash gives no standing (holdsOf drops it). */
function setHoldKey(pending: Map<string, { executionSessionId: string; tenureHash: string }>, holdId: string, key: string, value: string): void {
  const h = pending.get(holdId) ?? { executionSessionId: '', tenureHash: '' };
  if (key === HOLD_KEYS.executionSessionId) h.executionSessionId = value;
  else if (key === HOLD_KEYS.tenureHash) h.tenureHash = value;
  pending.set(holdId, h);
}

function holdsOf(pending: ReadonlyMap<string, { executionSessionId: string; tenureHash: string }>): Owner['holds'] {
  return [...pending].filter(([, h]) => h.executionSessionId !== '' && h.tenureHash !== '').map(([holdId, h]) => ({ holdId, ...h }));
}

const HOLD_HEADER = /^\[overdeck "hold\.([A-Za-z0-9_:@+-][A-Za-z0-9._:@+-]*)"\]$/;

/**
 * The projection of the worktree whose private git dir is GD, read as the shell guard reads it:
 * the exact form od-worktree writes; anything else (escapes, hand edits) is asked of git, whose
 * answer is authoritative (worktree scope only: a global overdeck.owner.* must not count).
 */
export function readOwner(gd: string, realGit: string, env: Env): Owner {
  const file = path.join(gd, 'overdeck.config');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return lockWitness(gd);
  }
  const o = empty();
  const holds = new Map<string, { executionSessionId: string; tenureHash: string }>();
  let section = '';
  let holdId = '';
  for (const l of text.split('\n')) {
    if (l === '' || l.startsWith('#')) continue;
    if (l.includes('\\')) return readOwnerGit(gd, realGit, env);
    if (l === '[overdeck "owner"]') {
      section = 'owner';
      continue;
    }
    if (l.startsWith('[')) {
      const hold = HOLD_HEADER.exec(l);
      section = hold === null ? 'other' : 'hold';
      holdId = hold?.[1] ?? '';
      continue;
    }
    if (section !== 'owner' && section !== 'hold') continue;
    const m = /^\t([a-z][^]*?) = "([^]*)"$/.exec(l);
    if (m === null) return readOwnerGit(gd, realGit, env);
    if (section === 'hold') setHoldKey(holds, holdId, m[1]!, m[2]!);
    else setKey(o, m[1]!, m[2]!);
  }
  if (!o.any) return lockWitness(gd);
  o.holds = holdsOf(holds);
  return o;
}

/**
 * Whether the worktree whose private git dir is GD may be owned, so that its rule must be read:
 * it has a projection, or a lock file that outlived one (lockWitness). Neither: free, unread.
 */
export function mayBeOwned(gd: string): boolean {
  return existsSync(path.join(gd, 'overdeck.config')) || existsSync(path.join(gd, LOCK_FILE));
}

/** The state of a worktree whose lock file outlived its projection (guardAt refuses projection_missing). */
const PROJECTION_MISSING = 'projection-missing';

/**
 * No owner in the projection. The writers put the projection first and the lock file after it,
 * and clear them in the same order (src/git/projection.ts), so a lock file without a projection
 * is not a state they leave: the projection was deleted or emptied by hand. The worktree is then
 * not free: the lock file is a witness that it was owned, whose names are shown, never trusted.
 */
function lockWitness(gd: string): Owner {
  let lock: { ownership_id?: unknown; execution_session_id?: unknown; epoch?: unknown };
  try {
    lock = JSON.parse(readFileSync(path.join(gd, LOCK_FILE), 'utf8')) as typeof lock;
  } catch (err) {
    // No lock file: free. One that is there but unreadable still witnesses an owner.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return empty();
    lock = {};
  }
  const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
  return {
    ...empty(),
    any: true,
    state: PROJECTION_MISSING,
    owner: text(lock.execution_session_id),
    ownership: text(lock.ownership_id),
    epoch: text(lock.epoch),
  };
}

function readOwnerGit(gd: string, realGit: string, env: Env): Owner {
  const o = empty();
  const holds = new Map<string, { executionSessionId: string; tenureHash: string }>();
  const r = spawnSync(realGit, [`--git-dir=${gd}`, 'config', '--worktree', '--includes', '--get-regexp', '^overdeck\\.(owner|hold)\\.'], {
    env: env as NodeJS.ProcessEnv,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  if (r.status !== 0 || typeof r.stdout !== 'string') return lockWitness(gd);
  for (const line of r.stdout.split('\n')) {
    if (line === '') continue;
    const sp = line.search(/[ \t]/);
    const k = sp < 0 ? line : line.slice(0, sp);
    const v = sp < 0 ? '' : line.slice(sp + 1).trim();
    if (k.startsWith(HOLD_KEY_PREFIX)) {
      const rest = k.slice(HOLD_KEY_PREFIX.length);
      const dot = rest.lastIndexOf('.');
      if (dot > 0) setHoldKey(holds, rest.slice(0, dot), rest.slice(dot + 1), v);
      continue;
    }
    setKey(o, k.replace(/^overdeck\.owner\./, ''), v);
  }
  if (!o.any) return lockWitness(gd);
  o.holds = holdsOf(holds);
  return o;
}

export interface Verdict {
  /** 0: allowed; else the status of GUARD_REFUSALS. */
  status: number;
  reason?: GuardReason;
  message?: string;
  owner: Owner;
  /** Allowed as a child under this hold (not as the owner). */
  holdId?: string;
}

const or = (v: string, d = 'unknown'): string => (v === '' ? d : v);

/** The one refusal message: who holds the worktree, who asked, and what to do next. */
function refusal(o: Owner, reason: GuardReason, who: string): Verdict {
  const conv = o.conversation === '' ? '' : `, conversation ${o.conversation}`;
  const message = `od-worktree: refused: this worktree is owned by session ${or(o.owner)} (worker ${or(o.worker)}${conv}, runtime ${or(o.runtime)}, ownership ${or(o.ownership)}, epoch ${or(o.epoch)}); you are ${who}. Next: ask worker ${or(o.worker)} to hand the worktree off (od-worktree who shows the owner), or, as a person, step in with od-worktree override --reason '...'`;
  return { status: guardStatusOf(reason), reason, message, owner: o };
}

/** The SHA-256 the projection holds for a secret: of the secret and a newline, as the shell's here-document hashes it. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(`${secret}\n`).digest('hex');
}

/**
 * May the caller (its OVERDECK_* variables in ENV) mutate the worktree whose private git dir is
 * GD? In the order that names the most precise reason: a lost provisional claim, another session,
 * an older epoch, then the tenure proof.
 */
export function guardAt(gd: string, env: Env, realGit: string): Verdict {
  const session = env.OVERDECK_EXECUTION_SESSION_ID ?? '';
  const o = readOwner(gd, realGit, env);
  if (!o.any) return { status: 0, owner: o };
  if (o.state === PROJECTION_MISSING) {
    return {
      status: guardStatusOf('projection_missing'),
      reason: 'projection_missing',
      message: `od-worktree: refused: this worktree's projection (${path.join(gd, 'overdeck.config')}) is gone but its lock file names session ${or(o.owner)} (ownership ${or(o.ownership)}, epoch ${or(o.epoch)}); nobody moves its history until the projection is written again. Next: od-worktree reconcile --repair, or ask the owner's host agent; you are ${or(session, 'unidentified')}`,
      owner: o,
    };
  }
  if (o.state !== '' && FREE_STATES.includes(o.state as (typeof FREE_STATES)[number])) return { status: 0, owner: o };
  if (o.state !== '' && PROVISIONAL_CONFLICT_STATES.includes(o.state)) {
    return {
      status: guardStatusOf('provisional_conflict'),
      reason: 'provisional_conflict',
      message: `od-worktree: refused: the provisional claim of session ${or(o.owner)} (runtime ${or(o.runtime)}, ownership ${or(o.ownership)}) conflicts with the durable record of this worktree; run od-worktree reconcile --repair; you are ${or(session, 'unidentified')}`,
      owner: o,
    };
  }
  if (session !== '' && session !== o.owner) {
    const child = o.holds.some((h) => h.executionSessionId === session);
    if (!child) return refusal(o, 'not_owner', `session ${session}`);
    return guardChild(o, env, session);
  }
  const epoch = env.OVERDECK_EPOCH ?? '';
  if (epoch !== '' && epoch !== o.epoch) return refusal(o, 'stale_epoch', `session ${or(session, 'unidentified')} with stale epoch ${epoch}`);
  if (o.tenure === '') {
    // A projection with no tenure hash: the session id is the only proof there is, and an empty one proves nothing.
    if (session !== '') return { status: 0, owner: o };
    return refusal(o, 'unidentified', 'unidentified (OVERDECK_EXECUTION_SESSION_ID is not set)');
  }
  const secret = env.OVERDECK_TENURE_SECRET ?? '';
  if (secret === '') {
    if (session === '') return refusal(o, 'unidentified', 'unidentified (neither OVERDECK_EXECUTION_SESSION_ID nor OVERDECK_TENURE_SECRET is set)');
    return refusal(o, 'tenure_unproven', `session ${session} without this tenure's secret (OVERDECK_TENURE_SECRET is not set)`);
  }
  if (o.tenure.split(' ').includes(secretHash(secret))) return { status: 0, owner: o };
  return refusal(
    o,
    'tenure_unproven',
    `${session === '' ? '' : `session ${session} `}holding a tenure secret that is not this tenure's (OVERDECK_TENURE_SECRET)`,
  );
}

/**
 * A child session under a live hold the projection names (docs/ownership-record.md#child-holds):
 * it writes under the owner's epoch with its own tenure secret, whose hash is its hold's
 * (src/domain/tenure.ts standingOf); the owner's secret, another child's, or none is refused.
 */
function guardChild(o: Owner, env: Env, session: string): Verdict {
  const epoch = env.OVERDECK_EPOCH ?? '';
  if (epoch !== '' && epoch !== o.epoch) return refusal(o, 'stale_epoch', `child session ${session} with stale epoch ${epoch}`);
  const secret = env.OVERDECK_TENURE_SECRET ?? '';
  if (secret === '') return refusal(o, 'tenure_unproven', `child session ${session} without its hold's secret (OVERDECK_TENURE_SECRET is not set)`);
  const projected: ProjectedHolders = { owner: null, holds: o.holds };
  const standing = standingOf(projected, session, secretHash(secret));
  if (standing?.as === 'child') return { status: 0, owner: o, holdId: standing.holdId };
  return refusal(o, 'tenure_unproven', `child session ${session} holding a tenure secret that is not its hold's (OVERDECK_TENURE_SECRET)`);
}

/** A journal value: identifier characters only, else `!invalid` (never a TAB or a newline). */
export function jv(v: string): string {
  return /^[A-Za-z0-9._:@/+-]*$/.test(v) ? v : '!invalid';
}

/** The repository's common git dir for a private git dir (its commondir file), spelled one way. */
export function commonOf(gd: string): string {
  let line: string;
  try {
    line = readFileSync(path.join(gd, 'commondir'), 'utf8').split('\n')[0] ?? '';
  } catch {
    return gd;
  }
  if (line.startsWith('/')) return line;
  if (line === '../..') return path.dirname(path.dirname(gd));
  return line === '' ? gd : `${gd}/${line}`;
}

/**
 * A refusal by the gate, journalled in the judged worktree's journal: one line, one append
 * (concurrent appends do not interleave). Only the subcommand, never its arguments.
 */
export function journalRefusal(gd: string, v: Verdict, command: string, env: Env): void {
  const o = v.owner;
  const head = firstLine(path.join(gd, 'HEAD'));
  let old = head;
  if (head.startsWith('ref: ')) {
    const ref = head.slice(5);
    const common = commonOf(gd);
    old = '';
    if (existsSync(path.join(common, ref))) old = firstLine(path.join(common, ref));
    else {
      try {
        for (const l of readFileSync(path.join(common, 'packed-refs'), 'utf8').split('\n')) {
          const [sha, name] = l.split(' ');
          if (name === ref) {
            old = sha ?? '';
            break;
          }
        }
      } catch {
        // no packed refs
      }
    }
  }
  appendJournal(gd, [
    ['kind', 'wrapper_refused'],
    ...callerFields(env, o),
    ['code', v.reason ?? 'refused'],
    ['command', jv(command)],
    ['ref', jv(head.replace(/^ref: /, ''))],
    ['old', jv(old)],
  ]);
}

/** A journal line's caller and projection: who called (its environment) and whom the projection names. */
export function callerFields(env: Env, o: Owner): [string, string][] {
  return [
    ['session', jv(env.OVERDECK_EXECUTION_SESSION_ID ?? '')],
    ['env_epoch', jv(env.OVERDECK_EPOCH ?? '')],
    ['ownership', jv(o.ownership)],
    ['epoch', jv(o.epoch)],
    ['owner', jv(o.owner)],
    ['state', jv(o.state)],
  ];
}

/** One journal line (docs/git-projection.md#the-journal) in one append, so concurrent appends do not interleave. */
export function appendJournal(gd: string, fields: readonly (readonly [string, string])[]): void {
  try {
    appendFileSync(path.join(gd, 'overdeck.journal'), `od1\t${fields.map(([k, val]) => `${k}=${val}`).join('\t')}\n`);
  } catch {
    // a journal that cannot be written does not change the answer
  }
}
