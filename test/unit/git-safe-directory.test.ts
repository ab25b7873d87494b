/** safe.directory names exactly the one repository a service git run opens (src/git/safe-directory.ts), never `*`. */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { g } from './git-fixture';
import { safeDirectoryFor } from '../../src/git/safe-directory';
import { refusedServiceGit, serviceGitArgs } from '../../src/git/safe-env';

let base: string;
beforeAll(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'od-safedir-')));
  g(base, 'init', '-q', 'repo');
  g(path.join(base, 'repo'), 'commit', '-q', '--allow-empty', '-m', 'x');
  g(path.join(base, 'repo'), 'worktree', 'add', '-q', '-b', 'feat', path.join(base, 'wt'));
  g(base, 'init', '-q', '--bare', 'bare.git');
  mkdirSync(path.join(base, 'wt', 'sub'));
  symlinkSync(path.join(base, 'wt'), path.join(base, 'link'));
  mkdirSync(path.join(base, 'plain'));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

test('the directory git discovery stops at, realpathed', async () => {
  const at = (p: string, env = {}) => safeDirectoryFor(path.join(base, p), env);
  expect(await at('wt')).toBe(path.join(base, 'wt'));
  expect(await at('wt/sub')).toBe(path.join(base, 'wt'));
  expect(await at('link')).toBe(path.join(base, 'wt'));
  expect(await at('repo')).toBe(path.join(base, 'repo'));
  // Inside a git dir git opens the git dir itself (worktree-less), as for a bare repository.
  expect(await at('repo/.git')).toBe(path.join(base, 'repo', '.git'));
  expect(await at('repo/.git/worktrees/wt')).toBe(path.join(base, 'repo', '.git', 'worktrees', 'wt'));
  expect(await at('bare.git')).toBe(path.join(base, 'bare.git'));
  // A run pinned with GIT_DIR opens its work tree (or git dir) whatever its cwd.
  expect(await at('plain', { GIT_DIR: path.join(base, 'repo', '.git') })).toBe(path.join(base, 'repo', '.git'));
  expect(await at('plain', { GIT_DIR: path.join(base, 'repo', '.git'), GIT_WORK_TREE: path.join(base, 'link') })).toBe(path.join(base, 'wt'));
  expect(await at('missing')).toBeNull();
});

test('one absolute path, never `*`, and a caller cannot set its own', () => {
  const argv = serviceGitArgs(['rev-parse', 'HEAD'], '/srv/wt');
  expect(argv.slice(argv.indexOf('rev-parse') - 2)).toEqual(['-c', 'safe.directory=/srv/wt', 'rev-parse', 'HEAD']);
  expect(serviceGitArgs(['rev-parse']).join(' ')).not.toMatch(/safe\.directory/);
  for (const bad of ['*', '/srv/*', 'relative/wt', '']) expect(() => serviceGitArgs(['rev-parse'], bad)).toThrow(/safe\.directory must name one absolute path/);
  expect(refusedServiceGit(['-c', 'safe.directory=*', 'rev-parse'])).toMatch(/safe\.directory/);
  expect(refusedServiceGit(['-c', 'Safe.Directory=/x', 'rev-parse'])).toMatch(/safe\.directory/);
});
