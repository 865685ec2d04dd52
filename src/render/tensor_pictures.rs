//! Pictures of a tensor output's graph ([`TensorPicture`]): the same
//! [`Drawing`] as a scalar graph's, so the same SVG layout and slides, with
//! a box per tensor node holding its name and shape (`W 2×3`), its values
//! and its gradient, and an edge per operand labelled with the matrix rule
//! of what it receives (`outer(upstream, x)`). Values are shown in full up to
//! [`FULL_AXIS`] along each axis and summarised beyond (the first and last
//! [`EDGE_ITEMS`] of an axis, `…` between, as numpy summarises).

use std::fmt::Write;

use super::dot::{DIGITS, DrawEdge, DrawNode, Drawing, quoted, record_text};
use super::format_number;
use super::svg::{SLIDE_HEIGHT, SLIDE_WIDTH};
use crate::session::{Direction, GradState, Picture, TensorData, TensorPicture};

/// An axis of at most this many elements is shown in full in a box.
pub const FULL_AXIS: usize = 4;
/// How many elements of each end of a longer axis a box shows.
pub const EDGE_ITEMS: usize = 2;

/// The indices of an axis of `n` a box shows: all, or both ends with
/// `None` for `…`.
fn shown(n: usize) -> Vec<Option<usize>> {
    super::text::axis_ends(n, n <= FULL_AXIS, EDGE_ITEMS)
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

/// The least text size, in pixels, at which a tensor graph is drawn node
/// by node on the screen it is fitted to (1920×1080 unless `--fit` says
/// otherwise); below it, [`layers`] draws one box per named variable.
pub const NODE_BY_NODE_TEXT: f64 = 12.0;

/// For each node of `tensor` (by index), the node whose box stands for it
/// in the picture: itself, or in the layer view the named variable it is
/// computed for. The layer view is taken when the node-by-node picture,
/// fitted to the screen of `picture.direction` (`--fit WxH`, else a
/// 1920×1080 slide), would show its text under [`NODE_BY_NODE_TEXT`] and
/// the layer view draws fewer boxes.
pub fn boxes_of(picture: &Picture, tensor: &TensorPicture) -> Vec<usize> {
    let every: Vec<usize> = (0..tensor.nodes.len()).collect();
    let layered = layers(tensor);
    if layered == every {
        return every;
    }
    let screen = match picture.direction {
        Direction::Fit(width, height) => (f64::from(width), f64::from(height)),
        _ => (SLIDE_WIDTH, SLIDE_HEIGHT),
    };
    let full = drawing_of(picture, tensor, &every);
    match fitted_text(&full, screen) >= NODE_BY_NODE_TEXT {
        true => every,
        false => layered,
    }
}

/// The layer view of `tensor` (as for calls of user functions, one box for
/// a whole step of the lecture): a computed node that no variable names
/// (its label is an expression, or a short name `t7` for one) and whose
/// value only one op reads is drawn inside that op's box, so `H1 =
/// relu(X @ W1 + b1)` is one box `H1` fed by `X`, `W1` and `b1`. For each
/// node, the node whose box stands for it.
pub fn layers(tensor: &TensorPicture) -> Vec<usize> {
    let n = tensor.nodes.len();
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for edge in &tensor.edges {
        if !readers[edge.input].contains(&edge.node) {
            readers[edge.input].push(edge.node);
        }
    }
    let mut of: Vec<usize> = (0..n).collect();
    // Readers come after what they read: from the output back.
    for i in (0..n).rev() {
        let node = &tensor.nodes[i];
        let unnamed =
            !crate::syntax::is_name(&node.label) || node.label == format!("t{}", node.id.index());
        if node.op.is_some() && unnamed && readers[i].len() == 1 {
            of[i] = of[readers[i][0]];
        }
    }
    of
}

/// The [`Drawing`] of a tensor picture: per drawn node its op (when
/// computed) and its box, inputs first; per operand an edge labelled with
/// its rule. A box standing for several nodes ([`boxes_of`]) has one op
/// naming their ops in order (`@ → + → relu`); an edge into it carries the
/// rule of the op inside that reads the input, as the node-by-node picture
/// labels it (`sum(upstream, 0)` for a bias broadcast over a batch, its
/// `upstream` the gradient of that op's result: `:trace` shows each).
pub fn drawing(picture: &Picture, tensor: &TensorPicture) -> Drawing {
    drawing_of(picture, tensor, &boxes_of(picture, tensor))
}

/// The text size, in pixels, a screen of `screen` pixels shows `drawing`
/// at when its layout is fitted to it.
fn fitted_text(drawing: &Drawing, screen: (f64, f64)) -> f64 {
    let fitted = Drawing {
        direction: Direction::Fit(screen.0 as u32, screen.1 as u32),
        ..drawing.clone()
    };
    let size = super::svg::size(&fitted);
    super::svg::text_on_screen(screen, size)
}

/// The op label of a box standing for the computed nodes `ops` (their op
/// labels, in order): the one label, up to four joined by `→`, or the
/// first and last with how many.
fn ops_label(ops: &[&str]) -> String {
    match ops.len() {
        0 | 1 => ops.concat(),
        2..=4 => ops.join(" → "),
        n => format!("{} → … → {} ({n} ops)", ops[0], ops[n - 1]),
    }
}

/// [`drawing`] with `of` (from [`boxes_of`]) saying which box draws each node.
fn drawing_of(picture: &Picture, tensor: &TensorPicture, of: &[usize]) -> Drawing {
    let stepping = picture.step.is_some();
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    let mut op_at = vec![None; tensor.nodes.len()];
    let mut box_at = vec![0; tensor.nodes.len()];
    for (i, node) in tensor.nodes.iter().enumerate() {
        if of[i] != i {
            continue;
        }
        let members: Vec<&crate::session::TensorPictureNode> = tensor
            .nodes
            .iter()
            .enumerate()
            .filter(|&(k, _)| of[k] == i)
            .map(|(_, member)| member)
            .collect();
        let ops: Vec<&str> = members.iter().filter_map(|m| m.op.as_deref()).collect();
        if node.op.is_some() {
            nodes.push(DrawNode::Op {
                label: ops_label(&ops),
                group: None,
                call: node.call,
            });
            op_at[i] = Some(nodes.len() - 1);
        }
        box_at[i] = nodes.len();
        nodes.push(DrawNode::Value {
            name: name_line(&node.label, &node.value),
            value: value_lines(&node.value).join("\n"),
            grad: grad_text(&node.state),
            room: node.states.iter().filter_map(grad_text).collect(),
            partial: matches!(node.state, GradState::Partial { .. }),
            current: members.iter().any(|m| m.current),
            stepping,
            leaf: node.leaf,
            group: None,
            tensor: true,
        });
        if let Some(op) = op_at[i] {
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
        let group = of[edge.node];
        if of[edge.input] == group {
            continue;
        }
        let Some(op) = op_at[group] else {
            continue;
        };
        let from = box_at[edge.input];
        let rule = edge.rule.as_str();
        match seen.get(&(from, op)) {
            Some(&at) => {
                let label: &mut String = &mut edges[at].label;
                if !rule.is_empty() {
                    label.push_str(", ");
                    label.push_str(rule);
                }
            }
            None => {
                seen.insert((from, op), edges.len());
                edges.push(DrawEdge {
                    from,
                    to: op,
                    label: rule.to_string(),
                });
            }
        }
    }
    Drawing::of(picture, nodes, edges)
}

/// A tensor picture as Graphviz DOT: a record `{name shape | value rows |
/// grad rows}` per node, an op node per computed node, each operand's edge
/// labelled with its matrix rule.
pub fn dot(picture: &Picture, tensor: &TensorPicture) -> String {
    let mut out = super::dot::header(picture, "Courier");
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
