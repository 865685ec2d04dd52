//! micrograd's `Value` on gradcalc's engine: every `Value` is a handle to a
//! slot of one shared [`Values`] (`gradcalc::notebook::values`: the
//! calculator's arena, op table, reverse topological sort and backward walk,
//! and the gradients beside the nodes), the same code the WebAssembly build
//! runs under Pyodide. A `Value` that Python drops releases its slot; the
//! graph is compacted as `Values` says.

use std::sync::{Mutex, MutexGuard, OnceLock};

use gradcalc::engine::Op;
use gradcalc::notebook::values::{Operand, Values};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyTuple};

/// The one graph of every `Value` (Python's lock serialises its users; the
/// mutex makes it safe whatever thread drops a `Value`).
fn arena() -> MutexGuard<'static, Values> {
    static ARENA: OnceLock<Mutex<Values>> = OnceLock::new();
    ARENA
        .get_or_init(|| Mutex::new(Values::new()))
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Reads `other` as a `Value` or a number; `None` for anything else (the
/// operator then returns `NotImplemented`, as micrograd's would fail).
fn operand(other: &Bound<'_, PyAny>) -> Option<Operand> {
    if let Ok(value) = other.cast::<Value>() {
        return Some(Operand::Value(value.borrow().slot));
    }
    other.extract::<f64>().ok().map(Operand::Number)
}

/// A scalar with a gradient, as micrograd's `Value`: arithmetic builds the
/// computation graph, `backward()` fills in `.grad` of every node reachable.
#[pyclass(module = "gradcalc", weakref)]
pub struct Value {
    slot: u32,
}

impl Drop for Value {
    fn drop(&mut self) {
        arena().release(self.slot);
    }
}

impl Value {
    /// `op` of this value and `other` (in that order, or the other way round
    /// when `reflected`), or `NotImplemented`.
    fn binary(
        &self,
        py: Python<'_>,
        op: Op,
        other: &Bound<'_, PyAny>,
        reflected: bool,
    ) -> PyResult<Py<PyAny>> {
        let Some(other) = operand(other) else {
            return Ok(py.NotImplemented());
        };
        let this = Operand::Value(self.slot);
        let inputs = if reflected {
            [other, this]
        } else {
            [this, other]
        };
        let slot = arena().apply(op, &inputs).map_err(PyValueError::new_err)?;
        Ok(Py::new(py, Value { slot })?.into_any())
    }

    /// `op` of this value.
    fn unary(&self, py: Python<'_>, op: Op) -> PyResult<Py<Value>> {
        let slot = arena()
            .apply(op, &[Operand::Value(self.slot)])
            .map_err(PyValueError::new_err)?;
        Py::new(py, Value { slot })
    }
}

/// The operators and functions of a value as Python methods, in a
/// `#[pymethods]` block of their own beside the others (pyo3's
/// `multiple-pymethods`), written by one macro: each binary operator `op` of
/// the value and the other operand (`reflected`: the other operand first, for
/// `2 + x`, which Python answers with `x.__radd__(2)`) or `NotImplemented`;
/// `**` likewise, and `NotImplemented` for a modulo (`pow(x, 2, 5)`); each
/// unary one `op` of the value.
mod operators {
    // pyo3's code for this block calls its own unsafe functions from unsafe
    // ones; written through a `macro_rules!`, the 2024 edition's lint counts
    // it as this crate's code (written out by hand, it does not).
    #![allow(unsafe_op_in_unsafe_fn)]

    use gradcalc::engine::Op;
    use pyo3::prelude::*;

    use super::Value;

    macro_rules! operators {
        (
            binary { $($binary:ident: $op:ident, $reflected:literal;)* }
            power { $($power:ident: $power_reflected:literal;)* }
            unary { $($(#[$doc:meta])* $unary:ident: $unary_op:ident;)* }
        ) => {
            #[pymethods]
            impl Value {
                $(
                    fn $binary(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                        self.binary(py, Op::$op, other, $reflected)
                    }
                )*
                $(
                    fn $power(
                        &self,
                        py: Python<'_>,
                        other: &Bound<'_, PyAny>,
                        modulo: Option<&Bound<'_, PyAny>>,
                    ) -> PyResult<Py<PyAny>> {
                        if modulo.is_some_and(|m| !m.is_none()) {
                            return Ok(py.NotImplemented());
                        }
                        self.binary(py, Op::Pow, other, $power_reflected)
                    }
                )*
                $(
                    $(#[$doc])*
                    fn $unary(&self, py: Python<'_>) -> PyResult<Py<Value>> {
                        self.unary(py, Op::$unary_op)
                    }
                )*
            }
        };
    }

    operators! {
        binary {
            __add__: Add, false;
            __radd__: Add, true;
            __sub__: Sub, false;
            __rsub__: Sub, true;
            __mul__: Mul, false;
            __rmul__: Mul, true;
            __truediv__: Div, false;
            __rtruediv__: Div, true;
        }
        power {
            __pow__: false;
            __rpow__: true;
        }
        unary {
            __neg__: Neg;
            /// `max(x, 0)`; passes no gradient where x ≤ 0.
            relu: Relu;
            /// The hyperbolic tangent.
            tanh: Tanh;
            /// e to the power of this value.
            exp: Exp;
            /// The natural logarithm.
            log: Ln;
            /// The logistic sigmoid (beyond micrograd).
            sigmoid: Sigmoid;
        }
    }
}

/// Python's `repr` of a float (`2.0`, `1e-07`).
fn float_repr(py: Python<'_>, x: f64) -> PyResult<String> {
    Ok(PyFloat::new(py, x).repr()?.to_string())
}

#[pymethods]
impl Value {
    /// A leaf holding `data`. `_children` and `_op` are accepted for
    /// micrograd's signature and must be empty (gradcalc computes a node
    /// from its inputs: use the operators); `label` names it in pictures.
    #[new]
    #[pyo3(signature = (data, _children = None, _op = "", label = ""))]
    fn new(
        data: f64,
        _children: Option<&Bound<'_, PyTuple>>,
        _op: &str,
        label: &str,
    ) -> PyResult<Value> {
        if _children.is_some_and(|c| !c.is_empty()) || !_op.is_empty() {
            return Err(PyTypeError::new_err(
                "gradcalc's Value makes leaves only: build other values with + - * / ** and the methods",
            ));
        }
        Ok(Value {
            slot: arena().leaf(data, label),
        })
    }

    /// The forward value.
    #[getter]
    fn data(&self) -> f64 {
        arena().data(self.slot)
    }

    /// Sets a leaf's value (values built from it before keep theirs, as in
    /// micrograd).
    ///
    /// Errors: `ValueError` for a value computed by an op.
    #[setter]
    fn set_data(&self, data: f64) -> PyResult<()> {
        arena()
            .set_data(self.slot, data)
            .map_err(PyValueError::new_err)
    }

    /// The gradient the last `backward()` calls left here (0 at first).
    #[getter]
    fn grad(&self) -> f64 {
        arena().grad(self.slot)
    }

    #[setter]
    fn set_grad(&self, grad: f64) {
        arena().set_grad(self.slot, grad);
    }

    /// The name pictures and traces give this node ('' for none).
    #[getter]
    fn label(&self) -> String {
        arena().label(self.slot)
    }

    #[setter]
    fn set_label(&self, label: &str) {
        arena().set_label(self.slot, label);
    }

    /// The op that computed this value, as gradcalc names it (`''` for a leaf).
    #[getter]
    fn _op(&self) -> String {
        arena().op_name(self.slot)
    }

    /// The inputs of this value (numbers given to an operator are leaves
    /// here too), in operand order.
    #[getter]
    fn _prev(&self, py: Python<'_>) -> PyResult<Vec<Py<Value>>> {
        let slots = arena().inputs(self.slot);
        slots
            .into_iter()
            .map(|slot| Py::new(py, Value { slot }))
            .collect()
    }

    /// micrograd's backward pass from this value: its `.grad` set to 1, and
    /// upstream × local added to the `.grad` of every input, node by node in
    /// reverse topological order (so gradients accumulate at fan-out, and
    /// onto what `.grad` held before: zero them between steps).
    fn backward(&self) {
        arena().backward(self.slot);
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let (data, grad) = {
            let arena = arena();
            (arena.data(self.slot), arena.grad(self.slot))
        };
        Ok(format!(
            "Value(data={}, grad={})",
            float_repr(py, data)?,
            float_repr(py, grad)?
        ))
    }

    fn __float__(&self) -> f64 {
        self.data()
    }
}

/// How many nodes the shared graph holds now (for tests of its memory).
#[pyfunction]
pub fn arena_nodes() -> usize {
    arena().nodes()
}

/// The gradcalc statements that build the graph of `value` (ending with
/// `:backward` of it) and the name they give it
/// (`gradcalc::notebook::values::Values::source`).
#[pyfunction]
pub fn value_source(value: PyRef<'_, Value>) -> (String, String) {
    arena().source(value.slot)
}
