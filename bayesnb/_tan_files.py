"""Model files of :class:`bayesnb.TreeAugmentedNB`: the format family of
:mod:`bayesnb.persistence` (a zip of ``manifest.json`` and ``arrays/NAME.npy``, data and never
code, read with the same size-capped, header-first readers), with its own ``format`` name,
``"bayesnb-tan-model"``, since its content is not a NaiveBayes'.

The manifest holds the settings (``alpha_ess``, ``tree`` as a mode or a list of column-position
pairs, ``class_alpha``), the classes, the columns and every column's levels. The arrays are the
sufficient statistics: ``class_count`` (K,), ``single`` (K, sum of the levels: each column's
level counts side by side), ``pair`` (K, sum over column pairs i < j of V_i V_j) and, where
given, ``edge_prior`` (F, F). Everything else is recomputed at load, so a loaded model predicts
exactly as the saved one. ``load`` checks every shape against the levels before reading the
data, and then that the counts are finite, non-negative and consistent (each pair table's
margins are its columns' counts, each column's counts sum to the class counts).
"""

from __future__ import annotations

import json
import os
import zipfile
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__
from .persistence import (
    MAX_EXPANSION,
    MAX_MANIFEST_BYTES,
    ModelFileError,
    _check_labels,
    _checked,
    _classes,
    _distinct,
    _Expect,
    _from_json,
    _json_scalar,
    _json_value,
    _list,
    _read_arrays,
    _read_manifest,
    _scalars,
    archive_errors,
    write_model_file,
)

FORMAT = "bayesnb-tan-model"
FORMAT_VERSION = 1


def save(model: Any, path: str | os.PathLike[str]) -> Path:
    """Write a fitted :class:`~bayesnb.TreeAugmentedNB` to ``path`` (module docs); this
    module does not import :mod:`bayesnb.tan`, which calls it."""
    if "posterior_" not in model.__dict__:
        raise ValueError("only a fitted model can be saved; call fit first.")
    stats = model.statistics_
    k = len(stats.class_count)
    arrays = {
        "class_count": np.asarray(stats.class_count, dtype=np.float64),
        "single": np.concatenate([n.reshape(k, -1) for n in stats.single], axis=1),
        "pair": (np.concatenate([n.reshape(k, -1) for n in stats.pair], axis=1)
                 if stats.pair else np.zeros((k, 0))),
    }
    fitted = model._fit_settings  # what the posterior was computed under, not a later set_params
    if fitted["edge_prior"] is not None:
        arrays["edge_prior"] = fitted["edge_prior"]
    tree = (fitted["tree"] if isinstance(fitted["tree"], str)
            else [[_json_scalar(c, "tree column") for c in e] for e in model.tree_])
    classes = model.classes_
    manifest = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "library_version": __version__,
        "settings": {"alpha_ess": fitted["alpha_ess"], "tree": tree,
                     "class_alpha": _json_value(model.class_alpha, "class_alpha")},
        "classes": {"dtype": classes.dtype.str if classes.dtype != object else "object",
                    "values": [_json_scalar(c, "class label") for c in classes]},
        "columns": [_json_scalar(c, "column") for c in model.columns_],
        "named_columns": bool(model.named_),
        "levels": [[_json_scalar(v, f"level of column {c!r}") for v in lv]
                   for c, lv in zip(model.columns_, model.levels_, strict=True)],
        "arrays": sorted(arrays),
    }
    text = json.dumps(manifest, indent=1, allow_nan=False)
    if len(text.encode("utf-8")) > MAX_MANIFEST_BYTES:
        raise ValueError(f"this model's manifest would take more than {MAX_MANIFEST_BYTES} "
                         "bytes.")
    return write_model_file(path, text, arrays)


def load(path: str | os.PathLike[str], build) -> Any:
    """Read a file written by :func:`save` and hand its checked parts (a dict: settings,
    classes, columns, levels, count tables) to ``build``, which makes the estimator; any
    problem, ``build``'s included, is a one-line ``ModelFileError``."""
    path = Path(path)
    with archive_errors(path):
        with zipfile.ZipFile(path) as zf:
            manifest = _read_manifest(zf, path)
            budget = MAX_EXPANSION * sum(i.compress_size for i in zf.infolist()) + 2**16
            layout = _checked(_layout, path, manifest, path, budget)
            arrays = _read_arrays(zf, layout["expected"], path)
    return _checked(build, path, _checked(_parts, path, layout, arrays))


def _layout(m, path, budget: int) -> dict:
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not a TreeAugmentedNB model file.")
    version = m.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or not (
            1 <= version <= FORMAT_VERSION):
        raise ModelFileError(f"{path}: format_version {version!r}; this bayesnb reads "
                             f"versions 1 to {FORMAT_VERSION}.")
    classes = _classes(m["classes"])
    _check_labels(classes, m["classes"]["values"])
    columns = _distinct(_scalars(m["columns"], "columns"), "columns")
    levels = tuple(_distinct(_scalars(lv, f"levels of column {c!r}"), f"levels of column {c!r}")
                   for c, lv in zip(columns, _list(m["levels"], "levels"), strict=True))
    if any(not lv for lv in levels):
        raise ValueError("a column has no levels.")
    settings = m["settings"]
    tree = settings["tree"]
    if not (tree in ("average", "map") or isinstance(tree, list)):
        raise ValueError(f"tree {tree!r} is not one bayesnb writes.")
    k, sizes = len(classes), [len(lv) for lv in levels]
    shapes = {"class_count": (k,), "single": (k, sum(sizes)),
              "pair": (k, sum(sizes[i] * sizes[j] for i, j in combinations(range(len(sizes)), 2))),
              "edge_prior": (len(sizes), len(sizes))}
    names = _list(m["arrays"], "arrays")
    if not {"class_count", "single", "pair"} <= set(names) <= set(shapes):
        raise ValueError(f"arrays {names} are not the ones a TreeAugmentedNB file holds.")
    if 8 * sum(int(np.prod(shapes[n])) for n in names) > budget:
        raise ValueError("the arrays the manifest implies are larger than the file can hold.")
    return {"classes": classes, "columns": columns, "levels": levels, "sizes": sizes,
            "named": bool(m["named_columns"]), "settings": settings,
            "expected": {n: _Expect(n, "f", shapes[n]) for n in names}}


def _parts(layout: dict, arrays: dict) -> dict:
    sizes, k = layout["sizes"], len(layout["classes"])
    for name, a in arrays.items():
        if not np.all(np.isfinite(a)) or (name != "edge_prior" and np.any(a < 0)):
            raise ValueError(f"array {name} holds negative, NaN or infinite counts.")
    single = tuple(np.split(arrays["single"], np.cumsum(sizes)[:-1], axis=1))
    pairs = list(combinations(range(len(sizes)), 2))  # none for one column
    cuts = np.cumsum([sizes[i] * sizes[j] for i, j in pairs])[:-1]
    pieces = np.split(arrays["pair"], cuts, axis=1) if pairs else []
    pair = tuple(p.reshape(k, sizes[i], sizes[j]) for (i, j), p in zip(pairs, pieces,
                                                                         strict=True))
    total = arrays["class_count"]
    for i, n in enumerate(single):
        if not np.allclose(n.sum(axis=1), total):
            raise ValueError(f"the counts of column {layout['columns'][i]!r} do not sum to the "
                             "class counts.")
    for (i, j), n in zip(pairs, pair, strict=True):
        if not (np.allclose(n.sum(axis=2), single[i]) and np.allclose(n.sum(axis=1), single[j])):
            raise ValueError(f"the joint counts of columns {layout['columns'][i]!r} and "
                             f"{layout['columns'][j]!r} disagree with their own counts.")
    s = layout["settings"]
    tree = s["tree"]
    if isinstance(tree, list):
        tree = [tuple(e) for e in tree]
    return {"alpha_ess": s["alpha_ess"], "tree": tree,
            "class_alpha": _from_json(s["class_alpha"]), "edge_prior": arrays.get("edge_prior"),
            "class_count": total, "single": single, "pair": pair,
            "classes": layout["classes"], "columns": layout["columns"],
            "named": layout["named"], "levels": layout["levels"]}
