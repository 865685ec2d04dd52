#!/usr/bin/env bash
# Every performance goal of docs/benchmarks.md ("Current figures"), measured in one run and printed next to its target. It runs the
# benchmark scripts in turn (release builds), each of which generates its
# inputs in a temporary directory:
#
#   1, 2, 5  scripts/compare_cli.sh   the W1 script beside `bc -l`, python and
#                                     micrograd (alternating rounds); the peak
#                                     memory of a 10^6-term and a 10 MB line
#   3a, 3b   scripts/bench_commands.sh  bare `:check` of 3·10^4 variables;
#                                     `:grad` of 3·10^3 and 3·10^4 names
#   3c       examples/preview_bench.rs  the preview of `f'(2)` over 10^5 and
#                                     10^6 nodes
#   3d-3f    scripts/bench_listings.sh  bytes a node of `:topo all`,
#                                     `:topo kahn all`, `:trace all`
#   4        examples/bench.rs        backward (with its sort) over the flat
#                                     reference tape, W1-W4
#
# Usage: scripts/goals.sh [ROUNDS]     (default 7 rounds of the W1 comparison)
# Takes a few minutes. Figures are CPU seconds, peak MiB (GNU time's %M) and
# ratios; on a shared machine quote the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-7}
cargo build --quiet --release --bin gradcalc --example bench --example preview_bench

echo "== goals 1, 2, 5: the whole program beside bc -l (target: gradcalc's CPU <= bc -l's);"
echo "   long lines (targets: under 80 MiB and under 400 MiB)"
scripts/compare_cli.sh 100000 "$rounds"

echo
echo "== goal 3a, 3b: :check of 3·10^4 variables (target: under 2 s); :grad of K names (target: linear)"
scripts/bench_commands.sh 30000 3

echo
echo "== goal 3c: the preview of f'(2) (target: the same at 10^5 and 10^6 nodes)"
target/release/examples/preview_bench 100000 1000000 --reps 50

echo
echo "== goals 3d-3f: listings beyond the graph (target: at most 50 bytes a node)"
scripts/bench_listings.sh 250000 target/release/gradcalc

echo
echo "== goal 4: backward with its sort over the reference tape (target: at most 1.25)"
for workload in "W1 100000" "W2 100000" "W3 100000" "W4 153"; do
    # shellcheck disable=SC2086
    target/release/examples/bench $workload --reps 21 | python3 -c '
import json, sys
for line in sys.stdin:
    row = json.loads(line)
    ref = row["reference"]
    name, n, ms, ok = row["workload"], row["n"], row["backward_ms"], row["ok"]
    ref_ms, ratio = ref["backward_ms"], ref["backward_ratio"]
    print(f"{name} n={n}: backward {ms} ms, reference {ref_ms} ms, ratio {ratio}, values as tabulated: {ok}")
'
done
