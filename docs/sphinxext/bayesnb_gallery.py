"""The gallery's two hooks (sphinx-gallery takes them by name, so the configuration stays
picklable): each example's quick command-line settings, and a scraper that shows the PNG files
an example writes.

The examples are command-line scripts (``python examples/NAME.py ARGS``) that write their plots
to a folder (``--out``) and close them, so the gallery runs each with ``ARGS`` below (small
settings: the whole gallery executes in a few minutes) and an output folder of its own, and
embeds the PNG files that appear there. ``GALLERY_HEADER.rst`` in ``examples/`` lists these
settings for the reader."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

#: example -> its arguments in the gallery ("{out}": the example's output folder)
QUICK = {
    "coursework.py": [],
    "credal.py": [],
    "dask_and_chunks.py": [],
    "decisions.py": [],
    "dependence.py": ["--plot", "{out}/dependence.png"],
    "explain_and_loo.py": [],
    "feature_relevance.py": [],
    "learned_smoothing.py": ["--samples", "200"],
    "mcmc_arviz.py": ["--samples", "500", "--out", "{out}"],
    "mixed_missing.py": ["--rows", "600", "--out", "{out}"],
    "ml_map_bayes.py": ["--train-sizes", "8", "16", "32", "64", "--repeats", "5", "--out", "{out}"],
    "pooling.py": ["--samples", "200"],
    "semi_supervised.py": ["--samples", "200", "--unlabeled", "200"],
    "text_classification.py": [],
    "tree_augmented.py": [],
}

_ROOT = Path(tempfile.gettempdir()) / "bayesnb-gallery"


def output_folder(src_file: str) -> Path:
    """The empty folder an example writes its plots to in this build."""
    return _ROOT / Path(src_file).stem


def reset_argv(gallery_conf, script_vars) -> list[str]:
    """``sys.argv[1:]`` for the example being executed (sphinx-gallery's ``reset_argv``)."""
    src = Path(script_vars["src_file"])
    out = output_folder(str(src))
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    return [a.format(out=out) for a in QUICK[src.name]]


def png_scraper(block, block_vars, gallery_conf) -> str:
    """Embed the PNG files the example wrote since the last call, in name order, and close any
    matplotlib figure it left open (the files are what the script shows its user)."""
    from sphinx_gallery.scrapers import figure_rst

    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
    folder = output_folder(block_vars["src_file"])
    if not folder.is_dir():
        return ""
    seen = block_vars.setdefault("bayesnb_scraped", set())
    names = []
    for png in sorted(folder.glob("*.png")):
        if png.name in seen:
            continue
        seen.add(png.name)
        target = next(block_vars["image_path_iterator"])
        shutil.copyfile(png, target)
        names.append(target)
    # one figure a row, at full width (several at once would be shrunk side by side)
    return "".join(figure_rst([name], gallery_conf["src_dir"]) for name in names)
