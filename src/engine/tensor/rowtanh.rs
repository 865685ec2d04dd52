//! `tanh` of a tensor and its local derivative `sech²`, vectorised: the
//! row kernels of `rowexp.rs` (its reduction and its `eʳ − 1`, compiled
//! for AVX-512 or AVX2 on x86-64, chosen when run, and plainly elsewhere),
//! where the scalar op table calls the C library once an element (`tanh`,
//! and `cosh` for `sech`).
//!
//! - `tanh(x) = sign(x)·e/(e + 2)` with `e = eʸ − 1`, `y = 2|x|`
//!   (`(e^{2|x|} − 1)/(e^{2|x|} + 1)`, with no cancellation near 0):
//!   `e = 2ᵏ·(eʳ − 1) + (2ᵏ − 1)` after `y = k·ln 2 + r`, both terms exact
//!   but the last sum, so `e` is within about 1.5 ulp, then one addition
//!   and one division. `y` stops at 40, where `e/(e + 2)` is 1 (tanh
//!   rounds to 1 from |x| ≈ 19.06).
//! - `sech²(x) = 4z/(1 + z)²` with `z = e^{−2|x|}` (rowexp's `exp`, within
//!   1 ulp): no subtraction, so no cancellation as tanh nears ±1 (what the
//!   scalar rule `sech(u)^2` avoids too), 0 past |x| ≈ 373 and subnormal
//!   from |x| ≈ 354, as the true value.
//!
//! Both use no fused multiply-add, so every build on every machine (wasm32
//! included) gives the same bits. Their bounds, tested below over 2·10⁶
//! arguments (−25 to 25, −1 to 1, ±10⁻¹², 10⁻³⁰⁰ to 316) and the edges,
//! against references computed in double-double arithmetic (about 100
//! bits): `tanh` within 2 ulps of the true value and 4 of the C library's
//! `f64::tanh` (itself up to 2 from the true value); `sech²` within 4 ulps
//! of the true value where that is a normal number. ±0, ±∞ and nan give
//! what `f64::tanh` gives (`tanh(±0) = ±0`, `tanh(±∞) = ±1`), and
//! `sech²(±∞) = 0`.

use std::mem::MaybeUninit;

use super::rowexp::{dispatch, exp, expm1_reduced, reduce, two_to};
use crate::engine::Op;

/// `2|x|` past which `tanh` is 1 (`tanh(19.07)` rounds to 1; at `y = 40`
/// `e ≈ 2^57.7` and `e + 2` rounds to `e`).
const TANH_FLAT: f64 = 40.0;

/// `tanh(x)` without branches (so that a loop of it vectorises).
#[inline(always)]
fn tanh(x: f64) -> f64 {
    let y = (2.0 * x.abs()).min(TANH_FLAT);
    let (k, r) = reduce(y);
    let scale = two_to(k);
    let e = scale * expm1_reduced(r) + (scale - 1.0);
    let t = (e / (e + 2.0)).copysign(x);
    if x.is_nan() { x } else { t }
}

/// `sech²(x) = 1 − tanh²(x)` without branches, as `4z/(1 + z)²`, `z = e^{−2|x|}`.
#[inline(always)]
fn sech2(x: f64) -> f64 {
    let z = exp(-2.0 * x.abs());
    let d = 1.0 + z;
    (4.0 * z) / (d * d)
}

/// `out[i] = tanh(a[i])`, writing every element of `out` (as long as
/// `a`), which may be uninitialised memory.
#[inline(always)]
fn tanh_row(a: &[f64], out: &mut [MaybeUninit<f64>]) {
    for (o, &x) in out.iter_mut().zip(a) {
        o.write(tanh(x));
    }
}

/// `up[i] = up[i]·sech²(x[i])`: the upstream times `tanh`'s local
/// derivative, in place; `up` is as long as `x`.
#[inline(always)]
fn times_sech2_row(x: &[f64], up: &mut [f64]) {
    for (u, &x) in up.iter_mut().zip(x) {
        *u *= sech2(x);
    }
}

dispatch! {
    /// `tanh(aᵢ)` into `out[i]` (`out` as long as `a`, every element
    /// written), within 2 ulps (see the module).
    fn tanh_into(a: &[f64], out: &mut [MaybeUninit<f64>]) = tanh_row
}

/// `out[i] = c·sech²(x[i])`: a uniform upstream `c` times `tanh`'s local
/// derivative, writing every element of `out` (as long as `x`), which may
/// be uninitialised memory.
#[inline(always)]
fn scaled_sech2_row(x: &[f64], c: f64, out: &mut [MaybeUninit<f64>]) {
    for (o, &x) in out.iter_mut().zip(x) {
        o.write(c * sech2(x));
    }
}

dispatch! {
    /// `up[i] · sech²(x[i])` into `up[i]` (`up` as long as `x`): the
    /// upstream gradient times `tanh`'s local derivative at `x`.
    fn times_sech2(x: &[f64], up: &mut [f64]) = times_sech2_row
}

dispatch! {
    /// `c · sech²(x[i])` into `out[i]` (`out` as long as `x`, every
    /// element written): the uniform upstream gradient `c` times `tanh`'s
    /// local derivative at `x`, the bits of [`times_sech2`] of an upstream
    /// of `c`s.
    fn scaled_sech2(x: &[f64], c: f64, out: &mut [MaybeUninit<f64>]) = scaled_sech2_row
}

/// The kernels of a unary op computed a slice at a time, in place of its
/// scalar forward function and local derivative one element at a time.
/// `forward` and `scaled_local` write every element of their `out` (as
/// long as their input), which may be uninitialised: their callers count
/// on it to take `out` as initialised ([`kernels::write_all`](super::kernels::write_all)).
#[derive(Clone, Copy)]
pub(super) struct RowKernels {
    /// `out[i] = f(a[i])` (`forward(a, out)`, `out` as long as `a`).
    pub(super) forward: fn(&[f64], &mut [MaybeUninit<f64>]),
    /// `up[i] = up[i]·f′(x[i])` (`times_local(x, up)`): the upstream
    /// gradient times the local derivative, in place.
    pub(super) times_local: fn(&[f64], &mut [f64]),
    /// `out[i] = c·f′(x[i])` (`scaled_local(x, c, out)`): a uniform
    /// upstream `c` times the local derivative, the bits of `times_local`.
    pub(super) scaled_local: fn(&[f64], f64, &mut [MaybeUninit<f64>]),
}

/// The row kernels of the scalar op `op` applied to a tensor, where it has
/// them (`tanh`); `None` for the others, which run the scalar op table's
/// functions an element at a time.
pub(super) fn row_kernels(op: Op) -> Option<RowKernels> {
    match op {
        Op::Tanh => Some(RowKernels {
            forward: tanh_into,
            times_local: times_sech2,
            scaled_local: scaled_sech2,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound, in ulps, of the vectorised `tanh` against the true value:
    /// tested against a double-double reference.
    const TANH_ULPS: u64 = 2;

    /// The bound, in ulps, of the vectorised `tanh` against the C library's
    /// (glibc's `tanh` is itself up to 2 ulps from the true value).
    const TANH_ULPS_C: u64 = 4;

    /// The bound, in ulps, of the vectorised `sech²` against the true value
    /// (where it is a normal number).
    const SECH2_ULPS: u64 = 4;

    /// The distance in ulps between two finite numbers of one sign (or
    /// zeros).
    fn ulps(a: f64, b: f64) -> u64 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    /// `a + b` exactly, as a double-double (Knuth's two-sum).
    fn two_sum(a: f64, b: f64) -> (f64, f64) {
        let s = a + b;
        let v = s - a;
        (s, (a - (s - v)) + (b - v))
    }

    /// `a·b` exactly, as a double-double (the product's error by a fused
    /// multiply-add, exact by definition).
    fn two_prod(a: f64, b: f64) -> (f64, f64) {
        let p = a * b;
        (p, a.mul_add(b, -p))
    }

    /// `eʸ − 1` for `0 ≤ y ≤ 350` as a double-double, to about 100 bits:
    /// `m = eᵃ − 1`, `a = y/64` (exact), from its Taylor series (no
    /// cancellation) summed until a term is below 10⁻³⁵ of the sum, then 6
    /// times `m ← 2m + m²`, which is `(1 + m)² − 1`.
    fn expm1_reference(y: f64) -> (f64, f64) {
        let a = y / 64.0;
        let (mut m, mut term) = ((0.0, 0.0), (1.0, 0.0));
        for n in 1..80 {
            term = dd_mul(term, (a / n as f64, dd_div_err(a, n as f64)));
            m = dd_add(m, term);
            if term.0 <= 1e-35 * m.0 {
                break;
            }
        }
        for _ in 0..6 {
            m = dd_add(dd_mul((2.0, 0.0), m), dd_mul(m, m));
        }
        m
    }

    /// `sech²(x)` to about 100 bits, for `|x| ≤ 350`: `4/(e + 1/e)²` with
    /// `e = e^{|x|}` ([`expm1_reference`] + 1).
    fn sech2_reference(x: f64) -> f64 {
        let e = dd_add(expm1_reference(x.abs()), (1.0, 0.0));
        let c = dd_add(e, dd_div((1.0, 0.0), e));
        let s = dd_div((4.0, 0.0), dd_mul(c, c));
        s.0 + s.1
    }

    /// `tanh(x)` to about 100 bits: `m/(m + 2)` with x's sign, `m =
    /// e^{2|x|} − 1` ([`expm1_reference`]); past |x| = 20, 1 with x's sign
    /// (the rounded value).
    fn tanh_reference(x: f64) -> f64 {
        if x.abs() > 20.0 {
            return 1f64.copysign(x);
        }
        let m = expm1_reference(2.0 * x.abs());
        let t = dd_div(m, dd_add(m, (2.0, 0.0)));
        (t.0 + t.1).copysign(x)
    }

    /// The error of `a / n` rounded (`a − n·(a/n)` over `n`), to make the
    /// quotient a double-double.
    fn dd_div_err(a: f64, n: f64) -> f64 {
        let q = a / n;
        (-q).mul_add(n, a) / n
    }

    fn dd_add(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
        let (s, e) = two_sum(a.0, b.0);
        let e = e + a.1 + b.1;
        two_sum(s, e)
    }

    fn dd_mul(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
        let (p, e) = two_prod(a.0, b.0);
        let e = e + a.0 * b.1 + a.1 * b.0;
        two_sum(p, e)
    }

    fn dd_div(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
        let q = a.0 / b.0;
        // r = a − q·b, then one correction.
        let r = dd_add(a, dd_mul((-q, 0.0), b));
        let q2 = r.0 / b.0;
        two_sum(q, q2)
    }

    /// `f` of `xs` written into a new buffer, not zeroed first
    /// ([`write_all`](super::super::kernels::write_all), in its blocks).
    fn written(xs: &[f64], f: fn(&[f64], &mut [MaybeUninit<f64>])) -> Vec<f64> {
        // SAFETY: the kernels write every element of their `out`.
        unsafe {
            super::super::kernels::write_all(xs.len(), &|| false, |start, out| {
                f(&xs[start..start + out.len()], out)
            })
        }
        .expect("never asked to stop")
    }

    /// The largest distance in ulps of `got[i]` from `want(xs[i])`, and
    /// where.
    fn worst(xs: &[f64], got: &[f64], want: impl Fn(f64) -> f64) -> (u64, f64) {
        xs.iter()
            .zip(got)
            .map(|(&x, &y)| (ulps(y, want(x)), x))
            .fold((0, 0.0), |w, d| if d.0 > w.0 { d } else { w })
    }

    /// Arguments over the range that matters, dense near 0 and around the
    /// bends: 2·10⁶ of them, with small irregular offsets.
    fn arguments() -> Vec<f64> {
        let n = 500_000;
        let mut xs = Vec::with_capacity(4 * n);
        for i in 0..n {
            let t = (i as f64 + 0.5) / n as f64;
            let wobble = 1e-9 * (i as f64).sin();
            xs.push(-25.0 + 50.0 * t + wobble);
            xs.push((-1.0 + 2.0 * t) * (1.0 + wobble));
            xs.push(1e-12 * (-1.0 + 2.0 * t) + 1e-20 * wobble);
            xs.push(10f64.powf(-300.0 + 302.5 * t) * (1.0 + wobble));
        }
        xs
    }

    /// Within [`TANH_ULPS`] of a double-double reference at every argument.
    #[test]
    fn tanh_is_within_its_bound_of_a_double_double_reference() {
        let xs = arguments();
        let t = written(&xs, tanh_into);
        let (distance, at) = worst(&xs, &t, tanh_reference);
        assert!(distance <= TANH_ULPS, "{distance} ulps at {at}");
    }

    /// Within [`TANH_ULPS_C`] of the C library's `tanh` at every argument,
    /// and its value at the edges: ±0 (with the sign), subnormals,
    /// where it rounds to ±1, ±∞, nan.
    #[test]
    fn tanh_is_within_its_bound_of_the_c_library() {
        let xs = arguments();
        let t = written(&xs, tanh_into);
        let (distance, at) = worst(&xs, &t, f64::tanh);
        assert!(distance <= TANH_ULPS_C, "{distance} ulps at {at}");
        let edges = [
            0.0,
            -0.0,
            5e-324,
            -5e-324,
            2.2e-308,
            1e-300,
            1e-8,
            0.5,
            0.549_306_144_334_054_8, // 2|x| = ln 3: k = 1
            19.0,
            19.1,
            20.0,
            39.0,
            710.0,
            1e300,
            f64::MAX,
            f64::INFINITY,
        ];
        for x in edges.iter().flat_map(|&x| [x, -x]) {
            let y = written(&[x], tanh_into);
            let want = x.tanh();
            assert!(
                y[0].to_bits() == want.to_bits() || ulps(y[0], want) <= TANH_ULPS_C,
                "tanh({x:e}) = {:e}, not {want:e}",
                y[0]
            );
            assert_eq!(y[0].is_sign_negative(), want.is_sign_negative(), "{x:e}");
        }
        assert!(written(&[f64::NAN], tanh_into)[0].is_nan());
    }

    /// The upstream times `sech²`, within [`SECH2_ULPS`] of a double-double
    /// reference where `sech²` is a normal number, and the edges: 1 at ±0,
    /// 0 far out and at ±∞, nan for nan; the upstream scales it exactly
    /// (a power of two).
    #[test]
    fn sech2_is_within_its_bound_of_a_double_double_reference() {
        let xs: Vec<f64> = arguments()
            .into_iter()
            .step_by(3)
            .chain((0..100_000).map(|i| -350.0 + 700.0 * (i as f64 + 0.37) / 100_000.0))
            .collect();
        assert!(xs.iter().all(|&x| sech2_reference(x).is_normal()));
        let mut s = vec![1.0; xs.len()];
        times_sech2(&xs, &mut s);
        let (distance, at) = worst(&xs, &s, sech2_reference);
        assert!(distance <= SECH2_ULPS, "{distance} ulps at {at}");
        let mut up = [1.0, 1.0, 1.0, 1.0, 1.0, 0.25, 1.0];
        let x = [
            0.0,
            -0.0,
            400.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            f64::NAN,
        ];
        times_sech2(&x, &mut up);
        assert_eq!(up[..6], [1.0, 1.0, 0.0, 0.0, 0.0, 0.25]);
        assert!(up[6].is_nan());
        let scaled = written(&xs, |x, out| scaled_sech2(x, 1.0, out));
        assert!(
            scaled
                .iter()
                .zip(&s)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
        let mut up = [3.0];
        times_sech2(&[0.7], &mut up);
        let mut one = [1.0];
        times_sech2(&[0.7], &mut one);
        assert_eq!(up[0], 3.0 * one[0]);
    }

    /// Every build (AVX-512, AVX2, plain) gives the same bits.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn every_build_gives_the_same_bits() {
        let xs: Vec<f64> = (0..20_001).map(|i| -30.0 + 0.003 * i as f64).collect();
        let same_bits =
            |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(a, b)| a.to_bits() == b.to_bits());
        let (plain, fast) = (written(&xs, tanh_row), written(&xs, tanh_into));
        assert!(same_bits(&plain, &fast));
        let (mut plain, mut fast) = (vec![1.5; xs.len()], vec![1.5; xs.len()]);
        times_sech2_row(&xs, &mut plain);
        times_sech2(&xs, &mut fast);
        assert!(same_bits(&plain, &fast));
    }
}
