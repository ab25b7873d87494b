import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assertUnderAllowedRoots, normalizePath, PathRefusal } from '../../src/git/paths';
import { readProjection, writeProjection } from '../../src/git/projection';
import { makeRepo, projection, type Fixture } from './git-fixture';

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'od-paths-')));
  mkdirSync(path.join(dir, 'roots/allowed/repo/sub'), { recursive: true });
  mkdirSync(path.join(dir, 'outside/secret'), { recursive: true });
  symlinkSync(path.join(dir, 'roots/allowed'), path.join(dir, 'alias'));
  symlinkSync(path.join(dir, 'outside'), path.join(dir, 'roots/allowed/escape'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function refusal(p: Promise<unknown>): Promise<PathRefusal> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof PathRefusal)) throw new Error(`expected a PathRefusal, got ${String(err)}`);
  return err;
}

describe('normalizePath', () => {
  it('gives symlink, `..` and plain spellings of one directory the same path', async () => {
    const real = path.join(dir, 'roots/allowed/repo');
    expect(await normalizePath(path.join(dir, 'alias/repo'))).toBe(real);
    expect(await normalizePath(`${dir}/roots/allowed/repo/sub/..`)).toBe(real);
    expect(await normalizePath(`${dir}/outside/../roots/./allowed/repo/`)).toBe(real);
  });

  it('gives a path that does not exist yet the same spelling whichever way it is written', async () => {
    const expected = path.join(dir, 'roots/allowed/repo/.worktrees/new-one');
    expect(await normalizePath(path.join(dir, 'alias/repo/.worktrees/new-one'))).toBe(expected);
    expect(await normalizePath(`${dir}/roots/allowed/repo/sub/../.worktrees/x/../new-one`)).toBe(expected);
    expect(await normalizePath(`${dir}/roots/allowed/escape/../roots/allowed/repo/.worktrees/new-one`)).toBe(expected);
    expect(existsSync(expected)).toBe(false);
  });

  it('resolves `..` physically after a symlink, as the kernel does', async () => {
    // escape -> outside, so escape/.. is the parent of outside, not roots/allowed. (Template strings:
    // path.join would collapse the `..` lexically before the code under test sees it.)
    expect(await normalizePath(`${dir}/roots/allowed/escape/../roots/allowed/repo`)).toBe(path.join(dir, 'roots/allowed/repo'));
    expect(await normalizePath(`${dir}/roots/allowed/escape/../missing/x`)).toBe(path.join(dir, 'missing/x'));
    expect(await normalizePath(`${dir}/roots/allowed/escape/../missing/../outside/secret`)).toBe(path.join(dir, 'outside/secret'));
  });
});

describe('assertUnderAllowedRoots', () => {
  const roots = (): string[] => [path.join(dir, 'roots/allowed')];

  it('accepts the root itself and paths below it, returning the normalised path', async () => {
    expect(await assertUnderAllowedRoots(path.join(dir, 'roots/allowed'), roots())).toBe(path.join(dir, 'roots/allowed'));
    expect(await assertUnderAllowedRoots(path.join(dir, 'alias/repo/sub'), roots())).toBe(path.join(dir, 'roots/allowed/repo/sub'));
  });

  it('matches a root given through a symlink against the real location', async () => {
    expect(await assertUnderAllowedRoots(path.join(dir, 'roots/allowed/repo'), [path.join(dir, 'alias')])).toBe(path.join(dir, 'roots/allowed/repo'));
  });

  it('refuses a path that escapes through a symlink inside the root', async () => {
    const err = await refusal(assertUnderAllowedRoots(path.join(dir, 'roots/allowed/escape/secret'), roots()));
    expect(err.code).toBe('path_outside_allowed_roots');
    expect(err.message).not.toContain(dir);
    expect(err.message).not.toContain('secret');
  });

  it('refuses a path that escapes through `..`', async () => {
    const err = await refusal(assertUnderAllowedRoots(`${dir}/roots/allowed/repo/../../../outside/secret`, roots()));
    expect(err.code).toBe('path_outside_allowed_roots');
  });

  it('refuses a sibling that merely shares the root as a string prefix', async () => {
    mkdirSync(path.join(dir, 'roots/allowed-not'));
    expect((await refusal(assertUnderAllowedRoots(path.join(dir, 'roots/allowed-not'), roots()))).code).toBe('path_outside_allowed_roots');
  });

  it('fails closed with no roots', async () => {
    expect((await refusal(assertUnderAllowedRoots(path.join(dir, 'roots/allowed/repo'), []))).code).toBe('path_outside_allowed_roots');
    expect((await refusal(assertUnderAllowedRoots(path.join(dir, 'roots/allowed/repo'), ['']))).code).toBe('path_outside_allowed_roots');
  });

  it('refuses a missing path with path_not_found only when asked to', async () => {
    const missing = path.join(dir, 'roots/allowed/repo/nope');
    expect(await assertUnderAllowedRoots(missing, roots())).toBe(missing);
    expect((await refusal(assertUnderAllowedRoots(missing, roots(), { mustExist: true }))).code).toBe('path_not_found');
  });

  // Found by the API fuzz: these reached the caller as 500 (ELOOP / ENAMETOOLONG thrown raw).
  it('refuses paths the kernel cannot resolve (symlink loops, names too long, a file as a directory) as path_not_found, naming none', async () => {
    const allowed = path.join(dir, 'roots/allowed');
    symlinkSync('b', path.join(allowed, 'a'));
    symlinkSync('a', path.join(allowed, 'b'));
    symlinkSync('self', path.join(allowed, 'self'));
    writeFileSync(path.join(allowed, 'file'), 'x');
    const unresolvable = [
      path.join(allowed, 'a'), // realpath: ELOOP
      path.join(allowed, 'a/x/y'), // realpath: ELOOP
      `${allowed}/self/x/../y`, // ELOOP
      path.join(allowed, 'x'.repeat(300)), // a component over 255 bytes: ENAMETOOLONG
      `${allowed}/missing/${'y'.repeat(256)}`, // over-long below a missing component (the kernel says ENOENT there)
      // 2-byte characters in 254-byte components: each fits, the total (> PATH_MAX) does not
      `${allowed}/${Array.from({ length: 20 }, () => 'é'.repeat(127)).join('/')}`,
    ];
    for (const p of unresolvable) {
      for (const mustExist of [false, true]) {
        const err = await refusal(assertUnderAllowedRoots(p, roots(), { mustExist }));
        expect({ p: p.slice(0, 80), code: err.code }).toEqual({ p: p.slice(0, 80), code: 'path_not_found' });
        expect(err.message).not.toContain(dir);
      }
      expect((await refusal(normalizePath(p))).code).toBe('path_not_found');
    }
    // A file used as a directory is simply not there (ENOTDIR), as before.
    expect(await assertUnderAllowedRoots(path.join(allowed, 'file/x'), roots())).toBe(path.join(allowed, 'file/x'));
    expect((await refusal(assertUnderAllowedRoots(path.join(allowed, 'file/x'), roots(), { mustExist: true }))).code).toBe('path_not_found');
    // A loop outside the roots is refused too, not thrown.
    symlinkSync('loop', path.join(dir, 'outside/loop'));
    expect((await refusal(assertUnderAllowedRoots(path.join(dir, 'outside/loop/x'), roots()))).code).toBe('path_not_found');
  });
});

describe('a guarded projection write', () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = makeRepo();
  });
  afterEach(() => fx.cleanup());

  // What the host activity does: check the path, then write. A refused path must write nothing.
  const guardedWrite = async (p: string, roots: string[]): Promise<unknown> => writeProjection(await assertUnderAllowedRoots(p, roots), projection('A', 1));

  it('writes nothing for a worktree reached through a symlink out of the allowed roots', async () => {
    const allowed = path.join(fx.root, 'allowed');
    mkdirSync(allowed);
    symlinkSync(fx.wt1, path.join(allowed, 'wt1-link'));
    expect((await refusal(guardedWrite(path.join(allowed, 'wt1-link'), [allowed]))).code).toBe('path_outside_allowed_roots');
    expect((await refusal(guardedWrite(`${allowed}/../wt1`, [allowed]))).code).toBe('path_outside_allowed_roots');
    expect(await readProjection(fx.wt1)).toBeNull();
    expect(existsSync(path.join(fx.repo, '.git/worktrees/wt1/overdeck.config'))).toBe(false);
    expect(existsSync(path.join(fx.repo, '.git/worktrees/wt1/config.worktree'))).toBe(false);
  });
});
