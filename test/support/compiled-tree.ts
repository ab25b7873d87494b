import { compiledDirOf, compiledTreeProblem } from '../../stack/compiled';

/**
 * Before any test runs: when OD_WORKTREE_DIST names a tree for the CLI and the services to run
 * (`npm test` names `npm run compile`'s), it must hold these sources, or the tests would judge
 * other code than the one they read. dist/ (OD_WORKTREE_DIST=1) is a build someone asked for by
 * hand, and is taken as it is.
 */
export function assertCompiledTreeCurrent(): void {
  const v = process.env.OD_WORKTREE_DIST;
  if (!v || v === '1') return;
  const problem = compiledTreeProblem(compiledDirOf()!);
  if (problem) throw new Error(`OD_WORKTREE_DIST: ${problem}`);
}
