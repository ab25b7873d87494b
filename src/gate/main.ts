/**
 * The gate program (bin/git-gate/od-gate.cjs loads it): `git <real git> <args...>` judges a git
 * command line for the shim bin/git-gate/git (exit 0: the shim execs the real git; 1: refused,
 * the reason on stderr); `pretooluse` reads an agent CLI's PreToolUse call on stdin
 * (hooks/pretooluse-git-gate.sh). Nothing here runs the command itself.
 */
import { judge } from './judge';
import { preToolUse } from './pretooluse';

async function main(argv: readonly string[]): Promise<number> {
  const [mode, ...rest] = argv;
  if (mode === 'git') {
    const [realGit, ...args] = rest;
    if (realGit === undefined) return usage();
    const r = judge({ argv: args, cwd: process.cwd(), env: process.env, realGit });
    for (const line of r.stderr) process.stderr.write(`${line}\n`);
    return r.status;
  }
  if (mode === 'pretooluse') {
    return preToolUse(process.stdin, process.env, (s) => process.stderr.write(s));
  }
  return usage();
}

function usage(): number {
  process.stderr.write('od-worktree: gate: usage: od-gate git <real git> <args...> | od-gate pretooluse\n');
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`od-worktree: gate: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
