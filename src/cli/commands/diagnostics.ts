import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { DEFAULT_API_URL, ApiClient, ApiError, ApiUnreachableError } from '../../api/client';
import { redactForExport } from '../../auth/redact';
import { EXIT } from '../exit-codes';

const MAX_OWNERSHIPS = 5_000;

/**
 * `od-worktree export-diagnostics`: ownerships and their event logs, for sharing outside the local
 * trusted control plane. Conversation URLs and titles are always redacted (spec §13); with
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
      const token = process.env.OD_TOKEN;
      const client = new ApiClient({ baseUrl: process.env.OD_API_URL || DEFAULT_API_URL, ...(token ? { token } : {}) });
      try {
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
        const doc = redactForExport({ generatedAt: new Date().toISOString(), repoRoot: o.repo ?? null, truncated: Boolean(cursor), ownerships }, { conversationIds: o.redactConversationIds === true });
        const text = `${JSON.stringify(doc, null, 2)}\n`;
        if (o.out) writeFileSync(o.out, text, { mode: 0o600 });
        else process.stdout.write(text);
      } catch (err) {
        if (err instanceof ApiUnreachableError) {
          process.stderr.write(`od-worktree: the ownership service is unreachable at ${err.baseUrl} (is it running? set OD_API_URL)\n`);
          process.exitCode = EXIT.unreachable;
        } else if (err instanceof ApiError) {
          process.stderr.write(`od-worktree: ${err.code}: ${err.body.message}\n`);
          process.exitCode = err.status === 401 || err.status === 403 ? EXIT.refused : EXIT.internal;
        } else throw err;
      }
    });
}
