import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Connection, WorkflowClient } from '@temporalio/client';
import type { Pool } from 'pg';

/**
 * What a wedged ownership looked like when its probe gave up, in one line each: its durable row,
 * its workflow (status, pending workflow task and its attempts, the last workflow-task failure in
 * its history) and the worker's log lines that name it. A wedge reported as "unavailable after
 * 30 s" says nothing of its cause; this does, in the run's output and in violations.jsonl.
 */
export async function diagnoseWedge(opts: {
  pool: Pool;
  temporalAddress: string;
  runDir: string;
  worktreePath: string;
  ownershipId: string | null;
}): Promise<string[]> {
  const out: string[] = [];
  const row = await opts.pool
    .query<{ ownership_id: string; workflow_id: string; state: string; epoch: number; seq: number; owner_session_id: string | null }>(
      `SELECT ownership_id, workflow_id, state, epoch, seq, owner_session_id FROM ownerships
        WHERE ${opts.ownershipId ? 'ownership_id = $1' : 'worktree_path = $1'} ORDER BY updated_at DESC LIMIT 1`,
      [opts.ownershipId ?? opts.worktreePath],
    )
    .then((r) => r.rows[0] ?? null)
    .catch((e: Error) => (out.push(`row: unreadable (${e.message})`), null));
  if (!row) return [...out, `row: none for ${opts.ownershipId ?? opts.worktreePath}`];
  out.push(`row: ${row.ownership_id} state=${row.state} epoch=${row.epoch} seq=${row.seq} owner=${row.owner_session_id ?? '-'}`);

  let connection: Connection | null = null;
  try {
    connection = await Connection.connect({ address: opts.temporalAddress, connectTimeout: 5_000 });
    const client = new WorkflowClient({ connection });
    const handle = client.getHandle(row.workflow_id);
    const d = await handle.describe();
    const raw = d.raw;
    const pwt = raw.pendingWorkflowTask;
    out.push(
      `workflow: ${row.workflow_id} run ${d.runId} ${d.status.name} historyLength=${d.historyLength}` +
        (pwt ? ` pendingTask={state:${pwt.state}, attempt:${pwt.attempt}}` : ' pendingTask=none'),
    );
    const history = await handle.fetchHistory();
    const failures = (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes);
    const last = failures.at(-1)?.workflowTaskFailedEventAttributes;
    if (last)
      out.push(`last workflow task failure (${failures.length} in history): cause=${String(last.cause)} ${(last.failure?.message ?? '').slice(0, 300)}`);
    const tail = (history.events ?? []).slice(-8).map((e) => `${String(e.eventId)}:${eventName(e)}`);
    out.push(`history tail: ${tail.join(' ')}`);
  } catch (e) {
    out.push(`workflow: not described (${(e as Error).message.slice(0, 200)})`);
  } finally {
    await connection?.close().catch(() => undefined);
  }

  try {
    const lines = readFileSync(path.join(opts.runDir, 'worker.log'), 'utf8')
      .split('\n')
      .filter((l) => l.includes(row.workflow_id) || l.includes(row.ownership_id))
      .filter((l) => /"level":(40|50|60)|WARN|ERROR|nondetermin|TMPRL/i.test(l));
    for (const l of lines.slice(-5)) out.push(`worker log: ${l.slice(0, 400)}`);
  } catch {
    /* no worker log */
  }
  return out;
}

/** The attribute set an event carries names its type (the proto's enum needs no import here). */
export function eventName(e: object): string {
  const key = Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k]);
  return key ? key.replace(/EventAttributes$/, '') : 'event';
}
