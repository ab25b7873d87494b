#!/bin/sh
# One-shot setup of the Temporal namespace and the custom search attributes, run by the
# `temporal-setup` compose service (temporalio/admin-tools image, POSIX sh).
#
# Usage: setup.sh NAME=TYPE [NAME=TYPE ...]
#   The NAME=TYPE list is written in docker-compose.yml so that test/unit/compose.test.ts can check
#   it against SEARCH_ATTRIBUTES of src/config.ts.
#
# Environment:
#   TEMPORAL_ADDRESS              frontend host:port (required)
#   TEMPORAL_NAMESPACE            namespace to create if missing (required)
#   TEMPORAL_NAMESPACE_RETENTION  retention of closed workflows for a new namespace (default 720h)
#   SETUP_WAIT_SECONDS            how long to wait for the cluster to be healthy (default 300)
#
# Idempotent: an existing namespace is left alone (its retention is not changed), an existing search
# attribute of the same type is accepted, one of a different type fails the setup loudly (the CLI
# refuses it), so a rerun of `docker compose up` is always safe.
set -eu

log() { echo "temporal-setup: $*" >&2; }
die() { log "$*"; exit 1; }

: "${TEMPORAL_ADDRESS:?TEMPORAL_ADDRESS must be set}"
: "${TEMPORAL_NAMESPACE:?TEMPORAL_NAMESPACE must be set}"
retention="${TEMPORAL_NAMESPACE_RETENTION:-720h}"
wait_seconds="${SETUP_WAIT_SECONDS:-300}"
[ "$#" -gt 0 ] || die "usage: setup.sh NAME=TYPE [NAME=TYPE ...]"

# Validate every argument before touching the server.
for spec in "$@"; do
  case "$spec" in
    *=Text | *=Keyword | *=Int | *=Double | *=Bool | *=Datetime | *=KeywordList) ;;
    *) die "bad search attribute spec '$spec' (want NAME=Text|Keyword|Int|Double|Bool|Datetime|KeywordList)" ;;
  esac
  name="${spec%%=*}"
  case "$name" in
    '' | *[!A-Za-z0-9_]*) die "bad search attribute name in '$spec'" ;;
  esac
done

t() { temporal --address "$TEMPORAL_ADDRESS" "$@"; }

# 1. Wait until the frontend answers the health check (the server's own container healthcheck only
#    proves the port is open).
log "waiting for Temporal at $TEMPORAL_ADDRESS (up to ${wait_seconds}s)"
deadline=$(( $(date +%s) + wait_seconds ))
until t operator cluster health >/dev/null 2>&1; do
  [ "$(date +%s)" -lt "$deadline" ] || die "Temporal at $TEMPORAL_ADDRESS not healthy after ${wait_seconds}s"
  sleep 2
done
log "Temporal is serving"

# 2. Namespace.
if t operator namespace describe --namespace "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; then
  log "namespace '$TEMPORAL_NAMESPACE' exists"
else
  log "creating namespace '$TEMPORAL_NAMESPACE' (retention $retention)"
  # A concurrent creator may win the race: accept that, but not any other failure.
  if ! t operator namespace create --namespace "$TEMPORAL_NAMESPACE" --retention "$retention"; then
    t operator namespace describe --namespace "$TEMPORAL_NAMESPACE" >/dev/null \
      || die "could not create namespace '$TEMPORAL_NAMESPACE'"
  fi
fi

# 3. Search attributes, one create call per attribute: some CLI releases register only the first
#    --name of a multi-name call. A freshly created namespace takes a few seconds to reach every
#    frontend, hence the retries.
for spec in "$@"; do
  name="${spec%%=*}"
  type="${spec#*=}"
  tries=0
  until out=$(t operator search-attribute create --namespace "$TEMPORAL_NAMESPACE" --name "$name" --type "$type" 2>&1); do
    case "$out" in
      *"different type"*) die "search attribute $name exists with another type than $type: $out" ;;
    esac
    tries=$((tries + 1))
    [ "$tries" -lt 30 ] || die "could not register search attribute $name ($type): $out"
    sleep 2
  done
  log "search attribute $name ($type) registered"
done

# 4. Verify: every attribute is listed on the namespace.
listed=$(t operator search-attribute list --namespace "$TEMPORAL_NAMESPACE" --output json)
missing=""
for spec in "$@"; do
  name="${spec%%=*}"
  case "$listed" in
    *"\"$name\""*) ;;
    *) missing="$missing $name" ;;
  esac
done
[ -z "$missing" ] || die "search attributes missing after setup:$missing"
log "done: namespace '$TEMPORAL_NAMESPACE', $# search attributes"
