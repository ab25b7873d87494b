/** Shared formatting of the human renderers: unknown is `unknown`, never a guess (docs/cli.md). */

export const UNKNOWN = 'unknown';

export interface Field {
  label: string;
  value: string;
}

/** A value as shown: missing (null, undefined, empty) reads `unknown`. */
export function show(x: string | number | null | undefined): string {
  return x === null || x === undefined || x === '' ? UNKNOWN : String(x);
}

const RUNTIMES: Readonly<Record<string, string>> = {
  'chatgpt-web': 'ChatGPT Web',
};

/** A runtime id for people: known ones by name, others as they are. */
export function runtimeLabel(runtime: string | null | undefined): string {
  if (runtime === null || runtime === undefined || runtime === '' || runtime === UNKNOWN) return UNKNOWN;
  return RUNTIMES[runtime] ?? runtime;
}

/**
 * `Label:` padded to the widest label plus one space, as docs/cli.md shows (`Owner runtime: ...`); an
 * empty label continues the field above.
 */
export function renderFields(fields: readonly Field[]): string {
  const width = Math.max(...fields.map((f) => f.label.length)) + 2;
  return fields.map((f) => `${(f.label === '' ? '' : `${f.label}:`).padEnd(width)}${f.value}`).join('\n');
}

export function shortSha(sha: string | null | undefined): string {
  return sha ? sha.slice(0, 12) : UNKNOWN;
}

/** A byte count as people read it: 812 B, 4.0 KiB, 12.3 MiB. */
export function byteText(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

/** A WIP snapshot's size, when it was recorded: `, 3 files, 4.0 KiB`. */
export function wipSizeText(w: { files?: number | undefined; bytes?: number | undefined }): string {
  return w.files === undefined || w.bytes === undefined ? '' : `, ${w.files} file${w.files === 1 ? '' : 's'}, ${byteText(w.bytes)}`;
}
