import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';

/**
 * Messages the service vouches for. The principal of a message travels inside it (who asks for a
 * reclaim, who reports a landing), so a process that merely reaches the Temporal frontend could
 * name any principal. Every message a service process sends carries a `seal` field; this codec
 * authenticates it with an HMAC-SHA256 over the payload as sent and the workflow id it is addressed
 * to, keyed by a secret only service processes hold. Decoding, on the worker, rewrites the field to
 * what was proven: `{ ok: true, kid, ... }` for a valid seal, `{ ok: false }` for anything else
 * (no seal, a forged `ok`, another workflow's seal, an unknown key). The workflow refuses what is
 * not `ok` (src/workflows/seal.ts), before anything enters its history.
 *
 * Why a codec and not the workflow: workflow code holds no secret (its inputs are history, readable
 * by anyone allowed to read histories), and a codec runs in the worker process outside the
 * sandbox, on every payload of an activation, live and on replay alike: the same key set gives the
 * same answer. Only payloads addressed to a workflow (serialization context `workflow`) that carry
 * a top-level `seal` are touched; activity arguments and results pass through.
 *
 * The seal binds the payload's bytes and the workflow id; the workflow binds the rest (the update
 * id the seal names, its expiry). Keys rotate: the first key of the key file seals, every key in it
 * verifies, so a key kept after rotation still proves what it sealed, on replay too.
 */

const te = new TextEncoder();
const td = new TextDecoder();
const SEAL = 'od-seal';
const SEAL_KID = 'od-seal-kid';
const DOMAIN = 'od-message-seal-v1';

export interface MessageKey {
  kid: string;
  key: Buffer;
}

/** The keys of one deployment: the first seals, all verify; a key with a window proves nothing sent after it. */
export interface MessageKeyring {
  sealing: MessageKey;
  verifying: ReadonlyMap<string, Buffer>;
  /** kid -> the end of the key's window (ms since the epoch): a retired key, kept so that what it sealed before still replays */
  notAfter?: ReadonlyMap<string, number>;
}

/** A key's public id: the first 16 hex digits of its SHA-256 (never the key). */
export const messageKeyId = (key: Buffer): string => createHash('sha256').update(DOMAIN).update(key).digest('hex').slice(0, 16);

/**
 * A keyring from the key file's text: one base64 key of 32 bytes per line, the sealing key first;
 * `#` lines are comments. A key may end its line with `not-after=<ISO 8601 time>`: it is retired
 * (a leaked key, say) and a message it sealed counts only when its workflow task ran before then,
 * so histories recorded before still replay as they ran (docs/operations.md#the-service-key).
 */
export function parseKeyring(text: string, source: string, nowMs = Date.now()): MessageKeyring {
  const notAfter = new Map<string, number>();
  const keys = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l, i) => {
      const [b64 = '', ...options] = l.split(/\s+/);
      const key = Buffer.from(b64, 'base64');
      if (key.length !== 32) throw new Error(`${source}: key ${i + 1} must be 32 bytes, base64 (openssl rand -base64 32); got ${key.length}`);
      const kid = messageKeyId(key);
      for (const o of options) {
        const m = /^not-after=(.+)$/.exec(o);
        const at = m ? Date.parse(m[1]!) : NaN;
        if (!m || Number.isNaN(at)) throw new Error(`${source}: key ${i + 1}: unknown option ${JSON.stringify(o)} (only not-after=<ISO 8601 time>)`);
        notAfter.set(kid, at);
      }
      return { kid, key };
    });
  if (keys.length === 0) throw new Error(`${source}: no key (one base64 key of 32 bytes per line, the sealing key first)`);
  const sealing = keys[0]!;
  const end = notAfter.get(sealing.kid);
  if (end !== undefined && end <= nowMs)
    throw new Error(`${source}: the first key (the one that seals) was retired at ${new Date(end).toISOString()}: put a new key first`);
  return { sealing, verifying: new Map(keys.map((k) => [k.kid, k.key])), notAfter };
}

/** A key file anyone but its owner can read or write is a key every local user holds: refused, with the fix. */
export function assertPrivateKeyFile(file: string): void {
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new Error(`${file}: the service key file is readable or writable by others (mode ${mode.toString(8).padStart(4, '0')}): chmod 600 ${file}`);
  }
}

/**
 * The deployment's keyring from OD_SERVICE_KEY_FILE. A file that is named must exist. Unnamed, the
 * default file under the data directory is used, and created with a new random key when missing:
 * every process of one machine's `npm start` (and of the tests' stacks) shares it. A deployment on
 * several machines names one file and gives it to every service process (docs/operations.md).
 */
export function loadKeyring(cfg: { serviceKeyFile: string; dataDir: string }): MessageKeyring {
  const named = cfg.serviceKeyFile !== '';
  const file = named ? cfg.serviceKeyFile : path.join(cfg.dataDir, 'service.key');
  if (!named) createKeyFileIfMissing(file);
  assertPrivateKeyFile(file);
  return parseKeyring(readFileSync(file, 'utf8'), file);
}

/**
 * The keyring when this process can read it, else null: for a command that may run where no
 * service key is (`od-worktree reconcile` on an agent's host). Never creates the default file: a
 * key made up here would match no service process.
 */
export function readKeyringIfPresent(cfg: { serviceKeyFile: string; dataDir: string }): MessageKeyring | null {
  const file = cfg.serviceKeyFile !== '' ? cfg.serviceKeyFile : path.join(cfg.dataDir, 'service.key');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  return parseKeyring(text, file);
}

/** Every key of the keyring, the sealing key first, each once (the tenure hashes, src/keys/tenure.ts). */
export function keyringKeys(keys: MessageKeyring): Buffer[] {
  return [keys.sealing.key, ...[...keys.verifying].filter(([kid]) => kid !== keys.sealing.kid).map(([, key]) => key)];
}

/** Written once, atomically enough for processes starting together: created exclusively, mode 0600. */
export function createKeyFileIfMissing(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return waitForContent(file);
    throw err;
  }
  try {
    writeSync(fd, `# the service's message key (docs/operations.md#the-service-key): never share it with agents\n${randomBytes(32).toString('base64')}\n`);
  } finally {
    closeSync(fd);
  }
}

/** Another process created the file a moment ago: its key is there once it has written it. */
function waitForContent(file: string): void {
  for (let i = 0; i < 200; i++) {
    if (/^[A-Za-z0-9+/]{43}=$/m.test(readFileSync(file, 'utf8'))) return;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  }
}

/** What a sender puts in `seal`: the update it is (none for signals and starts) and when it stops counting. */
export interface SealRequest {
  messageId?: string;
  exp?: number;
}

function mac(key: Buffer, ctx: { namespace: string; workflowId: string }, encoding: Uint8Array, data: Uint8Array): Buffer {
  return createHmac('sha256', key).update(`${DOMAIN}\0${ctx.namespace}\0${ctx.workflowId}\0`).update(encoding).update('\0').update(data).digest();
}

const JSON_PLAIN = te.encode('json/plain');
const encodingOf = (p: Payload): string | null => (p.metadata?.encoding ? td.decode(p.metadata.encoding) : null);
/** `null`, as the JSON converter writes it: what a payload the workflow must not read becomes. */
const jsonNull = (): Payload => ({ metadata: { encoding: JSON_PLAIN }, data: te.encode('null') });

type Judged = { kind: 'object'; value: Record<string, unknown> } | { kind: 'other'; value: unknown } | { kind: 'unreadable' };

/**
 * A payload's value as the workflow's JSON converter will see it, judged here on the parsed value
 * and never on its bytes: a key spelled with an escape (`"se\u0061l"`), written twice, or hidden
 * in bytes another decoder reads otherwise all parse to the same object, and it is that object,
 * re-serialised, that the workflow receives.
 */
function judge(p: Payload): Judged {
  const encoding = encodingOf(p);
  if (encoding === 'binary/null') return { kind: 'other', value: undefined };
  if (encoding !== 'json/plain' || !p.data) return { kind: 'unreadable' };
  let value: unknown;
  try {
    value = JSON.parse(td.decode(p.data));
  } catch {
    return { kind: 'unreadable' };
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? { kind: 'object', value: value as Record<string, unknown> }
    : { kind: 'other', value };
}

export class MessageSealCodec implements PayloadCodec {
  /** `keys` is readable: the workers derive the tenure hashes (src/keys/tenure.ts) from the very keys that prove their seals. */
  constructor(readonly keys: MessageKeyring) {}

  /** Seals what a service process asks to seal: a JSON object addressed to a workflow whose `seal` is a request (no `ok`: a proven seal is never sealed again). */
  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    if (context?.type !== 'workflow') return payloads;
    return payloads.map((p) => {
      const j = judge(p);
      if (j.kind !== 'object' || !Object.hasOwn(j.value, 'seal')) return p;
      const request = j.value.seal;
      if (typeof request !== 'object' || request === null || Object.hasOwn(request, 'ok')) return p;
      const seal = mac(this.keys.sealing.key, context, p.metadata!.encoding!, p.data!);
      return { ...p, metadata: { ...p.metadata, [SEAL]: te.encode(seal.toString('base64')), [SEAL_KID]: te.encode(this.keys.sealing.kid) } };
    });
  }

  /**
   * Every payload addressed to a workflow leaves here as what was proven, whatever its spelling or
   * encoding: a JSON object with a `seal` gets the seal this codec proved (`ok: true` and the
   * key's id and window, or `{ ok: false }`), re-serialised so the workflow reads exactly what was
   * judged; any other JSON value is re-serialised as parsed; a payload the JSON converter would
   * read otherwise than this codec (an unknown encoding, bytes that do not parse) becomes `null`,
   * which no handler takes for a message. Only `binary/null` (undefined) passes as it is.
   */
  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    if (context?.type !== 'workflow') return payloads;
    return payloads.map((p) => {
      const j = judge(p);
      const { [SEAL]: _s, [SEAL_KID]: _k, ...metadata } = p.metadata ?? {};
      // The workflow reads the value as judged here, never the sender's bytes.
      const judged = (value: unknown): Payload => ({ metadata, data: te.encode(JSON.stringify(value)) });
      if (j.kind === 'unreadable') return jsonNull();
      if (j.kind === 'other') return j.value === undefined ? p : judged(j.value);
      if (!Object.hasOwn(j.value, 'seal')) return judged(j.value);
      const kid = this.verify(p, context);
      const claimed = typeof j.value.seal === 'object' && j.value.seal !== null ? (j.value.seal as Record<string, unknown>) : {};
      // What was proven replaces whatever the sender wrote: an `ok`, `kid` or `notAfter` written by hand is never believed.
      const { ok: _ok, kid: _kid, notAfter: _na, ...asked } = claimed;
      const notAfter = kid === null ? undefined : this.keys.notAfter?.get(kid);
      const seal = kid === null ? { ok: false } : { ...asked, ok: true, kid, ...(notAfter !== undefined ? { notAfter } : {}) };
      return judged({ ...j.value, seal });
    });
  }

  /** The id of the key that sealed this payload for this workflow, or null. */
  private verify(p: Payload, ctx: { namespace: string; workflowId: string }): string | null {
    const sealB64 = p.metadata?.[SEAL];
    const kid = p.metadata?.[SEAL_KID] ? td.decode(p.metadata[SEAL_KID]) : '';
    const key = this.keys.verifying.get(kid);
    if (!sealB64 || !key || !p.metadata?.encoding || !p.data) return null;
    const given = Buffer.from(td.decode(sealB64), 'base64');
    const want = mac(key, ctx, p.metadata.encoding, p.data);
    return given.length === want.length && timingSafeEqual(given, want) ? kid : null;
  }
}
