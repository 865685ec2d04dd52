//! The teaching commands: `:graph`, `:forward`, `:topo kahn`, `:check`, `:paths`,
//! `:dot`, `:svg`, `:trace md|tex` and `:plot`. Each builds its answer from the
//! same graph and returns events; files are written by the printer, not here.

use std::collections::HashMap;

use super::command::Command;
use super::commands::summarise;
use super::{
    CHECK_TOLERANCE, Event, GRADCHECK_TOLERANCE, GraphLine, KahnRow, PathEdge, PathRow, Picture,
    PictureEdge, PictureFormat, PictureNode, PictureStep, PlotSample, Session, SessionError,
    TableFormat, Target, Verdict,
};
use crate::engine::{NodeId, Op};
use crate::syntax::{Ident, Span};

/// `:graph` draws at most this many lines,
const GRAPH_LINES: usize = 60;
/// this many inputs of one node,
const GRAPH_WIDTH: usize = 8;
/// and this many levels below the output.
const GRAPH_DEPTH: usize = 24;
/// `:paths` lists at most this many paths.
const PATH_LIMIT: usize = 64;
/// and at most this many edges in all (paths through long chains are long).
const PATH_EDGES: usize = 4096;
/// `:dot` and `:svg` draw graphs of at most this many nodes.
const PICTURE_NODES: usize = 500;
/// `:plot` evaluates the output at this many points.
const PLOT_SAMPLES: usize = 241;

/// `:check` without names checks at most this many leaves.
pub(super) const CHECK_LEAVES: usize = 1000;
/// `:check`'s step is this fraction of the value (at least of 1)
const CHECK_STEP: f64 = 1e-5;
/// and at most this much.
const CHECK_STEP_MAX: f64 = 1e-3;

impl Session {
    /// `:graph`: the output's graph as an indented tree, output first; a node
    /// used twice is drawn once and then referenced.
    pub(super) fn graph_tree(
        &mut self,
        span: Span,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let output = self.require_output(span)?;
        let order = self.order_for(output.node);
        let (gradients, _) = self.backprop(&output, span)?;
        let names = self.names_by_node();
        let position: HashMap<NodeId, usize> = order
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, i + 1))
            .collect();
        enum Entry {
            Node(NodeId, usize),
            More(usize, usize),
        }
        let mut shown = vec![false; self.graph.len()];
        let mut distinct = 0;
        let mut lines = Vec::new();
        let mut stack = vec![Entry::Node(output.node, 0)];
        while let Some(entry) = stack.pop() {
            if lines.len() >= GRAPH_LINES {
                break;
            }
            let (id, depth) = match entry {
                Entry::More(depth, count) => {
                    lines.push(GraphLine::More { depth, count });
                    continue;
                }
                Entry::Node(id, depth) => (id, depth),
            };
            let shown_above = shown[id.index()];
            let row = self.node_row(position[&id], id, &names);
            lines.push(GraphLine::Node {
                depth,
                row,
                grad: gradients[id],
                shown_above,
            });
            if shown_above {
                continue;
            }
            shown[id.index()] = true;
            distinct += 1;
            let inputs = self.graph.operands(id);
            if inputs.is_empty() {
                continue;
            }
            if depth + 1 > GRAPH_DEPTH {
                stack.push(Entry::More(depth + 1, inputs.len()));
                continue;
            }
            let drawn = inputs.len().min(GRAPH_WIDTH);
            if inputs.len() > drawn {
                stack.push(Entry::More(depth + 1, inputs.len() - drawn));
            }
            for &input in inputs[..drawn].iter().rev() {
                stack.push(Entry::Node(input, depth + 1));
            }
        }
        events.push(Event::Graph {
            of: output.label,
            total: order.len(),
            lines,
            omitted: order.len() - distinct,
        });
        Ok(())
    }

    /// `:forward [all]`: the forward evaluation order, inputs first.
    pub(super) fn forward_order(
        &mut self,
        span: Span,
        all: bool,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let output = self.require_output(span)?;
        let order = self.order_for(output.node);
        let names = self.names_by_node();
        let total = order.len();
        let (shown, omitted) = summarise(total, all);
        let rows = shown
            .map(|i| self.node_row(i + 1, order[total - 1 - i], &names))
            .collect();
        events.push(Event::Forward {
            of: output.label,
            total,
            rows,
            omitted,
        });
        Ok(())
    }

    /// `:topo kahn [all]`: Kahn's order with each node's pending-consumer count.
    pub(super) fn topo_kahn(
        &mut self,
        span: Span,
        all: bool,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let output = self.require_output(span)?;
        let order = self.order_for(output.node);
        let kahn = self.graph.kahn_order(&order);
        let dfs_position: HashMap<NodeId, usize> = order
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, i + 1))
            .collect();
        let differences = kahn
            .iter()
            .zip(order.iter())
            .filter(|((a, _), b)| a != *b)
            .count();
        let names = self.names_by_node();
        let (shown, omitted) = summarise(kahn.len(), all);
        let rows = shown
            .map(|i| {
                let (id, pending) = kahn[i];
                KahnRow {
                    row: self.node_row(i + 1, id, &names),
                    pending,
                    dfs_position: dfs_position[&id],
                }
            })
            .collect();
        events.push(Event::Kahn {
            of: output.label,
            total: order.len(),
            rows,
            omitted,
            differences,
        });
        Ok(())
    }

    /// `:check [NAMES]`: each gradient by reverse mode against a central difference
    /// on the graph itself (the output's subgraph evaluated again with one node
    /// moved by ±h; nothing is parsed again and the graph is not changed). With
    /// no names: the leaves the output depends on, the first [`CHECK_LEAVES`].
    ///
    /// Each move re-evaluates only the moved node's descendants ([`Downstream`]),
    /// so a variable that feeds few nodes costs little however large the graph.
    ///
    /// [`Downstream`]: crate::engine::Downstream
    pub(super) fn check(
        &mut self,
        span: Span,
        args: &[Ident],
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let output = self.require_output(span)?;
        let (gradients, reached) = self.backprop(&output, span)?;
        let mut targets: Vec<(String, NodeId)> = Vec::new();
        for arg in args {
            let node = self.variable_node(arg)?;
            if targets.iter().all(|(name, _)| *name != arg.name) {
                targets.push((arg.name.clone(), node));
            }
        }
        let mut left_out = 0;
        if args.is_empty() {
            let leaves = self
                .var_order
                .iter()
                .map(|name| (name.clone(), self.vars[name]))
                .filter(|(name, node)| {
                    reached[node.index()]
                        && self.graph.op(*node) == Op::Variable
                        && *name != output.label
                });
            for leaf in leaves {
                if targets.len() < CHECK_LEAVES {
                    targets.push(leaf);
                } else {
                    left_out += 1;
                }
            }
            let stale: Vec<String> = self
                .var_order
                .iter()
                .filter_map(|name| {
                    let note = self.stale_note(&output, name, &reached)?;
                    Some(format!("∂{}/∂{name} = 0 ({note})", output.label))
                })
                .collect();
            if !stale.is_empty() {
                events.push(Event::Notice {
                    message: format!("not checked: {}", stale.join("; ")),
                });
            }
            if targets.is_empty() {
                events.push(Event::Notice {
                    message: format!("{} depends on no variable: nothing to check", output.label),
                });
            }
        }
        let order = self.order_for(output.node);
        let mut downstream = self.graph.downstream(&order);
        let base: Vec<f64> = (0..self.graph.len())
            .map(|i| self.graph.value(NodeId(i as u32)))
            .collect();
        let (mut minus, mut plus) = (base.clone(), base.clone());
        let out = output.node.index();
        for (name, node) in targets.iter().cloned() {
            self.check_interrupt()?;
            let x = self.graph.value(node);
            let h = check_step(x);
            let (low, high) = (x - h, x + h);
            // Only the nodes that depend on this one change; the moved node is first.
            let moved = downstream.descendants(node);
            minus[node.index()] = low;
            plus[node.index()] = high;
            self.graph.forward_over(&moved[1..], &mut minus);
            self.graph.forward_over(&moved[1..], &mut plus);
            // Divide by the step actually taken (x ± h rounded).
            let numeric = (plus[out] - minus[out]) / (high - low);
            let kink = self
                .graph
                .crosses_kink(&moved[1..], [&minus[..], &base[..], &plus[..]]);
            for id in &moved {
                minus[id.index()] = base[id.index()];
                plus[id.index()] = base[id.index()];
            }
            let analytic = gradients[node];
            let difference = (analytic - numeric).abs();
            let relative_error = if analytic == numeric {
                0.0
            } else {
                difference / analytic.abs().max(numeric.abs())
            };
            let (verdict, tolerance) = if !analytic.is_finite() || !numeric.is_finite() {
                (Verdict::NotFinite, CHECK_TOLERANCE)
            } else if kink {
                (Verdict::Kink, CHECK_TOLERANCE)
            } else if CHECK_TOLERANCE.admits(difference, numeric) {
                (Verdict::Pass, CHECK_TOLERANCE)
            } else if GRADCHECK_TOLERANCE.admits(difference, numeric) {
                (Verdict::Warn, GRADCHECK_TOLERANCE)
            } else {
                (Verdict::Fail, GRADCHECK_TOLERANCE)
            };
            events.push(Event::Check {
                of: output.label.clone(),
                note: self.stale_note(&output, &name, &reached),
                wrt: name,
                at: x,
                h,
                analytic,
                numeric,
                relative_error,
                difference,
                tolerance,
                verdict,
            });
        }
        if left_out > 0 {
            events.push(Event::Notice {
                message: format!(
                    "checked {} of {} variables; `:check NAMES` checks others",
                    targets.len(),
                    targets.len() + left_out
                ),
            });
        }
        Ok(())
    }

    /// `:paths NAME`: every path from the output to NAME with the product of the
    /// local derivatives along it; their sum is the gradient.
    pub(super) fn paths(
        &mut self,
        span: Span,
        target: &Ident,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let output = self.require_output(span)?;
        let node = self.variable_node(target)?;
        let (gradients, _) = self.backprop(&output, span)?;
        let order = self.order_for(output.node);
        let found = self.graph.paths(&order, node, PATH_LIMIT, PATH_EDGES);
        let names = self.names_by_node();
        let paths = found
            .paths
            .iter()
            .map(|path| {
                let edges: Vec<PathEdge> = path
                    .iter()
                    .map(|&(consumer, position)| {
                        let input = self.graph.operands(consumer)[position];
                        PathEdge {
                            node: self.node_ref(consumer, &names),
                            input: self.node_ref(input, &names),
                            formula: self.graph.op(consumer).info().formula(position),
                            local: self.local_derivative(consumer, position),
                            passes_nothing: !self.passes(consumer, position),
                        }
                    })
                    .collect();
                // The chain rule along the path, with the backward pass's
                // selection: an edge that passes nothing makes the path 0.
                let product = if edges.iter().any(|e| e.passes_nothing) {
                    0.0
                } else {
                    edges.iter().map(|e| e.local).product()
                };
                PathRow { edges, product }
            })
            .collect();
        events.push(Event::Paths {
            of: output.label,
            wrt: target.name.clone(),
            paths,
            count: found.count,
            gradient: gradients[node],
            nodes: order.len(),
        });
        Ok(())
    }

    /// Whether `node` passes gradient to its input at `position` at the stored
    /// values ([`crate::engine::OpInfo::passes`]).
    fn passes(&self, node: NodeId, position: usize) -> bool {
        let values: Vec<f64> = self
            .graph
            .operands(node)
            .iter()
            .map(|&i| self.graph.value(i))
            .collect();
        self.graph
            .op(node)
            .info()
            .passes(&values, self.graph.value(node), position)
    }

    /// ∂node/∂(its input at `position`) at the stored values.
    fn local_derivative(&self, node: NodeId, position: usize) -> f64 {
        let values: Vec<f64> = self
            .graph
            .operands(node)
            .iter()
            .map(|&i| self.graph.value(i))
            .collect();
        (self.graph.op(node).info().local)(&values, self.graph.value(node), position)
    }

    /// `:dot [FILE]` and `:svg FILE`: the output's graph with values, gradients
    /// and local derivatives, for the printer to render and write. With
    /// `--before` (values only), `--step K` (after the backward pass's step `K`,
    /// numbered as `:trace` numbers them) or `--steps` (FILE is a directory: one
    /// picture per step, `step-000` before the pass and `step-K` after step `K`).
    pub(super) fn picture(
        &mut self,
        command: &Command,
        format: PictureFormat,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let name = command.name;
        let moment = picture_moment(command)?;
        let file = command.optional_target();
        let output = self.require_output(name.span)?;
        let order = self.order_for(output.node);
        if order.len() > PICTURE_NODES {
            return Err(SessionError::BadArguments {
                message: format!(
                    "the graph of {} has {} nodes: `:{}` draws at most {PICTURE_NODES}",
                    output.label,
                    order.len(),
                    name.name
                ),
                span: name.span,
                help: Some("`:graph` and `:topo` summarise a graph of any size".to_string()),
            });
        }
        let (gradients, _) = self.backprop(&output, name.span)?;
        let names = self.names_by_node();
        // The steps as `:trace` numbers them: step K processes the node at
        // `visible[K - 1]`, the K-th node of the order that is not a constant.
        let visible: Vec<usize> = (0..order.len())
            .filter(|&i| self.graph.op(order[i]) != Op::Const)
            .collect();
        let last = visible.len();
        let moments: Vec<Option<usize>> = match moment {
            Moment::Done => vec![None],
            Moment::Step(k) if k > last => {
                let (message, help) = match last {
                    0 => (
                        format!("the backward pass from {} has no steps", output.label),
                        format!("e.g. `:{}` for the finished pass", name.name),
                    ),
                    _ => (
                        format!(
                            "the backward pass from {} has steps 1 to {last}",
                            output.label
                        ),
                        format!("the steps are the numbers `:trace` shows, e.g. `--step {last}`"),
                    ),
                };
                return Err(SessionError::BadArguments {
                    message,
                    span: command
                        .number_after(STEP_FLAG)
                        .map_or(name.span, |k| k.span),
                    help: Some(help),
                });
            }
            Moment::Step(k) => vec![Some(k)],
            Moment::Steps => (0..=last).map(Some).collect(),
        };
        let mut edges = Vec::new();
        for &id in order.iter() {
            for (position, &input) in self.graph.operands(id).iter().enumerate() {
                edges.push(PictureEdge {
                    input,
                    node: id,
                    position,
                    local: self.local_derivative(id, position),
                });
            }
        }
        for step in moments {
            // The node step K processes, and how many nodes of the order are
            // done by then (the constants before it too: no step of their own).
            let current = step.and_then(|k| k.checked_sub(1)).map(|k| visible[k]);
            let done = match step {
                None => order.len(),
                Some(_) => current.map_or(0, |at| at + 1),
            };
            let nodes = order
                .iter()
                .enumerate()
                .map(|(i, &id)| PictureNode {
                    node: self.node_ref(id, &names),
                    op: self.graph.op(id),
                    value: self.graph.value(id),
                    grad: gradients[id],
                    pending: i >= done,
                    current: current == Some(i),
                })
                .collect();
            let target = file.as_ref().map(|file| match (step, moment) {
                (Some(number), Moment::Steps) => Target {
                    path: format!(
                        "{}/step-{number:03}.{}",
                        file.path.trim_end_matches('/'),
                        match format {
                            PictureFormat::Dot => "dot",
                            PictureFormat::Svg => "svg",
                        }
                    ),
                    ..file.clone()
                },
                _ => file.clone(),
            });
            events.push(Event::Picture {
                picture: Picture {
                    of: output.label.clone(),
                    nodes,
                    edges: edges.clone(),
                    step: step.map(|number| PictureStep { number, last }),
                },
                format,
                target,
            });
        }
        Ok(())
    }

    /// `:trace [all] md|tex [FILE]`: the backward steps as a table for notes.
    pub(super) fn trace_table(
        &mut self,
        command: &Command,
        all: bool,
        format: TableFormat,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let target = command.optional_target();
        let name = command.name;
        let mut trace = Vec::new();
        self.trace(name.span, all, &mut trace)?;
        if let Some(Event::Trace {
            of,
            total,
            constants,
            steps,
            omitted,
        }) = trace.pop()
        {
            events.push(Event::TraceTable {
                of,
                total,
                constants,
                steps,
                omitted,
                format,
                target,
            });
        }
        Ok(())
    }

    /// `:plot NAME [FROM TO] [FILE.svg]`: the output as a function of one
    /// variable, with its derivative, by evaluating the graph again at each point.
    pub(super) fn plot(
        &mut self,
        command: &Command,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let name = command.name;
        let usage = |message: &str| SessionError::BadArguments {
            message: message.to_string(),
            span: command.args.iter().fold(name.span, |s, a| s.to(a.span)),
            help: Some(command.spec.example.to_string()),
        };
        let variable = command.names[0];
        let range = command.range;
        let file = command.file;
        let target = match file {
            Some(file)
                if !file.name.trim_matches('"').to_lowercase().ends_with(".svg")
                    && file.name != "-" =>
            {
                return Err(SessionError::BadArguments {
                    message: format!("`:plot` writes SVG: `{}` does not end in .svg", file.name),
                    span: file.span,
                    help: Some("e.g. `:plot x -3 3 plot.svg`".to_string()),
                });
            }
            Some(_) => command.optional_target(),
            None => None,
        };
        let output = self.require_output(name.span)?;
        let node = self.variable_node(variable)?;
        self.backprop(&output, name.span)?;
        let at = self.graph.value(node);
        let (from, to) = match range {
            Some((from, to)) => (plot_bound(from)?, plot_bound(to)?),
            None => {
                let width = 3.0 * at.abs().max(1.0);
                (at - width, at + width)
            }
        };
        if !at.is_finite() && range.is_none() {
            return Err(usage(&format!("{} = {at}: give a range", variable.name)));
        }
        if from >= to {
            let span = range.map_or(name.span, |(a, b)| a.span.to(b.span));
            return Err(SessionError::BadArguments {
                message: format!("the range {from} to {to} is empty"),
                span,
                help: Some("give the smaller end first, e.g. `:plot x -3 3`".to_string()),
            });
        }
        if !(to - from).is_finite() {
            // -1e308 to 1e308: the samples would be nan and inf.
            let Some((a, b)) = range else {
                return Err(usage(&format!(
                    "{} = {at:e}: too large for the range around it; give a range",
                    variable.name
                )));
            };
            return Err(SessionError::BadArguments {
                message: format!(
                    "the range {from:e} to {to:e} is too wide: its width is larger than the largest number ({:e})",
                    f64::MAX
                ),
                span: a.span.to(b.span),
                help: Some("give a narrower range, e.g. `:plot x -1e300 1e300`".to_string()),
            });
        }
        let order = self.order_for(output.node);
        let samples = (0..PLOT_SAMPLES)
            // After Ctrl-C the rest is not computed (the statement fails).
            .take_while(|_| !crate::interrupt::requested())
            .map(|i| {
                let x = from + (to - from) * i as f64 / (PLOT_SAMPLES - 1) as f64;
                let values = self.graph.reevaluate(&order, &[(node, x)]);
                let grad = self.graph.backward_at(&order, &values)[node];
                PlotSample {
                    x,
                    value: values[output.node.index()],
                    grad,
                }
            })
            .collect();
        events.push(Event::Plot {
            of: output.label,
            wrt: variable.name.clone(),
            at,
            samples,
            target,
        });
        Ok(())
    }
}

/// The step h of `:check`'s central difference (f(x + h) − f(x − h)) / 2h at x.
///
/// `torch.autograd.gradcheck` moves each input by a fixed `eps = 1e-6`
/// (PyTorch's documentation of `torch.autograd.gradcheck.gradcheck`). In float64
/// a central difference errs by about h²·|f‴|/6 (truncation) plus ε·|f|/h
/// (rounding, ε ≈ 2.2e-16), smallest near h ≈ ε^(1/3)·scale ≈ 6e-6·scale; so h is
/// [`CHECK_STEP`] of |x| (of 1 when |x| < 1). The step is bounded by
/// [`CHECK_STEP_MAX`]: the scale on which f varies need not grow with x
/// (sin(x) at x = 1e8 varies on a scale of 1, and a step of 1000 would measure
/// nothing), and at least a few units in the last place of x, so that x ± h
/// differ from x (the quotient divides by the step actually taken).
fn check_step(x: f64) -> f64 {
    let h = (CHECK_STEP * x.abs().max(1.0)).min(CHECK_STEP_MAX);
    h.max(x.abs() * f64::EPSILON * 4.0)
}

/// One end of a plot's range: a finite number.
fn plot_bound(word: &Ident) -> Result<f64, SessionError> {
    match word.name.replace('−', "-").parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(SessionError::BadArguments {
            message: format!("`{}` is not a finite number", word.name),
            span: word.span,
            help: Some("a range is two numbers, e.g. `:plot x -3 3`".to_string()),
        }),
    }
}

/// `--step`, the picture flag that takes a step number.
const STEP_FLAG: &str = "--step";

/// Which moment of the backward pass `:dot` / `:svg` draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moment {
    /// The finished pass (no flag).
    Done,
    /// After `:trace`'s step K (`--step K`; `--before` is step 0).
    Step(usize),
    /// Every step, one file each (`--steps`).
    Steps,
}

/// The moment a `:dot` / `:svg` command line asks for: `--before`, `--step K`
/// or `--steps` (the table has parsed them).
///
/// Errors: two moments, a step that is not a whole number, `--steps` without a
/// directory or with `-`.
fn picture_moment(command: &Command) -> Result<Moment, SessionError> {
    let mut moments = Vec::new();
    if command.has("--before") {
        moments.push(Moment::Step(0));
    }
    if command.has("--steps") {
        moments.push(Moment::Steps);
    }
    if let Some(word) = command.number_after(STEP_FLAG) {
        let k = word
            .name
            .parse::<usize>()
            .map_err(|_| SessionError::BadArguments {
                message: format!(
                    "`--step` takes a step number, as `:trace` numbers the steps, not `{}`",
                    word.name
                ),
                span: word.span,
                help: Some(command.spec.example.to_string()),
            })?;
        moments.push(Moment::Step(k));
    }
    if moments.len() > 1 {
        return Err(command.misuse());
    }
    let moment = moments.pop().unwrap_or(Moment::Done);
    if moment == Moment::Steps {
        let message = match command.file {
            None => format!(
                "`:{} --steps` takes a directory to write the pictures in",
                command.name.name
            ),
            Some(file) if file.name == "-" => {
                "`--steps` writes one file per step: give a directory, not `-`".to_string()
            }
            Some(_) => return Ok(moment),
        };
        return Err(SessionError::BadArguments {
            message,
            span: command.name.span,
            help: Some(command.spec.example.to_string()),
        });
    }
    Ok(moment)
}
