//! `:quiz` through the binary (piped standard input, `--json`, a file with
//! its transcript) and through a pseudo-terminal: the neuron, a fan-out, the
//! MLP with calls and a matrix layer. Every expected number is worked out by
//! hand (or with Python's `math`, as said) in the comments, never copied
//! from gradcalc's output.

use serde_json::Value;

use crate::util::{
    assert_close, assert_contains, folder_with, in_crate, json_lines, json_number, output_of,
    output_with_stdin, stderr_of, stdout_of,
};

/// examples/`name` without its `:grad` line.
pub(crate) fn example(name: &str) -> String {
    std::fs::read_to_string(in_crate(&format!("examples/{name}")))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with(":grad"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The neuron of examples/neuron.calc without its `:grad` line.
pub(crate) fn neuron() -> String {
    example("neuron.calc")
}

/// The `quiz_*` events of `gradcalc --json` run on `script` piped in.
fn quiz_events(script: &str) -> Vec<Value> {
    let output = output_with_stdin(&["--json"], script);
    json_lines(&stdout_of(&output))
        .into_iter()
        .filter(|e| e["kind"].as_str().is_some_and(|k| k.starts_with("quiz_")))
        .collect()
}

/// The events of `kind` among `events`.
fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["kind"] == kind).collect()
}

/// The right answers to the neuron's 27 questions, in the order asked, as a
/// student types them (formulas and numbers). By hand: n = 2·(−3) + 0·1 +
/// 6.8813735870 = 0.8813735870 = atanh(1/√2), so o = 1/√2 and
/// ∂o/∂n = 1 − o² = 0.5; every + passes 0.5 on with local 1; x2*w2 gives x2
/// w2 = 1 (0.5·1 = 0.5) and w2 x2 = 0 (0.5·0 = 0); x1*w1 gives x1 w1 = −3
/// (0.5·(−3) = −1.5) and w1 x1 = 2 (0.5·2 = 1).
pub(crate) const NEURON_ANSWERS: [&str; 27] = [
    // step 1, o = tanh(n): local, product
    "1 - tanh(n)^2",
    "0.5",
    // step 2: n; into x1*w1 + x2*w2 (local, product), into b
    "n",
    "1",
    "0.5",
    "1",
    "0.5",
    // step 3: the leaf b (`b` is an answer here: b is a variable, so
    // `back` goes back)
    "b",
    // step 4: x1*w1 + x2*w2 (named by its expression); into x1*w1, x2*w2
    "x1*w1 + x2*w2",
    "1",
    "0.5",
    "1",
    "0.5",
    // step 5: x2*w2; into x2 (local w2 = 1), into w2 (local x2 = 0)
    "x2 * w2",
    "w2",
    "0.5",
    "x2",
    "0",
    // steps 6, 7: the leaves w2, x2
    "w2",
    "x2",
    // step 8: x1*w1; into x1 (local w1 = −3), into w1 (local x1 = 2)
    "x1*w1",
    "w1",
    "-1.5",
    "2",
    "1",
    // steps 9, 10: the leaves w1, x1
    "w1",
    "x1",
];

#[test]
fn the_neuron_is_quizzed_step_by_step_through_piped_input() {
    let mut answers = NEURON_ANSWERS.map(str::to_string);
    // One wrong answer: x1 receives 0.5 × (−3) = −1.5, not 1.5.
    answers[22] = "1.5".to_string();
    let script = format!("{}\n:quiz\n{}\n", neuron(), answers.join("\n"));
    let events = quiz_events(&script);
    let questions = of_kind(&events, "quiz_question");
    assert_eq!(questions.len(), 27);
    assert_eq!(questions[0]["ask"], "local");
    assert_eq!(questions[0]["partial"], "∂tanh(n)/∂n");
    // A `next` question does not name the node it asks for.
    assert_eq!(questions[2]["ask"], "next");
    assert_eq!(questions[2]["node"], Value::Null);
    assert_eq!(
        questions[0]["keys"],
        serde_json::json!({"back": "back", "stop": "q"})
    );
    let verdicts = of_kind(&events, "quiz_verdict");
    let wrong: Vec<usize> = verdicts
        .iter()
        .filter(|v| v["correct"] == false)
        .map(|v| v["number"].as_u64().unwrap() as usize)
        .collect();
    assert_eq!(wrong, [23]);
    // The wrong answer's verdict gives the number: 0.5 × (−3) = −1.5.
    let v = verdicts[22];
    assert_eq!(v["ask"], "product");
    assert_close(json_number(&v["expected"]["value"]).unwrap(), -1.5, 1e-12);
    assert_eq!(json_number(&v["got"]["value"]), Some(1.5));
    // The formula answer is evaluated at the point: 1 − o² = 0.5.
    assert_eq!(verdicts[0]["rule"], "1 - tanh(n)^2");
    assert_close(
        json_number(&verdicts[0]["got"]["value"]).unwrap(),
        0.5,
        1e-12,
    );
    let score = of_kind(&events, "quiz_score");
    assert_eq!(score.len(), 1);
    assert_eq!(
        (
            &score[0]["correct"],
            &score[0]["answered"],
            &score[0]["finished"]
        ),
        (&Value::from(26), &Value::from(27), &Value::from(true))
    );
}

#[test]
fn a_fan_out_asks_for_the_gradient_after_each_accumulation() {
    // b = a*a + a at a = 2: a gets 1 from the +, then 2 from each operand
    // of a*a (upstream 1 × local a = 2): 1 → 3 → 5 = 2a + 1.
    let events = quiz_events(
        "a = 2; b = a*a + a\n:quiz\n1\n1\n1\n1\na*a\na\n2\n3\nback\nback\n?\n3\na\n2\n5\na\n",
    );
    let questions = of_kind(&events, "quiz_question");
    // Questions 8 and 11 (question 8 asked three times: `b` came back to
    // it, and it followed question 7 again).
    let accumulated: Vec<&&Value> = questions
        .iter()
        .filter(|q| q["ask"] == "accumulated")
        .collect();
    let numbers: Vec<u64> = accumulated
        .iter()
        .map(|q| q["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [8, 8, 8, 11]);
    assert_eq!(json_number(&accumulated[0]["before"]["value"]), Some(1.0));
    assert_eq!(accumulated[0]["uses"], serde_json::json!([2, 3]));
    let verdicts = of_kind(&events, "quiz_verdict");
    // `back` twice (b is a variable here, so `b` would be an answer) went
    // back from question 9 to 7: question 8 was answered again; `?` at
    // question 7 showed 2 (counted as not right).
    let numbers: Vec<u64> = verdicts
        .iter()
        .map(|v| v["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6, 7, 8, 7, 8, 9, 10, 11, 12]);
    let after: Vec<f64> = verdicts
        .iter()
        .filter(|v| v["ask"] == "accumulated")
        .map(|v| json_number(&v["expected"]["value"]).unwrap())
        .collect();
    assert_eq!(after, [3.0, 3.0, 5.0]);
    let shown = verdicts.iter().find(|v| v["shown"] == true).unwrap();
    assert_eq!(shown["number"], 7);
    let score = of_kind(&events, "quiz_score")[0];
    // 12 questions; only the `?` one is not right.
    assert_eq!(
        (&score["correct"], &score["questions"]),
        (&Value::from(11), &Value::from(12))
    );
}

#[test]
fn the_mlp_s_calls_are_one_step_each_and_a_formula_answers_them() {
    let mlp = std::fs::read_to_string(in_crate("examples/mlp.calc")).unwrap();
    // L = (o − 1)² with o = 0.1718344641 (the example's, by hand with
    // Python's math.tanh): ∂L/∂(o − 1) = 2(o − 1) = −1.6563310718; the call
    // out(…) = tanh(h1 v1 + … + c) gives ∂o/∂h1 = (1 − o²)·v1 =
    // 0.9704729169 · 0.8 = 0.7763783336.
    let script = format!(
        "{mlp}\n:quiz L steps=1-3\n2*(o - 1)\n-1.656\no - 1\n1\n-1.6563\no\n(1 - o^2)*v1\nq\n"
    );
    let events = quiz_events(&script);
    let verdicts = of_kind(&events, "quiz_verdict");
    assert!(
        verdicts.iter().all(|v| v["correct"] == true),
        "{verdicts:?}"
    );
    assert_close(
        json_number(&verdicts[0]["expected"]["value"]).unwrap(),
        -1.6563310718,
        1e-9,
    );
    assert_close(
        json_number(&verdicts[6]["expected"]["value"]).unwrap(),
        0.7763783336,
        1e-9,
    );
    assert_eq!(
        verdicts[6]["partial"],
        "∂out(h1, h2, h3, v1, v2, v3, c)/∂h1"
    );
    // The call is named by its node or its call.
    assert_eq!(verdicts[5]["node"], "o = out(h1, h2, h3, v1, v2, v3, c)");
    let score = of_kind(&events, "quiz_score")[0];
    assert_eq!(score["finished"], false);
    assert_eq!(
        (&score["correct"], &score["answered"]),
        (&Value::from(7), &Value::from(7))
    );
}

/// A matrix layer, W 2×3: W @ x = [0.1 − 0.4 + 0.9, 0.4 + 1 − 1.8] =
/// [0.6, −0.4]; + b = [0.7, −0.5].
pub(crate) const LAYER: &str = "W = [[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]\nx = [1, 2, 3]\nb = [0.1, -0.1]\nL = sum(tanh(W @ x + b))\n";

#[test]
fn a_matrix_layer_asks_for_the_shape_before_the_numbers() {
    // Step 4 is W @ x, its upstream g = 1 − tanh([0.7, −0.5])² =
    // [0.6347395900, 0.7864477330] (Python's math.tanh). ∂L/∂W = outer(g, x)
    // is 2×3 (not 3×2); ∂L/∂x = Wᵀ g = [0.1·0.63474 + 0.4·0.78645,
    // −0.2·0.63474 + 0.5·0.78645, 0.3·0.63474 − 0.6·0.78645] =
    // [0.3780530522, 0.2662759485, −0.2814467628].
    let script = format!(
        "{LAYER}:quiz steps=4\nW @ x\n3×2\nouter(upstream, x)\n(3)\n[0.378053, 0.266276, -0.281447]\n"
    );
    let events = quiz_events(&script);
    let questions = of_kind(&events, "quiz_question");
    assert_eq!(questions[1]["ask"], "shape");
    assert_eq!(questions[1]["rule"], "outer(upstream, x)");
    assert_eq!(questions[1]["partial"], "∂L/∂W");
    let verdicts = of_kind(&events, "quiz_verdict");
    let correct: Vec<bool> = verdicts.iter().map(|v| v["correct"] == true).collect();
    assert_eq!(correct, [true, false, true, true, true]);
    assert_eq!(verdicts[1]["shape"], "2×3");
    let numbers = &verdicts[2]["expected"];
    assert_eq!(numbers["shape"], serde_json::json!([2, 3]));
    let by_hand = [
        [0.6347395900, 1.2694791800, 1.9042187699],
        [0.7864477330, 1.5728954659, 2.3593431989],
    ];
    for (row, expected) in numbers["value"].as_array().unwrap().iter().zip(by_hand) {
        for (got, want) in row.as_array().unwrap().iter().zip(expected) {
            assert_close(json_number(got).unwrap(), want, 1e-9);
        }
    }
    let score = of_kind(&events, "quiz_score")[0];
    assert_eq!(
        (&score["correct"], &score["questions"]),
        (&Value::from(4), &Value::from(5))
    );
}

#[test]
fn a_wrong_answer_shows_the_rule_and_the_number_and_a_command_ends_the_quiz() {
    let output = output_with_stdin::<&str>(
        &[],
        format!("{}\n:quiz\n1 - tanh(n)\nnope\n:vars\n", neuron()),
    );
    let text = stdout_of(&output);
    // 1 − tanh(n) = 1 − 1/√2 = 0.2928932188 is not 1 − tanh(n)² = 0.5.
    assert_contains(
        &text,
        "✗ not right (your `1 - tanh(n)` is 0.2928932188): it is ∂tanh(n)/∂n = 1 - tanh(n)^2 = 0.5",
    );
    // An answer that does not evaluate is not counted: asked again.
    assert_contains(&text, "(not counted: answer again)\nquiz 2/27");
    assert_contains(
        &text,
        "quiz stopped after 1 of 27 questions: score 0 of 1 right",
    );
    // `:vars` ran after the score.
    assert_contains(&text, "w1 = -3");
}

#[test]
fn an_assignment_s_quiz_is_scored_in_the_transcript_which_reruns() {
    // A TA's "predict steps 1–2 of b = a*a + a": 4 questions at step 1
    // (local and product for each input) and 7 at step 2 (next, then local,
    // product and accumulated for each of a's two uses there).
    let (dir, path) = folder_with(
        "quiz.calc",
        "# Quiz 1\n## Problem 1: a fan-out\na = 2; b = a*a + a\n:quiz b steps=1-2\n1\n1\n1\n1\na*a\na\n2\n2\n2\n2\n5\n",
    );
    let transcript = crate::util::gradcalc()
        .current_dir(dir.path())
        .args(["--transcript", "jsonl", path.to_str().unwrap()])
        .output()
        .unwrap();
    let lines = json_lines(&stdout_of(&transcript));
    let score = lines.iter().find(|l| l["kind"] == "quiz_score").unwrap();
    // The 8th answer 2 is wrong: a's gradient after the second use is
    // 1 + 2 = 3.
    assert_eq!(
        (&score["correct"], &score["answered"], &score["questions"]),
        (&Value::from(10), &Value::from(11), &Value::from(11))
    );
    let saved = dir.path().join("student.jsonl");
    std::fs::write(&saved, stdout_of(&transcript)).unwrap();
    let check = crate::util::output_of(&["--check-transcript", saved.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout_of(&check));
    assert_contains(&stdout_of(&check), "reproduces");
}

#[test]
fn the_terminal_asks_at_a_quiz_prompt_and_goes_back_with_b() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = crate::pty::Repl::start(state.path());
    repl.line("a = 2; y = a*a + a", "y = 6");
    repl.prompt();
    // 12 questions (see the fan-out test); the first is ∂(a*a + a)/∂(a*a).
    repl.converse(&[
        (
            ":quiz",
            &[
                "quiz 1/12 · step 1 of 3 · y = a*a + a: the local derivative",
                "`b` goes back a question, `q` stops",
                "quiz 1/12> ",
            ],
        ),
        ("1", &["✓ right", "quiz 2/12> "]),
        ("b", &["quiz 1/12 · step 1 of 3", "quiz 1/12> "]),
        // Back at the first question, 2 is wrong (the + passes 1).
        ("2", &["✗ not right", "(0 of 1 right)", "quiz 2/12> "]),
        (
            "q",
            &["quiz stopped after 1 of 12 questions: score 0 of 1 right"],
        ),
    ]);
    repl.prompt();
    // The session is as before: y is 2·2 + 2 = 6.
    repl.line("y + 0", "6");
    repl.leave();
}

#[test]
fn the_playground_s_quiz_button_starts_and_stops_a_quiz_of_a_matrix_layer() {
    use crate::playground::{READY, SCREEN, enter, playground, wait_screen};
    let Some((mut browser, url)) = playground("the playground's quiz") else {
        return;
    };
    browser.open(&url, (1366, 768), READY);
    let label = "document.querySelector('#prompt label').textContent";
    let pressed = "document.getElementById('quiz').getAttribute('aria-pressed')";
    // The output wraps to the pane: wait for short pieces, and count the
    // verdicts.
    let verdicts = |browser: &mut crate::browser::Browser, mark: &str, n: usize| {
        browser.wait_for(&format!("{SCREEN}.split({mark:?}).length === {}", n + 1));
    };
    enter(&mut browser, "a = 2; b = a*a + a");
    wait_screen(&mut browser, "b = 6");
    browser.click("#quiz");
    wait_screen(&mut browser, "quiz 1/12 · step 1 of 3 · b = a*a + a");
    browser.wait_for(&format!("{label} === 'quiz 1/12>'"));
    assert_eq!(browser.eval(pressed), serde_json::json!("true"));
    // The + passes 1 to a*a: 1 is right, then upstream 1 × local 1 is not 3.
    enter(&mut browser, "1");
    verdicts(&mut browser, "✓ right", 1);
    enter(&mut browser, "3");
    verdicts(&mut browser, "✗ not right", 1);
    browser.wait_for(&format!("{label} === 'quiz 3/12>'"));
    // Pressed again, the button stops the quiz (`q`): the score so far.
    browser.click("#quiz");
    wait_screen(&mut browser, "quiz stopped after 2 of 12");
    browser.wait_for(&format!("{label} === '>'"));
    assert_eq!(browser.eval(pressed), serde_json::json!("false"));
    // A matrix layer's step 4 (see the test above): W @ x, ∂L/∂W is 2×3.
    enter(&mut browser, &LAYER.replace('\n', "; "));
    wait_screen(&mut browser, "L = ");
    enter(&mut browser, ":quiz steps=4");
    wait_screen(&mut browser, "quiz 1/5 · step 4 of 4");
    enter(&mut browser, "W @ x");
    verdicts(&mut browser, "✓ right", 2);
    enter(&mut browser, "2x3");
    verdicts(&mut browser, "✓ right", 3);
    wait_screen(&mut browser, "2×3 (outer((2), (3))");
}

/// The sealed file of examples/quiz1_key.calc: its answers left out.
pub(crate) fn sealed_quiz1() -> String {
    let key = in_crate("examples/quiz1_key.calc");
    let output = output_of(&["--seal", key.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    stdout_of(&output)
}

#[test]
fn an_assignment_lists_a_quiz_as_a_quiz_to_take_not_as_starting_code() {
    let sealed = sealed_quiz1();
    // The key's answers (its solution blocks) are not in the sealed file.
    assert_eq!(
        sealed.matches("# (your work here)\n").count(),
        2,
        "{sealed}"
    );
    assert!(
        !sealed.lines().any(|l| l == "a*a" || l == "-1.5"),
        "{sealed}"
    );
    let (dir, path) = folder_with("quiz1.calc", &sealed);
    let listed = stdout_of(&output_of(&["--assignment", path.to_str().unwrap()]));
    // Each problem's code is its statements before `:quiz`; the quiz is
    // listed as one, with the line that starts it.
    assert_contains(
        &listed,
        "```\nx1 = 2; x2 = 0; w1 = -3; w2 = 1; b = 6.8813735870195432\nn = x1*w1 + x2*w2 + b\no = tanh(n)\n```\n\n- quiz: predict steps 1–8 of the backward pass of o — after the code above, run `:quiz o steps=1-8` and answer each question as it is asked (`?` shows the answer)\n",
    );
    assert_contains(
        &listed,
        "```\na = 2; y = a*a + a\n```\n\n- quiz: predict every step of the backward pass of y — after the code above, run `:quiz y`",
    );
    let fenced: Vec<&str> = listed.split("```").skip(1).step_by(2).collect();
    assert_eq!(fenced.len(), 2, "{listed}");
    assert!(
        fenced
            .iter()
            .all(|code| !code.contains(":quiz") && !code.contains("your work")),
        "{listed}"
    );
    // A student's answers written after each `:quiz` line: the neuron's 25
    // questions of steps 1–8 (2 + 5 + 1 + 5 + 5 + 1 + 1 + 5) with question
    // 23 wrong (x1 receives 0.5 × (−3) = −1.5, not 1.5); the fan-out's 12
    // with question 8 wrong (a's gradient after its second use is 1 + 2 = 3,
    // not 2). Scored in the transcript, which reruns.
    let mut neuron = NEURON_ANSWERS[..25].to_vec();
    neuron[22] = "1.5";
    let fan_out = ["1", "1", "1", "1", "a*a", "a", "2", "2", "a", "2", "5", "a"];
    let student = sealed
        .replacen("# (your work here)", &neuron.join("\n"), 1)
        .replacen("# (your work here)", &fan_out.join("\n"), 1);
    let answered = dir.path().join("student.calc");
    std::fs::write(&answered, &student).unwrap();
    let transcript = output_of(&["--transcript", "jsonl", answered.to_str().unwrap()]);
    let lines = json_lines(&stdout_of(&transcript));
    let scores: Vec<(u64, u64, u64, bool)> = of_kind(&lines, "quiz_score")
        .iter()
        .map(|e| {
            let n = |k: &str| e[k].as_u64().unwrap();
            (
                n("correct"),
                n("answered"),
                n("questions"),
                e["finished"] == true,
            )
        })
        .collect();
    assert_eq!(scores, [(24, 25, 25, true), (11, 12, 12, true)]);
    let saved = dir.path().join("student.jsonl");
    std::fs::write(&saved, stdout_of(&transcript)).unwrap();
    let check = output_of(&["--check-transcript", saved.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout_of(&check));
}
