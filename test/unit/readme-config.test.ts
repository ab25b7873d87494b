/**
 * docs/configuration.md's table and scripts/config-table.ts against ENV in src/config.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ENV, type EnvName } from '../../src/config';
import { configTable, SYMBOLIC_DEFAULTS } from '../../scripts/config-table';

const ROOT = path.resolve(__dirname, '..', '..');

const docPath = path.join(ROOT, 'docs', 'configuration.md');
const doc = fs.existsSync(docPath) ? fs.readFileSync(docPath, 'utf8') : null;
const names = Object.keys(ENV) as EnvName[];

describe('docs/configuration.md', () => {
  test('holds the table scripts/config-table.ts prints from ENV in src/config.ts, as printed', () => {
    expect(doc).not.toBeNull();
    const missing = names.filter((name) => !new RegExp(`\\| \`${name}\` \\|`).test(doc as string));
    expect(missing.map((name) => `docs/configuration.md does not list ${name} (regenerate the table: npx tsx scripts/config-table.ts)`)).toEqual([]);
    expect((doc as string).includes(configTable())).toBe(true);
  });
});

describe('scripts/config-table.ts', () => {
  const table = configTable();
  const rows = table.trim().split('\n');

  test('prints a markdown table with one row per ENV variable, in ENV order', () => {
    expect(rows[0]).toBe('| variable | default | meaning |');
    expect(rows[1]).toBe('|---|---|---|');
    expect(rows.slice(2).map((r) => /^\| `([A-Z0-9_]+)` \|/.exec(r)?.[1])).toEqual(names);
    for (const r of rows.slice(2)) expect(r.split(/(?<!\\)\|/).length).toBe(5); // 3 cells
  });

  test('shows each default and meaning; machine-specific defaults symbolically', () => {
    for (const [i, name] of names.entries()) {
      const row = rows[i + 2];
      const shown = SYMBOLIC_DEFAULTS[name] ?? ENV[name].default;
      expect(row).toContain(shown === '' ? '| (empty) |' : `| \`${shown}\` |`);
      expect(row).toContain(ENV[name].doc.replace(/\|/g, '\\|'));
    }
    expect(rows.find((r) => r.startsWith('| `OD_HOST_ID`'))).toContain('| `hostname` |');
    expect(rows.find((r) => r.startsWith('| `OD_ALLOWED_ROOTS`'))).toContain('| `$HOME:$TMPDIR` |');
  });

  test('is the same on every machine: no home directory or host name of this one', () => {
    const home = os.homedir();
    if (home.length > 1) expect(table).not.toContain(home);
    expect(table).not.toContain(`\`${os.hostname()}\``);
    // Every machine-computed default is rendered symbolically.
    for (const name of names) {
      const def = ENV[name].default;
      const machineSpecific = def !== '' && (def === os.hostname() || def.split(path.delimiter).some((p) => p === home || p === os.tmpdir()));
      if (machineSpecific) expect(SYMBOLIC_DEFAULTS[name]).toBeDefined();
    }
  });
});
