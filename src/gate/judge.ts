/**
 * The gate's judgement (docs/agent-gate.md): may this git command line, run in this directory
 * with this environment, go ahead? It judges every command that would change an owned worktree
 * (its files, index, HEAD, branch, stash entries, or the worktree itself) against the projection
 * of the worktree git would WRITE to, however git is pointed there, with the guard's rule
 * (./guard.ts). It runs nothing of the command: the shim bin/git-gate/git execs the real git when
 * the answer is 0, so arguments, stdin, exit status and signals stay git's own; the PreToolUse
 * hook asks it for each git command of a tool call. Which commands are judged, and where, is the
 * table of src/domain/git-rules.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import {
  configDanger,
  editorSafe,
  GIT_RULES,
  type GitRule,
  HARMLESS,
  newClassification,
  type Classification,
  pagerSafe,
  PROGRAM_VARS,
  OVERRIDE_VARS,
  REDIRECT_VARS,
} from '../domain/git-rules';
import { firstLine, isDir, isFile } from './files';
import { commonOf, type Env, guardAt, journalRefusal, mayBeOwned } from './guard';

export interface JudgeInput {
  /** The arguments after `git`. */
  argv: readonly string[];
  /** The directory git is started in. */
  cwd: string;
  env: Env;
  /** The git the gate stands in front of. */
  realGit: string;
  /** The table; a test takes a row out of it to see its attempts catch the gap. */
  rules?: readonly GitRule[];
}

export interface Judgement {
  /** 0: git may run; 1: refused. */
  status: number;
  /** What the gate says on stderr (a refusal's lines). */
  stderr: string[];
}

class Refused extends Error {}

interface Parsed {
  cwd: string;
  nglob: number;
  cmd: string;
  cfg: [string, string][];
  prog: string;
}

/** git's global options consumed, so that the subcommand and the directory it runs in are known. */
function parseGlobals(argv: readonly string[], cwd0: string, env: Env): Parsed {
  const p: Parsed = { cwd: cwd0, nglob: 0, cmd: '', cfg: [], prog: '' };
  const kv = (s: string): [string, string] => {
    const i = s.indexOf('=');
    return i < 0 ? [s, 'true'] : [s.slice(0, i), s.slice(i + 1)];
  };
  const configEnv = (s: string) => {
    const i = s.lastIndexOf('=');
    const name = i < 0 ? s : s.slice(i + 1);
    const value = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? (env[name] ?? '') : '';
    p.cfg.push([i < 0 ? s : s.slice(0, i), value]);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    if (a === '-c' || a === '--config-env' || a === '-C' || ['--git-dir', '--work-tree', '--namespace', '--super-prefix', '--attr-source'].includes(a)) {
      if (next === undefined) return p;
      if (a === '-c') p.cfg.push(kv(next));
      else if (a === '--config-env') configEnv(next);
      else if (a === '-C' && next !== '') p.cwd = next.startsWith('/') ? next : `${p.cwd}/${next}`;
      i++;
      p.nglob += 2;
      continue;
    }
    if (a.startsWith('--config-env=')) configEnv(a.slice('--config-env='.length));
    else if (a.startsWith('--exec-path=')) p.prog = '--exec-path';
    else if (a.startsWith('-C')) {
      const d = a.slice(2);
      p.cwd = d.startsWith('/') ? d : `${p.cwd}/${d}`;
    } else if (a === '--') {
      p.nglob += 1;
      p.cmd = argv[i + 1] ?? '';
      return p;
    } else if (!a.startsWith('-')) {
      p.cmd = a;
      return p;
    }
    p.nglob += 1;
  }
  return p;
}

/**
 * GIT_CONFIG_PARAMETERS ('key'='value' or 'key=value' items, shell-quoted as git writes them for
 * -c) and GIT_CONFIG_COUNT / GIT_CONFIG_KEY_<n> / GIT_CONFIG_VALUE_<n>, as key, value pairs.
 */
function envConfig(env: Env): [string, string][] {
  const out: [string, string][] = [];
  let r = env.GIT_CONFIG_PARAMETERS ?? '';
  while (r !== '') {
    r = r.replace(/^ +/, '');
    if (r === '') break;
    let item = '';
    while (r !== '' && !r.startsWith(' ')) {
      if (r.startsWith("'")) {
        const end = r.indexOf("'", 1);
        item += end < 0 ? r.slice(1) : r.slice(1, end);
        r = end < 0 ? '' : r.slice(end + 1);
      } else if (r.startsWith("\\'")) {
        item += "'";
        r = r.slice(2);
      } else {
        item += r[0];
        r = r.slice(1);
      }
    }
    const i = item.indexOf('=');
    out.push(i < 0 ? [item, 'true'] : [item.slice(0, i), item.slice(i + 1)]);
  }
  const count = Math.min(/^[0-9]+$/.test(env.GIT_CONFIG_COUNT ?? '') ? Number(env.GIT_CONFIG_COUNT) : 0, 1000);
  for (let i = 0; i < count; i++) out.push([env[`GIT_CONFIG_KEY_${i}`] ?? '', env[`GIT_CONFIG_VALUE_${i}`] ?? '']);
  return out;
}

/** Configuration or a program handed to git for this command that switches the hooks off or runs a program: why, or ''. */
function overrides(p: Parsed, env: Env): string {
  if (p.prog !== '') return `${p.prog} runs git's commands from another directory`;
  for (const [k, v] of p.cfg) {
    const why = configDanger(k, v);
    if (why !== undefined) return why;
  }
  if (!OVERRIDE_VARS.some((n) => (env[n] ?? '') !== '')) return '';
  for (const [k, v] of envConfig(env)) {
    const why = configDanger(k, v);
    if (why !== undefined) return `${why} (from the environment)`;
  }
  for (const n of PROGRAM_VARS) if ((env[n] ?? '') !== '') return `${n} runs a program`;
  for (const n of ['GIT_EDITOR', 'GIT_SEQUENCE_EDITOR'] as const) {
    const v = env[n] ?? '';
    if (v !== '' && !editorSafe(v)) return `${n} runs a program`;
  }
  const pager = env.GIT_PAGER ?? '';
  if (pager !== '' && !pagerSafe(pager)) return 'GIT_PAGER runs a program';
  return '';
}

const physical = (d: string): string => {
  try {
    return realpathSync(d);
  } catch {
    return d;
  }
};
const parent = (d: string): string | undefined => {
  if (d === '' || d === '/' || !d.includes('/')) return undefined;
  const up = d.slice(0, d.lastIndexOf('/'));
  return up === '' ? '/' : up;
};

/** The private git dir of the worktree whose top is DIR, if any. */
function gdOfTop(dir: string): string {
  const dotgit = `${dir === '/' ? '' : dir}/.git`;
  if (isDir(dotgit)) return dotgit;
  if (isFile(dotgit)) {
    const line = firstLine(dotgit);
    if (line.startsWith('gitdir: /')) return line.slice(8);
    if (line.startsWith('gitdir: ')) return `${dir}/${line.slice(8)}`;
  }
  return '';
}

/**
 * Could the config FILE move the work tree? When it mentions a worktree setting or includes a
 * file other than the projection (`[include] path = overdeck.config`, which od-worktree writes);
 * then only git can say.
 */
function redirectsWorktree(file: string): boolean {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  let inInclude = false;
  for (const raw of text.split('\n')) {
    const t = raw.replace(/^[\t ]+/, '');
    if (t === 'worktreeConfig = true' || t === 'worktreeconfig = true') continue;
    if (/worktree/i.test(t)) return true;
    if (t.startsWith('[')) {
      inInclude = false;
      if (/include[^\]]*\].*[^ \t]/i.test(t)) return true;
      if (/include/i.test(t)) inInclude = true;
      continue;
    }
    if (!inInclude) continue;
    if (!['path = overdeck.config', 'path = "overdeck.config"', ''].includes(t)) return true;
  }
  return false;
}

class Gate {
  private readonly judged = new Set<string>();
  readonly stderr: string[] = [];
  gd = '';
  common = '';
  top = '';
  private p!: Parsed;
  private classification!: Classification;

  constructor(
    private readonly input: JudgeInput,
    private readonly rules: readonly GitRule[],
  ) {}

  private git(args: readonly string[], opts: { input?: 'null'; env?: Env } = {}): { status: number; stdout: string } {
    const r = spawnSync(this.input.realGit, [...args], {
      cwd: this.input.cwd,
      env: { ...(opts.env ?? this.input.env) } as NodeJS.ProcessEnv,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return { status: r.status ?? -1, stdout: typeof r.stdout === 'string' ? r.stdout : '' };
  }

  private globals(): string[] {
    return this.input.argv.slice(0, this.p.nglob);
  }

  /** 0 when the caller may mutate the worktree whose private git dir is GD; a refusal is journalled there and thrown. */
  private judgeGd(gd: string): void {
    if (gd === '' || !mayBeOwned(gd)) return;
    if (this.judged.has(gd)) return;
    this.judged.add(gd);
    const v = guardAt(gd, this.input.env, this.input.realGit);
    if (v.status === 0) return;
    this.stderr.push(v.message ?? 'od-worktree: refused');
    journalRefusal(gd, v, this.p.cmd, this.input.env);
    throw new Refused();
  }

  private judgeEnclosing(dir: string): void {
    for (let w: string | undefined = dir; w !== undefined; w = parent(w)) this.judgeGd(gdOfTop(w));
  }

  private locateFast(): boolean {
    if (this.p.nglob !== 0) return false;
    const env = this.input.env;
    if (REDIRECT_VARS.some((n) => (env[n] ?? '') !== '')) return false;
    let w: string | undefined = physical(this.input.cwd);
    if (/\/\.git(\/|$)/.test(w)) return false;
    for (; w !== undefined; w = parent(w)) {
      if (existsSync(`${w === '/' ? '' : w}/.git`)) {
        const gd = gdOfTop(w);
        if (gd === '' || !existsSync(path.join(gd, 'HEAD'))) return false;
        const common = commonOf(gd);
        if (redirectsWorktree(path.join(common, 'config')) || redirectsWorktree(path.join(gd, 'config.worktree'))) return false;
        this.gd = gd;
        this.common = common;
        this.top = w;
        return true;
      }
    }
    return false;
  }

  /** Where git will write, asked of git itself with the same global options and environment. */
  locate(): void {
    this.gd = '';
    this.common = '';
    this.top = '';
    if (this.locateFast()) return;
    const ask = (globals: string[]) => this.git([...globals, 'rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir', '--show-toplevel']);
    let r = ask(this.globals());
    // A setting git cannot read (an include naming a directory, say) makes git fail to say where it
    // is; the same setting may read otherwise a moment later. Located without the caller's settings,
    // the command is still judged where it would write, never let through for want of a place.
    if (r.status !== 0) r = ask(withoutSettings(this.globals()));
    const out = r.stdout.split('\n');
    this.gd = out[0] ?? '';
    this.common = out[1] ?? '';
    this.top = out[2] ?? '';
  }

  private judgeHere(): void {
    this.judgeGd(this.gd);
    if (this.top !== '') this.judgeEnclosing(this.top);
    const ix = this.input.env.GIT_INDEX_FILE ?? '';
    if (ix !== '') {
      const abs = ix.startsWith('/') ? ix : `${this.p.cwd}/${ix}`;
      this.judgeGd(abs.slice(0, abs.lastIndexOf('/')));
    }
  }

  private worktreeGds(): string[] {
    const out = [this.common];
    for (const c of this.listWorktrees()) if (existsSync(path.join(c, 'HEAD'))) out.push(c);
    return out;
  }

  private listWorktrees(): string[] {
    try {
      return readdirSync(path.join(this.common, 'worktrees'))
        .sort()
        .map((n) => path.join(this.common, 'worktrees', n));
    } catch {
      return [];
    }
  }

  /** Every worktree of the repository whose HEAD is REF ('*': any branch). */
  private judgeBranch(ref0: string): void {
    let ref = ref0;
    if (ref === 'HEAD') return this.judgeGd(this.gd);
    if (ref === 'main-worktree/HEAD') return this.judgeGd(this.common);
    if (/^worktrees\/.*\/HEAD$/.test(ref)) return this.judgeGd(`${this.common}/${ref.slice(0, -'/HEAD'.length)}`);
    if (ref === 'refs/stash') return this.judgeStashAll();
    if (ref.startsWith('refs/replace/')) return this.judgeOwned();
    if (ref !== '*' && !ref.startsWith('refs/heads/')) {
      if (ref.startsWith('refs/')) return;
      ref = ref.startsWith('heads/') ? `refs/${ref}` : `refs/heads/${ref}`;
    }
    for (const c of this.worktreeGds()) {
      const h = firstLine(path.join(c, 'HEAD'));
      if (ref === '*' ? h.startsWith('ref: refs/heads/') : h === `ref: ${ref}`) this.judgeGd(c);
    }
  }

  /** The worktree that made the stash entry SHA (as reference-transaction recorded it), or the branch its message names. */
  private judgeStashEntry(sha: string): void {
    if (!/^[0-9a-f]+$/.test(sha)) return;
    const rec = path.join(this.common, 'overdeck-stash', sha);
    if (existsSync(rec)) return this.judgeGd(firstLine(rec));
    const r = this.git([`--git-dir=${this.common}`, 'log', '-1', '--format=%s', sha]);
    if (r.status !== 0) return;
    const subject = r.stdout.split('\n')[0] ?? '';
    const m = /^(?:WIP on |On )([^:]*):/.exec(subject);
    if (m !== null && m[1] !== '(no branch)') this.judgeBranch(m[1]!);
  }

  private judgeStashAll(): void {
    let log: string;
    try {
      log = readFileSync(path.join(this.common, 'logs/refs/stash'), 'utf8');
    } catch {
      return;
    }
    for (const line of log.split('\n')) {
      const entry = line.trim().split(/\s+/)[1];
      if (entry !== undefined) this.judgeStashEntry(entry);
    }
  }

  private judgeMissing(): void {
    for (const c of this.listWorktrees()) {
      const gitdir = path.join(c, 'gitdir');
      if (!existsSync(gitdir)) continue;
      if (existsSync(firstLine(gitdir))) continue;
      this.judgeGd(c);
    }
  }

  private judgeOwned(): void {
    for (const c of this.worktreeGds()) this.judgeGd(c);
  }

  /** The worktrees git would find by NAME: the end of a registered worktree's path, or its private git dir's name. */
  private judgeWtNamed(name0: string): void {
    const nm = name0.replace(/(.)\/+$/, '$1');
    if (nm === '') return;
    const ends = (p: string) => p === nm || p.endsWith(`/${nm}`);
    for (const c of this.listWorktrees()) {
      const gitdir = path.join(c, 'gitdir');
      if (!existsSync(gitdir)) continue;
      const wtp = firstLine(gitdir).replace(/\/\.git$/, '');
      if (ends(wtp)) this.judgeGd(c);
      if (path.basename(c) === nm) this.judgeGd(c);
    }
    if (this.common.endsWith('/.git') && ends(this.common.slice(0, -5))) this.judgeGd(this.common);
  }

  private hasOwned(common: string): boolean {
    if (mayBeOwned(common)) return true;
    try {
      return readdirSync(path.join(common, 'worktrees')).some((n) => mayBeOwned(path.join(common, 'worktrees', n)));
    } catch {
      return false;
    }
  }

  /** The common git dir of the repository a push URL names on this machine (a path, file://), or ''. */
  private localCommon(url0: string): string {
    let u = url0;
    if (u.startsWith('file://')) u = u.slice(7);
    else if (!(u.startsWith('/') || u === '.' || u.startsWith('./') || u.startsWith('../'))) {
      if (u.includes('::')) return '';
      if (u.includes(':') && !u.slice(0, u.indexOf(':')).includes('/')) return '';
    }
    if (!u.startsWith('/')) u = `${this.p.cwd}/${u}`;
    for (const p of [u, `${u}.git`]) {
      let gd: string;
      if (existsSync(`${p}/.git`)) gd = gdOfTop(p);
      else if (isFile(`${p}/HEAD`) && (isDir(`${p}/objects`) || isFile(`${p}/commondir`))) gd = p;
      else continue;
      if (gd === '') continue;
      try {
        return realpathSync(commonOf(gd));
      } catch {
        return '';
      }
    }
    return '';
  }

  /**
   * A push whose destination is a repository on this machine with owned worktrees is judged with
   * the refs git resolves there (`push --dry-run --porcelain`), as the worktrees there that have
   * them checked out. A receive-pack of the caller's own or a program override could switch its
   * hooks off: judged as every owned worktree there. Asked with git's own receive-pack.
   */
  private judgePushDest(why: string): void {
    const argv = this.input.argv;
    const n = this.p.nglob;
    const globals = argv.slice(0, n);
    const rest = argv.slice(n + 1);
    const dry: string[] = [...globals, 'push'];
    for (let i = 0; i < rest.length; i++) {
      const a = rest[i]!;
      if (a === '--receive-pack' || a === '--exec') i++;
      else if (!(a.startsWith('--receive-pack=') || a.startsWith('--exec=') || ['-q', '--quiet', '-v', '--verbose', '--porcelain'].includes(a))) dry.push(a);
    }
    let repo = '';
    let pos = 0;
    for (let i = 0; i < rest.length; i++) {
      const a = rest[i]!;
      if (a === '--repo') {
        if (repo === '' && i + 1 < rest.length) repo = rest[i + 1]!;
        i++;
      } else if (a.startsWith('--repo=')) repo = a.slice(7);
      else if (a === '-o' || a === '--push-option') i++;
      else if (!a.startsWith('-') && pos === 0) {
        pos = 1;
        if (repo === '') repo = a;
      }
    }
    if (repo === '') {
      const h = firstLine(path.join(this.gd, 'HEAD'));
      if (h.startsWith('ref: refs/heads/')) repo = this.git([...globals, 'for-each-ref', '--format=%(push:remotename)', h.slice(5)]).stdout.trim();
      if (repo === '') repo = 'origin';
    }
    let urls = this.git([...globals, 'config', '--get-all', `remote.${repo}.pushurl`]).stdout;
    if (urls.trim() === '') {
      const r = this.git([...globals, 'ls-remote', '--get-url', repo]);
      urls = r.status === 0 ? r.stdout : repo;
    }
    const commons = urls
      .split('\n')
      .filter((u) => u !== '')
      .map((u) => this.localCommon(u))
      .filter((c) => c !== '' && this.hasOwned(c));
    if (commons.length === 0) return;
    const prog = this.classification.pushProg || this.git([...globals, 'config', '--get', `remote.${repo}.receivepack`]).stdout.trim() !== '';
    const save = this.common;
    try {
      if (prog || why !== '') {
        for (const c of commons) {
          this.common = c;
          this.judgeOwned();
        }
      }
      this.common = save;
      const out = this.git([...dry, '--dry-run', '--porcelain', '--no-verify', '--receive-pack=git-receive-pack'], {
        env: { ...this.input.env, GIT_TERMINAL_PROMPT: '0' },
      });
      const refs: string[] = [];
      for (const line of out.stdout.split('\n')) {
        const [flag, spec] = line.split('\t');
        if (flag === undefined || spec === undefined || ![' ', '+', '-', '*', '!', '='].includes(flag)) continue;
        if (spec.includes(':')) refs.push(spec.slice(spec.lastIndexOf(':') + 1));
      }
      // git could not say which refs: every owned worktree there.
      if (refs.length === 0 && out.status !== 0) refs.push('*all*');
      for (const c of commons) {
        this.common = c;
        for (const r of refs) {
          if (r === '*all*') this.judgeOwned();
          else if (r.startsWith('refs/heads/') || r.startsWith('refs/replace/')) this.judgeBranch(r);
        }
      }
    } finally {
      this.common = save;
    }
  }

  private judgeTargets(): void {
    for (const t of this.classification.targets) {
      switch (t.kind) {
        case 'branch':
          this.judgeBranch(t.value);
          break;
        case 'path': {
          // git resolves the path it is given physically: so does the judgement.
          this.judgeEnclosing(isDir(t.value) ? physical(t.value) : t.value);
          break;
        }
        case 'stash': {
          const r = this.git([...this.globals(), 'rev-parse', '--verify', '-q', `${t.value}^{commit}`]);
          if (r.status === 0) this.judgeStashEntry(r.stdout.trim());
          break;
        }
        case 'stash-all':
          this.judgeStashAll();
          break;
        case 'missing':
          this.judgeMissing();
          break;
        case 'owned':
          this.judgeOwned();
          break;
        case 'wtname':
          this.judgeWtNamed(t.value);
          break;
        case 'push-dest':
          break;
      }
    }
  }

  private classify(cmd: string, args: readonly string[]): Classification {
    const c = newClassification(this.p.cwd);
    if (args[0] === '-h' || args[0] === '--help') {
      c.verdict = 'pass';
      return c;
    }
    const rule = this.rules.find((r) => r.commands.includes(cmd));
    if (rule !== undefined) rule.classify(c, args);
    // A row a test took out of `rules` hands its commands to git unjudged, as a forgotten row would.
    else if (cmd === '' || HARMLESS.includes(cmd) || GIT_RULES.some((r) => r.commands.includes(cmd))) c.verdict = 'pass';
    else c.verdict = 'unknown';
    return c;
  }

  run(): void {
    const { argv, env } = this.input;
    this.p = parseGlobals(argv, logicalCwd(this.input.cwd, env), env);
    if (this.p.cmd === '') return;
    const why = overrides(this.p, env);
    let located = false;
    if (why !== '') {
      this.locate();
      located = true;
      if (this.gd !== '') {
        try {
          this.judgeOwned();
        } catch (e) {
          this.stderr.push(`od-worktree: why: ${why}, in a repository with owned worktrees; only the tenure of every one of them may`);
          throw e;
        }
      }
    }
    let cmd = this.p.cmd;
    let expanded: string[] = [];
    for (let depth = 0; ;) {
      this.classification = this.classify(cmd, [...expanded, ...argv.slice(this.p.nglob + 1)]);
      if (this.classification.verdict === 'pass') return;
      if (!located) {
        this.locate();
        located = true;
        // Outside any repository git fails by itself.
        if (this.gd === '') return;
      }
      if (this.classification.verdict === 'unknown') {
        // Not a command this gate knows (an external git-foo, or an alias): harmless unless an alias of one it judges.
        const r = this.git([...this.globals(), 'config', '--get', `alias.${cmd}`]);
        if (r.status !== 0) return;
        const alias = r.stdout.replace(/\n$/, '');
        if (alias.startsWith('!')) {
          // A shell alias runs anything, with git's own directory first on PATH: judged as every owned worktree.
          this.classification.verdict = 'here';
          this.classification.add('owned');
        } else {
          if (++depth > 8) return;
          const words = alias.split(/[ \t\n]+/).filter(Boolean);
          cmd = alias.split(/[ \t]/)[0] ?? '';
          expanded = [...words.slice(cmd === '' ? 0 : 1), ...expanded];
          continue;
        }
      }
      if (this.classification.verdict === 'here') this.judgeHere();
      if (this.classification.targets.some((t) => t.kind === 'push-dest')) this.judgePushDest(why);
      this.judgeTargets();
      return;
    }
  }
}

/** The directory as the shell's $PWD names it (a symlinked path kept), when PWD is that directory. */
function logicalCwd(cwd: string, env: Env): string {
  const pwd = env.PWD;
  if (pwd !== undefined && pwd.startsWith('/') && physical(pwd) === physical(cwd)) return pwd;
  return cwd;
}

export function judge(input: JudgeInput): Judgement {
  const gate = new Gate(input, input.rules ?? GIT_RULES);
  try {
    gate.run();
    return { status: 0, stderr: gate.stderr };
  } catch (e) {
    if (e instanceof Refused) return { status: 1, stderr: gate.stderr };
    throw e;
  }
}

/** Global options without the caller's `-c`/`--config-env` settings: only where git runs stays. */
function withoutSettings(globals: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < globals.length; i++) {
    const a = globals[i]!;
    if (a === '-c' || a === '--config-env') i++;
    else if (!(a.startsWith('-c') && a.length > 2) && !a.startsWith('--config-env=')) out.push(a);
  }
  return out;
}
