import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { z } from 'zod';
import type { HostActivities, StoreActivities } from '../activities/types';
import {
  AcceptHandoffInputSchema,
  BindPlanInputSchema,
  CancelHandoffInputSchema,
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
} from '../domain/commands';
import {
  checkReclaim,
  decideAcceptHandoff,
  decideBindPlan,
  decideCancelHandoff,
  decideClaim,
  decideConversationBound,
  decideHandoff,
  decideHandoffTimeout,
  decideLanded,
  decideReclaim,
  decideRelease,
  decideRenameBranch,
  decideSubmit,
  decideWorktreeRemoved,
  type Decision,
  type LivenessView,
} from '../domain/decide';
import type { EventDraft, OwnershipEvent } from '../domain/events';
import type { WorktreeRef } from '../domain/identity';
import { applyEvent, type OwnershipRecord } from '../domain/projection';
import { hostTaskQueue } from '../domain/queues';
import { refusal, type Refusal } from '../domain/reasons';
import {
  acceptHandoffUpdate,
  bindPlanUpdate,
  cancelHandoffUpdate,
  claimUpdate,
  conversationBoundSignal,
  eventsQuery,
  handoffUpdate,
  heartbeatSignal,
  landedSignal,
  projectionQuery,
  reclaimUpdate,
  releaseUpdate,
  renameBranchUpdate,
  submitUpdate,
  worktreeRemovedSignal,
  type LivenessState,
  type OwnershipView,
  type ProjectionSync,
} from './messages';

export interface OwnershipSettings {
  leaseTtlMs: number;
  heartbeatLogIntervalMs: number;
  handoffTimeoutMs: number;
  maxHistoryEvents: number;
  /** Temporal caps updates per execution; continue-as-new well before that. */
  maxUpdatesPerRun: number;
  /** How long owner-changing updates wait for the worktree's local projection before answering. */
  projectionWaitMs: number;
}

export const DEFAULT_SETTINGS: OwnershipSettings = {
  leaseTtlMs: 60_000,
  heartbeatLogIntervalMs: 300_000,
  handoffTimeoutMs: 600_000,
  maxHistoryEvents: 2_000,
  maxUpdatesPerRun: 1_000,
  projectionWaitMs: 10_000,
};

/** State carried across continue-as-new: everything the next run needs, nothing it can rebuild. */
export interface CarriedState {
  record: OwnershipRecord;
  /** The fold of the events PostgreSQL holds: what `record` is rebuilt on if the log overrides us. */
  durableRecord: OwnershipRecord | null;
  recentEvents: OwnershipEvent[];
  liveness: LivenessState;
  projectionSync: ProjectionSync;
  lastHeartbeatMs: number;
  lastHeartbeatLoggedMs: number;
}

export interface OwnershipWorkflowInput {
  ownershipId: string;
  worktree: WorktreeRef;
  settings: OwnershipSettings;
  carried?: CarriedState | null;
}

const RECENT_EVENTS = 200;

export const SA = {
  ownershipId: defineSearchAttributeKey('OwnershipId', SearchAttributeType.KEYWORD),
  repoRoot: defineSearchAttributeKey('OwnershipRepoRoot', SearchAttributeType.KEYWORD),
  worktree: defineSearchAttributeKey('OwnershipWorktree', SearchAttributeType.KEYWORD),
  branch: defineSearchAttributeKey('OwnershipBranch', SearchAttributeType.KEYWORD),
  state: defineSearchAttributeKey('OwnershipState', SearchAttributeType.KEYWORD),
  session: defineSearchAttributeKey('OwnerSessionId', SearchAttributeType.KEYWORD),
  worker: defineSearchAttributeKey('OwnerWorkerId', SearchAttributeType.KEYWORD),
  conversation: defineSearchAttributeKey('OwnerConversationId', SearchAttributeType.KEYWORD),
  landedHead: defineSearchAttributeKey('LandedHead', SearchAttributeType.KEYWORD),
};

const store = proxyLocalActivities<StoreActivities>({
  startToCloseTimeout: '15s',
  // The durable log is the acknowledgement: keep trying while PostgreSQL is away, never give up silently.
  retry: { initialInterval: '200ms', maximumInterval: '10s' },
});

/** One long-running workflow per worktree lifecycle: the live authority on who may mutate it. */
export async function ownershipWorkflow(input: OwnershipWorkflowInput): Promise<OwnershipRecord | null> {
  const { settings, worktree, ownershipId } = input;
  const host = proxyActivities<HostActivities>({
    taskQueue: hostTaskQueue(worktree.hostId),
    startToCloseTimeout: '60s',
    retry: { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: ['path_outside_allowed_roots', 'path_not_found', 'git_too_old'] },
  });
  const hostOnce = proxyActivities<HostActivities>({
    taskQueue: hostTaskQueue(worktree.hostId),
    scheduleToCloseTimeout: '30s',
    retry: { maximumAttempts: 3 },
  });

  const carried = input.carried ?? null;
  let record: OwnershipRecord | null = carried?.record ?? null;
  let durableRecord: OwnershipRecord | null = carried?.durableRecord ?? carried?.record ?? null;
  let recentEvents: OwnershipEvent[] = carried?.recentEvents ?? [];
  const liveness: LivenessState = carried?.liveness ?? { status: 'unowned', verdict: null, lastHeartbeatAt: null, checkedAt: null, leaseTtlMs: settings.leaseTtlMs };
  liveness.leaseTtlMs ??= settings.leaseTtlMs;
  /** A new owner brings its own lease, or gets the default. */
  const takeLease = (input: { leaseTtlMs?: number }) => {
    liveness.leaseTtlMs = input.leaseTtlMs ?? settings.leaseTtlMs;
  };
  const sync: ProjectionSync = carried?.projectionSync ?? { hostId: worktree.hostId, localSeq: 0, durableSeq: 0, error: null };
  let lastHeartbeatMs = carried?.lastHeartbeatMs ?? 0;
  let lastHeartbeatLoggedMs = carried?.lastHeartbeatLoggedMs ?? 0;
  let pending: OwnershipEvent[] = [];
  let wake = 0;
  let updatesThisRun = 0;
  /** A claim between its validator and its decision: other sessions are refused meanwhile. */
  let claimInFlight: string | null = null;

  const now = () => new Date(Date.now()).toISOString();
  const livenessView = (): LivenessView => ({ status: liveness.status, verdict: liveness.verdict });
  const view = (): OwnershipView | null => (record ? { ...record, liveness: { ...liveness }, projectionSync: { ...sync } } : null);

  function fail(r: Refusal): never {
    throw ApplicationFailure.create({ type: r.code, message: r.message, nonRetryable: true, details: r.details ? [r.details] : [] });
  }
  function orFail(d: Decision): EventDraft[] {
    if ('code' in d) fail(d);
    return d.events;
  }
  function validateWith<S extends z.ZodType>(schema: S, x: unknown): z.infer<S> {
    const parsed = schema.safeParse(x);
    if (!parsed.success) {
      const unknownField = parsed.error.issues.some((i) => i.code === 'unrecognized_keys');
      fail(refusal(unknownField ? 'unknown_field' : 'invalid_input'));
    }
    return parsed.data;
  }

  /** Stamps drafts into events, folds them into the record, and queues them for the durable log. */
  function emit(drafts: EventDraft[]): number {
    for (const d of drafts) {
      const base = record ?? { repoRoot: worktree.repoRoot, worktreePath: worktree.worktreePath, branch: worktree.branch, hostId: worktree.hostId, seq: 0 };
      const event = {
        ownershipId,
        seq: base.seq + 1,
        at: now(),
        actor: { executionSessionId: d.actorSessionId, principal: d.principal },
        repoRoot: base.repoRoot,
        worktreePath: base.worktreePath,
        branch: d.type === 'ownership.branch_renamed' ? d.data.to : base.branch,
        hostId: base.hostId,
        type: d.type,
        data: d.data,
      } as OwnershipEvent;
      record = applyEvent(record, event);
      pending.push(event);
      recentEvents.push(event);
      if (recentEvents.length > RECENT_EVENTS) recentEvents = recentEvents.slice(-RECENT_EVENTS);
      onOwnerChange(event);
    }
    if (drafts.length > 0) {
      publish();
      wake++;
    }
    return record?.seq ?? 0;
  }

  function onOwnerChange(e: OwnershipEvent): void {
    if (e.type === 'ownership.claimed' || e.type === 'ownership.reclaimed' || (e.type === 'ownership.heartbeat' && e.data.transition === 'revived')) {
      lastHeartbeatMs = Date.now();
      lastHeartbeatLoggedMs = Date.now();
      liveness.status = 'live';
      liveness.verdict = null;
      liveness.lastHeartbeatAt = e.at;
    } else if (e.type === 'ownership.stale') {
      liveness.status = 'stale';
      liveness.verdict = 'dead';
    } else if (e.type === 'ownership.released' || e.type === 'ownership.landed' || e.type === 'ownership.worktree_removed') {
      if (record && (record.state === 'released' || record.state === 'landed' || record.state === 'closed')) {
        liveness.status = 'unowned';
        liveness.verdict = null;
      }
    }
  }

  /** Search attributes and the UI's one-line summary follow every change. */
  let publishedAttributes = '';
  function publish(): void {
    if (!record) return;
    const r = record;
    const landed = r.landings.at(-1)?.landedHead ?? null;
    const attributes = [
      { key: SA.ownershipId, value: r.ownershipId },
      { key: SA.repoRoot, value: r.repoRoot },
      { key: SA.worktree, value: r.worktreePath },
      { key: SA.branch, value: r.branch },
      { key: SA.state, value: r.state },
      { key: SA.session, value: r.owner?.executionSessionId ?? null },
      { key: SA.worker, value: r.worker?.workerId ?? null },
      { key: SA.conversation, value: r.owner?.conversation?.conversationId ?? null },
      { key: SA.landedHead, value: landed },
    ];
    const serialized = JSON.stringify(attributes.map((a) => a.value));
    // Only a change of some attribute is worth a command in history (most events change none).
    if (serialized !== publishedAttributes || !patched('upsert-attributes-on-change-v1')) {
      upsertSearchAttributes(attributes);
      publishedAttributes = serialized;
    }
    const who = r.owner ? `${r.owner.executionSessionId} (${r.owner.runtime})` : 'unowned';
    setCurrentDetails(`${r.state.toUpperCase()} · ${who} · branch ${r.branch} · lane ${r.lane ?? 'unknown'} · epoch ${r.epoch} · seq ${r.seq}`);
  }

  /** Resolves once every event up to `seq` is in PostgreSQL: acknowledgements follow durability. */
  async function durable(seq: number): Promise<void> {
    await condition(() => sync.durableSeq >= seq);
  }

  async function localProjection(seq: number): Promise<void> {
    await condition(() => sync.localSeq >= seq || sync.error !== null, settings.projectionWaitMs);
  }

  async function answer(seq: number, waitLocal: boolean): Promise<OwnershipView> {
    await durable(seq);
    if (waitLocal) await localProjection(seq);
    return view()!;
  }

  const counted = <A extends unknown[], R>(fn: (...a: A) => Promise<R>) => async (...a: A): Promise<R> => {
    updatesThisRun++;
    return fn(...a);
  };

  // --- updates -----------------------------------------------------------------------------
  setHandler(
    claimUpdate,
    counted(async (raw) => {
      const input = ClaimInputSchema.parse(raw);
      claimInFlight = input.executionSessionId;
      try {
        const conversation = await store.readExecutorConversation(input.worker.workerId);
        const drafts = orFail(decideClaim(record, input, conversation));
        if (drafts.length > 0) takeLease(input);
        const seq = emit(drafts);
        return await answer(seq, true);
      } finally {
        if (claimInFlight === input.executionSessionId) claimInFlight = null;
      }
    }),
    {
      validator: (raw) => {
        const input = validateWith(ClaimInputSchema, raw);
        if (claimInFlight && claimInFlight !== input.executionSessionId) {
          fail(refusal('worktree_owned', { owner: { executionSessionId: claimInFlight, state: 'claiming' } }));
        }
        orFail(decideClaim(record, input, null));
      },
    },
  );

  setHandler(
    acceptHandoffUpdate,
    counted(async (raw) => {
      const input = AcceptHandoffInputSchema.parse(raw);
      const conversation = await store.readExecutorConversation(input.worker.workerId);
      const drafts = orFail(decideAcceptHandoff(record, input, conversation));
      if (drafts.length > 0) takeLease(input);
      const seq = emit(drafts);
      return await answer(seq, true);
    }),
    { validator: (raw) => void orFail(decideAcceptHandoff(record, validateWith(AcceptHandoffInputSchema, raw), null)) },
  );

  setHandler(
    handoffUpdate,
    counted(async (raw) => {
      const input = HandoffInputSchema.parse(raw);
      const seq = emit(orFail(decideHandoff(record, input, handoffId(), expiry())));
      return await answer(seq, false);
    }),
    { validator: (raw) => void orFail(decideHandoff(record, validateWith(HandoffInputSchema, raw), handoffId(), expiry())) },
  );

  setHandler(
    cancelHandoffUpdate,
    counted(async (raw) => answer(emit(orFail(decideCancelHandoff(record, CancelHandoffInputSchema.parse(raw)))), false)),
    { validator: (raw) => void orFail(decideCancelHandoff(record, validateWith(CancelHandoffInputSchema, raw))) },
  );

  setHandler(
    releaseUpdate,
    counted(async (raw) => answer(emit(orFail(decideRelease(record, ReleaseInputSchema.parse(raw)))), true)),
    { validator: (raw) => void orFail(decideRelease(record, validateWith(ReleaseInputSchema, raw))) },
  );

  setHandler(
    submitUpdate,
    counted(async (raw) => answer(emit(orFail(decideSubmit(record, SubmitInputSchema.parse(raw)))), false)),
    { validator: (raw) => void orFail(decideSubmit(record, validateWith(SubmitInputSchema, raw))) },
  );

  setHandler(
    bindPlanUpdate,
    counted(async (raw) => answer(emit(orFail(decideBindPlan(record, BindPlanInputSchema.parse(raw)))), false)),
    { validator: (raw) => void orFail(decideBindPlan(record, validateWith(BindPlanInputSchema, raw))) },
  );

  setHandler(
    renameBranchUpdate,
    counted(async (raw) => answer(emit(orFail(decideRenameBranch(record, RenameBranchInputSchema.parse(raw)))), false)),
    { validator: (raw) => void orFail(decideRenameBranch(record, validateWith(RenameBranchInputSchema, raw))) },
  );

  setHandler(
    reclaimUpdate,
    counted(async (raw) => {
      const input = ReclaimInputSchema.parse(raw);
      const denied = checkReclaim(record, input, livenessView());
      if (denied) fail(denied);
      const conversation = await store.readExecutorConversation(input.worker.workerId);
      // Preserve the dead owner's uncommitted work before anyone else may touch the worktree.
      const prevSession = record!.owner?.executionSessionId ?? input.executionSessionId;
      let wip: { ref: string; sha: string } | null = null;
      if (!record!.worktreeRemoved) {
        wip = await host.preserveWip(record!.worktreePath, ownershipId, record!.seq + 1);
      }
      const drafts = orFail(decideReclaim(record, input, livenessView(), conversation));
      if (wip) {
        emit([
          {
            type: 'ownership.wip_preserved',
            actorSessionId: input.executionSessionId,
            principal: `${input.principal.kind}:${input.principal.id}`,
            data: { executionSessionId: prevSession, ref: wip.ref, sha: wip.sha },
          },
        ]);
      }
      takeLease(input);
      return await answer(emit(drafts), true);
    }),
    { validator: (raw) => void orFail(decideReclaim(record, validateWith(ReclaimInputSchema, raw), livenessView(), null)) },
  );

  // --- signals: fire-and-forget, each idempotent; invalid ones are dropped with a log line ----
  setHandler(heartbeatSignal, (raw) => {
    const parsed = HeartbeatInputSchema.safeParse(raw);
    if (!parsed.success || !record || !record.owner) return;
    const hb = parsed.data;
    if (hb.executionSessionId !== record.owner.executionSessionId || hb.epoch !== record.epoch) return;
    if (record.state === 'landed' || record.state === 'closed' || record.state === 'released') return;
    const nowMs = Date.now();
    lastHeartbeatMs = nowMs;
    liveness.lastHeartbeatAt = now();
    const revived = liveness.status !== 'live' || record.state === 'stale';
    if (revived || nowMs - lastHeartbeatLoggedMs >= settings.heartbeatLogIntervalMs) {
      lastHeartbeatLoggedMs = nowMs;
      emit([
        {
          type: 'ownership.heartbeat',
          actorSessionId: hb.executionSessionId,
          principal: null,
          data: { executionSessionId: hb.executionSessionId, epoch: hb.epoch, transition: revived ? 'revived' : 'periodic' },
        },
      ]);
    }
    liveness.status = 'live';
    liveness.verdict = null;
    // A plain heartbeat needs no re-armed lease timer: the timer, when it fires, finds the lease
    // renewed and re-arms from lastHeartbeatMs. (Older runs woke the loop on every heartbeat.)
    if (!patched('heartbeat-without-rearm-v1')) wake++;
  });

  setHandler(landedSignal, (raw) => {
    const parsed = LandedInputSchema.safeParse(raw);
    if (!parsed.success) return log.warn('landed signal dropped: invalid input');
    const d = decideLanded(record, parsed.data);
    if ('code' in d) return log.warn('landed signal refused', { code: d.code });
    emit(d.events);
  });

  setHandler(worktreeRemovedSignal, (raw) => {
    const parsed = WorktreeRemovedInputSchema.safeParse(raw);
    if (!parsed.success) return log.warn('worktreeRemoved signal dropped: invalid input');
    const d = decideWorktreeRemoved(record, parsed.data);
    if ('code' in d) return log.warn('worktreeRemoved signal refused', { code: d.code });
    emit(d.events);
  });

  setHandler(conversationBoundSignal, async (raw) => {
    const parsed = ConversationBoundInputSchema.safeParse(raw);
    if (!parsed.success || !record?.worker || record.worker.workerId !== parsed.data.workerId) return;
    const conversation = await store.readExecutorConversation(parsed.data.workerId);
    const d = decideConversationBound(record, parsed.data.workerId, conversation);
    if (!('code' in d)) emit(d.events);
  });

  setHandler(projectionQuery, () => view());
  setHandler(eventsQuery, (afterSeq) => recentEvents.filter((e) => e.seq > afterSeq));

  function handoffId(): string {
    return `hof_${ownershipId.slice(4)}_${(record?.seq ?? 0) + 1}`;
  }
  function expiry(): string {
    return new Date(Date.now() + settings.handoffTimeoutMs).toISOString();
  }

  // --- background: the durable log, the local projection, liveness and timeouts ------------
  async function persistLoop(): Promise<never> {
    for (;;) {
      await condition(() => pending.length > 0);
      const batch = pending;
      pending = [];
      const { durableSeq, replaced } = await store.persistEvents(workflowInfo().workflowId, batch);
      adoptDurable(batch, replaced);
      sync.durableSeq = Math.max(sync.durableSeq, durableSeq);
    }
  }

  /**
   * The log wins. Normally `replaced` is empty; it is not when an earlier attempt of this workflow
   * task wrote the same seqs (with its own clock) and then failed before completing. Then the
   * recorded events are adopted and the live record is refolded on them.
   */
  function adoptDurable(batch: OwnershipEvent[], replaced: OwnershipEvent[]): void {
    const bySeq = new Map(replaced.map((e) => [e.seq, e]));
    const canonical = batch.map((e) => bySeq.get(e.seq) ?? e);
    for (const e of canonical) durableRecord = applyEvent(durableRecord, e);
    if (replaced.length === 0) return;
    log.warn('adopting recorded events over re-executed ones', { seqs: [...bySeq.keys()] });
    let r = durableRecord;
    for (const e of pending) r = applyEvent(r, e);
    record = r;
    recentEvents = recentEvents.map((e) => bySeq.get(e.seq) ?? e);
    publish();
  }

  async function projectionLoop(): Promise<never> {
    for (;;) {
      await condition(() => record !== null && sync.localSeq < record.seq && sync.durableSeq >= record.seq);
      const target = record!;
      try {
        const res = await host.applyLocalProjection(target);
        sync.localSeq = Math.max(sync.localSeq, res.localSeq, target.seq);
        sync.error = null;
        if (res.branch !== undefined) sync.branch = res.branch;
      } catch (err) {
        if (isCancellation(err)) throw err;
        const type = err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause.type : null;
        sync.error = type ?? 'projection_failed';
        // A refused projection is not retried until the record changes again.
        sync.localSeq = target.seq;
      }
    }
  }

  async function checkLiveness(): Promise<void> {
    if (!record?.owner) return;
    liveness.status = 'silent';
    let verdict: 'alive' | 'dead' | 'unknown' = 'unknown';
    let detail: string | null = null;
    try {
      ({ verdict, detail } = await hostOnce.checkSessionLiveness(record.owner));
    } catch (err) {
      if (isCancellation(err)) throw err;
      detail = 'liveness authority unreachable';
    }
    liveness.verdict = verdict;
    liveness.checkedAt = now();
    // A heartbeat may have arrived while the authority was being asked: it wins.
    if (Date.now() - lastHeartbeatMs < liveness.leaseTtlMs) {
      liveness.status = 'live';
      liveness.verdict = null;
      return;
    }
    if (verdict === 'dead' && record.state === 'active' && record.owner) {
      emit([
        {
          type: 'ownership.stale',
          actorSessionId: null,
          principal: 'system:liveness',
          data: { executionSessionId: record.owner.executionSessionId, epoch: record.epoch, verdict: 'dead', detail },
        },
      ]);
    }
  }

  const shouldContinueAsNew = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > settings.maxHistoryEvents || updatesThisRun >= settings.maxUpdatesPerRun;
  // A workflow whose first claim never succeeded (e.g. refused at update-with-start) ends quietly.
  const startedMs = Date.now();
  const ABANDON_MS = 60_000;
  const closed = () => record?.state === 'closed' || (record === null && Date.now() - startedMs >= ABANDON_MS);

  const background = new CancellationScope();
  const backgroundDone = background.run(() => Promise.all([persistLoop(), projectionLoop()]));
  backgroundDone.catch(() => undefined);

  if (record) publish();

  for (;;) {
    const seen = wake;
    const nowMs = Date.now();
    const deadlines: number[] = [];
    if (record?.state === 'active' && record.owner) {
      const base = liveness.status === 'live' ? lastHeartbeatMs : Math.max(lastHeartbeatMs, Date.parse(liveness.checkedAt ?? '0'));
      deadlines.push(base + liveness.leaseTtlMs);
    }
    if (record?.state === 'handoff_pending' && record.handoff) deadlines.push(Date.parse(record.handoff.expiresAt));
    if (record === null) deadlines.push(startedMs + ABANDON_MS);
    const timeout = deadlines.length ? Math.max(1, Math.min(...deadlines) - nowMs) : undefined;
    const woke =
      timeout === undefined
        ? (await condition(() => wake !== seen || closed() || shouldContinueAsNew()), true)
        : await condition(() => wake !== seen || closed() || shouldContinueAsNew(), timeout);

    if (closed()) break;
    if (shouldContinueAsNew()) break;
    if (!woke && record) {
      emit(orFail(decideHandoffTimeout(record, now())));
      if (record.state === 'active' && record.owner && Date.now() - lastHeartbeatMs >= liveness.leaseTtlMs) {
        const lastCheck = Date.parse(liveness.checkedAt ?? '0');
        if (liveness.status === 'live' || Date.now() - lastCheck >= liveness.leaseTtlMs) await checkLiveness();
      }
    }
  }

  // Drain: every acknowledged event durable, every handler done, the local projection given its chance.
  await condition(() => allHandlersFinished() && pending.length === 0 && sync.durableSeq >= (record?.seq ?? 0));
  await condition(() => sync.localSeq >= (record?.seq ?? 0), settings.projectionWaitMs);
  background.cancel();

  if (closed() || record === null) {
    log.info('ownership lifecycle ended', { ownershipId, state: record?.state ?? 'never_claimed' });
    return record;
  }
  const next: OwnershipWorkflowInput = {
    ownershipId,
    worktree,
    settings,
    carried: { record, durableRecord, recentEvents, liveness, projectionSync: sync, lastHeartbeatMs, lastHeartbeatLoggedMs },
  };
  return continueAsNew<typeof ownershipWorkflow>(next);
}
