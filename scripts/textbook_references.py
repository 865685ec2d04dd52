#!/usr/bin/env python3
"""The textbook formulas gradcalc prints are the true derivatives.

For every op, reads the formula `:help OP` prints (`∂tanh(u)/∂u = 1 - tanh(u)^2`)
from the gradcalc binary, evaluates it with mpmath at 50 digits at a few points
of the op's domain, and compares it with mpmath's own derivative of the op's
forward function (`mpmath.diff`, independent of gradcalc's rules). A formula
that is not the derivative stops the script. Writes tests/rules/textbook.tsv:
op, position, the formula text, the point, and the true derivative rounded to
f64; tests/it/rules.rs checks that `:help` still prints that formula and that
the formula typed into gradcalc gives the true value to 1e-12 relative.

Usage: scripts/textbook_references.py [path/to/gradcalc] (default target/debug/gradcalc)
"""

import subprocess
import sys

import mpmath as mp

mp.mp.dps = 50
BINARY = sys.argv[1] if len(sys.argv) > 1 else "target/debug/gradcalc"


def ncdf(u):
    return (1 + mp.erf(u / mp.sqrt(2))) / 2


def npdf(u):
    return mp.exp(-u * u / 2) / mp.sqrt(2 * mp.pi)


def sigmoid(u):
    return 1 / (1 + mp.exp(-u))


def sign(u):
    return mp.mpf(0) if u == 0 else mp.sign(u)


def cbrt(u):
    return mp.sign(u) * mp.cbrt(abs(u))


# The ops' forward functions, written from their definitions (not from gradcalc).
UNARY = {
    "exp": mp.exp, "ln": mp.log, "log2": lambda u: mp.log(u, 2), "log10": mp.log10,
    "sqrt": mp.sqrt, "cbrt": cbrt, "abs": abs, "sin": mp.sin, "cos": mp.cos,
    "tan": mp.tan, "asin": mp.asin, "acos": mp.acos, "atan": mp.atan,
    "sinh": mp.sinh, "cosh": mp.cosh, "tanh": mp.tanh, "sech": mp.sech,
    "asinh": mp.asinh, "acosh": mp.acosh, "atanh": mp.atanh, "sigmoid": sigmoid,
    "relu": lambda u: max(u, 0), "softplus": lambda u: mp.log(1 + mp.exp(u)),
    "gelu": lambda u: u * ncdf(u), "normcdf": ncdf, "normpdf": npdf,
}
BINARY_OPS = {
    "+": ("add", lambda a, b: a + b), "-": ("sub", lambda a, b: a - b),
    "*": ("mul", lambda a, b: a * b), "/": ("div", lambda a, b: a / b),
    "^": ("pow", lambda a, b: a ** b),
}
POINTS = ["-2.5", "-0.7", "-0.3", "0.2", "0.5", "0.9", "1.3", "3"]
PAIRS = [("1.7", "2.3"), ("0.6", "-1.4"), ("2.5", "0.5"), ("3", "2")]
DOMAIN = {
    "ln": lambda u: u > 0, "log2": lambda u: u > 0, "log10": lambda u: u > 0,
    "sqrt": lambda u: u > 0, "asin": lambda u: abs(u) < 1, "acos": lambda u: abs(u) < 1,
    "atanh": lambda u: abs(u) < 1, "acosh": lambda u: u > 1, "relu": lambda u: u > 0,
}
# The names a printed formula may use, in mpmath.
NAMES = dict(UNARY, sign=sign, max=max, min=min, pi=mp.pi, e=mp.e, nan=mp.nan)


def help_rules(topic):
    """The `∂… = formula` lines `:help TOPIC` prints: (partial, formula)."""
    text = subprocess.run([BINARY, "-e", f":help {topic}"], capture_output=True,
                          text=True, check=True).stdout
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("∂") and " = " in line:
            partial, rest = line.split(" = ", 1)
            found.append((partial, rest.split("; ")[0].split(" for ")[0]))
    return found


def formulas(name):
    """The formulas of function NAME: (position, text) per input position."""
    return [(k, formula) for k, (_, formula) in enumerate(help_rules(name))]


def operator_formulas(symbol):
    """The formulas of the operator SYMBOL (`:help operators`): (position, text)."""
    rules = [(p, f) for p, f in help_rules("operators") if p.startswith(f"∂(a {symbol} b)")
             or p.startswith(f"∂(a{symbol}b)")]
    return [(0 if partial.endswith("/∂a") else 1, formula) for partial, formula in rules]


def evaluate(formula, bindings):
    python = formula.replace("^", "**")
    return eval(python, {"__builtins__": {}}, dict(NAMES, **bindings))


def check(name, position, formula, bindings, truth, rows, point):
    value = evaluate(formula, bindings)
    if abs(value - truth) > mp.mpf("1e-30") * max(1, abs(truth)):
        sys.exit(f"{name} {position}: `{formula}` = {value} at {point}, derivative {truth}")
    rows.append(f"{name}\t{position}\t{formula}\t{point}\t{float(truth)!r}")


def main():
    rows = []
    for name, function in UNARY.items():
        ((position, formula),) = formulas(name)
        for point in POINTS:
            u = mp.mpf(point)
            if not DOMAIN.get(name, lambda _: True)(u):
                continue
            check(name, position, formula, {"u": u}, mp.diff(function, u), rows, point)
    for symbol, (name, function) in BINARY_OPS.items():
        found = operator_formulas(symbol)
        assert len(found) == 2, (symbol, found)
        for position, formula in found:
            for a_text, b_text in PAIRS:
                a, b = mp.mpf(a_text), mp.mpf(b_text)
                partial = (lambda t: function(t, b)) if position == 0 else (lambda t: function(a, t))
                truth = mp.diff(partial, a if position == 0 else b)
                check(symbol, position, formula, {"a": a, "b": b}, truth, rows,
                      f"{a_text},{b_text}")
    with open("tests/rules/textbook.tsv", "w") as out:
        out.write("# op\tposition\tformula\tpoint\tderivative -- scripts/textbook_references.py "
                  "(mpmath, 50 digits: each formula equals mpmath.diff of the op)\n")
        out.write("\n".join(rows) + "\n")
    print(f"{len(rows)} rows: every formula is the derivative")


main()
