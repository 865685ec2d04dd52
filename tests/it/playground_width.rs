//! The playground lays wide vectors and matrices out at its output pane's
//! width, as the terminal does at its own (numpy's `linewidth`): the text
//! the pane shows is the binary's with `--width N`, N the columns the page
//! gave the worker (read from the messages it posts), not the 80 columns
//! of a pipe.

use serde_json::json;

use crate::playground::{READY, SCREEN, enter, playground, wait_screen};
use crate::util::{gradcalc, stdout_of};

/// A vector of 40 elements of 5 to 7 columns each: 270 columns on one line.
fn wide() -> String {
    let items: Vec<String> = (0..40)
        .map(|k| format!("{}", (k as f64 - 19.5) * 0.125))
        .collect();
    format!("v = [{}]", items.join(", "))
}

/// What the binary prints for `statement` at `--width N`.
fn at_width(statement: &str, columns: u64) -> String {
    let output = gradcalc()
        .args(["--width", &columns.to_string(), "-e", statement])
        .output()
        .unwrap();
    stdout_of(&output)
}

#[test]
fn wide_values_wrap_at_the_panes_width() {
    let Some((mut browser, url)) = playground("wide values in the playground") else {
        return;
    };
    // The widths the page sends with each input, recorded as it sends them.
    browser.call(
        "Page.addScriptToEvaluateOnNewDocument",
        json!({"source": "(() => { const post = Worker.prototype.postMessage;
            window.sentWidths = [];
            Worker.prototype.postMessage = function (message) {
                if (message && message.run !== undefined) window.sentWidths.push(message.width);
                return post.apply(this, arguments);
            }; })()"}),
    );
    let statement = wide();
    let mut seen = Vec::new();
    for (width, height) in [(3000, 1200), (1366, 768)] {
        browser.open(&url, (width, height), READY);
        enter(&mut browser, &statement);
        wait_screen(&mut browser, "(40)");
        let columns = browser
            .eval("window.sentWidths[window.sentWidths.length - 1]")
            .as_u64()
            .unwrap();
        let expected = at_width(&statement, columns);
        let screen = browser.eval(SCREEN).as_str().unwrap().to_string();
        assert!(
            screen.contains(expected.trim_end()),
            "at {columns} columns:\n{expected}\nin the pane:\n{screen}"
        );
        // Each line fits the pane, and the layout is not the pipe's.
        assert!(
            expected
                .lines()
                .all(|line| line.chars().count() <= columns as usize),
            "{expected}"
        );
        assert_ne!(expected, at_width(&statement, 80), "{columns} columns");
        seen.push(columns);
    }
    // The output pane is 35 % of the window (at most 60 of its ems): wider
    // than 80 columns on a 3000-px window, narrower on a laptop's 1366.
    assert!(seen[0] > 80 && seen[1] < 80, "{seen:?}");
}
