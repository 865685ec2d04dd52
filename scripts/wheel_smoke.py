"""The installed wheel works: it imports (without Rust on PATH), runs the
statements of a cell, and gives a matrix's gradient as computed by hand,
as a numpy array where numpy is installed and as lists where it is not.
Run by the release workflow and by .ci/run after installing a built wheel."""

import math

import gradcalc

s = gradcalc.Session()
s.run("W = [[1, 2], [3, 4]]; x = [1, -1]; L = sum(tanh(W @ x))", check=True)
# ∂L/∂W = (1 − tanh²(Wx)) xᵀ, by hand: Wx = [-1, -1].
d = 1 - math.tanh(-1.0) ** 2
expected = [[d, -d], [d, -d]]
got = s.grad("L", "W")
rows = got.tolist() if hasattr(got, "tolist") else got
assert all(
    math.isclose(a, b, rel_tol=1e-14) for row, want in zip(rows, expected) for a, b in zip(row, want)
), rows
[grad] = s.run("y = 3; z = y*y; :grad y", check=True)[-1:]
assert grad["value"] == 6, grad
print("gradcalc", gradcalc.__version__, "from", gradcalc.__file__, "(" + type(got).__name__ + "): ok")
