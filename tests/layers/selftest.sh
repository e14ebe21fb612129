#!/usr/bin/env bash
# selftest.sh — check_layers.sh must fail on a tree with a violation: a copy of core/ where a low layer includes a
# higher one, one with a bare include, and one with an I/O header; and pass on the copy untouched.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fresh() { rm -rf "$tmp/t"; mkdir -p "$tmp/t"; cp -r "$root/core" "$tmp/t/"; }
fresh
bash "$here/check_layers.sh" "$tmp/t" >/dev/null || { echo "selftest: the untouched copy fails"; exit 1; }
status=0
expect_fail() {  # NAME FILE LINE
  fresh
  printf '%s\n' "$3" >> "$tmp/t/$2"
  if bash "$here/check_layers.sh" "$tmp/t" >/dev/null; then echo "selftest: not caught: $1"; status=1
  else echo "selftest: caught: $1"; fi
}
expect_fail "data includes step (up)" core/data/tables.h '#include "core/step/estimate.h"'
expect_fail "base includes plan (up)" core/base/types.h '#include "core/plan/plan.h"'
expect_fail "a bare include" core/step/estimate.h '#include "tables.h"'
expect_fail "I/O in the core" core/serving/serving.h '#include <fstream>'
exit $status
