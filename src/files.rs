//! Reading scripts and writing files with care: only regular files of a bounded
//! size are read; files are written whole through a temporary file in the same
//! directory and a rename, never over an existing file unless asked, never
//! through a symbolic link at the target, and — for scripts — only where the
//! command line allows (docs/repl.md, "Files").

use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The largest script `gradcalc FILE` or `:load FILE` reads: 64 MiB.
pub const MAX_SOURCE_BYTES: u64 = 64 * 1024 * 1024;

/// `~/rest` with `$HOME` for `~`; every other path as it is.
pub fn expand_tilde(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) if !home.is_empty() => PathBuf::from(home).join(rest),
        _ if path == "~" => std::env::var_os("HOME").map_or_else(|| path.into(), PathBuf::from),
        _ => PathBuf::from(path),
    }
}

/// Reads a script: a regular file (a symbolic link to one is followed) of at most
/// [`MAX_SOURCE_BYTES`]. A FIFO, a directory or a device is refused before it is
/// opened, so reading never blocks or runs without end.
///
/// Errors: a message naming the file and what is wrong with it.
pub fn read_source(path: &Path) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let metadata = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    check_source(path, &metadata)?;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    // The file may have been replaced between the two looks: check what was opened.
    let opened = file
        .metadata()
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    check_source(path, &opened)?;
    let mut bytes = Vec::with_capacity(usize::try_from(opened.len()).unwrap_or(0));
    file.take(MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(too_big(path));
    }
    Ok(bytes)
}

fn check_source(path: &Path, metadata: &std::fs::Metadata) -> Result<(), String> {
    let shown = path.display();
    if metadata.is_dir() {
        return Err(format!("cannot read {shown}: it is a directory"));
    }
    if !metadata.is_file() {
        return Err(format!(
            "cannot read {shown}: not a regular file (a pipe, a device or a socket); give a script file"
        ));
    }
    if metadata.len() > MAX_SOURCE_BYTES {
        return Err(too_big(path));
    }
    Ok(())
}

fn too_big(path: &Path) -> String {
    format!(
        "cannot read {}: larger than {} MiB, the limit for a script",
        path.display(),
        MAX_SOURCE_BYTES / (1024 * 1024)
    )
}

/// Whether something is at `path` (after `~` expansion), a dangling symbolic
/// link included: what [`write_whole`] refuses to replace without `overwrite`.
/// Checked before a command does work whose file would then be refused
/// (`:repeat N FILE.svg`).
pub fn exists(path: &str) -> bool {
    std::fs::symlink_metadata(expand_tilde(path)).is_ok()
}

/// Where scripts may write files.
#[derive(Debug, Clone, Default)]
pub struct WritePolicy {
    /// `--allow-writes-anywhere`: scripts write where they like.
    pub anywhere: bool,
    /// `--allow-writes DIR`: directories (and what is under them) scripts may
    /// write to, besides the current directory.
    pub dirs: Vec<PathBuf>,
    /// No file at all may be written, by anyone (the fuzzer's setting): every
    /// write is refused, `-` (standard output) aside.
    pub nowhere: bool,
}

impl WritePolicy {
    /// Where a script may write, for the refusal: "the current directory",
    /// with the `--allow-writes` directories as the user gave them.
    pub fn allowed_places(&self) -> String {
        let dirs: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        match dirs.split_last() {
            None => "the current directory".to_string(),
            Some((last, [])) => format!("the current directory and {last}"),
            Some((last, rest)) => format!("the current directory, {} and {last}", rest.join(", ")),
        }
    }

    /// Why `path` may not be written from a script (`script`: the statement
    /// comes from a file, piped input or `-e`) or at all (writes are off):
    /// the message (naming it as `shown`) and what to do, or `None` when
    /// the policy allows it. The interactive REPL writes wherever the user
    /// asks.
    /// A path whose directory does not exist is refused as that, whatever
    /// the policy (`nodir/loss.svg` is not outside the current directory:
    /// `nodir` is missing).
    pub fn refusal(
        &self,
        path: &Path,
        shown: &str,
        script: bool,
    ) -> Option<(String, Option<String>)> {
        if !(script || self.nowhere) || self.allows(path) {
            return None;
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
            && let Err(error) = std::fs::metadata(parent)
            && error.kind() == io::ErrorKind::NotFound
            && !self.nowhere
        {
            return Some(explain_write_error(shown, &error));
        }
        if self.nowhere {
            return Some((format!("cannot write {shown}: file writes are off"), None));
        }
        Some((
            format!(
                "cannot write {shown}: a script writes files only in {}",
                self.allowed_places()
            ),
            Some(
                "run gradcalc with `--allow-writes DIR` (or `--allow-writes-anywhere`) to let scripts write there"
                    .to_string(),
            ),
        ))
    }

    /// Whether a script may write `path`: true when it is anywhere at all is
    /// allowed, or when its directory is the current directory, an allowed
    /// directory, or under one of them (after resolving `..` and links).
    pub fn allows(&self, path: &Path) -> bool {
        if self.nowhere {
            return false;
        }
        if self.anywhere {
            return true;
        }
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let Ok(parent) = parent.canonicalize() else {
            return false;
        };
        let current = std::env::current_dir().and_then(|d| d.canonicalize());
        current
            .into_iter()
            .chain(self.dirs.iter().filter_map(|d| d.canonicalize().ok()))
            .any(|allowed| parent.starts_with(allowed))
    }
}

/// Writes `content` to `path` whole: into a temporary file in the same directory,
/// then renamed to `path`. Without `overwrite`, an existing `path` (a symbolic
/// link included, even a dangling one) is left alone and the error is
/// [`io::ErrorKind::AlreadyExists`]; with it, the rename replaces the directory
/// entry itself, so a symbolic link there is replaced, not followed. A file that
/// is replaced keeps its permissions; a new one gets mode 0644.
#[cfg(feature = "os")]
pub fn write_whole(path: &Path, content: &[u8], overwrite: bool) -> io::Result<()> {
    let existing = replaceable(path, overwrite)?;
    let mut temporary = temporary_beside(path)?;
    // The file itself, not tempfile's writer, whose errors name the
    // temporary file: the user named `path`, and the error is said of it.
    std::io::Write::write_all(temporary.as_file_mut(), content)?;
    temporary.as_file().sync_all()?;
    let permissions = match &existing {
        Ok(metadata) if metadata.is_file() => metadata.permissions(),
        _ => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::Permissions::from_mode(0o644)
        }
    };
    temporary.as_file().set_permissions(permissions)?;
    if overwrite {
        temporary.persist(path).map_err(|e| e.error)?;
    } else {
        // Fails if the name appeared meanwhile: nothing is ever replaced unasked.
        temporary.persist_noclobber(path).map_err(|e| e.error)?;
    }
    Ok(())
}

/// Whether [`write_whole`] could write `path` now, without writing it: the
/// same checks (what is at `path`, `overwrite`) and a temporary file made
/// and removed in its directory, so a missing directory, a permission or a
/// read-only file system is found before work whose result goes there
/// (`:repeat N FILE.svg`). Errors: as [`write_whole`].
#[cfg(feature = "os")]
pub fn check_writable(path: &Path, overwrite: bool) -> io::Result<()> {
    replaceable(path, overwrite)?.map(drop).ok();
    temporary_beside(path).map(drop)
}

/// What is at `path` (its metadata, or the error of looking), when it may be
/// written: nothing, or — with `overwrite` — a regular file or a link to one
/// outside /dev, /proc and /sys. Errors: [`io::ErrorKind::IsADirectory`],
/// [`io::ErrorKind::AlreadyExists`], or "not a regular file".
#[cfg(feature = "os")]
fn replaceable(path: &Path, overwrite: bool) -> io::Result<io::Result<std::fs::Metadata>> {
    let existing = std::fs::symlink_metadata(path);
    if let Ok(metadata) = &existing {
        if metadata.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory",
            ));
        }
        if !overwrite {
            return Err(io::ErrorKind::AlreadyExists.into());
        }
        // Only a file (or a link to one) is replaced: never a device, a FIFO or
        // a link such as /dev/stdout; `-` is the way to standard output.
        let replaceable = metadata.is_file()
            || (metadata.is_symlink() && std::fs::metadata(path).is_ok_and(|m| m.is_file()));
        if !replaceable || in_system_directory(path) {
            return Err(io::Error::other(
                "not a regular file (give `-` for standard output)",
            ));
        }
    }
    Ok(existing)
}

/// A new temporary file in `path`'s directory, removed when dropped.
#[cfg(feature = "os")]
fn temporary_beside(path: &Path) -> io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    tempfile::Builder::new()
        .prefix(".gradcalc-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(without_temporary_path)
}

/// An error of the `tempfile` crate without its " at path …/.gradcalc-….tmp":
/// the message names the user's path, not the temporary file's.
#[cfg(feature = "os")]
fn without_temporary_path(error: io::Error) -> io::Error {
    let text = error.to_string();
    match text.rfind(" at path ") {
        Some(at) => io::Error::new(error.kind(), &text[..at]),
        None => error,
    }
}

/// Without the `os` feature (the playground's build) no file is written:
/// the error is [`io::ErrorKind::Unsupported`].
#[cfg(not(feature = "os"))]
pub fn write_whole(_path: &Path, _content: &[u8], _overwrite: bool) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "this build of gradcalc writes no files (give `-` to see the content)",
    ))
}

/// Without the `os` feature (the playground's build) the check before a
/// command runs (`:repeat N FILE.svg`, `:descend … FILE.svg`) passes: the
/// playground's printer downloads what would be written
/// (`Printer::downloads`), after the steps, as it does for `:save FILE`.
#[cfg(not(feature = "os"))]
pub fn check_writable(_path: &Path, _overwrite: bool) -> io::Result<()> {
    Ok(())
}

/// Why a file could not be written (an error of [`write_whole`] or
/// [`check_writable`] other than [`io::ErrorKind::AlreadyExists`], whose
/// answer depends on the command), and what to do about it; `path` as shown.
pub fn explain_write_error(path: &str, error: &io::Error) -> (String, Option<String>) {
    let parent = Path::new(path)
        .parent()
        .map(|p| p.display().to_string())
        .filter(|p| !p.is_empty());
    match (error.kind(), parent) {
        (io::ErrorKind::NotFound, Some(parent)) => (
            format!("cannot write {path}: directory `{parent}` does not exist"),
            Some(format!(
                "create it first (`mkdir -p {parent}`) or give another path"
            )),
        ),
        (io::ErrorKind::PermissionDenied, _) => (
            format!("cannot write {path}: permission denied"),
            Some(
                "choose a place you can write to, e.g. a file in the current directory".to_string(),
            ),
        ),
        (io::ErrorKind::ReadOnlyFilesystem, _) => (
            format!("cannot write {path}: the file system is read-only"),
            Some("choose a place you can write to".to_string()),
        ),
        (io::ErrorKind::IsADirectory, _) => (
            format!("cannot write {path}: it is a directory"),
            Some(format!(
                "give a file name, e.g. `{}/graph`",
                path.trim_end_matches('/')
            )),
        ),
        _ => (format!("cannot write {path}: {error}"), None),
    }
}

/// True for a path in /dev, /proc or /sys (after resolving its directory).
#[cfg(feature = "os")]
fn in_system_directory(path: &Path) -> bool {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    parent.canonicalize().is_ok_and(|dir| {
        ["/dev", "/proc", "/sys"]
            .iter()
            .any(|system| dir.starts_with(system))
    })
}

#[cfg(all(test, feature = "os"))]
mod tests {
    use super::*;

    #[test]
    fn tilde_is_home() {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        if let Some(home) = home.filter(|h| !h.as_os_str().is_empty()) {
            assert_eq!(expand_tilde("~/a.calc"), home.join("a.calc"));
        }
        assert_eq!(expand_tilde("a~/b"), PathBuf::from("a~/b"));
        assert_eq!(expand_tilde("~user/b"), PathBuf::from("~user/b"));
    }

    #[test]
    fn whole_writes_refuse_existing_files_and_links() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        write_whole(&file, b"one", false).unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"one");
        let again = write_whole(&file, b"two", false).unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&file).unwrap(), b"one");
        write_whole(&file, b"two", true).unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"two");

        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(write_whole(&link, b"x", false).is_err());
        write_whole(&link, b"new", true).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
        assert!(write_whole(Path::new("/dev/stdout"), b"x", true).is_err());
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 3);
    }
}
