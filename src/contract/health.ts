import { z } from 'zod';

/** GET /healthz's answer (src/api/service/health.ts checks): each probe up or down, what is wrong, the hosts seen. */

const UpDown = z.enum(['up', 'down']);
/** `version`: this build and its wire contract (src/version.ts), for clients to check compatibility. */
export const HealthVersionSchema = z.strictObject({ package: z.string(), wire: z.string().regex(/^\d+\.\d+$/) });

/**
 * What is wrong, each with a stable code (clients branch on `code`; `message` is for people).
 * Unknown codes from a newer service are "something else is wrong".
 */
export const HEALTH_PROBLEM_CODES = [
  'temporal_unreachable',
  'postgres_unreachable',
  'namespace_missing',
  'search_attributes_missing',
  'task_queue_unserved',
  'host_agent_stale',
] as const;
const message = z.string();
export const HealthProblemSchema = z.discriminatedUnion('code', [
  z.strictObject({ code: z.literal('temporal_unreachable'), message }),
  z.strictObject({ code: z.literal('postgres_unreachable'), message }),
  z.strictObject({ code: z.literal('namespace_missing'), message, namespace: z.string(), commands: z.array(z.string()) }),
  /** `names`: each attribute the namespace lacks or holds with another type; `commands`: the `temporal` commands that register them */
  z.strictObject({
    code: z.literal('search_attributes_missing'),
    message,
    namespace: z.string(),
    names: z.array(z.string()).min(1),
    commands: z.array(z.string()),
  }),
  /** no live worker polls `queue`: the ownership workflows' queue, or this host's agent queue */
  z.strictObject({ code: z.literal('task_queue_unserved'), message, queue: z.string() }),
  /** another host seen recently (a live ownership, or a beacon within the hour) whose agent stopped beating; null: it never beat here */
  z.strictObject({ code: z.literal('host_agent_stale'), message, hostId: z.string(), lastBeatAgoMs: z.number().int().nonnegative().nullable() }),
]);
export type HealthProblem = z.infer<typeof HealthProblemSchema>;
// The list and the union name the same codes; the compiler refuses one without the other.
const sameCodes: [
  Exclude<HealthProblem['code'], (typeof HEALTH_PROBLEM_CODES)[number]>,
  Exclude<(typeof HEALTH_PROBLEM_CODES)[number], HealthProblem['code']>,
] extends [never, never]
  ? true
  : never = true;
void sameCodes;

/** A host seen recently and whether its agent (its git activities' task queue) is served. */
export const HealthHostSchema = z.strictObject({ hostId: z.string(), agent: UpDown, lastBeatAgoMs: z.number().int().nonnegative().nullable() });

export const HealthReportSchema = z.strictObject({
  ok: z.boolean(),
  temporal: UpDown,
  postgres: UpDown,
  worker: UpDown,
  hostAgent: UpDown,
  version: HealthVersionSchema,
  /** empty when nothing is wrong; a host agent down elsewhere is listed but does not make `ok` false */
  problems: z.array(HealthProblemSchema),
  /** every host with a live ownership or a beacon within the last hour (at most 100, stalest first) */
  hosts: z.array(HealthHostSchema),
});
export type HealthReport = z.infer<typeof HealthReportSchema>;
