import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { apiClient } from '../api-env';
import { cliFailureOf } from '../api-failure';

// Loaded when the export runs, not at the CLI's start-up (main.ts).
const redaction = () => require('../../auth/redact') as typeof import('../../auth/redact');

const MAX_OWNERSHIPS = 5_000;

/**
 * `od-worktree export-diagnostics`: ownerships and their event logs, for sharing outside the local
 * trusted control plane. Conversation URLs and titles are always redacted (docs/guarantees.md); with
 * --redact-conversation-ids the UUIDs too. Any principal that may list and read history can export.
 */
export function registerDiagnosticsCommand(program: Command): void {
  program
    .command('export-diagnostics')
    .description('ownerships and their event logs as redacted JSON (conversation URLs and titles removed)')
    .option('--repo <path>', 'only ownerships of this repository root')
    .option('--out <file>', 'write to this file (mode 0600) instead of stdout')
    .option('--redact-conversation-ids', 'also redact conversation UUIDs')
    .action(async (o: { repo?: string; out?: string; redactConversationIds?: boolean }) => {
      try {
        const client = apiClient();
        const ownerships: unknown[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.list({ ...(o.repo ? { repoRoot: o.repo } : {}), limit: 500, ...(cursor ? { cursor } : {}) });
          for (const record of page.items) {
            const history = await client.history({ ownershipId: record.ownershipId });
            ownerships.push({ record, events: history.ownerships.flatMap((h) => h.events) });
          }
          cursor = page.nextCursor ?? undefined;
          if (!o.out) process.stderr.write(`exported ${ownerships.length} ownerships…\r`);
        } while (cursor && ownerships.length < MAX_OWNERSHIPS);
        const doc = redaction().redactForExport(
          { generatedAt: new Date().toISOString(), repoRoot: o.repo ?? null, truncated: Boolean(cursor), ownerships },
          { conversationIds: o.redactConversationIds === true },
        );
        const text = `${JSON.stringify(doc, null, 2)}\n`;
        if (o.out) writeFileSync(o.out, text, { mode: 0o600 });
        else process.stdout.write(text);
      } catch (err) {
        const failure = cliFailureOf(err);
        if (!failure) throw err;
        process.stderr.write(`od-worktree: ${failure.message}\n`);
        process.exitCode = failure.exit;
      }
    });
}
