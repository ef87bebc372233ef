#!/usr/bin/env bash
# Two (or more) claimbench builds side by side on the claim path alone: the same
# throw-away server with the embedded default's settings, the same freshly seeded schema
# before every trial, the builds' order rotating each round. Prints each trial's claims/s
# and client CPU per claim, then the means per build. For telling whether a change to the
# hot path helped, on a host too noisy for one run of each (docs/harness-overhead.md).
#
#   bash benches/compare_builds.sh BUILD_A BUILD_B [...]
#   WORKERS=4 BATCH=10 ROUNDS=6 SECONDS_PER_RUN=5 WORKLOAD=workloads/claim-only.toml are
#   the defaults; WORKLOAD=workloads/completion.toml adds the lifecycle (start, effect,
#   complete) to every claimed job (its first cell: per-job completion).
#
# A build is a claimbench binary: copy target/release/claimbench aside before the change.
set -euo pipefail
cd "$(dirname "$0")/.."
(( $# >= 2 )) || { sed -n 2,10p "$0" >&2; exit 2; }
builds=("$@")
for b in "${builds[@]}"; do [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 2; }; done
w=${WORKERS:-4}; batch=${BATCH:-10}; rounds=${ROUNDS:-6}; seconds=${SECONDS_PER_RUN:-5}
source benches/throwaway_pg.sh
sed -e "s/^workers = .*/workers = [$w]/" -e "s/^batch_sizes = .*/batch_sizes = [$batch]/" \
    -e "s/^duration_s = .*/duration_s = $seconds/" -e "s/^warmup_s = .*/warmup_s = 0.0/" \
    "${WORKLOAD:-workloads/claim-only.toml}" > "$tmp/w.toml"

echo "$w workers, batch $batch, $rounds rounds of $seconds s; per trial: build claims/s us_cpu/claim"
n=${#builds[@]}
for r in $(seq 1 "$rounds"); do
  for k in $(seq 0 $((n - 1))); do
    b=${builds[$(((k + r) % n))]}
    # Every build seeds with the first one, so the schema is the same whatever changed.
    "${builds[0]}" prepare "$tmp/w.toml" --db "$url" >/dev/null
    rm -rf "$tmp/results"
    "$b" run "$tmp/w.toml" --db "$url" --quiet --results "$tmp/results" >/dev/null
    echo "$b $(jq -r '.cells[0].trials[0] | "\(.claims_per_s) \(.resources.client_cpu_us_per_claim)"' "$tmp"/results/*/run.json)"
  done
done | tee "$tmp/trials" | awk '{printf "%s %.0f %.1f\n", $1, $2, $3}'
echo "means:"
awk '{n[$1]++; c[$1]+=$2; u[$1]+=$3} END {for (b in n) printf "%s %.0f claims/s %.1f us/claim\n", b, c[b]/n[b], u[b]/n[b]}' "$tmp/trials"
