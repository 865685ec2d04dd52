#!/usr/bin/env python3
"""Prints the constants of `gelu_local` in src/engine/ops.rs: the root r of
gelu'(u) = Φ(u) + u·φ(u) as a pair of f64 (r = hi + lo), and the Taylor
coefficients of gelu' about r, which the op table sums for |u − r| < 1/16,
where the two terms of Φ(u) + u·φ(u) cancel.

Usage: python3 scripts/gelu_root_series.py   (needs `pip install mpmath`)

It also prints, for the chosen degree, the largest relative truncation error
over |u − r| ≤ 1/16 (below 1e-17), and gelu'(−0.7517915246), the value the
accuracy tests check (4.0372508658295282e-11).
"""

from mpmath import erfc, exp, findroot, mp, mpf, nstr, pi, sqrt, taylor

mp.dps = 60
DEGREE = 12
RADIUS = mpf(1) / 16


def gelu_prime(u):
    return erfc(-u / sqrt(2)) / 2 + u * exp(-u * u / 2) / sqrt(2 * pi)


def main():
    r = findroot(gelu_prime, mpf("-0.75"))
    hi = float(r)
    lo = float(r - mpf(hi))
    print("root", nstr(r, 40))
    print("const ROOT_HI: f64 = %r;" % hi)
    print("const ROOT_LO: f64 = %r;" % lo)
    c = taylor(gelu_prime, r, DEGREE + 12)
    print("const SERIES: [f64; %d] = [" % DEGREE)
    for k in range(1, DEGREE + 1):
        print("    %r," % float(c[k]))
    print("];")
    tail = sum(abs(c[k]) * RADIUS ** k for k in range(DEGREE + 1, len(c)))
    print("truncation", nstr(tail / (abs(c[1]) * RADIUS), 3))
    print("gelu'(-0.7517915246) =", nstr(gelu_prime(mpf(-0.7517915246)), 20))


if __name__ == "__main__":
    main()
