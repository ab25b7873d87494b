export { ownershipWorkflow } from './ownership';
export { worktreePresenceWorkflow, worktreeRemovalWorkflow } from './removal';
