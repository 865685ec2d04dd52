//! How a node and an expression are written, for every renderer (text, Markdown,
//! LaTeX, DOT and SVG): one place reads the op table and decides whether an op
//! is written infix (`x * y`), prefix (`-a`) or as a call (`tanh(n)`).

use super::{Precision, format_number};
use crate::engine::{Notation, Op};
use crate::session::NodeRef;

/// How an op is written, decided from its row of the op table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A variable leaf: `leaf`.
    Leaf,
    /// A constant leaf: `constant`.
    Constant,
    /// A prefix operator: `-a`.
    Prefix(&'static str),
    /// A binary operator between its operands: `a * b`.
    Infix(&'static str),
    /// A function call: `tanh(n)`, `max(a, b, c)`.
    Call(&'static str),
}

impl Form {
    /// The form of `op`, from its row's [`Notation`]: leaves by kind, the
    /// unary minus as prefix `-`, the operators infix by their symbol
    /// (`+ - * / ^`), everything else a call.
    pub fn of(op: Op) -> Form {
        let info = op.info();
        match info.notation {
            Notation::Leaf if op == Op::Const => Form::Constant,
            Notation::Leaf => Form::Leaf,
            Notation::Prefix => Form::Prefix("-"),
            Notation::Infix => Form::Infix(info.name),
            Notation::Call => Form::Call(info.name),
        }
    }
}

/// A node as outputs refer to it: its name, its value for a constant (with
/// `precision`), or its label (`_7`).
pub fn node(node: &NodeRef, precision: Precision) -> String {
    match (&node.name, node.constant) {
        (Some(name), _) => name.clone(),
        // A constant is written in full whatever the precision: `x * 1.0001`,
        // never `x * 1`, so that an equation shown stays true.
        (None, Some(value)) => {
            let _ = precision;
            format_number(value, Precision::Full)
        }
        (None, None) => node.label(),
    }
}

/// What a node computes from its inputs' labels, as the calculator would parse
/// it: `x * y`, `-a`, `tanh(_4)`; `leaf` and `constant` for the leaves.
pub fn expression(op: Op, inputs: &[String]) -> String {
    match (Form::of(op), inputs) {
        (Form::Leaf, _) => "leaf".to_string(),
        (Form::Constant, _) => "constant".to_string(),
        (Form::Prefix(symbol), [a]) => format!("{symbol}{a}"),
        (Form::Infix(symbol), [a, b]) => format!("{a} {symbol} {b}"),
        (Form::Prefix(name) | Form::Infix(name) | Form::Call(name), args) => {
            format!("{name}({})", args.join(", "))
        }
    }
}

/// The label of an op node in a picture: `×` for `*`, the ASCII `-` for both
/// minus signs (the one the trace and every formula use, so a label reads back
/// as input), other operators and functions by name; `None` for leaves, which
/// have no op node.
pub fn symbol(op: Op) -> Option<&'static str> {
    match Form::of(op) {
        Form::Leaf | Form::Constant => None,
        Form::Prefix(_) => Some("-"),
        Form::Infix("*") => Some("×"),
        Form::Infix(name) | Form::Call(name) => Some(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_come_from_the_op_table() {
        let names = |inputs: &[&str]| inputs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(expression(Op::Mul, &names(&["x", "y"])), "x * y");
        assert_eq!(expression(Op::Pow, &names(&["x", "2"])), "x ^ 2");
        assert_eq!(expression(Op::Neg, &names(&["a"])), "-a");
        assert_eq!(expression(Op::Tanh, &names(&["_4"])), "tanh(_4)");
        assert_eq!(
            expression(Op::Max, &names(&["a", "b", "c"])),
            "max(a, b, c)"
        );
        assert_eq!(expression(Op::Const, &[]), "constant");
        assert_eq!(symbol(Op::Neg), Some("-"));
        assert_eq!(symbol(Op::Sub), Some("-"));
        assert_eq!(symbol(Op::Mul), Some("×"));
        assert_eq!(symbol(Op::Sin), Some("sin"));
        assert_eq!(symbol(Op::Const), None);
    }
}
