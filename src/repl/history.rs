//! The history file: read once at the start (damaged lines skipped with one
//! warning), then each new line APPENDED under an exclusive lock (the standard
//! library's `File::lock`, `flock` on Unix), so that two REPLs sharing the
//! file keep each other's lines. The file is never rewritten,
//! truncated or chmodded. It is written only if it is a regular file (or does
//! not exist yet): `/dev/null`, a FIFO, a device or a symbolic link turns the
//! history off without any write. `GRADCALC_HISTORY=` (empty) or `off` turns it
//! off too.
//!
//! The format is rustyline's `#V2`: a first line `#V2`, then one entry per line
//! with `\` written `\\` and a newline inside an entry written `\n`.

use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The most entries read back from the file (the newest are kept).
pub const MAX_ENTRIES: usize = 1000;

/// The most bytes read from the end of the history file at the start.
const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

const HEADER: &str = "#V2";

/// Where the history goes: `$GRADCALC_HISTORY` (off when empty or `off`), else
/// `$XDG_STATE_HOME/gradcalc/history`, else `~/.local/state/gradcalc/history`.
/// `None`: no history file.
pub fn history_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("GRADCALC_HISTORY") {
        if path.is_empty() || path == "off" {
            return None;
        }
        return Some(PathBuf::from(path));
    }
    let state = state_home(std::env::var_os("XDG_STATE_HOME"), std::env::var_os("HOME"))?;
    Some(state.join("gradcalc").join("history"))
}

/// The XDG state directory: `xdg` (`$XDG_STATE_HOME`) when it is an absolute
/// path, else `home/.local/state`. The XDG Base Directory specification
/// says a relative path in these variables is invalid and must be ignored.
fn state_home(
    xdg: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    xdg.map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|home| PathBuf::from(home).join(".local/state")))
}

/// An open history: where new lines go.
#[derive(Debug)]
pub struct HistoryFile {
    path: PathBuf,
}

/// What opening the history found.
#[derive(Debug, Default)]
pub struct Opened {
    /// Where to append, or `None` when the history is off.
    pub file: Option<HistoryFile>,
    /// The entries read, oldest first (at most [`MAX_ENTRIES`]).
    pub entries: Vec<String>,
    /// A warning to show once (damaged lines, a path that is not a regular file).
    pub warning: Option<String>,
}

/// Reads the history at `path` and readies it for appending.
pub fn open(path: &Path) -> Opened {
    let shown = path.display();
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return Opened {
                file: Some(HistoryFile {
                    path: path.to_path_buf(),
                }),
                ..Opened::default()
            };
        }
        Err(error) => {
            return Opened {
                warning: Some(format!(
                    "warning: history file {shown} not read ({error}); history is off"
                )),
                ..Opened::default()
            };
        }
    };
    if !metadata.is_file() {
        // `/dev/null` is the usual way to say "no history": no warning for it.
        let warning = (path != Path::new("/dev/null")).then(|| {
            format!("warning: history file {shown} is not a regular file; history is off (nothing is written to it)")
        });
        return Opened {
            warning,
            ..Opened::default()
        };
    }
    match read_entries(path) {
        Ok((entries, damaged)) => Opened {
            file: Some(HistoryFile {
                path: path.to_path_buf(),
            }),
            entries,
            warning: (damaged > 0).then(|| {
                let s = if damaged == 1 { "" } else { "s" };
                format!(
                    "warning: history file {shown}: {damaged} damaged line{s} skipped (not UTF-8); new lines are still saved"
                )
            }),
        },
        Err(error) => Opened {
            warning: Some(format!(
                "warning: history file {shown} not read ({error}); history is off"
            )),
            ..Opened::default()
        },
    }
}

/// The entries of the file (the last [`MAX_ENTRIES`]), and how many lines were
/// not UTF-8.
fn read_entries(path: &Path) -> io::Result<(Vec<String>, usize)> {
    let mut file = std::fs::File::open(path)?;
    let length = file.metadata()?.len();
    let skip = length.saturating_sub(MAX_READ_BYTES);
    if skip > 0 {
        io::Seek::seek(&mut file, io::SeekFrom::Start(skip))?;
    }
    let mut bytes = Vec::new();
    file.take(MAX_READ_BYTES).read_to_end(&mut bytes)?;
    let mut lines = bytes.split(|&b| b == b'\n').peekable();
    if skip > 0 {
        lines.next(); // a partial line
    }
    let mut escaped = false;
    let mut entries = Vec::new();
    let mut damaged = 0;
    for (i, line) in lines.enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if i == 0 && skip == 0 && line == HEADER.as_bytes() {
            escaped = true;
            continue;
        }
        if line.is_empty() {
            continue;
        }
        match std::str::from_utf8(line) {
            Ok(text) if escaped || skip > 0 => entries.push(unescape(text)),
            Ok(text) => entries.push(text.to_string()),
            Err(_) => damaged += 1,
        }
    }
    let extra = entries.len().saturating_sub(MAX_ENTRIES);
    entries.drain(..extra);
    Ok((entries, damaged))
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            },
            (c, false) => out.push(c),
        }
    }
    out
}

fn escape(entry: &str) -> String {
    entry.replace('\\', "\\\\").replace('\n', "\\n")
}

impl HistoryFile {
    /// Appends one entry: opens the file for appending (creating it and its
    /// directory, mode 0600, on first use; never through a symbolic link, never
    /// anything but a regular file), takes an exclusive lock, writes the line
    /// (after the `#V2` header when the file is empty) and closes it.
    ///
    /// Errors: the file cannot be created, opened, locked or written.
    pub fn append(&self, entry: &str) -> io::Result<()> {
        use rustix::fs::OFlags;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let flags = OFlags::NOFOLLOW | OFlags::NONBLOCK;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(flags.bits() as i32)
            .open(&self.path)?;
        if !file.metadata()?.is_file() {
            return Err(io::Error::other("not a regular file"));
        }
        file.lock()?;
        let mut text = String::new();
        let length = file.metadata()?.len();
        if length == 0 {
            text.push_str(HEADER);
            text.push('\n');
        } else {
            // A file cut short (a full disk) may end inside a line: end it, so
            // that this entry is not glued onto it.
            let mut last = [0u8];
            std::os::unix::fs::FileExt::read_exact_at(&file, &mut last, length - 1)?;
            if last != *b"\n" {
                text.push('\n');
            }
        }
        text.push_str(&escape(entry));
        text.push('\n');
        file.write_all(text.as_bytes())?;
        // Closing the file releases the lock.
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/history");
        let opened = open(&path);
        let file = opened.file.unwrap();
        for entry in ["x = 2", "q = (x +\ny)", "a \\ b"] {
            file.append(entry).unwrap();
        }
        let again = open(&path);
        assert_eq!(again.entries, ["x = 2", "q = (x +\ny)", "a \\ b"]);
        assert!(again.warning.is_none());
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "#V2\nx = 2\nq = (x +\\ny)\na \\\\ b\n");
    }

    /// A file without a final newline (a full disk leaves one) keeps its last
    /// line: the next entry goes on a line of its own.
    #[test]
    fn an_entry_after_a_cut_line_starts_its_own_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history");
        std::fs::write(&path, "#V2\nabc").unwrap();
        open(&path).file.unwrap().append("typed = 1").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "#V2\nabc\ntyped = 1\n"
        );
        assert_eq!(open(&path).entries, ["abc", "typed = 1"]);
    }

    /// A relative `XDG_STATE_HOME` is ignored, as the XDG specification says.
    #[test]
    fn a_relative_xdg_state_home_is_ignored() {
        let state = |xdg: &str| state_home(Some(xdg.into()), Some("/home/ada".into()));
        assert_eq!(state("/var/state"), Some(PathBuf::from("/var/state")));
        assert_eq!(
            state("state"),
            Some(PathBuf::from("/home/ada/.local/state"))
        );
        assert_eq!(state(""), Some(PathBuf::from("/home/ada/.local/state")));
        assert_eq!(state_home(Some("rel".into()), None), None);
    }
}
