#!/bin/sh
# The official image's start, in short: on an empty volume, a cluster owned by POSTGRES_USER with its password and
# POSTGRES_DB, reachable over the network with that password; then PostgreSQL itself as PID 1.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s' "$POSTGRES_PASSWORD" > /tmp/pwfile
  initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f /tmp/pwfile
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k /tmp" -w start >/dev/null
  createdb -h /tmp -U "$POSTGRES_USER" "$POSTGRES_DB"
  pg_ctl -D "$PGDATA" -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -k /tmp
