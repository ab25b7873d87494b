#!/bin/sh
# PreToolUse hook for agent CLIs that let a hook veto a shell command before it runs (Claude Code's
# PreToolUse, Codex's, and hosts that copied the convention): reads the tool call's JSON on stdin,
# finds every git command its shell command would run, and asks the git gate
# (bin/git-gate/git --od-git-gate-check) whether it would refuse it, in the directory and with the
# environment that git would have. A refusal exits 2 with the gate's one-line message on stderr,
# which blocks the call and tells the agent why; anything else exits 0 and the command runs. A
# malformed JSON or a broken install exits 1: reported, not a veto (a broken hook must not block
# every shell command). docs/agent-gate.md#setting-up-an-agent has the configuration.
#
# The JSON: the command is `tool_input.command` (Claude Code's Bash, Codex's Bash: a string; a host
# that forwards an argv array, ["bash", "-lc", "..."], is read as words), else `tool_input.cmd`,
# a top-level `command` or `cmd`; the directory is `cwd`, then `workdir`, then `tool_input.cwd` /
# `tool_input.workdir` (a relative one from the one before). A tool_name that is not a shell tool
# (Read, Edit, MCP tools) exits 0 at once.
#
# One awk (POSIX: gawk, mawk, the one true awk of macOS) reads the JSON and follows the shell command as a shell would,
# without running or expanding anything that has an effect; the gate judges each git command it
# finds with shell builtins. What is followed:
# - sequence and grouping: `;`, `&&`, `||`, newlines, `|`, `&` (a pipeline element or a background
#   job is a subshell: nothing it changes survives it, as in bash and dash), `( )`, `{ ;}`, `if/while/for/case` bodies
#   (every branch is taken as run, in order), `$( )`, backquotes, `<( )`, here-docs and here-strings
#   (unquoted ones are expanded), `eval`, `sh|bash|zsh|ksh|dash -c '...'` with their positional
#   parameters, a shell reading a script from a here-doc, a here-string or `echo ... |`;
# - words: quotes, backslashes, `$'...'`, `~`, `$VAR`, `${VAR:-...}` and the like, `$1`, `"$@"`,
#   with the variables the command itself sets (the hook's environment for the rest), so `\git`,
#   `"git"`, `'g'it`, `/usr/bin/git`, `./git`, `git-reset` and `git -C "$WT"` are git commands;
# - the environment git would have: the hook's (the agent's) environment, changed by `VAR=v cmd`
#   and `VAR= cmd` (an empty value is passed as empty, not dropped), `export`, `export -n`,
#   `unset`, `declare -x`, `set -a`, a bare `VAR=v` (it reaches git only when VAR is exported
#   already, or once exported, or under `set -a`, as in a shell: a shell variable is not in a
#   child's environment), `env [-i] [-u VAR] [-C dir] [-S str] [VAR=v]`, `exec -c`, `sudo`/`doas`/`su`
#   (which reset the environment unless told to keep it); child shells see only the exported part.
#   Forwarded to the gate: OVERDECK_*, and git's own redirections (GIT_DIR, GIT_WORK_TREE,
#   GIT_INDEX_FILE, GIT_COMMON_DIR, GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS, ...)
#   and the variables that name a program git runs (GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND,
#   GIT_SSH, GIT_PROXY_COMMAND, GIT_EXEC_PATH, GIT_PAGER, GIT_EDITOR, GIT_SEQUENCE_EDITOR);
# - the directory: `cd`, `pushd`, `popd`, `env -C`, `sudo -D`, `find -execdir`; a `cd` or a `git -C`
#   to what only a command's output says (`"$(git rev-parse --show-toplevel)"`) keeps the directory;
# - prefixes: `command`, `builtin`, `exec`, `nohup`, `time`, `timeout`, `nice`, `ionice`, `stdbuf`,
#   `setsid`, `flock [-c]`, `taskset`, `chrt`, `xargs` (with the words a known stdin gives it, else
#   only the arguments written), `find -exec ... ;`.
# Out of reach (docs/agent-gate.md says so): script files (`sh x.sh`, `. x.sh`, `./x.sh`), shell
# functions and aliases (a function's body is judged where it is defined, not where it is called),
# the output of commands other than echo/printf/pwd/cat and the like (`git $(cmd)` is judged with
# the literal text), globs and brace expansion, other interpreters (python -c, node -e), remote or
# container shells, zsh's last pipeline element run in the current shell. The gate on PATH and the
# git hooks still stand behind this hook.

od_here=${0%/*}
[ "$od_here" = "$0" ] && od_here=.
# The checks below cd to each command's directory: the gate's path must not depend on ours.
case $od_here in /*) ;; *) od_here=$PWD/$od_here ;; esac
od_gate=
for od_c in "$od_here/../bin/git-gate/git" "$od_here/../../bin/git-gate/git"; do
  [ -f "$od_c" ] && { od_gate=$od_c; break; }
done
if [ -z "$od_gate" ]; then
  # Not a veto: a broken install must not block every shell command. Exit 1 shows this to the user.
  # The tool call is read all the same: a host writing it must not meet a closed pipe.
  cat >/dev/null 2>&1
  printf '%s\n' "od-worktree: pretooluse: the git gate (bin/git-gate/git) is not beside $0; git commands are not checked" >&2
  exit 1
fi

# Prints one `od_check DIR [S NAME VALUE | U NAME]... -- ARGS...` line per git command, every word
# single-quoted (NAME is matched against [A-Za-z0-9_] first), for the eval below. LC_ALL=C: bytes,
# the same in every awk.
od_prog='
function hexval(h,   i, v) { v = 0; h = tolower(h); for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
function utf8(c) {
  if (c <= 0) return ""
  if (c < 128) return sprintf("%c", c)
  if (c < 2048) return sprintf("%c%c", 192 + int(c / 64), 128 + c % 64)
  if (c < 65536) return sprintf("%c%c%c", 224 + int(c / 4096), 128 + int(c / 64) % 64, 128 + c % 64)
  return sprintf("%c%c%c%c", 240 + int(c / 262144), 128 + int(c / 4096) % 64, 128 + int(c / 64) % 64, 128 + c % 64)
}

# ---- JSON: the values the hook reads by key path (tool_input.command), arrays by path[i] -------
function jfail(why) {
  printf "od-worktree: pretooluse: the tool call is not valid JSON (%s at byte %d); its git commands are not checked\n", why, pos > "/dev/stderr"
  exit 1
}
function jws(   c) {
  while (pos <= n) { c = substr(buf, pos, 1); if (c != " " && c != "\t" && c != "\n" && c != "\r") return; pos++ }
}
# Joins P[1..np] pairwise, round after round: a long string costs n log n, not n squared (mawk).
function pjoin(P, np,   k, m) {
  while (np > 1) { m = 0; for (k = 1; k <= np; k += 2) P[++m] = k < np ? P[k] P[k + 1] : P[k]; np = m }
  return np ? P[1] : ""
}
# A JSON string from pos (after its opening quote); KEEP: build its value (else only skip it: a
# Write tool content of megabytes is never copied).
function jstr(keep,   P, np, c, e, h, v, v2) {
  np = 0
  while (1) {
    if (match(substr(buf, pos, 4096), /["\\]/)) { if (keep && RSTART > 1) P[++np] = substr(buf, pos, RSTART - 1); pos += RSTART - 1 }
    else { if (keep) P[++np] = substr(buf, pos, 4096); pos += 4096; if (pos > n) jfail("unterminated string"); continue }
    c = substr(buf, pos, 1); pos++
    if (c == "\"") return keep ? pjoin(P, np) : ""
    e = substr(buf, pos, 1); pos++
    if (e == "\"" || e == "\\" || e == "/") P[++np] = e
    else if (e == "n") P[++np] = "\n"
    else if (e == "t") P[++np] = "\t"
    else if (e == "r") P[++np] = "\r"
    else if (e == "b") P[++np] = "\b"
    else if (e == "f") P[++np] = "\f"
    else if (e == "u") {
      h = substr(buf, pos, 4)
      if (h !~ /^[0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f]$/) jfail("bad \\u escape")
      pos += 4; v = hexval(h)
      if (v >= 55296 && v < 56320 && substr(buf, pos, 2) == "\\u" && substr(buf, pos + 2, 4) ~ /^[dD][c-fC-F][0-9A-Fa-f][0-9A-Fa-f]$/) {
        v2 = hexval(substr(buf, pos + 2, 4)); pos += 6; v = 65536 + (v - 55296) * 1024 + (v2 - 56320)
      }
      P[++np] = utf8(v)
    } else jfail("bad escape")
  }
}
# The values the hook reads: the command (or the elements of an argv array), the directories, the tool.
function wanted(path) { sub(/\[[0-9]+\]$/, "", path); return path in WANT }
function jvalue(path, d,   c, k, i, t) {
  if (d > 64) jfail("nested too deep")
  jws()
  if (pos > n) jfail("unexpected end")
  c = substr(buf, pos, 1)
  if (c == "{") {
    pos++; jws()
    JT[path] = "o"
    if (substr(buf, pos, 1) == "}") { pos++; return "o" }
    while (1) {
      jws()
      if (substr(buf, pos, 1) != "\"") jfail("expected a key")
      pos++; k = jstr(1); jws()
      if (substr(buf, pos, 1) != ":") jfail("expected a colon")
      pos++
      jvalue(path == "" ? k : path "." k, d + 1)
      jws(); c = substr(buf, pos, 1); pos++
      if (c == "}") return "o"
      if (c != ",") jfail("expected a comma or }")
    }
  }
  if (c == "[") {
    pos++; jws(); i = 0; t = 1
    if (substr(buf, pos, 1) == "]") pos++
    else while (1) {
      i++
      if (jvalue(path "[" i "]", d + 1) != "s") t = 0
      jws(); c = substr(buf, pos, 1); pos++
      if (c == "]") break
      if (c != ",") jfail("expected a comma or ]")
    }
    JT[path] = "a"; JN[path] = i; JA[path] = t
    return "a"
  }
  if (c == "\"") { pos++; JV[path] = jstr(wanted(path)); JT[path] = "s"; return "s" }
  if (match(substr(buf, pos, 64), /^(true|false|null|-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)/)) { pos += RLENGTH; JT[path] = "n"; return "n" }
  jfail("unexpected character")
}

# ---- the shell state: directory, variables, positional parameters --------------------------
# VS[name]: x exported, s shell variable only, u unset; a name not in VS is the hook environment
# one (unless CLR: everything inherited was cleared, `env -i bash -c ...`). AX: `set -a`.
function normalize(p,   parts, np, k, out, st, ns) {
  np = split(p, parts, "/"); ns = 0
  for (k = 1; k <= np; k++) {
    if (parts[k] == "" || parts[k] == ".") continue
    if (parts[k] == "..") { if (ns > 0) ns--; continue }
    st[++ns] = parts[k]
  }
  out = ""
  for (k = 1; k <= ns; k++) out = out "/" st[k]
  return out == "" ? "/" : out
}
function absdir(base, d) { return substr(d, 1, 1) == "/" ? normalize(d) : normalize(base "/" d) }
function lookup(nm) {
  if (nm == "PWD") { PSET = 1; return CWD }
  if (nm in VS) { PSET = VS[nm] != "u"; return PSET ? V[nm] : "" }
  if (!CLR && (nm in ENVIRON)) { PSET = 1; return ENVIRON[nm] }
  PSET = 0; return ""
}
function exported(nm) { return (nm in VS) ? VS[nm] == "x" : (!CLR && (nm in ENVIRON)) }
# A bare `NAME=value`: an exported variable stays exported (children see the new value); a new one
# is a shell variable, which git never sees, unless `set -a` is on.
function set_var(nm, val,   x) { x = AX || exported(nm); VS[nm] = x ? "x" : "s"; V[nm] = val }
# The value a child would find in its environment: the command own changes (te/ts: x set, u
# unset; key " clr": `env -i`) over the exported shell state. ELS: whether it is set.
function env_lookup(nm, te, ts) {
  if (nm in ts) { ELS = ts[nm] == "x"; return ELS ? te[nm] : "" }
  if (" clr" in ts) { ELS = 0; return "" }
  if (nm in VS) { ELS = VS[nm] == "x"; return ELS ? V[nm] : "" }
  if (!CLR && (nm in ENVIRON)) { ELS = 1; return ENVIRON[nm] }
  ELS = 0; return ""
}
function env_clear(te, ts,   k) { for (k in ts) if (k !~ /^ /) { delete ts[k]; delete te[k] } ts[" clr"] = 1 }
function env_unset(te, ts, nm) { ts[nm] = "u"; te[nm] = "" }
function env_copy(te, ts, te2, ts2,   k) { for (k in te) te2[k] = te[k]; for (k in ts) ts2[k] = ts[k] }
function cmd_cwd(te) { return (" cwd" in te) ? te[" cwd"] : CWD }
function push_state(   k, j) {
  SD++
  S_CWD[SD] = CWD; S_CLR[SD] = CLR; S_AX[SD] = AX; S_PN[SD] = PN; S_DN[SD] = DN
  j = 0
  for (k in VS) { j++; S_K[SD, j] = k; S_VS[SD, j] = VS[k]; S_V[SD, j] = V[k] }
  S_KN[SD] = j
  for (j = 0; j <= PN; j++) S_POS[SD, j] = POS[j]
  for (j = 1; j <= DN; j++) S_DS[SD, j] = DS[j]
}
function pop_state(   j) {
  split("", VS); split("", V); split("", POS); split("", DS)
  CWD = S_CWD[SD]; CLR = S_CLR[SD]; AX = S_AX[SD]; PN = S_PN[SD]; DN = S_DN[SD]
  for (j = 1; j <= S_KN[SD]; j++) { VS[S_K[SD, j]] = S_VS[SD, j]; V[S_K[SD, j]] = S_V[SD, j] }
  for (j = 0; j <= PN; j++) POS[j] = S_POS[SD, j]
  for (j = 1; j <= DN; j++) DS[j] = S_DS[SD, j]
  SD--
}
# A child shell (bash -c): the state saved, then only what the command would export to it.
function enter_child(te, ts,   k, names, nv, nx, clr, cw) {
  for (k in VS) names[k] = 1
  for (k in ts) if (k !~ /^ /) names[k] = 1
  for (k in names) { nv[k] = env_lookup(k, te, ts); nx[k] = ELS ? "x" : "u" }
  clr = CLR || (" clr" in ts)
  cw = cmd_cwd(te)
  push_state()
  split("", VS); split("", V); split("", POS); split("", DS)
  for (k in nx) { VS[k] = nx[k]; V[k] = nv[k] }
  CLR = clr; CWD = cw; AX = 0; DN = 0; PN = 0
}
function child_run(script, F, k, to, te, ts, isc) {
  if (LVL > MAXLVL) return
  enter_child(te, ts)
  POS[0] = "sh"
  if (isc) { if (k <= to) POS[0] = F[k]; k++ }
  for (; k <= to; k++) POS[++PN] = F[k]
  parse_script(script)
  pop_state()
}

# ---- words ----------------------------------------------------------------------------------
# The skip_* functions return the index just after a construct that starts at i.
function skip_sq(s, i,   k) { k = index(substr(s, i), SQ); return k ? i + k : length(s) + 1 }
function skip_bq(s, i,   m, c) {
  m = length(s)
  while (i <= m) { c = substr(s, i, 1); if (c == "\\") { i += 2; continue } if (c == "`") return i + 1; i++ }
  return i
}
function skip_ansi(s, i,   m, c) {
  m = length(s)
  while (i <= m) { c = substr(s, i, 1); if (c == "\\") { i += 2; continue } if (c == SQ) return i + 1; i++ }
  return i
}
function skip_dq(s, i,   m, c, c2) {
  m = length(s)
  while (i <= m) {
    c = substr(s, i, 1); c2 = substr(s, i + 1, 1)
    if (c == "\\") { i += 2; continue }
    if (c == "\"") return i + 1
    if (c == "`") { i = skip_bq(s, i + 1); continue }
    if (c == "$" && c2 == "(") { i = skip_paren(s, i + 2); continue }
    if (c == "$" && c2 == "{") { i = skip_brace(s, i + 2); continue }
    i++
  }
  return i
}
function skip_paren(s, i,   m, c, d) {
  m = length(s); d = 1
  while (i <= m) {
    c = substr(s, i, 1)
    if (c == "\\") { i += 2; continue }
    if (c == SQ) { i = skip_sq(s, i + 1); continue }
    if (c == "\"") { i = skip_dq(s, i + 1); continue }
    if (c == "`") { i = skip_bq(s, i + 1); continue }
    if (c == "(") d++
    else if (c == ")") { d--; if (d == 0) return i + 1 }
    i++
  }
  return i
}
function skip_brace(s, i,   m, c, d) {
  m = length(s); d = 1
  while (i <= m) {
    c = substr(s, i, 1)
    if (c == "\\") { i += 2; continue }
    if (c == "\"") { i = skip_dq(s, i + 1); continue }
    if (c == "$" && substr(s, i + 1, 1) == "(") { i = skip_paren(s, i + 2); continue }
    if (c == "{") d++
    else if (c == "}") { d--; if (d == 0) return i + 1 }
    i++
  }
  return i
}
# One raw word (quotes and expansions kept) from i; the shell metacharacters end it.
function word_end(s, i,   m, c, c2, j) {
  m = length(s); j = i
  while (i <= m) {
    c = substr(s, i, 1); c2 = substr(s, i + 1, 1)
    if (c == " " || c == "\t" || c == "\n" || c == ";" || c == "&" || c == "|" || c == "(" || c == ")" || c == "<" || c == ">") break
    if (c == "\\") { i += 2; continue }
    if (c == SQ) { i = skip_sq(s, i + 1); continue }
    if (c == "\"") { i = skip_dq(s, i + 1); continue }
    if (c == "`") { i = skip_bq(s, i + 1); continue }
    if (c == "$" && c2 == "(") { i = skip_paren(s, i + 2); continue }
    if (c == "$" && c2 == "{") { i = skip_brace(s, i + 2); continue }
    if (c == "$" && c2 == SQ) { i = skip_ansi(s, i + 2); continue }
    i++
  }
  if (i > m + 1) i = m + 1
  return i == j ? j + 1 : i
}
function next_word(s, i,   c) {
  while (1) { c = substr(s, i, 1); if (c != " " && c != "\t") break; i++ }
  if ((c == "<" || c == ">") && substr(s, i + 1, 1) == "(") NW_END = skip_paren(s, i + 2)
  else NW_END = word_end(s, i)
  return substr(s, i, NW_END - i)
}
# The ANSI-C quoting of bash: $\047...\047 (t is what is between the quotes).
function ansi(t,   out, i, m, c, e, k, v) {
  out = ""; m = length(t); i = 1
  while (i <= m) {
    c = substr(t, i, 1)
    if (c != "\\") { out = out c; i++; continue }
    e = substr(t, i + 1, 1); i += 2
    if (e == "n") out = out "\n"
    else if (e == "t") out = out "\t"
    else if (e == "r") out = out "\r"
    else if (e == "a") out = out "\007"
    else if (e == "b") out = out "\b"
    else if (e == "f") out = out "\f"
    else if (e == "v") out = out "\v"
    else if (e == "e" || e == "E") out = out "\033"
    else if (e == "x") {
      v = 0; for (k = 0; k < 2 && substr(t, i, 1) ~ /[0-9A-Fa-f]/; k++) { v = v * 16 + hexval(substr(t, i, 1)); i++ }
      out = out utf8(v)
    } else if (e == "u" || e == "U") {
      v = 0; for (k = 0; k < (e == "u" ? 4 : 8) && substr(t, i, 1) ~ /[0-9A-Fa-f]/; k++) { v = v * 16 + hexval(substr(t, i, 1)); i++ }
      out = out utf8(v)
    } else if (e ~ /[0-7]/) {
      v = e + 0; for (k = 0; k < 2 && substr(t, i, 1) ~ /[0-7]/; k++) { v = v * 8 + substr(t, i, 1); i++ }
      out = out utf8(v)
    } else out = out e
  }
  return out
}
function unbq(t,   out, i, m, c, e) {
  out = ""; m = length(t)
  for (i = 1; i <= m; i++) {
    c = substr(t, i, 1); e = substr(t, i + 1, 1)
    if (c == "\\" && (e == "\\" || e == "`" || e == "$")) { out = out e; i++ } else out = out c
  }
  return out
}
function unquote(raw,   out, i, m, c) {
  out = ""; m = length(raw)
  for (i = 1; i <= m; i++) { c = substr(raw, i, 1); if (c == "\\") { i++; out = out substr(raw, i, 1) } else if (c != SQ && c != "\"") out = out c }
  return out
}
function glob_re(p,   out, i, c) {
  out = ""
  for (i = 1; i <= length(p); i++) {
    c = substr(p, i, 1)
    if (c == "*") out = out ".*"
    else if (c == "?") out = out "."
    else if (index("\\.+^$(){}|[]/", c)) out = out "\\" c
    else out = out c
  }
  return "^" out "$"
}
function join(F, from, to, sep,   k, out) { out = ""; for (k = from; k <= to; k++) out = out (k > from ? sep : "") F[k]; return out }
# The output of a command substitution run in a subshell state; SU=1 when it cannot be known (then
# the text itself stands for it, as one piece).
function subst(inner,   t) {
  push_state()
  parse_script(inner)
  pop_state()
  if (PS_KNOWN) { t = PS_OUT; sub(/\n+$/, "", t); SU = 0; return t }
  SU = 1
  return U1 "$(" inner ")"
}
function param(nm,   k, out) {
  PAT = 0
  if (nm ~ /^[0-9]+$/) { nm = nm + 0; PSET = nm <= PN; return PSET ? POS[nm] : "" }
  if (nm == "@" || nm == "*") { PSET = 1; PAT = nm == "@" ? 1 : 2; return join(POS, 1, PN, " ") }
  if (nm == "#") { PSET = 1; return PN }
  if (nm == "?") { PSET = 1; return "0" }
  if (nm == "$" || nm == "!" || nm == "-") { PSET = 1; return "" }
  return lookup(nm)
}
function brace(inner,   nm, rest, op, word, val, set, t, T, nt, re, k, L) {
  if (inner ~ /^#[A-Za-z0-9_@*]+$/) return length(param(substr(inner, 2)))
  if (!match(inner, /^([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])/)) return ""
  nm = substr(inner, 1, RLENGTH); rest = substr(inner, RLENGTH + 1)
  val = param(nm); set = PSET
  if (rest == "") return val
  op = substr(rest, 1, 2)
  if (op == ":-" || op == ":=" || op == ":+" || op == ":?") { word = substr(rest, 3); t = set && val != "" }
  else if (op == "##" || op == "%%") word = substr(rest, 3)
  else { op = substr(rest, 1, 1); word = substr(rest, 2); t = set }
  nt = expand(word, T, 0, 0, 0); word = join(T, 1, nt, " ")
  if (op == ":-" || op == "-") return t ? val : word
  if (op == ":=" || op == "=") { if (!t) { set_var(nm, word); return word } return val }
  if (op == ":+" || op == "+") return t ? word : ""
  if (op == "%" || op == "%%" || op == "#" || op == "##") {
    re = glob_re(word); L = length(val)
    if (op == "%") { for (k = L + 1; k >= 1; k--) if (substr(val, k) ~ re) return substr(val, 1, k - 1) }
    if (op == "%%") { for (k = 1; k <= L + 1; k++) if (substr(val, k) ~ re) return substr(val, 1, k - 1) }
    if (op == "#") { for (k = 0; k <= L; k++) if (substr(val, 1, k) ~ re) return substr(val, k + 1) }
    if (op == "##") { for (k = L; k >= 0; k--) if (substr(val, 1, k) ~ re) return substr(val, k + 1) }
  }
  return val
}
# A $-expansion at s[i]: DV its value, DE the index after it, DAT 1 for $@ (2 for $*), DU 1 when the
# value cannot be known (a command substitution whose output is not known).
function dollar(s, i,   c, j, inner, val, nm, u) {
  c = substr(s, i + 1, 1); u = 0
  if (c == "(" && substr(s, i + 2, 1) == "(") { j = skip_paren(s, i + 2); val = U1 substr(s, i, j - i); u = 1 }
  else if (c == "(") { j = skip_paren(s, i + 2); val = subst(substr(s, i + 2, j - i - 3)); u = SU }
  else if (c == "{") { j = skip_brace(s, i + 2); val = brace(substr(s, i + 2, j - i - 3)) }
  else if (match(substr(s, i + 1), /^[A-Za-z_][A-Za-z0-9_]*/)) { j = i + 1 + RLENGTH; val = param(substr(s, i + 1, RLENGTH)) }
  else if (c ~ /[0-9@*#?$!-]/ && c != "") { j = i + 2; val = param(c) }
  else { j = i + 1; val = "$" }
  DAT = (c == "@" || c == "*") ? PAT : 0
  DV = val; DE = j; DU = u
}
# Appends v to the word being built (XC, XH: has a word started), splitting it into fields at blanks.
function addsplit(v, F, nf,   k, L, ch) {
  if (v !~ /[ \t\n]/) { XC = XC v; if (v != "") XH = 1; return nf }
  L = length(v)
  for (k = 1; k <= L; k++) {
    ch = substr(v, k, 1)
    if (ch == " " || ch == "\t" || ch == "\n") { if (XH) { F[++nf] = XC; XC = ""; XH = 0 } }
    else { XC = XC ch; XH = 1 }
  }
  return nf
}
# The fields a raw word expands to, appended to F from nf; returns the new count. SPL: unquoted
# expansions are split into fields (SPL; not in assignments); ASG: an assignment value (`~` after `:`).
function expand(raw, F, nf, spl, asg,   L, i, c, c2, cur, has, j, k, val, u) {
  L = length(raw); i = 1; cur = ""; has = 0
  while (i <= L) {
    c = substr(raw, i, 1); c2 = substr(raw, i + 1, 1)
    if (c == "~" && (i == 1 || (asg && substr(raw, i - 1, 1) == ":")) && (c2 == "/" || c2 == "" || c2 == ":" || c2 == "+" || c2 == "-")) {
      if (c2 == "+") { cur = cur CWD; i += 2 } else if (c2 == "-") { cur = cur lookup("OLDPWD"); i += 2 } else { cur = cur lookup("HOME"); i++ }
      has = 1; continue
    }
    if (c == "\\") { if (c2 != "\n") { cur = cur c2; has = 1 } i += 2; continue }
    if (c == SQ) { j = skip_sq(raw, i + 1); cur = cur substr(raw, i + 1, j - i - 2); has = 1; i = j; continue }
    if (c == "$" && c2 == SQ) { j = skip_ansi(raw, i + 2); cur = cur ansi(substr(raw, i + 2, j - i - 3)); has = 1; i = j; continue }
    if (c == "$" && c2 == "\"") { i++; continue }
    if (c == "\"") {
      has = 1; i++
      while (i <= L) {
        c = substr(raw, i, 1); c2 = substr(raw, i + 1, 1)
        if (c == "\"") { i++; break }
        if (c == "\\") { if (c2 == "$" || c2 == "`" || c2 == "\"" || c2 == "\\") { cur = cur c2; i += 2 } else if (c2 == "\n") i += 2; else { cur = cur c; i++ } continue }
        if (c == "$") {
          dollar(raw, i); i = DE
          if (DAT == 1 && spl) { for (k = 1; k <= PN; k++) { if (k > 1) { F[++nf] = cur; cur = "" } cur = cur POS[k] } }
          else cur = cur DV
          continue
        }
        if (c == "`") { j = skip_bq(raw, i + 1); cur = cur subst(unbq(substr(raw, i + 1, j - i - 2))); i = j; continue }
        cur = cur c; i++
      }
      continue
    }
    if (c == "$" || c == "`" || ((c == "<" || c == ">") && c2 == "(")) {
      if (c == "$") { dollar(raw, i); i = DE; val = DV; u = DU }
      else if (c == "`") { j = skip_bq(raw, i + 1); val = subst(unbq(substr(raw, i + 1, j - i - 2))); u = SU; i = j; DAT = 0 }
      else { j = skip_paren(raw, i + 2); subst(substr(raw, i + 2, j - i - 3)); val = "/dev/fd/63"; u = 1; i = j; DAT = 0 }
      if (u || !spl) { cur = cur val; if (val != "") has = 1; continue }
      XC = cur; XH = has
      if (DAT) { for (k = 1; k <= PN; k++) { if (k > 1 && XH) { F[++nf] = XC; XC = ""; XH = 0 } nf = addsplit(POS[k], F, nf) } }
      else nf = addsplit(val, F, nf)
      cur = XC; has = XH
      continue
    }
    cur = cur c; has = 1; i++
  }
  if (has || !spl) F[++nf] = cur
  return nf
}
# An unquoted here-doc body: expansions and command substitutions, no quote removal.
function expand_heredoc(t,   out, i, m, c, c2, j) {
  out = ""; m = length(t); i = 1
  while (i <= m) {
    c = substr(t, i, 1); c2 = substr(t, i + 1, 1)
    if (c == "\\" && (c2 == "$" || c2 == "`" || c2 == "\\")) { out = out c2; i += 2; continue }
    if (c == "\\" && c2 == "\n") { i += 2; continue }
    if (c == "$") { dollar(t, i); out = out DV; i = DE; continue }
    if (c == "`") { j = skip_bq(t, i + 1); out = out subst(unbq(substr(t, i + 1, j - i - 2))); i = j; continue }
    out = out c; i++
  }
  return out
}

# ---- commands -------------------------------------------------------------------------------
function tracked(k) {
  return k ~ /^OVERDECK_[A-Za-z0-9_]*$/ || k ~ /^GIT_(DIR|WORK_TREE|INDEX_FILE|COMMON_DIR|OBJECT_DIRECTORY|CONFIG|CONFIG_COUNT|CONFIG_KEY_[0-9]+|CONFIG_VALUE_[0-9]+|CONFIG_PARAMETERS|CONFIG_GLOBAL|CONFIG_SYSTEM|CONFIG_NOSYSTEM|CEILING_DIRECTORIES|DISCOVERY_ACROSS_FILESYSTEM|NAMESPACE|EXTERNAL_DIFF|SSH_COMMAND|SSH|PROXY_COMMAND|EXEC_PATH|PAGER|EDITOR|SEQUENCE_EDITOR)$/
}
function q(s,   out, k) {
  out = ""
  while ((k = index(s, SQ)) > 0) { out = out substr(s, 1, k - 1) SQ "\\" SQ SQ; s = substr(s, k + 1) }
  return SQ out s SQ
}
# One git command: its directory, how its environment differs from the hook one, its arguments.
function unmark(s,   k) { while ((k = index(s, U1)) > 0) s = substr(s, 1, k - 1) substr(s, k + 1); return s }
function emit(F, from, to, te, ts, sub1,   k, j, nn, order, names, v, ops, line, gopt) {
  for (k in ENVIRON) if (tracked(k)) names[k] = 1
  for (k in VS) if (tracked(k)) names[k] = 1
  for (k in ts) if (tracked(k)) names[k] = 1
  ops = ""; nn = 0; gopt = 1
  for (k in names) { for (j = ++nn; j > 1 && order[j - 1] > k; j--) order[j] = order[j - 1]; order[j] = k }
  for (j = 1; j <= nn; j++) {
    k = order[j]; v = env_lookup(k, te, ts)
    if (ELS) { v = unmark(v); if (!(k in ENVIRON) || ENVIRON[k] != v) ops = ops " S " k " " q(v) }
    else if (k in ENVIRON) ops = ops " U " k
  }
  line = "od_check " q(unmark(cmd_cwd(te))) ops " --" (sub1 != "" ? " " q(sub1) : "")
  for (k = from; k <= to; k++) {
    # `git -C "$(git rev-parse --show-toplevel)"`: a -C the hook cannot know is taken as here, as cd is.
    if (sub1 == "" && gopt && ((F[k] == "-C" && index(F[k + 1], U1)) || (F[k] ~ /^-C./ && index(F[k], U1)))) { if (F[k] == "-C") k++; continue }
    if (F[k] !~ /^-/) gopt = 0
    else if (gopt && k < to && F[k] ~ /^(-c|--git-dir|--work-tree|--namespace|--config-env|--super-prefix|--attr-source)$/) { line = line " " q(unmark(F[k])); k++ }
    line = line " " q(unmark(F[k]))
  }
  if (!(line in SEEN)) { SEEN[line] = 1; print line }
}
# Options of wrapper commands that take a value (short letters; long names between spaces).
function wrap_opts(F, i, to, b,   a, short, long, k, L, ch) {
  short = WSHORT[b]; long = WLONG[b]
  while (i <= to && F[i] ~ /^-./) {
    a = F[i]
    if (a == "--") return i + 1
    if (a ~ /^--/) { if (a !~ /=/ && index(long, " " substr(a, 3) " ")) i++; i++; continue }
    if (a ~ /^-[0-9]+$/) { i++; continue }
    L = length(a)
    for (k = 2; k <= L; k++) { ch = substr(a, k, 1); if (index(short, ch)) { if (k == L) i++; break } }
    i++
  }
  return i
}
function run_sudo(F, i, to, te, ts, b,   a, keep, keepall, k, nk, names, cw, v) {
  keepall = 0; keep = ""; cw = ""
  while (i <= to && F[i] ~ /^-./) {
    a = F[i]
    if (a == "--") { i++; break }
    if (a == "-E" || a == "--preserve-env") keepall = 1
    else if (a ~ /^--preserve-env=/) keep = keep "," substr(a, 16)
    else if (a == "-D" || a == "--chdir") { i++; cw = F[i] }
    else if (a ~ /^--chdir=/) cw = substr(a, 9)
    else if (a == "-i" || a == "--login") cw = "/"  # the target user home: not a worktree we know
    else if (a ~ /^--/) { if (a !~ /=/ && a ~ /^--(close-from|group|host|prompt|chroot|role|type|command-timeout|other-user|user)$/) i++ }
    else if (b == "doas" ? a ~ /^-[Cu]$/ : a ~ /^-[CDghpRrTtUu]$/) i++
    i++
  }
  if (cw != "" && !index(cw, U1)) { cw = absdir(cmd_cwd(te), cw); te[" cwd"] = cw }
  if (!keepall) {
    nk = split(keep, names, ",")
    for (k = 1; k <= nk; k++) if (names[k] != "") { v = env_lookup(names[k], te, ts); if (ELS) { te[names[k]] = v; ts[names[k]] = "x" } }
    for (k in ts) if (k !~ /^ / && !index("," keep ",", "," k ",")) { delete ts[k]; delete te[k] }
    ts[" clr"] = 1
  }
  while (i <= to && F[i] ~ /^[A-Za-z_][A-Za-z0-9_]*=/) { k = index(F[i], "="); te[substr(F[i], 1, k - 1)] = substr(F[i], k + 1); ts[substr(F[i], 1, k - 1)] = "x"; i++ }
  return i
}
function run_shell(F, j, to, te, ts, sti, stk,   a, cmode, smode, nv) {
  cmode = 0; smode = 0
  for (; j <= to; j++) {
    a = F[j]
    if (a == "--" || a == "-") { j++; break }
    if (a ~ /^--/) { if (a == "--rcfile" || a == "--init-file") j++; continue }
    if (a ~ /^[-+][A-Za-z]+$/) {
      if (substr(a, 1, 1) == "-") { if (index(a, "c")) cmode = 1; if (index(a, "s")) smode = 1 }
      nv = gsub(/[oO]/, "&", a); j += nv
      continue
    }
    break
  }
  if (cmode) { if (j <= to) child_run(F[j], F, j + 1, to, te, ts, 1); return }
  if (j <= to && !smode) return
  if (stk) child_run(sti, F, j, to, te, ts, 0)
}
function set_out(t) { OUT_KNOWN = 1; OUT_TEXT = t }
# One simple command, words expanded: the prefixes, then what the command is.
function run_words(F, from, to, te, ts, sti, stk,   i, c, b, a, j, k, G, ng, nm, T, nt, str, irep, te2, ts2, unexp, exp1, setpos, t, d) {
  OUT_KNOWN = 0; OUT_TEXT = ""
  i = from
  while (i <= to) {
    c = F[i]; b = c; sub(/.*\//, "", b)
    if (b == "env") {
      for (i++; i <= to; i++) {
        a = F[i]
        if (a == "--") { i++; break }
        if (a == "-" || a == "--ignore-environment" || a ~ /^-[0iv]*i[0iv]*$/) { env_clear(te, ts); continue }
        if (a == "-u" || a == "--unset") { i++; env_unset(te, ts, F[i]); continue }
        if (a ~ /^-u/) { env_unset(te, ts, substr(a, 3)); continue }
        if (a ~ /^--unset=/) { env_unset(te, ts, substr(a, 9)); continue }
        if (a == "-C" || a == "--chdir" || a ~ /^-C/ || a ~ /^--chdir=/) {
          t = (a == "-C" || a == "--chdir") ? F[++i] : (a ~ /^-C/ ? substr(a, 3) : substr(a, 9))
          if (!index(t, U1)) { t = absdir(cmd_cwd(te), t); te[" cwd"] = t }
          continue
        }
        if (a == "-S" || a == "--split-string" || a ~ /^-S/ || a ~ /^--split-string=/) {
          str = (a == "-S" || a == "--split-string") ? F[++i] : (a ~ /^-S/ ? substr(a, 3) : substr(a, 16))
          ng = 1; G[1] = "env"
          nt = split_words(str, T); for (k = 1; k <= nt; k++) G[++ng] = T[k]
          for (k = i + 1; k <= to; k++) G[++ng] = F[k]
          run_words(G, 1, ng, te, ts, sti, stk)
          return
        }
        if (a ~ /^-/) continue
        break
      }
      while (i <= to && F[i] ~ /^[^=]+=/) { k = index(F[i], "="); nm = substr(F[i], 1, k - 1); te[nm] = substr(F[i], k + 1); ts[nm] = "x"; i++ }
      continue
    }
    if (b == "sudo" || b == "doas") { i = run_sudo(F, i + 1, to, te, ts, b); continue }
    if (b == "su" || b == "runuser") {
      for (i++; i <= to; i++) {
        a = F[i]
        if (a == "-c" || a == "--command") { env_clear(te, ts); child_run(F[i + 1], F, to + 1, to, te, ts, 1); return }
        if (a ~ /^--command=/) { env_clear(te, ts); child_run(substr(a, 11), F, to + 1, to, te, ts, 1); return }
        if (a ~ /^-[gGsw]$/ || a ~ /^--(group|supp-group|shell|whitelist-environment)$/) i++
      }
      return
    }
    if (b == "exec") {
      for (i++; i <= to && F[i] ~ /^-/; i++) { if (F[i] == "--") { i++; break } if (index(F[i], "c")) env_clear(te, ts); if (F[i] ~ /a$/) i++ }
      continue
    }
    if (b == "command") {
      for (i++; i <= to && F[i] ~ /^-/; i++) { if (F[i] == "--") { i++; break } if (F[i] ~ /[vV]/) { set_out(""); OUT_KNOWN = 0; return } }
      continue
    }
    if (b == "flock") {
      for (i++; i <= to && F[i] ~ /^-./; i++) {
        if (F[i] == "-c" || F[i] == "--command") { child_run(F[i + 1], F, to + 1, to, te, ts, 1); return }
        if (F[i] ~ /^-[wE]$/ || F[i] ~ /^--(timeout|conflict-exit-code)$/) i++
      }
      i++
      if (F[i] == "-c" || F[i] == "--command") { child_run(F[i + 1], F, to + 1, to, te, ts, 1); return }
      continue
    }
    if (b in WSHORT) { i = wrap_opts(F, i + 1, to, b) + WOPER[b]; continue }
    break
  }
  if (i > to) { set_out(""); return }
  c = F[i]; b = c; sub(/.*\//, "", b)
  if (b == "git") { emit(F, i + 1, to, te, ts, ""); return }
  if (b ~ /^git-[a-z]/) { emit(F, i + 1, to, te, ts, substr(b, 5)); return }
  if (b in SHELLS) { run_shell(F, i + 1, to, te, ts, sti, stk); OUT_KNOWN = 0; return }
  if (b == "eval") {
    # A special builtin: the assignments before it stay, and what it runs is this shell.
    for (k in ts) if (k !~ /^ /) { if (ts[k] == "x") { V[k] = te[k]; VS[k] = "x" } else { V[k] = ""; VS[k] = "u" } }
    parse_script(join(F, i + 1, to, " "))
    OUT_KNOWN = PS_KNOWN; OUT_TEXT = PS_OUT
    return
  }
  if (b == "xargs") {
    irep = 0
    for (j = i + 1; j <= to && F[j] ~ /^-/; j++) {
      a = F[j]
      if (a == "--") { j++; break }
      if (a ~ /^-[adEILnPs]$/) { if (a == "-I") irep = 1; j++; continue }
      if (a ~ /^--(arg-file|delimiter|eof|max-lines|max-args|max-procs|max-chars|process-slot-var)$/) { j++; continue }
      if (a ~ /^-[Ii]/ || a ~ /^--replace/) irep = 1
    }
    ng = 0
    if (j > to) G[++ng] = "echo"
    for (k = j; k <= to; k++) G[++ng] = F[k]
    if (stk && !irep) { nt = split(sti, T, /[ \t\n]+/); for (k = 1; k <= nt; k++) if (T[k] != "") G[++ng] = T[k] }
    run_words(G, 1, ng, te, ts, "", 0)
    OUT_KNOWN = 0
    return
  }
  if (b == "find") {
    d = (i < to && F[i + 1] !~ /^[-(!]/) ? absdir(cmd_cwd(te), F[i + 1]) : cmd_cwd(te)
    for (j = i + 1; j <= to; j++) {
      if (F[j] !~ /^-(exec|execdir|ok|okdir)$/) continue
      for (k = j + 1; k <= to && F[k] != ";" && F[k] != "+"; k++) ;
      split("", te2); split("", ts2); env_copy(te, ts, te2, ts2)
      if (F[j] ~ /dir$/) te2[" cwd"] = d
      run_words(F, j + 1, k - 1, te2, ts2, "", 0)
      j = k
    }
    OUT_KNOWN = 0
    return
  }
  if (b == "cd") {
    for (j = i + 1; j <= to && F[j] ~ /^-[LPe@]+$/; j++) ;
    if (F[j] == "--") j++
    chdir(j <= to ? F[j] : lookup("HOME"), 1)
    set_out(""); return
  }
  if (b == "pushd") {
    for (j = i + 1; j <= to && F[j] == "-n"; j++) ;
    if (j > to) { if (DN > 0) { t = DS[DN]; DS[DN] = CWD; chdir(t, 0) } }
    else if (F[j] !~ /^[-+][0-9]+$/) { DS[++DN] = CWD; chdir(F[j], 0) }
    set_out(""); return
  }
  if (b == "popd") {
    if (i == to && DN > 0) { t = DS[DN]; DN--; chdir(t, 0) }
    set_out(""); return
  }
  if (b == "export" || b == "declare" || b == "typeset" || b == "local" || b == "readonly") {
    unexp = 0; exp1 = b == "export"
    for (j = i + 1; j <= to; j++) {
      a = F[j]
      if (a == "--") continue
      if (a ~ /^-/) { if (b == "export" && index(a, "n")) unexp = 1; if (b != "export" && index(a, "x")) exp1 = 1; if (a ~ /^-.*[fFp]/) { set_out(""); OUT_KNOWN = 0; return } continue }
      if (a ~ /^\+/) { if (index(a, "x")) unexp = 1; continue }
      if (a ~ /^[A-Za-z_][A-Za-z0-9_]*=/) { k = index(a, "="); nm = substr(a, 1, k - 1); t = substr(a, k + 1) }
      else if (a ~ /^[A-Za-z_][A-Za-z0-9_]*$/) { nm = a; t = lookup(nm); if (!PSET) continue }
      else continue
      if (unexp) { V[nm] = t; VS[nm] = "s" } else if (exp1) { V[nm] = t; VS[nm] = "x" } else set_var(nm, t)
    }
    set_out(""); return
  }
  if (b == "unset") {
    for (j = i + 1; j <= to; j++) { if (F[j] == "-f") { set_out(""); return } if (F[j] ~ /^-/) continue; V[F[j]] = ""; VS[F[j]] = "u" }
    set_out(""); return
  }
  if (b == "set") {
    setpos = 0
    for (j = i + 1; j <= to; j++) {
      a = F[j]
      if (a == "--") { j++; setpos = 1; break }
      if (a == "-o" || a == "+o") { if (F[j + 1] == "allexport") AX = a == "-o"; j++; continue }
      if (a ~ /^-[A-Za-z]+$/) { if (index(a, "a")) AX = 1; continue }
      if (a ~ /^\+[A-Za-z]+$/) { if (index(a, "a")) AX = 0; continue }
      setpos = 1; break
    }
    if (setpos) { PN = 0; for (; j <= to; j++) POS[++PN] = F[j] }
    set_out(""); return
  }
  if (b == "shift") {
    k = (i < to) ? F[i + 1] + 0 : 1
    if (k > 0 && k <= PN) { for (j = 1; j + k <= PN; j++) POS[j] = POS[j + k]; PN -= k }
    set_out(""); return
  }
  # Commands whose output is known (for `$(...)`, `... | sh`, `... | xargs`).
  if (b == "echo") {
    t = "\n"
    for (j = i + 1; j <= to && F[j] ~ /^-[neE]+$/; j++) if (index(F[j], "n")) t = ""
    set_out(join(F, j, to, " ") t); return
  }
  if (b == "printf") {
    if (i == to) return
    str = F[i + 1]; t = ""; j = i + 2
    while (match(str, /%[-0-9.]*[sdbq]|%%|\\n|\\t|\\\\/)) {
      a = substr(str, RSTART, RLENGTH)
      t = t substr(str, 1, RSTART - 1) (a == "%%" ? "%" : a == "\\n" ? "\n" : a == "\\t" ? "\t" : a == "\\\\" ? "\\" : (j <= to ? F[j++] : ""))
      str = substr(str, RSTART + RLENGTH)
    }
    set_out(t str); return
  }
  if (b == "pwd") { set_out(cmd_cwd(te) "\n"); return }
  if (b == "cat") { if (i == to && stk) set_out(sti); return }
  if (b == "true" || b == "false" || b == ":") { set_out(""); return }
  if (b == "dirname" && i < to) { t = F[to]; sub(/\/+$/, "", t); if (t !~ /\//) t = "."; else { sub(/\/[^\/]*$/, "", t); if (t == "") t = "/" } set_out(t "\n"); return }
  if (b == "basename" && i < to) { t = F[i + 1]; sub(/\/+$/, "", t); sub(/.*\//, "", t); set_out(t "\n"); return }
  if ((b == "realpath" || b == "readlink") && i < to && F[to] !~ /^-/) { set_out(absdir(cmd_cwd(te), F[to]) "\n"); return }
}
# A directory the hook cannot know (the output of a command) leaves it where it was: the commonest
# is `cd "$(git rev-parse --show-toplevel)"`, the top of the worktree it is in.
function chdir(d, setold) {
  if (d == "" || index(d, U1)) return
  if (d == "-") d = lookup("OLDPWD")
  if (setold) { V["OLDPWD"] = CWD; VS["OLDPWD"] = "x" }
  CWD = absdir(CWD, d)
}
# Words of `env -S`: quotes and backslashes, nothing expanded.
function split_words(s, W,   nw, i, m, c, cur, has, j) {
  nw = 0; m = length(s); i = 1; cur = ""; has = 0
  while (i <= m) {
    c = substr(s, i, 1)
    if (c == " " || c == "\t" || c == "\n") { if (has) { W[++nw] = cur; cur = ""; has = 0 } i++; continue }
    if (c == "\\") { cur = cur substr(s, i + 1, 1); has = 1; i += 2; continue }
    if (c == SQ) { j = skip_sq(s, i + 1); cur = cur substr(s, i + 1, j - i - 2); has = 1; i = j; continue }
    if (c == "\"") { j = skip_dq(s, i + 1); cur = cur unquote(substr(s, i, j - i)); has = 1; i = j; continue }
    cur = cur c; has = 1; i++
  }
  if (has) W[++nw] = cur
  return nw
}
# One simple command as the lexer found it: raw words, raw redirection targets, its stdin (1: a
# quoted here-doc, 2: an unquoted one, 3: a here-string, else what the previous pipeline element
# printed when that is known). A pipeline element or a background job runs in a subshell.
function simple(RW, nrw, RD, nrt, skind, sval, pin, pknown, pprev, pout,   sub_, i, k, eq, nm, val, AN, AV, na, F, nf, T, nt, te, ts, sti, stk, hdr, decl) {
  sub_ = pin || pout
  if (sub_) push_state()
  i = 1; hdr = 0
  while (i <= nrw && (RW[i] in KEYWORD)) { if (RW[i] == "time" && RW[i + 1] == "-p") i++; i++ }
  if (i <= nrw && (RW[i] in HEADER)) hdr = 1
  na = 0
  while (!hdr && i <= nrw && RW[i] ~ /^[A-Za-z_][A-Za-z0-9_]*\+?=/) {
    eq = index(RW[i], "="); nm = substr(RW[i], 1, eq - 1)
    nt = expand(substr(RW[i], eq + 1), T, 0, 0, 1); val = join(T, 1, nt, " ")
    if (nm ~ /\+$/) { nm = substr(nm, 1, length(nm) - 1); val = lookup(nm) val }
    AN[++na] = nm; AV[na] = val; i++
  }
  nf = 0; decl = 0
  for (; i <= nrw; i++) {
    # declare-like builtins take NAME=value words whole, as assignments are.
    if (decl && RW[i] ~ /^[A-Za-z_][A-Za-z0-9_]*=/) nf = expand(RW[i], F, nf, 0, 1)
    else nf = expand(RW[i], F, nf, 1, 0)
    if (nf == 1 && F[1] ~ /^(export|declare|typeset|local|readonly)$/) decl = 1
  }
  for (k = 1; k <= nrt; k++) nt = expand(RD[k], T, 0, 0, 0)
  stk = 0; sti = ""
  if (skind == 1) { sti = sval; stk = 1 }
  else if (skind == 2) { sti = expand_heredoc(sval); stk = 1 }
  else if (skind == 3) { nt = expand(sval, T, 0, 0, 0); sti = join(T, 1, nt, " ") "\n"; stk = 1 }
  else if (pin && pknown) { sti = pprev; stk = 1 }
  if (hdr) OUT_KNOWN = 0
  else if (nf == 0) { for (k = 1; k <= na; k++) set_var(AN[k], AV[k]); set_out("") }
  else {
    for (k = 1; k <= na; k++) { te[AN[k]] = AV[k]; ts[AN[k]] = "x" }
    run_words(F, 1, nf, te, ts, sti, stk)
  }
  if (sub_) pop_state()
}
# Follows script S in the current state; PS_KNOWN/PS_OUT: its output, when every command of it
# has a known one.
function parse_script(s,   m, i, c, c2, c3, j, k, raw, RW, nrw, RD, nrt, skind, sval, pdepth, pin, pknown, pprev, op, known, out, fd, hdnl, hdend, strip, delim, quoted, body, p, np, line, cmp) {
  if (LVL > MAXLVL) { PS_KNOWN = 0; return }
  LVL++
  m = length(s); i = 1; nrw = 0; nrt = 0; skind = 0; sval = ""; pdepth = 0; pin = 0; pknown = 0; known = 1; out = ""; fd = ""; hdnl = 0; hdend = 0
  while (1) {
    op = ""
    if (i > m) op = "end"
    else {
      c = substr(s, i, 1); c2 = substr(s, i, 2); c3 = substr(s, i, 3)
      if (c == " " || c == "\t") { i++; continue }
      if (c2 == "\\\n") { i += 2; continue }
      if (c == "#") { while (i <= m && substr(s, i, 1) != "\n") i++; continue }
      if (c == "\n") { op = "\n"; if (hdnl == i) { i = hdend; hdnl = 0; hdend = 0 } else i++ }
      else if (c3 == ";;&") { op = ";"; i += 3 }
      else if (c3 == "&>>" || c2 == "&>") { i += (c3 == "&>>") ? 3 : 2; RD[++nrt] = next_word(s, i); i = NW_END; fd = ""; continue }
      else if (c2 == "&&" || c2 == "||" || c2 == ";;" || c2 == ";&" || c2 == "|&") { op = c2; i += 2 }
      else if (c == ";" || c == "|" || c == "&") { op = c; i++ }
      else if (c == "(") {
        if (nrw == 0) { push_state(); pdepth++; i++; continue }
        for (k = i + 1; substr(s, k, 1) == " " || substr(s, k, 1) == "\t"; k++) ;
        if (substr(s, k, 1) == ")") { nrw = 0; i = k + 1; continue }
        # NAME=(...) is an array assignment; any other ( after words is a syntax error: skipped.
        if (RW[nrw] ~ /=$/) { j = skip_paren(s, i + 1); RW[nrw] = RW[nrw] substr(s, i, j - i); i = j } else i++
        continue
      }
      else if (c == ")") { op = ")"; i++ }
      else if ((c == "<" || c == ">") && substr(s, i + 1, 1) == "(") { j = skip_paren(s, i + 2); RW[++nrw] = substr(s, i, j - i); i = j; continue }
      else if (c3 == "<<<") {
        i += 3; raw = next_word(s, i); i = NW_END
        if (fd == "" || fd == "0") { skind = 3; sval = raw } else RD[++nrt] = raw
        fd = ""; continue
      }
      else if (c2 == "<<") {
        strip = substr(s, i + 2, 1) == "-"; i += strip ? 3 : 2
        raw = next_word(s, i); i = NW_END
        delim = unquote(raw); quoted = raw ~ /["\\]/ || index(raw, SQ)
        if (hdend) p = hdend
        else { k = index(substr(s, i), "\n"); if (!k) { fd = ""; continue } hdnl = i + k - 1; p = hdnl + 1 }
        body = ""
        while (p <= m) {
          k = index(substr(s, p), "\n"); line = k ? substr(s, p, k - 1) : substr(s, p); np = k ? p + k : m + 1
          cmp = line; if (strip) sub(/^\t+/, "", cmp)
          p = np
          if (cmp == delim) break
          body = body cmp "\n"
        }
        hdend = p
        if (fd == "" || fd == "0") { skind = quoted ? 1 : 2; sval = body }
        fd = ""; continue
      }
      else if (c == "<" || c == ">") {
        k = (c2 == ">>" || c2 == ">|" || c2 == "<>" || c2 == "<&" || c2 == ">&") ? 2 : 1
        i += k; RD[++nrt] = next_word(s, i); i = NW_END; fd = ""; continue
      }
      else {
        j = word_end(s, i); raw = substr(s, i, j - i); i = j
        c = substr(s, i, 1)
        if ((c == "<" || c == ">") && raw ~ /^[0-9]+$/) { fd = raw; continue }
        RW[++nrw] = raw; continue
      }
    }
    if (nrw > 0 || nrt > 0 || skind) {
      simple(RW, nrw, RD, nrt, skind, sval, pin, pknown, pprev, op == "|" || op == "|&" || op == "&")
      if (op == "|" || op == "|&") { pprev = OUT_TEXT; pknown = OUT_KNOWN }
      else if (OUT_KNOWN) out = out OUT_TEXT
      else known = 0
    }
    pin = op == "|" || op == "|&"
    if (!pin) pknown = 0
    nrw = 0; nrt = 0; skind = 0; sval = ""; fd = ""
    if (op == ")" && pdepth > 0) { pop_state(); pdepth-- }
    if (op == "end") break
  }
  while (pdepth > 0) { pop_state(); pdepth-- }
  LVL--
  PS_KNOWN = known; PS_OUT = out
}

function main(   k, p, F, nf, te, ts, tool, base) {
  n = length(buf); pos = 1
  jvalue("", 0); jws()
  if (pos <= n) jfail("text after the value")
  if (JT[""] != "o") jfail("not an object")
  tool = JT["tool_name"] == "s" ? JV["tool_name"] : ""
  if (tool != "" && !(tool in SHELLTOOL)) return
  for (k = 1; k <= 4; k++) {
    p = k == 1 ? "tool_input.command" : k == 2 ? "tool_input.cmd" : k == 3 ? "command" : "cmd"
    if (JT[p] == "s" || (JT[p] == "a" && JA[p])) break
  }
  if (k > 4) return
  base = ENVIRON["PWD"]; if (substr(base, 1, 1) != "/") base = "/"
  if (JT["cwd"] == "s" && JV["cwd"] != "") base = absdir(base, JV["cwd"])
  if (JT["workdir"] == "s" && JV["workdir"] != "") base = absdir(base, JV["workdir"])
  if (JT["tool_input.cwd"] == "s" && JV["tool_input.cwd"] != "") base = absdir(base, JV["tool_input.cwd"])
  if (JT["tool_input.workdir"] == "s" && JV["tool_input.workdir"] != "") base = absdir(base, JV["tool_input.workdir"])
  CWD = normalize(base); CLR = 0; AX = 0; PN = 0; POS[0] = "sh"; DN = 0; SD = 0; LVL = 0
  if (JT[p] == "s") parse_script(JV[p])
  else {
    # An argv array is exec-ed as it is: words already, and a first NAME=v is a program name.
    nf = JN[p]; for (k = 1; k <= nf; k++) F[k] = JV[p "[" k "]"]
    run_words(F, 1, nf, te, ts, "", 0)
  }
}
function init(   t, k) {
  SQ = sprintf("%c", 39); U1 = sprintf("%c", 1); buf = ""; MAXLVL = 24
  split("tool_name tool_input.command tool_input.cmd command cmd cwd workdir tool_input.cwd tool_input.workdir", t, " "); for (k in t) WANT[t[k]] = 1
  split("Bash bash Shell shell shell_command local_shell exec_command container.exec run_shell_command", t, " "); for (k in t) SHELLTOOL[t[k]] = 1
  split("sh bash dash zsh ksh ksh93 mksh pdksh oksh ash yash posh rbash", t, " "); for (k in t) SHELLS[t[k]] = 1
  split("if then else elif fi while until do done ! { } time esac coproc", t, " "); for (k in t) KEYWORD[t[k]] = 1
  split("for select case function [[", t, " "); for (k in t) HEADER[t[k]] = 1
  # Wrappers that run the rest of their words as a command: the short options that take a value,
  # the long ones, and how many operands come before the command.
  WSHORT["nohup"] = ""; WSHORT["builtin"] = ""; WSHORT["setsid"] = ""; WSHORT["busybox"] = ""
  WSHORT["fakeroot"] = ""; WSHORT["chronic"] = ""; WSHORT["unbuffer"] = ""; WSHORT["eatmydata"] = ""; WSHORT["nocache"] = ""
  WSHORT["time"] = "fo"; WLONG["time"] = " format output "
  WSHORT["timeout"] = "sk"; WLONG["timeout"] = " signal kill-after "; WOPER["timeout"] = 1
  WSHORT["nice"] = "n"; WLONG["nice"] = " adjustment "
  WSHORT["ionice"] = "cnp"; WLONG["ionice"] = " class classdata pid "
  WSHORT["stdbuf"] = "ioe"; WLONG["stdbuf"] = " input output error "
  WSHORT["taskset"] = ""; WOPER["taskset"] = 1
  WSHORT["chrt"] = ""; WOPER["chrt"] = 1
  WSHORT["caffeinate"] = "tw"
}
# The whole input as one record (valid JSON holds no raw control character such as \001).
BEGIN { init(); RS = "\001"; FS = "\001" }
{ buf = buf $0 }
END { main() }'

od_script=$(LC_ALL=C awk "$od_prog") || exit 1
[ -n "$od_script" ] || exit 0

od_msgs=
od_nl='
'
# od_check DIR [S NAME VALUE | U NAME]... -- ARGS: the gate's verdict on `git ARGS` run in DIR with
# those changes to this environment; a refusal (exit 1) adds its message. The directory is entered
# as the shell would (logically), then taken physically, as git sees it.
od_check() {
  od_msg=$(
    cd -- "$1" 2>/dev/null && cd -P . 2>/dev/null || exit 0
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
      case $1 in
        S) export "$2=$3"; shift 3 ;;
        U) unset "$2"; shift 2 ;;
        *) exit 0 ;;
      esac
    done
    shift
    exec sh "$od_gate" --od-git-gate-check "$@" 2>&1 >/dev/null
  )
  [ $? -eq 1 ] && od_msgs=$od_msgs$od_msg$od_nl
  return 0
}
eval "$od_script"

[ -n "$od_msgs" ] || exit 0
printf '%s' "$od_msgs" >&2
exit 2
