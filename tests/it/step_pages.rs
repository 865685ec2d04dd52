//! The terminal's `:step` pages the output's step model, a number's or a
//! tensor's, through one path: the header, then step K's text from step K of
//! the model, with the same keys and the same prompt for both kinds; every
//! step of a long trace (which `:trace` prints summarised), a vector
//! output's steps after its note, the tensor legend, `--ascii` and a step
//! shown element by element (`--expand=NODE`) as `:trace` writes them.
//! Every number below is worked out by hand in the comment beside it.

use crate::pty::{Repl, strip_ansi};

/// The keys as xterm sends them.
const RIGHT: &str = "\u{1b}[C";
const LEFT: &str = "\u{1b}[D";
const HOME: &str = "\u{1b}[H";
const END: &str = "\u{1b}[F";

/// The numbers of the steps printed in `text` (lines `[K] …`).
fn step_numbers(text: &str) -> Vec<usize> {
    strip_ansi(text)
        .split(['\r', '\n'])
        .filter_map(|line| line.strip_prefix('[')?.split_once(']')?.0.parse().ok())
        .collect()
}

/// `text` without colour, its words joined by one space: wrapping at the
/// pseudo-terminal's 80 columns aside, the text as written.
fn words(text: &str) -> String {
    strip_ansi(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Presses `keys` and waits for the prompt of step `k` of `total`; checks
/// that step `k` alone was drawn and that its text holds each of `shown`
/// (words joined by one space). Returns the text drawn.
fn page(repl: &mut Repl, keys: &str, (k, total): (usize, usize), shown: &[&str]) -> String {
    repl.send(keys);
    let drawn = repl.expect(&format!("step {k}/{total}"));
    assert_eq!(step_numbers(&drawn), [k], "{keys:?}: {drawn}");
    let text = words(&drawn);
    for part in shown {
        assert!(text.contains(part), "step {k} lacks {part:?}: {text}");
    }
    drawn
}

/// Walks a graph of `steps.len()` steps, once `:step` has written its
/// header, with one sequence of keys — → to the end, ← back, Home, End,
/// `g N` — each step checked against its texts in `steps`, then stops with q.
fn walk(repl: &mut Repl, steps: &[&[&str]]) {
    let total = steps.len();
    let at = |k: usize| (k, total);
    page(repl, "", at(1), steps[0]);
    for k in 2..=total {
        page(repl, RIGHT, at(k), steps[k - 1]);
    }
    page(repl, LEFT, at(total - 1), steps[total - 2]);
    page(repl, HOME, at(1), steps[0]);
    page(repl, END, at(total), steps[total - 1]);
    page(repl, "g 2\r", at(2), steps[1]);
    repl.send("q");
    repl.expect(&format!(
        "(stopped at step 2/{total}: the walk has ended; `:step` starts it again)"
    ));
    repl.prompt();
}

/// A number and then a vector output, paged by the same keys.
///
/// The number: z = x·y + x at x = 3, y = 4 is 15; ∂z/∂x = y + 1 = 5 (its
/// two uses: 1 from the sum, then 4 from the product, grad 1 → 5) and
/// ∂z/∂y = x = 3.
///
/// The vector: W = [[1, 2], [3, 4]], v = [1, −1], b = [0.5, −0.5]:
/// W @ v = [1 − 2, 3 − 4] = [−1, −1], u = W @ v + b = [−0.5, −1.5],
/// h = u ⊙ u = [0.25, 2.25], seeded with ones. Step 1 (h = u ⊙ u) gives u
/// upstream ⊙ u = [−0.5, −1.5] at each of its two uses, so far [−1, −3];
/// step 2 (u, a sum) passes [−1, −3] to W @ v and to b; step 3 (W @ v)
/// gives W outer([−1, −3], [1, −1]) = [[−1, 1], [−3, 3]] and v
/// Wᵀ @ [−1, −3] = [1·(−1) + 3·(−3), 2·(−1) + 4·(−3)] = [−10, −14].
#[test]
fn step_pages_a_number_and_a_vector_output_alike() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("x = 3; y = 4; z = x*y + x", "z = 15");
    repl.prompt();
    repl.send_line(":step");
    repl.expect("backward pass from z: 4 nodes in reverse topological order");
    walk(
        &mut repl,
        &[
            &[
                "[1] z = _2 + x = 15 upstream 1",
                "→ x: local ∂(x*y + x)/∂x = 1; 1 × 1 = 1; grad 0 → 1 (1st of 2 uses)",
            ],
            &[
                "[2] _2 = x * y = 12 upstream 1",
                "∂(x*y)/∂x = y = 4; 1 × 4 = 4; grad 1 → 5 (2nd of 2 uses: accumulated)",
                "∂(x*y)/∂y = x = 3; 1 × 3 = 3; grad 0 → 3",
            ],
            &["[3] y leaf = 4 ∂z/∂y = 3"],
            &["[4] x leaf = 3 ∂z/∂x = 5"],
        ],
    );
    repl.line(
        "W = [[1, 2], [3, 4]]; v = [1, -1]; b = [0.5, -0.5]; u = W @ v + b; h = u * u",
        "h = [0.25, 2.25]",
    );
    repl.prompt();
    // The note comes first, then the steps are paged (not printed at once).
    repl.send_line(":step");
    repl.expect("note: h has shape (2), not ()");
    repl.expect("backward pass from h: each tensor op one step");
    walk(
        &mut repl,
        &[
            &[
                "[1] h (*) upstream ∂h/∂h = [1, 1] (2)",
                "(use 1 of 2: contributions add) = [-0.5, -1.5] (2)",
                "(use 2 of 2: contributions add) = [-0.5, -1.5] (2)",
                "∂h/∂u so far = [-1, -3] (2)",
            ],
            &[
                "[2] u (+) upstream ∂h/∂u = [-1, -3] (2)",
                "∂h/∂(W @ v) += upstream ⊙ elementwise, 2 = [-1, -3] (2)",
                "∂h/∂b += upstream ⊙ elementwise, 2 = [-1, -3] (2)",
            ],
            &[
                "[3] W @ v (@) upstream ∂h/∂(W @ v) = [-1, -3] (2)",
                "∂h/∂W += outer(upstream, v) outer((2), (2)) → 2×2 = 2×2 [[-1, 1], [-3, 3]]",
                "∂h/∂v += Wᵀ @ upstream (2×2) @ (2) → 2 = [-10, -14] (2)",
            ],
        ],
    );
    // A step shown element by element: b[1] receives upstream[1]·1 = −3.
    repl.send_line(":step --expand=u");
    repl.expect("backward pass from h");
    page(&mut repl, "", (1, 3), &["[1] h (*)"]);
    page(
        &mut repl,
        "g 2\r",
        (2, 3),
        &[
            "∂h/∂(W @ v)[0] = (-1)·1 = -1 (through u[0])",
            "∂h/∂b[1] = (-3)·1 = -3 (through u[1])",
        ],
    );
    repl.send("q");
    repl.expect("(stopped at step 2/3");
    repl.prompt();
    repl.leave();
}

/// `:trace` of a long walk leaves its middle steps out; `:step` pages every
/// one of them. s = x + x + … + x (40 terms) at x = 2 is 80: 39 sums, each
/// with upstream 1, then x. Step k (k ≤ 39) is the sum of 41 − k terms,
/// 2·(41 − k), and gives x its k-th use (grad k − 1 → k; step 39, x + x,
/// its 39th and 40th); ∂s/∂x = 40.
#[test]
fn step_pages_every_step_of_a_long_trace() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    let terms = vec!["x"; 40].join(" + ");
    repl.line(&format!("x = 2; s = {terms}"), "s = 80");
    repl.prompt();
    // `:trace` skips steps 21 to 35.
    repl.send_line(":trace");
    repl.expect("… 15 more steps (`:trace all` shows every step)");
    repl.prompt();
    repl.send_line(":step");
    repl.expect("backward pass from s: 40 nodes in reverse topological order");
    page(&mut repl, "", (1, 40), &["[1] s = _38 + x = 80 upstream 1"]);
    // Step 25, 2·16 = 32, is one of those `:trace` leaves out.
    let drawn = page(
        &mut repl,
        "g 25\r",
        (25, 40),
        &[
            "[25] _15 = _14 + x = 32 upstream 1",
            "grad 24 → 25 (25th of 40 uses: accumulated)",
        ],
    );
    assert!(!drawn.contains("more steps"), "{drawn}");
    page(
        &mut repl,
        RIGHT,
        (26, 40),
        &["[26] _14 = _13 + x = 30 upstream 1"],
    );
    page(
        &mut repl,
        "39\r",
        (39, 40),
        &[
            "[39] _1 = x + x = 4 upstream 1",
            "grad 38 → 39 (39th of 40 uses: accumulated)",
            "grad 39 → 40 (40th of 40 uses: accumulated)",
        ],
    );
    page(&mut repl, END, (40, 40), &["[40] x leaf = 2 ∂s/∂x = 40"]);
    repl.send("g 41\r");
    repl.expect("(no step 41 to show: the steps shown are 1 to 40)");
    repl.expect("step 40/40");
    repl.send("q");
    repl.expect("(stopped at step 40/40");
    repl.prompt();
    repl.leave();
}

/// With `--ascii`, a tensor output's `:step` writes ASCII as its `:trace`
/// does, the legend of short names in its header: each step's text is the
/// trace's step of that number.
#[test]
fn step_of_a_tensor_output_writes_the_trace_s_legend_and_ascii() {
    let state = tempfile::tempdir().unwrap();
    let mut command = crate::pty::command(state.path());
    command.arg("--ascii");
    let mut repl = Repl::spawn(command);
    repl.prompt();
    repl.line(
        "A = [[1, 2], [3, 4]]; L = sum(tanh(A @ A @ A @ [1, 1] + [1, 2]) * [3, 4] - A @ [1, 1])",
        // A³ @ [1, 1] + [1, 2] = [92, 201], whose tanh is 1 to 16 digits:
        // 3·1 + 4·1 − (A @ [1, 1] = [3, 7]) sums to 3 + 4 − 3 − 7 = −3.
        "L = -3",
    );
    repl.prompt();
    repl.send_line(":trace");
    let trace = words(&repl.prompt());
    repl.send_line(":step");
    let header = words(&repl.expect("step 1/9"));
    assert!(
        header.contains("where t6 = A @ A @ A @ [1, 1] + [1, 2]"),
        "{header}"
    );
    assert!(header.contains("upstream dL/dL = 1"), "{header}");
    assert!(!header.contains('∂'), "{header}");
    // Step 5, tanh(t6), as the trace wrote it: to the next step's header.
    let drawn = words(&page(&mut repl, "g 5\r", (5, 9), &["[5] tanh(t6) (tanh)"]));
    let step = &drawn[drawn.find("[5]").unwrap()..drawn.find("step 5/9").unwrap()];
    let from = trace.find("[5]").unwrap();
    let to = trace.find("[6]").unwrap();
    assert_eq!(step.trim(), trace[from..to].trim());
    repl.send("q");
    repl.expect("(stopped at step 5/9");
    repl.prompt();
    repl.leave();
}

/// The page of a tensor output steps the same model, so its header is the
/// trace's: the legend of the short names its step lines use.
#[test]
fn the_tensor_page_writes_the_trace_s_legend() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::util::run_script_in(
        dir.path(),
        "A = [[1, 2], [3, 4]]; L = sum(tanh(A @ A @ A @ [1, 1] + [1, 2]) * [3, 4] - A @ [1, 1])\n:trace\n:html page.html",
    );
    let trace_header: Vec<&str> = out
        .lines()
        .skip_while(|line| !line.starts_with("backward pass from L"))
        .take_while(|line| !line.starts_with('['))
        .collect();
    assert_eq!(
        trace_header[1..],
        [
            "  where t6 = A @ A @ A @ [1, 1] + [1, 2]",
            "  where t12 = tanh(t6) * [3, 4] - A @ [1, 1]",
        ]
    );
    let html = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    let model = crate::web::page_model(&html);
    assert_eq!(model["header"], trace_header.join("\n"));
    // Its step 2 is the trace's, in the legend's short names.
    let line = model["steps"][1]["text"].as_str().unwrap();
    assert!(line.starts_with("[2] t12 (-)"), "{line}");
}

/// `:step` of a walk of 200 001 steps makes the steps it shows when it
/// shows them, so a jump far into the walk lands on the right step with
/// the right numbers, and so do ←, End and Home after it.
///
/// The chain: x = 0.5, y = x, then 100 000 times `y = y*1 + x`. Statement
/// s makes the constant 1 (node 3s − 2, not a step), m_s = y·1 (node
/// 3s − 1) and a_s = m_s + x (node 3s), so after it y = (s + 1)·0.5, and
/// m_s = s·0.5. Every op passes its upstream on times 1, so each node's
/// upstream is 1. The walk is a_100000 (y), m_100000, a_99999, …, a_1, m_1,
/// x: step 2j − 1 is a_s and step 2j is m_s for s = 100 001 − j, and x's
/// j-th use is a_s's; m_1 = x·1 is its 100 001st and last. So:
/// - step 100 001 (j = 50 001, s = 50 000) is a_50000 = _150000 =
///   _149999 + x = 25 000.5, x's grad 50 000 → 50 001;
/// - step 100 002 is m_50000 = _149999 = _149997 * 1 = 25 000;
/// - step 199 999 (j = 100 000, s = 1) is a_1 = _3 = _2 + x = 1, x's grad
///   99 999 → 100 000; step 200 000 is m_1 = _2 = x * 1 = 0.5, x's grad
///   100 000 → 100 001;
/// - step 200 001 is x, ∂y/∂x = 100 001.
#[test]
fn step_jumps_far_into_a_walk_of_200001_steps() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("x = 0.5; y = x", "y = 0.5");
    repl.prompt();
    repl.line(":repeat 100000 y = y*1 + x", "100000  50000.5");
    repl.prompt();
    repl.send_line(":step");
    // (100000 constants not shown) follows, wrapped at 80 columns.
    repl.expect("backward pass from y: 200001 nodes in reverse topological order");
    let total = 200_001;
    page(
        &mut repl,
        "",
        (1, total),
        &["[1] y = _299999 + x = 50000.5 upstream 1"],
    );
    page(
        &mut repl,
        "g 100001\r",
        (100_001, total),
        &[
            "[100001] _150000 = _149999 + x = 25000.5 upstream 1",
            "grad 50000 → 50001 (50001st of 100001 uses: accumulated)",
        ],
    );
    page(
        &mut repl,
        RIGHT,
        (100_002, total),
        &["[100002] _149999 = _149997 * 1 = 25000 upstream 1"],
    );
    page(
        &mut repl,
        "g 200000\r",
        (200_000, total),
        &[
            "[200000] _2 = x * 1 = 0.5 upstream 1",
            "grad 100000 → 100001 (100001st of 100001 uses: accumulated)",
        ],
    );
    page(
        &mut repl,
        LEFT,
        (199_999, total),
        &[
            "[199999] _3 = _2 + x = 1 upstream 1",
            "grad 99999 → 100000 (100000th of 100001 uses: accumulated)",
        ],
    );
    page(
        &mut repl,
        END,
        (total, total),
        &["[200001] x leaf = 0.5 ∂y/∂x = 100001"],
    );
    // Back to the start: the walk is made again from step 1.
    page(
        &mut repl,
        HOME,
        (1, total),
        &["[1] y = _299999 + x = 50000.5"],
    );
    page(
        &mut repl,
        "g 100002\r",
        (100_002, total),
        &["[100002] _149999 = _149997 * 1 = 25000 upstream 1"],
    );
    page(
        &mut repl,
        LEFT,
        (100_001, total),
        &["[100001] _150000 = _149999 + x = 25000.5 upstream 1"],
    );
    repl.send("q");
    repl.expect("(stopped at step 100001/200001");
    repl.prompt();
    repl.leave();
}
