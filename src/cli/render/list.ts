import Table from 'cli-table3';
import type { ListResponse } from '../../contract/http';
import { isFreeState } from '../../domain/states';
import { lastActivityAt } from '../../domain/activity';
import { ago } from '../age';
import { fitRows, type Shrinkable } from '../fit';
import { runtimeLabel, shortSha, show } from './format';

/**
 * `od-worktree list --owners`: a compact table (docs/cli.md): worktree, branch, head (ahead/behind), state, liveness,
 * owner runtime, conversation title, last activity, epoch. Unknown cells read `unknown`.
 */

export const LIST_COLUMNS = ['WORKTREE', 'BRANCH', 'HEAD', 'STATE', 'LIVENESS', 'RUNTIME', 'CONVERSATION', 'ACTIVITY', 'EPOCH'] as const;

const MAX_PATH = 48;

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

function activityCell(at: string | null, now: number | undefined): string {
  return at && now !== undefined ? ago(at, now) : show(at);
}

/** `abc1234 +2/-1` against the base branch, as the host agent last saw it; `unknown` without a report. */
function headCell(b: Item['branchStatus']): string {
  if (!b) return 'unknown';
  const rel = b.ahead === null || b.behind === null ? '' : ` +${b.ahead}/-${b.behind}`;
  return `${shortSha(b.head).slice(0, 7)}${rel}`;
}

/**
 * `wide`: the whole worktree path (the default keeps its end, up to 48 characters). `now` (the CLI
 * passes the clock): the last activity as an age (`4 min ago`) rather than an instant, unless wide.
 */
export function listRow(r: Item, opts: { wide?: boolean; now?: number } = {}): string[] {
  // Liveness comes from the workflow; without its answer only the durable state can say: `stale`
  // is itself a proof of death, and released/landed/closed have no owner to be live.
  const liveness = r.liveness ? r.liveness.status : r.state === 'stale' ? 'stale' : isFreeState(r.state) ? 'unowned' : 'unknown';
  return [
    opts.wide ? r.worktreePath : shortPath(r.worktreePath),
    show(r.branch),
    headCell(r.branchStatus),
    r.state.toUpperCase(),
    liveness,
    runtimeLabel(r.owner?.runtime),
    show(r.owner?.conversation?.title),
    activityCell(lastActivityAt(r, r.liveness), opts.wide ? undefined : opts.now),
    String(r.epoch),
  ];
}

/** What gives way when the table is too wide: conversation, branch, runtime, and last the worktree (keeping its end). */
const SHRINKABLE: readonly Shrinkable[] = [
  { column: 6, keep: 'start', prefer: 16 },
  { column: 1, keep: 'start', prefer: 16 },
  { column: 5, keep: 'start', prefer: 12 },
  { column: 0, keep: 'end', prefer: 28, cutter: (p, w) => shortPath(p, w) },
];

/** Fits `width` columns (default 120) by cutting the shrinkable cells; `wide` prints every value whole; `now`: see listRow. */
export function renderOwnersTable(items: readonly Item[], opts: { wide?: boolean; width?: number; now?: number } = {}): string {
  if (items.length === 0) return 'no ownerships';
  const table = new Table({ head: [...LIST_COLUMNS], chars: NO_BORDERS, style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 } });
  const rows = items.map((r) => listRow(r, { wide: opts.wide === true, ...(opts.now !== undefined ? { now: opts.now } : {}) }));
  for (const row of opts.wide ? rows : fitRows(LIST_COLUMNS, rows, opts.width ?? 120, SHRINKABLE)) table.push(row);
  return table
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n');
}
