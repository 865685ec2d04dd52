#!/usr/bin/env bash
# Memory of the long listings: bytes a node that `:topo all`, `:topo kahn all`,
# `:trace all` and `:forward all` add to the peak of a run, text and JSON.
#
# The input is W1 as a script (docs/benchmarks.md): `x = 0.5`, `y = x`, then
# `y = y*1.0001 + 0.0001` N times, then `y` (4 N + 1 nodes); each listing is
# that script plus one final line. A listing's cost is
#   (peak RSS with the listing − peak RSS of the script alone) / nodes,
# peaks measured with `/usr/bin/time -f %M` (KiB), output to /dev/null.
#
# Usage: scripts/bench_listings.sh [N] [BINARY]
#   N       statements (default 250000: 10^6 nodes)
#   BINARY  default target/release/gradcalc (`cargo build --release --bin gradcalc`)
# The inputs are generated in a temporary directory, removed at the end.
set -euo pipefail
n=${1:-250000}
bin=${2:-target/release/gradcalc}
[ -x "$bin" ] || { echo "no $bin: cargo build --release --bin gradcalc" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

python3 - "$dir" "$n" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
base = "x = 0.5\ny = x\n" + "y = y*1.0001 + 0.0001\n" * n + "y\n"
listings = {"base": "", "topo": ":topo all\n", "kahn": ":topo kahn all\n",
            "trace": ":trace all\n", "forward": ":forward all\n"}
for name, line in listings.items():
    with open(f"{d}/{name}.calc", "w") as f:
        f.write(base + line)
PY

peak() { # peak KiB of one run: $1 = file, $2… = options
    local file=$1; shift
    /usr/bin/time -f %M "$bin" "$@" "$file" 2>&1 >/dev/null | tail -n 1
}
nodes=$(printf ':stats\n' | cat "$dir/base.calc" - | "$bin" --json - \
    | python3 -c 'import json,sys; print([json.loads(l) for l in sys.stdin][-1]["nodes"])')
echo "W1 with N = $n: $nodes nodes; bytes a node beyond the script alone"
printf '%-16s %8s %8s\n' listing text json
for mode in text json; do
    opts=(); [ $mode = json ] && opts=(--json)
    base=$(peak "$dir/base.calc" "${opts[@]}")
    eval "base_$mode=$base"
done
for name in topo kahn trace forward; do
    row=()
    for mode in text json; do
        opts=(); [ $mode = json ] && opts=(--json)
        with=$(peak "$dir/$name.calc" "${opts[@]}")
        base_var="base_$mode"
        row+=("$(python3 -c "print(round(($with - ${!base_var}) * 1024 / $nodes))")")
    done
    case $name in
        topo) label=':topo all' ;;
        kahn) label=':topo kahn all' ;;
        trace) label=':trace all' ;;
        forward) label=':forward all' ;;
    esac
    printf '%-16s %8s %8s\n' "$label" "${row[0]}" "${row[1]}"
done
echo "(peaks of the script alone: text $base_text KiB, json $base_json KiB)"
