import os from 'node:os';
import type { Worker } from '@temporalio/worker';
import { beatBeacon, pruneBeacons } from '../store/beacons';
import type { Pool } from '../store/db';

/**
 * The worker process's beacon: a row in `worker_beacons` beaten every BEAT_MS while all of its
 * workers run. /healthz (src/api/health.ts) trusts Temporal's poller list only as far as the
 * beacon agrees: a poller stays listed for a minute or more after its process was killed, a beacon
 * goes stale in BEACON_STALE_MS. A process that is frozen (SIGSTOP), killed, or whose workers
 * stopped, stops beating.
 */
export const BEAT_MS = 2_000;
export const BEACON_STALE_MS = 8_000;
/** A beacon this many ms old says its process runs: the one rule /healthz and the API's host presence judge by. */
export const beaconFresh = (ageMs: number): boolean => ageMs < BEACON_STALE_MS;

/**
 * Whether a host's agent is there: its beacon decides when it has one (`beatAgoMs`); an agent
 * without DATABASE_URL beats none, and then Temporal's poller list of its queue is all there is
 * (`polled`, asked only then). The one rule /healthz's host list and the API's host presence use.
 */
export async function agentPresent(beatAgoMs: number | null, polled: () => Promise<boolean>): Promise<boolean> {
  return beatAgoMs !== null ? beaconFresh(beatAgoMs) : polled();
}
const RETRY_MS = 250;

export interface BeaconOptions {
  pool: Pool;
  taskQueue: string;
  hostId: string;
  /** whether this process runs the ownership workflows (else only a host agent) */
  servesWorkflows: boolean;
  workers: readonly Worker[];
}

export function startBeacon(opts: BeaconOptions): { stop(): void } {
  const processId = `${os.hostname()}:${process.pid}:${Date.now()}`;
  const started = new Date().toISOString();
  let stopped = false;
  let inFlight = false;
  let failing = false;
  const beat = async () => {
    if (stopped || inFlight) return;
    if (opts.workers.some((w) => w.getState() !== 'RUNNING' && w.getState() !== 'INITIALIZED')) return void (stopped = true);
    inFlight = true;
    try {
      await beatBeacon(opts.pool, { processId, taskQueue: opts.taskQueue, hostId: opts.hostId, servesWorkflows: opts.servesWorkflows, startedAt: started });
      failing = false;
    } catch {
      // PostgreSQL away: /healthz says so itself; beat again soon, so the beacon is fresh the moment it is back.
      failing = true;
    } finally {
      inFlight = false;
    }
    if (failing && !stopped) setTimeout(() => void beat(), RETRY_MS).unref();
  };
  void pruneBeacons(opts.pool).catch(() => undefined);
  void beat();
  const timer = setInterval(() => void beat(), BEAT_MS);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
