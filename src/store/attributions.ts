import type { Pool } from 'pg';
import { z } from 'zod';
import { commitsOfMove, readJournal, reflogMessages, readShippedOffset, writeShippedOffset, type JournalLine } from '../git/journal';
import { confineDirs } from '../git/confine';
import { identifyWorktree, type WorktreeIdentity } from '../git/repo';
import { ConversationSchema, IdString } from '../domain/identity';
import { AttemptSchema, AttributionViaSchema, AuthorSchema, type Attempt, type AttributionVia, type Author } from './attributions-schemas';

export { AttemptSchema, AttributionViaSchema, AuthorSchema, type Attempt, type AttributionVia, type Author } from './attributions-schemas';
import { parseEvent } from '../domain/events';
import { describeBranch } from '../git/status';
import { recordHead } from './worktree-heads';
import { inTransaction } from './db';

/**
 * Ships worktree journals (src/git/journal.ts) into PostgreSQL: `commit` lines become
 * commit_attributions, `ref_refused` / `wrapper_refused` lines become git_refusals. Idempotent and
 * resumable: every row is keyed so a second shipping inserts nothing, and the shipped offset is
 * written only after the rows are committed (a crash in between ships the same lines again).
 */

/** States in which the projection's owner is the only one who can be committing (no handoff in flight, no provisional claim). */
const UNAMBIGUOUS_OWNER_STATES = new Set(['active', 'submitted']);
const HELD = new Set(['active', 'handoff_pending', 'stale', 'submitted']);
const isId = (s: string): boolean => s !== '' && IdString.safeParse(s).success;



export interface AttributionFields {
  ownershipId: string | null;
  epoch: number | null;
  executionSessionId: string | null;
  workerId: string | null;
  conversationId: string | null;
  via: AttributionVia;
}

/**
 * Who made the commits of one `commit` line. The session in the environment when it is the
 * projection's owner (the guard let it through); a session in a worktree nobody held is the author
 * but of no ownership. Without a session: the owner at that moment, only when nobody else could
 * have been committing (active or submitted, a durable ownership); otherwise unknown.
 */
export function attributionOf(line: JournalLine): AttributionFields {
  const epoch = /^[0-9]{1,9}$/.test(line.epoch) ? Number(line.epoch) : null;
  const durable = line.ownership.startsWith('own_') && isId(line.ownership);
  const owned = (session: string, via: AttributionVia): AttributionFields => ({
    ownershipId: line.ownership,
    epoch,
    executionSessionId: session,
    workerId: isId(line.worker) ? line.worker : null,
    conversationId: isId(line.conversation) ? line.conversation : null,
    via,
  });
  if (isId(line.session)) {
    if (durable && line.session === line.owner && HELD.has(line.state)) return owned(line.session, 'session');
    return { ownershipId: null, epoch: null, executionSessionId: line.session, workerId: null, conversationId: null, via: 'session' };
  }
  if (line.session === '' && durable && isId(line.owner) && epoch !== null && UNAMBIGUOUS_OWNER_STATES.has(line.state)) return owned(line.owner, 'owner_at_time');
  return { ownershipId: null, epoch: null, executionSessionId: null, workerId: null, conversationId: null, via: 'unknown' };
}

export interface ShipResult {
  attributed: number;
  refusals: number;
  skipped: number;
  /** offset shipped up to */
  offset: number;
  /** the worktree's private git dir (where the journal is) */
  privateDir: string;
}

/** Passes per call: each reads at most JOURNAL_READ_LIMIT bytes, so one call is bounded. */
const MAX_PASSES = 8;

/** Ships one worktree's journal from where the last shipping stopped. */
export async function shipJournal(pool: Pool, worktreePath: string, opts: { hostId: string; allowedRoots: readonly string[] }): Promise<ShipResult> {
  const id = await identifyWorktree(worktreePath);
  await confineDirs(id, opts.allowedRoots);
  const out: ShipResult = { attributed: 0, refusals: 0, skipped: 0, offset: await readShippedOffset(id), privateDir: id.privateDir };
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const chunk = await readJournal(id, out.offset);
    if (chunk.end === out.offset) break;
    out.skipped += chunk.skipped;
    const rows = await rowsOf(id, chunk.lines);
    const inserted = await insertRows(pool, id, opts.hostId, rows);
    await recordMovedHead(pool, id, chunk.lines);
    out.attributed += inserted.attributed;
    out.refusals += inserted.refusals;
    await writeShippedOffset(id, chunk.end);
    out.offset = chunk.end;
    if (!chunk.more) break;
  }
  return out;
}

/** After a journaled move of the checked-out branch: its head now, for `who` and `list` (worktree-heads.ts). */
async function recordMovedHead(pool: Pool, id: WorktreeIdentity, lines: readonly JournalLine[]): Promise<void> {
  const moved = lines.filter((l) => l.kind === 'commit' && isId(l.ownership)).at(-1);
  if (!moved) return;
  const status = await describeBranch(id.worktreePath).catch(() => null);
  if (status) await recordHead(pool, moved.ownership, id.worktreePath, status);
}

interface AttributionRow extends AttributionFields {
  commit: string;
  ref: string;
  offset: number;
}

async function rowsOf(id: WorktreeIdentity, lines: JournalLine[]): Promise<{ attributions: AttributionRow[]; refusals: JournalLine[] }> {
  const attributions: AttributionRow[] = [];
  const refusals: JournalLine[] = [];
  const reflog = await reflogMessages(id, new Set(lines.filter((l) => l.kind === 'commit').map((l) => l.ref)));
  for (const line of lines) {
    if (line.kind !== 'commit') {
      refusals.push(line);
      continue;
    }
    const who = attributionOf(line);
    for (const commit of await commitsOfMove(id, line, reflog)) attributions.push({ ...who, commit, ref: line.ref, offset: line.offset });
  }
  return { attributions, refusals };
}

async function insertRows(pool: Pool, id: WorktreeIdentity, hostId: string, rows: { attributions: AttributionRow[]; refusals: JournalLine[] }): Promise<{ attributed: number; refusals: number }> {
  if (rows.attributions.length === 0 && rows.refusals.length === 0) return { attributed: 0, refusals: 0 };
  return inTransaction(pool, async (client) => {
    let attributed = 0;
    for (const a of rows.attributions) {
      const res = await client.query(
        `INSERT INTO commit_attributions (repo_root, commit_sha, ownership_id, epoch, execution_session_id, worker_id, conversation_id, via, ref, worktree_path, host_id, journal_offset)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (repo_root, commit_sha) DO NOTHING`,
        [id.repoRoot, a.commit, a.ownershipId, a.epoch, a.executionSessionId, a.workerId, a.conversationId, a.via, a.ref.slice(0, 1024), id.worktreePath, hostId, a.offset],
      );
      attributed += res.rowCount ?? 0;
    }
    let refusals = 0;
    for (const r of rows.refusals) {
      const opt = (s: string): string | null => (s === '' ? null : s.slice(0, 1024));
      const res = await client.query(
        `INSERT INTO git_refusals (host_id, git_dir, journal_offset, kind, code, ownership_id, epoch, execution_session_id, env_epoch, owner_session_id, ref, old_head, new_head, command, repo_root, worktree_path)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT DO NOTHING`,
        [
          hostId,
          id.privateDir,
          r.offset,
          r.kind,
          r.code === '' ? 'refused' : r.code.slice(0, 64),
          isId(r.ownership) ? r.ownership : null,
          /^[0-9]{1,9}$/.test(r.epoch) ? Number(r.epoch) : null,
          isId(r.session) ? r.session : null,
          opt(r.env_epoch),
          isId(r.owner) ? r.owner : null,
          opt(r.ref),
          opt(r.old),
          opt(r.new),
          opt(r.command),
          id.repoRoot,
          id.worktreePath,
        ],
      );
      refusals += res.rowCount ?? 0;
    }
    return { attributed, refusals };
  });
}

// --- reading --------------------------------------------------------------------------------------



export function unknownAuthor(commit: string): Author {
  return { commit, via: 'unknown', ownershipId: null, epoch: null, executionSessionId: null, workerId: null, conversation: null };
}

interface AttributionDbRow {
  commit_sha: string;
  ownership_id: string | null;
  epoch: number | null;
  execution_session_id: string | null;
  worker_id: string | null;
  conversation_id: string | null;
  via: string;
}

/** Authors of `commits` (full ids) in `roots`, in the order given; a commit nobody attributed reads unknown. */
export async function authorsOf(pool: Pool, roots: readonly string[], commits: readonly string[]): Promise<Author[]> {
  if (commits.length === 0) return [];
  // One round trip: each commit's first attribution with its ownership's tenure log (claims,
  // reclaims, conversation bindings), from which the author's conversation at that epoch is read.
  const res = await pool.query<AttributionDbRow & { log: unknown[] | null }>(
    `WITH a AS (
       SELECT DISTINCT ON (commit_sha) commit_sha, ownership_id, epoch, execution_session_id, worker_id, conversation_id, via
         FROM commit_attributions WHERE commit_sha = ANY($1) AND (cardinality($2::text[]) = 0 OR repo_root = ANY($2)) ORDER BY commit_sha, recorded_at)
     SELECT a.*, l.log FROM a LEFT JOIN LATERAL (
       SELECT json_agg(e.event ORDER BY e.seq) AS log FROM ownership_events e
        WHERE e.ownership_id = a.ownership_id AND e.type IN ('ownership.claimed', 'ownership.reclaimed', 'ownership.conversation_bound')) l ON true`,
    [commits, roots],
  );
  const byCommit = new Map(res.rows.map((r) => [r.commit_sha, r]));
  return commits.map((c) => {
    const r = byCommit.get(c);
    if (!r) return unknownAuthor(c);
    return AuthorSchema.parse({
      commit: c,
      via: AttributionViaSchema.parse(r.via),
      ownershipId: r.ownership_id,
      epoch: r.epoch,
      executionSessionId: r.execution_session_id,
      workerId: r.worker_id,
      conversation: conversationAt(r.log ?? [], r.ownership_id, r.epoch, r.execution_session_id, r.conversation_id),
    });
  });
}

/** The conversation of an ownership's owner at an epoch, from its tenure log (claims and conversation bindings). */
function conversationAt(log: readonly unknown[], ownershipId: string | null, epoch: number | null, session: string | null, conversationId: string | null): Author['conversation'] {
  if (ownershipId === null) return conversationId ? { conversationId, conversationUrl: null, title: null } : null;
  let found: z.infer<typeof ConversationSchema> | null = null;
  let tenureSession: string | null = null;
  for (const raw of log) {
    const e = parseEvent(raw);
    if (e.type === 'ownership.claimed' || e.type === 'ownership.reclaimed') {
      if (epoch !== null && e.data.epoch > epoch) break;
      tenureSession = e.data.owner.executionSessionId;
      found = e.data.owner.conversation;
    } else if (e.type === 'ownership.conversation_bound' && e.data.executionSessionId === (session ?? tenureSession)) {
      found = e.data.conversation;
    }
  }
  if (found && (conversationId === null || found.conversationId === conversationId)) {
    return { conversationId: found.conversationId, conversationUrl: found.conversationUrl, title: found.title ?? null };
  }
  return conversationId ? { conversationId, conversationUrl: null, title: null } : null;
}

// --- refusals as attempts ---------------------------------------------------------------------------



/** Refused attempts recorded for these ownerships or worktree paths, oldest first (at most `limit`). */
export async function attemptsOf(pool: Pool, q: { ownershipIds?: readonly string[]; worktreePaths?: readonly string[]; limit?: number }): Promise<Attempt[]> {
  const res = await pool.query<Record<string, unknown>>(
    `SELECT kind, code, recorded_at, ownership_id, epoch, execution_session_id, owner_session_id, ref, old_head, new_head, command, worktree_path
       FROM git_refusals WHERE ownership_id = ANY($1) OR worktree_path = ANY($2) ORDER BY recorded_at, journal_offset LIMIT $3`,
    [q.ownershipIds ?? [], q.worktreePaths ?? [], q.limit ?? 500],
  );
  return res.rows.map((r) =>
    AttemptSchema.parse({
      kind: r.kind,
      code: r.code,
      at: (r.recorded_at as Date).toISOString(),
      ownershipId: r.ownership_id,
      epoch: r.epoch,
      executionSessionId: r.execution_session_id,
      ownerSessionId: r.owner_session_id,
      ref: r.ref,
      oldHead: r.old_head,
      newHead: r.new_head,
      command: r.command,
      worktreePath: r.worktree_path,
    }),
  );
}
