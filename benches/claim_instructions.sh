#!/usr/bin/env bash
# Client instructions per claim, counted by callgrind: the same count on a busy host or a
# quiet one, so it can be compared across commits anywhere (pgbench_compare.sh gives the
# side-by-side CPU and throughput on this host).
#
#   bash benches/claim_instructions.sh            (batches 1 and 10, 4 workers)
#   BATCHES="1 10" WORKERS=4 SHORT_S=2 LONG_S=6 CLAIMBENCH_BIN=target/release/claimbench
#
# Production's claim in claim-only mode (claim and drop, as pgbench_compare.sh runs it),
# on a throw-away PostgreSQL. Each batch size runs twice under callgrind, for SHORT_S and
# for LONG_S seconds; the difference of the two runs' instructions over the difference of
# their claims is what one more claim costs the client (every thread: workers, the
# ledger's tally, the runtime), with start-up, reset, seeding and the report cancelled
# out. Prints instructions per claim and per row, and writes the long run's profile
# (callgrind_annotate reads it) beside the numbers in $OUT (default: a temporary folder).
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a batches <<<"${BATCHES:-1 10}"
workers=${WORKERS:-4}
short_s=${SHORT_S:-2}
long_s=${LONG_S:-6}
bin=${CLAIMBENCH_BIN:-target/release/claimbench}
[ -x "$bin" ] || { echo "build first: cargo build --release (or set CLAIMBENCH_BIN)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 2; }
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }
source benches/throwaway_pg.sh
out=${OUT:-$tmp/out}
mkdir -p "$out"

# One run under callgrind: "instructions claims". Never a second trial: under callgrind
# every trial looks disturbed (the scheduling delay is valgrind's), and a rerun's
# instructions would be in the profile but its first run's claims nowhere in run.json.
counted() { # batch seconds
  local w="$tmp/b$1-s$2"
  mkdir -p "$w"
  sed -e "s/^workers = .*/workers = [$workers]/" -e "s/^batch_sizes = .*/batch_sizes = [$1]/" \
      -e "s/^duration_s = .*/duration_s = $2/" -e "s/^warmup_s = .*/warmup_s = 0.0/" \
      -e "s/^backlog = .*/backlog = 300000/" workloads/claim-only.toml > "$w/w.toml"
  valgrind --tool=callgrind --callgrind-out-file="$w/callgrind.out" \
    "$bin" run "$w/w.toml" --db "$url" --quiet --no-rerun --results "$w/results" >/dev/null 2>"$w/valgrind.log"
  local ir claims
  ir=$(awk '/^(summary|totals):/ {print $2; exit}' "$w/callgrind.out")
  claims=$(jq -r '.cells[0].trials[0].counts.claim_calls' "$w"/results/*/run.json)
  echo "$ir $claims"
}

# Inclusive instructions of one function in the long run's profile, per claim.
inclusive() { # profile function claims
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null \
    | awk -v f="$2" -v n="$3" '!done && index($0, f) { gsub(",", "", $1); printf "%.0f", $1 / n; done = 1 }'
}

# instr/claim (the marginal count of the whole client) moves by about 15 % between two
# runs of one build: the runs differ in how many events each wake-up finds. The worker's
# loop and the tally's reading, inclusive, per claim of the long run, move by a few
# percent: compare builds by those. (Until 2026-12-07 the columns were the worker's
# round and `Tally::take`; the round is now inlined into the worker's loop, and the
# tally thread reads with `Tally::read_staged`, which inlines into its thread and
# reads through `Tally::read_before`: the column is that, since the same day.)
printf '%-6s %-8s %14s %14s %12s %12s %14s %14s\n' batch workers claims_short claims_long instr/claim instr/row worker_loop tally_read
for b in "${batches[@]}"; do
  read -r ir1 c1 < <(counted "$b" "$short_s")
  read -r ir2 c2 < <(counted "$b" "$long_s")
  profile="$out/callgrind.b$b.out"
  cp "$tmp/b$b-s$long_s/callgrind.out" "$profile"
  round=$(inclusive "$profile" "runner::worker::run::" "$c2")
  take=$(inclusive "$profile" "Tally::read_before" "$c2")
  python3 - "$b" "$workers" "$ir1" "$c1" "$ir2" "$c2" "${round:-0}" "${take:-0}" <<'PY'
import sys
b, w, ir1, c1, ir2, c2, round_, take = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
per = (ir2 - ir1) / (c2 - c1) if c2 > c1 else float("nan")
print(f"{b:<6} {w:<8} {c1:>14} {c2:>14} {per:>12.0f} {per / int(b):>12.0f} {round_:>14} {take:>14}")
PY
done
echo "profiles of the long runs: $out (callgrind_annotate --inclusive=yes FILE | head -60)"
