import type { Owner, ProcessIdentity } from '../domain/identity';
import type { LivenessVerdict } from './types';
import { DEFAULT_UNPROVEN_BOUND_MS, runningProcessVerdict } from '../domain/liveness';
import { procEnvironVar, procStat, readBootIdSync } from '../host/procfs';

/**
 * The execution-session authority (docs/ownership-record.md#liveness): only a `dead` verdict may make an ownership
 * stale. Anything it cannot prove is `unknown`, which fails closed (reclaim then needs an admin); the
 * local authority's unknown for a running but unproven process is bounded (runningProcessVerdict).
 */
export interface LivenessAuthority {
  check(owner: Owner): Promise<{ verdict: LivenessVerdict; detail: string | null }>;
}

export async function readBootId(): Promise<string> {
  const id = readBootIdSync();
  if (id === null) throw new Error('no boot id: /proc/sys/kernel/random/boot_id is unreadable');
  return id;
}

/** Process start time in clock ticks since boot (field 22 of /proc/<pid>/stat): pid reuse changes it. */
export async function readProcessStart(pid: number): Promise<{ startTime: string; zombie: boolean } | null> {
  const stat = procStat(pid);
  return stat ? { startTime: stat.startTime, zombie: stat.state === 'Z' || stat.state === 'X' } : null;
}

/** The identity a session reports about its own process when it claims. */
export async function currentProcessIdentity(hostId: string, pid = process.pid): Promise<ProcessIdentity> {
  const start = await readProcessStart(pid);
  if (!start) throw new Error(`no such process ${pid}`);
  return { hostId, bootId: await readBootId(), pid, startTime: start.startTime };
}

export interface LocalAuthorityOptions {
  /** how long a running process that cannot prove its session stays `unknown` (domain/liveness.ts runningProcessVerdict) */
  unprovenBoundMs?: number;
  /** the clock (tests) */
  nowMs?: () => number;
}

/** Tenures whose process this authority found unproven, and since when; bounded, oldest first out. */
const UNPROVEN_MAX = 4096;

/**
 * Local process identity: host + boot id + pid + process start time prove death; only the process
 * carrying the session proves life (runningProcessVerdict). A foreign host answers `unknown`.
 */
export function localProcessAuthority(hostId: string, opts: LocalAuthorityOptions = {}): LivenessAuthority {
  const boundMs = opts.unprovenBoundMs ?? DEFAULT_UNPROVEN_BOUND_MS;
  const clock = opts.nowMs ?? Date.now;
  const unprovenSince = new Map<string, number>();
  return {
    async check(owner) {
      const p = owner.process;
      if (!p) return { verdict: 'unknown', detail: 'session reported no process identity' };
      if (p.hostId !== hostId) return { verdict: 'unknown', detail: `session runs on another host (${p.hostId})` };
      if (p.bootId !== (await readBootId())) return { verdict: 'dead', detail: 'host rebooted since the claim' };
      const now = await readProcessStart(p.pid);
      if (!now) return { verdict: 'dead', detail: `process ${p.pid} is gone` };
      if (now.startTime !== p.startTime) return { verdict: 'dead', detail: `pid ${p.pid} now belongs to another process` };
      if (now.zombie) return { verdict: 'dead', detail: `process ${p.pid} has exited` };
      // Alive only by proof: the process carries this session (pid 2, a root daemon, another user's process do not).
      const session = procEnvironVar(p.pid, 'OVERDECK_EXECUTION_SESSION_ID');
      const key = [owner.executionSessionId, p.bootId, p.pid, p.startTime].join('\0');
      const nowMs = clock();
      if (session === owner.executionSessionId) unprovenSince.delete(key);
      else if (!unprovenSince.has(key)) {
        unprovenSince.set(key, nowMs);
        if (unprovenSince.size > UNPROVEN_MAX) unprovenSince.delete(unprovenSince.keys().next().value as string);
      }
      return runningProcessVerdict(p.pid, session, owner.executionSessionId, { sinceMs: unprovenSince.get(key) ?? nowMs, nowMs, boundMs });
    },
  };
}

/** An orchestrator-side authority: POST {executionSessionId} -> {verdict}. Anything else is unknown. */
export function httpAuthority(url: string, timeoutMs = 5_000): LivenessAuthority {
  return {
    async check(owner) {
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ executionSessionId: owner.executionSessionId }),
          signal: AbortSignal.timeout(timeoutMs),
        });
        if (!res.ok) return { verdict: 'unknown', detail: `authority answered ${res.status}` };
        const body = (await res.json()) as { verdict?: unknown };
        const v = body.verdict;
        return v === 'alive' || v === 'dead' ? { verdict: v, detail: null } : { verdict: 'unknown', detail: 'authority gave no verdict' };
      } catch {
        return { verdict: 'unknown', detail: 'authority unreachable' };
      }
    },
  };
}

export const noAuthority: LivenessAuthority = {
  async check() {
    return { verdict: 'unknown', detail: 'no liveness authority configured' };
  },
};

export function authorityFromConfig(cfg: {
  livenessAuthority: 'local' | 'http' | 'none';
  livenessUrl: string;
  hostId: string;
  livenessUnprovenBoundMs?: number;
}): LivenessAuthority {
  if (cfg.livenessAuthority === 'local')
    return localProcessAuthority(cfg.hostId, cfg.livenessUnprovenBoundMs === undefined ? {} : { unprovenBoundMs: cfg.livenessUnprovenBoundMs });
  if (cfg.livenessAuthority === 'http') return httpAuthority(cfg.livenessUrl);
  return noAuthority;
}
