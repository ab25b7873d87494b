import type { HistoryResponse } from '../../contract/http';
import { describeReport } from '../../store/attributions-schemas';
import type { RemovedReceipt } from '../../domain/events';
import { runtimeLabel, shortSha, show, wipSizeText } from './format';

/**
 * `od-worktree history`: every ownership of a worktree, branch or landed commit, oldest first, with
 * its owner chain (handoff lineage) and each tenure's late attempts, landings and events. Pure.
 */

type Entry = HistoryResponse['ownerships'][number];

const VIA: Readonly<Record<string, string>> = {
  bind: 'bind',
  handoff: 'handoff',
  after_release: 'claim after release',
  reclaim: 'reclaim (owner dead)',
  forced_reclaim: 'forced reclaim',
};

export function renderHistoryEntry(e: Entry): string {
  const r = e.record;
  const lines: string[] = [`Ownership ${e.ownershipId}  ${r.state.toUpperCase()}`];
  lines.push(`  Worktree:  ${show(r.worktreePath)}${r.worktreeRemoved ? ' (removed)' : ''}`);
  const former = r.branchNames.filter((b) => b !== r.branch);
  lines.push(`  Branch:    ${show(r.branch)}${former.length ? ` (was ${former.join(', ')})` : ''}`);
  lines.push(`  Lane:      ${show(r.lane)}    Plan: ${show(r.planRef)}`);
  lines.push('  Owners:');
  if (e.lineage.length === 0) lines.push('    none');
  const late = e.lateAttempts ?? [];
  for (const l of e.lineage) {
    const from = l.previousExecutionSessionId ? ` from ${l.previousExecutionSessionId}` : '';
    lines.push(
      `    epoch ${l.epoch}  ${VIA[l.via] ?? l.via}${from}: ${l.executionSessionId} (${runtimeLabel(l.runtime)}), conversation ${show(l.conversationId)}, at ${l.at}`,
    );
    // Under the tenure whose owner did it: its work after a newer tenure began.
    for (const a of late.filter((x) => x.epoch === l.epoch)) lines.push(...renderLate(a, '      '));
  }
  const placed = new Set(e.lineage.map((l) => l.epoch));
  const unplaced = late.filter((a) => !placed.has(a.epoch));
  if (unplaced.length > 0) {
    lines.push('  Late attempts:');
    for (const a of unplaced) lines.push(...renderLate(a, '    '));
  }
  if (r.latestWip) lines.push(`  WIP:       ${r.latestWip.ref} (${shortSha(r.latestWip.sha)}${wipSizeText(r.latestWip)}) at ${r.latestWip.at}`);
  if (r.submitted) lines.push(`  Submitted: ${r.submitted.at}${r.submitted.head ? ` head ${shortSha(r.submitted.head)}` : ''}`);
  for (const l of r.landings) {
    lines.push(`  Landed:    ${l.landedBranch}@${shortSha(l.landedHead)} from ${l.sourceBranch}@${shortSha(l.sourceHead)} at ${l.landedAt}`);
  }
  const removal = e.events.find((ev) => ev.type === 'ownership.worktree_removed');
  if (removal) lines.push(`  Removed:   ${removal.at}${removedText(removal.data)}`);
  if (e.attempts && e.attempts.length > 0) {
    lines.push('  Attempts (refused):');
    for (const a of e.attempts) {
      const what = a.kind !== 'ref_refused' ? `git ${a.command ?? '?'}` : `move of ${a.ref ?? '?'} ${shortSha(a.oldHead)} -> ${shortSha(a.newHead)}`;
      lines.push(
        `    ${a.at}  ${a.code}  ${what} by ${a.executionSessionId ?? 'unidentified'} (owner ${show(a.ownerSessionId)}, epoch ${a.epoch ?? 'unknown'})`,
      );
    }
  }
  if (e.refusedMessages && e.refusedMessages.length > 0) {
    lines.push('  Messages refused (no service seal):');
    for (const m of e.refusedMessages)
      lines.push(`    ${m.receivedAt}  ${m.message}  ${m.problem}  claimed ${show(m.claimedPrincipal)}${m.messageId ? `  id ${m.messageId}` : ''}`);
  }
  if (e.overrides && e.overrides.length > 0) {
    lines.push('  Overrides (a person stepped in):');
    for (const o of e.overrides) lines.push(`    ${o.at}  epoch ${o.epoch}  by ${o.principal}: ${o.reason}  id ${o.overrideId}`);
  }
  if (e.disputes && e.disputes.length > 0) {
    lines.push('  Commits not attributed (journal claim vs record):');
    for (const d of e.disputes) lines.push(`    ${d.at}  ${shortSha(d.commit)}  ${describeReport(d)}`);
  }
  lines.push('  Events:');
  for (const ev of e.events) {
    const actor = (ev as { actor?: { executionSessionId?: string | null; principal?: string | null } }).actor;
    const who = [actor?.executionSessionId, actor?.principal].filter(Boolean).join(' ');
    lines.push(`    #${ev.seq}  ${ev.at}  ${ev.type.replace(/^ownership\./, '')}${who ? `  by ${who}` : ''}${holdText(ev.type, ev.data)}`);
  }
  return lines.join('\n');
}

/** A child hold's event, said (docs/ownership-record.md#child-holds): which hold, which child, and how it ended. */
function holdText(type: string, data: unknown): string {
  const d = (data ?? {}) as {
    hold?: { holdId?: string; executionSessionId?: string; runtime?: string | null };
    holdId?: string;
    executionSessionId?: string;
    reason?: string;
  };
  if (type === 'ownership.hold_granted' && d.hold)
    return `: hold ${show(d.hold.holdId)} for ${show(d.hold.executionSessionId)} (${runtimeLabel(d.hold.runtime)})`;
  if (type === 'ownership.hold_ended')
    return `: hold ${show(d.holdId)} of ${show(d.executionSessionId)} ${d.reason === 'epoch_ended' ? "ended with the owner's tenure" : show(d.reason)}`;
  return '';
}

type Late = NonNullable<Entry['lateAttempts']>[number];

/** One preserved piece of late work: where it is kept, then each late commit with whom it is attributed to now. */
function renderLate(a: Late, indent: string): string[] {
  const files = a.uncommitted ? ', with uncommitted files' : '';
  const out = [
    `${indent}late attempts of ${a.executionSessionId} (epoch ${a.epoch}) after the next tenure began, preserved under ${a.ref} (${shortSha(a.sha)})${files}, reported ${a.at}:`,
  ];
  for (const c of a.commits) {
    const who = c.status === 'attributed' ? `session ${show(c.executionSessionId)}, epoch ${show(c.epoch)}` : `not attributed (${c.status})`;
    out.push(`${indent}  ${shortSha(c.commit)}  ${who}`);
  }
  if (a.moreCommits > 0) out.push(`${indent}  and ${a.moreCommits} more late commit${a.moreCommits === 1 ? '' : 's'} in ${a.ref}`);
  if (a.commits.length === 0 && a.moreCommits === 0) out.push(`${indent}  no late commit: uncommitted files only`);
  return out;
}

export function renderHistory(h: HistoryResponse): string {
  if (h.ownerships.length === 0) return 'no ownership history';
  return h.ownerships.map(renderHistoryEntry).join('\n\n');
}

/** What the removal kept, from its receipt (a removal the service was only told of has none). */
function removedText(data: unknown): string {
  const r = (data as { receipt?: RemovedReceipt }).receipt;
  if (!r) return '';
  const parts = [r.head ? `head ${shortSha(r.head)}${r.headLandedOn ? ` on ${r.headLandedOn.replace(/^refs\/(heads|remotes)\//, '')}` : ''}` : ''];
  const counted = Object.entries(r.accounted).filter(([, n]) => (n ?? 0) > 0);
  if (counted.length > 0) parts.push(`commits ${counted.map(([m, n]) => `${n} ${m}`).join(', ')}`);
  for (const p of r.preserved) parts.push(`${p.files} files kept in ${p.ref} (${shortSha(p.sha)})`);
  if (r.branch) parts.push(`branch ${r.branch}`);
  const text = parts.filter(Boolean).join('; ');
  return text ? `  ${text}` : '';
}
