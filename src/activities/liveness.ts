import type { Owner, ProcessIdentity } from '../domain/identity';
import type { LivenessVerdict } from './types';
import { procEnvironVar, procStat, readBootIdSync } from '../host/procfs';

/**
 * The execution-session authority (docs/ownership-record.md#liveness): only a `dead` verdict may make an ownership
 * stale. Anything it cannot prove is `unknown`, which fails closed (reclaim then needs an admin).
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

/** Local process identity: host + boot id + pid + process start time. A foreign host answers `unknown`. */
export function localProcessAuthority(hostId: string): LivenessAuthority {
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
      // A process that runs for another session proves nothing about this one.
      const session = procEnvironVar(p.pid, 'OVERDECK_EXECUTION_SESSION_ID');
      if (typeof session === 'string' && session !== owner.executionSessionId)
        return { verdict: 'unknown', detail: `process ${p.pid} runs for another session` };
      return { verdict: 'alive', detail: null };
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

export function authorityFromConfig(cfg: { livenessAuthority: 'local' | 'http' | 'none'; livenessUrl: string; hostId: string }): LivenessAuthority {
  if (cfg.livenessAuthority === 'local') return localProcessAuthority(cfg.hostId);
  if (cfg.livenessAuthority === 'http') return httpAuthority(cfg.livenessUrl);
  return noAuthority;
}
