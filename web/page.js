// gradcalc's graph view, shared by the page of `:html`, the live view of
// `:serve` and the playground. It shows a *model* (src/render/html.rs says what
// it holds): the picture gradcalc laid out, and the backward pass stepped with
// the keyboard. Step 0 is the forward pass (every gradient blank); step K is
// `:trace`'s step K: its node highlighted, its line shown, each gradient as
// the model says at step K (blank, a fan-out's sum so far, or final).
"use strict";
var GradcalcView = (function () {
  var SVG = "http://www.w3.org/2000/svg";

  function element(tag, attributes, text) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (key) {
      node.setAttribute(key, attributes[key]);
    });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // A legend entry's swatch: a box drawn as the picture draws that state.
  function swatch(kind) {
    var drawing = document.createElementNS(SVG, "svg");
    drawing.setAttribute("width", "34");
    drawing.setAttribute("height", "24");
    drawing.setAttribute("class", "gc-graph-swatch");
    var shape;
    if (kind === "op") {
      shape = document.createElementNS(SVG, "ellipse");
      shape.setAttribute("cx", "17"); shape.setAttribute("cy", "12");
      shape.setAttribute("rx", "15"); shape.setAttribute("ry", "10");
      shape.setAttribute("fill", "#f1f3f5"); shape.setAttribute("stroke", "currentColor");
      shape.setAttribute("stroke-width", "2");
    } else if (kind === "edge") {
      shape = document.createElementNS(SVG, "text");
      shape.setAttribute("x", "17"); shape.setAttribute("y", "17");
      shape.setAttribute("text-anchor", "middle"); shape.setAttribute("fill", "currentColor");
      shape.textContent = "0.5";
    } else {
      shape = document.createElementNS(SVG, "rect");
      shape.setAttribute("x", "3"); shape.setAttribute("y", "3");
      shape.setAttribute("width", "28"); shape.setAttribute("height", "18");
      shape.setAttribute("rx", "4");
      var styles = {
        current: ["var(--current-fill)", "var(--current)", "6", ""],
        done: ["var(--done-fill)", "var(--done)", "3", ""],
        pending: ["#ffffff", "var(--faint)", "2", "5 3"],
        partial: ["#ffffff", "var(--current)", "2", "5 3"],
        box: ["#ffffff", "var(--ink)", "2", ""]
      }[kind];
      shape.setAttribute("style", "fill:" + styles[0] + ";stroke:" + styles[1] +
        ";stroke-width:" + styles[2] + "px;stroke-dasharray:" + (styles[3] || "none"));
    }
    drawing.appendChild(shape);
    return drawing;
  }

  // The legend's line for an edge's label on a scalar page; a tensor page's
  // model brings its own (`edges`: matrix rules).
  var EDGE_LEGEND = "an edge's label: the local derivative ∂node/∂input at these values";

  function legend() {
    var box = element("aside", { "class": "gc-legend", "aria-label": "legend" });
    box.appendChild(element("h2", {}, "Legend"));
    var list = element("ul");
    [
      ["box", "a value: its name, value, and grad = ∂output/∂node"],
      ["op", "an operation (constants folded in: × 2)"],
      ["edge", EDGE_LEGEND],
      ["current", "the node this step processes (thick border)"],
      ["done", "gradient final (solid border)"],
      ["partial", "a fan-out's sum so far, uses to come (dashed, orange)"],
      ["pending", "gradient still to come (dashed border, blank)"]
    ].forEach(function (entry) {
      var item = element("li");
      item.appendChild(swatch(entry[0]));
      var text = element("span", { "class": "gc-legend-" + entry[0] }, entry[1]);
      item.appendChild(text);
      list.appendChild(item);
    });
    box.appendChild(list);
    box.appendChild(element("p", { "class": "gc-keys" },
      "→ or Space: next step · ← or Backspace: back · Home, End · wheel or + −: zoom · drag, or Shift+arrows (↑ ↓ alone too): pan · F: fit · T: theme · C: collapse or expand calls · L: legend · G: graph full-window · Esc: out of full-window; in the playground, back to the input"));
    return box;
  }

  function View(root) {
    this.root = root;
    root.classList.add("gc-view");
    root.textContent = "";
    var bar = element("div", { "class": "gc-bar" });
    this.title = element("span", { "class": "gc-title" }, "gradcalc");
    this.status = element("span", { "class": "gc-status", "aria-live": "polite" });
    bar.appendChild(this.title);
    // The status and the line are each in a box of their own (see `say`
    // and `tell`): a new text then lays out only its box, not the page.
    var statusBox = element("span", { "class": "gc-status-box" });
    statusBox.appendChild(this.status);
    bar.appendChild(statusBox);
    var self = this;
    [["◀ back", "back", function () { self.setStep(self.step - 1); }],
     ["next ▶", "next", function () { self.setStep(self.step + 1); }],
     ["fit", "fit", function () { self.fit(); }],
     ["expand calls", "calls", function () { self.toggleCalls(); }],
     ["theme", "theme", function () { self.toggleTheme(); }],
     ["legend", "legend-toggle", function () { self.toggleLegend(); }]
    ].forEach(function (button) {
      var b = element("button", { "type": "button", "class": "gc-" + button[1] }, button[0]);
      b.addEventListener("click", button[2]);
      bar.appendChild(b);
      if (/^(back|next|fit)$/.test(button[1])) (self.graphButtons = self.graphButtons || []).push(b);
      if (button[1] === "calls") self.callsButton = b;
    });
    root.appendChild(bar);
    var body = element("div", { "class": "gc-body" });
    this.graph = element("div", { "class": "gc-graph", "tabindex": "0",
      "aria-label": "the graph: → or Space steps, ← back, F fits, Shift+arrows pan" });
    body.appendChild(this.graph);
    this.legend = legend();
    body.appendChild(this.legend);
    root.appendChild(body);
    // The nodes for a screen reader: one item each, in the walk's order.
    this.reader = element("ol", { "class": "gc-reader", "aria-label": "the nodes, in the backward pass's order" });
    root.appendChild(this.reader);
    this.line = element("pre", { "class": "gc-line", "aria-live": "polite" });
    var lineBox = element("div", { "class": "gc-line-box" });
    lineBox.appendChild(this.line);
    root.appendChild(lineBox);
    this.step = 0;
    this.model = null;
    this.boxes = [];
    this.panZoom();
    if (window.ResizeObserver) {
      new ResizeObserver(function () { self.reorient(); }).observe(this.graph);
    }
    try {
      if (window.localStorage.getItem("gradcalc-theme") === "projector") {
        document.body.classList.add("projector");
      }
    } catch (e) { /* no storage (file:// in some browsers): the plain theme */ }
  }

  // Shows a model; `step` (optional) is the step to show, else the last
  // position is kept when the same steps are shown again, or 0.
  View.prototype.show = function (model, step) {
    this.model = model;
    this.graph.textContent = "";
    this.boxes = [];
    // Without a graph, the buttons that act on one have nothing to do.
    this.graphButtons.forEach(function (b) { b.disabled = !!model.message; });
    if (model.message) {
      this.title.textContent = "gradcalc";
      this.callsButton.hidden = true;
      this.graph.appendChild(element("div", { "class": "gc-message" }, model.message));
      this.reader.textContent = "";
      this.tell("");
      this.line.textContent = "";
      return;
    }
    this.title.textContent = "gradcalc: " + model.of;
    this.legend.querySelector(".gc-legend-edge").textContent = model.edges || EDGE_LEGEND;
    this.viewIndex = Math.min(this.viewIndex || 0, model.views.length - 1);
    this.callsButton.hidden = model.views.length < 2;
    this.draw();
    var last = model.steps.length;
    this.setStep(step === undefined || step === null ? Math.min(this.step, last) : step);
  };

  // Draws the model's current view (calls as boxes, or every node).
  View.prototype.draw = function () {
    var drawing = this.model.views[this.viewIndex];
    this.drawing = drawing;
    this.callsButton.textContent = this.viewIndex === 0 && this.model.views.length > 1
      ? "expand calls" : "collapse calls";
    this.graph.textContent = "";
    this.boxes = [];
    this.resetLine();
    this.shown = this.pick(drawing);
    this.graph.innerHTML = this.shown;
    var svg = this.graph.querySelector("svg");
    this.svg = svg;
    this.size = [svg.width.baseVal.value, svg.height.baseVal.value];
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    var groups = svg.querySelectorAll("g.value");
    this.layers = layered(svg, groups);
    for (var i = 0; i < groups.length; i++) {
      var grad = groups[i].querySelector("text.grad");
      var name = groups[i].querySelector("text.name");
      var value = Array.prototype.filter.call(groups[i].querySelectorAll("text"), function (t) {
        return /^value /.test(t.textContent);
      })[0];
      this.boxes.push({ group: groups[i], grad: grad, text: grad ? rowsOf(grad) : "",
        name: name ? name.textContent : "", value: value ? value.textContent : "",
        item: element("li") });
    }
    // The walk's order: the boxes by the step that processes them, then the rest.
    var order = this.boxes.map(function (b, k) { return k; });
    var first = {};
    (drawing.lit || []).forEach(function (box, step) {
      if (box !== null && box !== undefined && !(box in first)) first[box] = step;
    });
    var at = function (k) { return k in first ? first[k] : Infinity; };
    order.sort(function (a, b) { return at(a) - at(b) || a - b; });
    this.reader.textContent = "";
    var self = this;
    order.forEach(function (k) { self.reader.appendChild(self.boxes[k].item); });
    this.fit();
  };

  // The value boxes in pictures of their own, LAYER boxes each, drawn over
  // the rest of the picture (the edges, their labels and the ops) with the
  // same viewBox. A step changes a few boxes, and the browser then records
  // again only the pictures that hold them: one picture of 500 nodes is
  // some 5000 elements, all of them walked again to paint a step (5–10 ms).
  // The picture draws its boxes after its edges and ops already, so drawing
  // them above keeps the look. Gives every picture, the whole one first.
  var LAYER = 16;
  function layered(svg, groups) {
    var layers = [svg];
    for (var i = 0; i < groups.length; i += LAYER) {
      var layer = document.createElementNS(SVG, "svg");
      ["viewBox", "preserveAspectRatio", "font-family", "font-size"].forEach(function (name) {
        if (svg.hasAttribute(name)) layer.setAttribute(name, svg.getAttribute(name));
      });
      layer.setAttribute("class", "gc-boxes");
      // The picture's extent, unpainted: a box drawn thicker or thinner
      // then does not change the picture's bounds (which would repaint it
      // whole, and everything under it).
      var extent = document.createElementNS(SVG, "rect");
      var size = svg.viewBox.baseVal;
      extent.setAttribute("width", size.width);
      extent.setAttribute("height", size.height);
      extent.setAttribute("fill", "none");
      layer.appendChild(extent);
      for (var k = i; k < Math.min(groups.length, i + LAYER); k++) layer.appendChild(groups[k]);
      svg.parentNode.appendChild(layer);
      layers.push(layer);
    }
    return layers;
  }

  // A box's text: its rows (a tensor's gradient has one <tspan> a row), "\n" between.
  function rowsOf(text) {
    var spans = text.querySelectorAll("tspan");
    if (!spans.length) return text.textContent;
    return Array.prototype.map.call(spans, function (t) { return t.textContent; }).join("\n");
  }

  // Writes `rows` ("\n" between rows) into a box's text: one <tspan> a row
  // under the first where the box draws rows (a tensor's gradient).
  function setRows(text, rows) {
    var spans = text.querySelectorAll("tspan");
    if (!spans.length) { text.textContent = rows; return; }
    var x = spans[0].getAttribute("x");
    var y = +spans[0].getAttribute("y");
    text.textContent = "";
    rows.split("\n").forEach(function (row, k) {
      var span = document.createElementNS("http://www.w3.org/2000/svg", "tspan");
      span.setAttribute("x", x);
      span.setAttribute("y", y + 24 * k);
      span.textContent = row;
      text.appendChild(span);
    });
  }

  // The picture of `drawing` the pane shows larger: `svg`, or `turned` (the
  // same boxes the other way), so that a tall narrow pane (a phone, a
  // portrait window) draws top to bottom and a wide one left to right.
  View.prototype.pick = function (drawing) {
    if (!drawing.turned) return drawing.svg;
    var w = this.graph.clientWidth, h = this.graph.clientHeight;
    if (!w || !h) return drawing.svg;
    var scale = function (svg) {
      var size = /<svg[^>]*?\swidth="([0-9.]+)"[^>]*?\sheight="([0-9.]+)"/.exec(svg);
      return size ? Math.min(w / Number(size[1]), h / Number(size[2])) : 0;
    };
    return scale(drawing.turned) > scale(drawing.svg) ? drawing.turned : drawing.svg;
  };

  // The pane changed shape: the other direction, if it now draws larger;
  // the line as tall as its text now wraps to.
  View.prototype.reorient = function () {
    if (!this.model || this.model.message || !this.drawing) return;
    if (this.zoomed) {
      // Zoomed in or panned: the pane's new shape keeps the zoom (pixels
      // per unit of the picture) and the point in its middle; the picture
      // is not turned.
      this.keepZoom();
      return;
    }
    if (this.pick(this.drawing) === this.shown) {
      if (this.line.scrollHeight > this.line.clientHeight) this.say(this.line.textContent);
      return;
    }
    this.draw();
    this.setStep(this.step);
  };

  // Calls of user functions: one box each, or node by node.
  View.prototype.toggleCalls = function () {
    if (!this.model || this.model.message || this.model.views.length < 2) return;
    this.viewIndex = 1 - this.viewIndex;
    this.draw();
    this.setStep(this.step);
  };

  View.prototype.lastStep = function () {
    return this.model && this.model.steps ? this.model.steps.length : 0;
  };

  // Shows step k (clamped to 0 .. the last step).
  View.prototype.setStep = function (k) {
    var model = this.model;
    if (!model || model.message) return;
    var last = this.lastStep();
    k = Math.max(0, Math.min(last, k));
    this.step = k;
    var stepping = !model.note && last > 0;
    for (var i = 0; i < this.boxes.length; i++) {
      var b = this.boxes[i];
      // The box's last mark at or before step k (the model says when its
      // gradient as drawn changes): blank before the first.
      var marks = this.drawing.boxes[i] || [];
      var mark = null;
      for (var m = 0; m < marks.length && marks[m].step <= k; m++) mark = marks[m];
      var shown = !stepping || mark !== null;
      var partial = stepping && mark !== null && mark.kind === "partial";
      var current = stepping && k > 0 && this.drawing.lit[k - 1] === i;
      // Only a box whose look changed is touched: a step on a graph of 500
      // nodes changes a few, and the browser then restyles only those.
      var look = (stepping ? 1 : 0) + (shown ? 2 : 0) + (partial ? 4 : 0) + (current ? 8 : 0);
      if (b.look === look && b.mark === mark) continue;
      b.look = look;
      b.mark = mark;
      b.group.classList.toggle("done", stepping && shown && !partial && !current);
      b.group.classList.toggle("current", current);
      b.group.classList.toggle("partial", partial && !current);
      b.group.classList.toggle("pending", !shown || partial);
      var grad = !stepping ? b.text : mark ? "grad " + mark.text : "grad";
      if (b.grad) setRows(b.grad, grad);
      var said = !stepping ? b.text || "no gradient" : mark ? grad : "gradient to come";
      var state = current ? "current" : !shown ? "pending" : partial ? "partial, more to come" : "final";
      b.item.textContent = b.name + ": " + b.value + ", " + said + ", " + state;
      if (current) b.item.setAttribute("aria-current", "step"); else b.item.removeAttribute("aria-current");
    }
    if (stepping && k > 0) this.follow(this.drawing.lit[k - 1]);
    if (!stepping) {
      this.tell(model.note ? "no steps" : "");
      this.say(model.note || model.header);
    } else if (k === 0) {
      this.tell("step 0 of " + last);
      this.say(model.header + "\n(forward pass done: press → or Space for step 1)");
    } else {
      this.tell("step " + k + " of " + last);
      this.say(model.steps[k - 1].text);
    }
  };

  // Shows a step's line. The line's box is sized apart from its text (CSS
  // `contain: strict`), so that a new line does not lay the page out again
  // — with the graph's pane and its whole picture, 15 ms a step on 500
  // nodes; it grows to the tallest line shown since the graph was drawn
  // (up to its max-height, then it scrolls) and never shrinks back, so the
  // graph's text keeps its size from step to step.
  View.prototype.say = function (text) {
    var line = this.line;
    line.textContent = text;
    // Measured (which lays the page out at once) only when the text is
    // longer, or has more lines, than any shown since the line was reset.
    var lines = text.split("\n").length;
    if (text.length <= (this.longest || 0) && lines <= (this.mostLines || 0)) return;
    this.longest = Math.max(this.longest || 0, text.length);
    this.mostLines = Math.max(this.mostLines || 0, lines);
    if (line.scrollHeight > line.clientHeight) {
      var style = getComputedStyle(line);
      var padding = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
      line.style.height = (line.scrollHeight - padding) + "px";
    }
  };

  // Shows the status (the step's number). Its box is sized apart from its
  // text (CSS `contain: strict`, a width in `ch`, the widest text's since
  // the page opened, never narrower), so that a new number lays out the
  // status alone, not the page (a full layout of the page, about 1.5 ms a
  // step on 500 nodes).
  View.prototype.tell = function (text) {
    if (this.status.textContent === text) return;
    this.status.textContent = text;
    if (text.length + 1 > (this.statusWidth || 0)) {
      this.statusWidth = text.length + 1;
      this.status.style.width = this.statusWidth + "ch";
    }
  };

  // The line's height follows its text again (a new graph, theme or pane).
  View.prototype.resetLine = function () {
    this.line.style.height = "";
    this.longest = 0;
    this.mostLines = 0;
  };

  // Zoomed in, the view pans to keep the current step's box in sight.
  View.prototype.follow = function (index) {
    var b = this.boxes[index];
    if (!b || !this.svg || !this.box) return;
    // At fit every box is in sight: no need to measure one (which would lay
    // the picture out at once).
    var v0 = this.box;
    if (v0[0] <= 0 && v0[1] <= 0 && v0[2] >= this.size[0] && v0[3] >= this.size[1]) return;
    var r = b.group.getBBox();
    var v = this.box;
    var inside = r.x >= v[0] && r.y >= v[1] && r.x + r.width <= v[0] + v[2] && r.y + r.height <= v[1] + v[3];
    if (inside) return;
    this.box = [r.x + r.width / 2 - v[2] / 2, r.y + r.height / 2 - v[3] / 2, v[2], v[3]];
    this.applyBox();
  };

  // The legend shown or hidden (L); hidden, the graph gets its width. Until
  // asked, it follows the screen: hidden on a narrow one and in the projector
  // theme (page.css).
  View.prototype.toggleLegend = function () {
    var shown = this.legend.getClientRects().length > 0;
    this.root.classList.toggle("gc-legend-shown", !shown);
    this.root.classList.toggle("gc-legend-hidden", shown);
    this.fit();
  };

  // The graph alone, over the whole window (G); again (or Esc) gives it back.
  View.prototype.toggleFull = function () {
    this.root.classList.toggle("gc-full");
    this.fit();
  };

  View.prototype.toggleTheme = function () {
    var on = document.body.classList.toggle("projector");
    this.resetLine();
    if (this.model && !this.model.message) this.setStep(this.step);
    try { window.localStorage.setItem("gradcalc-theme", on ? "projector" : "plain"); } catch (e) { /* kept for this page only */ }
  };

  // The picture's viewBox: fit, zoom about a point, pan.
  View.prototype.fit = function () {
    if (!this.svg) return;
    this.zoomed = false;
    this.box = [0, 0, this.size[0], this.size[1]];
    this.applyBox();
  };

  // After a zoom or a pan: what the pane shows is kept when its size
  // changes (a longer step line, a wider window), as pixels per unit of
  // the picture and the picture's point in the middle of the pane.
  View.prototype.zoomedTo = function () {
    this.zoomed = true;
    this.pixels = this.scale();
  };

  View.prototype.keepZoom = function () {
    if (!this.svg || !this.box || !this.pixels) return;
    var w = (this.graph.clientWidth || 1) / this.pixels;
    var h = (this.graph.clientHeight || 1) / this.pixels;
    var cx = this.box[0] + this.box[2] / 2, cy = this.box[1] + this.box[3] / 2;
    this.box = [cx - w / 2, cy - h / 2, w, h];
    this.applyBox();
  };

  View.prototype.applyBox = function () {
    var box = this.box.map(function (v) { return Math.round(v * 100) / 100; }).join(" ");
    this.layers.forEach(function (layer) { layer.setAttribute("viewBox", box); });
  };

  // Pixels of the screen per unit of the picture, as `meet` scales it.
  View.prototype.scale = function () {
    var w = this.graph.clientWidth || 1, h = this.graph.clientHeight || 1;
    return Math.min(w / this.box[2], h / this.box[3]);
  };

  View.prototype.zoom = function (factor, clientX, clientY) {
    if (!this.svg) return;
    var rect = this.graph.getBoundingClientRect();
    var s = this.scale();
    // The picture point under the cursor stays under it.
    var cx = this.box[0] + this.box[2] / 2 + (clientX - rect.left - rect.width / 2) / s;
    var cy = this.box[1] + this.box[3] / 2 + (clientY - rect.top - rect.height / 2) / s;
    var w = Math.max(20, Math.min(this.size[0] * 20, this.box[2] / factor));
    var h = w * this.box[3] / this.box[2];
    var k = w / this.box[2];
    this.box = [cx - (cx - this.box[0]) * k, cy - (cy - this.box[1]) * k, w, h];
    this.applyBox();
    this.zoomedTo();
  };

  View.prototype.panZoom = function () {
    var self = this, drag = null;
    this.graph.addEventListener("wheel", function (event) {
      event.preventDefault();
      self.zoom(event.deltaY < 0 ? 1.15 : 1 / 1.15, event.clientX, event.clientY);
    }, { passive: false });
    this.graph.addEventListener("pointerdown", function (event) {
      if (!self.svg) return;
      drag = [event.clientX, event.clientY, self.box[0], self.box[1]];
      self.graph.classList.add("dragging");
      self.graph.setPointerCapture(event.pointerId);
    });
    this.graph.addEventListener("pointermove", function (event) {
      if (!drag) return;
      var s = self.scale();
      self.box[0] = drag[2] - (event.clientX - drag[0]) / s;
      self.box[1] = drag[3] - (event.clientY - drag[1]) / s;
      self.applyBox();
      self.zoomedTo();
    });
    var stop = function () { drag = null; self.graph.classList.remove("dragging"); };
    this.graph.addEventListener("pointerup", stop);
    this.graph.addEventListener("pointercancel", stop);
  };

  // The keys: → / Space, ← / Backspace, Home / End, F (fit), T (theme), + / −,
  // Shift+arrows and ↑ ↓ (pan), Esc (out of full-window).
  // Ignored while a text field has the focus (the playground's input line).
  // `onGraph`: only while the graph has the focus (the playground, whose
  // other keys go to its input); else anywhere on the page. Space and Enter
  // on a focused button are that button's.
  View.prototype.keys = function (onGraph) {
    var self = this;
    (onGraph ? this.graph : document).addEventListener("keydown", function (event) {
      var target = event.target;
      if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
      if (target && target.tagName === "BUTTON" && (event.key === " " || event.key === "Enter")) return;
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      var pan = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[event.key];
      if (pan && (event.shiftKey || pan[0] === 0)) {
        event.preventDefault();
        self.pan(pan[0], pan[1]);
        return;
      }
      if (event.key === "Escape" && self.root.classList.contains("gc-full")) {
        event.preventDefault();
        event.stopPropagation(); // the playground's Esc (to the input) waits for the next one
        self.toggleFull();
        return;
      }
      var handled = true;
      switch (event.key) {
        case "ArrowRight": case " ": case "Spacebar": self.setStep(self.step + 1); break;
        case "ArrowLeft": case "Backspace": self.setStep(self.step - 1); break;
        case "Home": self.setStep(0); break;
        case "End": self.setStep(self.lastStep()); break;
        case "f": case "F": case "0": self.fit(); break;
        case "t": case "T": self.toggleTheme(); break;
        case "c": case "C": self.toggleCalls(); break;
        case "l": case "L": self.toggleLegend(); break;
        case "g": case "G": self.toggleFull(); break;
        case "+": case "=": self.zoomCentre(1.25); break;
        case "-": self.zoomCentre(1 / 1.25); break;
        default: handled = false;
      }
      if (handled) event.preventDefault();
    });
  };

  // Moves the view a tenth of its width (dx) or height (dy) by keyboard:
  // Shift+arrows, and ↑ ↓ alone (← → step).
  View.prototype.pan = function (dx, dy) {
    if (!this.svg) return;
    this.box[0] += dx * this.box[2] / 10;
    this.box[1] += dy * this.box[3] / 10;
    this.applyBox();
    this.zoomedTo();
  };

  View.prototype.zoomCentre = function (factor) {
    var rect = this.graph.getBoundingClientRect();
    this.zoom(factor, rect.left + rect.width / 2, rect.top + rect.height / 2);
  };

  // Follows a `:serve` page's server-sent events: each brings a whole model
  // (and the `:step` position, if one is being shown). A dropped stream is
  // retried by the browser; one the browser gives up on (an error answer, a
  // failed connection) is opened again a second later, for as long as the
  // page is open, so the view comes back by itself when gradcalc answers.
  // (Not `follow`: that name pans to the current step's box, and a second
  // definition would replace it, opening an event stream at each step.)
  View.prototype.listen = function (path) {
    var self = this;
    var source = new EventSource(path);
    source.addEventListener("message", function (event) {
      var data = JSON.parse(event.data);
      // Without a model only the step moved (`:step`): the page stays.
      if (data.model) {
        self.show(data.model, data.step);
      } else if (self.model && !self.model.message && data.step !== null) {
        self.setStep(data.step);
      }
      self.root.setAttribute("data-version", String(data.version));
    });
    source.addEventListener("error", function () {
      self.tell("(gradcalc is not answering: the view shows the last state)");
      if (source.readyState === EventSource.CLOSED) {
        source.close();
        setTimeout(function () { self.listen(path); }, 1000);
      }
    });
  };

  return {
    // A view in `root`, with the keys bound: for the playground.
    // `options.keysOnGraph`: the view's keys only while the graph has the focus.
    create: function (root, options) {
      var view = new View(root);
      view.keys(options && options.keysOnGraph);
      return view;
    },
    // The page's start: the model in the page, then live updates if the page
    // is served (`data-live` on the body holds the events' path).
    start: function (root) {
      var view = GradcalcView.create(root);
      var script = document.getElementById("gradcalc-model");
      var model = JSON.parse(script.textContent);
      // `:html` writes its picture once, in the <noscript> part (raw text
      // where scripts run): the first view's SVG is taken from there.
      if (model.svg_in_noscript && model.views && model.views[0] && !model.views[0].svg) {
        var kept = document.querySelector("noscript");
        var text = kept ? kept.textContent : "";
        var from = text.indexOf("<svg");
        var to = text.lastIndexOf("</svg>");
        if (from >= 0 && to > from) model.views[0].svg = text.slice(from, to + "</svg>".length);
      }
      view.show(model);
      var live = document.body.getAttribute("data-live");
      if (live) view.listen(live);
      window.gradcalcView = view;
      return view;
    }
  };
})();
