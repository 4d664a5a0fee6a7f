r"""Bernoulli likelihood with a Beta prior, one coin per class and column.

.. math::

    \theta_{kj} \sim \mathrm{Beta}(\alpha_j, \beta_j), \qquad
    x_{ij} \mid c_i = k \sim \mathrm{Bernoulli}(\theta_{kj}).

With :math:`s_{kj}` the (weighted) number of ones and :math:`n_{kj}` the number of observed
values in class :math:`k`, column :math:`j`:

* ML: :math:`s/n` (Barber eq. 5.4, seed 000);
* posterior mean: :math:`(s + \alpha)/(n + \alpha + \beta)`; with :math:`\alpha=\beta=M` this is
  Barber's pseudo-count smoothing (eq. 3.7) and scikit-learn's ``BernoulliNB(alpha=M)``;
* MAP: :math:`(s + \alpha - 1)/(n + \alpha + \beta - 2)`, defined for :math:`\alpha,\beta\ge 1`;
  so MAP with :math:`\alpha = \beta = M + 1` equals the posterior mean with :math:`M` (Laplace
  smoothing, :math:`M=1`, is MAP under Beta(2, 2));
* posterior: Beta(:math:`\alpha + s`, :math:`\beta + n - s`); the posterior predictive of one new
  value is Bernoulli with the posterior mean (Beta-Bernoulli = BetaBinomial with one trial);
* evidence: :math:`\sum_{kj} \log B(\alpha + s, \beta + n - s) - \log B(\alpha, \beta)`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.scipy.special import gammaln, xlog1py, xlogy

from . import _sparse
from ._base import (
    Family,
    Schema,
    broadcast_hyper,
    centre,
    dist,
    float64_mode,
    has_missing,
    log_matmul,
    numeric_block,
    numpyro,
    pseudo_log,
    sum_rounding,
    xp_of,
)


class BetaPrior(NamedTuple):
    alpha: jax.Array  # (F,) prior, or (K, F) posterior
    beta: jax.Array


class BernoulliStats(NamedTuple):
    count: jax.Array  # (K, F) weighted number of observed values
    ones: jax.Array  # (K, F) weighted number of ones


class BernoulliParams(NamedTuple):
    log_p: jax.Array  # (K, F) log theta
    log1m_p: jax.Array  # (K, F) log(1 - theta)


class BernoulliLinear(NamedTuple):
    r"""A table with no zero probability as the score kernel reads it
    (``Bernoulli.kernel_table``): :math:`\sum_j x_j(\log\theta_{kj} - \log(1-\theta_{kj}))
    + \sum_j \log(1-\theta_{kj})`, one product per chunk, with the slopes, the
    :math:`\log(1-\theta)` and their float64 sum over the columns ``bias`` made on the host;
    relative to a reference class per column unless the table serves the joint density."""

    slope: jax.Array  # (K, F) log theta - log(1 - theta)
    log1m_p: jax.Array  # (K, F) log(1 - theta), for a row with missing values
    bias: jax.Array  # (K,) log1m_p summed over the columns, in float64
    #: () a bound on any row's root sum of squared terms, sqrt(sum_j max_k (s_kj^2 +
    #: log(1 - theta_kj)^2)) over every column (a 0/1 row's terms are at most those): the
    #: rounding bound's, with no pass over the chunk (a product per chunk cost 40%)
    spread: jax.Array = np.zeros(())


class Bernoulli(Family):
    """Binary columns (0/1 or booleans), each a Bernoulli per class with a Beta prior.

    Parameters
    ----------
    alpha, beta : float or array-like of shape (n_columns,), default=1.0
        Beta prior on P(x = 1 | class); ``alpha`` counts virtual ones, ``beta`` virtual zeros.
        The default Beta(1, 1) is uniform and its posterior mean is Laplace's add-one rule.
    """

    name = "bernoulli"
    param_names = ("theta",)
    nonnegative_stats = ("count", "ones")
    stated_tables = True
    sklearn_view = "bernoulli"
    predictive_is_plug_in = True
    supports_sparse = True
    value_checks = {"binary": True}
    stats_type = BernoulliStats
    params_type = BernoulliParams
    host_numeric = True
    product_scores = True
    _hyper = ("alpha", "beta")

    def __init__(self, alpha=1.0, beta=1.0):
        self.alpha = alpha
        self.beta = beta

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        if _sparse.sparse.issparse(values):
            return _sparse.check_sparse(values, schema, "Bernoulli", binary=True)
        return numeric_block(values, schema, "Bernoulli", dtype, binary=True)

    def prior(self, schema: Schema) -> BetaPrior:
        f, cols = len(schema.columns), schema.columns
        return BetaPrior(broadcast_hyper(self.alpha, f, "alpha", "Bernoulli", columns=cols),
                         broadcast_hyper(self.beta, f, "beta", "Bernoulli", columns=cols))

    def check_prior(self, prior: BetaPrior, schema: Schema, method: str) -> None:
        bad = (prior.alpha < 1) | (prior.beta < 1)
        if method == "map" and np.any(bad):
            raise ValueError(
                f"column {schema.columns[int(np.argmax(bad))]!r}: the Bernoulli MAP estimate "
                "needs alpha >= 1 and beta >= 1 (a Beta density with a "
                "parameter below 1 has its mode at 0 or 1 or none at all); use method='mean' "
                "or raise the concentration."
            )

    @staticmethod
    def suff_stats(x, resp, n_levels=None) -> BernoulliStats:
        observed = ~jnp.isnan(x)
        return BernoulliStats(resp.T @ observed.astype(resp.dtype),
                              resp.T @ jnp.where(observed, x, 0).astype(resp.dtype))

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
    def estimate(prior: BetaPrior, stats: BernoulliStats, method: str) -> BernoulliParams:
        a, b = prior.alpha, prior.beta
        s, f = stats.ones, stats.count - stats.ones
        if method == "ml":
            ones, zeros = s, f
        elif method == "map":
            ones, zeros = s + a - 1, f + b - 1
        elif method == "mean":
            ones, zeros = s + a, f + b
        else:
            raise ValueError(f"unknown plug-in method {method!r}")
        total = ones + zeros
        xp = xp_of(prior, stats)  # NumPy float64 on the host, JAX when traced
        return BernoulliParams(xp.log(ones) - xp.log(total), xp.log(zeros) - xp.log(total))

    @staticmethod
    def posterior(prior: BetaPrior, stats: BernoulliStats) -> BetaPrior:
        return BetaPrior(prior.alpha + stats.ones, prior.beta + stats.count - stats.ones)

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
    def log_likelihood(params: BernoulliParams, x, n_levels=None) -> jax.Array:
        if isinstance(params, BernoulliLinear):  # the kernel's form (``kernel_table``)
            # the complete form first, outside the branch: a NaN in a row makes its scores
            # NaN, so they tell whether any value is missing without a pass over the chunk
            complete = x.astype(params.slope.dtype) @ params.slope.T + params.bias

            def missing_linear(x):
                observed = ~jnp.isnan(x)
                x0 = jnp.where(observed, x, 0).astype(params.slope.dtype)
                return x0 @ params.slope.T + observed.astype(x0.dtype) @ params.log1m_p.T

            return jax.lax.cond(has_missing(complete), missing_linear, lambda x: complete, x)

        observed = ~jnp.isnan(x)
        x0 = jnp.where(observed, x, 0).astype(params.log_p.dtype)

        def general(_):  # x log p + (1 - x) log(1 - p) over the observed entries
            return (log_matmul(x0, params.log_p)
                    + log_matmul(observed.astype(x0.dtype) - x0, params.log1m_p))

        def complete(_):  # nothing missing, no zero probability: one matmul
            return x0 @ (params.log_p - params.log1m_p).T + jnp.sum(params.log1m_p, axis=1)

        finite = jnp.all(jnp.isfinite(params.log_p)) & jnp.all(jnp.isfinite(params.log1m_p))
        return jax.lax.cond(finite & jnp.all(observed), complete, general, None)

    @staticmethod
    def score_rounding(table, x, scores) -> jax.Array:
        r"""``(n, K)`` bounds on the float32 rounding of the kernel's scores: the products'
        roundings (twice epsilon times a bound on the root sum of squares of a row's terms,
        ``BernoulliLinear.spread``; a complete row's bias is one float64 sum, rounded once),
        plus the accumulation's (``_base.sum_rounding``), in proportion to the size the
        partial sums reach: the product's plus that root sum of squares (the slopes are
        relative to their mean over the classes, ``_base.centre``). 100,000 binary columns of
        two close classes moved probabilities by 4.6e-4 (``mean``) and 1e-2 (``ml``) before
        there was a bound and the slopes were relative to each column's largest."""
        if float64_mode() or not isinstance(table, (BernoulliLinear, BernoulliParams)):
            return jnp.zeros(x.shape[0])
        f = x.shape[1]
        if isinstance(table, BernoulliParams):  # guarded products: two sums of one sign
            return 2 * sum_rounding(jnp.abs(jnp.where(jnp.isfinite(scores), scores, 0.0)), f)
        eps = jnp.finfo(table.slope.dtype).eps
        return (2 * eps * table.spread + eps * jnp.abs(table.bias)
                + sum_rounding(jnp.abs(scores - table.bias) + table.spread, f))

    @staticmethod
    def linear_scores(params: BernoulliParams) -> tuple:
        r""":math:`\sum_j x_j (\log\theta_{kj} - \log(1-\theta_{kj})) + \sum_j
        \log(1-\theta_{kj})`, the complete-data branch of ``log_likelihood``."""
        return params.log_p - params.log1m_p, jnp.sum(params.log1m_p, axis=1)

    @staticmethod
    def log_predictive(posterior: BetaPrior, x, n_levels=None) -> jax.Array:
        if isinstance(posterior, (BernoulliLinear, BernoulliParams)):  # ``kernel_table``
            return Bernoulli.log_likelihood(posterior, x)
        total = posterior.alpha + posterior.beta
        params = BernoulliParams(jnp.log(posterior.alpha) - jnp.log(total),
                                 jnp.log(posterior.beta) - jnp.log(total))
        return Bernoulli.log_likelihood(params, x)

    @staticmethod
    def log_evidence(prior: BetaPrior, stats: BernoulliStats) -> jax.Array:
        post = Bernoulli.posterior(prior, stats)
        return jnp.sum(_betaln(post.alpha, post.beta) - _betaln(prior.alpha, prior.beta))

    @staticmethod
    def describe(params: BernoulliParams, schema: Schema, classes) -> dict:
        p1, p0 = np.exp(np.asarray(params.log_p)), np.exp(np.asarray(params.log1m_p))
        return {col: pd.DataFrame({0: p0[:, j], 1: p1[:, j]}, index=pd.Index(classes, name="class"))
                for j, col in enumerate(schema.columns)}

    @staticmethod
    def from_tables(tables: dict, schema: Schema, classes) -> BernoulliParams:
        """``tables[column][class]`` is P(x = 1 | class)."""
        p = np.array([[float(tables[col][c]) for col in schema.columns] for c in classes])
        if np.any((p < 0) | (p > 1)):
            raise ValueError("Bernoulli tables must hold probabilities in [0, 1].")
        with np.errstate(divide="ignore"):
            return BernoulliParams(jnp.asarray(np.log(p)), jnp.asarray(np.log1p(-p)))

    # ------------------------------------------------------------------ scipy.sparse input
    @staticmethod
    def sparse_suff_stats(X, resp) -> BernoulliStats:
        # resp: an (n, K) array or _sparse.Labels; sparse input has no missing values, so every
        # column is observed in every row
        count = np.repeat(_sparse.class_weights(resp)[:, None], X.shape[1], axis=1)
        return BernoulliStats(count, _sparse.class_totals(X, resp))

    @staticmethod
    def sparse_log_likelihood(params: BernoulliParams, X) -> np.ndarray:
        # sum_j log(1 - p_j) over all columns, and for the ones log p_j - log(1 - p_j): one
        # product. p = 0 or 1 (ML) give -inf, which 0 * inf must not reach: they are zeroed in
        # the product and a one (p = 0) or a zero (p = 1) there is set to -inf afterwards
        def operands():
            log_p = np.asarray(params.log_p, dtype=np.float64)
            log1m_p = np.asarray(params.log1m_p, dtype=np.float64)
            finite_p, finite_q = np.isfinite(log_p), np.isfinite(log1m_p)
            one, zero = np.where(finite_p, log_p, 0.0), np.where(finite_q, log1m_p, 0.0)
            never_one = None if finite_p.all() else np.ascontiguousarray((~finite_p).T, float)
            never_zero = None if finite_q.all() else np.ascontiguousarray((~finite_q).T, float)
            return np.ascontiguousarray((one - zero).T), zero.sum(axis=1), never_one, never_zero

        weights, base, never_one, never_zero = _sparse.prepared(
            (params.log_p, params.log1m_p), operands)
        out = X @ weights
        out += base
        if never_one is not None:  # p = 0: a one in that column is impossible
            out[(X @ never_one) > 0] = -np.inf
        if never_zero is not None:  # p = 1: a zero in that column is impossible
            out[(X @ never_zero) < never_zero.sum(axis=0)] = -np.inf
        return out

    @staticmethod
    def sparse_log_predictive(posterior: BetaPrior, X) -> np.ndarray:
        a, b = (np.asarray(v, dtype=np.float64) for v in posterior)
        return Bernoulli.sparse_log_likelihood(
            BernoulliParams(np.log(a) - np.log(a + b), np.log(b) - np.log(a + b)), X)

    @staticmethod
    def sparse_log_normalizer(X) -> np.ndarray:
        return np.zeros(X.shape[0])

    @staticmethod
    def sample_params(prior: BetaPrior, n_classes: int, site: str) -> BernoulliParams:
        with numpyro.plate(f"{site}_feature", prior.alpha.shape[-1], dim=-1), \
                numpyro.plate("class", n_classes, dim=-2):
            theta = numpyro.sample(f"{site}.theta", dist.Beta(prior.alpha, prior.beta))
        return {"theta": theta}

    @staticmethod
    def observe(params, x, y, site: str, **kw) -> None:
        if x is None:
            with numpyro.plate("row", y.shape[0], dim=-2), \
                    numpyro.plate(f"{site}_feature", params["theta"].shape[-1], dim=-1):
                numpyro.sample(f"{site}.x", dist.Bernoulli(params["theta"][y]))
            return
        observed = ~jnp.isnan(x)
        with numpyro.plate("row", x.shape[0], dim=-2):
            with numpyro.plate(f"{site}_feature", x.shape[1], dim=-1):
                numpyro.sample(f"{site}.x", dist.Bernoulli(params["theta"][y]).mask(observed),
                               obs=jnp.where(observed, x, 0))

    @staticmethod
    def stats_log_likelihood(sample, stats: BernoulliStats) -> jax.Array:
        theta = sample["theta"]
        return jnp.sum(xlogy(stats.ones, theta) + xlog1py(stats.count - stats.ones, -theta))

    @staticmethod
    def sample_posterior(rng, posterior: BetaPrior, n: int) -> dict:
        a = np.asarray(posterior.alpha, dtype=np.float64)
        b = np.asarray(posterior.beta, dtype=np.float64)
        return {"theta": rng.beta(a, b, size=(n,) + a.shape)}

    @staticmethod
    def params_from_sample(sample, posterior) -> BernoulliParams:
        theta = sample["theta"]
        return BernoulliParams(jnp.log(theta), jnp.log1p(-theta))

    @staticmethod
    def posterior_distributions(posterior: BetaPrior) -> dict:
        return {"theta": dist.Beta(posterior.alpha, posterior.beta)}

    def dependence_units(self, x, prior: dict, schema: Schema) -> list:
        """Each column as the levels ``(0, 1)`` with the pseudo-counts ``(beta, alpha)``."""
        units = []
        for j, col in enumerate(schema.columns):
            observed = ~np.isnan(x[:, j])
            codes = np.where(observed, np.nan_to_num(x[:, j]), -1).astype(np.int64)
            units.append((col, "discrete", codes, observed,
                          {"alpha": np.array([prior["beta"][j], prior["alpha"][j]],
                                             dtype=np.float64)}, ""))
        return units

    def decode(self, values: np.ndarray, schema: Schema) -> np.ndarray:
        return values.astype(np.int64)

    @staticmethod
    def log_prior_at(prior: BetaPrior, params: BernoulliParams, method: str,
                     n_classes: int) -> float:
        shift = -1.0 if method == "map" else 0.0
        return (pseudo_log(np.asarray(prior.alpha) + shift, params.log_p)
                + pseudo_log(np.asarray(prior.beta) + shift, params.log1m_p))



def _betaln(a, b):
    # jax.scipy.special.betaln is off by ~1e-7 even in float64 (measured against scipy)
    return gammaln(a) + gammaln(b) - gammaln(a + b)
