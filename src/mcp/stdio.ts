import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ApiClient } from '../api/client';
import { authenticatorFromConfig, connectBackends } from '../api/runtime';
import { createService } from '../api/service';
import { loadConfig } from '../config';
import { directBackend, remoteBackend, remoteErrorBody } from './backend';
import { createMcpServer } from './server';
import type { ToolBackend } from './tools';
import type { ErrorBody } from '../api/errors';

/**
 * The ownership MCP tools over stdio (`tsx src/mcp/stdio.ts`), for MCP clients that spawn servers.
 *  - OD_API_URL + OD_TOKEN: every tool call goes to the HTTP API with that token.
 *  - OD_TOKEN alone: direct config (TEMPORAL_ADDRESS, DATABASE_URL, OD_TOKENS_FILE / OD_TOKENS):
 *    the token is authenticated here exactly as the API would, and the same handlers run in-process.
 * stdout carries the protocol only; diagnostics go to stderr.
 */
interface Mode {
  backend: ToolBackend;
  toErrorBody?: (err: unknown) => ErrorBody;
  close(): Promise<void>;
}

async function mode(token: string): Promise<Mode> {
  const apiUrl = process.env.OD_API_URL;
  if (apiUrl) {
    return { backend: remoteBackend(new ApiClient({ baseUrl: apiUrl, token })), toErrorBody: remoteErrorBody, close: async () => undefined };
  }
  const cfg = loadConfig();
  if (!cfg.temporalAddress || !cfg.databaseUrl) throw new Error('set OD_API_URL, or TEMPORAL_ADDRESS and DATABASE_URL for direct mode');
  const principal = authenticatorFromConfig(cfg).authenticate(`Bearer ${token}`);
  if (!principal) throw new Error('OD_TOKEN is not a token of any configured principal');
  const backends = await connectBackends(cfg);
  return { backend: directBackend(createService(backends), principal), close: () => backends.close() };
}

async function main(): Promise<void> {
  const token = process.env.OD_TOKEN;
  if (!token) throw new Error('OD_TOKEN is required (the bearer token of the principal the tools act as)');
  const m = await mode(token);
  const server = createMcpServer(m.backend, m.toErrorBody ? { toErrorBody: m.toErrorBody } : {});
  const transport = new StdioServerTransport();
  transport.onclose = () => void m.close().finally(() => process.exit(0));
  await server.connect(transport);
  process.stdin.on('end', () => void server.close());
}

main().catch((err: unknown) => {
  process.stderr.write(`od-mcp: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
