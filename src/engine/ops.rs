//! The one op table: for every op its name, arity, forward function, local
//! partial derivatives and the formula text a trace prints.
//!
//! Conventions at kinks and edges follow PyTorch (DESIGN.md §1.5): `relu'(0) = 0`,
//! `abs'(0) = 0`, `sqrt'(0) = +inf`, `d/dx x^0 = 0` (also at 0, with `0^0 = 1`),
//! `d/dy 0^y = 0` for `y ≥ 0`, ties of `min`/`max` split the gradient equally,
//! and nan in `min`/`max` propagates to the value and every local derivative.

use super::{Arity, Op, OpInfo};

impl Op {
    /// This op's row of the op table.
    pub fn info(self) -> &'static OpInfo {
        &TABLE[self as usize]
    }

    /// The op a user-facing function name calls: `"exp"`, `"ln"`, `"log"` (= ln),
    /// `"pow"`, `"max"`, `"detach"`, …; `None` for anything else, including
    /// operator symbols (`"+"`, `"^"`) and the leaf names `"leaf"`, `"const"`, `"neg"`.
    pub fn from_function_name(name: &str) -> Option<Op> {
        if let Some(&(_, op)) = ALIASES.iter().find(|(alias, _)| *alias == name) {
            return Some(op);
        }
        TABLE
            .iter()
            .find(|info| info.is_function() && info.name == name)
            .map(|info| info.op)
    }

    /// The whole op table, one [`OpInfo`] per op, in the order of [`Op`]'s variants.
    pub fn table() -> &'static [OpInfo] {
        &TABLE
    }

    /// True for the leaves `Input` and `Const`.
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
    /// The formula text of the local derivative at input `position`: the one
    /// formula of a variadic op for every position; `""` for leaves and for
    /// positions beyond the op's arity.
    pub fn formula(&self, position: usize) -> &'static str {
        match self.arity {
            Arity::Variadic => self.formulas.first().copied().unwrap_or(""),
            _ => self.formulas.get(position).copied().unwrap_or(""),
        }
    }

    /// True if users call this op by its name (`tanh(x)`), false for operators
    /// and leaves.
    fn is_function(&self) -> bool {
        !matches!(self.op, Op::Input | Op::Const | Op::Neg)
            && self.name.bytes().all(|b| b.is_ascii_alphanumeric())
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

/// A formula in plain ASCII, for output that cannot show Unicode:
/// `∂tanh(u)/∂u = 1 − tanh(u)²` becomes `d tanh(u)/du = 1 - tanh(u)^2`.
pub fn ascii(formula: &str) -> String {
    let mut out = String::with_capacity(formula.len());
    for c in formula.chars() {
        match c {
            '∂' => out.push('d'),
            '·' => out.push('*'),
            '−' => out.push('-'),
            '²' => out.push_str("^2"),
            'ᵢ' => out.push_str("_i"),
            '≥' => out.push_str(">="),
            c => out.push(c),
        }
    }
    out
}

/// Other names for table ops: `log` is `ln`, `pow(a, b)` is `a ^ b`.
const ALIASES: [(&str, Op); 2] = [("log", Op::Ln), ("pow", Op::Pow)];

// ---------------------------------------------------------------------------
// The table. One entry per op, in the order of `Op`'s variants (a test checks).

const NOT_DIFFERENTIABLE: &[&str] = &["not differentiable: gradient 0"];

/// A unary op that is differentiable: `local` is a function of (input, output).
macro_rules! unary {
    (op: $op:ident, name: $name:literal, forward: $forward:expr, local: $local:expr,
     formula: $formula:literal, summary: $summary:literal, example: $example:literal $(,)?) => {
        OpInfo {
            op: Op::$op,
            name: $name,
            arity: Arity::Unary,
            forward: |x| {
                let f: fn(f64) -> f64 = $forward;
                f(x[0])
            },
            local: |x, out, _| {
                let f: fn(f64, f64) -> f64 = $local;
                f(x[0], out)
            },
            formulas: &[$formula],
            differentiable: true,
            summary: $summary,
            example: $example,
        }
    };
}

/// A unary op whose gradient is 0 by definition.
macro_rules! flat {
    (op: $op:ident, name: $name:literal, forward: $forward:expr, formulas: $formulas:expr,
     summary: $summary:literal, example: $example:literal $(,)?) => {
        OpInfo {
            op: Op::$op,
            name: $name,
            arity: Arity::Unary,
            forward: |x| {
                let f: fn(f64) -> f64 = $forward;
                f(x[0])
            },
            local: |_, _, _| 0.0,
            formulas: $formulas,
            differentiable: false,
            summary: $summary,
            example: $example,
        }
    };
}

static TABLE: [OpInfo; 38] = [
    OpInfo {
        op: Op::Input,
        name: "leaf",
        arity: Arity::Leaf,
        forward: leaf_value,
        local: |_, _, _| 0.0,
        formulas: &[],
        differentiable: false,
        summary: "a variable: an input that gradients are taken for",
        example: "x = 2",
    },
    OpInfo {
        op: Op::Const,
        name: "const",
        arity: Arity::Leaf,
        forward: leaf_value,
        local: |_, _, _| 0.0,
        formulas: &[],
        differentiable: false,
        summary: "a literal number: a leaf that is not a variable",
        example: "2.5",
    },
    OpInfo {
        op: Op::Add,
        name: "+",
        arity: Arity::Binary,
        forward: |x| x[0] + x[1],
        local: |_, _, _| 1.0,
        formulas: &["∂(a + b)/∂a = 1", "∂(a + b)/∂b = 1"],
        differentiable: true,
        summary: "addition",
        example: "2 + 3 = 5",
    },
    OpInfo {
        op: Op::Sub,
        name: "-",
        arity: Arity::Binary,
        forward: |x| x[0] - x[1],
        local: |_, _, wrt| if wrt == 0 { 1.0 } else { -1.0 },
        formulas: &["∂(a − b)/∂a = 1", "∂(a − b)/∂b = −1"],
        differentiable: true,
        summary: "subtraction",
        example: "5 - 3 = 2",
    },
    OpInfo {
        op: Op::Mul,
        name: "*",
        arity: Arity::Binary,
        forward: |x| x[0] * x[1],
        // The other factor.
        local: |x, _, wrt| x[1 - wrt],
        formulas: &["∂(a·b)/∂a = b", "∂(a·b)/∂b = a"],
        differentiable: true,
        summary: "multiplication",
        example: "2 * 3 = 6",
    },
    OpInfo {
        op: Op::Div,
        name: "/",
        arity: Arity::Binary,
        forward: |x| x[0] / x[1],
        local: |x, _, wrt| {
            let (a, b) = (x[0], x[1]);
            if wrt == 0 { 1.0 / b } else { -a / (b * b) }
        },
        formulas: &["∂(a/b)/∂a = 1/b", "∂(a/b)/∂b = −a/b²"],
        differentiable: true,
        summary: "division (1/0 = inf, 0/0 = nan)",
        example: "3 / 2 = 1.5",
    },
    OpInfo {
        op: Op::Neg,
        name: "neg",
        arity: Arity::Unary,
        forward: |x| -x[0],
        local: |_, _, _| -1.0,
        formulas: &["∂(−u)/∂u = −1"],
        differentiable: true,
        summary: "negation (unary minus)",
        example: "-(3) = -3",
    },
    OpInfo {
        op: Op::Pow,
        name: "^",
        arity: Arity::Binary,
        forward: |x| x[0].powf(x[1]),
        local: pow_local,
        formulas: &["∂(a^b)/∂a = b·a^(b−1)", "∂(a^b)/∂b = a^b·ln a"],
        differentiable: true,
        summary: "power, also pow(a, b); right-associative, 0^0 = 1",
        example: "2 ^ 10 = 1024",
    },
    unary! {
        op: Exp,
        name: "exp",
        forward: f64::exp,
        local: |_, out| out,
        formula: "∂exp(u)/∂u = exp(u)",
        summary: "e to the power u",
        example: "exp(1) = 2.718281828",
    },
    unary! {
        op: Ln,
        name: "ln",
        forward: f64::ln,
        local: |u, _| 1.0 / u,
        formula: "∂ln(u)/∂u = 1/u",
        summary: "natural logarithm, also log(u)",
        example: "ln(10) = 2.302585093",
    },
    unary! {
        op: Log2,
        name: "log2",
        forward: f64::log2,
        local: |u, _| 1.0 / (u * std::f64::consts::LN_2),
        formula: "∂log2(u)/∂u = 1/(u·ln 2)",
        summary: "base-2 logarithm",
        example: "log2(8) = 3",
    },
    unary! {
        op: Log10,
        name: "log10",
        forward: f64::log10,
        local: |u, _| 1.0 / (u * std::f64::consts::LN_10),
        formula: "∂log10(u)/∂u = 1/(u·ln 10)",
        summary: "base-10 logarithm",
        example: "log10(1000) = 3",
    },
    // 0.5/sqrt(0) = +inf: sqrt'(0) is +inf by convention.
    unary! {
        op: Sqrt,
        name: "sqrt",
        forward: f64::sqrt,
        local: |_, out| 0.5 / out,
        formula: "∂sqrt(u)/∂u = 1/(2·sqrt(u))",
        summary: "square root",
        example: "sqrt(2) = 1.414213562",
    },
    unary! {
        op: Cbrt,
        name: "cbrt",
        forward: f64::cbrt,
        local: |_, out| 1.0 / (3.0 * out * out),
        formula: "∂cbrt(u)/∂u = 1/(3·cbrt(u)²)",
        summary: "real cube root",
        example: "cbrt(-27) = -3",
    },
    unary! {
        op: Abs,
        name: "abs",
        forward: f64::abs,
        local: |u, _| sign(u),
        formula: "∂abs(u)/∂u = sign(u), 0 at u = 0",
        summary: "absolute value",
        example: "abs(-2.5) = 2.5",
    },
    unary! {
        op: Sin,
        name: "sin",
        forward: f64::sin,
        local: |u, _| u.cos(),
        formula: "∂sin(u)/∂u = cos(u)",
        summary: "sine (radians)",
        example: "sin(1) = 0.8414709848",
    },
    unary! {
        op: Cos,
        name: "cos",
        forward: f64::cos,
        local: |u, _| -u.sin(),
        formula: "∂cos(u)/∂u = −sin(u)",
        summary: "cosine (radians)",
        example: "cos(1) = 0.5403023059",
    },
    unary! {
        op: Tan,
        name: "tan",
        forward: f64::tan,
        local: |_, out| 1.0 + out * out,
        formula: "∂tan(u)/∂u = 1 + tan(u)²",
        summary: "tangent (radians)",
        example: "tan(1) = 1.557407725",
    },
    unary! {
        op: Asin,
        name: "asin",
        forward: f64::asin,
        local: |u, _| 1.0 / (1.0 - u * u).sqrt(),
        formula: "∂asin(u)/∂u = 1/√(1 − u²)",
        summary: "inverse sine",
        example: "asin(0.5) = 0.5235987756",
    },
    unary! {
        op: Acos,
        name: "acos",
        forward: f64::acos,
        local: |u, _| -1.0 / (1.0 - u * u).sqrt(),
        formula: "∂acos(u)/∂u = −1/√(1 − u²)",
        summary: "inverse cosine",
        example: "acos(0.5) = 1.047197551",
    },
    unary! {
        op: Atan,
        name: "atan",
        forward: f64::atan,
        local: |u, _| 1.0 / (1.0 + u * u),
        formula: "∂atan(u)/∂u = 1/(1 + u²)",
        summary: "inverse tangent",
        example: "atan(1) = 0.7853981634",
    },
    unary! {
        op: Sinh,
        name: "sinh",
        forward: f64::sinh,
        local: |u, _| u.cosh(),
        formula: "∂sinh(u)/∂u = cosh(u)",
        summary: "hyperbolic sine",
        example: "sinh(1) = 1.175201194",
    },
    unary! {
        op: Cosh,
        name: "cosh",
        forward: f64::cosh,
        local: |u, _| u.sinh(),
        formula: "∂cosh(u)/∂u = sinh(u)",
        summary: "hyperbolic cosine",
        example: "cosh(1) = 1.543080635",
    },
    // tanh(±1000) = ±1 exactly, so the derivative is 0, not nan.
    unary! {
        op: Tanh,
        name: "tanh",
        forward: f64::tanh,
        local: |_, out| 1.0 - out * out,
        formula: "∂tanh(u)/∂u = 1 − tanh(u)²",
        summary: "hyperbolic tangent",
        example: "tanh(0.5) = 0.4621171573",
    },
    // hypot(u, 1) = √(u² + 1) without overflow for large u.
    unary! {
        op: Asinh,
        name: "asinh",
        forward: f64::asinh,
        local: |u, _| 1.0 / u.hypot(1.0),
        formula: "∂asinh(u)/∂u = 1/√(u² + 1)",
        summary: "inverse hyperbolic sine",
        example: "asinh(1) = 0.881373587",
    },
    unary! {
        op: Acosh,
        name: "acosh",
        forward: f64::acosh,
        local: |u, _| 1.0 / (u * u - 1.0).sqrt(),
        formula: "∂acosh(u)/∂u = 1/√(u² − 1)",
        summary: "inverse hyperbolic cosine",
        example: "acosh(2) = 1.316957897",
    },
    unary! {
        op: Atanh,
        name: "atanh",
        forward: f64::atanh,
        local: |u, _| 1.0 / (1.0 - u * u),
        formula: "∂atanh(u)/∂u = 1/(1 − u²)",
        summary: "inverse hyperbolic tangent",
        example: "atanh(0.5) = 0.5493061443",
    },
    unary! {
        op: Sigmoid,
        name: "sigmoid",
        forward: sigmoid,
        local: |_, out| out * (1.0 - out),
        formula: "∂sigmoid(u)/∂u = sigmoid(u)·(1 − sigmoid(u))",
        summary: "logistic sigmoid 1/(1 + e^−u)",
        example: "sigmoid(0) = 0.5",
    },
    unary! {
        op: Relu,
        name: "relu",
        forward: relu,
        local: |u, _| step(u),
        formula: "∂relu(u)/∂u = 1 if u > 0, else 0",
        summary: "rectified linear unit max(u, 0)",
        example: "relu(-3) = 0",
    },
    unary! {
        op: Softplus,
        name: "softplus",
        forward: softplus,
        local: |u, _| sigmoid(u),
        formula: "∂softplus(u)/∂u = sigmoid(u)",
        summary: "smooth relu ln(1 + e^u)",
        example: "softplus(0) = 0.6931471806",
    },
    unary! {
        op: Gelu,
        name: "gelu",
        forward: gelu,
        local: |u, _| gelu_local(u),
        formula: "∂gelu(u)/∂u = Φ(u) + u·φ(u)",
        summary: "Gaussian error linear unit u·Φ(u) (exact, erf)",
        example: "gelu(1) = 0.8413447461",
    },
    flat! {
        op: Floor,
        name: "floor",
        forward: f64::floor,
        formulas: NOT_DIFFERENTIABLE,
        summary: "largest integer ≤ u",
        example: "floor(-2.5) = -3",
    },
    flat! {
        op: Ceil,
        name: "ceil",
        forward: f64::ceil,
        formulas: NOT_DIFFERENTIABLE,
        summary: "smallest integer ≥ u",
        example: "ceil(-2.5) = -2",
    },
    // f64::round rounds half away from zero.
    flat! {
        op: Round,
        name: "round",
        forward: f64::round,
        formulas: NOT_DIFFERENTIABLE,
        summary: "nearest integer, half away from zero (PyTorch rounds half to even)",
        example: "round(2.5) = 3",
    },
    flat! {
        op: Sign,
        name: "sign",
        forward: sign,
        formulas: NOT_DIFFERENTIABLE,
        summary: "sign: −1, 0 or 1",
        example: "sign(-4) = -1",
    },
    flat! {
        op: Detach,
        name: "detach",
        forward: |u| u,
        formulas: &["∂detach(u)/∂u = 0 (detached)"],
        summary: "u's value, passing no gradient (treat u as a constant)",
        example: "detach(3) = 3",
    },
    OpInfo {
        op: Op::Min,
        name: "min",
        arity: Arity::Variadic,
        forward: |x| extremum(x, |a, b| a < b),
        local: extremum_local,
        formulas: &["∂min/∂aᵢ = 1 for the smallest (split at ties)"],
        differentiable: true,
        summary: "smallest of one or more values",
        example: "min(3, 1, 2) = 1",
    },
    OpInfo {
        op: Op::Max,
        name: "max",
        arity: Arity::Variadic,
        forward: |x| extremum(x, |a, b| a > b),
        local: extremum_local,
        formulas: &["∂max/∂aᵢ = 1 for the largest (split at ties)"],
        differentiable: true,
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
/// the base derivative is masked to 0 where `b = 0`, the exponent derivative to
/// 0 where `a = 0` and `b ≥ 0`.
fn pow_local(x: &[f64], out: f64, wrt: usize) -> f64 {
    let (a, b) = (x[0], x[1]);
    if wrt == 0 {
        // d/da a^0 = 0 everywhere, also at a = 0 where b·a^(b−1) would be 0·inf.
        if b == 0.0 { 0.0 } else { b * a.powf(b - 1.0) }
    } else if a == 0.0 && b >= 0.0 {
        // a^b·ln a = 0·(−inf) for b > 0 and 1·(−inf) for b = 0; the limit along
        // a = 0 is 0. For b < 0 the formula gives inf·(−inf) = −inf, kept.
        0.0
    } else {
        // nan for a < 0 (ln a is nan).
        out * a.ln()
    }
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
    u * normal_cdf(u)
}

/// `d/du u·Φ(u) = Φ(u) + u·φ(u)`, φ the standard normal density.
fn gelu_local(u: f64) -> f64 {
    normal_cdf(u) + u * normal_pdf(u)
}

/// Φ, the standard normal cumulative distribution function.
fn normal_cdf(u: f64) -> f64 {
    0.5 * libm::erfc(-u * std::f64::consts::FRAC_1_SQRT_2)
}

/// φ(u) = e^(−u²/2)/√(2π), the standard normal density.
fn normal_pdf(u: f64) -> f64 {
    const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
    FRAC_1_SQRT_2PI * (-0.5 * u * u).exp()
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
