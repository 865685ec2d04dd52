//! The gradient commands and the listings: `:grad`, `:backward`, `:topo`,
//! `:trace`, `:vars`.

use std::collections::HashSet;

use super::command::Command;
use super::formula::Formulas;
use super::{
    Event, Omitted, Output, Session, SessionError, TableFormat, TraceContribution, TraceStep,
    VarRow, nearest,
};
use crate::engine::{Gradients, NodeId, Op};
use crate::syntax::{Ident, Span};

/// Long listings show this many rows from the start and from the end.
const HEAD_ROWS: usize = 20;
const TAIL_ROWS: usize = 5;

impl Session {
    /// `:backward NAME`: makes NAME the output, then `:grad`.
    pub(super) fn backward(
        &mut self,
        command: &Command,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let target = command.names[0];
        let node = self.variable_node(target)?;
        self.output = Some(Output {
            node,
            label: target.name.clone(),
        });
        self.grad(command.name.span, &[], events)
    }

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

    /// The output, or the error that there is none yet.
    pub(super) fn require_output(&self, span: Span) -> Result<Output, SessionError> {
        self.output
            .clone()
            .ok_or(SessionError::NoOutput { span, wrt: None })
    }

    /// Backpropagates from the output: the gradients, and which nodes it reaches.
    ///
    /// Errors: [`SessionError::SecondDerivative`] when the output uses `f'(x)` of a variable.
    pub(super) fn backprop(
        &mut self,
        output: &Output,
        span: Span,
    ) -> Result<(Gradients, Vec<bool>), SessionError> {
        let order = self.order_for(output.node);
        self.check_first_order(&order, span)?;
        let gradients = self.graph.backward(&order);
        let mut reached = vec![false; self.graph.len()];
        for id in order.iter() {
            reached[id.0 as usize] = true;
        }
        Ok((gradients, reached))
    }

    /// The node of a variable named in a command.
    pub(super) fn variable_node(&self, ident: &Ident) -> Result<NodeId, SessionError> {
        if let Some(&node) = self.vars.get(&ident.name) {
            return Ok(node);
        }
        if let Some(node) = self.labelled_node(&ident.name, ident.span)? {
            return Ok(node);
        }
        if super::RESULT_NAMES.contains(&ident.name.as_str()) {
            if let Some(node) = self.last {
                return Ok(node);
            }
        }
        if self.functions.contains_key(&ident.name) || Op::from_function_name(&ident.name).is_some()
        {
            return Err(SessionError::BadArguments {
                message: format!("`{}` is a function, not a variable", ident.name),
                span: ident.span,
                help: Some(
                    "gradients are taken with respect to variables, e.g. `:grad x`".to_string(),
                ),
            });
        }
        if super::CONSTANTS.iter().any(|(c, _)| *c == ident.name) {
            return Err(SessionError::BadArguments {
                message: format!("`{}` is a constant, not a variable", ident.name),
                span: ident.span,
                help: Some(format!(
                    "assign it to take gradients: `{0} = …`",
                    ident.name
                )),
            });
        }
        Err(SessionError::UnknownName {
            name: ident.name.clone(),
            span: ident.span,
            suggestion: nearest(&ident.name, self.var_order.iter().map(String::as_str)),
        })
    }

    /// `:grad [NAMES]`.
    pub(super) fn grad(
        &mut self,
        span: Span,
        args: &[Ident],
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let output = self.require_output(span).map_err(|error| {
            // `x = 5; :grad x`: x is a leaf, only the output is missing.
            match args.iter().find(|arg| self.vars.contains_key(&arg.name)) {
                Some(arg) => SessionError::NoOutput {
                    span,
                    wrt: Some(arg.name.clone()),
                },
                None => error,
            }
        })?;
        let mut targets: Vec<(String, NodeId)> = Vec::new();
        // Names already asked for: K names in O(K), not O(K²).
        let mut seen: HashSet<&str> = HashSet::with_capacity(args.len());
        for arg in args {
            let node = self.variable_node(arg)?;
            if seen.insert(arg.name.as_str()) {
                targets.push((arg.name.clone(), node));
            }
        }
        let (gradients, reached) = self.backprop(&output, span)?;
        if args.is_empty() {
            // Every variable the output reaches, except the output's own name
            // (∂z/∂z = 1 says nothing), unless that is all there is (`x = 2; x`);
            // and every variable the output was built from an earlier binding of,
            // whose gradient is 0 for a reason worth saying.
            let reached_names: Vec<(String, NodeId)> = self
                .var_order
                .iter()
                .map(|name| (name.clone(), self.vars[name]))
                .filter(|(_, node)| reached[node.index()])
                .collect();
            targets = self
                .var_order
                .iter()
                .map(|name| (name.clone(), self.vars[name]))
                .filter(|(name, node)| {
                    (reached[node.index()] && *name != output.label)
                        || self.stale_note(&output, name, &reached).is_some()
                })
                .collect();
            if targets.is_empty() && self.graph.op(output.node) == Op::Variable {
                targets = reached_names;
            }
            if targets.is_empty() {
                events.push(Event::Notice {
                    message: format!("{} depends on no variable", output.label),
                });
            }
        }
        for (name, node) in targets {
            let note = (!reached[node.index()]).then(|| {
                self.stale_note(&output, &name, &reached)
                    .unwrap_or_else(|| format!("{} does not depend on {name}", output.label))
            });
            events.push(Event::Grad {
                of: output.label.clone(),
                wrt: name,
                value: gradients[node],
                note,
            });
        }
        Ok(())
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
        events.push(Event::Vars {
            of: output.map(|o| o.label),
            vars,
        });
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
