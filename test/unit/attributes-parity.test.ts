import type { z } from 'zod';
import { ListItemSchema, LivenessSchema, OwnershipViewSchema, ProjectionSyncSchema, WireRecordSchema } from '../../src/contract/http';
import { SEARCH_ATTRIBUTES } from '../../src/config';
import { ATTRIBUTES, ENUMERATED_SURFACES, type Surface } from '../../src/domain/attributes';
import { EventBaseSchema, EventDataSchemas } from '../../src/domain/events';
import { OwnerSchema } from '../../src/domain/identity';
import { OwnershipRecordSchema } from '../../src/domain/projection';
import { LockJsonSchema } from '../../src/git/lock-file';
import { LocalProjectionSchema } from '../../src/git/projection';

/**
 * The attribute table (src/domain/attributes.ts) against the schemas: every field of the record,
 * of every event, of the git projection, of the lock JSON, every search attribute and every live
 * field the API serves has exactly one row; no row names a field that is gone; no fact has two
 * homes. A new field fails here until its row says where it is decided and how copies follow.
 */

const keys = (s: { shape: Record<string, unknown> }) => Object.keys(s.shape);
const without = (s: { shape: Record<string, unknown> }, base: { shape: Record<string, unknown> }, skip: readonly string[]) =>
  keys(s).filter((k) => !(k in base.shape) && !skip.includes(k));

function enumerated(): Record<string, string[]> {
  const owner = keys(OwnerSchema);
  return {
    event: [
      ...keys(EventBaseSchema),
      ...Object.entries(EventDataSchemas).flatMap(([type, schema]) =>
        keys(schema as unknown as z.ZodObject).map((k) => `${type.replace(/^ownership\./, '')}.${k}`),
      ),
    ],
    record: [...keys(OwnershipRecordSchema).filter((k) => k !== 'owner'), ...owner.map((k) => `owner.${k}`)],
    git: keys(LocalProjectionSchema),
    lock: keys(LockJsonSchema),
    searchAttribute: Object.keys(SEARCH_ATTRIBUTES),
    api: [
      ...keys(LivenessSchema).map((k) => `liveness.${k}`),
      ...keys(ProjectionSyncSchema).map((k) => `projectionSync.${k}`),
      ...without(OwnershipViewSchema, WireRecordSchema, ['liveness', 'projectionSync']).map((k) => `view.${k}`),
      ...without(ListItemSchema, WireRecordSchema, ['liveness']).map((k) => `list.${k}`),
    ],
  };
}

/** Every field the table names on an enumerated surface, with the rows (fact, home or copy) naming it. */
function declared(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const row of ATTRIBUTES) {
    const places = [{ ...row.home, role: 'home' }, ...row.copies.map((c) => ({ ...c, role: 'copy' }))];
    for (const p of places) {
      if (!ENUMERATED_SURFACES.includes(p.surface)) continue;
      for (const f of p.fields) {
        const id = `${p.surface}:${f}`;
        out.set(id, [...(out.get(id) ?? []), `${row.fact} (${p.role})`]);
      }
    }
  }
  return out;
}

test('the API serves the record as it is: a field added to it is a field of the record', () => {
  expect(keys(WireRecordSchema).sort()).toEqual(keys(OwnershipRecordSchema).sort());
});

test('every field of the record, the events, the git projection, the lock JSON, the search attributes and the live API has a row', () => {
  const table = declared();
  const missing = Object.entries(enumerated()).flatMap(([surface, fields]) => fields.map((f) => `${surface}:${f}`).filter((id) => !table.has(id)));
  expect(missing).toEqual([]);
});

test('no row names a field that does not exist', () => {
  const all = new Set(Object.entries(enumerated()).flatMap(([surface, fields]) => fields.map((f) => `${surface}:${f}`)));
  expect([...declared().keys()].filter((id) => !all.has(id))).toEqual([]);
});

test('each field belongs to one row, once: a field is the home of one fact or a copy of one', () => {
  const twice = [...declared()].filter(([, rows]) => rows.length > 1).map(([id, rows]) => `${id}: ${rows.join('; ')}`);
  expect(twice).toEqual([]);
});

test('each fact has one row, so one home, and every copy says how it is refreshed', () => {
  const facts = ATTRIBUTES.map((a) => a.fact);
  expect(facts.filter((f, i) => facts.indexOf(f) !== i)).toEqual([]);
  for (const a of ATTRIBUTES) {
    expect(a.home.fields.length).toBeGreaterThan(0);
    for (const c of a.copies)
      expect({ fact: a.fact, fields: c.fields, refresh: c.refresh.length > 0 }).toEqual({ fact: a.fact, fields: c.fields, refresh: true });
  }
});

test('a fact is not declared at home twice: no copy sits on its home surface under the same field', () => {
  const clash: string[] = [];
  for (const a of ATTRIBUTES) {
    const home = new Set(a.home.fields.map((f) => `${a.home.surface}:${f}`));
    for (const c of a.copies) for (const f of c.fields) if (home.has(`${c.surface}:${f}`)) clash.push(`${a.fact}: ${c.surface}:${f}`);
  }
  expect(clash).toEqual([]);
});

test('the surfaces enumerated are the ones the table says it checks', () => {
  expect(Object.keys(enumerated()).sort()).toEqual([...ENUMERATED_SURFACES].sort() as Surface[]);
});
