import { parseArgs } from 'node:util';
import { whyNoNetns } from '../multihost/netns';
import { runMultiHost } from '../multihost/run';

/**
 * npm run multihost: three hosts as Linux network namespaces (their own addresses, links to one
 * bridge) share one Temporal dev server and one PostgreSQL; a host is cut off by taking its link
 * down. Prints each check with its details and each bound with its measured figure. Exit 0 when
 * all five checks pass, 1 when one fails, 2 on bad arguments, 70 when the run itself broke, 75
 * (EX_TEMPFAIL) when network namespaces cannot be made here (not root, no `ip`), saying why.
 */

const log = (line: string) => process.stderr.write(`[multihost] ${line}\n`);
const USAGE = `usage: npm run multihost -- [--short] [--seed N] [--keep]
  --short   the quick mode (part of npm test): shorter cut-off and outage holds
  --keep    keep the run's temp dir (each process's log, requests.jsonl, intents.jsonl)`;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      options: { short: { type: 'boolean' }, seed: { type: 'string' }, keep: { type: 'boolean' }, help: { type: 'boolean' } },
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const seed = values.seed === undefined ? 20261202 : Number(values.seed);
  if (!Number.isInteger(seed)) {
    process.stderr.write(`--seed must be an integer\n${USAGE}\n`);
    return 2;
  }
  const why = whyNoNetns();
  if (why) {
    log(`not run: ${why}`);
    return 75;
  }
  const short = values.short === true;
  log(`seed ${seed} (${short ? 'short' : 'long'} mode)`);
  const t0 = Date.now();
  const result = await runMultiHost({ short, keep: values.keep === true, seed, log });
  for (const c of result.checks) {
    process.stdout.write(`[multihost] ${c.id} ${c.ok ? 'PASS' : 'FAIL'} ${c.title}\n`);
    for (const d of c.details) process.stdout.write(`[multihost]     ${d}\n`);
  }
  for (const b of result.bounds)
    process.stdout.write(`[multihost] bound ${b.measuredMs <= b.boundMs ? 'met' : 'MISSED'}: ${b.name}: ${b.measuredMs} ms (bound ${b.boundMs} ms)\n`);
  const ok = result.checks.length === 5 && result.checks.every((c) => c.ok);
  process.stdout.write(
    `[multihost] ${ok ? 'PASS' : 'FAIL'} ${result.checks.filter((c) => c.ok).length}/5 checks in ${Math.round((Date.now() - t0) / 1000)} s\n`,
  );
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`[multihost] the run broke: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(70);
  },
);
