"""The fast form of :class:`~bayesnb.families.Multinomial`: chunk statistics float32 cannot
spoil, score tables relative to a reference class with their float32 rounding bound, the
exact (Dirichlet-multinomial) predictive as indicator products plus a float64 host tail, and
the ``scipy.sparse`` paths."""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import xlogy

from ..families._base import float64_mode, has_missing, log_matmul
from ..families.multinomial import Multinomial, MultinomialParams, MultinomialStats
from . import FastForm, _sparse, register
from ._buckets import leading
from ._counts import (
    coefficient_rows,
    finish_coefficient,
    float64_coefficient_rows,
    refine_coefficient,
)
from ._float32 import (
    COARSE_ROUNDING,
    centre,
    finish_class_sums,
    label_class_sums,
    log_rising,
    rising_polynomial,
    sum_rounding,
)
from ._in_place import InPlaceRows
from ._steps import all_small, marked_log_factorials, row_sums, step_sums


class MultinomialShifted(NamedTuple):
    """The plug-in table as the score kernel reads it (``MultinomialFast.kernel_table``)."""

    delta: jax.Array  # (K, V) log theta minus the column's reference (float64 difference)
    prob: jax.Array  # (K, V) theta, for the observed mass of a row with missing counts
    rounding: jax.Array  # (V,) per count, the bound on the scores' rounding (score_rounding)


class DirichletMultinomialShifted(NamedTuple):
    r"""The exact predictive as the score kernel reads it: :math:`\sum_v x_v(\log a_{kv} -
    \log A_k) + \sum_v h(a_{kv}, x_v) - h(A_k, n)` with :math:`h(a, x) = \log\Gamma(a + x) -
    \log\Gamma(a) - x\log a` (``log_rising``). For an integer count ``x <= S`` (``S`` the
    table's number of steps), :math:`h(a, x) = \sum_{t=1}^{S-1} [x > t]\log(1 + t/a)`: the
    per-column sum is one product per step against ``steps`` (one in all with 0/1 counts),
    and the host adds :math:`h` in float64 for the few other entries (``host_tail``).
    ``slope`` and ``steps`` are relative to a reference class per column (float64) unless the
    table serves the joint density (``joint``)."""

    alpha: jax.Array  # (K, V) posterior concentration (float64 on the host, for the tail)
    slope: jax.Array  # (K, V) log a - log A, minus the column's reference
    total: jax.Array  # (K,) A
    steps: jax.Array  # ((S - 1) V, K) log(1 + t / a), t = 1 .. S - 1 (``_sparse.step_tables``)
    total_quadratic: jax.Array  # (K,) h(A, n)'s n^2 coefficient, minus class 0's
    total_cubic: jax.Array  # (K,) h(A, n)'s n^3 coefficient, minus class 0's
    rounding: jax.Array  # (V,) per count, the bound on the scores' rounding (score_rounding)


def _rounding(delta: np.ndarray) -> np.ndarray:
    """``2 eps max_k |delta_kv|`` over the finite entries, in the kernel's epsilon."""
    eps = 0.0 if float64_mode() else float(np.finfo(np.float32).eps)
    return 2.0 * eps * np.max(np.where(np.isfinite(delta), np.abs(delta), 0.0), axis=0)


def _whole_rounding(table: DirichletMultinomialShifted, n: jax.Array) -> jax.Array:
    r"""``(n, K)``: twice float32's epsilon times the size of the parts the complete rows'
    scores take :math:`h(A_k, n)` from. Past ``u = n / A_k = 1/4``, ``log_rising`` takes
    :math:`A_k\psi(u)` in closed form, whose terms (up to :math:`A_k u^3 / 6`) cancel to far
    less than their size: with documents a third as long as a class's whole training text,
    probabilities were 0.01 off and the class flipped, unrefused. Below ``u = 1/4`` its
    series is exact to float32; then only the float64 tables' :math:`n^2, n^3` terms count
    (and below ``A_k = 10``, ``gammaln`` of about :math:`(A_k + n) \log(A_k + n)`)."""
    eps = jnp.finfo(n.dtype).eps
    a, n = table.total[None, :], n[:, None]
    u = n / a
    closed = (1.0 + u) * jnp.log1p(u) + u + u * u * (0.5 + u / 6.0)
    size = jnp.where(a >= 10.0, a * jnp.where(u >= 0.25, closed, 0.0),
                     (a + n) * jnp.log1p(a + n) + n * jnp.abs(jnp.log(a)))
    size = size + n * n * jnp.abs(table.total_quadratic) + n * n * n * jnp.abs(table.total_cubic)
    return 2.0 * eps * size


def _stats_of_chunk(x, class_totals, row_weights) -> MultinomialStats:
    """A chunk's column totals per class and its rows' log multinomial coefficient terms
    (:func:`coefficient_rows`).

    The complete form runs on the raw chunk, outside any branch, and the row totals it needs
    tell whether a count is missing (NaN); only such a chunk is redone with its missing counts
    as 0, which is cheaper than wrapping the whole computation in a branch on a separate NaN
    check (and zeroing NaN again for the coefficient)."""
    def stats(x, totals, observed=None):
        return MultinomialStats(class_totals(x, observed),
                                coefficient_rows(row_weights, totals, x))

    totals = row_sums(x)  # NaN in a row with a missing count

    def observed_only(x):
        x0 = jnp.nan_to_num(x, nan=0.0)
        return stats(x0, row_sums(x0), (~jnp.isnan(x)).astype(x0.dtype))

    complete = stats(x, totals)
    return jax.lax.cond(jnp.isnan(jnp.sum(totals)), observed_only, lambda x: complete, x)


def _stats_in_place(rows: InPlaceRows, labels) -> tuple[MultinomialStats, jax.Array]:
    """:func:`_stats_of_chunk` of a float64 chunk read where it lies (``_in_place``), summed
    over its body and edges, and whether it held integer counts below 256 only (no marker in
    its log-factorial pass): a chunk with another value (missing, fractional, large, invalid)
    is redone from a copy."""
    log_factorials = rows.map(marked_log_factorials).row_sums()
    stats = MultinomialStats(rows.class_sums(labels), float64_coefficient_rows(
        labels.weights, rows.row_sums(), log_factorials))
    return stats, all_small(log_factorials)


@register
class MultinomialFast(FastForm):
    family = Multinomial
    host_numeric = True
    product_scores = True
    linear_in_x = True
    supports_sparse = True
    host_maths = True
    exact_host_tail = True
    small_count_markers = True
    in_place_stats = staticmethod(_stats_in_place)

    class_buckets = True

    @staticmethod
    def class_axes(tree):
        """Classes lead every field but: the chunk statistics' class totals in their float32
        chunk form (``(4, K, V)``, ``_float32.label_class_sums``) and their per-row
        coefficient terms (``_counts.coefficient_rows``: class-free), the tables' per-count
        ``rounding`` and the exact table's ``steps`` (``((S - 1) V, K)``)."""
        if isinstance(tree, MultinomialStats):
            return leading(tree, counts=np.ndim(tree.counts) - 2, log_coef=None)
        if isinstance(tree, MultinomialShifted):
            return leading(tree, rounding=None)
        if isinstance(tree, DirichletMultinomialShifted):
            return leading(tree, steps=1, rounding=None)
        return leading(tree)

    @staticmethod
    def label_stats(x, labels, n_levels=None) -> MultinomialStats:
        """:meth:`suff_stats` summed by label (no ``(rows, classes)`` one-hot)."""
        return _stats_of_chunk(x.astype(labels.dtype),
                               partial(label_class_sums, labels), labels.weights)

    @staticmethod
    def finish_stats(stats: MultinomialStats) -> MultinomialStats:
        return MultinomialStats(finish_class_sums(stats.counts),
                                finish_coefficient(stats.log_coef, with_totals=True))

    @staticmethod
    def float32_inexact(stats: MultinomialStats) -> bool:
        """Class totals float32 may have rounded (NaN: ``_float32.finish_class_sums``)."""
        return bool(np.isnan(stats.counts).any())

    @staticmethod
    def refine_stats(stats: MultinomialStats, read) -> MultinomialStats:
        return stats._replace(log_coef=refine_coefficient(stats.log_coef, read))

    @staticmethod
    def kernel_table(table, exact: bool, joint: bool):
        r"""Tables relative to a reference class, in float64: with counts in the thousands
        :math:`\sum_v x_v \log\theta_{kv}` is a large number that differs little between
        classes, and float32 would lose the difference."""
        if exact:
            return MultinomialFast.exact_table(table, 1, joint), None
        if joint:
            return table, None
        log_prob = np.asarray(table.log_prob, dtype=np.float64)
        delta = log_prob - centre(log_prob)
        return MultinomialShifted(delta, np.exp(log_prob), _rounding(delta)), None

    @staticmethod
    def exact_table(table, steps: int, joint: bool) -> DirichletMultinomialShifted:
        """The exact predictive's kernel table with ``steps`` indicator steps (see
        :class:`DirichletMultinomialShifted`); relative to reference classes unless
        ``joint``, where every term is kept (the joint density needs them all)."""
        a = np.asarray(table.alpha, dtype=np.float64)
        total = a.sum(axis=1)
        slope = np.log(a) - np.log(total)[:, None]
        total_quad, total_cube = rising_polynomial(total)
        if joint:
            zero = np.zeros(a.shape[1])
            return DirichletMultinomialShifted(a, slope, total, _sparse.step_tables(
                a, steps, False), total_quad, total_cube, zero)
        slope = slope - centre(slope)
        return DirichletMultinomialShifted(
            a, slope, total, _sparse.step_tables(a, steps, True), total_quad - total_quad[0],
            total_cube - total_cube[0], _rounding(slope))

    @staticmethod
    def host_tail(table: DirichletMultinomialShifted, x: np.ndarray, steps: int,
                  integral: bool = False, positions: np.ndarray | None = None) -> np.ndarray:
        r"""float64 :math:`\sum_v h(a_{kv}, x_v)` over the entries the kernel's steps leave out
        (counts above ``steps``, non-integer counts)."""
        return _sparse.dense_rising_tail(table.alpha, x, steps, integral, positions)

    @staticmethod
    def score_rounding(table, x, scores) -> jax.Array:
        r"""Twice float32's epsilon times :math:`\sqrt{\sum_v (x_v \max_k |\delta_{kv}|)^2}`
        per row: the typical size of the products' roundings, which are independent (the
        worst case, the plain sum, would refuse ordinary data such as scikit-learn's digits;
        the float32 property test checks the agreement itself), bounded by the smaller of
        :math:`\sqrt{\max_v x_v \sum_v x_v (\max_k |\delta_{kv}|)^2}` (counts are not
        negative) and that plain sum, so that one product of the chunk gives every sum the
        bound reads (a product of its squares took longer than the scores'); plus, per class, the
        accumulation's rounding, which grows with the size the partial sums reach: at most
        :math:`\sum_v x_v \max_k |\delta_{kv}|` (counts are not negative), the table's
        entries relative to their mean over the classes (``_base.sum_rounding``,
        ``_base.centre``). Not their root sum of squares: columns ordered so that their terms
        push one way, then the other (two classes 9e-4 apart on each half of 2,000 columns,
        counts in the thousands) took the partial sums 20 times past it, and probabilities
        moved by 2.7e-4 unrefused. A row with missing counts adds its renormalisation's
        rounding (twice epsilon times its total)."""
        shifted = (MultinomialShifted, DirichletMultinomialShifted)
        if not isinstance(table, shifted) or float64_mode():
            return jnp.zeros(x.shape[0])  # float64 kernels: nothing to bound (no pass over x)
        eps = jnp.finfo(table.rounding.dtype).eps
        # per row: the squares' bound, the terms' absolute sum, which bounds every partial sum
        # (``table.rounding`` holds 2 eps max |delta|), and the total
        weights = jnp.stack([table.rounding * table.rounding, table.rounding / (2 * eps),
                             jnp.ones_like(table.rounding)], axis=1)

        def sums(x):
            both = x @ weights
            products = jnp.minimum(jnp.sqrt(jnp.max(x, axis=1) * both[:, 0]), 2 * eps * both[:, 1])
            return products, both[:, 1], both[:, 2]

        products, reach, totals = jax.lax.cond(
            has_missing(x), lambda x: sums(jnp.nan_to_num(x, nan=0.0)), sums,
            x.astype(table.rounding.dtype))

        def renormalised(x):
            # a row with missing counts: n log(observed mass), its mass rounded relatively
            # once and its log rounded to its own size; for the exact predictive also
            # h(A_observed, n) <= n log(1 + n / A), computed in float32
            eps = jnp.finfo(table.rounding.dtype).eps
            observed = (~jnp.isnan(x)).astype(table.rounding.dtype)
            n = jnp.sum(jnp.nan_to_num(x, nan=0.0).astype(observed.dtype), axis=1)
            bound = 2 * eps * n
            if isinstance(table, MultinomialShifted):  # a probability float32 flushed to 0
                lost = jnp.any((table.prob == 0) & jnp.isfinite(table.delta))
                bound = jnp.where(lost, jnp.inf, bound)
            if isinstance(table, DirichletMultinomialShifted):
                a_obs = observed @ table.alpha.T
                a_obs = jnp.where(a_obs > 0, a_obs, 1.0)
                log_share = jnp.max(jnp.abs(jnp.log(a_obs / table.total)), axis=1)
                bound = bound + eps * n * (2 * jnp.log1p(n / jnp.min(a_obs, axis=1))
                                           + log_share)
            return jnp.where(jnp.all(observed > 0, axis=1), 0.0, bound)

        # the raw chunk goes into the branch (a cond's operand is materialised: x0 was)
        renorm = jax.lax.cond(has_missing(x), renormalised,
                              lambda x: jnp.zeros(x.shape[0], table.rounding.dtype), x)
        f = x.shape[1]
        # the part every class shares; where it is small, the per-class part is weighed by the
        # class probabilities in the kernel and the costly per-class product is not needed
        shared = products + renorm + sum_rounding(reach, f)
        whole = 0.0  # (n, K) for the exact predictive: h(A_k, n)'s rounding
        if isinstance(table, DirichletMultinomialShifted):
            whole = _whole_rounding(table, totals)
            shared = shared + jnp.max(whole, axis=1)
        coarse = shared[:, None] + sum_rounding(jnp.abs(scores), f)

        def per_class(x):
            # each class's own terms: a class far from the row (a small alpha's log 0.001)
            # counts only as much as its probability, so exact scores are not refused
            weights = table.delta if isinstance(table, MultinomialShifted) else table.slope
            weights = jnp.where(jnp.isfinite(weights), weights, 0.0)
            x0 = jnp.nan_to_num(x, nan=0.0).astype(weights.dtype)
            reach_k = x0 @ jnp.abs(weights).T  # bounds the products' and the partial sums
            eps = jnp.finfo(table.rounding.dtype).eps
            return (2 * eps * reach_k + renorm[:, None] + whole
                    + sum_rounding(jnp.abs(scores) + reach_k, f))

        # the raw chunk again as the operand (not x0, which the cond would materialise)
        return jax.lax.cond(jnp.max(shared) <= COARSE_ROUNDING, lambda _: coarse, per_class, x)

    @staticmethod
    def _log_predictive_shifted(table: DirichletMultinomialShifted, x) -> jax.Array:
        def complete(x):  # every column observed: the plug-in's product plus the steps
            x0 = x.astype(table.slope.dtype)
            # the row totals as one more column of the product: a row reduction of its own
            # would be a second pass over the chunk
            k = table.slope.shape[0]
            both = x0 @ jnp.concatenate([table.slope, jnp.ones((1, x.shape[1]), x0.dtype)]).T
            n = both[:, k:]
            whole = ((n * n) * table.total_quadratic + (n * n * n) * table.total_cubic
                     + log_rising(table.total, n, polynomial=False))
            return both[:, :k] + step_sums(x0, table.steps) - whole

        def missing(x):
            a = table.alpha
            x0 = jnp.nan_to_num(x, nan=0.0).astype(table.slope.dtype)
            observed = (~jnp.isnan(x)).astype(x0.dtype)
            n = x0.sum(axis=1, keepdims=True)
            a_total = observed @ a.T  # (n, K): the observed columns' concentration
            safe = jnp.where(a_total > 0, a_total, 1.0)
            # log(A_observed / A): from the unobserved share while it is under half (exact
            # where nothing is missing), else from the observed one, which 1 - share would
            # cancel (a tenth of a class's concentration observed: probabilities 0.68 off)
            unobserved = ((1.0 - observed) @ a.T) / table.total
            share = jnp.where(unobserved <= 0.5, jnp.log1p(-jnp.minimum(unobserved, 0.5)),
                              jnp.log(safe / table.total))
            # h(A, n)'s quadratic parts from float64 tables (relative to a reference class
            # unless joint); a row with missing counts has its h computed whole
            whole_row = jnp.all(observed > 0, axis=1, keepdims=True)
            whole = jnp.where(whole_row, (n * n) * table.total_quadratic
                              + (n * n * n) * table.total_cubic
                              + log_rising(safe, n, polynomial=False), log_rising(safe, n))
            log_p = (x0 @ table.slope.T - jnp.where(n > 0, n * share, 0.0)
                     + step_sums(x0, table.steps) - whole)
            return jnp.where(a_total > 0, log_p, 0.0)

        # the complete form first, outside any branch: a missing count (NaN) makes its row's
        # scores NaN, which sends the chunk down the masked path, instead of a pass over x
        scores = complete(x)
        return jax.lax.cond(has_missing(scores), missing, lambda x: scores, x)

    @staticmethod
    def linear_scores(params: MultinomialParams) -> tuple:
        r""":math:`\sum_v x_v \log\theta_{kv}`: the log probabilities, no bias."""
        return params.log_prob, jnp.zeros(params.log_prob.shape[0], params.log_prob.dtype)

    @staticmethod
    def sparse_suff_stats(X, resp) -> MultinomialStats:
        # resp: an (n, K) array or _sparse.Labels; the class sums go first (after the blocked
        # row pass their scatter runs slower)
        counts = _sparse.class_totals(X, resp)
        log_coef = _sparse.row_weights(resp) @ MultinomialFast.sparse_log_normalizer(X)
        return MultinomialStats(counts, np.float64(log_coef))

    @staticmethod
    def sparse_log_likelihood(params: MultinomialParams, X) -> np.ndarray:
        return _sparse.log_matmul(X, params.log_prob)

    @staticmethod
    def sparse_log_predictive(posterior, X) -> np.ndarray:
        r""":math:`\sum_v x_v\log(a_{kv}/A_k) - h(A_k, n) + \sum_v h(a_{kv}, x_v)`
        (:math:`n\log A_k = \sum_v x_v\log A_k`): the first and last sums as one sparse
        product against a table by (count, word) (``_sparse.linear_rising``), ``h(A_k, n)``
        once per distinct row total, in float64."""
        a = np.asarray(posterior.alpha, dtype=np.float64)  # (K, V)
        a_total = a.sum(axis=1)
        out, n = _sparse.linear_rising(X, posterior, lambda: np.log(a / a_total[:, None]), a,
                                       totals=True)
        out -= _sparse.log_rising_by_row(a_total, n, owner=posterior)
        return out

    @staticmethod
    def sparse_log_normalizer(X) -> np.ndarray:
        sums, log_factorials = _sparse.row_totals(X)
        return _sparse.log_factorials(sums) - log_factorials


    @staticmethod
    def scores(table, x, n_levels, exact: bool) -> jax.Array:
        if isinstance(table, DirichletMultinomialShifted):
            return MultinomialFast._log_predictive_shifted(table, x)
        if not isinstance(table, MultinomialShifted):  # the joint density's plain table
            return Multinomial.log_likelihood(table, x)
        # the complete form first, outside the branch: a row with a NaN scores NaN, which
        # tells whether any count is missing without a pass over the chunk
        complete = log_matmul(x.astype(table.delta.dtype), table.delta)

        def missing_shifted(x):
            x0 = jnp.nan_to_num(x, nan=0.0).astype(table.delta.dtype)
            observed = (~jnp.isnan(x)).astype(x0.dtype)
            mass = xlogy(x0.sum(axis=1, keepdims=True), observed @ table.prob.T)
            return log_matmul(x0, table.delta) - mass

        return jax.lax.cond(has_missing(complete), missing_shifted, lambda x: complete, x)
