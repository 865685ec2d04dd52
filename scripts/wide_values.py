#!/usr/bin/env python3
"""The reference for the layout of wide vectors and matrices
(tests/it/wide_values.rs): numpy's own `array2string` of the values the
test types, with numpy's line width, `, ` between elements and gradcalc's
prefix (the matrix's indent, or `x = `) and suffix (a vector's shape). Each
element is written as gradcalc writes it at its default precision (10
significant digits, `%.10g`) padded to the widest, as numpy pads its own.

The values are k/7 for k = ((16 i + j)·37 mod 101) − 50: widths from 1 (`0`)
to 13 (`-0.4285714286`) characters.

Run: pip install numpy && python3 scripts/wide_values.py
(writes tests/data/wide/*.txt)
"""

import os

import numpy as np


def value(k):
    return ((k * 37) % 101 - 50) / 7


def text(x):
    return "%.10g" % x


def layout(a, width, prefix, suffix=""):
    widest = max(len(text(x)) for x in a.flat)
    return np.array2string(
        a,
        max_line_width=width,
        separator=", ",
        prefix=prefix,
        suffix=suffix,
        formatter={"float_kind": lambda x: text(x).rjust(widest)},
    )


here = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "wide")
W = np.array([[value(16 * i + j) for j in range(16)] for i in range(16)])
for width in (80, 100):
    with open(os.path.join(here, f"matrix_16x16_{width}.txt"), "w") as f:
        f.write("W = 16×16\n   " + layout(W, width, "   ") + "\n")
x = np.array([value(j) for j in range(30)])
with open(os.path.join(here, "vector_30_80.txt"), "w") as f:
    f.write("x = " + layout(x, 80, "x = ", "  (30)") + "  (30)\n")
