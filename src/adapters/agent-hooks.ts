import { spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import type { BindBody, HandoffBody, HeartbeatBody, ListQuery, ListResponse, OwnershipItem, ReleaseBody, TenureBody, TenureOut } from '../contract/http';
import type { RemovalResult, RemoveWorktreeBody, RemoveWorktreeResponse } from '../contract/removal';
import { IdString } from '../domain/identity';
import { isFreeState } from '../domain/states';
import { git } from '../git/exec';
import { readProjection, type LocalProjection } from '../git/projection';
import { identifyWorktree } from '../git/repo';
import type { ZodType } from 'zod';
import { EVENTS, type Tool } from './hook-payloads';

/**
 * What `od-worktree hook <tool> <event>` does with the JSON the tool sends (docs/integrating.md#agent-tools):
 *
 * - SessionStart: a session that starts in a linked worktree nobody holds binds it; one another
 *   session holds is said (the tool shows the hook's stdout to its model). Claude Code also gets
 *   its session env file written: the session id, the git gate first on PATH, and a line that asks
 *   for the current tenure's secret before each shell command (`hook claude-code env`), so the
 *   secret is never written to a file.
 * - WorktreeCreate (Claude Code): the worktree is made and bound to the session, or refused
 *   (non-zero exit: the tool fails the creation) when another session holds that path or the bind
 *   is refused; a worktree it made for a refused bind is taken back.
 * - PreToolUse: the heartbeat of the session's ownership, then the gate's own PreToolUse check
 *   (hooks/pretooluse-git-gate.sh) run with the session's identity and tenure, its exit passed on.
 * - WorktreeRemove (Claude Code): the lossless removal through the service (POST /v1/worktrees/remove;
 *   the owner's is released first); a refusal keeps the worktree and says why.
 * - SessionEnd (Claude Code): every worktree of the repository the session holds is released, or
 *   handed off to OD_HANDOFF_TO when set. Codex has no session end: its Stop (each turn) beats.
 *
 * The session is OVERDECK_EXECUTION_SESSION_ID when the tool was started under `od-worktree exec`,
 * else `<tool>-<the tool's session id>`.
 */

/**
 * What the hooks ask of the service: the HTTP API's client (src/api/client.ts ApiClient) has this
 * shape. A port, not an import: src/api composes src/adapters (the worktree resolver), so
 * importing it back would close a folder cycle.
 */
export interface OwnershipService {
  bind(b: BindBody): Promise<{ ownershipId: string; epoch: number }>;
  tenure(id: string, b: TenureBody): Promise<TenureOut>;
  heartbeat(id: string, b: HeartbeatBody): Promise<unknown>;
  release(id: string, b: ReleaseBody): Promise<unknown>;
  handoff(id: string, b: HandoffBody): Promise<unknown>;
  removeWorktree(b: RemoveWorktreeBody): Promise<RemoveWorktreeResponse>;
  list(q: ListQuery): Promise<ListResponse>;
}

export interface HookContext {
  env: NodeJS.ProcessEnv;
  /** the service's client, made when first needed (OD_API_URL, OD_TOKEN) */
  api: () => OwnershipService;
  /** a refusal or absence of the service as `code: message`; null for anything else (a bug: thrown on) */
  serviceError: (err: unknown) => { code: string; message: string } | null;
  /** the gate's PreToolUse entry (hooks/pretooluse-git-gate.sh) */
  gateHook: string;
  /** the directory of the gate's `git` (bin/git-gate) */
  gateDir: string;
  /** how the env file runs this CLI again (`'node' 'bin/od-worktree.js'`) */
  cli: string;
}

export interface HookAnswer {
  exit: number;
  stdout: string;
  stderr: string;
}

const ok = (stdout = '', stderr = ''): HookAnswer => ({ exit: 0, stdout, stderr });
const line = (s: string) => `od-worktree: ${s}\n`;

/** A refusal the tool shows: `<code>: <message>`, the code one of docs/reason-codes.md's. */
const refused = (exit: number, code: string, message: string): HookAnswer => ({ exit, stdout: '', stderr: line(`refused: ${code}: ${message}`) });

export function sessionOf(tool: Tool, toolSession: string, env: NodeJS.ProcessEnv): string {
  const given = env.OVERDECK_EXECUTION_SESSION_ID;
  if (given && IdString.safeParse(given).success) return given;
  return `${tool}-${toolSession}`.replace(/[^A-Za-z0-9._:@/+-]/g, '-').slice(0, 200);
}

interface Here {
  worktreePath: string;
  repoRoot: string;
  isMain: boolean;
  projection: LocalProjection | null;
}

async function here(dir: string): Promise<Here | null> {
  try {
    const id = await identifyWorktree(dir);
    return { worktreePath: id.worktreePath, repoRoot: id.repoRoot, isMain: id.isMain, projection: await readProjection(id.worktreePath) };
  } catch {
    return null;
  }
}

const holds = (p: LocalProjection | null): p is LocalProjection => p !== null && !isFreeState(p.state);

/** The identity the gate and the hooks judge: the session, and its epoch and secret where it holds the worktree. */
async function identityFor(session: string, h: Here | null, ctx: HookContext): Promise<Record<string, string>> {
  const env: Record<string, string> = { OVERDECK_EXECUTION_SESSION_ID: session };
  if (h === null || !holds(h.projection) || h.projection.executionSessionId !== session) return env;
  const tenure = await ctx
    .api()
    .tenure(h.projection.ownershipId, { executionSessionId: session })
    .catch(() => null);
  if (tenure !== null) Object.assign(env, tenure.env);
  return env;
}

async function bindHere(tool: Tool, session: string, worktreePath: string, ctx: HookContext): Promise<{ ownershipId: string; epoch: number }> {
  const answer = await ctx.api().bind({ worktreePath, executionSessionId: session, runtime: tool });
  return { ownershipId: answer.ownershipId, epoch: answer.epoch };
}

const ENV_BEGIN = '# od-worktree: begin (od-worktree integrate)';
const ENV_END = '# od-worktree: end';
const shQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Claude Code sources this file before each shell command of the session. It holds no secret:
 * the tenure's is asked for at each command, for the worktree the command starts in.
 */
export function envFileBlock(session: string, ctx: Pick<HookContext, 'gateDir' | 'cli'>): string {
  return [
    ENV_BEGIN,
    `export OVERDECK_EXECUTION_SESSION_ID=${shQuote(session)}`,
    `case ":$PATH:" in *:${shQuote(ctx.gateDir)}:*) ;; *) export PATH=${shQuote(ctx.gateDir)}:"$PATH" ;; esac`,
    `eval "$(${ctx.cli} hook claude-code env 2>/dev/null)"`,
    ENV_END,
    '',
  ].join('\n');
}

async function writeEnvFile(file: string, block: string): Promise<void> {
  const before = await fs.readFile(file, 'utf8').catch(() => '');
  const start = before.indexOf(ENV_BEGIN);
  const end = before.indexOf(ENV_END);
  const rest = start >= 0 && end > start ? before.slice(0, start) + before.slice(end + ENV_END.length + 1) : before;
  await fs.writeFile(file, rest + block, { mode: 0o600 });
}

async function sessionStart(tool: Tool, session: string, cwd: string, ctx: HookContext): Promise<HookAnswer> {
  const notes: string[] = [];
  if (tool === 'claude-code' && ctx.env.CLAUDE_ENV_FILE) await writeEnvFile(ctx.env.CLAUDE_ENV_FILE, envFileBlock(session, ctx));
  const h = await here(cwd);
  if (h !== null && !h.isMain) {
    if (holds(h.projection) && h.projection.executionSessionId !== session) {
      notes.push(
        `this worktree is owned by session ${h.projection.executionSessionId} (ownership ${h.projection.ownershipId}, epoch ${h.projection.epoch}); this session's git here is refused. Work in a worktree of your own.`,
      );
    } else if (!holds(h.projection)) {
      try {
        const b = await bindHere(tool, session, h.worktreePath, ctx);
        notes.push(`this session (${session}) owns ${h.worktreePath} (ownership ${b.ownershipId}, epoch ${b.epoch}).`);
      } catch (err) {
        const e = ctx.serviceError(err);
        if (e === null) throw err;
        notes.push(`${h.worktreePath} was not bound to this session: ${e.code}: ${e.message}`);
      }
    }
  }
  return ok(notes.map(line).join(''));
}

/** A name Claude Code proposes, as a directory and branch name: identifier characters only. */
export function worktreeSlug(name: string): string | null {
  // What git takes as a branch name too: no `..`, no leading `.` or `-`, no trailing `.` or `.lock`.
  const s = name
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/^[.-]+/, '')
    .slice(0, 100)
    .replace(/(\.lock)+$|\.+$/, '');
  return s === '' ? null : s;
}

async function worktreeCreate(tool: Tool, session: string, cwd: string, name: string, ctx: HookContext): Promise<HookAnswer> {
  const slug = worktreeSlug(name);
  if (slug === null) return refused(1, 'invalid_input', `no usable worktree name in ${JSON.stringify(name)}`);
  const repo = await here(cwd);
  if (repo === null) return refused(1, 'not_a_worktree', `${cwd} is not inside a git repository`);
  // Where Claude Code itself puts them, so its own cleanup and .gitignore advice still apply.
  const target = path.join(repo.repoRoot, '.claude', 'worktrees', slug);
  const branch = `worktree-${slug}`;
  let created = false;
  if (existsSync(target)) {
    const h = await here(target);
    if (h === null || h.worktreePath !== (await fs.realpath(target))) return refused(1, 'not_a_worktree', `${target} exists and is not a worktree`);
    if (holds(h.projection)) {
      if (h.projection.executionSessionId === session) return ok(`${h.worktreePath}\n`);
      return refused(
        1,
        'worktree_owned',
        `${h.worktreePath} is owned by session ${h.projection.executionSessionId} (ownership ${h.projection.ownershipId}, epoch ${h.projection.epoch})`,
      );
    }
  } else {
    const hasBranch = (await git(['rev-parse', '-q', '--verify', `refs/heads/${branch}`], { cwd: repo.repoRoot, okCodes: [1] })).code === 0;
    const args = hasBranch ? ['worktree', 'add', target, branch] : ['worktree', 'add', '-b', branch, target, 'HEAD'];
    // The user's git, as the tool would have run it in the hook's place (its checkout runs the repository's filters and hooks, which the service's git never does).
    const r = await userGit(args, repo.repoRoot, ctx.env);
    if (r.code !== 0) return refused(1, 'git_failed', `git worktree add failed: ${r.stderr.trim().split('\n').at(-1) ?? ''}`);
    created = true;
  }
  const worktreePath = await fs.realpath(target);
  try {
    await bindHere(tool, session, worktreePath, ctx);
  } catch (err) {
    const e = ctx.serviceError(err);
    if (e === null) throw err;
    // Nothing is in a worktree made a moment ago: taking it back loses nothing, and the tool is told the creation failed.
    if (created) await git(['worktree', 'remove', '--force', worktreePath], { cwd: repo.repoRoot, okCodes: [128] });
    return refused(1, e.code, `${worktreePath} was not bound to this session: ${e.message}`);
  }
  return ok(`${worktreePath}\n`);
}

function removalSummary(r: RemovalResult): string {
  if (r.status === 'removed' || r.status === 'would_remove') {
    const kept = (r.receipt?.preserved ?? []).map((p) => `${p.files} files kept in ${p.ref} ${p.sha.slice(0, 12)}`);
    return `removed ${r.worktree}${kept.length > 0 ? ` (${kept.join('; ')})` : ''}`;
  }
  if (r.status === 'failed') return `removal of ${r.worktree} failed: ${r.error ?? ''}; nothing was removed`;
  return `kept ${r.worktree}: ${r.refusals.map((x) => `${x.code}: ${x.message}`).join('; ')}`;
}

async function worktreeRemove(session: string, worktreePath: string, ctx: HookContext): Promise<HookAnswer> {
  const h = await here(worktreePath);
  if (h === null) return ok('', line(`${worktreePath} is no worktree any more: nothing to remove`));
  const mine = holds(h.projection) && h.projection.executionSessionId === session;
  const body = { worktreePath: h.worktreePath, ...(mine && h.projection ? { executionSessionId: session, epoch: h.projection.epoch } : {}) };
  try {
    // The owner's removal releases first: asked as a dry run before, so a removal the rule refuses leaves the session its worktree.
    if (mine) {
      const trial = (await ctx.api().removeWorktree({ ...body, dryRun: true })).result;
      if (trial.status !== 'would_remove') return { exit: 1, stdout: '', stderr: line(removalSummary(trial)) };
    }
    const r = (await ctx.api().removeWorktree(body)).result;
    return { exit: r.status === 'removed' ? 0 : 1, stdout: '', stderr: line(removalSummary(r)) };
  } catch (err) {
    const e = ctx.serviceError(err);
    if (e === null) throw err;
    return refused(1, e.code, `${h.worktreePath} was kept: ${e.message}`);
  }
}

/** The ownerships of the repository the session holds now, as the service has them. */
async function heldBy(session: string, repoRoot: string, ctx: HookContext): Promise<OwnershipItem[]> {
  const out: OwnershipItem[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const res = await ctx.api().list({ repoRoot, limit: 500, ...(cursor ? { cursor } : {}) });
    out.push(...res.items.filter((i) => i.owner?.executionSessionId === session && !isFreeState(i.state)));
    if (!res.nextCursor) break;
    cursor = res.nextCursor;
  }
  return out;
}

async function sessionEnd(tool: Tool, session: string, cwd: string, why: string, ctx: HookContext): Promise<HookAnswer> {
  const h = await here(cwd);
  if (h === null) return ok();
  const to = ctx.env.OD_HANDOFF_TO;
  const lines: string[] = [];
  let failed = false;
  for (const item of await heldBy(session, h.repoRoot, ctx)) {
    const fence = { executionSessionId: session, epoch: item.epoch };
    try {
      if (to) {
        await ctx.api().handoff(item.ownershipId, { ...fence, toExecutionSessionId: to, reason: `${tool} session ended (${why})` });
        lines.push(`handed ${item.worktreePath} off to ${to} (ownership ${item.ownershipId})`);
      } else {
        await ctx.api().release(item.ownershipId, { ...fence, reason: `${tool} session ended (${why})` });
        lines.push(`released ${item.worktreePath} (ownership ${item.ownershipId})`);
      }
    } catch (err) {
      const e = ctx.serviceError(err);
      if (e === null) throw err;
      failed = true;
      lines.push(`${item.worktreePath} is still held (ownership ${item.ownershipId}): ${e.code}: ${e.message}`);
    }
  }
  return { exit: failed ? 1 : 0, stdout: '', stderr: lines.map(line).join('') };
}

/** Beats for the session's ownership of the worktree it works in (a missed beat is the lease's to judge, never a failure of the call). */
async function beat(session: string, h: Here | null, ctx: HookContext): Promise<void> {
  if (h === null || !holds(h.projection) || h.projection.executionSessionId !== session) return;
  await ctx
    .api()
    .heartbeat(h.projection.ownershipId, { executionSessionId: session, epoch: h.projection.epoch })
    .catch(() => undefined);
}

function userGit(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (x: string) => (stderr += x));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, stderr }));
  });
}

function runGate(ctx: HookContext, input: string, identity: Record<string, string>, cwd: string): Promise<HookAnswer> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...ctx.env, ...identity };
    if (!identity.OVERDECK_TENURE_SECRET) {
      delete env.OVERDECK_TENURE_SECRET;
      delete env.OVERDECK_EPOCH;
    }
    const child = spawn('sh', [ctx.gateHook], { cwd: existsSync(cwd) ? cwd : '/', env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.once('error', reject);
    child.once('close', (code) => resolve({ exit: code ?? 1, stdout, stderr }));
    // The gate may answer before reading the whole payload; its answer is its exit status, and an EPIPE here must not crash the hook.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/** `hook claude-code env`: the exports for the worktree the shell is in, evaluated by the session env file. */
export async function envExports(cwd: string, ctx: HookContext): Promise<string> {
  const session = ctx.env.OVERDECK_EXECUTION_SESSION_ID;
  const clear = 'unset OVERDECK_EPOCH OVERDECK_TENURE_SECRET\n';
  if (!session) return clear;
  const identity = await identityFor(session, await here(cwd), ctx);
  if (!identity.OVERDECK_TENURE_SECRET) return clear;
  return `${Object.entries(identity)
    .map(([k, v]) => `export ${k}=${shQuote(v)}`)
    .join('\n')}\n`;
}

/** One hook call: the payload checked against the event's documented shape, then handled. */
export async function runHook(tool: Tool, event: string, input: string, ctx: HookContext): Promise<HookAnswer> {
  const spec = (EVENTS[tool] as Record<string, { hookEvent: string; schema: ZodType } | undefined>)[event];
  // Never exit 2 for our own failures: for PreToolUse that would block the tool call, and only the gate may refuse one.
  if (spec === undefined) return refused(1, 'usage', `${tool} has no hook event ${event} (${Object.keys(EVENTS[tool]).join(', ')})`);
  let json: unknown;
  try {
    json = JSON.parse(input);
  } catch {
    return refused(1, 'invalid_input', `the ${spec.hookEvent} payload on stdin is not JSON`);
  }
  const parsed = spec.schema.safeParse(json);
  if (!parsed.success)
    return refused(1, 'invalid_input', `the ${spec.hookEvent} payload is not the documented shape: ${parsed.error.issues[0]?.message ?? ''}`);
  const p = parsed.data as { session_id: string; cwd: string } & Record<string, unknown>;
  const session = sessionOf(tool, p.session_id, ctx.env);
  switch (event) {
    case 'session-start':
      return sessionStart(tool, session, p.cwd, ctx);
    case 'worktree-create':
      return worktreeCreate(tool, session, p.cwd, String(p.name ?? p.worktree_name), ctx);
    case 'worktree-remove':
      return worktreeRemove(session, String(p.worktree_path), ctx);
    case 'session-end':
      return sessionEnd(tool, session, p.cwd, String(p.reason ?? 'other'), ctx);
    case 'stop':
      await beat(session, await here(p.cwd), ctx);
      return ok();
    case 'pre-tool-use': {
      const h = await here(p.cwd);
      const [identity] = await Promise.all([identityFor(session, h, ctx), beat(session, h, ctx)]);
      return runGate(ctx, input, identity, p.cwd);
    }
    default:
      return refused(1, 'usage', `no handler for ${event}`);
  }
}
