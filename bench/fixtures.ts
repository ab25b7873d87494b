import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import type { BindOptions, BindRequest } from '../src/client';
import { readExecutorConversation } from '../src/store/bindings';
import type { Principal } from '../src/domain/identity';
import { mapLimit } from './stats';

export const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
};

export function gitRun(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: { ...process.env, ...GIT_IDENTITY, ...env }, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`git ${args.join(' ')} in ${cwd}: ${stderr.trim() || err.message}`));
      else resolve(stdout.trim());
    });
  });
}

export interface Worktree {
  repoRoot: string;
  path: string;
  branch: string;
}

/** A real repository with one commit, its worktree folder excluded from its status. */
export async function makeRepo(base: string, name: string): Promise<string> {
  const repoRoot = path.join(base, name);
  mkdirSync(repoRoot, { recursive: true });
  await gitRun(repoRoot, ['init', '-q', '-b', 'main']);
  writeFileSync(path.join(repoRoot, 'README.md'), `# ${name}\n`);
  await gitRun(repoRoot, ['add', '.']);
  await gitRun(repoRoot, ['commit', '-q', '-m', 'initial']);
  writeFileSync(path.join(repoRoot, '.git', 'info', 'exclude'), '.worktrees/\n');
  return repoRoot;
}

/**
 * `count` real worktrees (`git worktree add -b`), spread over repositories of at most `perRepo`
 * worktrees each (a repository with thousands of worktrees is not what hosts look like). Worktrees
 * of one repository are added one at a time; repositories proceed in parallel.
 */
export async function makeWorktrees(
  base: string,
  prefix: string,
  count: number,
  opts: { perRepo?: number; concurrency?: number; progress?: (done: number, total: number) => void } = {},
): Promise<Worktree[]> {
  const perRepo = opts.perRepo ?? 50;
  const repos = Math.ceil(count / perRepo);
  let done = 0;
  const perRepoLists = await mapLimit(
    Array.from({ length: repos }, (_, r) => r),
    opts.concurrency ?? 2,
    async (r) => {
      const repoRoot = await makeRepo(base, `${prefix}-${r}`);
      const list: Worktree[] = [];
      const n = Math.min(perRepo, count - r * perRepo);
      for (let i = 0; i < n; i++) {
        const name = `wt-${r}-${i}`;
        const wt = path.join(repoRoot, '.worktrees', name);
        await gitRun(repoRoot, ['worktree', 'add', '-q', '-b', `${prefix}/${name}`, wt]);
        list.push({ repoRoot, path: wt, branch: `${prefix}/${name}` });
        opts.progress?.(++done, count);
      }
      return list;
    },
  );
  return perRepoLists.flat();
}

export const executor = (workerId: string): Principal => ({ kind: 'executor', id: `exec-${workerId}`, workerId });

/** The bind an agent worker's session makes for a fresh worktree. */
/** An owner change's options as the API sends it (bind, reclaim): the new owner's conversation read from its worker's binding, carried in the message. */
export async function asTheApi(pool: Pool, workerId: string): Promise<BindOptions> {
  return { conversation: await readExecutorConversation(pool, workerId) };
}

export function bindRequest(wt: Worktree, i: number): BindRequest {
  const workerId = `bench-worker-${i}`;
  return {
    repoRoot: wt.repoRoot,
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: `bench-session-${i}`,
    runtime: 'codex-cli',
    worker: { runId: `bench-run-${i}`, workerId },
    principal: executor(workerId),
    lane: 'bench',
    planRef: 'docs/plans/bench.md',
  };
}
