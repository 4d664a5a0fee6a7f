r"""Multinomial likelihood with a Dirichlet prior: the bag-of-words model.

All columns of the block form one count vector (word counts of a document):

.. math::

    \boldsymbol\theta_k \sim \mathrm{Dirichlet}(\boldsymbol\alpha), \qquad
    \mathbf x_i \mid c_i = k \sim \mathrm{Multinomial}(n_i, \boldsymbol\theta_k),
    \quad n_i = \textstyle\sum_v x_{iv}.

With :math:`N_{kv}` the weighted total count of column :math:`v` in class :math:`k`,
:math:`N_k = \sum_v N_{kv}`, :math:`A = \sum_v \alpha_v` and :math:`V` columns (seeds 000 section
3.3 and 001, case 2):

* ML: :math:`N_{kv}/N_k`;
* posterior mean: :math:`(N_{kv} + \alpha_v)/(N_k + A)`, scikit-learn's ``MultinomialNB(alpha)``;
* MAP: :math:`(N_{kv} + \alpha_v - 1)/(N_k + A - V)`, defined for :math:`\alpha \ge 1`;
* posterior: Dirichlet(:math:`\boldsymbol\alpha + \mathbf N_k`); the posterior predictive of a
  new document is Dirichlet-multinomial,
  :math:`\log\Gamma(A') - \log\Gamma(A' + n_i) + \sum_v \log\Gamma(\alpha'_v + x_{iv}) -
  \log\Gamma(\alpha'_v)` plus the class-free multinomial coefficient;
* evidence: the Dirichlet-multinomial form above with the prior and the class totals, plus the
  sum of every row's multinomial coefficient :math:`\log n_i! - \sum_v \log x_{iv}!`.

Counts may be non-integer (tf-idf weights are common); the densities then use the Gamma function
in place of factorials, as scikit-learn does implicitly. A missing value (NaN) at prediction
makes the row a multinomial over its observed columns (the probabilities renormalised over them),
which equals the model fitted and scored without those columns. At fit time a missing count
simply adds nothing to its column's total (available-case statistics): exact when a column is
missing throughout, an approximation when a document's length is only partly known.
"""

from __future__ import annotations

from functools import cache, partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.scipy.special import gammaln, xlogy
from scipy.special import gammaln as np_gammaln

from . import _sparse
from ._base import (
    COARSE_ROUNDING,
    Family,
    Schema,
    broadcast_hyper,
    centre,
    class_sums,
    dirichlet_draws,
    dist,
    finish_class_sums,
    float64_mode,
    has_missing,
    label_class_sums,
    log_matmul,
    log_rising,
    numeric_block,
    numpyro,
    pseudo_log,
    rising_polynomial,
    sum_rounding,
    xp_of,
)
from ._steps import (
    LOG_FACTORIAL,
    all_small,
    row_sums,
    small_count_log_factorials,
    step_sums,
)


def log_factorial_sum(x: jax.Array) -> jax.Array:
    r"""``(n,)`` row sums of :math:`\log\Gamma(x + 1)` for non-negative ``x``.

    A chunk of integer counts below 256 takes them from the table in one gather
    (``_steps.small_count_log_factorials``, whose pass also says whether the chunk is such a
    chunk); any other chunk takes ``gammaln`` (9-22 ms a 1,024 x 1,000 chunk against about
    1 ms, ``benchmarks/README.md``, "Issue 12, stop 23"). Until stop 35 a bounds pass chose
    among 3 steps, 8 or 16 selects and the gather; the gather alone, with its markers, costs
    less than the bounds pass and the branch it chose (``benchmarks/README.md``, "Stop 35")."""
    sums = small_count_log_factorials(x)
    return _or_gammaln(x, sums, all_small(sums))


def _or_gammaln(x, sums, small) -> jax.Array:
    return jax.lax.cond(small, lambda x: sums, lambda x: row_sums(gammaln(x + 1.0)), x)


#: :data:`LOG_FACTORIAL` in two parts for float32 (:func:`coefficient_rows`): ``HIGH`` on a
#: grid of 1/256, so a row's sum of them is exact in float32 below :data:`HIGH_EXACT`, and
#: ``LOW`` the rest, under 1/512 in magnitude
_LOG_FACTORIAL_HIGH = np.round(LOG_FACTORIAL * 256.0) / 256.0
_LOG_FACTORIAL_LOW = LOG_FACTORIAL - _LOG_FACTORIAL_HIGH
#: a float32 row sum of multiples of 1/256 is exact below 2^16 (24 bits of mantissa)
HIGH_EXACT = 2.0 ** 16


def coefficient_rows(weights, totals, x) -> jax.Array:
    r"""``(5, rows)``: a chunk's row weights :math:`w_i`, row totals :math:`n_i`, and
    :math:`r_i = \sum_v \log x_{iv}!` as two parts :math:`r_i = h_i + l_i` with a flag that
    says whether the parts are exact, the kernel's form of a weighted sum of log multinomial
    coefficients (or of log factorials); ``x`` is the chunk with missing counts as 0. The
    host adds them up in float64 (:func:`finish_coefficient`): in float32 a kernel's own
    weighted sum of :math:`\log n_i! - r_i` was off by 6.5 nats on 200,000 documents (the
    same rounding of :math:`\log 100!` repeated in every row) and by 4,400 on counts in the
    millions.

    A float32 :math:`r_i` is itself rounded by about one unit in its last place, the same
    way in row after row. Where that matters (a row's :math:`r_i` past
    :data:`COEFFICIENT_FLOAT32_MAX`) and the chunk holds integer counts below 256, the
    kernel sums :math:`\log x!` in two parts instead: :math:`h` on a grid of 1/256, whose row
    sums are exact in float32 below :data:`HIGH_EXACT`, and the remainder :math:`l`, under
    1/512 an entry, whose row sums float32 rounds by about 1e-6 at 1,000 columns (against
    about 1e-5 a row accepted below :data:`COEFFICIENT_FLOAT32_MAX`). Other chunks are
    recomputed on the host (:func:`refine_coefficient`), which took 9-25 ms per 2,048 x
    1,000 chunk and made a float32 fit of 2,000-word documents 4x as slow; on an H200 it
    kept a fit of 2,000,000 x 1,000 Poisson counts (mean 1) at 26 s (``benchmarks/
    README.md``, "Stop 30: the GPU")."""
    sums = small_count_log_factorials(x)  # shared with the value checks (XLA: one pass)
    small = all_small(sums)
    r = _or_gammaln(x, sums, small)
    zero = jnp.zeros_like(r)
    if x.dtype != jnp.float32:  # float64: one part, never refined
        return jnp.stack([weights, totals, r, zero, zero])
    split = (jnp.max(r) > COEFFICIENT_FLOAT32_MAX) & small
    high, low = jax.lax.cond(
        split, lambda x: (small_count_log_factorials(x, _LOG_FACTORIAL_HIGH),
                          small_count_log_factorials(x, _LOG_FACTORIAL_LOW)),
        lambda x: (r, zero), x)
    return jnp.stack([weights, totals, high, low,
                      jnp.broadcast_to(split, r.shape).astype(r.dtype)])


#: in float32, a chunk with a row whose :math:`r_i` (or fractional total's
#: :math:`n_i \log n_i`) exceeds this has its rows' terms taken in two parts by the kernel
#: (:func:`coefficient_rows`) or, where it cannot, recomputed on the host in float64
#: (:func:`refine_coefficient`). A float32 :math:`r_i` is rounded by about one unit in the
#: last place, the same way in row after row: 100,000 rows of 200 Poisson counts of mean 2
#: (:math:`r_i` about 150) summed to 1.35 nats off, 100-word documents (:math:`r_i` under 30)
#: to 0.0012
COEFFICIENT_FLOAT32_MAX = 128.0


def refine_coefficient(rows: np.ndarray, read) -> np.ndarray:
    """``rows`` (:func:`coefficient_rows`, float64 on the host) with :math:`n_i` and
    :math:`r_i` recomputed in float64 from the chunk (``read()``, its values as the kernel
    read them, missing counts as 0) when float32 may have rounded them by more than about 1e-5
    a row (:data:`COEFFICIENT_FLOAT32_MAX`) and the kernel's two parts are not exact; as they
    are otherwise (and in float64 mode)."""
    if float64_mode():
        return rows
    totals, high, low, split = rows[1], rows[2], rows[3], rows[4]
    fractional = totals != np.floor(totals)
    size = high + low + np.where(fractional, totals * np.log1p(np.abs(totals)), 0.0)
    if not np.max(size, initial=0.0) > COEFFICIENT_FLOAT32_MAX:
        return rows
    if np.all(split > 0) and np.max(high, initial=0.0) < HIGH_EXACT:
        return rows  # integer counts (so integer totals): the parts are exact
    x = np.asarray(read())
    if x.dtype.kind == "f" and np.isnan(x).any():
        x = np.where(np.isnan(x), 0, x)
    out = rows.copy()
    out[1, :x.shape[0]] = x.sum(axis=1, dtype=np.float64)
    out[3] = 0.0
    # (a chunk the kernel flagged, -inf or a negative count, was refused before this)
    if x.max(initial=0) < LOG_FACTORIAL.shape[0] and np.array_equal(x, np.floor(x)):
        # the float64 table: 9-25 ms for 2,048 x 1,000 counts, against 45 ms by gammaln
        out[2, :x.shape[0]] = np.take(LOG_FACTORIAL, x.astype(np.intp)).sum(axis=1)
    else:
        out[2, :x.shape[0]] = np_gammaln(x.astype(np.float64) + 1.0).sum(axis=1)
    return out


def finish_coefficient(rows, with_totals: bool) -> np.float64:
    r"""float64 :math:`\sum_i w_i(\log n_i! - r_i)` (``with_totals``: the Multinomial's log
    coefficient) or :math:`\sum_i w_i r_i` (the Poisson's log factorials) from
    :func:`coefficient_rows`."""
    w, n, high, low, _ = np.asarray(rows, dtype=np.float64)
    r = high + low
    return np.float64(w @ (log_factorial(n) - r) if with_totals else w @ r)


#: row totals below this take :math:`\log n!` from a float64 table (:func:`log_factorial`)
TOTALS_TABLE = 1 << 16


@cache
def _totals_table() -> np.ndarray:
    return np_gammaln(np.arange(TOTALS_TABLE) + 1.0)


def log_factorial(n: np.ndarray) -> np.ndarray:
    r"""float64 :math:`\log n!` of row totals: looked up (the table holds ``gammaln``'s own
    values) when they are integers below :data:`TOTALS_TABLE`, else ``gammaln(n + 1)``. On
    an H200 a device-resident fit of 2,000,000 rows spent 49 ms of its 198 ms in ``gammaln``
    of 65,536-row chunks on the host."""
    if n.size and n.min() >= 0 and n.max() < TOTALS_TABLE:
        index = n.astype(np.intp)
        if np.array_equal(index, n):
            return _totals_table()[index]
    return np_gammaln(n + 1.0)


def _stats_of_chunk(x, class_totals, row_weights) -> MultinomialStats:
    """A chunk's column totals per class and its rows' log multinomial coefficient terms
    (:func:`coefficient_rows`).

    The complete form runs on the raw chunk, outside any branch, and the row totals it needs
    tell whether a count is missing (NaN); only such a chunk is redone with its missing counts
    as 0. On 1,024 x 1,000 float64 documents, wrapping the whole computation in a branch on a
    separate NaN check (and zeroing NaN again for the coefficient) cost 2.6 ms a chunk against
    1.8 ms this way (``benchmarks/README.md``, "Issue 12, stop 23")."""
    def stats(x, totals, observed=None):
        return MultinomialStats(class_totals(x, observed),
                                coefficient_rows(row_weights, totals, x))

    totals = row_sums(x)  # NaN in a row with a missing count

    def observed_only(x):
        x0 = jnp.nan_to_num(x, nan=0.0)
        return stats(x0, row_sums(x0), (~jnp.isnan(x)).astype(x0.dtype))

    complete = stats(x, totals)
    return jax.lax.cond(jnp.isnan(jnp.sum(totals)), observed_only, lambda x: complete, x)


class MultinomialDirichletPrior(NamedTuple):
    alpha: jax.Array  # (V,) prior, or (K, V) posterior


class MultinomialStats(NamedTuple):
    counts: jax.Array  # (K, V) weighted column totals per class
    log_coef: jax.Array  # () weighted sum of the rows' log multinomial coefficients
    # (a kernel's chunk holds its rows' terms instead, ``coefficient_rows``)


class MultinomialParams(NamedTuple):
    log_prob: jax.Array  # (K, V)


class MultinomialShifted(NamedTuple):
    """The plug-in table as the score kernel reads it (``Multinomial.kernel_table``)."""

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


class Multinomial(Family):
    """Count columns that together form one multinomial vector per row (bag of words).

    Parameters
    ----------
    alpha : float or array-like of shape (n_columns,), default=1.0
        Dirichlet concentration over the columns; ``alpha`` is scikit-learn's ``alpha`` under
        ``method="mean"`` (Lidstone smoothing; 1 is Laplace).
    """

    name = "multinomial"
    param_names = ("probs",)
    nonnegative_stats = ("counts",)
    sklearn_view = "multinomial"
    supports_sparse = True
    value_checks = {"nonnegative": True, "small_counts": True}
    stats_type = MultinomialStats
    params_type = MultinomialParams
    joint_columns = True
    host_numeric = True
    product_scores = True
    _hyper = ("alpha",)

    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        if _sparse.sparse.issparse(values):
            return _sparse.check_sparse(values, schema, "Multinomial")
        return numeric_block(values, schema, "Multinomial", dtype, nonnegative=True)

    def prior(self, schema: Schema) -> MultinomialDirichletPrior:
        return MultinomialDirichletPrior(
            broadcast_hyper(self.alpha, len(schema.columns), "alpha", "Multinomial",
                            columns=schema.columns))

    def check_prior(self, prior, schema: Schema, method: str) -> None:
        if method == "map" and np.any(prior.alpha < 1):
            col = schema.columns[int(np.argmax(prior.alpha < 1))]
            raise ValueError(
                f"column {col!r}: the Multinomial MAP estimate needs Dirichlet concentration "
                f">= 1 (got {prior.alpha.min()}); use method='mean' or raise alpha.")

    @staticmethod
    def suff_stats(x, resp, n_levels=None) -> MultinomialStats:
        return _stats_of_chunk(x.astype(resp.dtype), partial(class_sums, resp),
                               jnp.sum(resp, axis=1))

    @staticmethod
    def label_stats(x, labels, n_levels=None) -> MultinomialStats:
        """:meth:`suff_stats` summed by label (no ``(rows, classes)`` one-hot)."""
        return _stats_of_chunk(x.astype(labels.dtype),
                               partial(label_class_sums, labels), labels.weights)

    @staticmethod
    def finish_stats(stats: MultinomialStats, shift) -> MultinomialStats:
        return MultinomialStats(finish_class_sums(stats.counts),
                                finish_coefficient(stats.log_coef, with_totals=True))

    @staticmethod
    def refine_stats(stats: MultinomialStats, read) -> MultinomialStats:
        return stats._replace(log_coef=refine_coefficient(stats.log_coef, read))

    @staticmethod
    def merge_stats(a: MultinomialStats, b: MultinomialStats) -> MultinomialStats:
        return MultinomialStats(a.counts + b.counts, a.log_coef + b.log_coef)

    @staticmethod
    def estimate(prior, stats: MultinomialStats, method: str) -> MultinomialParams:
        pseudo = {"ml": 0.0, "map": prior.alpha - 1.0, "mean": prior.alpha}[method]
        num = stats.counts + pseudo
        xp = xp_of(prior, stats)  # NumPy float64 on the host, JAX when traced
        return MultinomialParams(xp.log(num) - xp.log(num.sum(axis=1, keepdims=True)))

    @staticmethod
    def kernel_table(table, exact: bool, joint: bool):
        r"""Tables relative to a reference class, in float64: with counts in the thousands
        :math:`\sum_v x_v \log\theta_{kv}` is a large number that differs little between
        classes, and float32 would lose the difference."""
        if exact:
            return Multinomial.exact_table(table, 1, joint), None
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
        the float32 property test checks the agreement itself); plus, per class, the
        accumulation's rounding, which grows with the size the partial sums reach: the
        score's plus that root sum of squares, the table's entries relative to their mean over
        the classes (``_base.sum_rounding``, ``_base.centre``). A row
        with missing counts adds its renormalisation's rounding (twice epsilon times its
        total)."""
        shifted = (MultinomialShifted, DirichletMultinomialShifted)
        if not isinstance(table, shifted) or float64_mode():
            return jnp.zeros(x.shape[0])  # float64 kernels: nothing to bound (no pass over x)
        x0 = jnp.nan_to_num(x, nan=0.0).astype(table.rounding.dtype)
        products = jnp.sqrt((x0 * x0) @ (table.rounding * table.rounding))
        # the terms' root sum of squares (``table.rounding`` holds 2 eps max |delta|)
        spread = products / (2 * jnp.finfo(table.rounding.dtype).eps)

        def renormalised(x):
            # a row with missing counts: its total n times the log of its observed mass (or
            # share), rounded relatively once (counts near 1,000 with 20% missing: 1.4e-4
            # off); for the exact predictive also h(A_observed, n), computed whole in
            # float32, which is at most n log(1 + n / A)
            eps = jnp.finfo(table.rounding.dtype).eps
            observed = (~jnp.isnan(x)).astype(table.rounding.dtype)
            n = jnp.sum(jnp.nan_to_num(x, nan=0.0).astype(observed.dtype), axis=1)
            bound = 2 * eps * n
            if isinstance(table, DirichletMultinomialShifted):
                a_obs = jnp.min(observed @ table.alpha.T, axis=1)
                bound = bound + 2 * eps * n * jnp.log1p(n / jnp.where(a_obs > 0, a_obs, 1.0))
            return jnp.where(jnp.all(observed > 0, axis=1), 0.0, bound)

        # the raw chunk goes into the branch (a cond's operand is materialised: x0 was)
        renorm = jax.lax.cond(has_missing(x), renormalised,
                              lambda x: jnp.zeros(x.shape[0], table.rounding.dtype), x)
        f = x.shape[1]
        # the part every class shares: where it is small the per-class part (the scores'
        # accumulation) is weighed by the class probabilities in the kernel, and the
        # per-class product below is not needed (it took the plug-in from 98-136 to 167-182
        # ms on 100,000 x 1,000 documents when run on every chunk)
        shared = products + renorm + sum_rounding(spread, f)
        coarse = shared[:, None] + sum_rounding(jnp.abs(scores), f)

        def per_class(x):
            # each class's own terms: a class far from the row (an unused pixel, a small
            # alpha's log 0.001) then counts only as much as its probability (the class
            # weighting); digits under alpha = 0.001 were refused at 2.3e-4, 6e-6 off
            weights = table.delta if isinstance(table, MultinomialShifted) else table.slope
            weights = jnp.where(jnp.isfinite(weights), weights, 0.0)
            x0 = jnp.nan_to_num(x, nan=0.0).astype(weights.dtype)
            spread_k = jnp.sqrt((x0 * x0) @ (weights * weights).T)
            eps = jnp.finfo(table.rounding.dtype).eps
            return (2 * eps * spread_k + renorm[:, None]
                    + sum_rounding(jnp.abs(scores) + spread_k, f))

        # the raw chunk again as the operand (not x0, which the cond would materialise)
        return jax.lax.cond(jnp.max(shared) <= COARSE_ROUNDING, lambda _: coarse, per_class, x)

    @staticmethod
    def posterior(prior, stats: MultinomialStats) -> MultinomialDirichletPrior:
        return MultinomialDirichletPrior(prior.alpha + stats.counts)

    @staticmethod
    def log_likelihood(params, x, n_levels=None) -> jax.Array:
        if isinstance(params, MultinomialShifted):  # the kernel's form (``kernel_table``)
            # the complete form first, outside the branch: a row with a NaN scores NaN, which
            # tells whether any count is missing without a pass over the chunk
            complete = log_matmul(x.astype(params.delta.dtype), params.delta)

            def missing_shifted(x):
                x0 = jnp.nan_to_num(x, nan=0.0).astype(params.delta.dtype)
                observed = (~jnp.isnan(x)).astype(x0.dtype)
                mass = xlogy(x0.sum(axis=1, keepdims=True), observed @ params.prob.T)
                return log_matmul(x0, params.delta) - mass

            return jax.lax.cond(has_missing(complete), missing_shifted, lambda x: complete, x)

        def complete(x):
            return log_matmul(x.astype(params.log_prob.dtype), params.log_prob)

        def missing(x):  # a row with missing columns is a multinomial over its observed ones
            x0 = jnp.nan_to_num(x, nan=0.0).astype(params.log_prob.dtype)
            observed = (~jnp.isnan(x)).astype(x0.dtype)
            mass = xlogy(x0.sum(axis=1, keepdims=True), observed @ jnp.exp(params.log_prob).T)
            return log_matmul(x0, params.log_prob) - mass

        return jax.lax.cond(has_missing(x), missing, complete, x)

    @staticmethod
    def log_predictive(posterior, x, n_levels=None) -> jax.Array:
        if isinstance(posterior, DirichletMultinomialShifted):
            return Multinomial._log_predictive_shifted(posterior, x)
        a = posterior.alpha  # (K, V)
        x0 = jnp.nan_to_num(x, nan=0.0).astype(a.dtype)
        observed = (~jnp.isnan(x)).astype(a.dtype)
        # only the observed columns' concentration enters the Dirichlet-multinomial normaliser
        a_total = observed @ a.T  # (n, K)
        per_column = gammaln(a[None, :, :] + x0[:, None, :]) - gammaln(a)[None]  # (n, K, V)
        per_column = jnp.sum(per_column * observed[:, None, :], axis=-1)
        n = x0.sum(axis=1, keepdims=True)
        # a row with no observed column has a_total = 0 and contributes nothing
        safe = jnp.where(a_total > 0, a_total, 1.0)
        return jnp.where(a_total > 0, gammaln(safe) - gammaln(safe + n), 0.0) + per_column

    @staticmethod
    def _log_predictive_shifted(table: DirichletMultinomialShifted, x) -> jax.Array:
        def complete(x):  # every column observed: the plug-in's product plus the steps
            x0 = x.astype(table.slope.dtype)
            # the row totals as one more column of the product: a row reduction of its own
            # was a second pass over the chunk (0.29 ms of 1,024 x 1,000 float64)
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
            # log(A_observed / A) from the unobserved share, exact where nothing is missing
            share = jnp.log1p(-((1.0 - observed) @ a.T) / table.total)
            safe = jnp.where(a_total > 0, a_total, 1.0)
            # the quadratic parts of h(A, n) from float64 tables (relative to a reference
            # class unless joint); a row with missing counts has its own observed total,
            # whose h is computed whole
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
    def log_normalizer(x) -> jax.Array:
        x0 = jnp.nan_to_num(x, nan=0.0)  # a missing count counts as 0 (no-op when complete)
        return gammaln(row_sums(x0) + 1.0) - log_factorial_sum(x0)

    @staticmethod
    def log_evidence(prior, stats: MultinomialStats) -> jax.Array:
        a0, a = prior.alpha, prior.alpha + stats.counts
        per_class = (gammaln(a0.sum()) - gammaln(a.sum(axis=1))
                     + jnp.sum(gammaln(a) - gammaln(a0), axis=1))
        return jnp.sum(per_class) + stats.log_coef

    @staticmethod
    def describe(params: MultinomialParams, schema: Schema, classes) -> dict:
        prob = np.exp(np.asarray(params.log_prob))
        return {tuple(schema.columns): pd.DataFrame(prob, index=pd.Index(classes, name="class"),
                                                    columns=list(schema.columns))}

    @staticmethod
    def from_tables(tables: dict, schema: Schema, classes) -> MultinomialParams:
        """``tables[column][class]`` is the probability of that column's word in the class."""
        p = np.array([[float(tables[col][c]) for col in schema.columns] for c in classes])
        if np.any(p < 0) or not np.allclose(p.sum(axis=1), 1.0, atol=1e-6):
            raise ValueError("Multinomial tables: each class's word probabilities must be "
                             "non-negative and sum to 1 over the block's columns.")
        with np.errstate(divide="ignore"):
            return MultinomialParams(jnp.asarray(np.log(p)))

    # ------------------------------------------------------------------ scipy.sparse input
    @staticmethod
    def sparse_suff_stats(X, resp) -> MultinomialStats:
        # resp: an (n, K) array or _sparse.Labels; the class sums go first (after the blocked
        # row pass their scatter ran at half speed, measured)
        counts = _sparse.class_totals(X, resp)
        log_coef = _sparse.row_weights(resp) @ Multinomial.sparse_log_normalizer(X)
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
        out -= _sparse.log_rising_by_row(a_total, n)
        return out

    @staticmethod
    def sparse_log_normalizer(X) -> np.ndarray:
        sums, log_factorials = _sparse.row_totals(X)
        return _sparse.log_factorials(sums) - log_factorials

    @staticmethod
    def sample_params(prior, n_classes: int, site: str):
        with numpyro.plate("class", n_classes, dim=-1):
            probs = numpyro.sample(f"{site}.probs", dist.Dirichlet(prior.alpha))
        return {"probs": probs}

    @staticmethod
    def observe(params, x, y, site: str, total_count=None, **kw) -> None:
        if x is None:  # simulation: documents of ``total_count`` words (lengths are not modelled)
            with numpyro.plate("row", y.shape[0], dim=-1):
                numpyro.sample(f"{site}.x", dist.Multinomial(total_count, params["probs"][y]))
            return
        # written as its log density so non-integer counts and missing columns are scored
        x0 = jnp.nan_to_num(x, nan=0.0)
        log_lik = jnp.sum(xlogy(x0, params["probs"][y]), axis=-1) + Multinomial.log_normalizer(x0)
        with numpyro.plate("row", x.shape[0], dim=-1):
            numpyro.factor(f"{site}.x", log_lik)

    @staticmethod
    def stats_log_likelihood(sample, stats: MultinomialStats) -> jax.Array:
        return jnp.sum(xlogy(stats.counts, sample["probs"])) + stats.log_coef

    @staticmethod
    def sample_posterior(rng, posterior, n: int) -> dict:
        return {"probs": dirichlet_draws(rng, np.asarray(posterior.alpha, np.float64), n)}

    @staticmethod
    def params_from_sample(sample, posterior) -> MultinomialParams:
        return MultinomialParams(jnp.log(sample["probs"]))

    @staticmethod
    def posterior_distributions(posterior) -> dict:
        return {"probs": dist.Dirichlet(posterior.alpha)}

    def dependence_units(self, x, prior: dict, schema: Schema) -> list:
        """One unit: the block's columns share the document length (rows with a missing count
        left out)."""
        return [(tuple(schema.columns), "multinomial", x, ~np.isnan(x).any(axis=1),
                 {"alpha": prior["alpha"].astype(np.float64)}, "")]

    def decode(self, values: np.ndarray, schema: Schema) -> np.ndarray:
        return values.astype(np.int64)

    @staticmethod
    def simulation_total(stats: MultinomialStats) -> float:
        return float(np.sum(np.asarray(stats.counts)))

    @staticmethod
    def log_prior_at(prior: MultinomialDirichletPrior, params: MultinomialParams, method: str,
                     n_classes: int) -> float:
        shift = -1.0 if method == "map" else 0.0
        return pseudo_log(np.asarray(prior.alpha) + shift, params.log_prob)
