//! The example scripts give the gradients their comments promise (values from the
//! micrograd lecture, the CS231n notes and colah's post, computed by hand there).

use crate::util::{assert_close, json_lines, output_in, stdout_of};

/// Runs `examples/NAME --json` and returns every `grad` event as (wrt, value).
fn gradients(name: &str) -> Vec<(String, f64)> {
    let output = output_in(
        env!("CARGO_MANIFEST_DIR"),
        &["--json", &format!("examples/{name}")],
    );
    assert_eq!(output.status.code(), Some(0), "{name}");
    json_lines(&stdout_of(&output))
        .into_iter()
        .filter(|event| event["kind"] == "grad")
        .map(|event| {
            let wrt = event["wrt"].as_str().unwrap().to_string();
            (wrt, event["value"].as_f64().unwrap())
        })
        .collect()
}

fn assert_gradients(name: &str, expected: &[(&str, f64)]) {
    let actual = gradients(name);
    assert_eq!(actual.len(), expected.len(), "{name}: {actual:?}");
    for ((wrt, value), (want_wrt, want)) in actual.iter().zip(expected) {
        assert_eq!(wrt, want_wrt, "{name}");
        assert_close(*value, *want, 1e-9);
    }
}

#[test]
fn micrograd_tanh_neuron() {
    assert_gradients(
        "neuron.calc",
        &[
            ("x1", -1.5),
            ("w1", 1.0),
            ("x2", 0.5),
            ("w2", 0.0),
            ("b", 0.5),
            ("n", 0.5),
        ],
    );
}

#[test]
fn cs231n_circuit() {
    assert_gradients(
        "circuit.calc",
        &[("x", -4.0), ("y", -4.0), ("z", 3.0), ("q", -4.0)],
    );
}

#[test]
fn colah_sum_over_paths() {
    assert_gradients("paths.calc", &[("a", 2.0), ("b", 5.0)]);
}
