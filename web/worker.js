// The playground's worker: one gradcalc session (web/wasm, see its
// src/lib.rs) in a Web Worker, so that a long statement never freezes the
// page. The page stops a statement by ending this worker and starting another,
// which replays the session's script (what `:save` writes) to rebuild it.
//
// Messages in: {module} (the compiled WebAssembly.Module), then {id, run:
// text} for a typed input or {id, restore: script} for a replay. Messages out:
// {ready: true, commands} (the names of the commands the page carries out
// itself: `load` and `step` lists, from the command table), then for each input (`width`: the output pane's columns, to
// wrap to) {id, pieces, quit, downloads, script, after, page}:
// the output as the terminal shows it, as typed pieces ({text, class}: the
// terminal's colours as classes), whether it was `:quit`, the files it
// wrote ([name, content] pairs), the session's script, what the view does
// after it ({finished, steps}: show the finished pass; the input ran `:step`)
// and the graph view's model (JSON text) afterwards.
"use strict";
var wasm = null;
var encoder = new TextEncoder();
var decoder = new TextDecoder();

function output() {
  var e = wasm.exports;
  var bytes = new Uint8Array(e.memory.buffer, e.gradcalc_output_ptr(), e.gradcalc_output_len());
  return decoder.decode(bytes.slice());
}

function run(text, width) {
  var e = wasm.exports;
  e.gradcalc_set_width(width || 0);
  var bytes = encoder.encode(text);
  var ptr = e.gradcalc_alloc(bytes.length);
  new Uint8Array(e.memory.buffer, ptr, bytes.length).set(bytes);
  var quit = e.gradcalc_run(ptr, bytes.length) === 1;
  var shown = JSON.parse(output());
  e.gradcalc_downloads();
  var downloads = JSON.parse(output());
  e.gradcalc_script();
  var script = output();
  e.gradcalc_view_after();
  var after = JSON.parse(output());
  e.gradcalc_page();
  return { pieces: shown, quit: quit, downloads: downloads, script: script, after: after, page: output() };
}

self.onmessage = function (event) {
  var message = event.data;
  if (message.module) {
    WebAssembly.instantiate(message.module, {}).then(function (instance) {
      wasm = instance;
      wasm.exports.gradcalc_commands();
      self.postMessage({ ready: true, commands: JSON.parse(output()) });
    }, function (error) {
      self.postMessage({ failed: String(error) });
    });
    return;
  }
  var reply;
  try {
    reply = run(message.run !== undefined ? message.run : message.restore, message.width);
  } catch (error) {
    reply = { crashed: String(error) };
  }
  reply.id = message.id;
  self.postMessage(reply);
};
