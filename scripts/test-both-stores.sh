#!/usr/bin/env bash
# `make test`: the whole suite against SQLite, then its store tests against PostgreSQL
# (tests/conftest.py deselects the others there), always both (a failure in the first does not skip
# the second). Each half's output streams as it runs; at the end, each store's pytest summary line
# and exit status are repeated, and the exit status is non-zero when either half failed.
# Usage: test-both-stores.sh PYTEST [PYTEST ARGS...]
set -uo pipefail
pytest=$1
shift
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
status=0
summary=()
for store in sqlite postgres; do
  if [ "$store" = sqlite ]; then url=sqlite; name=SQLite; else url=${PG_TEST_URL:-postgresql://root@127.0.0.1:5432/test}; name=PostgreSQL; fi
  echo "== test suite against $name"
  BENCHYARD_TEST_DB=$url "$pytest" "$@" 2>&1 | tee "$logs/$store.log"
  code=${PIPESTATUS[0]}
  # pytest's last line is its summary ("=== 812 passed, 3 skipped in 901.2s ===" or, with -q, bare)
  line=$(grep -E ' in [0-9.]+s( \([0-9:]+\))?( =+)?$' "$logs/$store.log" | tail -n 1)
  summary+=("== $name: ${line:-no pytest summary line (exit $code)} (exit $code)")
  [ "$code" -eq 0 ] || status=1
done
printf '%s\n' "${summary[@]}"
exit $status
