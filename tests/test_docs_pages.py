"""The documentation's own pages (``docs/**/*.md``), checked without building them.

- Every ```python block a page writes itself runs, in order, in one namespace per page (a fresh
  one for each page, in a temporary working folder), and prints the numbers its ``# prints``
  comments and ```text output blocks quote, by the rules of ``tests/test_readme.py`` (the same
  parser and checker). The user guide's pages *include* sections of README.md (MyST
  ``{include}``), whose blocks ``test_readme.py`` runs; those are not run twice.
- Every ``{include}`` marker (``start-after`` / ``end-before``) is found in README.md, so a page
  never silently loses its text when the README changes.
- The API reference (``docs/api.rst``) lists every name of ``bayesnb.__all__``.

Building the site is ``tests/test_docs_build.py``."""

from __future__ import annotations

import os
import re
import traceback
import warnings
from pathlib import Path

import pytest
from test_readme import Block, parse_readme, run_block

import bayesnb

DOCS = Path(__file__).resolve().parents[1] / "docs"
README = DOCS.parent / "README.md"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts
               and "auto_examples" not in p.parts)
_INCLUDE = re.compile(r"```\{include\}\s*(?P<path>\S+)\n(?P<options>(?::[\w-]+:.*\n)*)```")


def page_blocks(page: Path) -> list[Block]:
    return [b for b in parse_readme(page.read_text(encoding="utf-8")) if b.lang == "python"]


WITH_CODE = [p for p in PAGES if page_blocks(p)]


@pytest.mark.parametrize("page", WITH_CODE, ids=[str(p.relative_to(DOCS)) for p in WITH_CODE])
def test_page_blocks_run_and_print_what_they_quote(page, tmp_path):
    namespace = {"__name__": "__docs__"}
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        for block in page_blocks(page):
            assert block.skip is None, f"{page.name}:{block.line}: docs pages skip no block"
            try:
                with warnings.catch_warnings():
                    problems = run_block(block, namespace)
            except Exception:  # noqa: BLE001 - reported with the block's place
                problems = [traceback.format_exc(limit=-6)]
            assert not problems, f"{page.relative_to(DOCS)}:{block.line}:\n" + "\n".join(problems)
    finally:
        os.chdir(old)


def test_include_markers_are_in_the_readme():
    readme = README.read_text(encoding="utf-8")
    found = 0
    for page in PAGES:
        for m in _INCLUDE.finditer(page.read_text(encoding="utf-8")):
            assert (page.parent / m["path"]).resolve() == README, (page, m["path"])
            options = dict(re.findall(r":([\w-]+):\s*\"(.*)\"", m["options"]))
            start = readme.find(options["start-after"]) if "start-after" in options else 0
            assert start >= 0, (page.name, options["start-after"])
            if "end-before" in options:
                assert readme.find(options["end-before"], start) > start, (page.name, options)
            found += 1
    assert found >= 15  # the user guide is made of README sections


def test_api_reference_lists_every_public_name():
    listed = set(re.findall(r"^   (\w+)$", (DOCS / "api.rst").read_text(), re.MULTILINE))
    assert listed == set(bayesnb.__all__), (set(bayesnb.__all__) ^ listed)
