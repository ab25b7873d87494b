/** The task queue a host agent polls: git activities for worktrees on that host run only there. */
export function hostTaskQueue(hostId: string): string {
  return `ownership-host-${hostId}`;
}
