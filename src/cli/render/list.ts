import Table from 'cli-table3';
import type { ListResponse } from '../../api/schemas';
import { latest, runtimeLabel, shortSha, show } from './format';

/**
 * `od-worktree list --owners`: a compact table (spec §12, §15): worktree, branch, head (ahead/behind), state, liveness,
 * owner runtime, conversation title, last activity, epoch. Unknown cells read `unknown`.
 */

export const LIST_COLUMNS = ['WORKTREE', 'BRANCH', 'HEAD', 'STATE', 'LIVENESS', 'OWNER RUNTIME', 'CONVERSATION', 'LAST ACTIVITY', 'EPOCH'] as const;

const MAX_PATH = 48;
const ENDED = new Set(['released', 'landed', 'closed']);

/** Long paths keep their end, which names the worktree: `…/.worktrees/feature-x`. */
export function shortPath(p: string, max = MAX_PATH): string {
  if (p.length <= max) return p;
  const parts = p.split('/');
  let out = parts.pop() ?? p;
  while (parts.length > 0 && out.length + parts[parts.length - 1]!.length + 3 <= max) out = `${parts.pop()}/${out}`;
  return `…/${out}`;
}

const NO_BORDERS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '  ',
};

type Item = ListResponse['items'][number];

/** `abc1234 +2/-1` against the base branch, as the host agent last saw it; `unknown` without a report. */
function headCell(b: Item['branchStatus']): string {
  if (!b) return 'unknown';
  const rel = b.ahead === null || b.behind === null ? '' : ` +${b.ahead}/-${b.behind}`;
  return `${shortSha(b.head).slice(0, 7)}${rel}`;
}

export function listRow(r: Item): string[] {
  // Liveness comes from the workflow; without its answer only the durable state can say: `stale`
  // is itself a proof of death, and released/landed/closed have no owner to be live.
  const liveness = r.liveness ? r.liveness.status : r.state === 'stale' ? 'stale' : ENDED.has(r.state) ? 'unowned' : 'unknown';
  return [
    shortPath(r.worktreePath),
    show(r.branch),
    headCell(r.branchStatus),
    r.state.toUpperCase(),
    liveness,
    runtimeLabel(r.owner?.runtime),
    show(r.owner?.conversation?.title),
    show(latest(r.lastSeenAt, r.liveness?.lastHeartbeatAt)),
    String(r.epoch),
  ];
}

export function renderOwnersTable(items: readonly Item[]): string {
  if (items.length === 0) return 'no ownerships';
  const table = new Table({ head: [...LIST_COLUMNS], chars: NO_BORDERS, style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 } });
  for (const r of items) table.push(listRow(r));
  return table
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n');
}
