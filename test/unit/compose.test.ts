/**
 * Static consistency of the production deployment (docker-compose.yml, Dockerfile, .dockerignore,
 * deploy/) with the code: ENV and SEARCH_ATTRIBUTES of src/config.ts, the files the image runs and
 * the wiring between services. Nothing here needs Docker.
 *
 * Each check collects every problem as a sentence naming the service and variable, and expects that
 * list to be empty, so one run reports all of them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ENV, SEARCH_ATTRIBUTES } from '../../src/config';

const ROOT = path.resolve(__dirname, '..', '..');
const read = (rel: string): string => fs.readFileSync(path.join(ROOT, rel), 'utf8');
const exists = (rel: string): boolean => fs.existsSync(path.join(ROOT, rel));

// ---------------------------------------------------------------------------------------------
// Compose model and the bits of compose semantics the checks need
// ---------------------------------------------------------------------------------------------

interface Healthcheck {
  test?: string | string[];
  disable?: boolean;
}
interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, unknown> | string[];
  env_file?: unknown;
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: Healthcheck;
  ports?: Array<string | number | Record<string, unknown>>;
  volumes?: Array<string | Record<string, unknown>>;
  restart?: string;
  secrets?: Array<string | { source: string; target?: string }>;
  user?: string;
}
interface Compose {
  services: Record<string, Service>;
  secrets?: Record<string, { file?: string }>;
  volumes?: Record<string, unknown>;
}

/**
 * Values for the compose variables that have no default (`${VAR:?...}`), as an operator's .env
 * would give them: the checks run on the file as compose would see it.
 */
const SAMPLE_DOTENV: Record<string, string> = {
  POSTGRES_PASSWORD: 'c0ffee00superuser',
  OWNERSHIP_DB_PASSWORD: 'c0ffee01ownership',
  TEMPORAL_DB_PASSWORD: 'c0ffee02temporal',
  OD_TOKENS_HOST_FILE: '/etc/worktree-ownership/tokens.json',
  OD_SERVICE_KEY_HOST_FILE: '/etc/worktree-ownership/service.key',
  OD_HOST_ID: 'docker-host-1',
  WORKTREES_ROOT: '/srv/worktrees',
};

/** `$$`, `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?err}`, `${VAR?err}`, `${VAR:+alt}`, `${VAR+alt}`. */
const VAR_RE = /\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g;

interface VarRef {
  name: string;
  op: string | undefined;
  arg: string | undefined;
}

function varRefs(text: string): VarRef[] {
  const refs: VarRef[] = [];
  for (const m of text.matchAll(VAR_RE)) {
    const name = m[1] ?? m[4];
    if (name) refs.push({ name, op: m[2], arg: m[3] });
  }
  return refs;
}

function interpolate(text: string, vars: Record<string, string>, where: string): string {
  return text.replace(VAR_RE, (whole, braced?: string, op?: string, arg?: string, bare?: string) => {
    if (whole === '$$') return '$';
    const name = (braced ?? bare) as string;
    const value = vars[name];
    const set = value !== undefined;
    const nonEmpty = set && value !== '';
    switch (op) {
      case ':-':
        return nonEmpty ? value : (arg ?? '');
      case '-':
        return set ? value : (arg ?? '');
      case ':+':
        return nonEmpty ? (arg ?? '') : '';
      case '+':
        return set ? (arg ?? '') : '';
      case ':?':
      case '?':
        if (op === ':?' ? nonEmpty : set) return value as string;
        throw new Error(
          `${where}: compose requires \${${name}} but SAMPLE_DOTENV in test/unit/compose.test.ts has no value for it; ` +
            'add one there and document the variable in deploy/compose.env.example',
        );
      default:
        return value ?? '';
    }
  });
}

function interpolateDeep(node: unknown, vars: Record<string, string>, where = 'docker-compose.yml'): unknown {
  if (typeof node === 'string') return interpolate(node, vars, where);
  if (Array.isArray(node)) return node.map((v, i) => interpolateDeep(v, vars, `${where}[${i}]`));
  if (node && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node as Record<string, unknown>).map(([k, v]) => [k, interpolateDeep(v, vars, `${where}.${k}`)]));
  }
  return node;
}

const composeText = read('docker-compose.yml');
/** As written (with ${...}), anchors and merge keys resolved. */
const raw = parse(composeText, { merge: true }) as Compose;
/** As compose runs it, with SAMPLE_DOTENV as the .env. */
const compose = interpolateDeep(raw, SAMPLE_DOTENV) as Compose;
const services = compose.services;

function envOf(svc: Service): Record<string, string> {
  const env: Record<string, string> = {};
  if (Array.isArray(svc.environment)) {
    for (const entry of svc.environment) {
      const i = entry.indexOf('=');
      if (i < 0) env[entry] = '';
      else env[entry.slice(0, i)] = entry.slice(i + 1);
    }
  } else if (svc.environment) {
    for (const [k, v] of Object.entries(svc.environment)) env[k] = v === null || v === undefined ? '' : String(v);
  }
  return env;
}

function dependsOf(svc: Service): Record<string, string> {
  const deps: Record<string, string> = {};
  if (Array.isArray(svc.depends_on)) for (const d of svc.depends_on) deps[d] = 'service_started';
  else if (svc.depends_on) {
    for (const [d, spec] of Object.entries(svc.depends_on)) deps[d] = spec?.condition ?? 'service_started';
  }
  return deps;
}

function argv(x: string | string[] | undefined): string[] {
  if (x === undefined) return [];
  return Array.isArray(x) ? x.map(String) : x.trim().split(/\s+/);
}

interface Port {
  hostIp?: string;
  published?: string;
  target: string;
}
function portsOf(svc: Service): Port[] {
  return (svc.ports ?? []).map((p) => {
    if (typeof p === 'object') {
      return {
        hostIp: p.host_ip === undefined ? undefined : String(p.host_ip),
        published: p.published === undefined ? undefined : String(p.published),
        target: String(p.target),
      };
    }
    const parts = String(p)
      .replace(/\/(tcp|udp)$/, '')
      .split(':');
    const target = parts.pop() as string;
    const published = parts.pop();
    const hostIp = parts.length ? parts.join(':') : undefined;
    return { hostIp, published, target };
  });
}

interface Mount {
  type: string;
  source?: string;
  target: string;
  readOnly: boolean;
}
function mountsOf(svc: Service): Mount[] {
  return (svc.volumes ?? []).map((v) => {
    if (typeof v === 'object') {
      return {
        type: String(v.type ?? 'volume'),
        source: v.source === undefined ? undefined : String(v.source),
        target: String(v.target),
        readOnly: v.read_only === true,
      };
    }
    const parts = v.split(':');
    if (parts.length === 1) return { type: 'volume', target: parts[0], readOnly: false };
    const [source, target, mode = ''] = parts;
    const bind = source.startsWith('.') || source.startsWith('/') || source.startsWith('~');
    return { type: bind ? 'bind' : 'volume', source, target, readOnly: mode.split(',').includes('ro') };
  });
}

function healthTest(svc: Service): string {
  const t = svc.healthcheck?.test;
  if (t === undefined) return '';
  return Array.isArray(t) ? t.join(' ') : t;
}

const hasHealthcheck = (svc: Service): boolean =>
  !!svc.healthcheck && svc.healthcheck.disable !== true && healthTest(svc) !== '' && !/^NONE\b/.test(healthTest(svc));

/** Runs to completion instead of being kept up: what service_completed_successfully can wait for. */
const isOneShot = (svc: Service): boolean => svc.restart === undefined || svc.restart === 'no' || /^on-failure/.test(svc.restart);

const buildContext = (svc: Service): string | undefined => (typeof svc.build === 'string' ? svc.build : svc.build?.context);

/** Our image's services: the ones built from the Dockerfile in the repository root. */
const OUR_SERVICES = Object.keys(services).filter((n) => services[n].build !== undefined);

const byImage = (prefix: RegExp): string[] => Object.keys(services).filter((n) => prefix.test(services[n].image ?? ''));
const POSTGRES = byImage(/^postgres:/)[0];
const TEMPORAL = byImage(/^temporalio\/(server|auto-setup):/)[0];
const UI = byImage(/^temporalio\/ui:/)[0];
/** The one-shot that registers the search attributes: its arguments name them. */
const SETUP =
  Object.keys(services).find((n) => [...argv(services[n].entrypoint), ...argv(services[n].command)].some((a) => /^[A-Za-z0-9_]+=Keyword$/.test(a))) ??
  'temporal-setup';

function urlOf(value: string, where: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new Error(`${where} is not a URL: ${value}`);
  }
}

/** The port the postgres service listens on inside the network. */
function postgresPort(): string {
  const args = argv(services[POSTGRES].command);
  for (let i = 0; i < args.length; i++) {
    const m = /^port=(\d+)$/.exec(args[i] === '-c' ? (args[i + 1] ?? '') : args[i]);
    if (m) return m[1];
  }
  return envOf(services[POSTGRES]).PGPORT ?? '5432';
}

// ---------------------------------------------------------------------------------------------
// .dockerignore (the subset of its semantics the checks need: anchored globs, `!` exceptions)
// ---------------------------------------------------------------------------------------------

function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*' && pattern[i + 1] === '*') {
      re += '.*';
      i++;
      if (pattern[i + 1] === '/') i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

function dockerignored(file: string): boolean {
  if (!exists('.dockerignore')) return false;
  const rules = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const p = path.posix.normalize((negate ? l.slice(1) : l).trim()).replace(/^\/+|\/+$/g, '');
      return { negate, re: globToRegExp(p) };
    });
  // A path is excluded when it or one of its parent directories matches; the last rule wins.
  const segments = file.split('/');
  let excluded = false;
  for (const rule of rules) {
    for (let i = 1; i <= segments.length; i++) {
      if (rule.re.test(segments.slice(0, i).join('/'))) {
        excluded = !rule.negate;
        break;
      }
    }
  }
  return excluded;
}

// ---------------------------------------------------------------------------------------------
// Dockerfile
// ---------------------------------------------------------------------------------------------

interface Instruction {
  op: string;
  args: string;
}
function dockerfile(): Instruction[] {
  const lines = read('Dockerfile').split('\n');
  const joined: string[] = [];
  let current = '';
  for (const line of lines) {
    if (/^\s*#/.test(line)) continue; // comments (also inside continuations)
    if (/\\\s*$/.test(line)) {
      current += line.replace(/\\\s*$/, ' ');
      continue;
    }
    current += line;
    if (current.trim()) joined.push(current.trim());
    current = '';
  }
  if (current.trim()) joined.push(current.trim());
  return joined.map((l) => {
    const m = /^(\S+)\s*(.*)$/.exec(l) as RegExpExecArray;
    return { op: m[1].toUpperCase(), args: m[2] };
  });
}

function execForm(args: string): string[] {
  try {
    const v = JSON.parse(args) as unknown;
    if (Array.isArray(v)) return v.map(String);
  } catch {
    // shell form
  }
  return args.split(/\s+/);
}

/** Repository files a command line runs (arguments that name a .ts/.js/.sh file in the repo). */
const scriptArgs = (args: string[]): string[] => args.filter((a) => /\.(ts|js|mjs|cjs|sh)$/.test(a) && !a.startsWith('/'));

// =============================================================================================

const problems = (list: string[]): void => {
  expect(list).toEqual([]);
};

describe('docker-compose.yml', () => {
  test('has the services of the production stack', () => {
    const expected = ['postgres', 'temporal', 'temporal-setup', 'temporal-ui', 'migrate', 'worker', 'api'];
    problems(expected.filter((n) => !services[n]).map((n) => `service "${n}" is missing`));
    expect(POSTGRES).toBe('postgres');
    expect(TEMPORAL).toBe('temporal');
    expect(UI).toBe('temporal-ui');
    expect(SETUP).toBe('temporal-setup');
    expect(OUR_SERVICES.sort()).toEqual(['api', 'migrate', 'worker']);
  });

  test('every depends_on names an existing service with a condition it can meet', () => {
    const out: string[] = [];
    const valid = ['service_started', 'service_healthy', 'service_completed_successfully'];
    for (const [name, svc] of Object.entries(services)) {
      for (const [dep, condition] of Object.entries(dependsOf(svc))) {
        const target = services[dep];
        if (!target) {
          out.push(`service "${name}" depends on "${dep}", which is not a service`);
          continue;
        }
        if (!valid.includes(condition)) out.push(`service "${name}" depends on "${dep}" with unknown condition "${condition}"`);
        if (condition === 'service_healthy' && !hasHealthcheck(target)) {
          out.push(`service "${name}" waits for "${dep}" to be healthy, but "${dep}" has no healthcheck`);
        }
        if (condition === 'service_completed_successfully' && !isOneShot(target)) {
          out.push(`service "${name}" waits for "${dep}" to complete, but "${dep}" is restarted (restart: ${target.restart}), so it is not a one-shot`);
        }
        if (condition !== 'service_completed_successfully' && isOneShot(target) && target.image?.startsWith('temporalio/admin-tools')) {
          out.push(`service "${name}" depends on one-shot "${dep}" with "${condition}" instead of service_completed_successfully`);
        }
      }
    }
    // No cycles.
    const state: Record<string, 'visiting' | 'done'> = {};
    const visit = (n: string, trail: string[]): void => {
      if (state[n] === 'done' || !services[n]) return;
      if (state[n] === 'visiting') {
        out.push(`depends_on cycle: ${[...trail, n].join(' -> ')}`);
        return;
      }
      state[n] = 'visiting';
      for (const d of Object.keys(dependsOf(services[n]))) visit(d, [...trail, n]);
      state[n] = 'done';
    };
    for (const n of Object.keys(services)) visit(n, []);
    problems(out);
  });

  test('worker and api start only after Temporal is set up and the migrations ran', () => {
    const out: string[] = [];
    for (const name of ['worker', 'api']) {
      const deps = dependsOf(services[name]);
      const want: Record<string, string> = {
        [TEMPORAL]: 'service_healthy',
        [SETUP]: 'service_completed_successfully',
        migrate: 'service_completed_successfully',
      };
      for (const [dep, condition] of Object.entries(want)) {
        if (deps[dep] !== condition) out.push(`service "${name}" must depend on "${dep}" with condition ${condition} (has ${deps[dep] ?? 'none'})`);
      }
    }
    const migrateDeps = dependsOf(services.migrate);
    if (migrateDeps[POSTGRES] !== 'service_healthy') out.push(`service "migrate" must depend on "${POSTGRES}" being healthy`);
    if (dependsOf(services[TEMPORAL])[POSTGRES] !== 'service_healthy') out.push(`service "${TEMPORAL}" must depend on "${POSTGRES}" being healthy`);
    if (dependsOf(services[SETUP])[TEMPORAL] !== 'service_healthy') out.push(`service "${SETUP}" must depend on "${TEMPORAL}" being healthy`);
    problems(out);
  });

  test('postgres and temporal have healthchecks (pg_isready; the gRPC port 7233)', () => {
    const out: string[] = [];
    if (!/\bpg_isready\b/.test(healthTest(services[POSTGRES]))) out.push(`service "${POSTGRES}": healthcheck must run pg_isready`);
    if (!hasHealthcheck(services[TEMPORAL])) out.push(`service "${TEMPORAL}" has no healthcheck`);
    else if (!/7233|cluster health/.test(healthTest(services[TEMPORAL]))) {
      out.push(`service "${TEMPORAL}": healthcheck checks neither port 7233 nor cluster health`);
    }
    problems(out);
  });

  test('our services are built from the Dockerfile in the repository root', () => {
    const out: string[] = [];
    for (const name of OUR_SERVICES) {
      const svc = services[name];
      const ctx = buildContext(svc);
      if (ctx !== '.' && ctx !== './') out.push(`service "${name}": build context is "${ctx}", expected "."`);
      const file = typeof svc.build === 'object' ? (svc.build.dockerfile ?? 'Dockerfile') : 'Dockerfile';
      if (file !== 'Dockerfile') out.push(`service "${name}": builds from "${file}", expected "Dockerfile"`);
    }
    if (!exists('Dockerfile')) out.push('Dockerfile does not exist');
    const images = new Set(OUR_SERVICES.map((n) => services[n].image));
    if (images.size > 1) out.push(`services ${OUR_SERVICES.join(', ')} should share one image name, have ${[...images].join(', ')}`);
    problems(out);
  });

  test('every environment variable of worker, api and migrate is a key of ENV in src/config.ts', () => {
    const out: string[] = [];
    for (const name of OUR_SERVICES) {
      const svc = raw.services[name];
      if (svc.env_file !== undefined) out.push(`service "${name}" uses env_file: set variables under environment: so they can be checked against ENV`);
      for (const key of Object.keys(envOf(svc))) {
        if (!(key in ENV)) out.push(`service "${name}": environment variable "${key}" is not a key of ENV in src/config.ts (typo, or add it to ENV)`);
      }
    }
    problems(out);
  });

  test('DATABASE_URL and TEMPORAL_ADDRESS are set for worker, api and migrate', () => {
    const out: string[] = [];
    for (const name of ['worker', 'api', 'migrate']) {
      const env = envOf(services[name]);
      for (const key of ['DATABASE_URL', 'TEMPORAL_ADDRESS'] as const) {
        if (!env[key]) out.push(`service "${name}": ${key} must be set (empty means the embedded development default)`);
      }
    }
    problems(out);
  });

  test('our services agree on namespace, task queue, database and host id', () => {
    const out: string[] = [];
    for (const key of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_TASK_QUEUE', 'OD_HOST_ID', 'OD_ALLOWED_ROOTS'] as const) {
      const values = new Set(OUR_SERVICES.map((n) => envOf(services[n])[key] ?? ENV[key].default));
      if (values.size > 1) out.push(`${key} differs between ${OUR_SERVICES.join(', ')}: ${[...values].join(' | ')}`);
    }
    problems(out);
  });

  test("DATABASE_URL points at the postgres service's host, port, database, user and password", () => {
    const out: string[] = [];
    const pg = envOf(services[POSTGRES]);
    const wantUser = pg.OWNERSHIP_DB_USER ?? pg.POSTGRES_USER ?? 'postgres';
    const wantDb = pg.OWNERSHIP_DB_NAME ?? pg.POSTGRES_DB ?? wantUser;
    const wantPassword = pg.OWNERSHIP_DB_USER ? pg.OWNERSHIP_DB_PASSWORD : pg.POSTGRES_PASSWORD;
    for (const name of OUR_SERVICES) {
      const value = envOf(services[name]).DATABASE_URL;
      if (!value) continue;
      const url = urlOf(value, `service "${name}": DATABASE_URL`);
      const where = `service "${name}": DATABASE_URL`;
      if (!['postgres:', 'postgresql:'].includes(url.protocol)) out.push(`${where} scheme is ${url.protocol}, expected postgres:`);
      if (url.hostname !== POSTGRES) out.push(`${where} host is "${url.hostname}", expected the service name "${POSTGRES}"`);
      if ((url.port || '5432') !== postgresPort()) out.push(`${where} port is ${url.port || '5432'}, postgres listens on ${postgresPort()}`);
      if (decodeURIComponent(url.username) !== wantUser) out.push(`${where} user is "${url.username}", the postgres service creates "${wantUser}"`);
      if (decodeURIComponent(url.pathname.replace(/^\//, '')) !== wantDb)
        out.push(`${where} database is "${url.pathname.slice(1)}", the postgres service creates "${wantDb}"`);
      if (decodeURIComponent(url.password) !== wantPassword)
        out.push(`${where} password is not the postgres service's password for "${wantUser}" (use the same compose variable)`);
    }
    problems(out);
  });

  test("the postgres init scripts get every variable they read from the postgres service's environment", () => {
    const out: string[] = [];
    const mount = mountsOf(services[POSTGRES]).find((m) => m.target === '/docker-entrypoint-initdb.d');
    const pg = envOf(services[POSTGRES]);
    if (pg.OWNERSHIP_DB_USER || pg.TEMPORAL_DB_USER) {
      if (!mount?.source) out.push(`service "${POSTGRES}": OWNERSHIP_DB_*/TEMPORAL_DB_* are set but nothing is mounted at /docker-entrypoint-initdb.d`);
    }
    if (mount?.source) {
      const dir = path.join(ROOT, mount.source);
      const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => /\.(sh|sql)$/.test(f)) : [];
      if (!files.length) out.push(`service "${POSTGRES}": ${mount.source} holds no init script`);
      const provided = new Set([...Object.keys(pg), 'POSTGRES_USER', 'POSTGRES_DB', 'PGDATA']);
      for (const f of files) {
        const text = fs.readFileSync(path.join(dir, f), 'utf8');
        const used = new Set([...text.matchAll(/\$\{?([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]));
        // `for v in A B C` lists checked by indirection (${!v}).
        for (const m of text.matchAll(/for v in ([A-Z0-9_\s\\]+); do/g)) for (const v of m[1].split(/[\s\\]+/)) if (v) used.add(v);
        for (const v of used) if (!provided.has(v)) out.push(`${mount.source}/${f} reads ${v}, which the "${POSTGRES}" service does not set`);
      }
    }
    problems(out);
  });

  test('temporal and its schema job use the database the postgres service creates for Temporal', () => {
    const out: string[] = [];
    const pg = envOf(services[POSTGRES]);
    const jobs = [TEMPORAL, ...Object.keys(services).filter((n) => n !== TEMPORAL && envOf(services[n]).POSTGRES_SEEDS !== undefined)];
    for (const name of jobs) {
      const env = envOf(services[name]);
      const check = (key: string, want: string | undefined, what: string): void => {
        if (want !== undefined && env[key] !== want) out.push(`service "${name}": ${key} is "${env[key]}", expected ${what} "${want}"`);
      };
      check('POSTGRES_SEEDS', POSTGRES, 'the postgres service name');
      check('DB_PORT', postgresPort(), 'the postgres port');
      check('POSTGRES_USER', pg.TEMPORAL_DB_USER ?? pg.POSTGRES_USER, 'the role the postgres service creates for Temporal');
      check('POSTGRES_PWD', pg.TEMPORAL_DB_USER ? pg.TEMPORAL_DB_PASSWORD : pg.POSTGRES_PASSWORD, "that role's password");
      check('DBNAME', pg.TEMPORAL_DB_NAME, 'the database');
      check('VISIBILITY_DBNAME', pg.TEMPORAL_VISIBILITY_DB_NAME, 'the visibility database');
    }
    if (envOf(services[TEMPORAL]).DB !== 'postgres12') out.push(`service "${TEMPORAL}": DB must be postgres12 (PostgreSQL persistence)`);
    problems(out);
  });

  test('the dynamic config file the temporal server reads is mounted from the repository', () => {
    const env = envOf(services[TEMPORAL]);
    const file = env.DYNAMIC_CONFIG_FILE_PATH;
    if (!file) return;
    const inContainer = path.posix.resolve('/etc/temporal', file);
    const mount = mountsOf(services[TEMPORAL]).find((m) => m.source && inContainer.startsWith(`${m.target}/`));
    expect(mount).toBeDefined();
    const onHost = path.join(mount?.source ?? '', path.posix.relative(mount?.target ?? '', inContainer));
    expect({ DYNAMIC_CONFIG_FILE_PATH: file, exists: exists(onHost), onHost }).toEqual({ DYNAMIC_CONFIG_FILE_PATH: file, exists: true, onHost });
    parse(read(onHost)); // valid YAML
  });

  test('TEMPORAL_ADDRESS is the temporal service on its gRPC port 7233, everywhere', () => {
    const out: string[] = [];
    const clients = [...OUR_SERVICES, SETUP, UI];
    for (const name of clients) {
      const value = envOf(services[name]).TEMPORAL_ADDRESS;
      if (!value) {
        out.push(`service "${name}": TEMPORAL_ADDRESS is not set`);
        continue;
      }
      const [host, port] = value.split(':');
      if (host !== TEMPORAL) out.push(`service "${name}": TEMPORAL_ADDRESS host is "${host}", expected the service name "${TEMPORAL}"`);
      if (port !== '7233') out.push(`service "${name}": TEMPORAL_ADDRESS port is "${port}", expected the gRPC port 7233`);
    }
    if (!portsOf(services[TEMPORAL]).some((p) => p.target === '7233')) out.push(`service "${TEMPORAL}" does not publish 7233 for host agents`);
    problems(out);
  });

  test('the namespace the setup creates is the one the services and the UI use', () => {
    const out: string[] = [];
    const ns = envOf(services.worker).TEMPORAL_NAMESPACE ?? ENV.TEMPORAL_NAMESPACE.default;
    const setupNs = envOf(services[SETUP]).TEMPORAL_NAMESPACE;
    if (setupNs !== ns) out.push(`service "${SETUP}": TEMPORAL_NAMESPACE is "${setupNs}", the services use "${ns}"`);
    const uiNs = envOf(services[UI]).TEMPORAL_DEFAULT_NAMESPACE;
    if (uiNs !== undefined && uiNs !== ns) out.push(`service "${UI}": TEMPORAL_DEFAULT_NAMESPACE is "${uiNs}", the services use "${ns}"`);
    problems(out);
  });

  test('the setup service registers exactly SEARCH_ATTRIBUTES of src/config.ts, with their types', () => {
    const out: string[] = [];
    const args = [...argv(services[SETUP].entrypoint), ...argv(services[SETUP].command)];
    const text = args.join(' ');
    const registered = new Map<string, string>();
    for (const a of args) {
      const m = /^([A-Za-z0-9_]+)=([A-Za-z]+)$/.exec(a);
      if (m) registered.set(m[1], m[2]);
    }
    for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) {
      if (!text.includes(name)) out.push(`service "${SETUP}": search attribute ${name} is not in its command`);
      else if (registered.has(name) && registered.get(name) !== type)
        out.push(`service "${SETUP}": ${name} is registered as ${registered.get(name)}, SEARCH_ATTRIBUTES says ${type}`);
    }
    for (const name of registered.keys()) {
      if (!(name in SEARCH_ATTRIBUTES)) out.push(`service "${SETUP}": registers ${name}, which SEARCH_ATTRIBUTES does not name`);
    }
    problems(out);
  });

  test('the search attributes fit the custom-attribute slots of PostgreSQL visibility', () => {
    // schema/postgresql/v12/visibility pre-allocates these columns per namespace.
    const slots: Record<string, number> = { Keyword: 10, Text: 3, Int: 3, Double: 3, Bool: 3, Datetime: 3, KeywordList: 3 };
    const count: Record<string, number> = {};
    for (const type of Object.values(SEARCH_ATTRIBUTES) as string[]) count[type] = (count[type] ?? 0) + 1;
    problems(
      Object.entries(count)
        .filter(([type, n]) => n > (slots[type] ?? 0))
        .map(([type, n]) => `SEARCH_ATTRIBUTES has ${n} of type ${type}; SQL visibility has ${slots[type] ?? 0} slots`),
    );
  });

  test('the api listens on OD_API_PORT on all interfaces, publishes it and checks /healthz on it', () => {
    const out: string[] = [];
    const env = envOf(services.api);
    const port = env.OD_API_PORT ?? ENV.OD_API_PORT.default;
    if (env.OD_API_HOST !== '0.0.0.0')
      out.push(`service "api": OD_API_HOST is "${env.OD_API_HOST ?? ENV.OD_API_HOST.default}", must be 0.0.0.0 to be reachable through the port mapping`);
    const mapping = portsOf(services.api).find((p) => p.target === port);
    if (!mapping) out.push(`service "api": no port mapping to container port OD_API_PORT=${port}`);
    else if (mapping.published !== port) out.push(`service "api": OD_API_PORT=${port} is published on host port ${mapping.published}, expected ${port}`);
    const test = healthTest(services.api);
    if (!hasHealthcheck(services.api)) out.push('service "api" has no healthcheck');
    else if (!new RegExp(`:${port}/healthz\\b`).test(test)) out.push(`service "api": healthcheck does not hit /healthz on OD_API_PORT=${port}: ${test}`);
    problems(out);
  });

  test('OD_TOKENS_FILE of the api is a mounted compose secret', () => {
    const out: string[] = [];
    const file = envOf(services.api).OD_TOKENS_FILE;
    if (!file) out.push('service "api": OD_TOKENS_FILE is not set (no principal could authenticate)');
    else {
      const m = /^\/run\/secrets\/([^/]+)$/.exec(file);
      const names = (services.api.secrets ?? []).map((s) => (typeof s === 'string' ? s : (s.target ?? s.source)));
      if (!m) out.push(`service "api": OD_TOKENS_FILE=${file} is not under /run/secrets/`);
      else if (!names.includes(m[1])) out.push(`service "api": OD_TOKENS_FILE names secret "${m[1]}", which the service does not mount`);
      else {
        const source = (services.api.secrets ?? []).map((s) => (typeof s === 'string' ? s : s.source)).find((s, i) => names[i] === m[1]);
        if (!source || !compose.secrets?.[source]) out.push(`secret "${source}" is not declared under top-level secrets:`);
      }
    }
    problems(out);
  });

  test('every OD_ALLOWED_ROOTS root is mounted at the same path (host paths are recorded as such)', () => {
    const out: string[] = [];
    for (const name of OUR_SERVICES) {
      const roots = (envOf(services[name]).OD_ALLOWED_ROOTS ?? '').split(':').filter(Boolean);
      if (name === 'worker' && !roots.length) out.push('service "worker": OD_ALLOWED_ROOTS is not set (its default is the container\'s $HOME and $TMPDIR)');
      if (name === 'migrate') continue;
      for (const root of roots) {
        const mount = mountsOf(services[name]).find((m) => m.type === 'bind' && m.target === root);
        if (!mount) out.push(`service "${name}": allowed root ${root} is not bind-mounted`);
        else if (mount.source !== root)
          out.push(`service "${name}": allowed root ${root} is mounted from ${mount.source}, must be the same path as on the host`);
        if (name === 'worker' && mount?.readOnly)
          out.push('service "worker": the worktrees mount must be writable (git config projection, lock files, WIP refs)');
      }
    }
    problems(out);
  });

  test('bind-mounted repository paths exist', () => {
    const out: string[] = [];
    for (const [name, svc] of Object.entries(services)) {
      for (const m of mountsOf(svc)) {
        if (m.type === 'bind' && m.source?.startsWith('./') && !exists(m.source)) out.push(`service "${name}": bind mount source ${m.source} does not exist`);
      }
    }
    for (const [name, secret] of Object.entries(raw.secrets ?? {})) {
      if (secret.file?.startsWith('./') && !exists(secret.file)) out.push(`secret "${name}": file ${secret.file} does not exist`);
    }
    problems(out);
  });

  test('the scripts the setup jobs run are mounted from deploy/', () => {
    const out: string[] = [];
    for (const [name, svc] of Object.entries(services)) {
      if (buildContext(svc) !== undefined) continue;
      for (const arg of [...argv(svc.entrypoint), ...argv(svc.command)].filter((a) => a.endsWith('.sh'))) {
        const mount = mountsOf(svc).find((m) => m.type === 'bind' && (m.target === arg || arg.startsWith(`${m.target}/`)));
        if (!mount?.source) out.push(`service "${name}": runs ${arg}, which is not bind-mounted`);
        else {
          const onHost = mount.target === arg ? mount.source : path.join(mount.source, path.posix.relative(mount.target, arg));
          if (!exists(onHost)) out.push(`service "${name}": runs ${arg} from ${onHost}, which does not exist`);
        }
      }
    }
    problems(out);
  });

  test('every compose variable is documented in deploy/compose.env.example', () => {
    const doc = read('deploy/compose.env.example');
    const documented = new Set([...doc.matchAll(/^#?\s*([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]));
    const required = new Set([...doc.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]));
    const out: string[] = [];
    for (const ref of varRefs(composeText)) {
      if (!documented.has(ref.name)) out.push(`docker-compose.yml uses \${${ref.name}}, which deploy/compose.env.example does not document`);
      else if (ref.op?.includes('?') && !required.has(ref.name))
        out.push(`\${${ref.name}} is required by docker-compose.yml but commented out in deploy/compose.env.example`);
    }
    problems([...new Set(out)]);
  });
});

describe('Dockerfile', () => {
  const steps = dockerfile();
  const stages: Instruction[][] = [];
  for (const step of steps) {
    if (step.op === 'FROM') stages.push([]);
    stages[stages.length - 1]?.push(step);
  }
  const runtime = stages[stages.length - 1] ?? [];
  const args: Record<string, string> = {};
  for (const s of steps) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(s.args);
    if (s.op === 'ARG' && m) args[m[1]] = m[2].replace(/^"|"$/g, '');
  }
  const subst = (s: string): string => s.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, n: string) => args[n] ?? '');

  test('is multi-stage on node:20-bookworm-slim, installs with npm ci (npm 11) and git, runs as non-root', () => {
    const out: string[] = [];
    const stageNames = new Set<string>();
    for (const stage of stages) {
      const [image, as, name] = subst(stage[0].args).split(/\s+/);
      if (!stageNames.has(image) && image !== 'node:20-bookworm-slim') out.push(`FROM ${image}: expected node:20-bookworm-slim`);
      if (as?.toUpperCase() === 'AS' && name) stageNames.add(name);
    }
    if (stages.length < 2) out.push('not multi-stage');
    const runs = steps.filter((s) => s.op === 'RUN').map((s) => subst(s.args));
    if (!runs.some((r) => /\bnpm ci\b/.test(r))) out.push('no RUN npm ci');
    const npm = runs.map((r) => /npm install -g "?npm@(\d+)/.exec(r)).find(Boolean);
    if (npm && Number(npm[1]) < 11) out.push(`installs npm ${npm[1]}; package.json's allowScripts needs npm 11`);
    if (!npm) out.push('does not install npm 11 (node:20 images ship npm 10, which ignores allowScripts)');
    const runtimeRuns = runtime
      .filter((s) => s.op === 'RUN')
      .map((s) => s.args)
      .join(' ');
    if (!/apt-get install[^&;]*\bgit\b/.test(runtimeRuns)) out.push('the runtime stage does not install git (the worker runs git activities)');
    const user = runtime.filter((s) => s.op === 'USER').pop()?.args;
    if (!user) out.push('the runtime stage has no USER (would run as root)');
    else if (/^(root|0)(:|$)/.test(user)) out.push(`the runtime stage runs as ${user}`);
    problems(out);
  });

  /** The stage that runs `npm run build`, whose dist/ the runtime stage copies. */
  const buildStage = stages.find((st) => st.some((x) => x.op === 'RUN' && /\bnpm run build\b/.test(x.args)));
  const buildName = buildStage ? subst(buildStage[0].args).split(/\s+/)[2] : undefined;
  /** What the build stage copies in from the context (COPY <src>... <dest>, no --from). */
  const buildInputs = (buildStage ?? [])
    .filter((x) => x.op === 'COPY' && !/--from=/.test(x.args))
    .flatMap((x) => execForm(x.args.replace(/--\S+\s+/g, '')).slice(0, -1))
    .map((f) => f.replace(/^\.\/|\/$/g, ''));
  /** A compiled file of dist/ and the source it is compiled from. */
  const sourceOf = (file: string): string | null => (/^dist\/.+\.js$/.test(file) ? file.slice('dist/'.length).replace(/\.js$/, '.ts') : null);

  test('runs compiled JavaScript: a build stage runs npm run build, the runtime copies its dist/, tsx stays a dev dependency', () => {
    const out: string[] = [];
    const pkg = JSON.parse(read('package.json')) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
      scripts?: Record<string, string>;
    };
    if (Object.keys(pkg.dependencies ?? {}).includes('tsx')) out.push('tsx is a production dependency: the image must not need it');
    if (!pkg.scripts?.build) out.push('package.json has no build script');
    if (!buildStage) out.push('no stage runs `npm run build`');
    else if (!buildStage.some((x) => x.op === 'RUN' && /\bnpm ci\b(?![^&;]*--omit=dev)/.test(subst(x.args))))
      out.push('the build stage does not install the dev dependencies (npm ci without --omit=dev): tsc is one');
    for (const f of ['tsconfig.json', 'tsconfig.build.json', 'scripts/build.js']) if (!buildInputs.includes(f)) out.push(`the build stage does not copy ${f}`);
    const copiesDist = runtime.some((x) => x.op === 'COPY' && new RegExp(`--from=${buildName ?? '\\S+'}\\b`).test(x.args) && /\/app\/dist\b/.test(x.args));
    if (!copiesDist) out.push('the runtime stage does not copy dist/ from the build stage');
    if (runtime.some((x) => x.op === 'COPY' && /^\.\s/.test(x.args.replace(/--\S+\s+/g, ''))))
      out.push('the runtime stage copies the whole context (sources and all) instead of the build output');
    problems(out);
  });

  test('the files the image and the compose services run are built from sources that exist and are in the build context', () => {
    const out: string[] = [];
    const runs: Array<{ who: string; file: string }> = [];
    for (const s of runtime.filter((x) => x.op === 'CMD' || x.op === 'ENTRYPOINT')) {
      for (const file of scriptArgs(execForm(s.args))) runs.push({ who: `Dockerfile ${s.op}`, file });
    }
    for (const name of OUR_SERVICES) {
      for (const file of scriptArgs([...argv(services[name].entrypoint), ...argv(services[name].command)])) runs.push({ who: `service "${name}"`, file });
      const bin = argv(services[name].command)[0];
      if (bin && bin !== 'node') out.push(`service "${name}": command starts with ${bin}, expected node (compiled JavaScript)`);
    }
    for (const f of ['worker.ts', 'src/server/main.ts', 'scripts/migrate.ts']) {
      if (!runs.some((r) => sourceOf(r.file) === f)) out.push(`nothing runs the compiled ${f} (dist/${f.replace(/\.ts$/, '.js')})`);
    }
    for (const { who, file } of runs) {
      const source = sourceOf(file);
      if (source === null) out.push(`${who} runs ${file}, which is not compiled code under dist/`);
      else if (!exists(source)) out.push(`${who} runs ${file}, whose source ${source} does not exist in the repository`);
      else if (dockerignored(source)) out.push(`${who} runs ${file}, whose source ${source} .dockerignore excludes from the build context`);
      else if (!buildInputs.some((i) => source === i || source.startsWith(`${i}/`)))
        out.push(`${who} runs ${file}, whose source ${source} the build stage does not copy`);
    }
    for (const f of ['package.json', 'package-lock.json', 'migrations', 'hooks', 'bin', 'tsconfig.build.json', 'scripts/build.js'])
      if (dockerignored(f)) out.push(`.dockerignore excludes ${f}, which the image needs`);
    problems([...new Set(out)]);
  });
});
