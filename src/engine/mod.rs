//! The autograd core: graph arena, op table, reverse topological order, backward.
//!
//! Knows nothing of text, names, colour or IO.

/// Index of a node in a [`Graph`]. Nodes are appended in evaluation order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// Every operation a node can be. `Input` and `Const` are leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Input,
    Const,
    Add,
    Sub,
    Mul,
    Div,
    Neg,
    Pow,
    Exp,
    Ln,
    Log2,
    Log10,
    Sqrt,
    Cbrt,
    Abs,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Sigmoid,
    Relu,
    Softplus,
    Gelu,
    Floor,
    Ceil,
    Round,
    Sign,
    Detach,
    Min,
    Max,
}

/// How many inputs an op takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    Leaf,
    Unary,
    Binary,
    /// One or more inputs (`min`, `max`).
    Variadic,
}

/// One row of the op table.
pub struct OpInfo {
    pub op: Op,
    pub name: &'static str,
    pub arity: Arity,
    pub forward: fn(&[f64]) -> f64,
    pub local: fn(&[f64], f64, usize) -> f64,
    pub formulas: &'static [&'static str],
    pub differentiable: bool,
    pub summary: &'static str,
    pub example: &'static str,
}

impl Op {
    pub fn info(self) -> &'static OpInfo {
        todo!("engine helper")
    }
    pub fn from_function_name(name: &str) -> Option<Op> {
        let _ = name;
        todo!("engine helper")
    }
    pub fn table() -> &'static [OpInfo] {
        todo!("engine helper")
    }
}

/// Wrong number of inputs for an op.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{op}` takes {expected} input(s), got {got}")]
pub struct ArityError {
    pub op: &'static str,
    pub expected: &'static str,
    pub got: usize,
}

/// The computation graph.
#[derive(Debug, Default, Clone)]
pub struct Graph {}

impl Graph {
    pub fn new() -> Graph {
        Graph {}
    }
    pub fn len(&self) -> usize {
        todo!()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn clear(&mut self) {
        todo!()
    }
    pub fn leaf(&mut self, value: f64) -> NodeId {
        let _ = value;
        todo!()
    }
    pub fn constant(&mut self, value: f64) -> NodeId {
        let _ = value;
        todo!()
    }
    pub fn apply(&mut self, op: Op, inputs: &[NodeId]) -> Result<NodeId, ArityError> {
        let _ = (op, inputs);
        todo!()
    }
    pub fn value(&self, id: NodeId) -> f64 {
        let _ = id;
        todo!()
    }
    pub fn op(&self, id: NodeId) -> Op {
        let _ = id;
        todo!()
    }
    pub fn inputs(&self, id: NodeId) -> &[NodeId] {
        let _ = id;
        todo!()
    }
    pub fn topo_order(&self, output: NodeId) -> Vec<NodeId> {
        let _ = output;
        todo!()
    }
    pub fn backward(&self, order: &[NodeId]) -> Gradients {
        let _ = order;
        todo!()
    }
    pub fn backward_traced(&self, order: &[NodeId]) -> (Gradients, Vec<Step>) {
        let _ = order;
        todo!()
    }
}

/// Gradients of one output with respect to every node.
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

/// One node's backward step.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub node: NodeId,
    pub upstream: f64,
    pub contributions: Vec<Contribution>,
}

/// What one input of a node receives in a backward step.
#[derive(Debug, Clone, PartialEq)]
pub struct Contribution {
    pub input: NodeId,
    pub position: usize,
    pub local: f64,
    pub product: f64,
    pub before: f64,
    pub after: f64,
    pub use_number: u32,
    pub use_count: u32,
}
