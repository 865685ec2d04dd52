//! The graph as an SVG picture for slides, laid out by [`super::layout`] (no
//! Graphviz needed): a box per value (`name`, `value`, `grad`), a small ellipse
//! per operation with the constants it reads folded into its label (`× 2`),
//! edges labelled with the local derivative. The drawing runs left to right like
//! micrograd's `draw_dot`, or top to bottom when that is narrower and left to
//! right would be wider than a slide; it sits on a white background, its
//! canvas fits it, its text is 18 px when the picture is shown
//! [`SLIDE_WIDTH`] pixels wide (or fits in that width), and its coordinates
//! are whole pixels.

use std::fmt::Write;

use super::dot::{DrawNode, Drawing, group_colours};
use super::layout::{self, Edge, Size, Spacing};
use crate::session::Direction;

/// The width, in pixels, a slide shows a picture at; pictures no wider than this
/// keep their text at 18 pixels.
pub const SLIDE_WIDTH: f64 = 1920.0;
/// The height of that slide: [`Direction::Auto`] turns a picture that is too
/// tall left to right but fits the slide top to bottom.
pub const SLIDE_HEIGHT: f64 = 1080.0;
/// Text size, in pixels.
const FONT: f64 = 18.0;
/// Height of a line of text in a box.
const ROW: f64 = 24.0;
/// Padding inside a box, left and right.
const PAD: f64 = 12.0;
/// Height of an op's ellipse.
const OP_HEIGHT: f64 = 40.0;
/// Height of an edge label's white backing.
const LABEL_HEIGHT: f64 = 22.0;
/// Margin around the drawing.
const MARGIN: f64 = 16.0;
/// Height of a step picture's title.
const TITLE: f64 = 44.0;
/// Height of a legend line (one per group of nodes).
const LEGEND_ROW: f64 = 28.0;
/// Side of a legend line's colour swatch.
const SWATCH: f64 = 18.0;
/// Gaps between ranks, nodes and edges.
const SPACING: Spacing = Spacing {
    rank: 34.0,
    node: 12.0,
    edge: 12.0,
};
/// Colours: ink, faint lines, the current node, finished gradients.
const INK: &str = "#1a1a1a";
const FAINT: &str = "#5c5c5c";
const CURRENT: &str = "#e8590c";
const CURRENT_FILL: &str = "#fff0e0";
const DONE_FILL: &str = "#eaf7ec";
const OP_FILL: &str = "#f1f3f5";
const CALL_FILL: &str = "#fff3bf";

/// The drawing as SVG text (see the module comment).
pub fn svg(drawing: &Drawing) -> String {
    let items = &drawing.nodes;
    // Sizes when the rank axis is horizontal (left to right).
    let boxes: Vec<(f64, f64)> = items.iter().map(box_size).collect();
    let labels: Vec<f64> = drawing
        .edges
        .iter()
        .map(|e| {
            if e.label.is_empty() {
                0.0
            } else {
                text_width(&e.label, false) + 8.0
            }
        })
        .collect();
    let (layout, horizontal) = match drawing.direction {
        Direction::Auto => arrange_for_slide(&boxes, drawing, &labels),
        Direction::LeftToRight => (arrange(&boxes, drawing, &labels, true), true),
        Direction::TopToBottom => (arrange(&boxes, drawing, &labels, false), false),
    };
    // Abstract (along, across) to (x, y).
    let title = if drawing.title.is_some() { TITLE } else { 0.0 };
    let place = |(along, across): (f64, f64)| -> (f64, f64) {
        if horizontal {
            (along + MARGIN, across + MARGIN + title)
        } else {
            (across + MARGIN, along + MARGIN + title)
        }
    };
    let (w, h) = if horizontal {
        (layout.extent.0, layout.extent.1)
    } else {
        (layout.extent.1, layout.extent.0)
    };
    let title_width = [&drawing.title, &drawing.title_room]
        .into_iter()
        .flatten()
        .map(|t| text_width(t, true) * 22.0 / FONT)
        .fold(0.0, f64::max);
    let legend = legend_lines(drawing);
    let legend_width = legend
        .iter()
        .map(|(text, ..)| text_width(text, false) + SWATCH + 8.0)
        .fold(0.0, f64::max);
    let width = (w.max(title_width).max(legend_width) + 2.0 * MARGIN).round();
    let height = (h + 2.0 * MARGIN + title + LEGEND_ROW * legend.len() as f64).round();

    let mut out = String::new();
    header(&mut out, drawing, width, height);
    // Edges first, under the nodes.
    for (_, route) in drawing.edges.iter().zip(&layout.routes) {
        let points: Vec<(f64, f64)> = route.iter().map(|&p| place(p)).collect();
        let _ = writeln!(
            out,
            "<path d=\"{}\" fill=\"none\" stroke=\"{FAINT}\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\"/>",
            edge_path(&points, horizontal)
        );
    }
    for (edge, &at) in drawing.edges.iter().zip(&layout.labels) {
        if !edge.label.is_empty() {
            edge_label(&mut out, &edge.label, place(at));
        }
    }
    for (item, (&center, &size)) in items.iter().zip(layout.centers.iter().zip(&boxes)) {
        let center = place(center);
        match item {
            DrawNode::Op { label, group, call } => {
                let (fill, stroke) = match (group, call) {
                    (Some(k), _) => group_colours(drawing.groups[*k].derivative, *k),
                    (None, true) => (CALL_FILL, INK),
                    (None, false) => (OP_FILL, INK),
                };
                op_node(&mut out, label, *call, (fill, stroke), center, size);
            }
            DrawNode::Ghost { name } => ghost_node(&mut out, name, center, size),
            DrawNode::Value { .. } => value_node(&mut out, item, drawing, center, size),
        }
    }
    for (row, (text, fill, stroke)) in legend.iter().enumerate() {
        let y = (h + MARGIN + title + LEGEND_ROW * row as f64 + 8.0).round();
        let _ = writeln!(
            out,
            "<g class=\"legend\"><rect x=\"{MARGIN}\" y=\"{y}\" width=\"{SWATCH}\" height=\"{SWATCH}\" rx=\"3\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"2\"/><text x=\"{}\" y=\"{}\" fill=\"{INK}\">{}</text></g>",
            MARGIN + SWATCH + 8.0,
            y + SWATCH - 3.0,
            escape(text)
        );
    }
    out.push_str("</svg>\n");
    out
}

/// One legend line per group of the drawing, to go under it: the text, then
/// the group's fill and stroke colours.
fn legend_lines(drawing: &Drawing) -> Vec<(String, &'static str, &'static str)> {
    drawing
        .groups
        .iter()
        .enumerate()
        .map(|(k, group)| {
            let (fill, stroke) = group_colours(group.derivative, k);
            let text = if group.derivative {
                format!("{}: the backward pass recorded as nodes", group.label)
            } else {
                group.label.clone()
            };
            (text, fill, stroke)
        })
        .collect()
}

/// Appends the start of the SVG for `drawing` to `out`: the `<svg>` element of
/// `width` × `height` pixels, its title (the output), the arrow head, the
/// white background and the step picture's title, if any.
fn header(out: &mut String, drawing: &Drawing, width: f64, height: f64) {
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"Helvetica, Arial, 'Liberation Sans', sans-serif\" font-size=\"{FONT}\">"
    );
    let _ = writeln!(out, "<title>{}</title>", escape(&drawing.of));
    let _ = writeln!(
        out,
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"{FAINT}\"/></marker></defs>"
    );
    let _ = writeln!(
        out,
        "<rect class=\"background\" x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"white\"/>"
    );
    if let Some(text) = &drawing.title {
        let _ = writeln!(
            out,
            "<text class=\"title\" x=\"{}\" y=\"{}\" font-size=\"22\" font-weight=\"bold\" fill=\"{INK}\">{}</text>",
            MARGIN,
            (MARGIN + 24.0).round(),
            escape(text)
        );
    }
}

/// The path data (`d`) of an edge through `points` (x, y): straight within a
/// rank, a curve from one rank to the next, along x when `horizontal`.
fn edge_path(points: &[(f64, f64)], horizontal: bool) -> String {
    let along = |p: (f64, f64)| if horizontal { p.0 } else { p.1 };
    let mut d = format!("M{},{}", r(points[0].0), r(points[0].1));
    for pair in points.windows(2) {
        let (p, q) = (pair[0], pair[1]);
        if (along(q) - along(p)).abs() < 0.5 || route_same_rank(p, q, horizontal) {
            let _ = write!(d, " L{},{}", r(q.0), r(q.1));
        } else if horizontal {
            let m = (p.0 + q.0) / 2.0;
            let _ = write!(
                d,
                " C{},{} {},{} {},{}",
                r(m),
                r(p.1),
                r(m),
                r(q.1),
                r(q.0),
                r(q.1)
            );
        } else {
            let m = (p.1 + q.1) / 2.0;
            let _ = write!(
                d,
                " C{},{} {},{} {},{}",
                r(p.0),
                r(m),
                r(q.0),
                r(m),
                r(q.0),
                r(q.1)
            );
        }
    }
    d
}

/// Appends an edge's label (the local derivative) centred at (x, y) to `out`,
/// on a white backing.
fn edge_label(out: &mut String, label: &str, (x, y): (f64, f64)) {
    let w = text_width(label, false) + 6.0;
    let _ = writeln!(
        out,
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{LABEL_HEIGHT}\" fill=\"white\" fill-opacity=\"0.85\"/><text class=\"local\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{FAINT}\">{}</text>",
        r(x - w / 2.0),
        r(y - 11.0),
        r(w),
        r(x),
        r(y + 6.0),
        escape(label)
    );
}

/// Appends an op's ellipse to `out`, centred at (cx, cy), `bw` × `bh`, in
/// `(fill, stroke)`, with its label (a whole `call`'s in bold).
fn op_node(
    out: &mut String,
    label: &str,
    call: bool,
    (fill, stroke): (&str, &str),
    (cx, cy): (f64, f64),
    (bw, bh): (f64, f64),
) {
    // A lone operator sign is small at text size: drawn larger.
    let size = if label.chars().count() == 1 { 24 } else { 18 };
    // A whole call of a user function: its name in bold.
    let weight = if call { "bold" } else { "normal" };
    let _ = writeln!(
        out,
        "<g class=\"op\"><ellipse cx=\"{}\" cy=\"{}\" rx=\"{}\" ry=\"{}\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"1.5\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{size}\" font-weight=\"{weight}\" fill=\"{INK}\">{}</text></g>",
        r(cx),
        r(cy),
        r(bw / 2.0),
        r(bh / 2.0),
        r(cx),
        r(cy + size as f64 / 3.0),
        escape(label)
    );
}

/// Appends a ghost (a leaf's reference beside an op that reads it) to `out`: a
/// dashed box `bw` × `bh` centred at (cx, cy) with the leaf's name.
fn ghost_node(out: &mut String, name: &str, (cx, cy): (f64, f64), (bw, bh): (f64, f64)) {
    let (x, y) = ((cx - bw / 2.0).round(), (cy - bh / 2.0).round());
    let _ = writeln!(
        out,
        "<g class=\"ghost\"><rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" rx=\"6\" fill=\"white\" stroke=\"{FAINT}\" stroke-width=\"1.5\" stroke-dasharray=\"5,4\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-style=\"italic\" fill=\"{INK}\">{}</text></g>",
        bw.round(),
        bh.round(),
        r(cx),
        r(cy + 6.0),
        escape(name)
    );
}

/// Appends a value's box to `out`, `bw` × `bh` centred at (cx, cy): three rows
/// (name, value, gradient), coloured as the current node, a finished gradient
/// or its group in `drawing`. Nothing for other nodes.
fn value_node(
    out: &mut String,
    node: &DrawNode,
    drawing: &Drawing,
    (cx, cy): (f64, f64),
    (bw, bh): (f64, f64),
) {
    let DrawNode::Value {
        name,
        value,
        grad,
        room,
        partial,
        current,
        stepping,
        group,
        tensor,
        ..
    } = node
    else {
        return;
    };
    let done = grad.is_some() && !*partial;
    let (x, y) = ((cx - bw / 2.0).round(), (cy - bh / 2.0).round());
    let (class, fill, stroke, stroke_width) = if *current {
        ("value current", CURRENT_FILL, CURRENT, 4)
    } else if *stepping && done {
        ("value done", DONE_FILL, INK, 2)
    } else if let Some(k) = group {
        let (fill, stroke) = group_colours(drawing.groups[*k].derivative, *k);
        ("value grouped", fill, stroke, 2)
    } else {
        ("value", "white", INK, 2)
    };
    let (bw, bh) = (bw.round(), bh.round());
    let _ = write!(
        out,
        "<g class=\"{class}\"><rect x=\"{x}\" y=\"{y}\" width=\"{bw}\" height=\"{bh}\" rx=\"6\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"{stroke_width}\"/>"
    );
    if *tensor {
        let rows = TensorRows::of(value, grad.as_deref(), room);
        rows.draw(out, name, grad.as_deref(), *partial, (x, y, bw));
        return;
    }
    for row in 1..3 {
        let ly = y + (4.0 + ROW * row as f64).round();
        let _ = write!(
            out,
            "<line x1=\"{x}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{FAINT}\" stroke-width=\"1\"/>",
            x + bw
        );
    }
    let text_x = x + PAD;
    let base = |row: f64| y + (4.0 + ROW * row + 19.0).round();
    let _ = write!(
        out,
        "<text class=\"name\" x=\"{text_x}\" y=\"{}\" font-weight=\"bold\" fill=\"{INK}\">{}</text>",
        base(0.0),
        escape(name)
    );
    let _ = write!(
        out,
        "<text class=\"data\" x=\"{text_x}\" y=\"{}\" fill=\"{INK}\">value {}</text>",
        base(1.0),
        escape(value)
    );
    match (grad, *partial) {
        (Some(grad), true) => {
            // A fan-out's sum so far, as `:trace` accumulates it.
            let _ = write!(
                out,
                "<text class=\"grad partial\" x=\"{text_x}\" y=\"{}\" fill=\"{CURRENT}\">grad {}</text>",
                base(2.0),
                escape(grad)
            );
        }
        (None, _) => {
            let _ = write!(
                out,
                "<text class=\"grad pending\" x=\"{text_x}\" y=\"{}\" fill=\"{FAINT}\">grad</text>",
                base(2.0)
            );
        }
        (Some(grad), false) => {
            let _ = write!(
                out,
                "<text class=\"grad\" x=\"{text_x}\" y=\"{}\" fill=\"#c92a2a\">grad {}</text>",
                base(2.0),
                escape(grad)
            );
        }
    }
    out.push_str("</g>\n");
}

/// Two route points inside one rank (an edge passing through it) keep the same
/// position across: a straight line.
fn route_same_rank(p: (f64, f64), q: (f64, f64), horizontal: bool) -> bool {
    if horizontal {
        (p.1 - q.1).abs() < 0.5
    } else {
        (p.0 - q.0).abs() < 0.5
    }
}

/// The layout for [`Direction::Auto`] and whether it runs left to right:
/// left to right when that fits a slide ([`SLIDE_WIDTH`] × [`SLIDE_HEIGHT`]),
/// else top to bottom when that fits one; when neither does, left to right
/// when at most a slide wide, else top to bottom when that is narrower.
fn arrange_for_slide(
    boxes: &[(f64, f64)],
    drawing: &Drawing,
    labels: &[f64],
) -> (layout::Layout, bool) {
    let left_to_right = arrange(boxes, drawing, labels, true);
    let width = left_to_right.extent.0 + 2.0 * MARGIN;
    let height = left_to_right.extent.1 + 2.0 * MARGIN;
    if width <= SLIDE_WIDTH && height <= SLIDE_HEIGHT {
        return (left_to_right, true);
    }
    let top_down = arrange(boxes, drawing, labels, false);
    // Top to bottom, the rank axis is the height.
    let (down_width, down_height) = (
        top_down.extent.1 + 2.0 * MARGIN,
        top_down.extent.0 + 2.0 * MARGIN,
    );
    if down_width <= SLIDE_WIDTH && down_height <= SLIDE_HEIGHT {
        return (top_down, false);
    }
    if width <= SLIDE_WIDTH || down_width >= width {
        (left_to_right, true)
    } else {
        (top_down, false)
    }
}

/// The layout with nodes and labels sized for one direction.
fn arrange(
    boxes: &[(f64, f64)],
    drawing: &Drawing,
    labels: &[f64],
    horizontal: bool,
) -> layout::Layout {
    let sizes: Vec<Size> = boxes
        .iter()
        .map(|&(w, h)| {
            if horizontal {
                Size {
                    along: w,
                    across: h,
                }
            } else {
                Size {
                    along: h,
                    across: w,
                }
            }
        })
        .collect();
    let edges: Vec<Edge> = drawing
        .edges
        .iter()
        .zip(labels)
        .map(|(e, &w)| Edge {
            from: e.from,
            to: e.to,
            // The label's white backing is its text's width + 6 by 22 pixels.
            label: match (w > 0.0, horizontal) {
                (false, _) => Size::NONE,
                (true, true) => Size {
                    along: w,
                    across: LABEL_HEIGHT,
                },
                (true, false) => Size {
                    along: LABEL_HEIGHT + 2.0,
                    across: w,
                },
            },
        })
        .collect();
    layout::layout(&sizes, &edges, SPACING)
}

/// A node's width and height (left to right).
fn box_size(node: &DrawNode) -> (f64, f64) {
    match node {
        DrawNode::Op { label, call, .. } => {
            ((text_width(label, *call) + 26.0).max(46.0), OP_HEIGHT)
        }
        DrawNode::Ghost { name } => ((text_width(name, true) + 2.0 * PAD).ceil(), ROW + 8.0),
        DrawNode::Value {
            name,
            value,
            grad,
            room,
            tensor: true,
            ..
        } => {
            let rows = TensorRows::of(value, grad.as_deref(), room);
            let widest = rows
                .value
                .iter()
                .chain(&rows.widest_grad)
                .map(|line| mono_width(line))
                .fold(text_width(name, true), f64::max);
            let count = 1 + rows.value.len() + rows.grad_rows;
            ((widest + 2.0 * PAD).ceil(), ROW * count as f64 + 8.0)
        }
        DrawNode::Value {
            name,
            value,
            grad,
            room,
            ..
        } => {
            let widest = grad
                .iter()
                .chain(room)
                .map(|text| text_width(&format!("grad {text}"), false))
                .fold(text_width(name, true), f64::max)
                .max(text_width(&format!("value {value}"), false));
            ((widest + 2.0 * PAD).ceil(), 3.0 * ROW + 8.0)
        }
    }
}

/// The rows of a tensor's box: its value's lines (`value [[1, 2],` then
/// the rest indented under the first number), the lines of the widest
/// gradient it shows over the pass, and how many rows its gradient gets
/// (the most lines any of its gradients has), so every step has one layout.
struct TensorRows {
    value: Vec<String>,
    widest_grad: Vec<String>,
    grad_rows: usize,
}

impl TensorRows {
    /// The rows of a box showing `value`, the gradient `grad`, and `room`
    /// (every gradient it shows over the pass).
    fn of(value: &str, grad: Option<&str>, room: &[String]) -> TensorRows {
        let grads = grad.into_iter().chain(room.iter().map(String::as_str));
        let widest_grad: Vec<String> = grads
            .clone()
            .flat_map(|text| prefixed("grad", text))
            .collect();
        let grad_rows = grads.map(|text| text.lines().count()).max().unwrap_or(1);
        TensorRows {
            value: prefixed("value", value),
            widest_grad,
            grad_rows: grad_rows.max(1),
        }
    }

    /// Appends the box's rows to `out` (its frame is written): the name,
    /// the value's rows, the gradient's rows (or `grad` alone while blank),
    /// with a line between the three; `(x, y, bw)` the box's corner and width.
    fn draw(
        &self,
        out: &mut String,
        name: &str,
        grad: Option<&str>,
        partial: bool,
        (x, y, bw): (f64, f64, f64),
    ) {
        let value_rows = self.value.len();
        for row in [1, 1 + value_rows] {
            let ly = y + (4.0 + ROW * row as f64).round();
            let _ = write!(
                out,
                "<line x1=\"{x}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{FAINT}\" stroke-width=\"1\"/>",
                x + bw
            );
        }
        let text_x = x + PAD;
        let base = |row: usize| y + (4.0 + ROW * row as f64 + 19.0).round();
        let _ = write!(
            out,
            "<text class=\"name\" x=\"{text_x}\" y=\"{}\" font-weight=\"bold\" fill=\"{INK}\">{}</text>",
            base(0),
            escape(name)
        );
        let lines = |out: &mut String, lines: &[String], first: usize| {
            for (k, line) in lines.iter().enumerate() {
                let _ = write!(
                    out,
                    "<tspan x=\"{text_x}\" y=\"{}\">{}</tspan>",
                    base(first + k),
                    escape(line)
                );
            }
        };
        let _ = write!(
            out,
            "<text class=\"data\" font-family=\"{MONO}\" xml:space=\"preserve\" fill=\"{INK}\">"
        );
        lines(out, &self.value, 1);
        out.push_str("</text>");
        let (class, colour) = match (grad, partial) {
            (None, _) => ("grad pending", FAINT),
            (Some(_), true) => ("grad partial", CURRENT),
            (Some(_), false) => ("grad", "#c92a2a"),
        };
        let _ = write!(
            out,
            "<text class=\"{class}\" font-family=\"{MONO}\" xml:space=\"preserve\" fill=\"{colour}\">"
        );
        lines(
            out,
            &prefixed("grad", grad.unwrap_or_default()),
            1 + value_rows,
        );
        out.push_str("</text></g>\n");
    }
}

/// The fixed-width font of a tensor's rows.
const MONO: &str = "Menlo, Consolas, DejaVu Sans Mono, monospace";

/// `text`'s lines with `word` before the first and as many spaces before
/// each other line, so the columns stay aligned.
fn prefixed(word: &str, text: &str) -> Vec<String> {
    let indent = " ".repeat(word.chars().count() + 1);
    let mut lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(k, line)| match k {
            0 => format!("{word} {line}"),
            _ => format!("{indent}{line}"),
        })
        .collect();
    if lines.is_empty() {
        lines.push(word.to_string());
    }
    lines
}

/// The width of `text` at the picture's text size in the fixed-width font
/// (0.6 em a character, with 8% to spare as [`text_width`]).
fn mono_width(text: &str) -> f64 {
    text.chars().count() as f64 * 0.6 * FONT * 1.08
}

/// The width of `text` at the picture's text size (18 pixels), from Helvetica's advance widths
/// (in thousandths of an em, from the Adobe font metrics) with 8% to spare for
/// the wider fonts a viewer may substitute.
pub fn text_width(text: &str, bold: bool) -> f64 {
    let ems: f64 = text
        .chars()
        .map(|c| match c {
            '0'..='9' | '#' | '$' | '_' => 0.556,
            '.' | ',' | ':' | ';' | ' ' | '!' | '|' => 0.278,
            'i' | 'j' | 'l' => 0.222,
            'f' | 't' | 'I' => 0.278,
            '-' | '(' | ')' | 'r' | '[' | ']' => 0.333,
            'm' => 0.833,
            'w' => 0.722,
            'W' | 'M' => 0.833,
            'a'..='z' => 0.556,
            'A'..='Z' => 0.667,
            '×' | '−' | '+' | '=' | '<' | '>' | '·' => 0.584,
            _ => 0.65,
        })
        .sum();
    ems * FONT * if bold { 1.12 } else { 1.08 }
}

/// A coordinate rounded to a whole pixel.
fn r(v: f64) -> i64 {
    v.round() as i64
}

/// Text for an SVG text node or attribute.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
