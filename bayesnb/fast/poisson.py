"""The fast form of :class:`~bayesnb.families.Poisson`: chunk statistics float32 cannot
spoil, score tables relative to a reference class around an integer centre with their float32
rounding bound, the exact (negative binomial) predictive as indicator products plus a float64
host tail, and the ``scipy.sparse`` paths."""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..families._base import float64_mode, has_missing, log_matmul
from ..families.poisson import GammaPrior, Poisson, PoissonParams, PoissonStats
from . import FastForm, _sparse, register
from ._buckets import leading
from ._counts import coefficient_rows, finish_coefficient, refine_coefficient
from ._float32 import (
    COARSE_ROUNDING,
    finish_class_sums,
    label_class_sums,
    reference,
    sum_rounding,
)
from ._steps import step_sums


class NegBinShifted(NamedTuple):
    r"""The posterior predictive as the score kernel reads it (``PoissonFast.kernel_table``):
    :math:`\log p(x) + \log x! = x\,(\log a' - \log(1 + b')) + h(a', x) + a'\log\frac{b'}{b'+1}`
    with :math:`h(a, x) = \log\Gamma(a + x) - \log\Gamma(a) - x\log a`: for integer counts up to
    the table's ``S`` steps, :math:`h` is a sum of indicator products with ``steps``
    (``_steps.step_sums``), and the host adds it in float64 for larger counts
    (``host_tail``). The per-class terms are relative to a reference class (float64) unless
    the table serves the joint density."""

    shape: jax.Array  # (K, F) a' (float64 on the host, for the tail)
    slope: jax.Array  # (K, F) log a' - log(1 + b'), minus the column's reference
    offset: jax.Array  # (K, F) a' log(b' / (b' + 1)), minus the column's reference
    steps: jax.Array  # ((S - 1) F, K) log(1 + t / a'), t = 1 .. S - 1 (``_sparse.step_tables``)
    center: jax.Array  # (F,) an integer count the slope multiplies x minus (see PoissonShifted)
    rounding: jax.Array  # (2, F) the scores' rounding bound per |x - c| and per observed value
    bias: jax.Array  # (K,) the offsets' sum over the columns (float64), for complete rows


class PoissonShifted(NamedTuple):
    r"""The plug-in table as the score kernel reads it: :math:`(x - c)(\log\lambda_k -
    \log\lambda_{ref}) + [c(\log\lambda_k - \log\lambda_{ref}) - (\lambda_k - \lambda_{ref})]`
    with the bracket in float64. ``c`` is an integer near the rates, so ``x - c`` is exact in
    float32 for counts below 2**24 and the products stay small: without it the two large
    parts cancel in float32 sums."""

    slope: jax.Array  # (K, F)
    offset: jax.Array  # (K, F)
    center: jax.Array  # (F,)
    rounding: jax.Array  # (2, F) the scores' rounding bound per |x - c| and per observed value
    bias: jax.Array  # (K,) the offsets' sum over the columns (float64), for complete rows


def _center(rate: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """Per column an integer near the classes' rates (0 where a slope is infinite or the
    rates exceed float32's exact integers)."""
    center = np.round(np.mean(rate, axis=0))
    ok = np.all(np.isfinite(slope), axis=0) & np.isfinite(center) & (center < 2.0**24)
    return np.where(ok, center, 0.0)


def _offsets(table, observed, obs) -> jax.Array:
    """``obs @ offset.T``; for a complete row the float64 sum ``bias`` (one rounding)."""
    return jnp.where(jnp.all(observed, axis=1, keepdims=True), table.bias,
                     obs @ table.offset.T)


def _centred(table, x, product, extra=None) -> jax.Array:
    """``product(x - center) + offsets`` (plus ``extra(x)``, NaN read as 0): a complete
    chunk takes the float64 ``bias`` and no product of the observed flags."""
    def complete(x):
        x0 = x.astype(table.slope.dtype)
        out = product(x0 - table.center) + table.bias
        return out if extra is None else out + extra(x0)

    def missing(x):
        observed = ~jnp.isnan(x)
        x0 = jnp.where(observed, x, 0).astype(table.slope.dtype)
        obs = observed.astype(x0.dtype)
        out = product(x0 - obs * table.center) + _offsets(table, observed, obs)
        return out if extra is None else out + extra(x0)

    return jax.lax.cond(has_missing(x), missing, complete, x)


def _rounding(slope: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """``2 eps max_k |.|`` of the finite slopes and offsets, in the kernel's epsilon."""
    eps = 0.0 if float64_mode() else float(np.finfo(np.float32).eps)
    return 2.0 * eps * np.stack([np.max(np.where(np.isfinite(v), np.abs(v), 0.0), axis=0)
                                 for v in (slope, offset)])


@register
class PoissonFast(FastForm):
    family = Poisson
    host_numeric = True
    product_scores = True
    linear_in_x = True
    supports_sparse = True
    host_maths = True
    exact_host_tail = True
    small_count_markers = True

    class_buckets = True

    @staticmethod
    def class_axes(tree):
        """Classes lead every field but: the chunk statistics' class totals in their float32
        chunk form (``(4, K, F)``, ``_float32.label_class_sums``) and their per-row log-factorial
        terms (``_counts.coefficient_rows``: class-free), the tables' per-column ``center``
        and ``rounding`` and the exact table's ``steps`` (``((S - 1) F, K)``)."""
        if isinstance(tree, PoissonStats):
            return leading(tree, total=np.ndim(tree.total) - 2, log_factorial=None)
        if isinstance(tree, PoissonShifted):
            return leading(tree, center=None, rounding=None)
        if isinstance(tree, NegBinShifted):
            return leading(tree, steps=1, center=None, rounding=None)
        return leading(tree)

    @staticmethod
    def label_stats(x, labels, n_levels=None) -> PoissonStats:
        """:meth:`suff_stats` summed by label (no ``(rows, classes)`` one-hot).

        A complete chunk counts the class weights instead of a product of observed flags, and
        is computed outside the missing-value branch (work inside a branch ran slower on
        XLA:CPU); only a chunk with a missing value is redone with them masked."""
        def stats(x0, count, observed=None):
            return PoissonStats(count, label_class_sums(labels, x0, observed),
                                coefficient_rows(labels.weights, jnp.zeros_like(x0[:, 0]),
                                                 x0))

        def observed_only(x):
            observed = (~jnp.isnan(x)).astype(labels.dtype)
            return stats(jnp.where(observed > 0, x, 0), labels.sum(observed), observed)

        x = x.astype(labels.dtype)
        complete = stats(x, jnp.broadcast_to(labels.count()[:, None],
                                             (labels.n_classes, x.shape[1])))
        return jax.lax.cond(has_missing(x), observed_only, lambda x: complete, x)

    @staticmethod
    def finish_stats(stats: PoissonStats) -> PoissonStats:
        return stats._replace(total=finish_class_sums(stats.total),
                              log_factorial=finish_coefficient(stats.log_factorial, False))

    @staticmethod
    def float32_inexact(stats: PoissonStats) -> bool:
        """Class totals float32 may have rounded (NaN: ``_float32.finish_class_sums``)."""
        return bool(np.isnan(stats.total).any())

    @staticmethod
    def refine_stats(stats: PoissonStats, read) -> PoissonStats:
        return stats._replace(log_factorial=refine_coefficient(stats.log_factorial, read))

    @staticmethod
    def kernel_table(table, exact: bool, joint: bool):
        r"""Scores relative to a reference class, so the large common part cancels in float64:
        :math:`x(\log\lambda_k - \log\lambda_{ref}) - (\lambda_k - \lambda_{ref})`."""
        if exact:
            return PoissonFast.exact_table(table, 1, joint), None
        if joint:
            return table, None
        log_rate, rate = (np.asarray(v, dtype=np.float64) for v in table)
        slope = log_rate - reference(log_rate)
        center = _center(rate, slope)
        offset = np.where(np.isfinite(slope), center * slope, 0.0) - rate
        offset = offset - reference(offset)
        return PoissonShifted(slope, offset, center, _rounding(slope, offset),
                              offset.sum(axis=1)), None

    @staticmethod
    def exact_table(table: GammaPrior, steps: int, joint: bool) -> NegBinShifted:
        """The negative binomial's kernel table with ``steps`` indicator steps (see
        :class:`NegBinShifted`); relative to reference classes unless ``joint``."""
        a, b = (np.asarray(v, dtype=np.float64) for v in table[:2])
        slope = np.log(a) - np.log1p(b)
        # -a log(1 + 1/b), not a (log b - log(1 + b)): with b near 1e8 that difference
        # keeps 5e-7 of its value, times a near 1e13 (huge sample weights) 0.05 nats
        offset = -a * np.log1p(1.0 / b)
        if joint:
            return NegBinShifted(a, slope, offset, _sparse.step_tables(a, steps, False),
                                 np.zeros(a.shape[1]), np.zeros((2, a.shape[1])),
                                 offset.sum(axis=1))
        slope = slope - reference(slope)
        center = _center(a / b, slope)
        offset = offset + center * slope
        offset = offset - reference(offset)
        return NegBinShifted(a, slope, offset, _sparse.step_tables(a, steps, True), center,
                             _rounding(slope, offset), offset.sum(axis=1))

    @staticmethod
    def host_tail(table: NegBinShifted, x: np.ndarray, steps: int,
                  integral: bool = False, positions: np.ndarray | None = None) -> np.ndarray:
        r"""float64 :math:`\sum_j h(a'_{kj}, x_j)` over the counts above ``steps``."""
        return _sparse.dense_rising_tail(table.shape, x, steps, integral, positions)

    @staticmethod
    def score_rounding(table, x, scores) -> jax.Array:
        r"""``(n, K)``: twice float32's epsilon times :math:`\sqrt{\sum_j ((x_j - c_j)
        \max_k |s_{kj}|)^2} + \max_k |o_{kj}|` (slopes ``s``, offsets ``o``; for a complete
        row the offsets' one rounding instead), per row: the products' roundings are
        independent, so their typical size is the root sum of squares (as for the Multinomial;
        the plain sum refused ordinary 200-column count data). Where that exceeds
        ``COARSE_ROUNDING``, each class's own slopes and offsets instead, which the kernel
        weighs by the class probabilities: rates in the thousands, whose classes are hundreds
        of nats apart, were refused with probabilities of exactly 0 and 1. Counts beyond
        float32's exact integers (2**24) are refused unless their products stay small.

        Plus the accumulation's rounding, which grows with the size the partial sums reach:
        at most :math:`\sum_j |x_j - c_j| \max_k |s_{kj}|` (and the offsets' absolute sum for a
        row with missing counts; ``_float32.sum_rounding``). Not the root sum of squares
        alone: rows away from every class's rates in all of 5,000 columns (a posterior-mean
        rate 1% below rates near 3e5) carried the partial sums to 3,400 nats, and
        probabilities moved by 1.5e-3 unrefused."""
        if not isinstance(table, (PoissonShifted, NegBinShifted)) or float64_mode():
            return jnp.zeros(x.shape[0])  # float64 kernels: nothing to bound (no pass over x)
        observed = ~jnp.isnan(x)
        obs = observed.astype(table.rounding.dtype)
        x0 = jnp.where(observed, x, 0).astype(obs.dtype)
        complete = jnp.all(observed, axis=1)
        eps = jnp.finfo(obs.dtype).eps
        f = x.shape[1]
        # a complete row's offsets are one float64 sum, rounded once to float32
        once = eps * jnp.max(jnp.abs(table.bias))
        distance = jnp.abs(x0 - obs * table.center)
        squares = distance * distance
        # what every term may add to the partial sums (``table.rounding`` holds 2 eps max |.|)
        reach = (distance @ table.rounding[0]
                 + jnp.where(complete, 0.0, obs @ table.rounding[1])) / (2 * eps)
        shared = (jnp.sqrt(squares @ (table.rounding[0] * table.rounding[0]))
                  + jnp.where(complete, once, obs @ table.rounding[1]) + sum_rounding(reach, f))

        def per_class(distance):
            slope, offset = (jnp.where(jnp.isfinite(v), v, 0.0)
                             for v in (table.slope, table.offset))
            reach_k = distance @ jnp.abs(slope).T + jnp.where(
                complete[:, None], 0.0, obs @ jnp.abs(offset).T)
            return (2 * eps * jnp.sqrt((distance * distance) @ (slope * slope).T)
                    + jnp.where(complete[:, None], eps * jnp.abs(table.bias),
                                obs @ (2 * eps * jnp.abs(offset)).T)
                    + sum_rounding(reach_k, f))

        coarse = jnp.broadcast_to(shared[:, None], scores.shape)
        return jax.lax.cond(jnp.max(shared) <= COARSE_ROUNDING, lambda _: coarse, per_class,
                            distance)

    @staticmethod
    def linear_scores(params: PoissonParams) -> tuple:
        r""":math:`\sum_j x_j \log\lambda_{kj} - \sum_j \lambda_{kj}` (the class-free
        :math:`-\log x_j!` left out, as in ``log_likelihood``)."""
        return params.log_rate, -jnp.sum(params.rate, axis=1)

    @staticmethod
    def sparse_suff_stats(X, resp) -> PoissonStats:
        # resp: an (n, K) array or _sparse.Labels; every column is observed in every row
        count = np.repeat(_sparse.class_weights(resp)[:, None], X.shape[1], axis=1)
        return PoissonStats(count, _sparse.class_totals(X, resp),
                            np.float64(_sparse.row_weights(resp) @ _sparse.row_totals(X)[1]))

    @staticmethod
    def sparse_log_likelihood(params: PoissonParams, X) -> np.ndarray:
        rate = np.asarray(params.rate, dtype=np.float64)
        return _sparse.log_matmul(X, params.log_rate) - rate.sum(axis=1)

    @staticmethod
    def sparse_log_predictive(posterior: GammaPrior, X) -> np.ndarray:
        r"""A zero count has NB pmf :math:`(b/(b + 1))^a`: summed over all columns, plus
        :math:`x(\log a - \log(1 + b)) + h(a, x)` over the stored values as one sparse
        product against a table by (count, column) (``_sparse.linear_rising``), in float64."""
        a, b = (np.asarray(v, dtype=np.float64) for v in posterior)
        base = np.sum(-a * np.log1p(1.0 / b), axis=1)  # see ``exact_table``
        out, _ = _sparse.linear_rising(X, posterior, lambda: np.log(a) - np.log1p(b), a)
        out += base
        return out

    @staticmethod
    def sparse_log_normalizer(X) -> np.ndarray:
        return -_sparse.row_totals(X)[1]


    @staticmethod
    def scores(table, x, n_levels, exact: bool) -> jax.Array:
        if isinstance(table, NegBinShifted):
            return _centred(table, x, lambda xc: xc @ table.slope.T,
                            lambda x0: step_sums(x0, table.steps))
        if isinstance(table, PoissonShifted):
            # where the table has -inf (a zero ML rate), the center is 0 and log_matmul's
            # 0 * log 0 = 0 applies to x itself
            return _centred(table, x, partial(log_matmul, log_table=table.slope))
        return Poisson.log_likelihood(table, x)  # the joint density's plain table
