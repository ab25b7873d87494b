/**
 * `worktree-ownership/schemas`: the wire contract as zod schemas (which are also the TypeScript
 * types): HTTP request bodies and queries, responses, the error body and each reason code's HTTP
 * status, ownership events, reason codes, the CLI's --json output. Loads zod and nothing of Temporal, PostgreSQL or fastify. The list is explicit:
 * what is named here is the contract that WIRE_VERSION versions (docs/integrating.md#versioning-of-the-wire-schemas).
 */
export { PACKAGE_VERSION, WIRE_MAJOR, WIRE_VERSION, VERSION_INFO, type VersionInfo } from '../version';

// --- requests (HTTP bodies and queries) ---------------------------------------------------------
export {
  AcceptHandoffBodySchema,
  BindBodySchema,
  CancelHandoffBodySchema,
  GetQuerySchema,
  HandoffBodySchema,
  HeartbeatBodySchema,
  HistoryQuerySchema,
  LandedBodySchema,
  LandingBodySchema,
  ListQuerySchema,
  OverrideBodySchema,
  OwnershipParamsSchema,
  PlanBodySchema,
  ProvenanceParamsSchema,
  ProvenanceQuerySchema,
  ReclaimBodySchema,
  ReleaseBodySchema,
  RenameBranchBodySchema,
  SubmitBodySchema,
  TenureBodySchema,
  WorktreeRemovedBodySchema,
  type AcceptHandoffBody,
  type BindBody,
  type CancelHandoffBody,
  type GetQuery,
  type HandoffBody,
  type HeartbeatBody,
  type HistoryQuery,
  type LandedBody,
  type LandingBody,
  type ListQuery,
  type OverrideBody,
  type PlanBody,
  type ReclaimBody,
  type ReleaseBody,
  type RenameBranchBody,
  type SubmitBody,
  type TenureBody,
  type WorktreeRemovedBody,
} from '../contract/http';
export { ReconciliationBodySchema, ProvisionalSummarySchema, LOGGED_RECONCILE_KINDS, type ReconciliationBody } from '../contract/reconcile';
export { ObservationSchema, type Observation } from '../domain/binding';

// --- responses ----------------------------------------------------------------------------------
export {
  AcceptedSchema,
  BranchStatusWireSchema,
  ClaimResponseSchema,
  ConversationReportResponseSchema,
  EnforcementSchema,
  HistoryResponseSchema,
  LandingResponseSchema,
  ListItemSchema,
  ListResponseSchema,
  LivenessSchema,
  OverrideResponseSchema,
  OwnershipViewSchema,
  ProjectionSyncSchema,
  TenureSchema,
  WireConversationSchema,
  WireEventSchema,
  WireReceiptSchema,
  WireRecordSchema,
  type BranchStatusWire,
  type ClaimResponse,
  type ConversationReportResponse,
  type Enforcement,
  type HistoryResponse,
  type LandingResponse,
  type ListResponse,
  type Liveness,
  type OverrideResponse,
  type OwnershipViewOut,
  type TenureOut,
  type WireRecord,
} from '../contract/http';
export { CallerSchema, ReconciliationRecordedSchema, type Caller } from '../contract/reconcile';
export { ProvenanceSchema, type Provenance } from '../contract/provenance';
export {
  HEALTH_PROBLEM_CODES,
  HealthHostSchema,
  HealthProblemSchema,
  HealthReportSchema,
  HealthVersionSchema,
  type HealthProblem,
  type HealthReport,
} from '../contract/health';
// The error body of every route and the HTTP status of each reason code, as the service answers them.
export { ErrorBodySchema, REASON_HTTP_STATUS, type ApiErrorCode, type ErrorBody } from '../contract/errors';

// --- ownership records and events ---------------------------------------------------------------
export {
  OWNERSHIP_STATES,
  OwnershipRecordSchema,
  OwnershipStateSchema,
  LineageEntrySchema,
  type OwnershipRecord,
  type OwnershipState,
} from '../domain/projection';
export {
  EVENT_TYPES,
  EventBaseSchema,
  EventDataSchemas,
  LandingReceiptSchema,
  OwnershipEventSchema,
  parseEvent,
  type EventOf,
  type EventType,
  type LandingReceipt,
  type OwnershipEvent,
} from '../domain/events';
export {
  AgentWorkerRefSchema,
  BranchName,
  ConversationSchema,
  FreeText,
  IdString,
  IsoTime,
  OwnerSchema,
  OwnershipIdSchema,
  PathString,
  PrincipalSchema,
  ProcessIdentitySchema,
  WorktreeRefSchema,
  type AgentWorkerRef,
  type Conversation,
  type Owner,
  type Principal,
  type ProcessIdentity,
  type WorktreeRef,
} from '../domain/identity';

// --- Temporal-level message inputs (OwnershipClient) --------------------------------------------
export {
  AcceptHandoffInputSchema,
  BindPlanInputSchema,
  CancelHandoffInputSchema,
  ClaimInputSchema,
  HandoffInputSchema,
  HeartbeatInputSchema,
  LandedInputSchema,
  ReclaimInputSchema,
  ReleaseInputSchema,
  RenameBranchInputSchema,
  SubmitInputSchema,
  WorktreeRemovedInputSchema,
  type AcceptHandoffInput,
  type BindPlanInput,
  type CancelHandoffInput,
  type ClaimInput,
  type HandoffInput,
  type HeartbeatInput,
  type LandedInput,
  type ReclaimInput,
  type ReleaseInput,
  type RenameBranchInput,
  type SubmitInput,
  type WorktreeRemovedInput,
} from '../domain/commands';

// --- read-only observers of a worktree ----------------------------------------------------------
export {
  LeaveObserveBodySchema,
  LeaveObserveResponseSchema,
  ObserveBodySchema,
  ObserveResponseSchema,
  ObserverViewSchema,
  type LeaveObserveBody,
  type LeaveObserveResponse,
  type ObserveBody,
  type ObserveResponse,
  type ObserverView,
} from '../contract/observers';

// --- reason codes -------------------------------------------------------------------------------
export { REASONS, isRefusal, type ReasonCode, type Refusal } from '../domain/reasons';

// --- od-worktree --json output ------------------------------------------------------------------
export {
  ClaimOutputSchema,
  CliErrorSchema,
  HeartbeatOutputSchema,
  HistoryOutputSchema,
  LeaveObserveOutputSchema,
  ListOutputSchema,
  ObserveOutputSchema,
  OverrideOutputSchema,
  OwnershipOutputSchema,
  ProvenanceOutputSchema,
  WhoOutputSchema,
  type ClaimOutput,
  type CliError,
  type HeartbeatOutput,
  type HistoryOutput,
  type LeaveObserveOutput,
  type ListOutput,
  type ObserveOutput,
  type OverrideOutput,
  type OwnershipOutput,
  type ProvenanceOutput,
  type WhoOutput,
} from '../contract/cli-output';
export { GcOutputSchema, GcRankRowSchema, GcRankedOutputSchema, type GcOutput, type GcRankRow, type GcRankedOutput } from '../contract/removal';
