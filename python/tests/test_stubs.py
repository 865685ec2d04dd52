"""The type stubs: `mypy --strict` accepts a typed example that uses
Session, Value, Error, draw, trace and show (tests/typed/example.py), finds
the stubs through `py.typed`, and the example runs."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("mypy")
pytest.importorskip("numpy")

EXAMPLE = os.path.join(os.path.dirname(__file__), "typed", "example.py")


def test_the_typed_example_passes_mypy_strict(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--cache-dir", str(tmp_path), EXAMPLE],
        capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("Success")


def test_a_wrong_use_is_caught(tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import gradcalc\ns = gradcalc.Session()\ns.grad('L')\nv: str = s.names()\n")
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), str(wrong)],
        capture_output=True, text=True,
    )
    assert out.returncode == 1
    assert 'Missing positional argument "wrt"' in out.stdout
    assert "Incompatible types in assignment" in out.stdout


def test_the_typed_example_runs():
    out = subprocess.run([sys.executable, EXAMPLE], capture_output=True, text=True, check=True)
    assert out.stdout.endswith(" <svg unknown-name\n")


def test_the_stubs_are_in_the_package():
    import gradcalc

    here = os.path.dirname(gradcalc.__file__)
    assert os.path.exists(os.path.join(here, "py.typed"))
    assert os.path.exists(os.path.join(here, "__init__.pyi"))
