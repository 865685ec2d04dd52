//! Issue 12, "Ready for the classroom": node labels that can be typed back,
//! `:precision`, handouts (`:trace md|tex`), trace typography, user functions in
//! `:help` and `:vars`, and `:plot` of an unrelated variable — through the binary.

use expect_test::expect;

use crate::util::{
    assert_contains, check, close, gradcalc, json_events, json_number, member, output_in,
    stderr_of, stdout_of, transcript,
};

/// `x = 2, w = -3`: `p = x*w` is node `_2` (x is `_0`, w is `_1`), and
/// `o = p*x + x` has ∂o/∂p = x = 2 by hand.
const LABELLED: &str = "x = 2; w = -3; o = x*w*x + x";

/// Standard output of `gradcalc -e A -e B …`, which must succeed.
fn run(lines: &[&str]) -> String {
    let mut command = gradcalc();
    for line in lines {
        command.args(["-e", line]);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    stdout_of(&output)
}

#[test]
fn unnamed_nodes_are_labelled_and_the_label_types_back() {
    // :topo lists _2 as x * w, value -6 (never `#2`); ∂o/∂p = x = 2 (o = p*x
    // + x) by one path; _2 + 1 = -6 + 1 = -5.
    let text = transcript(&[
        "-e",
        LABELLED,
        "-e",
        ":topo",
        "-e",
        ":grad _2",
        "-e",
        ":paths _2",
        "-e",
        "_2 + 1",
        "-e",
        ":trace",
    ]);
    expect![[r#"
        x = 2
        w = -3
        o = -10
        reverse topological order from o: 5 nodes, output first
          #  node  name  computes  value
          1  _4    o     _3 + x    -10
          2  _3          _2 * x    -12
          3  _2          x * w     -6
          4  _1    w     leaf      -3
          5  _0    x     leaf      2
        ∂o/∂_2 = 2
        paths from o to _2: 1 (chain rule: ∂o/∂_2 is the sum over paths of the product of local derivatives)
           1. o → _3 → _2   1 × 2 = 2
          sum = 2 = ∂o/∂_2   (reverse mode visited each of 5 nodes once)
        -5
        backward pass from _2 + 1: 4 nodes in reverse topological order (1 constant not shown); upstream = ∂(_2 + 1)/∂node, seeded with 1
        [1] _6 = _2 + 1 = -5   upstream 1
              → _2: local ∂(x*w + 1)/∂(x*w) = 1;  1 × 1 = 1;  grad 0 → 1
        [2] _2 = x * w = -6   upstream 1
              → x: local ∂(x*w)/∂x = w = -3;  1 × (-3) = -3;  grad 0 → -3
              → w: local ∂(x*w)/∂w = x = 2;  1 × 2 = 2;  grad 0 → 2
        [3] w leaf = -3   ∂(_2 + 1)/∂w = 2
        [4] x leaf = 2   ∂(_2 + 1)/∂x = -3
    "#]].assert_eq(&text);
}

#[test]
fn a_label_is_the_same_in_json_tables_and_dot() {
    let (events, status) = json_events(&["-e", LABELLED, "-e", ":topo", "-e", ":trace md"]);
    assert_eq!(status, Some(0));
    let topo = events.iter().find(|e| e["kind"] == "topo").unwrap();
    let p = member(&topo["nodes"], "id", 2);
    assert_eq!(p["label"], "_2");
    assert!(close(json_number(&p["value"]).unwrap(), -6.0, 0.0));
    let named = member(&topo["nodes"], "id", 0);
    assert_eq!(named["label"], "x");
    let table = events.iter().find(|e| e["kind"] == "table").unwrap();
    assert!(
        table["text"]
            .as_str()
            .unwrap()
            .contains("| \\_2 = x \\* w = -6 |"),
        "{table}"
    );
    let dot = run(&[LABELLED, ":dot"]);
    assert_contains(&dot, "n2 [label=\"{ _2 | value -6 |");
}

#[test]
fn labels_are_reserved_and_checked() {
    check(
        "_3 = 1",
        expect![[r#"
        --- stderr
        error: cannot assign to `_3`: names of the form `_N` are node labels
          ┌─ -e:1:1
          │
        1 │ _3 = 1
          │ ^^ choose another name, e.g. `n3` for `_3`

        --- exit status 1
    "#]],
    );
    expect![[r#"
        x = 1
        --- stderr
        error: no node `_9`: the graph has 1 node (`_0` to `_0`)
          ┌─ -e #2:1:1
          │
        1 │ _9 + 1
          │ ^^ `:topo` lists the nodes of the output with their labels

        --- exit status 1
    "#]]
    .assert_eq(&transcript(&["-e", "x = 1", "-e", "_9 + 1"]));
    // `_` alone is still the last result, and `_x` an ordinary name.
    assert!(run(&["_x = 4", "_x + _"]).ends_with("8\n"));
}

#[test]
fn precision_in_a_script_holds_for_the_rest_and_json_keeps_full_digits() {
    // 1/3 by hand: 0.3333333333 (10 digits), 0.33 (2), 0.3333333333333333 (full).
    let text = run(&["a = 1/3", ":precision 2", "a; a*2", ":precision full", "a"]);
    assert_eq!(
        text,
        "a = 0.3333333333\nnumbers show 2 significant digits\n0.33\n0.67\nnumbers show full precision\n0.3333333333333333\n"
    );
    let (events, status) = json_events(&["-e", ":precision 2; 1/3"]);
    assert_eq!(status, Some(0));
    assert_eq!(events[0]["kind"], "precision");
    assert_eq!(events[0]["digits"], 2);
    assert_eq!(json_number(&events[1]["value"]), Some(1.0 / 3.0));
    check(
        ":precision 0",
        expect![[r#"
        --- stderr
        error: `:precision` takes a number of digits from 1 to 17, or `full`
          ┌─ -e:1:2
          │
        1 │ :precision 0
          │  ^^^^^^^^^^^ e.g. `:precision 4`, `:precision full`

        --- exit status 1
    "#]],
    );
}

/// A trace with long names, subscripts, a label, tiny numbers, a call with
/// three arguments and ops that pass nothing: the widest cells a handout has.
const HANDOUT: &str = "x_1 = 2; w_21 = -3; x2 = 0; w2 = 1; b = 6.8813735870195432; \
    first_product = x_1*w_21; n = first_product + x2*w2 + b; o = tanh(n); \
    y = relu(-o)*o^3 + 1/sqrt(o^2+1) + max(x_1, w2, 0.25)*floor(b) + 1e-30*o";

#[test]
fn the_latex_handout_has_math_names_and_booktabs_rules() {
    let text = run(&[HANDOUT, ":trace tex"]);
    assert!(
        text.contains("\\toprule") && text.contains("\\midrule") && text.contains("\\bottomrule")
    );
    assert!(!text.contains("\\hline"), "{text}");
    // x_1 as x₁ in math mode, not the text `x\_1`.
    assert_contains(&text, "$x_{1}$");
    assert!(!text.contains("x\\_1"), "{text}");
    // The leaf rows give ∂y/∂x_1 as a formula, breakable between ∂y/ and ∂x_1.
    assert_contains(&text, "$\\partial y/\\allowbreak \\partial x_{1}=");
}

/// The table of [`HANDOUT`] compiled by `pdflatex` on A4 and Letter paper, when
/// one is installed (skipped otherwise): it must compile and the log must have
/// no `Overfull \hbox` (a line wider than the page's text).
#[test]
fn the_latex_handout_compiles_and_fits_a4_and_letter() {
    if std::process::Command::new("pdflatex")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("pdflatex is not installed: the LaTeX handout is not compiled");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let output = output_in(dir.path(), &["-e", HANDOUT, "-e", ":trace tex table.tex"]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    for paper in ["a4paper", "letterpaper"] {
        let document = format!(
            "\\documentclass[{paper}]{{article}}\n\\usepackage{{booktabs,xltabular}}\n\
             \\begin{{document}}\n\\input{{table.tex}}\n\\end{{document}}\n"
        );
        std::fs::write(dir.path().join(format!("{paper}.tex")), document).unwrap();
        // Twice: longtable settles its column widths on the second run.
        for _ in 0..2 {
            let run = std::process::Command::new("pdflatex")
                .current_dir(dir.path())
                .args([
                    "-interaction=nonstopmode",
                    "-halt-on-error",
                    &format!("{paper}.tex"),
                ])
                .output()
                .unwrap();
            assert!(
                run.status.success(),
                "pdflatex failed on {paper}: {}",
                stdout_of_process(&run)
            );
        }
        let log = std::fs::read_to_string(dir.path().join(format!("{paper}.log"))).unwrap();
        assert!(!log.contains("Overfull \\hbox"), "{paper}: {log}");
        assert!(
            !log.contains("Undefined control sequence"),
            "{paper}: {log}"
        );
    }
}

fn stdout_of_process(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_markdown_handout_shows_each_number_once() {
    // x = 2, y = 3, z = x*y: ∂z/∂x = y = 3, ∂z/∂y = x = 2 (by hand).
    let text = run(&["x = 2; y = 3; z = x*y", ":trace md"]);
    assert_eq!(
        text.lines().skip(3).collect::<Vec<_>>(),
        [
            "| Step | Node | Upstream | Local derivative | Contribution | Gradient |",
            "|---|---|---|---|---|---|",
            "| 1 | z = x \\* y = 6 | 1 | ∂(x\\*y)/∂x = y = 3 | 3 | x: 0 → 3 |",
            "|  |  |  | ∂(x\\*y)/∂y = x = 2 | 2 | y: 0 → 2 |",
            "| 2 | y = 3 (leaf) |  |  |  | ∂z/∂y = 2 |",
            "| 3 | x = 2 (leaf) |  |  |  | ∂z/∂x = 3 |",
        ]
    );
}

#[test]
fn negative_factors_are_bracketed_in_products() {
    // y = x*w at x = 2, w = -3: ∂y/∂x = w = -3, so the product is 1 × (-3).
    // Two paths to x: through x*w (∂y/∂(x*w) = x = 2, then w = -3: 2 × (-3)
    // = -6) and direct (x*w = -6).
    expect![[r#"
        x = 2
        w = -3
        y = -12
        backward pass from y: 4 nodes in reverse topological order; upstream = ∂y/∂node, seeded with 1
        [1] y = _2 * x = -12   upstream 1
              → _2: local ∂(x*w*x)/∂(x*w) = x = 2;  1 × 2 = 2;  grad 0 → 2
              → x: local ∂(x*w*x)/∂x = x*w = -6;  1 × (-6) = -6;  grad 0 → -6   (1st of 2 uses)
        [2] _2 = x * w = -6   upstream 2
              → x: local ∂(x*w)/∂x = w = -3;  2 × (-3) = -6;  grad -6 → -12   (2nd of 2 uses: accumulated)
              → w: local ∂(x*w)/∂w = x = 2;  2 × 2 = 4;  grad 0 → 4
        [3] w leaf = -3   ∂y/∂w = 4
        [4] x leaf = 2   ∂y/∂x = -12
        paths from y to x: 2 (chain rule: ∂y/∂x is the sum over paths of the product of local derivatives)
           1. y → _2 → x   2 × (-3) = -6
           2. y → x   -6 = -6
          sum = -12 = ∂y/∂x   (reverse mode visited each of 4 nodes once)
    "#]].assert_eq(&transcript(&[
        "-e",
        "x = 2; w = -3; y = x*w*x",
        "-e",
        ":trace",
        "-e",
        ":paths x",
    ]));
}

#[test]
fn user_functions_show_their_signature_definition_and_place_in_vars() {
    let text = run(&[
        "f(x, y) = x*y + x",
        "a = 2",
        "g(t) = t  +   1",
        ":help f",
        ":vars",
    ]);
    // Defining prints the signature; `:help f` the definition as typed;
    // `:vars` the variables first, then each function in definition order.
    expect_test::expect![[r#"
        defined f(x, y)
        a = 2
        defined g(t)
        f(x, y) = x*y + x
          a function you defined
          a = 2  leaf
          f(x, y) = x*y + x  function
          g(t) = t + 1  function
    "#]]
    .assert_eq(&text);
    // Calling it still works as the definition says: f(3, 4) = 3*4 + 3 = 15.
    assert_eq!(
        run(&["f(x, y) = x*y + x", "f(3, 4)"]),
        "defined f(x, y)\n15\n"
    );

    let (events, status) = json_events(&["-e", "f(x, y) = x*y + x", "-e", ":vars"]);
    assert_eq!(status, Some(0));
    assert_eq!(events[0]["kind"], "defined");
    assert_eq!(events[0]["params"], serde_json::json!(["x", "y"]));
    assert_eq!(
        events[1]["functions"],
        serde_json::json!([{"name": "f", "params": ["x", "y"], "body": "x*y + x"}])
    );
}

#[test]
fn plotting_a_variable_the_output_does_not_depend_on_is_refused() {
    // (setup, its echo, the plot, the hint under the caret at w).
    let cases = [
        // z = x^2 does not read w: its plot against w would be a flat line.
        (
            "x = 1; w = 2; z = x^2",
            "x = 1\nw = 2\nz = 1\n",
            ":plot w",
            "plot a variable the output is built from (`:vars` lists them)",
        ),
        // z = x*w, then w rebound: z was built from the earlier w, and says so.
        (
            "x = 1; w = 2; z = x*w; w = 3",
            "x = 1\nw = 2\nz = 2\nw = 3\n",
            ":plot w -1 1",
            "z was built from an earlier w: recompute z to use the new one",
        ),
    ];
    for (setup, echo, plot, hint) in cases {
        let refusal = format!(
            "{echo}--- stderr\n\
             error: z does not depend on w: its plot against w would be flat\n  \
             ┌─ -e #2:1:7\n  │\n1 │ {plot}\n  │       ^ {hint}\n\n--- exit status 1\n"
        );
        assert_eq!(transcript(&["-e", setup, "-e", plot]), refusal);
    }

    // A variable it does read still plots.
    assert!(run(&["x = 1; w = 2; z = x*w", ":plot w -1 1"]).contains("z for w from -1 to 1"));
}

/// The y tick labels of the braille charts in a `:plot`'s text, one list per
/// chart, each label with its row in the chart (0 at the top).
fn terminal_ticks(text: &str) -> Vec<Vec<(usize, String)>> {
    let mut charts = Vec::new();
    let mut row = 0;
    for line in text.lines() {
        if line.contains(" for x from ") {
            charts.push(Vec::new());
            row = 0;
        } else if line.starts_with(|c: char| ('\u{2800}'..='\u{28ff}').contains(&c)) {
            if let (Some(chart), Some((_, label))) = (charts.last_mut(), line.rsplit_once(' '))
                && !label.starts_with(|c: char| ('\u{2800}'..='\u{28ff}').contains(&c))
            {
                chart.push((row, label.to_string()));
            }
            row += 1;
        }
    }
    charts
}

#[test]
fn plot_y_ticks_are_round_in_the_terminal_and_the_svg() {
    // z = x^2 on -2..4 (the default range around x = 1) spans 0 to 16: a step
    // of 5 (16/4 = 4 rounds up to 5 in 1-2-5) gives 0, 5, …, 20. ∂z/∂x = 2x
    // spans -4 to 8: 12/4 = 3 rounds up to 5, giving -5 to 10.
    let text = run(&["x = 1; z = x^2", ":plot x"]);
    let charts = terminal_ticks(&text);
    // 40 dots high in rows of 4: 11 rows, tick t at row ⌊(top − t)/(top − bottom)·40/4⌋.
    let expected = |ticks: &[f64]| -> Vec<(usize, String)> {
        let (top, bottom) = (ticks[0], ticks[ticks.len() - 1]);
        ticks
            .iter()
            .map(|&t| {
                let row = ((top - t) / (top - bottom) * 10.0).floor() as usize;
                (row, format!("{t}"))
            })
            .collect()
    };
    assert_eq!(
        charts,
        vec![
            expected(&[20.0, 15.0, 10.0, 5.0, 0.0]),
            expected(&[10.0, 5.0, 0.0, -5.0])
        ],
        "{text}"
    );

    // Small values: sin(x)/100 on -2.7..3.3 spans about ±0.01: step 0.005.
    let text = run(&["x = 0.3; z = sin(x)/100", ":plot x"]);
    let labels: Vec<String> = terminal_ticks(&text)[0]
        .iter()
        .map(|(_, l)| l.clone())
        .collect();
    assert_eq!(
        labels,
        ["0.010", "0.005", "0", "-0.005", "-0.010"],
        "{text}"
    );

    // The SVG: the same round ticks, evenly spaced down the panel.
    let dir = tempfile::tempdir().unwrap();
    gradcalc()
        .current_dir(dir.path())
        .args(["-e", "x = 1; z = x^2", "-e", ":plot x plot.svg"])
        .assert()
        .success();
    let svg = std::fs::read_to_string(dir.path().join("plot.svg")).unwrap();
    let document = roxmltree::Document::parse(&svg).unwrap();
    let ticks: Vec<(f64, String)> = document
        .descendants()
        .filter(|n| n.has_tag_name("text") && n.attribute("text-anchor") == Some("end"))
        .filter(|n| n.attribute("x") == Some("74.00"))
        .map(|n| {
            (
                n.attribute("y").unwrap().parse().unwrap(),
                n.text().unwrap().to_string(),
            )
        })
        .collect();
    let labels: Vec<&str> = ticks.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(
        labels,
        ["0", "5", "10", "15", "20", "-5", "0", "5", "10"],
        "{svg}"
    );
    for panel in [&ticks[..5], &ticks[5..]] {
        let gaps: Vec<f64> = panel.windows(2).map(|w| w[0].0 - w[1].0).collect();
        assert!(
            gaps.iter().all(|g| (g - gaps[0]).abs() < 0.02 && *g > 0.0),
            "{gaps:?}"
        );
    }
}

#[test]
fn one_minus_sign_in_text_dot_svg_and_help() {
    // y = -x - 1 has both minus signs: a negation and a subtraction.
    let lines = [
        "x = 2; y = -x - 1",
        ":trace",
        ":topo",
        ":graph",
        ":dot",
        ":svg -",
        ":help",
        ":help grad",
        ":help tanh",
        ":help cos",
        ":help log",
    ];
    let text = run(&lines);
    assert!(!text.contains('\u{2212}'), "{text}");
    // The pictures label the negation `-` (DOT's record and the SVG's text).
    assert_contains(&text, "label=\"-\"");
    assert_contains(&text, ">-</text>");
    // The derivative rules read as typed: ∂cos(u)/∂u = -sin(u), 1 - tanh(u)².
    assert_contains(&text, "= -sin(u)");
    assert_contains(&text, "1 - tanh(u)");
    // y = -2 - 1 = -3.
    assert_contains(&text, "y = -3\n");
}

/// A Markdown cell as a CommonMark renderer shows it: a backslash before ASCII
/// punctuation is that character.
fn commonmark_unescape(cell: &str) -> String {
    let mut out = String::new();
    let mut chars = cell.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(&next)) if next.is_ascii_punctuation() => {
                out.push(next);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

#[test]
fn the_markdown_handout_escapes_what_markdown_would_render() {
    // z = a*b*c at a = 2, b = 3, c = 4: ∂(a*b*c)/∂(a*b) = c = 4 and
    // ∂(a*b*c)/∂c = a*b = 6 (by hand); _3 is the label of a*b.
    let text = run(&["a = 2; b = 3; c = 4; z = a*b*c", ":trace md -"]);
    assert_contains(&text, "| ∂(a\\*b\\*c)/∂(a\\*b) = c = 4 |");
    assert_contains(&text, "| \\_3 = a \\* b = 6 |");
    let rows: Vec<Vec<String>> = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Node"))
        .map(|l| {
            // Cells end at a `|` with no backslash before it.
            let mut cells = vec![String::new()];
            let mut previous = ' ';
            for c in l.trim_matches('|').chars() {
                if c == '|' && previous != '\\' {
                    cells.push(String::new());
                } else {
                    cells.last_mut().unwrap().push(c);
                }
                previous = c;
            }
            cells.iter().map(|c| c.trim().to_string()).collect()
        })
        .collect();
    assert!(rows.len() >= 5, "{text}");
    for row in &rows {
        assert_eq!(row.len(), 6, "{row:?}");
        for cell in row {
            // Nothing a renderer would read as markup is left bare.
            let mut previous = ' ';
            for c in cell.chars() {
                assert!(
                    !"*_`|<[]~&$".contains(c) || previous == '\\',
                    "bare {c:?} in {cell:?}"
                );
                previous = if previous == '\\' { ' ' } else { c };
            }
        }
    }
    // Unescaped, the cells are the formulas `:trace` prints.
    let cells: Vec<String> = rows
        .iter()
        .flatten()
        .map(|c| commonmark_unescape(c))
        .collect();
    let trace = run(&["a = 2; b = 3; c = 4; z = a*b*c", ":trace"]);
    for formula in [
        "∂(a*b*c)/∂(a*b) = c = 4",
        "∂(a*b*c)/∂c = a*b = 6",
        "∂(a*b)/∂a = b = 3",
    ] {
        assert!(cells.iter().any(|c| c == formula), "{formula} in {cells:?}");
        assert!(trace.contains(formula), "{formula} in {trace}");
    }
    assert!(cells.iter().any(|c| c == "_3 = a * b = 6"), "{cells:?}");
}
