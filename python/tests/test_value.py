"""gradcalc.Value against micrograd's Value: the computations of micrograd's
engine tests (its numbers, which micrograd checks against PyTorch, kept here
as literals) and a two-layer MLP trained a few steps. Where the micrograd
package is installed, every number is also compared with it, run side by
side."""

import gc
import math

import pytest

import gradcalc
from gradcalc import Value
from micrograd_cases import more_ops, sanity, train, twice

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


@both
def test_sanity_check_has_micrograd_and_pytorch_numbers(V):
    x, y = sanity(V)
    assert y.data == -20.0
    assert x.grad == 46.0


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


@both
def test_backward_accumulates_as_micrograd(V):
    assert twice(V) == ((20.0, 1.0), (144.0, 21.0))


def test_labels_and_inputs():
    a = Value(2.0, label="a")
    b = a * 3
    b.label = "b"
    assert (a.label, b.label, b._op) == ("a", "b", "*")
    assert [p.data for p in b._prev] == [2.0, 3.0]


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
