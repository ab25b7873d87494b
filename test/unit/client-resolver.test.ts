import type { Client } from '@temporalio/client';
import { OwnershipClient, OwnershipError, type BindRequest, type LocalWorktree, type WorktreeResolver } from '../../src/client';
import type { SeenProcess } from '../../src/domain/liveness';
import { ownershipWorkflowId } from '../../src/ids/workflow-id';

/**
 * The typed client asks its worktree resolver (src/client/worktree-resolver.ts) what the host says,
 * and runs no git or /proc of its own. The host here is in memory, at paths that exist nowhere, and
 * its answers differ from what git and /proc on this machine would say: a client that went around
 * the port would answer otherwise. Every refusal comes before a message would be sent, and the
 * Temporal client fails the test if it is touched at all.
 */

const untouchedTemporal = new Proxy(
  {},
  {
    get: (_t, prop) => {
      throw new Error(`Temporal was reached (${String(prop)})`);
    },
  },
) as Client;

const HOST = 'host-a';
const NO_WORKTREE = 'the in-memory host has no worktree there';

interface MemoryHost {
  resolver: WorktreeResolver;
  calls: string[];
}

/** `/alias/...` is a symlinked spelling of `/real/...`; only `/real/wt` is a worktree. */
function memoryHost(opts: { branch?: string | null; process?: SeenProcess | null } = {}): MemoryHost {
  const calls: string[] = [];
  const under = (p: string, roots: readonly string[]) => roots.some((r) => p === r || p.startsWith(`${r}/`));
  const resolver: WorktreeResolver = {
    canonicalPath: async (p, roots) => {
      calls.push(`canonicalPath ${p}`);
      const real = p.replace(/^\/alias\//, '/real/');
      if (roots && !under(real, roots)) throw new OwnershipError('path_outside_allowed_roots');
      return real;
    },
    identify: async (p, roots) => {
      calls.push(`identify ${p} [${roots?.join(',') ?? ''}]`);
      if (p !== '/real/wt') throw new OwnershipError('path_not_found', NO_WORKTREE);
      const wt: LocalWorktree = { worktreePath: p, repoRoot: '/real/repo', branch: opts.branch ?? null, projectedOwnershipId: async () => null };
      return wt;
    },
    seenProcess: (pid) => {
      calls.push(`seenProcess ${pid}`);
      return opts.process ?? null;
    },
  };
  return { resolver, calls };
}

function clientOn(host: MemoryHost): OwnershipClient {
  return new OwnershipClient({ client: untouchedTemporal, resolver: host.resolver, taskQueue: 'ownership', hostId: HOST, allowedRoots: ['/real'] });
}

const bindRequest = (worktreePath: string, extra: Partial<BindRequest> = {}): BindRequest => ({
  worktreePath,
  executionSessionId: 'session-1',
  runtime: 'codex-cli',
  worker: { workerId: 'worker-1', runId: null },
  principal: { kind: 'executor', id: 'exec-1', workerId: 'worker-1' },
  ...extra,
});

async function refusal(p: Promise<unknown>): Promise<OwnershipError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OwnershipError);
  return err as OwnershipError;
}

test("bind refuses with the resolver's path_not_found, asked at the canonical path within the allowed roots", async () => {
  const host = memoryHost();
  const err = await refusal(clientOn(host).bind(bindRequest('/alias/nothing-here')));
  expect({ code: err.code, message: err.message }).toEqual({ code: 'path_not_found', message: NO_WORKTREE });
  expect(host.calls).toEqual(['canonicalPath /alias/nothing-here', 'identify /real/nothing-here [/real]']);
});

test('a path the resolver puts outside the allowed roots is refused before the worktree is looked at', async () => {
  const host = memoryHost();
  expect((await refusal(clientOn(host).bind(bindRequest('/elsewhere/wt')))).code).toBe('path_outside_allowed_roots');
  expect(host.calls).toEqual(['canonicalPath /elsewhere/wt']);
});

test("the worktree the resolver identifies is checked against the caller's repository and branch", async () => {
  const client = clientOn(memoryHost({ branch: 'feature/x' }));
  expect((await refusal(client.bind(bindRequest('/alias/wt', { repoRoot: '/real/other-repo' })))).code).toBe('repo_root_mismatch');
  const wrongBranch = await refusal(client.bind(bindRequest('/alias/wt', { branch: 'feature/y' })));
  expect({ code: wrongBranch.code, details: wrongBranch.details }).toEqual({ code: 'branch_mismatch', details: { branch: 'feature/x' } });
  expect((await refusal(clientOn(memoryHost({ branch: null })).bind(bindRequest('/real/wt')))).code).toBe('detached_head');
  expect(await client.checkedOutBranch({ hostId: HOST, worktreePath: '/alias/wt' })).toBe('feature/x');
});

test("a worktree is addressed by the resolver's spelling of its path", async () => {
  expect(await clientOn(memoryHost()).workflowIdOf({ worktreePath: '/alias/wt' })).toBe(ownershipWorkflowId(HOST, '/real/wt'));
});

test("a new owner's process on this host is judged by what the resolver says of it, before its worktree", async () => {
  const host = memoryHost({ branch: 'feature/x', process: { bootId: 'boot-a', startTime: '777', sessionInEnviron: 'session-2' } });
  const err = await refusal(clientOn(host).bind(bindRequest('/real/wt', { process: { hostId: HOST, bootId: 'boot-a', pid: 4242, startTime: '777' } })));
  expect({ code: err.code, details: err.details }).toEqual({ code: 'process_not_session', details: { reason: 'process 4242 runs for another session' } });
  expect(host.calls).toEqual(['seenProcess 4242']);
});
