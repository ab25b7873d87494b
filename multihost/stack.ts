import { chmodSync, copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import type { Cleanup } from '../stack/cleanup';
import { serviceEnv } from '../stack/env';
import { writePrincipals, type Tokens } from '../stack/principals';
import type { ManagedProcess } from '../stack/procs';
import { migratedDatabase, startPostgres } from '../stack/postgres';
import { makeRunDir } from '../stack/run-dir';
import { serviceProcess, SERVICES } from '../stack/services';
import { startTemporal } from '../stack/temporal';
import { writeWorkflowBundle } from '../stack/bundle';
import { createKeyFileIfMissing } from '../src/keys/message-seal';
import { freePort } from '../src/infra/ports';
import { createPool } from '../src/store/db';
import { createNetwork, inHost, type NetHost, type Network } from './netns';

/** The settings every host's processes share (OD_* variables). */
export const MULTIHOST_SETTINGS = {
  /** short, so a host cut off outlives its owners' leases within the run */
  leaseTtlMs: 8_000,
  heartbeatLogIntervalMs: 2_000,
  handoffTimeoutMs: 20_000,
};

/** One network host of the run: its namespace, id, directories and worker (workflows and its own host agent). */
export interface Host {
  net: NetHost;
  /** its OD_HOST_ID */
  id: string;
  /** everything of this host lives under here (its OD_ALLOWED_ROOTS) */
  dir: string;
  repos: string;
  worker: ManagedProcess;
}

/**
 * Three (or `hosts`) real network hosts sharing one Temporal dev server and one PostgreSQL, which
 * listen on the bridge in the root namespace; each host runs `worker.ts` (the ownership workflows
 * and its own host agent) with its own OD_HOST_ID, and the first also the API. Every service
 * process reaches Temporal and PostgreSQL over its host's link, so taking the link down cuts that
 * host off from both, and from the API, while its processes and its hooks go on running.
 */
export class MultiHostStack {
  readonly root: string;
  readonly runDir: string;
  readonly tag = Math.random().toString(36).slice(2, 6);
  readonly taskQueue = `multihost-${this.tag}`;
  readonly net: Network;
  readonly hosts: Host[];
  tokens!: Tokens;
  temporalPort = 0;
  pgPort = 0;
  apiPort = 0;
  databaseUrl = '';
  pool!: Pool;
  api!: ManagedProcess;

  constructor(
    private readonly cleanup: Cleanup,
    private readonly log: (line: string) => void,
    opts: { hosts: number; executors: number; keep: boolean },
  ) {
    this.root = makeRunDir('multihost', cleanup, opts.keep);
    this.runDir = path.join(this.root, 'run');
    mkdirSync(this.runDir, { recursive: true });
    this.net = createNetwork(this.tag, opts.hosts, 64 + Math.floor(Math.random() * 60));
    cleanup.add('remove network namespaces', () => this.net.destroy());
    cleanup.addLastResort(() => this.net.destroy());
    createKeyFileIfMissing(this.serviceKeyFile());
    this.executors = opts.executors;
    this.hosts = this.net.hosts.map((net) => {
      const dir = path.join(this.root, 'hosts', net.name);
      const repos = path.join(dir, 'repos');
      mkdirSync(repos, { recursive: true });
      const id = `mh-${this.tag}-${net.name}`;
      // Each host has its own copy of the service key, as a deployment would place it.
      const keyFile = path.join(dir, 'service.key');
      copyFileSync(this.serviceKeyFile(), keyFile);
      chmodSync(keyFile, 0o600);
      // Its worker is made at start(), once the addresses it is given are known.
      return { net, id, dir, repos, worker: null as unknown as ManagedProcess };
    });
  }
  private readonly executors: number;

  get hub(): string {
    return this.net.hubIp;
  }
  /** The API, on the first host: reached over its link from the others and from the run. */
  get url(): string {
    return `http://${this.hosts[0]!.net.ip}:${this.apiPort}`;
  }
  get temporalAddress(): string {
    return `${this.hub}:${this.temporalPort}`;
  }

  async start(): Promise<void> {
    const t0 = Date.now();
    this.temporalPort = await freePort();
    this.pgPort = await freePort();
    this.apiPort = await freePort();
    // On every address: the dev server's own services dial each other on 127.0.0.1, so bound to the
    // bridge's address alone it cannot start a workflow. The hosts reach it at the bridge's address.
    // Every host's worker loads these sources' bundle from the cache: made meanwhile when it is not there yet.
    const bundled = writeWorkflowBundle(this.log);
    bundled.catch(() => undefined);
    await startTemporal(this.cleanup, { ip: '0.0.0.0', port: this.temporalPort, uiPort: null, dbFile: path.join(this.root, 'temporal', 'temporal.sqlite') });
    const { serverUrl } = await startPostgres(this.cleanup, {
      dir: this.root,
      port: this.pgPort,
      alsoListen: { address: this.hub, network: `${this.hub.replace(/\.1$/, '.0')}/24` },
    });
    await bundled;
    const local = await migratedDatabase(null, serverUrl, 'ownership');
    // Every service process reaches PostgreSQL over its link, at the bridge's address.
    this.databaseUrl = local.replace('@127.0.0.1:', `@${this.hub}:`);
    this.pool = createPool(this.databaseUrl, { max: 4 });
    this.cleanup.add('close checker pool', () => this.pool.end());
    this.log(
      `Temporal ${this.temporalAddress} and PostgreSQL ${this.hub}:${this.pgPort} up after ${Date.now() - t0} ms; hosts ${this.hosts.map((h) => `${h.net.name}=${h.net.ip}`).join(' ')}`,
    );
    this.writeTokens();
    const h1 = this.hosts[0]!;
    this.api = this.proc(
      h1.net,
      'api',
      'api',
      // The API answers for every host's worktrees (provenance opens repositories): its roots are all of them.
      {
        OD_HOST_ID: h1.id,
        OD_ALLOWED_ROOTS: this.root,
        OD_API_HOST: h1.net.ip,
        OD_API_PORT: String(this.apiPort),
        OD_DATA_DIR: path.join(h1.dir, 'data'),
        OD_SERVICE_KEY_FILE: path.join(h1.dir, 'service.key'),
      },
    );
    for (const h of this.hosts) {
      h.worker = this.proc(h.net, 'worker', `worker-${h.net.name}`, {
        OD_HOST_ID: h.id,
        OD_ALLOWED_ROOTS: h.dir,
        OD_DATA_DIR: path.join(h.dir, 'data'),
        OD_SERVICE_KEY_FILE: path.join(h.dir, 'service.key'),
      });
    }
    await Promise.all([...this.hosts.map((h) => h.worker.start()), this.api.start()]);
    this.log(
      `workers on ${this.hosts.map((h) => `${h.net.name} (${h.id}, pid ${h.worker.pid})`).join(', ')} and the API ${this.url} on h1 up after ${Date.now() - t0} ms`,
    );
  }

  /** Stops the service processes (API first), then the shared services. */
  async stopAll(): Promise<void> {
    for (const h of this.hosts) if (this.net.isCut(h.net)) this.net.heal(h.net);
    for (const p of [this.api, ...this.hosts.map((h) => h.worker)]) {
      if (!p) continue;
      p.signal('SIGCONT');
      await p.stop().catch(() => undefined);
    }
  }

  serviceKeyFile(): string {
    return path.join(this.root, 'service.key');
  }
  tokensFile(): string {
    return path.join(this.root, 'principals.json');
  }

  /** The environment of a service process (or a CLI run) on `host`. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return serviceEnv(
      {
        temporalAddress: this.temporalAddress,
        taskQueue: this.taskQueue,
        databaseUrl: this.databaseUrl,
        tokensFile: this.tokensFile(),
        liveness: 'local',
        settings: MULTIHOST_SETTINGS,
      },
      extra,
    );
  }

  private writeTokens(): void {
    this.tokens = writePrincipals(this.tokensFile(), this.tag, this.executors, 'mh');
  }

  private proc(net: NetHost, kind: keyof typeof SERVICES, name: string, env: Record<string, string>): ManagedProcess {
    return serviceProcess(this.cleanup, kind, { name, env: this.env(env), logDir: this.runDir, wrap: (argv) => inHost(net, argv) });
  }
}
