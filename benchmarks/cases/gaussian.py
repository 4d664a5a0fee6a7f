"""Gaussian (real columns) against scikit-learn's ``GaussianNB``.

Fastest correct settings: ``GaussianNB(var_smoothing=0.0)`` on the same array. ``var_smoothing=0``
is our ``method="ml"`` exactly (the 1/N variance); GaussianNB computes the smoothing term
``max(var(X))`` whatever its value, so no setting saves work. It keeps float32 input in float32
(its means and variances take X's floating dtype), so the float32 row gives it float32 X.
"""

from __future__ import annotations

import numpy as np
from harness import Case, Context, fit_and_proba

REFERENCE = "GaussianNB(var_smoothing=0.0)"
FULL, QUICK = (1_000_000, 50, 10), (20_000, 50, 10)


def make_gaussian(n, f, k, seed=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    mu = rng.normal(0.0, 1.0, (k, f))
    sd = rng.uniform(0.5, 2.0, (k, f))
    x = np.empty((n, f), dtype=np.float64)
    for s in range(0, n, 100_000):
        yy = y[s:s + 100_000]
        x[s:s + len(yy)] = mu[yy] + sd[yy] * rng.standard_normal((len(yy), f))
    return x, y


def as_dtype(X, dtype):
    return X.astype(np.float32) if dtype == "float32" else X


def ours():
    import bayesnb as bnb

    return bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0)


def reference():
    from sklearn.naive_bayes import GaussianNB

    return GaussianNB(var_smoothing=0.0)


def run(ctx: Context):
    shape = ctx.pick(FULL, QUICK)
    ctx.progress(f"gaussian data {shape}")
    X, y = make_gaussian(*shape)
    rows = []
    for dt in ctx.dtypes:
        ctx.progress(f"gaussian {dt}")
        rows += fit_and_proba("gaussian", as_dtype(X, dt), y, ours, reference, dt,
                              ctx.repeats, REFERENCE)
    return rows


def prototypes(X, y, k, ref) -> dict:
    """Streamed plain-JAX fit (centred sums per class) and predict_proba (two matmuls)."""
    import jax
    import jax.numpy as jnp
    from profiling import stream

    ft = jnp.result_type(float)
    lam = jnp.asarray(1.0 / ref.var_, ft)
    mu = jnp.asarray(ref.theta_, ft)
    c0 = jnp.asarray(np.log(ref.class_prior_) - 0.5 * np.sum(
        np.log(2 * np.pi * ref.var_) + ref.theta_ ** 2 / ref.var_, axis=1), ft)
    pk = jax.jit(lambda x, lam, mu, c0: jnp.exp(jax.nn.log_softmax(
        -0.5 * (x * x) @ lam.T + x @ (lam * mu).T + c0, axis=1)))
    center = jnp.asarray(X[:1000].mean(axis=0), ft)

    def fit_chunk(x, c, center):
        r = jax.nn.one_hot(c, k, dtype=x.dtype)
        d = x - center
        return r.sum(axis=0), r.T @ d, r.T @ (d * d)

    fk = jax.jit(fit_chunk)
    return {
        "PROTOTYPE streamed predict_proba (2 matmuls + log_softmax in the kernel)":
            lambda: stream(X, ft, pk, (lam, mu, c0), n_out=k),
        "PROTOTYPE streamed fit (centred sums per class)":
            lambda: stream(X, ft, fk, (center,), y=y),
    }


def profile(ctx: Context):
    from profiling import profile_family

    import bayesnb as bnb

    yield from profile_family(ctx, "gaussian", ctx.pick(FULL, QUICK), make_gaussian, as_dtype,
                              bnb.Gaussian, "ml", reference, prototypes)


CASE = Case("gaussian", run, FULL, QUICK, profile)
