//! The listings of the output's graph: `:topo`, `:topo kahn`, `:trace`,
//! `:forward`, `:graph` and `:vars`, and how a long listing is summarised.

use std::collections::HashMap;

use super::command::Command;
use super::formula::Formulas;
use super::{
    Event, FunctionRow, GraphLine, KahnRow, Omitted, Session, SessionError, TableFormat,
    TraceContribution, TraceStep, VarRow,
};
use crate::engine::{Gradients, NodeId, Op};
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
    /// (which pages it, `repl/mod.rs`).
    pub(super) fn trace_command(
        &mut self,
        command: &Command,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let all = command.has("all");
        let format = if command.has("md") || command.has("markdown") {
            Some(TableFormat::Markdown)
        } else if command.has("tex") || command.has("latex") {
            Some(TableFormat::Latex)
        } else {
            None
        };
        match format {
            Some(format) => self.trace_table(command, all, format, events),
            None if command.file.is_some() => Err(command.misuse()),
            None => self.trace(command.name.span, all, events),
        }
    }

    /// `:topo [all]`.
    pub(super) fn topo(
        &mut self,
        span: Span,
        all: bool,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let output = self.require_output(span)?;
        let order = self.order_for(output.node);
        let names = self.names_by_node();
        let (shown, omitted) = summarise(order.len(), all);
        let rows = shown
            .take_while(|_| !crate::interrupt::requested())
            .map(|i| self.node_row(i + 1, order[i], &names))
            .collect();
        events.push(Event::Topo {
            of: output.label,
            total: order.len(),
            rows,
            omitted,
        });
        Ok(())
    }

    /// `:trace [all]`: one step per node of the output's graph but the
    /// constants (nobody asks for their gradients), numbered 1, 2, … in reverse
    /// topological order; `total` counts those steps, `constants` the rest.
    pub(super) fn trace(
        &mut self,
        span: Span,
        all: bool,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let output = self.require_output(span)?;
        let order = self.order_for(output.node);
        self.check_first_order(&order, span)?;
        // Positions in `order` of the nodes a trace shows.
        let visible: Vec<usize> = (0..order.len())
            .filter(|&i| self.graph.op(order[i]) != Op::Const)
            .collect();
        let (shown, omitted) = summarise(visible.len(), all);
        let shown: Vec<usize> = shown.collect();
        let kept: Vec<usize> = shown.iter().map(|&k| visible[k]).collect();
        let (_, steps) = self
            .graph
            .backward_traced_where(&order, |i| kept.binary_search(&i).is_ok());
        let names = self.names_by_node();
        let mut formulas = Formulas::new(&self.graph, &names);
        let steps = shown
            .iter()
            .zip(&steps)
            // After Ctrl-C the rest is not built (the statement fails).
            .take_while(|_| !crate::interrupt::requested())
            .map(|(&k, step)| {
                let op = self.graph.op(step.node).info();
                let mut node_formulas = if op.op.is_leaf() {
                    Vec::new()
                } else {
                    formulas.of_node(step.node)
                };
                TraceStep {
                    row: self.node_row(k + 1, step.node, &names),
                    upstream: step.upstream,
                    blocks_gradient: !op.differentiable,
                    contributions: step
                        .contributions
                        .iter()
                        .map(|c| {
                            let formula = node_formulas.get_mut(c.position);
                            TraceContribution {
                                input: self.node_ref(c.input, &names),
                                partial: formula
                                    .as_ref()
                                    .map(|f| f.partial.clone())
                                    .unwrap_or_default(),
                                formula: formula.and_then(|f| f.rhs.take()),
                                local: c.local,
                                product: c.product,
                                before: c.before,
                                after: c.after,
                                passes_nothing: c
                                    .passes_nothing
                                    .then(|| op.passes_nothing_where(c.position)),
                                use_number: c.use_number,
                                use_count: c.use_count,
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        events.push(Event::Trace {
            of: output.label,
            total: visible.len(),
            constants: order.len() - visible.len(),
            steps,
            omitted,
        });
        Ok(())
    }

    /// `:vars`.
    pub(super) fn vars(&mut self, events: &mut Vec<Event>) {
        let output = self.output.clone();
        // Without gradients when there is no output or it cannot be differentiated.
        let grads: Option<(Gradients, Vec<bool>)> = output
            .as_ref()
            .and_then(|o| self.backprop(o, Span::default()).ok());
        let built_from_earlier = self.built_from_earlier();
        let vars = self
            .var_order
            .iter()
            .zip(built_from_earlier)
            .map(|(name, built_from_earlier)| {
                let node = self.vars[name];
                let grad_note = output
                    .as_ref()
                    .zip(grads.as_ref())
                    .and_then(|(o, (_, reached))| self.stale_note(o, name, reached));
                VarRow {
                    name: name.clone(),
                    node,
                    value: self.graph.value(node),
                    leaf: self.graph.op(node) == Op::Variable,
                    grad: grads.as_ref().map(|(g, _)| g[node]),
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
        events.push(Event::Vars {
            of: output.map(|o| o.label),
            vars,
            functions,
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
}

/// Which rows of a listing of `total` to show: all, or the head and the tail.
pub(super) fn summarise(
    total: usize,
    all: bool,
) -> (Box<dyn Iterator<Item = usize>>, Option<Omitted>) {
    if all || total <= HEAD_ROWS + TAIL_ROWS + 5 {
        return (Box::new(0..total), None);
    }
    let omitted = Omitted {
        after: HEAD_ROWS,
        count: total - HEAD_ROWS - TAIL_ROWS,
    };
    (
        Box::new((0..HEAD_ROWS).chain(total - TAIL_ROWS..total)),
        Some(omitted),
    )
}
