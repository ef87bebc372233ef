#!/usr/bin/env bash
# Is the harness the bottleneck? Runs the production claim in claim-only mode (claim and
# drop) with claimbench and with pgbench, same SQL, same connection count, same freshly
# seeded schema, same throw-away server, one cell after the other, and prints claims/s
# and client CPU per claim for both.
#
#   bash benches/pgbench_compare.sh [WORKERS...]   (default: 4 16; batches 1 and 10)
#   ROUNDS=3 SECONDS_PER_RUN=5 BATCHES="1 10" are the defaults; rounds alternate which tool goes first.
#
# Needs the published build (cargo build --profile published), pgbench and PostgreSQL's initdb/pg_ctl.
set -euo pipefail
cd "$(dirname "$0")/.."
workers=("${@:-4 16}")
read -r -a workers <<<"${workers[*]}"
read -r -a batches <<<"${BATCHES:-1 10}"
seconds=${SECONDS_PER_RUN:-5}
rounds=${ROUNDS:-3}
# The published profile's build (fat LTO), or another one: CLAIMBENCH_BIN=target/release/claimbench.
bin=${CLAIMBENCH_BIN:-target/published/claimbench}
[ -x "$bin" ] || { echo "build first: cargo build --profile published (or set CLAIMBENCH_BIN)" >&2; exit 2; }
# A throw-away server with the embedded default's settings.
source benches/throwaway_pg.sh
pgbench=$(command -v pgbench || echo "$bindir/pgbench")

# One measurement each; both start from a freshly reset and seeded schema.
pgbench_once() { # dir workers -> "tps us_per_claim"
  "$bin" prepare "$1/w.toml" --db "$url" >/dev/null
  PGOPTIONS="-c search_path=claimbench" /usr/bin/time -f '%U %S' -o "$1/pgbench.cpu" \
    "$pgbench" -n -M prepared -c "$2" -j 2 -T "$seconds" -f "$1/claim.sql" "$url" > "$1/pgbench.out" 2>&1
  local tps xacts
  tps=$(awk '/^tps = /{print $3}' "$1/pgbench.out" | head -n1)
  xacts=$(awk '/number of transactions actually processed/{print $NF}' "$1/pgbench.out" | cut -d/ -f1)
  awk -v n="$xacts" -v tps="$tps" '{printf "%s %.1f\n", tps, ($1+$2)*1e6/n}' "$1/pgbench.cpu"
}
claimbench_once() { # dir -> "claims_per_s us_per_claim"
  rm -rf "$1/results"
  "$bin" run "$1/w.toml" --db "$url" --quiet --results "$1/results" > /dev/null
  jq -r '.cells[0].trials[0] | "\(.claims_per_s) \(.resources.client_cpu_us_per_claim)"' "$1"/results/*/run.json
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# A 95% bootstrap interval of the median paired ratio (rounds resampled with replacement;
# coarse with few rounds, which is the point: it shows what the rounds can tell apart).
paired_interval() { # cb.txt pg.txt -> "lo-hi"
  python3 - "$1" "$2" <<'PY'
import random, statistics, sys
ratios = [float(c.split()[0]) / float(p.split()[0]) for c, p in zip(open(sys.argv[1]), open(sys.argv[2]))]
rng = random.Random(1)
meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
print(f"{meds[50]:.2f}-{meds[1949]:.2f}")
PY
}
spread() { sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%.0f-%.0f", lo, hi}'; }

echo "rounds per cell: $rounds (order alternates); $seconds s each; medians, then min-max over rounds"
echo "ratio: of the two medians; paired: the median of each round's own ratio (the two runs of a round are back to back, so a drift of the host between rounds cancels)"
printf '%-8s %-6s %12s %12s %7s %7s %11s %16s %16s %14s %14s\n' workers batch pgbench_tps claimbench_cps ratio paired paired_95% pgbench_us/claim claimbench_us/claim pgbench_range claimbench_range
for w in "${workers[@]}"; do
  for b in "${batches[@]}"; do
    work="$tmp/w${w}b${b}"
    mkdir -p "$work"
    sed -e "s/^workers = .*/workers = [$w]/" -e "s/^batch_sizes = .*/batch_sizes = [$b]/" \
        -e "s/^duration_s = .*/duration_s = $seconds/" -e "s/^warmup_s = .*/warmup_s = 0.0/" \
        workloads/claim-only.toml > "$work/w.toml"
    # The exact statement claimbench prepares. The batch limit stays a parameter (pgbench
    # sends :variables as parameters under -M prepared), so both get the same generic
    # plan; the worker id becomes a literal, since pgbench variables cannot hold text.
    { echo "\\set batch $b"
      "$bin" sql --strategy production --batch "$b" | grep -v '^--' \
        | sed -e "s/\$1/:batch/g" -e "s/\$2/'pgbench'/g" | tr '\n' ' '
      echo; } > "$work/claim.sql"
    : > "$work/pg.txt"; : > "$work/cb.txt"
    for r in $(seq 1 "$rounds"); do
      if (( r % 2 )); then
        pgbench_once "$work" "$w" >> "$work/pg.txt"; claimbench_once "$work" >> "$work/cb.txt"
      else
        claimbench_once "$work" >> "$work/cb.txt"; pgbench_once "$work" "$w" >> "$work/pg.txt"
      fi
    done
    tps=$(cut -d' ' -f1 "$work/pg.txt" | median); pg_us=$(cut -d' ' -f2 "$work/pg.txt" | median)
    cps=$(cut -d' ' -f1 "$work/cb.txt" | median); cb_us=$(cut -d' ' -f2 "$work/cb.txt" | median)
    paired=$(paste -d' ' "$work/cb.txt" "$work/pg.txt" | awk '{print $1 / $3}' | median)
    printf '%-8s %-6s %12.0f %12.0f %7.2f %7.2f %11s %16.1f %16.1f %14s %14s\n' "$w" "$b" "$tps" "$cps" \
      "$(echo "$cps / $tps" | bc -l)" "$paired" "$(paired_interval "$work/cb.txt" "$work/pg.txt")" "$pg_us" "$cb_us" \
      "$(cut -d' ' -f1 "$work/pg.txt" | spread)" "$(cut -d' ' -f1 "$work/cb.txt" | spread)"
  done
done
