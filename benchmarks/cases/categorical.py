"""Categorical (integer codes) against scikit-learn's ``CategoricalNB``.

Fastest correct settings: ``CategoricalNB(alpha=1.0)`` on the same C-ordered int64 codes.
CategoricalNB validates with ``dtype="int"`` (int64 here), so int64 codes go in without a copy
(int32 would be converted); ``min_categories=None`` takes the level counts from one ``X.max``
(giving them adds a check, not a saving); ``force_alpha`` only matters for alpha below 1e-10.
Both rows give both sides the same int64 codes; only our kernel dtype changes.
"""

from __future__ import annotations

import numpy as np
from harness import Case, Context, fit_and_proba

REFERENCE = "CategoricalNB(alpha=1.0)"
FULL, QUICK = (1_000_000, 20, 5, 5), (20_000, 20, 5, 5)


def make_categorical(n, f, k, levels, seed=3):
    """Integer codes 0..levels-1 (int64, as a user's label-encoded table would be)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    cdf = np.cumsum(rng.dirichlet(np.ones(levels), size=(k, f)), axis=-1)  # (k, f, L)
    x = np.empty((n, f), dtype=np.int64)
    for s in range(0, n, 100_000):
        yy = y[s:s + 100_000]
        u = rng.random((len(yy), f, 1))
        x[s:s + len(yy)] = np.minimum((u > cdf[yy]).sum(axis=-1), levels - 1)
    return x, y


def as_dtype(X, dtype):
    return X  # codes stay int64 under both policies


def ours():
    import bayesnb as bnb

    return bnb.NaiveBayes(bnb.Categorical(alpha=1.0), method="mean", class_alpha=0)


def reference():
    from sklearn.naive_bayes import CategoricalNB

    return CategoricalNB(alpha=1.0)


def run(ctx: Context):
    shape = ctx.pick(FULL, QUICK)
    ctx.progress(f"categorical data {shape}")
    X, y = make_categorical(*shape)
    rows = []
    for dt in ctx.dtypes:
        ctx.progress(f"categorical {dt}")
        rows += fit_and_proba("categorical", X, y, ours, reference, dt, ctx.repeats, REFERENCE)
    return rows


def prototypes(X, y, k, ref) -> dict:
    """Streamed plain-JAX one-hot fit and predict_proba, and host-side level/code finding."""
    import jax
    import jax.numpy as jnp
    from profiling import stream

    ft = jnp.result_type(float)
    f = X.shape[1]
    levels = int(X.max()) + 1
    lv = jnp.arange(levels, dtype=jnp.int32)
    tab = jnp.asarray(np.concatenate(ref.feature_log_prob_, axis=1), ft)  # (K, F*L)
    prior = jnp.asarray(ref.class_log_prior_, ft)

    def onehot(x):
        return (x[:, :, None] == lv).reshape(x.shape[0], f * levels).astype(ft)

    pk = jax.jit(lambda x, t, p: jnp.exp(jax.nn.log_softmax(onehot(x) @ t.T + p, axis=1)))
    fk = jax.jit(lambda x, c: jax.nn.one_hot(c, k, dtype=ft).T @ onehot(x))
    return {
        "PROTOTYPE streamed predict_proba (level one-hot @ table + log_softmax)":
            lambda: stream(X, np.int32, pk, (tab, prior), n_out=k),
        "PROTOTYPE streamed fit (class one-hot.T @ level one-hot)":
            lambda: stream(X, np.int32, fk, y=y),
        "host: levels by np.unique per column (what learn_schema could do)":
            lambda: [np.unique(X[:, j]) for j in range(f)],
        "host: levels by np.bincount per column (small non-negative ints)":
            lambda: [np.flatnonzero(np.bincount(X[:, j])) for j in range(f)],
        "host: codes by np.searchsorted per column (what encode could do)":
            lambda: [np.searchsorted(np.arange(levels), X[:, j]) for j in range(f)],
        "host: X.astype(object) (the first step of Categorical.encode)":
            lambda: X.astype(object),
    }


def profile(ctx: Context):
    from profiling import profile_family

    import bayesnb as bnb

    yield from profile_family(ctx, "categorical", ctx.pick(FULL, QUICK), make_categorical,
                              as_dtype, lambda: bnb.Categorical(alpha=1.0), "mean", reference,
                              prototypes)


CASE = Case("categorical", run, FULL, QUICK, profile)
