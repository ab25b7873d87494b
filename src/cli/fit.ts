/**
 * Fitting a table of text cells into a width. The columns that may shrink first give up what they
 * have beyond their preferred width, widest first; if that is not enough, they shrink further in
 * the order given (the first listed gives way first), down to their header's width. Their cells
 * are cut with `…`: keeping the end for paths (it names the worktree), the start otherwise.
 * Columns that do not shrink (ids, states, times) stay whole. Columns are two spaces apart.
 */

export interface Shrinkable {
  column: number;
  /** given up only after every other shrinkable column reached its header's width */
  prefer: number;
  /** where a cut cell keeps its text: `end` for paths (`…/.worktrees/feature-x`), `start` otherwise */
  keep: 'start' | 'end';
  /** a better cut for this column's values (e.g. at path separators); its result is cut again if still too wide */
  cutter?: (text: string, width: number) => string;
}

const GAP = 2;

export function cut(text: string, width: number, keep: 'start' | 'end'): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  if (width <= 1) return '…';
  return keep === 'end' ? `…${chars.slice(chars.length - width + 1).join('')}` : `${chars.slice(0, width - 1).join('')}…`;
}

const len = (s: string) => [...s].length;

/** The rows with shrinkable cells cut so that header + rows fit `width`; unchanged when they already do. */
export function fitRows(header: readonly string[], rows: readonly (readonly string[])[], width: number, shrinkable: readonly Shrinkable[]): string[][] {
  const widths = header.map((h, i) => Math.max(len(h), ...rows.map((r) => len(r[i] ?? ''))));
  const total = () => widths.reduce((a, b) => a + b, 0) + GAP * (widths.length - 1);
  const floor = (i: number) => len(header[i] ?? '');
  while (total() > width) {
    const above = shrinkable.filter((s) => widths[s.column]! > Math.max(s.prefer, floor(s.column)));
    if (above.length === 0) break;
    widths[above.reduce((a, b) => (widths[b.column]! > widths[a.column]! ? b : a)).column]!--;
  }
  for (const s of shrinkable) {
    while (total() > width && widths[s.column]! > floor(s.column)) widths[s.column]!--;
  }
  return rows.map((r) =>
    r.map((cell, i) => {
      const s = shrinkable.find((x) => x.column === i);
      if (!s || len(cell) <= widths[i]!) return cell;
      return cut(s.cutter ? s.cutter(cell, widths[i]!) : cell, widths[i]!, s.keep);
    }),
  );
}
