//! A gradcalc session: names bound to graph nodes, user functions, the current
//! output, and the statements and commands that change them. Every statement
//! returns [`Event`]s (or a [`SessionError`]); nothing here prints.
//!
//! Semantics (docs/language.md §6): evaluation is eager; an assignment whose right
//! side uses no variable makes a new leaf; the output is the result of the most
//! recent statement, except that a leaf assignment leaves it as it was;
//! gradients are recomputed for every query.

mod args;
mod boxes;
mod calls;
mod check;
mod checkpoint;
mod command;
mod derivative_cache;
mod derivatives;
mod descent;
mod diff;
pub mod error;
mod eval;
pub mod event;
mod exports;
mod formula;
mod gradients;
mod help;
mod hints;
pub mod homework;
mod listings;
mod literal;
mod memory;
mod params;
mod paths;
mod preview;
mod probe;
pub mod quiz;
mod script;
pub mod steps;
mod tensor_derivatives;
mod tensor_rules;
mod tensor_steps;
mod tensor_trace;
mod tensors;
mod undo;
mod update;

use std::collections::HashMap;

use rustc_hash::FxHashMap;
use std::ops::ControlFlow;
use std::rc::Rc;

pub use calls::Call;
pub use command::find as find_command;
pub use command::{Arg, COMMANDS, CommandSpec, InRepl, Param, Traits, next_args};
pub use derivatives::{CalculusEvent, Change, RepeatRow};
pub use diff::{DiffPart, DiffPiece};
pub use error::{ErrorCode, SessionError};
pub use event::{
    CHECK_TOLERANCE, Direction, EarlyVisit, Event, FunctionRow, GRADCHECK_TOLERANCE, GradNote,
    GraphLine, KahnRow, Listing, NaiveRow, NodeRef, NodeRow, NothingPassed, Notice, NoticeCode,
    Number, Omitted, Page, PathEdge, PathRow, Picture, PictureCall, PictureEdge, PictureFormat,
    PictureGroup, PictureNode, PictureStep, PlotSample, ShapeRow, TableFormat, Target, TensorData,
    TensorName, TensorTraceCall, TensorTraceContribution, TensorTraceStep, TensorVarRow, Tolerance,
    TopoRows, TraceCall, TraceContribution, TraceStep, TraceSteps, Value, VarRow, Verdict,
    label_id, node_label, set_full_values,
};
pub use formula::nothing_where;
pub use memory::{GC_MIN_NODES, Reclaim, Stats};
pub use steps::{GradMark, GradState, Marks, OutputStepModel, StepModel, StepNode};
pub use tensor_steps::{TensorPicture, TensorPictureEdge, TensorPictureNode, TensorTopoRow};
pub use tensors::builtin_names;

use crate::engine::{Graph, NodeId, Op};
use crate::syntax::{self, Span, Statement};
use eval::Rhs;

/// The predefined constants. They are ordinary names: assigning one rebinds it.
pub const CONSTANTS: &[(&str, f64)] = &[
    ("pi", std::f64::consts::PI),
    ("π", std::f64::consts::PI),
    ("tau", std::f64::consts::TAU),
    ("τ", std::f64::consts::TAU),
    ("e", std::f64::consts::E),
    ("inf", f64::INFINITY),
    ("nan", f64::NAN),
];

/// The most characters of a quoted command (a quote starting with `:`, such as
/// the `:repeat 3 -f r.svg …` a help suggests): it is shown whole up to this
/// length, so that it can be typed as shown.
pub const COMMAND_QUOTE_CHARS: usize = 200;

/// The variables: each name once, in the order first assigned, bound to a
/// node of either graph.
type Names = indexmap::IndexMap<String, Node, rustc_hash::FxBuildHasher>;

/// A node of the session's values: a node of the scalar graph (a number) or
/// of the tensor graph (a vector, a matrix, or a tensor of shape `()`).
/// What a name, the output and `ans` are bound to: one name table for both
/// kinds, the arenas kept apart below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Node {
    /// A node of the scalar graph.
    Scalar(NodeId),
    /// A node of the tensor graph.
    Tensor(crate::engine::tensor::TensorId),
}

impl Node {
    /// The scalar node, if this is one.
    fn scalar(self) -> Option<NodeId> {
        match self {
            Node::Scalar(id) => Some(id),
            Node::Tensor(_) => None,
        }
    }

    /// The node renumbered by `get` when it is a scalar one (after a
    /// collection of the scalar graph); a tensor node as it is.
    fn remap(self, get: impl FnOnce(NodeId) -> NodeId) -> Node {
        match self {
            Node::Scalar(id) => Node::Scalar(get(id)),
            tensor @ Node::Tensor(_) => tensor,
        }
    }

    /// The tensor node, if this is one.
    fn tensor(self) -> Option<crate::engine::tensor::TensorId> {
        match self {
            Node::Tensor(id) => Some(id),
            Node::Scalar(_) => None,
        }
    }
}

/// The function `grad(y, x)` (`grad(L, W)` of tensors): a call of it builds
/// the derivative's graph, unless a user function takes the name.
const GRAD_FUNCTION: &str = "grad";

/// Names that always mean the most recent result.
const RESULT_NAMES: [&str; 2] = ["ans", "_"];

/// A user function `f(x, y) = body`.
#[derive(Debug, Clone)]
struct UserFunction {
    params: Vec<String>,
    body: syntax::ExprTree,
    /// The body as the user wrote it, whitespace runs made one space (for
    /// `:help f` and `:vars`).
    text: String,
}

/// What `:grad` differentiates: a node (of either graph, [`Node`]; a
/// scalar command takes its [`NodeId`] with [`Session::scalar_output`]) and
/// the label it is shown with (`z`, `x*x`).
#[derive(Debug, Clone)]
struct Output<N = Node> {
    node: N,
    label: String,
}

/// One interactive or batch session.
#[derive(Debug, Default)]
pub struct Session {
    graph: Graph,
    /// Current binding of each variable, in the order the names were first
    /// assigned (for `:vars` and `:grad`): each name is held once.
    vars: Names,
    /// Earlier bindings of each variable, oldest first (to explain a gradient of 0).
    earlier: FxHashMap<String, Vec<Node>>,
    functions: FxHashMap<String, UserFunction>,
    function_order: Vec<String>,
    output: Option<Output>,
    /// The most recent statement's node: `ans` and `_`.
    last: Option<Node>,
    /// The reverse topological order of the last output asked about. Nodes never
    /// change once appended, so an output's order stays valid until `:reset`
    /// (a collection remaps it).
    order_cache: Option<(NodeId, Rc<Vec<NodeId>>)>,
    /// The nodes one statement may build through calls; `None` is
    /// [`eval::MAX_CALL_NODES`]. The live preview lowers it (`preview.rs`).
    call_node_limit: Option<usize>,
    /// The calls of user functions and the labels of the nodes they built.
    calls: calls::Calls,
    /// The runs of nodes `grad(y, x)` and `f'(a)` appended, for `:trace`.
    derivative_groups: Vec<derivatives::DerivativeGroup>,
    /// `f'(a)`, `f''(a)`, … as built at their first call, copied by the next.
    derivative_cache: derivative_cache::DerivativeCache,
    /// Source text of the statements that built this state, for `:save` (script.rs).
    statements: script::StatementLog,
    /// Collections and sort counts (`memory.rs`).
    memory: memory::Memory,
    /// Counts the evaluation's steps between looks at Ctrl-C's flag.
    poll: crate::interrupt::Poll,
    /// How many statements have started: a [`Listing`] is valid until the
    /// next one.
    statement: u64,
    /// In the REPL: asked whether to replace an existing file before work
    /// that would end in writing it (`:repeat N FILE.svg`).
    pub confirm: AskReplace,
    /// That question was cancelled (Ctrl-C or Ctrl-D) since the last
    /// [`Session::take_cancelled`].
    cancelled: bool,
    /// What the running statement has changed, undone if it fails (`undo.rs`).
    journal: undo::Journal,
    /// Vectors and matrices: their graph, generator and undo journal (`tensors.rs`).
    tensors: tensors::Tensors,
    /// The running command's text and where it starts in its source, for
    /// a command that reads its line whole (`:expect`, `homework.rs`).
    command_text: (usize, String),
    /// Where files may be written (the command line's `--allow-writes…`):
    /// checked, with [`Session::from_script`], before work whose result goes
    /// to a file (`:repeat N FILE.svg`), so that a file that cannot be
    /// written is refused before anything changes.
    pub writes: crate::files::WritePolicy,
    /// The running statement comes from a script (a file, piped input, `-e`),
    /// which writes only where [`Session::writes`] allows.
    pub from_script: bool,
    /// The `:quiz` running, if any: the statements given are its answers
    /// (`quiz.rs`).
    quiz: Option<quiz::Quiz>,
}

/// The answer to "replace it? [y/N]".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Replace the file.
    Yes,
    /// Keep it (any answer but y or yes).
    No,
    /// Ctrl-C or Ctrl-D at the question: keep the file and run nothing more
    /// of the input.
    Cancelled,
}

/// Asked, in the REPL, whether to replace an existing file (the path as shown).
pub type Confirm = Box<dyn FnMut(&str) -> Answer>;

/// The REPL's question "replace it? [y/N]" (the path as shown), if any.
#[derive(Default)]
pub struct AskReplace(pub Option<Confirm>);

impl std::fmt::Debug for AskReplace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::engine::debug_holder(f, "AskReplace", self.0.as_ref().map(|_| "asks"))
    }
}

impl Session {
    /// An empty session: no variables, no functions, no output. Its graph's
    /// long loops poll Ctrl-C ([`crate::interrupt::CtrlC`], given to the
    /// engine with `Graph::set_interrupt`).
    /// True once if a question whether to replace a file was cancelled
    /// (Ctrl-C or Ctrl-D): nothing more of the input should run.
    pub fn take_cancelled(&mut self) -> bool {
        std::mem::take(&mut self.cancelled)
    }

    pub fn new() -> Session {
        let mut session = Session::default();
        session
            .graph
            .set_interrupt(std::sync::Arc::new(crate::interrupt::CtrlC));
        session
            .tensors
            .graph
            .set_interrupt(std::sync::Arc::new(crate::interrupt::CtrlC));
        session
    }

    /// The computation graph built so far.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The node a variable is bound to now, if it exists.
    pub fn variable(&self, name: &str) -> Option<NodeId> {
        self.scalar_var(name)
    }

    /// The scalar node the variable `name` is bound to, if it names a number.
    fn scalar_var(&self, name: &str) -> Option<NodeId> {
        self.vars.get(name).and_then(|node| node.scalar())
    }

    /// The tensor node the variable `name` is bound to, if it names a tensor.
    fn shaped_var(&self, name: &str) -> Option<crate::engine::tensor::TensorId> {
        self.vars.get(name).and_then(|node| node.tensor())
    }

    /// The variables bound to numbers, in the order first assigned.
    fn scalar_vars(&self) -> impl Iterator<Item = (&String, NodeId)> {
        self.vars
            .iter()
            .filter_map(|(name, node)| Some((name, node.scalar()?)))
    }

    /// The variables bound to tensors, in the order first assigned.
    fn shaped_vars(&self) -> impl Iterator<Item = (&String, crate::engine::tensor::TensorId)> {
        self.vars
            .iter()
            .filter_map(|(name, node)| Some((name, node.tensor()?)))
    }

    /// The output when it is a number (a scalar command's).
    fn scalar_output(&self) -> Option<Output<NodeId>> {
        let output = self.output.as_ref()?;
        Some(Output {
            node: output.node.scalar()?,
            label: output.label.clone(),
        })
    }

    /// The output when it is a tensor.
    fn shaped_output(&self) -> Option<Output<crate::engine::tensor::TensorId>> {
        let output = self.output.as_ref()?;
        Some(Output {
            node: output.node.tensor()?,
            label: output.label.clone(),
        })
    }

    /// `ans` when it is a number.
    fn scalar_last(&self) -> Option<NodeId> {
        self.last.and_then(Node::scalar)
    }

    /// The names of the variables bound to numbers (nodes of
    /// [`Session::graph`]), in the order they were first assigned; those
    /// bound to vectors and matrices are [`Session::tensor_variables`].
    pub fn variable_names(&self) -> impl Iterator<Item = &str> {
        self.scalar_vars().map(|(name, _)| name.as_str())
    }

    /// User function names, in the order they were defined.
    pub fn function_names(&self) -> impl Iterator<Item = &str> {
        self.function_order.iter().map(String::as_str)
    }

    /// Runs every statement of `source` in order. `sink` receives each statement's
    /// events or error and decides whether to go on; running also stops after `:quit`.
    /// Returns `Break` when it stopped early (by `sink` or by `:quit`).
    pub fn run_source(
        &mut self,
        source: &str,
        mut sink: impl FnMut(Result<Vec<Event>, SessionError>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.run_source_with(source, |_, result| sink(result))
    }

    /// [`Session::run_source`], giving `sink` the session too, as it is after
    /// the statement: what a listing's rows are made from while its events are
    /// rendered ([`Listing`]), e.g. by the printer's `report`.
    pub fn run_source_with(
        &mut self,
        source: &str,
        mut sink: impl FnMut(&Session, Result<Vec<Event>, SessionError>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for (span, parsed) in syntax::Statements::new(source) {
            let result = self.run_parsed(source, span, parsed);
            let quit = matches!(&result, Ok(events) if events.contains(&Event::Quit));
            sink(self, result)?;
            if quit {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    /// Parses and runs the one statement at `span` of `source`.
    ///
    /// Errors: any [`SessionError`]; spans in it point into `source`.
    ///
    /// A statement that fails changes nothing: the session is put back as it
    /// was before it (the nodes it appended removed, its bindings, output,
    /// `ans`, moved leaves and statement log undone; `undo.rs`). Ctrl-C while
    /// it runs ([`crate::interrupt`]) gives [`SessionError::Interrupted`] at
    /// the statement, undone in the same way. `:repeat` and `:descend` are the
    /// exception to Ctrl-C: they stop and keep the steps they finished, as
    /// documented in docs/repl.md.
    pub fn run_statement(&mut self, source: &str, span: Span) -> Result<Vec<Event>, SessionError> {
        self.run_parsed(source, span, syntax::parse_statement(source, span))
    }

    /// Runs the statement at `span` of `source` that has already been parsed
    /// into `parsed` (what [`syntax::parse_statement`] gives for it, e.g. from
    /// [`syntax::Statements`]). When it fails (Ctrl-C included:
    /// [`SessionError::Interrupted`]) it puts the session back as it was
    /// before the statement.
    ///
    /// Errors: any [`SessionError`]; spans in it point into `source`.
    pub fn run_parsed(
        &mut self,
        source: &str,
        span: Span,
        mut parsed: Result<syntax::Located, syntax::SyntaxError>,
    ) -> Result<Vec<Event>, SessionError> {
        // While a `:quiz` runs, a statement is its answer (`quiz.rs`).
        match self.quiz_input(source, span) {
            Some(quiz::QuizTake::Answered(events)) => return Ok(events),
            Some(quiz::QuizTake::Ended(score)) => {
                return self.run_parsed(source, span, parsed).map(|mut events| {
                    events.insert(0, *score);
                    events
                });
            }
            None => {}
        }
        self.statement += 1;
        self.begin_statement();
        let mut rest = parsed.as_mut().ok().and_then(|located| located.rest.take());
        if rest.is_some() && self.may_touch_tensor(&source[span.start..span.end]) {
            // A long sum of tensors (`L = v + v + …` past 64 KiB) is one
            // tensor statement: parsed whole, it is evaluated as shorter ones are.
            let whole = syntax::parse_statement(source, span);
            if whole
                .as_ref()
                .is_ok_and(|located| self.statement_touches_tensor(&located.statement))
            {
                parsed = whole;
                rest = None;
            }
        }
        let mut result = self
            .run_located(source, parsed, rest.as_ref())
            .map_err(|error| hints::power_of_function(source, error))
            .map_err(|error| hints::numpy_transpose(source, error));
        if let (Err(error), Some(pieces)) = (&result, &rest)
            && !error.is_interrupted()
            && !pieces.parse_from(source, 0)
        {
            // A long sum run a piece at a time failed, and a piece does not
            // parse: a whole parse reports that error (before evaluating
            // anything), at its place. Undo the pieces' work and do that.
            self.undo_statement();
            self.begin_statement();
            result = self.run_located(source, syntax::parse_statement(source, span), None);
        }
        if result.is_err() {
            // A refused statement changes nothing (`undo.rs`).
            self.undo_statement();
        }
        if result.as_ref().is_err_and(SessionError::is_interrupted) {
            let text = &source[span.start..span.end];
            let lead = text.len() - text.trim_start().len();
            let span = Span::new(span.start + lead, span.start + text.trim_end().len());
            return Err(SessionError::Interrupted { span });
        }
        result
    }

    /// Puts the session back to a graph of `len` nodes and a statement log of
    /// `statements` entries: the nodes and log entries of a statement undone
    /// (a failed one, `undo.rs`, or one cut short in a `:repeat` step, the
    /// steps before it kept).
    fn undo_past(&mut self, len: usize, statements: usize) {
        if self.graph.len() > len {
            self.graph.truncate(len);
            self.forget_groups_past(len);
        }
        if self
            .order_cache
            .as_ref()
            .is_some_and(|(node, _)| node.index() >= len)
        {
            self.order_cache = None;
        }
        self.statements.truncate(statements);
    }

    /// [`SessionError::Interrupted`] if Ctrl-C was pressed: called after every
    /// engine call whose result may be incomplete, and before a statement
    /// changes a binding. Its span is set by [`Session::run_parsed`].
    fn check_interrupt(&self) -> Result<(), SessionError> {
        if crate::interrupt::requested() {
            return Err(SessionError::Interrupted {
                span: Span::default(),
            });
        }
        Ok(())
    }

    /// [`Session::run_parsed`] without the undo after Ctrl-C; `rest` is the
    /// parse's [`syntax::Located::rest`], taken out of it.
    fn run_located(
        &mut self,
        source: &str,
        parsed: Result<syntax::Located, syntax::SyntaxError>,
        rest: Option<&syntax::Pieces>,
    ) -> Result<Vec<Event>, SessionError> {
        let mut located = parsed.map_err(|error| self.explain_syntax_error(source, error))?;
        if let Some(command) = self.bare_command(&located.statement) {
            located.statement = command;
        }
        let mut events = Vec::new();
        let mut record = script::builds_state(&located.statement).then_some(located.span);
        let rest = rest.map(|pieces| (pieces, source));
        let tensor_statement = match &located.statement {
            Statement::Expr(tree) => rest.is_none() && self.touches_tensor(tree),
            Statement::Assign { target, op, value } => {
                rest.is_none()
                    && (self.touches_tensor(value)
                        || *op != syntax::AssignOp::Set && self.is_tensor(&target.name))
            }
            Statement::Updates { targets, values } => {
                targets.iter().any(|t| self.is_tensor(&t.name))
                    || values.iter().any(|v| self.touches_tensor(v))
            }
            _ => false,
        };
        match located.statement {
            Statement::Updates { targets, values } if tensor_statement => {
                self.update_tensors(&targets, &values, &mut events)?;
            }
            Statement::Expr(tree) if tensor_statement => {
                let text = source[tree.span().start..tree.span().end].trim();
                self.expression_of_tensors(&tree, output_label(text), &mut events)?;
            }
            Statement::Assign { target, op, value } if tensor_statement => {
                self.assign_of_tensors(&target, op, &value, &mut events)?;
            }
            Statement::Expr(tree) => {
                let (value, span) = self.evaluate_value(&Rhs { tree: &tree, rest }, &mut events)?;
                self.check_interrupt()?;
                if rest.is_some() {
                    record = record.map(|whole| Span::new(whole.start, span.end));
                }
                let label = output_label(source[span.start..span.end].trim());
                self.output = Some(Output {
                    node: Node::Scalar(value.node),
                    label,
                });
                self.last = Some(Node::Scalar(value.node));
                events.push(Event::Value {
                    name: None,
                    value: Number(self.graph.value(value.node)).into(),
                });
            }
            Statement::Assign { target, op, value } => {
                let span = self.assign(&target, op, &Rhs { tree: &value, rest }, &mut events)?;
                if rest.is_some() {
                    record = record.map(|whole| Span::new(whole.start, span.end));
                }
            }
            Statement::Updates { targets, values } => {
                self.update_together(&targets, &values, &mut events)?;
            }
            Statement::Define { name, params, body } => {
                let text = source[body.span().start..body.span().end]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                self.define(&name, &params, body, text, &mut events)?;
            }
            Statement::Command { name, args } => {
                let span = located.span;
                self.command_text = (span.start, source[span.start..span.end].to_string());
                self.command(&name, &args, &mut events)?;
            }
            Statement::Repeat(repeat) => {
                events = self.repeat_statement(source, located.span, &repeat)?;
            }
        }
        if let Some(span) = record {
            self.record(&source[span.start..span.end]);
        }
        self.end_statement();
        // Not under a listing still to be written: it names nodes by their ids.
        if !events.iter().any(|event| event.listing().is_some()) {
            self.collect_if_due();
        }
        Ok(events)
    }

    /// `help`, `quit` or `exit` alone as a statement, as numbat, fend and qalc
    /// read them: the command `:help` / `:quit`, unless a variable has that name.
    fn bare_command(&self, statement: &Statement) -> Option<Statement> {
        let Statement::Expr(tree) = statement else {
            return None;
        };
        let [node] = &tree.nodes[..] else {
            return None;
        };
        match &node.kind {
            syntax::ExprKind::Name(name)
                if command::find_bare(name).is_some() && !self.vars.contains_key(name.as_str()) =>
            {
                Some(Statement::Command {
                    name: syntax::Ident {
                        name: name.to_string(),
                        span: node.span(),
                    },
                    args: Vec::new(),
                })
            }
            _ => None,
        }
    }

    /// Turns "two names side by side" after a function name (`sin x`, `sin 1`)
    /// into the fix the user needs: parentheses, not `*`.
    fn explain_syntax_error(&self, source: &str, error: syntax::SyntaxError) -> SessionError {
        // MATLAB's transpose `W'` of a vector or matrix W.
        if let syntax::SyntaxError::Unexpected {
            span,
            expected,
            found,
            help: Some(_),
        } = &error
            && found == "`'`"
            && let Some(name) = source.get(..span.start).and_then(hints::operand_name)
            && self.is_tensor(name)
        {
            return SessionError::Syntax(syntax::SyntaxError::Unexpected {
                span: *span,
                expected: expected.clone(),
                found: found.clone(),
                help: Some(hints::matlab_transpose_help(name)),
            });
        }
        let is_function = |name: &str| {
            Op::from_function_name(name).is_some() || self.functions.contains_key(name)
        };
        let (name, name_start, argument_span) = match &error {
            // `sin^2(x)`: a function's power, not a product after an exponent.
            syntax::SyntaxError::ImplicitAfterExponent { span, text, .. } => {
                let name = text.split(['^', '*']).next().unwrap_or("").trim_end();
                if !is_function(name) {
                    return SessionError::Syntax(error);
                }
                let as_value = SessionError::FunctionAsValue {
                    name: name.to_string(),
                    span: Span::new(span.start, span.start + name.len()),
                    call: None,
                };
                return match hints::power_of_function(source, as_value) {
                    called @ SessionError::FunctionAsValue { call: Some(_), .. } => called,
                    _ => SessionError::Syntax(error),
                };
            }
            syntax::SyntaxError::AdjacentNames { span, left, .. } => {
                let start = span.start;
                let after_name = start + left.len();
                let argument = source[after_name..span.end].trim_start();
                (
                    left.clone(),
                    start,
                    Span::new(span.end - argument.len(), span.end),
                )
            }
            syntax::SyntaxError::Unexpected { span, .. } if span.end > span.start => {
                let before = source[..span.start].trim_end();
                let name: String = before
                    .chars()
                    .rev()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                (name.clone(), before.len() - name.len(), *span)
            }
            _ => return SessionError::Syntax(error),
        };
        if name.is_empty() || !is_function(&name) {
            return SessionError::Syntax(error);
        }
        let power = hints::power_after(source, argument_span.end);
        let end = power.as_ref().map_or(argument_span.end, |(_, end)| *end);
        SessionError::CallWithoutParentheses {
            name,
            argument: source[argument_span.start..argument_span.end].to_string(),
            span: Span::new(name_start, end),
            power: power.map(|(text, _)| text),
        }
    }

    /// Why ∂output/∂`name` is 0 when the output's graph (`reached`, from
    /// `backprop`) holds an earlier binding of `name` but not its current one:
    /// "e was built from an earlier b". `None` otherwise.
    fn stale_note(
        &self,
        output: &Output<NodeId>,
        name: &str,
        reached: &[bool],
    ) -> Option<GradNote> {
        let in_graph = |id: NodeId| reached.get(id.index()) == Some(&true);
        let current = self.scalar_var(name)?;
        let earlier = self.earlier.get(name)?;
        (!in_graph(current) && earlier.iter().filter_map(|n| n.scalar()).any(in_graph)).then(|| {
            GradNote::BuiltFromEarlier {
                of: output.label.clone(),
                wrt: name.to_string(),
            }
        })
    }

    /// For each variable (in `vars`' order), the variables whose earlier binding its
    /// value was built from (see [`VarRow::built_from_earlier`]); empty for
    /// leaves. One pass over the nodes up to the last derived variable: inputs
    /// have smaller ids than their consumers, so marks flow forward by id.
    fn built_from_earlier(&self) -> Vec<Vec<String>> {
        let scalars: Vec<(&String, NodeId)> = self.scalar_vars().collect();
        let mut result = vec![Vec::new(); scalars.len()];
        let earlier_scalars = |name: &String| {
            self.earlier
                .get(name)
                .into_iter()
                .flatten()
                .filter_map(|old| old.scalar())
        };
        let rebound: Vec<(&String, NodeId)> = scalars
            .iter()
            .copied()
            .filter(|(name, _)| earlier_scalars(name).next().is_some())
            .collect();
        let derived = |node: NodeId| (self.graph.op(node) != Op::Variable).then_some(node);
        let Some(last) = scalars.iter().filter_map(|&(_, node)| derived(node)).max() else {
            return result;
        };
        if rebound.is_empty() {
            return result;
        }
        // One bit per rebound name; past 63 names, the last bit stands for the rest.
        let mut marks = vec![0u64; last.index() + 1];
        for (k, &(name, current)) in rebound.iter().enumerate() {
            for old in earlier_scalars(name) {
                if old != current && old <= last {
                    marks[old.index()] |= 1 << k.min(63);
                }
            }
        }
        for i in 0..marks.len() {
            let inputs = self.graph.operands(NodeId(i as u32));
            marks[i] |= inputs.iter().fold(0, |m, input| m | marks[input.index()]);
        }
        for (row, &(_, node)) in result.iter_mut().zip(&scalars) {
            let Some(node) = derived(node) else { continue };
            let mark = marks[node.index()];
            for (k, (rebound_name, _)) in rebound.iter().enumerate().take(63) {
                if mark & (1 << k) != 0 {
                    row.push(rebound_name.to_string());
                }
            }
            if mark & (1 << 63) != 0 {
                row.push(if rebound.len() == 64 {
                    rebound[63].0.to_string()
                } else {
                    "others".to_string()
                });
            }
        }
        result
    }

    /// Forgets everything: variables, functions, output and graph.
    fn reset(&mut self) {
        // The statement count goes on: listings made before stay invalid.
        let statement = self.statement;
        let budget = self.tensors.graph.budget();
        *self = Session::new();
        self.statement = statement;
        if budget != crate::engine::tensor::DEFAULT_BUDGET {
            self.set_tensor_budget(budget);
        }
    }

    /// The reverse topological order of `output`, computed once and then reused.
    fn order_for(&mut self, output: NodeId) -> Rc<Vec<NodeId>> {
        if let Some((node, order)) = &self.order_cache
            && *node == output
        {
            return Rc::clone(order);
        }
        let order = Rc::new(self.graph.topo_order(output));
        if crate::interrupt::requested() {
            return order; // cut short: not kept (the statement fails)
        }
        self.memory.sorts += 1;
        self.order_cache = Some((output, Rc::clone(&order)));
        order
    }

    /// A node as outputs refer to it, given the reverse map of variable names.
    fn node_ref(&self, id: NodeId, names: &HashMap<NodeId, &str>) -> NodeRef {
        let constant = (self.graph.op(id) == Op::Const).then(|| self.graph.value(id));
        // A constant read from a predefined name (`e`, `pi`) keeps it.
        let named = constant
            .and_then(|value| formula::constant_name(value, |name| self.vars.contains_key(name)));
        NodeRef {
            id,
            name: names.get(&id).copied().or(named).map(str::to_string),
            constant,
        }
    }

    /// Which name each node is shown with now: its variable (the
    /// first-assigned name wins), else its call label (`h3.relu`, see
    /// [`Call`]).
    fn names_by_node(&self) -> HashMap<NodeId, &str> {
        let mut map = HashMap::new();
        for (name, node) in self.scalar_vars() {
            map.entry(node).or_insert(name.as_str());
        }
        for (node, label) in self.calls.labels() {
            map.entry(node).or_insert(label);
        }
        map
    }

    /// The calls of user functions, in the order they began: which function,
    /// which call of it (`h3`), its argument and output nodes, and the call
    /// that made it. Indices into this slice are what [`Session::call_of`]
    /// returns.
    pub fn calls(&self) -> &[Call] {
        self.calls.list()
    }

    /// The innermost call whose body built `node` (an index into
    /// [`Session::calls`]); `None` for a node built at top level, a leaf, or
    /// a constant. Walk [`Call::parent`] for the calls around it.
    pub fn call_of(&self, node: NodeId) -> Option<usize> {
        self.calls.call_of(node)
    }

    /// Whether `node` was built by call `call` or by a call inside it.
    pub fn within_call(&self, node: NodeId, call: usize) -> bool {
        self.calls.within(node, call)
    }

    /// Describes one node for `:topo` and `:trace`.
    fn node_row(&self, position: usize, id: NodeId, names: &HashMap<NodeId, &str>) -> NodeRow {
        NodeRow {
            position,
            node: self.node_ref(id, names),
            op: self.graph.op(id),
            inputs: self
                .graph
                .operands(id)
                .iter()
                .map(|&input| self.node_ref(input, names))
                .collect(),
            value: Number(self.graph.value(id)),
        }
    }
}

/// The label an expression statement's value is shown with as the output:
/// its text when short and on one line, else `ans`.
fn output_label(text: &str) -> String {
    if text.chars().count() <= 32 && !text.contains('\n') {
        text.to_string()
    } else {
        "ans".to_string()
    }
}

/// The longest name (in characters) that gets a "did you mean" suggestion.
const MAX_SUGGESTED_NAME: usize = 64;

/// The name closest to `name` among `candidates`, for "did you mean", if it is close.
///
/// Close means a Damerau-Levenshtein distance (a swap of two letters is one edit)
/// of at most 1 for names of up to 4 characters and at most 2 for longer ones, or a
/// difference in case only: `tnah` → `tanh`, `sinn` → `sin`, `tanhh` → `tanh`, but
/// not `bad` → `tau` (two edits in three letters is another word).
///
/// Names longer than [`MAX_SUGGESTED_NAME`] characters get no suggestion: the edit
/// distance costs time and memory proportional to the product of the two lengths.
fn nearest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let length = name.chars().count();
    if length > MAX_SUGGESTED_NAME {
        return None;
    }
    let limit = if length <= 4 { 1 } else { 2 };
    let mut best: Option<((usize, usize), &str)> = None;
    for candidate in candidates {
        if candidate == name || candidate.len() > 4 * (MAX_SUGGESTED_NAME + 2) {
            continue;
        }
        // Case differences count as small; a swap of two letters (`tnah`) is one edit.
        let distance = if name.to_lowercase() == candidate.to_lowercase() {
            0
        } else if candidate.chars().count().abs_diff(length) > limit {
            continue; // at least that many insertions or deletions
        } else {
            strsim::damerau_levenshtein(name, candidate)
        };
        // Ties go to the candidate of the same length: `tahn` is `tanh` with two
        // letters swapped before it is `tan` with one added.
        let rank = (distance, candidate.chars().count().abs_diff(length));
        if distance <= limit && distance < length && best.is_none_or(|(r, _)| rank < r) {
            best = Some((rank, candidate));
        }
    }
    best.map(|(_, c)| c.to_string())
}
