//! Changing a leaf in place and running statements again: `b := 3` and
//! `:repeat N STATEMENT` (gradient descent in the REPL:
//! `:repeat 50 w := w - 0.1*grad(L, w)`).

use super::Answer;
use super::Value;
use super::derivatives::{CalculusEvent, Change, MovedValue, RepeatRow};
use super::error::ErrorCode;
use super::eval::Rhs;
use super::tensors::{tensor_data, tensor_error};
use super::{Event, Node, Notice, Number, Session, SessionError, Target};
use crate::engine::{NodeId, Op};
use crate::syntax::{AssignOp, ExprKind, ExprTree, Ident, Located, Repeat, Span, Statement};

/// Each of `names` made into a `T` by `each`, in order, refusing a name that
/// repeats an earlier one: `(twice, help)` say what a repeat is (after the
/// name: "is given twice") and what to do instead.
///
/// Errors: [`SessionError::BadArguments`] at the first repeat, or the first
/// error of `each`, whichever comes first in `names`.
pub(super) fn each_once<'a, T>(
    names: impl IntoIterator<Item = &'a Ident>,
    (twice, help): (&str, &str),
    mut each: impl FnMut(&'a Ident) -> Result<T, SessionError>,
) -> Result<Vec<T>, SessionError> {
    let mut seen: Vec<&Ident> = Vec::new();
    let mut made = Vec::new();
    for name in names {
        if seen.iter().any(|earlier| earlier.name == name.name) {
            return Err(SessionError::BadArguments {
                message: format!("`{}` {twice}", name.name),
                span: name.span,
                help: Some(help.to_string()),
            });
        }
        seen.push(name);
        made.push(each(name)?);
    }
    Ok(made)
}

/// The most steps one `:repeat` runs.
pub const MAX_REPEAT: usize = 1_000_000;

/// A `:repeat` of at most this many steps shows every step; a longer one
/// shows the first [`HEAD_STEPS`], about [`SAMPLED_STEPS`] evenly spaced
/// ones, and the last.
const ALL_STEPS: usize = 20;
const HEAD_STEPS: usize = 3;
const SAMPLED_STEPS: usize = 10;

impl Session {
    /// The current values of `names`, nan for a name that is not bound (a
    /// `:repeat` table row).
    fn values_of(&self, names: &[String]) -> Vec<Number> {
        names
            .iter()
            .map(|n| {
                Number(
                    self.scalar_var(n)
                        .map_or(f64::NAN, |id| self.graph.value(id)),
                )
            })
            .collect()
    }

    /// `name := value`: sets the variable leaf `name` to the value of `tree`
    /// and evaluates every node built from it again (`Graph::update_leaf`).
    /// No node is added: the nodes the right side built are removed again.
    ///
    /// Errors: an unknown name; a name bound to a computed value (not a leaf),
    /// with the suggestion to rebind it with `=`; any error of the right side.
    pub(super) fn update(
        &mut self,
        target: &Ident,
        tree: &ExprTree,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let node = self.settable_leaf(target)?;
        let number = self.value_here(tree, events)?;
        self.check_interrupt()?;
        let set = [(target.name.clone(), node, number)];
        self.set_leaves(&set, target.span.to(tree.span()), events);
        Ok(())
    }

    /// `w1, b := e1, e2`: every value is computed at the current point, then
    /// all the leaves are set together and the nodes built from any of them
    /// are evaluated again once (`Graph::update_leaves`): one step of gradient
    /// descent over several parameters, where `w1 := e1; b := e2` would take
    /// `e2` after w1 moved.
    ///
    /// Errors: as [`Session::update`] for each name; a name given twice; a
    /// count of values other than the count of names. Nothing changes on an
    /// error.
    pub(super) fn update_together(
        &mut self,
        targets: &[Ident],
        values: &[ExprTree],
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let whole = targets[0]
            .span
            .to(values.last().map_or(targets[0].span, ExprTree::span));
        if targets.len() != values.len() {
            let names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
            return Err(SessionError::BadArguments {
                message: format!(
                    "{} names but {} value{}: a simultaneous update takes one value per name, in the same order",
                    targets.len(),
                    values.len(),
                    if values.len() == 1 { "" } else { "s" }
                ),
                span: whole,
                help: Some(format!(
                    "one value per name: `{} := {}`",
                    names.join(", "),
                    vec!["…"; names.len()].join(", ")
                )),
            });
        }
        let sets = each_once(
            targets,
            (
                "is updated twice in one statement",
                "give each name one value",
            ),
            |target| Ok((target.name.clone(), self.settable_leaf(target)?)),
        )?;
        let mut numbers = Vec::with_capacity(values.len());
        for tree in values {
            numbers.push(self.value_here(tree, events)?);
        }
        self.check_interrupt()?;
        let sets: Vec<(String, NodeId, f64)> = sets
            .into_iter()
            .zip(numbers)
            .map(|((name, node), number)| (name, node, number))
            .collect();
        self.set_leaves(&sets, whole, events);
        Ok(())
    }

    /// The leaf `target` names, if `:=` may set it.
    ///
    /// Errors: a node label, an unknown name, a name bound to a computed value.
    pub(super) fn settable_leaf(&self, target: &Ident) -> Result<NodeId, SessionError> {
        let name = target.name.as_str();
        if super::label_id(name).is_some() || name.contains('.') {
            return Err(SessionError::BadArguments {
                message: format!(
                    "`{name}` is a node label, not a variable: `:=` changes a variable by its name"
                ),
                span: target.span,
                help: Some("give the value a name first (`a = 1`), then `a := 5`".to_string()),
            });
        }
        let Some(node) = self.scalar_var(name) else {
            return Err(SessionError::BadArguments {
                message: format!("`{name}` is not a variable yet: `:=` changes one in place"),
                span: target.span,
                help: Some(format!("create it with `{name} = …`")),
            });
        };
        if self.graph.op(node) != Op::Variable {
            return Err(SessionError::BadArguments {
                message: format!(
                    "`{name}` is not a leaf: its value is computed from other values, so it cannot be set in place"
                ),
                span: target.span,
                help: Some(format!(
                    "change a leaf it is built from with `:=`, or rebind `{name}` to a new leaf with `{name} = …` (values built from the old {name} keep theirs)"
                )),
            });
        }
        Ok(node)
    }

    /// The value of `tree` at the current point; the nodes it built are
    /// removed again.
    fn value_here(
        &mut self,
        tree: &ExprTree,
        events: &mut Vec<Event>,
    ) -> Result<f64, SessionError> {
        let mark = self.graph.len();
        let result = self.evaluate(tree, events);
        let number = result.map(|value| self.graph.value(value.node));
        self.graph.truncate(mark);
        self.forget_groups_past(mark);
        number
    }

    /// Sets the leaves of `sets` (name, leaf, value) together, evaluates their
    /// dependents again, and reports: one `Updated` event a name, the last
    /// one with the nodes evaluated again and the named values that moved;
    /// warnings (at `span`) for a value that became inf or nan and for a
    /// stored derivative now on another branch.
    fn set_leaves(&mut self, sets: &[(String, NodeId, f64)], span: Span, events: &mut Vec<Event>) {
        let is_target = |n: &str| sets.iter().any(|(name, _, _)| name == n);
        let named: Vec<(String, NodeId, f64)> = self
            .scalar_vars()
            .filter(|(n, _)| !is_target(n))
            .map(|(n, node)| (n.clone(), node, self.graph.value(node)))
            .collect();
        let leaves: Vec<(NodeId, f64)> =
            sets.iter().map(|&(_, node, value)| (node, value)).collect();
        self.journal_leaves(leaves.iter().map(|&(leaf, _)| leaf));
        let updated = self.graph.update_leaves(&leaves);
        // The tensors that read these scalars follow them; those of shape ()
        // that moved are reported beside the scalars.
        let tensors_before = self.shape_scalar_values();
        // Vectors and matrices that moved are listed after the `Updated`s.
        let mut shaped_before = self.values_now(&[]);
        shaped_before.retain(|(_, _, was)| matches!(was, ValueNow::Tensor(_)));
        self.tensors.rerun_whole(&self.graph);
        let shaped_moved = self.moved_since(shaped_before);
        let tensors_changed: Vec<Change> = tensors_before
            .into_iter()
            .zip(self.shape_scalar_values())
            .filter(|((_, before), (_, after))| before.to_bits() != after.to_bits())
            .map(|((name, before), (_, after))| Change {
                name,
                before: Number(before),
                after: Number(after),
            })
            .collect();
        let names: Vec<&str> = sets.iter().map(|(name, _, _)| name.as_str()).collect();
        self.warn_stale_branches(&updated, &names.join(", "), span, events);
        // As evaluation warns: the first node evaluated again that made inf
        // or nan out of finite inputs.
        let broken = updated.iter().find_map(|&id| {
            let value = self.graph.value(id);
            let inputs = self.operand_values(id);
            (!value.is_finite() && inputs.iter().all(|v| v.is_finite()))
                .then(|| super::eval::non_finite_message(self.graph.op(id), value, &inputs))
        });
        let changed: Vec<Change> = named
            .into_iter()
            .filter(|(_, node, _)| updated.binary_search(node).is_ok())
            .map(|(n, node, before)| Change {
                after: Number(self.graph.value(node)),
                name: n,
                before: Number(before),
            })
            .chain(tensors_changed)
            .collect();
        if let Some(message) = broken {
            let now: Vec<String> = changed
                .iter()
                .filter(|c| !c.after.0.is_finite())
                .map(|c| match c.after {
                    v if v.0.is_nan() => format!("{} = nan", c.name),
                    v if v.0 > 0.0 => format!("{} = inf", c.name),
                    _ => format!("{} = -inf", c.name),
                })
                .collect();
            let message = match now.as_slice() {
                [] => message,
                now => format!("{message}: now {}", now.join(", ")),
            };
            events.push(Event::Warning { message, span });
        }
        let mut changed = Some(changed);
        for (i, (name, node, value)) in sets.iter().enumerate() {
            let last = i + 1 == sets.len();
            self.last = Some(Node::Scalar(*node));
            events.push(Event::Calculus(CalculusEvent::Updated {
                name: name.clone(),
                value: Number(*value),
                recomputed: if last { updated.len() } else { 0 },
                changed: if last {
                    changed.take().unwrap_or_default()
                } else {
                    Vec::new()
                },
            }));
        }
        if !shaped_moved.is_empty() {
            events.push(Event::Calculus(CalculusEvent::Moved {
                changed: shaped_moved,
            }));
        }
    }

    /// After `:=` (`updated`: the nodes evaluated again, in increasing
    /// order), warns about each stored derivative (`g = grad(y, x)`, `f'(a)`)
    /// built across a piecewise op that now takes another branch than when it
    /// was built: relu across 0, another operand the largest of a `max` or
    /// the smallest of a `min`, `^` at a base or exponent of 0. A derivative
    /// graph keeps the branch it was built on (it holds which operand passes
    /// gradient, not a test), so its value need not be the derivative at the new
    /// point; evaluating it again is.
    fn warn_stale_branches(
        &self,
        updated: &[NodeId],
        targets: &str,
        span: Span,
        events: &mut Vec<Event>,
    ) {
        for group in &self.derivative_groups {
            let Some(&(id, _)) = group.branches.iter().find(|(id, built)| {
                updated.binary_search(id).is_ok() && self.passes_at(*id) != *built
            }) else {
                continue;
            };
            // A derivative that is a variable from before it, `w` of
            // `grad(relu(x)*w, x)`, is named by its label only: the
            // variable's names (`w`) are not what went stale.
            let names: Vec<&str> = self
                .scalar_vars()
                .filter(|&(_, bound)| {
                    (group.first..group.end).contains(&bound)
                        || (bound == group.result && bound >= group.first)
                })
                .map(|(n, _)| n.as_str())
                .collect();
            let what = match names.as_slice() {
                [] => format!("`{}`", group.label),
                names => format!("{} (`{}`)", names.join(", "), group.label),
            };
            events.push(Event::Warning {
                message: format!(
                    "{what} was built while `{}` took another branch than it takes now; it keeps the old branch, so it need not be the derivative at the new {}: evaluate `{}` again",
                    self.piecewise_node_text(id),
                    targets,
                    group.label
                ),
                span,
            });
        }
    }

    /// A piecewise node as the warning names it: `relu(x)`, `max(a, b)`, its
    /// operands by name (or label).
    fn piecewise_node_text(&self, id: NodeId) -> String {
        let names = self.names_by_node();
        let inputs: Vec<String> = self
            .graph
            .operands(id)
            .iter()
            .map(|&operand| {
                let node = self.node_ref(operand, &names);
                match (&node.name, node.constant) {
                    (Some(name), _) => name.clone(),
                    (None, Some(value)) => ExprTree::number(value).to_string(),
                    (None, None) => node.label(),
                }
            })
            .collect();
        let op = self.graph.op(id);
        match (op.info().notation, inputs.as_slice()) {
            (crate::engine::Notation::Infix, [a, b]) => format!("{a} {} {b}", op.info().name),
            _ => format!("{}({})", op.info().name, inputs.join(", ")),
        }
    }

    /// Runs `:repeat` (written at `whole` in `source`) and records what ran
    /// for `:save`.
    ///
    /// Errors: as [`Session::repeat`]; a file that exists, without `-f`,
    /// when the REPL's question is not answered yes (nothing runs).
    pub(super) fn repeat_statement(
        &mut self,
        source: &str,
        whole: Span,
        repeat: &Repeat,
    ) -> Result<Vec<Event>, SessionError> {
        let mut force = repeat.force;
        let forced = |count: &Ident, file: &Ident| {
            format!(
                ":repeat {} -f {} {}",
                count.name,
                file.name,
                source[repeat.body_span.start..repeat.body_span.end].trim()
            )
        };
        // A file that would be refused after every step ran is refused first;
        // the REPL asks whether to replace it, before the first step too.
        if let Some(file) = &repeat.file {
            self.check_writable(file)?;
        }
        if let (Some(count), Some(file), false) = (&repeat.count, &repeat.file, force) {
            let target = Target::from_word(file);
            if target.path != "-" && crate::files::exists(&target.path) {
                let shown = crate::files::expand_tilde(&target.path)
                    .display()
                    .to_string();
                let answer = self.confirm.0.as_mut().map(|ask| ask(&shown));
                let message = match answer {
                    Some(Answer::Yes) => None,
                    Some(Answer::Cancelled) => {
                        self.cancelled = true;
                        Some(format!(
                            "{shown} not replaced: the question was cancelled; nothing ran"
                        ))
                    }
                    Some(Answer::No) | None => Some(format!(
                        "cannot write {shown}: it already exists (not replaced); nothing ran"
                    )),
                };
                match message {
                    None => force = true,
                    Some(message) => {
                        return Err(SessionError::BadArguments {
                            message,
                            span: file.span,
                            help: Some(repeat_force_hint(&forced(count, file))),
                        });
                    }
                }
            }
        }
        let mut events = Vec::new();
        let result = self.repeat(source, repeat, &mut events);
        if let (Some(target), Some(count), Some(file)) = (
            events.iter_mut().rev().find_map(|e| {
                let Event::Calculus(CalculusEvent::Repeat { target, .. }) = e else {
                    return None;
                };
                target.as_mut()
            }),
            &repeat.count,
            &repeat.file,
        ) {
            target.force = force;
            target.forced = forced(count, file);
            target.steps_kept = true;
        }
        if let Ok(ran) = &result {
            // What ran, so that `:save` rebuilds this session: after Ctrl-C,
            // the steps finished (`:repeat K …`) and the statements of the step
            // cut short that had run.
            match (&repeat.count, ran.steps == ran.requested) {
                (_, true) => self.record(&source[whole.start..whole.end]),
                (Some(count), false) => {
                    if ran.steps > 0 {
                        let rest = &source[count.span.end..whole.end];
                        self.record(&format!(":repeat {}{}", ran.steps, rest.trim_end()));
                    }
                    for piece in &ran.partial {
                        self.record(source[piece.start..piece.end].trim());
                    }
                }
                (None, false) => {}
            }
        }
        self.collect_if_due();
        result.map(|_| events)
    }

    /// `:repeat N [FILE.svg] STATEMENTS`: runs assignments (usually `:=`) or
    /// expressions, `;`-separated, N times, then reports a table of the output
    /// and the assigned variables after the steps, and the output over the
    /// steps as a plot. `source` is the text `repeat` was parsed from.
    ///
    /// Returns what ran (fewer steps than asked after Ctrl-C).
    ///
    /// Errors: a missing or bad N; a statement that is a command or a
    /// definition; the first error of a step (the steps before it are kept).
    fn repeat(
        &mut self,
        source: &str,
        repeat: &Repeat,
        events: &mut Vec<Event>,
    ) -> Result<Ran, SessionError> {
        let Some(count) = &repeat.count else {
            return Err(repeat_usage(
                repeat.head,
                "`:repeat` takes a count and a statement",
            ));
        };
        let steps = match count.name.parse::<usize>() {
            Ok(n) if (1..=MAX_REPEAT).contains(&n) => n,
            _ => {
                return Err(repeat_usage(
                    count.span,
                    &format!("the count must be a whole number from 1 to {MAX_REPEAT}"),
                ));
            }
        };
        let target = repeat.file.as_ref().map(Target::from_word);
        let pieces: Vec<Span> = repeat.body.iter().map(|located| located.span).collect();
        let (Some(first), Some(last)) = (pieces.first(), pieces.last()) else {
            return Err(repeat_usage(
                repeat.head.to(count.span),
                "`:repeat` needs a statement to run",
            ));
        };
        let text = source[first.start..last.end].to_string();
        let (statements, assigned) = repeat_statements(&repeat.body, events)?;
        self.refuse_tensor_repeat(&statements, first.to(*last))?;
        if let Some(warning) = self.one_after_another(&statements, &count.name, repeat.body_span) {
            events.push(warning);
        }
        let keep = |step: usize| keeps_step(step, steps);
        // Step 0: the point the steps start from.
        let start = self.scalar_output().map(|o| self.graph.value(o.node));
        let mut rows = vec![RepeatRow {
            step: 0,
            output: start.map(Number),
            values: self.values_of(&assigned),
        }];
        let mut outputs = Vec::with_capacity(steps + 1);
        outputs.push(start.map(Number));
        let mut done = 0;
        let mut interrupted = false;
        // The statements of the step cut short by Ctrl-C that had run.
        let mut partial: &[Span] = &[];
        // The values after the last finished step: the table's last row when
        // Ctrl-C cuts the next step short (its kept statements change them).
        let mut finished = vec![Number(f64::NAN); assigned.len()];
        let mut finished_output = None;
        for step in 1..=steps {
            let mut step_events = Vec::new();
            if let Some(ran) = self.repeat_step(&statements, &mut step_events)? {
                // Ctrl-C inside a step: the statement cut short is undone,
                // the steps (and statements) before it are kept.
                interrupted = true;
                partial = &pieces[..ran];
                break;
            }
            if step == 1 {
                // Warnings of the first step only: later steps would repeat them.
                events.extend(
                    step_events
                        .into_iter()
                        .filter(|e| matches!(e, Event::Warning { .. } | Event::Notice { .. })),
                );
            }
            done = step;
            let output = self.scalar_output().map(|o| self.graph.value(o.node));
            outputs.push(output.map(Number));
            finished_output = output;
            if keep(step) {
                let values = self.values_of(&assigned);
                rows.push(RepeatRow {
                    step,
                    output: output.map(Number),
                    values,
                });
            } else {
                self.finished_values(&assigned, &mut finished);
            }
            if crate::interrupt::requested() {
                interrupted = step < steps;
                break;
            }
            if step % 1024 == 0 {
                self.collect_if_due();
            }
        }
        push_last_step(&mut rows, done, finished_output, finished);
        events.push(Event::Calculus(CalculusEvent::Repeat {
            statement: text,
            of: self.output.as_ref().map(|o| o.label.clone()),
            assigned,
            steps: done,
            requested: steps,
            rows,
            outputs,
            interrupted,
            partial: partial.len(),
            target,
        }));
        Ok(Ran {
            steps: done,
            requested: steps,
            partial: partial.to_vec(),
        })
    }

    /// Writes the values of the `assigned` variables now into `finished`
    /// (NaN for one not bound), the row of a step the table does not keep.
    fn finished_values(&self, assigned: &[String], finished: &mut [Number]) {
        for (value, name) in finished.iter_mut().zip(assigned) {
            *value = Number(
                self.scalar_var(name)
                    .map_or(f64::NAN, |id| self.graph.value(id)),
            );
        }
    }

    /// Runs one step of `:repeat`: each of `statements` in order, their
    /// events to `step_events` (an expression's value becomes `last`).
    /// `Some(i)` when Ctrl-C cut statement `i` short (it is undone, the
    /// `i` before it are kept); `None` when all ran.
    ///
    /// Errors: the first error of a statement.
    fn repeat_step(
        &mut self,
        statements: &[Statement],
        step_events: &mut Vec<Event>,
    ) -> Result<Option<usize>, SessionError> {
        for (i, statement) in statements.iter().enumerate() {
            let mark = self.graph.len();
            let ran = match statement {
                Statement::Assign { target, op, value } => self
                    .assign(target, *op, &Rhs::whole(value), step_events)
                    .map(|_| ()),
                Statement::Updates { targets, values } => {
                    self.update_together(targets, values, step_events)
                }
                Statement::Expr(tree) => self.evaluate(tree, step_events).and_then(|value| {
                    self.check_interrupt()?;
                    let number = self.graph.value(value.node);
                    self.graph.truncate(mark);
                    self.forget_groups_past(mark);
                    let last = self.graph.constant(number);
                    self.last = Some(Node::Scalar(last));
                    Ok(())
                }),
                _ => Ok(()),
            };
            match ran {
                // Ctrl-C inside a step: that statement is undone, the
                // steps (and statements) before it are kept.
                Err(error) if error.is_interrupted() => {
                    self.undo_past(mark, self.statements.len());
                    return Ok(Some(i));
                }
                ran => ran?,
            }
        }
        Ok(None)
    }
}

/// Adds the row of step `done` (its `output` and `finished` values) to
/// `rows` when the last row kept is of an earlier step (a loop stopped on a
/// step the table does not keep); nothing when no step finished.
fn push_last_step(
    rows: &mut Vec<RepeatRow>,
    done: usize,
    output: Option<f64>,
    finished: Vec<Number>,
) {
    if let Some(last_row) = rows.last()
        && last_row.step != done
        && done > 0
    {
        // `finished` holds step `done`'s values: a step not kept
        // stored them.
        rows.push(RepeatRow {
            step: done,
            output: output.map(Number),
            values: finished,
        });
    }
}

/// The error for a misused `:repeat` at `span`, with an example.
fn repeat_usage(span: Span, message: &str) -> SessionError {
    SessionError::BadArguments {
        message: message.to_string(),
        span,
        help: Some("e.g. `:repeat 50 w := w - 0.1*grad(L, w)`".to_string()),
    }
}

/// The statements of `:repeat` (its `body`), and the variables they assign
/// in order, once each. A notice goes to `events` for each `=` (it rebinds at
/// every step).
///
/// Errors: a statement that is a command, a definition or a `:repeat`.
fn repeat_statements(
    body: &[Located],
    events: &mut Vec<Event>,
) -> Result<(Vec<Statement>, Vec<String>), SessionError> {
    let mut statements = Vec::new();
    let mut assigned: Vec<String> = Vec::new();
    for located in body {
        match &located.statement {
            Statement::Assign { target, op, .. } => {
                if *op != AssignOp::Update {
                    events.push(Event::Notice(Notice::RebindsEachStep {
                        name: target.name.clone(),
                    }));
                }
                if !assigned.contains(&target.name) {
                    assigned.push(target.name.clone());
                }
            }
            Statement::Updates { targets, .. } => {
                for target in targets {
                    if !assigned.contains(&target.name) {
                        assigned.push(target.name.clone());
                    }
                }
            }
            Statement::Expr(_) => {}
            Statement::Define { .. } | Statement::Command { .. } | Statement::Repeat(_) => {
                return Err(repeat_usage(
                    located.span,
                    "`:repeat` runs assignments and expressions",
                ));
            }
        }
        statements.push(located.statement.clone());
    }
    Ok((statements, assigned))
}

impl Session {
    /// The error that `:repeat`'s `statements` (at `span`) touch vectors or
    /// matrices, which it does not support yet, if they do.
    fn refuse_tensor_repeat(
        &self,
        statements: &[Statement],
        span: Span,
    ) -> Result<(), SessionError> {
        if statements
            .iter()
            .any(|statement| self.statement_touches_tensor(statement))
        {
            return Err(SessionError::BadArguments {
                message: "`:repeat` of vectors and matrices is not supported yet".into(),
                span,
                help: Some(
                    "`:descend L lr=0.1 steps=100 W b` runs gradient descent on them".into(),
                ),
            });
        }
        Ok(())
    }
}

/// Whether the table of a loop of `steps` steps (`:repeat`, `:descend`)
/// shows step `step`: every step of a short loop; else the first few, about
/// [`SAMPLED_STEPS`] evenly spaced ones, and the last.
pub(super) fn keeps_step(step: usize, steps: usize) -> bool {
    steps <= ALL_STEPS
        || step <= HEAD_STEPS
        || step == steps
        || step.is_multiple_of(steps.div_ceil(SAMPLED_STEPS))
}

impl Session {
    /// The warning for a `:repeat` step of several `:=` that would be
    /// gradient descent if they ran together: each runs after the ones before
    /// it moved their leaves, so a later right side that reads an earlier
    /// target (through its graph, or through a user function, which may read
    /// any variable) is taken at a moved point (coordinate descent). Says what
    /// to type for the simultaneous update. `None` when no such pair exists.
    fn one_after_another(
        &self,
        statements: &[Statement],
        count: &str,
        body: Span,
    ) -> Option<Event> {
        let updates: Vec<(&Ident, &ExprTree)> = statements
            .iter()
            .filter_map(|s| match s {
                Statement::Assign {
                    target,
                    op: AssignOp::Update,
                    value,
                } => Some((target, value)),
                _ => None,
            })
            .collect();
        let reads_earlier = updates.iter().enumerate().skip(1).find(|(i, (_, tree))| {
            let earlier: Vec<NodeId> = updates[..*i]
                .iter()
                .filter_map(|(t, _)| self.scalar_var(&t.name))
                .collect();
            self.reads_any(tree, &earlier)
        });
        let (_, (target, _)) = reads_earlier?;
        let names: Vec<&str> = updates.iter().map(|(t, _)| t.name.as_str()).collect();
        let values: Vec<String> = updates.iter().map(|(_, v)| v.to_string()).collect();
        Some(Event::Warning {
            message: format!(
                "these `:=` run one after another, so `{}`'s new value is taken after {} moved: coordinate descent, not gradient descent; for gradient descent set them together: `:repeat {count} {} := {}`",
                target.name,
                names[0],
                names.join(", "),
                values.join(", ")
            ),
            span: body,
        })
    }

    /// Whether `tree`'s value at the current point can depend on one of the
    /// nodes `leaves`: a name in it is bound to one of them or to a node
    /// built from one, or it calls a user function.
    fn reads_any(&self, tree: &ExprTree, leaves: &[NodeId]) -> bool {
        let Some(&lowest) = leaves.iter().min() else {
            return false;
        };
        tree.nodes.iter().any(|node| match &node.kind {
            ExprKind::Name(name) => self.scalar_var(name.as_str()).is_some_and(|bound| {
                leaves.contains(&bound)
                    || (bound > lowest
                        && self
                            .graph
                            .topo_order_above(bound, lowest)
                            .iter()
                            .any(|id| leaves.contains(id)))
            }),
            ExprKind::Call(call) => self.functions.contains_key(call.name.as_str()),
            _ => false,
        })
    }
}

/// What a `:repeat` ran: `steps` of the `requested`, and after Ctrl-C inside a
/// step, the spans of that step's statements that had run.
struct Ran {
    steps: usize,
    requested: usize,
    partial: Vec<Span>,
}

/// The hint for a `:repeat` whose file exists: the command with `-f` to type,
/// or, where it is too long to quote whole, where to put `-f` (as the
/// printer's hint for files refused after the fact).
fn repeat_force_hint(forced: &str) -> String {
    if forced.chars().nth(super::COMMAND_QUOTE_CHARS).is_some() {
        "add `-f` after the step count to replace it, or choose another name".to_string()
    } else {
        format!("add `-f` to replace it: `{forced}`; or choose another name")
    }
}

impl Session {
    /// `W, b := VALUE, VALUE` of tensor leaves: every value computed before
    /// any leaf moves, then the leaves set and their users computed again.
    pub(super) fn update_tensors(
        &mut self,
        targets: &[Ident],
        values: &[ExprTree],
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        if targets.len() != values.len() {
            return Err(tensor_error(
                ErrorCode::BadArguments,
                targets[0].span,
                format!(
                    "{} names but {} values: a simultaneous update takes one value per name",
                    targets.len(),
                    values.len()
                ),
                None,
            ));
        }
        let params = super::update::each_once(
            targets,
            (
                "is updated twice in one statement",
                "give each name one value",
            ),
            |target| self.param(target),
        )?;
        let skip: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
        let before = self.values_now(&skip);
        let mark = self.tensors.graph.len();
        let mut moves = Vec::with_capacity(targets.len());
        for (param, tree) in params.into_iter().zip(values) {
            let (id, _) = self.evaluate_tensor(tree, events)?;
            moves.push((param, self.tensors.graph.value(id).clone(), tree.span()));
        }
        self.check_interrupt()?;
        self.tensors.truncate(mark);
        self.tensors.gradients.retain(|id| id.index() < mark);
        for (param, value, span) in moves {
            self.move_param(param, value, span)?;
        }
        self.tensors.rerun_whole(&self.graph);
        self.check_interrupt()?;
        for target in targets {
            let value = self.param_value(self.param(target)?);
            events.push(Event::Value {
                name: Some(target.name.clone()),
                value: Value::Tensor(tensor_data(&value)),
            });
        }
        let changed = self.moved_since(before);
        if !changed.is_empty() {
            events.push(Event::Calculus(CalculusEvent::Moved { changed }));
        }
        Ok(())
    }

    /// What each variable but those of `skip` holds now, in the order first
    /// assigned: a number's value, a tensor's fingerprint (and, for shape
    /// `()`, its number), so that [`Session::moved_since`] finds what a
    /// `:=` moved without a copy of every tensor.
    fn values_now(&self, skip: &[&str]) -> Vec<(String, Node, ValueNow)> {
        self.vars
            .iter()
            .filter(|(name, _)| !skip.contains(&name.as_str()))
            .map(|(name, &node)| (name.clone(), node, self.value_now(node)))
            .collect()
    }

    /// What `node` holds now ([`Session::values_now`]).
    fn value_now(&self, node: Node) -> ValueNow {
        use std::hash::Hasher;
        match node {
            Node::Scalar(id) => ValueNow::Number(self.graph.value(id).to_bits()),
            Node::Tensor(id) => {
                let data = self.tensors.graph.value(id).data();
                if let [number] = data
                    && self.tensors.graph.shape(id).dims().is_empty()
                {
                    return ValueNow::Number(number.to_bits());
                }
                let mut hash = rustc_hash::FxHasher::default();
                for x in data {
                    hash.write_u64(x.to_bits());
                }
                ValueNow::Tensor(hash.finish())
            }
        }
    }

    /// The variables of `before` ([`Session::values_now`]) whose value has
    /// changed since, with their values now and, for a number (a tensor of
    /// shape `()` too), what it was.
    fn moved_since(&self, before: Vec<(String, Node, ValueNow)>) -> Vec<MovedValue> {
        before
            .into_iter()
            .filter(|(_, node, was)| self.value_now(*node) != *was)
            .map(|(name, node, was)| MovedValue {
                name,
                value: match node {
                    Node::Scalar(id) => Number(self.graph.value(id)).into(),
                    Node::Tensor(id) => Value::Tensor(tensor_data(self.tensors.graph.value(id))),
                },
                before: match was {
                    ValueNow::Number(bits) => Some(Number(f64::from_bits(bits))),
                    ValueNow::Tensor(_) => None,
                },
            })
            .collect()
    }
}

/// What a variable holds at one time, to tell whether a `:=` moved it: a
/// number's bits, or a fingerprint of a vector's or matrix's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueNow {
    /// A number's bits (a tensor of shape `()` too).
    Number(u64),
    /// An FxHash of every number's bits.
    Tensor(u64),
}
