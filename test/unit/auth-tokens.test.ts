import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { PrincipalSchema } from '../../src/domain/identity';
import { createDevTokens, DEV_WORKER_ID, devSecretFile, loadAuthenticator, PrincipalsConfigError, PrincipalsFileSchema } from '../../src/auth/principals';
import { generateToken, hashesEqual, hashToken, MAX_TOKEN_LENGTH, parseBearer } from '../../src/auth/tokens';

const TOKENS = {
  executor: 'exec-token-0123456789abcdefghijklmnopqrstuvwxyz',
  landing: 'landing-token-0123456789abcdefghijklmnopqrstuv',
  admin: 'admin-token-0123456789abcdefghijklmnopqrstuvwxy',
  reader: 'reader-token-0123456789abcdefghijklmnopqrstuvwx',
};

const file = (principals: unknown[]) => JSON.stringify({ principals });
const VALID = file([
  { id: 'orchestrator-1', kind: 'executor', workerId: 'worker_a', runId: 'run_1', tokenSha256: hashToken(TOKENS.executor) },
  { id: 'lander', kind: 'landing', tokenSha256: hashToken(TOKENS.landing) },
  { id: 'ops', kind: 'admin', tokenSha256: hashToken(TOKENS.admin) },
  { id: 'dash', kind: 'reader', tokenSha256: hashToken(TOKENS.reader) },
]);

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'od-auth-'));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

describe('tokens', () => {
  it('hashes to sha256 hex', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
  it('compares hashes, refusing malformed ones instead of throwing', () => {
    expect(hashesEqual(hashToken('a'), hashToken('a'))).toBe(true);
    expect(hashesEqual(hashToken('a'), hashToken('b'))).toBe(false);
    expect(hashesEqual(hashToken('a'), 'abc')).toBe(false);
  });
  it('generates 256-bit base64url tokens', () => {
    const t = generateToken();
    expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generateToken()).not.toBe(t);
  });
  it('parses exactly one bearer token, scheme case-insensitive', () => {
    expect(parseBearer('Bearer abc')).toBe('abc');
    expect(parseBearer('bearer abc')).toBe('abc');
    expect(parseBearer('BEARER abc')).toBe('abc');
    for (const bad of [undefined, '', 'Bearer', 'Bearer ', 'Bearer a b', 'Basic abc', 'Bearerabc', 'abc', 'Bearer a\u0000b', 'Bearer a\tb', 'Bearer ä']) {
      expect(parseBearer(bad)).toBeNull();
    }
    expect(parseBearer(`Bearer ${'a'.repeat(MAX_TOKEN_LENGTH)}`)).toHaveLength(MAX_TOKEN_LENGTH);
    expect(parseBearer(`Bearer ${'a'.repeat(MAX_TOKEN_LENGTH + 1)}`)).toBeNull();
    expect(parseBearer(`Bearer ${'a'.repeat(100_000)}`)).toBeNull();
  });
});

describe('authenticator', () => {
  const auth = () => loadAuthenticator({ tokensJson: VALID });

  it('authenticates every kind to its domain principal', () => {
    const a = auth();
    expect(a.authenticate(`Bearer ${TOKENS.executor}`)).toEqual({ kind: 'executor', id: 'orchestrator-1', workerId: 'worker_a', runId: 'run_1' });
    expect(a.authenticate(`bearer ${TOKENS.landing}`)).toEqual({ kind: 'landing', id: 'lander' });
    expect(a.authenticate(`Bearer ${TOKENS.admin}`)).toEqual({ kind: 'admin', id: 'ops' });
    expect(a.authenticate(`Bearer ${TOKENS.reader}`)).toEqual({ kind: 'reader', id: 'dash' });
    for (const p of a.principals()) expect(PrincipalSchema.parse(p)).toEqual(p);
  });

  it('refuses a wrong token, a malformed header, an empty bearer and an overlong token', () => {
    const a = auth();
    for (const h of [
      undefined,
      '',
      `Bearer ${TOKENS.admin}x`,
      `Bearer ${TOKENS.admin.slice(0, -1)}`,
      TOKENS.admin,
      `Basic ${TOKENS.admin}`,
      `Bearer ${TOKENS.admin} ${TOKENS.admin}`,
      'Bearer ',
      'Bearer',
      `Bearer ${'a'.repeat(MAX_TOKEN_LENGTH + 1)}`,
    ]) {
      expect(a.authenticate(h)).toBeNull();
    }
  });

  it('refuses a token equal to a stored hash', () => {
    expect(auth().authenticate(`Bearer ${hashToken(TOKENS.admin)}`)).toBeNull();
  });

  it('keeps no clear token in what it holds', () => {
    const a = auth();
    const dumps = [JSON.stringify(a.principals()), JSON.stringify(a), inspect(a, { depth: 10, showHidden: true })];
    for (const dump of dumps) for (const t of Object.values(TOKENS)) expect(dump).not.toContain(t);
  });

  it('hands out frozen principals', () => {
    const p = auth().authenticate(`Bearer ${TOKENS.executor}`)!;
    expect(() => {
      (p as { workerId?: string | null }).workerId = 'worker_b';
    }).toThrow();
  });

  it('loads a file, and merges file and inline JSON', () => {
    const f = path.join(tmp, 'principals.json');
    writeFileSync(f, VALID, { mode: 0o600 });
    expect(loadAuthenticator({ tokensFile: f }).principals()).toHaveLength(4);
    const extra = file([{ id: 'ops2', kind: 'admin', tokenSha256: hashToken('another-token') }]);
    const both = loadAuthenticator({ tokensFile: f, tokensJson: extra });
    expect(both.authenticate('Bearer another-token')).toEqual({ kind: 'admin', id: 'ops2' });
    expect(both.authenticate(`Bearer ${TOKENS.reader}`)?.id).toBe('dash');
  });

  it('refuses duplicates across file and inline JSON', () => {
    const f = path.join(tmp, 'principals.json');
    writeFileSync(f, VALID, { mode: 0o600 });
    const dupId = file([{ id: 'ops', kind: 'admin', tokenSha256: hashToken('another-token') }]);
    expect(() => loadAuthenticator({ tokensFile: f, tokensJson: dupId })).toThrow(/duplicate principal id "ops"/);
    const dupHash = file([{ id: 'ops2', kind: 'admin', tokenSha256: hashToken(TOKENS.admin) }]);
    expect(() => loadAuthenticator({ tokensFile: f, tokensJson: dupHash })).toThrow(/same tokenSha256/);
  });

  it('refuses a world-writable principals file', () => {
    const f = path.join(tmp, 'principals.json');
    writeFileSync(f, VALID);
    chmodSync(f, 0o666);
    expect(() => loadAuthenticator({ tokensFile: f })).toThrow(/world-writable/);
  });

  it('refuses to start with no principals configured, or an unreadable file', () => {
    expect(() => loadAuthenticator({})).toThrow(PrincipalsConfigError);
    expect(() => loadAuthenticator({ tokensFile: '', tokensJson: '' })).toThrow(/no principals configured/);
    expect(() => loadAuthenticator({ tokensFile: path.join(tmp, 'missing.json') })).toThrow(/cannot be read/);
  });
});

describe('principals file format', () => {
  const h = (s: string) => hashToken(s);
  const bad = (principals: unknown[], pattern: RegExp) => {
    expect(() => loadAuthenticator({ tokensJson: file(principals) })).toThrow(pattern);
  };

  it('accepts the documented example', () => {
    expect(PrincipalsFileSchema.safeParse(JSON.parse(VALID)).success).toBe(true);
  });
  it('requires a workerId on executors and refuses one elsewhere', () => {
    bad([{ id: 'e', kind: 'executor', tokenSha256: h('x') }], /principals\.0\.workerId: an executor principal must name the workerId/);
    bad([{ id: 'l', kind: 'landing', workerId: 'w', tokenSha256: h('x') }], /principals\.0\.workerId: only executor principals/);
    bad([{ id: 'r', kind: 'reader', runId: 'r', tokenSha256: h('x') }], /principals\.0\.runId: only executor principals/);
  });
  it('refuses the system kind and unknown kinds', () => {
    bad([{ id: 's', kind: 'system', tokenSha256: h('x') }], /principals\.0\.kind: Invalid option/);
    bad([{ id: 's', kind: 'root', tokenSha256: h('x') }], /principals\.0\.kind: Invalid option/);
  });
  it('refuses duplicate ids and duplicate hashes', () => {
    bad(
      [
        { id: 'a', kind: 'admin', tokenSha256: h('x') },
        { id: 'a', kind: 'reader', tokenSha256: h('y') },
      ],
      /duplicate principal id "a"/,
    );
    bad(
      [
        { id: 'a', kind: 'admin', tokenSha256: h('x') },
        { id: 'b', kind: 'reader', tokenSha256: h('x') },
      ],
      /entries 0 and 1 have the same tokenSha256/,
    );
  });
  it('refuses a clear token in place of its hash, without quoting it', () => {
    const clear = 'this-is-a-clear-token-that-must-not-be-echoed';
    let message = '';
    try {
      loadAuthenticator({ tokensJson: file([{ id: 'a', kind: 'admin', tokenSha256: clear }]) });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/tokenSha256: must be the 64 lowercase hex digits/);
    expect(message).not.toContain(clear);
  });
  it('refuses uppercase hex, unknown fields, an empty list and invalid JSON without quoting it', () => {
    bad([{ id: 'a', kind: 'admin', tokenSha256: h('x').toUpperCase() }], /tokenSha256/);
    bad([{ id: 'a', kind: 'admin', token: 'x', tokenSha256: h('x') }], /Unrecognized key: "token"/);
    bad([], /principals: Too small/);
    expect(() => loadAuthenticator({ tokensJson: JSON.stringify({ principals: [], extra: 1 }) })).toThrow(/Unrecognized key: "extra"/);
    expect(() => loadAuthenticator({ tokensJson: '{"principals": [secret-token-text' })).toThrow(/^OD_TOKENS: not valid JSON$/);
  });
});

describe('createDevTokens', () => {
  it('writes hashes to the principals file and clear tokens to a private sibling', () => {
    const f = path.join(tmp, 'sub', 'dev-principals.json');
    const tokens = createDevTokens(f);
    for (const t of Object.values(tokens)) expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set(Object.values(tokens)).size).toBe(4);

    const principalsText = readFileSync(f, 'utf8');
    for (const t of Object.values(tokens)) expect(principalsText).not.toContain(t);
    expect(statSync(f).mode & 0o777).toBe(0o600);
    expect(statSync(devSecretFile(f)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(devSecretFile(f), 'utf8')).tokens).toEqual(tokens);

    const a = loadAuthenticator({ tokensFile: f });
    expect(a.authenticate(`Bearer ${tokens.executor}`)).toEqual({ kind: 'executor', id: 'dev-executor', workerId: DEV_WORKER_ID });
    expect(a.authenticate(`Bearer ${tokens.landing}`)?.kind).toBe('landing');
    expect(a.authenticate(`Bearer ${tokens.admin}`)?.kind).toBe('admin');
    expect(a.authenticate(`Bearer ${tokens.reader}`)?.kind).toBe('reader');
  });

  it('is idempotent, and repairs loose permissions', () => {
    const f = path.join(tmp, 'dev-principals.json');
    const first = createDevTokens(f);
    chmodSync(devSecretFile(f), 0o644);
    expect(createDevTokens(f)).toEqual(first);
    expect(statSync(devSecretFile(f)).mode & 0o777).toBe(0o600);
  });

  it('regenerates both files when they do not agree or one is missing', () => {
    const f = path.join(tmp, 'dev-principals.json');
    const first = createDevTokens(f);
    rmSync(devSecretFile(f));
    const second = createDevTokens(f);
    expect(second.admin).not.toBe(first.admin);
    expect(loadAuthenticator({ tokensFile: f }).authenticate(`Bearer ${second.admin}`)?.kind).toBe('admin');

    const secret = JSON.parse(readFileSync(devSecretFile(f), 'utf8'));
    secret.tokens.admin = generateToken();
    writeFileSync(devSecretFile(f), JSON.stringify(secret));
    const third = createDevTokens(f);
    expect(third.reader).not.toBe(second.reader);
    expect(loadAuthenticator({ tokensFile: f }).authenticate(`Bearer ${third.admin}`)?.kind).toBe('admin');
  });
});
