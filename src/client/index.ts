import { randomUUID } from 'node:crypto';
import { Client, WithStartWorkflowOperation, type WorkflowHandle } from '@temporalio/client';
import { WorkflowNotFoundError, type SignalDefinition, type UpdateDefinition } from '@temporalio/common';
import { z } from 'zod';
import {
  AcceptHandoffInputSchema,
  BindingSeenSchema,
  BindPlanInputSchema,
  CancelHandoffInputSchema,
  ClaimInputSchema,
  ConversationBoundInputSchema,
  HandoffInputSchema,
  HeartbeatInputSchema,
  LandedInputSchema,
  ReclaimInputSchema,
  ReleaseInputSchema,
  RenameBranchInputSchema,
  SubmitInputSchema,
  WorktreeRemovedInputSchema,
  ResyncInputSchema,
  type AcceptHandoffInput,
  type BindingSeen,
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
import { checkNamedBranch } from '../domain/branch';
import { BranchName, IdString, PathString } from '../domain/identity';
import { ownerSummary, type OwnershipRecord } from '../domain/projection';
import { sealRequest, startSealRequest } from '../domain/seal';
import { claimedProcessProblem } from '../domain/liveness';
import type { Conversation, ProcessIdentity } from '../domain/identity';
import { ownershipWorkflowId, newOwnershipId } from '../ids/workflow-id';
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
  resyncSignal,
  submitUpdate,
  worktreeRemovedSignal,
  LIVE_MEMO,
  type LiveState,
  type OwnershipView,
} from '../workflows/messages';
import { DEFAULT_SETTINGS, type OwnershipSettings } from '../domain/settings';
import type { ownershipWorkflow } from '../workflows/ownership';
import { CONTINUING_AS_NEW, IN_FLIGHT, OwnershipError, translateError, unadmittedUpdateWithStart, UNPROCESSED } from './errors';
import { PerOwnershipQueue } from './inflight';
import type { LocalWorktree, WorktreeResolver } from './worktree-resolver';

/**
 * The message an update is: every attempt of one request carries the same id (Temporal's update id),
 * so a retry after a seam or a lost task is the same message, answered from the event bearing it.
 * The API sets it to its idempotency key; without one, each call is a message of its own.
 */
export interface MessageOptions {
  messageId?: string;
  /**
   * How long an owner change's answer waits for the worktree's hooks to enforce it (default the
   * settings' projectionWaitMs). The API passes 0 when the host's agent is away: nothing would
   * write the projection meanwhile, so waiting would only hold the caller.
   */
  enforcementWaitMs?: number;
}

/**
 * An owner change's options (bind, accept, reclaim): `conversationOf` reads the executor binding of
 * the new owner's worker (the API passes src/store/bindings.ts readExecutorConversation), and the
 * message carries what it said (`binding`, src/domain/commands.ts), so the workflow does not read
 * it itself. Without it the workflow reads the binding.
 */
export interface NewOwnerOptions extends MessageOptions {
  conversationOf?: (workerId: string) => Promise<Conversation | null>;
}

/** The new owner's binding as the sender read it; never what a caller put in the input. */
async function withBinding<I extends { worker: { workerId: string }; binding?: BindingSeen }>(input: I, opts: NewOwnerOptions): Promise<I> {
  const { binding: _ignored, ...rest } = input;
  if (!opts.conversationOf) return rest as I;
  const binding = { conversation: await opts.conversationOf(input.worker.workerId) };
  // A stored conversation the message's check would not take (a URL kept in another spelling): the workflow reads it itself.
  return (BindingSeenSchema.safeParse(binding).success ? { ...rest, binding } : rest) as I;
}
/**
 * An update as service processes send it: its id (the message id, or a fresh one per attempt) and
 * its argument sealed for that id (src/domain/seal.ts; the data converter adds the HMAC). A worker
 * refuses an update whose seal does not prove this.
 */
function sealedUpdate<I>(opts: MessageOptions, arg: I, nowMs: number): { args: [I]; updateId: string } {
  const updateId = opts.messageId ?? `upd_${randomUUID()}`;
  return { args: [{ ...arg, seal: sealRequest('update', updateId, nowMs) }], updateId };
}

/** A signal as service processes send it: sealed for its workflow, with an id of its own (a copy of it acts at most once) and an expiry. */
const sealedSignalArg = <I>(arg: I, messageId: string | undefined, nowMs: number): I => ({
  ...arg,
  seal: sealRequest('signal', messageId ?? `sig_${randomUUID()}`, nowMs),
});

export { OwnershipError } from './errors';
export type { LivenessState, OwnershipView, ProjectionState, ProjectionSync } from '../workflows/messages';
export type { OwnershipRecord } from '../domain/projection';
export type { OwnershipEvent } from '../domain/events';
export type { LocalWorktree, WorktreeResolver } from './worktree-resolver';

/**
 * Bind input (docs/operations.md#bind) (plus the authenticated caller's worker and principal, never a conversation).
 * repoRoot is optional and never trusted: git on the worktree's host says what it is, and a
 * different one is refused (`repo_root_mismatch`).
 */
export const BindRequestSchema = ClaimInputSchema.omit({ binding: true })
  .extend({
    /** Taken from git when omitted; named, it must be git's (branch_mismatch). Required for a worktree on another host. */
    branch: BranchName.optional(),
    repoRoot: PathString.optional(),
    worktreePath: PathString,
    hostId: IdString.optional(),
  })
  .strict();
export type BindRequest = z.infer<typeof BindRequestSchema>;

/** Where a bind looks for a live owner first: the worktree as identified, and the ownership its own projection names (local worktrees). */
export interface HeldOwnershipQuery {
  hostId: string;
  worktreePath: string;
  projectedOwnershipId: string | null;
}

/**
 * A bind's options: its message id, and PostgreSQL's word on who holds the worktree (the API passes
 * src/store/lookups.ts heldOwnershipOf): a live ownership under an earlier workflow id formula gets
 * the claim; one recorded at another path (the worktree was moved) refuses it. Without it, the
 * database's one-live-owner index is what refuses a second live owner.
 */
export interface BindOptions extends NewOwnerOptions {
  heldOwnership?: (where: HeldOwnershipQuery) => Promise<{ workflowId: string; record: OwnershipRecord } | null>;
  /**
   * Whether another host's agent is known to be away (the API's host presence): a first claim
   * there needs that agent to inspect the worktree, so it is refused at once (`host_unavailable`,
   * with these details) instead of after the workflow's host bound. Asked after the request's
   * own checks: bad input is refused as such first.
   */
  hostAway?: (hostId: string) => Promise<Record<string, unknown> | null>;
}

/**
 * Which ownership: its workflow id, or the worktree it governs (on `hostId`, default this client's
 * host). `ownershipId`, when known, is carried in the message so that a message meant for one
 * lifecycle never acts on the next one of the same worktree. `repoRoot` plays no part in addressing.
 */
export type OwnershipRef = ({ workflowId: string } | { worktreePath: string; hostId?: string; repoRoot?: string }) & { ownershipId?: string };

export interface OwnershipClientOptions {
  client: Client;
  taskQueue: string;
  hostId: string;
  /**
   * How this host answers for its worktrees and processes (src/adapters/worktree-resolver.ts
   * gitWorktreeResolver on the worktrees' host): the client runs no git itself.
   */
  resolver: WorktreeResolver;
  /** When set, every path is checked against these roots before anything is started. */
  allowedRoots?: string[];
  settings?: Partial<OwnershipSettings>;
  /**
   * Bind with one update-with-start call (default). false: start (USE_EXISTING) then update, for
   * servers without multi-operation support such as the time-skipping test server.
   */
  updateWithStart?: boolean;
  /** The clock a message's seal expires by (default Date.now): a time-skipping test server's clock runs ahead of it. */
  now?: () => number;
}

function parseOrRefuse<S extends z.ZodType>(schema: S, x: unknown): z.infer<S> {
  const parsed = schema.safeParse(x);
  if (parsed.success) return parsed.data;
  const unknownField = parsed.error.issues.some((i) => i.code === 'unrecognized_keys');
  const fields = [...new Set(parsed.error.issues.map((i) => i.path.join('.')).filter(Boolean))];
  throw new OwnershipError(unknownField ? 'unknown_field' : 'invalid_input', undefined, fields.length ? { fields } : undefined);
}

/**
 * A run that is continuing as new refuses new updates for a moment (its validators answer
 * `unavailable`; nothing entered history, so trying again is a fresh attempt). The client waits
 * it out, briefly, so callers do not see the seam between runs; past the bound they get the 503.
 */
const CONTINUE_AS_NEW_WAIT_MS = 5_000;
/**
 * A message with an id (MessageOptions) is the same message however often it is sent: the log
 * answers a retry from the event bearing it. So it waits out a longer seam, such as a worker that
 * died with the ownership's task (its updates are aborted when the task times out), within the
 * API's own deadline, instead of answering 503 at the first abort.
 */
const SAME_MESSAGE_WAIT_MS = 20_000;
async function throughContinueAsNew<T>(call: () => Promise<T>, waitMs = CONTINUE_AS_NEW_WAIT_MS): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (let delay = 10; ; delay = Math.min(delay * 2, 250)) {
    try {
      return await call();
    } catch (err) {
      const seam =
        err instanceof OwnershipError &&
        err.code === 'unavailable' &&
        (err.message === CONTINUING_AS_NEW || err.message === UNPROCESSED || err.message === IN_FLIGHT);
      if (!seam || Date.now() + delay > deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/** The ref's ownershipId goes into the message unless the message names one itself. */
function addressed<I>(ref: OwnershipRef, input: I): I {
  if (ref.ownershipId === undefined || typeof input !== 'object' || input === null || 'ownershipId' in input) return input;
  return { ...input, ownershipId: ref.ownershipId };
}

/**
 * The typed client over Temporal: what the orchestrator, the landing controller, the HTTP API and
 * the MCP tools all use. Every message is validated here first, so bad input never reaches history.
 */
/**
 * What the Temporal UI shows for an ownership before anyone opens it (its user metadata, fixed at
 * the workflow's start): one summary line naming the worktree, its branch and repository, and the
 * details of the worktree's identity. Only what the workflow's search attributes already hold
 * (plus the host id): no conversation, no title, no lane or plan, nothing a caller wrote freely.
 * The branch is the one at the start; a rename is in the events and the current details.
 */
export function ownershipStartMetadata(w: { ownershipId: string; repoRoot: string; worktreePath: string; branch: string; hostId: string }): {
  staticSummary: string;
  staticDetails: string;
} {
  const name = (p: string) => p.split('/').filter(Boolean).pop() ?? p;
  return {
    staticSummary: `worktree ${name(w.worktreePath)} · branch ${w.branch} · repo ${name(w.repoRoot)}`,
    staticDetails: [
      `Worktree: ${w.worktreePath}`,
      `Branch at start: ${w.branch}`,
      `Repository: ${w.repoRoot}`,
      `Host: ${w.hostId}`,
      `Ownership: ${w.ownershipId}`,
    ].join('\n'),
  };
}

export class OwnershipClient {
  private readonly settings: OwnershipSettings;
  private readonly now: () => number;
  constructor(private readonly opts: OwnershipClientOptions) {
    this.settings = { ...DEFAULT_SETTINGS, ...opts.settings };
    this.now = opts.now ?? Date.now;
  }

  /** One spelling per worktree: realpath-normalised, and under the allowed roots when configured. */
  async normalize(p: string): Promise<string> {
    return this.opts.resolver.canonicalPath(p, this.opts.allowedRoots);
  }

  async workflowIdOf(ref: OwnershipRef): Promise<string> {
    if ('workflowId' in ref) return ref.workflowId;
    return ownershipWorkflowId(ref.hostId ?? this.opts.hostId, await this.normalize(ref.worktreePath));
  }

  /**
   * The worktree as git on this host sees it: its canonical path and repository root. A caller's
   * repoRoot that names anything else is refused rather than used.
   */
  private async identify(
    worktreePath: string,
    claimedRoot: string | undefined,
  ): Promise<{ worktreePath: string; repoRoot: string; branch: string | null; local: LocalWorktree }> {
    // The path first (nothing outside the roots is even looked at), then every git dir it leads to.
    const path = await this.normalize(worktreePath);
    const id = await this.opts.resolver.identify(path, this.opts.allowedRoots);
    const repoRoot = await this.normalize(id.repoRoot);
    if (claimedRoot !== undefined && (await this.normalize(claimedRoot)) !== repoRoot) throw new OwnershipError('repo_root_mismatch');
    return { worktreePath: await this.normalize(id.worktreePath), repoRoot, branch: id.branch, local: id };
  }

  /**
   * The branch git has checked out in a worktree of this client's host (null: HEAD detached), read
   * as bind reads it; undefined for a worktree on another host, whose git only its agent can ask.
   */
  async checkedOutBranch(where: { hostId: string; worktreePath: string }): Promise<string | null | undefined> {
    if (where.hostId !== this.opts.hostId) return undefined;
    return (await this.identify(where.worktreePath, undefined)).branch;
  }

  /**
   * Updates to one ownership: at most 8 in flight from this process (under the server's 10), up to
   * 256 waiting, 20 s each (within the API's 30 s deadline: a worker's death holds the ones in flight
   * for its sticky timeout and a replay).
   */
  private readonly queue = new PerOwnershipQueue(8, 256, 20_000);

  /**
   * A new owner's process identity on this host must be its session's own (domain/liveness.ts
   * claimedProcessProblem): the local authority would judge the owner by it. Another host's
   * process is that host's to judge (unknown here). Nothing is checked where /proc is missing.
   */
  private checkOwnProcess(input: { executionSessionId: string; process?: ProcessIdentity | null }): void {
    const p = input.process;
    if (!p || p.hostId !== this.opts.hostId) return;
    const seen = this.opts.resolver.seenProcess(p.pid);
    if (seen === null) return;
    const problem = claimedProcessProblem(p, seen, input.executionSessionId);
    if (problem !== null) throw new OwnershipError('process_not_session', undefined, { reason: problem });
  }

  handle(workflowId: string): WorkflowHandle<typeof ownershipWorkflow> {
    return this.opts.client.workflow.getHandle<typeof ownershipWorkflow>(workflowId);
  }

  /** Update-with-start: the first bind creates the ownership; a replay by the same session returns it unchanged. */
  async bind(request: BindRequest, opts: BindOptions = {}): Promise<OwnershipView> {
    const req = parseOrRefuse(BindRequestSchema, request);
    this.checkOwnProcess(req);
    const hostId = req.hostId ?? this.opts.hostId;
    const local = hostId === this.opts.hostId;
    // On another host the workflow has that host's agent identify the worktree before the first claim.
    const seen = local ? await this.identify(req.worktreePath, req.repoRoot) : null;
    const { worktreePath, repoRoot } = seen ?? {
      worktreePath: await this.normalize(req.worktreePath),
      repoRoot: req.repoRoot !== undefined ? await this.normalize(req.repoRoot) : await this.normalize(req.worktreePath),
    };
    const branch = this.boundBranch(req.branch, seen);
    const { repoRoot: _r, worktreePath: _w, hostId: _h, branch: _b, ...rest } = req;
    const claim = await withBinding({ ...rest, branch }, opts);
    const where: HeldOwnershipQuery = {
      hostId,
      worktreePath,
      projectedOwnershipId: seen && opts.heldOwnership ? await seen.local.projectedOwnershipId().catch(() => null) : null,
    };
    const held = opts.heldOwnership ? await opts.heldOwnership(where) : null;
    // Moved while owned (git worktree move keeps the private git dir, and its projection, while the
    // ownership stays recorded at the old path): refused, never a second live owner.
    if (held && held.record.worktreePath !== worktreePath)
      throw new OwnershipError('worktree_owned', undefined, { owner: ownerSummary(held.record), worktreePath: held.record.worktreePath });
    if (!local && !held && opts.hostAway) {
      const away = await opts.hostAway(hostId);
      if (away) throw new OwnershipError('host_unavailable', undefined, away);
    }
    // A live lifecycle started under an earlier workflow id formula governs the worktree: the claim goes to it.
    const workflowId = held?.workflowId ?? ownershipWorkflowId(hostId, worktreePath);
    // A new operation per attempt: one is used by a single update-with-start call.
    const startOperation = () => {
      const ownershipId = newOwnershipId();
      return new WithStartWorkflowOperation<typeof ownershipWorkflow>('ownershipWorkflow', {
        workflowId,
        taskQueue: this.opts.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        ...ownershipStartMetadata({ ownershipId, repoRoot, worktreePath, branch, hostId }),
        args: [
          {
            ownershipId,
            worktree: { repoRoot, worktreePath, branch, hostId, ...(local ? {} : { verified: false }) },
            settings: this.settings,
            carried: null,
            liveMemo: 'durable',
            seal: startSealRequest(this.now()),
          },
        ],
      });
    };
    try {
      const answer = await throughContinueAsNew(
        async () => {
          try {
            if (this.opts.updateWithStart === false) {
              await this.opts.client.workflow.start<typeof ownershipWorkflow>('ownershipWorkflow', startOperation().options);
              return await this.handle(workflowId).executeUpdate(claimUpdate, sealedUpdate(opts, ClaimInputSchema.parse(claim), this.now()));
            }
            return await this.queue.run(workflowId, () =>
              this.opts.client.workflow.executeUpdateWithStart(claimUpdate, {
                ...sealedUpdate(opts, ClaimInputSchema.parse(claim), this.now()),
                startWorkflowOperation: startOperation(),
              }),
            );
          } catch (err) {
            const translated = translateError(err);
            throw translated === err ? (unadmittedUpdateWithStart(err) ?? err) : translated;
          }
        },
        opts.messageId !== undefined ? SAME_MESSAGE_WAIT_MS : CONTINUE_AS_NEW_WAIT_MS,
      );
      return await this.enforced(workflowId, answer, opts.enforcementWaitMs);
    } catch (err) {
      throw await this.namingTheOwner(translateError(err), where, opts);
    }
  }

  /**
   * The branch a bind records: git's on this host (named otherwise, or HEAD detached: refused, and
   * nothing starts); on another host the caller's, which that host's agent checks before the first
   * claim (src/activities inspectWorktree).
   */
  private boundBranch(named: string | undefined, seen: { branch: string | null } | null): string {
    if (seen) {
      const wrong = checkNamedBranch(named, seen.branch);
      if (wrong) throw new OwnershipError(wrong.code, wrong.message, wrong.details);
      return seen.branch!;
    }
    if (named === undefined) throw new OwnershipError('invalid_input', 'a worktree on another host needs its branch named', { fields: ['branch'] });
    return named;
  }

  /** A claim the log refused for the live owner of another workflow (the one-live-owner index) carries no owner: it is looked up. */
  private async namingTheOwner(err: unknown, where: HeldOwnershipQuery, opts: BindOptions): Promise<unknown> {
    if (!(err instanceof OwnershipError) || err.code !== 'worktree_owned' || err.details !== undefined || !opts.heldOwnership) return err;
    const held = await opts.heldOwnership(where).catch(() => null);
    return held ? new OwnershipError('worktree_owned', err.message, { owner: ownerSummary(held.record) }) : err;
  }

  /** The host this client binds on when a bind names none (its own). */
  get hostId(): string {
    return this.opts.hostId;
  }

  /** The workflows' task queue (the service's own short workflows start there too). */
  get taskQueue(): string {
    return this.opts.taskQueue;
  }

  /**
   * An owner change is answered once it is durable; the worktree's hooks enforce it once the host
   * agent has written the projection. This waits for that up to projectionWaitMs, by polling the
   * projection query (queries add nothing to the workflow's history), and returns the answer with
   * `projection` saying which it is for this change: applied, still pending, or failed.
   */
  private async enforced(workflowId: string, answer: OwnershipView, waitMs = this.settings.projectionWaitMs): Promise<OwnershipView> {
    if (answer.projection !== 'pending' || waitMs <= 0) return answer;
    const deadline = Date.now() + waitMs;
    for (let delay = 5; Date.now() < deadline; delay = Math.min(delay * 2, 100)) {
      await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(1, deadline - Date.now()))));
      const now = await this.liveState({ workflowId, ownershipId: answer.ownershipId }).catch(() => null);
      if (!now) continue;
      const sync = now.projectionSync;
      if (sync.localSeq >= answer.seq || sync.error !== null) {
        return { ...answer, projectionSync: sync, projection: sync.error !== null ? 'failed' : 'applied' };
      }
    }
    return answer;
  }

  private async ownerChange<I>(
    ref: OwnershipRef,
    def: UpdateDefinition<OwnershipView, [I]>,
    schema: z.ZodType<I>,
    input: I,
    opts: MessageOptions,
  ): Promise<OwnershipView> {
    const answer = await this.update(ref, def, schema, input, opts);
    return this.enforced(await this.workflowIdOf(ref), answer, opts.enforcementWaitMs);
  }

  private async update<I>(
    ref: OwnershipRef,
    def: UpdateDefinition<OwnershipView, [I]>,
    schema: z.ZodType<I>,
    input: I,
    opts: MessageOptions = {},
  ): Promise<OwnershipView> {
    const arg = parseOrRefuse(schema, addressed(ref, input)) as I;
    const workflowId = await this.workflowIdOf(ref);
    return throughContinueAsNew(
      async () => {
        try {
          return await this.queue.run(workflowId, () => this.handle(workflowId).executeUpdate(def, sealedUpdate(opts, arg, this.now())));
        } catch (err) {
          throw await this.atTheSeam(workflowId, err);
        }
      },
      opts.messageId !== undefined ? SAME_MESSAGE_WAIT_MS : CONTINUE_AS_NEW_WAIT_MS,
    );
  }

  private async signal<I>(ref: OwnershipRef, def: SignalDefinition<[I]>, schema: z.ZodType<I>, input: I, messageId?: string): Promise<void> {
    const arg = parseOrRefuse(schema, addressed(ref, input)) as I;
    const workflowId = await this.workflowIdOf(ref);
    await throughContinueAsNew(async () => {
      try {
        await this.handle(workflowId).signal(def, sealedSignalArg(arg, messageId, this.now()));
      } catch (err) {
        throw await this.atTheSeam(workflowId, err);
      }
    });
  }

  /**
   * A message to the current run can meet the run it was routed to just closed by continue-as-new:
   * the server answers "not found" although the ownership runs on (a known server race). When the
   * workflow id has a running execution, that is the seam between runs, tried again like the others;
   * otherwise the ownership really is gone.
   */
  private async atTheSeam(workflowId: string, err: unknown): Promise<unknown> {
    if (!(err instanceof WorkflowNotFoundError)) return translateError(err);
    const running = await this.handle(workflowId)
      .describe()
      .then((d) => d.status.name === 'RUNNING')
      .catch(() => false);
    return running ? new OwnershipError('unavailable', CONTINUING_AS_NEW) : translateError(err);
  }

  handoff(ref: OwnershipRef, input: HandoffInput, opts: MessageOptions = {}) {
    return this.update(ref, handoffUpdate, HandoffInputSchema, input, opts);
  }
  async acceptHandoff(ref: OwnershipRef, input: AcceptHandoffInput, opts: NewOwnerOptions = {}) {
    this.checkOwnProcess(input);
    return this.ownerChange(ref, acceptHandoffUpdate, AcceptHandoffInputSchema, await withBinding(input, opts), opts);
  }
  cancelHandoff(ref: OwnershipRef, input: CancelHandoffInput, opts: MessageOptions = {}) {
    return this.update(ref, cancelHandoffUpdate, CancelHandoffInputSchema, input, opts);
  }
  release(ref: OwnershipRef, input: ReleaseInput, opts: MessageOptions = {}) {
    return this.ownerChange(ref, releaseUpdate, ReleaseInputSchema, input, opts);
  }
  async reclaim(ref: OwnershipRef, input: ReclaimInput, opts: NewOwnerOptions = {}) {
    this.checkOwnProcess(input);
    return this.ownerChange(ref, reclaimUpdate, ReclaimInputSchema, await withBinding(input, opts), opts);
  }
  submit(ref: OwnershipRef, input: SubmitInput, opts: MessageOptions = {}) {
    return this.update(ref, submitUpdate, SubmitInputSchema, input, opts);
  }
  bindPlan(ref: OwnershipRef, input: BindPlanInput, opts: MessageOptions = {}) {
    return this.update(ref, bindPlanUpdate, BindPlanInputSchema, input, opts);
  }
  renameBranch(ref: OwnershipRef, input: RenameBranchInput, opts: MessageOptions = {}) {
    return this.update(ref, renameBranchUpdate, RenameBranchInputSchema, input, opts);
  }

  /**
   * Identical heartbeats (same ownership, session, epoch) share one signal in flight: a burst
   * costs the workflow one signal, not hundreds, so it never starves its continue-as-new.
   */
  async heartbeat(ref: OwnershipRef, input: HeartbeatInput): Promise<void> {
    const key = `${await this.workflowIdOf(ref)}\0${ref.ownershipId ?? ''}\0${input.executionSessionId}\0${input.epoch}`;
    let inFlight = this.heartbeatsInFlight.get(key);
    if (!inFlight) {
      inFlight = this.signal(ref, heartbeatSignal, HeartbeatInputSchema, input).finally(() => this.heartbeatsInFlight.delete(key));
      this.heartbeatsInFlight.set(key, inFlight);
    }
    return inFlight;
  }
  private readonly heartbeatsInFlight = new Map<string, Promise<void>>();
  /** A signal: `opts.messageId` names it, so a refusal the workflow records can be found (refused_messages). */
  landed(ref: OwnershipRef, input: LandedInput, opts: MessageOptions = {}) {
    return this.signal(ref, landedSignal, LandedInputSchema, input, opts.messageId);
  }
  worktreeRemoved(ref: OwnershipRef, input: WorktreeRemovedInput, opts: MessageOptions = {}) {
    return this.signal(ref, worktreeRemovedSignal, WorktreeRemovedInputSchema, input, opts.messageId);
  }
  conversationBound(workflowId: string, workerId: string) {
    return this.signal({ workflowId }, conversationBoundSignal, ConversationBoundInputSchema, { workerId });
  }

  /**
   * The durable log holds `seq` and the workflow does not (a workflow task that wrote its events
   * was never recorded by Temporal, e.g. a server crash): the workflow reads the log's tail and
   * adopts it. Resolves with the view once it holds `seq`, or null after `waitMs`.
   */
  async catchUp(ref: OwnershipRef & { ownershipId: string }, seq: number, waitMs = 5_000): Promise<LiveState | null> {
    await this.signal(ref, resyncSignal, ResyncInputSchema, { seq });
    const deadline = Date.now() + waitMs;
    for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
      const v = await this.liveState(ref).catch(() => null);
      if (v && v.seq >= seq) return v;
      if (Date.now() + delay > deadline) return null;
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  /**
   * What only the running workflow knows (liveness, the projection's and the log's progress), read
   * from its memo with DescribeWorkflowExecution: the worker never sees this read, unlike a query
   * (see src/workflows/publish.ts liveLoop for why that matters). null: no live workflow for the
   * ref, or one that has published no memo yet (no first claim): its state is unknown here.
   */
  async liveState(ref: OwnershipRef): Promise<LiveState | null> {
    try {
      const d = await this.handle(await this.workflowIdOf(ref)).describe();
      if (d.status.name !== 'RUNNING') return null;
      const live = (d.memo?.[LIVE_MEMO] ?? null) as LiveState | null;
      return live && (ref.ownershipId === undefined || live.ownershipId === ref.ownershipId) ? live : null;
    } catch (err) {
      const translated = translateError(err);
      if (translated instanceof OwnershipError && translated.code === 'not_found') return null;
      throw translated;
    }
  }

  /** The projection query: for people and tests. The service reads liveState instead. */
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
