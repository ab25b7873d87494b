import { z } from 'zod';
import type { Registry } from 'prom-client';
import { checkHealth, HealthReportSchema, type HealthDeps } from '../service/health';
import { cachedNamespaceCheck, describeNamespaceProblem, namespaceReady, setupCommands } from '../../infra/namespace-check';
import type { App } from '../http';

/** Where the start check's warning goes (the API's pino logger). */
interface WarnLog {
  warn(obj: object, msg: string): void;
}

/** Public routes: health, Prometheus metrics and the OpenAPI document (no bearer token). */
export function registerSystemRoutes(app: App, deps: { health: HealthDeps; registry: Registry; log?: WarnLog }): void {
  // Search attributes change rarely and a monitor probes every few seconds: asked at most every 30 s (5 s while wrong).
  const namespaceCheck = deps.health.namespaceCheck ?? cachedNamespaceCheck(deps.health.temporal.connection, deps.health.namespace);
  const health: HealthDeps = { ...deps.health, namespaceCheck };

  // At start, one line for the operator of a namespace set up wrong: the worker refuses it, binds would wait out their bound.
  // Not waited for: the API listens whatever Temporal answers, and an unanswered check says nothing.
  app.addHook('onReady', async () => {
    void namespaceCheck().then((report) => {
      if (report && !namespaceReady(report)) {
        deps.log?.warn(
          { namespace: report.namespace, exists: report.exists, missing: report.missing.map((a) => a.name), fix: setupCommands(report) },
          `${describeNamespaceProblem(report)}: ${setupCommands(report).join('; ')}`,
        );
      }
    });
  });

  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Healthy when Temporal, PostgreSQL and a worker answer and the namespace holds the search attributes; `problems` names what is wrong',
        tags: ['system'],
        response: { 200: HealthReportSchema, 503: HealthReportSchema },
      },
    },
    async (_req, reply) => {
      const report = await checkHealth(health);
      return reply
        .code(report.ok ? 200 : 503)
        .header('cache-control', 'no-store')
        .send(report);
    },
  );

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) =>
    reply.header('content-type', deps.registry.contentType).send(await deps.registry.metrics()),
  );

  app.get(
    '/openapi.json',
    { schema: { hide: true, response: { 200: z.record(z.string(), z.unknown()) } } },
    async () => app.swagger() as unknown as Record<string, unknown>,
  );
}
