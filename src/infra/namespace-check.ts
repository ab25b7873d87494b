import type { temporal } from '@temporalio/proto';
import { z } from 'zod';
import { SEARCH_ATTRIBUTE_NAMES, SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';

/**
 * Whether a Temporal namespace is set up as this service needs it: the namespace exists and holds
 * every search attribute the ownership workflows upsert (src/domain/search-attributes.ts), each of
 * its type. On a namespace without them every workflow task fails (BadSearchAttributes) and every
 * bind waits out its bound: the worker refuses to start on it and /healthz names what is missing.
 * Loads no Temporal module at the top: src/api/service/health.ts, whose schemas clients import, uses it.
 */

/** The two services asked: a client's Connection and a worker's NativeConnection both have them. */
export interface NamespaceServices {
  workflowService: Pick<temporal.api.workflowservice.v1.WorkflowService, 'describeNamespace'>;
  operatorService: Pick<temporal.api.operatorservice.v1.OperatorService, 'listSearchAttributes'>;
}

const AttributeType = z.enum(['Keyword', 'KeywordList']);

/** One attribute the namespace lacks (`found: null`) or holds with another type (`found`: that type). */
export const MissingSearchAttributeSchema = z.strictObject({
  name: z.string(),
  type: AttributeType,
  found: z.string().nullable(),
});
export type MissingSearchAttribute = z.infer<typeof MissingSearchAttributeSchema>;

export const NamespaceReportSchema = z.strictObject({
  namespace: z.string(),
  exists: z.boolean(),
  /** empty when the namespace is missing too (nothing can be registered before it exists), or when not asked */
  missing: z.array(MissingSearchAttributeSchema),
});
export type NamespaceReport = z.infer<typeof NamespaceReportSchema>;

/** What the service needs: name -> type, from the one home of the names. */
export const REQUIRED_SEARCH_ATTRIBUTES: ReadonlyArray<{ name: string; type: z.infer<typeof AttributeType> }> = (
  Object.keys(SEARCH_ATTRIBUTE_NAMES) as (keyof typeof SEARCH_ATTRIBUTE_NAMES)[]
).map((field) => ({ name: SEARCH_ATTRIBUTE_NAMES[field], type: SEARCH_ATTRIBUTE_TYPES[field] }));

/** The CLI's spelling of Temporal's IndexedValueType numbers (temporal.api.enums.v1.IndexedValueType). */
const INDEXED_TYPE_NAMES: Record<number, string> = { 1: 'Text', 2: 'Keyword', 3: 'Int', 4: 'Double', 5: 'Bool', 6: 'Datetime', 7: 'KeywordList' };

/** gRPC NOT_FOUND: what Temporal answers for a namespace it does not have. */
const isNotFound = (err: unknown): boolean => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 5;

/**
 * Asks Temporal. `searchAttributes: false` (a host agent, which runs no workflows) asks only
 * whether the namespace exists. Throws what the transport throws (Temporal unreachable): that is
 * not an answer about the namespace.
 */
export async function checkNamespace(services: NamespaceServices, namespace: string, opts: { searchAttributes?: boolean } = {}): Promise<NamespaceReport> {
  try {
    await services.workflowService.describeNamespace({ namespace });
  } catch (err) {
    if (isNotFound(err)) return NamespaceReportSchema.parse({ namespace, exists: false, missing: [] });
    throw err;
  }
  if (opts.searchAttributes === false) return NamespaceReportSchema.parse({ namespace, exists: true, missing: [] });
  let registered: Record<string, number>;
  try {
    const res = await services.operatorService.listSearchAttributes({ namespace });
    // Temporal's own attributes (systemAttributes) never hold ours; only custom ones count.
    registered = z.record(z.string(), z.number()).parse(res.customAttributes ?? {});
  } catch (err) {
    // Deleted between the two calls.
    if (isNotFound(err)) return NamespaceReportSchema.parse({ namespace, exists: false, missing: [] });
    throw err;
  }
  const missing = REQUIRED_SEARCH_ATTRIBUTES.flatMap(({ name, type }) => {
    const found = registered[name];
    if (found !== undefined && INDEXED_TYPE_NAMES[found] === type) return [];
    return [{ name, type, found: found === undefined ? null : (INDEXED_TYPE_NAMES[found] ?? `type ${found}`) }];
  });
  return NamespaceReportSchema.parse({ namespace, exists: true, missing });
}

export const namespaceReady = (r: NamespaceReport): boolean => r.exists && r.missing.length === 0;

/** The `temporal` commands that set the namespace up: create it, then each attribute (a wrong type is removed first). */
export function setupCommands(r: NamespaceReport, opts: { searchAttributes?: boolean } = {}): string[] {
  const ns = `--namespace ${r.namespace}`;
  const create = (a: { name: string; type: string }) => `temporal operator search-attribute create ${ns} --name ${a.name} --type ${a.type}`;
  if (!r.exists) {
    return [`temporal operator namespace create ${ns}`, ...(opts.searchAttributes === false ? [] : REQUIRED_SEARCH_ATTRIBUTES.map(create))];
  }
  return r.missing.flatMap((a) => (a.found === null ? [create(a)] : [`temporal operator search-attribute remove ${ns} --name ${a.name} --yes`, create(a)]));
}

/** One line naming what is missing (for a log line, /healthz and the worker's refusal). */
export function describeNamespaceProblem(r: NamespaceReport): string {
  if (!r.exists) return `Temporal namespace "${r.namespace}" does not exist`;
  const names = r.missing.map((a) => (a.found === null ? `${a.name} (${a.type})` : `${a.name} (${a.type}, registered as ${a.found})`));
  return `Temporal namespace "${r.namespace}" lacks the search attribute${names.length === 1 ? '' : 's'} the ownership workflows set: ${names.join(', ')}`;
}

export class NamespaceNotReadyError extends Error {
  constructor(
    readonly report: NamespaceReport,
    opts: { searchAttributes?: boolean } = {},
  ) {
    super(
      [
        describeNamespaceProblem(report),
        `(every workflow task would fail with BadSearchAttributes and every bind would wait out its bound). Set it up with:`,
        ...setupCommands(report, opts).map((c) => `  ${c}`),
        `(add --address <host:port> for a server other than the CLI's default)`,
      ].join('\n'),
    );
    this.name = 'NamespaceNotReadyError';
  }
}

/**
 * The worker's start check, before it polls: a namespace that is missing, or (when the process runs
 * workflows) lacks a search attribute, is refused with the commands that fix it.
 */
export async function assertNamespaceReady(
  services: NamespaceServices,
  namespace: string,
  opts: { searchAttributes?: boolean } = {},
): Promise<NamespaceReport> {
  const report = await checkNamespace(services, namespace, opts);
  if (!namespaceReady(report)) throw new NamespaceNotReadyError(report, opts);
  return report;
}

/**
 * The check behind /healthz, asked again only after a while: search attributes change rarely, a
 * health probe comes every few seconds. A ready namespace is believed for `readyTtlMs`, one that is
 * not for `notReadyTtlMs` (an operator who just fixed it sees so soon). Concurrent callers share one
 * request. `null`: Temporal did not answer (never cached; /healthz says Temporal is down by itself).
 */
export function cachedNamespaceCheck(
  services: NamespaceServices,
  namespace: string,
  opts: { readyTtlMs?: number; notReadyTtlMs?: number; timeoutMs?: number } = {},
): () => Promise<NamespaceReport | null> {
  const readyTtl = opts.readyTtlMs ?? 30_000;
  const notReadyTtl = opts.notReadyTtlMs ?? 5_000;
  let cached: { report: NamespaceReport; until: number } | null = null;
  let inFlight: Promise<NamespaceReport | null> | null = null;
  return () => {
    if (cached && Date.now() < cached.until) return Promise.resolve(cached.report);
    inFlight ??= withTimeout(checkNamespace(services, namespace), opts.timeoutMs ?? 3_000)
      .then(
        (report) => {
          cached = { report, until: Date.now() + (namespaceReady(report) ? readyTtl : notReadyTtl) };
          return report;
        },
        () => null,
      )
      .finally(() => (inFlight = null));
    return inFlight;
  };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, rej) => {
    timer = setTimeout(() => rej(new Error('timeout')), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
