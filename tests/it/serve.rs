//! `:serve` through sockets, as browsers and hostile programs on the same
//! machine reach it: the REPL on a pseudo-terminal, the requests over TCP to
//! 127.0.0.1. Every wait is for something the server sends or the REPL
//! prints (a read timeout of [`CEILING`] only catches a hang).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::Command;

use crate::pty::{self, CEILING, Repl};
use crate::util::assert_contains;

/// The connections `:serve` serves at once (its `MAX_CONNECTIONS`).
const SLOTS: usize = 32;

/// gradcalc's REPL with `y = x^3` at x = 3, serving the live page.
struct Served {
    repl: Repl,
    port: u16,
    _state: tempfile::TempDir,
}

/// A port free on 127.0.0.1 now.
fn free_port() -> u16 {
    let probe = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    probe.local_addr().unwrap().port()
}

/// Starts `command` (made by [`pty::command`] or like it) and serves the
/// page of `y = x^3` at x = 3.
fn serve_from(command: Command, state: tempfile::TempDir) -> Served {
    let mut repl = Repl::spawn(command);
    repl.prompt();
    repl.line("x = 3; y = x^3", "y = 27");
    let port = free_port();
    repl.line(
        &format!(":serve {port}"),
        "serving the live page at http://127.0.0.1:",
    );
    Served {
        repl,
        port,
        _state: state,
    }
}

fn serving() -> Served {
    let state = tempfile::tempdir().unwrap();
    serve_from(pty::command(state.path()), state)
}

/// A connection to the server, with a read timeout that only a hang reaches.
fn connect(port: u16) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to :serve");
    stream.set_read_timeout(Some(CEILING)).unwrap();
    stream
}

/// Everything the server sends on `stream` until it closes it (a reset
/// counts as the end).
fn read_to_end(stream: &mut TcpStream) -> String {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => bytes.extend_from_slice(&chunk[..read]),
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(error) if error.kind() == ErrorKind::ConnectionReset => break,
            Err(error) => panic!("reading from :serve: {error}"),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// What the server sends on `stream` up to and including `text`.
fn read_until(stream: &mut TcpStream, text: &str) -> String {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&bytes).contains(text) {
        match stream.read(&mut chunk) {
            Ok(0) => panic!(
                "closed before {text:?}: {}",
                String::from_utf8_lossy(&bytes)
            ),
            Ok(read) => bytes.extend_from_slice(&chunk[..read]),
            Err(error) => panic!("reading from :serve: {error}"),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The whole answer to a `GET` of `path` with `host` as its `Host`.
fn get_as(port: u16, path: &str, host: &str) -> String {
    let mut stream = connect(port);
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
    read_to_end(&mut stream)
}

/// The whole answer to a browser's `GET` of `path`.
fn get(port: u16, path: &str) -> String {
    get_as(port, path, &format!("127.0.0.1:{port}"))
}

/// The status line of an answer.
fn status(answer: &str) -> &str {
    answer.lines().next().unwrap_or("")
}

#[test]
fn every_answer_forbids_network_access_and_sniffing() {
    let mut served = serving();
    let page = get(served.port, "/");
    assert_eq!(status(&page), "HTTP/1.1 200 OK");
    assert_contains(&page, "Content-Type: text/html; charset=utf-8\r\n");
    // No network but its own event stream, no framing by other origins.
    assert_contains(
        &page,
        "Content-Security-Policy: default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'\r\n",
    );
    assert_contains(&page, "X-Content-Type-Options: nosniff\r\n");
    // The model of y = x^3: three nodes drawn, x, the constant 3 and y.
    assert_contains(&page, "<title>gradcalc: live</title>");
    assert_contains(&page, "\"of\":\"y\"");
    // Browsers ask for an icon: an answer without content, not a 404.
    let icon = get(served.port, "/favicon.ico");
    assert_eq!(status(&icon), "HTTP/1.1 204 No Content");
    assert_contains(&icon, "X-Content-Type-Options: nosniff\r\n");
    let missing = get(served.port, "/missing");
    assert_eq!(status(&missing), "HTTP/1.1 404 Not Found");
    assert_contains(&missing, "X-Content-Type-Options: nosniff\r\n");
    served.repl.line(":serve stop", "stopped serving");
}

#[test]
fn a_host_without_a_port_is_loopback_and_others_are_told_where_to_go() {
    let mut served = serving();
    let port = served.port;
    // Browsers leave `:80` out of `Host` (`:serve 80`); any port alike.
    for host in ["127.0.0.1", "localhost", &format!("localhost:{port}")] {
        let answer = get_as(port, "/", host);
        assert_eq!(status(&answer), "HTTP/1.1 200 OK", "Host: {host}");
    }
    let open = format!("open http://127.0.0.1:{port}/ (or http://localhost:{port}/)");
    for host in [
        "example.com",
        "127.0.0.1.example.com",
        &format!("127.0.0.1:{}", port.wrapping_add(1)),
    ] {
        let answer = get_as(port, "/", host);
        assert_eq!(status(&answer), "HTTP/1.1 403 Forbidden", "Host: {host}");
        assert_contains(&answer, &open);
    }
    served.repl.line(":serve stop", "stopped serving");
}

#[test]
fn slow_connections_give_way_to_a_browser() {
    let mut served = serving();
    let port = served.port;
    // More connections than slots, each one byte into its request head and
    // no further (as one trickling a byte every few seconds is between two).
    let slow: Vec<TcpStream> = (0..SLOTS + 8)
        .map(|_| {
            let mut stream = connect(port);
            stream.write_all(b"G").unwrap();
            stream
        })
        .collect();
    // A browser still gets the page.
    let page = get(port, "/");
    assert_eq!(status(&page), "HTTP/1.1 200 OK");
    assert_contains(&page, "\"of\":\"y\"");
    // The slot it took was the oldest head's: that connection was closed
    // without an answer.
    let mut oldest = slow.into_iter().next().unwrap();
    assert_eq!(read_to_end(&mut oldest), "");
    served.repl.line(":serve stop", "stopped serving");
}

#[test]
fn a_request_head_must_arrive_whole_within_the_deadline() {
    let mut served = serving();
    let mut unfinished = connect(served.port);
    unfinished.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    let answer = read_to_end(&mut unfinished);
    assert_eq!(status(&answer), "HTTP/1.1 408 Request Timeout");
    assert_contains(&answer, "the request did not arrive within 5 s");
    served.repl.line(":serve stop", "stopped serving");
}

#[test]
fn slots_free_as_soon_as_browsers_leave() {
    let mut served = serving();
    let port = served.port;
    // Every slot holds an event stream (a page open in a browser tab).
    let streams: Vec<TcpStream> = (0..SLOTS)
        .map(|_| {
            let mut stream = connect(port);
            write!(
                stream,
                "GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
            )
            .unwrap();
            read_until(&mut stream, "retry: 1000");
            stream
        })
        .collect();
    // One more is refused: no slot is free and none is still being asked for.
    let mut refused = connect(port);
    let answer = read_to_end(&mut refused);
    assert_eq!(status(&answer), "HTTP/1.1 503 Service Unavailable");
    assert_contains(&answer, "too many connections");
    // One more that sends its request at once, as a browser does: the
    // request is read before the refusal, which arrives as an answer (not a
    // TCP reset for a request closed unread).
    for _ in 0..3 {
        let mut eager = connect(port);
        write!(eager, "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").unwrap();
        let mut answer = Vec::new();
        eager
            .read_to_end(&mut answer)
            .expect("an answer, not a reset");
        let answer = String::from_utf8_lossy(&answer);
        assert_eq!(status(&answer), "HTTP/1.1 503 Service Unavailable");
        assert_contains(&answer, "too many connections");
    }
    // The tabs close: their slots are free for the next browser at once.
    drop(streams);
    let page = get(port, "/");
    assert_eq!(status(&page), "HTTP/1.1 200 OK");
    served.repl.line(":serve stop", "stopped serving");
}

#[test]
fn after_stop_nothing_more_is_served() {
    let mut served = serving();
    let port = served.port;
    // A request accepted before the stop, its head not yet whole.
    let mut waiting = connect(port);
    waiting.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    // An open page's event stream (accepted after the request above).
    let mut stream = connect(port);
    write!(
        stream,
        "GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    )
    .unwrap();
    read_until(&mut stream, "\"step\":null}\n\n");
    served.repl.line(":serve stop", "stopped serving");
    // The rest of the head arrives (or cannot be sent): no answer.
    let _ = write!(waiting, "Host: 127.0.0.1:{port}\r\n\r\n");
    assert_eq!(read_to_end(&mut waiting), "");
    // The stream ends with nothing after the first version.
    assert_eq!(read_to_end(&mut stream), "");
    let refused = TcpStream::connect(("127.0.0.1", port)).map(|_| ());
    assert_eq!(
        refused.map_err(|e| e.kind()),
        Err(ErrorKind::ConnectionRefused)
    );
    // The REPL goes on.
    served.repl.line("z = y + 1", "z = 28");
}

#[test]
fn running_out_of_file_descriptors_keeps_the_repl() {
    // gradcalc under a low limit of open files (`ulimit -n 30`), as a shell
    // of a locked-down account starts it.
    let state = tempfile::tempdir().unwrap();
    let command = pty::command_in_shell(state.path(), "ulimit -n 30 && exec \"$0\"");
    let mut served = serve_from(command, state);
    let port = served.port;
    // Far more connections than the process has descriptors for, each
    // holding one if it can (a byte into its request head): the REPL keeps
    // those it needs, the newest connections take the oldest ones' places.
    let held: Vec<TcpStream> = (0..3 * SLOTS)
        .map(|_| {
            let mut stream = connect(port);
            let _ = stream.write_all(b"G");
            stream
        })
        .collect();
    // The REPL reads, evaluates and serves on.
    served.repl.line("z = y + 1", "z = 28");
    served.repl.prompt();
    let page = get(port, "/");
    assert_eq!(status(&page), "HTTP/1.1 200 OK", "{page}");
    assert_contains(&page, "\"of\":\"z\"");
    let mut oldest = held.into_iter().next().unwrap();
    assert_eq!(read_to_end(&mut oldest), "");
    served.repl.line(":serve stop", "stopped serving");
    served.repl.line("w = z + 1", "w = 29");
    served.repl.leave();
}

#[test]
fn a_page_too_large_is_a_message() {
    // A name of half a million letters, used three times: its page would be
    // over 8 MB.
    let (_dir, script) = crate::util::folder_with(
        "long.calc",
        &format!("{0} = 2\ny = {0}*{0} + sin({0})\n", "v".repeat(500_000)),
    );
    let mut served = serving();
    served
        .repl
        .line(&format!(":load {}", script.display()), "y = 4.909");
    // The page changes before the next prompt.
    served.repl.prompt();
    let page = get(served.port, "/");
    assert_eq!(status(&page), "HTTP/1.1 200 OK");
    assert_contains(
        &page,
        "the page of this graph would hold more than 8 MB: `:serve` serves pages of at most that (long names make a page large)",
    );
    assert!(page.len() < 100_000, "{} bytes", page.len());
    served.repl.line(":serve stop", "stopped serving");
}

/// A page's event stream (`GET /events`): each `data:` line as JSON.
struct Events {
    stream: TcpStream,
    buffer: String,
}

impl Events {
    fn open(port: u16) -> Events {
        let mut stream = connect(port);
        write!(
            stream,
            "GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
        )
        .unwrap();
        Events {
            stream,
            buffer: String::new(),
        }
    }

    /// The next event sent: `{"version", "model", "step"}`.
    fn next(&mut self) -> serde_json::Value {
        loop {
            if let Some(start) = self.buffer.find("data: ")
                && let Some(length) = self.buffer[start..].find("\n\n")
            {
                let data = &self.buffer[start + "data: ".len()..start + length];
                let event = serde_json::from_str(data).expect("an event is JSON");
                self.buffer.drain(..start + length + 2);
                return event;
            }
            let mut chunk = [0u8; 64 * 1024];
            match self.stream.read(&mut chunk) {
                Ok(0) => panic!("the stream ended: {}", self.buffer),
                Ok(read) => self
                    .buffer
                    .push_str(&String::from_utf8_lossy(&chunk[..read])),
                Err(error) => panic!("reading the events: {error}"),
            }
        }
    }

    /// The events up to the first whose step is `step`; that one.
    fn until_step(&mut self, step: u64) -> serde_json::Value {
        loop {
            let event = self.next();
            if event["step"] == step {
                return event;
            }
        }
    }
}

/// A statement that fails changes nothing on the live page: stepped to step
/// 3 of Karpathy's neuron after `:grad`, the page (`GET /`) is the same bytes
/// after `w1, b := …` fails on the undefined `L`, and the stream sent no
/// version for it: the next statement's version is the one after step 3's.
#[test]
fn a_failed_statement_leaves_the_live_page_as_it_was() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line(
        "x1 = 2; w1 = -3; b = 6.8813735870195432; o = tanh(x1*w1 + b)",
        "o = 0.7071067812",
    );
    repl.prompt();
    let port = free_port();
    repl.line(&format!(":serve {port}"), "serving the live page");
    repl.prompt();
    let mut events = Events::open(port);
    events.next();
    // The last statement of the line asks for the gradients: the page shows
    // the finished pass, its last step (o, the sum, b, the product, w1, x1).
    repl.line("w1 := -3; :grad", "∂o/∂b = 0.5");
    repl.prompt();
    let finished = events.until_step(6);
    assert_eq!(finished["model"]["steps"].as_array().map(Vec::len), Some(6));
    // Stepped with the page's keys to step 3 (b, ∂o/∂b = 0.5), then ended.
    repl.line(":step", "step 1/6");
    repl.send("\u{1b}[C");
    repl.expect("step 2/6");
    repl.send("\u{1b}[C");
    repl.expect("step 3/6");
    repl.send("q");
    repl.expect("(stopped at step 3/6");
    repl.prompt();
    let stepped = events.until_step(3);
    // A step sends the step number only, not the page's model again.
    assert!(stepped.get("model").is_none(), "{stepped}");
    let before = get(port, "/");
    assert_eq!(status(&before), "HTTP/1.1 200 OK");
    assert_contains(&before, "∂o/∂b");
    repl.line(
        "w1, b := w1 - 0.1*grad(L, w1), b - 0.1*grad(L, b)",
        "unknown name `L`",
    );
    repl.prompt();
    assert_eq!(
        get(port, "/"),
        before,
        "the page changed after a failed statement"
    );
    // The next statement that runs publishes the version after step 3's.
    repl.line("b", "6.881373587");
    repl.prompt();
    let next = events.next();
    assert_eq!(next["version"], stepped["version"].as_u64().unwrap() + 1);
    assert_eq!(next["step"], 0);
    repl.leave();
}

/// The live page follows a tensor output: its boxes (name and shape, the
/// values in rows) and the tensor steps, from the same step model as
/// `:html` (tests/it/tensor_steps.rs checks that page step by step).
#[test]
fn the_live_page_shows_a_tensor_output() {
    let mut served = serving();
    served.repl.line(
        "W = [[1, 2], [3, 4]]; x = [1, -1]; b = [0.5, 0.5]; L = sum(tanh(W @ x + b))",
        "L = -0.9242343145",
    );
    // The page changes before the next prompt.
    served.repl.prompt();
    let page = get(served.port, "/");
    assert_eq!(status(&page), "HTTP/1.1 200 OK");
    assert_contains(&page, "W 2×2");
    assert_contains(&page, "value [[1, 2],");
    assert_contains(&page, "∂L/∂W += outer(upstream, x)   outer((2), (2)) → 2×2");
    assert_contains(&page, "grad [[0.7864, -0.7864],");
    served.repl.line(":serve stop", "stopped serving");
}

#[test]
fn a_tensor_graph_past_the_picture_cap_is_refused_before_the_page_is_built() {
    // The live page was built for minutes for a fan-out sum of 2000 terms
    // (a 4 KB line) and the process aborted at 3 GB; now the page says why
    // it draws nothing, at once, with what works for tensors.
    let mut served = serving();
    let port = served.port;
    // The 4 KB line from a file (a terminal's line editor is not the point).
    let terms = vec!["x"; 2000].join(" + ");
    let script = served._state.path().join("fan_out.calc");
    std::fs::write(&script, format!("x = ones(10)\nL = sum({terms})\n")).unwrap();
    // The sum of 2000 x of ones(10) is 20 000.
    served
        .repl
        .line(&format!(":load {}", script.display()), "L = 20000");
    served.repl.prompt();
    served.repl.line("q = 1", "q = 1");
    let used = crate::util::cpu_time(served.repl.pid()).expect("still running");
    // Building the page took minutes; refusing it takes milliseconds (the
    // rest is the REPL's start and the statements, well under 20 s of CPU
    // in a debug build).
    assert!(used < std::time::Duration::from_secs(20), "{used:?} of CPU");
    let page = get(port, "/");
    assert_eq!(status(&page), "HTTP/1.1 200 OK");
    assert_contains(&page, "the graph of L has 2001 nodes");
    assert_contains(&page, "draws at most 500");
    assert_contains(&page, "`:topo` lists a tensor graph of any size");
    // The REPL still answers at once.
    served.repl.line("q + 1", "q + 1");
    served.repl.prompt();
    served.repl.line(":serve stop", "stopped serving");
}

/// Ctrl-C while the live page is built (after the statement ran, before the
/// prompt) stops the build and sends nothing: the flag is global and the
/// page's builders poll it, so a page built meanwhile could be cut short
/// (a layout stopped early, the step model's walk stopped, "interrupted" in
/// place of the page). The statement is kept, the page stays the bytes it
/// was, and the next statement updates it.
#[test]
fn ctrl_c_while_the_page_is_built_leaves_the_live_page_as_it_was() {
    let mut served = serving();
    let port = served.port;
    served.repl.prompt();
    let before = get(port, "/");
    assert_eq!(status(&before), "HTTP/1.1 200 OK");
    // The page of a 4000×4000 tensor output walks the backward pass with its
    // numbers: about a second of CPU time in a debug build, after the value
    // is printed. L = 16·10⁶·tanh(1) = 12185506.50 (tanh(1) = 0.76159415596).
    served
        .repl
        .line("X = ones(4000, 4000); L = sum(tanh(X) * X)", "L = 1218550");
    served
        .repl
        .wait_for_work(std::time::Duration::from_millis(100));
    served.repl.ctrl_c();
    served.repl.expect("interrupted");
    served
        .repl
        .expect("the page still shows the output before it");
    served.repl.prompt();
    assert_eq!(
        get(port, "/"),
        before,
        "a page built under Ctrl-C was served"
    );
    // The statement was kept; the next one is published whole.
    served.repl.line("q = L - L", "q = 0");
    served.repl.prompt();
    let after = get(port, "/");
    assert_eq!(status(&after), "HTTP/1.1 200 OK");
    assert_ne!(after, before);
    assert_contains(&after, r#""of":"q""#);
    assert_contains(&after, "∂q/∂L += upstream");
    served.repl.line(":serve stop", "stopped serving");
}
