import { OwnershipError, type BindRequest, type OwnershipRef } from '../../src/client';
import type { Principal } from '../../src/domain/identity';
import type { RepoFixture } from '../support/git-fixture';
import type { OwnershipEnv } from './ownership-env';

/**
 * What the workflow-tier decision files share: requests for a fixture repository's worktrees, as
 * the service would send them through the real OwnershipClient, and the refusal code an answer
 * carries (the reason, never just "an error").
 */
export const executor = (workerId: string): Principal => ({ kind: 'executor', id: `exec-${workerId}`, workerId });
export const admin = (id = 'ops'): Principal => ({ kind: 'admin', id });
export const worker = (workerId: string) => ({ runId: null, workerId });

export function requests(repo: () => RepoFixture) {
  const bindReq = (i: number, session: string, workerId = 'w-a'): BindRequest => ({
    worktreePath: repo().worktrees[i]!.path,
    branch: repo().worktrees[i]!.branch,
    executionSessionId: session,
    runtime: 'codex-cli',
    worker: worker(workerId),
    principal: executor(workerId),
  });
  const ref = (i: number): OwnershipRef => ({ worktreePath: repo().worktrees[i]!.path });
  const owner = (session: string, epoch: number, workerId = 'w-a') => ({ executionSessionId: session, epoch, principal: executor(workerId) });
  return { bindReq, ref, owner };
}

/** The refusal's reason code, or null when the call succeeded. */
export async function refusal(p: Promise<unknown>): Promise<string | null> {
  try {
    await p;
    return null;
  } catch (err) {
    if (err instanceof OwnershipError) return err.code;
    throw err;
  }
}

/** The refusal itself (code and details), or null. */
export async function refusalOf(p: Promise<unknown>): Promise<{ code: string; details: Record<string, unknown> | undefined } | null> {
  try {
    await p;
    return null;
  } catch (err) {
    if (err instanceof OwnershipError) return { code: err.code, details: err.details };
    throw err;
  }
}

/** The log's event types for an ownership. */
export const types = (o: OwnershipEnv, ownershipId: string): string[] => o.fakes.log(ownershipId).map((e) => e.type);

/** Waits (on the workflow's own query, no wall-clock bound asserted) until the view says so. */
export async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, tries = 200): Promise<T> {
  let v = await read();
  for (let i = 0; i < tries && !ok(v); i++) {
    await new Promise((r) => setTimeout(r, 25));
    v = await read();
  }
  return v;
}
