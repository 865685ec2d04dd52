//! The keys of `:step` read one at a time, as the page takes them: → and
//! Space the next step, ← and Backspace the one before, Home the first, End
//! the last, q, Esc, Ctrl-C and Ctrl-D end the walk. The typed answers of
//! the line-based prompt still work (`b`, `g N` or `N`, then Enter).
//!
//! [`RawKeys::start`] puts the terminal in a key-at-a-time mode (no line
//! editing, no echo, Ctrl-C a key rather than a signal) and the value puts
//! the terminal back as it found it when dropped, on every way out of `:step`
//! (a return, an error, a panic unwinding).

use std::io;

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::termios::{
    InputModes, LocalModes, OptionalActions, QueueSelector, SpecialCodeIndex, Termios, tcflush,
    tcgetattr, tcsetattr,
};

/// An answer at the `:step` prompt.
#[derive(Debug, PartialEq)]
pub(super) enum StepKey {
    /// Enter, → or Space: the next step.
    Next,
    /// `b` (then Enter), ← or Backspace: the step before (the first stays).
    Back,
    /// Home: the first step.
    First,
    /// End: the last step.
    Last,
    /// `g N` or `N` (then Enter): step N, as `:trace` numbers them.
    Go(usize),
    /// q, Esc, Ctrl-C, Ctrl-D or a line of anything else: stop; what was typed
    /// after a `q` (or instead of one) is not run.
    Stop(String),
}

/// Reads an answer typed as a line at the `:step` prompt: empty is the next
/// step, `b` back, `g N` or `N` step N, anything else stops (a leading `q`
/// taken off what is reported as not run).
pub(super) fn step_key(answer: &str) -> StepKey {
    let answer = answer.trim();
    let number = answer
        .strip_prefix(['g', 'G'])
        .unwrap_or(answer)
        .trim()
        .parse::<usize>();
    match answer {
        "" => StepKey::Next,
        "b" | "B" | "back" => StepKey::Back,
        _ if number.is_ok() => StepKey::Go(number.unwrap_or_default()),
        _ => StepKey::Stop(
            answer
                .strip_prefix(['q', 'Q'])
                .unwrap_or(answer)
                .trim_start()
                .to_string(),
        ),
    }
}

/// What reading the keyboard gave: a key, or text to echo (a character of a
/// typed answer, or its erasure).
#[derive(Debug, PartialEq)]
pub(super) enum Read {
    /// A key of the walk.
    Key(StepKey),
    /// Show this where the answer is being typed.
    Echo(&'static str),
    /// Show this character of a typed answer.
    Typed(char),
}

/// How long a lone Esc waits for the rest of an escape sequence, and how
/// often the wait looks at the Ctrl-C flag.
const TICK: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 50_000_000,
};

/// The terminal in key-at-a-time mode while `:step` reads keys; dropped, it
/// puts the terminal's modes back as they were.
pub(super) struct RawKeys {
    /// The modes to put back.
    saved: Termios,
    /// Bytes read and not yet made keys.
    pending: Vec<u8>,
    /// An answer being typed (`g 5`), ended by Enter.
    typed: String,
}

impl RawKeys {
    /// Switches standard input to key-at-a-time mode: `None` when it is no
    /// terminal or the switch failed (then `:step` reads lines).
    pub(super) fn start() -> Option<RawKeys> {
        let stdin = io::stdin();
        if !rustix::termios::isatty(&stdin) {
            return None;
        }
        let saved = tcgetattr(&stdin).ok()?;
        let mut raw = saved.clone();
        raw.local_modes
            .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG | LocalModes::IEXTEN);
        raw.input_modes.remove(InputModes::IXON);
        raw.special_codes[SpecialCodeIndex::VMIN] = 1;
        raw.special_codes[SpecialCodeIndex::VTIME] = 0;
        tcsetattr(&stdin, OptionalActions::Now, &raw).ok()?;
        Some(RawKeys {
            saved,
            pending: Vec::new(),
            typed: String::new(),
        })
    }

    /// Waits for the next key or echo. A Ctrl-C delivered as a signal (the
    /// process's flag, [`crate::interrupt`]) stops the walk as the key does.
    ///
    /// Errors: standard input could not be read; its end stops the walk.
    pub(super) fn next(&mut self) -> io::Result<Read> {
        let stdin = io::stdin();
        let mut waited = false;
        loop {
            if crate::interrupt::requested() {
                crate::interrupt::clear();
                return Ok(Read::Key(StepKey::Stop(String::new())));
            }
            if let Some(read) = self.decode(waited) {
                return Ok(read);
            }
            let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
            match poll(&mut fds, Some(&TICK)) {
                Ok(0) => {
                    waited = true;
                    continue;
                }
                Err(rustix::io::Errno::INTR) => continue,
                Ok(_) => {}
                Err(error) => return Err(error.into()),
            }
            let mut bytes = [0u8; 256];
            match rustix::io::read(&stdin, &mut bytes) {
                Ok(0) => return Ok(Read::Key(StepKey::Stop(String::new()))),
                Ok(n) => {
                    self.pending.extend_from_slice(&bytes[..n]);
                    waited = false;
                }
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(error) => return Err(error.into()),
            }
        }
    }

    /// Makes the pending bytes a key or an echo, taking them off; `None` when
    /// more bytes are needed. `waited`: a tick passed with nothing new, so a
    /// lone or unfinished escape sequence is the Esc key. A key that ends the
    /// walk drops the keys typed after it: they were meant for the walk, not
    /// for the `> ` prompt (what followed a first `q` on its line is reported
    /// as not run: `q:grad b`).
    fn decode(&mut self, waited: bool) -> Option<Read> {
        loop {
            let quit = self.typed.is_empty() && matches!(self.pending.first(), Some(b'q' | b'Q'));
            let (read, used) = match decode(&self.pending, self.typed.is_empty()) {
                Decoded::Key(key, used) => (Read::Key(key), used),
                Decoded::Byte(byte) => (self.byte(byte), 1),
                Decoded::Char(c, used) => {
                    self.typed.push(c);
                    (Read::Typed(c), used)
                }
                Decoded::Ignored(used) => {
                    self.pending.drain(..used);
                    continue;
                }
                Decoded::Incomplete if waited => (Read::Key(StepKey::Stop(String::new())), 1),
                Decoded::Incomplete | Decoded::Empty => return None,
            };
            self.pending.drain(..used);
            if let Read::Key(StepKey::Stop(rest)) = read {
                let rest = if quit { self.quit_rest() } else { rest };
                self.pending.clear();
                let _ = tcflush(io::stdin(), QueueSelector::IFlush);
                return Some(Read::Key(StepKey::Stop(rest)));
            }
            return Some(read);
        }
    }

    /// A control byte or space: Enter ends a typed answer, Backspace erases
    /// its last character (or goes back when nothing is typed), Space steps
    /// on when nothing is typed.
    fn byte(&mut self, byte: u8) -> Read {
        match byte {
            0x7f | 0x08 if self.typed.pop().is_some() => Read::Echo("\x08 \x08"),
            0x7f | 0x08 => Read::Key(StepKey::Back),
            b' ' if self.typed.is_empty() => Read::Key(StepKey::Next),
            b' ' => {
                self.typed.push(' ');
                Read::Typed(' ')
            }
            // Enter.
            _ => Read::Key(step_key(&std::mem::take(&mut self.typed))),
        }
    }

    /// What follows a `q` pressed as the first key, up to the end of its
    /// line (empty when nothing does).
    fn quit_rest(&self) -> String {
        let line = self.pending.split(|b| *b == b'\n' || *b == b'\r').next();
        String::from_utf8_lossy(line.unwrap_or_default())
            .trim()
            .to_string()
    }
}

impl Drop for RawKeys {
    fn drop(&mut self) {
        let _ = tcsetattr(io::stdin(), OptionalActions::Now, &self.saved);
    }
}

/// What the front of the pending bytes is.
#[derive(Debug, PartialEq)]
enum Decoded {
    /// Nothing pending.
    Empty,
    /// A key, from this many bytes.
    Key(StepKey, usize),
    /// A control byte or Space, handled by the typed answer's state.
    Byte(u8),
    /// A character of a typed answer, from this many bytes.
    Char(char, usize),
    /// A sequence no key of the walk, this many bytes long.
    Ignored(usize),
    /// The start of an escape sequence or of a character: more bytes needed.
    Incomplete,
}

/// Decodes the front of `bytes`; `fresh`: nothing of an answer is typed, so
/// `q` ends the walk rather than being typed.
fn decode(bytes: &[u8], fresh: bool) -> Decoded {
    let Some(&first) = bytes.first() else {
        return Decoded::Empty;
    };
    match first {
        0x1b => escape(bytes),
        // Ctrl-C, Ctrl-D.
        0x03 | 0x04 => Decoded::Key(StepKey::Stop(String::new()), 1),
        b'q' | b'Q' if fresh => Decoded::Key(StepKey::Stop(String::new()), 1),
        b'\r' | b'\n' | 0x7f | 0x08 | b' ' => Decoded::Byte(first),
        _ if first < 0x20 => Decoded::Ignored(1),
        _ => {
            let width = match first {
                0xf0.. => 4,
                0xe0.. => 3,
                0xc0.. => 2,
                _ => 1,
            };
            match bytes.get(..width).map(std::str::from_utf8) {
                None => Decoded::Incomplete,
                Some(Ok(text)) => text
                    .chars()
                    .next()
                    .map_or(Decoded::Ignored(width), |c| Decoded::Char(c, width)),
                Some(Err(_)) => Decoded::Ignored(1),
            }
        }
    }
}

/// Decodes an escape sequence at the front of `bytes` (which starts with
/// Esc): the arrows, Home and End as xterm and the Linux console send them,
/// in both cursor modes (`Esc [ C`, `Esc O C`, `Esc [ 1 ~`, …).
fn escape(bytes: &[u8]) -> Decoded {
    match bytes.get(1) {
        None => Decoded::Incomplete,
        Some(b'O') => match bytes.get(2) {
            None => Decoded::Incomplete,
            Some(&end) => final_key(end).map_or(Decoded::Ignored(3), |key| Decoded::Key(key, 3)),
        },
        Some(b'[') => {
            // Parameters, then one final byte from `@` to `~`.
            let Some(end) = bytes[2..].iter().position(|b| (0x40..=0x7e).contains(b)) else {
                return Decoded::Incomplete;
            };
            let used = end + 3;
            let key = match (&bytes[2..2 + end], bytes[2 + end]) {
                (b"1" | b"7", b'~') => Some(StepKey::First),
                (b"4" | b"8", b'~') => Some(StepKey::Last),
                (b"" | b"1", letter) => final_key(letter),
                _ => None,
            };
            key.map_or(Decoded::Ignored(used), |key| Decoded::Key(key, used))
        }
        // Esc alone, then another key.
        Some(_) => Decoded::Key(StepKey::Stop(String::new()), 1),
    }
}

/// The key of an escape sequence's final letter: C → (next), D ← (back),
/// H Home (first), F End (last).
fn final_key(letter: u8) -> Option<StepKey> {
    match letter {
        b'C' => Some(StepKey::Next),
        b'D' => Some(StepKey::Back),
        b'H' => Some(StepKey::First),
        b'F' => Some(StepKey::Last),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_keys_decode_in_both_cursor_modes() {
        let key = |bytes: &[u8]| match decode(bytes, true) {
            Decoded::Key(key, used) => (key, used),
            other => panic!("{bytes:?}: {other:?}"),
        };
        assert_eq!(key(b"\x1b[C"), (StepKey::Next, 3));
        assert_eq!(key(b"\x1bOC"), (StepKey::Next, 3));
        assert_eq!(key(b"\x1b[D"), (StepKey::Back, 3));
        assert_eq!(key(b"\x1b[H"), (StepKey::First, 3));
        assert_eq!(key(b"\x1b[1~"), (StepKey::First, 4));
        assert_eq!(key(b"\x1b[F"), (StepKey::Last, 3));
        assert_eq!(key(b"\x1b[4~"), (StepKey::Last, 4));
        assert_eq!(key(b"q"), (StepKey::Stop(String::new()), 1));
        assert_eq!(key(b"\x1bx"), (StepKey::Stop(String::new()), 1));
        assert_eq!(decode(b"\x1b[", true), Decoded::Incomplete);
        assert_eq!(decode(b"\x1b[1;5A", true), Decoded::Ignored(6));
        assert_eq!(decode(b"q", false), Decoded::Char('q', 1));
        assert_eq!(decode("é".as_bytes(), true), Decoded::Char('é', 2));
        assert_eq!(decode(&"é".as_bytes()[..1], true), Decoded::Incomplete);
    }

    #[test]
    fn a_typed_answer_reads_as_the_line_prompt_did() {
        assert_eq!(step_key(""), StepKey::Next);
        assert_eq!(step_key("b"), StepKey::Back);
        assert_eq!(step_key("g 5"), StepKey::Go(5));
        assert_eq!(step_key("3"), StepKey::Go(3));
        assert_eq!(step_key("q:grad b"), StepKey::Stop(":grad b".to_string()));
    }
}
