import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** `git` as `who` (author and committer), in `cwd`: its trimmed stdout, or an error naming the command and git's complaint. */
export function gitAs(who: string): (cwd: string, args: string[]) => Promise<string> {
  const env = { GIT_AUTHOR_NAME: who, GIT_AUTHOR_EMAIL: `${who}@example.invalid`, GIT_COMMITTER_NAME: who, GIT_COMMITTER_EMAIL: `${who}@example.invalid` };
  return (cwd, args) =>
    new Promise((resolve, reject) => {
      execFile('git', args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8' }, (err, stdout, stderr) => {
        if (err) reject(new Error(`git ${args.join(' ')}: ${stderr.trim() || err.message}`));
        else resolve(stdout.trim());
      });
    });
}

/** A repository at `repoRoot` on `main` with one commit (a README of `title`), its `.worktrees/` kept out of its status. */
export async function initRepo(git: (cwd: string, args: string[]) => Promise<string>, repoRoot: string, title: string): Promise<void> {
  mkdirSync(repoRoot, { recursive: true });
  await git(repoRoot, ['init', '-q', '-b', 'main']);
  writeFileSync(path.join(repoRoot, 'README.md'), `# ${title}\n`);
  await git(repoRoot, ['add', '.']);
  await git(repoRoot, ['commit', '-q', '-m', 'initial']);
  writeFileSync(path.join(repoRoot, '.git', 'info', 'exclude'), '.worktrees/\n');
}
