//! `:serve [PORT]`: the page of `:html` served at http://127.0.0.1:PORT/ and
//! kept up to date with server-sent events (the HTML standard's `EventSource`:
//! one long response, a `data:` line per change), over the standard library's
//! TCP alone.
//!
//! - It listens on the loopback address only, and answers only requests whose
//!   `Host` is that address or `localhost` (a web page elsewhere cannot reach
//!   it through a name that resolves to 127.0.0.1).
//! - It is read-only: it answers `GET` of `/` (the page) and `/events` (the
//!   stream), nothing else; nothing a browser sends is run.
//! - Each connection has its own thread and time limits, at most
//!   [`MAX_CONNECTIONS`] at once; a browser that goes away ends its thread at
//!   the next write. Nothing here can stop the REPL: the REPL thread only
//!   stores the newest model ([`Server::publish`]) and never waits on a browser.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

use crate::render::html;

/// The port `:serve` uses when none is given.
pub const DEFAULT_PORT: u16 = 8000;
/// Connections served at once (pages and event streams); more are refused.
pub const MAX_CONNECTIONS: usize = 32;
/// How long a connection may take to send its request, and a write may block.
const IO_LIMIT: Duration = Duration::from_secs(10);
/// An event stream with nothing new sends a comment this often, so that a
/// closed browser is noticed.
const KEEP_ALIVE: Duration = Duration::from_secs(10);
/// The longest request head read.
const MAX_REQUEST: usize = 8 * 1024;

/// A running server. Dropping it stops it.
pub struct Server {
    port: u16,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

/// What the REPL thread and the connections share.
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    connections: AtomicUsize,
}

struct State {
    /// Counts the models published; a stream sends each version once.
    version: u64,
    /// The newest event's data: `{"version", "model", "step"}` as JSON text.
    data: String,
    /// The newest model, for a page loaded now.
    model: Value,
    stopped: bool,
}

impl Server {
    /// Listens on 127.0.0.1:`port` and serves `model` until the next
    /// [`Server::publish`].
    ///
    /// Errors: a message for the user; a port in use names a free one to try.
    pub fn start(port: u16, model: Value) -> Result<Server, String> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).map_err(|error| {
            match error.kind() {
                io::ErrorKind::AddrInUse => match free_port() {
                    Some(free) => format!(
                        "port {port} is in use (another program, or another `:serve`): try `:serve {free}`, which is free"
                    ),
                    None => format!("port {port} is in use: try another, e.g. `:serve 8080`"),
                },
                io::ErrorKind::PermissionDenied => format!(
                    "port {port} needs special rights (ports below 1024 do): try `:serve {DEFAULT_PORT}`"
                ),
                _ => format!("cannot listen on 127.0.0.1:{port}: {error}"),
            }
        })?;
        let port = listener.local_addr().map_or(port, |a| a.port());
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                version: 0,
                data: event_data(0, &model, None),
                model,
                stopped: false,
            }),
            changed: Condvar::new(),
            connections: AtomicUsize::new(0),
        });
        let accepting = Arc::clone(&shared);
        let accept = std::thread::Builder::new()
            .name("gradcalc-serve".into())
            .spawn(move || accept_loop(&listener, &accepting, port))
            .map_err(|error| format!("cannot start the server: {error}"))?;
        Ok(Server {
            port,
            shared,
            accept: Some(accept),
        })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address to open.
    pub fn address(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// Shows `model` in every open page, at backward step `step` (`None`:
    /// the page keeps its step, within the new pass). Never waits on a browser.
    pub fn publish(&self, model: Value, step: Option<usize>) {
        let mut state = lock(&self.shared.state);
        state.version += 1;
        state.data = event_data(state.version, &model, step);
        state.model = model;
        drop(state);
        self.shared.changed.notify_all();
    }

    /// Shows backward step `step` of the model shown now (`:step` in the REPL).
    pub fn show_step(&self, step: usize) {
        let model = lock(&self.shared.state).model.clone();
        self.publish(model, Some(step));
    }

    /// Stops listening and ends every stream.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        lock(&self.shared.state).stopped = true;
        self.shared.changed.notify_all();
        // The accept loop waits in `accept`: a connection wakes it to see the
        // flag, and it closes the listener as it ends (without the wake-up it
        // is left to end with the process rather than waited for).
        let woken = TcpStream::connect_timeout(
            &SocketAddr::from((Ipv4Addr::LOCALHOST, self.port)),
            Duration::from_secs(1),
        );
        if let (Some(accept), true) = (self.accept.take(), woken.is_ok()) {
            let _ = accept.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.accept.is_some() {
            self.shutdown();
        }
    }
}

/// The lock, even after a connection thread panicked holding it (the state
/// is a whole value at every moment).
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A port free on 127.0.0.1 now (the system's pick).
fn free_port() -> Option<u16> {
    let probe = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).ok()?;
    probe.local_addr().ok().map(|a| a.port())
}

fn event_data(version: u64, model: &Value, step: Option<usize>) -> String {
    json!({"version": version, "model": model, "step": step}).to_string()
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>, port: u16) {
    for stream in listener.incoming() {
        if lock(&shared.state).stopped {
            return;
        }
        let Ok(mut stream) = stream else { continue };
        if shared.connections.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            shared.connections.fetch_sub(1, Ordering::SeqCst);
            let _ = stream.set_write_timeout(Some(IO_LIMIT));
            let _ = respond(
                &mut stream,
                "503 Service Unavailable",
                "text/plain",
                "too many connections\n",
            );
            continue;
        }
        let connection = Arc::clone(shared);
        let spawned = std::thread::Builder::new()
            .name("gradcalc-serve-connection".into())
            .spawn(move || {
                let _ = serve_connection(stream, &connection, port);
                connection.connections.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            shared.connections.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// One request: the page, the event stream, or a refusal.
fn serve_connection(mut stream: TcpStream, shared: &Shared, port: u16) -> io::Result<()> {
    stream.set_read_timeout(Some(IO_LIMIT))?;
    stream.set_write_timeout(Some(IO_LIMIT))?;
    let Some(request) = read_request(&stream)? else {
        return respond(
            &mut stream,
            "400 Bad Request",
            "text/plain",
            "bad request\n",
        );
    };
    let hosts = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    if !request.host.as_ref().is_some_and(|h| hosts.contains(h)) {
        return respond(
            &mut stream,
            "403 Forbidden",
            "text/plain",
            "use http://127.0.0.1/\n",
        );
    }
    if request.method != "GET" {
        return respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            "this view is read-only\n",
        );
    }
    match request.path.as_str() {
        "/" | "/index.html" => {
            let model = lock(&shared.state).model.clone();
            let page = html::live_page(&model, "/events");
            respond(&mut stream, "200 OK", "text/html; charset=utf-8", &page)
        }
        "/events" => stream_events(stream, shared),
        _ => respond(
            &mut stream,
            "404 Not Found",
            "text/plain",
            "not found: the page is at /\n",
        ),
    }
}

/// A request's method, path and `Host` header.
struct Request {
    method: String,
    path: String,
    host: Option<String>,
}

/// Reads a request head (at most [`MAX_REQUEST`] bytes); `None` if it is
/// not one.
fn read_request(stream: &TcpStream) -> io::Result<Option<Request>> {
    let mut reader = BufReader::new(io::Read::take(stream, MAX_REQUEST as u64));
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut words = line.split_whitespace();
    let (Some(method), Some(path)) = (words.next(), words.next()) else {
        return Ok(None);
    };
    let (method, path) = (method.to_string(), path.to_string());
    let mut host = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("host")
        {
            host = Some(value.trim().to_ascii_lowercase());
        }
    }
    Ok(Some(Request { method, path, host }))
}

fn respond(stream: &mut TcpStream, status: &str, kind: &str, body: &str) -> io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}

/// The event stream: every new model as one `data:` line (JSON has no
/// newline), a comment when nothing changes for [`KEEP_ALIVE`]; ends when the
/// browser goes away or the server stops.
fn stream_events(mut stream: TcpStream, shared: &Shared) -> io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: keep-alive\r\n\r\nretry: 1000\n\n"
    )?;
    stream.flush()?;
    let mut sent = None;
    loop {
        let mut state = lock(&shared.state);
        while !state.stopped && sent == Some(state.version) {
            let (next, waited) = shared
                .changed
                .wait_timeout(state, KEEP_ALIVE)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state = next;
            if waited.timed_out() && sent == Some(state.version) {
                break;
            }
        }
        if state.stopped {
            return Ok(());
        }
        let fresh = (sent != Some(state.version)).then(|| (state.version, state.data.clone()));
        drop(state);
        match fresh {
            Some((version, data)) => {
                write!(stream, "data: {data}\n\n")?;
                sent = Some(version);
            }
            None => stream.write_all(b": still here\n\n")?,
        }
        stream.flush()?;
    }
}
