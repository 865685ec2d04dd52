//! Bounded sessions: `:gc`, `:stats`, automatic collection, and that ids the
//! session holds survive a compaction (gradients, notes, the cached order).

use gradcalc::session::{Event, Session};

use crate::util::session_events;

fn grads(events: &[Event]) -> Vec<(String, f64, Option<String>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Grad {
                wrt, value, note, ..
            } => Some((wrt.clone(), value.0, note.as_ref().map(ToString::to_string))),
            _ => None,
        })
        .collect()
}

#[test]
fn gc_reclaims_overwritten_chains_and_keeps_gradients() {
    let mut session = Session::new();
    let script = format!("w = 3\nx = 0.5\n{}y = x*w\n", "x = x*1.5 + w\n".repeat(50));
    session_events(&mut session, &script).unwrap();
    let before = grads(&session_events(&mut session, ":grad").unwrap());
    let nodes = session.graph().len();
    let events = session_events(&mut session, ":gc").unwrap();
    let Some(Event::Collected(reclaim)) = events.first() else {
        panic!("expected a gc event, got {events:?}");
    };
    assert_eq!(reclaim.nodes_before, nodes);
    assert!(!reclaim.automatic);
    // y and the last x are kept with everything under them; nothing else is.
    assert_eq!(reclaim.nodes_after, session.stats().reachable);
    assert_eq!(
        grads(&session_events(&mut session, ":grad").unwrap()),
        before
    );
    // Building on after a collection works with the remapped ids.
    session_events(&mut session, "z = y + x").unwrap();
    assert_eq!(session.graph().len(), reclaim.nodes_after + 1);
}

#[test]
fn an_earlier_binding_still_explains_a_zero_gradient_after_gc() {
    let mut session = Session::new();
    session_events(
        &mut session,
        "x = 1; z = x*2; x = 3; junk = x*x*x; junk = 1; z",
    )
    .unwrap();
    session_events(&mut session, ":gc").unwrap();
    let events = session_events(&mut session, ":grad x").unwrap();
    assert_eq!(
        grads(&events),
        [(
            "x".to_string(),
            0.0,
            Some("z was built from an earlier x".to_string())
        )]
    );
}

#[test]
fn stats_counts_one_sort_for_repeated_queries() {
    let mut session = Session::new();
    session_events(
        &mut session,
        "x = 2; y = x*x + x; :grad; :grad x; :trace; :topo",
    )
    .unwrap();
    let events = session_events(&mut session, ":stats").unwrap();
    let Some(Event::Stats(stats)) = events.first() else {
        panic!("expected stats, got {events:?}");
    };
    assert_eq!(stats.sorts, 1);
    assert_eq!((stats.nodes, stats.reachable), (3, 3));
    assert_eq!(stats.node_bytes, 20);
    assert_eq!(stats.last, None);
    // A new output is one more sort; a collection remaps the cached order.
    session_events(&mut session, "w = y*3; :grad; :gc; :grad; :trace").unwrap();
    assert_eq!(session.stats().sorts, 2);
}

#[test]
fn automatic_collection_keeps_a_reassigned_name_flat() {
    let mut session = Session::new();
    session.set_gc_min_nodes(2_000);
    // Each `y = x*1.0001` leaves the previous y (and its constant) unreachable.
    session_events(&mut session, "x = 0.5").unwrap();
    let chunk = "y = x*1.0001\n".repeat(100);
    let mut peak = 0;
    for _ in 0..200 {
        session_events(&mut session, &chunk).unwrap();
        peak = peak.max(session.graph().len());
    }
    let stats = session.stats();
    assert!(stats.collections >= 10, "{stats:?}");
    assert!(stats.nodes <= 2_001 && peak <= 2_001, "{stats:?}");
    assert!(
        stats
            .last
            .is_some_and(|r| r.automatic && r.nodes_after == 3)
    );
    assert_eq!(
        grads(&session_events(&mut session, ":grad x").unwrap()),
        [("x".to_string(), 1.0001, None)]
    );
}

#[test]
fn a_chain_that_is_still_reachable_is_kept_whole() {
    let mut session = Session::new();
    session.set_gc_min_nodes(2_000);
    // `x = x*1.0001` builds on the previous x: every node stays reachable
    // from x (it is x's history, shown by `:topo`), so nothing is reclaimed.
    let script = format!("x = 0.5\n{}", "x = x*1.0001\n".repeat(5_000));
    session_events(&mut session, &script).unwrap();
    assert_eq!(session.graph().len(), 10_001);
    let stats = session.stats();
    assert_eq!(stats.reachable, 10_001);
    let x = session.variable("x").expect("x");
    let expected = 0.5 * 1.0001f64.powi(5_000);
    assert!((session.graph().value(x) - expected).abs() < 1e-9 * expected);
}
