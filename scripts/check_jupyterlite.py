"""Opens a JupyterLite site built by `scripts/build-jupyterlite.sh
--self-contained` in headless Chromium, as a student would: the lecture on
JupyterLab's notebook page (`lab/index.html?path=lecture.ipynb`), waits for
its Pyodide kernel to be idle, clicks into the first cell and presses
Shift-Enter once per cell up to the first `%%gradcalc` cell (`%pip install
-q gradcalc` from the site's own index, `%load_ext gradcalc`, the tanh
neuron's cell, and the markdown between them). Then reads each cell's
prompt and output from the page's DOM: every code cell ran in order, none
shows an error, and the neuron's value and gradients are those computed by
hand. The site is served here, and Chromium resolves no other host name:
the check fails if the site needs the internet.

    python3 scripts/check_jupyterlite.py SITE

Chromium is driven over the DevTools protocol through a pipe (as
tests/it/browser.rs does), with no library; the keys and the click are
input events (`Input.dispatchKeyEvent`, `Input.dispatchMouseEvent`). Exits 0
when the checks hold, 1 with what the page showed otherwise; waits for
evidence on the page (at most WAIT seconds in all, then says which step did
not happen), never for a fixed time.
"""

import functools
import http.server
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

WAIT = 300


class Site(http.server.SimpleHTTPRequestHandler):
    """The site's files, with the types a module worker needs."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
        ".json": "application/json",
    }

    def log_message(self, *args):
        pass


class Chromium:
    """Headless Chromium with `--remote-debugging-pipe` (fds 3 and 4)."""

    def __init__(self, binary, profile):
        to_browser, self._commands = os.pipe()
        self._replies, from_browser = os.pipe()

        def pipes():
            os.dup2(to_browser, 3)
            os.dup2(from_browser, 4)

        self.process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--remote-debugging-pipe", "--no-first-run", "--window-size=1280,1024",
             # No host but this one resolves: the site must need nothing else.
             "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
             f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=pipes,
            close_fds=False,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._id = 0
        self.events = []

    def call(self, method, params=None, session=None):
        self._id += 1
        message = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def _read(self):
        while b"\0" not in self._buffer:
            chunk = os.read(self._replies, 1 << 16)
            if not chunk:
                raise EOFError("Chromium closed the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def close(self):
        self.process.terminate()
        self.process.wait()


def thrown(events):
    """The exceptions the page threw, as text."""
    return [
        e["params"]["exceptionDetails"].get("exception", {}).get("description")
        or e["params"]["exceptionDetails"].get("exception", {}).get("value")
        or e["params"]["exceptionDetails"].get("text", "")
        for e in events
        if e.get("method") == "Runtime.exceptionThrown"
    ]


def first_cells(site):
    """The lecture's cells (as they are in the site) up to its first
    `%%gradcalc` cell: `[(cell_type, source), …]`."""
    with open(os.path.join(site, "files", "lecture.ipynb"), encoding="utf-8") as f:
        notebook = json.load(f)
    cells = []
    for cell in notebook["cells"]:
        cells.append((cell["cell_type"], "".join(cell["source"])))
        if cell["cell_type"] == "code" and cells[-1][1].startswith("%%gradcalc"):
            return cells
    sys.exit("error: no %%gradcalc cell in the lecture")


def expected():
    """The neuron o = tanh(x1·w1 + x2·w2 + b) of the lecture's first cell, by
    hand: ∂o/∂n = 1 − o², ∂o/∂x1 = w1·(1 − o²), ∂o/∂w1 = x1·(1 − o²), …"""
    x1, x2, w1, w2, b = 2.0, 0.0, -3.0, 1.0, 6.8813735870195432
    o = math.tanh(x1 * w1 + x2 * w2 + b)
    d = 1 - o * o
    return {"o": o, "∂o/∂x1": w1 * d, "∂o/∂w1": x1 * d, "∂o/∂x2": w2 * d, "∂o/∂w2": x2 * d, "∂o/∂b": d}


# What the notebook page shows, read from its DOM: the kernel's name and
# status in the toolbar, which cell is active, and each cell's prompt and
# output text.
PAGE = """(() => {
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  return {
    kernel: (document.querySelector('.jp-Toolbar-kernelName') || {}).innerText || '',
    status: (document.querySelector('.jp-Notebook-ExecutionIndicator') || {dataset: {}}).dataset.status || '',
    active: cells.findIndex((c) => c.classList.contains('jp-mod-active')),
    dialog: (document.querySelector('.jp-Dialog') || {}).innerText || '',
    cells: cells.map((c) => ({
      prompt: (c.querySelector('.jp-InputPrompt') || {}).innerText || '',
      output: (c.querySelector('.jp-OutputArea') || {}).innerText || '',
    })),
  };
})()"""

# The centre of the first cell's editor, where a student clicks.
FIRST_CELL = """(() => {
  const r = document.querySelector('.jp-Notebook .jp-Cell .jp-InputArea-editor').getBoundingClientRect();
  return [r.x + r.width / 2, r.y + r.height / 2];
})()"""


class Page:
    """The notebook page in one tab, read and driven as a student would."""

    def __init__(self, browser, session, started):
        self.browser, self.session, self.started = browser, session, started
        self.shown = {}

    def evaluate(self, expression):
        reply = self.browser.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, self.session
        )
        return reply["result"].get("value")

    def wait(self, what, holds):
        """Polls the page until `holds(shown)`; exits with `what` and the
        page's state past WAIT seconds, or when the page threw."""
        while True:
            self.shown = self.evaluate(PAGE) or {}
            if holds(self.shown):
                return self.shown
            errors = thrown(self.browser.events)
            if errors or time.monotonic() - self.started > WAIT:
                why = "the page threw" if errors else f"not within {WAIT} s"
                self.fail(f"JupyterLite: {what}: {why}")
            time.sleep(0.25)  # between polls of the page, not a wait for a result

    def fail(self, message):
        print(message)
        print("the notebook page showed:", json.dumps(self.shown, ensure_ascii=False, indent=1)[-4000:])
        for error in thrown(self.browser.events):
            print("the page threw:", error[-1500:])
        raise SystemExit(1)

    def click(self, x, y):
        for kind in ["mousePressed", "mouseReleased"]:
            self.browser.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
                self.session,
            )

    def shift_enter(self):
        key = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "modifiers": 8}
        self.browser.call("Input.dispatchKeyEvent", {"type": "rawKeyDown", **key}, self.session)
        self.browser.call("Input.dispatchKeyEvent", {"type": "keyUp", **key}, self.session)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    site = os.path.abspath(sys.argv[1])
    binary = next((b for b in ["chromium", "chromium-browser", "google-chrome"] if shutil.which(b)), None)
    if binary is None:
        print("note: no Chromium; the JupyterLite site is not opened")
        return 0
    cells = first_cells(site)
    code = [i for i, (kind, _) in enumerate(cells) if kind == "code"]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Site, directory=site))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/lab/index.html?path=lecture.ipynb"
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as profile:
        browser = Chromium(binary, profile)
        try:
            target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            browser.call("Runtime.enable", {}, session)
            browser.call("Page.navigate", {"url": url}, session)
            page = Page(browser, session, started)
            # The notebook is open with its cells, and the Pyodide kernel has
            # started (its name in the toolbar, the indicator idle).
            page.wait(
                "the notebook did not open with an idle Pyodide kernel",
                lambda s: len(s.get("cells", [])) >= len(cells)
                and "Pyodide" in s["kernel"]
                and s["status"] == "idle",
            )
            ready = time.monotonic() - started
            # Click into the first cell, then Shift-Enter once per cell (a
            # markdown cell's Shift-Enter renders it): each runs the active
            # cell and makes the next one active.
            page.click(*page.evaluate(FIRST_CELL))
            page.wait("clicking the first cell did not make it active", lambda s: s["active"] == 0)
            for i in range(len(cells)):
                page.shift_enter()
                page.wait(f"Shift-Enter on cell {i + 1} did not move to the next cell", lambda s: s["active"] == i + 1)
            # Every code cell run has its execution count (not `[*]`).
            shown = page.wait(
                "the cells did not finish",
                lambda s: all(re.fullmatch(r"\[\d+\]:", s["cells"][i]["prompt"].strip()) for i in code),
            )
        finally:
            browser.close()
            server.shutdown()
    took = time.monotonic() - started
    text = shown["cells"][code[-1]]["output"]
    got = {name: float(value) for name, value in re.findall(r"^(o|∂o/∂\w+) = (-?[0-9.]+(?:e[-+]?[0-9]+)?)$", text, re.M)}
    failed = [
        f"{name} = {got.get(name)}, by hand {value}"
        for name, value in expected().items()
        if name not in got or not math.isclose(got[name], value, rel_tol=1e-9, abs_tol=1e-12)
    ]
    counts = [int(shown["cells"][i]["prompt"].strip()[1:-2]) for i in code]
    if counts != list(range(counts[0], counts[0] + len(code))):
        failed.append(f"the cells ran out of order: execution counts {counts}")
    errors = [i for i in code if "Error" in shown["cells"][i]["output"]]
    failed += [f"cell {i + 1} shows an error: {shown['cells'][i]['output'][-500:]}" for i in errors]
    if failed:
        print("JupyterLite: the lecture's first cells on the notebook page did not give the neuron's gradients:")
        print("\n".join("  " + line for line in failed))
        print("the last cell showed:\n" + text[-3000:])
        return 1
    print(f"JupyterLite: the notebook page opened lecture.ipynb with its kernel idle in {ready:.0f} s; "
          f"Shift-Enter ran its first {len(code)} code cells in {took - ready:.0f} s more: "
          + ", ".join(f"{k} = {v:g}" for k, v in got.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
