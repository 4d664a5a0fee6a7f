"""Multinomial (bag-of-words counts) against scikit-learn's ``MultinomialNB``.

Fastest correct settings: ``MultinomialNB(alpha=1.0)`` on the same array (float32 in the float32
row, float64 in the float64 row). ``force_alpha`` only matters for alpha below 1e-10, and
``fit_prior=True`` with no ``class_prior`` is the frequency prior our ``class_alpha=0`` gives. It
has no float32 path: its fit multiplies X by a float64 one-hot of y, so NumPy upcasts float32 X
(a full copy) whatever the caller does.
"""

from __future__ import annotations

import numpy as np
from harness import Case, Context, fit_and_proba

REFERENCE = "MultinomialNB(alpha=1.0)"
FULL, QUICK = (200_000, 1_000, 20), (5_000, 300, 20)


def make_multinomial(n, v, k, doc_len=100, seed=0):
    """Bag-of-words counts: ``doc_len`` words per row drawn from a per-class Dirichlet(0.5)
    word distribution (about 9% of the entries are non-zero, counts up to ~10)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    cdf = np.cumsum(rng.dirichlet(np.full(v, 0.5), size=k), axis=1)
    cdf[:, -1] = 1.0
    x = np.empty((n, v), dtype=np.float32)
    for s in range(0, n, 20_000):
        yy = y[s:s + 20_000]
        m = len(yy)
        u = rng.random((m, doc_len))
        idx = np.empty((m, doc_len), dtype=np.int64)
        for c in range(k):
            rows = yy == c
            idx[rows] = np.searchsorted(cdf[c], u[rows])
        flat = (np.arange(m)[:, None] * v + idx).ravel()
        x[s:s + m] = np.bincount(flat, minlength=m * v).reshape(m, v)
    return x, y


def as_dtype(X, dtype):
    return X.astype(np.float64) if dtype == "float64" else X


def ours():
    import bayesnb as bnb

    return bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0)


def reference():
    from sklearn.naive_bayes import MultinomialNB

    return MultinomialNB(alpha=1.0)


def run(ctx: Context):
    shape = ctx.pick(FULL, QUICK)
    ctx.progress(f"multinomial data {shape}")
    X, y = make_multinomial(*shape)
    rows = []
    for dt in ctx.dtypes:
        ctx.progress(f"multinomial {dt}")
        rows += fit_and_proba("multinomial", as_dtype(X, dt), y, ours, reference, dt,
                              ctx.repeats_big, REFERENCE)
    return rows


# ---------------------------------------------------------------------------------- profile
def prototypes(X, y, k, ref) -> dict:
    """Streamed plain-JAX fit and predict_proba (tables from the fitted ``ref``), and the log
    multinomial coefficient by a lookup table and on the host."""
    import jax
    import jax.numpy as jnp
    from profiling import numpy_predict_proba, stream
    from scipy.special import gammaln

    ft = jnp.result_type(float)
    w = jnp.asarray(ref.feature_log_prob_, ft)
    b = jnp.asarray(ref.class_log_prior_, ft)
    pk = jax.jit(lambda x, w, b: jnp.exp(jax.nn.log_softmax(x @ w.T + b, axis=1)))
    fk = jax.jit(lambda x, c: (jax.nn.one_hot(c, k, dtype=x.dtype).T @ x, jnp.min(x),
                               jnp.sum(x)))
    lut = jnp.asarray(gammaln(np.arange(257.0) + 1.0), ft)
    fk2 = jax.jit(lambda x, c: (
        jax.nn.one_hot(c, k, dtype=x.dtype).T @ x, jnp.min(x), jnp.sum(x),
        jnp.sum(jnp.take(lut, jnp.clip(x, 0, 256).astype(jnp.int32)))))
    return {
        "PROTOTYPE streamed predict_proba (matmul + log_softmax in the kernel)":
            lambda: stream(X, ft, pk, (w, b), n_out=k),
        "PROTOTYPE NumPy predict_proba (min/max checks, one float64 BLAS product, "
        "normalisation; no library)":
            numpy_predict_proba(X, ref.feature_log_prob_, ref.class_log_prior_),
        "PROTOTYPE streamed fit (counts + min/sum checks)": lambda: stream(X, ft, fk, y=y),
        "PROTOTYPE streamed fit + log_coef by a log-factorial lookup table":
            lambda: stream(X, ft, fk2, y=y),
        "host: log_coef = sum gammaln(x + 1) over entries > 1 only (numpy)":
            lambda: gammaln(X[X > 1] + 1.0).sum(),
    }


def exact_bayes_prototype(X, y, k, rows):
    """Dirichlet-multinomial predictive for integer counts as matmuls:
    sum_v lgamma(a_kv + x_v) - lgamma(a_kv) = sum_{c=1..max x} [x >= c] @ log(a + c - 1).T."""
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import gammaln

    ft = jnp.result_type(float)
    counts = np.zeros((k, X.shape[1]))
    for c in range(k):
        counts[c] = X[y == c].sum(axis=0)
    a = jnp.asarray(counts + 1.0, ft)
    lp = jnp.asarray(np.log(np.bincount(y, minlength=k) / len(y)), ft)

    @jax.jit
    def kernel(x, a, lp, m):
        def body(c, acc):
            return acc + (x >= c).astype(x.dtype) @ jnp.log(a + (c - 1)).T
        per = jax.lax.fori_loop(1, m + 1, body, jnp.zeros((x.shape[0], a.shape[0]), x.dtype))
        a0, n = a.sum(axis=1), x.sum(axis=1, keepdims=True)
        return jnp.exp(jax.nn.log_softmax(lp + gammaln(a0) - gammaln(a0 + n) + per, axis=1))

    xs = np.asarray(X[:rows], dtype=ft)
    m = int(xs.max())
    return lambda: np.asarray(kernel(xs, a, lp, m), dtype=np.float64)


def profile_extra(stage, res, clf, X, y, k):
    """The library's ``method="bayes"`` and the matmul prototype of it, on the first rows."""
    from harness import agreement

    from .bayes import dirichlet_multinomial_reference

    rows = min(5_000, len(y))
    Xs = X[:rows]
    clf.set_params(method="bayes")
    clf.predict_proba(Xs)
    stage(f"method='bayes' predict_proba, first {rows} rows (library)",
          lambda: clf.predict_proba(Xs))
    proto = exact_bayes_prototype(X, y, k, rows)
    proto()
    p = stage(f"PROTOTYPE exact Bayes as [X >= c] matmuls, first {rows} rows", proto)
    if p is not None:
        refp = dirichlet_multinomial_reference(X, y, min(300, rows), k)
        agree, dp = agreement(p[:len(refp)], refp)
        res[-1] = (res[-1][0] + f"  [vs float64 SciPy: argmax {100 * agree:.1f}%, "
                   f"max |dp| {dp:.1e}]", res[-1][1])


def profile(ctx: Context):
    from profiling import profile_family

    import bayesnb as bnb

    yield from profile_family(ctx, "multinomial", ctx.pick(FULL, QUICK), make_multinomial,
                              as_dtype, lambda: bnb.Multinomial(alpha=1.0), "mean", reference,
                              prototypes, profile_extra)


CASE = Case("multinomial", run, FULL, QUICK, profile)
