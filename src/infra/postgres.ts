import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { pgBinaries, type PgBinaries } from './pg-binaries';
import { groupRunning } from '../host/procfs';

export interface EmbeddedPg {
  /** Server URL without a database name. */
  serverUrl: string;
  pid: number;
  /** Where the cluster's files are (dataDir, or where it had to move as root: see resolvePgDataDir). */
  dataDir: string;
  /** Fast shutdown (SIGINT), immediate (SIGQUIT) after `graceMs` (default 5 s), SIGKILL of its group after that. */
  stop(graceMs?: number): Promise<void>;
}

export interface EmbeddedPgOptions {
  dataDir: string;
  port: number;
  log?: (line: string) => void;
  /**
   * Spawn the server in its own process group (`npm start`: a Ctrl-C then reaches the ordered
   * stop first, which stops PostgreSQL after the worker). Default: in the caller's group, so a
   * Ctrl-C of a test run or a bench stops it along with them.
   */
  ownGroup?: boolean;
  /** told each child's pid the moment it is spawned: initdb (first start only), then the postmaster */
  onSpawn?: (pid: number, what: 'initdb' | 'postgres') => void;
  /** told once when, running as root, the data had to live elsewhere than `dataDir` (one line for people) */
  onNote?: (line: string) => void;
  /**
   * Also listen on `address` and let `network` (CIDR) in with the password: a multi-host run's
   * hosts reach it over their links. Default: 127.0.0.1 only.
   */
  alsoListen?: { address: string; network: string };
}

const PG_USER = 'postgres';
/** The password of clusters initialised before each got its own (kept working: see clusterPassword). */
const LEGACY_PG_PASSWORD = 'postgres';

/**
 * Where a cluster's password is kept: `<dataDir>.password` (`.data/pg.password`), mode 0600, owned
 * by the user running the service (never inside the cluster directory, which the postgres user
 * owns). It is a random 32-byte value, base64url, so it can stand in a URL unescaped.
 */
export function pgPasswordFile(dataDir: string): string {
  return `${path.resolve(dataDir)}.password`;
}

const newPassword = () => randomBytes(32).toString('base64url');

/** The file's password; a file others can read is a password every local user holds: refused, with the fix. */
function readPasswordFile(file: string): string | null {
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return null;
  }
  if (!st.isFile()) throw new Error(`${file}: the embedded PostgreSQL's password file is not a regular file`);
  if ((st.mode & 0o077) !== 0) throw new Error(`${file}: the embedded PostgreSQL's password file is readable or writable by others: chmod 600 ${file}`);
  const pw = readFileSync(file, 'utf8').trim();
  if (!/^[A-Za-z0-9_-]{16,}$/.test(pw)) throw new Error(`${file}: not a password this service wrote (base64url, at least 16 characters)`);
  return pw;
}

/** Written whole (a temporary file renamed over), 0600, before anything depends on it. */
function writePasswordFile(file: string, pw: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${pw}\n`, { mode: 0o600, flag: 'w' });
  renameSync(tmp, file);
}

interface RunAs {
  uid?: number;
  gid?: number;
}

/** The uid and gid of `name` from /etc/passwd, else from `id` (NSS users); null when there is no such user. */
function lookupUser(name: string): RunAs | null {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f[0] === name && f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) };
    }
  } catch {
    /* no /etc/passwd: ask id */
  }
  const id = (flag: string) => spawnSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const u = id('-u');
  // Interrupted (a Ctrl-C reaches our whole group) is not "no such user": never create one on a signal.
  if (u.signal || u.error) throw new Error(`could not look up the ${name} user (id ${u.signal ?? u.error?.message})`);
  if (u.status !== 0) return null;
  const g = id('-g');
  if (g.signal || g.error || g.status !== 0) throw new Error(`could not look up the ${name} user's group`);
  return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** PostgreSQL refuses to run as root: as root, it runs as the `postgres` OS user (created if missing). */
function runAs(): RunAs {
  if (process.getuid?.() !== 0) return {};
  const found = lookupUser(PG_USER);
  if (found) return found;
  try {
    execFileSync('groupadd', ['--system', PG_USER], { stdio: 'ignore' });
  } catch {
    /* the group may exist already */
  }
  execFileSync('useradd', ['--system', '--gid', PG_USER, '--no-create-home', PG_USER], { stdio: 'ignore' });
  const created = lookupUser(PG_USER);
  if (!created) throw new Error(`could not create the ${PG_USER} user that the embedded PostgreSQL runs as`);
  return created;
}

/** Whether `user` can enter `dir` (and so open files below it): asked of the kernel, ACLs and all. */
function reachable(dir: string, user: RunAs): boolean {
  if (user.uid === undefined) return true;
  const res = spawnSync('sh', ['-c', 'cd "$1"', 'sh', dir], { uid: user.uid, gid: user.gid!, stdio: 'ignore' });
  // Interrupted is no answer: moving the data on a Ctrl-C would be wrong.
  if (res.signal || res.error) throw new Error(`could not check whether the ${PG_USER} user can enter ${dir} (${res.signal ?? res.error?.message})`);
  return res.status === 0;
}

/**
 * Where the cluster lives. Normally `dataDir`. As root, PostgreSQL runs as the `postgres` user,
 * which cannot enter a directory only root can (a clone under /root, any `mktemp -d`): then the
 * cluster lives in /var/tmp (kept across reboots, unlike /tmp) under a name derived from
 * `dataDir`, so every start of the same directory finds the same data, and `dataDir` becomes a
 * symlink to it for people looking for it.
 */
export function resolvePgDataDir(dataDir: string, user: RunAs = runAs()): { dir: string; moved: boolean } {
  const abs = path.resolve(dataDir);
  const link = lstatSync(abs, { throwIfNoEntry: false });
  if (link?.isSymbolicLink()) return { dir: path.resolve(path.dirname(abs), readlinkSync(abs)), moved: true };
  mkdirSync(path.dirname(abs), { recursive: true });
  if (reachable(path.dirname(abs), user)) return { dir: abs, moved: false };
  const key = createHash('sha256')
    .update(realpathSync(path.dirname(abs)))
    .update('\0')
    .update(path.basename(abs))
    .digest('hex')
    .slice(0, 12);
  const moved = path.join('/var/tmp', `overdeck-pg-${key}`);
  // An empty directory left by a start that failed here before this existed gives way to the link.
  if (link?.isDirectory() && readdirSync(abs).length === 0) rmdirSync(abs);
  if (existsSync(abs)) return { dir: abs, moved: false };
  mkdirSync(moved, { recursive: true, mode: 0o700 });
  symlinkSync(moved, abs);
  return { dir: moved, moved: true };
}

/** The binaries, where `user` can reach them (src/infra/pg-binaries.ts: a copy outside a clone only root can enter). */
function binariesFor(user: RunAs): PgBinaries {
  return pgBinaries(user.uid === undefined ? undefined : (dir) => reachable(dir, user));
}

async function initialise(
  dataDir: string,
  password: string,
  user: RunAs,
  initdb: string,
  log: (l: string) => void,
  onSpawn: (pid: number) => void,
): Promise<void> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const pwfile = path.join(os.tmpdir(), `od-pg-pw-${randomBytes(6).toString('hex')}`);
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (user.uid !== undefined) {
    chownSync(dataDir, user.uid, user.gid!);
    chownSync(pwfile, user.uid, user.gid!);
  }
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(initdb, [`--pgdata=${dataDir}`, '--auth=password', `--username=${PG_USER}`, `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C'], {
        ...user,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, LC_MESSAGES: 'C' },
      });
      if (child.pid !== undefined) onSpawn(child.pid);
      let stderr = '';
      child.stdout?.on('data', (b: Buffer) => log(b.toString()));
      child.stderr?.on('data', (b: Buffer) => {
        stderr += b.toString();
        log(b.toString());
      });
      child.once('error', reject);
      child.once('close', (code, signal) =>
        code === 0 ? resolve() : reject(new Error(`initdb failed (${code ?? signal}): ${stderr.trim().split('\n').slice(-3).join(' ')}`)),
      );
    });
  } finally {
    rmSync(pwfile, { force: true });
  }
}

/**
 * A PostgreSQL server with its cluster under `dataDir` (initialised on first use), on 127.0.0.1.
 * Persistent: a second start finds every earlier row.
 */
export async function startEmbeddedPostgres(opts: EmbeddedPgOptions): Promise<EmbeddedPg> {
  const log = opts.log ?? (() => undefined);
  const user = runAs();
  const { dir, moved } = resolvePgDataDir(opts.dataDir, user);
  if (moved) {
    opts.onNote?.(
      `the postgres user cannot enter ${path.dirname(path.resolve(opts.dataDir))}, so the embedded PostgreSQL keeps its data in ${dir} (linked from ${path.resolve(opts.dataDir)}); set OD_DATA_DIR to a directory it can enter, or DATABASE_URL, to choose`,
    );
  }
  const { initdb, postgres } = binariesFor(user);
  const pwFile = pgPasswordFile(opts.dataDir);
  let password = readPasswordFile(pwFile);
  const fresh = !existsSync(path.join(dir, 'PG_VERSION'));
  if (fresh) {
    // The password is kept before the cluster exists: a cluster is never left with one nobody has.
    password ??= newPassword();
    writePasswordFile(pwFile, password);
    await initialise(dir, password, user, initdb, log, (p) => opts.onSpawn?.(p, 'initdb'));
  }

  if (opts.alsoListen) allowNetwork(dir, opts.alsoListen.network);
  const listen = opts.alsoListen ? `127.0.0.1,${opts.alsoListen.address}` : '127.0.0.1';
  const child: ChildProcess = spawn(postgres, ['-D', dir, '-p', String(opts.port), '-c', `listen_addresses=${listen}`], {
    ...user,
    detached: opts.ownGroup === true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not spawn postgres');
  opts.onSpawn?.(pid, 'postgres');
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  let tail = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (b: Buffer) => {
      const text = b.toString();
      log(text);
      tail = (tail + text).slice(-2000);
      if (text.includes('database system is ready to accept connections')) resolve();
    });
    void exit.then(() => reject(new Error(`postgres exited during start: ${tail.trim().split('\n').slice(-2).join(' ')}`)));
  });

  const signal = (s: NodeJS.Signals, group = false) => {
    try {
      process.kill(group && opts.ownGroup ? -pid : pid, s);
    } catch {
      /* gone */
    }
  };
  const serverUrl = (pw: string) => `postgres://${PG_USER}:${pw}@127.0.0.1:${opts.port}`;
  if (password === null) {
    // A cluster made before each had its own password (the fixed `postgres`): given a random one now, kept in pwFile.
    try {
      password = await migrateLegacyPassword(serverUrl(LEGACY_PG_PASSWORD), pwFile);
    } catch (err) {
      signal('SIGINT');
      await exit;
      throw new Error(
        `the embedded PostgreSQL in ${dir} has no password file (${pwFile}) and does not take the old default password: ${(err as Error).message}`,
        { cause: err },
      );
    }
    opts.onNote?.(`the embedded PostgreSQL's password is now a random one, kept in ${pwFile} (mode 0600)`);
  }
  return {
    serverUrl: serverUrl(password),
    pid,
    dataDir: dir,
    async stop(graceMs = 5_000) {
      if (!exited) {
        signal('SIGINT');
        const immediate = setTimeout(() => signal('SIGQUIT'), graceMs);
        const kill = setTimeout(() => signal('SIGKILL', true), graceMs + 2_000);
        await exit;
        clearTimeout(immediate);
        clearTimeout(kill);
      }
      // Backends notice the postmaster's death by themselves; never leave one holding the data dir.
      if (opts.ownGroup && groupRunning(pid)) signal('SIGKILL', true);
    },
  };
}

/**
 * Gives a cluster still on the legacy password a random one: the new one is written beside the
 * file first (`.new`), the role altered, then the file renamed into place, so a crash in between
 * leaves a password that works on disk (the next start tries `.new` first).
 */
async function migrateLegacyPassword(legacyUrl: string, pwFile: string): Promise<string> {
  const pending = `${pwFile}.new`;
  const pendingPw = readPasswordFile(pending);
  if (pendingPw !== null) {
    // A migration that altered the role and stopped before the rename: its password may be the one in force.
    const c = new Client({ connectionString: legacyUrl.replace(`:${LEGACY_PG_PASSWORD}@`, `:${pendingPw}@`) });
    const ok = await c.connect().then(
      () => true,
      () => false,
    );
    await c.end().catch(() => undefined);
    if (ok) {
      renameSync(pending, pwFile);
      return pendingPw;
    }
  }
  const pw = newPassword();
  writeFileSync(pending, `${pw}\n`, { mode: 0o600 });
  const admin = new Client({ connectionString: legacyUrl });
  await admin.connect();
  try {
    // No parameters in ALTER ROLE; the value is base64url, nothing to escape. Stored as a SCRAM verifier, never in clear.
    await admin.query(`ALTER ROLE ${PG_USER} PASSWORD '${pw}'`);
  } finally {
    await admin.end();
  }
  renameSync(pending, pwFile);
  return pw;
}

/** One pg_hba.conf line letting `network` in with the password (once, however often the server starts). */
function allowNetwork(dir: string, network: string): void {
  if (!/^[0-9.]+\/\d+$/.test(network)) throw new Error(`not an IPv4 network: ${network}`);
  const hba = path.join(dir, 'pg_hba.conf');
  const line = `host all all ${network} password`;
  const text = readFileSync(hba, 'utf8');
  if (!text.split('\n').includes(line)) writeFileSync(hba, `${text.replace(/\n?$/, '\n')}${line}\n`);
}

/** Creates the database if it is missing, connecting to the server URL's own database for it. (CREATE DATABASE cannot run in a transaction or take parameters). */
export async function ensureDatabase(serverUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid database name ${name}`);
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return withDatabase(serverUrl, name);
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid database name ${name}`);
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}
