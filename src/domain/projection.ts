import { z } from 'zod';
import { AgentWorkerRefSchema, ConversationSchema, IsoTime, OwnerSchema } from './identity';
import { LandingReceiptSchema, type OwnershipEvent } from './events';

/**
 * The current projection of spec §7 (plus epoch, seq and lineage), and the pure reducer that
 * derives it from the event log. `project(events)` is the only way a record is built: the
 * workflow, the PostgreSQL projection and rebuild-projection all fold the same events here.
 */

export const OWNERSHIP_STATES = ['active', 'handoff_pending', 'stale', 'released', 'submitted', 'landed', 'closed'] as const;
export const OwnershipStateSchema = z.enum(OWNERSHIP_STATES);
export type OwnershipState = z.infer<typeof OwnershipStateSchema>;

export const LineageEntrySchema = z.strictObject({
  executionSessionId: z.string(),
  runtime: z.string(),
  epoch: z.number().int(),
  via: z.enum(['bind', 'handoff', 'after_release', 'reclaim', 'forced_reclaim']),
  at: IsoTime,
  conversationId: z.string().nullable(),
});

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
    .strictObject({ handoffId: z.string(), toExecutionSessionId: z.string(), startedAt: IsoTime, expiresAt: IsoTime })
    .nullable(),
  lineage: z.array(LineageEntrySchema),
  latestWip: z.strictObject({ ref: z.string(), sha: z.string(), at: IsoTime }).nullable(),
  submitted: z.strictObject({ at: IsoTime, head: z.string().nullable() }).nullable(),
  landings: z.array(LandingReceiptSchema),
  worktreeRemoved: z.boolean(),
  branchNames: z.array(z.string()),
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
      takeOwner(r, d.owner, d.epoch, d.via, e.at);
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
      r.state = 'released';
      r.handoff = null;
      seen();
      break;
    case 'ownership.stale':
      r.state = 'stale';
      r.handoff = null;
      break;
    case 'ownership.wip_preserved':
      r.latestWip = { ref: e.data.ref, sha: e.data.sha, at: e.at };
      break;
    case 'ownership.reclaimed': {
      const d = e.data;
      takeOwner(r, d.owner, d.epoch, d.forced ? 'forced_reclaim' : 'reclaim', e.at);
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
      if (r.state === 'landed' || r.state === 'released') r.state = 'closed';
      break;
    case 'ownership.branch_renamed':
      r.branch = e.data.to;
      if (!r.branchNames.includes(e.data.to)) r.branchNames.push(e.data.to);
      break;
  }
  // The worktree identity recorded on the event is authoritative for that moment.
  r.branch = e.type === 'ownership.branch_renamed' ? e.data.to : e.branch;
  return r;
}

export function project(events: readonly OwnershipEvent[]): OwnershipRecord | null {
  let r: OwnershipRecord | null = null;
  for (const e of events) r = applyEvent(r, e);
  return r;
}

/** Every owner change (claim, accepted handoff, reclaim): a new tenure at a new epoch, one lineage entry. */
function takeOwner(r: OwnershipRecord, owner: z.infer<typeof OwnerSchema>, epoch: number, via: z.infer<typeof LineageEntrySchema>['via'], at: string): void {
  r.owner = owner;
  r.worker = owner.worker;
  r.epoch = epoch;
  r.state = 'active';
  r.handoff = null;
  r.claimedAt = at;
  r.lineage.push(lineage(owner, epoch, via, at));
}

function lineage(owner: z.infer<typeof OwnerSchema>, epoch: number, via: z.infer<typeof LineageEntrySchema>['via'], at: string) {
  return {
    executionSessionId: owner.executionSessionId,
    runtime: owner.runtime,
    epoch,
    via,
    at,
    conversationId: owner.conversation?.conversationId ?? null,
  };
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
