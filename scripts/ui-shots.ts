import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { temporalCliPath } from '../src/infra/tools';

/**
 * `npm run ui-shots [-- --out <dir>] [-- --workflow-id <id>]`: screenshots of the Temporal UI as a
 * person sees it, for docs/temporal-ui.md: the ownership list, and one ownership's history. Optional: it
 * needs a running service (`npm start`, with an ownership or two, e.g. after `npm run demo`) and a
 * Chromium from the OS packages (`apt-get install chromium`; or CHROMIUM=/path/to/chrome). Only
 * the UI on 127.0.0.1 is opened; nothing is downloaded.
 */

const say = (m: string) => process.stdout.write(`${m}\n`);
const fail = (m: string, code = 2): never => {
  process.stderr.write(`ui-shots: ${m}\n`);
  process.exit(code);
};

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function chromium(): string {
  const named = process.env.CHROMIUM;
  if (named) return existsSync(named) ? named : fail(`CHROMIUM=${named} does not exist`);
  for (const c of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    try {
      return execFileSync('sh', ['-c', `command -v ${c}`], { encoding: 'utf8' }).trim();
    } catch {
      // not on PATH: the next name
    }
  }
  return fail('needs a Chromium: `apt-get install chromium` (Debian, Ubuntu: `chromium-browser`), or set CHROMIUM to its path');
}

/**
 * The newest ownership whose workflow has completed, else the newest one: a running workflow's
 * page keeps a long poll open, and headless Chromium then never finishes its virtual time.
 */
async function pickOwnership(address: string, namespace: string): Promise<{ workflowId: string; runId: string; running: boolean }> {
  const list = (query: string) =>
    new Promise<Array<{ execution: { workflowId: string; runId: string } }>>((resolve) => {
      const args = ['workflow', 'list', '--address', address, '--namespace', namespace, '--query', query, '--limit', '1', '--output', 'json'];
      execFile(temporalCliPath(), args, { encoding: 'utf8' }, (err, stdout, stderr) => {
        if (err) fail(`temporal workflow list at ${address}: ${(stderr || err.message).trim()} (is \`npm start\` running?)`, 4);
        resolve(JSON.parse(stdout || '[]'));
      });
    });
  const done = (await list("WorkflowType = 'ownershipWorkflow' AND ExecutionStatus = 'Completed'"))[0];
  if (done) return { ...done.execution, running: false };
  const any = (await list("WorkflowType = 'ownershipWorkflow'"))[0];
  if (!any) return fail('no ownership yet: bind one first (e.g. `npm run demo`)', 3);
  return { ...any.execution, running: true };
}

/**
 * One headless screenshot. The UI is a single-page app: the virtual-time budget lets its requests
 * finish before the picture is taken. Chromium's helpers are its children: the whole group is
 * stopped if it hangs. As root Chromium refuses to start without --no-sandbox.
 */
function shot(browser: string, url: string, file: string): Promise<void> {
  const flags = ['--headless=new', '--disable-gpu', '--hide-scrollbars', '--window-size=1600,1000', '--virtual-time-budget=10000', `--screenshot=${file}`];
  if (process.getuid?.() === 0) flags.push('--no-sandbox');
  return new Promise((resolve) => {
    const child = spawn(browser, [...flags, url], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 90_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0 || !existsSync(file) || statSync(file).size === 0) {
        const why = signal
          ? 'Chromium did not finish within 90 s (a running workflow keeps the page busy: pick a completed one with --workflow-id)'
          : stderr
              .trim()
              .split('\n')
              .filter((l) => !l.includes('dbus'))
              .slice(-2)
              .join(' ');
        fail(`no screenshot of ${url}: ${why || `exit ${code}`}`, 70);
      }
      resolve();
    });
  });
}

async function main(): Promise<void> {
  const cfg = loadConfig();
  const browser = chromium();
  const out = path.resolve(arg('out') ?? 'docs/img');
  const address = cfg.temporalAddress || `127.0.0.1:${cfg.temporalPort}`;
  const ui = `http://127.0.0.1:${cfg.temporalUiPort}`;
  const ns = encodeURIComponent(cfg.temporalNamespace);
  const one = arg('workflow-id') ? { workflowId: arg('workflow-id')!, runId: '', running: false } : await pickOwnership(address, cfg.temporalNamespace);
  mkdirSync(out, { recursive: true });

  const list = path.join(out, 'temporal-ui-list.png');
  await shot(browser, `${ui}/namespaces/${ns}/workflows?query=${encodeURIComponent("WorkflowType = 'ownershipWorkflow'")}`, list);
  say(`the ownership list:      ${list}`);
  const history = path.join(out, 'temporal-ui-ownership.png');
  const run = one.runId ? `/${encodeURIComponent(one.runId)}` : '';
  await shot(browser, `${ui}/namespaces/${ns}/workflows/${encodeURIComponent(one.workflowId)}${run}/history`, history);
  say(`one ownership (${one.workflowId}${one.running ? ', running' : ''}): ${history}`);
}

main().catch((err) => fail(err instanceof Error ? err.message : String(err), 70));
