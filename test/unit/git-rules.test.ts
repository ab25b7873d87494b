import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Attempt, gateDocTable, GIT_RULES, HARMLESS, HARMLESS_FAST, OWNER_FAST } from '../../src/domain/git-rules';
import { judge } from '../../src/gate/judge';
import { gateShimBlock } from '../../src/gate/shim';
import { realGit } from '../../src/git/real-git';
import { g, GATE_DIR, refsOf, type OwnedFixture, ownedRepo, run } from './git-fixture';

/**
 * The gate program runs the table of src/domain/git-rules.ts; the shim carries its fast paths as a
 * generated block of shell; this keeps the two equal (OD_WRITE_GIT_RULES=1 rewrites the block
 * instead of failing) and the table sound.
 */
const GATE = path.resolve(__dirname, '../../bin/git-gate/git');

const BLOCK = /(# BEGIN generated[^\n]*\n(?:# (?!END)[^\n]*\n)*)([\s\S]*?)\n?(# END generated)/;

test('the shim carries the fast paths generated from the table', () => {
  const script = readFileSync(GATE, 'utf8');
  const m = BLOCK.exec(script);
  expect(m).not.toBeNull();
  if (process.env.OD_WRITE_GIT_RULES === '1') {
    writeFileSync(
      GATE,
      script.replace(BLOCK, (_all, head: string, _body, end: string) => `${head}${gateShimBlock()}\n${end}`),
    );
    return;
  }
  expect(m![2]).toBe(gateShimBlock());
});

test('a command is in one row or harmless, never both; the fast list is harmless', () => {
  const judged = GIT_RULES.flatMap((r) => r.commands);
  expect(new Set(judged).size).toBe(judged.length);
  expect(judged.filter((c) => HARMLESS.includes(c))).toEqual([]);
  expect(HARMLESS_FAST.filter((c) => !HARMLESS.includes(c))).toEqual([]);
  const fast = /^case \$\{1-\} in\n([\s\S]*?)\)\n {4}[^\n]*od_run "\$@" ;;\n([\s\S]*?)\)\n {4}[^\n]*od_owner_fast/m.exec(readFileSync(GATE, 'utf8'));
  expect(fast).not.toBeNull();
  const words = (t: string) =>
    t
      .split(/[\s|\\]+/)
      .filter(Boolean)
      .sort();
  expect(words(fast![1]!)).toEqual([...HARMLESS_FAST, '--version', "''"].sort());
  // The owner fast path proves the tenure where git writes only: every command in it is judged nowhere else.
  expect(words(fast![2]!)).toEqual([...OWNER_FAST].sort());
  for (const c of OWNER_FAST) expect([c, GIT_RULES.find((r) => r.commands.includes(c))!.targets]).toEqual([c, ['here']]);
});

/*
 * Parity: every attempt of every row goes through the three layers, each in a fresh repository
 * where session_B holds wt1 (with a tenure hash, dirty files, a stash entry, a remote) and the
 * caller is session_A:
 *  - the gate (first on PATH) refuses it and not a byte of the owner's changes;
 *  - the PreToolUse hook, given the tool call as Claude Code sends it, blocks it (exit 2);
 *  - the hooks alone (git by its absolute path, the gate skipped) refuse it exactly when the row
 *    says a hook can: for `none`, git runs no hook before the damage and only the gate stands.
 * Every `passes` form is let through by the gate for the same caller.
 */
const ROOT = path.resolve(__dirname, '../..');
const PRETOOLUSE = path.join(ROOT, 'hooks/pretooluse-git-gate.sh');
const REAL_GIT = realGit();
const SECRET = 'odt1_parity-owner-secret-parity-owner-secret-0';
const INTRUDER = { OVERDECK_EXECUTION_SESSION_ID: 'session_A' };

type Owned = { fx: OwnedFixture; origin: string };

async function owned(committed = false): Promise<Owned> {
  const fx = await ownedRepo(SECRET, { committed });
  return { fx, origin: fx.origin };
}

function ownerBytes(o: Owned): string {
  const { fx } = o;
  const read = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : '<missing>');
  const priv = path.join(fx.repo, '.git/worktrees/wt1');
  const [refs, remote] = refsOf(fx.root, fx.repo, o.origin);
  return JSON.stringify([
    ['a.txt', 'new.txt', 'staged.txt'].map((f) => read(path.join(fx.wt1, f))),
    existsSync(path.join(priv, 'index')) ? readFileSync(path.join(priv, 'index')).toString('base64') : '<missing>',
    read(path.join(priv, 'HEAD')),
    refs,
    read(path.join(fx.repo, '.git/logs/refs/stash')),
    remote,
    read(path.join(fx.repo, '.git/config')),
  ]);
}

const fill = (o: Owned, args: readonly string[]): string[] =>
  args.map((a) => a.replaceAll('{wt}', o.fx.wt1).replaceAll('{branch}', 'wt1').replaceAll('{other}', 'other'));
const cwdOf = (o: Owned, a: Attempt): string => (a.from === 'owned' ? o.fx.wt1 : o.fx.repo);
const shQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

const attempts = GIT_RULES.flatMap((rule) => rule.refused.map((a) => [`${a.args.join(' ')} (from ${a.from}, hook: ${a.hook})`, a] as const));

describe('every row through all three layers', () => {
  test('the table has attempts for the ways the issue names', () => {
    const lines = attempts.map(([name]) => name);
    for (const form of ['reset --hard', 'checkout -- .', 'clean -fdx', 'stash pop', 'restore .', 'commit', 'branch -f', 'push', 'worktree remove --force']) {
      expect([form, lines.some((l) => l.startsWith(`${form}`) || l.includes(` ${form}`) || l.startsWith(form.split(' ')[0]!))]).toEqual([form, true]);
    }
  });

  it.each(attempts)('%s', async (_name, attempt) => {
    const o = await owned(attempt.committed === true);
    try {
      const args = fill(o, attempt.args);
      const cwd = cwdOf(o, attempt);
      const before = ownerBytes(o);
      const viaGate = run('git', args, cwd, { PATH: `${GATE_DIR}:${process.env.PATH ?? ''}`, ...INTRUDER });
      expect([viaGate.status, viaGate.stderr]).toEqual([1, expect.stringContaining('od-worktree: refused')]);
      expect(ownerBytes(o)).toBe(before);

      const toolCall = JSON.stringify({
        session_id: 's',
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        cwd,
        tool_input: { command: ['git', ...args].map(shQuote).join(' ') },
      });
      const viaAgentHook = run('sh', [PRETOOLUSE], cwd, INTRUDER, toolCall);
      expect([viaAgentHook.status, viaAgentHook.stderr]).toEqual([2, expect.stringContaining('od-worktree: refused')]);

      const viaHooks = run(REAL_GIT, args, cwd, INTRUDER);
      if (attempt.hook === 'none') expect(viaHooks.stderr).not.toContain('od-worktree: refused');
      else {
        const refusedBy = attempt.hook === 'git' ? expect.not.stringContaining('od-worktree: refused') : expect.stringContaining('od-worktree: refused');
        expect([viaHooks.status === 0, viaHooks.stderr]).toEqual([false, refusedBy]);
        expect(g(o.fx.repo, 'rev-parse', 'refs/heads/wt1')).toBe(
          JSON.parse(before)[3]
            .split('\n')
            .find((l: string) => l.startsWith('refs/heads/wt1 '))
            .split(' ')[1],
        );
      }
    } finally {
      o.fx.cleanup();
    }
  });

  test('every form a row lets through passes the gate for the same caller', async () => {
    const o = await owned();
    try {
      for (const rule of GIT_RULES) {
        for (const form of rule.passes) {
          const r = run('sh', [path.join(GATE_DIR, 'git'), '--od-git-gate-check', ...fill(o, form)], o.fx.wt1, INTRUDER);
          expect([form.join(' '), r.status, r.stderr]).toEqual([form.join(' '), 0, '']);
        }
      }
    } finally {
      o.fx.cleanup();
    }
  });
});

/*
 * The attempts are sharp enough: a gate whose table misses a row (its commands handed to git
 * unjudged, as a forgotten row would be) lets at least one of that row's attempts through.
 */
describe('a gate with a row taken out is caught by that row', () => {
  const rows = GIT_RULES.filter((r) => r.refused.length > 0);
  it.each(rows.map((r) => [r.commands.join(', '), r] as const))('without %s', async (_name, rule) => {
    // The judge with the table less this row: its commands are handed to git unjudged, as a forgotten row would be.
    const mutant = GIT_RULES.filter((r) => r !== rule);
    const o = await owned();
    try {
      const env = { ...process.env, ...INTRUDER, PWD: '' };
      const verdict = (a: Attempt, rules: typeof GIT_RULES) => judge({ argv: fill(o, a.args), cwd: cwdOf(o, a), env, realGit: REAL_GIT, rules }).status;
      // The whole table refuses every attempt in process too, so what gets through is the row's gap.
      expect(rule.refused.map((a) => verdict(a, GIT_RULES))).toEqual(rule.refused.map(() => 1));
      const through = rule.refused.filter((a) => verdict(a, mutant) === 0);
      expect(through.length).toBeGreaterThan(0);
    } finally {
      o.fx.cleanup();
    }
  });
});

const DOC = path.resolve(__dirname, '../../docs/agent-gate.md');
const DOC_BLOCK = /(<!-- BEGIN generated[^\n]*-->\n)([\s\S]*?)\n?(<!-- END generated -->)/;

test('docs/agent-gate.md carries the table generated from src/domain/git-rules.ts', () => {
  const doc = readFileSync(DOC, 'utf8');
  const m = DOC_BLOCK.exec(doc);
  expect(m).not.toBeNull();
  if (process.env.OD_WRITE_GIT_RULES === '1') {
    writeFileSync(
      DOC,
      doc.replace(DOC_BLOCK, (_all, head: string, _body, end: string) => `${head}${gateDocTable()}\n${end}`),
    );
    return;
  }
  expect(m![2]).toBe(gateDocTable());
});
