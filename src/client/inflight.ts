import { OwnershipError } from './errors';

/**
 * Updates in flight to one ownership from this process, queued rather than raced: the Temporal
 * server refuses updates past its per-workflow in-flight limit (10 by default) and aborts more
 * under a burst, each refusal a round trip and a retry. Here a burst waits its turn in order,
 * and past the queue's bound (or its wait) the caller is told at once to retry: nothing was sent,
 * so that answer took no effect.
 */
export class PerOwnershipQueue {
  private readonly lanes = new Map<string, { running: number; waiting: Array<() => void> }>();

  constructor(
    private readonly limit: number,
    private readonly maxWaiting: number,
  ) {}

  /** Runs `fn` in its turn; waiting past `deadline` (the message's own, epoch ms), the caller is told to retry. */
  async run<T>(key: string, deadline: number, fn: () => Promise<T>): Promise<T> {
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = { running: 0, waiting: [] }));
    if (lane.running >= this.limit) await this.wait(lane, deadline);
    else lane.running++;
    try {
      return await fn();
    } finally {
      const next = lane.waiting.shift();
      if (next) next();
      else if (--lane.running === 0) this.lanes.delete(key);
    }
  }

  private wait(lane: { running: number; waiting: Array<() => void> }, deadline: number): Promise<void> {
    if (lane.waiting.length >= this.maxWaiting) throw new OwnershipError('unavailable', QUEUE_FULL);
    return new Promise<void>((resolve, reject) => {
      const go = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(
        () => {
          const i = lane.waiting.indexOf(go);
          if (i >= 0) lane.waiting.splice(i, 1);
          reject(new OwnershipError('unavailable', QUEUE_FULL));
        },
        Math.max(0, deadline - Date.now()),
      );
      lane.waiting.push(go);
    });
  }
}

export const QUEUE_FULL = 'too many messages waiting for this ownership; retry shortly';
