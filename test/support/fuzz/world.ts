import type { Pool } from 'pg';
import { MATRIX, type Operation } from '../../../src/auth/policy';
import type { RepoFixture } from '../git-fixture';
import type { PathFixtures } from './hostile';

/**
 * What the fuzz knows: the principals, the repositories, the seeded ownerships (only ever sent
 * refused-by-construction messages) and the ownerships it learned from its own successful binds
 * (sent anything). Plus the route model: which policy operation each route is.
 */

export type PrincipalName = 'admin' | 'landing' | 'reader' | 'executor' | 'otherExecutor';
export type Kind = 'admin' | 'landing' | 'reader' | 'executor';

export interface FuzzPrincipal {
  name: PrincipalName;
  kind: Kind;
  token: string;
  /** executors: the agent worker they act for */
  workerId: string | null;
}

export interface Target {
  id: string;
  worktreePath: string;
  repoRoot: string;
  branch: string;
  session: string;
  epoch: number;
  /** the agent worker of the owner */
  ownerWorker: string;
  /** who sends the owner's messages: its executor, or admin (naming the worker) */
  ownerPrincipal: PrincipalName;
  handoffId: string | null;
  successor: string | null;
  state: string;
  seeded: boolean;
}

export interface World {
  host: string;
  port: number;
  hostId: string;
  principals: Record<PrincipalName, FuzzPrincipal>;
  /** the worker only admin binds for: no executor can report a conversation that touches it */
  seedWorkerId: string;
  fuzzRepo: RepoFixture & { head: string };
  seedRepo: RepoFixture & { head: string };
  fx: PathFixtures;
  /** sessions of the fuzz's own binds; disjoint from the seeded owners' and successors' */
  sessions: string[];
  seeded: Target[];
  /** learned from 2xx views of the fuzz's own ownerships, by id */
  live: Map<string, Target>;
  /** an increasing observation sequence for conversation reports */
  sequence: number;
  /** binds naming a host nobody serves wait for it: allowed a few times a run, and they answer 503 */
  unknownHostBudget: number;
}

export type RouteClass =
  'public' | 'bind' | 'ownerOnly' | 'newOwner' | 'landingWrite' | 'readById' | 'landings' | 'conversation' | 'lookup' | 'reconcile' | 'principal';

export interface RouteModel {
  cls: RouteClass;
  op: Operation | null;
  /** an admin must name a worker in the body (the document says so in prose only): its fuzz callers are executors */
  executorsOnly?: true;
}

const PER_OWNERSHIP: Record<string, [RouteClass, Operation]> = {
  heartbeat: ['ownerOnly', 'heartbeat'],
  handoff: ['ownerOnly', 'handoff'],
  'handoff/accept': ['newOwner', 'acceptHandoff'],
  'handoff/cancel': ['ownerOnly', 'cancelHandoff'],
  release: ['ownerOnly', 'release'],
  reclaim: ['newOwner', 'reclaim'],
  submit: ['ownerOnly', 'submit'],
  plan: ['ownerOnly', 'bindPlan'],
  'rename-branch': ['ownerOnly', 'renameBranch'],
  // Owner-only like a heartbeat (session and worker checked); override is admin-only and changes no ownership.
  tenure: ['ownerOnly', 'tenure'],
  override: ['ownerOnly', 'override'],
  landed: ['landingWrite', 'landed'],
  'worktree-removed': ['landingWrite', 'worktreeRemoved'],
  // Child holds: the owner grants; the child or the owner (of its own worker) beats and ends.
  holds: ['ownerOnly', 'grantHold'],
  'holds/{holdId}/heartbeat': ['ownerOnly', 'holdHeartbeat'],
  'holds/{holdId}/end': ['ownerOnly', 'endHold'],
};

/** The route's policy operation, as src/api/routes registers it (the document does not say). */
export function routeModel(key: string): RouteModel {
  const m = /^POST \/v1\/ownerships\/\{id\}\/(.+)$/.exec(key);
  if (m) {
    const r = PER_OWNERSHIP[m[1]!];
    if (!r) throw new Error(`fuzz: no route model for ${key}: add it to test/support/fuzz/world.ts`);
    return { cls: r[0], op: r[1] };
  }
  const table: Record<string, RouteModel> = {
    'GET /healthz': { cls: 'public', op: null },
    'POST /v1/bind': { cls: 'bind', op: 'bind' },
    'GET /v1/ownerships/{id}': { cls: 'readById', op: 'get' },
    'POST /v1/landings': { cls: 'landings', op: 'landed' },
    'POST /v1/landings/scan': { cls: 'landings', op: 'landed' },
    'POST /v1/executor/conversation': { cls: 'conversation', op: 'reportConversation' },
    'GET /v1/ownership': { cls: 'lookup', op: 'get' },
    'GET /v1/ownership/live': { cls: 'lookup', op: 'get' },
    'GET /v1/ownerships': { cls: 'lookup', op: 'list' },
    'GET /v1/history': { cls: 'lookup', op: 'history' },
    'GET /v1/provenance/{sha}': { cls: 'lookup', op: 'provenance' },
    'POST /v1/reconciliations': { cls: 'reconcile', op: 'bind' },
    'GET /v1/principal': { cls: 'principal', op: 'get' },
    // Read-only observers: executor writes that touch no ownership, generic as reconciliations are.
    'POST /v1/worktrees/observers': { cls: 'reconcile', op: 'heartbeat', executorsOnly: true },
    'DELETE /v1/worktrees/observers': { cls: 'reconcile', op: 'heartbeat', executorsOnly: true },
    // Removal: asked as dry runs only (gen.ts, doc-run.ts), so the fuzz's worktrees stay its world.
    'POST /v1/worktrees/remove': { cls: 'reconcile', op: 'removeWorktree' },
  };
  const r = table[key];
  if (!r) throw new Error(`fuzz: no route model for ${key}: add it to test/support/fuzz/world.ts`);
  return r;
}

export function mayCall(kind: Kind, op: Operation | null): boolean {
  return op === null || MATRIX[op].includes(kind);
}

/** Learns the fuzz's own ownerships from a 2xx view (never a seeded one: those stay as seeded). */
export function learn(w: World, body: unknown): void {
  if (!body || typeof body !== 'object') return;
  const v = body as {
    ownershipId?: unknown;
    worktreePath?: unknown;
    repoRoot?: unknown;
    branch?: unknown;
    epoch?: unknown;
    state?: unknown;
    owner?: { executionSessionId?: unknown; worker?: { workerId?: unknown } | null } | null;
    worker?: { workerId?: unknown } | null;
    handoff?: { handoffId?: unknown; toExecutionSessionId?: unknown } | null;
  };
  if (typeof v.ownershipId !== 'string' || typeof v.worktreePath !== 'string' || typeof v.epoch !== 'number') return;
  if (w.seeded.some((t) => t.id === v.ownershipId)) return;
  const ownerWorker = typeof v.owner?.worker?.workerId === 'string' ? v.owner.worker.workerId : typeof v.worker?.workerId === 'string' ? v.worker.workerId : '';
  const ownerPrincipal: PrincipalName =
    ownerWorker === w.principals.executor.workerId ? 'executor' : ownerWorker === w.principals.otherExecutor.workerId ? 'otherExecutor' : 'admin';
  w.live.set(v.ownershipId, {
    id: v.ownershipId,
    worktreePath: v.worktreePath,
    repoRoot: typeof v.repoRoot === 'string' ? v.repoRoot : w.fuzzRepo.repoRoot,
    branch: typeof v.branch === 'string' ? v.branch : 'main',
    session: typeof v.owner?.executionSessionId === 'string' ? v.owner.executionSessionId : w.sessions[0]!,
    epoch: v.epoch,
    ownerWorker,
    ownerPrincipal,
    handoffId: typeof v.handoff?.handoffId === 'string' ? v.handoff.handoffId : null,
    successor: typeof v.handoff?.toExecutionSessionId === 'string' ? v.handoff.toExecutionSessionId : null,
    state: typeof v.state === 'string' ? v.state : 'active',
    seeded: false,
  });
  // Bounded: the newest few are the interesting ones.
  if (w.live.size > 64) w.live.delete(w.live.keys().next().value as string);
}

/** Everything PostgreSQL holds about one ownership, for the before/after comparison. */
export interface OwnershipSnapshot {
  events: number;
  maxSeq: number | null;
  lastEvent: string | null;
  row: unknown;
  receipts: number;
  branchNames: unknown[];
}

export async function snapshotOwnership(pool: Pool, id: string): Promise<OwnershipSnapshot> {
  const ev = await pool.query<{ n: number; max: number | null; last: string | null }>(
    `SELECT count(*)::int AS n, max(seq) AS max,
            (SELECT type FROM ownership_events WHERE ownership_id = $1 ORDER BY seq DESC LIMIT 1) AS last
       FROM ownership_events WHERE ownership_id = $1`,
    [id],
  );
  const row = await pool.query('SELECT * FROM ownerships WHERE ownership_id = $1', [id]);
  const rc = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM landing_receipts WHERE ownership_id = $1', [id]);
  const bn = await pool.query('SELECT branch, from_seq, to_seq FROM branch_names WHERE ownership_id = $1 ORDER BY from_seq', [id]);
  return {
    events: ev.rows[0]!.n,
    maxSeq: ev.rows[0]!.max,
    lastEvent: ev.rows[0]!.last,
    row: JSON.parse(JSON.stringify(row.rows[0] ?? null)),
    receipts: rc.rows[0]!.n,
    branchNames: bn.rows,
  };
}
