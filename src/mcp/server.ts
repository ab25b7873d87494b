import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toFailure, type ErrorBody } from '../api/errors';
import { TOOLS, toolInputJsonSchema, type ToolBackend } from './tools';

export const MCP_SERVER_INFO = { name: 'worktree-ownership', version: '0.1.0' } as const;

export interface McpServerOptions {
  /** called once per tool call with its outcome code (`ok` or a reason code), e.g. for metrics */
  onCall?: (tool: string, code: string) => void;
  /** turns a failure into the error body a caller sees; default: the HTTP API's mapping */
  toErrorBody?: (err: unknown) => ErrorBody;
}

const textResult = (value: object, isError: boolean): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  structuredContent: value as Record<string, unknown>,
  ...(isError ? { isError: true } : {}),
});

/**
 * The MCP server of the ownership tools. The SDK's low-level Server is used (not McpServer) because
 * McpServer validates arguments itself and answers with its own free-text messages: here the tool's
 * zod schema is applied by the same code as the HTTP API, so a refusal carries the same reason code.
 * Errors are tool results with isError and a `{code, message}` body, never a protocol error.
 */
export function createMcpServer(backend: ToolBackend, opts: McpServerOptions = {}): Server {
  const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: {} } });
  const toErrorBody = opts.toErrorBody ?? ((err: unknown) => toFailure(err).body);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: toolInputJsonSchema(t.schema) })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const tool = TOOLS.find((t) => t.name === req.params.name);
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
