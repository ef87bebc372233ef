#!/usr/bin/env bash
# Runs every shipped scenario workload on the embedded PostgreSQL (the Redis ones also
# on the embedded redis-server, galera.toml on the
# Galera cluster it starts; release build) and
# checks that each still shows its headline finding, so a later change cannot lose one
# silently. Too long for CI (about 20 minutes on 2 cores); run it before changing a
# scenario, the verdict or the runner:
#
#   bash benches/scenario_findings.sh            # every scenario
#   bash benches/scenario_findings.sh faults     # the ones named
#
# A finding is a regular expression (grep -E) that must match summary.md: the verdict's
# sentence where the verdict states the finding ("verdict:"), else the table row that
# shows it ("table:"; those findings are not yet sentences of the verdict). Each
# scenario also has the exit code it must end with (techniques.toml fails by design: it
# over-claims). Prints one line per scenario and exits 1 when any finding is missing.
# soak.toml runs for an hour: it runs only when named (`scenario_findings.sh soak`).
# alternatives.toml's RabbitMQ block runs on a server given by URL, with a restart
# command of yours (claimbench restarts no server it did not start); its finding is
# checked only with both set, as scenario `alternatives-rabbitmq`:
#
#   CLAIMBENCH_AMQP_URL='amqp://guest:guest@127.0.0.1:5672/%2f' \
#   CLAIMBENCH_AMQP_RESTART='rabbitmqctl stop_app && rabbitmqctl start_app' \
#       bash benches/scenario_findings.sh alternatives-rabbitmq
set -uo pipefail
cd "$(dirname "$0")/.."

cargo build --release --quiet || exit 2
bin=target/release/claimbench
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# name @@ exit code @@ finding (ERE over summary.md) @@ what it means
scenarios=(
    "long-transaction@@0@@^- a snapshot held open from 5 s to 11 s \(saturated-held against saturated\):.*the claim sampled during the hold touched [0-9]+ buffers against [0-9]+ \((1\.[1-9][0-9]|[2-9]\.[0-9]{2}|[1-9][0-9]+\.[0-9]{2})x\)@@verdict: saturated, a claim during the hold touches at least 1.1x the buffers of the same claim without it"
    "long-transaction@@0@@^- a snapshot held open from 5 s to 11 s \(arrivals-held against arrivals\):.*the claim sampled during the hold touched [0-9]+ buffers against [0-9]+ \((1\.[3-9][0-9]|[2-9]\.[0-9]{2}|[1-9][0-9]+\.[0-9]{2})x\)@@verdict: at 800/s, a claim during the hold touches at least 1.3x the buffers"
    "noisy-neighbour@@0@@^- per queue, production at 8 workers: .bulk. falls behind .* while .orders., .emails. keep up@@verdict: the capped bulk queue falls behind while the others keep up"
    "lease-expiry@@0@@^- production at 8 workers: 0 duplicate claims, yet [1-9][0-9]* job runs overlapped@@verdict: no duplicate claims, yet duplicate executions"
    "lease-expiry-heartbeat@@0@@^\| – \| postgres \| production \| fetch-order \|( [^|]*\|){9} 0 \| 0/0 \| 0 \|@@table: with heartbeats, no duplicate claims, no duplicate executions, nothing lost"
    "techniques@@1@@^- over-claimed: in-subquery at 8 workers, batch 10 in nested-loops: [0-9]+ claims returned more rows than the batch asked for@@verdict: the forced nested loop over-claims (exit 1 by design)"
    "techniques@@1@@^- over-claimed: .*; its plan: .*Nested Loop@@verdict: and names the plan that did it"
    "techniques@@1@@^\| default-plan \| postgres \| version-cas \| fetch-order \| 8 \| 10 \| [0-9]+ \| 3\.[0-9]{2} \|@@table: version-cas's one-statement compare-and-set costs about 3 transactions per job at batch 10"
    "techniques@@1@@^\| default-plan \| postgres \| conditional \| fetch-order \| 8 \| 10 \| [0-9]+ \| [5-7]\.[0-9]{2} \|@@table: conditional's UPDATE per candidate costs about 6"
    "techniques@@1@@^\| offset \| postgres \| offset-start-64 \| fetch-order \| 16 \| 1 \|( [^|]*\|){5} ([3-9][0-9]|[1-9][0-9]{2}) \|@@table: a claim from a random start among the first 64 passes over 30 or more older jobs (p99)"
    "techniques@@1@@^\| offset \| postgres \| production \| fetch-order \| 16 \| 1 \|( [^|]*\|){5} ([0-9]|[1-2][0-9]) \|@@table: production's head-first claim passes over fewer than 30 (about the claims in flight)"
    "shard-moves@@0@@^- shard moves, sharded-read-write at 8 workers in moves, 3 moves: [1-9][0-9]* duplicate claims, all inside the windows in which a moved shard had two owners@@verdict: a sharded poller's plain read then write duplicates only while a moved shard has two owners"
    "shard-moves@@0@@^- shard moves, sharded at 8 workers in moves, 3 moves: 0 duplicate claims; [1-9][0-9]* lost races, all inside the windows@@verdict: the conditional claim turns the same collisions into lost races, inside the windows only"
    "shard-moves@@0@@^- shard moves, sharded-skip-locked at 8 workers in moves, 3 moves: 0 duplicate claims\.@@verdict: the skip-locked claim inside the shards neither duplicates nor loses races"
    "shard-moves@@0@@^- per queue, sharded at 8 workers in hot-shard: .hot. falls behind@@verdict: under arrivals the hot shard's one owner falls behind"
    "shard-moves@@0@@^- production with 8 workers keeps up with [0-9]+ arrivals/s@@verdict: production's claim over all rows keeps up at the same multiple of its one-worker rate"
    "history@@0@@^\| paused-200k \| postgres \| production \| fetch-order \|( [^|]*\|){5} [0-9]{3,}\.[0-9]+ \|@@table: 200k paused rows push production's claim p50 past 100 ms"
    "history@@0@@^\| clean \| postgres \| production \| fetch-order \|( [^|]*\|){5} [0-9]\.[0-9]+ \|@@table: on a clean table the same claim's p50 stays under 10 ms"
    "priorities@@0@@^- per queue, production at 4 workers in at-[0-9]+: .low. falls behind .* while .high. keeps up@@verdict: low priority starves under high-priority arrivals"
    "idle@@0@@^\| notify @2/s \|( [^|]*\|){10} [0-9]{1,2}\.[0-9]+ \|@@table: notify sees a job within tens of ms"
    "idle@@0@@^\| poll-500ms @2/s \|( [^|]*\|){10} [0-9]{3,}\.[0-9]+ \|@@table: polling with a 500 ms cap makes jobs wait over 100 ms"
    "completion@@0@@^\| batched@@table: batched completion is measured beside per-job"
    "faults@@0@@kills at [0-9., ]+ s \([1-9][0-9]* connections\)@@table: the Faults table reports the kills and the connections the server ended"
    "faults@@0@@^\| – @400/s \| postgres \| production \| fetch-order \|([^|]*\|){11} 0 \|@@table: 0 lost jobs under every fault"
    "restart@@0@@server restarted at [0-9.]+ s \(back in@@table: the restart and its recovery are recorded"
    "sync-commit@@0@@^- synchronous_commit against off with claimbench_standby as a synchronous standby, production at 1 worker, batch 10: .*; on [+-][0-9.]+ ms on claim p99 \([^)]*\) and [1-9][0-9]*% of throughput.*; remote_apply [+-][0-9.]+ ms on claim p99 \([^)]*\) and [1-9][0-9]*% of throughput@@verdict: at one worker, on and remote_apply each cost throughput against off on a synchronous standby"
    "failover@@0@@^- failover under production at 4 workers in async \(synchronous_commit = local\), 1 trial: the new primary lacked [0-9]+ acknowledged completions? \([0-9]+ of them ran again\), [0-9]+ effects?, [0-9]+ claims? and [0-9]+ inserts?@@verdict: an immediate failover with commits acknowledged before the standby has them loses acknowledged work (the counts may be 0 in one class, not in all: the test on a 20 ms link holds the total above 0)"
    "galera@@0@@^- production: with 6 workers spread over 3 Galera nodes at batch 1, [1-9][0-9]*% of its claim attempts \([0-9]+ of [0-9]+\) were aborted across nodes and retried .* and 0 duplicate claims: certification let one claim of each row commit; all workers on one node: [0-9]+ jobs/s against [0-9]+ spread@@verdict: spread over Galera nodes, production's claims are aborted across nodes and retried, never duplicated; single-writer beside it"
    "galera@@0@@^- naive: with 6 workers spread over 3 Galera nodes at batch 1, .*; [1-9][0-9]* duplicate claims, as on one server@@verdict: naive still duplicates on Galera"
    "failover@@0@@^- failover under production at 4 workers in sync \(synchronous_commit = on\), 1 trial: the new primary had every acknowledged claim, effect, completion and insert@@verdict: with the standby synchronous and synchronous_commit = on, nothing acknowledged is lost"
    "durability@@0@@^- production durability \(fsync, synchronous_commit, full_page_writes on; production\) against the embedded default's shortcuts \(shortcuts\), production at 1 worker, batch 1: [+][0-9.]+ ms on claim p99 .* and [1-9][0-9]*% of throughput@@verdict: at one worker, production durability costs claim p99 and throughput against the shortcuts"
    "pooler@@0@@^- server pool for production fetch-order \\[sizing\\] at batch 5: 16 workers need [2-8] server connections .*2 → 1: claim p99 ×[0-9.]+, -[1-9][0-9]* % jobs/s, [0-9.]+ ms pool wait@@verdict: 16 workers need more than one server connection, and one costs them throughput and pool wait"
    "pooler@@0@@^\\| sizing pool 1 \\| postgres \\| production \\| fetch-order \\| 16 \\| 5 \\| 1 \\|( [^|]*\\|){3} 1 \\| 1[0-5] \\|@@table: on a pool of one, never more than one server connection serving and up to 15 of 16 workers waiting"
    "table-or-broker@@0@@^- redis-streams on redis against production on postgres, 16 workers at batch 10: [0-9]+ against [0-9]+ jobs/s \\([0-9.]+x\\), claim p99 [^;]+; duplicates 0 against 0 \\([^)]*\\), lost 0 against 0\\.@@verdict: the stream is set against the SQL claim at the same pool, and neither duplicates nor loses a job"
    "alternatives@@0@@^- redis-streams on redis against production on postgres, 16 workers at batch 1: [0-9]+ against [0-9]+ jobs/s \\([0-9.]+x\\), claim p99 [^;]+; duplicates [0-9]+ against [1-9][0-9]* \\(runs that outlived their lease [1-9][0-9]* against [1-9][0-9]*\\), lost 0 against 0\\.@@verdict: at 16 workers handlers that hang past the lease outlive it on the stream and on the table alike; the table runs those jobs again within the trial (duplicates), the stream sends them to its tail; neither loses a job"
    "alternatives@@0@@^- jetstream on nats against production on postgres, 16 workers at batch 1: [0-9]+ against [0-9]+ jobs/s \\([0-9.]+x\\), claim p99 [^;]+; duplicates [1-9][0-9]* against [0-9]+ \\(runs that outlived their lease [0-9]+ against [0-9]+\\), lost 0 against 0\\.@@verdict: JetStream's server delivers a job held past AckWait again by itself, and a restart brings back messages whose acknowledgement it had confirmed: its duplicates are not 0 at 16 workers, and it loses no job"
    "alternatives-rabbitmq@@0@@^- rabbitmq on rabbitmq against production on postgres, 16 workers at batch 1: [0-9]+ against [0-9]+ jobs/s \\([0-9.]+x\\), claim p99 [^;]+; duplicates [1-9][0-9]* against [0-9]+ \\(runs that outlived their lease 0 against [0-9]+\\), lost 0 against 0\\.@@verdict: RabbitMQ takes nothing back from a handler that hangs past the lease (no run outlives a lease it does not have), its duplicates are lost connections' deliveries handed back at once, and it loses no job"
    "alternatives@@0@@^- redis-cas on redis against production on postgres, 16 workers at batch 1: .*lost 0 against 0\\. Its compare-and-set lost [1-9][0-9]* races@@verdict: the key-value compare-and-set loses races at 16 workers, and no job"
    "alternatives@@0@@^- lock-service on postgres against production on postgres, 16 workers at batch 1: [0-9]+ against [0-9]+ jobs/s \\(0\\.[0-9]+x\\), .*lost 0 against 0\\. Its lock service refused [1-9][0-9]* leases@@verdict: at 16 workers the lock service refuses leases to workers that read the same head, completes fewer jobs than production, and loses none"
    "alternatives@@0@@^\\| lock \\| postgres \\| lock-service \\| fetch-order \\| 16 \\| 10 \\| 1 \\| [^|]*lock service restarted empty at 2\\.0 s \\(back in@@table: the lock service's own Redis restarts empty mid-trial in the lock-service cells, and the verdict's lost 0 holds across it"
    "alternatives@@0@@^\\| kv \\| redis \\| redis-cas \\| hash-by-due \\| 16 \\| 10 \\| 1 \\| [^|]*server restarted at 4\\.5 s \\(back in@@table: the embedded Redis is killed and restarted mid-trial (its append-only file reloaded), and the verdict's lost 0 holds across it"
    "lock-service@@0@@^- lock-service in in-place on postgres, 2 of 2 cells \\(at 16, 32 workers\\): 0 duplicate claims, yet [1-9][0-9]*–[1-9][0-9]* job runs per cell .*\\(a stale read\\)\\.@@verdict: under update in place, with no fault, the lock service runs finished jobs again through stale reads at 16 and 32 workers"
    "lock-service@@0@@^\\| archive \\| postgres \\| lock-service \\| fetch-order \\| 32 \\| 1 \\|( [^|]*\\|){7} 0 \\| 0/0 \\| 0 \\|@@table: under the archive move the same claim runs no job twice"
    "cleanup@@0@@^\\| capacity \\| postgres \\| production \\| fetch-order \\| 8 \\| 10 \\|( [^|]*\\|){3} [0-9.]+ / [0-9.]+ \\(×(1\\.[2-9][0-9]|[2-9]\\.[0-9]{2}|[1-9][0-9]+\\.[0-9]{2})\\) \\|@@table: clearing a day of archive history beside workers at capacity costs their claim p99 at least 1.2x in the seconds the job runs"
    "cleanup@@0@@^\\| steady @[0-9]+/s \\| postgres \\| production \\| fetch-order \\| 8 \\| 10 \\|( [^|]*\\|){6} kept up \\|@@table: at half the capacity the job clears the history and keeps pace with the completions"
    "storage@@0@@^- storage models, production at 8 workers, batch 10 on fetch-order \\(postgres\\), through the pin against each one's steady phase: archive-move jobs/s ×0\\.[0-9]{2}, .*; update-in-place jobs/s ×[0-9.]+, .*; delete jobs/s ×[0-9.]+, .*; partitioned jobs/s ×[0-9.]+, .*; [a-z, -]+ degraded least(: it carried|, within 10 % of each other: they carried) [0-9–]+ % of the [0-9]+ jobs/s offered through the pin@@verdict: through a held horizon all four models are read against their own steady phase, and the verdict names the one (or those within 10 % of it) that carried most of the same offered rate"
    "storage@@0@@^- storage models, production at 8 workers, batch 10 on (fetch-order|pending-partial) \\(postgres\\), .*update-in-place jobs/s [^;]*\\(×(1\\.[2-9]|[2-9]\\.)[0-9]* archive-move's\\)@@verdict: under update in place the hot table and its indexes are at least 1.2x the archive move's at the pin's end (finished rows wait there for the cleanup job, dead ones for the horizon)"
    "storage@@0@@^- storage models, .*; delete jobs/s [^;]*, nothing for the cleanup job to remove;@@verdict: under delete the cleanup job finds nothing to remove"
    "storage@@0@@^- index layouts under update-in-place, production at 8 workers, batch 10 \\(postgres\\), .*; pending-partial carried the most@@verdict: under update in place the partial index of pending rows carries more through the pin than fetch-order, whose index holds the finished rows"
    "redis-streams-faults@@0@@^\\| – @400/s \\| redis \\| redis-streams \\| stream \\|([^|]*\\|){11} 0 \\|@@table: 0 lost jobs on the stream under every fault, its lease (XAUTOCLAIM) bringing stranded jobs back"
    "pooler@@0@@^- advisory in session-state through transaction pooling .* [1-9][0-9]* advisory locks were still held after the trial.*advisory-xact beside it, .*: 0 locks left, 0 duplicate claims, 0 lost jobs@@verdict: session advisory locks leak through transaction pooling; the transaction-scoped variant leaves none"
    "pooler@@0@@^- notify in session-state through transaction pooling .* [0-9]+ of its [0-9]+ idle waits ended with a NOTIFY \\(([0-9]|[1-4][0-9]) %\\)@@verdict: through transaction pooling most of notify's idle waits miss their NOTIFY (under half; 99 % end with one on a direct connection)"
    "pool-exhaustion@@0@@^- pool held by another client, production at 8 workers: while it held all 4 of the pool's server connections \\([0-9.]+ s to [0-9.]+ s\\), the workers claimed ([0-9]|[1-9][0-9]) jobs/s against [0-9]{3,} in the seconds before, up to 8 clients waited@@verdict: with the whole pool held by another client the workers all wait and claim almost nothing (under 100 jobs/s against 100 or more before)"
    "nightly-paired@@0@@^- paired: candidate \\(B\\) against base \\(A\\) at 4 workers, batch 10, 12 rounds: no figure moved beyond 5 % outside its interval@@verdict: as shipped (the same claim as A and B) the paired gate raises no alarm"
    "network@@0@@^- round trip, production at batch 1: one worker spent local [0-9.]+ ms, 1ms [0-9.]+ ms, 5ms [0-9.]+ ms per job; by Little's law [0-9]+ jobs/s .* needs [0-9]+ workers at local, [0-9]+ at 1ms, [0-9]+ at 5ms@@verdict: the pool a rate needs at each round trip, by Little's law"
    "xmin-pin@@0@@^- horizon pinned, production at 8 workers on postgres, against its own clean phase: jobs/s ×0\.[0-9]{2} while pinned.*dead tuples up to [0-9]+ against a clean median of [0-9]+ \(×([5-9]|[1-9][0-9]+)\.[0-9]\), back under 1\.1× that@@verdict: on PostgreSQL the pin costs throughput, dead tuples climb to 5x the clean median or more, and they come back after the release"
    "xmin-pin@@0@@^- horizon pinned, production at 8 workers on mysql, against its own clean phase: .*the history list length up to [0-9]+ against a clean median of [0-9]+ \(×([5-9]|[1-9][0-9]+)\.[0-9]\)@@verdict: on MariaDB the read view stops purge: the history list grows to 5x its clean median or more"
    "surge@@0@@^- timeline, production at 8 workers on postgres in timeline .*: steady \([0-9]+/s offered\): [0-9]+ jobs/s, kept up, .*; pinned \([0-9]+/s offered, idle-in-transaction pin\): [0-9]+ jobs/s, fell behind, .*; after \([0-9]+/s offered\): [0-9]+ jobs/s, ×[0-9.]+ what it was offered: working off a backlog.*; surge \([0-9]+/s offered\): [0-9]+ jobs/s, fell behind@@verdict: on PostgreSQL, at half its capacity the pool keeps up, an idle transaction makes it fall behind, the phase after works the backlog off, and 1.5x the capacity outruns it"
    "surge@@0@@^- timeline, production at 8 workers on mysql in timeline .*: steady \([0-9]+/s offered\): [0-9]+ jobs/s, kept up, .*; pinned \([0-9]+/s offered, idle-in-transaction pin\): [0-9]+ jobs/s, fell behind, .*; after \([0-9]+/s offered\): [0-9]+ jobs/s, ×[0-9.]+ what it was offered: working off a backlog.*; surge \([0-9]+/s offered\): [0-9]+ jobs/s, fell behind@@verdict: the same on MariaDB (the pin is a read view)"
    "soak@@0@@^- soak, production at 8 workers on postgres \(3600 s measured\): steady@@verdict: an hour at 1,000 arrivals/s drifts by less than 10 % from the first quarter to the last"
    "network@@0@@^\*\*Network\*\*: .*the proxy added [0-9.]+(–[0-9.]+)? ms for 1ms, [0-9.]+(–[0-9.]+)? ms for 5ms@@summary: the round trip the proxy added, measured per trial"
)

failed=0
declare -A ran code
for s in "${scenarios[@]}"; do
    name=${s%%@@*}; rest=${s#*@@}; expect_code=${rest%%@@*}; rest=${rest#*@@}
    finding=${rest%%@@*}; meaning=${rest#*@@}
    if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
    if [ $# -eq 0 ] && [ "$name" = soak ]; then
        echo "skip soak: an hour; name it to run it"
        continue
    fi
    workload=$name extra=()
    if [ "$name" = alternatives-rabbitmq ]; then
        if [ -z "${CLAIMBENCH_AMQP_URL:-}" ] || [ -z "${CLAIMBENCH_AMQP_RESTART:-}" ]; then
            echo "skip $name: set CLAIMBENCH_AMQP_URL and CLAIMBENCH_AMQP_RESTART (above)"
            continue
        fi
        workload=alternatives
        extra=(--db "$CLAIMBENCH_AMQP_URL" --restart-command "$CLAIMBENCH_AMQP_RESTART")
    fi
    if [ -z "${ran[$name]:-}" ]; then
        echo "running $name ..." >&2
        "$bin" run "workloads/$workload.toml" "${extra[@]}" --quiet --results "$out/$name" >"$out/$name.log" 2>&1
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
