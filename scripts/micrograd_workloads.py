"""The standard workloads W1-W4 (docs/benchmarks.md) and the moons training of
examples/moons.rs, run with micrograd 0.1.0. Prints one JSON line per run.

    python micrograd_workloads.py W1 100000      # build_ms, backward_ms, out, gsum
    python micrograd_workloads.py moons 100      # 100 SGD steps on 100 points
    python micrograd_workloads.py cli 100000     # the W1 chain as a script would: out, dy/dx

micrograd's topological sort is recursive, so the work runs on a thread with a
1 GiB stack and a recursion limit of 10^7 (workloads.md: the default limit of
1000 breaks W1 at N ~ 500). Medians of `--reps` runs (default 3).
"""

import json
import math
import statistics
import sys
import threading
import time

from micrograd.engine import Value

LAYERS = [(2, 16), (16, 16), (16, 1)]


class SplitMix64:
    def __init__(self, seed):
        self.s = seed

    def uniform(self):
        m = (1 << 64) - 1
        self.s = (self.s + 0x9E3779B97F4A7C15) & m
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
        z ^= z >> 31
        return (z >> 11) * 2.0**-53


def moons(n):
    rng = SplitMix64(42)
    X, Y = [], []
    for i in range(n):
        y = 1.0 if i % 2 == 0 else -1.0
        t = math.pi * rng.uniform()
        n0 = (2 * rng.uniform() - 1) * 0.1
        n1 = (2 * rng.uniform() - 1) * 0.1
        if y > 0:
            X.append((math.cos(t) + n0, math.sin(t) + n1))
        else:
            X.append((1 - math.cos(t) + n0, 0.5 - math.sin(t) + n1))
        Y.append(y)
    return X, Y


def initial_parameters():
    rng = SplitMix64(1337)
    P = []
    for nin, nout in LAYERS:
        for _ in range(nout):
            P.extend(2 * rng.uniform() - 1 for _ in range(nin))
            P.append(0.0)
    return P


def w1_chain(x, n):
    y = x
    for _ in range(n):
        y = y * 1.0001 + 0.0001
    return y


def w2_wide(xs):
    y = xs[0] * xs[0]
    for x in xs[1:]:
        y = y + x * x
    return y


def w3_fan(x, n):
    y = x
    for _ in range(n):
        y = y * x + x
    return y


def w4_mlp(P, X, Y):
    losses = None
    scores = []
    for (x0, x1), yi in zip(X, Y):
        h = [Value(x0), Value(x1)]
        idx = 0
        for li, (nin, nout) in enumerate(LAYERS):
            out = []
            for _ in range(nout):
                act = P[idx + nin]
                for j in range(nin):
                    act = act + P[idx + j] * h[j]
                idx += nin + 1
                if li < len(LAYERS) - 1:
                    act = act.relu()
                out.append(act)
            h = out
        s = h[0]
        scores.append(s)
        li_ = (s * (-yi) + 1.0).relu()
        losses = li_ if losses is None else losses + li_
    data_loss = losses * (1.0 / len(X))
    reg = P[0] * P[0]
    for p in P[1:]:
        reg = reg + p * p
    return data_loss + reg * 1e-4, scores


def build(name, n):
    if name == "W1":
        x = Value(0.5)
        return w1_chain(x, n), [x]
    if name == "W2":
        xs = [Value(0.5 + (i % 100) / 100) for i in range(n)]
        return w2_wide(xs), xs
    if name == "W3":
        x = Value(0.5)
        return w3_fan(x, n), [x]
    X, Y = moons(n)
    P = [Value(p) for p in initial_parameters()]
    return w4_mlp(P, X, Y)[0], P


def bench(name, n, reps):
    builds, backwards = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        out, leaves = build(name, n)
        t1 = time.perf_counter()
        out.backward()
        t2 = time.perf_counter()
        builds.append((t1 - t0) * 1e3)
        backwards.append((t2 - t1) * 1e3)
        result = {"out": out.data, "gsum": sum(v.grad for v in leaves)}
        del out, leaves
    return {
        "workload": name,
        "n": n,
        "build_ms": statistics.median(builds),
        "backward_ms": statistics.median(backwards),
        **result,
    }


def train_moons(steps):
    X, Y = moons(100)
    P = [Value(p) for p in initial_parameters()]
    t0 = time.perf_counter()
    for k in range(steps):
        loss, scores = w4_mlp(P, X, Y)
        acc = sum((yi > 0) == (s.data > 0) for yi, s in zip(Y, scores)) / len(Y)
        for p in P:
            p.grad = 0.0
        loss.backward()
        lr = 1.0 - 0.9 * k / 100
        for p in P:
            p.data -= lr * p.grad
        last = loss.data
    seconds = time.perf_counter() - t0
    return {"workload": "moons", "steps": steps, "seconds": seconds, "final_loss": last, "accuracy": acc}


def cli(n):
    """What `gradcalc w1.calc` does for the N-statement W1 script: build, backward."""
    t0 = time.perf_counter()
    x = Value(0.5)
    y = w1_chain(x, n)
    y.backward()
    return {"workload": "cli-W1", "n": n, "seconds": time.perf_counter() - t0, "out": y.data, "dydx": x.grad}


def main():
    name, n = sys.argv[1], int(sys.argv[2])
    reps = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--reps" else 3
    result = {}

    def run():
        if name == "moons":
            result.update(train_moons(n))
        elif name == "cli":
            result.update(cli(n))
        else:
            result.update(bench(name, n, reps))

    sys.setrecursionlimit(10**7)
    threading.stack_size(1 << 30)
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
