import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { envFileBlock, type HookContext, type OwnershipService, runHook, sessionOf, worktreeSlug } from '../../src/adapters/agent-hooks';
import { writeProjection } from '../../src/git/projection';
import { makeRepo, projection, type Fixture } from './git-fixture';

/**
 * The hook handlers against real worktrees with the service and the gate stood in for: which
 * identity the gate is run with (the owner's tenure only for the owner; an inherited secret never
 * passed to anyone else), that nothing of ours exits 2 (for PreToolUse that is a refusal of the
 * call, the gate's alone), and that the session env file keeps one block of ours and the rest.
 */

const FIXTURES = path.resolve(__dirname, '../fixtures/adapters');
let fx: Fixture;
let dir: string;
beforeEach(async () => {
  fx = makeRepo();
  dir = mkdtempSync(path.join(os.tmpdir(), 'od-hooks-'));
  await writeProjection(fx.wt1, projection('A', 1, { epoch: 3 }));
});
afterEach(() => {
  fx.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const payload = (tool: string, event: string, fill: Record<string, string>) => {
  let text = readFileSync(path.join(FIXTURES, tool, `${event}.json`), 'utf8');
  for (const [k, v] of Object.entries({ SESSION: 'tool-session-1', TRANSCRIPT: '/dev/null', COMMAND: 'git status', ...fill }))
    text = text.replaceAll(`{{${k}}}`, v);
  return text;
};

function context(env: NodeJS.ProcessEnv, calls: string[], over: Partial<OwnershipService> = {}): HookContext {
  // The gate stood in for: says whom it was run as, and refuses.
  const gate = path.join(dir, 'gate.sh');
  writeFileSync(gate, 'cat >/dev/null; echo "as ${OVERDECK_EXECUTION_SESSION_ID:-} ${OVERDECK_EPOCH:-} ${OVERDECK_TENURE_SECRET:-}" >&2; exit 2\n');
  const no = (what: string) => () => Promise.reject(new Error(`${what} was not expected`));
  const service: OwnershipService = {
    bind: no('bind'),
    release: no('release'),
    handoff: no('handoff'),
    removeWorktree: no('removeWorktree'),
    list: no('list'),
    heartbeat: (id, b) => {
      calls.push(`heartbeat ${id} ${b.executionSessionId} ${b.epoch}`);
      return Promise.resolve({});
    },
    tenure: (id, b) => {
      calls.push(`tenure ${id} ${b.executionSessionId}`);
      return Promise.resolve({
        secret: 's3cret',
        epoch: 3,
        executionSessionId: b.executionSessionId,
        env: { OVERDECK_EXECUTION_SESSION_ID: b.executionSessionId, OVERDECK_EPOCH: '3', OVERDECK_TENURE_SECRET: 's3cret' },
      });
    },
    ...over,
  };
  return {
    env,
    api: () => service,
    serviceError: (e) => (e instanceof Error && e.message === 'down' ? { code: 'unreachable', message: 'down' } : null),
    gateHook: gate,
    gateDir: '/opt/od/bin/git-gate',
    cli: "'node' 'od-worktree.js'",
  };
}

describe('PreToolUse', () => {
  test("the owner's call is judged with its tenure, and beats", async () => {
    const calls: string[] = [];
    const r = await runHook(
      'claude-code',
      'pre-tool-use',
      payload('claude-code', 'pre-tool-use', { CWD: fx.wt1 }),
      context({ PATH: process.env.PATH, OVERDECK_EXECUTION_SESSION_ID: 'session_A' }, calls),
    );
    expect(r).toEqual({ exit: 2, stdout: '', stderr: 'as session_A 3 s3cret\n' });
    expect(calls.sort()).toEqual(['heartbeat own_A session_A 3', 'tenure own_A session_A']);
  });

  test("another session's is judged as itself: no tenure asked, an inherited secret and epoch not passed on", async () => {
    const calls: string[] = [];
    const env = { PATH: process.env.PATH, OVERDECK_TENURE_SECRET: 'inherited', OVERDECK_EPOCH: '3' };
    const r = await runHook('codex', 'pre-tool-use', payload('codex', 'pre-tool-use', { CWD: fx.wt1 }), context(env, calls));
    expect(r).toEqual({ exit: 2, stdout: '', stderr: 'as codex-tool-session-1  \n' });
    expect(calls).toEqual([]);
  });

  test('a service that is down still runs the gate, as the session without its secret', async () => {
    const r = await runHook(
      'claude-code',
      'pre-tool-use',
      payload('claude-code', 'pre-tool-use', { CWD: fx.wt1 }),
      context({ PATH: process.env.PATH, OVERDECK_EXECUTION_SESSION_ID: 'session_A' }, [], {
        tenure: () => Promise.reject(new Error('down')),
        heartbeat: () => Promise.reject(new Error('down')),
      }),
    );
    expect(r).toEqual({ exit: 2, stdout: '', stderr: 'as session_A  \n' });
  });

  test('a gate that answers before reading the payload is its answer, not an EPIPE', async () => {
    const ctx = context({ PATH: process.env.PATH, OVERDECK_EXECUTION_SESSION_ID: 'session_A' }, []);
    writeFileSync(ctx.gateHook, 'echo early >&2; exit 2\n');
    // Larger than a pipe's buffer, so the write is still going when the gate has exited.
    const r = await runHook(
      'claude-code',
      'pre-tool-use',
      payload('claude-code', 'pre-tool-use', { CWD: fx.wt1, COMMAND: `git status ${'x'.repeat(1 << 20)}` }),
      ctx,
    );
    expect(r).toEqual({ exit: 2, stdout: '', stderr: 'early\n' });
  });

  test('nothing of ours exits 2: a payload that is not JSON, not the shape, or an unknown event', async () => {
    const ctx = context({ PATH: process.env.PATH }, []);
    for (const [event, input] of [
      ['pre-tool-use', '{'],
      ['pre-tool-use', '{"hook_event_name":"PreToolUse"}'],
      ['no-such-event', '{}'],
    ] as const) {
      const r = await runHook('claude-code', event, input, ctx);
      expect({ event, exit: r.exit, stderr: r.stderr }).toEqual({
        event,
        exit: 1,
        stderr: expect.stringMatching(/^od-worktree: refused: (invalid_input|usage): /),
      });
    }
  });
});

describe('SessionStart', () => {
  test("Claude Code's env file gets one block of ours, no secret, and keeps what others wrote", async () => {
    const file = path.join(dir, 'env.sh');
    writeFileSync(file, 'export OTHER=1\n');
    const ctx = context({ PATH: process.env.PATH, CLAUDE_ENV_FILE: file }, []);
    const start = payload('claude-code', 'session-start', { CWD: dir });
    expect((await runHook('claude-code', 'session-start', start, ctx)).exit).toBe(0);
    expect((await runHook('claude-code', 'session-start', start, ctx)).exit).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(text).toBe(`export OTHER=1\n${envFileBlock('claude-code-tool-session-1', ctx)}`);
    expect(text.match(/od-worktree: begin/g)).toHaveLength(1);
    expect(text).not.toContain('s3cret');
  });

  test("a session starting in another's worktree is told, and nothing is bound", async () => {
    const r = await runHook('codex', 'session-start', payload('codex', 'session-start', { CWD: fx.wt1 }), context({ PATH: process.env.PATH }, []));
    expect(r).toEqual({ exit: 0, stdout: expect.stringContaining('this worktree is owned by session session_A (ownership own_A, epoch 3)'), stderr: '' });
  });
});

test('names and sessions as git and the service take them', () => {
  expect(sessionOf('claude-code', '5f0c 1/x', {})).toBe('claude-code-5f0c-1/x');
  expect(sessionOf('codex', 'abc', { OVERDECK_EXECUTION_SESSION_ID: 'sess-42' })).toBe('sess-42');
  expect(['feat auth', '../../etc', 'a..b', 'x.lock', '-y.', '...', 'ok_1.2'].map(worktreeSlug)).toEqual(['feat-auth', 'etc', 'a.b', 'x', 'y', null, 'ok_1.2']);
});
