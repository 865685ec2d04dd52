// The playground's worker: one gradcalc session (web/wasm, see its
// src/lib.rs) in a Web Worker, so that a long statement never freezes the
// page. The page stops a typed statement by ending this worker and starting
// another, which replays the session's script (what `:save` writes) to
// rebuild it.
//
// Messages in: {module} (the compiled WebAssembly.Module), then {id, run:
// text} for a typed input or {id, restore: script} for a replay, and {halt:
// id} to end a replay after the statements it is running. Messages out:
// {ready: true, commands} (the names of the commands the page carries out
// itself: `load` and `step` lists, from the command table), then for each
// input (`width`: the output pane's columns, to wrap to) {id, pieces, quit,
// downloads, script, after, status, page}: the output as the terminal shows
// it, as typed pieces ({text, class}: the terminal's colours as classes),
// whether it was `:quit`, the files it wrote ([name, content] pairs), the
// session's script, what the view does after it ({finished, steps}: show the
// finished pass; the input ran `:step`), {over, dropped} (the memory limit
// stopped it; statements the script no longer holds) and the graph view's
// model (JSON text) afterwards.
//
// A replay runs the script a few statements at a time (as many as take about
// 50 ms), yielding between them so that a {halt} is heard: it sends {id,
// progress: k, of: n} as it goes, and its reply also has `rebuilt` (how many
// statements ran), `of`, `failed` (how many of them gave an error) and
// `halted` (a {halt}, or the memory limit: then `status.over`).
"use strict";
var wasm = null;
var encoder = new TextEncoder();
var decoder = new TextDecoder();
var halted = {}; // ids of replays the page asked to end
// The module's one import: a host's interrupt (Pyodide's, for the Python
// package); here never, since Stop ends this worker instead.
var IMPORTS = { gradcalc: { interrupted: function () { return 0; } } };

function output() {
  var e = wasm.exports;
  var bytes = new Uint8Array(e.memory.buffer, e.gradcalc_output_ptr(), e.gradcalc_output_len());
  return decoder.decode(bytes.slice());
}

// Copies `text` into the module's memory: [pointer, length].
function put(text) {
  var e = wasm.exports;
  var bytes = encoder.encode(text);
  var ptr = e.gradcalc_alloc(bytes.length);
  new Uint8Array(e.memory.buffer, ptr, bytes.length).set(bytes);
  return [ptr, bytes.length];
}

// Runs `text`: whether it was `:quit`, and its output pieces.
function runText(text, width) {
  var e = wasm.exports;
  e.gradcalc_set_width(width || 0);
  var input = put(text);
  var quit = e.gradcalc_run(input[0], input[1]) === 1;
  return { quit: quit, pieces: JSON.parse(output()) };
}

// What the page reads after a run or a replay.
function after(reply) {
  var e = wasm.exports;
  e.gradcalc_downloads();
  reply.downloads = JSON.parse(output());
  e.gradcalc_script();
  reply.script = output();
  e.gradcalc_view_after();
  reply.after = JSON.parse(output());
  e.gradcalc_status();
  reply.status = JSON.parse(output());
  e.gradcalc_page();
  reply.page = output();
  return reply;
}

function statementsOf(script) {
  var input = put(script);
  wasm.exports.gradcalc_statements(input[0], input[1]);
  return JSON.parse(output());
}

function failed(pieces) {
  return pieces.some(function (piece) { return /(^|\n)error/.test(piece.text); });
}

// Replays `script` a chunk at a time, then replies.
function restore(id, script, width) {
  var statements = statementsOf(script);
  var done = 0;
  var errors = 0;
  var size = 1;
  var told = Date.now();
  function step() {
    try {
      if (halted[id] || done >= statements.length) {
        delete halted[id];
        var reply = after({ id: id, pieces: [], quit: false, rebuilt: done, of: statements.length,
          failed: errors, halted: done < statements.length });
        self.postMessage(reply);
        return;
      }
      var chunk = statements.slice(done, done + size);
      var started = Date.now();
      var ran = runText(chunk.join("\n"), width);
      if (failed(ran.pieces)) errors += 1;
      wasm.exports.gradcalc_status();
      if (JSON.parse(output()).over) {
        // Past the memory limit: the replay ends here; the page rebuilds
        // what came before in a fresh worker.
        self.postMessage(after({ id: id, pieces: [], quit: false, rebuilt: done, of: statements.length,
          failed: errors, halted: true }));
        return;
      }
      done += chunk.length;
      var took = Date.now() - started;
      if (took < 20) size = Math.min(size * 2, 4096);
      else if (took > 100 && size > 1) size = Math.max(1, size >> 1);
      if (Date.now() - told > 100) {
        told = Date.now();
        self.postMessage({ id: id, progress: done, of: statements.length });
      }
      setTimeout(step, 0);
    } catch (error) {
      self.postMessage({ id: id, crashed: String(error), rebuilt: done, of: statements.length });
    }
  }
  step();
}

self.onmessage = function (event) {
  var message = event.data;
  if (message.module) {
    WebAssembly.instantiate(message.module, IMPORTS).then(function (instance) {
      wasm = instance;
      wasm.exports.gradcalc_commands();
      self.postMessage({ ready: true, commands: JSON.parse(output()) });
    }, function (error) {
      self.postMessage({ failed: String(error) });
    });
    return;
  }
  if (message.halt !== undefined) {
    halted[message.halt] = true;
    return;
  }
  if (message.restore !== undefined) {
    try {
      restore(message.id, message.restore, message.width);
    } catch (error) {
      self.postMessage({ id: message.id, crashed: String(error), rebuilt: 0 });
    }
    return;
  }
  var reply;
  try {
    var ran = runText(message.run, message.width);
    reply = after({ pieces: ran.pieces, quit: ran.quit });
  } catch (error) {
    reply = { crashed: String(error) };
  }
  reply.id = message.id;
  self.postMessage(reply);
};
