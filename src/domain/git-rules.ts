/**
 * The one table of git commands that change a worktree (docs/agent-gate.md): which are judged,
 * where the judgement is taken, and which of the three layers stops a session that cannot prove
 * the current tenure. The git gate (bin/git-gate/git) runs the generated shell block rendered
 * here; the PreToolUse hook asks the gate; the hooks enforce the rows whose `hook` is not `none`.
 * test/unit/git-rules.test.ts keeps the gate's block equal to this table and runs every attempt
 * of every row through all three layers. Pure.
 */

/**
 * What refuses an attempt when the gate is not in the way: a git hook; `git` itself (a branch
 * checked out in a worktree cannot be forced or deleted); or none, when git runs no hook before
 * the damage and only the gate stands.
 */
export type GuardingHook = 'reference-transaction' | 'pre-push' | 'pre-rebase' | 'git' | 'none';

/**
 * One attempt by a session that does not hold the tenure. `args` follow `git`; `{wt}` is the
 * owned worktree's path, `{branch}` its branch, `{other}` another branch, `{main}` the main
 * worktree. `from`: where it is run (the owned worktree, or the repository's main worktree).
 * `committed`: the owner has no uncommitted change (git itself refuses these over local changes).
 */
export interface Attempt {
  args: readonly string[];
  from: 'owned' | 'main';
  hook: GuardingHook;
  committed?: true;
}

export type Target = 'here' | 'branches' | 'path' | 'stash' | 'missing' | 'owned';

export interface GitRule {
  commands: readonly string[];
  /** When the command is judged, in words (docs/agent-gate.md). */
  judged: string;
  /** Where the judgement is taken. */
  targets: readonly Target[];
  /** The body of the command's branch in the gate's `case` (sets od_verdict / od_targets); empty: always judged where git writes. */
  sh: string;
  /** What a session without the tenure tries; every one is refused by the gate and the PreToolUse hook. */
  refused: readonly Attempt[];
  /** Forms that are never judged (run by anyone, anywhere). */
  passes: readonly (readonly string[])[];
}

const o = (hook: GuardingHook, ...args: string[]): Attempt => ({ args, from: 'owned', hook });
const m = (hook: GuardingHook, ...args: string[]): Attempt => ({ args, from: 'main', hook });
const clean = (a: Attempt): Attempt => ({ ...a, committed: true });

export const GIT_RULES: readonly GitRule[] = [
  {
    commands: ['reset'],
    judged: 'always (an unstaging reset loses a staged version too)',
    targets: ['here'],
    sh: '',
    refused: [
      o('none', 'reset', '--hard'),
      o('reference-transaction', 'reset', '--hard', 'HEAD~1'),
      clean(o('reference-transaction', 'reset', '--keep', 'HEAD~1')),
      o('reference-transaction', 'reset', '-q', 'HEAD~1'),
    ],
    passes: [],
  },
  {
    commands: ['checkout'],
    judged:
      'with any argument (`<branch>`, `-- <paths>`, `.`, `-b`, `-B`, `-f`, ...); `-B <branch>` also as every worktree that has it checked out (`--ignore-other-worktrees` lets git reset it there)',
    targets: ['here', 'branches'],
    sh: '[ $# -eq 0 ] && od_verdict=pass; od_checkout_resets "$@"',
    refused: [
      o('none', 'checkout', '--', '.'),
      o('none', 'checkout', '.'),
      o('none', 'checkout', '{other}'),
      clean(o('reference-transaction', 'checkout', '-B', '{branch}', 'HEAD~1')),
      m('reference-transaction', 'checkout', '-q', '--ignore-other-worktrees', '-B', '{branch}', 'HEAD~1'),
    ],
    passes: [['checkout']],
  },
  {
    commands: ['switch', 'restore'],
    judged: 'always; `switch -C <branch>` also as every worktree that has it checked out',
    targets: ['here', 'branches'],
    sh: 'od_checkout_resets "$@"',
    refused: [
      o('none', 'switch', '--discard-changes', '{other}'),
      o('none', 'restore', '.'),
      o('none', 'restore', '--staged', '--worktree', '.'),
      m('reference-transaction', 'switch', '-q', '--ignore-other-worktrees', '-C', '{branch}', 'HEAD~1'),
    ],
    passes: [],
  },
  {
    commands: ['clean'],
    judged: 'unless `-n` / `--dry-run` (and not `-i`)',
    targets: ['here'],
    sh: 'od_valued=e\n      od_flags n \'--dry-run\' "$@" && ! od_flags i \'--interactive\' "$@" && od_verdict=pass',
    refused: [o('none', 'clean', '-fdx'), o('none', 'clean', '-f', '-d')],
    passes: [
      ['clean', '-n'],
      ['clean', '--dry-run', '-d'],
    ],
  },
  {
    commands: ['stash'],
    judged: 'every form but `list`, `show`, `create`, where it runs; `drop`, `pop`, `branch` and `clear` also as the worktree that made each entry they remove',
    targets: ['here', 'stash'],
    sh: 'od_classify_stash "$@"',
    refused: [
      o('none', 'stash'),
      o('none', 'stash', '-u'),
      o('none', 'stash', 'pop'),
      m('none', 'stash', 'drop'),
      m('none', 'stash', 'pop'),
      m('none', 'stash', 'clear'),
      m('none', 'stash', 'branch', 'taken'),
    ],
    passes: [
      ['stash', 'list'],
      ['stash', 'show'],
    ],
  },
  {
    commands: ['commit'],
    judged: 'always but `--dry-run` (`--no-verify` and `-c core.hooksPath=` skip hooks, not the gate)',
    targets: ['here'],
    sh: "od_flags '' '--dry-run' \"$@\" && od_verdict=pass",
    refused: [
      o('reference-transaction', 'commit', '-qam', 'intruder'),
      o('reference-transaction', 'commit', '--no-verify', '-qam', 'intruder'),
      o('reference-transaction', 'commit', '--amend', '--no-edit', '-q'),
    ],
    passes: [['commit', '--dry-run']],
  },
  {
    commands: ['merge', 'rebase', 'cherry-pick', 'revert', 'am', 'pull', 'mergetool', 'filter-branch', 'filter-repo'],
    judged: 'always',
    targets: ['here'],
    sh: '',
    refused: [
      clean(o('reference-transaction', 'merge', '-q', '--no-edit', '{other}')),
      clean(o('pre-rebase', 'rebase', '-q', '{other}')),
      clean(o('reference-transaction', 'cherry-pick', '{other}')),
      clean(o('reference-transaction', 'revert', '--no-edit', 'HEAD')),
    ],
    passes: [],
  },
  {
    commands: ['push'],
    judged:
      'always but `--dry-run`, where it runs and as every worktree that has a branch it names (`<src>:<dst>`, `heads/<b>`, a glob, `--all`) checked out; into a repository on this machine with owned worktrees, with the refs git resolves there (`push --dry-run --porcelain`); `--receive-pack`, `--exec` as every owned worktree',
    targets: ['here', 'branches', 'owned'],
    sh: 'od_classify_push "$@"',
    refused: [
      o('pre-push', 'push', '-q', 'origin', '{branch}'),
      m('pre-push', 'push', '-q', '--force', 'origin', '{other}:{branch}'),
      m('pre-push', 'push', '-q', 'origin', '+{other}:refs/heads/{branch}'),
      m('pre-push', 'push', '-q', 'origin', ':{branch}'),
      m('git', 'push', '-q', '--force', '--no-verify', '.', '{other}:heads/{branch}'),
    ],
    passes: [['push', '--dry-run', 'origin', '{branch}']],
  },
  {
    commands: ['add', 'stage', 'update-index', 'rm', 'mv'],
    judged: 'unless `-n` / `--dry-run` (they write the index, and `rm`, `mv` the files)',
    targets: ['here'],
    sh: 'od_flags n \'--dry-run\' "$@" && od_verdict=pass',
    refused: [
      o('none', 'add', '-A'),
      o('none', 'rm', '-rfq', '.'),
      o('none', 'mv', '-f', 'a.txt', 'moved.txt'),
      o('none', 'update-index', '--force-remove', 'a.txt'),
    ],
    passes: [['add', '-n', '.']],
  },
  {
    commands: ['checkout-index'],
    judged: 'with `-f` (not `--temp`); `--prefix=<dir>` also as the worktree around that directory',
    targets: ['here', 'path'],
    sh: 'od_classify_checkout_index "$@"',
    refused: [o('none', 'checkout-index', '-a', '-f'), m('none', 'checkout-index', '-a', '-f', '--prefix={wt}/')],
    passes: [['checkout-index', '--temp', 'a.txt']],
  },
  {
    commands: ['read-tree'],
    judged: 'with `-u`, or on an index (`GIT_INDEX_FILE` is judged as the worktree whose git dir holds it)',
    targets: ['here'],
    sh: 'if ! od_flags u \'\' "$@" && od_flags n \'--dry-run --index-output\' "$@"; then od_verdict=pass; fi',
    refused: [o('none', 'read-tree', '-u', '--reset', 'HEAD~1')],
    passes: [['read-tree', '-n', 'HEAD']],
  },
  {
    commands: ['apply'],
    judged: 'unless only `--stat`, `--numstat`, `--summary`, `--check`',
    targets: ['here'],
    sh: "od_flags '' '--stat --numstat --summary --check' \"$@\" && ! od_flags '' '--apply' \"$@\" && od_verdict=pass",
    refused: [],
    passes: [['apply', '--stat', '/dev/null']],
  },
  {
    commands: ['merge-file'],
    judged: 'unless `-p`',
    targets: ['here'],
    sh: 'od_flags p \'--stdout\' "$@" && od_verdict=pass',
    refused: [],
    passes: [],
  },
  {
    commands: ['bisect'],
    judged: 'but `log`, `view`, `visualize`, `terms`, `help`',
    targets: ['here'],
    sh: 'case ${1-} in log | view | visualize | terms | help) od_verdict=pass ;; esac',
    refused: [],
    passes: [['bisect', 'log']],
  },
  {
    commands: ['sparse-checkout'],
    judged: 'but `list`, `check-rules`',
    targets: ['here'],
    sh: 'case ${1-} in list | check-rules) od_verdict=pass ;; esac',
    refused: [],
    passes: [['sparse-checkout', 'list']],
  },
  {
    commands: ['reflog'],
    judged: '`expire` and `delete`; those that name `refs/stash` or `--all` also as every worktree that made a stash entry',
    targets: ['here', 'stash'],
    sh: 'od_classify_reflog "$@"',
    refused: [m('none', 'reflog', 'delete', 'stash@{0}'), m('none', 'reflog', 'expire', '--expire=now', '--all')],
    passes: [['reflog']],
  },
  {
    commands: ['submodule'],
    judged: '`deinit`, and `update --force`',
    targets: ['here'],
    sh: 'case ${1-} in\n        deinit) ;;\n        update) shift; od_flags f \'--force\' "$@" || od_verdict=pass ;;\n        *) od_verdict=pass ;;\n      esac',
    refused: [],
    passes: [['submodule', 'status']],
  },
  {
    commands: ['branch'],
    judged: '`-f`, `-d`, `-D`, `-m`, `-M`, `-C`: as every worktree that has the branch checked out, wherever it runs',
    targets: ['branches'],
    sh: 'od_classify_branch "$@"',
    refused: [
      m('git', 'branch', '-f', '{branch}', 'HEAD'),
      m('git', 'branch', '-D', '{branch}'),
      m('reference-transaction', 'branch', '-M', '{branch}', 'renamed'),
    ],
    passes: [['branch'], ['branch', 'created-by-anyone']],
  },
  {
    commands: ['update-ref'],
    judged:
      'as the worktree whose branch (or `HEAD`, `worktrees/<id>/HEAD`, `refs/stash`) it writes; a replace ref (`refs/replace/...`) as every owned worktree; `--stdin` where it runs and as every owned worktree',
    targets: ['branches', 'stash', 'owned'],
    sh: 'od_classify_update_ref "$@"',
    refused: [
      m('reference-transaction', 'update-ref', 'refs/heads/{branch}', 'HEAD'),
      m('reference-transaction', 'update-ref', '-d', 'refs/heads/{branch}'),
      m('none', 'update-ref', '-d', 'refs/stash'),
      m('reference-transaction', 'update-ref', 'refs/replace/{other}', '{other}'),
    ],
    passes: [['update-ref', 'refs/tags/anyone', 'HEAD']],
  },
  {
    commands: ['symbolic-ref'],
    judged: '`symbolic-ref HEAD <ref>` and `-d`',
    targets: ['branches'],
    sh: 'od_classify_symbolic_ref "$@"',
    refused: [o('none', 'symbolic-ref', 'HEAD', 'refs/heads/{other}')],
    passes: [['symbolic-ref', 'HEAD']],
  },
  {
    commands: ['worktree'],
    judged:
      '`remove`, `move`, `lock`, `unlock`, `repair` as the worktree they name (its path, or the end of its path as git matches it: `remove wt1`); `prune` as every owned worktree whose directory is gone; `add -B` and `add --force` as the branch they take',
    targets: ['path', 'missing', 'branches'],
    sh: 'od_classify_worktree "$@"',
    refused: [
      m('none', 'worktree', 'remove', '--force', '{wt}'),
      m('none', 'worktree', 'remove', '--force', '--force', '{wt}'),
      m('none', 'worktree', 'remove', '--force', '--force', 'wt1'),
      m('none', 'worktree', 'move', '{wt}', '{wt}-moved'),
      m('none', 'worktree', 'add', '-q', '--force', '{wt}-twin', '{branch}'),
      m('git', 'worktree', 'add', '-q', '--force', '-B', '{branch}', '{wt}-reset', 'HEAD~1'),
    ],
    passes: [
      ['worktree', 'list'],
      ['worktree', 'prune', '-n'],
    ],
  },
  {
    commands: ['config'],
    judged:
      'writes (`<key> <value>`, `--unset`, `--add`, `--replace-all`, `--edit`, `set`, `unset`, sections), where it runs; to a shared scope (the repository, `--global`, `--system`, `--file`), or with `--worktree` of a key that switches the hooks off or names a program, also as every owned worktree',
    targets: ['here', 'owned'],
    sh: 'od_classify_config "$@"',
    refused: [
      o('none', 'config', 'core.hooksPath', '/dev/null'),
      o('none', 'config', '--worktree', 'overdeck.owner.state', 'released'),
      m('none', 'config', 'core.hooksPath', '/dev/null'),
      m('none', 'config', '--worktree', 'core.fsmonitor', '/bin/true'),
    ],
    passes: [
      ['config', 'user.name'],
      ['config', '--get', 'user.name'],
      ['config', '-l'],
    ],
  },
  {
    commands: ['fast-import'],
    judged: 'always (it writes whatever refs its stream names), as every owned worktree',
    targets: ['owned'],
    sh: 'od_verdict=elsewhere; od_add_target owned -',
    refused: [m('none', 'fast-import', '--quiet')],
    passes: [],
  },
  {
    commands: ['replace'],
    judged:
      'but `-l` / `--list` (a replace ref makes every git of the repository read other content for an object, an owned HEAD too), as every owned worktree',
    targets: ['owned'],
    sh: 'od_classify_replace "$@"',
    refused: [m('reference-transaction', 'replace', '{branch}', '{other}')],
    passes: [['replace'], ['replace', '-l']],
  },
];

/** Commands that change nothing owned (reads, object writes, shared refs like tags and notes): never judged. */
export const HARMLESS: readonly string[] = [
  'annotate',
  'archive',
  'blame',
  'bugreport',
  'bundle',
  'cat-file',
  'check-attr',
  'check-ignore',
  'check-mailmap',
  'check-ref-format',
  'cherry',
  'clone',
  'column',
  'commit-graph',
  'commit-tree',
  'count-objects',
  'credential',
  'describe',
  'diff',
  'diff-files',
  'diff-index',
  'diff-tree',
  'difftool',
  'fast-export',
  'fetch',
  'for-each-ref',
  'format-patch',
  'fsck',
  'gc',
  'grep',
  'hash-object',
  'help',
  'index-pack',
  'init',
  'interpret-trailers',
  'log',
  'ls-files',
  'ls-remote',
  'ls-tree',
  'mailinfo',
  'mailsplit',
  'maintenance',
  'merge-base',
  'merge-tree',
  'mktag',
  'mktree',
  'multi-pack-index',
  'name-rev',
  'notes',
  'pack-objects',
  'pack-refs',
  'patch-id',
  'prune',
  'prune-packed',
  'range-diff',
  'remote',
  'repack',
  'rerere',
  'rev-list',
  'rev-parse',
  'send-email',
  'shortlog',
  'show',
  'show-branch',
  'show-index',
  'show-ref',
  'status',
  'stripspace',
  'tag',
  'unpack-file',
  'unpack-objects',
  'update-server-info',
  'var',
  'verify-commit',
  'verify-pack',
  'verify-tag',
  'version',
  'whatchanged',
  'write-tree',
];

/** The harmless commands agents run most, passed before the gate parses anything (the first `case` of bin/git-gate/git). */
export const HARMLESS_FAST: readonly string[] = [
  'status',
  'log',
  'diff',
  'show',
  'fetch',
  'rev-parse',
  'ls-files',
  'cat-file',
  'grep',
  'blame',
  'describe',
  'for-each-ref',
  'show-ref',
  'ls-tree',
  'rev-list',
  'merge-base',
  'hash-object',
  'version',
  'help',
];

const caseList = (words: readonly string[], indent: string): string => {
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    const next = line === '' ? w : `${line} | ${w}`;
    if (next.length > 96 && line !== '') {
      lines.push(`${line} | \\`);
      line = w;
    } else line = next;
  }
  lines.push(line);
  return lines.map((l, i) => (i === 0 ? l : `${indent}  ${l}`)).join('\n');
};

/** The `case $od_cmd in ... esac` of the gate's od_classify, between its BEGIN/END generated markers. */
export function gateClassifierBlock(): string {
  const indent = '    ';
  const lines = ['  case $od_cmd in'];
  for (const rule of GIT_RULES) {
    const label = caseList(rule.commands, indent);
    lines.push(rule.sh === '' ? `${indent}${label}) ;;` : `${indent}${label})\n${indent}  ${rule.sh} ;;`);
  }
  lines.push(`${indent}${caseList([...HARMLESS, "''"], indent)})\n${indent}  od_verdict=pass ;;`);
  lines.push(`${indent}*) od_verdict=unknown ;;`);
  lines.push('  esac');
  return lines.join('\n');
}

const HOOK_WORDS: Readonly<Record<GuardingHook, string>> = {
  'reference-transaction': '`reference-transaction`',
  'pre-push': '`pre-push`',
  'pre-rebase': '`pre-rebase`',
  git: 'git itself',
  none: 'nothing',
};

const TARGET_WORDS: Readonly<Record<Target, string>> = {
  here: 'where git writes',
  branches: 'each worktree with the branch checked out',
  path: 'the worktree it names',
  stash: "each stash entry's maker",
  missing: 'owned worktrees whose directory is gone',
  owned: 'every owned worktree of the repository',
};

/** The table of docs/agent-gate.md ("What is judged"), between its generated markers. */
export function gateDocTable(): string {
  const rows = GIT_RULES.map((r) => {
    const cmds = r.commands.map((c) => `\`${c}\``).join(', ');
    const without = [...new Set(r.refused.map((a) => a.hook))].map((h) => HOOK_WORDS[h]).join(' or ') || '—';
    const examples = r.refused.map((a) => `\`git ${a.args.join(' ')}\``).join(', ') || '—';
    return `| ${cmds} | ${r.judged} | ${r.targets.map((t) => TARGET_WORDS[t]).join('; ')} | ${examples} | ${without} |`;
  });
  return ['| command | judged | judged as | tried in the parity test | stops it without the gate |', '|---|---|---|---|---|', ...rows].join('\n');
}
