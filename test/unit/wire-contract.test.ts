/**
 * WIRE_VERSION (src/version.ts) moves with the wire contract: every zod schema and every table
 * `worktree-ownership/schemas` exports (reason codes and their HTTP statuses, event types,
 * states), fingerprinted one by one and recorded with the version they belong to in
 * test/fixtures/wire-contract.json. A change to any of them under an unchanged WIRE_VERSION fails
 * here, saying what changed and what to do. What a fingerprint cannot see: refinement bodies
 * (zod's JSON Schema leaves them out) and the list of routes.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import * as wire from '../../src/exports/schemas';
import { WIRE_VERSION } from '../../src/version';

const FIXTURE = path.resolve(__dirname, '../fixtures/wire-contract.json');
const RECORD = 'OD_UPDATE_WIRE=1 OD_TEST_STACK=0 npx jest test/unit/wire-contract.test.ts';

interface Recorded {
  wire: string;
  fingerprints: Record<string, string>;
}

const sha = (x: unknown) => createHash('sha256').update(JSON.stringify(x)).digest('hex').slice(0, 16);

/** Each export that is part of the contract: a zod schema by its JSON Schema (input and output), a table by its value. */
function fingerprints(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(wire).sort(([a], [b]) => a.localeCompare(b))) {
    if (value instanceof z.ZodType) {
      const json = (io: 'input' | 'output') => z.toJSONSchema(value, { io, unrepresentable: 'any', cycles: 'ref', reused: 'inline' });
      out[name] = sha([json('input'), json('output')]);
    } else if (typeof value === 'object' && value !== null) {
      out[name] = sha(value);
    }
  }
  return out;
}

function diff(before: Record<string, string>, now: Record<string, string>) {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(now)])].sort();
  return {
    changed: keys.filter((k) => k in before && k in now && before[k] !== now[k]),
    added: keys.filter((k) => !(k in before)),
    removed: keys.filter((k) => !(k in now)),
  };
}

test('the wire contract is the one recorded for this WIRE_VERSION', () => {
  const now = fingerprints();
  expect(Object.keys(now).length).toBeGreaterThan(50);
  const recorded: Recorded | null = existsSync(FIXTURE) ? (JSON.parse(readFileSync(FIXTURE, 'utf8')) as Recorded) : null;
  const d = recorded ? diff(recorded.fingerprints, now) : { changed: [], added: Object.keys(now), removed: [] };
  const same = d.changed.length + d.added.length + d.removed.length === 0;
  if (process.env.OD_UPDATE_WIRE === '1' && !same) {
    if (recorded && recorded.wire === WIRE_VERSION) {
      throw new Error(`not recorded: the contract changed but WIRE_VERSION is still ${WIRE_VERSION}; bump it in src/version.ts first, then run this again`);
    }
    writeFileSync(FIXTURE, `${JSON.stringify({ wire: WIRE_VERSION, fingerprints: now } satisfies Recorded, null, 2)}\n`);
    return;
  }
  if (same && recorded?.wire === WIRE_VERSION) return;
  const what = [
    d.changed.length ? `changed: ${d.changed.join(', ')}` : '',
    d.added.length ? `added: ${d.added.join(', ')}` : '',
    d.removed.length ? `removed: ${d.removed.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('; ');
  const [major, minor] = WIRE_VERSION.split('.').map(Number) as [number, number];
  if (same) {
    throw new Error(
      `WIRE_VERSION is ${WIRE_VERSION} but test/fixtures/wire-contract.json records the contract of ${recorded?.wire}, which is unchanged: set WIRE_VERSION back to ${recorded?.wire} in src/version.ts`,
    );
  }
  if (recorded && recorded.wire !== WIRE_VERSION) {
    throw new Error(
      `WIRE_VERSION is now ${WIRE_VERSION} (was ${recorded.wire}; ${what}): record the contract for it with\n  ${RECORD}\nand commit test/fixtures/wire-contract.json with src/version.ts`,
    );
  }
  throw new Error(
    [
      `The wire contract changed (${what}) but WIRE_VERSION is still ${WIRE_VERSION}. In src/version.ts, set WIRE_VERSION to:`,
      `  ${major}.${minor + 1} if the change is additive (a new optional field, route, event type, state or reason code; docs/integrating.md#versioning-of-the-wire-schemas),`,
      `  ${major + 1}.0 if it is breaking (anything removed, a field required or narrowed, a reason code's HTTP status changed${d.removed.length ? '; an export was removed, so this one is' : ''}),`,
      `then run\n  ${RECORD}\nand commit src/version.ts and test/fixtures/wire-contract.json together.`,
    ].join('\n'),
  );
});
