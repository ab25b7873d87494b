import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { makeRepo } from '../support/git-fixture';
import { startHarness, type Harness } from '../support/harness';

const run = promisify(execFile);
const BIN = path.resolve(__dirname, '../../bin/od-worktree.js');

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.shutdown());

test('od-worktree admin rebuild-projection: --check finds the live projection consistent, a rebuild restores a damaged row', async () => {
  const repo = makeRepo(1);
  const wt = repo.worktrees[0];
  const view = await h.client.bind({
    repoRoot: repo.repoRoot,
    worktreePath: wt.path,
    branch: wt.branch,
    executionSessionId: 'admin-cli-session',
    runtime: 'codex-cli',
    worker: { runId: null, workerId: 'admin-cli-worker' },
    principal: { kind: 'executor', id: 'e', workerId: 'admin-cli-worker' },
    lane: 'the-lane',
  });
  const env = { ...process.env, DATABASE_URL: process.env.OD_TEST_DATABASE_URL! };
  const check = await run('node', [BIN, 'admin', 'rebuild-projection', '--check', '--json', '--ownership', view.ownershipId], { env });
  expect(JSON.parse(check.stdout)).toEqual({ consistent: true, diffs: [] });

  await h.pool.query(`UPDATE ownerships SET lane = 'tampered', record = jsonb_set(record, '{lane}', '"tampered"') WHERE ownership_id = $1`, [view.ownershipId]);
  const damaged = await run('node', [BIN, 'admin', 'rebuild-projection', '--check', '--json', '--ownership', view.ownershipId], { env }).catch(
    (e: { code: number; stdout: string }) => e,
  );
  expect((damaged as { code: number }).code).toBe(5);
  expect(JSON.parse((damaged as { stdout: string }).stdout).consistent).toBe(false);

  const rebuilt = await run('node', [BIN, 'admin', 'rebuild-projection', '--json', '--ownership', view.ownershipId], { env });
  expect(JSON.parse(rebuilt.stdout)).toMatchObject({ ownerships: 1, failures: [] });
  const row = await h.pool.query('SELECT lane, record FROM ownerships WHERE ownership_id = $1', [view.ownershipId]);
  expect(row.rows[0].lane).toBe('the-lane');
  expect(row.rows[0].record.lane).toBe('the-lane');
});

test('without DATABASE_URL the admin command says so and exits with the usage code', async () => {
  const env = { ...process.env, DATABASE_URL: '' };
  const res = await run('node', [BIN, 'admin', 'rebuild-projection', '--check'], { env }).catch((e: { code: number; stderr: string }) => e);
  expect((res as { code: number }).code).toBe(2);
  expect((res as { stderr: string }).stderr).toContain('DATABASE_URL is not set');
});
