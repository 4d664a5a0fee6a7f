"""Saving and loading fitted models: data, never code.

A model file (``.bnb``) is a zip archive holding

* ``manifest.json``: ``{"format": "bayesnb-model", "format_version": 1, ...}``, the estimator's
  settings, the classes, the columns, and per block the family name, its hyperparameters, its
  schema (columns, category levels) and the names of its arrays;
* one ``.npy`` file per array (prior hyperparameters, sufficient statistics, class counts, the
  NUTS draws and sample statistics of an MCMC fit, or the stated tables of a model built with
  ``from_tables``), read with ``allow_pickle=False``.

Nothing in a file is executed or unpickled at load: families are looked up by name in
``bayesnb.families.REGISTRY``, and every array is checked against the shape its family expects.
Labels, columns and category levels must be strings, integers, floats or booleans (JSON types).
A model round-trips exactly: the loaded model's arrays are bit-identical to the saved ones, so
its predictions are identical under the same dtype mode (x64 on or off).

Format versions: 1 (this release). Files of an older version keep loading; a newer version is
refused with a clear error. A prior field that a later release adds is recomputed from the
stored hyperparameters when an older file lacks it (``models/*_v1.bnb`` are such files: they
predate Categorical's ``unseen`` field).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from . import __version__
from .estimator import FittedBlock, NaiveBayes
from .families import REGISTRY, Schema

FORMAT = "bayesnb-model"
FORMAT_VERSION = 1


class ModelFileError(ValueError):
    """A model file that is corrupt, truncated, of an unknown version or inconsistent."""


# ---------------------------------------------------------------------- save
def save(model: NaiveBayes, path) -> Path:
    """Write a fitted ``NaiveBayes`` to ``path`` (conventionally ``*.bnb``)."""
    if not hasattr(model, "blocks_"):
        raise ValueError("only a fitted model can be saved; call fit first.")
    if getattr(model, "priors", None):
        raise TypeError("a model with NumPyro prior distributions (priors=...) cannot be saved: "
                        "a distribution is code, and model files hold data only.")
    arrays: dict[str, np.ndarray] = {}

    def put(name, value):
        arrays[name] = np.asarray(value)
        return name

    blocks = []
    from_tables = model.__dict__.get("_state", (None,))[0] == "tables"
    tables = model.__dict__["_state"][1][3] if from_tables else None
    for i, b in enumerate(model.blocks_):
        entry = {
            "family": b.family.name,
            "hyper": {k: _json_value(v, f"hyperparameter {k}")
                      for k, v in b.family.get_params().items()},
            "columns": [_json_scalar(c, "column") for c in b.schema.columns],
            "levels": [[_json_scalar(v, f"level of column {c!r}") for v in lv]
                       for c, lv in zip(b.schema.columns, b.schema.levels, strict=False)],
            "positions": [int(p) for p in b.positions],
        }
        if from_tables:
            entry["tables"] = {f: put(f"block{i}/tables/{f}", v)
                               for f, v in zip(tables[i]._fields, tables[i], strict=True)}
        else:
            entry["prior"] = {f: put(f"block{i}/prior/{f}", v)
                              for f, v in zip(b.prior._fields, b.prior, strict=True)}
            entry["stats"] = {f: put(f"block{i}/stats/{f}", v)
                              for f, v in zip(b.stats._fields, b.stats, strict=True)}
        blocks.append(entry)

    class_prior = model.class_prior
    if isinstance(class_prior, dict):
        class_prior = [float(class_prior[c]) for c in model.classes_]
    draws = {}
    if "draws_" in model.__dict__:
        draws = {"posterior": {site: put(f"draws/{site}", v) for site, v in model.draws_.items()},
                 "sample_stats": {k: put(f"sample_stats/{k}", v)
                                  for k, v in model.sample_stats_.items()}}
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "kind": "tables" if from_tables else "fitted",
        "method": model.method,
        "class_alpha": _json_value(model.class_alpha, "class_alpha"),
        "class_prior": None if class_prior is None else _json_value(class_prior, "class_prior"),
        "classes": {"dtype": model.classes_.dtype.str if model.classes_.dtype != object
                    else "object",
                    "values": [_json_scalar(c, "class label") for c in model.classes_]},
        "columns": [_json_scalar(c, "column") for c in model._columns],
        "named_columns": hasattr(model, "feature_names_in_"),
        "class_count": put("class_count", model.class_count_),
        "blocks": blocks,
        "mcmc": {k: _json_value(v, k) for k, v in model._mcmc_settings().items()},
        "draws": draws,
    }
    path = Path(path)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", json.dumps(manifest, indent=1))
        for name, arr in arrays.items():
            buf = io.BytesIO()
            np.save(buf, arr, allow_pickle=False)
            zf.writestr(f"arrays/{name}.npy", buf.getvalue())
    return path


def _json_scalar(v, what):
    if isinstance(v, np.generic):
        v = v.item()
    if v is None or isinstance(v, bool | int | float | str):
        return v
    raise TypeError(f"cannot save {what} {v!r} of type {type(v).__name__}: model files hold "
                    "strings, integers, floats and booleans only.")


def _json_value(v, what):
    if v is None or isinstance(v, bool | int | float | str | np.generic):
        return _json_scalar(v, what)
    if isinstance(v, list | tuple | np.ndarray):
        return [_json_value(x, what) for x in v]
    raise TypeError(f"cannot save {what} of type {type(v).__name__}.")


# ---------------------------------------------------------------------- load
def load(path) -> NaiveBayes:
    """Read a model written by :func:`save` (any supported format version)."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as zf:
            try:
                manifest = json.loads(zf.read("manifest.json").decode("utf-8"))
            except KeyError:
                raise ModelFileError(f"{path}: not a bayesnb model (no manifest).") from None
            arrays = {n[len("arrays/"):-len(".npy")]: _read_array(zf, n, path)
                      for n in zf.namelist() if n.startswith("arrays/")}
    except zipfile.BadZipFile as err:
        raise ModelFileError(f"{path}: corrupt or truncated model file ({err}).") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ModelFileError(f"{path}: unreadable manifest ({err}).") from None
    except FileNotFoundError:
        raise
    except (OSError, EOFError) as err:
        raise ModelFileError(f"{path}: corrupt or truncated model file ({err}).") from None
    try:
        return _build(manifest, arrays, path)
    except ModelFileError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise ModelFileError(f"{path}: inconsistent model file ({type(err).__name__}: "
                             f"{err}).") from None


def _read_array(zf, name, path):
    try:
        return np.load(io.BytesIO(zf.read(name)), allow_pickle=False)
    except ValueError as err:  # object arrays would need pickle: refuse
        raise ModelFileError(f"{path}: array {name} cannot be read safely ({err}).") from None


def _build(manifest, arrays, path) -> NaiveBayes:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not a bayesnb model file.")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise ModelFileError(f"{path}: invalid format_version {version!r}.")
    if version > FORMAT_VERSION:
        raise ModelFileError(f"{path}: written in format version {version} by bayesnb "
                             f"{manifest.get('library_version')}; this bayesnb "
                             f"({__version__}) reads versions up to {FORMAT_VERSION}.")

    def get(name):
        if name not in arrays:
            raise ModelFileError(f"{path}: array {name!r} is missing.")
        return arrays[name]

    cls_info = manifest["classes"]
    dtype = object if cls_info["dtype"] == "object" else np.dtype(cls_info["dtype"])
    classes = np.array(cls_info["values"], dtype=dtype)
    n_classes = len(classes)
    class_prior = manifest["class_prior"]
    if class_prior is not None:
        class_prior = np.asarray(class_prior, dtype=np.float64)
    tables_kind = manifest["kind"] == "tables"

    blocks, tables, features = [], [], {}
    for entry in manifest["blocks"]:
        name = entry["family"]
        if name not in REGISTRY:
            raise ModelFileError(f"{path}: unknown family {name!r} (known: {list(REGISTRY)}).")
        family_cls = REGISTRY[name]
        hyper = {k: _from_json(v) for k, v in entry["hyper"].items()}
        family = family_cls(**hyper)
        columns = tuple(entry["columns"])
        schema = Schema(columns=columns, levels=tuple(tuple(lv) for lv in entry["levels"]))
        for c in columns:
            features[c] = family
        if tables_kind:
            table = family_cls.params_type(**{f: jnp.asarray(get(a))
                                              for f, a in entry["tables"].items()})
            tables.append(table)
            prior = stats = None
        else:
            expected = family.prior(schema)
            # a prior field added after the file was written (e.g. Categorical's ``unseen`` in
            # 0.1) is a function of the stored hyperparameters: recompute it
            prior = expected._replace(**{f: get(a) for f, a in entry["prior"].items()})
            # statistics live on the JAX side after a fit (priors on the NumPy side); keeping
            # that split makes the loaded tables bit-identical to the fitted ones
            # f32 (issue 11): statistics stay float64 NumPy, as fitting leaves them
            stats = family_cls.stats_type(**{f: np.asarray(get(a))
                                             for f, a in entry["stats"].items()})
            for f, leaf in zip(stats._fields, stats, strict=True):
                if leaf.ndim == 2 and leaf.shape[0] != n_classes:
                    raise ModelFileError(f"{path}: statistics {name}.{f} have "
                                         f"{leaf.shape[0]} classes, expected {n_classes}.")
            for f, got, want in zip(prior._fields, prior, expected, strict=True):
                if np.shape(got) != np.shape(want):
                    raise ModelFileError(f"{path}: prior {name}.{f} has shape {np.shape(got)}, "
                                         f"expected {np.shape(want)}.")
        blocks.append(FittedBlock(family, schema, tuple(entry["positions"]), prior, stats))

    model = NaiveBayes(features=features, method=manifest["method"],
                       class_alpha=_from_json(manifest["class_alpha"]),
                       class_prior=None if class_prior is None else dict(
                           zip(classes.tolist(), class_prior.tolist(), strict=True)),
                       **manifest.get("mcmc", {}))
    model.classes_ = classes
    model.class_count_ = get(manifest["class_count"])
    if model.class_count_.shape != (n_classes,):
        raise ModelFileError(f"{path}: class_count has shape {model.class_count_.shape}, "
                             f"expected ({n_classes},).")
    model.blocks_ = blocks
    model._columns = tuple(manifest["columns"])
    model.n_features_in_ = len(model._columns)
    if manifest["named_columns"]:
        model.feature_names_in_ = np.asarray(model._columns, dtype=object)
    draws = manifest.get("draws") or {}
    if draws:
        model.draws_ = {site: get(a) for site, a in draws["posterior"].items()}
        model.sample_stats_ = {k: get(a) for k, a in draws["sample_stats"].items()}
        model._draws_key = model._draws_cache_key()
    if tables_kind:
        with np.errstate(divide="ignore"):
            log_prior = jnp.asarray(np.log(class_prior))
        model._state = ("tables", (tuple(type(b.family) for b in blocks), False, log_prior,
                                   tuple(tables)))
    else:
        model._prediction_state()
    return model


def _from_json(v):
    return np.asarray(v, dtype=np.float64) if isinstance(v, list) and v and all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in v) else v
