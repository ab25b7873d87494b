/**
 * The MCP tools never lead an agent to put its tenure secret on a command line (src/mcp/tools.ts
 * SECRET_HANDLING): every tool and the server's instructions that hand out or name the secret say
 * how to pass it through a private file into git's environment instead. And that way is real: a
 * shell running the recommended command has the secret in its environment, not in any argument,
 * while the inline spelling puts it in /proc/<pid>/cmdline, which every local user reads.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SECRET_HANDLING, SERVER_INSTRUCTIONS, TOOLS } from '../../src/mcp/tools';

test('every text that names the tenure secret says how to keep it off command lines', () => {
  const texts = [...TOOLS.map((t) => [t.name, t.description] as const), ['instructions', SERVER_INSTRUCTIONS] as const];
  const naming = texts.filter(([, text]) => /OVERDECK_TENURE_SECRET|tenure\.env/.test(text));
  expect(naming.map(([name]) => name)).toEqual(
    expect.arrayContaining(['ownership.bind', 'ownership.accept_handoff', 'ownership.reclaim', 'ownership.tenure', 'instructions']),
  );
  for (const [name, text] of naming) expect([name, text.includes(SECRET_HANDLING)]).toEqual([name, true]);
  // Nothing shows the inline spelling as the way to do it.
  for (const [name, text] of texts) expect([name, /OVERDECK_TENURE_SECRET=\S/.test(text.replace(SECRET_HANDLING, ''))]).toEqual([name, false]);
});

/** What `ps` (any user) and the process's owner see of a shell running `script`. */
async function seenOf(script: string): Promise<{ cmdline: string; environ: string }> {
  const child = spawn('bash', ['-c', script], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  try {
    await new Promise((r) => setTimeout(r, 300));
    const read = (pid: number | string, what: string) => readFileSync(`/proc/${pid}/${what}`, 'utf8').replace(/\0/g, ' ');
    // The shell's own command line, and its child's (git's place): what every user reads; the child's environment, what git gets.
    const kid = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]!;
    return { cmdline: `${read(child.pid!, 'cmdline')} | ${read(kid, 'cmdline')}`, environ: read(kid, 'environ') };
  } finally {
    child.kill('SIGKILL');
  }
}

test('the recommended way keeps the secret out of the command line; the inline way does not', async () => {
  const secret = 'tenure-secret-canary-0123456789abcdef';
  const dir = mkdtempSync(path.join(os.tmpdir(), 'od-mcp-secret-'));
  try {
    const file = path.join(dir, 'own.env');
    writeFileSync(file, `OVERDECK_EXECUTION_SESSION_ID=s\nOVERDECK_EPOCH=1\nOVERDECK_TENURE_SECRET=${secret}\n`, { mode: 0o600 });
    // `sleep` stands for git: started by the shell, it inherits what the file exported. The shell waits (no exec), as a command string runs.
    const sourced = await seenOf(`set -a; . ${file}; set +a; sleep 5; true`);
    expect(sourced.cmdline).not.toContain(secret);
    expect(sourced.environ).toContain(`OVERDECK_TENURE_SECRET=${secret}`);
    const inline = await seenOf(`OVERDECK_TENURE_SECRET=${secret} sleep 5; true`);
    expect(inline.cmdline).toContain(secret);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
