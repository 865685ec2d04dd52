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
//! `sech(u)^2`, not `1 - tanh(u)^2`), and the expression's own derivative
//! (the next order, when a derivative graph is differentiated again) does not
//! overflow or cancel either (`sech(u)^2`, not `1/cosh(u)^2`, which is inf/inf
//! at order 2 once cosh overflows; `normcdf(u) + u*normpdf(u)` for gelu, not a
//! quotient by u). Where an op passes no gradient at a
//! point (`floor`, `relu` for `u ≤ 0`, a `min`/`max` loser, `∂a^0/∂a`), the rule
//! is [`Rule::PassesNothing`] instead of an expression that evaluates to 0.
//!
//! A derivative graph is evaluated again when `:=` moves a leaf, so a rule
//! chosen at one point must stay right at every other: the rules of smooth ops
//! are one expression for every point, with no branch (where a stable form
//! needs a scale, as atan's and asinh's, the scale `detach(max(abs(u), 1))` is
//! inside the expression: the value does not depend on it, so it is detached,
//! and the next order does not follow the branch of `max`). Only the rules at
//! kinks and masks choose at the current point: `relu`, `min`/`max`, and `^`
//! (its masks at `b = 0` and `a = 0`, and the half-power form where `b − 1`
//! rounds).
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
            // 1/(1 + u²) with numerator and denominator divided by m²,
            // m = max(|u|, 1): u² never overflows, and the value does not
            // depend on m, so the rule needs no branch (see the module doc).
            Op::Atan => expr(
                "(1/detach(max(abs(u), 1)))^2/((1/detach(max(abs(u), 1)))^2 + (u/detach(max(abs(u), 1)))^2)",
            ),
            Op::Sinh => expr("cosh(u)"),
            Op::Cosh => expr("sinh(u)"),
            // sech², not 1 − tanh²: tanh(u) rounds to ±1 for |u| > 19; and not
            // 1/cosh(u)^2, whose own derivative is inf/inf once cosh overflows.
            Op::Tanh => expr("sech(u)^2"),
            Op::Sech => expr("-sech(u)*tanh(u)"),
            // √(u² + 1) = m·√((u/m)² + (1/m)²), m = max(|u|, 1): no overflow.
            Op::Asinh => expr(
                "1/(detach(max(abs(u), 1))*sqrt((u/detach(max(abs(u), 1)))^2 + (1/detach(max(abs(u), 1)))^2))",
            ),
            // √(u − 1)·√(u + 1), not √(u² − 1): no overflow, no rounding near 1.
            Op::Acosh => expr("1/(sqrt(u - 1)*sqrt(u + 1))"),
            Op::Atanh => expr("1/((1 - u)*(1 + u))"),
            // σ(u)·(1 − σ(u)) = ¼·sech²(u/2), without the cancellation in
            // 1 − σ(u), and with a derivative that does not cancel near 0.
            Op::Sigmoid => expr("0.25*sech(u/2)^2"),
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
            Op::Gelu => expr("normcdf(u) + u*normpdf(u)"),
            Op::Normcdf => expr("normpdf(u)"),
            Op::Normpdf => expr("-u*normpdf(u)"),
            Op::Floor | Op::Ceil | Op::Round | Op::Sign | Op::Detach => Rule::PassesNothing,
            Op::Min | Op::Max => extremum_rule(inputs, position, out),
        }
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
