/**
 * Child process of git-safety-writers.test.ts: one of several independent writers (as the worker's
 * host agent, a second host agent with the same host id, `od-worktree claim --offline`). Takes
 * jobs over IPC, runs them against the real worktree, answers with the outcome.
 */
import { applyLocalProjection, type LocalProjection } from '../../src/git/projection';
import { offlineClaim } from '../../src/git/provisional';

type Job =
  | { id: number; kind: 'durable'; wt: string; roots: string[]; delayMs: number; projection: LocalProjection }
  | { id: number; kind: 'claim'; wt: string; roots: string[]; delayMs: number; session: string };

const send = (msg: unknown): void => {
  process.send?.(msg);
};

process.on('message', (job: Job) => {
  void (async () => {
    await new Promise((r) => setTimeout(r, job.delayMs));
    try {
      if (job.kind === 'durable') {
        const result = await applyLocalProjection(job.wt, job.projection, { gitLock: true, allowedRoots: job.roots });
        send({ id: job.id, ok: true, result });
      } else {
        const res = await offlineClaim(job.wt, { executionSessionId: job.session, runtime: 'codex-cli', allowedRoots: job.roots });
        send({ id: job.id, ok: true, result: res.status, idempotencyKey: res.projection?.idempotencyKey ?? null });
      }
    } catch (err) {
      send({ id: job.id, ok: false, error: err instanceof Error ? err.message : String(err) });
    }
  })();
});
send({ ready: true });
