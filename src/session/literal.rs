//! A plain numeric literal (`[0, 0, …]`, `[[1, 2], [3, 4]]`: numbers only)
//! read straight from its tree into one tensor, without a value per tree
//! node: 8 bytes a number beside the tree's 28, so that a literal of 10⁶
//! numbers costs tens of MB, not hundreds (the parser's fast path,
//! `syntax/parser/literal.rs`, builds such trees without pest).

use crate::engine::tensor::{Shape, Tensor};
use crate::syntax::{ExprKind, ExprTree, LIST};

/// The value of `tree` when it is a plain literal: its root a `[](…)` of
/// numbers (a vector) or of rows `[](…)` of numbers, all of one length (a
/// matrix); `None` for anything else, which the general evaluation reads
/// (and whose errors it gives: a ragged row, a variable among the numbers).
pub(super) fn plain_literal(tree: &ExprTree) -> Option<Tensor> {
    let list = |id: crate::syntax::ExprId| match &tree.get(id).kind {
        ExprKind::Call(call) if call.derivative == 0 && &*call.name == LIST => Some(call),
        _ => None,
    };
    let number = |id: crate::syntax::ExprId| match tree.get(id).kind {
        ExprKind::Number(x) => Some(x),
        _ => None,
    };
    let root = list(tree.root())?;
    let first = *root.args.first()?;
    if number(first).is_some() {
        let data = root
            .args
            .iter()
            .map(|&a| number(a))
            .collect::<Option<Vec<f64>>>()?;
        return Some(Tensor::vector(data));
    }
    let columns = list(first)?.args.len();
    let mut data = Vec::with_capacity(root.args.len().checked_mul(columns)?);
    for &row in &root.args {
        let row = list(row)?;
        if row.args.len() != columns {
            return None;
        }
        for &a in &row.args {
            data.push(number(a)?);
        }
    }
    Some(Tensor::new(Shape::matrix(root.args.len(), columns), data))
}
