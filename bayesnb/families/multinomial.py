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

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.scipy.special import xlogy

from .._typing import Hyper
from ..fast import _sparse
from ._base import (
    Schema,
    broadcast_hyper,
    cond,
    dirichlet_draws,
    dist,
    gammaln_of,
    has_missing,
    log_dirichlet_ratio,
    log_matmul,
    numeric_block,
    numpyro,
    pseudo_log,
    rising_log_bounds,
    xlogy_of,
    xp_of,
)
from ._contract import ConjugateFamily
from ._pooling import DEFAULT_CONCENTRATION, Pooled, sample_dirichlet_mean


class MultinomialDirichletPrior(NamedTuple):
    alpha: jax.Array  # (V,) prior, or (K, V) posterior


class MultinomialStats(NamedTuple):
    counts: jax.Array  # (K, V) weighted column totals per class
    log_coef: jax.Array  # () weighted sum of the rows' log multinomial coefficients


class MultinomialParams(NamedTuple):
    log_prob: jax.Array  # (K, V)


class Multinomial(Pooled, ConjugateFamily):
    """Count columns that together form one multinomial vector per row (bag of words).

    Parameters
    ----------
    alpha : float or array-like of shape (n_columns,), default=1.0
        Dirichlet concentration over the columns; ``alpha`` is scikit-learn's ``alpha`` under
        ``method="mean"`` (Lidstone smoothing; 1 is Laplace).
    pooling : {"none", "partial"}, default="none"
        ``"partial"`` (``method="mcmc"`` only): the classes' word distributions share strength,
        Dirichlet(s m) around m ~ Dirichlet(alpha), s ~ Gamma, both learned
        (``families._pooling``).
    pooling_concentration : (float, float), default=(1.0, 0.1)
        Shape and rate of the Gamma prior on s.

    Examples
    --------
    Word counts of four documents. With ``class_alpha=0`` (the class frequencies) this is
    scikit-learn's ``MultinomialNB(alpha=1.0)``:

    >>> import numpy as np, bayesnb as bnb
    >>> from sklearn.naive_bayes import MultinomialNB
    >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 0, 4]])
    >>> y = ["finance", "finance", "sport", "sport"]
    >>> clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0).fit(X, y)
    >>> np.exp(clf.feature_log_prob_).round(4)  # finance: (5 + 1) / (7 + 3), (1 + 1) / 10, ...
    array([[0.6   , 0.2   , 0.2   ],
           [0.1538, 0.2308, 0.6154]])
    >>> bool(np.allclose(clf.predict_proba(X), MultinomialNB(alpha=1.0).fit(X, y).predict_proba(X)))
    True
    """

    name = "multinomial"
    concentrations = ("alpha",)
    value_checks = {"nonnegative": True}
    param_names = ("probs",)
    nonnegative_stats = ("counts",)
    sklearn_view = "multinomial"
    stats_type = MultinomialStats
    params_type = MultinomialParams
    joint_columns = True
    imprecise = True
    _hyper = ("alpha", "pooling", "pooling_concentration")

    def __init__(self, alpha: Hyper = 1.0, pooling: str = "none",
                 pooling_concentration: tuple[float, float] = DEFAULT_CONCENTRATION) -> None:
        self.alpha = alpha
        self.pooling, self.pooling_concentration = pooling, pooling_concentration

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        if _sparse.sparse.issparse(values):
            return _sparse.check_sparse(values, schema, "Multinomial")
        return numeric_block(values, schema, "Multinomial", dtype, nonnegative=True)

    def prior(self, schema: Schema) -> MultinomialDirichletPrior:
        self.pooling_prior()  # a bad pooling setting is refused at fit and load
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
        xp = xp_of(x, resp)  # NumPy float64 on the host, JAX in the kernels
        x0 = xp.nan_to_num(x, nan=0.0).astype(resp.dtype)  # a missing count adds nothing
        return MultinomialStats(resp.T @ x0, resp.sum(axis=1) @ Multinomial.log_normalizer(x0))

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
    def posterior(prior, stats: MultinomialStats) -> MultinomialDirichletPrior:
        return MultinomialDirichletPrior(prior.alpha + stats.counts)

    @staticmethod
    def log_likelihood(params, x, n_levels=None) -> jax.Array:
        xp = xp_of(params, x)

        def complete(x):
            return log_matmul(x.astype(params.log_prob.dtype), params.log_prob)

        def missing(x):  # a row with missing columns is a multinomial over its observed ones
            x0 = xp.nan_to_num(x, nan=0.0).astype(params.log_prob.dtype)
            observed = (~xp.isnan(x)).astype(x0.dtype)
            mass = xlogy_of(xp)(x0.sum(axis=1, keepdims=True),
                                observed @ xp.exp(params.log_prob).T)
            return log_matmul(x0, params.log_prob) - mass

        return cond(has_missing(x), missing, complete, x)

    @staticmethod
    def log_predictive(posterior, x, n_levels=None) -> jax.Array:
        # log B(alpha' + x) - log B(alpha') over the observed columns only (their
        # concentration alone enters the Dirichlet-multinomial's normaliser)
        xp = xp_of(posterior, x)
        a = posterior.alpha  # (K, V)
        x0 = xp.nan_to_num(x, nan=0.0).astype(a.dtype)[:, None, :]  # (n, 1, V)
        return log_dirichlet_ratio(a[None], x0, ~xp.isnan(x)[:, None, :])

    @staticmethod
    def log_normalizer(x) -> jax.Array:
        xp = xp_of(x)
        gammaln = gammaln_of(xp)
        x0 = xp.nan_to_num(x, nan=0.0)  # a missing count counts as 0
        return gammaln(xp.sum(x0, axis=1) + 1.0) - xp.sum(gammaln(x0 + 1.0), axis=1)

    @staticmethod
    def log_evidence(prior, stats: MultinomialStats) -> jax.Array:
        # per class log B(alpha + N_k) - log B(alpha), without the counts' large log-Gammas
        xp = xp_of(prior, stats)
        return xp.sum(log_dirichlet_ratio(prior.alpha, stats.counts)) + stats.log_coef

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

    @staticmethod
    def sample_pooled(prior, pool, site: str) -> MultinomialDirichletPrior:
        """Sites ``"{site}.shared_mean"`` (one per column) and ``"{site}.concentration"``."""
        return MultinomialDirichletPrior(sample_dirichlet_mean(prior.alpha, pool, site))

    def param_dims(self, prior, schema: Schema) -> dict:
        return {"probs": ("class", "feature"),
                **self.pooled_sites({"shared_mean": ("feature",), "concentration": ()})}

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
        return MultinomialParams(xp_of(sample).log(sample["probs"]))

    @staticmethod
    def posterior_distributions(posterior) -> dict:
        return {"probs": dist.Dirichlet(posterior.alpha)}

    def plug_in_sites(self, prior, params: MultinomialParams) -> dict:
        return {"probs": np.exp(np.asarray(params.log_prob))}

    @staticmethod
    def imprecise_log_predictive(prior, stats: MultinomialStats, x: np.ndarray,
                                 s: float) -> tuple[np.ndarray, np.ndarray]:
        """Dirichlet(s t) for every t in the open simplex over the columns: the
        Dirichlet-multinomial predictive is concave in t, least at a vertex (exact) and
        greatest inside, bounded from above through the Lagrangian dual
        (``_base.rising_log_bounds``)."""
        x = np.asarray(x, dtype=np.float64)
        missing = np.isnan(x).any(axis=1)
        if missing.any():
            raise ValueError(f"row {int(np.argmax(missing))}: a Multinomial block with a "
                             f"missing count has no credal bounds (the predictive of the "
                             f"observed counts alone is another model); fill or drop it.")
        counts = np.asarray(stats.counts, dtype=np.float64)
        return rising_log_bounds(counts, x, counts.sum(axis=1), s)

    def dependence_units(self, x, prior: dict, schema: Schema) -> list:
        """One unit: the block's columns share the document length (rows with a missing count
        left out)."""
        return [(tuple(schema.columns), "multinomial", x, ~np.isnan(x).any(axis=1),
                 {"alpha": prior["alpha"].astype(np.float64)}, "")]

    def linear_terms(self, params: MultinomialParams, schema: Schema) -> tuple:
        r""":math:`\sum_v x_v\log\theta_{kv}` (the coefficient is class-free)."""
        log_prob = np.asarray(params.log_prob, dtype=np.float64)
        return log_prob, [str(c) for c in schema.columns], np.zeros(log_prob.shape[0])

    def linear_features(self, x: np.ndarray, schema: Schema, params) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        missing = np.isnan(x)
        if missing.any():  # the renormalisation over the observed columns is not linear
            row, col = np.argwhere(missing)[0]
            raise ValueError(
                f"column {schema.columns[col]!r}: row {row} has a missing count; a Multinomial "
                f"row with missing counts is scored with its probabilities renormalised over "
                f"the observed columns, which no linear view holds (predict_joint_log_proba "
                f"scores it).")
        return x

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
