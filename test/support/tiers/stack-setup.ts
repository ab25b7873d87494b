import { assertCompiledTreeCurrent } from '../compiled-tree';
import globalSetup from '../global-setup';
import guardSetup from '../guard-setup';

const g = globalThis as { __odStackStarted?: boolean };

/**
 * The integration and soak tiers: the real stack (global-setup.ts). jest runs one global setup
 * module once per run however many projects name it, so the two tiers of one run share a stack;
 * the workflow tier's record mode asks for it too (hence the flag).
 */
export async function startStackOnce(): Promise<void> {
  assertCompiledTreeCurrent();
  guardSetup();
  if (g.__odStackStarted) return;
  g.__odStackStarted = true;
  await globalSetup();
}

export default startStackOnce;
