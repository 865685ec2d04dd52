"""gradcalc.Value against micrograd's Value: the computations of micrograd's
engine tests (its numbers, which micrograd checks against PyTorch, kept here
as literals) and a two-layer MLP trained a few steps. Where the micrograd
package is installed, every number is also compared with it, run side by
side."""

import gc
import math
import random

import pytest

import gradcalc
from gradcalc import Value

try:
    from micrograd.engine import Value as Micro
except ImportError:  # the literals still check gradcalc
    Micro = None

both = pytest.mark.parametrize(
    "V",
    [Value] + ([Micro] if Micro is not None else []),
    ids=["gradcalc"] + (["micrograd"] if Micro is not None else []),
)


def close(a, b, rel=1e-12):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def sanity(V):
    """micrograd's sanity check: relu, products and sums with fan-out."""
    x = V(-4.0)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    return x, y


@both
def test_sanity_check_has_micrograd_and_pytorch_numbers(V):
    x, y = sanity(V)
    assert y.data == -20.0
    assert x.grad == 46.0


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


@both
def test_more_ops_have_micrograd_and_pytorch_numbers(V):
    a, b, g = more_ops(V)
    # The values micrograd's test takes from PyTorch (tolerance 1e-6 there).
    assert close(g.data, 24.70408163265306)
    assert close(a.grad, 138.83381924198252)
    assert close(b.grad, 645.5772594752186)


@pytest.mark.skipif(Micro is None, reason="micrograd is not installed")
def test_more_ops_side_by_side_with_micrograd():
    ours, theirs = more_ops(Value), more_ops(Micro)
    for v, m in zip(ours, theirs):
        assert close(v.data, m.data)
        assert close(v.grad, m.grad)


@pytest.mark.parametrize("x", [-1.0, 0.123, 2.0])
def test_tanh_and_exp_as_pytorch(x):
    v = Value(x)
    y = v.tanh()
    y.backward()
    assert close(y.data, math.tanh(x))
    assert close(v.grad, 1 - math.tanh(x) ** 2)
    v = Value(x)
    y = v.exp()
    y.backward()
    assert close(y.data, math.exp(x))
    assert close(v.grad, math.exp(x))


def test_log_relu_and_reflected_operators():
    a = Value(3.0)
    y = a.log()
    y.backward()
    assert (y.data, a.grad) == (math.log(3.0), 1 / 3.0)
    for x, grad in [(2.0, 1.0), (0.0, 0.0), (-1.5, 0.0)]:  # relu'(0) = 0
        a = Value(x)
        y = a.relu()
        y.backward()
        assert (y.data, a.grad) == (max(x, 0.0), grad)
    a = Value(4.0)
    assert (2 * a).data == 8.0
    assert (1 - a).data == -3.0
    assert (a - 1).data == 3.0
    assert (2 / a).data == 0.5
    assert (a / 2).data == 2.0
    assert (3 + a).data == 7.0
    assert (-a).data == -4.0
    assert (a**0.5).data == 2.0
    y = 1 / a
    y.backward()
    assert a.grad == -1 / 16
    with pytest.raises(TypeError):
        a + "one"


def test_repr_as_micrograd():
    a = Value(2.0)
    assert repr(a) == "Value(data=2.0, grad=0.0)"
    (a * a).backward()
    assert repr(a) == "Value(data=2.0, grad=4.0)"


def test_data_and_grad_can_be_set():
    w = Value(1.0)
    y = w * 3
    y.backward()
    assert w.grad == 3.0
    w.data -= 0.1 * w.grad  # micrograd's update
    w.grad = 0
    assert (w.data, w.grad) == (0.7, 0.0)
    assert y.data == 3.0  # built before: keeps its value, as in micrograd
    assert (w * 3).data == 0.7 * 3
    with pytest.raises(ValueError, match="only a leaf's data can be set"):
        y.data = 1.0


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


@both
def test_backward_accumulates_as_micrograd(V):
    assert twice(V) == ((20.0, 1.0), (144.0, 21.0))


def test_labels_and_inputs():
    a = Value(2.0, label="a")
    b = a * 3
    b.label = "b"
    assert (a.label, b.label, b._op) == ("a", "b", "*")
    assert [p.data for p in b._prev] == [2.0, 3.0]


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


# The losses micrograd's Value gives (micrograd 0.1.0, by train(Micro)).
EXPECTED_LOSSES = [
    6.3385092804282515, 1.9996442985630039, 1.1272425328116906, 0.842019740264556,
    0.8095737425964146, 0.7786272802557249, 0.7488661304899196, 0.7202302347030866,
    0.6926704888537278, 0.6661429365905442,
]


def test_mlp_trains_to_micrograds_losses():
    ours = train(Value)
    assert ours[-1] < ours[0]
    assert all(close(a, b) for a, b in zip(ours, EXPECTED_LOSSES)), ours
    if Micro is not None:
        theirs = train(Micro)
        assert all(close(a, b) for a, b in zip(ours, theirs)), (ours, theirs)


def test_memory_stays_bounded_over_many_steps():
    w = Value(0.5)
    for _ in range(3000):
        x = w
        for _ in range(100):  # a new graph of 200 nodes every step
            x = x * 1.0001
        x.backward()
        w.grad = 0
    gc.collect()
    # The graph is compacted to what live Values reach whenever it has
    # doubled (at least 65 536 nodes): 600 000 nodes were made.
    assert gradcalc._gradcalc.arena_nodes() <= 2 * 65536
