//! What a session reports: structured events, turned into text or JSON by `render`.

use crate::engine::NodeId;
use crate::syntax::Span;

/// A node as outputs refer to it: by its name when it has one, by its value when it
/// is a constant, otherwise by its id (`#7`).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRef {
    /// The node's id in the graph.
    pub id: NodeId,
    /// The variable currently bound to this node, if any.
    pub name: Option<String>,
    /// The value, when the node is a constant (a number literal or `pi`).
    pub constant: Option<f64>,
}

/// One node of the graph, described for `:topo` and `:trace`.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRow {
    /// 1-based position in the order it is listed in.
    pub position: usize,
    /// The node itself.
    pub node: NodeRef,
    /// The op's name from the op table: `+`, `*`, `tanh`, `leaf`, `const`, …
    pub op: &'static str,
    /// The op's inputs, in operand order.
    pub inputs: Vec<NodeRef>,
    /// The node's forward value.
    pub value: f64,
}

/// What one input of a node receives in one backward step (a row of `:trace`).
#[derive(Debug, Clone, PartialEq)]
pub struct TraceContribution {
    /// The input node.
    pub input: NodeRef,
    /// The op table's formula for this local derivative, e.g. `∂(a·b)/∂a = b`.
    pub formula: &'static str,
    /// The local derivative ∂node/∂input, evaluated.
    pub local: f64,
    /// upstream × local: what this use adds to the input's gradient (chain rule).
    pub product: f64,
    /// The input's gradient before this contribution.
    pub before: f64,
    /// The input's gradient after it (accumulation at fan-out).
    pub after: f64,
    /// Which use of the input this is (1-based, in backward order).
    pub use_number: u32,
    /// How many uses the input has in the output's graph (fan-out).
    pub use_count: u32,
}

/// One backward step: a node, its upstream gradient and what it passes on.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceStep {
    /// The node, its op, inputs and value.
    pub row: NodeRow,
    /// ∂output/∂node when this node is reached (all its uses already accumulated).
    pub upstream: f64,
    /// Whether the op passes no gradient (floor, ceil, round, sign, detach).
    pub blocks_gradient: bool,
    /// One entry per input, in operand order; empty for leaves.
    pub contributions: Vec<TraceContribution>,
}

/// Rows left out of a long listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Omitted {
    /// The rows were left out after this many rows.
    pub after: usize,
    /// How many rows were left out.
    pub count: usize,
}

/// A variable for `:vars`.
#[derive(Debug, Clone, PartialEq)]
pub struct VarRow {
    /// The variable's name.
    pub name: String,
    /// Its current node.
    pub node: NodeId,
    /// Its value.
    pub value: f64,
    /// True when it is a leaf (an input that gradients are taken for).
    pub leaf: bool,
    /// ∂output/∂name, when there is an output.
    pub grad: Option<f64>,
}

/// Everything a statement or command can report.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A statement's value; `name` is the assigned variable, `None` for an expression.
    Value { name: Option<String>, value: f64 },
    /// A user function was defined.
    Defined { name: String, params: Vec<String> },
    /// ∂of/∂wrt; `note` explains a gradient that is 0 because the output does not reach `wrt`.
    Grad {
        of: String,
        wrt: String,
        value: f64,
        note: Option<String>,
    },
    /// Something worth knowing that is not an error: inf or nan from finite inputs.
    Warning { message: String, span: Span },
    /// A one-line remark, e.g. that a constant was rebound.
    Notice { message: String },
    /// The reverse topological order of the output's graph (`:topo`).
    Topo {
        of: String,
        total: usize,
        rows: Vec<NodeRow>,
        omitted: Option<Omitted>,
    },
    /// Every backward step (`:trace`).
    Trace {
        of: String,
        total: usize,
        steps: Vec<TraceStep>,
        omitted: Option<Omitted>,
    },
    /// The variables (`:vars`); `of` names the output the gradients are of.
    Vars {
        of: Option<String>,
        vars: Vec<VarRow>,
    },
    /// Help text (`:help`).
    Help { topic: Option<String>, text: String },
    /// Memory figures (`:stats`).
    Stats(super::Stats),
    /// Unreachable nodes were reclaimed (`:gc`).
    Collected(super::Reclaim),
    /// The session was cleared (`:reset`).
    Reset,
    /// The user asked to leave (`:quit`).
    Quit,
}
