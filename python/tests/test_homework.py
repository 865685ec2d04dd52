"""Homework in the notebook: examples/hw1_key.calc sealed, opened as cells
(one Markdown and one %%gradcalc cell per problem), answered right and
wrong, checked by its sealed :expect lines, exported as a transcript and
rerun to the same numbers — in IPython and in a real kernel (nbclient).

The expected numbers, by hand: the neuron o = tanh(2·(−3) + 0·1 +
6.8813735870) = tanh(0.8813735870) = 1/√2, ∂o/∂w1 = x1·(1 − o²) = 1, ∂o/∂b
= 0.5; the fan-out answered wrong as y = (a + b)·b gives ∂y/∂a = b = 1 (not
2) and ∂y/∂b = a + 2b = 4 (not 5); a 2×3 W where a 2×2 one is expected is of
the wrong shape."""

import os
import pathlib
import re

import pytest

import gradcalc

KEY = pathlib.Path(__file__).resolve().parent.parent.parent / "examples" / "hw1_key.calc"

# What a student writes in place of each `# (your work here)`: right,
# wrong, of the wrong shape.
WORK = [
    "o = tanh(x1*w1 + x2*w2 + b)",
    "y = (a + b)*b",
    "W = [[1, 2, 0], [3, 4, 0]]; x = [1, -1, 0]; L = sum(tanh(W @ x))",
]
SOLUTIONS = ["o = tanh(x1*w1 + x2*w2 + b)", "y = (a + b)*(b + 1)", "L = sum(tanh(W @ x))"]


@pytest.fixture(scope="module")
def sealed(tmp_path_factory):
    path = tmp_path_factory.mktemp("hw") / "hw1.calc"
    path.write_text(gradcalc.seal(str(KEY)), encoding="utf-8")
    return path


def answered(assignment):
    """The assignment's notebook with WORK in place of each work line."""
    cells = [dict(cell) for cell in assignment.notebook["cells"]]
    problems = [cell for cell in cells if cell["metadata"].get("gradcalc")]
    assert len(problems) == len(WORK)
    for cell, work in zip(problems, WORK):
        assert cell["source"].count("# (your work here)") == 1
        cell["source"] = cell["source"].replace("# (your work here)", work)
    notebook = dict(assignment.notebook)
    notebook["cells"] = cells
    return notebook


def test_the_sealed_key_hides_the_values_and_solutions(sealed):
    text = sealed.read_text(encoding="utf-8")
    assert text.count(" sealed=1:") == 6
    for line in SOLUTIONS:
        assert line not in text.splitlines()
    with pytest.raises(ValueError, match="line 2"):
        gradcalc.seal("x = 1\ny = x +* 2\n:expect y\n")


def test_an_assignment_is_one_markdown_and_one_code_cell_per_problem(sealed):
    nbformat = pytest.importorskip("nbformat")
    a = gradcalc.assignment(str(sealed))
    assert a.title == "Homework 1: backprop by hand"
    titled = [p for p in a.problems if p["title"]]
    assert [p["title"] for p in titled] == [
        "Problem 1: a neuron",
        "Problem 2: a fan-out",
        "Problem 3: a matrix layer",
    ]
    assert titled[1]["code"] == ["a = 2; b = 1", "# (your work here)"]
    assert titled[1]["checks"] == [("∂y/∂a", True), ("∂y/∂b", True)]
    nbformat.validate(nbformat.from_dict(a.notebook))
    kinds = [cell["cell_type"] for cell in a.notebook["cells"]]
    # The title, %load_ext; a Markdown and a code cell for each problem; the
    # transcript's heading and cell.
    assert kinds == ["markdown", "code"] + ["markdown", "code"] * 3 + ["markdown", "code"]
    first = a.notebook["cells"][3]["source"]
    assert first.startswith("%%gradcalc\nx1 = 2; x2 = 0; w1 = -3; w2 = 1; b = 6.8813735870195432\n")
    assert "\n:expect ∂o/∂w1 sealed=1:" in first
    assert a.notebook["cells"][2]["source"].startswith("## Problem 1: a neuron\n\nThe tanh neuron")
    # Nothing of it ran, and no solution is in it.
    code = [line for cell in a.notebook["cells"] if cell["cell_type"] == "code" for line in cell["source"].split("\n")]
    assert not set(SOLUTIONS) & set(code)
    assert a._repr_markdown_().startswith("# Homework 1: backprop by hand\n")
    # Saved beside the file; not over a notebook that may hold work.
    path = a.save()
    assert path == str(sealed.with_suffix(".ipynb"))
    nbformat.validate(nbformat.read(path, as_version=4))
    with pytest.raises(FileExistsError):
        a.save()


def test_the_checks_work_in_gradcalc_cells_and_the_transcript_reruns(sealed):
    IPython = pytest.importorskip("IPython")
    from IPython.testing.globalipapp import get_ipython
    from IPython.utils.capture import capture_output

    from gradcalc import _homework

    # The one IPython of this process (test_magics.py may have started it).
    ip = get_ipython() or IPython.get_ipython()
    ip.run_line_magic("load_ext", "gradcalc")
    # A fresh session and transcript (other tests ran cells in this process).
    gradcalc._SESSION = None
    _homework._INPUTS.clear()
    shown = []
    for cell in answered(gradcalc.assignment(str(sealed)))["cells"]:
        if cell["source"].startswith("%%gradcalc\n"):
            with capture_output() as captured:
                ip.run_cell(cell["source"])
            shown.extend(o.data["text/plain"] for o in captured.outputs)
    text = "".join(shown)
    for line in ["✓ o: correct", "✓ ∂o/∂w1: correct", "✓ ∂o/∂b: correct",
                 "✗ ∂y/∂a: wrong", "✗ ∂y/∂b: wrong", "✗ ∂L/∂W: wrong shape (2×3, expected 2×2)"]:
        assert line in text, text
    jsonl = gradcalc.transcript("jsonl")
    rerun = gradcalc.check_transcript(jsonl)
    assert rerun["reproduces"], rerun["differences"]
    assert (rerun["correct"], rerun["wrong"], rerun["wrong_shape"]) == (3, 2, 1)
    md = gradcalc.transcript("md")
    assert "Checks: 3 correct, 2 wrong, 1 of the wrong shape, 0 not answered." in md
    assert "> o = tanh(x1*w1 + x2*w2 + b)\no = 0.7071067812\n" in md
    # A number edited by hand does not reproduce.
    edited = re.sub(r'("name":"o","value":)[-0-9.e]+', r"\g<1>0.7", jsonl, count=1)
    assert edited != jsonl
    assert not gradcalc.check_transcript(edited)["reproduces"]
    with pytest.raises(ValueError, match="line 1"):
        gradcalc.check_transcript('{"kind": "value"}\n')


def test_the_assignment_notebook_runs_in_a_kernel(sealed, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.from_dict(answered(gradcalc.assignment(str(sealed))))
    nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()

    def text(cell):
        return "".join(
            o.get("text", "") if o["output_type"] == "stream" else o.get("data", {}).get("text/plain", "")
            for o in cell.get("outputs", [])
        )

    problems = [cell for cell in nb.cells if cell.metadata.get("gradcalc")]
    assert "✓ ∂o/∂b: correct" in text(problems[0])
    assert "✗ ∂y/∂a: wrong" in text(problems[1])
    assert "✗ ∂L/∂W: wrong shape (2×3, expected 2×2)" in text(problems[2])
    # The last cell printed the Markdown transcript and wrote the JSON Lines,
    # which reruns to the same numbers.
    assert "Checks: 3 correct, 2 wrong, 1 of the wrong shape, 0 not answered." in text(nb.cells[-1])
    written = tmp_path / "hw1.transcript.jsonl"
    rerun = gradcalc.check_transcript(str(written))
    assert rerun["reproduces"], rerun["differences"]
    assert (rerun["correct"], rerun["wrong"], rerun["wrong_shape"]) == (3, 2, 1)
    assert os.path.getsize(written) > 0
