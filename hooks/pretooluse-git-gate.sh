#!/bin/sh
# PreToolUse hook for agent CLIs (docs/agent-gate.md#pretooluse-hook): the tool call's JSON on
# stdin, exit 2 and the reason on stderr to block it. The work is the gate program's
# (src/gate/pretooluse.ts), found beside this file in a checkout (bin/git-gate/) or the package.
od_here=$(dirname -- "$0")
for od_js in "$od_here/../bin/git-gate/od-gate.cjs" "$od_here/../../bin/git-gate/od-gate.cjs"; do
  [ -r "$od_js" ] && exec node "$od_js" pretooluse
done
cat >/dev/null 2>&1
printf '%s\n' "od-worktree: pretooluse: the git gate (bin/git-gate/git) is not beside $0; git commands are not checked" >&2
exit 1
