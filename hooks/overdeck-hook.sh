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

case $od_name in
  pre-commit | pre-push | pre-rebase)
    # shellcheck source=overdeck-guard.sh
    . "$od_dir/overdeck-guard.sh" || exit 1
    od_guard || exit 1
    ;;
  reference-transaction)
    # Only "prepared" can still stop the update; "committed" journals the move (who made which
    # commit, docs/git-projection.md#the-journal); "aborted" with nothing to chain to leaves at once
    # (git ignores EPIPE on this hook's stdin).
    [ "$1" = prepared ] || [ "$1" = committed ] || [ -n "$od_prev" ] || exit 0
    # Read stdin without spawning cat; a chained hook gets the same lines.
    od_input=
    while IFS= read -r od_l; do
      od_input="$od_input$od_l
"
    done
    if [ "$1" = prepared ]; then
      # shellcheck source=overdeck-guard.sh
      . "$od_dir/overdeck-guard.sh" || exit 1
      if od_touches_own_head "$od_input"; then
        od_guard || {
          od_rc=$?
          case $od_rc in 10) od_code=not_owner ;; 11) od_code=stale_epoch ;; 12) od_code=strict_no_session ;; 13) od_code=provisional_conflict ;; *) od_code=refused ;; esac
          od_journal_moves ref_refused "$od_input" "	code=$od_code"
          exit 1
        }
      fi
    elif [ "$1" = committed ]; then
      # shellcheck source=overdeck-guard.sh
      . "$od_dir/overdeck-guard.sh" || exit 1
      if od_touches_own_head "$od_input"; then
        od_read_owner
        [ -n "$od_any" ] && od_journal_moves commit "$od_input"
      fi
    fi
    if [ -n "$od_prev" ]; then
      printf '%s' "$od_input" | "$od_prev" "$@"
      exit $?
    fi
    exit 0
    ;;
esac

[ -n "$od_prev" ] && exec "$od_prev" "$@"
exit 0
