r"""The remedy for a dependent group of discrete columns: model it jointly (Kononenko's
semi-naive Bayes, *Semi-naive Bayesian classifier*, EWSL 1991).

Naive Bayes multiplies :math:`p(a \mid c)\,p(b \mid c)`; when :math:`a` and :math:`b` are
dependent given the class (a copied column, Barber's one-hot coded attribute, seed 000 section 4)
the product counts the same evidence twice and the probabilities become overconfident. Joining
replaces the two columns by one Categorical column whose levels are the observed combinations,
so the model multiplies :math:`p(a, b \mid c)` instead: exact for any dependence between them,
at the cost of :math:`V_a V_b` levels to learn.

Design: the join is a transformation of ``X`` (:func:`join_columns`, and :class:`JoinColumns`
for a scikit-learn ``Pipeline``), not a new family or a ``features=`` spec. The joined column is
an ordinary Categorical column, so fitting, every method, missing values, ``partial_fit``,
``merge``, save/load, Dask and the diagnostics work on it unchanged, and nothing is added to the
fitted model or the model file. The price: the join must be applied to the data given to
``predict`` too (a ``Pipeline`` does it), and a saved model stores the joined column (its name
``"a&b"``, levels ``"x&y"``); the joiner itself is its two parameters, to rebuild beside
``bayesnb.load``.

The joined column gets its own family and prior (dtype inference: ``Categorical(alpha=1)``, a
uniform Dirichlet over the combinations seen at fit; two Bernoulli(1, 1) columns that always agree
join into exactly one Bernoulli(1, 1) column). A combination never seen at fit is a new level at
prediction: declare the levels with ``Categorical(categories=...)`` on the joined column, or let
the Categorical family's rule for unseen values apply.

Values: each value is written with ``str`` (a float that is an integer as an int, so ``1`` and
``1.0`` give the same level whether or not a column held missing values), joined with ``sep``.
A row with any member missing gets a missing joined value (the model leaves that factor out for
the row, as for any missing value). Two different value tuples that would write the same string
(a value containing ``sep``) are an error naming the columns.

Only discrete columns join: a column holding a number that is not an integer (a measurement:
every row would be a level of its own, never seen again) is an error naming it; bin it first
(``pd.cut``) if its dependence is to be modelled.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

if TYPE_CHECKING:
    from ._typing import ArrayLike

#: groups of columns to join: tuples of column labels, or a dependence report
Groups: TypeAlias = "Sequence[Sequence[Hashable]] | pd.DataFrame"


def _text(v) -> str:
    if isinstance(v, float | np.floating) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, np.generic):
        v = v.item()
    return str(v)


def groups_from_report(report: pd.DataFrame, threshold: float = 0.0) -> list[tuple]:
    """Pairs of a :func:`bayesnb.analysis.dependence` report worth joining: discrete pairs
    (method ``"joint Dirichlet"``) with a log Bayes factor above ``threshold``, strongest first;
    a column already taken joins the group that took it (so a one-hot coded attribute, whose
    columns are pairwise dependent, becomes one group)."""
    from .dependence import JOINT_DIRICHLET

    rows = report[(report["method"] == JOINT_DIRICHLET)
                  & (report["log_bayes_factor"] > threshold)]
    rows = rows.sort_values("log_bayes_factor", ascending=False, kind="stable")
    groups: list[list] = []
    where: dict = {}
    for a, b in zip(rows["column_a"], rows["column_b"], strict=True):
        ga, gb = where.get(a), where.get(b)
        if ga is None and gb is None:
            groups.append([a, b])
            where[a] = where[b] = len(groups) - 1
        elif ga is not None and gb is None:
            groups[ga].append(b)
            where[b] = ga
        elif gb is not None and ga is None:
            groups[gb].append(a)
            where[a] = gb
        elif ga != gb:  # two groups linked by this pair: merge them
            groups[ga].extend(groups[gb])
            for c in groups[gb]:
                where[c] = ga
            groups[gb] = []
    return [tuple(g) for g in groups if g]


def _as_frame(X) -> pd.DataFrame:
    """``X`` as a DataFrame; an array's columns are named by position and keep its dtype (a
    float array stays float, so its columns stay measurements for the model after the join)."""
    from scipy import sparse

    if isinstance(X, pd.DataFrame):
        return X
    if sparse.issparse(X):  # the joined column is text, which a sparse matrix cannot hold
        raise ValueError("sparse input is not supported by join_columns: pass a DataFrame or "
                         "a dense array (X.toarray()).")
    values = np.asarray(X)
    if values.dtype.kind in "US":  # mixed cells (["x", 1.5]) read as text: keep each cell
        values = np.asarray(X, dtype=object)
    if values.ndim != 2:
        raise ValueError(f"X must be 2-D (rows by columns), got shape {values.shape}. Reshape "
                         f"your data with X.reshape(-1, 1) for one column or X.reshape(1, -1) "
                         f"for one row.")
    return pd.DataFrame(values)


def _resolve(X, groups) -> list[tuple]:
    if isinstance(groups, pd.DataFrame):  # each group in X's column order
        order = {c: i for i, c in enumerate(X.columns)}
        groups = [sorted(g, key=lambda c: order.get(c, -1)) for g in groups_from_report(groups)]
    resolved, used = [], set()
    for group in groups:
        group = tuple(group)
        if len(group) < 2:
            raise ValueError(f"group {group!r}: join at least two columns.")
        for c in group:
            if c not in X.columns:
                raise ValueError(f"column {c!r} (in group {group!r}) is not a column of X.")
            if c in used:
                raise ValueError(f"column {c!r} is in two groups; put it in one group.")
            used.add(c)
        resolved.append(group)
    return resolved


def join_columns(X: ArrayLike, groups: Groups, *, sep: str = "&") -> pd.DataFrame:
    """``X`` with each group of columns replaced by one column of their combined values.

    Parameters
    ----------
    X : DataFrame, or array-like (columns then named by position; the columns not joined keep
        the array's dtype, so a float array's other columns stay numbers)
    groups : sequence of tuples of column labels, or a dependence report
        E.g. ``[("a", "b"), ("c1", "c2", "c3")]``. A DataFrame from
        :func:`bayesnb.analysis.dependence` joins its dependent discrete pairs
        (:func:`groups_from_report`), so acting on the diagnostic is one line:
        ``join_columns(X, dependence(clf, X, y))``.
    sep : str, default "&"
        Joins the column names (the new column is ``"a&b"``, in the place of the group's first
        column) and the values (``"x&y"``).

    Returns
    -------
    DataFrame; a joined value is missing where any member is missing. Give the joined column a
    Categorical family (dtype inference does so: its values are strings).

    Examples
    --------
    >>> import pandas as pd, bayesnb as bnb
    >>> X = pd.DataFrame({"a": ["x", "x", "y", None], "b": [1, 0, 0, 1], "c": ["u", "v", "u", "v"]})
    >>> bnb.join_columns(X, [("a", "b")])
       a&b  c
    0  x&1  u
    1  x&0  v
    2  y&0  u
    3  NaN  v
    """
    X = _as_frame(X)
    resolved = _resolve(X, groups)
    out = {}
    first = {g[0]: g for g in resolved}
    members = {c for g in resolved for c in g}
    for col in X.columns:
        if col in first:
            group = first[col]
            name = sep.join(map(str, group))
            if name in X.columns and name not in group:
                raise ValueError(f"the joined column {name!r} would replace an existing column; "
                                 "choose another sep.")
            out[name] = _join_values(X, group, sep)
        elif col not in members:
            out[col] = X[col]
    return pd.DataFrame(out, index=X.index)


def _check_discrete(column: pd.Series, name) -> None:
    """Refuse a column holding a number that is not an integer (NaN is missing, not a
    value)."""
    values = column.dropna()
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = pd.Series(values.cat.categories)
    if values.dtype == object:  # only its float cells can hold a non-integer number
        values = values[values.map(lambda v: isinstance(v, float | np.floating))]
    elif not pd.api.types.is_float_dtype(values.dtype):
        return  # booleans, integers, strings
    numbers = values.to_numpy(dtype=np.float64)
    bad = ~np.isfinite(numbers) | (numbers != np.round(numbers))
    if bad.any():
        raise ValueError(f"column {name!r} holds {float(numbers[bad][0])!r}, not a discrete "
                         "value: join_columns joins discrete columns (joining a continuous one "
                         "makes a level of almost every row); bin it first (pd.cut).")


def _join_values(X: pd.DataFrame, group: tuple, sep: str) -> pd.Series:
    for c in group:
        _check_discrete(X[c], c)
    parts = [X[c] for c in group]
    missing = np.zeros(len(X), dtype=bool)
    for p in parts:
        missing |= p.isna().to_numpy()
    joined = np.full(len(X), np.nan, dtype=object)
    keys = list(zip(*(p[~missing].map(_text).tolist() for p in parts), strict=True))
    text = [sep.join(k) for k in keys]
    if len(set(keys)) != len(set(text)):
        raise ValueError(f"columns {list(group)}: some values contain {sep!r}, so different "
                         "combinations would read the same; choose another sep.")
    joined[~missing] = text
    return pd.Series(joined, index=X.index, dtype=object)


class JoinColumns(TransformerMixin, BaseEstimator):
    """:func:`join_columns` as a scikit-learn transformer, for a ``Pipeline`` in front of
    :class:`bayesnb.NaiveBayes` (it joins the data at fit and at predict alike).

    Parameters
    ----------
    groups : sequence of tuples of column labels, or a dependence report (resolved at fit)
    sep : str, default "&"

    Attributes
    ----------
    groups_ : list of tuples, the groups joined
    n_features_in_ : int, the number of columns of the ``X`` given to fit
    feature_names_in_ : ndarray of the column names of that ``X``; only when it was a
        DataFrame (an array's columns are named by position, 0, 1, ...)

    ``transform`` takes the same columns: a DataFrame's by name (any order; a missing or
    unknown column is an error naming it), an array's by position (the same number of columns).

    Examples
    --------
    PlayTennis with a copy of ``Wind``: joined, the pair counts once, and the model is the one
    without the copy.

    >>> import numpy as np, bayesnb as bnb
    >>> from sklearn.pipeline import make_pipeline
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> doubled = days.assign(Windy=days["Wind"])
    >>> model = make_pipeline(bnb.JoinColumns([("Wind", "Windy")]), bnb.NaiveBayes())
    >>> model = model.fit(doubled, play)
    >>> model[0].get_feature_names_out().tolist()
    ['Outlook', 'Temperature', 'Humidity', 'Wind&Windy']
    >>> naive = bnb.NaiveBayes().fit(doubled, play)  # counts the wind twice
    >>> naive.predict_proba(doubled.head(1)).round(4)
    array([[0.6159, 0.3841]])
    >>> model.predict_proba(doubled.head(1)).round(4)
    array([[0.7042, 0.2958]])
    >>> without_copy = bnb.NaiveBayes().fit(days, play)
    >>> bool(np.allclose(model.predict_proba(doubled), without_copy.predict_proba(days)))
    True
    """

    def __init__(self, groups: Groups = (), sep: str = "&") -> None:
        self.groups = groups
        self.sep = sep

    def fit(self, X: ArrayLike, y: object = None) -> JoinColumns:
        frame = _as_frame(X)
        self.groups_ = _resolve(frame, self.groups)
        self.n_features_in_ = frame.shape[1]
        if isinstance(X, pd.DataFrame):
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        elif hasattr(self, "feature_names_in_"):  # refitted on an array: names by position
            del self.feature_names_in_
        return self

    def transform(self, X: ArrayLike) -> pd.DataFrame:
        if not hasattr(self, "groups_"):
            raise ValueError("JoinColumns is not fitted; call fit first.")
        return join_columns(self._columns_as_fitted(X), self.groups_, sep=self.sep)

    def _names_in(self) -> list:
        return list(getattr(self, "feature_names_in_", range(self.n_features_in_)))

    def _columns_as_fitted(self, X: ArrayLike) -> pd.DataFrame:
        """``X`` with the columns seen at fit: a DataFrame fitted and given is matched by name;
        otherwise the columns are matched by position, so their number must agree."""
        frame = _as_frame(X)
        names = self._names_in()
        if isinstance(X, pd.DataFrame) and hasattr(self, "feature_names_in_"):
            known, given = set(names), set(frame.columns)
            missing = [c for c in names if c not in given]
            unknown = [c for c in frame.columns if c not in known]
            if missing or unknown:
                wrong = ([f"lacks column(s) {missing[:10]}"] if missing else []) \
                    + ([f"has column(s) {unknown[:10]} it was not fitted on"] if unknown else [])
                raise ValueError(f"X {' and '.join(wrong)}: JoinColumns was fitted on the "
                                 f"columns {names[:20]}.")
            return frame
        if frame.shape[1] != self.n_features_in_:  # scikit-learn's wording (NaiveBayes's too)
            raise ValueError(f"X has {frame.shape[1]} features, but JoinColumns is expecting "
                             f"{self.n_features_in_} features as input.")
        if list(frame.columns) != names:  # an array (or a DataFrame for an array): by position
            frame = frame.set_axis(pd.Index(names, dtype=object), axis=1)
        return frame

    def get_feature_names_out(self, input_features: ArrayLike | None = None) -> np.ndarray:
        names = self._names_in() if input_features is None else list(input_features)
        if len(names) != self.n_features_in_:
            raise ValueError(f"input_features has {len(names)} names, but JoinColumns was "
                             f"fitted on {self.n_features_in_} columns.")
        X = pd.DataFrame(columns=names)
        return np.asarray(join_columns(X, self.groups_, sep=self.sep).columns, dtype=object)
