import type { HistoryResponse } from '../../api/schemas';
import { describeReport } from '../../store/attributions-schemas';
import { runtimeLabel, shortSha, show } from './format';

/**
 * `od-worktree history`: every ownership of a worktree, branch or landed commit, oldest first, with
 * its owner chain (handoff lineage), landings and events. Pure.
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
  for (const l of e.lineage) {
    const from = l.previousExecutionSessionId ? ` from ${l.previousExecutionSessionId}` : '';
    lines.push(`    epoch ${l.epoch}  ${VIA[l.via] ?? l.via}${from}: ${l.executionSessionId} (${runtimeLabel(l.runtime)}), conversation ${show(l.conversationId)}, at ${l.at}`);
  }
  if (r.latestWip) lines.push(`  WIP:       ${r.latestWip.ref} (${shortSha(r.latestWip.sha)}) at ${r.latestWip.at}`);
  if (r.submitted) lines.push(`  Submitted: ${r.submitted.at}${r.submitted.head ? ` head ${shortSha(r.submitted.head)}` : ''}`);
  for (const l of r.landings) {
    lines.push(`  Landed:    ${l.landedBranch}@${shortSha(l.landedHead)} from ${l.sourceBranch}@${shortSha(l.sourceHead)} at ${l.landedAt}`);
  }
  if (e.attempts && e.attempts.length > 0) {
    lines.push('  Attempts (refused):');
    for (const a of e.attempts) {
      const what = a.kind !== 'ref_refused' ? `git ${a.command ?? '?'}` : `move of ${a.ref ?? '?'} ${shortSha(a.oldHead)} -> ${shortSha(a.newHead)}`;
      lines.push(`    ${a.at}  ${a.code}  ${what} by ${a.executionSessionId ?? 'unidentified'} (owner ${show(a.ownerSessionId)}, epoch ${a.epoch ?? 'unknown'})`);
    }
  }
  if (e.refusedMessages && e.refusedMessages.length > 0) {
    lines.push('  Messages refused (no service seal):');
    for (const m of e.refusedMessages) lines.push(`    ${m.receivedAt}  ${m.message}  ${m.problem}  claimed ${show(m.claimedPrincipal)}${m.messageId ? `  id ${m.messageId}` : ''}`);
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
    lines.push(`    #${ev.seq}  ${ev.at}  ${ev.type.replace(/^ownership\./, '')}${who ? `  by ${who}` : ''}`);
  }
  return lines.join('\n');
}

export function renderHistory(h: HistoryResponse): string {
  if (h.ownerships.length === 0) return 'no ownership history';
  return h.ownerships.map(renderHistoryEntry).join('\n\n');
}
