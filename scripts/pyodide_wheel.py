"""Writes the Pyodide wheel (see scripts/build-pyodide-wheel.sh): a pure-Python
wheel, tag py3-none-any, holding python/gradcalc/ and the WebAssembly build
as gradcalc/gradcalc.wasm, with the metadata of python/pyproject.toml (the
same name, version, description, classifiers and extras as the native
wheels) and the RECORD of PEP 376/427. The files get a fixed date, so the
same sources give the same bytes.

Usage: python3 scripts/pyodide_wheel.py WASM OUT_DIR  (prints the wheel's path)
"""

import base64
import hashlib
import os
import sys
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "python", "gradcalc")
# The package's files that run under Pyodide: every Python source and stub,
# and the typed marker (the compiled module aside), so that a module added to
# the package is never left out of this wheel.
FILES = sorted(
    name
    for name in os.listdir(PACKAGE)
    if name.endswith((".py", ".pyi")) or name == "py.typed"
)
DATE = (2020, 1, 1, 0, 0, 0)


def project():
    """``[project]`` of python/pyproject.toml."""
    path = os.path.join(ROOT, "python", "pyproject.toml")
    if tomllib is None:
        sys.exit("error: Python 3.11 or later is needed (tomllib) to read python/pyproject.toml")
    with open(path, "rb") as f:
        return tomllib.load(f)["project"]


def metadata(p):
    """The METADATA file (core metadata 2.1) of ``[project]`` ``p``."""
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
        f"Summary: {p['description']}",
        f"Keywords: {','.join(p.get('keywords', []))}",
        f"Author: {p['authors'][0]['name']}",
        f"License: {p['license']['text']}",
        f"Requires-Python: {p['requires-python']}",
    ]
    lines += [f"Classifier: {c}" for c in p.get("classifiers", [])]
    lines += [f"Project-URL: {k}, {v}" for k, v in p.get("urls", {}).items()]
    for extra, requirements in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in requirements]
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(ROOT, "python", p["readme"]), encoding="utf-8") as f:
        readme = f.read()
    return "\n".join(lines) + "\n\n" + readme


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    wasm, out = sys.argv[1], sys.argv[2]
    p = project()
    name, version = p["name"], p["version"]
    info = f"{name}-{version}.dist-info"
    entries = []
    for file in FILES:
        with open(os.path.join(PACKAGE, file), "rb") as f:
            entries.append((f"gradcalc/{file}", f.read()))
    with open(wasm, "rb") as f:
        entries.append(("gradcalc/gradcalc.wasm", f.read()))
    entries.append((f"{info}/METADATA", metadata(p).encode("utf-8")))
    wheel = "Wheel-Version: 1.0\nGenerator: gradcalc scripts/pyodide_wheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries.append((f"{info}/WHEEL", wheel.encode("utf-8")))
    record = [record_line(n, d) for n, d in entries] + [f"{info}/RECORD,,"]
    entries.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode("utf-8")))
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"{name}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for entry, data in entries:
            zinfo = zipfile.ZipInfo(entry, DATE)
            zinfo.compress_type = zipfile.ZIP_DEFLATED
            zinfo.external_attr = 0o644 << 16
            z.writestr(zinfo, data)
    print(path)


if __name__ == "__main__":
    main()
