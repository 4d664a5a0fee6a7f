r"""Tree-augmented naive Bayes: each column may depend on one other column besides the class,
along an undirected spanning tree of the columns, averaged exactly over all trees.

Model (Friedman, Geiger & Goldszmidt 1997; the Bayesian average of Meila & Jaakkola 2000 and
Cerquides & Lopez de Mantaras 2005). Given the class :math:`c` and a spanning tree :math:`T`
of the :math:`F` discrete columns, a row's density factorises over the tree. Within each class
the score-equivalent BDeu prior with equivalent sample size :math:`\alpha` (``alpha_ess``) puts
a Dirichlet(:math:`\alpha / (V_i V_j)`) on each cell of the joint table of a column pair and a
Dirichlet(:math:`\alpha / V_i`) on each level of a column (:math:`V_i` its levels), so the
evidence of a tree does not depend on where it is rooted:

.. math::

    \log p(X \mid y, T) = \sum_c \Big[\sum_{(i,j) \in T} \log \mathrm{DM}(n^c_{ij})
        - \sum_i (\deg_T(i) - 1) \log \mathrm{DM}(n^c_i)\Big]
      = \sum_c \sum_i \log \mathrm{DM}(n^c_i) + \sum_{(i,j) \in T} w_{ij},

with :math:`\log\mathrm{DM}(\mathbf n) = \log\Gamma(A) - \log\Gamma(A + N) + \sum_k
\log\Gamma(a_k + n_k) - \log\Gamma(a_k)` the Dirichlet-multinomial evidence and
:math:`w_{ij} = \sum_c [\log\mathrm{DM}(n^c_{ij}) - \log\mathrm{DM}(n^c_i) -
\log\mathrm{DM}(n^c_j)]` the pair's log Bayes factor for dependence given the class (the
"joint Dirichlet" factor of :mod:`bayesnb.dependence` under the same prior). The class
proportions have the Dirichlet(``class_alpha``) prior of :class:`bayesnb.NaiveBayes`.

``tree`` chooses the structure: a list of edges fixes it; ``"map"`` takes the most probable
tree, the maximum spanning tree of :math:`w` (plus the log edge prior); ``"average"`` (the
default) averages over all :math:`F^{F-2}` trees under the uniform prior (or the edge-factored
prior :math:`p(T) \propto \prod_{e \in T} \beta_e` of ``edge_prior``), exactly: with
:math:`W_{ij} = \beta_{ij} e^{w_{ij}}`, :math:`p(T \mid \text{data}) \propto \prod_{e \in T}
W_e` and the matrix-tree theorem sums it (:mod:`bayesnb._spanning_trees`, in log space).

The predictive of a new row :math:`x` in class :math:`c` under a tree is the ratio of
evidences, which factorises over the tree with the posterior predictive tables
:math:`q_i(u \mid c) = (n^c_i(u) + \alpha/V_i) / (N_c + \alpha)` and
:math:`q_{ij}(u, v \mid c) = (n^c_{ij}(u, v) + \alpha/(V_i V_j)) / (N_c + \alpha)`:

.. math::

    p(x \mid c, T, \text{data}) = \prod_i q_i(x_i) \prod_{(i,j) \in T}
        \frac{q_{ij}(x_i, x_j)}{q_i(x_i)\, q_j(x_j)}, \qquad
    \sum_T p(T \mid \text{data})\, p(x \mid c, T, \text{data}) =
        \prod_i q_i(x_i) \, \frac{Z(W \circ R_x)}{Z(W)},

:math:`R_x` the matrix of the edge ratios and :math:`Z` the sum over trees, per row and class.
Every number is computed in float64 NumPy whatever JAX's dtype.

Examples
--------
Two columns that copy each other and a third that is noise: the data support the edge
between the copies, and nothing else.

>>> import numpy as np, bayesnb as bnb
>>> rng = np.random.default_rng(0)
>>> y = rng.integers(0, 2, 300)
>>> a = np.where(rng.random(300) < 0.8, y, 1 - y)
>>> X = np.column_stack([a, a, rng.integers(0, 2, 300)])
>>> clf = bnb.TreeAugmentedNB().fit(X, y)
>>> clf.edge_probability_.round(3)
     0    1    2
0  0.0  1.0  0.5
1  1.0  0.0  0.5
2  0.5  0.5  0.0
"""

from __future__ import annotations

import numbers
import os
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ._blocks import has_feature_names, warn_feature_names
from ._classes import class_log_evidence, class_log_prior
from ._data import as_table, encode_labels, weighed
from ._missing_labels import check_row_order
from ._spanning_trees import (
    Plan,
    elimination_plan,
    log_edge_marginals,
    log_tree_ratio,
    log_tree_sum,
    max_spanning_tree,
)
from ._typing import ArrayLike, Data
from .dependence import dirichlet_log_evidence
from .families._levels import _may_merge, _refuse_mixing
from .fitted import check_weight

#: the values of ``tree`` besides a list of edges
TREE_MODES = ("average", "map")
#: float64 values of the (rows, classes, F, F) weights one prediction chunk may hold
_CHUNK_VALUES = 1 << 21


# ---------------------------------------------------------------------- data
class Encoded(NamedTuple):
    """Rows as level codes, with what the fit learned about the columns."""

    codes: np.ndarray  # (n, F) int64
    columns: tuple  # names, or positions for an array
    named: bool  # a DataFrame's columns: matched by name at predict
    levels: tuple  # per column, its sorted levels


def _frame(X) -> tuple[pd.DataFrame, bool]:
    """``X`` as a DataFrame, and whether it was one. Read as :class:`bayesnb.NaiveBayes` reads
    it (:func:`bayesnb._data.as_table`: the same errors for complex numbers, a 1-D array,
    ...), except a sparse matrix, refused: every column is read densely, as levels."""
    from scipy import sparse

    if sparse.issparse(X):
        raise ValueError(f"X is a scipy.sparse matrix (shape {X.shape}); TreeAugmentedNB needs "
                         "dense discrete columns: pass X.toarray() (or a DataFrame).")
    table = as_table(X)
    if table.frame is not None:
        return table.frame, True
    return pd.DataFrame(np.asarray(table.array)), False


def _values(frame: pd.DataFrame, j: int, name, levels: tuple | None = None) -> np.ndarray:
    """Column ``j``'s values, refused when missing, not whole numbers, or booleans mixed with
    numbers (in the column, or at prediction, against the fit's ``levels``): ``True == 1``
    in Python would merge them into one level."""
    column = frame.iloc[:, j]
    missing = column.isna().to_numpy()
    if missing.any():  # "NaN" and "inf" below: the words scikit-learn's checks look for
        raise ValueError(f"column {name!r}: {int(missing.sum())} missing value(s) (NaN or None, "
                         f"first in row {int(np.argmax(missing))}); TreeAugmentedNB needs every "
                         "value: impute them, or make 'missing' a level of its own.")
    values = column.to_numpy()
    if values.dtype.kind == "f" and np.isinf(values).any():
        row = int(np.argmax(np.isinf(values)))
        raise ValueError(f"column {name!r} holds {values[row]} (row {row}): TreeAugmentedNB "
                         "models discrete columns, whose levels are finite values.")
    if values.dtype.kind == "f" and not np.all(np.isfinite(values) & (values == np.round(values))):
        # bin numbers, not Intervals: a model file stores numbers and text as levels
        raise ValueError(f"column {name!r} holds numbers that are not whole: TreeAugmentedNB "
                         f"models discrete columns; discretise it first, e.g. "
                         f"pd.cut(X[{name!r}], 5, labels=False).")
    if levels is None:
        if values.dtype == object:  # a bool or number dtype holds one kind only
            _refuse_mixing(values, name)
    elif _may_merge(levels):  # string levels cannot equal a boolean or a number
        _refuse_mixing(values, name, levels)
    return values


def encode_fit(X) -> Encoded:
    """Codes of the training rows; each column's levels are its sorted distinct values."""
    frame, named = _frame(X)
    columns = tuple(frame.columns) if named else tuple(range(frame.shape[1]))
    if len(set(columns)) != len(columns):
        raise ValueError("X has repeated column names.")
    if not columns or len(frame) == 0:
        raise ValueError(f"X needs at least one row and one column, got shape {frame.shape}.")
    codes, levels = np.empty(frame.shape, dtype=np.int64), []
    for j, name in enumerate(columns):
        values = _values(frame, j, name)
        try:
            lv, codes[:, j] = np.unique(values, return_inverse=True)
        except TypeError:
            raise ValueError(f"column {name!r} mixes values that cannot be ordered "
                             f"(e.g. {values[:3].tolist()}).") from None
        levels.append(tuple(lv.tolist()))
    return Encoded(codes, columns, named, tuple(levels))


def _rows(data: Encoded, kept: np.ndarray) -> Encoded:
    """The rows at ``kept``, each column's levels narrowed to those the rows hold."""
    codes, levels = np.empty((len(kept), data.codes.shape[1]), dtype=np.int64), []
    for j, lv in enumerate(data.levels):
        used, codes[:, j] = np.unique(data.codes[kept, j], return_inverse=True)
        levels.append(tuple(lv[i] for i in used))
    return data._replace(codes=codes, levels=tuple(levels))


def encode_rows(X, columns: tuple, named: bool, levels: tuple) -> np.ndarray:
    """Codes (n, F) of new rows against the fit's columns and levels; an unknown level is an
    error naming its column. A DataFrame after a DataFrame fit is matched by name, anything
    else by position, with scikit-learn's warning where only one of them has feature names
    (string column names: ``feature_names_in_``)."""
    frame, is_frame = _frame(X)
    if named != is_frame:  # as scikit-learn and NaiveBayes: an array's columns by position
        warn_feature_names(has_feature_names(columns, named),
                           has_feature_names(frame.columns, is_frame), "TreeAugmentedNB",
                           stacklevel=3)
        named = False
    if named:
        absent = [c for c in columns if c not in frame.columns]
        extra = [c for c in frame.columns if c not in columns]
        if absent:
            also = (f", which has column(s) {extra[:10]} that the model was not fitted on "
                    "(a misspelt name?)" if extra else "")
            raise ValueError(f"column {absent[0]!r} of the fit is not in X{also}.")
        if extra:  # as NaiveBayes: their values would be left out without a word
            raise ValueError(f"X has column(s) {extra[:10]} that the model was not fitted on "
                             f"(it reads {list(columns)[:20]}); their values would be "
                             "ignored: drop them, or fit a model with them.")
        frame = frame[list(columns)]
    elif frame.shape[1] != len(columns):  # scikit-learn's words (its n_features_in_ check)
        raise ValueError(f"X has {frame.shape[1]} features, but TreeAugmentedNB is expecting "
                         f"{len(columns)} features as input.")
    codes = np.empty(frame.shape, dtype=np.int64)
    for j, name in enumerate(columns):
        values = _values(frame, j, name, levels[j])
        codes[:, j] = pd.Index(list(levels[j]), dtype=object).get_indexer(values)
        unknown = codes[:, j] < 0
        if unknown.any():
            raise ValueError(f"column {name!r}: level {values[np.argmax(unknown)]!r} was not "
                             f"seen in training (levels: {list(levels[j])[:10]}).")
    return codes


# ---------------------------------------------------------------------- statistics
class Statistics(NamedTuple):
    """Per-class counts: the sufficient statistics of every tree (and what a file stores)."""

    class_count: np.ndarray  # (K,)
    single: tuple  # per column i: (K, V_i)
    pair: tuple  # per pair i < j (lexicographic): (K, V_i, V_j)


def pairs(n_columns: int) -> list[tuple[int, int]]:
    """The column pairs ``(i, j)``, ``i < j``, in the order statistics keep them."""
    return [(i, j) for i in range(n_columns) for j in range(i + 1, n_columns)]


def count(codes, y, n_classes: int, sizes, weight=None) -> Statistics:
    """Weighted class counts, level counts per column and joint counts per pair."""
    w = np.ones(len(y)) if weight is None else weight
    class_count = np.bincount(y, weights=w, minlength=n_classes)
    single = tuple(np.bincount(y * v + codes[:, i], weights=w, minlength=n_classes * v)
                   .reshape(n_classes, v) for i, v in enumerate(sizes))
    pair = tuple(np.bincount((y * sizes[i] + codes[:, i]) * sizes[j] + codes[:, j], weights=w,
                             minlength=n_classes * sizes[i] * sizes[j])
                 .reshape(n_classes, sizes[i], sizes[j]) for i, j in pairs(len(sizes)))
    return Statistics(class_count, single, pair)


# ---------------------------------------------------------------------- the posterior
class Posterior(NamedTuple):
    """What prediction and the reports read, computed once from the statistics."""

    log_q: tuple  # per column (K, V_i): log q_i(u | c)
    log_r: tuple  # per pair (K, V_i, V_j): log q_ij / (q_i q_j)
    log_bf: np.ndarray  # (F, F) w_ij, 0 on the diagonal
    log_weights: np.ndarray  # (F, F) log beta_ij + w_ij, -inf on the diagonal
    log_z: float  # log sum over trees of prod W
    log_z_prior: float  # log sum over trees of prod beta
    log_single: float  # sum_c sum_i log DM(n_i^c)
    map_tree: tuple  # the most probable tree's edges
    plan: Plan  # the elimination of log_weights, for the predictive ratios


def log_tables(stats: Statistics, alpha_ess: float):
    """The posterior predictive tables (log q_i, log q_ij / (q_i q_j)) and the evidences
    (per column (K,) log DM(n_i^c), per pair (K,) log DM(n_ij^c))."""
    total = np.log(stats.class_count + alpha_ess)[:, None]
    log_q = tuple(np.log(n + alpha_ess / n.shape[1]) - total for n in stats.single)
    f = len(stats.single)
    log_r = tuple(np.log(n + alpha_ess / (n.shape[1] * n.shape[2])) - total[:, :, None]
                  - log_q[i][:, :, None] - log_q[j][:, None, :]
                  for (i, j), n in zip(pairs(f), stats.pair, strict=True))
    dm_single = [dirichlet_log_evidence(n, np.full(n.shape[1], alpha_ess / n.shape[1]))
                 for n in stats.single]
    dm_pair = [dirichlet_log_evidence(n.reshape(n.shape[0], -1),
                                      np.full(n.shape[1] * n.shape[2],
                                              alpha_ess / (n.shape[1] * n.shape[2])))
               for n in stats.pair]
    return log_q, log_r, dm_single, dm_pair


def posterior(stats: Statistics, alpha_ess: float, log_edge_prior: np.ndarray) -> Posterior:
    """Every quantity of the fit, from the counts."""
    log_q, log_r, dm_single, dm_pair = log_tables(stats, alpha_ess)
    f = len(stats.single)
    log_bf = np.zeros((f, f))
    for (i, j), dm in zip(pairs(f), dm_pair, strict=True):
        log_bf[i, j] = log_bf[j, i] = np.sum(dm - dm_single[i] - dm_single[j])
    log_weights = np.where(np.eye(f, dtype=bool), -np.inf, log_bf + log_edge_prior)
    return Posterior(
        log_q, log_r, log_bf, log_weights, float(log_tree_sum(log_weights)),
        float(log_tree_sum(log_edge_prior)), float(sum(np.sum(d) for d in dm_single)),
        tuple(max_spanning_tree(log_weights)),
        elimination_plan(log_weights))


def edge_ratios(post: Posterior, codes: np.ndarray) -> np.ndarray:
    """``log R[i, j, c, row] = log q_ij(x_i, x_j | c) / (q_i q_j)``, (F, F, K, n), 0 on the
    diagonal: the batch last, as :func:`bayesnb._spanning_trees.log_tree_ratio` reads it."""
    n, f = codes.shape
    out = np.zeros((f, f, post.log_q[0].shape[0], n))
    for (i, j), table in zip(pairs(f), post.log_r, strict=True):
        out[i, j] = out[j, i] = table[:, codes[:, i], codes[:, j]]
    return out


def log_likelihood(post: Posterior, codes: np.ndarray, tree) -> np.ndarray:
    """``log p(x | c, data)`` (n, K): under the tree ``tree`` (a list of edges), or averaged
    over all trees (``tree=None``)."""
    f = codes.shape[1]
    base = sum(post.log_q[i][:, codes[:, i]].T for i in range(f))
    if f == 1:
        return base
    if tree is not None:
        index = {p: k for k, p in enumerate(pairs(f))}
        return base + sum(post.log_r[index[e]][:, codes[:, e[0]], codes[:, e[1]]].T
                          for e in tree)
    k = post.log_q[0].shape[0]
    step = max(1, _CHUNK_VALUES // (k * f * f))
    ratio = np.concatenate([
        log_tree_ratio(post.plan, edge_ratios(post, codes[s:s + step]).reshape(f, f, -1))
        .reshape(k, -1).T for s in range(0, len(codes), step)]) if len(codes) else np.zeros((0, k))
    return base + ratio


# ---------------------------------------------------------------------- the estimator
class TreeAugmentedNB(ClassifierMixin, BaseEstimator):
    """Tree-augmented naive Bayes for discrete columns, averaged over all spanning trees.

    Each column may depend on one other column besides the class, along an undirected spanning
    tree of the columns (the model and its formulas: :mod:`bayesnb.tan`). Columns are discrete:
    booleans, integers, strings or categories (Bernoulli and Categorical data alike); each
    column's levels are those seen in training. The fit keeps every pair's joint counts
    (F^2/2 tables); under ``"average"`` each prediction is an O(F^3) elimination per row and
    class (``benchmarks/tan.py``: about 0.3 ms per row and class at 50 columns) and
    ``edge_probability_`` is O(F^4), computed when first read: hundreds of columns, not
    thousands.

    Parameters
    ----------
    alpha_ess : float, default=1.0
        Equivalent sample size of the BDeu prior, per class: a joint table of two columns gets
        a Dirichlet(``alpha_ess / (V_i V_j)``) per cell, a column a Dirichlet(``alpha_ess /
        V_i``) per level.
    tree : {"average", "map"} or list of pairs, default="average"
        ``"average"``: the exact average over all spanning trees (matrix-tree theorem);
        ``"map"``: the most probable tree (maximum spanning tree of the log Bayes factors);
        a list of ``(column, column)`` pairs (names or positions): that tree.
    class_alpha : float or array-like of shape (n_classes,), default=1.0
        Dirichlet prior on the class proportions, as in :class:`bayesnb.NaiveBayes`.
    edge_prior : array-like of shape (n_features, n_features), optional
        Non-negative symmetric prior weights :math:`\\beta_{ij}`, :math:`p(T) \\propto
        \\prod_{e \\in T} \\beta_e` (0 forbids an edge); ``None`` is the uniform prior over
        trees.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The columns of a DataFrame ``X`` whose names are all strings (absent otherwise). A
        DataFrame to predict is matched by column name; an array by position, with
        scikit-learn's warning when the fit had names.
    edge_probability_ : DataFrame of shape (n_features, n_features)
        Posterior probability that each edge is in the tree (under the tree prior, whatever
        ``tree`` is); the values of a column sum to its expected degree.
    edge_log_bayes_factor_ : DataFrame of shape (n_features, n_features)
        :math:`w_{ij}`, the log Bayes factor for dependence of each pair given the class.
    tree_ : list of pairs or None
        The edges predictions use (``"map"`` or a given tree), by column; ``None`` under
        ``"average"``.

    References
    ----------
    Friedman, Geiger & Goldszmidt (1997), Bayesian network classifiers. Meila & Jaakkola
    (2000), Tractable Bayesian learning of tree belief networks. Cerquides & Lopez de Mantaras
    (2005), TAN classifiers based on decomposable distributions.

    Examples
    --------
    >>> import numpy as np, bayesnb as bnb
    >>> rng = np.random.default_rng(1)
    >>> y = rng.integers(0, 2, 400)
    >>> a = np.where(rng.random(400) < 0.7, y, 1 - y)
    >>> b = np.where(rng.random(400) < 0.9, a, 1 - a)  # b copies a, mostly
    >>> X = np.column_stack([a, b, rng.integers(0, 3, 400)])
    >>> clf = bnb.TreeAugmentedNB().fit(X, y)
    >>> round(float(clf.edge_probability_.loc[0, 1]), 3)
    1.0
    >>> clf.set_params(tree="map").fit(X, y).tree_
    [(0, 1), (1, 2)]
    >>> clf.predict_proba([[1, 1, 0]]).round(3)
    array([[0.223, 0.777]])
    """

    def __init__(self, *, alpha_ess: float = 1.0, tree: str | list = "average",
                 class_alpha: float | ArrayLike = 1.0,
                 edge_prior: ArrayLike | None = None) -> None:
        self.alpha_ess = alpha_ess
        self.tree = tree
        self.class_alpha = class_alpha
        self.edge_prior = edge_prior

    # ------------------------------------------------------------------ fitting
    def fit(self, X: Data, y: ArrayLike, sample_weight: ArrayLike | None = None
            ) -> TreeAugmentedNB:
        """Count the classes, every column's levels and every pair's joint levels per class.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Discrete columns; no missing values.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Frequency weights: an integer weight equals that many copies of the row; a row
            of weight 0 is left out (it adds no level and decides no inferred family).

        Returns
        -------
        TreeAugmentedNB
            This estimator, fitted.

        Examples
        --------
        >>> import bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.TreeAugmentedNB(tree="map").fit(days, play)
        >>> clf.tree_
        [('Outlook', 'Humidity'), ('Outlook', 'Wind'), ('Temperature', 'Humidity')]"""
        data = encode_fit(X)
        if y is None:
            raise ValueError("TreeAugmentedNB requires y to be passed, but the target y is None.")
        # NaiveBayes' labels: continuous y, missing labels, booleans mixed with numbers refused
        for name, values in (("y", y), ("sample_weight", sample_weight)):
            check_row_order(X, values, name)
        classes, codes_y = encode_labels(y, len(data.codes))
        weight = check_weight(sample_weight, len(data.codes))
        kept = weighed(weight)  # a row of weight 0 is no row
        if kept is not None:
            data, codes_y, weight = _rows(data, kept), codes_y[kept], weight[kept]
        sizes = [len(lv) for lv in data.levels]
        stats = count(data.codes, codes_y.astype(np.int64), len(classes), sizes, weight)
        return self._install(stats, classes, data.columns, data.named, data.levels)

    def _install(self, stats: Statistics, classes, columns, named, levels) -> TreeAugmentedNB:
        """Compute the posterior of ``stats`` under the current settings, then assign every
        fitted attribute at once (an error leaves the estimator as it was)."""
        alpha = self.alpha_ess  # a number: float("1") or float(True) would hide a mistake
        real = isinstance(alpha, numbers.Real) and not isinstance(alpha, bool | np.bool_)
        if not real or not np.isfinite(float(alpha)) or alpha <= 0:
            raise ValueError(f"alpha_ess must be a positive number, got {self.alpha_ess!r}.")
        alpha = float(alpha)
        largest = sorted((len(lv) for lv in levels), reverse=True)[:2]
        share = alpha / float(np.prod(largest))  # the smallest cell's Dirichlet parameter
        if share < np.finfo(np.float64).tiny:
            raise ValueError(f"alpha_ess={alpha!r} is too small: its share of a cell of the "
                             f"largest pair table, alpha_ess / {int(np.prod(largest))} = "
                             f"{share:g}, is below float64's smallest normal number.")
        class_log_prior(stats.class_count, self.class_alpha, None, "bayes")  # checks it
        log_prior = _log_edge_prior(self.edge_prior, columns)
        tree = _tree(self.tree, columns)
        # checked before the posterior, whose maximum spanning tree needs an allowed tree
        if not np.isfinite(log_tree_sum(log_prior)):
            raise ValueError("edge_prior forbids every spanning tree: its allowed edges must "
                             "connect all the columns.")
        post = posterior(stats, alpha, log_prior)
        if tree is not None and not np.all(np.isfinite([log_prior[e] for e in tree])):
            raise ValueError("tree uses an edge that edge_prior forbids (weight 0).")
        if isinstance(self.tree, str) and self.tree == "map":
            tree = list(post.map_tree)
        # the settings the posterior was computed under, which a saved file states (a later
        # set_params changes them only at the next fit)
        fitted = {"alpha_ess": alpha, "tree": self.tree, "edge_prior": None if self.edge_prior
                  is None else np.array(self.edge_prior, dtype=np.float64)}
        self.__dict__.update(statistics_=stats, posterior_=post, classes_=classes,
                             columns_=columns, named_=named, levels_=levels, tree_edges_=tree,
                             _fit_settings=fitted)
        return self

    # ------------------------------------------------------------------ reports
    @property
    def class_count_(self) -> np.ndarray:
        check_is_fitted(self)
        return self.statistics_.class_count

    @property
    def n_features_in_(self) -> int:
        check_is_fitted(self)
        return len(self.columns_)

    @property
    def feature_names_in_(self) -> np.ndarray:
        """The column names of a DataFrame ``X`` at fit, when all are strings (as in
        scikit-learn); an array, or a DataFrame with other names, has none (AttributeError).

        Examples
        --------
        >>> import bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> bnb.TreeAugmentedNB().fit(days, play).feature_names_in_
        array(['Outlook', 'Temperature', 'Humidity', 'Wind'], dtype=object)"""
        check_is_fitted(self)
        if not has_feature_names(self.columns_, self.named_):
            raise AttributeError("feature_names_in_: X had no string column names at fit.")
        return np.asarray(self.columns_, dtype=object)

    @property
    def tree_(self) -> list | None:
        check_is_fitted(self)
        edges = self.tree_edges_
        return None if edges is None else [(self.columns_[i], self.columns_[j])
                                           for i, j in edges]

    def _square(self, values) -> pd.DataFrame:
        return pd.DataFrame(values, index=list(self.columns_), columns=list(self.columns_))

    @property
    def edge_probability_(self) -> pd.DataFrame:
        check_is_fitted(self)
        post = self.posterior_
        cached = self.__dict__.get("_edge_cache")
        if cached is None or cached[0] is not post:  # O(F^4): computed when first asked
            cached = (post, np.exp(log_edge_marginals(post.log_weights)))
            self._edge_cache = cached
        return self._square(cached[1])

    @property
    def edge_log_bayes_factor_(self) -> pd.DataFrame:
        check_is_fitted(self)
        return self._square(self.posterior_.log_bf)

    def log_evidence(self) -> float:
        """``log p(X, y)`` of the training data: the labels under the class prior plus the
        columns given the labels, averaged over the trees' prior under ``"average"``, or
        under the tree used (``"map"``, a given tree), that is ``log p(X, y | T)``.

        Returns
        -------
        float

        Examples
        --------
        One column: no edges, the naive Bayes evidence (Dirichlet-multinomial per class):

        >>> import numpy as np, bayesnb as bnb
        >>> from scipy.special import betaln
        >>> clf = bnb.TreeAugmentedNB(alpha_ess=2.0).fit([[0], [1], [1], [1]], [0, 0, 1, 1])
        >>> labels = betaln(1 + 2, 1 + 2) - betaln(1, 1)
        >>> columns = betaln(1 + 1, 1 + 1) + betaln(1, 1 + 2)  # class 0: one of each; 1: two 1s
        >>> bool(np.isclose(clf.log_evidence(), labels + columns))
        True"""
        check_is_fitted(self)
        post = self.posterior_
        edges = self.tree_edges_
        trees = (post.log_z - post.log_z_prior if edges is None
                 else sum(post.log_bf[e] for e in edges))
        return (class_log_evidence(self.statistics_.class_count, self.class_alpha, None)
                + post.log_single + float(trees))

    # ------------------------------------------------------------------ prediction
    def predict_joint_log_proba(self, X: Data) -> np.ndarray:
        """``log p(x, c = k | data)`` for every row and class (n_samples, n_classes).

        Examples
        --------
        >>> import numpy as np, bayesnb as bnb
        >>> X, y = [[0, 0], [1, 1], [1, 1], [0, 1]], [0, 0, 1, 1]
        >>> joint = bnb.TreeAugmentedNB().fit(X, y).predict_joint_log_proba([[1, 1]])
        >>> bool(np.exp(joint).sum() < 1)  # p(x) over the classes: one of four cells
        True"""
        check_is_fitted(self)
        codes = encode_rows(X, self.columns_, self.named_, self.levels_)
        log_prior = class_log_prior(self.statistics_.class_count, self.class_alpha, None,
                                    "bayes")
        return log_prior + log_likelihood(self.posterior_, codes, self.tree_edges_)

    def predict_log_proba(self, X: Data) -> np.ndarray:
        """``log p(c = k | x, data)``, normalised in log space.

        Examples
        --------
        >>> import numpy as np, bayesnb as bnb
        >>> clf = bnb.TreeAugmentedNB().fit([[0, 0], [1, 1], [1, 1], [0, 1]], [0, 0, 1, 1])
        >>> bool(np.isclose(np.exp(clf.predict_log_proba([[1, 1]])).sum(), 1.0))
        True"""
        joint = self.predict_joint_log_proba(X)
        return joint - logsumexp(joint, axis=1, keepdims=True)

    def predict_proba(self, X: Data) -> np.ndarray:
        """``p(c = k | x, data)``; rows sum to 1.

        Examples
        --------
        >>> import bayesnb as bnb
        >>> clf = bnb.TreeAugmentedNB().fit([[0, 0], [1, 1], [1, 1], [0, 1]], ["a", "a", "b", "b"])
        >>> clf.predict_proba([[0, 1]]).round(3)
        array([[0.167, 0.833]])"""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: Data) -> np.ndarray:
        """The most probable class of each row (ties: the first in ``classes_``).

        Examples
        --------
        >>> import bayesnb as bnb
        >>> clf = bnb.TreeAugmentedNB().fit([[0, 0], [1, 1], [1, 1], [0, 1]], ["a", "a", "b", "b"])
        >>> clf.predict([[0, 1]])  # a list of strings: NumPy's text labels, as scikit-learn's
        array(['b'], dtype='<U1')"""
        best = np.argmax(self.predict_joint_log_proba(X), axis=1)
        return self.classes_[best]

    # ------------------------------------------------------------------ files
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the fitted model to ``path``: a zip of a JSON manifest and ``.npy`` count
        tables, data and never code (:mod:`bayesnb._tan_files`).

        Examples
        --------
        >>> import os, tempfile, bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.TreeAugmentedNB().fit(days, play)
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     loaded = bnb.TreeAugmentedNB.load(clf.save(os.path.join(folder, "tan.bnb")))
        >>> bool((loaded.predict_proba(days) == clf.predict_proba(days)).all())
        True"""
        from ._tan_files import save

        return save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> TreeAugmentedNB:
        """Read a model written by :meth:`save` (see its example).

        Examples
        --------
        >>> import bayesnb as bnb
        >>> bnb.TreeAugmentedNB.load("no/such/file.bnb")
        Traceback (most recent call last):
        ...
        FileNotFoundError: ..."""
        from ._tan_files import load

        return load(path, cls._from_parts)

    @classmethod
    def _from_parts(cls, parts: dict) -> TreeAugmentedNB:
        """The estimator a model file describes (``_tan_files.load``'s checked parts)."""
        model = cls(alpha_ess=parts["alpha_ess"], tree=parts["tree"],
                    class_alpha=parts["class_alpha"], edge_prior=parts["edge_prior"])
        stats = Statistics(parts["class_count"], parts["single"], parts["pair"])
        return model._install(stats, parts["classes"], parts["columns"], parts["named"],
                              parts["levels"])

    def __sklearn_is_fitted__(self) -> bool:
        return "posterior_" in self.__dict__

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags


def _column_index(value, columns: tuple) -> int:
    if value in columns:
        return columns.index(value)
    if isinstance(value, int | np.integer) and not isinstance(value, bool) and (
            0 <= value < len(columns)):
        return int(value)
    raise ValueError(f"tree names {value!r}, which is not a column of X.")


def _tree(tree: Any, columns: tuple) -> list[tuple[int, int]] | None:
    """The tree's edges as sorted position pairs, checked to span the columns; None for the
    modes."""
    if isinstance(tree, str):
        if tree not in TREE_MODES:
            raise ValueError(f"tree must be one of {TREE_MODES} or a list of column pairs, "
                             f"got {tree!r}.")
        return None
    f = len(columns)
    try:
        edges = [tuple(sorted(_column_index(c, columns) for c in pair)) for pair in tree]
    except TypeError:
        raise ValueError(f"tree must be a list of (column, column) pairs, got {tree!r}.") from None
    if len(edges) != f - 1 or any(len(e) != 2 or e[0] == e[1] for e in edges):
        raise ValueError(f"a spanning tree of {f} columns has {f - 1} edges between distinct "
                         f"columns; got {tree!r}.")
    root = list(range(f))  # union-find: a cycle means a column is left unconnected

    def find(v):
        while root[v] != v:
            v = root[v]
        return v

    for i, j in edges:
        a, b = find(i), find(j)
        if a == b:
            raise ValueError(f"tree {tree!r} has a cycle through column {columns[i]!r}: it "
                             "does not connect every column.")
        root[a] = b
    return sorted(edges)


def _log_edge_prior(edge_prior, columns: tuple) -> np.ndarray:
    f = len(columns)
    if edge_prior is None:
        return np.where(np.eye(f, dtype=bool), -np.inf, 0.0)
    beta = np.asarray(edge_prior, dtype=np.float64)
    # exactly symmetric: parts of the code read either half (allclose let 1e-9 against 0 by)
    if beta.shape != (f, f) or not np.all(np.isfinite(beta)) or np.any(beta < 0) or not (
            np.array_equal(beta, beta.T)):
        raise ValueError(f"edge_prior must be a symmetric ({f}, {f}) array of finite "
                         "non-negative weights.")
    with np.errstate(divide="ignore"):
        return np.where(np.eye(f, dtype=bool), -np.inf, np.log(beta))
