import { spawn } from 'node:child_process';
import { currentProcessIdentity, localProcessAuthority, readBootId } from '../../src/activities/liveness';
import type { Owner } from '../../src/domain/identity';
import { claimedProcessProblem, runningProcessVerdict } from '../../src/domain/liveness';

/** The local execution-session authority against real processes: only proof of death says `dead`. */
const HOST = 'host-under-test';
const authority = localProcessAuthority(HOST);
const owner = (process: Owner['process']): Owner => ({
  executionSessionId: 's',
  runtime: 'codex-cli',
  parentExecutionSessionId: null,
  conversation: null,
  worker: null,
  process,
});

/** A process of session `s`: its environment carries the session, as `od-worktree exec` and tenure.env make it. */
const sessionProcess = (session = 's') => spawn('sleep', ['30'], { env: { ...process.env, OVERDECK_EXECUTION_SESSION_ID: session } });

test('a running process that carries the session is alive', async () => {
  const child = sessionProcess();
  try {
    const id = await currentProcessIdentity(HOST, child.pid!);
    expect(await authority.check(owner(id))).toMatchObject({ verdict: 'alive' });
  } finally {
    child.kill('SIGKILL');
  }
});

test('a running process that cannot prove the session is unknown, never alive, and dead past the bound', async () => {
  let now = 1_000_000;
  const bounded = localProcessAuthority(HOST, { unprovenBoundMs: 60_000, nowMs: () => now });
  // This jest process names no session; pid 2 (kthreadd, a kernel thread) neither; a process of another session proves nothing of this one.
  const own = await currentProcessIdentity(HOST);
  const kthread = await currentProcessIdentity(HOST, 2).catch(() => null);
  const other = sessionProcess('t');
  try {
    const others = await currentProcessIdentity(HOST, other.pid!);
    for (const id of [own, others, ...(kthread ? [kthread] : [])]) {
      expect(await bounded.check(owner(id))).toMatchObject({ verdict: 'unknown', detail: expect.stringMatching(/does not prove the session/) });
    }
    now += 59_000;
    expect((await bounded.check(owner(own))).verdict).toBe('unknown');
    now += 1_000;
    expect(await bounded.check(owner(own))).toMatchObject({ verdict: 'dead', detail: expect.stringMatching(/unproven for 60 s, past the bound/) });
    expect((await bounded.check(owner(others))).verdict).toBe('dead');
    // The bound is per tenure's process: a new owner naming the same process starts its own.
    expect((await bounded.check({ ...owner(own), executionSessionId: 'u' })).verdict).toBe('unknown');
  } finally {
    other.kill('SIGKILL');
  }
});

test('a process that proves the session again is alive, and its bound starts over', async () => {
  let now = 0;
  const bounded = localProcessAuthority(HOST, { unprovenBoundMs: 1_000, nowMs: () => now });
  const child = sessionProcess();
  try {
    const id = await currentProcessIdentity(HOST, child.pid!);
    expect((await bounded.check(owner(id))).verdict).toBe('alive');
    now += 10_000;
    expect((await bounded.check(owner(id))).verdict).toBe('alive');
  } finally {
    child.kill('SIGKILL');
  }
});

test('a process that has exited is dead', async () => {
  const child = sessionProcess();
  const id = await currentProcessIdentity(HOST, child.pid!);
  expect((await authority.check(owner(id))).verdict).toBe('alive');
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
  expect(await authority.check(owner(id))).toMatchObject({ verdict: 'dead' });
});

test('the verdict on a running process is by proof alone (runningProcessVerdict)', () => {
  const bound = { sinceMs: 0, nowMs: 0, boundMs: 10 };
  expect(runningProcessVerdict(7, 's', 's', bound).verdict).toBe('alive');
  expect(runningProcessVerdict(7, undefined, 's', bound)).toMatchObject({ verdict: 'unknown', detail: expect.stringMatching(/unreadable/) });
  expect(runningProcessVerdict(7, null, 's', bound)).toMatchObject({ verdict: 'unknown', detail: expect.stringMatching(/carries no/) });
  expect(runningProcessVerdict(7, 't', 's', bound)).toMatchObject({ verdict: 'unknown', detail: expect.stringMatching(/another session/) });
  expect(runningProcessVerdict(7, undefined, 's', { ...bound, nowMs: 10 }).verdict).toBe('dead');
  expect(runningProcessVerdict(7, 's', 's', { ...bound, nowMs: 10 }).verdict).toBe('alive');
});

test('a reused pid (different start time) is dead, not alive', async () => {
  const id = await currentProcessIdentity(HOST);
  expect(await authority.check(owner({ ...id, startTime: String(Number(id.startTime) + 1) }))).toMatchObject({ verdict: 'dead' });
});

test('a different boot id means the host rebooted: dead', async () => {
  const id = await currentProcessIdentity(HOST);
  expect(await readBootId()).toBe(id.bootId);
  expect(await authority.check(owner({ ...id, bootId: '00000000-0000-4000-8000-000000000000' }))).toMatchObject({ verdict: 'dead' });
});

test('a session on another host, or with no process identity, is unknown (fail closed)', async () => {
  const id = await currentProcessIdentity(HOST);
  expect(await authority.check(owner({ ...id, hostId: 'elsewhere' }))).toMatchObject({ verdict: 'unknown' });
  expect(await authority.check(owner(null))).toMatchObject({ verdict: 'unknown' });
});

test('a claimed process is the session’s own only if it runs now, as claimed, and for no other session', () => {
  const claimed = { pid: 4242, bootId: 'boot', startTime: '100' };
  const seen = { bootId: 'boot', startTime: '100', sessionInEnviron: null };
  expect(claimedProcessProblem(claimed, seen, 's')).toBeNull();
  expect(claimedProcessProblem(claimed, { ...seen, sessionInEnviron: 's' }, 's')).toBeNull();
  expect(claimedProcessProblem(claimed, { ...seen, sessionInEnviron: undefined }, 's')).toBeNull();
  expect(claimedProcessProblem({ ...claimed, pid: 1 }, seen, 's')).toMatch(/init/);
  expect(claimedProcessProblem(claimed, { ...seen, bootId: 'other' }, 's')).toMatch(/boot id/);
  expect(claimedProcessProblem(claimed, { ...seen, startTime: null }, 's')).toMatch(/no process/);
  expect(claimedProcessProblem(claimed, { ...seen, startTime: '101' }, 's')).toMatch(/another process/);
  expect(claimedProcessProblem(claimed, { ...seen, sessionInEnviron: 't' }, 's')).toMatch(/another session/);
});
