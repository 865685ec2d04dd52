//! The graph as a web page: one self-contained HTML file (`:html FILE`), the
//! live view `:serve` keeps up to date, and the view of the playground
//! (`web/`). All three show the same *model*, [`PageModel`], made here from
//! the session's [`StepModel`] (the page numbers no step and sums no
//! gradient of its own):
//!
//! - `of`: the output's label;
//! - `views`: one or two drawings ([`PageView`]): the finished picture as
//!   [`crate::render::svg`] draws it (gradcalc's own layout, every box wide
//!   enough for every gradient it shows over the pass, so no step moves a
//!   box) with calls of user functions as boxes, then, if any call was boxed,
//!   every node drawn (the page switches: calls collapsed or expanded);
//!   `turned`, when the picture's direction was left to gradcalc, is the
//!   same picture the other way (top to bottom if `svg` runs left to right,
//!   and the reverse), its boxes in the same order: the page draws whichever
//!   is larger in its pane, so a tall narrow pane (a phone) draws top to
//!   bottom and a wide one left to right, each one layout for every step;
//!   `boxes` has one entry per value box, in the order the SVG lists them
//!   (`<g class="value …">`): the box's timeline, the steps at which its
//!   gradient as drawn changes, each with its text and kind ([`BoxMark`]);
//!   `lit` has one entry per step: the box to highlight, or null;
//! - `header` and `steps`: the `:trace` header line and, per step, its text
//!   exactly as `:trace` prints it (upstream gradient × local derivative =
//!   contribution, accumulation at fan-out); the steps are `:trace`'s, a call
//!   one step;
//! - `note`: why there are no steps (a derivative graph), else absent;
//! - `edges`: the legend's line for an edge's label where it is not the
//!   local derivative ∂node/∂input (a tensor output's page: matrix rules),
//!   else absent;
//! - `message`: instead of everything above, why there is no picture (no
//!   output yet, a graph too large), for the live view.
//!
//! The page's script (`web/page.js`) shows at step K each box's last mark at
//! or before K (blank before its first), highlights the box of step K and
//! shows its line; its style sheet (`web/page.css`) holds the two themes.
//! Nothing in the page asks the network for anything: it works from
//! `file://`.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::engine::{NodeId, Op};
use crate::render::dot::{self, grad_text};
use crate::render::plot::escape;
use crate::render::{Style, text};
use crate::session::{Direction, GradState, Page, Picture, StepModel};

/// The page's style sheet: the themes (plain and projector) and the
/// colour-blind-safe palette (Okabe and Ito 2002).
pub const PAGE_CSS: &str = include_str!("../../web/page.css");
/// The page's script: stepping, zoom and pan, themes, the live connection.
pub const PAGE_JS: &str = include_str!("../../web/page.js");

/// What the page shows (see the module comment).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageModel {
    /// The output's label.
    pub of: String,
    /// The drawings: calls as boxes, then every node (when any call is boxed).
    pub views: Vec<PageView>,
    /// `:trace`'s header line.
    pub header: String,
    /// Step K at index K − 1, as `:trace` prints it.
    pub steps: Vec<StepLine>,
    /// Why the pass has no steps, if it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The legend's line for an edge's label when it is not the scalar
    /// page's local derivative: a tensor page's edges carry matrix rules
    /// ([`super::tensor_page::EDGE_LEGEND`]). Absent on a scalar page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edges: Option<String>,
}

/// One way of drawing the page's graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageView {
    /// `calls as boxes` or `every node`.
    pub name: String,
    /// The finished picture.
    pub svg: String,
    /// The same picture the other way (see the module comment), when its
    /// direction was gradcalc's to choose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turned: Option<String>,
    /// Per value box, in the SVG's order: its gradient's changes.
    pub boxes: Vec<Vec<BoxMark>>,
    /// Per step: the box it processes (an index into `boxes`), if drawn.
    pub lit: Vec<Option<usize>>,
}

/// From step `step` on (until the box's next mark), the box's gradient reads
/// `grad {text}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoxMark {
    /// The step (from 1).
    pub step: usize,
    /// The gradient as drawn: `5`, `3 so far`, `0 → 3`.
    pub text: String,
    /// `partial` (a fan-out's sum so far, uses to come) or `done` (final).
    pub kind: MarkKind,
}

/// Whether a box's gradient is a sum so far or final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkKind {
    /// Some uses still to add: drawn in orange, the box dashed.
    Partial,
    /// Final.
    Done,
}

/// One step's line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepLine {
    /// The step as `:trace` prints it (no colour).
    pub text: String,
}

/// The model with nothing to draw.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageModel {
    /// Why there is no picture.
    pub message: String,
}

/// The typed model of `page`, with the step lines in `style` (its
/// precision; never colour).
pub fn page_model(page: &Page, style: &Style) -> PageModel {
    if let (Some(model), Some(tensor)) = (&page.tensor, &page.picture.tensor) {
        let expanded = page.expanded.as_ref();
        return super::tensor_page::page_model(&page.picture, tensor, expanded, model, style);
    }
    let style = Style {
        color: false,
        ..*style
    };
    let (header, steps, note, model) = match &page.steps {
        Ok(model) => {
            let (header, lines) = text::model_texts(model, &style);
            let steps = lines.into_iter().map(|text| StepLine { text }).collect();
            (header, steps, None, Some(model))
        }
        Err(why) => (String::new(), Vec::new(), Some(why.clone()), None),
    };
    let mut views = vec![view(&page.picture, model, "calls as boxes")];
    match &page.expanded {
        Some(expanded) => views.push(view(expanded, model, "every node")),
        None => views[0].name = "every node".to_string(),
    }
    PageModel {
        of: page.picture.of.clone(),
        views,
        header,
        steps,
        note,
        edges: None,
    }
}

/// The model of `page` as JSON (see [`page_model`]). `_session` is kept
/// for the callers of the untyped model (the live server, the playground).
pub fn model(page: &Page, _session: &crate::session::Session, style: &Style) -> Value {
    serde_json::to_value(page_model(page, style)).unwrap_or(Value::Null)
}

/// One way of drawing the page's graph: its SVG, each value box's timeline
/// in `model`, and for each step the box it lights up.
fn view(picture: &Picture, model: Option<&StepModel>, name: &str) -> PageView {
    // The value boxes in the order `dot::drawing` makes them (the SVG lists
    // them in that order): the picture's nodes inputs first, constants left out.
    let drawn: Vec<NodeId> = picture
        .nodes
        .iter()
        .rev()
        .filter(|node| node.op != Op::Const)
        .map(|node| node.node.id)
        .collect();
    let box_of: HashMap<NodeId, usize> = drawn.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let Some(model) = model else {
        return PageView::of(picture, name, vec![Vec::new(); drawn.len()], Vec::new());
    };
    let boxes = drawn
        .iter()
        .map(|&id| {
            model
                .timeline(id)
                .into_iter()
                .filter_map(|(step, state)| {
                    let kind = match state {
                        GradState::Partial { .. } => MarkKind::Partial,
                        _ => MarkKind::Done,
                    };
                    grad_text(state).map(|text| BoxMark { step, text, kind })
                })
                .collect()
        })
        .collect();
    let lit = (1..=model.len())
        .map(|k| model.node(k).and_then(|id| box_of.get(&id).copied()))
        .collect();
    PageView::of(picture, name, boxes, lit)
}

impl PageView {
    /// The view `name` of `picture` (drawn both ways, [`both_ways`]) with
    /// its boxes' timelines `boxes` and each step's lit box `lit`.
    pub(super) fn of(
        picture: &Picture,
        name: &str,
        boxes: Vec<Vec<BoxMark>>,
        lit: Vec<Option<usize>>,
    ) -> PageView {
        let (svg, turned) = both_ways(picture);
        PageView {
            name: name.to_string(),
            svg,
            turned,
            boxes,
            lit,
        }
    }
}

/// The picture as `:svg` draws it and, when its direction is gradcalc's to
/// choose, the same picture the other way.
pub(super) fn both_ways(picture: &Picture) -> (String, Option<String>) {
    let svg = dot::svg(picture);
    if picture.direction != Direction::Auto {
        return (svg, None);
    }
    let drawn = |direction| {
        dot::svg(&Picture {
            direction,
            ..picture.clone()
        })
    };
    let left_to_right = drawn(Direction::LeftToRight);
    let turned = if left_to_right == svg {
        drawn(Direction::TopToBottom)
    } else {
        left_to_right
    };
    (svg, Some(turned))
}

/// The model of a view with nothing to draw: `message` says why.
pub fn message_model(message: &str) -> Value {
    serde_json::to_value(MessageModel {
        message: message.to_string(),
    })
    .unwrap_or(Value::Null)
}

/// The self-contained page of `page` (`:html FILE`): the model, the style
/// sheet and the script inline, no request to the network.
pub fn page(page: &Page, style: &Style) -> String {
    page_with(page, style, "")
}

/// [`page`] with `body` (attributes, each after a space) on its `<body>`:
/// a notebook's page says it is framed ([`super::frame`]).
pub fn page_with(page: &Page, style: &Style, body: &str) -> String {
    let model = serde_json::to_value(page_model(page, style)).unwrap_or(Value::Null);
    document(&format!("gradcalc: {}", page.picture.of), model, body)
}

/// The page of `:serve` without its model: the text before and after the
/// model's JSON (as [`script_json`] writes it), which the server holds once
/// and sends around every model. `events` is the path of the server-sent
/// events that bring every later model.
pub fn live_page_around(events: &str) -> (String, String) {
    let noscript = "<noscript><div class=\"gc-noscript\"><p>The live page needs JavaScript, which is off here.</p></div></noscript>\n";
    let live = format!(" data-live=\"{}\"", escape(events));
    document_around("gradcalc: live", &live, noscript)
}

/// An HTML page holding `model` and the view's script and style.
///
/// The picture is written once: inline in the `<noscript>` part (what a
/// reader without scripts sees), and in the model as `null` with
/// `"svg_in_noscript": true`; the script takes the `<svg>…</svg>` from the
/// `<noscript>` text (raw text where scripts run) before showing the model.
fn document(title: &str, mut model: Value, body: &str) -> String {
    let noscript = without_script(&model);
    if model["views"][0]["svg"].is_string() && noscript.contains("<svg") {
        model["views"][0]["svg"] = Value::Null;
        model["svg_in_noscript"] = Value::Bool(true);
    }
    let (before, after) = document_around(title, body, &noscript);
    format!("{before}{}{after}", script_json(&model))
}

/// An HTML page of the view's script and style, before and after its model;
/// `body` holds the `<body>`'s attributes (each after a space), `noscript`
/// what the page shows where scripts do not run.
fn document_around(title: &str, body: &str, noscript: &str) -> (String, String) {
    let before = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>\n{PAGE_CSS}</style>\n</head>\n<body{body}>\n<div id=\"view\" class=\"gc-view\"></div>\n{noscript}<script id=\"gradcalc-model\" type=\"application/json\">",
        escape(title)
    );
    let after = format!(
        "</script>\n<script>\n{PAGE_JS}</script>\n<script>GradcalcView.start(document.getElementById(\"view\"));</script>\n</body>\n</html>\n"
    );
    (before, after)
}

/// What the page shows where scripts do not run (a learning platform or a
/// mail preview that strips them): a line saying that stepping needs
/// JavaScript, and the picture with its final gradients (or why there is
/// none).
fn without_script(model: &Value) -> String {
    let shown = match (model["views"][0]["svg"].as_str(), model["message"].as_str()) {
        (Some(svg), _) => format!("the graph with its final gradients:</p>\n{svg}"),
        (None, Some(message)) => format!("{}</p>", escape(message)),
        (None, None) => "</p>".to_string(),
    };
    format!(
        "<noscript><div class=\"gc-noscript\"><p>Stepping through the backward pass needs JavaScript, which is off here; {shown}</div></noscript>\n"
    )
}

/// JSON that is safe inside a `<script>` element: `<`, `>` and `&` written
/// as `\u003c` etc., so no `</script>` or `<!--` can end it early.
pub fn script_json(value: &Value) -> String {
    script_json_within(value, usize::MAX).unwrap_or_default()
}

/// [`script_json`] of `value` if it is at most `limit` bytes long, else
/// `None`, found without writing more than `limit` bytes.
pub fn script_json_within(value: &Value, limit: usize) -> Option<String> {
    let mut out = ScriptJson {
        text: Vec::new(),
        limit,
    };
    serde_json::to_writer(&mut out, value).ok()?;
    // Only ASCII was replaced in what serde_json wrote, which is UTF-8.
    String::from_utf8(out.text).ok()
}

/// Collects JSON text, escaping `<`, `>` and `&` as it comes (they occur
/// only inside strings), and fails past `limit` bytes.
struct ScriptJson {
    text: Vec<u8>,
    limit: usize,
}

impl std::io::Write for ScriptJson {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        for &byte in bytes {
            match byte {
                b'<' => self.text.extend_from_slice(b"\\u003c"),
                b'>' => self.text.extend_from_slice(b"\\u003e"),
                b'&' => self.text.extend_from_slice(b"\\u0026"),
                _ => self.text.push(byte),
            }
        }
        if self.text.len() > self.limit {
            return Err(std::io::Error::other("longer than the limit"));
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn script_json_cannot_close_the_script() {
        let value = json!({"svg": "</script><!-- & -->"});
        let text = script_json(&value);
        assert!(!text.contains('<') && !text.contains('>'));
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn script_json_within_stops_at_its_limit() {
        // `{"svg":"\u003cb\u003e"}` is 23 bytes.
        let value = json!({"svg": "<b>"});
        let text = r#"{"svg":"\u003cb\u003e"}"#;
        assert_eq!(script_json(&value), text);
        assert_eq!(script_json_within(&value, 23).as_deref(), Some(text));
        assert_eq!(script_json_within(&value, 22), None);
    }
}
