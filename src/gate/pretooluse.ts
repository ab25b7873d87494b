/**
 * The PreToolUse hook (hooks/pretooluse-git-gate.sh, docs/agent-gate.md#pretooluse-hook) for
 * agent CLIs that let a hook veto a shell command before it runs: Claude Code's, Codex's, and
 * hosts that send the call the same way. The command is parsed by a real shell parser (mvdan/sh,
 * the `mvdan-sh` package) and followed as a shell would follow it, without running anything:
 * every git command it would start is judged by the gate's judge (./judge.ts) in the directory
 * and with the environment git would have. A refusal answers 2 with the gate's message (the
 * agent CLI blocks the call and shows the reason); anything else 0; a malformed call 1 (reported,
 * not a veto: a broken hook must not block every shell command).
 *
 * Followed: `;`, `&&`, `||`, `|`, `&`, `( )`, `{ }`, if/while/for/case bodies (every branch taken,
 * in order), functions defined and called in the line, aliases defined in the line, `$( )` and
 * backquotes (their commands judged, and their output when it is known: echo, printf, pwd, cat of
 * a known input), `<( )`, here-docs and here-strings, `eval`, `sh|bash|... -c` with its positional
 * parameters, a shell reading a here-doc or `echo ... |`, the prefixes (env, sudo, doas, su, exec,
 * command, builtin, nohup, time, timeout, nice, ionice, stdbuf, setsid, flock, taskset, chrt,
 * xargs, find -exec), quoting, `$VAR` and `${VAR:-...}`, cd/pushd/popd, export/unset/declare/set -a.
 */
import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { realGit } from '../git/real-git';
import { type Env } from './guard';
import { judge } from './judge';

// mvdan-sh is GopherJS output without types: its nodes are read through the accessors below.
type N = { readonly [k: string]: unknown };
interface Syntax {
  NewParser(): { Parse(src: string, name: string): N };
  NodeType(n: unknown): string;
}
let syntaxLib: Syntax | undefined;
function syntax(): Syntax {
  // Loaded only here: the gate's own path never pays for the parser.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  syntaxLib ??= (require('mvdan-sh') as { syntax: Syntax }).syntax;
  return syntaxLib;
}
const type = (n: unknown): string => (n === null || n === undefined ? '' : syntax().NodeType(n));
const list = (n: N | null | undefined, k: string): N[] => {
  const v = n?.[k];
  return Array.isArray(v) ? (v as N[]) : [];
};
const node = (n: N | null | undefined, k: string): N | null => {
  const v = n?.[k];
  return v !== null && typeof v === 'object' ? (v as N) : null;
};
const text = (n: N | null | undefined, k: string): string => {
  const v = n?.[k];
  return typeof v === 'string' ? v : '';
};

/** Operator tokens as this build of the parser numbers them, read off parsed samples. */
interface Ops {
  and: unknown;
  or: unknown;
  pipe: unknown;
  pipeAll: unknown;
  hdoc: unknown;
  dashHdoc: unknown;
  wordHdoc: unknown;
  exp: Map<unknown, string>;
}
let opsCache: Ops | undefined;
function ops(): Ops {
  if (opsCache !== undefined) return opsCache;
  const p = (s: string): N => node(list(parse(s), 'Stmts')[0], 'Cmd')!;
  const redir = (s: string): unknown => list(list(parse(s), 'Stmts')[0], 'Redirs')[0]?.Op;
  const exp = new Map<unknown, string>();
  for (const op of [':-', '-', ':=', '=', ':+', '+', ':?', '?']) exp.set(node(list(list(p(`x \${a${op}b}`), 'Args')[1], 'Parts')[0], 'Exp')?.Op, op);
  opsCache = {
    and: p('a && b').Op,
    or: p('a || b').Op,
    pipe: p('a | b').Op,
    pipeAll: p('a |& b').Op,
    hdoc: redir('a <<E\nE'),
    dashHdoc: redir('a <<-E\nE'),
    wordHdoc: redir('a <<< x'),
    exp,
  };
  return opsCache;
}

class ParseFailure extends Error {}

function parse(src: string): N {
  try {
    return syntax().NewParser().Parse(src, '');
  } catch (e) {
    const err = e as { Error?: () => string };
    throw new ParseFailure(typeof err.Error === 'function' ? err.Error() : String(e));
  }
}

/** What only a command's output could say: a word holding it is not a directory to enter. */
const UNKNOWN = '\u0001';
const MAX_DEPTH = 24;
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ksh93', 'mksh', 'pdksh', 'oksh', 'ash', 'yash', 'posh', 'rbash']);
/** Wrappers that run the rest of their words: short options taking a value, long ones, operands before the command. */
const WRAPPERS: Readonly<Record<string, { short: string; long: readonly string[]; operands: number }>> = {
  nohup: { short: '', long: [], operands: 0 },
  builtin: { short: '', long: [], operands: 0 },
  setsid: { short: '', long: [], operands: 0 },
  busybox: { short: '', long: [], operands: 0 },
  fakeroot: { short: '', long: [], operands: 0 },
  chronic: { short: '', long: [], operands: 0 },
  unbuffer: { short: '', long: [], operands: 0 },
  eatmydata: { short: '', long: [], operands: 0 },
  nocache: { short: '', long: [], operands: 0 },
  time: { short: 'fo', long: ['format', 'output'], operands: 0 },
  timeout: { short: 'sk', long: ['signal', 'kill-after'], operands: 1 },
  nice: { short: 'n', long: ['adjustment'], operands: 0 },
  ionice: { short: 'cnp', long: ['class', 'classdata', 'pid'], operands: 0 },
  stdbuf: { short: 'ioe', long: ['input', 'output', 'error'], operands: 0 },
  taskset: { short: '', long: [], operands: 1 },
  chrt: { short: '', long: [], operands: 1 },
  caffeinate: { short: 'tw', long: [], operands: 0 },
};

interface Var {
  value: string;
  exported: boolean;
}

/** One shell's state: what a subshell copies and a child shell (sh -c) gets only the exported part of. */
class Shell {
  vars = new Map<string, Var>();
  funcs = new Map<string, N>();
  aliases = new Map<string, string>();
  dirs: string[] = [];
  allexport = false;
  constructor(
    public cwd: string,
    public pos: string[],
  ) {}

  clone(): Shell {
    const s = new Shell(this.cwd, [...this.pos]);
    for (const [k, v] of this.vars) s.vars.set(k, { ...v });
    s.funcs = new Map(this.funcs);
    s.aliases = new Map(this.aliases);
    s.dirs = [...this.dirs];
    s.allexport = this.allexport;
    return s;
  }

  child(env: Map<string, string>, cwd: string, pos: string[]): Shell {
    const s = new Shell(cwd, pos);
    for (const [k, v] of env) s.vars.set(k, { value: v, exported: true });
    return s;
  }

  get(name: string): string | undefined {
    return this.vars.get(name)?.value;
  }

  set(name: string, value: string, exported?: boolean): void {
    const was = this.vars.get(name);
    this.vars.set(name, { value, exported: exported ?? (this.allexport || (was?.exported ?? false)) });
  }

  env(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [k, v] of this.vars) if (v.exported) out.set(k, v.value);
    return out;
  }
}

/** A command's context: its environment, directory and standard input (undefined: not known). */
interface Ctx {
  env: Map<string, string>;
  cwd: string;
  stdin: string | undefined;
}

function absDir(base: string, d: string): string {
  return path.resolve(base, d);
}

function ansiC(raw: string): string {
  return raw.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/g, (_m, e: string) => {
    const c = e[0]!;
    if (c === 'x' || c === 'u' || c === 'U') return String.fromCodePoint(parseInt(e.slice(1), 16));
    if (/[0-7]/.test(c)) return String.fromCharCode(parseInt(e, 8));
    const simple: Record<string, string> = {
      n: '\n',
      t: '\t',
      r: '\r',
      a: '\x07',
      b: '\b',
      e: '\x1b',
      E: '\x1b',
      f: '\f',
      v: '\v',
      '\\': '\\',
      "'": "'",
      '"': '"',
    };
    return simple[c] ?? `\\${e}`;
  });
}

export class Walker {
  readonly messages: string[] = [];
  private readonly seen = new Set<string>();
  private depth = 0;

  constructor(private readonly judgeGit: (args: readonly string[], ctx: Ctx) => string[]) {}

  script(src: string, sh: Shell, stdin?: string): string | undefined {
    if (++this.depth > MAX_DEPTH) {
      this.depth--;
      return undefined;
    }
    try {
      return this.stmts(list(parse(src), 'Stmts'), sh, stdin);
    } finally {
      this.depth--;
    }
  }

  /** Statements in order; the output of the last when every one's is known. */
  private stmts(stmts: readonly N[], sh: Shell, stdin?: string): string | undefined {
    let out: string | undefined = '';
    for (const s of stmts) {
      const o = this.stmt(s, sh, stdin);
      out = out === undefined || o === undefined ? undefined : out + o;
    }
    return out;
  }

  private stmt(s: N, sh0: Shell, stdin0?: string): string | undefined {
    // A background job is a subshell: nothing it changes survives it.
    const sh = s.Background === true ? sh0.clone() : sh0;
    let stdin = stdin0;
    for (const r of list(s, 'Redirs')) {
      const o = ops();
      if (r.Op === o.hdoc || r.Op === o.dashHdoc) stdin = this.word(node(r, 'Hdoc'), sh, true, true).join('');
      else if (r.Op === o.wordHdoc) stdin = `${this.word(node(r, 'Word'), sh, true).join(' ')}\n`;
      else if (node(r, 'Word') !== null) this.word(node(r, 'Word'), sh);
    }
    return this.cmd(node(s, 'Cmd'), sh, stdin);
  }

  private cmd(c: N | null, sh: Shell, stdin?: string): string | undefined {
    const o = ops();
    switch (type(c)) {
      case 'CallExpr':
        return this.call(c!, sh, stdin);
      case 'BinaryCmd': {
        const x = node(c, 'X')!;
        const y = node(c, 'Y')!;
        if (c!.Op === o.pipe || c!.Op === o.pipeAll) {
          // Every element of a pipeline is a subshell; what one prints is the next one's input.
          const out = this.stmt(x, sh.clone(), stdin);
          return this.stmt(y, sh.clone(), out);
        }
        const a = this.stmt(x, sh, stdin);
        const b = this.stmt(y, sh, stdin);
        return a === undefined || b === undefined ? undefined : a + b;
      }
      case 'Subshell':
        return this.stmts(list(c, 'Stmts'), sh.clone(), stdin);
      case 'Block':
        return this.stmts(list(c, 'Stmts'), sh, stdin);
      case 'IfClause': {
        this.stmts(list(c, 'Cond'), sh, stdin);
        this.stmts(list(c, 'Then'), sh, stdin);
        if (node(c, 'Else') !== null) this.cmd(node(c, 'Else'), sh, stdin);
        return undefined;
      }
      case 'WhileClause':
        this.stmts(list(c, 'Cond'), sh, stdin);
        this.stmts(list(c, 'Do'), sh, stdin);
        return undefined;
      case 'ForClause': {
        const loop = node(c, 'Loop');
        if (type(loop) === 'WordIter') {
          const name = text(node(loop, 'Name'), 'Value');
          const items = list(loop, 'Items').length > 0 ? this.words(loop, sh, false, 'Items') : sh.pos.slice(1);
          for (const item of items.slice(0, 16)) {
            sh.set(name, item);
            this.stmts(list(c, 'Do'), sh, stdin);
          }
          if (items.length === 0) this.stmts(list(c, 'Do'), sh, stdin);
        } else this.stmts(list(c, 'Do'), sh, stdin);
        return undefined;
      }
      case 'CaseClause':
        this.word(node(c, 'Word'), sh);
        for (const item of list(c, 'Items')) this.stmts(list(item, 'Stmts'), sh, stdin);
        return undefined;
      case 'FuncDecl':
        sh.funcs.set(text(node(c, 'Name'), 'Value'), node(c, 'Body')!);
        return '';
      case 'DeclClause':
        this.decl(c!, sh);
        return '';
      case 'TimeClause':
        return node(c, 'Stmt') === null ? '' : this.stmt(node(c, 'Stmt')!, sh, stdin);
      case 'CoprocClause':
        if (node(c, 'Stmt') !== null) this.stmt(node(c, 'Stmt')!, sh.clone(), stdin);
        return undefined;
      default:
        // [[ ]], (( )), let: only the words they expand can run something.
        this.walkWords(c, sh);
        return undefined;
    }
  }

  /** Every Word below N expanded, for the command substitutions in it. */
  private walkWords(n: N | null, sh: Shell): void {
    if (n === null) return;
    for (const v of Object.values(n)) {
      if (Array.isArray(v)) for (const x of v) this.walkOne(x, sh);
      else this.walkOne(v, sh);
    }
  }

  private walkOne(v: unknown, sh: Shell): void {
    if (v === null || typeof v !== 'object') return;
    if (type(v) === 'Word') this.word(v as N, sh);
    else if (type(v) !== '') this.walkWords(v as N, sh);
  }

  private decl(c: N, sh: Shell): void {
    const variant = text(node(c, 'Variant'), 'Value');
    let exported = variant === 'export';
    let unexport = false;
    for (const a of list(c, 'Args')) {
      const name = text(node(a, 'Name'), 'Value');
      if (name === '') {
        const flag = this.word(node(a, 'Value'), sh).join(' ');
        if (flag.startsWith('-')) {
          if (variant === 'export' && flag.includes('n')) unexport = true;
          if (variant !== 'export' && flag.includes('x')) exported = true;
          if (/^-.*[fFp]/.test(flag)) return;
        } else if (flag.startsWith('+') && flag.includes('x')) unexport = true;
        continue;
      }
      const value = a.Naked === true ? sh.get(name) : this.word(node(a, 'Value'), sh, true).join('');
      if (value === undefined) {
        if (exported && !unexport) sh.vars.set(name, { value: '', exported: true });
        continue;
      }
      if (unexport) sh.vars.set(name, { value, exported: false });
      else if (exported) sh.vars.set(name, { value, exported: true });
      else sh.set(name, value);
    }
  }

  private call(c: N, sh: Shell, stdin?: string): string | undefined {
    const assigns = list(c, 'Assigns');
    const argWords = list(c, 'Args');
    if (argWords.length === 0) {
      for (const a of assigns) sh.set(text(node(a, 'Name'), 'Value'), this.word(node(a, 'Value'), sh, true).join(''));
      return '';
    }
    const env = sh.env();
    for (const a of assigns) env.set(text(node(a, 'Name'), 'Value'), this.word(node(a, 'Value'), sh, true).join(''));
    let fields = this.words(c, sh, false, 'Args');
    // An alias defined earlier in the line: its text stands for the first word, as bash reads it.
    const first = argWords[0]!;
    const lit = list(first, 'Parts').length === 1 && type(list(first, 'Parts')[0]) === 'Lit' ? text(list(first, 'Parts')[0], 'Value') : undefined;
    for (let n = 0; lit !== undefined && n < 8 && fields[0] !== undefined && sh.aliases.has(fields[0]); n++) {
      const expansion = list(parse(sh.aliases.get(fields[0])!), 'Stmts')[0];
      const call = node(expansion, 'Cmd');
      if (type(call) !== 'CallExpr') break;
      fields = [...this.words(call, sh, false, 'Args'), ...fields.slice(1)];
    }
    return this.run(fields, { env, cwd: sh.cwd, stdin }, sh);
  }

  /** A simple command's words, expanded: its prefixes, then what it is. */
  private run(F0: readonly string[], ctx: Ctx, sh: Shell): string | undefined {
    const F = [...F0];
    let i = 0;
    const setEnv = (a: string) => ctx.env.set(a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1));
    for (;;) {
      const b = path.basename(F[i] ?? '');
      if (b === 'env') {
        for (i++; i < F.length; i++) {
          const a = F[i]!;
          if (a === '--') {
            i++;
            break;
          }
          if (a === '-' || a === '--ignore-environment' || /^-[0iv]*i[0iv]*$/.test(a)) ctx.env.clear();
          else if (a === '-u' || a === '--unset') ctx.env.delete(F[++i] ?? '');
          else if (a.startsWith('--unset=')) ctx.env.delete(a.slice(8));
          else if (a.startsWith('-u')) ctx.env.delete(a.slice(2));
          else if (a === '-C' || a === '--chdir' || a.startsWith('-C') || a.startsWith('--chdir=')) {
            const d = a === '-C' || a === '--chdir' ? (F[++i] ?? '') : a.startsWith('-C') ? a.slice(2) : a.slice(8);
            if (!d.includes(UNKNOWN)) ctx.cwd = absDir(ctx.cwd, d);
          } else if (a === '-S' || a === '--split-string' || a.startsWith('-S') || a.startsWith('--split-string=')) {
            const str = a === '-S' || a === '--split-string' ? (F[++i] ?? '') : a.startsWith('-S') ? a.slice(2) : a.slice(15);
            return this.run(['env', ...str.split(/[ \t\n]+/).filter(Boolean), ...F.slice(i + 1)], ctx, sh);
          } else if (!a.startsWith('-')) break;
        }
        while (i < F.length && /^[^=]+=/.test(F[i]!)) setEnv(F[i++]!);
        continue;
      }
      if (b === 'sudo' || b === 'doas') {
        let keepAll = false;
        const keep: string[] = [];
        for (i++; i < F.length && /^-./.test(F[i]!); i++) {
          const a = F[i]!;
          if (a === '--') {
            i++;
            break;
          }
          if (a === '-E' || a === '--preserve-env') keepAll = true;
          else if (a.startsWith('--preserve-env=')) keep.push(...a.slice(15).split(','));
          else if (a === '-D' || a === '--chdir') {
            const d = F[++i] ?? '';
            if (!d.includes(UNKNOWN)) ctx.cwd = absDir(ctx.cwd, d);
          } else if (a.startsWith('--chdir=')) ctx.cwd = absDir(ctx.cwd, a.slice(8));
          else if (a === '-i' || a === '--login') ctx.cwd = '/';
          else if (a.startsWith('--')) {
            if (!a.includes('=') && /^--(close-from|group|host|prompt|chroot|role|type|command-timeout|other-user|user)$/.test(a)) i++;
          } else if (b === 'doas' ? /^-[Cu]$/.test(a) : /^-[CDghpRrTtUu]$/.test(a)) i++;
        }
        // sudo and doas reset the environment unless told to keep it.
        if (!keepAll) for (const k of [...ctx.env.keys()]) if (!keep.includes(k)) ctx.env.delete(k);
        while (i < F.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(F[i]!)) setEnv(F[i++]!);
        continue;
      }
      if (b === 'su' || b === 'runuser') {
        for (i++; i < F.length; i++) {
          const a = F[i]!;
          const cmd = a === '-c' || a === '--command' ? F[i + 1] : a.startsWith('--command=') ? a.slice(10) : undefined;
          if (cmd !== undefined) {
            ctx.env.clear();
            this.child(cmd, ['su'], ctx, sh);
            return undefined;
          }
          if (/^-[gGsw]$/.test(a) || /^--(group|supp-group|shell|whitelist-environment)$/.test(a)) i++;
        }
        return undefined;
      }
      if (b === 'exec') {
        for (i++; i < F.length && F[i]!.startsWith('-'); i++) {
          if (F[i] === '--') {
            i++;
            break;
          }
          if (F[i]!.includes('c')) ctx.env.clear();
          if (F[i]!.endsWith('a')) i++;
        }
        continue;
      }
      if (b === 'command') {
        for (i++; i < F.length && F[i]!.startsWith('-'); i++) {
          if (F[i] === '--') {
            i++;
            break;
          }
          if (/[vV]/.test(F[i]!)) return undefined;
        }
        // `command f` runs no function: what follows is looked up as a program.
        return this.program(F.slice(i), ctx, sh);
      }
      if (b === 'flock') {
        for (i++; i < F.length && /^-./.test(F[i]!); i++) {
          if (F[i] === '-c' || F[i] === '--command') {
            this.child(F[i + 1] ?? '', ['sh'], ctx, sh);
            return undefined;
          }
          if (/^-[wE]$/.test(F[i]!) || /^--(timeout|conflict-exit-code)$/.test(F[i]!)) i++;
        }
        i++;
        if (F[i] === '-c' || F[i] === '--command') {
          this.child(F[i + 1] ?? '', ['sh'], ctx, sh);
          return undefined;
        }
        continue;
      }
      const w = WRAPPERS[b];
      if (w !== undefined) {
        i = this.wrapOpts(F, i + 1, w) + w.operands;
        continue;
      }
      break;
    }
    const rest = F.slice(i);
    const fn = rest[0] !== undefined && i === 0 ? sh.funcs.get(rest[0]) : undefined;
    if (fn !== undefined && this.depth < MAX_DEPTH) {
      // A function defined in the line runs in this shell with its own positional parameters.
      const pos = sh.pos;
      sh.pos = [pos[0] ?? 'sh', ...rest.slice(1)];
      this.depth++;
      try {
        return this.stmt(fn, sh, ctx.stdin);
      } finally {
        this.depth--;
        sh.pos = pos;
      }
    }
    return this.program(rest, ctx, sh);
  }

  private wrapOpts(F: readonly string[], from: number, w: { short: string; long: readonly string[] }): number {
    let i = from;
    while (i < F.length && /^-./.test(F[i]!)) {
      const a = F[i]!;
      if (a === '--') return i + 1;
      if (a.startsWith('--')) {
        if (!a.includes('=') && w.long.includes(a.slice(2))) i++;
      } else if (!/^-[0-9]+$/.test(a)) {
        for (let k = 1; k < a.length; k++) {
          if (w.short.includes(a[k]!)) {
            if (k === a.length - 1) i++;
            break;
          }
        }
      }
      i++;
    }
    return i;
  }

  private program(F: readonly string[], ctx: Ctx, sh: Shell): string | undefined {
    if (F.length === 0) return '';
    const c = F[0]!;
    const b = path.basename(c);
    if (b === 'git') return this.git(F.slice(1), ctx);
    if (/^git-[a-z]/.test(b)) return this.git([b.slice(4), ...F.slice(1)], ctx);
    if (c !== b && (b === 'env' || b in WRAPPERS || b === 'sudo')) return this.run(F, ctx, sh);
    if (SHELLS.has(b)) return this.shell(F, 1, ctx, sh);
    switch (b) {
      case 'eval':
        // A special builtin: what it runs is this shell.
        return this.script(F.slice(1).join(' '), sh, ctx.stdin);
      case 'alias':
        for (const a of F.slice(1)) if (a.includes('=')) sh.aliases.set(a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1));
        return '';
      case 'xargs':
        return this.xargs(F, ctx, sh);
      case 'find':
        return this.find(F, ctx, sh);
      case 'cd': {
        let j = 1;
        while (j < F.length && /^-[LPe@]+$/.test(F[j]!)) j++;
        if (F[j] === '--') j++;
        this.chdir(sh, F[j] ?? sh.get('HOME') ?? '/');
        return '';
      }
      case 'pushd': {
        let j = 1;
        while (F[j] === '-n') j++;
        if (j >= F.length) {
          const t = sh.dirs.pop();
          if (t !== undefined) {
            sh.dirs.push(sh.cwd);
            sh.cwd = t;
          }
        } else if (!/^[-+][0-9]+$/.test(F[j]!)) {
          const was = sh.cwd;
          if (this.chdir(sh, F[j]!)) sh.dirs.push(was);
        }
        return '';
      }
      case 'popd': {
        const t = F.length === 1 ? sh.dirs.pop() : undefined;
        if (t !== undefined) sh.cwd = t;
        return '';
      }
      case 'export':
      case 'declare':
      case 'typeset':
      case 'local':
      case 'readonly':
        // Reached through a prefix (`builtin export ...`): the parser made no DeclClause of it.
        for (const a of F.slice(1)) {
          const m = /^([A-Za-z_][A-Za-z0-9_]*)=([^]*)$/.exec(a);
          if (m !== null) sh.set(m[1]!, m[2]!, b === 'export' ? true : undefined);
        }
        return '';
      case 'unset':
        if (F.includes('-f')) return '';
        for (const a of F.slice(1)) if (!a.startsWith('-')) sh.vars.delete(a);
        return '';
      case 'set': {
        for (const a of F.slice(1)) {
          if (a === '--') {
            sh.pos = [sh.pos[0] ?? 'sh', ...F.slice(F.indexOf('--') + 1)];
            break;
          }
          if (/^-[a-z]*a/.test(a)) sh.allexport = true;
          if (/^\+[a-z]*a/.test(a)) sh.allexport = false;
        }
        return '';
      }
      case 'echo': {
        let j = 1;
        let nl = true;
        let esc = false;
        for (; j < F.length && /^-[neE]+$/.test(F[j]!); j++) {
          if (F[j]!.includes('n')) nl = false;
          if (F[j]!.includes('e')) esc = true;
        }
        const out = F.slice(j).join(' ');
        return (esc ? ansiC(out) : out) + (nl ? '\n' : '');
      }
      case 'printf': {
        const fmt = F[1] ?? '';
        const args = F.slice(2);
        if (!fmt.includes('%')) return ansiC(fmt);
        if (/%[^s%]/.test(fmt)) return undefined;
        let out = '';
        let k = 0;
        do {
          out += ansiC(fmt).replace(/%[s%]/g, (m) => (m === '%%' ? '%' : (args[k++] ?? '')));
        } while (k < args.length);
        return out;
      }
      case 'pwd':
        return `${sh.cwd}\n`;
      case 'cat':
        return F.length === 1 ? ctx.stdin : undefined;
      case 'true':
      case ':':
        return '';
      default:
        return undefined;
    }
  }

  private chdir(sh: Shell, d: string): boolean {
    // A directory only a command's output names is not followed: the directory stays.
    if (d.includes(UNKNOWN)) return false;
    sh.cwd = absDir(sh.cwd, d);
    return true;
  }

  /** sh|bash|... [options] -c SCRIPT [NAME ARGS...], or a shell reading its script from a known stdin. */
  private shell(F: readonly string[], from: number, ctx: Ctx, sh: Shell): string | undefined {
    let cmode = false;
    let smode = false;
    let j = from;
    for (; j < F.length; j++) {
      const a = F[j]!;
      if (a === '--' || a === '-') {
        j++;
        break;
      }
      if (a.startsWith('--')) {
        if (a === '--rcfile' || a === '--init-file') j++;
        continue;
      }
      if (/^[-+][A-Za-z]+$/.test(a)) {
        if (a.startsWith('-')) {
          if (a.includes('c')) cmode = true;
          if (a.includes('s')) smode = true;
        }
        j += (a.match(/[oO]/g) ?? []).length;
        continue;
      }
      break;
    }
    if (cmode) {
      if (j < F.length) this.child(F[j]!, F.slice(j + 1), ctx, sh);
      return undefined;
    }
    if (j < F.length && !smode) return undefined;
    if (ctx.stdin !== undefined) this.child(ctx.stdin, [F[0]!, ...F.slice(j)], ctx, sh);
    return undefined;
  }

  /** A child shell: the exported environment only, its own positional parameters ($0 first). */
  private child(src: string, pos: readonly string[], ctx: Ctx, sh: Shell): void {
    const args = pos.length === 0 ? ['sh'] : [...pos];
    this.script(src, sh.child(ctx.env, ctx.cwd, args), undefined);
  }

  private xargs(F: readonly string[], ctx: Ctx, sh: Shell): string | undefined {
    let replace = false;
    let j = 1;
    for (; j < F.length && F[j]!.startsWith('-'); j++) {
      const a = F[j]!;
      if (a === '--') {
        j++;
        break;
      }
      if (/^-[adEILnPs]$/.test(a)) {
        if (a === '-I') replace = true;
        j++;
      } else if (/^--(arg-file|delimiter|eof|max-lines|max-args|max-procs|max-chars|process-slot-var)$/.test(a)) j++;
      else if (/^-[Ii]/.test(a) || a.startsWith('--replace')) replace = true;
    }
    const G = j >= F.length ? ['echo'] : F.slice(j);
    if (ctx.stdin !== undefined && !replace) G.push(...ctx.stdin.split(/[ \t\n]+/).filter(Boolean));
    this.run(G, { ...ctx, env: new Map(ctx.env), stdin: undefined }, sh);
    return undefined;
  }

  private find(F: readonly string[], ctx: Ctx, sh: Shell): string | undefined {
    const dir = F[1] !== undefined && !/^[-(!]/.test(F[1]) ? absDir(ctx.cwd, F[1]) : ctx.cwd;
    for (let j = 1; j < F.length; j++) {
      if (!/^-(exec|execdir|ok|okdir)$/.test(F[j]!)) continue;
      let k = j + 1;
      while (k < F.length && F[k] !== ';' && F[k] !== '+') k++;
      this.run(F.slice(j + 1, k), { env: new Map(ctx.env), cwd: F[j]!.endsWith('dir') ? dir : ctx.cwd, stdin: undefined }, sh);
      j = k;
    }
    return undefined;
  }

  private git(args: readonly string[], ctx: Ctx): string | undefined {
    const clean = args.map((a) => a.replaceAll(UNKNOWN, ''));
    const key = JSON.stringify([ctx.cwd, [...ctx.env].sort(), clean]);
    if (!this.seen.has(key)) {
      this.seen.add(key);
      this.messages.push(...this.judgeGit(clean, ctx));
    }
    return undefined;
  }

  /** A word's fields (QUOTED: one field, no splitting, as in an assignment or a here-doc). */
  private word(w: N | null, sh: Shell, quoted = false, dq = false): string[] {
    if (w === null) return [];
    const out: string[] = [];
    let cur = '';
    let has = false;
    list(w, 'Parts').forEach((p, idx) => {
      const r = this.part(p, sh, quoted, idx === 0, dq);
      if (r.fields !== undefined) {
        r.fields.forEach((f, k) => {
          if (k > 0) out.push(cur);
          cur = k > 0 ? f : cur + f;
          has = true;
        });
      } else if (r.split === true) {
        // An unquoted expansion is split into fields on blanks (the default IFS).
        r.value.split(/[ \t\n]+/).forEach((piece, k) => {
          if (k > 0 && has) {
            out.push(cur);
            cur = '';
            has = false;
          }
          if (piece !== '') {
            cur += piece;
            has = true;
          }
        });
      } else {
        cur += r.value;
        has = true;
      }
    });
    if (has) out.push(cur);
    return quoted ? [out.join(' ')] : out;
  }

  private words(n: N | null, sh: Shell, quoted: boolean, key = 'Parts'): string[] {
    if (key === 'Parts') return this.word(n, sh, quoted);
    return list(n, key).flatMap((w) => this.word(w, sh, quoted));
  }

  private part(p: N, sh: Shell, quoted: boolean, first: boolean, dq: boolean): { value: string; split?: boolean; fields?: string[] } {
    switch (type(p)) {
      case 'Lit': {
        let v = text(p, 'Value');
        if (dq) return { value: v.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c)) };
        if (first && (v === '~' || v.startsWith('~/'))) v = (sh.get('HOME') ?? '~') + v.slice(1);
        return { value: v.replace(/\\(\n|.)/g, (_m, c: string) => (c === '\n' ? '' : c)) };
      }
      case 'SglQuoted':
        return { value: p.Dollar === true ? ansiC(text(p, 'Value')) : text(p, 'Value') };
      case 'DblQuoted': {
        const inner = list(p, 'Parts');
        // "$@" is one field per positional parameter.
        if (inner.length === 1 && type(inner[0]) === 'ParamExp' && text(node(inner[0], 'Param'), 'Value') === '@' && node(inner[0], 'Exp') === null)
          return { value: '', fields: sh.pos.slice(1) };
        return { value: inner.map((x) => this.part(x, sh, true, false, true).value).join('') };
      }
      case 'ParamExp':
        return { value: this.param(p, sh), split: !quoted };
      case 'CmdSubst': {
        const out = this.stmts(list(p, 'Stmts'), sh.clone(), undefined);
        return { value: out === undefined ? UNKNOWN : out.replace(/\n+$/, ''), split: !quoted };
      }
      case 'ProcSubst':
        this.stmts(list(p, 'Stmts'), sh.clone(), undefined);
        return { value: '/dev/fd/63' };
      case 'ArithmExp':
        this.walkWords(p, sh);
        return { value: '0' };
      default:
        this.walkWords(p, sh);
        return { value: '' };
    }
  }

  private param(p: N, sh: Shell): string {
    const name = text(node(p, 'Param'), 'Value');
    let v: string | undefined;
    if (/^[0-9]+$/.test(name)) v = sh.pos[Number(name)];
    else if (name === '@' || name === '*') v = sh.pos.slice(1).join(' ');
    else if (name === '#') v = String(sh.pos.length - 1);
    else if (name === '?') v = '0';
    else if (name === 'PWD') v = sh.cwd;
    else v = sh.get(name);
    if (p.Length === true) return String((v ?? '').length);
    const exp = node(p, 'Exp');
    if (exp === null) return v ?? '';
    const op = ops().exp.get(exp.Op);
    const arg = () => this.word(node(exp, 'Word'), sh, true).join('');
    switch (op) {
      case ':-':
        return v === undefined || v === '' ? arg() : v;
      case '-':
        return v === undefined ? arg() : v;
      case ':=':
      case '=':
        if (v === undefined || (op === ':=' && v === '')) {
          v = arg();
          sh.set(name, v);
        }
        return v;
      case ':+':
        return v === undefined || v === '' ? '' : arg();
      case '+':
        return v === undefined ? '' : arg();
      default:
        return v ?? '';
    }
  }
}

const SHELL_TOOLS = new Set(['Bash', 'bash', 'Shell', 'shell', 'shell_command', 'local_shell', 'exec_command', 'container.exec', 'run_shell_command']);

/** The fields of a tool call the hook reads; everything else an agent CLI sends is left alone. */
const ToolCall = z.looseObject({
  tool_name: z.string().optional(),
  tool_input: z.looseObject({}).optional(),
});

const commandOf = (v: unknown): string | string[] | undefined =>
  typeof v === 'string' || (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) ? (v as string | string[]) : undefined;
const stringOf = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The exit status of the hook for one tool call (its JSON text). */
export function judgeToolCall(json: string, env: Env, say: (s: string) => void): number {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (e) {
    say(`od-worktree: pretooluse: the tool call is not valid JSON (${e instanceof Error ? e.message : String(e)}); its git commands are not checked\n`);
    return 1;
  }
  const call = ToolCall.safeParse(raw);
  if (!call.success) {
    say('od-worktree: pretooluse: the tool call is not valid JSON (not an object); its git commands are not checked\n');
    return 1;
  }
  const c = call.data;
  if (c.tool_name !== undefined && !SHELL_TOOLS.has(c.tool_name)) return 0;
  const input = c.tool_input ?? {};
  const command = commandOf(input.command) ?? commandOf(input.cmd) ?? commandOf(c.command) ?? commandOf(c.cmd);
  if (command === undefined) return 0;
  let base = (env.PWD ?? '').startsWith('/') ? env.PWD! : '/';
  for (const d of [c.cwd, c.workdir, input.cwd, input.workdir].map(stringOf)) if (d !== '') base = path.resolve(base, d);

  const walker = new Walker((args, ctx) => judgeIn(args, ctx));
  const hookEnv = new Map<string, string>();
  for (const [k, v] of Object.entries(env)) if (v !== undefined) hookEnv.set(k, v);
  const sh = new Shell(base, ['sh']);
  for (const [k, v] of hookEnv) sh.vars.set(k, { value: v, exported: true });
  try {
    if (typeof command === 'string') walker.script(command, sh);
    else walker['run'](command, { env: hookEnv, cwd: base, stdin: undefined }, sh);
  } catch (e) {
    if (!(e instanceof ParseFailure)) throw e;
    say(`od-worktree: pretooluse: the command is not shell the parser reads (${e.message}); its git commands are not checked\n`);
    return 1;
  }
  if (walker.messages.length === 0) return 0;
  say(walker.messages.map((m) => `${m}\n`).join(''));
  return 2;
}

/** The gate's judgement of `git ARGS` in the context's directory (entered physically, as git sees it) and environment. */
function judgeIn(args: readonly string[], ctx: Ctx): string[] {
  let cwd: string;
  try {
    if (!existsSync(ctx.cwd) || !statSync(ctx.cwd).isDirectory()) return [];
    cwd = realpathSync(ctx.cwd);
  } catch {
    return [];
  }
  const env: Record<string, string> = Object.fromEntries(ctx.env);
  env.PWD = cwd;
  const r = judge({ argv: args, cwd, env, realGit: realGit(env.PATH) });
  return r.status === 0 ? [] : r.stderr;
}

export async function preToolUse(stdin: NodeJS.ReadableStream, env: Env, say: (s: string) => void): Promise<number> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return judgeToolCall(Buffer.concat(chunks).toString('utf8'), env, say);
}
