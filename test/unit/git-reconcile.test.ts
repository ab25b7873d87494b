import { existsSync } from 'node:fs';
import path from 'node:path';
import { emptyRecord, type OwnershipRecord } from '../../src/domain/projection';
import { guardCheck } from '../../src/git/guard';
import { readLock, worktreeLockReason } from '../../src/git/lock';
import { applyLocalProjection, readProjection, readSupersededProvisional, SUPERSEDED_PROVISIONAL_FILE, writeProjection } from '../../src/git/projection';
import { newIdempotencyKey, offlineClaim, provisionalOwnershipId, randomBase32 } from '../../src/git/provisional';
import { applyRecord, localProjectionOf, NO_TENURE_HASHES } from '../../src/git/record';
import { worktreeDirs } from '../../src/git/repo';
import { reconcile, ReconcileRefused, type ReconcilePort, type ReconciliationEntry } from '../../src/reconcile';
import { classify, isOlderOwnership } from '../../src/reconcile/classify';
import { withoutRedaction } from '../../src/reconcile/redacted';
import { makeRepo, projection, type Fixture } from './git-fixture';

const OWN_OLD = 'own_01HZZZZZZZZZZZZZZZZZZZZZZZ';
const OWN = 'own_01J00000000000000000000000';
const OWN_NEW = 'own_01J99999999999999999999999';

function record(over: Partial<OwnershipRecord> = {}): OwnershipRecord {
  const base = emptyRecord({ ownershipId: OWN, repoRoot: '/r', worktreePath: '/r/wt', branch: 'wt/x', hostId: 'h' });
  return {
    ...base,
    owner: {
      executionSessionId: 'session_A',
      runtime: 'codex-cli',
      parentExecutionSessionId: null,
      conversation: null,
      worker: { runId: null, workerId: 'w' },
      process: null,
    },
    worker: { runId: null, workerId: 'w' },
    state: 'active',
    epoch: 1,
    seq: 3,
    claimedAt: '2026-08-20T00:00:00.000Z',
    lastSeenAt: '2026-08-20T00:01:00.000Z',
    ...over,
  };
}

describe('localProjectionOf: the one record -> local mapping', () => {
  it('maps owner, worker and tenure; holds git lock only while owned', () => {
    const t = localProjectionOf(record(), NO_TENURE_HASHES);
    expect(t).toMatchObject({
      gitLock: true,
      ended: false,
      projection: { ownershipId: OWN, executionSessionId: 'session_A', workerId: 'w', epoch: 1, seq: 3, conversationId: null },
    });
    expect(localProjectionOf(record({ state: 'released' }), NO_TENURE_HASHES).gitLock).toBe(false);
    expect(localProjectionOf(record({ state: 'landed' }), NO_TENURE_HASHES).gitLock).toBe(false);
    expect(localProjectionOf(record({ state: 'submitted' }), NO_TENURE_HASHES).gitLock).toBe(true);
    expect(localProjectionOf(record({ state: 'closed' }), NO_TENURE_HASHES)).toEqual({ projection: null, gitLock: false, ended: true });
    expect(localProjectionOf(record({ worktreeRemoved: true }), NO_TENURE_HASHES).ended).toBe(true);
  });
});

describe('localProjectionOf: the tenure hash', () => {
  const seen: unknown[] = [];
  const hashes = (t: { ownershipId: string; epoch: number; executionSessionId: string }) => {
    seen.push(t);
    return `${'ab'.repeat(32)} ${'cd'.repeat(32)}`;
  };
  it('is the caller’s words for the owner’s tenure while an owner holds the worktree, and nothing once it is free', () => {
    seen.length = 0;
    expect(localProjectionOf(record({ epoch: 2, owner: { ...record().owner!, executionSessionId: 'session_B' } }), hashes).projection?.tenureHash).toBe(
      `${'ab'.repeat(32)} ${'cd'.repeat(32)}`,
    );
    expect(seen).toEqual([{ ownershipId: OWN, epoch: 2, executionSessionId: 'session_B' }]);
    for (const state of ['handoff_pending', 'stale', 'submitted'] as const)
      expect(localProjectionOf(record({ state }), hashes).projection?.tenureHash).toMatch(/^[0-9a-f]{64} /);
    for (const state of ['released', 'landed'] as const) expect(localProjectionOf(record({ state }), hashes).projection).not.toHaveProperty('tenureHash');
    // A writer that cannot derive it writes none.
    expect(localProjectionOf(record(), NO_TENURE_HASHES).projection).not.toHaveProperty('tenureHash');
  });
});

describe('reconcile: the tenure hash', () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = makeRepo();
  });
  afterEach(() => fx.cleanup());
  const H1 = `${'a1'.repeat(32)}`;
  const H2 = `${'b2'.repeat(32)} ${'c3'.repeat(32)}`;
  /** In memory: the service's durable record is `durable`. */
  const portOf = (durable: OwnershipRecord): ReconcilePort => ({
    durable: async () => durable,
    bind: async () => ({ ok: false, code: 'worktree_owned' }),
  });
  const onDisk = async (over: Partial<OwnershipRecord>, hash: string | null) => {
    const p = localProjectionOf(record(over), () => hash).projection!;
    await applyLocalProjection(fx.wt1, p, { gitLock: true, force: true });
  };

  it('with the key: written as the host agent would, and a missing one restored on an in-sync projection', async () => {
    await onDisk({ seq: 3 }, null);
    expect(await reconcile(fx.wt1, portOf(record({ seq: 3 })), { tenureHashes: () => H2 })).toMatchObject({
      kind: 'rehydrated',
      reason: 'tenure_hash',
      changed: true,
    });
    expect((await readProjection(fx.wt1))?.tenureHash).toBe(H2);
    expect(await reconcile(fx.wt1, portOf(record({ seq: 3 })), { tenureHashes: () => H2 })).toMatchObject({ kind: 'in_sync', changed: false });
  });

  it('without the key: kept for the same tenure (same ownership, epoch, session), never carried to another', async () => {
    await onDisk({ seq: 2, epoch: 1 }, H1);
    // Behind by seq, same tenure: the hash is still right.
    expect(await reconcile(fx.wt1, portOf(record({ seq: 3, epoch: 1, lane: 'later' })))).toMatchObject({ kind: 'rehydrated', reason: 'older_seq' });
    expect(await readProjection(fx.wt1)).toMatchObject({ seq: 3, lane: 'later', tenureHash: H1 });
    // A new tenure (another epoch, another session): the old hash would be the old owner's; none is written.
    expect(await reconcile(fx.wt1, portOf(record({ seq: 5, epoch: 2, owner: { ...record().owner!, executionSessionId: 'session_B' } })))).toMatchObject({
      kind: 'rehydrated',
    });
    const after = await readProjection(fx.wt1);
    expect(after).toMatchObject({ seq: 5, epoch: 2, executionSessionId: 'session_B' });
    expect(after).not.toHaveProperty('tenureHash');
    // And an in-sync projection is left as it is: without the key there is nothing to correct it with.
    expect(await reconcile(fx.wt1, portOf(record({ seq: 5, epoch: 2, owner: { ...record().owner!, executionSessionId: 'session_B' } })))).toMatchObject({
      kind: 'in_sync',
    });
  });

  it('without the key: the same epoch under another session, or the same session in another epoch, is another tenure', async () => {
    await onDisk({ seq: 2, epoch: 1 }, H1);
    await reconcile(fx.wt1, portOf(record({ seq: 3, epoch: 1, owner: { ...record().owner!, executionSessionId: 'session_B' } })));
    expect(await readProjection(fx.wt1)).not.toHaveProperty('tenureHash');
    await onDisk({ seq: 4, epoch: 1 }, H1);
    await reconcile(fx.wt1, portOf(record({ seq: 5, epoch: 2 })));
    expect(await readProjection(fx.wt1)).toMatchObject({ seq: 5, epoch: 2, executionSessionId: 'session_A' });
    expect(await readProjection(fx.wt1)).not.toHaveProperty('tenureHash');
  });
});

describe('classify', () => {
  const expected = localProjectionOf(record(), NO_TENURE_HASHES).projection!;
  it('in sync, unowned', () => {
    expect(classify(expected, record())).toEqual({ kind: 'in_sync', reason: null });
    expect(classify(null, null)).toEqual({ kind: 'unowned', reason: null });
    expect(classify(null, record({ state: 'closed' }))).toEqual({ kind: 'unowned', reason: null });
  });
  it('ignores display timestamps', () => {
    expect(classify({ ...expected, lastSeenAt: '2030-01-01T00:00:00.000Z' }, record()).kind).toBe('in_sync');
  });
  it('behind: missing, lower seq, older lifecycle, ended', () => {
    expect(classify(null, record())).toEqual({ kind: 'behind', reason: 'missing' });
    expect(classify({ ...expected, seq: 2, epoch: 0 }, record())).toEqual({ kind: 'behind', reason: 'older_seq' });
    expect(classify({ ...expected, ownershipId: OWN_OLD, seq: 40 }, record())).toEqual({ kind: 'behind', reason: 'older_ownership' });
    expect(classify(expected, record({ state: 'closed', seq: 5 }))).toEqual({ kind: 'behind', reason: 'ended' });
  });
  it('corrupt: unparseable, same seq other content, ahead', () => {
    expect(classify('corrupt', record())).toEqual({ kind: 'corrupt', reason: 'unparseable' });
    expect(classify({ ...expected, executionSessionId: 'session_B' }, record())).toEqual({ kind: 'corrupt', reason: 'same_seq_mismatch' });
    expect(classify({ ...expected, state: 'released' }, record())).toEqual({ kind: 'corrupt', reason: 'same_seq_mismatch' });
    expect(classify({ ...expected, seq: 4 }, record())).toEqual({ kind: 'corrupt', reason: 'ahead_of_durable' });
    expect(classify({ ...expected, seq: 9 }, record({ state: 'closed', seq: 5 }))).toEqual({ kind: 'corrupt', reason: 'ahead_of_durable' });
  });
  it('stale: another (newer or unknown) ownership, or one the service does not know', () => {
    expect(classify({ ...expected, ownershipId: OWN_NEW, seq: 1 }, record())).toEqual({ kind: 'stale', reason: 'other_ownership' });
    expect(classify({ ...expected, ownershipId: 'not-an-ulid' }, record())).toEqual({ kind: 'stale', reason: 'other_ownership' });
    expect(classify(expected, null)).toEqual({ kind: 'stale', reason: 'unknown_to_service' });
  });
  it('orders ownership ids by their ULID', () => {
    expect(isOlderOwnership(OWN_OLD, OWN)).toBe(true);
    expect(isOlderOwnership(OWN, OWN_OLD)).toBe(false);
    expect(isOlderOwnership('prov_X', OWN)).toBe(false);
  });
});

describe('idempotency keys', () => {
  it('are idem_<26 Crockford base32>, distinct, and name their placeholder ownership', () => {
    const keys = new Set(Array.from({ length: 200 }, () => newIdempotencyKey()));
    expect(keys.size).toBe(200);
    for (const k of keys) expect(k).toMatch(/^idem_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(provisionalOwnershipId('idem_ABC')).toBe('prov_ABC');
    expect(randomBase32(5)).toMatch(/^[0-9A-HJKMNP-TV-Z]{8}$/);
  });
});

describe('offlineClaim (docs/git-projection.md#offline-claims)', () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = makeRepo();
  });
  afterEach(() => fx.cleanup());
  const input = (session: string, over: Record<string, unknown> = {}) => ({
    executionSessionId: session,
    runtime: 'codex-cli',
    workerId: 'w-1',
    allowedRoots: [fx.root],
    ...over,
  });

  it('writes a provisional projection, lock JSON and git lock; never a conversation; seq and epoch 0', async () => {
    const res = await offlineClaim(fx.wt1, input('session_P', { lane: 'lane-1', planRef: 'docs/p.md' }));
    expect(res.status).toBe('claimed');
    const p = await readProjection(fx.wt1);
    expect(p).toMatchObject({
      executionSessionId: 'session_P',
      provisional: true,
      state: 'provisional',
      seq: 0,
      epoch: 0,
      conversationId: null,
      conversationUrl: null,
      lane: 'lane-1',
    });
    expect(p!.idempotencyKey).toMatch(/^idem_/);
    expect(p!.ownershipId).toBe(provisionalOwnershipId(p!.idempotencyKey!));
    expect(await readLock(fx.wt1)).toMatchObject({ execution_session_id: 'session_P', epoch: 0, conversation_id: null });
    expect(await worktreeLockReason(fx.wt1)).toContain('provisionally owned by session session_P');
    expect(await guardCheck(fx.wt1, { OVERDECK_EXECUTION_SESSION_ID: 'session_P' })).toEqual({ allowed: true });
    expect(await guardCheck(fx.wt1, { OVERDECK_EXECUTION_SESSION_ID: 'session_Q' })).toMatchObject({ allowed: false, reason: 'not_owner' });
  });

  it('is idempotent for its session and refuses another', async () => {
    const first = await offlineClaim(fx.wt1, input('session_P'));
    const again = await offlineClaim(fx.wt1, input('session_P'));
    expect(again).toMatchObject({ status: 'already_provisional', projection: { idempotencyKey: first.projection!.idempotencyKey } });
    expect(await offlineClaim(fx.wt1, input('session_Q'))).toMatchObject({ status: 'refused', projection: { executionSessionId: 'session_P' } });
  });

  it('leaves a durable owner alone: its own session gets already_owned, others refused', async () => {
    await writeProjection(fx.wt1, projection('A', 4));
    expect((await offlineClaim(fx.wt1, input('session_A'))).status).toBe('already_owned');
    expect((await offlineClaim(fx.wt1, input('session_B'))).status).toBe('refused');
    expect((await readProjection(fx.wt1))?.seq).toBe(4);
  });

  it('replaces a released projection (any seq), and any real projection supersedes it', async () => {
    await writeProjection(fx.wt1, projection('A', 7, { state: 'released' }));
    expect((await offlineClaim(fx.wt1, input('session_P'))).status).toBe('claimed');
    expect((await readProjection(fx.wt1))?.seq).toBe(0);
    expect(await writeProjection(fx.wt1, projection('P', 8, { executionSessionId: 'session_P' }))).toBe('written');
    expect((await readProjection(fx.wt1))?.provisional).toBeUndefined();
  });

  it('refuses over a corrupt projection or a lost provisional claim, and outside the allowed roots', async () => {
    await writeProjection(fx.wt1, projection('P', 0, { provisional: true, state: 'provisional-conflict' }));
    expect(await offlineClaim(fx.wt1, input('session_P'))).toMatchObject({ status: 'conflict', reason: 'provisional_conflict' });
    await expect(offlineClaim(fx.wt2, input('session_P', { allowedRoots: ['/nonexistent-root'] }))).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(offlineClaim(fx.wt2, input('bad session'))).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(offlineClaim(path.join(fx.wt2, 'missing'), input('session_P'))).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});

describe('a provisional claim superseded before reconciliation is stashed, not lost', () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = makeRepo();
  });
  afterEach(() => fx.cleanup());
  const stashFile = async (wt: string) => path.join((await worktreeDirs(wt)).privateDir, SUPERSEDED_PROVISIONAL_FILE);

  it('by another session’s real projection (the host agent catching up)', async () => {
    await offlineClaim(fx.wt1, { executionSessionId: 'session_P', runtime: 'codex-cli', allowedRoots: [fx.root] });
    await applyRecord(fx.wt1, record({ seq: 1 }), NO_TENURE_HASHES);
    expect((await readProjection(fx.wt1))?.executionSessionId).toBe('session_A');
    expect(await readSupersededProvisional(fx.wt1)).toMatchObject({ executionSessionId: 'session_P', provisional: true });
  });

  it('by a clear', async () => {
    await offlineClaim(fx.wt1, { executionSessionId: 'session_P', runtime: 'codex-cli', allowedRoots: [fx.root] });
    await applyLocalProjection(fx.wt1, null, { gitLock: false, clearIfSeqAtMost: 5 });
    expect(await readSupersededProvisional(fx.wt1)).toMatchObject({ executionSessionId: 'session_P' });
  });

  it('but not by its own session’s real projection, nor once marked as a conflict', async () => {
    await offlineClaim(fx.wt1, { executionSessionId: 'session_A', runtime: 'codex-cli', allowedRoots: [fx.root] });
    await applyRecord(fx.wt1, record({ seq: 1 }), NO_TENURE_HASHES);
    expect(existsSync(await stashFile(fx.wt1))).toBe(false);
    await writeProjection(fx.wt2, projection('P', 0, { provisional: true, state: 'provisional-conflict' }));
    await applyRecord(fx.wt2, record({ seq: 1 }), NO_TENURE_HASHES);
    expect(existsSync(await stashFile(fx.wt2))).toBe(false);
  });
});

describe('writeProjection compare-and-swap (expectSeq)', () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = makeRepo();
  });
  afterEach(() => fx.cleanup());

  it('writes only over the seq that was read, lower or higher', async () => {
    await writeProjection(fx.wt1, projection('A', 5));
    expect(await writeProjection(fx.wt1, projection('B', 2), { expectSeq: 4 })).toBe('skipped');
    expect(await writeProjection(fx.wt1, projection('B', 2), { expectSeq: 5 })).toBe('written');
    expect((await readProjection(fx.wt1))?.executionSessionId).toBe('session_B');
    expect(await writeProjection(fx.wt2, projection('C', 1), { expectSeq: 3 })).toBe('skipped');
    expect(await writeProjection(fx.wt2, projection('C', 1), { expectSeq: null })).toBe('written');
  });
});

describe('withoutRedaction: a record as a principal that may not see the conversation gets it', () => {
  const conversation = {
    provider: 'chatgpt-web' as const,
    conversationId: 'c-1',
    conversationUrl: '[redacted]',
    title: '[redacted]',
    observedAt: '2026-08-20T00:00:00.000Z',
  };
  const redacted = record({ owner: { ...record().owner!, conversation } });
  const full = localProjectionOf(
    record({ owner: { ...record().owner!, conversation: { ...conversation, conversationUrl: 'https://chatgpt.com/c/c-1' } } }),
    NO_TENURE_HASHES,
  ).projection!;

  it('is in sync with a local projection of the same conversation, its URL taken from there', () => {
    const seen = withoutRedaction(redacted, full)!;
    expect(classify(full, seen)).toEqual({ kind: 'in_sync', reason: null });
    expect(localProjectionOf(seen, NO_TENURE_HASHES).projection?.conversationUrl).toBe('https://chatgpt.com/c/c-1');
  });
  it('otherwise the URL is unknown (null), never the placeholder', () => {
    for (const local of [null, { ...full, conversationId: 'c-2' }, { ...full, conversationUrl: '[redacted]' }]) {
      expect(localProjectionOf(withoutRedaction(redacted, local)!, NO_TENURE_HASHES).projection).toMatchObject({
        conversationId: 'c-1',
        conversationUrl: null,
      });
    }
  });
  it('leaves a record that is not redacted alone', () => {
    const r = record();
    expect(withoutRedaction(r, null)).toBe(r);
    expect(withoutRedaction(null, full)).toBeNull();
  });
});

describe('reconcile: a claim refused for naming another worker than the port’s token', () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = makeRepo();
  });
  afterEach(() => fx.cleanup());

  /** In memory: the service knows nothing of the worktree and refuses every bind as worker_mismatch. */
  function refusingPort() {
    const logged: ReconciliationEntry[] = [];
    let binds = 0;
    const port: ReconcilePort = {
      durable: async () => null,
      bind: async () => {
        binds++;
        return { ok: false, code: 'worker_mismatch' };
      },
      recordReconciliation: async (e) => void logged.push(e),
    };
    return { port, logged, binds: () => binds };
  }

  it('is a conflict that leaves the claim provisional, unmarked, for the right token', async () => {
    await offlineClaim(fx.wt1, { executionSessionId: 'session_P', runtime: 'codex-cli', workerId: 'someone-else', allowedRoots: [fx.root] });
    const before = await readProjection(fx.wt1);
    const p = refusingPort();
    expect(await reconcile(fx.wt1, p.port)).toMatchObject({ kind: 'conflict', reason: 'worker_mismatch', changed: false, repaired: false, recorded: true });
    expect(await readProjection(fx.wt1)).toEqual(before);
    expect(await guardCheck(fx.wt1, { OVERDECK_EXECUTION_SESSION_ID: 'session_P' })).toEqual({ allowed: true });
    expect(p.logged).toEqual([
      expect.objectContaining({ kind: 'conflict', reason: 'worker_mismatch', provisional: expect.objectContaining({ executionSessionId: 'session_P' }) }),
    ]);
  });

  it('--repair drops the claim (rewritten from the durable record: none)', async () => {
    await offlineClaim(fx.wt1, { executionSessionId: 'session_P', runtime: 'codex-cli', workerId: 'someone-else', allowedRoots: [fx.root] });
    const p = refusingPort();
    expect(await reconcile(fx.wt1, p.port, { repair: true })).toMatchObject({ kind: 'conflict', reason: 'worker_mismatch', changed: true, repaired: true });
    expect(await readProjection(fx.wt1)).toBeNull();
  });

  it('a refused caller (ReconcileRefused) is passed through untouched, nothing written', async () => {
    await offlineClaim(fx.wt1, { executionSessionId: 'session_P', runtime: 'codex-cli', allowedRoots: [fx.root] });
    const before = await readProjection(fx.wt1);
    const port: ReconcilePort = {
      durable: async () => null,
      bind: async () => {
        throw new ReconcileRefused('forbidden', 'forbidden: no worker');
      },
    };
    await expect(reconcile(fx.wt1, port)).rejects.toMatchObject({ name: 'ReconcileRefused', code: 'forbidden' });
    expect(await readProjection(fx.wt1)).toEqual(before);
  });
});

describe('reconcile: child holds', () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = makeRepo();
  });
  afterEach(() => fx.cleanup());
  const H = `${'a1'.repeat(32)}`;
  const HC = `${'c4'.repeat(32)}`;
  const HD = `${'d5'.repeat(32)}`;
  const hold = (holdId: string, executionSessionId: string, epoch = 1) => ({
    holdId,
    executionSessionId,
    parentExecutionSessionId: 'session_A',
    epoch,
    grantedAt: '2026-08-20T00:00:30.000Z',
    leaseTtlMs: 60_000,
    runtime: null,
  });
  const portOf = (durable: OwnershipRecord): ReconcilePort => ({
    durable: async () => durable,
    bind: async () => ({ ok: false, code: 'worktree_owned' }),
  });
  /** A keyed writer's words: the owner's H, each hold's its own. */
  const keyed = (t: { executionSessionId: string; holdId?: string }) => (t.holdId === undefined ? H : t.holdId === 'hld_c' ? HC : HD);

  it("without the key: a hold's words are kept for that very hold and child, never given to another; a hold that ended is dropped", async () => {
    const p = localProjectionOf(record({ seq: 2, holds: [hold('hld_c', 'child_c')] }), keyed).projection!;
    expect(p.holds).toEqual([{ holdId: 'hld_c', executionSessionId: 'child_c', tenureHash: HC }]);
    await applyLocalProjection(fx.wt1, p, { gitLock: true, force: true });
    // Behind by seq: child_c still holds, a new hold of child_d has no words to keep (written without standing).
    await reconcile(fx.wt1, portOf(record({ seq: 3, holds: [hold('hld_c', 'child_c'), hold('hld_d', 'child_d')] })));
    expect((await readProjection(fx.wt1))?.holds).toEqual([{ holdId: 'hld_c', executionSessionId: 'child_c', tenureHash: HC }]);
    // The same hold id now naming another child: not child_c's words.
    await reconcile(fx.wt1, portOf(record({ seq: 4, holds: [hold('hld_c', 'child_x')] })));
    expect((await readProjection(fx.wt1))?.holds).toBeUndefined();
  });

  it("with the key: an in-sync projection missing a hold's words is rewritten with them", async () => {
    const durable = record({ seq: 3, holds: [hold('hld_c', 'child_c'), hold('hld_d', 'child_d')] });
    await applyLocalProjection(fx.wt1, localProjectionOf(durable, (t) => ('holdId' in t ? null : H)).projection!, { gitLock: true, force: true });
    expect((await readProjection(fx.wt1))?.holds).toBeUndefined();
    expect(await reconcile(fx.wt1, portOf(durable), { tenureHashes: keyed })).toMatchObject({ kind: 'rehydrated', reason: 'tenure_hash', changed: true });
    expect((await readProjection(fx.wt1))?.holds?.map((h) => [h.holdId, h.tenureHash])).toEqual([
      ['hld_c', HC],
      ['hld_d', HD],
    ]);
    expect(await reconcile(fx.wt1, portOf(durable), { tenureHashes: keyed })).toMatchObject({ kind: 'in_sync', changed: false });
  });
});
