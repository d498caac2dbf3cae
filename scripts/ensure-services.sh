#!/usr/bin/env bash
# The PostgreSQL server the test suite uses: 127.0.0.1:5432, trust auth, database `test`. Starts
# the server if it is down and creates the database if it is missing (a server already up is not
# enough), then checks that the database answers. Safe to run any number of times.
set -euo pipefail
. "$(dirname "$0")/as-root.sh"
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    apt_install postgresql
  fi
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
  for _ in $(seq 1 30); do
    pg_isready -q -h 127.0.0.1 -p 5432 && break
    sleep 1
  done
  pg_isready -h 127.0.0.1 -p 5432
fi
psql_admin() { psql -h 127.0.0.1 -p 5432 -U root -d postgres -v ON_ERROR_STOP=1 -qtAX "$@"; }
if [ "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = 'test'")" != "1" ]; then
  psql_admin -c "CREATE DATABASE test" \
    || [ "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = 'test'")" = "1" ]  # a racing run made it
fi
if [ "$(psql -h 127.0.0.1 -p 5432 -U root -d test -qtAX -c 'SELECT 1')" != "1" ]; then
  echo "ensure-services: database 'test' on 127.0.0.1:5432 does not answer" >&2
  exit 1
fi
