"""micrograd's own computations, written over any ``Value`` class (``V``):
the sanity check and the test of more ops from micrograd's engine tests, a
backward pass run twice, and micrograd's two-layer MLP (nn.py's ``Neuron``,
``Layer``, ``MLP``) trained a few steps on four points. Used by
``test_value.py`` (gradcalc's ``Value`` against micrograd's numbers) and by
``pyodide_cases.py`` (the same computations under Pyodide, compared with the
native package's bit for bit). No pytest here: it runs under Pyodide too."""

import random


def sanity(V):
    """micrograd's sanity check: relu, products and sums with fan-out."""
    x = V(-4.0)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    return x, y


def more_ops(V):
    """micrograd's test of more ops: +=, reflected ops, powers, division."""
    a = V(-4.0)
    b = V(2.0)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    g.backward()
    return a, b, g


def twice(V):
    """backward() twice, and from a node whose .grad is already set:
    micrograd accumulates onto .grad and never zeroes it."""
    x = V(3.0)
    y = x * x + x
    y.backward()
    y.backward()
    first = (x.grad, y.grad)
    x = V(3.0)
    h = x * x
    y = h * 2 + h
    y.backward()
    z = h * h
    z.backward()
    return first, (x.grad, h.grad)


# A two-layer MLP as micrograd's nn.py builds one, written over any Value
# class, its weights drawn from one seeded generator for both.


class Neuron:
    def __init__(self, V, inputs, rng, nonlin=True):
        self.w = [V(rng.uniform(-1, 1)) for _ in range(inputs)]
        self.b = V(0)
        self.nonlin = nonlin

    def __call__(self, x):
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        return act.relu() if self.nonlin else act

    def parameters(self):
        return self.w + [self.b]


class Layer:
    def __init__(self, V, inputs, outputs, rng, nonlin):
        self.neurons = [Neuron(V, inputs, rng, nonlin) for _ in range(outputs)]

    def __call__(self, x):
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]


class MLP:
    def __init__(self, V, inputs, sizes, rng):
        sz = [inputs] + sizes
        self.layers = [
            Layer(V, sz[i], sz[i + 1], rng, nonlin=i != len(sizes) - 1) for i in range(len(sizes))
        ]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]


XS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
YS = [1.0, -1.0, -1.0, 1.0]


def train(V, steps=10, rate=0.02):
    model = MLP(V, 3, [4, 1], random.Random(1337))
    losses = []
    for _ in range(steps):
        scores = [model(x) for x in XS]
        loss = sum((s - y) ** 2 for s, y in zip(scores, YS))
        for p in model.parameters():
            p.grad = 0
        loss.backward()
        for p in model.parameters():
            p.data -= rate * p.grad
        losses.append(loss.data)
    return losses


