//! The `:` commands: `:grad`, `:backward`, `:topo`, `:trace`, `:vars`, `:help`, `:stats`,
//! `:gc`, `:reset`, `:quit`; the teaching commands are in `teaching.rs`.

use super::{
    Event, Omitted, Output, PictureFormat, Session, SessionError, Target, TraceContribution,
    TraceStep, VarRow, nearest,
};
use crate::engine::{Gradients, NodeId, Op};
use crate::syntax::{Ident, Span};

/// Every command: name, arguments, and what it does (for `:help` and completion).
pub const COMMANDS: &[(&str, &str, &str)] = &[
    (
        "grad",
        "[NAMES]",
        "∂output/∂name for the names given, or for every variable the output depends on",
    ),
    (
        "backward",
        "NAME",
        "make NAME the output and print all its gradients",
    ),
    (
        "topo",
        "[kahn] [all]",
        "the reverse topological order backprop walks (alias `:order`); `kahn`: PyTorch's dependency-counting order",
    ),
    (
        "trace",
        "[all|md|tex]",
        "backprop step by step: upstream gradient, local derivatives, products, accumulation; `:trace md [FILE]`, `:trace tex [FILE]`: a table for notes",
    ),
    (
        "forward",
        "[all]",
        "the forward evaluation order with values, inputs first",
    ),
    (
        "graph",
        "",
        "the output's graph as a tree: name, op, value, gradient; shared nodes drawn once",
    ),
    (
        "dot",
        "[FILE] [--before | --step K | DIR --steps]",
        "the graph as Graphviz DOT: {name | value | grad} records, op nodes, edges labelled with local derivatives",
    ),
    (
        "svg",
        "FILE [--before | --step K] | DIR --steps",
        "the same picture as SVG for slides, laid out without Graphviz; --step K: after backward step K of :trace",
    ),
    (
        "check",
        "[NAMES]",
        "gradient check: reverse mode against a central difference, within |difference| ≤ atol + rtol·|numeric| (as torch.autograd.gradcheck); pass, warn, FAIL or kink; without names, the leaves the output depends on",
    ),
    (
        "paths",
        "NAME",
        "every path from the output to NAME with its product of local derivatives; they sum to the gradient",
    ),
    (
        "plot",
        "NAME [FROM TO]",
        "the output as a function of NAME, with its derivative, in the terminal; `:plot x -3 3 FILE.svg` writes SVG",
    ),
    (
        "step",
        "[all]",
        "backprop one step per Enter, as `:trace` shows it (q stops; in scripts, like `:trace`)",
    ),
    ("vars", "", "the variables with their values and gradients"),
    (
        "help",
        "[TOPIC]",
        "this help; `:help tanh` for a function, `:help grad` for the conventions",
    ),
    (
        "stats",
        "",
        "graph size: nodes, reachable nodes, bytes, sorts, the last reclaim",
    ),
    (
        "gc",
        "",
        "reclaim the nodes no name, output or `ans` can reach",
    ),
    ("reset", "", "forget all variables, functions and the graph"),
    (
        "save",
        "FILE",
        "write the session's statements to FILE as a script (`-f` replaces an existing FILE)",
    ),
    (
        "load",
        "FILE",
        "run the script FILE into this session (it may `:load` others)",
    ),
    ("quit", "", "leave gradcalc (also Ctrl-D)"),
];

/// The commands that write a file, and so take `-f` / `--force`.
const FORCE_COMMANDS: [&str; 6] = ["save", "dot", "svg", "trace", "step", "plot"];
const FORCE_FLAGS: [&str; 2] = ["-f", "--force"];

/// Long listings show this many rows from the start and from the end.
const HEAD_ROWS: usize = 20;
const TAIL_ROWS: usize = 5;

impl Session {
    /// Runs one command.
    pub(super) fn command(
        &mut self,
        name: &Ident,
        args: &[Ident],
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        // `-f` / `--force` among a file-writing command's arguments: replace an
        // existing file. It is taken out here and marked on the events' targets.
        if FORCE_COMMANDS.contains(&name.name.as_str())
            && args.iter().any(|a| FORCE_FLAGS.contains(&a.name.as_str()))
        {
            let rest: Vec<Ident> = args
                .iter()
                .filter(|a| !FORCE_FLAGS.contains(&a.name.as_str()))
                .cloned()
                .collect();
            let first = events.len();
            self.command(name, &rest, events)?;
            for event in &mut events[first..] {
                if let Some(target) = event.target_mut() {
                    target.force = true;
                }
            }
            return Ok(());
        }
        match name.name.as_str() {
            "grad" => self.grad(name.span, args, events),
            "backward" => {
                let [target] = args else {
                    return Err(bad_arguments(
                        name,
                        args,
                        "`:backward` takes one name",
                        "e.g. `:backward z`",
                    ));
                };
                let node = self.variable_node(target)?;
                self.output = Some(Output {
                    node,
                    label: target.name.clone(),
                });
                self.grad(name.span, &[], events)
            }
            "topo" | "order" => match super::teaching::topo_flags(name, args)? {
                (all, true) => self.topo_kahn(name.span, all, events),
                (all, false) => self.topo(name.span, all, events),
            },
            // `:step` pages the trace in the REPL (repl/mod.rs); elsewhere it is `:trace`.
            "trace" | "step" if args.iter().any(|a| a.name != "all") => {
                self.trace_table(name, args, events)
            }
            "trace" | "step" => {
                let all = self.only_all(name, args)?;
                self.trace(name.span, all, events)
            }
            "graph" => {
                no_arguments(name, args)?;
                self.graph_tree(name.span, events)
            }
            "forward" => {
                let all = self.only_all(name, args)?;
                self.forward_order(name.span, all, events)
            }
            "check" => self.check(name.span, args, events),
            "paths" => {
                let [target] = args else {
                    return Err(bad_arguments(
                        name,
                        args,
                        "`:paths` takes one name",
                        "e.g. `:paths b`",
                    ));
                };
                self.paths(name.span, target, events)
            }
            "dot" => self.picture(name, args, PictureFormat::Dot, events),
            "svg" => self.picture(name, args, PictureFormat::Svg, events),
            "plot" => self.plot(name, args, events),
            "vars" => {
                no_arguments(name, args)?;
                self.vars(events);
                Ok(())
            }
            "help" => {
                let topic = match args {
                    [] => None,
                    [topic] => Some(topic),
                    _ => {
                        return Err(bad_arguments(
                            name,
                            args,
                            "`:help` takes one topic",
                            "e.g. `:help tanh`",
                        ));
                    }
                };
                events.push(self.help(topic)?);
                Ok(())
            }
            "stats" => {
                no_arguments(name, args)?;
                self.stats_command(events);
                Ok(())
            }
            "gc" => {
                no_arguments(name, args)?;
                self.gc_command(events);
                Ok(())
            }
            "reset" => {
                no_arguments(name, args)?;
                self.reset();
                events.push(Event::Reset);
                Ok(())
            }
            "quit" | "exit" | "q" => {
                events.push(Event::Quit);
                Ok(())
            }
            "save" | "load" => {
                let [file] = args else {
                    return Err(bad_arguments(
                        name,
                        args,
                        &format!("`:{}` takes one file name", name.name),
                        "e.g. `:save lesson.calc`, or `\"my lesson.calc\"` for a name with spaces",
                    ));
                };
                let target = Target::from_word(file);
                events.push(if name.name == "save" {
                    Event::Save {
                        script: self.script(),
                        statements: self.statement_count(),
                        target,
                    }
                } else {
                    Event::Load { target }
                });
                Ok(())
            }
            other => Err(SessionError::UnknownCommand {
                name: other.to_string(),
                span: name.span,
                suggestion: nearest(other, COMMANDS.iter().map(|c| c.0).chain(["order", "exit"])),
            }),
        }
    }

    /// The output, or the error that there is none yet.
    pub(super) fn require_output(&self, span: Span) -> Result<Output, SessionError> {
        self.output.clone().ok_or(SessionError::NoOutput { span })
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
    fn grad(
        &mut self,
        span: Span,
        args: &[Ident],
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let output = self.require_output(span)?;
        let mut targets: Vec<(String, NodeId)> = Vec::new();
        for arg in args {
            let node = self.variable_node(arg)?;
            if targets.iter().all(|(name, _)| *name != arg.name) {
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
            if targets.is_empty() && self.graph.op(output.node) == Op::Input {
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
    fn topo(&mut self, span: Span, all: bool, events: &mut Vec<Event>) -> Result<(), SessionError> {
        let output = self.require_output(span)?;
        let order = self.order_for(output.node);
        let names = self.names_by_node();
        let (shown, omitted) = summarise(order.len(), all);
        let rows = shown
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

    /// `:trace [all]`.
    pub(super) fn trace(
        &mut self,
        span: Span,
        all: bool,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let output = self.require_output(span)?;
        let order = self.order_for(output.node);
        self.check_first_order(&order, span)?;
        let (shown, omitted) = summarise(order.len(), all);
        let shown: Vec<usize> = shown.collect();
        let (_, steps) = self
            .graph
            .backward_traced_where(&order, |i| shown.binary_search(&i).is_ok());
        let names = self.names_by_node();
        let steps = shown
            .iter()
            .zip(&steps)
            .map(|(&i, step)| {
                let op = self.graph.op(step.node).info();
                TraceStep {
                    row: self.node_row(i + 1, step.node, &names),
                    upstream: step.upstream,
                    blocks_gradient: !op.differentiable,
                    contributions: step
                        .contributions
                        .iter()
                        .map(|c| TraceContribution {
                            input: self.node_ref(c.input, &names),
                            formula: op.formula(c.position),
                            local: c.local,
                            product: c.product,
                            before: c.before,
                            after: c.after,
                            use_number: c.use_number,
                            use_count: c.use_count,
                        })
                        .collect(),
                }
            })
            .collect();
        events.push(Event::Trace {
            of: output.label,
            total: order.len(),
            steps,
            omitted,
        });
        Ok(())
    }

    /// `:vars`.
    fn vars(&mut self, events: &mut Vec<Event>) {
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
                    leaf: self.graph.op(node) == Op::Input,
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

    /// Accepts no arguments or the single word `all`.
    fn only_all(&self, name: &Ident, args: &[Ident]) -> Result<bool, SessionError> {
        match args {
            [] => Ok(false),
            [a] if a.name == "all" => Ok(true),
            _ => Err(bad_arguments(
                name,
                args,
                &format!("`:{}` takes no arguments or `all`", name.name),
                &format!("e.g. `:{} all` to list every node", name.name),
            )),
        }
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

fn no_arguments(name: &Ident, args: &[Ident]) -> Result<(), SessionError> {
    if args.is_empty() {
        Ok(())
    } else {
        Err(bad_arguments(
            name,
            args,
            &format!("`:{}` takes no arguments", name.name),
            &format!("type just `:{}`", name.name),
        ))
    }
}

pub(super) fn bad_arguments(
    name: &Ident,
    args: &[Ident],
    message: &str,
    help: &str,
) -> SessionError {
    let span = args.iter().fold(name.span, |s, a| s.to(a.span));
    SessionError::BadArguments {
        message: message.to_string(),
        span,
        help: Some(help.to_string()),
    }
}
