import guardSetup from '../guard-setup';

/** The unit tier: nothing is started; only the child-process guard's registry (guard-setup.ts). */
export default function noneSetup(): void {
  guardSetup();
}
