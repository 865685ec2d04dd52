//! micrograd's `Value` under Pyodide (`python/gradcalc/_wasm.py`): the same
//! [`Values`] as the compiled module's `gradcalc.Value`
//! (`gradcalc::notebook::values`), one per module instance, reached through
//! plain numeric exports for what a training loop calls at every node, and
//! through `gradcalc_cells` (module `notebook`) for the rest:
//!
//! | export | does |
//! |---|---|
//! | `gradcalc_value_leaf(data) -> slot` | a new leaf |
//! | `gradcalc_value_unary(op, slot) -> slot` | `op` of a value |
//! | `gradcalc_value_binary(op, a, b) -> slot` | `op` of two values |
//! | `gradcalc_value_number(op, slot, x, reflected) -> slot` | `op` of a value and a number (`x op value` when `reflected` is 1) |
//! | `gradcalc_value_data(slot)`, `gradcalc_value_grad(slot)` | `.data`, `.grad` |
//! | `gradcalc_value_set_data(slot, x) -> 0/1`, `gradcalc_value_set_grad(slot, g)` | set them (1: refused, the message in the output buffer) |
//! | `gradcalc_value_backward(slot)` | micrograd's `backward()` |
//! | `gradcalc_value_release(slot)` | the handle is gone |
//!
//! `op` is an index into [`OPS`]. A slot that cannot be made is `u32::MAX`,
//! with the message in the output buffer. The `gradcalc_cells` calls
//! ([`answer`]): `value_label` (`slot`), `value_set_label` (`slot`,
//! `label`), `value_op`, `value_inputs` (new slots), `value_source`
//! (`[source, name]`) and `value_nodes`.

use std::cell::RefCell;

use gradcalc::engine::Op;
use gradcalc::notebook::values::{Operand, Values};
use serde_json::{Value, json};

use crate::STATE;

/// The ops a `Value` applies, by the index the exports take (the Python
/// layer's `_OPS` names them in this order).
pub const OPS: [Op; 11] = [
    Op::Add,
    Op::Sub,
    Op::Mul,
    Op::Div,
    Op::Pow,
    Op::Neg,
    Op::Relu,
    Op::Tanh,
    Op::Exp,
    Op::Ln,
    Op::Sigmoid,
];

/// A slot that could not be made.
const NONE: u32 = u32::MAX;

thread_local! {
    /// Every `Value` of this module instance.
    static VALUES: RefCell<Values> = RefCell::new(Values::new());
}

/// `work` on this instance's values.
fn with<T>(work: impl FnOnce(&mut Values) -> T) -> T {
    VALUES.with(|values| work(&mut values.borrow_mut()))
}

/// The slot `apply` made, or [`NONE`] with its message in the output buffer.
fn made(applied: Result<u32, String>) -> u32 {
    applied.unwrap_or_else(|message| {
        STATE.with(|state| state.borrow_mut().output = message.into_bytes());
        NONE
    })
}

/// `OPS[op]` of `inputs`, or [`NONE`] for an index out of range.
fn apply(op: u32, inputs: &[Operand]) -> u32 {
    let applied = match OPS.get(op as usize) {
        Some(&op) => with(|values| values.apply(op, inputs)),
        None => Err(format!("no op {op}")),
    };
    made(applied)
}

/// A new leaf holding `data`.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_value_leaf(data: f64) -> u32 {
    with(|values| values.leaf(data, ""))
}

/// `OPS[op]` of the value in `slot`.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_value_unary(op: u32, slot: u32) -> u32 {
    apply(op, &[Operand::Value(slot)])
}

/// `OPS[op]` of the values in slots `a` and `b`, in that order.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_value_binary(op: u32, a: u32, b: u32) -> u32 {
    apply(op, &[Operand::Value(a), Operand::Value(b)])
}

/// `OPS[op]` of the value in `slot` and the number `x` (`x op value` when
/// `reflected` is 1).
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_value_number(op: u32, slot: u32, x: f64, reflected: u32) -> u32 {
    if reflected == 1 {
        apply(op, &[Operand::Number(x), Operand::Value(slot)])
    } else {
        apply(op, &[Operand::Value(slot), Operand::Number(x)])
    }
}

/// The forward value in `slot`.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_value_data(slot: u32) -> f64 {
    with(|values| values.data(slot))
}

/// Sets a leaf's value: 0, or 1 with the message in the output buffer.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_value_set_data(slot: u32, data: f64) -> u32 {
    u32::from(made(with(|values| values.set_data(slot, data)).map(|()| 0)) == NONE)
}

/// The gradient in `slot`.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_value_grad(slot: u32) -> f64 {
    with(|values| values.grad(slot))
}

/// Sets the gradient in `slot`.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_value_set_grad(slot: u32, grad: f64) {
    with(|values| values.set_grad(slot, grad));
}

/// micrograd's `backward()` from `slot`.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_value_backward(slot: u32) {
    with(|values| values.backward(slot));
}

/// Frees `slot`: its Python `Value` is gone.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_value_release(slot: u32) {
    with(|values| values.release(slot));
}

/// The reply to a `value_…` request of `gradcalc_cells`, or `None` for
/// another call.
pub fn answer(request: &Value) -> Option<Value> {
    let slot = request
        .get("slot")
        .and_then(Value::as_u64)
        .and_then(|slot| u32::try_from(slot).ok())
        .unwrap_or(NONE);
    let label = request.get("label").and_then(Value::as_str).unwrap_or("");
    with(|values| {
        Some(match request.get("call").and_then(Value::as_str) {
            Some("value_label") => json!({"ok": values.label(slot)}),
            Some("value_set_label") => {
                values.set_label(slot, label);
                json!({"ok": null})
            }
            Some("value_op") => json!({"ok": values.op_name(slot)}),
            Some("value_inputs") => json!({"ok": values.inputs(slot)}),
            Some("value_source") => json!({"ok": values.source(slot)}),
            Some("value_nodes") => json!({"ok": values.nodes()}),
            _ => return None,
        })
    })
}
