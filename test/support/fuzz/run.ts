import { describe, render, type Draft } from './draft';
import { build } from './gen';
import { send } from './http';
import { DOMAIN_INGREDIENTS, MUTATIONS, type Ingredient, type Mutation } from './mutate';
import type { ApiOperation } from './openapi';
import { problemsOf } from './oracle';
import { Rng } from '../../../chaos/rng';
import { learn, routeModel, type World } from './world';

/**
 * The fuzz loop: request i is generated from (seed, i) and what the world learned so far, sent
 * with bounded concurrency, and judged by the oracle. A share of the requests aims at the seeded
 * ownerships, each made refused by construction (one ingredient that alone refuses it, applied
 * last, on top of any extra mutations that cannot make it acceptable).
 */

export interface FuzzOptions {
  seed: number;
  requests: number;
  concurrency: number;
  timeoutMs: number;
  /** share of requests aimed at the seeded ownerships */
  seededShare: number;
}

export interface Violation {
  request: string;
  status: number | null;
  problems: string[];
  response: string;
}

export interface FuzzResult {
  requests: number;
  wallMs: number;
  byStatus: Record<string, number>;
  byCode: Record<string, number>;
  byRoute: Record<string, number>;
  byMutation: Record<string, number>;
  seededRequests: number;
  unknownHostRequests: number;
  violations: Violation[];
  summary: string;
}

const SEEDED_CLASSES = new Set(['ownerOnly', 'newOwner', 'landingWrite', 'readById', 'bind', 'landings']);

export async function runFuzz(w: World, ops: ApiOperation[], secrets: readonly string[], o: FuzzOptions): Promise<FuzzResult> {
  const byStatus: Record<string, number> = {};
  const byCode: Record<string, number> = {};
  const byRoute: Record<string, number> = {};
  const byMutation: Record<string, number> = {};
  // Where the wall time goes: the slowest routes by total time, so a slow run names its cause.
  const routeMs: Record<string, { total: number; max: number }> = {};
  const violations: Violation[] = [];
  let seededRequests = 0;
  let unknownHostRequests = 0;
  const unknownHostStatus: Record<string, number> = {};
  let next = 0;
  const bump = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);

  const started = Date.now();
  const loop = async () => {
    for (;;) {
      const i = next++;
      if (i >= o.requests) return;
      const d = generate(i, w, ops, o);
      bump(byRoute, d.op.key);
      for (const t of d.tags) bump(byMutation, t);
      if (d.seeded) seededRequests++;
      if (d.unknownHost) unknownHostRequests++;
      let res;
      const sentAt = Date.now();
      try {
        res = await send(w.host, w.port, render(d), o.timeoutMs);
      } catch (err) {
        bump(byStatus, 'no-answer');
        violations.push({ request: describe(d), status: null, problems: [`no answer: ${(err as Error).message}`], response: '' });
        continue;
      }
      const took = Date.now() - sentAt;
      const rt = (routeMs[d.op.key] ??= { total: 0, max: 0 });
      rt.total += took;
      rt.max = Math.max(rt.max, took);
      bump(byStatus, String(res.status));
      if (d.unknownHost) bump(unknownHostStatus, String(res.status));
      const code = (res.json as { code?: unknown } | undefined)?.code;
      bump(byCode, res.status < 400 ? 'ok' : typeof code === 'string' ? code : `(${res.status} no code)`);
      const problems = problemsOf(d, res, secrets);
      if (problems.length > 0) violations.push({ request: describe(d), status: res.status, problems, response: res.text.slice(0, 400) });
      if (res.status < 300 && d.seeded === null) learn(w, res.json);
    }
  };
  // A bug of the fuzz itself stops every loop, and is thrown once none is in flight.
  const settled = await Promise.allSettled(
    Array.from({ length: o.concurrency }, () =>
      loop().catch((err: unknown) => {
        next = o.requests;
        throw err;
      }),
    ),
  );
  for (const r of settled) if (r.status === 'rejected') throw r.reason;
  const wallMs = Date.now() - started;

  const fmt = (m: Record<string, number>) =>
    Object.entries(m)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}:${v}`)
      .join(' ');
  const summary =
    `[fuzz] requests=${o.requests} seed=${o.seed} wall=${(wallMs / 1000).toFixed(1)}s concurrency=${o.concurrency} ` +
    `routes=${Object.keys(byRoute).length}/${ops.length} seeded=${seededRequests} unknownHost=${unknownHostRequests}{${fmt(unknownHostStatus)}} violations=${violations.length} ` +
    `status={${fmt(byStatus)}} codes={${fmt(byCode)}} slowest={${slowest(routeMs, byRoute)}}`;
  return { requests: o.requests, wallMs, byStatus, byCode, byRoute, byMutation, seededRequests, unknownHostRequests, violations, summary };
}

function slowest(routeMs: Record<string, { total: number; max: number }>, byRoute: Record<string, number>): string {
  return Object.entries(routeMs)
    .sort((a, b) => b[1].total - a[1].total)
    .slice(0, 6)
    .map(([k, v]) => `${k}:total=${(v.total / 1000).toFixed(1)}s,mean=${Math.round(v.total / (byRoute[k] ?? 1))}ms,max=${v.max}ms`)
    .join(' ');
}

/** Request i: the route, whether it aims at a seeded ownership, the draft, its mutations. */
export function generate(i: number, w: World, ops: ApiOperation[], o: FuzzOptions): Draft {
  const rng = Rng.forRequest(o.seed, i);
  const op = ops[i % ops.length]!;
  const seeded = op.secured && rng.chance(o.seededShare) && isSeedable(op);
  const d = build(i, op, w, rng, { seeded });

  // W1's ownerships are seeded: a conversation it reports would annotate them, so its reports are
  // refused too, whoever the draft was built for (a mutation may have swapped its token in).
  const conversation = d.model.cls === 'conversation';
  const guarded = d.seeded !== null ? d.model.cls !== 'readById' && d.model.cls !== 'lookup' : conversation && d.principal === 'executor';
  // The few binds naming a host nobody serves go unmutated, so that they reach the wait for that host.
  const n = d.unknownHost
    ? 0
    : rng.choose<number>([
        [2, 0],
        [4.5, 1],
        [2.5, 2],
        [1, 3],
      ]);
  const pool = MUTATIONS.filter((m) => (!guarded || m.safeExtra) && m.applies(d, w));
  for (let k = 0; k < n && pool.length > 0; k++) {
    const m = rng.choose<Mutation>(pool.map((x) => [x.weight, x] as const));
    if (!m.applies(d, w)) continue;
    m.apply(d, rng, w);
    d.tags.push(m.name);
  }
  // A bind naming a host nobody serves (made up, or a hostile string that is a valid id) waits for that host.
  const body = d.body as { hostId?: unknown } | null | undefined;
  if (d.model.cls === 'bind' && d.bodyRaw === null && body && typeof body === 'object' && typeof body.hostId === 'string' && body.hostId !== w.hostId)
    d.unknownHost = true;
  if (guarded || (conversation && d.auth?.includes(w.principals.executor.token))) {
    d.mustRefuse = true;
    // An extra may already refuse it; an ingredient is still added, last, so the refusal never rests on luck.
    const domain = DOMAIN_INGREDIENTS.filter((x) => x.applies(d, w));
    const generic = MUTATIONS.filter(
      (m) =>
        m.applies(d, w) &&
        m.refuses(d, w) &&
        [
          'no-auth',
          'bad-token',
          'wrong-kind',
          'unknown-field',
          'missing-required',
          'wrong-type',
          'non-object-body',
          'bad-json',
          'empty-body',
          'huge-string',
          'proto-pollution',
        ].includes(m.name),
    );
    const choices: (Ingredient | Mutation)[] = [...domain, ...domain, ...domain, ...generic];
    if (choices.length === 0) throw new Error(`fuzz: no ingredient refuses ${d.op.key} (${d.tags.join(',')})`);
    const ing = rng.pick(choices);
    ing.apply(d, rng, w);
    d.tags.push(`!${ing.name}`);
  }
  return d;
}

/** The routes that can name a seeded ownership: its id in the path, its worktree in a bind, its id or branch in a landing. */
function isSeedable(op: ApiOperation): boolean {
  return SEEDED_CLASSES.has(routeModel(op.key).cls);
}
