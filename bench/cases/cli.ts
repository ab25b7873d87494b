import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { generateToken, hashToken } from '../../src/auth/tokens';
import { freePort } from '../../src/infra/ports';
import { PACKAGE_VERSION } from '../../src/version';
import { round } from '../breakdown';
import type { Cleanup } from '../../stack/cleanup';
import type { BenchContext, LiveOwnership } from '../context';
import { latencyRow, type Row } from '../report';
import { log } from '../stack';
import { summarize, timeOnce } from '../stats';
import { startService, type BuiltPackage } from './compiled';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Result> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { env, cwd, encoding: 'utf8', maxBuffer: 4 * 2 ** 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** One HTTP round trip as a fresh CLI process makes it: a new TCP connection, one GET, the body read. */
function roundTrip(url: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent: false }, (res) => {
      res.resume();
      res.once('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode} from ${url}`))));
    });
    req.once('error', reject);
  });
}

/**
 * The installed CLI against `node -e 1` (the floor of any node program) in the same rounds:
 * `--version`, `--help` (every command defined) and `who <path> --json` over HTTP to the compiled
 * API, plus bare HTTP round trips to the route who asks and to the record alone (a fresh
 * connection each, as a new process makes them). Every ratio is against `node -e 1` of this run. Each round runs every command once, the order rotating, so none always
 * runs on another's leftovers.
 */
export async function benchCli(ctx: BenchContext, cleanup: Cleanup, pkg: BuiltPackage, target: LiveOwnership): Promise<Row[]> {
  const { stack } = ctx;
  const token = generateToken();
  const port = await freePort();
  const api = await startService(
    cleanup,
    'api for the CLI (compiled)',
    [path.join(pkg.dir, 'dist/src/server/main.js')],
    {
      ...process.env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      TEMPORAL_ADDRESS: stack.temporalAddress,
      DATABASE_URL: stack.databaseUrl,
      TEMPORAL_TASK_QUEUE: stack.taskQueue,
      OD_HOST_ID: stack.hostId,
      OD_ALLOWED_ROOTS: stack.root,
      OD_API_HOST: '127.0.0.1',
      OD_API_PORT: String(port),
      OD_TOKENS: JSON.stringify({ principals: [{ id: 'bench-cli-reader', kind: 'reader', tokenSha256: hashToken(token) }] }),
    },
    'api listening',
  );
  try {
    const baseUrl = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = { ...process.env, OD_API_URL: baseUrl, OD_TOKEN: token };
    delete env.NODE_OPTIONS;
    const cwd = target.wt.path;
    const cmds: Record<string, string[]> = {
      node: ['-e', '1'],
      version: [pkg.bin, '--version'],
      help: [pkg.bin, '--help'],
      who: [pkg.bin, 'who', target.wt.path, '--json'],
    };
    // who's one request: the record with its liveness (PostgreSQL, then a Temporal query to the workflow).
    const whoUrl = `${baseUrl}/v1/ownership/live?worktreePath=${encodeURIComponent(target.wt.path)}`;
    // The record alone (PostgreSQL only), for what the Temporal query adds to that round trip.
    const recordUrl = `${baseUrl}/v1/ownership?worktreePath=${encodeURIComponent(target.wt.path)}`;
    const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
    // Answers checked before anything is timed.
    await roundTrip(whoUrl, headers);
    const version = await exec(cmds.version, env, cwd);
    if (version.code !== 0 || version.stdout.trim() !== PACKAGE_VERSION) throw new Error(`od-worktree --version answered ${JSON.stringify(version)}`);
    const who = await exec(cmds.who, env, cwd);
    if (who.code !== 0 || !who.stdout.includes(target.ownershipId))
      throw new Error(`od-worktree who answered ${who.code}: ${who.stdout.slice(0, 500)} ${who.stderr.slice(0, 500)}`);

    const rounds = Math.max(10, Math.round(40 * ctx.scale));
    const warmup = 2;
    const names = [...Object.keys(cmds), 'rtt', 'rttRecord'];
    const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < warmup + rounds; r++) {
      const order = names.map((_, i) => names[(i + r) % names.length]);
      for (const name of order) {
        const ms = await timeOnce(async () => {
          if (name === 'rtt') return roundTrip(whoUrl, headers);
          if (name === 'rttRecord') return roundTrip(recordUrl, headers);
          const res = await exec(cmds[name], env, cwd);
          if (res.code !== 0) throw new Error(`${name}: exit ${res.code}: ${res.stderr.slice(0, 300)}`);
        });
        if (r >= warmup) samples[name].push(ms);
      }
    }
    const s = Object.fromEntries(names.map((n) => [n, summarize(samples[n])])) as Record<string, ReturnType<typeof summarize>>;
    const budget = 2 * s.node.p50 + s.rtt.p50;
    log(
      `cli: node -e 1 ${round(s.node.p50)} ms (this run), --version ${round(s.version.p50)} ms (${round(s.version.p50 / s.node.p50)}x), --help ${round(s.help.p50)} ms (${round(s.help.p50 / s.node.p50)}x), who ${round(s.who.p50)} ms (${round(s.who.p50 / s.node.p50)}x; budget 2 x ${round(s.node.p50)} + ${round(s.rtt.p50)} = ${round(budget)} ms), who's round trip ${round(s.rtt.p50)} ms (the record alone ${round(s.rttRecord.p50)} ms)`,
    );
    const base = 'node -e 1';
    return [
      latencyRow('cli-version', 'od-worktree --version, installed (compiled)', s.version, s.node, base, { on: 'absolute', op: '<=', value: 150 }),
      latencyRow('cli-help', 'od-worktree --help (every command defined)', s.help, s.node, base, null),
      latencyRow(
        'cli-who',
        'od-worktree who <path> --json over HTTP',
        s.who,
        s.node,
        base,
        { on: 'absolute', op: '<=', value: round(budget) },
        {
          goalIs: '2 x p50(node -e 1) + p50(one HTTP round trip)',
          nodeP50Ms: round(s.node.p50),
          roundTripP50Ms: round(s.rtt.p50),
          budgetMs: round(budget),
          // who asks once: GET /v1/ownership/live (the record from PostgreSQL, liveness from a Temporal query)
          httpRequestsPerWho: 1,
          recordOnlyRoundTripP50Ms: round(s.rttRecord.p50),
        },
      ),
    ];
  } finally {
    await api.stop();
  }
}
