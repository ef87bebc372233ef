#!/usr/bin/env bash
# The harness's memory against the length of a run: one cell of production fed by
# producers (benches/memory-vs-length.toml) for each trial length given, on the
# embedded PostgreSQL, and the bytes each extra job costs over the shortest run. The
# peak resident set is claimbench's own process (VmHWM, read from /proc while it runs;
# the embedded server is another process). A harness whose memory is bounded by what
# is in flight shows a flat column; one that keeps every job's events grows with them.
#
#   bash benches/memory_vs_length.sh                      # 10, 30 and 60 s
#   bash benches/memory_vs_length.sh 10 60 300            # lengths in seconds
#   RATE=1500 bash benches/memory_vs_length.sh 60 900     # producers at 1,500 jobs/s
#
# As shipped the producers offer 12,000 jobs/s, more than most hosts complete: the
# backlog grows all trial and the rate falls, so a long run is the most jobs the host
# got through. RATE at what the host sustains (surge.toml's steady phase shows one)
# keeps the rate the same for every length.
set -euo pipefail
cd "$(dirname "$0")/.."

lengths=("$@")
[ ${#lengths[@]} -gt 0 ] || lengths=(10 30 60)
cargo build --release --quiet
bin=target/release/claimbench
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

printf '| trial s | jobs completed | max RSS MB | bytes per job over the first |\n|--:|--:|--:|--:|\n'
first_rss=""
first_jobs=""
for s in "${lengths[@]}"; do
    sed -e "s/^duration_s = .*/duration_s = $s.0/" \
        -e "s/^rate_per_s = .*/rate_per_s = ${RATE:-12000}/" benches/memory-vs-length.toml > "$out/w.toml"
    "$bin" run "$out/w.toml" --quiet --results "$out/r$s" >/dev/null 2>"$out/err" &
    pid=$!
    rss_kb=0
    while kill -0 "$pid" 2>/dev/null; do
        hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
        if [ -n "$hwm" ] && [ "$hwm" -gt "$rss_kb" ]; then rss_kb=$hwm; fi
        sleep 0.2
    done
    wait "$pid" || { cat "$out/err" >&2; exit 1; }
    jobs=$(python3 -c "import json,glob; r=json.load(open(glob.glob('$out/r$s/*/run.json')[0])); print(sum(t['counts']['jobs_completed'] for c in r['cells'] for t in c['trials']))")
    per_job="–"
    if [ -n "$first_rss" ] && [ "$jobs" -gt "$first_jobs" ]; then
        per_job=$(( (rss_kb - first_rss) * 1024 / (jobs - first_jobs) ))
    else
        first_rss=$rss_kb
        first_jobs=$jobs
    fi
    printf '| %s | %s | %.1f | %s |\n' "$s" "$jobs" "$(echo "$rss_kb / 1024" | bc -l)" "$per_job"
done
