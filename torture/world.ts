import type { Slot } from './fixtures';
import type { AnswerSummary } from '../chaos/answer';
import { believeView, type OwnerBelief } from '../chaos/belief';
import type { Caller } from './record';
import type { ExecutorToken, Target } from './target';

/** What the API's contract offers, read from its OpenAPI document (the contract is changing under the run). */
export interface Features {
  /** handoff bodies may name the successor's worker (`toWorkerId`) */
  handoffToWorker: boolean;
  /** bind may leave `repoRoot` out (git says which repository a worktree belongs to) */
  repoRootOptional: boolean;
}

/** The runner's belief about a worktree, from the answers it got: often behind, which is the point. */
export interface Belief extends OwnerBelief {
  handoff: { handoffId: string; toSession: string } | null;
  /** the last handoff seen, kept after it ended: a late accept of it is a legal retry */
  lastHandoff: { handoffId: string; toSession: string } | null;
  /** while the worktree is removed and re-added nothing else is sent for it */
  recycling: boolean;
}

export interface Session {
  id: string;
  /** index of the worker the session runs under: its home, the only worker that may act for it */
  worker: number;
}

/**
 * Workers, sessions and worktrees of a run. Every session belongs to one worker, so "a worker's
 * executor acting for another worker's session" is always an impersonation, whatever the timing.
 */
export class World {
  readonly beliefs: Belief[];
  readonly sessions: Session[];
  private readonly home = new Map<string, number>();
  /** the highest epoch any answer showed per ownership: an epoch below it is stale for ever */
  private readonly maxEpoch = new Map<string, number>();

  constructor(
    readonly target: Target,
    readonly slots: Slot[],
    readonly sessionsPerWorker: number,
    readonly features: Features,
    readonly tag: string,
  ) {
    this.beliefs = slots.map(() => emptyBelief());
    this.sessions = [];
    for (let w = 0; w < target.executors.length; w++) {
      for (let s = 0; s < sessionsPerWorker; s++) {
        const id = `t${tag}-w${w}-s${s}`;
        this.sessions.push({ id, worker: w });
        this.home.set(id, w);
      }
    }
  }

  get workers(): number {
    return this.target.executors.length;
  }
  executor(w: number): ExecutorToken {
    return this.target.executors[w]!;
  }
  caller(w: number): Caller {
    return { kind: 'executor', worker: w, workerId: this.executor(w).workerId };
  }
  sessionOf(w: number, s: number): string {
    return `t${this.tag}-w${w}-s${s % this.sessionsPerWorker}`;
  }
  homeOf(session: string): number | undefined {
    return this.home.get(session);
  }
  /** session id -> worker id, for the checker */
  homeWorkerIds(): Map<string, string> {
    return new Map(this.sessions.map((s) => [s.id, this.executor(s.worker).workerId]));
  }
  maxEpochOf(ownershipId: string | null): number {
    return ownershipId ? (this.maxEpoch.get(ownershipId) ?? 0) : 0;
  }

  /** Folds an answer into the belief about its worktree. */
  observe(k: number, a: AnswerSummary | undefined): void {
    if (!a) return;
    const b = this.beliefs[k]!;
    if (a.ownershipId && a.epoch !== undefined) this.maxEpoch.set(a.ownershipId, Math.max(this.maxEpochOf(a.ownershipId), a.epoch));
    if (a.ownershipId && a.state !== undefined) {
      if (!believeView(b, a)) return;
      b.handoff = a.handoffId && a.handoffTo ? { handoffId: a.handoffId, toSession: a.handoffTo } : null;
      if (b.handoff) b.lastHandoff = b.handoff;
      return;
    }
    // A refusal that disclosed the owner (worktree_owned, not_owner) or the current epoch (stale_epoch).
    const d = a.details as
      { owner?: { ownershipId?: string; state?: string; epoch?: number; executionSessionId?: string | null }; currentEpoch?: number } | undefined;
    const o = d?.owner;
    if (o?.ownershipId && typeof o.epoch === 'number') {
      this.maxEpoch.set(o.ownershipId, Math.max(this.maxEpochOf(o.ownershipId), o.epoch));
      if (o.ownershipId !== b.ownershipId || o.epoch >= b.epoch) {
        b.ownershipId = o.ownershipId;
        if (o.state && o.state !== 'claiming') b.state = o.state;
        b.epoch = o.epoch;
        b.ownerSession = o.executionSessionId ?? null;
      }
    }
    if (typeof d?.currentEpoch === 'number' && b.ownershipId) {
      this.maxEpoch.set(b.ownershipId, Math.max(this.maxEpochOf(b.ownershipId), d.currentEpoch));
      if (d.currentEpoch > b.epoch) b.epoch = d.currentEpoch;
    }
  }

  forget(k: number): void {
    this.beliefs[k] = { ...emptyBelief(), recycling: this.beliefs[k]!.recycling };
  }
}

function emptyBelief(): Belief {
  return { ownershipId: null, state: null, epoch: 0, seq: 0, ownerSession: null, handoff: null, lastHandoff: null, recycling: false };
}

/** Reads the contract from GET /openapi.json: which of the changes being rolled out are there. */
export async function detectFeatures(url: string): Promise<Features> {
  const res = await fetch(`${url}/openapi.json`);
  const doc = (await res.json()) as { paths?: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> } }>> };
  const bodyOf = (p: string): Schema | undefined => doc.paths?.[p]?.post?.requestBody?.content?.['application/json']?.schema;
  const handoff = bodyOf('/v1/ownerships/{id}/handoff');
  const bind = bodyOf('/v1/bind');
  return {
    handoffToWorker: Boolean(handoff?.properties && 'toWorkerId' in handoff.properties),
    repoRootOptional: Boolean(bind?.properties && 'repoRoot' in bind.properties && !(bind.required ?? []).includes('repoRoot')),
  };
}

interface Schema {
  properties?: Record<string, unknown>;
  required?: string[];
}
