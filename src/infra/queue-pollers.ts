import type { Client } from '@temporalio/client';
// Only the service's processes load this (the exported schemas take the health report from src/contract/health.ts): protos are loaded anyway.
import { temporal as proto } from '@temporalio/proto';

/**
 * Whether anything polled a task queue recently, by Temporal's own poller list. A poller stays
 * listed for a minute or more after its process died, and an idle one is seen only at the start of
 * each long poll (about a minute apart): fresh means seen within POLLER_FRESH_MS. Beacons
 * (src/infra/beacon.ts) say sooner that a process is gone; this is for processes that beat none.
 */
export const POLLER_FRESH_MS = 90_000;

export async function queuePolled(temporal: Client, namespace: string, queue: string, type: 'workflow' | 'activity'): Promise<boolean> {
  const res = await temporal.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: queue, kind: proto.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: type === 'workflow' ? proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW : proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  const now = Date.now();
  return (res.pollers ?? []).some((p) => {
    const t = p.lastAccessTime;
    const at = t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
    return now - at < POLLER_FRESH_MS;
  });
}
