/**
 * The attribute table (docs/ownership-record.md, "Where each fact lives"): every fact the service keeps has exactly
 * one authoritative home; every other place that holds it is a derived copy, with the path that
 * refreshes it. test/unit/attributes-parity.test.ts enumerates the fields of the record, every
 * event, the git projection (overdeck.config), the lock JSON, the search attributes and the API's
 * live fields from their schemas and fails when one has no row, when a row names a field that no
 * longer exists, or when a fact is given two homes. Adding a field means adding it here: say
 * where it is decided and how each copy follows.
 *
 * Field names: `event` fields are the common envelope (`seq`) or `<type>.<data key>` without the
 * `ownership.` prefix (`claimed.owner`); `record` fields are top-level keys, and `owner.<key>` for
 * the owner; `git` and `lock` fields are the keys of LocalProjectionSchema and LockJsonSchema;
 * `searchAttribute` fields are attribute names; `api` fields are `liveness.<key>`,
 * `projectionSync.<key>`, `view.<key>` and `list.<key>` (the API's record is the record itself).
 * Other surfaces are not enumerated by the test: their `fields` say where, for a reader.
 */

export type Surface =
  /** the ownership event log (PostgreSQL ownership_events, folded by src/domain/projection.ts) */
  | 'event'
  /** the fold of the log: the workflow's record and PostgreSQL's ownerships.record */
  | 'record'
  /** the worktree's config projection, overdeck.config (what the hooks read) */
  | 'git'
  /** the worktree's lock JSON, overdeck.lock.json (docs/git-projection.md; read for no decision) */
  | 'lock'
  | 'searchAttribute'
  /** what the API serves beyond the record (the live workflow's view) */
  | 'api'
  /** the executor binding of an agent worker (PostgreSQL executor_bindings) */
  | 'binding'
  /** the live ownership workflow's own state, carried through continue-as-new */
  | 'workflow'
  /** git and the host agent on the worktree's host */
  | 'host'
  /** the deployment's configuration (src/config.ts ENV, OD_* variables) */
  | 'config'
  /** a definition in the source */
  | 'code';

/** Surfaces whose fields the parity test enumerates from schemas. */
export const ENUMERATED_SURFACES: readonly Surface[] = ['event', 'record', 'git', 'lock', 'searchAttribute', 'api'];

export interface Place {
  surface: Surface;
  fields: readonly string[];
}

export interface Copy extends Place {
  /** how this copy follows its home, and when */
  refresh: string;
}

export interface Attribute {
  fact: string;
  /** the one place that decides it */
  home: Place;
  copies: readonly Copy[];
}

const REDUCER = 'folded from the events by applyEvent (src/domain/projection.ts), in the workflow and in PostgreSQL';
const PROJECTED = 'written from the record by the projection loop (host applyLocalProjection, src/git/record.ts localProjectionOf) once the record is durable';
const LOCKED =
  'derived from overdeck.config by lockFromProjection in the same applyLocalProjection, under the writer lock, right after it; read for no decision';
const PUBLISHED = 'upserted from the record after every change that alters it (src/workflows/publish.ts)';
const STAMPED = 'stamped on every event by emit (src/workflows/durable-log.ts) from the record';

export const ATTRIBUTES: readonly Attribute[] = [
  {
    fact: 'ownership id (one lifecycle of a worktree)',
    home: { surface: 'workflow', fields: ['input.ownershipId (newOwnershipId at the first start, carried through continue-as-new)'] },
    copies: [
      { surface: 'event', fields: ['ownershipId'], refresh: STAMPED },
      { surface: 'record', fields: ['ownershipId'], refresh: REDUCER },
      { surface: 'git', fields: ['ownershipId'], refresh: PROJECTED },
      { surface: 'lock', fields: ['ownership_id'], refresh: LOCKED },
      { surface: 'searchAttribute', fields: ['OwnershipId'], refresh: PUBLISHED },
    ],
  },
  {
    fact: 'worktree identity: canonical path, repository root, host',
    home: { surface: 'host', fields: ['identifyWorktree (src/git/repo.ts), the one derivation, at bind (or inspectWorktree on a foreign host)'] },
    copies: [
      { surface: 'workflow', fields: ['input.worktree'], refresh: 'set once at the first start; a path is one workflow id, never changed' },
      { surface: 'event', fields: ['repoRoot', 'worktreePath', 'hostId'], refresh: STAMPED },
      { surface: 'record', fields: ['repoRoot', 'worktreePath', 'hostId'], refresh: REDUCER },
      { surface: 'searchAttribute', fields: ['OwnershipRepoRoot', 'OwnershipWorktree'], refresh: PUBLISHED },
    ],
  },
  {
    fact: 'branch of the worktree',
    home: { surface: 'event', fields: ['branch', 'branch_renamed.from', 'branch_renamed.to'] },
    copies: [
      { surface: 'record', fields: ['branch', 'branchNames'], refresh: REDUCER },
      { surface: 'searchAttribute', fields: ['OwnershipBranch'], refresh: PUBLISHED },
    ],
  },
  {
    fact: 'position in the log',
    home: { surface: 'event', fields: ['seq'] },
    copies: [
      { surface: 'record', fields: ['seq'], refresh: REDUCER },
      { surface: 'git', fields: ['seq'], refresh: `${PROJECTED}; the compare-and-swap key of every write` },
      {
        surface: 'api',
        fields: ['projectionSync.localSeq', 'projectionSync.durableSeq'],
        refresh: 'set by the workflow when the host agent (localSeq) or PostgreSQL (durableSeq) acknowledges a seq',
      },
    ],
  },
  {
    fact: 'when and by whom an event happened',
    home: { surface: 'event', fields: ['at', 'actor'] },
    copies: [],
  },
  {
    fact: 'the message that decided an event (its update id: the workflow answers a retry of it from the events it carries)',
    home: { surface: 'event', fields: ['messageId'] },
    copies: [],
  },
  {
    fact: 'lifecycle state',
    home: { surface: 'event', fields: ['handoff_cancelled.reason', 'released.reason', 'worktree_removed.reason'] },
    copies: [
      { surface: 'record', fields: ['state', 'worktreeRemoved'], refresh: `${REDUCER}; which states hold the worktree: src/domain/states.ts` },
      { surface: 'git', fields: ['state'], refresh: PROJECTED },
      { surface: 'searchAttribute', fields: ['OwnershipState'], refresh: PUBLISHED },
    ],
  },
  {
    fact: 'which lifecycle states hold, free or end a worktree',
    home: { surface: 'code', fields: ['src/domain/states.ts HELD_STATES, FREE_STATES, ENDED_STATES'] },
    copies: [
      {
        surface: 'code',
        fields: ['hooks/overdeck-guard.sh od_state'],
        refresh: 'generated block; test/unit/guard-states.test.ts fails on drift, OD_WRITE_GUARD_STATES=1 rewrites it',
      },
      {
        surface: 'code',
        fields: ['migrations/1700000000010_one-live-owner.sql ownerships_one_live_owner (held states)'],
        refresh: 'by hand, in a new migration that replaces the index; test/unit/one-live-owner-states.test.ts fails on drift',
      },
    ],
  },
  {
    fact: 'owner of the current tenure (session, runtime, parent, process) and its epoch',
    home: { surface: 'event', fields: ['claimed.owner', 'claimed.epoch', 'reclaimed.owner', 'reclaimed.epoch'] },
    copies: [
      {
        surface: 'record',
        fields: ['owner.executionSessionId', 'owner.runtime', 'owner.parentExecutionSessionId', 'owner.process', 'epoch'],
        refresh: REDUCER,
      },
      { surface: 'git', fields: ['executionSessionId', 'runtime', 'epoch'], refresh: PROJECTED },
      { surface: 'lock', fields: ['execution_session_id', 'epoch'], refresh: LOCKED },
      { surface: 'searchAttribute', fields: ['OwnerSessionId'], refresh: PUBLISHED },
    ],
  },
  {
    fact: 'how each tenure began (lineage)',
    home: {
      surface: 'event',
      fields: [
        'claimed.via',
        'claimed.handoffId',
        'claimed.previousExecutionSessionId',
        'reclaimed.previousOwner',
        'reclaimed.forced',
        'reclaimed.reason',
        'reclaimed.principal',
      ],
    },
    copies: [
      {
        surface: 'record',
        fields: ['lineage', 'claimedAt'],
        refresh: `${REDUCER}; history's lineage links are this same fold (src/store/lookups.ts lineageOf), not a second builder`,
      },
      { surface: 'git', fields: ['claimedAt'], refresh: PROJECTED },
      { surface: 'lock', fields: ['claimed_at'], refresh: LOCKED },
      { surface: 'searchAttribute', fields: ['OwnershipSessions'], refresh: `${PUBLISHED}: the distinct sessions of record.lineage` },
    ],
  },
  {
    fact: 'the tenure a message spoke for (its fence)',
    home: {
      surface: 'event',
      fields: [
        'released.executionSessionId',
        'released.epoch',
        'heartbeat.executionSessionId',
        'heartbeat.epoch',
        'stale.executionSessionId',
        'stale.epoch',
        'submitted.executionSessionId',
        'submitted.epoch',
        'wip_preserved.executionSessionId',
        'wip_not_preserved.executionSessionId',
        'conversation_bound.executionSessionId',
        'handoff_started.fromExecutionSessionId',
      ],
    },
    copies: [],
  },
  {
    fact: 'agent worker of the owner',
    home: { surface: 'event', fields: ['conversation_bound.worker'] },
    copies: [
      { surface: 'record', fields: ['worker', 'owner.worker'], refresh: `${REDUCER} (from the owner of claimed/reclaimed)` },
      { surface: 'git', fields: ['workerId', 'runId'], refresh: PROJECTED },
      { surface: 'searchAttribute', fields: ['OwnerWorkerId'], refresh: PUBLISHED },
    ],
  },
  {
    fact: "owner's conversation (id, URL, title)",
    home: {
      surface: 'binding',
      fields: ['executor_bindings.first_conversation (src/domain/binding.ts applyObservation; a later observation with the same id refreshes the title)'],
    },
    copies: [
      {
        surface: 'event',
        fields: ['conversation_bound.conversation'],
        refresh:
          'read from the binding (store.readExecutorConversation) at claim, accept and reclaim into the new owner (by the service as it sends the message, carried in it as `binding`; by the workflow when a message carries none), and on every conversationBound signal (sent for each observation): a missing conversation is filled, a refreshed title of the same conversation is recorded (decideConversationBound)',
      },
      { surface: 'record', fields: ['owner.conversation'], refresh: REDUCER },
      { surface: 'git', fields: ['conversationId', 'conversationUrl'], refresh: PROJECTED },
      { surface: 'lock', fields: ['conversation_id'], refresh: LOCKED },
      { surface: 'searchAttribute', fields: ['OwnerConversationId'], refresh: PUBLISHED },
    ],
  },
  {
    fact: 'lane, plan and request of the work',
    home: {
      surface: 'event',
      fields: ['claimed.lane', 'claimed.planRef', 'claimed.requestId', 'plan_bound.lane', 'plan_bound.planRef', 'plan_bound.requestId'],
    },
    copies: [
      { surface: 'record', fields: ['lane', 'planRef', 'requestId'], refresh: REDUCER },
      { surface: 'git', fields: ['lane', 'planRef'], refresh: PROJECTED },
    ],
  },
  {
    fact: 'last activity of the owner (shown only through lastActivityAt, src/domain/activity.ts)',
    home: {
      surface: 'workflow',
      fields: [
        'liveness.lastHeartbeatAt: every accepted heartbeat signal, every owner change, and the heartbeat the API recorded in ownership_heartbeats (src/store/heartbeats.ts), read when the lease runs out',
      ],
    },
    copies: [
      {
        surface: 'api',
        fields: ['liveness.lastHeartbeatAt'],
        refresh: 'the workflow view, read live (between lease checks it may be up to one lease older than ownership_heartbeats)',
      },
      {
        surface: 'record',
        fields: ['lastSeenAt'],
        refresh: `${REDUCER} from the owner's events; heartbeats reach it at most once per heartbeatLogIntervalMs, so readers take the later of it and the live value (lastActivityAt)`,
      },
      { surface: 'git', fields: ['lastSeenAt'], refresh: PROJECTED },
      { surface: 'lock', fields: ['last_seen_at'], refresh: LOCKED },
    ],
  },
  {
    fact: 'liveness of the owner (verdict of the liveness authority)',
    home: { surface: 'host', fields: ['checkSessionLiveness: the liveness authority (src/activities/liveness.ts)'] },
    copies: [
      {
        surface: 'api',
        fields: ['liveness.status', 'liveness.verdict', 'liveness.checkedAt'],
        refresh: 'set by the workflow from heartbeats and from each verdict on the tenure it asked about (src/workflows/liveness.ts)',
      },
      {
        surface: 'event',
        fields: ['stale.verdict', 'stale.detail', 'heartbeat.transition'],
        refresh: 'a dead verdict on an active tenure (decideStale); a heartbeat that revives one (decideHeartbeat)',
      },
    ],
  },
  {
    fact: "the owner's heartbeat lease",
    home: { surface: 'workflow', fields: ['liveness.leaseTtlMs: the claim, accept or reclaim input leaseTtlMs, else settings.leaseTtlMs, for the tenure'] },
    copies: [{ surface: 'api', fields: ['liveness.leaseTtlMs'], refresh: 'the workflow view, read live' }],
  },
  {
    fact: 'pending handoff',
    home: {
      surface: 'event',
      fields: [
        'handoff_started.handoffId',
        'handoff_started.toExecutionSessionId',
        'handoff_started.toWorkerId',
        'handoff_started.reason',
        'handoff_started.expiresAt',
        'handoff_cancelled.handoffId',
      ],
    },
    copies: [{ surface: 'record', fields: ['handoff'], refresh: REDUCER }],
  },
  {
    fact: 'preserved work in progress',
    home: {
      surface: 'event',
      fields: ['wip_preserved.ref', 'wip_preserved.sha', 'wip_preserved.files', 'wip_preserved.bytes', 'wip_not_preserved.reason', 'wip_not_preserved.detail'],
    },
    copies: [{ surface: 'record', fields: ['latestWip', 'wipNotPreserved'], refresh: REDUCER }],
  },
  {
    fact: 'what a lossless removal kept (its receipt: head, how commits were found landed, snapshots, the branch)',
    home: { surface: 'event', fields: ['worktree_removed.receipt'] },
    copies: [],
  },
  {
    fact: "a removal an admin recorded without the host's git agreeing",
    home: { surface: 'event', fields: ['worktree_removed.forced'] },
    copies: [],
  },
  {
    fact: "child holds under the owner's tenure",
    home: {
      surface: 'event',
      fields: ['hold_granted.hold', 'hold_ended.holdId', 'hold_ended.executionSessionId', 'hold_ended.reason', 'hold_ended.detail'],
    },
    copies: [{ surface: 'record', fields: ['holds'], refresh: REDUCER }],
  },
  {
    fact: 'submission for landing',
    home: { surface: 'event', fields: ['submitted.head'] },
    copies: [{ surface: 'record', fields: ['submitted'], refresh: REDUCER }],
  },
  {
    fact: 'landing receipts (each names the owner and conversation at landing time, by design: never refreshed)',
    home: { surface: 'event', fields: ['landed.receipt'] },
    copies: [
      { surface: 'record', fields: ['landings'], refresh: REDUCER },
      { surface: 'searchAttribute', fields: ['LandedHead'], refresh: `${PUBLISHED} (the last receipt)` },
    ],
  },
  {
    fact: 'format version of the record',
    home: { surface: 'record', fields: ['schemaVersion'] },
    copies: [],
  },
  {
    fact: 'format version of the lock JSON',
    home: { surface: 'lock', fields: ['schema_version'] },
    copies: [],
  },
  {
    fact: 'offline (provisional) claim not yet reconciled',
    home: { surface: 'git', fields: ['provisional', 'idempotencyKey'] },
    copies: [
      {
        surface: 'host',
        fields: ['overdeck.provisional.json'],
        refresh: 'stashed when a write replaces an unreconciled provisional claim; read and cleared by od-worktree reconcile',
      },
    ],
  },
  {
    fact: "the tenure proof (hash of the owner's tenure secret)",
    home: {
      surface: 'code',
      fields: ['src/keys/tenure.ts: derived from the service key and (ownershipId, epoch, owner session); the secret itself is stored nowhere'],
    },
    copies: [
      {
        surface: 'git',
        fields: ['tenureHash'],
        refresh: `${PROJECTED}, from the host agent's service key; od-worktree reconcile writes it when it can read the key and otherwise keeps it only for the same tenure`,
      },
      {
        surface: 'code',
        fields: ['bind, accept-handoff, reclaim answers `tenure`; POST /v1/ownerships/{id}/tenure; POST /v1/ownerships/{id}/override'],
        refresh: "derived by the API at each answer, from the answer's record (or PostgreSQL's row)",
      },
    ],
  },
  {
    fact: "a child hold's tenure proof (hash of the child's hold secret)",
    home: {
      surface: 'code',
      fields: ['src/keys/tenure.ts holdTenureSecret: derived from the service key and (ownershipId, parent epoch, holdId, child session); stored nowhere'],
    },
    copies: [
      {
        surface: 'git',
        fields: ['holds'],
        refresh: `${PROJECTED}: each live hold of the record's epoch (its id and child session, copies of the record's holds) with its words, carried by the control plane's log write (src/host/carried-tenure.ts) or from the host agent's key; a hold whose words the writer lacks is written without standing; the hold's end or the parent's change of epoch drops it at the next projection`,
      },
      {
        surface: 'code',
        fields: ['POST /v1/ownerships/{id}/holds answers the child `tenure`'],
        refresh: "derived by the API at the grant's answer, from the answer's hold",
      },
    ],
  },
  {
    fact: 'recorded overrides (a person stepped into an owned worktree)',
    home: { surface: 'code', fields: ['PostgreSQL overrides (src/store/overrides.ts), written by POST /v1/ownerships/{id}/override before it answers'] },
    copies: [{ surface: 'code', fields: ['GET /v1/history ownerships[].overrides, od-worktree history'], refresh: 'read at each lookup' }],
  },
  {
    fact: 'read-only observers of a worktree (sessions registered as looking, never owners)',
    home: { surface: 'code', fields: ['PostgreSQL worktree_observers (src/store/observers.ts), a lease per session written by POST /v1/worktrees/observers'] },
    copies: [
      {
        surface: 'api',
        fields: ['list.observers'],
        refresh: 'read at each GET /v1/ownership/live (who), live leases only (expires_at > now()); list items leave it out',
      },
    ],
  },
  {
    fact: "whether the worktree's projection enforces the record",
    home: { surface: 'workflow', fields: ['projectionSync, set from the host agent answers'] },
    copies: [
      {
        surface: 'api',
        fields: ['projectionSync.hostId', 'projectionSync.error', 'view.projection'],
        refresh: 'the workflow view, read live; projection is derived from localSeq, error and the record seq',
      },
      {
        surface: 'api',
        fields: ['view.enforcement', 'list.enforcement'],
        refresh:
          "view.projection with the host agent's presence as the API sees it now (its beacon in worker_beacons, else its queue's pollers; src/api/service/host-presence.ts, cached 1 s)",
      },
    ],
  },
  {
    fact: "the branch's head and ahead/behind",
    home: { surface: 'host', fields: ['describeBranch (src/git/status.ts), reported with every projection write'] },
    copies: [
      {
        surface: 'api',
        fields: ['projectionSync.branch', 'list.branchStatus'],
        refresh:
          "the newer of the workflow's last projection answer and worktree_heads, which the journal shipper writes after each journaled ref move (src/store/worktree-heads.ts; observability only)",
      },
    ],
  },
  {
    fact: 'search attribute names',
    home: { surface: 'code', fields: ['src/domain/search-attributes.ts SEARCH_ATTRIBUTE_NAMES'] },
    copies: [
      { surface: 'code', fields: ['src/config.ts SEARCH_ATTRIBUTES'], refresh: 'derived at load' },
      { surface: 'code', fields: ['deploy/ setup service registrations'], refresh: 'by hand; test/unit/compose.test.ts fails on drift' },
    ],
  },
  {
    fact: 'ownership settings (lease, heartbeat log interval, handoff timeout, history and update caps, projection wait)',
    home: { surface: 'config', fields: ['src/config.ts SETTING_ENV rows (OD_*); the rest are code defaults (src/domain/settings.ts SETTING_SCOPE)'] },
    copies: [
      {
        surface: 'workflow',
        fields: ['input.settings'],
        refresh:
          "given by the starter at the first start (the API's client: ownershipSettingsOf); each continue-as-new takes the workflow worker's configuration again (store.readSettings, nextRunSettings)",
      },
    ],
  },
  {
    fact: 'who made each commit: session, epoch, ownership, worker and conversation at that moment (docs/git-projection.md#the-journal)',
    home: { surface: 'host', fields: ['<private git dir>/overdeck.journal kind=commit lines, appended by the reference-transaction hook (committed phase)'] },
    copies: [
      {
        surface: 'code',
        fields: [
          "PostgreSQL commit_reports and the commit_authorship view (src/provenance/attributions.ts shipJournal; a child's commit under a hold: via hold, hold_id, parent_execution_session_id)",
        ],
        refresh:
          'shipped by the host agent after each projection write and every 5 s, from overdeck.journal.shipped; a line is a claim, judged against the tenure the ownership log says held the shipped worktree (src/domain/attribution.ts); a commit is attributed only when one worktree reports it consistently (docs/git-projection.md#whom-a-commit-is-attributed-to)',
      },
      {
        surface: 'code',
        fields: ['provenance authors[] (src/provenance/provenance.ts, GET /v1/provenance)'],
        refresh: 'read from commit_authorship and the ownership log at each lookup; a commit not attributed reads unknown, with its status and reports',
      },
    ],
  },
  {
    fact: 'refused git moves and refused wrapper commands (attempts)',
    home: {
      surface: 'host',
      fields: ['<private git dir>/overdeck.journal kind=ref_refused (reference-transaction, prepared) and kind=wrapper_refused (agent git wrapper) lines'],
    },
    copies: [
      { surface: 'code', fields: ['PostgreSQL git_refusals'], refresh: 'shipped with the commit lines, idempotent on (host, git dir, offset)' },
      { surface: 'code', fields: ['GET /v1/history ownerships[].attempts, od-worktree history'], refresh: 'read at each lookup' },
    ],
  },
  {
    fact: 'the pre-land commits a landing brought, in order, with their patch-ids',
    home: { surface: 'host', fields: ["git rev-list of the receipt's source range (src/provenance/landing-commits.ts landedCommitsOf)"] },
    copies: [
      {
        surface: 'code',
        fields: ['PostgreSQL landing_commits'],
        refresh:
          'written once per receipt: by the host agent after the landed projection write, or by provenance at its first lookup of the receipt; by landings scan for an inferred one',
      },
    ],
  },
  {
    fact: 'landings without a receipt: the inferred receipt and its method, or why none',
    home: { surface: 'host', fields: ['od-worktree landings scan / POST /v1/landings/scan / the periodic job (src/landings/scan.ts)'] },
    copies: [
      { surface: 'code', fields: ['PostgreSQL inferred_landings'], refresh: 'appended once per target commit; a receipt sent later wins over it' },
      { surface: 'code', fields: ['provenance receiptKind, inferredMethod'], refresh: 'read at each lookup' },
    ],
  },
  {
    fact: 'periodic landings scan interval',
    home: { surface: 'config', fields: ['src/config.ts OD_LANDINGS_SCAN_INTERVAL_MS'] },
    copies: [],
  },
];
