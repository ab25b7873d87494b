import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import type { Cleanup } from '../stack/cleanup';
import { serviceEnv } from '../stack/env';
import { writePrincipals, type Tokens } from '../stack/principals';
import type { ManagedProcess } from '../stack/procs';
import { startPostgres, migratedDatabase } from '../stack/postgres';
import { makeRunDir } from '../stack/run-dir';
import { serviceProcess, SERVICES } from '../stack/services';
import { startTemporal } from '../stack/temporal';
import { writeWorkflowBundle } from '../stack/bundle';
import { createKeyFileIfMissing } from '../src/keys/message-seal';
import { freePort } from '../src/infra/ports';
import type { EmbeddedPg } from '../src/infra/postgres';
import type { DevServer } from '../src/infra/temporal-dev-server';
import { createPool } from '../src/store/db';

/** Settings the API starts workflows with (OD_* variables of the API process). */
export const STACK_SETTINGS = {
  /** no liveness authority answers here (OD_LIVENESS_AUTHORITY=none): a silent owner never goes stale */
  leaseTtlMs: 60 * 60_000,
  /** a durable heartbeat event every 2 s of heartbeats, so heartbeats reach the log */
  heartbeatLogIntervalMs: 2_000,
  /** short, so handoffs that are never accepted fall back (a system-caused event) within a phase */
  handoffTimeoutMs: 8_000,
};

/** The API's bound on a Temporal call (ServiceDeps.temporalTimeoutMs default) and reclaim's (twice that). */
export const API_DEADLINE_MS = 30_000;
export const RECLAIM_DEADLINE_MS = 2 * API_DEADLINE_MS;

export type Component = 'temporal' | 'postgres' | 'worker' | 'hostAgent' | 'api';

export interface FaultStackOptions {
  executors: number;
  keep: boolean;
  /** overrides of STACK_SETTINGS for the API's workflows (e.g. the torture run's shorter handoff timeout) */
  settings?: Partial<typeof STACK_SETTINGS>;
  /** where each process's log (worker.log, hostAgent.log, api.log) goes; default runDir, removed with the temp dir unless keep */
  logDir?: string;
}

/**
 * The real stack as separate processes the run can kill: a Temporal dev server on a SQLite file,
 * an embedded PostgreSQL in the run's temp dir, `tsx worker.ts` (workflows, store activities, and
 * the host activities of a host id no worktree uses), `tsx worker.ts --host-agent` (the git side of
 * the host the worktrees are on) and `tsx src/server/main.ts` with a principals file.
 */
export class FaultStack {
  readonly root: string;
  readonly runDir: string;
  readonly repoDir: string;
  readonly tag = Math.random().toString(36).slice(2, 8);
  readonly taskQueue = `faults-${this.tag}`;
  /** the host of every worktree: the host agent serves it, the API binds on it */
  readonly hostId = `faults-host-${this.tag}`;
  /** the main worker's own host id: its built-in host agent serves a queue no worktree uses */
  readonly workerHostId = `faults-wfhost-${this.tag}`;
  tokens!: Tokens;
  temporalPort = 0;
  pgPort = 0;
  apiPort = 0;
  serverUrl = '';
  databaseUrl = '';
  pool!: Pool;
  /** STACK_SETTINGS with the caller's overrides: what the service processes run with */
  readonly settings: typeof STACK_SETTINGS;
  /** where the processes' logs are written */
  readonly logDir: string;
  private temporal: DevServer | null = null;
  private pg: EmbeddedPg | null = null;
  worker!: ManagedProcess;
  hostAgent!: ManagedProcess;
  api!: ManagedProcess;

  constructor(
    private readonly cleanup: Cleanup,
    private readonly log: (line: string) => void,
    opts: FaultStackOptions,
  ) {
    this.root = makeRunDir('faults', cleanup, opts.keep);
    this.runDir = path.join(this.root, 'run');
    this.repoDir = path.join(this.root, 'repos');
    mkdirSync(this.runDir, { recursive: true });
    mkdirSync(this.repoDir, { recursive: true });
    createKeyFileIfMissing(this.serviceKeyFile());
    this.logDir = opts.logDir ?? this.runDir;
    mkdirSync(this.logDir, { recursive: true });
    this.settings = { ...STACK_SETTINGS, ...opts.settings };
    this.executorsWanted = opts.executors;
  }
  private readonly executorsWanted: number;

  get url(): string {
    return `http://127.0.0.1:${this.apiPort}`;
  }

  /** host:port of the Temporal dev server (for a client or a connection of the caller's own) */
  get temporalAddress(): string {
    return `127.0.0.1:${this.temporalPort}`;
  }

  /** OD_ALLOWED_ROOTS of every process: the run's repositories go under repoDir, below the first */
  get allowedRoots(): string[] {
    return [this.root];
  }

  async start(): Promise<void> {
    const t0 = Date.now();
    this.temporalPort = await freePort();
    this.pgPort = await freePort();
    this.apiPort = await freePort();
    // The worker loads these sources' bundle from the cache: made meanwhile when it is not there yet.
    const bundled = writeWorkflowBundle(this.log);
    bundled.catch(() => undefined);
    await this.startTemporal();
    await this.startPostgres();
    await bundled;
    this.databaseUrl = await migratedDatabase(null, this.serverUrl, 'ownership');
    this.pool = createPool(this.databaseUrl, { max: 4 });
    this.cleanup.add('close checker pool', () => this.pool.end());
    this.log(`Temporal (SQLite ${this.temporalDbFile()}) and PostgreSQL (embedded, port ${this.pgPort}) up after ${Date.now() - t0} ms`);

    this.writeTokens();
    this.worker = this.proc('worker', { OD_HOST_ID: this.workerHostId });
    this.hostAgent = this.proc('hostAgent', { OD_HOST_ID: this.hostId });
    this.api = this.proc('api', { OD_HOST_ID: this.hostId });
    // The worker bundles the workflow code at start: the slowest; the others start meanwhile.
    await Promise.all([this.worker.start(), this.hostAgent.start(), this.api.start()]);
    this.log(
      `worker (pid ${this.worker.pid}), host agent (pid ${this.hostAgent.pid}) and API ${this.url} (pid ${this.api.pid}) up after ${Date.now() - t0} ms`,
    );
  }

  temporalDbFile(): string {
    return path.join(this.root, 'temporal', 'temporal.sqlite');
  }

  async startTemporal(): Promise<void> {
    this.temporal = await startTemporal(this.cleanup, { port: this.temporalPort, uiPort: null, dbFile: this.temporalDbFile() });
  }

  /** `kill -9` of the dev server's process group; its SQLite file (WAL) stays for the restart. */
  async killTemporal(): Promise<void> {
    const s = this.temporal;
    if (!s) return;
    const gone = new Promise<void>((resolve) =>
      s.process.exitCode !== null || s.process.signalCode !== null ? resolve() : s.process.once('exit', () => resolve()),
    );
    try {
      process.kill(-s.process.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
    await gone;
    this.temporal = null;
  }

  async stopTemporal(): Promise<void> {
    await this.temporal?.stop();
    this.temporal = null;
  }

  async startPostgres(): Promise<void> {
    const server = await startPostgres(this.cleanup, { dir: this.root, port: this.pgPort });
    this.pg = server.pg;
    this.serverUrl = server.serverUrl;
  }

  /** A fast shutdown (SIGINT to the postmaster): every connection is cut, the data stays. */
  async stopPostgres(): Promise<void> {
    await this.pg?.stop();
    this.pg = null;
  }

  temporalUp(): boolean {
    return this.temporal !== null;
  }
  postgresUp(): boolean {
    return this.pg !== null;
  }

  /** Stops everything, API first (the reverse of the start). */
  async stopAll(): Promise<void> {
    for (const p of [this.api, this.hostAgent, this.worker]) {
      if (!p) continue;
      p.signal('SIGCONT');
      await p.stop().catch(() => undefined);
    }
    await this.stopTemporal().catch(() => undefined);
    await this.stopPostgres().catch(() => undefined);
  }

  private writeTokens(): void {
    this.tokens = writePrincipals(this.tokensFile(), this.tag, this.executorsWanted, 'faults');
  }

  /** The stack's service key (OD_SERVICE_KEY_FILE of every process): a client of the stack seals with it. */
  serviceKeyFile(): string {
    return path.join(this.root, 'service.key');
  }

  tokensFile(): string {
    return path.join(this.root, 'principals.json');
  }

  /** The environment every service process of the stack shares (src/config.ts variables). */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return serviceEnv(
      {
        temporalAddress: this.temporalAddress,
        taskQueue: this.taskQueue,
        databaseUrl: this.databaseUrl,
        tokensFile: this.tokensFile(),
        liveness: 'none',
        settings: this.settings,
      },
      {
        OD_DATA_DIR: path.join(this.root, 'data'),
        OD_ALLOWED_ROOTS: this.root,
        OD_API_HOST: '127.0.0.1',
        OD_API_PORT: String(this.apiPort),
        OD_SERVICE_KEY_FILE: this.serviceKeyFile(),
        ...extra,
      },
    );
  }

  private proc(kind: keyof typeof SERVICES, env: Record<string, string>): ManagedProcess {
    return serviceProcess(this.cleanup, kind, { name: kind, env: this.env(env), logDir: this.logDir });
  }
}
