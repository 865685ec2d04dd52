//! Homework files: a TA's key sealed into the file students receive
//! (`gradcalc --seal`), and an assignment's problems listed without running
//! anything (`gradcalc --assignment`). No IO: text in, text out.
//!
//! An assignment is a `.calc` script: `# Title` names it, each `## Problem …`
//! line starts a problem, the comment lines under it are the problem's text,
//! its statements are the code students start from, and `:expect` lines are
//! its checks (`session::homework`). A `:quiz` line is a quiz for the
//! student to take, not code to run: the statements after it (its answers)
//! are neither. In a key, the lines between `# solution` and `# end
//! solution` are the TA's solution: they run when the key is sealed and are
//! left out of the sealed file and of the listing.

use std::ops::Range;

use crate::session::homework::{HomeworkEvent, Sealed, Verdict, compare, parse_expectation};
use crate::session::{Session, find_command};
use crate::syntax::{self, Span};

/// What keeps a key from being sealed: the message and where in the key.
#[derive(Debug, Clone, PartialEq)]
pub struct SealError {
    /// What went wrong.
    pub message: String,
    /// The byte range in the key.
    pub span: Span,
    /// A suggested fix, when there is one (lower-case, no final period).
    pub help: Option<String>,
}

/// Whether a statement's text is an answer check (`:expect`, the command
/// whose row [`checks_answer`](crate::session::Traits::checks_answer)); if
/// so, where its text after the command's name starts and that text, up to
/// a comment.
pub fn expect_text(statement: &str) -> Option<(usize, &str)> {
    let located = syntax::parse_statement(statement, Span::new(0, statement.len())).ok()?;
    let syntax::Statement::Command { name, .. } = &located.statement else {
        return None;
    };
    find_command(&name.name)?.traits.checks_answer.then(|| {
        let rest = &statement[name.span.end..];
        (name.span.end, rest.split('#').next().unwrap_or(""))
    })
}

/// A `:quiz` line of an assignment (the command whose row
/// [`starts_quiz`](crate::session::Traits::starts_quiz)): what a front end
/// starts, and what it asks, in words.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct QuizLine {
    /// The line as written, without a comment after it (`:quiz b steps=1-2`).
    pub command: String,
    /// What it asks, in words: `steps 1–2 of the backward pass of b`.
    pub asks: String,
}

/// The statement `statement` as a quiz, when it is a `:quiz` line.
pub fn quiz_line(statement: &str) -> Option<QuizLine> {
    let located = syntax::parse_statement(statement, Span::new(0, statement.len())).ok()?;
    let syntax::Statement::Command { name, args } = &located.statement else {
        return None;
    };
    if !find_command(&name.name)?.traits.starts_quiz {
        return None;
    }
    let words: Vec<&str> = args.iter().map(|word| word.name.as_str()).collect();
    let steps = match words.iter().find_map(|w| w.strip_prefix("steps=")) {
        Some(range) if range.contains(['-', '–']) => format!("steps {}", range.replace('-', "–")),
        Some(step) => format!("step {step}"),
        None => "every step".to_string(),
    };
    let of = words
        .iter()
        .find(|w| !w.contains('='))
        .map_or("the output".to_string(), |name| name.to_string());
    Some(QuizLine {
        command: statement.split('#').next().unwrap_or("").trim().to_string(),
        asks: format!("{steps} of the backward pass of {of}"),
    })
}

/// Whether `line` is the marker `# solution` (`begin`) or `# end solution`.
fn solution_marker(line: &str, begin: bool) -> bool {
    let Some(comment) = line.trim().strip_prefix('#') else {
        return false;
    };
    let words: Vec<String> = comment
        .split_whitespace()
        .map(|w| w.trim_end_matches(':').to_lowercase())
        .collect();
    if begin {
        words == ["solution"]
    } else {
        words == ["end", "solution"]
    }
}

/// The byte ranges of `source`'s solution blocks, markers included.
fn solution_blocks(source: &str) -> Vec<Range<usize>> {
    let mut blocks = Vec::new();
    let mut start = None;
    let mut offset = 0;
    for line in source.split_inclusive('\n') {
        if start.is_none() && solution_marker(line, true) {
            start = Some(offset);
        } else if let Some(from) = start
            && solution_marker(line, false)
        {
            blocks.push(from..offset + line.len());
            start = None;
        }
        offset += line.len();
    }
    if let Some(from) = start {
        blocks.push(from..source.len());
    }
    blocks
}

/// Seals the key `source`: runs it in a fresh session and writes it back
/// with each `:expect` line's value (given after `=`, or else the value
/// the key computes there) replaced by its salted hash (`sealed=…`, one
/// fresh `salt()` per line), and each solution block replaced by
/// `# (your work here)`.
///
/// Errors: a statement of the key that fails, a malformed `:expect`, an
/// expected value that does not evaluate or is not finite; each at its place.
pub fn seal(source: &str, mut salt: impl FnMut() -> [u8; 16]) -> Result<String, SealError> {
    let mut session = Session::new();
    let mut replacements: Vec<(Span, String)> = Vec::new();
    for (span, parsed) in syntax::Statements::new(source) {
        let text = &source[span.start..span.end];
        let Some((after, line)) = expect_text(text) else {
            session
                .run_parsed(source, span, parsed)
                .map_err(|error| SealError {
                    message: format!("the key's statement fails: {error}"),
                    span: error.span(),
                    help: error.help(),
                })?;
            continue;
        };
        // A `:quiz` of the key ends here: its answers are the lines before.
        session.end_quiz();
        let at_fault = |message: String| SealError {
            message,
            span,
            help: None,
        };
        let expectation =
            parse_expectation(line).map_err(|error| at_fault(error.message.clone()))?;
        if expectation.sealed.is_some() {
            return Err(at_fault("this `:expect` is sealed already".to_string()));
        }
        let what = expectation
            .value
            .as_deref()
            .unwrap_or(&expectation.expression);
        let expected = session
            .answer_of(what)
            .map_err(|reason| at_fault(format!("`{what}` does not evaluate: {reason}")))?;
        if expectation.value.is_some() {
            // The key's own answer must be the value it gives.
            let own = session
                .answer_of(&expectation.expression)
                .map_err(|reason| {
                    at_fault(format!(
                        "`{}` does not evaluate in the key: {reason}",
                        expectation.quantity
                    ))
                })?;
            let HomeworkEvent::Expect { verdict, .. } =
                compare(&expectation.quantity, &own, &expected, expectation.tol);
            if verdict != Verdict::Correct {
                return Err(SealError {
                    help: Some(
                        "correct the value after `=` or the solution before it; without `= VALUE` the key's own value is sealed"
                            .to_string(),
                    ),
                    ..at_fault(format!(
                        "the key's own `{}` is not within tol={} of the value after `=`",
                        expectation.quantity, expectation.tol
                    ))
                });
            }
        }
        if let Some(bad) = expected.data.iter().find(|v| !v.is_finite()) {
            return Err(at_fault(format!(
                "`{}` is {bad}: a sealed answer must be finite",
                expectation.quantity
            )));
        }
        let sealed = Sealed::new(&expected, expectation.tol, salt());
        let start = text.len() - text.trim_start().len();
        replacements.push((
            Span::new(span.start + start, span.start + after + line.len()),
            format!(
                "{} {} sealed={} tol={}",
                &text[start..after],
                expectation.quantity,
                sealed.text(),
                expectation.tol
            ),
        ));
    }
    Ok(rewrite(source, &replacements))
}

/// `source` with each span replaced, then each solution block replaced by
/// `# (your work here)`.
fn rewrite(source: &str, replacements: &[(Span, String)]) -> String {
    let mut out = String::with_capacity(source.len());
    let mut at = 0;
    for (span, text) in replacements {
        out.push_str(&source[at..span.start]);
        out.push_str(text);
        at = span.end;
    }
    out.push_str(&source[at..]);
    let mut sealed = String::with_capacity(out.len());
    let mut at = 0;
    for block in solution_blocks(&out) {
        sealed.push_str(&out[at..block.start]);
        sealed.push_str(YOUR_WORK);
        sealed.push('\n');
        at = block.end;
    }
    sealed.push_str(&out[at..]);
    sealed
}

/// The line that stands for a student's work: where a solution block was,
/// in the sealed file and in an assignment's starting code.
pub const YOUR_WORK: &str = "# (your work here)";

/// One problem of an assignment.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Problem {
    /// The heading after `## ` (`Problem 1: a neuron`); empty for what comes
    /// before the first heading.
    pub title: String,
    /// The comment lines, without their `#`: the problem's text.
    pub text: Vec<String>,
    /// The statements students start from, with [`YOUR_WORK`] where a
    /// solution block was (the block itself left out).
    pub code: Vec<String>,
    /// What is checked: each `:expect`'s quantity and whether it is sealed.
    pub checks: Vec<(String, bool)>,
    /// The `:expect` lines as written (a sealed one with its hash): what a
    /// playground's or a notebook's check runs.
    pub expects: Vec<String>,
    /// The `:quiz` lines: quizzes to take after the starting code, not code
    /// to run. The statements after one (its answers, up to the next command
    /// or problem) and a solution block there are in neither `code` nor here.
    pub quizzes: Vec<QuizLine>,
}

/// An assignment read: its title (`# Title`, the first line) and problems.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Assignment {
    /// The first line's heading, if it is `# …`.
    pub title: Option<String>,
    /// The problems, in order; the first holds what comes before the first
    /// `## ` heading (its title empty) when there is any.
    pub problems: Vec<Problem>,
}

/// Reads an assignment's problems from `source` without running anything.
pub fn assignment(source: &str) -> Assignment {
    let mut result = Assignment::default();
    let mut current = Problem::default();
    let mut in_solution = false;
    // After a `:quiz` line, until the next command or problem: its answers.
    let mut in_quiz = false;
    for (number, line) in source.lines().enumerate() {
        let trimmed = line.trim();
        if in_solution {
            in_solution = !solution_marker(line, false);
            continue;
        }
        if solution_marker(line, true) {
            in_solution = true;
            if !in_quiz {
                current.code.push(YOUR_WORK.to_string());
            }
        } else if trimmed == YOUR_WORK {
            if !in_quiz {
                current.code.push(YOUR_WORK.to_string());
            }
        } else if let Some(title) = trimmed.strip_prefix("## ") {
            if current != Problem::default() {
                result.problems.push(current);
            }
            in_quiz = false;
            current = Problem {
                title: title.trim().to_string(),
                ..Problem::default()
            };
        } else if let Some(title) = trimmed.strip_prefix("# ").filter(|_| number == 0) {
            result.title = Some(title.trim().to_string());
        } else if let Some(comment) = trimmed.strip_prefix('#') {
            let comment = comment.strip_prefix(' ').unwrap_or(comment);
            current.text.push(comment.trim_end().to_string());
        } else if let Some(quiz) = quiz_line(trimmed) {
            in_quiz = true;
            current.quizzes.push(quiz);
        } else if let Some((_, line)) = expect_text(trimmed) {
            in_quiz = false;
            if let Ok(expectation) = parse_expectation(line) {
                current
                    .checks
                    .push((expectation.quantity, expectation.sealed.is_some()));
                current.expects.push(trimmed.to_string());
            }
        } else if !trimmed.is_empty() {
            in_quiz &= !trimmed.starts_with(':');
            if !in_quiz {
                current.code.push(trimmed.to_string());
            }
        }
    }
    if current != Problem::default() {
        result.problems.push(current);
    }
    result
}

impl Assignment {
    /// The assignment as Markdown: the title, each problem's heading and
    /// text, its starting code in a fenced block, its quizzes and what is
    /// checked.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        if let Some(title) = &self.title {
            out.push_str(&format!("# {title}\n\n"));
        }
        for problem in &self.problems {
            if !problem.title.is_empty() {
                out.push_str(&format!("## {}\n\n", problem.title));
            }
            let text = problem.text.join("\n");
            if !text.trim().is_empty() {
                out.push_str(text.trim());
                out.push_str("\n\n");
            }
            if !problem.code.is_empty() {
                out.push_str("```\n");
                for line in &problem.code {
                    out.push_str(line);
                    out.push('\n');
                }
                out.push_str("```\n\n");
            }
            for quiz in &problem.quizzes {
                out.push_str(&format!(
                    "- quiz: predict {} — after the code above, run `{}` and answer each question as it is asked (`?` shows the answer)\n",
                    quiz.asks, quiz.command
                ));
            }
            if !problem.quizzes.is_empty() && problem.checks.is_empty() {
                out.push('\n');
            }
            for (quantity, sealed) in &problem.checks {
                let how = if *sealed {
                    "sealed"
                } else {
                    "value in the key"
                };
                out.push_str(&format!("- checked: `{quantity}` ({how})\n"));
            }
            if !problem.checks.is_empty() {
                out.push('\n');
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "# Homework 0\n## Problem 1: a product\n# What is dz/dx at x = 3, y = 4?\nx = 3; y = 4\n# solution\nz = x*y\n# end solution\n:expect dz/dx tol=1e-9\n";

    #[test]
    fn the_sealed_file_keeps_the_text_and_hides_the_value_and_solution() {
        let sealed = seal(KEY, || [1; 16]).unwrap();
        assert!(!sealed.contains("z = x*y"), "{sealed}");
        assert!(sealed.contains("# (your work here)\n"), "{sealed}");
        assert!(sealed.contains(":expect dz/dx sealed=1:0101"), "{sealed}");
        assert!(sealed.contains(" tol=0.000000001"), "{sealed}");
        assert!(sealed.starts_with("# Homework 0\n## Problem 1: a product\n# What is dz/dx"));
    }

    #[test]
    fn the_assignment_lists_problems_without_the_solution() {
        let a = assignment(KEY);
        assert_eq!(a.title.as_deref(), Some("Homework 0"));
        assert_eq!(a.problems.len(), 1);
        let p = &a.problems[0];
        assert_eq!(p.title, "Problem 1: a product");
        assert_eq!(p.text, ["What is dz/dx at x = 3, y = 4?"]);
        assert_eq!(p.code, ["x = 3; y = 4", YOUR_WORK]);
        assert_eq!(p.checks, [("dz/dx".to_string(), false)]);
        assert_eq!(p.expects, [":expect dz/dx tol=1e-9"]);
        // The sealed file reads the same, its check sealed.
        let sealed = assignment(&seal(KEY, || [1; 16]).unwrap());
        assert_eq!(sealed.problems[0].code, p.code);
        assert!(sealed.problems[0].expects[0].starts_with(":expect dz/dx sealed=1:"));
    }

    const QUIZ: &str = "# Quiz 0\n## Problem 1: predict\n# Predict steps 1 to 2.\na = 2; b = a*a + a\n:quiz b steps=1-2  # the + first\n# solution\n1\n1\n# end solution\n## Problem 2\nx = 1; y = x*x\n:quiz\n2\n:vars\n:quiz y steps=2\n";

    #[test]
    fn a_quiz_line_is_a_quiz_to_take_and_its_answers_are_not_code() {
        let a = assignment(QUIZ);
        let p = &a.problems[0];
        assert_eq!(p.text, ["Predict steps 1 to 2."]);
        assert_eq!(p.code, ["a = 2; b = a*a + a"]);
        assert_eq!(
            p.quizzes,
            [QuizLine {
                command: ":quiz b steps=1-2".to_string(),
                asks: "steps 1–2 of the backward pass of b".to_string(),
            }]
        );
        // The answer `2` is not code; `:vars` ends the quiz and is.
        let p = &a.problems[1];
        assert_eq!(p.code, ["x = 1; y = x*x", ":vars"]);
        let asks: Vec<&str> = p.quizzes.iter().map(|q| q.asks.as_str()).collect();
        assert_eq!(
            asks,
            [
                "every step of the backward pass of the output",
                "step 2 of the backward pass of y"
            ]
        );
        let listed = a.markdown();
        assert!(
            listed.contains("```\na = 2; b = a*a + a\n```\n\n- quiz: predict steps 1–2 of the backward pass of b — after the code above, run `:quiz b steps=1-2` and answer"),
            "{listed}"
        );
        // Sealed, the answers are gone and the problem reads the same.
        let sealed = seal(QUIZ.split("## Problem 2").next().unwrap(), || [1; 16]).unwrap();
        assert!(!sealed.contains("\n1\n"), "{sealed}");
        assert_eq!(assignment(&sealed).problems[0], a.problems[0]);
    }
}
