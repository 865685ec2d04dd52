//! The page of `:html`, the playground and `:serve` in a real browser:
//! headless Chromium driven over the DevTools protocol through a pipe
//! (`--remote-debugging-pipe`: JSON messages ended by a NUL byte on file
//! descriptors 3 and 4, no websocket needed). Keys are pressed as a user
//! presses them (`Input.dispatchKeyEvent`), what the page shows is read from
//! its DOM, and screenshots are decoded by the browser itself to check they
//! are not blank. Where Chromium is missing, each test says so and passes
//! (`.ci/run` installs it). Screenshots are kept in
//! `target/browser-screenshots/` to be looked at.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::pty::Repl;
use crate::util::{in_crate, output_in, output_of, stdout_of};
use crate::web::COLAH;

/// The longest wait for anything the browser does: generous for a debug
/// build on a busy machine; a hang fails the test.
const CEILING: Duration = Duration::from_secs(300);

/// The Chromium binary, if one is installed.
fn chromium() -> Option<PathBuf> {
    let names = [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "headless_shell",
    ];
    std::env::var_os("GRADCALC_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(names.iter().flat_map(|name| {
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .map(move |dir| dir.join(name))
                .collect::<Vec<_>>()
        }))
        .find(|path| path.is_file())
}

/// A pipe (read end, write end), both closed on exec.
fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills both descriptors on success; each is owned once.
    unsafe {
        assert_eq!(libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC), 0, "pipe2");
        (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
    }
}

/// A headless Chromium with one page attached.
pub struct Browser {
    child: Child,
    to: std::fs::File,
    from: Receiver<Value>,
    next: u64,
    session: String,
    /// Events that arrived while a command waited for its result.
    events: Vec<Value>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium, or prints why not and gives `None`.
    pub fn start(test: &str) -> Option<Browser> {
        let Some(binary) = chromium() else {
            eprintln!("note: {test} skipped: no Chromium (apt-get install chromium)");
            return None;
        };
        let profile = tempfile::tempdir().unwrap();
        let (to_read, to_write) = pipe();
        let (from_read, from_write) = pipe();
        let (read_fd, write_fd) = (to_read.as_raw_fd(), from_write.as_raw_fd());
        let mut command = Command::new(binary);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only fcntl and dup2, which are async-signal-safe, between
        // fork and exec. The ends are first copied above 10, so that neither
        // is overwritten by the other's dup2, and dup2 to another number
        // clears close-on-exec.
        unsafe {
            command.pre_exec(move || {
                let read = libc::fcntl(read_fd, libc::F_DUPFD, 10);
                let write = libc::fcntl(write_fd, libc::F_DUPFD, 10);
                if read < 0 || write < 0 || libc::dup2(read, 3) < 0 || libc::dup2(write, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("start Chromium");
        drop((to_read, from_write));
        let (sender, from) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(std::fs::File::from(from_read));
            let mut message = Vec::new();
            while reader.read_until(0, &mut message).is_ok_and(|n| n > 0) {
                message.pop();
                if let Ok(value) = serde_json::from_slice(&message)
                    && sender.send(value).is_err()
                {
                    return;
                }
                message.clear();
            }
        });
        let mut browser = Browser {
            child,
            to: to_write.into(),
            from,
            next: 0,
            session: String::new(),
            events: Vec::new(),
            _profile: profile,
        };
        let target = browser.call("Target.createTarget", json!({"url": "about:blank"}));
        let target = target["targetId"].clone();
        let attached = browser.call(
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        browser.call("Page.enable", json!({}));
        Some(browser)
    }

    /// Chromium's trace of what `work` makes the page do: every trace event
    /// of `categories` (comma-separated, as `chrome://tracing` names them)
    /// recorded from before `work` to after it, as the DevTools protocol
    /// gives them (`Tracing.dataCollected`).
    pub fn trace(&mut self, categories: &str, work: impl FnOnce(&mut Browser)) -> Vec<Value> {
        self.call(
            "Tracing.start",
            json!({"traceConfig": {"includedCategories": categories.split(',').collect::<Vec<_>>()},
                   "transferMode": "ReportEvents"}),
        );
        work(self);
        self.call("Tracing.end", json!({}));
        let deadline = Instant::now() + CEILING;
        let mut trace = Vec::new();
        loop {
            let mut complete = false;
            self.events.retain(|event| match event["method"].as_str() {
                Some("Tracing.dataCollected") => {
                    trace.extend(
                        event["params"]["value"]
                            .as_array()
                            .cloned()
                            .unwrap_or_default(),
                    );
                    false
                }
                Some("Tracing.tracingComplete") => {
                    complete = true;
                    false
                }
                _ => true,
            });
            if complete {
                return trace;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .from
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("Chromium never finished its trace"));
            if message.get("method").is_some() {
                self.events.push(message);
            }
        }
    }

    /// Sends a command (to the page once attached) and waits for its result.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send(method, params, &session)
    }

    /// Sends a command to the browser itself (not the page) and waits for
    /// its result.
    pub fn call_browser(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, "")
    }

    /// Waits for the event `method` (kept since the page was opened, or to
    /// come) and gives its parameters.
    pub fn wait_event(&mut self, method: &str) -> Value {
        let deadline = Instant::now() + CEILING;
        loop {
            if let Some(at) = self.events.iter().position(|e| e["method"] == method) {
                return self.events.remove(at)["params"].clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .from
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("Chromium never sent {method}"));
            if message.get("method").is_some() {
                self.events.push(message);
            }
        }
    }

    fn send(&mut self, method: &str, params: Value, session: &str) -> Value {
        self.next += 1;
        let id = self.next;
        let mut message = json!({"id": id, "method": method, "params": params});
        if !session.is_empty() {
            message["sessionId"] = json!(session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.to.write_all(&bytes).expect("write to Chromium");
        let deadline = Instant::now() + CEILING;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let reply = self
                .from
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("Chromium did not answer {method}"));
            if reply["id"] == id {
                assert!(reply.get("error").is_none(), "{method}: {reply}");
                return reply["result"].clone();
            }
            if reply.get("method").is_some() && self.events.len() < 1000 {
                self.events.push(reply);
            }
        }
    }

    /// Shows the page at `url` in a window of `width` × `height` pixels and
    /// waits until `ready` (a JavaScript expression) is true.
    pub fn open(&mut self, url: &str, (width, height): (u32, u32), ready: &str) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        self.call("Page.navigate", json!({"url": url}));
        self.wait_for(ready);
    }

    /// The value of a JavaScript expression in the page (promises awaited).
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression}: {result}"
        );
        result["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page (polled; fails after
    /// [`CEILING`], saying what the page shows).
    pub fn wait_for(&mut self, expression: &str) {
        self.wait_for_at(None, expression);
    }

    /// [`Browser::wait_for`] in the frame of `session` (from
    /// [`Browser::frame_session`]).
    pub fn wait_for_in(&mut self, session: &str, expression: &str) {
        self.wait_for_at(Some(session), expression);
    }

    /// Waits until `expression` is true in the page, or in the frame of
    /// `session` when given.
    fn wait_for_at(&mut self, session: Option<&str>, expression: &str) {
        let deadline = Instant::now() + CEILING;
        let guarded = format!(
            "(() => {{ try {{ return !!({expression}); }} catch (e) {{ return false; }} }})()"
        );
        let eval = |browser: &mut Browser, expression: &str| match session {
            Some(session) => browser.eval_in(session, expression),
            None => browser.eval(expression),
        };
        while eval(self, &guarded) != json!(true) {
            if Instant::now() > deadline {
                let body = eval(self, "document.body ? document.body.innerText : ''");
                panic!("the page never showed `{expression}`; it shows:\n{body}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The DevTools session of the page's first iframe that runs in a
    /// process of its own (a sandboxed frame without `allow-same-origin`
    /// does), with `Runtime` enabled in it: call before opening the page
    /// ([`Browser::attach_frames`]), then this after it has loaded.
    pub fn frame_session(&mut self) -> String {
        loop {
            let attached = self.wait_event("Target.attachedToTarget");
            if attached["targetInfo"]["type"] == "iframe" {
                let session = attached["sessionId"].as_str().unwrap().to_string();
                self.send("Runtime.enable", json!({}), &session);
                return session;
            }
        }
    }

    /// Asks Chromium to attach to the frames of the page that run in their
    /// own process ([`Browser::frame_session`]).
    pub fn attach_frames(&mut self) {
        self.call(
            "Target.setAutoAttach",
            json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}),
        );
    }

    /// The value of a JavaScript expression in the frame of `session`
    /// (from [`Browser::frame_session`]; promises awaited).
    pub fn eval_in(&mut self, session: &str, expression: &str) -> Value {
        let result = self.send(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            session,
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression}: {result}"
        );
        result["result"]["value"].clone()
    }

    /// The events named `method` received so far from `session`, taken
    /// out of those kept.
    pub fn take_events(&mut self, method: &str, session: &str) -> Vec<Value> {
        let (taken, kept) = std::mem::take(&mut self.events)
            .into_iter()
            .partition(|e| e["method"] == method && e["sessionId"] == session);
        self.events = kept;
        taken
    }

    /// Presses and releases a key, as a keyboard does.
    pub fn press(&mut self, key: &str) {
        self.press_with(key, 0);
    }

    /// Presses and releases a key with `modifiers` held (the protocol's bits:
    /// Alt 1, Ctrl 2, Meta 4, Shift 8).
    pub fn press_with(&mut self, key: &str, modifiers: u32) {
        let (code, keycode) = match key {
            "ArrowRight" => ("ArrowRight", 39),
            "ArrowLeft" => ("ArrowLeft", 37),
            "ArrowUp" => ("ArrowUp", 38),
            " " => ("Space", 32),
            "Backspace" => ("Backspace", 8),
            "Home" => ("Home", 36),
            "End" => ("End", 35),
            "Enter" => ("Enter", 13),
            "Escape" => ("Escape", 27),
            "ArrowDown" => ("ArrowDown", 40),
            "Tab" => ("Tab", 9),
            "t" => ("KeyT", 84),
            "c" => ("KeyC", 67),
            "f" => ("KeyF", 70),
            "l" => ("KeyL", 76),
            "g" => ("KeyG", 71),
            "+" => ("Equal", 187),
            other => panic!("no key {other}"),
        };
        let mut down = json!({"type": "rawKeyDown", "key": key, "code": code,
            "windowsVirtualKeyCode": keycode, "modifiers": modifiers});
        if key == "Enter" || (key.chars().count() == 1 && modifiers & 2 == 0) {
            // Enter also types a carriage return (which submits a form, or
            // adds a line), a printable key its character.
            down["type"] = json!("keyDown");
            down["text"] = json!(if key == "Enter" { "\r" } else { key });
        }
        self.call("Input.dispatchKeyEvent", down);
        self.call(
            "Input.dispatchKeyEvent",
            json!({"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": keycode, "modifiers": modifiers}),
        );
    }

    /// Clicks the middle of the element `selector` with the mouse.
    pub fn click(&mut self, selector: &str) {
        let at = self.eval(&format!(
            "(() => {{ const r = document.querySelector({selector:?}).getBoundingClientRect();
                return [r.left + r.width / 2, r.top + r.height / 2]; }})()"
        ));
        let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }

    /// Types text into the focused field.
    pub fn type_text(&mut self, text: &str) {
        self.call("Input.insertText", json!({"text": text}));
    }

    /// A screenshot, saved as `name`.png under `target/browser-screenshots`,
    /// with what the browser decodes of it: width, height, the share of pixels
    /// that are not the background's colour, and how many colours it has.
    pub fn screenshot(&mut self, name: &str) -> Value {
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let data = shot["data"].as_str().unwrap().to_string();
        let dir = in_crate("target/browser-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), base64_decode(&data)).unwrap();
        self.eval(&format!(
            "new Promise(done => {{ const image = new Image(); image.onload = () => {{
                const canvas = document.createElement('canvas');
                canvas.width = image.width; canvas.height = image.height;
                const context = canvas.getContext('2d');
                context.drawImage(image, 0, 0);
                const pixels = context.getImageData(0, 0, image.width, image.height).data;
                const colours = new Set(); let other = 0;
                for (let i = 0; i < pixels.length; i += 4) {{
                    const rgb = (pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2];
                    colours.add(rgb);
                    if (rgb !== ((pixels[0] << 16) | (pixels[1] << 8) | pixels[2])) other++;
                }}
                done({{width: image.width, height: image.height, other: other / (pixels.length / 4), colours: colours.size}});
            }}; image.src = 'data:image/png;base64,{data}'; }})"
        ))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64 (RFC 4648 §4), as the protocol sends screenshots.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    let mut bytes = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &d)| n | u32::from(d) << (18 - 6 * i));
        bytes.extend(n.to_be_bytes()[1..chunk.len()].iter());
    }
    bytes
}

/// A screenshot is not blank: the right size, with a real share of drawn
/// pixels in more than a few colours.
pub fn assert_drawn(shot: &Value, (width, height): (u32, u32)) {
    assert_eq!(
        (shot["width"].as_u64(), shot["height"].as_u64()),
        (Some(width.into()), Some(height.into())),
        "{shot}"
    );
    assert!(
        shot["other"].as_f64().unwrap() > 0.05,
        "mostly one colour: {shot}"
    );
    assert!(shot["colours"].as_u64().unwrap() > 8, "{shot}");
}

/// `:trace all`'s steps for `statements`, each as printed (from `[K]` to the
/// line before the next step).
fn trace_steps(statements: &str) -> Vec<String> {
    let output = output_of(&["-e", statements, "-e", ":trace all"]);
    let text = stdout_of(&output);
    let mut steps: Vec<String> = Vec::new();
    for line in text
        .lines()
        .skip_while(|l| !l.starts_with("backward pass"))
        .skip(1)
    {
        if line.starts_with('[') {
            steps.push(line.to_string());
        } else if let Some(step) = steps.last_mut() {
            step.push('\n');
            step.push_str(line);
        }
    }
    steps
}

/// The gradient texts of the value boxes of `:svg --step K` for `script`,
/// in the order the SVG draws them.
fn slide_grads(script: &str, k: usize) -> Vec<String> {
    let output = crate::util::output_of(&["-e", script, "-e", &format!(":svg - --step {k}")]);
    let svg = crate::util::stdout_of(&output);
    let svg = &svg[svg.find("<svg").unwrap()..];
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| {
            n.has_tag_name("text") && n.attribute("class").is_some_and(|c| c.starts_with("grad"))
        })
        .map(|n| n.text().unwrap_or("").to_string())
        .collect()
}

/// What the view shows: the step, the highlighted node's name, the line.
pub fn shown(browser: &mut Browser) -> (Value, Value, Value) {
    let state = browser.eval(
        "({step: window.gradcalcView.step,
           current: Array.from(document.querySelectorAll('g.value.current text.name')).map(t => t.textContent),
           line: document.querySelector('.gc-line').textContent})",
    );
    (
        state["step"].clone(),
        state["current"].clone(),
        state["line"].clone(),
    )
}

/// Writes the page of `statements` to `dir`/`name`.html; its file:// URL.
pub fn html_page(dir: &Path, name: &str, statements: &str) -> String {
    let output = output_in(
        dir,
        &["-e", statements, "-e", &format!(":html {name}.html")],
    );
    assert!(output.status.success());
    format!("file://{}/{name}.html", dir.display())
}

#[test]
fn the_html_page_steps_with_the_keys_as_trace_numbers_the_steps() {
    let Some(mut browser) = Browser::start("the :html page in Chromium") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = html_page(dir.path(), "colah", COLAH);
    let steps = trace_steps(COLAH);
    // By hand: e, d, c, b, a (colah's fan-out, web.rs).
    let names = ["e", "d", "c", "b", "a"];
    assert_eq!(steps.len(), names.len());
    browser.open(&url, (1920, 1080), "window.gradcalcView");
    assert_eq!(shown(&mut browser).0, json!(0));
    let grads_js =
        "Array.from(document.querySelectorAll('g.value text.grad')).map(t => t.textContent)";
    // Each step, reached with → or Space as a lecturer does, shows the node,
    // the line and every box's gradient as `:trace` and `:svg --step K` do.
    for (k, name) in names.iter().enumerate() {
        browser.press(if k % 2 == 0 { "ArrowRight" } else { " " });
        let (step, current, line) = shown(&mut browser);
        assert_eq!(step, json!(k + 1));
        assert_eq!(current, json!([name]));
        assert_eq!(line, json!(steps[k]));
        assert_eq!(
            browser.eval(grads_js),
            json!(slide_grads(COLAH, k + 1)),
            "step {}",
            k + 1
        );
    }
    // Backspace and Home go back: step 2 shows b's sum so far, 0 → 3 (its
    // first of two uses), in the partial style.
    browser.press("Home");
    browser.press("ArrowRight");
    browser.press("ArrowRight");
    browser.press("ArrowRight");
    browser.press("Backspace");
    assert_eq!(shown(&mut browser).0, json!(2));
    assert_eq!(browser.eval(grads_js), json!(slide_grads(COLAH, 2)));
    assert_eq!(
        browser.eval("Array.from(document.querySelectorAll('g.value.partial text.name')).map(t => t.textContent)"),
        json!(["b"])
    );
    browser.press("ArrowRight");
    // After step 3 (c): a got 0 → 2, b's second use made it final, 3 → 5.
    let grads = browser.eval(grads_js);
    assert_eq!(
        grads,
        json!(["grad 0 → 2", "grad 3 → 5", "grad 2", "grad 3", "grad 1"])
    );
    browser.press("ArrowLeft");
    assert_eq!(
        shown(&mut browser),
        (json!(2), json!(["d"]), json!(steps[1]))
    );
    browser.press("End");
    assert_eq!(
        shown(&mut browser),
        (json!(5), json!(["a"]), json!(steps[4]))
    );
    let grads = browser
        .eval("Array.from(document.querySelectorAll('g.value text.grad')).map(t => t.textContent)");
    assert_eq!(
        grads,
        json!(["grad 2", "grad 5", "grad 2", "grad 3", "grad 1"])
    );
    let shot = browser.screenshot("colah-1920x1080");
    assert_drawn(&shot, (1920, 1080));
    browser.press("Home");
    assert_eq!(shown(&mut browser).0, json!(0));
    // The projector theme: larger text for the line.
    let size = "parseFloat(getComputedStyle(document.querySelector('.gc-line')).fontSize)";
    let plain = browser.eval(size).as_f64().unwrap();
    browser.press("t");
    assert_eq!(
        browser.eval("document.body.classList.contains('projector')"),
        json!(true)
    );
    assert!(browser.eval(size).as_f64().unwrap() > plain);
    browser.press("ArrowRight");
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": false}),
    );
    browser.eval("window.gradcalcView.fit(), true");
    let shot = browser.screenshot("colah-1280x720-projector");
    assert_drawn(&shot, (1280, 720));
    browser.press("t");
    assert_eq!(
        browser.eval("document.body.classList.contains('projector')"),
        json!(false)
    );
}

#[test]
fn the_example_pages_draw_at_both_sizes() {
    let Some(mut browser) = Browser::start("the example pages in Chromium") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The moons MLP: its loss L, before the training (the first command).
    for (name, script) in [
        ("neuron", "examples/neuron.calc"),
        ("mlp", "examples/moons_descent.calc"),
    ] {
        let source = std::fs::read_to_string(in_crate(script)).unwrap();
        let source: Vec<&str> = source.lines().take_while(|l| !l.starts_with(':')).collect();
        let url = html_page(dir.path(), name, &source.join("\n"));
        for size in [(1920, 1080), (1280, 720)] {
            browser.open(&url, size, "window.gradcalcView");
            browser.press("ArrowRight");
            assert_eq!(shown(&mut browser).0, json!(1));
            let shot = browser.screenshot(&format!("{name}-{}x{}", size.0, size.1));
            assert_drawn(&shot, size);
        }
    }
    // The MLP's calls (h, score) collapse to boxes; C draws every node.
    let boxes = "document.querySelectorAll('g.value').length";
    let collapsed = browser.eval(boxes).as_u64().unwrap();
    browser.press("c");
    assert!(browser.eval(boxes).as_u64().unwrap() > collapsed);
    assert_eq!(shown(&mut browser).0, json!(1));
    browser.press("c");
    assert_eq!(browser.eval(boxes).as_u64().unwrap(), collapsed);
}

/// Serves the files of `dir` on a free port of 127.0.0.1 (for the
/// playground, whose WebAssembly a browser fetches over HTTP only).
pub fn serve_files(dir: PathBuf) -> u16 {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut request = String::new();
            let _ = BufReader::new(&stream).read_line(&mut request);
            let path = request.split_whitespace().nth(1).unwrap_or("/");
            let path = if path == "/" { "/index.html" } else { path };
            let kind = match path.rsplit('.').next() {
                Some("html") => "text/html; charset=utf-8",
                Some("js") => "text/javascript",
                Some("css") => "text/css",
                Some("wasm") => "application/wasm",
                _ => "application/octet-stream",
            };
            let reply = match std::fs::read(dir.join(path.trim_start_matches('/'))) {
                Ok(body) => {
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    [head.into_bytes(), body].concat()
                }
                Err(_) => {
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        .to_vec()
                }
            };
            let _ = stream.write_all(&reply);
        }
    });
    port
}

#[test]
fn the_playground_runs_gradcalc_in_the_browser() {
    let dist = in_crate("web/dist");
    if !dist.join("gradcalc.wasm").is_file() {
        eprintln!(
            "note: the playground test skipped: web/dist/ is not built (scripts/build-web.sh)"
        );
        return;
    }
    let Some(mut browser) = Browser::start("the playground in Chromium") else {
        return;
    };
    let port = serve_files(dist);
    browser.open(
        &format!("http://127.0.0.1:{port}/"),
        (1920, 1080),
        "document.body.getAttribute('data-ready') === 'yes'",
    );
    browser.eval("document.getElementById('input').focus(), true");
    browser.type_text("x = 2; y = x^2");
    browser.press("Enter");
    browser.wait_for("document.querySelector('.gc-title').textContent === 'gradcalc: y'");
    browser.type_text(":grad x");
    browser.press("Enter");
    // d(x²)/dx at 2 is 4; the view shows the finished pass (2 steps: y, x).
    browser.wait_for("document.getElementById('screen').textContent.includes('∂y/∂x = 4')");
    assert_eq!(
        browser.eval("window.document.querySelector('.gc-status').textContent"),
        json!("step 2 of 2")
    );
    let screen = browser.eval("document.getElementById('screen').textContent");
    assert!(
        screen
            .as_str()
            .unwrap()
            .contains("> x = 2; y = x^2\nx = 2\ny = 4\n"),
        "{screen}"
    );
    // An error shows its caret, as in the terminal.
    browser.type_text("x y");
    browser.press("Enter");
    browser
        .wait_for("document.getElementById('screen').textContent.includes('use `*` to multiply')");
    // History: ↑ brings the last input back.
    browser.press("ArrowUp");
    assert_eq!(
        browser.eval("document.getElementById('input').value"),
        json!("x y")
    );
    browser.eval("document.getElementById('input').value = '', true");
    // Esc leaves the input line; then the arrows step the graph.
    browser.press("Escape");
    browser.press("Home");
    browser.press("ArrowRight");
    assert_eq!(shown(&mut browser).1, json!(["y"]));
    let shot = browser.screenshot("playground-1920x1080");
    assert_drawn(&shot, (1920, 1080));
}

#[test]
fn a_statement_typed_in_the_repl_appears_in_the_served_page() {
    let Some((mut browser, mut repl, port, _state)) = serving("`:serve` in Chromium") else {
        return;
    };
    // What the page's Content-Security-Policy blocks, as the page sees it.
    browser.call(
        "Page.addScriptToEvaluateOnNewDocument",
        json!({"source": "window.blocked = []; document.addEventListener('securitypolicyviolation', e => window.blocked.push(e.effectiveDirective + ' ' + e.blockedURI));"}),
    );
    browser.open(
        &format!("http://127.0.0.1:{port}/"),
        (1280, 720),
        "document.querySelector('.gc-message')",
    );
    repl.line("x = 3; y = x^3", "y = 27");
    browser.wait_for("document.querySelector('.gc-title').textContent === 'gradcalc: y'");
    // Before `:grad` the pass is not run: step 0, gradients blank.
    assert_eq!(shown(&mut browser).0, json!(0));
    repl.line(":grad x", "∂y/∂x = 27");
    // 3x² at 3 is 27: filled in at the finished pass.
    browser.wait_for("document.querySelector('.gc-status').textContent === 'step 2 of 2'");
    let grads = browser
        .eval("Array.from(document.querySelectorAll('g.value text.grad')).map(t => t.textContent)");
    assert_eq!(grads, json!(["grad 27", "grad 1"]));
    repl.line("x := 2", "y = 8");
    browser.wait_for("document.querySelector('.gc-graph').textContent.includes('value 8')");
    let shot = browser.screenshot("serve-1280x720");
    assert_drawn(&shot, (1280, 720));
    // The page updated through its event stream under the policy, which
    // blocked nothing of its own, and blocks a request elsewhere.
    assert_eq!(browser.eval("window.blocked"), json!([]));
    browser.eval("new Image().src = 'http://127.0.0.2:9/x.png', true");
    browser.wait_for("window.blocked.length === 1");
    assert_eq!(
        browser.eval("window.blocked"),
        json!(["img-src http://127.0.0.2:9/x.png"])
    );
    // A closed browser does not end the REPL.
    drop(browser);
    repl.line("z = y + 1", "z = 9");
    repl.line(":serve stop", "stopped serving");
}

/// A port free on 127.0.0.1 now.
fn free_port() -> u16 {
    let probe = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    probe.local_addr().unwrap().port()
}

/// Chromium, and gradcalc's REPL (its history under the returned directory)
/// serving the live page on a free port.
pub fn serving(test: &str) -> Option<(Browser, Repl, u16, tempfile::TempDir)> {
    let browser = Browser::start(test)?;
    let port = free_port();
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line(
        &format!(":serve {port}"),
        "serving the live page at http://127.0.0.1:",
    );
    Some((browser, repl, port, state))
}

#[test]
fn a_served_page_comes_back_when_serving_starts_again() {
    // The lecturer stops serving (or gradcalc is restarted) and serves again
    // on the same port: the open page says gradcalc is not answering, keeps
    // the last state, and shows the new one once it answers, without a reload.
    let Some((mut browser, mut repl, port, _state)) = serving("`:serve` again in Chromium") else {
        return;
    };
    repl.line("x = 3; y = x^3", "y = 27");
    browser.open(
        &format!("http://127.0.0.1:{port}/"),
        (1280, 720),
        "document.querySelector('.gc-title').textContent === 'gradcalc: y'",
    );
    repl.line(":serve stop", "stopped serving");
    // Meanwhile another program answers on the port with an error, which makes
    // a browser's event stream give up for good (the HTML standard's "fail
    // the connection"): the page must open it again by itself.
    let refused = refuse_with_503(port);
    browser.wait_for("document.querySelector('.gc-status').textContent.includes('not answering')");
    assert_eq!(
        browser.eval("document.querySelector('.gc-title').textContent"),
        json!("gradcalc: y")
    );
    // 27 + 1, typed while gradcalc serves nothing.
    repl.line("z = y + 1", "z = 28");
    refused.stop_after_one();
    repl.line(
        &format!(":serve {port}"),
        "serving the live page at http://127.0.0.1:",
    );
    browser.wait_for("document.querySelector('.gc-title').textContent === 'gradcalc: z'");
    browser.wait_for("document.querySelector('.gc-graph').textContent.includes('value 28')");
    repl.line(":serve stop", "stopped serving");
}

/// A stand-in server on 127.0.0.1:`port` answering every request with
/// `503 Service Unavailable`, until stopped.
struct Refuser {
    port: u16,
    answered: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

fn refuse_with_503(port: u16) -> Refuser {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("bind the freed port");
    let answered = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (count, stopping) = (Arc::clone(&answered), Arc::clone(&stop));
    let thread = std::thread::spawn(move || {
        for stream in listener.incoming() {
            if stopping.load(Ordering::SeqCst) {
                return;
            }
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            let _ = std::io::Read::read(&mut stream, &mut request);
            let _ = stream.write_all(
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            count.fetch_add(1, Ordering::SeqCst);
        }
    });
    Refuser {
        port,
        answered,
        stop,
        thread,
    }
}

impl Refuser {
    /// Waits until the stand-in has answered a request (the page's stream
    /// asking again), then frees the port.
    fn stop_after_one(self) {
        use std::sync::atomic::Ordering;
        let started = Instant::now();
        while self.answered.load(Ordering::SeqCst) == 0 {
            assert!(
                started.elapsed() < CEILING,
                "the page never asked the port again"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees the flag and drops the listener.
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        self.thread.join().unwrap();
    }
}

/// The text size the page shows its picture at, in screen pixels (18 px of
/// the picture times its scale), and the graph's room (width, height).
fn page_text(browser: &mut Browser) -> (f64, f64, f64) {
    let seen = browser.eval(
        "(() => { const t = document.querySelector('g.value text.name');
                  const g = document.querySelector('.gc-graph');
                  return [t.getScreenCTM().a * 18, g.clientWidth, g.clientHeight]; })()",
    );
    let at = |i: usize| seen[i].as_f64().unwrap();
    (at(0), at(1), at(2))
}

/// The four-point MLP of tests/it/steps.rs on its page at fit, in a
/// 1920×1080 window: the picture (2152×612 px, its parameters under the
/// graph) fills the graph's room; in the projector theme (T), where the
/// picture gets the whole width, its text shows at 16 px or more (18 ×
/// 1920/2152 = 16.1).
#[test]
fn the_four_point_mlp_page_shows_readable_text_at_fit() {
    let Some(mut browser) = Browser::start("the four-point MLP's page in Chromium") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = html_page(dir.path(), "mlp4", crate::steps::MLP4);
    browser.open(&url, (1920, 1080), "window.gradcalcView");
    let size = browser.eval("window.gradcalcView.size");
    let (width, height) = (size[0].as_f64().unwrap(), size[1].as_f64().unwrap());
    let (text, room_x, room_y) = page_text(&mut browser);
    let fit = 18.0 * (room_x / width).min(room_y / height);
    assert!((text - fit).abs() < 0.05, "{text} px, {fit} px at fit");
    eprintln!("the four-point MLP's page at fit: {text:.1} px text ({room_x}×{room_y} px room)");
    browser.press("t");
    browser.eval("window.gradcalcView.fit(), true");
    let (text, room_x, room_y) = page_text(&mut browser);
    eprintln!("projector theme: {text:.1} px text ({room_x}×{room_y} px room)");
    assert!(text >= 16.0, "{text} px in the projector theme");
    let shot = browser.screenshot("mlp4-1920x1080-projector");
    assert_drawn(&shot, (1920, 1080));
}
