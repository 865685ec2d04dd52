"""gradcalc's core under Pyodide (``sys.platform == "emscripten"``): the same
``Core`` and functions as the compiled module ``gradcalc._gradcalc``, backed
by the playground's WebAssembly build (``gradcalc.wasm`` beside this file,
put there by ``scripts/build-pyodide-wheel.sh``), which runs the library's
own notebook code (``gradcalc::notebook``, ``web/wasm/src/notebook.rs``).

Each ``Core`` is an instance of the module (its own memory and session),
reached through Pyodide's ``js`` module: a request goes in as JSON through
the export ``gradcalc_cells``, the reply comes back as JSON. What differs
from the compiled core:

- ``Value`` is native-only: constructing one raises ``NotImplementedError``
  saying so (``import gradcalc`` works; ``Session`` and the magics do all
  that ``Value`` draws);
- files a command writes (``:svg FILE``, ``:save FILE``) are written into
  Pyodide's file system (in JupyterLite, the browser's storage), relative
  to the working directory, replacing a file of that name;
- Ctrl-C cannot stop a running statement (Pyodide runs it to its end).
"""

import json as _json
import os as _os
from importlib import metadata as _metadata

from js import Object, Uint8Array, WebAssembly  # type: ignore[import-not-found]

try:
    VERSION = _metadata.version("gradcalc")
except _metadata.PackageNotFoundError:  # pragma: no cover - not installed by a wheel
    VERSION = "unknown"

_MODULE = None


def _module():
    """The compiled WebAssembly module, compiled once from ``gradcalc.wasm``."""
    global _MODULE
    if _MODULE is None:
        path = _os.path.join(_os.path.dirname(__file__), "gradcalc.wasm")
        with open(path, "rb") as f:
            data = f.read()
        buffer = Uint8Array.new(len(data))
        buffer.assign(data)
        _MODULE = WebAssembly.Module.new(buffer)
    return _MODULE


def _number(x):
    """A float from the reply (``"nan"``, ``"inf"``, ``"-inf"`` as strings)."""
    return float(x)


def _number_out(x):
    """``x`` for a request: a number, or ``"nan"``, ``"inf"``, ``"-inf"``."""
    x = float(x)
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return x


def _array(reply):
    """``(shape, elements)`` of a reply's ``[shape, elements]``."""
    shape, elements = reply
    return list(shape), [_number(x) for x in elements]


class Core:
    """One gradcalc session in its own instance of the WebAssembly module,
    with the compiled ``Core``'s methods. ``allow_writes`` and
    ``allow_writes_anywhere`` are accepted and have no effect: files go to
    Pyodide's file system, which is the browser's own."""

    def __init__(self, allow_writes=(), allow_writes_anywhere=False):
        self._exports = WebAssembly.Instance.new(_module(), Object.new()).exports

    def _call(self, call, **arguments):
        """The reply to the request ``call`` with ``arguments``; its ``key``,
        ``value`` or ``error`` raised as the compiled core raises them."""
        e = self._exports
        data = _json.dumps(dict(arguments, call=call)).encode("utf-8")
        ptr = e.gradcalc_alloc(len(data))
        Uint8Array.new(e.memory.buffer, ptr, len(data)).assign(data)
        e.gradcalc_cells(ptr, len(data))
        out = Uint8Array.new(e.memory.buffer, e.gradcalc_output_ptr(), e.gradcalc_output_len())
        reply = _json.loads(out.to_bytes().decode("utf-8"))
        if "key" in reply:
            raise KeyError(reply["key"])
        if "value" in reply:
            raise ValueError(reply["value"])
        if "error" in reply:
            raise ValueError(*reply["error"])
        for name, content in reply.get("files", []):
            with open(_os.path.expanduser(name), "w", encoding="utf-8") as f:
                f.write(content)
        return reply["ok"]

    def run_json(self, source, origin):
        """The JSON Lines of ``source`` run as a script, and ``None`` (no
        signal stops a statement here)."""
        return self._call("run_json", source=source, origin=origin), None

    def run_rich(self, source, origin, color):
        """The pieces ``(kind, content)`` of ``source`` as a cell shows them,
        and ``None`` (no signal stops a statement here)."""
        pieces = self._call("run_rich", source=source, origin=origin, color=bool(color))
        return [(kind, content) for kind, content in pieces], None

    def value(self, name):
        """``(shape, elements)`` of the variable ``name``, or ``None``."""
        reply = self._call("value", name=name)
        return None if reply is None else _array(reply)

    def grad(self, of, wrt):
        """``(shape, elements)`` of ∂of/∂wrt now; ``KeyError`` for a missing
        variable, ``ValueError(code, message, help)`` when it cannot be had."""
        return _array(self._call("grad", of=of, wrt=wrt))

    def names(self):
        """``[(name, shape), …]`` in the order first assigned."""
        return [(name, list(shape)) for name, shape in self._call("names")]

    def page(self):
        """``(True, page)`` of the current output, or ``(False, why)``."""
        ok, content = self._call("page")
        return bool(ok), content


_UTILITY = None


def _utility():
    """The core that answers the calls that need no session of their own."""
    global _UTILITY
    if _UTILITY is None:
        _UTILITY = Core()
    return _UTILITY


def update_source(name, shape, elements):
    """The statement ``name := literal`` that sets the leaf ``name``;
    ``ValueError`` for a name that is not one, or a shape gradcalc does not
    hold."""
    numbers = [_number_out(x) for x in elements]
    return _utility()._call("update_source", name=name, shape=list(shape), elements=numbers)


def cell_source(source):
    """What a cell runs for ``source`` (``:svg`` without a file shows it)."""
    return _utility()._call("cell_source", source=source)


def frame(page):
    """The HTML a notebook shows ``page`` in: a sandboxed iframe sized to
    its graph and the notebook's width."""
    return _utility()._call("frame", page=page)


_NATIVE_ONLY = (
    "gradcalc.Value needs gradcalc's compiled engine, which Pyodide (JupyterLite) "
    "does not have: write the expression as gradcalc statements in a Session or a "
    "%%gradcalc cell instead (`:trace`, `:svg`, `:show` draw it there)"
)


class Value:
    """micrograd's ``Value`` is native-only: under Pyodide constructing one
    raises ``NotImplementedError`` saying what to use instead."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(_NATIVE_ONLY)


def value_source(value):
    """Native-only (see ``Value``)."""
    raise NotImplementedError(_NATIVE_ONLY)


def arena_nodes():
    """Native-only (see ``Value``)."""
    raise NotImplementedError(_NATIVE_ONLY)
