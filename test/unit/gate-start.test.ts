import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cleanGitEnv } from '../../src/git/exec';
import { makeRepo } from '../support/git-fixture';

/**
 * Every git call the PATH gate or a hook cannot settle in shell starts the gate program afresh
 * (bin/git-gate/od-gate.cjs), so what it loads is paid on every refusal: the git path loads no
 * package (zod alone was a third of its start), and PreToolUse's mode loads its schema and shell
 * parser only when it runs. The same probe sees them in that mode, so it is known to see.
 */

const LOADER = path.resolve(__dirname, '../../bin/git-gate/od-gate.cjs');
const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
const tmp = mkdtempSync(path.join(process.env.OD_TEST_TMP ?? '/tmp', 'gate-start-'));
const probe = path.join(tmp, 'probe.cjs');
writeFileSync(probe, `process.on('exit', () => require('node:fs').writeFileSync(process.env.PROBE_OUT, JSON.stringify(Object.keys(require.cache))));\n`);

function packagesLoaded(name: string, args: string[], cwd: string, input?: string): string[] {
  const out = path.join(tmp, `${name}.json`);
  spawnSync(process.execPath, ['--require', probe, LOADER, ...args], {
    cwd,
    env: cleanGitEnv({ PROBE_OUT: out }),
    encoding: 'utf8',
    ...(input === undefined ? {} : { input }),
  });
  const modules = JSON.parse(readFileSync(out, 'utf8')) as string[];
  return [...new Set(modules.map((m) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(m)?.[1]).filter((p): p is string => p !== undefined))].sort();
}

test('the git path loads no package; the PreToolUse mode loads its schema and parser', () => {
  const repo = makeRepo(1);
  // A source checkout's first start (re)makes the bundle with esbuild: not what a call pays after.
  spawnSync(process.execPath, [LOADER, 'guard'], { cwd: repo.worktrees[0]!.path, env: cleanGitEnv({}) });
  expect(packagesLoaded('git', ['git', REAL_GIT, 'reset', '--hard'], repo.worktrees[0]!.path)).toEqual([]);
  expect(packagesLoaded('guard', ['guard'], repo.worktrees[0]!.path)).toEqual([]);
  const call = JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'git status' }, cwd: repo.worktrees[0]!.path });
  expect(packagesLoaded('pretooluse', ['pretooluse'], repo.worktrees[0]!.path, call)).toEqual(expect.arrayContaining(['mvdan-sh', 'zod']));
});
