import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { TENURE_HASH_WORDS, TENURE_SECRET, type Tenure } from '../../src/domain/tenure';
import { secretHash } from '../../src/gate/guard';
import { renderProjection } from '../../src/git/projection-format';
import { tenureHashWords, tenureSecret, tenureSecretHash } from '../../src/keys/tenure';
import { createLogger } from '../../src/infra/logger';
import { keyringKeys, parseKeyring } from '../../src/keys/message-seal';

/**
 * The tenure proof's derivation (src/keys/tenure.ts): the contract the hooks and the git gate are
 * built against. A known vector pins it (the hooks' shell side and any other implementation must
 * answer the same), the hash is what `printf %s | sha256sum` prints, and every input counts.
 */

const KEY = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');
const OTHER = Buffer.alloc(32, 0xab);
const T: Tenure = { ownershipId: 'own_01JABCDEFGHJKMNPQRSTVWXYZ0', epoch: 3, executionSessionId: 'session-a' };

test('a known vector: odt1_ + base64url(HMAC-SHA256(K, "overdeck-tenure-v1\\n" + ownership + "\\n" + epoch + "\\n" + session)), no padding', () => {
  // Computed independently: printf 'overdeck-tenure-v1\nown_01JABCDEFGHJKMNPQRSTVWXYZ0\n3\nsession-a' | openssl dgst -sha256 -mac HMAC -macopt hexkey:0001…1f -binary | base64 | tr '+/' '-_' | tr -d '='
  const openssl = execFileSync(
    'sh',
    [
      '-c',
      `printf 'overdeck-tenure-v1\\n${T.ownershipId}\\n${T.epoch}\\n${T.executionSessionId}' | openssl dgst -sha256 -mac HMAC -macopt hexkey:${KEY.toString('hex')} -binary | base64 | tr '+/' '-_' | tr -d '='`,
    ],
    { encoding: 'utf8' },
  ).trim();
  expect(tenureSecret(KEY, T)).toBe(`odt1_${openssl}`);
  expect(tenureSecret(KEY, T)).toBe('odt1_eV0offMLk8-o7-KufzLGa5tljUo3psbYisCt-xFq0dA');
  expect(tenureSecret(KEY, T)).toMatch(TENURE_SECRET);
});

test('the hash is what the hooks check (hooks/overdeck-guard.sh od_mine, src/gate/guard.ts secretHash), with each tool the shell may find', () => {
  const secret = tenureSecret(KEY, T);
  const guard = path.resolve(__dirname, '../../hooks/overdeck-guard.sh');
  // A private git dir holding only the projection, as od-worktree writes it (renderProjection).
  const gd = mkdtempSync(path.join(os.tmpdir(), 'od-tenure-'));
  const at = new Date(0).toISOString();
  writeFileSync(
    path.join(gd, 'overdeck.config'),
    renderProjection({
      ownershipId: T.ownershipId,
      executionSessionId: T.executionSessionId,
      runtime: 'codex-cli',
      conversationId: null,
      conversationUrl: null,
      workerId: 'worker-1',
      runId: null,
      lane: 'lane',
      planRef: 'docs/plans/x.md',
      epoch: T.epoch,
      seq: 1,
      state: 'active',
      claimedAt: at,
      lastSeenAt: at,
      tenureHash: tenureSecretHash(secret),
    }),
  );
  const viaGuard = (s: string) =>
    spawnSync('sh', ['-c', '. "$1"; od_mine "$2"', 'sh', guard, gd], { env: { PATH: process.env.PATH, OVERDECK_TENURE_SECRET: s } }).status;
  try {
    expect(viaGuard(secret)).toBe(0);
    expect(viaGuard(`${secret}x`)).toBe(1);
  } finally {
    rmSync(gd, { recursive: true, force: true });
  }
  expect(secretHash(secret)).toBe(tenureSecretHash(secret));
  expect(tenureSecretHash(secret)).toMatch(/^[0-9a-f]{64}$/);
  // The same digest from each tool that computes it, where this machine has it.
  for (const [tool, args] of [
    ['/usr/bin/sha256sum', []],
    ['/usr/bin/shasum', ['-a', '256']],
    ['/usr/bin/openssl', ['dgst', '-sha256', '-r']],
  ] as const) {
    if (!existsSync(tool)) continue;
    expect([tool, execFileSync(tool, [...args], { input: `${secret}\n`, encoding: 'utf8' }).split(' ')[0]]).toEqual([tool, tenureSecretHash(secret)]);
  }
});

test('every input counts: another ownership, epoch, session or key gives another secret', () => {
  const base = tenureSecret(KEY, T);
  const others = [
    tenureSecret(KEY, { ...T, ownershipId: 'own_01JABCDEFGHJKMNPQRSTVWXYZ1' }),
    tenureSecret(KEY, { ...T, epoch: 4 }),
    tenureSecret(KEY, { ...T, executionSessionId: 'session-b' }),
    tenureSecret(OTHER, T),
    // The separators count: the fields cannot be shifted into one another.
    tenureSecret(KEY, { ownershipId: T.ownershipId, epoch: 31, executionSessionId: T.executionSessionId.slice(1) }),
  ];
  expect(new Set([base, ...others]).size).toBe(others.length + 1);
  // Deterministic: the same tenure, the same secret.
  expect(tenureSecret(Buffer.from(KEY), { ...T })).toBe(base);
});

test('the projection words: one hash per key of the keyring, the sealing key first, each key once', () => {
  const ring = parseKeyring(`# rotated\n${OTHER.toString('base64')}\n${KEY.toString('base64')}\n${OTHER.toString('base64')}\n`, 'test');
  const keys = keyringKeys(ring);
  expect(keys.map((k) => k.toString('hex'))).toEqual([OTHER.toString('hex'), KEY.toString('hex')]);
  const words = tenureHashWords(keys, T);
  expect(words).toBe(`${tenureSecretHash(tenureSecret(OTHER, T))} ${tenureSecretHash(tenureSecret(KEY, T))}`);
  expect(words).toMatch(TENURE_HASH_WORDS);
  // The secret handed out is the first key's, and its hash is the first word.
  expect(words.split(' ')[0]).toBe(tenureSecretHash(tenureSecret(ring.sealing.key, T)));
  expect(() => tenureHashWords([], T)).toThrow();
});

test('the logger never prints a tenure secret: alone, in a claim answer (its fields or nested), or in an environment', () => {
  const out: string[] = [];
  const log = createLogger('trace', new Writable({ write: (chunk, _enc, cb) => (out.push(String(chunk)), cb()) }));
  const secret = tenureSecret(KEY, T);
  const tenure = {
    secret,
    epoch: 3,
    executionSessionId: T.executionSessionId,
    env: { OVERDECK_EXECUTION_SESSION_ID: T.executionSessionId, OVERDECK_EPOCH: '3', OVERDECK_TENURE_SECRET: secret },
  };
  const answer = { ownershipId: T.ownershipId, epoch: 3, tenure };
  log.info({ secret }, 'alone');
  log.info(answer, 'an answer as the fields');
  log.info({ answer }, 'an answer nested');
  log.info({ env: tenure.env }, 'an environment');
  log.info(tenure.env, 'an environment as the fields');
  expect(out).toHaveLength(5);
  expect(out.filter((l) => l.includes(secret))).toEqual([]);
  // What is not secret stays readable.
  expect(out.join('')).toContain(T.ownershipId);
});
