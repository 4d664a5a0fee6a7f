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
from jax.scipy.special import xlog1py, xlogy

from .._typing import Hyper
from ..fast import _sparse
from ._base import (
    Schema,
    beta_draws,
    broadcast_hyper,
    check_beta_map,
    cond,
    dist,
    imprecise_level_bounds,
    log_beta_ratio,
    log_matmul,
    numeric_block,
    numpyro,
    observe_columns,
    observed_pairs,
    pseudo_log,
    xp_of,
)
from ._contract import ConjugateFamily
from ._pooling import DEFAULT_CONCENTRATION, Pooled, sample_beta_mean


class BetaPrior(NamedTuple):
    alpha: jax.Array  # (F,) prior, or (K, F) posterior
    beta: jax.Array


class BernoulliStats(NamedTuple):
    count: jax.Array  # (K, F) weighted number of observed values
    ones: jax.Array  # (K, F) weighted number of ones


class BernoulliParams(NamedTuple):
    log_p: jax.Array  # (K, F) log theta
    log1m_p: jax.Array  # (K, F) log(1 - theta)




class Bernoulli(Pooled, ConjugateFamily):
    """Binary columns (0/1 or booleans), each a Bernoulli per class with a Beta prior.

    Parameters
    ----------
    alpha, beta : float or array-like of shape (n_columns,), default=1.0
        Beta prior on P(x = 1 | class); ``alpha`` counts virtual ones, ``beta`` virtual zeros.
        The default Beta(1, 1) is uniform and its posterior mean is Laplace's add-one rule.
    pooling : {"none", "partial"}, default="none"
        ``"partial"`` (``method="mcmc"`` only): a column's classes share strength,
        theta ~ Beta(s m, s (1 - m)) around m ~ Beta(alpha, beta), s ~ Gamma, both learned
        (``families._pooling``).
    pooling_concentration : (float, float), default=(1.0, 0.1)
        Shape and rate of the Gamma prior on s.

    Examples
    --------
    Two binary columns; under ``method="mean"`` P(x = 1 | class) is (ones + 1) / (rows + 2):

    >>> import numpy as np, bayesnb as bnb
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    >>> y = ["spam", "spam", "ham", "ham"]
    >>> clf = bnb.NaiveBayes(bnb.Bernoulli(), method="mean").fit(X, y)
    >>> np.exp(clf.feature_log_prob_).round(4)  # rows ham, spam: (0 + 1) / 4, (1 + 1) / 4, ...
    array([[0.25, 0.5 ],
           [0.75, 0.5 ]])
    >>> clf.predict_proba([[1, 0]]).round(4)  # 0.5 * 0.25 * 0.5 against 0.5 * 0.75 * 0.5
    array([[0.25, 0.75]])
    """

    name = "bernoulli"
    param_names = ("theta",)
    nonnegative_stats = ("count", "ones")
    stated_tables = True
    stated_cell = "P(x = 1)"
    one_strength = ("alpha", "beta")
    concentrations = ("alpha", "beta")
    sklearn_view = "bernoulli"
    predictive_is_plug_in = True
    imprecise = True
    value_checks = {"binary": True}
    stats_type = BernoulliStats
    observed_count = "count"
    params_type = BernoulliParams
    _hyper = ("alpha", "beta", "pooling", "pooling_concentration")

    def __init__(self, alpha: Hyper = 1.0, beta: Hyper = 1.0, pooling: str = "none",
                 pooling_concentration: tuple[float, float] = DEFAULT_CONCENTRATION) -> None:
        self.alpha, self.beta = alpha, beta
        self.pooling, self.pooling_concentration = pooling, pooling_concentration

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        if _sparse.sparse.issparse(values):
            return _sparse.check_sparse(values, schema, "Bernoulli", binary=True)
        return numeric_block(values, schema, "Bernoulli", dtype, binary=True)

    def prior(self, schema: Schema) -> BetaPrior:
        f, cols = len(schema.columns), schema.columns
        self.pooling_prior()  # a bad pooling setting is refused at fit and load
        return BetaPrior(broadcast_hyper(self.alpha, f, "alpha", "Bernoulli", columns=cols),
                         broadcast_hyper(self.beta, f, "beta", "Bernoulli", columns=cols))

    def check_prior(self, prior: BetaPrior, schema: Schema, method: str) -> None:
        check_beta_map(prior, schema, method, "Bernoulli")

    @staticmethod
    def suff_stats(x, resp, n_levels=None) -> BernoulliStats:
        xp = xp_of(x, resp)  # NumPy float64 on the host, JAX in the kernels
        observed = ~xp.isnan(x)
        return BernoulliStats(resp.T @ observed.astype(resp.dtype),
                              resp.T @ xp.where(observed, x, 0).astype(resp.dtype))

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
    def log_likelihood(params: BernoulliParams, x, n_levels=None) -> jax.Array:
        xp = xp_of(params, x)
        observed = ~xp.isnan(x)
        x0 = xp.where(observed, x, 0).astype(params.log_p.dtype)

        def general(x0):  # x log p + (1 - x) log(1 - p) over the observed entries
            return (log_matmul(x0, params.log_p)
                    + log_matmul(observed.astype(x0.dtype) - x0, params.log1m_p))

        def complete(x0):  # nothing missing, no zero probability: one matmul
            return x0 @ (params.log_p - params.log1m_p).T + xp.sum(params.log1m_p, axis=1)

        finite = xp.all(xp.isfinite(params.log_p)) & xp.all(xp.isfinite(params.log1m_p))
        return cond(finite & xp.all(observed), complete, general, x0)

    @staticmethod
    def log_predictive(posterior: BetaPrior, x, n_levels=None) -> jax.Array:
        xp = xp_of(posterior, x)
        total = posterior.alpha + posterior.beta
        params = BernoulliParams(xp.log(posterior.alpha) - xp.log(total),
                                 xp.log(posterior.beta) - xp.log(total))
        return Bernoulli.log_likelihood(params, x)

    @staticmethod
    def log_evidence(prior: BetaPrior, stats: BernoulliStats) -> jax.Array:
        # log B(alpha', beta') - log B(alpha, beta), without the counts' large log-Gammas
        return xp_of(prior, stats).sum(log_beta_ratio(prior.alpha, prior.beta, stats.ones,
                                                      stats.count - stats.ones))

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
            return BernoulliParams(np.log(p), np.log1p(-p))  # float64, as fits leave them

    @staticmethod
    def stated_cell_of(row) -> float:
        return float(row[1])

    @staticmethod
    def sample_pooled(prior: BetaPrior, pool, site: str) -> BetaPrior:
        """Sites ``"{site}.shared_mean"`` and ``"{site}.concentration"``, one per column."""
        return BetaPrior(*sample_beta_mean(prior.alpha, prior.beta, pool, site))

    def param_dims(self, prior: BetaPrior, schema: Schema) -> dict:
        return {"theta": ("class", "feature"), **self.pooled_sites(
            {"shared_mean": ("feature",), "concentration": ("feature",)})}

    @staticmethod
    def sample_params(prior: BetaPrior, n_classes: int, site: str) -> BernoulliParams:
        with numpyro.plate(f"{site}_feature", prior.alpha.shape[-1], dim=-1), \
                numpyro.plate("class", n_classes, dim=-2):
            theta = numpyro.sample(f"{site}.theta", dist.Beta(prior.alpha, prior.beta))
        return {"theta": theta}

    @staticmethod
    def observe(params, x, y, site: str, **kw) -> None:
        observe_columns(dist.Bernoulli(params["theta"][y]), x, y, site)

    @staticmethod
    def stats_log_likelihood(sample, stats: BernoulliStats) -> jax.Array:
        theta = sample["theta"]
        return jnp.sum(xlogy(stats.ones, theta) + xlog1py(stats.count - stats.ones, -theta))

    @staticmethod
    def sample_posterior(rng, posterior: BetaPrior, n: int) -> dict:
        return {"theta": beta_draws(rng, posterior.alpha, posterior.beta, n)}

    @staticmethod
    def params_from_sample(sample, posterior) -> BernoulliParams:
        theta, xp = sample["theta"], xp_of(sample)
        return BernoulliParams(xp.log(theta), xp.log1p(-theta))

    @staticmethod
    def posterior_distributions(posterior: BetaPrior) -> dict:
        return {"theta": dist.Beta(posterior.alpha, posterior.beta)}

    def plug_in_sites(self, prior, params: BernoulliParams) -> dict:
        return {"theta": np.exp(np.asarray(params.log_p))}

    @staticmethod
    def imprecise_log_predictive(prior: BetaPrior, stats: BernoulliStats, x: np.ndarray,
                                 s: float) -> tuple[np.ndarray, np.ndarray]:
        """Beta(s t, s (1 - t)) for every t in (0, 1): P(x = v | c) = (count of v + s t_v) /
        (count + s), at its extremes when t is 0 or 1 (``_base.imprecise_level_bounds``)."""
        x = np.asarray(x, dtype=np.float64)
        count, ones = np.asarray(stats.count, np.float64), np.asarray(stats.ones, np.float64)
        hits = np.where((x == 1)[:, None, :], ones[None], (count - ones)[None])
        return imprecise_level_bounds(hits, count, ~np.isnan(x), np.full(x.shape[1], 2), s)

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

    def linear_terms(self, params: BernoulliParams, schema: Schema) -> tuple:
        r""":math:`x(\log\theta - \log(1-\theta)) + \log(1-\theta)` per observed value."""
        return observed_pairs(np.asarray(params.log_p) - np.asarray(params.log1m_p),
                              params.log1m_p, schema.columns)

    def decode(self, values: np.ndarray, schema: Schema) -> np.ndarray:
        return values.astype(np.int64)

    pmf_label = "Bernoulli"

    def pmf_support(self, table: BernoulliParams, schema: Schema, j: int) -> tuple:
        return np.array([0.0, 1.0]), ["0", "1"]

    @staticmethod
    def log_prior_at(prior: BetaPrior, params: BernoulliParams, method: str,
                     n_classes: int) -> float:
        shift = -1.0 if method == "map" else 0.0
        return (pseudo_log(np.asarray(prior.alpha) + shift, params.log_p)
                + pseudo_log(np.asarray(prior.beta) + shift, params.log1m_p))
