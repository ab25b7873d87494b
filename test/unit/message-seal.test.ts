import { randomBytes } from 'node:crypto';
import type { Payload } from '@temporalio/common';
import { MessageSealCodec, parseKeyring } from '../../src/keys/message-seal';
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

test('payloads without a seal, and activity payloads, pass through untouched', async () => {
  const plain = json({ a: 1 });
  expect(await service.encode([plain], wf('ownership/a'))).toEqual([plain]);
  expect(await service.decode([plain], wf('ownership/a'))).toEqual([plain]);
  const activity = json(msg);
  expect(await service.decode([activity], { type: 'activity', namespace: 'default', activityId: '1', workflowId: 'w', isLocal: false } as never)).toEqual([
    activity,
  ]);
});

test('a key file with a short key or no key is refused, never read as "no seal"', () => {
  expect(() => parseKeyring('abc\n', 'f')).toThrow(/32 bytes/);
  expect(() => parseKeyring('# only a comment\n', 'f')).toThrow(/no key/);
});

test('the workflow side: proven, for this update, unexpired', () => {
  const now = 1_000;
  expect(sealProblem({ seal: { ok: true, messageId: 'u', exp: 2_000 } }, { updateId: 'u', nowMs: now })).toBeNull();
  expect(sealProblem({ seal: { ok: false } }, { updateId: 'u', nowMs: now })).toBe('unsealed');
  expect(sealProblem({}, { updateId: 'u', nowMs: now })).toBe('unsealed');
  expect(sealProblem({ seal: { ok: true, messageId: 'v', exp: 2_000 } }, { updateId: 'u', nowMs: now })).toBe('other_message');
  expect(sealProblem({ seal: { ok: true, messageId: 'u', exp: 999 } }, { updateId: 'u', nowMs: now })).toBe('expired');
  expect(sealProblem({ seal: { ok: true } }, { updateId: null, nowMs: now })).toBeNull();
});
