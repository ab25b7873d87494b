import { assertCompiledTreeCurrent } from '../compiled-tree';
import guardSetup from '../guard-setup';

/** The unit tier: nothing is started; only the child-process guard's registry (guard-setup.ts). */
export default function noneSetup(): void {
  assertCompiledTreeCurrent();
  guardSetup();
}
