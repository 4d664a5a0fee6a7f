r"""Poisson likelihood with a Gamma prior on the rate, per class and column.

.. math::

    \lambda_{kj} \sim \mathrm{Gamma}(a_j, b_j) \;(\text{shape, rate}), \qquad
    x_{ij} \mid c_i = k \sim \mathrm{Poisson}(\lambda_{kj}).

With :math:`S_{kj}` the weighted sum of the observed counts and :math:`n_{kj}` their weighted
number:

* ML: :math:`S/n`; posterior mean: :math:`(a + S)/(b + n)`;
  MAP: :math:`(a + S - 1)/(b + n)`, defined for :math:`a \ge 1`;
* posterior: Gamma(:math:`a + S`, :math:`b + n`); the posterior predictive of a new count is
  negative binomial, :math:`\mathrm{NB}(x; r = a', p = 1/(b' + 1))` (``GammaPoisson``), i.e.
  ``scipy.stats.nbinom(n=a', p=b'/(b'+1))``;
* evidence: :math:`\sum_{kj} a\log b - a'\log b' + \log\Gamma(a') - \log\Gamma(a)` plus the
  class-free :math:`-\sum_i \log x_{ij}!`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.scipy.special import xlogy

from .._typing import Hyper
from ..fast import _sparse
from ._base import (
    GammaPrior,
    Schema,
    check_gamma_map,
    column_units,
    dist,
    gamma_draws,
    gamma_log_prior_at,
    gamma_prior,
    gammaln_of,
    log_matmul,
    numeric_block,
    observe_columns,
    observed_pairs,
    sample_gamma_rates,
    xp_of,
)
from ._contract import ConjugateFamily


class PoissonStats(NamedTuple):
    count: jax.Array  # (K, F) weighted number of observed values
    total: jax.Array  # (K, F) weighted sum of the observed values
    log_factorial: jax.Array  # () weighted sum of log x! over observed values


class PoissonParams(NamedTuple):
    log_rate: jax.Array  # (K, F)
    rate: jax.Array  # (K, F)


class Poisson(ConjugateFamily):
    """Non-negative count columns, each Poisson per class with a Gamma prior on the rate.

    Parameters
    ----------
    shape, rate : float or array-like of shape (n_columns,), default=1.0 and 0.1
        Gamma(shape, rate) prior on the Poisson rate: prior mean ``shape / rate`` (10 counts),
        prior sd ``sqrt(shape) / rate``; worth ``rate`` pseudo-rows holding ``shape`` counts in
        all, so it is weak next to any class with more than a handful of rows.

    Examples
    --------
    The posterior mean rate is (shape + total) / (rate + rows), the ML rate the class mean:

    >>> import pandas as pd, bayesnb as bnb
    >>> X = pd.DataFrame({"visits": [2, 4, 0, 1]})
    >>> clf = bnb.NaiveBayes(bnb.Poisson(), method="mean").fit(X, ["loyal", "loyal", "new", "new"])
    >>> clf.conditional_tables()["visits"].round(4)  # (1 + 6) / (0.1 + 2), (1 + 1) / 2.1
             rate
    class
    loyal  3.3333
    new    0.9524
    >>> clf.set_params(method="ml").conditional_tables()["visits"]
           rate
    class
    loyal   3.0
    new     0.5
    """

    name = "poisson"
    value_checks = {"nonnegative": True, "integer": True}
    param_names = ("rate",)
    nonnegative_stats = ("count", "total")
    stated_tables = True
    stated_cell = "the rate"
    stats_type = PoissonStats
    observed_count = "count"
    params_type = PoissonParams
    _hyper = ("shape", "rate")

    def __init__(self, shape: Hyper = 1.0, rate: Hyper = 0.1) -> None:
        self.shape = shape
        self.rate = rate

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        if _sparse.sparse.issparse(values):
            return _sparse.check_sparse(values, schema, "Poisson", integer=True)
        return numeric_block(values, schema, "Poisson", dtype, nonnegative=True, integer=True)

    def prior(self, schema: Schema) -> GammaPrior:
        return gamma_prior(self.shape, self.rate, schema, "Poisson")

    def check_prior(self, prior: GammaPrior, schema: Schema, method: str) -> None:
        check_gamma_map(prior, schema, method, "Poisson", "counts")

    @staticmethod
    def suff_stats(x, resp, n_levels=None) -> PoissonStats:
        xp = xp_of(x, resp)  # NumPy float64 on the host, JAX in the kernels
        observed = ~xp.isnan(x)
        x0 = xp.where(observed, x, 0).astype(resp.dtype)
        return PoissonStats(resp.T @ observed.astype(resp.dtype), resp.T @ x0,
                            resp.sum(axis=1) @ -Poisson.log_normalizer(x0))

    @staticmethod
    def estimate(prior: GammaPrior, stats: PoissonStats, method: str) -> PoissonParams:
        xp = xp_of(prior, stats)  # NumPy float64 on the host, JAX when traced
        if method == "ml":
            rate = stats.total / stats.count
        elif method == "map":
            rate = (prior.shape + stats.total - 1.0) / (prior.rate + stats.count)
        else:
            rate = (prior.shape + stats.total) / (prior.rate + stats.count)
        return PoissonParams(xp.log(rate), rate)

    @staticmethod
    def posterior(prior: GammaPrior, stats: PoissonStats) -> GammaPrior:
        return GammaPrior(prior.shape + stats.total, prior.rate + stats.count)

    @staticmethod
    def log_likelihood(params, x, n_levels=None) -> jax.Array:
        xp = xp_of(params, x)
        observed = ~xp.isnan(x)
        x0 = xp.where(observed, x, 0).astype(params.rate.dtype)
        return log_matmul(x0, params.log_rate) - observed.astype(x0.dtype) @ params.rate.T

    @staticmethod
    def log_predictive(posterior, x, n_levels=None) -> jax.Array:
        xp = xp_of(posterior, x)
        gammaln = gammaln_of(xp)
        observed = ~xp.isnan(x)
        a, b = posterior.shape, posterior.rate  # (K, F)
        x0 = xp.where(observed, x, 0).astype(a.dtype)[:, None, :]  # (n, 1, F)
        # negative binomial without its class-free -log x!
        log_pmf = (gammaln(x0 + a) - gammaln(a) - a * xp.log1p(1.0 / b)
                   - x0 * xp.log1p(b))
        return xp.sum(xp.where(observed[:, None, :], log_pmf, 0.0), axis=-1)

    @staticmethod
    def log_normalizer(x) -> jax.Array:
        xp = xp_of(x)
        return -xp.sum(gammaln_of(xp)(xp.nan_to_num(x, nan=0.0) + 1.0), axis=1)

    @staticmethod
    def log_evidence(prior: GammaPrior, stats: PoissonStats) -> jax.Array:
        xp = xp_of(prior, stats)
        post, gammaln = Poisson.posterior(prior, stats), gammaln_of(xp)
        return (xp.sum(prior.shape * xp.log(prior.rate) - post.shape * xp.log(post.rate)
                       + gammaln(post.shape) - gammaln(prior.shape))
                - stats.log_factorial)

    @staticmethod
    def describe(params: PoissonParams, schema: Schema, classes) -> dict:
        rate = np.asarray(params.rate)
        return {col: pd.DataFrame({"rate": rate[:, j]}, index=pd.Index(classes, name="class"))
                for j, col in enumerate(schema.columns)}

    @staticmethod
    def from_tables(tables: dict, schema: Schema, classes) -> PoissonParams:
        """``tables[column][class]`` is the Poisson rate."""
        rate = np.array([[float(tables[col][c]) for col in schema.columns] for c in classes])
        if np.any(rate < 0):
            raise ValueError("Poisson rates must be non-negative.")
        with np.errstate(divide="ignore"):
            return PoissonParams(np.log(rate), rate)  # float64, as fits leave them

    @staticmethod
    def sample_params(prior: GammaPrior, n_classes: int, site: str):
        return sample_gamma_rates(prior, n_classes, site)

    @staticmethod
    def observe(params, x, y, site: str, **kw) -> None:
        observe_columns(dist.Poisson(params["rate"][y]), x, y, site)

    @staticmethod
    def stats_log_likelihood(sample, stats: PoissonStats) -> jax.Array:
        rate = sample["rate"]
        return jnp.sum(xlogy(stats.total, rate) - stats.count * rate) - stats.log_factorial

    @staticmethod
    def sample_posterior(rng, posterior: GammaPrior, n: int) -> dict:
        return {"rate": gamma_draws(rng, posterior.shape, posterior.rate, n)}

    @staticmethod
    def params_from_sample(sample, posterior) -> PoissonParams:
        return PoissonParams(xp_of(sample).log(sample["rate"]), sample["rate"])

    @staticmethod
    def posterior_distributions(posterior: GammaPrior) -> dict:
        return {"rate": dist.Gamma(posterior.shape, posterior.rate)}

    def dependence_units(self, x, prior: dict, schema: Schema) -> list:
        return column_units("poisson", x, prior, schema)

    def linear_terms(self, params: PoissonParams, schema: Schema) -> tuple:
        r""":math:`x\log\lambda - \lambda` per observed count (less the class-free
        :math:`\log x!`)."""
        return observed_pairs(params.log_rate, -np.asarray(params.rate), schema.columns)

    def decode(self, values: np.ndarray, schema: Schema) -> np.ndarray:
        return values.astype(np.int64)

    pmf_label = "Poisson"

    def pmf_support(self, table: PoissonParams, schema: Schema, j: int) -> tuple:
        r"""The counts within :math:`\lambda \pm (4\sqrt\lambda + 1)` of the class rates
        :math:`\lambda` of column ``j`` (each class has less than 1e-4 of its mass above)."""
        rate = np.asarray(table.rate, dtype=np.float64)[:, j]
        low, top = float(np.min(rate)), float(np.max(rate))
        start = max(0, int(np.floor(low - 4.0 * np.sqrt(low))) - 1)
        values = np.arange(start, int(np.ceil(top + 4.0 * np.sqrt(top))) + 2, dtype=np.float64)
        return values, [str(int(v)) for v in values]

    @staticmethod
    def log_prior_at(prior: GammaPrior, params: PoissonParams, method: str,
                     n_classes: int) -> float:
        return gamma_log_prior_at(prior, params.log_rate, params.rate, method)
