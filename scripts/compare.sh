#!/usr/bin/env bash
# gradcalc against micrograd 0.1.0 on the same machine, in one run: the four
# standard workloads (docs/benchmarks.md) through the library, the moons
# training of examples/moons.rs, and the CLI on a 100 000-statement W1 script.
#
#   scripts/compare.sh            # everything (a few minutes; micrograd is the slow side)
#   scripts/compare.sh --quick    # smaller sizes, a smoke test of the script itself
#
# micrograd is installed from PyPI into a throwaway virtual environment that is
# deleted on exit. Needs python3 (with venv) and cargo.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check micrograd==0.1.0
cargo build --quiet --release --example bench --example moons --bin gradcalc
"$work/venv/bin/python" scripts/compare.py --work "$work" "$@"
