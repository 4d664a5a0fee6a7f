r"""Is the naive assumption safe? Pairwise Bayes factors for dependence given the class.

Naive Bayes assumes every pair of columns independent *given the class* (Barber, seed 000,
sections 2 and 4: a copied column or a one-hot coded attribute breaks it and double-counts
evidence). For a pair of columns :math:`(a, b)` this module weighs two conjugate models of the
same rows, class by class, and reports

.. math::

    \log \mathrm{BF} = \sum_k \log p(a, b \mid c = k, H_\text{dep})
                      - \log p(a \mid c = k, H_\text{ind}) - \log p(b \mid c = k, H_\text{ind}),

positive when the data favour "dependent given the class" (Jeffreys: above 2.3 strong, above 4.6
decisive). Both hypotheses use the *fitted model's* prior for each column, so :math:`H_\text{ind}`
is exactly the naive model of those two columns. Rows where either column is missing are left out
of that pair, for both hypotheses alike (the ``rows`` column says how many were used). Every sum is
in log space (``gammaln``, ``multigammaln``) and in float64 NumPy, whatever JAX's dtype.

**Two discrete columns** (Categorical, or Bernoulli read as the levels ``(0, 1)`` with the
pseudo-counts ``(beta, alpha)``), with :math:`V_a`, :math:`V_b` levels, the columns' Dirichlet
vectors :math:`\boldsymbol\alpha_a`, :math:`\boldsymbol\alpha_b`, totals :math:`A_a`, :math:`A_b`
and prior means :math:`p_a = \boldsymbol\alpha_a/A_a`, :math:`p_b = \boldsymbol\alpha_b/A_b`:
:math:`H_\text{dep}` puts one Dirichlet on the :math:`V_a V_b` cells of the joint table,

.. math::

    \alpha_{uv} = N' \, p_a(u) \, p_b(v), \qquad N' = \sqrt{A_a A_b},

so its prior mean is the independent model's (the first row is predicted alike by both: the
factor measures learned dependence only), its total concentration is the geometric mean of the
two columns', and by the Dirichlet's aggregation property its marginals are
:math:`\mathrm{Dir}(N' p_a)` and :math:`\mathrm{Dir}(N' p_b)`: exactly the columns' own priors
when :math:`A_a = A_b` (e.g. two Bernoulli columns, or two Categorical columns with as many
levels and the same symmetric ``alpha``). The evidence of a table :math:`\mathbf n` under
:math:`\mathrm{Dir}(\boldsymbol\alpha)` is :math:`\log\Gamma(A) - \log\Gamma(A + n)
+ \sum_v \log\Gamma(\alpha_v + n_v) - \log\Gamma(\alpha_v)`.

**Two Gaussian columns**: :math:`H_\text{ind}` is the model's Normal-Gamma prior per column,
:math:`\lambda_j \sim \mathrm{Gamma}(a_j, b_j)`, :math:`\mu_j \mid \lambda_j \sim
\mathcal N(m_j, 1/(\kappa_j\lambda_j))`. :math:`H_\text{dep}` is a bivariate Normal with the
conjugate Normal-(inverse-)Wishart prior

.. math::

    \Sigma \sim \mathcal{IW}(\nu, \Psi), \quad \boldsymbol\mu \mid \Sigma \sim
    \mathcal N(\mathbf m, \Sigma/\kappa), \qquad
    \nu = 1 + a_a + a_b, \; \Psi = \mathrm{diag}(2 b_a, 2 b_b), \;
    \kappa = \sqrt{\kappa_a\kappa_b}, \; \mathbf m = (m_a, m_b).

The diagonal of an inverse Wishart is inverse Gamma, :math:`\Sigma_{jj} \sim
\mathcal{IG}((\nu - 1)/2, \Psi_{jj}/2)`, so with equal shapes and kappas (the default) each
column's marginal prior under :math:`H_\text{dep}` *is* its Normal-Gamma prior, and the prior
correlation is centred at zero. With :math:`n`, :math:`\bar{\mathbf x}`, scatter :math:`S`
(Murphy, *Conjugate Bayesian analysis of the Gaussian distribution*, 2007, section 9):

.. math::

    \log p(D) = -\tfrac{nd}{2}\log\pi + \log\Gamma_d(\tfrac{\nu_n}{2}) - \log\Gamma_d(\tfrac\nu2)
                + \tfrac\nu2\log|\Psi| - \tfrac{\nu_n}{2}\log|\Psi_n|
                + \tfrac d2(\log\kappa - \log\kappa_n),

:math:`\kappa_n = \kappa + n`, :math:`\nu_n = \nu + n`,
:math:`\Psi_n = \Psi + S + \tfrac{\kappa n}{\kappa_n}(\bar{\mathbf x} - \mathbf m)
(\bar{\mathbf x} - \mathbf m)^\top`. With :math:`d = 1`, :math:`\nu = 2a`, :math:`\Psi = 2b` it is
the Normal-Gamma evidence of ``families/gaussian.py`` (used here for :math:`H_\text{ind}`). With
``Gaussian(pooled=True)`` on both columns one covariance is shared by all classes (the groups'
scatters and mean terms sum into one :math:`\Psi_n`, the kappa terms stay per class); the evidence
then does not split by class and the per-class columns are NaN.

**A discrete column against a Gaussian, Poisson, Exponential or Multinomial one** (no joint
conjugate prior): :math:`H_\text{dep}` lets the second column's parameters depend on the
discrete column's level within the class, each (class, level) cell with the second column's own
prior (its family, its hyperparameters); :math:`p(a \mid c)` is the same Dirichlet under both
hypotheses and cancels, so

.. math::

    \log\mathrm{BF} = \sum_k \Big[\sum_u \log p(b_{k,u}) - \log p(b_k)\Big].

This is the semi-naive model one would fit after joining; it is exact, and conditioning on the
discrete column is the natural direction (the reverse needs a density for the discrete column
given a real one). Poisson evidence leaves out the :math:`\sum \log x!` and Multinomial evidence
the multinomial coefficients: both are the same under the two hypotheses. A Multinomial block is
one unit (a row per block, named by the tuple of its columns; rows with a missing count are left
out): its columns share the document length and are dependent by construction.

**Reading the numbers.** A factor is comparable with 0 and with Jeffreys' thresholds, less so
across pairs of different kinds: how negative an independent pair scores grows with the
vagueness of the prior it is charged for (Bartlett's paradox). Under the Gaussian family's
default ``kappa = 1e-3`` every extra mean a dependent model needs costs about
:math:`\tfrac12\log(n/\kappa)`, so a discrete column against a Gaussian one with many levels
reads far below 0; that says "no evidence of dependence", not "strongly independent". Every row
counts once (sample weights are not taken).

**Pairs without a closed form** are listed with ``log_bayes_factor`` NaN and the reason in
``skipped``, never dropped: two non-discrete columns of different families (Gaussian with
Poisson, Poisson with Poisson, anything with a Multinomial block other than a discrete column),
one pooled and one per-class Gaussian, and KernelDensity columns (no evidence). Declare one of
the pair Categorical (discretise it) to test such a pair.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy.special import gammaln, multigammaln

#: ``method`` names in the report
JOINT_DIRICHLET = "joint Dirichlet"
NORMAL_WISHART = "Normal-Wishart"
CONDITIONAL = "conditional on {}"


# ---------------------------------------------------------------------- evidences (float64)
def dirichlet_log_evidence(counts, alpha) -> np.ndarray:
    """Log probability of a sequence with level counts ``counts`` (..., V) under a
    Dirichlet(``alpha``)-categorical: ``lgamma(A) - lgamma(A + n) + sum lgamma(alpha + n) -
    lgamma(alpha)``. Returns shape ``(...)``."""
    counts = np.asarray(counts, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    total, a0 = counts.sum(axis=-1), alpha.sum()
    return (gammaln(a0) - gammaln(a0 + total)
            + np.sum(gammaln(alpha + counts) - gammaln(alpha), axis=-1))


def normal_wishart_log_evidence(n, mean, scatter, loc, kappa, dof, scale, *,
                                pooled: bool = False) -> np.ndarray:
    r"""Log evidence of groups of d-variate Normal rows under a Normal-inverse-Wishart prior
    (module docs): ``n`` (G,), ``mean`` (G, d), ``scatter`` (G, d, d) centred sums of squares,
    prior ``loc`` (d,), ``kappa``, ``dof`` (:math:`\nu`), ``scale`` (:math:`\Psi`, (d, d)).
    Returns (G,) evidences of independent groups, or with ``pooled`` a 1-element array: one
    covariance shared by the groups, a mean per group. An empty group contributes 0."""
    n = np.asarray(n, dtype=np.float64)
    mean = np.asarray(mean, dtype=np.float64)
    scatter = np.asarray(scatter, dtype=np.float64)
    d = mean.shape[-1]
    kappa_n = kappa + n
    dev = mean - np.asarray(loc, dtype=np.float64)
    psi = scatter + (kappa * n / kappa_n)[:, None, None] * dev[:, :, None] * dev[:, None, :]
    _, logdet0 = np.linalg.slogdet(np.asarray(scale, dtype=np.float64))
    kappa_term = 0.5 * d * (np.log(kappa) - np.log(kappa_n))
    if pooled:
        total = n.sum()
        _, logdet_n = np.linalg.slogdet(scale + psi.sum(axis=0))
        return np.array([-0.5 * total * d * np.log(np.pi)
                         + multigammaln(0.5 * (dof + total), d) - multigammaln(0.5 * dof, d)
                         + 0.5 * dof * logdet0 - 0.5 * (dof + total) * logdet_n
                         + kappa_term.sum()])
    _, logdet_n = np.linalg.slogdet(scale + psi)
    lg = np.array([multigammaln(0.5 * (dof + m), d) for m in n]) - multigammaln(0.5 * dof, d)
    return (-0.5 * n * d * np.log(np.pi) + lg + 0.5 * dof * logdet0
            - 0.5 * (dof + n) * logdet_n + kappa_term)


def gamma_poisson_log_evidence(n, total, shape, rate) -> np.ndarray:
    """Log evidence of groups of Poisson counts under Gamma(``shape``, ``rate``), without the
    ``-sum log x!`` term (the same under any grouping of the same rows): ``a log b - a' log b' +
    lgamma(a') - lgamma(a)``, ``a' = a + sum x``, ``b' = b + n``."""
    n = np.asarray(n, dtype=np.float64)
    total = np.asarray(total, dtype=np.float64)
    a1, b1 = shape + total, rate + n
    return shape * np.log(rate) - a1 * np.log(b1) + gammaln(a1) - gammaln(shape)


def gamma_exponential_log_evidence(n, total, shape, rate) -> np.ndarray:
    """Log evidence of groups of Exponential values under a Gamma(``shape``, ``rate``) rate:
    ``a log b - lgamma(a) + lgamma(a') - a' log b'``, ``a' = a + n``, ``b' = b + sum x``."""
    n = np.asarray(n, dtype=np.float64)
    total = np.asarray(total, dtype=np.float64)
    a1, b1 = shape + n, rate + total
    return shape * np.log(rate) - gammaln(shape) + gammaln(a1) - a1 * np.log(b1)


def group_moments(x, groups, n_groups):
    """Count (G,), mean (G, d) and centred scatter (G, d, d) of the rows ``x`` (n, d) per
    group code (two passes: the class means first, then the deviations, in float64)."""
    x = np.asarray(x, dtype=np.float64)
    count = np.bincount(groups, minlength=n_groups).astype(np.float64)
    sums = np.zeros((n_groups, x.shape[1]))
    np.add.at(sums, groups, x)
    mean = sums / np.maximum(count, 1.0)[:, None]
    dev = x - mean[groups]
    scatter = np.zeros((n_groups, x.shape[1], x.shape[1]))
    np.add.at(scatter, groups, dev[:, :, None] * dev[:, None, :])
    return count, mean, scatter


# ---------------------------------------------------------------------- units of the model
class Unit(NamedTuple):
    """One column (or a Multinomial block) as the diagnostic reads it
    (``Family.dependence_units``)."""

    name: object  # column label, or a tuple of labels for a Multinomial block
    kind: str | None  # "discrete", "gaussian", "poisson", "exponential", "multinomial"; None
    values: np.ndarray  # (n,) codes (-1 missing) / (n,) floats (NaN missing) / (n, V) block
    observed: np.ndarray  # (n,) bool
    prior: dict  # the family's hyperparameters for this unit, as float64
    skip: str = ""  # kind None: why the unit is not tested


def _units(model, X) -> tuple[list[Unit], int]:
    from ._blocks import dense_block, encode_blocks

    encoded, n_rows = encode_blocks(model, X, "error")
    units = []
    for block, x in zip(model.blocks, encoded, strict=True):
        family, cols = block.family, list(block.schema.columns)
        if family.pooling_prior() is not None:
            raise ValueError(f"columns {cols[:5]}: pooling={family.pooling!r} learns the "
                             "classes' prior; the dependence diagnostic needs fixed values.")
        if family.hyperpriors():
            raise ValueError(f"columns {cols[:5]}: hyperparameters given as distributions "
                             f"({sorted(family.hyperpriors())}); the dependence diagnostic "
                             "needs fixed values (refit with numbers, e.g. the empirical-Bayes "
                             "value of bayesnb.analysis.empirical_bayes).")
        p = {f: np.asarray(v) for f, v in block.prior._asdict().items()}
        units += [Unit(*u) for u in family.dependence_units(dense_block(x), p, block.schema)]
    return units, n_rows


# ---------------------------------------------------------------------- pair factors
def _discrete_pair(a: Unit, b: Unit, rows, y, n_classes):
    va, vb = len(a.prior["alpha"]), len(b.prior["alpha"])
    alpha_a, alpha_b = a.prior["alpha"], b.prior["alpha"]
    total = np.sqrt(alpha_a.sum() * alpha_b.sum())
    alpha_ab = total * np.outer(alpha_a / alpha_a.sum(), alpha_b / alpha_b.sum()).ravel()
    cell = a.values[rows] * vb + b.values[rows]
    joint = np.zeros((n_classes, va * vb))
    np.add.at(joint, (y[rows], cell), 1.0)
    table = joint.reshape(n_classes, va, vb)
    return (dirichlet_log_evidence(joint, alpha_ab)
            - dirichlet_log_evidence(table.sum(axis=2), alpha_a)
            - dirichlet_log_evidence(table.sum(axis=1), alpha_b)), JOINT_DIRICHLET


def _gaussian_evidence(unit: Unit, x, groups, n_groups, pooled):
    """Normal-Gamma evidence of ``x`` (n,) per group, as the d = 1 Normal-Wishart."""
    p = unit.prior
    n, mean, scatter = group_moments(x[:, None], groups, n_groups)
    return normal_wishart_log_evidence(n, mean, scatter, p["loc"][None], float(p["kappa"]),
                                       2.0 * float(p["shape"]), 2.0 * p["rate"][None, None],
                                       pooled=pooled)


def _gaussian_pair(a: Unit, b: Unit, rows, y, n_classes):
    pooled = bool(a.prior["pooled"])
    xa, xb, g = a.values[rows], b.values[rows], y[rows]
    n, mean, scatter = group_moments(np.stack([xa, xb], axis=1), g, n_classes)
    pa, pb = a.prior, b.prior
    dep = normal_wishart_log_evidence(
        n, mean, scatter, np.array([pa["loc"], pb["loc"]]),
        float(np.sqrt(pa["kappa"] * pb["kappa"])), float(1.0 + pa["shape"] + pb["shape"]),
        np.diag([2.0 * pa["rate"], 2.0 * pb["rate"]]), pooled=pooled)
    ind = (_gaussian_evidence(a, xa, g, n_classes, pooled)
           + _gaussian_evidence(b, xb, g, n_classes, pooled))
    if pooled:  # one number for all classes
        return np.full(n_classes, np.nan), NORMAL_WISHART + " (pooled)", float((dep - ind)[0])
    return dep - ind, NORMAL_WISHART


def _conditional_pair(disc: Unit, other: Unit, rows, y, n_classes):
    """``other``'s evidence with its parameters per (class, level of ``disc``) minus per
    class."""
    levels = len(disc.prior["alpha"])
    g, cell = y[rows], y[rows] * levels + disc.values[rows]
    method = CONDITIONAL.format(repr(disc.name))
    if other.kind == "gaussian":
        pooled = bool(other.prior["pooled"])
        x = other.values[rows]
        dep = _gaussian_evidence(other, x, cell, n_classes * levels, pooled)
        ind = _gaussian_evidence(other, x, g, n_classes, pooled)
        if pooled:
            return (np.full(n_classes, np.nan), method + " (pooled)",
                    float((dep - ind)[0]))
        return dep.reshape(n_classes, levels).sum(axis=1) - ind, method

    def totals(groups, size):
        count = np.bincount(groups, minlength=size).astype(np.float64)
        x = other.values[rows]
        if x.ndim == 1:
            return count, np.bincount(groups, weights=x, minlength=size)
        s = np.zeros((size, x.shape[1]))
        np.add.at(s, groups, x)
        return count, s

    if other.kind in ("poisson", "exponential"):
        gamma = (gamma_poisson_log_evidence if other.kind == "poisson"
                 else gamma_exponential_log_evidence)

        def evidence(groups, size):
            n, s = totals(groups, size)
            return gamma(n, s, float(other.prior["shape"]), float(other.prior["rate"]))
    else:  # multinomial: the Dirichlet-multinomial of the summed counts
        def evidence(groups, size):
            return dirichlet_log_evidence(totals(groups, size)[1], other.prior["alpha"])
    dep = evidence(cell, n_classes * levels).reshape(n_classes, levels).sum(axis=1)
    return dep - evidence(g, n_classes), method


def _skip_reason(a: Unit, b: Unit) -> str | None:
    kinds = {a.kind, b.kind}
    if None in kinds:
        return a.skip if a.kind is None else b.skip
    if kinds == {"gaussian"} and bool(a.prior["pooled"]) != bool(b.prior["pooled"]):
        return "one pooled and one per-class Gaussian: no common bivariate prior"
    if "discrete" in kinds or kinds == {"gaussian"}:
        return None
    return (f"no conjugate joint model for {a.kind} with {b.kind}; declare one of them "
            "Categorical (discretised) to test the pair")


def pair_factor(a: Unit, b: Unit, y, n_classes):
    """``(per-class log BF (K,), method, total)`` for one pair, or a skip reason string."""
    reason = _skip_reason(a, b)
    if reason is not None:
        return reason
    rows = a.observed & b.observed
    if a.kind == "discrete" and b.kind == "discrete":
        out = _discrete_pair(a, b, rows, y, n_classes)
    elif a.kind == "gaussian" and b.kind == "gaussian":
        out = _gaussian_pair(a, b, rows, y, n_classes)
    elif a.kind == "discrete":
        out = _conditional_pair(a, b, rows, y, n_classes)
    else:
        out = _conditional_pair(b, a, rows, y, n_classes)
    per_class, method = out[0], out[1]
    total = out[2] if len(out) == 3 else float(np.sum(per_class))
    return per_class, method, total, int(rows.sum())


def dependence_report(model, X, y, columns=None) -> pd.DataFrame:
    """The table behind :func:`bayesnb.analysis.dependence` for a fitted value ``model``."""
    from ._data import labels_to_codes

    units, n_rows = _units(model, X)
    place = {c: i for i, c in enumerate(model.columns)}  # the input's column order
    units.sort(key=lambda u: min(place.get(c, len(place)) for c in
                                 (u.name if u.kind == "multinomial" else (u.name,))))
    if columns is not None:
        wanted = list(columns)
        names = [u.name for u in units]
        unknown = [c for c in wanted if c not in names]
        if unknown:
            raise ValueError(f"column {unknown[0]!r} is not a column of the model "
                             f"(a Multinomial block is named by the tuple of its columns).")
        units = [u for u in units if u.name in wanted]
    codes = labels_to_codes(y, model.classes)
    if len(codes) != n_rows:
        raise ValueError(f"y has {len(codes)} labels for {n_rows} rows of X.")
    n_classes = len(model.classes)
    per_class_names = [f"class={k}" for k in model.classes]
    records = []
    for i, a in enumerate(units):
        for b in units[i + 1:]:
            out = pair_factor(a, b, codes, n_classes)
            rec = {"column_a": a.name, "column_b": b.name}
            if isinstance(out, str):
                rec.update(log_bayes_factor=np.nan, method="", rows=0, skipped=out,
                           **dict.fromkeys(per_class_names, np.nan))
            else:
                per_class, method, total, rows = out
                rec.update(log_bayes_factor=total, method=method, rows=rows, skipped="",
                           **dict(zip(per_class_names, per_class.tolist(), strict=True)))
            records.append(rec)
    frame = pd.DataFrame.from_records(
        records, columns=["column_a", "column_b", "log_bayes_factor", "method", "rows",
                          "skipped", *per_class_names])
    for side in ("column_a", "column_b"):  # labels of any type (a block's tuple, integers)
        frame[side] = pd.Series(frame[side].tolist(), index=frame.index, dtype=object)
    frame = frame.sort_values("log_bayes_factor", ascending=False, na_position="last",
                              kind="stable")
    frame.attrs["columns"] = [u.name for u in units]  # the model's order, for the heat map
    frame.attrs["excluded_rows"] = ("rows where either column of a pair is missing are left "
                                    "out of that pair, under both hypotheses")
    return frame.reset_index(drop=True)
