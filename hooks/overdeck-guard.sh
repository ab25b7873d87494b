# shellcheck shell=sh
# The ownership guard: the one implementation of the rule, sourced by every installed hook and run
# by `od-worktree guard` (src/git/guard.ts through `sh -c '. overdeck-guard.sh; od_guard'`).
#
# It runs inside every commit, so the common paths start no process at all: the projection is the
# file that config.worktree includes (<private git dir>/overdeck.config, written whole by
# od-worktree and replaced by rename) and is read with shell builtins. Anything in it that is not
# in the exact form od-worktree writes (escapes, hand edits) is handed to one
# `git config --worktree --includes --get-regexp` call, which is authoritative.
#
# od_guard returns: 0 allowed, 10 not_owner, 11 stale_epoch, 12 strict_no_session,
# 13 provisional_conflict; a refusal also prints the owner on stderr.

# BEGIN generated from src/domain/states.ts (FREE_STATES) and src/git/projection.ts
# (PROVISIONAL_CONFLICT_STATES); test/unit/guard-states.test.ts fails when this drifts and
# OD_WRITE_GUARD_STATES=1 makes it rewrite the block. Do not edit by hand.
od_free_states=' released landed closed '
od_conflict_states=' provisional-conflict provisional_conflict '
# END generated

# od_in STATE LIST: is STATE one of the space-separated words of LIST (a builtin case, no process)?
od_in() {
  case $2 in *" $1 "*) return 0 ;; esac
  return 1
}

# Sets od_gd to this worktree's private git dir. Hooks run at the worktree top; git exports GIT_DIR
# to hooks of linked worktrees, and the main worktree has .git (a directory, or a "gitdir:" file).
od_git_dir() {
  od_gd=${GIT_DIR-}
  [ -n "$od_gd" ] && return 0
  if [ -f .git ]; then
    read -r od_line <.git
    od_gd=${od_line#gitdir: }
  else
    od_gd=.git
  fi
}

od_owner_key() {
  case $1 in
    execution-session-id) od_owner=$2 ;;
    runtime) od_runtime=$2 ;;
    ownership-id) od_ownership=$2 ;;
    epoch) od_epoch=$2 ;;
    state) od_state=$2 ;;
    worker-id) od_worker=$2 ;;
    conversation-id) od_conversation=$2 ;;
  esac
  od_any=1
}

od_read_owner_git() {
  od_any='' od_owner='' od_runtime='' od_ownership='' od_epoch='' od_state='' od_worker='' od_conversation=''
  # Worktree scope only: a global or shared overdeck.owner.* must not count. A failing git (no
  # worktreeConfig extension) means od-worktree never wrote a projection here.
  od_cfg=$(git config --worktree --includes --get-regexp '^overdeck\.owner\.' 2>/dev/null) || od_cfg=
  [ -n "$od_cfg" ] || return 0
  while read -r od_k od_v; do
    od_owner_key "${od_k#overdeck.owner.}" "$od_v"
  done <<OD_EOF
$od_cfg
OD_EOF
}

od_read_owner() {
  od_any='' od_owner='' od_runtime='' od_ownership='' od_epoch='' od_state='' od_worker='' od_conversation=''
  od_git_dir
  [ -f "$od_gd/overdeck.config" ] || return 0
  od_section=
  while IFS= read -r od_l || [ -n "$od_l" ]; do
    case $od_l in
      '' | '#'*) continue ;;
      *\\*) od_read_owner_git; return 0 ;;
      '[overdeck "owner"]') od_section=owner; continue ;;
      '['*) od_section=other; continue ;;
    esac
    [ "$od_section" = owner ] || continue
    case $od_l in
      '	'[a-z]*' = "'*'"') ;;
      *) od_read_owner_git; return 0 ;;
    esac
    od_k=${od_l#?}
    od_k=${od_k%% = \"*}
    od_v=${od_l#* = \"}
    od_v=${od_v%\"}
    od_owner_key "$od_k" "$od_v"
  done <"$od_gd/overdeck.config"
}

od_refuse() {
  # printf, not echo: dash's echo would interpret backslashes in the values.
  printf '%s\n' "od-worktree: refused: this worktree is owned by session ${od_owner:-unknown} (runtime ${od_runtime:-unknown}, ownership ${od_ownership:-unknown}, epoch ${od_epoch:-unknown}); you are $2" >&2
  return "$1"
}

od_guard() {
  od_session=${OVERDECK_EXECUTION_SESSION_ID-}
  od_read_owner
  [ -n "$od_any" ] || return 0
  [ -n "$od_state" ] && od_in "$od_state" "$od_free_states" && return 0
  if [ -z "$od_session" ]; then
    # Unidentified callers (people, tools) pass unless the repository opted into strict mode.
    [ "$(git config --bool --get overdeck.guard.strict 2>/dev/null)" = true ] || return 0
    od_refuse 12 "unidentified (OVERDECK_EXECUTION_SESSION_ID is unset and overdeck.guard.strict=true)"
    return
  fi
  if [ -n "$od_state" ] && od_in "$od_state" "$od_conflict_states"; then
    # A provisional (offline) claim lost to a durable owner: nobody identified mutates until an
    # explicit `od-worktree reconcile --repair` writes the durable owner back.
    printf '%s\n' "od-worktree: refused: the provisional claim of session ${od_owner:-unknown} (runtime ${od_runtime:-unknown}, ownership ${od_ownership:-unknown}) conflicts with the durable record of this worktree; run od-worktree reconcile --repair; you are $od_session" >&2
    return 13
  fi
  if [ "$od_session" != "$od_owner" ]; then
    od_refuse 10 "$od_session"
    return
  fi
  if [ -n "${OVERDECK_EPOCH-}" ] && [ "$OVERDECK_EPOCH" != "$od_epoch" ]; then
    od_refuse 11 "$od_session with stale epoch $OVERDECK_EPOCH"
    return
  fi
  return 0
}

# reference-transaction: does this transaction ($1: its "<old> <new> <ref>" lines) move this
# worktree's HEAD or checked-out branch? Other refs (tags, refs/overdeck/wip/...) pass untouched.
od_touches_own_head() {
  od_git_dir
  od_head=
  [ -r "$od_gd/HEAD" ] && read -r od_head <"$od_gd/HEAD"
  case $od_head in "ref: "*) od_branch=${od_head#ref: } ;; *) od_branch=HEAD ;; esac
  od_hit=1
  while read -r _ _ od_ref; do
    if [ "$od_ref" = HEAD ] || [ "$od_ref" = "$od_branch" ]; then od_hit=0; fi
  done <<OD_EOF
$1
OD_EOF
  return $od_hit
}

# --- the journal (docs/git-projection.md#the-journal) ---------------------------------------------
# One line per fact appended to <private git dir>/overdeck.journal with a single printf (one
# write(2) under PIPE_BUF with O_APPEND: concurrent writers never interleave). No process: the
# host agent ships it to PostgreSQL later (src/git/journal.ts); nothing here waits on a network.

# od_jv VALUE: sets od_jv_out to VALUE when it holds identifier characters only, else !invalid
# (values may never carry a TAB or a newline into the journal).
od_jv() {
  case $1 in
    *[!A-Za-z0-9._:@/+-]*) od_jv_out='!invalid' ;;
    *) od_jv_out=$1 ;;
  esac
}

# od_journal KIND OLD NEW REF [EXTRA]: appends one line with the projection read by od_read_owner
# (od_guard calls it) and the caller's environment. EXTRA is "<TAB>key=value..." already sanitised.
od_journal() {
  od_jv "$2"; od_j_old=$od_jv_out
  od_jv "$3"; od_j_new=$od_jv_out
  case $4 in *[!A-Za-z0-9._:@/+-]*) od_j_ref='!invalid' ;; *) od_j_ref=$4 ;; esac
  od_jv "${OVERDECK_EXECUTION_SESSION_ID-}"; od_j_session=$od_jv_out
  od_jv "${OVERDECK_EPOCH-}"; od_j_envepoch=$od_jv_out
  od_jv "$od_ownership"; od_j_own=$od_jv_out
  od_jv "$od_epoch"; od_j_epoch=$od_jv_out
  od_jv "$od_owner"; od_j_owner=$od_jv_out
  od_jv "$od_state"; od_j_state=$od_jv_out
  od_jv "$od_worker"; od_j_worker=$od_jv_out
  od_jv "$od_conversation"; od_j_conv=$od_jv_out
  printf 'od1\tkind=%s\tref=%s\told=%s\tnew=%s\tsession=%s\tenv_epoch=%s\townership=%s\tepoch=%s\towner=%s\tstate=%s\tworker=%s\tconversation=%s%s\n' \
    "$1" "$od_j_ref" "$od_j_old" "$od_j_new" "$od_j_session" "$od_j_envepoch" "$od_j_own" "$od_j_epoch" "$od_j_owner" "$od_j_state" "$od_j_worker" "$od_j_conv" "${5-}" \
    >>"$od_gd/overdeck.journal" 2>/dev/null || :
}

# od_journal_moves KIND INPUT [EXTRA]: one line per move of this worktree's checked-out ref in the
# transaction INPUT (od_touches_own_head set od_branch). With a branch checked out git reports both
# HEAD and the branch; only the branch line is written.
od_journal_moves() {
  while read -r od_o od_n od_ref; do
    [ "$od_ref" = "$od_branch" ] && od_journal "$1" "$od_o" "$od_n" "$od_ref" "${3-}"
  done <<OD_EOF
$2
OD_EOF
}
