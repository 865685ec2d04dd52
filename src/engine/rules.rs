//! Local derivatives as typed values: for every op and input position, a
//! [`Derivative`] in its op-table row ([`OpInfo::derivatives`]) holding
//!
//! - the textbook form, an [`Expr`] over the node's operands and its own value
//!   (`1 - tanh(u)^2`, `1/(1 + u^2)`, `sigmoid(u)*(1 - sigmoid(u))`): what
//!   `:help`, `:trace`, `:step`, handouts and slides print;
//! - the form derivative graphs are built from ([`Stable`]): the textbook one,
//!   or an equal form that does not overflow or cancel where the textbook one
//!   does (`sech(u)^2` for tanh′, `-(a/b)/b` for `∂(a/b)/∂b`), so that
//!   stability lives in the numbers and not in the text;
//! - where the op passes gradient ([`Passing`]): its convention at kinks and
//!   what passes nothing (a trace carries the `Passing`; the renderer words it);
//! - the source of the formula.
//!
//! An [`Expr`] names only the node's operands ([`Expr::Operand`]), its value
//! ([`Expr::Output`]), numbers, named constants ([`Constant`]) and ops of the
//! table, so it can be evaluated ([`Expr::evaluate`]), built as graph nodes
//! (`Graph::grad`, at any order) and written as text by the caller, who
//! chooses the operands' names. The engine holds no text of the calculator's
//! language.
//!
//! [`OpInfo::derivatives`]: super::OpInfo::derivatives

use super::Op;

/// A number a formula writes by its name rather than its digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Constant {
    /// π.
    Pi,
    /// e, the base of the natural logarithm.
    E,
    /// ln 2, written `ln(2)`.
    Ln2,
    /// ln 10, written `ln(10)`.
    Ln10,
}

impl Constant {
    /// Every named constant.
    pub const ALL: [Constant; 4] = [Constant::Pi, Constant::E, Constant::Ln2, Constant::Ln10];

    /// The constant's value, correctly rounded to f64.
    pub fn value(self) -> f64 {
        match self {
            Constant::Pi => std::f64::consts::PI,
            Constant::E => std::f64::consts::E,
            Constant::Ln2 => std::f64::consts::LN_2,
            Constant::Ln10 => std::f64::consts::LN_10,
        }
    }
}

/// A local derivative's expression over one node: a small tree of ops of the
/// table, fixed at compile time (the rules live in a `static` table).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Expr {
    /// The node's operand at this position: `u` of a unary op; `a` (0) and
    /// `b` (1) of a binary one.
    Operand(usize),
    /// The node's own value: `tanh(u)` in `1 - tanh(u)^2`, `exp(u)` in exp′.
    /// Written as the op applied to its operands; built as the node itself.
    Output,
    /// A number.
    Num(f64),
    /// A named constant (`ln(10)` in log10′).
    Named(Constant),
    /// An op of the table applied to these expressions, in operand order.
    Apply(Op, &'static [Expr]),
}

impl Expr {
    /// The expression's value with the operands `operands` and the node's
    /// value `out`, each op by its forward function. An operand position
    /// beyond `operands` is nan. Recursion is over the rule's own small tree,
    /// never over a graph.
    pub fn evaluate(&self, operands: &[f64], out: f64) -> f64 {
        match *self {
            Expr::Operand(k) => operands.get(k).copied().unwrap_or(f64::NAN),
            Expr::Output => out,
            Expr::Num(x) => x,
            Expr::Named(c) => c.value(),
            Expr::Apply(op, args) => {
                let values: Vec<f64> = args.iter().map(|a| a.evaluate(operands, out)).collect();
                (op.info().forward)(&values)
            }
        }
    }
}

/// How derivative graphs compute a derivative whose textbook form
/// ([`Derivative::textbook`]) would overflow, underflow or cancel.
#[derive(Debug, Clone, Copy)]
pub enum Stable {
    /// The textbook form is built as it is.
    Textbook,
    /// This form, equal to the textbook one, is built instead, for the reason
    /// `why`.
    Form {
        /// The expression built.
        expr: Expr,
        /// Why the textbook form is not built.
        why: &'static str,
    },
    /// A form chosen at the point from the operands' values (the half powers
    /// of `^` where `b − 1` rounds or `a^b` under- or overflows); `None` from
    /// the function means the textbook form.
    AtPoint {
        /// Chooses the form from the operands' values.
        choose: fn(&[f64]) -> Option<&'static Expr>,
        /// Why the textbook form is not always built.
        why: &'static str,
    },
}

/// Where an op passes gradient to one input: its convention at kinks (as
/// PyTorch's backward formulas, `derivatives.yaml`/`FunctionsManual.cpp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passing {
    /// Everywhere (a smooth op; `abs` at 0 multiplies by 0).
    Always,
    /// Where `u > 0` (relu): nothing for `u ≤ 0`, so `relu'(0) = 0`; nan
    /// passes, with local derivative nan.
    WherePositive,
    /// To the largest input (max): the others get nothing, `k` tied inputs
    /// get `1/k` each; nan propagates.
    ToLargest,
    /// To the smallest input (min), as [`Passing::ToLargest`].
    ToSmallest,
    /// Where the exponent `b ≠ 0` (`∂a^b/∂a`; PyTorch's `pow_backward_self`).
    WhereExponentNonzero,
    /// Unless `a = 0` and `b ≥ 0` (`∂a^b/∂b`; `pow_backward_exponent`).
    UnlessZeroBase,
    /// Never: the op is piecewise constant (`floor`, `ceil`, `round`, `sign`).
    NotDifferentiable,
    /// Never: the op cuts the gradient on purpose (`detach`).
    Detached,
}

/// Which branch of its rule an op takes at one point ([`Passing::branch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Branch {
    /// The rule holds.
    Rule,
    /// `ties` inputs tie for the extremum: the rule divided by `ties`.
    Tie(usize),
    /// The derivative is undefined here (nan in relu, max or min): nan.
    Undefined,
    /// The input receives nothing from this node at this point (not even from
    /// an infinite upstream gradient).
    Nothing,
}

impl Passing {
    /// The branch at the point where the inputs have the values `inputs` (in
    /// operand order) and the node the value `out`, for the input at
    /// `position`. A position beyond `inputs` gets [`Branch::Nothing`].
    pub fn branch(self, inputs: &[f64], out: f64, position: usize) -> Branch {
        let Some(&v) = inputs.get(position) else {
            return Branch::Nothing;
        };
        let (a, b) = (inputs[0], inputs.get(1).copied().unwrap_or(f64::NAN));
        let pass = |yes: bool| if yes { Branch::Rule } else { Branch::Nothing };
        match self {
            Passing::Always => Branch::Rule,
            Passing::WherePositive if v.is_nan() => Branch::Undefined,
            Passing::WherePositive => pass(v > 0.0),
            Passing::ToLargest | Passing::ToSmallest if out.is_nan() => Branch::Undefined,
            Passing::ToLargest | Passing::ToSmallest if v != out => Branch::Nothing,
            Passing::ToLargest | Passing::ToSmallest => {
                match inputs.iter().filter(|&&x| x == out).count() {
                    1 => Branch::Rule,
                    ties => Branch::Tie(ties),
                }
            }
            Passing::WhereExponentNonzero => pass(b != 0.0),
            Passing::UnlessZeroBase => pass(!(a == 0.0 && b >= 0.0)),
            Passing::NotDifferentiable | Passing::Detached => Branch::Nothing,
        }
    }

    /// True for a rule that chooses a branch at the point (relu, max, min,
    /// `^`): a derivative graph built at one point keeps its branch.
    pub fn is_piecewise(self) -> bool {
        match self {
            Passing::WherePositive
            | Passing::ToLargest
            | Passing::ToSmallest
            | Passing::WhereExponentNonzero
            | Passing::UnlessZeroBase => true,
            Passing::Always | Passing::NotDifferentiable | Passing::Detached => false,
        }
    }

    /// Where the rule holds, over the placeholders `u`, `a`, `b`, for a
    /// piecewise rule (`"u > 0"`, `"b ≠ 0"`, …); `""` where it holds
    /// wherever the op passes gradient.
    pub fn holds_where(self) -> &'static str {
        match self {
            Passing::WherePositive => "u > 0",
            Passing::ToLargest => "the largest",
            Passing::ToSmallest => "the smallest",
            Passing::WhereExponentNonzero => "b ≠ 0",
            Passing::UnlessZeroBase => "a ≠ 0 or b < 0",
            Passing::Always | Passing::NotDifferentiable | Passing::Detached => "",
        }
    }
}

/// The local derivative of an op at one input position: one entry of its
/// op-table row.
#[derive(Debug, Clone, Copy)]
pub struct Derivative {
    /// The formula as a textbook writes it: what `:help`, `:trace`, `:step`,
    /// handouts and slides print. The constant 0 for ops that pass nothing.
    pub textbook: Expr,
    /// What derivative graphs are built from.
    pub stable: Stable,
    /// Where the op passes gradient to this input.
    pub passing: Passing,
    /// Where the formula (or the convention) comes from.
    pub source: &'static str,
}

/// The local derivative of one node at one input, at the node's point, as a
/// trace prints it or a derivative graph builds it ([`Op::local_rule`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LocalRule {
    /// `expr` over the node's operands and value, divided by `ties` when it is
    /// more than 1 (a tie of max or min splits the gradient).
    Expr {
        /// The expression.
        expr: &'static Expr,
        /// How many inputs tie (1 when there is no tie).
        ties: usize,
    },
    /// Undefined at this point: nan (relu of nan, max with a nan input).
    Undefined,
    /// The input receives nothing from this node here.
    PassesNothing,
}

/// Which of a [`Derivative`]'s forms [`Op::local_rule`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// [`Derivative::textbook`]: for text.
    Textbook,
    /// The form [`Derivative::stable`] says to build: for derivative graphs.
    Built,
}

impl Op {
    /// The local derivative `∂node/∂inputs[position]` at the point where the
    /// inputs have the values `inputs` (in operand order) and the node the
    /// value `out`, in the form `form`.
    ///
    /// Leaves, positions beyond `inputs`, and positions beyond the op's
    /// arity give [`LocalRule::PassesNothing`]; nothing here panics.
    pub fn local_rule(self, position: usize, inputs: &[f64], out: f64, form: Form) -> LocalRule {
        let Some(derivative) = self.info().derivative(position) else {
            return LocalRule::PassesNothing;
        };
        let expr = derivative.expr(inputs, form);
        match derivative.passing.branch(inputs, out, position) {
            Branch::Rule => LocalRule::Expr { expr, ties: 1 },
            Branch::Tie(ties) => LocalRule::Expr { expr, ties },
            Branch::Undefined => LocalRule::Undefined,
            Branch::Nothing => LocalRule::PassesNothing,
        }
    }

    /// The local derivative `∂node/∂inputs[position]` on a branch chosen by
    /// the caller rather than by the point: the rule's expression in `form`
    /// where `passes`, [`LocalRule::PassesNothing`] where not. `:diff` builds
    /// each piece of a piecewise derivative this way (the rule of relu where
    /// u > 0, whatever u is now). Leaves and positions beyond the arity pass
    /// nothing.
    pub fn rule_on_branch(
        self,
        position: usize,
        inputs: &[f64],
        passes: bool,
        form: Form,
    ) -> LocalRule {
        match self.info().derivative(position) {
            Some(derivative) if passes => LocalRule::Expr {
                expr: derivative.expr(inputs, form),
                ties: 1,
            },
            _ => LocalRule::PassesNothing,
        }
    }
}

impl Derivative {
    /// The rule's expression in `form` at the operands' values `inputs` (the
    /// values choose among the built forms of [`Stable::AtPoint`]).
    fn expr(&self, inputs: &[f64], form: Form) -> &Expr {
        match (form, &self.stable) {
            (Form::Textbook, _) | (Form::Built, Stable::Textbook) => &self.textbook,
            (Form::Built, Stable::Form { expr, .. }) => expr,
            (Form::Built, Stable::AtPoint { choose, .. }) => {
                choose(inputs).unwrap_or(&self.textbook)
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Building blocks of the table's rules.

/// The operand `u` of a unary op.
pub(super) const U: Expr = Expr::Operand(0);
/// The left operand `a` of a binary op.
pub(super) const A: Expr = Expr::Operand(0);
/// The right operand `b` of a binary op.
pub(super) const B: Expr = Expr::Operand(1);
/// The node's own value.
pub(super) const OUT: Expr = Expr::Output;

/// A number.
pub(super) const fn n(x: f64) -> Expr {
    Expr::Num(x)
}

/// `op(args…)` as an [`Expr`]: `e!(Pow, U, n(2.0))` is `u^2`.
macro_rules! e {
    ($op:ident $(, $arg:expr)* $(,)?) => {
        $crate::engine::rules::Expr::Apply($crate::engine::Op::$op, &[$($arg),*])
    };
}
pub(super) use e;

/// Standard calculus (any text, e.g. Stewart, *Calculus*, ch. 3).
pub(super) const CALCULUS: &str = "standard calculus (e.g. Stewart, Calculus, ch. 3)";

/// A derivative whose textbook form is built as it is and always passes.
pub(super) const fn smooth(textbook: Expr, source: &'static str) -> Derivative {
    Derivative {
        textbook,
        stable: Stable::Textbook,
        passing: Passing::Always,
        source,
    }
}

/// A derivative built from the equal form `built` (for the reason `why`).
pub(super) const fn stable(
    textbook: Expr,
    built: Expr,
    why: &'static str,
    source: &'static str,
) -> Derivative {
    Derivative {
        textbook,
        stable: Stable::Form { expr: built, why },
        passing: Passing::Always,
        source,
    }
}

/// A derivative built from a form chosen at the point by `choose`
/// ([`Stable::AtPoint`]): for the ops whose usual built form meets `inf/inf`
/// or `0·inf` at u = ±inf, a form whose every intermediate stays finite there
/// (u clamped to ±f64::MAX where it is a factor), equal to the usual one at
/// every finite u.
pub(super) const fn stable_at_infinity(
    textbook: Expr,
    choose: fn(&[f64]) -> Option<&'static Expr>,
    why: &'static str,
    source: &'static str,
) -> Derivative {
    Derivative {
        textbook,
        stable: Stable::AtPoint { choose, why },
        passing: Passing::Always,
        source,
    }
}

/// The derivative of an op that passes nothing (`passing` says why): 0.
pub(super) const fn flat(passing: Passing, source: &'static str) -> Derivative {
    Derivative {
        textbook: n(0.0),
        stable: Stable::Textbook,
        passing,
        source,
    }
}

/// `∂a^b/∂a` where `b − 1` is not exact in f64 (or `a^(b−1)` is not normal):
/// `b·|a|^(b/2)·|a|^(b/2)/|a|` (b/2 is exact), the steps of the op table's
/// `pow_base_local`. `None` (the textbook `b·a^(b−1)`) elsewhere.
pub(super) fn pow_base_form(inputs: &[f64]) -> Option<&'static Expr> {
    static HALVES: Expr = e!(
        Div,
        e!(
            Mul,
            e!(Mul, B, e!(Pow, e!(Abs, A), e!(Div, B, n(2.0)))),
            e!(Pow, e!(Abs, A), e!(Div, B, n(2.0)))
        ),
        e!(Abs, A)
    );
    let (a, b) = (inputs[0], inputs[1]);
    let plain = !a.is_finite() || !b.is_finite() || a <= 0.0;
    (!plain && !exact_minus_one(b)).then_some(&HALVES)
}

/// `∂a^b/∂b` where `a^b` under- or overflows but `a^b·ln a` need not:
/// `a^(b/2)·ln(a)·a^(b/2)`, as `pow_exponent_local`. `None` (the textbook
/// `a^b·ln(a)`) elsewhere.
pub(super) fn pow_exponent_form(inputs: &[f64]) -> Option<&'static Expr> {
    static HALVES: Expr = e!(
        Mul,
        e!(Mul, e!(Pow, A, e!(Div, B, n(2.0))), e!(Ln, A)),
        e!(Pow, A, e!(Div, B, n(2.0)))
    );
    let (a, b) = (inputs[0], inputs[1]);
    let plain = a.powf(b).is_normal() || a <= 0.0 || !a.is_finite() || !b.is_finite();
    (!plain).then_some(&HALVES)
}

/// Whether `b − 1` is exact in f64: the rounding error of the sum is 0
/// (Knuth's TwoSum), as `pow_base_local` in ops.rs tests it.
fn exact_minus_one(b: f64) -> bool {
    let e = b - 1.0;
    let back = e - b;
    (b - (e - back)) + (-1.0 - back) == 0.0
}
