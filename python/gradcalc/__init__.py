"""gradcalc in Python and Jupyter: a calculator with gradients.

- ``Session()``: a gradcalc session; ``run(source)`` runs statements and
  commands as ``gradcalc --json`` does and returns its events as dicts
  (docs/json.md); ``value(name)``, ``grad(of, wrt)``.
- ``Value``: micrograd's ``Value`` on gradcalc's engine (``+ - * / **``,
  ``relu tanh exp log``, ``.data``, ``.grad``, ``.backward()``).
- ``draw(v)``, ``trace(v)``, ``show(v)``: a ``Value``'s graph as SVG, its
  backward steps as ``:trace`` prints them, the step-through page.
- ``%load_ext gradcalc``: ``%%gradcalc`` cells and the ``%gradcalc`` line
  magic, run in one session per notebook (``session()``).

See docs/notebook.md.
"""

import html as _html
import json as _json
import os as _os
import re as _re

from . import _gradcalc
from ._gradcalc import Value

__version__ = _gradcalc.VERSION

__all__ = ["Error", "Session", "Value", "draw", "trace", "show", "session"]


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

    def __str__(self):
        where = f" (line {self.line}, column {self.column})" if self.line else ""
        code = f"[{self.code}] " if self.code else ""
        return f"{code}{self.message}{where}"

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


def iframe(page, height=560):
    """The HTML that shows ``page`` (a whole HTML document) in a sandboxed
    iframe: its script runs, but its styles and keys stay inside it."""
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


_PLACE = _re.compile(r"┌─ .*:(\d+):(\d+)")
_ANSI = _re.compile(r"\x1b\[[0-9;]*m")
_CARET = _re.compile(r"│\s*\^+ (.+)$")


def _error_of(text):
    """The Error for a report as the terminal shows it (``error: …``, the
    place, the caret, ``= help: …``)."""
    plain = _ANSI.sub("", text)
    lines = plain.splitlines()
    message = next((l[len("error: "):] for l in lines if l.startswith("error: ")), plain.strip())
    place = _PLACE.search(plain)
    help_ = next((m.group(1) for m in map(_CARET.search, lines) if m), None)
    if help_ is None:
        help_ = next((l.split("= help: ", 1)[1] for l in lines if "= help: " in l), None)
    line, column = (int(place.group(1)), int(place.group(2))) if place else (None, None)
    return Error(message, line=line, column=column, help=help_, text=text)


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
        finished steps) and raises ``KeyboardInterrupt``."""
        text = self._core.run_json(source, origin)
        events = [_json.loads(line) for line in text.splitlines() if line]
        if check:
            for event in events:
                if event.get("kind") == "error":
                    raise Error.from_event(event)
        return events

    def value(self, name):
        """The value of the variable ``name`` (a float); ``KeyError`` if
        there is none."""
        value = self._core.value(name)
        if value is None:
            raise KeyError(f"no variable `{name}`")
        return value

    def grad(self, of, wrt):
        """∂of/∂wrt now (a float): one backward pass from the variable
        ``of``; 0 when it does not depend on ``wrt`` as it is now.
        ``KeyError`` if either is not a variable."""
        return self._core.grad(of, wrt)

    def names(self):
        """The names of the variables."""
        return self._core.names()

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
        """The pieces ``source`` shows, as ``(kind, content)``; see
        ``gradcalc._magics``."""
        return self._core.run_rich(source, origin, color)


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
    found = []
    for piece, content in s._rich(source, "<value>", False):
        if piece == "error":
            raise _error_of(content)
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


def load_ipython_extension(ipython):
    """``%load_ext gradcalc``: registers ``%%gradcalc`` and ``%gradcalc``."""
    from ._magics import register

    register(ipython)
