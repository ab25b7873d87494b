import type { UpdateDefinition } from '@temporalio/common';
import { setHandler, uuid4 } from '@temporalio/workflow';
import { Checks, type AcceptHandoffInput, type ClaimInput, type GrantHoldInput, type HandoffInput, type ReclaimInput } from '../domain/commands';
import type { Conversation } from '../domain/identity';
import {
  checkForce,
  checkReclaim,
  isReclaimReplay,
  decideAcceptHandoff,
  decideBindPlan,
  decideCancelHandoff,
  decideClaim,
  decideEndHold,
  decideGrantHold,
  decideHandoff,
  decideReclaim,
  decideRelease,
  decideRenameBranch,
  decideSubmit,
  type Decision,
} from '../domain/decide';
import type { EventDraft } from '../domain/events';
import { CONTINUING_AS_NEW, refusal } from '../domain/reasons';
import { act, answeredBefore, counted, durableView, orFail, refuseFirst, refusesInput, validated } from './act';
import { fail, store, type Hosts } from './activities';
import { preserveWipNow, verifyOnHost } from './host-checks';
import {
  acceptHandoffUpdate,
  bindPlanUpdate,
  cancelHandoffUpdate,
  claimUpdate,
  endHoldUpdate,
  grantHoldUpdate,
  handoffUpdate,
  reclaimUpdate,
  releaseUpdate,
  renameBranchUpdate,
  submitUpdate,
  type OwnershipView,
} from './messages';
import { livenessView, now, type RunState } from './run-state';
import { refuseUnsealedUpdate } from './seal';
import { conversationSummary } from './summaries';

type NewOwnerInput = ClaimInput | AcceptHandoffInput | ReclaimInput;

/**
 * Updates: each validator refuses before anything enters history (decide.ts on the record as it
 * is); the handler decides again after its awaits (state may have moved) and answers once the
 * events are durable (act). Registered in this order, as always: buffered messages of a new
 * workflow task reach their handlers in registration order.
 */
export function installUpdates(s: RunState, hosts: Hosts): void {
  /** A new owner brings its own lease, or gets the default. */
  const takeLease = (input: { leaseTtlMs?: number }) => {
    s.liveness.leaseTtlMs = input.leaseTtlMs ?? s.settings.leaseTtlMs;
  };
  const expiry = () => new Date(Date.now() + s.settings.handoffTimeoutMs).toISOString();
  /**
   * Every validator first: a message without the service's seal is refused (seal.ts). While the run drains to continue as new, new updates are refused
   * (`unavailable`, retry shortly; nothing enters history), so a steady stream of them cannot hold
   * the run off. The next run takes them.
   */
  const open =
    (validator: (raw: unknown) => void) =>
    (raw: unknown): void => {
      // Before all else: only service processes may message an ownership (seal.ts).
      refuseUnsealedUpdate(s, raw);
      // A message answered before (a retry across continue-as-new) is accepted and answered alike (act.ts counted).
      if (answeredBefore(s)) return;
      if (s.draining) fail(refusal('unavailable', undefined, CONTINUING_AS_NEW));
      try {
        validator(raw);
      } catch (err) {
        // A refusal of the record (not of the input) is the validator's to give only once this copy
        // of the run has seen the log live: before that, a task lost after its write may have left
        // the log ahead of the record. The handler then decides, after a read of the log (act.ts).
        if (s.logSeenLive || refusesInput(err)) throw err;
      }
    };
  const handoffId = () => `hof_${uuid4().replace(/-/g, '')}`;
  /**
   * The new owner's conversation: what the binding said as the service sent the message, when it
   * says (commands.ts BindingSeenSchema); else read here. Which of the two is in the message's
   * history, so a replay takes the same path.
   */
  const conversationOf = async (input: NewOwnerInput): Promise<Conversation | null> =>
    input.binding !== undefined
      ? input.binding.conversation
      : await store.readExecutorConversation.executeWithOptions({ summary: conversationSummary(input.worker.workerId) }, [input.worker.workerId]);

  setHandler(
    claimUpdate,
    counted(s, async (raw) => {
      const input = raw as ClaimInput;
      s.claimInFlight = input.executionSessionId;
      try {
        // Verified once per branch named: another claim's branch is checked again.
        const verified = s.verified?.branch === input.branch;
        if (s.worktree.verified === false && !verified) await verifyOnHost(s, hosts.hostNow, input.branch);
        const conversation = await conversationOf(input);
        return await act(
          s,
          () => decideClaim(s.record, input, conversation),
          () => takeLease(input),
        );
      } finally {
        if (s.claimInFlight === input.executionSessionId) s.claimInFlight = null;
      }
    }),
    {
      validator: open((raw) => {
        const input = validated(Checks.claim, raw);
        if (s.claimInFlight && s.claimInFlight !== input.executionSessionId) {
          fail(refusal('worktree_owned', { owner: { executionSessionId: s.claimInFlight, state: 'claiming' } }));
        }
        orFail(decideClaim(s.record, input, null));
      }),
    },
  );

  setHandler(
    acceptHandoffUpdate,
    counted(s, async (raw) => {
      const input = raw as AcceptHandoffInput;
      const conversation = await conversationOf(input);
      return await act(
        s,
        () => decideAcceptHandoff(s.record, input, conversation),
        () => takeLease(input),
      );
    }),
    { validator: open((raw) => void orFail(decideAcceptHandoff(s.record, validated(Checks.acceptHandoff, raw), null))) },
  );

  setHandler(
    handoffUpdate,
    counted(s, async (raw) => {
      const input = raw as HandoffInput;
      const id = handoffId();
      return await act(s, () => decideHandoff(s.record, input, id, expiry()));
    }),
    { validator: open((raw) => void orFail(decideHandoff(s.record, validated(Checks.handoff, raw), 'hof_validating', expiry()))) },
  );

  /** An owner-only update whose decision needs nothing but the record: decided, recorded, answered. */
  function ownerOnly<I>(
    update: UpdateDefinition<OwnershipView, [I]>,
    accepts: (x: unknown) => x is I,
    decide: (r: RunState['record'], input: I) => Decision,
  ): void {
    setHandler(
      update,
      counted(s, async (raw) => act(s, () => decide(s.record, raw as I))),
      { validator: open((raw) => void orFail(decide(s.record, validated(accepts, raw)))) },
    );
  }
  ownerOnly(cancelHandoffUpdate, Checks.cancelHandoff, decideCancelHandoff);
  ownerOnly(releaseUpdate, Checks.release, decideRelease);
  ownerOnly(submitUpdate, Checks.submit, decideSubmit);
  ownerOnly(bindPlanUpdate, Checks.bindPlan, decideBindPlan);
  ownerOnly(renameBranchUpdate, Checks.renameBranch, decideRenameBranch);
  // Child holds: granted by the owner (its lease starts at the grant), ended by the child, the parent or an admin.
  setHandler(
    grantHoldUpdate,
    counted(s, async (raw) => {
      const input = raw as GrantHoldInput;
      return await act(
        s,
        () => decideGrantHold(s.record, input, now(), s.settings.leaseTtlMs),
        () => void s.holdHeard.set(input.holdId, Date.now()),
      );
    }),
    { validator: open((raw) => void orFail(decideGrantHold(s.record, validated(Checks.grantHold, raw), now(), s.settings.leaseTtlMs))) },
  );
  ownerOnly(endHoldUpdate, Checks.endHold, decideEndHold);

  setHandler(
    reclaimUpdate,
    counted(s, async (raw) => {
      const input = raw as ReclaimInput;
      // A forced reclaim without an admin or a reason is no retry of anything: refused first.
      const improper = checkForce(input);
      if (improper) fail(improper);
      // A retry of a reclaim that took effect: answered with the record, nothing preserved again,
      // once the reclaim it rests on is in the log (one the log refused is decided afresh below).
      if (isReclaimReplay(s.record, input)) {
        const answered = await durableView(s);
        if (answered) return answered;
      }
      // Refused before the dead owner's work is touched, as act() would refuse it.
      const answered = await refuseFirst(s, () => checkReclaim(s.record, input, livenessView(s)));
      if (answered) return answered;
      const conversation = await conversationOf(input);
      // Preserve the dead owner's uncommitted work before anyone else may touch the worktree.
      const r = s.record!;
      const prevSession = r.owner?.executionSessionId ?? input.executionSessionId;
      // A host the sender knows to be away is not waited for: refused now, or forced on without the WIP.
      if (input.hostAway === true && !r.worktreeRemoved && input.force !== true)
        fail(refusal('host_unavailable', { hostId: s.worktree.hostId, hostAgent: 'away' }));
      const wip = r.worktreeRemoved
        ? null
        : input.hostAway === true
          ? { failed: 'host_unavailable' }
          : await preserveWipNow(s, hosts.hostWip, r.worktreePath, r.seq + 1, input.force === true);
      const principal = `${input.principal.kind}:${input.principal.id}`;
      return await act(
        s,
        () => {
          const d = decideReclaim(s.record, input, livenessView(s), conversation);
          if ('code' in d || !wip || d.events.length === 0) return d;
          const preserved: EventDraft =
            wip === 'worktree_missing'
              ? {
                  type: 'ownership.wip_not_preserved',
                  actorSessionId: input.executionSessionId,
                  principal,
                  data: { executionSessionId: prevSession, reason: wip },
                }
              : 'failed' in wip
                ? {
                    type: 'ownership.wip_not_preserved',
                    actorSessionId: input.executionSessionId,
                    principal,
                    data: { executionSessionId: prevSession, reason: 'preservation_failed', detail: wip.failed },
                  }
                : {
                    type: 'ownership.wip_preserved',
                    actorSessionId: input.executionSessionId,
                    principal,
                    // Its size when the host said it (a host agent from before sizes says nothing).
                    data: {
                      executionSessionId: prevSession,
                      ref: wip.ref,
                      sha: wip.sha,
                      ...(wip.files !== undefined && wip.bytes !== undefined ? { files: wip.files, bytes: wip.bytes } : {}),
                    },
                  };
          return { events: [preserved, ...d.events] };
        },
        () => takeLease(input),
      );
    }),
    { validator: open((raw) => void orFail(decideReclaim(s.record, validated(Checks.reclaim, raw), livenessView(s), null))) },
  );
}
