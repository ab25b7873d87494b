import { z } from 'zod';
import { OwnershipError } from '../client/errors';
import { parseInput } from '../api/errors';
import { OwnershipIdSchema } from '../domain/identity';
import {
  BindBodySchema,
  GetQuerySchema,
  HeartbeatBodySchema,
  HistoryQuerySchema,
  ListQuerySchema,
  namesConversation,
  ReleaseBodySchema,
  type BindBody,
  type GetQuery,
  type HeartbeatBody,
  type HistoryQuery,
  type ListQuery,
  type ReleaseBody,
} from '../api/schemas';

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
  heartbeat(ownershipId: string, input: HeartbeatBody): Promise<object>;
  release(ownershipId: string, input: ReleaseBody): Promise<object>;
}

export const HeartbeatToolSchema = HeartbeatBodySchema.extend({ ownershipId: OwnershipIdSchema });
export const ReleaseToolSchema = ReleaseBodySchema.extend({ ownershipId: OwnershipIdSchema });

export interface ToolDef {
  name: string;
  description: string;
  schema: z.ZodType;
  /** validates `raw` with `schema` (refusing like the HTTP API) and runs the tool */
  call(backend: ToolBackend, raw: unknown): Promise<object>;
}

function tool<S extends z.ZodType>(name: string, description: string, schema: S, run: (b: ToolBackend, input: z.output<S>) => Promise<object>, opts: { newOwner?: boolean } = {}): ToolDef {
  return {
    name,
    description,
    schema,
    async call(backend, raw) {
      if (opts.newOwner && namesConversation(raw)) throw new OwnershipError('conversation_forbidden');
      return run(backend, parseInput(schema, raw ?? {}));
    },
  };
}

export const TOOLS: readonly ToolDef[] = [
  tool(
    'ownership.bind',
    'Bind a git worktree to the calling execution session (spec §6.2). The conversation is filled from the executor binding; naming one is refused. Replays return the same ownership.',
    BindBodySchema,
    (b, input) => b.bind(input),
    { newOwner: true },
  ),
  tool('ownership.get', 'The current ownership record of a worktree path, a branch (optionally within repoRoot) or an ownershipId.', GetQuerySchema, (b, input) => b.get(input)),
  tool('ownership.list', 'Ownerships, most recent change first, filtered by repoRoot and state; pass nextCursor back for more.', ListQuerySchema, (b, input) => b.list(input)),
  tool(
    'ownership.history',
    'Everything recorded about the ownerships of a worktree path, branch, landed commit or ownershipId: events and owner chain.',
    HistoryQuerySchema,
    (b, input) => b.history(input),
  ),
  tool('ownership.heartbeat', 'Heartbeat of the owner session (executionSessionId, epoch) of an ownership.', HeartbeatToolSchema, (b, { ownershipId, ...body }) =>
    b.heartbeat(ownershipId, body),
  ),
  tool('ownership.release', 'Release an ownership held by the calling session (executionSessionId, epoch).', ReleaseToolSchema, (b, { ownershipId, ...body }) =>
    b.release(ownershipId, body),
  ),
];

/** The JSON schema a client sees for a tool's arguments (MCP wants an object schema). */
export function toolInputJsonSchema(schema: z.ZodType): { type: 'object'; [k: string]: unknown } {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema: _s, ...rest } = json;
  return { ...rest, type: 'object' };
}
