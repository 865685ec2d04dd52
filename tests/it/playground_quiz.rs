//! `:quiz` in the playground (headless Chromium, as in `playground.rs`): the
//! four walks of `tests/it/quiz.rs` — a fan-out, the neuron (every
//! question), the MLP with calls and a matrix layer — answered in the input
//! as a student answers them, some right and some wrong, each verdict and
//! the score read from the page; and an assignment's quizzes started with
//! their buttons. The answers and their verdicts are worked out by hand in
//! `tests/it/quiz.rs` (and again here where they differ). Each test passes
//! where Chromium or web/dist/ is missing, saying so.

use serde_json::json;

use crate::browser::Browser;
use crate::playground::{READY, downloaded, enter, paste, playground, wait_screen};
use crate::playground_homework::{click_in_problem, open_assignment_link};
use crate::quiz::{LAYER, NEURON_ANSWERS, example, neuron, sealed_quiz1};
use crate::util::{assert_contains, json_lines, output_of, stdout_of};

/// The output pane's text with its wrapped lines joined again: the pane
/// wraps a long line at a space into a new line indented by 8.
const FLAT: &str = "document.getElementById('screen').textContent.replace(/\\n {8}/g, ' ')";

/// Waits until the output pane, its wrapped lines joined, holds `text`.
fn wait_flat(browser: &mut Browser, text: &str) {
    browser.wait_for(&format!("{FLAT}.includes({text:?})"));
}

/// The prompt's label: `quiz 3/27>` while a quiz runs, `>` otherwise.
const LABEL: &str = "document.querySelector('#prompt label').textContent";

/// An answer's mark and the verdict it waits for: an answer is right
/// unless it ends in ` ✗` (wrong), ` •` (`?`: the answer shown) or ` ←` (a
/// key that goes back a question: no verdict).
fn verdict_of(answer: &str) -> (&str, Option<&str>) {
    match answer.rsplit_once(' ') {
        Some((text, "✗")) => (text, Some("✗ not right")),
        Some((text, "•")) => (text, Some("• it is")),
        Some((text, "←")) => (text, None),
        _ => (answer, Some("✓ right")),
    }
}

/// Answers the quiz of `questions` questions that asks its first question
/// now, one answer at a time (marked as [`verdict_of`] reads them): each
/// waits for one more of its verdict on the page, then for the prompt of
/// the question it leads to (`>` after the last).
fn answer_quiz(browser: &mut Browser, questions: usize, answers: &[&str]) {
    browser.wait_for(&format!("{LABEL} === 'quiz 1/{questions}>'"));
    let mut at = 1;
    for marked in answers {
        let (answer, verdict) = verdict_of(marked);
        let count = |mark: &str| format!("{FLAT}.split({mark:?}).length - 1");
        let before = verdict.map(|mark| browser.eval(&count(mark)).as_u64().unwrap());
        enter(browser, answer);
        if let (Some(mark), Some(before)) = (verdict, before) {
            browser.wait_for(&format!("{} === {}", count(mark), before + 1));
            at += 1;
        } else {
            at -= 1;
        }
        let label = if at > questions {
            ">".to_string()
        } else {
            format!("quiz {at}/{questions}>")
        };
        browser.wait_for(&format!("{LABEL} === {label:?}"));
    }
}

/// One walk of the playground's quiz: statements run first (pasted, then
/// Enter) and what they print, the `:quiz` line, how many questions it
/// asks, the answers (marked as [`verdict_of`] reads them), whether `q`
/// stops it after them, and what the page shows then.
struct Walk {
    statements: String,
    printed: &'static str,
    quiz: &'static str,
    questions: usize,
    answers: Vec<&'static str>,
    stopped: bool,
    shown: &'static [&'static str],
}

#[test]
fn the_playground_walks_the_neuron_a_fan_out_an_mlp_and_a_matrix_layer() {
    let Some((mut browser, url)) = playground("the playground's quiz of four networks") else {
        return;
    };
    browser.open(&url, (1366, 768), READY);
    // The neuron, all 27 questions (their right answers: NEURON_ANSWERS).
    // Wrong: question 1, `1 - tanh(n)` = 1 − 1/√2 = 0.2928932188 where
    // ∂tanh(n)/∂n = 1 − tanh(n)² = 0.5; question 23, x1 receives
    // 0.5 × (−3) = −1.5, not 1.5. Shown: question 9 (`?`). `back` (b is a
    // variable: `b` would be an answer) after question 11 asks question 11
    // again. 24 of 27.
    let mut neuron_answers = NEURON_ANSWERS.to_vec();
    neuron_answers[0] = "1 - tanh(n) ✗";
    neuron_answers[8] = "? •";
    neuron_answers[22] = "1.5 ✗";
    neuron_answers.splice(11..11, ["back ←", NEURON_ANSWERS[10]]);
    let walks = [
        // A fan-out first, while b is no variable (`b` goes back): y =
        // a*a + a at a = 2 (12 questions, tests/it/quiz.rs). a's gradient is
        // 1 from the +, then 1 + 2 = 3 (question 8, answered 4, then `b`
        // and 3), then 3 + 2 = 5 (question 11, answered 4); question 10
        // (upstream 1 × local 2) shown. 10 of 12.
        Walk {
            statements: "a = 2; y = a*a + a".to_string(),
            printed: "y = 6",
            quiz: ":quiz",
            questions: 12,
            answers: vec![
                "1", "1", "1", "1", "a*a", "a", "2", "4 ✗", "b ←", "3", "2", "? •", "4 ✗", "a",
            ],
            stopped: false,
            shown: &[
                "✗ not right: it is the gradient so far + this use's product = 3 (7 of 8 right)",
                "the backward pass of y is done: score 10 of 12 right (12 questions)",
            ],
        },
        Walk {
            statements: neuron(),
            printed: "o = 0.7071067812",
            quiz: ":quiz",
            questions: 27,
            answers: neuron_answers,
            stopped: false,
            shown: &[
                "✗ not right (your `1 - tanh(n)` is 0.2928932188): it is ∂tanh(n)/∂n = 1 - tanh(n)^2 = 0.5",
                "✗ not right: it is upstream × local = -1.5",
                "the backward pass of o is done: score 24 of 27 right (27 questions)",
            ],
        },
        // The MLP with calls, steps 1 to 3 of L = (o − 1)²: 2 questions at
        // step 1 (into o − 1), 3 at step 2 (next; into o), 15 at step 3
        // (next; local and product into each of out's 7 arguments): 20. With
        // o = 0.1718344641 (Python's math.tanh), ∂o/∂h1 = (1 − o²)·v1 =
        // 0.7763783335, not 1 − o² = 0.9704729169. Stopped with `q`: 6 of 7.
        Walk {
            statements: example("mlp.calc"),
            printed: "L = 0.6858",
            quiz: ":quiz L steps=1-3",
            questions: 20,
            answers: vec![
                "2*(o - 1)",
                "-1.656",
                "o - 1",
                "1",
                "-1.6563",
                "o",
                "1 - o^2 ✗",
            ],
            stopped: true,
            shown: &[
                "(your `1 - o^2` is 0.9704729169)",
                "quiz stopped after 7 of 20 questions: score 6 of 7 right",
            ],
        },
        // A matrix layer, step 4 (W @ x): ∂L/∂W = outer(g, x) is 2×3, not
        // 3×2; ∂L/∂x = Wᵀ g = [0.3780530522, 0.2662759485, −0.2814467628]
        // (tests/it/quiz.rs), so a sign off in its last element is wrong.
        // 3 of 5.
        Walk {
            statements: LAYER.to_string(),
            printed: "L = ",
            quiz: ":quiz steps=4",
            questions: 5,
            answers: vec![
                "W @ x",
                "3×2 ✗",
                "outer(upstream, x)",
                "(3)",
                "[0.378053, 0.266276, 0.281447] ✗",
            ],
            stopped: false,
            shown: &[
                "it is 2×3 (outer((2), (3))",
                "the backward pass of L is done: score 3 of 5 right (5 questions)",
            ],
        },
    ];
    for walk in walks {
        paste(&mut browser, walk.statements.trim_end());
        browser.press("Enter");
        wait_screen(&mut browser, walk.printed);
        enter(&mut browser, walk.quiz);
        answer_quiz(&mut browser, walk.questions, &walk.answers);
        if walk.stopped {
            enter(&mut browser, "q");
            browser.wait_for(&format!("{LABEL} === '>'"));
        }
        for text in walk.shown {
            wait_flat(&mut browser, text);
        }
    }
    assert_eq!(
        browser.eval("document.getElementById('quiz').getAttribute('aria-pressed')"),
        json!("false")
    );
}

#[test]
fn an_assignment_s_quiz_is_a_quiz_to_take_not_code_to_run() {
    let sealed = sealed_quiz1();
    let test = "an assignment's quiz in the playground";
    let Some((mut browser, downloads)) = open_assignment_link(test, &sealed) else {
        return;
    };
    // A quiz without a check is an assignment too: opened, nothing run.
    wait_flat(
        &mut browser,
        "(opened the assignment Quiz 1: the backward pass by hand: 2 problems above, nothing run",
    );
    let panel = browser.eval("document.querySelector('.gc-assignment').textContent");
    let panel = panel.as_str().unwrap();
    assert_contains(
        panel,
        "Quiz: predict steps 1–8 of the backward pass of o, one question at a time",
    );
    assert_contains(panel, "Quiz: predict every step of the backward pass of y");
    // The starting code is the statements before `:quiz`: no `:quiz` line,
    // no answer, no line for work (the answers are typed at the prompt).
    let code = browser
        .eval("Array.from(document.querySelectorAll('.gc-problem pre')).map(p => p.textContent)");
    assert_eq!(
        code,
        json!([
            "x1 = 2; x2 = 0; w1 = -3; w2 = 1; b = 6.8813735870195432\nn = x1*w1 + x2*w2 + b\no = tanh(n)",
            "a = 2; y = a*a + a"
        ])
    );
    // "Start the quiz" runs the problem's statements and its `:quiz`: the
    // fan-out's first three answers (the + passes 1: local 1 right, product
    // 1 × 1 = 1 answered 2, wrong; local 1 right).
    click_in_problem(&mut browser, "Problem 2: a fan-out", "Start the quiz");
    wait_flat(&mut browser, "quiz 1/12 · step 1 of 3 · y = a*a + a");
    answer_quiz(&mut browser, 12, &["1", "2 ✗", "1"]);
    // Problem 1's button while that quiz runs: it stops (the score so far),
    // and the neuron's quiz of steps 1–8 (25 questions: 2 + 5 + 1 + 5 + 5 +
    // 1 + 1 + 5, tests/it/quiz.rs) starts; its first answer right.
    click_in_problem(
        &mut browser,
        "Problem 1: a neuron, steps 1 to 8",
        "Start the quiz",
    );
    wait_flat(
        &mut browser,
        "quiz stopped after 3 of 12 questions: score 2 of 3 right",
    );
    wait_flat(&mut browser, "quiz 1/25 · step 1 of 10 · o");
    answer_quiz(&mut browser, 25, &[NEURON_ANSWERS[0]]);
    enter(&mut browser, "q");
    wait_flat(
        &mut browser,
        "quiz stopped after 1 of 25 questions: score 1 of 1 right",
    );
    browser.wait_for(&format!("{LABEL} === '>'"));
    browser.wait_for("document.body.getAttribute('data-busy') === 'no'");
    // The transcript holds both quizzes' scores and reruns to them.
    browser.eval("Array.from(document.querySelectorAll('.gc-assignment-head button')).find(b => b.textContent === 'Transcript .jsonl').click(), true");
    let name = "quiz-1-the-backward-pass-by-hand.transcript.jsonl";
    let jsonl = String::from_utf8(downloaded(&mut browser, downloads.path(), name)).unwrap();
    let scores: Vec<(u64, u64, u64)> = json_lines(&jsonl)
        .iter()
        .filter(|e| e["kind"] == "quiz_score")
        .map(|e| {
            let n = |k: &str| e[k].as_u64().unwrap();
            (n("correct"), n("answered"), n("questions"))
        })
        .collect();
    assert_eq!(scores, [(2, 3, 12), (1, 1, 25)], "{jsonl}");
    let rerun = output_of(&[
        "--check-transcript",
        downloads.path().join(name).to_str().unwrap(),
    ]);
    assert_eq!(rerun.status.code(), Some(0), "{}", stdout_of(&rerun));
    assert_contains(&stdout_of(&rerun), "reproduces: ");
}
