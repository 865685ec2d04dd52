#!/usr/bin/env bash
# Depth and bounded memory through the binary (release build):
#  1. W1 at N = 1 000 000 as a script (4 000 001 nodes, depth 2 000 001):
#     evaluate, `:topo` (summarised), `:grad x`, JSON output, exit: no stack overflow.
#  2. A name reassigned a million times (`y = x*1.0001`): its old nodes are
#     unreachable, automatic collection keeps the graph and the RSS flat.
#  3. `x = x*1.0001` a million times: every old node stays reachable from x
#     (it is x's history), so the graph grows by 2 nodes (48 bytes) per statement.
# Prints max RSS (from /usr/bin/time or /proc) and the `:stats` of each run.
set -euo pipefail
# shellcheck source=scripts/release_gradcalc.sh
source "$(dirname "$0")/release_gradcalc.sh"
n=${1:-1000000}

rss() { # command... → prints "max RSS KiB, seconds"
    /usr/bin/time -f "%M KiB max RSS, %e s" "$@" 2> "$work/time" > "$work/out"
    tail -1 "$work/time"
}

python3 - "$n" "$work" <<'PY'
import sys
n, work = int(sys.argv[1]), sys.argv[2]
with open(f"{work}/w1.calc", "w") as f:
    f.write("x = 0.5\ny = x\n" + "y = y*1.0001 + 0.0001\n" * n + "y\n:topo\n:grad x\n:stats\n")
with open(f"{work}/flat.calc", "w") as f:
    f.write("x = 0.5\n" + "y = x*1.0001\n" * n + ":stats\n")
with open(f"{work}/flat_small.calc", "w") as f:
    f.write("x = 0.5\n" + "y = x*1.0001\n" * (n // 10) + ":stats\n")
with open(f"{work}/chain.calc", "w") as f:
    f.write("x = 0.5\n" + "x = x*1.0001\n" * n + ":stats\n")
PY

echo "1. W1, N = $n, --json:"
rss "$bin" --json "$work/w1.calc"
grep -E '"kind":"(topo|grad|stats)"' "$work/out" | cut -c1-160
grep -q '"kind":"topo","of":"y","total":'"$((4 * n + 1))" "$work/out"
grep -q '"kind":"grad"' "$work/out"

echo "2. y = x*1.0001, $((n / 10)) and $n times:"
rss "$bin" "$work/flat_small.calc"; grep -E "graph|reclaim" "$work/out"
rss "$bin" "$work/flat.calc"; grep -E "graph|reclaim" "$work/out"

echo "3. x = x*1.0001, $n times (all reachable):"
rss "$bin" "$work/chain.calc"; grep -E "graph|reclaim" "$work/out"
echo ok
