r"""The posterior predictive over draws against one matmul of the same FLOPs.

Issue 12 section 4: ``predict_uncertainty`` and ``method="mcmc"`` prediction average
p(c | x, theta) over posterior draws. On D draws, n rows, F features and K classes the scores
alone are one product ``(n x F) @ (F x D*K)``; the reference is that product, one jitted
``X @ W`` with X and a random W already on the device (so neither side pays a host copy of
X), timed alternately with ours in one process. Target: ours / matmul <= 2x (none for the
Gaussian, whose quadratic scores are two such products: ``x_c^2`` and ``x_c``).

Rows:

* ``predictive``: what ``predict_proba`` under ``method="mcmc"`` runs, the scorer
  (``scoring.DrawsScorer``) on the given draws: log E_theta p(x, c | theta), normalised.
  ``clf.sample_posterior`` (exact conjugate draws, in NUTS's format) stands in for NUTS, whose
  run would dominate the benchmark and is not what is measured.
* ``predict_uncertainty``: the same plus the mutual information and the central 90% band of
  p(c | x, theta) over draws (quantiles: every draw of a row at once, a second pass). No target:
  information.

Exactness: the predictive of the first ``CHECK_ROWS`` rows computed independently in float64
NumPy from the draws (``log pi_d + x @ log theta_d``, a log-sum-exp over draws, then over
classes), as argmax agreement and the largest absolute probability difference; for
``predict_uncertainty`` the band's bounds against ``np.quantile`` of the float64 per-draw
probabilities.
"""

from __future__ import annotations

import numpy as np
from harness import Case, Context, agreement, pair, policy, row_from

from .multinomial import make_multinomial

#: (rows, features, classes, draws); full: issue 12 section 4's shape
FULL, QUICK = (10_000, 1_000, 20, 1_000), (2_000, 300, 20, 200)
CHECK_ROWS = 200
#: the Gaussian's columns at most (its float32 rounding bound grows with them)
GAUSSIAN_COLUMNS = 100
TARGET = 2.0
INTERVAL = 0.9


def make_short_documents(n, f, k, seed=0):
    """Bag-of-words rows of 10 words (``cases.multinomial``'s vocabularies): short enough
    that the classes overlap, so the probabilities checked are not all 0 or 1."""
    return make_multinomial(n, f, k, doc_len=10, seed=seed)


def make_overlapping_bits(n, f, k, seed=1):
    """0/1 rows whose per-class probabilities differ by about 0.03 around a common base."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    base = rng.uniform(0.2, 0.8, f)
    p = np.clip(base + 0.03 * rng.standard_normal((k, f)), 0.05, 0.95).astype(np.float32)
    return (rng.random((n, f), dtype=np.float32) < p[y]).astype(np.float32), y


def make_overlapping_gaussians(n, f, k, seed=2):
    """Standardised columns whose class means differ by about 0.05, variances by about 5%."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    mean = 0.05 * rng.standard_normal((k, f))
    sd = np.exp(0.05 * rng.standard_normal((k, f)))
    return (mean[y] + sd[y] * rng.standard_normal((n, f))).astype(np.float32), y


def _families():
    import bayesnb as bnb

    # (data maker, family, target, most columns)
    return {"multinomial": (make_short_documents, lambda: bnb.Multinomial(alpha=1.0), TARGET,
                            None),
            "bernoulli": (make_overlapping_bits, lambda: bnb.Bernoulli(alpha=1.0, beta=1.0),
                          TARGET, None),
            # two products' FLOPs (the features x_c^2 and x_c): no target against one; float32
            # refuses past ~60 columns, and float64 at 1,000 would take minutes
            "gaussian": (make_overlapping_gaussians, lambda: bnb.Gaussian(), None,
                         GAUSSIAN_COLUMNS)}


def reference_draws(name, X, draws, rows):
    """float64 NumPy per-draw joint scores ``(D, rows, K)`` of the first ``rows`` rows."""
    x = np.asarray(X[:rows], dtype=np.float64)
    log_pi = np.log(draws["class_probs"].reshape(-1, draws["class_probs"].shape[-1]))
    if name == "multinomial":
        theta = draws["multinomial.probs"]
        theta = theta.reshape((-1,) + theta.shape[2:])
        s = np.einsum("nf,dkf->dnk", x, np.log(theta))
    elif name == "gaussian":  # sum_f log N(x_f; mu, 1 / lam), less the class-free log(2 pi) / 2
        mu, lam = (draws[f"gaussian.{p}"].reshape((-1,) + draws[f"gaussian.{p}"].shape[2:])
                   for p in ("mean", "precision"))
        s = (np.einsum("nf,dkf->dnk", x, lam * mu) - 0.5 * np.einsum("nf,dkf->dnk", x * x, lam)
             + 0.5 * np.sum(np.log(lam) - lam * mu * mu, axis=-1)[:, None, :])
    else:
        theta = draws["bernoulli.theta"]
        theta = theta.reshape((-1,) + theta.shape[2:])
        s = (np.einsum("nf,dkf->dnk", x, np.log(theta))
             + np.einsum("nf,dkf->dnk", 1.0 - x, np.log1p(-theta)))
    return log_pi[:, None, :] + s


def reference_predictive(s):
    """p(c | x, data) = E p(x, c | theta) / E p(x | theta), and the per-draw p(c | x, theta)."""
    from scipy.special import logsumexp

    log_joint = logsumexp(s, axis=0)
    proba = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
    return proba, np.exp(s - logsumexp(s, axis=2, keepdims=True))


def one_family(ctx, name, make, family, shape, dtype, target=TARGET):
    import jax
    import jax.numpy as jnp

    import bayesnb as bnb
    from bayesnb.scoring import DrawsScorer

    n, f, k, d = shape
    X, y = make(n, f, k)
    X = X.astype(np.float64 if dtype == "float64" else np.float32)
    rows = []
    with policy(dtype):
        clf = bnb.NaiveBayes(family(), method="bayes").fit(X, y)
        draws = clf.sample_posterior(d, seed=1)
        scorer = DrawsScorer(clf.fitted_, clf._class_setup()[1], draws)
        rng = np.random.default_rng(2)
        Xd = jnp.asarray(X)
        W = jnp.asarray(rng.standard_normal((f, d * k)).astype(X.dtype))
        matmul = jax.jit(lambda a, b: a @ b)
        ctx.progress(f"draws {name} {dtype}: predictive")
        proba = pair(lambda: scorer.scores(X, "proba")[0], lambda: matmul(Xd, W), ctx.repeats)
        ctx.progress(f"draws {name} {dtype}: predict_uncertainty")
        unc = pair(lambda: clf.predict_uncertainty(X, interval=INTERVAL, draws=draws),
                   lambda: matmul(Xd, W), ctx.repeats)
    ctx.progress(f"draws {name} {dtype}: float64 NumPy reference on {CHECK_ROWS} rows")
    s = reference_draws(name, X, draws, CHECK_ROWS)
    ref, per_draw = reference_predictive(s)
    agree, dp = agreement(proba.ours_out[:CHECK_ROWS], ref)
    u = unc.ours_out
    u_agree, u_dp = agreement(u["proba"][:CHECK_ROWS], ref)
    lo, hi = np.quantile(per_draw, [(1 - INTERVAL) / 2, (1 + INTERVAL) / 2], axis=0)
    band = max(np.max(np.abs(u["lower"][:CHECK_ROWS] - lo)),
               np.max(np.abs(u["upper"][:CHECK_ROWS] - hi)))
    gflop = 2 * n * f * d * k / 1e9
    note = (f"{n:,} rows x {f:,} features x {d:,} draws x {k} classes ({gflop:,.0f} GFLOP); "
            f"reference jitted X @ W, W ({f:,} x {d * k:,}) on the device; argmax agreement and "
            f"max |dp| against float64 NumPy on {CHECK_ROWS} rows")
    label = f"draws {name}"
    rows.append(row_from(proba, label, dtype, "predictive (mcmc predict_proba)", "matmul",
                         target, agree, dp, X.nbytes, note))
    rows.append(row_from(unc, label, dtype, "predict_uncertainty (with 90% band)", "matmul",
                         None, u_agree, u_dp, X.nbytes,
                         note + f"; band bounds vs np.quantile of float64 p(c | x, theta): "
                         f"max |diff| {band:.1e}"))
    ctx.extra.setdefault("draws_band_max_abs_diff", {})[f"{name} {dtype}"] = float(band)
    ctx.progress(f"draws {name} {dtype}: ratio {proba.ours_s / proba.ref_s:.2f}x, band vs "
                 f"np.quantile max |diff| {band:.1e}")
    return rows


def run(ctx: Context):
    shape = ctx.pick(FULL, QUICK)
    rows = []
    for name, (make, family, target, most) in _families().items():
        n, f, k, d = shape
        f = f if most is None else min(f, most)
        for dtype in ctx.dtypes:
            rows += one_family(ctx, name, make, family, (n, f, k, d), dtype, target)
    return rows


CASE = Case("draws", run, FULL, QUICK, in_quick=False)
