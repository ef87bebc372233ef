#!/usr/bin/env bash
# Runs every shipped scenario workload on the embedded PostgreSQL (release build) and
# checks that each still shows its headline finding, so a later change cannot lose one
# silently. Too long for CI (about 12 minutes on 2 cores); run it before changing a
# scenario, the verdict or the runner:
#
#   bash benches/scenario_findings.sh            # every scenario
#   bash benches/scenario_findings.sh faults     # the ones named
#
# A finding is a regular expression (grep -E) that must match summary.md: the verdict's
# sentence where the verdict states the finding, else the table row that shows it. Each
# scenario also has the exit code it must end with (techniques.toml fails by design: it
# over-claims). Prints one line per scenario and exits 1 when any finding is missing.
set -uo pipefail
cd "$(dirname "$0")/.."

cargo build --release --quiet || exit 2
bin=target/release/claimbench
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# name | exit code | finding (ERE over summary.md) | what it means
scenarios=(
    "long-transaction|0|^- a snapshot held open from 5 s to 11 s \(saturated-held against saturated\): completions [0-9]+/s against [0-9]+/s in the same seconds without it \(0\.[0-9]+x\)|saturated: a held snapshot costs completions, as a ratio to the same seconds without it"
    "long-transaction|0|\(saturated-held against saturated\).*the claim sampled during the hold ran [^;]* \((1\.[5-9][0-9]|[2-9]\.[0-9]{2}|[1-9][0-9]+\.[0-9]{2})x\)|saturated: one claim during the hold costs at least 1.5x the same claim without it"
    "long-transaction|0|\(arrivals-held against arrivals\).*the claim sampled during the hold ran [^;]* \((1\.[2-9][0-9]|[2-9]\.[0-9]{2}|[1-9][0-9]+\.[0-9]{2})x\)|arrivals: the claim costs more during the hold too"
    "noisy-neighbour|0|^\| [^|]*\| postgres \| production \| [^|]*\| bulk |the Per queue table shows the capped queue apart"
    "lease-expiry|0|^- production: 0 duplicates|lease expiry: no duplicate claims (the rescue released the job)"
    "lease-expiry|0|\| production \| fetch-order \| [0-9]+ \| [0-9]+ \| [0-9]+ \|.*\| 0 \| [1-9][0-9]*/[1-9][0-9]* \||lease expiry: yet duplicate executions, counted by ledger and effects alike"
    "lease-expiry-heartbeat|0|\| production \| fetch-order \| [0-9]+ \| [0-9]+ \| [0-9]+ \|.*\| 0 \| 0/0 \| 0 \||heartbeats: no duplicate executions"
    "techniques|1|^- over-claimed: in-subquery at 8 workers, batch 10 in nested-loops: [0-9]+ claims returned more rows than the batch asked for|the forced nested loop over-claims, said first in the verdict"
    "techniques|1|^- over-claimed: .*; its plan: .*Nested Loop|and the plan that did it is shown"
    "history|0|\| paused|the paused history block is measured against its clean table"
    "priorities|0|^\| [^|]*\| [^|]*\| [^|]*\| low |the Per queue table shows the low queue"
    "idle|0|notify|notify is measured beside polling"
    "completion|0|batched|batched completion is measured beside per-job"
    "faults|0|^\| faults|the Faults table reports what was injected"
    "faults|0|\| production \| fetch-order \|([^|]*\|){11} 0 \||0 lost jobs under every fault"
    "restart|0|server restarted at|the restart is recorded in the Faults table"
)

failed=0
declare -A ran code
for s in "${scenarios[@]}"; do
    IFS='|' read -r name expect_code finding meaning <<<"$s"
    if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
    if [ -z "${ran[$name]:-}" ]; then
        echo "running $name ..." >&2
        "$bin" run "workloads/$name.toml" --quiet --results "$out/$name" >"$out/$name.log" 2>&1
        code[$name]=$?
        ran[$name]=$(ls -d "$out/$name"/*/ 2>/dev/null | head -n1)
    fi
    summary="${ran[$name]}summary.md"
    if [ "${code[$name]}" != "$expect_code" ]; then
        echo "FAIL $name: exit ${code[$name]}, expected $expect_code ($meaning); see the log below"
        tail -n 5 "$out/$name.log"
        failed=1
    elif grep -Eq -- "$finding" "$summary"; then
        echo "ok   $name: $meaning"
        grep -Em1 -- "$finding" "$summary" | cut -c1-240 | sed 's/^/       /'
    else
        echo "FAIL $name: $meaning: no line matches /$finding/"
        failed=1
    fi
done
exit $failed
