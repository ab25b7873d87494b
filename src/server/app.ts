import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import { createHostPresence } from '../api/service/host-presence';
import type { Client } from '@temporalio/client';
import { hasZodFastifySchemaValidationErrors, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { serializerCompiler } from '../api/serializer';
import type { Logger } from 'pino';
import type { Pool } from '../store/db';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { authorize, type Operation } from '../auth/policy';
import type { Authenticator } from '../auth/principals';
import type { OwnershipClient } from '../client';
import { OwnershipError } from '../contract/refusal';
import type { Config } from '../config';
import { hostTaskQueue } from '../domain/queues';
import { createLogger } from '../infra/logger';
import { registerMcpRoutes } from '../mcp/http';
import { toFailure, type ApiFailure } from '../api/errors';
import { refusalFromIssues } from '../contract/refusal';
import type { App } from '../api/http';
import { createMetrics } from '../api/metrics';
import { registerOpenApi } from '../api/openapi';
import { registerOperationRoutes } from '../api/routes/operations';
import { registerExecutorRoutes } from '../api/routes/executor';
import { registerLandingRoutes } from '../api/routes/landings';
import { registerLookupRoutes } from '../api/routes/lookups';
import { registerOwnershipRoutes } from '../api/routes/ownerships';
import { registerReconciliationRoutes } from '../api/routes/reconciliations';
import { registerSystemRoutes } from '../api/routes/system';
import { registerCodecRoutes } from '../api/routes/codec';
import { registerObserverRoutes } from '../api/routes/observers';
import { registerRemovalRoutes } from '../api/routes/removal';
import { EncryptionCodec, readPayloadKey } from '../infra/payload-codec';
import { loadKeyring, type MessageKeyring } from '../keys/message-seal';
import { createService } from '../api/service';

export interface ApiDeps {
  config: Config;
  temporal: Client;
  client: OwnershipClient;
  pool: Pool;
  authenticator: Authenticator;
  registry?: Registry;
  logger?: Logger;
  /** bound on each Temporal call before answering 503 (default 30 s) */
  temporalTimeoutMs?: number;
  /** how long a landing waits for its durable receipt (default 10 s) */
  landingWaitMs?: number;
  /**
   * The service key the Temporal client's messages are sealed with (connectBackends loads it once);
   * tenure secrets are derived from it. Default: loaded from the configuration when first needed.
   */
  keyring?: MessageKeyring;
}

/** Paths behind Bearer authentication: the API and the MCP endpoint; health, metrics and docs are public. */
const isProtected = (url: string) => url.startsWith('/v1/') || url === '/mcp' || url.startsWith('/mcp?') || url.startsWith('/codec/');

/**
 * The HTTP API (and the MCP endpoint). Built around an existing Temporal client, OwnershipClient
 * and pool so tests run it on the real stack; `startApi` (runtime.ts) wires it from config.
 */
export async function buildServer(deps: ApiDeps): Promise<App> {
  const app = Fastify({
    logger: false,
    bodyLimit: 64 * 1024,
    return503OnClosing: true,
    // A request Node's parser cannot read (control bytes in a header, headers too large) still gets {code, message}.
    clientErrorHandler: refuseUnreadableRequest,
    // So does a URL the router cannot read (bad percent-escapes, an over-long parameter); it is never echoed.
    frameworkErrors: (err, req, reply) => {
      void send(req, reply, { status: err.statusCode === 414 ? 414 : 400, body: { code: 'invalid_input', message: 'the request URL could not be read' } });
    },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const registry = deps.registry ?? new Registry();
  if (!deps.registry) collectDefaultMetrics({ register: registry });
  const metrics = createMetrics(registry);
  const log = (deps.logger ?? createLogger(deps.config.logLevel)).child({ component: 'api' });

  app.decorateRequest('principal', null);
  app.decorateRequest('odCode', null);

  // Hooks in callback style: an async hook costs each request a promise and a turn of the microtask queue.
  app.addHook('onRequest', (req, reply, done) => {
    // By the matched route as well as the raw URL: no spelling of a path reaches a handler unauthenticated.
    if (!isProtected(req.url) && !isProtected(req.routeOptions.url ?? '')) return done();
    req.principal = deps.authenticator.authenticate(req.headers.authorization);
    if (!req.principal) {
      void reply.header('www-authenticate', 'Bearer');
      return done(new OwnershipError('unauthenticated'));
    }
    // Authorization by operation comes before validation: a caller who may not call learns nothing about its input.
    const op: Operation | undefined = req.routeOptions.config.operation;
    const denied = op ? authorize(req.principal, op) : null;
    done(denied ? new OwnershipError(denied.code) : undefined);
  });

  app.setErrorHandler((err: FastifyError, req, reply) => {
    const failure = failureOf(err);
    if (failure.status >= 500 && failure.body.code === 'internal') {
      // The stack goes to the log, never to the caller; the body and headers go nowhere.
      log.error({ method: req.method, route: req.routeOptions.url, err: { name: err.name, message: err.message, stack: err.stack } }, 'request failed');
    }
    return send(req, reply, failure);
  });

  app.setNotFoundHandler((req, reply) => send(req, reply, { status: 404, body: { code: 'not_found', message: 'no such route' } }));

  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const code = req.odCode ?? (reply.statusCode < 400 ? 'ok' : String(reply.statusCode));
    const seconds = reply.elapsedTime / 1000;
    metrics.requests.inc({ method: req.method, route, status: String(reply.statusCode), code });
    metrics.duration.observe({ method: req.method, route }, seconds);
    // Every request, health polls included, at debug: a running service is quiet at the default
    // level; a 5xx is worth a line there.
    const loud = reply.statusCode >= 500;
    if (loud || log.isLevelEnabled('debug')) {
      const principal = req.principal ? `${req.principal.kind}:${req.principal.id}` : null;
      const line = { method: req.method, route, status: reply.statusCode, code, ms: Math.round(reply.elapsedTime), principal };
      if (loud) log.warn(line, 'request');
      else log.debug(line, 'request');
    }
    done();
  });

  await registerOpenApi(app);
  registerSystemRoutes(app, {
    registry,
    log,
    health: {
      temporal: deps.temporal,
      pool: deps.pool,
      namespace: deps.config.temporalNamespace,
      taskQueue: deps.config.taskQueue,
      hostTaskQueue: hostTaskQueue(deps.config.hostId),
      hostId: deps.config.hostId,
    },
  });
  let keyring = deps.keyring;
  const serviceDeps = {
    client: deps.client,
    temporal: deps.temporal,
    pool: deps.pool,
    keyring: () => (keyring ??= loadKeyring(deps.config)),
    hostPresence: createHostPresence({ pool: deps.pool, temporal: deps.temporal, namespace: deps.config.temporalNamespace }),
    ...(deps.temporalTimeoutMs !== undefined ? { temporalTimeoutMs: deps.temporalTimeoutMs } : {}),
    ...(deps.landingWaitMs !== undefined ? { landingWaitMs: deps.landingWaitMs } : {}),
  };
  const svc = createService(serviceDeps);
  registerOperationRoutes(app, svc);
  registerOwnershipRoutes(app, svc);
  registerLandingRoutes(app, svc, { pool: deps.pool, normalize: (p) => deps.client.normalize(p) });
  registerExecutorRoutes(app, svc);
  registerLookupRoutes(app, svc);
  registerObserverRoutes(app, svc);
  registerRemovalRoutes(app, svc);
  registerReconciliationRoutes(app, serviceDeps);
  registerMcpRoutes(app, svc, metrics);
  if (deps.config.payloadKeyFile) registerCodecRoutes(app, new EncryptionCodec(readPayloadKey(deps.config.payloadKeyFile)));
  return app;
}

/** Node's HTTP parser refused the request before Fastify saw it: answer in our error shape and close. */
function refuseUnreadableRequest(err: Error & { code?: string }, socket: import('node:net').Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify({ code: 'invalid_input', message: 'the request could not be read' });
  const reason = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncache-control: no-store\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  socket.destroySoon();
}

function send(req: FastifyRequest, reply: FastifyReply, failure: ApiFailure) {
  req.odCode = failure.body.code;
  if (failure.retryAfter !== undefined) void reply.header('retry-after', String(failure.retryAfter));
  return reply.code(failure.status).header('cache-control', 'no-store').send(failure.body);
}

/** Fastify's own failures (validation, body parsing, size, media type) as refusals; the rest by the shared mapping. */
function failureOf(err: FastifyError): ApiFailure {
  if (hasZodFastifySchemaValidationErrors(err)) {
    const issues = err.validation.map((v) => ({
      code: v.keyword,
      // Array indexes back to numbers, so a refusal names `state.0` rather than an unnamed key.
      path: v.instancePath
        .split('/')
        .filter(Boolean)
        .map((p) => (/^\d+$/.test(p) ? Number(p) : p)),
      keys: Array.isArray((v.params as { keys?: unknown }).keys) ? (v.params as { keys: string[] }).keys : undefined,
    }));
    return toFailure(refusalFromIssues(issues));
  }
  if (err instanceof OwnershipError) return toFailure(err);
  const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
  if (typeof err.code === 'string' && err.code.startsWith('FST_') && status >= 400 && status < 500) {
    // Malformed JSON, an empty JSON body, a body too large, an unsupported media type: bad input.
    return { status, body: { code: 'invalid_input', message: 'the request body could not be read as JSON of the accepted size' } };
  }
  return toFailure(err);
}
