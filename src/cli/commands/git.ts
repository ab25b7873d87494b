import type { Command } from 'commander';

/** Git-side commands (guard, install-hooks, claim --offline, reconcile): see src/git. */
export function registerGitCommands(_program: Command): void {}
