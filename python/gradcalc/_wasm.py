"""gradcalc's core under Pyodide (``sys.platform == "emscripten"``): the same
``Core`` and functions as the compiled module ``gradcalc._gradcalc``, backed
by the playground's WebAssembly build (``gradcalc.wasm`` beside this file,
put there by ``scripts/build-pyodide-wheel.sh``), which runs the library's
own notebook code (``gradcalc::notebook``, ``web/wasm/src/notebook.rs``).

Each ``Core`` is an instance of the module (its own memory and session),
reached through Pyodide's ``js`` module: a request goes in as JSON through
the export ``gradcalc_cells``, the reply comes back as JSON. What differs
from the compiled core:

- ``Value`` is a Python class over the module's numeric exports
  (``gradcalc_value_…``, ``web/wasm/src/values.rs``), which run the same
  ``gradcalc::notebook::values`` as the compiled ``Value``;
- files a command writes (``:svg FILE``, ``:save FILE``) are written into
  Pyodide's file system (in JupyterLite, the browser's storage), relative
  to the working directory, replacing a file of that name;
- a running statement stops at Pyodide's interrupt (SIGINT in the buffer
  of ``pyodide.setInterruptBuffer``, which the module's import
  ``gradcalc.interrupted`` reads wherever the native build polls for
  Ctrl-C), as at Ctrl-C: the statement undone (a ``:repeat`` or
  ``:descend`` keeps its finished steps), the session kept, and
  ``KeyboardInterrupt`` raised after what ran. A host that sets no buffer
  (JupyterLite's kernel 0.8.6 does not) cannot stop it.
"""

import json as _json
import os as _os
from importlib import metadata as _metadata

from js import Function, Uint8Array, WebAssembly  # type: ignore[import-not-found]

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


_IMPORTS = None


def _imports():
    """The module's imports: ``gradcalc.interrupted``, 1 when Pyodide's
    interrupt buffer holds SIGINT (2), which it takes (as Pyodide's own check
    does), else 0; always 0 where Pyodide's module cannot be reached."""
    global _IMPORTS
    if _IMPORTS is None:
        try:
            import pyodide_js  # type: ignore[import-not-found]

            module = pyodide_js._module
        except (ImportError, AttributeError):  # pragma: no cover - another Pyodide
            module = None
        _IMPORTS = Function.new(
            "module",
            """return { gradcalc: { interrupted: function () {
                 var buffer = module && module.Py_EmscriptenSignalBuffer;
                 if (buffer && buffer[0] === 2) { buffer[0] = 0; return 1; }
                 return 0;
               } } };""",
        )(module)
    return _IMPORTS


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
        self._exports = WebAssembly.Instance.new(_module(), _imports()).exports

    def _call(self, call, **arguments):
        """The result of the request ``call`` with ``arguments``; its ``key``,
        ``value`` or ``error`` raised as the compiled core raises them."""
        return self._request(call, **arguments)["ok"]

    def _run(self, call, **arguments):
        """The result of a run, and ``KeyboardInterrupt()`` when Pyodide's
        interrupt stopped it (else ``None``)."""
        reply = self._request(call, **arguments)
        return reply["ok"], (KeyboardInterrupt() if reply.get("interrupted") else None)

    def _request(self, call, **arguments):
        """The whole reply to the request ``call`` (see ``_call``)."""
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
        return reply

    def run_json(self, source, origin):
        """The JSON Lines of ``source`` run as a script, and the
        ``KeyboardInterrupt`` that stopped it, or ``None``."""
        return self._run("run_json", source=source, origin=origin)

    def run_rich(self, source, origin, color):
        """The pieces ``(kind, content)`` of ``source`` as a cell shows them,
        and the ``KeyboardInterrupt`` that stopped it, or ``None``."""
        pieces, stopped = self._run("run_rich", source=source, origin=origin, color=bool(color))
        return [(kind, content) for kind, content in pieces], stopped

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


# The ops of the exports `gradcalc_value_unary`, `…_binary` and `…_number`,
# by index (web/wasm/src/values.rs, `OPS`).
_ADD, _SUB, _MUL, _DIV, _POW, _NEG, _RELU, _TANH, _EXP, _LN, _SIGMOID = range(11)
_NONE = 2**32 - 1


def _values():
    """The exports of the instance that holds every ``Value``."""
    return _utility()._exports


def _message(e):
    """The message a failed export left in the output buffer."""
    out = Uint8Array.new(e.memory.buffer, e.gradcalc_output_ptr(), e.gradcalc_output_len())
    return out.to_bytes().decode("utf-8")


def _number_operand(other):
    """``other`` as a float when it is a number micrograd's operators take
    (``int``, ``float`` or one with ``__float__``/``__index__``, not a
    string), else ``None``."""
    if isinstance(other, (str, bytes, bytearray)):
        return None
    try:
        return float(other)
    except (TypeError, ValueError):
        return None


def _made(e, slot):
    """A ``Value`` for ``slot`` from an export; ``ValueError`` when none."""
    if slot < 0 or slot == _NONE:  # u32::MAX, which JavaScript reads as -1
        raise ValueError(_message(e))
    value = Value.__new__(Value)
    value._slot = slot
    return value


class Value:
    """micrograd's ``Value`` on gradcalc's engine, as the compiled module's
    (``python/src/value.rs``): a handle to a slot of the WebAssembly build's
    ``Values`` (``gradcalc::notebook::values``, the same Rust code), so the
    values, gradients and pictures are the native ones. Arithmetic builds the
    computation graph, ``backward()`` fills in ``.grad`` of every node
    reachable."""

    __slots__ = ("_slot", "__weakref__")

    def __init__(self, data, _children=(), _op="", label=""):
        if (_children is not None and len(_children) > 0) or _op:
            raise TypeError(
                "gradcalc's Value makes leaves only: build other values with + - * / ** and the methods"
            )
        number = _number_operand(data)
        if number is None:
            raise TypeError(f"must be real number, not {type(data).__name__}")
        self._slot = _values().gradcalc_value_leaf(number)
        if label:
            self.label = label

    def __del__(self):
        slot = getattr(self, "_slot", None)
        if slot is not None and _UTILITY is not None:
            _UTILITY._exports.gradcalc_value_release(slot)

    def _binary(self, op, other, reflected=False):
        e = _values()
        if isinstance(other, Value):
            a, b = (other._slot, self._slot) if reflected else (self._slot, other._slot)
            return _made(e, e.gradcalc_value_binary(op, a, b))
        number = _number_operand(other)
        if number is None:
            return NotImplemented
        return _made(e, e.gradcalc_value_number(op, self._slot, number, 1 if reflected else 0))

    def _unary(self, op):
        e = _values()
        return _made(e, e.gradcalc_value_unary(op, self._slot))

    @property
    def data(self):
        """The forward value."""
        # (float: Pyodide gives a whole JavaScript number as an int.)
        return float(_values().gradcalc_value_data(self._slot))

    @data.setter
    def data(self, data):
        """Sets a leaf's value (values built from it before keep theirs);
        ``ValueError`` for a value computed by an op."""
        e = _values()
        if e.gradcalc_value_set_data(self._slot, float(data)) != 0:
            raise ValueError(_message(e))

    @property
    def grad(self):
        """The gradient the last ``backward()`` calls left here (0 at first)."""
        return float(_values().gradcalc_value_grad(self._slot))

    @grad.setter
    def grad(self, grad):
        _values().gradcalc_value_set_grad(self._slot, float(grad))

    @property
    def label(self):
        """The name pictures and traces give this node ('' for none)."""
        return _utility()._call("value_label", slot=self._slot)

    @label.setter
    def label(self, label):
        _utility()._call("value_set_label", slot=self._slot, label=str(label))

    @property
    def _op(self):
        """The op that computed this value, as gradcalc names it ('' for a leaf)."""
        return _utility()._call("value_op", slot=self._slot)

    @property
    def _prev(self):
        """The inputs of this value (numbers given to an operator are leaves
        here too), in operand order."""
        e = _values()
        return [_made(e, slot) for slot in _utility()._call("value_inputs", slot=self._slot)]

    def __add__(self, other):
        return self._binary(_ADD, other)

    def __radd__(self, other):
        return self._binary(_ADD, other, True)

    def __sub__(self, other):
        return self._binary(_SUB, other)

    def __rsub__(self, other):
        return self._binary(_SUB, other, True)

    def __mul__(self, other):
        return self._binary(_MUL, other)

    def __rmul__(self, other):
        return self._binary(_MUL, other, True)

    def __truediv__(self, other):
        return self._binary(_DIV, other)

    def __rtruediv__(self, other):
        return self._binary(_DIV, other, True)

    def __pow__(self, other, modulo=None):
        if modulo is not None:
            return NotImplemented
        return self._binary(_POW, other)

    def __rpow__(self, other, modulo=None):
        if modulo is not None:
            return NotImplemented
        return self._binary(_POW, other, True)

    def __neg__(self):
        return self._unary(_NEG)

    def relu(self):
        """``max(x, 0)``; passes no gradient where x ≤ 0."""
        return self._unary(_RELU)

    def tanh(self):
        """The hyperbolic tangent."""
        return self._unary(_TANH)

    def exp(self):
        """e to the power of this value."""
        return self._unary(_EXP)

    def log(self):
        """The natural logarithm."""
        return self._unary(_LN)

    def sigmoid(self):
        """The logistic sigmoid (beyond micrograd)."""
        return self._unary(_SIGMOID)

    def backward(self):
        """micrograd's backward pass from this value: its ``.grad`` set to 1,
        and upstream × local added to the ``.grad`` of every input, node by
        node in reverse topological order (gradients accumulate at fan-out
        and onto what ``.grad`` held before: zero them between steps)."""
        _values().gradcalc_value_backward(self._slot)

    def __repr__(self):
        return f"Value(data={self.data!r}, grad={self.grad!r})"

    def __float__(self):
        return self.data


def value_source(value):
    """``(source, name)``: the gradcalc statements that build ``value``'s
    graph (ending with ``:backward`` of it) and the name they give it."""
    source, name = _utility()._call("value_source", slot=value._slot)
    return source, name


def arena_nodes():
    """How many nodes the graph of every ``Value`` holds now."""
    return _utility()._call("value_nodes")
