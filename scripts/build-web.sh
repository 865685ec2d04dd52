#!/usr/bin/env bash
# Builds the playground into web/dist/: gradcalc's library compiled to
# WebAssembly (web/wasm, without the terminal parts: `--no-default-features`)
# and the static files beside it. Publish web/dist/ as it is, or try it with
#   python3 -m http.server --directory web/dist 8000
# Needs the target once: rustup target add wasm32-unknown-unknown
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --target wasm32-unknown-unknown --manifest-path web/wasm/Cargo.toml
mkdir -p web/dist
cp web/wasm/target/wasm32-unknown-unknown/release/gradcalc_web.wasm web/dist/gradcalc.wasm
cp web/index.html web/playground.js web/worker.js web/playground.css web/page.js web/page.css web/dist/
echo "built web/dist/ ($(du -sh web/dist | cut -f1)): serve it over HTTP and open index.html"
