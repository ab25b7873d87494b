import { type BranchStatus, BranchStatusSchema } from '../domain/branch';
import { git } from './exec';

export { type BranchStatus, BranchStatusSchema };

const BASES = ['main', 'master', 'trunk'];

/**
 * HEAD and ahead/behind against the repository's base branch (the first of main, master, trunk
 * that exists): HEAD and the bases in one `show-ref` (HEAD even when detached; exit 1 when nothing
 * matched, an unborn HEAD included), then one rev-list for the counts. Two processes: this runs
 * beside every projection write.
 */
export async function describeBranch(worktreePath: string, now: () => string = () => new Date().toISOString()): Promise<BranchStatus | null> {
  // Full names as patterns (show-ref matches a pattern against the end of a name, whole components only).
  const shown = await git(['show-ref', '--head', ...BASES.map((b) => `refs/heads/${b}`)], { cwd: worktreePath, okCodes: [1, 128] });
  if (shown.code === 128) return null;
  const names = new Map<string, string>();
  for (const line of shown.stdout.split('\n')) {
    const m = /^([0-9a-f]{40,64}) (\S+)$/.exec(line.trim());
    if (m) names.set(m[2]!, m[1]!);
  }
  const head = names.get('HEAD');
  if (head === undefined) return null;
  const base = BASES.find((b) => names.has(`refs/heads/${b}`)) ?? null;
  if (!base) return { head, base: null, ahead: null, behind: null, at: now() };
  const counts = await git(['rev-list', '--left-right', '--count', `${base}...HEAD`], { cwd: worktreePath, okCodes: [128] });
  const m = /^(\d+)\s+(\d+)/.exec(counts.stdout.trim());
  return { head, base, behind: m ? Number(m[1]) : null, ahead: m ? Number(m[2]) : null, at: now() };
}
