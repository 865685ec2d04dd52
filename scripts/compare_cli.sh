#!/usr/bin/env bash
# The whole program, side by side: gradcalc, `bc -l`, python with plain floats
# and python + micrograd 0.1.0 run the same generated straight-line programs in
# one run, in alternating rounds (every tool once per round), and the CPU-time
# ratios to gradcalc are printed with their min / median / max over the rounds.
#
#   scripts/compare_cli.sh               # W1 with 10^5 statements, 7 rounds
#   scripts/compare_cli.sh N ROUNDS      # other sizes
#
# The program is W1 as a script: `x = 0.5; y = x`, then `y = y*1.0001 + 0.0001`
# N times, then `y`. gradcalc prints every assignment, builds the graph and
# runs `:grad x` at the end; `bc -l` prints the final value only (`bc print`:
# every value, as gradcalc does); python prints the final value; micrograd
# builds its graph and runs backward at the end, as gradcalc does. Each tool's
# output goes to /dev/null; each run's user + system time is the kernel's
# (wait4), its peak memory GNU time's %M. Also the long lines: one line `1+1+…+1` of 10^6 terms
# and one of 10 MB, through gradcalc alone (peak memory).
#
# micrograd is installed from PyPI into a throwaway virtual environment that is
# deleted on exit (skipped, and said so, when that fails). Needs python3, bc, /usr/bin/time (GNU), cargo.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}
rounds=${2:-7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo build --quiet --release --bin gradcalc
python=python3
if python3 -m venv "$work/venv" >/dev/null 2>&1 &&
    "$work/venv/bin/pip" install --quiet --disable-pip-version-check micrograd==0.1.0 >/dev/null 2>&1; then
    python="$work/venv/bin/python"
fi
"$python" - "$work" "$n" "$rounds" "$PWD/target/release/gradcalc" <<'PY'
import os, platform, statistics, subprocess, sys, time

work, n, rounds, gradcalc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
step = "y = y*1.0001 + 0.0001\n"
def write(name, text):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    return path

calc = write("w1.calc", "x = 0.5\ny = x\n" + step * n + "y\n:grad x\n")
bc = write("w1.bc", "x = 0.5\ny = x\n" + step * n + "y\nquit\n")
bc_print = write("w1_print.bc", "(x = 0.5)\n(y = x)\n" + "(y = y*1.0001 + 0.0001)\n" * n + "y\nquit\n")
py = write("w1.py", "x = 0.5\ny = x\n" + step * n + "print(y)\n")
# micrograd sorts recursively: a deep stack and a high recursion limit.
mg = write("w1_micrograd.py",
    "import sys, threading\nfrom micrograd.engine import Value\n"
    "sys.setrecursionlimit(10**7)\nthreading.stack_size(1 << 30)\n"
    "def main():\n    x = Value(0.5)\n    y = x\n"
    + "    y = y*1.0001 + 0.0001\n" * n
    + "    print(y.data)\n    y.backward()\n    print(x.grad)\n"
    "t = threading.Thread(target=main)\nt.start()\nt.join()\n")
sum1m = write("sum1m.calc", "1" + "+1" * 999_999 + "\n")
sum10mb = write("sum10mb.calc", "1" + "+1" * 4_999_999 + "\n")

try:
    import micrograd  # noqa: F401
    has_micrograd = True
except ImportError:
    has_micrograd = False

tools = [
    ("gradcalc", [gradcalc, calc]),
    ("bc -l", ["bc", "-lq", bc]),
    ("bc print", ["bc", "-lq", bc_print]),
    ("python", [sys.executable, py]),
]
if has_micrograd:
    tools.append(("micrograd", [sys.executable, mg]))

peak_file = os.path.join(work, "peak")
def run(argv):
    """CPU seconds (user + system, from wait4) and peak MiB of one run.

    The peak comes from /usr/bin/time's %M: a process started by this (large)
    python would inherit its high-water mark at exec. time's own CPU is a
    millisecond at most."""
    with open(os.devnull, "w") as null:
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", peak_file, *argv],
                                stdout=null, stderr=null)
        _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        sys.exit(f"{argv} failed with status {status}")
    with open(peak_file) as f:
        peak_kib = int(f.read().split()[-1])
    return usage.ru_utime + usage.ru_stime, peak_kib / 1024

for _, argv in tools:  # warm-up: files in the page cache, binaries loaded
    run(argv)
cpu = {name: [] for name, _ in tools}
peak = {name: [] for name, _ in tools}
for _ in range(rounds):
    for name, argv in tools:
        c, m = run(argv)
        cpu[name].append(c)
        peak[name].append(m)

def mmm(xs, fmt):
    return " / ".join(fmt.format(v) for v in (min(xs), statistics.median(xs), max(xs)))

print(f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, "
      f"{platform.processor() or platform.node()}; W1 as a script, N = {n}, {rounds} rounds")
if not has_micrograd:
    print("micrograd: not installed (pip failed), left out")
print(f"{'tool':<10} {'cpu s min / median / max':>28} {'peak MiB':>9} {'tool / gradcalc cpu, min / median / max':>42}")
for name, _ in tools:
    ratios = [t / g for t, g in zip(cpu[name], cpu["gradcalc"])]
    print(f"{name:<10} {mmm(cpu[name], '{:.3f}'):>28} {statistics.median(peak[name]):>9.1f} "
          f"{mmm(ratios, '{:.2f}'):>42}")
for name, path, goal in [("1 000 000-term line", sum1m, 80), ("10 MB line", sum10mb, 400)]:
    c, m = run([gradcalc, path])
    print(f"gradcalc, {name}: {c:.2f} s cpu, {m:.0f} MiB peak (goal: under {goal} MiB)")
PY
