import { WireRecordSchema, type Liveness, type WireRecord } from '../../src/contract/http';

/** Fixture records for the renderer tests: parsed by the wire schema, so they stay real shapes. */

export const CONV = '00000000-0000-4000-8000-000000000000';

export function record(over: Partial<WireRecord> = {}): WireRecord {
  return WireRecordSchema.parse({
    schemaVersion: 1,
    ownershipId: 'own_01JABCDEFGHJKMNPQRSTVWXYZ0',
    repoRoot: '/home/user/Projects/example',
    worktreePath: '/home/user/Projects/example/.worktrees/feature-x',
    branch: 'wt/feature-x',
    hostId: 'host-1',
    lane: 'feature-x',
    planRef: 'docs/plans/feature-x.md',
    requestId: null,
    worker: { runId: 'run_1', workerId: '/root/feature-x' },
    owner: {
      executionSessionId: 'session_abc',
      runtime: 'chatgpt-web',
      parentExecutionSessionId: null,
      conversation: {
        provider: 'chatgpt-web',
        conversationId: CONV,
        conversationUrl: `https://chatgpt.com/c/${CONV}`,
        title: 'Example lane',
        observedAt: '2026-08-20T00:00:00Z',
      },
      worker: { runId: 'run_1', workerId: '/root/feature-x' },
      process: null,
    },
    state: 'active',
    epoch: 1,
    seq: 3,
    claimedAt: '2026-08-20T00:00:00Z',
    lastSeenAt: '2026-08-20T00:01:00Z',
    handoff: null,
    lineage: [{ executionSessionId: 'session_abc', runtime: 'chatgpt-web', epoch: 1, via: 'bind', at: '2026-08-20T00:00:00Z', conversationId: CONV }],
    latestWip: null,
    submitted: null,
    landings: [],
    worktreeRemoved: false,
    branchNames: ['wt/feature-x'],
    ...over,
  });
}

export const live: Liveness = { status: 'live', verdict: null, lastHeartbeatAt: '2026-08-20T00:05:00Z', checkedAt: null, leaseTtlMs: 60_000 };
