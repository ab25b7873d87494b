import { readFileSync, statSync } from 'node:fs';

/**
 * The gate's reads of git's small files (HEAD, commondir, a ref): what a missing or unreadable
 * file answers is "nothing", never an error, since a hook must answer whatever it finds.
 */

/** The file's first line ('' when it cannot be read). */
export function firstLine(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n')[0] ?? '';
  } catch {
    return '';
  }
}

export function isFile(f: string): boolean {
  try {
    return statSync(f).isFile();
  } catch {
    return false;
  }
}

export function isDir(f: string): boolean {
  try {
    return statSync(f).isDirectory();
  } catch {
    return false;
  }
}
