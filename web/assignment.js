// Assignments in the playground (docs/homework.md): an `#assignment=` link
// or a picked `.calc` file with `:expect` checks or a `:quiz` opens as an
// assignment. Its problems are shown above the output — the title, each
// problem's text, its starting code, its quizzes, what is checked — and
// nothing of it runs on open: "Run the given code" runs a problem's
// statements, "Check" runs its `:expect` lines (sealed or not: "correct",
// "off by 3 %", "wrong shape (2×3, expected 3×2)", as in the terminal),
// "Start the quiz" runs its statements and then its `:quiz` line, whose
// questions are answered in the input (a quiz is not code to run: its
// answers in the file are never shown). The problems are read by gradcalc
// itself (`gradcalc_assignment`, the reading of `gradcalc --assignment`).
//
// An assignment works in a session of its own, kept per assignment (its id
// is the hash of its text: the same link or file reopens the same work),
// with the assignment's text and the inputs run in it in the browser's
// storage. "Transcript" exports those inputs run in a fresh session
// (`gradcalc_transcript`, as `gradcalc --transcript` runs a file), as
// Markdown for people or JSON Lines, which `gradcalc --check-transcript`
// reruns to the same numbers.
"use strict";
(function () {
  var page = window.gradcalcPage;
  var ASSIGNMENT_KEY = "gradcalc-assignment:"; // + session id: its text
  var INPUTS_KEY = "gradcalc-inputs:"; // + session id: the inputs run in it
  var wasm = null; // an instance of gradcalc on the page's thread
  var current = null; // {id, text, parsed} of the assignment shown
  var waiting = null; // an assignment opened before gradcalc was compiled
  var encoder = new TextEncoder();
  var decoder = new TextDecoder();

  var panel = document.createElement("section");
  panel.className = "gc-assignment";
  panel.hidden = true;
  panel.setAttribute("aria-label", "assignment");
  var screen = document.getElementById("screen");
  screen.parentNode.insertBefore(panel, screen);

  // Calls the module's `name(ptr, len)` with `text`, and reads its output.
  function call(name, text) {
    var e = wasm.exports;
    var bytes = encoder.encode(text);
    var ptr = e.gradcalc_alloc(bytes.length);
    new Uint8Array(e.memory.buffer, ptr, bytes.length).set(bytes);
    e[name](ptr, bytes.length);
    var out = new Uint8Array(e.memory.buffer, e.gradcalc_output_ptr(), e.gradcalc_output_len());
    return decoder.decode(out.slice());
  }

  // The assignment's id: FNV-1a of its text (the same text, the same work).
  function idOf(text) {
    var hash = 0x811c9dc5;
    for (var i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
    return "assignment-" + hash.toString(16);
  }

  // The assignment read from `text`, or null when it neither checks nor
  // quizzes anything (then it is a plain script).
  function parse(text) {
    var parsed = JSON.parse(call("gradcalc_assignment", text));
    var checks = parsed.problems.reduce(function (n, p) { return n + p.expects.length + p.quizzes.length; }, 0);
    return checks ? parsed : null;
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function button(label, title, act) {
    var node = element("button", null, label);
    node.type = "button";
    node.title = title;
    node.addEventListener("click", act);
    return node;
  }

  // The statements of a problem's code (without the line for the work).
  function given(problem) {
    return problem.code.filter(function (line) { return line.charAt(0) !== "#"; }).join("\n");
  }

  // What "Start the quiz" runs: a quiz that runs now stopped (`stop` is
  // always its key), the problem's statements, then its `:quiz` line.
  function quizStart(problem, quiz) {
    return (page.quizzing() ? "stop\n" : "") + (given(problem) ? given(problem) + "\n" : "") + quiz.command;
  }

  function show(assignment) {
    var parsed = assignment.parsed;
    panel.textContent = "";
    var head = element("div", "gc-assignment-head");
    head.appendChild(element("h2", null, parsed.title || "Assignment"));
    head.appendChild(button("Transcript .md", "download this assignment's work as a Markdown transcript", function () {
      exportTranscript("md");
    }));
    head.appendChild(button("Transcript .jsonl", "download a JSON Lines transcript, which `gradcalc --check-transcript` reruns", function () {
      exportTranscript("jsonl");
    }));
    head.appendChild(button("Hide", "hide the problems (the work stays)", function () {
      panel.classList.toggle("gc-folded");
      this.textContent = panel.classList.contains("gc-folded") ? "Show" : "Hide";
    }));
    panel.appendChild(head);
    var list = element("div", "gc-problems");
    parsed.problems.forEach(function (problem, index) {
      var box = element("section", "gc-problem");
      box.setAttribute("data-problem", String(index));
      if (problem.title) box.appendChild(element("h3", null, problem.title));
      var text = problem.text.join("\n").trim();
      if (text) box.appendChild(element("p", null, text));
      if (problem.code.length) box.appendChild(element("pre", null, problem.code.join("\n")));
      problem.quizzes.forEach(function (quiz) {
        box.appendChild(element("p", "gc-quiz", "Quiz: predict " + quiz.asks +
          ", one question at a time, in the input (? shows the answer, counted as not right)"));
      });
      if (problem.checks.length) {
        box.appendChild(element("p", "gc-checked", "Checked: " + problem.checks.map(function (check) {
          return check[0];
        }).join(", ")));
      }
      var tools = element("div", "gc-problem-tools");
      if (given(problem)) {
        tools.appendChild(button("Run the given code", "run this problem's starting statements", function () {
          page.run(given(problem));
        }));
      }
      problem.quizzes.forEach(function (quiz) {
        var label = "Start the quiz" + (problem.quizzes.length > 1 ? " (" + quiz.asks + ")" : "");
        tools.appendChild(button(label, "run this problem's starting statements, then " + quiz.command, function () {
          page.run(quizStart(problem, quiz));
        }));
      });
      if (problem.expects.length) {
        tools.appendChild(button("Check", "check your answers to this problem", function () {
          page.run(problem.expects.join("\n"));
        }));
      }
      if (tools.firstChild) box.appendChild(tools);
      list.appendChild(box);
    });
    panel.appendChild(list);
    panel.hidden = false;
    document.body.setAttribute("data-assignment", assignment.id);
  }

  function hide() {
    panel.hidden = true;
    panel.textContent = "";
    current = null;
    document.body.removeAttribute("data-assignment");
  }

  // Opens `text` as an assignment (from a link or a file called `origin`).
  function open(text, origin) {
    if (!wasm) {
      waiting = { text: text, origin: origin };
      return true;
    }
    var parsed = parse(text);
    if (!parsed) return false;
    var id = idOf(text);
    page.store(ASSIGNMENT_KEY + id, text);
    var title = "assignment: " + (parsed.title || origin);
    var count = parsed.problems.filter(function (p) {
      return p.code.length || p.expects.length || p.quizzes.length;
    }).length;
    page.openSession(id, title, function () {
      page.append("(opened the assignment " + (parsed.title || origin) + ": " + count +
        " problem" + (count === 1 ? "" : "s") + " above, nothing run. " +
        "\"Run the given code\" runs a problem's statements, \"Check\" checks your answers" +
        (parsed.problems.some(function (p) { return p.quizzes.length; }) ? ", \"Start the quiz\" asks a quiz's questions" : "") + "; " +
        "this work is kept for this assignment)\n");
    });
    return true;
  }

  function inputs(id) {
    var list = page.stored(INPUTS_KEY + id, []);
    return Array.isArray(list) ? list.filter(function (t) { return typeof t === "string"; }) : [];
  }

  function exportTranscript(format) {
    if (!current) return;
    var title = current.parsed.title || "assignment";
    var request = {
      source: inputs(current.id).join("\n") + "\n",
      origin: title + " (playground)",
      recorded: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      format: format
    };
    var text = call("gradcalc_transcript", JSON.stringify(request));
    var name = title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "assignment";
    window.gradcalcTranscript = text;
    page.download(name + ".transcript." + format, text, format === "md" ? "text/markdown" : "application/jsonl");
  }

  page.hooks.ready = function (module) {
    WebAssembly.instantiate(module, { gradcalc: { interrupted: function () { return 0; } } }).then(function (instance) {
      wasm = instance;
      if (waiting) {
        var opening = waiting;
        waiting = null;
        open(opening.text, opening.origin);
      } else {
        page.hooks.session(page.sessionId());
      }
    });
  };

  // This tab's session changed: its assignment, if it has one, is shown.
  page.hooks.session = function (id) {
    if (current && current.id === id) return;
    var text = page.stored(ASSIGNMENT_KEY + id, null);
    if (typeof text !== "string" || !wasm) {
      hide();
      return;
    }
    var parsed = parse(text);
    if (!parsed) {
      hide();
      return;
    }
    current = { id: id, text: text, parsed: parsed };
    show(current);
  };

  // Each finished input of an assignment's session is kept for its
  // transcript.
  page.hooks.ran = function (text) {
    if (!current || current.id !== page.sessionId()) return;
    var list = inputs(current.id);
    list.push(text);
    page.store(INPUTS_KEY + current.id, list);
  };

  page.hooks.link = function (text) {
    open(text, "the link");
  };

  page.hooks.file = function (text, name) {
    return open(text, name);
  };
})();
