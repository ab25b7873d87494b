import { condition, defineSignal, defineUpdate, setHandler } from '@temporalio/workflow';

/**
 * The memory case's control: the same noop workflow as noop.ts, bundled alone (no
 * zod, no domain modules), so the per-workflow cost of the product bundle's module state shows.
 */
export const minimalUpdate = defineUpdate<number, [number]>('noop');
export const minimalStop = defineSignal('noopStop');

export async function minimalNoopWorkflow(): Promise<number> {
  let count = 0;
  let stop = false;
  setHandler(minimalUpdate, (n) => (count += n));
  setHandler(minimalStop, () => void (stop = true));
  await condition(() => stop);
  return count;
}
