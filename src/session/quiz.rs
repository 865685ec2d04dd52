//! `:quiz`: practise the backward pass. The quiz walks the steps of the
//! output's `:trace` (the one step model, [`StepModel`], over a number's
//! nodes or a vector or matrix output's) in reverse topological
//! order and, at each step, asks for what comes next before it is shown:
//!
//! - which node is next in reverse topological order (from step 2 on);
//! - for a scalar step, for each input: the local derivative (a number, or a
//!   formula evaluated in the session: `1 - tanh(n)^2`), the product
//!   upstream × local, and at a fan-out's second and later use the gradient
//!   after accumulation;
//! - for a tensor step, for each operand: the shape of what it receives
//!   (the matrix rule `outer(upstream, x)` is shown, its shape is asked),
//!   then its numbers, and at a fan-out the sum after accumulation.
//!
//! The quiz is a model of the session, not of a terminal: the questions and
//! their expected answers are made once when `:quiz` runs ([`Quiz`]); while
//! it runs, every statement the session is given is an answer
//! (`Session::quiz_input`), checked and answered by events
//! ([`QuizEvent`]: a question, a verdict, the score), which the terminal,
//! `--json`, the playground and Python show. An answer is evaluated as
//! `:expect` evaluates a quantity ([`Session::answer_of`]): in the session's
//! scope, changing nothing. `upstream` in an answer means the step's upstream
//! gradient.
//!
//! Numbers are compared as numpy's `isclose` compares them:
//! `|answer − expected| ≤ atol + rtol·|expected|` for every element, with
//! `rtol` = [`DEFAULT_RTOL`] (four significant digits are enough) unless
//! `rtol=` is given, and `atol` = [`ATOL`].

use super::boxes::Expand;
use super::command::Command;
use super::homework::{Answer, shape_text};
use super::{Event, Number, Session, SessionError, StepModel, TensorData, Value};
use crate::engine::tensor::TensorId;
use crate::syntax::{self, Span};

/// The relative tolerance of a quiz's numbers without `rtol=`: 0.1 %, so an
/// answer to four significant digits is right.
pub const DEFAULT_RTOL: f64 = 1e-3;

/// The absolute tolerance of a quiz's numbers: an answer within it of an
/// expected 0 is right.
pub const ATOL: f64 = 1e-6;

/// What a question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ask {
    /// Which node is next in reverse topological order.
    Next,
    /// The local derivative ∂node/∂input (a number or a formula).
    Local,
    /// upstream × local: what this use passes to the input.
    Product,
    /// The input's gradient after this use is added (a fan-out).
    Accumulated,
    /// The shape of what a tensor operand receives.
    Shape,
    /// The numbers of what a tensor operand receives.
    Numbers,
}

/// What a question expects.
#[derive(Debug, Clone, PartialEq)]
enum Expected {
    /// A node: the texts that name it (its label first, then the
    /// expression it computes), compared without spaces.
    Node(Vec<String>),
    /// A number or a tensor, compared within the tolerance.
    Value(Answer),
    /// A shape.
    Shape(Vec<usize>),
}

/// One question of a quiz: what it asks about and what it expects.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The step of the trace it is about (from 1).
    pub step: usize,
    /// What it asks for.
    pub ask: Ask,
    /// The step's node as the trace names it (`n`, `_7`, `W @ x`).
    pub node: String,
    /// The input (operand) the question is about, if any.
    pub input: Option<String>,
    /// The partial derivative the question is about (`∂tanh(n)/∂n`, or
    /// `∂L/∂W` for a tensor operand).
    pub partial: Option<String>,
    /// The matrix rule shown with a tensor question (`outer(upstream, x)`).
    pub rule: Option<String>,
    /// The step's upstream gradient, when the question gives it.
    pub upstream: Option<Value>,
    /// The local derivative, when the question gives it (the product's).
    pub local: Option<Value>,
    /// The input's gradient before this use (an accumulation's).
    pub before: Option<Value>,
    /// Which use of the input this is, and of how many (a fan-out).
    pub uses: Option<(u32, u32)>,
    /// What the verdict explains the answer with: the rule with its
    /// operands (`1 - tanh(n)^2`), the shapes (`outer((2), (3)) → 2×3`).
    explain: Option<String>,
    /// The expected answer.
    expected: Expected,
}

/// A quiz running in a session: its questions, the answers so far and
/// which question is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Quiz {
    /// The output's label.
    of: String,
    /// How many steps the trace has.
    steps: usize,
    /// The questions, in the order asked.
    questions: Vec<Question>,
    /// Each question's result: `None` until answered.
    results: Vec<Option<bool>>,
    /// The question asked now (an index into `questions`).
    at: usize,
    /// The relative tolerance of numbers.
    rtol: f64,
    /// The answers that go back a question and stop the quiz.
    keys: Keys,
}

/// The answers that are keys, not answers: `b` goes back a question and
/// `q` stops, unless the session has a variable of that name (the neuron's
/// bias `b` is an answer); `back` and `stop` always are keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Keys {
    /// Goes back a question: `b`, or `back` when `b` is a variable.
    pub back: &'static str,
    /// Stops the quiz: `q`, or `stop` when `q` is a variable.
    pub stop: &'static str,
}

/// The answers so far: how many were right, how many were answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    /// Right answers.
    pub correct: usize,
    /// Questions answered (right or not).
    pub answered: usize,
}

/// What a quiz reports; each serializes with its own `kind`
/// (docs/json.md).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QuizEvent {
    /// A question: what comes next in the backward pass.
    QuizQuestion {
        /// The output's label.
        of: String,
        /// The question's number, from 1.
        number: usize,
        /// How many questions the quiz has.
        questions: usize,
        /// The step of the trace it is about, from 1.
        step: usize,
        /// How many steps the trace has.
        steps: usize,
        /// What it asks for.
        ask: Ask,
        /// The step's node; `None` when the question is which node it is.
        node: Option<String>,
        /// The input the question is about.
        input: Option<String>,
        /// The partial derivative it is about.
        partial: Option<String>,
        /// The matrix rule of a tensor question.
        rule: Option<String>,
        /// The step's upstream gradient, when given.
        upstream: Option<Value>,
        /// The local derivative, when given (a product's question).
        local: Option<Value>,
        /// The input's gradient before this use (an accumulation's).
        before: Option<Value>,
        /// Which use of the input this is, and of how many.
        uses: Option<(u32, u32)>,
        /// The answers that go back and stop.
        keys: Keys,
    },
    /// An answer checked.
    QuizVerdict {
        /// The question's number, from 1.
        number: usize,
        /// What it asked for.
        ask: Ask,
        /// The answer as typed.
        answer: String,
        /// The answer is right.
        correct: bool,
        /// The answer was `?`: the right one is shown, counted as not right.
        shown: bool,
        /// The answer was not taken (it does not evaluate, or is no
        /// shape): the same question is asked again, nothing is counted.
        again: bool,
        /// Why it was not taken, or what the answer evaluated to.
        reason: Option<String>,
        /// The right node (a `next` question).
        node: Option<String>,
        /// The right shape (a `shape` question), as gradcalc writes it.
        shape: Option<String>,
        /// The right number or tensor.
        expected: Option<Value>,
        /// What the answer evaluated to, when it did.
        got: Option<Value>,
        /// The rule, with the operands' names (`1 - tanh(n)^2`), or the
        /// shapes of a tensor rule.
        rule: Option<String>,
        /// The partial derivative it was about.
        partial: Option<String>,
        /// The answers so far.
        tally: Tally,
    },
    /// The score: at the end, at `q`, or when a command ends the quiz.
    QuizScore {
        /// The output's label.
        of: String,
        /// Right answers.
        correct: usize,
        /// Questions answered.
        answered: usize,
        /// Questions in the quiz.
        questions: usize,
        /// Every question was answered (the quiz ran to its end).
        finished: bool,
    },
}

impl Question {
    /// "Which node is next?" about step `step`, whose node the trace names
    /// `node` and a student may name by any of `names`: the question the
    /// step's other questions are made from.
    fn next(step: usize, node: String, names: Vec<String>) -> Question {
        Question {
            step,
            ask: Ask::Next,
            node,
            input: None,
            partial: None,
            rule: None,
            upstream: None,
            local: None,
            before: None,
            uses: None,
            explain: None,
            expected: Expected::Node(names),
        }
    }
}

impl Quiz {
    /// The answers so far.
    pub fn tally(&self) -> Tally {
        Tally {
            correct: self.results.iter().filter(|r| **r == Some(true)).count(),
            answered: self.results.iter().filter(|r| r.is_some()).count(),
        }
    }

    /// The question asked now: its number (from 1) and how many there are.
    pub fn position(&self) -> (usize, usize) {
        (self.at + 1, self.questions.len())
    }

    /// The questions, in the order asked.
    pub fn questions(&self) -> &[Question] {
        &self.questions
    }

    /// The event asking question `at`.
    fn question_event(&self) -> Event {
        let q = &self.questions[self.at];
        Event::Quiz(QuizEvent::QuizQuestion {
            of: self.of.clone(),
            number: self.at + 1,
            questions: self.questions.len(),
            step: q.step,
            steps: self.steps,
            ask: q.ask,
            node: (q.ask != Ask::Next).then(|| q.node.clone()),
            input: q.input.clone(),
            partial: q.partial.clone(),
            rule: q.rule.clone(),
            upstream: q.upstream.clone(),
            local: q.local.clone(),
            before: q.before.clone(),
            uses: q.uses,
            keys: self.keys,
        })
    }

    /// The score event; `finished` when every question was answered.
    fn score_event(&self, finished: bool) -> Event {
        let Tally { correct, answered } = self.tally();
        Event::Quiz(QuizEvent::QuizScore {
            of: self.of.clone(),
            correct,
            answered,
            questions: self.questions.len(),
            finished,
        })
    }
}

/// An answer's text without a comment after it, trimmed.
fn answer_text(text: &str) -> &str {
    text.split('#').next().unwrap_or("").trim()
}

/// A node's name or expression without spaces and without one pair of
/// brackets around the whole.
fn node_key(text: &str) -> String {
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    unwrapped(&text).to_string()
}

/// `text` without one pair of brackets around the whole (`(x + y)`).
fn unwrapped(text: &str) -> &str {
    // The first bracket closes at the last character: it wraps the whole.
    let mut depth = 0i32;
    let wraps = text.starts_with('(')
        && text.char_indices().all(|(i, c)| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            depth > 0 || i + c.len_utf8() == text.len()
        });
    if wraps {
        &text[1..text.len() - 1]
    } else {
        text
    }
}

/// A shape as a student writes it: `2×3`, `2x3`, `(2, 3)`, `[2, 3]`, `3`,
/// `()`, `scalar`; `None` for anything else.
pub fn parse_shape(text: &str) -> Option<Vec<usize>> {
    let text = text.trim();
    if text == "scalar" {
        return Some(Vec::new());
    }
    let inner: String = text
        .chars()
        .filter(|c| !matches!(c, '(' | ')' | '[' | ']'))
        .collect();
    inner
        .split(|c: char| matches!(c, '×' | 'x' | 'X' | ',' | '*') || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .map(|w| w.parse::<usize>().ok())
        .collect::<Option<Vec<_>>>()
        .filter(|dims| dims.len() <= 2)
}

/// Whether `got` is within `atol + rtol·|expected|` of `expected`, element by
/// element (numpy's `isclose`), of the same shape.
pub fn close(got: &Answer, expected: &Answer, rtol: f64) -> bool {
    got.shape == expected.shape
        && got
            .data
            .iter()
            .zip(&expected.data)
            .all(|(g, e)| g == e || (g - e).abs() <= ATOL + rtol * e.abs())
}

/// `value` as an [`Answer`].
fn answer_of_value(value: &Value) -> Answer {
    match value {
        Value::Number(n) => Answer {
            shape: Vec::new(),
            data: vec![n.0],
        },
        Value::Tensor(t) => Answer {
            shape: t.shape.clone(),
            data: t.data.iter().map(|n| n.0).collect(),
        },
    }
}

/// `answer` as a [`Value`]: a number, or a tensor's numbers.
fn value_of_answer(answer: &Answer) -> Value {
    if answer.shape.is_empty() {
        return Value::Number(Number(answer.data.first().copied().unwrap_or(f64::NAN)));
    }
    Value::Tensor(TensorData {
        shape: answer.shape.clone(),
        data: answer.data.iter().map(|&x| Number(x)).collect(),
        summarised: false,
    })
}

/// `value` as gradcalc input that reads back to the same numbers (`[1, 2]`,
/// `(-0.5)`); `None` for a summarised tensor, whose numbers are not all kept.
fn literal(value: &Value) -> Option<String> {
    let number = |x: f64| {
        if x < 0.0 {
            format!("({x})")
        } else {
            format!("{x}")
        }
    };
    match value {
        Value::Number(n) => Some(number(n.0)),
        Value::Tensor(t) if t.summarised => None,
        Value::Tensor(t) => {
            let items: Vec<String> = t.data.iter().map(|n| number(n.0)).collect();
            Some(match t.shape[..] {
                [] => items.first().cloned().unwrap_or_default(),
                [_] => format!("[{}]", items.join(", ")),
                [_, columns] => {
                    let rows: Vec<String> = items
                        .chunks(columns.max(1))
                        .map(|row| format!("[{}]", row.join(", ")))
                        .collect();
                    format!("[{}]", rows.join(", "))
                }
                _ => return None,
            })
        }
    }
}

/// `text` with each name `upstream` replaced by `with`.
fn substitute_upstream(text: &str, with: &str) -> String {
    const NAME: &str = "upstream";
    let is_name_char = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(NAME) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + NAME.len()..].chars().next();
        out.push_str(&rest[..i]);
        if before.is_some_and(is_name_char) || after.is_some_and(is_name_char) {
            out.push_str(NAME);
        } else {
            out.push_str(with);
        }
        rest = &rest[i + NAME.len()..];
    }
    out.push_str(rest);
    out
}

/// The texts that name the node of a scalar step: its label, and the
/// expression it computes as its partials write it (`x1*w1 + x2*w2`).
fn scalar_node_names(step: &super::TraceStep) -> Vec<String> {
    let mut names = vec![step.row.node.label()];
    if let Some(c) = step.contributions.first()
        && let Some(of) = c.partial.strip_prefix('∂')
        && let Some(end) = of.rfind("/∂")
    {
        names.push(unwrapped(&of[..end]).to_string());
    }
    names
}

/// The questions of steps `from..=to` of a scalar output's step model.
fn questions_of_scalar_steps(model: &StepModel, (from, to): (usize, usize)) -> Vec<Question> {
    let mut questions = Vec::new();
    for k in from..=to {
        let step = &model.steps[k - 1];
        // The node as a question names it: `_7 = x1*w1 + x2*w2`, `n = …`.
        let names = scalar_node_names(step);
        let node = names.join(" = ");
        let upstream = Value::Number(step.upstream);
        let base = Question::next(k, node, names);
        if k >= 2 {
            questions.push(base.clone());
        }
        for c in &step.contributions {
            let about = Question {
                input: Some(c.input.label()),
                partial: Some(c.partial.clone()),
                ..base.clone()
            };
            questions.push(Question {
                ask: Ask::Local,
                explain: c.formula.clone(),
                expected: Expected::Value(answer_of_value(&Value::Number(c.local))),
                ..about.clone()
            });
            questions.push(Question {
                ask: Ask::Product,
                upstream: Some(upstream.clone()),
                local: Some(Value::Number(c.local)),
                explain: Some("upstream × local".to_string()),
                expected: Expected::Value(answer_of_value(&Value::Number(c.product))),
                ..about.clone()
            });
            if c.use_number >= 2 {
                questions.push(Question {
                    ask: Ask::Accumulated,
                    upstream: Some(upstream.clone()),
                    local: Some(Value::Number(c.product)),
                    before: Some(Value::Number(c.before)),
                    uses: Some((c.use_number, c.use_count)),
                    explain: Some("the gradient so far + this use's product".to_string()),
                    expected: Expected::Value(answer_of_value(&Value::Number(c.after))),
                    ..about
                });
            }
        }
    }
    questions
}

/// The questions of steps `from..=to` of a tensor output's step model.
fn questions_of_tensor_steps(
    model: &StepModel<TensorId>,
    (from, to): (usize, usize),
) -> Vec<Question> {
    let mut questions = Vec::new();
    for k in from..=to {
        let step = &model.steps[k - 1];
        let upstream = Value::Tensor(step.upstream.clone());
        // A call shown as one step is also named as written, as a call of
        // numbers is (`tanh(W @ x + b) = layer(W, x, b)`), or by its label.
        let mut names = vec![step.node.clone()];
        if let Some(call) = &step.call {
            names.push(format!("{}({})", call.function, call.args.join(", ")));
        }
        let node = names.join(" = ");
        if let Some(call) = &step.call {
            names.push(call.label.clone());
        }
        let base = Question::next(k, node, names);
        if k >= 2 {
            questions.push(base.clone());
        }
        for c in &step.contributions {
            let received = Value::Tensor(c.value.clone());
            let about = Question {
                input: Some(c.input.clone()),
                partial: Some(format!("∂{}/∂{}", model.of, wrap_name(&c.input))),
                rule: Some(c.rule.clone()),
                upstream: Some(upstream.clone()),
                explain: Some(c.shapes.clone()),
                ..base.clone()
            };
            questions.push(Question {
                ask: Ask::Shape,
                expected: Expected::Shape(c.value.shape.clone()),
                ..about.clone()
            });
            questions.push(Question {
                ask: Ask::Numbers,
                explain: Some(c.rule.clone()),
                expected: Expected::Value(answer_of_value(&received)),
                ..about.clone()
            });
            if let Some(so_far) = &c.so_far {
                let sum = answer_of_value(&Value::Tensor(so_far.clone()));
                let this = answer_of_value(&received);
                let before = Answer {
                    shape: sum.shape.clone(),
                    data: sum
                        .data
                        .iter()
                        .zip(&this.data)
                        .map(|(s, t)| s - t)
                        .collect(),
                };
                questions.push(Question {
                    ask: Ask::Accumulated,
                    local: Some(received),
                    before: Some(value_of_answer(&before)),
                    uses: c.uses,
                    explain: Some("the gradient so far + what this use passes".to_string()),
                    expected: Expected::Value(sum),
                    ..about
                });
            }
        }
    }
    questions
}

/// A node's name as a partial's denominator writes it: in brackets when it
/// is an expression (`∂L/∂(W @ x)`).
fn wrap_name(name: &str) -> String {
    if syntax::is_name(name) {
        name.to_string()
    } else {
        format!("({name})")
    }
}

/// Reads `steps=A-B` (or `steps=K`) against a trace of `total` steps.
fn step_range(text: Option<&str>, total: usize) -> Result<(usize, usize), String> {
    let Some(text) = text else {
        return Ok((1, total));
    };
    let (a, b) = text.split_once(['-', '–']).unwrap_or((text, text));
    let (a, b) = (a.trim().parse::<usize>(), b.trim().parse::<usize>());
    match (a, b) {
        (Ok(a), Ok(b)) if 1 <= a && a <= b && b <= total => Ok((a, b)),
        (Ok(_), Ok(_)) => Err(format!(
            "`steps={text}`: the backward pass has steps 1 to {total}"
        )),
        _ => Err(format!(
            "`steps={text}`: write the steps as `steps=1-8` (or one step, `steps=3`)"
        )),
    }
}

impl Session {
    /// `:quiz [NAME] [steps=A-B] [rtol=R]`: makes NAME the output (as
    /// `:backward NAME`, without printing its gradients), makes the questions
    /// of the steps asked (all unless `steps=`) and asks the first.
    ///
    /// Errors: as `:trace` (no output, …); a malformed `steps=` or `rtol=`.
    pub(super) fn quiz_command(
        &mut self,
        command: &Command,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let span = command.name.span;
        if !command.names.is_empty() {
            let mut gradients = Vec::new();
            self.backward(command, &mut gradients)?;
        }
        let setting = |key: &str| {
            command
                .settings
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(k, word)| (word.name[k.len()..].to_string(), word.span))
        };
        let misuse = |message: String, at: Span| SessionError::BadArguments {
            message,
            span: at,
            help: Some("e.g. `:quiz`, `:quiz L steps=1-8`, `:quiz rtol=0.01`".to_string()),
        };
        let rtol = match setting("rtol=") {
            None => DEFAULT_RTOL,
            Some((text, at)) => text
                .parse::<f64>()
                .ok()
                .filter(|r| r.is_finite() && *r >= 0.0)
                .ok_or_else(|| {
                    misuse(
                        format!("`rtol={text}`: the relative tolerance is a number ≥ 0, e.g. `rtol=0.01`"),
                        at,
                    )
                })?,
        };
        let steps = setting("steps=");
        let range = |total: usize| {
            step_range(steps.as_ref().map(|(t, _)| t.as_str()), total)
                .map_err(|message| misuse(message, steps.as_ref().map_or(span, |s| s.1)))
        };
        let (of, total, questions) = if self.shaped_output().is_some() {
            let model = self.step_model_tensors(span)?;
            let range = range(model.len())?;
            (
                model.of.clone(),
                model.len(),
                questions_of_tensor_steps(&model, range),
            )
        } else {
            let model = self.step_model(span, &Expand::None)?;
            let range = range(model.len())?;
            (
                model.of.clone(),
                model.len(),
                questions_of_scalar_steps(&model, range),
            )
        };
        if questions.is_empty() {
            return Err(misuse(
                format!("the backward pass of {of} has nothing to ask: no op passes a gradient"),
                span,
            ));
        }
        let named = |name: &str| self.variable(name).is_some() || self.is_tensor(name);
        let keys = Keys {
            back: if named("b") { "back" } else { "b" },
            stop: if named("q") { "stop" } else { "q" },
        };
        let quiz = Quiz {
            keys,
            of,
            steps: total,
            results: vec![None; questions.len()],
            questions,
            at: 0,
            rtol,
        };
        events.push(quiz.question_event());
        self.quiz = Some(quiz);
        Ok(())
    }

    /// The quiz running, if any: what a front end asks about to show its
    /// prompt (the question's number and count, [`Quiz::position`]).
    pub fn quiz(&self) -> Option<&Quiz> {
        self.quiz.as_ref()
    }

    /// Ends the quiz running, if any: its score so far (`None` when no quiz
    /// runs). What a front end calls when its input ends, or before work
    /// that is not an answer (`gradcalc --seal` before an `:expect`).
    pub fn end_quiz(&mut self) -> Option<Event> {
        let quiz = self.quiz.take()?;
        let finished = quiz.at == quiz.questions.len();
        Some(quiz.score_event(finished))
    }

    /// A statement given while a quiz runs: an answer, `b` (the question
    /// before), `q` (the score so far, and the quiz ends), `?` (show the
    /// answer); `back` and `stop` for `b` and `q` when those are variables
    /// ([`Keys`]). A command (`:…`) ends the quiz: its score, and the
    /// command is run as usual. `None` when no quiz runs.
    pub(super) fn quiz_input(&mut self, source: &str, span: Span) -> Option<QuizTake> {
        let quiz = self.quiz.as_ref()?;
        let text = source.get(span.start..span.end).unwrap_or("");
        if text.trim_start().starts_with(':') {
            let score = quiz.score_event(false);
            self.quiz = None;
            return Some(QuizTake::Ended(Box::new(score)));
        }
        Some(QuizTake::Answered(self.quiz_answer(answer_text(text))))
    }

    /// Answers the question asked with `text` (see [`Session::quiz_input`]):
    /// the verdict, then the next question or the score.
    fn quiz_answer(&mut self, text: &str) -> Vec<Event> {
        let Some(mut quiz) = self.quiz.take() else {
            return Vec::new();
        };
        let keys = quiz.keys;
        match text {
            _ if text == keys.stop || text == "stop" => return vec![quiz.score_event(false)],
            _ if text == keys.back || text == "back" => {
                quiz.at = quiz.at.saturating_sub(1);
                quiz.results[quiz.at] = None;
                let event = quiz.question_event();
                self.quiz = Some(quiz);
                return vec![event];
            }
            _ => {}
        }
        let verdict = self.quiz_check(&quiz, text);
        let mut events = Vec::new();
        if let Some(correct) = verdict.taken {
            quiz.results[quiz.at] = Some(correct);
        }
        events.push(verdict.event(&quiz, text));
        if verdict.taken.is_some() {
            quiz.at += 1;
        }
        if quiz.at == quiz.questions.len() {
            events.push(quiz.score_event(true));
        } else {
            events.push(quiz.question_event());
            self.quiz = Some(quiz);
        }
        events
    }

    /// Checks `text` against the question `quiz` asks now.
    fn quiz_check(&mut self, quiz: &Quiz, text: &str) -> Checked {
        let q = &quiz.questions[quiz.at];
        let mut checked = Checked {
            taken: Some(false),
            shown: text == "?" || text.is_empty(),
            reason: None,
            got: None,
            question: quiz.at,
        };
        if checked.shown {
            return checked;
        }
        match &q.expected {
            Expected::Node(names) => {
                let key = node_key(text);
                checked.taken = Some(names.iter().any(|n| node_key(n) == key));
            }
            Expected::Shape(shape) => match parse_shape(text) {
                Some(given) => checked.taken = Some(&given == shape),
                None => {
                    checked.taken = None;
                    checked.reason = Some(
                        "a shape is written `2×3` (or `2x3`, `(2, 3)`), `3` for a vector, `()` for a number".to_string(),
                    );
                }
            },
            Expected::Value(expected) => {
                let expression = match q.upstream.as_ref().and_then(literal) {
                    Some(upstream) => substitute_upstream(text, &upstream),
                    None => text.to_string(),
                };
                match self.answer_of(&expression) {
                    Ok(got) => {
                        checked.taken = Some(close(&got, expected, quiz.rtol));
                        checked.got = Some(value_of_answer(&got));
                    }
                    Err(reason) => {
                        checked.taken = None;
                        checked.reason = Some(format!("`{text}` does not evaluate: {reason}"));
                    }
                }
            }
        }
        checked
    }
}

/// What a statement given while a quiz runs did ([`Session::quiz_input`]).
pub(super) enum QuizTake {
    /// It was an answer (or a key): the verdict and the next question, or
    /// the score.
    Answered(Vec<Event>),
    /// It was a command, which ended the quiz with this score; the command
    /// is still to run.
    Ended(Box<Event>),
}

/// An answer checked, before it becomes a [`QuizEvent::QuizVerdict`].
struct Checked {
    /// `Some(right)` when the answer was taken; `None`: asked again.
    taken: Option<bool>,
    /// The answer was `?` (or empty).
    shown: bool,
    /// Why it was not taken.
    reason: Option<String>,
    /// What it evaluated to.
    got: Option<Value>,
    /// The question's index.
    question: usize,
}

impl Checked {
    /// The verdict event for the answer `text`, with the tally after it.
    fn event(&self, quiz: &Quiz, text: &str) -> Event {
        let q = &quiz.questions[self.question];
        let (node, shape, expected) = match &q.expected {
            Expected::Node(names) => (Some(names.join(" = ")), None, None),
            Expected::Shape(shape) => (None, Some(shape_text(shape)), None),
            Expected::Value(value) => (None, None, Some(value_of_answer(value))),
        };
        Event::Quiz(QuizEvent::QuizVerdict {
            number: self.question + 1,
            ask: q.ask,
            answer: text.to_string(),
            correct: self.taken == Some(true),
            shown: self.shown,
            again: self.taken.is_none(),
            reason: self.reason.clone(),
            node,
            shape,
            expected,
            got: self.got.clone(),
            rule: q.explain.clone(),
            partial: q.partial.clone(),
            tally: quiz.tally(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_read_as_students_write_them() {
        assert_eq!(parse_shape("2×3"), Some(vec![2, 3]));
        assert_eq!(parse_shape("2x3"), Some(vec![2, 3]));
        assert_eq!(parse_shape("(2, 3)"), Some(vec![2, 3]));
        assert_eq!(parse_shape("[3]"), Some(vec![3]));
        assert_eq!(parse_shape("()"), Some(vec![]));
        assert_eq!(parse_shape("scalar"), Some(vec![]));
        assert_eq!(parse_shape("two"), None);
        assert_eq!(parse_shape("1x2x3"), None);
    }

    #[test]
    fn numbers_are_close_within_rtol_and_atol() {
        let one = |x: f64| Answer {
            shape: vec![],
            data: vec![x],
        };
        // 2.501 is 4e-4 relative from 2.5: right at 1e-3; 2.51 (4e-3) is not.
        assert!(close(&one(2.501), &one(2.5), DEFAULT_RTOL));
        assert!(!close(&one(2.51), &one(2.5), DEFAULT_RTOL));
        // Near 0 the absolute 1e-6 decides.
        assert!(close(&one(5e-7), &one(0.0), DEFAULT_RTOL));
        assert!(!close(&one(2e-6), &one(0.0), DEFAULT_RTOL));
    }

    #[test]
    fn upstream_is_replaced_as_a_name_only() {
        assert_eq!(
            substitute_upstream("outer(upstream, x) + upstreams", "[1, 2]"),
            "outer([1, 2], x) + upstreams"
        );
        let value = Value::Tensor(TensorData {
            shape: vec![2, 2],
            data: [1.0, -2.0, 0.5, 4.0].map(Number).to_vec(),
            summarised: false,
        });
        assert_eq!(literal(&value).unwrap(), "[[1, (-2)], [0.5, 4]]");
    }

    #[test]
    fn nodes_match_without_spaces_and_outer_brackets() {
        assert_eq!(node_key("(x1*w1 + x2*w2)"), "x1*w1+x2*w2");
        assert_eq!(node_key("(a)*(b)"), "(a)*(b)");
        assert_eq!(step_range(Some("1-8"), 10), Ok((1, 8)));
        assert_eq!(step_range(Some("3"), 10), Ok((3, 3)));
        assert!(step_range(Some("4-11"), 10).is_err());
    }
}
