"""Vectors and matrices from Python: names with shapes, values and gradients
as numpy arrays, leaves set from arrays as `:=` sets them; and the same
without numpy (lists). The expected values are numpy's own computation."""

import subprocess
import sys

import pytest

import gradcalc
from gradcalc import Session

np = pytest.importorskip("numpy")

SOURCE = "W = [[1, 2], [3, 4]]; x = [1, -1]; L = sum(tanh(W @ x))"


def expected(W, x):
    """L = Σ tanh(W x) and its gradients, by hand with numpy:
    ∂L/∂W = (1 − tanh²(Wx)) xᵀ, ∂L/∂x = Wᵀ (1 − tanh²(Wx))."""
    h = np.tanh(W @ x)
    upstream = 1 - h**2
    return h.sum(), np.outer(upstream, x), W.T @ upstream


def test_names_values_and_gradients_of_matrices():
    s = Session()
    s.run(SOURCE, check=True)
    assert s.names() == {"W": (2, 2), "x": (2,), "L": ()}
    W = s.value("W")
    assert isinstance(W, np.ndarray) and W.dtype == np.float64 and W.shape == (2, 2)
    np.testing.assert_array_equal(W, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(s.value("x"), [1.0, -1.0])
    L, dW, dx = expected(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, -1.0]))
    assert isinstance(s.value("L"), float)
    assert s.value("L") == pytest.approx(L, rel=1e-15)
    gW = s.grad("L", "W")
    assert gW.shape == (2, 2)
    np.testing.assert_allclose(gW, dW, rtol=1e-14)
    np.testing.assert_allclose(s.grad("L", "x"), dx, rtol=1e-14)


def test_numbers_and_tensors_together():
    s = Session()
    s.run("a = 2; b = a*a", check=True)
    s.run(SOURCE, check=True)
    assert list(s.names()) == ["a", "b", "W", "x", "L"]
    assert s.grad("b", "a") == 4.0
    np.testing.assert_array_equal(s.grad("b", "W"), np.zeros((2, 2)))  # b reads no tensor
    assert s.grad("L", "a") == 0.0


def test_the_gradient_of_a_vector_is_refused_with_its_code():
    s = Session()
    s.run(SOURCE, check=True)
    with pytest.raises(gradcalc.Error) as caught:
        s.grad("x", "W")
    assert caught.value.code == "shape"
    assert "sum(x)" in caught.value.help
    with pytest.raises(KeyError):
        s.grad("L", "nope")
    with pytest.raises(KeyError):
        s.value("nope")


def test_set_moves_a_leaf_as_colon_equals_does():
    s = Session()
    s.run(SOURCE, check=True)
    W2 = np.array([[0.5, -1.0], [2.0, 0.25]])
    event, moved = s.set("W", W2)
    assert event["name"] == "W"
    np.testing.assert_array_equal(s.value("W"), W2)
    L, dW, _ = expected(W2, np.array([1.0, -1.0]))
    # What moved, as `:=` lists it: L, with its value before (W @ x = [-1, -1]).
    assert moved["kind"] == "moved"
    [changed] = moved["changed"]
    assert changed["name"] == "L"
    assert changed["value"] == pytest.approx(L, rel=1e-15)
    assert changed["before"] == pytest.approx(2 * np.tanh(-1.0), rel=1e-15)
    assert s.value("L") == pytest.approx(L, rel=1e-15)  # L computed again in place
    np.testing.assert_allclose(s.grad("L", "W"), dW, rtol=1e-14)
    # A list works as well as an array; exact values survive the round trip.
    s.set("x", [0.1, 1 / 3])
    assert s.value("x").tolist() == [0.1, 1 / 3]
    s.set("W", np.array([[1, 2], [3, 4]], dtype=np.int32))
    np.testing.assert_array_equal(s.value("W"), [[1.0, 2.0], [3.0, 4.0]])


def test_set_keeps_the_old_value_on_an_error():
    s = Session()
    s.run(SOURCE, check=True)
    before = s.value("L")
    with pytest.raises(gradcalc.Error) as caught:
        s.set("W", np.ones((2, 3)))
    assert caught.value.code == "shape"
    np.testing.assert_array_equal(s.value("W"), [[1.0, 2.0], [3.0, 4.0]])
    assert s.value("L") == before
    with pytest.raises(gradcalc.Error):
        s.set("L", 1.0)  # derived, not a leaf: the language refuses `L := 1`
    with pytest.raises(gradcalc.Error) as caught:
        s.set("nope", [1.0])
    # The error of the statement `nope := [1.0]` itself.
    [error] = Session().run("nope := [1.0]")
    assert (caught.value.code, caught.value.message) == (error["code"], error["message"])
    assert "is not a variable" in caught.value.message


def test_ragged_and_non_numeric_values_are_refused_before_running():
    s = Session()
    s.run(SOURCE, check=True)
    with pytest.raises(ValueError, match="row 1 has 1 element"):
        s.set("W", [[1, 2], [3]])
    with pytest.raises(TypeError, match="not a number"):
        s.set("W", [["a", 2], [3, 4]])
    with pytest.raises(TypeError, match="not numbers"):
        s.set("W", np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(ValueError, match="none of them"):
        s.set("W", np.ones((2, 2, 2)))
    with pytest.raises(TypeError):
        s.set("x", [True, False])
    with pytest.raises(ValueError, match="not a variable name"):
        s.set("x; :reset", 1)
    np.testing.assert_array_equal(s.value("W"), [[1.0, 2.0], [3.0, 4.0]])
    assert list(s.names()) == ["W", "x", "L"]


def test_nan_and_inf_go_through_the_language():
    # They are written as the language's `nan` and `inf`: what the language
    # accepts in a leaf, the leaf takes.
    s = Session()
    s.run("v = [1, 2]; m = max(v)", check=True)
    s.set("v", np.array([np.inf, -np.inf]))
    assert s.value("v").tolist() == [np.inf, -np.inf]
    s.set("v", [float("nan"), 1.0])
    assert np.isnan(s.value("v")[0])


def test_without_numpy_values_are_lists():
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "import gradcalc\n"
        "s = gradcalc.Session()\n"
        f"s.run({SOURCE!r}, check=True)\n"
        "s.set('W', [[0.5, 1], [2, 3]])\n"
        "print(repr(s.value('W')), repr(s.value('x')), type(s.value('L')).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[[0.5, 1.0], [2.0, 3.0]] [1.0, -1.0] float\n"
