import { Client, WithStartWorkflowOperation, type WorkflowHandle } from '@temporalio/client';
import type { SignalDefinition, UpdateDefinition } from '@temporalio/common';
import { z } from 'zod';
import {
  AcceptHandoffInputSchema,
  BindPlanInputSchema,
  CancelHandoffInputSchema,
  ClaimInputSchema,
  HandoffInputSchema,
  HeartbeatInputSchema,
  LandedInputSchema,
  ReclaimInputSchema,
  ReleaseInputSchema,
  RenameBranchInputSchema,
  SubmitInputSchema,
  WorktreeRemovedInputSchema,
  type AcceptHandoffInput,
  type BindPlanInput,
  type CancelHandoffInput,
  type HandoffInput,
  type HeartbeatInput,
  type LandedInput,
  type ReclaimInput,
  type ReleaseInput,
  type RenameBranchInput,
  type SubmitInput,
  type WorktreeRemovedInput,
} from '../domain/commands';
import type { OwnershipEvent } from '../domain/events';
import { IdString } from '../domain/identity';
import { ownershipWorkflowId, newOwnershipId } from '../domain/workflow-id';
import { assertUnderAllowedRoots, normalizePath, PathRefusal } from '../git/paths';
import {
  acceptHandoffUpdate,
  bindPlanUpdate,
  cancelHandoffUpdate,
  claimUpdate,
  conversationBoundSignal,
  eventsQuery,
  handoffUpdate,
  heartbeatSignal,
  landedSignal,
  projectionQuery,
  reclaimUpdate,
  releaseUpdate,
  renameBranchUpdate,
  submitUpdate,
  worktreeRemovedSignal,
  type OwnershipView,
} from '../workflows/messages';
import { DEFAULT_SETTINGS, type OwnershipSettings, type ownershipWorkflow } from '../workflows/ownership';
import { OwnershipError, translateError } from './errors';

export { OwnershipError } from './errors';
export type { OwnershipView } from '../workflows/messages';
export type { OwnershipRecord } from '../domain/projection';
export type { OwnershipEvent } from '../domain/events';

/** Spec §6.2 bind input (plus the authenticated caller's worker and principal, never a conversation). */
export const BindRequestSchema = ClaimInputSchema.extend({
  repoRoot: z.string().min(1).max(4096),
  worktreePath: z.string().min(1).max(4096),
  hostId: IdString.optional(),
}).strict();
export type BindRequest = z.infer<typeof BindRequestSchema>;

/** Which ownership: its workflow id, or the worktree it governs. */
export type OwnershipRef = { workflowId: string } | { repoRoot: string; worktreePath: string };

export interface OwnershipClientOptions {
  client: Client;
  taskQueue: string;
  hostId: string;
  /** When set, every path is checked against these roots before anything is started. */
  allowedRoots?: string[];
  settings?: Partial<OwnershipSettings>;
  /**
   * Bind with one update-with-start call (default). false: start (USE_EXISTING) then update, for
   * servers without multi-operation support such as the time-skipping test server.
   */
  updateWithStart?: boolean;
}

function parseOrRefuse<S extends z.ZodType>(schema: S, x: unknown): z.infer<S> {
  const parsed = schema.safeParse(x);
  if (parsed.success) return parsed.data;
  const unknownField = parsed.error.issues.some((i) => i.code === 'unrecognized_keys');
  const fields = [...new Set(parsed.error.issues.map((i) => i.path.join('.')).filter(Boolean))];
  throw new OwnershipError(unknownField ? 'unknown_field' : 'invalid_input', undefined, fields.length ? { fields } : undefined);
}

/**
 * The typed client over Temporal: what the orchestrator, the landing controller, the HTTP API and
 * the MCP tools all use. Every message is validated here first, so bad input never reaches history.
 */
export class OwnershipClient {
  private readonly settings: OwnershipSettings;
  constructor(private readonly opts: OwnershipClientOptions) {
    this.settings = { ...DEFAULT_SETTINGS, ...opts.settings };
  }

  /** One spelling per worktree: realpath-normalised, and under the allowed roots when configured. */
  async normalize(p: string): Promise<string> {
    try {
      return this.opts.allowedRoots ? await assertUnderAllowedRoots(p, this.opts.allowedRoots) : await normalizePath(p);
    } catch (err) {
      if (err instanceof PathRefusal) throw new OwnershipError(err.code);
      throw err;
    }
  }

  async workflowIdOf(ref: OwnershipRef): Promise<string> {
    if ('workflowId' in ref) return ref.workflowId;
    return ownershipWorkflowId(await this.normalize(ref.repoRoot), await this.normalize(ref.worktreePath));
  }

  handle(workflowId: string): WorkflowHandle<typeof ownershipWorkflow> {
    return this.opts.client.workflow.getHandle<typeof ownershipWorkflow>(workflowId);
  }

  /** Update-with-start: the first bind creates the ownership; a replay by the same session returns it unchanged. */
  async bind(request: BindRequest): Promise<OwnershipView> {
    const req = parseOrRefuse(BindRequestSchema, request);
    const repoRoot = await this.normalize(req.repoRoot);
    const worktreePath = await this.normalize(req.worktreePath);
    const { repoRoot: _r, worktreePath: _w, hostId: _h, ...claim } = req;
    const workflowId = ownershipWorkflowId(repoRoot, worktreePath);
    const start = new WithStartWorkflowOperation<typeof ownershipWorkflow>('ownershipWorkflow', {
      workflowId,
      taskQueue: this.opts.taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      args: [
        {
          ownershipId: newOwnershipId(),
          worktree: { repoRoot, worktreePath, branch: req.branch, hostId: req.hostId ?? this.opts.hostId },
          settings: this.settings,
          carried: null,
        },
      ],
    });
    try {
      if (this.opts.updateWithStart === false) {
        await this.opts.client.workflow.start<typeof ownershipWorkflow>('ownershipWorkflow', start.options);
        return await this.handle(workflowId).executeUpdate(claimUpdate, { args: [ClaimInputSchema.parse(claim)] });
      }
      return await this.opts.client.workflow.executeUpdateWithStart(claimUpdate, { args: [ClaimInputSchema.parse(claim)], startWorkflowOperation: start });
    } catch (err) {
      throw translateError(err);
    }
  }

  private async update<I>(ref: OwnershipRef, def: UpdateDefinition<OwnershipView, [I]>, schema: z.ZodType<I>, input: I): Promise<OwnershipView> {
    const arg = parseOrRefuse(schema, input) as I;
    try {
      return await this.handle(await this.workflowIdOf(ref)).executeUpdate(def, { args: [arg] });
    } catch (err) {
      throw translateError(err);
    }
  }

  private async signal<I>(ref: OwnershipRef, def: SignalDefinition<[I]>, schema: z.ZodType<I>, input: I): Promise<void> {
    const arg = parseOrRefuse(schema, input) as I;
    try {
      await this.handle(await this.workflowIdOf(ref)).signal(def, arg);
    } catch (err) {
      throw translateError(err);
    }
  }

  handoff(ref: OwnershipRef, input: HandoffInput) {
    return this.update(ref, handoffUpdate, HandoffInputSchema, input);
  }
  acceptHandoff(ref: OwnershipRef, input: AcceptHandoffInput) {
    return this.update(ref, acceptHandoffUpdate, AcceptHandoffInputSchema, input);
  }
  cancelHandoff(ref: OwnershipRef, input: CancelHandoffInput) {
    return this.update(ref, cancelHandoffUpdate, CancelHandoffInputSchema, input);
  }
  release(ref: OwnershipRef, input: ReleaseInput) {
    return this.update(ref, releaseUpdate, ReleaseInputSchema, input);
  }
  reclaim(ref: OwnershipRef, input: ReclaimInput) {
    return this.update(ref, reclaimUpdate, ReclaimInputSchema, input);
  }
  submit(ref: OwnershipRef, input: SubmitInput) {
    return this.update(ref, submitUpdate, SubmitInputSchema, input);
  }
  bindPlan(ref: OwnershipRef, input: BindPlanInput) {
    return this.update(ref, bindPlanUpdate, BindPlanInputSchema, input);
  }
  renameBranch(ref: OwnershipRef, input: RenameBranchInput) {
    return this.update(ref, renameBranchUpdate, RenameBranchInputSchema, input);
  }

  heartbeat(ref: OwnershipRef, input: HeartbeatInput) {
    return this.signal(ref, heartbeatSignal, HeartbeatInputSchema, input);
  }
  landed(ref: OwnershipRef, input: LandedInput) {
    return this.signal(ref, landedSignal, LandedInputSchema, input);
  }
  worktreeRemoved(ref: OwnershipRef, input: WorktreeRemovedInput) {
    return this.signal(ref, worktreeRemovedSignal, WorktreeRemovedInputSchema, input);
  }
  conversationBound(workflowId: string, workerId: string) {
    return this.signal({ workflowId }, conversationBoundSignal, z.strictObject({ workerId: IdString }), { workerId });
  }

  async projection(ref: OwnershipRef): Promise<OwnershipView | null> {
    try {
      return await this.handle(await this.workflowIdOf(ref)).query(projectionQuery);
    } catch (err) {
      throw translateError(err);
    }
  }

  async events(ref: OwnershipRef, afterSeq = 0): Promise<OwnershipEvent[]> {
    try {
      return await this.handle(await this.workflowIdOf(ref)).query(eventsQuery, afterSeq);
    } catch (err) {
      throw translateError(err);
    }
  }
}
