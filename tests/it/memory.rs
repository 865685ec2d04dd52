//! Bounded sessions: `:gc`, `:stats`, automatic collection, and that ids the
//! session holds survive a compaction (gradients, notes, the cached order).

use gradcalc::session::{Event, Session};

use crate::util::session_events;

fn grads(events: &[Event]) -> Vec<(String, f64, Option<String>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Grad {
                wrt,
                value: gradcalc::session::Value::Number(value),
                note,
                ..
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

/// The tensor graph reads scalar nodes (a scalar `w` in `mean((w*xs + b -
/// ys)^2)`); a collection renumbers the scalar graph. Every shape of such a
/// read gives, after `:gc` and after an automatic collection, the values and
/// gradients the same session gives without any collection.
const TENSOR_READS_SCALAR: [&str; 6] = [
    "L = sum(W^2)*s + y",
    "L = mean((w*xs + b - ys)^2) + mean(W*W)",
    "L = sum(W*t)",
    "L = sum(exp(W - s))*y",
    "L = s*sum(W) + sum(W)*y/s",
    "L = tanh(W*w + b) @ W",
];

fn tensor_reading_scalar_setup(loss: &str) -> String {
    format!(
        "k = 1; W = [1, 2]; xs = [1, 2, 3]; ys = [2, 4, 7]; s = 0.5; k = s*2\n\
         w = 0.3; b = -0.2; k = w + b; y = 2; t = s*s; k = y*t\n{loss}\nk = atan(y); junk = y*y*y; junk = w*b + t; junk = 0\n"
    )
}

/// The events of [`AFTER_COLLECTION`], but for the count of nodes a `:=`
/// evaluated again (a collection leaves fewer to evaluate).
fn values_and_gradients(session: &mut Session) -> String {
    let events = session_events(session, AFTER_COLLECTION).unwrap();
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::Grad {
                value: gradcalc::session::Value::Tensor(_),
                ..
            }
        )),
        "{events:?}"
    );
    let kept: Vec<String> = events
        .iter()
        .map(|e| format!("{e:?}"))
        .filter(|e| !e.starts_with("Calculus(Updated"))
        .collect();
    kept.join("\n")
}

const AFTER_COLLECTION: &str =
    "L\nW := [1.5, -1]\nw := 0.7\nL\n:grad\n:grad y\n:descend L lr=0.01 steps=3 W\nL\n";

#[test]
fn tensor_reads_of_scalars_survive_gc() {
    for loss in TENSOR_READS_SCALAR {
        let setup = tensor_reading_scalar_setup(loss);
        let mut plain = Session::new();
        session_events(&mut plain, &setup).unwrap();
        let expected = values_and_gradients(&mut plain);
        let mut collected = Session::new();
        session_events(&mut collected, &setup).unwrap();
        let before = collected.graph().len();
        session_events(&mut collected, ":gc").unwrap();
        assert!(
            collected.graph().len() < before,
            "{loss}: nothing collected"
        );
        let actual = values_and_gradients(&mut collected);
        assert_eq!(actual, expected, "{loss}");
    }
}

#[test]
fn tensor_reads_of_scalars_survive_an_automatic_collection() {
    for loss in TENSOR_READS_SCALAR {
        let setup = tensor_reading_scalar_setup(loss);
        let churn = "junk = y*1.0001\n".repeat(300);
        let run = |min_nodes: Option<usize>| {
            let mut session = Session::new();
            if let Some(min_nodes) = min_nodes {
                session.set_gc_min_nodes(min_nodes);
            }
            session_events(&mut session, &setup).unwrap();
            session_events(&mut session, &churn).unwrap();
            let events = values_and_gradients(&mut session);
            (events, session.stats().collections)
        };
        let (expected, none) = run(None);
        let (actual, collections) = run(Some(64));
        assert_eq!(none, 0);
        assert!(collections > 0, "{loss}: no automatic collection");
        assert_eq!(actual, expected, "{loss}");
    }
}

#[test]
fn a_tensor_loss_over_scalars_is_right_after_gc() {
    // By hand: L = (1² + 2²)·0.5 + 2 = 4.5; ∂L/∂y = 1; one step of W ← W −
    // 0.1·∂L/∂W with ∂L/∂W = 2·s·W = W gives W = [0.9, 1.8] and
    // L = (0.81 + 3.24)·0.5 + 2 = 4.025.
    let output = crate::util::output_with_stdin(
        &["--keep-going", "-"],
        "W = [1, 2]\ns = 0.5\nk = 1\ny = 2\nL = sum(W^2)*s + y\nk = atan(y)\n:gc\nL\n\
         W := [1, 2]\nL\n:grad y\nW := 3\nL\n:descend L lr=0.1 steps=1 W\nL\n",
    );
    let text = crate::util::stdout_of(&output);
    // The bare `L`s print their value alone.
    let values: Vec<&str> = text.lines().filter(|l| l.parse::<f64>().is_ok()).collect();
    assert_eq!(values, ["4.5", "4.5", "4.5", "4.025"], "{text}");
    crate::util::assert_contains(&text, "     1  4.025\n");
    crate::util::assert_contains(&text, "∂L/∂y = 1\n");
}
