//! The page in a notebook's frame (src/render/frame.rs): the HTML the Python
//! package shows for `:show` (`gradcalc::notebook::frame` of the page a
//! cell's `:html -` gives, the same library calls the compiled module and
//! the Pyodide build make) put in a host page as a notebook's output area
//! would hold it, and rendered by headless Chromium (`browser.rs`). The
//! sandboxed frame runs in a process of its own, reached by its own
//! DevTools session. Measured: the text of the graph as rendered (each
//! `<text>`'s computed font size times its scale on the screen), the
//! frame's height, and that the page works without storage.
//!
//! Before the frame was sized to its graph it was 560 px high, and the
//! 2-16-16-1 moons MLP (a 2133 × 1325 layer view, without edge labels) was
//! drawn at about 18 px × min(958/2133, 440/1325) = 6.0 px in its pane of
//! about 958 × 440 px (the frame less the bar and the step's line).

use gradcalc::files::WritePolicy;
use gradcalc::notebook::{Cells, cell_source, frame};

use crate::browser::Browser;
use crate::util::in_crate;

/// The frame a notebook shows for `:show` after `source`, as the Python
/// package's `%%gradcalc` cell makes it.
fn shown(source: &str) -> String {
    let mut cells = Cells::new(WritePolicy::default(), true);
    let pieces = cells.run_rich(source, "<cell>", false);
    assert!(
        pieces.iter().all(|(kind, _)| *kind != "error"),
        "{pieces:?}"
    );
    let pieces = cells.run_rich(&cell_source(":show"), "<cell>", false);
    let page = pieces
        .iter()
        .find(|(kind, _)| *kind == "html")
        .unwrap_or_else(|| panic!("no page: {pieces:?}"));
    frame(&page.1)
}

/// The moons MLP of examples/moons_mlp.calc, trained, its output the loss.
fn mlp() -> String {
    let example = std::fs::read_to_string(in_crate("examples/moons_mlp.calc")).unwrap();
    shown(&format!("{example}\nL"))
}

/// Opens a host page holding `frame` in an output area `width` px wide
/// (a window of 1400 × 900), and the frame's DevTools session once its
/// page has drawn its graph.
fn host(browser: &mut Browser, dir: &std::path::Path, frame: &str, width: u32) -> String {
    let page = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"></head><body style=\"margin: 0\"><div class=\"output\" style=\"width: {width}px\">{frame}</div></body></html>"
    );
    let path = dir.join(format!("host{width}.html"));
    std::fs::write(&path, page).unwrap();
    browser.attach_frames();
    browser.open(
        &format!("file://{}", path.display()),
        (1400, 900),
        "document.querySelector('iframe')",
    );
    let session = browser.frame_session();
    browser.wait_for_in(
        &session,
        "window.gradcalcView && document.querySelector('.gc-graph svg text')",
    );
    session
}

/// The smallest text of the framed page's graph as rendered, in pixels,
/// and the graph pane's width and height (after two frames, so that a
/// resize has been laid out).
fn graph_text(browser: &mut Browser, session: &str) -> (f64, f64, f64) {
    let seen = browser.eval_in(
        session,
        "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => {
            const pane = document.querySelector('.gc-graph');
            const texts = Array.from(pane.querySelectorAll('svg text'))
                .filter(t => t.textContent.trim() !== '');
            done([Math.min(...texts.map(t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a)),
                  pane.clientWidth, pane.clientHeight]);
        })))",
    );
    (
        seen[0].as_f64().unwrap(),
        seen[1].as_f64().unwrap(),
        seen[2].as_f64().unwrap(),
    )
}

/// The frame's height in the host page, in pixels.
fn frame_height(browser: &mut Browser) -> f64 {
    browser
        .eval("document.querySelector('iframe').getBoundingClientRect().height")
        .as_f64()
        .unwrap()
}

#[test]
fn the_notebook_frame_shows_the_mlp_readable_at_a_notebooks_width() {
    let Some(mut browser) = Browser::start("the notebook's frame in Chromium") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let frame = mlp();
    let session = host(&mut browser, dir.path(), &frame, 960);
    let (text, pane_width, pane_height) = graph_text(&mut browser, &session);
    let height = frame_height(&mut browser);
    eprintln!(
        "MLP in a 960 px notebook: smallest text {text:.1} px, frame {height} px high, graph pane {pane_width}×{pane_height}"
    );
    assert!(text >= 12.0, "{text:.1} px in a frame {height} px high");
    // The graph has the frame's width (the legend waits for L).
    assert_eq!(pane_width, 958.0);
    // Stepping (tensor steps write rows of numbers in the line below the
    // graph) keeps the text: the frame was sized for the line at its most.
    let steps = browser
        .eval_in(&session, "window.gradcalcView.lastStep()")
        .as_u64()
        .unwrap();
    for k in 1..=steps.min(12) {
        browser.eval_in(&session, &format!("window.gradcalcView.setStep({k})"));
        let (at_step, _, _) = graph_text(&mut browser, &session);
        assert!(
            (at_step - text).abs() < 0.01,
            "step {k}: {at_step:.2} px, at step 0 {text:.2} px"
        );
    }
    // The wheel without Ctrl is the notebook's: the page does not take it.
    let taken = browser.eval_in(
        &session,
        "(() => { const e = new WheelEvent('wheel', {deltaY: 100, cancelable: true, bubbles: true});
                  document.querySelector('.gc-graph').dispatchEvent(e); return e.defaultPrevented; })()",
    );
    assert_eq!(taken, serde_json::json!(false));
    let zoomed = browser.eval_in(
        &session,
        "(() => { const e = new WheelEvent('wheel', {deltaY: -100, ctrlKey: true, cancelable: true, bubbles: true});
                  document.querySelector('.gc-graph').dispatchEvent(e); return e.defaultPrevented; })()",
    );
    assert_eq!(zoomed, serde_json::json!(true));
}

#[test]
fn the_frame_follows_the_notebooks_width() {
    let Some(mut browser) = Browser::start("the notebook's frame in Chromium") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let frame = mlp();
    // Wider, the frame grows taller with its width and the graph is drawn
    // larger in proportion (up to its own size, 18 px).
    let session = host(&mut browser, dir.path(), &frame, 960);
    let (narrow, _, _) = graph_text(&mut browser, &session);
    let high = frame_height(&mut browser);
    let session = host(&mut browser, dir.path(), &frame, 1300);
    let (wide, pane_width, _) = graph_text(&mut browser, &session);
    let tall = frame_height(&mut browser);
    assert_eq!(pane_width, 1298.0);
    assert!(
        (wide / narrow - 1298.0 / 958.0).abs() < 0.01,
        "{narrow:.2} px at 960, {wide:.2} px at 1300"
    );
    assert!(tall > high, "{high} px at 960, {tall} px at 1300");
    // A small graph gets a short frame: the 2×3 layer of the lecture.
    let layer = shown(
        "W = [[1, 2, 3], [4, 5, 6]]; x = [1, 0, -1]; b = [0.5, -0.5]; L = sum(tanh(W @ x + b))",
    );
    let session = host(&mut browser, dir.path(), &layer, 960);
    let (layer_text, _, _) = graph_text(&mut browser, &session);
    let short = frame_height(&mut browser);
    eprintln!(
        "MLP at 1300 px: {wide:.1} px text, frame {tall} px; 2×3 layer at 960 px: {layer_text:.1} px text, frame {short} px"
    );
    assert!(layer_text >= 16.0, "{layer_text:.1} px");
    assert!(short <= 700.0, "{short} px");
}

#[test]
fn the_framed_page_works_without_storage_and_says_so_once() {
    let Some(mut browser) = Browser::start("the notebook's frame in Chromium") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let frame = shown("x = 0.5; w = -2; y = tanh(w*x)");
    let session = host(&mut browser, dir.path(), &frame, 960);
    // No storage in a sandboxed frame without allow-same-origin.
    let storage = browser.eval_in(
        &session,
        "(() => { try { window.localStorage.getItem('x'); return 'storage'; } catch (e) { return e.name; } })()",
    );
    assert_eq!(storage, serde_json::json!("SecurityError"));
    let note = "no storage here";
    let mut said = 0;
    for (k, projector) in [(1, true), (2, false), (3, true)] {
        browser.eval_in(&session, "document.querySelector('.gc-theme').click()");
        let seen = browser.eval_in(
            &session,
            "[document.body.classList.contains('projector'), document.querySelector('.gc-status').textContent]",
        );
        assert_eq!(seen[0], serde_json::json!(projector), "toggle {k}: {seen}");
        said += usize::from(seen[1].as_str().unwrap().contains(note));
        // Stepping still works after each toggle.
        browser.eval_in(&session, "window.gradcalcView.setStep(1)");
        let status = browser.eval_in(&session, "document.querySelector('.gc-status').textContent");
        assert!(
            status.as_str().unwrap().starts_with("step 1 of"),
            "{status}"
        );
    }
    assert_eq!(said, 1, "the missing storage said {said} times");
    let thrown = browser.take_events("Runtime.exceptionThrown", &session);
    assert!(thrown.is_empty(), "{thrown:?}");
}
