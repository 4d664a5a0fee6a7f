"""The fast form of :class:`~bayesnb.families.Gaussian`: chunk statistics centred per class
(float32 holds deviations, not offsets), score tables relative to a per-column centre (as
matmuls where float32 resolves them, term by term where it would not), the Student-t
predictive with its ``log1p`` terms combined, and the float32 rounding bounds of each."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..families._base import float64_mode, has_missing, log_gamma_ratio
from ..families.gaussian import LOG_2PI, Gaussian, GaussianParams, GaussianStats
from . import FastForm, register
from ._buckets import leading
from ._float32 import (
    COARSE_ROUNDING,
    DRIFT_COLUMNS,
    Float32Unrepresentable,
    block_drift,
    centre,
    kernel_shift,
    reference,
    sum_rounding,
)


class GaussianExpanded(NamedTuple):
    r"""Plug-in parameters the float32 score kernel reads as matmuls (``kernel_table``),
    relative to a per-column reference, the classes' mean terms (a class-free constant per row;
    none for the joint density):
    :math:`s_k(x) = \sum_j q_{kj} x_j^2 + l_{kj} x_j + c_{kj}` with :math:`q = -(\lambda_k -
    \bar\lambda)/2`, :math:`l = \lambda_k m_k - \overline{\lambda m}` and :math:`c` the rest,
    ``x`` relative to the host-side shift. Without the reference the terms
    :math:`\lambda x^2/2` would sum to about half the column count per class, and their float32
    rounding over many columns would move the probabilities."""

    quad: jax.Array  # (K, F)
    lin: jax.Array  # (K, F)
    const: jax.Array  # (K, F)
    const_sum: jax.Array  # (K,) ``const`` summed over the columns in float64 (complete rows)


class StudentT(NamedTuple):
    r"""The posterior predictive as the score kernel reads it (``GaussianFast.kernel_table``):
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
    #: over the columns (a class-free constant; the plain sum grows with the columns and its
    #: float32 rounding with it); shape (0,): not (the joint density, and blocks of fewer than
    #: ``RELATIVE_COLUMNS`` columns). Static, by its shape.
    relative: jax.Array = np.zeros(0)


#: columns whose ``log1p`` terms the Student-t kernel combines into one:
#: :math:`\log(1 + a) + \log(1 + b) = \log(1 + (a + b + ab))`, so a (row, class) pays one
#: ``log1p`` per group instead of per column, the kernel's costliest operation
LOG1P_GROUP = 4
#: per dtype, the largest ``u`` a combined group may hold: ``(1 + u)**LOG1P_GROUP`` stays
#: finite (float32's 3.4e38, float64's 1.8e308); a chunk with a larger bound takes one
#: ``log1p`` per column
_GROUP_LIMIT = {np.dtype(np.float32): 1e7, np.dtype(np.float64): 1e60}


def _relative(terms_of, table: StudentT):
    """``(n, K, w)`` terms ``terms_of(classes)`` less class 0's where ``table.relative`` (see
    :class:`StudentT`). Class 0's are computed apart, ``(n, 1, w)``: a slice of the full
    terms would make XLA materialise them."""
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


#: from this many columns the Student-t's terms are summed relative to class 0's: below, float32
#: rounds their sum little and the extra pass is saved (benchmarks/tune.py RELATIVE_COLUMNS)
RELATIVE_COLUMNS = 1024
#: the Student-t kernel's float32 rounding per (row, class), in epsilons times its ``log1p``
#: terms' sum (``GaussianFast.score_rounding``): a few epsilons a term, checked against float64
STUDENT_T_ROUNDING = 2.5
#: the same, finer, where that bound is large: ``STUDENT_T_SPREAD`` epsilons times the terms'
#: root sum of squares (their own roundings, independent) plus ``STUDENT_T_SUM`` times their
#: sum (the accumulation), so that wide standardised blocks are not refused needlessly
STUDENT_T_SPREAD, STUDENT_T_SUM = 3.0, 1.25
#: float32 inputs carry about this relative rounding; a class whose spread is below
#: ``FLOAT32_SPREAD`` times it (relative to its distance from the scores' centre) has its
#: float32 scores refused
_EPS32 = float(np.finfo(np.float32).eps)
FLOAT32_SPREAD = 1e3
#: a class variance below this is refused in float32: squares under float32's smallest normal
#: number (1.2e-38) are flushed to zero, and above it only deviations within 1e-3 standard
#: deviations are lost
TINY_VARIANCE = 1e6 * float(np.finfo(np.float32).tiny)
#: the expanded (matmul) Gaussian scores are used while float32's rounding bound on their terms
#: near a class stays below this; the direct form only serves tables where they would cancel
#: (a narrow class far from the rest)
EXPANDED_ROUNDING = 1e-4


def _center(mean: np.ndarray) -> np.ndarray:
    """Per column, the average of the classes' finite means: the host subtracts it (as
    ``kernel_shift`` rounds it) so that float32 holds deviations near the classes, not
    offsets."""
    finite = np.isfinite(mean)
    return np.sum(np.where(finite, mean, 0.0), axis=0) / np.maximum(finite.sum(axis=0), 1)


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
    score kernel squares deviations of that size, and float32 flushes those squares to zero
    (ML on values near 1e-19 was 0.03 off). The statistics themselves are float64's
    (``GaussianFast.float64_statistics``)."""
    if float64_mode():
        return
    with np.errstate(invalid="ignore"):
        tiny = (var > 0) & (var < TINY_VARIANCE)
    if tiny.any():
        k, j = map(int, np.argwhere(tiny)[0])
        raise Float32Unrepresentable(
            j, f"class #{k} has a variance of {var[k, j]:.3g}, so small that float32 flushes "
               f"the squares of its deviations to zero")


@register
class GaussianFast(FastForm):
    family = Gaussian
    host_numeric = True
    # a row's score takes each precision times (x - mean)^2 / 2: float32's relative rounding
    # of the variances (1e-7) moved a row 300 sd out, where the columns' terms cancel, by 1e-3
    float64_statistics = True
    host_maths = True
    quadratic_in_x = True
    class_buckets = True

    @staticmethod
    def class_axes(tree):
        """Classes lead every field but the chunk statistics' means (``(2, K, F)``: the class
        means and the mean deviations from them, :meth:`label_stats`) and the Student-t's
        class-free ``relative`` flag."""
        if isinstance(tree, StudentT):
            return leading(tree, relative=None)
        if isinstance(tree, GaussianStats):
            return leading(tree, mean=np.ndim(tree.mean) - 2)
        return leading(tree)

    @staticmethod
    def label_stats(x, labels, n_levels=None) -> GaussianStats:
        """:meth:`suff_stats`' chunk form, summed by label: the same two passes (class means,
        then each row's deviation from its own class mean and their squares), each one
        scatter-add of the columns side by side, and the class means gathered per row. No
        ``(rows, classes)`` array, so the cost does not grow with rows x classes."""
        return jax.lax.cond(has_missing(x),
                            lambda v: GaussianFast._label_stats(v, labels, True),
                            lambda v: GaussianFast._label_stats(v, labels, False), x)

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
    def finish_stats(stats: GaussianStats) -> GaussianStats:
        mean = stats.mean[0] + stats.mean[1] if stats.mean.ndim == 3 else stats.mean
        return GaussianStats(stats.count, mean, stats.m2)

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
            log_norm = (log_gamma_ratio(dof / 2, 0.5)  # of dof/2 = 5e14: not two gammaln
                        - 0.5 * np.log(dof * scale2) - 0.5 * np.log(np.pi) + 0.5 * LOG_2PI)
            _check_resolution(loc - shift, np.sqrt(scale2), shift)
            _check_tiny(scale2)
            if not joint:  # relative to the largest per column (a sum over many columns
                log_norm = log_norm - reference(log_norm)  # would grow, and round, with them)
            coef = 0.5 * (dof + 1.0)
            if np.all(coef == coef[:, :1]):  # one per class (no missing value at fit, one
                coef = coef[:, :1]  # prior shape): the kernel combines its log1p terms
            relative = np.ones(0 if joint or loc.shape[1] < RELATIVE_COLUMNS else 1)
            return StudentT(loc - shift, dof, scale2, log_norm, coef, 1.0 / (dof * scale2),
                            log_norm.sum(axis=1), relative), shift
        mean, precision = (np.asarray(v, dtype=np.float64) for v in table)
        center = kernel_shift(_center(mean))
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
        if bound > EXPANDED_ROUNDING:  # the family's own term-by-term form
            return GaussianParams(mc, precision), center
        with np.errstate(invalid="ignore", divide="ignore"):
            terms = (-0.5 * precision, precision * mc,
                     0.5 * np.log(precision) - 0.5 * precision * mc * mc)
        if not joint:  # per column relative to the classes' mean terms (a class-free
            # quadratic): relative to the widest class every quad term had one sign, and the
            # matmuls' partial sums (1,000 nats for 5,000 columns, 20 classes) rounded by 7e-4
            terms = tuple(t - centre(t) for t in terms)
        quad, lin, const = terms
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
          the input's roundings are independent, as in ``MultinomialFast.score_rounding``), plus
          the class sum's single rounding. Tried first with each column's largest table
          entries over the classes (one fused pass, ``(n,)`` broadcast to ``(n, K)``); a
          chunk above ``COARSE_ROUNDING`` takes the per-class product.
        * Term by term (``Gaussian.log_likelihood``: a narrow class far from the others):
          per (row, class), the terms
          :math:`\lambda d^2/2` rounded, and the input's and the table's roundings
          (:math:`\epsilon(|x| + |m|)/2` each) times the slope :math:`\lambda |d|`, root sum of
          squares over the columns, plus the sum's accumulation (terms of one sign, so partial
          sums up to the score): ``(n, K)``, which the kernel weighs by the class
          probabilities (a class with no probability may be off without moving any)."""
        if float64_mode():
            return jnp.zeros(x.shape[0])
        eps = jnp.finfo(jnp.float32).eps
        if isinstance(table, StudentT):
            return GaussianFast._student_t_rounding(table, x, scores)
        if isinstance(table, GaussianExpanded):
            x0 = jnp.nan_to_num(x, nan=0.0).astype(table.quad.dtype)
            x2 = x0 * x0
            observed = (~jnp.isnan(x)).astype(x2.dtype)
            q2, l2, c2 = (t * t for t in table[:3])
            sum_once = eps * jnp.abs(table.const_sum)
            # each column's largest term over the classes first (one fused pass); only a chunk
            # where that is too coarse pays the per-class bound, a product as large as the scores'
            one = 2 * eps * jnp.sqrt(3 * jnp.sum(
                x2 * x2 * jnp.max(q2, axis=0) + x2 * jnp.max(l2, axis=0)
                + observed * jnp.max(c2, axis=0), axis=1)) + jnp.max(sum_once)

            def per_class(_):
                features = jnp.concatenate([x2 * x2, x2, observed], axis=1)
                squares = jnp.concatenate([q2, l2, c2], axis=1)
                return 2 * eps * jnp.sqrt(3 * (features @ squares.T)) + sum_once

            # plus the matmuls' accumulation, in proportion to the size the partial sums reach:
            # the scores' plus the terms' root sum of squares, plus how far the row's offsets
            # carry them (8,000 columns pushing one way then the other, on rows offset by 1.5,
            # moved probabilities by 1.9e-4 unrefused without it)
            reach = (jnp.abs(jnp.where(jnp.isfinite(scores), scores, 0.0))
                     + one[:, None] / (2 * eps * jnp.sqrt(3.0)))
            if x.shape[1] >= DRIFT_COLUMNS:
                reach = reach + block_drift(x2, table.quad) + block_drift(x0, table.lin)
            return jax.lax.cond(
                jnp.max(one) <= COARSE_ROUNDING,
                lambda _: jnp.broadcast_to(one[:, None], (x.shape[0], q2.shape[0])),
                per_class, None) + sum_rounding(reach, x.shape[1])
        observed = ~jnp.isnan(x)[:, None, :]
        x0 = jnp.nan_to_num(x, nan=0.0).astype(jnp.float32)
        d = x0[:, None, :] - table.mean
        lam = table.precision
        slope = lam * jnp.abs(d) * 0.5 * (jnp.abs(x0)[:, None, :] + jnp.abs(table.mean)
                                          + jnp.abs(d))
        term = jnp.where(observed, slope + lam * d * d + 0.5 * jnp.abs(jnp.log(lam)), 0.0)
        # plus the sum's accumulation: its terms have one sign, so its partial sums reach the
        # score (8,000 columns moved probabilities by 1.6e-4 unrefused without it)
        return (2 * eps * jnp.sqrt(jnp.sum(term * term, axis=-1))
                + sum_rounding(jnp.abs(jnp.where(jnp.isfinite(scores), scores, 0.0)), x.shape[1]))

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
        own = 0.5 * eps * (jnp.abs(norm) + jnp.abs(scores)) + GaussianFast._student_t_inputs(
            table, x, scores.shape[1])
        if table.relative.shape[0]:
            size = size + 2 * GaussianFast._student_t_spread(table, x)[:, None]
            return STUDENT_T_ROUNDING * eps * size + own
        bound = STUDENT_T_ROUNDING * eps * size + own

        def finer(_):  # both bound the rounding: the smaller holds
            spread = GaussianFast._student_t_spread(table, x)[:, None]
            return jnp.minimum(bound, eps * (STUDENT_T_SPREAD * spread + STUDENT_T_SUM * size)
                               + own)

        # the spread costs a log1p per (row, column): only where the first bound is large
        return jax.lax.cond(jnp.max(bound) <= COARSE_ROUNDING, lambda _: bound, finer, None)

    @staticmethod
    def _student_t_inputs(table: StudentT, x, k: int) -> jax.Array:
        r"""``(n, K)`` the float32 roundings of the input and of the locations,
        :math:`\epsilon(|x_j| + |m_{kj}|)/2`, times the slope of each term,
        :math:`2c|d|w/(1 + d^2 w)` with :math:`d = x_j - m_{kj}`, root sum of squares over the
        columns: a class whose scale float32 resolves only to a thousandth at the row's
        distance from the centre moved probabilities by 1.5e-4 unbounded. First from each
        column's steepest slope, :math:`c\sqrt w`, and largest ``|m|`` (one pass over the
        rows); per class only where that is above ``COARSE_ROUNDING``."""
        eps = jnp.finfo(jnp.float32).eps
        observed = ~jnp.isnan(x)
        x0 = jnp.where(observed, x, 0.0).astype(table.loc.dtype)
        coef = jnp.broadcast_to(table.coef, table.loc.shape)
        reach = 0.5 * eps * (jnp.abs(x0) + jnp.max(jnp.abs(table.loc), axis=0))
        steep = jnp.max(coef * jnp.sqrt(table.weight), axis=0)
        one = jnp.sqrt(jnp.sum(jnp.where(observed, (steep * reach) ** 2, 0.0), axis=1))

        def per_class(_):
            d = x0[:, None, :] - table.loc
            slope = 2 * coef * jnp.abs(d) * table.weight / (1 + d * d * table.weight)
            term = slope * 0.5 * eps * (jnp.abs(x0)[:, None, :] + jnp.abs(table.loc))
            return jnp.sqrt(jnp.sum(jnp.where(observed[:, None, :], term * term, 0.0), axis=-1))

        return jax.lax.cond(jnp.max(one) <= COARSE_ROUNDING,
                            lambda _: jnp.broadcast_to(one[:, None], (x.shape[0], k)),
                            per_class, None)

    @staticmethod
    def _student_t_spread(table: StudentT, x) -> jax.Array:
        r"""``(n,)`` a bound on every class's root sum of squares of its ``log1p`` terms
        :math:`c_{kj}\log(1 + (x_j - m_{kj})^2 w_{kj})`, from each column's largest
        :math:`c`, :math:`|m|` and :math:`w` over the classes: one ``log1p`` per (row,
        column), where the terms themselves cost one per (row, class, column)."""
        observed = ~jnp.isnan(x)
        x0 = jnp.where(observed, x, 0.0).astype(table.loc.dtype)
        coef = jnp.broadcast_to(table.coef, table.loc.shape)
        reach = jnp.abs(x0) + jnp.max(jnp.abs(table.loc), axis=0)
        term = jnp.max(coef, axis=0) * jnp.log1p(reach * reach * jnp.max(table.weight, axis=0))
        return jnp.sqrt(jnp.sum(jnp.where(observed, term * term, 0.0), axis=1))

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
    def log_likelihood(params: GaussianParams, x, n_levels=None) -> jax.Array:
        r"""``Gaussian.log_likelihood`` as matmuls (a draw's table; the term-by-term form
        costs a ``(rows, classes, columns)`` pass per draw, 4.6 times the products' time):
        :math:`-\lambda x_c^2/2 + \lambda m_c x_c + (\log\lambda - \lambda m_c^2)/2` summed
        over the observed columns, ``x`` and the means relative to the classes' average so
        that float32 does not square offsets (:meth:`draws_log_likelihood` of one draw)."""
        one = jax.tree_util.tree_map(lambda a: jnp.asarray(a)[None], params)
        return GaussianFast.draws_log_likelihood(one, x)[:, 0, :]

    shared_draw_features = 2

    @staticmethod
    def draws_log_likelihood(tables: GaussianParams, x) -> jax.Array:
        r""":meth:`log_likelihood` of ``S`` draws at once: one centre for all of them (the
        average of their class means), so the row features :math:`x_c^2, x_c` are computed
        once and every draw's :math:`(-\lambda/2, \lambda m_c)` weights are one product's
        columns (draw by draw, the ``(rows, columns)`` features were recomputed per draw and
        the products were ``S`` matrix-vector products: 1,000 columns were 10-20x slower)."""
        center = jnp.mean(tables.mean, axis=(0, 1))
        mc = tables.mean - center  # (S, K, F)
        lam = jnp.broadcast_to(tables.precision, mc.shape)
        s, k, f = mc.shape
        per_column = (0.5 * jnp.log(lam) - 0.5 * lam * mc * mc).reshape(s * k, f)
        weights = jnp.concatenate([-0.5 * lam, lam * mc], axis=-1).reshape(s * k, 2 * f)

        def scores(x, missing):  # the observed indicator's product only where one is missing
            observed = ~jnp.isnan(x)
            xc = jnp.where(observed, x - center, 0.0).astype(mc.dtype)
            per_row = (observed.astype(xc.dtype) @ per_column.T if missing
                       else jnp.sum(per_column, axis=1))
            return jnp.concatenate([xc * xc, xc], axis=1) @ weights.T + per_row

        out = jax.lax.cond(has_missing(x), lambda x: scores(x, True),
                           lambda x: scores(x, False), x)
        return out.reshape(x.shape[0], s, k)

    @staticmethod
    def term_extent(params: GaussianParams) -> tuple:
        r""":math:`\lambda (x - \mu)^2 / 2` and its roundings (``x`` and ``\mu`` each by half an
        epsilon of their magnitude) are at most :math:`\lambda (|x| + |\mu|)^2`; the
        ``log(lam) / 2`` term is far smaller wherever this matters."""
        return params.precision, jnp.abs(params.mean)


    @staticmethod
    def scores(table, x, n_levels, exact: bool) -> jax.Array:
        if isinstance(table, StudentT):
            return GaussianFast._student_t(table, x)
        if isinstance(table, GaussianExpanded):
            return GaussianFast._expanded(table, x)
        return Gaussian.log_likelihood(table, x)  # term by term (``kernel_table``)
