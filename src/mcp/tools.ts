import { z } from 'zod';
import { OwnershipError } from '../client/errors';
import { parseInput } from '../api/errors';
import { OwnershipIdSchema, PathString } from '../domain/identity';
import {
  AcceptedSchema,
  AcceptHandoffBodySchema,
  BindBodySchema,
  CancelHandoffBodySchema,
  ClaimResponseSchema,
  EndHoldBodySchema,
  GrantHoldBodySchema,
  GrantHoldResponseSchema,
  HoldHeartbeatBodySchema,
  GetQuerySchema,
  HandoffBodySchema,
  HeartbeatBodySchema,
  HistoryQuerySchema,
  HistoryResponseSchema,
  ListQuerySchema,
  ListResponseSchema,
  namesConversation,
  OwnershipViewSchema,
  ReclaimBodySchema,
  ReleaseBodySchema,
  SubmitBodySchema,
  TenureBodySchema,
  TenureSchema,
  WireRecordSchema,
  type AcceptHandoffBody,
  type BindBody,
  type CancelHandoffBody,
  type EndHoldBody,
  type GrantHoldBody,
  type HoldHeartbeatBody,
  type GetQuery,
  type HandoffBody,
  type HeartbeatBody,
  type HistoryQuery,
  type ListQuery,
  type ReclaimBody,
  type ReleaseBody,
  type SubmitBody,
  type TenureBody,
} from '../contract/http';
import { ProvenanceSchema } from '../contract/provenance';
import { RemoveWorktreeBodySchema, RemoveWorktreeResponseSchema, type RemoveWorktreeBody } from '../contract/removal';
import { LeaveObserveResponseSchema, ObserveBodySchema, ObserveResponseSchema, type LeaveObserveBody, type ObserveBody } from '../contract/observers';

/**
 * What the MCP tools run on: the service itself for a given principal (HTTP mount, stdio with
 * direct config) or the HTTP API (stdio with OD_API_URL + OD_TOKEN). Either way the same handlers
 * decide, so the tools follow exactly the HTTP API's rules and reason codes.
 */
export interface ToolBackend {
  bind(input: BindBody): Promise<object>;
  get(input: GetQuery): Promise<object>;
  list(input: ListQuery): Promise<object>;
  history(input: HistoryQuery): Promise<object>;
  provenance(commit: string, repo: string): Promise<object>;
  heartbeat(ownershipId: string, input: HeartbeatBody): Promise<object>;
  release(ownershipId: string, input: ReleaseBody): Promise<object>;
  handoff(ownershipId: string, input: HandoffBody): Promise<object>;
  acceptHandoff(ownershipId: string, input: AcceptHandoffBody): Promise<object>;
  cancelHandoff(ownershipId: string, input: CancelHandoffBody): Promise<object>;
  submit(ownershipId: string, input: SubmitBody): Promise<object>;
  reclaim(ownershipId: string, input: ReclaimBody): Promise<object>;
  tenure(ownershipId: string, input: TenureBody): Promise<object>;
  grantHold(ownershipId: string, input: GrantHoldBody): Promise<object>;
  holdHeartbeat(ownershipId: string, holdId: string, input: HoldHeartbeatBody): Promise<object>;
  endHold(ownershipId: string, holdId: string, input: EndHoldBody): Promise<object>;
  observe(input: ObserveBody): Promise<object>;
  leaveObserve(input: LeaveObserveBody): Promise<object>;
  removeWorktree(input: RemoveWorktreeBody): Promise<object>;
}

const Addressed = { ownershipId: OwnershipIdSchema.describe('the ownership, as bind (or get) answered it: own_<ULID>') };
export const HeartbeatToolSchema = HeartbeatBodySchema.extend(Addressed);
export const ReleaseToolSchema = ReleaseBodySchema.extend(Addressed);
export const HandoffToolSchema = HandoffBodySchema.extend(Addressed);
export const AcceptHandoffToolSchema = AcceptHandoffBodySchema.extend(Addressed);
export const CancelHandoffToolSchema = CancelHandoffBodySchema.extend(Addressed);
export const SubmitToolSchema = SubmitBodySchema.extend(Addressed);
export const ReclaimToolSchema = ReclaimBodySchema.extend(Addressed);
export const GrantHoldToolSchema = GrantHoldBodySchema.extend(Addressed);
const HoldNamed = { ...Addressed, holdId: z.string().min(1).max(200).describe('the hold, as ownership.hold.grant answered it') };
export const HoldHeartbeatToolSchema = HoldHeartbeatBodySchema.extend(HoldNamed);
export const EndHoldToolSchema = EndHoldBodySchema.extend(HoldNamed);
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

export const TenureToolSchema = TenureBodySchema.extend(Addressed);
export const ObserveToolSchema = ObserveBodySchema.extend({
  leave: z.boolean().optional().describe('end the registration now (runtime and ttlMs are then not used)'),
});
export const ProvenanceToolSchema = z.strictObject({
  commit: z
    .string()
    .regex(/^[0-9a-fA-F]{7,64}$/, 'a commit id: 7 to 64 hex digits')
    .describe('a commit on the landed branch (full or abbreviated)'),
  repo: PathString.describe('the repository the commit is in, as a path on the service host'),
});

/** MCP tool annotations (hints for hosts: whether to ask the user first, whether a retry is safe). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const write = (o: { destructive: boolean; idempotent: boolean }): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: o.destructive,
  idempotentHint: o.idempotent,
  openWorldHint: false,
});

export interface ToolDef {
  /** the contract's name (`ownership.bind`); hostSafeName() spells it for hosts that refuse dots */
  name: string;
  title: string;
  description: string;
  schema: z.ZodType;
  output: z.ZodType;
  annotations: ToolAnnotations;
  /** validates `raw` with `schema` (refusing like the HTTP API), runs the tool, and shapes its answer with `output` */
  call(backend: ToolBackend, raw: unknown): Promise<object>;
}

interface Spec<S extends z.ZodType> {
  name: string;
  title: string;
  description: string;
  schema: S;
  output: z.ZodType;
  annotations: ToolAnnotations;
  /** accept and reclaim name a new owner: a conversation in their arguments is refused by name */
  newOwner?: boolean;
  run: (b: ToolBackend, input: z.output<S>) => Promise<object>;
}

function tool<S extends z.ZodType>(s: Spec<S>): ToolDef {
  return {
    name: s.name,
    title: s.title,
    description: s.description,
    schema: s.schema,
    output: s.output,
    annotations: s.annotations,
    async call(backend, raw) {
      if (s.newOwner && namesConversation(raw)) throw new OwnershipError('conversation_forbidden');
      const out = await s.run(backend, parseInput(s.schema, raw ?? {}));
      // The same shape the HTTP API serialises, so the structured answer matches outputSchema.
      return s.output.parse(out) as object;
    },
  };
}

const FENCE =
  'Pass the executionSessionId and the epoch your bind (or accept, or reclaim) answered; an older epoch is refused with stale_epoch and another session with not_owner: either means you no longer own the worktree, so stop changing it.';

export const TOOLS: readonly ToolDef[] = [
  tool({
    name: 'ownership.bind',
    title: 'Bind a worktree',
    description: `Claim a git worktree for your execution session before changing anything in it. Answers the ownership (ownershipId, epoch, state). Binding again with the same session returns the same ownership, so a retry is safe. Refused with worktree_owned (details.owner says who) when another live session holds it. Do not pass a conversation: the service fills it from your worker. After binding, run git with the variables of tenure.env (OVERDECK_EXECUTION_SESSION_ID, OVERDECK_EPOCH and OVERDECK_TENURE_SECRET), or the guard hooks refuse your changes. ${SECRET_HANDLING}`,
    schema: BindBodySchema,
    output: ClaimResponseSchema,
    annotations: write({ destructive: false, idempotent: true }),
    newOwner: true,
    run: (b, input) => b.bind(input),
  }),
  tool({
    name: 'ownership.get',
    title: 'Who owns a worktree',
    description:
      'The current ownership of one worktree path, branch (optionally within repoRoot) or ownershipId: owner session, runtime, conversation, state, epoch, lane, plan, lineage. Answers not_found when nothing was ever recorded for it. Also works after the worktree or the branch is gone.',
    schema: GetQuerySchema,
    output: WireRecordSchema,
    annotations: READ,
    run: (b, input) => b.get(input),
  }),
  tool({
    name: 'ownership.list',
    title: 'List ownerships',
    description:
      'Ownerships, most recent change first, optionally only of one repoRoot and of some states (active, handoff_pending, stale, released, submitted, landed, closed). liveness: true also asks each live one whether its owner is live, silent or stale. Pass nextCursor back as cursor for the next page.',
    schema: ListQuerySchema,
    output: ListResponseSchema,
    annotations: READ,
    run: (b, input) => b.list(input),
  }),
  tool({
    name: 'ownership.history',
    title: 'Ownership history',
    description:
      'Everything recorded about the ownerships of a worktree path, a branch (any name it ever had), a landed commit or an ownershipId: each record, its events in order and its chain of owners. Works after the worktree, the branch and the workflow are gone.',
    schema: HistoryQuerySchema,
    output: HistoryResponseSchema,
    annotations: READ,
    run: (b, input) => b.history(input),
  }),
  tool({
    name: 'ownership.provenance',
    title: 'Provenance of a landed commit',
    description:
      'Which ownership landed a commit: landed branch and head, source branch and worktree, the execution session, the agent worker and the conversation. Answers not_found when no landing receipt accounts for the commit.',
    schema: ProvenanceToolSchema,
    output: ProvenanceSchema,
    annotations: READ,
    run: (b, input) => b.provenance(input.commit, input.repo),
  }),
  tool({
    name: 'ownership.heartbeat',
    title: 'Heartbeat',
    description: `Tell the service your session is alive and still working in the worktree; send one well within your lease (a third of leaseTtlMs). A session whose heartbeats stop is asked about and, once proven dead, may lose the worktree to a reclaim. ${FENCE}`,
    schema: HeartbeatToolSchema,
    output: AcceptedSchema,
    annotations: write({ destructive: false, idempotent: true }),
    run: (b, { ownershipId, ...body }) => b.heartbeat(ownershipId, body),
  }),
  tool({
    name: 'ownership.handoff',
    title: 'Hand off a worktree',
    description: `Offer your worktree to another execution session (toExecutionSessionId) of an agent worker (toWorkerId; default your own). You stay the owner until that session accepts with ownership.accept_handoff; cancel with ownership.cancel_handoff; an offer nobody accepts lapses back to you. Only an active ownership can be handed off (invalid_state otherwise). ${FENCE}`,
    schema: HandoffToolSchema,
    output: OwnershipViewSchema,
    annotations: write({ destructive: false, idempotent: false }),
    run: (b, { ownershipId, ...body }) => b.handoff(ownershipId, body),
  }),
  tool({
    name: 'ownership.accept_handoff',
    title: 'Accept a handoff',
    description: `Take over a worktree that was offered to your execution session: pass the handoffId of the pending handoff (ownership.get shows it) and your executionSessionId. Answers the ownership with your new epoch and tenure (run git with tenure.env from now on; ${SECRET_HANDLING}). Refused with handoff_mismatch when the offer names another session or worker, no_pending_handoff when there is none. Accepting again with the same session is safe.`,
    schema: AcceptHandoffToolSchema,
    output: ClaimResponseSchema,
    annotations: write({ destructive: false, idempotent: true }),
    newOwner: true,
    run: (b, { ownershipId, ...body }) => b.acceptHandoff(ownershipId, body),
  }),
  tool({
    name: 'ownership.cancel_handoff',
    title: 'Cancel a handoff',
    description: `Withdraw a pending handoff of your worktree; you keep it. Refused with no_pending_handoff when nothing is pending. ${FENCE}`,
    schema: CancelHandoffToolSchema,
    output: OwnershipViewSchema,
    annotations: write({ destructive: false, idempotent: true }),
    run: (b, { ownershipId, ...body }) => b.cancelHandoff(ownershipId, body),
  }),
  tool({
    name: 'ownership.submit',
    title: 'Submit for landing',
    description: `Say your work in the worktree is ready to land, optionally naming the head commit (head). The ownership becomes submitted; the landing controller records the landing. Submitting again with the same session is safe. ${FENCE}`,
    schema: SubmitToolSchema,
    output: OwnershipViewSchema,
    annotations: write({ destructive: false, idempotent: true }),
    run: (b, { ownershipId, ...body }) => b.submit(ownershipId, body),
  }),
  tool({
    name: 'ownership.release',
    title: 'Release a worktree',
    description: `Give the worktree up: you may no longer change it, and any session may bind it next. Releasing again with the same session is safe. ${FENCE}`,
    schema: ReleaseToolSchema,
    output: OwnershipViewSchema,
    annotations: write({ destructive: true, idempotent: true }),
    run: (b, { ownershipId, ...body }) => b.release(ownershipId, body),
  }),
  tool({
    name: 'ownership.reclaim',
    title: 'Reclaim from a dead owner',
    description: `Take over a worktree whose owner is proven dead (state stale) as your execution session. The previous owner's uncommitted work is saved first (latestWip names the ref). Answers the ownership with your new epoch and tenure (run git with tenure.env from now on; ${SECRET_HANDLING}). Refused with owner_alive or liveness_unknown when the owner is not proven dead; only an admin may force it (force: true with a reason). A released worktree is bound with ownership.bind instead.`,
    schema: ReclaimToolSchema,
    output: ClaimResponseSchema,
    annotations: write({ destructive: true, idempotent: false }),
    newOwner: true,
    run: (b, { ownershipId, ...body }) => b.reclaim(ownershipId, body),
  }),
  tool({
    name: 'ownership.tenure',
    title: 'Your tenure secret again',
    description: `The tenure your bind, accept or reclaim answered, again: secret, epoch and env (OVERDECK_EXECUTION_SESSION_ID, OVERDECK_EPOCH, OVERDECK_TENURE_SECRET) to run git with (${SECRET_HANDLING}). Only for the session that owns the worktree now; another is refused with not_owner (you lost it: stop changing it). Asking again answers the same.`,
    schema: TenureToolSchema,
    output: TenureSchema,
    // It changes nothing: the secret is derived, not issued.
    annotations: READ,
    run: (b, { ownershipId, ...body }) => b.tenure(ownershipId, body),
  }),
  tool({
    name: 'ownership.hold.grant',
    title: 'Give a child session a hold',
    description: `As the owner, let a nested agent (childExecutionSessionId) write in your worktree under your tenure: a hold, at most 8 (holds_exhausted), each with its own lease (leaseTtlMs; the child heartbeats it with ownership.hold.heartbeat). Answers holdId and the child's own tenure (hand tenure.env to the child only; ${SECRET_HANDLING}). While a child holds, your release is refused with holds_live naming the children; handing the worktree off ends every hold. ${FENCE}`,
    schema: GrantHoldToolSchema,
    output: GrantHoldResponseSchema,
    annotations: write({ destructive: false, idempotent: false }),
    run: (b, { ownershipId, ...body }) => b.grantHold(ownershipId, body),
  }),
  tool({
    name: 'ownership.hold.heartbeat',
    title: "Renew a child's hold",
    description:
      'As the child of a hold, say you are alive: your executionSessionId and the epoch the hold was granted under. A hold silent past its lease ends (the parent keeps the worktree). Refused with not_found when the hold has ended: stop changing the worktree.',
    schema: HoldHeartbeatToolSchema,
    output: AcceptedSchema,
    annotations: write({ destructive: false, idempotent: true }),
    run: (b, { ownershipId, holdId, ...body }) => b.holdHeartbeat(ownershipId, holdId, body),
  }),
  tool({
    name: 'ownership.hold.end',
    title: 'End a hold',
    description:
      'End a child hold: the child itself or its parent (the owner), each naming its own executionSessionId and the epoch; an admin may force it with a reason. The child may no longer change the worktree after.',
    schema: EndHoldToolSchema,
    output: OwnershipViewSchema,
    annotations: write({ destructive: true, idempotent: true }),
    run: (b, { ownershipId, holdId, ...body }) => b.endHold(ownershipId, holdId, body),
  }),
  tool({
    name: 'ownership.observe',
    title: 'Observe a worktree read-only',
    description:
      'Register your execution session as a read-only observer of a worktree (a reviewer, a side chat): who lists it beside the owner for ttlMs (default 60 s, 5 s..10 min); call again within that time to stay listed, or with leave: true to go. An observer gets no tenure: the guard hooks refuse its changes, and it never keeps the owner or anyone else from binding the worktree.',
    schema: ObserveToolSchema,
    output: z.union([ObserveResponseSchema, LeaveObserveResponseSchema]),
    annotations: write({ destructive: false, idempotent: true }),
    run: (b, { leave, runtime, ttlMs, ...where }) =>
      leave ? b.leaveObserve(where) : b.observe({ ...where, ...(runtime !== undefined ? { runtime } : {}), ...(ttlMs !== undefined ? { ttlMs } : {}) }),
  }),
  tool({
    name: 'ownership.remove_worktree',
    title: 'Remove a worktree without losing work',
    description:
      "Remove a worktree when nothing would be lost: every commit of its branch landed (merge, squash, rebase or a landing receipt) or kept by a ref, its uncommitted and untracked files snapshotted under refs/overdeck/wip/ first. Another session's worktree, unlanded commits or files no snapshot can keep are refused with their reason codes (result.refusals), nothing changed. If you own it, name your executionSessionId and epoch: it is released first. Ask with dryRun: true to see the verdict first; the answer's receipt says what was kept where.",
    schema: RemoveWorktreeBodySchema,
    output: RemoveWorktreeResponseSchema,
    annotations: write({ destructive: true, idempotent: false }),
    run: (b, input) => b.removeWorktree(input),
  }),
];

/** How tool names are listed: the contract's (`ownership.bind`) or, for hosts that refuse dots, `ownership_bind`. */
export type ToolNaming = 'contract' | 'host-safe';
export const TOOL_NAMINGS: readonly ToolNaming[] = ['contract', 'host-safe'];

export function hostSafeName(name: string): string {
  return name.replace(/\./g, '_');
}

export function listedName(def: ToolDef, naming: ToolNaming): string {
  return naming === 'host-safe' ? hostSafeName(def.name) : def.name;
}

/** A call names a tool in either spelling, whichever way the list was spelled: a host may have cached the other. */
export function findTool(name: string): ToolDef | undefined {
  return TOOLS.find((t) => t.name === name || hostSafeName(t.name) === name);
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): { type: 'object'; [k: string]: unknown } {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-7' }) as Record<string, unknown>;
  const { $schema: _s, ...rest } = json;
  return { ...rest, type: 'object' };
}

/** The JSON schema a client sees for a tool's arguments (MCP wants an object schema). */
export function toolInputJsonSchema(schema: z.ZodType): { type: 'object'; [k: string]: unknown } {
  return jsonSchema(schema, 'input');
}

/** The JSON schema of a tool's structured answer (what a successful call returns in structuredContent). */
export function toolOutputJsonSchema(schema: z.ZodType): { type: 'object'; [k: string]: unknown } {
  return jsonSchema(schema, 'output');
}

export const SERVER_INSTRUCTIONS = [
  'These tools tell who owns a git worktree and let your execution session own one while it changes it. One live owner per worktree; every change of owner raises the epoch.',
  'Lifecycle: ownership.bind before you change a worktree (keep the ownershipId and epoch it answers); ownership.heartbeat well within your lease while you work; then ownership.submit when the work is ready to land, or ownership.release to give it up. To pass it to another session: ownership.handoff, which that session takes with ownership.accept_handoff (or you withdraw with ownership.cancel_handoff). When the owner is proven dead (state stale), another session takes over with ownership.reclaim; the dead owner’s uncommitted work is saved first.',
  `Git: run git in the worktree with the environment your bind, accept or reclaim answered in tenure.env (OVERDECK_EXECUTION_SESSION_ID, OVERDECK_EPOCH, OVERDECK_TENURE_SECRET); the guard hooks refuse changes without your tenure secret. ownership.tenure answers it again. ${SECRET_HANDLING}`,
  'Lookups (ownership.get, ownership.list, ownership.history, ownership.provenance) read the durable record and keep working after a worktree, a branch or a workflow is gone.',
  'Errors are tool results with isError and a body {code, message, details?}; branch on code: worktree_owned (details.owner holds it), not_owner or stale_epoch (you lost the worktree: stop changing it), owner_alive, invalid_input or unknown_field (details.fields names the fields), unavailable (retry later). Never pass a conversation: it comes from your worker.',
].join('\n\n');
