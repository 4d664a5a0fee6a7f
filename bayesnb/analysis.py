"""Analyses of a fitted model: the linear view and empirical-Bayes smoothing.

Linear view (Barber, seed 000, section 5.1; the Cornell notes, seed 001): for Bernoulli,
Multinomial, Categorical (one-hot) and pooled-variance Gaussian columns, the plug-in log joint
log p(x, c = k) is linear in the (encoded) features up to a class-free term, so Naive Bayes is a
linear classifier with weights ``W`` and bias ``b``: ``argmax_k (x @ W[k] + b[k])`` is its
prediction. Per-class Gaussian variances and Poisson rates are linear too (in x and x^2, or in
x), but a per-class Gaussian needs x^2 terms, so it is not offered.

A missing value leaves its column's factor out of the model's score. A Bernoulli or pooled
Gaussian column's factor has a part that does not depend on x (log(1 - p), -lambda mu^2 / 2),
so each such column has a second weight, on its indicator ``"{column}:observed"`` (1 where the
value is observed, 0 where it is missing): then the scores of rows with missing values are the
model's too.

Empirical Bayes: the concentration of a family's symmetric prior that maximises the log
evidence log p(y, X | alpha), found by a bounded 1-D search on log alpha (the evidence of a
Dirichlet/Beta model is a smooth function of alpha; scipy's bounded Brent method). A Beta
prior's strength is Beta(alpha, alpha): Bernoulli's ``alpha`` and ``beta`` are tuned together
(tuning ``alpha`` alone would move the prior's mean, not its strength).
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar
from sklearn.base import clone

if TYPE_CHECKING:
    from ._typing import ArrayLike, Data
    from .estimator import NaiveBayes

#: the bounded search's tolerance on log(value)
_LOG_TOLERANCE = 1e-6


class EvidenceBoundWarning(UserWarning):
    """:func:`empirical_bayes` stopped at a bound of its search: the log evidence is still
    rising there, so the data favour a value beyond the bound.

    Examples
    --------
    >>> import bayesnb as bnb
    >>> issubclass(bnb.EvidenceBoundWarning, UserWarning)
    True
    """


def linear_weights(clf: NaiveBayes) -> tuple[pd.DataFrame, pd.Series]:
    """``(W, b)`` with ``X_enc @ W.T + b`` equal to the plug-in log joint up to a per-row
    constant, so its argmax is ``clf.predict`` (rows with missing values included, but for a
    Multinomial block's missing count, which ``encode_linear`` refuses: its renormalisation is
    not linear), where ``X_enc = encode_linear(clf, X)``.

    Columns of ``W`` are the input columns; a Categorical column becomes one column per level
    (``"col=level"``, apply it to one-hot codes; ``"col=<unseen>"`` for a value unseen in
    training, where the method gives one a probability), a Bernoulli or pooled Gaussian column
    ``col`` is followed by ``"col:observed"`` (the weight of its observed-value indicator: the
    part of its factor that a missing value leaves out; see :func:`encode_linear`). Plug-in
    methods only
    (ml, map, mean; Bernoulli and Categorical columns also under bayes, where the predictive is
    the posterior mean).

    Examples
    --------
    Two Bernoulli columns: column ``j`` weighs log(theta / (1 - theta)) and its ``:observed``
    indicator log(1 - theta); with P(x_0 = 1 | ham) = 1/4, log(1/3) and log(3/4):

    >>> from bayesnb.analysis import linear_weights
    >>> import numpy as np, bayesnb as bnb
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    >>> clf = bnb.NaiveBayes(bnb.Bernoulli(), method="mean").fit(X, ["spam", "spam", "ham", "ham"])
    >>> W, b = linear_weights(clf)
    >>> W.round(4)
                0  0:observed    1  1:observed
    class
    ham   -1.0986     -0.2877  0.0     -0.6931
    spam   1.0986     -1.3863  0.0     -0.6931
    >>> b.round(4)  # log p(c) = log(1/2)
    class
    ham    -0.6931
    spam   -0.6931
    Name: bias, dtype: float64
    """
    log_prior, tables = _linear_tables(clf)
    weights, bias = [], log_prior
    for block, table in zip(clf.blocks_, tables, strict=True):
        w, labels, b = _linear_terms(block, table)
        weights.append(pd.DataFrame(w, columns=labels))
        bias += b
    W = pd.concat(weights, axis=1)
    W.index = pd.Index(clf.classes_, name="class")
    if np.isinf(W.to_numpy()).any():
        raise ValueError("some weights are infinite (ML zero probabilities); the linear view "
                         "needs smoothed estimates (method='mean' or 'map' with alpha > 1).")
    return W, pd.Series(bias, index=W.index, name="bias")


def _linear_terms(block, table) -> tuple:
    """The block's ``(weights, labels, bias)``; refuses a block that is not linear in x."""
    terms = block.family.linear_terms(table, block.schema)
    if terms is None:
        cols = [str(c) for c in block.schema.columns]
        raise ValueError(f"columns {cols[:5]}: a {block.family!r} block declares no linear "
                         "terms (its family's linear_terms gives None: not linear in x, as "
                         "per-class Gaussian variances need x^2 terms, which "
                         "Gaussian(pooled=True) shares).")
    return terms


def _linear_tables(clf) -> tuple[np.ndarray, list]:
    """The class log prior and, per block, the plug-in table the linear view reads; refuses
    what has no linear view."""
    from .averaging import check_one_model
    from .scoring import TableScorer

    scorer = clf._scorer()
    check_one_model(clf.feature_prior, "the linear view")
    if not isinstance(scorer, TableScorer) or (scorer.exact and not all(
            b.family.predictive_is_plug_in for b in clf.blocks_)):
        raise ValueError("the linear view needs a plug-in method (ml, map, mean).")
    tables = []
    for block, table in zip(clf.blocks_, scorer.tables, strict=True):
        if scorer.exact:  # the predictive is the posterior-mean plug-in (predictive_is_plug_in)
            table = type(block.family).estimate(block.prior, block.stats, "mean")
        tables.append(table)
    return np.asarray(scorer.log_prior, dtype=np.float64).copy(), tables


def encode_linear(clf: NaiveBayes, X: Data) -> pd.DataFrame:
    """The design matrix the linear weights apply to: Multinomial columns as they are,
    Categorical columns one-hot over their fitted levels (all 0 where missing) and, where the
    method gives an unseen value a probability, an indicator of a value unseen in training
    (``"col=<unseen>"``), and Bernoulli and pooled Gaussian columns as their value (0 where
    missing) beside its ``"{column}:observed"`` indicator (0 where missing), so a missing or
    unseen value is scored as the model scores it.

    Its columns are labelled as the columns of ``W`` (:func:`linear_weights`), its rows by the
    index of ``X`` (0..n-1 for an array).

    Examples
    --------
    A missing value is 0 in both its column and its ``:observed`` indicator:

    >>> from bayesnb.analysis import encode_linear
    >>> import numpy as np, bayesnb as bnb
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    >>> clf = bnb.NaiveBayes(bnb.Bernoulli(), method="mean").fit(X, ["spam", "spam", "ham", "ham"])
    >>> encode_linear(clf, [[1, 0], [0, np.nan]])
         0  0:observed    1  1:observed
    0  1.0         1.0  0.0         1.0
    1  0.0         1.0  0.0         0.0"""
    from ._blocks import dense_block, encode_blocks
    from ._labels import row_index

    _, tables = _linear_tables(clf)
    xs, n = encode_blocks(clf.fitted_, X, clf._unseen_rule())
    parts, labels = [], []
    for block, x, table in zip(clf.blocks_, xs, tables, strict=True):
        labels.extend(_linear_terms(block, table)[1])
        parts.append(block.family.linear_features(dense_block(x), block.schema, table))
    return pd.DataFrame(np.concatenate(parts, axis=1), index=row_index(X, n), columns=labels)


def decision_function(clf: NaiveBayes, X: Data) -> np.ndarray:
    """``encode_linear(X) @ W.T + b``: the linear scores whose argmax is the prediction, an
    (n, K) NumPy array whatever ``X`` is (as scikit-learn's ``decision_function``); label it
    with ``pd.DataFrame(scores, index=X.index, columns=clf.classes_)``.

    Examples
    --------
    Here the scores are the joint log probabilities themselves:

    >>> from bayesnb.analysis import decision_function
    >>> import numpy as np, bayesnb as bnb
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    >>> clf = bnb.NaiveBayes(bnb.Bernoulli(), method="mean").fit(X, ["spam", "spam", "ham", "ham"])
    >>> decision_function(clf, [[1, 0], [0, 1]]).round(4)
    array([[-2.7726, -1.674 ],
           [-1.674 , -2.7726]])
    >>> clf.predict_joint_log_proba([[1, 0], [0, 1]]).round(4)  # log(1/2 * 1/4 * 1/2), ...
    array([[-2.7726, -1.674 ],
           [-1.674 , -2.7726]])"""
    W, b = linear_weights(clf)
    return encode_linear(clf, X).to_numpy() @ W.to_numpy().T + b.to_numpy()


def log_bayes_factor(model_a: NaiveBayes, model_b: NaiveBayes) -> float:
    """log p(data | A) - log p(data | B) for two specifications fitted on the same data (> 0
    favours A; by Jeffreys' scale, > 2.3 is strong and > 4.6 decisive evidence).

    Both models must have seen the same rows and classes. What can be checked is: the same
    classes and class counts, the same columns, and, for a block of columns that both models
    give the same family (and levels), the same per-class statistics; a ``ValueError`` names
    the difference. Where the two models use different families for a column (Poisson and
    Gaussian, say), their statistics are not comparable, so rows permuted within those columns
    (same columns, same class counts) cannot be detected: the caller must make sure both
    models were fitted on the same ``X`` and ``y``. Comparing a density (Gaussian) with a
    mass function (Poisson) on integer data compares a density with a probability; the number
    is then only meaningful relative to the data's unit of measurement.

    Examples
    --------
    On PlayTennis the evidence favours a strong symmetric prior (alpha = 10, which pulls every
    table towards even levels) over the uniform one (alpha = 1); the factor is the difference
    of the two log evidences:

    >>> import bayesnb as bnb
    >>> from bayesnb.analysis import log_bayes_factor
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> uniform = bnb.NaiveBayes(bnb.Categorical(alpha=1.0)).fit(days, play)
    >>> strong = bnb.NaiveBayes(bnb.Categorical(alpha=10.0)).fit(days, play)
    >>> round(log_bayes_factor(uniform, strong), 4)
    -4.3545
    >>> round(uniform.log_evidence() - strong.log_evidence(), 4)
    -4.3545
    """
    for m in (model_a, model_b):
        if "fitted_" not in m.__dict__:
            raise ValueError("both models must be fitted.")
    _check_same_data(model_a.fitted_, model_b.fitted_)
    return model_a.log_evidence() - model_b.log_evidence()


def _check_same_data(a, b) -> None:
    """Refuse two fitted values (:class:`bayesnb.fitted.FittedModel`) that visibly saw other
    data: other classes or class counts (other labels or rows), other columns, or other
    statistics for a block that both model with the same family on the same columns and
    levels. Blocks modelled by different families keep different statistics, which cannot be
    compared, so rows permuted within such columns go unnoticed (see ``log_bayes_factor``)."""
    if not np.array_equal(a.classes, b.classes):
        raise ValueError(f"the two models were not fitted on the same labels: classes "
                         f"{list(a.classes)[:10]} and {list(b.classes)[:10]}.")
    if not np.allclose(a.class_count, b.class_count):
        raise ValueError(f"the two models were not fitted on the same labels: class counts "
                         f"{np.asarray(a.class_count).tolist()[:10]} and "
                         f"{np.asarray(b.class_count).tolist()[:10]}.")
    if tuple(a.columns) != tuple(b.columns):
        only_a = [c for c in a.columns if c not in set(b.columns)]
        only_b = [c for c in b.columns if c not in set(a.columns)]
        if not (only_a or only_b):  # the statistics are kept in column order: not checkable
            raise ValueError("the two models were fitted on the same columns in another "
                             "order, so whether they saw the same data cannot be checked: fit "
                             "both with one column order, e.g. model_b on "
                             "X[model_a.feature_names_in_].")
        raise ValueError(f"the two models were not fitted on the same columns (columns only "
                         f"in model_a: {only_a[:10]}, only in model_b: {only_b[:10]}); the "
                         f"evidence of one is not comparable with the other's.")
    # statistics depend on the data, not on a family's hyperparameters: where both models
    # hold the same kind of statistics of the same columns, they must agree
    for block_a in a.blocks:
        for block_b in b.blocks:
            if (type(block_a.family) is not type(block_b.family)
                    or block_a.schema != block_b.schema
                    or block_a.stats is None or block_b.stats is None):
                continue
            if not _same_stats(block_a.stats, block_b.stats):
                raise ValueError(
                    f"the two models were not fitted on the same data: columns "
                    f"{list(block_a.schema.columns)[:10]}, modelled by "
                    f"{type(block_a.family).__name__} in both, have other per-class "
                    f"statistics (other rows, or the labels in another order).")


def _same_stats(sa, sb) -> bool:
    """Whether two statistics of one family agree, up to float32 rounding (the kernels sum in
    float32 unless x64 or weights need float64); statistics of other shapes are not compared."""
    leaves_a = [np.asarray(x, dtype=np.float64) for x in sa]
    leaves_b = [np.asarray(x, dtype=np.float64) for x in sb]
    if len(leaves_a) != len(leaves_b) or any(
            x.shape != y.shape for x, y in zip(leaves_a, leaves_b, strict=True)):
        return True
    for x, y in zip(leaves_a, leaves_b, strict=True):
        scale = max(1.0, float(np.nanmax(np.abs(x), initial=0.0)))
        if not np.allclose(x, y, rtol=1e-4, atol=1e-5 * scale, equal_nan=True):
            return False
    return True


def empirical_bayes(clf: NaiveBayes, X: Data, y: ArrayLike, *, hyperparameter: str = "alpha",
                    bounds: tuple[float, float] = (1e-3, 1e3)) -> tuple[float, NaiveBayes]:
    """The value of ``hyperparameter`` (shared by every family that has it) that maximises the
    log evidence of ``clf``'s specification on (X, y); returns ``(value, fitted model)``.

    The search is over log(value) within ``bounds`` (bounded Brent); the returned model is
    fitted with that value. The families searched are the declared ones that have
    ``hyperparameter``; when there are none (``features=None``: families inferred from the
    dtypes), the inferred families are resolved by one fit and searched, and the returned
    model's ``features`` maps each block's columns to its family.

    A hyperparameter that is one half of a symmetric prior's strength is set with its
    partner: for a Bernoulli family, ``alpha`` (or ``beta``) sets ``alpha = beta = value``,
    a Beta(value, value) prior, so the value is a smoothing strength (scikit-learn's
    ``BernoulliNB(alpha=value)`` under ``method="mean"``) whatever the declared Beta was.

    When the search ends at a bound (within its tolerance), or below the evidence at the
    nearer bound (where the evidence is nearly flat, rounding can stop it short), the evidence
    is still rising there: no maximum lies inside ``bounds``. The bound is then returned,
    fitted, with an :class:`EvidenceBoundWarning` naming it: a warning, not an error, since the
    bound is the best value the search allows and the evidence may have no maximum at all (it
    can rise towards a limit). At the upper bound the data favour a stronger prior, which pulls
    every class's tables towards the prior's mean (even levels, alike in every class: columns
    that barely tell the classes apart); at the lower bound, less smoothing (tables nearer the
    counts). Widen ``bounds`` to search further.

    Warns
    -----
    EvidenceBoundWarning
        The maximiser is at a bound of ``bounds``.

    Examples
    --------
    The Titanic data ask for a little more smoothing than Laplace's alpha = 1; the evidence is
    lower on either side of the value found:

    >>> import bayesnb as bnb
    >>> from bayesnb.analysis import empirical_bayes
    >>> from bayesnb.datasets import load_titanic
    >>> X, y = load_titanic()
    >>> alpha, clf = empirical_bayes(bnb.NaiveBayes(bnb.Categorical()), X, y)
    >>> round(alpha, 3), round(clf.log_evidence(), 4)
    (1.09, -5492.5239)
    >>> [round(bnb.NaiveBayes(bnb.Categorical(alpha=a)).fit(X, y).log_evidence(), 4)
    ...  for a in (0.9 * alpha, 1.1 * alpha)]
    [-5492.5603, -5492.5553]

    On PlayTennis the evidence rises as alpha grows, to the end of the search:

    >>> import warnings
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     alpha, clf = empirical_bayes(bnb.NaiveBayes(bnb.Categorical()), days, play)
    >>> alpha, [w.category.__name__ for w in caught]
    (1000.0, ['EvidenceBoundWarning'])
    """
    spec = _declared(clf, X, y, hyperparameter)

    def with_value(value):
        model = clone(spec)
        features = model.features
        families = ([features] if not isinstance(features, dict) else
                    list({id(f): f for f in features.values()}.values()))
        owners = [f for f in families if f is not None and hyperparameter in f._hyper]
        if not owners:
            raise ValueError(f"no family of this model has a hyperparameter {hyperparameter!r} "
                             f"(its families: {', '.join(sorted({repr(f) for f in families}))}).")
        mapping = {}
        for f in owners:
            names = f.one_strength
            names = names if hyperparameter in names else (hyperparameter,)
            mapping[id(f)] = type(f)(**{**f.get_params(), **dict.fromkeys(names, value)})
        if isinstance(features, dict):
            model.set_params(features={c: mapping.get(id(f), f) for c, f in features.items()})
        else:
            model.set_params(features=mapping[id(features)])
        return model.fit(X, y)

    def objective(log_value):
        return -with_value(float(np.exp(log_value))).log_evidence()

    log_bounds = np.log(bounds)
    result = minimize_scalar(objective, bounds=log_bounds, method="bounded",
                             options={"xatol": _LOG_TOLERANCE})
    best = float(np.exp(result.x))
    # bounded Brent never evaluates a bound itself: ending within its tolerance of one, or
    # below the evidence there (where the evidence is flat to rounding), it was still rising
    end = int(np.argmin(np.abs(result.x - log_bounds)))  # the nearer bound
    edge = with_value(float(bounds[end]))
    if (abs(result.x - log_bounds[end]) > 10 * _LOG_TOLERANCE
            and -edge.log_evidence() > result.fun):
        return best, with_value(best)
    why = ("a larger", "upper", "tables pulled towards the prior's mean, alike in every "
           "class") if end else ("a smaller", "lower", "less smoothing, tables nearer the "
                                 "counts")
    warnings.warn(f"empirical_bayes: the log evidence is still rising at the {why[1]} bound "
                  f"{hyperparameter} = {bounds[end]:g} of the search (bounds = "
                  f"({float(bounds[0]):g}, {float(bounds[1]):g})): the data favour {why[0]} "
                  f"{hyperparameter} (for a prior's concentration: {why[2]}); "
                  f"{bounds[end]:g} is returned. Widen bounds to search further.",
                  EvidenceBoundWarning, stacklevel=2)
    return float(bounds[end]), edge


def _declared(clf, X, y, hyperparameter: str):
    """``clf`` with the families to search declared. When no declared family has
    ``hyperparameter`` (``features=None``, or a mapping of families without it), the model is
    fitted once and its blocks become the mapping ``{columns: family}`` (one block, one family
    instance, as the fit inferred them); otherwise only the declared families are searched."""
    from .families import Family

    features = clf.features
    if isinstance(features, Family):
        return clf
    declared = features.values() if isinstance(features, dict) else ()
    if any(hyperparameter in f._hyper for f in declared if isinstance(f, Family)):
        return clf
    probe = clone(clf).set_params(method="mean").fit(X, y)  # the method does not change them
    return clone(clf).set_params(features={tuple(block.schema.columns): block.family
                                           for block in probe.blocks_})


def dependence(clf: NaiveBayes, X: Data, y: ArrayLike, *,
               columns: Sequence[Hashable] | None = None) -> pd.DataFrame:
    """Is the naive assumption safe? One row per pair of columns with the log Bayes factor for
    "dependent given the class" against "independent given the class" (> 0 favours dependence;
    by Jeffreys' scale > 2.3 strong, > 4.6 decisive), strongest evidence first.

    Both hypotheses use ``clf``'s fitted priors (an unfitted ``clf`` is fitted on ``(X, y)``
    first); the closed forms, and how each pair of families is handled, are in
    :mod:`bayesnb.dependence`. Rows where either column of a pair is missing are left out of that
    pair, under both hypotheses. Act on a dependent pair of discrete columns with
    :func:`bayesnb.join_columns` (one Categorical over their combined levels).

    Parameters
    ----------
    clf : NaiveBayes
    X, y : the data to weigh (usually the training data)
    columns : sequence, optional
        Only pairs among these columns (a Multinomial block is named by the tuple of its
        columns). The number of pairs grows as the square of the number of columns.

    Returns
    -------
    DataFrame with columns ``column_a``, ``column_b``, ``log_bayes_factor``, ``method`` (which
    closed form), ``rows`` (complete rows used), ``skipped`` (why a pair has no factor: NaN
    factor, listed last) and one ``class=<label>`` column per class (its share of the sum; NaN
    for pooled Gaussian pairs, whose evidence does not split by class).

    Examples
    --------
    PlayTennis with a copy of ``Wind``: the pair stands out. By hand, per class, the joint
    Dirichlet(1/2, 1/2, 1/2, 1/2) over the four (Wind, Windy) cells against two Dirichlet(1, 1):

    >>> import numpy as np, bayesnb as bnb
    >>> from scipy.special import gammaln
    >>> from bayesnb.analysis import dependence
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> doubled = days.assign(Windy=days["Wind"])
    >>> report = dependence(bnb.NaiveBayes(), doubled, play)
    >>> report[["column_a", "column_b", "log_bayes_factor"]].head(3).round(2)
          column_a  column_b  log_bayes_factor
    0         Wind     Windy              6.03
    1  Temperature  Humidity              0.04
    2      Outlook      Wind             -0.36
    >>> def evidence(counts, alpha):  # log p(counts) under Dirichlet(alpha)
    ...     counts, alpha = np.asarray(counts, float), np.asarray(alpha, float)
    ...     return (gammaln(alpha.sum()) - gammaln(alpha.sum() + counts.sum())
    ...             + np.sum(gammaln(alpha + counts) - gammaln(alpha)))
    >>> wind = {"No": (3, 2), "Yes": (3, 6)}  # (Strong, Weak) days per class
    >>> round(float(sum(evidence([s, w, 0, 0], [0.5] * 4) - 2 * evidence([s, w], [1, 1])
    ...                 for s, w in wind.values())), 2)
    6.03
    """
    from .dependence import dependence_report

    if "fitted_" not in clf.__dict__:
        clf = clone(clf).fit(X, y)
    return dependence_report(clf.fitted_, X, y, columns=columns)
