/**
 * The bench worker's workflows: the product's, plus the no-op baseline each case compares it with.
 * The baseline lives here, never in src/workflows: production registers only production workflows.
 */
export { ownershipWorkflow } from '../../src/workflows';
export { floorWorkflow, localFloorWorkflow, noopWorkflow } from './noop';
