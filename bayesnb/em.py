r"""Semi-supervised fitting of the closed-form methods by EM (Nigam, McCallum, Thrun & Mitchell,
*Text Classification from Labeled and Unlabeled Documents using EM*, Machine Learning 39, 2000).

Labelled rows :math:`(x_i, y_i)`, :math:`i \in L`, and unlabelled rows :math:`x_i`,
:math:`i \in U`, weighted by :math:`\lambda` (Nigam's EM-λ). EM maximises the observed-data log
posterior

.. math::

    \mathcal J(\theta) = \log \tilde p(\theta) + \sum_{i \in L} w_i \log p(x_i, y_i \mid \theta)
        + \lambda \sum_{i \in U} \log \sum_k p(x_i, c = k \mid \theta)

where :math:`p(x, c = k \mid \theta) = \pi_k\, p(x \mid \theta_k)`. Starting from the fit of
the labelled rows alone, each iteration

* **E-step**: :math:`r_{ik} = p(c = k \mid x_i, \theta)` for :math:`i \in U`, computed in log
  space (the joint log scores normalised by their ``logsumexp``);
* **M-step**: the sufficient statistics become those of the labelled rows plus
  :math:`\lambda r_{ik}`-weighted statistics of every unlabelled row in every class (statistics
  are linear in the row weights, so this is a weighted fit of the labelled rows and of
  :math:`K` weighted copies of the unlabelled ones), and :math:`\theta` the method's estimate.

The method's estimate is the exact maximiser of the expected complete-data objective, so
:math:`\mathcal J` never decreases (Dempster, Laird & Rubin, 1977). What :math:`\tilde p` is
depends on the method:

* ``"ml"``: no prior (:math:`\mathcal J` is the observed-data log likelihood);
* ``"map"``: the model's conjugate priors (Dirichlet, Beta, Gamma, Normal-Gamma, and the
  Dirichlet ``class_alpha`` on the class proportions);
* ``"mean"``: the posterior mean is the MAP under a shifted conjugate prior (Dirichlet/Beta
  concentration and Gamma shape + 1, Normal-Gamma shape + 1/2, pooled shape + 1 - K/2), so
  ``"mean"``-EM is MAP-EM under that prior and :math:`\mathcal J` uses it;
* ``"bayes"``: EM runs as under ``"mean"``, and the returned model predicts with the exact
  conjugate predictive of the statistics at the fixed point. This is an **approximation**: it
  treats the expected (soft-completed) statistics as if they were observed, where the exact
  posterior given unlabelled rows is a mixture over their labellings (``method="mcmc"`` with
  missing labels samples that posterior);
* ``"mcmc"``: refused; fit with missing labels instead (``NaiveBayes.fit`` under ``"mcmc"``).

Iterations stop when one raises :math:`\mathcal J` by at most ``tol * max(1, |J|)``
(``max_iter`` bounds them; a ``ConvergenceWarning`` says when it is reached first). EM finds a
local maximum; it starts from the labelled fit, as Nigam et al. do.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from ._classes import class_log_prior
from ._data import as_table
from .families._base import pseudo_log
from .fitted import add_chunk, check_parametric, check_weight

if TYPE_CHECKING:
    from ._typing import ArrayLike, Data
    from .estimator import NaiveBayes


class EMHistory(NamedTuple):
    """What the iterations did: the observed-data log posterior after the labelled fit and
    after every iteration (non-decreasing), the number of iterations, and whether the
    tolerance was met."""

    log_posterior: list
    n_iter: int
    converged: bool


def fit_em(model: NaiveBayes, X: Data, y: ArrayLike, X_unlabeled: Data, *,
           unlabeled_weight: float = 1.0, sample_weight: ArrayLike | None = None,
           tol: float = 1e-7, max_iter: int = 100,
           return_history: bool = False) -> NaiveBayes | tuple[NaiveBayes, EMHistory]:
    """Fit ``model`` (a ``NaiveBayes``, in place) from labelled and unlabelled rows by EM.

    EM runs on a copy of ``model``; its result is installed on ``model`` in one assignment
    once EM has finished, so a call that raises leaves ``model`` as it was.

    Parameters
    ----------
    model : NaiveBayes
        Its settings are used; ``method`` must be ``"ml"``, ``"map"``, ``"mean"`` or
        ``"bayes"`` (module docs). Priors given as distributions (``priors=``, hyperpriors)
        have no closed form and are refused.
    X, y : labelled rows and their labels (every class to be learned must appear in ``y``)
    X_unlabeled : rows without labels, with the same columns as ``X``
    unlabeled_weight : float, default=1.0
        Nigam's λ >= 0: the weight of each unlabelled row relative to a labelled one (λ < 1
        when the unlabelled rows outnumber the labelled ones and the mixture model fits the
        classes imperfectly). 0 gives exactly the labelled fit, ``fit(X, y, sample_weight)``.
        Above 0, the levels of a Categorical column are learned from the labelled and the
        unlabelled rows together: a level seen only in ``X_unlabeled`` becomes a level of the
        model (its smoothed tables give it mass in every class).
    sample_weight : array-like of shape (n_labelled,), optional
        Weights of the labelled rows.
    tol : float, default=1e-7
        Stop when an iteration raises the log posterior by at most ``tol * max(1, |J|)``.
        EM converges linearly and J is flat near its maximum, so the parameters (and the
        predictions) can still be moving when J barely rises: lower ``tol`` to get closer to
        the fixed point itself.
    max_iter : int, default=100
    return_history : bool, default=False
        Also return an :class:`EMHistory`.

    Returns
    -------
    model : NaiveBayes
        Fitted: its statistics are the labelled ones plus the λ-weighted expected statistics of
        the unlabelled rows at the EM fixed point (``partial_fit``, ``save`` and the other
        methods work on them as on any fit). ``(model, history)`` with ``return_history``.

    Examples
    --------
    Two labelled rows per class and nine unlabelled ones, under ML; the same EM written with
    NumPy and scipy reaches the same means:

    >>> import numpy as np, bayesnb as bnb
    >>> from scipy.stats import norm
    >>> from bayesnb.em import fit_em
    >>> X, y = np.array([[0.0], [2.0], [4.0], [6.0]]), ["a", "a", "b", "b"]
    >>> U = np.array([[0.5], [1.0], [1.5], [2.5], [2.8], [3.5], [5.0], [5.5], [7.0]])
    >>> clf, history = fit_em(bnb.NaiveBayes(bnb.Gaussian(), method="ml"), X, y, U,
    ...                       tol=1e-10, return_history=True)
    >>> clf.theta_.ravel().round(2), history.converged
    (array([1.5 , 5.09]), True)
    >>> bool(np.all(np.diff(history.log_posterior) >= 0))  # EM never lowers it
    True
    >>> x, u = X[:, 0], U[:, 0]
    >>> labels, resp = np.array([[1.0, 1, 0, 0], [0, 0, 1, 1]]), np.zeros((2, len(u)))
    >>> for _ in range(200):
    ...     w, v = np.hstack([labels, resp]), np.concatenate([x, u])
    ...     n = w.sum(axis=1)
    ...     mean, var = w @ v / n, w @ v**2 / n - (w @ v / n) ** 2
    ...     joint = (n / n.sum())[:, None] * norm.pdf(u, mean[:, None], np.sqrt(var)[:, None])
    ...     resp = joint / joint.sum(axis=0)
    >>> mean.round(2)
    array([1.5 , 5.09])
    """
    method = model.method
    if method not in ("ml", "map", "mean", "bayes"):
        raise ValueError(f"EM runs the closed-form methods ('ml', 'map', 'mean', 'bayes'), not "
                         f"method={method!r}; under 'mcmc' give the unlabelled rows a missing "
                         f"label (None/NaN) in fit().")
    lam = float(unlabeled_weight)
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"unlabeled_weight must be finite and >= 0, got {unlabeled_weight!r}.")
    if not (tol >= 0) or int(max_iter) < 0:
        raise ValueError(f"tol must be >= 0 and max_iter >= 0, got {tol!r} and {max_iter!r}.")
    if model.priors:
        raise ValueError("priors= has no closed form, so EM cannot run; use method='mcmc' "
                         "with missing labels.")
    if model.feature_prior is not None:  # J scored the average of models EM does not fit
        raise ValueError("EM's M-step fits one model's tables, but feature_prior averages the "
                         "predictive over feature subsets, so EM would not raise its objective "
                         "(it fell while reported converged): set feature_prior=None for EM.")
    y = _labels(y)
    classes = _sorted_labels(y)
    n_l, n_u = as_table(X).n_rows, as_table(X_unlabeled).n_rows
    if y.shape[0] != n_l:
        raise ValueError(f"X has {n_l} rows but y has {y.shape[0]} labels.")
    if n_u == 0:
        raise ValueError("X_unlabeled has no rows: use fit() for labelled data alone.")
    if n_l == 0:
        raise ValueError("X has no labelled rows: EM starts from a labelled fit, so every "
                         "class to be learned needs a labelled row.")
    w_l = check_weight(sample_weight, n_l, part=True)  # the unlabeled rows weigh too
    X_all = _stack(X, [X_unlabeled] * len(classes))
    y_all = np.concatenate([y, np.repeat(classes, n_u)])
    # under 'bayes' the EM runs the 'mean' updates and the model predicts with the exact
    # predictive of the fixed point (module docs)
    em_method = "mean" if method == "bayes" else method
    # EM runs on a copy: every M-step is a fit, and an error in a later one (an undefined
    # responsibility) must leave the caller's estimator as it was ("a fit completes or
    # changes nothing"); the caller's estimator is set only once EM has finished
    work = clone(model).set_params(method=em_method)
    work._check_method()
    table = as_table(X_all)

    def m_step(resp):  # labelled rows, then K weighted copies of the unlabelled rows
        weights = np.concatenate([w_l, lam * resp.T.reshape(-1)])
        # every step's levels and families are those of all the rows, the unlabelled ones
        # included (at weight 0 in the first step; a copy of responsibility 0 later)
        fitted = add_chunk(None, work.features, table, y_all, weights,
                           infer_counts=work.infer_counts, use_kernel=work.use_kernel,
                           schema_from_every_row=True)
        # a kernel density has no parameters for the M-step to maximise: J could fall
        check_parametric(fitted, "EM")
        return work._install(fitted)

    converged, n_iter = False, 0
    if lam == 0:
        # the labelled fit itself: the stacked copies would add the levels seen only in the
        # unlabelled rows (at zero weight), which changes smoothed tables and the evidence
        work.fit(X, y, sample_weight=sample_weight)
        check_parametric(work.fitted_, "EM")
        history = [_log_posterior(work, X, y, w_l, X_unlabeled, lam, em_method)]
        converged = True
    else:
        m_step(np.zeros((n_u, len(classes))))  # the labelled fit; fixes classes and levels
        history = [_log_posterior(work, X, y, w_l, X_unlabeled, lam, em_method)]
        for n_iter in range(1, int(max_iter) + 1):  # noqa: B007 (n_iter is reported)
            m_step(_responsibilities(work, X_unlabeled))
            value = _log_posterior(work, X, y, w_l, X_unlabeled, lam, em_method)
            history.append(value)
            if value - history[-2] <= tol * max(1.0, abs(value)):
                converged = True
                break
    # one assignment on the caller's estimator; its scorer (under its own method) is built
    # first, so an error there too leaves it unchanged
    model._install(work.fitted_)
    if not converged and max_iter > 0:
        warnings.warn(f"EM stopped after max_iter={max_iter} iterations with the log "
                      f"posterior still rising by {history[-1] - history[-2]:.3g}; raise "
                      f"max_iter or tol.", ConvergenceWarning, stacklevel=2)
    if return_history:
        return model, EMHistory(history, n_iter, converged)
    return model


def log_posterior(model: NaiveBayes, X: Data, y: ArrayLike, X_unlabeled: Data, *,
                  unlabeled_weight: float = 1.0,
                  sample_weight: ArrayLike | None = None) -> float:
    """The observed-data log posterior :math:`\\mathcal J` (module docs) of a fitted model's
    plug-in parameters, the quantity EM never decreases.

    Examples
    --------
    >>> import numpy as np, bayesnb as bnb
    >>> from bayesnb.em import fit_em, log_posterior
    >>> X, y = np.array([[0.0], [2.0], [4.0], [6.0]]), ["a", "a", "b", "b"]
    >>> U = np.array([[0.5], [1.0], [1.5], [2.5], [2.8], [3.5], [5.0], [5.5], [7.0]])
    >>> labelled = bnb.NaiveBayes(bnb.Gaussian(), method="ml").fit(X, y)
    >>> round(log_posterior(labelled, X, y, U), 3)  # where EM starts
    -28.574
    >>> clf = fit_em(bnb.NaiveBayes(bnb.Gaussian(), method="ml"), X, y, U)
    >>> round(log_posterior(clf, X, y, U), 3)  # where it stops
    -27.378"""
    method = model.method
    if method not in ("ml", "map", "mean", "bayes"):
        raise ValueError(f"the log posterior of EM is defined for the closed-form methods, "
                         f"not method={method!r}.")
    w = (np.ones(as_table(X).n_rows) if sample_weight is None
         else np.asarray(sample_weight, np.float64))
    plug_in = "mean" if method == "bayes" else method  # J is a function of the plug-in
    model.set_params(method=plug_in)
    try:
        return _log_posterior(model, X, _labels(y), w, X_unlabeled, float(unlabeled_weight),
                              plug_in)
    finally:
        model.set_params(method=method)


# ---------------------------------------------------------------------- the two steps
def _responsibilities(model, X_unlabeled) -> np.ndarray:
    """(n_u, K) p(c | x) of the unlabelled rows under the current plug-in model, log space."""
    joint = np.asarray(model.predict_joint_log_proba(X_unlabeled), dtype=np.float64)
    norm = logsumexp(joint, axis=1, keepdims=True)
    impossible = ~np.isfinite(norm[:, 0])
    if impossible.any():
        i = int(np.argmax(impossible))
        raise ValueError(
            f"unlabelled row {i} has probability zero in every class under "
            f"method={model.method!r} ({int(impossible.sum())} such rows): a value the "
            f"labelled rows never showed meets an unsmoothed estimate, so its class "
            f"responsibilities are undefined; use method='mean', or 'map' with concentrations "
            f"above 1 (alpha=2: MAP is add-one smoothing; at alpha=1 MAP is ML).")
    return np.exp(joint - norm)


def _log_posterior(model, X, y, w_l, X_unlabeled, lam, method) -> float:
    """J(theta) of the model's current plug-in parameters (module docs)."""
    joint_l = np.asarray(model.predict_joint_log_proba(X), dtype=np.float64)
    codes = pd.Index(model.classes_, dtype=object).get_indexer(pd.Index(y, dtype=object))
    labelled = float(np.sum(w_l * joint_l[np.arange(len(y)), codes]))
    if lam == 0:  # the unlabelled rows weigh nothing (0 * -inf would be NaN under ML)
        return labelled + _log_prior(model, method)
    marginal = logsumexp(np.asarray(model.predict_joint_log_proba(X_unlabeled),
                                    dtype=np.float64), axis=1)
    return labelled + lam * float(np.sum(marginal)) + _log_prior(model, method)


def _log_prior(model, method: str) -> float:
    """log p~(theta) up to a constant (module docs): the conjugate prior's density at the
    plug-in estimate, written as pseudo-count exponents ``c`` on the log parameters (``c`` is
    alpha - 1 under MAP and alpha under the mean, whose plug-in is the MAP of a shifted
    prior). Zero under ML."""
    if method == "ml":
        return 0.0
    shift = -1.0 if method == "map" else 0.0
    total = 0.0
    if model.class_prior is None:
        class_alpha = model._class_alpha_array()  # a mapping or Series matched by label
        gamma = np.broadcast_to(np.asarray(class_alpha, dtype=np.float64),
                                model.class_count_.shape)
        log_pi = class_log_prior(model.class_count_, class_alpha, None, method)
        # class_alpha = 0 (frequencies) is the ML estimate of pi: no prior term
        total += pseudo_log(np.where(gamma > 0, gamma + shift, 0.0), log_pi)
    n_classes = len(model.classes_)
    for block in model.blocks_:
        family, prior = type(block.family), block.prior
        p = family.estimate(prior, block.stats, method)
        p = type(p)(*(np.asarray(leaf, dtype=np.float64) for leaf in p))
        total += family.log_prior_at(prior, p, method, n_classes)
    return total


# ---------------------------------------------------------------------- input handling
def _labels(y) -> np.ndarray:
    y = np.asarray(y.to_numpy() if isinstance(y, pd.Series | pd.Index) else y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one label per row), got shape {y.shape}.")
    if pd.isna(pd.Series(y, dtype=object)).any():
        raise ValueError("y has missing labels: pass unlabelled rows as X_unlabeled.")
    return y


def _sorted_labels(y: np.ndarray) -> np.ndarray:
    try:
        return np.unique(y)
    except TypeError:
        raise TypeError("labels in y must be mutually comparable so they can be sorted.") \
            from None


def _stack(X, parts: list):
    """``X`` followed by ``parts``, row-wise, in ``X``'s kind (DataFrame, sparse, array)."""
    if isinstance(X, pd.DataFrame):
        for part in parts:
            if not isinstance(part, pd.DataFrame) or list(part.columns) != list(X.columns):
                raise ValueError("X_unlabeled must be a DataFrame with the columns of X, in "
                                 f"the same order ({list(X.columns)[:10]}).")
        return pd.concat([X, *parts], ignore_index=True)
    if sparse.issparse(X):
        return sparse.vstack([X, *parts], format="csr")
    X = np.asarray(X)
    arrays = [np.asarray(p) for p in parts]
    for a in arrays:
        if a.ndim != 2 or a.shape[1] != X.shape[1]:
            raise ValueError(f"X_unlabeled has shape {a.shape}; it needs the {X.shape[1]} "
                             f"columns of X.")
    return np.concatenate([X, *arrays], axis=0)
