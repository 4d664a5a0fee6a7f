r"""The exact posterior predictive (``method="bayes"``) against the plug-in (``"mean"``).

Issue 12 section 1: for Multinomial, Poisson and Gaussian, ``predict_proba`` under ``"bayes"``
next to ``"mean"`` on the same fitted statistics, in one process (the fit is the same pass for
every method, only the tables made from the statistics differ, so it is fitted once). Targets:
exact / plug-in <= 2x (Multinomial, Poisson, dense and sparse), <= 4x (Gaussian). The count
cases run twice: on the dense array and on the same counts as a SciPy CSR matrix.

The exactness check compares our ``"bayes"`` probabilities with a float64 SciPy computation of
the same predictive from the data (not from our statistics), on the first rows:

* Multinomial, Dirichlet(alpha) per class: the Dirichlet-multinomial,
  :math:`\log\Gamma(A) - \log\Gamma(A + n) + \sum_v \log\Gamma(a_v + x_v) - \log\Gamma(a_v)`
  (the class-free multinomial coefficient cancels);
* Poisson, Gamma(shape a, rate b): ``scipy.stats.nbinom(n=a + S, p=(b + n)/(b + n + 1))``;
* Gaussian, Normal-Gamma(m, kappa, a, b): ``scipy.stats.t`` with ``2a'`` degrees of freedom,
  location ``m'`` and scale ``sqrt(b' (kappa' + 1) / (a' kappa'))`` (Murphy 2007, section 3).

The class prior is the class frequency (``class_alpha=0``) in every reference.
"""

from __future__ import annotations

import copy

import numpy as np
from harness import Case, Context, agreement, pair, policy, row_from

from .gaussian import make_gaussian
from .multinomial import make_multinomial

#: (rows fitted, columns, classes, rows scored); full: issue 12's shapes
FULL = {"multinomial": (20_000, 1_000, 20, 20_000), "poisson": (20_000, 200, 20, 20_000),
        "gaussian": (20_000, 100, 20, 20_000)}
QUICK = {"multinomial": (5_000, 300, 20, 500), "poisson": (5_000, 100, 20, 500),
         "gaussian": (5_000, 50, 20, 500)}
CHECK_ROWS = {"full": 300, "quick": 200}
TARGET = {"multinomial": 2.0, "poisson": 2.0, "gaussian": 4.0}
#: the count cases also run on the same counts as a SciPy CSR matrix (issue 12 section 1:
#: "dense and sparse"); the sparse path scores on the host in float64 whatever the policy
SPARSE = ("multinomial", "poisson")
POISSON_PRIOR = {"shape": 1.0, "rate": 0.1}
GAUSSIAN_PRIOR = {"loc": 0.0, "kappa": 1e-3, "shape": 1.0, "rate": 0.01}


def make_poisson(n, f, k, seed=4):
    """Counts, Poisson per class and column with rates drawn from Gamma(2, 1) (mean 2)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    rate = rng.gamma(2.0, 1.0, (k, f))
    return rng.poisson(rate[y]).astype(np.float32), y


def _log_class_prior(y, k):
    return np.log(np.bincount(y, minlength=k) / len(y))


def _softmax(score):
    from scipy.special import logsumexp

    return np.exp(score - logsumexp(score, axis=1, keepdims=True))


def dirichlet_multinomial_reference(X, y, rows, n_classes, alpha=1.0):
    """float64 SciPy p(c | x, data) under Dirichlet(alpha) word priors and class frequencies."""
    from scipy.special import gammaln

    X64 = np.asarray(X, dtype=np.float64)
    counts = np.stack([X64[y == c].sum(axis=0) for c in range(n_classes)])
    a = counts + alpha
    xs = X64[:rows]
    n = xs.sum(axis=1, keepdims=True)
    score = (_log_class_prior(y, n_classes) + gammaln(a.sum(axis=1))
             - gammaln(a.sum(axis=1) + n)
             + (gammaln(a[None] + xs[:, None]) - gammaln(a)[None]).sum(axis=-1))
    return _softmax(score)


def negative_binomial_reference(X, y, rows, n_classes, shape, rate):
    """float64 SciPy p(c | x, data): per column ``nbinom(a + S, (b + n) / (b + n + 1))``."""
    from scipy.stats import nbinom

    X64 = np.asarray(X, dtype=np.float64)
    total = np.stack([X64[y == c].sum(axis=0) for c in range(n_classes)])  # (K, F)
    count = np.bincount(y, minlength=n_classes).astype(np.float64)[:, None]
    a, b = shape + total, rate + count
    log_pmf = nbinom.logpmf(X64[:rows, None, :], a[None], (b / (b + 1.0))[None])
    return _softmax(_log_class_prior(y, n_classes) + log_pmf.sum(axis=-1))


def student_t_reference(X, y, rows, n_classes, loc, kappa, shape, rate):
    """float64 SciPy p(c | x, data): per column the Normal-Gamma posterior's Student-t."""
    from scipy.stats import t

    X64 = np.asarray(X, dtype=np.float64)
    score = np.tile(_log_class_prior(y, n_classes), (rows, 1))
    for c in range(n_classes):
        xc = X64[y == c]
        n, mean = len(xc), xc.mean(axis=0)
        m2 = ((xc - mean) ** 2).sum(axis=0)
        kappa_n = kappa + n
        loc_n = (kappa * loc + n * mean) / kappa_n
        shape_n = shape + n / 2
        rate_n = rate + m2 / 2 + kappa * n * (mean - loc) ** 2 / (2 * kappa_n)
        scale = np.sqrt(rate_n * (kappa_n + 1) / (shape_n * kappa_n))
        score[:, c] += t.logpdf(X64[:rows], 2 * shape_n, loc_n, scale).sum(axis=1)
    return _softmax(score)


def _families():
    import bayesnb as bnb

    return {
        "multinomial": (make_multinomial, lambda: bnb.Multinomial(alpha=1.0),
                        lambda X, y, r, k: dirichlet_multinomial_reference(X, y, r, k, 1.0)),
        "poisson": (make_poisson, lambda: bnb.Poisson(**POISSON_PRIOR),
                    lambda X, y, r, k: negative_binomial_reference(X, y, r, k,
                                                                   **POISSON_PRIOR)),
        "gaussian": (make_gaussian, lambda: bnb.Gaussian(**GAUSSIAN_PRIOR),
                     lambda X, y, r, k: student_t_reference(X, y, r, k, **GAUSSIAN_PRIOR)),
    }


def exact_vs_plugin(name, X, y, k, scored, check_rows, family, ref, dtype, repeats,
                    csr=False):
    """One row: ``predict_proba`` under "bayes" / under "mean" on the first ``scored`` rows,
    dense or (``csr``) as a SciPy CSR matrix of the same counts, fitted and scored as CSR."""
    from scipy import sparse

    import bayesnb as bnb

    data = sparse.csr_matrix(X) if csr else X
    with policy(dtype):
        exact = bnb.NaiveBayes(family(), method="bayes", class_alpha=0).fit(data, y)
        mean = copy.deepcopy(exact).set_params(method="mean")
        Xs = data[:scored]
        proba = pair(lambda: exact.predict_proba(Xs), lambda: mean.predict_proba(Xs), repeats)
    agree, dp = agreement(proba.ours_out[:check_rows], ref(X, y, check_rows, k))
    size = (Xs.data.nbytes + Xs.indices.nbytes + Xs.indptr.nbytes) if csr else Xs.nbytes
    form = f"CSR, {data.nnz / np.prod(data.shape):.0%} stored; " if csr else ""
    return row_from(proba, f"{name} bayes{' CSR' if csr else ''}", dtype,
                    f"predict_proba ({scored:,} rows)", "our mean", TARGET[name], agree, dp,
                    size, f"{form}{X.shape[0]}x{X.shape[1]}, {k} classes, fitted once; "
                    f"argmax agreement and max |dp| against a float64 SciPy reference on "
                    f"{check_rows} rows")


def run(ctx: Context):
    shapes = ctx.pick(FULL, QUICK)
    check_rows = ctx.pick(CHECK_ROWS["full"], CHECK_ROWS["quick"])
    rows = []
    for name, (make, family, ref) in _families().items():
        n, f, k, scored = shapes[name]
        ctx.progress(f"{name} bayes data {(n, f, k)}")
        X, y = make(n, f, k)
        for dt in ctx.dtypes:
            ctx.progress(f"{name} bayes {dt}")
            Xd = X.astype(np.float64) if dt == "float64" else X.astype(np.float32)
            rows.append(exact_vs_plugin(name, Xd, y, k, scored, check_rows, family, ref, dt,
                                        ctx.repeats))
            if name in SPARSE:
                ctx.progress(f"{name} bayes CSR {dt}")
                rows.append(exact_vs_plugin(name, Xd, y, k, scored, check_rows, family, ref,
                                            dt, ctx.repeats, csr=True))
    return rows


CASE = Case("bayes", run, FULL["multinomial"], QUICK["multinomial"])
