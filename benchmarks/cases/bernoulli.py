"""Bernoulli (0/1 columns) against scikit-learn's ``BernoulliNB``.

Fastest correct settings: ``BernoulliNB(alpha=1.0, binarize=None)``. The data are already 0/1,
so thresholding is not needed; the default ``binarize=0.0`` copies and thresholds X on every
``fit`` and ``predict_proba`` (issue 12 section 3: against it bayesnb looked up to 20x faster).
Like ``MultinomialNB`` it counts with a float64 product, so float32 X is upcast inside.
"""

from __future__ import annotations

import numpy as np
from harness import Case, Context, fit_and_proba

REFERENCE = "BernoulliNB(alpha=1.0, binarize=None)"
FULL, QUICK = (200_000, 1_000, 10), (5_000, 300, 10)


def make_bernoulli(n, v, k, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = rng.uniform(0.05, 0.95, (k, v)).astype(np.float32)
    x = np.empty((n, v), dtype=np.float32)
    for s in range(0, n, 20_000):
        yy = y[s:s + 20_000]
        x[s:s + len(yy)] = rng.random((len(yy), v), dtype=np.float32) < p[yy]
    return x, y


def as_dtype(X, dtype):
    return X.astype(np.float64) if dtype == "float64" else X


def ours():
    import bayesnb as bnb

    return bnb.NaiveBayes(bnb.Bernoulli(alpha=1.0, beta=1.0), method="mean", class_alpha=0)


def reference():
    from sklearn.naive_bayes import BernoulliNB

    return BernoulliNB(alpha=1.0, binarize=None)


def run(ctx: Context):
    shape = ctx.pick(FULL, QUICK)
    ctx.progress(f"bernoulli data {shape}")
    X, y = make_bernoulli(*shape)
    rows = []
    for dt in ctx.dtypes:
        ctx.progress(f"bernoulli {dt}")
        rows += fit_and_proba("bernoulli", as_dtype(X, dt), y, ours, reference, dt,
                              ctx.repeats_big, REFERENCE)
    return rows


def prototypes(X, y, k, ref) -> dict:
    """Streamed plain-JAX fit and predict_proba, tables from the fitted ``ref``:
    x log p + (1 - x) log(1 - p) = x (log p - log(1 - p)) + sum log(1 - p)."""
    import jax
    import jax.numpy as jnp
    from profiling import numpy_predict_proba, stream

    ft = jnp.result_type(float)
    lp = ref.feature_log_prob_
    l1p = np.log1p(-np.exp(lp))
    w = jnp.asarray(lp - l1p, ft)
    b = jnp.asarray(l1p.sum(axis=1) + ref.class_log_prior_, ft)
    pk = jax.jit(lambda x, w, b: jnp.exp(jax.nn.log_softmax(x @ w.T + b, axis=1)))
    fk = jax.jit(lambda x, c: (jax.nn.one_hot(c, k, dtype=x.dtype).T @ x, jnp.min(x),
                               jnp.sum(x)))
    return {
        "PROTOTYPE streamed predict_proba (matmul + log_softmax in the kernel)":
            lambda: stream(X, ft, pk, (w, b), n_out=k),
        "PROTOTYPE NumPy predict_proba (min/max checks, one float64 BLAS product, "
        "normalisation; no library)":
            numpy_predict_proba(X, lp - l1p, l1p.sum(axis=1) + ref.class_log_prior_),
        "PROTOTYPE streamed fit (counts + min/sum checks)": lambda: stream(X, ft, fk, y=y),
    }


def profile(ctx: Context):
    from profiling import profile_family

    import bayesnb as bnb

    yield from profile_family(ctx, "bernoulli", ctx.pick(FULL, QUICK), make_bernoulli,
                              as_dtype, lambda: bnb.Bernoulli(alpha=1.0, beta=1.0), "mean",
                              reference, prototypes)


CASE = Case("bernoulli", run, FULL, QUICK, profile)
