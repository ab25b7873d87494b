export { ownershipWorkflow } from './ownership';
