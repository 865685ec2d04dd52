#!/usr/bin/env bash
# The CLI against `bc -l` on one straight-line program (W1 as a script):
#   x = 0.5; y = x; then `y = y*1.0001 + 0.0001` N times; then `y` (and, for
#   gradcalc only, `:grad x`: gradcalc also builds the graph and runs backward).
# Also writes the long-line inputs used to check bounded memory.
#
# Usage: scripts/bench_cli.sh DIR [N]
# Writes into DIR:
#   w1.calc        the gradcalc script (N statements, then `y`, `:grad x`)
#   w1.bc          the same program for `bc -l` (assignments print nothing, `y` prints)
#   w1_print.bc    the same, every assignment printed as gradcalc prints it
#   sum1m.calc     one line `1+1+…+1` with 1 000 000 terms
#   sum10mb.calc   one line `1+1+…+1` of 10 MB
# Then time, for example, with hyperfine or /usr/bin/time:
#   /usr/bin/time -v target/release/gradcalc DIR/w1.calc > /dev/null
#   /usr/bin/time -v bc -lq DIR/w1.bc > /dev/null
set -euo pipefail
dir=${1:?usage: scripts/bench_cli.sh DIR [N]}
n=${2:-100000}
mkdir -p "$dir"
python3 - "$dir" "$n" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
step = "y = y*1.0001 + 0.0001\n"
with open(f"{d}/w1.calc", "w") as f:
    f.write("x = 0.5\ny = x\n" + step * n + "y\n:grad x\n")
with open(f"{d}/w1.bc", "w") as f:
    f.write("x = 0.5\ny = x\n" + step * n + "y\nquit\n")
with open(f"{d}/w1_print.bc", "w") as f:
    f.write("(x = 0.5)\n(y = x)\n" + "(y = y*1.0001 + 0.0001)\n" * n + "y\nquit\n")
with open(f"{d}/sum1m.calc", "w") as f:
    f.write("1" + "+1" * 999_999 + "\n")
with open(f"{d}/sum10mb.calc", "w") as f:
    f.write("1" + "+1" * 5_000_000 + "\n")
PY
