//! `Repl`: gradcalc on a pseudo-terminal, driven as a user types, for the
//! tests of `repl`.
//!
//! Every wait is for something the program shows or does — a text on the
//! screen, the terminal handed back to line mode, CPU time spent on a
//! statement — with a generous ceiling ([`CEILING`]) that only a hang
//! reaches; a failed wait prints what the screen showed since the last match.
//! Nothing sleeps a fixed time and nothing asserts a latency (latency goals
//! live in the benchmarks), so a loaded machine makes the tests slower, not
//! red.

use std::io::{ErrorKind, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::Session;
use expectrl::process::unix::WaitStatus;

use crate::util;

/// How long any one wait may take before the test fails: far beyond what a
/// debug build on a busy 2-core machine needs, so that reaching it means a hang.
pub const CEILING: Duration = Duration::from_secs(300);

/// How often a wait looks again when nothing new has happened.
const POLL: Duration = Duration::from_millis(5);

/// What the line editor prints as it starts reading a line (bracketed paste
/// on), before the prompt: a `> ` after it is a fresh prompt, not a redraw
/// of the line being typed.
const EDITOR_READS: &str = "\u{1b}[?2004h";

/// gradcalc on a pseudo-terminal: what it printed and not yet matched, and
/// what was last typed (for failure messages).
pub struct Repl {
    session: expectrl::session::OsSession,
    unread: Vec<u8>,
    typed: String,
    /// Whether the line editor marks a fresh prompt ([`EDITOR_READS`]); not
    /// on a dumb terminal or with the output not a terminal.
    editor_marks: bool,
}

/// The command the pseudo-terminal tests start: the binary with its history
/// under `state` (`XDG_STATE_HOME`, `GRADCALC_HISTORY` removed), no colour
/// (`NO_COLOR=1`), a UTF-8 locale and `TERM=xterm`. Change it before
/// [`Repl::spawn`] for other arguments, environment or directory.
pub fn command(state: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gradcalc"));
    command
        .env("XDG_STATE_HOME", state)
        .env_remove("GRADCALC_HISTORY")
        .env("NO_COLOR", "1")
        .env("LC_ALL", "C.UTF-8")
        .env("TERM", "xterm");
    command
}

/// [`command`]`(state)` started by `sh -c script`, which ends with
/// `exec "$0"` (gradcalc's path) once it has done its part, as a shell
/// script or a shell's settings start it: the same environment.
pub fn command_in_shell(state: &Path, script: &str) -> Command {
    let gradcalc = command(state);
    let mut shell = Command::new("sh");
    shell.args(["-c", script]).arg(gradcalc.get_program());
    for (key, value) in gradcalc.get_envs() {
        match value {
            Some(value) => shell.env(key, value),
            None => shell.env_remove(key),
        };
    }
    shell
}

impl Repl {
    /// Starts [`command`]`(state)` and waits for its first prompt.
    pub fn start(state: &Path) -> Repl {
        let mut repl = Repl::spawn(command(state));
        repl.prompt();
        repl
    }

    /// Starts `command` on a pseudo-terminal (80 columns) without waiting for
    /// anything.
    pub fn spawn(command: Command) -> Repl {
        let session = Session::spawn(command).expect("spawn gradcalc on a pty");
        Repl {
            session,
            unread: Vec::new(),
            typed: String::from("(nothing yet)"),
            editor_marks: true,
        }
    }

    /// This program's line editor prints no marks (`TERM=dumb`, or its
    /// output is not a terminal): [`Repl::prompt`] then waits for `> ` alone.
    pub fn without_editor_marks(mut self) -> Repl {
        self.editor_marks = false;
        self
    }

    /// Sets the terminal's size to `columns` × `rows`, as a resized window
    /// does (the program is sent SIGWINCH).
    pub fn resize(&mut self, columns: u16, rows: u16) {
        self.session
            .get_process_mut()
            .set_window_size(columns, rows)
            .unwrap_or_else(|e| panic!("cannot resize the terminal: {e}"));
    }

    /// Types `keys` as they are (no Enter added).
    pub fn send(&mut self, keys: &str) {
        self.session
            .write_all(keys.as_bytes())
            .and_then(|()| self.session.flush())
            .unwrap_or_else(|e| panic!("cannot type {keys:?}: {e}"));
        self.typed = keys.to_string();
    }

    /// Types `text` and Enter.
    pub fn send_line(&mut self, text: &str) {
        self.send(&format!("{text}\n"));
    }

    /// Types `text` and Enter, and waits for `reply`; returns what was printed
    /// up to and including it. (`reply` may be matched in the echo of `text`;
    /// [`Repl::prompt`] after it waits for the statement to end.)
    pub fn line(&mut self, text: &str, reply: &str) -> String {
        self.send_line(text);
        self.expect(reply)
    }

    /// Types each line of `exchange` and waits for what it shows, in order:
    /// a conversation (a quiz's answers and verdicts) as one table.
    pub fn converse(&mut self, exchange: &[(&str, &[&str])]) {
        for (text, shown) in exchange {
            self.send_line(text);
            for part in *shown {
                self.expect(part);
            }
        }
    }

    /// Types `keys` (ending in Tab) and waits for the completion `shown`.
    pub fn complete(&mut self, keys: &str, shown: &str) {
        self.send(keys);
        self.expect(shown);
    }

    /// Waits for a fresh prompt: the editor starting to read a line, then
    /// `> `. (A bare `> ` also starts every redraw of the line being typed;
    /// typing after one of those could reach the terminal in line mode, where
    /// a Ctrl-C flushes it.)
    pub fn prompt(&mut self) -> String {
        let mut seen = String::new();
        if self.editor_marks {
            seen += &self.expect(EDITOR_READS);
        }
        seen += &self.expect("> ");
        seen
    }

    /// Presses Ctrl-C (a key while the line editor reads, SIGINT while a
    /// statement runs).
    pub fn ctrl_c(&mut self) {
        self.send("\u{3}");
    }

    /// Presses Ctrl-D.
    pub fn ctrl_d(&mut self) {
        self.send("\u{4}");
    }

    /// Waits until `text` has been printed since the last match and returns
    /// everything printed up to and including it. Panics, printing the screen
    /// since the last match, when the ceiling passes or the program ends first.
    pub fn expect(&mut self, text: &str) -> String {
        self.expect_while(text, |_| ())
    }

    /// Waits until one of `texts` has been printed since the last match (the
    /// first printed wins) and returns everything printed up to and
    /// including it; fails as [`Repl::expect`] does.
    pub fn expect_any(&mut self, texts: &[&str]) -> String {
        let started = Instant::now();
        loop {
            let first = texts
                .iter()
                .filter_map(|text| find(&self.unread, text.as_bytes()).map(|at| at + text.len()))
                .min();
            if let Some(end) = first {
                let seen: Vec<u8> = self.unread.drain(..end).collect();
                return String::from_utf8_lossy(&seen).into_owned();
            }
            self.read_or_fail(started, &format!("one of {texts:?}"));
        }
    }

    /// [`Repl::expect`], calling `meanwhile` each time it looks again.
    fn expect_while(&mut self, text: &str, mut meanwhile: impl FnMut(&mut Repl)) -> String {
        let needle = text.as_bytes();
        let started = Instant::now();
        let mut searched: usize = 0;
        loop {
            let from = searched.saturating_sub(needle.len());
            if let Some(at) = find(&self.unread[from..], needle) {
                let end = from + at + needle.len();
                let seen: Vec<u8> = self.unread.drain(..end).collect();
                return String::from_utf8_lossy(&seen).into_owned();
            }
            searched = self.unread.len();
            self.read_or_fail(started, &format!("{text:?}"));
            meanwhile(self);
        }
    }

    /// Reads more ([`Repl::read_more`]); fails, saying that `expected` was
    /// not seen and why, when the program has ended or the wait that began at
    /// `started` has passed the [`CEILING`].
    fn read_or_fail(&mut self, started: Instant, expected: &str) {
        let ended = !self.read_more();
        if ended || started.elapsed() > CEILING {
            let why = if ended {
                "the program ended"
            } else {
                "the ceiling passed"
            };
            self.fail(&format!("expected {expected}, but {why}"));
        }
    }

    /// Reads what the program printed into `unread`, or waits a moment when it
    /// printed nothing; false once the program has ended and nothing is left.
    fn read_more(&mut self) -> bool {
        let mut buffer = [0u8; 1 << 16];
        match self.session.try_read(&mut buffer) {
            Ok(0) => false,
            Ok(n) => {
                self.unread.extend_from_slice(&buffer[..n]);
                true
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(POLL);
                true
            }
            // Linux reports the end of a pseudo-terminal's child as EIO.
            Err(_) => false,
        }
    }

    /// Panics with `message`, what was typed last and the screen since the
    /// last match (its last 4000 characters, escape sequences removed).
    fn fail(&mut self, message: &str) -> ! {
        let screen = strip_ansi(&String::from_utf8_lossy(&self.unread));
        let tail: String = {
            let chars: Vec<char> = screen.chars().collect();
            chars[chars.len().saturating_sub(4000)..].iter().collect()
        };
        let process = self.process_state();
        panic!(
            "{message}\nlast typed: {:?}\nthe screen since the last match:\n{tail}\n(end of screen)\n{process}",
            self.typed
        );
    }

    /// What the program was doing when a wait failed, for the failure
    /// message: each thread's state and kernel wait channel (`S pipe_read`,
    /// `R`, `T` for stopped) from /proc, its CPU time, and whether the
    /// terminal was in line mode or in the line editor's raw mode.
    fn process_state(&self) -> String {
        let pid = self.pid();
        let mut lines = vec![format!(
            "process {pid}: CPU time {:?}, terminal in {}",
            util::cpu_time(pid),
            if self.in_line_mode() {
                "line mode"
            } else {
                "raw mode"
            }
        )];
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
        for task in tasks.into_iter().flatten().flatten() {
            let dir = task.path();
            let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap_or_default();
            let stat = read("stat");
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, after)| after.split_whitespace().next().map(str::to_string))
                .unwrap_or_default();
            lines.push(format!(
                "  thread {} ({}): state {state}, waiting in {}",
                task.file_name().to_string_lossy(),
                read("comm").trim(),
                read("wchan").trim()
            ));
        }
        lines.join("\n")
    }

    /// Waits until a statement is running and has done `work` of CPU time:
    /// the line editor has handed the terminal back to line mode (where
    /// Ctrl-C is a signal, not a key) and the process's CPU time has grown by
    /// `work` since the call.
    pub fn wait_for_work(&mut self, work: Duration) {
        let started = Instant::now();
        let pid = self.pid();
        let used = || util::cpu_time(pid).unwrap_or_default();
        let before = used();
        while !(self.in_line_mode() && used() >= before + work) {
            // Keep reading, so that a program printing a lot is not blocked
            // on a full terminal.
            if !self.read_more() || started.elapsed() > CEILING {
                self.fail(&format!("no statement ran for {work:?} of CPU time"));
            }
        }
    }

    /// Types `statement` (one that runs for seconds) and stops it with
    /// Ctrl-C once it has done `work` of CPU time ([`Repl::wait_for_work`]);
    /// waits for `interrupted` and the prompt, and returns what was printed.
    /// A line typed before Ctrl-C, while the statement runs, must be dropped:
    /// typed again after, `typed` is still an unknown name. Ctrl-C is pressed
    /// again every 10 s while the statement still runs, in case the first came
    /// as the editor let the line go.
    pub fn interrupt(&mut self, statement: &str, work: Duration) -> String {
        self.send_line(statement);
        self.wait_for_work(work);
        self.send("typed = 1\n");
        self.ctrl_c();
        let mut pressed = Instant::now();
        let mut seen = self.expect_while("interrupted", |repl| {
            if pressed.elapsed() > Duration::from_secs(10) && repl.in_line_mode() {
                repl.ctrl_c();
                pressed = Instant::now();
            }
        });
        seen += &self.prompt();
        self.line("typed", "unknown name `typed`");
        self.prompt();
        seen
    }

    /// True when the terminal is in line mode with signals on (the line
    /// editor is not reading keys).
    fn in_line_mode(&self) -> bool {
        use rustix::termios::{LocalModes, tcgetattr};
        let master = self.session.get_process().get_raw_handle().unwrap();
        let modes = tcgetattr(&master).unwrap().local_modes;
        modes.contains(LocalModes::ISIG | LocalModes::ICANON)
    }

    /// The process id of the program.
    pub fn pid(&self) -> u32 {
        self.session.get_process().pid().as_raw() as u32
    }

    /// Waits for the program to end and returns how.
    pub fn wait(mut self) -> WaitStatus {
        // Read to the end, so that the program is never blocked writing.
        let started = Instant::now();
        while self.read_more() {
            if started.elapsed() > CEILING {
                self.fail("the program did not end");
            }
        }
        self.session.get_process().wait().unwrap()
    }

    /// Types `:quit` and checks that the program leaves with status 0.
    pub fn leave(mut self) {
        self.send_line(":quit");
        self.exits_with_0();
    }

    /// Waits for the program to end and checks that its status is 0.
    pub fn exits_with_0(self) {
        let status = self.wait();
        assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
    }
}

/// The position of `needle` in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `text` without ANSI escape sequences (CSI `ESC [ … letter`).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// True when `text` holds an ANSI colour (SGR) sequence `ESC [ … m`.
pub fn has_colour(text: &str) -> bool {
    text.split('\u{1b}').skip(1).any(|rest| {
        rest.strip_prefix('[').is_some_and(|csi| {
            let end = csi.find(|c: char| !(c.is_ascii_digit() || c == ';'));
            end.is_some_and(|i| csi[i..].starts_with('m'))
        })
    })
}
