import type { Harness } from './harness';

/**
 * What a harness's ownerships and database are waiting on, for a setup that stalls: every running
 * workflow of its task queue with its pending workflow task and activities (type, attempt, last
 * failure), and the database sessions that are not idle (what each waits on, for how long). A
 * stall shows as jest's hook timeout and nothing else; this says where it stood.
 */
export async function stallReport(h: Harness): Promise<string> {
  const lines: string[] = [];
  try {
    for await (const wf of h.temporal.workflow.list({ query: `TaskQueue = '${h.taskQueue}' AND ExecutionStatus = 'Running'` })) {
      const d = await h.temporal.workflow.getHandle(wf.workflowId, wf.runId).describe();
      const raw = d.raw;
      const wft = raw.pendingWorkflowTask;
      lines.push(
        `workflow ${wf.workflowId}: history ${d.historyLength} events${wft ? `, workflow task ${String(wft.state)} attempt ${wft.attempt}` : ''}`,
        ...(raw.pendingActivities ?? []).map(
          (a) =>
            `  activity ${a.activityType?.name ?? '?'} ${String(a.state)} attempt ${a.attempt}${a.lastFailure?.message ? `: ${a.lastFailure.message.slice(0, 200)}` : ''}`,
        ),
      );
    }
  } catch (err) {
    lines.push(`workflows: not listed (${String(err)})`);
  }
  try {
    const res = await h.pool.query<{ pid: number; state: string; wait: string | null; secs: number; query: string }>(
      `SELECT pid, state, wait_event_type || ':' || wait_event AS wait, extract(epoch FROM now() - query_start)::int AS secs, left(query, 160) AS query
         FROM pg_stat_activity WHERE datname = current_database() AND state <> 'idle' AND pid <> pg_backend_pid()`,
    );
    lines.push(...res.rows.map((r) => `pg ${r.pid} ${r.state} ${r.wait ?? '-'} ${r.secs}s: ${r.query.replace(/\s+/g, ' ')}`));
  } catch (err) {
    lines.push(`pg: not read (${String(err)})`);
  }
  return lines.length > 0 ? lines.join('\n') : 'no running workflow on the queue and no busy database session';
}

/** `work`, or after `ms` an error saying what it was and the harness's stall report. */
export async function withStallReport<T>(h: Harness, what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void stallReport(h).then(
        (report) => reject(new Error(`${what}: not done after ${ms / 1000} s; what it waits on:\n${report}`)),
        (err: unknown) => reject(new Error(`${what}: not done after ${ms / 1000} s (no report: ${String(err)})`)),
      );
    }, ms);
  });
  try {
    return await Promise.race([work, stalled]);
  } finally {
    clearTimeout(timer);
  }
}
