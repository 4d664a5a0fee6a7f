r"""Weighted count, mean and centred sum of squares: the statistics of a Normal model.

With weights :math:`w_i` (a class's responsibilities) over the observed values of a column,
:math:`n = \sum w_i`, :math:`\bar x = \sum w_i x_i / n` and :math:`M_2 = \sum w_i (x_i - \bar
x)^2`. Two data sets merge exactly by Chan, Golub and LeVeque's pairwise update (*Algorithms for
computing the sample variance*, 1983), and the update inverts for a subset, so chunked fits,
partial fits and leave-one-out all reduce to these three arrays, in float32 without the
cancellation of :math:`\sum w x^2 - n\bar x^2`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ._base import xp_of


class Moments(NamedTuple):
    count: jax.Array  # (K, F) weighted number of observed values
    mean: jax.Array  # (K, F)
    m2: jax.Array  # (K, F) weighted centred sum of squares


def moments(x, resp) -> Moments:
    """Weighted count, mean and centred squares per class and column, the squares taken about
    each class's own mean (two passes); NaN is a missing value."""
    observed = ~jnp.isnan(x)
    obs = observed.astype(resp.dtype)
    x0 = jnp.where(observed, x, 0.0).astype(resp.dtype)
    count = resp.T @ obs
    mean = jnp.where(count > 0, resp.T @ x0 / jnp.where(count > 0, count, 1.0), 0.0)
    dev = (x0[:, None, :] - mean[None]) * obs[:, None, :]  # (n, K, F)
    return Moments(count, mean, jnp.einsum("ik,ikj->kj", resp, dev * dev))


def merge_moments(a: Moments, b: Moments) -> Moments:
    r""":math:`n = n_a + n_b`, :math:`\bar x = \bar x_a + \delta n_b/n` and :math:`M_2 =
    M_{2a} + M_{2b} + \delta^2 n_a n_b / n`, with :math:`\delta = \bar x_b - \bar x_a`."""
    xp = xp_of(a, b)
    count = a.count + b.count
    safe = xp.where(count > 0, count, 1.0)
    delta = b.mean - a.mean
    # the weight first: merging into empty statistics gives ``b.mean`` bit for bit
    mean = a.mean + delta * (b.count / safe)
    m2 = a.m2 + b.m2 + delta**2 * a.count * b.count / safe
    return type(a)(count, mean, m2)


def remove_moments(a: Moments, b: Moments) -> Moments:
    r"""The inverse of :func:`merge_moments`: with :math:`n' = n - w`, :math:`\bar x' = (n\bar x
    - w\bar x_b)/n'` and :math:`M_2' = M_2 - M_{2b} - (\bar x_b - \bar x)^2\, n w / n'` (empty
    statistics where :math:`n' = 0`). The difference cancels where the rest has (almost) no
    spread: a result within float rounding of :math:`M_2` is the exact zero it stands for."""
    xp = xp_of(a, b)
    count = a.count - b.count
    kept = count > 0
    safe = xp.where(kept, count, 1.0)
    delta = b.mean - a.mean
    mean = xp.where(kept, a.mean - delta * (b.count / safe), 0.0)
    removed = b.m2 + delta**2 * a.count * b.count / safe
    m2 = a.m2 - removed
    eps = xp.finfo(xp.result_type(m2)).eps
    m2 = xp.where(kept & (m2 > 64 * eps * (a.m2 + removed)), m2, 0.0)
    return type(a)(count, mean, m2)


def scale_moments(a: Moments, gamma: float) -> Moments:
    r"""Every weight times :math:`\gamma`: :math:`n` and :math:`M_2` scale, :math:`\bar x`
    does not."""
    return type(a)(a.count * gamma, a.mean, a.m2 * gamma)
