/**
 * The gate program (bin/git-gate/od-gate.cjs loads it): `git <real git> <args...>` judges a git
 * command line for the shim bin/git-gate/git (exit 0: the shim execs the real git; 1: refused,
 * the reason on stderr); `pretooluse` reads an agent CLI's PreToolUse call on stdin
 * (hooks/pretooluse-git-gate.sh); `hook <name> <args...>` is an installed git hook's work that
 * its shell fast path did not finish (hooks/overdeck-hook.sh, the hook's stdin on stdin); `guard`
 * answers the rule for the worktree it runs in (`od-worktree guard`). A refusal exits with its
 * status of GUARD_REFUSALS (src/domain/git-rules.ts). Nothing here runs the command itself.
 */
import { guardHere, runHook } from './hooks';
import { judge } from './judge';

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(argv: readonly string[]): Promise<number> {
  const [mode, ...rest] = argv;
  if (mode === 'git') {
    const [realGit, ...args] = rest;
    if (realGit === undefined) return usage();
    const r = judge({ argv: args, cwd: process.cwd(), env: process.env, realGit });
    for (const line of r.stderr) process.stderr.write(`${line}\n`);
    return r.status;
  }
  if (mode === 'hook') {
    const [name, ...args] = rest;
    if (name === undefined) return usage();
    const r = runHook({ name, args, stdin: await readAll(process.stdin), cwd: process.cwd(), env: process.env, realGit: 'git' });
    for (const line of r.stderr) process.stderr.write(`${line}\n`);
    return r.status;
  }
  if (mode === 'guard') {
    const v = guardHere(process.cwd(), process.env, 'git');
    if (v.message !== undefined) process.stderr.write(`${v.message}\n`);
    return v.status;
  }
  if (mode === 'pretooluse') {
    // Loaded only here: its payload schema's zod and its shell parser cost more than git's judging.
    const { preToolUse } = require('./pretooluse') as typeof import('./pretooluse');
    return preToolUse(process.stdin, process.env, (s) => process.stderr.write(s));
  }
  return usage();
}

function usage(): number {
  process.stderr.write('od-worktree: gate: usage: od-gate git <real git> <args...> | od-gate pretooluse | od-gate hook <name> <args...> | od-gate guard\n');
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
