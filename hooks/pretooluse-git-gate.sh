#!/bin/sh
# PreToolUse hook for agent CLIs that let a hook veto a shell command before it runs (Claude Code's
# PreToolUse, and hosts that copied its convention): reads the tool call's JSON on stdin, finds
# every git command in its shell command (after `cd`, `&&`, `;`, pipes, `$(...)`, `sh -c '...'`,
# `env`/`sudo`/`command` prefixes, `VAR=value` assignments, `git -C`), and asks the git gate
# (bin/git-gate/git --od-git-gate-check) whether it would refuse it. A refusal exits 2 with the
# guard's one-line message on stderr, which blocks the call and shows the agent why; anything else
# exits 0 and the command runs. README.md, "Agent-side guard", has the configuration.
#
# One awk reads the JSON and splits the command; the gate judges with shell builtins. The
# command is never evaluated: $(...) and backquotes are only scanned for the git inside them.

od_here=${0%/*}
[ "$od_here" = "$0" ] && od_here=.
od_gate=
for od_c in "$od_here/../bin/git-gate/git" "$od_here/../../bin/git-gate/git"; do
  [ -f "$od_c" ] && { od_gate=$od_c; break; }
done
if [ -z "$od_gate" ]; then
  # Not a veto: a broken install must not block every shell command. Exit 1 shows this to the user.
  printf '%s\n' "od-worktree: pretooluse: the git gate (bin/git-gate/git) is not beside $0; git commands are not checked" >&2
  exit 1
fi

# Prints one line per git invocation: cwd, how many OVERDECK_* assignments, the assignments, the
# arguments after `git`; fields separated by US (\037).
od_prog='
function hexval(h,   i, v, c) { v = 0; h = tolower(h); for (i = 1; i <= length(h); i++) { c = index("0123456789abcdef", substr(h, i, 1)); v = v * 16 + c - 1 } return v }
# JSON: records the first string value of every key path (tool_input.command, cwd, ...).
function jstring(   out, c, e) {
  out = ""
  while (pos <= n) {
    c = substr(buf, pos, 1); pos++
    if (c == "\"") return out
    if (c == "\\") {
      e = substr(buf, pos, 1); pos++
      if (e == "n") out = out "\n"; else if (e == "t") out = out "\t"; else if (e == "r") out = out "\r"
      else if (e == "b" || e == "f") out = out " "
      else if (e == "u") { v = hexval(substr(buf, pos, 4)); pos += 4; out = out (v >= 32 && v < 127 ? sprintf("%c", v) : (v == 10 ? "\n" : "?")) }
      else out = out e
    } else out = out c
  }
  return out
}
function jparse(   c, d, s, k, p, j) {
  d = 0; expectkey = 0
  while (pos <= n) {
    c = substr(buf, pos, 1); pos++
    if (c == "{") { d++; kind[d] = "o"; key[d] = ""; expectkey = 1 }
    else if (c == "[") { d++; kind[d] = "a"; key[d] = "" }
    else if (c == "}" || c == "]") { d--; expectkey = 0 }
    else if (c == ",") { if (kind[d] == "o") expectkey = 1 }
    else if (c == "\"") {
      s = jstring()
      if (kind[d] == "o" && expectkey) { key[d] = s; expectkey = 0 }
      else {
        p = ""
        for (j = 1; j <= d; j++) if (kind[j] == "o") p = p (p == "" ? "" : ".") key[j]
        if (kind[d] == "a") { arr[p] = (p in arr) ? arr[p] US s : s }
        else if (!(p in val)) val[p] = s
      }
    }
  }
}
function emit(w, nw, cwd,   i, out, na, asg, start) {
  na = 0; asg = ""
  i = 1
  while (i <= nw) {
    if (w[i] ~ /^[A-Za-z_][A-Za-z0-9_]*=/) {
      if (w[i] ~ /^OVERDECK_(EXECUTION_SESSION_ID|EPOCH)=/) { na++; asg = asg US w[i] }
      i++; continue
    }
    if (w[i] ~ /^(command|exec|nohup|builtin|sudo|env|nice|timeout|time|then|do|else|if|while|until|xargs|!|\{)$/) {
      i++
      while (i <= nw && (w[i] ~ /^-/ || w[i] ~ /^[0-9.]+[smhd]?$/)) i++
      continue
    }
    break
  }
  if (i > nw) return
  if (w[i] == "cd" || w[i] == "pushd") {
    start = i + 1
    while (start <= nw && w[start] ~ /^-[LPe@]*$/ && w[start] != "-") start++
    newcwd = (start <= nw) ? w[start] : ENVIRON["HOME"]
    if (newcwd ~ /^~/) newcwd = ENVIRON["HOME"] substr(newcwd, 2)
    curcwd = (newcwd ~ /^\//) ? newcwd : cwd "/" newcwd
    return
  }
  if (w[i] == "git" || w[i] ~ /\/git$/) {
    out = cwd US na asg
    for (i = i + 1; i <= nw; i++) { gsub(/\n/, " ", w[i]); out = out US w[i] }
    print out
    return
  }
  if (w[i] ~ /(^|\/)(sh|bash|dash|zsh|ksh|mksh|ash)$/) {
    for (start = i + 1; start < nw; start++) if (w[start] ~ /^-[a-z]*c[a-z]*$/) { sv = curcwd; split_cmd(w[start + 1], cwd); curcwd = sv; return }
    return
  }
  if (w[i] == "eval") {
    s = ""
    for (start = i + 1; start <= nw; start++) s = s " " w[start]
    sv = curcwd; split_cmd(s, cwd); curcwd = sv
  }
}
# Shell words and simple commands, quotes removed, nothing expanded or run.
function split_cmd(s, cwd,   m, i, c, nx, q, word, inword, w, nw, depth, saved, prev, j, kept, kw) {
  m = length(s); q = 0; word = ""; inword = 0; nw = 0; depth = 0; curcwd = cwd; prev = ""
  for (i = 1; i <= m + 1; i++) {
    c = (i <= m) ? substr(s, i, 1) : "\n"
    nx = substr(s, i + 1, 1)
    if (q == 1) { if (c == "\047") q = 0; else word = word c; prev = c; continue }
    if (c == "\\" && i < m) { word = word nx; inword = 1; i++; prev = nx; continue }
    if (q == 2) {
      if (c == "\"") q = 0
      else if ((c == "$" && nx == "(") || c == "`") { if (inword) { nw++; w[nw] = word } ; word = ""; inword = 0; flush(w, nw); nw = 0; if (c == "$") i++ }
      else word = word c
      prev = c; continue
    }
    if (c == "\047") { q = 1; inword = 1; prev = c; continue }
    if (c == "\"") { q = 2; inword = 1; prev = c; continue }
    if (c == "#" && !inword) { while (i <= m && substr(s, i, 1) != "\n") i++; c = "\n" }
    if (c == "&" && (prev == ">" || prev == "<" || nx == ">")) { word = word c; inword = 1; prev = c; continue }
    if (c == " " || c == "\t" || c == ";" || c == "|" || c == "&" || c == "\n" || c == "(" || c == ")" || c == "`" || (c == "$" && nx == "(")) {
      if (inword) { nw++; w[nw] = word; word = ""; inword = 0 }
      if (c != " " && c != "\t") {
        flush(w, nw); nw = 0
        if (c == "$") { i++; c = "(" }
        if (c == "(") { depth++; saved[depth] = curcwd }
        if (c == ")" && depth > 0) { curcwd = saved[depth]; depth-- }
      }
      prev = c; continue
    }
    word = word c; inword = 1; prev = c
  }
}
# One simple command: redirections dropped, then judged in the directory the earlier `cd`s left.
function flush(w, nw,   j, kept, k) {
  k = 0
  for (j = 1; j <= nw; j++) {
    if (w[j] ~ /^[0-9]*(>|>>|<|<<|<<<|>&|<&|&>|&>>|>\|)$/) { j++; continue }
    if (w[j] ~ /^[0-9]*(>|<|&>)/) continue
    k++; kept[k] = w[j]
  }
  if (k > 0) emit(kept, k, curcwd)
}
BEGIN { US = sprintf("%c", 31); buf = "" }
{ buf = buf $0 "\n" }
END {
  n = length(buf); pos = 1; jparse()
  base = (val["cwd"] != "") ? val["cwd"] : ENVIRON["PWD"]
  # An argv array (["bash", "-lc", "..."]) is words already; a string is a shell command.
  for (k = 1; k <= 2; k++) {
    p = (k == 1) ? "tool_input.command" : "command"
    if (p in arr) { curcwd = base; nw = split(arr[p], words, US); emit(words, nw, base); exit 0 }
    if (p in val) { split_cmd(val[p], base); exit 0 }
  }
}'

od_records=$(awk "$od_prog") || exit 1
[ -n "$od_records" ] || exit 0

od_us=$(printf '\037')
od_msgs=
od_nl='
'
while IFS= read -r od_rec; do
  [ -n "$od_rec" ] || continue
  od_ifs=$IFS
  IFS=$od_us
  set -f
  # shellcheck disable=SC2086
  set -- $od_rec
  set +f
  IFS=$od_ifs
  od_dir=$1 od_na=$2
  shift 2
  # A `VAR=value git ...` in the command is the identity that git would run with.
  od_msg=$(
    while [ "$od_na" -gt 0 ]; do export "$1"; shift; od_na=$((od_na - 1)); done
    cd "$od_dir" 2>/dev/null || exit 0
    exec sh "$od_gate" --od-git-gate-check "$@" 2>&1 >/dev/null
  )
  [ $? -eq 1 ] && od_msgs="$od_msgs$od_msg$od_nl"
done <<OD_EOF
$od_records
OD_EOF

[ -n "$od_msgs" ] || exit 0
printf '%s' "$od_msgs" >&2
exit 2
