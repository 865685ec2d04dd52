"""gradcalc.quiz in a real kernel (jupyter_client), as a student takes it
in a notebook: each question asked in the kernel's input box (an
``input_request`` on the stdin channel, answered as a front end answers
it), right and wrong, the verdicts and the score printed in the cell — the
neuron (every question), a fan-out, the MLP with calls and a matrix layer;
then an assignment with quizzes (examples/quiz1_key.calc sealed) opened as
notebook cells, its quiz cells answered, and its transcript rerun to the
same scores.

Every expected number is worked out by hand (or with Python's math, as
said), never copied from gradcalc's output: the right answers are those of
tests/it/quiz.rs and test_quiz.py."""

import json
import pathlib

import pytest
from quiz_cases import FAN_OUT, LAYER, NEURON, example

import gradcalc

pytest.importorskip("ipykernel")
jupyter_client = pytest.importorskip("jupyter_client")

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent.parent / "examples"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    """A kernel of this Python (the package installed), its working
    directory a fresh folder; its client with stdin allowed."""
    cwd = tmp_path_factory.mktemp("kernel")
    manager = jupyter_client.KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(cwd))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)
        run(client, "import gradcalc")
        yield client, cwd
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def run(client, code, answers=()):
    """Runs ``code`` in the kernel, answering each input request with the
    next of ``answers``: what the cell printed (its streams and results) and
    the prompts asked. Fails when the cell fails, asks for more answers than
    given (they are answered ``stop``), or leaves some unasked."""
    answers = list(answers)
    prompts, printed, extra = [], [], []

    def stdin(msg):
        prompts.append(msg["content"]["prompt"])
        if answers:
            client.input(answers.pop(0))
        else:
            extra.append(msg["content"]["prompt"])
            client.input("stop")

    def output(msg):
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            printed.append(content["text"])
        elif kind in ("execute_result", "display_data"):
            printed.append(content["data"].get("text/plain", "") + "\n")
        elif kind == "error":
            printed.append("\n".join(content["traceback"]))

    reply = client.execute_interactive(code, allow_stdin=True, stdin_hook=stdin,
                                       output_hook=output, timeout=300)
    text = "".join(printed)
    assert reply["content"]["status"] == "ok", text
    assert not extra, f"asked for more answers than given: {extra}\n{text}"
    assert not answers, f"answers never asked for: {answers}\n{text}"
    return text, prompts


def test_the_neuron_every_question_in_the_kernel_s_input_box(kernel):
    client, _cwd = kernel
    # Wrong: question 1, 1 − tanh(n) = 1 − 1/√2 = 0.2928932188 where
    # ∂tanh(n)/∂n = 1 − tanh(n)² = 0.5; question 23, x1 receives 0.5 × (−3)
    # = −1.5, not 1.5. Shown: question 9. `back` after question 11 asks it
    # again. 24 of 27.
    answers = list(NEURON)
    answers[0] = "1 - tanh(n)"
    answers[8] = "?"
    answers[22] = "1.5"
    answers[11:11] = ["back", NEURON[10]]
    text, prompts = run(client, f"print(gradcalc.quiz({example('neuron.calc')!r}))", answers)
    assert prompts[:2] == ["quiz 1/27> ", "quiz 2/27> "]
    assert prompts[11:14] == ["quiz 12/27> ", "quiz 11/27> ", "quiz 12/27> "]
    assert prompts[-1] == "quiz 27/27> "
    assert ("✗ not right (your `1 - tanh(n)` is 0.2928932188): it is "
            "∂tanh(n)/∂n = 1 - tanh(n)^2 = 0.5 (0 of 1 right)") in text
    # The node of step 4 is named by its expression (after its label).
    assert "• it is " in text and "x1*w1 + x2*w2 (7 of 9 right)" in text
    assert "✗ not right (your `1.5` is 1.5): it is upstream × local = -1.5 (20 of 23 right)" in text
    assert "the backward pass of o is done: score 24 of 27 right (27 questions)" in text
    assert "QuizResult(correct=24, answered=27, questions=27, finished=True)" in text


def test_a_fan_out_accumulates_and_b_goes_back_in_the_kernel(kernel):
    client, _cwd = kernel
    # Question 8 answered 4 (it is 1 + 2 = 3), then `b` and 3; question 10
    # shown; question 11 answered 4 (it is 3 + 2 = 5). 10 of 12.
    answers = FAN_OUT[:7] + ["4", "b", "3", "2", "?", "4", "a"]
    text, prompts = run(client, 'print(gradcalc.quiz("a = 2; y = a*a + a"))', answers)
    assert prompts[7:10] == ["quiz 8/12> ", "quiz 9/12> ", "quiz 8/12> "]
    assert "✗ not right (your `4` is 4): it is the gradient so far + this use's product = 3 (7 of 8 right)" in text
    assert "✗ not right (your `4` is 4): it is the gradient so far + this use's product = 5" in text
    assert "the backward pass of y is done: score 10 of 12 right (12 questions)" in text


def test_the_mlp_s_calls_in_the_kernel(kernel):
    client, _cwd = kernel
    # Steps 1 to 3 of L = (o − 1)²: 2 questions at step 1 (into o − 1), 3 at
    # step 2 (next; into o), 15 at step 3 (next; local and product into each
    # of out's 7 arguments): 20. o = 0.1718344641 (Python's math.tanh);
    # ∂o/∂h1 = (1 − o²)·v1 = 0.7763783336, not 1 − o² = 0.9704729169.
    # Stopped with `q` after 7: 6 of 7.
    answers = ["2*(o - 1)", "-1.656", "o - 1", "1", "-1.6563", "o", "1 - o^2", "q"]
    code = f'print(gradcalc.quiz({example("mlp.calc")!r}, output="L", steps=(1, 3)))'
    text, prompts = run(client, code, answers)
    assert prompts[0] == "quiz 1/20> "
    assert "(your `1 - o^2` is 0.9704729169): it is" in text
    assert "0.776378333" in text
    assert "quiz stopped after 7 of 20 questions: score 6 of 7 right (20 questions)" in text
    assert "QuizResult(correct=6, answered=7, questions=20, finished=False)" in text


def test_a_matrix_layer_shape_then_numbers_in_the_kernel(kernel):
    client, _cwd = kernel
    # Step 4, W @ x: ∂L/∂W = outer(g, x) is 2×3, not 3×2; ∂L/∂x = Wᵀ g =
    # [0.3780530522, 0.2662759485, −0.2814467628] with g = 1 − tanh([0.7,
    # −0.5])² (math.tanh), so the last element's sign flipped is wrong. 3 of 5.
    answers = ["W @ x", "3x2", "outer(upstream, x)", "3", "[0.378053, 0.266276, 0.281447]"]
    text, prompts = run(client, f"print(gradcalc.quiz({LAYER!r}, steps=4))", answers)
    assert prompts == [f"quiz {k}/5> " for k in range(1, 6)]
    assert "✗ not right: it is 2×3 (outer((2), (3))" in text
    assert "✓ right: W @ x" in text
    assert "the backward pass of L is done: score 3 of 5 right (5 questions)" in text


def test_an_assignment_s_quizzes_are_cells_that_ask_and_a_transcript_that_reruns(kernel, tmp_path):
    client, cwd = kernel
    sealed = tmp_path / "quiz1.calc"
    sealed.write_text(gradcalc.seal(str(EXAMPLES / "quiz1_key.calc")), encoding="utf-8")
    a = gradcalc.assignment(str(sealed))
    quizzes = [p["quizzes"] for p in a.problems if p["title"]]
    assert quizzes == [
        [{"command": ":quiz o steps=1-8", "asks": "steps 1–8 of the backward pass of o"}],
        [{"command": ":quiz y", "asks": "every step of the backward pass of y"}],
    ]
    cells = a.notebook["cells"]
    problems = [cell for cell in cells if cell["metadata"].get("gradcalc")]
    # A quiz problem's cell is Python that asks, not code to run: no `:quiz`
    # line in a %%gradcalc cell, no answer, no line for work.
    assert problems[1]["source"] == (
        "# Run this cell: each question is asked in a box below (`?` shows the answer, `q` stops).\n"
        "gradcalc.quiz('a = 2; y = a*a + a', command=':quiz y', session=gradcalc.session())"
    )
    assert "%%gradcalc" not in problems[0]["source"] and "your work" not in problems[0]["source"]
    markdown = [cell["source"] for cell in cells if cell["cell_type"] == "markdown"]
    assert any("Quiz: predict steps 1–8 of the backward pass of o." in m for m in markdown)
    # The cells run in order in the kernel, the quizzes answered in its input
    # box: the neuron's 25 questions of steps 1–8 (2 + 5 + 1 + 5 + 5 + 1 + 1
    # + 5) with question 23 wrong (−1.5, not 1.5); the fan-out's 12 with
    # question 8 wrong (1 + 2 = 3, not 2).
    neuron = NEURON[:25]
    neuron[22] = "1.5"
    fan_out = FAN_OUT[:7] + ["2"] + FAN_OUT[8:]
    shown = []
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        number = cell["metadata"].get("gradcalc", {}).get("problem")
        answers = {0: neuron, 1: fan_out}.get(number, [])
        text, _prompts = run(client, cell["source"], answers)
        shown.append(text)
    assert "the backward pass of o is done: score 24 of 25 right (25 questions)" in shown[1]
    assert "the backward pass of y is done: score 11 of 12 right (12 questions)" in shown[2]
    # The last cell wrote the transcript: both scores, and it reruns.
    written = cwd / "quiz1.transcript.jsonl"
    lines = [json.loads(line) for line in written.read_text(encoding="utf-8").splitlines()]
    scores = [(e["correct"], e["answered"], e["questions"], e["finished"])
              for e in lines if e["kind"] == "quiz_score"]
    assert scores == [(24, 25, 25, True), (11, 12, 12, True)]
    rerun = gradcalc.check_transcript(str(written))
    assert rerun["reproduces"], rerun["differences"]
