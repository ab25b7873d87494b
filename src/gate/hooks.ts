/**
 * The installed git hooks' work beyond the owner's fast path: hooks/overdeck-hook.sh lets free
 * worktrees and the caller's own tenure through with shell builtins, and starts the gate program
 * as `od-gate hook <name> <args...>`, with the hook's stdin, for everything else. Here the rule is
 * ./guard.ts's, so every refusal, its reason, its next step and its journal line come from one
 * implementation; the shell only ever accepts. The hook runs at the worktree's top, where git runs
 * it; nothing here runs the previous hook (the shell chains to it when this answers 0).
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { firstLine, isFile } from './files';
import { appendJournal, callerFields, commonOf, type Env, guardAt, jv, mayBeOwned, type Owner, readOwner, type Verdict } from './guard';

export interface HookInput {
  /** The hook's name (pre-commit, pre-rebase, pre-push, reference-transaction). */
  name: string;
  /** Its arguments (reference-transaction: the phase). */
  args: readonly string[];
  /** Its stdin (pre-push, reference-transaction), whole. */
  stdin: string;
  /** Where git runs the hook: the worktree's top. */
  cwd: string;
  env: Env;
  /** The git the projection is asked of when it is not in the exact form od-worktree writes. */
  realGit: string;
}

export interface HookResult {
  /** 0: go ahead; else the refusal's status (GUARD_REFUSALS of src/domain/git-rules.ts). */
  status: number;
  stderr: string[];
}

/**
 * The hook's worktree's private git dir, absolute (a stash entry's maker and a journal are named
 * by it): git exports GIT_DIR to the hooks of a linked worktree; the main worktree has .git (a
 * directory, or a "gitdir:" file).
 */
export function hookGitDir(cwd: string, env: Env): string {
  let gd = env.GIT_DIR ?? '';
  if (gd === '') {
    const dotgit = path.join(cwd, '.git');
    gd = isFile(dotgit) ? firstLine(dotgit).replace(/^gitdir: /, '') : '.git';
  }
  return gd.startsWith('/') ? gd : `${cwd}/${gd}`;
}

/** The private git dirs of every worktree of the repository (the main one's, then the linked ones'). */
function worktreeDirs(common: string): string[] {
  let names: string[] = [];
  try {
    names = readdirSync(path.join(common, 'worktrees')).sort();
  } catch {
    // no linked worktrees
  }
  return [common, ...names.map((n) => `${common}/worktrees/${n}`)];
}

/**
 * The worktrees for which a move of REF is a move of their checked-out history: this one (HERE)
 * for HEAD; every worktree that has the branch checked out (a commit in a second worktree of an
 * owned branch moves the owner's branch too); for a replace ref (every git of the repository then
 * reads other content for an object), every worktree with a projection. Other refs (tags,
 * remote-tracking refs, refs/overdeck/wip/..., refs/stash) belong to no worktree.
 */
function holders(ref: string, here: string): string[] {
  if (ref === 'HEAD') return [here];
  if (ref.startsWith('refs/replace/')) return worktreeDirs(commonOf(here)).filter((c) => mayBeOwned(c));
  if (!ref.startsWith('refs/heads/')) return [];
  return worktreeDirs(commonOf(here)).filter((c) => firstLine(path.join(c, 'HEAD')) === `ref: ${ref}`);
}

/**
 * One journal line (docs/git-projection.md#the-journal) with the projection O and the caller's
 * environment, one append (concurrent appends do not interleave). EXTRA: more key=value pairs.
 */
function journal(gd: string, kind: string, move: readonly [string, string, string], o: Owner, env: Env, extra: readonly [string, string][] = []): void {
  const [old, neu, ref] = move;
  appendJournal(gd, [
    ['kind', kind],
    ['ref', jv(ref)],
    ['old', jv(old)],
    ['new', jv(neu)],
    ...callerFields(env, o),
    ['worker', jv(o.worker)],
    ['conversation', jv(o.conversation)],
    ...extra,
  ]);
}

/** The lines of a hook's stdin, each split at blanks as the shell's `read` splits them (the last field keeps the rest). */
function fields(stdin: string, n: number): string[][] {
  return stdin
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .map((l) => {
      const parts = l.split(/[ \t]+/);
      return [...parts.slice(0, n - 1), parts.slice(n - 1).join(' ')];
    });
}

class Refusal {
  constructor(
    readonly gd: string,
    readonly verdict: Verdict,
  ) {}
}

class Hook {
  readonly stderr: string[] = [];
  readonly here: string;
  private readonly allowed = new Set<string>();

  constructor(private readonly input: HookInput) {
    this.here = hookGitDir(input.cwd, input.env);
  }

  /** The rule for the worktree whose private git dir is GD: undefined when the caller may, else the refusal (its message said). */
  private refusalAt(gd: string): Refusal | undefined {
    if (this.allowed.has(gd)) return undefined;
    const v = guardAt(gd, this.input.env, this.input.realGit);
    if (v.status === 0) {
      this.allowed.add(gd);
      return undefined;
    }
    this.stderr.push(v.message ?? 'od-worktree: refused');
    return new Refusal(gd, v);
  }

  private hookRefused(r: Refusal, command: string): number {
    journal(r.gd, 'hook_refused', ['', '', ''], r.verdict.owner, this.input.env, [
      ['code', r.verdict.reason ?? 'refused'],
      ['command', command],
    ]);
    return r.verdict.status;
  }

  /** pre-commit, pre-rebase: may the caller change this worktree's history? */
  guard(command: string): number {
    const r = this.refusalAt(this.here);
    return r === undefined ? 0 : this.hookRefused(r, command);
  }

  /**
   * pre-push (<local ref> <local sha> <remote ref> <remote sha>): a push from an owned worktree,
   * or one that writes an owned branch on the remote by its local name or the remote one (a
   * force-push or a deletion of it, from any worktree) or pushes one, is the tenure's.
   */
  push(): number {
    const here = this.refusalAt(this.here);
    if (here !== undefined) return this.hookRefused(here, 'push');
    for (const [lref, , rref] of fields(this.input.stdin, 4)) {
      for (const ref of [lref!, rref!]) {
        for (const c of holders(ref, this.here)) {
          if (!mayBeOwned(c)) continue;
          const r = this.refusalAt(c);
          if (r !== undefined) return this.hookRefused(r, 'push');
        }
      }
    }
    return 0;
  }

  /**
   * reference-transaction "prepared" (<old> <new> <ref>): every owned worktree whose checked-out
   * history a line moves must let the caller through; a refused move is journalled in that
   * worktree's journal (ref_refused, with the branch a HEAD line moves).
   */
  prepared(): number {
    for (const [old, neu, ref] of fields(this.input.stdin, 3)) {
      // A line that moves nothing (worktree add writing a branch where it is) changes no history;
      // an all-zero old and new is a deletion whose old value was not given, and is judged.
      if (/[^0]/.test(old!) && old === neu) continue;
      for (const c of holders(ref!, this.here)) {
        if (!mayBeOwned(c)) continue;
        const r = this.refusalAt(c);
        if (r === undefined) continue;
        const jref = ref === 'HEAD' ? firstLine(path.join(c, 'HEAD')).replace(/^ref: /, '') : ref!;
        journal(c, 'ref_refused', [old!, neu!, jref], r.verdict.owner, this.input.env, [['code', r.verdict.reason ?? 'refused']]);
        return r.verdict.status;
      }
    }
    return 0;
  }

  /**
   * reference-transaction "committed": which worktree made each new stash entry
   * (<common>/overdeck-stash/<sha> holds its private git dir: refs/stash is shared, so the gate
   * judges dropping an entry as the worktree that made it), and one journal line per move of this
   * worktree's checked-out branch (of HEAD when detached).
   */
  committed(): number {
    const moves = fields(this.input.stdin, 3);
    for (const [, neu, ref] of moves) {
      if (ref !== 'refs/stash' || !/^[0-9a-f]+$/.test(neu!) || /^0+$/.test(neu!)) continue;
      const dir = path.join(commonOf(this.here), 'overdeck-stash');
      try {
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, neu!), `${this.here}\n`);
      } catch {
        // an unrecorded entry is judged by the branch its message names
      }
    }
    const head = firstLine(path.join(this.here, 'HEAD'));
    const branch = head.startsWith('ref: ') ? head.slice(5) : 'HEAD';
    const mine = moves.filter(([, , ref]) => ref === branch);
    if (mine.length === 0) return 0;
    const o = readOwner(this.here, this.input.realGit, this.input.env);
    if (!o.any) return 0;
    for (const [old, neu, ref] of mine) journal(this.here, 'commit', [old!, neu!, ref!], o, this.input.env);
    return 0;
  }
}

/** The hook NAME's answer (0: go ahead) and what it says on stderr. */
export function runHook(input: HookInput): HookResult {
  const h = new Hook(input);
  const phase = input.args[0] ?? '';
  let status = 0;
  if (input.name === 'pre-commit' || input.name === 'pre-rebase') status = h.guard(input.name.slice(4));
  else if (input.name === 'pre-push') status = h.push();
  else if (input.name === 'reference-transaction' && phase === 'prepared') status = h.prepared();
  else if (input.name === 'reference-transaction' && phase === 'committed') status = h.committed();
  return { status, stderr: h.stderr };
}

/** `od-worktree guard` (src/git/guard.ts guardCheck): the rule for the worktree at CWD, as the hooks run it. */
export function guardHere(cwd: string, env: Env, realGit: string): Verdict {
  return guardAt(hookGitDir(cwd, env), env, realGit);
}
