import { currentUpdateInfo, proxySinks, workflowInfo, type Sinks } from '@temporalio/workflow';
import type { Principal } from '../domain/identity';
import { refusal } from '../domain/reasons';
import { sealProblem, startSealRequest, type Seal, type SealProblem } from '../domain/seal';
import { fail } from './activities';
import type { RunState } from './run-state';

/**
 * Messages only service processes may send (src/keys/message-seal.ts proves the seal on the
 * worker; src/domain/seal.ts says what a proven seal must name). A message without one is refused
 * before it enters history (`message_unsealed`), and the refusal is recorded for people to see
 * (`history`, `refused_messages` in PostgreSQL) through the audit sink: a sink runs in the worker,
 * outside the workflow, never on replay, and adds nothing to the history an intruder could grow.
 */

/**
 * One refused message, as the worker records it: one without a seal (`message_unsealed`), or a
 * signal the workflow refused (a landing on a released ownership, say; `problem: refused`), which
 * answers nobody and so is recorded rather than dropped. `claimedPrincipal` is what the message
 * said, never believed.
 */
export interface RefusedMessage {
  ownershipId: string;
  message: string;
  messageId: string | null;
  code: string;
  problem: SealProblem | 'refused';
  claimedPrincipal: string | null;
}

export interface AuditSinks extends Sinks {
  audit: { refused(m: RefusedMessage): void };
}

const { audit } = proxySinks<AuditSinks>();

const claimedPrincipal = (raw: unknown): string | null => {
  const p = typeof raw === 'object' && raw !== null ? (raw as { principal?: Partial<Principal> }).principal : undefined;
  return p && typeof p.kind === 'string' && typeof p.id === 'string' ? `${p.kind}:${p.id}`.slice(0, 200) : null;
};

/** An update's validator, first of all: refuses (and records) a message no service process sealed for this update. */
export function refuseUnsealedUpdate(s: RunState, raw: unknown): void {
  const info = currentUpdateInfo();
  const problem = sealProblem(raw, { kind: 'update', updateId: info?.id ?? null, nowMs: Date.now() });
  if (problem === null) return;
  audit.refused({
    ownershipId: s.ownershipId,
    message: info?.name ?? 'update',
    messageId: info?.id ?? null,
    code: 'message_unsealed',
    problem,
    claimedPrincipal: claimedPrincipal(raw),
  });
  fail(refusal('message_unsealed', { problem }));
}

/** The id a service process gave a signal in its seal (the API looks its refusal up by it), or null. */
function signalMessageId(raw: unknown): string | null {
  const seal = typeof raw === 'object' && raw !== null ? (raw as { seal?: { messageId?: unknown } }).seal : undefined;
  return typeof seal?.messageId === 'string' ? seal.messageId : null;
}

/** A signal the workflow decided to refuse: recorded (it answers nobody), never dropped. */
export function recordRefusedSignal(s: RunState, name: string, raw: unknown, code: string): void {
  audit.refused({
    ownershipId: s.ownershipId,
    message: name,
    messageId: signalMessageId(raw),
    code,
    problem: 'refused',
    claimedPrincipal: claimedPrincipal(raw),
  });
}

/** How many signal ids a run remembers (each until its seal expires); past it, the oldest are forgotten and anything no younger refused. */
export const REMEMBERED_SIGNALS = 512;

/**
 * Whether a run may begin from this input: sealed by a service process for this workflow (the API
 * starting it, or the previous run continuing as new: the worker's codec seals that), and fresh
 * against the run's own start time, so a start input copied out of a history starts nothing later.
 */
export function startRefused(raw: unknown, ownershipId: string, message: string): SealProblem | null {
  const problem = sealProblem(raw, { kind: 'start', runStartMs: workflowInfo().runStartTime.getTime() });
  if (problem === null) return null;
  audit.refused({ ownershipId, message, messageId: null, code: 'message_unsealed', problem, claimedPrincipal: claimedPrincipal(raw) });
  return problem;
}

/** The seal a run puts on the input of the run it continues as: the worker's codec proves it for the same workflow. */
export const continuedSeal = (): Seal => startSealRequest(Date.now());

/** A signal's handler: true when it may act. Runs on replay too, so the record is made once (sinks skip replay). */
export function sealedSignal(s: RunState, name: string, raw: unknown): boolean {
  const nowMs = Date.now();
  const problem = sealProblem(raw, {
    kind: 'signal',
    nowMs,
    seen: (id) => s.signalIds.has(id) || (s.signalFloorExp !== null && exp(raw) <= s.signalFloorExp),
  });
  if (problem === null) {
    rememberSignal(s, signalMessageId(raw)!, exp(raw), nowMs);
    return true;
  }
  audit.refused({
    ownershipId: s.ownershipId,
    message: name,
    messageId: signalMessageId(raw),
    code: 'message_unsealed',
    problem,
    claimedPrincipal: claimedPrincipal(raw),
  });
  return false;
}

const exp = (raw: unknown): number => (raw as { seal: Seal }).seal.exp ?? 0;

/** Remembered until it expires (it is refused after that anyway); bounded, the oldest forgotten first and the floor raised past them. */
function rememberSignal(s: RunState, id: string, expMs: number, nowMs: number): void {
  for (const [k, e] of s.signalIds) if (e < nowMs) s.signalIds.delete(k);
  s.signalIds.set(id, expMs);
  if (s.signalIds.size <= REMEMBERED_SIGNALS) return;
  const [oldest, oldestExp] = [...s.signalIds].reduce((a, b) => (b[1] < a[1] ? b : a));
  s.signalIds.delete(oldest);
  s.signalFloorExp = Math.max(s.signalFloorExp ?? 0, oldestExp);
}
