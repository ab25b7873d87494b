#!/bin/bash
# Runs once, when the postgres data volume is initialised (the official image runs every file of
# /docker-entrypoint-initdb.d on an empty data directory only). Creates one login role per client,
# each owning only its own databases:
#   OWNERSHIP_DB_USER owns OWNERSHIP_DB_NAME           (the service: migrate, worker, api)
#   TEMPORAL_DB_USER  owns TEMPORAL_DB_NAME and TEMPORAL_VISIBILITY_DB_NAME (the Temporal server)
# The superuser (POSTGRES_USER) is used by nobody else.
#
# Passwords go in as psql variables (:'name'), never through the shell into SQL text, so any
# character is safe here; DATABASE_URL in docker-compose.yml still needs a URL-safe password.
#
# Changing a password later: ALTER ROLE ... PASSWORD ... as the superuser (this file does not run
# again on an existing volume).
set -euo pipefail

for v in OWNERSHIP_DB_NAME OWNERSHIP_DB_USER OWNERSHIP_DB_PASSWORD \
         TEMPORAL_DB_USER TEMPORAL_DB_PASSWORD TEMPORAL_DB_NAME TEMPORAL_VISIBILITY_DB_NAME; do
  if [ -z "${!v:-}" ]; then
    echo "10-roles.sh: $v must be set on the postgres service" >&2
    exit 1
  fi
done

psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  --set=od_db="$OWNERSHIP_DB_NAME" \
  --set=od_user="$OWNERSHIP_DB_USER" \
  --set=od_password="$OWNERSHIP_DB_PASSWORD" \
  --set=t_user="$TEMPORAL_DB_USER" \
  --set=t_password="$TEMPORAL_DB_PASSWORD" \
  --set=t_db="$TEMPORAL_DB_NAME" \
  --set=t_vis_db="$TEMPORAL_VISIBILITY_DB_NAME" <<'SQL'
CREATE ROLE :"od_user" LOGIN PASSWORD :'od_password';
CREATE DATABASE :"od_db" OWNER :"od_user";
REVOKE ALL ON DATABASE :"od_db" FROM PUBLIC;

CREATE ROLE :"t_user" LOGIN PASSWORD :'t_password';
CREATE DATABASE :"t_db" OWNER :"t_user";
CREATE DATABASE :"t_vis_db" OWNER :"t_user";
REVOKE ALL ON DATABASE :"t_db" FROM PUBLIC;
REVOKE ALL ON DATABASE :"t_vis_db" FROM PUBLIC;
SQL

echo "10-roles.sh: created roles $OWNERSHIP_DB_USER, $TEMPORAL_DB_USER and databases $OWNERSHIP_DB_NAME, $TEMPORAL_DB_NAME, $TEMPORAL_VISIBILITY_DB_NAME" >&2
