/**
 * SQL lives in src/store only. `npm run lint:deps` keeps `pg` out of the rest (sql-only-in-store in
 * .dependency-cruiser.cjs), but a Pool is passed around as a type, so a module beside the store
 * could still write its own query: this reads the code for one, two ways. A statement in a string
 * (SELECT, INSERT INTO, UPDATE … SET, DELETE FROM, ON CONFLICT), or a `.query(` given a literal (a
 * Temporal workflow query takes a definition, never a string). src/infra/postgres.ts creates the
 * database before any pool exists, and is the one other place.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const ALLOWED = [/^src\/store\//, /^src\/infra\/postgres\.ts$/];

const STATEMENT = /\b(SELECT\s+[\w*(]|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|ON\s+CONFLICT)\b/;
const LITERAL_QUERY = /\.query\s*(<[^>]*>)?\(\s*['"`]/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : /\.ts$/.test(f) ? [p] : [];
  });
}

/** Every line outside the store that writes SQL, as `file:line: text`. */
function sqlOutsideStore(files: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    if (ALLOWED.some((a) => a.test(file))) continue;
    // Comments may name a statement in prose ("the INSERT INTO … is the store's").
    const code = text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/\/\/[^\n]*/g, '');
    code.split('\n').forEach((line, i) => {
      if (STATEMENT.test(line) || LITERAL_QUERY.test(line)) out.push(`${file}:${i + 1}: ${line.trim().slice(0, 80)}`);
    });
  }
  return out;
}

const code = () => Object.fromEntries(sources(path.join(ROOT, 'src')).map((f) => [path.relative(ROOT, f), readFileSync(f, 'utf8')]));

test('no SQL outside src/store (and src/infra/postgres.ts)', () => {
  expect(sqlOutsideStore(code())).toEqual([]);
});

test('a planted query outside the store is caught, a store one and prose are not', () => {
  const files = {
    ...code(),
    'src/provenance/planted.ts':
      "await pool.query('SELECT 1 FROM ownerships WHERE id = $1', [id]);\nconst q = `INSERT INTO late_work (a) VALUES ($1)`;\nawait client.query(sql);",
    'src/api/service/planted.ts': "// the INSERT INTO … is the store's\n/* SELECT * FROM x */\nawait handle.query(projectionQuery);",
    'src/store/planted.ts': "await pool.query('SELECT 1');",
  };
  expect(sqlOutsideStore(files)).toEqual([
    "src/provenance/planted.ts:1: await pool.query('SELECT 1 FROM ownerships WHERE id = $1', [id]);",
    'src/provenance/planted.ts:2: const q = `INSERT INTO late_work (a) VALUES ($1)`;',
  ]);
});
