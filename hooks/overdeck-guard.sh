# shellcheck shell=sh
# The owner's fast path of the ownership rule, sourced by the installed hooks (overdeck-hook.sh)
# and the PATH gate (bin/git-gate/git). It runs inside every commit, so it uses shell builtins and
# at most one sha256sum, and it only ever ACCEPTS: the rule itself, every refusal with its reason
# and next step, and every projection not in the exact form od-worktree writes, are the gate
# program's (src/gate/guard.ts), which the callers start whenever od_mine does not answer 0.

# od_read GD: the projection of the worktree whose private git dir is GD (<GD>/overdeck.config,
# written whole by od-worktree): od_any (any owner key), od_o (session), od_e (epoch), od_s (state),
# od_t (tenure hashes), od_w (worker), od_c (conversation), od_i (ownership). Returns 1 on anything
# else than that form (an escape, an odd line in the owner section): only the gate program reads it.
# shellcheck disable=SC2034 # od_w, od_c, od_i: for the hook's journal line (overdeck-hook.sh)
od_read() {
  od_any='' od_o='' od_e='' od_s='' od_t='' od_w='' od_c='' od_i='' od_in=''
  [ -f "$1/overdeck.config" ] || return 0
  while IFS= read -r od_l || [ -n "$od_l" ]; do
    od_v=${od_l#*' = "'} od_v=${od_v%'"'}
    case $od_in$od_l in 'O	'[a-z]*' = "'*'"') od_any=1 ;; esac
    case $od_in$od_l in
      *\\*) return 1 ;;
      '[overdeck "owner"]' | 'O[overdeck "owner"]') od_in=O ;;
      '['* | 'O['*) od_in= ;;
      'O	execution-session-id = "'*'"') od_o=$od_v ;;
      'O	epoch = "'*'"') od_e=$od_v ;;
      'O	state = "'*'"') od_s=$od_v ;;
      'O	tenure-hash = "'*'"') od_t=$od_v ;;
      'O	worker-id = "'*'"') od_w=$od_v ;;
      'O	conversation-id = "'*'"') od_c=$od_v ;;
      'O	ownership-id = "'*'"') od_i=$od_v ;;
      'O' | 'O#'* | 'O	'[a-z]*' = "'*'"') ;;
      O*) return 1 ;;
    esac
  done <"$1/overdeck.config"
}

# od_mine GD: 0 when the worktree whose private git dir is GD is free, or the caller (its OVERDECK_*
# variables) is its current tenure: the secret hashes to a word of tenure-hash (a projection with
# none: the owner's session id). sha256sum is found at a fixed path, never on PATH (a caller's own
# could answer any hash), and runs in the C locale (no locale files to load); without it the gate
# program hashes. The last worktree whose secret was checked is remembered (od_ok): a commit moves
# HEAD and its branch, one worktree, one sha256.
od_mine() {
  [ "$1" != "${od_ok-}" ] || return 0
  od_read "$1" || return 1
  # No owner in the projection is a free worktree, unless its lock file outlived the projection
  # (written after it, cleared after it: a hand deleted or emptied it); the gate program refuses that.
  [ -n "$od_any" ] || { [ ! -e "$1/overdeck.lock.json" ]; return; }
  # BEGIN generated from src/domain/states.ts (FREE_STATES) and src/git/projection-format.ts
  # (PROVISIONAL_CONFLICT_STATES) by src/gate/shim.ts; test/unit/guard-states.test.ts fails when
  # this drifts (OD_WRITE_GUARD_STATES=1 rewrites it). Free: yes; a lost provisional claim: the gate program's.
  case $od_s in released | landed | closed) return 0 ;; provisional-conflict | provisional_conflict) return 1 ;; esac
  # END generated
  [ -z "${OVERDECK_EXECUTION_SESSION_ID-}" ] || [ "$OVERDECK_EXECUTION_SESSION_ID" = "$od_o" ] || return 1
  [ -z "${OVERDECK_EPOCH-}" ] || [ "$OVERDECK_EPOCH" = "$od_e" ] || return 1
  [ -n "$od_t" ] || { [ -n "${OVERDECK_EXECUTION_SESSION_ID-}" ]; return; }
  [ -n "${OVERDECK_TENURE_SECRET-}" ] && [ -x /usr/bin/sha256sum ] || return 1
  od_x=$(LC_ALL=C /usr/bin/sha256sum <<OD_EOF
$OVERDECK_TENURE_SECRET
OD_EOF
)
  case " $od_t " in *" ${od_x%% *} "*) [ -n "$od_x" ] && od_ok=$1 ;; *) return 1 ;; esac
}
