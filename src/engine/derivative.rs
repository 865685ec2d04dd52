//! The backward pass recorded as a graph: ∂output/∂x built from nodes, so that
//! a derivative is a value like any other (printed, assigned, used in
//! arithmetic, differentiated again, at any order): [`Graph::grad`].
//!
//! The walk is the backward pass's: the reverse topological order of the
//! output, the output's gradient seeded with the constant 1, and for each node
//! and each input the chain rule `upstream × local`, accumulated with `+` where
//! an input fans out. Here every one of these is a node: the local derivative
//! is the op row's typed rule built over the operand nodes
//! ([`Op::local_rule`] in its built form, [`Derivative::stable`]), and a rule
//! that passes nothing adds nothing, as in the backward pass.
//!
//! The rules of smooth ops are one expression for every point, so a derivative
//! graph evaluated again at moved leaves (`Graph::update_leaf`) is the one that
//! would be built there. Rules at kinks are piecewise at the *current* point
//! (`relu'` is the constant 1 where u > 0, nothing where u ≤ 0): a derivative
//! graph keeps the branch it was built on when a leaf later moves across a kink
//! (`x := -1`). PyTorch's `create_graph=True` has the same property.
//!
//! [`Derivative::stable`]: super::Derivative::stable

use std::collections::HashMap;

use super::interrupt::Poll;
use super::rules::{Expr, Form, LocalRule};
use super::{Graph, NodeId, Op};

/// Why [`Graph::grad`] built nothing. The graph is as it was before the call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GradError {
    /// The derivative graph would have had more than `limit` nodes (nested
    /// derivatives grow with every order: `grad(grad(…(y, x)…, x), x)`).
    #[error("the derivative graph would have more than {limit} nodes")]
    TooLarge {
        /// The node budget that was passed.
        limit: usize,
    },
    /// The graph's interrupt asked to stop ([`Graph::set_interrupt`]).
    #[error("interrupted")]
    Interrupted,
}

/// A derivative graph built by [`Graph::grad`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derivatives {
    /// `results[i]` is the node of `∂output/∂wrt[i]` (the constant 0 where no
    /// path from the output reaches `wrt[i]`).
    pub results: Vec<NodeId>,
    /// Every local derivative built, in the order built: the node that holds
    /// `∂node/∂operand[position]`. A reader that writes the graph as text
    /// writes these as their textbook form ([`Op::local_rule`] with
    /// [`Form::Textbook`]) instead of the stable nodes they are built from.
    pub locals: Vec<LocalNode>,
}

/// One local derivative in a derivative graph ([`Derivatives::locals`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalNode {
    /// The node holding the local derivative's value.
    pub root: NodeId,
    /// The node differentiated.
    pub node: NodeId,
    /// Which of its operands, 0-based.
    pub position: usize,
}

impl Graph {
    /// The derivatives of `output` with respect to each node of `wrt`, built as
    /// nodes of this graph: `results[i]` is the node of `∂output/∂wrt[i]`.
    /// Each is an ordinary node, so it can be differentiated again: call
    /// `grad` on it for the next order.
    ///
    /// Only nodes that depend on some `wrt` node carry a derivative, and
    /// gradient flows only into inputs that do: the nodes appended are at most
    /// a constant number per edge of the output's graph between `wrt` and the
    /// output (a local derivative's expression, a product, a sum at fan-out),
    /// so the derivative graph is linear in the size of the original. The work
    /// is proportional to the output's nodes from the smallest `wrt` id up
    /// (those below cannot depend on it), not to the graph: `f'(2)` appends
    /// `t = 2 + 0` and differentiates with respect to it, a few nodes in a
    /// graph of a million. A local derivative that is the constant 1 is not
    /// multiplied, −1 becomes a negation, and constant arithmetic folds.
    ///
    /// # Errors
    /// [`GradError::TooLarge`] when more than `max_nodes` nodes would be
    /// appended; [`GradError::Interrupted`] when the graph's interrupt asks to
    /// stop. Either way the graph is truncated back to its length before the
    /// call.
    ///
    /// # Panics
    /// If `output` or a `wrt` id is not a node of this graph.
    ///
    /// ```
    /// use gradcalc::engine::{Graph, Op};
    /// let mut g = Graph::new();
    /// let x = g.leaf(3.0);
    /// let three = g.constant(3.0);
    /// let y = g.apply(Op::Pow, &[x, three]).unwrap(); // y = x³
    /// let d1 = g.grad(y, &[x], 1000).unwrap().results[0];
    /// assert_eq!(g.value(d1), 27.0); // 3x²
    /// let d2 = g.grad(d1, &[x], 1000).unwrap().results[0];
    /// assert_eq!(g.value(d2), 18.0); // 6x
    /// let d3 = g.grad(d2, &[x], 1000).unwrap().results[0];
    /// assert_eq!(g.value(d3), 6.0);
    /// ```
    pub fn grad(
        &mut self,
        output: NodeId,
        wrt: &[NodeId],
        max_nodes: usize,
    ) -> Result<Derivatives, GradError> {
        self.grad_on_branches(output, wrt, max_nodes, &HashMap::new())
    }

    /// [`Graph::grad`] with the branches of some piecewise nodes chosen by
    /// the caller: for a node in `branches`, its operand at position `k`
    /// receives the rule's local derivative where `branches[node][k]` is
    /// true and nothing where it is false, whatever the point says
    /// ([`Op::rule_on_branch`]). Other nodes take the branch of the point.
    /// `:diff` builds the derivative on each side of a kink this way.
    ///
    /// # Errors
    /// As [`Graph::grad`].
    ///
    /// # Panics
    /// As [`Graph::grad`].
    pub fn grad_on_branches(
        &mut self,
        output: NodeId,
        wrt: &[NodeId],
        max_nodes: usize,
        branches: &HashMap<NodeId, Vec<bool>>,
    ) -> Result<Derivatives, GradError> {
        let mark = self.len();
        let Some(&min) = wrt.iter().min() else {
            return Ok(Derivatives {
                results: Vec::new(),
                locals: Vec::new(),
            });
        };
        // Only nodes from the smallest `wrt` up can depend on one (operands
        // have smaller ids).
        let order = self.topo_order_above(output, min);
        let mut locals = Vec::new();
        let built = if self.interrupted() {
            Err(GradError::Interrupted)
        } else {
            let limit = mark.saturating_add(max_nodes);
            self.derivative_graph(&order, wrt, limit, &mut locals, branches)
        };
        match built {
            Ok(results) => Ok(Derivatives { results, locals }),
            Err(error) => {
                self.truncate(mark);
                Err(error)
            }
        }
    }

    /// Appends `op(inputs)`, or a constant with the same value when every input
    /// is a constant (so constant arithmetic of derivative rules folds away).
    ///
    /// # Errors
    /// As [`Graph::apply`]: the wrong number of inputs for `op`.
    pub fn apply_folded(&mut self, op: Op, inputs: &[NodeId]) -> Result<NodeId, super::ArityError> {
        let id = self.apply(op, inputs)?;
        if inputs.iter().all(|&input| self.op(input) == Op::Const) {
            let value = self.value(id);
            self.truncate(id.index());
            return Ok(self.constant(value));
        }
        Ok(id)
    }

    /// The derivatives of the output `order[0]` with respect to each node of
    /// `wrt` ([`Graph::grad`]), `order` the output's order cut at the smallest
    /// `wrt` node ([`Graph::topo_order_above`]); the scratch space covers only
    /// the ids from there up. Each local derivative built is recorded in
    /// `locals`. Stops with an error once the graph passes `limit` nodes or
    /// the interrupt asks to stop (the caller truncates).
    fn derivative_graph(
        &mut self,
        order: &[NodeId],
        wrt: &[NodeId],
        limit: usize,
        locals: &mut Vec<LocalNode>,
        branches: &HashMap<NodeId, Vec<bool>>,
    ) -> Result<Vec<NodeId>, GradError> {
        let len = self.len();
        let base = wrt.iter().map(|x| x.index()).min().unwrap_or(len);
        assert!(
            base < len,
            "{:?} is not a node of this graph",
            NodeId(base as u32)
        );
        let slot = |id: NodeId| id.index().checked_sub(base);
        let depends = self.depends_on_wrt(order, wrt, base);
        let depends_on = |id: NodeId| slot(id).is_some_and(|i| depends[i]);
        let mut grads: Vec<Option<NodeId>> = vec![None; len - base];
        if let Some(&output) = order.first()
            && depends_on(output)
        {
            grads[output.index() - base] = Some(self.constant(1.0));
        }
        let mut poll = Poll::of(self);
        let mut inputs = Vec::new();
        for &node in order {
            let Some(upstream) = slot(node).and_then(|i| grads[i]) else {
                continue;
            };
            if poll.tick() {
                return Err(GradError::Interrupted);
            }
            if self.len() > limit {
                return Err(GradError::TooLarge {
                    limit: limit - len.min(limit),
                });
            }
            inputs.clear();
            inputs.extend_from_slice(self.operands(node));
            for (position, &input) in inputs.iter().enumerate() {
                if !depends_on(input) {
                    continue;
                }
                let forced = branches.get(&node).map(|b| b.get(position) == Some(&true));
                let Some(local) = self.local_node(node, position, forced) else {
                    continue; // the op passes nothing here
                };
                locals.push(LocalNode {
                    root: local,
                    node,
                    position,
                });
                let contribution = self.chain(upstream, local);
                let i = input.index() - base;
                grads[i] = Some(match grads[i] {
                    None => contribution,
                    Some(before) => self.fold(Op::Add, &[before, contribution]),
                });
            }
        }
        if self.len() > limit {
            return Err(GradError::TooLarge {
                limit: limit - len.min(limit),
            });
        }
        Ok(wrt
            .iter()
            .map(|&x| match grads[x.index() - base] {
                Some(g) => g,
                None => self.constant(0.0),
            })
            .collect())
    }

    /// `depends[i - base]`: node `i` of `order` is one of `wrt` or is built
    /// from one.
    fn depends_on_wrt(&self, order: &[NodeId], wrt: &[NodeId], base: usize) -> Vec<bool> {
        let mut depends = vec![false; self.len() - base];
        for &x in wrt {
            depends[x.index() - base] = true;
        }
        for &node in order.iter().rev() {
            let Some(i) = node.index().checked_sub(base) else {
                continue;
            };
            if !depends[i] {
                depends[i] = self
                    .operands(node)
                    .iter()
                    .any(|o| o.index().checked_sub(base).is_some_and(|j| depends[j]));
            }
        }
        depends
    }

    /// Appends `∂node/∂operand[position]` at the current point, from the op
    /// row's rule in its built form, or `None` where the op passes nothing;
    /// on the branch `forced` (passes or not) instead of the point's when it
    /// is `Some`.
    fn local_node(
        &mut self,
        node: NodeId,
        position: usize,
        forced: Option<bool>,
    ) -> Option<NodeId> {
        let op = self.op(node);
        let operands = self.operands(node).to_vec();
        let values: Vec<f64> = operands.iter().map(|&o| self.value(o)).collect();
        let rule = match forced {
            Some(passes) => op.rule_on_branch(position, &values, passes, Form::Built),
            None => op.local_rule(position, &values, self.value(node), Form::Built),
        };
        match rule {
            LocalRule::PassesNothing => None,
            LocalRule::Undefined => Some(self.constant(f64::NAN)),
            LocalRule::Expr { expr, ties } => {
                let local = self.build_expr(expr, &operands, node);
                Some(if ties > 1 {
                    let k = self.constant(ties as f64);
                    self.fold(Op::Div, &[local, k])
                } else {
                    local
                })
            }
        }
    }

    /// Builds `expr` as nodes over `node`'s `operands` ([`Expr::Output`] is
    /// `node` itself). Recursion is over the rule's small fixed tree, never
    /// over the graph.
    fn build_expr(&mut self, expr: &Expr, operands: &[NodeId], node: NodeId) -> NodeId {
        match *expr {
            Expr::Operand(k) => operands[k],
            Expr::Output => node,
            Expr::Num(x) => self.constant(x),
            Expr::Named(c) => self.constant(c.value()),
            Expr::Apply(op, args) => {
                let inputs: Vec<NodeId> = args
                    .iter()
                    .map(|a| self.build_expr(a, operands, node))
                    .collect();
                self.fold(op, &inputs)
            }
        }
    }

    /// `upstream × local` as a node, without multiplying by a constant 1 or −1.
    fn chain(&mut self, upstream: NodeId, local: NodeId) -> NodeId {
        let constant = |g: &Graph, id: NodeId| (g.op(id) == Op::Const).then(|| g.value(id));
        match (constant(self, upstream), constant(self, local)) {
            (_, Some(1.0)) => upstream,
            (Some(1.0), _) => local,
            (_, Some(-1.0)) => self.fold(Op::Neg, &[upstream]),
            _ => self.fold(Op::Mul, &[upstream, local]),
        }
    }

    /// [`Graph::apply_folded`] for an op whose arity is right by construction.
    fn fold(&mut self, op: Op, inputs: &[NodeId]) -> NodeId {
        self.apply_folded(op, inputs)
            .unwrap_or_else(|_| unreachable!("{} takes {} inputs", op.info().name, inputs.len()))
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::tests::{Program, apply_instruction};
    use crate::engine::{Graph, NodeId};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    use std::cell::Cell;

    /// A random [`Program`]: leaf values, then ops (numbered modulo the table)
    /// over operands counted back from the newest node (small picks make
    /// chains, large ones reach far below).
    fn program() -> impl Strategy<Value = Program> {
        let pick = prop_oneof![3 => 0..4usize, 1 => 0..40usize];
        (
            prop::collection::vec(-2.0f64..2.0, 1..=5),
            prop::collection::vec((0..1000usize, prop::collection::vec(pick, 1..=4)), 1..30),
        )
            .prop_map(|(leaves, instructions)| Program {
                leaves,
                instructions,
            })
    }

    fn build(program: &Program) -> Graph {
        let mut g = Graph::new();
        for &v in &program.leaves {
            g.leaf(v);
        }
        for (op, picks) in &program.instructions {
            if apply_instruction(&mut g, *op, picks).is_none() {
                g.constant(0.75);
            }
        }
        g
    }

    /// The derivative graph built from the whole of the output's order.
    fn full_walk(graph: &mut Graph, output: NodeId, wrt: &[NodeId]) -> Vec<NodeId> {
        let order = graph.topo_order(output);
        graph
            .derivative_graph(
                &order,
                wrt,
                usize::MAX,
                &mut Vec::new(),
                &std::collections::HashMap::new(),
            )
            .expect("no budget, no interrupt")
    }

    /// `Graph::grad` without a budget.
    fn grad(graph: &mut Graph, output: NodeId, wrt: &[NodeId]) -> Vec<NodeId> {
        graph
            .grad(output, wrt, usize::MAX)
            .expect("no budget")
            .results
    }

    /// The same nodes, one for one: op, operands and value (bit for bit).
    fn same_graph(a: &Graph, b: &Graph) -> Result<(), TestCaseError> {
        prop_assert_eq!(a.len(), b.len());
        for i in 0..a.len() {
            let id = NodeId(i as u32);
            prop_assert_eq!(a.op(id), b.op(id), "node {}", i);
            prop_assert_eq!(a.operands(id), b.operands(id), "node {}", i);
            prop_assert_eq!(a.value(id).to_bits(), b.value(id).to_bits(), "node {}", i);
        }
        Ok(())
    }

    #[test]
    fn the_cut_derivative_graph_is_the_full_walks_node_for_node() {
        let cut_something = Cell::new(0usize);
        let output_lowest = Cell::new(0usize);
        let mut runner = TestRunner::new(Config {
            cases: 384,
            failure_persistence: None,
            ..Config::default()
        });
        let strategy = (
            program(),
            prop::collection::vec(0..64usize, 1..=3),
            0..4usize,
            prop::bool::weighted(0.15),
        );
        let result = runner.run(&strategy, |(program, picks, output_pick, only_output)| {
            let graph = build(&program);
            let newest = graph.len() - 1;
            let output = NodeId(newest.saturating_sub(output_pick) as u32);
            // Differentiate with respect to leaves or derived nodes, sometimes
            // the output itself (then the cut is at the output: ∂y/∂y = 1).
            let wrt: Vec<NodeId> = if only_output {
                vec![output]
            } else {
                picks
                    .iter()
                    .map(
                        |&p| NodeId(output.index().saturating_sub(p % (output.index() + 1)) as u32),
                    )
                    .collect()
            };
            let min = *wrt.iter().min().expect("one name at least");
            // The cut order is the full one without the nodes below `min`.
            let full_order = graph.topo_order(output);
            let kept: Vec<NodeId> = full_order.iter().copied().filter(|&id| id >= min).collect();
            prop_assert_eq!(graph.topo_order_above(output, min), kept.clone());
            cut_something.set(cut_something.get() + usize::from(kept.len() < full_order.len()));
            output_lowest.set(output_lowest.get() + usize::from(output == min));

            let (mut cut, mut full) = (graph.clone(), graph);
            let firsts = grad(&mut cut, output, &wrt);
            prop_assert_eq!(&firsts, &full_walk(&mut full, output, &wrt));
            same_graph(&cut, &full)?;
            for &first in &firsts {
                // Order 2, and the Hessian's backward pass over the cut order.
                let seconds = grad(&mut cut, first, &wrt);
                prop_assert_eq!(&seconds, &full_walk(&mut full, first, &wrt));
                same_graph(&cut, &full)?;
                let by_cut = cut.backward(&cut.topo_order_above(first, min));
                let by_full = full.backward(&full.topo_order(first));
                for &x in &wrt {
                    prop_assert_eq!(by_cut[x].to_bits(), by_full[x].to_bits());
                }
            }
            Ok(())
        });
        if let Err(error) = result {
            panic!("{error}");
        }
        // The cases did cut nodes off, and reached the output as the lowest
        // name (where a cut one too high loses ∂y/∂y).
        assert!(cut_something.get() > 150, "{}", cut_something.get());
        assert!(output_lowest.get() > 40, "{}", output_lowest.get());
    }
}
