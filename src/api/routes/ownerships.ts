import type { FastifyInstance, FastifyReply } from 'fastify';
import type { z } from 'zod';
import type { Operation } from '../../auth/policy';
import { OwnershipError } from '../../client/errors';
import type { Principal } from '../../domain/identity';
import { ERROR_RESPONSES, MessageHeadersSchema, messageOf, principalOf, SECURITY, type App } from '../http';
import type { MessageContext } from '../service/messages';
import {
  AcceptedSchema,
  ClaimResponseSchema,
  EndHoldBodySchema,
  GrantHoldBodySchema,
  GrantHoldResponseSchema,
  HoldHeartbeatBodySchema,
  HoldParamsSchema,
  OverrideBodySchema,
  OverrideResponseSchema,
  TenureBodySchema,
  TenureSchema,
  RemovalResponseSchema,
  AcceptHandoffBodySchema,
  CancelHandoffBodySchema,
  HandoffBodySchema,
  HeartbeatBodySchema,
  LandedBodySchema,
  LandingResponseSchema,
  namesConversation,
  OwnershipParamsSchema,
  OwnershipViewSchema,
  PlanBodySchema,
  ReclaimBodySchema,
  ReleaseBodySchema,
  RenameBranchBodySchema,
  SubmitBodySchema,
  WorktreeRemovedBodySchema,
} from '../../contract/http';
import type { OwnershipService } from '../service';

interface WriteRoute<B extends z.ZodType, R extends z.ZodType> {
  path: string;
  op: Operation;
  summary: string;
  body: B;
  response: R;
  /** 200 for updates (the caller gets the new view), 202 for signals */
  status: 200 | 202;
  /** accept and reclaim name a new owner: a conversation in their body is refused by name */
  newOwner?: boolean;
  /** a landing answers 202 instead when its receipt is not durable yet */
  accepted?: (out: z.output<R>) => boolean;
  run: (p: Principal, id: string, body: z.output<B>, ctx: MessageContext) => Promise<z.output<R>>;
}

function write<B extends z.ZodType, R extends z.ZodType>(app: App, r: WriteRoute<B, R>): void {
  // Generic over the schemas, which the type provider cannot resolve: validation still runs on them,
  // and WriteRoute ties run()'s types to them.
  (app as unknown as FastifyInstance).route({
    method: 'POST',
    url: `/v1/ownerships/:id/${r.path}`,
    config: { operation: r.op },
    preValidation: async (req) => {
      if (r.newOwner && namesConversation(req.body)) throw new OwnershipError('conversation_forbidden');
    },
    schema: {
      summary: r.summary,
      tags: ['ownerships'],
      security: SECURITY,
      params: OwnershipParamsSchema,
      headers: MessageHeadersSchema,
      body: r.body,
      response: { [r.status]: r.response, ...(r.accepted ? { 202: r.response } : {}), ...ERROR_RESPONSES },
    },
    handler: async (req, reply) => {
      const params = req.params as z.output<typeof OwnershipParamsSchema>;
      const principal = principalOf(req);
      const out = await r.run(principal, params.id, req.body as z.output<B>, messageOf(req, reply, principal));
      return reply.code(r.accepted?.(out) ? 202 : r.status).send(out);
    },
  });
}

/** A message about one hold of an ownership: POST /v1/ownerships/{id}/holds/{holdId}/{path}. */
function holdRoute<B extends z.ZodType, R extends z.ZodType>(
  app: App,
  path: string,
  op: Operation,
  summary: string,
  body: B,
  response: R,
  status: 200 | 202,
  run: (p: Principal, id: string, holdId: string, body: z.output<B>, ctx: MessageContext) => Promise<z.output<R>>,
): void {
  (app as unknown as FastifyInstance).route({
    method: 'POST',
    url: `/v1/ownerships/:id/holds/:holdId/${path}`,
    config: { operation: op },
    schema: {
      summary,
      tags: ['ownerships'],
      security: SECURITY,
      params: HoldParamsSchema,
      headers: MessageHeadersSchema,
      body,
      response: { [status]: response, ...ERROR_RESPONSES },
    },
    handler: async (req, reply) => {
      const params = req.params as z.output<typeof HoldParamsSchema>;
      const principal = principalOf(req);
      const out = await run(principal, params.id, params.holdId, req.body as z.output<B>, messageOf(req, reply, principal));
      return (reply as unknown as FastifyReply).code(status).send(out);
    },
  });
}

/** Per-ownership messages, addressed by ownershipId (its workflow found in the `ownerships` table). */
export function registerOwnershipRoutes(app: App, svc: OwnershipService): void {
  const view = OwnershipViewSchema;
  write(app, {
    path: 'heartbeat',
    op: 'heartbeat',
    summary: 'Heartbeat of the owner session (signal; coalesced)',
    body: HeartbeatBodySchema,
    response: AcceptedSchema,
    status: 202,
    run: svc.heartbeat,
  });
  write(app, {
    path: 'handoff',
    op: 'handoff',
    summary: 'Start a two-phase handoff to another session',
    body: HandoffBodySchema,
    response: view,
    status: 200,
    run: svc.handoff,
  });
  write(app, {
    path: 'handoff/accept',
    op: 'acceptHandoff',
    summary: 'Accept a pending handoff as the named successor',
    body: AcceptHandoffBodySchema,
    response: ClaimResponseSchema,
    status: 200,
    newOwner: true,
    run: svc.acceptHandoff,
  });
  write(app, {
    path: 'handoff/cancel',
    op: 'cancelHandoff',
    summary: 'Cancel a pending handoff',
    body: CancelHandoffBodySchema,
    response: view,
    status: 200,
    run: svc.cancelHandoff,
  });
  write(app, { path: 'release', op: 'release', summary: 'Release the worktree', body: ReleaseBodySchema, response: view, status: 200, run: svc.release });
  write(app, {
    path: 'reclaim',
    op: 'reclaim',
    summary: 'Reclaim from a dead owner (WIP preserved); force is admin-only with a reason',
    body: ReclaimBodySchema,
    response: ClaimResponseSchema,
    status: 200,
    newOwner: true,
    run: svc.reclaim,
  });
  write(app, { path: 'submit', op: 'submit', summary: 'Submit the work for landing', body: SubmitBodySchema, response: view, status: 200, run: svc.submit });
  write(app, { path: 'plan', op: 'bindPlan', summary: 'Bind lane, plan or request', body: PlanBodySchema, response: view, status: 200, run: svc.bindPlan });
  write(app, {
    path: 'rename-branch',
    op: 'renameBranch',
    summary: 'Record a branch rename: the ownership and its history stay',
    body: RenameBranchBodySchema,
    response: view,
    status: 200,
    run: svc.renameBranch,
  });
  write(app, {
    path: 'landed',
    op: 'landed',
    summary: 'Landing receipt for this ownership (200 when durable, 202 when only signalled)',
    body: LandedBodySchema,
    response: LandingResponseSchema,
    status: 200,
    accepted: (out) => out.status === 'accepted',
    run: svc.landed,
  });
  write(app, {
    path: 'worktree-removed',
    op: 'worktreeRemoved',
    summary: 'The worktree was removed (signal; ends the lifecycle once landed or released)',
    body: WorktreeRemovedBodySchema,
    // 202 as before, whichever the body says: a client that checks for 202 keeps working (wire 1.x).
    response: RemovalResponseSchema,
    status: 202,
    run: svc.worktreeRemoved,
  });

  // Child holds (docs/ownership-record.md#child-holds).
  write(app, {
    path: 'holds',
    op: 'grantHold',
    summary: 'Grant a child session a hold under the owner’s tenure (answers the hold id and the child’s tenure proof)',
    body: GrantHoldBodySchema,
    response: GrantHoldResponseSchema,
    status: 200,
    run: svc.grantHold,
  });
  holdRoute(
    app,
    'heartbeat',
    'holdHeartbeat',
    'Heartbeat of a child session: renews its hold’s own lease (signal)',
    HoldHeartbeatBodySchema,
    AcceptedSchema,
    202,
    (p, id, holdId, b) => svc.holdHeartbeat(p, id, holdId, b),
  );
  holdRoute(
    app,
    'end',
    'endHold',
    'End a hold: the child, the parent, or an admin with force and a reason',
    EndHoldBodySchema,
    view,
    200,
    (p, id, holdId, b, c) => svc.endHold(p, id, holdId, b, c),
  );

  // Not messages to the ownership: nothing is sent to its workflow, so no message id either.
  app.post(
    '/v1/ownerships/:id/tenure',
    {
      config: { operation: 'tenure' },
      schema: {
        summary: 'The tenure proof again (OVERDECK_TENURE_SECRET), for the session that holds the ownership now',
        description:
          'The same secret bind, accept-handoff or reclaim answered for this tenure: derived, never stored. Another session is `not_owner`; another worker’s executor `worker_mismatch`.',
        tags: ['ownerships'],
        security: SECURITY,
        params: OwnershipParamsSchema,
        body: TenureBodySchema,
        response: { 200: TenureSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => svc.tenure(principalOf(req), req.params.id, req.body),
  );
  app.post(
    '/v1/ownerships/:id/override',
    {
      config: { operation: 'override' },
      schema: {
        summary: 'Record that a person steps into the owned worktree, and hand them the current owner’s tenure proof (admin)',
        description:
          'The override (who, why, when, which epoch) is recorded before the answer and shown in history. An ownership nobody holds is `invalid_state`: its worktree is open.',
        tags: ['ownerships'],
        security: SECURITY,
        params: OwnershipParamsSchema,
        body: OverrideBodySchema,
        response: { 200: OverrideResponseSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => svc.override(principalOf(req), req.params.id, req.body),
  );

  app.get(
    '/v1/ownerships/:id',
    {
      config: { operation: 'get' },
      schema: {
        summary: 'The ownership: the live view with liveness while it runs, the durable record after',
        tags: ['ownerships'],
        security: SECURITY,
        params: OwnershipParamsSchema,
        response: { 200: OwnershipViewSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => svc.getById(principalOf(req), req.params.id),
  );
}
