"""Makes a JupyterLite site self-contained (scripts/build-jupyterlite.sh
--self-contained): Pyodide itself and the packages its kernel installs go
into the site, so that it needs no CDN.

    python3 scripts/jupyterlite_offline.py NPM_PYODIDE LITE_DIR

NPM_PYODIDE is node_modules/pyodide of `npm install pyodide@VERSION` (the
version jupyterlite-pyodide-kernel runs): its interpreter files go to
LITE_DIR/static/pyodide/, which `jupyter lite build` copies into the site and
points the kernel at. The npm package has no packages, so Pyodide's lock file
is cut down to micropip, whose wheel comes from PyPI at the lock's version
(its sha256 the PyPI wheel's); every other package the kernel installs
(IPython, jedi and what they need, at the lock's versions, and comm) goes to
LITE_DIR/pypi/ as wheels from PyPI, where the kernel's piplite finds them
before any index on the internet. Uses `python -m pip download`.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys

# The interpreter's files (no packages, no source maps, no consoles).
CORE = ["pyodide.asm.mjs", "pyodide.asm.wasm", "pyodide.mjs", "pyodide.js", "python_stdlib.zip", "package.json"]
# What the kernel installs when it starts (jupyterlite-pyodide-kernel's
# worker: ipykernel and pyodide-kernel come with it; these do not).
KERNEL = ["ipython", "jedi"]
# Needed by the kernel and not in Pyodide's lock file: from PyPI, pinned.
NOT_IN_LOCK = ["comm==0.2.3", "ipython-pygments-lexers==1.1.1"]


def normal(name):
    return name.lower().replace("_", "-")


def closure(packages, names):
    """The lock's packages that ``names`` need, with their versions."""
    seen = {}
    todo = [normal(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        spec = packages[name]
        seen[name] = spec["version"]
        todo += [normal(d) for d in spec["depends"]]
    return seen


def download(requirements, dest, python):
    """Pure-Python wheels of ``requirements`` for CPython ``python`` into ``dest``."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
         "--python-version", python, "-d", dest, *requirements],
        check=True,
    )


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    npm, lite = sys.argv[1:]
    static = os.path.join(lite, "static", "pyodide")
    os.makedirs(static, exist_ok=True)
    for name in CORE:
        shutil.copy(os.path.join(npm, name), static)
    with open(os.path.join(npm, "pyodide-lock.json"), encoding="utf-8") as f:
        lock = json.load(f)
    python = ".".join(lock["info"]["python"].split(".")[:2])
    packages = {normal(name): spec for name, spec in lock["packages"].items()}
    micropip = packages["micropip"]
    if micropip["depends"]:
        sys.exit(f"error: micropip needs {micropip['depends']} in this Pyodide: not handled")
    download([f"micropip=={micropip['version']}"], static, python)
    wheel = os.path.join(static, micropip["file_name"])
    with open(wheel, "rb") as f:
        micropip["sha256"] = hashlib.sha256(f.read()).hexdigest()
    lock["packages"] = {"micropip": micropip}
    with open(os.path.join(static, "pyodide-lock.json"), "w", encoding="utf-8") as f:
        json.dump(lock, f)
    needed = closure(packages, KERNEL)
    pins = [f"{name}=={version}" for name, version in sorted(needed.items())] + NOT_IN_LOCK
    download(pins, os.path.join(lite, "pypi"), python)
    print(f"Pyodide {lock['info'].get('version', '')} (Python {python}) and {len(pins)} kernel packages in {lite}")


if __name__ == "__main__":
    main()
