//! The backward steps of a tensor output as a handout (`:trace md`,
//! `:trace tex`): the vectorised lecture on paper. The same six columns as
//! the scalar tables (`render/tables.rs`), read for tensors: Step | Node
//! (its op and shape) | Upstream (∂L/∂node) | Rule (what the operand
//! receives, the typed-back rule `:trace` prints, `∂L/∂W += outer(upstream,
//! x)`, and the shapes it takes and gives) | Receives (the numbers) |
//! Gradient (a fan-out's use and its running sum, or final). Numbers are
//! written as `:trace` writes them (valid input, a large tensor summarised
//! as numpy summarises it) but on one line without the terminal's aligning
//! spaces (`[[0.1822, 0, -0.1822], …]`); each short name (`t39`) is a note row first.

use super::paint::Painter;
use super::tensors::elements_inline;
use crate::render::tables::{Cell, Piece, latex, markdown};
use crate::render::{Precision, Style};
use crate::session::{TableFormat, TensorData, TensorName, TensorTraceStep};

/// The header of both tables.
const COLUMNS: [&str; 6] = ["Step", "Node", "Upstream", "Rule", "Receives", "Gradient"];

/// The handout of a tensor `:trace` of `of` (its `legend` of short names
/// and its `steps`) in `format`, numbers to `precision`, ending in a newline.
pub fn handout_table(
    of: &str,
    legend: &[TensorName],
    steps: &[TensorTraceStep],
    format: TableFormat,
    precision: Precision,
) -> String {
    let style = Style {
        color: false,
        ascii: false,
        precision,
        charts: false,
        // One line a cell: never wrapped.
        width: usize::MAX,
    };
    let p = Painter(&style);
    // One line, unpadded: a matrix's rows side by side.
    let numbers = |value: &TensorData| -> Cell { vec![Piece::Math(elements_inline(value, &p))] };
    let words = |text: String| -> Cell { vec![Piece::Text(text)] };
    let partial = |wrt: &str| match wrt.contains(' ') {
        true => format!("∂{of}/∂({wrt})"),
        false => format!("∂{of}/∂{wrt}"),
    };
    let mut rows: Vec<Vec<Cell>> = legend
        .iter()
        .map(|row| vec![words(format!("where {} = {}", row.name, row.computes))])
        .collect();
    for step in steps {
        let node = format!("{} ({}), {}", step.node, step.op, shape(&step.upstream));
        for (k, c) in step.contributions.iter().enumerate() {
            let first = k == 0;
            let gradient = match (c.uses, &c.so_far) {
                (Some((use_number, count)), Some(sum)) => {
                    let mut cell = words(format!(
                        "use {use_number} of {count}: {} so far = ",
                        partial(&c.input)
                    ));
                    cell.extend(numbers(sum));
                    cell
                }
                (Some((use_number, count)), None) => {
                    words(format!("use {use_number} of {count}: contributions add"))
                }
                (None, _) => words(format!("{} final", partial(&c.input))),
            };
            rows.push(vec![
                if first {
                    words(step.step.to_string())
                } else {
                    Cell::new()
                },
                if first {
                    words(node.clone())
                } else {
                    Cell::new()
                },
                if first {
                    let mut cell = words(format!("{} = ", partial(&step.node)));
                    cell.extend(numbers(&step.upstream));
                    cell
                } else {
                    Cell::new()
                },
                vec![
                    Piece::Text(format!("{} += ", partial(&c.input))),
                    Piece::Math(c.rule.clone()),
                    Piece::Text(format!(", {}", c.shapes)),
                ],
                numbers(&c.value),
                gradient,
            ]);
        }
    }
    match format {
        TableFormat::Markdown => {
            let mut out = format!(
                "Backward pass from {of}: each tensor op one step, its rule with shapes, then the numbers.\n\n"
            );
            out.push_str(&markdown(&COLUMNS, rows.into_iter()));
            out
        }
        TableFormat::Latex => latex(of, &COLUMNS, rows.into_iter()),
    }
}

/// A value's shape as gradcalc writes it: `2×3`, `(3)` for a vector,
/// `()` for a number.
fn shape(value: &TensorData) -> String {
    match value.shape.len() {
        0 => "()".to_string(),
        1 => format!("({})", value.shape_text()),
        _ => value.shape_text(),
    }
}
