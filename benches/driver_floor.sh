#!/usr/bin/env bash
# Where claimbench's client CPU per claim goes beyond pgbench's: the driver or the harness.
# Runs the same claim (production's, claim-only, the statement pgbench_compare.sh sends)
# with pgbench, with examples/driver_floor.rs (tokio-postgres on claimbench's thread
# layout, nothing recorded) and with claimbench, on one throw-away server, each from a
# freshly seeded schema, the three rotating their order every round. Prints, per cell,
# the medians of claims/s and client CPU µs per claim for the three.
#
#   bash benches/driver_floor.sh [WORKERS...]      (default: 4 16; batches 1 and 10)
#   ROUNDS=4 SECONDS_PER_RUN=5 BATCHES="1 10" CLAIMBENCH_BIN=target/release/claimbench
#
# Needs: cargo build --release --example driver_floor, pgbench and initdb/pg_ctl.
set -euo pipefail
cd "$(dirname "$0")/.."
workers=("${@:-4 16}")
read -r -a workers <<<"${workers[*]}"
read -r -a batches <<<"${BATCHES:-1 10}"
seconds=${SECONDS_PER_RUN:-5}
rounds=${ROUNDS:-4}
bin=${CLAIMBENCH_BIN:-target/release/claimbench}
floor=${FLOOR_BIN:-target/release/examples/driver_floor}
[ -x "$bin" ] || { echo "build first: cargo build --release (or set CLAIMBENCH_BIN)" >&2; exit 2; }
[ -x "$floor" ] || { echo "build first: cargo build --release --example driver_floor" >&2; exit 2; }
source benches/throwaway_pg.sh
pgbench=$(command -v pgbench || echo "$bindir/pgbench")

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
pgbench_once() { # dir workers -> "claims_per_s us_per_claim"
  PGOPTIONS="-c search_path=claimbench" /usr/bin/time -f '%U %S' -o "$1/pg.cpu" \
    "$pgbench" -n -M prepared -c "$2" -j 2 -T "$seconds" -f "$1/claim.sql" "$url" > "$1/pg.out" 2>&1
  local n
  n=$(awk '/number of transactions actually processed/{print $NF}' "$1/pg.out" | cut -d/ -f1)
  awk -v n="$n" -v s="$seconds" '{printf "%.1f %.1f\n", n / s, ($1+$2)*1e6/n}' "$1/pg.cpu"
}
floor_once() { # dir workers batch
  "$floor" "$url" "$1/statement.sql" "$2" "$seconds" "$3" | awk '{print $2, $3}'
}
claimbench_once() { # dir
  rm -rf "$1/results"
  "$bin" run "$1/w.toml" --db "$url" --quiet --no-rerun --results "$1/results" > /dev/null
  jq -r '.cells[0].trials[0] | "\(.claims_per_s) \(.resources.client_cpu_us_per_claim)"' "$1"/results/*/run.json
}

echo "rounds per cell: $rounds ($seconds s each, the order rotating); medians of claims/s and client CPU µs per claim"
printf '%-8s %-6s %10s %10s %12s %10s %10s %12s\n' workers batch pgbench/s floor/s claimbench/s pgbench_us floor_us claimbench_us
for w in "${workers[@]}"; do
  for b in "${batches[@]}"; do
    work="$tmp/w${w}b${b}"
    mkdir -p "$work"
    sed -e "s/^workers = .*/workers = [$w]/" -e "s/^batch_sizes = .*/batch_sizes = [$b]/" \
        -e "s/^duration_s = .*/duration_s = $seconds/" -e "s/^warmup_s = .*/warmup_s = 0.0/" \
        workloads/claim-only.toml > "$work/w.toml"
    "$bin" sql --strategy production --batch "$b" | grep -v '^--' > "$work/statement.sql"
    { echo "\\set batch $b"
      sed -e "s/\$1/:batch/g" -e "s/\$2/'pgbench'/g" "$work/statement.sql" | tr '\n' ' '; echo; } > "$work/claim.sql"
    : > "$work/pg.txt"; : > "$work/fl.txt"; : > "$work/cb.txt"
    for r in $(seq 1 "$rounds"); do
      for k in 0 1 2; do
        "$bin" prepare "$work/w.toml" --db "$url" > /dev/null
        case $(( (k + r) % 3 )) in
          0) pgbench_once "$work" "$w" >> "$work/pg.txt" ;;
          1) floor_once "$work" "$w" "$b" >> "$work/fl.txt" ;;
          2) claimbench_once "$work" >> "$work/cb.txt" ;;
        esac
      done
    done
    col() { cut -d' ' -f"$2" "$work/$1.txt" | median; }
    printf '%-8s %-6s %10.0f %10.0f %12.0f %10.1f %10.1f %12.1f\n' "$w" "$b" \
      "$(col pg 1)" "$(col fl 1)" "$(col cb 1)" "$(col pg 2)" "$(col fl 2)" "$(col cb 2)"
  done
done
