#!/usr/bin/env python3
"""Writes tests/data/accuracy.tsv and tests/data/accuracy_chains.tsv: the true
value and local derivatives of every op of gradcalc's op table on a grid that
spans the f64 range, computed with mpmath at 60 significant digits (more for
huge arguments), for tests/accuracy.rs.

Usage: python3 scripts/accuracy_reference.py   (needs `pip install mpmath`)

accuracy.tsv columns: op, inputs (comma-separated, shortest f64 repr), value,
one column per input position with the true local derivative. Each number is
a decimal string with 25 significant digits (or inf, -inf, nan); `none` means
the op passes no gradient there (the conventions in src/engine/ops.rs). Where an
op is outside its domain the value is nan; the derivative column then holds what
the op table's formula gives by convention (e.g. ln'(u) = 1/u for u < 0, as
PyTorch's `grad / self`), or nan.

accuracy_chains.tsv columns: id, x, chain, value, derivative: `chain` is a list of
steps applied in turn to x (`exp`, `acosh`, `/1e300` = divide by a constant,
`*c`, `+c`, `^c`, `c^` = c to the power, `c/` = c divided by it), and the derivative is d(value)/dx by
the chain rule in forward mode, in mpmath at 700 digits.
"""

import math
import os
import sys

from mpmath import mp, mpf, mpc

DPS = 60
mp.dps = DPS
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")

NAN = mpf("nan")
INF = mpf("inf")
NONE = "none"


def fmt(x):
    """A 25-digit decimal string, inf/-inf/nan, or `none`."""
    if isinstance(x, str):
        return x
    if isinstance(x, mpc):
        return "nan"
    if mp.isnan(x):
        return "nan"
    if mp.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    return mp.nstr(x, 25, min_fixed=1, max_fixed=0)


def real(x):
    """nan for a complex result (outside the real domain)."""
    if isinstance(x, mpc):
        return NAN if x.imag != 0 else x.real
    return x


def sign(u):
    return mpf(1) if u > 0 else mpf(-1) if u < 0 else mpf(0)


def phi(u):
    return mp.exp(-u * u / 2) / mp.sqrt(2 * mp.pi)


def Phi(u):
    # mpmath's erfc fails for huge arguments; there the asymptotic series
    # φ(u)/|u|·(1 − 1/u² + 3/u⁴) is exact to far more than 60 digits.
    if u < -1e8:
        return phi(u) / -u * (1 - 1 / u**2 + 3 / u**4)
    if u > 1e8:
        return 1 - phi(u) / u * (1 - 1 / u**2 + 3 / u**4)
    return mp.erfc(-u / mp.sqrt(2)) / 2


def sigmoid(u):
    return 1 / (1 + mp.exp(-u))


def safe(f):
    def g(*a):
        try:
            return real(f(*a))
        except (ValueError, ZeroDivisionError):
            return NAN
    return g


# Each unary op: (value(u), derivative(u)) in mpmath, with the conventions of
# src/engine/ops.rs at edges (0 in a denominator gives inf, as IEEE).
def inv(x):
    if x == 0:
        return INF
    return 1 / x


UNARY = {
    "neg": (lambda u: -u, lambda u: mpf(-1)),
    "exp": (mp.exp, mp.exp),
    "ln": (lambda u: mp.log(u) if u > 0 else (-INF if u == 0 else NAN), inv),
    "log2": (lambda u: mp.log(u, 2) if u > 0 else (-INF if u == 0 else NAN),
             lambda u: inv(u * mp.log(2))),
    "log10": (lambda u: mp.log(u, 10) if u > 0 else (-INF if u == 0 else NAN),
              lambda u: inv(u * mp.log(10))),
    "sqrt": (lambda u: mp.sqrt(u) if u >= 0 else NAN,
             lambda u: inv(2 * mp.sqrt(u)) if u >= 0 else NAN),
    "cbrt": (lambda u: sign(u) * mp.cbrt(abs(u)),
             lambda u: inv(3 * mp.cbrt(abs(u)) ** 2)),
    "abs": (abs, sign),
    "sin": (mp.sin, mp.cos),
    "cos": (mp.cos, lambda u: -mp.sin(u)),
    "tan": (mp.tan, lambda u: 1 + mp.tan(u) ** 2),
    "asin": (lambda u: mp.asin(u) if abs(u) <= 1 else NAN,
             lambda u: inv(mp.sqrt(1 - u * u)) if abs(u) <= 1 else NAN),
    "acos": (lambda u: mp.acos(u) if abs(u) <= 1 else NAN,
             lambda u: -inv(mp.sqrt(1 - u * u)) if abs(u) <= 1 else NAN),
    "atan": (mp.atan, lambda u: 1 / (1 + u * u)),
    "sinh": (mp.sinh, mp.cosh),
    "cosh": (mp.cosh, mp.sinh),
    "tanh": (mp.tanh, lambda u: mp.sech(u) ** 2),
    "sech": (mp.sech, lambda u: -mp.sech(u) * mp.tanh(u)),
    "asinh": (mp.asinh, lambda u: 1 / mp.sqrt(u * u + 1)),
    "acosh": (lambda u: mp.acosh(u) if u >= 1 else NAN,
              lambda u: inv(mp.sqrt(u * u - 1)) if u >= 1 else NAN),
    # atanh'(u) = 1/(1 − u²) also outside (−1, 1), as PyTorch.
    "atanh": (lambda u: mp.atanh(u) if abs(u) < 1 else (sign(u) * INF if abs(u) == 1 else NAN),
              lambda u: inv(1 - u * u)),
    "sigmoid": (sigmoid, lambda u: sigmoid(u) * sigmoid(-u)),
    "relu": (lambda u: u if u > 0 else mpf(0), lambda u: mpf(1) if u > 0 else NONE),
    "softplus": (lambda u: mp.log1p(mp.exp(u)), sigmoid),
    "gelu": (lambda u: u * Phi(u), lambda u: Phi(u) + u * phi(u)),
    "normcdf": (Phi, phi),
    "normpdf": (phi, lambda u: -u * phi(u)),
    "floor": (mp.floor, lambda u: NONE),
    "ceil": (mp.ceil, lambda u: NONE),
    "round": (lambda u: sign(u) * mp.floor(abs(u) + mpf(0.5)), lambda u: NONE),
    "sign": (sign, lambda u: NONE),
    "detach": (lambda u: u, lambda u: NONE),
}


def binary(op, a, b):
    """(value, [∂/∂a, ∂/∂b]) for a binary op (min/max with two inputs)."""
    if op == "+":
        return a + b, [mpf(1), mpf(1)]
    if op == "-":
        return a - b, [mpf(1), mpf(-1)]
    if op == "*":
        return a * b, [b, a]
    if op == "/":
        if b == 0:
            v = NAN if a == 0 else INF * sign(a) * (1 if math.copysign(1, float(b)) > 0 else -1)
            return v, [INF * (1 if math.copysign(1, float(b)) > 0 else -1), NAN if a == 0 else -INF * sign(a)]
        return a / b, [1 / b, -a / (b * b)]
    if op in ("max", "min"):
        if a == b:
            return a, [mpf(0.5), mpf(0.5)]
        first = (a > b) == (op == "max")
        return (a if first else b), ([mpf(1), NONE] if first else [NONE, mpf(1)])
    if op == "^":
        return pow_ref(a, b)
    raise ValueError(op)


def pow_ref(a, b):
    integer = b == mp.floor(b)
    if a < 0 and not integer:
        return NAN, [NAN, NAN]
    if a == 0:
        value = mpf(1) if b == 0 else (mpf(0) if b > 0 else INF)
        if b == 0:
            da = NONE
        elif b > 1 or b == 1:
            da = mpf(0) if b > 1 else mpf(1)
        else:
            da = INF * sign(b)  # b·0^(b−1), 0^(b−1) = inf for b < 1
        db = NONE if b >= 0 else -INF
        return value, [da, db]
    value = mp.power(a, b)
    # (−1)^(b−1) from the parity of the integer b itself: b − 1 may not be
    # representable at the working precision (b = 1e300).
    odd = a < 0 and int(b) % 2 == 0
    da = NONE if b == 0 else b * mp.power(abs(a), b - 1) * (-1 if odd else 1)
    db = value * mp.log(a) if a > 0 else NAN
    return value, [da, db]


def ulp_neighbours(x):
    return [math.nextafter(x, -math.inf), x, math.nextafter(x, math.inf)]


MAGNITUDES = [
    5e-324, 1e-320, 2.2250738585072014e-308, 1e-300, 1e-200, 1.5e-154, 1e-100, 1e-20,
    1e-8, 1e-3, 0.1, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 10.0, 19.0, 20.0, 36.0, 37.6, 40.0,
    100.0, 354.0, 356.0, 373.0, 400.0, 709.0, 710.0, 745.0, 1e5, 1e10, 1e20, 1e100,
    1e154, 1e155, 1e200, 1e300, 1.7976931348623157e308,
]


def unary_grid():
    points = set([0.0, -0.0])
    for m in MAGNITUDES:
        points.update([m, -m])
    # Domain edges, kinks and poles: 1 ± ulp, 0 ± tiny, π/2 for tan, the root of gelu'.
    for edge in [1.0, -1.0, 0.5, -0.5, 1.5707963267948966, 3.141592653589793, -0.7517915241]:
        points.update(ulp_neighbours(edge))
    points.update([2.5, -2.5, 0.49999999999999994, 37.7, -37.7, 37.65, -37.65, 30.0, -30.0])
    # gelu' = Φ(u) + u·φ(u) cancels next to its root r: the f64 nearest r and
    # its neighbours, points 1e-10 .. 0.07 from it (the op table sums a series
    # within 1/16 of r), and the point of issue 18.
    root = -0.7517915246935645
    points.update(ulp_neighbours(root))
    for d in [1e-15, 1e-12, 1e-10, 1e-7, 1e-4, 1e-2, 0.0624, 0.0626, 0.07]:
        points.update([root - d, root + d])
    points.add(-0.7517915246)
    return sorted(points, key=lambda x: (abs(x), math.copysign(1, x)))


BINARY_VALUES = [0.0, 5e-324, 1e-300, 1.5e-154, 0.5, 1.0, 2.0, 3.0, 1e154, 1e200, 1e308]
POW_BASES = [0.0, 5e-324, 4e-322, 1e-300, 0.5, 0.9, 1.0, 1.0000000000000002, 1.0001, 2.0,
             10.0, 1e10, 1e300, 1.7976931348623157e308, -2.0, -0.5, -1e300]
POW_EXPONENTS = [0.0, 1e-20, 0.3, 0.5, 1.0, 1.05, 1.93, 2.0, 3.0, 2.5, 10.0, 1100.0,
                 -1.0, -0.5, -2.0, -3.0, -1100.0, -7.1e6, 1e300, -1e300]
POW_EXTRA = [(1.0000000000000002, -3.3e18), (1.0000000000000002, 3.2e18), (1.0001, -7.1e6),
             (1e-300, 1.05), (4e-322, 1.93), (5e-324, 1e-20), (2.0, -1070.0), (1e300, 1.1),
             (0.99, 70000.0)]


def rows():
    for op, (value, derivative) in UNARY.items():
        for u in unary_grid():
            workprec = DPS + int(max(0, math.log10(abs(u)))) if u != 0 else DPS
            with mp.workdps(workprec):
                x = mpf(u)
                v = safe(value)(x)
                d = safe(derivative)(x)
                yield op, [u], v, [d]
    for op in ["+", "-", "*", "/", "max", "min"]:
        values = sorted(set(BINARY_VALUES + [-v for v in BINARY_VALUES]))
        for a in values:
            for b in values:
                with mp.workdps(DPS):
                    v, ds = binary(op, mpf(a), mpf(b))
                    yield op, [a, b], v, ds
    pairs = [(a, b) for a in POW_BASES for b in POW_EXPONENTS] + POW_EXTRA
    for a, b in pairs:
        with mp.workdps(DPS + 40):
            v, ds = pow_ref(mpf(a), mpf(b))
            yield "^", [a, b], v, ds


CHAINS = [
    ("C01", 400.0, "exp acosh"),
    ("C02", 700.0, "exp acosh"),
    ("C03", 400.0, "exp asinh"),
    ("C04", 1e-300, "ln sigmoid"),
    ("C05", 1e300, "ln sigmoid"),
    ("C06", 1e300, "/1e300 tanh"),
    ("C07", 3e11, "/1e10 tanh"),
    ("C08", 1e200, "*1e-100 atan"),
    ("C09", 20.0, "*2 tanh sqrt"),
    ("C10", 1e200, "acosh exp"),
    ("C11", 1e154, "^2 sqrt"),
    ("C12", 30.0, "neg gelu exp"),
    ("C13", 0.9999999999999999, "atanh exp"),
    ("C14", 1e200, "/1e200 sigmoid"),
    ("C15", 40.0, "sigmoid *1e300"),
    ("C16", 1e-200, "neg asin cos"),
    # A local derivative or an upstream gradient beyond the f64 range on the
    # way to an ordinary gradient (the backward pass's scaled slow path).
    ("C17", 400.0, "exp 1/"),
    ("C18", 400.0, "tanh *1e300"),
    ("C19", 800.0, "sigmoid *1e300"),
    ("C20", 1e200, "atan *1e300"),
    ("C21", 1e-320, "ln *1e-300"),
    ("C22", 1e-320, "log2 *1e-300"),
    ("C23", 1e-320, "log10 *1e-300"),
    ("C24", 1e200, "^-1 *1e300"),
    ("C25", 40.0, "normcdf *1e300"),
    ("C26", 1e200, "1/ *1e300"),
    ("C27", 1e-310, "1e-300/ /1e300"),
]


def apply_step(step, v, dv):
    """One step of a chain in forward mode: (value, d value/dx)."""
    if step[0] in "/*+^" and len(step) > 1:
        c = mpf(float(step[1:]))  # the f64 constant, as gradcalc reads it
        if step[0] == "/":
            return v / c, dv / c
        if step[0] == "*":
            return v * c, dv * c
        if step[0] == "+":
            return v + c, dv
        return mp.power(v, c), c * mp.power(v, c - 1) * dv
    if step.endswith("/"):
        c = mpf(float(step[:-1]))
        return c / v, -c / (v * v) * dv
    if step.endswith("^"):
        c = mpf(float(step[:-1]))
        return mp.power(c, v), mp.power(c, v) * mp.log(c) * dv
    value, derivative = UNARY[step]
    return value(v), derivative(v) * dv


def chain_rows():
    """Each chain's value and derivative by the chain rule in forward mode, at
    a working precision of 700 digits (some chains pass through 1 − 1e-400)."""
    for cid, x, chain in CHAINS:
        with mp.workdps(700):
            v, dv = mpf(x), mpf(1)
            for step in chain.split():
                v, dv = apply_step(step, v, dv)
            yield cid, x, chain, v, dv


def main():
    os.makedirs(ROOT, exist_ok=True)
    count = 0
    with open(os.path.join(ROOT, "accuracy.tsv"), "w") as out:
        out.write("op\tinputs\tvalue\tderivatives\n")
        for op, inputs, v, ds in rows():
            out.write("%s\t%s\t%s\t%s\n" % (
                op, ",".join(repr(float(i)) for i in inputs), fmt(v), ",".join(fmt(d) for d in ds)))
            count += 1
    with open(os.path.join(ROOT, "accuracy_chains.tsv"), "w") as out:
        out.write("id\tx\tchain\tvalue\tderivative\n")
        for cid, x, chain, v, d in chain_rows():
            out.write("%s\t%r\t%s\t%s\t%s\n" % (cid, x, chain, fmt(v), fmt(d)))
    print("wrote %d rows and %d chains to %s" % (count, len(CHAINS), ROOT), file=sys.stderr)


if __name__ == "__main__":
    main()
