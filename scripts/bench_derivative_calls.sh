#!/bin/sh
# Times N statements calling f''(y) against N calling f(y) (issue 18: the
# derivative of a user function is built at its first call and copied by the
# next ones). Usage: scripts/bench_derivative_calls.sh [BINARY] [N]
# (defaults: target/release/gradcalc, 100000). Prints CPU seconds of each run.
set -eu
bin=${1:-target/release/gradcalc}
n=${2:-100000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir" "$n" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
for name, call in (("second", "f''(y)"), ("plain", "f(y)")):
    with open(f"{d}/{name}.calc", "w") as out:
        out.write("f(x) = x^3 + sin(x)*x\n")
        for i in range(n):
            out.write(f"y = {0.5 + i * 1e-6!r}; z = {call}\n")
PY
for name in second plain; do
    /usr/bin/time -f "$name: %U s user, %M KiB" "$bin" "$dir/$name.calc" > /dev/null
done
