"""What the Pyodide check runs, both under Pyodide (scripts/pyodide_run.mjs
runs this file there after micropip installed the Pyodide wheel) and
natively (python/tests/test_pyodide.py imports it), so that the two can be
compared: ``cases()`` returns everything as plain JSON data.

Only + − × and sums are used, so that both builds compute the same bits
(the WebAssembly build's exp and tanh are Rust's own, the native build's
are the C library's: they may differ in the last bit)."""

import json
import os
import sys

import gradcalc

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
    if sys.platform == "emscripten":  # `Value` is native-only
        out["value_class"] = _error(lambda: gradcalc.Value(1.0))
    return out


if __name__ == "__main__":
    print(json.dumps(cases(os.getcwd())))
