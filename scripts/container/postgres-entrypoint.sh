#!/bin/bash
# First start: a cluster in $PGDATA with the POSTGRES_USER superuser (password auth over TCP) and database POSTGRES_DB.
set -euo pipefail
user="${POSTGRES_USER:-postgres}"
mkdir -p "$PGDATA" /run/postgresql && chown -R postgres:postgres "$PGDATA" /run/postgresql && chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s' "${POSTGRES_PASSWORD:-}" >/tmp/pwfile
  chown postgres /tmp/pwfile
  runuser -u postgres -- initdb -D "$PGDATA" -U "$user" --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f /tmp/pwfile
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  runuser -u postgres -- pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  db="${POSTGRES_DB:-$user}"
  [ "$db" = postgres ] || runuser -u postgres -- psql -U "$user" -d postgres -qc "CREATE DATABASE \"$db\""
  runuser -u postgres -- pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
[ "$1" = postgres ] && shift
exec runuser -u postgres -- postgres -D "$PGDATA" -c listen_addresses='*' "$@"
