// The playground: gradcalc's library compiled to WebAssembly (web/wasm, a
// plain C-style API: see its src/lib.rs), run in a Web Worker (worker.js) so
// that the page never freezes; a multi-line input with history; the output as
// the terminal shows it (typed pieces with classes for its colours); and the graph view of page.js beside it, updated
// after every input.
//
// Nothing is lost: each tab works in a session of its own (its id in the
// tab's session storage, so a reload brings back this tab's work, and
// another tab or a shared link never overwrites it), and the last
// MAX_SESSIONS sessions are kept in the browser's local storage, as their
// scripts (what `:save` writes), after every input; "Sessions" lists them to
// reopen. A new tab goes on from a copy of the most recent one; a shared link
// opens in a session of its own, and asks first when this tab holds work.
// The script keeps a finished `:descend` or `:repeat` of updates as the
// values of the leaves it moved (web/wasm), so a replay is quick. Stop (or
// Ctrl-C in the input with nothing selected) ends the worker and starts
// another, which replays that script: the session is as it was before the
// stopped statement, as in the terminal. (An interrupt flag in a
// SharedArrayBuffer would keep the worker, but needs cross-origin isolation
// headers that a static host may not send; a replay works wherever the page
// is served.) A replay says "rebuilding: statement k of N", and Stop ends it
// there, keeping what was rebuilt. A replay that crashes the engine is not
// tried again: the session starts empty, and the script is kept to download.
"use strict";
(function () {
  var OLD_SESSION_KEY = "gradcalc-session"; // one for the site, before sessions
  var INDEX_KEY = "gradcalc-sessions"; // [{id, title, when, count}], newest first
  var SCRIPT_KEY = "gradcalc-session:"; // + id: a session's script
  var TAB_KEY = "gradcalc-tab"; // in session storage: this tab's session id
  var MAX_SESSIONS = 10;
  var HISTORY_KEY = "gradcalc-history";
  var MAX_HISTORY = 500;
  // The output pane keeps the last this many characters; older lines are
  // dropped (a note says how many), so that a long session stays quick.
  var MAX_SCREEN = 200000;

  var screen = document.getElementById("screen");
  var input = document.getElementById("input");
  var stopButton = document.getElementById("stop");
  var picker = document.getElementById("file");
  var view = GradcalcView.create(document.getElementById("view"), { keysOnGraph: true });
  window.gradcalcView = view;

  // The stored history, if it is a list of strings (an older or damaged
  // value of another type is dropped).
  var history = stored(HISTORY_KEY, []);
  history = Array.isArray(history) ? history.filter(function (item) { return typeof item === "string"; }) : [];
  var back = 0; // how far up the history ArrowUp has gone
  var draft = ""; // what was typed before ArrowUp
  var module = null; // the compiled gradcalc.wasm, shared by every worker
  var worker = null;
  var ready = false;
  var queue = []; // inputs waiting for the worker: {run, echo} or {restore}
  var running = null; // the input the worker runs now
  var script = ""; // the session's script after the last finished input
  var nextId = 0;
  // The commands the page carries out itself, by name, as the command table
  // lists them (the worker's `gradcalc_commands`): `load` opens a file
  // picker.
  var commands = { load: [], quiz: [] };
  var shownPage = null; // the model text the view shows
  var trimmed = 0; // lines dropped from the top of the output pane
  var screenSize = screen.textContent.length;
  var sessionId = null; // this tab's session (its script under SCRIPT_KEY + id)
  var sessionTitle = "";
  var unchanged = null; // a copy's script, stored only once it changes
  var storageFull = false; // said once

  // What web/assignment.js adds to the page (assignments and transcripts):
  // `ready(module)` once gradcalc is compiled, `session(id)` whenever this
  // tab's session changes, `ran(text)` after an input of it finished,
  // `link(text)` for an `#assignment=` link, `file(text, name)` for a picked
  // file (true: it was an assignment, opened as one).
  var hooks = {};

  function stored(key, fallback) {
    try {
      var text = window.localStorage.getItem(key);
      return text === null ? fallback : JSON.parse(text);
    } catch (e) {
      return fallback;
    }
  }

  function store(key, value) {
    try {
      window.localStorage.setItem(key, JSON.stringify(value));
      return true;
    } catch (e) {
      return false; // no storage, or full: kept for this visit only
    }
  }

  // Sessions: the index of the kept ones (newest first), validated.
  function sessions() {
    var index = stored(INDEX_KEY, []);
    return Array.isArray(index) ? index.filter(function (entry) {
      return entry && typeof entry.id === "string";
    }) : [];
  }

  function scriptOf(id) {
    var text = stored(SCRIPT_KEY + id, "");
    return typeof text === "string" ? text : "";
  }

  function newId() {
    return Date.now().toString(36) + Math.random().toString(36).slice(2, 8);
  }

  // This tab's session is `id` (a reload brings it back).
  function useSession(id, title) {
    sessionId = id;
    sessionTitle = title || "";
    try { window.sessionStorage.setItem(TAB_KEY, id); } catch (e) { /* kept for this visit */ }
    if (hooks.session) hooks.session(id);
  }

  // The statements of a script, without its comment lines.
  function statementLines(text) {
    return text.split("\n").filter(function (line) { return line && line[0] !== "#"; });
  }

  // Keeps this tab's session (its script, and its place first in the index),
  // dropping the oldest past MAX_SESSIONS, or more while the storage is full.
  function saveSession() {
    var index = sessions();
    var known = index.some(function (entry) { return entry.id === sessionId; });
    if (!known && (script === unchanged || !statementLines(script).length)) return;
    unchanged = null;
    var lines = statementLines(script);
    var entry = { id: sessionId, title: sessionTitle || lines[0] || "(empty)", when: Date.now(), count: lines.length };
    index = [entry].concat(index.filter(function (e) { return e.id !== sessionId; }));
    while (index.length > MAX_SESSIONS) {
      try { window.localStorage.removeItem(SCRIPT_KEY + index.pop().id); } catch (e) { /* none */ }
    }
    while (!store(SCRIPT_KEY + sessionId, script)) {
      if (index.length <= 1) {
        if (!storageFull) {
          storageFull = true;
          append("(the browser's storage is full or off: this session is not kept after the tab closes; `.calc` downloads it)\n");
        }
        return;
      }
      try { window.localStorage.removeItem(SCRIPT_KEY + index.pop().id); } catch (e) { /* none */ }
    }
    store(INDEX_KEY, index);
  }

  // A question under the output, with a button for each answer ({label,
  // act}); one at a time. Its element has the class gc-ask.
  function ask(text, choices) {
    var old = document.querySelector(".gc-ask");
    if (old) old.parentNode.removeChild(old);
    var box = document.createElement("div");
    box.className = "gc-ask";
    box.setAttribute("role", "alertdialog");
    box.setAttribute("aria-label", text);
    var words = document.createElement("p");
    words.textContent = text;
    box.appendChild(words);
    choices.forEach(function (choice) {
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = choice.label;
      button.addEventListener("click", function () {
        if (box.parentNode) box.parentNode.removeChild(box);
        input.focus();
        choice.act();
      });
      box.appendChild(button);
    });
    var prompt = document.getElementById("prompt");
    prompt.parentNode.insertBefore(box, prompt);
    box.querySelector("button").focus();
  }

  // "rebuilding: statement k of N" while a replay runs; null hides it.
  function progress(text) {
    var line = document.querySelector(".gc-progress");
    if (text === null) {
      if (line) line.parentNode.removeChild(line);
      return;
    }
    if (!line) {
      line = document.createElement("div");
      line.className = "gc-progress";
      line.setAttribute("role", "status");
      var prompt = document.getElementById("prompt");
      prompt.parentNode.insertBefore(line, prompt);
    }
    line.textContent = text;
  }

  // Output: typed pieces from gradcalc ({text, class}: the terminal's look
  // as classes, gc-bold, gc-red, …; a plot's piece also has its `svg`
  // picture, drawn after its titles), or a note of the page's own (a string),
  // each piece a span. The pane is blocks (gc-out) of about BLOCK
  // characters each, whatever the outputs' lengths: a long output is cut
  // into blocks after a line's end, and short outputs share the last block
  // while it has room. The browser then lays out and paints only the last
  // blocks, and walks a few hundred blocks, not one per output, so that
  // Enter answers as fast in a long pane as in a fresh one. Past MAX_SCREEN
  // characters in one output, its start is dropped.
  var BLOCK = 2000;
  var lastBlock = null; // the pane's last block, while more fits in it
  var inBlock = 0; // the characters in it
  function append(output) {
    var pieces = typeof output === "string" ? [{ text: output }] : output;
    var size = pieces.reduce(function (n, piece) { return n + piece.text.length; }, 0);
    var cutHere = size > MAX_SCREEN;
    var blocks = document.createDocumentFragment();
    // An output starts a line: it goes on in the last block only if that
    // one ends with a line's end.
    var block = lastBlock && lastBlock.parentNode === screen && screen.lastChild === lastBlock &&
      /\n$/.test(lastBlock.lastChild ? lastBlock.lastChild.textContent : "") ? lastBlock : null;
    var add = function (node, length) {
      if (!block) {
        block = document.createElement("div");
        block.className = "gc-out";
        blocks.appendChild(block);
        inBlock = 0;
      }
      block.appendChild(node);
      inBlock += length;
      screenSize += length;
    };
    pieces.forEach(function (piece) {
      var text = piece.text;
      if (cutHere && size > MAX_SCREEN) {
        var over = size - MAX_SCREEN;
        var cut = over >= text.length ? text.length : text.indexOf("\n", over) + 1 || text.length;
        trimmed += countLines(text.slice(0, cut));
        size -= cut;
        text = text.slice(cut);
      }
      if (!text) return;
      var titles = text;
      while (text) {
        // Up to the first line's end past the block's room; the rest, if
        // any, in the next block (a block ends only where a line does).
        var end = text.length;
        if (inBlock + text.length > BLOCK) {
          var line = text.indexOf("\n", Math.max(0, BLOCK - inBlock - 1));
          if (line >= 0) end = line + 1;
        }
        var span = document.createElement("span");
        if (piece["class"]) span.className = piece["class"];
        span.textContent = text.slice(0, end);
        add(span, end);
        if (inBlock >= BLOCK && text.charAt(end - 1) === "\n") block = null;
        text = text.slice(end);
      }
      if (piece.svg) {
        // A plot: the picture after its titles, scaled to the pane's width.
        var picture = document.createElement("span");
        picture.className = "gc-plot";
        picture.setAttribute("role", "img");
        picture.setAttribute("aria-label", "plot: " + titles.trim().replace(/\n/g, "; "));
        picture.innerHTML = piece.svg;
        add(picture, picture.textContent.length); // as `trim` counts it
      }
    });
    if (blocks.firstChild) screen.appendChild(blocks);
    lastBlock = block;
    trim(cutHere);
    scrollDown();
  }

  // The pane scrolled to its end before the next frame, once however many
  // outputs came: setting it at once would lay the pane out at each output
  // (reading its height), besides the frame's own layout.
  var scrolling = false;
  function scrollDown() {
    if (scrolling) return;
    scrolling = true;
    requestAnimationFrame(function () {
      scrolling = false;
      screen.scrollTop = screen.scrollHeight;
    });
  }

  function countLines(text) {
    var n = 0;
    for (var i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
    return n;
  }

  // Drops the oldest output past MAX_SCREEN characters, saying how much
  // (also when `cut`: the last output was cut already).
  function trim(cut) {
    if (screenSize <= MAX_SCREEN && !cut) return;
    var note = screen.querySelector(".gc-trimmed");
    if (note) { screenSize -= note.textContent.length; screen.removeChild(note); }
    while (screenSize > MAX_SCREEN * 0.75 && screen.firstChild) {
      // A piece at a time, from the oldest output's block.
      var first = screen.firstChild;
      var part = first.classList && first.classList.contains("gc-out") && first.childNodes.length > 1
        ? first.firstChild : first;
      screenSize -= part.textContent.length;
      trimmed += countLines(part.textContent);
      part.parentNode.removeChild(part);
    }
    note = document.createElement("span");
    note.className = "gc-trimmed";
    note.textContent = "(" + trimmed + " earlier lines are not shown: the pane keeps the last " +
      MAX_SCREEN / 1000 + " 000 characters)\n";
    screenSize += note.textContent.length;
    screen.insertBefore(note, screen.firstChild);
  }

  // The view after an input: the finished pass after a command that asks for
  // gradients (`after.finished`, decided by the command table as `:serve`
  // decides), the forward pass otherwise, and step 0 after `:step`, whose
  // steps are taken in the view. The same model again (a statement that did
  // not change the output, `q = 1`) is not drawn again.
  function showPage(text, after) {
    after = after || {};
    if (text !== shownPage) {
      var model = JSON.parse(text);
      shownPage = text;
      view.show(model, after.finished && model.steps ? model.steps.length : 0);
    } else if (after.finished) {
      view.setStep(view.lastStep());
    }
    if (after.steps) view.setStep(0);
  }

  function busy(on) {
    stopButton.disabled = !on;
    document.body.setAttribute("data-busy", on ? "yes" : "no");
  }

  // The output pane's width in columns of its monospace font, as a
  // terminal's: gradcalc wraps long lines (a trace line between its parts,
  // continuation lines indented) and lays tables out in blocks that fit.
  // The glyph's width is measured once (and again after a resize or a theme
  // change), in a probe beside the pane rather than in it: measuring in a
  // long pane would lay all of it out again.
  // The pane's inner width, likewise, is read again only when its size
  // changed (a ResizeObserver says so after the frame's layout; a scroll
  // bar coming makes it narrower): reading it at each input laid the page
  // out there.
  var glyph = 0;
  var inner = 0;
  window.addEventListener("resize", function () { glyph = 0; });
  new MutationObserver(function () { glyph = 0; })
    .observe(document.body, { attributes: true, attributeFilter: ["class"] });
  if (window.ResizeObserver) new ResizeObserver(function () { inner = 0; }).observe(screen);
  function columns() {
    if (!glyph) {
      var probe = document.createElement("pre");
      probe.className = "gc-screen";
      probe.textContent = "0000000000";
      probe.style.cssText = "visibility: hidden; position: absolute; padding: 0; flex: none; overflow: visible";
      screen.parentNode.appendChild(probe);
      var span = document.createElement("span");
      span.textContent = probe.textContent;
      probe.textContent = "";
      probe.appendChild(span);
      glyph = span.getBoundingClientRect().width / 10;
      screen.parentNode.removeChild(probe);
    }
    if (!inner || !window.ResizeObserver) {
      var style = getComputedStyle(screen);
      inner = screen.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    }
    return glyph > 0 ? Math.max(0, Math.floor(inner / glyph) - 1) : 0;
  }

  function pump() {
    if (!ready || running || !queue.length) return;
    running = queue.shift();
    running.id = ++nextId;
    busy(true);
    if (running.run !== undefined) {
      worker.postMessage({ id: running.id, run: running.run, width: columns() });
    } else {
      running.rebuilt = 0;
      worker.postMessage({ id: running.id, restore: running.restore, width: columns() });
    }
  }

  function startWorker() {
    ready = false;
    worker = new Worker(workerUrl);
    worker.onmessage = function (event) { replied(event.data); };
    // A worker that dies (its memory, the browser's limits) is a crash too.
    worker.onerror = function (event) {
      event.preventDefault();
      if (running) replied({ id: running.id, crashed: event.message || "the worker ended" });
    };
    worker.postMessage({ module: module });
  }

  function replied(reply) {
    if (reply.ready) {
      ready = true;
      if (reply.commands) commands = reply.commands;
      document.body.setAttribute("data-ready", "yes");
      pump();
      return;
    }
    if (reply.failed) {
      append("cannot start gradcalc (" + reply.failed + ")\n");
      return;
    }
    if (!running || reply.id !== running.id) return; // a stopped input's
    if (reply.progress !== undefined) {
      running.rebuilt = reply.progress;
      progress("rebuilding: statement " + reply.progress + " of " + reply.of +
        (running.halting ? " (stopping…)" : " (Stop ends it here, keeping what is rebuilt)"));
      return;
    }
    var done = running;
    running = null;
    clearTimeout(done.halter);
    progress(null);
    busy(false);
    if (reply.crashed) {
      if (done.restore !== undefined) {
        crashedReplay(done.restore, reply.crashed);
      } else {
        append("gradcalc stopped (" + reply.crashed + "); the session is rebuilt as it was before this input\n");
        rebuild();
      }
      return;
    }
    script = reply.script;
    saveSession();
    if (done.run !== undefined) {
      append(reply.pieces);
      if (reply.downloads.length && done.link) {
        askDownloads(reply.downloads);
      } else {
        reply.downloads.forEach(saveFile);
      }
      if (reply.after.steps) {
        append("(here the view steps: Esc, then → or Space for the next step, ← back)\n");
      }
      if (reply.quit) append("(:quit has nothing to leave here: type on)\n");
      if (reply.status && reply.status.over) {
        // Only a new module gives the memory back.
        rebuild();
        return;
      }
      if (hooks.ran) hooks.ran(done.run);
    } else {
      rebuilt(done, reply);
    }
    showQuiz(reply.status);
    showPage(reply.page, done.run !== undefined ? reply.after : null);
    pump();
  }

  function saveFile(file) {
    download(file[0].split("/").pop() || "gradcalc.txt", file[1], typeOf(file[0]));
  }

  // A shared link's script wrote files: downloaded only if the student says so
  // (the link's author chose their names and types).
  function askDownloads(files) {
    var names = files.map(function (file) { return file[0].split("/").pop(); });
    append("(the link's script wrote " + files.length + " file" + (files.length === 1 ? "" : "s") +
      ": " + names.join(", ") + "; nothing is downloaded without your answer)\n");
    ask("The link's script wrote " + names.join(", ") + ". Download " +
      (files.length === 1 ? "it" : "them") + "?", [
      { label: "Download", act: function () { files.forEach(saveFile); } },
      { label: "Don't download", act: function () { append("(not downloaded)\n"); } }
    ]);
  }

  // What a finished replay says: how much of the script it rebuilt, never
  // that a session is back when it is not.
  function rebuilt(done, reply) {
    var whole = done.restore;
    if (reply.halted) {
      // The whole script stays in Sessions and to download.
      var kept = newId();
      store(SCRIPT_KEY + kept, whole);
      var index = sessions();
      index.splice(1, 0, { id: kept, title: "(not rebuilt) " + (statementLines(whole)[0] || ""),
        when: Date.now(), count: statementLines(whole).length });
      store(INDEX_KEY, index.slice(0, MAX_SESSIONS));
      if (reply.status && reply.status.over) {
        append("(rebuilding stopped at statement " + (reply.rebuilt + 1) + " of " + reply.of +
          ": past the memory limit. The session holds the statements before it, rebuilt in fresh memory; " +
          "the whole script is kept in Sessions)\n");
        rebuild();
      } else {
        append("(rebuilding stopped at statement " + reply.rebuilt + " of " + reply.of +
          ": the session holds the first " + reply.rebuilt + "; the whole script is kept in Sessions)\n");
      }
      ask("Rebuilding stopped at statement " + reply.rebuilt + " of " + reply.of + ".", [
        { label: "Download the whole script", act: function () { download("session.calc", whole, "text/plain"); } },
        { label: "Go on", act: function () {} }
      ]);
      return;
    }
    var dropped = /^# the session's first (\d+) statements are not here/m.exec(whole);
    var failed = reply.failed ? " (" + reply.failed + " part" + (reply.failed === 1 ? "" : "s") +
      " of it gave errors on replay: compare with `.calc`)" : "";
    var values = /^# gradcalc \S+ session, as values: its first (\d+) statements were not kept/m.exec(whole);
    if (values && done.note) {
      append("(your last session is back as values: its first " + values[1] + " statements were too many to keep, " +
        "so each name holds its value as a leaf, without the graph that made it" + failed + ")\n");
    } else if (dropped) {
      append("(your last session is back only in part: its first " + dropped[1] +
        " statements were not kept, so names they made may be unknown" + failed + ")\n");
    } else if (done.note) {
      append(done.note(reply.rebuilt) + failed + "\n");
    }
  }

  // A replay crashed the engine: not tried again. This tab starts an empty
  // session; the script stays in Sessions (under its own id) and to download.
  function crashedReplay(whole, why) {
    if (worker) worker.terminate();
    // Marked, so that a new tab does not go on from it.
    store(INDEX_KEY, sessions().map(function (entry) {
      if (entry.id === sessionId) entry.crashed = true;
      return entry;
    }));
    useSession(newId(), "");
    script = "";
    queue = [];
    startWorker();
    append("gradcalc stopped while rebuilding the session (" + why + "). It is not tried again: " +
      "this is a new, empty session, and the script that stopped it is kept in Sessions and to download\n");
    ask("The session's script stopped gradcalc while it was rebuilt.", [
      { label: "Download its script", act: function () { download("session.calc", whole, "text/plain"); } },
      { label: "Go on empty", act: function () {} }
    ]);
    showPage(JSON.stringify({ message: "a new, empty session: type a statement on the left" }), null);
  }

  // A new worker, given the script of the session as it was after the last
  // finished input.
  function rebuild() {
    if (worker) worker.terminate();
    startWorker();
    if (statementLines(script).length) queue.unshift({ restore: script });
    busy(queue.length > 0); // until the new worker has run what waits
  }

  function stop() {
    if (!running) return;
    if (running.restore !== undefined) {
      // A replay ends after the statements it runs now; one that does not
      // answer within 3 s is ended with its worker.
      if (running.halting) return;
      running.halting = true;
      worker.postMessage({ halt: running.id });
      var halting = running;
      halting.halter = setTimeout(function () {
        if (running !== halting) return;
        running = null;
        progress(null);
        busy(false);
        crashedReplay(halting.restore, "stopped: one statement of it ran for over 3 s");
        pump();
      }, 3000);
      return;
    }
    var line = running.run;
    running = null;
    queue = []; // as the terminal drops what was typed meanwhile
    busy(false);
    append("^C\ninterrupted: `" + firstLine(line) + "` stopped; the session is as it was before it (here a stopped `:repeat` or `:descend` keeps none of its steps)\n");
    rebuild();
  }

  // Whether a line starts with one of the commands `names` (without their
  // colon), as `:load lesson.calc` starts with `load`.
  function isCommand(line, names) {
    var word = line.trim().split(/\s+/)[0];
    return word.charAt(0) === ":" && names.indexOf(word.slice(1)) >= 0;
  }

  function firstLine(text) {
    var line = text.split("\n")[0];
    return line.length > 60 ? line.slice(0, 59) + "…" : line + (text.indexOf("\n") >= 0 ? " …" : "");
  }

  function submit(text) {
    if (!text.trim()) return;
    if (history[history.length - 1] !== text) {
      history.push(text);
      if (history.length > MAX_HISTORY) history.splice(0, history.length - MAX_HISTORY);
      store(HISTORY_KEY, history);
    }
    append(promptText() + " " + text.replace(/\n/g, "\n… ") + "\n");
    if (text.indexOf("\n") < 0 && text.indexOf(";") < 0 && isCommand(text, commands.load)) {
      append("(pick the script in the browser's dialog, or paste its lines here)\n");
      picker.value = "";
      picker.click();
      return;
    }
    queue.push({ run: text });
    pump();
  }

  // A `:quiz` (the session's: web/wasm's status says [k, n] while one runs,
  // and then each input is its answer). The Quiz button starts one with
  // `:quiz`, and pressed again stops it with `q`; the prompt says
  // `quiz k/n>` meanwhile.
  var quizAt = null;
  var quizButton = document.getElementById("quiz");
  var promptLabel = document.querySelector("#prompt label");

  function promptText() {
    return quizAt ? "quiz " + quizAt[0] + "/" + quizAt[1] + ">" : ">";
  }

  function showQuiz(status) {
    quizAt = (status && status.quiz) || null;
    promptLabel.textContent = promptText();
    quizButton.setAttribute("aria-pressed", quizAt ? "true" : "false");
    input.setAttribute("aria-label", quizAt
      ? "your answer to the quiz's question (Enter answers; ? shows it, b goes back, q stops)"
      : "a statement or a :command (Enter runs, Shift+Enter adds a line)");
    if (!input.disabled) {
      input.placeholder = quizAt
        ? "your answer: a number, a formula, a node or a shape (? shows it · b back · q stops)"
        : "x = 2; y = x^2   (Enter runs · Shift+Enter: a new line · Esc, then →: steps)";
    }
  }

  quizButton.addEventListener("click", function () {
    if (!quizAt && !commands.quiz.length) return;
    submit(quizAt ? "q" : ":" + commands.quiz[0]);
    input.focus();
  });

  // The input: Enter runs, Shift+Enter adds a line, a paste keeps its lines.
  function grow() {
    input.rows = Math.min(8, input.value.split("\n").length);
  }

  function recall(value) {
    input.value = value;
    grow();
    input.selectionStart = input.selectionEnd = input.value.length;
  }

  input.addEventListener("input", grow);

  input.addEventListener("paste", function (event) {
    var data = event.clipboardData && event.clipboardData.getData("text/plain");
    if (!data) return;
    event.preventDefault();
    input.setRangeText(data.replace(/\r\n?/g, "\n"), input.selectionStart, input.selectionEnd, "end");
    grow();
  });

  input.addEventListener("keydown", function (event) {
    var before = input.value.slice(0, input.selectionStart);
    var after = input.value.slice(input.selectionEnd);
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      var text = input.value;
      input.value = "";
      grow();
      back = 0;
      submit(text);
    } else if (event.key === "ArrowUp" && before.indexOf("\n") < 0 && back < history.length) {
      event.preventDefault();
      if (back === 0) draft = input.value;
      back += 1;
      recall(history[history.length - back]);
    } else if (event.key === "ArrowDown" && after.indexOf("\n") < 0 && back > 0) {
      event.preventDefault();
      back -= 1;
      recall(back === 0 ? draft : history[history.length - back]);
    } else if (event.key === "Escape") {
      view.graph.focus(); // the view's keys then step the graph
    } else if ((event.key === "c" || event.key === "C") && event.ctrlKey &&
               input.selectionStart === input.selectionEnd) {
      event.preventDefault();
      if (running) stop(); else { input.value = ""; grow(); }
    }
  });

  document.getElementById("prompt").addEventListener("submit", function (event) {
    event.preventDefault();
  });

  stopButton.addEventListener("click", stop);

  // A click or drag on the graph leaves the focus where it was (Esc or Tab
  // gives the graph the focus and its keys).
  view.graph.addEventListener("mousedown", function (event) { event.preventDefault(); });

  // A printable key typed with the focus outside the input (on the page, a
  // button, the output; or on the graph when it is none of the view's keys)
  // goes to the input; Esc on the graph goes back to it.
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.defaultPrevented || target === input) return;
    if (event.key === "Escape" && target === view.graph) {
      input.focus();
      return;
    }
    if (event.key.length !== 1 || event.ctrlKey || event.metaKey || event.altKey || input.disabled) return;
    if (target && target.tagName === "BUTTON" && event.key === " ") return;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
    event.preventDefault();
    input.focus();
    input.setRangeText(event.key, input.value.length, input.value.length, "end");
    grow();
  });

  // A fresh session in this tab (a new id: the one before stays in
  // Sessions): no statements, and without `keepHistory` no history.
  function fresh(keepHistory, title) {
    if (!keepHistory) history = [];
    back = 0;
    script = "";
    input.value = "";
    grow();
    queue = [];
    running = null;
    busy(false);
    progress(null);
    store(HISTORY_KEY, history);
    useSession(newId(), title);
    screen.textContent = "";
    screenSize = 0;
    trimmed = 0;
    if (module) rebuild();
    shownPage = null;
    queue.push({ restore: "" });
    input.focus();
  }

  document.getElementById("new").addEventListener("click", function () {
    fresh(false);
    append("new session: no variables, functions, graph or history (the one before is kept in Sessions)\n");
    pump();
  });

  // Opens the session `id` of the index in this tab.
  function reopen(entry) {
    fresh(true, entry.title);
    useSession(entry.id, entry.title);
    script = scriptOf(entry.id);
    queue = [{ restore: script, note: function (count) {
      return "(reopened: " + entry.title + ", " + count + " statement" + (count === 1 ? "" : "s") + ")";
    } }];
    pump();
  }

  // The kept sessions, to reopen one.
  document.getElementById("sessions").addEventListener("click", function () {
    var index = sessions();
    if (!index.length) {
      append("(no kept sessions yet: each tab's work is kept here after its first statement)\n");
      return;
    }
    ask("Kept sessions, newest first (this tab's is marked •): reopen one here.", index.map(function (entry) {
      var when = new Date(entry.when || 0);
      return {
        label: (entry.id === sessionId ? "• " : "") + firstLine(String(entry.title || "(untitled)")) +
          " — " + (entry.count || 0) + " statements, " + when.toLocaleString(),
        act: function () { if (entry.id !== sessionId) reopen(entry); }
      };
    }).concat([{ label: "Close", act: function () {} }]));
  });

  // A shared link: its script, run in a session of its own; asked first when
  // this tab holds work (which then stays in Sessions).
  function openLink(link) {
    if (link.malformed) {
      append(link.malformed + "\n");
      return;
    }
    if (link.assignment) {
      if (hooks.link) hooks.link(link.text);
      return;
    }
    var go = function () {
      fresh(true, "link: " + firstLine(link.text));
      append("(opened a shared link: its script runs in a new session)\n");
      queue.push({ run: link.text, link: true });
      pump();
    };
    if (!statementLines(script).length) {
      go();
      return;
    }
    ask("Open the link's script (" + firstLine(link.text) + ") in a new session? This session's " +
      statementLines(script).length + " statements stay in Sessions.", [
      { label: "Open the link", act: go },
      { label: "Stay here", act: function () { append("(the link was not opened)\n"); } }
    ]);
  }

  window.addEventListener("hashchange", function () {
    var link = linked();
    if (link) openLink(link);
  });

  document.getElementById("load").addEventListener("click", function () {
    picker.value = "";
    picker.click();
  });

  picker.addEventListener("change", function () {
    var file = picker.files && picker.files[0];
    if (!file) return;
    file.text().then(function (text) {
      if (hooks.file && hooks.file(text, file.name)) return;
      append("# " + file.name + "\n");
      queue.push({ run: text });
      pump();
      input.focus();
    });
  });

  // Files: the browser downloads what `:save`, `:svg`, … and the buttons write.
  function typeOf(name) {
    if (/\.svg$/i.test(name)) return "image/svg+xml";
    if (/\.html?$/i.test(name)) return "text/html";
    return "text/plain";
  }

  function download(name, content, type) {
    var blob = content instanceof Blob ? content : new Blob([content], { type: type + ";charset=utf-8" });
    var link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = name;
    document.body.appendChild(link);
    link.click();
    document.body.removeChild(link);
    setTimeout(function () { URL.revokeObjectURL(link.href); }, 60000);
  }

  document.getElementById("save").addEventListener("click", function () {
    download("session.calc", script || "# an empty gradcalc session\n", "text/plain");
  });

  // The picture as gradcalc drew it (values and final gradients).
  function picture() {
    if (!view.drawing) {
      append("(no graph yet: type a statement, e.g. `x = 2; y = x^2`)\n");
      return null;
    }
    return view.drawing.svg;
  }

  document.getElementById("svg").addEventListener("click", function () {
    var svg = picture();
    if (svg) download("graph.svg", svg, "image/svg+xml");
  });

  document.getElementById("png").addEventListener("click", function () {
    var svg = picture();
    if (!svg) return;
    var image = new Image();
    image.onload = function () {
      var scale = 2; // sharp on slides
      var canvas = document.createElement("canvas");
      canvas.width = Math.max(1, Math.round(image.width * scale));
      canvas.height = Math.max(1, Math.round(image.height * scale));
      var context = canvas.getContext("2d");
      context.fillStyle = "#ffffff";
      context.fillRect(0, 0, canvas.width, canvas.height);
      context.drawImage(image, 0, 0, canvas.width, canvas.height);
      canvas.toBlob(function (blob) { download("graph.png", blob); }, "image/png");
    };
    image.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svg);
  });

  // The session's statements without the comment lines `:save` starts with.
  function statements() {
    return script.split("\n").filter(function (line) { return line && line[0] !== "#"; }).join("\n");
  }

  function copy(text, button, done) {
    var label = button.textContent;
    var said = function (word) {
      button.textContent = word;
      setTimeout(function () { button.textContent = label; }, 1500);
    };
    var fallback = function () {
      append(done + "\n");
      said("shown");
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () { said("copied"); }, fallback);
    } else {
      fallback();
    }
  }

  document.getElementById("share").addEventListener("click", function () {
    var link = location.href.split("#")[0] + "#script=" + encodeURIComponent(statements());
    window.gradcalcLink = link;
    copy(link, this, "the link (copy it from here):\n" + link);
  });

  document.getElementById("copy").addEventListener("click", function () {
    // The text as shown: a plot is its titles, not its pictures' labels.
    var shown = screen.cloneNode(true);
    Array.prototype.forEach.call(shown.querySelectorAll(".gc-plot"), function (plot) {
      plot.parentNode.removeChild(plot);
    });
    var text = shown.textContent;
    copy(text, this, "(the browser gives no clipboard here: select the output and copy it)");
  });

  // The script of a shared link in the address (then taken out of it, so
  // that a reload keeps the work done since): {text}, {malformed: what to
  // say} when it cannot be read or holds nothing, or null without a link.
  // An `#assignment=` link's text is an assignment ({text, assignment:
  // true}), opened by web/assignment.js: nothing of it runs.
  function linked() {
    var match = /^#(script|assignment)=(.*)$/.exec(location.hash);
    if (!match) return null;
    window.history.replaceState(null, "", location.pathname + location.search);
    var text;
    try {
      text = decodeURIComponent(match[2]);
    } catch (e) {
      return { malformed: "(this link's " + match[1] + " cannot be read: the address is cut short or garbled " +
        "(a `%` not followed by two hex digits, or a broken character). Nothing of it ran: ask for the link again, " +
        "or paste its script here)" };
    }
    if (!text.trim()) return { malformed: "(this link holds no " + match[1] + ": nothing to run)" };
    return { text: text, assignment: match[1] === "assignment" };
  }

  // What the page opens with: this tab's session after a reload; a shared
  // link (asked first when this tab holds work); else a copy of the most
  // recent session, stored as a session of its own once it changes.
  function opening() {
    var index = sessions();
    var old = stored(OLD_SESSION_KEY, "");
    if (!index.length && typeof old === "string" && statementLines(old).length) {
      // The one session of the site, before sessions were kept per tab.
      var id = newId();
      if (store(SCRIPT_KEY + id, old)) {
        index = [{ id: id, title: statementLines(old)[0], when: Date.now(), count: statementLines(old).length }];
        store(INDEX_KEY, index);
      }
    }
    try { window.localStorage.removeItem(OLD_SESSION_KEY); } catch (e) { /* none */ }
    var tab = null;
    try { tab = window.sessionStorage.getItem(TAB_KEY); } catch (e) { /* none */ }
    var mine = tab && index.filter(function (entry) { return entry.id === tab; })[0];
    var link = linked();
    var items = [];
    // A tab with an id but no kept session has an empty one (New, or after
    // a crash): it stays empty.
    var recent = index.filter(function (entry) { return !entry.crashed; })[0];
    var last = mine || (!tab && (!link || link.malformed) ? recent : null);
    if (mine) {
      useSession(mine.id, mine.title);
    } else {
      useSession(tab || newId(), "");
    }
    if (last) {
      script = scriptOf(last.id);
      if (!mine) unchanged = script; // a copy: stored once it changes
      var count = statementLines(script).length;
      items.push({ restore: script, note: function (rebuiltCount) {
        return "(your last session is back: " + rebuiltCount + " statement" + (rebuiltCount === 1 ? "" : "s") +
          (rebuiltCount === count ? "" : " of " + count) + ", ↑ for its inputs; New starts afresh, Sessions lists the others)";
      } });
    } else {
      items.push({ restore: "" });
    }
    if (link) setTimeout(function () { openLink(link); }, 0);
    return items;
  }

  // Where the page runs decides whether it can load gradcalc: not in a
  // sandboxed frame without `allow-same-origin` (its origin is opaque: no
  // fetch of gradcalc.wasm, no storage), not from a file (browsers refuse to
  // read files beside it) unless it is the one-file offline bundle.
  function cannotLoad(error) {
    var offline = window.GRADCALC_OFFLINE;
    if (location.protocol === "file:" && !offline) {
      return "cannot load gradcalc.wasm from a file: browsers do not let a page opened from disk read the files beside it. " +
        "Open offline.html (everything in one file), or serve this folder: `python3 -m http.server 8000` in it, then http://localhost:8000/";
    }
    if (window.origin === "null" && location.protocol !== "file:") {
      return "cannot load gradcalc: the playground is embedded in a sandboxed frame without `allow-same-origin`, " +
        "so it may not read gradcalc.wasm or keep your work. Embed it with " +
        "<iframe src=\"…/index.html\" sandbox=\"allow-scripts allow-same-origin allow-downloads\">";
    }
    return "cannot load gradcalc.wasm (" + error + "): serve this directory over HTTP, e.g. `python3 -m http.server` in it";
  }

  function started(compiled) {
    module = compiled;
    if (hooks.ready) hooks.ready(compiled);
    queue = opening().concat(queue);
    startWorker();
    input.disabled = false;
    input.placeholder = "x = 2; y = x^2   (Enter runs · Shift+Enter: a new line · Esc, then →: steps)";
    input.focus();
  }

  // The worker's script and the module: beside the page, or inside it in the
  // offline bundle (offline.html, scripts/build-web.sh).
  var workerUrl = window.GRADCALC_OFFLINE
    ? URL.createObjectURL(new Blob([window.GRADCALC_OFFLINE.worker], { type: "text/javascript" }))
    : "worker.js";

  function compile() {
    var offline = window.GRADCALC_OFFLINE;
    if (offline) {
      var text = atob(offline.wasm);
      var bytes = new Uint8Array(text.length);
      for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
      return WebAssembly.compile(bytes);
    }
    if (window.origin === "null" && location.protocol !== "file:") {
      return Promise.reject(new Error("sandboxed"));
    }
    return WebAssembly.compileStreaming
      ? WebAssembly.compileStreaming(fetch("gradcalc.wasm")).catch(function () {
          return fetch("gradcalc.wasm").then(function (r) { return r.arrayBuffer(); })
            .then(function (b) { return WebAssembly.compile(b); });
        })
      : fetch("gradcalc.wasm").then(function (r) { return r.arrayBuffer(); })
          .then(function (b) { return WebAssembly.compile(b); });
  }

  input.placeholder = "loading gradcalc…";
  compile().then(started, function (error) {
    var why = cannotLoad(error);
    input.placeholder = "gradcalc did not load";
    append(why + "\n");
    document.body.setAttribute("data-ready", "failed");
    // An embedding page (an LMS) may listen for why.
    if (window.parent !== window) window.parent.postMessage({ gradcalc: "cannot-load", why: why }, "*");
  });
  window.gradcalcRun = submit;
  window.gradcalcStop = stop;

  // A session of its own for `id` (an assignment's): reopened when this
  // browser keeps it, else started empty under that id, asked first when
  // this tab holds other work (which stays in Sessions).
  function openSession(id, title, then) {
    var go = function () {
      var kept = sessions().filter(function (entry) { return entry.id === id; })[0];
      if (kept) {
        reopen(kept);
      } else {
        fresh(true, title);
        useSession(id, title);
        pump();
      }
      if (then) then();
    };
    if (id === sessionId || !statementLines(script).length) {
      go();
      return;
    }
    ask("Open " + firstLine(title) + " in a session of its own? This session's " +
      statementLines(script).length + " statements stay in Sessions.", [
      { label: "Open it", act: go },
      { label: "Stay here", act: function () { append("(not opened)\n"); } }
    ]);
  }

  // What web/assignment.js uses of the page.
  window.gradcalcPage = {
    hooks: hooks,
    run: submit,
    append: append,
    download: download,
    openSession: openSession,
    sessionId: function () { return sessionId; },
    quizzing: function () { return !!quizAt; },
    stored: stored,
    store: store
  };
})();
