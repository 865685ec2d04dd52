//! What the timing examples share: their arguments (sizes and `--reps R`),
//! this thread's CPU time, and a session run from a script.

use gradcalc::session::Session;

/// Sizes (each at least `min`, `_` allowed as a digit separator) and `--reps
/// R` from the command line: `(sizes, reps)`, `sizes` empty when none was
/// given; `None` for anything else.
pub fn sizes_and_reps(min: usize, default_reps: usize) -> Option<(Vec<usize>, usize)> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut reps = default_reps;
    let mut sizes = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--reps" {
            reps = iter
                .next()
                .and_then(|r| r.parse().ok())
                .filter(|&r| r > 0)?;
        } else {
            sizes.push(
                arg.replace('_', "")
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n >= min)?,
            );
        }
    }
    Some((sizes, reps))
}

/// This thread's CPU time in ms (on a loaded machine the wall time of a call
/// is longer).
pub fn thread_cpu_ms() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}

/// A session that has run `source`, every statement of which succeeds.
///
/// # Panics
/// If a statement fails.
pub fn session_of(source: &str) -> Session {
    let mut session = Session::new();
    let _ = session.run_source(source, |result| match result {
        Ok(_) => std::ops::ControlFlow::Continue(()),
        Err(error) => panic!("building the session: {error}"),
    });
    session
}
