#!/usr/bin/env bash
# The nightly gate's false-positive check: runs workloads/nightly.toml twice in a row
# with the same build on this machine and compares the second run with the first. Nothing
# changed but the machine's noise, so compare must say "no regression" (exit 0); any
# other exit code means a default threshold sits inside this machine's run-to-run drift.
#
#   cargo build --release && bash benches/nightly_twice.sh
#
# Prints compare's Markdown and its exit code; about 3 minutes on 2 cores. The output of
# a run on this project's machine is in docs/nightly-noise.md.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=target/release/claimbench
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
out=$(mktemp -d /tmp/claimbench-nightly-twice-XXXXXX)
trap 'rm -rf "$out"' EXIT
for i in 1 2; do
  "$bin" run workloads/nightly.toml --quiet --results "$out/run$i" > /dev/null || {
    echo "run $i failed" >&2; exit 2; }
done
first=$(ls -d "$out"/run1/*/); second=$(ls -d "$out"/run2/*/)
"$bin" compare "$first" "$second"
code=$?
echo "compare exit code: $code (0: no regression)"
exit "$code"
