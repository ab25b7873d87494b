import { z } from 'zod';
import { AgentWorkerRefSchema, ConversationSchema, IsoTime, OwnerSchema } from './identity';
import { HoldSchema, LandingReceiptSchema, type OwnershipEvent } from './events';
import { isFreeState, OWNERSHIP_STATES } from './states';

/**
 * The ownership record (docs/ownership-record.md), and the pure reducer that
 * derives it from the event log. `project(events)` is the only way a record is built: the
 * workflow, the PostgreSQL projection and rebuild-projection all fold the same events here.
 */

export { OWNERSHIP_STATES, type OwnershipState } from './states';
export const OwnershipStateSchema = z.enum(OWNERSHIP_STATES);

export const LineageEntrySchema = z.strictObject({
  executionSessionId: z.string(),
  runtime: z.string(),
  epoch: z.number().int(),
  via: z.enum(['bind', 'handoff', 'after_release', 'reclaim', 'forced_reclaim']),
  at: IsoTime,
  conversationId: z.string().nullable(),
  /** the handoff this tenure accepted (via handoff): a replayed accept must name the same one */
  handoffId: z.string().optional(),
  /** the owner before this tenure (absent in records folded before it was kept) */
  previousExecutionSessionId: z.string().nullable().optional(),
});
export type LineageEntry = z.infer<typeof LineageEntrySchema>;

export const OwnershipRecordSchema = z.strictObject({
  schemaVersion: z.literal(1),
  ownershipId: z.string(),
  repoRoot: z.string(),
  worktreePath: z.string(),
  branch: z.string(),
  hostId: z.string(),
  lane: z.string().nullable(),
  planRef: z.string().nullable(),
  requestId: z.string().nullable(),
  worker: AgentWorkerRefSchema.nullable(),
  owner: OwnerSchema.nullable(),
  state: OwnershipStateSchema,
  epoch: z.number().int(),
  seq: z.number().int(),
  claimedAt: IsoTime.nullable(),
  lastSeenAt: IsoTime.nullable(),
  handoff: z
    .strictObject({
      handoffId: z.string(),
      toExecutionSessionId: z.string(),
      toWorkerId: z.string().nullable().optional(),
      startedAt: IsoTime,
      expiresAt: IsoTime,
    })
    .nullable(),
  lineage: z.array(LineageEntrySchema),
  latestWip: z
    .strictObject({
      ref: z.string(),
      sha: z.string(),
      at: IsoTime,
      files: z.number().int().nonnegative().optional(),
      bytes: z.number().int().nonnegative().optional(),
    })
    .nullable(),
  /** The last reclaim that could not preserve WIP, and why (absent until one happened). */
  wipNotPreserved: z.strictObject({ at: IsoTime, reason: z.string(), executionSessionId: z.string() }).nullable().optional(),
  submitted: z.strictObject({ at: IsoTime, head: z.string().nullable() }).nullable(),
  landings: z.array(LandingReceiptSchema),
  worktreeRemoved: z.boolean(),
  branchNames: z.array(z.string()),
  /** child sessions holding under the current tenure (absent: none, as in every record folded before holds) */
  holds: z.array(HoldSchema).optional(),
});
export type OwnershipRecord = z.infer<typeof OwnershipRecordSchema>;
export type Conversation = z.infer<typeof ConversationSchema>;

export function emptyRecord(e: Pick<OwnershipEvent, 'ownershipId' | 'repoRoot' | 'worktreePath' | 'branch' | 'hostId'>): OwnershipRecord {
  return {
    schemaVersion: 1,
    ownershipId: e.ownershipId,
    repoRoot: e.repoRoot,
    worktreePath: e.worktreePath,
    branch: e.branch,
    hostId: e.hostId,
    lane: null,
    planRef: null,
    requestId: null,
    worker: null,
    owner: null,
    state: 'active',
    epoch: 0,
    seq: 0,
    claimedAt: null,
    lastSeenAt: null,
    handoff: null,
    lineage: [],
    latestWip: null,
    submitted: null,
    landings: [],
    worktreeRemoved: false,
    branchNames: [e.branch],
  };
}

/** Applies one event. Throws on a sequence gap: a gap means lost history, never something to paper over. */
export function applyEvent(prev: OwnershipRecord | null, e: OwnershipEvent): OwnershipRecord {
  const r: OwnershipRecord = prev ? structuredCloneRecord(prev) : emptyRecord(e);
  if (e.seq !== r.seq + 1) throw new Error(`event sequence gap in ${e.ownershipId}: have ${r.seq}, got ${e.seq}`);
  r.seq = e.seq;
  const seen = () => {
    r.lastSeenAt = e.at;
  };
  switch (e.type) {
    case 'ownership.claimed': {
      const d = e.data;
      takeOwner(r, d.owner, d.epoch, d.via, e.at, d.previousExecutionSessionId);
      if (d.via === 'handoff' && d.handoffId !== null) r.lineage[r.lineage.length - 1]!.handoffId = d.handoffId;
      if (d.lane !== null) r.lane = d.lane;
      if (d.planRef !== null) r.planRef = d.planRef;
      if (d.requestId !== null) r.requestId = d.requestId;
      seen();
      break;
    }
    case 'ownership.conversation_bound':
      if (r.owner && r.owner.executionSessionId === e.data.executionSessionId) {
        r.owner = { ...r.owner, conversation: e.data.conversation };
        const last = r.lineage[r.lineage.length - 1];
        if (last && last.executionSessionId === e.data.executionSessionId) last.conversationId = e.data.conversation.conversationId;
      }
      break;
    case 'ownership.plan_bound':
      r.lane = e.data.lane;
      r.planRef = e.data.planRef;
      r.requestId = e.data.requestId;
      seen();
      break;
    case 'ownership.heartbeat':
      if (r.state === 'stale') r.state = 'active';
      seen();
      break;
    case 'ownership.handoff_started':
      r.state = 'handoff_pending';
      r.handoff = {
        handoffId: e.data.handoffId,
        toExecutionSessionId: e.data.toExecutionSessionId,
        ...(e.data.toWorkerId !== undefined ? { toWorkerId: e.data.toWorkerId } : {}),
        startedAt: e.at,
        expiresAt: e.data.expiresAt,
      };
      seen();
      break;
    case 'ownership.handoff_cancelled':
      r.state = 'active';
      r.handoff = null;
      break;
    case 'ownership.released':
      // A worktree that is gone has nothing left to claim: its release ends the lifecycle.
      r.state = r.worktreeRemoved ? 'closed' : 'released';
      r.handoff = null;
      seen();
      break;
    case 'ownership.stale':
      r.state = 'stale';
      r.handoff = null;
      break;
    case 'ownership.wip_preserved':
      r.latestWip = {
        ref: e.data.ref,
        sha: e.data.sha,
        at: e.at,
        ...(e.data.files !== undefined && e.data.bytes !== undefined ? { files: e.data.files, bytes: e.data.bytes } : {}),
      };
      break;
    case 'ownership.wip_not_preserved':
      r.wipNotPreserved = { at: e.at, reason: e.data.reason, executionSessionId: e.data.executionSessionId };
      break;
    case 'ownership.reclaimed': {
      const d = e.data;
      // Older events named the new owner as its own predecessor when there was none.
      const previous = d.previousOwner?.executionSessionId ?? null;
      takeOwner(r, d.owner, d.epoch, d.forced ? 'forced_reclaim' : 'reclaim', e.at, previous === d.owner.executionSessionId ? null : previous);
      seen();
      break;
    }
    case 'ownership.submitted':
      r.state = 'submitted';
      r.handoff = null;
      r.submitted = { at: e.at, head: e.data.head };
      seen();
      break;
    case 'ownership.landed':
      r.state = r.worktreeRemoved ? 'closed' : 'landed';
      r.handoff = null;
      r.landings.push(e.data.receipt);
      break;
    case 'ownership.worktree_removed':
      r.worktreeRemoved = true;
      // A free worktree that is gone has nothing left to claim; a held one keeps its owner until it lets go.
      if (isFreeState(r.state)) r.state = 'closed';
      break;
    case 'ownership.branch_renamed':
      r.branch = e.data.to;
      if (!r.branchNames.includes(e.data.to)) r.branchNames.push(e.data.to);
      break;
    case 'ownership.hold_granted':
      r.holds = [...(r.holds ?? []).filter((h) => h.holdId !== e.data.hold.holdId), e.data.hold];
      break;
    case 'ownership.hold_ended':
      r.holds = (r.holds ?? []).filter((h) => h.holdId !== e.data.holdId);
      break;
  }
  // Nothing is held under a tenure that has ended.
  if (r.holds !== undefined && r.holds.length > 0 && isFreeState(r.state)) r.holds = [];
  // The worktree identity recorded on the event is authoritative for that moment.
  r.branch = e.type === 'ownership.branch_renamed' ? e.data.to : e.branch;
  return r;
}

export function project(events: readonly OwnershipEvent[]): OwnershipRecord | null {
  let r: OwnershipRecord | null = null;
  for (const e of events) r = applyEvent(r, e);
  return r;
}

/**
 * Every owner change (claim, accepted handoff, reclaim): a new tenure at a new epoch, one lineage
 * entry. The one builder of the lineage: history's links are this fold too (store/lookups.ts).
 */
function takeOwner(r: OwnershipRecord, owner: z.infer<typeof OwnerSchema>, epoch: number, via: LineageEntry['via'], at: string, previous: string | null): void {
  r.owner = owner;
  r.worker = owner.worker;
  r.epoch = epoch;
  // A hold lives under one tenure: a new one ends every hold (the decision recorded why, first).
  if (r.holds !== undefined) r.holds = [];
  r.state = 'active';
  r.handoff = null;
  r.claimedAt = at;
  r.lineage.push({
    executionSessionId: owner.executionSessionId,
    runtime: owner.runtime,
    epoch,
    via,
    at,
    conversationId: owner.conversation?.conversationId ?? null,
    previousExecutionSessionId: previous,
  });
}

function structuredCloneRecord(r: OwnershipRecord): OwnershipRecord {
  // JSON round trip: records are plain JSON by construction, and this works inside the workflow sandbox.
  return JSON.parse(JSON.stringify(r)) as OwnershipRecord;
}

/** Owner summary safe to show a refused caller. */
export function ownerSummary(r: OwnershipRecord) {
  return {
    ownershipId: r.ownershipId,
    state: r.state,
    epoch: r.epoch,
    executionSessionId: r.owner?.executionSessionId ?? null,
    runtime: r.owner?.runtime ?? null,
    workerId: r.worker?.workerId ?? null,
    lane: r.lane,
  };
}
