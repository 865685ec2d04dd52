"""A typed use of gradcalc, checked with `mypy --strict` (test_stubs.py):
every call below must type-check against the stubs (python/gradcalc/
__init__.pyi), and the example runs."""

import numpy as np

import gradcalc
from gradcalc import Error, Session, Value, draw, show, trace


def loss_and_gradient(s: Session) -> tuple[float, np.ndarray]:
    s.run("W = [[1, 2], [3, 4]]; x = [1, -1]; L = sum(tanh(W @ x))", check=True)
    shapes: dict[str, tuple[int, ...]] = s.names()
    assert shapes["W"] == (2, 2)
    s.set("W", np.eye(2))
    s.set("x", [0.5, 0.25])
    loss = s.value("L")
    gradient = s.grad("L", "W")
    assert isinstance(loss, float) and isinstance(gradient, np.ndarray)
    return loss, gradient


def neuron() -> Value:
    x = Value(2.0, label="x")
    w = Value(-3.0, label="w")
    out = (x * w + 6.88).tanh()
    out.backward()
    grad: float = x.grad
    assert grad != 0.0
    return out


def pictures(v: Value) -> str:
    svg: str = draw(v).svg
    page: str = show(v).html
    text: str = trace(v)
    return svg + page + text


def failing(s: Session) -> str:
    try:
        s.run("y = nope", check=True)
    except Error as e:
        code: str | None = e.code
        return code or ""
    return ""


if __name__ == "__main__":
    session: Session = gradcalc.session()
    print(loss_and_gradient(session)[0], pictures(neuron())[:4], failing(session))
