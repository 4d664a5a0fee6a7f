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
import numpy as np
import pandas as pd

from ._base import observed_pairs, xp_of


class Moments(NamedTuple):
    count: jax.Array  # (K, F) weighted number of observed values
    mean: jax.Array  # (K, F)
    m2: jax.Array  # (K, F) weighted centred sum of squares


def moments(x, resp) -> Moments:
    """Weighted count, mean and centred squares per class and column, the squares taken about
    each class's own mean (two passes); NaN is a missing value. NumPy arrays in, NumPy out."""
    xp = xp_of(x, resp)
    observed = ~xp.isnan(x)
    obs = observed.astype(resp.dtype)
    x0 = xp.where(observed, x, 0.0).astype(resp.dtype)
    count = resp.T @ obs
    mean = xp.where(count > 0, resp.T @ x0 / xp.where(count > 0, count, 1.0), 0.0)
    dev = (x0[:, None, :] - mean[None]) * obs[:, None, :]  # (n, K, F)
    return Moments(count, mean, xp.einsum("ik,ikj->kj", resp, dev * dev))


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


def removal_condition(a: Moments, b: Moments) -> np.ndarray:
    r"""``(m,)``: per leading row, the largest :math:`(M_2 + r) / M_2'` of
    :func:`remove_moments` (:math:`r` the removed squares), the factor by which the
    subtraction amplifies :math:`M_2`'s rounding (infinite where it leaves 0 of a spread)."""
    count = a.count - b.count
    safe = np.where(count > 0, count, 1.0)
    removed = b.m2 + (b.mean - a.mean) ** 2 * a.count * b.count / safe
    size = a.m2 + removed
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where((count > 0) & (size > 0), size / np.abs(a.m2 - removed), 1.0)
    return np.max(ratio.reshape(ratio.shape[0], -1), axis=1, initial=1.0)


def scale_moments(a: Moments, gamma: float) -> Moments:
    r"""Every weight times :math:`\gamma`: :math:`n` and :math:`M_2` scale, :math:`\bar x`
    does not."""
    return type(a)(a.count * gamma, a.mean, a.m2 * gamma)


# ------------------------------------------------- the ML variance's divisor, stated tables
def checked_ddof(value) -> float:
    """``ddof`` as a float, refused unless a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating) \
            or not np.isfinite(value) or value < 0:
        raise ValueError(f"Gaussian: ddof must be a finite number >= 0 (1 for R's sd()), "
                         f"got {value!r}.")
    return float(value)


def check_divisor(count, ddof, pooled, columns, classes) -> None:
    """Refuse an ML variance ``M2 / (n - ddof)`` (pooled: ``sum_k (n_k - ddof)``) whose divisor
    is not positive, naming the column (and the class)."""
    ddof, count = float(np.asarray(ddof)), np.asarray(count, dtype=np.float64)
    if ddof == 0:
        return
    if bool(np.asarray(pooled)):
        divisor = count.sum(axis=0) - ddof * count.shape[0]
        short = np.flatnonzero((divisor <= 0) & (count.sum(axis=0) > 0))
        if short.size:
            raise ValueError(
                f"column {columns[short[0]]!r}: the pooled variance with ddof={ddof:g} divides "
                f"by {divisor[short[0]]:g} and is undefined under method='ml'. Use ddof=0, or "
                f"method='mean' or 'bayes'.")
        return
    short = (count > 0) & (count <= ddof)
    if short.any():
        k, j = map(int, np.argwhere(short)[0])
        label = classes[k].item() if isinstance(classes[k], np.generic) else classes[k]
        raise ValueError(
            f"column {columns[j]!r}, class {label!r}: {count[k, j]:g} observed value(s), so "
            f"the variance with ddof={ddof:g} divides by {count[k, j] - ddof:g} and is "
            f"undefined under method='ml'. Use ddof=0 (the 1/N variance), or method='mean' "
            f"or 'bayes' (the prior fills the gap).")


def stated_mean_sd(cell) -> list:
    """One class's entry of a stated Normal table, ``(mean, sd)``, named."""
    try:
        mean, sd = cell
    except (TypeError, ValueError):
        raise ValueError(f"must be (mean, sd), got {cell!r}") from None
    return [("mean", mean), ("sd", sd)]


def stated_mean_sd_cell(row) -> tuple:
    """``(mean, sd)`` of one class's row of :func:`mean_sd_tables`."""
    return float(row["mean"]), float(row["sd"])


def mean_sd_params(tables: dict, schema, classes) -> tuple:
    """``(mean, precision)`` ``(K, F)`` of stated ``tables[column][class] = (mean, sd)``."""
    pairs = np.array([[tuple(map(float, tables[col][c])) for col in schema.columns]
                      for c in classes])  # (K, F, 2)
    if np.any(pairs[..., 1] <= 0):
        raise ValueError("Gaussian tables: every sd must be positive.")
    return pairs[..., 0], pairs[..., 1] ** -2.0  # float64, as fits leave them


def mean_sd_tables(mean, precision, columns, classes) -> dict:
    """Per column a DataFrame of each class's mean and sd."""
    mean, sd = np.asarray(mean), 1.0 / np.sqrt(np.asarray(precision))
    return {col: pd.DataFrame({"mean": mean[:, j], "sd": sd[:, j]},
                              index=pd.Index(classes, name="class"))
            for j, col in enumerate(columns)}


def mean_sd_scale(table, j: int) -> tuple:
    """``density_scale`` of a table of ``mean`` and ``precision``: column ``j``'s class
    means and its largest sd."""
    sd = 1.0 / np.sqrt(np.broadcast_to(np.asarray(table.precision), np.shape(table.mean)))
    return np.asarray(table.mean, dtype=np.float64)[:, j], float(np.max(sd[:, j]))


def pooled_linear_terms(mean, precision, columns) -> tuple | None:
    r"""The Normal model's terms linear in x when every class shares a precision: weights
    :math:`\lambda\mu_k` and biases :math:`-\lambda\mu_k^2/2` per observed value; None
    when the classes' precisions differ (the :math:`x^2` terms then depend on the class)."""
    lam = np.asarray(precision, dtype=np.float64)
    if not np.all(lam == lam[:1]):
        return None
    mu = np.asarray(mean, dtype=np.float64)
    return observed_pairs(lam * mu, -0.5 * lam * mu * mu, columns)
