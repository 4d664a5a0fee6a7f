"""Labelled views of per-row results: rows by the input's index, columns by class.

The rule of the library: a result that scikit-learn returns as an array (``predict``,
``predict_proba``, ``analysis.decision_function``) stays a NumPy array whatever the input; a
structured result (``predict_uncertainty``'s dict, ``loo``'s :class:`~bayesnb.loo.LooResult`)
keeps its arrays and adds ``to_frame()``, whose rows carry the index of the ``X`` it was
computed from (positions 0..n-1 for an array) and whose columns carry ``classes_``; tables of
the model itself (``explain``, ``conditional_tables``, ``posterior_tables``, ``linear_weights``)
are DataFrames labelled by class and column (positions where the fit's ``X`` had no names).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def plain(value):
    """A NumPy scalar as the Python value it holds (``1``, not ``np.int64(1)``), for a message
    or a label; a tuple (a MultiIndex label) entry by entry; anything else as given."""
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    return value.item() if isinstance(value, np.generic) else value


def row_index(X, n: int) -> pd.Index:
    """The labels of the ``n`` rows of ``X``: a DataFrame's (or Series') index, else the
    positions 0..n-1 (arrays, sparse matrices, lists)."""
    if isinstance(X, pd.DataFrame | pd.Series) and len(X.index) == n:
        return X.index
    return pd.RangeIndex(n)


class PredictiveUncertainty(dict):
    """The result of :meth:`bayesnb.NaiveBayes.predict_uncertainty`: a dict of NumPy arrays
    (``proba``, ``lower``, ``upper`` of shape (n, K); ``entropy``, ``aleatoric``,
    ``mutual_info`` of shape (n,)), whatever the input, plus :meth:`to_frame`.

    Attributes
    ----------
    classes : ndarray of shape (K,)
        The model's ``classes_``, the order of the columns of the (n, K) arrays.
    index : pandas.Index
        The rows' labels: the index of ``X`` when it was a DataFrame, else 0..n-1.
    """

    def __init__(self, arrays: dict, classes, index: pd.Index):
        super().__init__(arrays)
        self.classes = np.asarray(classes)
        self.index = index

    def to_frame(self) -> pd.DataFrame:
        """All quantities as one DataFrame indexed by the rows of ``X``, with two column
        levels ``(quantity, class)``: ``frame["proba"]`` is the (n, K) predictive with the
        classes as columns, ``frame["entropy"]`` a Series (a per-row quantity's class level
        is ``""``). The numbers are the arrays' own."""
        parts, keys = [], []
        for key, value in self.items():
            value = np.asarray(value)
            if value.ndim == 2:
                parts.append(pd.DataFrame(value, index=self.index, columns=list(self.classes)))
            else:
                parts.append(pd.DataFrame({"": value}, index=self.index))
            keys.append(key)
        frame = pd.concat(parts, axis=1, keys=keys)
        frame.columns = frame.columns.set_names(["quantity", "class"])
        return frame
