//! `:paths`: every path from the output to a node with its product of local
//! derivatives (the chain rule as a sum over paths), and the local derivative
//! of one edge.

use crate::session::Number;
use std::collections::HashMap;

use super::formula::Formulas;
use super::{Event, PathEdge, PathRow, Session, SessionError};
use crate::engine::NodeId;
use crate::syntax::{Ident, Span};

/// `:paths` lists at most this many paths.
const PATH_LIMIT: usize = 64;
/// and at most this many edges in all (paths through long chains are long).
const PATH_EDGES: usize = 4096;

impl Session {
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
        // The trace's formulas, the rule filled in with the operands (`∂(b*a)/∂a
        // = b`), made once per node on the paths.
        let mut formulas = Formulas::new(&self.graph, names.clone());
        let mut made: HashMap<NodeId, Vec<String>> = HashMap::new();
        let paths = found
            .paths
            .iter()
            .map(|path| {
                let edges: Vec<PathEdge> = path
                    .iter()
                    .map(|&(consumer, position)| {
                        let operands = self.graph.operands(consumer);
                        let input = operands[position];
                        let count = |list: &[NodeId]| {
                            u32::try_from(list.iter().filter(|&&i| i == input).count())
                                .unwrap_or(u32::MAX)
                        };
                        let use_number = count(&operands[..=position]);
                        let use_count = count(operands);
                        let formula = made
                            .entry(consumer)
                            .or_insert_with(|| {
                                formulas
                                    .of_node(consumer)
                                    .into_iter()
                                    .map(|f| match f.rhs {
                                        Some(rhs) => format!("{} = {rhs}", f.partial),
                                        None => f.partial,
                                    })
                                    .collect()
                            })
                            .get(position)
                            .cloned()
                            .unwrap_or_default();
                        PathEdge {
                            node: self.node_ref(consumer, &names),
                            input: self.node_ref(input, &names),
                            formula,
                            local: Number(self.local_derivative(consumer, position)),
                            passes_nothing: !self.passes(consumer, position),
                            use_number,
                            use_count,
                        }
                    })
                    .collect();
                // The chain rule along the path, with the backward pass's
                // selection: an edge that passes nothing makes the path 0.
                let product = if edges.iter().any(|e| e.passes_nothing) {
                    0.0
                } else {
                    edges.iter().map(|e| e.local.0).product()
                };
                PathRow {
                    edges,
                    product: Number(product),
                }
            })
            .collect();
        events.push(Event::Paths {
            of: output.label,
            wrt: target.name.clone(),
            paths,
            count: Number(found.count),
            gradient: Number(gradients[node]),
            nodes: order.len(),
        });
        Ok(())
    }

    /// Whether `node` passes gradient to its input at `position` at the stored
    /// values ([`crate::engine::OpInfo::passes`]).
    pub(super) fn passes(&self, node: NodeId, position: usize) -> bool {
        let values = self.operand_values(node);
        self.graph
            .op(node)
            .info()
            .passes(&values, self.graph.value(node), position)
    }

    /// ∂node/∂(its input at `position`) at the stored values.
    pub(super) fn local_derivative(&self, node: NodeId, position: usize) -> f64 {
        let values = self.operand_values(node);
        (self.graph.op(node).info().local)(&values, self.graph.value(node), position)
    }

    /// The stored values of `node`'s operands, in operand order.
    pub(super) fn operand_values(&self, node: NodeId) -> Vec<f64> {
        self.graph
            .operands(node)
            .iter()
            .map(|&i| self.graph.value(i))
            .collect()
    }
}
