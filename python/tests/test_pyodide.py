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
import shutil
import subprocess
import sys
import zipfile

import pytest

import pyodide_cases

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
    assert sorted(set(under_pyodide) - {"value_class"}) == sorted(native)
    for key in native:
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


def test_value_is_native_only_with_a_clear_message(under_pyodide):
    assert under_pyodide["value_class"][0] == "NotImplementedError"
    assert "compiled engine" in under_pyodide["value_class"][2]


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
