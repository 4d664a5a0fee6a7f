r"""Categorical likelihood with a Dirichlet prior: one die per class and column.

.. math::

    \boldsymbol\theta_{kj} \sim \mathrm{Dirichlet}(\boldsymbol\alpha_j), \qquad
    x_{ij} \mid c_i = k \sim \mathrm{Categorical}(\boldsymbol\theta_{kj}).

This is the right model for a many-valued attribute (Barber, seed 000, section 4: one-hot coding
into Bernoullis breaks the independence assumption). With :math:`n_{kjv}` the weighted count of
level :math:`v` of column :math:`j` in class :math:`k`, :math:`n_{kj} = \sum_v n_{kjv}` and
:math:`A_j = \sum_v \alpha_{jv}` over the :math:`V_j` levels:

* ML: :math:`n_{kjv}/n_{kj}` (the PlayTennis tables of seed 003, e1071's tables in seed 004);
* posterior mean: :math:`(n_{kjv} + \alpha_{jv})/(n_{kj} + A_j)`; with a symmetric
  :math:`\alpha = m/V_j` this is the m-estimate :math:`(n_c + m p)/(n + m)`, :math:`p = 1/V_j`
  (seed 003), and with :math:`\alpha` it is scikit-learn's ``CategoricalNB(alpha)``;
* MAP: :math:`(n_{kjv} + \alpha_{jv} - 1)/(n_{kj} + A_j - V_j)`, defined for :math:`\alpha\ge 1`;
  MAP under :math:`\alpha + 1` equals the posterior mean under :math:`\alpha`;
* posterior: Dirichlet(:math:`\boldsymbol\alpha_j + \mathbf n_{kj}`); the predictive of one new
  value is the posterior mean (Dirichlet-categorical);
* evidence: :math:`\sum_{kj} \log\Gamma(A_j) - \log\Gamma(A_j + n_{kj}) + \sum_v
  \log\Gamma(\alpha_{jv} + n_{kjv}) - \log\Gamma(\alpha_{jv})`.

A value never seen in training (nor declared) gets, under ``mean``/``bayes``, the probability
of a zero-count level with the column's mean concentration :math:`\bar\alpha_j`,
:math:`\bar\alpha_j/(n_{kj} + A_j)` (:math:`(\bar\alpha_j - 1)/(n_{kj} + A_j - V_j)` under
MAP); under ML it has none (see ``unseen``). Levels are validated, encoded and laid out flat
(column :math:`j` owns entries ``offset[j] : offset[j] + V_j`` of every ``(.., L)`` array) by
``families._levels``.

The fast layer counts and scores labelled dense data on the host in float64
(``bayesnb.fast.categorical``); the functions below are the model's own maths.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import xlogy

from .._typing import ArrayLike, Hyper
from . import _levels as levels
from ._base import (
    Schema,
    dirichlet_draws,
    dist,
    imprecise_level_bounds,
    log_gamma_ratio,
    numpyro,
    pseudo_log,
    xp_of,
)
from ._contract import ConjugateFamily
from ._levels import UnseenCategoryWarning
from ._pooling import DEFAULT_CONCENTRATION, Pooled, sample_dirichlet_mean


class DirichletPrior(NamedTuple):
    alpha: jax.Array  # (L,) prior, or (K, L) posterior
    segment: jax.Array  # (L,) int: the column each flat level belongs to
    offset: jax.Array  # (F,) int: first flat level of each column
    unseen: jax.Array  # (F,) pseudo-count of a level never seen in training (mean alpha)


class CategoricalStats(NamedTuple):
    counts: jax.Array  # (K, L) weighted level counts


#: no observations: the estimates of a posterior are then its predictive (``log_predictive``)
_NO_DATA = CategoricalStats(0.0)


class CategoricalParams(NamedTuple):
    log_prob: jax.Array  # (K, L)
    offset: jax.Array  # (F,)
    log_unseen: jax.Array  # (K, F) log-probability of a value never seen in training


class Categorical(levels.LevelledColumns, Pooled, ConjugateFamily):
    """Many-valued columns of any hashable values (strings, integers, booleans).

    Parameters
    ----------
    alpha : float, array-like of shape (n_columns,), or sequence of per-level arrays, default=1.0
        Dirichlet concentration. A scalar is symmetric over every column's levels; one value per
        column is symmetric within that column; a sequence of arrays gives each column's levels
        their own pseudo-counts, in each column's level order: ``categories``, a pandas
        category column's categories, else the sorted levels.
    categories : sequence of sequences, or sequence of levels for one column, optional
        The levels of each column, declared up front: one list per column
        (``[["1st", "2nd"], ["F", "M"]]``), or for a Categorical of one column its levels
        directly (``["1st", "2nd", "3rd", "Crew"]``). By default the levels are the distinct
        values seen at fit time, sorted; a pandas ``category`` column's are its categories, in
        their order, unused ones included (as R keeps a factor's levels). Each level is listed
        once; a string is not a list of levels (``"SML"`` is refused, not split into
        characters).
    unseen : {"warn", "smooth", "error"}, default="warn"
        What a value never seen in training (nor declared) means at prediction under the
        smoothing methods (``mean``, ``map``, ``bayes``, ``mcmc``): ``"smooth"`` gives it the
        probability of a zero-count level; ``"warn"`` (the default) does the same and issues an
        :class:`UnseenCategoryWarning` naming the column and the first such values, since a
        misspelling (``"Crw"`` for ``"Crew"``) would otherwise pass unnoticed; ``"error"``
        refuses it with a ``ValueError``. Under ``ml`` (and in a model built from tables) an
        unseen value is always an error: no estimate gives it a probability.
    pooling : {"none", "partial"}, default="none"
        ``"partial"`` (``method="mcmc"`` only): a column's class tables share strength,
        Dirichlet(s m) around m ~ Dirichlet(alpha), s ~ Gamma, both learned (``_pooling``).
    pooling_concentration : (float, float), default=(1.0, 0.1)
        Shape and rate of the Gamma prior on s.

    Examples
    --------
    Under ``method="mean"`` a level's probability is (count + alpha) / (rows + levels * alpha):

    >>> import pandas as pd, bayesnb as bnb
    >>> X = pd.DataFrame({"colour": ["red", "red", "blue", "green"]})
    >>> clf = bnb.NaiveBayes(bnb.Categorical(alpha=1.0), method="mean").fit(X, ["a", "a", "b", "b"])
    >>> clf.conditional_tables()["colour"]  # class a: red (2 + 1) / (2 + 3), blue (0 + 1) / 5
    colour  blue  green  red
    class
    a        0.2    0.2  0.6
    b        0.4    0.4  0.2

    Declared levels are kept even where the data never show them (class a: red (2 + 1) / 6):

    >>> colour = bnb.Categorical(categories=["red", "green", "blue", "white"])
    >>> clf = bnb.NaiveBayes(colour, method="mean").fit(X, ["a", "a", "b", "b"])
    >>> clf.conditional_tables()["colour"].round(4)
    colour     red   green    blue   white
    class
    a       0.5000  0.1667  0.1667  0.1667
    b       0.1667  0.3333  0.3333  0.1667
    """

    name = "categorical"
    concentrations = ("alpha",)
    nonnegative_stats = ("counts",)
    stated_tables = True
    column_sites = True
    predictive_is_plug_in = True
    imprecise = True
    sklearn_view = "categorical"
    integer_codes = True
    stats_type = CategoricalStats
    params_type = CategoricalParams
    _hyper = ("alpha", "categories", "unseen", "pooling", "pooling_concentration")

    @staticmethod
    def observed_counts(prior: DirichletPrior, stats: CategoricalStats) -> np.ndarray:
        """Per class and column, the level counts summed: the observed values."""
        return np.add.reduceat(np.asarray(stats.counts), np.asarray(prior.offset), axis=1)

    def __init__(self, alpha: Hyper | Sequence[ArrayLike] = 1.0,
                 categories: Sequence[Hashable] | Sequence[Sequence[Hashable]] | None = None,
                 unseen: str = "warn", pooling: str = "none",
                 pooling_concentration: tuple[float, float] = DEFAULT_CONCENTRATION) -> None:
        self.alpha, self.categories, self.unseen = alpha, categories, unseen
        self.pooling, self.pooling_concentration = pooling, pooling_concentration

    def prior(self, schema: Schema) -> DirichletPrior:
        sizes = np.array([len(lv) for lv in schema.levels], dtype=np.int64)
        if np.any(sizes == 0):
            j = int(np.argmin(sizes))
            raise ValueError(f"column {schema.columns[j]!r}: no observed categories.")
        offset, segment = levels.flat_layout(sizes)
        alpha = levels.level_values(self.alpha, schema, "alpha", "Categorical")
        unseen = np.bincount(segment, weights=alpha) / sizes
        self.pooling_prior()  # a bad pooling setting is refused at fit and load
        return DirichletPrior(alpha, segment, offset, unseen)

    @staticmethod
    def sample_pooled(prior: DirichletPrior, pool, site: str) -> DirichletPrior:
        """Sites ``"{site}.{j}.shared_mean"``, ``"{site}.{j}.concentration"`` per column j."""
        alpha = [sample_dirichlet_mean(a, pool, f"{site}.{j}")
                 for j, a in enumerate(levels.split_levels(prior.alpha, prior.offset))]
        return prior._replace(alpha=levels.join_levels(alpha))

    @staticmethod
    def with_hyper(prior: DirichletPrior, name: str, value) -> DirichletPrior:
        per_column = jnp.broadcast_to(value, prior.offset.shape)  # a scalar, or one per column
        return prior._replace(alpha=per_column[prior.segment], unseen=per_column)

    def check_prior(self, prior: DirichletPrior, schema: Schema, method: str) -> None:
        if method == "map" and np.any(prior.alpha < 1):
            col = schema.columns[int(prior.segment[np.argmax(prior.alpha < 1)])]
            raise ValueError(
                f"column {col!r}: the Categorical MAP estimate needs every Dirichlet "
                f"concentration >= 1 (below 1 the density has no interior mode); use "
                f"method='mean' or raise alpha.")

    # ------------------------------------------------------------------ numeric side
    @staticmethod
    def suff_stats(codes, resp, n_levels=None) -> CategoricalStats:
        one_hot = levels._one_hot(codes, n_levels, resp.dtype)
        return CategoricalStats(levels._to_flat(resp.T @ one_hot, n_levels))

    @staticmethod
    def estimate(prior: DirichletPrior, stats: CategoricalStats, method: str):
        shift = {"ml": 0.0, "map": -1.0, "mean": 0.0}[method]
        pseudo = 0.0 if method == "ml" else prior.alpha + shift
        num = stats.counts + pseudo
        totals = levels.column_totals(num, prior.segment, prior.offset.shape[0])
        log = levels.host_log if isinstance(num, np.ndarray) else jnp.log
        log_prob = log(num) - log(totals)
        # an unseen value gets what a zero-count level with the column's mean pseudo-count gets
        unseen = 0.0 if method == "ml" else prior.unseen + shift
        log_unseen = log(unseen) - log(totals[:, prior.offset])
        return CategoricalParams(log_prob, prior.offset, log_unseen)

    @staticmethod
    def posterior(prior: DirichletPrior, stats: CategoricalStats) -> DirichletPrior:
        return DirichletPrior(prior.alpha + stats.counts, prior.segment, prior.offset,
                              prior.unseen)

    @staticmethod
    def log_likelihood(params: CategoricalParams, codes, n_levels=None) -> jax.Array:
        if n_levels is not None:  # the same sum as one-hot products (``_levels``)
            return levels.one_hot_log_likelihood(params, codes, n_levels)
        observed = codes >= 0
        flat = jnp.where(observed, codes + params.offset, 0)
        picked = params.log_prob[:, flat]  # (K, n, F)
        picked = jnp.where(codes == levels.UNSEEN, params.log_unseen[:, None, :], picked)
        return jnp.sum(jnp.where(codes != -1, picked, 0.0), axis=-1).T

    @staticmethod
    def log_predictive(posterior: DirichletPrior, codes, n_levels=None) -> jax.Array:
        return Categorical.log_likelihood(Categorical.estimate(posterior, _NO_DATA, "mean"),
                                          codes, n_levels)

    @staticmethod
    def log_evidence(prior: DirichletPrior, stats: CategoricalStats) -> jax.Array:
        # per class and column log B(alpha + N) - log B(alpha) over the column's levels,
        # pivoting on its largest alpha + N (families._base.log_dirichlet_ratio)
        xp, f = xp_of(prior, stats), prior.offset.shape[0]
        alpha = xp.broadcast_to(prior.alpha, xp.shape(stats.counts))
        star = levels.column_pivot(alpha + stats.counts, prior.segment, f)

        def per_column(v):  # (K, L) -> (K, F)
            return levels.column_sums(v, prior.segment, f)

        a_star, a_rest = per_column(xp.where(star, alpha, 0.0)), per_column(
            xp.where(star, 0.0, alpha))
        n_star, n_rest = per_column(xp.where(star, stats.counts, 0.0)), per_column(
            xp.where(star, 0.0, stats.counts))
        others = per_column(xp.where(star, 0.0, log_gamma_ratio(alpha, stats.counts)))
        return xp.sum(others + log_gamma_ratio(a_star, a_rest)
                      - log_gamma_ratio(a_star + n_star, a_rest + n_rest))

    @staticmethod
    def describe(params: CategoricalParams, schema: Schema, classes) -> dict:
        return levels.level_tables(np.exp(np.asarray(params.log_prob)), schema, classes)

    @staticmethod
    def from_tables(tables: dict, schema: Schema, classes) -> CategoricalParams:
        """``tables[column][class][level]`` is P(x = level | class); rows must sum to 1."""
        return CategoricalParams(*levels.stated_log_tables(tables, schema, classes))

    @staticmethod
    def stated_cell_of(row) -> dict:
        return row.to_dict()

    # ------------------------------------------------------------------ NumPyro
    @staticmethod
    def sample_params(prior: DirichletPrior, n_classes: int, site: str):
        params = {}
        with numpyro.plate("class", n_classes, dim=-1):
            for j, a in enumerate(levels.split_levels(prior.alpha, prior.offset)):
                params[f"{j}.probs"] = numpyro.sample(f"{site}.{j}.probs", dist.Dirichlet(a))
        return params

    @staticmethod
    def observe(params, codes, y, site: str, **kw) -> None:
        if codes is None:
            with numpyro.plate("row", y.shape[0], dim=-1):
                for j in range(sum(1 for k in params if k.endswith(".probs"))):
                    numpyro.sample(f"{site}.{j}.x", dist.Categorical(params[f"{j}.probs"][y]))
            return
        with numpyro.plate("row", codes.shape[0], dim=-1):
            for j in range(codes.shape[1]):
                probs = params[f"{j}.probs"]
                observed = codes[:, j] >= 0
                numpyro.sample(f"{site}.{j}.x", dist.Categorical(probs[y]).mask(observed),
                               obs=jnp.where(observed, codes[:, j], 0))

    @staticmethod
    def stats_log_likelihood(sample, stats: CategoricalStats) -> jax.Array:
        n_columns = sum(1 for k in sample if k.endswith(".probs"))
        probs = levels.join_levels([sample[f"{j}.probs"] for j in range(n_columns)])
        return jnp.sum(xlogy(stats.counts, probs))

    @staticmethod
    def sample_posterior(rng, posterior: DirichletPrior, n: int) -> dict:
        alpha = np.asarray(posterior.alpha, dtype=np.float64)
        return {f"{j}.probs": dirichlet_draws(rng, a, n)
                for j, a in enumerate(levels.split_levels(alpha, posterior.offset))}

    @staticmethod
    def params_from_sample(sample, posterior: DirichletPrior) -> CategoricalParams:
        probs = [sample[f"{j}.probs"] for j in range(posterior.offset.shape[0])]
        log_prob = xp_of(sample).log(levels.join_levels(probs))
        # a value unseen in training has no parameter in a draw: it gets the exact predictive
        exact = Categorical.estimate(posterior, _NO_DATA, "mean")
        return CategoricalParams(log_prob, posterior.offset, exact.log_unseen)

    @staticmethod
    def posterior_distributions(posterior: DirichletPrior) -> dict:
        return {f"{j}.probs": dist.Dirichlet(a)
                for j, a in enumerate(levels.split_levels(posterior.alpha, posterior.offset))}

    def plug_in_sites(self, prior: DirichletPrior, params: CategoricalParams) -> dict:
        return {f"{j}.probs": np.exp(p) for j, p in enumerate(
            levels.split_levels(np.asarray(params.log_prob), np.asarray(params.offset)))}

    def param_dims(self, prior: DirichletPrior, schema: Schema) -> dict:
        axes = {"probs": ("class", "level"),
                **self.pooled_sites({"shared_mean": ("level",), "concentration": ()})}
        return {f"{j}.{k}": a for j in range(len(schema.columns)) for k, a in axes.items()}

    def linear_terms(self, params: CategoricalParams, schema: Schema) -> tuple:
        """One weight per (column, level) over one-hot codes, and per column whose unseen value
        has a probability in every class, one for ``"col=<unseen>"``."""
        return levels.one_hot_terms(params.log_prob, params.log_unseen, schema)

    def linear_features(self, x: np.ndarray, schema: Schema,
                        params: CategoricalParams) -> np.ndarray:
        return levels.one_hot_features(x, schema, params.log_unseen)

    @staticmethod
    def imprecise_log_predictive(prior: DirichletPrior, stats: CategoricalStats,
                                 codes: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
        """Dirichlet(s t) for every t in the open simplex of each column's levels: P(x = v | c)
        = (n_cv + s t_v) / (n_c + s), at its extremes when t_v is 0 or 1
        (``_base.imprecise_level_bounds``). ``codes`` must hold fitted levels or -1
        (missing): under the imprecise model the levels are fixed in advance."""
        hits, totals, observed, sizes = levels.level_hits(prior, stats, codes)
        return imprecise_level_bounds(hits, totals, observed, sizes, s)

    @staticmethod
    def log_prior_at(prior: DirichletPrior, params: CategoricalParams, method: str,
                     n_classes: int) -> float:
        shift = -1.0 if method == "map" else 0.0
        return pseudo_log(np.asarray(prior.alpha) + shift, params.log_prob)


__all__ = ["Categorical", "CategoricalParams", "CategoricalStats", "DirichletPrior",
           "UnseenCategoryWarning"]

