import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toFailure } from '../api/errors';
import type { ErrorBody } from '../contract/errors';
import { PACKAGE_VERSION } from '../version';
import { findTool, listedName, SERVER_INSTRUCTIONS, TOOLS, toolInputJsonSchema, toolOutputJsonSchema, type ToolBackend, type ToolNaming } from './tools';

export const MCP_SERVER_INFO = { name: 'worktree-ownership', version: PACKAGE_VERSION } as const;

export interface McpServerOptions {
  /** called once per tool call with its outcome code (`ok` or a reason code), e.g. for metrics */
  onCall?: (tool: string, code: string) => void;
  /** turns a failure into the error body a caller sees; default: the HTTP API's mapping */
  toErrorBody?: (err: unknown) => ErrorBody;
  /** how tools are listed (default the contract's dotted names); calls accept either spelling */
  toolNames?: ToolNaming;
}

/**
 * An answer is its JSON as text (for hosts that read only text) and as structuredContent, which
 * matches the tool's outputSchema. A refusal is the `{code, message, details?}` body as text with
 * isError, and no structuredContent: clients check structuredContent against the outputSchema
 * even on errors (the official SDK client does), and a refusal is not an ownership.
 */
const textResult = (value: object, isError: boolean): CallToolResult =>
  isError
    ? { content: [{ type: 'text', text: JSON.stringify(value) }], isError: true }
    : { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> };

// The lists are the same for every server of a process: built once, not per request.
const listed = new Map<ToolNaming, object[]>();
function toolList(naming: ToolNaming): object[] {
  let tools = listed.get(naming);
  if (!tools) {
    tools = TOOLS.map((t) => ({
      name: listedName(t, naming),
      title: t.title,
      description: t.description,
      inputSchema: toolInputJsonSchema(t.schema),
      outputSchema: toolOutputJsonSchema(t.output),
      annotations: { title: t.title, ...t.annotations },
    }));
    listed.set(naming, tools);
  }
  return tools;
}

/**
 * The MCP server of the ownership tools. The SDK's low-level Server is used (not McpServer) because
 * McpServer validates arguments itself and answers with its own free-text messages: here the tool's
 * zod schema is applied by the same code as the HTTP API, so a refusal carries the same reason code.
 * Errors are tool results with isError and a `{code, message}` body, never a protocol error.
 */
export function createMcpServer(backend: ToolBackend, opts: McpServerOptions = {}): Server {
  const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS });
  const toErrorBody = opts.toErrorBody ?? ((err: unknown) => toFailure(err).body);
  const naming = opts.toolNames ?? 'contract';

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolList(naming) as never }));

  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const tool = findTool(req.params.name);
    if (!tool) {
      opts.onCall?.('unknown', 'not_found');
      return textResult({ code: 'not_found', message: 'no such tool' }, true);
    }
    try {
      const out = await tool.call(backend, req.params.arguments);
      opts.onCall?.(tool.name, 'ok');
      return textResult(out, false);
    } catch (err) {
      const body = toErrorBody(err);
      opts.onCall?.(tool.name, body.code);
      return textResult(body, true);
    }
  });
  return server;
}
