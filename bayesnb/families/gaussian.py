r"""Gaussian likelihood with a Normal-Gamma prior on (mean, precision).

.. math::

    \lambda_{kj} \sim \mathrm{Gamma}(a_j, b_j), \quad
    \mu_{kj} \mid \lambda_{kj} \sim \mathcal N\!\big(m_j, (\kappa_j \lambda_{kj})^{-1}\big), \quad
    x_{ij} \mid c_i = k \sim \mathcal N(\mu_{kj}, \lambda_{kj}^{-1}).

With ``pooled=True`` one precision :math:`\lambda_j` per column is shared by every class (Downie,
seed 004: "the variance is independent of the class"; LDA with a diagonal covariance).

With :math:`n`, :math:`\bar x` and :math:`M_2 = \sum (x - \bar x)^2` the weighted count, mean and
centred sum of squares of a class and column (Murphy, *Conjugate Bayesian analysis of the
Gaussian distribution*, 2007, section 3):

* posterior: :math:`\kappa' = \kappa + n`, :math:`m' = (\kappa m + n\bar x)/\kappa'`,
  :math:`a' = a + n/2`, :math:`b' = b + M_2/2 + \kappa n (\bar x - m)^2 / (2\kappa')`;
  pooled: :math:`a' = a + \sum_k n_k/2` and :math:`b'` sums the class terms;
* ML: :math:`\mu = \bar x`, :math:`\sigma^2 = M_2/n` (the 1/N variance of seed 003 and of
  ``GaussianNB(var_smoothing=0)``); pooled: :math:`\sum_k M_{2k} / \sum_k n_k`. With
  ``ddof=d`` the divisor is :math:`n - d` (pooled: :math:`\sum_k (n_k - d)`): ``ddof=1`` is
  R's ``sd()``, so e1071's ``naiveBayes`` tables and predictions are reproduced;
* posterior mean: :math:`\mu = m'`, :math:`\lambda = a'/b'` (the mean of the precision);
* MAP: the joint mode, :math:`\mu = m'`, :math:`\lambda = (a' - 1/2)/b'` (pooled:
  :math:`(a' - 1 + K/2)/b'`);
* posterior predictive: Student-t with :math:`2a'` degrees of freedom, location :math:`m'`,
  scale :math:`\sqrt{b'(\kappa'+1)/(a'\kappa')}`;
* evidence: :math:`\log\Gamma(a') - \log\Gamma(a) + a\log b - a'\log b' +
  \tfrac12(\log\kappa - \log\kappa') - \tfrac n2\log 2\pi` per class and column (pooled: the
  Gamma terms once per column, the kappa terms per class).

Default prior (does not depend on the data, so chunked and merged fits equal a batch fit):
``loc=0``, ``kappa=1e-3`` (the mean prior is about 30 standard deviations wide),
``shape=1``, ``rate=0.01`` (a variance floor near 0.01 with the weight of two pseudo-observations).
It is weakly informative for columns whose spread is about 0.1 or larger; standardise columns on
a tinier scale, or give ``rate`` in their units.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._typing import Hyper
from . import _moments
from ._base import (
    Schema,
    broadcast_hyper,
    checked_bool,
    column_units,
    dist,
    gamma_draws,
    gammaln_of,
    log_gamma_ratio,
    numeric_block,
    numpyro,
    observe_columns,
    pseudo_log,
    xp_of,
)
from ._contract import ConjugateFamily

LOG_2PI = float(np.log(2 * np.pi))


def _precision_posterior(posterior) -> tuple:
    """``(a', b')`` of the precision: one per column when pooled, else per class and column."""
    if bool(posterior.pooled):
        return posterior.shape[0], posterior.rate[0]
    return posterior.shape, posterior.rate


class NormalGammaPrior(NamedTuple):
    loc: jax.Array  # (F,) prior, or (K, F) posterior
    kappa: jax.Array
    shape: jax.Array
    rate: jax.Array
    pooled: jax.Array  # () bool: one precision per column shared across classes
    ddof: jax.Array = np.float64(0.0)  # () the ML variance's divisor is count - ddof


class GaussianStats(NamedTuple):
    count: jax.Array  # (K, F) weighted number of observed values
    mean: jax.Array  # (K, F)
    m2: jax.Array  # (K, F) weighted centred sum of squares


class GaussianParams(NamedTuple):
    mean: jax.Array  # (K, F)
    precision: jax.Array  # (K, F)


class Gaussian(ConjugateFamily):
    """Real-valued columns, each Gaussian per class with a Normal-Gamma prior.

    Parameters
    ----------
    loc, kappa, shape, rate : float or array-like of shape (n_columns,)
        Normal-Gamma prior: precision ~ Gamma(shape, rate), mean | precision ~
        Normal(loc, 1 / (kappa * precision)). Defaults 0, 1e-3, 1, 0.01 (see module docs).
    pooled : bool, default=False
        Share one variance per column across the classes instead of one per class and column.
        Only ``True`` or ``False`` (a NumPy bool too): anything else is a ``ValueError``.
    ddof : float, default=0
        The ``method="ml"`` variance is ``M2 / (n - ddof)``: ``0`` is the 1/N variance
        (scikit-learn's), ``1`` R's ``sd()`` (e1071's ``naiveBayes``, reproduced exactly). The
        other methods take the variance from the posterior, which ``ddof`` does not change.

    Examples
    --------
    Under ``method="ml"`` with ``class_alpha=0`` this is ``GaussianNB(var_smoothing=0)``:

    >>> import numpy as np, bayesnb as bnb
    >>> from sklearn.naive_bayes import GaussianNB
    >>> X = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 4.0], [4.0, 5.0], [5.0, 4.0], [7.0, 6.0]])
    >>> y = ["a", "a", "a", "b", "b", "b"]
    >>> clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0).fit(X, y)
    >>> clf.var_.round(4)  # per class and column: the 1/N variance
    array([[0.6667, 0.6667],
           [1.5556, 0.6667]])
    >>> clf.predict_proba([[3.5, 4.0]]).round(4)
    array([[0.4543, 0.5457]])
    >>> GaussianNB(var_smoothing=0).fit(X, y).predict_proba([[3.5, 4.0]]).round(4)
    array([[0.4543, 0.5457]])
    """

    name = "gaussian"
    param_names = ("mean", "precision")
    nonnegative_stats = ("count", "m2")
    retired_params = ("center",)  # the float32 shift, now the fast layer's (``fast.gaussian``)
    stated_tables = True
    positive_params = ("precision",)
    density_label = "Gaussian"
    sklearn_view = "gaussian"
    value_checks = {}
    stats_type = GaussianStats
    observed_count = "count"
    params_type = GaussianParams
    _hyper = ("loc", "kappa", "shape", "rate", "pooled", "ddof")

    def __init__(self, loc: Hyper = 0.0, kappa: Hyper = 1e-3, shape: Hyper = 1.0,
                 rate: Hyper = 0.01, pooled: bool = False, ddof: float = 0) -> None:
        self.loc, self.kappa, self.shape, self.rate, self.pooled = loc, kappa, shape, rate, pooled
        self.ddof = ddof

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        return numeric_block(values, schema, "Gaussian", dtype)

    def prior(self, schema: Schema) -> NormalGammaPrior:
        f, cols = len(schema.columns), schema.columns
        return NormalGammaPrior(
            broadcast_hyper(self.loc, f, "loc", "Gaussian", columns=cols, positive=False),
            broadcast_hyper(self.kappa, f, "kappa", "Gaussian", columns=cols),
            broadcast_hyper(self.shape, f, "shape", "Gaussian", columns=cols),
            broadcast_hyper(self.rate, f, "rate", "Gaussian", columns=cols, squared=True),
            np.asarray(checked_bool(self.pooled, "Gaussian: pooled")),
            np.asarray(_moments.checked_ddof(self.ddof), dtype=np.float64))

    def couples_classes(self) -> bool:  # pooled: one precision per column, for every class
        return checked_bool(self.pooled, "Gaussian: pooled")

    def check_estimate(self, prior: NormalGammaPrior, stats: GaussianStats, schema: Schema,
                       classes, method: str) -> None:
        """Under ML, refuse a variance whose divisor ``n - ddof`` is not positive."""
        if method == "ml":
            _moments.check_divisor(stats.count, prior.ddof, prior.pooled, schema.columns, classes)

    # ------------------------------------------------------------------ numeric side
    @staticmethod
    def suff_stats(x, resp, n_levels=None) -> GaussianStats:
        """Weighted count, mean and centred sum of squares (``_moments``)."""
        return GaussianStats(*_moments.moments(x, resp))

    merge_stats = staticmethod(_moments.merge_moments)
    remove_stats = staticmethod(_moments.remove_moments)
    removal_condition = staticmethod(_moments.removal_condition)
    scale_stats = staticmethod(_moments.scale_moments)

    @staticmethod
    def _class_terms(prior: NormalGammaPrior, stats: GaussianStats):
        kappa_n = prior.kappa + stats.count
        loc_n = (prior.kappa * prior.loc + stats.count * stats.mean) / kappa_n
        spread = 0.5 * stats.m2 + (prior.kappa * stats.count * (stats.mean - prior.loc) ** 2
                                   / (2.0 * kappa_n))
        return kappa_n, loc_n, spread

    @staticmethod
    def posterior(prior: NormalGammaPrior, stats: GaussianStats) -> NormalGammaPrior:
        xp = xp_of(prior, stats)  # NumPy float64 on the host, JAX when traced
        kappa_n, loc_n, spread = Gaussian._class_terms(prior, stats)
        shape_k = prior.shape + 0.5 * stats.count
        rate_k = prior.rate + spread
        shape_pooled = prior.shape + 0.5 * stats.count.sum(axis=0)
        rate_pooled = prior.rate + spread.sum(axis=0)
        shape_n = xp.where(prior.pooled, xp.broadcast_to(shape_pooled, shape_k.shape), shape_k)
        rate_n = xp.where(prior.pooled, xp.broadcast_to(rate_pooled, rate_k.shape), rate_k)
        return NormalGammaPrior(loc_n, kappa_n, shape_n, rate_n, prior.pooled, prior.ddof)

    @staticmethod
    def estimate(prior: NormalGammaPrior, stats: GaussianStats, method: str) -> GaussianParams:
        xp = xp_of(prior, stats)  # NumPy float64 on the host, JAX when traced
        if method == "ml":
            var_k = stats.m2 / (stats.count - prior.ddof)
            var_pooled = stats.m2.sum(axis=0) / (stats.count - prior.ddof).sum(axis=0)
            # a class with no observed value has no ML mean (0/0), pooled variance or not
            mean = xp.where(stats.count > 0, stats.mean, xp.nan)
            precision = 1.0 / xp.where(prior.pooled, var_pooled, var_k)
        else:
            post = Gaussian.posterior(prior, stats)
            mean = post.loc
            if method == "mean":
                precision = post.shape / post.rate
            else:
                extra = xp.where(prior.pooled, stats.count.shape[0] / 2.0 - 1.0, -0.5)
                precision = (post.shape + extra) / post.rate
        return GaussianParams(mean, precision)

    @staticmethod
    def log_likelihood(params, x, n_levels=None) -> jax.Array:
        r""":math:`\sum_j [\log\lambda_{kj}/2 - \lambda_{kj}(x_j - \mu_{kj})^2/2]` over the
        observed columns (the class-free :math:`-\log(2\pi)/2` is ``log_normalizer``'s)."""
        xp = xp_of(params, x)  # NumPy float64 on the host, JAX in the kernels
        observed = ~xp.isnan(x)
        d = xp.where(observed, x, 0.0).astype(params.mean.dtype)[:, None, :] - params.mean
        lam = params.precision
        log_lik = 0.5 * xp.log(lam) - 0.5 * lam * d * d
        return xp.sum(xp.where(observed[:, None, :], log_lik, 0.0), axis=-1)

    @staticmethod
    def log_predictive(posterior, x, n_levels=None) -> jax.Array:
        xp = xp_of(posterior, x)
        observed = ~xp.isnan(x)
        x0 = xp.where(observed, x, 0.0)[:, None, :]
        a, b, kappa, loc = posterior.shape, posterior.rate, posterior.kappa, posterior.loc
        dof = 2.0 * a
        scale2 = b * (kappa + 1.0) / (a * kappa)
        z2 = (x0 - loc) ** 2 / scale2  # (n, K, F)
        log_t = (log_gamma_ratio(dof / 2, 0.5) - 0.5 * xp.log(dof * scale2)
                 - 0.5 * (dof + 1) * xp.log1p(z2 / dof) + 0.5 * LOG_2PI - 0.5 * np.log(np.pi))
        # the t's -log(pi)/2 here, less the class-free -log(2 pi)/2 that log_normalizer adds
        return xp.sum(xp.where(observed[:, None, :], log_t, 0.0), axis=-1)

    @staticmethod
    def log_normalizer(x) -> jax.Array:
        xp = xp_of(x)
        return -0.5 * LOG_2PI * xp.sum(~xp.isnan(x), axis=1)

    @staticmethod
    def log_evidence(prior: NormalGammaPrior, stats: GaussianStats) -> jax.Array:
        xp = xp_of(prior, stats)
        post, gammaln = Gaussian.posterior(prior, stats), gammaln_of(xp)
        kappa_terms = 0.5 * xp.sum(xp.log(prior.kappa) - xp.log(post.kappa))
        gamma_k = (gammaln(post.shape) - gammaln(prior.shape) + prior.shape * xp.log(prior.rate)
                   - post.shape * xp.log(post.rate))
        gamma_terms = xp.where(prior.pooled, xp.sum(gamma_k[0]), xp.sum(gamma_k))
        return kappa_terms + gamma_terms - 0.5 * LOG_2PI * xp.sum(stats.count)

    @staticmethod
    def describe(params: GaussianParams, schema: Schema, classes) -> dict:
        return _moments.mean_sd_tables(params.mean, params.precision, schema.columns, classes)

    stated_numbers = staticmethod(_moments.stated_mean_sd)
    stated_cell_of = staticmethod(_moments.stated_mean_sd_cell)

    @staticmethod
    def from_tables(tables: dict, schema: Schema, classes) -> GaussianParams:
        """``tables[column][class]`` is ``(mean, sd)``."""
        return GaussianParams(*_moments.mean_sd_params(tables, schema, classes))

    # ------------------------------------------------------------------ NumPyro
    @staticmethod
    def sample_params(prior: NormalGammaPrior, n_classes: int, site: str):
        f = prior.loc.shape[-1]
        feature = numpyro.plate(f"{site}_feature", f, dim=-1)
        with feature:
            if bool(prior.pooled):
                precision = numpyro.sample(f"{site}.precision",
                                           dist.Gamma(prior.shape, prior.rate))
                precision = jnp.broadcast_to(precision, (n_classes, f))
        with feature, numpyro.plate("class", n_classes, dim=-2):
            if not bool(prior.pooled):
                precision = numpyro.sample(f"{site}.precision",
                                           dist.Gamma(prior.shape, prior.rate))
            mean = numpyro.sample(f"{site}.mean",
                                  dist.Normal(prior.loc, 1.0 / jnp.sqrt(prior.kappa * precision)))
        return {"mean": mean, "precision": precision}

    @staticmethod
    def observe(params, x, y, site: str, **kw) -> None:
        scale = 1.0 / jnp.sqrt(params["precision"][y])
        observe_columns(dist.Normal(params["mean"][y], scale), x, y, site)

    @staticmethod
    def stats_log_likelihood(sample, stats: GaussianStats) -> jax.Array:
        precision = jnp.broadcast_to(sample["precision"], stats.mean.shape)
        squares = stats.m2 + stats.count * (stats.mean - sample["mean"]) ** 2
        return jnp.sum(0.5 * stats.count * (jnp.log(precision) - LOG_2PI)
                       - 0.5 * precision * squares)

    @staticmethod
    def sample_posterior(rng, posterior: NormalGammaPrior, n: int) -> dict:
        precision = gamma_draws(rng, *_precision_posterior(posterior), n)
        loc = np.asarray(posterior.loc, dtype=np.float64)
        kappa = np.asarray(posterior.kappa, dtype=np.float64)
        scale = 1.0 / np.sqrt(kappa * np.broadcast_to(precision[:, None] if bool(
            posterior.pooled) else precision, (n,) + loc.shape))
        return {"mean": loc + scale * rng.standard_normal((n,) + loc.shape),
                "precision": precision}

    @staticmethod
    def params_from_sample(sample, posterior) -> GaussianParams:
        mean = sample["mean"]
        return GaussianParams(mean, xp_of(sample).broadcast_to(sample["precision"], mean.shape))

    @staticmethod
    def posterior_log_density(posterior: NormalGammaPrior, params: dict) -> jax.Array:
        shape, rate = _precision_posterior(posterior)
        log_p = jnp.sum(dist.Gamma(shape, rate).log_prob(params["precision"]))
        precision = jnp.broadcast_to(params["precision"], posterior.loc.shape)
        scale = 1.0 / jnp.sqrt(posterior.kappa * precision)
        return log_p + jnp.sum(dist.Normal(posterior.loc, scale).log_prob(params["mean"]))

    @staticmethod
    def posterior_distributions(posterior: NormalGammaPrior) -> dict:
        r"""Each parameter's marginal posterior: :math:`\lambda \sim \mathrm{Gamma}(a', b')`
        and :math:`\mu \sim t_{2a'}(m', b'/(a'\kappa'))` (not independent: the joint density
        is :meth:`posterior_log_density`'s)."""
        shape, rate = _precision_posterior(posterior)
        scale = jnp.sqrt(rate / (shape * posterior.kappa))
        return {"mean": dist.StudentT(2.0 * shape, posterior.loc, scale),
                "precision": dist.Gamma(shape, rate)}

    density_scale = staticmethod(_moments.mean_sd_scale)

    def linear_terms(self, params: GaussianParams, schema: Schema) -> tuple | None:
        r"""Pooled: :math:`x\lambda\mu_k - \lambda\mu_k^2/2` per observed value (the
        :math:`-\lambda x^2/2` is the same for all classes); per-class precisions: None."""
        return _moments.pooled_linear_terms(params.mean, params.precision, schema.columns)

    def dependence_units(self, x, prior: dict, schema: Schema) -> list:
        return column_units("gaussian", x, prior, schema)

    def plug_in_sites(self, prior: NormalGammaPrior, params: GaussianParams) -> dict:
        precision = np.asarray(params.precision)  # pooled: one per column (param_dims)
        return {"mean": np.asarray(params.mean),
                "precision": precision[0] if bool(prior.pooled) else precision}

    def param_dims(self, prior: NormalGammaPrior, schema: Schema) -> dict:
        # a pooled precision is one per column, shared by the classes
        return {"mean": ("class", "feature"),
                "precision": ("feature",) if bool(prior.pooled) else ("class", "feature")}

    @staticmethod
    def log_prior_at(prior: NormalGammaPrior, params: GaussianParams, method: str,
                     n_classes: int) -> float:
        loc, kappa, a, b = (np.asarray(v) for v in prior[:4])
        lam = params.precision[:1] if bool(prior.pooled) else params.precision
        if method == "map":  # the mode: Gamma(a - 1 + K/2) per column pooled, a - 1/2 per class
            a = a - 1.0 + n_classes / 2.0 if bool(prior.pooled) else a - 0.5
        quad = -0.5 * float(np.sum(kappa * params.precision * (params.mean - loc) ** 2))
        return pseudo_log(a, np.log(lam)) - float(np.sum(b * lam)) + quad
