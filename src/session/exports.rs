//! The commands that draw or tabulate the graph for a lecture: `:dot`,
//! `:svg` (also step by step), `:html`, `:trace md|tex` and `:plot`. Each
//! returns an event; files are written by the printer, not here.

use crate::session::Number;
use std::collections::HashMap;

use rustc_hash::FxHashMap;

use super::args::{Moment, PictureArgs, TraceArgs};
use super::boxes::{CallBoxes, Expand};
use super::command::Command;
use super::steps::{GradState, StepModel};
use super::{
    Event, NodeRef, Page, Picture, PictureEdge, PictureFormat, PictureGroup, PictureNode,
    PictureStep, PlotSample, Session, SessionError, TableFormat, Target,
};
use crate::engine::{NodeId, Op};
use crate::syntax::{Ident, Span};

/// `:dot` and `:svg` draw graphs of at most this many nodes.
pub(super) const PICTURE_NODES: usize = 500;
/// `:plot` evaluates the output at this many points.
const PLOT_SAMPLES: usize = 241;

impl Session {
    /// Refuses the file `file` names before any work whose result goes there:
    /// a script writing outside its places ([`Session::writes`]), writes
    /// being off, or a file that cannot be written now (a missing
    /// directory, a permission, a directory or device at the path;
    /// [`crate::files::check_writable`]). An existing file is left to the
    /// command's own question (`-f` replaces it). `-` is standard output.
    ///
    /// Errors: [`SessionError::CannotWrite`] at the file name, with the fix.
    pub(super) fn check_writable(&self, file: &Ident) -> Result<(), SessionError> {
        let target = Target::from_word(file);
        if target.path == "-" {
            return Ok(());
        }
        let path = crate::files::expand_tilde(&target.path);
        let shown = path.display().to_string();
        let refusal = self
            .writes
            .refusal(&path, &shown, self.from_script)
            .or_else(|| {
                let checked = crate::files::check_writable(&path, true);
                checked
                    .err()
                    .map(|error| crate::files::explain_write_error(&shown, &error))
            });
        match refusal {
            None => Ok(()),
            Some((message, help)) => Err(SessionError::CannotWrite {
                message: format!("{message}; nothing ran"),
                span: file.span,
                help,
            }),
        }
    }

    /// The edges of a picture of the nodes `beside` and `order`: a boxed call's
    /// (from `boxes`) from its inputs with their local derivatives, any other
    /// node's from its operands.
    fn picture_edges(
        &self,
        beside: &[NodeId],
        order: &[NodeId],
        boxes: &CallBoxes,
    ) -> Vec<PictureEdge> {
        let mut edges = Vec::new();
        for &id in beside.iter().chain(order.iter()) {
            if let Some(inputs) = boxes.inputs.get(&id) {
                for (position, &(input, local)) in inputs.iter().enumerate() {
                    edges.push(PictureEdge {
                        input,
                        node: id,
                        position,
                        local,
                    });
                }
                continue;
            }
            for (position, &input) in self.graph.operands(id).iter().enumerate() {
                edges.push(PictureEdge {
                    input,
                    node: id,
                    position,
                    local: self.local_derivative(id, position),
                });
            }
        }
        edges
    }

    /// `:dot [FILE]` and `:svg FILE`: the output's graph with values, gradients
    /// and local derivatives, for the printer to render and write. With
    /// `--before` (values only), `--step K` (after the backward pass's step `K`,
    /// numbered as `:trace` numbers them) or `--steps` (FILE is a directory: one
    /// picture per step, `step-000` before the pass and `step-K` after step `K`).
    /// Every moment is drawn from one [`StepModel`]: the node of step K and
    /// every gradient's state are `:trace`'s.
    pub(super) fn picture(
        &mut self,
        name: &Ident,
        options: &PictureArgs,
        format: PictureFormat,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        if self.shaped_output().is_some() {
            // A tensor output: each moment drawn from the tensor walk's model.
            self.check_tensor_picture_size(name)?;
            let model = self.step_model_tensors_drawn(name.span, &options.expand)?;
            let moments = moments(options, model.len(), &model.of, name)?;
            for (step, target) in targets(options, format, moments) {
                let picture = self.picture_at(&model, step, options.direction, true);
                events.push(Event::Picture {
                    picture,
                    format,
                    target,
                });
            }
            return Ok(());
        }
        let frame_data = self.picture_frame(name, options)?;
        let model = match self.step_model(name.span, &options.expand) {
            Ok(model) => Some(model),
            Err(error) if options.moment != Moment::Done => return Err(error),
            Err(_) => None,
        };
        let last = model.as_ref().map_or(0, StepModel::len);
        let output_label = frame_data.of.clone();
        let moments = moments(options, last, &output_label, name)?;
        let step_nodes: Vec<NodeRef> = match &model {
            Some(model) => model.steps.iter().map(|s| s.row.node.clone()).collect(),
            None => Vec::new(),
        };
        for (step, target) in targets(options, format, moments) {
            events.push(Event::Picture {
                picture: Picture {
                    of: output_label.clone(),
                    nodes: self.picture_nodes(&frame_data, model.as_ref(), step),
                    edges: frame_data.edges.clone(),
                    step: step.map(|number| PictureStep {
                        number,
                        last,
                        nodes: step_nodes.clone(),
                    }),
                    groups: frame_data.groups.clone(),
                    calls: frame_data.boxes.calls.clone(),
                    direction: options.direction,
                    tensor: None,
                },
                format,
                target,
            });
        }
        Ok(())
    }

    /// What every picture of one command shares: the nodes drawn, their
    /// edges, groups and calls.
    ///
    /// Errors: no output; a graph of more than 500 nodes; Ctrl-C.
    fn picture_frame(
        &mut self,
        name: &Ident,
        options: &PictureArgs,
    ) -> Result<Frame, SessionError> {
        let output = self.require_output(name.span)?;
        let order = self.order_for(output.node);
        let too_many = |count: usize, what: String| SessionError::BadArguments {
            message: format!(
                "{what} {count} nodes: `:{}` draws at most {PICTURE_NODES}",
                name.name
            ),
            span: name.span,
            help: Some("`:graph` and `:topo` summarise a graph of any size".to_string()),
        };
        if order.len() > PICTURE_NODES {
            let what = format!("the graph of {} has", output.label);
            return Err(too_many(order.len(), what));
        }
        let (gradients, _) = self.backprop(&output, name.span)?;
        let boxes = self.call_boxes(&order, &options.expand)?;
        let grouped = self.picture_groups(&boxes.order);
        let drawn = boxes.order.len() + grouped.beside.len();
        if drawn > PICTURE_NODES {
            let what = format!(
                "the graph of {} and the forward passes beside it have",
                output.label
            );
            return Err(too_many(drawn, what));
        }
        let edges = self.picture_edges(&grouped.beside, &boxes.order, &boxes);
        let grads = boxes
            .order
            .iter()
            .chain(&grouped.beside)
            .map(|&id| (id, gradients[id]))
            .collect();
        Ok(Frame {
            of: output.label,
            order: boxes.order.clone(),
            beside: grouped.beside,
            edges,
            grads,
            boxes,
            groups: grouped.groups,
            group_of: grouped.group_of,
        })
    }

    /// The nodes of one picture of `frame` at `step` of `model` (`None`: the
    /// finished pass): each gradient in its state at that step, the step's
    /// node highlighted.
    fn picture_nodes(
        &self,
        frame: &Frame,
        model: Option<&StepModel>,
        step: Option<usize>,
    ) -> Vec<PictureNode> {
        let names = self.names_by_node();
        let current = step.and_then(|k| model.and_then(|m| m.node(k)));
        // The nodes beside the output's graph have no gradient in it:
        // drawn with the gradient blank.
        let beside = frame.beside.iter().map(|&id| (id, true));
        beside
            .chain(frame.order.iter().map(|&id| (id, false)))
            .map(|(id, beside)| {
                let grad = frame.grads.get(&id).copied().unwrap_or(0.0);
                let state = match (beside, step, model) {
                    (true, _, _) => GradState::Blank,
                    (false, Some(k), Some(model)) => model.state(id, k),
                    _ => GradState::Final {
                        before: None,
                        sum: grad,
                    },
                };
                PictureNode {
                    node: self.node_ref(id, &names),
                    op: self.graph.op(id),
                    value: self.graph.value(id),
                    grad,
                    state,
                    states: model.map_or_else(Vec::new, |m| m.states(id)),
                    current: current == Some(id),
                    group: frame.group_of.get(&id).copied(),
                    call: frame.boxes.call_of.get(&id).copied(),
                    boxed: frame.boxes.boxed.get(&id).copied(),
                }
            })
            .collect()
    }

    /// `:html FILE`: the output's graph and its backward pass as one page
    /// ([`Page`]), for the printer to render and write to `target`; `name` is
    /// the command's name as typed.
    ///
    /// Errors: as `:svg` (no output, a graph of more than 500 nodes).
    pub(super) fn html(
        &mut self,
        name: &Ident,
        target: Option<Target>,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let page = self.page_of(name)?;
        events.push(Event::Page {
            page: Box::new(page),
            target,
        });
        Ok(())
    }

    /// The page `:html` writes, for the current output: what `:serve` shows
    /// after every statement. The statement log and the output do not change.
    ///
    /// Errors: as `:html` (no output yet, a graph too large to draw); the
    /// error's span is empty.
    pub fn page(&mut self) -> Result<Page, SessionError> {
        let name = Ident {
            name: "html".to_string(),
            span: Span::new(0, 0),
        };
        self.page_of(&name)
    }

    /// The finished pictures (calls boxed, and expanded when any is boxed, as
    /// `:svg --expand` draws them) and the step model of the pass (calls one
    /// step each, as `:trace` shows them), or why there is none; `name` is the
    /// command's, for errors.
    fn page_of(&mut self, name: &Ident) -> Result<Page, SessionError> {
        if self.shaped_output().is_some() {
            return self.page_tensors(name);
        }
        let picture = self.finished_picture(name, &PictureArgs::default())?;
        let expanded = match picture.calls.iter().any(|call| call.boxed) {
            true => {
                let svg = Ident {
                    name: "svg".to_string(),
                    span: name.span,
                };
                let args = PictureArgs {
                    expand: Expand::All,
                    ..PictureArgs::default()
                };
                Some(self.finished_picture(&svg, &args)?)
            }
            false => None,
        };
        let steps = match self.step_model(name.span, &Expand::None) {
            Ok(model) if model.is_empty() => Err("the backward pass has no steps".to_string()),
            Ok(model) => Ok(model),
            Err(error) => Err(error.to_string()),
        };
        Ok(Page {
            picture,
            expanded,
            steps,
            tensor: None,
        })
    }

    /// The picture the command `name` (`:html`, or `:svg` with its flags),
    /// with `args` of the finished pass, draws.
    ///
    /// Errors: as `:svg`.
    fn finished_picture(
        &mut self,
        name: &Ident,
        args: &PictureArgs,
    ) -> Result<Picture, SessionError> {
        let mut drawn = Vec::new();
        self.picture(name, args, PictureFormat::Svg, &mut drawn)?;
        let Some(Event::Picture { picture, .. }) = drawn.pop() else {
            return Err(SessionError::BadArguments {
                message: format!("`:{}` drew no picture", name.name),
                span: name.span,
                help: None,
            });
        };
        Ok(picture)
    }

    /// `:trace [all] md|tex [FILE]`: the backward steps as a table for notes,
    /// in `format`; `span` is the command's name.
    pub(super) fn trace_table(
        &mut self,
        span: Span,
        args: &TraceArgs,
        format: TableFormat,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let target = args.file.clone();
        let mut trace = Vec::new();
        if let Some(output) = self.shaped_output() {
            // A tensor output's handout: the steps of its `:trace`.
            self.trace_tensors(output.node, &output.label, span, &[], &mut trace)?;
        } else {
            self.trace(span, args.all, &args.expand, &mut trace)?;
        }
        let table = match trace.pop() {
            Some(Event::Trace { of, steps }) => Event::TraceTable {
                of,
                steps,
                format,
                target,
            },
            _ => return Ok(()),
        };
        events.push(table);
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
        if self.graph.op(node) != Op::Variable {
            return Err(self.derived_plot(variable, node));
        }
        let (_, reached) = self.backprop(&output, name.span)?;
        if !reached[node.index()] {
            // Not in the output's graph: every sample would be the same value.
            let help = self
                .stale_note(&output, &variable.name, &reached)
                .map(|note| format!("{note}: recompute {} to use the new one", output.label))
                .unwrap_or_else(|| {
                    "plot a variable the output is built from (`:vars` lists them)".to_string()
                });
            return Err(SessionError::BadArguments {
                message: format!(
                    "{} does not depend on {}: its plot against {} would be flat",
                    output.label, variable.name, variable.name
                ),
                span: variable.span,
                help: Some(help),
            });
        }
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
            return Err(empty_range(from, to, &variable.name, span));
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
                let x = plot_sample(from, to, i);
                let values = self.graph.reevaluate(&order, &[(node, x)]);
                let grad = self.graph.backward_at(&order, &values)[node];
                PlotSample {
                    x: Number(x),
                    value: Number(values[output.node.index()]),
                    grad: Number(grad),
                }
            })
            .collect();
        events.push(Event::Plot {
            of: output.label,
            wrt: variable.name.clone(),
            at: Number(at),
            samples,
            target,
        });
        Ok(())
    }
}

impl Session {
    /// The error for `:plot NAME` of a derived value `node` (not a leaf):
    /// moving it would cut it from what it is built from (plotting the
    /// output against itself draws the identity), so the leaves it is
    /// built from, which `:plot` can move, are named instead.
    fn derived_plot(&mut self, variable: &Ident, node: NodeId) -> SessionError {
        let order = self.order_for(node);
        let upstream: std::collections::HashSet<NodeId> = order.iter().copied().collect();
        let mut leaves: Vec<&str> = self
            .vars
            .iter()
            .filter(|&(_, &n)| {
                n.scalar()
                    .is_some_and(|n| upstream.contains(&n) && self.graph.op(n) == Op::Variable)
            })
            .map(|(name, _)| name.as_str())
            .collect();
        leaves.sort_unstable();
        let name = &variable.name;
        let help = match leaves.as_slice() {
            [] => format!(
                "`:plot` moves a leaf; {name} is built from none that has its name now (`:vars` lists the leaves)"
            ),
            [leaf] => format!("plot the leaf it is built from: `:plot {leaf}`"),
            [first, ..] => format!(
                "plot a leaf it is built from: {} (e.g. `:plot {first}`)",
                leaves
                    .iter()
                    .map(|l| format!("`{l}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        SessionError::BadArguments {
            message: format!(
                "{name} is a derived value, not a leaf: `:plot` moves a leaf and recomputes the output from it"
            ),
            span: variable.span,
            help: Some(help),
        }
    }
}

/// The error for a plot range `from` to `to` (at `span`) that is empty or
/// reversed, with help for plotting `variable`.
fn empty_range(from: f64, to: f64, variable: &str, span: Span) -> SessionError {
    let (a, b) = (bound_text(from), bound_text(to));
    let (message, help) = if from == to {
        (
            format!("the range {a} to {b} is empty"),
            format!("give two different ends, e.g. `:plot {variable} -3 3`"),
        )
    } else if (from - to).is_finite() {
        (
            format!("the range {a} to {b} is reversed"),
            format!("give the smaller end first: `:plot {variable} {b} {a}`"),
        )
    } else {
        (
            format!("the range {a} to {b} is reversed"),
            format!(
                "give the smaller end first and a narrower range, e.g. `:plot {variable} -1e300 1e300`"
            ),
        )
    };
    SessionError::BadArguments {
        message,
        span,
        help: Some(help),
    }
}

/// One end of a plot's range: a finite number.
/// The `i`-th of [`PLOT_SAMPLES`] evenly spaced points from `from` to `to`
/// (a finite range whose width is finite): exactly `from` and `to` at the
/// ends, and no intermediate overflow (`(to - from)·i` overflows for a width
/// above f64::MAX/240, as 0 to 1e308; the step `to/n − from/n` does not).
fn plot_sample(from: f64, to: f64, i: usize) -> f64 {
    let last = PLOT_SAMPLES - 1;
    if i >= last {
        return to;
    }
    let n = last as f64;
    from + (to / n - from / n) * i as f64
}

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

/// The steps to draw, one picture each (`None`: the finished pass), for the
/// moment `args` asks for of a pass of `last` steps from `of`; `name` is the
/// command's.
///
/// Errors: a step past the last (at its number).
fn moments(
    args: &PictureArgs,
    last: usize,
    of: &str,
    name: &Ident,
) -> Result<Vec<Option<usize>>, SessionError> {
    Ok(match args.moment {
        Moment::Done => vec![None],
        Moment::Step(k) if k > last => {
            let (message, help) = match last {
                0 => (
                    format!("the backward pass from {of} has no steps"),
                    format!("e.g. `:{}` for the finished pass", name.name),
                ),
                _ => (
                    format!("the backward pass from {of} has steps 1 to {last}"),
                    format!("the steps are the numbers `:trace` shows, e.g. `--step {last}`"),
                ),
            };
            return Err(SessionError::BadArguments {
                message,
                span: args.step_at.unwrap_or(name.span),
                help: Some(help),
            });
        }
        Moment::Step(k) => vec![Some(k)],
        Moment::Steps => (0..=last).map(Some).collect(),
    })
}

/// Each moment of `moments` with the file its picture goes to (`None`: the
/// printer's output), as `options` names it.
fn targets(
    options: &PictureArgs,
    format: PictureFormat,
    moments: Vec<Option<usize>>,
) -> impl Iterator<Item = (Option<usize>, Option<Target>)> {
    let file = options.file.clone();
    let moment = options.moment;
    moments.into_iter().map(move |step| {
        let target = file
            .as_ref()
            .map(|file| step_target(file, step, moment, format));
        (step, target)
    })
}

/// Where the picture of `step` goes when `file` was given: `FILE` itself,
/// or for `--steps` (`moment`) `FILE/step-007.svg` (`.dot`) in the directory.
fn step_target(
    file: &Target,
    step: Option<usize>,
    moment: Moment,
    format: PictureFormat,
) -> Target {
    match (step, moment) {
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
    }
}

/// What every picture of one `:dot` / `:svg` command shares.
struct Frame {
    /// The output's label.
    of: String,
    /// The nodes drawn, output first.
    order: Vec<NodeId>,
    /// The nodes drawn beside the output's graph.
    beside: Vec<NodeId>,
    /// The edges drawn.
    edges: Vec<PictureEdge>,
    /// ∂output/∂node of every node drawn.
    grads: FxHashMap<NodeId, f64>,
    /// The calls drawn as boxes.
    boxes: CallBoxes,
    /// The labelled groups.
    groups: Vec<PictureGroup>,
    /// The group of each node drawn in one.
    group_of: HashMap<NodeId, usize>,
}

/// A range end as `:plot`'s messages write it: plain decimal for magnitudes
/// in [1e-6, 1e15), exponent form (`1e308`) outside it, as numbers are
/// printed elsewhere; either reads back as the same f64.
fn bound_text(value: f64) -> String {
    let magnitude = value.abs();
    if value == 0.0 || (1e-6..1e15).contains(&magnitude) {
        format!("{value}")
    } else {
        format!("{value:e}")
    }
}
