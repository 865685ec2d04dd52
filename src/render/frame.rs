//! The page in a notebook: `:show` and `:html -` in a `%%gradcalc` cell,
//! `Session.show()` and `gradcalc.show(value)` show the page of
//! [`super::html`] inside a sandboxed iframe of the notebook's output, and
//! that frame is sized to the graph and to the notebook's width.
//!
//! - [`notebook_page`]: the page laid out for a notebook's width. Where the
//!   picture's direction is gradcalc's to choose, it is fitted (as `:svg
//!   --fit WxH` fits one) to a screen [`NOTEBOOK_WIDTH`] wide and, of
//!   [`HEIGHTS`] in turn, the first tall enough that 18-pixel text is drawn
//!   at [`READABLE`] pixels or more across that width (else the one that
//!   draws it largest): a wide graph is wrapped into rows, a long chain
//!   turned top to bottom, and a 2-16-16-1 MLP drawn in a frame taller than
//!   wide. The page says it is framed (`<body class="gc-frame">`: the
//!   legend waits for L, the step's line is at most [`LINE_EMS`] lines of
//!   its font high, the wheel scrolls the notebook and Ctrl+wheel zooms)
//!   and how large its picture is (`data-picture="W H"`, the canvas in
//!   pixels).
//! - [`frame`]: the notebook's HTML for such a page: a sandboxed iframe
//!   (`allow-scripts` only: the page's script runs, its keys and styles
//!   stay inside it, and it has no storage) as wide as the output area and
//!   as high as the picture drawn across that width needs (at most its own
//!   size, 18-pixel text) plus the page's bar and step line ([`CHROME`]):
//!   CSS computes it from the output area's width (`100cqw` of a container
//!   around the frame), so the frame follows a notebook made wider or
//!   narrower without a script; a browser without container units takes
//!   the height for [`NOTEBOOK_WIDTH`].

use super::{Style, dot, html, svg};
use crate::session::{Direction, Page, Picture};

/// The width, in pixels, a notebook's output area is taken to have when
/// the page is laid out: Jupyter's classic notebook gives its outputs about
/// 940 px, JupyterLab and VS Code on a laptop about 900 to 1200.
pub const NOTEBOOK_WIDTH: u32 = 960;

/// The heights, in pixels, of the screens a notebook's picture is fitted
/// to, tried in turn: 16:9, square, 2:3 and 1:2 at [`NOTEBOOK_WIDTH`].
pub const HEIGHTS: [u32; 4] = [540, 960, 1440, 1920];

/// The text size, in pixels, that a picture fitted for a notebook should
/// show across [`NOTEBOOK_WIDTH`] (the first of [`HEIGHTS`] that reaches it
/// is taken), as a slide's pictures ([`svg::READABLE`]).
pub const READABLE: f64 = svg::READABLE;

/// The picture's own text size, in pixels (the SVG's `font-size`).
const FONT: f64 = 18.0;

/// The most lines of its font the step's line below the graph takes in a
/// framed page before it scrolls (`web/page.css`, `body.gc-frame .gc-line`).
pub const LINE_EMS: u32 = 7;

/// The pixels of a framed page that are not the graph, at most: the bar
/// (40), the step's line at its most ([`LINE_EMS`] lines of 17 px, its
/// padding and border: 138) and the frame's border (2), measured in
/// Chromium (tests/it/notebook_frame.rs).
pub const CHROME: u32 = 180;

/// The direction of `picture` in a notebook: the user's, if the command
/// gave one; else fitted to [`NOTEBOOK_WIDTH`] × the first of [`HEIGHTS`]
/// whose layout shows text at [`READABLE`] pixels or more across the
/// notebook's width, or the one that shows it largest.
pub fn notebook_direction(picture: &Picture) -> Direction {
    if picture.direction != Direction::Auto {
        return picture.direction;
    }
    let mut best: Option<(f64, Direction)> = None;
    for height in HEIGHTS {
        let direction = Direction::Fit(NOTEBOOK_WIDTH, height);
        let fitted = Picture {
            direction,
            ..picture.clone()
        };
        let text = text_across(svg::size(&dot::drawing(&fitted)));
        if text >= READABLE {
            return direction;
        }
        if best.is_none_or(|(largest, _)| text > largest) {
            best = Some((text, direction));
        }
    }
    best.map_or(Direction::Auto, |(_, direction)| direction)
}

/// The text size, in pixels, of a picture of `canvas` (width, height)
/// drawn across a notebook's width: scaled to [`NOTEBOOK_WIDTH`], never
/// above its own size.
fn text_across((width, _): (f64, f64)) -> f64 {
    FONT * (f64::from(NOTEBOOK_WIDTH) / width).min(1.0)
}

/// The page of `page` for a notebook (see the module comment): each
/// picture laid out by [`notebook_direction`], the page marked as framed
/// with its picture's size. Numbers in `style`'s precision.
pub fn notebook_page(page: &Page, style: &Style) -> String {
    let fitted = |picture: &Picture| Picture {
        direction: notebook_direction(picture),
        ..picture.clone()
    };
    let page = Page {
        picture: fitted(&page.picture),
        expanded: page.expanded.as_ref().map(fitted),
        ..page.clone()
    };
    let (width, height) = svg::size(&dot::drawing(&page.picture));
    let body = format!(" class=\"gc-frame\" data-picture=\"{width} {height}\"");
    html::page_with(&page, style, &body)
}

/// The size of the picture of a page [`notebook_page`] wrote (its
/// `data-picture`), or `None` for another page.
fn picture_size(page: &str) -> Option<(f64, f64)> {
    let start = page.find("data-picture=\"")? + "data-picture=\"".len();
    let rest = &page[start..];
    let (width, rest) = rest.split_once(' ')?;
    let (height, _) = rest.split_once('"')?;
    Some((width.parse().ok()?, height.parse().ok()?))
}

/// The HTML a notebook shows `page` (a whole HTML document) in: a
/// sandboxed iframe (`allow-scripts`) inside a `<div>` that is a size
/// container, as wide as the output and, for a page of [`notebook_page`],
/// as high as its picture needs across that width plus [`CHROME`] (see the
/// module comment); another page gets a frame of 560 px.
pub fn frame(page: &str) -> String {
    let height = match picture_size(page) {
        Some((width, height)) => {
            let ratio = height / width;
            // Across the container's width less the frame's border, at
            // most the picture's own height; then the bar and the line.
            let fallback = (f64::from(NOTEBOOK_WIDTH - 2) * ratio).min(height) + f64::from(CHROME);
            format!(
                "height: {:.0}px; height: calc(min((100cqw - 2px) * {ratio:.6}, {height:.0}px) + {CHROME}px)",
                fallback.ceil()
            )
        }
        None => "height: 560px".to_string(),
    };
    format!(
        "<div class=\"gradcalc-frame\" style=\"container-type: inline-size; width: 100%\"><iframe sandbox=\"allow-scripts\" title=\"gradcalc: the graph and its backward pass (→ and ← step)\" style=\"display: block; box-sizing: border-box; width: 100%; {height}; border: 1px solid #ccc\" srcdoc=\"{}\"></iframe></div>",
        escape_attribute(page)
    )
}

/// `text` inside a double-quoted HTML attribute: `&`, `"`, `<`, `>` and
/// `'` as character references (Python's `html.escape(text, quote=True)`).
fn escape_attribute(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\'' => out.push_str("&#x27;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_as_high_as_its_picture_across_the_notebook() {
        // A picture 1920 × 960 (ratio 0.5) across 958 px is 479 px high,
        // plus the 180 px of bar, line and border: 659.
        let page = "<body class=\"gc-frame\" data-picture=\"1920 960\">x</body>";
        let html = frame(page);
        assert!(html.contains("height: 659px;"), "{html}");
        assert!(
            html.contains("height: calc(min((100cqw - 2px) * 0.500000, 960px) + 180px)"),
            "{html}"
        );
        assert!(html.contains("sandbox=\"allow-scripts\""), "{html}");
        assert!(html.contains("srcdoc=\"&lt;body class=&quot;gc-frame&quot;"));
        // A small picture keeps its own size: 400 × 100 is 100 px high.
        assert!(frame("<body data-picture=\"400 100\">").contains("height: 280px;"));
        // A page without a picture's size: the old 560 px.
        assert!(frame("<p>").contains("height: 560px"));
    }

    #[test]
    fn attributes_escape_as_python_does() {
        assert_eq!(
            escape_attribute("a&b\"c'<d>"),
            "a&amp;b&quot;c&#x27;&lt;d&gt;"
        );
    }
}
