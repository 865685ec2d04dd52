//! The one op table: for every op its name, arity, forward function, local
//! partial derivatives and the formula text a trace prints.
//!
//! # Conventions at kinks and edges (as PyTorch)
//!
//! A backward step either *multiplies* (the input's gradient grows by
//! `upstream × local`, so `inf × 0 = nan` stays nan) or *passes nothing* (the
//! input's gradient is not touched: [`OpInfo::passes`] is false). An op passes
//! nothing exactly where PyTorch's backward formula selects a zero rather than
//! multiplying by one (`derivatives.yaml`, `FunctionsManual.cpp`):
//!
//! | op | passes nothing where | PyTorch |
//! |---|---|---|
//! | `relu` | u ≤ 0 (so `relu'(0)` is 0) | `threshold_backward`: `where(u <= 0, 0, grad)` |
//! | `floor`, `ceil`, `round`, `sign` | everywhere | `zeros_like(grad)` |
//! | `detach` | everywhere | no gradient edge at all |
//! | `max`, `min` | the inputs that are not the extremum | `masked_fill_(…, 0)` / index select |
//! | `a ^ b`, base | b = 0 (also at a = 0, with `0^0 = 1`) | `pow_backward_self`: `where(b == 0, 0, …)` |
//! | `a ^ b`, exponent | a = 0 and b ≥ 0 | `pow_backward_exponent`: `where(a == 0 & b >= 0, 0, …)` |
//!
//! Everything else multiplies, including `abs` at 0 (local 0, PyTorch's
//! `grad * sgn(u)`: `inf × 0 = nan`), `sqrt'(0) = +inf`, `cbrt'(0) = +inf`,
//! and ties of `max`/`min`, which split the gradient equally (`grad / k`). nan
//! in `max`/`min` propagates to the value and every local derivative, and nan
//! in `relu` gives local nan (multiplies).
//!
//! # Numerics
//!
//! Every local derivative is computed so that no intermediate overflows,
//! underflows or cancels where the true value is a normal number: no `u²`,
//! `1 ± u²`, `u² − 1`, `b²` or `s·(1 − s)` is formed where it would. Each row
//! says how; docs/accuracy.md has the measured error of every op over a sweep
//! of the f64 range against mpmath.

use std::sync::LazyLock;

use rustc_hash::FxHashMap;

use super::rules::{
    A, B, CALCULUS, Constant, Derivative, Expr, OUT, Passing, Stable, U, e, flat, n, pow_base_form,
    pow_exponent_form, smooth, stable, stable_at_infinity,
};
use super::{Arity, Branch, Domain, Kinks, Notation, Op, OpInfo, Shortcut};

impl Op {
    /// The row's [`OpInfo::shortcut`], read from a copy of that one column
    /// (41 bytes, made from the table at compile time): the backward walk
    /// asks it of every node, and the whole row is far larger.
    #[inline(always)]
    pub fn shortcut(self) -> Option<Shortcut> {
        SHORTCUTS[self as usize]
    }

    /// This op's row of the op table.
    pub fn info(self) -> &'static OpInfo {
        &TABLE[self as usize]
    }

    /// The op a user-facing function name calls: `"exp"`, `"ln"`, `"log"` (= ln),
    /// `"pow"`, `"max"`, `"detach"`, …; `None` for anything else, including
    /// operator symbols (`"+"`, `"^"`) and the leaf names `"leaf"`, `"const"`, `"neg"`.
    pub fn from_function_name(name: &str) -> Option<Op> {
        // Every name of an expression is looked up here: by (Fx) hash, not by a scan.
        static BY_NAME: LazyLock<FxHashMap<&'static str, Op>> = LazyLock::new(|| {
            let functions = TABLE.iter().filter(|info| info.is_function());
            let names = functions.map(|info| (info.name, info.op));
            names.chain(ALIASES.iter().copied()).collect()
        });
        BY_NAME.get(name).copied()
    }

    /// The whole op table, one [`OpInfo`] per op, in the order of [`Op`]'s variants.
    pub fn table() -> &'static [OpInfo] {
        &TABLE
    }

    /// True for the leaves `Variable` and `Const`.
    pub fn is_leaf(self) -> bool {
        self.info().arity == Arity::Leaf
    }

    /// Every name [`Op::from_function_name`] accepts (`"exp"`, …, `"log"`,
    /// `"pow"`), for completion, help and "did you mean" suggestions.
    pub fn function_names() -> impl Iterator<Item = &'static str> {
        TABLE
            .iter()
            .filter(|info| info.is_function())
            .map(|info| info.name)
            .chain(ALIASES.iter().map(|&(alias, _)| alias))
    }
}

impl OpInfo {
    /// The local derivative at input `position`: the one derivative of a
    /// variadic op for every position; `None` for leaves and for positions
    /// beyond the op's arity.
    pub fn derivative(&self, position: usize) -> Option<&'static Derivative> {
        match self.arity {
            Arity::Variadic => self.derivatives.first(),
            _ => self.derivatives.get(position),
        }
    }

    /// Whether the op passes any gradient to its input at `position`, given the
    /// input values and the output value: false where the gradient is zero by
    /// definition (the row's [`Passing`], see the module's conventions), and
    /// then a backward walk leaves that input's gradient untouched instead of
    /// adding `upstream × local` (which would be nan for an infinite upstream).
    /// [`OpInfo::local`] is 0 wherever this is false.
    pub fn passes(&self, inputs: &[f64], out: f64, position: usize) -> bool {
        self.derivative(position)
            .is_some_and(|d| d.passing.branch(inputs, out, position) != Branch::Nothing)
    }

    /// True if users call this op by its name (`tanh(x)`), false for operators
    /// and leaves.
    fn is_function(&self) -> bool {
        self.notation == Notation::Call
    }
}

impl Arity {
    /// Whether an op of this arity can be applied to `n` inputs (never, for a leaf).
    pub fn accepts(self, n: usize) -> bool {
        match self {
            Arity::Leaf => false,
            Arity::Unary => n == 1,
            Arity::Binary => n == 2,
            Arity::Variadic => n >= 1,
        }
    }

    /// The accepted input count as text for [`ArityError`](super::ArityError):
    /// `"no"`, `"1"`, `"2"` or `"1 or more"`.
    pub fn expected(self) -> &'static str {
        match self {
            Arity::Leaf => "no",
            Arity::Unary => "1",
            Arity::Binary => "2",
            Arity::Variadic => "1 or more",
        }
    }
}

/// Other names for table ops: `log` is `ln`, `pow(a, b)` is `a ^ b`.
const ALIASES: [(&str, Op); 2] = [("log", Op::Ln), ("pow", Op::Pow)];

// ---------------------------------------------------------------------------
// The table. One entry per op, in the order of `Op`'s variants (a test checks).

/// A unary op that is differentiable: `local` is a function of (input, output).
macro_rules! unary {
    (op: $op:ident, name: $name:literal, forward: $forward:expr, local: $local:expr,
     derivative: $derivative:expr, summary: $summary:literal, example: $example:literal
     $(, kinks: $kinks:ident)? $(, domain: $domain:ident)? $(,)?) => {
        OpInfo {
            op: Op::$op,
            name: $name,
            arity: Arity::Unary,
            notation: Notation::Call,
            shortcut: None,
            forward: |x| {
                let f: fn(f64) -> f64 = $forward;
                f(x[0])
            },
            local: |x, out, _| {
                let f: fn(f64, f64) -> f64 = $local;
                f(x[0], out)
            },
            derivatives: &[$derivative],
            differentiable: true,
            kinks: unary!(@kinks $($kinks)?),
            domain: unary!(@domain $($domain)?),
            summary: $summary,
            example: $example,
        }
    };
    (@kinks) => { Kinks::Smooth };
    (@kinks $kinks:ident) => { Kinks::$kinks };
    (@domain) => { Domain::Reals };
    (@domain $domain:ident) => { Domain::$domain };
}

/// The logarithm to a base b (`forward`, `f64::log2` or `f64::log10`):
/// a unary op of the positive reals with the local derivative `log_b(e)/u`
/// (`log_e` is `log_b(e)`, a constant of `std::f64::consts`) and the rule
/// `1/(u·ln b)` (`ln_base` names `ln b`, a [`Constant`]).
macro_rules! logarithm {
    (op: $op:ident, name: $name:literal, forward: $forward:expr, log_e: $log_e:ident,
     ln_base: $ln_base:ident, summary: $summary:literal, example: $example:literal $(,)?) => {
        unary! {
            op: $op,
            name: $name,
            forward: $forward,
            local: |u, _| std::f64::consts::$log_e / u,
            derivative: smooth(e!(Div, n(1.0), e!(Mul, U, Expr::Named(Constant::$ln_base))), CALCULUS),
            summary: $summary,
            example: $example,
            domain: Positive,
        }
    };
}

/// A unary op whose gradient is 0 by definition.
macro_rules! flat {
    (op: $op:ident, name: $name:literal, forward: $forward:expr, passing: $passing:expr,
     kinks: $kinks:ident, summary: $summary:literal, example: $example:literal $(,)?) => {
        OpInfo {
            op: Op::$op,
            name: $name,
            arity: Arity::Unary,
            notation: Notation::Call,
            shortcut: None,
            forward: |x| {
                let f: fn(f64) -> f64 = $forward;
                f(x[0])
            },
            local: |_, _, _| 0.0,
            derivatives: &[flat($passing, CONVENTION)],
            differentiable: false,
            kinks: Kinks::$kinks,
            domain: Domain::Reals,
            summary: $summary,
            example: $example,
        }
    };
}

/// The conventions at kinks (PyTorch's backward formulas).
const CONVENTION: &str = "PyTorch's backward (derivatives.yaml, FunctionsManual.cpp)";

/// `m = max(|u|, 1)`, detached: a scale the value does not depend on.
const M: Expr = e!(Detach, e!(Max, e!(Abs, U), n(1.0)));

/// `(1/m)²/((1/m)² + (u/m)²)` over the expressions `u` and `m` (the
/// scale): atan′ = `1/(1 + u²)` without forming `u²`.
macro_rules! atan_scaled {
    ($u:expr, $m:expr) => {
        e!(
            Div,
            e!(Pow, e!(Div, n(1.0), $m), n(2.0)),
            e!(
                Add,
                e!(Pow, e!(Div, n(1.0), $m), n(2.0)),
                e!(Pow, e!(Div, $u, $m), n(2.0))
            )
        )
    };
}

/// atan′ built as `(1/m)²/((1/m)² + (u/m)²)`: `1/(1 + u²)` without forming
/// `u²` (see [`atan_local`]).
const ATAN_SCALED: Expr = atan_scaled!(U, M);

/// asinh′ built as `1/(m·√((u/m)² + (1/m)²))`: `1/√(u² + 1)` without `u²`.
const ASINH_SCALED: Expr = e!(
    Div,
    n(1.0),
    e!(
        Mul,
        M,
        e!(
            Sqrt,
            e!(
                Add,
                e!(Pow, e!(Div, U, M), n(2.0)),
                e!(Pow, e!(Div, n(1.0), M), n(2.0))
            )
        )
    )
);

/// u clamped to ±f64::MAX: u itself at every finite point (and nothing
/// passes through the clamp at ±inf), so that a built form in which u is a
/// factor meets no `inf·0` at u = ±inf.
const CLAMPED: Expr = e!(Max, e!(Min, U, n(f64::MAX)), n(-f64::MAX));

/// `max(|v|, 1)` of the clamped u, detached: f64::MAX at u = ±inf.
const M_CLAMPED: Expr = e!(Detach, e!(Max, e!(Abs, CLAMPED), n(1.0)));

/// atan′ at u = ±inf: [`ATAN_SCALED`] over the clamped u, `(1/m)²` underflows
/// to 0 and `(v/m)² = 1`, so the value is 0 and every derivative of it is 0.
const ATAN_AT_INFINITY: Expr = atan_scaled!(CLAMPED, M_CLAMPED);

/// asinh′ at u = ±inf: `(1/m)/√((v/m′)² + (1/m)²)` with `m = max(|u|, 1)`
/// (inf there) and `v/m′` the clamped u over its own scale (1 there): 0/1.
/// At every finite u, m = m′ and v = u: [`ASINH_SCALED`].
const ASINH_AT_INFINITY: Expr = e!(
    Div,
    e!(Div, n(1.0), M),
    e!(
        Sqrt,
        e!(
            Add,
            e!(Pow, e!(Div, CLAMPED, M_CLAMPED), n(2.0)),
            e!(Pow, e!(Div, n(1.0), M), n(2.0))
        )
    )
);

/// cbrt′ at u = ±inf as `(1/(3·c))·(1/c)`, c = cbrt(u): no factor is
/// infinite, where `1/(3·c²)` differentiates `c²` to `2c = inf` times 0.
const CBRT_AT_INFINITY: Expr = e!(
    Mul,
    e!(Div, n(1.0), e!(Mul, n(3.0), OUT)),
    e!(Div, n(1.0), OUT)
);

/// acosh′ at u = +inf as `(1/√(u − 1))·(1/√(u + 1))`: both factors 0.
const ACOSH_AT_INFINITY: Expr = e!(
    Mul,
    e!(Div, n(1.0), e!(Sqrt, e!(Sub, U, n(1.0)))),
    e!(Div, n(1.0), e!(Sqrt, e!(Add, U, n(1.0))))
);

/// u clamped to ±1e10, for the factor u of `u·φ(u)`: φ(u) is exactly 0 for
/// |u| > 38.6, so the product (and every derivative of it, a polynomial times
/// φ) is the same at every finite u; 1e10 rather than f64::MAX so that the
/// products of clamped factors at higher orders stay finite.
const CLAMPED_BELOW_1E10: Expr = e!(Max, e!(Min, U, n(1e10)), n(-1e10));

/// normpdf′ at u = ±inf: `−v·φ(u)` with v the clamped u (`−u·φ(u)` is inf·0).
const NORMPDF_AT_INFINITY: Expr = e!(Mul, e!(Neg, CLAMPED_BELOW_1E10), OUT);

/// gelu′ at u = ±inf: `Φ(u) + v·φ(u)` with v the clamped u: 1 at +inf, 0 at −inf.
const GELU_AT_INFINITY: Expr = e!(
    Add,
    e!(Normcdf, U),
    e!(Mul, CLAMPED_BELOW_1E10, e!(Normpdf, U))
);

/// The usual built form `finite`, or `at_infinity` where u is ±inf.
fn at_infinity(
    inputs: &[f64],
    finite: Option<&'static Expr>,
    at_infinity: &'static Expr,
) -> Option<&'static Expr> {
    if inputs.first().is_some_and(|u| u.is_infinite()) {
        Some(at_infinity)
    } else {
        finite
    }
}

/// Why a form is chosen at ±inf ([`stable_at_infinity`]).
const AT_INFINITY: &str = "at u = ±inf a form whose intermediates stay finite (u clamped where it is a factor), so that every order is its limit there";

/// The `shortcut` column of [`TABLE`], for [`Op::shortcut`].
static SHORTCUTS: [Option<Shortcut>; 41] = {
    let mut column = [None; 41];
    let mut i = 0;
    while i < TABLE.len() {
        column[i] = TABLE[i].shortcut;
        i += 1;
    }
    column
};

static TABLE: [OpInfo; 41] = [
    OpInfo {
        op: Op::Variable,
        name: "leaf",
        arity: Arity::Leaf,
        notation: Notation::Leaf,
        shortcut: None,
        forward: leaf_value,
        local: |_, _, _| 0.0,
        derivatives: &[],
        differentiable: false,
        kinks: Kinks::Smooth,
        domain: Domain::Reals,
        summary: "a variable: an input that gradients are taken for",
        example: "x = 2",
    },
    OpInfo {
        op: Op::Const,
        name: "const",
        arity: Arity::Leaf,
        notation: Notation::Leaf,
        shortcut: None,
        forward: leaf_value,
        local: |_, _, _| 0.0,
        derivatives: &[],
        differentiable: false,
        kinks: Kinks::Smooth,
        domain: Domain::Reals,
        summary: "a literal number: a leaf that is not a variable",
        example: "2.5",
    },
    OpInfo {
        op: Op::Add,
        name: "+",
        arity: Arity::Binary,
        notation: Notation::Infix,
        shortcut: Some(Shortcut::Add),
        forward: |x| x[0] + x[1],
        local: |_, _, _| 1.0,
        derivatives: &[smooth(n(1.0), CALCULUS), smooth(n(1.0), CALCULUS)],
        differentiable: true,
        kinks: Kinks::Smooth,
        domain: Domain::Reals,
        summary: "addition",
        example: "2 + 3 = 5",
    },
    OpInfo {
        op: Op::Sub,
        name: "-",
        arity: Arity::Binary,
        notation: Notation::Infix,
        shortcut: Some(Shortcut::Sub),
        forward: |x| x[0] - x[1],
        local: |_, _, wrt| if wrt == 0 { 1.0 } else { -1.0 },
        derivatives: &[smooth(n(1.0), CALCULUS), smooth(n(-1.0), CALCULUS)],
        differentiable: true,
        kinks: Kinks::Smooth,
        domain: Domain::Reals,
        summary: "subtraction",
        example: "5 - 3 = 2",
    },
    OpInfo {
        op: Op::Mul,
        name: "*",
        arity: Arity::Binary,
        notation: Notation::Infix,
        shortcut: Some(Shortcut::Mul),
        forward: |x| x[0] * x[1],
        // The other factor.
        local: |x, _, wrt| x[1 - wrt],
        derivatives: &[smooth(B, CALCULUS), smooth(A, CALCULUS)],
        differentiable: true,
        kinks: Kinks::Smooth,
        domain: Domain::Reals,
        summary: "multiplication",
        example: "2 * 3 = 6",
    },
    OpInfo {
        op: Op::Div,
        name: "/",
        arity: Arity::Binary,
        notation: Notation::Infix,
        shortcut: None,
        forward: |x| x[0] / x[1],
        local: |x, _, wrt| {
            if wrt == 0 {
                1.0 / x[1]
            } else {
                div_local_b(x[0], x[1])
            }
        },
        derivatives: &[
            smooth(e!(Div, n(1.0), B), CALCULUS),
            stable(
                e!(Div, e!(Neg, A), e!(Pow, B, n(2.0))),
                e!(Neg, e!(Div, e!(Div, A, B), B)),
                "b² overflows or underflows long before a/b does",
                CALCULUS,
            ),
        ],
        differentiable: true,
        kinks: Kinks::Smooth,
        domain: Domain::NonzeroDivisor,
        summary: "division (1/0 = inf, 0/0 = nan)",
        example: "3 / 2 = 1.5",
    },
    OpInfo {
        op: Op::Neg,
        name: "neg",
        arity: Arity::Unary,
        notation: Notation::Prefix,
        shortcut: None,
        forward: |x| -x[0],
        local: |_, _, _| -1.0,
        derivatives: &[smooth(n(-1.0), CALCULUS)],
        differentiable: true,
        kinks: Kinks::Smooth,
        domain: Domain::Reals,
        summary: "negation (unary minus)",
        example: "-(3) = -3",
    },
    OpInfo {
        op: Op::Pow,
        name: "^",
        arity: Arity::Binary,
        notation: Notation::Infix,
        shortcut: None,
        forward: |x| x[0].powf(x[1]),
        local: pow_local,
        derivatives: &[
            Derivative {
                textbook: e!(Mul, B, e!(Pow, A, e!(Sub, B, n(1.0)))),
                stable: Stable::AtPoint {
                    choose: pow_base_form,
                    why: "b − 1 rounds (the rounding is amplified by ln a) or a^(b−1) is not normal",
                },
                passing: Passing::WhereExponentNonzero,
                source: "power rule; nothing at b = 0 as PyTorch's pow_backward_self",
            },
            Derivative {
                textbook: e!(Mul, OUT, e!(Ln, A)),
                stable: Stable::AtPoint {
                    choose: pow_exponent_form,
                    why: "a^b under- or overflows where a^b·ln a does not",
                },
                passing: Passing::UnlessZeroBase,
                source: "d/db e^(b·ln a); nothing at a = 0, b ≥ 0 as PyTorch's pow_backward_exponent",
            },
        ],
        differentiable: true,
        kinks: Kinks::Smooth,
        domain: Domain::RealPowers,
        summary: "power, also pow(a, b); right-associative, 0^0 = 1",
        example: "2 ^ 10 = 1024",
    },
    unary! {
        op: Exp,
        name: "exp",
        forward: f64::exp,
        local: |_, out| out,
        derivative: smooth(OUT, CALCULUS),
        summary: "e to the power u",
        example: "exp(1) = 2.718281828",
    },
    unary! {
        op: Ln,
        name: "ln",
        forward: f64::ln,
        local: |u, _| 1.0 / u,
        derivative: smooth(e!(Div, n(1.0), U), CALCULUS),
        summary: "natural logarithm, also log(u)",
        example: "ln(10) = 2.302585093",
        domain: Positive,
    },
    // log_b(e)/u, not 1/(u·ln b): u·ln 10 overflows for u > 7.8e307, so
    // 1/(u·ln 10) gave 0 at u = 1.8e308 where the true value is 2.4e-309.
    logarithm! { op: Log2, name: "log2", forward: f64::log2, log_e: LOG2_E, ln_base: Ln2,
    summary: "base-2 logarithm", example: "log2(8) = 3" },
    logarithm! { op: Log10, name: "log10", forward: f64::log10, log_e: LOG10_E, ln_base: Ln10,
    summary: "base-10 logarithm", example: "log10(1000) = 3" },
    // 0.5/sqrt(0) = +inf: sqrt'(0) is +inf by convention.
    unary! {
        op: Sqrt,
        name: "sqrt",
        forward: f64::sqrt,
        local: |_, out| 0.5 / out,
        derivative: smooth(e!(Div, n(1.0), e!(Mul, n(2.0), OUT)), CALCULUS),
        summary: "square root",
        example: "sqrt(2) = 1.414213562",
        domain: NonNegative,
    },
    // cbrt(u)² stays in range for every f64 u (subnormal u: cbrt ≥ 1.7e-108),
    // so 1/(3·cbrt(u)²) neither overflows nor underflows before the last step.
    unary! {
        op: Cbrt,
        name: "cbrt",
        forward: f64::cbrt,
        local: |_, out| 1.0 / (3.0 * out * out),
        derivative: stable_at_infinity(
            e!(Div, n(1.0), e!(Mul, n(3.0), e!(Pow, OUT, n(2.0)))),
            |x| at_infinity(x, None, &CBRT_AT_INFINITY),
            AT_INFINITY,
            CALCULUS,
        ),
        summary: "real cube root",
        example: "cbrt(-27) = -3",
    },
    unary! {
        op: Abs,
        name: "abs",
        forward: f64::abs,
        local: |u, _| sign(u),
        derivative: smooth(e!(Sign, U), "calculus; 0 at u = 0 as PyTorch's sgn"),
        summary: "absolute value",
        example: "abs(-2.5) = 2.5",
        kinks: AtZero,
    },
    unary! {
        op: Sin,
        name: "sin",
        forward: f64::sin,
        local: |u, _| u.cos(),
        derivative: smooth(e!(Cos, U), CALCULUS),
        summary: "sine (radians)",
        example: "sin(1) = 0.8414709848",
    },
    unary! {
        op: Cos,
        name: "cos",
        forward: f64::cos,
        local: |u, _| -u.sin(),
        derivative: smooth(e!(Neg, e!(Sin, U)), CALCULUS),
        summary: "cosine (radians)",
        example: "cos(1) = 0.5403023059",
    },
    // tan of an f64 stays below 1e17 in magnitude, so tan² never overflows.
    unary! {
        op: Tan,
        name: "tan",
        forward: f64::tan,
        local: |_, out| 1.0 + out * out,
        derivative: smooth(e!(Add, n(1.0), e!(Pow, OUT, n(2.0))), CALCULUS),
        summary: "tangent (radians)",
        example: "tan(1) = 1.557407725",
    },
    // 1 − u² loses the digits of u near ±1; (1 − u)(1 + u) keeps them
    // (`one_minus_square`). Also for acos.
    unary! {
        op: Asin,
        name: "asin",
        forward: f64::asin,
        local: |u, _| 1.0 / one_minus_square(u).sqrt(),
        derivative: stable(
            e!(Div, n(1.0), e!(Sqrt, e!(Sub, n(1.0), e!(Pow, U, n(2.0))))),
            e!(Div, n(1.0), e!(Sqrt, e!(Mul, e!(Sub, n(1.0), U), e!(Add, n(1.0), U)))),
            "1 − u² loses u's digits near ±1; (1 − u)(1 + u) keeps them",
            CALCULUS,
        ),
        summary: "inverse sine",
        example: "asin(0.5) = 0.5235987756",
        domain: MinusOneToOne,
    },
    unary! {
        op: Acos,
        name: "acos",
        forward: f64::acos,
        local: |u, _| -1.0 / one_minus_square(u).sqrt(),
        derivative: stable(
            e!(Div, n(-1.0), e!(Sqrt, e!(Sub, n(1.0), e!(Pow, U, n(2.0))))),
            e!(Div, n(-1.0), e!(Sqrt, e!(Mul, e!(Sub, n(1.0), U), e!(Add, n(1.0), U)))),
            "1 − u² loses u's digits near ±1; (1 − u)(1 + u) keeps them",
            CALCULUS,
        ),
        summary: "inverse cosine",
        example: "acos(0.5) = 1.047197551",
        domain: MinusOneToOne,
    },
    // 1 + u² overflows for |u| > 1.3e154; `atan_local` divides by u first.
    unary! {
        op: Atan,
        name: "atan",
        forward: f64::atan,
        local: |u, _| atan_local(u),
        derivative: stable_at_infinity(
            e!(Div, n(1.0), e!(Add, n(1.0), e!(Pow, U, n(2.0)))),
            |x| at_infinity(x, Some(&ATAN_SCALED), &ATAN_AT_INFINITY),
            "u² overflows for |u| > 1.3e154; numerator and denominator are divided by m², m = max(|u|, 1) (detached: the value does not depend on it); at u = ±inf u is clamped to ±f64::MAX first",
            CALCULUS,
        ),
        summary: "inverse tangent",
        example: "atan(1) = 0.7853981634",
    },
    unary! {
        op: Sinh,
        name: "sinh",
        forward: f64::sinh,
        local: |u, _| u.cosh(),
        derivative: smooth(e!(Cosh, U), CALCULUS),
        summary: "hyperbolic sine",
        example: "sinh(1) = 1.175201194",
    },
    unary! {
        op: Cosh,
        name: "cosh",
        forward: f64::cosh,
        local: |u, _| u.sinh(),
        derivative: smooth(e!(Sinh, U), CALCULUS),
        summary: "hyperbolic cosine",
        example: "cosh(1) = 1.543080635",
    },
    // 1 − tanh(u)² cancels once tanh(u) rounds near ±1 (all digits lost by
    // |u| = 19); `tanh_local` computes sech²(u) from e^−2|u| instead.
    unary! {
        op: Tanh,
        name: "tanh",
        forward: f64::tanh,
        local: |u, _| tanh_local(u),
        derivative: stable(
            e!(Sub, n(1.0), e!(Pow, OUT, n(2.0))),
            e!(Pow, e!(Sech, U), n(2.0)),
            "1 − tanh(u)² cancels once tanh(u) rounds near ±1; sech(u)² is the same number (and not 1/cosh(u)², whose own derivative is inf/inf once cosh overflows)",
            CALCULUS,
        ),
        summary: "hyperbolic tangent",
        example: "tanh(0.5) = 0.4621171573",
    },
    // −sech(u)·tanh(u): both factors are bounded, so no inf·0 at any |u|.
    unary! {
        op: Sech,
        name: "sech",
        forward: sech,
        local: |u, out| -out * u.tanh(),
        derivative: smooth(e!(Mul, e!(Neg, OUT), e!(Tanh, U)), CALCULUS),
        summary: "hyperbolic secant 1/cosh(u), without overflow",
        example: "sech(1) = 0.6480542737",
    },
    // hypot(u, 1) = √(u² + 1) without overflow for large u.
    unary! {
        op: Asinh,
        name: "asinh",
        // libm's asinh (musl): Rust's f64::asinh overflows to inf for |u| near
        // f64::MAX (asinh(1.8e308) is 710.5).
        forward: libm::asinh,
        local: |u, _| 1.0 / u.hypot(1.0),
        derivative: stable_at_infinity(
            e!(Div, n(1.0), e!(Sqrt, e!(Add, e!(Pow, U, n(2.0)), n(1.0)))),
            |x| at_infinity(x, Some(&ASINH_SCALED), &ASINH_AT_INFINITY),
            "u² overflows for |u| > 1.3e154; √(u² + 1) = m·√((u/m)² + (1/m)²), m = max(|u|, 1) (detached); at u = ±inf (1/m)/√((v/m′)² + (1/m)²) with v = u clamped to ±f64::MAX",
            CALCULUS,
        ),
        summary: "inverse hyperbolic sine",
        example: "asinh(1) = 0.881373587",
    },
    // √(u² − 1) overflows for u > 1.3e154 (acosh'(1e200) would be 0, not
    // 1e-200); √(u − 1)·√(u + 1) is the same number and never overflows, and
    // u − 1 is exact near the pole u = 1 (Sterbenz).
    unary! {
        op: Acosh,
        name: "acosh",
        // libm's acosh (musl): Rust's f64::acosh loses half the digits next to
        // 1 (acosh(1 + 2^-52) off by 4e-9 relative) and overflows near f64::MAX.
        // musl ignores the sign (acosh(−1e5) = −1.5), so u < 1 is nan here.
        forward: |u| if u < 1.0 { f64::NAN } else { libm::acosh(u) },
        local: |u, _| 1.0 / ((u - 1.0).sqrt() * (u + 1.0).sqrt()),
        // √(u − 1)·√(u + 1) as textbooks also write it: nan below 1 as acosh
        // is (√(u² − 1) is not), no overflow, no rounding near 1.
        derivative: stable_at_infinity(
            e!(Div, n(1.0), e!(Mul, e!(Sqrt, e!(Sub, U, n(1.0))), e!(Sqrt, e!(Add, U, n(1.0))))),
            |x| at_infinity(x, None, &ACOSH_AT_INFINITY),
            AT_INFINITY,
            CALCULUS,
        ),
        summary: "inverse hyperbolic cosine",
        example: "acosh(2) = 1.316957897",
        domain: OneAndAbove,
    },
    unary! {
        op: Atanh,
        name: "atanh",
        // libm's atanh (musl): Rust's f64::atanh, 0.5·ln_1p(2u/(1 − u)),
        // cancels next to −1 (atanh(−1 + 2^-53) off by 2%).
        forward: libm::atanh,
        // (1/(1 − u))·(1/(1 + u)): the product (1 − u)(1 + u) overflows for
        // |u| > 1.3e154, where the true value is still subnormal.
        local: |u, _| (1.0 / (1.0 - u)) * (1.0 / (1.0 + u)),
        derivative: stable(
            e!(Div, n(1.0), e!(Sub, n(1.0), e!(Pow, U, n(2.0)))),
            e!(Div, n(1.0), e!(Mul, e!(Sub, n(1.0), U), e!(Add, n(1.0), U))),
            "1 − u² loses u's digits near ±1; (1 − u)(1 + u) keeps them",
            CALCULUS,
        ),
        summary: "inverse hyperbolic tangent",
        example: "atanh(0.5) = 0.5493061443",
        domain: BetweenMinusOneAndOne,
    },
    // s·(1 − s) is 0 once s rounds to 1 (u > 36.7) and loses digits well
    // before; ¼·sech²(u/2) is the same number with no subtraction.
    unary! {
        op: Sigmoid,
        name: "sigmoid",
        forward: sigmoid,
        local: |u, _| sigmoid_local(u),
        derivative: stable(
            e!(Mul, OUT, e!(Sub, n(1.0), OUT)),
            e!(Mul, n(0.25), e!(Pow, e!(Sech, e!(Div, U, n(2.0))), n(2.0))),
            "1 − sigmoid(u) cancels once sigmoid(u) rounds near 1; ¼·sech²(u/2) is the same number, and its own derivative does not cancel near 0",
            "the logistic function: σ′ = σ·(1 − σ)",
        ),
        summary: "logistic sigmoid 1/(1 + e^−u)",
        example: "sigmoid(0) = 0.5",
    },
    unary! {
        op: Relu,
        name: "relu",
        forward: relu,
        local: |u, _| step(u),
        derivative: Derivative {
            textbook: n(1.0),
            stable: Stable::Textbook,
            passing: Passing::WherePositive,
            source: "relu′ = 1 for u > 0; nothing at u ≤ 0 as PyTorch's threshold_backward",
        },
        summary: "rectified linear unit max(u, 0)",
        example: "relu(-3) = 0",
        kinks: AtZero,
    },
    unary! {
        op: Softplus,
        name: "softplus",
        forward: softplus,
        local: |u, _| sigmoid(u),
        derivative: smooth(e!(Sigmoid, U), "d/du ln(1 + e^u) = e^u/(1 + e^u)"),
        summary: "smooth relu ln(1 + e^u)",
        example: "softplus(0) = 0.6931471806",
    },
    unary! {
        op: Gelu,
        name: "gelu",
        forward: gelu,
        local: |u, _| gelu_local(u),
        derivative: stable_at_infinity(
            e!(Add, e!(Normcdf, U), e!(Mul, U, e!(Normpdf, U))),
            |x| at_infinity(x, None, &GELU_AT_INFINITY),
            AT_INFINITY,
            "product rule on u·Φ(u) (Hendrycks & Gimpel 2016)",
        ),
        summary: "Gaussian error linear unit u·Φ(u) (exact, erf)",
        example: "gelu(1) = 0.8413447461",
    },
    unary! {
        op: Normcdf,
        name: "normcdf",
        forward: normal_cdf,
        local: |u, _| normal_pdf(u),
        derivative: smooth(e!(Normpdf, U), "Φ′ = φ (the CDF's derivative is the density)"),
        summary: "standard normal CDF Φ(u) = ½·erfc(−u/√2)",
        example: "normcdf(1) = 0.8413447461",
    },
    unary! {
        op: Normpdf,
        name: "normpdf",
        forward: normal_pdf,
        local: |u, _| -u_normal_pdf(u),
        derivative: stable_at_infinity(
            e!(Mul, e!(Neg, U), OUT),
            |x| at_infinity(x, None, &NORMPDF_AT_INFINITY),
            AT_INFINITY,
            "chain rule on e^(−u²/2)/√(2π)",
        ),
        summary: "standard normal density φ(u) = e^(−u²/2)/√(2π)",
        example: "normpdf(1) = 0.2419707245",
    },
    flat! {
        op: Floor,
        name: "floor",
        forward: f64::floor,
        passing: Passing::NotDifferentiable,
        kinks: AtIntegers,
        summary: "largest integer ≤ u",
        example: "floor(-2.5) = -3",
    },
    flat! {
        op: Ceil,
        name: "ceil",
        forward: f64::ceil,
        passing: Passing::NotDifferentiable,
        kinks: AtIntegers,
        summary: "smallest integer ≥ u",
        example: "ceil(-2.5) = -2",
    },
    // f64::round rounds half away from zero.
    flat! {
        op: Round,
        name: "round",
        forward: f64::round,
        passing: Passing::NotDifferentiable,
        kinks: AtHalfIntegers,
        summary: "nearest integer, half away from zero (PyTorch rounds half to even)",
        example: "round(2.5) = 3",
    },
    flat! {
        op: Sign,
        name: "sign",
        forward: sign,
        passing: Passing::NotDifferentiable,
        kinks: AtZero,
        summary: "sign: −1, 0 or 1",
        example: "sign(-4) = -1",
    },
    flat! {
        op: Detach,
        name: "detach",
        forward: |u| u,
        passing: Passing::Detached,
        kinks: Smooth,
        summary: "u's value, passing no gradient (treat u as a constant)",
        example: "detach(3) = 3",
    },
    OpInfo {
        op: Op::Min,
        name: "min",
        arity: Arity::Variadic,
        notation: Notation::Call,
        shortcut: None,
        forward: |x| extremum(x, |a, b| a < b),
        local: extremum_local,
        derivatives: &[Derivative {
            textbook: n(1.0),
            stable: Stable::Textbook,
            passing: Passing::ToSmallest,
            source: CONVENTION,
        }],
        differentiable: true,
        kinks: Kinks::AtTies,
        domain: Domain::Reals,
        summary: "smallest of one or more values",
        example: "min(3, 1, 2) = 1",
    },
    OpInfo {
        op: Op::Max,
        name: "max",
        arity: Arity::Variadic,
        notation: Notation::Call,
        shortcut: None,
        forward: |x| extremum(x, |a, b| a > b),
        local: extremum_local,
        derivatives: &[Derivative {
            textbook: n(1.0),
            stable: Stable::Textbook,
            passing: Passing::ToLargest,
            source: CONVENTION,
        }],
        differentiable: true,
        kinks: Kinks::AtTies,
        domain: Domain::Reals,
        summary: "largest of one or more values",
        example: "max(3, 1, 2) = 3",
    },
];

// ---------------------------------------------------------------------------
// Forward functions and local derivatives that need more than one line.

/// Leaves are not applied; their value is set by `Graph::leaf`/`Graph::constant`.
/// As a function, a leaf passes its single value through.
fn leaf_value(x: &[f64]) -> f64 {
    x.first().copied().unwrap_or(f64::NAN)
}

/// `∂(a^b)/∂a` and `∂(a^b)/∂b` with PyTorch's conventions (`pow_backward_self`
/// and `pow_backward_exponent` in `torch/csrc/autograd/FunctionsManual.cpp`):
/// where `b = 0` the base passes nothing, and where `a = 0` and `b ≥ 0` the
/// exponent passes nothing ([`OpInfo::passes`]); the local derivative there is 0.
///
/// Both are first computed as the formula reads (`b·a^(b−1)`, `a^b·ln a`),
/// which is exact for small integer powers. Where that is not accurate — `b − 1`
/// is rounded (|b| < 1/2 or |b| ≥ 2^52: the rounding is amplified by `ln a`, up
/// to ~700 ulps), or `a^(b−1)` or `a^b` is not a normal number — `a^b` is taken
/// as `h·h` with `h = |a|^(b/2)` (b/2 is exact), and the product `b·h·h/|a|`
/// (or `h·h·ln a`) is formed on mantissas and exponents apart
/// ([`scaled_product`]), so it is finite wherever the true derivative is.
fn pow_local(x: &[f64], _out: f64, wrt: usize) -> f64 {
    let (a, b) = (x[0], x[1]);
    if wrt == 0 {
        if b == 0.0 { 0.0 } else { pow_base_local(a, b) }
    } else if a == 0.0 && b >= 0.0 {
        0.0
    } else {
        pow_exponent_local(a, b)
    }
}

/// `b·a^(b−1)` for `b ≠ 0` (see [`pow_local`]). Zero, infinite and nan
/// operands take IEEE `powf` as it is (`0^b`, `inf^b`), except that an
/// infinite b where `a^(b−1)` is 0 gives the limit 0; a negative base with a
/// non-integer exponent is nan.
fn pow_base_local(a: f64, b: f64) -> f64 {
    let e = b - 1.0;
    if a == 0.0 || !a.is_finite() || !b.is_finite() {
        let p = a.powf(e);
        if b.is_infinite() && p == 0.0 {
            // b·a^(b−1) → 0 as b → ±inf where a^(b−1) decays exponentially
            // (|a| < 1 at +inf, |a| > 1 at −inf): inf·0 would be nan.
            return 0.0;
        }
        return b * p;
    }
    if a < 0.0 && b.fract() != 0.0 {
        return f64::NAN;
    }
    // Whether b − 1 is exact: the rounding error of the sum (Knuth's TwoSum) is 0.
    let back = e - b;
    if (b - (e - back)) + (-1.0 - back) == 0.0 {
        let p = a.powf(e);
        if p.is_normal() {
            return b * p;
        }
    }
    let m = a.abs();
    let h = m.powf(b / 2.0);
    let magnitude = scaled_product(&[b, h, h], m);
    // a^(b−1) = (−1)^(b−1)·|a|^(b−1) for a < 0 and b an integer.
    if a < 0.0 && b % 2.0 == 0.0 {
        -magnitude
    } else {
        magnitude
    }
}

/// `a^b·ln a` (see [`pow_local`]): nan for `a < 0` (ln a is nan, as in
/// PyTorch); `−inf` for `a = 0, b < 0`; the limit 0 for `a = inf, b < 0`.
fn pow_exponent_local(a: f64, b: f64) -> f64 {
    let p = a.powf(b);
    if a == f64::INFINITY && p == 0.0 {
        return 0.0; // a^b·ln a → 0 as a → inf for b < 0: 0·inf would be nan
    }
    if p.is_normal() || a <= 0.0 || !a.is_finite() || !b.is_finite() {
        return p * a.ln();
    }
    let h = a.powf(b / 2.0);
    scaled_product(&[h, h, a.ln()], 1.0)
}

/// `factors[0]·factors[1]·…/divisor`, rounding each operation but never
/// overflowing or underflowing before the end: the mantissas (in [0.5, 1)) and
/// the powers of two are multiplied apart, and the power is applied last
/// (`libm::frexp`/`libm::scalbn`). If any operand is 0, infinite or nan, the
/// plain product and quotient are returned (0, inf or nan as IEEE gives them).
fn scaled_product(factors: &[f64], divisor: f64) -> f64 {
    let plain = || factors.iter().product::<f64>() / divisor;
    if divisor == 0.0 || !divisor.is_finite() {
        return plain();
    }
    let mut mantissa = 1.0;
    let mut exponent = 0i32;
    for &f in factors {
        if f == 0.0 || !f.is_finite() {
            return plain();
        }
        let (m, e) = libm::frexp(f);
        mantissa *= m;
        exponent += e;
    }
    let (m, e) = libm::frexp(divisor);
    // The mantissa stays within [2^-(n+1), 2] for n factors: no overflow.
    libm::scalbn(mantissa / m, exponent - e)
}

/// `∂(a/b)/∂b = −a/b²`, computed as `−(a/b)/b` so that `b²` never overflows
/// or underflows (`1e200/1e200` has `∂/∂b = −1e-200`, not 0). When `a/b` is
/// subnormal it has lost digits; then `b²` cannot overflow or underflow
/// (|b| ≥ |a|/2.2e-308), and `−a/(b·b)` is used instead.
fn div_local_b(a: f64, b: f64) -> f64 {
    let q = a / b;
    if q != 0.0 && q.abs() < f64::MIN_POSITIVE {
        -a / (b * b)
    } else {
        -q / b
    }
}

/// `1 − u²` as `(1 − u)(1 + u)`: near `u = ±1` one factor is exact (Sterbenz)
/// and the other is near 2, so the digits of u survive (`1 − u·u` rounds
/// `u·u` first and cancels). For `asin` and `acos`.
fn one_minus_square(u: f64) -> f64 {
    (1.0 - u) * (1.0 + u)
}

/// `atan'(u) = 1/(1 + u²)`, as `(1/m)²/((1/m)² + (u/m)²)` with
/// `m = max(|u|, 1)`: algebraically equal for every m, so `u²` never overflows
/// (`atan'(1e200) = 1e-400` underflows as it should, `atan'(1e154) = 1e-308`
/// stays normal). The same steps as the rule, which is branch-free so that a
/// derivative graph built from it is right at every point.
fn atan_local(u: f64) -> f64 {
    if u.is_infinite() {
        return 0.0; // the limit; the scaled form would be inf/inf
    }
    let m = u.abs().max(1.0);
    let (r, q) = (1.0 / m, u / m);
    r * r / (r * r + q * q)
}

/// `tanh'(u) = 1 − tanh(u)² = sech²(u)`, as [`sech`] squared: no
/// subtraction, so no cancellation as tanh(u) nears ±1, and no overflow; the
/// result is subnormal from |u| ≈ 354 and 0 from |u| ≈ 373, as the true value.
/// The same steps as the rule `sech(u)^2`.
fn tanh_local(u: f64) -> f64 {
    let s = sech(u);
    s * s
}

/// `sech(u) = 1/cosh(u)`; beyond |u| = 710, where cosh overflows, `2·e^−|u|`
/// (there `e^−2|u|` is below 1e-616, so `2e^−|u|/(1 + e^−2|u|)` is that).
fn sech(u: f64) -> f64 {
    let a = u.abs();
    if a < 710.0 {
        1.0 / a.cosh()
    } else {
        2.0 * (-a).exp()
    }
}

/// `sigmoid'(u) = σ(u)·σ(−u) = ¼·sech²(u/2)`: no subtraction (s·(1 − s) is 0
/// once s rounds to 1), and, unlike σ(u)·σ(−u), a form whose own derivative
/// (`−¼·sech²(u/2)·tanh(u/2)`) does not cancel near 0. The same steps as the
/// rule `0.25*sech(u/2)^2`.
fn sigmoid_local(u: f64) -> f64 {
    let s = sech(u / 2.0);
    0.25 * (s * s)
}

/// `sign(u)` with `sign(±0) = 0` and `sign(nan) = nan` (unlike `f64::signum`).
fn sign(u: f64) -> f64 {
    if u > 0.0 {
        1.0
    } else if u < 0.0 {
        -1.0
    } else if u == 0.0 {
        0.0
    } else {
        f64::NAN
    }
}

/// The derivative of relu: 1 for `u > 0`, 0 for `u ≤ 0` (so `relu'(0) = 0`),
/// nan for nan.
fn step(u: f64) -> f64 {
    if u.is_nan() {
        f64::NAN
    } else if u > 0.0 {
        1.0
    } else {
        0.0
    }
}

/// `max(u, 0)`, keeping nan (`f64::max` would return 0 for nan).
fn relu(u: f64) -> f64 {
    if u > 0.0 || u.is_nan() { u } else { 0.0 }
}

/// The logistic sigmoid, evaluated so that `exp` never overflows: `1/(1 + e^−u)`
/// for `u ≥ 0`, and the algebraically equal `e^u/(1 + e^u)` for `u < 0`
/// (the standard stable form, e.g. scipy's `expit`, PyTorch's CPU kernel).
/// `sigmoid(±1000)` is 1 and 0, with derivative 0.
fn sigmoid(u: f64) -> f64 {
    if u >= 0.0 {
        1.0 / (1.0 + (-u).exp())
    } else {
        let e = u.exp();
        e / (1.0 + e)
    }
}

/// `ln(1 + e^u)` as `max(u, 0) + ln(1 + e^−|u|)`: equal, since
/// `ln(1 + e^u) = u + ln(1 + e^−u)`, and `e^−|u| ≤ 1` never overflows
/// (the log-sum-exp trick; PyTorch uses a threshold instead).
fn softplus(u: f64) -> f64 {
    relu(u) + (-u.abs()).exp().ln_1p()
}

/// The exact GELU `u·Φ(u)` of Hendrycks & Gimpel (2016), "Gaussian Error Linear
/// Units", as PyTorch's `gelu(approximate='none')`. `Φ(u) = ½·(1 + erf(u/√2))`
/// is written `½·erfc(−u/√2)`, which keeps its precision for negative u.
fn gelu(u: f64) -> f64 {
    if u == f64::NEG_INFINITY {
        return -0.0; // the limit of u·Φ(u); −inf·0 would be nan
    }
    u * normal_cdf(u)
}

/// `d/du u·Φ(u) = Φ(u) + u·φ(u)`, φ the standard normal density. Both terms
/// are accurate to a few ulps, but their sum cancels next to its root
/// r ≈ −0.7518 (there Φ(u) ≈ −u·φ(u) ≈ 0.23, so an ulp of either is 1e-6 of
/// `gelu'(r + 1e-10)`). Within 1/16 of r it is summed instead as its Taylor
/// series about r, in powers of `t = u − r` with r a pair of f64
/// (`u − ROOT_HI` is exact there, by Sterbenz's lemma): the first term is
/// `0.43·t` and the rest is at most a tenth of it, so the sum keeps full
/// relative accuracy down to the root itself. The constants, and the bound
/// 6e-20 on the truncation, come from scripts/gelu_root_series.py (mpmath).
fn gelu_local(u: f64) -> f64 {
    const ROOT_HI: f64 = -0.751_791_524_693_564_5;
    const ROOT_LO: f64 = 1.495_675_917_700_988_3e-17;
    /// gelu'(r + t) = Σ SERIES[k−1]·t^k, k = 1 ..= 12.
    const SERIES: [f64; 12] = [
        0.431_493_992_314_046_9,
        0.388_284_982_990_552,
        -0.018_199_676_398_671_087,
        -0.114_008_233_297_221_7,
        -0.014_771_522_148_244_337,
        0.019_421_679_838_189_067,
        0.004_539_228_379_125_415,
        -0.002_239_538_068_073_497,
        -0.000_744_826_838_674_681_7,
        0.000_186_339_746_232_335_14,
        8.615_947_861_116_571e-5,
        -1.121_438_018_842_664e-5,
    ];
    let t = (u - ROOT_HI) - ROOT_LO;
    if t.abs() < 0.0625 {
        return t * SERIES
            .iter()
            .rev()
            .fold(0.0_f64, |sum, &c| sum.mul_add(t, c));
    }
    normal_cdf(u) + u_normal_pdf(u)
}

/// Φ, the standard normal cumulative distribution function, `½·erfc(−u/√2)`.
/// Rounding `−u/√2` to x perturbs erfc by the factor `e^(2x·δ)`, about 1.6e-13
/// at u = −37; the first-order correction `−(2/√π)·e^(−x²)·δ`, with the
/// rounding δ found exactly by a fused multiply-add and the tail of 1/√2,
/// removes it.
fn normal_cdf(u: f64) -> f64 {
    /// 1/√2 − FRAC_1_SQRT_2 (mpmath).
    const FRAC_1_SQRT_2_TAIL: f64 = -4.833_646_656_726_457e-17;
    let t = -u;
    let x = t * std::f64::consts::FRAC_1_SQRT_2;
    let delta = t.mul_add(std::f64::consts::FRAC_1_SQRT_2, -x) + t * FRAC_1_SQRT_2_TAIL;
    let correction = if delta == 0.0 || !delta.is_finite() {
        0.0
    } else {
        std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp() * delta
    };
    0.5 * (libm::erfc(x) - correction)
}

/// φ(u) = e^(−u²/2)/√(2π), the standard normal density, with `u²` split
/// exactly as in [`u_normal_pdf`].
fn normal_pdf(u: f64) -> f64 {
    const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
    let p = u * u;
    if !p.is_finite() {
        return FRAC_1_SQRT_2PI * (-0.5 * p).exp();
    }
    let e = u.mul_add(u, -p);
    let h = (-0.25 * p).exp();
    if h == 0.0 {
        return 0.0;
    }
    scaled_product(&[FRAC_1_SQRT_2PI, h, h, (-0.5 * e).exp()], 1.0)
}

/// `u·φ(u)`, φ(u) = e^(−u²/2)/√(2π) the standard normal density. `u²` is
/// split exactly into `p + e` (fused multiply-add), since the rounding of `u²`
/// would be amplified by the exponential (about 700 ulps at |u| = 37), and
/// `e^(−p/2)` is taken as `e^(−p/4)²` inside [`scaled_product`] so that no
/// factor underflows before the product.
fn u_normal_pdf(u: f64) -> f64 {
    const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
    if u.is_infinite() {
        return 0.0_f64.copysign(u); // the limit; inf·φ(inf) would be nan
    }
    let p = u * u;
    if !p.is_finite() {
        // |u| > 1.3e154 (φ(u) = 0) or nan: as the plain formula gives it.
        return u * FRAC_1_SQRT_2PI * (-0.5 * p).exp();
    }
    let e = u.mul_add(u, -p);
    let h = (-0.25 * p).exp();
    if h == 0.0 {
        // |u| > 54.6: u·φ(u) underflows (and e^(−e/2) may be inf).
        return u * 0.0;
    }
    scaled_product(&[u, FRAC_1_SQRT_2PI, h, h, (-0.5 * e).exp()], 1.0)
}

/// The first input that beats every other under `better` (`<` for min, `>`
/// for max); nan if any input is nan. Ties pick the value, which is the same.
fn extremum(x: &[f64], better: fn(f64, f64) -> bool) -> f64 {
    let mut best = f64::NAN;
    for (i, &v) in x.iter().enumerate() {
        if v.is_nan() {
            return f64::NAN;
        }
        if i == 0 || better(v, best) {
            best = v;
        }
    }
    best
}

/// `∂min/∂aᵢ` and `∂max/∂aᵢ`: 1/k if input i is one of the k inputs equal to
/// the output (k = 1 when there is no tie), 0 otherwise; nan if the output is
/// nan (nan propagates).
fn extremum_local(x: &[f64], out: f64, wrt: usize) -> f64 {
    if out.is_nan() {
        return f64::NAN;
    }
    if x[wrt] != out {
        return 0.0;
    }
    let ties = x.iter().filter(|&&v| v == out).count();
    1.0 / ties as f64
}
