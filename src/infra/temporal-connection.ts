import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { ENV } from '../config';

/**
 * How every process of the service reaches Temporal's frontend: TLS (server verified against a CA
 * of the operator's, or the system's roots), mTLS (a client certificate) and an API key, from the
 * environment (docs/operations.md#temporal-tls). One function builds the options for the client's
 * Connection and the workers' NativeConnection alike, so no connection of the service is left on
 * plaintext when the deployment asks for TLS.
 *
 * Secrets are files, never values in the environment or on a command line: the client key and the
 * API key are read from files that only their owner may read (mode 0600), and neither appears in
 * an error, a log line or the configuration the process keeps.
 */

export const TEMPORAL_CONNECTION_ENV = [
  'OD_TEMPORAL_TLS',
  'OD_TEMPORAL_TLS_CA',
  'OD_TEMPORAL_TLS_CERT',
  'OD_TEMPORAL_TLS_KEY',
  'OD_TEMPORAL_TLS_SERVER_NAME',
  'OD_TEMPORAL_API_KEY_FILE',
] as const;

const file = z.string();

export const TemporalConnectionSchema = z
  .object({
    /** `auto`: TLS when any TLS file, a server name or an API key is configured; `on`: always (system roots without a CA); `off`: never */
    tls: z.enum(['auto', 'on', 'off']),
    ca: file,
    cert: file,
    key: file,
    serverName: z.string().regex(/^[A-Za-z0-9.-]*$/, 'a DNS name'),
    apiKeyFile: file,
  })
  .strict()
  .superRefine((c, ctx) => {
    if ((c.cert === '') !== (c.key === ''))
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'OD_TEMPORAL_TLS_CERT and OD_TEMPORAL_TLS_KEY go together (a client certificate and its key)' });
    const wantsTls = c.ca !== '' || c.cert !== '' || c.serverName !== '';
    if (c.tls === 'off' && wantsTls)
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'OD_TEMPORAL_TLS=off contradicts the TLS files or server name configured' });
    if (c.tls === 'off' && c.apiKeyFile !== '')
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'OD_TEMPORAL_TLS=off with an API key would send the key in clear' });
  });
export type TemporalConnectionConfig = z.infer<typeof TemporalConnectionSchema>;

/** What Connection.connect and NativeConnection.connect take beyond the address. */
export interface TemporalConnectionOptions {
  tls?: { serverNameOverride?: string; serverRootCACertificate?: Buffer; clientCertPair?: { crt: Buffer; key: Buffer } };
  apiKey?: string;
}

/** The reason code of every refusal here: the process does not start. */
export class TemporalConnectionConfigError extends Error {
  readonly code = 'temporal_tls_config' as const;
}

/** The connection settings from the environment (unset and empty alike mean the default). */
export function temporalConnectionConfigOf(env: NodeJS.ProcessEnv = process.env): TemporalConnectionConfig {
  const get = (name: (typeof TEMPORAL_CONNECTION_ENV)[number]) => {
    const v = env[name];
    return v === undefined || v === '' ? ENV[name].default : v;
  };
  const parsed = TemporalConnectionSchema.safeParse({
    tls: get('OD_TEMPORAL_TLS'),
    ca: get('OD_TEMPORAL_TLS_CA'),
    cert: get('OD_TEMPORAL_TLS_CERT'),
    key: get('OD_TEMPORAL_TLS_KEY'),
    serverName: get('OD_TEMPORAL_TLS_SERVER_NAME'),
    apiKeyFile: get('OD_TEMPORAL_API_KEY_FILE'),
  });
  if (!parsed.success) {
    throw new TemporalConnectionConfigError(`invalid Temporal connection configuration: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  }
  return parsed.data;
}

function readPem(path: string, what: string): Buffer {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (err) {
    throw new TemporalConnectionConfigError(`${what} ${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (!data.includes('-----BEGIN ')) throw new TemporalConnectionConfigError(`${what} ${path}: not a PEM file`);
  return data;
}

/** A secret file anyone but its owner can read is a secret every local user holds: refused, with the fix. */
function assertPrivate(path: string, what: string): void {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch (err) {
    throw new TemporalConnectionConfigError(`${what} ${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if ((mode & 0o077) !== 0)
    throw new TemporalConnectionConfigError(`${what} ${path} is readable or writable by others (mode ${mode.toString(8).padStart(4, '0')}): chmod 600 ${path}`);
}

/** The options for Connection.connect / NativeConnection.connect: `{}` for plaintext without a key (the dev server). */
export function temporalConnectionOptions(cfg: TemporalConnectionConfig): TemporalConnectionOptions {
  const out: TemporalConnectionOptions = {};
  if (cfg.apiKeyFile !== '') {
    assertPrivate(cfg.apiKeyFile, 'OD_TEMPORAL_API_KEY_FILE');
    const key = readFileSync(cfg.apiKeyFile, 'utf8').trim();
    if (key === '' || /\s/.test(key)) throw new TemporalConnectionConfigError(`OD_TEMPORAL_API_KEY_FILE ${cfg.apiKeyFile}: one key on one line expected`);
    out.apiKey = key;
  }
  const on = cfg.tls === 'on' || (cfg.tls === 'auto' && (cfg.ca !== '' || cfg.cert !== '' || cfg.serverName !== '' || cfg.apiKeyFile !== ''));
  if (!on) return out;
  const tls: NonNullable<TemporalConnectionOptions['tls']> = {};
  if (cfg.ca !== '') tls.serverRootCACertificate = readPem(cfg.ca, 'OD_TEMPORAL_TLS_CA');
  if (cfg.cert !== '') {
    assertPrivate(cfg.key, 'OD_TEMPORAL_TLS_KEY');
    tls.clientCertPair = { crt: readPem(cfg.cert, 'OD_TEMPORAL_TLS_CERT'), key: readPem(cfg.key, 'OD_TEMPORAL_TLS_KEY') };
  }
  if (cfg.serverName !== '') tls.serverNameOverride = cfg.serverName;
  out.tls = tls;
  return out;
}

/** temporalConnectionOptions of the environment: what every service process passes to its connection. */
export function temporalConnectionFromEnv(env: NodeJS.ProcessEnv = process.env): TemporalConnectionOptions {
  return temporalConnectionOptions(temporalConnectionConfigOf(env));
}
