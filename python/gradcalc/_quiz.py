"""``gradcalc.quiz``: practise the backward pass in a notebook.

A front end over the session's ``:quiz`` (docs/repl.md): it runs ``:quiz``
in a ``Session``, shows each ``quiz_question`` event, asks for an answer
(``input()`` in a notebook, or the next of ``answers``), runs the answer in
the session and shows the ``quiz_verdict`` events, until the ``quiz_score``.
It reads only the events' fields (docs/json.md), never gradcalc's English.
Run in the notebook's session (``session=gradcalc.session()``, as an
assignment's quiz cell runs it), what it runs — the source, the ``:quiz``
line and each answer — is part of ``gradcalc.transcript()``.
"""

import math as _math


class QuizResult:
    """What a quiz ended with: ``correct`` (right answers), ``answered``,
    ``questions`` (in the quiz), ``finished`` (every question answered),
    and ``verdicts`` (each ``quiz_verdict`` event, in order)."""

    def __init__(self, score, verdicts):
        self.correct = score["correct"]
        self.answered = score["answered"]
        self.questions = score["questions"]
        self.finished = score["finished"]
        self.verdicts = verdicts

    def __repr__(self):
        return (f"QuizResult(correct={self.correct}, answered={self.answered}, "
                f"questions={self.questions}, finished={self.finished})")


def _number(x):
    if isinstance(x, str):  # "inf", "-inf", "nan"
        return x
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return str(int(x))
    return f"{x:.10g}"


def _value(v):
    """A ``{value, shape?}`` of an event as text: a number, or nested lists
    with the shape after them."""
    if v is None:
        return ""
    value = v["value"]

    def nested(x):
        if isinstance(x, list):
            return "[" + ", ".join(nested(y) for y in x) + "]"
        return _number(x)

    if "shape" in v and v["shape"]:
        return f"{nested(value)}  ({'×'.join(str(n) for n in v['shape'])})"
    return nested(value)


_ASKS = {
    "next": lambda q: "which node is next in reverse topological order?",
    "local": lambda q: f"the local derivative {q['partial']} = ? (a number or a formula)",
    "product": lambda q: (f"upstream {_value(q['upstream'])} × local {_value(q['local'])} = ? "
                          f"(what {q['input']} receives)"),
    "accumulated": lambda q: (f"{q['input']} has {_value(q['before'])} so far; use {q['uses'][0]} of "
                              f"{q['uses'][1]} adds {_value(q['local'])}: its gradient after it = ?"),
    "shape": lambda q: (f"upstream = {_value(q['upstream'])}; {q['partial']} += {q['rule']}: "
                        "its shape? (e.g. 2×3, 3, ())"),
    "numbers": lambda q: f"{q['partial']} += {q['rule']}: its numbers? (a literal, or the rule with `upstream`)",
}


def _question_text(q):
    head = f"quiz {q['number']}/{q['questions']} · step {q['step']} of {q['steps']}"
    if q["node"] is not None:
        head += f" · {q['node']}"
    return f"{head}: {_ASKS[q['ask']](q)}"


def _verdict_text(v):
    tally = f"({v['tally']['correct']} of {v['tally']['answered']} right)"
    if v["again"]:
        return f"? {v['reason']} (not counted: answer again)"
    if v["node"] is not None:
        right = v["node"]
    elif v["shape"] is not None:
        right = f"{v['shape']} ({v['rule']})" if v["rule"] else v["shape"]
    else:
        right = _value(v["expected"])
        if v["rule"] and v["ask"] == "local" and not _is_number(v["rule"]):
            right = f"{v['partial']} = {v['rule']} = {right}"
        elif v["rule"] and v["ask"] != "local":
            right = f"{v['rule']} = {right}"
        elif v["partial"]:
            right = f"{v['partial']} = {right}"
    if v["correct"]:
        return f"✓ right: {right} {tally}"
    if v["shown"]:
        return f"• it is {right} {tally}"
    yours = f" (your `{v['answer']}` is {_value(v['got'])})" if v["got"] is not None else ""
    return f"✗ not right{yours}: it is {right} {tally}"


def _is_number(text):
    try:
        return not _math.isnan(float(text))
    except ValueError:
        return False


def _score_text(s):
    how = (f"the backward pass of {s['of']} is done" if s["finished"]
           else f"quiz stopped after {s['answered']} of {s['questions']} questions")
    return f"{how}: score {s['correct']} of {s['answered']} right ({s['questions']} questions)"


def quiz(source=None, answers=None, *, session=None, output=None, steps=None, rtol=None,
         command=None, ask=None, show=print):
    """Practise the backward pass of the output: ``:quiz`` asks, step by
    step in reverse topological order, which node is next, each local
    derivative (a number, or a formula evaluated in the session:
    ``"1 - tanh(n)^2"``), upstream × local, the gradient after accumulation
    at a fan-out, and for a tensor op the shape of what each operand
    receives (``"2x3"``) before its numbers (``"outer(upstream, x)"``).

    - ``source``: statements run first (in ``session``, or a new one).
    - ``answers``: the answers, in order (a list of strings); without it
      each is asked with ``ask(prompt)`` (``input`` by default, which a
      notebook shows as a box). ``"?"`` shows an answer (counted as not
      right), ``"b"`` goes back a question, ``"q"`` stops (``"back"`` and
      ``"stop"`` where ``b`` or ``q`` is a variable); when ``answers`` runs
      out, or ``ask`` raises (Ctrl-C), the quiz stops as with ``"stop"``.
    - ``output``: the variable whose backward pass is asked (made the
      output); ``steps``: a step ``k`` or a pair ``(a, b)``, the steps asked
      about; ``rtol``: the relative tolerance of numbers (1e-3: four
      significant digits are enough). Or ``command``: the ``:quiz`` line
      itself, as an assignment writes it (``":quiz b steps=1-2"``), in
      place of those three.
    - ``session``: where it runs (a new ``Session`` by default); in the
      notebook's (``gradcalc.session()``) the source, the ``:quiz`` line and
      the answers are recorded for ``gradcalc.transcript()``.
    - ``show``: what each question and verdict is handed to, as a line
      (``print`` by default).

    Returns a ``QuizResult``. Raises ``gradcalc.Error`` when ``source`` or
    ``:quiz`` fails (no output, steps out of range), ``ValueError`` when
    ``command`` is not a ``:quiz`` line or comes with ``output``, ``steps``
    or ``rtol``."""
    from . import Error, Session, _SESSION
    from ._homework import _note_input

    s = session if session is not None else Session()
    # The notebook's session: what runs in it is part of its transcript.
    note = _note_input if s is _SESSION else (lambda source: None)
    if command is None:
        command = ":quiz"
        if output is not None:
            command += f" {output}"
        if steps is not None:
            first, last = (steps, steps) if isinstance(steps, int) else steps
            command += f" steps={int(first)}-{int(last)}"
        if rtol is not None:
            command += f" rtol={float(rtol)!r}"
    elif output is not None or steps is not None or rtol is not None:
        raise ValueError("give the quiz as `command` or as output, steps and rtol, not both")
    elif "\n" in command or command.split()[:1] != [":quiz"]:
        raise ValueError(f"`{command}` is not a `:quiz` line (e.g. \":quiz b steps=1-2\")")
    if source is not None:
        note(source)
        s.run(source, check=True)
    note(command)
    events = s.run(command, check=True)
    given = iter(answers) if answers is not None else None
    verdicts = []
    while True:
        for event in events:
            kind = event.get("kind")
            if kind == "quiz_verdict":
                verdicts.append(event)
                show(_verdict_text(event))
            elif kind == "quiz_score":
                show(_score_text(event))
                return QuizResult(event, verdicts)
            elif kind == "quiz_question":
                show(_question_text(event))
                question = event
            elif kind == "error":
                raise Error.from_event(event)
        prompt = f"quiz {question['number']}/{question['questions']}> "
        if given is not None:
            # `stop` stops even where `q` is a variable (the event's keys).
            answer = next(given, "stop")
        else:
            try:
                answer = (ask or input)(prompt)
            except BaseException:
                # Interrupted while asking (Ctrl-C, no input): the quiz
                # stops, so that the session's next statements are not
                # taken for answers.
                note("stop")
                for event in s.run("stop", origin="<answer>"):
                    if event.get("kind") == "quiz_score":
                        show(_score_text(event))
                raise
        # One answer is one line; an empty one asks to see the answer.
        answer = " ".join(str(answer).split()) or "?"
        note(answer)
        events = s.run(answer, origin="<answer>")
