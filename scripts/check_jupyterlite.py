"""Opens a JupyterLite site built by `scripts/build-jupyterlite.sh
--self-contained` in headless Chromium and runs the lecture's first code
cells there: `%pip install -q gradcalc` (from the site's own index),
`%load_ext gradcalc` and the tanh neuron's `%%gradcalc` cell, in the site's
console (`repl/index.html?code=…`, which runs each `code` in order on the
site's Pyodide kernel). Checks the neuron's value and gradients against
those computed by hand. The site is served here, and Chromium resolves no
other host name: the check fails if the site needs the internet.

    python3 scripts/check_jupyterlite.py SITE

Chromium is driven over the DevTools protocol through a pipe (as
tests/it/browser.rs does), with no library. Exits 0 when the checks hold,
1 with what the console showed otherwise; waits for the output (at most
WAIT seconds), never for a fixed time.
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
import urllib.parse

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
            [binary, "--headless", "--no-sandbox", "--remote-debugging-pipe", "--no-first-run",
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
    """The lecture's code cells up to its first `%%gradcalc` cell."""
    with open(os.path.join(site, "files", "lecture.ipynb"), encoding="utf-8") as f:
        notebook = json.load(f)
    cells = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cells.append("".join(cell["source"]))
            if cells[-1].startswith("%%gradcalc"):
                return cells
    sys.exit("error: no %%gradcalc cell in the lecture")


def expected():
    """The neuron o = tanh(x1·w1 + x2·w2 + b) of the lecture's first cell, by
    hand: ∂o/∂n = 1 − o², ∂o/∂x1 = w1·(1 − o²), ∂o/∂w1 = x1·(1 − o²), …"""
    x1, x2, w1, w2, b = 2.0, 0.0, -3.0, 1.0, 6.8813735870195432
    o = math.tanh(x1 * w1 + x2 * w2 + b)
    d = 1 - o * o
    return {"o": o, "∂o/∂x1": w1 * d, "∂o/∂w1": x1 * d, "∂o/∂x2": w2 * d, "∂o/∂w2": x2 * d, "∂o/∂b": d}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    site = os.path.abspath(sys.argv[1])
    binary = next((b for b in ["chromium", "chromium-browser", "google-chrome"] if shutil.which(b)), None)
    if binary is None:
        print("note: no Chromium; the JupyterLite site is not opened")
        return 0
    cells = first_cells(site)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Site, directory=site))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    query = "&".join(["kernel=python"] + ["code=" + urllib.parse.quote(c) for c in cells])
    url = f"http://127.0.0.1:{server.server_address[1]}/repl/index.html?{query}"
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as profile:
        browser = Chromium(binary, profile)
        try:
            target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            browser.call("Runtime.enable", {}, session)
            browser.call("Page.navigate", {"url": url}, session)
            text = ""
            # The last cell's output ends with its last gradient (or an
            # error); an exception in the page (the kernel failing to start)
            # ends the wait too.
            while (
                time.monotonic() - started < WAIT
                and not re.search(r"∂o/∂b = \S+|Error", text)
                and not thrown(browser.events)
            ):
                shown = browser.call(
                    "Runtime.evaluate",
                    {"expression": "(document.querySelector('.jp-CodeConsole-content') || {}).innerText || ''",
                     "returnByValue": True},
                    session,
                )
                text = shown["result"].get("value", "")
                time.sleep(0.5)  # between polls of the page, not a wait for a result
        finally:
            browser.close()
            server.shutdown()
    took = time.monotonic() - started
    got = {name: float(value) for name, value in re.findall(r"^(o|∂o/∂\w+) = (-?[0-9.]+(?:e[-+]?[0-9]+)?)$", text, re.M)}
    failed = [
        f"{name} = {got.get(name)}, by hand {value}"
        for name, value in expected().items()
        if name not in got or not math.isclose(got[name], value, rel_tol=1e-9, abs_tol=1e-12)
    ]
    if failed:
        print("JupyterLite: the lecture's first cells did not give the neuron's gradients:")
        print("\n".join("  " + line for line in failed))
        print("the console showed:\n" + text[-3000:])
        for error in thrown(browser.events):
            print("the page threw:", error[-1500:])
        return 1
    print(f"JupyterLite: the lecture's first {len(cells)} cells ran in Chromium in {took:.0f} s: "
          + ", ".join(f"{k} = {v:g}" for k, v in got.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
