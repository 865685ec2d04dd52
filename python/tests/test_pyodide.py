"""The Pyodide wheel under Pyodide (from npm, in Node): micropip installs it
from the local file, ``pyodide_cases.py`` runs there — a scalar and a matrix
``:grad``, ``:trace``, ``:svg -``, ``:html -``, an error, values, gradients,
``set``, a cell's pieces and a file written — and every result equals the
native package's (this process's), bit for bit; the gradients are also
checked against values computed by hand.

Needs what .ci/run prepares (skipped without it, saying so):
``GRADCALC_PYODIDE_DIR`` (holds node_modules/pyodide), ``GRADCALC_PYODIDE_WHEELS``
(micropip's and packaging's wheels) and ``GRADCALC_PYODIDE_WHEEL`` (from
scripts/build-pyodide-wheel.sh)."""

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

import pyodide_cases
from test_value import EXPECTED_LOSSES

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NEEDS = ["GRADCALC_PYODIDE_DIR", "GRADCALC_PYODIDE_WHEELS", "GRADCALC_PYODIDE_WHEEL"]


@pytest.fixture(scope="module")
def under_pyodide():
    """The cases' results under Pyodide."""
    missing = [name for name in NEEDS if not os.environ.get(name)]
    if missing or shutil.which("node") is None:
        pytest.skip(f"the Pyodide check needs node and {', '.join(missing) or 'nothing else'} (set by .ci/run)")
    ran = subprocess.run(
        [
            "node",
            os.path.join(ROOT, "scripts", "pyodide_run.mjs"),
            os.environ["GRADCALC_PYODIDE_DIR"],
            os.environ["GRADCALC_PYODIDE_WHEELS"],
            os.environ["GRADCALC_PYODIDE_WHEEL"],
            os.path.join(HERE, "pyodide_cases.py"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    """The same cases' results with the compiled package."""
    before = os.getcwd()
    try:
        return json.loads(json.dumps(pyodide_cases.cases(str(tmp_path_factory.mktemp("native")))))
    finally:
        os.chdir(before)


def test_every_result_equals_the_native_packages(under_pyodide, native):
    only = {key for key in under_pyodide if key.startswith("pyodide_only_")}
    assert sorted(set(under_pyodide) - only) == sorted(native)
    for key in native:
        if key.startswith("close_"):  # exp, tanh, … may differ in the last bit
            for got, want in zip(under_pyodide[key], native[key]):
                assert got == pytest.approx(want, rel=1e-15), key
        else:
            assert under_pyodide[key] == native[key], key


def test_gradients_are_the_hand_computed_ones(under_pyodide):
    r = under_pyodide
    # z = x·y + x at x = 2, y = 3: ∂z/∂x = y + 1 = 4, ∂z/∂y = x = 2.
    assert r["scalar_grad"] == [4.0, 2.0]
    assert [(e["wrt"], e["value"]) for e in r["scalar"] if e["kind"] == "grad"] == [("x", 4), ("y", 2)]
    # h = W v = [-1, -1], L = Σh² = 2, ∂L/∂h = 2h: ∂L/∂W = 2h vᵀ, ∂L/∂v = Wᵀ 2h.
    assert r["values"] == [[[1.0, 2.0], [3.0, 4.0]], [-1.0, -1.0], 2.0]
    assert r["matrix_grad"] == [[[-2.0, 2.0], [-2.0, 2.0]], [-8.0, -12.0]]
    # After v := [2, 0]: h = [2, 6], L = 40, ∂L/∂v = Wᵀ [4, 12] = [40, 56].
    assert r["after_set"] == [[2.0, 6.0], 40.0, [40.0, 56.0]]
    assert r["names"] == [["W", [2, 2]], ["v", [2]], ["h", [2]], ["L", []]]


def test_pictures_pages_traces_and_errors(under_pyodide):
    r = under_pyodide
    outputs = {e["what"]: e["content"] for e in r["matrix"] if e["kind"] == "output"}
    assert outputs["the graph as SVG"].startswith("<svg")
    assert outputs["the graph as a web page"].startswith("<!DOCTYPE html>")
    [trace] = [e for e in r["matrix"] if e["kind"] == "trace"]
    assert trace["of"] == "L" and trace["steps"][0]["node"] == "L"
    [error] = [e for e in r["error"] if e["kind"] == "error"]
    assert (error["code"], error["line"], error["column"]) == ("parse", 1, 8)
    assert r["error_raised"][:2] == ["Error", "parse"]
    assert r["grad_refused"][:2] == ["Error", "shape"]
    assert r["no_variable"][0] == "KeyError"
    # A cell: `:svg` and `:show` without a file show in the cell.
    assert r["cell_source"].splitlines()[2:4] == [":svg -", ":html -"]
    assert [kind for kind, _ in r["cell"]] == ["text", "svg", "html", "error", "event"]
    assert r["cell_interrupt"] is False
    # `:svg graph.svg` wrote the picture into Pyodide's file system.
    [wrote] = [e for e in r["file_events"] if e["kind"] == "wrote"]
    assert wrote["path"] == "graph.svg" and wrote["bytes"] == len(r["file"].encode("utf-8"))
    assert r["file"].startswith("<svg")


def test_value_gives_micrograds_numbers_under_pyodide(under_pyodide):
    r = under_pyodide
    # micrograd's engine tests (their numbers from PyTorch).
    assert r["value_sanity"] == [-20.0, 46.0]
    (a, a_grad), (b, b_grad), (g, _) = r["value_more_ops"]
    assert (a, b) == (-4.0, 2.0)
    assert g == pytest.approx(24.70408163265306, rel=1e-12)
    assert a_grad == pytest.approx(138.83381924198252, rel=1e-12)
    assert b_grad == pytest.approx(645.5772594752186, rel=1e-12)
    assert r["value_twice"] == [[20.0, 1.0], [144.0, 21.0]]
    # micrograd 0.1.0's losses for the MLP (test_value.EXPECTED_LOSSES).
    assert r["value_mlp_losses"] == pytest.approx(EXPECTED_LOSSES, rel=1e-12)
    # b = 3a, L = b·a = 3a² at a = 2: ∂L/∂a = 6a = 12; a.data -= 0.5·12.
    assert r["value_repr"] == ["Value(data=2.0, grad=12.0)", "Value(data=-1.5, grad=0.0)", "Value(data=nan, grad=0.0)"]
    assert r["value_graph"] == ["a", "b", "*", "", [2.0, 3.0], ["", ""]]
    assert r["value_set"] == [-4.0, 0.0, 6.0]
    assert r["value_refused"][0][0] == "ValueError" and "only a leaf's data" in r["value_refused"][0][2]
    assert r["value_refused"][1:] == ["TypeError", "TypeError", "TypeError"]
    assert r["value_float"] == 0.5
    assert r["value_nodes_bounded"] is True
    assert r["value_after_many"] == [0.5]
    assert r["value_svg"].startswith("<svg")
    assert r["value_source"][1] == "out" and r["value_source"][0].endswith(":backward out\n")


def test_pyodides_interrupt_stops_a_descent_and_keeps_the_session(under_pyodide):
    r = under_pyodide["pyodide_only_interrupt"]
    run = r["run"]
    assert isinstance(run, dict), run
    assert (run["kind"], run["interrupted"]) == ("descent", True)
    k = run["steps"]
    assert 0 < k < 1_000_000
    # The finished steps are kept: w moved by k·lr·c, and L = c·w.
    c = 0.999**2000 + (1 - 0.999**2000) / 0.001
    assert run["w"] == pytest.approx(0.5 - k * 1e-9 * c, rel=1e-12)
    assert run["last_row"] == [run["w"]]
    assert run["L"] == pytest.approx(c * run["w"], rel=1e-12)
    cell = r["cell"]
    assert isinstance(cell, dict), cell
    assert cell["stopped"] == "KeyboardInterrupt"
    [said] = cell["said"]
    assert re.search(r"interrupted after \d+ of 1000000 steps by Ctrl-C, the steps done are kept", said), said
    assert r["after"] == [6.0, 5.0]


def test_the_pyodide_wheel_elsewhere_says_it_runs_only_under_pyodide(tmp_path):
    wheel = os.environ.get("GRADCALC_PYODIDE_WHEEL")
    if not wheel:
        pytest.skip("needs GRADCALC_PYODIDE_WHEEL (set by .ci/run)")
    zipfile.ZipFile(wheel).extractall(tmp_path)
    ran = subprocess.run(
        [sys.executable, "-c", "import gradcalc"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert ran.returncode == 1
    assert "ImportError: gradcalc's compiled module is missing" in ran.stderr
    assert "runs only under Pyodide" in ran.stderr
