//! Interruption passed in by the graph's owner: long loops of the engine
//! (sorting, the backward walk, building derivative graphs) poll the
//! [`Interrupt`] set with [`Graph::set_interrupt`], never a global, as fend's
//! core polls the `Interrupt` its caller passes.

use std::sync::Arc;

use super::Graph;

/// Asks a long computation to stop: polled every [`EVERY`] iterations of the
/// engine's long loops. A loop that sees `true` stops early and its result is
/// incomplete ([`Graph::interrupted`] says so afterwards).
///
/// Any `Fn() -> bool` is one: `graph.set_interrupt(Arc::new(move ||
/// flag.load(Ordering::Relaxed)))`.
pub trait Interrupt: Send + Sync {
    /// True when the computation running should stop.
    fn should_stop(&self) -> bool;
}

impl<F: Fn() -> bool + Send + Sync> Interrupt for F {
    fn should_stop(&self) -> bool {
        self()
    }
}

/// How many iterations a polling loop runs between two looks at the
/// interrupt: a few thousand iterations of any loop here take well under a
/// millisecond.
pub const EVERY: u32 = 4096;

/// The interrupt a graph polls: none (never stops) by default.
#[derive(Clone, Default)]
pub(super) struct Hook(Option<Arc<dyn Interrupt>>);

impl std::fmt::Debug for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        debug_holder(f, "Hook", self.0.as_ref().map(|_| "set"))
    }
}

/// The `Debug` of a holder of something that has none itself (a closure):
/// `Name(word)` with `held` the word for what it holds, `Name(none)` when it
/// holds nothing. Errors: the formatter's.
pub(crate) fn debug_holder(
    f: &mut std::fmt::Formatter<'_>,
    name: &str,
    held: Option<&str>,
) -> std::fmt::Result {
    write!(f, "{name}({})", held.unwrap_or("none"))
}

impl Hook {
    /// True when an interrupt is set and asks to stop now.
    fn asks_to_stop(&self) -> bool {
        self.0.as_ref().is_some_and(|i| i.should_stop())
    }
}

/// A cheap poll for a hot loop: [`Poll::tick`] looks at the interrupt once
/// every [`EVERY`] calls.
pub(super) struct Poll {
    hook: Hook,
    count: u32,
}

impl Poll {
    /// A poll of `graph`'s interrupt (a shared handle to it: the graph may be
    /// changed while the poll lives).
    pub(super) fn of(graph: &Graph) -> Poll {
        Poll {
            hook: graph.interrupt.clone(),
            count: 0,
        }
    }

    /// Counts one iteration; true when this is a look at the interrupt and it
    /// asks to stop.
    #[inline]
    pub(super) fn tick(&mut self) -> bool {
        self.count = self.count.wrapping_add(1);
        self.count.is_multiple_of(EVERY) && self.hook.asks_to_stop()
    }
}

impl Graph {
    /// Sets the interrupt this graph's long loops poll ([`Graph::topo_order`],
    /// the backward walks, [`Graph::grad`]); replaces any set before. Clones
    /// of the graph share it.
    pub fn set_interrupt(&mut self, interrupt: Arc<dyn Interrupt>) {
        self.interrupt = Hook(Some(interrupt));
    }

    /// True when the graph's interrupt asks to stop now: a caller checks it
    /// after a loop that may have stopped early.
    pub fn interrupted(&self) -> bool {
        self.interrupt.asks_to_stop()
    }
}
