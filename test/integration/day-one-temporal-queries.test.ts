import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ownershipStartMetadata } from '../../src/client';
import { temporalCliPath } from '../../src/infra/tools';
import { git, makeRepo, type RepoFixture } from '../support/git-fixture';
import { startApiStack, type ApiStack } from '../support/api-stack';

/**
 * The Temporal UI as a person uses it, through the `temporal` CLI against the run's real dev
 * server: the saved queries of docs/temporal-ui.md (`temporal workflow list --query`), with their
 * example values replaced by those of a real ownership, are each accepted and find what they say;
 * and after a whole lifecycle an ownership's user metadata, search attributes, query descriptions
 * and `events` query read as that page says (`temporal workflow describe / metadata / query`).
 */

const TEMPORAL_UI_DOC = readFileSync(path.join(__dirname, '../../docs/temporal-ui.md'), 'utf8');

/** The rows of the saved-queries table: question and query. */
function savedQueries(): Array<{ question: string; query: string }> {
  const start = TEMPORAL_UI_DOC.indexOf('\n## Saved queries\n');
  if (start < 0) throw new Error('docs/temporal-ui.md has no "## Saved queries" section');
  const section = TEMPORAL_UI_DOC.slice(start);
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| question | query |')));
  return [...table.matchAll(/^\| ([^|]+) \| `(.+)` \|$/gm)].map((m) => ({ question: m[1]!.trim(), query: m[2]! }));
}

let s: ApiStack;
let repo: RepoFixture;

beforeAll(async () => {
  s = await startApiStack();
  repo = makeRepo(2);
});
afterAll(async () => s?.stop());

function temporalList(query: string): Promise<{ code: number; ids: string[]; stderr: string }> {
  const args = [
    'workflow',
    'list',
    '--address',
    process.env.TEMPORAL_ADDRESS!,
    '--namespace',
    'default',
    '--query',
    query,
    '--output',
    'json',
    '--limit',
    '50',
  ];
  return new Promise((resolve) => {
    execFile(temporalCliPath(), args, { encoding: 'utf8' }, (err, stdout, stderr) => {
      let ids: string[];
      try {
        const parsed = JSON.parse(stdout || '[]') as Array<{ execution?: { workflowId?: string } }>;
        ids = parsed.map((w) => w.execution?.workflowId ?? '');
      } catch {
        // one JSON object per line in some versions
        ids = stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { execution?: { workflowId?: string } }).execution?.workflowId ?? '');
      }
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, ids, stderr });
    });
  });
}

async function finds(query: string, workflowId: string): Promise<boolean> {
  // Visibility follows the workflow a moment later.
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await temporalList(query);
    if (r.code !== 0) throw new Error(`temporal refused the query ${query}: ${r.stderr}`);
    if (r.ids.includes(workflowId)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((res) => setTimeout(res, 300));
  }
}

test('every saved query of docs/temporal-ui.md is accepted by Temporal and finds what it says', async () => {
  const queries = savedQueries();
  expect(queries.length).toBeGreaterThanOrEqual(8);

  const conversationId = randomUUID();
  await s.api(s.tokens.executor).reportConversation({
    executor: 'chatgpt-web',
    executorInstanceId: 'ext-queries',
    sessionGeneration: 'g1',
    sequence: 1,
    conversation: { conversationId, conversationUrl: `https://chatgpt.com/c/${conversationId}`, title: 'queries', observedAt: new Date().toISOString() },
  });
  const wt = repo.worktrees[0]!;
  const session = `queries-${Date.now().toString(36)}`;
  const bound = await s.api(s.tokens.executor).bind({ worktreePath: wt.path, branch: wt.branch, executionSessionId: session, runtime: 'claude-code' });
  const row = await s.h.pool.query<{ workflow_id: string }>('SELECT workflow_id FROM ownerships WHERE ownership_id = $1', [bound.ownershipId]);
  const workflowId = row.rows[0]!.workflow_id;

  const values: Array<[string, string]> = [
    ['/home/user/Projects/example/.worktrees/feature-x', bound.worktreePath],
    ['/home/user/Projects/example', bound.repoRoot],
    ['wt/feature-x', bound.branch],
    ['session_abc', session],
    ['/root/feature-x', s.workerId],
    ['00000000-0000-4000-8000-000000000000', conversationId],
    ['own_01JABCDEFGHJKMNPQRSTVWXYZ0', bound.ownershipId],
  ];
  const real = (q: string, more: Array<[string, string]> = []) => [...values, ...more].reduce((acc, [from, to]) => acc.split(from).join(to), q);
  const byQuestion = (start: string) => queries.find((q) => q.question.startsWith(start))!;

  // While it is active: everything about the live owner finds it; the states it is not in are accepted and do not.
  const notInState = (q: { question: string }) => /^owners proven dead|^handoffs nobody accepted/.test(q.question);
  for (const q of queries.filter((x) => !x.query.includes('LandedHead') && !notInState(x))) {
    expect({ question: q.question, found: await finds(real(q.query), workflowId) }).toEqual({ question: q.question, found: true });
  }
  for (const q of queries.filter(notInState)) {
    const r = await temporalList(real(q.query));
    expect({ question: q.question, code: r.code, found: r.ids.includes(workflowId) }).toEqual({ question: q.question, code: 0, found: false });
  }

  // Landed: LandedHead names the landing's head.
  writeFileSync(path.join(wt.path, 'q.txt'), 'q\n');
  git(wt.path, 'add', '.');
  git(wt.path, 'commit', '-q', '-m', 'q');
  const sourceHead = git(wt.path, 'rev-parse', 'HEAD');
  git(repo.repoRoot, 'merge', '-q', '--no-ff', '-m', 'land', wt.branch);
  const landedHead = git(repo.repoRoot, 'rev-parse', 'HEAD');
  await s.api(s.tokens.landing).land({ ownershipId: bound.ownershipId, sourceHead, landedBranch: 'main', landedHead, landedAt: new Date().toISOString() });
  const landed = byQuestion('the ownership that landed a commit');
  expect(await finds(real(landed.query, [['<full 40-hex sha>', landedHead]]), workflowId)).toBe(true);
}, 180_000);

function temporalJson<T>(args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(
      temporalCliPath(),
      [...args, '--address', process.env.TEMPORAL_ADDRESS!, '--namespace', 'default', '--output', 'json'],
      { encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`temporal ${args.join(' ')}: ${stderr || err.message}`));
        else resolve(JSON.parse(stdout) as T);
      },
    );
  });
}

interface Described {
  executionConfig: { userMetadata?: { summary?: string; details?: string } };
  workflowExecutionInfo: { searchAttributes: { indexedFields: Record<string, { data: string }> } };
}
interface Metadata {
  queryResult: Array<{ currentDetails?: string; definition: { queryDefinitions: Array<{ name: string; description?: string }> } }>;
}

/** Search attributes as `temporal workflow describe -o json` shows them: JSON payloads, base64. */
function searchAttributes(d: Described): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(d.workflowExecutionInfo.searchAttributes.indexedFields).map(([k, v]) => [k, JSON.parse(Buffer.from(v.data, 'base64').toString('utf8'))]),
  );
}

test('after a whole lifecycle, the ownership reads in Temporal as it should: a one-line summary and details of the worktree only, search attributes of the current owner, described queries, and `events` without an argument answering every recent event', async () => {
  // The other executor's worker, bound to a conversation whose URL and title must not reach the metadata.
  const conversationId = randomUUID();
  const title = `title-canary-${randomUUID()}`;
  const other = s.api(s.tokens.otherExecutor);
  await other.reportConversation({
    executor: 'chatgpt-web',
    executorInstanceId: 'ext-metadata',
    sessionGeneration: 'g1',
    sequence: 1,
    conversation: { conversationId, conversationUrl: `https://chatgpt.com/c/${conversationId}`, title, observedAt: new Date().toISOString() },
  });
  const wt = repo.worktrees[1]!;
  const s1 = `meta-s1-${Date.now().toString(36)}`;
  const s2 = `meta-s2-${Date.now().toString(36)}`;
  const lane = `lane-canary-${randomUUID()}`;
  const bound = await other.bind({ worktreePath: wt.path, branch: wt.branch, executionSessionId: s1, runtime: 'chatgpt-web', lane });
  expect(bound.owner?.conversation?.conversationId).toBe(conversationId);
  const post = async (route: string, body: unknown) => {
    const r = await s.raw('POST', `/v1/ownerships/${bound.ownershipId}/${route}`, { token: s.tokens.otherExecutor, body });
    expect({ route, status: r.status }).toEqual({ route, status: 200 });
    return r.body as { handoff: { handoffId: string } | null; epoch: number };
  };
  const offered = await post('handoff', { executionSessionId: s1, epoch: 1, toExecutionSessionId: s2, reason: 'metadata test' });
  await post('handoff/accept', { handoffId: offered.handoff!.handoffId, executionSessionId: s2, runtime: 'codex-cli' });
  await post('submit', { executionSessionId: s2, epoch: 2 });
  writeFileSync(path.join(wt.path, 'm.txt'), 'm\n');
  git(wt.path, 'add', '.');
  git(wt.path, 'commit', '-q', '-m', 'm');
  const sourceHead = git(wt.path, 'rev-parse', 'HEAD');
  git(repo.repoRoot, 'merge', '-q', '--no-ff', '-m', 'land m', wt.branch);
  const landedHead = git(repo.repoRoot, 'rev-parse', 'HEAD');
  await s.api(s.tokens.landing).land({ ownershipId: bound.ownershipId, sourceHead, landedBranch: 'main', landedHead, landedAt: new Date().toISOString() });
  const row = await s.h.pool.query<{ workflow_id: string }>('SELECT workflow_id FROM ownerships WHERE ownership_id = $1', [bound.ownershipId]);
  const workflowId = row.rows[0]!.workflow_id;

  // The landing reaches the workflow's search attributes with its workflow task: wait for that, not for a time.
  let described: Described;
  const deadline = Date.now() + 15_000;
  for (;;) {
    described = await temporalJson<Described>(['workflow', 'describe', '--workflow-id', workflowId]);
    if (searchAttributes(described).OwnershipState === 'landed' || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 200));
  }

  const name = (p: string) => path.basename(p);
  const started = ownershipStartMetadata({
    ownershipId: bound.ownershipId,
    repoRoot: bound.repoRoot,
    worktreePath: bound.worktreePath,
    branch: wt.branch,
    hostId: bound.hostId,
  });
  expect(described.executionConfig.userMetadata).toEqual({ summary: started.staticSummary, details: started.staticDetails });
  const meta = described.executionConfig.userMetadata!;
  expect(meta.summary).toBe(`worktree ${name(bound.worktreePath)} · branch ${wt.branch} · repo ${name(bound.repoRoot)}`);
  for (const fact of [bound.worktreePath, wt.branch, bound.repoRoot, bound.hostId, bound.ownershipId]) expect(meta.details).toContain(fact);
  // Nothing a caller wrote freely, nothing of the conversation.
  for (const never of [title, conversationId, lane, s1, s2]) expect(`${meta.summary}\n${meta.details}`).not.toContain(never);

  expect(searchAttributes(described)).toMatchObject({
    OwnershipId: bound.ownershipId,
    OwnershipRepoRoot: bound.repoRoot,
    OwnershipWorktree: bound.worktreePath,
    OwnershipBranch: wt.branch,
    OwnershipState: 'landed',
    OwnerSessionId: s2,
    OwnerWorkerId: s.otherWorkerId,
    OwnerConversationId: conversationId,
    LandedHead: landedHead,
  });

  const metadata = (await temporalJson<Metadata>(['workflow', 'metadata', '--workflow-id', workflowId])).queryResult[0]!;
  const queries = Object.fromEntries(metadata.definition.queryDefinitions.filter((q) => !q.name.startsWith('__')).map((q) => [q.name, q.description ?? '']));
  expect(Object.keys(queries).sort()).toEqual(['events', 'projection']);
  for (const [q, d] of Object.entries(queries)) expect({ q, described: d.length > 40 }).toEqual({ q, described: true });
  expect(metadata.currentDetails).toMatch(/^LANDED · /);
  expect(metadata.currentDetails).not.toContain('\n');

  // `events` as the UI's Queries tab sends it (no argument): every recent event, as the durable log has them.
  const logged = await s.h.pool.query<{ seq: number; type: string }>('SELECT seq, type FROM ownership_events WHERE ownership_id = $1 ORDER BY seq', [
    bound.ownershipId,
  ]);
  const all = (
    await temporalJson<{ queryResult: [Array<{ seq: number; type: string }>] }>(['workflow', 'query', '--workflow-id', workflowId, '--name', 'events'])
  ).queryResult[0];
  expect(Array.isArray(all)).toBe(true);
  expect(all.map((e) => [e.seq, e.type])).toEqual(logged.rows.map((e) => [e.seq, e.type]));
  expect(all.map((e) => e.type)).toEqual(expect.arrayContaining(['ownership.claimed', 'ownership.handoff_started', 'ownership.submitted', 'ownership.landed']));
  const after2 = (
    await temporalJson<{ queryResult: [Array<{ seq: number }>] }>(['workflow', 'query', '--workflow-id', workflowId, '--name', 'events', '--input', '2'])
  ).queryResult[0];
  expect(after2.map((e) => e.seq)).toEqual(logged.rows.filter((e) => e.seq > 2).map((e) => e.seq));

  // The lineage stays searchable: s1 lost the worktree to s2 and still finds it.
  expect(await finds(`OwnershipSessions = '${s1}'`, workflowId)).toBe(true);
  expect(searchAttributes(described).OwnershipSessions).toEqual([s1, s2]);

  // The compact history reads as the story: every activity and timer says what it is for.
  const shown = await temporalJson<{ events: Array<{ eventType: string; userMetadata?: { summary?: { data?: string } } }> }>([
    'workflow',
    'show',
    '--workflow-id',
    workflowId,
  ]);
  const summaries = shown.events
    .filter((e) => /ACTIVITY_TASK_SCHEDULED|MARKER_RECORDED|TIMER_STARTED/.test(e.eventType) && !JSON.stringify(e).includes('core_patch'))
    .map((e) => ({
      type: e.eventType,
      summary: e.userMetadata?.summary?.data ? (JSON.parse(Buffer.from(e.userMetadata.summary.data, 'base64').toString('utf8')) as string) : null,
    }));
  expect(summaries.length).toBeGreaterThan(5);
  for (const x of summaries) expect(x).toEqual({ type: x.type, summary: expect.stringMatching(/\S/) });
  const story = summaries.map((x) => x.summary).join('\n');
  // The API's messages carry the new owner's binding: the workflow reads no conversation itself.
  expect(story).not.toContain('read the conversation');
  expect(story).toMatch(/log seq 1: claimed/);
  // The worker is also this host's agent: each log write projected the worktree itself, so the
  // run asked its host for no projection (a worktree of another host still gets one from its agent).
  expect(story).not.toContain('into the worktree');
  expect(story).toMatch(/log seq \d+: handoff_started/);
  for (const never of [title, conversationId, lane, 'metadata test']) expect(story).not.toContain(never);
}, 180_000);
