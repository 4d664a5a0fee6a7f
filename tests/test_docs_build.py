"""The documentation site builds with warnings as errors (``sphinx-build -W``), and every name of
``bayesnb.__all__`` and every example gets its page.

This builds a copy of ``docs/``, ``examples/`` and ``README.md`` in a temporary folder (the
generated API pages and gallery land there, not in the checkout), with the gallery's examples
rendered but not executed (``-D sphinx_gallery_conf.plot_gallery=0``: about 10 s instead of
minutes; ``tests/test_examples.py`` and the other example tests run the scripts). The full build,
which also executes the gallery, is the documented command::

    pip install ".[docs]" && sphinx-build -W -b html docs docs/_build/html

and ``.ci/run`` runs it (gallery executed) before the test suite.

The test is skipped when the ``docs`` extra is not installed (the README's test command installs
``.[test]`` only)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bayesnb

ROOT = Path(__file__).resolve().parents[1]
NEEDED = ("sphinx", "pydata_sphinx_theme", "numpydoc", "sphinx_gallery", "myst_parser")


def test_docs_build_with_warnings_as_errors(tmp_path):
    missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the docs extra is not installed (no {', '.join(missing)}): "
                    "pip install '.[docs]' to build the documentation in this test")
    for part in ("docs", "examples"):
        shutil.copytree(ROOT / part, tmp_path / part,
                        ignore=shutil.ignore_patterns("_build", "generated", "auto_examples",
                                                      "__pycache__"))
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    out = tmp_path / "html"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]), "MPLBACKEND": "Agg"}
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-D", "sphinx_gallery_conf.plot_gallery=0",
         str(tmp_path / "docs"), str(out)],
        capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-5000:]
    for name in bayesnb.__all__:  # one rendered reference page per public name
        page = out / "generated" / f"bayesnb.{name}.html"
        assert page.is_file(), name
        assert f"bayesnb.{name}" in page.read_text(encoding="utf-8"), name
    for name in api_entries(ROOT / "docs" / "api.rst"):  # the submodules' functions too
        assert (out / "generated" / f"{name}.html").is_file(), name
    for script in (ROOT / "examples").glob("*.py"):  # one gallery page per example
        assert (out / "auto_examples" / f"{script.stem}.html").is_file(), script.name
    for page in ("index", "getting_started", "coursework", "coming_from_r",
                 "coming_from_sklearn", "architecture", "user_guide/cli"):
        assert (out / f"{page}.html").is_file(), page


def api_entries(page: Path) -> list[str]:
    """Every ``module.name`` that ``api.rst``'s autosummary tables list, by the
    ``currentmodule`` above each."""
    module, entries, listing = "bayesnb", [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith(".. currentmodule::"):
            module = line.split("::")[1].strip()
        elif line.startswith(".. autosummary::"):
            listing = True
        elif listing and line.startswith("   ") and not line.strip().startswith(":"):
            entries.append(f"{module}.{line.strip()}")
        elif line.strip() and not line.startswith("   "):
            listing = False
    return entries


def test_the_api_reference_lists_the_submodule_functions_the_guides_import():
    """Each ``from bayesnb.<module> import <name>`` of the README and the guides names a
    function with a page in the API reference."""
    listed = set(api_entries(ROOT / "docs" / "api.rst"))
    assert {"bayesnb.NaiveBayes", "bayesnb.outofcore.fit_chunks"} <= listed
    pages = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    imported = {f"bayesnb.{module}.{name.strip()}"
                for page in pages
                for module, names in re.findall(r"from bayesnb\.(\w+) import ([\w, ]+)",
                                                page.read_text(encoding="utf-8"))
                for name in names.split(",") if name.strip()}
    # ConvergenceWarning is listed where users meet it, as bayesnb.ConvergenceWarning
    imported.discard("bayesnb.inference.ConvergenceWarning")
    assert imported and imported <= listed, sorted(imported - listed)
