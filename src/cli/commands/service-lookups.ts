import path from 'node:path';
import type { Command } from 'commander';
import { ApiUnreachableError } from '../../api/client';
import type { ListResponse } from '../../contract/http';
import { OWNERSHIP_STATES } from '../../domain/states';
import { api, NotFound, print, run, schemas } from './service-run';
import { positiveInt, repoRootOf, resolveOwnership, scopeRepo } from './service-target';

// Loaded by the command that runs, not at start-up (src/cli/main.ts): each command pays only for
// the renderer it prints with.
const targets = () => require('../target') as typeof import('../target');
const plainChecks = () => require('../render/plain-check') as typeof import('../render/plain-check');
const whoView = () => require('../render/who') as typeof import('../render/who');
const listView = () => require('../render/list') as typeof import('../render/list');
const historyView = () => require('../render/history') as typeof import('../render/history');
const notes = () => require('../../provenance/provenance-notes') as typeof import('../../provenance/provenance-notes');
const provenanceView = () => require('../render/provenance') as typeof import('../render/provenance');

/** The lookups: who, list --owners, history and provenance (read-only). */
export function registerLookupCommands(program: Command): void {
  program
    .command('who')
    .argument('[target]', 'worktree path, branch or lane (default: the current worktree)')
    .description(
      'who owns this worktree: worktree, branch, state, lane, plan, owner, conversation, worker, session, activity, liveness, epoch, handoff lineage, submitted/landed',
    )
    .option('--repo <path>', 'repository root for a branch or lane (default: the current repository)')
    .option('--json', 'machine-readable output')
    .action(async (target: string | undefined, o: { repo?: string; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        // One request answers the record, its liveness and the branch status (GET /v1/ownership/live).
        const ownership = await resolveOwnership(api(), target, o.repo, true);
        const liveness = ownership.liveness ?? null;
        const branch = ownership.branchStatus ?? null;
        // `ownership` is the shape of a list item; liveness and branch repeat it for earlier scripts.
        // Checked with the plain check of the zod schema (no zod loaded on this path; ../render/plain-check.ts).
        print(json, plainChecks().WhoOutputCheck, { ok: true, ownership: { ...ownership, liveness, branchStatus: branch }, liveness, branch }, () =>
          whoView().renderWho(ownership, liveness, branch, Date.now()),
        );
      });
    });

  program
    .command('list')
    .description('ownerships as a compact table (with --owners): worktree, branch, state, liveness, owner, conversation, activity, epoch')
    .option('--owners', 'list ownerships (the default and only listing)')
    .option('--repo <path>', 'only this repository')
    .option('--state <states>', `only these states, comma-separated (${OWNERSHIP_STATES.join(', ')})`)
    .option('--limit <n>', 'at most this many (default 50)')
    .option('--cursor <cursor>', 'continue after a previous page (nextCursor)')
    .option('--wide', 'every value whole (the default table fits 120 columns)')
    .option('--json', 'machine-readable output')
    .action(async (o: { repo?: string; state?: string; limit?: string; cursor?: string; wide?: boolean; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const limit = positiveInt(o.limit, '--limit');
        const states = o.state?.split(',').filter(Boolean);
        const page = await api().list({
          ...(o.repo ? { repoRoot: path.resolve(o.repo) } : {}),
          ...(states ? { state: states as ListResponse['items'][number]['state'][] } : {}),
          ...(limit !== undefined ? { limit } : {}),
          ...(o.cursor ? { cursor: o.cursor } : {}),
          liveness: true,
        });
        print(
          json,
          schemas().ListOutputSchema,
          { ok: true, ...page },
          () =>
            listView().renderOwnersTable(page.items, { wide: o.wide === true, now: Date.now() }) +
            (page.nextCursor ? `\n(more: --cursor ${page.nextCursor})` : ''),
        );
      });
    });

  program
    .command('history')
    .argument('<target>', 'worktree path, branch or landed commit')
    .description('every ownership of a worktree, branch or landed commit: owner chain, WIP, landings, events')
    .option('--repo <path>', 'repository root for a branch (default: the current repository)')
    .option('--json', 'machine-readable output')
    .action(async (target: string, o: { repo?: string; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const client = api();
        const repoRoot = await scopeRepo(o.repo);
        const byBranch = () => client.history({ branch: target, ...(repoRoot ? { repoRoot } : {}) });
        const byName = async () => {
          if (!/^[0-9a-fA-F]{7,64}$/.test(target)) return byBranch();
          const landed = await client.history({ landedCommit: target });
          return landed.ownerships.length > 0 ? landed : byBranch();
        };
        const t = await targets().resolveTarget(target);
        // A worktree path (removed or not) answers alone, unless it may also be a branch spelling.
        let h = t.kind === 'path' ? await client.history({ worktreePath: t.path }) : null;
        if (h === null || (h.ownerships.length === 0 && t.kind === 'path' && t.fallback)) h = await byName();
        if (h.ownerships.length === 0) throw new NotFound(`no ownership history for "${target}"`);
        const out = h;
        print(json, schemas().HistoryOutputSchema, { ok: true, ...out }, () => historyView().renderHistory(out));
      });
    });

  program
    .command('provenance')
    .argument('<commit>', 'a landed commit (full or abbreviated)')
    .description('landed commit -> source branch/worktree -> session -> worker -> conversation')
    .option('--repo <path>', 'the repository (default: the one containing the current directory)')
    .option('--json', 'machine-readable output')
    .action(async (commit: string, o: { repo?: string; json?: boolean }) => {
      const json = o.json === true;
      await run(json, async () => {
        const repo = o.repo ? path.resolve(o.repo) : ((await repoRootOf(process.cwd())) ?? process.cwd());
        let p;
        try {
          p = await api().provenance(commit, repo);
        } catch (err) {
          if (!(err instanceof ApiUnreachableError)) throw err;
          // Readable from git alone (OD_PROVENANCE_NOTES): the landed head's note, marked as such; none: the service's failure stands.
          const n = notes();
          const note = await n.readProvenanceNote(repo, commit);
          if (!note) throw err;
          const message = `from git notes; the service is unreachable at ${err.baseUrl}`;
          print(json, n.ProvenanceNoteOutputSchema, { ok: true, source: 'git_notes', message, note }, () => n.renderProvenanceNote(note));
          return;
        }
        const found = p;
        print(json, schemas().ProvenanceOutputSchema, { ok: true, provenance: found }, () => provenanceView().renderProvenance(found));
      });
    });
}
