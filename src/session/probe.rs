//! Read-only views of the session's tensors, for checks from outside the
//! session (the fuzz harness's oracle: a refused statement changes nothing).

use super::Session;
use crate::engine::tensor::Tensor;

impl Session {
    /// How many nodes the tensor graph holds (the scalar graph's is
    /// `graph().len()`).
    pub fn tensor_graph_len(&self) -> usize {
        self.tensors.graph.len()
    }

    /// The tensor variables and their values now, in the order first
    /// assigned. A name listed here hides the same name among the scalar
    /// variables.
    pub fn tensor_variables(&self) -> impl Iterator<Item = (&str, &Tensor)> {
        self.tensors
            .vars
            .iter()
            .map(|(name, &id)| (name.as_str(), self.tensors.graph.value(id)))
    }
}
