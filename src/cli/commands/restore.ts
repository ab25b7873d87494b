import path from 'node:path';
import type { Command } from 'commander';
import { EXIT } from '../exit-codes';

/**
 * `od-worktree restore <wip ref | sha | removed worktree path>`: a WIP snapshot back into a worktree
 * of its own, verified byte for byte before it answers (src/git/restore.ts, docs/restore.md).
 * Offline, git only; the restored worktree has no owner until a bind or a reclaim gives it one.
 */

const restoring = () => require('../../git/restore') as typeof import('../../git/restore');
const contract = () => require('../../contract/restore') as typeof import('../../contract/restore');
const config = () => require('../../config') as typeof import('../../config');

/** Exit code of each failure: a snapshot that is not there is "not found", bad arguments are usage, the rest refused. */
const EXIT_OF: Readonly<Record<string, number>> = {
  invalid_argument: EXIT.usage,
  // As the service answers it (400): usage.
  path_outside_allowed_roots: EXIT.usage,
  snapshot_not_found: EXIT.notFound,
};

interface RestoreCliOptions {
  path?: string;
  repo?: string;
  branch?: string;
  json?: boolean;
}

export function registerRestoreCommand(program: Command): void {
  program
    .command('restore')
    .description(
      'recreate a worktree from a WIP snapshot (its files, index, untracked and stored ignored files), verified byte for byte; the restored worktree has no owner (bind or reclaim gives it one)',
    )
    .argument(
      '<snapshot>',
      'a ref under refs/overdeck/wip/ (or the part after it), a snapshot commit id, or the path of a removed worktree (its latest snapshot)',
    )
    .option('--path <path>', 'where to recreate it (default: the path the snapshot recorded)')
    .option('--repo <path>', 'a directory of the repository (default: the current directory)')
    .option('--branch <name>', 'check out this branch instead of the recorded one (created at the recorded HEAD when missing)')
    .option('--json', 'machine-readable output')
    .action(async (arg: string, o: RestoreCliOptions) => {
      const json = o.json === true;
      const { RestoreError, findSnapshotForPath, resolveSnapshotArg, restoreWorktree } = restoring();
      const { RestoreOutputSchema, RestoreFailureOutputSchema } = contract();
      const failed = (code: import('../../contract/restore').RestoreReasonCode, message: string, details?: Record<string, unknown>) => {
        const body = RestoreFailureOutputSchema.parse({ ok: false, code, error: message, ...(details !== undefined ? { details } : {}) });
        if (json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
        const where = typeof details?.worktreePath === 'string' ? ` (the worktree is left at ${details.worktreePath} for inspection)` : '';
        process.stderr.write(`od-worktree: restore: ${code}: ${message}${where}\n`);
        process.exitCode = EXIT_OF[code] ?? EXIT.refused;
      };
      try {
        const repo = path.resolve(o.repo ?? process.cwd());
        const named = await resolveSnapshotArg(repo, arg);
        let pick: { snapshotRef: string } | { sha: string };
        let target = o.path;
        if ('path' in named) {
          const found = await findSnapshotForPath(repo, named.path);
          if (found === null) {
            failed('snapshot_not_found', 'no snapshot ref, commit or snapshot of a worktree at that path matches');
            return;
          }
          pick = { snapshotRef: found.ref };
          target ??= path.resolve(named.path);
        } else pick = named;
        const out = RestoreOutputSchema.parse(
          await restoreWorktree({
            repo,
            ...pick,
            ...(target !== undefined ? { path: target } : {}),
            ...(o.branch !== undefined ? { branch: o.branch } : {}),
            allowedRoots: config().loadConfig().allowedRoots,
          }),
        );
        process.stdout.write(json ? `${JSON.stringify(out, null, 2)}\n` : plain(out));
      } catch (err) {
        if (err instanceof RestoreError) {
          failed(err.code, err.message, err.details);
          return;
        }
        throw err;
      }
    });
}

const WHY: Readonly<Record<string, string>> = {
  detached_when_taken: 'HEAD was detached when the snapshot was taken',
  not_recorded: 'the snapshot does not record a branch',
  branch_gone: 'the branch no longer exists',
  branch_moved: 'the branch has moved since the snapshot',
  branch_in_use: 'another worktree has the branch checked out',
};

function plain(o: import('../../contract/restore').RestoreOutput): string {
  const h = o.head;
  const headLine =
    h.mode === 'branch'
      ? `${h.ref.replace(/^refs\/heads\//, '')} at ${h.sha.slice(0, 12)}${h.created ? ' (created)' : ''}`
      : `detached at ${h.sha.slice(0, 12)}: ${WHY[h.why] ?? h.why}${h.branch !== null ? ` (${h.branch.replace(/^refs\/heads\//, '')}${h.branchTip !== null ? ` is at ${h.branchTip.slice(0, 12)}` : ''})` : ''}`;
  const rows: Array<[string, string]> = [
    ['Worktree:', o.worktreePath],
    ['Snapshot:', `${o.snapshot.ref ?? ''}${o.snapshot.ref !== null ? ' ' : ''}(${o.snapshot.sha.slice(0, 12)})`],
    ['HEAD:', headLine],
    ['Index:', o.restored.index === 'restored' ? 'the staged state, as recorded' : 'not recorded in the snapshot: set to HEAD'],
    ['Files:', `${o.restored.files} (${o.restored.untracked} untracked), ${o.restored.ignored} ignored`],
    ['Verified:', 'every file (bytes and mode), the index and HEAD match the snapshot'],
    ['Owner:', 'none: a new owner comes only through bind or reclaim'],
  ];
  return `${rows.map(([k, v]) => `${k.padEnd(10)} ${v}`).join('\n')}\n`;
}
