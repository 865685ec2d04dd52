"""gradcalc.quiz: the backward pass predicted step by step — the neuron, a
fan-out, the MLP with calls, a matrix layer. Every expected number is
worked out by hand (or with Python's math, as said), never copied from
gradcalc's output."""

import math

import pytest
from quiz_cases import LAYER, NEURON, example

import gradcalc


def test_the_neuron_answered_right_scores_27_of_27():
    shown = []
    result = gradcalc.quiz(example("neuron.calc"), NEURON, show=shown.append)
    assert (result.correct, result.answered, result.questions, result.finished) == (27, 27, 27, True)
    assert shown[0].startswith("quiz 1/27 · step 1 of 10 · o")
    assert shown[0].endswith(": the local derivative ∂tanh(n)/∂n = ? (a number or a formula)")
    assert shown[1] == "✓ right: ∂tanh(n)/∂n = 1 - tanh(n)^2 = 0.5 (1 of 1 right)"
    assert shown[-1] == "the backward pass of o is done: score 27 of 27 right (27 questions)"


def test_a_fan_out_accumulates_and_b_goes_back_and_input_is_asked():
    # y = a*a + a at a = 2: a's gradient 1 (the +) → 3 → 5 = 2a + 1 (each
    # use of a*a adds upstream 1 × local a = 2).
    typed = iter(["1", "1", "1", "1", "a*a", "a", "2", "4", "b", "3", "q"])
    prompts = []

    def ask(prompt):
        prompts.append(prompt)
        return next(typed)

    result = gradcalc.quiz("a = 2; y = a*a + a", ask=ask, show=lambda line: None)
    assert prompts[:3] == ["quiz 1/12> ", "quiz 2/12> ", "quiz 3/12> "]
    # After the wrong 4 (it is 1 + 2 = 3), `b` asked question 8 again.
    assert prompts[8:10] == ["quiz 9/12> ", "quiz 8/12> "]
    accumulated = [v for v in result.verdicts if v["ask"] == "accumulated"]
    assert [v["correct"] for v in accumulated] == [False, True]
    assert accumulated[0]["expected"]["value"] == 3
    assert (result.correct, result.answered, result.finished) == (8, 8, False)


def test_the_mlp_s_call_is_answered_with_a_formula_over_the_session():
    # o = 0.1718344641 (Python's math.tanh, the example's comment); L =
    # (o − 1)²: 2(o − 1) = −1.6563310718; ∂out/∂h1 = (1 − o²)·v1 =
    # 0.7763783336.
    result = gradcalc.quiz(example("mlp.calc"), ["2*(o - 1)", "-1.656", "o - 1", "1", "-1.6563",
                                                 "o", "(1 - o^2)*v1"],
                           output="L", steps=(1, 3), show=lambda line: None)
    assert result.correct == result.answered == 7 and not result.finished
    assert math.isclose(result.verdicts[6]["expected"]["value"], 0.7763783336, rel_tol=1e-9)


def test_a_matrix_layer_asks_the_shape_then_the_numbers():
    # W @ x + b = [0.7, −0.5]; g = 1 − tanh²: [0.6347395900, 0.7864477330]
    # (math.tanh); ∂L/∂W = outer(g, x) is 2×3; ∂L/∂x = Wᵀ g =
    # [0.3780530522, 0.2662759485, −0.2814467628].
    result = gradcalc.quiz(LAYER, ["W @ x", "3x2", "outer(upstream, x)", "3",
                                   "[0.378053, 0.266276, -0.281447]"],
                           steps=4, show=lambda line: None)
    assert [v["correct"] for v in result.verdicts] == [True, False, True, True, True]
    assert result.verdicts[1]["shape"] == "2×3"
    g = [1 - math.tanh(0.7) ** 2, 1 - math.tanh(-0.5) ** 2]
    numbers = result.verdicts[2]["expected"]["value"]
    for row, gi in zip(numbers, g):
        for got, xj in zip(row, [1, 2, 3]):
            assert math.isclose(got, gi * xj, rel_tol=1e-12)
    assert (result.correct, result.questions, result.finished) == (4, 5, True)


def test_no_output_is_an_error():
    with pytest.raises(gradcalc.Error):
        gradcalc.quiz("x = 1; y = 2", [])
