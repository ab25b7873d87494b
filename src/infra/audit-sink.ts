import type { InjectedSinks } from '@temporalio/worker';
import type { Pool } from '../store/db';
import { recordRefusedMessage } from '../store/refused-messages';
import type { AuditSinks } from '../workflows/seal';

/**
 * The workflow worker's side of the audit sink (src/workflows/seal.ts): each refused message is
 * written to `refused_messages`. An intruder can send many: each workflow records at most
 * PER_MINUTE a minute, and says how many it dropped when it records again.
 */
const PER_MINUTE = 30;

export function auditSinks(pool: Pool, warn: (msg: string, meta: Record<string, unknown>) => void): InjectedSinks<AuditSinks> {
  const windows = new Map<string, { start: number; count: number; dropped: number }>();
  return {
    audit: {
      refused: {
        fn: async (info, m) => {
          const now = Date.now();
          let w = windows.get(info.workflowId);
          if (!w || now - w.start > 60_000) {
            if (w?.dropped) warn('refused messages not recorded (over the per-minute cap)', { workflowId: info.workflowId, dropped: w.dropped });
            w = { start: now, count: 0, dropped: 0 };
            windows.set(info.workflowId, w);
            if (windows.size > 10_000) windows.delete(windows.keys().next().value!);
          }
          if (++w.count > PER_MINUTE) {
            w.dropped++;
            return;
          }
          try {
            await recordRefusedMessage(pool, { ...m, workflowId: info.workflowId, runId: info.runId });
          } catch (err) {
            warn('a refused message could not be recorded', {
              workflowId: info.workflowId,
              message: m.message,
              problem: m.problem,
              error: (err as Error).message,
            });
          }
        },
        callDuringReplay: false,
      },
    },
  };
}
