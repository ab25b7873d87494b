import { z } from 'zod';
import type { Registry } from 'prom-client';
import { checkHealth, HealthReportSchema, type HealthDeps } from '../health';
import type { App } from '../http';

/** Public routes: health, Prometheus metrics and the OpenAPI document (no bearer token). */
export function registerSystemRoutes(app: App, deps: { health: HealthDeps; registry: Registry }): void {
  app.get(
    '/healthz',
    { schema: { summary: 'Healthy when Temporal, PostgreSQL and a worker answer', tags: ['system'], response: { 200: HealthReportSchema, 503: HealthReportSchema } } },
    async (_req, reply) => {
      const report = await checkHealth(deps.health);
      return reply.code(report.ok ? 200 : 503).header('cache-control', 'no-store').send(report);
    },
  );

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) =>
    reply.header('content-type', deps.registry.contentType).send(await deps.registry.metrics()),
  );

  app.get('/openapi.json', { schema: { hide: true, response: { 200: z.record(z.string(), z.unknown()) } } }, async () => app.swagger() as unknown as Record<string, unknown>);
}
