import globalTeardown from '../global-teardown';
import { guardTeardown } from '../guard-setup';

const g = globalThis as { __odStackStarted?: boolean };

export async function stopStackOnce(): Promise<void> {
  if (g.__odStackStarted) {
    g.__odStackStarted = false;
    await globalTeardown();
  }
  guardTeardown();
}

export default stopStackOnce;
