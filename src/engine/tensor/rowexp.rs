//! The softmax of a row and the sum of its exponentials with a vectorised
//! `exp`, compiled for the widest SIMD the processor has (AVX-512 or AVX2 on
//! x86-64, chosen when run; the plain build elsewhere, as in the playground's
//! wasm32).
//!
//! `exp` here is Cody and Waite's argument reduction `x = k·ln 2 + r`,
//! `|r| ≤ ln 2/2`, with `ln 2` split in two so that `k·ln2_hi` is exact (the
//! split of fdlibm's `e_exp.c`), then `exp(r)` by its Taylor series to
//! `r¹³/13!` (the first term left out is below `2⁻⁵⁷` of the sum), scaled by
//! `2^k` in two factors so that a subnormal result is rounded once. It uses
//! no fused multiply-add, so every build on every machine gives the same
//! bits; it is within 1 ulp of the C library's `exp` (`f64::exp`), checked
//! over 2·10⁶ arguments in the tests below, and gives 0 below −745.2, ∞
//! above 709.8, nan for nan, exactly as `f64::exp` does.
//!
//! The row maximum that shifts the arguments (so that no `exp` overflows:
//! Blanchard, Higham and Higham, "Accurate computation of the log-sum-exp
//! and softmax functions", 2021) and the sum of the exponentials are the
//! same numbers as before in the same order ([`super::kernels::sum`]'s eight
//! lanes), and each probability is still `exp(zᵢ − m)/Σ`, a division.

/// `1.5·2⁵²`: added to a number of magnitude below 2⁵¹ and taken away
/// again, it rounds the number to the nearest integer (ties to even).
const ROUND: f64 = 6_755_399_441_055_744.0;
/// `log₂ e`.
const LOG2_E: f64 = std::f64::consts::LOG2_E;
/// The high part of `ln 2`: 32 significant bits, so that `k·LN2_HI` is
/// exact for every `|k| < 2²¹` (fdlibm's `ln2HI`).
const LN2_HI: f64 = 0.693_147_180_369_123_8;
/// `ln 2 − LN2_HI` (fdlibm's `ln2LO`).
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
/// Below this `exp` is 0 (`exp(−745.14)` is half the smallest subnormal).
const LOW: f64 = -746.0;
/// Above this `exp` is ∞ (`ln(f64::MAX)` is 709.78).
const HIGH: f64 = 710.0;
/// `1/n!` for n = 13 down to 2, the Taylor coefficients of `exp` in the
/// order Horner's rule takes them.
const TAYLOR: [f64; 12] = [
    1.0 / 6_227_020_800.0,
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
];

/// `2^k` for an integer `k` held as a float, `−1022 ≤ k ≤ 1023`: the
/// integer `k + 1023` read from the low bits of `k + 1023 + 2⁵²` and moved
/// into the exponent field.
#[inline(always)]
pub(super) fn two_to(k: f64) -> f64 {
    f64::from_bits((k + (1023.0 + 4_503_599_627_370_496.0)).to_bits() << 52)
}

/// Cody and Waite's reduction of `x` (`|x| < 2²⁰`): `(k, r)` with
/// `x = k·ln 2 + r`, `k` a whole number and `|r| ≤ ln 2/2` (up to the
/// rounding of `x·log₂ e`); `r` is `x` itself, exactly, when `k` is 0.
#[inline(always)]
pub(super) fn reduce(x: f64) -> (f64, f64) {
    let k = (x * LOG2_E + ROUND) - ROUND;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    (k, r)
}

/// `eʳ − 1` for a reduced `|r| ≤ ln 2/2` ([`reduce`]): `r + r²·q(r)`, `q`
/// the Taylor series of `(eʳ − 1 − r)/r²` to `r¹¹/13!` by Horner's rule,
/// within about 1 ulp (the sum's rounding, and `r²·q` is below a sixth of `r`).
#[inline(always)]
pub(super) fn expm1_reduced(r: f64) -> f64 {
    let mut q = TAYLOR[0];
    for c in &TAYLOR[1..] {
        q = q * r + c;
    }
    r + r * r * q
}

/// `eˣ` without branches (so that a loop of it vectorises), within 1 ulp.
#[inline(always)]
pub(super) fn exp(x: f64) -> f64 {
    let clamped = x.clamp(LOW, HIGH);
    let (k, r) = reduce(clamped);
    let p = 1.0 + expm1_reduced(r);
    // 2^k in two factors: each is a normal number for |k| ≤ 1076.
    let half = (k * 0.5 + ROUND) - ROUND;
    let y = p * two_to(half) * two_to(k - half);
    if x.is_nan() { x } else { y }
}

/// The sum of `a` in eight interleaved partial sums added pairwise at the
/// end, then the tail ([`super::kernels::sum`], which calls it), inlined
/// into the vectorised builds.
#[inline(always)]
pub(super) fn sum_lanes(a: &[f64]) -> f64 {
    let mut lanes = [0.0; 8];
    let chunks = a.chunks_exact(8);
    let tail: f64 = chunks.remainder().iter().sum();
    for chunk in chunks {
        for (lane, &x) in lanes.iter_mut().zip(chunk) {
            *lane += x;
        }
    }
    let [a0, a1, a2, a3, a4, a5, a6, a7] = lanes;
    ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)) + tail
}

/// The largest element of a nonempty row, nan if any element is nan (the
/// value at [`super::kernels::argmax`]'s index), in eight lanes.
#[inline(always)]
fn max(a: &[f64]) -> f64 {
    let mut lanes = [f64::NEG_INFINITY; 8];
    let mut nan = [false; 8];
    let chunks = a.chunks_exact(8);
    let mut best = f64::NEG_INFINITY;
    let mut tail_nan = false;
    for &x in chunks.remainder() {
        tail_nan |= x.is_nan();
        best = if x > best { x } else { best };
    }
    for chunk in chunks {
        for ((lane, seen), &x) in lanes.iter_mut().zip(&mut nan).zip(chunk) {
            *seen |= x.is_nan();
            *lane = if x > *lane { x } else { *lane };
        }
    }
    for lane in lanes {
        best = if lane > best { lane } else { best };
    }
    if tail_nan || nan.iter().any(|&n| n) {
        f64::NAN
    } else {
        best
    }
}

/// `out[i] = exp(a[i] − m)` for each `i`; `out` is as long as `a`.
#[inline(always)]
fn exp_shifted(a: &[f64], m: f64, out: &mut [f64]) {
    for (o, &z) in out.iter_mut().zip(a) {
        *o = exp(z - m);
    }
}

/// The softmax of one nonempty row appended to `out`.
#[inline(always)]
fn softmax_row(a: &[f64], out: &mut Vec<f64>) {
    let m = max(a);
    let start = out.len();
    out.resize(start + a.len(), 0.0);
    let p = &mut out[start..];
    exp_shifted(a, m, p);
    let total = sum_lanes(p);
    for x in p {
        *x /= total;
    }
}

/// `ln Σ exp(zᵢ)` of one nonempty row, `m + ln Σ exp(zᵢ − m)`; `m` itself
/// where it is ±∞ or nan.
#[inline(always)]
fn logsumexp_row(a: &[f64]) -> f64 {
    let m = max(a);
    if !m.is_finite() {
        return m;
    }
    // Blocks of 256 on the stack, summed in [`sum_lanes`]'s order over the
    // whole row (every block but the last is a multiple of 8 long).
    let mut lanes = [0.0; 8];
    let mut tail = 0.0;
    let mut block = [0.0; 256];
    for chunk in a.chunks(256) {
        let e = &mut block[..chunk.len()];
        exp_shifted(chunk, m, e);
        let eights = e.chunks_exact(8);
        tail = eights.remainder().iter().sum();
        for eight in eights {
            for (lane, &x) in lanes.iter_mut().zip(eight) {
                *lane += x;
            }
        }
    }
    let [a0, a1, a2, a3, a4, a5, a6, a7] = lanes;
    let total = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)) + tail;
    m + total.ln()
}

/// The widest SIMD this processor has, of those the row kernels are built for.
/// (Only x86-64 picks among kernels; elsewhere the plain one runs.)
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Simd {
    /// AVX-512 Foundation (8 lanes of f64).
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// AVX2 (4 lanes).
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// What the build targets (SSE2 on x86-64, simd128 or none on wasm32).
    Plain,
}

/// The [`Simd`] of this processor (the standard library caches the test).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) fn simd() -> Simd {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            return Simd::Avx512;
        }
        if std::is_x86_feature_detected!("avx2") {
            return Simd::Avx2;
        }
    }
    Simd::Plain
}

/// Builds `$name`, running `$body` (a call of an `#[inline(always)]`
/// kernel) compiled for AVX-512, for AVX2 or plainly, as [`simd`] says.
/// The three give the same bits: the kernels use no fused multiply-add.
/// (`rowtanh.rs` builds its kernels with it too.)
macro_rules! dispatch {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)? = $kernel:ident) => {
        $(#[$doc])*
        pub(super) fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f")]
                fn avx512($($arg: $ty),*) $(-> $ret)? {
                    $kernel($($arg),*)
                }
                #[target_feature(enable = "avx2")]
                fn avx2($($arg: $ty),*) $(-> $ret)? {
                    $kernel($($arg),*)
                }
                use $crate::engine::tensor::rowexp::{simd, Simd};
                match simd() {
                    // SAFETY: the processor has the feature (`simd`).
                    Simd::Avx512 => return unsafe { avx512($($arg),*) },
                    // SAFETY: as above.
                    Simd::Avx2 => return unsafe { avx2($($arg),*) },
                    Simd::Plain => {}
                }
            }
            $kernel($($arg),*)
        }
    };
}

pub(super) use dispatch;

dispatch! {
    /// `exp(zᵢ − m)/Σ exp(zⱼ − m)`, `m = max z`, of the nonempty row `a`,
    /// appended to `out`.
    fn softmax_into(a: &[f64], out: &mut Vec<f64>) = softmax_row
}

dispatch! {
    /// `ln Σ exp(zᵢ)` of the nonempty row `a`, as `m + ln Σ exp(zᵢ − m)`,
    /// `m = max z`; `m` itself where it is ±∞ or nan.
    fn logsumexp(a: &[f64]) -> f64 = logsumexp_row
}

dispatch! {
    /// `exp(aᵢ)` into `out[i]` (as long as `a`): the vectorised `exp` alone
    /// (for its tests).
    #[cfg(test)]
    fn exp_into(a: &[f64], out: &mut [f64]) = exp_plain_shift
}

/// [`exp_shifted`] by 0.
#[cfg(test)]
#[inline(always)]
fn exp_plain_shift(a: &[f64], out: &mut [f64]) {
    exp_shifted(a, 0.0, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distance in ulps between two finite numbers of one sign.
    fn ulps(a: f64, b: f64) -> u64 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    /// Within 1 ulp of the C library's `exp` over 2·10⁶ arguments spread
    /// over the whole range (normal and subnormal results), and the same
    /// value at every edge.
    #[test]
    fn exp_is_within_one_ulp_of_the_c_library() {
        let n = 2_000_000;
        let a: Vec<f64> = (0..n)
            .map(|i| -746.0 + 1456.0 * (i as f64 + 0.5) / n as f64 + 1e-7 * (i as f64).sin())
            .collect();
        let mut e = vec![0.0; n];
        exp_into(&a, &mut e);
        let mut worst = 0;
        for (&x, &y) in a.iter().zip(&e) {
            let want = x.exp();
            if want == 0.0 || want.is_infinite() {
                assert_eq!(y, want, "exp({x})");
                continue;
            }
            worst = worst.max(ulps(y, want));
        }
        assert!(worst <= 1, "{worst} ulps");
        // Arguments near 0 and the softmax's range (−40, 0].
        let small: Vec<f64> = (0..n).map(|i| -40.0 * i as f64 / n as f64).collect();
        exp_into(&small, &mut e);
        for (&x, &y) in small.iter().zip(&e) {
            assert!(ulps(y, x.exp()) <= 1, "exp({x}) = {y}, not {}", x.exp());
        }
        let edges = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            1e-300,
            709.78,
            709.79,
            -708.4,
            -744.0,
            -745.1,
            -745.2,
            -1e308,
            1e308,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let mut out = vec![0.0; edges.len()];
        exp_into(&edges, &mut out);
        for (&x, &y) in edges.iter().zip(&out) {
            let want = x.exp();
            assert!(
                y == want || ulps(y, want) <= 1,
                "exp({x}) = {y}, not {want}"
            );
        }
        let mut nan = [0.0];
        exp_into(&[f64::NAN], &mut nan);
        assert!(nan[0].is_nan());
    }

    /// Every build (AVX-512, AVX2, plain) gives the same bits.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn every_build_gives_the_same_bits() {
        let a: Vec<f64> = (0..10_001).map(|i| -700.0 + 0.1399 * i as f64).collect();
        let mut plain = vec![0.0; a.len()];
        exp_plain_shift(&a, &mut plain);
        let mut softmax_plain = Vec::new();
        softmax_row(&a[..301], &mut softmax_plain);
        let mut softmax = Vec::new();
        softmax_into(&a[..301], &mut softmax);
        let mut e = vec![0.0; a.len()];
        exp_into(&a, &mut e);
        assert!(
            plain
                .iter()
                .zip(&e)
                .all(|(x, y)| x.to_bits() == y.to_bits())
        );
        assert!(
            softmax_plain
                .iter()
                .zip(&softmax)
                .all(|(x, y)| x.to_bits() == y.to_bits())
        );
        assert_eq!(logsumexp_row(&a).to_bits(), logsumexp(&a).to_bits());
    }

    /// The softmax matches `exp(zᵢ − m)/Σ exp(zⱼ − m)` computed with the C
    /// library's `exp` (summed in the same order) to 4 ulps, and the edges: a nan
    /// makes every element nan, an ∞ too (∞ − ∞), one element gives 1.
    #[test]
    fn softmax_rows_match_the_c_library() {
        for n in [1, 3, 8, 10, 17, 256, 1000] {
            let z: Vec<f64> = (0..n).map(|i| 3.0 * (0.37 * i as f64).sin()).collect();
            let mut p = Vec::new();
            softmax_into(&z, &mut p);
            let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = z.iter().map(|x| (x - m).exp()).collect();
            let total = crate::engine::tensor::kernels::sum(&e);
            for (x, want) in p.iter().zip(e.iter().map(|e| e / total)) {
                assert!(ulps(*x, want) <= 4, "{x} against {want}");
            }
            let lse = logsumexp(&z);
            assert!((lse - (m + total.ln())).abs() <= 4.0 * f64::EPSILON * lse.abs().max(1.0));
        }
        let mut p = Vec::new();
        softmax_into(&[1.0, f64::NAN, 2.0], &mut p);
        assert!(p.iter().all(|x| x.is_nan()));
        p.clear();
        softmax_into(&[1.0, f64::INFINITY], &mut p);
        assert!(p.iter().all(|x| x.is_nan()));
        p.clear();
        softmax_into(&[-1e308], &mut p);
        assert_eq!(p, [1.0]);
        assert!(logsumexp(&[0.0, f64::NAN]).is_nan());
        assert_eq!(logsumexp(&[f64::INFINITY, 0.0]), f64::INFINITY);
        assert_eq!(logsumexp(&[f64::NEG_INFINITY; 3]), f64::NEG_INFINITY);
    }
}
