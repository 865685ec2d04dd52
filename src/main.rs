//! The `gradcalc` binary: argument parsing and mode selection only.

use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use gradcalc::driver::{self, Options, Outcome};
use gradcalc::files::{self, WritePolicy};
use gradcalc::interrupt;
use gradcalc::render::json::ErrorLine;
use gradcalc::render::{DEFAULT_WIDTH, Format, Precision, Printer, Style};
use gradcalc::session::{ErrorCode, Notice, Session};

/// Large buffers (tensors of 4 MiB and more) on huge pages: fewer page
/// faults, the same bytes (`gradcalc::hugepages`).
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: gradcalc::hugepages::HugePages = gradcalc::hugepages::HugePages;

const EXAMPLES: &str = "\
Examples:
  gradcalc                                  start the interactive calculator
  gradcalc -e 'x = 2; y = 3; z = x*y + x' -e ':grad'
  gradcalc --json -e 'x = 3; x^2; :grad x'  JSON Lines for programs
  gradcalc examples/neuron.calc -i          run a script, then stay interactive
  echo 'x = 0.5; tanh(x); :trace' | gradcalc
  gradcalc completions bash > ~/.local/share/bash-completion/completions/gradcalc
  gradcalc man > gradcalc.1                 the manual page (man ./gradcalc.1)

Scripts (FILEs, piped stdin, `:load`ed files) write files only in the current
directory unless --allow-writes DIR or --allow-writes-anywhere says more, and
never replace an existing file unless the command says `-f` (`:save -f FILE`).

Exit status: 0 on success, 1 if a statement failed or the output could not be
written, 2 on a usage error; 141 (silently) when the reader of the output went
away (`gradcalc … | head`).";

/// A calculator with gradients: type arithmetic, ask `:grad x`, see every backward step.
#[derive(Parser, Debug)]
#[command(
    name = "gradcalc",
    version,
    about,
    after_help = EXAMPLES,
    disable_help_subcommand = true,
    subcommand_value_name = "TOOL",
    subcommand_help_heading = "Tools",
    override_usage = "gradcalc [OPTIONS] [FILE]...\n       gradcalc completions SHELL\n       gradcalc man"
)]
struct Args {
    /// Scripts to run, in order (statements separated by newlines or `;`)
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Run these statements (repeatable; runs after the FILEs)
    #[arg(
        short = 'e',
        long = "eval",
        value_name = "SRC",
        allow_hyphen_values = true
    )]
    eval: Vec<String>,

    /// Stay interactive after running FILEs and -e
    #[arg(short, long)]
    interactive: bool,

    /// Print JSON Lines, one object per event
    #[arg(long)]
    json: bool,

    /// Colour output: auto (on a terminal, unless NO_COLOR is set or TERM=dumb), always, never
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    color: ColorChoice,

    /// Significant digits in human output, or `full` for round-trip precision
    #[arg(long, default_value = "10", value_parser = parse_precision, value_name = "N|full")]
    precision: Precision,

    /// Line width, in columns, of vectors and matrices in human output
    /// (numpy's linewidth): a wider row wraps between its elements. Default:
    /// the terminal's width on a terminal, else 80
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    width: Option<u16>,

    /// In batch modes, go on after an error (the exit status is still 1)
    #[arg(long)]
    keep_going: bool,

    /// With --json: run standard input a line at a time as it arrives, each
    /// line's events flushed and followed by a `ready` event (for programs
    /// that drive gradcalc; after the FILEs and -e)
    #[arg(long, requires = "json")]
    lines: bool,

    /// With --json: write every number of a vector or matrix (past 2^20
    /// numbers a value is otherwise written as the first and last 3 of each
    /// axis, `edges`, with `value` null; docs/json.md)
    #[arg(long = "json-full", requires = "json")]
    json_full: bool,

    /// Write `d` and `->` instead of `∂` and `→`
    #[arg(long)]
    ascii: bool,

    /// Let scripts write files under DIR too, besides the current directory (repeatable)
    #[arg(long = "allow-writes", value_name = "DIR")]
    allow_writes: Vec<PathBuf>,

    /// Let scripts write files anywhere the user can
    #[arg(long)]
    allow_writes_anywhere: bool,

    /// Print the file students receive from a TA's KEY: each `:expect`'s
    /// value replaced by a salted hash, `# solution` blocks left out (docs/homework.md)
    #[arg(long, value_name = "KEY", conflicts_with_all = ["files", "eval", "interactive", "lines", "assignment"])]
    seal: Option<PathBuf>,

    /// Print an assignment's problems (text, starting code, quizzes, what is
    /// checked) as Markdown, without running it
    #[arg(long, value_name = "FILE", conflicts_with_all = ["files", "eval", "interactive", "lines"])]
    assignment: Option<PathBuf>,

    /// Run the one FILE in a fresh session and print its transcript for
    /// grading: inputs, outputs, checks and the time, as JSON Lines (`jsonl`,
    /// for `--check-transcript` and autograders) or Markdown (`md`)
    #[arg(long, value_enum, value_name = "FORMAT", requires = "files", conflicts_with_all = ["eval", "interactive", "lines", "seal", "assignment"])]
    transcript: Option<TranscriptFormat>,

    /// Run a JSON Lines transcript's inputs again and say whether they give
    /// the same events and numbers (exit status 1 if not)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["files", "eval", "interactive", "lines", "seal", "assignment", "transcript"])]
    check_transcript: Option<PathBuf>,

    /// Instead of running statements: print a completion script or the
    /// manual page (a script named like one is run as `./completions`)
    #[command(subcommand)]
    tool: Option<Tool>,
}

/// What `gradcalc` prints for a shell or for `man` instead of running
/// statements, written from the arguments' definition (`Args`).
#[derive(Subcommand, Debug)]
enum Tool {
    /// Print the completion script for SHELL (clap_complete): the options,
    /// their values, and file names for FILE
    Completions {
        /// bash, zsh, fish, elvish or powershell
        shell: clap_complete::Shell,
    },
    /// Print the manual page, gradcalc(1), as roff (clap_mangen)
    Man,
}

/// Writes `tool`'s text to standard output; returns the exit status.
fn print_tool(tool: &Tool) -> u8 {
    let mut command = Args::command();
    let mut out = io::stdout().lock();
    let written = match tool {
        Tool::Completions { shell } => {
            clap_complete::generate(*shell, &mut command, "gradcalc", &mut out);
            out.flush()
        }
        Tool::Man => clap_mangen::Man::new(command)
            .render(&mut out)
            .and_then(|()| out.flush()),
    };
    match written {
        Ok(()) => 0,
        Err(error) => output_failed(&error),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TranscriptFormat {
    /// JSON Lines: a `transcript` line, each `input` and its events, the `checks`
    Jsonl,
    /// Markdown for people
    Md,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

fn parse_precision(text: &str) -> Result<Precision, String> {
    if text == "full" {
        return Ok(Precision::Full);
    }
    match text.parse::<usize>() {
        Ok(digits) if (1..=17).contains(&digits) => Ok(Precision::Digits(digits)),
        _ => Err("expected a number of digits from 1 to 17, or `full`".to_string()),
    }
}

/// The worker runs on a thread with a large stack: a safety margin under the
/// parser's own nesting limit.
const STACK_BYTES: usize = 256 * 1024 * 1024;

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(error) => return ExitCode::from(arguments_failed(&error)),
    };
    if let Some(tool) = &args.tool {
        return ExitCode::from(print_tool(tool));
    }
    let worker = std::thread::Builder::new()
        .stack_size(STACK_BYTES)
        .spawn(move || run(args));
    match worker.map(|handle| handle.join()) {
        Ok(Ok(code)) => ExitCode::from(code),
        _ => ExitCode::from(1),
    }
}

/// Reports arguments clap refused (or the help and version it prints) and
/// returns the exit status: with `--json` among the arguments, the error is one
/// JSON `error` event on stdout (`source` `<arguments>`, no line or column),
/// as docs/json.md says of every error; otherwise clap's own report.
fn arguments_failed(error: &clap::Error) -> u8 {
    use clap::error::ErrorKind;
    let json = std::env::args_os()
        .skip(1)
        .take_while(|arg| arg != "--")
        .any(|arg| arg == "--json");
    if !json
        || matches!(
            error.kind(),
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
        )
    {
        let _ = error.print();
        return u8::try_from(error.exit_code()).unwrap_or(2);
    }
    // The first line of clap's report, without its `error: ` and styling.
    let text = error.render().to_string();
    let first = text.lines().next().unwrap_or_default();
    let message = first.strip_prefix("error: ").unwrap_or(first);
    // clap's tip, when it has one (`to pass '--x' as a value, use '-- --x'`).
    let tip = text
        .lines()
        .find_map(|line| line.trim().strip_prefix("tip: "))
        .unwrap_or("`gradcalc --help` lists the options");
    fail_early(true, (ErrorCode::Usage, message), "<arguments>", Some(tip))
}

/// An error before any statement ran (the arguments, a source that cannot be
/// read): with `json`, an `error` event with its code on stdout, without line,
/// column or statement; otherwise `gradcalc: MESSAGE` on stderr. Returns the
/// exit status, 2.
fn fail_early(
    json: bool,
    (code, message): (ErrorCode, &str),
    source: &str,
    help: Option<&str>,
) -> u8 {
    let written = if json {
        let event = ErrorLine::new(code, message, Some(source)).with_help(help);
        writeln!(printer_out(), "{}", event.to_value())
    } else {
        writeln!(io::stderr(), "gradcalc: {message}")
    };
    match written {
        Ok(()) => 2,
        Err(error) => output_failed(&error),
    }
}

/// `--seal KEY` (`seal`) or `--assignment FILE`: reads the file and prints
/// the sealed file or the problems. Returns the exit status: 1 when the key
/// does not seal, 2 when the file cannot be read.
fn homework_file(path: &std::path::Path, seal: bool, json: bool) -> u8 {
    let (shown, source) = match read_named(path, json) {
        Ok(read) => read,
        Err(status) => return status,
    };
    let text = if seal {
        match gradcalc::homework::seal(&source, fresh_salt) {
            Ok(text) => text,
            Err(error) => {
                // As every error: the place, the line and a caret under it.
                let style = Style {
                    ascii: !locale_is_utf8(),
                    ..Style::default()
                };
                let report = gradcalc::render::diagnostic::render_message(
                    &format!("the key does not seal: {}", error.message),
                    error.span,
                    error.help,
                    &source,
                    &shown,
                    &style,
                );
                let _ = write!(io::stderr(), "{report}");
                return 1;
            }
        }
    } else {
        gradcalc::homework::assignment(&source).markdown()
    };
    match printer_out().write_all(text.as_bytes()) {
        Ok(()) => 0,
        Err(error) => output_failed(&error),
    }
}

/// The file at `path` as text, with its name as shown; or, when it cannot be
/// read, the exit status after saying so ([`fail_early`]).
fn read_named(path: &std::path::Path, json: bool) -> Result<(String, String), u8> {
    let shown = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => Ok((shown, text)),
        Err(error) => {
            let message = format!("cannot read {shown}: {error}");
            Err(fail_early(json, (ErrorCode::Read, &message), &shown, None))
        }
    }
}

/// `--transcript FORMAT FILE`: prints FILE's transcript. Returns the exit
/// status: 2 when there is not one FILE or it cannot be read.
fn transcript_of(files: &[PathBuf], format: TranscriptFormat, json: bool) -> u8 {
    let [path] = files else {
        let message = "--transcript records one FILE";
        return fail_early(json, (ErrorCode::Usage, message), "<arguments>", None);
    };
    let (shown, source) = match read_named(path, json) {
        Ok(read) => read,
        Err(status) => return status,
    };
    let transcript = gradcalc::transcript::record(&source, &shown, &now_rfc3339());
    let text = match format {
        TranscriptFormat::Jsonl => transcript.json_lines(),
        TranscriptFormat::Md => transcript.markdown(),
    };
    match printer_out().write_all(text.as_bytes()) {
        Ok(()) => 0,
        Err(error) => output_failed(&error),
    }
}

/// `--check-transcript FILE`: reruns it and prints whether it reproduces.
/// Returns the exit status: 0 when it does, 1 when not, 2 when the file
/// cannot be read or is not a transcript.
fn check_transcript(path: &std::path::Path, json: bool) -> u8 {
    let (shown, text) = match read_named(path, json) {
        Ok(read) => read,
        Err(status) => return status,
    };
    let rerun = match gradcalc::transcript::rerun(&text) {
        Ok(rerun) => rerun,
        Err(message) => {
            let message = format!("{shown}: {message}");
            return fail_early(json, (ErrorCode::Read, &message), &shown, None);
        }
    };
    let mut out = String::new();
    let t = rerun.tally;
    if rerun.differences.is_empty() {
        out.push_str(&format!(
            "{shown}: reproduces: {} statements give the same events and numbers; checks: {} correct, {} wrong, {} of the wrong shape, {} not answered\n",
            rerun.statements, t.correct, t.wrong, t.wrong_shape, t.unanswered
        ));
    } else {
        out.push_str(&format!(
            "{shown}: does not reproduce: {} of {} statements differ\n",
            rerun.differences.len(),
            rerun.statements
        ));
        for (number, statement, difference) in &rerun.differences {
            out.push_str(&format!(
                "  statement {number} `{statement}`: {difference}\n"
            ));
        }
    }
    match printer_out().write_all(out.as_bytes()) {
        Ok(()) => u8::from(!rerun.differences.is_empty()),
        Err(error) => output_failed(&error),
    }
}

/// Now as RFC 3339 in UTC (`2026-12-05T04:55:00Z`), from the system clock
/// (days to a civil date by Howard Hinnant's `civil_from_days`).
fn now_rfc3339() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// 16 bytes from the operating system's random source, the salt of one
/// sealed answer (`getrandom`); the clock's nanoseconds if it fails.
fn fresh_salt() -> [u8; 16] {
    let mut salt = [0u8; 16];
    if getrandom::fill(&mut salt).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        salt = nanos.to_le_bytes();
    }
    salt
}

/// The exit status when the reader of the output went away: what a shell shows
/// for a program ended by SIGPIPE (128 + 13). Nothing is printed.
const CLOSED_PIPE_STATUS: u8 = 141;

/// Ends the run after the output failed: a closed pipe silently, anything else
/// (a full disk) with a message on stderr. Returns the exit status.
fn output_failed(error: &io::Error) -> u8 {
    if error.kind() == io::ErrorKind::BrokenPipe {
        return CLOSED_PIPE_STATUS;
    }
    let _ = writeln!(io::stderr(), "gradcalc: cannot write the output: {error}");
    1
}

/// Chooses the mode and runs it; returns the exit status.
fn run(args: Args) -> u8 {
    if let Some(path) = args.seal.as_ref().or(args.assignment.as_ref()) {
        return homework_file(path, args.seal.is_some(), args.json);
    }
    if let Some(format) = args.transcript {
        return transcript_of(&args.files, format, args.json);
    }
    if let Some(path) = &args.check_transcript {
        return check_transcript(path, args.json);
    }
    // Ctrl-C stops the running statement; in a batch run the process then ends
    // with status 130 (the REPL keeps the session instead).
    interrupt::install();
    if args.lines {
        // Line mode keeps the session after Ctrl-C: a Ctrl-C only stops the
        // line that runs, and nothing ends the process halfway through an
        // event line.
        interrupt::set_batch(false);
    }
    let stdin_is_terminal = io::stdin().is_terminal();
    let stdout_is_terminal = io::stdout().is_terminal();
    // Past 2^20 numbers a value is kept as its edges unless asked for whole.
    gradcalc::session::set_full_values(args.json_full);
    let format = format_of(&args, stdout_is_terminal);
    // Buffered: a script of a million statements must not make a million writes.
    // The printer flushes stdout before every error and the REPL after every input.
    let stdout = io::BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut printer = Printer::new(format, stdout, io::stderr().lock());
    // `--width` holds; otherwise the REPL follows the terminal's width.
    printer.width_given = args.width.is_some();
    printer.writes = WritePolicy {
        anywhere: args.allow_writes_anywhere,
        dirs: args.allow_writes.clone(),
        nowhere: false,
    };
    // Batch runs keep stdout for results: warnings and notices go to stderr.
    printer.notes_to_err = true;
    let mut session = Session::new();
    session.writes = printer.writes.clone();
    let mut failed = false;

    let (mut sources, stdin_taken) = match read_sources(&args) {
        Ok(read) => read,
        Err(status) => return status,
    };
    // Piped stdin is read when there is nothing else to run, or after the rest with -i.
    let batch_stdin = (sources.is_empty() || args.interactive)
        && !stdin_is_terminal
        && !stdin_taken
        && !args.lines;
    if !batch_stdin && !stdin_taken && !args.lines && !stdin_is_terminal && stdin_has_input() {
        note_unread_stdin(args.json);
    }
    if batch_stdin {
        match read_stdin() {
            Ok(bytes) => sources.push((bytes, "<stdin>".to_string(), None, true)),
            Err((message, help)) => {
                return fail_early(args.json, (ErrorCode::Read, &message), "<stdin>", help);
            }
        }
    }
    let interactive = (sources.is_empty() || args.interactive) && stdin_is_terminal && !args.lines;

    for (bytes, origin, file, script) in sources {
        let options = Options {
            keep_going: args.keep_going,
            loads_stop_at_error: false,
            script,
            lines: false,
        };
        match driver::run(&mut session, &mut printer, bytes, &origin, file, options) {
            Outcome::Done { failed: f } => failed |= f,
            Outcome::Stopped => {
                failed = true;
                break;
            }
            Outcome::Quit { failed: f } => {
                return match printer.flush() {
                    Ok(()) => u8::from(failed || f),
                    Err(error) => output_failed(&error),
                };
            }
            Outcome::Output(error) => return output_failed(&error),
            Outcome::Interrupted => {
                return match printer.flush() {
                    Ok(()) => interrupt::EXIT_STATUS,
                    Err(error) => output_failed(&error),
                };
            }
        }
    }
    if let Err(error) = printer.flush() {
        return output_failed(&error);
    }
    if args.lines && (args.keep_going || !failed) {
        return run_lines(&mut session, &mut printer, failed);
    }
    if interactive && !(failed && !args.keep_going && !args.interactive) {
        return match gradcalc::repl::run(&mut session, &mut printer, stdout_is_terminal) {
            Ok(status) => status,
            Err(error) => output_failed(&error),
        };
    }
    u8::from(failed)
}

/// The output format `args` ask for: JSON, or human output with colour
/// (`--color`, or on a terminal `stdout_is_terminal` unless `NO_COLOR` or
/// `TERM=dumb` say not), ASCII (`--ascii` or a locale without UTF-8) and the
/// precision.
fn format_of(args: &Args, stdout_is_terminal: bool) -> Format {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout_is_terminal && !no_color && !dumb,
    };
    if args.json {
        Format::Json
    } else {
        Format::Human(Style {
            color,
            ascii: args.ascii || !locale_is_utf8(),
            precision: args.precision,
            charts: true,
            width: args.width.map_or_else(
                || {
                    stdout_is_terminal
                        .then(terminal_width)
                        .flatten()
                        .unwrap_or(DEFAULT_WIDTH)
                },
                usize::from,
            ),
        })
    }
}

/// The width in columns of the terminal standard output is, when it says.
fn terminal_width() -> Option<usize> {
    let size = rustix::termios::tcgetwinsize(io::stdout()).ok()?;
    (size.ws_col > 0).then_some(usize::from(size.ws_col))
}

/// A source to run: its bytes, its origin (for error reports), the path of a
/// file, and whether it is a script.
type Source = (Vec<u8>, String, Option<PathBuf>, bool);

/// Reads the FILEs of `args` (`-` is standard input) and takes their `-e`
/// sources, in the order they run: the sources, and whether standard input
/// was read as a FILE; or, when one cannot be read or `-` is given twice, the
/// exit status after reporting it.
fn read_sources(args: &Args) -> Result<(Vec<Source>, bool), u8> {
    let mut sources = Vec::new();
    let mut stdin_taken = false;
    for path in &args.files {
        if path.as_os_str() == "-" {
            // `-` is standard input, read where it stands among the files.
            if stdin_taken {
                return Err(fail_early(
                    args.json,
                    (ErrorCode::Usage, "`-` (standard input) given twice"),
                    "<arguments>",
                    None,
                ));
            }
            stdin_taken = true;
            match read_stdin() {
                Ok(bytes) => sources.push((bytes, "<stdin>".to_string(), None, true)),
                Err((message, help)) => {
                    let code = (ErrorCode::Read, message.as_str());
                    return Err(fail_early(args.json, code, "<stdin>", help));
                }
            }
            continue;
        }
        match files::read_source(path) {
            Ok(bytes) => {
                sources.push((bytes, path.display().to_string(), Some(path.clone()), true))
            }
            Err(message) => {
                let origin = path.display().to_string();
                return Err(fail_early(
                    args.json,
                    (ErrorCode::Read, &message),
                    &origin,
                    None,
                ));
            }
        }
    }
    for (i, source) in args.eval.iter().enumerate() {
        let origin = if args.eval.len() == 1 {
            "-e".to_string()
        } else {
            format!("-e #{}", i + 1)
        };
        sources.push((source.clone().into_bytes(), origin, None, false));
    }
    Ok((sources, stdin_taken))
}

/// Reads all of standard input as a script, at most the limit of a script
/// file ([`files::MAX_SOURCE_BYTES`]); more is refused without being kept.
///
/// Errors: the message, and a help, when stdin cannot be read or is too long.
fn read_stdin() -> Result<Vec<u8>, (String, Option<&'static str>)> {
    let mut bytes = Vec::new();
    io::stdin()
        .take(files::MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| (format!("cannot read stdin: {error}"), None))?;
    if bytes.len() as u64 > files::MAX_SOURCE_BYTES {
        let message = format!(
            "cannot read stdin: larger than {} MiB, the limit for a script",
            files::MAX_SOURCE_BYTES >> 20
        );
        return Err((message, Some("`--json --lines` reads it a line at a time")));
    }
    Ok(bytes)
}

/// Says (with `json`, as a `notice` event on stdout; otherwise on stderr)
/// that the piped standard input is not run beside -e or a FILE.
fn note_unread_stdin(json: bool) {
    // Piped input beside -e or FILE is not run: say so rather than drop it unseen.
    let note = Notice::StdinNotRead;
    let _ = if json {
        writeln!(
            printer_out(),
            "{}",
            serde_json::json!({"kind": "notice", "code": note.code().as_str(), "message": note.to_string()})
        )
    } else {
        writeln!(io::stderr(), "gradcalc: note: {note}")
    };
}

/// Line mode (`--json --lines`): standard input run a line at a time as it
/// arrives ([`driver::run_lines`]), after the FILEs and `-e` (`failed` if one
/// of them failed). Returns the exit status: 1 if any statement failed.
fn run_lines<O: Write, E: Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
    failed: bool,
) -> u8 {
    let options = Options {
        keep_going: true,
        loads_stop_at_error: false,
        script: true,
        lines: true,
    };
    let mut stdin = io::stdin().lock();
    match driver::run_lines(session, printer, &mut stdin, "<stdin>", options) {
        Outcome::Done { failed: f } | Outcome::Quit { failed: f } => match printer.flush() {
            Ok(()) => u8::from(failed || f),
            Err(error) => output_failed(&error),
        },
        Outcome::Stopped => 1,
        Outcome::Output(error) => output_failed(&error),
        Outcome::Interrupted => interrupt::EXIT_STATUS,
    }
}

/// Whether bytes are waiting on standard input right now (a pipe or a file
/// with something in it): input someone meant to give. `/dev/null` or an
/// empty pipe is not; a terminal's lines typed ahead count here, so callers
/// ask only when standard input is no terminal.
fn stdin_has_input() -> bool {
    rustix::io::ioctl_fionread(io::stdin()).is_ok_and(|waiting| waiting > 0)
}

/// Standard output, for the one message written before the printer exists.
fn printer_out() -> io::StdoutLock<'static> {
    io::stdout().lock()
}

/// False when the locale (the first of `LC_ALL`, `LC_CTYPE`, `LANG` that is set and
/// not empty) does not name UTF-8: then output falls back to ASCII as with `--ascii`.
/// No locale at all counts as UTF-8.
fn locale_is_utf8() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
        .is_none_or(|locale| {
            let locale = locale.to_ascii_lowercase();
            locale.contains("utf-8") || locale.contains("utf8")
        })
}
