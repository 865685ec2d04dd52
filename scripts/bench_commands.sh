#!/usr/bin/env bash
# `:check` and `:grad` at scale, through the release binary.
#
# The session: N leaves `x0 = 0.5 … x{N-1}` (values 0.5 + i/N), then one
# statement `y = x0*x0 + x1*x1 + … ` (a left fold: 3N − 1 nodes deep).
#   1. a bare `:check` (it checks the first 1 000 leaves, each against a
#      central difference over the nodes that depend on it);
#   2. `:grad` naming 1 leaf, the first K = N/10 and all N: linear in the
#      names means t(N) − t(1) ≈ 10·(t(K) − t(1)) (t(1) is the backward pass
#      over the whole graph, paid once per command whatever the names).
# `:check` is run REPS times and each `:grad` 10·REPS times after one build of
# the session; the time of one command is (time of the run − time of the run
# without it) / repetitions, in CPU seconds (user + system) from
# /usr/bin/time, output as JSON Lines to a file. The answers are checked on
# the way: ∂y/∂xi = 2·xi and every check passes.
#
# Usage: scripts/bench_commands.sh [N] [REPS]      (defaults 30000, 5)
# Inputs are written to a temporary directory, removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-30000}
reps=${2:-5}
cargo build --quiet --release --bin gradcalc
bin=$PWD/target/release/gradcalc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$n" "$reps" "$work" <<'PY'
import sys
n, reps, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
k = n // 10
setup = "".join(f"x{i} = {0.5 + i / n!r}\n" for i in range(n))
setup += "y = " + " + ".join(f"x{i}*x{i}" for i in range(n)) + "\n"
def write(name, commands):
    with open(f"{work}/{name}.calc", "w") as f:
        f.write(setup + commands)
write("base", "")
write("check", ":check\n" * reps)
for name, names in [("grad_1", 1), ("grad_k", k), ("grad_n", n)]:
    write(name, (":grad " + " ".join(f"x{i}" for i in range(names)) + "\n") * (10 * reps))
PY

# CPU seconds and peak KiB of one run; output in $work/NAME.out.
run() {
    /usr/bin/time -f "%U %S %M" "$bin" --json "$work/$1.calc" > "$work/$1.out" 2> "$work/$1.time"
    read -r user sys kib < <(tail -1 "$work/$1.time")
    echo "$user $sys $kib"
}
cpu() { awk '{ printf "%.3f", $1 + $2 }' <<< "$1"; }
per() { awk -v a="$1" -v b="$2" -v r="${3:-$reps}" 'BEGIN { printf "%.4f", (a - b) / r }'; }

base=$(cpu "$(run base)")
echo "N = $n leaves, y = x0*x0 + … (left fold); $reps repetitions of each command"
echo "build only:            $base s CPU"

check=$(cpu "$(run check)")
echo ":check (bare):         $(per "$check" "$base") s CPU per command"
t1=$(per "$(cpu "$(run grad_1)")" "$base" $((10 * reps)))
tk=$(per "$(cpu "$(run grad_k)")" "$base" $((10 * reps)))
tn=$(per "$(cpu "$(run grad_n)")" "$base" $((10 * reps)))
# Every gradient is 2·xi; every check passes (and names the leaves left out).
python3 - "$n" "$reps" "$work" <<'PY'
import json, sys
n, reps, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def events(name):
    return [json.loads(line) for line in open(f"{work}/{name}.out")]
checks = [e for e in events("check") if e["kind"] == "check"]
assert len(checks) == reps * min(n, 1000), len(checks)
assert all(e["verdict"] == "pass" for e in checks)
for name, count in [("grad_1", 1), ("grad_k", n // 10), ("grad_n", n)]:
    grads = [e for e in events(name) if e["kind"] == "grad"]
    assert len(grads) == 10 * reps * count, (name, len(grads))
    for e in grads[:count]:
        i = int(e["wrt"][1:])
        assert abs(e["value"] - 2 * (0.5 + i / n)) <= 1e-12, e
PY

echo ":grad, 1 name:         $t1 s CPU per command"
echo ":grad, $((n / 10)) names:      $tk s CPU per command"
echo ":grad, $n names:     $tn s CPU per command"
awk -v a="$tn" -v b="$tk" -v c="$t1" 'BEGIN {
    if (b > 0) printf "ratio t(N)/t(K):               %.1f\n", a / b
    if (b > c) printf "ratio (t(N)-t(1))/(t(K)-t(1)): %.1f (linear in the names: 10)\n", (a - c) / (b - c)
}'
