import type { FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ApiMetrics } from '../api/metrics';
import { principalOf, type App } from '../api/http';
import type { OwnershipService } from '../api/service';
import { OwnershipError } from '../contract/refusal';
import { directBackend } from './backend';
import { createMcpServer } from './server';
import { TOOL_NAMINGS, type ToolNaming } from './tools';

/**
 * The MCP endpoint on the API server: streamable HTTP at /mcp, stateless (a server and transport
 * per request, JSON answers), behind the same Bearer authentication as /v1 (the auth hook has
 * already refused a missing or unknown token with 401 before this runs).
 *
 * `/mcp?toolNames=host-safe` lists the tools as `ownership_bind` etc., for hosts that refuse dots
 * in tool names; a host configures it in the URL it is given. Calls accept either spelling.
 */
function namingOf(query: unknown): ToolNaming {
  const v = (query as { toolNames?: unknown } | null)?.toolNames;
  if (v === undefined) return 'contract';
  if (typeof v === 'string' && (TOOL_NAMINGS as readonly string[]).includes(v)) return v as ToolNaming;
  throw new OwnershipError('invalid_input', undefined, { fields: ['toolNames'] });
}

export function registerMcpRoutes(app: App, svc: OwnershipService, metrics: ApiMetrics): void {
  app.post('/mcp', { schema: { hide: true } }, async (req, reply) => {
    const principal = principalOf(req);
    const toolNames = namingOf(req.query);
    const server = createMcpServer(directBackend(svc, principal), { toolNames, onCall: (tool, code) => metrics.toolCalls.inc({ tool, code }) });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req.raw, reply.raw, req.body);
    } catch {
      // The reply is hijacked: answer here, in the API's error shape, without any detail.
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        reply.raw.end(JSON.stringify({ code: 'internal', message: 'internal error' }));
      }
    }
  });

  // Stateless: no server-initiated stream to open, no session to end.
  const notAllowed = async (_req: FastifyRequest, reply: FastifyReply) =>
    reply.code(405).header('allow', 'POST').send({ code: 'invalid_input', message: 'the MCP endpoint is stateless: POST only' });
  app.get('/mcp', { schema: { hide: true } }, notAllowed);
  app.delete('/mcp', { schema: { hide: true } }, notAllowed);
}
