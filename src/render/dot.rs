//! Pictures of the graph: Graphviz DOT in micrograd's style (`draw_dot`: left to
//! right, a record `{name | value | grad}` per node and a small node per
//! operation), and SVG laid out in pure Rust by `layout-rs`, so that no Graphviz
//! install is needed.

use std::fmt::Write;

use super::{Precision, format_number, notation};
use crate::session::Picture;

/// Digits of the numbers in a picture (micrograd shows 4 decimals).
const DIGITS: Precision = Precision::Digits(4);

/// The picture as Graphviz DOT. Each node is a record `{name | value V | grad G}`
/// (unnamed nodes by id, `#7`; constants by their value); each operation gets an
/// op node (`n7op`, labelled `*`, `tanh`, …) between its inputs and its result;
/// each edge from an input to an op node is labelled with the local derivative
/// `∂node/∂input` at the current values. Nodes are listed output first.
pub fn dot(picture: &Picture) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph gradcalc {{");
    let _ = writeln!(out, "  // computation graph of {}", comment(&picture.of));
    let _ = writeln!(out, "  rankdir=LR;");
    let _ = writeln!(
        out,
        "  node [shape=record, fontname=\"Helvetica\", fontsize=12];"
    );
    let _ = writeln!(out, "  edge [fontname=\"Helvetica\", fontsize=10];");
    for node in &picture.nodes {
        let id = node.node.id.0;
        let _ = writeln!(
            out,
            "  n{id} [label=\"{{ {} | value {} | grad {} }}\"];",
            record_text(&notation::node(&node.node, DIGITS)),
            record_text(&format_number(node.value, DIGITS)),
            record_text(&format_number(node.grad, DIGITS)),
        );
        if let Some(symbol) = notation::symbol(node.op) {
            let _ = writeln!(
                out,
                "  n{id}op [label=\"{}\", shape=circle, width=0.4, fixedsize=false];",
                quoted(symbol)
            );
            let _ = writeln!(out, "  n{id}op -> n{id};");
        }
    }
    for edge in &picture.edges {
        let _ = writeln!(
            out,
            "  n{} -> n{}op [label=\"{}\"];",
            edge.input.0,
            edge.node.0,
            quoted(&format_number(edge.local, DIGITS))
        );
    }
    out.push_str("}\n");
    out
}

/// The picture as SVG, laid out by `layout-rs` from the same DOT text.
///
/// Errors: a message when `layout-rs` cannot parse the DOT (a bug: the DOT is ours).
pub fn svg(picture: &Picture) -> Result<String, String> {
    use layout::backends::svg::SVGWriter;
    use layout::gv::{DotParser, GraphBuilder};

    // layout-rs reads records and edge labels but not every attribute Graphviz
    // knows; it skips the ones it does not.
    let text = dot(picture);
    let mut parser = DotParser::new(&text);
    let graph = parser
        .process()
        .map_err(|error| format!("cannot lay out the graph: {error}"))?;
    let mut builder = GraphBuilder::new();
    builder.visit_graph(&graph);
    let mut visual = builder.get();
    let mut writer = SVGWriter::new();
    visual.do_it(false, false, false, &mut writer);
    Ok(writer.finalize())
}

/// Text inside a quoted DOT string.
fn quoted(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Text inside a record field: also escapes the record syntax `{ } | < >`.
fn record_text(text: &str) -> String {
    let mut out = String::new();
    for c in quoted(text).chars() {
        if matches!(c, '{' | '}' | '|' | '<' | '>') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Text for a `//` comment: one line.
fn comment(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{NodeId, Op};
    use crate::session::{NodeRef, PictureEdge, PictureNode};

    fn node(id: u32, name: Option<&str>, op: Op, value: f64, grad: f64) -> PictureNode {
        PictureNode {
            node: NodeRef {
                id: NodeId(id),
                name: name.map(str::to_string),
                constant: None,
            },
            op,
            value,
            grad,
        }
    }

    #[test]
    fn records_op_nodes_and_labelled_edges() {
        let picture = Picture {
            of: "z".to_string(),
            nodes: vec![
                node(2, Some("z"), Op::Mul, 6.0, 1.0),
                node(0, Some("x"), Op::Input, 2.0, 3.0),
                node(1, Some("a|b"), Op::Input, 3.0, 2.0),
            ],
            edges: vec![
                PictureEdge {
                    input: NodeId(0),
                    node: NodeId(2),
                    position: 0,
                    local: 3.0,
                },
                PictureEdge {
                    input: NodeId(1),
                    node: NodeId(2),
                    position: 1,
                    local: 2.0,
                },
            ],
        };
        let text = dot(&picture);
        assert!(text.contains("rankdir=LR;"));
        assert!(text.contains("n2 [label=\"{ z | value 6 | grad 1 }\"];"));
        assert!(text.contains("n2op [label=\"×\""));
        assert!(text.contains("n0 -> n2op [label=\"3\"];"));
        assert!(text.contains("{ a\\|b | value 3"));
        let svg = svg(&picture).expect("layout-rs lays it out");
        assert!(svg.contains("<svg"));
    }
}
