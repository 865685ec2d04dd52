//! Gradient descent over several parameters: the simultaneous update
//! `w1, b := …, …`, `:descend`, and the warning of a `:repeat` whose several
//! `:=` are coordinate descent. The reference values are micrograd's
//! (`scripts/micrograd_descent.py`, recorded in
//! `tests/data/micrograd_descent.tsv`) and the issue's hand-checked neuron
//! step.

use expect_test::expect;

use crate::util::{
    assert_close, assert_contains, gradcalc, in_crate, json_events, json_number, members,
    output_of, stderr_of, stdout_of,
};

/// The neuron of examples/neuron.calc with a squared-error loss.
const NEURON: &str = "x1 = 2; x2 = 0; w1 = -3; w2 = 1; b = 6.8813735870195432; \
     o = tanh(x1*w1 + x2*w2 + b); L = (o - 0.95)^2";

/// The moons MLP of examples/moons_descent.calc, without its `:descend`.
fn moons_setup() -> String {
    let script = std::fs::read_to_string(in_crate("examples/moons_descent.calc")).unwrap();
    script
        .lines()
        .take_while(|line| !line.starts_with(":descend"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// micrograd's rows for `problem`: the parameters' names, then per step the
/// loss and the parameters' values.
fn micrograd(problem: &str) -> (Vec<String>, Vec<(f64, Vec<f64>)>) {
    let text = std::fs::read_to_string(in_crate("tests/data/micrograd_descent.tsv")).unwrap();
    let mut names = Vec::new();
    let mut rows = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        if fields[0] == format!("# {problem}") {
            names = fields[1..].iter().map(|s| s.to_string()).collect();
        } else if fields[0] == problem {
            let numbers: Vec<f64> = fields[2..].iter().map(|s| s.parse().unwrap()).collect();
            assert_eq!(fields[1].parse::<usize>().unwrap(), rows.len());
            rows.push((numbers[0], numbers[1..].to_vec()));
        }
    }
    (names, rows)
}

/// `:descend` of `problem`'s loss over micrograd's parameters with `rate`
/// for every step micrograd recorded: each row's loss and parameters within
/// `rel` of micrograd's.
fn descend_matches_micrograd(problem: &str, setup: &str, rate: &str, rel: f64) {
    let (names, want) = micrograd(problem);
    let command = format!(
        ":descend L lr={rate} steps={} {}",
        want.len() - 1,
        names.join(" ")
    );
    let (events, status) = json_events(&["-e", setup, "-e", &command]);
    assert_eq!(status, Some(0));
    let descent = events.iter().find(|e| e["kind"] == "descent").unwrap();
    let losses = descent["losses"].as_array().unwrap();
    assert_eq!(losses.len(), want.len());
    for (step, (loss, (want_loss, _))) in losses.iter().zip(&want).enumerate() {
        let loss = json_number(loss).unwrap();
        assert!(
            crate::util::close(loss, *want_loss, rel),
            "{problem} step {step}: L = {loss:?}, micrograd {want_loss:?}"
        );
    }
    for row in descent["rows"].as_array().unwrap() {
        let step = row["step"].as_u64().unwrap() as usize;
        let values: Vec<f64> = members(&row["values"])
            .map(|v| json_number(v).unwrap())
            .collect();
        for ((name, got), want) in names.iter().zip(&values).zip(&want[step].1) {
            assert!(
                crate::util::close(*got, *want, rel),
                "{problem} step {step}: {name} = {got:?}, micrograd {want:?}"
            );
        }
    }
}

#[test]
fn a_simultaneous_update_is_one_step_of_gradient_descent() {
    // The values are gradient descent's (micrograd, PyTorch): both gradients
    // at (w1, b) = (-3, 6.88…), ∂L/∂w1 = 2(o − 0.95)(1 − o²)·x1 with
    // o = 1/√2, then both moved. Coordinate descent would give b = 6.897854531.
    let output = output_of(&[
        "--precision",
        "full",
        "-e",
        NEURON,
        "-e",
        "w1, b := w1 - 0.5*grad(L, w1), b - 0.5*grad(L, b)",
    ]);
    let text = stdout_of(&output);
    let update = &text[text.find("w1 :=").unwrap()..];
    expect![[r#"
        w1 := -2.7571067811865477
        b := 7.002820196426269  (6 nodes evaluated again)
          o = 0.9030680341389684  (was 0.7071067811865477)
          L = 0.0022026094195810304  (was 0.0589971157455596)
    "#]]
    .assert_eq(update);
}

#[test]
fn descend_gives_the_neurons_gradient_descent_step_to_the_last_digit() {
    let (events, _) = json_events(&["-e", NEURON, "-e", ":descend L lr=0.5 steps=1 w1 b"]);
    let descent = events.iter().find(|e| e["kind"] == "descent").unwrap();
    let step1 = &descent["rows"][1];
    assert_eq!(step1["step"], 1);
    assert_eq!(json_number(&step1["output"]), Some(0.0022026094195810304));
    assert_eq!(json_number(&step1["values"][0]), Some(-2.7571067811865477));
    assert_eq!(json_number(&step1["values"][1]), Some(7.002820196426269));
}

#[test]
fn descend_matches_micrograd_on_the_neuron_and_the_moons_mlp() {
    descend_matches_micrograd("neuron", NEURON, "0.5", 1e-14);
    // Gradients summed in another order than micrograd's differ in the last bits.
    descend_matches_micrograd("moons", &moons_setup(), "0.2", 1e-12);
    let (_, moons) = micrograd("moons");
    assert_close(moons[1].0, 0.4134191100, 1e-10);
}

#[test]
fn descend_table_starts_at_step_0_and_fits_80_columns() {
    let output = gradcalc()
        .args(["-e", &moons_setup(), "-e"])
        .arg(":descend L lr=0.2 steps=2 a1 a2 c1 b1 b2 c2 d1 d2 c3 v1 v2 v3 c0")
        .output()
        .unwrap();
    let text = stdout_of(&output);
    let table: String = text[text.find("gradient descent").unwrap()..]
        .lines()
        .take_while(|line| !line.starts_with("L from"))
        .map(|line| format!("{line}\n"))
        .collect();
    // Step 1 is micrograd's (tests/data/micrograd_descent.tsv), to 10 digits.
    expect![[r#"
        gradient descent on L over a1, a2, c1, b1, b2, c2, d1, d2, c3, v1, v2, v3, c0, learning rate 0.2: 2 steps, each one backward pass and all parameters moved together
          step            L            a1             a2        c1             b1
             0     0.592764           0.5           -0.4       0.1           -0.3
             1   0.41341911       0.57498      -0.404984      0.15      -0.329988
             2  0.187359398  0.6633040008  -0.4108576006  0.208898  -0.3641236005

          step            L            b2         c2            d1           d2
             0     0.592764           0.8        0.2           0.7          0.6
             1   0.41341911      0.835968       0.26      0.669972     0.611976
             2  0.187359398  0.8769131213  0.3282976  0.6495464011  0.620111041

          step            L          c3             v1           v2             v3  c0
             0     0.592764        -0.1           -0.5          0.6            0.2   0
             1   0.41341911       -0.11       -0.58898     0.682976       0.135992   0
             2  0.187359398  -0.1167996  -0.6942532808  0.775606161  0.07770932032   0
    "#]]
    .assert_eq(&table);
    assert!(
        text.lines()
            .all(|line| line.chars().count() <= 80 || line.starts_with("gradient"))
    );
}

#[test]
fn several_updates_in_one_repeat_step_warn_that_they_are_coordinate_descent() {
    let output = gradcalc()
        .args(["-e", NEURON, "-e"])
        .arg(":repeat 20 w1 := w1 - 0.5*grad(L, w1); b := b - 0.5*grad(L, b)")
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    expect![[r#"
        warning: these `:=` run one after another, so `b`'s new value is taken after w1 moved: coordinate descent, not gradient descent; for gradient descent set them together: `:repeat 20 w1, b := w1 - 0.5*grad(L, w1), b - 0.5*grad(L, b)` (at -e #2:1:11)
    "#]]
    .assert_eq(&stderr);
    // Independent updates are not warned about.
    let output = output_of(&["-e", "a = 1; c = 2", "-e", ":repeat 2 a := a + 1; c := c*2"]);
    assert_eq!(stderr_of(&output), "");
}

#[test]
fn descend_and_simultaneous_updates_refuse_what_they_cannot_do() {
    let cases = [
        ("w1, b := 1", "2 names but 1 value"),
        ("w1, w1 := 1, 2", "`w1` is updated twice"),
        ("w1, o := 1, 2", "`o` is not a leaf"),
        (":descend L lr=0.5 w1", "`:descend` needs `steps=…`"),
        (":descend L steps=3 w1", "`:descend` needs `lr=…`"),
        (
            ":descend L lr=x steps=2 w1",
            "the learning rate must be a number",
        ),
        (
            ":descend L lr=0.5 steps=0 w1",
            "the number of steps must be",
        ),
        (":descend L lr=0.5 steps=2", "needs the parameters"),
        (":descend L lr=0.5 steps=2 o", "`o` is derived, not a leaf"),
        (
            ":descend o lr=0.5 steps=2 w1 L",
            "`L` is derived, not a leaf",
        ),
    ];
    for (input, message) in cases {
        let output = output_of(&["-e", NEURON, "-e", input]);
        assert_eq!(output.status.code(), Some(1), "{input}");
        let stderr = stderr_of(&output);
        assert!(stderr.contains(message), "{input}: {stderr}");
    }
    // A parameter the loss is not built from.
    let output = output_of(&[
        "-e",
        "x = 1; y = 2; L = x^2",
        "-e",
        ":descend L lr=0.1 steps=2 x y",
    ]);
    expect![[r#"
        error: `L` is not built from this `y`: its gradient is 0, so descent would never move it
          ┌─ -e #2:1:29
          │
        1 │ :descend L lr=0.1 steps=2 x y
          │                             ^ name the leaves `L` depends on (`:grad` lists them)

    "#]]
    .assert_eq(&stderr_of(&output));
}

#[test]
fn saved_descent_replays_the_same_steps() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.calc");
    let script = script.to_str().unwrap();
    gradcalc()
        .current_dir(dir.path())
        .args(["-e", NEURON, "-e", ":descend L lr=0.5 steps=3 w1 b"])
        .args(["-e", &format!(":save {script}")])
        .assert()
        .success();
    let saved = std::fs::read_to_string(script).unwrap();
    assert_contains(&saved, ":descend L lr=0.5 steps=3 w1 b");
}

#[test]
fn ctrl_c_during_descend_keeps_the_steps_done() {
    // d10(t) = 1024·t built as a tree of 2^10 additions, so each step's
    // backward pass is long. With u = 1024w − 3, L = u² and ∂L/∂w = 2048u, so
    // a step multiplies u by 1 − 1e-9·2048·1024: u_k = −3·(1 − 2.097152e-3)^k.
    let defs = crate::util::doubling_functions("t", 10, "; ");
    let (_, descent) = crate::util::interrupted_descent(
        &format!("{defs}; w = 0; L = (d10(w) - 3)^2"),
        ":descend L lr=0.000000001 steps=1000000 w",
    );
    let steps = descent["steps"].as_u64().unwrap();
    assert_eq!(
        descent["losses"].as_array().unwrap().len() as u64,
        steps + 1
    );
    let last = descent["rows"].as_array().unwrap().last().unwrap();
    assert_eq!(last["step"].as_u64(), Some(steps));
    let u = -3.0 * (1.0 - 2.097152e-3_f64).powf(steps as f64);
    assert_close(
        json_number(&last["values"][0]).unwrap(),
        (u + 3.0) / 1024.0,
        1e-9,
    );
}

/// `:descend` writes the plot of the loss to a file, as `:repeat N FILE.svg`
/// does: L = (3w + b − 1)² at w = 1, b = 2 is 16, and one step of lr = 0.01
/// moves w by −0.01·2·4·3 = −0.24 and b by −0.08, so L = (2.28 + 1.92 − 1)² =
/// 10.24.
#[test]
fn descend_writes_its_loss_plot_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let setup = "w = 1; b = 2; L = (w*3 + b - 1)^2";
    let output = crate::util::output_in(
        dir.path(),
        &["-e", setup, "-e", ":descend L lr=0.01 steps=4 loss.svg w b"],
    );
    let stdout = stdout_of(&output);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert_contains(&stdout, "     1       10.24     0.76     1.92");
    assert_contains(&stdout, "wrote the loss over the steps as SVG to loss.svg");
    let svg = std::fs::read_to_string(dir.path().join("loss.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("<polyline"), "{svg}");
    // Not a picture file: refused, naming the format.
    let output = crate::util::output_in(
        dir.path(),
        &["-e", setup, "-e", ":descend L lr=0.01 steps=4 loss.png w b"],
    );
    assert_contains(&stderr_of(&output), "`loss.png` is not an SVG file");
}

/// The loss left out, and `lr = 0.5` typed with spaces, are each explained.
#[test]
fn descend_explains_a_missing_loss_and_a_spaced_setting() {
    let setup = "w = 1; b = 2; L = (w*3 + b - 1)^2";
    let output = crate::util::output_of(&["-e", setup, "-e", ":descend lr=0.5 steps=3 w b"]);
    assert_contains(
        &stderr_of(&output),
        "`w` is a leaf, not a loss: `:descend` takes the loss first",
    );
    let output = crate::util::output_of(&["-e", setup, "-e", ":descend L lr = 0.5 steps=3 w b"]);
    assert_contains(
        &stderr_of(&output),
        "`lr=` is written without spaces around its `=`: `lr=0.5`",
    );
}
