import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { buildAndScore, renderScore, STYLES, type CorpusScore } from '../../scripts/provenance-corpus';
import { startHarness, testTenureSecret, type Harness } from '../support/harness';
import { withStallReport } from '../support/stall-report';

/**
 * The provenance score at small size (`npm run provenance-score` is the full run,
 * docs/provenance.md#the-score): three rounds, so every style lands with a receipt and without one. One test per
 * style, so a style that regresses is named by the failing test.
 */

let h: Harness;
let score: CorpusScore;

beforeAll(async () => {
  h = await startHarness();
  const dir = mkdtempSync(path.join(process.env.OD_TEST_TMP!, 'corpus-'));
  // Once, in a CI run, this setup waited out jest's 300 s with nothing said: past 240 s it says what it waits on.
  score = await withStallReport(
    h,
    'the corpus',
    240_000,
    buildAndScore(
      { client: h.client, pool: h.pool, hostId: h.hostId, allowedRoots: [process.env.OD_TEST_TMP!], dir, tenureSecret: testTenureSecret },
      { rounds: 3 },
    ),
  );
}, 300_000);
afterAll(async () => h?.shutdown());

/** Without a receipt, recall must be 100% for these; the others may answer unknown, never wrong. */
const RECALLED_WITHOUT_RECEIPT = new Set(['rebase', 'cherry_pick', 'cherry_pick_x', 'squash']);

describe.each(STYLES.map((style) => [style]))('%s landings', (style) => {
  test('land with a receipt and without one', () => {
    expect(
      score.rows
        .filter((r) => r.style === style)
        .map((r) => r.receipt)
        .sort(),
    ).toEqual([false, true]);
  });

  test('precision 100%: no commit attributed to the wrong ownership or session', () => {
    expect({ wrong: score.wrong.filter((w) => w.style === style), table: renderScore(score) }).toEqual({ wrong: [], table: expect.any(String) });
  });

  test(`recall 100% with a receipt${RECALLED_WITHOUT_RECEIPT.has(style) ? ' and without one' : ''}`, () => {
    const short = score.rows.filter((r) => r.style === style && r.recall < 1 && (r.receipt || RECALLED_WITHOUT_RECEIPT.has(style)));
    expect({ short, table: renderScore(score) }).toEqual({ short: [], table: expect.any(String) });
  });
});
