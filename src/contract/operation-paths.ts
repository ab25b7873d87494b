/**
 * Where each operation of the operation table (./operations.ts) is on the wire: its method, its
 * URL and what the URL addresses. Plain data, apart from the table's schemas, because the HTTP
 * client (src/api/client.ts) builds its calls from it and the CLI loads that client without zod
 * (`od-worktree who` loads no zod: test/integration/package.test.ts). operations.ts is typed
 * against this list, so an operation is in both or fails to compile.
 */

/** What an operation's URL names: nothing (bind), one ownership (`:id`), or one hold of it (`:id`, `:holdId`). */
export type Address = 'none' | 'ownership' | 'hold';

export interface OperationPath {
  method: 'POST';
  /** Fastify's template: `:id` is the ownership, `:holdId` the hold */
  url: string;
  address: Address;
}

const own = (action: string) => ({ method: 'POST', url: `/v1/ownerships/:id/${action}`, address: 'ownership' }) as const;
const hold = (action: string) => ({ method: 'POST', url: `/v1/ownerships/:id/holds/:holdId/${action}`, address: 'hold' }) as const;

/** In the order the routes are registered (and so listed in the OpenAPI document). */
export const OPERATION_PATHS = {
  bind: { method: 'POST', url: '/v1/bind', address: 'none' },
  heartbeat: own('heartbeat'),
  handoff: own('handoff'),
  acceptHandoff: own('handoff/accept'),
  cancelHandoff: own('handoff/cancel'),
  release: own('release'),
  reclaim: own('reclaim'),
  submit: own('submit'),
  bindPlan: own('plan'),
  renameBranch: own('rename-branch'),
  landed: own('landed'),
  worktreeRemoved: own('worktree-removed'),
  grantHold: own('holds'),
  holdHeartbeat: hold('heartbeat'),
  endHold: hold('end'),
  tenure: own('tenure'),
  override: own('override'),
} as const satisfies Record<string, OperationPath>;

export type OperationName = keyof typeof OPERATION_PATHS;
export const OPERATION_NAMES = Object.keys(OPERATION_PATHS) as OperationName[];

/** The address an operation's URL takes, as values: `{}`, `{ id }` or `{ id, holdId }`. */
export type AddressOf<K extends OperationName> = (typeof OPERATION_PATHS)[K]['address'] extends 'hold'
  ? { id: string; holdId: string }
  : (typeof OPERATION_PATHS)[K]['address'] extends 'ownership'
    ? { id: string }
    : Record<never, never>;

/** The URL of one call: the template with its address filled in (each part percent-encoded). */
export function urlOf(name: OperationName, at: { id?: string; holdId?: string }): string {
  return OPERATION_PATHS[name].url.replace(/:(id|holdId)\b/g, (_m, k: 'id' | 'holdId') => {
    const v = at[k];
    if (v === undefined) throw new Error(`${name}: no ${k} to address`);
    return encodeURIComponent(v);
  });
}
