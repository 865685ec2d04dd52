"""Homework in a notebook (docs/homework.md): an assignment (a ``.calc`` file
a TA wrote, sealed or not) as notebook cells, its ``:expect`` checks run in
``%%gradcalc`` cells, and a transcript of the cells run, which ``gradcalc
--check-transcript`` (or ``check_transcript``) reruns to the same numbers.

The problems are read by gradcalc itself (``_gradcalc.assignment_problems``,
the reading of ``gradcalc --assignment``) and transcripts are recorded and
rerun by its ``transcript`` module, so that the notebook, the terminal and
the playground agree.
"""

import datetime as _datetime
import json as _json
import os as _os

from . import _gradcalc

# The %%gradcalc cells run in the notebook's session, in order (their source
# as typed): what a transcript reruns.
_INPUTS = []


def _note_input(source):
    """Keeps a ``%%gradcalc`` cell's source for the transcript."""
    _INPUTS.append(source)


def _read(source):
    """``(text, path)``: the text of the file ``source`` names, or ``source``
    itself when it holds a line break or names no file."""
    if "\n" not in source and _os.path.isfile(source):
        with open(source, encoding="utf-8") as f:
            return f.read(), source
    return source, None


def _markdown_cell(text, index):
    return {"cell_type": "markdown", "id": f"gradcalc-{index}", "metadata": {}, "source": text}


def _code_cell(text, index, problem=None):
    metadata = {} if problem is None else {"gradcalc": {"problem": problem}}
    return {
        "cell_type": "code",
        "id": f"gradcalc-{index}",
        "metadata": metadata,
        "execution_count": None,
        "outputs": [],
        "source": text,
    }


def _quiz_cell(problem):
    """The source of a quiz problem's code cell: Python that runs the
    problem's statements and then each ``:quiz`` line in the notebook's
    session with ``gradcalc.quiz`` (each question asked in a box, the
    answers part of the transcript), then its ``:expect`` lines, if any."""
    code = "\n".join(problem["code"])
    lines = ["# Run this cell: each question is asked in a box below (`?` shows the answer, `q` stops)."]
    for number, quiz in enumerate(problem["quizzes"]):
        source = repr(code) if number == 0 and code.strip() else "None"
        lines.append(f"gradcalc.quiz({source}, command={quiz['command']!r}, session=gradcalc.session())")
    lines.extend(f"%gradcalc {line}" for line in problem["expects"])
    return "\n".join(lines)


class Assignment:
    """An assignment read from a ``.calc`` file without running anything:
    ``title``, ``problems`` (dicts of ``title``, ``text``, ``code``,
    ``checks``, ``expects``, ``quizzes``), ``cells`` (nbformat 4 cells: one
    Markdown cell and one code cell per problem — ``%%gradcalc``, or for a
    problem with a ``:quiz`` a ``gradcalc.quiz`` call) and ``notebook`` (them
    as a notebook, an ``nbformat.NotebookNode`` where nbformat is
    installed); ``save(path)`` writes the notebook. Shown in a notebook as
    its problems in Markdown."""

    def __init__(self, text, path=None):
        read = _gradcalc.assignment_problems(text)
        self.source = text
        self.path = path
        self.title = read["title"]
        self.problems = read["problems"]
        self.cells = self._cells()
        self.notebook = self._notebook()

    def _cells(self):
        cells = []
        head = [f"# {self.title}" if self.title else "# Assignment"]
        problems = self.problems
        first = problems[0] if problems else None
        if first and not first["title"] and not first["code"] and not first["expects"] and not first["quizzes"]:
            text = "\n".join(problems[0]["text"]).strip()
            if text:
                head.append(text)
            problems = problems[1:]
        head.append(
            "Run each problem's cell after writing your work where it says "
            "`# (your work here)`: its `:expect` lines check your answers "
            "(correct, off by N %, wrong, wrong shape), and a quiz asks its "
            "questions one at a time. The last cell exports a transcript for "
            "grading."
        )
        cells.append(_markdown_cell("\n\n".join(head), len(cells)))
        cells.append(_code_cell("%load_ext gradcalc\nimport gradcalc", len(cells)))
        for number, problem in enumerate(problems):
            text = [f"## {problem['title']}" if problem["title"] else "## Problem"]
            body = "\n".join(problem["text"]).strip()
            if body:
                text.append(body)
            for quiz in problem["quizzes"]:
                text.append(
                    f"Quiz: predict {quiz['asks']}. Run the cell below: it runs the problem's "
                    "statements, then asks each question in a box, one at a time (`?` shows "
                    "the answer, counted as not right)."
                )
            if problem["checks"]:
                text.append("Checked: " + ", ".join(f"`{q}`" for q, _sealed in problem["checks"]))
            cells.append(_markdown_cell("\n\n".join(text), len(cells)))
            if problem["quizzes"]:
                code = _quiz_cell(problem)
            else:
                code = "\n".join(["%%gradcalc"] + problem["code"] + problem["expects"])
            cells.append(_code_cell(code, len(cells), number))
        cells.append(_markdown_cell("## Transcript\n\nYour work and its checks, to hand in.", len(cells)))
        name = _os.path.splitext(_os.path.basename(self.path))[0] if self.path else "assignment"
        cells.append(
            _code_cell(
                f'print(gradcalc.transcript("md"))\ngradcalc.transcript("jsonl", path="{name}.transcript.jsonl")',
                len(cells),
            )
        )
        return cells

    def _notebook(self):
        notebook = {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {
                "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                "language_info": {"name": "python"},
            },
            "cells": self.cells,
        }
        try:
            import nbformat
        except ImportError:
            return notebook
        return nbformat.from_dict(notebook)

    def save(self, path=None, *, overwrite=False):
        """Writes the notebook to ``path`` (by default the ``.calc`` file's
        name with ``.ipynb``) and returns the path. A notebook already there
        holds a student's work: ``FileExistsError`` unless ``overwrite``."""
        if path is None:
            if self.path is None:
                raise ValueError("give a path: this assignment was not read from a file")
            path = _os.path.splitext(self.path)[0] + ".ipynb"
        if _os.path.exists(path) and not overwrite:
            raise FileExistsError(f"{path} exists (it may hold work): give overwrite=True to replace it")
        with open(path, "w", encoding="utf-8") as f:
            _json.dump(dict(self.notebook), f, ensure_ascii=False, indent=1)
            f.write("\n")
        return path

    def _repr_markdown_(self):
        return "\n\n".join(cell["source"] for cell in self.cells if cell["cell_type"] == "markdown")


def assignment(source):
    """The assignment in the file ``source`` names (or in ``source`` itself,
    its text), read without running anything: an ``Assignment`` whose
    ``notebook`` has one Markdown and one ``%%gradcalc`` cell per problem;
    ``assignment("hw1.calc").save()`` writes ``hw1.ipynb``."""
    text, path = _read(source)
    return Assignment(text, path)


def seal(key):
    """The TA's key (its text, or the file it names) sealed as ``gradcalc
    --seal`` seals it: the text students receive, each ``:expect`` value a
    salted hash (random salts) and each solution block ``# (your work
    here)``. ``ValueError`` (with the line) when the key does not run."""
    text, _path = _read(key)
    return _gradcalc.seal_key(text, _os.urandom(16 * (text.count(":expect") + 1)))


def _now():
    return _datetime.datetime.now(_datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def transcript(format="jsonl", *, path=None, origin="notebook"):
    """The transcript of the ``%%gradcalc`` cells run so far in this
    notebook, run again in a fresh session: ``"jsonl"`` (JSON Lines, which
    ``check_transcript`` and ``gradcalc --check-transcript`` rerun to the
    same numbers) or ``"md"`` (Markdown for people), with ``origin`` and the
    time. Written to ``path`` when given; returns the text. A cell that
    stopped at an error is rerun whole, going on after the error, as
    ``gradcalc --transcript`` runs a file."""
    source = "".join(cell if cell.endswith("\n") else cell + "\n" for cell in _INPUTS)
    text = _gradcalc.transcript_of(source, origin, _now(), format)
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return text


def check_transcript(transcript):
    """Reruns a JSON Lines transcript (its text, or the file it names) in a
    fresh session as ``gradcalc --check-transcript`` does: a dict of
    ``reproduces``, ``statements``, ``differences`` (each ``(statement,
    text, what differs)``) and the checks counted (``correct``, ``wrong``,
    ``wrong_shape``, ``unanswered``). ``ValueError`` for text that is not a
    transcript."""
    text, _path = _read(transcript)
    return _gradcalc.rerun_transcript(text)


__all__ = ["Assignment", "assignment", "check_transcript", "seal", "transcript"]
