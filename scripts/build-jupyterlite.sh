#!/usr/bin/env bash
# Builds a static JupyterLite site (Jupyter in the browser on Pyodide: no
# server, nothing installed) with gradcalc and examples/lecture.ipynb, for a
# class: put the folder on any static web server (docs/notebook.md,
# "JupyterLite").
#
#   pip install jupyterlite-core==0.8.6 jupyterlite-pyodide-kernel==0.8.6 jupyter_server
#   scripts/build-jupyterlite.sh [OUT_DIR]          (default: target/jupyterlite)
#   python3 -m http.server --directory target/jupyterlite 8000
#
# The Pyodide wheel (scripts/build-pyodide-wheel.sh) goes into the site's own
# package index (pypi/), so `%pip install gradcalc` in a notebook installs it
# from the site; the lecture's copy in the site starts with that cell. Other
# notebooks (*.ipynb) given after OUT_DIR are added as they are.
# Set GRADCALC_SKIP_WEB_BUILD=1 to use the web/dist/gradcalc.wasm already built.
set -euo pipefail
out="$(realpath -m "${1:-$(dirname "$0")/../target/jupyterlite}")"
shift || true
extra=()
for notebook in "$@"; do extra+=("$(realpath "$notebook")"); done
cd "$(dirname "$0")/.."
command -v jupyter >/dev/null 2>&1 && jupyter lite --version >/dev/null 2>&1 || {
  echo "error: jupyter lite is missing: pip install jupyterlite-core==0.8.6 jupyterlite-pyodide-kernel==0.8.6 jupyter_server" >&2
  exit 1
}
lite="$(mktemp -d)"
trap 'rm -rf "$lite"' EXIT
scripts/build-pyodide-wheel.sh "$lite/pypi" >/dev/null
mkdir -p "$lite/files"
python3 - examples/lecture.ipynb "$lite/files/lecture.ipynb" <<'PY'
import json, sys
source, target = sys.argv[1:]
notebook = json.load(open(source, encoding="utf-8"))
install = {
    "cell_type": "code",
    "execution_count": None,
    "id": "jupyterlite-install",
    "metadata": {},
    "outputs": [],
    "source": ["# JupyterLite: gradcalc from this site's own package index\n", "%pip install -q gradcalc"],
}
notebook["cells"].insert(0, install)
json.dump(notebook, open(target, "w", encoding="utf-8"), indent=1, ensure_ascii=False)
PY
for notebook in "${extra[@]}"; do cp "$notebook" "$lite/files/"; done
rm -rf "$out"
(cd "$lite" && jupyter lite build --contents files --output-dir "$out" >/dev/null)
test -f "$out/files/lecture.ipynb" && grep -q gradcalc "$out/pypi/all.json"
echo "built $out ($(du -sh "$out" | cut -f1)): serve it over HTTP and open lab/index.html"
