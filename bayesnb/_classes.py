r"""The class variable: proportions with a Dirichlet prior, or fixed by the user.

.. math::

    \boldsymbol\pi \sim \mathrm{Dirichlet}(\boldsymbol\gamma), \qquad
    c_i \sim \mathrm{Categorical}(\boldsymbol\pi).

With :math:`n_k` the weighted class counts, :math:`N = \sum_k n_k`, :math:`\Gamma_0 = \sum_k
\gamma_k` and :math:`K` classes: ML :math:`n_k/N` (Barber eq. 5.5; e1071's "A-priori
probabilities"); posterior mean :math:`(n_k + \gamma_k)/(N + \Gamma_0)`, which is also the
posterior predictive of the next label; MAP :math:`(n_k + \gamma_k - 1)/(N + \Gamma_0 - K)`;
evidence :math:`\log\Gamma(\Gamma_0) - \log\Gamma(\Gamma_0 + N) + \sum_k \log\Gamma(\gamma_k +
n_k) - \log\Gamma(\gamma_k)`. ``class_alpha=0`` (the improper Haldane prior) makes every method
use the class frequencies, as scikit-learn's ``fit_prior=True`` does; its evidence is undefined.

A fixed ``class_prior`` is used as given by every method; its "evidence" is
:math:`\sum_k n_k \log \pi_k`.

Per-class values (``class_prior``, a vector ``class_alpha``) are read by position, in the order
of the sorted classes, as scikit-learn's ``priors``; a mapping or a pandas Series is matched
by label (:func:`by_class`), never by position.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .families._base import log_dirichlet_ratio


def class_log_prior(counts: np.ndarray, class_alpha, class_prior, method: str) -> np.ndarray:
    """log p(c = k | data) used by a plug-in or exact-Bayes prediction, shape ``(K,)``; counts
    of shape ``(..., K)`` (e.g. one row of counts per left-out row) give ``(..., K)``."""
    counts = np.asarray(counts, dtype=np.float64)
    if class_prior is not None:
        with np.errstate(divide="ignore"):  # a class of prior 0: log 0 = -inf, never chosen
            return np.log(_fixed(class_prior, counts.shape[-1])) + np.zeros(counts.shape)
    gamma = _concentration(class_alpha, counts.shape[-1])
    if method == "map":
        if np.any((gamma > 0) & (gamma < 1)):
            raise ValueError(
                "the MAP estimate of the class proportions needs class_alpha >= 1 (or 0 for "
                "plain frequencies); use method='mean' or raise class_alpha.")
        pseudo = np.where(gamma > 0, gamma - 1.0, 0.0)
    elif method == "ml":
        pseudo = np.zeros_like(gamma)
    else:  # "mean", "bayes": the posterior mean is the predictive of the next label
        pseudo = gamma
    num = counts + pseudo
    with np.errstate(divide="ignore"):
        return np.log(num) - np.log(num.sum(axis=-1, keepdims=True))


def class_log_evidence(counts: np.ndarray, class_alpha, class_prior) -> float:
    """log p(y) of the training labels (sequence, not multiset)."""
    counts = np.asarray(counts, dtype=np.float64)
    if class_prior is not None:
        pi = _fixed(class_prior, len(counts))
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(np.sum(np.where(counts > 0, counts * np.log(pi), 0.0)))
    gamma = _concentration(class_alpha, len(counts))
    if np.any(gamma <= 0):
        raise ValueError("the evidence is undefined under class_alpha=0 (an improper prior); "
                         "use class_alpha > 0 or a fixed class_prior.")
    return float(log_dirichlet_ratio(gamma, counts))  # log B(gamma + n) - log B(gamma)


def is_labelled(value: Any) -> bool:
    """Whether per-class ``value`` names its classes (a mapping or a pandas Series)."""
    return isinstance(value, Mapping | pd.Series)


def by_class(value: Any, classes: np.ndarray, name: str) -> Any:
    """Per-class ``value`` in the order of ``classes``: a mapping or pandas Series matched by
    label, each class exactly once (a label that is not a class, or a class left out, is
    refused, naming them); anything else as given, to be read by position.

    Parameters
    ----------
    value : scalar, array-like, mapping or pandas Series
        The setting as the user gave it (``class_prior``, ``class_alpha``).
    classes : ndarray of shape (n_classes,)
        The sorted labels (``classes_``).
    name : str
        The setting's name, for the messages.

    Returns
    -------
    ndarray of shape (n_classes,) or the value as given

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from bayesnb._classes import by_class
    >>> by_class(pd.Series({"spam": 0.25, "ham": 0.75}), np.array(["ham", "spam"]), "p")
    array([0.75, 0.25])
    >>> by_class({"ham": 0.75, "eggs": 0.25}, np.array(["ham", "spam"]), "p")
    Traceback (most recent call last):
    ...
    ValueError: p is matched to the classes by label: it names ['eggs'], which are not
    classes, and gives no value for class(es) ['spam'] (classes_: ['ham', 'spam']).
    """
    if not is_labelled(value):
        return value
    if isinstance(value, pd.Series) and value.index.has_duplicates:
        twice = _shown(value.index[value.index.duplicated()].unique())
        raise ValueError(f"{name} names label(s) {twice} more than once.")
    given = dict(value.items())
    known = set(classes)
    extra = [label for label in given if label not in known]
    missing = [c for c in classes if c not in given]
    if extra or missing:
        parts = ([f"it names {_shown(extra)}, which are not classes"] if extra else []) + (
            [f"gives no value for class(es) {_shown(missing)}"] if missing else [])
        raise ValueError(f"{name} is matched to the classes by label: {', and '.join(parts)} "
                         f"(classes_: {_shown(classes)}).")
    return np.array([given[c] for c in classes], dtype=np.float64)


def by_label(value: Any) -> Any:
    """A mapping or pandas Series as a dict ``{label: value}`` (what a cache keys it by: in
    another order it is the same setting); anything else as given."""
    return dict(value.items()) if is_labelled(value) else value


def _shown(labels: Any, at_most: int = 20) -> list:
    """Up to ``at_most`` labels as plain Python values, for a message."""
    return [v.item() if isinstance(v, np.generic) else v for v in list(labels)[:at_most]]


def _positional(value: Any, name: str) -> None:
    """Refuse a labelled ``value`` where only positions are known: read by position it would
    silently give one class's value to another (:func:`by_class` matches it first)."""
    if is_labelled(value):
        raise ValueError(f"{name} given by label ({type(value).__name__}) must be matched to the "
                         f"classes first; here only their number is known. Give it as an "
                         f"array in the order of classes_.")


def _concentration(class_alpha, n_classes: int) -> np.ndarray:
    _positional(class_alpha, "class_alpha")
    gamma = np.asarray(class_alpha, dtype=np.float64)
    if gamma.ndim == 0:
        gamma = np.full(n_classes, float(gamma))
    if gamma.shape != (n_classes,) or not np.all(np.isfinite(gamma)) or np.any(gamma < 0):
        raise ValueError(
            f"class_alpha must be a non-negative scalar or one value per class ({n_classes}), "
            f"got {class_alpha!r}.")
    return gamma


def _fixed(class_prior, n_classes: int) -> np.ndarray:
    _positional(class_prior, "class_prior")
    pi = np.asarray(class_prior, dtype=np.float64)
    if pi.shape != (n_classes,):
        raise ValueError(f"class_prior must have one probability per class ({n_classes}), "
                         f"got shape {pi.shape}.")
    if not np.all(np.isfinite(pi)) or np.any(pi < 0) or not np.isclose(pi.sum(), 1.0):
        raise ValueError(f"class_prior must be non-negative and sum to 1, got {class_prior!r}.")
    return pi
