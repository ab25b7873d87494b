import type { Pool } from 'pg';
import { applyObservation, type BindingOutcome, type BindingState, type Observation } from '../domain/binding';
import { ConversationSchema, type Conversation } from '../domain/identity';
import { refusal, type Refusal } from '../domain/reasons';
import { HELD_STATES } from '../domain/states';

/** The conversation first bound to an agent worker, or null: the only source of an ownership's conversation. */
export async function readExecutorConversation(pool: Pool, workerId: string): Promise<Conversation | null> {
  const res = await pool.query<{ first_conversation: unknown }>('SELECT first_conversation FROM executor_bindings WHERE worker_id = $1', [workerId]);
  const raw = res.rows[0]?.first_conversation;
  return raw ? ConversationSchema.parse(raw) : null;
}

export async function readBinding(pool: Pool, workerId: string): Promise<BindingState | null> {
  const res = await pool.query('SELECT * FROM executor_bindings WHERE worker_id = $1', [workerId]);
  return res.rows[0] ? rowToBinding(res.rows[0]) : null;
}

function rowToBinding(row: Record<string, unknown>): BindingState {
  const conv = (x: unknown) => (x ? ConversationSchema.parse(x) : null);
  return {
    workerId: String(row.worker_id),
    runId: (row.run_id as string | null) ?? null,
    executor: String(row.executor),
    executorInstanceId: String(row.executor_instance_id),
    firstConversation: conv(row.first_conversation),
    firstConflict: conv(row.first_conflict),
    lastObservation: conv(row.last_observation),
    sessionGeneration: (row.session_generation as string | null) ?? null,
    lastSequence: row.last_sequence === null || row.last_sequence === undefined ? null : Number(row.last_sequence),
    retiredGenerations: Array.isArray(row.retired_generations) ? row.retired_generations.filter((g): g is string => typeof g === 'string') : [],
  };
}

/**
 * Records an executor's observation for its own worker under the binding rules, atomically:
 * the worker's row is locked, and the conversation's uniqueness is enforced by the database too.
 */
export async function recordObservation(
  pool: Pool,
  who: { workerId: string; runId: string | null },
  obs: Observation,
  nowMs = Date.now(),
): Promise<BindingOutcome | Refusal> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`binding:${who.workerId}`]);
    const prevRes = await client.query('SELECT * FROM executor_bindings WHERE worker_id = $1', [who.workerId]);
    const prev = prevRes.rows[0] ? rowToBinding(prevRes.rows[0]) : null;
    const id = obs.conversation.conversationId.toLowerCase();
    const taken = await client.query<{ worker_id: string }>('SELECT worker_id FROM executor_bindings WHERE conversation_id = $1', [id]);
    const outcome = applyObservation(prev, who, obs, nowMs, taken.rows[0]?.worker_id ?? null);
    if ('code' in outcome) {
      await client.query('ROLLBACK');
      return outcome;
    }
    const s = outcome.state;
    await client.query(
      `INSERT INTO executor_bindings (worker_id, run_id, executor, executor_instance_id, conversation_id, first_conversation,
          first_conflict, last_observation, session_generation, last_sequence, retired_generations, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::jsonb, $9, $10, $11::jsonb, now())
       ON CONFLICT (worker_id) DO UPDATE SET run_id = EXCLUDED.run_id, executor = EXCLUDED.executor,
          executor_instance_id = EXCLUDED.executor_instance_id, conversation_id = EXCLUDED.conversation_id,
          first_conversation = EXCLUDED.first_conversation, first_conflict = EXCLUDED.first_conflict,
          last_observation = EXCLUDED.last_observation, session_generation = EXCLUDED.session_generation,
          last_sequence = EXCLUDED.last_sequence, retired_generations = EXCLUDED.retired_generations, updated_at = now()`,
      [
        s.workerId,
        s.runId,
        s.executor,
        s.executorInstanceId,
        s.firstConversation?.conversationId ?? null,
        json(s.firstConversation),
        json(s.firstConflict),
        json(s.lastObservation),
        s.sessionGeneration,
        s.lastSequence,
        JSON.stringify(s.retiredGenerations),
      ],
    );
    await client.query('COMMIT');
    return outcome;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    if ((err as { code?: string }).code === '23505') return refusal('conversation_taken');
    throw err;
  } finally {
    client.release();
  }
}

const json = (x: unknown) => (x === null ? null : JSON.stringify(x));

/** The workflows of the ownerships a worker holds now (a current owner that a bound conversation can annotate). */
export async function heldWorkflowIdsOfWorker(pool: Pool, workerId: string): Promise<string[]> {
  const res = await pool.query<{ workflow_id: string }>('SELECT workflow_id FROM ownerships WHERE owner_worker_id = $1 AND state = ANY($2::text[])', [
    workerId,
    HELD_STATES,
  ]);
  return res.rows.map((r) => r.workflow_id);
}
