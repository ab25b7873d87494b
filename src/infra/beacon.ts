import os from 'node:os';
import type { Worker } from '@temporalio/worker';
import { beatBeacon, pruneBeacons } from '../store/beacons';
import type { Pool } from '../store/db';

/**
 * The worker process's beacon: a row in `worker_beacons` beaten every BEAT_MS while all of its
 * workers run. /healthz (src/api/service/health.ts) trusts Temporal's poller list only as far as the
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

/**
 * How long a start waits for its first beat before polling anyway: the pool's connection timeout,
 * so a start with PostgreSQL away waits no longer than its first query would.
 */
const FIRST_BEAT_WAIT_MS = 5_000;

/**
 * Starts beating. `first` settles once the first beat was written or failed (or after
 * FIRST_BEAT_WAIT_MS): a process awaits it before its workers poll, so Temporal never lists a poller
 * of a process whose beacon PostgreSQL does not know yet. Without that, a process killed in that
 * window (between its first poll and its first beat) had no beacon to go stale, and /healthz and
 * the API's host presence believed its listed pollers for a minute.
 */
export function startBeacon(opts: BeaconOptions): { first: Promise<void>; stop(): void } {
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
  const firstBeat = beat();
  const timer = setInterval(() => void beat(), BEAT_MS);
  timer.unref();
  let waited: NodeJS.Timeout | undefined;
  const first = Promise.race([firstBeat, new Promise<void>((resolve) => (waited = setTimeout(resolve, FIRST_BEAT_WAIT_MS)))]).finally(() =>
    clearTimeout(waited),
  );
  return {
    first,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
