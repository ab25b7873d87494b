import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EVENTS, TOOLS, type Tool } from '../../src/adapters/hook-payloads';
import { hookConfig, type HookSettings, isOurs, mergeHooks, render } from '../../src/adapters/install';
import { runCli } from '../support/cli';

/**
 * `od-worktree integrate <tool>` (docs/integrating.md#agent-tools): the recorded payloads parse
 * as the documented shapes the hooks check, the installed configuration has the tool's documented
 * shape with one of our commands per event, and writing merges into the user's file: their hooks
 * and settings kept, ours replaced in place, a second install byte for byte the first; --print
 * writes nothing.
 */

const FIXTURES = path.resolve(__dirname, '../fixtures/adapters');
const fill = (text: string) =>
  text
    .replaceAll('{{SESSION}}', '5f0c1e2a-3b4c-4d5e-8f90-a1b2c3d4e5f6')
    .replaceAll('{{CWD}}', '/srv/work/product')
    .replaceAll('{{TRANSCRIPT}}', '/home/u/.claude/projects/x/5f0c.jsonl')
    .replaceAll('{{WORKTREE}}', '/srv/work/product/.claude/worktrees/lane-a')
    .replaceAll('{{NAME}}', 'lane-a')
    .replaceAll('{{COMMAND}}', 'git status');
const fixture = (tool: Tool, event: string): unknown => JSON.parse(fill(readFileSync(path.join(FIXTURES, tool, `${event}.json`), 'utf8')));
const userFile = (tool: Tool) => path.join(FIXTURES, tool, tool === 'claude-code' ? 'settings.user.json' : 'hooks.user.json');
const CLI = "'/usr/bin/node' '/opt/od/bin/od-worktree.js'";

describe.each(TOOLS)('%s', (tool) => {
  const events = Object.entries(EVENTS[tool]);

  test.each(events.map(([e]) => e))('the recorded %s payload is the documented shape', (event) => {
    const spec = (EVENTS[tool] as Record<string, { schema: { safeParse(v: unknown): { success: boolean } } }>)[event]!;
    expect(spec.schema.safeParse(fixture(tool, event)).success).toBe(true);
    // and a payload without the fields the hook needs is not
    expect(spec.schema.safeParse({ hook_event_name: 'x' }).success).toBe(false);
  });

  test('every event it installs has a recorded payload, and nothing else is recorded', () => {
    const recorded = readdirSync(path.join(FIXTURES, tool))
      .filter((f) => !f.includes('.user.'))
      .map((f) => f.replace(/\.json$/, ''))
      .sort();
    expect(recorded).toEqual(events.map(([e]) => e).sort());
  });

  test('the configuration has the documented shape: event -> [{ matcher?, hooks: [{ type: command, command }] }]', () => {
    const config = hookConfig(tool, CLI);
    expect(Object.keys(config).sort()).toEqual(events.map(([, s]) => s.hookEvent).sort());
    for (const [event, { hookEvent }] of events) {
      const groups = config[hookEvent]!;
      expect(groups).toHaveLength(1);
      expect(groups[0]!.hooks).toEqual([expect.objectContaining({ type: 'command', command: `${CLI} hook ${tool} ${event}` })]);
      expect(isOurs(groups[0]!.hooks[0]!)).toBe(true);
    }
    expect(config.PreToolUse![0]!.matcher).toBe('Bash');
    // Claude Code has no matcher for the worktree events
    if (tool === 'claude-code') expect(config.WorktreeCreate![0]!.matcher).toBeUndefined();
  });

  test("merging keeps the user's hooks and settings, replaces an older install of ours, and is idempotent", () => {
    const user = JSON.parse(readFileSync(userFile(tool), 'utf8')) as HookSettings;
    const once = mergeHooks(user, hookConfig(tool, CLI));
    for (const [event, groups] of Object.entries(user.hooks ?? {})) for (const g of groups) expect(once.hooks?.[event]).toContainEqual(g);
    for (const [k, v] of Object.entries(user)) if (k !== 'hooks') expect((once as Record<string, unknown>)[k]).toEqual(v);
    expect(render(mergeHooks(once, hookConfig(tool, CLI)))).toBe(render(once));
    // an install from elsewhere (another node, another checkout) is replaced, not doubled
    const moved = mergeHooks(once, hookConfig(tool, "'/usr/local/bin/node' '/home/u/od/bin/od-worktree.js'"));
    const ours = Object.values(moved.hooks ?? {}).flatMap((gs) => gs.flatMap((g) => g.hooks.filter((h) => isOurs(h))));
    expect(ours).toHaveLength(events.length);
    expect(ours.every((h) => h.command?.startsWith("'/usr/local/bin/node'"))).toBe(true);
    // and the user's own hook beside ours in one group stays when ours goes
    const shared = { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'mine.sh' }, ...once.hooks!.PreToolUse!.at(-1)!.hooks] }] } };
    expect(mergeHooks(shared, hookConfig(tool, CLI)).hooks!.PreToolUse![0]).toEqual({ matcher: 'Bash', hooks: [{ type: 'command', command: 'mine.sh' }] });
  });
});

describe('od-worktree integrate', () => {
  let dir: string;
  let repo: string;
  const env = { ...process.env, HOME: '' };
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'od-integrate-'));
    repo = path.join(dir, 'product');
    mkdirSync(repo);
    spawnSync('git', ['init', '-q', repo]);
    env.HOME = path.join(dir, 'home');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('claude-code: --print writes nothing; writing merges into .claude/settings.json; again changes nothing', async () => {
    const file = path.join(repo, '.claude', 'settings.json');
    mkdirSync(path.dirname(file));
    const user = readFileSync(userFile('claude-code'), 'utf8');
    writeFileSync(file, user);
    const printed = await runCli(['integrate', 'claude-code', '--print'], { cwd: repo, env });
    expect({ code: printed.code, stderr: printed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(readFileSync(file, 'utf8')).toBe(user);
    const settings = JSON.parse(printed.stdout) as HookSettings & { model: string };
    expect(settings.model).toBe('opus');
    expect(Object.keys(settings.hooks ?? {}).sort()).toEqual(['PreToolUse', 'SessionEnd', 'SessionStart', 'Stop', 'WorktreeCreate', 'WorktreeRemove']);

    const wrote = await runCli(['integrate', 'claude-code'], { cwd: repo, env });
    expect({ code: wrote.code, out: wrote.stdout }).toEqual({ code: 0, out: expect.stringMatching(/^wrote: .*\.claude\/settings\.json/) });
    expect(readFileSync(file, 'utf8')).toBe(printed.stdout);
    const again = await runCli(['integrate', 'claude-code', '--json'], { cwd: repo, env });
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, tool: 'claude-code', file, written: false, changed: false });
    expect(readFileSync(file, 'utf8')).toBe(printed.stdout);
  }, 60_000);

  test('codex: --user writes ~/.codex/hooks.json; a settings file that is not JSON is refused and left alone', async () => {
    const wrote = await runCli(['integrate', 'codex', '--user'], { cwd: dir, env });
    expect(wrote.code).toBe(0);
    const file = path.join(env.HOME!, '.codex', 'hooks.json');
    expect(Object.keys((JSON.parse(readFileSync(file, 'utf8')) as HookSettings).hooks ?? {}).sort()).toEqual(['PreToolUse', 'SessionStart', 'Stop']);
    const broken = path.join(dir, 'broken.json');
    writeFileSync(broken, '{ "hooks": ');
    const refused = await runCli(['integrate', 'codex', '--settings', broken], { cwd: dir, env });
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 2, stderr: expect.stringContaining('is not JSON') });
    expect(readFileSync(broken, 'utf8')).toBe('{ "hooks": ');
    expect(existsSync(path.join(repo, '.codex'))).toBe(false);
  }, 60_000);
});
