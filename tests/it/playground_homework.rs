//! Assignments in the playground (web/assignment.js, headless Chromium as in
//! `playground.rs`): examples/hw1_key.calc sealed by the binary, opened by an
//! `#assignment=` link and as a picked file — its problems shown, nothing
//! run, no answer shown — answered right and wrong, checked by the sealed
//! `:expect`s, kept per assignment across a reload, and exported as a
//! transcript that `gradcalc --check-transcript` reruns to the same numbers.
//! Each test passes where Chromium or web/dist/ is missing, saying so.

use serde_json::json;

use crate::browser::Browser;
use crate::homework::sealed_hw1;
use crate::playground::{
    READY, SCREEN, downloaded, enter, playground, playground_downloading, wait_screen,
};
use crate::util::{assert_contains, json_lines, output_of, stdout_of};

/// Clicks the button of the problem titled `title` whose label starts with
/// `label`.
pub(crate) fn click_in_problem(browser: &mut Browser, title: &str, label: &str) {
    let find = format!(
        "Array.from(document.querySelectorAll('.gc-problem')).filter(p => (p.querySelector('h3') || {{}}).textContent === {title:?})
            .map(p => Array.from(p.querySelectorAll('button')).find(b => b.textContent.startsWith({label:?})))[0]"
    );
    browser.wait_for(&format!("!!({find})"));
    browser.eval(&format!("({find}).click(), true"));
}

/// Waits until no input runs.
fn idle(browser: &mut Browser) {
    browser.wait_for("document.body.getAttribute('data-busy') === 'no'");
}

/// The panel's text.
const PANEL: &str = "document.querySelector('.gc-assignment').textContent";

/// Runs the given code of the problem `title` and waits for `given` (the
/// last line it prints), enters `answer` and waits for `answered`, then
/// presses the problem's "Check" and waits for `checked`.
fn solve(browser: &mut Browser, title: &str, [given, answer, answered]: [&str; 3], checked: &str) {
    click_in_problem(browser, title, "Run the given code");
    wait_screen(browser, given);
    enter(browser, answer);
    wait_screen(browser, answered);
    click_in_problem(browser, title, "Check");
    wait_screen(browser, checked);
}

/// Answers the three problems of hw1 as in `tests/it/homework.rs`: the
/// first right, the second wrong, the third first of the wrong shape, then
/// right; each checked with its "Check" button.
fn answer_right_and_wrong(browser: &mut Browser) {
    // Problem 1 answered right: o = tanh(0.8813735870) = 1/√2, ∂o/∂w1 =
    // x1·(1 − o²) = 1, ∂o/∂b = 1 − o² = 0.5, all three correct.
    solve(
        browser,
        "Problem 1: a neuron",
        [
            "\nb = 6.881373587\n",
            "o = tanh(x1*w1 + x2*w2 + b)",
            "\no = 0.7071067812\n",
        ],
        "✓ ∂o/∂b: correct",
    );
    let screen = browser.eval(SCREEN).as_str().unwrap().to_string();
    assert_contains(&screen, "✓ o: correct");
    assert_contains(&screen, "✓ ∂o/∂w1: correct");
    // Problem 2 answered wrong: y = (a + b)·b gives ∂y/∂a = b = 1 (not 2)
    // and ∂y/∂b = a + 2b = 4 (not 5); a sealed answer says only "wrong".
    solve(
        browser,
        "Problem 2: a fan-out",
        ["\nb = 1\n", "y = (a + b)*b", "\ny = 3\n"],
        "✗ ∂y/∂b: wrong",
    );
    assert_contains(browser.eval(SCREEN).as_str().unwrap(), "✗ ∂y/∂a: wrong");
    // Problem 3 first of the wrong shape (a 2×3 W), then right.
    enter(
        browser,
        "W = [[1, 2, 0], [3, 4, 0]]; x = [1, -1, 0]; L = sum(tanh(W @ x))",
    );
    wait_screen(browser, "\nL = -1.523188312\n");
    click_in_problem(browser, "Problem 3: a matrix layer", "Check");
    wait_screen(browser, "✗ ∂L/∂W: wrong shape (2×3, expected 2×2)");
    click_in_problem(browser, "Problem 3: a matrix layer", "Run the given code");
    enter(browser, "L = sum(tanh(W @ x))");
    // W @ x = [−1, −1]: L = 2·tanh(−1) = −1.523188312 (as the 2×3 W gave:
    // its third column meets a 0). Inputs run in turn: the check after it.
    click_in_problem(browser, "Problem 3: a matrix layer", "Check");
    wait_screen(browser, "✓ ∂L/∂W: correct");
    idle(browser);
}

/// Downloads the assignment's transcripts and checks them: the checks
/// counted (3 + 0 + 1 right, 2 wrong, 1 of the wrong shape, as answered by
/// `answer_right_and_wrong`), and the JSON Lines rerun by the binary to the
/// same numbers.
fn export_and_rerun(browser: &mut Browser, downloads: &std::path::Path) {
    // The transcript: its checks counted (3 + 0 + 1 right, 2 wrong, 1 of the
    // wrong shape), and rerun by the binary to the same numbers.
    browser.eval("Array.from(document.querySelectorAll('.gc-assignment-head button')).find(b => b.textContent === 'Transcript .jsonl').click(), true");
    let jsonl = String::from_utf8(downloaded(
        browser,
        downloads,
        "homework-1-backprop-by-hand.transcript.jsonl",
    ))
    .unwrap();
    let lines = json_lines(&jsonl);
    assert_eq!(lines[0]["kind"], "transcript");
    assert_eq!(
        lines[0]["origin"],
        "Homework 1: backprop by hand (playground)"
    );
    let checks = lines.last().unwrap();
    assert_eq!(
        (
            &checks["kind"],
            &checks["correct"],
            &checks["wrong"],
            &checks["wrong_shape"]
        ),
        (&json!("checks"), &json!(4), &json!(2), &json!(1)),
        "{jsonl}"
    );
    let path = downloads.join("homework-1-backprop-by-hand.transcript.jsonl");
    let rerun = output_of(&["--check-transcript", path.to_str().unwrap()]);
    assert_eq!(rerun.status.code(), Some(0), "{}", stdout_of(&rerun));
    assert_contains(&stdout_of(&rerun), "reproduces: ");
    assert_contains(
        &stdout_of(&rerun),
        "checks: 4 correct, 2 wrong, 1 of the wrong shape",
    );
    browser.eval("Array.from(document.querySelectorAll('.gc-assignment-head button')).find(b => b.textContent === 'Transcript .md').click(), true");
    let md = String::from_utf8(downloaded(
        browser,
        downloads,
        "homework-1-backprop-by-hand.transcript.md",
    ))
    .unwrap();
    assert_contains(
        &md,
        "Checks: 4 correct, 2 wrong, 1 of the wrong shape, 0 not answered.",
    );
    assert_contains(&md, "> o = tanh(x1*w1 + x2*w2 + b)\no = 0.7071067812\n");
}

/// The playground (for `test`) opened at an `#assignment=` link of
/// `assignment`, its downloads going to the folder given with it; `None`
/// where Chromium or web/dist/ is missing.
pub(crate) fn open_assignment_link(
    test: &str,
    assignment: &str,
) -> Option<(Browser, tempfile::TempDir)> {
    let (mut browser, url, downloads) = playground_downloading(test)?;
    browser.open(&url, (1366, 768), READY);
    browser.eval(&format!(
        "location.hash = '#assignment=' + encodeURIComponent({assignment:?}), true"
    ));
    Some((browser, downloads))
}

#[test]
fn an_assignment_link_is_answered_checked_kept_and_exported() {
    let Some((mut browser, downloads)) =
        open_assignment_link("an assignment by link", &sealed_hw1())
    else {
        return;
    };
    browser.wait_for("document.querySelector('.gc-assignment h2') && document.querySelector('.gc-assignment h2').textContent === 'Homework 1: backprop by hand'");
    wait_screen(&mut browser, "(opened the assignment Homework 1");
    // The problems with their text and starting code; what is checked.
    let titles = browser
        .eval("Array.from(document.querySelectorAll('.gc-problem h3')).map(h => h.textContent)");
    assert_eq!(
        titles,
        json!([
            "Problem 1: a neuron",
            "Problem 2: a fan-out",
            "Problem 3: a matrix layer"
        ])
    );
    let panel = browser.eval(PANEL);
    let panel = panel.as_str().unwrap();
    assert_contains(panel, "The tanh neuron of micrograd's lecture");
    assert_contains(
        panel,
        "x1 = 2; x2 = 0; w1 = -3; w2 = 1; b = 6.8813735870195432",
    );
    assert_contains(panel, "Checked: o, ∂o/∂w1, ∂o/∂b");
    assert_contains(
        browser.eval(SCREEN).as_str().unwrap(),
        "Homework 1: backprop by hand: 3 problems above, nothing run",
    );
    // Nothing ran and no answer is shown: no value of o (1/√2), no solution
    // in the starting code.
    let screen = browser.eval(SCREEN);
    let screen = screen.as_str().unwrap();
    for shown in ["0.7071", "x1 = 2\n"] {
        assert!(
            !screen.contains(shown) && !panel.contains(shown),
            "{shown}: {screen}"
        );
    }
    let code = browser.eval("Array.from(document.querySelectorAll('.gc-problem pre')).map(p => p.textContent).join('\\n')");
    let code = code.as_str().unwrap();
    assert!(!code.contains("tanh(x1*w1"), "{code}");
    assert_contains(code, "a = 2; b = 1\n# (your work here)");
    answer_right_and_wrong(&mut browser);
    // The work is kept for this assignment: a reload shows the problems again
    // and o is still 1/√2.
    browser.eval("document.body.setAttribute('data-ready', 'reloading'), true");
    browser.call("Page.reload", json!({}));
    browser.wait_for(READY);
    browser.wait_for("!!document.querySelector('.gc-problem h3')");
    wait_screen(&mut browser, "your last session is back");
    enter(&mut browser, "o");
    wait_screen(&mut browser, "\n0.7071067812\n");
    idle(&mut browser);
    export_and_rerun(&mut browser, downloads.path());
    // "New" leaves the assignment: its problems are no longer shown.
    browser.click("#new");
    browser.wait_for("document.querySelector('.gc-assignment').hidden");
}

#[test]
fn a_picked_assignment_file_opens_as_an_assignment_and_a_plain_script_runs() {
    let Some((mut browser, url)) = playground("an assignment from a file") else {
        return;
    };
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("hw1.calc");
    std::fs::write(&file, sealed_hw1()).unwrap();
    let plain = folder.path().join("plain.calc");
    std::fs::write(
        &plain,
        "# a script, no checks\n## not a problem\np = 5\np * 2\n",
    )
    .unwrap();
    browser.open(&url, (1366, 768), READY);
    browser.call(
        "Page.setInterceptFileChooserDialog",
        json!({"enabled": true}),
    );
    for path in [&file, &plain] {
        browser.click("#load");
        let chooser = browser.wait_event("Page.fileChooserOpened");
        browser.call(
            "DOM.setFileInputFiles",
            json!({"files": [path.to_str().unwrap()], "backendNodeId": chooser["backendNodeId"]}),
        );
        if path == &file {
            wait_screen(&mut browser, "(opened the assignment Homework 1");
            assert_eq!(
                browser.eval("document.querySelectorAll('.gc-problem h3').length"),
                json!(3)
            );
            // Its statements did not run: x1 is unknown.
            enter(&mut browser, "x1");
            wait_screen(&mut browser, "unknown name `x1`");
            idle(&mut browser);
        }
    }
    // A script without checks runs as before (p = 5, then 10).
    wait_screen(&mut browser, "p = 5\n10\n");
}
