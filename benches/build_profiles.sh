#!/usr/bin/env bash
# What a release profile costs a newcomer in build time against what it saves in client
# CPU per claim: builds claimbench from scratch once per profile (each in its own target
# directory, the registry already downloaded, nothing else running), prints the wall
# time of each build, then runs the builds side by side on the claim path with
# benches/compare_builds.sh (the same throw-away server and seeded schema, the order
# rotating each round). docs/harness-overhead.md has the table behind Cargo.toml's
# profiles.
#
#   bash benches/build_profiles.sh [PROFILE ...]
#   a profile is lto:codegen-units:debug, e.g. fat:1:1 thin:16:0 false:16:0 (the
#   defaults); ROUNDS, WORKERS, BATCH, SECONDS_PER_RUN as for compare_builds.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
profiles=("$@")
(( ${#profiles[@]} )) || profiles=(fat:1:1 thin:16:0 false:16:0)
out=$(mktemp -d)
builds=()
for p in "${profiles[@]}"; do
    IFS=: read -r lto cu debug <<<"$p"
    dir="$out/$lto-$cu-$debug"
    start=$(date +%s.%N)
    CARGO_TARGET_DIR="$dir" CARGO_PROFILE_RELEASE_LTO="$lto" \
        CARGO_PROFILE_RELEASE_CODEGEN_UNITS="$cu" CARGO_PROFILE_RELEASE_DEBUG="$debug" \
        cargo build --release --quiet --bin claimbench
    end=$(date +%s.%N)
    cp "$dir/release/claimbench" "$out/claimbench-$lto-$cu-$debug"
    printf 'build lto=%s codegen-units=%s debug=%s: %.0f s, binary %s\n' "$lto" "$cu" "$debug" \
        "$(echo "$end - $start" | bc)" "$(du -h "$out/claimbench-$lto-$cu-$debug" | cut -f1)"
    rm -rf "$dir"
    builds+=("$out/claimbench-$lto-$cu-$debug")
done
bash benches/compare_builds.sh "${builds[@]}"
rm -rf "$out"
