import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createHostPresence } from '../api/service/host-presence';
import { ApiClient, normalizeApiUrl } from '../api/client';
import { authenticatorFromConfig, connectBackends } from '../api/service/backends';
import { createService } from '../api/service';
import { loadConfig } from '../config';
import { directBackend, remoteBackend, remoteErrorBody } from './backend';
import { createMcpServer } from './server';
import { TOOL_NAMINGS, type ToolBackend, type ToolNaming } from './tools';
import type { ErrorBody } from '../contract/errors';

/**
 * The ownership MCP tools over stdio, for MCP hosts that spawn their servers. It reads:
 *  - OD_TOKEN (required): the bearer token of the principal the tools act as (an executor's, for
 *    an agent); `npm start` writes dev tokens to <OD_DATA_DIR>/dev-principals.json.secret.json;
 *  - OD_API_URL: the HTTP API every tool call goes to (a bare host:port means http://). The usual
 *    set-up: an agent's host runs this next to the agent, the service runs elsewhere;
 *  - without OD_API_URL, direct mode on the service host: TEMPORAL_ADDRESS, DATABASE_URL and
 *    OD_TOKENS_FILE / OD_TOKENS, the token authenticated here exactly as the API would;
 *  - OD_MCP_TOOL_NAMES=host-safe lists the tools as `ownership_bind`… for hosts that refuse dots.
 * stdout carries the protocol only; diagnostics go to stderr.
 */
interface Mode {
  backend: ToolBackend;
  toErrorBody?: (err: unknown) => ErrorBody;
  close(): Promise<void>;
}

class StartError extends Error {}

async function mode(token: string): Promise<Mode> {
  const apiUrl = process.env.OD_API_URL;
  if (apiUrl) {
    let baseUrl: string;
    try {
      baseUrl = normalizeApiUrl(apiUrl);
    } catch (err) {
      throw new StartError((err as Error).message);
    }
    return { backend: remoteBackend(new ApiClient({ baseUrl, token })), toErrorBody: remoteErrorBody, close: async () => undefined };
  }
  const cfg = loadConfig();
  if (!cfg.temporalAddress || !cfg.databaseUrl) {
    throw new StartError(
      'set OD_API_URL to the ownership service (e.g. http://127.0.0.1:8787, where `npm start` serves it); or, on the service host, TEMPORAL_ADDRESS and DATABASE_URL',
    );
  }
  const principal = authenticatorFromConfig(cfg).authenticate(`Bearer ${token}`);
  if (!principal) throw new StartError('OD_TOKEN is not a token of any configured principal (OD_TOKENS_FILE / OD_TOKENS)');
  const backends = await connectBackends(cfg);
  const hostPresence = createHostPresence({ pool: backends.pool, temporal: backends.temporal, namespace: cfg.temporalNamespace });
  return { backend: directBackend(createService({ ...backends, hostPresence }), principal), close: () => backends.close() };
}

function naming(): ToolNaming {
  const v = process.env.OD_MCP_TOOL_NAMES || 'contract';
  if (!(TOOL_NAMINGS as readonly string[]).includes(v)) throw new StartError(`OD_MCP_TOOL_NAMES must be one of ${TOOL_NAMINGS.join(', ')}`);
  return v as ToolNaming;
}

async function main(): Promise<void> {
  const token = process.env.OD_TOKEN;
  if (!token) {
    throw new StartError(
      'OD_TOKEN is required: the bearer token of the principal the tools act as (an executor token for an agent; `npm start` writes dev tokens to <OD_DATA_DIR>/dev-principals.json.secret.json). Set OD_API_URL too.',
    );
  }
  const toolNames = naming();
  const m = await mode(token);
  const server = createMcpServer(m.backend, { toolNames, ...(m.toErrorBody ? { toErrorBody: m.toErrorBody } : {}) });
  const transport = new StdioServerTransport();
  transport.onclose = () => void m.close().finally(() => process.exit(0));
  await server.connect(transport);
  process.stdin.on('end', () => void server.close());
}

main().catch((err: unknown) => {
  process.stderr.write(`od-mcp: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof StartError ? 2 : 1);
});
