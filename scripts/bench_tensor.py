#!/usr/bin/env python3
"""numpy (float64) side of the tensor benchmark (docs/benchmarks.md, "Vectors
and matrices"): forward and a hand-written backward of the workloads that
examples/tensor_bench.rs runs through gradcalc's tensor engine, on the same
inputs, one thread (OPENBLAS_NUM_THREADS=1 and friends, set before numpy is
imported, as matrixmultiply runs on one).

    python3 scripts/bench_tensor.py                       # numpy only, one JSON line each
    python3 scripts/bench_tensor.py --rust target/release/examples/tensor_bench
    python3 scripts/bench_tensor.py --rust target/release/examples/tensor_bench --size 1024

--size N sets the side of the square inputs of every workload but the MLP
step (256 unless given).

With --rust it runs the Rust example right after each numpy workload
and prints a table: both medians, the ratio gradcalc / numpy, and whether the
loss and the sum of the gradients agree to 1e-9 relative.

Rounds, several sizes and builds, peak memory (docs/benchmarks.md, "Figures"):

    python3 scripts/bench_tensor.py --rust target/release/examples/tensor_bench \
        --size 256,512,1024,2048 --rounds 5 [--memory]

--size takes a comma-separated list; --rust may be given more than once (the
build before and after a change, say). Each round runs every size, each
size in a Python process of its own (as a run of one size: numpy is not
warmed by the sizes before it), and at each size every workload: numpy,
then each build right after it, so that a loaded machine slows the pairs
alike. After the rounds it prints, for each
build, size and workload, the median of the rounds' ratios gradcalc / numpy
with the lowest and highest. --memory also runs each workload once more in a
process of its own on each side (the numpy side is this script with one
workload, the gradcalc side the example) and reports the peak resident
memory of both (/usr/bin/time's %M) in MiB, whole process and above
the process doing nothing (the interpreter with numpy imported; the example
printing its usage).

Element e (row-major) of input k is 0.5*sin(1 + k + 0.37*e) in both programs.
"""

import os

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def inp(k, *shape):
    n = int(np.prod(shape))
    return 0.5 * np.sin(1.0 + k + 0.37 * np.arange(n, dtype=np.float64)).reshape(shape)


def softmax_rows(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def matmul(a, b):
    c = a @ b
    loss = c.sum()
    g = np.ones_like(c)
    return loss, [g @ b.T, a.T @ g]


def elementwise(x, y):
    u = x * y + x
    loss = u.sum()
    g = np.ones_like(u)
    return loss, [g * y + g, g * x]


def tanh(x):
    t = np.tanh(x)
    loss = t.sum()
    return loss, [np.ones_like(t) * (1.0 - t * t)]


def reductions(x):
    rows = x.sum(axis=1)
    i = int(np.argmax(rows))
    loss = rows[i] + x.mean()
    g_rows = np.zeros_like(rows)
    g_rows[i] = 1.0
    return loss, [np.broadcast_to(g_rows[:, None], x.shape) + 1.0 / x.size]


def softmax(x, r):
    p = softmax_rows(x)
    loss = (p * r).sum()
    return loss, [p * (r - (p * r).sum(axis=-1, keepdims=True))]


def mlp(x, w1, b1, w2, b2, y):
    a = x @ w1 + b1
    h = np.tanh(a)
    z = h @ w2 + b2
    m = z.max(axis=-1, keepdims=True)
    lse = (m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True)))[:, 0]
    batch = x.shape[0]
    loss = (lse.sum() - (z * y).sum()) / batch
    gz = (softmax_rows(z) - y) / batch
    gw2 = h.T @ gz
    gb2 = gz.sum(axis=0)
    ga = (gz @ w2.T) * (1.0 - h * h)
    gw1 = x.T @ ga
    gb1 = ga.sum(axis=0)
    return loss, [gw1, gb1, gw2, gb2]


def onehot():
    y = np.zeros((256, 10))
    y[np.arange(256), np.arange(256) % 10] = 1.0
    return y


SIZE = 256

WORKLOADS = {
    "matmul": (matmul, lambda: [inp(0, SIZE, SIZE), inp(1, SIZE, SIZE)]),
    "elementwise": (elementwise, lambda: [inp(0, SIZE, SIZE), inp(1, SIZE, SIZE)]),
    "tanh": (tanh, lambda: [inp(0, SIZE, SIZE)]),
    "reductions": (reductions, lambda: [inp(0, SIZE, SIZE)]),
    "softmax": (softmax, lambda: [inp(0, SIZE, SIZE), inp(1, SIZE, SIZE)]),
    "mlp": (
        mlp,
        lambda: [
            inp(0, 256, 64),
            inp(1, 64, 128),
            inp(2, 128),
            inp(3, 128, 10),
            inp(4, 10),
            onehot(),
        ],
    ),
}


def bench(name):
    f, make = WORKLOADS[name]
    args = make()
    times = []
    # CPU time of this thread, as the Rust side measures (on a loaded
    # machine the wall time also holds what other processes ran).
    start_all = time.thread_time()
    rnd = 0
    while rnd < 5 or (time.thread_time() - start_all < 1.0 and rnd < 1001):
        start = time.thread_time()
        loss, grads = f(*args)
        elapsed = (time.thread_time() - start) * 1e3
        if rnd > 0:
            times.append(elapsed)
        rnd += 1
    times.sort()
    gsum = float(sum(g.sum() for g in grads))
    return {"workload": name, "reps": len(times), "total_ms": times[len(times) // 2],
            "loss": float(loss), "gsum": gsum}


def agrees(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def peak_mib(command):
    """The peak resident memory of `command` run to its end, in MiB, by
    /usr/bin/time (a child of this interpreter would count the
    interpreter's memory from before its exec: Linux keeps the peak)."""
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True).stderr
    return int(out.strip().splitlines()[-1]) / 1024  # KiB


def run_rust(rust, size, name):
    line = subprocess.run([rust, "--size", str(size), name], check=True, capture_output=True, text=True)
    return json.loads(line.stdout)


def median_range(xs):
    """The median of `xs`, its lowest and its highest."""
    xs = sorted(xs)
    return xs[len(xs) // 2], xs[0], xs[-1]


def pairs(rusts, names):
    """Each workload in numpy, then in each build right after it: one row
    (a dict) per build and workload."""
    rows = []
    for name in names:
        ours = bench(name)
        for rust in rusts:
            r = run_rust(rust, SIZE, name)
            ok = agrees(r["loss"], ours["loss"]) and agrees(r["gsum"], ours["gsum"])
            rows.append({"rust": rust, "workload": name, "forward_ms": r["forward_ms"],
                         "backward_ms": r["backward_ms"], "total_ms": r["total_ms"],
                         "numpy_ms": ours["total_ms"], "ratio": r["total_ms"] / ours["total_ms"],
                         "same": ok})
    return rows


def print_rows(rows):
    print("| build | workload | gradcalc forward ms | backward ms | total ms | numpy ms | ratio | same loss and gradients |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['rust']} | {r['workload']} | {r['forward_ms']:.3f} | {r['backward_ms']:.3f} | {r['total_ms']:.3f} "
              f"| {r['numpy_ms']:.3f} | {r['ratio']:.2f}× | {'yes' if r['same'] else 'NO'} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rust", action="append", default=[],
                        help="path of a built tensor_bench example (more than one: each in turn)")
    parser.add_argument("--size", default="256",
                        help="side of the square inputs (not the MLP step's); a comma-separated list")
    parser.add_argument("--rounds", type=int, default=1,
                        help="rounds of every size and workload (0: none, for --memory alone)")
    parser.add_argument("--memory", action="store_true",
                        help="also the peak memory of each side, each workload in a process of its own")
    parser.add_argument("--json-rows", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    args = parser.parse_args()
    global SIZE
    sizes = [int(n) for n in args.size.split(",")]
    if not args.rust:
        for size in sizes:
            SIZE = size
            print(f"numpy {np.__version__}, one thread, size {SIZE}")
            for name in args.workloads:
                print(json.dumps(bench(name)))
        return
    if args.rounds == 0:
        pass  # --memory alone
    elif len(sizes) == 1 and args.rounds == 1:
        SIZE = sizes[0]
        rows = pairs(args.rust, args.workloads)
        if args.json_rows:
            for r in rows:
                print(json.dumps(r))
            return
        print(f"numpy {np.__version__}, one thread, size {SIZE}")
        print_rows(rows)
    else:
        # Each round and size in a process of its own, as one run of one
        # size is: numpy is not warmed by the larger sizes before (glibc's
        # malloc keeps large freed arrays mapped once it has seen them).
        ratios = {}
        script = os.path.abspath(__file__)
        for rnd in range(args.rounds):
            for size in sizes:
                command = [sys.executable, script, "--size", str(size), "--json-rows"]
                command += [a for rust in args.rust for a in ("--rust", rust)] + args.workloads
                out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
                rows = [json.loads(line) for line in out.splitlines()]
                print(f"numpy {np.__version__}, one thread, size {size}, round {rnd + 1} of {args.rounds}")
                print_rows(rows)
                for r in rows:
                    ratios.setdefault((r["rust"], size, r["workload"]), []).append(r["ratio"])
        for rust in args.rust:
            print(f"\n{rust}: gradcalc / numpy, median of {args.rounds} rounds (lowest–highest)\n")
            print("| N | " + " | ".join(args.workloads) + " |")
            print("|---:|" + "---:|" * len(args.workloads))
            for size in sizes:
                cells = []
                for name in args.workloads:
                    mid, lo, hi = median_range(ratios[(rust, size, name)])
                    cells.append(f"{mid:.2f}× ({lo:.2f}–{hi:.2f})")
                print(f"| {size} | " + " | ".join(cells) + " |", flush=True)
    if args.memory:
        script = os.path.abspath(__file__)
        idle_numpy = peak_mib([sys.executable, "-c", "import numpy"])
        idle_rust = {rust: peak_mib([rust, "--no-such-option"]) for rust in args.rust}
        idle = ", ".join(f"{rust} {mib:.0f}" for rust, mib in idle_rust.items())
        print(f"\npeak memory, MiB: whole process (and above the idle process: numpy imported "
              f"{idle_numpy:.0f} MiB, {idle} MiB)\n")
        print("| N | workload | numpy | " + " | ".join(args.rust) + " |")
        print("|---:|---|---:|" + "---:|" * len(args.rust))
        for size in sizes:
            for name in args.workloads:
                npy = peak_mib([sys.executable, script, "--size", str(size), name])
                cells = []
                for rust in args.rust:
                    ours = peak_mib([rust, "--size", str(size), name])
                    cells.append(f"{ours:.0f} ({ours - idle_rust[rust]:.0f})")
                print(f"| {size} | {name} | {npy:.0f} ({npy - idle_numpy:.0f}) | " + " | ".join(cells) + " |",
                      flush=True)


if __name__ == "__main__":
    main()
