//! The library face of the engine: a [`Tape`] (a [`Graph`] behind a `RefCell`)
//! and [`Var`], a `Copy` handle to one of its nodes with operator overloading,
//! so that a model reads like arithmetic: `let y = (w * x + b).relu();`.
//!
//! Every `Var` operation appends one node to the tape's [`Graph`] — the same
//! arena, op table, sort and backward pass the calculator uses. An `f64` operand
//! becomes a constant node first, as micrograd wraps it in a `Value`.

use std::cell::{Ref, RefCell};
use std::ops::{Add, AddAssign, Div, DivAssign, Index, Mul, MulAssign, Neg, Sub, SubAssign};

use super::{ArityError, Gradients, Graph, NodeId, Op, Step};

/// A [`Graph`] that [`Var`]s build into through a shared reference.
///
/// ```
/// use gradcalc::engine::Tape;
///
/// let tape = Tape::new();
/// let x = tape.var(2.0);
/// let y = tape.var(3.0);
/// let z = x * y + x; // z = x·y + x
/// let grads = tape.backward(z);
/// assert_eq!((z.value(), grads[x], grads[y]), (8.0, 4.0, 2.0));
/// ```
#[derive(Debug, Default)]
pub struct Tape {
    graph: RefCell<Graph>,
}

/// A node of a [`Tape`]: a `Copy` handle (a reference to the tape and a
/// [`NodeId`]). Arithmetic with `+ - * /` and unary `-` works between `Var`s and
/// with `f64` on either side; every op of the op table is a method
/// ([`Var::tanh`], [`Var::relu`], [`Var::powf`], …).
///
/// ```
/// use gradcalc::engine::Tape;
///
/// let tape = Tape::new();
/// let (w, x, b) = (tape.var(-2.0), tape.var(1.5), tape.var(4.0));
/// let y = (w * x + b).relu(); // relu(-3 + 4) = 1
/// let grads = y.backward();
/// assert_eq!((y.value(), grads[w], grads[x], grads[b]), (1.0, 1.5, -2.0, 1.0));
/// ```
///
/// # Panics
/// Combining `Var`s of two different tapes panics, and so does using a `Var`
/// whose node was removed by [`Tape::truncate`] or [`Tape::clear`] (if its id
/// is now out of range; an id that was reused names the new node).
#[derive(Clone, Copy)]
pub struct Var<'t> {
    tape: &'t Tape,
    id: NodeId,
}

impl Tape {
    /// An empty tape.
    ///
    /// ```
    /// assert!(gradcalc::engine::Tape::new().is_empty());
    /// ```
    pub fn new() -> Tape {
        Tape::default()
    }

    /// An empty tape with room for `nodes` nodes before it reallocates.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::with_capacity(1000);
    /// assert!(tape.memory_bytes() >= 1000 * gradcalc::engine::Graph::node_bytes());
    /// ```
    pub fn with_capacity(nodes: usize) -> Tape {
        Tape::from(Graph::with_capacity(nodes))
    }

    /// Appends a variable (an [`Op::Variable`] leaf) with value `value`.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// let x = tape.var(0.5);
    /// assert_eq!(x.value(), 0.5);
    /// ```
    pub fn var(&self, value: f64) -> Var<'_> {
        let id = self.graph.borrow_mut().leaf(value);
        Var { tape: self, id }
    }

    /// Appends a constant (an [`Op::Const`] leaf) with value `value`.
    ///
    /// ```
    /// use gradcalc::engine::{Op, Tape};
    /// let tape = Tape::new();
    /// assert_eq!(tape.constant(2.0).op(), Op::Const);
    /// ```
    pub fn constant(&self, value: f64) -> Var<'_> {
        let id = self.graph.borrow_mut().constant(value);
        Var { tape: self, id }
    }

    /// The `Var` for a node already on the tape.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// let x = tape.var(1.0);
    /// assert_eq!(tape.get(x.id()).value(), 1.0);
    /// ```
    ///
    /// # Panics
    /// If `id` is not a node of this tape.
    pub fn get(&self, id: NodeId) -> Var<'_> {
        assert!(id.index() < self.len(), "{id:?} is not on this tape");
        Var { tape: self, id }
    }

    /// Appends `op` applied to `inputs` (in operand order), as [`Graph::apply`].
    ///
    /// ```
    /// use gradcalc::engine::{Op, Tape};
    /// let tape = Tape::new();
    /// let (a, b, c) = (tape.var(3.0), tape.var(1.0), tape.var(2.0));
    /// assert_eq!(tape.apply(Op::Min, &[a, b, c]).unwrap().value(), 1.0);
    /// ```
    ///
    /// # Errors
    /// [`ArityError`] if `op` does not take `inputs.len()` inputs.
    pub fn apply<'t>(&'t self, op: Op, inputs: &[Var<'t>]) -> Result<Var<'t>, ArityError> {
        let ids: Vec<NodeId> = inputs.iter().map(|v| self.own(*v)).collect();
        let id = self.graph.borrow_mut().apply(op, &ids)?;
        Ok(Var { tape: self, id })
    }

    /// The number of nodes on the tape.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// let x = tape.var(1.0);
    /// let _ = x * 2.0; // a constant and a `*`
    /// assert_eq!(tape.len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.graph.borrow().len()
    }

    /// True if the tape has no nodes.
    ///
    /// ```
    /// assert!(gradcalc::engine::Tape::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes the nodes appended after the first `len`, keeping the memory for
    /// reuse: the way to free one training step's graph while the parameters,
    /// made first, stay. `Var`s of removed nodes must not be used again.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// let w = tape.var(1.0);
    /// let mark = tape.len();
    /// for _ in 0..3 {
    ///     let loss = (w * 2.0 - 1.0).powf(2.0);
    ///     let g = tape.backward(loss)[w];
    ///     tape.truncate(mark); // this step's nodes are gone
    ///     tape.set_value(w, w.value() - 0.1 * g);
    /// }
    /// assert_eq!(tape.len(), 1);
    /// ```
    pub fn truncate(&self, len: usize) {
        self.graph.borrow_mut().truncate(len);
    }

    /// Removes every node, keeping the memory for reuse.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// tape.var(1.0);
    /// tape.clear();
    /// assert!(tape.is_empty());
    /// ```
    pub fn clear(&self) {
        self.graph.borrow_mut().clear();
    }

    /// Sets the value of a variable (an [`Op::Variable`] leaf), e.g. a parameter
    /// after an optimiser step. Nodes already built on it keep their old
    /// values: [truncate](Tape::truncate) them first.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// let w = tape.var(1.0);
    /// tape.set_value(w, 0.25);
    /// assert_eq!(w.value(), 0.25);
    /// ```
    ///
    /// # Panics
    /// If `var` is not a variable leaf of this tape.
    pub fn set_value(&self, var: Var<'_>, value: f64) {
        let id = self.own(var);
        self.graph.borrow_mut().set_leaf_value(id, value);
    }

    /// The nodes reachable from `output` in reverse topological order, output
    /// first ([`Graph::topo_order`]).
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// let x = tape.var(2.0);
    /// let y = x * x;
    /// assert_eq!(tape.topo_order(y), [y.id(), x.id()]);
    /// ```
    pub fn topo_order(&self, output: Var<'_>) -> Vec<NodeId> {
        let id = self.own(output);
        self.graph.borrow().topo_order(id)
    }

    /// The gradients of `output` with respect to every node: sorts the nodes
    /// reachable from `output` and walks them once ([`Graph::backward`]).
    /// Index the result with a `Var` (or a [`NodeId`]).
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// let x = tape.var(3.0);
    /// let y = x * x + 1.0;
    /// assert_eq!(tape.backward(y)[x], 6.0);
    /// ```
    pub fn backward(&self, output: Var<'_>) -> Gradients {
        let graph = self.graph.borrow();
        let order = graph.topo_order(self.own(output));
        graph.backward(&order)
    }

    /// [`Tape::backward`] that also records every backward step
    /// ([`Graph::backward_traced`]): upstream gradient, local derivatives,
    /// products and accumulation, in reverse topological order.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// let x = tape.var(0.5);
    /// let y = x.tanh();
    /// let (grads, steps) = tape.backward_traced(y);
    /// assert_eq!(steps.len(), 2); // tanh, then x
    /// assert_eq!(steps[0].contributions[0].local, grads[x]);
    /// ```
    pub fn backward_traced(&self, output: Var<'_>) -> (Gradients, Vec<Step>) {
        let graph = self.graph.borrow();
        let order = graph.topo_order(self.own(output));
        graph.backward_traced(&order)
    }

    /// The graph itself, borrowed: for its nodes, ops, inputs and memory.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// let x = tape.var(1.0);
    /// assert_eq!(tape.graph().value(x.id()), 1.0);
    /// ```
    ///
    /// # Panics
    /// Building on the tape while the borrow is held panics (`RefCell`).
    pub fn graph(&self) -> Ref<'_, Graph> {
        self.graph.borrow()
    }

    /// The graph, taking the tape apart.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// tape.var(1.0);
    /// assert_eq!(tape.into_graph().len(), 1);
    /// ```
    pub fn into_graph(self) -> Graph {
        self.graph.into_inner()
    }

    /// The heap memory the tape's graph holds, in bytes ([`Graph::memory_bytes`]).
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::with_capacity(10);
    /// assert_eq!(tape.memory_bytes(), 10 * gradcalc::engine::Graph::node_bytes());
    /// ```
    pub fn memory_bytes(&self) -> usize {
        self.graph.borrow().memory_bytes()
    }

    /// The id of a `Var` of this tape.
    fn own(&self, var: Var<'_>) -> NodeId {
        assert!(
            std::ptr::eq(self, var.tape),
            "a Var of another tape was used"
        );
        var.id
    }

    fn unary(&self, op: Op, a: NodeId) -> Var<'_> {
        let id = self.graph.borrow_mut().apply_unary(op, a);
        Var { tape: self, id }
    }

    fn binary(&self, op: Op, a: NodeId, b: NodeId) -> Var<'_> {
        let id = self.graph.borrow_mut().apply_binary(op, a, b);
        Var { tape: self, id }
    }
}

impl From<Graph> for Tape {
    /// A tape that builds on an existing graph.
    ///
    /// ```
    /// use gradcalc::engine::{Graph, Tape};
    /// let mut graph = Graph::new();
    /// let x = graph.leaf(2.0);
    /// let tape = Tape::from(graph);
    /// assert_eq!((tape.get(x) * 3.0).value(), 6.0);
    /// ```
    fn from(graph: Graph) -> Tape {
        Tape {
            graph: RefCell::new(graph),
        }
    }
}

impl<'t> Var<'t> {
    /// The node's id in the tape's [`Graph`].
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// assert_eq!(tape.var(1.0).id().index(), 0);
    /// ```
    pub fn id(self) -> NodeId {
        self.id
    }

    /// The tape this `Var` lives on.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// let x = tape.var(1.0);
    /// assert!(std::ptr::eq(x.tape(), &tape));
    /// ```
    pub fn tape(self) -> &'t Tape {
        self.tape
    }

    /// The forward value, computed when the node was made.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// assert_eq!((tape.var(2.0) / 4.0).value(), 0.5);
    /// ```
    pub fn value(self) -> f64 {
        self.tape.graph.borrow().value(self.id)
    }

    /// The node's op.
    ///
    /// ```
    /// use gradcalc::engine::{Op, Tape};
    /// let tape = Tape::new();
    /// assert_eq!(tape.var(2.0).exp().op(), Op::Exp);
    /// ```
    pub fn op(self) -> Op {
        self.tape.graph.borrow().op(self.id)
    }

    /// The node's inputs, in operand order; empty for leaves.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// let x = tape.var(2.0);
    /// let y = x - 1.0;
    /// assert_eq!(y.operands()[0].id(), x.id());
    /// ```
    pub fn operands(self) -> Vec<Var<'t>> {
        let graph = self.tape.graph.borrow();
        graph
            .operands(self.id)
            .iter()
            .map(|&id| Var {
                tape: self.tape,
                id,
            })
            .collect()
    }

    /// The gradients of this node with respect to every node: [`Tape::backward`].
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// let x = tape.var(3.0);
    /// let y = x.powf(2.0);
    /// assert_eq!(y.backward()[x], 6.0);
    /// ```
    pub fn backward(self) -> Gradients {
        self.tape.backward(self)
    }

    /// `self ^ exponent` for a number exponent (a constant node).
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// assert_eq!(tape.var(2.0).powf(10.0).value(), 1024.0);
    /// ```
    pub fn powf(self, exponent: f64) -> Var<'t> {
        let e = self.tape.constant(exponent);
        self.powv(e)
    }

    /// `self ^ exponent` for a `Var` exponent; gradients flow to both.
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// let (a, b) = (tape.var(2.0), tape.var(3.0));
    /// let y = a.powv(b);
    /// let g = y.backward();
    /// assert_eq!((y.value(), g[a]), (8.0, 12.0));
    /// ```
    pub fn powv(self, exponent: Var<'t>) -> Var<'t> {
        self.binary(Op::Pow, exponent)
    }

    /// The smaller of two values ([`Op::Min`]; a tie splits the gradient).
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// assert_eq!(tape.var(2.0).min(tape.var(3.0)).value(), 2.0);
    /// ```
    pub fn min(self, other: Var<'t>) -> Var<'t> {
        self.variadic(Op::Min, other)
    }

    /// The larger of two values ([`Op::Max`]; a tie splits the gradient).
    ///
    /// ```
    /// let tape = gradcalc::engine::Tape::new();
    /// assert_eq!(tape.var(2.0).max(tape.var(3.0)).value(), 3.0);
    /// ```
    pub fn max(self, other: Var<'t>) -> Var<'t> {
        self.variadic(Op::Max, other)
    }

    fn binary(self, op: Op, other: Var<'t>) -> Var<'t> {
        let b = self.tape.own(other);
        self.tape.binary(op, self.id, b)
    }

    fn variadic(self, op: Op, other: Var<'t>) -> Var<'t> {
        self.tape
            .apply(op, &[self, other])
            .expect("min and max take two inputs")
    }
}

impl std::fmt::Debug for Var<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Var")
            .field("id", &self.id)
            .field("value", &self.value())
            .finish()
    }
}

/// One method per unary op of the op table, with its doc example.
macro_rules! unary_methods {
    ($($method:ident => $op:ident, $x:literal;)*) => {
        impl<'t> Var<'t> {
            $(
                #[doc = concat!("`", stringify!($method), "(self)`: see [`Op::", stringify!($op), "`].")]
                ///
                /// ```
                /// use gradcalc::engine::{Op, Tape};
                /// let tape = Tape::new();
                #[doc = concat!("let x = tape.var(", stringify!($x), ");")]
                #[doc = concat!("let y = x.", stringify!($method), "();")]
                #[doc = concat!("let forward = Op::", stringify!($op), ".info().forward;")]
                #[doc = concat!("assert_eq!(y.value().to_bits(), forward(&[", stringify!($x), "]).to_bits());")]
                /// let _gradient = y.backward()[x];
                /// ```
                pub fn $method(self) -> Var<'t> {
                    self.tape.unary(Op::$op, self.id)
                }
            )*
        }
    };
}

unary_methods! {
    exp => Exp, 0.5;
    ln => Ln, 0.5;
    log2 => Log2, 0.5;
    log10 => Log10, 0.5;
    sqrt => Sqrt, 0.5;
    cbrt => Cbrt, 0.5;
    abs => Abs, -0.5;
    sin => Sin, 0.5;
    cos => Cos, 0.5;
    tan => Tan, 0.5;
    asin => Asin, 0.5;
    acos => Acos, 0.5;
    atan => Atan, 0.5;
    sinh => Sinh, 0.5;
    cosh => Cosh, 0.5;
    tanh => Tanh, 0.5;
    sech => Sech, 0.5;
    asinh => Asinh, 0.5;
    acosh => Acosh, 1.5;
    atanh => Atanh, 0.5;
    sigmoid => Sigmoid, 0.5;
    relu => Relu, -0.5;
    softplus => Softplus, 0.5;
    gelu => Gelu, 0.5;
    normcdf => Normcdf, 0.5;
    normpdf => Normpdf, 0.5;
    floor => Floor, 1.5;
    ceil => Ceil, 1.5;
    round => Round, 1.5;
    sign => Sign, -0.5;
    detach => Detach, 0.5;
}

impl<'t> Neg for Var<'t> {
    type Output = Var<'t>;
    /// `-self` ([`Op::Neg`]).
    fn neg(self) -> Var<'t> {
        self.tape.unary(Op::Neg, self.id)
    }
}

/// `Var ∘ Var`, `Var ∘ f64`, `f64 ∘ Var` and `Var ∘= …` for one operator; an
/// `f64` becomes a constant node.
macro_rules! binary_operator {
    ($trait:ident, $method:ident, $assign_trait:ident, $assign_method:ident, $op:ident) => {
        impl<'t> $trait for Var<'t> {
            type Output = Var<'t>;
            fn $method(self, rhs: Var<'t>) -> Var<'t> {
                self.binary(Op::$op, rhs)
            }
        }

        impl<'t> $trait<f64> for Var<'t> {
            type Output = Var<'t>;
            fn $method(self, rhs: f64) -> Var<'t> {
                let rhs = self.tape.constant(rhs);
                self.binary(Op::$op, rhs)
            }
        }

        impl<'t> $trait<Var<'t>> for f64 {
            type Output = Var<'t>;
            fn $method(self, rhs: Var<'t>) -> Var<'t> {
                rhs.tape.constant(self).binary(Op::$op, rhs)
            }
        }

        impl<'t> $assign_trait for Var<'t> {
            fn $assign_method(&mut self, rhs: Var<'t>) {
                *self = self.binary(Op::$op, rhs);
            }
        }

        impl<'t> $assign_trait<f64> for Var<'t> {
            fn $assign_method(&mut self, rhs: f64) {
                *self = $trait::$method(*self, rhs);
            }
        }
    };
}

binary_operator!(Add, add, AddAssign, add_assign, Add);
binary_operator!(Sub, sub, SubAssign, sub_assign, Sub);
binary_operator!(Mul, mul, MulAssign, mul_assign, Mul);
binary_operator!(Div, div, DivAssign, div_assign, Div);

impl Index<Var<'_>> for Gradients {
    type Output = f64;
    /// The gradient with respect to `var`'s node; 0 if the output does not reach it.
    fn index(&self, var: Var<'_>) -> &f64 {
        &self[var.id]
    }
}
