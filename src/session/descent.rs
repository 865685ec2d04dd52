//! `:descend LOSS lr=RATE steps=N PARAMS…`: gradient descent over named
//! leaves, as micrograd's and PyTorch's training loops do it. Each step runs
//! one backward pass from the loss (every ∂LOSS/∂param at once, no derivative
//! graph per parameter), then sets every parameter to `p − RATE·∂LOSS/∂p`
//! together and evaluates the graph built from them again once
//! (`Graph::update_leaves`).

use super::Value;
use super::command::Command;
use super::derivatives::{CalculusEvent, RepeatRow};
use super::error::ErrorCode;
use super::params::Param;
use super::tensors::{element_name, tensor_data, tensor_error};
use super::update::{MAX_REPEAT, each_once, keeps_step};
use super::{Event, Number, Session, SessionError, Target};
use crate::engine::NodeId;
use crate::engine::tensor::{Shape, Tensor, TensorId};
use crate::syntax::{Ident, Span};

/// A `:descend` command's arguments, read once from the command line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Descent {
    /// The loss: a name bound to a node.
    pub loss: Ident,
    /// The learning rate: a finite number (negative climbs).
    pub rate: f64,
    /// The learning rate as typed (for `:save`).
    pub rate_text: String,
    /// How many steps to run, 1 to [`MAX_REPEAT`].
    pub steps: usize,
    /// The parameters: variable leaves, at least one, none twice.
    pub params: Vec<Ident>,
    /// Show every parameter's column, however wide the table.
    pub all: bool,
    /// Where the plot of the loss goes (`FILE.svg`), if asked for.
    pub target: Option<Target>,
    /// The file's word as typed, for the check before the first step.
    pub file: Option<Ident>,
    /// The whole command, for errors about it.
    pub span: Span,
}

impl Descent {
    /// The event of this descent after `done` of its steps, its columns
    /// headed `params` (a tensor parameter's elements each a column), with
    /// the table's `rows` and the loss after each step.
    fn event(
        &self,
        params: Vec<String>,
        done: usize,
        rows: Vec<RepeatRow>,
        losses: Vec<Number>,
    ) -> Event {
        Event::Calculus(CalculusEvent::Descent {
            of: self.loss.name.clone(),
            params,
            rate: Number(self.rate),
            steps: done,
            requested: self.steps,
            rows,
            losses,
            interrupted: done < self.steps,
            all: self.all,
            target: self.target.clone(),
        })
    }
}

impl Descent {
    /// Reads `:descend`'s parsed command line.
    ///
    /// Errors: a rate that is not a finite number, a count of steps that is
    /// not a whole number from 1 to [`MAX_REPEAT`], no parameter, or one
    /// given twice.
    pub fn parse(command: &Command) -> Result<Descent, SessionError> {
        let example = || Some("e.g. `:descend L lr=0.1 steps=20 w1 w2 b`".to_string());
        let span = command
            .args
            .iter()
            .fold(command.name.span, |s, a| s.to(a.span));
        let (mut rate_word, mut steps_word) = (None, None);
        for &(key, word) in &command.settings {
            let value = Some((&word.name[key.len()..], word.span));
            match key {
                "lr=" => rate_word = value,
                "steps=" => steps_word = value,
                _ => {}
            }
        }
        let (Some((rate_text, rate_span)), Some((steps_text, steps_span))) =
            (rate_word, steps_word)
        else {
            return Err(command.misuse());
        };
        let rate = match rate_text.parse::<f64>() {
            Ok(rate) if rate.is_finite() => rate,
            _ => {
                return Err(SessionError::BadArguments {
                    message: format!("the learning rate must be a number, not `{rate_text}`"),
                    span: rate_span,
                    help: example(),
                });
            }
        };
        let steps = match steps_text.parse::<usize>() {
            Ok(n) if (1..=MAX_REPEAT).contains(&n) => n,
            _ => {
                return Err(SessionError::BadArguments {
                    message: format!(
                        "the number of steps must be a whole number from 1 to {MAX_REPEAT}, not `{steps_text}`"
                    ),
                    span: steps_span,
                    help: example(),
                });
            }
        };
        let [loss, params @ ..] = &command.names[..] else {
            return Err(command.misuse());
        };
        if params.is_empty() {
            return Err(SessionError::BadArguments {
                message: "`:descend` needs the parameters to move: the leaves to train".to_string(),
                span,
                help: example(),
            });
        }
        let params = each_once(
            params.iter().copied(),
            ("is given twice", "name each parameter once"),
            |param| Ok(param.clone()),
        )?;
        Ok(Descent {
            loss: (*loss).clone(),
            rate,
            rate_text: rate_text.to_string(),
            steps,
            params,
            all: command.keywords.contains(&"--all"),
            target: plot_target(command)?,
            file: command.file.cloned(),
            span,
        })
    }
}

/// The plot file of a `:descend` command, if one is given: an SVG file, as
/// `:repeat N FILE.svg` takes.
///
/// Errors: a file whose name does not end in `.svg`.
fn plot_target(command: &Command) -> Result<Option<Target>, SessionError> {
    let Some(file) = command.file else {
        return Ok(None);
    };
    let target = command.target();
    if !target.path.ends_with(".svg") && target.path != "-" {
        return Err(SessionError::BadArguments {
            message: format!(
                "`{}` is not an SVG file: `:descend` writes the plot of the loss as SVG",
                file.name
            ),
            span: file.span,
            help: Some("e.g. `:descend L lr=0.1 steps=40 loss.svg w1 b`".to_string()),
        });
    }
    Ok(Some(target))
}

impl Session {
    /// Runs `descent`: step 0 is the starting point; each step one backward
    /// pass from the loss and one simultaneous update of the parameters.
    /// Ctrl-C between two steps keeps the steps finished (and says so in the
    /// event); the session records the command with the steps it ran.
    ///
    /// Errors: an unknown loss; a parameter that is not a variable leaf or
    /// that the loss is not built from (its gradient would stay 0); a loss
    /// built with `f'(x)` of a variable (as for `:grad`).
    pub(super) fn descend(
        &mut self,
        descent: &Descent,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        if let Some(file) = &descent.file {
            // A file that cannot be written is refused before any step moves.
            self.check_writable(file)?;
        }
        if self.is_tensor(&descent.loss.name) {
            return self.descend_tensors(descent, events);
        }
        let loss = self.variable_node(&descent.loss)?;
        if self.graph.op(loss).is_leaf() {
            // `:descend lr=0.5 steps=3 w1 b`: the loss was left out.
            return Err(SessionError::BadArguments {
                message: format!(
                    "`{}` is a leaf, not a loss: `:descend` takes the loss first, then the leaves to move",
                    descent.loss.name
                ),
                span: descent.loss.span,
                help: Some("e.g. `:descend L lr=0.1 steps=20 w1 w2 b`".to_string()),
            });
        }
        let order = self.order_for(loss);
        self.check_interrupt()?;
        let mut leaves: Vec<NodeId> = Vec::with_capacity(descent.params.len());
        for param in &descent.params {
            let leaf = self
                .settable_leaf(param)
                .map_err(|_| self.not_a_parameter(param, "descend"))?;
            if !order.contains(&leaf) {
                return Err(SessionError::BadArguments {
                    message: format!(
                        "`{}` is not built from this `{}`: its gradient is 0, so descent would never move it",
                        descent.loss.name, param.name
                    ),
                    span: param.span,
                    help: Some(format!(
                        "name the leaves `{}` depends on (`:grad` lists them)",
                        descent.loss.name
                    )),
                });
            }
            leaves.push(leaf);
        }
        let values = |s: &Session| leaves.iter().map(|&l| Number(s.graph.value(l))).collect();
        let mut rows = vec![RepeatRow {
            step: 0,
            output: Some(Number(self.graph.value(loss))),
            values: values(self),
        }];
        let mut losses = Vec::with_capacity(descent.steps + 1);
        losses.push(Number(self.graph.value(loss)));
        let mut done = 0;
        while done < descent.steps && !crate::interrupt::requested() {
            let gradients = self.graph.backward(&order);
            if crate::interrupt::requested() {
                // The walk may have stopped early: this step is not taken.
                break;
            }
            let moves: Vec<(NodeId, f64)> = leaves
                .iter()
                .map(|&l| (l, self.graph.value(l) - descent.rate * gradients.get(l)))
                .collect();
            self.journal_leaves(leaves.iter().copied());
            self.graph.update_leaves(&moves);
            done += 1;
            losses.push(Number(self.graph.value(loss)));
            if keeps_step(done, descent.steps) {
                rows.push(RepeatRow {
                    step: done,
                    output: Some(Number(self.graph.value(loss))),
                    values: values(self),
                });
            }
        }
        if rows.last().is_some_and(|row| row.step != done) {
            rows.push(RepeatRow {
                step: done,
                output: Some(Number(self.graph.value(loss))),
                values: values(self),
            });
        }
        if done > 0 {
            self.record(&descent.script(done));
            // The tensors that read the parameters follow them.
            self.tensors.rerun_whole(&self.graph);
        }
        let params = descent.params.iter().map(|p| p.name.clone()).collect();
        events.push(descent.event(params, done, rows, losses));
        Ok(())
    }
}

impl Descent {
    /// The command that runs `steps` of this descent, as `:save` writes it
    /// (for the tensor descent of `tensors.rs`).
    pub(super) fn script_of(&self, steps: usize) -> String {
        self.script(steps)
    }

    /// The command that runs `steps` of this descent, as `:save` writes it.
    fn script(&self, steps: usize) -> String {
        let params: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
        format!(
            ":descend {} lr={} steps={steps} {}",
            self.loss.name,
            self.rate_text,
            params.join(" ")
        )
    }
}

impl Session {
    /// `:descend L lr=RATE steps=N W b` of a tensor loss: each step one
    /// backward pass from L (shape `()`), every parameter moved to
    /// `W − RATE·∂L/∂W` together, then the graph computed again. Ctrl-C
    /// between two steps keeps the steps done, as for scalars. The table
    /// shows the loss; the parameters' values after the last step follow.
    pub(super) fn descend_tensors(
        &mut self,
        descent: &super::descent::Descent,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let loss = self.shaped_var(&descent.loss.name).unwrap_or(TensorId(0));
        let shape = self.tensors.graph.shape(loss);
        if shape != Shape::scalar() {
            return Err(tensor_error(
                ErrorCode::Shape,
                descent.loss.span,
                format!(
                    "the loss `{}` has shape ({shape}): `:descend` takes a loss of shape ()",
                    descent.loss.name
                ),
                Some(format!(
                    "reduce it first, e.g. `L = sum({})`",
                    descent.loss.name
                )),
            ));
        }
        let leaves = self.descent_params(descent, loss)?;
        let value = |s: &Session| Number(s.tensors.graph.value(loss).data()[0]);
        // A column a parameter when all are numbers, as for scalar losses;
        // with `--all`, a column each element of every parameter (`W[0, 1]`).
        // Vectors and matrices are printed whole after the table.
        let columns = descent.all || leaves.iter().all(|leaf| matches!(leaf, Param::Scalar(_)));
        let headers = self.descent_headers(descent, &leaves, columns);
        let row = |s: &Session, step| super::derivatives::RepeatRow {
            step,
            output: Some(value(s)),
            values: if columns {
                leaves
                    .iter()
                    .flat_map(|&leaf| s.param_value(leaf).data().to_vec())
                    .map(Number)
                    .collect()
            } else {
                Vec::new()
            },
        };
        let mut rows = vec![row(self, 0)];
        let mut losses = vec![value(self)];
        let mut done = 0;
        while done < descent.steps && !crate::interrupt::requested() {
            // The parameters' gradients only (leaves and scalar nodes).
            let gradients = self.tensors.graph.backward_keeping(loss, &[]);
            if crate::interrupt::requested() {
                break; // the walk may have stopped early: this step is not taken
            }
            // Every step computed first, then every parameter moved.
            let moves: Vec<(Param, Tensor)> = leaves
                .iter()
                .map(|&leaf| {
                    let mut moved = self.param_value(leaf);
                    let g = self.param_gradient(&gradients, leaf);
                    for (x, d) in moved.data_mut().iter_mut().zip(g.data()) {
                        *x -= descent.rate * d;
                    }
                    (leaf, moved)
                })
                .collect();
            for (leaf, moved) in moves {
                // The same shape: it was the leaf's value.
                self.move_param(leaf, moved, descent.loss.span)?;
            }
            self.tensors.rerun_whole(&self.graph);
            done += 1;
            losses.push(value(self));
            if super::update::keeps_step(done, descent.steps) {
                rows.push(row(self, done));
            }
        }
        if rows.last().is_some_and(|r| r.step != done) {
            rows.push(row(self, done));
        }
        if done > 0 {
            self.record(&descent.script_of(done));
        }
        events.push(descent.event(headers, done, rows, losses));
        for (param, leaf) in descent.params.iter().zip(leaves) {
            events.push(Event::Value {
                name: Some(param.name.clone()),
                value: Value::Tensor(tensor_data(&self.param_value(leaf))),
            });
        }
        Ok(())
    }

    /// The parameters of a `:descend` of the tensor loss `loss`: each a leaf
    /// the loss reaches (a tensor leaf, or a scalar one through the scalars
    /// the tensors read).
    fn descent_params(
        &mut self,
        descent: &super::descent::Descent,
        loss: TensorId,
    ) -> Result<Vec<Param>, SessionError> {
        self.refuse_gradient_of_gradient(loss, descent.loss.span)?;
        let order = self.tensors.graph.topo_order(loss);
        let mut leaves = Vec::with_capacity(descent.params.len());
        let first = self.tensor_backward(loss, descent.loss.span)?;
        for param in &descent.params {
            let leaf = self.param_for(param, "descend")?;
            let reached = match leaf {
                Param::Tensor(id) => order.contains(&id),
                Param::Scalar(id) => self.scalar_leaf_gradient(&first, id).is_some(),
            };
            if !reached {
                return Err(tensor_error(
                    ErrorCode::BadArguments,
                    param.span,
                    format!(
                        "`{}` is not built from this `{}`: its gradient is 0, so descent would never move it",
                        descent.loss.name, param.name
                    ),
                    None,
                ));
            }
            leaves.push(leaf);
        }
        Ok(leaves)
    }

    /// The names of a tensor `:descend`'s parameters: with a column each
    /// (`columns`), an element's name for each element (`W[0, 1]`).
    fn descent_headers(
        &self,
        descent: &super::descent::Descent,
        leaves: &[Param],
        columns: bool,
    ) -> Vec<String> {
        if !columns {
            return descent.params.iter().map(|p| p.name.clone()).collect();
        }
        let params = descent.params.iter().zip(leaves);
        params
            .flat_map(|(param, &leaf)| {
                let shape = self.param_value(leaf).shape();
                (0..shape.len()).map(move |k| element_name(&param.name, shape, k))
            })
            .collect()
    }
}
