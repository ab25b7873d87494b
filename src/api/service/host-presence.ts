import type { Client } from '@temporalio/client';
import type { Pool } from '../../store/db';
import { agentPresent } from '../../infra/beacon';
import { hostTaskQueue } from '../../domain/queues';
import { hostBeatAgoMs } from '../../store/hosts';
import { queuePolled } from '../../infra/queue-pollers';
import type { Enforcement } from '../../contract/http';

/**
 * Whether a host's agent is there to act on its worktrees now: what the API asks before it makes
 * a caller wait for that host (an owner change's enforcement, a reclaim's WIP, a first bind's
 * inspection). A host that is away costs the caller a quick answer, never the API's deadline.
 *
 * The agent's beacon decides when it has one: fresh (within BEACON_STALE_MS) is up, older is away,
 * so a host that is cut off or whose agent was killed is known to be away within seconds. A host
 * whose agent beats no beacon (no DATABASE_URL) is judged by Temporal's poller list of its queue:
 * none seen within POLLER_FRESH_MS (src/infra/queue-pollers.ts; a host no agent serves) is away.
 */
export interface HostAgentSeen {
  hostId: string;
  agent: 'up' | 'away';
  /** since its agent's last beacon, when it has one */
  seenAgoMs: number | null;
}

export interface HostPresence {
  of(hostId: string): Promise<HostAgentSeen>;
}

/** One look per host per second at most: a burst of calls on one host costs one query. */
const CACHE_MS = 1_000;

export function createHostPresence(deps: { pool: Pool; temporal: Client; namespace: string }): HostPresence {
  const cache = new Map<string, { at: number; seen: Promise<HostAgentSeen> }>();
  const look = async (hostId: string): Promise<HostAgentSeen> => {
    const ago = await hostBeatAgoMs(deps.pool, hostId);
    const present = await agentPresent(ago, () =>
      deps.temporal.withDeadline(Date.now() + 3_000, () => queuePolled(deps.temporal, deps.namespace, hostTaskQueue(hostId), 'activity')),
    );
    return { hostId, agent: present ? 'up' : 'away', seenAgoMs: ago };
  };
  return {
    of(hostId) {
      const now = Date.now();
      const hit = cache.get(hostId);
      if (hit && now - hit.at < CACHE_MS) return hit.seen;
      // Not knowing (PostgreSQL or Temporal slow to answer) is not "away": the caller waits as it always did.
      const seen = look(hostId).catch((): HostAgentSeen => ({ hostId, agent: 'up', seenAgoMs: null }));
      cache.set(hostId, { at: now, seen });
      if (cache.size > 1_000) cache.delete(cache.keys().next().value!);
      return seen;
    },
  };
}

type Projection = 'applied' | 'pending' | 'failed' | null | undefined;

/** Whether the record an answer carries is enforced on its worktree's host (EnforcementSchema), from the answer and the host's agent as seen now. */
export function enforcementOf(projection: Projection, seen: HostAgentSeen): Enforcement | null {
  if (projection === null || projection === undefined) return null;
  const state = projection === 'applied' ? 'enforced' : projection === 'failed' ? 'failed' : seen.agent === 'away' ? 'not_enforced' : 'pending';
  return { hostId: seen.hostId, state, hostAgent: seen.agent, hostAgentSeenAgoMs: seen.seenAgoMs };
}

/** The answer with its `enforcement`, when the service watches hosts. */
export async function withEnforcement<T extends { hostId: string; projection?: Projection }>(presence: HostPresence | undefined, v: T): Promise<T> {
  if (!presence || v.projection === null || v.projection === undefined) return v;
  return { ...v, enforcement: enforcementOf(v.projection, await presence.of(v.hostId)) };
}
