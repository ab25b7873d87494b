import type { Pool } from '../store/db';
import { z } from 'zod';
import { git } from '../git/exec';
import { provenance, type Provenance } from '../provenance/provenance';
import { RepoGit } from '../git/repo-git';

/**
 * Provenance readable from git alone (OD_PROVENANCE_NOTES, off by default): the host agent writes
 * the provenance of each landed head as a git note under NOTES_REF, beside the landing_commits rows,
 * so `od-worktree provenance` can still answer when the service is unreachable.
 *
 * A note travels with the repository (anyone who can fetch the notes ref reads it), so it holds ids
 * only: ownership, lander, and per author the session, epoch, worker and conversation id. Never a
 * conversation title or URL, never a worktree path.
 */
export const NOTES_REF = 'refs/notes/overdeck-provenance';

export const ProvenanceNoteSchema = z.strictObject({
  v: z.literal(1),
  commit: z.string(),
  landedHead: z.string(),
  landedBranch: z.string(),
  landedAt: z.string(),
  sourceBranch: z.string(),
  sourceHead: z.string(),
  ownershipId: z.string(),
  receiptKind: z.enum(['receipt', 'inferred']),
  inferredMethod: z.string().nullable(),
  lander: z.strictObject({ principal: z.strictObject({ kind: z.string(), id: z.string() }).nullable(), executionSessionId: z.string().nullable() }),
  authors: z.array(
    z.strictObject({
      commit: z.string(),
      via: z.string(),
      ownershipId: z.string().nullable(),
      epoch: z.number().int().nullable(),
      executionSessionId: z.string().nullable(),
      workerId: z.string().nullable(),
      conversationId: z.string().nullable(),
    }),
  ),
});
export type ProvenanceNote = z.infer<typeof ProvenanceNoteSchema>;

export function noteOf(p: Provenance): ProvenanceNote {
  return ProvenanceNoteSchema.parse({
    v: 1,
    commit: p.commit,
    landedHead: p.landedHead,
    landedBranch: p.landedBranch,
    landedAt: p.landedAt,
    sourceBranch: p.sourceBranch,
    sourceHead: p.sourceHead,
    ownershipId: p.ownershipId,
    receiptKind: p.receiptKind ?? 'receipt',
    inferredMethod: p.inferredMethod ?? null,
    lander: p.lander ?? { principal: null, executionSessionId: p.executionSessionId },
    authors: (p.authors ?? []).map((a) => ({
      commit: a.commit,
      via: a.via,
      ownershipId: a.ownershipId,
      epoch: a.epoch,
      executionSessionId: a.executionSessionId,
      workerId: a.workerId,
      conversationId: a.conversation?.conversationId ?? null,
    })),
  });
}

// The note commit needs an identity; the service's own, so no user's git config is required or read.
const NOTE_IDENTITY = {
  GIT_AUTHOR_NAME: 'overdeck',
  GIT_AUTHOR_EMAIL: 'overdeck@localhost',
  GIT_COMMITTER_NAME: 'overdeck',
  GIT_COMMITTER_EMAIL: 'overdeck@localhost',
};

/**
 * Writes (or rewrites: `notes add -f`, idempotent) the note of one landing's head. Returns the
 * note, or null when provenance cannot say anything of that head (yet).
 */
export async function writeProvenanceNote(pool: Pool, repoCwd: string, landedHead: string): Promise<ProvenanceNote | null> {
  const head = await new RepoGit(repoCwd).resolve(landedHead);
  if (!head) return null;
  const p = await provenance(pool, repoCwd, head);
  if (!p || p.via !== 'landed_head') return null;
  const note = noteOf(p);
  await git(['notes', `--ref=${NOTES_REF}`, 'add', '-f', '-m', JSON.stringify(note), head], { cwd: repoCwd, env: NOTE_IDENTITY });
  return note;
}

/** The note of `rev` (a landed head), or null: no such commit, no note, or not one of ours. */
export async function readProvenanceNote(repoCwd: string, rev: string): Promise<ProvenanceNote | null> {
  const head = await new RepoGit(repoCwd).resolve(rev).catch(() => null);
  if (!head) return null;
  const r = await git(['notes', `--ref=${NOTES_REF}`, 'show', head], { cwd: repoCwd, okCodes: [1, 128] }).catch(() => null);
  if (!r || r.code !== 0) return null;
  try {
    const parsed = ProvenanceNoteSchema.safeParse(JSON.parse(r.stdout));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The note as the CLI prints it, marked as read from git rather than from the service. */
export function renderProvenanceNote(n: ProvenanceNote): string {
  const v = (x: string | null | undefined) => (x === null || x === undefined || x === '' ? 'unknown' : x);
  const rows: [string, string][] = [
    ['Source', 'from git notes; the service is unreachable'],
    ['Commit', n.commit],
    ['Matched', 'landed head'],
    ['Receipt', n.receiptKind === 'inferred' ? `inferred by landings scan (${v(n.inferredMethod)})` : 'sent by the landing controller'],
    ['Landed head', n.landedHead],
    ['Landed branch', n.landedBranch],
    ['Landed at', n.landedAt],
    ['Source branch', n.sourceBranch],
    ['Source head', n.sourceHead],
    ['Ownership', n.ownershipId],
    [
      'Landed by',
      `${n.lander.principal ? `${n.lander.principal.kind} ${n.lander.principal.id}` : 'unknown'}, for owner session ${v(n.lander.executionSessionId)}`,
    ],
    [
      'Authors',
      n.authors.length === 0 ? "unknown (the landing's commits are not known)" : `${n.authors.length} commit${n.authors.length === 1 ? '' : 's'}, oldest first`,
    ],
    ...n.authors.map((a, i): [string, string] => [
      '',
      a.via === 'unknown'
        ? `${i + 1}. ${a.commit.slice(0, 12)} unknown`
        : `${i + 1}. ${a.commit.slice(0, 12)} session ${v(a.executionSessionId)}, epoch ${a.epoch ?? 'unknown'}, worker ${v(a.workerId)}, conversation ${v(a.conversationId)}`,
    ]),
  ];
  const width = Math.max(...rows.map(([l]) => l.length)) + 2;
  return rows.map(([l, val]) => `${`${l}:`.padEnd(width)}${val}`).join('\n');
}

/** `od-worktree provenance --json` when the answer comes from the notes. */
export const ProvenanceNoteOutputSchema = z.strictObject({
  ok: z.literal(true),
  source: z.literal('git_notes'),
  message: z.string(),
  note: ProvenanceNoteSchema,
});
