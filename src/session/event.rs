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
    /// Why `grad` is 0 when the output was built from an earlier binding of
    /// this name: "e was built from an earlier b".
    pub grad_note: Option<String>,
    /// The variables whose earlier binding (since rebound) this variable's value
    /// was built from, in the order they were first assigned: `c = a + b` then
    /// `b = 3` gives `["b"]` for c. Empty for a leaf.
    pub built_from_earlier: Vec<String>,
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
    /// The output's graph as a tree (`:graph`); `omitted` nodes are not drawn.
    Graph {
        of: String,
        total: usize,
        lines: Vec<GraphLine>,
        omitted: usize,
    },
    /// The forward evaluation order, inputs first (`:forward`).
    Forward {
        of: String,
        total: usize,
        rows: Vec<NodeRow>,
        omitted: Option<Omitted>,
    },
    /// Kahn's dependency-counting order (`:topo kahn`); `differences` counts the
    /// positions where it differs from the depth-first order.
    Kahn {
        of: String,
        total: usize,
        rows: Vec<KahnRow>,
        omitted: Option<Omitted>,
        differences: usize,
    },
    /// One gradient check (`:check`): ∂of/∂wrt at `at`, by reverse mode and by a
    /// central difference with step `h`; `difference` is |analytic − numeric|,
    /// `tolerance` the test the verdict rests on (for `warn` and `FAIL`, the
    /// looser one); `note` explains a gradient of 0 from an earlier binding.
    Check {
        of: String,
        wrt: String,
        at: f64,
        h: f64,
        analytic: f64,
        numeric: f64,
        relative_error: f64,
        difference: f64,
        tolerance: Tolerance,
        verdict: Verdict,
        note: Option<String>,
    },
    /// The paths from the output to `wrt` (`:paths`): the first ones with their
    /// products, how many there are, and the gradient (their sum).
    Paths {
        of: String,
        wrt: String,
        paths: Vec<PathRow>,
        count: f64,
        gradient: f64,
        nodes: usize,
    },
    /// The output's graph as DOT or SVG (`:dot [FILE]`, `:svg FILE`).
    Picture {
        picture: Picture,
        format: PictureFormat,
        target: Option<Target>,
    },
    /// The backward steps as a table for notes (`:trace md`, `:trace tex`).
    TraceTable {
        of: String,
        total: usize,
        steps: Vec<TraceStep>,
        omitted: Option<Omitted>,
        format: TableFormat,
        target: Option<Target>,
    },
    /// The output as a function of one variable, with its derivative (`:plot`).
    Plot {
        of: String,
        wrt: String,
        at: f64,
        samples: Vec<PlotSample>,
        target: Option<Target>,
    },
    /// `:save FILE`: the session as a script ([`Session::script`](super::Session::script)),
    /// for the printer to write to the target (`statements` lines after the comment).
    Save {
        script: String,
        statements: usize,
        target: Target,
    },
    /// `:load FILE`: the driver (`crate::driver`) reads the file and runs it into the
    /// session; the session does no IO itself.
    Load { target: Target },
    /// A file was written (reported by the printer, which writes files).
    Wrote {
        path: String,
        bytes: usize,
        what: &'static str,
    },
}

// ---------------------------------------------------------------------------
// The teaching commands: `:graph`, `:forward`, `:topo kahn`, `:check`, `:paths`,
// `:dot`, `:svg`, `:trace md|tex`, `:plot`.

/// A file a command asks to write (`:dot FILE`): the path as typed and where it
/// was typed, so that a failure to write it can point there. The session never
/// writes: the printer renders the event and writes the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The path, relative to the working directory unless absolute.
    pub path: String,
    /// Where the path was typed.
    pub span: Span,
    /// Replace an existing file (`-f` or `--force` among the command's arguments).
    pub force: bool,
}

impl Event {
    /// The file an event asks to write or read, if any.
    pub fn target_mut(&mut self) -> Option<&mut Target> {
        match self {
            Event::Picture { target, .. }
            | Event::TraceTable { target, .. }
            | Event::Plot { target, .. } => target.as_mut(),
            Event::Save { target, .. } | Event::Load { target } => Some(target),
            _ => None,
        }
    }
}

impl Target {
    /// The target a command's file argument names: the word as typed, without the
    /// double quotes around it if it has them (`"my file.calc"`). `force` is false.
    pub fn from_word(word: &crate::syntax::Ident) -> Target {
        let name = word.name.as_str();
        let path = name
            .strip_prefix('"')
            .and_then(|n| n.strip_suffix('"'))
            .unwrap_or(name);
        Target {
            path: path.to_string(),
            span: word.span,
            force: false,
        }
    }
}

/// One line of `:graph`.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphLine {
    /// A node, indented by `depth` (the output is at depth 0). `shown_above` is
    /// true when the node was already drawn (fan-out): it is referenced, not
    /// drawn again.
    Node {
        depth: usize,
        row: NodeRow,
        grad: f64,
        shown_above: bool,
    },
    /// `count` inputs at `depth` left out (a wide node, or too deep to draw).
    More { depth: usize, count: usize },
}

/// One node of `:topo kahn`.
#[derive(Debug, Clone, PartialEq)]
pub struct KahnRow {
    /// The node (its position is its place in Kahn's order).
    pub row: NodeRow,
    /// How many uses of the node wait to be processed before it is ready.
    pub pending: u32,
    /// Its 1-based position in the depth-first order of `:topo`.
    pub dfs_position: usize,
}

/// The test of a gradient check, as `torch.autograd.gradcheck` makes it (through
/// `torch.allclose`): the check passes when
/// |analytic − numeric| ≤ `atol` + `rtol`·|numeric|. An absolute part is needed:
/// where the true gradient is 0 a central difference gives a tiny nonzero
/// number, and a purely relative error between 0 and 1e-10 is 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// The absolute part.
    pub atol: f64,
    /// The part relative to |numeric|.
    pub rtol: f64,
}

impl Tolerance {
    /// `atol + rtol·|numeric|`: the largest difference this tolerance admits.
    pub fn bound(self, numeric: f64) -> f64 {
        self.atol + self.rtol * numeric.abs()
    }

    /// Whether `difference` (|analytic − numeric|) is within the tolerance.
    pub fn admits(self, difference: f64, numeric: f64) -> bool {
        difference <= self.bound(numeric)
    }
}

/// `:check` passes within this tolerance. A float64 central difference with the
/// step `:check` takes (about 1e-5 of the value) is accurate to roughly 1e-10
/// for functions of moderate size, so this is 1000 times tighter than
/// [`GRADCHECK_TOLERANCE`] in its absolute part and 100 times in its relative part.
pub const CHECK_TOLERANCE: Tolerance = Tolerance {
    atol: 1e-8,
    rtol: 1e-5,
};

/// `torch.autograd.gradcheck`'s default tolerance (`atol=1e-05, rtol=0.001`,
/// designed for double precision; PyTorch's documentation of
/// `torch.autograd.gradcheck.gradcheck`). `:check` says `warn` between
/// [`CHECK_TOLERANCE`] and this, and `FAIL` beyond it: where gradcheck would fail.
pub const GRADCHECK_TOLERANCE: Tolerance = Tolerance {
    atol: 1e-5,
    rtol: 1e-3,
};

/// The verdict of one gradient check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Within [`CHECK_TOLERANCE`].
    Pass,
    /// Beyond [`CHECK_TOLERANCE`], within [`GRADCHECK_TOLERANCE`].
    Warn,
    /// Beyond [`GRADCHECK_TOLERANCE`].
    Fail,
    /// The step ±h reaches a kink (relu, abs, max, min, floor, …): a central
    /// difference does not measure the gradient there.
    Kink,
    /// The analytic or the numeric gradient is inf or nan.
    NotFinite,
}

impl Verdict {
    /// `pass`, `warn`, `FAIL`, `kink`, `not finite`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::Fail => "FAIL",
            Verdict::Kink => "kink",
            Verdict::NotFinite => "not finite",
        }
    }
}

/// One edge of a path of `:paths`: a node, the input the path goes down to, and
/// the local derivative between them.
#[derive(Debug, Clone, PartialEq)]
pub struct PathEdge {
    /// The consumer.
    pub node: NodeRef,
    /// The input the path continues with.
    pub input: NodeRef,
    /// The op table's formula of this local derivative.
    pub formula: &'static str,
    /// ∂node/∂input.
    pub local: f64,
}

/// One path of `:paths`, from the output down to the node asked about.
#[derive(Debug, Clone, PartialEq)]
pub struct PathRow {
    /// The edges, output first.
    pub edges: Vec<PathEdge>,
    /// The product of their local derivatives.
    pub product: f64,
}

/// A node of a picture (`:dot`, `:svg`).
#[derive(Debug, Clone, PartialEq)]
pub struct PictureNode {
    /// The node.
    pub node: NodeRef,
    /// The op's name from the op table.
    pub op: &'static str,
    /// The forward value.
    pub value: f64,
    /// ∂output/∂node.
    pub grad: f64,
    /// In a picture of the backward pass in progress (`--before`, `--step K`):
    /// the gradient is not computed yet and is drawn blank.
    pub pending: bool,
    /// The node the backward pass has just processed (`--step K`): drawn highlighted.
    pub current: bool,
}

/// Which moment of the backward pass a picture shows (`:svg FILE --step K`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PictureStep {
    /// The step just done, numbered as `:trace` numbers them (the node's place in
    /// the reverse topological order, from 1); 0 before the backward pass.
    pub number: usize,
    /// The last step's number.
    pub last: usize,
}

/// An edge of a picture: `input` feeds `node` at `position`.
#[derive(Debug, Clone, PartialEq)]
pub struct PictureEdge {
    /// The input.
    pub input: NodeId,
    /// The consumer.
    pub node: NodeId,
    /// The input's position among the consumer's operands.
    pub position: usize,
    /// The local derivative ∂node/∂input.
    pub local: f64,
}

/// The output's graph, for a picture.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    /// The output's label.
    pub of: String,
    /// Nodes, output first (reverse topological order).
    pub nodes: Vec<PictureNode>,
    /// Edges, in the order of `nodes` and operand order.
    pub edges: Vec<PictureEdge>,
    /// A moment of the backward pass (`--before`, `--step K`, `--steps`), or
    /// `None` for the finished one.
    pub step: Option<PictureStep>,
}

/// What a picture is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PictureFormat {
    /// Graphviz DOT text.
    Dot,
    /// SVG, laid out without Graphviz.
    Svg,
}

/// What a trace table is written as (`:trace md`, `:trace tex`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// A Markdown (GitHub) table.
    Markdown,
    /// A LaTeX `tabular`.
    Latex,
}

/// One sample of `:plot`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlotSample {
    /// The variable's value.
    pub x: f64,
    /// The output's value there.
    pub value: f64,
    /// ∂output/∂variable there.
    pub grad: f64,
}
