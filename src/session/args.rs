//! The typed arguments of the commands that take keywords and flags: the words
//! the command table has sorted ([`Command`]) are read once, here, into one
//! value per command or family of commands sharing flags (`:topo` →
//! [`TopoArgs`], `:forward` → [`ForwardArgs`], `:trace` and `:step` →
//! [`TraceArgs`], `:dot` and `:svg` → [`PictureArgs`]; `:descend`'s are read
//! in `descent.rs`). Each row of the table parses its value and hands it to
//! the handler, which never looks at the words.

use super::boxes::{EXPAND_SETTING, Expand};
use super::command::Command;
use super::{Direction, SessionError, TableFormat, Target};
use crate::syntax::{Ident, Span};

/// Which order `:topo` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopoOrder {
    /// The depth-first reverse topological order backprop walks.
    DepthFirst,
    /// PyTorch's engine's order (`kahn`).
    Kahn,
    /// A naive recursion's order, which is not topological (`naive`).
    Naive,
}

/// `:topo`'s arguments: `[kahn|naive] [all]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopoArgs {
    /// The order listed.
    pub order: TopoOrder,
    /// List every node (`all`), not a summary.
    pub all: bool,
}

impl TopoArgs {
    /// Reads `:topo`'s parsed command line; the table has refused anything
    /// else, and both `kahn` and `naive`.
    pub fn parse(command: &Command) -> TopoArgs {
        let mut args = TopoArgs {
            order: TopoOrder::DepthFirst,
            all: false,
        };
        for &word in &command.keywords {
            match word {
                "kahn" => args.order = TopoOrder::Kahn,
                "naive" => args.order = TopoOrder::Naive,
                "all" => args.all = true,
                _ => {}
            }
        }
        args
    }
}

/// `:forward`'s arguments: `[all]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForwardArgs {
    /// List every node (`all`), not a summary.
    pub all: bool,
}

impl ForwardArgs {
    /// Reads `:forward`'s parsed command line.
    pub fn parse(command: &Command) -> ForwardArgs {
        ForwardArgs {
            all: command.keywords.contains(&"all"),
        }
    }
}

/// `:trace`'s and `:step`'s arguments: `[all] [md|tex [FILE]] [--expand |
/// --expand=CALL…]`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TraceArgs {
    /// List every step (`all`), not a summary.
    pub all: bool,
    /// A table for notes (`md`, `markdown`, `tex`, `latex`), or the trace.
    pub table: Option<TableFormat>,
    /// Where the table goes (only with `table`).
    pub file: Option<Target>,
    /// The calls shown step by step, not as one step each; of a tensor
    /// output, the steps shown element by element (`--expand=NODE`).
    pub expand: Expand,
    /// Where `--expand` was typed (every `--expand` word), for what a
    /// tensor output's trace says of it.
    pub expand_at: Option<Span>,
}

impl TraceArgs {
    /// Reads `:trace`'s or `:step`'s parsed command line.
    ///
    /// Errors: [`SessionError::BadArguments`] saying what the command takes,
    /// for `--expand` beside `--expand=CALL`, or a file without `md` or `tex`.
    pub fn parse(command: &Command) -> Result<TraceArgs, SessionError> {
        let mut all = false;
        let mut table = None;
        for &word in &command.keywords {
            match word {
                "all" => all = true,
                "md" | "markdown" => table = Some(TableFormat::Markdown),
                "tex" | "latex" => table = Some(TableFormat::Latex),
                _ => {}
            }
        }
        if table.is_none() && command.file.is_some() {
            return Err(command.misuse());
        }
        let expand_at = command
            .args
            .iter()
            .filter(|a| a.name == "--expand" || a.name.starts_with(EXPAND_SETTING))
            .map(|a| a.span)
            .reduce(Span::to);
        Ok(TraceArgs {
            all,
            table,
            file: command.optional_target(),
            expand: expand(command)?,
            expand_at,
        })
    }
}

/// Which moment of the backward pass `:dot` / `:svg` draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Moment {
    /// The finished pass (no flag).
    #[default]
    Done,
    /// After `:trace`'s step K (`--step K`; `--before` is step 0).
    Step(usize),
    /// Every step, one file each (`--steps`).
    Steps,
}

/// `:dot`'s and `:svg`'s arguments: `[FILE] [--before | --step K | --steps]
/// [--expand | --expand=CALL…] [--lr | --tb | --fit WxH]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct PictureArgs {
    /// Where the picture goes (a directory for [`Moment::Steps`]); `:dot`
    /// prints it without one.
    pub file: Option<Target>,
    /// Which moment of the backward pass.
    pub moment: Moment,
    /// Where K of `--step K` was typed, for the error when the pass has
    /// fewer steps.
    pub step_at: Option<Span>,
    /// The calls drawn node by node (`--expand`, `--expand=CALL`), not as
    /// one box.
    pub expand: Expand,
    /// `--lr`, `--tb`, `--fit WxH`, or none.
    pub direction: Direction,
}

/// `--step`, the picture flag that takes a step number.
pub(super) const STEP_FLAG: &str = "--step";
/// `--fit`, the picture flag that takes a screen size (`1920x1080`).
pub(super) const FIT_FLAG: &str = "--fit";

/// The screen size of `--fit WxH` (`1920x1080`, `1920×1080`), as
/// [`Direction::Fit`].
///
/// Errors: [`SessionError::BadArguments`] at the word when it is not two
/// whole numbers from 100 to 100000 joined by `x`.
fn fit_size(word: &Ident) -> Result<Direction, SessionError> {
    let size = word
        .name
        .split_once(['x', 'X', '×'])
        .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)))
        .filter(|&(w, h)| (100..=100_000).contains(&w) && (100..=100_000).contains(&h));
    match size {
        Some((w, h)) => Ok(Direction::Fit(w, h)),
        None => Err(SessionError::BadArguments {
            message: format!(
                "`--fit` takes a screen size in pixels, width x height (100 to 100000 each), not `{}`",
                word.name
            ),
            span: word.span,
            help: Some("e.g. `:svg slide.svg --fit 1920x1080`".to_string()),
        }),
    }
}

impl PictureArgs {
    /// Reads `:dot`'s or `:svg`'s parsed command line.
    ///
    /// Errors: [`SessionError::BadArguments`]: two moments, or `--lr` with
    /// `--tb`, or `--expand` beside `--expand=CALL` (saying what the command
    /// takes); a step that is not a whole number (at it); `--steps` without a
    /// directory or with `-`.
    pub fn parse(command: &Command) -> Result<PictureArgs, SessionError> {
        let expand = expand(command)?;
        let mut moments = Vec::new();
        let mut direction = None;
        for &word in &command.keywords {
            match word {
                "--before" => moments.push(Moment::Step(0)),
                "--steps" => moments.push(Moment::Steps),
                "--lr" | "--tb" if direction.is_some() => return Err(command.misuse()),
                "--lr" => direction = Some(Direction::LeftToRight),
                "--tb" => direction = Some(Direction::TopToBottom),
                _ => {}
            }
        }
        if let Some(word) = command.number_after(FIT_FLAG) {
            if direction.is_some() {
                return Err(command.misuse());
            }
            direction = Some(fit_size(word)?);
        }
        let step = command.number_after(STEP_FLAG);
        if let Some(word) = step {
            let k = word
                .name
                .parse::<usize>()
                .map_err(|_| SessionError::BadArguments {
                    message: format!(
                        "`--step` takes a step number, as `:trace` numbers the steps, not `{}`",
                        word.name
                    ),
                    span: word.span,
                    help: Some(command.spec.example.to_string()),
                })?;
            moments.push(Moment::Step(k));
        }
        if moments.len() > 1 {
            return Err(command.misuse());
        }
        let moment = moments.pop().unwrap_or_default();
        if moment == Moment::Steps {
            steps_directory(command)?;
        }
        Ok(PictureArgs {
            file: command.optional_target(),
            moment,
            step_at: step.map(|word| word.span),
            expand,
            direction: direction.unwrap_or_default(),
        })
    }
}

/// Checks that `--steps` has a directory to write the pictures in.
///
/// Errors: no file, or `-`.
fn steps_directory(command: &Command) -> Result<(), SessionError> {
    let message = match command.file {
        None => format!(
            "`:{} --steps` takes a directory to write the pictures in",
            command.name.name
        ),
        Some(file) if file.name == "-" => {
            "`--steps` writes one file per step: give a directory, not `-`".to_string()
        }
        Some(_) => return Ok(()),
    };
    Err(SessionError::BadArguments {
        message,
        span: command.name.span,
        help: Some(command.spec.example.to_string()),
    })
}

/// The `--expand` or `--expand=CALL,…` of a command line (the latter may be
/// given more than once).
///
/// Errors: [`SessionError::BadArguments`] saying what the command takes, for
/// both.
fn expand(command: &Command) -> Result<Expand, SessionError> {
    let mut labels = Vec::new();
    let mut span: Option<Span> = None;
    for &(key, word) in &command.settings {
        if key == EXPAND_SETTING {
            let value = &word.name[key.len()..];
            labels.extend(
                value
                    .split(',')
                    .filter(|l| !l.is_empty())
                    .map(str::to_string),
            );
            span = Some(span.map_or(word.span, |s| s.to(word.span)));
        }
    }
    let all = command.keywords.contains(&"--expand");
    match span {
        Some(_) if all => Err(command.misuse()),
        Some(span) => Ok(Expand::Calls(labels, span)),
        None if all => Ok(Expand::All),
        None => Ok(Expand::None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::Ident;

    /// The words of `line` (`:name arg…`, split at spaces) with their spans.
    fn words(line: &str) -> Vec<Ident> {
        let mut start = 0;
        let mut words = Vec::new();
        for word in line.split(' ') {
            let name = word.trim_start_matches(':');
            let at = start + word.len() - name.len();
            words.push(Ident {
                name: name.to_string(),
                span: Span::new(at, start + word.len()),
            });
            start += word.len() + 1;
        }
        words
    }

    /// What `parse` reads from `line` after the table has parsed it.
    fn read<T>(
        line: &str,
        parse: impl Fn(&Command) -> Result<T, SessionError>,
    ) -> Result<T, SessionError> {
        let words = words(line);
        parse(&Command::parse(&words[0], &words[1..])?)
    }

    /// The message and span of a refusal.
    fn refusal<T: std::fmt::Debug>(result: Result<T, SessionError>) -> (String, Span) {
        match result {
            Err(SessionError::BadArguments { message, span, .. }) => (message, span),
            other => panic!("refused with BadArguments: {other:?}"),
        }
    }

    #[test]
    fn a_picture_line_gives_its_typed_value() {
        let args = read(
            ":svg pic.svg --tb --step 3 --expand=h1,h2 --expand=h3",
            PictureArgs::parse,
        )
        .expect("parses");
        assert_eq!(args.moment, Moment::Step(3));
        assert_eq!(args.step_at, Some(Span::new(25, 26)));
        assert_eq!(args.direction, Direction::TopToBottom);
        assert_eq!(
            args.expand,
            Expand::Calls(
                vec!["h1".into(), "h2".into(), "h3".into()],
                Span::new(27, 53)
            )
        );
        assert_eq!(args.file.map(|f| f.path), Some("pic.svg".to_string()));
        let args = read(":dot --steps slides --lr -f", PictureArgs::parse).expect("parses");
        assert_eq!(args.moment, Moment::Steps);
        assert_eq!(args.direction, Direction::LeftToRight);
        assert_eq!(args.expand, Expand::None);
        assert!(args.file.is_some_and(|f| f.force && f.path == "slides"));
        let args = read(":dot", PictureArgs::parse).expect("parses");
        assert_eq!(args, PictureArgs::default());
    }

    #[test]
    fn contradictory_picture_flags_are_refused_where_they_meet() {
        // The second of the pair ends the span: what follows is not blamed.
        // A flag beside another of its group: at the second, naming both.
        for (line, first, second, at) in [
            (":svg pic.svg --lr --tb --before", "--lr", "--tb", 18),
            (":svg pic.svg --tb --before --lr", "--tb", "--lr", 27),
            (":svg pic.svg --before --steps", "--before", "--steps", 22),
        ] {
            let (message, span) = refusal(read(line, PictureArgs::parse));
            assert_eq!(
                message,
                format!("`{first}` and `{second}` cannot go together: give one of them"),
                "{line}"
            );
            assert_eq!(span, Span::new(at, at + second.len()), "{line}");
            assert_eq!(&line[at..at + second.len()], second);
        }
        // A numbered flag beside a moment: what the command takes (the whole
        // command line); a step that is no number; steps without a directory.
        for (line, expected, at) in [
            (
                ":svg pic.svg --step 2 --before",
                "`:svg` takes one file name and at most one of `--before`, `--step K`, `--steps`",
                Some(Span::new(1, 30)),
            ),
            (
                ":svg pic.svg --step two",
                "`--step` takes a step number, as `:trace` numbers the steps, not `two`",
                Some(Span::new(20, 23)),
            ),
            (
                ":dot --steps",
                "`:dot --steps` takes a directory to write the pictures in",
                None,
            ),
        ] {
            let (message, span) = refusal(read(line, PictureArgs::parse));
            assert_eq!(message, expected, "{line}");
            if let Some(at) = at {
                assert_eq!(span, at, "{line}");
            }
        }
        let (message, _) = refusal(read(":dot --expand --expand=h1", PictureArgs::parse));
        assert!(message.starts_with("`:dot` takes"), "{message}");
        let (message, span) = refusal(read(":svg pic.svg --sideways", PictureArgs::parse));
        assert!(message.ends_with("not `--sideways`"), "{message}");
        assert_eq!(span, Span::new(13, 23));
    }

    #[test]
    fn a_trace_line_gives_its_typed_value() {
        let args = read(":trace latex notes.tex all --expand", |c| {
            TraceArgs::parse(c)
        })
        .expect("parses");
        assert!(args.all);
        assert_eq!(args.table, Some(TableFormat::Latex));
        assert_eq!(args.expand, Expand::All);
        assert_eq!(args.file.map(|f| f.path), Some("notes.tex".to_string()));
        let args = read(":step", TraceArgs::parse).expect("parses");
        assert_eq!(
            args,
            TraceArgs {
                all: false,
                table: None,
                file: None,
                expand: Expand::None,
                expand_at: None,
            }
        );
        // Where `--expand` was typed.
        let args = read(":trace --expand", TraceArgs::parse).expect("parses");
        assert_eq!(args.expand_at, Some(Span::new(7, 15)));
        // A file without a table, both kinds of `--expand`.
        for line in [":trace notes.md", ":trace --expand=h1 --expand"] {
            let (message, _) = refusal(read(line, TraceArgs::parse));
            assert_eq!(
                message, "`:trace` takes `all`, then `md` or `tex` and a file name",
                "{line}"
            );
        }
    }

    #[test]
    fn topo_and_forward_lines_give_their_typed_values() {
        let topo = |line| read(line, |c| Ok(TopoArgs::parse(c))).expect("parses");
        assert_eq!(
            topo(":topo all naive"),
            TopoArgs {
                order: TopoOrder::Naive,
                all: true
            }
        );
        assert_eq!(
            topo(":order kahn"),
            TopoArgs {
                order: TopoOrder::Kahn,
                all: false
            }
        );
        assert_eq!(topo(":topo").order, TopoOrder::DepthFirst);
        assert!(read(":topo kahn naive", |c| Ok(TopoArgs::parse(c))).is_err());
        let forward = |line| read(line, |c| Ok(ForwardArgs::parse(c))).expect("parses");
        assert!(forward(":forward all").all);
        assert!(!forward(":forward").all);
    }
}
