//! The backward pass beyond f64's exponent range: the slow path the walk takes
//! when an upstream gradient or a local derivative under- or overflows although
//! the gradients it leads to are ordinary numbers.
//!
//! `x = 400; y = 1/exp(x)`: y = 1.9e-174 and ∂y/∂x = −1.9e-174, but on the way
//! ∂y/∂exp(x) = −y/exp(x) = −3.7e-348 is below the smallest f64, so a walk in
//! f64 multiplies 0 by exp(400) and gives 0. Here every gradient is a
//! [`Scaled`] number, an f64 mantissa with an exponent of its own, and the local
//! derivatives that leave the f64 range are recomputed in that form
//! ([`scaled_local`]), so the product of the chain comes out right whenever it
//! is itself a normal number. In the f64 range a product or a sum of two
//! [`Scaled`] rounds exactly as in f64, so the slow path changes no gradient
//! that the fast one got right.

use super::{Op, OpInfo};

/// A number `mantissa · 2^exponent`: the mantissa is in ±[0.5, 1), or is 0,
/// ±inf or nan (exponent 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Scaled {
    mantissa: f64,
    exponent: i64,
}

/// Beyond this power of two a number is 0 or infinite for every purpose here:
/// no chain of f64 factors brings it back.
const EXPONENT_LIMIT: i64 = 1 << 40;

impl Scaled {
    pub(super) const ZERO: Scaled = Scaled {
        mantissa: 0.0,
        exponent: 0,
    };
    pub(super) const ONE: Scaled = Scaled {
        mantissa: 0.5,
        exponent: 1,
    };

    /// `mantissa · 2^exponent`, normalised.
    fn new(mantissa: f64, exponent: i64) -> Scaled {
        if mantissa == 0.0 || !mantissa.is_finite() {
            return Scaled {
                mantissa,
                exponent: 0,
            };
        }
        let (m, e) = libm::frexp(mantissa);
        let exponent = exponent.saturating_add(i64::from(e));
        if exponent < -EXPONENT_LIMIT {
            Scaled::new(0.0 * m, 0)
        } else if exponent > EXPONENT_LIMIT {
            Scaled::new(f64::INFINITY * m, 0)
        } else {
            Scaled {
                mantissa: m,
                exponent,
            }
        }
    }

    /// The same number, exactly.
    pub(super) fn from_f64(x: f64) -> Scaled {
        Scaled::new(x, 0)
    }

    /// The nearest f64: 0 or a subnormal below the normal range, ±inf above it.
    pub(super) fn to_f64(self) -> f64 {
        // Both ends of the clamp are beyond every f64, so scalbn rounds there.
        let e = self.exponent.clamp(-2200, 2200) as i32;
        libm::scalbn(self.mantissa, e)
    }

    /// The product, rounded once as an f64 product is.
    pub(super) fn mul(self, other: Scaled) -> Scaled {
        Scaled::new(
            self.mantissa * other.mantissa,
            self.exponent + other.exponent,
        )
    }

    /// The sum, rounded once as an f64 sum is (the smaller term is shifted to
    /// the larger one's exponent; shifted below 2^-1074 of it, it cannot change it).
    pub(super) fn add(self, other: Scaled) -> Scaled {
        if self.mantissa == 0.0 && other.mantissa == 0.0 {
            // Two zeros: the sign IEEE 754 gives their sum (+0 unless both
            // are −0), as the f64 walk's `before + product` has it.
            return Scaled::new(self.mantissa + other.mantissa, 0);
        }
        if other.mantissa == 0.0 {
            return self;
        }
        if self.mantissa == 0.0 {
            return other;
        }
        if !self.mantissa.is_finite() || !other.mantissa.is_finite() {
            return Scaled::new(self.mantissa + other.mantissa, 0);
        }
        let (big, small) = if self.exponent >= other.exponent {
            (self, other)
        } else {
            (other, self)
        };
        let shift = (small.exponent - big.exponent).max(-1100) as i32;
        Scaled::new(
            big.mantissa + libm::scalbn(small.mantissa, shift),
            big.exponent,
        )
    }

    /// `1/self`.
    fn recip(self) -> Scaled {
        Scaled::new(1.0 / self.mantissa, -self.exponent)
    }

    /// `e^x` for every finite x (`e^−800` = 3.7e-348), accurate to a few ulps:
    /// `x = k·ln 2 + r` with |r| ≤ ln 2/2, r found by a fused multiply-add and
    /// the tail of ln 2 (Cody and Waite's reduction), then `e^r · 2^k`.
    fn exp(x: f64) -> Scaled {
        /// ln 2 − LN_2 (mpmath).
        const LN_2_TAIL: f64 = 2.319_046_813_846_299_6e-17;
        if x.is_nan() {
            return Scaled::new(f64::NAN, 0);
        }
        if x.abs() > 1e15 {
            return Scaled::new(if x > 0.0 { f64::INFINITY } else { 0.0 }, 0);
        }
        let k = (x * std::f64::consts::LOG2_E).round();
        let r = (-k).mul_add(std::f64::consts::LN_2, x) - k * LN_2_TAIL;
        Scaled::new(r.exp(), k as i64)
    }
}

/// The local derivative `∂node/∂inputs[position]` as a [`Scaled`] number where
/// the op table's f64 value ([`OpInfo::local`]) has left the normal range
/// although the true local derivative is a finite nonzero number; `None`
/// where the f64 value is normal, where the true value is 0 or infinite, and
/// for ops whose local derivative leaves the range only with the op's own value
/// (`exp`, `sech`, `normpdf`, `gelu` for u ≪ 0: the output is already lost,
/// and so is everything computed from it).
///
/// The formulas are the op table's, in their tails: `1/b` and `−a/b²` for `/`;
/// `1/u` (times log2(e), log10(e)) for the logarithms; `b·a^(b−1)` and
/// `a^b·ln a` with `a^b` as `h·h`, `h = |a|^(b/2)`, as the op table forms them;
/// `4e^(−2|u|)` for tanh' beyond |u| = 20 and `e^(−|u|)` for sigmoid' beyond
/// |u| = 40 (the terms dropped are below 2^-57 of them); `1/u²` for atan'
/// and `1/|u|` for asinh', acosh' beyond |u| = 1e154 (the same); and
/// `e^(−u²/2)/√(2π)` for normcdf', with u² split exactly by a fused
/// multiply-add.
pub(super) fn scaled_local(info: &OpInfo, x: &[f64], out: f64, position: usize) -> Option<Scaled> {
    let local = (info.local)(x, out, position);
    if local.is_normal() || x.iter().any(|v| !v.is_finite()) || !info.passes(x, out, position) {
        return None;
    }
    let u = x[0];
    let scaled = match info.op {
        Op::Div if position == 0 => Scaled::from_f64(x[1]).recip(),
        Op::Div => {
            let r = Scaled::from_f64(x[1]).recip();
            Scaled::from_f64(-x[0]).mul(r).mul(r)
        }
        Op::Ln => Scaled::from_f64(u).recip(),
        Op::Log2 => Scaled::from_f64(std::f64::consts::LOG2_E).mul(Scaled::from_f64(u).recip()),
        Op::Log10 => Scaled::from_f64(std::f64::consts::LOG10_E).mul(Scaled::from_f64(u).recip()),
        Op::Pow => pow_local(x[0], x[1], position)?,
        Op::Tanh if u.abs() > 20.0 => Scaled::from_f64(4.0).mul(Scaled::exp(-2.0 * u.abs())),
        Op::Sigmoid if u.abs() > 40.0 => Scaled::exp(-u.abs()),
        Op::Atan if u.abs() > 1e154 => {
            let r = Scaled::from_f64(u).recip();
            r.mul(r)
        }
        Op::Asinh | Op::Acosh if u.abs() > 1e154 => Scaled::from_f64(u.abs()).recip(),
        Op::Normcdf if u.abs() < 1.3e154 => normal_pdf(u),
        // In range wherever their inputs are (or only out of it with their
        // own value), or constant.
        Op::Tanh | Op::Sigmoid | Op::Atan | Op::Asinh | Op::Acosh | Op::Normcdf => return None,
        Op::Variable | Op::Const | Op::Add | Op::Sub | Op::Mul | Op::Neg | Op::Exp => return None,
        Op::Sqrt | Op::Cbrt | Op::Abs | Op::Sin | Op::Cos | Op::Tan | Op::Asin | Op::Acos => {
            return None;
        }
        Op::Sinh | Op::Cosh | Op::Sech | Op::Atanh | Op::Relu | Op::Softplus | Op::Gelu => {
            return None;
        }
        Op::Normpdf | Op::Floor | Op::Ceil | Op::Round | Op::Sign | Op::Detach => return None,
        Op::Min | Op::Max => return None,
    };
    (scaled.mantissa != 0.0 && scaled.mantissa.is_finite()).then_some(scaled)
}

/// `b·a^(b−1)` (position 0) or `a^b·ln a` (position 1) for finite a > 0 or an
/// integer b, with `a^b = h·h`, `h = |a|^(b/2)`; `None` where h itself is not
/// a normal number (then a^b is beyond even twice the f64 range).
fn pow_local(a: f64, b: f64, position: usize) -> Option<Scaled> {
    if a == 0.0 || (a < 0.0 && (b.fract() != 0.0 || position == 1)) {
        return None;
    }
    let m = a.abs();
    let h = m.powf(b / 2.0);
    if !h.is_normal() {
        return None;
    }
    let square = Scaled::from_f64(h).mul(Scaled::from_f64(h));
    if position == 1 {
        return Some(square.mul(Scaled::from_f64(a.ln())));
    }
    let magnitude = Scaled::from_f64(b)
        .mul(square)
        .mul(Scaled::from_f64(m).recip());
    // a^(b−1) = (−1)^(b−1)·|a|^(b−1) for a < 0 and b an integer.
    Some(if a < 0.0 && b % 2.0 == 0.0 {
        Scaled::from_f64(-1.0).mul(magnitude)
    } else {
        magnitude
    })
}

/// φ(u) = e^(−u²/2)/√(2π), with `u² = p + e` split exactly.
fn normal_pdf(u: f64) -> Scaled {
    const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
    let p = u * u;
    let e = u.mul_add(u, -p);
    Scaled::exp(-0.5 * p)
        .mul(Scaled::from_f64((-0.5 * e).exp()))
        .mul(Scaled::from_f64(FRAC_1_SQRT_2PI))
}

/// Bounds are kept times 2^1000, so that a bound far below the smallest
/// subnormal (a lost 2^-1075 times local derivatives of 0.5, level after
/// level) stays a nonzero f64.
const BOUND_SCALE: f64 = f64::from_bits((1023 + 1000) << 52);

/// Half the smallest subnormal, scaled: what rounding a product into the
/// subnormal range (or to 0) loses at most.
const ROUNDING: f64 = f64::from_bits((1023 - 75) << 52);

/// A charge below this (2^-2000 unscaled) is dropped: it could change a
/// gradient only through local derivatives whose product exceeds 2^926 on the
/// way down (`1/exp(x)` at 400 charges 2^-1154 and multiplies it by 2^577).
/// So a bound that a deep chain keeps halving (W3) stops being tracked about
/// 900 levels past its loss.
const NEGLIGIBLE: f64 = f64::from_bits((1023 - 1000) << 52);

/// A lost amount up to this many smallest subnormals (scaled) may stay in a
/// gradient that ends 0 or subnormal: the accuracy the backward pass promises
/// there (docs/accuracy.md: within 16 subnormal steps).
const SUBNORMAL_SLACK: f64 = 8.0 * f64::from_bits((1023 - 74) << 52);

/// What the f64 backward walk lost below (or above) the range, and whether
/// that could change a gradient: the test of [`Graph::backward`]'s slow path.
///
/// A product `upstream × local` that underflows loses at most half a
/// subnormal step, and one whose local derivative left the range loses what
/// [`scaled_local`] finds beyond it. Each loss is charged to the operand it
/// was for, as an upper bound, and a node's bound goes on to its operands
/// times the (absolute) local derivatives, as the gradient itself does. When
/// a node's gradient is complete its bound is judged: next to an ordinary
/// gradient, a bound within half an ulp of it is rounding and is dropped
/// (W3's `0.5^k` upstream gradients, lost past k ≈ 1075 while ∂y/∂x is 4);
/// next to a gradient that ended 0 or subnormal it is kept going while it is
/// within a few subnormal steps (a local derivative downstream may still
/// multiply it into the range: `1/exp(x)` at 400). Anything else — a bound
/// that could move a gradient by more than that, a product that overflowed
/// from finite factors, an infinite local derivative whose true value is
/// finite — asks for the scaled walk ([`Losses::rescale`]).
///
/// [`Graph::backward`]: super::Graph::backward
pub(super) struct Losses {
    /// Per node: the bound (times [`BOUND_SCALE`]) on what its gradient lost;
    /// empty until the first loss.
    bounds: Vec<f64>,
    /// Whether a loss could change a gradient: the walk is to be done again
    /// with [`Scaled`] gradients.
    pub(super) rescale: bool,
}

impl Losses {
    pub(super) fn new() -> Losses {
        Losses {
            bounds: Vec::new(),
            rescale: false,
        }
    }

    /// The bound charged to `node` so far (0 when nothing was lost).
    #[inline(always)]
    pub(super) fn at(&self, node: usize) -> f64 {
        match self.bounds.get(node) {
            Some(&bound) => bound,
            None => 0.0,
        }
    }

    /// Judges `node`'s bound now that its gradient `gradient` is complete;
    /// returns the bound its operands inherit (0 when it is dropped as
    /// rounding, or when the scaled walk is asked for anyway).
    #[cold]
    pub(super) fn settle(&mut self, node: usize, gradient: f64) -> f64 {
        let bound = std::mem::take(&mut self.bounds[node]);
        if !gradient.is_finite() {
            return 0.0; // inf or nan outweighs anything below the range
        }
        if gradient.is_normal() {
            // Within half an ulp of the gradient: rounding.
            if bound <= gradient.abs() * BOUND_SCALE * f64::EPSILON / 2.0 {
                return 0.0;
            }
        } else if bound <= SUBNORMAL_SLACK {
            return bound;
        }
        self.ask_rescale();
        0.0
    }

    /// Charges `operand` with `bound` (a node's settled bound) times the
    /// local derivative `local`, unless that is negligible.
    pub(super) fn spread(&mut self, len: usize, operand: usize, bound: f64, local: f64) {
        let charge = bound * local.abs();
        // nan too: a nan local may hide anything.
        if charge >= NEGLIGIBLE || charge.is_nan() {
            self.charge(len, operand, charge);
        }
    }

    /// `upstream × local`, sent to `operand`, is not a normal number or
    /// `local` is not: charges what it lost, or asks for the scaled walk.
    /// `info`, `x`, `out` and `position` give the local derivative's op and
    /// point, for [`scaled_local`].
    #[cold]
    #[allow(clippy::too_many_arguments)] // the point of one chain-rule step
    pub(super) fn product(
        &mut self,
        len: usize,
        operand: usize,
        upstream: f64,
        local: f64,
        product: f64,
        info: &OpInfo,
        x: &[f64],
        out: f64,
        position: usize,
    ) {
        if self.rescale || upstream == 0.0 || !upstream.is_finite() {
            return; // an exact 0, or an inf or nan that outweighs the loss
        }
        if local.is_normal() {
            self.exact_product(len, operand, upstream, local, product);
            return;
        }
        let Some(true_local) = scaled_local(info, x, out, position) else {
            return; // the true local is 0 or infinite, or lost with the value
        };
        if local.is_infinite() {
            self.ask_rescale();
            return;
        }
        // 0 or subnormal: what the f64 product missed of upstream × true local.
        let exact = Scaled::from_f64(upstream).mul(true_local);
        let missed = exact
            .add(Scaled::from_f64(-product))
            .mul(Scaled::from_f64(BOUND_SCALE))
            .to_f64()
            .abs();
        self.charge(len, operand, missed + ROUNDING);
    }

    /// `upstream × factor` with an exact local derivative `factor` (the other
    /// operand of `·`, or a normal local), sent to `operand`, is `product`,
    /// not a normal number: an underflow loses half a subnormal step; an
    /// overflow from finite factors asks for the scaled walk.
    #[cold]
    pub(super) fn exact_product(
        &mut self,
        len: usize,
        operand: usize,
        upstream: f64,
        factor: f64,
        product: f64,
    ) {
        let ordinary = |v: f64| v != 0.0 && v.is_finite();
        if self.rescale || product.is_normal() || !ordinary(upstream) || !ordinary(factor) {
            return; // exact: a zero, infinite or nan factor
        }
        if product.is_infinite() {
            self.ask_rescale();
        } else {
            self.charge(len, operand, ROUNDING);
        }
    }

    fn charge(&mut self, len: usize, operand: usize, charge: f64) {
        if self.rescale {
            return;
        }
        if self.bounds.is_empty() {
            self.bounds = vec![0.0; len];
        }
        self.bounds[operand] += charge;
    }

    fn ask_rescale(&mut self) {
        self.rescale = true;
        self.bounds = Vec::new(); // nothing more to track
    }
}
