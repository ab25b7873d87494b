#!/bin/sh
# Installed by `od-worktree install-hooks` as <common git dir>/overdeck-hooks/<hook name>; what it
# does depends on the name it was installed under. After our check passes it runs the hook of the
# same name from the hooks directory that was in effect before installation, with the same
# arguments and stdin, and exits with its status. Every hook here costs one process per git
# operation even when it does nothing, which is why only the hooks that can refuse are installed
# (plus pass-throughs for hooks that existed before).
od_dir=${0%/*}
od_name=${0##*/}
OD_PREVIOUS_HOOKS=
# shellcheck source=/dev/null
[ -r "$od_dir/overdeck-hooks.conf" ] && . "$od_dir/overdeck-hooks.conf"

od_prev=
if [ -n "$OD_PREVIOUS_HOOKS" ] && [ -f "$OD_PREVIOUS_HOOKS/$od_name" ] && [ -x "$OD_PREVIOUS_HOOKS/$od_name" ]; then
  od_prev=$OD_PREVIOUS_HOOKS/$od_name
fi

# od_read_stdin: the hook's stdin into od_input without spawning cat; a chained hook gets the same.
od_read_stdin() {
  od_input=
  while IFS= read -r od_l; do
    od_input="$od_input$od_l
"
  done
}

# od_chain ARGS: runs the previous hook of this name with od_input as its stdin, exits with its status.
od_chain() {
  if [ -n "$od_prev" ]; then
    printf '%s' "$od_input" | "$od_prev" "$@"
    exit $?
  fi
  exit 0
}

case $od_name in
  pre-commit | pre-rebase)
    # shellcheck source=overdeck-guard.sh
    . "$od_dir/overdeck-guard.sh" || exit 1
    od_guard || { od_rc=$?; od_code_of "$od_rc"; od_journal hook_refused '' '' '' "	code=$od_code	command=${od_name#pre-}"; exit 1; }
    ;;
  pre-push)
    od_read_stdin
    # shellcheck source=overdeck-guard.sh
    . "$od_dir/overdeck-guard.sh" || exit 1
    od_judge_push "$od_input" || { od_rc=$?; od_code_of "$od_rc"; od_journal hook_refused '' '' '' "	code=$od_code	command=push"; exit 1; }
    od_chain "$@"
    ;;
  reference-transaction)
    # Only "prepared" can still stop the update; "committed" journals the move (who made which
    # commit, docs/git-projection.md#the-journal) and which worktree made a stash entry; "aborted"
    # with nothing to chain to leaves at once (git ignores EPIPE on this hook's stdin).
    [ "$1" = prepared ] || [ "$1" = committed ] || [ -n "$od_prev" ] || exit 0
    od_read_stdin
    if [ "$1" = prepared ]; then
      # shellcheck source=overdeck-guard.sh
      . "$od_dir/overdeck-guard.sh" || exit 1
      od_judge_moves "$od_input" || exit 1
    elif [ "$1" = committed ]; then
      # shellcheck source=overdeck-guard.sh
      . "$od_dir/overdeck-guard.sh" || exit 1
      case $od_input in *' refs/stash
'*) od_record_stash "$od_input" ;; esac
      if od_touches_own_head "$od_input"; then
        od_read_owner
        [ -n "$od_any" ] && od_journal_moves commit "$od_input"
      fi
    fi
    od_chain "$@"
    ;;
esac

[ -n "$od_prev" ] && exec "$od_prev" "$@"
exit 0
