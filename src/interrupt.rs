//! Ctrl-C while a statement runs: one flag, set by the SIGINT handler and
//! polled by every long loop (evaluation, sorting, backward, the teaching
//! commands, plotting, rendering and writing). A loop that sees it stops
//! early; the session turns that into [`SessionError::Interrupted`] and undoes
//! the statement (`:repeat` keeps its finished steps), the driver prints
//! "interrupted", and the REPL discards the keys typed meanwhile
//! (docs/repl.md, "Ctrl-C"). The REPL's `replace it? [y/N]` question polls it
//! too: Ctrl-C there cancels the question.
//!
//! Polling costs one relaxed atomic load every [`EVERY`] iterations ([`Poll`]),
//! so the engine's hot loops keep their speed.
//!
//! A time budget stops work the same way: inside [`within`] (the REPL's live
//! preview, which runs while a key is typed, in raw mode, where Ctrl-C is
//! only a key), every poll on that thread also sees a stop once the budget
//! of CPU time has been spent.
//!
//! [`SessionError::Interrupted`]: crate::session::SessionError::Interrupted

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How many iterations a polling loop runs between two looks at the flag: a
/// few thousand iterations of any loop here take well under a millisecond.
pub const EVERY: u32 = 4096;

/// Set by Ctrl-C; cleared by the REPL before each typed input.
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Set when the run has seen the Ctrl-C and is ending by itself ([`notice`]).
static NOTICED: AtomicBool = AtomicBool::new(false);

/// How many Ctrl-Cs came (the handler's count; a second one in a batch run
/// ends it even when the first was noticed).
#[cfg(feature = "cli")]
static SIGNALS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// In batch mode a Ctrl-C that nothing notices within this time (a blocking
/// read of standard input) ends the process with status [`EXIT_STATUS`]. A
/// Ctrl-C the run has noticed ([`notice`]) lets it end by itself, however
/// long its kept output takes to write on a loaded machine; a second Ctrl-C
/// ends it after this time in any case.
pub const BATCH_GRACE: Duration = Duration::from_secs(1);

/// The exit status of a batch run stopped by Ctrl-C: 128 + SIGINT, what a
/// shell shows for a program ended by it.
pub const EXIT_STATUS: u8 = 130;

/// Asks the running statement to stop (the SIGINT handler; also `:repeat`'s
/// tests). Safe from any thread.
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// True once Ctrl-C was pressed and not yet [cleared](clear), or inside
/// [`within`] once its budget has passed, or inside [`polling`] once its
/// check has said so.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed) || past_deadline() || host_asks()
}

thread_local! {
    /// The check of the running [`polling`] on this thread, if any.
    static HOST: Cell<Option<fn() -> bool>> = const { Cell::new(None) };
}

/// Whether a [`polling`] check runs on this thread and says stop; once it
/// has, the flag is set (as by [`request`]), so the check is not asked again.
fn host_asks() -> bool {
    let asks = HOST.get().is_some_and(|check| check());
    if asks {
        request();
    }
    asks
}

/// Runs `work` with `check` asked too whenever this thread polls for Ctrl-C
/// ([`requested`], so every [`Poll`] and the engine's [`CtrlC`]): for a host
/// that learns of an interrupt its own way. The Python package (python/) asks
/// Python whether SIGINT came, since Python's handler runs only when asked on
/// the main thread. Once `check` says true the flag is set, as by [`request`]:
/// the work ends as after Ctrl-C; the host [clears](clear) it afterwards.
/// After `work` the check is gone (also if `work` unwinds); one inside another
/// replaces it meanwhile.
pub fn polling<T>(check: fn() -> bool, work: impl FnOnce() -> T) -> T {
    /// Puts the outer check back, also if `work` unwinds.
    struct Restore(Option<fn() -> bool>);
    impl Drop for Restore {
        fn drop(&mut self) {
            HOST.set(self.0);
        }
    }
    let _restore = Restore(HOST.replace(Some(check)));
    work()
}

thread_local! {
    /// The end of the running [`within`]'s budget, in nanoseconds of this
    /// thread's CPU time; 0 when no budget runs. Per thread: a budget stops
    /// only the work that asked for it.
    static DEADLINE: Cell<u64> = const { Cell::new(0) };
}

/// This thread's CPU time in nanoseconds, at least 1 (0 means "no deadline").
/// CPU time, not wall time: work that needs less than its budget finishes
/// however loaded the machine is. Without the `os` feature (the browser
/// build, which has no CPU clock) always 1: a budget never ends there.
#[cfg(not(feature = "os"))]
fn now() -> u64 {
    1
}

/// This thread's CPU time in nanoseconds (see the other `now`).
#[cfg(feature = "os")]
fn now() -> u64 {
    let time = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    let nanos = i128::from(time.tv_sec) * 1_000_000_000 + i128::from(time.tv_nsec);
    u64::try_from(nanos).unwrap_or(0).max(1)
}

/// Whether a [`within`] budget runs on this thread and has passed.
fn past_deadline() -> bool {
    let deadline = DEADLINE.get();
    deadline != 0 && now() >= deadline
}

/// Runs `work` with a budget of this thread's CPU time: once `budget` has
/// been spent, [`requested`] is true inside it, so every polling loop stops
/// early and the work ends as after Ctrl-C (a session statement with
/// [`SessionError::Interrupted`]). The flag set by Ctrl-C is not touched,
/// other threads are not affected, and after `work` the budget is gone. A
/// budget inside another ends at the earlier of the two deadlines.
///
/// The REPL's live preview runs in one (`Session::preview`), so that a key
/// press never waits longer than a frame for it.
///
/// [`SessionError::Interrupted`]: crate::session::SessionError::Interrupted
pub fn within<T>(budget: Duration, work: impl FnOnce() -> T) -> T {
    /// Puts the outer deadline back, also if `work` unwinds.
    struct Restore(u64);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEADLINE.set(self.0);
        }
    }
    let outer = DEADLINE.get();
    let end = now().saturating_add(u64::try_from(budget.as_nanos()).unwrap_or(u64::MAX));
    let deadline = if outer == 0 { end } else { end.min(outer) };
    let _restore = Restore(outer);
    DEADLINE.set(deadline);
    work()
}

/// Says that the run has seen the Ctrl-C and is ending by itself (writing
/// what it kept, then exiting with [`EXIT_STATUS`]): the batch grace of
/// [`install`]'s handler then leaves the process alone, so that a stopped
/// `:descend`'s table is written whole rather than cut by the grace.
pub fn notice() {
    NOTICED.store(true, Ordering::Relaxed);
}

/// Forgets an earlier Ctrl-C (the REPL, before running a typed input).
pub fn clear() {
    REQUESTED.store(false, Ordering::Relaxed);
}

/// Whether the run is a batch run (scripts, `-e`, piped input): then a Ctrl-C
/// that nothing notices ends the process. The REPL and line mode
/// (`--json --lines`) clear it: there a Ctrl-C stops the running statement
/// and nothing else, so the process never ends halfway through an output line.
static BATCH: AtomicBool = AtomicBool::new(true);

/// Says whether the run is a batch run (true until the REPL or line mode starts).
pub fn set_batch(batch: bool) {
    BATCH.store(batch, Ordering::Relaxed);
}

/// Installs the SIGINT handler: it sets the flag, and in a batch run (see
/// [`set_batch`]) it also ends the process with [`EXIT_STATUS`] if the run has
/// not noticed it ([`notice`]) after [`BATCH_GRACE`], or at a second Ctrl-C. Only the first call installs
/// anything (later ones, and a failure to install, are ignored: Ctrl-C then
/// keeps its default). Only in the terminal program (the `cli` feature).
#[cfg(feature = "cli")]
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        request();
        let count = SIGNALS.fetch_add(1, Ordering::Relaxed) + 1;
        if BATCH.load(Ordering::Relaxed) {
            // The handler runs on its own thread, not in signal context.
            std::thread::sleep(BATCH_GRACE);
            if count > 1 || !NOTICED.load(Ordering::Relaxed) {
                std::process::exit(i32::from(EXIT_STATUS));
            }
        }
    });
}

/// Ctrl-C as the engine's [`Interrupt`](crate::engine::Interrupt): the
/// session gives it to its graph (`Graph::set_interrupt`), whose long loops
/// poll it.
#[derive(Debug, Clone, Copy, Default)]
pub struct CtrlC;

impl crate::engine::Interrupt for CtrlC {
    fn should_stop(&self) -> bool {
        requested()
    }
}

/// A cheap poll for a hot loop: [`Poll::tick`] looks at the flag once every
/// [`EVERY`] calls.
#[derive(Debug, Default, Clone, Copy)]
pub struct Poll {
    count: u32,
}

impl Poll {
    /// A poll that first looks at the flag after [`EVERY`] ticks.
    pub fn new() -> Poll {
        Poll::default()
    }

    /// Counts one iteration; true when this is a look at the flag and it is set.
    #[inline]
    pub fn tick(&mut self) -> bool {
        self.count = self.count.wrapping_add(1);
        self.count.is_multiple_of(EVERY) && requested()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static ASKED: Cell<u32> = const { Cell::new(0) };
    }

    /// A host's check that never asks to stop, counting how often it is asked.
    fn counted() -> bool {
        ASKED.set(ASKED.get() + 1);
        false
    }

    #[test]
    fn polling_asks_the_hosts_check_inside_only() {
        // A check that says no never sets the process's flag (other tests
        // run beside this one), and is asked at every poll inside `polling`.
        let polls = polling(counted, || {
            let mut poll = Poll::new();
            (0..3 * EVERY).filter(|_| poll.tick()).count()
        });
        assert_eq!(polls, 0);
        assert_eq!(ASKED.get(), 3);
        let _ = requested();
        assert_eq!(ASKED.get(), 3, "gone after `polling`");
    }
}
