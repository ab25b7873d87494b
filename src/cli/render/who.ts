import type { BranchStatusWire, Liveness, WireRecord } from '../../api/schemas';
import { latest, renderFields, runtimeLabel, shortSha, show, type Field } from './format';

/**
 * `od-worktree who`: the fields of spec §12 in its order and layout, then liveness, epoch, handoff,
 * lineage, submitted and landed (spec §15). Pure: a record (and the live liveness, when known) in,
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

/** HEAD and ahead/behind as the host agent last reported them; `unknown` without a report. */
export function branchText(b: BranchStatusWire | null | undefined): string {
  if (!b) return 'unknown';
  const rel = b.base === null ? 'no base branch' : b.ahead === null || b.behind === null ? `vs ${b.base}: unknown` : `${b.ahead} ahead, ${b.behind} behind ${b.base}`;
  return `${shortSha(b.head)} (${rel}; seen ${b.at})`;
}

export function whoFields(r: WireRecord, liveness: Liveness | null = null, branch: BranchStatusWire | null = null): Field[] {
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
    { label: 'Last activity', value: show(latest(r.lastSeenAt, liveness?.lastHeartbeatAt)) },
    { label: 'Latest WIP', value: r.latestWip ? `${r.latestWip.ref} (${shortSha(r.latestWip.sha)}, ${r.latestWip.at})` : 'none' },
    { label: 'Liveness', value: livenessText(liveness) },
    { label: 'Epoch', value: String(r.epoch) },
    { label: 'Ownership', value: r.ownershipId },
    { label: 'Head', value: branchText(branch) },
  ];
  if (r.handoff) fields.push({ label: 'Handoff', value: `pending to ${r.handoff.toExecutionSessionId} (since ${r.handoff.startedAt}, expires ${r.handoff.expiresAt})` });
  r.lineage.forEach((l, i) => {
    fields.push({ label: i === 0 ? 'Lineage' : '', value: `epoch ${l.epoch} ${l.via.replace('_', ' ')}: ${l.executionSessionId} (${runtimeLabel(l.runtime)}) at ${l.at}` });
  });
  fields.push({ label: 'Submitted', value: r.submitted ? `${r.submitted.at}${r.submitted.head ? ` (head ${shortSha(r.submitted.head)})` : ''}` : 'no' });
  if (r.landings.length === 0) fields.push({ label: 'Landed', value: 'no' });
  r.landings.forEach((l, i) => fields.push({ label: i === 0 ? 'Landed' : '', value: `${l.landedBranch}@${shortSha(l.landedHead)} from ${l.sourceBranch}@${shortSha(l.sourceHead)} at ${l.landedAt}` }));
  if (r.worktreeRemoved) fields.push({ label: 'Removed', value: 'worktree removed' });
  return fields;
}

export function renderWho(r: WireRecord, liveness: Liveness | null = null, branch: BranchStatusWire | null = null): string {
  return renderFields(whoFields(r, liveness, branch));
}
