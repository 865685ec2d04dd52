// The playground: gradcalc's library compiled to WebAssembly (web/wasm, a
// plain C-style API: see its src/lib.rs), a terminal-like input line with
// history, and the graph view of page.js beside it, updated after every input.
"use strict";
(function () {
  var screen = document.getElementById("screen");
  var input = document.getElementById("input");
  var view = GradcalcView.create(document.getElementById("view"));
  window.gradcalcView = view;
  var wasm = null;
  var history = [];
  var back = 0; // how far up the history ArrowUp has gone
  var encoder = new TextEncoder();
  var decoder = new TextDecoder();

  function output() {
    var e = wasm.exports;
    var bytes = new Uint8Array(e.memory.buffer, e.gradcalc_output_ptr(), e.gradcalc_output_len());
    return decoder.decode(bytes.slice());
  }

  // ANSI colour (SGR) to spans; every other character as text.
  function append(text) {
    var classes = [];
    var pattern = /\x1b\[([0-9;]*)m/g;
    var at = 0, match;
    function put(piece) {
      if (!piece) return;
      var span = document.createElement("span");
      if (classes.length) span.className = classes.join(" ");
      span.textContent = piece;
      screen.appendChild(span);
    }
    while ((match = pattern.exec(text)) !== null) {
      put(text.slice(at, match.index));
      at = pattern.lastIndex;
      (match[1] || "0").split(";").forEach(function (code) {
        var n = Number(code);
        if (n === 0) classes = [];
        else if (n === 1) classes.push("ansi-bold");
        else if (n === 2) classes.push("ansi-dim");
        else if (n === 4) classes.push("ansi-underline");
        else if ((n >= 30 && n <= 37) || (n >= 90 && n <= 97)) classes.push("ansi-" + n);
        else if (n === 39 || n === 22 || n === 24) classes = [];
      });
    }
    put(text.slice(at).replace(/\x1b\[[0-9;]*[A-Za-z]/g, ""));
    screen.scrollTop = screen.scrollHeight;
  }

  // The step the view shows after an input, as `:serve` does: the finished
  // pass after a command that asks for gradients, the forward pass otherwise.
  function stepAfter(line, model) {
    var asked = /^\s*:(grad|backward|trace|check|step)\b/.test(line);
    return asked && model.steps ? model.steps.length : 0;
  }

  function run(line) {
    append("> " + line + "\n");
    var bytes = encoder.encode(line);
    var e = wasm.exports;
    var ptr = e.gradcalc_alloc(bytes.length);
    new Uint8Array(e.memory.buffer, ptr, bytes.length).set(bytes);
    var quit;
    try {
      quit = e.gradcalc_run(ptr, bytes.length);
      append(output());
      e.gradcalc_page();
      var model = JSON.parse(output());
      view.show(model, stepAfter(line, model));
    } catch (error) {
      append("gradcalc stopped (" + error + "): reload the page to start again\n");
      input.disabled = true;
      return;
    }
    if (quit) append("(:quit has nothing to leave here: type on)\n");
  }

  document.getElementById("prompt").addEventListener("submit", function (event) {
    event.preventDefault();
    var line = input.value;
    input.value = "";
    back = 0;
    if (!line.trim()) return;
    if (history[history.length - 1] !== line) history.push(line);
    run(line);
  });

  input.addEventListener("keydown", function (event) {
    if (event.key === "ArrowUp" && back < history.length) {
      back += 1;
    } else if (event.key === "ArrowDown" && back > 0) {
      back -= 1;
    } else if (event.key === "Escape") {
      input.blur(); // the arrows then step the graph
      return;
    } else {
      return;
    }
    event.preventDefault();
    input.value = back === 0 ? "" : history[history.length - back];
  });

  function started(result) {
    wasm = result.instance;
    input.disabled = false;
    input.placeholder = "x = 2; y = x^2   (Esc, then → and ←, steps the graph)";
    input.focus();
    e_page();
    document.body.setAttribute("data-ready", "yes");
  }

  function e_page() {
    wasm.exports.gradcalc_page();
    view.show(JSON.parse(output()), 0);
  }

  var request = fetch("gradcalc.wasm");
  var loading = WebAssembly.instantiateStreaming
    ? WebAssembly.instantiateStreaming(request, {}).catch(function () {
        return fetch("gradcalc.wasm").then(function (r) { return r.arrayBuffer(); })
          .then(function (b) { return WebAssembly.instantiate(b, {}); });
      })
    : request.then(function (r) { return r.arrayBuffer(); })
        .then(function (b) { return WebAssembly.instantiate(b, {}); });
  loading.then(started, function (error) {
    append("cannot load gradcalc.wasm (" + error + "): serve this directory over HTTP, e.g. `python3 -m http.server` in it\n");
  });
  window.gradcalcRun = function (line) { run(line); };
})();
