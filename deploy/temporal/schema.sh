#!/bin/sh
# One-shot: installs or upgrades Temporal's own SQL schema (persistence and visibility databases),
# run by the `temporal-schema` compose service (temporalio/admin-tools image) before the server
# starts. Idempotent: `setup-schema -v 0.0` only creates the version tables when they are missing,
# `update-schema` applies only versions newer than the recorded one, so the same command both
# initialises a new volume and upgrades the schema after a bump of the Temporal image tag.
#
# The two databases and their owner role are created once by deploy/postgres/initdb/10-roles.sh,
# so this needs no CREATEDB privilege.
#
# Environment (the same names the temporalio/server image reads):
#   POSTGRES_SEEDS, DB_PORT, POSTGRES_USER, POSTGRES_PWD, DBNAME, VISIBILITY_DBNAME
set -eu

log() { echo "temporal-schema: $*" >&2; }

: "${POSTGRES_SEEDS:?}" "${DB_PORT:?}" "${POSTGRES_USER:?}" "${POSTGRES_PWD:?}" "${DBNAME:?}" "${VISIBILITY_DBNAME:?}"
export SQL_PASSWORD="$POSTGRES_PWD"
schema_root="${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}"

tries=0
until nc -z "$POSTGRES_SEEDS" "$DB_PORT"; do
  tries=$((tries + 1))
  [ "$tries" -lt 60 ] || { log "PostgreSQL at $POSTGRES_SEEDS:$DB_PORT unreachable"; exit 1; }
  sleep 2
done

sql() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

log "schema of $DBNAME"
sql --db "$DBNAME" setup-schema -v 0.0
sql --db "$DBNAME" update-schema -d "$schema_root/temporal/versioned"

log "schema of $VISIBILITY_DBNAME"
sql --db "$VISIBILITY_DBNAME" setup-schema -v 0.0
sql --db "$VISIBILITY_DBNAME" update-schema -d "$schema_root/visibility/versioned"

log "done"
