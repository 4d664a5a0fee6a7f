r"""Negative binomial likelihood with a known number of successes and a Beta prior on the
success probability, per class and column: overdispersed counts.

.. math::

    p_{kj} \sim \mathrm{Beta}(\alpha_j, \beta_j), \qquad
    x_{ij} \mid c_i = k \sim \mathrm{NB}(r_j, p_{kj}), \quad
    p(x \mid p) = \binom{x + r - 1}{x} p^{r} (1 - p)^{x},

the failures before the :math:`r`-th success, ``scipy.stats.nbinom(n=r, p=p)`` (NumPyro's
``NegativeBinomialProbs(r, 1 - p)``), with :math:`r > 0` known (not necessarily an integer).
With :math:`s_{kj} = r_j n_{kj}` (:math:`n`: the weighted number of observed counts) and
:math:`f_{kj}` the weighted sum of the counts:

* ML: :math:`s/(s + f)`; posterior mean: :math:`(\alpha + s)/(\alpha + \beta + s + f)`;
  MAP: :math:`(\alpha + s - 1)/(\alpha + \beta + s + f - 2)`, for :math:`\alpha, \beta \ge 1`;
* posterior: Beta(:math:`\alpha' = \alpha + s`, :math:`\beta' = \beta + f`); the posterior
  predictive of a new count is beta negative binomial, :math:`\log p(x) = \log\binom{x + r -
  1}{x} + \log B(\alpha' + r, \beta' + x) - \log B(\alpha', \beta')`
  (``scipy.stats.betanbinom(n=r, a=alpha', b=beta')`` for an integer :math:`r`);
* evidence: :math:`\sum_{kj} \log B(\alpha', \beta') - \log B(\alpha, \beta)` plus
  :math:`\sum_i \log\binom{x_i + r - 1}{x_i}`.

:math:`r` is part of the likelihood, not of the prior, yet the statistics (that last sum) and
the NumPyro statements need it, and the kernels and the NumPyro program are handed a family's
class: so each value of ``r`` has a class of its own (``NegativeBinomial(r=2.0)`` is an
instance of one, made once and kept), whose ``known_r`` those class methods read.

Examples
--------
>>> import numpy as np, bayesnb as bnb
>>> X = np.array([[0], [1], [2], [9], [12], [15]])
>>> clf = bnb.NaiveBayes(bnb.NegativeBinomial(r=2.0), method="mean").fit(X, list("aaabbb"))
>>> clf.predict([[1], [10]]).tolist()
['a', 'b']
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.scipy.special import xlog1py, xlogy

from .._typing import Hyper
from ._base import (
    Schema,
    beta_draws,
    broadcast_hyper,
    check_beta_map,
    dist,
    gammaln_of,
    is_distribution,
    log_beta_ratio,
    log_gamma_ratio,
    numeric_block,
    numpyro,
    observe_columns,
    observed_pairs,
    pseudo_log,
    xp_of,
)
from ._contract import ConjugateFamily


class NegativeBinomialPrior(NamedTuple):
    alpha: jax.Array  # (F,) prior, or (K, F) posterior
    beta: jax.Array
    r: jax.Array  # the known number of successes, (F,), or (K, F) in a posterior


class NegativeBinomialStats(NamedTuple):
    successes: jax.Array  # (K, F) r times the weighted number of observed counts
    failures: jax.Array  # (K, F) weighted sum of the observed counts
    log_coef: jax.Array  # (K, F) weighted sum of log C(x + r - 1, x)


class NegativeBinomialParams(NamedTuple):
    log_p: jax.Array  # (K, F)
    log1m_p: jax.Array  # (K, F) log(1 - p)
    r: jax.Array  # (K, F)


def _log_coef(x, r):
    r""":math:`\log\binom{x + r - 1}{x}` for a real :math:`r > 0`."""
    return log_gamma_ratio(x + 1.0, r - 1.0) - gammaln_of(xp_of(x, r))(r)


def _class_for(cls, r) -> type:
    """The subclass of ``cls`` (or of the family a class for r was made from) whose
    ``known_r`` is ``r``: one per family and value, kept."""
    cls = vars(cls).get("_family", cls)
    if is_distribution(r):
        raise TypeError("NegativeBinomial: r is the known number of successes, part of the "
                        "likelihood; it takes no hyperprior.")
    a = np.array(r, dtype=np.float64)
    if a.ndim > 1 or not a.size or not np.all(np.isfinite(a) & (a > 0)):
        raise ValueError(f"NegativeBinomial: r must be a positive finite number or one per "
                         f"column, got {r!r}.")
    key = (cls, a.shape, a.tobytes())
    if key not in _KNOWN:
        a.setflags(write=False)
        _KNOWN[key] = type(cls)(cls.__name__, (cls,), {"known_r": a, "_family": cls,
                                                       "__module__": cls.__module__})
    return _KNOWN[key]


_KNOWN: dict = {}


class NegativeBinomial(ConjugateFamily):
    """Count columns more spread than a Poisson's, each negative binomial per class with a
    known number of successes ``r`` and a Beta prior on the success probability.

    Parameters
    ----------
    r : float or array-like of shape (n_columns,)
        The known number of successes (positive, not necessarily an integer): the counts are
        the failures before the ``r``-th success; the variance is the mean times ``1 +
        mean / r``, so a small ``r`` means much overdispersion and a large one nearly Poisson.
    alpha, beta : float or array-like of shape (n_columns,), default=1.0
        Beta(alpha, beta) prior on the success probability ``p`` (uniform by default).

    Examples
    --------
    The ML success probability is ``r n / (r n + sum x)``, the posterior mean ``(alpha + r
    n) / (alpha + beta + r n + sum x)``:

    >>> import pandas as pd, bayesnb as bnb
    >>> X = pd.DataFrame({"visits": [0, 2, 6, 10]})
    >>> clf = bnb.NaiveBayes(bnb.NegativeBinomial(r=2), method="ml").fit(X, list("aabb"))
    >>> clf.conditional_tables()["visits"]  # 4 / (4 + 2), 4 / (4 + 16)
               prob
    class
    a      0.666667
    b      0.200000
    >>> clf.set_params(method="mean").conditional_tables()["visits"].round(4)  # 5/8, 5/22
             prob
    class
    a      0.6250
    b      0.2273
    """

    name = "negative_binomial"
    value_checks = {"nonnegative": True, "integer": True}
    param_names = ("prob",)
    nonnegative_stats = ("successes", "failures")
    one_strength = ("alpha", "beta")
    concentrations = ("alpha", "beta")
    stats_type = NegativeBinomialStats
    params_type = NegativeBinomialParams
    _hyper = ("r", "alpha", "beta")
    #: the known ``r`` of this class (None on ``NegativeBinomial`` itself; see module docs)
    known_r: ClassVar[np.ndarray | None] = None

    @staticmethod
    def observed_counts(prior: NegativeBinomialPrior, stats: NegativeBinomialStats) -> np.ndarray:
        """Per class and column, the observed counts: ``successes`` holds r for each."""
        return np.asarray(stats.successes) / np.asarray(prior.r)

    def __new__(cls, r: Hyper = None, alpha: Hyper = 1.0, beta: Hyper = 1.0):
        if r is None:
            raise TypeError("NegativeBinomial needs r, the known number of successes (a "
                            "positive number, or one per column).")
        return super().__new__(_class_for(cls, r))

    def __init__(self, r: Hyper, alpha: Hyper = 1.0, beta: Hyper = 1.0) -> None:
        self.r, self.alpha, self.beta = r, alpha, beta

    def __reduce__(self):  # copies and pickles are made again: the class for r comes back
        return vars(type(self))["_family"], (self.r, self.alpha, self.beta)

    def set_params(self, **params) -> NegativeBinomial:
        super().set_params(**params)
        self.__class__ = _class_for(type(self), self.r)
        return self

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        return numeric_block(values, schema, "NegativeBinomial", dtype, nonnegative=True,
                             integer=True)

    def prior(self, schema: Schema) -> NegativeBinomialPrior:
        f, cols = len(schema.columns), schema.columns
        return NegativeBinomialPrior(
            broadcast_hyper(self.alpha, f, "alpha", "NegativeBinomial", columns=cols),
            broadcast_hyper(self.beta, f, "beta", "NegativeBinomial", columns=cols),
            broadcast_hyper(self.r, f, "r", "NegativeBinomial", columns=cols))

    def check_prior(self, prior: NegativeBinomialPrior, schema: Schema, method: str) -> None:
        check_beta_map(prior, schema, method, "NegativeBinomial")

    # ------------------------------------------------------------------ numeric side
    @classmethod
    def suff_stats(cls, x, resp, n_levels=None) -> NegativeBinomialStats:
        xp = xp_of(x, resp)  # NumPy float64 on the host, JAX in the kernels
        observed = ~xp.isnan(x)
        x0 = xp.where(observed, x, 0).astype(resp.dtype)
        r = xp.broadcast_to(xp.asarray(cls.known_r, resp.dtype), x.shape[-1:])
        return NegativeBinomialStats(r * (resp.T @ observed.astype(resp.dtype)), resp.T @ x0,
                                     resp.T @ xp.where(observed, _log_coef(x0, r), 0.0))

    @staticmethod
    def estimate(prior: NegativeBinomialPrior, stats: NegativeBinomialStats,
                 method: str) -> NegativeBinomialParams:
        xp = xp_of(prior, stats)  # NumPy float64 on the host, JAX when traced
        s, f = stats.successes, stats.failures
        shift = {"ml": None, "map": -1.0, "mean": 0.0}[method]
        if shift is not None:
            s, f = s + prior.alpha + shift, f + prior.beta + shift
        with np.errstate(divide="ignore", invalid="ignore"):  # -log1p(inf) = -inf: p = 0, 1
            log_p, log1m_p = -xp.log1p(f / s), -xp.log1p(s / f)  # not log f - log(s + f)
        return NegativeBinomialParams(log_p, log1m_p, xp.broadcast_to(prior.r, xp.shape(s)))

    @staticmethod
    def posterior(prior: NegativeBinomialPrior,
                  stats: NegativeBinomialStats) -> NegativeBinomialPrior:
        xp = xp_of(prior, stats)
        alpha = prior.alpha + stats.successes
        return NegativeBinomialPrior(alpha, prior.beta + stats.failures,
                                     xp.broadcast_to(prior.r, xp.shape(alpha)))

    @staticmethod
    def log_likelihood(params: NegativeBinomialParams, x, n_levels=None) -> jax.Array:
        xp = xp_of(params, x)
        observed = ~xp.isnan(x)
        x0 = xp.where(observed, x, 0).astype(params.log_p.dtype)[:, None, :]  # (n, 1, F)
        # x log(1 - p) is 0 at x = 0 even where an ML p is 1
        log_pmf = (_log_coef(x0, params.r) + params.r * params.log_p
                   + xp.where(x0 > 0, x0 * params.log1m_p, 0.0))
        return xp.sum(xp.where(observed[:, None, :], log_pmf, 0.0), axis=-1)

    @staticmethod
    def log_predictive(posterior: NegativeBinomialPrior, x, n_levels=None) -> jax.Array:
        xp = xp_of(posterior, x)
        observed = ~xp.isnan(x)
        a, b, r = posterior.alpha, posterior.beta, posterior.r  # (K, F)
        x0 = xp.where(observed, x, 0).astype(a.dtype)[:, None, :]  # (n, 1, F)
        log_pmf = _log_coef(x0, r) + log_beta_ratio(a, b, r, x0)  # log B(a+r, b+x) - log B(a, b)
        return xp.sum(xp.where(observed[:, None, :], log_pmf, 0.0), axis=-1)

    @staticmethod
    def log_evidence(prior: NegativeBinomialPrior, stats: NegativeBinomialStats) -> jax.Array:
        return xp_of(prior, stats).sum(log_beta_ratio(prior.alpha, prior.beta, stats.successes,
                                                      stats.failures) + stats.log_coef)

    @staticmethod
    def describe(params: NegativeBinomialParams, schema: Schema, classes) -> dict:
        p = np.exp(np.asarray(params.log_p))
        return {col: pd.DataFrame({"prob": p[:, j]}, index=pd.Index(classes, name="class"))
                for j, col in enumerate(schema.columns)}

    def linear_terms(self, params: NegativeBinomialParams, schema: Schema) -> tuple:
        r""":math:`x\log(1 - p) + r\log p` per observed count (less the class-free
        :math:`\log\binom{x + r - 1}{x}`)."""
        return observed_pairs(params.log1m_p, np.asarray(params.r) * np.asarray(params.log_p),
                              schema.columns)

    def decode(self, values: np.ndarray, schema: Schema) -> np.ndarray:
        return values.astype(np.int64)

    @staticmethod
    def log_prior_at(prior: NegativeBinomialPrior, params: NegativeBinomialParams, method: str,
                     n_classes: int) -> float:
        shift = -1.0 if method == "map" else 0.0
        return (pseudo_log(np.asarray(prior.alpha) + shift, params.log_p)
                + pseudo_log(np.asarray(prior.beta) + shift, params.log1m_p))

    # ------------------------------------------------------------------ NumPyro
    @staticmethod
    def sample_params(prior: NegativeBinomialPrior, n_classes: int, site: str) -> dict:
        with numpyro.plate(f"{site}_feature", prior.alpha.shape[-1], dim=-1), \
                numpyro.plate("class", n_classes, dim=-2):
            return {"prob": numpyro.sample(f"{site}.prob", dist.Beta(prior.alpha, prior.beta))}

    @classmethod
    def observe(cls, params, x, y, site: str, **kw) -> None:
        p = params["prob"][y]
        r = jnp.broadcast_to(jnp.asarray(cls.known_r, p.dtype), p.shape)
        observe_columns(dist.NegativeBinomialProbs(r, 1.0 - p), x, y, site)

    @staticmethod
    def stats_log_likelihood(sample, stats: NegativeBinomialStats) -> jax.Array:
        p = sample["prob"]
        return jnp.sum(xlogy(stats.successes, p) + xlog1py(stats.failures, -p) + stats.log_coef)

    @staticmethod
    def sample_posterior(rng, posterior: NegativeBinomialPrior, n: int) -> dict:
        return {"prob": beta_draws(rng, posterior.alpha, posterior.beta, n)}

    @staticmethod
    def params_from_sample(sample, posterior: NegativeBinomialPrior) -> NegativeBinomialParams:
        p = sample["prob"]
        return NegativeBinomialParams(jnp.log(p), jnp.log1p(-p),
                                      jnp.broadcast_to(posterior.r, jnp.shape(p)))

    @staticmethod
    def posterior_distributions(posterior: NegativeBinomialPrior) -> dict:
        return {"prob": dist.Beta(posterior.alpha, posterior.beta)}

    def plug_in_sites(self, prior, params: NegativeBinomialParams) -> dict:
        return {"prob": np.exp(np.asarray(params.log_p))}
