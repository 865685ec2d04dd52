"""What the Pyodide check runs, both under Pyodide (scripts/pyodide_run.mjs
runs this file there after micropip installed the Pyodide wheel) and
natively (python/tests/test_pyodide.py imports it), so that the two can be
compared: ``cases()`` returns everything as plain JSON data.

``Value``: micrograd's own computations (``micrograd_cases.py``: its
sanity check, its test of more ops, a backward pass twice, its MLP trained
ten steps), a repr, labels, inputs, refusals, the trace and picture of a
graph, and the graph compacted after many nodes.

Only + − × ÷, relu, integer powers and sums are in the results compared
exactly, so that both builds compute the same bits (the WebAssembly build's
exp and tanh are Rust's own, the native build's are the C library's: they
may differ in the last bit); ``close_…`` results (tanh, exp, log, sigmoid)
are compared to 1e-15."""

import json
import os
import sys

import gradcalc
from micrograd_cases import more_ops, sanity, train, twice

SCALAR = "x = 2; y = 3; z = x*y + x"
MATRIX = "W = [[1, 2], [3, 4]]; v = [1, -1]; h = W @ v; L = sum(h * h)"


def _plain(value):
    """A float, or an array (numpy or lists) as nested lists."""
    return value.tolist() if hasattr(value, "tolist") else value


def _error(call):
    """``[type name, code or None, message]`` of what ``call()`` raises."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the check compares what is raised
        return [type(error).__name__, getattr(error, "code", None), str(error)]
    return None


def cases(workdir):
    """Every result, in ``workdir`` (where ``:svg FILE`` writes)."""
    os.chdir(workdir)
    out = {}
    s = gradcalc.Session()
    out["scalar"] = s.run(SCALAR + "; :grad; :trace; :svg -; :html -")
    out["scalar_grad"] = [s.grad("z", "x"), s.grad("z", "y")]
    m = gradcalc.Session()
    out["matrix"] = m.run(MATRIX + "; :grad W; :grad v; :trace; :svg -; :html -")
    out["matrix_grad"] = [_plain(m.grad("L", "W")), _plain(m.grad("L", "v"))]
    out["names"] = [[name, list(shape)] for name, shape in m.names().items()]
    out["values"] = [_plain(m.value("W")), _plain(m.value("h")), m.value("L")]
    out["set"] = m.set("v", [2, 0])
    out["after_set"] = [_plain(m.value("h")), m.value("L"), _plain(m.grad("L", "v"))]
    out["error"] = m.run("q = 1 +")
    out["error_raised"] = _error(lambda: m.run("q = 1 +", check=True))
    out["grad_refused"] = _error(lambda: m.grad("v", "W"))
    out["no_variable"] = _error(lambda: m.value("nothing"))
    out["set_refused"] = _error(lambda: m.set("h", [1, 2]))
    # What a %%gradcalc cell shows: the pieces of the cell's source as the
    # magic reads it (`:svg` with no file shows the picture).
    cell = gradcalc.Session()
    source = gradcalc._gradcalc.cell_source(SCALAR + "\n:trace\n:svg\n:show\nq = 1 +")
    pieces, interrupt = cell._rich(source, "<cell>", True)
    out["cell_source"] = source
    out["cell"] = [[kind, content] for kind, content in pieces]
    out["cell_interrupt"] = interrupt is not None
    # A file a command writes, read back.
    f = gradcalc.Session()
    out["file_events"] = f.run(SCALAR + "; :svg graph.svg")
    with open(os.path.join(workdir, "graph.svg"), encoding="utf-8") as svg:
        out["file"] = svg.read()
    out["version"] = gradcalc.__version__
    out.update(value_cases())
    if sys.platform == "emscripten":
        out["pyodide_only_interrupt"] = interrupt_case()
    return out


# A long descent (L = c·w after 2000 updates, c = 0.999^2000 + (1 −
# 0.999^2000)/0.001; each step moves w by lr·c), as test_run_interrupt.py runs
# it natively.
SETUP = "p = 5; w = 0.5; L = w; :repeat 2000 L = L*0.999 + w"
LONG = ":descend L lr=1e-9 steps=1000000 w"


def interrupt_case():
    """Under Pyodide only (``pyodide_run.mjs``'s ``pyodide_host``): SIGINT
    written into Pyodide's interrupt buffer by another thread stops a long
    ``:descend`` in ``Session.run`` and in a cell, keeping the session and
    the finished steps. The signal can land before the descent's first step
    (in Python, or while the statement is set up, which is then undone):
    then again, the key pressed later each time (the outcome is checked
    whenever it lands)."""
    from pyodide_host import interrupt_after

    out = {}
    s = gradcalc.Session()
    s.run(SETUP, check=True)
    for attempt in range(6):
        interrupt_after(50 * 3**attempt)
        try:
            s.run(LONG)
        except KeyboardInterrupt as error:
            events = getattr(error, "events", None)
            if not events or events[-1]["kind"] != "descent":
                continue
            descent = events[-1]
            out["run"] = {
                "attempts": attempt + 1,
                "kind": descent["kind"],
                "interrupted": descent.get("interrupted"),
                "steps": descent.get("steps"),
                "w": s.value("w"),
                "L": s.value("L"),
                "last_row": descent["rows"][-1]["values"],
            }
            break
    else:
        out["run"] = "never stopped inside the run"
    for attempt in range(6):
        interrupt_after(50 * 3**attempt)
        try:
            pieces, stopped = s._rich(LONG, "<cell>", False)
        except KeyboardInterrupt:
            continue
        if "interrupted after" not in "".join(content for _, content in pieces):
            continue
        out["cell"] = {
            "attempts": attempt + 1,
            "stopped": type(stopped).__name__,
            "said": [
                line
                for kind, content in pieces
                if kind == "text"
                for line in content.splitlines()
                if "interrupted after" in line
            ],
        }
        break
    else:
        out["cell"] = "never stopped inside the cell"
    # The session goes on.
    s.run("z = p + 1", check=True)
    out["after"] = [s.value("z"), s.value("p")]
    return out


def value_cases():
    """micrograd's ``Value`` on gradcalc's engine."""
    V = gradcalc.Value
    out = {}
    x, y = sanity(V)
    out["value_sanity"] = [y.data, x.grad]
    out["value_more_ops"] = [[v.data, v.grad] for v in more_ops(V)]
    out["value_twice"] = [list(pair) for pair in twice(V)]
    out["value_mlp_losses"] = train(V)
    a = V(2.0, label="a")
    b = a * 3
    b.label = "b"
    (b * a).backward()
    out["value_repr"] = [repr(a), repr(V(-1.5)), repr(V(float("nan")))]
    out["value_graph"] = [a.label, b.label, b._op, a._op, [p.data for p in b._prev], [p._op for p in b._prev]]
    out["value_refused"] = [
        _error(lambda: setattr(b, "data", 1.0)),
        _error(lambda: a + "one")[0],
        _error(lambda: V(1.0, (a,)))[0],
        _error(lambda: V("1"))[0],
    ]
    a.data -= 0.5 * a.grad
    a.grad = 0
    out["value_set"] = [a.data, a.grad, b.data]
    out["value_float"] = float(V(0.25) * 2)
    out["value_trace"] = str(gradcalc.trace(y))
    out["value_svg"] = str(gradcalc.draw(y))
    out["value_source"] = list(gradcalc._gradcalc.value_source(y))
    # The graph compacted once it has doubled (at least 65 536 nodes):
    # 140 000 nodes made (a constant and a product per `*`), what stays is
    # what live Values reach.
    w = V(0.5)
    for _ in range(1400):
        t = w
        for _ in range(50):
            t = t * 1.0001
        t.backward()
        w.grad = 0
    del t
    out["value_nodes_bounded"] = gradcalc._gradcalc.arena_nodes() <= 2 * 65536
    out["value_after_many"] = [w.data]
    out["close_value_transcendental"] = [
        [f(V(x)).data for f in (V.tanh, V.exp, V.sigmoid)] + [V(abs(x) + 0.5).log().data] for x in (-1.0, 0.123, 2.0)
    ]
    return out


if __name__ == "__main__":
    print(json.dumps(cases(os.getcwd())))
