import { Cleanup } from '../stack/cleanup';
import { log, startStack } from '../bench/stack';
import { buildAndScore, renderScore } from './provenance-corpus';

/**
 * `npm run provenance-score`: builds the provenance corpus (scripts/provenance-corpus.ts) on its own
 * stack (a Temporal dev server and a fresh database, as the bench does) and prints recall and
 * precision per landing style, with and without a receipt. PROVENANCE_SCORE_ROUNDS (default 53:
 * 583 landings, 1,007 landed commits) sets the size; one round lands once in every style.
 * Exits 1 when any attribution is wrong (precision below 100% anywhere).
 */
async function main(): Promise<void> {
  const rounds = Number(process.env.PROVENANCE_SCORE_ROUNDS ?? '53');
  if (!Number.isSafeInteger(rounds) || rounds <= 0) throw new Error('PROVENANCE_SCORE_ROUNDS must be a positive integer');
  const cleanup = new Cleanup();
  const started = Date.now();
  try {
    const stack = await startStack(cleanup);
    const score = await buildAndScore(
      {
        client: stack.ownership,
        pool: stack.pool,
        hostId: stack.hostId,
        allowedRoots: [stack.root],
        dir: stack.root,
        tenureSecret: stack.tenureSecret,
        log: (l) => log(l),
      },
      { rounds },
    );
    process.stdout.write(`${renderScore(score)}\n\n(${Math.round((Date.now() - started) / 1000)} s)\n`);
    for (const w of score.wrong.slice(0, 20)) process.stdout.write(`wrong: ${w.style} ${w.sha} expected ${w.expected.join(', ')} got ${w.got.join(', ')}\n`);
    if (score.wrong.length > 0) process.exitCode = 1;
  } finally {
    await cleanup.run(log);
  }
}

main().catch((err) => {
  process.stderr.write(`provenance-score: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
