"""gradcalc in Python and Jupyter: a calculator with gradients.

- ``Session()``: a gradcalc session; ``run(source)`` runs statements and
  commands as ``gradcalc --json`` does and returns its events as dicts
  (docs/json.md); ``names()``, ``value(name)``, ``grad(of, wrt)`` (a float
  for a number, a ``numpy.ndarray`` for a vector or matrix), ``set(name,
  value)`` (a leaf moved, as ``:=`` moves it).
- ``Value``: micrograd's ``Value`` on gradcalc's engine (``+ - * / **``,
  ``relu tanh exp log``, ``.data``, ``.grad``, ``.backward()``).
- ``draw(v)``, ``trace(v)``, ``show(v)``: a ``Value``'s graph as SVG, its
  backward steps as ``:trace`` prints them, the step-through page.
- ``quiz(source, answers)``: practise the backward pass (``:quiz``): each
  next step predicted, checked and scored.
- ``%load_ext gradcalc``: ``%%gradcalc`` cells and the ``%gradcalc`` line
  magic, run in one session per notebook (``session()``).
- ``assignment("hw1.calc")``: a TA's assignment as notebook cells (one
  Markdown and one ``%%gradcalc`` cell per problem, its ``:expect`` checks
  in them); ``seal(key)``, ``transcript()`` and ``check_transcript()``
  for grading
  (docs/homework.md).

Under Pyodide (JupyterLite) the same API, ``Value`` too, runs on the
playground's WebAssembly build (``gradcalc._wasm``).

See docs/notebook.md.
"""

import html as _html
import json as _json
import os as _os
import re as _re
import sys as _sys

try:  # optional: without numpy, vectors and matrices are nested lists
    import numpy as _np
except ImportError:  # pragma: no cover - exercised where numpy is missing
    _np = None

if _sys.platform == "emscripten":
    # Pyodide (JupyterLite): the WebAssembly build in place of the compiled module.
    from . import _wasm as _gradcalc
else:
    try:
        from . import _gradcalc
    except ImportError as _missing:
        raise ImportError(
            "gradcalc's compiled module is missing: the py3-none-any wheel "
            "(gradcalc.wasm inside) runs only under Pyodide; elsewhere install a "
            "platform wheel or build it: pip install gradcalc"
        ) from _missing
Value = _gradcalc.Value
from ._quiz import QuizResult, quiz

__version__ = _gradcalc.VERSION

__all__ = [
    "Error",
    "Session",
    "Value",
    "draw",
    "trace",
    "show",
    "session",
    "quiz",
    "QuizResult",
    "Assignment",
    "assignment",
    "transcript",
    "check_transcript",
    "seal",
]


class Error(Exception):
    """A gradcalc statement failed: ``code`` (a stable word, docs/json.md),
    ``message``, ``line`` and ``column`` (1-based, in the source run),
    ``help`` (a fix, or None) and ``text`` (the report with its caret, as the
    terminal shows it, or None)."""

    def __init__(self, message, code=None, line=None, column=None, help=None, text=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.line = line
        self.column = column
        self.help = help
        self.text = text

    @classmethod
    def from_event(cls, event):
        """The error of a JSON ``error`` event."""
        return cls(
            event.get("message", ""),
            code=event.get("code"),
            line=event.get("line"),
            column=event.get("column"),
            help=event.get("help"),
        )

    @classmethod
    def _from_core(cls, error):
        """The error of the core's ``ValueError(code, message, help)``."""
        code, message, help_ = error.args
        return cls(message, code=code, help=help_)

    def __str__(self):
        where = f" (line {self.line}, column {self.column})" if self.line else ""
        code = f"[{self.code}] " if self.code else ""
        # The fix, as the terminal shows it under the caret: a script's
        # traceback shows only this text.
        fix = f"\nhelp: {self.help}" if self.help else ""
        return f"{code}{self.message}{where}{fix}"

    def _render_traceback_(self):
        # IPython shows these lines instead of a Python traceback.
        return (self.text or f"error: {self}").rstrip("\n").split("\n")


class Text(str):
    """Text that a notebook shows as it is (not as a quoted string)."""

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self))


class Picture:
    """An SVG picture: shown inline in a notebook (``image/svg+xml``);
    ``svg`` is its text, ``save(path)`` writes it."""

    def __init__(self, svg):
        self.svg = svg

    def _repr_svg_(self):
        return self.svg

    def __str__(self):
        return self.svg

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.svg)


def iframe(page, height=None):
    """The HTML that shows ``page`` (a whole HTML document) in a sandboxed
    iframe: its script runs, but its styles and keys stay inside it, and it
    has no storage. Without ``height`` the frame is as wide as the output
    and as high as the page's graph needs across that width (the library
    sizes it: ``gradcalc::notebook::frame``, docs/notebook.md); with
    ``height``, that many pixels."""
    if height is None:
        return _gradcalc.frame(page)
    return (
        '<iframe sandbox="allow-scripts" style="width: 100%; height: '
        f'{int(height)}px; border: 1px solid #ccc" srcdoc="{_html.escape(page, quote=True)}">'
        "</iframe>"
    )


class Page:
    """The step-through page (``:html``): the graph with values and
    gradients and the backward pass stepped with the keys → and ←. Shown
    inline in a notebook in a sandboxed iframe; ``html`` is the page,
    ``save(path)`` writes it."""

    def __init__(self, page):
        self.html = page

    def _repr_html_(self):
        return iframe(self.html)

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html)


_ANSI = _re.compile(r"\x1b\[[0-9;]*m")


def _error_in(pieces, at):
    """The Error of the ``error`` piece ``pieces[at]`` (its report as the
    terminal shows it): its fields from the JSON event of the ``event``
    piece after it (docs/json.md), its ``text`` the report."""
    text = pieces[at][1]
    following = pieces[at + 1] if at + 1 < len(pieces) else None
    if following is not None and following[0] == "event":
        error = Error.from_event(_json.loads(following[1]))
    else:  # not expected: every error the printer writes has its event
        error = Error(_ANSI.sub("", text).strip())
    error.text = text
    return error


class Session:
    """A gradcalc session: its variables, functions and output last from one
    ``run`` to the next.

    Files its commands write follow the rules of scripts: in the working
    directory (or under ``allow_writes``, or anywhere with
    ``allow_writes_anywhere``), never replacing a file unless the command
    says ``-f``.
    """

    def __init__(self, *, allow_writes=(), allow_writes_anywhere=False):
        dirs = [_os.fspath(d) for d in allow_writes]
        self._core = _gradcalc.Core(dirs, bool(allow_writes_anywhere))

    def run(self, source, check=False, *, origin="<input>"):
        """Runs ``source`` (statements and commands, separated by newlines
        or ``;``) as ``gradcalc --json`` runs a file: it stops at the first
        error. Returns the events as dicts with the fields of docs/json.md
        (an error is an event of kind ``error``). With ``check=True`` an
        error raises ``Error`` instead. ``origin`` names the source in
        errors. Ctrl-C (a kernel's interrupt) stops the running statement,
        keeps the session as it was before it (a ``:repeat`` keeps its
        finished steps) and raises ``KeyboardInterrupt``; the events of the
        statements before it (and of a ``:repeat``'s finished steps) are not
        lost: they are the exception's ``events`` attribute (a list of dicts,
        as this returns them)."""
        text, interrupt = self._core.run_json(source, origin)
        events = [_json.loads(line) for line in text.splitlines() if line]
        if interrupt is not None:
            interrupt.events = events
            raise interrupt
        if check:
            for event in events:
                if event.get("kind") == "error":
                    raise Error.from_event(event)
        return events

    def value(self, name):
        """The value of the variable ``name``: a float for a number; for a
        vector or matrix a ``numpy.ndarray`` of float64 with gradcalc's
        shape (``(n,)``, ``(m, n)``), or nested lists where numpy is not
        installed. ``KeyError`` if there is no variable ``name``."""
        value = self._core.value(name)
        if value is None:
            raise KeyError(f"no variable `{name}`")
        return _array_out(*value)

    def grad(self, of, wrt):
        """∂of/∂wrt now, of ``wrt``'s shape (a float, or an array as
        ``value`` gives one): one backward pass from the variable ``of``; 0
        (zeros) where it does not depend on ``wrt`` as it is now. ``of``
        must be a number or of shape ``()``. ``KeyError`` if either is not
        a variable; ``Error`` (with its ``code``) when the gradient cannot
        be had."""
        try:
            value = self._core.grad(of, wrt)
        except ValueError as error:
            raise Error._from_core(error) from None
        return _array_out(*value)

    def names(self):
        """The variables, in the order first assigned (numbers first), each
        with its shape: a dict ``{name: shape}``, shape ``()`` for a number,
        ``(n,)`` for a vector, ``(m, n)`` for a matrix. Iterating it gives
        the names."""
        return {name: tuple(shape) for name, shape in self._core.names()}

    def set(self, name, value):
        """Moves the leaf ``name`` to ``value`` as ``name := value`` does:
        everything built on it is computed again in place; on an error
        (another shape, a derived variable, a value the language refuses)
        the session keeps the old value and ``Error`` is raised with its
        ``code``. ``value``: a number, a (nested) list of numbers, or a numpy
        array of rank ≤ 2. A ragged or non-numeric value raises
        ``ValueError``/``TypeError`` before anything runs. Returns the
        events of the statement."""
        shape, elements = _array_in(value)
        source = _gradcalc.update_source(name, shape, elements)
        try:
            return self.run(source, check=True, origin="<set>")
        except Error as error:
            # Its line and column are in `name := value`, text nobody typed.
            error.line = error.column = None
            raise

    def show(self):
        """The step-through page of the current output (``:html``), shown
        inline in a notebook."""
        ok, content = self._core.page()
        if not ok:
            raise Error(content)
        return Page(content)

    def _repr_html_(self):
        ok, content = self._core.page()
        if ok:
            return iframe(content)
        return f"<pre>gradcalc session: {_html.escape(content)}</pre>"

    def _rich(self, source, origin, color):
        """The pieces ``source`` shows, as ``(kind, content)``, and the
        exception of a Ctrl-C that stopped it (or None); see
        ``gradcalc._magics``."""
        return self._core.run_rich(source, origin, color)


def _array_out(shape, elements):
    """A value from the core: a float for shape ``()``, else a float64
    numpy array of ``shape`` (nested lists without numpy)."""
    if not shape:
        return float(elements[0])
    if _np is not None:
        return _np.array(elements, dtype=_np.float64).reshape(shape)
    if len(shape) == 1:
        return list(elements)
    m, n = shape
    return [list(elements[i * n : (i + 1) * n]) for i in range(m)]


def _number(x, where):
    """``x`` as a float; ``TypeError`` naming ``where`` if it is no number."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        if _np is None or not isinstance(x, (_np.integer, _np.floating)):
            raise TypeError(f"{where} is {type(x).__name__} {x!r}, not a number")
    return float(x)


def _array_in(value):
    """``(shape, elements)`` of a number, a (nested) list or tuple of
    numbers, or a numpy array, row-major. ``ValueError`` for rows of unequal
    length or a rank above 2; ``TypeError`` for anything not a number."""
    if _np is not None and isinstance(value, _np.ndarray):
        if value.dtype.kind not in "iuf":
            raise TypeError(f"an array of {value.dtype} is not numbers: give integers or floats")
        if value.ndim > 2:
            raise ValueError(
                f"gradcalc holds numbers, vectors and matrices: an array of shape {value.shape} is none of them"
            )
        return list(value.shape), [float(x) for x in value.astype(_np.float64).ravel()]
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(row, (list, tuple)) for row in value):
            n = len(value[0])
            for i, row in enumerate(value):
                if len(row) != n:
                    raise ValueError(
                        f"row {i} has {len(row)} element(s) but row 0 has {n}: every row needs the same length"
                    )
                for j, x in enumerate(row):
                    if isinstance(x, (list, tuple)):
                        raise ValueError("gradcalc holds numbers, vectors and matrices: a list nested three deep is none of them")
                    _number(x, f"element [{i}][{j}]")
            return [len(value), n], [float(x) for row in value for x in row]
        for i, x in enumerate(value):
            if isinstance(x, (list, tuple)):
                raise ValueError(f"element {i} is a list where the others are numbers: every row needs to be a list")
        return [len(value)], [_number(x, f"element {i}") for i, x in enumerate(value)]
    return [], [_number(value, "the value")]


_SESSION = None


def session():
    """The notebook's session: the one ``%%gradcalc`` cells run in."""
    global _SESSION
    if _SESSION is None:
        _SESSION = Session()
    return _SESSION


def _value_session(value):
    """A session holding ``value``'s graph as statements, its output ``value``."""
    if not isinstance(value, Value):
        raise TypeError(f"expected a gradcalc Value, not {type(value).__name__}")
    source, _name = _gradcalc.value_source(value)
    s = Session()
    _one(s, source, None)
    return s


def _one(s, source, kind):
    """Runs ``source`` in ``s`` without colour: the content of its first
    piece of ``kind`` (all its text for ``text``); an error raises Error."""
    pieces, interrupt = s._rich(source, "<value>", False)
    if interrupt is not None:
        raise interrupt
    found = []
    for at, (piece, content) in enumerate(pieces):
        if piece == "error":
            raise _error_in(pieces, at)
        if piece == kind:
            found.append(content)
    return "".join(found)


def draw(value):
    """The graph of ``value`` as gradcalc draws it (``:svg``): every node
    with its value and gradient. Shown inline in a notebook."""
    return Picture(_one(_value_session(value), ":svg -", "svg"))


def trace(value):
    """The backward pass from ``value`` as ``:trace`` prints it: the nodes
    in reverse topological order, each upstream gradient × local derivative
    and the accumulation at fan-out."""
    return Text(_one(_value_session(value), ":trace", "text"))


def show(value):
    """The step-through page of ``value``'s graph (``:html``), shown inline
    in a notebook in a sandboxed iframe."""
    return Page(_one(_value_session(value), ":html -", "html"))


from ._homework import Assignment, assignment, check_transcript, seal, transcript  # noqa: E402


def load_ipython_extension(ipython):
    """``%load_ext gradcalc``: registers ``%%gradcalc`` and ``%gradcalc``."""
    from ._magics import register

    register(ipython)
