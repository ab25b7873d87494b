import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Rng } from '../../../chaos/rng';

/**
 * Hostile values: strings every store or parser on the way may choke on, and paths that probe the
 * allowed-roots check (escapes, symlink loops, names the kernel refuses). Each hostile string
 * carries a canary where it can, so an echo of it in an error body is found by substring.
 */

/** A unique marker per request: never a valid value on its own, easy to find in any echo. */
export function canary(rng: Rng): string {
  return `zqfz${rng.tag(8)}`;
}

/** Strings that are hostile as text (the canary marks where it can go). */
export function hostileText(rng: Rng, c: string): string {
  return rng.pick<() => string>([
    () => `${c}\u0000`,
    () => `\u0000${c}`,
    () => `${c}\ud800`,
    () => `\udfff${c}`,
    () => `${c}\ud800\ud800x`,
    () => `${c}\u0001\u0002\u001b[31m`,
    () => `${c}\nX-Injected: 1`,
    () => `${c}\r\n\r\nHTTP/1.1 200 OK`,
    () => `${c}\t${c}`,
    () => `${c}${'A'.repeat(10_000)}`,
    () => `${c}${'é'.repeat(5_000)}`,
    () => `${c}${'😀'.repeat(3_000)}`,
    () => `${c}\u202e\u200b\ufeff\uffff`,
    () => `${c}/../../../../etc/passwd`,
    () => `../${c}`,
    () => `${c}' OR '1'='1`,
    () => `${c}"; DROP TABLE ownerships; --`,
    () => `${c}<script>alert(1)</script>`,
    () => `${c}%00%2e%2e%2f`,
    () => `${c}\${jndi:ldap://x}`,
    () => `{{${c}}}`,
    () => `${c}\\u0000`,
    () => ` ${c} `,
    () => `${c}@{-1}`,
    () => `-${c}`,
    () => `${c}.lock`,
    () => `${c}~^:?*[`,
  ])();
}

/** Short hostile strings that cannot carry a canary (checked by the control-character rule instead). */
export const BARE_HOSTILE = [
  '',
  ' ',
  '\u0000',
  '\ud800',
  '\udc00',
  '.',
  '..',
  '../',
  '/',
  '//',
  '~',
  '-',
  '@',
  '\n',
  '\u007f',
  '\u00a0',
  'null',
  'undefined',
  '0',
  '-1',
  'true',
  '[]',
  '{}',
];

export interface PathFixtures {
  /** an allowed root of the server */
  root: string;
  /** a directory of the fuzz under the root, holding the fixtures below */
  dir: string;
  /** a -> b -> a */
  loopA: string;
  /** self -> self */
  loopSelf: string;
  /** a symlink under the root to a directory outside it */
  escape: string;
  /** a regular file (so file/x is ENOTDIR) */
  file: string;
  /** a directory under the root that is no git worktree */
  plain: string;
}

export function makePathFixtures(root: string): PathFixtures {
  const dir = mkdtempSync(path.join(root, 'fuzz-paths-'));
  const loops = path.join(dir, 'loop');
  mkdirSync(loops);
  symlinkSync('b', path.join(loops, 'a'));
  symlinkSync('a', path.join(loops, 'b'));
  symlinkSync('self', path.join(loops, 'self'));
  const escape = path.join(dir, 'escape');
  symlinkSync('/etc', escape);
  const file = path.join(dir, 'file.txt');
  writeFileSync(file, 'not a directory\n');
  const plain = path.join(dir, 'plain');
  mkdirSync(plain);
  return { root, dir, loopA: path.join(loops, 'a'), loopSelf: path.join(loops, 'self'), escape, file, plain };
}

/**
 * Paths that must be refused (or found not to be worktrees), never crash: through symlink loops,
 * over-long components, over-long totals in bytes (multi-byte components that each fit), escapes.
 */
export function hostilePath(rng: Rng, fx: PathFixtures, near: string, c: string): string {
  return rng.pick<() => string>([
    () => `${fx.loopA}/${c}`,
    () => fx.loopA,
    () => `${fx.loopSelf}/x/../${c}`,
    () => `${fx.loopA}/../${c}`,
    () => `${fx.root}/${c}${'x'.repeat(300)}`,
    () => `${near}/${'y'.repeat(256)}/${c}`,
    () => `${fx.root}/${c}/${'p'.repeat(5_000)}`,
    () => `/${c}`.padEnd(5_000, '/q'),
    // 4000 characters, 2 bytes each, components of 254 bytes: passes a per-component check, not PATH_MAX.
    () => `${fx.root}/${c}/${Array.from({ length: 31 }, () => 'é'.repeat(127)).join('/')}`.slice(0, 4000),
    () => `${fx.escape}/passwd`,
    () => `${fx.escape}/../${c}`,
    () => `${fx.root}/../../../../etc/${c}`,
    () => `${near}/../../../../../../../../etc`,
    () => '/etc/passwd',
    () => '/',
    () => '/proc/self/root/etc',
    () => `/proc/self/cwd/${c}`,
    () => '/dev/null',
    () => `~/${c}`,
    () => `../../${c}`,
    () => `./${c}`,
    () => `${fx.file}/${c}`,
    () => `${fx.file}/..`,
    () => fx.plain,
    () => `${fx.plain}/${c}/../../`,
    () => `${near}/.git`,
    () => `${near}//./`,
    () => `${near}\u0000/${c}`,
    () => `${near}/${c}\ud800`,
    () => `${near}/${c}\n`,
    () => `${near}/${c}%2e%2e%2f`,
    () => `${near} `,
    () => `file://${near}`,
    () => `\\\\server\\share\\${c}`,
  ])();
}
