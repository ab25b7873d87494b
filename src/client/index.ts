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
  EndHoldInputSchema,
  GrantHoldInputSchema,
  HandoffInputSchema,
  HeartbeatInputSchema,
  HoldHeartbeatInputSchema,
  LandedInputSchema,
  ReclaimInputSchema,
  ReleaseInputSchema,
  RenameBranchInputSchema,
  SubmitInputSchema,
  WorktreeRemovedInputSchema,
  type AcceptHandoffInput,
  type BindPlanInput,
  type CancelHandoffInput,
  type EndHoldInput,
  type GrantHoldInput,
  type HandoffInput,
  type HeartbeatInput,
  type HoldHeartbeatInput,
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
  endHoldUpdate,
  eventsQuery,
  grantHoldUpdate,
  handoffUpdate,
  heartbeatSignal,
  holdHeartbeatSignal,
  landedSignal,
  projectionQuery,
  reclaimUpdate,
  releaseUpdate,
  renameBranchUpdate,
  submitUpdate,
  worktreeRemovedSignal,
  LIVE_MEMO,
  type LiveState,
  type OwnershipView,
} from '../workflows/messages';
import { DEFAULT_SETTINGS, type OwnershipSettings } from '../domain/settings';
import type { ownershipWorkflow } from '../workflows/ownership';
import { CONTINUING_AS_NEW, IN_FLIGHT, OwnershipError, translateError, unadmittedUpdateWithStart, UNPROCESSED } from './errors';
import { parseInput } from '../contract/refusal';
import { PerOwnershipQueue } from './inflight';
import { HOST_MESSAGE_MS, IN_FLIGHT_PER_OWNERSHIP, MESSAGE_MS, WAITING_PER_OWNERSHIP } from '../domain/deadlines';
import type { LocalWorktree, WorktreeResolver } from './worktree-resolver';

/**
 * The message an update is: every attempt of one request carries the same id (Temporal's update
 * id), so Temporal answers a retry of it (within a run; across continue-as-new the run answers
 * from what it carries: src/workflows/act.ts). The API sets it from its idempotency key; without
 * one, each call is a message of its own.
 */
export interface MessageOptions {
  messageId?: string;
  /**
   * How long an owner change's answer waits for the worktree's hooks to enforce it (default the
   * settings' projectionWaitMs). The API passes 0 when the host's agent is away: nothing would
   * write the projection meanwhile, so waiting would only hold the caller.
   */
  enforcementWaitMs?: number;
  /** How long the message may take, retries of the seams included (default: src/domain/deadlines.ts, by message). */
  deadlineMs?: number;
}

/**
 * An owner change's options (bind, accept, reclaim): the new owner's conversation as the sender's
 * store holds it (the executor binding, src/store/bindings.ts), carried in the message so the
 * workflow reads nothing. Absent: the workflow reads the binding itself (a client without a store).
 */
export interface NewOwnerOptions extends MessageOptions {
  conversation?: Conversation | null;
}

/** The new owner's binding as the sender read it; never what a caller put in the input. */
function withBinding<I extends object>(input: I, opts: NewOwnerOptions): I {
  const { binding: _ignored, ...rest } = input as I & { binding?: unknown };
  if (opts.conversation === undefined) return rest as I;
  const binding = { conversation: opts.conversation };
  // A stored conversation the message's check would not take (a URL kept in another spelling): the workflow reads it itself.
  return (BindingSeenSchema.safeParse(binding).success ? { ...rest, binding } : rest) as I;
}
/**
 * An update as service processes send it: its id (the message id, or one fresh id for this call,
 * the same for every attempt) and its argument sealed for that id (src/domain/seal.ts; the data
 * converter adds the HMAC), sealed again at each attempt so a late one is not refused as expired.
 */
function sealedUpdate<I>(opts: MessageOptions, arg: I): { at(nowMs: number): { args: [I]; updateId: string } } {
  const updateId = opts.messageId ?? `upd_${randomUUID()}`;
  return { at: (nowMs) => ({ args: [{ ...arg, seal: sealRequest('update', updateId, nowMs) }], updateId }) };
}

/** A signal as service processes send it: sealed for its workflow, with an id of its own (a copy of it acts at most once) and an expiry. */
const sealedSignalArg = <I>(arg: I, messageId: string, nowMs: number): I => ({ ...arg, seal: sealRequest('signal', messageId, nowMs) });

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

/** A worktree as a bind finds it (OwnershipClient.locate): where it is, and what its own projection names. */
export interface Located {
  hostId: string;
  /** on this client's host: git here identified it */
  local: boolean;
  worktreePath: string;
  repoRoot: string;
  /** git's checked-out branch here; null: detached; undefined: another host's, which only its agent can say */
  branch: string | null | undefined;
  /** the ownership the worktree's own projection names (local worktrees), a hint for a lookup */
  projectedOwnershipId: string | null;
}

/**
 * A bind's options: its message id, the worktree as located (else located here), and the workflow
 * of a live lifecycle of this worktree under an earlier workflow id formula, which gets the claim
 * (the API looks it up: src/store/lookups.ts heldOwnershipOf). Without it, the database's one-live-owner
 * index is what refuses a second live owner.
 */
export interface BindOptions extends NewOwnerOptions {
  located?: Located;
  workflowId?: string;
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

/**
 * The seams between a message and its answer that change nothing: a run continuing as new refuses
 * new updates for a moment (its validators answer `unavailable`; nothing entered history), the
 * server dropped or aborted an update it never applied (a worker that died with the task), or too
 * many were in flight to the ownership. The same message is sent again; nothing else is retried.
 */
const isSeam = (err: unknown): boolean =>
  err instanceof OwnershipError &&
  err.code === 'unavailable' &&
  (err.message === CONTINUING_AS_NEW || err.message === UNPROCESSED || err.message === IN_FLIGHT);

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

  /** Updates to one ownership in flight from this process, the rest waiting their turn (deadlines.ts). */
  private readonly queue = new PerOwnershipQueue(IN_FLIGHT_PER_OWNERSHIP, WAITING_PER_OWNERSHIP);

  /**
   * The one path of every message: sent under its deadline (every Temporal call inside it, and the
   * wait for its turn, bounded by it), and sent again, the same message, only across a seam
   * (isSeam) while the deadline allows. Past it the caller gets `unavailable` and may send the
   * same message again.
   */
  private async send<T>(workflowId: string, deadlineMs: number, call: () => Promise<T>, queued = true): Promise<T> {
    const deadline = Date.now() + deadlineMs;
    return this.opts.client.withDeadline(deadline, async () => {
      for (let delay = 10; ; delay = Math.min(delay * 2, 250)) {
        try {
          return await (queued ? this.queue.run(workflowId, deadline, call) : call());
        } catch (err) {
          const translated = await this.atTheSeam(workflowId, err);
          if (!isSeam(translated) || Date.now() + delay > deadline) throw translated;
          await new Promise((r) => setTimeout(r, delay));
        }
      }
    });
  }

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

  /**
   * Where a bind's worktree is: on this host, git says (its canonical path, repository root and
   * branch; a caller's repoRoot naming anything else is refused); on another host, the caller's
   * spelling, which that host's agent checks before the first claim.
   */
  async locate(request: Pick<BindRequest, 'worktreePath' | 'repoRoot' | 'hostId'>): Promise<Located> {
    const hostId = request.hostId ?? this.opts.hostId;
    if (hostId === this.opts.hostId) {
      const seen = await this.identify(request.worktreePath, request.repoRoot);
      const projectedOwnershipId = await seen.local.projectedOwnershipId().catch(() => null);
      return { hostId, local: true, worktreePath: seen.worktreePath, repoRoot: seen.repoRoot, branch: seen.branch, projectedOwnershipId };
    }
    const worktreePath = await this.normalize(request.worktreePath);
    const repoRoot = request.repoRoot !== undefined ? await this.normalize(request.repoRoot) : worktreePath;
    return { hostId, local: false, worktreePath, repoRoot, branch: undefined, projectedOwnershipId: null };
  }

  /** Update-with-start: the first bind creates the ownership; a replay by the same session returns it unchanged. */
  async bind(request: BindRequest, opts: BindOptions = {}): Promise<OwnershipView> {
    const req = parseInput(BindRequestSchema, request);
    this.checkOwnProcess(req);
    const at = opts.located ?? (await this.locate(req));
    const { hostId, worktreePath, repoRoot, local } = at;
    const branch = this.boundBranch(req.branch, local ? { branch: at.branch ?? null } : null);
    const { repoRoot: _r, worktreePath: _w, hostId: _h, branch: _b, ...rest } = req;
    const claim = ClaimInputSchema.parse(withBinding({ ...rest, branch }, opts));
    const workflowId = opts.workflowId ?? ownershipWorkflowId(hostId, worktreePath);
    const update = sealedUpdate(opts, claim);
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
            seal: startSealRequest(this.now()),
          },
        ],
      });
    };
    // A bind on another host waits for that host's agent to inspect the worktree (the workflow bounds it).
    const deadlineMs = opts.deadlineMs ?? (local ? MESSAGE_MS : HOST_MESSAGE_MS);
    const answer = await this.send(
      workflowId,
      deadlineMs,
      async () => {
        try {
          if (this.opts.updateWithStart === false) {
            await this.opts.client.workflow.start<typeof ownershipWorkflow>('ownershipWorkflow', startOperation().options);
            return await this.handle(workflowId).executeUpdate(claimUpdate, update.at(this.now()));
          }
          return await this.opts.client.workflow.executeUpdateWithStart(claimUpdate, { ...update.at(this.now()), startWorkflowOperation: startOperation() });
        } catch (err) {
          const translated = translateError(err);
          throw translated === err ? (unadmittedUpdateWithStart(err) ?? err) : translated;
        }
      },
      this.opts.updateWithStart !== false,
    );
    return this.enforced(workflowId, answer, opts.enforcementWaitMs);
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
    const arg = parseInput(schema, addressed(ref, input)) as I;
    const workflowId = await this.workflowIdOf(ref);
    const update = sealedUpdate(opts, arg);
    return this.send(workflowId, opts.deadlineMs ?? MESSAGE_MS, () => this.handle(workflowId).executeUpdate(def, update.at(this.now())));
  }

  private async signal<I>(ref: OwnershipRef, def: SignalDefinition<[I]>, schema: z.ZodType<I>, input: I, messageId?: string): Promise<void> {
    const arg = parseInput(schema, addressed(ref, input)) as I;
    const workflowId = await this.workflowIdOf(ref);
    // One id for every attempt: a signal that got through and is sent again acts once (its seal's id).
    const sealed = sealedSignalArg(arg, messageId ?? `sig_${randomUUID()}`, this.now());
    await this.send(workflowId, MESSAGE_MS, () => this.handle(workflowId).signal(def, sealed), false);
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
    return this.ownerChange(ref, acceptHandoffUpdate, AcceptHandoffInputSchema, withBinding(input, opts), opts);
  }
  cancelHandoff(ref: OwnershipRef, input: CancelHandoffInput, opts: MessageOptions = {}) {
    return this.update(ref, cancelHandoffUpdate, CancelHandoffInputSchema, input, opts);
  }
  release(ref: OwnershipRef, input: ReleaseInput, opts: MessageOptions = {}) {
    return this.ownerChange(ref, releaseUpdate, ReleaseInputSchema, input, opts);
  }
  async reclaim(ref: OwnershipRef, input: ReclaimInput, opts: NewOwnerOptions = {}) {
    this.checkOwnProcess(input);
    // A reclaim waits for the host to preserve the dead owner's WIP before it answers.
    return this.ownerChange(ref, reclaimUpdate, ReclaimInputSchema, withBinding(input, opts), { deadlineMs: HOST_MESSAGE_MS, ...opts });
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
   * Child holds (docs/ownership-record.md#child-holds). A grant and an end change who the
   * worktree's projection admits (the child's tenure), so each answers once it is enforced, like
   * an owner change.
   */
  grantHold(ref: OwnershipRef, input: GrantHoldInput, opts: MessageOptions = {}) {
    return this.ownerChange(ref, grantHoldUpdate, GrantHoldInputSchema, input, opts);
  }
  endHold(ref: OwnershipRef, input: EndHoldInput, opts: MessageOptions = {}) {
    return this.ownerChange(ref, endHoldUpdate, EndHoldInputSchema, input, opts);
  }
  /** A child's heartbeat: renews its hold's lease in the workflow, never the parent's. */
  holdHeartbeat(ref: OwnershipRef, input: HoldHeartbeatInput, opts: MessageOptions = {}) {
    return this.signal(ref, holdHeartbeatSignal, HoldHeartbeatInputSchema, input, opts.messageId);
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
