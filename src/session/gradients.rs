//! The gradient commands, `:grad` and `:backward`, and what every command
//! that differentiates shares: the output it needs, the backward pass, a
//! variable's node.

use crate::session::Number;
use std::collections::HashSet;

use super::Value;
use super::command::Command;
use super::params::Param;
use super::tensors::tensor_data;
use super::{Event, GradNote, Node, Notice, Output, Session, SessionError, nearest};
use crate::engine::tensor::{TensorGradients, TensorId, TensorOp};
use crate::engine::{Gradients, NodeId, Op};
use crate::syntax::{Ident, Span};

impl Session {
    /// `:backward NAME`: makes NAME the output, then `:grad`.
    pub(super) fn backward(
        &mut self,
        command: &Command,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let target = command.names[0];
        let node = match self.shaped_var(&target.name) {
            Some(id) => Node::Tensor(id),
            None => Node::Scalar(self.variable_node(target)?),
        };
        self.output = Some(Output {
            node,
            label: target.name.clone(),
        });
        self.grad(command.name.span, &[], events)
    }

    /// The output, or the error that there is none yet.
    pub(super) fn require_output(&self, span: Span) -> Result<Output<NodeId>, SessionError> {
        self.scalar_output()
            .ok_or(SessionError::NoOutput { span, wrt: None })
    }

    /// Backpropagates from the output: the gradients, and which nodes it reaches.
    ///
    /// Errors: [`SessionError::Interrupted`] at `span` after Ctrl-C.
    pub(super) fn backprop(
        &mut self,
        output: &Output<NodeId>,
        span: Span,
    ) -> Result<(Gradients, Vec<bool>), SessionError> {
        let order = self.order_for(output.node);
        let gradients = self.graph.backward(&order);
        if self.graph.interrupted() {
            // The order or the walk stopped early: the gradients are incomplete.
            return Err(SessionError::Interrupted { span });
        }
        let mut reached = vec![false; self.graph.len()];
        for id in order.iter() {
            reached[id.0 as usize] = true;
        }
        Ok((gradients, reached))
    }

    /// The variables named in a command's `args`, each with its node, in
    /// order, a name given again left out (K names in O(K), not O(K²)).
    ///
    /// Errors: the first name that is no variable ([`Session::variable_node`]).
    pub(super) fn named_variables<'a>(
        &self,
        args: impl IntoIterator<Item = &'a Ident>,
    ) -> Result<Vec<(String, NodeId)>, SessionError> {
        let mut targets: Vec<(String, NodeId)> = Vec::new();
        // Names already asked for.
        let mut seen: HashSet<&str> = HashSet::new();
        for arg in args {
            let node = self.variable_node(arg)?;
            if seen.insert(arg.name.as_str()) {
                targets.push((arg.name.clone(), node));
            }
        }
        Ok(targets)
    }

    /// The node of a variable named in a command.
    pub(super) fn variable_node(&self, ident: &Ident) -> Result<NodeId, SessionError> {
        if let Some(node) = self.scalar_var(&ident.name) {
            return Ok(node);
        }
        if let Some(node) = self.labelled_node(&ident.name, ident.span)? {
            return Ok(node);
        }
        if super::RESULT_NAMES.contains(&ident.name.as_str())
            && let Some(node) = self.scalar_last()
        {
            return Ok(node);
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
            suggestion: nearest(&ident.name, self.vars.keys().map(String::as_str)),
            hint: None,
        })
    }

    /// `:grad [NAMES]`.
    pub(super) fn grad(
        &mut self,
        span: Span,
        args: &[Ident],
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        if let Some(output) = self.shaped_output() {
            return self.grad_tensors(output.node, &output.label, span, args, events);
        }
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
        let mut targets = self.named_variables(args)?;
        let (gradients, reached) = self.backprop(&output, span)?;
        if args.is_empty() {
            // Every variable the output reaches, except the output's own name
            // (∂z/∂z = 1 says nothing), unless that is all there is (`x = 2; x`);
            // and every variable the output was built from an earlier binding of,
            // whose gradient is 0 for a reason worth saying.
            let reached_names: Vec<(String, NodeId)> = self
                .scalar_vars()
                .map(|(name, node)| (name.clone(), node))
                .filter(|(_, node)| reached[node.index()])
                .collect();
            targets = self
                .scalar_vars()
                .map(|(name, node)| (name.clone(), node))
                .filter(|(name, node)| {
                    (reached[node.index()] && *name != output.label)
                        || self.stale_note(&output, name, &reached).is_some()
                })
                .collect();
            if targets.is_empty() && self.graph.op(output.node) == Op::Variable {
                targets = reached_names;
            }
            if targets.is_empty() {
                events.push(Event::Notice(self.no_variable(&output, &reached, false)));
            }
        }
        for (name, node) in targets {
            let note = (!reached[node.index()]).then(|| {
                self.stale_note(&output, &name, &reached)
                    .unwrap_or_else(|| GradNote::NotReached {
                        of: output.label.clone(),
                        wrt: name.clone(),
                    })
            });
            events.push(Event::Grad {
                of: output.label.clone(),
                wrt: name,
                value: Number(gradients[node]).into(),
                note,
            });
        }
        Ok(())
    }
}

impl Session {
    /// What to say when `output` has no variable to differentiate by
    /// (`:grad`, `:hessian`) or check (`checking`): that it was built from an
    /// earlier binding of some variables (`x = 2; x += 1`), whose gradient
    /// is 0 for that reason, else that it depends on no variable. `reached`
    /// marks the nodes the output reaches.
    pub(super) fn no_variable(
        &self,
        output: &Output<NodeId>,
        reached: &[bool],
        checking: bool,
    ) -> Notice {
        let earlier: Vec<String> = self
            .vars
            .keys()
            .filter(|name| {
                self.earlier.get(*name).is_some_and(|old| {
                    old.iter()
                        .filter_map(|n| n.scalar())
                        .any(|id| reached[id.index()])
                })
            })
            .cloned()
            .collect();
        let of = output.label.clone();
        if earlier.is_empty() {
            Notice::NoVariable { of, checking }
        } else {
            Notice::BuiltFromEarlier { of, earlier }
        }
    }
}

impl Session {
    /// `:grad [NAMES]` of a tensor output: ∂output/∂name of each variable
    /// named, a vector, matrix or number, leaf or derived (every tensor leaf
    /// and every number leaf it reaches when none is named, and every
    /// variable it was built from an earlier binding of). A name that is no
    /// variable is refused as for a number output ([`Session::variable_node`]).
    fn grad_tensors(
        &mut self,
        output: TensorId,
        label: &str,
        span: Span,
        args: &[Ident],
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let mut targets: Vec<(String, Param)> = Vec::new();
        for arg in args {
            let param = match self.vars.get(&arg.name) {
                Some(&Node::Tensor(id)) => Param::Tensor(id),
                Some(&Node::Scalar(node)) => Param::Scalar(node),
                None => Param::Scalar(self.variable_node(arg)?),
            };
            if !targets.iter().any(|(n, _)| *n == arg.name) {
                targets.push((arg.name.clone(), param));
            }
        }
        self.refuse_gradient_of_gradient(output, span)?;
        let gradients = self.tensor_backward(output, span)?;
        if args.is_empty() {
            targets = self
                .shaped_vars()
                .filter(|&(name, id)| {
                    gradients.get(id).is_some()
                        && self.tensors.graph.op(id) == TensorOp::Variable
                        && name.as_str() != label
                        || self.stale_note_tensors(label, name, &gradients).is_some()
                })
                .map(|(name, id)| (name.clone(), Param::Tensor(id)))
                .collect();
            targets.extend(self.scalar_params_reached(&gradients));
            let stale: Vec<(String, Param)> = self
                .scalar_vars()
                .filter(|(name, _)| self.stale_note_tensors(label, name, &gradients).is_some())
                .map(|(name, id)| (name.clone(), Param::Scalar(id)))
                .collect();
            targets.extend(stale);
            if targets.is_empty() {
                events.push(Event::Notice(super::Notice::NoVariable {
                    of: label.to_string(),
                    checking: false,
                }));
                return Ok(());
            }
        }
        self.note_seeded_with_ones(output, label, events);
        for (name, param) in targets {
            let value = self.param_gradient(&gradients, param);
            let reached = match param {
                Param::Tensor(id) => gradients.get(id).is_some(),
                Param::Scalar(node) => self.scalar_leaf_gradient(&gradients, node).is_some(),
            };
            let note = (!reached).then(|| {
                self.stale_note_tensors(label, &name, &gradients)
                    .unwrap_or_else(|| GradNote::NotReached {
                        of: label.to_string(),
                        wrt: name.clone(),
                    })
            });
            events.push(Event::Grad {
                of: label.to_string(),
                wrt: name,
                value: Value::Tensor(tensor_data(&value)),
                note,
            });
        }
        Ok(())
    }

    /// Why ∂output/∂`name` is 0 for the variable `name` (a vector, matrix
    /// or number) when the tensor output (`label`, its backward pass
    /// `gradients`) reaches an earlier binding of it but not its current
    /// one: "y was built from an earlier x", as for numbers
    /// (`Session::stale_note`).
    pub(super) fn stale_note_tensors(
        &self,
        label: &str,
        name: &str,
        gradients: &TensorGradients,
    ) -> Option<super::GradNote> {
        let reached = |node: &Node| match *node {
            Node::Tensor(id) => gradients.get(id).is_some(),
            Node::Scalar(id) => self.scalar_leaf_gradient(gradients, id).is_some(),
        };
        let current = self.vars.get(name)?;
        let earlier = self.earlier.get(name)?;
        (!reached(current) && earlier.iter().any(reached)).then(|| {
            super::GradNote::BuiltFromEarlier {
                of: label.to_string(),
                wrt: name.to_string(),
            }
        })
    }
}
