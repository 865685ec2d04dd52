//! The terminal's side of a tensor output's step model: `:topo` of a tensor
//! graph (each node with its shape and step), and the pieces `:step` walks
//! (the header, then each step as the tensor `:trace` writes it).

use std::fmt::Write;

use super::paint::{Painter, pad, plural};
use super::tensors;
use crate::render::Style;
use crate::session::{TensorName, TensorTopoRow, TensorTraceStep};

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

/// The pieces `:step` shows of a tensor `:trace` of `of`: the header line,
/// then each step with its number, as `:trace` writes them.
pub fn tensor_step_pieces(
    of: &str,
    legend: &[TensorName],
    steps: &[TensorTraceStep],
    style: &Style,
) -> (String, Vec<(usize, String)>) {
    let p = Painter(style);
    let mut header = String::new();
    tensors::trace_header(&mut header, of, legend, &p);
    let pieces = steps
        .iter()
        .map(|step| {
            let mut text = String::new();
            tensors::trace_steps(&mut text, of, std::slice::from_ref(step), &p);
            (step.step, text.trim_end().to_string())
        })
        .collect();
    (header.trim_end().to_string(), pieces)
}
