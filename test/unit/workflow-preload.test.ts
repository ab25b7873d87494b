import { readFileSync } from 'node:fs';
import { WORKFLOW_PRELOAD_MODULES } from '../../src/infra/workers';

/**
 * Preloaded workflow modules are evaluated once and shared by every workflow of a worker thread
 * (src/infra/workers.ts). Module-level mutable state there would leak between workflows and break
 * determinism, so our own preloaded modules may declare none: no top-level `let`/`var`, and a
 * top-level collection only behind a read-only type (ReadonlySet, ReadonlyMap, readonly arrays),
 * so the compiler refuses any mutation.
 */
const ours = WORKFLOW_PRELOAD_MODULES.filter((m) => m.startsWith('/'));

test('the preload list names our pure modules and the libraries they need', () => {
  expect(ours.length).toBeGreaterThanOrEqual(7);
  expect(WORKFLOW_PRELOAD_MODULES).toContain('zod');
});

test.each(ours)('%s holds no module-level mutable state', (file) => {
  const src = readFileSync(require.resolve(file), 'utf8');
  const topLevel = src
    .split('\n')
    .filter(
      (l) =>
        /^(export )?(let|var) /.test(l) || /^(export )?const \w+ = new (Map|Set|WeakMap|Array)\b/.test(l) || /^(export )?const \w+(: [^=]+)? = \[\s*\]/.test(l),
    );
  expect(topLevel).toEqual([]);
  // Nothing that talks to the workflow runtime at load time (there is no workflow yet when they load).
  expect(src).not.toMatch(/from '@temporalio\/workflow'/);
});
