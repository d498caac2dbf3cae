#!/usr/bin/env bash
# Start the PostgreSQL server the test suite uses (127.0.0.1:5432, trust auth, database `test`) if it is down.
set -euo pipefail
if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  exit 0
fi
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
version=$(ls /etc/postgresql | sort -V | tail -n 1)
pg_ctlcluster --skip-systemctl-redirect "$version" main start
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 -p 5432 && break
  sleep 1
done
pg_isready -h 127.0.0.1 -p 5432
psql -h 127.0.0.1 -U root -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='test'" | grep -q 1 \
  || psql -h 127.0.0.1 -U root -d postgres -c "CREATE DATABASE test"
