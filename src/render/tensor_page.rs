//! The page's model ([`PageModel`]) of a tensor output, made from its
//! [`StepModel`] over the tensor graph's nodes as the scalar page is made
//! from the model over a number's: the views (the tensor picture, a box per
//! tensor node, each call of a user function one box; then, when it draws
//! any call so, every node drawn), each box's timeline of gradient states,
//! the box each step lights, and the steps' lines as `:trace` prints them. A tensor box's
//! gradient text has one line per row (split by `\n`, the rows after the
//! first indented under it as the SVG draws them), which `web/page.js`
//! writes as the box's rows.

use super::html::{BoxMark, MarkKind, PageModel, PageView, StepLine};
use crate::engine::tensor::TensorId;
use crate::render::tensor_pictures::{boxes_of, grad_text};
use crate::render::{Style, text};
use crate::session::{GradState, Picture, StepModel, TensorPicture};

/// The legend's line for an edge's label on a tensor page: the edges carry
/// the matrix rule of what each operand receives, not a local derivative.
pub const EDGE_LEGEND: &str = "an edge's label: the matrix rule of what the input receives from the upstream gradient (outer(upstream, x) into W of W @ x), as :trace writes it";

/// The page's model of a tensor output: its finished `picture` (whose
/// tensor part is `tensor`) stepped by `model`, and `expanded`, the same
/// with every call of a user function drawn node by node when `picture`
/// draws any as one box (the page switches between the two, as a page of
/// numbers does); lines in `style` (never colour).
pub fn page_model(
    picture: &Picture,
    tensor: &TensorPicture,
    expanded: Option<&Picture>,
    model: &StepModel<TensorId>,
    style: &Style,
) -> PageModel {
    let style = Style {
        color: false,
        ..*style
    };
    let (header, lines) = text::model_texts(model, &style);
    let mut views = vec![view(picture, tensor, model, "calls as boxes")];
    match expanded.and_then(|p| Some((p, p.tensor.as_deref()?))) {
        Some((expanded, every)) => views.push(view(expanded, every, model, "every node")),
        None => views[0].name = "every node".to_string(),
    }
    PageModel {
        of: model.of.clone(),
        views,
        header,
        steps: lines.into_iter().map(|text| StepLine { text }).collect(),
        note: None,
        edges: Some(EDGE_LEGEND.to_string()),
    }
}

/// One way of drawing the page's tensor graph (`picture`, whose tensor part
/// is `tensor`): its SVG, each box's timeline in `model`, and for each step
/// the box it lights.
fn view(
    picture: &Picture,
    tensor: &TensorPicture,
    model: &StepModel<TensorId>,
    name: &str,
) -> PageView {
    // The boxes drawn (in the layer view, one per named variable) in the
    // picture's order, and which one draws each node.
    let of = boxes_of(picture, tensor);
    let drawn: Vec<usize> = (0..of.len()).filter(|&i| of[i] == i).collect();
    let boxes = drawn
        .iter()
        .map(|&i| &tensor.nodes[i])
        .map(|node| {
            model
                .timeline(node.id)
                .into_iter()
                .filter_map(|(step, state)| {
                    let kind = match state {
                        GradState::Partial { .. } => MarkKind::Partial,
                        _ => MarkKind::Done,
                    };
                    let text = grad_text(&state)?.replace('\n', "\n     ");
                    Some(BoxMark { step, text, kind })
                })
                .collect()
        })
        .collect();
    let lit = (1..=model.len())
        .map(|k| {
            let id = model.node(k)?;
            let at = tensor.nodes.iter().position(|n| n.id == id)?;
            drawn.iter().position(|&i| i == of[at])
        })
        .collect();
    PageView::of(picture, name, boxes, lit)
}
