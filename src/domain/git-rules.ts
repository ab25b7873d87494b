/**
 * The one table of git commands that change a worktree (docs/agent-gate.md): which are judged,
 * where the judgement is taken, and which of the three layers stops a session that cannot prove
 * the current tenure. The gate program (src/gate/judge.ts) runs each row's classifier; the
 * shim bin/git-gate/git carries the fast paths generated from it (gateShimBlock); the PreToolUse
 * hook asks the same judge; the hooks enforce the rows whose `hook` is not `none`.
 * test/unit/git-rules.test.ts keeps the shim's block equal to this table and runs every attempt
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
  /** Sets the verdict and the targets for the command's arguments (after the subcommand); the gate runs it (src/gate/judge.ts). */
  classify: Classify;
  /** What a session without the tenure tries; every one is refused by the gate and the PreToolUse hook. */
  refused: readonly Attempt[];
  /** Forms that are never judged (run by anyone, anywhere). */
  passes: readonly (readonly string[])[];
}

/**
 * What the gate does with one command. pass: nothing to judge; here: where git writes, and the
 * targets; elsewhere: only the targets; unknown: not a command of git's that this table knows
 * (an alias, or an external git-foo), looked up before it is judged.
 */
export type Verdict = 'pass' | 'here' | 'elsewhere' | 'unknown';

/**
 * One more thing judged besides (or instead of) where git writes. branch: every worktree that
 * has it checked out; path: the worktree around a path; stash: the worktree that made an entry;
 * stash-all: every entry's maker; missing: owned worktrees whose directory is gone; owned: every
 * owned worktree; wtname: the worktrees git finds by a name; push-dest: a push's destination.
 */
export type TargetKind = 'branch' | 'path' | 'stash' | 'stash-all' | 'missing' | 'owned' | 'wtname' | 'push-dest';

export interface GateTarget {
  kind: TargetKind;
  value: string;
}

/** The classification being built for one command; `cwd` is where git runs (after every -C). */
export interface Classification {
  verdict: Verdict;
  targets: GateTarget[];
  /** A receive-pack of the caller's own was named (--receive-pack, --exec). */
  pushProg: boolean;
  readonly cwd: string;
  add(kind: TargetKind, value?: string): void;
}

export type Classify = (c: Classification, args: readonly string[]) => void;

export function newClassification(cwd: string): Classification {
  const c: Classification = {
    verdict: 'here',
    targets: [],
    pushProg: false,
    cwd,
    add(kind, value = '-') {
      c.targets.push({ kind, value });
    },
  };
  return c;
}

/**
 * Is one of LETTERS among ARG's bundled short options (-fdx)? A letter of VALUED takes the rest
 * of the bundle as its value (-e<pattern>), so nothing after it is an option.
 */
export function shortHas(letters: string, arg: string, valued = ''): boolean {
  if (!arg.startsWith('-') || arg.startsWith('--') || arg === '-') return false;
  for (const ch of arg.slice(1)) {
    if (valued.includes(ch)) return false;
    if (letters.includes(ch)) return true;
  }
  return false;
}

/** Is any of the short letters or long options (exact, or with =value) given before `--`? */
export function flags(args: readonly string[], short: string, long: readonly string[], valued = ''): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a.startsWith('--')) {
      if (long.includes(a.split('=')[0]!)) return true;
    } else if (a.length > 1 && a.startsWith('-') && short !== '' && shortHas(short, a, valued)) return true;
  }
  return false;
}

const always: Classify = () => undefined;

const inCwd = (c: Classification, p: string): string => (p.startsWith('/') ? p : `${c.cwd}/${p}`);

/**
 * checkout -B / switch -C (--force-create) reset a branch in whichever worktree has it checked
 * out (git lets them with --ignore-other-worktrees): judged as every such worktree.
 */
function checkoutResets(c: Classification, args: readonly string[]): void {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const more = i + 1 < args.length;
    if (a === '--') return;
    if (a === '-B' || a === '-C' || a === '--force-create') {
      if (more) c.add('branch', args[++i]);
    } else if (a.startsWith('--force-create=')) c.add('branch', a.slice(a.indexOf('=') + 1));
    else if (['-b', '-c', '--orphan', '--conflict', '--pathspec-from-file'].includes(a)) {
      if (more) i++;
    } else if (a.startsWith('--')) continue;
    else if (/^-.*[BC]$/.test(a)) {
      if (more) c.add('branch', args[++i]);
    } else if (/^-.*[BC]/.test(a)) c.add('branch', a.slice(1).replace(/^[^BC]*[BC]/, ''));
  }
}

/** Listing is harmless; a replace ref makes every git of the repository read other content. */
function classifyReplace(c: Classification, args: readonly string[]): void {
  c.verdict = 'pass';
  for (const a of args) {
    if (a === '-l' || a === '--list') return;
    if (!a.startsWith('--format=')) c.verdict = 'elsewhere';
  }
  if (c.verdict !== 'pass') c.add('owned');
}

/** branch -f/-d/-D/-m/-M/-C name the branches they move or delete; creating or listing is harmless. */
function classifyBranch(c: Classification, args: readonly string[]): void {
  c.verdict = 'pass';
  let del = false;
  let force = false;
  let move = false;
  let copyForce = false;
  const names: string[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      i++;
      break;
    }
    if (a === '-d' || a === '-D' || a === '--delete') del = true;
    else if (a === '-f' || a === '--force') force = true;
    else if (a === '-m' || a === '-M' || a === '--move') move = true;
    else if (a === '-C') copyForce = true;
    else if (['-u', '--set-upstream-to', '--contains', '--no-contains', '--merged', '--no-merged', '--points-at', '--format', '--sort'].includes(a)) {
      if (i + 1 < args.length) i++;
    } else if (a.startsWith('--')) continue;
    else if (a.startsWith('-')) {
      if (shortHas('dD', a)) del = true;
      if (shortHas('f', a)) force = true;
      if (shortHas('mM', a)) move = true;
      if (shortHas('C', a)) copyForce = true;
    } else names.push(a);
  }
  names.push(...args.slice(i));
  // Names are split as the shell's unquoted list was: a name with a space is two.
  const words = names.flatMap((n) => n.split(/\s+/).filter(Boolean));
  if (del) for (const n of words) c.add('branch', n);
  else if (move) {
    // One name renames the branch checked out here; two rename the first (-M overwrites the second).
    if (names.length <= 1) c.add('branch', 'HEAD');
    for (const n of words) c.add('branch', n);
  } else if (copyForce) c.add('branch', names.length === 0 ? '' : (names.join(' ').split(' ').at(-1) ?? ''));
  else if (force && names[0] !== undefined && names[0] !== '') c.add('branch', names[0]);
  if (c.targets.length > 0) c.verdict = 'elsewhere';
}

/** update-ref [-m why] [--no-deref] [-d] <ref> ...: the ref is the first operand; --stdin hides it. */
function classifyUpdateRef(c: Classification, args: readonly string[]): void {
  c.verdict = 'pass';
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--stdin') {
      c.verdict = 'here';
      c.add('stash-all');
      c.add('owned');
      return;
    }
    if (a === '-m') {
      if (i + 1 < args.length) i++;
    } else if (a === '--') {
      i++;
      break;
    } else if (!a.startsWith('-')) break;
  }
  if (i >= args.length) return;
  c.add('branch', args[i]);
  c.verdict = 'elsewhere';
}

/** symbolic-ref HEAD <ref> (or -d HEAD) points the worktree at another branch; reading is harmless. */
function classifySymbolicRef(c: Classification, args: readonly string[]): void {
  c.verdict = 'pass';
  let del = false;
  const names: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-d' || a === '--delete') del = true;
    else if (a === '-m') {
      if (i + 1 < args.length) i++;
    } else if (!a.startsWith('-')) names.push(a);
  }
  if (del || names.length >= 2) {
    c.add('branch', names[0] ?? '');
    c.verdict = 'elsewhere';
  }
}

/**
 * worktree remove/move/unlock/lock/repair act on the worktree they name, wherever git runs;
 * prune on the ones whose directory is gone; add -B resets a branch and add --force checks out
 * one in use.
 */
function classifyWorktree(c: Classification, all: readonly string[]): void {
  c.verdict = 'pass';
  const sub = all[0] ?? '';
  const args = all.slice(1);
  if (['remove', 'move', 'unlock', 'lock', 'repair'].includes(sub)) {
    let i = 0;
    for (; i < args.length; i++) {
      const a = args[i]!;
      if (a === '--') {
        i++;
        break;
      }
      if (a === '--reason') {
        if (i + 1 < args.length) i++;
      } else if (!a.startsWith('-')) break;
    }
    const named = args.slice(i);
    if (named.length === 0) {
      if (sub === 'repair') {
        c.verdict = 'here';
        c.add('missing');
      }
      return;
    }
    for (const a of named) {
      c.add('path', inCwd(c, a));
      // git finds a worktree by the end of its path too (`remove wt1` from anywhere).
      c.add('wtname', a);
      if (sub !== 'repair') break;
    }
    c.verdict = 'elsewhere';
  } else if (sub === 'prune') {
    if (flags(args, 'n', ['--dry-run'])) return;
    c.add('missing');
    c.verdict = 'elsewhere';
  } else if (sub === 'add') {
    let force = false;
    let pos = 0;
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a === '-B' || a === '-b') {
        if (a === '-B' && i + 1 < args.length) c.add('branch', args[i + 1]);
        if (i + 1 < args.length) i++;
      } else if (a === '-f' || a === '--force') force = true;
      else if (a === '--reason') {
        if (i + 1 < args.length) i++;
      } else if (!a.startsWith('-')) {
        pos++;
        if (pos === 2 && force) c.add('branch', a);
      }
    }
    if (c.targets.length > 0) c.verdict = 'elsewhere';
  }
}

/**
 * stash: every form is judged where it runs; drop, pop, branch and clear also remove entries,
 * judged as the worktree that made each (refs/stash is shared by every worktree).
 */
function classifyStash(c: Classification, all: readonly string[]): void {
  let sub = all[0] ?? 'push';
  let args = all;
  if (['list', 'show', 'create'].includes(sub)) {
    c.verdict = 'pass';
    return;
  }
  if (sub.startsWith('-')) sub = 'push';
  else args = all.slice(1);
  if (sub === 'clear') c.add('stash-all');
  else if (sub === 'drop' || sub === 'pop' || sub === 'branch') {
    if (sub === 'branch') args = args.slice(1);
    let rev = args.find((a) => !a.startsWith('-')) ?? '';
    if (rev === '') rev = 'stash@{0}';
    else if (/^[0-9]+$/.test(rev)) rev = `stash@{${rev}}`;
    c.add('stash', rev);
  }
}

/**
 * push: the branches it would write on the remote, and the local ones it names, are judged as
 * the worktrees that have them checked out (pre-push does the same with the refs git resolved);
 * its destination, when a repository of this machine, with the refs git resolves there.
 */
function classifyPush(c: Classification, args: readonly string[]): void {
  if (flags(args, 'n', ['--dry-run'])) {
    c.verdict = 'pass';
    return;
  }
  let pos = 0;
  c.add('push-dest');
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--all' || a === '--mirror' || a === '--branches') c.add('branch', '*');
    else if (a === '--receive-pack' || a === '--exec') {
      c.pushProg = true;
      c.add('owned');
      if (i + 1 < args.length) i++;
    } else if (a.startsWith('--receive-pack=') || a.startsWith('--exec=')) {
      c.pushProg = true;
      c.add('owned');
    } else if (a === '--repo' || a === '-o' || a === '--push-option') {
      if (i + 1 < args.length) i++;
    } else if (!a.startsWith('-')) {
      pos++;
      if (pos < 2) continue;
      const spec = a.startsWith('+') ? a.slice(1) : a;
      const colon = spec.indexOf(':');
      const src = colon < 0 ? spec : spec.slice(0, colon);
      const dst = colon < 0 ? undefined : spec.slice(colon + 1);
      if (spec.includes('*')) c.add('branch', '*');
      if (src !== '') c.add('branch', src);
      if (dst !== undefined && dst !== '') c.add('branch', dst);
    }
  }
}

/** checkout-index -f overwrites files where it runs, or under --prefix wherever that points. */
function classifyCheckoutIndex(c: Classification, args: readonly string[]): void {
  if (!(flags(args, 'f', ['--force']) && !flags(args, '', ['--temp']))) {
    c.verdict = 'pass';
    return;
  }
  for (const a of args) if (a.startsWith('--prefix=')) c.add('path', inCwd(c, a.slice('--prefix='.length)));
}

/**
 * config: reading is harmless. A write is judged where it runs; one to a scope every worktree
 * reads (the repository's config, --global, --system, --file) also as every owned worktree (an
 * include, an alias or core.hooksPath there reach the owner). A --worktree write stays its own
 * unless its key switches the hooks off or names a program.
 */
function classifyConfig(c: Classification, all: readonly string[]): void {
  c.verdict = 'pass';
  let write = false;
  let worktree = false;
  let plain = true;
  const pos: string[] = [];
  let args = all;
  const first = all[0] ?? '';
  if (first === 'get' || first === 'list') return;
  if (first === 'set' || first === 'unset') {
    write = true;
    args = all.slice(1);
  } else if (['rename-section', 'remove-section', 'edit'].includes(first)) {
    write = true;
    plain = false;
    args = all.slice(1);
  }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--get-color', '--get-colorbool', '-l', '--list'].includes(a)) {
      if (!write) return;
    } else if (['--unset', '--unset-all', '--add', '--replace-all'].includes(a)) write = true;
    else if (['--rename-section', '--remove-section', '-e', '--edit'].includes(a)) {
      write = true;
      plain = false;
    } else if (a === '--worktree') worktree = true;
    else if (['-f', '--file', '--blob', '--type', '--default', '--comment', '--value'].includes(a)) {
      if (i + 1 < args.length) i++;
    } else if (!a.startsWith('-')) pos.push(a);
  }
  if (pos.length >= 2) write = true;
  if (!write) return;
  c.verdict = 'here';
  if (!worktree || !plain || configDanger(pos[0] ?? '', pos[1] ?? '') !== undefined) c.add('owned');
}

/** reflog expire/delete drop history, and stash entries when they name refs/stash or --all. */
function classifyReflog(c: Classification, args: readonly string[]): void {
  const sub = args[0] ?? 'show';
  if (sub !== 'expire' && sub !== 'delete') {
    c.verdict = 'pass';
    return;
  }
  for (const a of args.slice(1)) if (a === '--all' || a === 'refs/stash' || a === 'stash' || a.startsWith('stash@')) c.add('stash-all');
}

/** An editor value that runs nothing of the caller's own (git's own no-ops). */
export function editorSafe(v: string): boolean {
  return v === ':' || v === 'true';
}

/** A pager value looked up on PATH like git's own default, or none. */
export function pagerSafe(v: string): boolean {
  if (['', 'cat', 'less', 'more'].includes(v)) return true;
  return v.startsWith('less -') && /^[A-Za-z0-9+ -]*$/.test(v.slice('less -'.length));
}

const BOOL = ['true', 'false', 'yes', 'no', 'on', 'off', '0', '1'];

/** Keys (lower case; `*` one or more characters) that name a program git would run. */
const PROGRAM_KEYS = [
  'core.sshcommand',
  'core.askpass',
  'core.gitproxy',
  'core.alternaterefscommand',
  'diff.external',
  'diff.*.command',
  'diff.*.textconv',
  'filter.*',
  'merge.*.driver',
  'credential.helper',
  'credential.*.helper',
  'gpg.program',
  'gpg.*.program',
  'gpg.ssh.defaultkeycommand',
  'remote.*.uploadpack',
  'remote.*.receivepack',
  'uploadpack.packobjectshook',
  'interactive.difffilter',
  '*tool.*.cmd',
  '*tool.*.path',
  'man.*.cmd',
  'man.*.path',
  'browser.*.cmd',
  'browser.*.path',
  'web.browser',
  'trailer.*.command',
  'trailer.*.cmd',
  'sendemail.*',
];

/** A shell `case` pattern with `*` only, as a regular expression. */
const glob = (p: string): RegExp =>
  new RegExp(
    `^${p
      .split('*')
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('[\\s\\S]*')}$`,
  );
const PROGRAM_RES = PROGRAM_KEYS.map(glob);

/**
 * Does the configuration KEY with VALUE switch git's hooks off (core.hooksPath; an include can
 * hold it) or name a program git would run (which finds the real git first on its PATH, not the
 * gate)? The reason, or undefined.
 */
export function configDanger(rawKey: string, value: string): string | undefined {
  const key = rawKey.toLowerCase();
  if (key === 'core.hookspath') return `${key} switches the hooks off`;
  if (key.startsWith('include.') || key.startsWith('includeif.')) return `${key} includes configuration that may switch the hooks off or run a program`;
  if (key === 'core.editor' || key === 'sequence.editor') return editorSafe(value) ? undefined : `${key} runs a program`;
  if (key === 'core.pager' || key.startsWith('pager.')) return BOOL.includes(value) || pagerSafe(value) ? undefined : `${key} runs a program`;
  if (key.startsWith('alias.')) return value.startsWith('!') ? `${key} is a shell alias` : undefined;
  if (key === 'core.fsmonitor') return value === '' || BOOL.includes(value) ? undefined : `${key} runs a program`;
  if (glob('submodule.*.update').test(key)) return value.startsWith('!') ? `${key} runs a program` : undefined;
  if (key === 'protocol.allow' || key === 'protocol.ext.allow') return value === 'never' ? undefined : `${key} lets ext:: URLs run a program`;
  if (PROGRAM_RES.some((r) => r.test(key))) return `${key} runs a program`;
  return undefined;
}

/** Variables whose value is a program git runs (any value). */
export const PROGRAM_VARS = ['GIT_EXTERNAL_DIFF', 'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_PROXY_COMMAND', 'GIT_EXEC_PATH'] as const;
/** Every variable that makes the gate parse and judge even a harmless command. */
export const OVERRIDE_VARS = ['GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT', ...PROGRAM_VARS, 'GIT_PAGER', 'GIT_EDITOR', 'GIT_SEQUENCE_EDITOR'] as const;
/** Variables that point git at another repository, work tree or index: the owner fast path leaves these to the gate program. */
export const REDIRECT_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_COMMON_DIR',
  'GIT_CEILING_DIRECTORIES',
  'GIT_DISCOVERY_ACROSS_FILESYSTEM',
  'GIT_OBJECT_DIRECTORY',
] as const;

const o = (hook: GuardingHook, ...args: string[]): Attempt => ({ args, from: 'owned', hook });
const m = (hook: GuardingHook, ...args: string[]): Attempt => ({ args, from: 'main', hook });
const clean = (a: Attempt): Attempt => ({ ...a, committed: true });

export const GIT_RULES: readonly GitRule[] = [
  {
    commands: ['reset'],
    judged: 'always (an unstaging reset loses a staged version too)',
    targets: ['here'],
    classify: always,
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
    classify: (c, a) => {
      if (a.length === 0) c.verdict = 'pass';
      checkoutResets(c, a);
    },
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
    classify: checkoutResets,
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
    classify: (c, a) => {
      if (flags(a, 'n', ['--dry-run'], 'e') && !flags(a, 'i', ['--interactive'], 'e')) c.verdict = 'pass';
    },
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
    classify: classifyStash,
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
    classify: (c, a) => {
      if (flags(a, '', ['--dry-run'])) c.verdict = 'pass';
    },
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
    classify: always,
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
    classify: classifyPush,
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
    classify: (c, a) => {
      if (flags(a, 'n', ['--dry-run'])) c.verdict = 'pass';
    },
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
    classify: classifyCheckoutIndex,
    refused: [o('none', 'checkout-index', '-a', '-f'), m('none', 'checkout-index', '-a', '-f', '--prefix={wt}/')],
    passes: [['checkout-index', '--temp', 'a.txt']],
  },
  {
    commands: ['read-tree'],
    judged: 'with `-u`, or on an index (`GIT_INDEX_FILE` is judged as the worktree whose git dir holds it)',
    targets: ['here'],
    classify: (c, a) => {
      if (!flags(a, 'u', []) && flags(a, 'n', ['--dry-run', '--index-output'])) c.verdict = 'pass';
    },
    refused: [o('none', 'read-tree', '-u', '--reset', 'HEAD~1')],
    passes: [['read-tree', '-n', 'HEAD']],
  },
  {
    commands: ['apply'],
    judged: 'unless only `--stat`, `--numstat`, `--summary`, `--check`',
    targets: ['here'],
    classify: (c, a) => {
      if (flags(a, '', ['--stat', '--numstat', '--summary', '--check']) && !flags(a, '', ['--apply'])) c.verdict = 'pass';
    },
    refused: [],
    passes: [['apply', '--stat', '/dev/null']],
  },
  {
    commands: ['merge-file'],
    judged: 'unless `-p`',
    targets: ['here'],
    classify: (c, a) => {
      if (flags(a, 'p', ['--stdout'])) c.verdict = 'pass';
    },
    refused: [],
    passes: [],
  },
  {
    commands: ['bisect'],
    judged: 'but `log`, `view`, `visualize`, `terms`, `help`',
    targets: ['here'],
    classify: (c, a) => {
      if (['log', 'view', 'visualize', 'terms', 'help'].includes(a[0] ?? '')) c.verdict = 'pass';
    },
    refused: [],
    passes: [['bisect', 'log']],
  },
  {
    commands: ['sparse-checkout'],
    judged: 'but `list`, `check-rules`',
    targets: ['here'],
    classify: (c, a) => {
      if (['list', 'check-rules'].includes(a[0] ?? '')) c.verdict = 'pass';
    },
    refused: [],
    passes: [['sparse-checkout', 'list']],
  },
  {
    commands: ['reflog'],
    judged: '`expire` and `delete`; those that name `refs/stash` or `--all` also as every worktree that made a stash entry',
    targets: ['here', 'stash'],
    classify: classifyReflog,
    refused: [m('none', 'reflog', 'delete', 'stash@{0}'), m('none', 'reflog', 'expire', '--expire=now', '--all')],
    passes: [['reflog']],
  },
  {
    commands: ['submodule'],
    judged: '`deinit`, and `update --force`',
    targets: ['here'],
    classify: (c, a) => {
      if (a[0] === 'deinit') return;
      if (a[0] === 'update' && flags(a.slice(1), 'f', ['--force'])) return;
      c.verdict = 'pass';
    },
    refused: [],
    passes: [['submodule', 'status']],
  },
  {
    commands: ['branch'],
    judged: '`-f`, `-d`, `-D`, `-m`, `-M`, `-C`: as every worktree that has the branch checked out, wherever it runs',
    targets: ['branches'],
    classify: classifyBranch,
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
    classify: classifyUpdateRef,
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
    classify: classifySymbolicRef,
    refused: [o('none', 'symbolic-ref', 'HEAD', 'refs/heads/{other}')],
    passes: [['symbolic-ref', 'HEAD']],
  },
  {
    commands: ['worktree'],
    judged:
      '`remove`, `move`, `lock`, `unlock`, `repair` as the worktree they name (its path, or the end of its path as git matches it: `remove wt1`); `prune` as every owned worktree whose directory is gone; `add -B` and `add --force` as the branch they take',
    targets: ['path', 'missing', 'branches'],
    classify: classifyWorktree,
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
    classify: classifyConfig,
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
    classify: (c) => {
      c.verdict = 'elsewhere';
      c.add('owned');
    },
    refused: [m('none', 'fast-import', '--quiet')],
    passes: [],
  },
  {
    commands: ['replace'],
    judged:
      'but `-l` / `--list` (a replace ref makes every git of the repository read other content for an object, an owned HEAD too), as every owned worktree',
    targets: ['owned'],
    classify: classifyReplace,
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

/** The harmless commands agents run most, exec'ed before anything is parsed (the first `case` of bin/git-gate/git, gateShimBlock). */
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

/**
 * The commands the owner may run without the gate program being started: those whose every form
 * is judged only where git writes. With no global option and none of git's redirecting or
 * program-naming variables, the shim proves the caller's tenure there itself (bin/git-gate/git
 * od_owner_fast) and hands anything else to the gate program.
 */
export const OWNER_FAST: readonly string[] = GIT_RULES.filter((r) => r.targets.length === 1 && r.targets[0] === 'here').flatMap((r) => r.commands);

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

/**
 * The guard's refusals: the exit status the gate program answers each with (src/gate/guard.ts,
 * for the hooks, the PATH gate and `od-worktree guard`) and its stable reason code. The one home
 * of the mapping: src/gate reads it to answer, src/git/guard.ts to read the answer back,
 * docs/reason-codes.md carries its generated table (guardReasonDocTable); the shell never refuses
 * (it only accepts, and hands everything else to the gate program), so it holds no copy.
 * test/unit/reason-codes-doc.test.ts fails when the doc's copy differs or a shell file names a code.
 */
export const GUARD_REFUSALS = [
  { status: 10, reason: 'not_owner', when: "`OVERDECK_EXECUTION_SESSION_ID` names another session than the worktree's owner" },
  { status: 11, reason: 'stale_epoch', when: "`OVERDECK_EPOCH` names another epoch than the owner's current one" },
  {
    status: 14,
    reason: 'tenure_unproven',
    when: "the owner's session id without the secret of its tenure (`OVERDECK_TENURE_SECRET` missing or wrong): a copied session id proves nothing",
  },
  {
    status: 12,
    reason: 'unidentified',
    when: 'no session id and no secret: a person, or an agent that unset or emptied its variables; a person steps in with `od-worktree override`',
  },
  {
    status: 13,
    reason: 'provisional_conflict',
    when: "a provisional (offline) claim lost to the durable record: nobody moves the worktree's history until `od-worktree reconcile --repair`",
  },
  {
    status: 15,
    reason: 'projection_missing',
    when: "the worktree's lock file (`overdeck.lock.json`) says it is owned but its projection (`overdeck.config`) is gone or empty: nobody, the owner included, moves its history until the host agent writes the projection again (`od-worktree reconcile --repair`)",
  },
] as const;

export type GuardReason = (typeof GUARD_REFUSALS)[number]['reason'];

export function guardReasonOf(status: number): GuardReason | undefined {
  return GUARD_REFUSALS.find((r) => r.status === status)?.reason;
}

export function guardStatusOf(reason: GuardReason): number {
  return GUARD_REFUSALS.find((r) => r.reason === reason)!.status;
}

/** The guard's table in docs/reason-codes.md, between its generated markers. */
export function guardReasonDocTable(): string {
  return ['| code | meaning | exit status of the guard |', '|---|---|---|', ...GUARD_REFUSALS.map((r) => `| \`${r.reason}\` | ${r.when} | ${r.status} |`)].join(
    '\n',
  );
}
