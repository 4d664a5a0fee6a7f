"""Sphinx configuration of the bayesnb documentation.

Build (warnings are errors; the gallery executes every example with its quick settings)::

    pip install ".[docs]" && sphinx-build -W -b html docs docs/_build/html

``-D sphinx_gallery_conf.plot_gallery=0`` skips executing the examples (``tests/test_docs_build.py``
builds that way). Intersphinx inventories are fetched from the projects' sites at build time; on
a machine that cannot reach them the links render as plain text and the build still passes: the
one warning per project that says so is filtered out in ``setup`` below, and only that one."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
os.environ.setdefault("MPLBACKEND", "Agg")  # the gallery runs headless
sys.path.insert(0, str(DOCS / "sphinxext"))  # bayesnb_gallery: the gallery's argv and scraper
if (DOCS.parent / "bayesnb").is_dir():  # this checkout's bayesnb, not another installed one
    sys.path.insert(0, str(DOCS.parent))

import bayesnb  # noqa: E402

project = "bayesnb"
author = "bayesnb developers"
copyright = "bayesnb developers"  # noqa: A001 - Sphinx's name
release = version = bayesnb.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "sphinxext", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.json",
                    "auto_examples/*.md5", "auto_examples/*.pickle"]
templates_path = ["_templates"]

# -- MyST (Markdown pages, and the README sections they include) ------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- API reference ----------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True}
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
numpydoc_show_class_members = False  # the class template lists the members itself
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- Cross-project links --------------------------------------------------------------------
intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "scipy": ("https://docs.scipy.org/doc/scipy", None),
    "sklearn": ("https://scikit-learn.org/stable", None),
    "numpyro": ("https://num.pyro.ai/en/stable", None),
    "jax": ("https://docs.jax.dev/en/latest", None),
    "arviz": ("https://python.arviz.org/en/stable", None),
    "pandas": ("https://pandas.pydata.org/docs", None),
}
intersphinx_timeout = 10
# A build machine without internet access cannot fetch the inventories: Sphinx then warns
# "failed to reach any of the inventories" once per project, and the cross-project links render
# as plain text. That is not an error of these docs, so it must not fail `-W`; the warning is
# raised through the logger named below, which we filter (see setup()).

# -- Gallery ---------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"\.py$",  # execute every example, not only plot_*.py
    "ignore_pattern": r"__init__\.py",
    "reset_argv": "bayesnb_gallery.reset_argv",  # each example's quick settings
    "image_scrapers": ("bayesnb_gallery.png_scraper",),  # the PNG files an example writes
    "reset_modules": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "show_memory": False,
    "min_reported_time": 1,
    "plot_gallery": "True",
}

# -- HTML --------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "bayesnb"
html_theme_options = {
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False
# pages without sub-pages: no empty left sidebar, the text gets the width
html_sidebars = {page: [] for page in ("index", "getting_started", "coming_from_sklearn",
                                       "coming_from_r", "coursework")}
html_static_path: list[str] = []


class _NoUnreachableInventory:
    """Drops Sphinx's "failed to reach any of the inventories" warning (no internet at build
    time); every other warning stays an error under -W."""

    def filter(self, record) -> bool:  # logging.Filter protocol
        return "failed to reach any of the inventories" not in str(record.msg)


def _skip_metadata_routing(app, what, name, obj, skip, options):
    """scikit-learn generates ``set_fit_request`` & co. on every estimator (metadata routing);
    their docstrings are scikit-learn's, with links into its own glossary. They are documented
    there, not here."""
    if re.fullmatch(r"set_\w+_request", name):
        return True
    return None


def _constant_doc(app, what, name, obj, options, lines):
    """``bayesnb.METHODS`` and ``bayesnb.REGISTRY`` are a tuple and a dict, which carry no
    docstring of their own (autodoc would show the builtin type's). Their page gets the ``#:``
    comment on their definition and the Examples section of the defining module's docstring
    (which tests/test_doctests.py runs)."""
    import importlib

    from sphinx.pycode import ModuleAnalyzer

    short = name.removeprefix("bayesnb.")
    if what != "data" or short not in getattr(bayesnb, "_PUBLIC", {}):
        return
    module = f"bayesnb.{bayesnb._PUBLIC[short]}"
    analyzer = ModuleAnalyzer.for_module(module)
    analyzer.analyze()
    comment = list(analyzer.attr_docs.get(("", short), []))
    doc = importlib.import_module(module).__doc__ or ""
    heading = "Examples\n--------"
    examples = doc[doc.index(heading):].splitlines() if heading in doc else []
    if comment:
        lines[:] = [*comment, "", *examples]


def setup(app):
    import logging

    app.connect("autodoc-skip-member", _skip_metadata_routing)
    # before numpydoc's handler (priority 500), which then formats the Examples section
    app.connect("autodoc-process-docstring", _constant_doc, priority=400)
    # intersphinx's logger: sphinx.util.logging.getLogger("sphinx.ext.intersphinx")
    logging.getLogger("sphinx.sphinx.ext.intersphinx").addFilter(_NoUnreachableInventory())
