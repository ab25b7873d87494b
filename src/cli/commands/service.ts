import type { Command } from 'commander';
import { registerLifecycleCommands } from './service-lifecycle';
import { registerLookupCommands } from './service-lookups';
import { registerObserveCommand } from './observe';
import { registerWriteCommands } from './service-writes';

/**
 * Commands served by the HTTP API (OD_API_URL, default http://127.0.0.1:8787, with OD_TOKEN):
 * who, list --owners, history, provenance (service-lookups.ts), claim / heartbeat / release
 * for scripts (service-writes.ts), and handoff / accept / cancel-handoff / reclaim / submit
 * (service-lifecycle.ts). Every one takes --json (validated against the exported schemas
 * of src/contract/cli-output.ts) and exits with the documented codes (service-run.ts); what the user names
 * is resolved in service-target.ts.
 */
export function registerServiceCommands(program: Command): void {
  registerLookupCommands(program);
  registerWriteCommands(program);
  registerLifecycleCommands(program);
  registerObserveCommand(program);
}
