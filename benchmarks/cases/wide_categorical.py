"""Wide categorical data (issue 12 section 2): many 3-level columns, first call included.

Genotype- and survey-like tables have thousands of categorical columns; a kernel that unrolls
over columns compiles for longer the wider the table. The first row times a fresh estimator's
first ``fit`` + ``predict_proba`` (compilation included: ``jax.clear_caches()`` goes before each
of our calls, so every repeat is a first call; both libraries are imported before the first)
against a fresh ``CategoricalNB(alpha=1.0)``'s ``fit`` + ``predict_proba`` (target <= 1x); the
next two are the steady-state ``fit`` and ``predict_proba`` on the same data, as in the narrow
categorical case.

Full: 5,000 x 2,000, 3 levels, 5 classes; ``--quick``: 2,000 x 50. By default only under the
float32 policy (JAX's default; ``--dtype float64`` runs it under float64 instead).
"""

from __future__ import annotations

from harness import Case, Context, Pair, agreement, call, fit_and_proba, policy, row_from

from .categorical import make_categorical, ours, reference

REFERENCE = "CategoricalNB(alpha=1.0)"
FULL, QUICK = (5_000, 2_000, 5, 3), (2_000, 50, 5, 3)
TARGET_FIRST = 1.0


def first_calls(X, y, dtype, repeats):
    """``repeats`` first calls per side, alternating; JAX's caches cleared before each of ours.
    Both libraries are imported before the first timed call: a first call measures
    compilation, not imports (``coldstart`` times those)."""
    import jax
    import sklearn.naive_bayes  # noqa: F401

    import bayesnb  # noqa: F401

    def ours_first():
        clf = ours()
        return clf.fit(X, y).predict_proba(X)

    def ref_first():
        return reference().fit(X, y).predict_proba(X)

    o, r = [], []
    with policy(dtype):
        for i in range(repeats):
            # the caches are cleared outside the timed call: freeing the kernels earlier
            # cases compiled took 150 ms, more than our whole first call at --quick's shape
            if i % 2 == 0:
                jax.clear_caches()
                o.append(call(ours_first))
                r.append(call(ref_first))
            else:
                r.append(call(ref_first))
                jax.clear_caches()
                o.append(call(ours_first))
    agree, dp = agreement(o[-1].out, r[-1].out)
    row = row_from(Pair(o[0], r[0], o, r), "wide categorical", dtype,
                   "first fit + predict_proba", "sklearn", TARGET_FIRST, agree, dp, X.nbytes,
                   f"{X.shape[0]}x{X.shape[1]} int64, {int(X.max()) + 1} levels; fresh "
                   f"estimators, JAX caches cleared; reference {REFERENCE}")
    row.steady_compile_s = 0.0  # every call here compiles on purpose
    return row


def run(ctx: Context):
    shape = ctx.pick(FULL, QUICK)
    ctx.progress(f"wide categorical data {shape}")
    X, y = make_categorical(*shape)
    dtypes = ("float32",) if "float32" in ctx.dtypes else ctx.dtypes
    rows = []
    for dt in dtypes:
        ctx.progress(f"wide categorical {dt}: first calls")
        rows.append(first_calls(X, y, dt, ctx.pick(ctx.repeats_big, 1)))
        ctx.progress(f"wide categorical {dt}: steady state")
        rows += fit_and_proba("wide categorical", X, y, ours, reference, dt, ctx.repeats,
                              REFERENCE)
    return rows


CASE = Case("wide_categorical", run, FULL, QUICK)
