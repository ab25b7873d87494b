import type { Principal } from '../../src/domain/identity';
import { authorize, authorizeForce, authorizeForWorker, MATRIX, OPERATIONS, type Operation } from '../../src/auth/policy';

/**
 * The authorisation matrix, written out by hand: a change to MATRIX must fail here and be
 * reviewed as a change of who may do what. Columns: executor, landing, admin, reader, system.
 */

type Cell = 'ok' | 'forbidden';
const KINDS = ['executor', 'landing', 'admin', 'reader', 'system'] as const;
const O: Cell = 'ok';
const F: Cell = 'forbidden';

const EXPECTED: Record<Operation, [Cell, Cell, Cell, Cell, Cell]> = {
  // [executor, landing, admin, reader, system]
  bind: [O, F, O, F, F],
  heartbeat: [O, F, O, F, F],
  handoff: [O, F, O, F, F],
  acceptHandoff: [O, F, O, F, F],
  cancelHandoff: [O, F, O, F, F],
  release: [O, F, O, F, F],
  reclaim: [O, F, O, F, F],
  submit: [O, F, O, F, F],
  bindPlan: [O, F, O, F, F],
  renameBranch: [O, F, O, F, F],
  grantHold: [O, F, O, F, F],
  holdHeartbeat: [O, F, O, F, F],
  endHold: [O, F, O, F, F],
  tenure: [O, F, O, F, F],
  override: [F, F, O, F, F],
  landed: [F, O, O, F, F],
  worktreeRemoved: [F, O, O, F, F],
  removeWorktree: [O, O, O, F, F],
  reportConversation: [O, F, O, F, F],
  get: [O, O, O, O, F],
  list: [O, O, O, O, F],
  history: [O, O, O, O, F],
  provenance: [O, O, O, O, F],
  exportDiagnostics: [F, F, O, F, F],
  rebuildProjection: [F, F, O, F, F],
  decodePayloads: [F, F, O, F, F],
};

const principal = (kind: Principal['kind']): Principal =>
  kind === 'executor' ? { kind, id: 'orchestrator-1', workerId: 'worker_a', runId: 'run_1' } : { kind, id: `${kind}-1` };

describe('authorisation matrix', () => {
  it('the expected table covers exactly the operations', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...OPERATIONS].sort());
    expect(Object.keys(MATRIX).sort()).toEqual([...OPERATIONS].sort());
  });

  const cases = OPERATIONS.flatMap((op) => KINDS.map((kind, i) => [op, kind, EXPECTED[op][i]] as const));
  it.each(cases)('%s by %s: %s', (op, kind, expected) => {
    const result = authorize(principal(kind), op);
    if (expected === 'ok') expect(result).toBeNull();
    else expect(result?.code).toBe(expected);
  });

  it.each([...OPERATIONS])('%s without a principal: unauthenticated', (op) => {
    expect(authorize(null, op)?.code).toBe('unauthenticated');
  });
});

describe('authorizeForWorker', () => {
  const exec = principal('executor');
  it('lets an executor act for its own worker', () => {
    expect(authorizeForWorker(exec, 'worker_a', null)).toBeNull();
  });
  it('refuses an executor acting for another worker, or for none', () => {
    expect(authorizeForWorker(exec, 'worker_b', null)?.code).toBe('worker_mismatch');
    expect(authorizeForWorker(exec, null, null)?.code).toBe('worker_mismatch');
  });
  it('refuses an executor principal that is bound to no worker', () => {
    expect(authorizeForWorker({ kind: 'executor', id: 'x' }, 'worker_a', null)?.code).toBe('worker_mismatch');
    expect(authorizeForWorker({ kind: 'executor', id: 'x', workerId: null }, null, null)?.code).toBe('worker_mismatch');
  });
  it('lets admin act for any worker', () => {
    expect(authorizeForWorker(principal('admin'), 'worker_b', null)).toBeNull();
    expect(authorizeForWorker(principal('admin'), null, null)).toBeNull();
  });
  it('never lets landing, reader or system act for a worker', () => {
    for (const kind of ['landing', 'reader', 'system'] as const) expect(authorizeForWorker(principal(kind), 'worker_a', null)?.code).toBe('forbidden');
  });
  it('lets a run-bound token act only for its run', () => {
    const bound = { kind: 'executor' as const, id: 'x', workerId: 'worker_a', runId: 'run-1' };
    expect(authorizeForWorker(bound, 'worker_a', 'run-1')).toBeNull();
    expect(authorizeForWorker(bound, 'worker_a', 'run-2')?.code).toBe('worker_mismatch');
    // An ownership that recorded no run is any run's of its worker, as the workflow's rule has it.
    expect(authorizeForWorker(bound, 'worker_a', null)).toBeNull();
    // A token bound to no run acts for every run of its worker.
    expect(authorizeForWorker({ kind: 'executor', id: 'y', workerId: 'worker_a' }, 'worker_a', 'run-2')).toBeNull();
  });
  it('refuses the unauthenticated', () => {
    expect(authorizeForWorker(null, 'worker_a', null)?.code).toBe('unauthenticated');
  });
});

describe('authorizeForce', () => {
  it('reserves a forced reclaim to admin', () => {
    expect(authorizeForce(principal('executor'), true)?.code).toBe('force_requires_admin');
    expect(authorizeForce(principal('executor'), false)).toBeNull();
    expect(authorizeForce(principal('admin'), true)).toBeNull();
    expect(authorizeForce(null, false)?.code).toBe('unauthenticated');
  });
});
