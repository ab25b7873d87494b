#!/bin/sh
# Installed by `od-worktree install-hooks` as <common git dir>/overdeck-hooks/<hook name>; what it
# does depends on the name it was installed under. It runs inside every commit, so it starts no
# process where the answer is certain with builtins: free worktrees, and the caller proving the
# current tenure (overdeck-guard.sh od_mine). Everything else, every refusal with its reason, next
# step and journal line included, is the gate program's (src/gate/hooks.ts), started with the same
# name, arguments and stdin. Then the hook of the same name from the hooks directory in effect
# before installation runs, with the same arguments and stdin, and its status is the hook's.
od_dir=${0%/*} od_name=${0##*/} OD_PREVIOUS_HOOKS='' OD_NODE='' OD_GATE='' od_input='' od_prev=''
# shellcheck source=/dev/null
[ -r "$od_dir/overdeck-hooks.conf" ] && . "$od_dir/overdeck-hooks.conf"
[ -n "$OD_PREVIOUS_HOOKS" ] && [ -f "$OD_PREVIOUS_HOOKS/$od_name" ] && [ -x "$OD_PREVIOUS_HOOKS/$od_name" ] && od_prev=$OD_PREVIOUS_HOOKS/$od_name

# od_holds REF: may the caller move REF as far as the worktrees whose checked-out history it is go
# (HEAD: this one; a branch: every worktree that has it checked out)? Other refs belong to none; a
# replace ref changes what every worktree reads: the gate program's.
od_holds() {
  case $1 in HEAD) od_mine "$od_gd"; return ;; refs/heads/*) [ -n "$od_common" ] || return 1 ;; refs/replace/*) return 1 ;; *) return 0 ;; esac
  for od_c in "$od_common" "$od_common"/worktrees/*; do
    [ -r "$od_c/HEAD" ] && read -r od_h <"$od_c/HEAD" && [ "$od_h" = "ref: $1" ] && { od_mine "$od_c" || return 1; }
  done
  return 0
}

# od_fast PHASE: 0 when this hook's whole work is done here; 1: the gate program's (a push always).
# "prepared" (<old> <new> <ref> lines): every move is the caller's to make (a line that moves
# nothing is no move). "committed": one journal line per move of this worktree's checked-out
# branch (of HEAD when detached), docs/git-projection.md#the-journal, in one append; a stash
# entry, a value that is not an identifier, a projection in another form: the gate program's.
od_fast() {
  [ -d "$od_gd" ] || return 1
  case $od_name in pre-commit | pre-rebase) od_mine "$od_gd"; return ;; pre-push) return 1 ;; esac
  if [ "$1" = committed ]; then
    case $od_input in *' refs/stash
'*) return 1 ;; esac
    read -r od_j <"$od_gd/HEAD" && od_read "$od_gd" || return 1
    case $od_j in 'ref: '*) od_j=${od_j#ref: } ;; *) od_j=HEAD ;; esac
  fi
  od_out=
  while read -r od_a od_b od_r; do
    if [ "$1" = prepared ]; then
      case $od_a in *[!0]*) [ "$od_a" = "$od_b" ] && continue ;; esac
      od_holds "$od_r" || return 1
    elif [ -n "$od_any" ] && [ "$od_r" = "$od_j" ]; then
      case $od_a$od_b$od_r${OVERDECK_EXECUTION_SESSION_ID-}${OVERDECK_EPOCH-}$od_i$od_e$od_o$od_s$od_w$od_c in *[!A-Za-z0-9._:@/+-]*) return 1 ;; esac
      od_out="${od_out}od1	kind=commit	ref=$od_r	old=$od_a	new=$od_b	session=${OVERDECK_EXECUTION_SESSION_ID-}	env_epoch=${OVERDECK_EPOCH-}	ownership=$od_i	epoch=$od_e	owner=$od_o	state=$od_s	worker=$od_w	conversation=$od_c
"
    fi
  done <<OD_EOF
$od_input
OD_EOF
  [ -z "$od_out" ] || printf %s "$od_out" >>"$od_gd/overdeck.journal" 2>/dev/null || :
}

case $od_name:${1-} in
  pre-commit:* | pre-rebase:* | pre-push:* | reference-transaction:prepared | reference-transaction:committed) ;;
  # A hook that was there before us, or "aborted": only the previous hook's.
  *) [ -n "$od_prev" ] || exit 0; exec "$od_prev" "$@" ;;
esac
# The hook's stdin (pre-commit and pre-rebase have none), for the gate program and the previous hook alike.
while IFS= read -r od_l; do od_input="$od_input$od_l
"; done
# shellcheck source=overdeck-guard.sh
. "$od_dir/overdeck-guard.sh" || exit 1
# git exports GIT_DIR to the hooks of a linked worktree; the main worktree's is .git at its top.
case ${GIT_DIR:-.git} in /*) od_gd=$GIT_DIR ;; *) od_gd=$PWD/${GIT_DIR:-.git} ;; esac
od_common=$od_gd
[ ! -f "$od_gd/commondir" ] || { read -r od_l <"$od_gd/commondir" && [ "$od_l" = ../.. ] && od_common=${od_gd%/*/*}; } || od_common=
if ! od_fast "$@"; then
  [ -x "$OD_NODE" ] && [ -r "$OD_GATE" ] || { printf '%s\n' "od-worktree: refused: the gate program is not where install-hooks found it ($OD_GATE); run od-worktree install-hooks" >&2; exit 1; }
  printf %s "$od_input" | "$OD_NODE" "$OD_GATE" hook "$od_name" "$@" || exit
fi
[ -n "$od_prev" ] || exit 0
printf %s "$od_input" | "$od_prev" "$@"
