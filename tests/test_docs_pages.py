"""The documentation's own pages (``docs/**/*.md``) and the README's links into them, checked
without building the site.

- Every ```python block of every page runs, a namespace per page, and prints the numbers it
  quotes: that is ``tests/test_readme.py``, which runs the README and the docs pages by the same
  rules (one parametrized case per block, ``docs/user_guide/mcmc.md:12``).
- The pages hold their own text: only ``getting_started.md`` includes README sections (MyST
  ``{include}``: the two commands and the quickstart, which the README's test cases run), and
  each of its ``start-after`` / ``end-before`` markers is found in README.md, so the page never
  silently loses its text when the README changes.
- The README is a front door (at most 200 lines) whose links into ``docs/`` lead to pages that
  exist, and it links every page of the user guide; every page of ``docs/`` is in a toctree.
- The API reference (``docs/api.rst``) lists every name of ``bayesnb.__all__``.

Building the site is ``tests/test_docs_build.py``."""

from __future__ import annotations

import re
from pathlib import Path

from test_readme import BLOCKS, PYTHON

import bayesnb

DOCS = Path(__file__).resolve().parents[1] / "docs"
README = DOCS.parent / "README.md"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts
               and "auto_examples" not in p.parts)
_INCLUDE = re.compile(r"```\{include\}\s*(?P<path>\S+)\n(?P<options>(?::[\w-]+:.*\n)*)```")
_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def test_every_page_with_code_is_run():
    """test_readme.py's cases cover every page that has a python block of its own."""
    run = {b.page for b in PYTHON}
    for page in PAGES:
        name = str(page.relative_to(DOCS.parent))
        if "```python" in page.read_text(encoding="utf-8"):
            assert name in run and name in BLOCKS, name
    assert {"docs/coursework.md", "docs/coming_from_r.md", "docs/coming_from_sklearn.md",
            "docs/user_guide/mcmc.md", "docs/user_guide/outofcore.md"} <= run
    # the docs pages run every block they show (the README's skip marker is not for them)
    assert not [b.id for b in PYTHON if b.page != "README.md" and b.skip is not None]


def test_only_getting_started_includes_the_readme_and_its_markers_are_there():
    readme = README.read_text(encoding="utf-8")
    found = {}
    for page in PAGES:
        for m in _INCLUDE.finditer(page.read_text(encoding="utf-8")):
            assert (page.parent / m["path"]).resolve() == README, (page, m["path"])
            options = dict(re.findall(r":([\w-]+):\s*\"(.*)\"", m["options"]))
            start = readme.find(options["start-after"]) if "start-after" in options else 0
            assert start >= 0, (page.name, options["start-after"])
            end = readme.find(options["end-before"], start) if "end-before" in options else -1
            assert "end-before" not in options or end > start, (page.name, options)
            part = readme[start:end] if end > 0 else readme[start:]
            # an included part must not hold the README's links into docs/: they would not
            # resolve from the page
            assert "](docs/" not in part, (page.name, options)
            found.setdefault(page.name, []).append(options["start-after"])
    assert found == {"getting_started.md": ["## Two commands (fresh machine: Python 3.11 and pip)",
                                            "## Quickstart"]}, found


def test_readme_is_a_front_door_with_links_that_lead_somewhere():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    targets = [m["target"] for m in _LINK.finditer(text) if "://" not in m["target"]]
    for target in targets:
        path = target.split("#")[0]
        assert (README.parent / path).is_file(), target
    linked = {t.split("#")[0] for t in targets}
    for page in PAGES:
        if page.parent.name == "user_guide":
            assert str(page.relative_to(DOCS.parent)) in linked, page.name


def test_every_page_is_in_a_toctree():
    listed = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for tree in re.findall(r"```\{toctree\}\n(.*?)```", text, re.DOTALL):
            for entry in tree.splitlines():
                entry = entry.strip()
                if entry and not entry.startswith(":"):
                    listed.add((page.parent / entry).relative_to(DOCS).as_posix())
    pages = {p.relative_to(DOCS).with_suffix("").as_posix() for p in PAGES} - {"index"}
    assert pages <= listed, pages - listed


def test_api_reference_lists_every_public_name():
    """The sections of top-level names list exactly ``bayesnb.__all__`` (the submodules'
    functions follow in sections of their own)."""
    from test_docs_build import api_entries

    listed = {name.split(".", 1)[1] for name in api_entries(DOCS / "api.rst")
              if name.count(".") == 1}
    assert listed == set(bayesnb.__all__), (set(bayesnb.__all__) ^ listed)
