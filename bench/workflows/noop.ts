import { condition, defineSignal, defineUpdate, setHandler } from '@temporalio/workflow';

/** The benchmarks' baseline: the bare cost of an update, an update-with-start and a signal. */
export const noopUpdate = defineUpdate<number, [number]>('noop');
export const noopSignal = defineSignal<[number]>('noopSignal');
export const noopStop = defineSignal('noopStop');

export async function noopWorkflow(): Promise<number> {
  let count = 0;
  let stop = false;
  setHandler(noopUpdate, (n) => (count += n));
  setHandler(noopSignal, (n) => void (count += n));
  setHandler(noopStop, () => void (stop = true));
  await condition(() => stop);
  return count;
}
