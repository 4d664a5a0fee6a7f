"""Saving and loading fitted models: data, never code.

A model file (``.bnb``) is a zip archive holding

* ``manifest.json``: ``{"format": "bayesnb-model", "format_version": 1, ...}`` (2 with
  ``feature_prior``, below), the estimator's settings, the classes, the columns, and per
  block the family name, its hyperparameters, its schema (columns, category levels) and the
  names of its arrays;
* one ``.npy`` file per array (prior hyperparameters, sufficient statistics, class counts, the
  NUTS draws and sample statistics of an MCMC fit, or the stated tables of a model built with
  ``from_tables``), read with ``allow_pickle=False``.

Nothing in a file is executed or unpickled at load: families are looked up by name in
``bayesnb.families.REGISTRY``, and every array is checked against the shape its family expects.
Labels, columns and category levels must be strings, integers, floats or booleans (JSON types).
A model round-trips exactly: the loaded model's arrays are bit-identical to the saved ones, so
its predictions are identical under the same dtype mode (x64 on or off).

What a model file may contain, and what ``load`` refuses
--------------------------------------------------------
A model file holds ``manifest.json`` (at most :data:`MAX_MANIFEST_BYTES`, strict JSON: no
``NaN``/``Infinity``) and exactly the ``arrays/NAME.npy`` members the manifest names, nothing
else, each stored or deflated (no other compression, no encryption). ``load`` first checks the
manifest's structure and derives from it the shape and dtype of every array (classes x columns
or levels for statistics, the prior's shape from the family and its hyperparameters,
``(num_chains, num_samples, ...)`` for draws); then, for each named member only, it checks the
zip directory's uncompressed size and the ``.npy`` header (shape, dtype) on the member stream
**before** reading any data, and reads exactly that many bytes; a manifest implying more array
bytes than the members' compressed sizes can expand to (deflate: ~1000:1) is refused before
anything of that size is allocated. So ``load`` allocates no more than the manifest declares,
and never more than ~1000 times the file's own size. It refuses, with a one-line
``ModelFileError`` naming the member and the problem: a member the manifest does not name
(refused unread, so a file cannot smuggle data past the manifest) or a duplicate one, an
oversize manifest, a header whose shape or dtype differs from the manifest's (object, complex,
string, structured, integer statistics, float16), a declared size that contradicts the header,
NaN or infinite statistics or class counts, negative counts or sums of squares, a stored prior
that differs from the one its hyperparameters give, a ``positions`` list that is not a
permutation of the columns (or names another column), duplicate classes, columns or levels, and
a distribution that is not on the allow-list of :mod:`bayesnb._stored_distributions` or whose
parameters leave their support.

Hyperpriors (``Multinomial(alpha=dist.Gamma(1, 1))``) and replacement priors
(``priors={"poisson.rate": dist.LogNormal(0, 1)}``) are stored as data: an allowed NumPyro class
name plus parameter arrays (see :mod:`bayesnb._stored_distributions`); anything else is
refused at ``save`` with a ``TypeError`` naming the site.

Format versions: 1, and 2 for a model with ``feature_prior`` (its setting is in the manifest;
every other model is still written as version 1, so that earlier releases read it). Files of an
older version keep loading; a newer version is refused with a clear error. A prior field that a
later release adds is recomputed from the stored hyperparameters when an older file lacks it
(``models/*_v1.bnb`` are such files: they predate Categorical's ``unseen`` field). Draws and
replacement priors are keyed by site (``bayesnb.model``); a file without the manifest's
``"site_names": "column"`` was written when a Categorical column's sites were named by its
position in the block (``categorical.0.probs``), and ``load`` renames them to the column's name
(``categorical.Class.probs``) (``tests/data/playtennis_mcmc_positional_sites.bnb`` is such a
file).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import zipfile
import zlib
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import __version__
from . import _stored_distributions as stored
from ._classes import _concentration, _fixed
from ._files import atomic_file
from ._missing_labels import check_missing_label
from ._spec import check_mcmc_settings
from .estimator import METHODS, NaiveBayes
from .families import REGISTRY, Schema
from .families._base import float64_mode, is_distribution
from .families._levels import UNSEEN, bool_and_number
from .families._pooling import POOLED_SUPPORTS
from .fitted import FittedBlock, FittedModel, NutsRun
from .model import column_labels, positional_site, site_name

FORMAT = "bayesnb-model"
FORMAT_VERSION = 2
#: the oldest format version that holds everything a model needs: a model averaged over feature
#: subsets (``feature_prior``) is version 2, which a reader of version 1 refuses instead of
#: dropping the averaging; every other model is still written as version 1
FEATURE_PRIOR_VERSION = 2
#: how the manifest names per-column sites: ``"categorical.{column}.probs"``; a file without
#: ``site_names`` (written before it existed) has ``"categorical.{position}.probs"``
SITE_NAMES = "column"
MANIFEST = "manifest.json"
#: the largest manifest ``save`` writes and ``load`` parses (a 100,000-word vocabulary takes
#: about 4 MB)
MAX_MANIFEST_BYTES = 16 * 2**20
#: the most bytes the classes array may take (labels of a wide NumPy string dtype)
MAX_CLASSES_BYTES = 4 * MAX_MANIFEST_BYTES
#: deflate expands at most ~1032:1; a member declaring more than this is not honest
MAX_EXPANSION = 1100


class ModelFileError(ValueError):
    """A model file that is corrupt, truncated, of an unknown version or inconsistent.

    A ``ValueError``; its message is one line naming the file and what is wrong.

    Examples
    --------
    >>> import os, tempfile, bayesnb as bnb
    >>> issubclass(bnb.ModelFileError, ValueError)
    True
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "notes.bnb")
    ...     with open(path, "w") as f:
    ...         _ = f.write("not a model")
    ...     bnb.load(path)
    Traceback (most recent call last):
    ...
    bayesnb.persistence.ModelFileError: /.../notes.bnb: corrupt or truncated model file (...)."""


# ---------------------------------------------------------------------- save
def save(model: NaiveBayes, path: str | os.PathLike[str]) -> Path:
    """Write a fitted ``NaiveBayes`` to ``path`` (conventionally ``*.bnb``).

    The file is a zip of a JSON manifest and ``.npy`` arrays (specification, priors,
    sufficient statistics, labels, levels): data, never code. :func:`load` reads it back.

    Parameters
    ----------
    model : NaiveBayes
        A fitted model.
    path : str or path-like
        Where to write; an existing file is replaced.

    Returns
    -------
    Path
        ``path``.

    Examples
    --------
    >>> import os, tempfile, bayesnb as bnb
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> clf = bnb.NaiveBayes(method="bayes").fit(days, play)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = bnb.save(clf, os.path.join(folder, "playtennis.bnb"))
    ...     loaded = bnb.load(path)
    >>> path.name
    'playtennis.bnb'
    >>> bool((loaded.predict_proba(days) == clf.predict_proba(days)).all())  # exactly
    True"""
    if not isinstance(model, NaiveBayes):  # e.g. TreeAugmentedNB: its own file (model.save)
        raise TypeError(f"bnb.save writes NaiveBayes models; save a {type(model).__name__} "
                        "with its own method, model.save(path).")
    if "fitted_" not in model.__dict__:
        raise ValueError("only a fitted model can be saved; call fit first.")
    try:
        check_mcmc_settings(model._mcmc_settings(), MAX_MCMC)
    except ValueError as err:  # settings a fit takes may exceed what a file holds
        raise ValueError(f"{err} A model file holds MCMC settings up to "
                         f"{', '.join(f'{k}={v:,}' for k, v in MAX_MCMC.items())}, which it "
                         f"keeps whatever the method (here {model.method!r}); lower them with "
                         f"set_params to save.") from None
    if model.method == "mcmc" and model.fitted_.stated is None:
        model._scorer()  # an MCMC model is saved with its draws for its current settings
    arrays: dict[str, np.ndarray] = {}

    def put(name, value):
        arrays[name] = np.asarray(value)
        return name

    blocks = []
    fitted = model.fitted_
    from_tables = fitted.stated is not None
    tables = fitted.stated[1] if from_tables else None
    for i, b in enumerate(fitted.blocks):
        entry = {
            "family": b.family.name,
            "hyper": {k: stored.to_spec(v, f"the hyperprior {k} of block {i} ({b.family!r})",
                                        f"block{i}/hyper/{k}", put)
                      if is_distribution(v) else _json_value(v, f"hyperparameter {k}")
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
        if fitted.unlabeled is not None:  # semi-supervised MCMC: rows, not statistics
            entry["unlabeled"] = put(f"block{i}/unlabeled", fitted.unlabeled[i])
        blocks.append(entry)

    class_prior = model._class_prior_array()  # in the order of classes_, whatever was given
    if class_prior is not None:
        class_prior = [float(p) for p in class_prior]
    draws = {}
    if fitted.nuts is not None:
        draws = {"posterior": {site: put(f"draws/{site}", v)
                               for site, v in fitted.nuts.draws.items()},
                 "sample_stats": {k: put(f"sample_stats/{k}", v)
                                  for k, v in fitted.nuts.sample_stats.items()}}
    _check_classes_size(model.classes_.dtype, len(model.classes_))
    manifest = {
        "format": FORMAT,
        "format_version": 1 if model.feature_prior is None else FEATURE_PRIOR_VERSION,
        "library_version": __version__,
        "kind": "tables" if from_tables else "fitted",
        "method": model.method,
        "class_alpha": _json_value(model._class_alpha_array(), "class_alpha"),
        "class_prior": None if class_prior is None else _json_value(class_prior, "class_prior"),
        "classes": {"dtype": model.classes_.dtype.str if model.classes_.dtype != object
                    else "object",
                    "values": [_json_scalar(c, "class label") for c in model.classes_]},
        "columns": [_json_scalar(c, "column") for c in fitted.columns],
        "named_columns": bool(fitted.named),  # a DataFrame's columns: matched by name
        "class_count": put("class_count", model.class_count_),
        "blocks": blocks,
        "mcmc": {k: _json_value(v, k) for k, v in model._mcmc_settings().items()},
        "feature_prior": _feature_prior_json(model.feature_prior),
        "missing_label": check_missing_label(model.missing_label),  # for later partial fits
        # how a refit (a clone) reads columns that features does not declare
        "infer_counts": bool(model.infer_counts),
        "use_kernel": bool(model.use_kernel),
        "draws": draws,
        # draws and priors are keyed by the sites of ``bayesnb.model``, per-column ones by
        # column name; files without this key name them by the column's position in its block
        "site_names": SITE_NAMES,
    }
    if model.priors:
        if not isinstance(model.priors, dict) or not all(isinstance(k, str)
                                                          for k in model.priors):
            raise TypeError("priors must be a mapping {site name: distribution} to be saved.")
        manifest["priors"] = {site: stored.to_spec(d, f"the prior {site!r}",
                                                   f"priors/{site}", put)
                              for site, d in model.priors.items()}
    text = json.dumps(manifest, indent=1, allow_nan=False)
    if len(text.encode("utf-8")) > MAX_MANIFEST_BYTES:
        raise ValueError(f"this model's manifest would take {len(text.encode('utf-8'))} bytes, "
                         f"more than the {MAX_MANIFEST_BYTES} a model file may hold.")
    return write_model_file(path, text, arrays)


def write_model_file(path, manifest_text: str, arrays: dict) -> Path:
    """Write a model file atomically: the manifest's JSON text and each array as
    ``arrays/{name}.npy`` (no pickles), in one zip archive."""
    path = Path(path)
    with atomic_file(path) as f, zipfile.ZipFile(f, "w",
                                                  compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(MANIFEST, manifest_text)
        for name, arr in arrays.items():
            buf = io.BytesIO()
            np.save(buf, arr, allow_pickle=False)
            zf.writestr(f"arrays/{name}.npy", buf.getvalue())
    return path


def _json_scalar(v, what):
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not np.isfinite(v):
        raise ValueError(f"cannot save {what}: {v!r} is not a finite number, and model files "
                         "hold finite numbers only (strict JSON); relabel it, e.g. as a "
                         "string.")
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


def _feature_prior_json(value):
    """``feature_prior`` as JSON: null, a number, or ``{"columns": [[column, p], ...]}`` (a
    Multinomial block's key, a tuple of columns, as a list)."""
    if value is None or not isinstance(value, dict):
        return _json_value(value, "feature_prior")
    return {"columns": [[_json_value(k, "feature_prior column"), _json_value(p, "feature_prior")]
                        for k, p in value.items()]}


def _feature_prior_from_json(value, version: int):
    """The inverse of :func:`_feature_prior_json` (files without the key: None); the values
    are checked when the model is installed (``averaging.resolve``). Only a version-2 file
    may hold one (a version-1 reader would ignore the key and predict without it)."""
    if value is not None and version < FEATURE_PRIOR_VERSION:
        raise ValueError(f"feature_prior needs format version {FEATURE_PRIOR_VERSION}; this "
                         f"file says version {version}.")
    if value is None or isinstance(value, int | float) and not isinstance(value, bool):
        return value
    pairs = _dict(value, "feature_prior").get("columns")
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2
                                              for p in pairs):
        raise ValueError("feature_prior: expected a number or {'columns': [[column, p], ...]}.")
    return {tuple(k) if isinstance(k, list) else k: p for k, p in pairs}


# ---------------------------------------------------------------------- load
def load(path: str | os.PathLike[str]) -> NaiveBayes:
    """Read a model written by :func:`save` (any supported format version).

    Four stages: the manifest is read (size-capped) and its structure checked, which fixes
    the shape and dtype of every array it names (:func:`_layout`); only those members are read,
    each header checked before its data (:func:`_read_arrays`); their values are checked
    (:func:`_validated`); the estimator is assembled from the checked data (:func:`_build`).
    Any problem is a one-line :class:`ModelFileError` naming the member and what is wrong.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save`.

    Returns
    -------
    NaiveBayes
        The fitted model, with the settings it was saved with.

    Examples
    --------
    >>> import os, tempfile, bayesnb as bnb
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = bnb.save(bnb.NaiveBayes(method="ml").fit(days, play),
    ...                     os.path.join(folder, "playtennis.bnb"))
    ...     clf = bnb.load(path)
    >>> clf.method, clf.classes_.tolist()
    ('ml', ['No', 'Yes'])
    >>> clf.predict_proba(days.head(1)).round(4)
    array([[0.7954, 0.2046]])"""
    path = Path(path)
    with archive_errors(path):
        with zipfile.ZipFile(path) as zf:
            manifest = _read_manifest(zf, path)
            # what the members can expand to: the manifest may not imply more data
            budget = MAX_EXPANSION * sum(i.compress_size for i in zf.infolist()) + 2**16
            layout = _checked(_layout, path, manifest, path, budget)
            arrays = _read_arrays(zf, layout.expected, path)
    fitted = _checked(_validated, path, layout, arrays, path)
    return _checked(_build, path, fitted)


def _checked(fn, path, *args):
    """``fn(*args)`` with any error a hostile manifest can cause turned into one line."""
    try:
        return fn(*args)
    except ModelFileError as err:
        if str(err).startswith(f"{path}:"):
            raise
        raise ModelFileError(f"{path}: {err}") from None  # every message names the file
    except KeyError as err:
        raise ModelFileError(f"{path}: inconsistent model file (missing field {err}).") from None
    except (TypeError, ValueError, IndexError, AttributeError, OverflowError) as err:
        text = " ".join(str(err).split())
        raise ModelFileError(f"{path}: inconsistent model file ({type(err).__name__}: "
                             f"{text}).") from None


@contextlib.contextmanager
def archive_errors(path: Path):
    """Reading a model file's archive, its failures as one-line ``ModelFileError``s (a
    missing file stays ``FileNotFoundError``)."""
    try:
        yield
    except zipfile.BadZipFile as err:
        raise ModelFileError(f"{path}: corrupt or truncated model file ({err}).") from None
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise ModelFileError(f"{path}: a folder, not a model file.") from None
    except (OSError, EOFError, zlib.error, NotImplementedError) as err:
        # zlib.error: corrupt deflated data; NotImplementedError: a corrupt header naming a
        # zip version or feature that zipfile does not implement
        raise ModelFileError(f"{path}: corrupt or truncated model file "
                             f"({' '.join(str(err).split())[:200]}).") from None


def _read_manifest(zf, path) -> dict:
    names = zf.namelist()
    if len(set(names)) != len(names):
        dup = next(n for n, c in Counter(names).items() if c > 1)
        raise ModelFileError(f"{path}: member {dup} appears twice in the archive.")
    try:
        info = zf.getinfo(MANIFEST)
    except KeyError:
        raise ModelFileError(f"{path}: not a bayesnb model (no manifest).") from None
    _check_storage(info, path)
    if info.file_size > MAX_MANIFEST_BYTES:
        raise ModelFileError(f"{path}: {MANIFEST} declares {info.file_size} bytes, more than "
                             f"the {MAX_MANIFEST_BYTES} a model file may hold.")
    with zf.open(info) as f:
        raw = f.read(MAX_MANIFEST_BYTES + 1)
    if len(raw) > MAX_MANIFEST_BYTES:
        raise ModelFileError(f"{path}: {MANIFEST} is larger than the {MAX_MANIFEST_BYTES} "
                             f"bytes a model file may hold.")

    def refuse_constant(name):
        raise ValueError(f"non-standard JSON constant {name}")

    def unique_keys(pairs):  # JSON keeps a repeated key's last value: one setting hidden
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise ValueError(f"the key {next(k for k in keys if keys.count(k) > 1)!r} appears "
                             f"twice in one object")
        return dict(pairs)

    try:
        return json.loads(raw.decode("utf-8"), parse_constant=refuse_constant,
                          object_pairs_hook=unique_keys)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise ModelFileError(f"{path}: unreadable manifest ({err}).") from None


# ------------------------------------------------------------ stage 1: the manifest's layout
#: values in one array of a nonparametric family's sample (its size is data-dependent; the
#: member's honest-size check bounds what is read)
_SAMPLE_MAX = 1 << 36


class _Expect(NamedTuple):
    """What the manifest implies about one array member."""

    what: str  # the field naming it, for messages
    kinds: str  # allowed dtype kinds ("f" float32/64, "i" integers, "b" bool, "u" unsigned)
    shape: tuple | None  # the exact shape, or None: any shape of at most max_size values
    max_size: int = 0


class _BlockLayout(NamedTuple):
    index: int
    family_cls: type
    hyper: dict  # JSON hyperparameters; distribution specs still as specs
    schema: Schema
    positions: tuple
    arrays: dict  # {"prior"|"stats"|"tables": {field: array name}}


class _Layout(NamedTuple):
    kind: str
    method: str
    classes: np.ndarray
    columns: tuple
    named_columns: bool
    class_alpha: Any
    class_prior: np.ndarray | None
    mcmc: dict
    class_count: str
    blocks: list
    priors: dict  # {site: spec}
    draws: dict  # {"posterior": {site: name}, "sample_stats": {key: name}} or {}
    hyper_sites: dict  # {draw site: (block index, hyperparameter)}
    site_bound: int  # no parameter site holds more values than this
    expected: dict  # {array name: _Expect}
    supports: dict  # {draw site: the support of its parameter (a NumPyro constraint)}
    feature_prior: Any = None  # as given to NaiveBayes (files without it: None)
    missing_label: str = "unlabeled"  # files without it: the default
    infer_counts: bool = False  # files without them: the defaults
    use_kernel: bool = False


_MCMC_INTS = {"num_warmup": 0, "num_samples": 1, "num_chains": 1}
#: the largest NUTS settings a file may hold: they are what a later refit of the loaded model
#: runs (``load`` itself never runs inference)
MAX_MCMC = {"num_warmup": 100_000, "num_samples": 100_000, "num_chains": 256}


def _layout(m, path, budget: int) -> _Layout:
    """The manifest's structure, checked, and the shape and dtype of every array it names;
    no array is read. ``budget``: the most bytes the file's members can hold; arrays of known
    shape that need more are refused before anything of their size is allocated."""
    if isinstance(m, dict) and m.get("format") == "bayesnb-tan-model":  # bayesnb._tan_files
        raise ModelFileError(f"{path}: a TreeAugmentedNB model file; read it with "
                             "bnb.TreeAugmentedNB.load.")
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not a bayesnb model file.")
    version = m.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFileError(f"{path}: invalid format_version {version!r}.")
    if version > FORMAT_VERSION:
        raise ModelFileError(f"{path}: written in format version {version} by bayesnb "
                             f"{m.get('library_version')}; this bayesnb ({__version__}) reads "
                             f"versions up to {FORMAT_VERSION}.")
    kind, method = m["kind"], m["method"]
    if kind not in ("fitted", "tables") or method not in METHODS:
        raise ValueError(f"kind {kind!r} / method {method!r} is not one bayesnb writes.")
    classes = _classes(m["classes"])
    _check_labels(classes, m["classes"]["values"])
    k = len(classes)
    columns = _distinct(_scalars(m["columns"], "columns"), "columns")
    class_alpha = _from_json(m["class_alpha"])
    _concentration(class_alpha, k)
    class_prior = m["class_prior"]
    if class_prior is not None:
        class_prior = _fixed(_scalars(class_prior, "class_prior"), k)
    elif kind == "tables":
        raise ValueError("a model built from tables needs its class_prior.")
    mcmc = _mcmc_settings(m.get("mcmc", {}))

    expected: dict[str, _Expect] = {}
    implied = 0

    def expect(name, e: _Expect):
        if not isinstance(name, str) or not 0 < len(name) <= 512 or name in expected:
            raise ValueError(f"{e.what}: invalid or repeated array name {name!r}.")
        expected[name] = e
        nonlocal implied
        implied += int(np.prod(e.shape or (), dtype=object)) * (4 if "f" in e.kinds else 1)
        if implied > budget:
            raise ModelFileError(f"{path}: the manifest implies at least {implied} bytes of "
                                 f"arrays (up to {name!r}), more than this file's "
                                 f"compressed members can hold ({budget}).")

    expect(m["class_count"], _Expect("class_count", "f", (k,)))
    blocks, shapes = [], []
    for i, entry in enumerate(_list(m["blocks"], "blocks")):
        block, prior, stats = _block_layout(i, entry, k, kind, expect)
        blocks.append(block)
        shapes.append((prior, stats))
    if not blocks:
        raise ValueError("the model has no blocks of columns.")
    _check_positions(blocks, columns)
    widest = max(max((int(np.size(a)) for a in prior), default=1) for prior, _ in shapes)
    site_bound = k * max(widest, 1)

    def expect_distribution(spec, where, prefix):
        for name in stored.array_names(spec, where):
            if not name.startswith(prefix):
                raise ValueError(f"{where}: parameter array {name!r} is outside {prefix}.")
            expect(name, _Expect(f"{where} parameter", "f", None, site_bound))

    hyper_sites = {}
    sites = _site_names([b.family_cls.name for b in blocks])
    for b, site in zip(blocks, sites, strict=True):
        for key, spec in b.hyper.items():
            if isinstance(spec, dict):
                expect_distribution(spec, f"block {b.index} hyperprior {key}",
                                    f"block{b.index}/hyper/{key}/")
                hyper_sites[f"{site}.{key}"] = (b.index, key)
    priors = m.get("priors") or {}
    for site, spec in _dict(priors, "priors").items():
        if not 0 < len(site) <= 200:
            raise ValueError(f"priors: invalid site name {site[:50]!r}.")
        expect_distribution(spec, f"prior {site!r}", f"priors/{site}/")
    draws = m.get("draws") or {}
    labels = column_labels(blocks)
    naming = m.get("site_names")
    if naming is None:  # an older file: per-column sites named by position
        rename = partial(positional_site, sites=sites, labels=labels)
        priors = _renamed(priors, rename, "priors")
        if draws:
            draws = {**_dict(draws, "draws"),
                     "posterior": _renamed(_dict(draws["posterior"], "draws"), rename,
                                           "draws")}
    elif naming != SITE_NAMES:
        raise ValueError(f"unknown site_names {str(naming)[:50]!r} (known: {SITE_NAMES!r}).")
    if method == "mcmc" and kind == "fitted" and not draws:
        # the model's draws are its fit; without them the model would have to run NUTS
        # (with the file's settings) to predict, and load never runs inference
        raise ModelFileError(f"{path}: an MCMC model without its draws (the manifest's "
                             "'draws' is empty).")
    supports: dict = {}
    if draws:
        supports = _draws_layout(_dict(draws, "draws"), blocks, shapes, sites, labels,
                                 hyper_sites, k, class_prior is None, mcmc, site_bound, expect)
    return _Layout(kind, method, classes, columns, _bool(m["named_columns"], "named_columns"),
                   class_alpha, class_prior, mcmc, m["class_count"], blocks, priors, draws,
                   hyper_sites, site_bound, expected, supports,
                   _feature_prior_from_json(m.get("feature_prior"), version),
                   check_missing_label(m.get("missing_label", "unlabeled")),
                   _bool(m.get("infer_counts", False), "infer_counts"),
                   _bool(m.get("use_kernel", False), "use_kernel"))


def _block_layout(i, entry, n_classes, kind, expect):
    """One block's structure and the shapes of its prior and statistics (from the family,
    its hyperparameters and its schema alone)."""
    entry = _dict(entry, f"block {i}")
    name = entry["family"]
    if not isinstance(name, str) or name not in REGISTRY:
        raise ModelFileError(f"unknown family {str(name)[:50]!r} in block {i} "
                             f"(known: {list(REGISTRY)}; a family of your own is known once "
                             f"the module that registers it is imported).")
    family_cls = REGISTRY[name]
    hyper = _dict(entry["hyper"], f"block {i} hyper")
    unknown = sorted(set(hyper) - set(family_cls._hyper))
    if unknown:
        raise ValueError(f"block {i}: {family_cls.__name__} has no hyperparameter "
                         f"{unknown[0]!r}.")
    columns = _distinct(_scalars(entry["columns"], f"block {i} columns"), f"block {i} columns")
    if not columns:
        raise ValueError(f"block {i} has no columns.")
    levels = tuple(_distinct(_scalars(lv, f"levels of column {c!r}"), f"levels of column {c!r}")
                   for c, lv in zip(columns, _list(entry["levels"], f"block {i} levels"),
                                    strict=False))
    if levels and len(levels) != len(columns):
        raise ValueError(f"block {i}: {len(levels)} lists of levels for {len(columns)} columns.")
    positions = tuple(entry["positions"])
    schema = Schema(columns=columns, levels=levels)
    where = f"block {i} ({name}, columns {list(columns)[:3]})"
    try:
        shape_family = _shape_family(family_cls, hyper)
        prior = shape_family.prior(schema)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where} hyperparameters: {err}") from None
    if family_cls.nonparametric:  # the sample itself: 1-D arrays of one length (checked
        # with the values when the scorer is built: family.host_table)
        arrays = {"prior": _fields(entry["prior"], prior, f"{where} prior", expect, exact=False),
                  "stats": {}}
        for f, a in _dict(entry.get("stats"), f"{where} statistics").items():
            if f not in family_cls.stats_type._fields:
                raise ValueError(f"{where} statistics: unknown field {f!r}.")
            kinds = "iu" if f in ("column", "klass") else "f"
            expect(a, _Expect(f"{where} statistics {f}", kinds, None, _SAMPLE_MAX))
            arrays["stats"][f] = a
        if kind == "tables" or len(arrays["stats"]) != len(family_cls.stats_type._fields):
            raise ValueError(f"{where}: a {name} block keeps its sample as statistics.")
        return (_BlockLayout(i, family_cls, hyper, schema, positions, arrays), prior, None)
    n_levels = tuple(len(lv) for lv in levels) or None
    x = jax.ShapeDtypeStruct((1, len(columns)),
                             jnp.int32 if family_cls.integer_codes else jnp.float32)
    stats = _finished_shapes(type(shape_family), x, n_levels, n_classes, where)
    arrays = {}
    if kind == "tables":
        params = jax.eval_shape(lambda s: family_cls.estimate(prior, s, "ml"), stats)
        arrays["tables"] = _fields(entry["tables"], params, f"{where} tables", expect,
                                   exact=True, retired=family_cls.retired_params)
    else:
        arrays["prior"] = _fields(entry["prior"], prior, f"{where} prior", expect, exact=False)
        arrays["stats"] = _fields(entry["stats"], stats, f"{where} statistics", expect,
                                  exact=True, kinds="f")
        if "unlabeled" in entry:  # (n, columns), checked with the values (``_unlabeled``)
            expect(entry["unlabeled"], _Expect(f"{where} unlabeled rows",
                                               "i" if family_cls.integer_codes else "f",
                                               None, _SAMPLE_MAX))
            arrays["unlabeled"] = entry["unlabeled"]
    return (_BlockLayout(i, family_cls, hyper, schema, positions, arrays), prior, stats)


def _shape_family(family_cls, hyper: dict):
    """The family of a block's manifest hyperparameters; a hyperprior's value is sampled, and
    for the shapes a placeholder value will do."""
    return family_cls(**{k: 1.0 if isinstance(v, dict) else _from_json(v)
                         for k, v in hyper.items()})


def _finished_shapes(family_cls, x, n_levels, n_classes: int, where: str):
    """Shapes and dtypes of a block's finished statistics with ``n_classes`` classes.

    The kernel's chunk statistics of one zero row, as the host finishes them
    (``finish_stats``), are computed for real with one and with two classes (tiny: no
    allocation grows with the class count a manifest claims, which may be a lie); the axes
    that differ between the two are the class axes."""
    def finished(k: int):
        return _zero_row_stats(family_cls, x.shape, x.dtype, n_levels, k, float64_mode())

    def scaled(a, b):
        dims = []
        for da, db in zip(np.shape(a), np.shape(b), strict=True):
            if da != db and (da, db) != (1, 2):
                raise ValueError(f"{where}: statistics whose shape is not per class "
                                 f"({np.shape(a)} with one class, {np.shape(b)} with two).")
            dims.append(n_classes if da != db else da)
        return jax.ShapeDtypeStruct(tuple(dims), np.asarray(a).dtype)

    return jax.tree_util.tree_map(scaled, finished(1), finished(2))


@functools.lru_cache(maxsize=64)
def _zero_row_stats(family_cls, shape: tuple, dtype, n_levels, k: int, x64: bool):
    """The statistics of one zero row with ``k`` classes (shapes read only; ``x64``: the
    dtype mode, a key), kept: a model of 3,000 one-column blocks ran these eager operations
    6,000 times on load (13 of 19 s)."""
    chunk = family_cls.suff_stats(jnp.zeros(shape, dtype), jnp.zeros((1, k), jnp.float32),
                                  n_levels)
    return jax.tree_util.tree_map(
        lambda a: np.asarray(a, dtype=np.float64) if np.asarray(a).dtype.kind == "f"
        else np.asarray(a), chunk)


def _fields(names, template, where, expect, *, exact, kinds=None, retired=()):
    """``{field: array name}`` of a NamedTuple of arrays, each expected with the template's
    shape and dtype kind; ``exact``: every field present (else a later release's field may be
    missing and is recomputed). A ``retired`` field (an earlier release's) is read, no larger
    than the others, and left out."""
    names = _dict(names, where)
    fields = template._fields
    for f in set(names) & set(retired):
        expect(names[f], _Expect(f"{where} {f}", "f", None,
                                 max(int(np.prod(leaf.shape)) for leaf in template)))
    names = {f: a for f, a in names.items() if f not in retired}
    extra = sorted(set(names) - set(fields))
    missing = [f for f in fields if f not in names]
    if extra or (exact and missing):
        raise ValueError(f"{where}: fields {sorted(names)}, expected {list(fields)}.")
    for f, array in names.items():
        leaf = getattr(template, f)
        kind = np.dtype(leaf.dtype).kind
        expect(array, _Expect(f"{where} {f}", kinds or ("iu" if kind in "iu" else kind),
                              tuple(np.shape(leaf))))
    return names


def _renamed(mapping, rename, what):
    out = {rename(k): v for k, v in _dict(mapping, what).items()}
    if len(out) != len(mapping):
        raise ValueError(f"{what}: two sites name the same parameter.")
    return out


def _draws_layout(draws, blocks, shapes, sites, labels, hyper_sites, n_classes, free_classes,
                  mcmc, site_bound, expect):
    """Expected draws: ``(num_chains, num_samples)`` then each site's own shape; returns the
    support of each conjugate site's parameter (its posterior distribution's), which the
    draws must keep."""
    from numpyro.distributions import constraints

    lead = (mcmc["num_chains"], mcmc["num_samples"])
    want = {"class_probs": (n_classes,)} if free_classes else {}
    supports = {"class_probs": constraints.simplex} if free_classes else {}
    rng = np.random.default_rng(0)
    for b, (prior, stats), site, labs in zip(blocks, shapes, sites, labels, strict=True):
        # the prior as a posterior of no data: its draws have the sites' shapes
        family = b.family_cls
        zero = jax.tree_util.tree_map(lambda s: np.zeros(s.shape, s.dtype), stats)
        posterior = family.posterior(prior, zero)
        for key, value in family.sample_posterior(rng, posterior, 1).items():
            want[site_name(site, key, labs)] = np.shape(value)[1:]
        for key, marginal in family.posterior_distributions(posterior).items():
            supports[site_name(site, key, labs)] = marginal.support
        # sites with no conjugate draw (a pooled block's shared mean and concentration): the
        # shapes of the axes the family declares
        sizes = {"class": n_classes, "feature": len(b.schema.columns)}
        for key, axes in _shape_family(family, b.hyper).param_dims(prior, b.schema).items():
            levels = b.schema.levels[int(key.partition(".")[0])] if "level" in axes else ()
            want.setdefault(site_name(site, key, labs),
                            tuple(sizes.get(a, len(levels)) for a in axes))
            pooled = POOLED_SUPPORTS.get(key.rpartition(".")[2])
            if pooled is not None:
                supports.setdefault(site_name(site, key, labs), getattr(constraints, pooled))
    posterior = _dict(draws["posterior"], "draws")
    names = set(want) | set(hyper_sites)
    if set(posterior) != names:
        raise ValueError(f"draws name the sites {sorted(posterior)[:8]}, the model has "
                         f"{sorted(names)[:8]}.")
    for site, array in posterior.items():
        if site in hyper_sites:  # its shape is the hyperprior's: checked once it is built
            expect(array, _Expect(f"draws of {site}", "f", None,
                                  lead[0] * lead[1] * site_bound))
        else:
            expect(array, _Expect(f"draws of {site}", "f", lead + want[site]))
    for key, array in _dict(draws["sample_stats"], "sample_stats").items():
        expect(array, _Expect(f"sample statistic {key}", "biuf", lead))
    return supports


def _check_positions(blocks, columns):
    """Each column in exactly one block, at the position its name has among the columns."""
    flat = [p for b in blocks for p in b.positions]
    if (not all(isinstance(p, int) and not isinstance(p, bool) for p in flat)
            or sorted(flat) != list(range(len(columns)))):
        raise ValueError(f"positions {flat[:10]} are not a permutation of the "
                         f"{len(columns)} columns.")
    for b in blocks:
        if len(b.positions) != len(b.schema.columns):
            raise ValueError(f"block {b.index}: {len(b.positions)} positions for "
                             f"{len(b.schema.columns)} columns.")
        for p, c in zip(b.positions, b.schema.columns, strict=True):
            if not _same(columns[p], c):
                raise ValueError(f"block {b.index}: position {p} is column {columns[p]!r}, "
                                 f"the block says {c!r}.")


def _site_names(names):
    """Sample-site prefix of each block (``model.block_sites``, from family names alone)."""
    count, seen, out = Counter(names), Counter(), []
    for name in names:
        out.append(name if count[name] == 1 else f"{name}{seen[name]}")
        seen[name] += 1
    return out


def _classes(info) -> np.ndarray:
    info = _dict(info, "classes")
    values = _scalars(info["values"], "classes")
    if not values:
        raise ValueError("the model has no classes.")
    if info["dtype"] == "object":
        classes = np.empty(len(values), dtype=object)
        classes[:] = values
        _distinct(values, "classes")
        return classes
    dtype = np.dtype(info["dtype"])
    python = {"b": bool, "i": int, "u": int, "f": float, "U": str}.get(dtype.kind)
    if python is None or not all(type(v) is python or (python is float and type(v) is int)
                                 for v in values):
        raise ValueError(f"classes of dtype {dtype} cannot hold {values[:3]}.")
    _check_classes_size(dtype, len(values))
    classes = np.array(values, dtype=dtype)
    if len(np.unique(classes)) != len(classes):
        raise ValueError(f"the classes repeat a value: {values[:8]}.")
    return classes


def _check_labels(classes: np.ndarray, values: list) -> None:
    """The classes are labels a fit could have learned, exactly as the manifest states them:
    none missing, no two equal in Python (``True == 1 == 1.0``: one class to ``predict`` and
    ``labels_to_codes``), and unchanged by the stated dtype (``<U2`` truncates ``"abc"``)."""
    if any(v is None for v in values):
        raise ValueError(f"class {values.index(None)} is null: a missing label is not a class.")
    mixed = bool_and_number(np.array(values, dtype=object))
    if mixed is not None or len(set(values)) != len(values):
        raise ValueError(f"the classes {values[:8]} hold two labels that are equal in Python "
                         "(True == 1 == 1.0): they would be one class.")
    if classes.dtype != object:
        changed = [(v, c) for v, c in zip(values, classes.tolist(), strict=True) if c != v]
        if changed:
            raise ValueError(f"classes of dtype {classes.dtype} change the label "
                             f"{changed[0][0]!r} into {changed[0][1]!r}.")


def _check_classes_size(dtype, n: int) -> None:
    """A NumPy string dtype may be wider than its labels (``np.array(["no", "maybe"])[[0]]``
    keeps ``<U5``), and the loaded classes keep that dtype; only its size is bounded, since
    ``load`` allocates it."""
    if dtype.itemsize * n > MAX_CLASSES_BYTES:
        raise ValueError(f"classes of dtype {dtype} are wider than a model file's may be "
                         f"({n} of them take {dtype.itemsize * n} bytes, at most "
                         f"{MAX_CLASSES_BYTES}).")


def _mcmc_settings(mcmc) -> dict:
    mcmc = _dict(mcmc, "mcmc")
    allowed = {"num_warmup", "num_samples", "num_chains", "seed", "chain_method",
               "progress_bar"}
    if set(mcmc) - allowed:
        raise ValueError(f"unknown MCMC settings {sorted(set(mcmc) - allowed)}.")
    check_mcmc_settings(mcmc, MAX_MCMC)
    return mcmc


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def _distinct(values, what) -> tuple:
    """``values``, none equal to another in Python (``1 == 1.0 == True``: one level, one
    column, to pandas' indexes)."""
    if len(set(values)) != len(values):
        raise ValueError(f"{what} repeat a value (or hold two equal in Python, such as 1 and "
                         f"1.0).")
    return tuple(values)


def _scalars(values, what) -> list:
    values = _list(values, what)
    if not all(v is None or isinstance(v, bool | int | float | str) for v in values):
        raise ValueError(f"{what} must be a list of strings, numbers or booleans.")
    return values


def _list(value, what) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{what} must be a list, not {type(value).__name__}.")
    return value


def _dict(value, what) -> dict:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{what} must be a JSON object.")
    return value


def _bool(value, what) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{what} must be true or false.")
    return value


# ------------------------------------------------------------ stage 2: the named members only
def _read_arrays(zf, expected: dict, path) -> dict:
    """Exactly the members the manifest names, each checked against its :class:`_Expect`
    before its data is read. A member the manifest does not name is refused, unread."""
    members = {f"arrays/{name}.npy": name for name in expected}
    for info in zf.infolist():
        if info.filename != MANIFEST and info.filename not in members:
            raise ModelFileError(f"{path}: member {info.filename[:100]!r} is not named by the "
                                 "manifest (a model file holds the manifest and the arrays it "
                                 "names, nothing else).")
    arrays = {}
    for member, name in members.items():
        try:
            info = zf.getinfo(member)
        except KeyError:
            raise ModelFileError(f"{path}: array {name!r} is missing "
                                 f"(member {member}).") from None
        arrays[name] = _read_member(zf, info, expected[name], path)
    return arrays


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _check_storage(info, path):
    """Stored or deflated, unencrypted: what ``save`` writes, and what bounds expansion."""
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or (
            info.flag_bits & 0x1):
        raise ModelFileError(f"{path}: member {info.filename[:100]} is encrypted or compressed "
                             f"with method {info.compress_type}; a model file is stored or "
                             "deflated.")


def _read_member(zf, info, expect: _Expect, path) -> np.ndarray:
    member = info.filename
    where = f"{path}: member {member} ({expect.what})"
    _check_storage(info, path)
    stored = info.compress_type == zipfile.ZIP_STORED
    if info.file_size > (info.compress_size if stored
                         else info.compress_size * MAX_EXPANSION + 1024):
        raise ModelFileError(f"{where} declares {info.file_size} bytes from "
                             f"{info.compress_size} compressed: not an honest size.")
    with zf.open(info) as f:
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f"unsupported .npy version {version}")
        except (ValueError, SyntaxError, TypeError) as err:
            raise ModelFileError(f"{where}: not a readable .npy header "
                                 f"({' '.join(str(err).split())[:200]}).") from None
        header = f.tell()
        if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
            raise ModelFileError(f"{where}: dtype {dtype} cannot be read safely (objects "
                                 "would need pickle; structured arrays are not model data).")
        # either byte order (a big-endian machine's np.save writes >f8), read as native
        ok = dtype.kind in expect.kinds and (dtype.kind != "f"
                                             or dtype.newbyteorder("=") in _FLOATS)
        if not ok:
            raise ModelFileError(f"{where}: dtype {dtype}, expected "
                                 f"{_kinds_text(expect.kinds)}.")
        size = int(np.prod(shape, dtype=object))
        if expect.shape is not None and tuple(shape) != expect.shape:
            raise ModelFileError(f"{where}: shape {tuple(shape)}, the manifest implies "
                                 f"{expect.shape}.")
        if expect.shape is None and size > expect.max_size:
            raise ModelFileError(f"{where}: shape {tuple(shape)} holds {size} values, more "
                                 f"than this model can use ({expect.max_size}).")
        nbytes = size * dtype.itemsize
        if info.file_size != header + nbytes:
            raise ModelFileError(f"{where}: {info.file_size} bytes, its header implies "
                                 f"{header + nbytes}.")
        data = f.read(nbytes)
        if len(data) != nbytes or f.read(1):
            raise ModelFileError(f"{where}: truncated data.")
    array = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    return array.astype(dtype.newbyteorder("="), copy=True)  # writable, native byte order


def _kinds_text(kinds):
    names = {"f": "float32/float64", "i": "integer", "u": "integer", "b": "bool"}
    return " or ".join(dict.fromkeys(names[k] for k in kinds))


# ------------------------------------------------------------ stage 3: the values
class _Fitted(NamedTuple):
    """A model file's content, checked: everything :func:`_build` needs, as plain data."""

    layout: _Layout
    class_count: np.ndarray
    priors: dict  # {site: distribution}
    blocks: list  # FittedBlock
    tables: tuple | None
    draws: dict
    sample_stats: dict
    unlabeled: tuple | None = None  # semi-supervised MCMC's unlabeled rows, encoded per block


def _validated(layout: _Layout, arrays: dict, path) -> _Fitted:
    def member(name):
        return f"{path}: member arrays/{name}.npy ({layout.expected[name].what})"

    class_count = arrays[layout.class_count]
    _check_finite(class_count, member(layout.class_count), nonnegative=True)
    priors = {site: _distribution(spec, arrays, f"{path}: prior {site!r}", layout.site_bound)
              for site, spec in layout.priors.items()}
    blocks, tables = [], []
    for b in layout.blocks:
        where = f"{path}: block {b.index} ({b.family_cls.name})"
        hyper = {k: _distribution(v, arrays, f"{where} hyperprior {k}", layout.site_bound)
                 if isinstance(v, dict) else _from_json(v) for k, v in b.hyper.items()}
        family = b.family_cls(**hyper)
        try:
            family.check_settings()
            expected = family.prior(b.schema)
        except ValueError as err:
            raise ModelFileError(f"{where}: {' '.join(str(err).split())}") from None
        declared = family.declared_levels(b.schema.columns)
        if declared is not None and [tuple(v) for v in declared] != list(b.schema.levels):
            raise ModelFileError(f"{where}: the declared categories {declared[:3]} contradict "
                                 f"the block's levels {list(b.schema.levels)[:3]}.")
        if "tables" in b.arrays:
            # float64 NumPy, as from_tables leaves them (files of earlier releases may hold
            # float32 tables: read as float64, not rounded again)
            table = {f: np.asarray(arrays[a], dtype=np.float64) if arrays[a].dtype.kind == "f"
                     else np.asarray(arrays[a]) for f, a in b.arrays["tables"].items()}
            for f, a in b.arrays["tables"].items():
                _check_table(table[f], getattr(expected, f, None), member(a), f)
            tables.append(b.family_cls.params_type(**table))
            _check_stated(family, tables[-1], b.schema, layout.classes, where)
            prior = stats = None
        else:
            loose = bool(family.hyperpriors())  # a hyperprior's placeholder is its mean
            for f, a in b.arrays["prior"].items():
                _check_prior(arrays[a], getattr(expected, f), member(a), loose)
            # a prior field added after the file was written (e.g. Categorical's ``unseen``)
            # is a function of the stored hyperparameters: recompute it
            prior = expected._replace(**{f: arrays[a] for f, a in b.arrays["prior"].items()})
            nonnegative = b.family_cls.nonnegative_stats
            for f, a in b.arrays["stats"].items():
                _check_finite(arrays[a], member(a), nonnegative=f in nonnegative)
            # float64 NumPy, as fitting leaves them: the loaded tables are bit-identical to
            # the fitted ones (and float32 never rounds the statistics)
            stats = b.family_cls.stats_type(**{f: np.asarray(arrays[a])
                                               for f, a in b.arrays["stats"].items()})
            _check_observed(family.observed_counts(prior, stats), stats, class_count,
                            b.schema, where, member(layout.class_count))
            if not family.nonparametric:
                _check_posterior(family, prior, stats, where)
        blocks.append(FittedBlock(family, b.schema, b.positions, prior, stats))
    draws, sample_stats = {}, {}
    if layout.draws:
        lead = (layout.mcmc["num_chains"], layout.mcmc["num_samples"])
        for site, a in layout.draws["posterior"].items():
            draws[site] = arrays[a]
            _check_finite(arrays[a], member(a))
            support = layout.supports.get(site)
            if support is not None and not _in_support(support, arrays[a]):
                raise ModelFileError(f"{member(a)}: draws outside their parameter's support "
                                     f"({support}).")
            if site in layout.hyper_sites:
                i, key = layout.hyper_sites[site]
                hyperprior = blocks[i].family.get_params()[key]
                want = lead + tuple(hyperprior.shape())
                if arrays[a].shape != want:
                    raise ModelFileError(f"{member(a)}: shape {arrays[a].shape}, the "
                                         f"hyperprior implies {want}.")
                if not _in_support(hyperprior.support, arrays[a]):
                    raise ModelFileError(f"{member(a)}: draws outside their hyperprior's "
                                         f"support ({hyperprior.support}).")
        for key, a in layout.draws["sample_stats"].items():
            sample_stats[key] = arrays[a]
            if arrays[a].dtype.kind == "f":
                _check_finite(arrays[a], member(a))
    return _Fitted(layout, class_count, priors, blocks,
                   tuple(tables) if layout.kind == "tables" else None, draws, sample_stats,
                   _unlabeled(layout, arrays, blocks, member))


def _unlabeled(layout: _Layout, arrays: dict, blocks: list, member) -> tuple | None:
    """The unlabeled rows of a semi-supervised MCMC fit, per block as its ``encode`` left
    them: every block or none, one number of rows, each block's width, and values its
    family takes (level codes within the levels, -1 missing, -2 a level no labelled row
    has)."""
    names = [b.arrays.get("unlabeled") for b in layout.blocks]
    if all(n is None for n in names):
        return None
    if any(n is None for n in names):
        raise ModelFileError("unlabeled rows for some blocks only.")
    rows = []
    for b, block, name in zip(layout.blocks, blocks, names, strict=True):
        u = arrays[name]
        if u.ndim != 2 or u.shape[1] != len(b.schema.columns) or u.shape[0] != len(
                arrays[names[0]]):
            raise ModelFileError(f"{member(name)}: shape {u.shape}, where the rows of every "
                                 f"block are ({len(arrays[names[0]])}, {len(b.schema.columns)}).")
        if b.family_cls.integer_codes:  # a level, missing or unseen (``_levels``)
            sizes = np.array([len(lv) for lv in b.schema.levels])
            if u.size and ((u < UNSEEN) | (u >= sizes)).any():
                raise ModelFileError(f"{member(name)}: a level code outside the block's levels.")
        else:
            block.family.encode(u, b.schema)  # the family's own value checks (names the row)
        rows.append(u)
    return tuple(rows)


def _check_posterior(family, prior, stats, where: str) -> None:
    """Refuse statistics whose conjugate posterior is no distribution (each valid alone, but
    contradicting each other: a Bernoulli class with more ones than observed values has a
    Beta posterior of negative concentration, and probabilities above 1 under ML)."""
    try:
        marginals = family.posterior_distributions(family.posterior(prior, stats))
        bad = next((f"{key}: {name}" for key, d in marginals.items()
                    for name, constraint in d.arg_constraints.items()
                    if not np.all(constraint.check(getattr(d, name)))), None)
    except ValueError as err:  # NumPyro's own validation of the parameters
        bad = " ".join(str(err).split())
    if bad is not None:
        raise ModelFileError(f"{where}: statistics that contradict each other (their "
                             f"posterior is no distribution: {bad}): an inconsistent model "
                             f"file.")


def _in_support(support, draws: np.ndarray) -> bool:
    """Whether every draw lies in ``support``; a simplex's within float32 draws' rounding
    (NumPyro's own check allows 1e-6, which a hundred float32 probabilities may miss)."""
    from numpyro.distributions import constraints

    if support is constraints.simplex:
        return bool(np.all(draws >= 0) and np.all(np.abs(draws.sum(axis=-1) - 1.0) <= 1e-4))
    return bool(np.all(support.check(jnp.asarray(draws))))


def _check_observed(observed, stats, class_count, schema, where: str, counts: str) -> None:
    """Refuse a block whose observed values outnumber their class's rows (``observed``:
    the family's ``observed_counts``, None where it has none), or whose statistics of a
    class and column are not 0 where it observed no value (the statistics of no rows): arrays
    of one file that contradict each other, each valid alone, would predict silently
    otherwise."""
    if observed is None:
        return
    over = observed > class_count[:, None] * (1 + 1e-9) + 1e-9
    if over.any():
        k, j = map(int, np.argwhere(over)[0])
        raise ModelFileError(f"{where}: column {schema.columns[j]!r} holds {observed[k, j]:g} "
                             f"observed values in class {k}, more than its {class_count[k]:g} "
                             f"rows ({counts}): an inconsistent model file.")
    for field, value in stats._asdict().items():
        value = np.asarray(value)
        if value.shape != observed.shape:  # a statistic not per class and column
            continue
        orphan = (observed == 0) & (value != 0)
        if orphan.any():
            k, j = map(int, np.argwhere(orphan)[0])
            raise ModelFileError(f"{where}: column {schema.columns[j]!r} holds "
                                 f"{field} = {value[k, j]:g} in class {k}, which observed no "
                                 f"value there (the statistics of no rows are 0): an "
                                 f"inconsistent model file.")


def _distribution(spec, arrays, where, bound):
    try:
        return stored.from_spec(spec, arrays, where, bound)
    except ValueError as err:
        raise ModelFileError(" ".join(str(err).split())) from None


def _check_finite(a, where, *, nonnegative=False):
    bad = ~np.isfinite(a)
    if np.any(bad):
        raise ModelFileError(f"{where}: holds {'NaN' if np.isnan(a).any() else 'infinite'} "
                             f"values (first at index {_first(bad)}).")
    if nonnegative and np.any(a < 0):
        raise ModelFileError(f"{where}: holds negative values (first at index "
                             f"{_first(a < 0)}: {a[a < 0].flat[0]!r}); these are counts or "
                             "sums of squares.")


def _check_prior(got, want, where, loose):
    """A stored prior equals the one the manifest's hyperparameters give (bit for bit, or to
    1e-6 where a hyperprior's mean stands in)."""
    want = np.asarray(want)
    if got.dtype.kind != want.dtype.kind:
        raise ModelFileError(f"{where}: dtype {got.dtype}, the hyperparameters give "
                             f"{want.dtype}.")
    floats = want.dtype.kind == "f"  # NaN stands for "not given" (KernelDensity's bandwidth)
    same = (np.allclose(got, want, rtol=1e-6, atol=0, equal_nan=True) if loose and floats
            else np.array_equal(got, want, equal_nan=floats))
    if not same:
        diff = got != want
        i = _first(diff)
        raise ModelFileError(f"{where}: contradicts the manifest's hyperparameters (at index "
                             f"{i}: {got[i]!r} stored, {want[i]!r} implied).")


#: table fields that must be positive (a Gaussian precision) or non-negative (a Poisson rate)
_POSITIVE_TABLES, _NONNEGATIVE_TABLES = ("precision",), ("rate",)


def _check_table(a, prior_field, where, field):
    """A stated table's values: a log-probability (``log_*``) may be -inf (probability 0);
    every other number is finite, precisions positive and rates non-negative."""
    if a.dtype.kind == "f":
        bad = np.isnan(a) | np.isposinf(a) | (np.isneginf(a) & (not field.startswith("log")))
        if bad.any():
            raise ModelFileError(f"{where}: holds NaN or infinite values (first at index "
                                 f"{_first(bad)}: {a[bad].flat[0]!r}).")
        low = (a <= 0) if field in _POSITIVE_TABLES else (
            (a < 0) if field in _NONNEGATIVE_TABLES else np.zeros(a.shape, bool))
        if low.any():
            raise ModelFileError(f"{where}: {field} must be "
                                 f"{'positive' if field in _POSITIVE_TABLES else 'non-negative'}"
                                 f" (first at index {_first(low)}: {a[low].flat[0]!r}).")
    elif prior_field is None or not np.array_equal(a, np.asarray(prior_field)):
        raise ModelFileError(f"{where}: contradicts the block's levels.")


def _check_stated(family, params, schema, classes, where) -> None:
    """Stated tables are the family's ``from_tables`` of their own ``describe``: probabilities
    that sum to 1, and derived fields (``log1m_p``, ``log_rate``) that agree with them."""
    described = family.describe(params, schema, classes)
    stated = {col: {c: family.stated_cell_of(table.iloc[k]) for k, c in enumerate(classes)}
              for col, table in described.items()}
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            again = family.from_tables(stated, schema, classes)
    except ValueError as err:
        raise ModelFileError(f"{where}: the stated tables are not distributions: "
                             f"{' '.join(str(err).split())}") from None
    for name, table, rebuilt in zip(type(params)._fields, params, again, strict=True):
        table, rebuilt = np.asarray(table), np.asarray(rebuilt)
        # files of earlier releases hold float32-rounded tables: within 1e-6 (absolutely, for
        # a log-probability near 0) is the round trip
        if table.shape != rebuilt.shape or not np.allclose(table, rebuilt, rtol=1e-6, atol=1e-6,
                                                           equal_nan=True):
            raise ModelFileError(f"{where}: the stated table {name} disagrees with the "
                                 f"probabilities it is derived from (not one distribution).")


def _first(mask):
    return tuple(int(i) for i in np.argwhere(mask)[0]) if np.ndim(mask) else ()


# ------------------------------------------------------------ stage 4: the estimator
def _build(f: _Fitted) -> NaiveBayes:
    """The estimator from checked data: the one place that sets fitted attributes."""
    lay = f.layout
    model = NaiveBayes(
        features={c: b.family for b in f.blocks for c in b.schema.columns}, method=lay.method,
        class_alpha=lay.class_alpha, priors=f.priors or None, feature_prior=lay.feature_prior,
        missing_label=lay.missing_label, infer_counts=lay.infer_counts,
        use_kernel=lay.use_kernel,
        class_prior=None if lay.class_prior is None else dict(
            zip(lay.classes.tolist(), lay.class_prior.tolist(), strict=True)),
        **lay.mcmc)
    nuts = NutsRun(model._nuts_key(), f.draws, f.sample_stats) if f.draws else None
    stated = None
    if f.tables is not None:
        with np.errstate(divide="ignore"):
            stated = (np.log(lay.class_prior), f.tables)
    return model._install(FittedModel(lay.classes, f.class_count, lay.columns,
                                      bool(lay.named_columns), tuple(f.blocks), stated=stated,
                                      nuts=nuts, unlabeled=f.unlabeled))


def _from_json(v):
    return np.asarray(v, dtype=np.float64) if isinstance(v, list) and v and all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in v) else v
