//! The listings of the output's graph: `:topo`, `:topo kahn`, `:trace`,
//! `:forward`, `:graph` and `:vars`, and how a long listing is summarised.

use crate::session::Number;
use std::collections::HashMap;
use std::rc::Rc;

use rustc_hash::FxHashMap;

use super::args::{TopoArgs, TopoOrder, TraceArgs};
use super::boxes::Expand;
use super::command::Command;
use super::error::ErrorCode;
use super::event::{CollapsedCalls, ListingKind};
use super::event::{ElementChain, ElementTermRow, TensorVarRow};
use super::formula::Formulas;
use super::tensors::{element_name, tensor_data, tensor_error};
use super::{
    EarlyVisit, Event, FunctionRow, GraphLine, KahnRow, Listing, NaiveRow, NodeRow, NothingPassed,
    Omitted, Output, Session, SessionError, ShapeRow, TopoRows, TraceCall, TraceContribution,
    TraceStep, TraceSteps, VarRow,
};
use crate::engine::tensor::{Shape, Tensor, TensorGradients, TensorGraph, TensorId, TensorOp};
use crate::engine::{Contribution, Gradients, NodeId, Op, Passing, Step};
use crate::syntax::Span;

/// Long listings show this many rows from the start and from the end.
const HEAD_ROWS: usize = 20;
const TAIL_ROWS: usize = 5;
/// `:graph` draws at most this many lines,
const GRAPH_LINES: usize = 60;
/// this many inputs of one node,
const GRAPH_WIDTH: usize = 8;
/// and this many levels below the output.
const GRAPH_DEPTH: usize = 24;

impl Session {
    /// `:trace [all]`, `:trace [all] md|tex [FILE]`, and `:step` outside the REPL
    /// (which pages it, `repl/mod.rs`), of a number or a tensor output.
    ///
    /// Errors: those of [`TraceArgs::parse`]; no output; an `--expand` that
    /// names no step; Ctrl-C.
    pub(super) fn trace_command(
        &mut self,
        command: &Command,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let span = command.name.span;
        let args = &TraceArgs::parse(command)?;
        // The handouts of either kind of output: `trace_table`.
        if let Some(output) = self.shaped_output().filter(|_| args.table.is_none()) {
            return self.trace_tensor_output(output, &command.name.name, span, args, events);
        }
        match args.table {
            Some(format) => self.trace_table(span, args, format, events),
            None => self.trace(span, args.all, &args.expand, events),
        }
    }

    /// `:topo [kahn|naive] [all]` of a number or a tensor output (a tensor
    /// graph has one order: a keyword besides `all` is refused for it).
    pub(super) fn topo_command(
        &mut self,
        command: &Command,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let name = command.name;
        if self.shaped_output().is_none() {
            let TopoArgs { order, all } = TopoArgs::parse(command);
            return self.order_listing(name.span, OrderListing::Topo(order), all, events);
        }
        if command.keywords.iter().any(|k| *k != "all") {
            return Err(tensor_error(
                ErrorCode::Unsupported,
                name.span,
                format!(
                    "`:{} {}` of a tensor output is not supported yet: a tensor graph has one order, by descending id",
                    name.name,
                    command.keywords.join(" ")
                ),
                Some(format!(
                    "type `:{}` (every tensor node is listed)",
                    name.name
                )),
            ));
        }
        self.topo_tensors(name.span, events)
    }

    /// `:trace` of the tensor `output` (command `name` at `span`) with its
    /// arguments `args` (the handout tables aside: `trace_table`):
    /// `--expand=A --expand=B` and `--expand=A,B` name the steps shown
    /// element by element or the calls shown step by step; a bare
    /// `--expand` opens every call, and without calls is refused with the
    /// steps it may name.
    fn trace_tensor_output(
        &mut self,
        output: Output<TensorId>,
        name: &str,
        span: Span,
        args: &TraceArgs,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let label = &output.label;
        let at = args.expand_at.unwrap_or(span);
        // A bare `--expand` opens every call on tensors of the walk, as it
        // opens every call of numbers.
        let calls = self.call_labels(output.node);
        let expand: Vec<(&str, Span)> = match &args.expand {
            Expand::None => Vec::new(),
            Expand::All if !calls.is_empty() => calls.iter().map(|c| (c.as_str(), at)).collect(),
            Expand::All => return Err(self.bare_expand(output.node, label, name, at)),
            Expand::Calls(steps, at) => steps.iter().map(|s| (s.as_str(), *at)).collect(),
        };
        self.trace_tensors(output.node, label, span, &expand, events)
    }

    /// `:forward [all]` and `:topo [kahn|naive] [all]` (`span` the command's
    /// name): the output and the order backprop walks from it, listed as
    /// `listed` says, every node with `all`.
    ///
    /// Errors: no output; an output built with `f'(x)` of a variable; Ctrl-C.
    pub(super) fn order_listing(
        &mut self,
        span: Span,
        listed: OrderListing,
        all: bool,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let output = self.require_output(span)?;
        let order = self.order_for(output.node);
        self.check_interrupt()?;
        events.push(match listed {
            OrderListing::Forward => self.node_order(output, order, all, true),
            OrderListing::Topo(TopoOrder::DepthFirst) => self.node_order(output, order, all, false),
            OrderListing::Topo(TopoOrder::Kahn) => self.topo_kahn(output, order, all),
            OrderListing::Topo(TopoOrder::Naive) => self.topo_naive(output, order, all)?,
        });
        Ok(())
    }

    /// `:topo [all]` (`forward` false): the output's nodes in `order`, the
    /// reverse topological order, output first; `:forward [all]` (`forward`
    /// true): the same nodes in forward evaluation order, inputs first.
    fn node_order(
        &self,
        output: Output<NodeId>,
        order: Rc<Vec<NodeId>>,
        all: bool,
        forward: bool,
    ) -> Event {
        let (of, total) = (output.label, order.len());
        let omitted = summary(total, all);
        if forward {
            let rows = self.listing(ListingKind::Forward, order, omitted);
            Event::Forward {
                of,
                total,
                rows,
                omitted,
            }
        } else {
            let rows = self.listing(ListingKind::Topo, order, omitted);
            Event::Topo {
                of,
                rows: TopoRows::Nodes {
                    total,
                    rows,
                    omitted,
                },
            }
        }
    }

    /// `:trace [all] [--expand[=CALL,…]]`: one step per node of the output's
    /// graph but the constants (nobody asks for their gradients), numbered 1,
    /// 2, … in reverse topological order; `total` counts those steps,
    /// `constants` the rest. A call of a user function is one step, as
    /// `:svg` draws it as one box ([`Session::call_boxes`]), unless `expand`
    /// expands it. The steps are made while they are written
    /// ([`Session::trace_steps`]).
    pub(super) fn trace(
        &mut self,
        span: Span,
        all: bool,
        expand: &Expand,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let output = self.require_output(span)?;
        let mut order = self.order_for(output.node);
        self.check_interrupt()?;
        let mut collapsed = None;
        if !self.calls().is_empty() && *expand != Expand::All {
            let boxes = self.call_boxes(&order, expand)?;
            if !boxes.boxed.is_empty() {
                order = Rc::new(boxes.order);
                collapsed = Some(Rc::new(CollapsedCalls {
                    inputs: boxes.inputs,
                    calls: boxes.sizes,
                }));
            }
        }
        let constants = order
            .iter()
            .filter(|&&id| self.graph.op(id) == Op::Const)
            .count();
        let total = order.len() - constants;
        let omitted = summary(total, all);
        events.push(Event::Trace {
            of: output.label,
            steps: TraceSteps::Nodes {
                total,
                constants,
                steps: self.listing(ListingKind::Trace(collapsed), order, omitted),
                omitted,
            },
        });
        Ok(())
    }

    /// A listing of this statement.
    fn listing(
        &self,
        kind: ListingKind,
        order: Rc<Vec<NodeId>>,
        omitted: Option<Omitted>,
    ) -> Listing {
        Listing {
            kind,
            order,
            omitted,
            statement: self.statement,
        }
    }

    /// Whether `listing` was made by the statement this session ran last
    /// (see [`Listing`]): only then are its rows this session's to make.
    fn current(&self, listing: &Listing) -> bool {
        listing.statement == self.statement
    }

    /// The rows of a `:topo` or `:forward` listing, in the order shown, made
    /// one at a time: each row's position is its place in the listing (1-based),
    /// a summary's rows left out. Nothing for another listing, or for one made
    /// before this session's last statement ([`Listing`]). After Ctrl-C
    /// ([`crate::interrupt`]) the rows end early.
    pub fn node_rows<'s>(&'s self, listing: &Listing) -> impl Iterator<Item = NodeRow> + 's {
        let order = Rc::clone(&listing.order);
        let forward = match listing.kind {
            ListingKind::Topo => Some(false),
            ListingKind::Forward => Some(true),
            ListingKind::Kahn(_) | ListingKind::Trace(_) => None,
        }
        .filter(|_| self.current(listing));
        let total = if forward.is_some() { order.len() } else { 0 };
        let names = self.names_by_node();
        let listing = listing.clone();
        (0..total)
            .filter(move |&i| listing.shows(i))
            .take_while(|_| !crate::interrupt::requested())
            .map(move |i| {
                let id = match forward {
                    Some(true) => order[total - 1 - i],
                    _ => order[i],
                };
                self.node_row(i + 1, id, &names)
            })
    }

    /// The rows of a `:topo kahn` listing, made one at a time, as
    /// [`Session::node_rows`] makes those of `:topo`.
    pub fn kahn_rows<'s>(&'s self, listing: &Listing) -> impl Iterator<Item = KahnRow> + 's {
        let kahn = match &listing.kind {
            ListingKind::Kahn(kahn) if self.current(listing) => Rc::clone(kahn),
            _ => Rc::new(Vec::new()),
        };
        // 1-based positions in the depth-first order, by node index (0: not in it).
        let mut dfs_position = vec![0u32; if kahn.is_empty() { 0 } else { self.graph.len() }];
        if !kahn.is_empty() {
            for (i, id) in listing.order.iter().enumerate() {
                dfs_position[id.index()] = u32::try_from(i + 1).unwrap_or(u32::MAX);
            }
        }
        let names = self.names_by_node();
        let listing = listing.clone();
        (0..kahn.len())
            .filter(move |&i| listing.shows(i))
            .take_while(|_| !crate::interrupt::requested())
            .map(move |i| {
                let (id, pending) = kahn[i];
                KahnRow {
                    row: self.node_row(i + 1, id, &names),
                    pending,
                    dfs_position: dfs_position[id.index()] as usize,
                }
            })
    }

    /// The steps of a `:trace` listing, made one at a time as the backward
    /// pass walks the output's order ([`Graph::backward_steps`]): memory for
    /// the walk's gradients, never for the steps already made. Numbered as
    /// shown (constants are not steps), a summary's steps left out. Nothing for
    /// another listing, or for one made before this session's last statement
    /// ([`Listing`]). After Ctrl-C ([`crate::interrupt`]) the steps end early.
    ///
    /// [`Graph::backward_steps`]: crate::engine::Graph::backward_steps
    pub fn trace_steps<'s>(&'s self, listing: &Listing) -> impl Iterator<Item = TraceStep> + 's {
        self.trace_steps_where(listing, |_| true)
    }

    /// [`Session::trace_steps`] of the steps `wanted` also takes (by 0-based
    /// index, asked in increasing order as the walk reaches them): a step
    /// not wanted costs its share of the walk's arithmetic but is not
    /// written out (no formula, no row). What `:step` pages a window of a
    /// long walk with ([`super::steps::StepPager`]).
    pub(super) fn trace_steps_where<'s>(
        &'s self,
        listing: &Listing,
        mut wanted: impl FnMut(usize) -> bool + 's,
    ) -> impl Iterator<Item = TraceStep> + 's {
        let traced = matches!(listing.kind, ListingKind::Trace(_)) && self.current(listing);
        let order = if traced {
            Rc::clone(&listing.order)
        } else {
            Rc::new(Vec::new())
        };
        let collapsed = match &listing.kind {
            ListingKind::Trace(Some(collapsed)) => Some(Rc::clone(collapsed)),
            _ => None,
        };
        let graph = &self.graph;
        let steps: Box<dyn Iterator<Item = Step> + 's> = match &collapsed {
            Some(collapsed) => Box::new(self.collapsed_steps(order, Rc::clone(collapsed))),
            None => {
                let kept = Rc::clone(&order);
                Box::new(
                    graph.backward_steps(Shared(order), move |i| graph.op(kept[i]) != Op::Const),
                )
            }
        };
        let mut formulas = Formulas::new(graph, self.names_by_node());
        let listing = listing.clone();
        steps
            .enumerate()
            .filter(move |(k, _)| listing.shows(*k) && wanted(*k))
            .take_while(|_| !crate::interrupt::requested())
            .map(move |(k, step)| {
                let call = collapsed.as_ref().and_then(|c| c.calls.get(&step.node));
                match call {
                    Some(&(call, steps)) => self.call_step(k + 1, &step, call, steps, &formulas),
                    None => self.trace_step(k + 1, &step, &mut formulas),
                }
            })
    }

    /// The backward steps over `order` (nodes drawn, output first) with the
    /// calls of `collapsed` as one node each, whose inputs are the call's and
    /// whose local derivatives are through the body: the chain rule as
    /// [`Graph::backward_steps`] walks it, made one step at a time. Constants
    /// are no steps, as there.
    ///
    /// [`Graph::backward_steps`]: crate::engine::Graph::backward_steps
    fn collapsed_steps<'s>(
        &'s self,
        order: Rc<Vec<NodeId>>,
        collapsed: Rc<CollapsedCalls>,
    ) -> impl Iterator<Item = Step> + 's {
        // (input, ∂node/∂input, whether the op passes anything to it).
        let inputs = move |id: NodeId| -> Vec<(NodeId, f64, bool)> {
            match collapsed.inputs.get(&id) {
                Some(inputs) => inputs.iter().map(|&(i, local)| (i, local, true)).collect(),
                None => (0..self.graph.operands(id).len())
                    .map(|k| {
                        let input = self.graph.operands(id)[k];
                        (input, self.local_derivative(id, k), self.passes(id, k))
                    })
                    .collect(),
            }
        };
        let mut use_count: FxHashMap<NodeId, u32> = FxHashMap::default();
        for &id in order.iter() {
            for (input, _, _) in inputs(id) {
                *use_count.entry(input).or_default() += 1;
            }
        }
        let mut grads: FxHashMap<NodeId, f64> = FxHashMap::default();
        if let Some(&output) = order.first() {
            grads.insert(output, 1.0);
        }
        let mut uses: FxHashMap<NodeId, u32> = FxHashMap::default();
        let mut next = 0;
        std::iter::from_fn(move || {
            loop {
                let id = *order.get(next)?;
                next += 1;
                let upstream = grads.get(&id).copied().unwrap_or(0.0);
                let contributions = inputs(id)
                    .into_iter()
                    .enumerate()
                    .map(|(position, (input, local, passes))| {
                        let before = grads.get(&input).copied().unwrap_or(0.0);
                        let (local, product) = match passes {
                            true => (local, upstream * local),
                            false => (0.0, 0.0),
                        };
                        let after = before + product;
                        grads.insert(input, after);
                        let use_number = uses.entry(input).or_default();
                        *use_number += 1;
                        Contribution {
                            input,
                            position,
                            local,
                            product,
                            passes_nothing: !passes,
                            before,
                            after,
                            use_number: *use_number,
                            use_count: use_count.get(&input).copied().unwrap_or(1),
                        }
                    })
                    .collect();
                if self.graph.op(id) != Op::Const {
                    return Some(Step {
                        node: id,
                        upstream,
                        contributions,
                    });
                }
            }
        })
    }

    /// The step of `:trace` at `position` that stands for the whole call
    /// `call` (an index into [`Session::calls`]), `steps` steps expanded.
    fn call_step(
        &self,
        position: usize,
        step: &Step,
        call: usize,
        steps: usize,
        formulas: &Formulas,
    ) -> TraceStep {
        let names = formulas.names();
        let label = |id: NodeId| match names.get(&id) {
            Some(name) => name.to_string(),
            None => format!("_{}", id.index()),
        };
        // The partial by the call as written (`∂neuron(x1, x2, w, v, b)/∂x1`),
        // as the other steps write it by the operands: `∂h1/∂x1` would read
        // as the whole gradient of h1.
        let written = self.call_written(call, names);
        let call = &self.calls()[call];
        let mut row = self.node_row(position, step.node, names);
        row.inputs = step
            .contributions
            .iter()
            .map(|c| self.node_ref(c.input, names))
            .collect();
        TraceStep {
            row,
            upstream: Number(step.upstream),
            blocks_gradient: false,
            contributions: step
                .contributions
                .iter()
                .filter(|c| self.graph.op(c.input) != Op::Const)
                .map(|c| TraceContribution {
                    input: self.node_ref(c.input, names),
                    partial: format!("∂{written}/∂{}", label(c.input)),
                    // The local derivative through the body, as a number
                    // that reads back as itself.
                    formula: Some(format!("{:?}", c.local)),
                    local: Number(c.local),
                    product: Number(c.product),
                    before: Number(c.before),
                    after: Number(c.after),
                    passes_nothing: None,
                    use_number: c.use_number,
                    use_count: c.use_count,
                })
                .collect(),
            call: Some(TraceCall {
                label: call.label.clone(),
                function: call.function.clone(),
                args: call.args.iter().map(|&a| self.node_ref(a, names)).collect(),
                steps,
            }),
        }
    }

    /// One step of `:trace` at `position`, its formulas from `formulas`.
    fn trace_step(&self, position: usize, step: &Step, formulas: &mut Formulas) -> TraceStep {
        let op = self.graph.op(step.node).info();
        let mut node_formulas = if op.op.is_leaf() {
            Vec::new()
        } else {
            formulas.of_node(step.node)
        };
        let names = formulas.names();
        TraceStep {
            row: self.node_row(position, step.node, names),
            upstream: Number(step.upstream),
            blocks_gradient: !op.differentiable,
            // Constants take gradients too, but nobody asks for them: every
            // view leaves the contributions into them out.
            contributions: step
                .contributions
                .iter()
                .filter(|c| self.graph.op(c.input) != Op::Const)
                .map(|c| {
                    let formula = node_formulas.get_mut(c.position);
                    let passes_nothing = c.passes_nothing.then(|| NothingPassed {
                        passing: op
                            .derivative(c.position)
                            .map_or(Passing::Always, |d| d.passing),
                        operands: formula
                            .as_ref()
                            .map(|f| f.operands.clone())
                            .unwrap_or_default(),
                    });
                    TraceContribution {
                        input: self.node_ref(c.input, names),
                        partial: formula
                            .as_ref()
                            .map(|f| f.partial.clone())
                            .unwrap_or_default(),
                        formula: formula.and_then(|f| f.rhs.take()),
                        local: Number(c.local),
                        product: Number(c.product),
                        before: Number(c.before),
                        after: Number(c.after),
                        passes_nothing,
                        use_number: c.use_number,
                        use_count: c.use_count,
                    }
                })
                .collect(),
            call: None,
        }
    }

    /// `:vars`.
    pub(super) fn vars(&mut self, events: &mut Vec<Event>) {
        let output = self.scalar_output();
        // Without gradients when there is no output or it cannot be differentiated.
        let grads: Option<(Gradients, Vec<bool>)> = output
            .as_ref()
            .and_then(|o| self.backprop(o, Span::default()).ok());
        // A tensor output of shape `()`: its gradients of the tensor
        // variables and, through the scalars the tensors read, of the scalar ones.
        let tensor_pass = self.vars_pass_tensors();
        let built_from_earlier = self.built_from_earlier();
        let vars = self
            .scalar_vars()
            .zip(built_from_earlier)
            .map(|((name, node), built_from_earlier)| {
                let grad_note = match &tensor_pass {
                    Some((label, gradients)) => self.stale_note_tensors(label, name, gradients),
                    None => output
                        .as_ref()
                        .zip(grads.as_ref())
                        .and_then(|(o, (_, reached))| self.stale_note(o, name, reached)),
                };
                VarRow {
                    name: name.clone(),
                    node,
                    value: Number(self.graph.value(node)),
                    leaf: self.graph.op(node) == Op::Variable,
                    grad: match &tensor_pass {
                        // 0 with the note when built from an earlier binding.
                        Some((_, gradients)) => self
                            .scalar_leaf_gradient(gradients, node)
                            .or(grad_note.as_ref().map(|_| 0.0))
                            .map(Number),
                        None => grads.as_ref().map(|(g, _)| g[node]).map(Number),
                    },
                    grad_note,
                    built_from_earlier,
                }
            })
            .collect();
        let functions = self
            .function_order
            .iter()
            .filter_map(|name| {
                let function = self.functions.get(name)?;
                Some(FunctionRow {
                    name: name.clone(),
                    params: function.params.clone(),
                    body: function.text.clone(),
                })
            })
            .collect();
        let tensors = self.var_rows_tensors(tensor_pass.as_ref().map(|(_, g)| g));
        events.push(Event::Vars {
            of: match tensor_pass {
                Some((label, _)) => Some(label),
                None => output.map(|o| o.label),
            },
            vars,
            functions,
            tensors,
        });
    }

    /// `:vars --shapes`: each variable's name and shape, the numbers (shape
    /// `()`) first, then the vectors and matrices, in the order `:vars`
    /// lists them; no value is read and no gradient computed.
    pub(super) fn shapes(&self, events: &mut Vec<Event>) {
        let numbers = self
            .vars
            .iter()
            .filter(|(_, node)| node.scalar().is_some())
            .map(|(name, _)| ShapeRow {
                name: name.clone(),
                shape: Vec::new(),
            });
        let tensors = self.vars.iter().filter_map(|(name, node)| {
            let id = node.tensor()?;
            Some(ShapeRow {
                name: name.clone(),
                shape: self.tensors.graph.shape(id).dims().to_vec(),
            })
        });
        events.push(Event::Shapes {
            rows: numbers.chain(tensors).collect(),
        });
    }

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
                grad: Number(gradients[id]),
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

    /// `:topo kahn [all]`: Kahn's order of the nodes in `order` with each
    /// node's pending-consumer count.
    fn topo_kahn(&self, output: Output<NodeId>, order: Rc<Vec<NodeId>>, all: bool) -> Event {
        let kahn = self.graph.kahn_order(&order);
        let differences = kahn
            .iter()
            .zip(order.iter())
            .filter(|((a, _), b)| a != *b)
            .count();
        let total = order.len();
        let omitted = summary(kahn.len(), all);
        Event::Kahn {
            of: output.label,
            total,
            rows: self.listing(ListingKind::Kahn(Rc::new(kahn)), order, omitted),
            omitted,
            differences,
        }
    }
}

impl Session {
    /// `:topo naive [all]`: the backward pass in the order a naive recursion
    /// visits the nodes, each node's gradient at its visit beside the right
    /// one, and the first node visited too early (see [`Event::Naive`]);
    /// `order` is the right order, backprop's.
    ///
    /// Errors: Ctrl-C.
    fn topo_naive(
        &self,
        output: Output<NodeId>,
        order: Rc<Vec<NodeId>>,
        all: bool,
    ) -> Result<Event, SessionError> {
        let right = self.graph.backward(&order);
        let visit = self.graph.naive_order(output.node);
        let early = self.graph.first_visited_too_early(&visit);
        self.check_interrupt()?;
        let graph = &self.graph;
        let shown: Vec<NodeId> = visit
            .iter()
            .copied()
            .filter(|&id| graph.op(id) != Op::Const)
            .collect();
        // ∂output/∂node as the naive walk had it on reaching each node.
        let naive: Vec<f64> = graph
            .backward_steps(&visit[..], |i| graph.op(visit[i]) != Op::Const)
            .map(|step| step.upstream)
            .collect();
        self.check_interrupt()?;
        let differs = |a: f64, b: f64| {
            !(a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs()) || a.is_nan() && b.is_nan())
        };
        let wrong = shown
            .iter()
            .zip(&naive)
            .filter(|&(&id, &n)| differs(n, right.get(id)))
            .count();
        let omitted = summary(shown.len(), all);
        let names = self.names_by_node();
        let rows = shown
            .iter()
            .zip(&naive)
            .enumerate()
            .filter(|(i, _)| omitted.is_none_or(|o| *i < o.after || *i >= o.after + o.count))
            .map(|(i, (&id, &n))| NaiveRow {
                row: self.node_row(i + 1, id, &names),
                naive: Number(n),
                right: Number(right.get(id)),
            })
            .collect();
        // Positions among the nodes shown (constants are not listed).
        let position = |id: NodeId| shown.iter().position(|&s| s == id).map_or(0, |p| p + 1);
        let early = early.map(|(at, consumer)| EarlyVisit {
            node: self.node_ref(visit[at], &names).label(),
            position: position(visit[at]),
            consumer: self.node_ref(visit[consumer], &names).label(),
            consumer_position: position(visit[consumer]),
            leaf: self.graph.op(visit[at]).is_leaf(),
            naive: Number(
                naive
                    .get(position(visit[at]).wrapping_sub(1))
                    .copied()
                    .unwrap_or(f64::NAN),
            ),
            right: Number(right.get(visit[at])),
        });
        Ok(Event::Naive {
            of: output.label,
            total: shown.len(),
            rows,
            omitted,
            wrong,
            early,
        })
    }
}

/// Which listing of the output's order [`Session::order_listing`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OrderListing {
    /// `:forward`: forward evaluation order, inputs first.
    Forward,
    /// `:topo`, `:topo kahn`, `:topo naive`.
    Topo(TopoOrder),
}

/// A shared order, read as a slice/// A shared order, read as a slice (what [`Graph::backward_steps`] keeps).
///
/// [`Graph::backward_steps`]: crate::engine::Graph::backward_steps
struct Shared(Rc<Vec<NodeId>>);

impl AsRef<[NodeId]> for Shared {
    fn as_ref(&self) -> &[NodeId] {
        &self.0
    }
}

/// The rows a summary of a listing of `total` leaves out, or `None` when it
/// shows them all: all of them when `all`, or when there are few.
fn summary(total: usize, all: bool) -> Option<Omitted> {
    if all || total <= HEAD_ROWS + TAIL_ROWS + 5 {
        return None;
    }
    Some(Omitted {
        after: HEAD_ROWS,
        count: total - HEAD_ROWS - TAIL_ROWS,
    })
}

impl Session {
    /// `:trace` of a tensor output: the backward walk, each tensor op one
    /// step written as its matrix rule with shapes, then the numbers.
    /// Literals (constants) are left out, as the scalar trace leaves them.
    pub(super) fn trace_tensors(
        &mut self,
        output: TensorId,
        label: &str,
        span: Span,
        expand: &[(&str, Span)],
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let mut walk = self.traced_walk(output, label, span, expand, false)?;
        self.note_seeded_with_ones(output, label, events);
        events.push(Event::Trace {
            of: label.to_string(),
            steps: TraceSteps::Tensors {
                shape: self.tensors.graph.shape(output).dims().to_vec(),
                legend: walk.legend,
                steps: walk.steps,
            },
        });
        events.append(&mut walk.warnings);
        Ok(())
    }

    /// The error of a bare `--expand` of a tensor output: it names one node
    /// (`--expand=h`), and the steps it may name.
    fn bare_expand(&self, output: TensorId, label: &str, command: &str, at: Span) -> SessionError {
        let labels = self.tensor_labels(output);
        let graph = &self.tensors.graph;
        let steps: Vec<String> = graph
            .topo_order(output)
            .into_iter()
            .filter(|&id| {
                graph
                    .operands(id)
                    .iter()
                    .any(|&o| graph.op(o) != TensorOp::Const)
            })
            .map(|id| &labels[id.index()])
            .filter(|l| l.chars().all(|c| c.is_alphanumeric() || c == '_'))
            .map(|l| format!("`--expand={l}`"))
            .take(6)
            .collect();
        tensor_error(
            ErrorCode::BadArguments,
            at,
            format!(
                "`--expand` of a tensor output ({label}) takes the step to show element by element: `--expand=NODE`"
            ),
            Some(if steps.is_empty() {
                format!("name a step of `:{command}` (give it a name where it is built, `h = …`)")
            } else {
                format!("e.g. {} (repeat for more)", steps.join(", "))
            }),
        )
    }

    /// The tensor variables for `:vars`: name, leaf or derived, value, and
    /// ∂output/∂ it when the output is a tensor of shape `()` that reaches
    /// it (`gradients`, its backward pass).
    pub(super) fn var_rows_tensors(
        &self,
        gradients: Option<&TensorGradients>,
    ) -> Vec<TensorVarRow> {
        self.shaped_vars()
            .map(|(name, id)| TensorVarRow {
                name: name.clone(),
                leaf: self.tensors.graph.op(id) == TensorOp::Variable,
                value: tensor_data(self.tensors.graph.value(id)),
                grad: gradients.and_then(|g| g.get(id)).map(tensor_data),
            })
            .collect()
    }

    /// The backward pass of the tensor output for `:vars`, when there is
    /// one of shape `()` (`None` also when Ctrl-C cut it short), with the
    /// output's name.
    pub(super) fn vars_pass_tensors(&self) -> Option<(String, TensorGradients)> {
        let Output {
            node: output,
            label,
        } = self.shaped_output()?;
        if self.tensors.graph.shape(output) != Shape::scalar() {
            return None;
        }
        let gradients = self.tensor_backward(output, Span::default()).ok()?;
        Some((label, gradients))
    }
}

/// The most elements of an operand whose chain rules `--expand` writes.
pub(super) const EXPAND_ELEMENTS: usize = 16;

/// The scalar view of one operand of a traced step: for each of its
/// elements, every term `upstream × local` of its chain rule (the engine's
/// [`TensorGraph::expand`]). Nothing past [`EXPAND_ELEMENTS`] elements.
pub(super) fn element_chains(
    graph: &TensorGraph,
    node: TensorId,
    upstream: &Tensor,
    contribution: &crate::engine::tensor::TensorContribution,
    labels: &[String],
) -> Vec<ElementChain> {
    let input = graph.value(contribution.input);
    if input.len() > EXPAND_ELEMENTS {
        return Vec::new();
    }
    let node_label = &labels[node.index()];
    let node_label = if node_label.contains(' ') {
        format!("({node_label})")
    } else {
        node_label.clone()
    };
    let input_label = &labels[contribution.input.index()];
    let input_label = if input_label.contains(' ') {
        format!("({input_label})")
    } else {
        input_label.clone()
    };
    (0..input.len())
        .map(|k| {
            let terms = graph.expand(node, contribution.position, k, upstream.data());
            ElementChain {
                element: element_name(&input_label, input.shape(), k),
                terms: terms
                    .iter()
                    .map(|t| ElementTermRow {
                        output: element_name(&node_label, graph.shape(node), t.output),
                        upstream: Number(t.upstream),
                        local: Number(t.local),
                    })
                    .collect(),
                value: Number(contribution.contribution.data()[k]),
            }
        })
        .collect()
}
