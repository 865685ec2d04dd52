"""Runs gradcalc and micrograd side by side and prints the tables (see compare.sh)."""

import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RELEASE = os.path.join(ROOT, "target", "release")


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def micrograd(*args):
    return run_json([sys.executable, os.path.join(HERE, "micrograd_workloads.py"), *map(str, args)])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    n = 10_000 if opts.quick else 100_000
    b = 14 if opts.quick else 153
    steps = 10 if opts.quick else 100

    print(f"# Library: build + backward (incl. topological sort), medians; same machine, one run\n")
    print("| workload | nodes | gradcalc build ms | gradcalc backward ms | reference build ms | reference backward ms"
          " | micrograd build ms | micrograd backward ms | micrograd / gradcalc | out, gsum equal |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, size in [("W1", n), ("W2", n), ("W3", n), ("W4", b)]:
        g = run_json([os.path.join(RELEASE, "examples", "bench"), name, str(size)])
        m = micrograd(name, size)
        ours = g["build_ms"] + g["backward_ms"]
        theirs = m["build_ms"] + m["backward_ms"]
        same = g["out"] == m["out"] and abs(g["gsum"] - m["gsum"]) <= 1e-12 * abs(m["gsum"])
        r = g["reference"]
        print(f"| {name} n={size} | {g['nodes']:,} | {g['build_ms']:.2f} | {g['backward_ms']:.2f} "
              f"| {r['build_ms']:.2f} | {r['backward_ms']:.2f} "
              f"| {m['build_ms']:.0f} | {m['backward_ms']:.0f} | **{theirs / ours:.0f}×** "
              f"| {'yes' if same and g['ok'] else 'NO'} |")
        print(f"<!-- {name}: backward/reference {r['backward_ratio']:.2f}, build/reference {r['build_ratio']:.2f},"
              f" {g['bytes_per_node']} bytes/node -->")

    print(f"\n# moons: {steps} SGD steps of MLP(2, [16, 16, 1]) on 100 points\n")
    out = subprocess.run([os.path.join(RELEASE, "examples", "moons"), "--quiet", "--steps", str(steps)],
                         capture_output=True, text=True).stdout
    seconds = float(re.search(r"in ([0-9.]+) s", out).group(1))
    accuracy = re.search(r"final accuracy (\d+)%", out).group(1)
    m = micrograd("moons", steps)
    print("| | seconds | final accuracy | final loss |")
    print("|---|---:|---:|---:|")
    print(f"| gradcalc (examples/moons.rs) | {seconds:.3f} | {accuracy} % | |")
    print(f"| micrograd 0.1.0 | {m['seconds']:.2f} | {m['accuracy'] * 100:.0f} % | {m['final_loss']:.6f} |")
    print(f"| ratio | **{m['seconds'] / seconds:.0f}×** | | |")

    print(f"\n# CLI: a {n:,}-statement W1 script (`y = y*1.0001 + 0.0001` per line, then `:grad x`)\n")
    script = os.path.join(opts.work, "w1.calc")
    with open(script, "w") as f:
        f.write("x = 0.5\ny = x\n" + "y = y*1.0001 + 0.0001\n" * n + "y\n:grad x\n")
    t0 = time.perf_counter()
    cli = subprocess.run([os.path.join(RELEASE, "gradcalc"), "--precision", "full", script],
                         check=True, capture_output=True, text=True).stdout
    ours = time.perf_counter() - t0
    grad = cli.strip().splitlines()[-1]
    t0 = time.perf_counter()
    m = micrograd("cli", n)
    theirs_total = time.perf_counter() - t0
    print("| | seconds | dy/dx |")
    print("|---|---:|---|")
    print(f"| `gradcalc w1.calc` (whole process: parse, evaluate, backward, print) | {ours:.3f} | {grad.split('=')[-1].strip()} |")
    print(f"| python + micrograd (build + backward, in process) | {m['seconds']:.3f} | {m['dydx']!r} |")
    print(f"| python + micrograd (whole process, with import) | {theirs_total:.3f} | |")
    print(f"| ratio (in-process micrograd / whole gradcalc) | **{m['seconds'] / ours:.1f}×** | |")


if __name__ == "__main__":
    main()
