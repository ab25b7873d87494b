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
# od_guard returns: 0 allowed, 10 not_owner, 11 stale_epoch, 12 unidentified,
# 13 provisional_conflict, 14 tenure_unproven; a refusal also prints the owner and the next step
# on stderr.
#
# Strict by default: in a worktree a live ownership holds, only the current tenure mutates. Its
# proof is OVERDECK_TENURE_SECRET, whose SHA-256 must be one of the words of
# overdeck.owner.tenure-hash (the service derives the secret from its own key; the projection holds
# only hashes, so reading the worktree gives nothing away). The session id and epoch are public:
# they only make the refusal precise. A person steps in with `od-worktree override --reason`, which
# records who and why before it hands over the current tenure's secret.

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
  if [ -z "$od_gd" ]; then
    if [ -f .git ]; then
      read -r od_line <.git
      od_gd=${od_line#gitdir: }
    else
      od_gd=.git
    fi
  fi
  # Absolute, so that what is recorded (a stash entry's maker) and compared means one directory.
  case $od_gd in /*) ;; *) od_gd=$PWD/$od_gd ;; esac
}

# od_common_of GD: sets od_common to the repository's common git dir (a linked worktree's private
# git dir names it in its commondir file).
od_common_of() {
  od_common=$1
  if [ -f "$1/commondir" ]; then
    read -r od_cdl <"$1/commondir" || :
    case $od_cdl in
      /*) od_common=$od_cdl ;;
      # What git writes for every linked worktree: resolved by hand, so that one worktree's git
      # dir is spelled one way whichever way it was reached.
      ../..) od_common=${1%/*}; od_common=${od_common%/*} ;;
      ?*) od_common=$1/$od_cdl ;;
    esac
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
    tenure-hash) od_tenure=$2 ;;
  esac
  od_any=1
}

# od_owner_clear: no projection read yet (every value od_owner_key sets, empty).
od_owner_clear() {
  od_any='' od_owner='' od_runtime='' od_ownership='' od_epoch='' od_state='' od_worker='' od_conversation='' od_tenure=''
}

od_read_owner_git() {
  od_owner_clear
  # Worktree scope only: a global or shared overdeck.owner.* must not count. A failing git (no
  # worktreeConfig extension) means od-worktree never wrote a projection here.
  od_cfg=$(git --git-dir="$od_gd" config --worktree --includes --get-regexp '^overdeck\.owner\.' 2>/dev/null) || od_cfg=
  [ -n "$od_cfg" ] || return 0
  while read -r od_k od_v; do
    od_owner_key "${od_k#overdeck.owner.}" "$od_v"
  done <<OD_EOF
$od_cfg
OD_EOF
}

od_read_owner() {
  od_git_dir
  od_read_owner_at "$od_gd"
}

# od_read_owner_at GD: reads the projection of the worktree whose private git dir is GD.
od_read_owner_at() {
  od_owner_clear
  od_gd=$1
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

# od_sha256 TEXT: sets od_sum to the lowercase hex SHA-256 of TEXT and a newline (a here-document
# is one fork and one exec, a printf pipe two forks more), empty when no tool is found. The tools
# are looked up at fixed absolute paths, never on PATH: a caller who put a `sha256sum` of its own
# first on PATH would otherwise answer whatever hash the projection holds.
od_sha256() {
  od_sum=
  for od_tool in /usr/bin/sha256sum /bin/sha256sum /usr/local/bin/sha256sum /opt/homebrew/bin/sha256sum /usr/bin/shasum /bin/shasum /usr/bin/openssl /bin/openssl; do
    [ -x "$od_tool" ] || continue
    case $od_tool in
      */sha256sum) od_sum=$("$od_tool" <<OD_EOF
$1
OD_EOF
) ;;
      */shasum) od_sum=$("$od_tool" -a 256 <<OD_EOF
$1
OD_EOF
) ;;
      *) od_sum=$("$od_tool" dgst -sha256 -r <<OD_EOF
$1
OD_EOF
) ;;
    esac
    od_sum=${od_sum%% *}
    return 0
  done
  return 0
}

# od_refuse STATUS WHO: the one refusal message: who holds the worktree, who asked, and what to do
# next. One line (agents read the first line of stderr); printf, not echo (dash's echo would
# interpret backslashes in the values). The conversation's title is not in the projection (anyone
# who can read the worktree could read it), so its id stands in; `od-worktree who` shows the rest
# to whoever may see it.
od_refuse() {
  od_conv_part=
  [ -n "$od_conversation" ] && od_conv_part=", conversation $od_conversation"
  printf '%s\n' "od-worktree: refused: this worktree is owned by session ${od_owner:-unknown} (worker ${od_worker:-unknown}${od_conv_part}, runtime ${od_runtime:-unknown}, ownership ${od_ownership:-unknown}, epoch ${od_epoch:-unknown}); you are $2. Next: ask worker ${od_worker:-unknown} to hand the worktree off (od-worktree who shows the owner), or, as a person, step in with od-worktree override --reason '...'" >&2
  return "$1"
}

# od_guard: may the caller (its OVERDECK_* environment) mutate the worktree whose projection
# od_read_owner finds? The rule of docs/agent-gate.md, in the order that names the most precise
# reason: a lost provisional claim, another session, an older epoch, then the tenure proof.
od_guard() {
  od_git_dir
  od_guard_at "$od_gd"
}

# od_guard_at GD: the rule for the worktree whose private git dir is GD (od_gd stays GD).
od_guard_at() {
  od_session=${OVERDECK_EXECUTION_SESSION_ID-}
  od_read_owner_at "$1"
  [ -n "$od_any" ] || return 0
  [ -n "$od_state" ] && od_in "$od_state" "$od_free_states" && return 0
  if [ -n "$od_state" ] && od_in "$od_state" "$od_conflict_states"; then
    # A provisional (offline) claim lost to a durable owner: nobody mutates until an explicit
    # `od-worktree reconcile --repair` writes the durable owner back.
    printf '%s\n' "od-worktree: refused: the provisional claim of session ${od_owner:-unknown} (runtime ${od_runtime:-unknown}, ownership ${od_ownership:-unknown}) conflicts with the durable record of this worktree; run od-worktree reconcile --repair; you are ${od_session:-unidentified}" >&2
    return 13
  fi
  if [ -n "$od_session" ] && [ "$od_session" != "$od_owner" ]; then
    od_refuse 10 "session $od_session"
    return
  fi
  if [ -n "${OVERDECK_EPOCH-}" ] && [ "$OVERDECK_EPOCH" != "$od_epoch" ]; then
    od_refuse 11 "session ${od_session:-unidentified} with stale epoch $OVERDECK_EPOCH"
    return
  fi
  if [ -z "$od_tenure" ]; then
    # A projection with no tenure hash (a provisional offline claim, or one written without the
    # service key): the session id is the only proof there is, and an empty one proves nothing.
    [ -n "$od_session" ] && return 0
    od_refuse 12 "unidentified (OVERDECK_EXECUTION_SESSION_ID is not set)"
    return
  fi
  od_secret=${OVERDECK_TENURE_SECRET-}
  if [ -z "$od_secret" ]; then
    if [ -z "$od_session" ]; then
      od_refuse 12 "unidentified (neither OVERDECK_EXECUTION_SESSION_ID nor OVERDECK_TENURE_SECRET is set)"
    else
      od_refuse 14 "session $od_session without this tenure's secret (OVERDECK_TENURE_SECRET is not set)"
    fi
    return
  fi
  od_sha256 "$od_secret"
  if [ -n "$od_sum" ]; then
    case " $od_tenure " in *" $od_sum "*) return 0 ;; esac
    od_refuse 14 "${od_session:+session $od_session }holding a tenure secret that is not this tenure's (OVERDECK_TENURE_SECRET)"
    return
  fi
  od_refuse 14 "${od_session:+session $od_session }unproven: no sha256sum, shasum or openssl at a standard path to check OVERDECK_TENURE_SECRET"
}

# od_code_of STATUS: sets od_code to the reason code of an od_guard status.
od_code_of() {
  case $1 in 10) od_code=not_owner ;; 11) od_code=stale_epoch ;; 12) od_code=unidentified ;; 13) od_code=provisional_conflict ;; 14) od_code=tenure_unproven ;; *) od_code=refused ;; esac
}

# od_holders REF GD: sets od_holders to the private git dirs (one per line) of the worktrees for
# which a move of REF is a move of their checked-out history: every worktree of the repository
# that has the branch REF checked out (a commit made in a second worktree of an owned branch moves
# the owner's branch too), and this worktree (GD) for HEAD. A replace ref (refs/replace/<sha>)
# makes every git of the repository read other content for an object, an owned HEAD too: every
# worktree with a projection. Other refs (tags, remote-tracking refs, refs/overdeck/wip/...,
# refs/stash) belong to no worktree.
od_holders() {
  od_holders=
  case $1 in
    HEAD) od_holders=$2; return 0 ;;
    refs/heads/*) ;;
    refs/replace/*)
      od_common_of "$2"
      for od_cand in "$od_common" "$od_common"/worktrees/*; do
        [ -f "$od_cand/overdeck.config" ] && od_holders="$od_holders$od_cand
"
      done
      return 0 ;;
    *) return 0 ;;
  esac
  od_common_of "$2"
  for od_cand in "$od_common" "$od_common"/worktrees/*; do
    [ -r "$od_cand/HEAD" ] || continue
    read -r od_h <"$od_cand/HEAD" || :
    [ "$od_h" = "ref: $1" ] && od_holders="$od_holders$od_cand
"
  done
  return 0
}

# od_judge_moves INPUT: reference-transaction's "prepared" lines (<old> <new> <ref>). Every owned
# worktree whose checked-out history a line moves must let the caller through; a refusal is
# journalled in that worktree's journal (one line per move it refused) and returns the status.
od_judge_moves() {
  od_git_dir
  od_here=$od_gd
  # A commit moves HEAD and its branch: one worktree, judged (and its secret hashed) once.
  od_allowed='
'
  while read -r od_o od_n od_ref; do
    [ -n "$od_ref" ] || continue
    # A line that moves nothing (worktree add writing a branch to where it is) changes no history;
    # an all-zero old and new is a deletion whose old value was not given, and is judged.
    case $od_o in *[!0]*) [ "$od_o" = "$od_n" ] && continue ;; esac
    od_holders "$od_ref" "$od_here"
    while IFS= read -r od_cand; do
      [ -n "$od_cand" ] && [ -f "$od_cand/overdeck.config" ] || continue
      case $od_allowed in *"
$od_cand
"*) continue ;; esac
      od_guard_at "$od_cand"
      od_rc=$?
      if [ "$od_rc" -eq 0 ]; then
        od_allowed="$od_allowed$od_cand
"
        continue
      fi
      od_code_of "$od_rc"
      od_jref=$od_ref
      if [ "$od_ref" = HEAD ]; then
        od_head=
        [ -r "$od_cand/HEAD" ] && read -r od_head <"$od_cand/HEAD"
        od_jref=${od_head#ref: }
      fi
      od_journal ref_refused "$od_o" "$od_n" "$od_jref" "	code=$od_code"
      return "$od_rc"
    done <<OD_EOF2
$od_holders
OD_EOF2
  done <<OD_EOF
$1
OD_EOF
  return 0
}

# od_judge_push INPUT: pre-push's lines (<local ref> <local sha> <remote ref> <remote sha>). A
# push that writes an owned branch on the remote (by its local name or the remote one: a force-push
# or a deletion of it, from any worktree) or pushes one must come from that branch's tenure, as
# must any push from an owned worktree.
od_judge_push() {
  od_git_dir
  od_here=$od_gd
  od_guard_at "$od_here" || return
  while read -r od_lref _ od_rref _; do
    for od_r in "$od_lref" "$od_rref"; do
      od_holders "$od_r" "$od_here"
      while IFS= read -r od_cand; do
        [ -n "$od_cand" ] && [ -f "$od_cand/overdeck.config" ] || continue
        od_guard_at "$od_cand" || return
      done <<OD_EOF2
$od_holders
OD_EOF2
    done
  done <<OD_EOF
$1
OD_EOF
  return 0
}

# od_record_stash INPUT: on "committed", remembers which worktree made each new stash entry
# (<common>/overdeck-stash/<sha> holds its private git dir): refs/stash is shared by every
# worktree, so the gate judges dropping an entry as the worktree that made it.
od_record_stash() {
  while read -r _ od_n od_ref; do
    [ "$od_ref" = refs/stash ] || continue
    case $od_n in *[!0-9a-f]* | '' | 0000000000000000000000000000000000000000) continue ;; esac
    od_git_dir
    od_common_of "$od_gd"
    [ -d "$od_common/overdeck-stash" ] || mkdir "$od_common/overdeck-stash" 2>/dev/null || :
    printf '%s\n' "$od_gd" >"$od_common/overdeck-stash/$od_n" 2>/dev/null || :
  done <<OD_EOF
$1
OD_EOF
}

# reference-transaction: does this transaction ($1: its "<old> <new> <ref>" lines) move this
# worktree's HEAD or checked-out branch? Sets od_branch for od_journal_moves.
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
