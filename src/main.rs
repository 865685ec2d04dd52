//! The `gradcalc` binary: argument parsing and mode selection only.

use std::io::{self, IsTerminal, Read};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use gradcalc::render::{Format, Precision, Printer, Style};
use gradcalc::session::Session;

const EXAMPLES: &str = "\
Examples:
  gradcalc                                  start the interactive calculator
  gradcalc -e 'x = 2; y = 3; z = x*y + x' -e ':grad'
  gradcalc --json -e 'x = 3; x^2; :grad x'  JSON Lines for programs
  gradcalc examples/neuron.calc -i          run a script, then stay interactive
  echo 'x = 0.5; tanh(x); :trace' | gradcalc

Exit status: 0 on success, 1 if a statement failed, 2 on a usage error.";

/// A calculator with gradients: type arithmetic, ask `:grad x`, see every backward step.
#[derive(Parser, Debug)]
#[command(name = "gradcalc", version, about, after_help = EXAMPLES)]
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

    /// Colour output: auto (on a terminal, unless NO_COLOR is set), always, never
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    color: ColorChoice,

    /// Significant digits in human output, or `full` for round-trip precision
    #[arg(long, default_value = "10", value_parser = parse_precision, value_name = "N|full")]
    precision: Precision,

    /// In batch modes, go on after an error (the exit status is still 1)
    #[arg(long)]
    keep_going: bool,

    /// Write `d` and `->` instead of `∂` and `→`
    #[arg(long)]
    ascii: bool,
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
    let args = Args::parse();
    let worker = std::thread::Builder::new()
        .stack_size(STACK_BYTES)
        .spawn(move || run(args));
    match worker.map(|handle| handle.join()) {
        Ok(Ok(code)) => ExitCode::from(code),
        _ => ExitCode::from(1),
    }
}

/// Chooses the mode and runs it; returns the exit status.
fn run(args: Args) -> u8 {
    let stdin_is_terminal = io::stdin().is_terminal();
    let stdout_is_terminal = io::stdout().is_terminal();
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout_is_terminal && !no_color,
    };
    let format = if args.json {
        Format::Json
    } else {
        Format::Human(Style {
            color,
            ascii: args.ascii || !locale_is_utf8(),
            precision: args.precision,
        })
    };
    // Buffered: a script of a million statements must not make a million writes.
    // The printer flushes stdout before every error and the REPL after every input.
    let stdout = io::BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut printer = Printer::new(format, stdout, io::stderr().lock());
    let mut session = Session::new();
    let mut failed = false;

    let mut sources = Vec::new();
    for path in &args.files {
        match std::fs::read(path) {
            Ok(bytes) => sources.push((bytes, path.display().to_string())),
            Err(error) => {
                let message = format!("cannot read {}: {error}", path.display());
                if args.json {
                    let event = serde_json::json!({"kind": "error", "message": message, "source": path.display().to_string()});
                    println!("{event}");
                } else {
                    eprintln!("gradcalc: {message}");
                }
                return 2;
            }
        }
    }
    for (i, source) in args.eval.iter().enumerate() {
        let origin = if args.eval.len() == 1 {
            "-e".to_string()
        } else {
            format!("-e #{}", i + 1)
        };
        sources.push((source.clone().into_bytes(), origin));
    }
    // Piped stdin is read when there is nothing else to run, or after the rest with -i.
    let batch_stdin = (sources.is_empty() || args.interactive) && !stdin_is_terminal;
    if batch_stdin {
        let mut bytes = Vec::new();
        if let Err(error) = io::stdin().read_to_end(&mut bytes) {
            eprintln!("gradcalc: cannot read stdin: {error}");
            return 1;
        }
        sources.push((bytes, "<stdin>".to_string()));
    }
    let interactive = (sources.is_empty() || args.interactive) && stdin_is_terminal;

    for (bytes, origin) in &sources {
        match run_bytes(&mut session, &mut printer, bytes, origin, args.keep_going) {
            Outcome::Ok => {}
            Outcome::Failed => {
                failed = true;
                if !args.keep_going {
                    break;
                }
            }
            Outcome::Quit => {
                let _ = printer.flush();
                return u8::from(failed);
            }
            Outcome::ClosedPipe => return u8::from(failed),
        }
    }
    let _ = printer.flush();
    if interactive && !(failed && !args.keep_going && !args.interactive) {
        let status = gradcalc::repl::run(&mut session, &mut printer, stdout_is_terminal);
        return if status == 0 { 0 } else { 1 };
    }
    u8::from(failed)
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

enum Outcome {
    Ok,
    Failed,
    Quit,
    ClosedPipe,
}

/// Runs one source given as bytes: the valid UTF-8 part line by line, then an
/// error at the first invalid byte.
fn run_bytes<O: io::Write, E: io::Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
    bytes: &[u8],
    origin: &str,
    keep_going: bool,
) -> Outcome {
    // A byte-order mark (Windows editors write one) is not part of the text.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let (text, invalid_at) = match std::str::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(error) => {
            let valid = &bytes[..error.valid_up_to()];
            let cut = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let text = std::str::from_utf8(&bytes[..cut]).unwrap_or_default();
            (text, Some(error.valid_up_to()))
        }
    };
    let mut failed = false;
    let mut closed = false;
    let flow = session.run_source(text, |result| {
        if printer.report(&result, text, origin).is_err() {
            closed = true;
            return ControlFlow::Break(());
        }
        if result.is_err() || printer.take_failure() {
            failed = true;
            if !keep_going {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    });
    if closed {
        return Outcome::ClosedPipe;
    }
    if let (Some(offset), false) = (invalid_at, failed && !keep_going) {
        let shown = String::from_utf8_lossy(bytes).into_owned();
        let _ = printer.problem(
            &format!("{origin} is not valid UTF-8 (byte {offset})"),
            shown.len().min(offset),
            Some("save the file as UTF-8".to_string()),
            &shown,
            origin,
        );
        return Outcome::Failed;
    }
    match (flow, failed) {
        (_, true) => Outcome::Failed,
        (ControlFlow::Break(()), false) => Outcome::Quit,
        (ControlFlow::Continue(()), false) => Outcome::Ok,
    }
}
