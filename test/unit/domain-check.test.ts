import fc from 'fast-check';
import type { z } from 'zod';
import { checkFailure } from '../../src/domain/check';
import {
  AcceptHandoffInputSchema,
  BindPlanInputSchema,
  CancelHandoffInputSchema,
  Checks,
  ClaimInputSchema,
  ConversationBoundInputSchema,
  HandoffInputSchema,
  HeartbeatInputSchema,
  LandedInputSchema,
  ReclaimInputSchema,
  ReleaseInputSchema,
  RenameBranchInputSchema,
  SubmitInputSchema,
  WorktreeRemovedInputSchema,
} from '../../src/domain/commands';

/**
 * The workflow's plain validators (check.ts) give zod's verdict on every message: accepted, or
 * refused as unknown_field / invalid_input. Valid messages are mutated field by field with values
 * of every kind, hostile strings included, and both must agree.
 */

const SHA = 'a'.repeat(40);
const principal = { kind: 'executor', id: 'e-1', workerId: 'w-1' };
const owner = { executionSessionId: 's-1', epoch: 1, principal, ownershipId: 'own_01JAAAAAAAAAAAAAAAAAAAAAAA' };
const newOwner = {
  executionSessionId: 's-2',
  runtime: 'codex-cli',
  worker: { workerId: 'w-1', runId: null },
  principal,
  leaseTtlMs: 60_000,
  process: { hostId: 'h', bootId: 'b', pid: 4, startTime: '9' },
};

const cases: [string, z.ZodType, (x: unknown) => boolean, Record<string, unknown>][] = [
  ['claim', ClaimInputSchema, Checks.claim, { ...newOwner, branch: 'wt/a', lane: 'l', planRef: null, requestId: 'r-1' }],
  ['acceptHandoff', AcceptHandoffInputSchema, Checks.acceptHandoff, { ...newOwner, handoffId: 'hof_1' }],
  ['reclaim', ReclaimInputSchema, Checks.reclaim, { ...newOwner, force: true, reason: 'gone' }],
  ['handoff', HandoffInputSchema, Checks.handoff, { ...owner, toExecutionSessionId: 's-3', toWorkerId: 'w-2', reason: null }],
  ['cancelHandoff', CancelHandoffInputSchema, Checks.cancelHandoff, { ...owner }],
  ['release', ReleaseInputSchema, Checks.release, { ...owner, reason: 'done' }],
  ['submit', SubmitInputSchema, Checks.submit, { ...owner, head: SHA }],
  ['bindPlan', BindPlanInputSchema, Checks.bindPlan, { ...owner, lane: 'x', planRef: 'docs/p.md', requestId: null }],
  ['renameBranch', RenameBranchInputSchema, Checks.renameBranch, { ...owner, from: 'wt/a', to: 'wt/b' }],
  ['heartbeat', HeartbeatInputSchema, Checks.heartbeat, { executionSessionId: 's-1', epoch: 2 }],
  [
    'landed',
    LandedInputSchema,
    Checks.landed,
    { sourceHead: SHA, landedBranch: 'main', landedHead: SHA, landedAt: '2026-12-01T00:00:00Z', principal: { kind: 'landing', id: 'l' } },
  ],
  ['worktreeRemoved', WorktreeRemovedInputSchema, Checks.worktreeRemoved, { reason: null, principal }],
  [
    'worktreeRemoved with its receipt',
    WorktreeRemovedInputSchema,
    Checks.worktreeRemoved,
    {
      reason: null,
      principal,
      receipt: {
        head: SHA,
        headLandedOn: 'refs/heads/main',
        accounted: { squash: 2, ancestry: 1 },
        preserved: [{ ref: 'refs/overdeck/wip/own_1/tree-x', sha: SHA, files: 3 }],
        branch: 'kept',
      },
    },
  ],
  ['conversationBound', ConversationBoundInputSchema, Checks.conversationBound, { workerId: 'w-1' }],
];

const hostile = fc.constantFrom(
  '',
  'a\u0000b',
  '\ud800',
  'x\ny',
  'ok',
  'wt/a',
  'a..b',
  'x'.repeat(600),
  '2026-12-01T00:00:00Z',
  '2026-13-01T00:00:00Z',
  'own_01JAAAAAAAAAAAAAAAAAAAAAAA',
  SHA,
  'executor',
  'admin',
  'hof_x',
  '🚀',
);
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  hostile,
  fc.string(),
  fc.integer({ min: -5, max: 100_000_000 }),
  fc.double(),
  fc.constantFrom(0, 1, 999, 1000, 86_400_000, 86_400_001, Number.NaN, Infinity, 1.5),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
  fc.record({ workerId: hostile, runId: fc.oneof(fc.constant(null), hostile) }),
  fc.record({ kind: hostile, id: hostile }),
);

function zodVerdict(schema: z.ZodType, x: unknown): string | null {
  const r = schema.safeParse(x);
  if (r.success) return null;
  return r.error.issues.some((i) => i.code === 'unrecognized_keys') ? 'unknown_field' : 'invalid_input';
}

test.each(cases)('%s: the valid example passes both', (_name, schema, check, valid) => {
  expect(zodVerdict(schema, valid)).toBeNull();
  expect(checkFailure(check, valid)).toBeNull();
});

test.each(cases)('%s: zod and the compiled check agree on 3,000 mutations', (_name, schema, check, valid) => {
  const keys = Object.keys(valid);
  const mutation = fc.record({
    set: fc.array(fc.tuple(fc.constantFrom(...keys, 'bogus', 'conversation'), anyValue), { maxLength: 3 }),
    drop: fc.array(fc.constantFrom(...keys), { maxLength: 2 }),
    whole: fc.option(anyValue, { freq: 10 }),
  });
  fc.assert(
    fc.property(mutation, ({ set, drop, whole }) => {
      let x: unknown = { ...valid };
      for (const k of drop) delete (x as Record<string, unknown>)[k];
      for (const [k, v] of set) (x as Record<string, unknown>)[k] = v;
      if (whole !== null) x = whole;
      expect(checkFailure(check, x)).toBe(zodVerdict(schema, x));
    }),
    { numRuns: 3_000, seed: 20261201 },
  );
});
