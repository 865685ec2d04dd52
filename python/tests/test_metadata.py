"""The repository's address is set in one place, the crate's
``Cargo.toml`` (``repository``): the crate's ``homepage`` and every address
of the Python package's ``[project.urls]`` start with it, and the Python
crate (never published) names it as its ``homepage`` only (``cargo
package``, run by maturin's sdist, warns without one). A maintainer who sets it
before publishing (docs/notebook.md, "Publishing a release") sees here
which other address still needs the change."""

import os
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def toml(*path):
    with open(os.path.join(ROOT, *path), "rb") as f:
        return tomllib.load(f)


def test_every_address_starts_with_the_crates_repository():
    crate = toml("Cargo.toml")["package"]
    repository = crate["repository"]
    assert repository.startswith("https://") and not repository.endswith("/")
    assert crate["homepage"] == repository
    urls = toml("python", "pyproject.toml")["project"]["urls"]
    assert urls["Repository"] == repository
    assert urls["Homepage"] == repository
    others = {name: url for name, url in urls.items() if not url.startswith(repository + "/") and url != repository}
    assert others == {}, f"set these to addresses under {repository}"
    python_crate = toml("python", "Cargo.toml")["package"]
    assert "repository" not in python_crate
    assert python_crate["homepage"] == repository
