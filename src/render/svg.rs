//! The graph as an SVG picture for slides, laid out by [`super::layout`] (no
//! Graphviz needed): a box per value (`name`, `value`, `grad`), a small ellipse
//! per operation with the constants it reads folded into its label (`× 2`),
//! edges labelled with the local derivative; the leaves several calls share (a
//! network's parameters) in rows under the graph. The drawing runs left to
//! right like micrograd's `draw_dot`, or top to bottom when that fits a slide
//! better (see [`Direction::Auto`] and `arrange_for_slide`); it sits on a
//! white background, its canvas fits it, its text is 18 px when the picture
//! is shown [`SLIDE_WIDTH`] pixels wide (or fits in that width), and its
//! coordinates are whole pixels. Every moment of one graph's backward pass
//! is drawn with the same layout and canvas: nothing here depends on the
//! moment but colours and texts that boxes have room for.

use std::fmt::Write;

use super::dot::{DrawNode, Drawing, group_colours};
use super::layout::{self, Edge, Size, Spacing};
use super::wrap;
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

/// A drawing's layout and canvas, before anything is written.
struct Plan {
    /// Every node's size, left to right.
    boxes: Vec<(f64, f64)>,
    /// What the layout placed.
    laid: Laid,
    /// The legend's lines.
    legend: Vec<(String, &'static str, &'static str)>,
    /// The layout and whether it runs left to right.
    layout: layout::Layout,
    horizontal: bool,
    /// The title's height (0 without one).
    title: f64,
    /// The graph's extent (x, y) and the canvas (x, y).
    graph: (f64, f64),
    canvas: (f64, f64),
}

impl Plan {
    /// The layout of `drawing` in its direction ([`Direction::Fit`]: the
    /// one [`wrap::fit`] picks; [`Direction::Auto`]: that for a 1920×1080
    /// slide for a tensor graph, [`arrange_for_slide`] otherwise) and the
    /// canvas around it.
    fn of(drawing: &Drawing) -> Plan {
        let items = &drawing.nodes;
        // Sizes when the rank axis is horizontal (left to right).
        let boxes: Vec<(f64, f64)> = items.iter().map(box_size).collect();
        let laid = Laid::of(drawing, &boxes);
        let legend = legend_lines(drawing);
        let legend_width = legend
            .iter()
            .map(|(text, ..)| text_width(text, false) + SWATCH + 8.0)
            .fold(0.0, f64::max);
        let title_width = [&drawing.title, &drawing.title_room]
            .into_iter()
            .flatten()
            .map(|t| text_width(t, true) * 22.0 / FONT)
            .fold(0.0, f64::max);
        let title = if drawing.title.is_some() { TITLE } else { 0.0 };
        // The canvas around a graph of `w` × `h` (x, y) pixels: the shared
        // leaves under it, then the legend; `room` for the title's width.
        let canvas = |(w, h): (f64, f64), room: f64| {
            let under = Under::of(drawing, &boxes, w);
            (
                (w.max(room).max(legend_width).max(under.extent.0) + 2.0 * MARGIN).round(),
                (h + 2.0 * MARGIN + under.extent.1 + LEGEND_ROW * legend.len() as f64).round(),
            )
        };
        let fitted = |screen: (f64, f64)| {
            wrap::fit(
                |horizontal| laid.arrange_sized(horizontal),
                |layout, horizontal| {
                    let (w, h) = canvas(xy(layout.extent, horizontal), title_width);
                    (w, h + title)
                },
                screen,
            )
        };
        let tensor = items
            .iter()
            .any(|item| matches!(item, DrawNode::Value { tensor: true, .. }));
        let (layout, horizontal) = match drawing.direction {
            Direction::Auto if tensor => fitted((SLIDE_WIDTH, SLIDE_HEIGHT)),
            Direction::Fit(width, height) => fitted((f64::from(width), f64::from(height))),
            Direction::Auto => arrange_for_slide(&laid, |extent| canvas(extent, 0.0)),
            Direction::LeftToRight => (laid.arrange(true), true),
            Direction::TopToBottom => (laid.arrange(false), false),
        };
        let graph = xy(layout.extent, horizontal);
        let (width, height) = canvas(graph, title_width);
        Plan {
            boxes,
            laid,
            legend,
            layout,
            horizontal,
            title,
            graph,
            canvas: (width, height + title),
        }
    }
}

/// The canvas size (width, height) in pixels that [`svg`] draws `drawing` on.
pub fn size(drawing: &Drawing) -> (f64, f64) {
    Plan::of(drawing).canvas
}

/// The drawing as SVG text (see the module comment).
pub fn svg(drawing: &Drawing) -> String {
    let plan = Plan::of(drawing);
    let (boxes, laid, legend, layout) = (plan.boxes, plan.laid, plan.legend, plan.layout);
    let ((w, h), (width, height)) = (plan.graph, plan.canvas);
    let (horizontal, title) = (plan.horizontal, plan.title);
    let items = &drawing.nodes;
    // Abstract (along, across) to (x, y).
    let place = |(along, across): (f64, f64)| -> (f64, f64) {
        if horizontal {
            (along + MARGIN, across + MARGIN + title)
        } else {
            (across + MARGIN, along + MARGIN + title)
        }
    };
    let under = Under::of(drawing, &boxes, w);
    let under_top = MARGIN + title + h;
    let mut centers: Vec<(f64, f64)> = vec![(0.0, 0.0); items.len()];
    for (&at, &center) in laid.nodes.iter().zip(&layout.centers) {
        centers[at] = place(center);
    }
    let mut sizes = boxes.clone();
    for &(at, (x, y), size) in &under.boxes {
        centers[at] = (MARGIN + x, under_top + y);
        sizes[at] = size;
    }

    let mut out = String::new();
    header(&mut out, drawing, width, height);
    // Edges first, under the nodes.
    for route in &layout.routes {
        let points: Vec<(f64, f64)> = route.iter().map(|&p| place(p)).collect();
        let _ = writeln!(
            out,
            "<path d=\"{}\" fill=\"none\" stroke=\"{FAINT}\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\"/>",
            edge_path(&points, horizontal)
        );
    }
    for (&edge, &at) in laid.edges.iter().zip(&layout.labels) {
        let label = &drawing.edges[edge].label;
        if !label.is_empty() {
            edge_label(&mut out, label, place(at));
        }
    }
    for (text, (x, y)) in &under.captions {
        let _ = writeln!(
            out,
            "<text class=\"shared\" x=\"{}\" y=\"{}\" fill=\"{INK}\">{}</text>",
            r(MARGIN + x),
            r(under_top + y),
            escape(text)
        );
    }
    for (item, (&center, &size)) in items.iter().zip(centers.iter().zip(&sizes)) {
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
        let y = (under_top + under.extent.1 + LEGEND_ROW * row as f64 + 8.0).round();
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
        separator(out, (x, y, bw), row);
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

/// The faint line across a value box at (`x`, `y`), `bw` wide, above its
/// text row `row` (from 0): between the name, the value and the gradient.
fn separator(out: &mut String, (x, y, bw): (f64, f64, f64), row: usize) {
    let ly = y + (4.0 + ROW * row as f64).round();
    let _ = write!(
        out,
        "<line x1=\"{x}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{FAINT}\" stroke-width=\"1\"/>",
        x + bw
    );
}

/// `(along, across)` as `(x, y)`: along is x when the edges run left to right.
fn xy((along, across): (f64, f64), horizontal: bool) -> (f64, f64) {
    match horizontal {
        true => (along, across),
        false => (across, along),
    }
}

/// The text size a slide ([`SLIDE_WIDTH`] × [`SLIDE_HEIGHT`]) showing a
/// canvas of `width` × `height` whole shows 18-pixel text at, in pixels.
pub fn text_on_slide(canvas: (f64, f64)) -> f64 {
    text_on_screen((SLIDE_WIDTH, SLIDE_HEIGHT), canvas)
}

/// The text size, in pixels, a screen of `screen` pixels (width, height)
/// showing a canvas of `canvas` pixels whole shows 18-pixel text at.
pub fn text_on_screen(screen: (f64, f64), canvas: (f64, f64)) -> f64 {
    FONT * wrap::scale_on(screen, canvas)
}

/// The least text size, in pixels, that a slide showing a picture whole
/// should show: [`Direction::Auto`] takes the direction that reaches it
/// when neither fits a slide at full size.
pub const READABLE: f64 = 16.0;

/// The layout for [`Direction::Auto`] and whether it runs left to right,
/// from the canvas each direction gives (`canvas` of the graph's extent, x by
/// y): left to right when that fits a slide ([`SLIDE_WIDTH`] ×
/// [`SLIDE_HEIGHT`]), else top to bottom when that fits one; else the one
/// whose text a slide showing it whole shows larger ([`text_on_slide`]), when
/// that is [`READABLE`]; else left to right when at most a slide wide (shown
/// that wide, its text keeps its size), otherwise top to bottom when that is
/// narrower.
fn arrange_for_slide(
    laid: &Laid,
    canvas: impl Fn((f64, f64)) -> (f64, f64),
) -> (layout::Layout, bool) {
    let left_to_right = laid.arrange(true);
    let wide = canvas(xy(left_to_right.extent, true));
    let fits = |(w, h): (f64, f64)| w <= SLIDE_WIDTH && h <= SLIDE_HEIGHT;
    if fits(wide) {
        return (left_to_right, true);
    }
    let top_down = laid.arrange(false);
    let tall = canvas(xy(top_down.extent, false));
    let (wide_text, tall_text) = (text_on_slide(wide), text_on_slide(tall));
    let down = if fits(tall) {
        true
    } else if wide_text.max(tall_text) >= READABLE {
        tall_text > wide_text
    } else {
        wide.0 > SLIDE_WIDTH && tall.0 < wide.0
    };
    match down {
        true => (top_down, false),
        false => (left_to_right, true),
    }
}

/// What the layered layout places: every node of a drawing but the shared
/// leaves (drawn under the graph), and the edges between them.
struct Laid {
    /// The nodes placed (indices into the drawing's nodes).
    nodes: Vec<usize>,
    /// Their sizes, left to right.
    boxes: Vec<(f64, f64)>,
    /// The edges between them (indices into the drawing's edges).
    edges: Vec<usize>,
    /// Each edge's tail and head (indices into `nodes`) and its label's width
    /// (0 for none).
    ends: Vec<(usize, usize, f64)>,
}

impl Laid {
    /// The nodes of `drawing` the layout places, with their `boxes` (one
    /// per node of the drawing).
    fn of(drawing: &Drawing, boxes: &[(f64, f64)]) -> Laid {
        let under: Vec<usize> = drawing
            .shared
            .iter()
            .flat_map(|s| s.leaves.iter().copied())
            .collect();
        let mut index = vec![None; drawing.nodes.len()];
        let mut laid = Laid {
            nodes: Vec::new(),
            boxes: Vec::new(),
            edges: Vec::new(),
            ends: Vec::new(),
        };
        for (at, &size) in boxes.iter().enumerate() {
            if !under.contains(&at) {
                index[at] = Some(laid.nodes.len());
                laid.nodes.push(at);
                laid.boxes.push(size);
            }
        }
        for (k, e) in drawing.edges.iter().enumerate() {
            let (Some(from), Some(to)) = (index[e.from], index[e.to]) else {
                continue;
            };
            let label = match e.label.is_empty() {
                true => 0.0,
                false => text_width(&e.label, false) + 8.0,
            };
            laid.edges.push(k);
            laid.ends.push((from, to, label));
        }
        laid
    }

    /// The layout with nodes and labels sized for one direction.
    fn arrange(&self, horizontal: bool) -> layout::Layout {
        self.arrange_sized(horizontal).0
    }

    /// The layout for one direction with the node and label sizes it was
    /// made with (for [`wrap::wrap`]).
    fn arrange_sized(&self, horizontal: bool) -> (layout::Layout, Vec<Size>, Vec<Size>) {
        let sizes: Vec<Size> = self
            .boxes
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
        let edges: Vec<Edge> = self
            .ends
            .iter()
            .map(|&(from, to, w)| Edge {
                from,
                to,
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
        let labels = edges.iter().map(|edge| edge.label).collect();
        (layout::layout(&sizes, &edges, SPACING), sizes, labels)
    }
}

/// A point or a size, x then y, in pixels.
type Point = (f64, f64);

/// Room between the graph and the shared leaves under it.
const UNDER_GAP: f64 = 24.0;

/// The shared leaves ([`Drawing::shared`]) placed under a graph: for each
/// group a caption line, then its boxes, one size, in rows as wide as the
/// graph (at least the square root of their number in a row).
struct Under {
    /// Each caption and its baseline's start, from the top left of the room
    /// under the graph.
    captions: Vec<(String, (f64, f64))>,
    /// Each leaf's box (an index into the drawing's nodes), its centre and
    /// its size (one for the group).
    boxes: Vec<(usize, Point, Point)>,
    /// The room it takes: (width, height); 0 × 0 with no shared leaves.
    extent: (f64, f64),
}

impl Under {
    /// The shared leaves of `drawing` (`boxes`: every node's size) under a
    /// graph `width` pixels wide.
    fn of(drawing: &Drawing, boxes: &[(f64, f64)], width: f64) -> Under {
        let mut under = Under {
            captions: Vec::new(),
            boxes: Vec::new(),
            extent: (0.0, 0.0),
        };
        let gap = SPACING.node;
        for shared in &drawing.shared {
            let (bw, bh) = shared
                .leaves
                .iter()
                .map(|&at| boxes[at])
                .fold((0.0f64, 0.0f64), |(w, h), (a, b)| (w.max(a), h.max(b)));
            let n = shared.leaves.len();
            let fit = ((width + gap) / (bw + gap)).floor() as usize;
            let least = (n as f64).sqrt().ceil() as usize;
            let columns = fit.max(least).clamp(1, n);
            let caption = format!(
                "{}: read by all {} calls (the dashed boxes), drawn once",
                shared.label, shared.calls
            );
            let top = under.extent.1 + UNDER_GAP;
            under
                .captions
                .push((caption.clone(), (0.0, top + LEGEND_ROW - 8.0)));
            let first_row = top + LEGEND_ROW;
            for (i, &at) in shared.leaves.iter().enumerate() {
                let (column, row) = ((i % columns) as f64, (i / columns) as f64);
                let center = (
                    column * (bw + gap) + bw / 2.0,
                    first_row + row * (bh + gap) + bh / 2.0,
                );
                under.boxes.push((at, center, (bw, bh)));
            }
            let rows = n.div_ceil(columns) as f64;
            under.extent = (
                under
                    .extent
                    .0
                    .max(columns as f64 * (bw + gap) - gap)
                    .max(text_width(&caption, false)),
                first_row + rows * (bh + gap) - gap,
            );
        }
        under
    }
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
            separator(out, (x, y, bw), row);
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
