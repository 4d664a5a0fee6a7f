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
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln


def class_log_prior(counts: np.ndarray, class_alpha, class_prior, method: str) -> np.ndarray:
    """log p(c = k | data) used by a plug-in or exact-Bayes prediction, shape ``(K,)``; counts
    of shape ``(..., K)`` (e.g. one row of counts per left-out row) give ``(..., K)``."""
    counts = np.asarray(counts, dtype=np.float64)
    if class_prior is not None:
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
    return float(gammaln(gamma.sum()) - gammaln(gamma.sum() + counts.sum())
                 + np.sum(gammaln(gamma + counts) - gammaln(gamma)))


def _concentration(class_alpha, n_classes: int) -> np.ndarray:
    gamma = np.asarray(class_alpha, dtype=np.float64)
    if gamma.ndim == 0:
        gamma = np.full(n_classes, float(gamma))
    if gamma.shape != (n_classes,) or not np.all(np.isfinite(gamma)) or np.any(gamma < 0):
        raise ValueError(
            f"class_alpha must be a non-negative scalar or one value per class ({n_classes}), "
            f"got {class_alpha!r}.")
    return gamma


def _fixed(class_prior, n_classes: int) -> np.ndarray:
    pi = np.asarray(class_prior, dtype=np.float64)
    if pi.shape != (n_classes,):
        raise ValueError(f"class_prior must have one probability per class ({n_classes}), "
                         f"got shape {pi.shape}.")
    if not np.all(np.isfinite(pi)) or np.any(pi < 0) or not np.isclose(pi.sum(), 1.0):
        raise ValueError(f"class_prior must be non-negative and sum to 1, got {class_prior!r}.")
    return pi
