//! Read-only views of the session's tensors, for checks from outside the
//! session (the fuzz harness's oracle: a refused statement changes nothing;
//! the Python package's `Session.value` and `Session.grad`).

use super::params::Param;
use super::tensors::tensor_error;
use super::{ErrorCode, Session, SessionError};
use crate::engine::tensor::{Shape, Tensor, TensorId};
use crate::syntax::Span;

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
        self.shaped_vars()
            .map(|(name, id)| (name.as_str(), self.tensors.graph.value(id)))
    }
}

impl Session {
    /// The value of the tensor variable `name` now (a vector, a matrix, or a
    /// tensor of shape `()`), or `None` when `name` is no tensor variable.
    /// For hosts that read values without running a statement (the Python
    /// package's `Session.value`).
    pub fn tensor_variable(&self, name: &str) -> Option<&Tensor> {
        let id = self.shaped_var(name)?;
        Some(self.tensors.graph.value(id))
    }

    /// ∂`of`/∂`wrt` at the values now, of `wrt`'s shape, when either names
    /// a tensor variable (`None` when neither does: the scalar graph's
    /// backward pass answers). `of` must be a tensor of shape `()`, or a
    /// number (whose gradient with respect to a tensor is zeros: the scalar
    /// graph reads no tensor); `wrt` a tensor variable (leaf or derived) or
    /// a number the tensor graph reads through its scalar operands. The
    /// value `grad(of, wrt)` has in a statement, without running one:
    /// nothing in the session changes.
    ///
    /// Errors: a name that is no variable ([`ErrorCode::UnknownName`]), `of`
    /// of another shape than `()` ([`ErrorCode::Shape`]), gradients past the
    /// memory budget ([`ErrorCode::Limit`]), Ctrl-C.
    ///
    /// [`ErrorCode::UnknownName`]: super::ErrorCode::UnknownName
    /// [`ErrorCode::Shape`]: super::ErrorCode::Shape
    /// [`ErrorCode::Limit`]: super::ErrorCode::Limit
    pub fn gradient_now(&self, of: &str, wrt: &str) -> Option<Result<Tensor, SessionError>> {
        let tensor_of = self.shaped_var(of);
        let tensor_wrt = self.shaped_var(wrt);
        if tensor_of.is_none() && tensor_wrt.is_none() {
            return None;
        }
        Some(self.gradient_of_tensors(tensor_of, of, tensor_wrt, wrt))
    }

    /// [`Session::gradient_now`] once one of the names is a tensor.
    fn gradient_of_tensors(
        &self,
        tensor_of: Option<TensorId>,
        of: &str,
        tensor_wrt: Option<TensorId>,
        wrt: &str,
    ) -> Result<Tensor, SessionError> {
        let unknown = |name: &str| {
            tensor_error(
                ErrorCode::UnknownName,
                Span::default(),
                format!("no variable `{name}`"),
                None,
            )
        };
        let param = match tensor_wrt {
            Some(id) => Param::Tensor(id),
            None => Param::Scalar(self.variable(wrt).ok_or_else(|| unknown(wrt))?),
        };
        let Some(output) = tensor_of else {
            // A number's graph reads no tensor.
            self.variable(of).ok_or_else(|| unknown(of))?;
            return Ok(match param {
                Param::Tensor(id) => Tensor::zeros(self.tensors.graph.shape(id)),
                Param::Scalar(_) => Tensor::scalar(0.0),
            });
        };
        let shape = self.tensors.graph.shape(output);
        if shape != Shape::scalar() {
            return Err(tensor_error(
                ErrorCode::Shape,
                Span::default(),
                format!(
                    "the gradient of `{of}` takes `{of}` of shape (), not {}",
                    shape.parenthesized()
                ),
                Some(format!("reduce it first, e.g. `L = sum({of})`")),
            ));
        }
        let gradients = self.tensor_backward(output, Span::default())?;
        Ok(self.param_gradient(&gradients, param))
    }
}
