import { guardTeardown } from '../guard-setup';

export default function noneTeardown(): void {
  guardTeardown();
}
