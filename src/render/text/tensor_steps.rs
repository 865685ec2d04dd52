//! The terminal's side of a tensor output's step model: `:topo` of a tensor
//! graph (each node with its shape and step), and how the model's header
//! and steps are written ([`super::StepText`]), as the tensor `:trace`
//! writes them, for `:step` and the page.

use std::fmt::Write;

use super::paint::{Painter, pad, plural};
use super::tensors;
use crate::engine::tensor::TensorId;
use crate::render::Style;
use crate::session::{StepModel, TensorTopoRow, TensorTraceStep};

/// `:topo` of a tensor output: a header, then one row per node, output
/// first: its number, name, what computes it, its shape, and its step of
/// the backward pass (`—` for a leaf or a constant).
pub(super) fn topo(out: &mut String, of: &str, rows: &[TensorTopoRow], p: &Painter) {
    let _ = writeln!(
        out,
        "reverse topological order from {}: {} tensor node{}, output first",
        p.name(of),
        rows.len(),
        plural(rows.len())
    );
    let number = rows.len().to_string().len().max(1);
    let node = rows
        .iter()
        .map(|r| r.node.chars().count())
        .fold(4, usize::max);
    let computes = rows
        .iter()
        .map(|r| r.computes.chars().count())
        .fold(8, usize::max);
    let shape = rows
        .iter()
        .map(|r| r.shape.chars().count())
        .fold(5, usize::max);
    let _ = writeln!(
        out,
        "  {}  {}  {}  {}  step",
        pad("#", number),
        pad("node", node),
        pad("computes", computes),
        pad("shape", shape)
    );
    for (k, row) in rows.iter().enumerate() {
        let step = row.step.map_or_else(|| "—".to_string(), |s| s.to_string());
        let _ = writeln!(
            out,
            "  {}  {}  {}  {}  {step}",
            pad(&(k + 1).to_string(), number),
            p.name(&pad(&row.node, node)),
            pad(&row.computes, computes),
            pad(&row.shape, shape)
        );
    }
}

impl super::StepText for TensorId {
    fn header(model: &StepModel<TensorId>, out: &mut String, style: &Style) {
        let p = Painter(style);
        match model.is_empty() {
            // The trace's header and why it has no step (a leaf output).
            true => tensors::trace(out, &model.of, &model.legend, &[], &p),
            false => tensors::trace_header(out, &model.of, &model.legend, &p),
        }
    }

    fn step(model: &StepModel<TensorId>, step: &TensorTraceStep, out: &mut String, style: &Style) {
        tensors::trace_steps(out, &model.of, std::slice::from_ref(step), &Painter(style));
    }
}
