//! The autograd core: graph arena, op table, reverse topological order, backward.
//!
//! A library on its own: it imports nothing of the calculator (no syntax,
//! session, rendering or process-wide Ctrl-C flag) and knows nothing of text,
//! names, colour or IO. Interruption is passed in ([`Graph::set_interrupt`]).
//!
//! **To understand backprop here, read about 250 lines, in this order.**
//! (1) `graph.rs`, from the top through [`Graph::operands`] and `Graph::push`:
//! a node is an op and its operand ids, its forward value sits beside it, and
//! [`Graph::operands`] is the one way to read a node's operands. (2) `ops.rs`:
//! the `Add`, `Mul` and `Tanh` rows of the op table and [`OpInfo::passes`] —
//! each op's forward function, its numeric local derivatives and its typed
//! rule ([`Derivative`]), and where an op passes no gradient at all. (3)
//! `topo.rs`, all of it: [`Graph::topo_order`], an iterative depth-first
//! search that puts every node before its operands. (4) `backward.rs`, from
//! the top through `add_sub_mul`: the one backward walk — seed the output with
//! 1, then for each node in that order and each operand, `grad[operand] +=
//! grad[node] × local` (the chain rule; fan-out accumulates) — serving
//! [`Graph::backward`], [`Graph::backward_traced`] and [`Graph::backward_at`]
//! (the same walk at moved forward values), and after it the shortcut the
//! untraced walk takes for `+ − ·`. The rest is what a teacher or a long
//! session needs around that core.
//!
//! - [`Graph`] is an arena of nodes, appended in evaluation order
//!   ([`Graph::leaf`], [`Graph::constant`], [`Graph::apply`]); a node's op and
//!   operands never change, a leaf's value may ([`Graph::set_leaf_value`],
//!   `Graph::update_leaf`).
//! - [`Op::table`] is the one op table: name, arity, forward function, numeric
//!   local derivatives and, per input, the typed rule ([`OpInfo::derivatives`]:
//!   textbook form, built form, convention at kinks, source; `ops.rs`,
//!   `rules.rs`). [`Op::local_rule`] is the rule at a point.
//! - [`Graph::topo_order`] returns the nodes reachable from an output in reverse
//!   topological order, output first (`topo.rs`).
//! - [`Graph::backward`] walks that order once and applies the chain rule;
//!   [`Graph::backward_traced`] does the same walk and records every step;
//!   [`Graph::backward_steps`] is that traced walk as an iterator, one step at
//!   a time (the same per-node body);
//!   [`Graph::backward_at`] does it at forward values given as a slice
//!   (`backward.rs`).
//! - [`Graph::grad`] records the backward pass as nodes: ∂y/∂x as a node that
//!   can be differentiated again, at any order, within a node budget
//!   (`derivative.rs`).
//! - [`Graph::reevaluate`], [`Graph::downstream`], [`Graph::forward_over`],
//!   [`Graph::kahn_order`] and [`Graph::paths`] serve the teaching commands:
//!   forward values with some nodes moved, the nodes a move reaches, Kahn's
//!   order, the paths from an output to a node (`walks.rs`).
//!
//! - [`Tape`] and [`Var`] are the library face: a `Copy` handle with operator
//!   overloading that builds into the same [`Graph`] (`var.rs`).
//!
//! - [`Graph::retain_reachable`] compacts the arena to the nodes reachable from
//!   a set of roots and returns the id [`Remap`] (`compact.rs`).
//!
//! - [`tensor`] holds vectors and matrices: a [`tensor::TensorGraph`] of
//!   tensor nodes beside the scalar graph, one node per tensor op with its
//!   shape, whose backward passes are vector–Jacobian products written as
//!   matrix rules (`tensor/`).
//!
//! Nothing here recurses over the graph: sorting and backward use explicit
//! stacks and loops, and dropping the arena is dropping a flat `Vec`, so graphs
//! a million nodes deep are safe.

mod backward;
mod compact;
mod derivative;
mod graph;
mod interrupt;
mod ops;
mod rerun;
mod rules;
mod scaled;
pub mod tensor;
mod topo;
mod var;
mod walks;

#[cfg(test)]
mod tests;

pub use backward::BackwardSteps;
pub use compact::Remap;
pub use derivative::{Derivatives, GradError, LocalNode};
pub(crate) use interrupt::debug_holder;
pub use interrupt::{EVERY, Interrupt};
pub use rules::{Branch, Constant, Derivative, Expr, Form, LocalRule, Passing, Stable};
pub use var::{Tape, Var};
pub use walks::{Downstream, Paths};

/// Index of a node in a [`Graph`]. Nodes are appended in evaluation order.
///
/// An id is only meaningful for the graph that returned it (and only until that
/// graph is [cleared](Graph::clear)); using an id that is out of range panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The id as an index into the arena (and into [`Gradients`]).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Every operation a node can be. `Variable` and `Const` are leaves.
///
/// The derivative conventions at kinks and edges (`relu'(0) = 0`, ties of
/// `max` split the gradient, …) are documented on each variant and implemented
/// in the op table ([`Op::info`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// A variable: a leaf that gradients are taken for ([`Graph::leaf`]).
    Variable,
    /// A literal number: a leaf that is not a variable ([`Graph::constant`]).
    Const,
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b`; local derivatives `1/b` and `−a/b²` (computed as `−(a/b)/b`).
    Div,
    /// Unary minus, `-u`.
    Neg,
    /// `a ^ b` (also `pow(a, b)`), with `0^0 = 1`. `∂/∂a = b·a^(b−1)`, and no
    /// gradient passes to a when `b = 0`; `∂/∂b = a^b·ln a`, and no gradient
    /// passes to b when `a = 0` and `b ≥ 0` (`−inf` for `a = 0, b < 0`, nan
    /// for `a < 0`).
    Pow,
    /// `exp(u)`, e to the power u.
    Exp,
    /// `ln(u)` (also `log(u)`), the natural logarithm.
    Ln,
    /// `log2(u)`, the base-2 logarithm.
    Log2,
    /// `log10(u)`, the base-10 logarithm.
    Log10,
    /// `sqrt(u)`; the local derivative at 0 is `+inf`.
    Sqrt,
    /// `cbrt(u)`, the real cube root; the local derivative at 0 is `+inf`.
    Cbrt,
    /// `abs(u)`; the local derivative at 0 is 0.
    Abs,
    /// `sin(u)`, radians.
    Sin,
    /// `cos(u)`, radians.
    Cos,
    /// `tan(u)`, radians.
    Tan,
    /// `asin(u)`.
    Asin,
    /// `acos(u)`.
    Acos,
    /// `atan(u)`.
    Atan,
    /// `sinh(u)`.
    Sinh,
    /// `cosh(u)`.
    Cosh,
    /// `tanh(u)`; finite value and gradient at ±1000.
    Tanh,
    /// `sech(u) = 1/cosh(u)`, computed without overflow; `tanh' = sech²`.
    Sech,
    /// `asinh(u)`.
    Asinh,
    /// `acosh(u)`.
    Acosh,
    /// `atanh(u)`.
    Atanh,
    /// The logistic sigmoid `1/(1 + e^−u)`, computed stably.
    Sigmoid,
    /// `relu(u) = max(u, 0)`; passes no gradient for `u ≤ 0` (so `relu'(0) = 0`).
    Relu,
    /// `softplus(u) = ln(1 + e^u)`, computed stably; derivative `sigmoid(u)`.
    Softplus,
    /// The exact GELU `u·Φ(u)`, Φ the standard normal CDF.
    Gelu,
    /// `normcdf(u) = Φ(u)`, the standard normal cumulative distribution function.
    Normcdf,
    /// `normpdf(u) = φ(u) = e^(−u²/2)/√(2π)`, the standard normal density.
    Normpdf,
    /// `floor(u)`; not differentiable, passes no gradient.
    Floor,
    /// `ceil(u)`; not differentiable, passes no gradient.
    Ceil,
    /// `round(u)`, half away from zero; not differentiable, passes no gradient.
    Round,
    /// `sign(u)` with `sign(0) = 0`; not differentiable, passes no gradient.
    Sign,
    /// `detach(u)`: u's value, passes no gradient (PyTorch's `detach`).
    Detach,
    /// `min(a, b, …)`: one or more inputs; ties split the gradient, the others
    /// pass none; nan propagates.
    Min,
    /// `max(a, b, …)`: one or more inputs; ties split the gradient, the others
    /// pass none; nan propagates.
    Max,
}

/// How many inputs an op takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// No inputs: `Variable` and `Const`, made by [`Graph::leaf`] and
    /// [`Graph::constant`], never by [`Graph::apply`].
    Leaf,
    /// Exactly one input.
    Unary,
    /// Exactly two inputs.
    Binary,
    /// One or more inputs (`min`, `max`).
    Variadic,
}

/// Where an op is not differentiable, as a gradient check must know it: a
/// central difference whose two points straddle or touch such a place does
/// not approximate the gradient.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kinks {
    /// Nowhere in its domain (poles and domain edges, as `1/u` at 0 or
    /// `sqrt` at 0, are not kinks: the values there are inf or nan).
    Smooth,
    /// Where its one input is 0: `relu` and `abs` bend, `sign` jumps.
    AtZero,
    /// Where its one input is an integer: `floor` and `ceil` jump.
    AtIntegers,
    /// Where its one input is an integer plus ½: `round` jumps.
    AtHalfIntegers,
    /// Where two different inputs tie for the result: `max`, `min`.
    AtTies,
}

/// Where an op gives a finite number for finite inputs (overflow aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// Every real number (`exp(1000)` still overflows to inf).
    Reals,
    /// A divisor other than 0: `a/b`.
    NonzeroDivisor,
    /// Positive numbers: the logarithms `ln`, `log2`, `log10`.
    Positive,
    /// Numbers ≥ 0: `sqrt`.
    NonNegative,
    /// [−1, 1]: `asin`, `acos`.
    MinusOneToOne,
    /// [1, ∞): `acosh`.
    OneAndAbove,
    /// (−1, 1): `atanh`.
    BetweenMinusOneAndOne,
    /// A negative base only to an integer power, 0 only to a power ≥ 0: `^`.
    RealPowers,
}

/// How an op is written in the calculator's language, and so in every
/// listing, formula and picture of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notation {
    /// A leaf: written as its name (a variable) or its value (a constant).
    Leaf,
    /// The prefix minus, `-u`: the one prefix op.
    Prefix,
    /// Between its two operands, by the symbol [`OpInfo::name`]: `a + b`,
    /// `a ^ b`.
    Infix,
    /// A call by [`OpInfo::name`]: `tanh(u)`, `max(a, b, c)`.
    Call,
}

/// The chain rule a backward walk writes out for the commonest ops instead
/// of calling [`OpInfo::local`]: their locals are 1 and 1 (`+`), 1 and −1
/// (`−`), or the other operand (`·`), the same numbers the table gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortcut {
    /// `a + b`: upstream to both.
    Add,
    /// `a − b`: upstream to a, −upstream to b.
    Sub,
    /// `a · b`: upstream × b to a, upstream × a to b.
    Mul,
}

/// One row of the op table: everything about one op, in one place.
pub struct OpInfo {
    /// The op this row describes.
    pub op: Op,
    /// The function name users type (`"exp"`, `"log2"`, …) or the operator's
    /// symbol (`"+"`, `"-"`, `"*"`, `"/"`, `"neg"`, `"^"`); `"leaf"` and `"const"`
    /// for the leaves.
    pub name: &'static str,
    /// How many inputs the op takes.
    pub arity: Arity,
    /// How the op is written: infix, prefix, a call, or a leaf.
    pub notation: Notation,
    /// For `+`, `−` and `·`, the chain rule the untraced backward walk
    /// writes out instead of calling [`OpInfo::local`]; `None` for the rest.
    pub shortcut: Option<Shortcut>,
    /// The forward function: the input values, in operand order, to the output value.
    pub forward: fn(&[f64]) -> f64,
    /// The local partial derivative `∂output/∂inputs[wrt]`, given the input
    /// values, the output value and the input position `wrt`. Leaves return 0,
    /// and so does every position where [`OpInfo::passes`] is false.
    pub local: fn(&[f64], f64, usize) -> f64,
    /// The local derivative at each input position, typed: its textbook
    /// form, the form derivative graphs are built from, where it passes
    /// gradient and its source ([`Derivative`]). A variadic op has one for
    /// every position (see [`OpInfo::derivative`]); leaves have none.
    pub derivatives: &'static [Derivative],
    /// False for ops whose gradient is 0 by definition (`floor`, `ceil`,
    /// `round`, `sign`, `detach`) and for leaves.
    pub differentiable: bool,
    /// Where the op is not differentiable: where a central difference across
    /// the point does not approximate the gradient ([`Graph::crosses_kink`]).
    pub kinks: Kinks,
    /// Where the op gives a finite number for finite inputs: outside it (or
    /// by overflow) it gives inf or nan, and the session warns.
    pub domain: Domain,
    /// A one-line description for help text.
    pub summary: &'static str,
    /// A worked example with its value to 10 significant digits.
    pub example: &'static str,
}

/// Wrong number of inputs for an op.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{op}` takes {expected} input(s), got {got}")]
pub struct ArityError {
    /// The op's name, as in [`OpInfo::name`].
    pub op: &'static str,
    /// What the op accepts: `"1"`, `"2"`, `"1 or more"`, or `"no"` for a leaf
    /// (leaves are made by [`Graph::leaf`] and [`Graph::constant`]).
    pub expected: &'static str,
    /// How many inputs were given.
    pub got: usize,
}

/// The computation graph: an arena of nodes indexed by [`NodeId`], appended in
/// evaluation order; a node's op and operands never change once appended, a
/// leaf's value may ([`Graph::set_leaf_value`], for optimisers and `:=`).
///
/// A node is its op and up to two input ids inline (12 bytes) plus its forward
/// value in a parallel vector (8 bytes; see [`Graph::node_bytes`]); the
/// operands of a `min`/`max` of more than two live in a side vector.
#[derive(Debug, Default, Clone)]
pub struct Graph {
    nodes: Vec<graph::Node>,
    /// Forward values, one per node (same index).
    values: Vec<f64>,
    /// Operands of nodes with more than two (`min`, `max`), referenced by
    /// (start, len) from the node, in node order.
    spilled: Vec<NodeId>,
    /// What long loops poll to stop early (`interrupt.rs`).
    interrupt: interrupt::Hook,
}

/// Gradients of one output with respect to every node.
///
/// Index it with a [`NodeId`]: nodes the output does not reach (and ids out of
/// range) have gradient 0.
#[derive(Debug, Clone)]
pub struct Gradients {
    grads: Vec<f64>,
}

impl std::ops::Index<NodeId> for Gradients {
    type Output = f64;
    fn index(&self, id: NodeId) -> &f64 {
        self.grads.get(id.0 as usize).unwrap_or(&0.0)
    }
}

/// One node's backward step, as recorded by [`Graph::backward_traced`].
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The node whose gradient is passed on to its inputs.
    pub node: NodeId,
    /// The node's gradient when the walk reaches it: its final gradient, since
    /// every node that uses it comes earlier in the order.
    pub upstream: f64,
    /// One entry per input position, in operand order; empty for leaves.
    pub contributions: Vec<Contribution>,
}

/// What one input of a node receives in a backward step: by the chain rule,
/// `product = upstream × local`, and `after = before + product`; or nothing,
/// where the op passes no gradient ([`Contribution::passes_nothing`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Contribution {
    /// The input node that receives the gradient.
    pub input: NodeId,
    /// The input's position among the node's operands (0-based); selects the
    /// rule in [`OpInfo::derivative`].
    pub position: usize,
    /// The local derivative `∂node/∂input` at this position.
    pub local: f64,
    /// `upstream × local`.
    pub product: f64,
    /// True when the op passed nothing to this input at this step
    /// ([`OpInfo::passes`] is false: relu at u ≤ 0, floor, detach, a losing
    /// input of max, …); then `local` and `product` are 0 and `after == before`,
    /// even when the upstream gradient is infinite.
    pub passes_nothing: bool,
    /// The input's accumulated gradient before this contribution.
    pub before: f64,
    /// The input's accumulated gradient after this contribution.
    pub after: f64,
    /// Which use of the input this is, 1-based, counting in walk order
    /// (fan-out: "2nd of 2 uses").
    pub use_number: u32,
    /// How many times nodes reachable from the output use this input (`x*x`
    /// uses `x` twice).
    pub use_count: u32,
}
