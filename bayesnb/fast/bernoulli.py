"""The fast form of :class:`~bayesnb.families.Bernoulli`: statistics summed by label, the score
table as one product relative to a reference class with its float32 rounding bound, and the
``scipy.sparse`` paths."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..families._base import float64_mode, has_missing
from ..families.bernoulli import Bernoulli, BernoulliParams, BernoulliStats, BetaPrior
from . import FastForm, _sparse, register
from ._buckets import leading
from ._float32 import centre, sum_rounding


class BernoulliLinear(NamedTuple):
    r"""A table with no zero probability as the score kernel reads it
    (``BernoulliFast.kernel_table``): :math:`\sum_j x_j(\log\theta_{kj} - \log(1-\theta_{kj}))
    + \sum_j \log(1-\theta_{kj})`, one product per chunk, with the slopes, the
    :math:`\log(1-\theta)` and their float64 sum over the columns ``bias`` made on the host;
    relative to a reference class per column unless the table serves the joint density."""

    slope: jax.Array  # (K, F) log theta - log(1 - theta)
    log1m_p: jax.Array  # (K, F) log(1 - theta), for a row with missing values
    bias: jax.Array  # (K,) log1m_p summed over the columns, in float64
    #: () a bound on any row's root sum of squared terms, sqrt(sum_j max_k (s_kj^2 +
    #: log(1 - theta_kj)^2)) over every column (a 0/1 row's terms are at most those): the
    #: rounding bound's, with no pass over the chunk (a product per chunk would be costly)
    spread: jax.Array = np.zeros(())


@register
class BernoulliFast(FastForm):
    family = Bernoulli
    host_numeric = True
    product_scores = True
    linear_in_x = True
    supports_sparse = True
    host_maths = True
    dense_host_stats = True
    class_buckets = True

    @staticmethod
    def class_axes(tree):
        """Classes lead every field but :class:`BernoulliLinear`'s class-free ``spread``."""
        if isinstance(tree, BernoulliLinear):
            return leading(tree, spread=None)
        return leading(tree)

    @staticmethod
    def label_stats(x, labels, n_levels=None) -> BernoulliStats:
        """:meth:`suff_stats` summed by label (no ``(rows, classes)`` one-hot).

        A chunk with missing values sums the observed flags and the values side by side. A
        complete chunk has every value observed, so its counts are the class weights, and the
        sums must leave a column of all ones in a class at exactly its weight (the ML
        estimate's ``count - ones`` is then exactly 0, not a rounding): with integer weights
        every partial sum is an integer (exact below ``2**24`` in float32), so one sum of the
        values and one of the weights do; otherwise a column of ones is summed beside the
        values, in the same order.

        The plain sums are taken first, outside any branch (a product inside one ran slower
        on XLA:CPU), and tell whether a value is missing: a NaN makes its class's sum NaN."""
        f, k = x.shape[1], labels.n_classes
        dtype = labels.dtype
        sums = labels.sum(x.astype(dtype))

        def counted(x):
            return BernoulliStats(jnp.broadcast_to(labels.count()[:, None], (k, f)), sums)

        def weighted(x):
            sums = labels.sum(jnp.concatenate([x.astype(dtype), jnp.ones((x.shape[0], 1), dtype)],
                                              axis=1))
            return BernoulliStats(jnp.broadcast_to(sums[:, f:], (k, f)), sums[:, :f])

        def complete(x):
            w = labels.weights
            exact = jnp.all(w == jnp.floor(w)) & (jnp.sum(w) < (2.0**24 if dtype == jnp.float32
                                                                 else 2.0**53))
            return jax.lax.cond(exact, counted, weighted, x)

        def missing(x):
            observed = ~jnp.isnan(x)
            sums = labels.sum(jnp.concatenate([observed.astype(dtype),
                                               jnp.where(observed, x, 0).astype(dtype)], axis=1))
            return BernoulliStats(sums[:, :f], sums[:, f:])

        return jax.lax.cond(jnp.isnan(jnp.sum(sums)), missing, complete, x)

    @staticmethod
    def kernel_table(table, exact: bool, joint: bool):
        """The plug-in or posterior-predictive table as :class:`BernoulliLinear` when no
        probability is 0 or 1 (float64, on the host; relative to a reference class unless
        ``joint``), else the log probabilities (``log_likelihood``'s guarded products)."""
        if exact:
            a, b = (np.asarray(v, dtype=np.float64) for v in table)
            log_p, log1m_p = np.log(a) - np.log(a + b), np.log(b) - np.log(a + b)
        else:
            log_p, log1m_p = (np.asarray(v, dtype=np.float64) for v in table)
        if not (np.all(np.isfinite(log_p)) and np.all(np.isfinite(log1m_p))):
            return BernoulliParams(log_p, log1m_p), None
        slope = log_p - log1m_p
        if not joint:  # a class-free constant per row dropped
            slope, log1m_p = slope - centre(slope), log1m_p - centre(log1m_p)
        spread = np.sqrt(np.sum(np.max(slope * slope + log1m_p * log1m_p, axis=0)))
        return BernoulliLinear(slope, log1m_p, log1m_p.sum(axis=1), spread), None

    @staticmethod
    def score_rounding(table, x, scores) -> jax.Array:
        r"""``(n, K)`` bounds on the float32 rounding of the kernel's scores: the products'
        roundings (twice epsilon times a bound on the root sum of squares of a row's terms,
        ``BernoulliLinear.spread``; a complete row's bias is one float64 sum, rounded once),
        plus the accumulation's (``_base.sum_rounding``), in proportion to the size the
        partial sums reach: at most :math:`\sum_j x_j \max_k |s_{kj}|` (the slopes relative
        to their mean over the classes, ``_base.centre``; a row with missing values: every
        column's largest slope and :math:`\log(1-\theta)`). Without the bound, many binary
        columns of two close classes would move the probabilities unrefused; with the terms'
        root sum of squares in its place, 5,000 columns whose halves favour opposite classes
        moved them by 4.3e-4."""
        if float64_mode() or not isinstance(table, (BernoulliLinear, BernoulliParams)):
            return jnp.zeros(x.shape[0])
        f = x.shape[1]
        if isinstance(table, BernoulliParams):  # guarded products: two sums of one sign
            return 2 * sum_rounding(jnp.abs(jnp.where(jnp.isfinite(scores), scores, 0.0)), f)
        eps = jnp.finfo(table.slope.dtype).eps
        largest = jnp.max(jnp.abs(table.slope), axis=0)
        reach = x.astype(largest.dtype) @ largest  # NaN where a value is missing
        worst = jnp.sum(largest) + jnp.sum(jnp.max(jnp.abs(table.log1m_p), axis=0))
        reach = jnp.where(jnp.isnan(reach), worst, reach)[:, None]
        return (2 * eps * table.spread + eps * jnp.abs(table.bias)
                + sum_rounding(jnp.broadcast_to(reach, scores.shape), f))

    @staticmethod
    def linear_scores(params: BernoulliParams) -> tuple:
        r""":math:`\sum_j x_j (\log\theta_{kj} - \log(1-\theta_{kj})) + \sum_j
        \log(1-\theta_{kj})`, the complete-data branch of ``log_likelihood``."""
        return params.log_p - params.log1m_p, jnp.sum(params.log1m_p, axis=1)

    @staticmethod
    def sparse_suff_stats(X, resp) -> BernoulliStats:
        # resp: an (n, K) array or _sparse.Labels; sparse input has no missing values, so every
        # column is observed in every row
        count = np.repeat(_sparse.class_weights(resp)[:, None], X.shape[1], axis=1)
        return BernoulliStats(count, _sparse.class_totals(X, resp))

    @staticmethod
    def sparse_log_likelihood(params: BernoulliParams, X) -> np.ndarray:
        # sum_j log(1 - p_j) + x . (log p - log(1 - p)) in one product; the -inf of ML's p = 0
        # or 1 is zeroed there (0 * inf is NaN) and its impossible value set to -inf after
        def operands():
            log_p = np.asarray(params.log_p, dtype=np.float64)
            log1m_p = np.asarray(params.log1m_p, dtype=np.float64)
            finite_p, finite_q = np.isfinite(log_p), np.isfinite(log1m_p)
            one, zero = np.where(finite_p, log_p, 0.0), np.where(finite_q, log1m_p, 0.0)
            never_one = None if finite_p.all() else (~finite_p).astype(float)
            never_zero = None if finite_q.all() else (~finite_q).astype(float)
            return (_sparse.Operand.of(one - zero), zero.sum(axis=1),
                    None if never_one is None else _sparse.Operand.of(never_one),
                    None if never_zero is None else (_sparse.Operand.of(never_zero),
                                                     never_zero.sum(axis=1)))

        weights, base, never_one, never_zero = _sparse.prepared(
            (params.log_p, params.log1m_p), operands)
        out = _sparse.times(X, weights)
        out += base
        if never_one is not None:  # p = 0: a one in that column is impossible
            out[_sparse.times(X, never_one) > 0] = -np.inf
        if never_zero is not None:  # p = 1: a zero in that column is impossible
            zeros_possible, columns = never_zero
            out[_sparse.times(X, zeros_possible) < columns] = -np.inf
        return out

    @staticmethod
    def sparse_log_predictive(posterior: BetaPrior, X) -> np.ndarray:
        a, b = (np.asarray(v, dtype=np.float64) for v in posterior)
        return BernoulliFast.sparse_log_likelihood(
            BernoulliParams(np.log(a) - np.log(a + b), np.log(b) - np.log(a + b)), X)

    @staticmethod
    def sparse_log_normalizer(X) -> np.ndarray:
        return np.zeros(X.shape[0])


    @staticmethod
    def scores(table, x, n_levels, exact: bool) -> jax.Array:
        if not isinstance(table, BernoulliLinear):  # a probability of 0 or 1: guarded products
            return Bernoulli.log_likelihood(table, x)
        # the complete form first, outside the branch: a NaN in a row makes its scores NaN,
        # so they tell whether any value is missing without a pass over the chunk
        complete = x.astype(table.slope.dtype) @ table.slope.T + table.bias

        def missing_linear(x):
            observed = ~jnp.isnan(x)
            x0 = jnp.where(observed, x, 0).astype(table.slope.dtype)
            return x0 @ table.slope.T + observed.astype(x0.dtype) @ table.log1m_p.T

        return jax.lax.cond(has_missing(complete), missing_linear, lambda x: complete, x)
