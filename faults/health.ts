import type { Component } from './stack';

/** When each component of the stack was down, as the fault injectors took it down and brought it back. */
export interface DownInterval {
  component: Component;
  phase: string;
  /** just before the kill or stop */
  from: number;
  /** once it was back (started and ready); Infinity while it is still down */
  to: number;
}

export class Timeline {
  readonly intervals: DownInterval[] = [];
  down(component: Component, phase: string): DownInterval {
    const d: DownInterval = { component, phase, from: Date.now(), to: Infinity };
    this.intervals.push(d);
    return d;
  }
  up(d: DownInterval): void {
    d.to = Date.now();
  }
  /** Some interval of these components overlaps [from, to] once widened by `afterMs` past its end. */
  overlaps(components: readonly Component[], from: number, to: number, afterMs: number): boolean {
    return this.intervals.some((d) => components.includes(d.component) && d.from <= to && d.to + afterMs >= from);
  }
}

export interface HealthBody {
  ok: boolean;
  temporal: string;
  postgres: string;
  worker: string;
  hostAgent: string;
}

export interface HealthSample {
  t0: number;
  t1: number;
  /** 0: no answer within the sampler's timeout */
  status: number;
  body: HealthBody | null;
}

/** Samples GET /healthz once a second for the whole run. */
export class HealthMonitor {
  readonly samples: HealthSample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private inFlight = false;

  constructor(
    private readonly url: string,
    private readonly periodMs = 1_000,
    private readonly timeoutMs = 6_000,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sample(), this.periodMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async sample(): Promise<void> {
    if (this.inFlight) return;
    this.inFlight = true;
    const t0 = Date.now();
    let status = 0;
    let body: HealthBody | null = null;
    try {
      const res = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(this.timeoutMs) });
      status = res.status;
      body = (await res.json()) as HealthBody;
    } catch {
      /* no answer: status 0 */
    }
    this.samples.push({ t0, t1: Date.now(), status, body });
    this.inFlight = false;
  }
}
