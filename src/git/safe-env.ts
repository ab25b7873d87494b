/**
 * How a service process runs git (docs/guarantees.md#out-of-reach): never a program the repository
 * or an agent controls, and never with the service's own secrets in reach.
 *
 * Everything in a worktree is agent-writable: .git/config and its includes, config.worktree,
 * .git/hooks, .gitattributes, .git/info/attributes. So is a user's ~/.gitconfig on a shared host.
 * git turns several of those into programs it runs: hooks (reference-transaction on every ref
 * update, post-index-change on every index write...), core.fsmonitor, filter drivers, textconv and
 * external diff drivers, gpg.program behind log.showSignature, transports and their ssh/credential
 * helpers behind a lazy fetch, the pager. The service switches each off here, in one place:
 *
 *  - the environment is an allow-list (PATH, TZ, a fixed locale, per-call GIT_* values the caller
 *    names from GitEnvName), never a copy of ours: DATABASE_URL, OD_*, tokens and GIT_EXTERNAL_DIFF,
 *    GIT_PAGER, GIT_SSH_COMMAND, GIT_ASKPASS, GIT_EDITOR... never reach git or anything it starts;
 *  - global and system config are not read (GIT_CONFIG_GLOBAL=/dev/null, GIT_CONFIG_NOSYSTEM),
 *    and HOME is not passed, so `~/...` includes and the XDG attributes file resolve to nothing;
 *  - one `-c safe.directory=<realpath>`, naming the one repository the run opens (safe-directory.ts),
 *    so a service running as another Unix user than the agents owning the worktrees is not refused
 *    as `dubious ownership`; never `*`, and a caller's own safe.directory is refused;
 *  - `-c` values placed before the subcommand, which beat every config file and include: hooks
 *    looked up under /dev/null (so none exists), no fsmonitor, no signature verification, no
 *    transport at all (a partial clone's lazy fetch would run ssh or a remote helper), no auto gc;
 *    git passes them on to any git it starts itself (GIT_CONFIG_PARAMETERS);
 *  - what `-c` cannot switch off for every driver name is kept out by the subcommands allowed
 *    (refusedServiceGit): log/diff/show always run with `--no-textconv --no-ext-diff`, and nothing
 *    the service runs reads worktree content through git's conversion (no add, status, checkout...;
 *    WIP preservation hashes files with `hash-object --no-filters`, disk-tree.ts).
 *
 * Agent-side CLI commands that must see exactly what the user's own git sees (the guard rule, the
 * hooks directory in effect) use `userGit` in exec.ts instead; they run in the user's own shell.
 */

/** Per-call variables a service caller may give git: where to work, a private index, an identity. */
export const GIT_ENV_NAMES = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_COMMITTER_DATE',
] as const;
export type GitEnvName = (typeof GIT_ENV_NAMES)[number];
export type GitEnvExtras = Readonly<Partial<Record<GitEnvName, string>>>;

/** Taken from the service's environment, when set: where git is found, and the local time zone of commit dates. */
const INHERITED = ['PATH', 'TZ'] as const;

/** `-c` values every service git run starts with (command-line config outranks every file and include). */
export const SERVICE_GIT_CONFIG: readonly string[] = [
  // No hook of any name: git looks for /dev/null/<name>, which cannot exist.
  'core.hooksPath=/dev/null',
  // Empty, not `false`: git before 2.36 took any value as the hook's path; empty is "off" in every version.
  'core.fsmonitor=',
  // A commit carrying a signature would otherwise run gpg.program on `git log`.
  'log.showSignature=false',
  // No transport: a lazy fetch (partial clone) would run core.sshCommand, a remote helper, credential helpers.
  'protocol.allow=never',
  // No `gc --auto` / maintenance child started behind a ref or object write.
  'gc.auto=0',
  'maintenance.auto=false',
  // commit-tree (and notes) would otherwise sign with gpg.program when commit.gpgSign is set.
  'commit.gpgSign=false',
  // Never reached (no terminal, messages always given): if they were, the shell's no-op, not the repository's program.
  'core.pager=cat',
  'core.editor=:',
  'sequence.editor=:',
];

/** Keys a caller's own `-c` may not set: ours above, and safe.directory, which only serviceGitArgs sets (safe-directory.ts). */
const OVERRIDDEN_KEYS: ReadonlySet<string> = new Set([...SERVICE_GIT_CONFIG.map((kv) => kv.split('=')[0]!.toLowerCase()), 'safe.directory']);

/** Added after the subcommand of every log/show/diff: neither textconv nor an external diff driver is run. */
export const READ_DIFF_FLAGS: readonly string[] = ['--no-textconv', '--no-ext-diff'];

const positional = (rest: readonly string[]): string[] => {
  const end = rest.indexOf('--');
  return (end === -1 ? rest : rest.slice(0, end)).filter((a) => !a.startsWith('-'));
};
const has = (rest: readonly string[], ...flags: string[]) => rest.some((a) => flags.includes(a));
/** A pretty format asking for signature checks (%G?, %GS...) runs gpg.program. */
const signatureFormat = (rest: readonly string[]) => rest.some((a) => /^--(format|pretty)=/.test(a) && a.includes('%G'));
const noSignatures = (rest: readonly string[]) => (has(rest, '--show-signature') || signatureFormat(rest) ? 'signature checks run gpg.program' : null);
const noDrivers = (rest: readonly string[]) =>
  (has(rest, '--textconv', '--ext-diff') ? 'textconv and external diff drivers are the repository’s programs' : null) ?? noSignatures(rest);

/**
 * The subcommands a service process may run, with what each must not be asked. Anything else
 * (add, status, stash, checkout, commit, merge, fetch, an alias...) is refused before git starts:
 * those read worktree files through filters, refresh the index (which hands racily clean files to
 * the clean filter: `git status` does), or start editors, transports and hooks by design.
 */
const SUBCOMMANDS: Readonly<Record<string, (rest: readonly string[]) => string | null>> = {
  version: () => null,
  var: () => null,
  config: (rest) => (has(rest, '--edit', '-e') ? 'config --edit opens an editor' : null),
  'rev-parse': () => null,
  'rev-list': noSignatures,
  'for-each-ref': () => null,
  // Lists refs (and HEAD): reads refs only, starts nothing (status.ts).
  'show-ref': () => null,
  'symbolic-ref': () => null,
  'merge-base': () => null,
  'update-ref': () => null,
  'write-tree': () => null,
  // Lists a tree object: reads objects only, never a worktree file (restore.ts).
  'ls-tree': () => null,
  'patch-id': () => null,
  log: noDrivers,
  show: noDrivers,
  diff: (rest) =>
    noDrivers(rest) ?? (positional(rest).length >= 2 ? null : 'diff compares two commits only: against the index or worktree it runs clean filters'),
  'cat-file': (rest) => (has(rest, '--filters', '--textconv') ? 'cat-file --filters/--textconv run the repository’s programs' : null),
  'read-tree': (rest) => (has(rest, '-u') ? 'read-tree -u checks files out (smudge filters, hooks)' : null),
  'commit-tree': (rest) => (rest.some((a) => a === '-S' || a.startsWith('--gpg-sign')) ? 'signing runs gpg.program' : null),
  'hash-object': (rest) => (has(rest, '--no-filters') ? null : 'hash-object without --no-filters runs clean filters'),
  'ls-files': (rest) => (has(rest, '-m', '--modified') ? 'ls-files -m compares content through clean filters' : null),
  'update-index': (rest) =>
    has(rest, '--index-info', '--cacheinfo') && !has(rest, '--refresh', '--really-refresh', '--again', '--add')
      ? null
      : 'update-index only sets given entries (anything else hashes files through filters)',
  // `add --no-checkout` writes no file of the worktree (restore.ts writes them itself, with no filter) and runs no hook.
  // `remove --force` starts no process (unforced, git runs `status` in the worktree, which runs clean filters): removal.ts
  // runs it only after snapshotting what that check guards.
  worktree: (rest) =>
    rest[0] === 'list' || (rest[0] === 'add' && has(rest, '--no-checkout') && !has(rest, '--checkout')) || (rest[0] === 'remove' && has(rest, '--force', '-f'))
      ? null
      : 'only `worktree list`, `worktree add --no-checkout` and `worktree remove --force` (a checkout, move or unforced remove runs filters and hooks)',
  notes: (rest) =>
    rest[0]?.startsWith('--ref=') && (rest[1] === 'show' || (rest[1] === 'add' && has(rest, '-m')))
      ? null
      : 'notes: show, or add with -m (without a message git opens an editor)',
};

/** Why `args` may not run in a service process, or null. Only `-c key=value` may come before the subcommand. */
export function refusedServiceGit(args: readonly string[]): string | null {
  let i = 0;
  for (; args[i] === '-c' && args[i + 1] !== undefined; i += 2) {
    // A caller's own -c comes after ours and would win: never for a key we set.
    const key = args[i + 1]!.split('=')[0]!.toLowerCase();
    if (OVERRIDDEN_KEYS.has(key)) return `-c ${key} is set by the service for every run`;
  }
  const sub = args[i];
  if (sub === undefined || sub.startsWith('-')) return `only -c options may precede the subcommand (${sub ?? 'none'})`;
  const check = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
  if (check === undefined) return `git ${sub} is not run by the service`;
  const why = check(args.slice(i + 1));
  return why === null ? null : `git ${sub}: ${why}`;
}

const ALLOWED_EXTRAS: ReadonlySet<string> = new Set(GIT_ENV_NAMES);

/** The whole environment of a service git run. */
export function serviceGitEnv(extra: GitEnvExtras = {}, from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of INHERITED) if (from[name] !== undefined) env[name] = from[name];
  Object.assign(env, {
    LC_ALL: 'C',
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
  });
  for (const [k, v] of Object.entries(extra)) {
    // A programming error, not input: the names are fixed in code.
    if (!ALLOWED_EXTRAS.has(k)) throw new Error(`git environment variable ${k} is not allowed for a service git run`);
    if (v !== undefined) env[k] = v;
  }
  return env;
}

/**
 * The argument list of a service git run: the overrides, the one repository this run trusts
 * although another Unix user may own it (`safeDirectory`, from safe-directory.ts: an absolute
 * realpath, never `*` nor a `/*` prefix), then the caller's subcommand and arguments (READ_DIFF_FLAGS right after
 * log/show/diff). Throws for what refusedServiceGit refuses: a programming error, caught by the
 * first test that takes that path.
 */
export function serviceGitArgs(args: readonly string[], safeDirectory: string | null = null): string[] {
  const why = refusedServiceGit(args);
  if (why !== null) throw new Error(`refused to run: ${why} (src/git/safe-env.ts)`);
  if (safeDirectory !== null && (!safeDirectory.startsWith('/') || safeDirectory.endsWith('*') || safeDirectory.includes('\0'))) {
    throw new Error(`refused to run: safe.directory must name one absolute path, not ${JSON.stringify(safeDirectory)} (src/git/safe-env.ts)`);
  }
  let i = 0;
  while (args[i] === '-c') i += 2;
  const sub = args[i]!;
  const extra = sub === 'log' || sub === 'show' || sub === 'diff' ? READ_DIFF_FLAGS : [];
  const trust = safeDirectory === null ? [] : ['-c', `safe.directory=${safeDirectory}`];
  return ['--no-pager', ...SERVICE_GIT_CONFIG.flatMap((kv) => ['-c', kv]), ...trust, ...args.slice(0, i + 1), ...extra, ...args.slice(i + 1)];
}
