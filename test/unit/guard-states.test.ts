import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { guardStatesBlock } from '../../src/gate/shim';

/**
 * hooks/overdeck-guard.sh runs in every commit with shell builtins only, so it cannot import the
 * state lists: it carries a generated copy between BEGIN/END markers (in od_mine). This keeps that
 * copy equal to src/domain/states.ts; OD_WRITE_GUARD_STATES=1 rewrites it instead of failing.
 */
const GUARD = path.resolve(__dirname, '../../hooks/overdeck-guard.sh');
const BLOCK = /( *# BEGIN generated[^\n]*\n(?: *#[^\n]*\n)*)([\s\S]*?)\n( *# END generated)/;

test('the guard script carries the state lists of src/domain/states.ts', () => {
  const script = readFileSync(GUARD, 'utf8');
  const m = BLOCK.exec(script);
  expect(m).not.toBeNull();
  if (process.env.OD_WRITE_GUARD_STATES === '1') {
    writeFileSync(
      GUARD,
      script.replace(BLOCK, (_all, head: string, _body, end: string) => `${head}${guardStatesBlock()}\n${end}`),
    );
    return;
  }
  expect(m![2]).toBe(guardStatesBlock());
});
