"""Rows whose label is missing: ``NaiveBayes(missing_label=...)``.

A label is missing when :func:`pandas.isna` says so: ``None``, a float NaN (``np.nan``,
``float("nan")``), ``pd.NA`` or ``pd.NaT``. What such a row means is the estimator's
``missing_label``:

* ``"unlabeled"`` (the default): the row is unlabeled. ``method="mcmc"`` uses it
  (semi-supervised: it enters the posterior through its marginal over the classes); the
  closed-form methods and ``partial_fit`` cannot, and refuse it.
* ``"drop"``: the row is left out of the fit, with a :class:`MissingLabelWarning` that says how
  many rows were left out (R's ``naivebayes::naive_bayes``: "y contains NAs. They are
  excluded from the estimation process"; e1071's ``naiveBayes`` leaves them out silently).
* ``"error"``: refused under every method.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ._data import as_table
from ._labels import plain

#: the values of ``NaiveBayes(missing_label=...)``
MISSING_LABEL = ("unlabeled", "drop", "error")


class MissingLabelWarning(UserWarning):
    """Rows with a missing label were left out of a fit (``missing_label="drop"``).

    Examples
    --------
    >>> import warnings
    >>> import bayesnb as bnb
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     clf = bnb.NaiveBayes(missing_label="drop").fit([[0.0], [1.0], [2.0]], ["a", None, "b"])
    >>> [w.category is bnb.MissingLabelWarning for w in caught], clf.class_count_.tolist()
    ([True], [1.0, 1.0])
    """


def check_missing_label(value) -> str:
    """``value`` if it is one of :data:`MISSING_LABEL`, else a ``ValueError``."""
    if not isinstance(value, str) or value not in MISSING_LABEL:
        raise ValueError(f"missing_label must be one of {MISSING_LABEL}, got {value!r}.")
    return value


def missing_labels(y) -> np.ndarray | None:
    """Boolean mask of the missing labels of ``y`` (None when ``y`` is None)."""
    if y is None:
        return None
    if isinstance(y, list | tuple):  # NumPy would read ["a", nan] as the strings "a", "nan"
        y = np.array(y, dtype=object)
    values = np.asarray(y.to_numpy() if isinstance(y, pd.Series | pd.Index) else y)
    if values.dtype.kind in "biuUS":
        return np.zeros(values.reshape(-1).shape, dtype=bool)
    return pd.isna(pd.Series(values.reshape(-1), dtype=object)).to_numpy()


def keep_rows(X, y, sample_weight, keep: np.ndarray) -> tuple:
    """``(X, y, sample_weight)`` restricted to the rows where ``keep`` is True (a DataFrame
    keeps its index; a sparse matrix stays sparse)."""
    rows = np.flatnonzero(keep)
    table = as_table(X)
    if table.frame is not None:
        X = table.frame.iloc[rows]
    elif table.sparse is not None:
        X = table.sparse[rows]
    else:  # NumPy, or a jax.Array (indexed where it is)
        X = table.array[rows]
    y = y.iloc[rows] if isinstance(y, pd.Series) else np.asarray(y).reshape(-1)[rows]
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight).reshape(-1)[rows]
    return X, y, sample_weight


def check_row_order(X, values, name: str) -> None:
    """Refuse a pandas ``values`` (``y``, ``sample_weight``) whose index holds the row labels
    of a DataFrame ``X`` in another order: read by position, as scikit-learn reads it, each
    row would take another row's label (a Dask fit aligns it by label instead). Where either
    index is a fresh 0..n-1 (``reset_index``, a frame rebuilt from an array) it says nothing
    of the rows, and the values are read by position, as scikit-learn does."""
    if isinstance(values, pd.DataFrame) and values.shape[1] == 1:  # a one-column y
        values = values.iloc[:, 0]
    if not (isinstance(X, pd.DataFrame) and isinstance(values, pd.Series)):
        return
    rows, index = X.index, values.index
    fresh = pd.RangeIndex(len(rows))
    if (len(rows) != len(index) or rows.equals(index) or rows.equals(fresh)
            or index.equals(fresh) or not rows.is_unique or not index.is_unique
            or (rows.get_indexer(index) < 0).any()):
        return
    i = int(np.argmax(rows.to_numpy() != index.to_numpy()))
    ours, theirs = plain(rows[i]), plain(index[i])
    raise ValueError(
        f"{name} is a pandas Series whose index holds X's row labels in another order (row "
        f"{i}: X's label {ours!r}, {name}'s {theirs!r}); {name} is read by position, as "
        f"scikit-learn reads it, so each row would take another row's value. If the index "
        f"labels pair the rows, align it: {name}.loc[X.index]; if the positions do, pass "
        f"{name}.to_numpy().")


def labeled_rows(X, y, sample_weight, missing_label: str, method: str,
                 partial: bool = False, updating: bool = False) -> tuple:
    """``(X, y, sample_weight, unlabeled)`` for a fit (``partial``: a ``partial_fit`` call;
    ``updating``: of a fitted model) under ``missing_label`` (module docs): ``unlabeled`` is
    the rows of ``X`` without a label that ``method="mcmc"`` uses, or None. Under "drop", an
    update whose labels are all missing keeps no rows (it adds nothing, as rows of weight 0
    do); a fit of no rows is refused."""
    setting = check_missing_label(missing_label)
    for name, values in (("y", y), ("sample_weight", sample_weight)):
        check_row_order(X, values, name)
    missing = missing_labels(y)
    if missing is None or not missing.any():
        return X, y, sample_weight, None
    n, first = int(missing.sum()), int(np.argmax(missing))
    what = f"y has {n} missing labels (None, NaN or pd.NA; first at row {first})"
    if setting == "drop":
        if missing.all() and not updating:
            raise ValueError(f"{what}: every label is missing, so missing_label='drop' "
                             "leaves nothing to fit.")
        left = ("them all out, so this update adds no rows" if missing.all() else
                f"these {n} rows out of the fit (as R's naivebayes does)")
        warnings.warn(f"{what}: missing_label='drop' leaves {left}.", MissingLabelWarning,
                      stacklevel=3)
        return (*keep_rows(X, y, sample_weight, ~missing), None)
    if setting == "unlabeled" and method == "mcmc" and not partial:
        if sample_weight is not None:
            raise ValueError("sample_weight with unlabeled rows is not supported.")
        from .fitted import split_unlabeled

        X_l, y_l, X_u = split_unlabeled(X, y)
        return X_l, y_l, None, X_u
    if setting == "error":
        why = "missing_label='error' refuses them"
    elif partial:
        why = ("partial_fit needs every label (unlabeled rows enter only a batch fit under "
               "method='mcmc'); missing_label='drop' leaves such rows out")
    else:
        why = (f"labels must be observed under method={method!r}: missing_label='drop' leaves "
               "such rows out (R's behaviour), method='mcmc' uses them as unlabeled rows")
    raise ValueError(f"{what}; {why}.")
