#!/usr/bin/env bash
# Builds the Pyodide wheel of the Python package: gradcalc-VERSION-py3-none-any.whl,
# pure Python (python/gradcalc/, whose `_wasm.py` is the core under Pyodide)
# with the playground's WebAssembly build (web/dist/gradcalc.wasm, made by
# scripts/build-web.sh, run here) as package data. Pyodide's micropip installs
# it: `await micropip.install("URL or emfs:PATH of the wheel")`.
# Usage: scripts/build-pyodide-wheel.sh [OUT_DIR]   (default: target/pyodide)
# Set GRADCALC_SKIP_WEB_BUILD=1 to use the web/dist/gradcalc.wasm already built.
set -euo pipefail
out="$(realpath -m "${1:-$(dirname "$0")/../target/pyodide}")"
cd "$(dirname "$0")/.."
if [ -z "${GRADCALC_SKIP_WEB_BUILD:-}" ]; then
  scripts/build-web.sh >/dev/null
fi
python3 scripts/pyodide_wheel.py web/dist/gradcalc.wasm "$out"
