r"""Log-normal likelihood: the Gaussian family's Normal-Gamma model on :math:`\log x`.

.. math::

    \lambda_{kj} \sim \mathrm{Gamma}(a_j, b_j), \quad
    \mu_{kj} \mid \lambda_{kj} \sim \mathcal N\!\big(m_j, (\kappa_j \lambda_{kj})^{-1}\big), \quad
    \log x_{ij} \mid c_i = k \sim \mathcal N(\mu_{kj}, \lambda_{kj}^{-1}), \; x > 0.

Every estimate and the posterior are the Gaussian family's (``gaussian.py``) of the logged
values: with :math:`n`, :math:`\bar\ell` and :math:`M_2` the weighted count, mean and centred
sum of squares of :math:`\ell = \log x`,

* ML: :math:`\mu = \bar\ell`, :math:`\sigma^2 = M_2/n`, i.e. ``scipy.stats.lognorm(s=sigma,
  scale=exp(mu))``; MAP and posterior mean: the Gaussian's, on :math:`\ell`;
* posterior: :math:`\kappa' = \kappa + n`, :math:`m' = (\kappa m + n\bar\ell)/\kappa'`,
  :math:`a' = a + n/2`, :math:`b' = b + M_2/2 + \kappa n (\bar\ell - m)^2 / (2\kappa')`;
* posterior predictive: the Student-t of :math:`\log x` (:math:`2a'` degrees of freedom,
  location :math:`m'`, scale :math:`\sqrt{b'(\kappa'+1)/(a'\kappa')}`) with the Jacobian
  :math:`1/x`: :math:`\log p(x) = \log t(\log x) - \log x`;
* evidence: the Gaussian's evidence of :math:`\log x` less :math:`\sum_i \log x_i =
  \sum_{kj} n\bar\ell`.

The Jacobian :math:`-\log x` is the same for every class: it is ``log_normalizer``'s, beside
the Gaussian's :math:`-\tfrac12\log 2\pi`.

Examples
--------
>>> import numpy as np, bayesnb as bnb
>>> X = np.array([[1.0], [2.0], [20.0], [40.0]])
>>> clf = bnb.NaiveBayes(features=bnb.LogNormal(), method="mean").fit(X, ["a", "a", "b", "b"])
>>> clf.predict([[1.5], [30.0]]).tolist()
['a', 'b']
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from .._typing import Hyper
from ._base import (
    Schema,
    broadcast_hyper,
    column_units,
    dist,
    first_bad,
    numeric_block,
    observe_columns,
    xp_of,
)
from ._contract import ConjugateFamily
from ._moments import merge_moments, moments, removal_condition, remove_moments, scale_moments
from .gaussian import Gaussian, GaussianParams, GaussianStats, NormalGammaPrior


def _log(x) -> jax.Array:
    """``log x`` with NaN (missing) where ``x`` is not positive: ``encode`` refuses such
    values, so only the kernels' zero padding rows reach here as missing."""
    xp = xp_of(x)  # NumPy float64 on the host, JAX in the kernels
    return xp.log(xp.where(x > 0, x, xp.nan))


def _sum_log(stats: GaussianStats):
    r""":math:`\sum_i \log x_i` over the data the statistics describe: :math:`\sum n\bar\ell`."""
    return xp_of(stats).sum(stats.count * stats.mean)


class LogNormal(ConjugateFamily):
    """Positive real columns (incomes, sizes, durations), each log-normal per class: a
    Normal-Gamma prior on the mean and precision of ``log x``.

    Parameters
    ----------
    loc, kappa, shape, rate : float or array-like of shape (n_columns,), default=0, 1, 1, 1
        Normal-Gamma prior on ``log x``, named as the Gaussian family's: precision ~
        Gamma(shape, rate), mean | precision ~ Normal(loc, 1 / (kappa * precision)). On the
        log scale the defaults are weak: the mean is worth one pseudo-value at 0, the
        precision two pseudo-values of spread about 1.

    Examples
    --------
    Under ``method="ml"`` the tables are the mean and sd of ``log x`` per class (1/N
    variance), those of ``scipy.stats.lognorm(s=sdlog, scale=exp(meanlog))``:

    >>> import numpy as np, pandas as pd, bayesnb as bnb
    >>> X = pd.DataFrame({"income": np.exp([1.0, 3.0, 4.0, 6.0])})
    >>> clf = bnb.NaiveBayes(bnb.LogNormal(), method="ml").fit(X, ["a", "a", "b", "b"])
    >>> clf.conditional_tables()["income"].round(4)
           meanlog  sdlog
    class
    a          2.0    1.0
    b          5.0    1.0
    """

    name = "lognormal"
    refuses_negative = True
    param_names = ("mean", "precision")  # of log x, as the Gaussian's
    nonnegative_stats = ("count", "m2")
    positive_params = ("precision",)
    stats_type = GaussianStats  # the moments of log x
    observed_count = "count"
    params_type = GaussianParams
    _hyper = ("loc", "kappa", "shape", "rate")

    def __init__(self, loc: Hyper = 0.0, kappa: Hyper = 1.0, shape: Hyper = 1.0,
                 rate: Hyper = 1.0) -> None:
        self.loc, self.kappa, self.shape, self.rate = loc, kappa, shape, rate

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        x = numeric_block(values, schema, "LogNormal", dtype)
        with np.errstate(invalid="ignore"):
            first_bad(x <= 0, schema, x, "LogNormal needs positive values (log x must exist)")
        return x

    def prior(self, schema: Schema) -> NormalGammaPrior:
        f, cols = len(schema.columns), schema.columns
        return NormalGammaPrior(
            broadcast_hyper(self.loc, f, "loc", "LogNormal", columns=cols, positive=False),
            broadcast_hyper(self.kappa, f, "kappa", "LogNormal", columns=cols),
            broadcast_hyper(self.shape, f, "shape", "LogNormal", columns=cols),
            broadcast_hyper(self.rate, f, "rate", "LogNormal", columns=cols),
            np.asarray(False),  # one precision per class and column
        )

    # ------------------------------------------------------------------ numeric side
    @staticmethod
    def suff_stats(x, resp, n_levels=None) -> GaussianStats:
        """Weighted count, mean and centred sum of squares of ``log x`` (``_moments``)."""
        return GaussianStats(*moments(_log(x), resp))

    merge_stats = staticmethod(merge_moments)
    remove_stats = staticmethod(remove_moments)
    removal_condition = staticmethod(removal_condition)
    scale_stats = staticmethod(scale_moments)
    posterior = staticmethod(Gaussian.posterior)
    estimate = staticmethod(Gaussian.estimate)

    @staticmethod
    def log_likelihood(params: GaussianParams, x, n_levels=None) -> jax.Array:
        """The Gaussian's of ``log x`` (its Jacobian is ``log_normalizer``'s)."""
        return Gaussian.log_likelihood(params, _log(x))

    @staticmethod
    def log_predictive(posterior: NormalGammaPrior, x, n_levels=None) -> jax.Array:
        """The Gaussian's Student-t of ``log x`` (its Jacobian is ``log_normalizer``'s)."""
        return Gaussian.log_predictive(posterior, _log(x))

    @staticmethod
    def log_normalizer(x) -> jax.Array:
        r"""The Gaussian's :math:`-\tfrac12\log 2\pi` and the Jacobian :math:`-\log x` per
        observed value."""
        log_x, xp = _log(x), xp_of(x)
        observed = ~xp.isnan(log_x)
        return (-0.5 * float(np.log(2 * np.pi)) * xp.sum(observed, axis=1)
                - xp.sum(xp.where(observed, log_x, 0.0), axis=1))

    @staticmethod
    def log_evidence(prior: NormalGammaPrior, stats: GaussianStats) -> jax.Array:
        return Gaussian.log_evidence(prior, stats) - _sum_log(stats)

    @staticmethod
    def describe(params: GaussianParams, schema: Schema, classes) -> dict:
        mean, sd = np.asarray(params.mean), 1.0 / np.sqrt(np.asarray(params.precision))
        return {col: pd.DataFrame({"meanlog": mean[:, j], "sdlog": sd[:, j]},
                                  index=pd.Index(classes, name="class"))
                for j, col in enumerate(schema.columns)}

    def dependence_units(self, x, prior: dict, schema: Schema) -> list:
        # log x under the Normal-Gamma model: the Jacobian is the same in both hypotheses
        with np.errstate(invalid="ignore", divide="ignore"):
            return column_units("gaussian", np.log(x), prior, schema)

    log_prior_at = staticmethod(Gaussian.log_prior_at)

    # ------------------------------------------------------------------ NumPyro
    sample_params = staticmethod(Gaussian.sample_params)

    @staticmethod
    def observe(params, x, y, site: str, **kw) -> None:
        scale = 1.0 / jnp.sqrt(params["precision"][y])
        observe_columns(dist.LogNormal(params["mean"][y], scale), x, y, site, fill=1.0)

    @staticmethod
    def stats_log_likelihood(sample, stats: GaussianStats) -> jax.Array:
        return Gaussian.stats_log_likelihood(sample, stats) - _sum_log(stats)

    sample_posterior = staticmethod(Gaussian.sample_posterior)
    params_from_sample = staticmethod(Gaussian.params_from_sample)
    posterior_log_density = staticmethod(Gaussian.posterior_log_density)
    posterior_distributions = staticmethod(Gaussian.posterior_distributions)
