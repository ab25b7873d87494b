import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import { dataConverterOf } from '../../src/infra/payload-codec';
import { assertPrivateKeyFile, MessageSealCodec, parseKeyring } from '../../src/keys/message-seal';
import { sealProblem } from '../../src/domain/seal';

const key = () => randomBytes(32).toString('base64');
const te = new TextEncoder();
const td = new TextDecoder();
const json = (v: unknown): Payload => ({ metadata: { encoding: te.encode('json/plain') }, data: te.encode(JSON.stringify(v)) });
const valueOf = (p: Payload): unknown => JSON.parse(td.decode(p.data!));
const wf = (workflowId: string) => ({ type: 'workflow' as const, namespace: 'default', workflowId });

const [k1, k2] = [key(), key()];
const service = new MessageSealCodec(parseKeyring(`${k1}\n`, 'test'));
const msg = { executionSessionId: 's', principal: { kind: 'admin', id: 'a' }, seal: { messageId: 'm1', exp: 1 } };

async function roundTrip(
  sender: MessageSealCodec,
  receiver: MessageSealCodec,
  to = 'ownership/a',
  at = 'ownership/a',
  tamper?: (p: Payload) => Payload,
): Promise<unknown> {
  let [p] = await sender.encode([json(msg)], wf(to));
  if (tamper) p = tamper(p!);
  const [d] = await receiver.decode([p!], wf(at));
  return (valueOf(d!) as { seal: unknown }).seal;
}

test('a sealed message proves itself to a worker holding the key, for the workflow it was sent to', async () => {
  expect(await roundTrip(service, service)).toMatchObject({ ok: true, messageId: 'm1', exp: 1 });
});

test('anything else reads as not sealed: another workflow, altered bytes, another key, no seal, a hand-written ok', async () => {
  expect(await roundTrip(service, service, 'ownership/a', 'ownership/b')).toEqual({ ok: false });
  expect(
    await roundTrip(service, service, 'ownership/a', 'ownership/a', (p) => ({ ...p, data: te.encode(td.decode(p.data!).replace('"admin"', '"landing"')) })),
  ).toEqual({ ok: false });
  expect(await roundTrip(new MessageSealCodec(parseKeyring(k2, 'other')), service)).toEqual({ ok: false });
  const [raw] = await service.decode([json({ ...msg, seal: { ok: true, kid: 'x', messageId: 'm1', exp: 9e15 } })], wf('ownership/a'));
  expect((valueOf(raw!) as { seal: unknown }).seal).toEqual({ ok: false });
});

test('rotation: the second key of the file still proves what it sealed; the first seals', async () => {
  const old = new MessageSealCodec(parseKeyring(k1, 'old'));
  const rotated = new MessageSealCodec(parseKeyring(`${k2}\n${k1}\n`, 'rotated'));
  expect(await roundTrip(old, rotated)).toMatchObject({ ok: true });
  expect(await roundTrip(rotated, rotated)).toMatchObject({ ok: true });
  expect(await roundTrip(rotated, old)).toEqual({ ok: false });
});

test('payloads without a seal pass as the same value; activity payloads untouched', async () => {
  const plain = json({ a: 1 });
  expect(await service.encode([plain], wf('ownership/a'))).toEqual([plain]);
  expect((await service.decode([plain], wf('ownership/a'))).map(valueOf)).toEqual([{ a: 1 }]);
  const activity = json(msg);
  expect(await service.decode([activity], { type: 'activity', namespace: 'default', activityId: '1', workflowId: 'w', isLocal: false } as never)).toEqual([
    activity,
  ]);
});

/**
 * The attack a review found on the byte-matching codec (it judged only payloads whose bytes held
 * `"seal"`): a raw Temporal client spells the key so that the bytes do not match and the JSON
 * converter still reads `seal`. Each spelling must reach the workflow as `{ ok: false }`.
 */
const forged = { ok: true, kid: 'x', messageId: 'upd-1', exp: 99999999999999 };
const rawJson = (text: string, encoding = 'json/plain'): Payload => ({ metadata: { encoding: te.encode(encoding) }, data: te.encode(text) });
const sealAfterDecode = async (p: Payload): Promise<unknown> => {
  const [d] = await service.decode([p], wf('ownership/a'));
  const v = d!.metadata?.encoding && td.decode(d!.metadata.encoding) === 'json/plain' ? valueOf(d!) : undefined;
  return typeof v === 'object' && v !== null ? (v as { seal?: unknown }).seal : v;
};

test.each([
  ['an escaped key', `{"principal":{"kind":"admin"},"se\\u0061l":${JSON.stringify(forged)}}`],
  ['an escaped key and a real one', `{"seal":{"ok":false},"se\\u0061l":${JSON.stringify(forged)}}`],
  ['the key twice, the forged one last', `{"seal":{},"seal":${JSON.stringify(forged)}}`],
  ['a byte-order mark first', `\ufeff{"se\\u0061l":${JSON.stringify(forged)}}`],
  ['whitespace and another escape', `{ "s\\u0065al" : ${JSON.stringify(forged)} }`],
])('a hand-written seal under %s reads as not sealed', async (_, text) => {
  expect(await sealAfterDecode(rawJson(text))).toEqual({ ok: false });
});

test('a hand-written seal with valid-looking metadata from another payload is not sealed either', async () => {
  const [sealed] = await service.encode([json(msg)], wf('ownership/a'));
  const text = `{"executionSessionId":"s","se\\u0061l":${JSON.stringify(forged)}}`;
  expect(await sealAfterDecode({ ...sealed!, data: te.encode(text) })).toEqual({ ok: false });
});

test('a payload the JSON converter would read otherwise than the codec reaches the workflow as null: other encodings, unparsable bytes', async () => {
  for (const p of [
    rawJson(JSON.stringify({ seal: forged }), 'binary/plain'),
    rawJson(JSON.stringify({ seal: forged }), 'json/protobuf'),
    rawJson(JSON.stringify({ seal: forged }), 'binary/encrypted'),
    rawJson('{"seal":'),
  ]) {
    expect(await sealAfterDecode(p)).toBeNull();
  }
  // An overlong UTF-8 spelling of `a` (C1 A1), which a lax decoder would read as `seal`: the workflow gets the codec's reading, re-serialised.
  const overlong = {
    metadata: { encoding: te.encode('json/plain') },
    data: new Uint8Array([0x7b, 0x22, 0x73, 0x65, 0xc1, 0xa1, 0x6c, 0x22, 0x3a, 0x31, 0x7d]),
  };
  const [d] = await service.decode([overlong], wf('ownership/a'));
  expect(valueOf(d!)).toEqual({ 'se\ufffd\ufffdl': 1 });
  expect(Buffer.from(d!.data!).includes(Buffer.from([0xc1]))).toBe(false);
});

test('an unencrypted forged payload on an encrypted deployment is decrypted as nothing and judged unsealed', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'seal-enc-'));
  writeFileSync(path.join(dir, 'service.key'), `${k1}\n`, { mode: 0o600 });
  writeFileSync(path.join(dir, 'payload.key'), `${key()}\n`, { mode: 0o600 });
  const conv = dataConverterOf({ payloadKeyFile: path.join(dir, 'payload.key'), serviceKeyFile: path.join(dir, 'service.key'), dataDir: dir });
  let ps = [rawJson(`{"se\\u0061l":${JSON.stringify(forged)}}`)];
  // decoding runs the codecs last to first, as the SDK does
  for (const c of [...conv.payloadCodecs!].reverse()) ps = await c.decode(ps, wf('ownership/a'));
  expect((valueOf(ps[0]!) as { seal: unknown }).seal).toEqual({ ok: false });
});

test('a proven seal is never sealed again, and what the sender wrote of ok, kid or a window is replaced', async () => {
  const [p] = await service.encode([json({ a: 1, seal: { ok: true, messageId: 'm' } })], wf('ownership/a'));
  expect(p!.metadata!['od-seal']).toBeUndefined();
  const [q] = await service.encode([json({ a: 1, seal: { messageId: 'm', exp: 5, notAfter: 9e15 } })], wf('ownership/a'));
  const [d] = await service.decode([q!], wf('ownership/a'));
  expect((valueOf(d!) as { seal: unknown }).seal).toEqual({ ok: true, kid: expect.any(String), messageId: 'm', exp: 5 });
});

test('a retired key (not-after) still proves what it sealed, and says until when; the sealing key cannot be retired', async () => {
  const retired = new MessageSealCodec(parseKeyring(`${k2}\n${k1} not-after=2026-01-01T00:00:00Z\n`, 'rotated', Date.parse('2026-06-01T00:00:00Z')));
  expect(await roundTrip(service, retired)).toMatchObject({ ok: true, notAfter: Date.parse('2026-01-01T00:00:00Z') });
  expect(() => parseKeyring(`${k1} not-after=2026-01-01T00:00:00Z\n`, 'f', Date.parse('2026-06-01T00:00:00Z'))).toThrow(/retired/);
  expect(() => parseKeyring(`${k1} not-before=x\n`, 'f')).toThrow(/unknown option/);
});

test('a key file anyone else can read is refused with the fix', async () => {
  const f = path.join(mkdtempSync(path.join(os.tmpdir(), 'seal-mode-')), 'service.key');
  writeFileSync(f, `${k1}\n`, { mode: 0o600 });
  expect(() => assertPrivateKeyFile(f)).not.toThrow();
  chmodSync(f, 0o644);
  expect(() => assertPrivateKeyFile(f)).toThrow(/chmod 600/);
});

test('a key file with a short key or no key is refused, never read as "no seal"', () => {
  expect(() => parseKeyring('abc\n', 'f')).toThrow(/32 bytes/);
  expect(() => parseKeyring('# only a comment\n', 'f')).toThrow(/no key/);
});

test('the workflow side: an update proven, for this update, unexpired, of a key in its window', () => {
  const now = 1_000;
  const u = (seal: unknown) => sealProblem({ seal }, { kind: 'update', updateId: 'u', nowMs: now });
  expect(u({ ok: true, messageId: 'u', exp: 2_000 })).toBeNull();
  expect(u({ ok: false })).toBe('unsealed');
  expect(sealProblem({}, { kind: 'update', updateId: 'u', nowMs: now })).toBe('unsealed');
  expect(u({ ok: true, messageId: 'v', exp: 2_000 })).toBe('other_message');
  expect(u({ ok: true, messageId: 'u', exp: 999 })).toBe('expired');
  expect(u({ ok: true, messageId: 'u', exp: 2_000, notAfter: 999 })).toBe('key_retired');
  // a seal only on the prototype (Object.assign onto an object with a __proto__ key) is no seal
  const viaProto = Object.create({ seal: { ok: true, messageId: 'u', exp: 2_000 } }) as object;
  expect(sealProblem(viaProto, { kind: 'update', updateId: 'u', nowMs: now })).toBe('unsealed');
});

test('the workflow side: a signal names an id and an expiry and acts once; a start is fresh against its run', () => {
  const seen = new Set(['dup']);
  const sig = (seal: unknown) => sealProblem({ seal }, { kind: 'signal', nowMs: 1_000, seen: (id) => seen.has(id) });
  expect(sig({ ok: true, messageId: 'a', exp: 2_000 })).toBeNull();
  expect(sig({ ok: true, exp: 2_000 })).toBe('other_message');
  expect(sig({ ok: true, messageId: 'a' })).toBe('expired');
  expect(sig({ ok: true, messageId: 'a', exp: 999 })).toBe('expired');
  expect(sig({ ok: true, messageId: 'dup', exp: 2_000 })).toBe('replayed');
  expect(sealProblem({ seal: { ok: true, exp: 2_000 } }, { kind: 'start', runStartMs: 1_000 })).toBeNull();
  expect(sealProblem({ seal: { ok: true, exp: 999 } }, { kind: 'start', runStartMs: 1_000 })).toBe('expired');
  expect(sealProblem({ seal: { ok: true } }, { kind: 'start', runStartMs: 1_000 })).toBe('expired');
  expect(sealProblem({ carried: { record: { state: 'released' } } }, { kind: 'start', runStartMs: 1_000 })).toBe('unsealed');
});
