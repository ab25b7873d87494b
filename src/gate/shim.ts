/**
 * The generated block of the shell shim bin/git-gate/git: the fast paths that keep an agent's
 * everyday git at bare git's speed without starting node, rendered from the table
 * (src/domain/git-rules.ts) and the guard's state lists. test/unit/git-rules.test.ts keeps the
 * shim's copy equal to this (OD_WRITE_GIT_RULES=1 rewrites it).
 */
import { HARMLESS_FAST, OWNER_FAST } from '../domain/git-rules';
import { FREE_STATES } from '../domain/states';
import { PROVISIONAL_CONFLICT_STATES } from '../git/projection-keys';

export function caseList(words: readonly string[], indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    const next = line === '' ? w : `${line} | ${w}`;
    if (next.length > 96 && line !== '') {
      lines.push(`${line} | \\`);
      line = w;
    } else line = next;
  }
  lines.push(line);
  return lines.map((l, i) => (i === 0 ? l : `${indent}  ${l}`)).join('\n');
}

/**
 * The harmless commands agents run most are exec'ed at once unless the environment hands git
 * configuration or a program; OWNER_FAST commands go ahead when od_owner_fast proves the caller's
 * tenure (or finds the worktree free); anything else falls through to the gate program.
 */
export function gateShimBlock(): string {
  return [
    'case ${1-} in',
    `  ${caseList([...HARMLESS_FAST, '--version', "''"], '  ')})`,
    '    [ -n "$od_env_over" ] || od_run "$@" ;;',
    `  ${caseList(OWNER_FAST, '  ')})`,
    '    [ -n "$od_env_over" ] || ! od_owner_fast || od_run "$@" ;;',
    'esac',
  ].join('\n');
}

/**
 * The state test of hooks/overdeck-guard.sh od_mine, between its BEGIN/END generated markers: the
 * guard reads the projection with shell builtins only, so it carries a generated copy of the
 * state lists instead of importing them (test/unit/guard-states.test.ts keeps it in step). A free
 * worktree is accepted; a lost provisional claim is the gate program's to refuse.
 */
export function guardStatesBlock(): string {
  const arm = (list: readonly string[]) => list.join(' | ');
  return `  case $od_s in ${arm(FREE_STATES)}) return 0 ;; ${arm(PROVISIONAL_CONFLICT_STATES)}) return 1 ;; esac`;
}
