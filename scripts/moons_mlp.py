#!/usr/bin/env python3
"""The reference for examples/moons_mlp.calc: micrograd's moons MLP
(2-16-16-1, relu hidden layers, the max-margin loss and an L2 penalty of
1e-4 on every parameter) in matrix form, its gradients by hand-written
backpropagation in numpy (not by gradcalc), trained by plain gradient
descent as `:descend` does (every parameter moved at once by -lr * grad).

The weights are uniform(-1, 1) as micrograd initialises them, drawn from
gradcalc's generator after `:seed 1` (xoshiro256** seeded by SplitMix64,
written again here from Vigna's reference code): u = (next >> 11) / 2^53,
a weight lo + (hi - lo) * u, row-major, W1 then W2 then w3.

Output: `--calc` prints the data lines of the example; the default prints
tests/data/moons_mlp.tsv: one line a step (0 = the start), the loss as
Python's repr (shortest round-trip text).

Run: pip install numpy && python3 scripts/moons_mlp.py > tests/data/moons_mlp.tsv
"""

import sys

import numpy as np

MASK = (1 << 64) - 1
STEPS = 100
RATE = 0.5


def split_mix(seed):
    s = seed
    while True:
        s = (s + 0x9E3779B97F4A7C15) & MASK
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


class Xoshiro:
    def __init__(self, seed):
        g = split_mix(seed)
        self.s = [next(g) for _ in range(4)]

    def next(self):
        s = self.s
        rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & MASK
        result = (rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def uniform(self, shape, lo, hi):
        n = int(np.prod(shape))
        u = [(self.next() >> 11) * (1.0 / (1 << 53)) for _ in range(n)]
        return np.array([lo + (hi - lo) * x for x in u]).reshape(shape)


def moons(n, noise, seed):
    """sklearn's make_moons, written out: half the points on the upper
    half circle, half on the lower one shifted, plus normal noise; rounded
    to 3 decimals so that the literal in the example is the same number."""
    rng = np.random.RandomState(seed)
    t = np.linspace(0, np.pi, n // 2)
    upper = np.stack([np.cos(t), np.sin(t)], 1)
    lower = np.stack([1 - np.cos(t), 1 - np.sin(t) - 0.5], 1)
    X = np.concatenate([upper, lower]) + rng.normal(scale=noise, size=(n, 2))
    y = np.concatenate([np.ones(n // 2), -np.ones(n // 2)])
    return np.round(X, 3), y


def main():
    X, y = moons(100, 0.1, 1)
    if "--calc" in sys.argv:
        rows = ", ".join(f"[{float(a)!r}, {float(b)!r}]" for a, b in X)
        print(f"X = [{rows}]")
        print("y = [" + ", ".join(str(int(v)) for v in y) + "]")
        return
    rng = Xoshiro(1)
    W1 = rng.uniform((2, 16), -1, 1)
    W2 = rng.uniform((16, 16), -1, 1)
    w3 = rng.uniform((16,), -1, 1)
    b1, b2, b3 = np.zeros(16), np.zeros(16), np.zeros(1)
    n = len(y)
    for step in range(STEPS + 1):
        u1 = X @ W1 + b1
        h1 = np.maximum(u1, 0)
        u2 = h1 @ W2 + b2
        h2 = np.maximum(u2, 0)
        s = h2 @ w3 + b3
        margin = 1 - y * s
        data = np.sum(np.maximum(margin, 0)) / n
        reg = sum(np.sum(p * p) for p in (W1, b1, W2, b2, w3, b3))
        L = data + 1e-4 * reg
        acc = np.mean((s > 0) == (y > 0))
        print(f"{step}\t{float(L)!r}\t{float(acc)!r}")
        if step == STEPS:
            break
        ds = -y * (margin > 0) / n
        dw3 = h2.T @ ds
        db3 = np.array([ds.sum()])
        dh2 = np.outer(ds, w3)
        du2 = dh2 * (u2 > 0)
        dW2 = h1.T @ du2
        db2 = du2.sum(0)
        dh1 = du2 @ W2.T
        du1 = dh1 * (u1 > 0)
        dW1 = X.T @ du1
        db1 = du1.sum(0)
        grads = [dW1, db1, dW2, db2, dw3, db3]
        params = [W1, b1, W2, b2, w3, b3]
        for p, g in zip(params, grads):
            p -= RATE * (g + 2e-4 * p)


main()
