//! The playground (web/, built into web/dist/ by scripts/build-web.sh) in
//! headless Chromium, driven as a student drives it: a real paste event, keys
//! with their modifiers, mouse clicks on the buttons, a reload, downloads into
//! a folder, Stop during a long statement. Each test says so and passes where
//! Chromium or web/dist/ is missing (`.ci/run` has both).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::browser::{Browser, assert_drawn, serve_files, shown};
use crate::util::in_crate;

/// What a test of the playground starts with: Chromium, and the playground
/// served on a free port of 127.0.0.1 (its URL).
pub(crate) fn playground(test: &str) -> Option<(Browser, String)> {
    let dist = in_crate("web/dist");
    if !dist.join("gradcalc.wasm").is_file() || !dist.join("worker.js").is_file() {
        eprintln!("note: {test} skipped: web/dist/ is not built (scripts/build-web.sh)");
        return None;
    }
    let browser = Browser::start(test)?;
    let port = serve_files(dist);
    Some((browser, format!("http://127.0.0.1:{port}/")))
}

/// As `playground`, with the browser's downloads going to a new temporary
/// directory (the third part; removed when it is dropped).
pub(crate) fn playground_downloading(test: &str) -> Option<(Browser, String, tempfile::TempDir)> {
    let (mut browser, url) = playground(test)?;
    let downloads = tempfile::tempdir().unwrap();
    browser.call_browser(
        "Browser.setDownloadBehavior",
        json!({"behavior": "allow", "downloadPath": downloads.path().to_str().unwrap()}),
    );
    Some((browser, url, downloads))
}

/// The playground has loaded and its worker answers.
pub(crate) const READY: &str = "document.body.getAttribute('data-ready') === 'yes'";

/// The output pane's text.
pub(crate) const SCREEN: &str = "document.getElementById('screen').textContent";

/// Types `text` into the input and presses Enter.
pub(crate) fn enter(browser: &mut Browser, text: &str) {
    browser.eval("document.getElementById('input').focus(), true");
    browser.type_text(text);
    browser.press("Enter");
}

/// Waits until the output pane holds `text`.
pub(crate) fn wait_screen(browser: &mut Browser, text: &str) {
    browser.wait_for(&format!("{SCREEN}.includes({text:?})"));
}

/// Clicks the answer of the open question (`.gc-ask`) whose label starts
/// with `label`.
pub(crate) fn answer(browser: &mut Browser, label: &str) {
    browser.wait_for(&format!(
        "Array.from(document.querySelectorAll('.gc-ask button')).some(b => b.textContent.startsWith({label:?}))"
    ));
    browser.eval(&format!(
        "Array.from(document.querySelectorAll('.gc-ask button')).find(b => b.textContent.startsWith({label:?})).click(), true"
    ));
}

/// Pastes `text` into the input through a paste event carrying it, as the
/// browser fires one for Ctrl+V.
pub(crate) fn paste(browser: &mut Browser, text: &str) {
    browser.eval(&format!(
        "(() => {{ const input = document.getElementById('input'); input.focus();
            const data = new DataTransfer(); data.setData('text/plain', {text:?});
            input.dispatchEvent(new ClipboardEvent('paste', {{clipboardData: data, bubbles: true, cancelable: true}}));
            return true; }})()"
    ));
}

#[test]
fn pasted_lines_run_as_lines_and_the_session_survives_a_reload() {
    let Some((mut browser, url)) = playground("the playground's input and storage") else {
        return;
    };
    browser.open(&url, (1366, 768), READY);
    enter(&mut browser, "x = 1");
    wait_screen(&mut browser, "\nx = 1\n");
    // Two lines pasted: `y = 3`, then (1 + 1)² = 4, not `y = 3(x+1)^2` = 12.
    paste(&mut browser, "y = 3\r\n(x+1)^2");
    assert_eq!(
        browser.eval("document.getElementById('input').value"),
        json!("y = 3\n(x+1)^2")
    );
    browser.press("Enter");
    wait_screen(&mut browser, "y = 3\n4\n");
    // Shift+Enter adds a line; Enter runs both: z = 3, then 3 + 1 = 4.
    browser.eval("document.getElementById('input').focus(), true");
    browser.type_text("z = y");
    browser.press_with("Enter", 8);
    browser.type_text("z + 1");
    assert_eq!(
        browser.eval("document.getElementById('input').value"),
        json!("z = y\nz + 1")
    );
    browser.press("Enter");
    wait_screen(&mut browser, "z = 3\n4\n");
    browser.wait_for("document.body.getAttribute('data-busy') === 'no'");
    // A reload keeps the session and the history.
    browser.call("Page.reload", json!({}));
    browser.wait_for(READY);
    wait_screen(&mut browser, "your last session is back: 5 statements");
    enter(&mut browser, "z * 2");
    wait_screen(&mut browser, "\n6\n");
    browser.press("ArrowUp");
    browser.press("ArrowUp");
    assert_eq!(
        browser.eval("document.getElementById('input').value"),
        json!("z = y\nz + 1")
    );
    // "New" starts afresh: z is unknown, and a reload brings nothing back.
    browser.click("#new");
    wait_screen(&mut browser, "new session");
    enter(&mut browser, "z");
    wait_screen(&mut browser, "unknown");
    browser.call("Page.reload", json!({}));
    browser.wait_for(READY);
    browser.press("ArrowUp");
    assert_eq!(
        browser.eval("document.getElementById('input').value"),
        json!("z")
    );
    assert!(
        !browser
            .eval(SCREEN)
            .as_str()
            .unwrap()
            .contains("last session is back"),
    );
}

/// Waits for the file `name` in `dir` (downloaded whole) and gives its bytes.
pub(crate) fn downloaded(browser: &mut Browser, dir: &Path, name: &str) -> Vec<u8> {
    let path: PathBuf = dir.join(name);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "{name} was never downloaded; the page shows:\n{}",
            browser.eval(SCREEN)
        );
        if let Ok(bytes) = std::fs::read(&path)
            && !bytes.is_empty()
        {
            return bytes;
        }
        // Wait on the browser (a round trip), not on a clock.
        browser.eval("new Promise(done => setTimeout(() => done(true), 50))");
    }
}

#[test]
fn files_download_links_share_and_the_output_copies() {
    let Some((mut browser, url, downloads)) = playground_downloading("the playground's files")
    else {
        return;
    };
    browser.open(&url, (1920, 1080), READY);
    enter(&mut browser, "x = 2; y = x^2");
    wait_screen(&mut browser, "\ny = 4\n");
    // `:save FILE` and the exports download their file.
    enter(&mut browser, ":save hw.calc");
    wait_screen(&mut browser, "saved 2 statements to hw.calc (downloaded)");
    let script = String::from_utf8(downloaded(&mut browser, downloads.path(), "hw.calc")).unwrap();
    assert!(script.ends_with("x = 2\ny = x^2\n"), "{script}");
    enter(&mut browser, ":svg g.svg");
    wait_screen(&mut browser, "downloaded as g.svg");
    let svg = String::from_utf8(downloaded(&mut browser, downloads.path(), "g.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("value 4"), "{svg}");
    // `-` prints instead: the table's row of y (d(x²)/dx at 2 = 4).
    enter(&mut browser, ":trace md -");
    wait_screen(&mut browser, "| x = 2 (leaf) |  |  |  | ∂y/∂x = 4 |");
    // `:load FILE` in a script says what to do instead of an OS error.
    paste(&mut browser, "w = 1\n:load hw.calc");
    browser.press("Enter");
    wait_screen(&mut browser, "the browser has no files to read");
    wait_screen(&mut browser, "type `:load` alone to pick a file");
    // `:load` alone opens the file picker; the picked script runs.
    let picked = downloads.path().join("picked.calc");
    std::fs::write(&picked, "p = 5\np * 2\n").unwrap();
    browser.call(
        "Page.setInterceptFileChooserDialog",
        json!({"enabled": true}),
    );
    enter(&mut browser, ":load");
    let chooser = browser.wait_event("Page.fileChooserOpened");
    browser.call(
        "DOM.setFileInputFiles",
        json!({"files": [picked.to_str().unwrap()], "backendNodeId": chooser["backendNodeId"]}),
    );
    wait_screen(&mut browser, "p = 5\n10\n");
    // `:step` says how the view steps.
    enter(&mut browser, ":step");
    wait_screen(&mut browser, "here the view steps");
    // The buttons: the session as .calc, the graph as SVG and PNG.
    browser.click("#save");
    let session = downloaded(&mut browser, downloads.path(), "session.calc");
    assert!(String::from_utf8(session).unwrap().contains("p = 5"));
    browser.click("#svg");
    assert!(
        String::from_utf8(downloaded(&mut browser, downloads.path(), "graph.svg"))
            .unwrap()
            .contains("<svg")
    );
    browser.click("#png");
    let png = downloaded(&mut browser, downloads.path(), "graph.png");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // Copy: the output on the clipboard.
    let origin = url.trim_end_matches('/');
    browser.call_browser(
        "Browser.grantPermissions",
        json!({"origin": origin, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]}),
    );
    browser.click("#copy");
    browser.wait_for("document.getElementById('copy').textContent === 'copied'");
    let copied = browser.eval("navigator.clipboard.readText()");
    assert_eq!(copied, browser.eval(SCREEN));
    // A link with the script: opened, it runs it in a new session.
    browser.click("#share");
    browser.wait_for("window.gradcalcLink");
    let link = browser.eval("window.gradcalcLink");
    let link = link.as_str().unwrap().to_string();
    assert!(link.starts_with(&format!("{url}#script=")), "{link}");
    browser.open(&link, (1920, 1080), READY);
    // This tab holds work: asked first (the work stays in Sessions).
    answer(&mut browser, "Open the link");
    wait_screen(&mut browser, "opened a shared link");
    wait_screen(&mut browser, "p = 5\n10\n");
    enter(&mut browser, "y + p");
    wait_screen(&mut browser, "\n9\n");
}

/// A statement that runs for seconds: 10⁶ steps of descent, each with its
/// own derivative graph.
const LONG: &str = ":repeat 1000000 w := w - 0.001*grad(w^2, w)";

#[test]
fn stop_and_ctrl_c_end_a_long_statement_and_keep_the_session() {
    let Some((mut browser, url)) = playground("Stop in the playground") else {
        return;
    };
    browser.open(&url, (1366, 768), READY);
    enter(&mut browser, "w = 3; k = 7");
    wait_screen(&mut browser, "\nk = 7\n");
    // Ctrl-C in the input, nothing selected, while it runs.
    enter(&mut browser, LONG);
    browser.wait_for("document.body.getAttribute('data-busy') === 'yes'");
    browser.press_with("c", 2);
    wait_screen(&mut browser, "interrupted: `:repeat 1000000");
    // The session as before it: w is still 3; the page answers.
    enter(&mut browser, "w + k");
    wait_screen(&mut browser, "\n10\n");
    // The Stop button does the same.
    enter(&mut browser, LONG);
    browser.wait_for("document.body.getAttribute('data-busy') === 'yes'");
    browser.click("#stop");
    browser.wait_for(&format!(
        "{SCREEN}.split('interrupted: `:repeat 1000000').length === 3"
    ));
    enter(&mut browser, "w * k");
    wait_screen(&mut browser, "\n21\n");
}

#[test]
fn memory_past_the_limit_is_an_error_that_keeps_the_session() {
    let Some((mut browser, url)) = playground("the playground's memory limit") else {
        return;
    };
    browser.open(&url, (1366, 768), READY);
    enter(&mut browser, "x = 1; y = 0");
    wait_screen(&mut browser, "\ny = 0\n");
    // Each line adds 7·10⁶ nodes; the limit stops one of them.
    for _ in 0..6 {
        enter(&mut browser, ":repeat 1000000 y = y + x*x*x*x*x*x*x");
    }
    wait_screen(&mut browser, "error: out of memory");
    enter(&mut browser, "x + 41");
    wait_screen(&mut browser, "\n42\n");
    let screen = browser.eval(SCREEN);
    assert!(
        !screen.as_str().unwrap().contains("RuntimeError"),
        "{screen}"
    );
}

/// The playground's text without scripts, as a platform that strips them
/// shows it.
#[test]
fn without_javascript_the_playground_says_it_needs_it() {
    let Some((mut browser, url)) = playground("the playground without JavaScript") else {
        return;
    };
    browser.call(
        "Emulation.setScriptExecutionDisabled",
        json!({"value": true}),
    );
    browser.open(&url, (390, 844), "document.readyState === 'complete'");
    let text = browser.eval("document.body.innerText");
    assert!(
        text.as_str().unwrap().contains("needs JavaScript"),
        "{text}"
    );
    assert!(!text.as_str().unwrap().contains("loading"), "{text}");
    // Scripts back on for the screenshot's decoding (the page stays as it was).
    browser.call(
        "Emulation.setScriptExecutionDisabled",
        json!({"value": false}),
    );
    let shot = browser.screenshot("playground-no-javascript-390x844");
    assert_drawn(&shot, (390, 844));
}

#[test]
fn the_output_pane_stays_small_and_an_unchanged_output_is_not_redrawn() {
    let Some((mut browser, url)) = playground("the playground's output pane") else {
        return;
    };
    browser.open(&url, (1366, 768), READY);
    enter(&mut browser, "x = 2; y = x^2");
    enter(&mut browser, ":grad x");
    wait_screen(&mut browser, "∂y/∂x = 4");
    browser.wait_for("document.querySelector('.gc-status').textContent === 'step 2 of 2'");
    // `q = 1` leaves the output y as it was: the same picture, at the same step.
    browser.eval("document.querySelector('.gc-graph svg').dataset.kept = 'yes', true");
    enter(&mut browser, "q = 1");
    wait_screen(&mut browser, "\nq = 1\n");
    browser.wait_for("document.body.getAttribute('data-busy') === 'no'");
    assert_eq!(
        browser.eval("document.querySelector('.gc-graph svg').dataset.kept"),
        json!("yes")
    );
    assert_eq!(
        browser.eval("document.querySelector('.gc-status').textContent"),
        json!("step 2 of 2")
    );
    // 250 000 lines printed (x + 1, 125 000 times: two lines a node, 1
    // and x): the pane keeps the last ones and says how many it dropped.
    enter(&mut browser, "x = 0");
    enter(&mut browser, ":repeat 125000 x = x + 1");
    enter(&mut browser, ":forward all");
    wait_screen(&mut browser, "earlier lines are not shown");
    browser.wait_for("document.body.getAttribute('data-busy') === 'no'");
    let kept = browser.eval(&format!("{SCREEN}.length")).as_u64().unwrap();
    assert!(kept <= 201_000, "{kept} characters in the pane");
    enter(&mut browser, "x");
    wait_screen(&mut browser, "\n125000\n");
    // Too large to draw: the message says what to do; stepping has nothing to act on.
    let message = browser.eval("document.querySelector('.gc-message').textContent");
    assert!(
        message
            .as_str()
            .unwrap()
            .contains("the view draws at most 500: `:graph` and `:topo` summarise"),
        "{message}"
    );
    assert_eq!(
        browser
            .eval("['back', 'next', 'fit'].map(b => document.querySelector('.gc-' + b).disabled)"),
        json!([true, true, true])
    );
    // The messages of a derivative written without its point, here too.
    enter(&mut browser, "f(t) = t^2");
    enter(&mut browser, "f'");
    wait_screen(&mut browser, "write `f'(2)` for the derivative of f at 2");
}

/// The sizes of the graph, the legend and the view, and whether the page
/// scrolls sideways.
const LAYOUT: &str = "(() => {
    const box = s => { const e = document.querySelector(s); const r = e.getBoundingClientRect();
        return e.getClientRects().length ? r.width : 0; };
    const tops = s => new Set(Array.from(document.querySelectorAll(s))
        .filter(b => !b.hidden).map(b => Math.round(b.getBoundingClientRect().top))).size;
    return {graph: box('.gc-graph'), legend: box('.gc-legend'), view: box('.gc-view'),
        sideways: document.documentElement.scrollWidth > window.innerWidth,
        barRows: tops('.gc-bar button'), toolRows: tops('.gc-tools button')};
})()";

#[test]
fn the_playground_fits_a_phone_a_laptop_and_a_projector() {
    let Some((mut browser, url)) = playground("the playground's layouts") else {
        return;
    };
    // A phone: the graph across the width, each row of buttons one row, no
    // sideways scroll; the output wraps to the pane, trace lines included.
    browser.open(&url, (390, 844), READY);
    enter(&mut browser, "a = 1.5; b = -2.25; c = 3.125");
    enter(&mut browser, "y = tanh(a*b + c*a - b/c) * sigmoid(a - c)");
    enter(&mut browser, ":trace all");
    wait_screen(&mut browser, "∂y/∂a =");
    let layout = browser.eval(LAYOUT);
    assert!(layout["graph"].as_f64().unwrap() >= 380.0, "{layout}");
    assert_eq!(layout["sideways"], json!(false), "{layout}");
    assert_eq!(layout["barRows"], json!(1), "{layout}");
    assert_eq!(layout["toolRows"], json!(1), "{layout}");
    let widest = browser.eval(&format!(
        "(() => {{ const text = {SCREEN}; const trace = text.slice(text.lastIndexOf('> :trace all'));
            const pane = document.getElementById('screen');
            const probe = document.createElement('span'); probe.textContent = '0'.repeat(10);
            pane.appendChild(probe); const glyph = probe.getBoundingClientRect().width / 10; probe.remove();
            return [Math.max(...trace.split('\\n').map(l => l.length)), pane.clientWidth / glyph]; }})()"
    ));
    assert!(
        widest[0].as_f64().unwrap() <= widest[1].as_f64().unwrap(),
        "a trace line wider than the pane: {widest}"
    );
    assert_drawn(&browser.screenshot("playground-390x844"), (390, 844));
    // A laptop: L hides the legend, the graph gets its width; G fills the window.
    browser.open(&url, (1366, 768), READY);
    wait_screen(&mut browser, "your last session is back");
    browser.wait_for("document.querySelector('.gc-title').textContent === 'gradcalc: y'");
    // Beside the input the view is narrower than 1000 px: no legend until L.
    let before = browser.eval(LAYOUT);
    assert_eq!(before["legend"].as_f64(), Some(0.0), "{before}");
    browser.press("Escape");
    browser.press("l");
    let after = browser.eval(LAYOUT);
    assert!(after["legend"].as_f64().unwrap() > 0.0, "{after}");
    assert!(after["graph"].as_f64().unwrap() < before["graph"].as_f64().unwrap());
    browser.press("l");
    assert_eq!(browser.eval(LAYOUT)["legend"].as_f64(), Some(0.0));
    browser.press("g");
    assert_eq!(browser.eval(LAYOUT)["view"].as_f64(), Some(1366.0));
    browser.press("g");
    assert_drawn(&browser.screenshot("playground-1366x768"), (1366, 768));
    // A projector: the theme gives the graph more room than the plain one.
    browser.open(&url, (1920, 1080), READY);
    browser.wait_for("document.querySelector('.gc-title').textContent === 'gradcalc: y'");
    let plain = browser.eval(LAYOUT)["graph"].as_f64().unwrap();
    browser.press("Escape");
    browser.press("t");
    let projector = browser.eval(LAYOUT)["graph"].as_f64().unwrap();
    assert!(projector > plain, "{projector} ≤ {plain}");
    assert_drawn(
        &browser.screenshot("playground-1920x1080-projector"),
        (1920, 1080),
    );
    // Printed: the graph and its line, no buttons, legend or input.
    browser.call("Emulation.setEmulatedMedia", json!({"media": "print"}));
    let printed = browser.eval(
        "['.gc-graph', '.gc-line', '.gc-legend', '.gc-terminal', '.gc-next']
            .map(s => document.querySelector(s).getClientRects().length > 0)",
    );
    assert_eq!(printed, json!([true, true, false, false, false]));
}

/// The WCAG contrast ratio of two CSS colours `rgb(r, g, b)`, in the page.
const CONTRAST: &str = "((a, b) => {
    const lum = c => { const [r, g, b] = c.match(/[0-9.]+/g).slice(0, 3).map(v => {
        v = Number(v) / 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05); })";

#[test]
fn keys_go_where_a_keyboard_user_expects_and_a_screen_reader_reads_the_nodes() {
    let Some((mut browser, url)) = playground("the playground by keyboard") else {
        return;
    };
    browser.open(&url, (1366, 768), READY);
    enter(&mut browser, "x = 2; y = x^2");
    enter(&mut browser, ":grad x");
    browser.wait_for("document.querySelector('.gc-status').textContent === 'step 2 of 2'");
    // Space on "◀ back" goes back; Enter on "fit" fits, and steps nowhere.
    browser.eval("document.querySelector('.gc-back').focus(), true");
    browser.press(" ");
    let status = "document.querySelector('.gc-status').textContent";
    assert_eq!(browser.eval(status), json!("step 1 of 2"));
    browser.eval("document.querySelector('.gc-fit').focus(), true");
    browser.press("Enter");
    assert_eq!(browser.eval(status), json!("step 1 of 2"));
    // A letter typed with the focus on a button goes to the input.
    browser.press("t");
    assert_eq!(
        browser.eval("[document.activeElement.id, document.getElementById('input').value, document.body.classList.contains('projector')]"),
        json!(["input", "t", false])
    );
    // Esc: the graph has the focus, with a ring, and its keys step it.
    browser.press("Escape");
    assert_eq!(
        browser.eval("document.activeElement === document.querySelector('.gc-graph')"),
        json!(true)
    );
    assert_ne!(
        browser.eval("getComputedStyle(document.querySelector('.gc-graph')).outlineStyle"),
        json!("none")
    );
    browser.press("ArrowRight");
    assert_eq!(browser.eval(status), json!("step 2 of 2"));
    browser.press("ArrowLeft");
    // The nodes for a screen reader, in the walk's order (y, then x), the
    // current one marked: at step 1 (y's), x receives 1 × 2x = 4 through
    // its only use, so its gradient is final.
    assert_eq!(
        browser.eval(
            "Array.from(document.querySelectorAll('.gc-reader li')).map(li => li.textContent)"
        ),
        json!([
            "y: value 4, grad 1, current",
            "x: value 2, grad 0 → 4, final"
        ])
    );
    assert_eq!(
        browser.eval("document.querySelector('.gc-reader li[aria-current=step]').textContent"),
        json!("y: value 4, grad 1, current")
    );
    assert_eq!(
        browser.eval(
            "[document.querySelectorAll('main').length, document.querySelector('h1').textContent]"
        ),
        json!([1, "gradcalc playground"])
    );
    // Contrast: the gradient on the current node's fill, the placeholder.
    let ratio = browser.eval(&format!(
        "{CONTRAST}(getComputedStyle(document.querySelector('g.value.current text.grad')).fill,
                    getComputedStyle(document.querySelector('g.value.current rect')).fill)"
    ));
    assert!(ratio.as_f64().unwrap() >= 4.5, "{ratio}");
    let ratio = browser.eval(&format!(
        "{CONTRAST}(getComputedStyle(document.getElementById('input'), '::placeholder').color,
                    getComputedStyle(document.getElementById('input')).backgroundColor)"
    ));
    assert!(ratio.as_f64().unwrap() >= 4.5, "{ratio}");
}

#[test]
fn the_html_page_without_javascript_shows_the_final_gradients() {
    let Some(mut browser) = Browser::start("the :html page without JavaScript") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = crate::browser::html_page(dir.path(), "colah", crate::web::COLAH);
    browser.call(
        "Emulation.setScriptExecutionDisabled",
        json!({"value": true}),
    );
    browser.open(&url, (1366, 768), "document.readyState === 'complete'");
    let text = browser.eval("document.body.innerText");
    assert!(
        text.as_str()
            .unwrap()
            .contains("Stepping through the backward pass needs JavaScript"),
        "{text}"
    );
    // colah's gradients by hand (web.rs): a 2, b 5, c 2, d 3, e 1.
    assert_eq!(
        browser.eval("Array.from(document.querySelectorAll('noscript svg text.grad, .gc-noscript svg text.grad')).map(t => t.textContent)"),
        json!(["grad 2", "grad 5", "grad 2", "grad 3", "grad 1"])
    );
    browser.call(
        "Emulation.setScriptExecutionDisabled",
        json!({"value": false}),
    );
    // A small picture on white: drawn in many colours (antialiased text and lines).
    let shot = browser.screenshot("colah-no-javascript-1366x768");
    assert!(shot["colours"].as_u64().unwrap() > 8, "{shot}");
}

#[test]
fn the_neurons_graph_text_is_at_least_12_px_on_a_laptop() {
    let Some((mut browser, url)) = playground("the neuron on a laptop") else {
        return;
    };
    let source = std::fs::read_to_string(in_crate("examples/neuron.calc")).unwrap();
    let source: Vec<&str> = source.lines().take_while(|l| !l.starts_with(':')).collect();
    browser.open(&url, (1366, 768), READY);
    paste(&mut browser, &source.join("\n"));
    browser.press("Enter");
    browser.wait_for("document.querySelectorAll('.gc-graph g.value').length === 10");
    // The names' font size on the screen at fit: its size in the picture
    // times the picture's scale.
    let size = browser.eval(
        "(() => { const t = document.querySelector('.gc-graph svg text.name');
            return parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a; })()",
    );
    assert!(size.as_f64().unwrap() >= 12.0, "{size} px");
}

#[test]
fn the_output_is_drawn_from_typed_pieces_with_the_terminals_colours() {
    let Some((mut browser, url)) = playground("the playground's typed output") else {
        return;
    };
    browser.open(&url, (1366, 768), READY);
    enter(&mut browser, "x = 2; y = x^2");
    enter(&mut browser, ":trace");
    enter(&mut browser, "x y");
    wait_screen(&mut browser, "use `*` to multiply");
    // Each span of the pane (each output a block) with its classes, in
    // order; no escape code shown.
    let spans = browser.eval(
        "Array.from(document.querySelectorAll('#screen > .gc-out > span')).map(s => [s.textContent, s.className])",
    );
    let spans: Vec<(String, String)> = spans
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s[0].as_str().unwrap().into(), s[1].as_str().unwrap().into()))
        .collect();
    let screen = browser.eval(SCREEN);
    assert!(!screen.as_str().unwrap().contains('\u{1b}'), "{screen}");
    let class_of = |text: &str, after: usize| {
        spans[after..]
            .iter()
            .position(|(t, _)| t == text)
            .map(|at| (after + at, spans[after + at].1.clone()))
            .unwrap_or_else(|| panic!("no span {text:?} after {after}: {spans:?}"))
    };
    // A value: `y = 4`, the name bold, the value green.
    let (at, class) = class_of("y", 0);
    assert_eq!(class, "gc-bold");
    assert_eq!(class_of("4", at), (at + 2, "gc-green".to_string()));
    // A trace line: `[1] y = x ^ 2 = 4   upstream 1`, the upstream gradient red.
    let at = at
        + spans[at..]
            .iter()
            .position(|(t, _)| t.ends_with("\n[1] "))
            .expect("the trace's step 1");
    assert_eq!(spans[at + 1], ("y".into(), "gc-bold".into()));
    assert_eq!(spans[at + 2].0, " = x ^ 2 = ");
    assert_eq!(spans[at + 3], ("4".into(), "gc-green".into()));
    assert_eq!(spans[at + 4].0, "   upstream ");
    assert_eq!(spans[at + 5], ("1".into(), "gc-red".into()));
    // The error: its first line bold red, then its place and the caret under `x y`.
    let (at, class) = class_of("error: two names side by side: `x` and `y`", at);
    assert_eq!(class, "gc-bold gc-red");
    assert!(
        spans[at + 1]
            .0
            .contains("1 │ x y\n  │ ^^^ use `*` to multiply: `x*y`"),
        "{:?}",
        spans[at + 1]
    );
    // Drawn as before: the value in the pane's blue, the gradient in its red.
    let colours = browser.eval(
        "['gc-green', 'gc-red'].map(c => getComputedStyle(document.querySelector('#screen .' + c)).color)",
    );
    assert_eq!(colours, json!(["rgb(127, 212, 255)", "rgb(255, 140, 105)"]));
}

/// The on-screen size in px of the first value box's name at fit: its font
/// size in the picture times the picture's scale.
const NAME_PX: &str = "(() => { const t = document.querySelector('.gc-graph svg text.name');
    return parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a; })()";

/// The statements of an example, up to its first command.
fn example_statements(name: &str) -> String {
    let source = std::fs::read_to_string(in_crate(&format!("examples/{name}.calc"))).unwrap();
    let lines: Vec<&str> = source.lines().take_while(|l| !l.starts_with(':')).collect();
    lines.join("\n")
}

/// The names' size at fit in the plain theme, then after T (the projector).
fn name_px_in_both_themes(browser: &mut Browser) -> (f64, f64) {
    let plain = browser.eval(NAME_PX).as_f64().unwrap();
    browser.press("t");
    browser.wait_for("document.body.classList.contains('projector')");
    let projector = browser.eval(NAME_PX).as_f64().unwrap();
    browser.press("t");
    (plain, projector)
}

#[test]
fn the_projector_theme_draws_the_graph_at_least_as_large_as_the_plain_one() {
    let Some((mut browser, url)) = playground("the projector theme's graph") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for example in ["neuron", "mlp"] {
        let page = crate::browser::html_page(dir.path(), example, &example_statements(example));
        browser.open(&page, (1920, 1080), "window.gradcalcView");
        let (plain, projector) = name_px_in_both_themes(&mut browser);
        assert!(
            projector >= plain,
            ":html {example}: {projector} px in the projector theme, {plain} px plain"
        );
    }
    browser.open(&url, (1920, 1080), READY);
    paste(&mut browser, &example_statements("neuron"));
    browser.press("Enter");
    browser.wait_for("document.querySelectorAll('.gc-graph g.value').length === 10");
    browser.press("Escape");
    let (plain, projector) = name_px_in_both_themes(&mut browser);
    assert!(
        projector >= plain,
        "the playground: {projector} px in the projector theme, {plain} px plain"
    );
}

/// Opens the playground at `size`, runs examples/neuron.calc's statements
/// and `:grad`, and waits for the view's last step.
fn neuron_graded(browser: &mut Browser, url: &str, size: (u32, u32)) {
    browser.open(url, size, READY);
    paste(browser, &example_statements("neuron"));
    browser.press("Enter");
    enter(browser, ":grad");
    browser.wait_for("document.querySelector('.gc-status').textContent === 'step 10 of 10'");
}

/// Whether the output's box (step 1's) is right of every other box's centre
/// (`right`: the graph runs left to right) and below every other's (`below`:
/// top to bottom), and the boxes' names in the picture's order.
const OUTPUT_PLACE: &str = "(() => { const view = window.gradcalcView, lit = view.drawing.lit;
    const centre = b => { const r = b.group.getBBox(); return [r.x + r.width / 2, r.y + r.height / 2]; };
    const out = centre(view.boxes[lit[0]]);
    const others = view.boxes.filter((b, k) => k !== lit[0]).map(centre);
    return {right: others.every(c => c[0] < out[0]), below: others.every(c => c[1] < out[1]),
        names: view.boxes.map(b => b.name)}; })()";

#[test]
fn the_graph_runs_top_to_bottom_in_a_tall_pane_and_left_to_right_in_a_wide_one() {
    let Some((mut browser, url)) = playground("the layout's direction") else {
        return;
    };
    // A phone: the pane is taller than wide, the output under its inputs.
    neuron_graded(&mut browser, &url, (390, 844));
    let phone = browser.eval(OUTPUT_PLACE);
    assert_eq!(
        (&phone["below"], &phone["right"]),
        (&json!(true), &json!(false)),
        "{phone}"
    );
    let phone_px = browser.eval(NAME_PX).as_f64().unwrap();
    // Drawn the other way (left to right), the names would be smaller.
    let other = browser.eval(
        "(() => { const view = window.gradcalcView, d = view.drawing, g = view.graph;
            const other = d.svg === view.shown ? d.turned : d.svg;
            const [w, h] = /width=\"([0-9.]+)\" height=\"([0-9.]+)\"/.exec(other).slice(1).map(Number);
            const name = document.querySelector('.gc-graph svg text.name');
            return Math.min(g.clientWidth / w, g.clientHeight / h) * parseFloat(getComputedStyle(name).fontSize); })()",
    );
    assert!(
        phone_px > other.as_f64().unwrap(),
        "top to bottom {phone_px} px, left to right {other} px"
    );
    // The same boxes in the same order, each step lighting the same node.
    browser.press("Escape");
    browser.press("Home");
    browser.press("ArrowRight");
    let current = shown(&mut browser).1;
    // A laptop: the pane is wider than tall, the output right of its inputs,
    // at the same step.
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 1366, "height": 768, "deviceScaleFactor": 1, "mobile": false}),
    );
    browser.wait_for(&format!("!{OUTPUT_PLACE}.below"));
    let laptop = browser.eval(OUTPUT_PLACE);
    assert_eq!(
        (&laptop["below"], &laptop["right"]),
        (&json!(false), &json!(true)),
        "{laptop}"
    );
    assert_eq!(laptop["names"], phone["names"]);
    assert_eq!(shown(&mut browser).0, json!(1));
    assert_eq!(shown(&mut browser).1, current);
    // The page of `:html` in a portrait window too.
    let dir = tempfile::tempdir().unwrap();
    let page = crate::browser::html_page(dir.path(), "neuron", &example_statements("neuron"));
    browser.open(&page, (390, 844), "window.gradcalcView");
    let page_place = browser.eval(OUTPUT_PLACE);
    assert_eq!(page_place["below"], json!(true), "{page_place}");
}

#[test]
fn a_plot_is_an_svg_picture_whose_curve_is_the_function() {
    let Some((mut browser, url)) = playground("the playground's plot") else {
        return;
    };
    browser.open(&url, (1366, 768), READY);
    enter(&mut browser, "x = 1; y = x^3 - x");
    enter(&mut browser, ":plot x -2 2");
    browser.wait_for("document.querySelector('#screen .gc-plot svg polyline')");
    let screen = browser.eval(SCREEN);
    let screen = screen.as_str().unwrap();
    assert!(
        screen.contains("y for x from -2 to 2 (x = 1 now)"),
        "{screen}"
    );
    assert!(
        !screen
            .chars()
            .any(|c| ('\u{2800}'..='\u{28ff}').contains(&c)),
        "braille in the pane: {screen}"
    );
    // The output's curve (the first panel's), as (pixel across, pixel down),
    // and the picture's width on the screen against the pane's.
    let drawn = browser.eval(
        "(() => { const svg = document.querySelector('#screen .gc-plot svg');
            const line = svg.querySelector('polyline');
            return {points: line.getAttribute('points').trim().split(/\\s+/).map(p => p.split(',').map(Number)),
                width: svg.getBoundingClientRect().width,
                pane: document.getElementById('screen').clientWidth}; })()",
    );
    assert!(
        drawn["width"].as_f64().unwrap() <= drawn["pane"].as_f64().unwrap(),
        "{drawn}"
    );
    let points: Vec<(f64, f64)> = drawn["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap()))
        .collect();
    // x from -2 to 2 across the frame's 80 to 700 px (plot.rs's margins).
    let (first, last) = (points[0], points[points.len() - 1]);
    assert_eq!((first.0, last.0), (80.0, 700.0));
    let down_at = |x: f64| {
        let px = 80.0 + (x + 2.0) / 4.0 * 620.0;
        let k = points
            .windows(2)
            .position(|w| w[0].0 <= px && px <= w[1].0)
            .unwrap();
        let (a, b) = (points[k], points[k + 1]);
        a.1 + (b.1 - a.1) * (px - a.0) / (b.0 - a.0)
    };
    // y = x³ − x: 0 at −1, 0 and 1; −0.375 at 0.5; ∓6 at ∓2. The pixel
    // scale is linear, so the heights above y = 0 are in those ratios.
    let zero = down_at(0.0);
    for x in [-1.0, 1.0] {
        assert!((down_at(x) - zero).abs() < 0.5, "y({x}) is not y(0)");
    }
    let six = zero - down_at(2.0);
    assert!(six > 40.0, "{six}");
    assert!((zero - down_at(-2.0) + six).abs() < 0.5);
    let ratio = (zero - down_at(0.5)) / six;
    assert!((ratio - (-0.375 / 6.0)).abs() < 0.005, "{ratio}");
    assert_drawn(&browser.screenshot("playground-plot-1366x768"), (1366, 768));
    // Copy gives the plot's titles, not its pictures' labels.
    browser.call_browser(
        "Browser.grantPermissions",
        json!({"origin": url.trim_end_matches('/'), "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]}),
    );
    browser.click("#copy");
    browser.wait_for("document.getElementById('copy').textContent === 'copied'");
    let copied = browser.eval("navigator.clipboard.readText()");
    assert!(
        copied.as_str().unwrap().ends_with(
            "> :plot x -2 2\nx = 1\ny = 0\ny for x from -2 to 2 (x = 1 now)\n∂y/∂x for x from -2 to 2 (x = 1 now)\n"
        ),
        "{copied}"
    );
}

#[test]
fn the_graph_pans_by_keyboard_and_the_legend_names_esc() {
    let Some((mut browser, url)) = playground("the graph by keyboard") else {
        return;
    };
    neuron_graded(&mut browser, &url, (1920, 1080));
    let legend = browser.eval("document.querySelector('.gc-legend .gc-keys').textContent");
    let legend = legend.as_str().unwrap();
    assert!(
        legend.contains("Shift+arrows")
            && legend.contains("Esc: out of full-window; in the playground, back to the input"),
        "{legend}"
    );
    let view_box =
        "document.querySelector('.gc-graph svg').getAttribute('viewBox').split(' ').map(Number)";
    browser.press("Escape");
    browser.press("Home");
    browser.press("+");
    let zoomed = browser.eval(view_box);
    let at = |b: &serde_json::Value, i: usize| b[i].as_f64().unwrap();
    let (w, h) = (at(&zoomed, 2), at(&zoomed, 3));
    // Shift+→ shows what is right of the view (a tenth of its width), ↓ what
    // is below (a tenth of its height), Shift+← comes back; none of them steps.
    browser.press_with("ArrowRight", 8);
    let right = browser.eval(view_box);
    assert!(
        (at(&right, 0) - at(&zoomed, 0) - w / 10.0).abs() < 0.02,
        "{zoomed} → {right}"
    );
    assert_eq!(at(&right, 1), at(&zoomed, 1));
    browser.press("ArrowDown");
    let down = browser.eval(view_box);
    assert!(
        (at(&down, 1) - at(&zoomed, 1) - h / 10.0).abs() < 0.02,
        "{right} → {down}"
    );
    browser.press_with("ArrowLeft", 8);
    browser.press_with("ArrowUp", 8);
    let back = browser.eval(view_box);
    assert!(
        (at(&back, 0) - at(&zoomed, 0)).abs() < 0.02
            && (at(&back, 1) - at(&zoomed, 1)).abs() < 0.02,
        "{zoomed} → {back}"
    );
    assert_eq!(shown(&mut browser).0, json!(0));
    // → alone still steps; G then Esc leaves the full window, the graph
    // keeping the focus; Esc again goes back to the input.
    browser.press("ArrowRight");
    assert_eq!(shown(&mut browser).0, json!(1));
    browser.press("g");
    assert_eq!(
        browser.eval("document.querySelector('.gc-view').classList.contains('gc-full')"),
        json!(true)
    );
    browser.press("Escape");
    assert_eq!(
        browser.eval("[document.querySelector('.gc-view').classList.contains('gc-full'), document.activeElement === window.gradcalcView.graph]"),
        json!([false, true])
    );
    browser.press("Escape");
    assert_eq!(browser.eval("document.activeElement.id"), json!("input"));
}

/// Every visible text of the page whose contrast against what is drawn
/// under it (WCAG 2's ratio) is under 4.5:1, as `[text, ratio, colour,
/// background]`; and how many texts were checked. The background is found
/// at the text's middle: the first opaque background colour (or an SVG
/// shape's fill) at or under it, translucent ones blended over it (a text
/// scrolled out of its pane, or under another element, is scrolled into
/// view first).
const LOW_CONTRAST: &str = "(() => {
    const parse = c => { const m = /rgba?\\(([^)]*)\\)/.exec(c || ''); if (!m) return null;
        const v = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
        return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
    const lum = c => { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255;
        return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
    const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
    const blend = (top, under) => top.slice(0, 3).map((v, i) => v * top[3] + under[i] * (1 - top[3])).concat([1]);
    const shapes = ['rect', 'ellipse', 'circle', 'polygon'];
    const paint = e => { const s = getComputedStyle(e);
        if (e instanceof SVGElement) return shapes.includes(e.tagName) ? parse(s.fill) : null;
        return parse(s.backgroundColor); };
    const inside = r => { const x = r.left + r.width / 2, y = r.top + r.height / 2;
        return x >= 0 && y >= 0 && x < innerWidth && y < innerHeight; };
    const background = (e, r) => {
        const hit = r => inside(r) && document.elementsFromPoint(r.left + r.width / 2, r.top + r.height / 2).includes(e);
        if (!hit(r)) { e.scrollIntoView({block: 'center', inline: 'center'}); r = e.getBoundingClientRect(); }
        const x = r.left + r.width / 2, y = r.top + r.height / 2;
        let layers = [];
        if (inside(r)) {
            const stack = document.elementsFromPoint(x, y);
            const at = stack.indexOf(e);
            layers = (at >= 0 ? stack.slice(at) : stack.filter(u => !e.contains(u) || u === e));
            if (e instanceof SVGElement) layers = layers.filter(u => u !== e);
        } else { for (let u = e; u; u = u.parentElement) layers.push(u); }
        const found = [];
        for (const u of layers) { const c = paint(u); if (c && c[3] > 0) { found.push(c); if (c[3] >= 1) break; } }
        return found.reverse().reduce((under, top) => blend(top, under), [255, 255, 255, 1]);
    };
    const low = []; let checked = 0;
    for (const e of document.querySelectorAll('body *')) {
        if (!Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim())) continue;
        if (e.closest('script, style, noscript, title, .gc-reader, .gc-heading')) continue;
        const r = e.getBoundingClientRect(), s = getComputedStyle(e);
        if (!r.width || !r.height || s.visibility !== 'visible' || e.getClientRects().length === 0) continue;
        const fg = parse(e instanceof SVGElement ? s.fill : s.color);
        if (!fg) continue;
        const bg = background(e, r);
        const k = ratio(blend(fg, bg), bg);
        checked++;
        if (k < 4.5) low.push([e.textContent.trim().slice(0, 40), Math.round(k * 100) / 100, fg.join(','), bg.join(',')]);
    }
    return {checked, low}; })()";

/// The texts under 4.5:1 in both themes (T switches), each with the theme.
fn low_contrast_in_both_themes(browser: &mut Browser, name: &str) -> Vec<String> {
    let mut low = Vec::new();
    for theme in ["plain", "projector"] {
        let found = browser.eval(LOW_CONTRAST);
        assert!(found["checked"].as_u64().unwrap() > 20, "{name}: {found}");
        for text in found["low"].as_array().unwrap() {
            low.push(format!("{name}, {theme}: {text}"));
        }
        browser.press("t");
    }
    low
}

#[test]
fn every_visible_text_has_a_contrast_of_at_least_4_5() {
    let Some((mut browser, url)) = playground("the whole page's contrast") else {
        return;
    };
    let mut low = Vec::new();
    // The playground: coloured output, an error, a plot, and the graph at
    // step 2 of colah's fan-out (current, partial, final and pending boxes),
    // the legend shown.
    browser.open(&url, (1920, 1080), READY);
    enter(&mut browser, crate::web::COLAH);
    enter(&mut browser, ":trace");
    enter(&mut browser, "x y");
    enter(&mut browser, ":plot a 0 4");
    browser.wait_for("document.querySelector('#screen .gc-plot svg')");
    browser.press("Escape");
    browser.press("Home");
    browser.press("ArrowRight");
    browser.press("ArrowRight");
    browser.wait_for(
        "document.querySelector('g.value.partial') && document.querySelector('g.value.current')",
    );
    low.extend(low_contrast_in_both_themes(&mut browser, "playground"));
    // The page of `:html` at the same step.
    let dir = tempfile::tempdir().unwrap();
    let page = crate::browser::html_page(dir.path(), "colah", crate::web::COLAH);
    browser.open(&page, (1920, 1080), "window.gradcalcView");
    browser.press("ArrowRight");
    browser.press("ArrowRight");
    low.extend(low_contrast_in_both_themes(&mut browser, ":html"));
    assert!(low.is_empty(), "under 4.5:1:\n{}", low.join("\n"));
}

#[test]
fn a_matrix_layer_and_its_gradient_in_the_playground() {
    let Some((mut browser, url)) = playground("vectors and matrices in the playground") else {
        return;
    };
    browser.open(&url, (1366, 768), READY);
    // h = W @ x = [1 − 2 + 0, 3 − 4 + 0.5] = [−1, −0.5], printed with its shape.
    enter(
        &mut browser,
        "x = [1, -1, 0.5]; W = [[1, 2, 0], [3, 4, 1]]; h = W @ x",
    );
    wait_screen(&mut browser, "h = [-1, -0.5]  (2)");
    // ∂L/∂W = (1 − tanh(h)²) · xᵀ: rows 1 − tanh(1)² = 0.4199743416 and
    // 1 − tanh(0.5)² = 0.786447733 (numpy), times [1, −1, 0.5].
    enter(&mut browser, "L = sum(tanh(h)); :grad W");
    wait_screen(&mut browser, "∂L/∂W = 2×3");
    let screen = browser.eval(SCREEN).as_str().unwrap().to_string();
    // The rows under the head, indented by its width plus 2 (its colour
    // codes take no columns); a row wider than the pane wraps.
    for part in [
        "W = 2×3\n   [[1, 2, 0],\n    [3, 4, 1]]\n",
        "L = -1.223711313",
        "∂L/∂W = 2×3\n       [[0.4199743416, -0.4199743416,",
        "0.2099871708],",
        "[ 0.786447733,  -0.786447733,",
        "0.3932238665]]",
    ] {
        assert!(screen.contains(part), "{part} in {screen}");
    }
    // The view draws the tensor step model: a box per tensor node with its
    // name and shape, the finished pass after `:grad` (here after a `;`, as
    // `:serve` decides by the command table), and step K's line is
    // `:trace`'s step K as the binary prints it.
    browser.wait_for("document.querySelector('.gc-status').textContent === 'step 3 of 3'");
    let names = browser.eval(
        "Array.from(document.querySelectorAll('.gc-graph g.value text.name')).map(t => t.textContent).sort()",
    );
    for name in ["W 2×3", "x (3)", "h (2)", "L"] {
        assert!(
            names.as_array().unwrap().iter().any(|n| n == name),
            "{name} in {names}"
        );
    }
    let trace = crate::util::stdout_of(
        &crate::util::gradcalc()
            .args([
                "-e",
                "x = [1, -1, 0.5]; W = [[1, 2, 0], [3, 4, 1]]; h = W @ x\nL = sum(tanh(h))\n:trace",
            ])
            .output()
            .unwrap(),
    );
    let steps = crate::tensor_steps::trace_steps(&trace);
    assert_eq!(steps.len(), 3, "{trace}");
    browser.press("Escape");
    browser.press("Home");
    for (k, step) in steps.iter().enumerate() {
        browser.press("ArrowRight");
        let (shown, _, line) = crate::browser::shown(&mut browser);
        assert_eq!(shown, serde_json::json!(k + 1));
        assert_eq!(
            line.as_str().unwrap().trim_end(),
            step.trim_end(),
            "step {}",
            k + 1
        );
    }
}

/// The charts of `:descend` and `:repeat` are SVG pictures after their
/// tables, as `:plot`'s are, not braille text. L = w² with lr 0.25 halves w
/// each step: L = 9, 2.25, 0.5625, 0.140625, 0.03515625, so the drop from
/// step 0 to 1 is 4 times the drop from step 1 to 2, in pixels too.
#[test]
fn descend_and_repeat_draw_their_charts_as_svg() {
    let Some((mut browser, url)) = playground("the playground's descent chart") else {
        return;
    };
    browser.open(&url, (1366, 768), READY);
    enter(&mut browser, "w = 3; L = w^2");
    enter(&mut browser, ":descend L lr=0.25 steps=4 w");
    browser.wait_for("document.querySelector('#screen .gc-plot svg polyline')");
    let screen = browser.eval(SCREEN);
    let screen = screen.as_str().unwrap();
    for part in [
        "     4  0.03515625  0.1875\n",
        "L from step 0 to step 4 (4 steps)",
    ] {
        assert!(screen.contains(part), "{part} in {screen}");
    }
    assert!(
        !screen
            .chars()
            .any(|c| ('\u{2800}'..='\u{28ff}').contains(&c)),
        "braille in the pane: {screen}"
    );
    let points = browser.eval(
        "Array.from(document.querySelector('#screen .gc-plot svg polyline').getAttribute('points').trim().split(/\\s+/)).map(p => p.split(',').map(Number))",
    );
    let points: Vec<(f64, f64)> = points
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap()))
        .collect();
    assert_eq!(points.len(), 5, "{points:?}");
    assert_eq!((points[0].0, points[4].0), (80.0, 700.0));
    let ratio = (points[1].1 - points[0].1) / (points[2].1 - points[1].1);
    assert!((ratio - 4.0).abs() < 0.01, "{ratio} from {points:?}");
    // :repeat draws its output the same way: a second picture.
    enter(&mut browser, ":repeat 2 w := w - 0.25*grad(L, w)");
    browser.wait_for("document.querySelectorAll('#screen .gc-plot svg polyline').length === 2");
    let screen = browser.eval(SCREEN);
    assert!(
        screen
            .as_str()
            .unwrap()
            .contains("L from step 0 to step 2 (2 steps)"),
        "{screen}"
    );
}
