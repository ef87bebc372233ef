#!/usr/bin/env bash
# The tests in tiers, fastest first (docs/testing.md):
#   bash tests/tiers.sh fast      no server: unit, snapshots, bad inputs, docs, layers, report
#   bash tests/tiers.sh servers   real servers: behaviour, CLI, privilege, pooler, topologies
#   bash tests/tiers.sh           both, the fast one first
# With cargo-nextest the server tier runs its tests side by side (.config/nextest.toml);
# without it, cargo test runs them as it always has. Servers come from CLAIMBENCH_PG_URL
# and CLAIMBENCH_MYSQL_URL when set, else each test process starts its own.
set -euo pipefail
cd "$(dirname "$0")/.."

tier="${1:-all}"
fast_binaries=(bad_input docs layers report snapshots)
server_binaries=(behaviour cli capture privilege pooler topology brokers jetstream rabbitmq)

# Every test binary is in a tier: a new tests/*.rs left out of both would never run.
for f in tests/*.rs; do
    b=$(basename "$f" .rs)
    if [[ " ${fast_binaries[*]} ${server_binaries[*]} " != *" $b "* ]]; then
        echo "tests/tiers.sh: tests/$b.rs is in no tier; add it to fast_binaries or server_binaries" >&2
        exit 2
    fi
done

have_nextest() { cargo nextest --version >/dev/null 2>&1; }

filter_of() { # binary names -> a nextest filterset
    local f="" b
    for b in "$@"; do f="${f:+$f | }binary($b)"; done
    echo "$f"
}

args_of() { # binary names -> cargo test --test arguments
    local b
    for b in "$@"; do printf -- '--test\n%s\n' "$b"; done
}

fast() {
    if have_nextest; then
        cargo nextest run --no-fail-fast -E "kind(lib) | kind(bin) | $(filter_of "${fast_binaries[@]}")"
    else
        mapfile -t a < <(args_of "${fast_binaries[@]}")
        cargo test --lib --bins "${a[@]}"
    fi
}

servers() {
    # The claimbench runs of these tests are checked for what they did, not for how fast:
    # a trial the loaded host disturbed (a debug build's client CPU near the server's is
    # enough) would run again and double the test's time without changing what it
    # checks (run --no-rerun; the rerun's own logic has its unit tests).
    export CLAIMBENCH_NO_RERUN=1
    if have_nextest; then
        cargo nextest run --profile servers -E "$(filter_of "${server_binaries[@]}")"
    else
        mapfile -t a < <(args_of "${server_binaries[@]}")
        cargo test "${a[@]}"
    fi
}

timed() { # tier function: runs it, says how long it took, and returns its status
    # (`set -e` does not act inside a function called before `&&`: without the explicit
    # status, a failing fast tier returned the echo's 0 and CI went on, and passed).
    local start=$SECONDS status=0
    "$1" || status=$?
    echo "tests/tiers.sh: $1 tier took $((SECONDS - start)) s"
    return "$status"
}

case "$tier" in
    fast) timed fast ;;
    servers) timed servers ;;
    all) timed fast && timed servers ;;
    *) echo "tests/tiers.sh: unknown tier \`$tier\`; give fast, servers or nothing (both)" >&2; exit 2 ;;
esac
