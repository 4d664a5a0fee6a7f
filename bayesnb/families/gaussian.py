r"""Gaussian likelihood with a Normal-Gamma prior on (mean, precision).

.. math::

    \lambda_{kj} \sim \mathrm{Gamma}(a_j, b_j), \quad
    \mu_{kj} \mid \lambda_{kj} \sim \mathcal N\!\big(m_j, (\kappa_j \lambda_{kj})^{-1}\big), \quad
    x_{ij} \mid c_i = k \sim \mathcal N(\mu_{kj}, \lambda_{kj}^{-1}).

With ``pooled=True`` one precision :math:`\lambda_j` per column is shared by every class (Downie,
seed 004: "the variance is independent of the class"; LDA with a diagonal covariance).

With :math:`n`, :math:`\bar x` and :math:`M_2 = \sum (x - \bar x)^2` the weighted count, mean and
centred sum of squares of a class and column (Murphy, *Conjugate Bayesian analysis of the
Gaussian distribution*, 2007, section 3):

* posterior: :math:`\kappa' = \kappa + n`, :math:`m' = (\kappa m + n\bar x)/\kappa'`,
  :math:`a' = a + n/2`, :math:`b' = b + M_2/2 + \kappa n (\bar x - m)^2 / (2\kappa')`;
  pooled: :math:`a' = a + \sum_k n_k/2` and :math:`b'` sums the class terms;
* ML: :math:`\mu = \bar x`, :math:`\sigma^2 = M_2/n` (the 1/N variance of seed 003 and of
  ``GaussianNB(var_smoothing=0)``); pooled: :math:`\sum_k M_{2k} / \sum_k n_k`;
* posterior mean: :math:`\mu = m'`, :math:`\lambda = a'/b'` (the mean of the precision);
* MAP: the joint mode, :math:`\mu = m'`, :math:`\lambda = (a' - 1/2)/b'` (pooled:
  :math:`(a' - 1 + K/2)/b'`);
* posterior predictive: Student-t with :math:`2a'` degrees of freedom, location :math:`m'`,
  scale :math:`\sqrt{b'(\kappa'+1)/(a'\kappa')}`;
* evidence: :math:`\log\Gamma(a') - \log\Gamma(a) + a\log b - a'\log b' +
  \tfrac12(\log\kappa - \log\kappa') - \tfrac n2\log 2\pi` per class and column (pooled: the
  Gamma terms once per column, the kappa terms per class).

Default prior (does not depend on the data, so chunked and merged fits equal a batch fit):
``loc=0``, ``kappa=1e-3`` (the mean prior is about 30 standard deviations wide),
``shape=1``, ``rate=0.01`` (a variance floor near 0.01 with the weight of two pseudo-observations).
It is weakly informative for columns whose spread is about 0.1 or larger; standardise columns on
a tinier scale, or give ``rate`` in their units.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.scipy.special import gammaln
from scipy.special import gammaln as sp_gammaln

from ._base import (
    COARSE_ROUNDING,
    Family,
    Float32Unrepresentable,
    Schema,
    broadcast_hyper,
    column_units,
    dist,
    float64_mode,
    has_missing,
    kernel_shift,
    numeric_block,
    numpyro,
    pseudo_log,
    reference,
    xp_of,
)

LOG_2PI = float(np.log(2 * np.pi))


class NormalGammaPrior(NamedTuple):
    loc: jax.Array  # (F,) prior, or (K, F) posterior
    kappa: jax.Array
    shape: jax.Array
    rate: jax.Array
    pooled: jax.Array  # () bool: one precision per column shared across classes


class GaussianStats(NamedTuple):
    count: jax.Array  # (K, F) weighted number of observed values
    mean: jax.Array  # (K, F)
    m2: jax.Array  # (K, F) weighted centred sum of squares


class GaussianParams(NamedTuple):
    mean: jax.Array  # (K, F)
    precision: jax.Array  # (K, F)
    center: jax.Array  # (F,) shift applied before the matmul, for float32 accuracy


class GaussianExpanded(NamedTuple):
    r"""Plug-in parameters the float32 score kernel reads as matmuls (``Gaussian.kernel_table``),
    relative to a per-column reference class r (its widest; a class-free constant per row):
    :math:`s_k(x) = \sum_j q_{kj} x_j^2 + l_{kj} x_j + c_{kj}` with :math:`q = -(\lambda_k -
    \lambda_r)/2`, :math:`l = \lambda_k m_k - \lambda_r m_r` and :math:`c` the rest,
    ``x`` relative to the host-side shift. Without the reference the terms
    :math:`\lambda x^2/2` summed over 10,000 standardised columns were about 5,000 per class, and
    their float32 rounding moved probabilities by 5e-4."""

    quad: jax.Array  # (K, F)
    lin: jax.Array  # (K, F)
    const: jax.Array  # (K, F)
    const_sum: jax.Array  # (K,) ``const`` summed over the columns in float64 (complete rows)


class GaussianDirect(NamedTuple):
    """Plug-in parameters the score kernel reads term by term (``Gaussian.kernel_table``)."""

    mean: jax.Array  # (K, F), relative to the host-side shift
    precision: jax.Array  # (K, F)


class StudentT(NamedTuple):
    r"""The posterior predictive as the score kernel reads it (``Gaussian.kernel_table``):
    :math:`\log t(x) = n_{kj} - c_{kj}\log(1 + (x - m_{kj})^2 w_{kj})` with
    :math:`c = (\nu + 1)/2` and :math:`w = 1/(\nu s^2)`, so the kernel's one pass over a chunk
    costs a subtraction, three products and one ``log1p`` per (row, class, column)."""

    loc: jax.Array  # (K, F), relative to the host-side shift
    dof: jax.Array  # (K, F)
    scale2: jax.Array  # (K, F)
    log_norm: jax.Array  # (K, F) the Student-t's log normaliser, computed in float64
    coef: jax.Array  # (K, F) (dof + 1) / 2, or (K, 1) when it is the same for every column
    weight: jax.Array  # (K, F) 1 / (dof scale2)
    norm_sum: jax.Array  # (K,) log_norm summed over the columns in float64 (complete rows)
    #: shape (1,): each column's ``log1p`` term taken relative to class 0's before the sum
    #: over the columns (a class-free constant; 10,000 columns summed to about 5,000 per
    #: class, whose float32 rounding moved probabilities by 2e-4); shape (0,): not (the joint
    #: density, and blocks of fewer than ``RELATIVE_COLUMNS`` columns). Static, by its shape.
    relative: jax.Array = np.zeros(0)


#: columns whose ``log1p`` terms the Student-t kernel combines into one:
#: :math:`\log(1 + a) + \log(1 + b) = \log(1 + (a + b + ab))`, so a (row, class) pays one
#: ``log1p`` per group instead of per column (XLA:CPU, 4,096 rows x 20 classes x 100
#: columns: 15 -> 8.4 ms float32, 32 -> 9.8 ms float64)
LOG1P_GROUP = 4
#: per dtype, the largest ``u`` a combined group may hold: ``(1 + u)**LOG1P_GROUP`` stays
#: finite (float32's 3.4e38, float64's 1.8e308); a chunk with a larger bound takes one
#: ``log1p`` per column
_GROUP_LIMIT = {np.dtype(np.float32): 1e7, np.dtype(np.float64): 1e60}


def _relative(terms_of, table: StudentT):
    """``(n, K, w)`` terms ``terms_of(classes)`` less class 0's where ``table.relative`` (see
    :class:`StudentT`). Class 0's are computed apart, ``(n, 1, w)``: a slice of the full
    terms made XLA materialise them (the exact predictive ran 2x slower)."""
    if table.relative.shape[0] == 0:
        return terms_of(slice(None))
    return terms_of(slice(None)) - terms_of(slice(0, 1))


def _log1p_sum(u_of, f: int, table: StudentT, x) -> jax.Array:
    r"""``(n, K)``: :math:`\sum_j c_k \log(1 + u_j)` over ``f`` columns (in a wide block each
    column less class 0's, :func:`_relative`), ``u_of(lo, hi, classes)`` giving columns
    ``lo:hi`` of ``u`` ``(n, K, hi - lo)`` for those classes. The columns are taken in
    ``LOG1P_GROUP`` slabs of ``f // LOG1P_GROUP``, combined entry by entry as
    :math:`v \leftarrow v + b + vb` (every term non-negative, so each step rounds once,
    relatively) before one ``log1p``; the last ``f % LOG1P_GROUP`` columns are added alone.
    A chunk where a group's product could overflow (a bound from the column maxima of
    ``|x|``) takes one ``log1p`` per column."""
    width = f // LOG1P_GROUP

    coef = table.coef[:, 0][:, None]  # (K, 1): one per class

    def per_column(_):
        return jnp.sum(_relative(lambda k: coef[k] * jnp.log1p(u_of(0, f, k)), table), axis=-1)

    if width == 0:
        return per_column(None)

    def combined(k):
        v = u_of(0, width, k)
        for g in range(1, LOG1P_GROUP):
            b = u_of(g * width, (g + 1) * width, k)
            v = v + b + v * b
        return coef[k] * jnp.log1p(v)

    def grouped(_):
        total = jnp.sum(_relative(combined, table), axis=-1)
        if f > LOG1P_GROUP * width:
            total = total + jnp.sum(_relative(
                lambda k: coef[k] * jnp.log1p(u_of(LOG1P_GROUP * width, f, k)), table), axis=-1)
        return total

    dtype = table.loc.dtype
    top = jnp.max(jnp.where(jnp.isnan(x), 0.0, jnp.abs(x)), axis=0).astype(dtype)
    bound = jnp.max((top + jnp.abs(table.loc)) ** 2 * table.weight)
    return jax.lax.cond(bound <= _GROUP_LIMIT[np.dtype(dtype)], grouped, per_column, None)


#: from this many columns the Student-t's terms are summed relative to class 0's
#: (:class:`StudentT`): below it their sum's float32 rounding stays under about 1e-5 per class
#: (terms near 1 per column), and the (rows, 1, columns) pass it costs is saved (the exact
#: predictive took 1.4-1.7x longer on 100 columns)
RELATIVE_COLUMNS = 1024
#: the Student-t kernel's float32 rounding per (row, class), in float32 epsilons times the
#: size of its ``log1p`` terms' sum (``Gaussian.score_rounding``): each term carries about
#: 3 epsilons relative (the input, the square, the product, ``log1p``). Measured against
#: float64 on 20 to 2,000 columns (rows near the classes, 30 to 1e5 standard deviations out,
#: pooled or not): a log-odds error up to 2.34 epsilons times the two classes' sums, or 2.3
#: times their root sum of squares in a wide block; 2.5 per class
STUDENT_T_ROUNDING = 2.5
#: the same, finer, where that bound is large: ``STUDENT_T_SPREAD`` epsilons times the terms'
#: root sum of squares (their own roundings, independent) plus ``STUDENT_T_SUM`` times their
#: sum (the accumulation). On the same cases the log-odds error stays within 0.73 of it, and
#: 1,000 standardised columns (true error 2-3e-5) are no longer refused
STUDENT_T_SPREAD, STUDENT_T_SUM = 3.0, 1.25
#: float32 inputs carry about this relative rounding; a class whose spread is below
#: ``FLOAT32_SPREAD`` times it (relative to its distance from the shift) is refused
_EPS32 = float(np.finfo(np.float32).eps)
FLOAT32_SPREAD = 1e3
#: at fit, only a spread within this many float32 roundings of the values is refused
FIT_SPREAD = 4.0
#: a class variance below this is refused in float32: squares under float32's smallest normal
#: number (1.2e-38) are flushed to zero (values near 1e-19 lost 24% of their variance), and
#: above it only deviations within 1e-3 standard deviations are lost
TINY_VARIANCE = 1e6 * float(np.finfo(np.float32).tiny)
#: the expanded (matmul) Gaussian scores are used while float32's rounding bound on their terms
#: near a class stays below this (standardised data with 50 columns: about 1e-5); the direct
#: form only serves tables where they would cancel (a narrow class far from the rest)
EXPANDED_ROUNDING = 1e-4


def _check_resolution(offset: np.ndarray, sd: np.ndarray, center: np.ndarray) -> None:
    """Refuse (``Float32Unrepresentable``) a class whose spread float32 cannot resolve at its
    distance from the centre the host subtracts: the values reach the kernel rounded to
    ``_EPS32 * |x - centre|``, which must stay far below the class's standard deviation."""
    if float64_mode():
        return
    with np.errstate(invalid="ignore"):
        bad = np.isfinite(offset) & (sd > 0) & (sd < FLOAT32_SPREAD * _EPS32 * np.abs(offset))
    if bad.any():
        k, j = map(int, np.argwhere(bad)[0])
        raise Float32Unrepresentable(
            j, f"class #{k} has a standard deviation of {sd[k, j]:.3g} around "
               f"{offset[k, j] + center[j]:.9g}, below float32's resolution at that distance "
               f"from the other classes")


def _check_tiny(var: np.ndarray) -> None:
    """Refuse (``Float32Unrepresentable``) a class variance below ``TINY_VARIANCE``: the
    score kernel squares deviations of that size, and float32 flushes those squares to zero.
    A float32 fit takes such a class's statistics in float64 (``Gaussian.float32_inexact``
    sends the pass to ``_kernels.stream_suff_stats``'s float64 redo; a weighted fit sums in
    float64 anyway, ``fitted.weighted_sums_need_float64``), so the scores are refused here
    (ML on values near 1e-19 was 0.03 off)."""
    if float64_mode():
        return
    with np.errstate(invalid="ignore"):
        tiny = (var > 0) & (var < TINY_VARIANCE)
    if tiny.any():
        k, j = map(int, np.argwhere(tiny)[0])
        raise Float32Unrepresentable(
            j, f"class #{k} has a variance of {var[k, j]:.3g}, so small that float32 flushes "
               f"the squares of its deviations to zero")


class Gaussian(Family):
    """Real-valued columns, each Gaussian per class with a Normal-Gamma prior.

    Parameters
    ----------
    loc, kappa, shape, rate : float or array-like of shape (n_columns,)
        Normal-Gamma prior: precision ~ Gamma(shape, rate), mean | precision ~
        Normal(loc, 1 / (kappa * precision)). Defaults 0, 1e-3, 1, 0.01 (see module docs).
    pooled : bool, default=False
        Share one variance per column across the classes instead of one per class and column.
    """

    name = "gaussian"
    param_names = ("mean", "precision")
    nonnegative_stats = ("count", "m2")
    stated_tables = True
    density_label = "Gaussian"
    sklearn_view = "gaussian"
    value_checks = {}
    stats_type = GaussianStats
    params_type = GaussianParams
    host_numeric = True
    _hyper = ("loc", "kappa", "shape", "rate", "pooled")

    def __init__(self, loc=0.0, kappa=1e-3, shape=1.0, rate=0.01, pooled=False):
        self.loc = loc
        self.kappa = kappa
        self.shape = shape
        self.rate = rate
        self.pooled = pooled

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        return numeric_block(values, schema, "Gaussian", dtype)

    def prior(self, schema: Schema) -> NormalGammaPrior:
        f = len(schema.columns)
        return NormalGammaPrior(
            broadcast_hyper(self.loc, f, "loc", "Gaussian", columns=schema.columns, positive=False),
            broadcast_hyper(self.kappa, f, "kappa", "Gaussian", columns=schema.columns),
            broadcast_hyper(self.shape, f, "shape", "Gaussian", columns=schema.columns),
            broadcast_hyper(self.rate, f, "rate", "Gaussian", columns=schema.columns,
                            squared=True),
            np.asarray(bool(self.pooled)),
        )

    # ------------------------------------------------------------------ numeric side
    @staticmethod
    def suff_stats(x, resp, n_levels=None) -> GaussianStats:
        return jax.lax.cond(has_missing(x), Gaussian._suff_stats_observed,
                            Gaussian._suff_stats_complete, x, resp)

    @staticmethod
    def _suff_stats_complete(x, resp) -> GaussianStats:
        x = x.astype(resp.dtype)
        count = jnp.broadcast_to(jnp.sum(resp, axis=0)[:, None], (resp.shape[1], x.shape[1]))
        return Gaussian._centred_stats(resp, x, count, None)

    @staticmethod
    def _suff_stats_observed(x, resp) -> GaussianStats:
        observed = ~jnp.isnan(x)
        obs = observed.astype(resp.dtype)
        count = resp.T @ obs
        return Gaussian._centred_stats(resp, jnp.where(observed, x, 0.0).astype(resp.dtype),
                                       count, obs)

    @staticmethod
    def _centred_stats(resp, x, count, obs) -> GaussianStats:
        """One chunk's count, mean and centred squares, centred per class: a first pass gives
        the class means, the squares are of the deviations from the row's own class mean
        (never one centre for all classes, whose squares would cancel), and a second sum
        corrects the first mean's rounding. The chunk form's ``mean`` is that pair, stacked
        ``(2, K, F)``, added in float64 by ``finish_stats``."""
        safe = jnp.where(count > 0, count, 1.0)
        mean0 = (resp.T @ x) / safe
        hot = (resp > 0).astype(resp.dtype)  # each row's own class, unweighted
        dev = x - hot @ mean0
        if obs is not None:
            dev = dev * obs
        mean_dev = (resp.T @ dev) / safe
        m2 = resp.T @ (dev * dev) - count * mean_dev**2
        mean = jnp.where(count > 0, jnp.stack([mean0, mean_dev]), 0.0)
        return GaussianStats(count, mean, jnp.maximum(m2, 0.0))

    @staticmethod
    def label_stats(x, labels, n_levels=None) -> GaussianStats:
        """:meth:`suff_stats`' chunk form, summed by label: the same two passes (class means,
        then each row's deviation from its own class mean and their squares), each one
        scatter-add of the columns side by side, and the class means gathered per row. No
        ``(rows, classes)`` array, so the cost does not grow with rows x classes."""
        return jax.lax.cond(has_missing(x),
                            lambda v: Gaussian._label_stats(v, labels, True),
                            lambda v: Gaussian._label_stats(v, labels, False), x)

    @staticmethod
    def _label_stats(x, labels, missing: bool) -> GaussianStats:
        x = x.astype(labels.dtype)
        f = x.shape[1]
        if missing:
            observed = ~jnp.isnan(x)
            x = jnp.where(observed, x, 0.0)
            first = labels.sum(jnp.concatenate([observed.astype(x.dtype), x], axis=1))
            count = first[:, :f]
        else:
            first = labels.sum(jnp.concatenate([jnp.ones_like(x[:, :1]), x], axis=1))
            count = jnp.broadcast_to(first[:, :1], (first.shape[0], f))
        safe = jnp.where(count > 0, count, 1.0)
        mean0 = first[:, -f:] / safe
        dev = x - labels.gather(mean0)
        if missing:
            dev = jnp.where(observed, dev, 0.0)
        second = labels.sum(jnp.concatenate([dev, dev * dev], axis=1))
        mean_dev = second[:, :f] / safe
        m2 = second[:, f:] - count * mean_dev**2
        mean = jnp.where(count > 0, jnp.stack([mean0, mean_dev]), 0.0)
        return GaussianStats(count, mean, jnp.maximum(m2, 0.0))

    @staticmethod
    def fit_shift(first: np.ndarray) -> np.ndarray:
        """Mid-range of each column in ``first`` (``_kernels.shift_sample``: the first 64 rows
        and a row with each column's first observed value; 0 for a column with none): any
        value inside the data's range keeps the float32 deviations exact enough, the
        per-class centring does the rest."""
        first = np.asarray(first, dtype=np.float64)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
            mid = 0.5 * (np.nanmin(first, axis=0) + np.nanmax(first, axis=0))
        return np.where(np.isfinite(mid), mid, 0.0)

    @staticmethod
    def finish_stats(stats: GaussianStats, shift) -> GaussianStats:
        mean = stats.mean[0] + stats.mean[1] if stats.mean.ndim == 3 else stats.mean
        if shift is not None:
            mean = np.where(stats.count > 0, mean + shift, 0.0)
        return GaussianStats(stats.count, mean, stats.m2)

    @staticmethod
    def float32_inexact(stats: GaussianStats, shift) -> bool:
        """A class whose variance float32 flushes to zero (``TINY_VARIANCE``), or whose spread
        is within a few float32 steps of its values' rounding at fit (``FIT_SPREAD``): its
        centred squares are mostly rounding. (Spreads float32 resolves only coarsely are
        refused later, when a method's scores would depend on them: ``kernel_table``.)"""
        count = np.asarray(stats.count)
        if shift is None or not (count > 1).any():
            return False
        with np.errstate(divide="ignore", invalid="ignore"):
            var = np.asarray(stats.m2) / count
            sd = np.sqrt(var)
            far = np.abs(np.asarray(stats.mean) - shift)
            tiny = (var > 0) & (var < TINY_VARIANCE)
            coarse = (sd > 0) & (sd < FIT_SPREAD * _EPS32 * far)
        return bool(np.any((count > 1) & (tiny | coarse)))

    @staticmethod
    def merge_stats(a: GaussianStats, b: GaussianStats) -> GaussianStats:
        """Chan, Golub and LeVeque's pairwise update of count, mean and centred squares."""
        xp = xp_of(a, b)
        count = a.count + b.count
        safe = xp.where(count > 0, count, 1.0)
        delta = b.mean - a.mean
        # the weight first: merging into empty statistics gives ``b.mean`` bit for bit
        mean = a.mean + delta * (b.count / safe)
        m2 = a.m2 + b.m2 + delta**2 * a.count * b.count / safe
        return GaussianStats(count, mean, m2)

    @staticmethod
    def remove_stats(a: GaussianStats, b: GaussianStats) -> GaussianStats:
        r"""The inverse of :meth:`merge_stats`: with :math:`n' = n - w`,
        :math:`\bar x' = (n\bar x - w\bar x_b)/n'` and :math:`M_2' = M_2 - M_{2b} - (\bar x_b -
        \bar x)^2\, n w / n'` (empty statistics where :math:`n' = 0`). The difference
        cancels where the rest has (almost) no spread: a result within float rounding of
        :math:`M_2` is the exact zero it stands for (e.g. two values, one left out)."""
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
        return GaussianStats(count, mean, m2)

    @staticmethod
    def _class_terms(prior: NormalGammaPrior, stats: GaussianStats):
        kappa_n = prior.kappa + stats.count
        loc_n = (prior.kappa * prior.loc + stats.count * stats.mean) / kappa_n
        spread = 0.5 * stats.m2 + (prior.kappa * stats.count * (stats.mean - prior.loc) ** 2
                                   / (2.0 * kappa_n))
        return kappa_n, loc_n, spread

    @staticmethod
    def posterior(prior: NormalGammaPrior, stats: GaussianStats) -> NormalGammaPrior:
        jnp = xp_of(prior, stats)  # noqa: F811 -- NumPy on the host (float64), else JAX
        kappa_n, loc_n, spread = Gaussian._class_terms(prior, stats)
        shape_k = prior.shape + 0.5 * stats.count
        rate_k = prior.rate + spread
        shape_pooled = prior.shape + 0.5 * stats.count.sum(axis=0)
        rate_pooled = prior.rate + spread.sum(axis=0)
        shape_n = jnp.where(prior.pooled, jnp.broadcast_to(shape_pooled, shape_k.shape), shape_k)
        rate_n = jnp.where(prior.pooled, jnp.broadcast_to(rate_pooled, rate_k.shape), rate_k)
        return NormalGammaPrior(loc_n, kappa_n, shape_n, rate_n, prior.pooled)

    @staticmethod
    def estimate(prior: NormalGammaPrior, stats: GaussianStats, method: str) -> GaussianParams:
        jnp = xp_of(prior, stats)  # noqa: F811 -- NumPy on the host (float64), else JAX
        if method == "ml":
            var_k = stats.m2 / stats.count
            var_pooled = stats.m2.sum(axis=0) / stats.count.sum(axis=0)
            # a class with no observed value has no ML mean (0/0), pooled variance or not
            mean = jnp.where(stats.count > 0, stats.mean, jnp.nan)
            precision = 1.0 / jnp.where(prior.pooled, var_pooled, var_k)
        else:
            post = Gaussian.posterior(prior, stats)
            mean = post.loc
            if method == "mean":
                precision = post.shape / post.rate
            else:
                n_classes = stats.count.shape[0]
                extra = jnp.where(prior.pooled, n_classes / 2.0 - 1.0, -0.5)
                precision = (post.shape + extra) / post.rate
        total = stats.count.sum(axis=0)
        weights = stats.count / jnp.where(total > 0, total, 1.0)  # 1e-300 underflows in f32
        center = jnp.sum(weights * jnp.where(jnp.isfinite(mean), mean, 0.0), axis=0)
        return GaussianParams(mean, precision, center)

    @staticmethod
    def kernel_table(table, exact: bool, joint: bool):
        """The table relative to a per-column centre, which the host subtracts from the raw
        values in float64 (a Gaussian's scores do not change under a common shift, so this
        holds for the joint density too). The posterior predictive's Student-t normalisers,
        differences of large log-Gamma values, are computed here in float64."""
        if exact:
            loc, kappa, a, b = (np.asarray(v, dtype=np.float64) for v in table[:4])
            shift = kernel_shift(np.sum(kappa * loc, axis=0) / np.sum(kappa, axis=0))
            dof = 2.0 * a
            scale2 = b * (kappa + 1.0) / (a * kappa)
            log_norm = (sp_gammaln((dof + 1) / 2) - sp_gammaln(dof / 2)
                        - 0.5 * np.log(dof * scale2) - 0.5 * np.log(np.pi) + 0.5 * LOG_2PI)
            _check_resolution(loc - shift, np.sqrt(scale2), shift)
            _check_tiny(scale2)
            if not joint:  # relative to the largest per column (10,000 columns: the sum of
                log_norm = log_norm - reference(log_norm)  # about 9,000 rounded by 5e-4)
            coef = 0.5 * (dof + 1.0)
            if np.all(coef == coef[:, :1]):  # one per class (no missing value at fit, one
                coef = coef[:, :1]  # prior shape): the kernel combines its log1p terms
            relative = np.ones(0 if joint or loc.shape[1] < RELATIVE_COLUMNS else 1)
            return StudentT(loc - shift, dof, scale2, log_norm, coef, 1.0 / (dof * scale2),
                            log_norm.sum(axis=1), relative), shift
        mean, precision, center = (np.asarray(v, dtype=np.float64) for v in table)
        center = kernel_shift(center)
        mc = mean - center
        with np.errstate(divide="ignore"):
            variance = 1.0 / precision
        _check_resolution(mc, np.sqrt(variance), center)
        _check_tiny(variance)
        # the expanded form's terms lam x^2 and lam mu^2 are about lam mu^2 near a class: where
        # they would cancel beyond float32's resolution, the direct form instead
        eps = 0.0 if float64_mode() else _EPS32
        with np.errstate(invalid="ignore"):
            bound = eps * np.max(np.sum(np.where(np.isfinite(mc), 2 * precision * mc * mc, 0.0),
                                        axis=1))
        if bound > EXPANDED_ROUNDING:
            return GaussianDirect(mc, precision), center
        if joint:  # float64 only (scoring.TableScorer): every term kept
            return GaussianParams(mc, precision, np.zeros_like(center)), center
        with np.errstate(invalid="ignore", divide="ignore"):
            terms = (-0.5 * precision, precision * mc,
                     0.5 * np.log(precision) - 0.5 * precision * mc * mc)
        # per column, relative to its widest class (the smallest terms): a class-free constant
        widest = np.argmin(np.where(np.isfinite(precision), precision, np.inf), axis=0)
        quad, lin, const = (t - t[widest, np.arange(t.shape[1])] for t in terms)
        return GaussianExpanded(quad, lin, const, const.sum(axis=1)), center

    @staticmethod
    def score_rounding(table, x, scores) -> jax.Array:
        r"""Bounds on the float32 rounding of the kernel's scores, per row.

        * Student-t (the posterior predictive): per (row, class),
          :data:`STUDENT_T_ROUNDING` epsilons times the ``log1p`` terms' sum (recovered from
          the ``scores``: the normalisers less the sum), or in a wide block, whose sum is
          relative to class 0's, times that sum plus its terms' root sum of squares and class
          0's; plus the scores' own rounding. Rows far out (1e3 standard deviations, pooled
          variance) moved probabilities by 2e-3 without it.

        * Expanded form: per (row, class), twice float32's epsilon times
          :math:`\sqrt{3\sum_j (x_j^4 q_{kj}^2 + x_j^2 l_{kj}^2 + c_{kj}^2)}`, a bound on
          :math:`\sqrt{\sum_j (x_j^2|q_{kj}| + |x_j l_{kj}| + |c_{kj}|)^2}` (the products' and
          the input's roundings are independent, as in ``Multinomial.score_rounding``), plus
          the class sum's single rounding. Tried first with each column's largest table
          entries over the classes (one fused pass, ``(n,)`` broadcast to ``(n, K)``); a
          chunk above ``COARSE_ROUNDING`` takes the per-class product.
        * Direct form (a narrow class far from the others): per (row, class), the terms
          :math:`\lambda d^2/2` rounded, and the input's and the table's roundings
          (:math:`\epsilon(|x| + |m|)/2` each) times the slope :math:`\lambda |d|`, root sum of
          squares over the columns: ``(n, K)``, which the kernel weighs by the class
          probabilities (a class with no probability may be off without moving any)."""
        if float64_mode() or not isinstance(table, (GaussianExpanded, GaussianDirect,
                                                    StudentT)):
            return jnp.zeros(x.shape[0])
        eps = jnp.finfo(jnp.float32).eps
        if isinstance(table, StudentT):
            return Gaussian._student_t_rounding(table, x, scores)
        if isinstance(table, GaussianExpanded):
            x0 = jnp.nan_to_num(x, nan=0.0).astype(table.quad.dtype)
            x2 = x0 * x0
            observed = (~jnp.isnan(x)).astype(x2.dtype)
            q2, l2, c2 = (t * t for t in table[:3])
            sum_once = eps * jnp.abs(table.const_sum)
            # first with each column's largest term over the classes (one fused pass); only a
            # chunk where that is not small enough pays the per-class bound (a product as
            # large as the scores'), which the class weighting needs for rows far from every
            # class
            one = 2 * eps * jnp.sqrt(3 * jnp.sum(
                x2 * x2 * jnp.max(q2, axis=0) + x2 * jnp.max(l2, axis=0)
                + observed * jnp.max(c2, axis=0), axis=1)) + jnp.max(sum_once)

            def per_class(_):
                features = jnp.concatenate([x2 * x2, x2, observed], axis=1)
                squares = jnp.concatenate([q2, l2, c2], axis=1)
                return 2 * eps * jnp.sqrt(3 * (features @ squares.T)) + sum_once

            return jax.lax.cond(
                jnp.max(one) <= COARSE_ROUNDING,
                lambda _: jnp.broadcast_to(one[:, None], (x.shape[0], q2.shape[0])),
                per_class, None)
        observed = ~jnp.isnan(x)[:, None, :]
        x0 = jnp.nan_to_num(x, nan=0.0).astype(jnp.float32)
        d = x0[:, None, :] - table.mean
        lam = table.precision
        slope = lam * jnp.abs(d) * 0.5 * (jnp.abs(x0)[:, None, :] + jnp.abs(table.mean)
                                          + jnp.abs(d))
        term = jnp.where(observed, slope + lam * d * d + 0.5 * jnp.abs(jnp.log(lam)), 0.0)
        return 2 * eps * jnp.sqrt(jnp.sum(term * term, axis=-1))

    @staticmethod
    def _student_t_rounding(table: StudentT, x, scores) -> jax.Array:
        """``(n, K)`` float32 rounding bound of the Student-t kernel's ``scores`` (see
        ``score_rounding``)."""
        eps = jnp.finfo(jnp.float32).eps

        def observed_norms(x):
            return (~jnp.isnan(x)).astype(table.log_norm.dtype) @ table.log_norm.T

        norm = jax.lax.cond(has_missing(x), observed_norms,
                            lambda x: jnp.broadcast_to(table.norm_sum, scores.shape), x)
        size = jnp.abs(norm - scores)  # the log1p terms' sum (relative to class 0's if wide)
        own = 0.5 * eps * (jnp.abs(norm) + jnp.abs(scores))
        if table.relative.shape[0]:
            size = size + 2 * Gaussian._student_t_spread(table, x)[:, None]
            return STUDENT_T_ROUNDING * eps * size + own
        bound = STUDENT_T_ROUNDING * eps * size + own

        def finer(_):  # both bound the rounding: the smaller holds
            spread = Gaussian._student_t_spread(table, x)[:, None]
            return jnp.minimum(bound, eps * (STUDENT_T_SPREAD * spread + STUDENT_T_SUM * size)
                               + own)

        # the spread costs a log1p per (row, column): only where the first bound is large
        return jax.lax.cond(jnp.max(bound) <= COARSE_ROUNDING, lambda _: bound, finer, None)

    @staticmethod
    def _student_t_spread(table: StudentT, x) -> jax.Array:
        r"""``(n,)`` a bound on every class's root sum of squares of its ``log1p`` terms
        :math:`c_{kj}\log(1 + (x_j - m_{kj})^2 w_{kj})`, from each column's largest
        :math:`c`, :math:`|m|` and :math:`w` over the classes: one ``log1p`` per (row,
        column), where the terms themselves cost one per (row, class, column) (the exact
        terms' squares took the wide Student-t from 52-60 to 119-130 ms on 3,000 x 2,000)."""
        observed = ~jnp.isnan(x)
        x0 = jnp.where(observed, x, 0.0).astype(table.loc.dtype)
        coef = jnp.broadcast_to(table.coef, table.loc.shape)
        reach = jnp.abs(x0) + jnp.max(jnp.abs(table.loc), axis=0)
        term = jnp.max(coef, axis=0) * jnp.log1p(reach * reach * jnp.max(table.weight, axis=0))
        return jnp.sqrt(jnp.sum(jnp.where(observed, term * term, 0.0), axis=1))

    @staticmethod
    def log_likelihood(params, x, n_levels=None) -> jax.Array:
        if isinstance(params, GaussianDirect):  # the kernel's form (``kernel_table``)
            return Gaussian._direct(params, x)
        if isinstance(params, GaussianExpanded):
            return Gaussian._expanded(params, x)
        mc = params.mean - params.center
        lam = params.precision
        per_column = 0.5 * jnp.log(lam) - 0.5 * lam * mc * mc  # (K, F)

        # sum_j o_ij [log(lam)/2 - lam (x - mu)^2 / 2] expanded into matmuls
        def complete(x):
            xc = (x - params.center).astype(params.mean.dtype)
            return (-0.5 * (xc * xc) @ lam.T + xc @ (lam * mc).T
                    + jnp.sum(per_column, axis=1))

        def observed_only(x):
            observed = ~jnp.isnan(x)
            xc = jnp.where(observed, x - params.center, 0.0).astype(params.mean.dtype)
            return (-0.5 * (xc * xc) @ lam.T + xc @ (lam * mc).T
                    + observed.astype(xc.dtype) @ per_column.T)

        return jax.lax.cond(has_missing(x), observed_only, complete, x)

    @staticmethod
    def _expanded(params: GaussianExpanded, x) -> jax.Array:
        """The shifted expanded form: two matmuls and the constants."""
        def complete(x):
            xc = x.astype(params.quad.dtype)
            return (xc * xc) @ params.quad.T + xc @ params.lin.T + params.const_sum

        def observed_only(x):
            observed = ~jnp.isnan(x)
            xc = jnp.where(observed, x, 0.0).astype(params.quad.dtype)
            return ((xc * xc) @ params.quad.T + xc @ params.lin.T
                    + observed.astype(xc.dtype) @ params.const.T)

        return jax.lax.cond(has_missing(x), observed_only, complete, x)

    @staticmethod
    def _direct(params: GaussianDirect, x) -> jax.Array:
        """The log likelihood term by term (rows x classes x columns, fused by XLA)."""
        observed = ~jnp.isnan(x)
        d = jnp.where(observed, x, 0.0).astype(params.mean.dtype)[:, None, :] - params.mean
        lam = params.precision
        log_lik = 0.5 * jnp.log(lam) - 0.5 * lam * d * d
        return jnp.sum(jnp.where(observed[:, None, :], log_lik, 0.0), axis=-1)

    @staticmethod
    def log_predictive(posterior, x, n_levels=None) -> jax.Array:
        if isinstance(posterior, StudentT):  # the kernel's form (``kernel_table``)
            return Gaussian._student_t(posterior, x)
        observed = ~jnp.isnan(x)
        x0 = jnp.where(observed, x, 0.0)[:, None, :]
        a, b, kappa, loc = posterior.shape, posterior.rate, posterior.kappa, posterior.loc
        dof = 2.0 * a
        scale2 = b * (kappa + 1.0) / (a * kappa)
        z2 = (x0 - loc) ** 2 / scale2  # (n, K, F)
        log_t = (gammaln((dof + 1) / 2) - gammaln(dof / 2) - 0.5 * jnp.log(dof * scale2)
                 - 0.5 * (dof + 1) * jnp.log1p(z2 / dof) + 0.5 * LOG_2PI - 0.5 * jnp.log(jnp.pi))
        # the Student-t normaliser has -log(pi)/2; the class-free -log(2 pi)/2 is added back
        # in log_normalizer, so the two Gaussian functions share one normaliser
        return jnp.sum(jnp.where(observed[:, None, :], log_t, 0.0), axis=-1)

    @staticmethod
    def _student_t(table: StudentT, x) -> jax.Array:
        """``(n, K)`` Student-t log densities summed over the observed columns: one fused
        (rows, classes, columns) expression reduced over the columns (XLA keeps it out of
        memory); a chunk with missing values weights each column by its observed flag
        (``log1p(0) = 0`` where missing). With one coefficient per class (``coef`` of shape
        ``(K, 1)``) the ``log1p`` terms are combined first (:func:`_log1p_sum`)."""
        def log1p_sum(u_of):
            if table.coef.shape[1] == 1:
                return _log1p_sum(u_of, x.shape[1], table, x)
            return jnp.sum(_relative(lambda k: table.coef[k] * jnp.log1p(
                u_of(0, x.shape[1], k)), table), axis=-1)

        def complete(x):
            def u_of(lo, hi, k):
                d = x[:, lo:hi].astype(table.loc.dtype)[:, None, :] - table.loc[k, lo:hi]
                return d * d * table.weight[k, lo:hi]

            return table.norm_sum - log1p_sum(u_of)

        def observed_only(x):
            observed = ~jnp.isnan(x)
            obs = observed.astype(table.loc.dtype)
            x0 = jnp.where(observed, x, 0.0).astype(obs.dtype)

            def u_of(lo, hi, k):
                d = x0[:, None, lo:hi] - table.loc[k, lo:hi]
                return d * d * table.weight[k, lo:hi] * obs[:, None, lo:hi]

            return obs @ table.log_norm.T - log1p_sum(u_of)

        return jax.lax.cond(has_missing(x), observed_only, complete, x)

    @staticmethod
    def log_normalizer(x) -> jax.Array:
        return -0.5 * LOG_2PI * jnp.sum(~jnp.isnan(x), axis=1)

    @staticmethod
    def log_evidence(prior: NormalGammaPrior, stats: GaussianStats) -> jax.Array:
        post = Gaussian.posterior(prior, stats)
        kappa_terms = 0.5 * jnp.sum(jnp.log(prior.kappa) - jnp.log(post.kappa))
        gamma_k = (gammaln(post.shape) - gammaln(prior.shape) + prior.shape * jnp.log(prior.rate)
                   - post.shape * jnp.log(post.rate))
        gamma_terms = jnp.where(prior.pooled, jnp.sum(gamma_k[0]), jnp.sum(gamma_k))
        return kappa_terms + gamma_terms - 0.5 * LOG_2PI * jnp.sum(stats.count)

    @staticmethod
    def describe(params: GaussianParams, schema: Schema, classes) -> dict:
        mean, sd = np.asarray(params.mean), 1.0 / np.sqrt(np.asarray(params.precision))
        return {col: pd.DataFrame({"mean": mean[:, j], "sd": sd[:, j]},
                                  index=pd.Index(classes, name="class"))
                for j, col in enumerate(schema.columns)}

    @staticmethod
    def from_tables(tables: dict, schema: Schema, classes) -> GaussianParams:
        """``tables[column][class]`` is ``(mean, sd)``."""
        pairs = np.array([[tuple(map(float, tables[col][c])) for col in schema.columns]
                          for c in classes])  # (K, F, 2)
        if np.any(pairs[..., 1] <= 0):
            raise ValueError("Gaussian tables: every sd must be positive.")
        mean, precision = pairs[..., 0], pairs[..., 1] ** -2.0
        return GaussianParams(jnp.asarray(mean), jnp.asarray(precision),
                              jnp.asarray(mean.mean(axis=0)))

    # ------------------------------------------------------------------ NumPyro
    @staticmethod
    def sample_params(prior: NormalGammaPrior, n_classes: int, site: str):
        f = prior.loc.shape[-1]
        feature = numpyro.plate(f"{site}_feature", f, dim=-1)
        with feature:
            if bool(prior.pooled):
                precision = numpyro.sample(f"{site}.precision",
                                           dist.Gamma(prior.shape, prior.rate))
                precision = jnp.broadcast_to(precision, (n_classes, f))
        with feature, numpyro.plate("class", n_classes, dim=-2):
            if not bool(prior.pooled):
                precision = numpyro.sample(f"{site}.precision",
                                           dist.Gamma(prior.shape, prior.rate))
            mean = numpyro.sample(f"{site}.mean",
                                  dist.Normal(prior.loc, 1.0 / jnp.sqrt(prior.kappa * precision)))
        return {"mean": mean, "precision": precision}

    @staticmethod
    def observe(params, x, y, site: str, **kw) -> None:
        scale = 1.0 / jnp.sqrt(params["precision"][y])
        if x is None:
            with numpyro.plate("row", y.shape[0], dim=-2), \
                    numpyro.plate(f"{site}_feature", params["mean"].shape[-1], dim=-1):
                numpyro.sample(f"{site}.x", dist.Normal(params["mean"][y], scale))
            return
        observed = ~jnp.isnan(x)
        with numpyro.plate("row", x.shape[0], dim=-2):
            with numpyro.plate(f"{site}_feature", x.shape[1], dim=-1):
                numpyro.sample(f"{site}.x",
                               dist.Normal(params["mean"][y], scale).mask(observed),
                               obs=jnp.where(observed, x, 0.0))

    @staticmethod
    def stats_log_likelihood(sample, stats: GaussianStats) -> jax.Array:
        precision = jnp.broadcast_to(sample["precision"], stats.mean.shape)
        squares = stats.m2 + stats.count * (stats.mean - sample["mean"]) ** 2
        return jnp.sum(0.5 * stats.count * (jnp.log(precision) - LOG_2PI)
                       - 0.5 * precision * squares)

    @staticmethod
    def sample_posterior(rng, posterior: NormalGammaPrior, n: int) -> dict:
        shape, rate = (np.asarray(a, dtype=np.float64) for a in (posterior.shape, posterior.rate))
        if bool(posterior.pooled):
            shape, rate = shape[0], rate[0]
        precision = rng.standard_gamma(np.broadcast_to(shape, (n,) + shape.shape)) / rate
        loc = np.asarray(posterior.loc, dtype=np.float64)
        kappa = np.asarray(posterior.kappa, dtype=np.float64)
        scale = 1.0 / np.sqrt(kappa * np.broadcast_to(precision[:, None] if bool(
            posterior.pooled) else precision, (n,) + loc.shape))
        return {"mean": loc + scale * rng.standard_normal((n,) + loc.shape),
                "precision": precision}

    @staticmethod
    def term_extent(params: GaussianParams) -> tuple:
        r""":math:`\lambda (x - \mu)^2 / 2` and its roundings (``x`` and ``\mu`` each by half an
        epsilon of their magnitude) are at most :math:`\lambda (|x| + |\mu|)^2`; the
        ``log(lam) / 2`` term is far smaller wherever this matters."""
        return params.precision, jnp.abs(params.mean)

    @staticmethod
    def params_from_sample(sample, posterior) -> GaussianParams:
        mean = sample["mean"]
        precision = jnp.broadcast_to(sample["precision"], mean.shape)
        return GaussianParams(mean, precision, jnp.mean(mean, axis=0))

    @staticmethod
    def posterior_log_density(posterior: NormalGammaPrior, params: dict) -> jax.Array:
        shape, rate = posterior.shape, posterior.rate
        if bool(posterior.pooled):
            shape, rate = shape[0], rate[0]
        log_p = jnp.sum(dist.Gamma(shape, rate).log_prob(params["precision"]))
        precision = jnp.broadcast_to(params["precision"], posterior.loc.shape)
        scale = 1.0 / jnp.sqrt(posterior.kappa * precision)
        return log_p + jnp.sum(dist.Normal(posterior.loc, scale).log_prob(params["mean"]))

    @staticmethod
    def posterior_distributions(posterior: NormalGammaPrior) -> dict:
        r"""Each parameter's marginal posterior: :math:`\lambda \sim \mathrm{Gamma}(a', b')`
        and :math:`\mu \sim t_{2a'}(m', b'/(a'\kappa'))` (not independent: the joint density
        is :meth:`posterior_log_density`'s)."""
        shape, rate = posterior.shape, posterior.rate
        if bool(posterior.pooled):
            shape, rate = shape[0], rate[0]
        scale = jnp.sqrt(rate / (shape * posterior.kappa))
        return {"mean": dist.StudentT(2.0 * shape, posterior.loc, scale),
                "precision": dist.Gamma(shape, rate)}

    @staticmethod
    def density_scale(table: GaussianParams, j: int) -> tuple:
        sd = 1.0 / np.sqrt(np.broadcast_to(np.asarray(table.precision), np.shape(table.mean)))
        return np.asarray(table.mean, dtype=np.float64)[:, j], float(np.max(sd[:, j]))

    def linear_terms(self, params: GaussianParams, schema: Schema) -> tuple | None:
        r"""Pooled: :math:`x\lambda\mu_k - \lambda\mu_k^2/2` (the :math:`-\lambda x^2/2` is
        the same for all classes); per-class precisions need :math:`x^2` terms: None."""
        if not np.all(np.asarray(params.precision) == np.asarray(params.precision)[:1]):
            return None
        lam = np.broadcast_to(np.asarray(params.precision, dtype=np.float64),
                              np.shape(params.mean))
        mu = np.asarray(params.mean, dtype=np.float64)
        return lam * mu, [str(c) for c in schema.columns], np.sum(-0.5 * lam * mu * mu, axis=1)

    def dependence_units(self, x, prior: dict, schema: Schema) -> list:
        return column_units("gaussian", x, prior, schema)

    def param_dims(self, prior: NormalGammaPrior, schema: Schema) -> dict:
        # a pooled precision is one per column, shared by the classes
        return {"mean": ("class", "feature"),
                "precision": ("feature",) if bool(prior.pooled) else ("class", "feature")}

    @staticmethod
    def log_prior_at(prior: NormalGammaPrior, params: GaussianParams, method: str,
                     n_classes: int) -> float:
        a, b = np.asarray(prior.shape), np.asarray(prior.rate)
        kappa, loc = np.asarray(prior.kappa), np.asarray(prior.loc)
        lam = params.precision
        quad = -0.5 * float(np.sum(kappa * lam * (params.mean - loc) ** 2))
        if bool(prior.pooled):  # one Gamma per column and K normals on the means
            lam1 = lam[0]
            c = (a - 1.0 + n_classes / 2.0) if method == "map" else a
            return pseudo_log(c, np.log(lam1)) - float(np.sum(b * lam1)) + quad
        # Normal-Gamma per class: (a - 1/2) log lambda under MAP, a under the mean
        c = a - 0.5 if method == "map" else a
        return pseudo_log(c, np.log(lam)) - float(np.sum(b * lam)) + quad
