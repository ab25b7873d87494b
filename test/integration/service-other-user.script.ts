/**
 * Run by service-other-user.test.ts as the service's Unix user, against worktrees another user
 * (the agent) owns: the host agent's own activities, each as the worker would run it. Prints one
 * JSON line: what each step answered, or the error it ended with.
 */
import { createHostActivities } from '../../src/activities';
import { currentProcessIdentity, localProcessAuthority, noAuthority } from '../../src/activities/liveness';
import { emptyRecord, type OwnershipRecord } from '../../src/domain/projection';
import { parseKeyring } from '../../src/keys/message-seal';

async function main(): Promise<void> {
  const [phase, root, repo, wt] = process.argv.slice(2) as ['hold' | 'release' | 'liveness', string, string, string];
  // A made-up service key: the projections written here carry the tenure hashes it derives.
  const keyring = parseKeyring(Buffer.alloc(32, 7).toString('base64'), 'test key');
  const host = createHostActivities({ allowedRoots: [root], authority: noAuthority, keyring });
  const record = (state: 'active' | 'released', seq: number): OwnershipRecord => ({
    ...emptyRecord({ ownershipId: 'own_svc', repoRoot: repo, worktreePath: wt, branch: 'feat', hostId: 'h' }),
    owner: {
      executionSessionId: 'session_svc',
      runtime: 'codex-cli',
      parentExecutionSessionId: null,
      conversation: null,
      worker: { runId: null, workerId: 'w' },
      process: null,
    },
    worker: { runId: null, workerId: 'w' },
    state,
    epoch: 1,
    seq,
    claimedAt: '2026-08-20T00:00:00.000Z',
    lastSeenAt: '2026-08-20T00:01:00.000Z',
  });
  const out: Record<string, unknown> = {};
  const step = async (name: string, fn: () => Promise<unknown>) => {
    try {
      out[name] = { ok: await fn() };
    } catch (err) {
      out[name] = { error: err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err) };
    }
  };
  if (phase === 'hold') {
    await step('inspect', () => host.inspectWorktree(wt, 'feat'));
    await step('project', () => host.applyLocalProjection(record('active', 3)));
    await step('wip', () => host.preserveWip(wt, 'own_svc', 3));
    await step('presence', () => host.worktreePresence(wt));
  } else if (phase === 'liveness') {
    // `root` is a pid here: a process of another user (root) that carries the session in an environment this user cannot read.
    const pid = Number(root);
    await step('verdict', async () => localProcessAuthority('h').check({ ...record('active', 3).owner!, process: await currentProcessIdentity('h', pid) }));
  } else {
    await step('release', () => host.applyLocalProjection(record('released', 4)));
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

void main().then(() => process.exit(0));
