import { git } from './exec';
import { FULL_SHA } from '../domain/identity';

/**
 * The few git questions landing inference asks, against one repository (its common dir or any
 * worktree of it). Through the service's git (exec.ts): every log/show/diff also gets
 * `--no-textconv --no-ext-diff`, so a patch is git's own, never one a repository's driver made.
 */

export class RepoGit {
  constructor(readonly cwd: string) {}

  async raw(args: string[], okCodes: number[] = []): Promise<{ code: number; stdout: string }> {
    const r = await git(args, { cwd: this.cwd, okCodes });
    return { code: r.code, stdout: r.stdout };
  }

  async resolve(rev: string): Promise<string | null> {
    const r = await this.raw(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], [1, 128]);
    const out = r.stdout.trim();
    return r.code === 0 && FULL_SHA.test(out) ? out : null;
  }

  /** `rev-list` lines (full ids), oldest first when `reverse`. */
  async revList(args: string[], reverse = true): Promise<string[]> {
    const r = await this.raw(['rev-list', ...(reverse ? ['--reverse'] : []), ...args], [128]);
    if (r.code !== 0) return [];
    return r.stdout.split('\n').filter((s) => FULL_SHA.test(s));
  }

  async parents(sha: string): Promise<string[]> {
    const r = await this.raw(['rev-list', '--parents', '--max-count=1', sha], [128]);
    const [, ...ps] = r.stdout.trim().split(' ');
    return r.code === 0 ? ps.filter((s) => FULL_SHA.test(s)) : [];
  }

  async isAncestor(a: string, b: string): Promise<boolean> {
    return (await this.raw(['merge-base', '--is-ancestor', a, b], [1, 128])).code === 0;
  }

  async tree(sha: string): Promise<string | null> {
    return this.resolveObj(`${sha}^{tree}`);
  }

  private async resolveObj(rev: string): Promise<string | null> {
    const r = await this.raw(['rev-parse', '--verify', '--quiet', rev], [1, 128]);
    const out = r.stdout.trim();
    return r.code === 0 && FULL_SHA.test(out) ? out : null;
  }

  /** The commit message (body included), for `-x` trailers. */
  async message(sha: string): Promise<string> {
    const r = await this.raw(['log', '-1', '--format=%B', sha], [128]);
    return r.code === 0 ? r.stdout : '';
  }

  /** `git patch-id --stable` of each non-merge commit (merges and empty diffs are absent from the map). */
  async patchIds(shas: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (let i = 0; i < shas.length; i += 200) {
      const chunk = shas.slice(i, i + 200);
      const log = await this.raw(['log', '--no-walk=unsorted', '--no-merges', '-p', '--no-color', '--no-ext-diff', '--format=commit %H', ...chunk], [128]);
      if (log.code !== 0) continue;
      const ids = await pipe(this.cwd, ['patch-id', '--stable'], log.stdout);
      for (const line of ids.split('\n')) {
        const [pid, commit] = line.trim().split(' ');
        if (pid && commit && FULL_SHA.test(commit)) out.set(commit, pid);
      }
    }
    return out;
  }

  /** A combined patch-id of the range base..tip (the diff a squash of it would make), or null. */
  async rangePatchId(base: string | null, tip: string): Promise<string | null> {
    const args = base ? ['diff', '--no-color', '--no-ext-diff', base, tip] : ['show', '--no-color', '--format=', tip];
    const diff = await this.raw(args, [128]);
    if (diff.code !== 0 || diff.stdout === '') return null;
    const id = (await pipe(this.cwd, ['patch-id', '--stable'], diff.stdout)).trim().split(' ')[0];
    return id && FULL_SHA.test(id) ? id : null;
  }
}

/** `git <args>` reading `input` on its stdin; its stdout ('' when it fails: no id, never a wrong one). */
async function pipe(cwd: string, args: string[], input: string): Promise<string> {
  const r = await git(args, { cwd, input }).catch(() => null);
  return r?.stdout ?? '';
}
