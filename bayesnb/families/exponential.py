r"""Exponential likelihood with a Gamma prior on the rate, per class and column.

.. math::

    \lambda_{kj} \sim \mathrm{Gamma}(a_j, b_j) \;(\text{shape, rate}), \qquad
    x_{ij} \mid c_i = k \sim \mathrm{Exponential}(\lambda_{kj}), \quad
    p(x \mid \lambda) = \lambda e^{-\lambda x}, \; x \ge 0.

With :math:`n_{kj}` the weighted number of observed values and :math:`s_{kj}` their weighted
sum (a missing value, NaN, drops out of its column only):

* ML: :math:`n/s`; posterior mean: :math:`(a + n)/(b + s)`;
  MAP: :math:`(a + n - 1)/(b + s)`, defined for :math:`a \ge 1`;
* posterior: Gamma(:math:`a' = a + n`, :math:`b' = b + s`); the posterior predictive of a
  new value is Lomax (Pareto II), :math:`\log p(x) = \log a' + a'\log b' - (a' + 1)\log(b' +
  x)`, i.e. ``scipy.stats.lomax(c=a', scale=b')``;
* evidence: :math:`\sum_{kj} a\log b - \log\Gamma(a) + \log\Gamma(a') - a'\log b'`.

Examples
--------
>>> import numpy as np, bayesnb as bnb
>>> X = np.array([[0.5], [1.5], [4.0], [6.0]])
>>> clf = bnb.NaiveBayes(features=bnb.Exponential(), method="mean").fit(X, ["a", "a", "b", "b"])
>>> clf.predict([[0.2], [9.0]]).tolist()
['a', 'b']
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.scipy.special import xlogy

from .._typing import Hyper
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
    numeric_block,
    observe_columns,
    observed_pairs,
    sample_gamma_rates,
    xp_of,
)
from ._contract import ConjugateFamily


class ExponentialStats(NamedTuple):
    count: jax.Array  # (K, F) weighted number of observed values
    total: jax.Array  # (K, F) weighted sum of the observed values


class ExponentialParams(NamedTuple):
    log_rate: jax.Array  # (K, F)
    rate: jax.Array  # (K, F)


class Exponential(ConjugateFamily):
    """Non-negative real columns (waiting times, sizes), each Exponential per class with a
    Gamma prior on the rate.

    Parameters
    ----------
    shape, rate : float or array-like of shape (n_columns,), default=1.0 and 1.0
        Gamma(shape, rate) prior on the Exponential rate: worth ``shape`` pseudo-values
        summing to ``rate``, prior mean rate ``shape / rate`` (values near 1).

    Examples
    --------
    The ML rate is 1 / (class mean), the posterior mean (shape + n) / (rate + sum):

    >>> import pandas as pd, bayesnb as bnb
    >>> X = pd.DataFrame({"wait": [0.5, 1.5, 4.0, 6.0]})
    >>> clf = bnb.NaiveBayes(bnb.Exponential(), method="ml").fit(X, ["a", "a", "b", "b"])
    >>> clf.conditional_tables()["wait"]
           rate
    class
    a       1.0
    b       0.2
    >>> clf.set_params(method="mean").conditional_tables()["wait"].round(4)  # 3 / 3, 3 / 11
             rate
    class
    a      1.0000
    b      0.2727
    """

    name = "exponential"
    refuses_negative = True
    stats_type = ExponentialStats
    observed_count = "count"
    params_type = ExponentialParams
    _hyper = ("shape", "rate")
    param_names = ("rate",)
    nonnegative_stats = ("count", "total")
    stated_tables = True
    stated_cell = "the rate"
    density_label = "Exponential"

    def __init__(self, shape: Hyper = 1.0, rate: Hyper = 1.0) -> None:
        self.shape = shape
        self.rate = rate

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        return numeric_block(values, schema, "Exponential", dtype, nonnegative=True,
                             values_are="values")

    def prior(self, schema: Schema) -> GammaPrior:
        return gamma_prior(self.shape, self.rate, schema, "Exponential")

    def check_prior(self, prior: GammaPrior, schema: Schema, method: str) -> None:
        check_gamma_map(prior, schema, method, "Exponential", "values")

    @staticmethod
    def suff_stats(x, resp, n_levels=None) -> ExponentialStats:
        observed = ~jnp.isnan(x)
        x0 = jnp.where(observed, x, 0).astype(resp.dtype)
        return ExponentialStats(resp.T @ observed.astype(resp.dtype), resp.T @ x0)

    @staticmethod
    def estimate(prior: GammaPrior, stats: ExponentialStats, method: str) -> ExponentialParams:
        xp = xp_of(prior, stats)  # NumPy float64 on the host, JAX when traced
        if method == "ml":
            rate = stats.count / stats.total
        elif method == "map":
            rate = (prior.shape + stats.count - 1.0) / (prior.rate + stats.total)
        else:
            rate = (prior.shape + stats.count) / (prior.rate + stats.total)
        return ExponentialParams(xp.log(rate), rate)

    @staticmethod
    def posterior(prior: GammaPrior, stats: ExponentialStats) -> GammaPrior:
        return GammaPrior(prior.shape + stats.count, prior.rate + stats.total)

    @staticmethod
    def log_likelihood(params: ExponentialParams, x, n_levels=None) -> jax.Array:
        observed = ~jnp.isnan(x)
        x0 = jnp.where(observed, x, 0).astype(params.rate.dtype)
        # an infinite ML rate (every value 0) times x = 0 counts as 0, as 0 log 0 does
        rate = jnp.where(jnp.isfinite(params.rate), params.rate, 0.0)
        out = observed.astype(x0.dtype) @ params.log_rate.T - x0 @ rate.T
        return jnp.where(jnp.any(x0 < 0, axis=1, keepdims=True), -jnp.inf, out)  # no density

    def linear_terms(self, params: ExponentialParams, schema: Schema) -> tuple:
        r""":math:`\log\lambda - x\lambda` per observed value."""
        return observed_pairs(-np.asarray(params.rate), params.log_rate, schema.columns)

    @staticmethod
    def log_predictive(posterior: GammaPrior, x, n_levels=None) -> jax.Array:
        observed = ~jnp.isnan(x)
        a, b = posterior.shape, posterior.rate  # (K, F)
        x0 = jnp.where(observed, x, 0).astype(a.dtype)[:, None, :]  # (n, 1, F)
        # log a' + a' log b' - (a' + 1) log(b' + x), with the two large logs cancelled
        log_pdf = jnp.log(a) - jnp.log(b + x0) - a * jnp.log1p(x0 / b)
        return jnp.sum(jnp.where(observed[:, None, :], log_pdf, 0.0), axis=-1)

    @staticmethod
    def log_evidence(prior: GammaPrior, stats: ExponentialStats) -> jax.Array:
        xp = xp_of(prior, stats)
        post, gammaln = Exponential.posterior(prior, stats), gammaln_of(xp)
        return xp.sum(prior.shape * xp.log(prior.rate) - gammaln(prior.shape)
                      + gammaln(post.shape) - post.shape * xp.log(post.rate))

    @staticmethod
    def describe(params: ExponentialParams, schema: Schema, classes) -> dict:
        rate = np.asarray(params.rate)
        return {col: pd.DataFrame({"rate": rate[:, j]}, index=pd.Index(classes, name="class"))
                for j, col in enumerate(schema.columns)}

    @staticmethod
    def from_tables(tables: dict, schema: Schema, classes) -> ExponentialParams:
        """``tables[column][class]`` is the Exponential rate (1 / mean)."""
        rate = np.array([[float(tables[col][c]) for col in schema.columns] for c in classes])
        bad = ~(np.isfinite(rate) & (rate > 0))
        if bad.any():
            raise ValueError(f"column {schema.columns[int(np.nonzero(bad.any(axis=0))[0][0])]!r}"
                             ": Exponential rates must be positive and finite.")
        return ExponentialParams(np.log(rate), rate)  # float64, as fits leave them

    @staticmethod
    def log_prior_at(prior: GammaPrior, params: ExponentialParams, method: str,
                     n_classes: int) -> float:
        return gamma_log_prior_at(prior, params.log_rate, params.rate, method)

    def dependence_units(self, x, prior: dict, schema: Schema) -> list:
        return column_units("exponential", x, prior, schema)

    @staticmethod
    def density_scale(table: ExponentialParams, j: int) -> tuple:
        scale = 1.0 / np.asarray(table.rate, dtype=np.float64)[:, j]  # mean = sd = 1 / rate
        return np.concatenate([[0.0], scale]), float(np.max(scale))

    # ------------------------------------------------------------------ NumPyro
    @staticmethod
    def sample_params(prior: GammaPrior, n_classes: int, site: str):
        return sample_gamma_rates(prior, n_classes, site)

    @staticmethod
    def observe(params, x, y, site: str, **kw) -> None:
        observe_columns(dist.Exponential(params["rate"][y]), x, y, site, fill=1.0)

    @staticmethod
    def stats_log_likelihood(sample, stats: ExponentialStats) -> jax.Array:
        rate = sample["rate"]
        return jnp.sum(xlogy(stats.count, rate) - stats.total * rate)

    @staticmethod
    def sample_posterior(rng, posterior: GammaPrior, n: int) -> dict:
        return {"rate": gamma_draws(rng, posterior.shape, posterior.rate, n)}

    @staticmethod
    def params_from_sample(sample, posterior) -> ExponentialParams:
        return ExponentialParams(jnp.log(sample["rate"]), sample["rate"])

    @staticmethod
    def posterior_distributions(posterior: GammaPrior) -> dict:
        return {"rate": dist.Gamma(posterior.shape, posterior.rate)}
