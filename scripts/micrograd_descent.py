#!/usr/bin/env python3
"""Gradient descent with micrograd (PyPI `micrograd`, Karpathy's engine), for
tests/it/descent.rs: the values `:descend` must give.

Two problems, each written with micrograd's `Value` exactly as the calculator
writes it (same operations in the same order):

- the neuron of examples/neuron.calc with L = (o - 0.95)^2, descended over
  w1 and b with learning rate 0.5, 20 steps;
- the moons MLP of examples/moons_descent.calc (hinge loss and L2 penalty),
  descended over its thirteen parameters with learning rate 0.2, 40 steps.

Each step is micrograd's SGD: zero the gradients, one `backward()` from the
loss, then every parameter moved by -rate * grad at once.

Output (tests/data/micrograd_descent.tsv): one line a step, tab-separated:
problem, step (0 = the start), loss, then the parameters' values in the order
of the `# problem` line; numbers as Python's repr (shortest round-trip text).

Run: pip install micrograd && python3 scripts/micrograd_descent.py > tests/data/micrograd_descent.tsv
"""

import math

from micrograd.engine import Value


def tanh(v):
    """tanh as a micrograd op: PyPI's `Value` has no tanh, so it is added the
    way micrograd's lecture notebook does (local derivative 1 - tanh^2)."""
    t = math.tanh(v.data)
    out = Value(t, (v,), "tanh")

    def _backward():
        v.grad += (1 - t ** 2) * out.grad

    out._backward = _backward
    return out


def neuron():
    p = {"w1": Value(-3.0), "b": Value(6.8813735870195432)}
    x1, x2, w2 = Value(2.0), Value(0.0), Value(1.0)

    def loss():
        o = tanh(x1 * p["w1"] + x2 * w2 + p["b"])
        return (o - 0.95) ** 2

    return p, loss, 0.5, 20


def moons():
    start = [("a1", 0.5), ("a2", -0.4), ("c1", 0.1), ("b1", -0.3), ("b2", 0.8),
             ("c2", 0.2), ("d1", 0.7), ("d2", 0.6), ("c3", -0.1), ("v1", -0.5),
             ("v2", 0.6), ("v3", 0.2), ("c0", 0.0)]
    p = {name: Value(value) for name, value in start}

    def h(x, y, a, b, c):
        return (a * x + b * y + c).relu()

    def score(x, y):
        return (p["v1"] * h(x, y, p["a1"], p["a2"], p["c1"])
                + p["v2"] * h(x, y, p["b1"], p["b2"], p["c2"])
                + p["v3"] * h(x, y, p["d1"], p["d2"], p["c3"]) + p["c0"])

    def loss():
        data = ((1 - score(0, 1)).relu() + (1 - score(-1, 0.2)).relu()
                + (1 + score(1, -0.5)).relu() + (1 + score(2, 0.3)).relu())
        reg = (p["a1"] ** 2 + p["a2"] ** 2 + p["b1"] ** 2 + p["b2"] ** 2
               + p["d1"] ** 2 + p["d2"] ** 2 + p["v1"] ** 2 + p["v2"] ** 2
               + p["v3"] ** 2)
        return data / 4 + 0.0001 * reg

    return p, loss, 0.2, 40


def descend(name, problem):
    params, loss, rate, steps = problem
    print("# " + name + "\t" + "\t".join(params))
    for step in range(steps + 1):
        L = loss()
        print("\t".join([name, str(step), repr(L.data)]
                        + [repr(v.data) for v in params.values()]))
        if step == steps:
            break
        for v in params.values():
            v.grad = 0.0
        L.backward()
        for v in params.values():
            v.data -= rate * v.grad


descend("neuron", neuron())
descend("moons", moons())
