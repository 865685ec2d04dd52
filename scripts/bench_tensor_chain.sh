#!/usr/bin/env bash
# A chain of tensor statements must take time linear in its length
# (docs/benchmarks.md, "A chain of tensor statements"): a script of N
# statements `x{i+1} = x{i}*1.0001 + 0.0001` on a vector (each binds a new
# name) and of N statements `y = y*1.0001 + 0.0001` (one name rebound), at
# N and 2N, whole-process CPU time (user + system, /usr/bin/time) of the
# release build, the median of 3 runs; prints each and the ratio 2N / N
# (about 2 when linear, 4 when quadratic).
#
#     scripts/bench_tensor_chain.sh [N]     # N = 10000 unless given
set -euo pipefail
# shellcheck source=scripts/release_gradcalc.sh
source "$(dirname "$0")/release_gradcalc.sh"
n=${1:-10000}

python3 - "$n" "$work" <<'PY'
import sys
n, work = int(sys.argv[1]), sys.argv[2]
for size in (n, 2 * n):
    with open(f"{work}/names{size}.calc", "w") as f:
        f.write("x0 = [1, 2]\n")
        f.writelines(f"x{i + 1} = x{i}*1.0001 + 0.0001\n" for i in range(size))
    with open(f"{work}/rebound{size}.calc", "w") as f:
        f.write("x = [1, 2]\ny = x\n" + "y = y*1.0001 + 0.0001\n" * size)
PY

cpu() { # script → median CPU seconds of 3 runs
    for _ in 1 2 3; do
        /usr/bin/time -f "%U %S" "$bin" "$1" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'
    done | sort -n | sed -n 2p
}

for shape in names rebound; do
    a=$(cpu "$work/$shape$n.calc")
    b=$(cpu "$work/$shape$((2 * n)).calc")
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "n/a" }')
    echo "$shape: N = $n ${a} s, 2N = $((2 * n)) ${b} s, ratio ${ratio}"
done
