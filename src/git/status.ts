import { z } from 'zod';
import { git } from './exec';

/** What the host agent reports about a worktree's branch for observability (docs/ownership-record.md#the-live-view, `projectionSync.branch`): never authoritative. */
export const BranchStatusSchema = z.strictObject({
  head: z.string(),
  base: z.string().nullable(),
  ahead: z.number().int().nullable(),
  behind: z.number().int().nullable(),
  at: z.string(),
});
export type BranchStatus = z.infer<typeof BranchStatusSchema>;

const BASES = ['main', 'master', 'trunk'];

/**
 * HEAD and ahead/behind against the repository's base branch (the first of main, master, trunk
 * that exists): the base and HEAD asked at once (two processes side by side), then one rev-list
 * for the counts.
 */
export async function describeBranch(worktreePath: string, now: () => string = () => new Date().toISOString()): Promise<BranchStatus | null> {
  const [refs, headOut] = await Promise.all([
    git(['for-each-ref', '--format=%(refname:short)', ...BASES.map((b) => `refs/heads/${b}`)], { cwd: worktreePath, okCodes: [128] }),
    git(['rev-parse', 'HEAD'], { cwd: worktreePath, okCodes: [128] }),
  ]);
  if (refs.code !== 0) return null;
  const present = new Set(refs.stdout.split('\n').filter(Boolean));
  const base = BASES.find((b) => present.has(b)) ?? null;
  const head = headOut.stdout.trim();
  if (!/^[0-9a-f]{40,64}$/.test(head)) return null;
  if (!base) return { head, base: null, ahead: null, behind: null, at: now() };
  const counts = await git(['rev-list', '--left-right', '--count', `${base}...HEAD`], { cwd: worktreePath, okCodes: [128] });
  const m = /^(\d+)\s+(\d+)/.exec(counts.stdout.trim());
  return { head, base, behind: m ? Number(m[1]) : null, ahead: m ? Number(m[2]) : null, at: now() };
}
