// The playground: gradcalc's library compiled to WebAssembly (web/wasm, a
// plain C-style API: see its src/lib.rs), run in a Web Worker (worker.js) so
// that the page never freezes; a multi-line input with history; the output as
// the terminal shows it (typed pieces with classes for its colours); and the graph view of page.js beside it, updated
// after every input.
//
// Nothing is lost: the session's script (what `:save` writes) and the input
// history are kept in the browser's local storage after every input and
// replayed at the next visit ("New" starts afresh). Stop (or Ctrl-C in the
// input with nothing selected) ends the worker and starts another, which
// replays that script: the session is as it was before the stopped statement,
// as in the terminal. (An interrupt flag in a SharedArrayBuffer would keep the
// worker, but needs cross-origin isolation headers that a static host may not
// send; a replay works wherever the page is served.)
"use strict";
(function () {
  var SESSION_KEY = "gradcalc-session";
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

  var history = stored(HISTORY_KEY, []);
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
  var commands = { load: [] };
  var shownPage = null; // the model text the view shows
  var trimmed = 0; // lines dropped from the top of the output pane
  var screenSize = screen.textContent.length;

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

  // Output: typed pieces from gradcalc ({text, class}: the terminal's look
  // as classes, gc-bold, gc-red, …; a plot's piece also has its `svg`
  // picture, drawn after its titles), or a note of the page's own (a string),
  // each piece a span. Past MAX_SCREEN characters in one output, its start
  // is dropped.
  function append(output) {
    var pieces = typeof output === "string" ? [{ text: output }] : output;
    var size = pieces.reduce(function (n, piece) { return n + piece.text.length; }, 0);
    var cutHere = size > MAX_SCREEN;
    var fragment = document.createDocumentFragment();
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
      var span = document.createElement("span");
      if (piece["class"]) span.className = piece["class"];
      span.textContent = text;
      fragment.appendChild(span);
      screenSize += text.length;
      if (piece.svg) {
        // A plot: the picture after its titles, scaled to the pane's width.
        var picture = document.createElement("span");
        picture.className = "gc-plot";
        picture.setAttribute("role", "img");
        picture.setAttribute("aria-label", "plot: " + text.trim().replace(/\n/g, "; "));
        picture.innerHTML = piece.svg;
        fragment.appendChild(picture);
        screenSize += picture.textContent.length; // as `trim` counts it
      }
    });
    screen.appendChild(fragment);
    trim(cutHere);
    screen.scrollTop = screen.scrollHeight;
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
      var first = screen.firstChild;
      screenSize -= first.textContent.length;
      trimmed += countLines(first.textContent);
      screen.removeChild(first);
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
  function columns() {
    var probe = document.createElement("span");
    probe.textContent = "0000000000";
    probe.style.visibility = "hidden";
    probe.style.position = "absolute";
    screen.appendChild(probe);
    var glyph = probe.getBoundingClientRect().width / 10;
    screen.removeChild(probe);
    var style = getComputedStyle(screen);
    var inner = screen.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return glyph > 0 ? Math.max(0, Math.floor(inner / glyph) - 1) : 0;
  }

  function pump() {
    if (!ready || running || !queue.length) return;
    running = queue.shift();
    running.id = ++nextId;
    if (running.run !== undefined) {
      busy(true);
      worker.postMessage({ id: running.id, run: running.run, width: columns() });
    } else {
      worker.postMessage({ id: running.id, restore: running.restore });
    }
  }

  function startWorker() {
    ready = false;
    worker = new Worker("worker.js");
    worker.onmessage = function (event) { replied(event.data); };
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
    var done = running;
    running = null;
    busy(false);
    if (reply.crashed) {
      append("gradcalc stopped (" + reply.crashed + "); the session is rebuilt as it was before this input\n");
      rebuild();
      return;
    }
    script = reply.script;
    store(SESSION_KEY, script);
    if (done.run !== undefined) {
      append(reply.pieces);
      reply.downloads.forEach(function (file) {
        download(file[0].split("/").pop() || "gradcalc.txt", file[1], typeOf(file[0]));
      });
      if (reply.after.steps) {
        append("(here the view steps: Esc, then → or Space for the next step, ← back)\n");
      }
      if (reply.quit) append("(:quit has nothing to leave here: type on)\n");
    } else if (done.note) {
      append(done.note);
    }
    showPage(reply.page, done.run !== undefined ? reply.after : null);
    pump();
  }

  // A new worker, given the script of the session as it was after the last
  // finished input.
  function rebuild() {
    if (worker) worker.terminate();
    startWorker();
    if (script) queue.unshift({ restore: script });
  }

  function stop() {
    if (!running || running.run === undefined) return;
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
    append("> " + text.replace(/\n/g, "\n… ") + "\n");
    if (text.indexOf("\n") < 0 && text.indexOf(";") < 0 && isCommand(text, commands.load)) {
      append("(pick the script in the browser's dialog, or paste its lines here)\n");
      picker.value = "";
      picker.click();
      return;
    }
    queue.push({ run: text });
    pump();
  }

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

  // A fresh session: no statements, and without `keepHistory` no history.
  function fresh(keepHistory) {
    if (!keepHistory) history = [];
    back = 0;
    script = "";
    input.value = "";
    grow();
    queue = [];
    running = null;
    busy(false);
    store(HISTORY_KEY, history);
    store(SESSION_KEY, "");
    screen.textContent = "";
    screenSize = 0;
    trimmed = 0;
    if (module) rebuild();
    shownPage = null;
    queue.push({ restore: "", note: "" });
    input.focus();
  }

  document.getElementById("new").addEventListener("click", function () {
    fresh(false);
    append("new session: no variables, functions, graph or history\n");
    pump();
  });

  // A shared link opened in this tab.
  window.addEventListener("hashchange", function () {
    if (!/^#script=/.test(location.hash)) return;
    fresh(true);
    var text = linked();
    if (text !== null) queue.push({ run: text });
    pump();
  });

  document.getElementById("load").addEventListener("click", function () {
    picker.value = "";
    picker.click();
  });

  picker.addEventListener("change", function () {
    var file = picker.files && picker.files[0];
    if (!file) return;
    file.text().then(function (text) {
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
    var text = Array.prototype.filter.call(screen.childNodes, function (node) {
      return !(node.classList && node.classList.contains("gc-plot"));
    }).map(function (node) { return node.textContent; }).join("");
    copy(text, this, "(the browser gives no clipboard here: select the output and copy it)");
  });

  // The script of a shared link in the address (then taken out of it, so
  // that a reload keeps the work done since), or null.
  function linked() {
    var match = /^#script=(.*)$/.exec(location.hash);
    if (!match) return null;
    var text;
    try { text = decodeURIComponent(match[1]); } catch (e) { text = ""; }
    window.history.replaceState(null, "", location.pathname + location.search);
    if (!text.trim()) return null;
    append("(opened a shared link: its script runs in a new session)\n");
    return text;
  }

  // A shared link: its script, run in a fresh session; else the last visit's.
  function opening() {
    var text = linked();
    if (text !== null) return [{ run: text }];
    var last = stored(SESSION_KEY, "");
    if (typeof last === "string" && last.replace(/^#.*$/gm, "").trim()) {
      script = last;
      var count = last.split("\n").filter(function (line) { return line && line[0] !== "#"; }).length;
      return [{ restore: last, note: "(your last session is back: " + count + " statement" +
        (count === 1 ? "" : "s") + ", ↑ for its inputs; New starts afresh)\n" }];
    }
    return [{ restore: "" }];
  }

  function started(compiled) {
    module = compiled;
    queue = opening().concat(queue);
    startWorker();
    input.disabled = false;
    input.placeholder = "x = 2; y = x^2   (Enter runs · Shift+Enter: a new line · Esc, then →: steps)";
    input.focus();
  }

  input.placeholder = "loading gradcalc…";
  var compiling = WebAssembly.compileStreaming
    ? WebAssembly.compileStreaming(fetch("gradcalc.wasm")).catch(function () {
        return fetch("gradcalc.wasm").then(function (r) { return r.arrayBuffer(); })
          .then(function (b) { return WebAssembly.compile(b); });
      })
    : fetch("gradcalc.wasm").then(function (r) { return r.arrayBuffer(); })
        .then(function (b) { return WebAssembly.compile(b); });
  compiling.then(started, function (error) {
    input.placeholder = "gradcalc did not load";
    append("cannot load gradcalc.wasm (" + error + "): serve this directory over HTTP, e.g. `python3 -m http.server` in it\n");
  });
  window.gradcalcRun = submit;
  window.gradcalcStop = stop;
})();
