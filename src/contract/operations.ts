import { z } from 'zod';
import { OwnershipIdSchema, type Principal } from '../domain/identity';
import {
  AcceptedSchema,
  AcceptHandoffBodySchema,
  BindBodySchema,
  CancelHandoffBodySchema,
  ClaimResponseSchema,
  EndHoldBodySchema,
  GrantHoldBodySchema,
  GrantHoldResponseSchema,
  HandoffBodySchema,
  HeartbeatBodySchema,
  HoldHeartbeatBodySchema,
  LandedBodySchema,
  LandingResponseSchema,
  OverrideBodySchema,
  OverrideResponseSchema,
  OwnershipViewSchema,
  PlanBodySchema,
  ReclaimBodySchema,
  ReleaseBodySchema,
  RemovalResponseSchema,
  RenameBranchBodySchema,
  SubmitBodySchema,
  TenureBodySchema,
  TenureSchema,
  WorktreeRemovedBodySchema,
} from './http';
import { OPERATION_PATHS, type OperationName, type OperationPath } from './operation-paths';

export { OPERATION_NAMES, OPERATION_PATHS, urlOf, type Address, type AddressOf, type OperationName } from './operation-paths';

/**
 * The operation table: each message to an ownership (bind and the per-ownership writes) described
 * once, as a value. The HTTP route (src/api/routes/operations.ts), the service's dispatch
 * (src/api/service/index.ts), the MCP tool (src/mcp/tools.ts), the HTTP client's method
 * (src/api/client.ts) and so the CLI's wire call are all made from it; test/unit/operation-table.test.ts
 * holds every surface against it. Lookups, observers, removal and landings by branch are routes of
 * their own (their shapes differ: queries, no ownership address).
 */

/** MCP tool annotations (hints for hosts: whether to ask the user first, whether a retry is safe). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}
export const READ_TOOL: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const writeTool = (o: { destructive: boolean; idempotent: boolean }): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: o.destructive,
  idempotentHint: o.idempotent,
  openWorldHint: false,
});

/** An operation's MCP tool: its name in the contract's spelling (`ownership.bind`) and what a host shows. */
export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
}

/** Who may call an operation (src/auth/policy.ts builds its matrix from these and the table). */
export const ROLES = {
  read: ['executor', 'landing', 'admin', 'reader'],
  executorWrite: ['executor', 'admin'],
  landingWrite: ['landing', 'admin'],
  adminOnly: ['admin'],
} as const satisfies Record<string, readonly Principal['kind'][]>;

export interface OperationSpec<B extends z.ZodObject = z.ZodObject, R extends z.ZodType = z.ZodType> {
  /** the principal kinds the policy lets call it (its name is its policy operation); the workflow re-checks what depends on state */
  roles: readonly Principal['kind'][];
  summary: string;
  description?: string;
  body: B;
  response: R;
  /** 200 for updates (the caller gets the new view), 202 for signals */
  status: 200 | 202;
  /** an answer that is also 202 when this says so (a landing whose receipt is not durable yet) */
  acceptedWhen?(out: z.output<R>): boolean;
  /** bind, accept and reclaim name a new owner: a conversation in their body is refused by name, before validation */
  newOwner?: boolean;
  /**
   * How it reaches the workflow: an update (answered by it), a signal (answered by the log), or
   * null for the two that send it nothing (tenure, override) and so carry no message id.
   */
  message: 'update' | 'signal' | null;
  /** its MCP tool, or null: not offered to agents (why, beside the entry) */
  tool: ToolSpec | null;
}

/** Ties acceptedWhen's argument to the entry's response schema. */
const op = <B extends z.ZodObject, R extends z.ZodType>(s: OperationSpec<B, R>) => s;

/**
 * How an agent is told to hand its tenure secret to git: never on a command line. Every local user
 * reads any process's /proc/<pid>/cmdline, and an agent's shell tool runs each command as
 * `bash -c "<command>"`, so `OVERDECK_TENURE_SECRET=... git commit` or an `export` typed into that
 * command hands the secret to the host. Through a file only the agent's user can read, written with
 * a file tool (never echo), and sourced inside the command: the secret is then in that shell's
 * environment (readable by the same user and root only), never in an argument.
 */
export const SECRET_HANDLING =
  "Never put OVERDECK_TENURE_SECRET on a command line, in a command string or in an echo (every user of the host can read a process's command line): write the three lines of tenure.env as KEY=value to a file only you can read (with your file-writing tool, mode 0600, outside the worktree, e.g. ~/.overdeck/<ownershipId>.env) and start each git command with `set -a; . <that file>; set +a; git ...`, or run your commands under `od-worktree exec --session <id> --ownership <ownershipId> -- <command>`, which fetches the secret into their environment itself";

const FENCE =
  'Pass the executionSessionId and the epoch your bind (or accept, or reclaim) answered; an older epoch is refused with stale_epoch and another session with not_owner: either means you no longer own the worktree, so stop changing it.';

const view = OwnershipViewSchema;

export const OPERATION_TABLE = {
  bind: op({
    roles: ROLES.executorWrite,
    summary: 'Bind a worktree to the calling session (update-with-start; replays return the same ownership)',
    body: BindBodySchema,
    response: ClaimResponseSchema,
    status: 200,
    newOwner: true,
    message: 'update',
    tool: {
      name: 'ownership.bind',
      title: 'Bind a worktree',
      description: `Claim a git worktree for your execution session before changing anything in it. Answers the ownership (ownershipId, epoch, state). Binding again with the same session returns the same ownership, so a retry is safe. Refused with worktree_owned (details.owner says who) when another live session holds it. Do not pass a conversation: the service fills it from your worker. After binding, run git with the variables of tenure.env (OVERDECK_EXECUTION_SESSION_ID, OVERDECK_EPOCH and OVERDECK_TENURE_SECRET), or the guard hooks refuse your changes. ${SECRET_HANDLING}`,
      annotations: writeTool({ destructive: false, idempotent: true }),
    },
  }),
  heartbeat: op({
    roles: ROLES.executorWrite,
    summary: 'Heartbeat of the owner session (signal; coalesced)',
    body: HeartbeatBodySchema,
    response: AcceptedSchema,
    status: 202,
    message: 'signal',
    tool: {
      name: 'ownership.heartbeat',
      title: 'Heartbeat',
      description: `Tell the service your session is alive and still working in the worktree; send one well within your lease (a third of leaseTtlMs). A session whose heartbeats stop is asked about and, once proven dead, may lose the worktree to a reclaim. ${FENCE}`,
      annotations: writeTool({ destructive: false, idempotent: true }),
    },
  }),
  handoff: op({
    roles: ROLES.executorWrite,
    summary: 'Start a two-phase handoff to another session',
    body: HandoffBodySchema,
    response: view,
    status: 200,
    message: 'update',
    tool: {
      name: 'ownership.handoff',
      title: 'Hand off a worktree',
      description: `Offer your worktree to another execution session (toExecutionSessionId) of an agent worker (toWorkerId; default your own). You stay the owner until that session accepts with ownership.accept_handoff; cancel with ownership.cancel_handoff; an offer nobody accepts lapses back to you. Only an active ownership can be handed off (invalid_state otherwise). ${FENCE}`,
      annotations: writeTool({ destructive: false, idempotent: false }),
    },
  }),
  acceptHandoff: op({
    roles: ROLES.executorWrite,
    summary: 'Accept a pending handoff as the named successor',
    body: AcceptHandoffBodySchema,
    response: ClaimResponseSchema,
    status: 200,
    newOwner: true,
    message: 'update',
    tool: {
      name: 'ownership.accept_handoff',
      title: 'Accept a handoff',
      description: `Take over a worktree that was offered to your execution session: pass the handoffId of the pending handoff (ownership.get shows it) and your executionSessionId. Answers the ownership with your new epoch and tenure (run git with tenure.env from now on; ${SECRET_HANDLING}). Refused with handoff_mismatch when the offer names another session or worker, no_pending_handoff when there is none. Accepting again with the same session is safe.`,
      annotations: writeTool({ destructive: false, idempotent: true }),
    },
  }),
  cancelHandoff: op({
    roles: ROLES.executorWrite,
    summary: 'Cancel a pending handoff',
    body: CancelHandoffBodySchema,
    response: view,
    status: 200,
    message: 'update',
    tool: {
      name: 'ownership.cancel_handoff',
      title: 'Cancel a handoff',
      description: `Withdraw a pending handoff of your worktree; you keep it. Refused with no_pending_handoff when nothing is pending. ${FENCE}`,
      annotations: writeTool({ destructive: false, idempotent: true }),
    },
  }),
  release: op({
    roles: ROLES.executorWrite,
    summary: 'Release the worktree',
    body: ReleaseBodySchema,
    response: view,
    status: 200,
    message: 'update',
    tool: {
      name: 'ownership.release',
      title: 'Release a worktree',
      description: `Give the worktree up: you may no longer change it, and any session may bind it next. Releasing again with the same session is safe. ${FENCE}`,
      annotations: writeTool({ destructive: true, idempotent: true }),
    },
  }),
  reclaim: op({
    roles: ROLES.executorWrite,
    summary: 'Reclaim from a dead owner (WIP preserved); force is admin-only with a reason',
    body: ReclaimBodySchema,
    response: ClaimResponseSchema,
    status: 200,
    newOwner: true,
    message: 'update',
    tool: {
      name: 'ownership.reclaim',
      title: 'Reclaim from a dead owner',
      description: `Take over a worktree whose owner is proven dead (state stale) as your execution session. The previous owner's uncommitted work is saved first (latestWip names the ref). Answers the ownership with your new epoch and tenure (run git with tenure.env from now on; ${SECRET_HANDLING}). Refused with owner_alive or liveness_unknown when the owner is not proven dead; only an admin may force it (force: true with a reason). A released worktree is bound with ownership.bind instead.`,
      annotations: writeTool({ destructive: true, idempotent: false }),
    },
  }),
  submit: op({
    roles: ROLES.executorWrite,
    summary: 'Submit the work for landing',
    body: SubmitBodySchema,
    response: view,
    status: 200,
    message: 'update',
    tool: {
      name: 'ownership.submit',
      title: 'Submit for landing',
      description: `Say your work in the worktree is ready to land, optionally naming the head commit (head). The ownership becomes submitted; the landing controller records the landing. Submitting again with the same session is safe. ${FENCE}`,
      annotations: writeTool({ destructive: false, idempotent: true }),
    },
  }),
  // Lane, plan and branch renames are the orchestrator's and the CLI's, not an agent's tools.
  bindPlan: op({
    roles: ROLES.executorWrite,
    summary: 'Bind lane, plan or request',
    body: PlanBodySchema,
    response: view,
    status: 200,
    message: 'update',
    tool: null,
  }),
  renameBranch: op({
    roles: ROLES.executorWrite,
    summary: 'Record a branch rename: the ownership and its history stay',
    body: RenameBranchBodySchema,
    response: view,
    status: 200,
    message: 'update',
    tool: null,
  }),
  // The landing controller's and the host agent's, never an agent's.
  landed: op({
    roles: ROLES.landingWrite,
    summary: 'Landing receipt for this ownership (200 when durable, 202 when only signalled)',
    body: LandedBodySchema,
    response: LandingResponseSchema,
    status: 200,
    acceptedWhen: (out) => out.status === 'accepted',
    message: 'signal',
    tool: null,
  }),
  worktreeRemoved: op({
    roles: ROLES.landingWrite,
    summary: 'The worktree was removed (signal; ends the lifecycle once landed or released)',
    body: WorktreeRemovedBodySchema,
    // 202 as before, whichever the body says: a client that checks for 202 keeps working (wire 1.x).
    response: RemovalResponseSchema,
    status: 202,
    message: 'signal',
    tool: null,
  }),
  // Child holds (docs/ownership-record.md#child-holds): the owner's executor grants; the child (under the same worker) heartbeats and ends; an admin forces an end.
  grantHold: op({
    roles: ROLES.executorWrite,
    summary: 'Grant a child session a hold under the owner’s tenure (answers the hold id and the child’s tenure proof)',
    body: GrantHoldBodySchema,
    response: GrantHoldResponseSchema,
    status: 200,
    message: 'update',
    tool: {
      name: 'ownership.hold.grant',
      title: 'Give a child session a hold',
      description: `As the owner, let a nested agent (childExecutionSessionId) write in your worktree under your tenure: a hold, at most 8 (holds_exhausted), each with its own lease (leaseTtlMs; the child heartbeats it with ownership.hold.heartbeat). Answers holdId and the child's own tenure (hand tenure.env to the child only; ${SECRET_HANDLING}). While a child holds, your release is refused with holds_live naming the children; handing the worktree off ends every hold. ${FENCE}`,
      annotations: writeTool({ destructive: false, idempotent: false }),
    },
  }),
  holdHeartbeat: op({
    roles: ROLES.executorWrite,
    summary: 'Heartbeat of a child session: renews its hold’s own lease (signal)',
    body: HoldHeartbeatBodySchema,
    response: AcceptedSchema,
    status: 202,
    message: 'signal',
    tool: {
      name: 'ownership.hold.heartbeat',
      title: "Renew a child's hold",
      description:
        'As the child of a hold, say you are alive: your executionSessionId and the epoch the hold was granted under. A hold silent past its lease ends (the parent keeps the worktree). Refused with not_found when the hold has ended: stop changing the worktree.',
      annotations: writeTool({ destructive: false, idempotent: true }),
    },
  }),
  endHold: op({
    roles: ROLES.executorWrite,
    summary: 'End a hold: the child, the parent, or an admin with force and a reason',
    body: EndHoldBodySchema,
    response: view,
    status: 200,
    message: 'update',
    tool: {
      name: 'ownership.hold.end',
      title: 'End a hold',
      description:
        'End a child hold: the child itself or its parent (the owner), each naming its own executionSessionId and the epoch; an admin may force it with a reason. The child may no longer change the worktree after.',
      annotations: writeTool({ destructive: true, idempotent: true }),
    },
  }),
  // Not messages to the ownership: nothing is sent to its workflow, so no message id either.
  // tenure: the owner's tenure secret again, to its executor (authorizeForWorker) or an admin, as heartbeat.
  tenure: op({
    roles: ROLES.executorWrite,
    summary: 'The tenure proof again (OVERDECK_TENURE_SECRET), for the session that holds the ownership now',
    description:
      'The same secret bind, accept-handoff or reclaim answered for this tenure: derived, never stored. Another session is `not_owner`; another worker’s executor `worker_mismatch`.',
    body: TenureBodySchema,
    response: TenureSchema,
    status: 200,
    message: null,
    tool: {
      name: 'ownership.tenure',
      title: 'Your tenure secret again',
      description: `The tenure your bind, accept or reclaim answered, again: secret, epoch and env (OVERDECK_EXECUTION_SESSION_ID, OVERDECK_EPOCH, OVERDECK_TENURE_SECRET) to run git with (${SECRET_HANDLING}). Only for the session that owns the worktree now; another is refused with not_owner (you lost it: stop changing it). Asking again answers the same.`,
      // It changes nothing: the secret is derived, not issued.
      annotations: READ_TOOL,
    },
  }),
  // A person's, recorded (admin only): never an agent's tool.
  override: op({
    roles: ROLES.adminOnly,
    summary: 'Record that a person steps into the owned worktree, and hand them the current owner’s tenure proof (admin)',
    description:
      'The override (who, why, when, which epoch) is recorded before the answer and shown in history. An ownership nobody holds is `invalid_state`: its worktree is open.',
    body: OverrideBodySchema,
    response: OverrideResponseSchema,
    status: 200,
    message: null,
    tool: null,
  }),
} satisfies { [K in OperationName]: OperationSpec };

type Table = typeof OPERATION_TABLE;
export type BodyOf<K extends OperationName> = z.output<Table[K]['body']>;
export type OutputOf<K extends OperationName> = z.output<Table[K]['response']>;

/** An entry with its place on the wire (./operation-paths.ts). */
export function operation<K extends OperationName>(name: K): Table[K] & OperationPath & { name: K } {
  return { ...OPERATION_TABLE[name], ...OPERATION_PATHS[name], name };
}

const Addressed = { ownershipId: OwnershipIdSchema.describe('the ownership, as bind (or get) answered it: own_<ULID>') };
const HoldNamed = { ...Addressed, holdId: z.string().min(1).max(200).describe('the hold, as ownership.hold.grant answered it') };

/** A tool's arguments: the body, with the URL's address as `ownershipId` (and `holdId`) beside it. */
export function toolInputOf(name: OperationName): z.ZodObject {
  const { body, address }: { body: z.ZodObject; address: string } = operation(name);
  if (address === 'none') return body;
  return body.extend(address === 'hold' ? HoldNamed : Addressed);
}

/** A tool's arguments split back into the URL's address and the body. */
export function splitToolInput(name: OperationName, input: Record<string, unknown>): { at: { id?: string; holdId?: string }; body: Record<string, unknown> } {
  const { address } = OPERATION_PATHS[name];
  if (address === 'none') return { at: {}, body: input };
  // Validated by toolInputOf's schema first: both are strings when the address names them.
  const { ownershipId, holdId, ...body } = input;
  return { at: { id: String(ownershipId), ...(address === 'hold' ? { holdId: String(holdId) } : {}) }, body };
}
