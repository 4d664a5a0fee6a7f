r"""Credal classification: the naive credal classifier under the imprecise Dirichlet model.

Zaffalon's naive credal classifier (NCC, 2002) replaces the one prior of a Bayesian naive
Bayes by a *set* of priors, the imprecise Dirichlet model (IDM, Walley 1996) of strength
:math:`s`: every Dirichlet (or Beta) prior of total concentration :math:`s`,
:math:`\mathrm{Dirichlet}(s\,\mathbf t)` with :math:`\mathbf t` anywhere in the open simplex.
Here the class prior and every Dirichlet/Beta prior of a discrete family (Bernoulli,
Categorical, Multinomial: the families that declare ``imprecise``) range over that set,
each class's and each column's independently, as they are independent priors in this
library's model. A class :math:`a` *dominates* :math:`b` for a row :math:`x` when
:math:`p(a, x) > p(b, x)` under every prior of the set, i.e. when

.. math::

    \inf_{\text{priors}} \frac{p(a, x \mid \text{data})}{p(b, x \mid \text{data})} > 1,

and the credal set of the row is the set of classes no other class dominates: one class when
the data settle the question whatever the prior, several when they do not (the row is
*indeterminate*). As :math:`s \to 0` it shrinks to the maximum-likelihood class.

**How the infimum is computed.** With :math:`n_c` the class counts, :math:`N` their sum,
:math:`n_{cj}` class :math:`c`'s observed count in column :math:`j` and :math:`n_{cj}(x_j)`
its count of the row's value, the exact posterior predictive is

.. math::

    p(c, x) = \frac{n_c + s\,t_c}{N + s} \prod_j \frac{n_{cj}(x_j) + s\,t_{cj}(x_j)}
    {n_{cj} + s},

each factor linear in one prior's mass on one value. The ratio :math:`p(a, x)/p(b, x)`
involves the class prior and the column priors of :math:`a` and of :math:`b`, which are
distinct, so its infimum is the product of each factor's extreme: the class prior's mass
:math:`t_b = 1`, every column prior of :math:`b` with its mass on the row's value
(:math:`t_{bj}(x_j) = 1`), every one of :math:`a` with none there (:math:`t_{aj}(x_j) = 0`):

.. math::

    \frac{n_a}{n_b + s} \prod_j \frac{n_{aj}(x_j)}{n_{aj} + s}
    \Big/ \frac{n_{bj}(x_j) + s}{n_{bj} + s}.

So :math:`a` dominates :math:`b` exactly when ``lower[a] > upper[b]``, with ``lower``/``upper``
each class's least/greatest log p(c, x) over its own priors: the infimum is attained at
extreme points of the priors, in closed form. An exact tie (an infimum of 1) is no dominance,
however the logs round it. This differs from Zaffalon's original NCC,
whose joint Dirichlet ties each column's prior mass in class :math:`c` to the class prior's
(:math:`\sum_v t(v, c) = t(c)`), which makes the infimum a one-dimensional minimisation over
:math:`t(b)` (Zaffalon 2002, Sect. 4); with the independent priors of this library's model
the coupling is absent and the extremes separate.

A Multinomial block (a bag of words) is one Dirichlet-multinomial factor per class, concave
in its prior's masses: its least value is at an extreme point (all the mass on one column:
exact), its greatest inside the simplex, bounded from above through the Lagrangian dual with a
bisection on the multiplier (``families._base.rising_log_bounds``). That bound is never below
the true greatest value, so a dominance found holds (a set can only be too large by a near
tie at the bisections' tolerance, about 1e-10 in the log). A row with a missing count in a
Multinomial block is refused.

Other families (Gaussian, Poisson, Exponential, KernelDensity, ...) keep their stated prior:
their factor is their exact posterior predictive (``method="bayes"``), the same under every
prior of the set, so it shifts both bounds of a class alike.

References
----------
Zaffalon, M. (2002). The naive credal classifier. Journal of Statistical Planning and
Inference 105(1), 5-21.
Walley, P. (1996). Inferences from multinomial data: learning about a bag of marbles. Journal
of the Royal Statistical Society B 58(1), 3-57.
Corani, G. and Zaffalon, M. (2008). JNCC2: the Java implementation of naive credal
classifier 2. Journal of Machine Learning Research 9, 2695-2698.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from ._blocks import dense_block, encode_blocks
from ._labels import row_index
from .fitted import FittedModel, check_conjugate
from .scoring import table_scorer

#: rows x classes x columns of a block's counts held at once
_CHUNK_CELLS = 1 << 20


class CredalSets(np.ndarray):
    """The result of :meth:`bayesnb.NaiveBayes.credal_predict`: an ``(n, K)`` boolean NumPy
    array, ``[i, k]`` True when class ``classes[k]`` is in row ``i``'s credal set (no other
    class dominates it), plus two views.

    Attributes
    ----------
    classes : ndarray of shape (K,)
        The model's ``classes_``, the order of the columns.
    index : pandas.Index
        The rows' labels: the index of ``X`` when it was a DataFrame, else 0..n-1.
    """

    classes: np.ndarray
    index: pd.Index

    def __new__(cls, sets: np.ndarray, classes, index: pd.Index) -> CredalSets:
        out = np.asarray(sets, dtype=bool).view(cls)
        out.classes, out.index = np.asarray(classes), index
        return out

    def __array_finalize__(self, obj) -> None:
        self.classes = getattr(obj, "classes", None)
        self.index = getattr(obj, "index", None)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # what arithmetic and reductions give (sums, counts) is a plain array or scalar
        return array[()] if return_scalar else np.asarray(array)

    def to_sets(self) -> list[set]:
        """Per row the set of class labels in its credal set."""
        rows = np.asarray(self)
        return [set(self.classes[row].tolist()) for row in rows]

    def to_frame(self) -> pd.DataFrame:
        """The booleans as a DataFrame: rows by the index of ``X``, columns ``classes_``."""
        return pd.DataFrame(np.asarray(self), index=self.index, columns=list(self.classes))


class PriorSensitivity(dict):
    """The result of :meth:`bayesnb.NaiveBayes.prior_sensitivity`: a dict of NumPy arrays of
    shape (n,), ``predicted`` (the estimator's ``predict``), ``robust`` (whether that class is
    the most probable under every prior of the set), ``lower`` and ``upper`` (the range of its
    posterior probability over the set), plus :meth:`to_frame`."""

    def __init__(self, arrays: dict, index: pd.Index):
        super().__init__(arrays)
        self.index = index

    def to_frame(self) -> pd.DataFrame:
        """The four quantities as columns of a DataFrame indexed by the rows of ``X``."""
        return pd.DataFrame(dict(self), index=self.index)


def check_strength(s) -> float:
    """``s`` as a float: a finite number > 0 (the IDM's prior strength)."""
    real = isinstance(s, numbers.Real) and not isinstance(s, bool)
    if not real or not np.isfinite(s) or s <= 0:
        raise ValueError(f"s must be a finite number > 0 (the total concentration of the "
                         f"imprecise Dirichlet model; Walley suggests 1 or 2), got {s!r}.")
    return float(s)


def check_model(model: FittedModel, priors, feature_prior) -> None:
    """Refuse what the imprecise Dirichlet model does not apply to, saying why."""
    if model.stated is not None:
        raise ValueError("credal classification needs the training counts; this model was "
                         "built from stated tables, which have none.")
    if model.unlabeled is not None:
        raise ValueError("credal classification reads the labelled counts; this model also "
                         "holds unlabeled rows (semi-supervised MCMC), which they leave out.")
    check_conjugate(model, priors, "credal classification")
    if feature_prior is not None:
        raise ValueError("credal classification is not defined with feature_prior (model "
                         "averaging over feature subsets); fit without it.")
    if not any(b.family.imprecise for b in model.blocks):
        raise ValueError("credal classification needs at least one Bernoulli, Categorical or "
                         "Multinomial column (the families whose Beta/Dirichlet priors the "
                         "imprecise Dirichlet model replaces); every column here keeps its "
                         "stated prior.")


def feature_bounds(model: FittedModel, X, s: float) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` ``(n, K)``: each class's least and greatest log p(x | c, data) over
    the imprecise Dirichlet model of strength ``s`` (the class's own column priors), up to a
    class-free constant per row; the class prior's part is added by the callers."""
    imprecise = [i for i, b in enumerate(model.blocks) if b.family.imprecise]
    chosen = model.replace(blocks=tuple(model.blocks[i] for i in imprecise))
    xs, n = encode_blocks(chosen, X, "error")  # under the IDM the levels are fixed in advance
    k = len(model.classes)
    lower, upper = np.zeros((n, k)), np.zeros((n, k))
    for block, x in zip(chosen.blocks, xs, strict=True):
        family = type(block.family)
        step = max(1, _CHUNK_CELLS // max(1, k * x.shape[1]))  # bounds the (rows, K, F) counts
        for start in range(0, n, step):
            part = x[start:start + step]
            part = dense_block(part)
            low, high = family.imprecise_log_predictive(block.prior, block.stats, part, s)
            lower[start:start + step] += low
            upper[start:start + step] += high
    rest = [b for i, b in enumerate(model.blocks) if i not in imprecise]
    if rest and n:  # the other families keep their stated prior: their exact predictive
        scorer = table_scorer(model.replace(blocks=tuple(rest)), "bayes", 1.0, None)
        fixed = np.asarray(scorer.scores(X, "joint")[0], dtype=np.float64) - scorer.log_prior
        lower += fixed
        upper += fixed
    return lower, upper


def joint_bounds(counts: np.ndarray, s: float, lower: np.ndarray,
                 upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The feature bounds with the class prior's part, (n_c + s t_c) / (N + s) at t_c = 0 and
    t_c = 1 (the class-free N + s left out): bounds of log p(c, x | data)."""
    counts = np.asarray(counts, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return lower + np.log(counts), upper + np.log(counts + s)


def credal_sets(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``(n, K)`` booleans from the bounds of log p(c, x): class ``b`` is in the set unless some
    ``a`` has ``lower[a] > upper[b]`` (``a`` dominates ``b``; never ``a = b``, as lower <=
    upper)."""
    best = lower.max(axis=1, keepdims=True, initial=-np.inf)
    return ~_above(best, upper)


def _above(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a > b`` beyond the rounding of log-space sums: an exact tie (p(a, x) = p(b, x) at
    the extremes: no dominance) computed as a difference of 1e-16 either way is no
    dominance either."""
    with np.errstate(invalid="ignore"):
        scale = 1.0 + np.maximum(np.abs(a), np.abs(b))
        return a > b + 64 * np.finfo(np.float64).eps * np.where(np.isfinite(scale), scale, 0.0)


def sensitivity(lower: np.ndarray, upper: np.ndarray, counts: np.ndarray, s: float,
                chosen: np.ndarray) -> dict:
    """Per row, for the class at index ``chosen``: whether it dominates every other class, and
    the least and greatest p(c | x) over the set, from the feature bounds ``lower``/``upper``
    (exact for Bernoulli and Categorical columns; for a Multinomial block the greatest feature
    term is the dual bound, so the range can only be slightly too wide).

    p(c | x) = 1 / (1 + sum_b p(b, x) / p(c, x)) over the other classes b. The least puts every
    other class's column priors at their greatest and the chosen class's at their least; the
    class prior's mass, which enters linearly, then goes all to the other class with the
    greatest column term (n_c with t_c = 0 below). The greatest is the reverse, with all of the
    class prior's mass on the chosen class. The class prior's extremes are extreme points."""
    n, k = lower.shape
    rows = np.arange(n)
    counts = np.asarray(counts, dtype=np.float64)
    with np.errstate(divide="ignore"):
        log_n, log_s = np.log(counts), np.log(s)
    others = np.ones((n, k), dtype=bool)
    others[rows, chosen] = False
    joint_lo, joint_hi = joint_bounds(counts, s, lower, upper)
    robust = _above(joint_lo[rows, chosen], np.where(others, joint_hi, -np.inf).max(
        axis=1, initial=-np.inf))
    top = np.where(others, upper, -np.inf).max(axis=1, initial=-np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = np.column_stack([np.where(others, log_n + upper, -np.inf), log_s + top])
        log_most = logsumexp(spread, axis=1) - (log_n[chosen] + lower[rows, chosen])
        log_least = (logsumexp(np.where(others, log_n + lower, -np.inf), axis=1)
                     - (np.log(counts + s)[chosen] + upper[rows, chosen]))
    return {"robust": robust, "lower": np.exp(-np.logaddexp(0.0, log_most)),
            "upper": np.exp(-np.logaddexp(0.0, log_least))}


def credal_predict(clf, X, s: float) -> CredalSets:
    """The credal sets of the rows of ``X`` (see :meth:`bayesnb.NaiveBayes.credal_predict`)."""
    s, model = check_strength(s), clf._fitted()
    check_model(model, clf.priors, clf.feature_prior)
    lower, upper = joint_bounds(model.class_count, s, *feature_bounds(model, X, s))
    return CredalSets(credal_sets(lower, upper), model.classes, row_index(X, len(lower)))


def prior_sensitivity(clf, X, s: float) -> PriorSensitivity:
    """How the prediction of each row of ``X`` depends on the prior (see
    :meth:`bayesnb.NaiveBayes.prior_sensitivity`)."""
    s, model = check_strength(s), clf._fitted()
    check_model(model, clf.priors, clf.feature_prior)
    lower, upper = feature_bounds(model, X, s)
    predicted = np.asarray(clf.predict(X))
    position = {c: i for i, c in enumerate(model.classes.tolist())}
    chosen = np.array([position[c] for c in predicted.tolist()], dtype=np.int64)
    out = sensitivity(lower, upper, model.class_count, s, chosen)
    return PriorSensitivity({"predicted": predicted, **out}, row_index(X, len(lower)))
