#!/usr/bin/env bash
# Builds a static JupyterLite site (Jupyter in the browser on Pyodide: no
# server, nothing installed) with gradcalc and examples/lecture.ipynb, for a
# class: put the folder on any static web server (docs/notebook.md,
# "JupyterLite").
#
#   pip install jupyterlite-core==0.8.6 jupyterlite-pyodide-kernel==0.8.6 jupyter_server
#   scripts/build-jupyterlite.sh [--self-contained] [OUT_DIR] [NOTEBOOK.ipynb …]
#   python3 -m http.server --directory target/jupyterlite 8000
#
# OUT_DIR defaults to target/jupyterlite. The Pyodide wheel
# (scripts/build-pyodide-wheel.sh) goes into the site's own package index
# (pypi/), so `%pip install gradcalc` in a notebook installs it from the
# site; the lecture's copy in the site starts with that cell. Other notebooks
# given are added as they are.
#
# Without --self-contained the students' browsers load Pyodide and the
# kernel's packages from the jsDelivr CDN, as JupyterLite does by default.
# With it, the site holds them (scripts/jupyterlite_offline.py: Pyodide from
# the npm registry at the version jupyterlite-pyodide-kernel runs, the
# kernel's packages from PyPI) and needs nothing else: for a room without
# the internet. It needs npm; GRADCALC_PYODIDE_DIR may name a folder that
# already holds node_modules/pyodide of that version.
# Set GRADCALC_SKIP_WEB_BUILD=1 to use the web/dist/gradcalc.wasm already built.
set -euo pipefail
self_contained=
if [ "${1:-}" = --self-contained ]; then
  self_contained=1
  shift
fi
out="$(realpath -m "${1:-$(dirname "$0")/../target/jupyterlite}")"
shift || true
extra=()
for notebook in "$@"; do extra+=("$(realpath "$notebook")"); done
cd "$(dirname "$0")/.."
command -v jupyter >/dev/null 2>&1 && jupyter lite --version >/dev/null 2>&1 || {
  echo "error: jupyter lite is missing: pip install jupyterlite-core==0.8.6 jupyterlite-pyodide-kernel==0.8.6 jupyter_server" >&2
  exit 1
}
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
lite="$tmp/lite"
mkdir -p "$lite"
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
if [ -n "$self_contained" ]; then
  version="$(python3 -c 'from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION; print(PYODIDE_VERSION)')"
  npm_dir="${GRADCALC_PYODIDE_DIR:-$tmp/npm}"
  if [ "$(node -p "require('$npm_dir/node_modules/pyodide/package.json').version" 2>/dev/null)" != "$version" ]; then
    mkdir -p "$npm_dir"
    (cd "$npm_dir" && npm install --no-audit --no-fund --silent "pyodide@$version" >/dev/null)
  fi
  python3 scripts/jupyterlite_offline.py "$npm_dir/node_modules/pyodide" "$lite" >/dev/null
fi
rm -rf "$out"
# Its log (and its warnings about optional packages) only when it fails.
if ! (cd "$lite" && jupyter lite build --contents files --output-dir "$out" >"$tmp/build.log" 2>&1); then
  cat "$tmp/build.log" >&2
  exit 1
fi
test -f "$out/files/lecture.ipynb" && grep -q gradcalc "$out/pypi/all.json"
echo "built $out ($(du -sh "$out" | cut -f1)): serve it over HTTP and open lab/index.html"
