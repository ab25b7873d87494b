import type { Draft } from './draft';
import { enc } from './draft';
import type { ApiOperation, JsonSchema } from './openapi';
import type { Rng } from '../../../chaos/rng';
import { mayCall, routeModel, type FuzzPrincipal, type PrincipalName, type Target, type World } from './world';

/**
 * Valid-ish requests built from the operation's schema: every property generated from its JSON
 * Schema, with the ones that name real things (worktree paths, sessions, epochs, commits, ids)
 * taken from the world so that a fair share of requests get past validation into the workflow.
 */

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export function randomOwnershipId(rng: Rng): string {
  let s = 'own_0';
  for (let i = 0; i < 25; i++) s += CROCKFORD[rng.between(0, 31)];
  return s;
}

function uuid(rng: Rng): string {
  const h = rng.hex(32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const NONE = Symbol('none');

interface Ctx {
  rng: Rng;
  w: World;
  d: Draft;
  principal: FuzzPrincipal;
  target: Target | null;
  wt: { path: string; branch: string; repoRoot: string };
}

function sha(ctx: Ctx): string {
  const { rng, w } = ctx;
  return rng.choose<() => string>([
    [3, () => w.fuzzRepo.head],
    [1, () => w.fuzzRepo.head.slice(0, rng.between(7, 39))],
    [2, () => rng.hex(40)],
  ])();
}

function text(ctx: Ctx, prefix: string): string | null {
  return ctx.rng.chance(0.15) ? null : `${prefix}-${ctx.rng.tag(4)}`;
}

function semantic(keys: string[], s: JsonSchema, ctx: Ctx): unknown {
  const { rng, w, target, d } = ctx;
  const name = keys[keys.length - 1]!;
  const parent = keys.length > 1 ? keys[keys.length - 2] : undefined;
  const cls = d.model.cls;
  switch (name) {
    case 'worktreePath':
      return ctx.wt.path;
    case 'repoRoot':
      return rng.chance(0.9) ? ctx.wt.repoRoot : rng.pick([ctx.wt.path, w.fuzzRepo.worktrees[0]!.path]);
    case 'repo':
      return w.fuzzRepo.repoRoot;
    case 'branch':
    case 'sourceBranch':
      return ctx.wt.branch;
    case 'from':
      return target?.branch ?? ctx.wt.branch;
    case 'to':
      return `fz/${rng.tag(5)}`;
    case 'landedBranch':
      return 'main';
    case 'sourceHead':
    case 'landedHead':
    case 'head':
    case 'landedCommit':
      return sha(ctx);
    case 'landedAt':
    case 'at':
    case 'claimedAt':
    case 'observedAt':
      return new Date(Date.now() - rng.between(0, 2000)).toISOString();
    case 'executionSessionId':
      if (parent === 'provisional') return rng.pick(w.sessions);
      if (cls === 'ownerOnly' && target && rng.chance(0.75)) return target.session;
      if (d.op.key.endsWith('/handoff/accept') && target?.successor && rng.chance(0.6)) return target.successor;
      return rng.pick(w.sessions);
    case 'toExecutionSessionId':
      return rng.pick(w.sessions);
    case 'parentExecutionSessionId':
      return rng.chance(0.5) ? null : rng.pick(w.sessions);
    case 'epoch':
      return target && rng.chance(0.75) ? target.epoch : rng.between(1, 4);
    case 'handoffId':
      return target?.handoffId && rng.chance(0.6) ? target.handoffId : `hnd_${rng.tag(10)}`;
    case 'ownershipId':
      return target?.id ?? anyLiveId(ctx);
    case 'localOwnershipId':
      return rng.chance(0.5) ? null : (target?.id ?? `prov_${rng.tag(12)}`);
    case 'hostId':
      return parent === 'process' ? `host-${rng.tag(4)}` : w.hostId;
    case 'bootId':
      return `boot-${rng.tag(4)}`;
    case 'pid':
      return rng.between(1, 99999);
    case 'startTime':
      return String(rng.between(1, 1e9));
    case 'toWorkerId':
      return rng.pick([w.principals.executor.workerId!, w.principals.otherExecutor.workerId!, w.seedWorkerId]);
    case 'runtime':
      return rng.pick(['codex-cli', 'claude-code', 'fz-runtime']);
    case 'lane':
      return text(ctx, 'lane');
    case 'planRef':
      return text(ctx, 'docs/plans/fz');
    case 'title':
      return text(ctx, 'title');
    case 'reason':
      return s.pattern ? rng.pick(['projection_stale', 'lock_missing', 'fz_reason']) : text(ctx, 'reason');
    case 'requestId':
      return rng.chance(0.3) ? null : `req-${rng.tag(6)}`;
    case 'idempotencyKey':
      return rng.chance(0.5) ? null : `idem-${rng.tag(6)}`;
    case 'leaseTtlMs':
      return rng.between(30_000, 3_600_000);
    case 'executor':
      return 'chrome-ext';
    case 'executorInstanceId':
      return `inst-${rng.between(1, 2)}`;
    case 'sessionGeneration':
      return `gen-${rng.between(1, 3)}`;
    case 'sequence':
      return ++w.sequence;
    case 'conversation': {
      if (parent !== undefined) return NONE;
      const id = uuid(rng);
      return {
        conversationId: id,
        conversationUrl: rng.chance(0.8) ? `https://chatgpt.com/c/${id}` : `https://chatgpt.com/c/${uuid(rng)}`,
        ...(rng.chance(0.5) ? { title: text(ctx, 'chat') } : {}),
        observedAt: new Date().toISOString(),
      };
    }
    case 'localSeq':
    case 'durableSeq':
      return rng.chance(0.3) ? null : rng.between(0, 12);
    case 'provisional':
      return rng.chance(0.8)
        ? null
        : { executionSessionId: rng.pick(w.sessions), runtime: 'codex-cli', idempotencyKey: null, claimedAt: new Date().toISOString() };
    default:
      return NONE;
  }
}

function anyLiveId(ctx: Ctx): string {
  const ids = [...ctx.w.live.keys()];
  return ids.length > 0 && ctx.rng.chance(0.85) ? ctx.rng.pick(ids) : randomOwnershipId(ctx.rng);
}

/** A value for a schema, generically (the semantic table first). */
export function gen(s: JsonSchema, keys: string[], ctx: Ctx, optionalP = 0.35): unknown {
  const sem = keys.length > 0 ? semantic(keys, s, ctx) : NONE;
  if (sem !== NONE) return sem;
  const { rng } = ctx;
  if (s.nullable && rng.chance(0.1)) return null;
  if (s.enum && s.enum.length > 0) return rng.pick(s.enum);
  switch (s.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const req = new Set(s.required ?? []);
      for (const [k, v] of Object.entries(s.properties ?? {})) {
        if (req.has(k) || rng.chance(optionalP)) out[k] = gen(v, [...keys, k], ctx, optionalP);
      }
      return out;
    }
    case 'array': {
      const n = rng.between(Math.max(1, s.minItems ?? 1), Math.min(3, s.maxItems ?? 3));
      return Array.from({ length: n }, () => gen(s.items ?? {}, [...keys, '0'], ctx, optionalP));
    }
    case 'integer':
    case 'number': {
      const lo = s.minimum ?? 0;
      const hi = Math.min(s.maximum ?? lo + 100, lo + 100);
      return rng.between(Math.max(lo, 1), Math.max(hi, 1));
    }
    case 'boolean':
      return rng.chance(0.5);
    case 'string':
    default:
      return genString(s, ctx);
  }
}

function genString(s: JsonSchema, ctx: Ctx): string {
  const { rng } = ctx;
  if (s.format === 'date-time') return new Date().toISOString();
  const p = s.pattern ?? '';
  if (p.includes('own_')) return anyLiveId(ctx);
  if (p.includes('0-9a-f') || p.includes('0-9a-fA-F')) return sha(ctx);
  if (p.startsWith('^[a-z][a-z0-9_]')) return `fz_${rng.tag(5)}`;
  const v = `fz-${rng.tag(6)}`;
  return s.maxLength !== undefined ? v.slice(0, s.maxLength) : v;
}

/** Chooses who calls: mostly someone the policy lets call, sometimes anyone. */
function choosePrincipal(ctx: { rng: Rng; w: World }, d: Draft, target: Target | null): FuzzPrincipal {
  const { rng, w } = ctx;
  const all = Object.values(w.principals);
  const allowed = all.filter((p) => mayCall(p.kind, d.model.op));
  const cls = d.model.cls;
  let name: PrincipalName;
  if (cls === 'ownerOnly' && target && rng.chance(0.7)) name = rng.chance(0.8) ? target.ownerPrincipal : 'admin';
  else if (cls === 'conversation')
    name = rng.choose<PrincipalName>([
      [6, 'otherExecutor'],
      [2, 'executor'],
      [1, 'admin'],
      [1, 'reader'],
    ]);
  else if (cls === 'landingWrite' || cls === 'landings')
    name = rng.choose<PrincipalName>([
      [7, 'landing'],
      [2, 'admin'],
      [1, 'executor'],
    ]);
  else name = rng.chance(0.85) && allowed.length > 0 ? rng.pick(allowed).name : rng.pick(all).name;
  return w.principals[name];
}

export interface BuildOptions {
  /** aim at a seeded ownership (the caller then makes the request refused by construction) */
  seeded: boolean;
}

export function build(i: number, op: ApiOperation, w: World, rng: Rng, opts: BuildOptions): Draft {
  const model = routeModel(op.key);
  const d: Draft = {
    i,
    op,
    model,
    method: op.method,
    pathParams: {},
    pathOverride: null,
    query: [],
    body: undefined,
    hasBody: op.body !== null,
    bodyRaw: null,
    contentType: op.body !== null ? 'application/json' : null,
    auth: null,
    headers: [],
    hostile: [],
    tags: [],
    principal: 'none',
    seeded: null,
    mustRefuse: false,
    unknownHost: false,
    target: null,
  };

  // Whom it is about.
  let target: Target | null = null;
  if (opts.seeded) {
    target = rng.pick(w.seeded);
    d.seeded = target;
  } else if (['ownerOnly', 'newOwner', 'landingWrite', 'readById'].includes(model.cls)) {
    const live = [...w.live.values()];
    target = live.length > 0 && rng.chance(0.85) ? rng.pick(live) : null;
  }
  d.target = target;

  const principal = choosePrincipal({ rng, w }, d, target);
  d.principal = principal.name;
  if (op.secured) d.auth = `Bearer ${principal.token}`;

  const wts = w.fuzzRepo.worktrees;
  const pickWt = () => {
    const x = rng.chance(0.1) ? { path: w.fuzzRepo.repoRoot, branch: 'main' } : rng.pick(wts);
    return { ...x, repoRoot: w.fuzzRepo.repoRoot };
  };
  const wt = target ? { path: target.worktreePath, branch: target.branch, repoRoot: target.repoRoot } : pickWt();
  const ctx: Ctx = { rng, w, d, principal, target, wt };

  for (const p of op.pathParams) {
    if (p.name === 'id') d.pathParams.id = enc(target?.id ?? randomOwnershipId(rng));
    else if (p.name === 'sha') d.pathParams.sha = sha(ctx);
    else d.pathParams[p.name] = enc(String(gen(p.schema, [p.name], ctx)));
  }

  buildQuery(d, ctx);

  if (op.body) {
    const body = gen(op.body, [], ctx) as Record<string, unknown>;
    fixBody(body, ctx);
    d.body = body;
  }
  return d;
}

/** Exactly-one-selector lookups get one selector; the rest of the query comes from the schema. */
function buildQuery(d: Draft, ctx: Ctx): void {
  const { rng, w, target } = ctx;
  const put = (k: string, v: string) => d.query.push([k, enc(v)]);
  const key = d.op.key;
  if (key === 'GET /v1/ownership' || key === 'GET /v1/ownership/live' || key === 'GET /v1/history') {
    const sel = rng.pick(key === 'GET /v1/history' ? ['ownershipId', 'worktreePath', 'branch', 'landedCommit'] : ['ownershipId', 'worktreePath', 'branch']);
    if (sel === 'ownershipId') put('ownershipId', target?.id ?? anyLiveId(ctx));
    if (sel === 'worktreePath') put('worktreePath', ctx.wt.path);
    if (sel === 'branch') {
      put('branch', ctx.wt.branch);
      if (rng.chance(0.5)) put('repoRoot', ctx.wt.repoRoot);
    }
    if (sel === 'landedCommit') put('landedCommit', sha(ctx));
    return;
  }
  if (key === 'GET /v1/ownerships') {
    if (rng.chance(0.4)) put('repoRoot', ctx.wt.repoRoot);
    if (rng.chance(0.4)) {
      const states = ['active', 'handoff_pending', 'stale', 'released', 'submitted', 'landed', 'closed'];
      const n = rng.between(1, 3);
      const chosen = Array.from({ length: n }, () => rng.pick(states));
      if (rng.chance(0.5)) put('state', chosen.join(','));
      else for (const s of chosen) put('state', s);
    }
    if (rng.chance(0.4)) put('limit', String(rng.between(1, 500)));
    if (rng.chance(0.1)) put('cursor', rng.pick([`${rng.tag(20)}`, Buffer.from(JSON.stringify({ at: 'x', id: 1 })).toString('base64url'), 'eyJ9']));
    if (rng.chance(0.2)) put('liveness', rng.pick(['true', 'false', '1', '0']));
    return;
  }
  for (const p of d.op.query) {
    if (p.required || rng.chance(0.3)) put(p.name, String(gen(p.schema, [p.name], ctx)));
  }
  void w;
}

/** Route rules the schema cannot say: who names a worker, force only with a reason, one landing selector. */
function fixBody(body: Record<string, unknown>, ctx: Ctx): void {
  const { rng, w, principal, d } = ctx;
  if ('executionSessionId' in (d.op.body?.properties ?? {}) && 'worker' in (d.op.body?.properties ?? {})) {
    delete body.worker;
    delete body.workerId;
    delete body.runId;
    if (principal.kind === 'admin') {
      const workerId = rng.pick([w.seedWorkerId, w.principals.executor.workerId!, w.principals.otherExecutor.workerId!]);
      if (rng.chance(0.6)) body.worker = { workerId, ...(rng.chance(0.3) ? { runId: `run-${rng.between(1, 3)}` } : {}) };
      else if (rng.chance(0.9)) body.workerId = workerId;
    } else if (principal.workerId && rng.chance(0.15)) {
      body.workerId = principal.workerId;
    }
  }
  if (d.op.key === 'POST /v1/bind') {
    // A host nobody serves makes the bind wait for it (503): twice a run, early, so the waits overlap the rest.
    if (!d.seeded && w.unknownHostBudget > 0 && rng.chance(0.25)) {
      w.unknownHostBudget--;
      body.hostId = `nohost-${rng.tag(4)}`;
      d.unknownHost = true;
    } else if (rng.chance(0.6)) delete body.hostId;
    else body.hostId = w.hostId;
  }
  if (d.op.key.endsWith('/reclaim')) {
    delete body.force;
    delete body.reason;
    if (principal.kind === 'admin' && rng.chance(0.6)) {
      body.force = true;
      body.reason = `fz reclaim ${rng.tag(4)}`;
    } else if (rng.chance(0.2)) body.force = false;
  }
  if (d.op.key === 'POST /v1/landings') {
    delete body.ownershipId;
    delete body.repoRoot;
    delete body.sourceBranch;
    if (d.seeded) {
      if (rng.chance(0.5)) body.ownershipId = d.seeded.id;
      else Object.assign(body, { repoRoot: d.seeded.repoRoot, sourceBranch: d.seeded.branch });
    } else if (rng.chance(0.5)) body.ownershipId = anyLiveId(ctx);
    else Object.assign(body, { repoRoot: w.fuzzRepo.repoRoot, sourceBranch: rng.pick(w.fuzzRepo.worktrees).branch });
  }
  // The fuzz's worktrees are its world: removal is asked as a dry run, answered by the rule, nothing taken away.
  if (d.op.key === 'POST /v1/worktrees/remove') body.dryRun = true;
  if (d.op.key === 'POST /v1/reconciliations') {
    if (body.ownershipId === undefined) body.ownershipId = null;
  }
}
