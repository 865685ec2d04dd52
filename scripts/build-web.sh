#!/usr/bin/env bash
# Builds the playground into web/dist/: gradcalc's library compiled to
# WebAssembly (web/wasm, without the terminal parts: `--no-default-features`)
# and the static files beside it. Publish web/dist/ as it is, or try it with
#   python3 -m http.server --directory web/dist 8000
# Also web/dist/offline.html: the whole playground in one file (the module in
# base64, the worker as text), which works opened from disk (file://), where
# a browser refuses to read the files beside a page: for a room without a
# network or a server.
# Needs the target once: rustup target add wasm32-unknown-unknown
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --target wasm32-unknown-unknown --manifest-path web/wasm/Cargo.toml
mkdir -p web/dist
cp web/wasm/target/wasm32-unknown-unknown/release/gradcalc_web.wasm web/dist/gradcalc.wasm
cp web/index.html web/playground.js web/assignment.js web/worker.js web/playground.css web/page.js web/page.css web/dist/
python3 - <<'PY'
import base64, json
dist = "web/dist/"
page = open(dist + "index.html", encoding="utf-8").read()
def inline_script(name):
    return "<script>" + open(dist + name, encoding="utf-8").read().replace("</script", "<\\/script") + "</script>"
for name in ["page.css", "playground.css"]:
    css = open(dist + name, encoding="utf-8").read()
    page = page.replace('<link rel="stylesheet" href="%s">' % name, "<style>" + css + "</style>")
offline = {
    "wasm": base64.b64encode(open(dist + "gradcalc.wasm", "rb").read()).decode("ascii"),
    "worker": open(dist + "worker.js", encoding="utf-8").read(),
}
data = "<script>window.GRADCALC_OFFLINE = " + json.dumps(offline).replace("</", "<\\/") + ";</script>"
page = page.replace('<script src="page.js"></script>', inline_script("page.js"))
page = page.replace('<script src="playground.js"></script>', data + inline_script("playground.js"))
page = page.replace('<script src="assignment.js"></script>', inline_script("assignment.js"))
assert '<script src=' not in page and '<link rel="stylesheet"' not in page, "a file left outside offline.html"
open(dist + "offline.html", "w", encoding="utf-8").write(page)
PY
echo "built web/dist/ ($(du -sh web/dist | cut -f1)): serve it over HTTP and open index.html"
