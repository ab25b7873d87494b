import { RemoveWorktreeBodySchema, RemoveWorktreeResponseSchema } from '../../contract/removal';
import type { OwnershipService } from '../service';
import { ERROR_RESPONSES, principalOf, SECURITY, type App } from '../http';

/**
 * Lossless removal of a worktree by the service (docs/cleanup.md#through-the-api): the worktree's
 * host agent decides under the removal rule and removes; the answer is the decision with its
 * receipt, or its refusal with the reason codes naming what would be lost.
 */
export function registerRemovalRoutes(app: App, svc: OwnershipService): void {
  app.post(
    '/v1/worktrees/remove',
    {
      config: { operation: 'removeWorktree' },
      schema: {
        summary: 'Remove a worktree without losing work: its uncommitted files snapshotted first, refused while anything would be lost',
        description:
          "Decided and done on the worktree's host by its agent. 200 with result.status removed (receipt: what was kept where, how each commit was found landed), would_remove (dryRun), refused (result.refusals: owner_alive, worktree_owned, unlanded_commits, dirty_files, snapshot_failed) or failed (a git step failed; nothing is reported removed). An owner names executionSessionId and epoch: its ownership is released first. 409 removal_in_progress while another removal of the worktree runs; 503 host_unavailable when the host agent is away.",
        tags: ['worktrees'],
        security: SECURITY,
        body: RemoveWorktreeBodySchema,
        response: { 200: RemoveWorktreeResponseSchema, ...ERROR_RESPONSES },
      },
    },
    async (req) => svc.removeWorktree(principalOf(req), req.body),
  );
}
