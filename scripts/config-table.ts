/**
 * Prints docs/configuration.md's table (markdown: variable | default | meaning) from ENV in
 * src/config.ts, the single source of every environment variable the service reads.
 *
 *   npx tsx scripts/config-table.ts
 *
 * Defaults computed from the machine (OD_HOST_ID, OD_ALLOWED_ROOTS) are printed symbolically, so
 * the table is the same on every machine.
 */
import { ENV, type EnvName } from '../src/config';

/** How the defaults that depend on the machine running the service are shown. */
export const SYMBOLIC_DEFAULTS: Partial<Record<EnvName, string>> = {
  OD_HOST_ID: 'hostname',
  OD_ALLOWED_ROOTS: '$HOME:$TMPDIR',
};

/** A markdown table cell: no line breaks, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}

/** Inline code that survives backticks inside the value. */
function code(text: string): string {
  const fence = text.includes('`') ? '``' : '`';
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

export function configTable(): string {
  const lines = ['| variable | default | meaning |', '|---|---|---|'];
  for (const name of Object.keys(ENV) as EnvName[]) {
    const { default: def, doc } = ENV[name];
    const shown = SYMBOLIC_DEFAULTS[name] ?? def;
    const defaultCell = shown === '' ? '(empty)' : code(shown);
    lines.push(`| ${code(name)} | ${cell(defaultCell)} | ${cell(doc)} |`);
  }
  return `${lines.join('\n')}\n`;
}

if (require.main === module) {
  process.stdout.write(configTable());
}
