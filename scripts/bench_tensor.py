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

Element e (row-major) of input k is 0.5*sin(1 + k + 0.37*e) in both programs.
"""

import os

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rust", help="path of the built tensor_bench example")
    parser.add_argument("--size", type=int, default=256,
                        help="side of the square inputs (not the MLP step's)")
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    args = parser.parse_args()
    global SIZE
    SIZE = args.size
    print(f"numpy {np.__version__}, one thread, size {SIZE}")
    rows = []
    for name in args.workloads:
        ours = bench(name)
        if not args.rust:
            print(json.dumps(ours))
            continue
        line = subprocess.run([args.rust, "--size", str(SIZE), name], check=True, capture_output=True, text=True)
        rust = json.loads(line.stdout)
        ok = agrees(rust["loss"], ours["loss"]) and agrees(rust["gsum"], ours["gsum"])
        rows.append((name, rust["forward_ms"], rust["backward_ms"], rust["total_ms"],
                     ours["total_ms"], rust["total_ms"] / ours["total_ms"], ok))
    if rows:
        print("| workload | gradcalc forward ms | backward ms | total ms | numpy ms | ratio | same loss and gradients |")
        print("|---|---|---|---|---|---|---|")
        for name, fwd, bwd, tot, npy, ratio, ok in rows:
            print(f"| {name} | {fwd:.3f} | {bwd:.3f} | {tot:.3f} | {npy:.3f} | {ratio:.2f}× | {'yes' if ok else 'NO'} |")


if __name__ == "__main__":
    main()
