//! micrograd's `Value` on gradcalc's engine: every `Value` is a handle to a
//! node of one shared [`Graph`] (the calculator's arena, op table, reverse
//! topological sort and backward walk); its gradient lives beside the node.
//!
//! Memory: a handle holds a slot of the [`Arena`], which names its node. A
//! `Value` that Python drops frees its slot. Nodes are appended as values are
//! computed; when the graph has doubled since the last collection, it is
//! compacted to what the live handles reach ([`Graph::retain_reachable`]) and
//! the slots renamed: a training loop that builds a new graph every step
//! (micrograd's way) stays within about twice the memory of what it keeps.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use gradcalc::engine::{Graph, NodeId, Op};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyTuple};

/// A slot that names no node.
const FREE: u32 = u32::MAX;

/// The graph is not compacted below this many nodes.
const MIN_COLLECT: usize = 1 << 16;

/// The nodes of every `Value`, their gradients, and the handles to them.
pub(crate) struct Arena {
    pub(crate) graph: Graph,
    /// One gradient per node (micrograd's `.grad`).
    pub(crate) grads: Vec<f64>,
    /// The node of each slot (a `Value` holds a slot), or [`FREE`].
    slots: Vec<u32>,
    /// Free slots, for reuse.
    free: Vec<u32>,
    /// `label`s given to nodes (by node index).
    pub(crate) labels: HashMap<u32, String>,
    /// The graph's size after the last collection.
    kept: usize,
}

/// The one arena (Python's lock serialises its users; the mutex makes it
/// safe whatever thread drops a `Value`).
fn arena() -> MutexGuard<'static, Arena> {
    static ARENA: OnceLock<Mutex<Arena>> = OnceLock::new();
    ARENA
        .get_or_init(|| {
            Mutex::new(Arena {
                graph: Graph::new(),
                grads: Vec::new(),
                slots: Vec::new(),
                free: Vec::new(),
                labels: HashMap::new(),
                kept: 0,
            })
        })
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Arena {
    /// The node of `slot`.
    pub(crate) fn node(&self, slot: u32) -> NodeId {
        NodeId(self.slots[slot as usize])
    }

    /// A slot for `id`.
    fn hold(&mut self, id: NodeId) -> u32 {
        if let Some(slot) = self.free.pop() {
            self.slots[slot as usize] = id.0;
            slot
        } else {
            self.slots.push(id.0);
            u32::try_from(self.slots.len() - 1).unwrap_or(FREE)
        }
    }

    /// A new node's gradient (0) and a slot for it; compacts the graph when it
    /// has doubled.
    fn added(&mut self, id: NodeId) -> u32 {
        self.grads.push(0.0);
        let slot = self.hold(id);
        if self.graph.len() >= MIN_COLLECT.max(2 * self.kept) {
            self.collect();
        }
        slot
    }

    /// Keeps only the nodes the live slots reach, renaming the slots, the
    /// gradients and the labels.
    fn collect(&mut self) {
        let roots: Vec<NodeId> = self
            .slots
            .iter()
            .filter(|&&s| s != FREE)
            .map(|&s| NodeId(s))
            .collect();
        let remap = self.graph.retain_reachable(&roots);
        for old in 0..remap.before() {
            if let Some(new) = remap.get(NodeId(old as u32)) {
                self.grads[new.index()] = self.grads[old];
            }
        }
        self.grads.truncate(remap.kept());
        self.grads.shrink_to_fit();
        for slot in &mut self.slots {
            if *slot != FREE {
                *slot = remap.get(NodeId(*slot)).map_or(FREE, |id| id.0);
            }
        }
        self.labels = std::mem::take(&mut self.labels)
            .into_iter()
            .filter_map(|(old, label)| remap.get(NodeId(old)).map(|new| (new.0, label)))
            .collect();
        self.kept = self.graph.len();
    }

    /// `op` applied to `inputs`, in a new slot.
    fn apply(&mut self, op: Op, inputs: &[Operand]) -> PyResult<u32> {
        let ids: Vec<NodeId> = inputs
            .iter()
            .map(|operand| match *operand {
                Operand::Value(slot) => self.node(slot),
                Operand::Number(number) => {
                    self.grads.push(0.0);
                    self.graph.constant(number)
                }
            })
            .collect();
        let id = self
            .graph
            .apply(op, &ids)
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        Ok(self.added(id))
    }

    /// micrograd's `backward()` from the node of `slot`: its gradient set to
    /// 1, then for every node reachable, in reverse topological order, the
    /// chain rule adds upstream × local to each input's `.grad`
    /// (accumulation at fan-out, and onto what `.grad` held: micrograd never
    /// zeroes a gradient itself).
    fn backward(&mut self, slot: u32) {
        let root = self.node(slot);
        let order = self.graph.topo_order(root);
        // A node below the root whose `.grad` is already set passes it down
        // too (micrograd's walk reads every node's `.grad` as its upstream):
        // by linearity, one more walk from each such node, scaled by it.
        let seeded: Vec<(NodeId, f64)> = order
            .iter()
            .skip(1)
            .filter(|&&id| self.graph.op(id).info().arity != gradcalc::engine::Arity::Leaf)
            .map(|&id| (id, self.grads[id.index()]))
            .filter(|&(_, grad)| grad != 0.0)
            .collect();
        let from_root = self.graph.backward(&order);
        for &id in order.iter().skip(1) {
            self.grads[id.index()] += from_root.get(id);
        }
        self.grads[root.index()] = 1.0;
        for (node, upstream) in seeded {
            let below = self.graph.topo_order(node);
            let grads = self.graph.backward(&below);
            for &id in below.iter().skip(1) {
                self.grads[id.index()] += upstream * grads.get(id);
            }
        }
    }
}

/// The other operand of an arithmetic operator.
enum Operand {
    Value(u32),
    Number(f64),
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
        let mut arena = arena();
        if let Some(node) = arena.slots.get_mut(self.slot as usize) {
            *node = FREE;
            arena.free.push(self.slot);
        }
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
        let slot = arena().apply(op, &inputs)?;
        Ok(Py::new(py, Value { slot })?.into_any())
    }

    /// `op` of this value.
    fn unary(&self, py: Python<'_>, op: Op) -> PyResult<Py<Value>> {
        let slot = arena().apply(op, &[Operand::Value(self.slot)])?;
        Py::new(py, Value { slot })
    }

    /// The node of this value.
    pub(crate) fn slot(&self) -> u32 {
        self.slot
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
        let mut arena = arena();
        let id = arena.graph.leaf(data);
        if !label.is_empty() {
            arena.labels.insert(id.0, label.to_string());
        }
        let slot = arena.added(id);
        Ok(Value { slot })
    }

    /// The forward value.
    #[getter]
    fn data(&self) -> f64 {
        let arena = arena();
        arena.graph.value(arena.node(self.slot))
    }

    /// Sets a leaf's value (values built from it before keep theirs, as in
    /// micrograd).
    ///
    /// Errors: `ValueError` for a value computed by an op.
    #[setter]
    fn set_data(&self, data: f64) -> PyResult<()> {
        let mut arena = arena();
        let id = arena.node(self.slot);
        let op = arena.graph.op(id);
        if op != Op::Variable {
            return Err(PyValueError::new_err(format!(
                "only a leaf's data can be set: this Value is computed by `{}` from its inputs",
                op.info().name
            )));
        }
        arena.graph.set_leaf_value(id, data);
        Ok(())
    }

    /// The gradient the last `backward()` calls left here (0 at first).
    #[getter]
    fn grad(&self) -> f64 {
        let arena = arena();
        arena.grads[arena.node(self.slot).index()]
    }

    #[setter]
    fn set_grad(&self, grad: f64) {
        let mut arena = arena();
        let id = arena.node(self.slot);
        arena.grads[id.index()] = grad;
    }

    /// The name pictures and traces give this node ('' for none).
    #[getter]
    fn label(&self) -> String {
        let arena = arena();
        let id = arena.node(self.slot);
        arena.labels.get(&id.0).cloned().unwrap_or_default()
    }

    #[setter]
    fn set_label(&self, label: &str) {
        let mut arena = arena();
        let id = arena.node(self.slot);
        if label.is_empty() {
            arena.labels.remove(&id.0);
        } else {
            arena.labels.insert(id.0, label.to_string());
        }
    }

    /// The op that computed this value, as gradcalc names it (`''` for a leaf).
    #[getter]
    fn _op(&self) -> String {
        let arena = arena();
        match arena.graph.op(arena.node(self.slot)) {
            Op::Variable | Op::Const => String::new(),
            op => op.info().name.to_string(),
        }
    }

    /// The inputs of this value (numbers given to an operator are leaves
    /// here too), in operand order.
    #[getter]
    fn _prev(&self, py: Python<'_>) -> PyResult<Vec<Py<Value>>> {
        let slots: Vec<u32> = {
            let mut arena = arena();
            let id = arena.node(self.slot);
            let inputs = arena.graph.operands(id).to_vec();
            inputs.into_iter().map(|input| arena.hold(input)).collect()
        };
        slots
            .into_iter()
            .map(|slot| Py::new(py, Value { slot }))
            .collect()
    }

    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, Op::Add, other, false)
    }

    fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, Op::Add, other, true)
    }

    fn __sub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, Op::Sub, other, false)
    }

    fn __rsub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, Op::Sub, other, true)
    }

    fn __mul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, Op::Mul, other, false)
    }

    fn __rmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, Op::Mul, other, true)
    }

    fn __truediv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, Op::Div, other, false)
    }

    fn __rtruediv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, Op::Div, other, true)
    }

    fn __pow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if modulo.is_some_and(|m| !m.is_none()) {
            return Ok(py.NotImplemented());
        }
        self.binary(py, Op::Pow, other, false)
    }

    fn __rpow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if modulo.is_some_and(|m| !m.is_none()) {
            return Ok(py.NotImplemented());
        }
        self.binary(py, Op::Pow, other, true)
    }

    fn __neg__(&self, py: Python<'_>) -> PyResult<Py<Value>> {
        self.unary(py, Op::Neg)
    }

    /// `max(x, 0)`; passes no gradient where x ≤ 0.
    fn relu(&self, py: Python<'_>) -> PyResult<Py<Value>> {
        self.unary(py, Op::Relu)
    }

    /// The hyperbolic tangent.
    fn tanh(&self, py: Python<'_>) -> PyResult<Py<Value>> {
        self.unary(py, Op::Tanh)
    }

    /// e to the power of this value.
    fn exp(&self, py: Python<'_>) -> PyResult<Py<Value>> {
        self.unary(py, Op::Exp)
    }

    /// The natural logarithm.
    fn log(&self, py: Python<'_>) -> PyResult<Py<Value>> {
        self.unary(py, Op::Ln)
    }

    /// The logistic sigmoid (beyond micrograd).
    fn sigmoid(&self, py: Python<'_>) -> PyResult<Py<Value>> {
        self.unary(py, Op::Sigmoid)
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
            let id = arena.node(self.slot);
            (arena.graph.value(id), arena.grads[id.index()])
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
    arena().graph.len()
}

/// The arena, for the graph's source (`source.rs`).
pub(crate) fn shared() -> MutexGuard<'static, Arena> {
    arena()
}
