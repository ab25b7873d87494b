import type { BranchStatusWire, Enforcement, Liveness, WireRecord } from '../../contract/http';
import type { ObserverView } from '../../contract/observers';
import { lastActivityAt } from '../../domain/activity';
import { ago } from '../age';
import { renderFields, runtimeLabel, shortSha, show, wipSizeText, type Field } from './format';

/**
 * `od-worktree who`: the fields docs/cli.md lists, in its order and layout, then liveness, epoch,
 * handoff, lineage, submitted and landed. Pure: a record (and the live liveness, when known) in,
 * text out. Values the record does not know read `unknown`; nothing is inferred.
 */

function livenessText(l: Liveness | null): string {
  if (!l) return 'unknown';
  const lease = `lease ${Math.round(l.leaseTtlMs / 1000)}s`;
  switch (l.status) {
    case 'live':
      return `live (${lease})`;
    case 'silent':
      return `silent: heartbeats overdue, owner not proven dead${l.verdict ? ` (authority: ${l.verdict})` : ''}`;
    case 'stale':
      return `stale: owner proven dead${l.checkedAt ? ` at ${l.checkedAt}` : ''}`;
    case 'unowned':
      return 'unowned';
  }
}

/** HEAD and ahead/behind as the host agent last reported them, and (given `now`) how long ago; `unknown` without a report. */
export function branchText(b: BranchStatusWire | null | undefined, now?: number): string {
  if (!b) return 'unknown';
  const rel =
    b.base === null ? 'no base branch' : b.ahead === null || b.behind === null ? `vs ${b.base}: unknown` : `${b.ahead} ahead, ${b.behind} behind ${b.base}`;
  return `${shortSha(b.head)} (${rel}; seen ${b.at}${now === undefined ? '' : `, ${ago(b.at, now)}`})`;
}

/** The last preserved WIP, unless a later reclaim could not preserve any: then that, and why. */
function wipText(r: WireRecord): string {
  const lost = r.wipNotPreserved ?? null;
  if (lost && (!r.latestWip || lost.at > r.latestWip.at)) {
    return `not preserved at ${lost.at} (${lost.reason === 'worktree_missing' ? 'the worktree was gone from its host' : lost.reason}; session ${lost.executionSessionId})`;
  }
  return r.latestWip ? `${r.latestWip.ref} (${shortSha(r.latestWip.sha)}${wipSizeText(r.latestWip)}, ${r.latestWip.at})` : 'none';
}

/** Whether the hooks on the worktree's host enforce this record: `not yet` is what people must know while a host is away. */
export function enforcementText(e: Enforcement | null | undefined): string | null {
  if (!e) return null;
  const seen = e.hostAgentSeenAgoMs === null ? '' : `, its agent last seen ${Math.round(e.hostAgentSeenAgoMs / 1000)}s ago`;
  switch (e.state) {
    case 'enforced':
      return `yes, on host ${e.hostId}`;
    case 'pending':
      return `being written on host ${e.hostId}`;
    case 'failed':
      return `no: host ${e.hostId} refused to write it (see Projection errors in history)`;
    case 'not_enforced':
      return `NOT YET on host ${e.hostId} (host away${seen}): its hooks keep the record they last had until it is back`;
  }
}

/** `now` (the CLI passes the clock): say how old the Head report is; without it the output depends on the record alone. */
export function whoFields(
  r: WireRecord & { enforcement?: Enforcement | null; observers?: ObserverView[] },
  liveness: Liveness | null = null,
  branch: BranchStatusWire | null = null,
  now?: number,
): Field[] {
  const conv = r.owner?.conversation ?? null;
  const fields: Field[] = [
    { label: 'Worktree', value: show(r.worktreePath) },
    { label: 'Branch', value: show(r.branch) },
    { label: 'State', value: r.state.toUpperCase() },
    { label: 'Lane', value: show(r.lane) },
    { label: 'Plan', value: show(r.planRef) },
    { label: 'Owner runtime', value: runtimeLabel(r.owner?.runtime) },
    { label: 'Conversation', value: show(conv?.title) },
    { label: 'Conversation', value: show(conv?.conversationUrl) },
    { label: 'Worker', value: show(r.worker?.workerId) },
    { label: 'Session', value: show(r.owner?.executionSessionId) },
    { label: 'Last activity', value: show(lastActivityAt(r, liveness)) },
    { label: 'Latest WIP', value: wipText(r) },
    { label: 'Liveness', value: livenessText(liveness) },
    { label: 'Epoch', value: String(r.epoch) },
    { label: 'Ownership', value: r.ownershipId },
    { label: 'Head', value: branchText(branch, now) },
  ];
  const enforced = enforcementText(r.enforcement);
  if (enforced) fields.push({ label: 'Enforced', value: enforced });
  // The holders as a tree, only when children hold (docs/ownership-record.md#child-holds): the owner, then each child.
  const holds = r.holds ?? [];
  if (holds.length > 0) {
    fields.push({ label: 'Holders', value: `${show(r.owner?.executionSessionId)} (${runtimeLabel(r.owner?.runtime)}, owner, epoch ${r.epoch})` });
    holds.forEach((h, i) =>
      fields.push({
        label: '',
        value: `${i === holds.length - 1 ? '└─' : '├─'} ${h.executionSessionId} (${runtimeLabel(h.runtime)}, hold ${h.holdId}, granted ${h.grantedAt}${now === undefined ? '' : `, ${ago(h.grantedAt, now)}`})`,
      }),
    );
  }
  if (r.handoff)
    fields.push({ label: 'Handoff', value: `pending to ${r.handoff.toExecutionSessionId} (since ${r.handoff.startedAt}, expires ${r.handoff.expiresAt})` });
  r.lineage.forEach((l, i) => {
    fields.push({
      label: i === 0 ? 'Lineage' : '',
      value: `epoch ${l.epoch} ${l.via.replace('_', ' ')}: ${l.executionSessionId} (${runtimeLabel(l.runtime)}) at ${l.at}`,
    });
  });
  fields.push({ label: 'Submitted', value: r.submitted ? `${r.submitted.at}${r.submitted.head ? ` (head ${shortSha(r.submitted.head)})` : ''}` : 'no' });
  if (r.landings.length === 0) fields.push({ label: 'Landed', value: 'no' });
  r.landings.forEach((l, i) =>
    fields.push({
      label: i === 0 ? 'Landed' : '',
      value: `${l.landedBranch}@${shortSha(l.landedHead)} from ${l.sourceBranch}@${shortSha(l.sourceHead)} at ${l.landedAt}`,
    }),
  );
  if (r.worktreeRemoved) fields.push({ label: 'Removed', value: 'worktree removed' });
  // Read-only observers (live leases only): never owners, listed so people know who else is looking.
  (r.observers ?? []).forEach((o, i) =>
    fields.push({
      label: i === 0 ? 'Observers' : '',
      value: `${o.executionSessionId} (${runtimeLabel(o.runtime)}, worker ${o.workerId}; seen ${now === undefined ? o.lastSeenAt : ago(o.lastSeenAt, now)})`,
    }),
  );
  return fields;
}

export function renderWho(
  r: WireRecord & { enforcement?: Enforcement | null; observers?: ObserverView[] },
  liveness: Liveness | null = null,
  branch: BranchStatusWire | null = null,
  now?: number,
): string {
  return renderFields(whoFields(r, liveness, branch, now));
}
