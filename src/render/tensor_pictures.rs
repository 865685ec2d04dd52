//! Pictures of a tensor output's graph ([`TensorPicture`]): the same
//! [`Drawing`] as a scalar graph's, so the same SVG layout and slides, with
//! a box per tensor node holding its name and shape (`W 2×3`), its values
//! and its gradient, and an edge per operand labelled with the matrix rule
//! of what it receives (`outer(upstream, x)`). Values are shown in full up to
//! [`FULL_AXIS`] along each axis and summarised beyond (the first and last
//! [`EDGE_ITEMS`] of an axis, `…` between, as numpy summarises).

use std::fmt::Write;

use super::dot::{
    DIGITS, DrawEdge, DrawNode, Drawing, comment, quoted, record_text, title, title_room,
};
use super::format_number;
use crate::session::{GradState, Picture, TensorData, TensorPicture};

/// An axis of at most this many elements is shown in full in a box.
pub const FULL_AXIS: usize = 4;
/// How many elements of each end of a longer axis a box shows.
pub const EDGE_ITEMS: usize = 2;

/// The indices of an axis of `n` a box shows: all, or both ends with
/// `None` for `…`.
fn shown(n: usize) -> Vec<Option<usize>> {
    if n <= FULL_AXIS {
        return (0..n).map(Some).collect();
    }
    (0..EDGE_ITEMS)
        .map(Some)
        .chain([None])
        .chain((n - EDGE_ITEMS..n).map(Some))
        .collect()
}

/// A tensor's values as a box shows them, one line per row, columns
/// aligned (right-justified), summarised past [`FULL_AXIS`]:
/// `[[1, 2],` / ` [3, 4]]` for a matrix, `[1, -1]` for a vector, `5` for
/// shape `()`.
pub fn value_lines(value: &TensorData) -> Vec<String> {
    let number = |k: usize| {
        value
            .element(k)
            .map_or_else(String::new, |x| format_number(x.0, DIGITS))
    };
    match value.shape[..] {
        [] => vec![number(0)],
        [n] => {
            let items: Vec<String> = shown(n)
                .into_iter()
                .map(|k| k.map_or_else(|| "…".to_string(), number))
                .collect();
            vec![format!("[{}]", items.join(", "))]
        }
        [rows, columns, ..] => {
            let column_ids = shown(columns);
            let cells: Vec<Option<Vec<String>>> = shown(rows)
                .into_iter()
                .map(|r| {
                    r.map(|r| {
                        column_ids
                            .iter()
                            .map(|c| c.map_or_else(|| "…".to_string(), |c| number(r * columns + c)))
                            .collect()
                    })
                })
                .collect();
            let mut widths = vec![0; column_ids.len()];
            for row in cells.iter().flatten() {
                for (w, cell) in widths.iter_mut().zip(row) {
                    *w = (*w).max(cell.chars().count());
                }
            }
            let count = cells.len();
            cells
                .iter()
                .enumerate()
                .map(|(k, row)| {
                    let open = if k == 0 { "[" } else { " " };
                    let close = if k + 1 == count { "]" } else { "," };
                    let body = match row {
                        None => " …".to_string(),
                        Some(row) => {
                            let padded: Vec<String> = row
                                .iter()
                                .zip(&widths)
                                .map(|(cell, &w)| format!("{cell:>w$}"))
                                .collect();
                            format!("[{}]", padded.join(", "))
                        }
                    };
                    format!("{open}{body}{close}")
                })
                .collect()
        }
    }
}

/// A tensor gradient as a box shows it in `state`, its rows split by
/// `\n`: the sum, with ` so far` after it while uses of a fan-out are to
/// come; `None` while blank.
pub fn grad_text(state: &GradState<TensorData>) -> Option<String> {
    let (sum, partial) = match state {
        GradState::Blank => return None,
        GradState::Partial { sum, .. } => (sum, true),
        GradState::Final { sum, .. } => (sum, false),
    };
    let mut text = value_lines(sum).join("\n");
    if partial {
        text.push_str(" so far");
    }
    Some(text)
}

/// A box's name line: the node's name and its shape (`W 2×3`); the name
/// alone for shape `()`, a vector's length in brackets (`x (3)`).
fn name_line(label: &str, value: &TensorData) -> String {
    match value.shape.len() {
        0 => label.to_string(),
        1 => format!("{label} ({})", value.shape_text()),
        _ => format!("{label} {}", value.shape_text()),
    }
}

/// The [`Drawing`] of a tensor picture: per node its op (when computed)
/// and its box, inputs first; per operand an edge labelled with its rule.
pub fn drawing(picture: &Picture, tensor: &TensorPicture) -> Drawing {
    let stepping = picture.step.is_some();
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    let mut op_at = Vec::with_capacity(tensor.nodes.len());
    let mut box_at = Vec::with_capacity(tensor.nodes.len());
    for node in &tensor.nodes {
        op_at.push(node.op.as_ref().map(|label| {
            nodes.push(DrawNode::Op {
                label: label.clone(),
                group: None,
                call: false,
            });
            nodes.len() - 1
        }));
        box_at.push(nodes.len());
        nodes.push(DrawNode::Value {
            name: name_line(&node.label, &node.value),
            value: value_lines(&node.value).join("\n"),
            grad: grad_text(&node.state),
            room: node.states.iter().filter_map(grad_text).collect(),
            partial: matches!(node.state, GradState::Partial { .. }),
            current: node.current,
            stepping,
            leaf: node.leaf,
            group: None,
            tensor: true,
        });
        if let Some(op) = op_at[op_at.len() - 1] {
            edges.push(DrawEdge {
                from: op,
                to: nodes.len() - 1,
                label: String::new(),
            });
        }
    }
    // An input read twice by one op (`x * x`) is one edge with both rules,
    // as in a scalar picture.
    let mut seen: std::collections::HashMap<(usize, usize), usize> = Default::default();
    for edge in &tensor.edges {
        let Some(op) = op_at[edge.node] else {
            continue;
        };
        let from = box_at[edge.input];
        match seen.get(&(from, op)) {
            Some(&at) => {
                let label: &mut String = &mut edges[at].label;
                label.push_str(", ");
                label.push_str(&edge.rule);
            }
            None => {
                seen.insert((from, op), edges.len());
                edges.push(DrawEdge {
                    from,
                    to: op,
                    label: edge.rule.clone(),
                });
            }
        }
    }
    Drawing {
        of: picture.of.clone(),
        title: title(picture),
        title_room: title_room(picture),
        nodes,
        edges,
        groups: Vec::new(),
        shared: Vec::new(),
        direction: picture.direction,
    }
}

/// A tensor picture as Graphviz DOT: a record `{name shape | value rows |
/// grad rows}` per node, an op node per computed node, each operand's edge
/// labelled with its matrix rule.
pub fn dot(picture: &Picture, tensor: &TensorPicture) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph gradcalc {{");
    let _ = writeln!(out, "  // computation graph of {}", comment(&picture.of));
    let _ = writeln!(out, "  rankdir=LR;");
    if let Some(title) = title(picture) {
        let _ = writeln!(
            out,
            "  label=\"{}\"; labelloc=t; fontname=\"Helvetica\";",
            quoted(&title)
        );
    }
    let _ = writeln!(
        out,
        "  node [shape=record, fontname=\"Courier\", fontsize=12];"
    );
    let _ = writeln!(out, "  edge [fontname=\"Helvetica\", fontsize=10];");
    let rows = |text: &str| {
        text.lines()
            .map(record_text)
            .collect::<Vec<_>>()
            .join("\\l")
            + "\\l"
    };
    for (i, node) in tensor.nodes.iter().enumerate() {
        let grad = grad_text(&node.state).map_or(String::new(), |g| rows(&g));
        let style = if node.current {
            ", style=filled, fillcolor=\"#fff0e0\", color=\"#e8590c\", penwidth=3"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  n{i} [label=\"{{ {} | value\\l{} | grad\\l{grad} }}\"{style}];",
            record_text(&name_line(&node.label, &node.value)),
            rows(&value_lines(&node.value).join("\n")),
        );
        if let Some(op) = &node.op {
            let _ = writeln!(
                out,
                "  n{i}op [label=\"{}\", shape=circle, width=0.4, fixedsize=false];",
                quoted(op)
            );
            let _ = writeln!(out, "  n{i}op -> n{i};");
        }
    }
    for edge in &tensor.edges {
        let _ = writeln!(
            out,
            "  n{} -> n{}op [label=\"{}\"];",
            edge.input,
            edge.node,
            quoted(&edge.rule)
        );
    }
    out.push_str("}\n");
    out
}
