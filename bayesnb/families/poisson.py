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

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.scipy.special import gammaln, xlogy

from . import _sparse
from ._base import (
    Family,
    Schema,
    broadcast_hyper,
    class_sums,
    column_units,
    dist,
    finish_class_sums,
    float64_mode,
    has_missing,
    label_class_sums,
    log_matmul,
    numeric_block,
    numpyro,
    pseudo_log,
    reference,
    xp_of,
)
from ._steps import step_sums
from .multinomial import (
    coefficient_rows,
    finish_coefficient,
    refine_coefficient,
)


class GammaPrior(NamedTuple):
    shape: jax.Array  # (F,) prior, or (K, F) posterior
    rate: jax.Array


class PoissonStats(NamedTuple):
    count: jax.Array  # (K, F) weighted number of observed values
    total: jax.Array  # (K, F) weighted sum of the observed values
    log_factorial: jax.Array  # () weighted sum of log x! over observed values


class PoissonParams(NamedTuple):
    log_rate: jax.Array  # (K, F)
    rate: jax.Array  # (K, F)


class NegBinShifted(NamedTuple):
    r"""The posterior predictive as the score kernel reads it (``Poisson.kernel_table``):
    :math:`\log p(x) + \log x! = x\,(\log a' - \log(1 + b')) + h(a', x) + a'\log\frac{b'}{b'+1}`
    with :math:`h(a, x) = \log\Gamma(a + x) - \log\Gamma(a) - x\log a`: for integer counts up to
    the table's ``S`` steps, :math:`h` is a sum of indicator products with ``steps``
    (``_steps.step_sums``), and the host adds it in float64 for larger counts
    (``host_tail``). The per-class terms are relative to a reference class (float64) unless
    the table serves the joint density."""

    shape: jax.Array  # (K, F) a' (float64 on the host, for the tail)
    slope: jax.Array  # (K, F) log a' - log(1 + b'), minus the column's reference
    offset: jax.Array  # (K, F) a' log(b' / (b' + 1)), minus the column's reference
    steps: jax.Array  # ((S - 1) F, K) log(1 + t / a'), t = 1 .. S - 1 (``_sparse.step_tables``)
    center: jax.Array  # (F,) an integer count the slope multiplies x minus (see PoissonShifted)
    rounding: jax.Array  # (2, F) the scores' rounding bound per |x - c| and per observed value
    bias: jax.Array  # (K,) the offsets' sum over the columns (float64), for complete rows


class PoissonShifted(NamedTuple):
    r"""The plug-in table as the score kernel reads it: :math:`(x - c)(\log\lambda_k -
    \log\lambda_{ref}) + [c(\log\lambda_k - \log\lambda_{ref}) - (\lambda_k - \lambda_{ref})]`
    with the bracket in float64. ``c`` is an integer near the rates, so ``x - c`` is exact in
    float32 for counts below 2**24 and the products stay small: without it the two large
    parts cancel in float32 sums."""

    slope: jax.Array  # (K, F)
    offset: jax.Array  # (K, F)
    center: jax.Array  # (F,)
    rounding: jax.Array  # (2, F) the scores' rounding bound per |x - c| and per observed value
    bias: jax.Array  # (K,) the offsets' sum over the columns (float64), for complete rows


def _center(rate: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """Per column an integer near the classes' rates (0 where a slope is infinite or the
    rates exceed float32's exact integers)."""
    center = np.round(np.mean(rate, axis=0))
    ok = np.all(np.isfinite(slope), axis=0) & np.isfinite(center) & (center < 2.0**24)
    return np.where(ok, center, 0.0)


def _offsets(table, observed, obs) -> jax.Array:
    """``obs @ offset.T``; for a complete row the float64 sum ``bias`` (one rounding)."""
    return jnp.where(jnp.all(observed, axis=1, keepdims=True), table.bias,
                     obs @ table.offset.T)


def _centred(table, x, product, extra=None) -> jax.Array:
    """``product(x - center) + offsets`` (plus ``extra(x)``, NaN read as 0): a complete
    chunk takes the float64 ``bias`` and no product of the observed flags."""
    def complete(x):
        x0 = x.astype(table.slope.dtype)
        out = product(x0 - table.center) + table.bias
        return out if extra is None else out + extra(x0)

    def missing(x):
        observed = ~jnp.isnan(x)
        x0 = jnp.where(observed, x, 0).astype(table.slope.dtype)
        obs = observed.astype(x0.dtype)
        out = product(x0 - obs * table.center) + _offsets(table, observed, obs)
        return out if extra is None else out + extra(x0)

    return jax.lax.cond(has_missing(x), missing, complete, x)


def _rounding(slope: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """``2 eps max_k |.|`` of the finite slopes and offsets, in the kernel's epsilon."""
    eps = 0.0 if float64_mode() else float(np.finfo(np.float32).eps)
    return 2.0 * eps * np.stack([np.max(np.where(np.isfinite(v), np.abs(v), 0.0), axis=0)
                                 for v in (slope, offset)])


class Poisson(Family):
    """Non-negative count columns, each Poisson per class with a Gamma prior on the rate.

    Parameters
    ----------
    shape, rate : float or array-like of shape (n_columns,), default=1.0 and 0.1
        Gamma(shape, rate) prior on the Poisson rate: prior mean ``shape / rate`` (10 counts),
        prior sd ``sqrt(shape) / rate``; worth ``rate`` pseudo-rows holding ``shape`` counts in
        all, so it is weak next to any class with more than a handful of rows.
    """

    name = "poisson"
    param_names = ("rate",)
    nonnegative_stats = ("count", "total")
    stated_tables = True
    supports_sparse = True
    value_checks = {"nonnegative": True, "integer": True, "small_counts": True}
    stats_type = PoissonStats
    params_type = PoissonParams
    host_numeric = True
    product_scores = True
    _hyper = ("shape", "rate")

    def __init__(self, shape=1.0, rate=0.1):
        self.shape = shape
        self.rate = rate

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        if _sparse.sparse.issparse(values):
            return _sparse.check_sparse(values, schema, "Poisson", integer=True)
        return numeric_block(values, schema, "Poisson", dtype, nonnegative=True, integer=True)

    def prior(self, schema: Schema) -> GammaPrior:
        f, cols = len(schema.columns), schema.columns
        return GammaPrior(broadcast_hyper(self.shape, f, "shape", "Poisson", columns=cols),
                          broadcast_hyper(self.rate, f, "rate", "Poisson", columns=cols))

    def check_prior(self, prior: GammaPrior, schema: Schema, method: str) -> None:
        if method == "map" and np.any(prior.shape < 1):
            raise ValueError(
                f"column {schema.columns[int(np.argmax(prior.shape < 1))]!r}: the Poisson MAP "
                "estimate needs Gamma shape >= 1 (below 1 the posterior of a "
                "class with no counts has its mode at 0 with infinite density); use "
                "method='mean' or raise shape.")

    @staticmethod
    def suff_stats(x, resp, n_levels=None) -> PoissonStats:
        observed = (~jnp.isnan(x)).astype(resp.dtype)
        x0 = jnp.where(observed > 0, x, 0).astype(resp.dtype)
        return PoissonStats(resp.T @ observed, class_sums(resp, x0, observed),
                            coefficient_rows(jnp.sum(resp, axis=1), jnp.zeros_like(x0[:, 0]),
                                             x0))

    @staticmethod
    def label_stats(x, labels, n_levels=None) -> PoissonStats:
        """:meth:`suff_stats` summed by label (no ``(rows, classes)`` one-hot).

        A complete chunk counts the class weights instead of a product of observed flags, and
        is computed outside the missing-value branch (work inside a branch ran slower on
        XLA:CPU); only a chunk with a missing value is redone with them masked."""
        def stats(x0, count, observed=None):
            return PoissonStats(count, label_class_sums(labels, x0, observed),
                                coefficient_rows(labels.weights, jnp.zeros_like(x0[:, 0]),
                                                 x0))

        def observed_only(x):
            observed = (~jnp.isnan(x)).astype(labels.dtype)
            return stats(jnp.where(observed > 0, x, 0), labels.sum(observed), observed)

        x = x.astype(labels.dtype)
        complete = stats(x, jnp.broadcast_to(labels.count()[:, None],
                                             (labels.n_classes, x.shape[1])))
        return jax.lax.cond(has_missing(x), observed_only, lambda x: complete, x)

    @staticmethod
    def finish_stats(stats: PoissonStats, shift) -> PoissonStats:
        return stats._replace(total=finish_class_sums(stats.total),
                              log_factorial=finish_coefficient(stats.log_factorial, False))

    @staticmethod
    def refine_stats(stats: PoissonStats, read) -> PoissonStats:
        return stats._replace(log_factorial=refine_coefficient(stats.log_factorial, read))

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
    def kernel_table(table, exact: bool, joint: bool):
        r"""Scores relative to a reference class, so the large common part cancels in float64:
        :math:`x(\log\lambda_k - \log\lambda_{ref}) - (\lambda_k - \lambda_{ref})`."""
        if exact:
            return Poisson.exact_table(table, 1, joint), None
        if joint:
            return table, None
        log_rate, rate = (np.asarray(v, dtype=np.float64) for v in table)
        slope = log_rate - reference(log_rate)
        center = _center(rate, slope)
        offset = np.where(np.isfinite(slope), center * slope, 0.0) - rate
        offset = offset - reference(offset)
        return PoissonShifted(slope, offset, center, _rounding(slope, offset),
                              offset.sum(axis=1)), None

    @staticmethod
    def exact_table(table: GammaPrior, steps: int, joint: bool) -> NegBinShifted:
        """The negative binomial's kernel table with ``steps`` indicator steps (see
        :class:`NegBinShifted`); relative to reference classes unless ``joint``."""
        a, b = (np.asarray(v, dtype=np.float64) for v in table[:2])
        slope = np.log(a) - np.log1p(b)
        # -a log(1 + 1/b), not a (log b - log(1 + b)): with b near 1e8 that difference
        # keeps 5e-7 of its value, times a near 1e13 (huge sample weights) 0.05 nats
        offset = -a * np.log1p(1.0 / b)
        if joint:
            return NegBinShifted(a, slope, offset, _sparse.step_tables(a, steps, False),
                                 np.zeros(a.shape[1]), np.zeros((2, a.shape[1])),
                                 offset.sum(axis=1))
        slope = slope - reference(slope)
        center = _center(a / b, slope)
        offset = offset + center * slope
        offset = offset - reference(offset)
        return NegBinShifted(a, slope, offset, _sparse.step_tables(a, steps, True), center,
                             _rounding(slope, offset), offset.sum(axis=1))

    @staticmethod
    def host_tail(table: NegBinShifted, x: np.ndarray, steps: int,
                  integral: bool = False, positions: np.ndarray | None = None) -> np.ndarray:
        r"""float64 :math:`\sum_j h(a'_{kj}, x_j)` over the counts above ``steps``."""
        return _sparse.dense_rising_tail(table.shape, x, steps, integral, positions)

    @staticmethod
    def score_rounding(table, x, scores) -> jax.Array:
        r"""Twice float32's epsilon times :math:`\sqrt{\sum_j ((x_j - c_j) \max_k |s_{kj}|)^2}
        + \max_k |o_{kj}|` (slopes ``s``, offsets ``o``; for a complete row the offsets' one
        rounding instead), per row: the products' roundings are independent, so their typical
        size is the root sum of squares (as for the Multinomial; the plain sum refused ordinary
        200-column count data). Counts beyond float32's exact integers (2**24) are refused
        unless their products stay small."""
        if not isinstance(table, (PoissonShifted, NegBinShifted)) or float64_mode():
            return jnp.zeros(x.shape[0])  # float64 kernels: nothing to bound (no pass over x)
        observed = ~jnp.isnan(x)
        obs = observed.astype(table.rounding.dtype)
        x0 = jnp.where(observed, x, 0).astype(obs.dtype)
        complete = jnp.all(observed, axis=1)
        # a complete row's offsets are one float64 sum, rounded once to float32
        once = jnp.finfo(obs.dtype).eps * jnp.max(jnp.abs(table.bias))
        dev = x0 - obs * table.center
        return (jnp.sqrt((dev * dev) @ (table.rounding[0] * table.rounding[0]))
                + jnp.where(complete, once, obs @ table.rounding[1]))

    @staticmethod
    def posterior(prior: GammaPrior, stats: PoissonStats) -> GammaPrior:
        return GammaPrior(prior.shape + stats.total, prior.rate + stats.count)

    @staticmethod
    def log_likelihood(params, x, n_levels=None) -> jax.Array:
        observed = ~jnp.isnan(x)
        if isinstance(params, PoissonShifted):  # the kernel's form (``kernel_table``)
            # where the table has -inf (a zero ML rate), the center is 0 and log_matmul's
            # 0 * log 0 = 0 applies to x itself
            return _centred(params, x, partial(log_matmul, log_table=params.slope))
        x0 = jnp.where(observed, x, 0).astype(params.rate.dtype)
        return log_matmul(x0, params.log_rate) - observed.astype(x0.dtype) @ params.rate.T

    @staticmethod
    def linear_scores(params: PoissonParams) -> tuple:
        r""":math:`\sum_j x_j \log\lambda_{kj} - \sum_j \lambda_{kj}` (the class-free
        :math:`-\log x_j!` left out, as in ``log_likelihood``)."""
        return params.log_rate, -jnp.sum(params.rate, axis=1)

    @staticmethod
    def log_predictive(posterior, x, n_levels=None) -> jax.Array:
        observed = ~jnp.isnan(x)
        if isinstance(posterior, NegBinShifted):  # the kernel's form (``kernel_table``)
            return _centred(posterior, x, lambda xc: xc @ posterior.slope.T,
                            lambda x0: step_sums(x0, posterior.steps))
        a, b = posterior.shape, posterior.rate  # (K, F)
        x0 = jnp.where(observed, x, 0).astype(a.dtype)[:, None, :]  # (n, 1, F)
        # negative binomial without its class-free -log x!
        log_pmf = (gammaln(x0 + a) - gammaln(a) - a * jnp.log1p(1.0 / b)
                   - x0 * jnp.log1p(b))
        return jnp.sum(jnp.where(observed[:, None, :], log_pmf, 0.0), axis=-1)

    @staticmethod
    def log_normalizer(x) -> jax.Array:
        return -jnp.sum(gammaln(jnp.nan_to_num(x, nan=0.0) + 1.0), axis=1)

    @staticmethod
    def log_evidence(prior: GammaPrior, stats: PoissonStats) -> jax.Array:
        post = Poisson.posterior(prior, stats)
        return (jnp.sum(prior.shape * jnp.log(prior.rate) - post.shape * jnp.log(post.rate)
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
            return PoissonParams(jnp.asarray(np.log(rate)), jnp.asarray(rate))

    # ------------------------------------------------------------------ scipy.sparse input
    @staticmethod
    def sparse_suff_stats(X, resp) -> PoissonStats:
        # resp: an (n, K) array or _sparse.Labels; every column is observed in every row
        count = np.repeat(_sparse.class_weights(resp)[:, None], X.shape[1], axis=1)
        return PoissonStats(count, _sparse.class_totals(X, resp),
                            np.float64(_sparse.row_weights(resp) @ _sparse.row_totals(X)[1]))

    @staticmethod
    def sparse_log_likelihood(params: PoissonParams, X) -> np.ndarray:
        rate = np.asarray(params.rate, dtype=np.float64)
        return _sparse.log_matmul(X, params.log_rate) - rate.sum(axis=1)

    @staticmethod
    def sparse_log_predictive(posterior: GammaPrior, X) -> np.ndarray:
        r"""A zero count has NB pmf :math:`(b/(b + 1))^a`: summed over all columns, plus
        :math:`x(\log a - \log(1 + b)) + h(a, x)` over the stored values as one sparse
        product against a table by (count, column) (``_sparse.linear_rising``), in float64."""
        a, b = (np.asarray(v, dtype=np.float64) for v in posterior)
        base = np.sum(-a * np.log1p(1.0 / b), axis=1)  # see ``exact_table``
        out, _ = _sparse.linear_rising(X, posterior, lambda: np.log(a) - np.log1p(b), a)
        out += base
        return out

    @staticmethod
    def sparse_log_normalizer(X) -> np.ndarray:
        return -_sparse.row_totals(X)[1]

    @staticmethod
    def sample_params(prior: GammaPrior, n_classes: int, site: str):
        with numpyro.plate(f"{site}_feature", prior.shape.shape[-1], dim=-1), \
                numpyro.plate("class", n_classes, dim=-2):
            rate = numpyro.sample(f"{site}.rate", dist.Gamma(prior.shape, prior.rate))
        return {"rate": rate}

    @staticmethod
    def observe(params, x, y, site: str, **kw) -> None:
        if x is None:
            with numpyro.plate("row", y.shape[0], dim=-2), \
                    numpyro.plate(f"{site}_feature", params["rate"].shape[-1], dim=-1):
                numpyro.sample(f"{site}.x", dist.Poisson(params["rate"][y]))
            return
        observed = ~jnp.isnan(x)
        with numpyro.plate("row", x.shape[0], dim=-2):
            with numpyro.plate(f"{site}_feature", x.shape[1], dim=-1):
                numpyro.sample(f"{site}.x", dist.Poisson(params["rate"][y]).mask(observed),
                               obs=jnp.where(observed, x, 0))

    @staticmethod
    def stats_log_likelihood(sample, stats: PoissonStats) -> jax.Array:
        rate = sample["rate"]
        return jnp.sum(xlogy(stats.total, rate) - stats.count * rate) - stats.log_factorial

    @staticmethod
    def sample_posterior(rng, posterior: GammaPrior, n: int) -> dict:
        shape = np.asarray(posterior.shape, dtype=np.float64)
        rate = np.asarray(posterior.rate, dtype=np.float64)
        return {"rate": rng.standard_gamma(np.broadcast_to(shape, (n,) + shape.shape)) / rate}

    @staticmethod
    def params_from_sample(sample, posterior) -> PoissonParams:
        return PoissonParams(jnp.log(sample["rate"]), sample["rate"])

    @staticmethod
    def posterior_distributions(posterior: GammaPrior) -> dict:
        return {"rate": dist.Gamma(posterior.shape, posterior.rate)}

    def dependence_units(self, x, prior: dict, schema: Schema) -> list:
        return column_units("poisson", x, prior, schema)

    def decode(self, values: np.ndarray, schema: Schema) -> np.ndarray:
        return values.astype(np.int64)

    @staticmethod
    def log_prior_at(prior: GammaPrior, params: PoissonParams, method: str,
                     n_classes: int) -> float:
        shift = -1.0 if method == "map" else 0.0
        return (pseudo_log(np.asarray(prior.shape) + shift, params.log_rate)
                - float(np.sum(np.asarray(prior.rate) * params.rate)))
