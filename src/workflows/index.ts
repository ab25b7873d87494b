export { ownershipWorkflow } from './ownership';
export { noopWorkflow } from './noop';
