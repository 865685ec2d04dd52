//! What a newcomer to vectors and matrices meets through the binary: `:help`
//! of the tensor syntax, hints for numpy's spellings, the refusals of what
//! tensors do not support yet, and the page's legend of a tensor output.

use crate::util::{assert_contains, gradcalc, stderr_of, stdout_of};

/// A 2×2 matrix, a vector and a loss of shape `()` built from both.
const LAYER: &str = "W = [[1, 2], [3, 4]]\nx = [1, -1]\nL = sum(tanh(W @ x))";

/// The standard output of `gradcalc -e SOURCE`, which must succeed.
fn run(source: &str) -> String {
    let output = gradcalc().args(["-e", source]).output().unwrap();
    assert!(output.status.success(), "{source}: {}", stderr_of(&output));
    stdout_of(&output)
}

/// The standard error of `gradcalc -e SOURCE`, which must fail.
fn error_of(source: &str) -> String {
    let output = gradcalc().args(["-e", source]).output().unwrap();
    assert!(!output.status.success(), "{source}: {}", stdout_of(&output));
    stderr_of(&output)
}

/// Asserts that `gradcalc -e SOURCE` fails with `part` in its error.
#[track_caller]
fn assert_error(source: &str, part: &str) {
    assert_contains(&error_of(source), part);
}

#[test]
fn the_overview_points_at_vectors_and_matrices() {
    let help = run(":help");
    for part in [
        "Vectors and matrices (`:help vectors`)",
        "`A @ B` (`:help @`), `Wᵀ` or `transpose(W)` (`:help ᵀ`)",
        "transpose outer zeros ones eye randn sum mean softmax logsumexp max(x)",
        "`:seed N` for randn",
        "argmax log_softmax cross_entropy onehot maximum minimum rand uniform, `==` `<` …, slices `X[0:4]`, `axis=` (`:help vectors`)",
    ] {
        assert_contains(&help, part);
    }
    let vectors = run(":help vectors");
    for part in [
        "cross_entropy(Z, y), onehot(y, k)   integer class labels; `mean(argmax(Z, 1) == y)` an accuracy",
        "x[0], W[1, 2], W[1]         0-based indexing",
        "`W = [[1, 2], [3, 4]]` a 2×2 matrix, by rows",
    ] {
        assert_contains(&vectors, part);
    }
}

/// `@` and `ᵀ` answer with the textbook matrix rules (The Matrix Cookbook
/// §2.4: ∂(AB) passes upstream·Bᵀ to A and Aᵀ·upstream to B; the transpose
/// passes the upstream transposed) and their shapes.
#[test]
fn help_answers_for_the_matrix_product_and_the_transpose() {
    let at = run(":help @");
    assert_contains(&at, "A @ B: the matrix product");
    assert_contains(&at, "shape: (m×k) @ (k×n) → m×n");
    assert_contains(
        &at,
        "backward: ∂L/∂A = upstream @ Bᵀ, ∂L/∂B = Aᵀ @ upstream",
    );
    for topic in [":help ᵀ", ":help transpose"] {
        let transpose = run(topic);
        assert_contains(&transpose, "transpose(W), also Wᵀ");
        assert_contains(&transpose, "shape: (m×n)ᵀ → n×m");
        assert_contains(&transpose, "backward: ∂L/∂A = upstreamᵀ");
    }
}

/// numpy's `W.T` and `W^T`, and `ᵀ` after a space, each answered at its
/// place with gradcalc's spelling.
#[test]
fn numpys_transpose_spellings_get_the_hint_to_write_w_transposed() {
    // Each source with the parts of its error.
    let spellings: [(&str, &[&str]); 4] = [
        (
            "W = [[1, 2], [3, 4]]\nW.T",
            &[
                "error: unknown name `W.T`",
                "2 │ W.T\n  │ ^^^ to transpose, write `Wᵀ` (ᵀ right after W, no space) or `transpose(W)`",
            ],
        ),
        (
            "W = [[1, 2], [3, 4]]\nx = [1, -1]\nW.T @ x",
            &["3 │ W.T @ x\n  │ ^^^ to transpose, write `Wᵀ`"],
        ),
        (
            "W = [[1, 2], [3, 4]]\nW^T",
            &[
                "error: unknown name `T`",
                "2 │ W^T\n  │   ^ to transpose, write `Wᵀ` (ᵀ right after W, no space) or `transpose(W)`; for a power, assign `T` first",
            ],
        ),
        (
            "W = [[1, 2], [3, 4]]\nW ᵀ",
            &[
                "2 │ W ᵀ\n  │   ^ write `ᵀ` right after its operand, with no space: `Wᵀ`, or `transpose(W)`",
            ],
        ),
    ];
    for (source, parts) in spellings {
        for part in parts {
            assert_error(source, part);
        }
    }
    // The spelling the hints name works: (Wᵀ)[0, 1] is W[1, 0] = 3.
    assert_contains(&run("W = [[1, 2], [3, 4]]\nWᵀ[0, 1]"), "3");
}

#[test]
fn an_empty_vector_and_an_empty_index_say_what_goes_between_the_brackets() {
    assert_error(
        "v = []",
        "1 │ v = []\n  │      ^ a vector needs at least one element (an empty vector is not a value in gradcalc): `[1, 2]`",
    );
    assert_error(
        "x = [1, 2]\nx[]",
        "2 │ x[]\n  │   ^ an index goes between the brackets, from 0: `x[0]`, `W[1, 2]`",
    );
}

/// docs/language.md §9: brackets nest up to 1000 levels as parentheses do;
/// 1000 levels of `[` are a literal with too many axes, 1001 too deep.
#[test]
fn brackets_1000_deep_have_too_many_axes_and_1001_are_nested_too_deeply() {
    let literal = |depth: usize| format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    assert_contains(
        &error_of(&literal(1000)),
        "error: a row of a matrix is a list of numbers: vectors and matrices have at most 2 axes",
    );
    assert_contains(
        &error_of(&literal(1001)),
        "error: expression nested too deeply: more than 1000 levels",
    );
}

/// What vectors and matrices do not support yet is refused with what
/// works; a handout of a tensor output is written, never the plain trace
/// in its place.
#[test]
fn handouts_are_written_and_repeat_of_tensors_is_refused_with_what_works() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.md");
    for word in ["md", "markdown", "latex"] {
        let _ = std::fs::remove_file(&notes);
        let output = gradcalc()
            .args([
                "-e",
                LAYER,
                "-e",
                &format!(":trace {word} {}", notes.display()),
            ])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr_of(&output));
        let handout = std::fs::read_to_string(&notes).unwrap();
        // The rule of W's step, with its shapes, as `:trace` prints it.
        assert!(
            handout.contains("outer((2), (2))") && handout.contains("Step"),
            "{handout}"
        );
    }
    let repeat = error_of(&format!("{LAYER}\n:repeat 2 W := W - 0.1*grad(L, W)"));
    assert_contains(
        &repeat,
        "error: `:repeat` of vectors and matrices is not supported yet",
    );
    assert_contains(
        &repeat,
        "4 │ :repeat 2 W := W - 0.1*grad(L, W)\n  │           ^^^^^^^^^^^^^^^^^^^^^^^ `:descend L lr=0.1 steps=100 W b`",
    );
    // A scalar statement in `:repeat` still runs beside a tensor output.
    assert_contains(
        &run(&format!("{LAYER}\ny = 1\n:repeat 2 y := y + 1")),
        "ran `y := y + 1` 2 times",
    );
    // `:serve` is the REPL's, for a tensor output as for any other.
    assert_error(
        &format!("{LAYER}\n:serve"),
        "error: `:serve` works in the interactive REPL",
    );
}

/// The page of a tensor output says that its edges carry matrix rules; a
/// scalar page keeps the local derivative's legend (the script's default).
#[test]
fn the_tensor_pages_legend_says_its_edges_are_matrix_rules() {
    let dir = tempfile::tempdir().unwrap();
    let page = |statements: &str, name: &str| {
        let output = gradcalc()
            .current_dir(dir.path())
            .args(["-e", statements, "-e", &format!(":html {name}")])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr_of(&output));
        std::fs::read_to_string(dir.path().join(name)).unwrap()
    };
    let tensor = page(LAYER, "tensor.html");
    assert_contains(
        &tensor,
        "\"edges\":\"an edge's label: the matrix rule of what the input receives from the upstream gradient (outer(upstream, x) into W of W @ x), as :trace writes it\"",
    );
    // The page's edges carry those rules.
    assert_contains(&tensor, "outer(upstream, x)");
    let scalar = page("x = 2\ny = x*x", "scalar.html");
    assert!(!scalar.contains("\"edges\""));
    assert_contains(
        &scalar,
        "an edge's label: the local derivative ∂node/∂input at these values",
    );
}

/// `:serve` in the REPL shows a tensor output's page, its legend naming the
/// matrix rules, and a scalar output's page after it with the local
/// derivative's legend again.
#[test]
fn the_served_page_of_a_tensor_output_has_the_matrix_rules_legend() {
    let Some((mut browser, mut repl, port, _state)) =
        crate::browser::serving("`:serve` of a tensor output in Chromium")
    else {
        return;
    };
    browser.open(
        &format!("http://127.0.0.1:{port}/"),
        (1280, 720),
        "document.querySelector('.gc-message')",
    );
    let edge = "document.querySelector('.gc-legend-edge').textContent";
    repl.line(&LAYER.replace('\n', "; "), "L = -1.523188312");
    browser.wait_for("document.querySelector('.gc-title').textContent === 'gradcalc: L'");
    assert_eq!(
        browser.eval(edge),
        serde_json::json!(
            "an edge's label: the matrix rule of what the input receives from the upstream gradient (outer(upstream, x) into W of W @ x), as :trace writes it"
        )
    );
    // W's box is the 2×2 tensor's.
    browser.wait_for("document.querySelector('.gc-graph').textContent.includes('W 2×2')");
    repl.line("a = 2; b = a*a", "b = 4");
    browser.wait_for("document.querySelector('.gc-title').textContent === 'gradcalc: b'");
    assert_eq!(
        browser.eval(edge),
        serde_json::json!("an edge's label: the local derivative ∂node/∂input at these values")
    );
    repl.line(":serve stop", "stopped serving");
}

/// While the output is a number, a command naming a vector or matrix says
/// what the name is and how a tensor loss becomes the output (not "assign
/// it first, e.g. `W = 1`"); typing the loss's name makes it the output.
#[test]
fn a_scalar_command_naming_a_tensor_says_how_to_make_it_the_output() {
    let scalar_after = format!("{LAYER}\na = 2\nb = a*a");
    // `:backward L` of the number L (shape `()`) makes it the output, as
    // for any number: ∂L/∂W[0, 0] = (1 − tanh²(−1))·x[0] = 0.4199743416
    // (tanh(−1) = −0.7615941560).
    let backward = run(&format!("{scalar_after}\n:backward L"));
    assert_contains(&backward, "∂L/∂W = 2×2\n");
    assert_contains(&backward, "[[0.4199743416, -0.4199743416],");
    assert!(!backward.contains("vector or matrix"), "{backward}");
    let grad = error_of(&format!("{scalar_after}\n:grad W"));
    assert_contains(
        &grad,
        "error: `W` is a vector or matrix, and the output is a number: `:grad` here takes the output's scalar variables",
    );
    assert_contains(&grad, "then `:grad W`");
    assert_error(
        &format!("{scalar_after}\n:diff L W"),
        "`:diff` is not supported for vectors and matrices yet; with a tensor loss as the output, `:grad`, `:trace`, `:check` and the pictures work",
    );
    // As the hint says: `L` alone makes L the output again, and ∂L/∂W[0, 0]
    // = (1 − tanh²(−1))·x[0] = 0.4199743416 (tanh(−1) = −0.7615941560).
    assert_contains(
        &run(&format!("{scalar_after}\nL\n:grad W")),
        "[[0.4199743416, -0.4199743416],",
    );
    // A command refused for a tensor output names what works now.
    assert_error(
        &format!("{LAYER}\n:diff L W"),
        "`:trace` and `:step` each tensor op's backward step as its matrix rule, `:check` each element against a central difference, `:topo`, `:svg`, `:dot` and `:html` the tensor graph",
    );
}

/// MATLAB's `W'`, PyTorch's `W.t()` and `W.transpose()`, numpy's
/// `np.dot(W, x)`: each error's help names gradcalc's spelling; a misspelt
/// function of a tensor gets the nearest built-in name.
#[test]
fn matlab_torch_and_numpy_calls_get_gradcalcs_spelling() {
    let setup = "W = [[1, 2], [3, 4]]\nx = [1, -1]";
    assert_error(
        &format!("{setup}\nW'"),
        "3 │ W'\n  │  ^ MATLAB's transpose `W'` is `Wᵀ` or `transpose(W)` here",
    );
    for call in ["W.t()", "W.transpose()"] {
        assert_error(
            &format!("{setup}\n{call}"),
            "^ to transpose, write `Wᵀ` (ᵀ right after W, no space) or `transpose(W)`",
        );
    }
    assert_error(
        &format!("{setup}\nnp.dot(W, x)"),
        "3 │ np.dot(W, x)\n  │ ^^^^^^ write the matrix product with `@`: `W @ x` (`:help @`)",
    );
    assert_error(
        &format!("{setup}\nsoftmx(x)"),
        "^^^^^^ did you mean `softmax`?",
    );
    // W @ x = [1·1 + 2·(−1), 3·1 + 4·(−1)] = [-1, -1].
    assert_contains(&run(&format!("{setup}\nW @ x")), "[-1, -1]  (2)");
}
