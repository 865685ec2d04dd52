"""gradcalc.Value against micrograd's Value: seconds per training step of
micrograd's demo network, MLP(2, [16, 16, 1]) with ReLU, on 100 points
(hinge loss and L2 as micrograd's demo), the same weights for both.

    python scripts/bench_value.py [STEPS]

Needs the gradcalc package (pip install ./python) and micrograd. Prints one
line per implementation, best of three runs, in CPU time of the process
(time.process_time: on a loaded machine the wall time also holds what other
processes ran); the two are run in turn so that a loaded machine slows both
alike. Also the nodes a step builds (counted in micrograd's graph of the
loss: every Value reachable from it, leaves and constants included, as the
docs count nodes) and so the time a node.
"""

import random
import sys
import time

from micrograd.engine import Value as Micro

from gradcalc import Value


def network(V, rng):
    sizes = [2, 16, 16, 1]
    return [
        [([V(rng.uniform(-1, 1)) for _ in range(sizes[i])], V(0.0)) for _ in range(sizes[i + 1])]
        for i in range(3)
    ]


def forward(net, x):
    for i, layer in enumerate(net):
        out = []
        for w, b in layer:
            act = sum((wi * xi for wi, xi in zip(w, x)), b)
            out.append(act.relu() if i < len(net) - 1 else act)
        x = out
    return x[0]


def parameters(net):
    return [p for layer in net for w, b in layer for p in w + [b]]


def step(V, net, points, labels, k):
    scores = [forward(net, x) for x in points]
    losses = [(1 + -y * s).relu() for y, s in zip(labels, scores)]
    loss = sum(losses) * (1.0 / len(losses)) + 1e-4 * sum(p * p for p in parameters(net))
    for p in parameters(net):
        p.grad = 0
    loss.backward()
    rate = 1.0 - 0.9 * k / 100
    for p in parameters(net):
        p.data -= rate * p.grad
    return loss.data


def run(V, steps):
    rng = random.Random(7)
    points = [[rng.uniform(-2, 2), rng.uniform(-2, 2)] for _ in range(100)]
    labels = [1.0 if x * x + y * y < 2 else -1.0 for x, y in points]
    net = network(V, random.Random(42))
    start = time.process_time()
    losses = [step(V, net, points, labels, k) for k in range(steps)]
    return (time.process_time() - start) / steps, losses


def nodes_of_a_step():
    """The nodes of one step's graph: micrograd's Values reachable from the
    loss (each parameter, input and constant once)."""
    rng = random.Random(7)
    points = [[rng.uniform(-2, 2), rng.uniform(-2, 2)] for _ in range(100)]
    labels = [1.0 if x * x + y * y < 2 else -1.0 for x, y in points]
    net = network(Micro, random.Random(42))
    scores = [forward(net, x) for x in points]
    losses = [(1 + -y * s).relu() for y, s in zip(labels, scores)]
    loss = sum(losses) * (1.0 / len(losses)) + 1e-4 * sum(p * p for p in parameters(net))
    seen, todo = {id(loss)}, [loss]
    while todo:
        for child in todo.pop()._prev:
            if id(child) not in seen:
                seen.add(id(child))
                todo.append(child)
    return len(seen)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    best = {"micrograd": float("inf"), "gradcalc": float("inf")}
    for _ in range(3):
        for name, V in (("micrograd", Micro), ("gradcalc", Value)):
            seconds, losses = run(V, steps)
            best[name] = min(best[name], seconds)
            last = losses
    ours, theirs = run(Value, steps)[1], run(Micro, steps)[1]
    same = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(ours, theirs))
    nodes = nodes_of_a_step()
    for name, seconds in best.items():
        print(f"{name:9}  {seconds * 1000:8.1f} ms a step, {seconds / nodes * 1e6:.2f} µs a node ({nodes} nodes)")
    print(f"speed-up {best['micrograd'] / best['gradcalc']:.1f}x; losses agree to {same:.1e} (last {last[-1]:.6f})")


if __name__ == "__main__":
    main()
