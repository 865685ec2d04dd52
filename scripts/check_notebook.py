"""Runs examples/lecture.ipynb headless (nbclient, the kernel `python3` of
the Python running this script, with the `gradcalc` package installed) and
checks what its cells show: the neuron's gradients, the pictures as SVG, the
accumulation at fan-out, the Markdown table, the page in a sandboxed iframe,
the descent, and the Value MLP landing on the same loss as `:descend`.

    python scripts/check_notebook.py [NOTEBOOK]

Exits 0 when every check holds, else 1 with the failed checks listed.
"""

import pathlib
import sys

import nbformat
from nbclient import NotebookClient

HERE = pathlib.Path(__file__).resolve().parent.parent


def shown(cell):
    """Every mimebundle and stream text a code cell shows, in order."""
    for output in cell.get("outputs", []):
        if output["output_type"] in ("display_data", "execute_result"):
            yield output["data"]
        elif output["output_type"] == "stream":
            yield {"stream": output["text"]}
        elif output["output_type"] == "error":
            yield {"error": "\n".join(output["traceback"])}


def cell_starting(nb, start):
    """The code cell whose source starts with `start`."""
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith(start):
            return list(shown(cell))
    raise KeyError(start)


def main(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    failures = []

    def check(what, ok):
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            failures.append(what)

    errors = [o for c in nb.cells if c.cell_type == "code" for o in shown(c) if "error" in o]
    check("no cell fails", not errors)
    [grads] = cell_starting(nb, "%%gradcalc\nx1 = 2")
    text = grads["text/plain"]
    check("the neuron's gradients", "∂o/∂x1 = -1.5" in text and "∂o/∂w1 = 1" in text and "∂o/∂b = 0.5" in text)
    check("colours as HTML", 'style="color: #b3261e">-1.5</span>' in grads["text/html"])
    [trace] = cell_starting(nb, "%%gradcalc\n:trace")
    check("the trace", trace["text/plain"].startswith("backward pass from o: "))
    [svg] = cell_starting(nb, "%%gradcalc\n:svg -")
    check("`:svg -` is a picture", svg.get("image/svg+xml", "").startswith("<svg"))
    [fan] = cell_starting(nb, "%%gradcalc\na = 3")
    check("fan-out accumulates", "(3rd of 3 uses: accumulated)" in fan["text/plain"])
    [table] = cell_starting(nb, "%%gradcalc\n:trace md")
    check("`:trace md` is Markdown", table.get("text/markdown", "").startswith("| Step | Node |"))
    [mlp] = cell_starting(nb, "%%gradcalc\nneuron(")
    check("the MLP's loss", "L = 0.6858581548" in mlp["text/plain"])
    [page] = cell_starting(nb, "%%gradcalc\n:html -")
    check("the page in a sandboxed iframe", '<iframe sandbox="allow-scripts"' in page.get("text/html", ""))
    [descent] = cell_starting(nb, "%%gradcalc\n:descend")
    check("the descent ran 10 steps", "10" in descent["text/plain"])
    printed = "".join(o.get("stream", "") for o in cell_starting(nb, "import gradcalc"))
    check("Value's MLP has :descend's loss", "the same: True" in printed)
    [drawn] = cell_starting(nb, "gradcalc.draw(L)")
    check("draw(L) is a picture", drawn.get("image/svg+xml", "").startswith("<svg"))
    [traced] = cell_starting(nb, "print(gradcalc.trace(L)")
    check("trace(L)", traced["stream"].startswith("backward pass from L: "))
    return 1 if failures else 0


if __name__ == "__main__":
    notebook = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "examples" / "lecture.ipynb"
    sys.exit(main(notebook.resolve()))
