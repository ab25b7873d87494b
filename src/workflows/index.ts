export { ownershipWorkflow } from './ownership';
export { worktreeRemovalWorkflow } from './removal';
