import { spawn } from 'node:child_process';
import { currentProcessIdentity, localProcessAuthority, readBootId } from '../../src/activities/liveness';
import type { Owner } from '../../src/domain/identity';
import { claimedProcessProblem } from '../../src/domain/liveness';

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

test('a running process is alive', async () => {
  const id = await currentProcessIdentity(HOST);
  expect(await authority.check(owner(id))).toMatchObject({ verdict: 'alive' });
});

test('a process that has exited is dead', async () => {
  const child = spawn('sleep', ['30']);
  const id = await currentProcessIdentity(HOST, child.pid!);
  expect((await authority.check(owner(id))).verdict).toBe('alive');
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
  expect(await authority.check(owner(id))).toMatchObject({ verdict: 'dead' });
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
