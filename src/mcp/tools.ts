import { z } from 'zod';
import { OwnershipError, parseInput } from '../contract/refusal';
import { PathString } from '../domain/identity';
import {
  GetQuerySchema,
  HistoryQuerySchema,
  HistoryResponseSchema,
  ListQuerySchema,
  ListResponseSchema,
  namesConversation,
  WireRecordSchema,
  type GetQuery,
  type HistoryQuery,
  type ListQuery,
} from '../contract/http';
import {
  operation,
  READ_TOOL as READ,
  SECRET_HANDLING,
  splitToolInput,
  toolInputOf,
  writeTool as write,
  type OperationName,
  type ToolAnnotations,
} from '../contract/operations';
import { ProvenanceSchema } from '../contract/provenance';
import { RemoveWorktreeBodySchema, RemoveWorktreeResponseSchema, type RemoveWorktreeBody } from '../contract/removal';
import { LeaveObserveResponseSchema, ObserveBodySchema, ObserveResponseSchema, type LeaveObserveBody, type ObserveBody } from '../contract/observers';

export { SECRET_HANDLING, type ToolAnnotations };

/**
 * What the MCP tools run on: the service itself for a given principal (HTTP mount, stdio with
 * direct config) or the HTTP API (stdio with OD_API_URL + OD_TOKEN). Either way the same handlers
 * decide, so the tools follow exactly the HTTP API's rules and reason codes. The operation table's
 * tools go through `run` (src/contract/operations.ts); the lookups, observers and removal are named.
 */
export interface ToolBackend {
  /** an operation of the table, its arguments validated by the table's schema and split into address and body */
  run(name: OperationName, at: { id?: string; holdId?: string }, body: Record<string, unknown>): Promise<unknown>;
  get(input: GetQuery): Promise<object>;
  list(input: ListQuery): Promise<object>;
  history(input: HistoryQuery): Promise<object>;
  provenance(commit: string, repo: string): Promise<object>;
  observe(input: ObserveBody): Promise<object>;
  leaveObserve(input: LeaveObserveBody): Promise<object>;
  removeWorktree(input: RemoveWorktreeBody): Promise<object>;
}

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
  run: (b: ToolBackend, input: z.output<S>) => Promise<unknown>;
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

/** An operation's tool, made from its entry in the operation table: its arguments are the body with the URL's address beside it. */
function tableTool(name: OperationName): ToolDef {
  const o = operation(name);
  if (!o.tool) throw new Error(`${name} has no tool in the operation table`);
  return tool({
    ...o.tool,
    schema: toolInputOf(name),
    output: o.response,
    ...(o.newOwner ? { newOwner: true } : {}),
    run: (b, input) => {
      const { at, body } = splitToolInput(name, input);
      return b.run(name, at, body);
    },
  });
}

export const TOOLS: readonly ToolDef[] = [
  tableTool('bind'),
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
  tableTool('heartbeat'),
  tableTool('handoff'),
  tableTool('acceptHandoff'),
  tableTool('cancelHandoff'),
  tableTool('submit'),
  tableTool('release'),
  tableTool('reclaim'),
  tableTool('tenure'),
  tableTool('grantHold'),
  tableTool('holdHeartbeat'),
  tableTool('endHold'),
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
