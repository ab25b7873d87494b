import type { Command } from 'commander';

/** Commands served by the HTTP API (who, list --owners, history, provenance, claim, heartbeat, release). */
export function registerServiceCommands(_program: Command): void {}
