#!/usr/bin/env bash
# What the exact production claim costs against the windowed one it replaced (issue 9):
# pgbench runs both statements in one run, each transaction picking one of the two at
# random, so both meet the same server, cache and machine noise. Each claim runs inside
# BEGIN ... ROLLBACK, so the backlog stays as seeded and every claim sees the same state.
#
#   bash benches/claim_cost.sh [WORKERS...]      (default: 1 4 16)
#   DB=postgres://... (default: the local test server), WORKLOAD (default benches/claim-cost.toml),
#   LAYOUT (default fetch-order), SECONDS_PER_RUN (default 10), BATCH (default 10).
#
# The windowed statement is read from git history (the commit before the fix), so the
# comparison is reproducible without keeping the old SQL in the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
workers=("${@:-1 4 16}")
read -r -a workers <<<"${workers[*]}"
db=${DB:-postgres://postgres@127.0.0.1:5432/test}
workload=${WORKLOAD:-benches/claim-cost.toml}
layout=${LAYOUT:-fetch-order}
seconds=${SECONDS_PER_RUN:-10}
batch=${BATCH:-10}
bin=target/release/claimbench
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sql_body() { grep -v '^--' | sed '/^$/d'; }
{ echo "\\set batch $batch"; echo "\\set window $(( batch * 4 > 16 ? batch * 4 : 16 ))"; echo "BEGIN;"
  git show 562907b:migrations/postgres/strategies/production.sql | sql_body \
    | sed 's/\$1/:batch/g; s/\$2/'"'w'"'/g; s/\$3/:window/g'; echo ";"; echo "ROLLBACK;"; } > "$tmp/windowed.sql"
{ echo "\\set batch $batch"; echo "BEGIN;"
  sql_body < migrations/postgres/strategies/production.sql \
    | sed 's/\$1/:batch/g; s/\$2/'"'w'"'/g'; echo ";"; echo "ROLLBACK;"; } > "$tmp/exact.sql"

"$bin" prepare "$workload" --db "$db" --layout "$layout" --schema claimbench_claim_cost >/dev/null
echo "$workload, layout $layout, batch $batch, $seconds s per worker count; latency per claim, ms"
printf '%-8s %12s %12s %8s\n' workers windowed_ms exact_ms ratio
for w in "${workers[@]}"; do
  PGOPTIONS="-c search_path=claimbench_claim_cost" pgbench -n -M prepared -c "$w" -j "$(( w < 2 ? 1 : 2 ))" \
    -T "$seconds" -f "$tmp/windowed.sql" -f "$tmp/exact.sql" "$db" > "$tmp/out" 2>&1 \
    || { cat "$tmp/out" >&2; exit 1; }
  awk -v w="$w" '/^SQL script 1/{s=1} /^SQL script 2/{s=2}
       /^ - latency average/{lat[s]=$5}
       END {printf "%-8s %12.3f %12.3f %8.2f\n", w, lat[1], lat[2], lat[2]/lat[1]}' "$tmp/out"
done
