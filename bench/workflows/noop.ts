import { condition, defineSignal, defineUpdate, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';

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

/**
 * The floor of a claim: an update answered after one ordinary activity, as a claim is answered
 * after its log write. The activity is the production worker's readSettings (no I/O), so the
 * round trip is Temporal's alone: two workflow tasks and one activity, nothing of ours.
 */
const store = proxyActivities<{ readSettings(): Promise<unknown> }>({ startToCloseTimeout: '10s' });
export const floorUpdate = defineUpdate<number, [number]>('floor');

export async function floorWorkflow(): Promise<number> {
  let count = 0;
  let stop = false;
  setHandler(floorUpdate, async (n) => {
    await store.readSettings();
    return (count += n);
  });
  setHandler(noopStop, () => void (stop = true));
  await condition(() => stop);
  return count;
}

/**
 * The floor of an owner update: an update answered after one no-op local activity, as an owner
 * update is answered after its log write (a local activity): one workflow task, nothing of ours.
 */
const local = proxyLocalActivities<{ readSettings(): Promise<unknown> }>({ startToCloseTimeout: '10s' });
export const localFloorUpdate = defineUpdate<number, [number]>('localFloor');

export async function localFloorWorkflow(): Promise<number> {
  let count = 0;
  let stop = false;
  setHandler(localFloorUpdate, async (n) => {
    await local.readSettings();
    return (count += n);
  });
  setHandler(noopStop, () => void (stop = true));
  await condition(() => stop);
  return count;
}
