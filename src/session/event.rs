//! What a session reports: structured events, turned into text or JSON by `render`.

use std::rc::Rc;

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::steps::{GradState, StepModel};
use crate::engine::{NodeId, Op, Passing};
use crate::syntax::Span;

/// A node as outputs refer to it: by its name when it has one, by its value when it
/// is a constant, otherwise by its label (`_7`, see [`node_label`]).
///
/// Serialized as `{id, name, label}` (flattened into a row); where only the id is
/// wanted (an input, an edge) the field says so with [`fields::id_of`].
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRef {
    /// The node's id in the graph.
    pub id: NodeId,
    /// The variable currently bound to this node, if any.
    pub name: Option<String>,
    /// The value, when the node is a constant (a number literal or `pi`).
    pub constant: Option<f64>,
}

impl NodeRef {
    /// What the user can type to mean this node: its name, or else its
    /// [`node_label`] (`_7`).
    pub fn label(&self) -> String {
        self.name.clone().unwrap_or_else(|| node_label(self.id))
    }
}

impl Serialize for NodeRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("id", &self.id.0)?;
        map.serialize_entry("name", &self.name)?;
        map.serialize_entry("label", &self.label())?;
        map.end()
    }
}

/// The label of node `id`: `_` and the id (`_7`). Typed back in an expression or
/// a command it means that node (see [`label_id`]); user names of this form are
/// refused, so a label never collides with a variable. Ids are positions in the
/// graph: a collection (`:gc`) renumbers them.
pub fn node_label(id: NodeId) -> String {
    format!("_{}", id.0)
}

/// The node id a [`node_label`] names (`_7` → 7): `_` followed by ASCII digits
/// without a leading zero (but `_0`) that fit a `u32`; `None` for anything else.
pub fn label_id(name: &str) -> Option<NodeId> {
    let digits = name.strip_prefix('_')?;
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok().map(NodeId))?
}

/// One node of the graph, described for `:topo` and `:trace`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeRow {
    /// 1-based position in the order it is listed in.
    pub position: usize,
    /// The node itself.
    #[serde(flatten)]
    pub node: NodeRef,
    /// The op (its row of the op table says how it is written).
    #[serde(serialize_with = "fields::op")]
    pub op: Op,
    /// The op's inputs, in operand order.
    #[serde(serialize_with = "fields::ids_of")]
    pub inputs: Vec<NodeRef>,
    /// The node's forward value.
    pub value: Number,
}

/// What one input of a node receives in one backward step (a row of `:trace`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceContribution {
    /// The input node (serialized as `input`, its id, and `input_name`).
    #[serde(flatten, serialize_with = "fields::input")]
    pub input: NodeRef,
    /// The partial derivative this row is about, by the operands' labels:
    /// `∂(x*y)/∂x`, `∂tanh(n)/∂n`.
    pub partial: String,
    /// The local derivative as an expression the calculator parses, with the
    /// operands' labels for the op's placeholders and constant arithmetic folded
    /// (`y`, `2*x`, `1/cosh(n)^2`); evaluated in the session it gives `local`.
    /// `None` when the op passes nothing to this input at this point (`floor`,
    /// `relu` at `u ≤ 0`, a `max` loser). An operand with no name and a long
    /// definition is written by its label `_id`, which parses too.
    pub formula: Option<String>,
    /// The local derivative ∂node/∂input, evaluated.
    pub local: Number,
    /// upstream × local: what this use adds to the input's gradient (chain rule).
    pub product: Number,
    /// `Some(why)` when the op passed nothing to this input (relu at u ≤ 0,
    /// floor, detach, …): local and product are then 0 and the gradient is
    /// unchanged. Serialized as a boolean.
    #[serde(serialize_with = "fields::is_some")]
    pub passes_nothing: Option<NothingPassed>,
    /// The input's gradient before this contribution.
    pub before: Number,
    /// The input's gradient after it (accumulation at fan-out).
    pub after: Number,
    /// Which use of the input this is (1-based, in backward order).
    #[serde(rename = "use")]
    pub use_number: u32,
    /// How many uses the input has in the output's graph (fan-out).
    #[serde(rename = "uses")]
    pub use_count: u32,
}

/// Why an op passed nothing to one of its inputs at a point: the rule it
/// follows there and the operands the rule speaks of. The renderer writes
/// the words (`x*y ≤ 0` for relu of `x*y`, `not the largest` for max).
#[derive(Debug, Clone, PartialEq)]
pub struct NothingPassed {
    /// Where the op passes gradient to this input (relu: where `u > 0`).
    pub passing: Passing,
    /// The op's first two operands as the trace writes them (`x*y`, or a
    /// label `_7`): the rule's `u` or `a`, then `b`; fewer for a unary op.
    pub operands: Vec<String>,
}

/// One backward step: a node, its upstream gradient and what it passes on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStep {
    /// The node, its op, inputs and value.
    #[serde(flatten)]
    pub row: NodeRow,
    /// ∂output/∂node when this node is reached (all its uses already accumulated).
    pub upstream: Number,
    /// Whether the op passes no gradient (floor, ceil, round, sign, detach);
    /// serialized the other way round, as `differentiable`.
    #[serde(rename = "differentiable", serialize_with = "fields::not")]
    pub blocks_gradient: bool,
    /// One entry per input but the constants (which take gradients nobody asks
    /// for), in operand order; empty for leaves. For a call shown as one step
    /// ([`TraceStep::call`]), one entry per input of the call: its arguments,
    /// then the variables its body reads.
    pub contributions: Vec<TraceContribution>,
    /// The call of a user function this step stands for, when `:trace` shows
    /// the call as one step (its output's): the contributions' local
    /// derivatives are ∂output/∂input through the body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<TraceCall>,
}

/// A call of a user function shown as one step of `:trace`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceCall {
    /// The call's label (`neuron2`), what `--expand=` takes.
    pub label: String,
    /// The function called.
    pub function: String,
    /// The arguments, in parameter order.
    #[serde(serialize_with = "fields::ids_of")]
    pub args: Vec<NodeRef>,
    /// How many steps the call's nodes take when it is expanded.
    pub steps: usize,
}

/// Rows left out of a long listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Omitted {
    /// The rows were left out after this many rows.
    pub after: usize,
    /// How many rows were left out.
    pub count: usize,
}

/// The rows of a long listing (`:topo`, `:forward`, `:topo kahn`, `:trace`),
/// not the rows themselves: a shared handle to the output's cached order (and,
/// for `:topo kahn`, to Kahn's order) and which rows are shown. The rows are
/// made one at a time while a renderer writes them, from the session that
/// made the listing: [`Session::node_rows`], [`Session::kahn_rows`],
/// [`Session::trace_steps`]. So a listing of a million nodes costs a few
/// bytes a node, not the hundreds its rows would.
///
/// A listing is valid until its session runs the next statement (which may
/// rebind names or compact the graph); asked about later, the session gives
/// no rows.
///
/// [`Session::node_rows`]: super::Session::node_rows
/// [`Session::kahn_rows`]: super::Session::kahn_rows
/// [`Session::trace_steps`]: super::Session::trace_steps
#[derive(Clone)]
pub struct Listing {
    /// What the rows are.
    pub(super) kind: ListingKind,
    /// The output's reverse topological order, output first.
    pub(super) order: Rc<Vec<NodeId>>,
    /// The rows left out of the middle, if the listing is summarised.
    pub(super) omitted: Option<Omitted>,
    /// The number of the statement that made it ([`Listing`]'s validity).
    pub(super) statement: u64,
}

/// What a [`Listing`]'s rows are.
#[derive(Clone)]
pub(super) enum ListingKind {
    /// The order's nodes, output first (`:topo`).
    Topo,
    /// The order's nodes, inputs first (`:forward`).
    Forward,
    /// Kahn's order with each node's pending count (`:topo kahn`).
    Kahn(Rc<Vec<(NodeId, u32)>>),
    /// The backward steps of the order's nodes but the constants (`:trace`),
    /// with the calls shown as one step each, if any.
    Trace(Option<Rc<CollapsedCalls>>),
}

/// The calls of user functions a trace shows as one step each: the order
/// holds their outputs but none of their other nodes.
#[derive(Debug, Default)]
pub(super) struct CollapsedCalls {
    /// Each such call's output, with the call's inputs and ∂output/∂input.
    pub inputs: FxHashMap<NodeId, Vec<(NodeId, f64)>>,
    /// Each such call's output, with the call (an index into
    /// [`Session::calls`](super::Session::calls)) and how many steps its
    /// nodes take.
    pub calls: FxHashMap<NodeId, (usize, usize)>,
}

impl Listing {
    /// The same listing with no row left out: `:trace all`'s of the same
    /// walk.
    pub(super) fn every_row(&self) -> Listing {
        Listing {
            omitted: None,
            ..self.clone()
        }
    }

    /// Whether the row at 0-based `index` (of the rows the listing describes)
    /// is shown: all are, but those a summary leaves out.
    pub(super) fn shows(&self, index: usize) -> bool {
        self.omitted
            .is_none_or(|o| index < o.after || index >= o.after + o.count)
    }

    fn kind_name(&self) -> &'static str {
        match self.kind {
            ListingKind::Topo => "topo",
            ListingKind::Forward => "forward",
            ListingKind::Kahn(_) => "kahn",
            ListingKind::Trace(_) => "trace",
        }
    }
}

impl std::fmt::Debug for Listing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listing")
            .field("kind", &self.kind_name())
            .field("nodes", &self.order.len())
            .field("omitted", &self.omitted)
            .field("statement", &self.statement)
            .finish()
    }
}

impl PartialEq for Listing {
    /// The same rows: the same kind over the same order, made by the same statement.
    fn eq(&self, other: &Listing) -> bool {
        let same_kind = match (&self.kind, &other.kind) {
            (ListingKind::Kahn(a), ListingKind::Kahn(b)) => Rc::ptr_eq(a, b),
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        };
        same_kind
            && Rc::ptr_eq(&self.order, &other.order)
            && self.omitted == other.omitted
            && self.statement == other.statement
    }
}

/// A variable for `:vars`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VarRow {
    /// The variable's name.
    pub name: String,
    /// Its current node.
    #[serde(rename = "id", serialize_with = "fields::id")]
    pub node: NodeId,
    /// Its value.
    pub value: Number,
    /// True when it is a leaf (an input that gradients are taken for).
    pub leaf: bool,
    /// ∂output/∂name, when there is an output.
    pub grad: Option<Number>,
    /// Why `grad` is 0 when the output was built from an earlier binding of
    /// this name: "e was built from an earlier b".
    #[serde(rename = "note", skip_serializing_if = "Option::is_none")]
    pub grad_note: Option<GradNote>,
    /// The variables whose earlier binding (since rebound) this variable's value
    /// was built from, in the order they were first assigned: `c = a + b` then
    /// `b = 3` gives `["b"]` for c. Empty for a leaf.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub built_from_earlier: Vec<String>,
}

/// A user function for `:vars`: `f(x, y) = x*y + x`.
/// A variable's name and shape (`:vars --shapes`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShapeRow {
    /// The variable's name.
    pub name: String,
    /// Its shape: empty for a number, `[n]` for a vector, `[m, n]` for a
    /// matrix.
    pub shape: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionRow {
    /// The function's name.
    pub name: String,
    /// Its parameters, in order.
    pub params: Vec<String>,
    /// Its body as written (whitespace runs made one space).
    pub body: String,
}

/// The pattern of every [`Event`] that is written in a few lines: neither a
/// listing (`:topo`, `:trace`, `:graph`, `:forward`, `:kahn`, `:naive`), nor
/// a file ([`Target`]), nor a [`CalculusEvent`](super::CalculusEvent). It
/// names each variant, so a new event is a compile error in every match that
/// uses it until it is put here or handled there.
macro_rules! short_events {
    () => {
        Event::Value { .. }
            | Event::Defined { .. }
            | Event::Grad { .. }
            | Event::Warning { .. }
            | Event::Notice { .. }
            | Event::Vars { .. }
            | Event::Shapes { .. }
            | Event::Help { .. }
            | Event::Stats { .. }
            | Event::Collected { .. }
            | Event::Reset
            | Event::Quit
            | Event::Precision { .. }
            | Event::Check { .. }
            | Event::Paths { .. }
            | Event::Wrote { .. }
            | Event::Homework(_)
            | Event::Quiz(_)
    };
}
pub(crate) use short_events;

/// The pattern of every [`Event`] that carries neither rows of a
/// [`Listing`] nor a file ([`Target`]): the [`short_events`] and the two
/// listings whose rows are made at once, `:graph` and `:naive`. What a match
/// that picks out listings or files passes over.
macro_rules! plain_events {
    () => {
        $crate::session::event::short_events!() | Event::Graph { .. } | Event::Naive { .. }
    };
}
pub(crate) use plain_events;

/// The pattern of the listing events that carry the rows of a [`Listing`]
/// and no file: `:topo`, `:trace`, `:forward`, `:topo kahn`.
macro_rules! listing_events {
    () => {
        Event::Topo { .. } | Event::Trace { .. } | Event::Forward { .. } | Event::Kahn { .. }
    };
}
pub(crate) use listing_events;

/// The pattern of the listing events of scalar nodes, whose rows both
/// renderers make from the session: `:topo` and `:trace` of a number output,
/// `:forward`, `:topo kahn`. The tensor `:topo` and `:trace` are not among
/// them.
macro_rules! node_listing_events {
    () => {
        Event::Topo {
            rows: $crate::session::event::TopoRows::Nodes { .. },
            ..
        } | Event::Forward { .. }
            | Event::Kahn { .. }
            | Event::Trace {
                steps: $crate::session::event::TraceSteps::Nodes { .. },
                ..
            }
    };
}
pub(crate) use node_listing_events;

/// The pattern of the events that may name a file ([`Target`]) to write or
/// read: pictures, pages, tables, plots, `:save` and `:load`.
macro_rules! file_events {
    () => {
        Event::Picture { .. }
            | Event::Page { .. }
            | Event::TraceTable { .. }
            | Event::Plot { .. }
            | Event::Save { .. }
            | Event::Load { .. }
    };
}
pub(crate) use file_events;

/// Everything a statement or command can report.
///
/// Serialized (for `--json`, docs/json.md) as an object tagged by `kind`; the
/// variants whose JSON needs the renderer (a warning's line and column, the text
/// of a DOT picture or a table, the rows of a [`Listing`], written one at a
/// time) or that are carried out rather than shown (a file to write or read)
/// are skipped here and written by `render::json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// A statement's value, a number or a vector or matrix ([`Value`]);
    /// `name` is the assigned variable, `None` for an expression. JSON:
    /// `value`, and `shape` for a tensor.
    Value {
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(flatten)]
        value: Value,
    },
    /// A user function was defined.
    Defined { name: String, params: Vec<String> },
    /// ∂of/∂wrt, a number or, for a tensor `wrt`, of its shape; `note`
    /// explains a gradient that is 0 because the output does not reach
    /// `wrt` (as it is now).
    Grad {
        of: String,
        wrt: String,
        #[serde(flatten)]
        value: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<GradNote>,
    },
    /// Something worth knowing that is not an error: inf or nan from finite inputs.
    #[serde(skip)]
    Warning { message: String, span: Span },
    /// A one-line remark, e.g. that a constant was rebound; its words are
    /// the renderer's, its JSON has a `code` ([`Notice::code`]) and a `message`.
    #[serde(skip)]
    Notice(Notice),
    /// The reverse topological order of the output's graph (`:topo`), of
    /// a number or of a vector or matrix ([`TopoRows`]).
    #[serde(skip)]
    Topo { of: String, rows: TopoRows },
    /// Every backward step (`:trace`), of a number or of a vector or matrix
    /// ([`TraceSteps`]).
    #[serde(skip)]
    Trace { of: String, steps: TraceSteps },
    /// The variables (`:vars`); `of` names the output the gradients are of;
    /// then the user functions, in the order they were first defined.
    Vars {
        of: Option<String>,
        vars: Vec<VarRow>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        functions: Vec<FunctionRow>,
        /// The tensor variables, in the order first assigned (JSON: in
        /// `vars` after the numbers, each with its `shape`; `render::json`).
        #[serde(skip)]
        tensors: Vec<TensorVarRow>,
    },
    /// Each variable's name and shape (`:vars --shapes`): the numbers
    /// first, then the vectors and matrices. JSON: `vars`, an array of
    /// `{name, shape}` (`shape` `[]` for a number).
    Shapes {
        #[serde(rename = "vars")]
        rows: Vec<ShapeRow>,
    },
    /// Help text (`:help`).
    Help { topic: Option<String>, text: String },
    /// Memory figures (`:stats`).
    Stats(super::Stats),
    /// Unreachable nodes were reclaimed (`:gc`).
    #[serde(rename = "gc")]
    Collected(super::Reclaim),
    /// The session was cleared (`:reset`).
    Reset,
    /// The user asked to leave (`:quit`).
    Quit,
    /// Human output shows this many significant digits from now on (`:precision`);
    /// `None`: full, the shortest text that reads back as the same f64.
    Precision { digits: Option<usize> },
    /// The output's graph as a tree (`:graph`); `omitted` nodes are not drawn.
    Graph {
        of: String,
        total: usize,
        lines: Vec<GraphLine>,
        omitted: usize,
    },
    /// The forward evaluation order, inputs first (`:forward`); its rows
    /// come from [`Session::node_rows`](super::Session::node_rows).
    #[serde(skip)]
    Forward {
        of: String,
        total: usize,
        rows: Listing,
        omitted: Option<Omitted>,
    },
    /// Kahn's dependency-counting order (`:topo kahn`); `differences` counts the
    /// positions where it differs from the depth-first order. Its rows
    /// ([`KahnRow`]) come from [`Session::kahn_rows`](super::Session::kahn_rows).
    #[serde(skip)]
    Kahn {
        of: String,
        total: usize,
        rows: Listing,
        omitted: Option<Omitted>,
        differences: usize,
    },
    /// `:topo naive [all]`: backprop in the order a naive recursion visits
    /// the nodes (depth-first preorder, each node when first reached:
    /// [`Graph::naive_order`](crate::engine::Graph::naive_order)), constants
    /// left out. `rows` are those shown (`omitted` says which are not), each
    /// with the gradient the naive walk had at the node when it visited it
    /// (what it passed on to the inputs; at a leaf, what it read) beside the
    /// right gradient; `wrong` counts the nodes of all `total` where they
    /// differ; `early` is the first node visited before one of its consumers.
    Naive {
        of: String,
        total: usize,
        rows: Vec<NaiveRow>,
        omitted: Option<Omitted>,
        wrong: usize,
        early: Option<EarlyVisit>,
    },
    /// One gradient check (`:check`): ∂of/∂wrt at `at`, by reverse mode and by a
    /// central difference with step `h`; `difference` is |analytic − numeric|,
    /// `tolerance` the test the verdict rests on (for `warn` and `FAIL`, the
    /// looser one); `note` explains a gradient of 0 from an earlier binding.
    Check {
        of: String,
        wrt: String,
        at: Number,
        h: Number,
        analytic: Number,
        numeric: Number,
        relative_error: Number,
        difference: Number,
        #[serde(flatten)]
        tolerance: Tolerance,
        verdict: Verdict,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<GradNote>,
    },
    /// The paths from the output to `wrt` (`:paths`): the first ones with their
    /// products, how many there are, and the gradient (their sum).
    Paths {
        of: String,
        wrt: String,
        count: Number,
        gradient: Number,
        nodes: usize,
        paths: Vec<PathRow>,
    },
    /// The output's graph as DOT or SVG (`:dot [FILE]`, `:svg FILE`).
    #[serde(skip)]
    Picture {
        picture: Picture,
        format: PictureFormat,
        target: Option<Target>,
    },
    /// The output's graph and backward pass as one web page (`:html FILE`),
    /// for the printer to render and write.
    #[serde(skip)]
    Page {
        page: Box<Page>,
        target: Option<Target>,
    },
    /// The backward steps as a table for notes (`:trace md`, `:trace tex`):
    /// the steps of the output's `:trace`, of either kind — a number's
    /// ([`TraceSteps::Nodes`]), or a tensor's ([`TraceSteps::Tensors`]: each
    /// op's rule with shapes, then the numbers).
    #[serde(skip)]
    TraceTable {
        of: String,
        steps: TraceSteps,
        format: TableFormat,
        target: Option<Target>,
    },
    /// The output as a function of one variable, with its derivative (`:plot`).
    Plot {
        of: String,
        wrt: String,
        at: Number,
        samples: Vec<PlotSample>,
        #[serde(skip)]
        target: Option<Target>,
    },
    /// `:save FILE`: the session as a script ([`Session::script`](super::Session::script)),
    /// for the printer to write to the target (`statements` lines after the comment).
    #[serde(skip)]
    Save {
        script: String,
        statements: usize,
        target: Target,
    },
    /// `:load FILE`: the driver (src/driver.rs) reads the file and runs it into the
    /// session; the session does no IO itself.
    #[serde(skip)]
    Load { target: Target },
    /// A file was written (reported by the printer, which writes files).
    Wrote {
        path: String,
        bytes: usize,
        what: &'static str,
    },
    /// `:=`, `:repeat`, `:hessian`, `:diff` (derivatives as values,
    /// `derivatives.rs`): each serializes with its own `kind` (`updated`,
    /// `repeat`, `hessian`, `diff`), so the variant adds no tag of its own.
    #[serde(untagged)]
    Calculus(super::CalculusEvent),
    /// `:expect` (`homework.rs`): an answer checked; serializes with its
    /// own `kind` (`expect`).
    #[serde(untagged)]
    Homework(super::homework::HomeworkEvent),
    /// `:quiz` (`quiz.rs`): a question, a verdict or the score; serializes
    /// with its own `kind` (`quiz_question`, `quiz_verdict`, `quiz_score`).
    #[serde(untagged)]
    Quiz(super::quiz::QuizEvent),
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
    /// The command as typed with `-f` added before the file (`:dot -f g.dot`):
    /// what the error for an existing file suggests. Empty when unknown.
    pub forced: String,
    /// Written after the steps of a `:repeat`, which ran and are kept whether
    /// or not the file is: the error for an existing file says so, and puts
    /// `-f` after the step count.
    pub steps_kept: bool,
}

/// A number an event reports: any f64, inf and nan included. JSON writes it
/// as a number (integral values as integers, −0 as `-0.0`, others as the
/// shortest float that reads back the same) and inf, −inf and nan as the
/// strings `"inf"`, `"-inf"` and `"nan"`, which JSON has no numbers for: a
/// field of this type is never JSON's `null`, as a bare `f64` would be.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct Number(pub f64);

impl Serialize for Number {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let value = self.0;
        if value.is_nan() {
            s.serialize_str("nan")
        } else if value.is_infinite() {
            s.serialize_str(if value > 0.0 { "inf" } else { "-inf" })
        } else if value == 0.0 && value.is_sign_negative() {
            // −0 reads back as itself only with a fraction (`-0` is the integer 0
            // to most JSON readers).
            s.serialize_f64(value)
        } else if value.fract() == 0.0 && value.abs() < i64::MAX as f64 {
            // Every integral f64 below 2^63 is exactly an i64; larger ones print
            // in exponent form, which has no fraction either.
            s.serialize_i64(value as i64)
        } else {
            s.serialize_f64(value)
        }
    }
}

impl From<f64> for Number {
    fn from(value: f64) -> Number {
        Number(value)
    }
}

impl From<Number> for f64 {
    fn from(number: Number) -> f64 {
        number.0
    }
}

/// Why a gradient shown is 0, or why `:check`'s two gradients differ on
/// purpose: the `note` beside a `grad`, `check` or `vars` row, as data. The
/// renderer writes the words (`Display`, in `render::notes`); JSON's `note`
/// is that sentence.
#[derive(Debug, Clone, PartialEq)]
pub enum GradNote {
    /// No path leads from the output `of` to `wrt`: the gradient is 0.
    NotReached {
        /// The output, as outputs are named.
        of: String,
        /// The variable.
        wrt: String,
    },
    /// `of` was built from an earlier binding of `wrt`, not from the value
    /// the name holds now: the gradient is 0.
    BuiltFromEarlier {
        /// The output, as outputs are named.
        of: String,
        /// The rebound variable.
        wrt: String,
    },
    /// A path from `of` to `wrt` goes through `detach(…)`, whose gradient is
    /// 0 by definition while its value moves with `wrt`: reverse mode leaves
    /// the path out, a central difference does not.
    ThroughDetach {
        /// The output, as outputs are named.
        of: String,
        /// The variable.
        wrt: String,
    },
}

impl Serialize for GradNote {
    /// The sentence the text output shows in parentheses.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// What a `notice` says, as data: one variant per kind of remark, with the
/// names and numbers it needs. The renderer writes the words (`Display`, in
/// `render::notes`); programs match on its [`Notice::code`].
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// The output `of` depends on no variable (`:grad`, `:hessian`), or —
    /// with `checking` — nothing is left for `:check` to check.
    NoVariable {
        /// The output, as outputs are named.
        of: String,
        /// Said by `:check`: there is nothing to check.
        checking: bool,
    },
    /// The output `of` was built from an earlier binding of the variables
    /// `earlier` only: no variable as it is now feeds it.
    BuiltFromEarlier {
        /// The output, as outputs are named.
        of: String,
        /// The rebound variables whose earlier binding it was built from.
        earlier: Vec<String>,
    },
    /// `count` nodes of the listed graph, among `first`..=`last`, are the
    /// derivative graph `label` (the backward pass recorded as nodes).
    DerivativeNodes {
        /// How many of the listed nodes the derivative graph holds.
        count: usize,
        /// Its first node.
        first: NodeId,
        /// Its last node.
        last: NodeId,
        /// What it is, as typed (`grad(y, x)`).
        label: String,
    },
    /// A derivative printed without its pieces passes through `kinks` kinks
    /// (relu, max, min): it holds on the side of each taken at this point.
    ThroughKinks {
        /// How many kinks it passes through.
        kinks: usize,
    },
    /// `name` was the constant `value` and now names the user's variable.
    ConstantRebound {
        /// The constant's name (`pi`).
        name: String,
        /// Its value.
        value: f64,
    },
    /// `:check` without names checked `checked` of `total` variables.
    PartlyChecked {
        /// How many it checked.
        checked: usize,
        /// How many the output depends on.
        total: usize,
    },
    /// `:check` left out the variables `names`: ∂of/∂name is 0 because `of`
    /// was built from an earlier binding of each.
    NotChecked {
        /// The output, as outputs are named.
        of: String,
        /// The variables left out.
        names: Vec<String>,
    },
    /// A `=` in `:repeat` rebinds `name` at every step (`:=` would change
    /// it in place).
    RebindsEachStep {
        /// The variable assigned.
        name: String,
    },
    /// Piped standard input is not run beside `-e` or a FILE.
    StdinNotRead,
    /// The tensor output `of` has the shape `shape`, not `()`: its backward
    /// pass starts from ones of that shape, so the gradients are those of
    /// `sum(of)` (a vector–Jacobian product with ones, not the Jacobian).
    SeededWithOnes {
        /// The output, as outputs are named.
        of: String,
        /// Its shape as gradcalc writes it (`2`, `2×3`).
        shape: String,
    },
}

impl Notice {
    /// The kind of notice ([`NoticeCode`]).
    pub fn code(&self) -> NoticeCode {
        match self {
            Notice::NoVariable { .. } => NoticeCode::NoVariable,
            Notice::BuiltFromEarlier { .. } => NoticeCode::BuiltFromEarlier,
            Notice::DerivativeNodes { .. } => NoticeCode::DerivativeNodes,
            Notice::ThroughKinks { .. } => NoticeCode::ThroughKinks,
            Notice::ConstantRebound { .. } => NoticeCode::ConstantRebound,
            Notice::PartlyChecked { .. } => NoticeCode::PartlyChecked,
            Notice::NotChecked { .. } => NoticeCode::NotChecked,
            Notice::RebindsEachStep { .. } => NoticeCode::RebindsEachStep,
            Notice::StdinNotRead => NoticeCode::StdinNotRead,
            Notice::SeededWithOnes { .. } => NoticeCode::SeededWithOnes,
        }
    }
}

/// What kind of remark a `notice` event is, as a stable word programs can
/// match on (JSON's `code`, docs/json.md's notice codes): the message may be
/// reworded, the code is not. One per variant of [`Notice`], named alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeCode {
    /// [`Notice::NoVariable`].
    NoVariable,
    /// [`Notice::BuiltFromEarlier`].
    BuiltFromEarlier,
    /// [`Notice::DerivativeNodes`].
    DerivativeNodes,
    /// [`Notice::ThroughKinks`].
    ThroughKinks,
    /// [`Notice::ConstantRebound`].
    ConstantRebound,
    /// [`Notice::PartlyChecked`].
    PartlyChecked,
    /// [`Notice::NotChecked`].
    NotChecked,
    /// [`Notice::RebindsEachStep`].
    RebindsEachStep,
    /// [`Notice::StdinNotRead`].
    StdinNotRead,
    /// [`Notice::SeededWithOnes`].
    SeededWithOnes,
}

impl NoticeCode {
    /// Every code, in the order docs/json.md lists them.
    pub const ALL: [NoticeCode; 10] = [
        NoticeCode::NoVariable,
        NoticeCode::BuiltFromEarlier,
        NoticeCode::DerivativeNodes,
        NoticeCode::ThroughKinks,
        NoticeCode::ConstantRebound,
        NoticeCode::PartlyChecked,
        NoticeCode::NotChecked,
        NoticeCode::RebindsEachStep,
        NoticeCode::StdinNotRead,
        NoticeCode::SeededWithOnes,
    ];

    /// The code as JSON writes it (`constant-rebound`).
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeCode::NoVariable => "no-variable",
            NoticeCode::BuiltFromEarlier => "built-from-earlier",
            NoticeCode::DerivativeNodes => "derivative-nodes",
            NoticeCode::ThroughKinks => "through-kinks",
            NoticeCode::ConstantRebound => "constant-rebound",
            NoticeCode::PartlyChecked => "partly-checked",
            NoticeCode::NotChecked => "not-checked",
            NoticeCode::RebindsEachStep => "rebinds-each-step",
            NoticeCode::StdinNotRead => "stdin-not-read",
            NoticeCode::SeededWithOnes => "seeded-with-ones",
        }
    }
}

impl Event {
    /// The rows of a listing event (`:topo`, `:forward`, `:topo kahn`,
    /// `:trace`, `:trace md|tex`), if it is one.
    pub fn listing(&self) -> Option<&Listing> {
        match self {
            Event::Topo {
                rows: TopoRows::Nodes { rows, .. },
                ..
            }
            | Event::Forward { rows, .. }
            | Event::Kahn { rows, .. } => Some(rows),
            Event::Trace {
                steps: TraceSteps::Nodes { steps, .. },
                ..
            }
            | Event::TraceTable {
                steps: TraceSteps::Nodes { steps, .. },
                ..
            } => Some(steps),
            Event::Topo {
                rows: TopoRows::Tensors { .. },
                ..
            }
            | Event::Trace {
                steps: TraceSteps::Tensors { .. },
                ..
            }
            | Event::TraceTable {
                steps: TraceSteps::Tensors { .. },
                ..
            } => None,
            // A page's steps are made with it (its step model holds them).
            plain_events!()
            | Event::Page { .. }
            | Event::Picture { .. }
            | Event::Plot { .. }
            | Event::Save { .. }
            | Event::Load { .. }
            | Event::Calculus { .. } => None,
        }
    }

    /// The file an event asks to write or read, if any.
    pub fn target_mut(&mut self) -> Option<&mut Target> {
        match self {
            Event::Picture { target, .. }
            | Event::Page { target, .. }
            | Event::TraceTable { target, .. }
            | Event::Plot { target, .. } => target.as_mut(),
            Event::Save { target, .. } | Event::Load { target } => Some(target),
            // A `:repeat`'s plot file is settled where the repeat runs.
            Event::Calculus { .. } => None,
            plain_events!() | listing_events!() => None,
        }
    }
}

impl Target {
    /// The target a command's file argument names: the word as typed, without the
    /// double quotes around it if it has them (`"my file.calc"`). `force` and
    /// `steps_kept` are false, `forced` empty.
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
            forced: String::new(),
            steps_kept: false,
        }
    }
}

/// One line of `:graph`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum GraphLine {
    /// A node, indented by `depth` (the output is at depth 0). `shown_above` is
    /// true when the node was already drawn (fan-out): it is referenced, not
    /// drawn again.
    Node {
        #[serde(flatten)]
        row: NodeRow,
        depth: usize,
        grad: Number,
        shown_above: bool,
    },
    /// `count` inputs at `depth` left out (a wide node, or too deep to draw).
    More {
        depth: usize,
        #[serde(rename = "more")]
        count: usize,
    },
}

/// One node of `:topo kahn`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KahnRow {
    /// The node (its position is its place in Kahn's order).
    #[serde(flatten)]
    pub row: NodeRow,
    /// How many uses of the node wait to be processed before it is ready.
    pub pending: u32,
    /// Its 1-based position in the depth-first order of `:topo`.
    pub dfs_position: usize,
}

/// One node of `:topo naive`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NaiveRow {
    /// The node (its position is its place in the naive visit order).
    #[serde(flatten)]
    pub row: NodeRow,
    /// ∂output/∂node as the naive walk had it when it visited the node.
    pub naive: Number,
    /// ∂output/∂node, by the reverse topological order.
    pub right: Number,
}

/// The first node a naive walk visits too early: at `position` (1-based),
/// before its consumer `consumer` at `consumer_position` has passed it its
/// gradient. Labels as the user types them (`b`, `_3`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EarlyVisit {
    pub node: String,
    pub position: usize,
    pub consumer: String,
    pub consumer_position: usize,
    /// The node is a leaf: the walk read its gradient (else passed it on).
    pub leaf: bool,
    /// Its gradient at the visit, and the right one.
    pub naive: Number,
    pub right: Number,
}

/// The test of a gradient check, as `torch.autograd.gradcheck` makes it (through
/// `torch.allclose`): the check passes when
/// |analytic − numeric| ≤ `atol` + `rtol`·|numeric|. An absolute part is needed:
/// where the true gradient is 0 a central difference gives a tiny nonzero
/// number, and a purely relative error between 0 and 1e-10 is 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tolerance {
    /// The absolute part.
    pub atol: Number,
    /// The part relative to |numeric|.
    pub rtol: Number,
}

impl Tolerance {
    /// `atol + rtol·|numeric|`: the largest difference this tolerance admits.
    pub fn bound(self, numeric: f64) -> f64 {
        self.atol.0 + self.rtol.0 * numeric.abs()
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
    atol: Number(1e-8),
    rtol: Number(1e-5),
};

/// `torch.autograd.gradcheck`'s default tolerance (`atol=1e-05, rtol=0.001`,
/// designed for double precision; PyTorch's documentation of
/// `torch.autograd.gradcheck.gradcheck`). `:check` says `warn` between
/// [`CHECK_TOLERANCE`] and this, and `FAIL` beyond it: where gradcheck would fail.
pub const GRADCHECK_TOLERANCE: Tolerance = Tolerance {
    atol: Number(1e-5),
    rtol: Number(1e-3),
};

/// The verdict of one gradient check; serialized in lower case (`pass`, `warn`,
/// `fail`, `kink`, `not finite`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
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
    #[serde(rename = "not finite")]
    NotFinite,
    /// The difference quotient changes, when the step is halved, by more than
    /// the difference it would be judged by: the function varies faster than
    /// the doubles next to x can resolve (sin(x) at 1e20, where doubles are
    /// 16384 apart), so a central difference measures nothing there.
    Unsteady,
}

impl Verdict {
    /// `pass`, `warn`, `FAIL`, `kink`, `not finite`, `unsteady`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::Fail => "FAIL",
            Verdict::Kink => "kink",
            Verdict::NotFinite => "not finite",
            Verdict::Unsteady => "unsteady",
        }
    }
}

/// One edge of a path of `:paths`: a node, the input the path goes down to, and
/// the local derivative between them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathEdge {
    /// The consumer.
    #[serde(serialize_with = "fields::id_of")]
    pub node: NodeRef,
    /// The input the path continues with.
    #[serde(serialize_with = "fields::id_of")]
    pub input: NodeRef,
    /// This local derivative as the trace writes it: the partial by the
    /// operands and the rule filled in with them (`∂(b*a)/∂a = b`, whose right
    /// side typed back gives `local`); the partial alone where the op passes
    /// nothing.
    pub formula: String,
    /// ∂node/∂input.
    pub local: Number,
    /// True where the op passes nothing to this input (relu at u ≤ 0, floor,
    /// a `max` loser, …): the path then contributes 0 whatever the other
    /// factors are (selected, not multiplied, so `inf` elsewhere gives no nan).
    pub passes_nothing: bool,
    /// Which use of `input` by `node` this edge is (1-based) and how many
    /// there are (`x*x` uses `x` twice: two paths that read alike).
    #[serde(skip)]
    pub use_number: u32,
    #[serde(skip)]
    pub use_count: u32,
}

/// One path of `:paths`, from the output down to the node asked about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathRow {
    /// The product of their local derivatives.
    pub product: Number,
    /// The edges, output first.
    pub edges: Vec<PathEdge>,
}

/// A node of a picture (`:dot`, `:svg`).
#[derive(Debug, Clone, PartialEq)]
pub struct PictureNode {
    /// The node.
    pub node: NodeRef,
    /// The op (its row of the op table says how it is written).
    pub op: Op,
    /// The forward value.
    pub value: f64,
    /// ∂output/∂node.
    pub grad: f64,
    /// The gradient as the picture shows it: final in the finished picture;
    /// at a step of the backward pass (`--before`, `--step K`), its state
    /// in the [`StepModel`] (blank, the sum so far at a
    /// fan-out, or final, with `before → after` at the step that changed it).
    pub state: GradState,
    /// Every state the gradient takes over the backward pass but blank: the
    /// box is made wide enough for each, so all steps share one layout.
    pub states: Vec<GradState>,
    /// The node the backward pass has just processed (`--step K`): drawn highlighted.
    pub current: bool,
    /// The [`Picture::groups`] entry the node is drawn in, if any.
    pub group: Option<usize>,
    /// The innermost call of a user function that built the node (an index
    /// into [`Picture::calls`]); `None` for a node built at top level.
    pub call: Option<usize>,
    /// The node is a call's output drawn as the whole call, one box (an
    /// index into [`Picture::calls`]): its edges come from the call's inputs,
    /// labelled with ∂output/∂input through the body.
    pub boxed: Option<usize>,
}

/// A call of a user function among a picture's nodes (see [`Session::calls`](super::Session::calls)).
#[derive(Debug, Clone, PartialEq)]
pub struct PictureCall {
    /// The call's label (`h3`).
    pub label: String,
    /// The function called.
    pub function: String,
    /// The call as written, its arguments by their labels (`h(a, 3)`): the
    /// name of its output's box when no variable names it.
    pub written: String,
    /// How many arguments it takes: its first inputs (the variables its body
    /// reads come after, drawn as edges only).
    pub args: usize,
    /// The call whose body made this one (an index into [`Picture::calls`]).
    pub parent: Option<usize>,
    /// The node the call returned.
    pub output: Option<NodeId>,
    /// Drawn as one box ([`PictureNode::boxed`]) rather than node by node.
    pub boxed: bool,
}

/// Which way a picture's edges run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    /// Left to right when that fits a 1920×1080 slide, else top to bottom
    /// when that fits one, else the way a slide shows larger when its text
    /// is 16 px or more there, else left to right when at most a slide
    /// wide, else the narrower way (docs/pictures.md).
    #[default]
    Auto,
    /// Left to right (`--lr`), as micrograd's `draw_dot`.
    LeftToRight,
    /// Top to bottom (`--tb`).
    TopToBottom,
    /// The direction, and the bands a long chain is wrapped into, that a
    /// screen of this width and height (pixels) shows largest whole
    /// (`--fit 1920x1080`, docs/pictures.md).
    Fit(u32, u32),
}

/// A labelled group of a picture's nodes: the nodes one `grad(y, x)` or
/// `f'(a)` built (the backward pass recorded as nodes), or the forward pass
/// of the value such a derivative was taken of, drawn beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct PictureGroup {
    /// `grad(y, x)`, `f'(…)`, or `forward pass of y`.
    pub label: String,
    /// True for the nodes of a derivative graph, false for a forward pass.
    pub derivative: bool,
}

/// Which moment of the backward pass a picture shows (`:svg FILE --step K`).
#[derive(Debug, Clone, PartialEq)]
pub struct PictureStep {
    /// The step just done, numbered as `:trace` numbers them (the nodes of the
    /// reverse topological order but the constants, from 1); 0 before the
    /// backward pass.
    pub number: usize,
    /// The last step's number: how many steps `:trace` shows.
    pub last: usize,
    /// The node of every step, step 1 first: the title of each step is
    /// given room, so all steps share one canvas.
    pub nodes: Vec<NodeRef>,
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
    /// Nodes in reverse topological order: the forward-pass nodes drawn
    /// beside the output's graph (see [`PictureGroup`]) first, then the
    /// output's graph, output first.
    pub nodes: Vec<PictureNode>,
    /// Edges, in the order of `nodes` and operand order.
    pub edges: Vec<PictureEdge>,
    /// A moment of the backward pass (`--before`, `--step K`, `--steps`), or
    /// `None` for the finished one.
    pub step: Option<PictureStep>,
    /// The labelled groups that [`PictureNode::group`] points into.
    pub groups: Vec<PictureGroup>,
    /// The calls that [`PictureNode::call`] and [`PictureNode::boxed`] point into.
    pub calls: Vec<PictureCall>,
    /// Which way the edges run.
    pub direction: Direction,
    /// The graph of a tensor output, drawn instead of `nodes` and `edges`
    /// (which are then empty): a box per tensor node with its name, shape,
    /// values and gradient ([`super::TensorPicture`]).
    pub tensor: Option<Box<super::TensorPicture>>,
}

/// What `:html` and `:serve` show: the output's finished picture and the
/// backward pass to step through.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The finished picture (every gradient filled in; the page blanks the
    /// pending ones while it steps), each call of a user function drawn as
    /// one box where it can be.
    pub picture: Picture,
    /// The same with every call drawn node by node, when `picture` boxes any:
    /// the page switches between the two (calls collapsed or expanded).
    pub expanded: Option<Picture>,
    /// The backward pass to step (the steps of `:trace all`, calls one step
    /// each as in `picture`), or why it cannot be stepped (a derivative
    /// graph: `:trace` refuses it too).
    pub steps: Result<StepModel, String>,
    /// The backward pass of a tensor output (whose `picture` is a tensor
    /// picture and whose `steps` then say there are no scalar steps): the
    /// page steps this instead.
    pub tensor: Option<Box<StepModel<crate::engine::tensor::TensorId>>>,
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PlotSample {
    /// The variable's value.
    pub x: Number,
    /// The output's value there.
    pub value: Number,
    /// ∂output/∂variable there.
    pub grad: Number,
}

/// How the fields of events are serialized where the derive's default is not
/// what docs/json.md says: node ids, ops by their table name, file targets (numbers
/// are [`Number`] values).
pub mod fields {
    use serde::Serializer;
    use serde::ser::SerializeMap;

    use super::NodeRef;
    use crate::engine::{NodeId, Op};

    /// The path of an optional file target, or `null`.
    pub fn target_path<S: Serializer>(
        target: &Option<super::Target>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match target {
            Some(target) => s.serialize_str(&target.path),
            None => s.serialize_none(),
        }
    }

    /// A node id as its number.
    pub fn id<S: Serializer>(id: &NodeId, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(id.0)
    }

    /// A node by its id only.
    pub fn id_of<S: Serializer>(node: &NodeRef, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(node.id.0)
    }

    /// Nodes by their ids.
    pub fn ids_of<S: Serializer>(nodes: &[NodeRef], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(nodes.iter().map(|node| node.id.0))
    }

    /// The input of a trace contribution: `input` (its id) and `input_name`.
    pub fn input<S: Serializer>(node: &NodeRef, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("input", &node.id.0)?;
        map.serialize_entry("input_name", &node.name)?;
        map.end()
    }

    /// An op by its name in the op table (`*`, `tanh`, `leaf`, `const`).
    pub fn op<S: Serializer>(op: &Op, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(op.info().name)
    }

    /// Whether an optional value is there.
    pub fn is_some<T, S: Serializer>(value: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(value.is_some())
    }

    /// A flag the other way round (`blocks_gradient` as `differentiable`).
    pub fn not<S: Serializer>(value: &bool, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(!*value)
    }
}

/// A vector's or matrix's numbers as shown: its shape (`[]`, `[n]`, `[m,
/// n]`) and its elements, row-major. JSON writes `shape` and `value`, the
/// elements nested as the shape says (`[[1, 2], [3, 4]]`, numpy's
/// `tolist()`; a number for shape `()`).
///
/// A value of more than [`TensorData::FULL_NUMBERS`] elements is kept
/// summarised (unless [`set_full_values`] asked for every number): `data`
/// then holds only the first and last [`TensorData::EDGE_ITEMS`] of each
/// axis (row-major over those), `summarised` is true, and JSON writes
/// `value` as `null` with the kept numbers under `edges` (docs/json.md), so
/// that no surface copies or writes more than it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorData {
    /// The sizes of its axes: none for `()`, one for a vector, two for a matrix.
    pub shape: Vec<usize>,
    /// The elements, row-major (only the kept ones when `summarised`).
    pub data: Vec<Number>,
    /// True when `data` holds only the ends of each axis (read them with
    /// [`TensorData::element`]).
    pub summarised: bool,
}

/// Whether values past [`TensorData::FULL_NUMBERS`] are kept whole
/// (`--json-full`).
static FULL_VALUES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Keeps every number of every value from now on in this process (`true`,
/// `--json-full`), or summarises those past [`TensorData::FULL_NUMBERS`]
/// (`false`, the default).
pub fn set_full_values(full: bool) {
    FULL_VALUES.store(full, std::sync::atomic::Ordering::Relaxed);
}

/// The indices of an axis of `n` a summary keeps: all of them up to
/// 2·[`TensorData::EDGE_ITEMS`], else the first and last of them.
fn kept(n: usize) -> impl Iterator<Item = usize> {
    let edge = TensorData::EDGE_ITEMS;
    let (head, tail) = if n <= 2 * edge {
        (0..n, n..n)
    } else {
        (0..edge, n - edge..n)
    };
    head.chain(tail)
}

/// Where index `k` of an axis of `n` is among the kept ones, if kept.
fn kept_position(k: usize, n: usize) -> Option<usize> {
    let edge = TensorData::EDGE_ITEMS;
    if n <= 2 * edge || k < edge {
        (k < n).then_some(k)
    } else if k >= n - edge && k < n {
        Some(k - (n - edge) + edge)
    } else {
        None
    }
}

impl TensorData {
    /// Past this many elements a value is kept summarised: 2²⁰ (8 MB of
    /// float64, some 20 MB of JSON).
    pub const FULL_NUMBERS: usize = 1 << 20;

    /// How many elements of each end of an axis a summary keeps (numpy's
    /// `edgeitems`).
    pub const EDGE_ITEMS: usize = 3;

    /// The value of `shape` (`[]`, `[n]` or `[m, n]`) whose elements are
    /// `data` (row-major), summarised past [`TensorData::FULL_NUMBERS`]
    /// unless [`set_full_values`] asked for every number. Copies only what
    /// it keeps.
    pub fn of(shape: &[usize], data: &[f64]) -> TensorData {
        let full = FULL_VALUES.load(std::sync::atomic::Ordering::Relaxed);
        if full || data.len() <= TensorData::FULL_NUMBERS {
            return TensorData {
                shape: shape.to_vec(),
                data: data.iter().copied().map(Number).collect(),
                summarised: false,
            };
        }
        let kept_data = match shape {
            [_, columns] => kept(data.len() / columns)
                .flat_map(|r| kept(*columns).map(move |c| Number(data[r * columns + c])))
                .collect(),
            _ => kept(data.len()).map(|k| Number(data[k])).collect(),
        };
        TensorData {
            shape: shape.to_vec(),
            data: kept_data,
            summarised: true,
        }
    }

    /// The element at `index` (row-major, in the whole shape), or `None`
    /// where a summary left it out (or past the end).
    pub fn element(&self, index: usize) -> Option<Number> {
        if !self.summarised {
            return self.data.get(index).copied();
        }
        match self.shape[..] {
            [rows, columns] if columns > 0 => {
                let r = kept_position(index / columns, rows)?;
                let c = kept_position(index % columns, columns)?;
                let width = kept(columns).count();
                self.data.get(r * width + c).copied()
            }
            [n] => self.data.get(kept_position(index, n)?).copied(),
            _ => self.data.get(index).copied(),
        }
    }

    /// The number of elements of its shape (of the whole value, summarised or not).
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// True when its shape has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shape as gradcalc writes it: `()`, `3`, `2×3`.
    pub fn shape_text(&self) -> String {
        match self.shape[..] {
            [] => "()".to_string(),
            [n] => n.to_string(),
            _ => self
                .shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join("×"),
        }
    }

    /// The rows of a matrix (one row for a vector or a scalar); an empty
    /// matrix (m×0 or 0×n) has none, so that `zeros(4294967295, 0)`
    /// allocates nothing.
    pub fn rows(&self) -> Vec<&[Number]> {
        match self.shape[..] {
            [_, 0] | [0, _] => Vec::new(),
            [_, n] => self.data.chunks(n).collect(),
            _ => vec![&self.data[..]],
        }
    }
}

/// A tensor's elements nested as its shape says (a number for `()`); an
/// empty tensor (a size 0 on any axis) is `[]`, whatever its shape.
struct NestedValue<'a>(&'a TensorData);

impl Serialize for NestedValue<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.shape[..] {
            [] => self
                .0
                .data
                .first()
                .copied()
                .unwrap_or_default()
                .serialize(s),
            [_] => s.collect_seq(until_interrupted(self.0.data.iter(), 1)),
            _ if self.0.data.is_empty() => s.collect_seq(&self.0.data),
            [_, columns] => s.collect_seq(until_interrupted(self.0.rows().into_iter(), columns)),
            _ => s.collect_seq(self.0.rows()),
        }
    }
}

/// `items` (each of `size` numbers) until Ctrl-C ([`crate::interrupt`]),
/// looked at once every [`crate::interrupt::EVERY`] numbers: after it the
/// array ends early, so that writing a large value (`--json-full`) stops
/// within milliseconds and its line stays valid JSON, with fewer numbers
/// than its shape says; the `interrupted` error follows (docs/json.md).
fn until_interrupted<T>(items: impl Iterator<Item = T>, size: usize) -> impl Iterator<Item = T> {
    let mut since = 0;
    items.take_while(move |_| {
        since += size.max(1);
        if since < crate::interrupt::EVERY as usize {
            return true;
        }
        since = 0;
        !crate::interrupt::requested()
    })
}

impl Serialize for TensorData {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        if self.summarised {
            // `value` null, the kept ends under `edges`, nested as `value` would be.
            let mut out = s.serialize_struct("TensorData", 3)?;
            out.serialize_field("shape", &self.shape)?;
            out.serialize_field("value", &())?;
            out.serialize_field("edges", &Edges(self))?;
            return out.end();
        }
        let mut out = s.serialize_struct("TensorData", 2)?;
        out.serialize_field("shape", &self.shape)?;
        out.serialize_field("value", &NestedValue(self))?;
        out.end()
    }
}

/// The rows of `:topo`: the scalar graph's nodes, or a tensor output's.
#[derive(Debug, Clone, PartialEq)]
pub enum TopoRows {
    /// The nodes of a number's graph: `total` of them, the rows shown
    /// ([`NodeRow`], made by [`Session::node_rows`](super::Session::node_rows)),
    /// `omitted` when a long order is summarised.
    Nodes {
        total: usize,
        rows: Listing,
        omitted: Option<Omitted>,
    },
    /// The tensor nodes of a vector, matrix or shape-`()` output, output
    /// first, with their shapes; `shape` is the output's.
    Tensors {
        shape: Vec<usize>,
        rows: Vec<super::TensorTopoRow>,
    },
}

/// The steps of `:trace`: the scalar graph's nodes, or each tensor op of a
/// tensor output as its matrix rule with shapes, then the numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceSteps {
    /// `total` counts the nodes a trace shows (every node but the
    /// constants, numbered 1 to `total`); `constants` the constants it
    /// leaves out. The steps ([`TraceStep`]) come from
    /// [`Session::trace_steps`](super::Session::trace_steps).
    Nodes {
        total: usize,
        constants: usize,
        steps: Listing,
        omitted: Option<Omitted>,
    },
    /// A vector, matrix or shape-`()` output (`shape`): `legend` says what
    /// each short name (`t39`) in the steps stands for, a node whose
    /// expression is too long to write in every line.
    Tensors {
        shape: Vec<usize>,
        legend: Vec<TensorName>,
        steps: Vec<TensorTraceStep>,
    },
}

/// A value as every event carries it: a number of the scalar graph, or a
/// vector, matrix or shape-`()` value of the tensor graph. JSON (flattened
/// into its event or row): `value` (a number, or the elements nested as the
/// shape says), and `shape` for a tensor only (`[]` for shape `()`), so one
/// reader takes both.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A number of the scalar graph.
    Number(Number),
    /// A tensor's numbers with its shape.
    Tensor(TensorData),
}

impl Value {
    /// The number, if this is one (a tensor of shape `()` included).
    pub fn number(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(n.0),
            Value::Tensor(t) if t.shape.is_empty() => t.data.first().map(|n| n.0),
            Value::Tensor(_) => None,
        }
    }
}

impl From<Number> for Value {
    fn from(number: Number) -> Value {
        Value::Number(number)
    }
}

impl From<f64> for Value {
    fn from(number: f64) -> Value {
        Value::Number(Number(number))
    }
}

impl Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        match self {
            Value::Number(n) => {
                let mut out = s.serialize_struct("Value", 1)?;
                out.serialize_field("value", n)?;
                out.end()
            }
            Value::Tensor(t) => t.serialize(s),
        }
    }
}

/// The numbers a summarised value keeps, nested as its shape says: the
/// first and last [`TensorData::EDGE_ITEMS`] of each axis.
struct Edges<'a>(&'a TensorData);

impl Serialize for Edges<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.shape[..] {
            [_, columns] => {
                let width = kept(columns).count();
                s.collect_seq(self.0.data.chunks(width.max(1)))
            }
            _ => s.collect_seq(&self.0.data),
        }
    }
}

/// A short name of a tensor node in a tensor trace ([`TraceSteps::Tensors`]) and what it
/// computes, over its operands' names (`t39 = t32 + b`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorName {
    /// The short name (`t39`).
    pub name: String,
    /// What the node computes, over its operands' names.
    pub computes: String,
}

/// One step of a tensor trace ([`TraceSteps::Tensors`]): a tensor node, its upstream gradient,
/// and what each operand receives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorTraceStep {
    /// The step's number, from 1.
    pub step: usize,
    /// The node as named (`h`, `W @ x`).
    pub node: String,
    /// Its op, as written (`@`, `tanh`, `sum`).
    pub op: String,
    /// The node's gradient ∂L/∂node when the walk reaches it.
    pub upstream: TensorData,
    /// One per operand.
    pub contributions: Vec<TensorTraceContribution>,
    /// The call of a user function the step stands for, when it is one
    /// step (`:trace` unless `--expand=CALL`); its contributions are then
    /// what the body passes to the nodes outside it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<TensorTraceCall>,
}

/// A call of a user function on tensors shown as one step of a tensor
/// `:trace` ([`TensorTraceStep::call`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorTraceCall {
    /// The call's label (`layer1`), what `--expand=` takes.
    pub label: String,
    /// The function called (`layer`).
    pub function: String,
    /// The arguments as the step names them (a node's label, or the text
    /// of a number typed in the call), in parameter order.
    pub args: Vec<String>,
    /// How many steps the call's nodes take when it is expanded.
    pub steps: usize,
}

/// What one operand receives in a [`TensorTraceStep`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorTraceContribution {
    /// The operand as named.
    pub input: String,
    /// The matrix rule as gradcalc input: `outer(upstream, x)`, `Wᵀ @ upstream`, `upstream ⊙ (1 − tanh(u)^2)`.
    pub rule: String,
    /// The shapes the rule takes and gives: `outer((2), (3)) → 2×3`.
    pub shapes: String,
    /// What the operand receives, of its shape.
    pub value: TensorData,
    /// Which use of the operand this is and how many there are, when more
    /// than one (fan-out: the contributions add up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uses: Option<(u32, u32)>,
    /// At the second and later use of a fan-out operand: its gradient so
    /// far, this use's contribution added (as a scalar trace's `grad 3 → 5`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub so_far: Option<TensorData>,
    /// With `--expand=NODE` at this node: the scalar view, each element's
    /// chain rule (empty otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub elements: Vec<ElementChain>,
}

/// One element's chain rule in the scalar view of a tensor step
/// (`:trace --expand=NODE`): `∂L/∂W[i, j] = Σ upstream × local`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ElementChain {
    /// The element, as `W[0, 1]`.
    pub element: String,
    /// One per output element that depends on it: `{output, upstream, local}`.
    pub terms: Vec<ElementTermRow>,
    /// Their sum: the element of the contribution.
    pub value: Number,
}

/// One term of an [`ElementChain`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ElementTermRow {
    /// The node's element it goes through, as `h[1]`.
    pub output: String,
    /// ∂L/∂ that element.
    pub upstream: Number,
    /// ∂ that element/∂ the operand's element.
    pub local: Number,
}

/// One tensor variable of `:vars`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorVarRow {
    /// The variable's name.
    pub name: String,
    /// True when it is a leaf (an input that gradients are taken for).
    pub leaf: bool,
    /// Its value, with its shape.
    #[serde(flatten)]
    pub value: TensorData,
    /// ∂output/∂ it, of its shape, when the output is a tensor of shape `()`
    /// that reaches it (JSON `grad`, nested as `value`; absent otherwise).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "nested_grad"
    )]
    pub grad: Option<TensorData>,
}

/// A tensor variable's gradient in JSON: its numbers nested as its `value`.
fn nested_grad<S: serde::Serializer>(
    grad: &Option<TensorData>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match grad {
        Some(data) => serde::Serialize::serialize(&NestedValue(data), serializer),
        None => serializer.serialize_none(),
    }
}
