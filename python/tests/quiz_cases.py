"""The quiz's cases shared by test_quiz.py and test_quiz_kernel.py: the
examples and the right answers, worked out by hand (never copied from
gradcalc's output)."""

import os

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def example(name):
    """examples/``name`` without its ``:grad`` line."""
    with open(os.path.join(EXAMPLES, name), encoding="utf-8") as f:
        return "\n".join(line for line in f.read().splitlines() if not line.startswith(":grad"))


# The neuron's 27 questions answered right. By hand: n = 2·(−3) + 0·1 +
# 6.8813735870 = atanh(1/√2), o = 1/√2, ∂o/∂n = 1 − o² = 0.5; each + passes
# 0.5 on (local 1); x2*w2: x2 gets w2 = 1 (0.5), w2 gets x2 = 0 (0);
# x1*w1: x1 gets w1 = −3 (−1.5), w1 gets x1 = 2 (1). `b` names the leaf b
# (a variable there: `back` goes back).
NEURON = ["1 - tanh(n)^2", "0.5",
          "n", "1", "0.5", "1", "0.5",
          "b",
          "x1*w1 + x2*w2", "1", "0.5", "1", "0.5",
          "x2*w2", "w2", "0.5", "x2", "0",
          "w2", "x2",
          "x1*w1", "w1", "-1.5", "2", "1",
          "w1", "x1"]

# y = a*a + a at a = 2, its 12 questions: step 1 (the +: local 1 and
# product 1 into a*a and into a), step 2 (next a*a; into each operand a:
# local a = 2, product 2, a's gradient after it: 1 + 2 = 3, then 3 + 2 =
# 5 = 2a + 1), step 3 (next: a).
FAN_OUT = ["1", "1", "1", "1", "a*a", "a", "2", "3", "a", "2", "5", "a"]

# A matrix layer, W 2×3: W @ x + b = [0.6 + 0.1, −0.4 − 0.1] = [0.7, −0.5].
LAYER = ("W = [[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]\nx = [1, 2, 3]\nb = [0.1, -0.1]\n"
         "L = sum(tanh(W @ x + b))")
