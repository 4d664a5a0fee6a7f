r"""Kernel density per class and column (R naivebayes' ``usekernel=TRUE``, klaR).

For class :math:`k` and column :math:`j`, with training values :math:`x_i` of weight
:math:`w_i` (missing values dropped), bandwidth :math:`h_{kj}` and one of R's kernels
:math:`K` scaled to standard deviation 1 (``families._kernels_r``; Gaussian by default):

.. math::

    \log \hat f_{kj}(x) = \operatorname{logsumexp}_i\Big(\log w_i
        + \log K\big(\tfrac{x - x_i}{h_{kj}}\big)\Big)
        - \log h_{kj} - \log \textstyle\sum_i w_i ,

so :math:`h_{kj}` is the standard deviation of each kernel, as in R's ``density(bw=)``.

Evaluated exactly in log space over every training value (no grid, no binning), in row chunks
of at most :data:`BUDGET` elements per class, on the host in float64 whatever JAX's dtype mode.
So no Gaussian density underflows to zero far from the data: the log density there is the
(finite) log of the nearest kernels. A compact kernel's density is exactly 0 (log -inf) beyond
its support: a class is then impossible there, and a row whose value is beyond every class's
support is refused naming the column and rows (``p(class | x)`` is 0/0). R's naivebayes
instead evaluates ``density()`` (a binned FFT estimate on a 512-point grid) with ``approx`` and
replaces densities below ``threshold = 0.001`` (including everything outside the grid) by
0.001, so the two differ by that binning inside the data's range and arbitrarily far from it.

Bandwidth (``bandwidth=``, times ``adjust``, as in R's ``density(bw=, adjust=)``): R's
``"nrd0"`` (the default), ``"nrd"`` (``"scott"``), ``"ucv"``, ``"bcv"``, ``"SJ"``
(``"SJ-ste"``), ``"SJ-dpi"`` or a positive number (or one per column), computed from
frequency-weighted samples as ``families._bandwidth`` states.

There is no parameter, so no prior: ``ml``, ``map``, ``mean`` and ``bayes`` all use this same
estimate (there is nothing to integrate), while the evidence, posterior draws, ``"mcmc"`` and
simulation, which need a parametric model, are refused naming the columns.

The sufficient statistic is the sample itself (values, class codes, weights; missing values
dropped), so ``partial_fit`` and ``merge`` concatenate and give the batch fit bit for bit.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

import numpy as np
import pandas as pd

from .._typing import ArrayLike
from ._bandwidth import RULES, UndefinedBandwidth, bandwidth_of, rule_code
from ._base import Schema, numeric_block
from ._contract import NonparametricFamily
from ._kde_checks import check_stats, check_table, positive
from ._kernels_r import KERNELS, kernel_code, log_norm, log_shape

#: rows x training values held at once when scoring one class and column (float64: 32 MiB)
BUDGET = 1 << 22


class KDESettings(NamedTuple):
    """The estimator's settings per column (the family's "prior" slot: there is no prior)."""

    rule: np.ndarray  # (F,) int: RULES
    bandwidth: np.ndarray  # (F,) the given bandwidth (NaN under a rule)
    adjust: np.ndarray  # (F,) multiplier
    kernel: np.ndarray  # (F,) int: _kernels_r.KERNELS (absent from earlier files: Gaussian)


class KDEStats(NamedTuple):
    """The training sample in long form: one entry per observed value of positive weight."""

    value: np.ndarray  # (m,) float64
    column: np.ndarray  # (m,) int32, column within the block
    klass: np.ndarray  # (m,) int32, class code
    weight: np.ndarray  # (m,) float64 > 0


class KDETable(NamedTuple):
    """The sample grouped by (column, class): group ``g = j * K + k`` is
    ``value[offsets[g]:offsets[g + 1]]``."""

    value: np.ndarray  # (m,)
    log_weight: np.ndarray  # (m,)
    offsets: np.ndarray  # (F * K + 1,)
    bandwidth: np.ndarray  # (K, F), NaN where undefined
    count: np.ndarray  # (K, F) total weight n
    log_total: np.ndarray  # (K, F) log n
    kernel: np.ndarray  # (F,) int: _kernels_r.KERNELS


class KernelDensity(NonparametricFamily):
    """Numeric columns, each a kernel density estimate per class (no prior).

    Parameters
    ----------
    bandwidth : str, float or array-like of shape (n_columns,), default="nrd0"
        R's selectors ``"nrd0"`` (``bw.nrd0``, Silverman), ``"nrd"`` (``bw.nrd``, Scott; also
        ``"scott"``), ``"ucv"``, ``"bcv"``, ``"SJ"`` (``"SJ-ste"``) or ``"SJ-dpi"`` (``bw.ucv``,
        ``bw.bcv``, ``bw.SJ``; any case, as R's ``density``), or positive bandwidths in the
        column's units: the kernel's standard deviation (see ``families._bandwidth`` for the
        formulas and how weights enter).
    adjust : float or array-like of shape (n_columns,), default=1.0
        Multiplies the bandwidth, as R's ``density(adjust=)``.
    kernel : str, default="gaussian"
        R's ``density(kernel=)``: ``"gaussian"``, ``"epanechnikov"``, ``"rectangular"``,
        ``"triangular"``, ``"biweight"``, ``"cosine"`` or ``"optcosine"``, scaled as R scales
        them (standard deviation = bandwidth; see ``families._kernels_r``).

    Examples
    --------
    With a given bandwidth h the density of class ``a`` at 1 is the mean of the normal densities
    N(1; x_i, h) over its training values (scipy checks it):

    >>> import pandas as pd, bayesnb as bnb
    >>> from scipy.stats import norm
    >>> X = pd.DataFrame({"t": [0.0, 2.0, 5.0, 7.0]})
    >>> clf = bnb.NaiveBayes(bnb.KernelDensity(bandwidth=1.0)).fit(X, ["a", "a", "b", "b"])
    >>> clf.explain(pd.Series({"t": 1.0})).loc["t"].round(6)
    class
    a    0.241971
    b    0.000067
    Name: t, dtype: float64
    >>> round(float(norm.pdf(1.0, [0.0, 2.0], 1.0).mean()), 6)
    0.241971

    R's Epanechnikov kernel with sd h is 3/4 (1 - t^2) / a on ``|t| < 1``, t = (x - x_i)/a,
    a = sqrt(5) h: 0 beyond it, so class ``b`` is impossible at 1:

    >>> epa = bnb.KernelDensity(1.0, kernel="epanechnikov")
    >>> bnb.NaiveBayes(epa).fit(X, ["a", "a", "b", "b"]).explain(pd.Series({"t": 1.0})).loc["t"]
    class
    a    0.268328
    b    0.000000
    Name: t, dtype: float64
    >>> round(0.75 * (1 - 1 / 5) / 5 ** 0.5, 6)
    0.268328

    Notes
    -----
    Unlike R's naivebayes (``density()`` on a grid, densities below 0.001 replaced by 0.001),
    the density is the exact kernel sum, in log space, everywhere: far from the data the
    Gaussian's is small but never 0 nor a floor; a compact kernel's is 0 beyond its support,
    and a row beyond every class's support is refused (its class is undefined). The same
    estimate serves ``ml``, ``map``, ``mean`` and ``bayes``; ``log_evidence``, posterior draws
    and ``method="mcmc"`` are refused.
    """

    name = "kde"
    density_label = "kernel density"
    nonparametric = True
    stats_type = KDEStats
    params_type = KDETable
    _hyper: ClassVar[tuple[str, ...]] = ("bandwidth", "adjust", "kernel")

    def __init__(self, bandwidth: str | ArrayLike = "nrd0", adjust: ArrayLike = 1.0,
                 kernel: str = "gaussian") -> None:
        self.bandwidth = bandwidth
        self.adjust = adjust
        self.kernel = kernel

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        # always float64: the sample is kept and scored on the host
        return numeric_block(values, schema, "KernelDensity", np.float64)

    def prior(self, schema: Schema) -> KDESettings:
        f = len(schema.columns)
        bw = self.bandwidth
        if kernel_code(self.kernel) is None:
            raise ValueError(f"KernelDensity: kernel must be one of R's {list(KERNELS)}, got "
                             f"{self.kernel!r}.")
        if isinstance(bw, str):
            if rule_code(bw) is None:
                raise ValueError(f"KernelDensity: bandwidth must be one of R's rules 'nrd0', "
                                 f"'nrd' ('scott'), 'ucv', 'bcv', 'SJ' ('SJ-ste'), 'SJ-dpi' "
                                 f"or a positive number, got {bw!r}.")
            rule, value = np.full(f, rule_code(bw)), np.full(f, np.nan)
        else:
            value = positive(bw, f, "bandwidth", schema.columns)
            rule = np.full(f, RULES["fixed"])
        return KDESettings(rule.astype(np.int32), value,
                           positive(self.adjust, f, "adjust", schema.columns),
                           np.full(f, kernel_code(self.kernel), np.int32))

    # ------------------------------------------------------------------ statistics
    @staticmethod
    def host_suff_stats(x: np.ndarray, codes: np.ndarray, weight: np.ndarray,
                        n_classes: int) -> KDEStats:
        """The sample of a ``(n, F)`` float64 block: observed values of positive weight."""
        keep = ~np.isnan(x) & (np.asarray(weight) > 0)[:, None]
        cols, rows = np.nonzero(keep.T)  # column by column, rows in order
        return KDEStats(x[rows, cols].astype(np.float64), cols.astype(np.int32),
                        np.asarray(codes, dtype=np.int32)[rows],
                        np.asarray(weight, dtype=np.float64)[rows])

    @staticmethod
    def merge_stats(a: KDEStats, b: KDEStats) -> KDEStats:
        """Concatenation: the sample of the union (grouping is stable, so the order within a
        class and column is the batch order and the estimates are identical)."""
        return KDEStats(*(np.concatenate([np.asarray(u), np.asarray(v)])
                          for u, v in zip(a, b, strict=True)))

    @staticmethod
    def scale_stats(stats: KDEStats, gamma: float) -> KDEStats:
        """The same sample, every weight times ``gamma``."""
        return stats._replace(weight=np.asarray(stats.weight, dtype=np.float64) * gamma)

    @staticmethod
    def empty_stats() -> KDEStats:
        return KDEStats(np.zeros(0), np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))

    # ------------------------------------------------------------------ the estimate
    @staticmethod
    def estimate(prior: KDESettings, stats: KDEStats, method: str = "mean") -> KDETable:
        """The grouped sample and the bandwidths (the same for every method)."""
        value, column, klass, weight = (np.asarray(a) for a in stats)
        n_columns = len(np.asarray(prior.rule))
        n_classes = int(klass.max()) + 1 if klass.size else 0
        return _table(prior, value, column, klass, weight, n_columns, n_classes)

    posterior = estimate  # nothing to integrate: the predictive is the estimate itself

    def host_table(self, prior: KDESettings, stats: KDEStats, schema: Schema,
                   classes) -> KDETable:
        """The scoring table, refusing a class and column with no density, naming them."""
        check_stats(stats, len(schema.columns), len(classes))
        value, column, klass, weight = (np.asarray(a) for a in stats)
        table = _table(prior, value, column, klass, weight, len(schema.columns), len(classes))
        check_table(self.bandwidth, prior, table, schema, classes, _group)
        return table

    @staticmethod
    def density_scale(table: KDETable, j: int) -> tuple:
        n_classes = table.bandwidth.shape[0]
        return (np.concatenate([_group(table, j, k, n_classes)[0] for k in range(n_classes)]),
                float(np.nanmax(table.bandwidth[:, j])))

    @staticmethod
    def stored_sample(table: KDETable, j: int, k: int) -> tuple:
        return _group(table, j, k, table.bandwidth.shape[0])

    @staticmethod
    def host_log_likelihood(table: KDETable, x: np.ndarray) -> np.ndarray:
        """``(n, K)`` log density of a ``(n, F)`` float64 block, constants included; a missing
        value contributes 0 (log 1)."""
        n_classes = table.bandwidth.shape[0]
        out = np.zeros((x.shape[0], n_classes))
        for j in range(x.shape[1]):
            observed = ~np.isnan(x[:, j])
            if observed.all():
                out += column_log_density(table, j, x[:, j])
            elif observed.any():
                out[observed] += column_log_density(table, j, x[observed, j])
        return out

    @staticmethod
    def log_evidence(prior, stats):
        raise ValueError("KernelDensity is nonparametric: there is no prior and so no "
                         "evidence.")

    @staticmethod
    def describe(params: KDETable, schema: Schema, classes) -> dict:
        """Per column: bandwidth, n (total weight) and the weighted mean, sd (divisor n - 1),
        min and max of the class's sample."""
        out = {}
        n_classes = len(classes)
        for j, col in enumerate(schema.columns):
            rows = []
            for k in range(n_classes):
                v, w = _group(params, j, k, n_classes)
                n = float(w.sum())
                mean = float(w @ v / n) if n > 0 else np.nan
                sd = float(np.sqrt(w @ (v - mean) ** 2 / (n - 1))) if n > 1 else np.nan
                h = params.bandwidth[k, j] if k < params.bandwidth.shape[0] else np.nan
                rows.append({"bandwidth": float(h), "n": n, "mean": mean,
                             "sd": sd, "min": float(v.min()) if v.size else np.nan,
                             "max": float(v.max()) if v.size else np.nan})
            out[col] = pd.DataFrame(rows, index=pd.Index(classes, name="class"))
        return out

    # ------------------------------------------------------------------ NumPyro
    @staticmethod
    def sample_params(prior, n_classes, site):
        raise NotImplementedError(
            "KernelDensity is nonparametric: it has no parameters to sample, so it has no "
            "NumPyro model (method='mcmc', posterior draws and simulation are unavailable).")

    @staticmethod
    def observe(params, x, y, site, **kw):
        KernelDensity.sample_params(None, 0, site)


# ---------------------------------------------------------------------- numerics
def _table(prior: KDESettings, value, column, klass, weight, n_columns, n_classes) -> KDETable:
    order = np.lexsort((klass, column))  # stable: batch order kept within a group
    value, weight = value[order].astype(np.float64), weight[order].astype(np.float64)
    group = column[order].astype(np.int64) * n_classes + klass[order]
    offsets = np.searchsorted(group, np.arange(n_columns * n_classes + 1))
    bandwidth = np.full((n_classes, n_columns), np.nan)
    count = np.zeros((n_classes, n_columns))
    rule, given, adjust = (np.asarray(a) for a in prior[:3])
    for j in range(n_columns):
        for k in range(n_classes):
            s, e = offsets[j * n_classes + k], offsets[j * n_classes + k + 1]
            count[k, j] = weight[s:e].sum()
            if e > s:
                try:
                    bandwidth[k, j] = (bandwidth_of(value[s:e], weight[s:e], int(rule[j]),
                                                    float(given[j])) * adjust[j])
                except UndefinedBandwidth:  # host_table names the reason
                    pass
    with np.errstate(divide="ignore"):
        return KDETable(value, np.log(weight), offsets, bandwidth, count, np.log(count),
                        np.asarray(prior.kernel, dtype=np.int32))


def _group(table: KDETable, j: int, k: int, n_classes: int):
    n_classes = table.bandwidth.shape[0]
    if k >= n_classes:  # a class after the last one with data
        return np.zeros(0), np.zeros(0)
    g = j * n_classes + k
    s, e = table.offsets[g], table.offsets[g + 1]
    return table.value[s:e], np.exp(table.log_weight[s:e])


def column_log_density(table: KDETable, j: int, x: np.ndarray) -> np.ndarray:
    """``(n, K)`` exact log kernel density of column ``j`` at the observed values ``x``."""
    x = np.asarray(x, dtype=np.float64)
    n_classes = table.bandwidth.shape[0]
    out = np.empty((x.shape[0], n_classes))
    for k in range(n_classes):
        g = j * n_classes + k
        s, e = int(table.offsets[g]), int(table.offsets[g + 1])
        v, lw, h = table.value[s:e], table.log_weight[s:e], table.bandwidth[k, j]
        kernel = int(table.kernel[j])
        step = max(1, BUDGET // max(e - s, 1))
        for r in range(0, x.shape[0], step):
            z = x[r:r + step, None] - v  # one (rows, m) buffer, updated in place
            z /= h
            log_shape(kernel, z)  # log K((x - x_i) / h), in place
            z += lw
            top = z.max(axis=1, keepdims=True) if e > s else np.full((z.shape[0], 1), -np.inf)
            z -= np.where(np.isfinite(top), top, 0.0)
            np.exp(z, out=z)
            with np.errstate(divide="ignore"):
                out[r:r + step, k] = np.log(z.sum(axis=1)) + top[:, 0]
        out[:, k] -= np.log(h) + log_norm(kernel) + table.log_total[k, j]
    return out
