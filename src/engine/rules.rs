//! Local derivatives as expressions: for every op and input position, the rule
//! `∂node/∂input` written in the calculator's own language over placeholders for
//! the operands, chosen at the current point where the rule is piecewise.
//!
//! The text of a [`Rule::Expr`] parses with the calculator's parser
//! (`crate::syntax`) and names only the op's placeholders ([`Op::placeholders`]:
//! `u` for a unary op, `a`, `b` for a binary one) and functions of the op table.
//! Evaluated with the placeholders bound to the operands' values, it gives the
//! local derivative the backward pass uses (`OpInfo::local`): the forms are the
//! numerically stable ones, so the expression does not overflow or cancel where
//! the derivative itself is representable (`-(a/b)/b`, not `-a/b^2`;
//! `1/cosh(u)^2`, not `1 - tanh(u)^2`). Where an op passes no gradient at a
//! point (`floor`, `relu` for `u ≤ 0`, a `min`/`max` loser, `∂a^0/∂a`), the rule
//! is [`Rule::PassesNothing`] instead of an expression that evaluates to 0.
//!
//! The engine knows no text beyond these constant strings: parsing them,
//! putting the operands' labels in place of the placeholders and printing the
//! result is the session's work.

use std::borrow::Cow;

use super::Op;

/// The local derivative of one op at one input position, at one point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// The local derivative is this expression, in the calculator's language,
    /// over the op's placeholders ([`Op::placeholders`]); `"1"`, `"b"`,
    /// `"b*a^(b-1)"`, `"1/cosh(u)^2"`.
    Expr(Cow<'static, str>),
    /// The input receives nothing from this node at this point: the op passes no
    /// gradient (`floor`, `ceil`, `round`, `sign`, `detach`), the point is on a
    /// flat branch (`relu` for `u ≤ 0`, an input of `min`/`max` that is not the
    /// winner), or a convention masks the derivative (PyTorch's `pow` backward:
    /// `∂a^b/∂a` where `b = 0`, `∂a^b/∂b` where `a = 0` and `b ≥ 0`). The limit
    /// of the derivative there is 0, and no upstream gradient (not even an
    /// infinite one) reaches the input through this use.
    PassesNothing,
}

impl Rule {
    /// The expression text, or `None` when the rule passes nothing.
    pub fn expr(&self) -> Option<&str> {
        match self {
            Rule::Expr(text) => Some(text),
            Rule::PassesNothing => None,
        }
    }
}

/// A fixed expression.
const fn expr(text: &'static str) -> Rule {
    Rule::Expr(Cow::Borrowed(text))
}

/// Where `asinh'`'s plain form `1/sqrt(u^2 + 1)` stops: beyond it `u^2` would
/// come close to overflowing (`1e300` does), and `1 + (1/u)^2` is 1 anyway.
const ASINH_PLAIN_LIMIT: f64 = 1e150;

/// Below this magnitude (and above 0) `gelu(u)/u` loses digits, because
/// `gelu(u) = u·Φ(u)` is subnormal or nearly.
const GELU_TINY: f64 = 1e-300;

impl Op {
    /// The names that stand for this op's operands in its [`Rule`]s: `["u"]` for
    /// a unary op, `["a", "b"]` for a binary one (`a` the left operand); none
    /// for leaves and for `min`/`max`, whose rules are constants.
    pub fn placeholders(self) -> &'static [&'static str] {
        match self.info().arity {
            super::Arity::Unary => &["u"],
            super::Arity::Binary => &["a", "b"],
            super::Arity::Leaf | super::Arity::Variadic => &[],
        }
    }

    /// The rule for `∂node/∂inputs[position]` at the point where the inputs have
    /// the values `inputs` (in operand order) and the node the value `out`.
    ///
    /// Piecewise rules choose their branch from these values: `relu` gives `1`
    /// for `u > 0` and passes nothing otherwise; `atan` gives `1/(1 + u^2)` for
    /// `|u| ≤ 1` and the equal `(1/u)^2/(1 + (1/u)^2)` beyond, where `u^2` could
    /// overflow. A nan where a branch is chosen gives the expression `nan`
    /// (the derivative is undefined there, as the backward pass reports).
    ///
    /// Leaves, positions beyond the inputs, and `inputs` shorter than the op's
    /// arity give [`Rule::PassesNothing`]; nothing here panics.
    ///
    /// Sources: the derivatives are the standard ones; the conventions at kinks
    /// are PyTorch's (`torch/csrc/autograd/FunctionsManual.cpp`), as in the op
    /// table.
    pub fn rule(self, position: usize, inputs: &[f64], out: f64) -> Rule {
        let Some(&v) = inputs.get(position) else {
            return Rule::PassesNothing;
        };
        // The first operand, and the second of a binary op.
        let u = v;
        let b = inputs.get(1).copied().unwrap_or(f64::NAN);
        let a = inputs.first().copied().unwrap_or(f64::NAN);
        match self {
            Op::Variable | Op::Const => Rule::PassesNothing,
            Op::Add => expr("1"),
            Op::Sub => {
                if position == 0 {
                    expr("1")
                } else {
                    expr("-1")
                }
            }
            Op::Mul => {
                if position == 0 {
                    expr("b")
                } else {
                    expr("a")
                }
            }
            Op::Div => {
                if position == 0 {
                    expr("1/b")
                } else {
                    // Not -a/b^2: b^2 overflows or underflows long before the quotient.
                    expr("-(a/b)/b")
                }
            }
            Op::Neg => expr("-1"),
            Op::Pow => {
                if position == 0 {
                    if b == 0.0 {
                        Rule::PassesNothing
                    } else if !a.is_finite() || !b.is_finite() || a <= 0.0 || exact_minus_one(b) {
                        expr("b*a^(b-1)")
                    } else {
                        // b − 1 would round: the op table's numeric rule then
                        // forms |a|^(b/2) twice and divides by |a| (see
                        // `pow_base_local` in ops.rs); the same steps here.
                        expr("b*abs(a)^(b/2)*abs(a)^(b/2)/abs(a)")
                    }
                } else if a == 0.0 && b >= 0.0 {
                    Rule::PassesNothing
                } else if a.powf(b).is_normal() || a <= 0.0 || !a.is_finite() || !b.is_finite() {
                    expr("a^b*ln(a)")
                } else {
                    // a^b under- or overflows where a^b·ln a does not: half
                    // powers on either side of ln a, as `pow_exponent_local`.
                    expr("a^(b/2)*ln(a)*a^(b/2)")
                }
            }
            Op::Exp => expr("exp(u)"),
            Op::Ln => expr("1/u"),
            Op::Log2 => expr("1/(u*ln(2))"),
            Op::Log10 => expr("1/(u*ln(10))"),
            Op::Sqrt => expr("0.5/sqrt(u)"),
            Op::Cbrt => expr("1/(3*cbrt(u)^2)"),
            Op::Abs => expr("sign(u)"),
            Op::Sin => expr("cos(u)"),
            Op::Cos => expr("-sin(u)"),
            Op::Tan => expr("1 + tan(u)^2"),
            // (1 - u)(1 + u), not 1 - u^2: exact near ±1, where u^2 rounds.
            Op::Asin => expr("1/sqrt((1 - u)*(1 + u))"),
            Op::Acos => expr("-1/sqrt((1 - u)*(1 + u))"),
            Op::Atan => {
                if u.is_nan() {
                    expr("nan")
                } else if u.abs() <= 1.0 {
                    expr("1/(1 + u^2)")
                } else {
                    // 1/(1 + u²) with numerator and denominator divided by u².
                    expr("(1/u)^2/(1 + (1/u)^2)")
                }
            }
            Op::Sinh => expr("cosh(u)"),
            Op::Cosh => expr("sinh(u)"),
            // sech², not 1 − tanh²: tanh(u) rounds to ±1 for |u| > 19.
            Op::Tanh => expr("1/cosh(u)^2"),
            Op::Asinh => {
                if u.is_nan() {
                    expr("nan")
                } else if u.abs() <= ASINH_PLAIN_LIMIT {
                    expr("1/sqrt(u^2 + 1)")
                } else {
                    // √(u² + 1) = |u|·√(1 + 1/u²).
                    expr("1/(abs(u)*sqrt(1 + (1/u)^2))")
                }
            }
            // √(u − 1)·√(u + 1), not √(u² − 1): no overflow, no rounding near 1.
            Op::Acosh => expr("1/(sqrt(u - 1)*sqrt(u + 1))"),
            Op::Atanh => expr("1/((1 - u)*(1 + u))"),
            // σ(u)·σ(−u) = σ(u)·(1 − σ(u)), without the cancellation in 1 − σ(u).
            Op::Sigmoid => expr("sigmoid(u)*sigmoid(-u)"),
            Op::Relu => {
                if u.is_nan() {
                    expr("nan")
                } else if u > 0.0 {
                    expr("1")
                } else {
                    Rule::PassesNothing
                }
            }
            Op::Softplus => expr("sigmoid(u)"),
            Op::Gelu => gelu_rule(u),
            Op::Floor | Op::Ceil | Op::Round | Op::Sign | Op::Detach => Rule::PassesNothing,
            Op::Min | Op::Max => extremum_rule(inputs, position, out),
        }
    }
}

/// `∂gelu(u)/∂u = Φ(u) + u·φ(u)`, Φ and φ the standard normal CDF and density.
///
/// The language has no `erf`, so Φ(u) is written `gelu(u)/u` (gelu(u) = u·Φ(u))
/// and φ(u) = `exp(-u^2/2)/sqrt(2π)` with 2π as a literal (a session may rebind
/// `pi`). At `u = 0`, `Φ(0) + 0 = 0.5`. For `0 < |u| < 1e-300`, where
/// `gelu(u)/u` loses digits, the rule is the first-order Taylor form
/// `0.5 + √(2/π)·u` (Φ(u) ≈ ½ + u/√(2π) and u·φ(u) ≈ u/√(2π)), whose error
/// O(u³) is below 1e-900: both are 0.5 in double precision.
fn gelu_rule(u: f64) -> Rule {
    if u.is_nan() {
        expr("nan")
    } else if u == 0.0 {
        expr("0.5")
    } else if u.abs() < GELU_TINY {
        expr("0.5 + 0.7978845608028654*u")
    } else {
        expr("gelu(u)/u + u*exp(-u^2/2)/sqrt(6.283185307179586)")
    }
}

/// `∂min/∂aᵢ`, `∂max/∂aᵢ`: `1` for the winner, `1/k` for each of `k` tied
/// winners (the gradient splits equally), nothing for the others; `nan` when
/// the output is nan (nan propagates).
fn extremum_rule(inputs: &[f64], position: usize, out: f64) -> Rule {
    if out.is_nan() {
        return expr("nan");
    }
    if inputs[position] != out {
        return Rule::PassesNothing;
    }
    match inputs.iter().filter(|&&v| v == out).count() {
        1 => expr("1"),
        ties => Rule::Expr(Cow::Owned(format!("1/{ties}"))),
    }
}

/// Whether `b − 1` is exact in f64: the rounding error of the sum is 0
/// (Knuth's TwoSum), as `pow_base_local` in ops.rs tests it.
fn exact_minus_one(b: f64) -> bool {
    let e = b - 1.0;
    let back = e - b;
    (b - (e - back)) + (-1.0 - back) == 0.0
}
