/**
 * TLS, mTLS and the API key on every Temporal connection of the service (src/infra/temporal-connection.ts,
 * docs/operations.md#temporal-tls). The `temporal` CLI's dev server has no TLS flags, so the
 * frontend here is the real dev server of the test stack behind a TLS-terminating gRPC proxy (node's
 * HTTP/2 server: certificates from a CA made with openssl, client certificates required, the
 * `authorization` header checked as an API-key frontend does). Through it: the client's
 * Connection, the worker's NativeConnection, connectOwnershipClient configured by environment
 * alone, and `worker.ts --host-agent` itself.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { connectOwnershipClient } from '../../src/exports';
import { temporalConnectionFromEnv, temporalConnectionOptions, temporalConnectionConfigOf } from '../../src/infra/temporal-connection';
import { guardChild } from '../support/process-guard';

const ROOT = path.resolve(__dirname, '../..');
const API_KEY = 'od-test-api-key-0123456789';

let dir: string;
let proxy: http2.Http2SecureServer;
let upstream: http2.ClientHttp2Session;
let address: string;
/** What the proxy saw of each call it let through: the client certificate's CN and the method. */
const seen: { cn: string | undefined; path: string }[] = [];
/** Calls the proxy answered UNAUTHENTICATED for want of the API key. */
let refusedForKey = 0;
const sessions = new Set<http2.ServerHttp2Session>();

const file = (name: string) => path.join(dir, name);

function makeCerts(): void {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=od-test-ca');
  const leaf = (name: string, cn: string, ext: string) => {
    writeFileSync(file(`${name}.ext`), ext);
    ssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    );
    chmodSync(file(`${name}.key`), 0o600);
  };
  leaf('server', 'temporal.test', 'subjectAltName=DNS:temporal.test,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  leaf('client', 'od-worker', 'extendedKeyUsage=clientAuth\n');
  // A CA the server's certificate does not come from.
  ssl('req', '-x509', ...ec, '-keyout', 'other.key', '-out', 'other.pem', '-days', '2', '-subj', '/CN=other-ca');
  writeFileSync(file('api.key'), `${API_KEY}\n`, { mode: 0o600 });
}

/** gRPC over TLS in front of the plaintext dev server: a client certificate from our CA and the API key, or no call. */
async function startProxy(target: string): Promise<void> {
  upstream = http2.connect(`http://${target}`);
  upstream.on('error', () => undefined);
  proxy = http2.createSecureServer({
    key: readFileSync(file('server.key')),
    cert: readFileSync(file('server.pem')),
    ca: readFileSync(file('ca.pem')),
    requestCert: true,
    rejectUnauthorized: true,
  });
  proxy.on('stream', (stream, headers) => {
    if (headers.authorization !== `Bearer ${API_KEY}`) {
      refusedForKey += 1;
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'missing or wrong API key' },
        { endStream: true },
      );
      return;
    }
    const subject = (stream.session?.socket as TLSSocket | undefined)?.getPeerCertificate().subject?.CN;
    const cn = Array.isArray(subject) ? subject.join(',') : subject;
    seen.push({ cn, path: String(headers[':path']) });
    const up = upstream.request({ ...headers, ':authority': target, ':scheme': 'http' });
    let trailers: http2.OutgoingHttpHeaders = {};
    let trailersOnly = false;
    stream.on('data', (b: Buffer) => up.write(b));
    stream.on('end', () => up.end());
    stream.on('error', () => up.close(http2.constants.NGHTTP2_CANCEL));
    stream.on('close', () => !up.closed && up.close(http2.constants.NGHTTP2_CANCEL));
    up.on('response', (h) => {
      trailersOnly = h['grpc-status'] !== undefined;
      if (!stream.closed) stream.respond(h, trailersOnly ? { endStream: true } : { waitForTrailers: true });
    });
    up.on('trailers', (t) => (trailers = t));
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    up.on('data', (b: Buffer) => !stream.closed && !trailersOnly && stream.write(b));
    up.on('end', () => !stream.closed && !trailersOnly && stream.end());
    up.on('error', () => !stream.closed && stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
  });
  proxy.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  proxy.on('sessionError', () => undefined);
  proxy.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  address = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

const fullEnv = (): NodeJS.ProcessEnv => ({
  OD_TEMPORAL_TLS_CA: file('ca.pem'),
  OD_TEMPORAL_TLS_CERT: file('client.pem'),
  OD_TEMPORAL_TLS_KEY: file('client.key'),
  OD_TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
  OD_TEMPORAL_API_KEY_FILE: file('api.key'),
});

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'od-tls-'));
  makeCerts();
  const target = process.env.TEMPORAL_ADDRESS;
  if (!target) throw new Error('TEMPORAL_ADDRESS is not set: the integration tier starts a dev server (test/support/global-setup.ts)');
  await startProxy(target);
});

afterAll(async () => {
  for (const s of sessions) s.destroy();
  await new Promise<void>((resolve) => proxy?.close(() => resolve()));
  upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** One call to the frontend through a client Connection with `env`'s settings; the error message when refused. */
async function clientCall(env: NodeJS.ProcessEnv): Promise<string> {
  let conn: Connection | undefined;
  try {
    conn = await Connection.connect({ address, ...temporalConnectionFromEnv(env), connectTimeout: '2s' });
    await conn.workflowService.getSystemInfo({});
    return 'ok';
  } catch (err) {
    return (err as Error).message;
  } finally {
    await conn?.close();
  }
}

async function nativeCall(env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const conn = await NativeConnection.connect({ address, ...temporalConnectionFromEnv(env) });
    await conn.workflowService.getSystemInfo({});
    await conn.close();
    return 'ok';
  } catch (err) {
    return (err as Error).message;
  }
}

test('the client Connection: TLS verified against the CA, the client certificate and the API key', async () => {
  seen.length = 0;
  expect(await clientCall(fullEnv())).toBe('ok');
  expect(seen.some((s) => s.cn === 'od-worker' && s.path.endsWith('/GetSystemInfo'))).toBe(true);
  // Each part is needed: what the connection carries is what the frontend checks.
  expect(await clientCall({})).not.toBe('ok'); // plaintext (the connection before OD_TEMPORAL_TLS*)
  const refusedBefore = refusedForKey;
  expect(await clientCall({ ...fullEnv(), OD_TEMPORAL_API_KEY_FILE: '' })).not.toBe('ok');
  expect(refusedForKey).toBeGreaterThan(refusedBefore);
  expect(await clientCall({ ...fullEnv(), OD_TEMPORAL_TLS_CERT: '', OD_TEMPORAL_TLS_KEY: '' })).not.toBe('ok');
  expect(await clientCall({ ...fullEnv(), OD_TEMPORAL_TLS_CA: file('other.pem') })).not.toBe('ok');
}, 60_000);

test("the worker's NativeConnection: the same settings, the same checks", async () => {
  seen.length = 0;
  expect(await nativeCall(fullEnv())).toBe('ok');
  expect(seen.some((s) => s.cn === 'od-worker')).toBe(true);
  expect(await nativeCall({})).not.toBe('ok');
  expect(await nativeCall({ ...fullEnv(), OD_TEMPORAL_TLS_CERT: '', OD_TEMPORAL_TLS_KEY: '' })).not.toBe('ok');
}, 60_000);

test('connectOwnershipClient takes the deployment’s settings from the environment', async () => {
  const saved = { ...process.env };
  Object.assign(process.env, fullEnv());
  try {
    const c = await connectOwnershipClient({ address, hostId: 'tls-host', serviceKeyFile: process.env.OD_SERVICE_KEY_FILE ?? '' });
    try {
      await c.temporal.workflowService.getSystemInfo({});
    } finally {
      await c.close();
    }
  } finally {
    for (const k of Object.keys(fullEnv())) if (saved[k] === undefined) delete process.env[k];
  }
}, 60_000);

test('worker.ts --host-agent polls its queue through TLS, mTLS and the API key', async () => {
  seen.length = 0;
  const child = spawn(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['worker.ts', '--host-agent'], {
    cwd: ROOT,
    env: { ...process.env, ...fullEnv(), TEMPORAL_ADDRESS: address, OD_HOST_ID: 'tls-host', DATABASE_URL: '', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  guardChild(child, { stopSignal: 'SIGTERM', graceMs: 10_000 });
  let text = '';
  child.stdout.on('data', (b: Buffer) => (text += b.toString()));
  child.stderr.on('data', (b: Buffer) => (text += b.toString()));
  try {
    const deadline = Date.now() + 60_000;
    while (!seen.some((s) => s.path.endsWith('/PollActivityTaskQueue')) && child.exitCode === null && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect([child.exitCode, text.includes('worker running') || text]).toEqual([null, true]);
    expect(seen.filter((s) => s.path.endsWith('/PollActivityTaskQueue')).every((s) => s.cn === 'od-worker')).toBe(true);
    expect(seen.some((s) => s.path.endsWith('/PollActivityTaskQueue'))).toBe(true);
  } finally {
    if (child.exitCode === null) {
      process.kill(-child.pid!, 'SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
}, 90_000);

test('a secret file others can read, and contradictions, are refused at start', () => {
  writeFileSync(file('open.key'), `${API_KEY}\n`, { mode: 0o644 });
  chmodSync(file('open.key'), 0o644);
  expect(() => temporalConnectionFromEnv({ ...fullEnv(), OD_TEMPORAL_API_KEY_FILE: file('open.key') })).toThrow(/readable or writable by others.*chmod 600/);
  chmodSync(file('client.key'), 0o640);
  expect(() => temporalConnectionFromEnv(fullEnv())).toThrow(/OD_TEMPORAL_TLS_KEY .* chmod 600/);
  chmodSync(file('client.key'), 0o600);
  expect(() => temporalConnectionConfigOf({ OD_TEMPORAL_TLS_CERT: file('client.pem') })).toThrow(/go together/);
  expect(() => temporalConnectionConfigOf({ OD_TEMPORAL_TLS: 'off', OD_TEMPORAL_API_KEY_FILE: file('api.key') })).toThrow(/in clear/);
  expect(() => temporalConnectionConfigOf({ OD_TEMPORAL_TLS: 'maybe' })).toThrow(/invalid Temporal connection/);
  expect(() => temporalConnectionFromEnv({ OD_TEMPORAL_TLS_CA: file('api.key') })).toThrow(/not a PEM file/);
  // Nothing configured: plaintext, no key (the dev server); `on` alone: TLS on the system's roots.
  expect(temporalConnectionFromEnv({})).toEqual({});
  expect(temporalConnectionOptions(temporalConnectionConfigOf({ OD_TEMPORAL_TLS: 'on' }))).toEqual({ tls: {} });
  // The key is in the options and nowhere in an error's text.
  let message = '';
  try {
    temporalConnectionFromEnv({ ...fullEnv(), OD_TEMPORAL_TLS: 'off' });
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message).not.toContain(API_KEY);
});
