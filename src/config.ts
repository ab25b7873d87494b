import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { SEARCH_ATTRIBUTE_NAMES, SEARCH_ATTRIBUTE_TYPES, type SearchAttributeName } from './domain/search-attributes';
import { DEFAULT_API_PORT } from './contract/defaults';
import { DEFAULT_SETTINGS, type OwnershipSettings } from './domain/settings';
import { DEFAULT_UNPROVEN_BOUND_MS } from './domain/liveness';

/**
 * Every environment variable the service reads, with its default and meaning. This table is the
 * single source for parsing, for the README's configuration table and for the compose consistency test.
 */
export const ENV = {
  DATABASE_URL: { default: '', doc: 'PostgreSQL connection string. Empty: an embedded PostgreSQL under OD_DATA_DIR/pg.' },
  OD_DATA_DIR: { default: '.data', doc: 'Directory for the embedded PostgreSQL and the Temporal dev server SQLite file.' },
  OD_PG_PORT: { default: '54329', doc: 'Port of the embedded PostgreSQL (only when DATABASE_URL is empty).' },
  TEMPORAL_ADDRESS: { default: '', doc: 'Temporal frontend host:port. Empty with `npm start`: a dev server is started on TEMPORAL_PORT.' },
  TEMPORAL_NAMESPACE: { default: 'default', doc: 'Temporal namespace.' },
  TEMPORAL_PORT: { default: '7233', doc: 'gRPC port of the dev server that `npm start` runs.' },
  TEMPORAL_UI_PORT: { default: '8233', doc: 'Web UI port of the dev server that `npm start` runs.' },
  TEMPORAL_TASK_QUEUE: { default: 'ownership', doc: 'Task queue of the ownership workflows and their durable-store activities.' },
  OD_TEMPORAL_TLS: {
    default: 'auto',
    doc: 'TLS to the Temporal frontend, for every client, worker and host agent connection: `auto` (on when a CA, client certificate, server name or API key is set), `on` (verified against the system roots without OD_TEMPORAL_TLS_CA), `off`.',
  },
  OD_TEMPORAL_TLS_CA: { default: '', doc: "PEM file of the CA that signed the Temporal frontend's certificate. Empty: the system's roots." },
  OD_TEMPORAL_TLS_CERT: { default: '', doc: "PEM file of this process's client certificate (mTLS); with OD_TEMPORAL_TLS_KEY." },
  OD_TEMPORAL_TLS_KEY: { default: '', doc: "PEM file of the client certificate's private key; refused unless only its owner can read it (mode 0600)." },
  OD_TEMPORAL_TLS_SERVER_NAME: { default: '', doc: 'Server name (SNI and certificate check) when it differs from the host of TEMPORAL_ADDRESS.' },
  OD_TEMPORAL_API_KEY_FILE: {
    default: '',
    doc: 'File holding the Temporal API key (sent as `authorization: Bearer`, over TLS only); refused unless mode 0600. A file, never a variable: the key stays out of environments and command lines.',
  },
  OD_HOST_ID: { default: os.hostname(), doc: "This host's id; git activities for its worktrees run on task queue `ownership-host-<id>`." },
  OD_API_HOST: { default: '127.0.0.1', doc: 'Interface the HTTP API listens on.' },
  OD_API_PORT: { default: String(DEFAULT_API_PORT), doc: 'Port of the HTTP API (and MCP endpoint).' },
  OD_ALLOWED_ROOTS: {
    default: `${os.homedir()}${path.delimiter}${os.tmpdir()}`,
    doc: 'Path-delimited roots that repositories and worktrees must sit under (realpath); anything else is refused.',
  },
  OD_LEASE_TTL_MS: {
    default: String(DEFAULT_SETTINGS.leaseTtlMs),
    doc: 'Heartbeat lease: an owner silent this long is asked about at the liveness authority.',
  },
  OD_HEARTBEAT_LOG_INTERVAL_MS: {
    default: String(DEFAULT_SETTINGS.heartbeatLogIntervalMs),
    doc: 'At most one durable heartbeat event per owner per this interval (plus liveness transitions).',
  },
  OD_HANDOFF_TIMEOUT_MS: { default: String(DEFAULT_SETTINGS.handoffTimeoutMs), doc: 'A handoff not accepted within this time falls back to the owner.' },
  OD_MAX_HISTORY_EVENTS: {
    default: String(DEFAULT_SETTINGS.maxHistoryEvents),
    doc: 'Continue-as-new past this many history events (or when Temporal suggests it).',
  },
  OD_LIVENESS_AUTHORITY: { default: 'local', doc: 'Execution-session liveness authority: `local` (host, boot id, pid, start time), `http`, or `none`.' },
  OD_LIVENESS_UNPROVEN_BOUND_MS: {
    default: String(DEFAULT_UNPROVEN_BOUND_MS),
    doc: 'With the `local` authority: a silent owner whose process runs but does not prove its session (no matching OVERDECK_EXECUTION_SESSION_ID in its environment, or one unreadable here) is `unknown` this long, then `dead` (reclaimable).',
  },
  OD_LIVENESS_URL: { default: '', doc: 'URL of the HTTP liveness authority (POST {executionSessionId} -> {verdict}).' },
  OD_TOKENS_FILE: {
    default: '',
    doc: 'JSON file of principals and bearer-token SHA-256 hashes (never clear tokens); must not be world-writable. Empty with `npm start` (and no OD_TOKENS): dev tokens are generated under OD_DATA_DIR.',
  },
  OD_PAYLOAD_KEY_FILE: {
    default: '',
    doc: 'File holding a 32-byte key (base64, e.g. `openssl rand -base64 32`): every payload sent to Temporal is encrypted with it (AES-256-GCM) and the API serves `POST /codec/decode` to admins, for the Temporal UI and `temporal workflow show --codec-endpoint`. Every worker, API and client of one deployment needs the same file. Empty: payloads in clear.',
  },
  OD_SERVICE_KEY_FILE: {
    default: '',
    doc: 'File of the service key that seals every message service processes send to Temporal (one base64 32-byte key per line; the first seals, all verify, so a rotated key stays on its second line). Messages without a valid seal are refused. Every worker, API and client process of one deployment needs the same file, and no agent may read it. Empty: OD_DATA_DIR/service.key, created with a new key when missing (one machine only).',
  },
  OD_TOKENS: { default: '', doc: 'Principals JSON inline (same format as OD_TOKENS_FILE); merged with the file, ids and hashes unique across both.' },
  OD_MAX_CACHED_WORKFLOWS: {
    default: '0',
    doc: 'Cap on ownership workflows kept in the worker cache (each costs about 0.3 MiB of worker memory, bench/README.md; evicted ones replay on their next message). 0: the SDK default, sized from memory.',
  },
  OD_LANDINGS_SCAN_INTERVAL_MS: {
    default: '0',
    doc: 'Every this many ms the host agent runs `landings scan` on the main branch (and every landed branch) of each repository of its worktrees, recording inferred receipts for landings without one. 0: off.',
  },
  OD_PROVENANCE_NOTES: {
    default: '0',
    doc: "When `1`, the host agent writes the provenance of each landed head (ownership, lander, authors' session, epoch, worker and conversation ids; no titles or URLs) as a git note under `refs/notes/overdeck-provenance`, and `od-worktree provenance` answers from it when the service is unreachable. `0`: off.",
  },
  OD_HOST_AGENT_KEYLESS: {
    default: '0',
    doc: 'When `1`, a host agent alone (`worker.ts --host-agent`) loads no service key: it writes the tenure hashes the control plane computed and carries with each projection, and seals nothing. The control-plane workers and the API still hold the key. `0`: the host agent loads OD_SERVICE_KEY_FILE like every service process.',
  },
  LOG_LEVEL: { default: 'info', doc: 'pino log level.' },
} as const;

export type EnvName = keyof typeof ENV;

/**
 * The ENV rows that are ownership settings (src/domain/settings.ts SETTING_SCOPE says how each
 * applies): read here once, given to the API's client for new lifecycles and to the workflow
 * worker, whose configuration each continue-as-new takes again.
 */
export const SETTING_ENV = {
  leaseTtlMs: 'OD_LEASE_TTL_MS',
  heartbeatLogIntervalMs: 'OD_HEARTBEAT_LOG_INTERVAL_MS',
  handoffTimeoutMs: 'OD_HANDOFF_TIMEOUT_MS',
  maxHistoryEvents: 'OD_MAX_HISTORY_EVENTS',
} as const satisfies Partial<Record<keyof OwnershipSettings, EnvName>>;

const int = z.coerce.number().int().positive();

export const ConfigSchema = z.object({
  databaseUrl: z.string(),
  dataDir: z.string(),
  pgPort: int,
  temporalAddress: z.string(),
  temporalNamespace: z.string().min(1),
  temporalPort: int,
  temporalUiPort: int,
  taskQueue: z.string().min(1),
  hostId: z.string().regex(/^[A-Za-z0-9._-]+$/, 'OD_HOST_ID may hold letters, digits, dot, dash and underscore'),
  apiHost: z.string(),
  apiPort: int,
  allowedRoots: z.array(z.string()),
  leaseTtlMs: int,
  heartbeatLogIntervalMs: int,
  handoffTimeoutMs: int,
  maxHistoryEvents: int,
  livenessAuthority: z.enum(['local', 'http', 'none']),
  livenessUrl: z.string(),
  livenessUnprovenBoundMs: int,
  tokensFile: z.string(),
  payloadKeyFile: z.string(),
  serviceKeyFile: z.string(),
  tokensJson: z.string(),
  maxCachedWorkflows: z.coerce.number().int().nonnegative(),
  landingsScanIntervalMs: z.coerce.number().int().nonnegative(),
  provenanceNotes: z.enum(['0', '1']).transform((v) => v === '1'),
  hostAgentKeyless: z.enum(['0', '1']).transform((v) => v === '1'),
  logLevel: z.string(),
});
export type Config = z.infer<typeof ConfigSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const get = (name: EnvName): string => {
    const v = env[name];
    return v === undefined || v === '' ? ENV[name].default : v;
  };
  const parsed = ConfigSchema.safeParse({
    databaseUrl: get('DATABASE_URL'),
    dataDir: path.resolve(get('OD_DATA_DIR')),
    pgPort: get('OD_PG_PORT'),
    temporalAddress: get('TEMPORAL_ADDRESS'),
    temporalNamespace: get('TEMPORAL_NAMESPACE'),
    temporalPort: get('TEMPORAL_PORT'),
    temporalUiPort: get('TEMPORAL_UI_PORT'),
    taskQueue: get('TEMPORAL_TASK_QUEUE'),
    hostId: get('OD_HOST_ID'),
    apiHost: get('OD_API_HOST'),
    apiPort: get('OD_API_PORT'),
    allowedRoots: get('OD_ALLOWED_ROOTS').split(path.delimiter).filter(Boolean),
    leaseTtlMs: get('OD_LEASE_TTL_MS'),
    heartbeatLogIntervalMs: get('OD_HEARTBEAT_LOG_INTERVAL_MS'),
    handoffTimeoutMs: get('OD_HANDOFF_TIMEOUT_MS'),
    maxHistoryEvents: get('OD_MAX_HISTORY_EVENTS'),
    livenessAuthority: get('OD_LIVENESS_AUTHORITY'),
    livenessUrl: get('OD_LIVENESS_URL'),
    livenessUnprovenBoundMs: get('OD_LIVENESS_UNPROVEN_BOUND_MS'),
    tokensFile: get('OD_TOKENS_FILE'),
    payloadKeyFile: get('OD_PAYLOAD_KEY_FILE'),
    serviceKeyFile: get('OD_SERVICE_KEY_FILE'),
    tokensJson: get('OD_TOKENS'),
    maxCachedWorkflows: get('OD_MAX_CACHED_WORKFLOWS'),
    landingsScanIntervalMs: get('OD_LANDINGS_SCAN_INTERVAL_MS'),
    provenanceNotes: get('OD_PROVENANCE_NOTES'),
    hostAgentKeyless: get('OD_HOST_AGENT_KEYLESS'),
    logLevel: get('LOG_LEVEL'),
  });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid configuration: ${issues}`);
  }
  return parsed.data;
}

/** The configured ownership settings (the rows of SETTING_ENV). */
export function ownershipSettingsOf(cfg: Config): Partial<OwnershipSettings> {
  const out: Partial<OwnershipSettings> = {};
  for (const key of Object.keys(SETTING_ENV) as (keyof typeof SETTING_ENV)[]) out[key] = cfg[key];
  return out;
}

export { hostTaskQueue } from './domain/queues';

/** Search attributes the workflows upsert (names: src/domain/search-attributes.ts); registered on every Temporal server the project starts. */
export const SEARCH_ATTRIBUTES: Readonly<Record<SearchAttributeName, 'Keyword' | 'KeywordList'>> = Object.fromEntries(
  (Object.keys(SEARCH_ATTRIBUTE_NAMES) as (keyof typeof SEARCH_ATTRIBUTE_NAMES)[]).map(
    (field) => [SEARCH_ATTRIBUTE_NAMES[field], SEARCH_ATTRIBUTE_TYPES[field]] as const,
  ),
) as Record<SearchAttributeName, 'Keyword' | 'KeywordList'>;
