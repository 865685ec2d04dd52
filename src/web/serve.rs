//! `:serve [PORT]` (a REPL command, behind the `cli` feature): the page of `:html` served at http://127.0.0.1:PORT/ and
//! kept up to date with server-sent events (the HTML standard's `EventSource`:
//! one long response, a `data:` line per change), over the standard library's
//! TCP alone.
//!
//! - It listens on the loopback address only, and answers only requests whose
//!   `Host` is that address or `localhost` (a web page elsewhere cannot reach
//!   it through a name that resolves to 127.0.0.1); every answer forbids the
//!   page any network access but its own event stream, and framing by other
//!   origins ([`CONTENT_SECURITY_POLICY`]).
//! - It is read-only: it answers `GET` of `/` (the page), `/events` (the
//!   stream) and `/favicon.ico` (no icon), nothing else; nothing a browser
//!   sends is run.
//! - Bounded by what it serves, not by who connects: the page's model is held
//!   once, as text every connection shares, and a page over [`MAX_PAGE`]
//!   bytes is replaced by a message. At most [`MAX_CONNECTIONS`] connections
//!   are open at once, each on its own thread; a request head must arrive
//!   whole within [`HEAD_DEADLINE`], and when every slot is taken a new
//!   connection takes the slot of a browser that has left, else of the oldest
//!   connection still sending its head, so that slow or idle connections
//!   cannot keep a browser out. Connections hold at most the file
//!   descriptors left under the process's limit when serving started, less
//!   [`SPARE_FILES`] (a newcomer past that takes an unfinished head's slot or
//!   is refused), and running out of them pauses the accept loop, so that
//!   the REPL always has the files it needs.
//! - Nothing here can stop the REPL: the REPL thread only stores the newest
//!   model ([`Server::publish`]) and never waits on a browser. After
//!   [`Server::stop`] nothing more is answered, not even requests accepted
//!   before it.

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::net::{RecvFlags, Shutdown};
use serde_json::Value;

use crate::render::{Format, Printer, Style, html};
use crate::session::{ErrorCode, Session};

/// The port `:serve` uses when none is given.
pub const DEFAULT_PORT: u16 = 8000;
/// `:serve [PORT|stop]` typed in the REPL (`input`, the command's text):
/// starts, moves or stops the live page (`server`, `None` when not serving)
/// with the session's output now, and says so on `printer`; a word that is
/// no port, or a port in use, is reported with a fix.
///
/// Errors: only I/O errors of the printer's streams.
pub fn command<O: Write, E: Write>(
    server: &mut Option<Server>,
    session: &mut Session,
    printer: &mut Printer<O, E>,
    input: &str,
) -> io::Result<()> {
    let words: Vec<&str> = input.split_whitespace().skip(1).collect();
    let port = match words.as_slice() {
        ["stop"] => {
            return match server.take() {
                Some(running) => {
                    let address = running.address();
                    running.stop();
                    printer.line(&format!("stopped serving {address}"))
                }
                None => printer.line("not serving: `:serve` starts the live page"),
            };
        }
        [] => DEFAULT_PORT,
        [word] => match word.parse::<u16>() {
            Ok(port) if port > 0 => port,
            _ => {
                let at = input.find(word).unwrap_or(0);
                let message = format!(
                    "`{word}` is not a port: `:serve` takes a number from 1 to 65535, or `stop`"
                );
                let help = Some(format!("e.g. `:serve {}`", DEFAULT_PORT));
                let code = ErrorCode::BadArguments;
                return printer.problem(&message, code, at, help, (input, "<input>"));
            }
        },
        _ => {
            let help = Some("e.g. `:serve`, `:serve 8080`, `:serve stop`".to_string());
            return printer.problem(
                "`:serve` takes a port number or `stop`",
                ErrorCode::BadArguments,
                0,
                help,
                (input, "<input>"),
            );
        }
    };
    if let Some(running) = server.as_ref().filter(|s| s.port() == port) {
        return printer.line(&format!("already serving {}", running.address()));
    }
    let Some(model) = page_model(session, printer) else {
        // Nothing changes: a server on another port goes on serving.
        let help =
            "by Ctrl-C while the page was built: nothing is served anew; `:serve` again starts it";
        return interrupted(printer, help, input);
    };
    // A new port: the old server stops first.
    if let Some(running) = server.take() {
        running.stop();
    }
    match Server::start(port, model) {
        Ok(started) => {
            let address = started.address();
            *server = Some(started);
            printer.line(&format!(
                "serving the live page at {address} (read-only, this computer only; `:serve stop` stops it)"
            ))
        }
        Err(message) => {
            let help = Some("`:html FILE` writes the page to a file instead".to_string());
            let at = words.first().and_then(|word| input.find(word)).unwrap_or(0);
            printer.problem(&message, ErrorCode::Serve, at, help, (input, "<input>"))
        }
    }
}

/// The page's model for the session's output now, or why there is none;
/// `None` when Ctrl-C came while it was built. The flag is global and the
/// page's builders poll it (a layout keeps its best order so far, a walk
/// stops, a value's text ends early, the session answers `interrupted`):
/// a model built meanwhile may be cut short anywhere, so it is thrown away
/// whole, never served. Only the REPL's thread clears the flag, so a model
/// finished with the flag clear was built with it clear throughout.
fn page_model<O: Write, E: Write>(session: &mut Session, printer: &Printer<O, E>) -> Option<Value> {
    let style = match printer.format {
        Format::Human(style) => style,
        Format::Json => Style::default(),
    };
    let model = match session.page() {
        Ok(page) => html::model(&page, session, &style),
        // With the error's help, when it has one: what to open instead.
        Err(error) => html::message_model(&match error.help() {
            Some(help) => format!("{error}; {help}"),
            None => format!("{error}: type a statement in gradcalc"),
        }),
    };
    (!crate::interrupt::requested()).then_some(model)
}

/// Says on `printer` that Ctrl-C stopped building the page of `input`
/// (`help`: what the page shows now), and forgets the Ctrl-C, as after a
/// stopped statement. Errors: only I/O errors of the printer's streams.
fn interrupted<O: Write, E: Write>(
    printer: &mut Printer<O, E>,
    help: &str,
    input: &str,
) -> io::Result<()> {
    crate::interrupt::clear();
    let place = (input, "<input>");
    printer.problem(
        "interrupted",
        ErrorCode::Interrupted,
        0,
        Some(help.to_string()),
        place,
    )
}

/// After a typed `input` that did not fail: the live page (`server`, if
/// any) shows the output as it is now, at the
/// finished backward pass after `:grad`, `:backward`, `:trace` and `:check`
/// (the gradients were asked for), before it otherwise. Ctrl-C while the
/// page is built leaves the live page as it was (the statement stays run)
/// and says so on `printer` ("interrupted").
pub fn publish<O: Write, E: Write>(
    server: Option<&Server>,
    session: &mut Session,
    printer: &mut Printer<O, E>,
    input: &str,
) {
    let Some(server) = server else { return };
    let Some(model) = page_model(session, printer) else {
        let help = "by Ctrl-C while the live page was built: the statement ran and is kept, the page still shows the output before it (the next statement updates it)";
        // Only the printer's streams can fail here, as the REPL's next write would.
        let _ = interrupted(printer, help, input);
        return;
    };
    let asked = super::shows_finished_pass(input);
    let step = match model["steps"].as_array() {
        Some(steps) if asked => steps.len(),
        _ => 0,
    };
    server.publish(model, Some(step));
}

/// Connections open at once (pages and event streams). When all are taken,
/// a new connection takes the slot of one whose browser has left, else of the
/// oldest one still sending its request head; if there is none, it is
/// refused (`503`).
pub const MAX_CONNECTIONS: usize = 32;
/// How long a connection may take to send its whole request head (a browser
/// sends it at once); one that takes longer is answered `408` and closed.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(5);
/// The largest page served, in bytes (a page of 500 nodes, the most `:html`
/// draws, holds its picture both ways, left to right and top to bottom, and
/// stays well under this unless its names are long); a larger one is
/// replaced by a message saying so.
pub const MAX_PAGE: usize = 8 * 1024 * 1024;
/// File descriptors the server leaves free for the REPL (its terminal,
/// history and the files it writes): connections hold at most those left
/// under the process's limit when serving started, less these.
pub const SPARE_FILES: u64 = 16;
/// What every answer allows the page: its own inline script and style, and
/// its own event stream; no other network access, no framing by other
/// origins, no forms or base address.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";
/// How long one whole answer (the page, or one event) may take to be written.
const WRITE_DEADLINE: Duration = Duration::from_secs(10);
/// An event stream with nothing new sends a comment this often.
const KEEP_ALIVE: Duration = Duration::from_secs(10);
/// How often an event stream with nothing to send looks whether its browser
/// has left.
const PEER_CHECK: Duration = Duration::from_secs(1);
/// The longest request head read.
const MAX_REQUEST: usize = 8 * 1024;
/// The longest pause of the accept loop after the process ran out of file
/// descriptors (the first is 10 ms, each next one twice as long).
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// A running server. Dropping it stops it.
pub struct Server {
    port: u16,
    shared: Arc<Shared>,
    listener: Option<Arc<TcpListener>>,
    accept: Option<JoinHandle<()>>,
}

/// What the REPL thread and the connections share.
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    slots: Mutex<Slots>,
    /// The page's text before and after its model (the style sheet and the
    /// script): made once.
    around: (String, String),
    /// How many connections may hold a file descriptor at once, ended ones
    /// included, so that [`SPARE_FILES`] stay free under the process's limit.
    file_budget: usize,
    census: Arc<Census>,
    /// Refusals being answered now (see [`refuse`]).
    refusing: std::sync::atomic::AtomicUsize,
}

struct State {
    /// Counts the changes published; a stream sends each version once.
    version: u64,
    /// The newest model as JSON text safe in a `<script>` element: the one
    /// copy every page and every event stream writes from.
    model: Arc<str>,
    /// The backward step to show (`None`: the page keeps its step).
    step: Option<usize>,
    /// The version at which `model` was published: a stream that has sent
    /// it already sends a later step alone ([`Server::show_step`]).
    model_version: u64,
    stopped: bool,
}

/// The open connections, oldest first.
struct Slots {
    open: Vec<Arc<Connection>>,
    stopped: bool,
}

/// One accepted connection, shared by its thread and [`Slots`] (which can end
/// it).
struct Connection {
    stream: TcpStream,
    /// Still reading its request head: its slot may be given to a newcomer.
    sending_head: AtomicBool,
    /// Ended by the server (its slot given away, or the server stopped).
    ended: AtomicBool,
    census: Arc<Census>,
}

/// How many connections hold a file descriptor: those in [`Slots`], and
/// ended ones until their thread lets go, descriptors the server is about
/// to have back.
struct Census {
    live: Mutex<usize>,
    dropped: Condvar,
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
        let around = html::live_page_around("/events");
        let model = model_text(&around, &model);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                version: 0,
                model,
                step: None,
                model_version: 0,
                stopped: false,
            }),
            changed: Condvar::new(),
            slots: Mutex::new(Slots {
                open: Vec::new(),
                stopped: false,
            }),
            around,
            file_budget: file_budget(&listener),
            census: Arc::new(Census {
                live: Mutex::new(0),
                dropped: Condvar::new(),
            }),
            refusing: std::sync::atomic::AtomicUsize::new(0),
        });
        let listener = Arc::new(listener);
        let (accepting, listening) = (Arc::clone(&shared), Arc::clone(&listener));
        let accept = std::thread::Builder::new()
            .name("gradcalc-serve".into())
            .spawn(move || accept_loop(&listening, &accepting, port))
            .map_err(|error| format!("cannot start the server: {error}"))?;
        Ok(Server {
            port,
            shared,
            listener: Some(listener),
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
    /// the page keeps its step, within the new pass). Never waits on a
    /// browser. A model whose page would be over [`MAX_PAGE`] bytes is shown
    /// as a message saying so.
    pub fn publish(&self, model: Value, step: Option<usize>) {
        let model = model_text(&self.shared.around, &model);
        let mut state = lock(&self.shared.state);
        state.version += 1;
        state.model = model;
        state.model_version = state.version;
        state.step = step;
        drop(state);
        self.shared.changed.notify_all();
    }

    /// Shows backward step `step` of the model shown now (`:step` in the REPL).
    pub fn show_step(&self, step: usize) {
        let mut state = lock(&self.shared.state);
        state.version += 1;
        state.step = Some(step);
        drop(state);
        self.shared.changed.notify_all();
    }

    /// Stops listening and closes every connection, answered or not.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let mut slots = lock(&self.shared.slots);
        slots.stopped = true;
        for connection in slots.open.drain(..) {
            connection.end();
        }
        drop(slots);
        lock(&self.shared.state).stopped = true;
        self.shared.changed.notify_all();
        // The accept loop waits in `accept`: shutting the listening socket
        // wakes it on Linux, a connection elsewhere; it sees the flag and
        // ends, closing the listener (without a wake-up it is left to end
        // with the process rather than waited for).
        let listener = self.listener.take();
        let woken = listener
            .as_deref()
            .is_some_and(|l| rustix::net::shutdown(l, Shutdown::Both).is_ok())
            || TcpStream::connect_timeout(
                &SocketAddr::from((Ipv4Addr::LOCALHOST, self.port)),
                Duration::from_secs(1),
            )
            .is_ok();
        drop(listener);
        if let (Some(accept), true) = (self.accept.take(), woken) {
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

impl Slots {
    /// Frees a slot if it can: those of connections whose browser has left,
    /// else that of the oldest connection still sending its request head.
    /// Whether any was freed.
    fn make_room(&mut self) -> bool {
        let before = self.open.len();
        self.open.retain(|connection| {
            let gone = peer_gone(&connection.stream);
            if gone {
                connection.end();
            }
            !gone
        });
        if self.open.len() < before {
            return true;
        }
        let waiting = self
            .open
            .iter()
            .position(|c| c.sending_head.load(Ordering::SeqCst));
        waiting.is_some_and(|at| {
            self.open.remove(at).end();
            true
        })
    }

    /// Forgets `connection` (its thread has ended).
    fn release(&mut self, connection: &Arc<Connection>) {
        self.open.retain(|c| !Arc::ptr_eq(c, connection));
    }
}

impl Connection {
    /// `stream`, counted in `census` until dropped.
    fn new(stream: TcpStream, census: &Arc<Census>) -> Connection {
        *lock(&census.live) += 1;
        Connection {
            stream,
            sending_head: AtomicBool::new(true),
            ended: AtomicBool::new(false),
            census: Arc::clone(census),
        }
    }

    /// Closes the connection both ways: its thread's next read or write
    /// fails, and nothing more reaches the browser.
    fn end(&self) {
        self.ended.store(true, Ordering::SeqCst);
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        *lock(&self.census.live) -= 1;
        self.census.dropped.notify_all();
    }
}

impl Census {
    /// The connections that hold a descriptor now.
    fn count(&self) -> usize {
        *lock(&self.live)
    }

    /// Waits, at most `limit`, for a connection to let its descriptor go;
    /// whether one did.
    fn wait_for_drop(&self, limit: Duration) -> bool {
        let live = lock(&self.live);
        let before = *live;
        let waited = self
            .dropped
            .wait_timeout_while(live, limit, |live| *live >= before)
            .map_or(true, |(_, waited)| waited.timed_out());
        !waited
    }
}

/// The lock, even after a connection thread panicked holding it (what it
/// guards is a whole value at every moment).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A port free on 127.0.0.1 now (the system's pick).
fn free_port() -> Option<u16> {
    let probe = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).ok()?;
    probe.local_addr().ok().map(|a| a.port())
}

/// `model` as the text pages and events carry (JSON safe in a `<script>`
/// element); a page over [`MAX_PAGE`] bytes gives way to a message, as a
/// graph too large to draw does (found without writing more than that).
fn model_text(around: &(String, String), model: &Value) -> Arc<str> {
    let room = MAX_PAGE.saturating_sub(around.0.len() + around.1.len());
    if let Some(text) = html::script_json_within(model, room) {
        return text.into();
    }
    let message = format!(
        "the page of this graph would hold more than {} MB: `:serve` serves pages of at most that (long names make a page large): `:graph` and `:topo` summarise a graph of any size",
        MAX_PAGE / (1024 * 1024)
    );
    html::script_json(&html::message_model(&message)).into()
}

/// Whether the browser at the other end has closed the connection (looked at
/// without waiting and without taking what it sent).
fn peer_gone(stream: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    match rustix::net::recv(stream, &mut byte[..], RecvFlags::PEEK | RecvFlags::DONTWAIT) {
        Ok((0, _)) => true,
        Ok(_) => false,
        Err(error) => !matches!(error, rustix::io::Errno::AGAIN | rustix::io::Errno::INTR),
    }
}

/// Whether the system said the process (or the system) has no file
/// descriptor left.
fn out_of_files(error: &io::Error) -> bool {
    let errno = error
        .raw_os_error()
        .map(rustix::io::Errno::from_raw_os_error);
    matches!(
        errno,
        Some(rustix::io::Errno::MFILE | rustix::io::Errno::NFILE)
    )
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>, port: u16) {
    // A descriptor held in reserve: when none is left, it is given up to take
    // the waiting connection and refuse it, rather than leave it queued.
    let mut reserve = File::open("/dev/null").ok();
    let mut pause = Duration::ZERO;
    loop {
        // Ended connections whose threads have yet to close them hold
        // descriptors: at the budget, a newcomer waits for them to go.
        while shared.census.count() >= shared.file_budget
            && lingering(shared) > 0
            && shared.census.wait_for_drop(MAX_BACKOFF)
        {}
        let accepted = listener.accept();
        if lock(&shared.slots).stopped {
            return;
        }
        match accepted {
            Ok((stream, _)) => {
                pause = Duration::ZERO;
                admit(stream, shared, port);
            }
            Err(error) => {
                // Out of descriptors while ended connections still hold some:
                // once one is back, the waiting connection is taken after all.
                if out_of_files(&error)
                    && lingering(shared) > 0
                    && shared.census.wait_for_drop(MAX_BACKOFF)
                {
                    continue;
                }
                if out_of_files(&error) {
                    drop(reserve.take());
                    if let Ok((stream, _)) = listener.accept() {
                        refuse_now(&stream, "gradcalc has no file descriptor left\n");
                    }
                    reserve = File::open("/dev/null").ok();
                }
                // Never a busy loop: an error that lasts (no descriptor left)
                // waits longer each time, up to MAX_BACKOFF.
                pause = (pause * 2).clamp(Duration::from_millis(10), MAX_BACKOFF);
                let state = lock(&shared.state);
                let _ = shared
                    .changed
                    .wait_timeout_while(state, pause, |state| !state.stopped);
            }
        }
    }
}

/// How many connections may hold a descriptor at once: the process's limit
/// less those open now (while starting to serve) and [`SPARE_FILES`]; no
/// bound if the process has none.
fn file_budget(listener: &TcpListener) -> usize {
    let Some(limit) = rustix::process::getrlimit(rustix::process::Resource::Nofile).current else {
        return usize::MAX;
    };
    // Linux lists the open descriptors; elsewhere every one below the
    // listener's (numbered from the lowest free one) counts as open.
    let open = std::fs::read_dir("/proc/self/fd").map_or_else(
        |_| listener.as_raw_fd() as u64 + 1,
        |entries| entries.count() as u64,
    );
    let budget = limit.saturating_sub(open + SPARE_FILES);
    usize::try_from(budget).unwrap_or(usize::MAX)
}

/// Connections ended but not yet closed by their threads.
fn lingering(shared: &Shared) -> usize {
    let open = lock(&shared.slots).open.len();
    shared.census.count().saturating_sub(open)
}

/// Gives `stream` a slot and a thread, or refuses it (`503`).
fn admit(stream: TcpStream, shared: &Arc<Shared>, port: u16) {
    let connection = Arc::new(Connection::new(stream, &shared.census));
    let mut slots = lock(&shared.slots);
    if slots.stopped {
        return;
    }
    let few_files = shared.census.count() > shared.file_budget;
    let full = few_files || slots.open.len() >= MAX_CONNECTIONS;
    if full && !slots.make_room() {
        drop(slots);
        let why = match few_files {
            true => "gradcalc has too few file descriptors left for another connection\n",
            false => "too many connections\n",
        };
        refuse(connection, shared, why);
        return;
    }
    slots.open.push(Arc::clone(&connection));
    drop(slots);
    // Event streams of ended connections wake to end.
    shared.changed.notify_all();
    let (serving, shared_by) = (Arc::clone(&connection), Arc::clone(shared));
    let spawned = std::thread::Builder::new()
        .name("gradcalc-serve-connection".into())
        .spawn(move || {
            let _ = serve_connection(&serving, &shared_by, port);
            lock(&shared_by.slots).release(&serving);
        });
    if spawned.is_err() {
        lock(&shared.slots).release(&connection);
    }
}

/// Refusals answered at once, each on a short-lived thread of its own that
/// reads the request head before it answers; past these a refusal is
/// written without reading (see [`refuse_now`]).
const MAX_REFUSING: usize = 8;
/// How long a refused connection may take to send its request head.
const REFUSE_DEADLINE: Duration = Duration::from_secs(1);

/// Lets a refusal's place go (when its thread ends, or could not start).
struct Refusing(Arc<Shared>);

impl Drop for Refusing {
    fn drop(&mut self) {
        self.0.refusing.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Answers `503` with `why` to a connection given no slot, without making
/// the accept loop wait: on a thread of its own (at most [`MAX_REFUSING`] at
/// once), which reads the request head first (within [`REFUSE_DEADLINE`]),
/// so that the answer arrives as an answer, not as a TCP reset for a request
/// closed unread.
fn refuse(connection: Arc<Connection>, shared: &Arc<Shared>, why: &'static str) {
    if shared.refusing.fetch_add(1, Ordering::SeqCst) >= MAX_REFUSING {
        shared.refusing.fetch_sub(1, Ordering::SeqCst);
        refuse_now(&connection.stream, why);
        return;
    }
    let place = Refusing(Arc::clone(shared));
    let spawned = std::thread::Builder::new()
        .name("gradcalc-serve-refuse".into())
        .spawn(move || {
            let _place = place;
            let stream = &connection.stream;
            // A head that does not come in time is answered all the same.
            if !matches!(
                read_head(stream, Instant::now() + REFUSE_DEADLINE),
                Head::Closed
            ) {
                let _ = respond(stream, "503 Service Unavailable", why);
                // Ours written, the browser's read: a close now is no reset.
                let _ = stream.shutdown(std::net::Shutdown::Write);
            }
        });
    // (A thread that could not start drops the connection and its place.)
    drop(spawned);
}

/// Answers `503` to a connection given no slot, without waiting on it.
fn refuse_now(stream: &TcpStream, why: &str) {
    let answer = format!(
        "{}{why}",
        response_head(
            "503 Service Unavailable",
            Some(("text/plain; charset=utf-8", why.len()))
        )
    );
    if stream.set_nonblocking(true).is_ok() {
        let _ = (&*stream).write(answer.as_bytes());
    }
}

/// One request: the page, the event stream, or a refusal.
fn serve_connection(connection: &Connection, shared: &Shared, port: u16) -> io::Result<()> {
    let stream = &connection.stream;
    let head = read_head(stream, Instant::now() + HEAD_DEADLINE);
    {
        // Whole (or never to be): the slot is no longer given away. Nothing
        // is answered once the server has stopped or ended the connection.
        let slots = lock(&shared.slots);
        if slots.stopped || connection.ended.load(Ordering::SeqCst) {
            return Ok(());
        }
        connection.sending_head.store(false, Ordering::SeqCst);
    }
    let request = match head {
        Head::Request(request) => request,
        Head::Closed => return Ok(()),
        Head::Late => {
            let why = format!(
                "the request did not arrive within {} s\n",
                HEAD_DEADLINE.as_secs()
            );
            return respond(stream, "408 Request Timeout", &why);
        }
        Head::TooLong => {
            return respond(
                stream,
                "431 Request Header Fields Too Large",
                "the request head is too long\n",
            );
        }
        Head::Bad => return respond(stream, "400 Bad Request", "bad request\n"),
    };
    if !loopback_host(request.host.as_deref(), port) {
        let why = format!(
            "this live page answers only at its own address: open http://127.0.0.1:{port}/ (or http://localhost:{port}/)\n"
        );
        return respond(stream, "403 Forbidden", &why);
    }
    if request.method != "GET" {
        return respond(stream, "405 Method Not Allowed", "this view is read-only\n");
    }
    match request.path.as_str() {
        "/" | "/index.html" => serve_page(stream, shared),
        "/events" => stream_events(connection, shared),
        // No icon: an answer all the same, so that no browser logs an error.
        "/favicon.ico" => write_within(
            stream,
            &[response_head("204 No Content", None).as_bytes()],
            WRITE_DEADLINE,
        ),
        _ => respond(stream, "404 Not Found", "not found: the page is at /\n"),
    }
}

/// Whether `host` (a request's `Host`, lower case) names this server on the
/// loopback address: 127.0.0.1 or localhost, with this port or none (a
/// browser leaves out a port of 80).
fn loopback_host(host: Option<&str>, port: u16) -> bool {
    let Some(host) = host else { return false };
    let (name, given) = match host.rsplit_once(':') {
        Some((name, given)) => (name, Some(given)),
        None => (host, None),
    };
    matches!(name, "127.0.0.1" | "localhost")
        && given.is_none_or(|given| given.parse::<u16>() == Ok(port))
}

/// A request's method, path and `Host` header.
struct Request {
    method: String,
    path: String,
    host: Option<String>,
}

/// How reading a request head ended.
enum Head {
    Request(Request),
    /// The connection closed (or failed) before the head was whole.
    Closed,
    /// The head was not whole by the deadline.
    Late,
    /// Longer than [`MAX_REQUEST`] bytes.
    TooLong,
    /// Not a request line.
    Bad,
}

/// Reads a request head (at most [`MAX_REQUEST`] bytes), whole by `deadline`.
fn read_head(mut stream: &TcpStream, deadline: Instant) -> Head {
    let mut head = Vec::new();
    let mut chunk = [0u8; 1024];
    let end = loop {
        if let Some(end) = head_end(&head) {
            break end;
        }
        if head.len() >= MAX_REQUEST {
            return Head::TooLong;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Head::Late;
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Head::Closed,
            Ok(read) => head.extend_from_slice(&chunk[..read]),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error)
                if matches!(
                    error.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Head::Late;
            }
            Err(_) => return Head::Closed,
        }
    };
    parse_head(&String::from_utf8_lossy(&head[..end]))
}

/// Where the head ends (its blank line), if it has.
fn head_end(bytes: &[u8]) -> Option<usize> {
    let crlf = bytes.windows(4).position(|w| w == b"\r\n\r\n");
    let lf = bytes.windows(2).position(|w| w == b"\n\n");
    crlf.into_iter().chain(lf).min()
}

fn parse_head(head: &str) -> Head {
    let mut lines = head.lines();
    let mut words = lines.next().unwrap_or("").split_whitespace();
    let (Some(method), Some(path)) = (words.next(), words.next()) else {
        return Head::Bad;
    };
    let host = lines
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("host"))
        .map(|(_, value)| value.trim().to_ascii_lowercase());
    Head::Request(Request {
        method: method.to_string(),
        path: path.to_string(),
        host,
    })
}

/// The status line and headers of an answer, with its content's type and
/// length (`None`: no content).
fn response_head(status: &str, content: Option<(&str, usize)>) -> String {
    let content = content.map_or(String::new(), |(kind, length)| {
        format!("Content-Type: {kind}\r\nContent-Length: {length}\r\n")
    });
    format!(
        "HTTP/1.1 {status}\r\n{content}Content-Security-Policy: {CONTENT_SECURITY_POLICY}\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
    )
}

/// A short text answer.
fn respond(stream: &TcpStream, status: &str, body: &str) -> io::Result<()> {
    let head = response_head(status, Some(("text/plain; charset=utf-8", body.len())));
    write_within(stream, &[head.as_bytes(), body.as_bytes()], WRITE_DEADLINE)
}

/// The page: the shared model between the text around it.
fn serve_page(stream: &TcpStream, shared: &Shared) -> io::Result<()> {
    let model = Arc::clone(&lock(&shared.state).model);
    let (before, after) = &shared.around;
    let length = before.len() + model.len() + after.len();
    let head = response_head("200 OK", Some(("text/html; charset=utf-8", length)));
    let parts = [
        head.as_bytes(),
        before.as_bytes(),
        model.as_bytes(),
        after.as_bytes(),
    ];
    write_within(stream, &parts, WRITE_DEADLINE)
}

/// Writes `parts` one after the other, all within `limit` from now: a
/// browser that reads too slowly is left.
fn write_within(mut stream: &TcpStream, parts: &[&[u8]], limit: Duration) -> io::Result<()> {
    let deadline = Instant::now() + limit;
    for part in parts {
        let mut rest = *part;
        while !rest.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::ErrorKind::TimedOut.into());
            }
            stream.set_write_timeout(Some(left))?;
            match stream.write(rest) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(written) => rest = &rest[written..],
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
    }
    Ok(())
}

/// What an event stream does next.
enum Next {
    /// Send this version: the model (`None` when the stream has sent it
    /// already: only the step moved) and the step.
    Event(u64, Option<Arc<str>>, Option<usize>),
    /// Nothing new for [`PEER_CHECK`].
    Quiet,
    /// The server stopped or ended the connection.
    End,
}

/// Waits for a version other than `sent`, at most [`PEER_CHECK`].
fn next_event(connection: &Connection, shared: &Shared, sent: Option<u64>) -> Next {
    let mut state = lock(&shared.state);
    loop {
        if state.stopped || connection.ended.load(Ordering::SeqCst) {
            return Next::End;
        }
        if sent != Some(state.version) {
            let model = match sent {
                Some(sent) if sent >= state.model_version => None,
                _ => Some(Arc::clone(&state.model)),
            };
            return Next::Event(state.version, model, state.step);
        }
        let (next, waited) = shared
            .changed
            .wait_timeout(state, PEER_CHECK)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state = next;
        if waited.timed_out() && sent == Some(state.version) {
            return Next::Quiet;
        }
    }
}

/// The event stream: every new version as one `data:` line (JSON has no
/// newline) `{"version", "model", "step"}`, without `model` when only the
/// step moved (`:step`: a few bytes, not the page), a comment when nothing changes
/// for [`KEEP_ALIVE`]; ends when the browser leaves (seen within
/// [`PEER_CHECK`]) or the server stops.
fn stream_events(connection: &Connection, shared: &Shared) -> io::Result<()> {
    let stream = &connection.stream;
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: keep-alive\r\n\r\nretry: 1000\n\n";
    write_within(stream, &[head.as_bytes()], WRITE_DEADLINE)?;
    let mut sent = None;
    let mut written = Instant::now();
    loop {
        match next_event(connection, shared, sent) {
            Next::End => return Ok(()),
            Next::Event(version, model, step) => {
                let step = step.map_or("null".to_string(), |step| step.to_string());
                let after = format!("\"step\":{step}}}\n\n");
                match model {
                    Some(model) => {
                        let before = format!("data: {{\"version\":{version},\"model\":");
                        let parts = [before.as_bytes(), model.as_bytes(), b",", after.as_bytes()];
                        write_within(stream, &parts, WRITE_DEADLINE)?;
                    }
                    None => {
                        let line = format!("data: {{\"version\":{version},{after}");
                        write_within(stream, &[line.as_bytes()], WRITE_DEADLINE)?;
                    }
                }
                sent = Some(version);
                written = Instant::now();
            }
            Next::Quiet if peer_gone(stream) => return Ok(()),
            Next::Quiet if written.elapsed() >= KEEP_ALIVE => {
                write_within(stream, &[b": still here\n\n"], WRITE_DEADLINE)?;
                written = Instant::now();
            }
            Next::Quiet => {}
        }
    }
}
