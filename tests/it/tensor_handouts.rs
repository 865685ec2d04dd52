//! `:trace md` and `:trace tex` of a tensor output (the handout of the
//! vectorised lecture), and `:svg DIR --steps` of one, through the binary.

use crate::util::{output_in, output_of, stderr_of, stdout_of};

/// The 2×3 layer.
const LAYER: &str = "W = [[1,2,3],[4,5,6]]; x = [1,0,-1]; b = [0.5,-0.5]; L = sum(tanh(W @ x + b))";

/// The numbers of a text (`-1.5`, `2.5e-3`), in order.
fn numbers(text: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars().chain([' ']) {
        if c.is_ascii_digit() || c == '.' || c == '-' || c == 'e' {
            word.push(c);
        } else {
            if let Ok(x) = word.parse::<f64>() {
                out.push(x);
            }
            word.clear();
        }
    }
    out
}

/// The Markdown table's rows (cells split at unescaped `|`), header and
/// rule left out.
fn rows(md: &str) -> Vec<Vec<String>> {
    md.lines()
        .filter(|l| l.starts_with('|'))
        .skip(2)
        .map(|line| {
            let mut cells = Vec::new();
            let mut cell = String::new();
            let mut escaped = false;
            for c in line.chars() {
                match (c, escaped) {
                    ('\\', false) => escaped = true,
                    ('|', false) => {
                        cells.push(cell.trim().to_string());
                        cell.clear();
                    }
                    (c, _) => {
                        cell.push(c);
                        escaped = false;
                    }
                }
            }
            cells[1..].to_vec()
        })
        .collect()
}

#[test]
fn trace_md_of_a_layer_is_the_lecture_on_paper() {
    let output = output_of(&["-e", LAYER, "-e", ":trace md"]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let text = stdout_of(&output);
    let md = &text[text.find("Backward pass from L").expect("the handout")..];
    let table = rows(md);
    // By hand (f64 arithmetic of the formulas, not gradcalc): u = W @ x + b
    // = [1 - 3 + 0.5, 4 - 6 - 0.5] = [-1.5, -2.5]; g = 1 - tanh(u)^2; ∂L/∂W
    // = outer(g, x); ∂L/∂x = Wᵀ @ g; ∂L/∂b = g.
    let g = [1.0 - 1.5f64.tanh().powi(2), 1.0 - 2.5f64.tanh().powi(2)];
    let w = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let x = [1.0, 0.0, -1.0];
    let dw: Vec<f64> = (0..2)
        .flat_map(|i| (0..3).map(move |j| g[i] * x[j]))
        .collect();
    let dx: Vec<f64> = (0..3).map(|j| w[0][j] * g[0] + w[1][j] * g[1]).collect();
    // (rule of the operand, what it receives) per row, in the walk's order.
    let expected: [(&str, Vec<f64>); 6] = [
        ("upstream ⊙ ones(2)", vec![1.0, 1.0]),
        ("upstream ⊙ (1 - tanh(W @ x + b)^2)", g.to_vec()),
        ("upstream", g.to_vec()),
        ("upstream", g.to_vec()),
        ("outer(upstream, x)", dw),
        ("Wᵀ @ upstream", dx),
    ];
    assert_eq!(table.len(), expected.len(), "{md}");
    for (row, (rule, values)) in table.iter().zip(&expected) {
        assert_eq!(row.len(), 6, "{row:?}");
        assert!(row[3].contains(&format!("+= {rule},")), "{row:?}");
        let got = numbers(&row[4]);
        assert_eq!(got.len(), values.len(), "{row:?}");
        for (a, b) in got.iter().zip(values) {
            assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                "{row:?}: {a} vs {b}"
            );
        }
    }
    // A matrix in a cell is one line without the terminal's aligning
    // spaces: ∂L/∂W = outer(g, x) = [[g0, 0, -g0], [g1, 0, -g1]], whose
    // columns the terminal pads (`0` under `-0.1…`).
    for row in &table {
        for cell in &row[2..] {
            assert!(
                !cell.contains("  ") && !cell.contains("[ "),
                "padding in {cell:?}"
            );
        }
    }
    let dw_cell = &table[4][4];
    let shape: String = dw_cell
        .chars()
        .map(|c| {
            if c.is_ascii_digit() || c == '.' {
                '9'
            } else {
                c
            }
        })
        .collect::<String>()
        .split('9')
        .filter(|piece| !piece.is_empty())
        .collect();
    assert_eq!(shape, "[[, , -], [, , -]]", "{dw_cell}");
    // Steps numbered as `:trace` numbers them, with the shapes of the rule.
    let steps: Vec<&str> = table.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(steps, ["1", "2", "3", "", "4", ""]);
    assert!(
        table[4][3].contains("outer((2), (3)) → 2×3"),
        "{:?}",
        table[4]
    );
    assert!(table[5][3].contains("(3×2) @ (2) → 3"), "{:?}", table[5]);
    // The rules are the ones `:trace` prints (which type back to their
    // numbers, tests/it/tensor_rules.rs).
    let trace = stdout_of(&output_of(&["-e", LAYER, "-e", ":trace"]));
    for (rule, _) in &expected {
        assert!(
            trace.contains(&format!("+= {rule} ")),
            "{rule} not in\n{trace}"
        );
    }
}

#[test]
fn trace_tex_of_a_layer_is_a_balanced_latex_table_in_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let output = output_in(dir.path(), &["-e", LAYER, "-e", ":trace tex layer.tex"]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let tex = std::fs::read_to_string(dir.path().join("layer.tex")).unwrap();
    assert_eq!(tex.matches("\\begin{xltabular}").count(), 1, "{tex}");
    assert_eq!(tex.matches("\\end{xltabular}").count(), 1, "{tex}");
    // Braces balance (escaped ones aside) and every line's math closes.
    let unescaped = tex.replace("\\{", "").replace("\\}", "");
    let mut depth = 0i64;
    for c in unescaped.chars() {
        depth += match c {
            '{' => 1,
            '}' => -1,
            _ => 0,
        };
        assert!(depth >= 0, "{tex}");
    }
    assert_eq!(depth, 0, "{tex}");
    for line in tex.lines() {
        assert_eq!(
            line.replace("\\$", "").matches('$').count() % 2,
            0,
            "{line}"
        );
    }
    // Six columns a row, and the rules in math: ∂L/∂W's outer product.
    for line in tex
        .lines()
        .filter(|l| l.ends_with("\\\\") && !l.contains("multicolumn"))
    {
        assert_eq!(line.replace("\\&", "").matches('&').count(), 5, "{line}");
    }
    assert!(
        tex.contains("\\mathrm{outer}(\\mathit{upstream},\\allowbreak x)"),
        "{tex}"
    );
}

#[test]
fn svg_steps_of_a_tensor_output_writes_a_slide_a_step() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("slides")).unwrap();
    let output = output_in(dir.path(), &["-e", LAYER, "-e", ":svg slides --steps"]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    // Four steps (sum, tanh, +, @: the tensor ops), and step 0.
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join("slides"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "step-000.svg",
            "step-001.svg",
            "step-002.svg",
            "step-003.svg",
            "step-004.svg"
        ]
    );
}
