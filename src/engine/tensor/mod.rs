//! Vectors and matrices: tensor nodes of rank ≤ 2 beside the scalar graph.
//!
//! A vector or a matrix is one node of a [`TensorGraph`] with its [`Shape`]
//! (rank 0, 1 or 2, float64, row-major), not one node per element: `A @ B`
//! of two 256×256 matrices is one node, and its forward and backward run as
//! vectorised kernels (`kernels.rs`; the matrix product through the
//! `gemm` crate on x86-64 and the `matrixmultiply` crate's dgemm elsewhere,
//! both pure Rust, the latter for the WebAssembly playground; softmax rows
//! in `rowexp.rs`, `tanh` and its derivative in `rowtanh.rs`). Its value
//! is held once, in the arena.
//!
//! **To read it, in this order.** (1) `shape.rs`: [`Shape`] and numpy's
//! broadcasting for rank ≤ 2 ([`Shape::broadcast`]). (2) `ops.rs`: the
//! tensor op table, one row per [`TensorOp`]: its shape rule, its forward
//! kernel and its backward rule with its source. Elementwise ops apply a
//! scalar op of the scalar op table ([`Op::info`](crate::engine::Op::info)) to
//! each element, its forward and its local derivative, never a second copy
//! of a formula. (3) `graph.rs`: the arena ([`TensorGraph::apply`] checks
//! shapes and the memory budget, then computes the value), its reverse
//! topological order (an explicit stack), truncation and the rerun after
//! leaves change. (4) `backward.rs`: the one backward walk — seed the output
//! with ones of its shape, then for each node in that order and each
//! operand, `grad[operand] += vjp(upstream)`, the operand's
//! vector–Jacobian product written as a matrix rule ([`Rule`]): `upstream @
//! Bᵀ` and `Aᵀ @ upstream` for `A @ B`, `upstream ⊙ f′(u)` elementwise
//! summed over broadcast axes, `p ⊙ (upstream − sum(p ⊙ upstream))` for softmax.
//!
//! (5) `derivative.rs`: the same walk recorded as tensor nodes
//! ([`TensorGraph::grad`]), each vector–Jacobian product built of the ops
//! of the table over the operand nodes, so that a derivative of tensors is
//! differentiated again (`grad(sum(grad(L, W)), W)`, `:hessian`).
//!
//! The scalar view of a step, each element's chain rule with its local
//! derivatives, is built only when asked ([`TensorGraph::expand`],
//! `expand.rs`).
//!
//! A scalar node of the scalar [`Graph`](crate::engine::Graph) enters a
//! tensor expression as a node of shape `()` ([`TensorGraph::scalar`]); its
//! gradient comes back as a pair ([`TensorGradients::scalars`]) for the
//! caller to seed the scalar walk with, so the scalar graph stays as it is
//! (20 bytes a node).
//!
//! The values held are bounded by a memory budget ([`DEFAULT_BUDGET`]
//! numbers, 1 GiB, configurable with [`TensorGraph::with_budget`]), checked
//! before anything is allocated: `zeros(100000, 100000)` is a
//! [`BudgetError`], not an abort.
//!
//! `randn` draws from [`Rng`]: xoshiro256** seeded by SplitMix64, normal
//! samples by Box–Muller with `libm`'s functions, the same numbers on every
//! machine.
//!
//! Nothing here recurses over the graph, and the walks look at the
//! graph's interrupt ([`TensorGraph::set_interrupt`]) once a node.

mod accumulate;
mod backward;
mod batch;
mod blocks;
mod derivative;
mod expand;
mod graph;
mod kernels;
mod ops;
mod rowexp;
mod rowtanh;
mod shape;
mod trace;
mod value;

#[cfg(test)]
mod gradcheck;
#[cfg(test)]
mod tests;

pub use backward::{Rule, Side, TensorContribution, TensorGradients, TensorStep};
pub use batch::{Comparison, Select};
pub use derivative::TensorGradError;
pub use expand::ElementTerm;
pub use graph::DEFAULT_BUDGET;
pub use ops::{TensorArity, TensorOp, TensorOpInfo};
pub use shape::{Parenthesized, Shape, ShapeError};
pub use trace::TraceReader;
pub use value::{RaggedRows, Rng, Tensor};

/// Index of a node in a [`TensorGraph`]. Nodes are appended in evaluation
/// order; an id is only meaningful for the graph that returned it, until that
/// graph is truncated below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TensorId(pub u32);

impl TensorId {
    /// The id as an index into the arena.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The arena of tensor nodes: each node is its [`TensorOp`], up to two
/// operands and its value (a [`Tensor`], held once), appended in evaluation
/// order. A node's op and operands never change; a variable leaf's value
/// may ([`TensorGraph::set_leaf_value`], then [`TensorGraph::rerun`]).
#[derive(Debug, Clone)]
pub struct TensorGraph {
    nodes: Vec<graph::Node>,
    values: Vec<Tensor>,
    /// Numbers held by `values`, in all.
    held: usize,
    /// The most numbers `values` may hold.
    budget: usize,
    /// Leaves set since the last rerun.
    moved: Vec<TensorId>,
    interrupt: graph::Hook,
}

/// A value that does not fit in the memory budget, refused before it is
/// allocated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a tensor of shape ({shape}) needs {} numbers, but the memory budget has {left} left (of {budget}); use smaller shapes or free variables",
    shape.len()
)]
pub struct BudgetError {
    /// The shape asked for.
    pub shape: Shape,
    /// How many numbers the budget had left.
    pub left: usize,
    /// The budget, in numbers.
    pub budget: usize,
}

/// A backward pass whose gradients would not fit in what the memory budget
/// has left ([`TensorGraph::check_gradient_budget`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the backward pass needs {need} numbers for its gradients, but the memory budget has {left} left (of {budget}); use smaller shapes or free variables"
)]
pub struct GradientBudgetError {
    /// The numbers the gradients take: one per element of every node the
    /// pass reaches.
    pub need: usize,
    /// How many numbers the budget had left.
    pub left: usize,
    /// The budget, in numbers.
    pub budget: usize,
}

/// Why a tensor node could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TensorError {
    /// The operands' shapes break the op's rule.
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// The value would not fit in the memory budget.
    #[error(transparent)]
    Budget(#[from] BudgetError),
    /// The graph's interrupt ([`TensorGraph::set_interrupt`]) asked a long
    /// kernel to stop before the value was whole.
    #[error("interrupted")]
    Interrupted,
}
