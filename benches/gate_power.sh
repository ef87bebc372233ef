#!/usr/bin/env bash
# The nightly gate's own error rates on this machine: how often it raises an alarm
# when nothing changed (A/A) and how often it catches a claim made slower by a known
# share (A/B), for the paired mode (one run, A and B interleaved: benches/gate-power/)
# and for the two-night `compare` (run i against run i+1).
#
# B's claim does `work` extra rows of server-side arithmetic per statement. A first
# paired run calibrates it: work = W0 on B gives claim p50 ratio r0, so a share x of
# claim time is work = W0 · x / (r0 − 1). The table reports the ratio each size really
# measured beside its target.
#
#   bash benches/gate_power.sh                 # 20 A/A runs, 10 A/B runs per size
#   bash benches/gate_power.sh 6 3             # fewer, for a first look
#   SIZES="0.10" bash benches/gate_power.sh    # the sizes to inject (default 0.05 0.10 0.20)
#
# About 80 s per paired run on 2 cores (12 rounds of two 2.3 s trials).
set -euo pipefail
cd "$(dirname "$0")/.."

aa=${1:-20}
ab=${2:-10}
sizes=${SIZES:-"0.05 0.10 0.20"}
w0=${W0:-3000}
cargo build --release --quiet
out=${GATE_POWER_OUT:-$(mktemp -d)}
mkdir -p "$out"
# A copy: a rebuild during the hour this takes must not change the binary under test.
cp target/release/claimbench "$out/claimbench"
bin=$out/claimbench
cp benches/gate-power/claim.sql "$out/"
echo "runs in $out" >&2

# run NAME WORK: one paired run with B's work set; prints its exit code (0 or 4).
run() {
    sed "/^\[strategies.candidate\]/,/^params/ s/^params = .*/params = { work = $2 }/" \
        benches/gate-power/gate-power.toml >"$out/$1.toml"
    local code=0
    "$bin" run "$out/$1.toml" --quiet --results "$out/$1" >/dev/null 2>"$out/$1.err" || code=$?
    if [ "$code" != 0 ] && [ "$code" != 4 ]; then
        echo "run $1 failed (exit $code):" >&2
        cat "$out/$1.err" >&2
        exit 1
    fi
    echo "$code"
}

# ratio NAME METRIC: B/A of METRIC in run NAME's paired.json.
ratio() {
    python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
m = [m for m in p["cells"][0]["metrics"] if m["metric"] == sys.argv[2]][0]
print(m["ratio"]["ratio"])' "$(echo "$out/$1"/*/paired.json)" "$2"
}

# compare BASE CUR: 1 when the two-night compare calls a regression, else 0.
compare() {
    local code=0
    "$bin" compare --force "$(echo "$out/$1"/*/run.json)" "$(echo "$out/$2"/*/run.json)" \
        >/dev/null 2>&1 || code=$?
    case $code in
    0) echo 0 ;;
    4) echo 1 ;;
    *) echo "compare $1 $2 failed (exit $code)" >&2; exit 1 ;;
    esac
}

run calibrate "$w0" >/dev/null
r0=$(ratio calibrate claim_p50)
echo "calibration: work = $w0 gives claim p50 ×$r0" >&2

rows=()
alarms=0
for i in $(seq 1 "$aa"); do
    [ "$(run "aa$i" 0)" = 4 ] && alarms=$((alarms + 1))
    echo "A/A $i of $aa: $alarms alarms so far" >&2
done
nights=0
for i in $(seq 2 "$aa"); do
    nights=$((nights + $(compare "aa$((i - 1))" "aa$i")))
done
rows+=("| none (A/A) | – | $aa | $alarms of $aa | $((aa - 1)) | $nights of $((aa - 1)) |")

for x in $sizes; do
    work=$(python3 -c "import sys; print(max(1, round($w0 * $x / ($r0 - 1))))")
    caught=0
    measured=()
    for i in $(seq 1 "$ab"); do
        name="ab${x}_$i"
        [ "$(run "$name" "$work")" = 4 ] && caught=$((caught + 1))
        measured+=("$(ratio "$name" claim_p50)")
        echo "A/B $x, $i of $ab: caught $caught" >&2
    done
    mean=$(python3 -c "import sys, statistics; print(f'{statistics.geometric_mean(map(float, sys.argv[1:])):.3f}')" "${measured[@]}")
    nights=0
    n=$((ab < aa ? ab : aa))
    for i in $(seq 1 "$n"); do
        nights=$((nights + $(compare "aa$i" "ab${x}_$i")))
    done
    rows+=("| $x of claim time (work = $work) | ×$mean | $ab | $caught of $ab | $n | $nights of $n |")
done

echo "| injected | claim p50 B/A measured | paired runs | paired: alarms | night pairs | two-night compare: alarms |"
echo "|---|--:|--:|--:|--:|--:|"
printf '%s\n' "${rows[@]}"
