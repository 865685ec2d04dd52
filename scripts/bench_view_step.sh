#!/usr/bin/env bash
# The cost of one step of the graph view (web/page.js, the page of `:html`,
# `:serve` and the playground) on a graph of about 500 nodes, the most the
# view draws, measured in headless Chromium with the Performance API.
#
# The graph: `a0 = 0.5`, `a1 = 0.4`, then `aI = tanh(aI-1*0.9 + aI-2)` up to
# a124 (498 nodes, 249 value boxes, 372 backward steps). Its page (`:html`)
# gets a script that, after the view has drawn, shows every step 1..last in
# turn (`setStep`, as → does) and forces the browser's style and layout after
# each (`getBoundingClientRect`), timing each with `performance.now()`; then
# it goes back from the last step to 0 the same way. Painting is not in the
# figure (it is the compositor's, off the main thread).
#
# The figure with painting and raster, from Chromium's own trace (the key to
# the frame that shows the step, and the CPU time of every thread of the
# page's renderer), is printed by the test tests/it/view_step.rs in the
# playground (web/dist/, scripts/build-web.sh); `--trace` runs it:
#   scripts/bench_view_step.sh --trace
#
# Usage: scripts/bench_view_step.sh [BINARY] [CHROMIUM]
#   BINARY    default target/debug/gradcalc (`cargo build`)
#   CHROMIUM  default: chromium on PATH
# Prints the median, the 90th percentile and the largest step in ms
# (docs/benchmarks.md, "One step of the graph view").
set -euo pipefail
if [ "${1:-}" = "--trace" ]; then
  cargo test -q --test it -- view_step:: --nocapture 2>&1 | grep '^view step'
  exit 0
fi
bin=${1:-target/debug/gradcalc}
chromium=${2:-$(command -v chromium || command -v chromium-browser || true)}
[ -x "$bin" ] || { echo "no $bin: cargo build" >&2; exit 1; }
[ -n "$chromium" ] || { echo "no Chromium: apt-get install chromium" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
{
  echo "a0 = 0.5"
  echo "a1 = 0.4"
  for i in $(seq 2 124); do echo "a$i = tanh(a$((i - 1))*0.9 + a$((i - 2)))"; done
} >"$dir/graph.calc"
bin=$(realpath "$bin")
(cd "$dir" && "$bin" graph.calc -e ":html view.html" >/dev/null)
cat >>"$dir/view.html" <<'JS'
<script>
(function () {
  var view = window.gradcalcView, last = view.lastStep(), times = [];
  var graph = view.graph;
  function step(k) {
    var t0 = performance.now();
    view.setStep(k);
    graph.querySelector("svg").getBoundingClientRect(); // style and layout now
    times.push(performance.now() - t0);
  }
  view.setStep(0);
  for (var k = 1; k <= last; k++) step(k);
  for (var k = last - 1; k >= 0; k--) step(k);
  times.sort(function (a, b) { return a - b; });
  var at = function (q) { return times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(2); };
  var pre = document.createElement("pre");
  pre.id = "bench";
  pre.textContent = "boxes " + view.boxes.length + ", steps " + last + ", " + times.length +
    " steps timed: median " + at(0.5) + " ms, p90 " + at(0.9) + " ms, max " + times[times.length - 1].toFixed(2) + " ms";
  document.body.appendChild(pre);
})();
</script>
JS
"$chromium" --headless --no-sandbox --disable-gpu --window-size=1920,1080 --dump-dom \
  "file://$dir/view.html" 2>/dev/null | sed -n 's/.*<pre id="bench">\([^<]*\)<\/pre>.*/\1/p'
