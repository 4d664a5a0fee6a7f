"""Dask: fit from Dask arrays and DataFrames as a reduction of sufficient statistics, and predict
partition by partition. ``NaiveBayes.fit`` / ``predict`` / ``predict_proba`` /
``predict_log_proba`` come here when given a Dask collection, so the same code runs on a laptop
(Dask's local schedulers) and on a ``dask.distributed`` cluster (whatever ``Client`` is active).

Fitting is two Dask computations over the partitions (:mod:`bayesnb.outofcore` has the steps):

1. a scan: per partition the distinct labels and the distinct values of every Categorical column
   whose levels are not declared, combined in partition order by a tree reduction; the driver
   then sets the model up with exactly the classes and levels an in-memory fit would learn, and
   zero statistics;
2. the statistics: per partition those of the template updated with the partition, as plain NumPy
   arrays (class counts and each block's statistics, never a model), merged pairwise by each
   family's ``merge_stats`` in a tree reduction (``split_every`` at a time) on the workers.

The driver receives one set of statistics, whatever the number of rows. Workers compute in the
driver's dtype mode (JAX's x64 flag is passed to every task), so a distributed fit equals the
in-memory fit: counts exactly, Gaussian moments up to rounding. Dask is optional: this module
imports it only when called, and the estimator looks for Dask input only when Dask is loaded.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import jax
import numpy as np
import pandas as pd

from . import fitted, outofcore
from ._missing_labels import missing_labels

if TYPE_CHECKING:
    import dask.array as da
    import dask.dataframe as dd

    import bayesnb

    from ._typing import ArrayLike

PREDICT_METHODS = ("predict", "predict_proba", "predict_log_proba")


def is_dask(X: Any) -> bool:
    """True for a Dask collection (array, DataFrame, Series); never imports Dask itself."""
    if "dask" not in sys.modules:
        return False
    from dask import is_dask_collection

    return is_dask_collection(X)


# ---------------------------------------------------------------------- fitting
def fit(model: bayesnb.NaiveBayes, X: da.Array | dd.DataFrame, y: ArrayLike,
        sample_weight: ArrayLike | None = None, *, split_every: int = 8) -> bayesnb.NaiveBayes:
    """Fit ``model`` (in place) on a Dask ``X`` by a Dask reduction of sufficient statistics.

    Parameters
    ----------
    model : NaiveBayes
    X : dask.array.Array of shape (n, F) or dask.dataframe.DataFrame
        Partitioned along rows (a Dask array is rechunked to one block of columns).
    y : Dask Series/array with the same partitions, or array-like of length n
        A pandas ``y`` with a Dask DataFrame ``X`` is aligned on ``X``'s index, as pandas
        aligns (refused when its index does not hold X's row labels; a ``reset_index`` whose
        labels are X's pairs by them); any other in-memory ``y`` (a NumPy array)
        follows X's rows in partition order (``X.compute()``'s order, which after
        ``dd.from_pandas`` is sorted by index) and is split to the partition lengths.
    sample_weight : like ``y``, optional
    split_every : int, default=8
        Fan-in of the tree reductions.

    Returns
    -------
    model : NaiveBayes
        Fitted with the classes, levels and statistics of ``model.fit(X.compute(),
        y.compute())``. Rows with a missing label are left out under
        ``missing_label="drop"`` (with one ``MissingLabelWarning``), else an error
        (semi-supervised MCMC fitting needs the rows in memory).

    Examples
    --------
    ``NaiveBayes.fit`` calls this for a Dask collection:

    >>> import numpy as np, dask.dataframe as dd, bayesnb as bnb
    >>> from bayesnb.datasets import load_titanic
    >>> X, y = load_titanic()
    >>> frame = dd.from_pandas(X.assign(Survived=y), npartitions=4)
    >>> clf = bnb.NaiveBayes().fit(frame[["Class", "Sex", "Age"]], frame["Survived"])
    >>> clf.class_count_
    array([1490.,  711.])
    >>> bool(np.allclose(clf.predict_proba(X), bnb.NaiveBayes().fit(X, y).predict_proba(X)))
    True
    """
    import dask

    if int(split_every) < 2:
        raise ValueError(f"split_every must be at least 2, got {split_every!r}.")
    if getattr(model, "infer_counts", False):  # -- count inference: decided from values
        raise ValueError("infer_counts=True decides from the values, which a Dask fit cannot "
                         "see before its families are fixed; declare the count columns, e.g. "
                         "features={'visits': bnb.Poisson()}, or fit chunks with fit_chunks.")
    xs, ys, ws, meta = _partitions(X, y, sample_weight)
    from .families._base import float64_mode

    x64 = float64_mode()
    kernel = getattr(model, "use_kernel", False)
    lay = outofcore.layout(model.features, meta, use_kernel=kernel)
    # missing_label='drop' leaves rows without a label out of both passes, as fit_chunks does
    drop = getattr(model, "missing_label", None) == "drop"
    summaries = [dask.delayed(_scan_partition)(lay, model.features, x, y_, w, i, x64, kernel,
                                               drop)
                 for i, (x, y_, w) in enumerate(zip(xs, ys, ws, strict=True))]
    dropped = [dask.delayed(_n_missing)(y_) for y_ in ys] if drop else []
    summary, *dropped = dask.compute(_tree(summaries, outofcore.combine, split_every), *dropped)
    if summary is None and sum(dropped):
        outofcore.refuse_all_dropped(sum(dropped))
    if summary is None:
        raise ValueError("X has no rows: there is nothing to fit.")
    outofcore.check_weighed(summary)
    template = outofcore.start(model.features, lay, summary, use_kernel=kernel)
    shipped = dask.delayed(fitted.to_numpy(template))
    families = template.families
    parts = [dask.delayed(_stats_partition)(shipped, x, y_, w, i, x64, drop)
             for i, (x, y_, w) in enumerate(zip(xs, ys, ws, strict=True))]
    merge = _Merge(families, x64)
    (stats,) = dask.compute(_tree(parts, merge, split_every))
    if stats is None:
        raise ValueError("X has no rows: there is nothing to fit.")
    outofcore.check_total(stats)
    outofcore.warn_dropped(sum(dropped), stacklevel=4)
    # as fit: undefined estimates are reported and NUTS runs before the model is installed
    return model._install(fitted.with_statistics(template, stats))


def _partitions(X, y, sample_weight):
    """Delayed row blocks of ``X``, ``y`` and ``sample_weight`` (``None`` per block when not
    given) that line up, and the empty in-memory table of ``X``.

    Columns of one Dask DataFrame (``df[["a", "b"]]`` and ``df["y"]``) are read as one frame:
    Dask's optimiser plans each collection on its own and may give a projection of fewer
    columns other partitions (Parquet files are combined when few columns are read), so they
    are joined with ``assign`` (blockwise for co-aligned collections) and split again inside
    each task. Unrelated collections are zipped partition by partition.
    """
    import dask

    together = {name: v for name, v in (("y", y), ("sample_weight", sample_weight))
                if v is not None and _same_frame(X, v)}
    if not together:
        xs, meta = _x_partitions(X)
        ys = _aligned(y, X, xs, "y")
        ws = ([None] * len(xs) if sample_weight is None else
              _aligned(sample_weight, X, xs, "sample_weight"))
        return xs, ys, ws, meta
    meta = X._meta
    columns = {name: _free_name(X.columns, name) for name in together}
    frame = X.assign(**{columns[name]: v for name, v in together.items()})
    pieces = frame.to_delayed()
    split = [dask.delayed(_split_partition, nout=3)(p, columns.get("y"),
                                                    columns.get("sample_weight"))
             for p in pieces]
    xs = [s[0] for s in split]
    ys = ([s[1] for s in split] if "y" in together else _aligned(y, X, xs, "y"))
    if sample_weight is None:
        ws = [None] * len(xs)
    elif "sample_weight" in together:
        ws = [s[2] for s in split]
    else:
        ws = _aligned(sample_weight, X, xs, "sample_weight")
    return xs, ys, ws, meta


def _same_frame(X, v) -> bool:
    """True when the Dask DataFrame ``X`` and the Dask Series ``v`` derive from the same frame
    (Dask's own test for blockwise alignment: one common input, modulo blockwise steps and
    column projection), so their rows line up partition by partition."""
    import dask.dataframe as dd

    if not (isinstance(X, dd.DataFrame) and isinstance(v, dd.Series)):
        return False
    try:
        from dask.dataframe.dask_expr._expr import are_co_aligned
    except ImportError:  # another Dask layout: equal known divisions are the safe case
        return X.known_divisions and X.divisions == v.divisions
    return bool(are_co_aligned(X.expr, v.expr))


def _free_name(columns, name: str) -> str:
    out = f"__bayesnb_{name}__"
    while out in set(columns):
        out += "_"
    return out


def _split_partition(part, y_column, w_column):
    """One partition of ``X`` with the target (and weights) as columns -> ``(X, y, w)``."""
    drop = [c for c in (y_column, w_column) if c is not None]
    y = part[y_column] if y_column is not None else None
    w = part[w_column] if w_column is not None else None
    return part.drop(columns=drop), y, w


def _x_partitions(X):
    """Delayed row blocks of ``X`` and an empty in-memory table of its type and dtypes."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (rows x columns), got a Dask array of shape "
                             f"{X.shape}.")
        X = X.rechunk({1: -1})
        meta = X._meta
        from scipy import sparse

        if sparse.issparse(meta):
            meta = sparse.csr_matrix((0, X.shape[1]), dtype=X.dtype)
        else:
            meta = np.empty((0, X.shape[1]), dtype=X.dtype)
        return list(X.to_delayed()[:, 0]), meta
    if isinstance(X, dd.DataFrame):
        return list(X.to_delayed()), X._meta
    raise TypeError(f"X is a Dask {type(X).__name__}; NaiveBayes takes a Dask array (rows x "
                    f"columns) or a Dask DataFrame.")


def _aligned(v, X, xs: list, name: str) -> list:
    """``v`` (labels or weights) as one piece per partition of ``X``."""
    import dask.array as da
    import dask.dataframe as dd

    if is_dask(v):
        if isinstance(v, da.Array):
            if v.ndim != 1:
                raise ValueError(f"{name} must be 1-D, got a Dask array of shape {v.shape}.")
            if isinstance(X, da.Array) and not any(np.isnan(c) for c in X.chunks[0]):
                v = v.rechunk((X.chunks[0],))
            pieces = list(v.to_delayed())
        elif isinstance(v, dd.Series | dd.DataFrame):
            pieces = list(v.to_delayed())
        else:
            raise TypeError(f"{name} is a Dask {type(v).__name__}; give a Dask Series or array.")
        if len(pieces) != len(xs):
            raise ValueError(f"{name} has {len(pieces)} partitions and X has {len(xs)}, and "
                             f"they are not columns of one Dask DataFrame; take both from one "
                             f"frame (df[columns], df[target]) or give them the same "
                             f"partitions.")
        return pieces
    if v is None:
        raise ValueError(f"NaiveBayes requires {name} to be passed, but it is None.")
    if isinstance(v, pd.Series | pd.DataFrame) and isinstance(X, dd.DataFrame):
        return _by_index(v, xs, name)
    values = v.to_numpy() if isinstance(v, pd.Series | pd.Index) else np.asarray(v)
    lengths = _lengths(X, xs)
    if values.shape[0] != sum(lengths):
        raise ValueError(f"X has {sum(lengths)} rows but {name} has {values.shape[0]}.")
    bounds = np.cumsum([0, *lengths])
    return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _by_index(v, xs: list, name: str) -> list:
    """A pandas ``v`` as one piece per partition of a Dask DataFrame, aligned on its index:
    Dask's rows are in partition order (``dd.from_pandas`` sorts them by index), which need
    not be ``v``'s order. ``v``'s index must hold X's labels, each once, or be X's index in
    X's order (then duplicates are allowed); anything else is refused."""
    import dask

    # the index of the very blocks fitted (see _lengths)
    indexes = dask.compute(*[dask.delayed(_index)(x) for x in xs])
    lengths = [len(ix) for ix in indexes]
    if len(v) != sum(lengths):
        raise ValueError(f"X has {sum(lengths)} rows but {name} has {len(v)}.")
    full = indexes[0].append(list(indexes[1:])) if len(indexes) > 1 else indexes[0]
    if v.index.equals(full):
        values = v.to_numpy()
    else:
        if not (v.index.is_unique and full.is_unique):
            raise ValueError(f"{name} is a pandas {type(v).__name__} whose index is not X's "
                             f"index in X's row order, and an index with repeated labels "
                             f"cannot be aligned; give {name} X's index, or take it from "
                             f"the same Dask DataFrame (df[target]).")
        where = v.index.get_indexer(full)
        if np.any(where < 0):
            label = full[np.argmax(where < 0)]
            label = label.item() if isinstance(label, np.generic) else label
            raise ValueError(f"{name} is a pandas {type(v).__name__} whose index lacks X's "
                             f"row label {label!r}: it is aligned on "
                             f"X's index (Dask keeps X's rows in index order); give {name} "
                             f"X's index, or take it from the same Dask DataFrame.")
        values = v.to_numpy()[where]
    bounds = np.cumsum([0, *lengths])
    return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _index(part) -> pd.Index:
    return part.index


def _lengths(X, xs: list) -> list[int]:
    import dask.array as da

    if isinstance(X, da.Array) and not any(np.isnan(c) for c in X.chunks[0]):
        return [int(c) for c in X.chunks[0]]
    import dask

    if isinstance(X, da.Array):
        (lengths,) = dask.compute(X.map_blocks(lambda b: np.array([b.shape[0]]), drop_axis=1,
                                               dtype=int))
        return [int(n) for n in np.asarray(lengths)]
    # the lengths of the very blocks fitted (X.map_partitions(len) may be planned with other
    # partitions: the optimiser combines files when no column is read)
    return [int(n) for n in dask.compute(*[dask.delayed(len)(x) for x in xs])]


def _tree(parts: list, combine, split_every: int):
    """Delayed pairwise-in-order reduction of ``parts`` (order kept: first-seen levels)."""
    import dask

    while len(parts) > 1:
        parts = [dask.delayed(_reduce_group)(combine, *parts[i:i + split_every])
                 for i in range(0, len(parts), split_every)]
    return parts[0] if parts else dask.delayed(None)


def _reduce_group(combine, *items):
    out = None
    for item in items:
        out = combine(out, item)
    return out


class _Merge:
    """The statistics reduction step (a picklable callable: family types and the dtype mode)."""

    def __init__(self, families: tuple, x64: bool):
        self.families = families
        self.x64 = x64

    def __call__(self, a, b):
        with jax.enable_x64(self.x64):
            return fitted.merge_statistics(self.families, a, b)


def _n_missing(y) -> int:
    missing = missing_labels(y)
    return 0 if missing is None else int(missing.sum())


def _labelled(X, y, w, drop: bool) -> outofcore.Chunk:
    """The partition without its rows whose label is missing, under ``drop``."""
    return outofcore.labelled_chunk(outofcore.Chunk(X, y, w), drop, [])


def _scan_partition(lay, features, X, y, w, i: int, x64: bool, use_kernel: bool = False,
                    drop: bool = False):
    where = f"partition {i}"
    X, y, w = _labelled(X, y, w, drop)
    with jax.enable_x64(x64):
        outofcore.check_layout(lay, features, X, where, use_kernel=use_kernel, sample_weight=w)
        try:
            return outofcore.summarise(lay, X, y, w)
        except (ValueError, TypeError) as err:
            raise type(err)(f"{where}: {err}") from err


def _stats_partition(template, X, y, w, i: int, x64: bool, drop: bool = False):
    X, y, w = _labelled(X, y, w, drop)
    with jax.enable_x64(x64):
        try:
            return outofcore.chunk_stats(template, X, y, w)
        except (ValueError, TypeError) as err:
            raise type(err)(f"partition {i}: {err}") from err


# ---------------------------------------------------------------------- prediction
def predict(model: bayesnb.NaiveBayes, X: da.Array | dd.DataFrame,
            method: str) -> da.Array | dd.DataFrame | dd.Series:
    """``model.<method>(X)`` for a Dask ``X``, partition by partition, as a Dask collection.

    A Dask array gives a Dask array with the same row chunks: labels ``(n,)`` for ``predict``,
    ``(n, n_classes)`` probabilities otherwise. A Dask DataFrame gives, with its index, a Series
    of labels named ``"prediction"`` or a DataFrame with one column per class. Nothing is
    computed until you call ``.compute()`` (or ``persist``); each partition's result equals
    the in-memory method's on those rows. The model travels to the workers once, with its
    statistics as NumPy arrays; workers predict in the driver's dtype mode.

    Examples
    --------
    ``predict``, ``predict_proba`` and ``predict_log_proba`` call this for a Dask collection:

    >>> import numpy as np, dask.dataframe as dd, bayesnb as bnb
    >>> from bayesnb.datasets import load_titanic
    >>> X, y = load_titanic()
    >>> clf = bnb.NaiveBayes().fit(X, y)
    >>> lazy = clf.predict_proba(dd.from_pandas(X, npartitions=4))
    >>> lazy.npartitions, lazy.columns.tolist()
    (4, ['No', 'Yes'])
    >>> bool(np.allclose(lazy.compute().to_numpy(), clf.predict_proba(X)))
    True
    >>> clf.predict(dd.from_pandas(X, npartitions=4)).compute().value_counts().to_dict()
    {'No': 1726, 'Yes': 475}
    """
    import dask
    import dask.array as da
    import dask.dataframe as dd

    if method not in PREDICT_METHODS:
        raise ValueError(f"method must be one of {PREDICT_METHODS}, got {method!r}.")
    model._scorer()  # errors (undefined estimates) on the driver, before any task
    from .families._base import float64_mode

    shipped = dask.delayed(portable(model))
    x64 = float64_mode()
    classes = model.classes_
    if isinstance(X, da.Array):
        xs, _ = _x_partitions(X)
        X = X.rechunk({1: -1})
        blocks = []
        for x, n in zip(xs, X.chunks[0], strict=True):
            shape = (n,) if method == "predict" else (n, len(classes))
            dtype = classes.dtype if method == "predict" else np.float64
            out = dask.delayed(_predict_partition)(shipped, x, method, x64, None)
            blocks.append(da.from_delayed(out, shape=shape, dtype=dtype))
        return da.concatenate(blocks, axis=0)
    if not isinstance(X, dd.DataFrame):
        _x_partitions(X)  # the error for other collections
    if method == "predict":
        meta = pd.Series(np.empty(0, dtype=classes.dtype), name="prediction",
                         index=X._meta.index, dtype=classes.dtype)
    else:
        meta = pd.DataFrame({c: np.empty(0) for c in classes}, index=X._meta.index,
                            columns=pd.Index(classes))
    # a blockwise step of X: it keeps X's partitions, divisions and index (name included),
    # however the optimiser plans X
    return X.map_partitions(_predict_frame, shipped, method, x64, meta=meta,
                            enforce_metadata=False)


def portable(model):
    """A copy of a fitted estimator to send to other processes: the fitted value with every
    array as NumPy (which pickles bit-exactly whatever the receiver's JAX dtype mode), no
    cached scorer."""
    state = {k: v for k, v in model.__dict__.items() if k != "_cache"}
    out = object.__new__(type(model))
    out.__dict__ = {**state, "fitted_": fitted.to_numpy(model.fitted_)}
    return out


def _predict_partition(model, X, method: str, x64: bool, kind):
    # a copy: the scorer it caches (JAX arrays) must not ride along when Dask moves the
    # shared model object to another worker, where it would be unpickled outside x64 mode
    model = portable(model)
    with jax.enable_x64(x64):
        result = getattr(model, method)(X)
    if kind != "frame":
        return result
    if method == "predict":
        return pd.Series(result, index=X.index, name="prediction", dtype=model.classes_.dtype)
    return pd.DataFrame(result, index=X.index, columns=pd.Index(model.classes_))


def _predict_frame(X, model, method: str, x64: bool):
    return _predict_partition(model, X, method, x64, "frame")
