"""The exact predictive's fast paths (issue 12 section 1) against scipy.stats and hand sums.

The count families score :math:`\\log\\Gamma(a + x) - \\log\\Gamma(a)` as indicator products
for counts up to ``S`` steps and add the rest on the host (``bayesnb.fast._exact``; ``S = 1``
on a CPU, larger on an accelerator); the Gaussian's Student-t is one fused pass. Every path is
checked against an independent reference: forced
step counts (so counts fall on both sides of ``S``), large and non-integer counts, missing
values, chunk boundaries (tails in some chunks only), SciPy-sparse input, float32 against x64.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy import sparse
from scipy.special import gammaln, logsumexp

import bayesnb as bnb
from bayesnb.fast import _exact, _host, _kernels, _sparse

K = 3
Y = np.arange(60) % K
PRIOR = np.full(K, 1.0 / K)


def _fit(family, X, y=Y):
    return bnb.NaiveBayes(family, method="bayes", class_prior=PRIOR).fit(X, y)


def on_the_kernels(monkeypatch):
    """Score small dense calls by the kernels' exact form (they take the host's products,
    ``_host.scored_on_host``, which ``test_host_products`` checks)."""
    monkeypatch.setattr(_host, "scored_on_host", lambda *args: False)


def force_steps(monkeypatch, s):
    """Score with ``S = s`` indicator steps (an accelerator's choice; a CPU takes 1), small
    batches too, on the kernels."""
    on_the_kernels(monkeypatch)
    monkeypatch.setattr(_exact, "choose_steps", lambda sample: s)
    monkeypatch.setattr(_exact, "SMALL_BATCH_CELLS", 0)


@pytest.fixture(params=[1, 2, 4, 16, 32], ids=lambda s: f"S={s}")
def steps(request, monkeypatch):
    """Force the number of indicator steps, so counts fall on both sides of it."""
    force_steps(monkeypatch, request.param)
    return request.param


@pytest.fixture(params=["flagged rows", "whole chunks"])
def scan(request, monkeypatch):
    """Force how the host finds the tail: in the rows the kernel flags (an accelerator's way),
    or by scanning every chunk whole (a CPU's, ``_exact.scans_whole``), on the kernels."""
    on_the_kernels(monkeypatch)
    monkeypatch.setattr(_exact, "scans_whole", lambda: request.param == "whole chunks")
    return request.param


@pytest.fixture
def small_chunks(monkeypatch):
    """64-row chunks (the smallest), so a 200-row input spans four with a partial last one,
    on the kernels."""
    on_the_kernels(monkeypatch)
    monkeypatch.setattr(_kernels, "CHUNK_BYTES", 1)


def count_data(seed, n=60, f=5, big=(), frac=False, nan=False):
    rng = np.random.default_rng(seed)
    X = rng.poisson(rng.gamma(2.0, 1.0, (K, f))[np.arange(n) % K]).astype(float)
    for i, j, v in big:
        X[i, j] = v
    if frac:
        X[::3, 1] += 0.37
    if nan:
        X[4, 2] = X[9, 0] = X[10, :2] = np.nan
    return X


# ---------------------------------------------------------------------------- references
def dirichlet_multinomial_joint(X, y, Xn, alpha):
    """log p(x, c) by the Gamma function over each row's observed columns (``x`` any
    non-negative value; SciPy's dirichlet_multinomial agrees on integer rows)."""
    a_post = np.stack([alpha + np.nansum(X[y == k], axis=0) for k in range(K)])
    out = np.zeros((len(Xn), K))
    for i, row in enumerate(Xn):
        obs = ~np.isnan(row)
        x, n = row[obs], row[obs].sum()
        for k in range(K):
            a = a_post[k, obs]
            out[i, k] = (np.log(PRIOR[k]) + gammaln(n + 1) - gammaln(x + 1).sum()
                         + gammaln(a.sum()) - gammaln(a.sum() + n)
                         + (gammaln(a + x) - gammaln(a)).sum())
            if obs.any() and np.all(x == np.round(x)):
                assert_allclose(out[i, k] - np.log(PRIOR[k]),
                                st.dirichlet_multinomial.logpmf(x, a, int(n)), rtol=1e-9,
                                atol=1e-10)
    return out


def negative_binomial_joint(X, y, Xn, shape, rate):
    out = np.tile(np.log(PRIOR), (len(Xn), 1))
    for k in range(K):
        xk = X[y == k]
        a = shape + np.nansum(xk, axis=0)
        b = rate + np.sum(~np.isnan(xk), axis=0)
        lp = st.nbinom.logpmf(Xn, a, b / (b + 1.0))
        out[:, k] += np.where(np.isnan(Xn), 0.0, lp).sum(axis=1)
    return out


def student_t_joint(X, y, Xn, loc=0.0, kappa=1.0, shape=1.0, rate=1.0):
    out = np.tile(np.log(PRIOR), (len(Xn), 1))
    for k in range(K):
        xk = X[y == k]
        n = np.sum(~np.isnan(xk), axis=0)
        mean = np.nanmean(xk, axis=0)
        m2 = np.nansum((xk - mean) ** 2, axis=0)
        kn = kappa + n
        ln = (kappa * loc + n * mean) / kn
        an = shape + n / 2
        bn = rate + m2 / 2 + kappa * n * (mean - loc) ** 2 / (2 * kn)
        lp = st.t.logpdf(Xn, 2 * an, ln, np.sqrt(bn * (kn + 1) / (an * kn)))
        out[:, k] += np.where(np.isnan(Xn), 0.0, lp).sum(axis=1)
    return out


def check(clf, Xn, joint, rtol=1e-9):
    assert_allclose(clf.predict_joint_log_proba(Xn), joint, rtol=rtol, atol=1e-9)
    assert_allclose(clf.predict_proba(Xn), np.exp(joint - logsumexp(joint, axis=1,
                                                                    keepdims=True)),
                    rtol=1e-7, atol=1e-12)


# ---------------------------------------------------------------------------- count families
BIG = ((3, 0, 40.0), (7, 4, 311.0), (11, 2, 9.0))


def test_multinomial_steps_and_large_counts(x64, steps, scan):
    X = count_data(0, big=BIG)
    Xn = count_data(1, n=12, big=((2, 1, 57.0), (5, 3, 1000.0)))
    Xn[0] = 0.0  # an empty document has probability one in every class
    alpha = np.array([0.5, 1.0, 2.0, 0.3, 4.0])
    check(_fit(bnb.Multinomial(alpha=alpha), X), Xn, dirichlet_multinomial_joint(X, Y, Xn, alpha))


def test_multinomial_non_integer_counts_and_missing_values(x64, steps, scan):
    X = count_data(2, frac=True, big=BIG)
    Xn = count_data(3, n=15, frac=True, nan=True, big=((1, 1, 23.5),))
    alpha = np.ones(5)
    check(_fit(bnb.Multinomial(alpha=alpha), X), Xn, dirichlet_multinomial_joint(X, Y, Xn, alpha))


def test_poisson_steps_large_counts_and_missing_values(x64, steps, scan):
    X = count_data(4, big=BIG)
    Xn = count_data(5, n=15, nan=True, big=((2, 1, 75.0), (6, 0, 2000.0)))
    family = bnb.Poisson(shape=np.array([2.0, 0.5, 1.0, 3.0, 0.7]), rate=0.2)
    check(_fit(family, X), Xn, negative_binomial_joint(X, Y, Xn, family.shape, 0.2))


@pytest.mark.parametrize("name", ["multinomial", "poisson"])
def test_chunk_boundaries_with_tails_in_some_chunks(x64, small_chunks, scan, monkeypatch, name):
    """200 rows in 64-row chunks: counts above S only in the second and last chunks."""
    force_steps(monkeypatch, 4)
    X = count_data(6)
    Xn = count_data(7, n=200, big=((70, 1, 30.0), (199, 3, 12.0)))
    if name == "multinomial":
        clf, ref = _fit(bnb.Multinomial(), X), dirichlet_multinomial_joint(X, Y, Xn, np.ones(5))
    else:
        clf, ref = _fit(bnb.Poisson(), X), negative_binomial_joint(X, Y, Xn, 1.0, 0.1)
    check(clf, Xn, ref)


@pytest.mark.parametrize("path", ["no table", "table", "deep rows", "deep rows of every column"])
@pytest.mark.parametrize("name", ["multinomial", "poisson"])
def test_sparse_matches_the_reference(x64, name, path, monkeypatch):
    """CSR input against SciPy: 20 rows score without the count table (fewer values than its
    rows), with it (a table of counts up to 3, larger counts on the host), with rows for
    the counts 4 .. 64 of the two columns of largest posterior count, and with those rows for
    every column."""
    monkeypatch.setattr(_sparse, "_linear", {})
    if path != "no table":
        monkeypatch.setattr(_sparse, "LINEAR_ENTRIES", 4 * 5 * K)  # counts 0 .. 3: 20 rows
        monkeypatch.setattr(_sparse, "LINEAR_DEEP_ENTRIES", {"table": 0, "deep rows": 2 * 61 * K}
                            .get(path, _sparse.LINEAR_DEEP_ENTRIES))
    X = count_data(8, big=BIG)
    Xn = count_data(9, n=20, big=((3, 2, 44.0),))
    Xn[5] = 0.0
    if name == "multinomial":
        Xn[::4, 0] += 0.25  # non-integer counts are allowed here
        clf, ref = _fit(bnb.Multinomial(), X), dirichlet_multinomial_joint(X, Y, Xn, np.ones(5))
    else:
        clf, ref = _fit(bnb.Poisson(), X), negative_binomial_joint(X, Y, Xn, 1.0, 0.1)
    check(clf, sparse.csr_matrix(Xn), ref)
    tables = [table for _, table in _sparse._linear.values() if table.table is not None]
    assert len(tables) == (0 if path == "no table" else 1)
    assert [0 if t.deep is None else t.deep.columns.size for t in tables] == {
        "no table": [], "table": [0], "deep rows": [2], "deep rows of every column": [5]}[path]
    if path == "deep rows":  # large counts both in the two columns and elsewhere
        deep, big = tables[0].deep, Xn > 3
        assert big[:, deep.columns].any() and np.delete(big, deep.columns, axis=1).any()


# ---------------------------------------------------------------------------- Gaussian
def test_student_t_with_missing_values_and_chunks(x64, small_chunks):
    rng = np.random.default_rng(10)
    X = rng.normal(np.arange(K)[Y % K, None], 1.0, (60, 4))
    Xn = rng.normal(1.0, 2.0, (150, 4))
    Xn[[3, 70, 149], [0, 2, 3]] = np.nan  # missing values in some chunks only
    family = bnb.Gaussian(loc=0.0, kappa=1.0, shape=1.0, rate=1.0)
    check(_fit(family, X), Xn, student_t_joint(X, Y, Xn))


@pytest.mark.parametrize("f", [2, 4, 9, 13])
@pytest.mark.parametrize("missing_at_fit", [False, True], ids=["one coef", "coef per column"])
def test_student_t_grouped_log1p_terms(x64, small_chunks, f, missing_at_fit):
    """With one Student-t coefficient per class the kernel combines the ``log1p`` terms of
    ``LOG1P_GROUP`` columns into one; a column count below, at and past multiples of the group
    (a remainder added alone), missing values at prediction, and (missing values at fit: a
    coefficient per column) the term-by-term form, all against SciPy."""
    rng = np.random.default_rng(20 + f)
    X = rng.normal(np.arange(K)[Y % K, None], 1.0 + 0.2 * np.arange(f), (60, f))
    if missing_at_fit:
        X[[2, 5, 31], [0, f - 1, f // 2]] = np.nan
    Xn = rng.normal(1.0, 2.0, (150, f))
    Xn[[3, 70, 149], [0, f - 1, f // 2]] = np.nan
    family = bnb.Gaussian(loc=0.0, kappa=1.0, shape=1.0, rate=1.0)
    check(_fit(family, X), Xn, student_t_joint(X, Y, Xn))


def test_student_t_far_outliers_take_the_term_by_term_form(x64, monkeypatch):
    """A value so far out that a group's product ``(1 + u)**LOG1P_GROUP`` would overflow
    sends its chunk to one ``log1p`` per column: still exact."""
    from bayesnb.fast import gaussian

    on_the_kernels(monkeypatch)
    rng = np.random.default_rng(30)
    X = rng.normal(np.arange(K)[Y % K, None], 1.0, (60, 8))
    Xn = rng.normal(1.0, 2.0, (20, 8))
    Xn[5, 3] = 1e40  # u about 1e80 > the float64 group limit
    assert 1e80 > gaussian._GROUP_LIMIT[np.dtype(np.float64)]
    family = bnb.Gaussian(loc=0.0, kappa=1.0, shape=1.0, rate=1.0)
    check(_fit(family, X), Xn, student_t_joint(X, Y, Xn))


@jax.jit
def _log1p_sum(xj, table):
    """``gaussian._log1p_sum`` of a Student-t table at ``xj``, compiled once per shape and
    dtype (not once per call, as a new function each time would be)."""
    from bayesnb.fast import gaussian

    def u_of(lo, hi, classes):
        d = xj[:, None, lo:hi] - table.loc[classes, lo:hi]
        return d * d * table.weight[classes, lo:hi]

    return gaussian._log1p_sum(u_of, xj.shape[1], table, xj)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grouped_log1p_sum_against_numpy(dtype):
    """``_log1p_sum`` itself: the grouped form and the overflow fallback against float64
    ``np.log1p`` sums, with the small and large ``u`` of a Student-t (``coef * u`` near
    ``z**2 / 2`` for classes of thousands of rows)."""

    from bayesnb.fast import gaussian

    with jax.enable_x64(dtype == np.float64):  # the float64 table needs x64
        rng = np.random.default_rng(31)
        n, k, f = 50, 3, 11
        x = rng.normal(0.0, 3.0, (n, f))
        loc, weight = rng.normal(size=(k, f)), rng.uniform(1e-4, 1.0, (k, f))
        for relative in (np.zeros(0), np.ones(1)):  # (1,): each column less class 0's
            table = gaussian.StudentT(*(jnp.asarray(v, dtype) for v in (
                loc, weight, weight, weight, np.ones((k, 1)), weight, np.zeros(k), relative)))
            for scale in (1.0, 1e6 if dtype == np.float32 else 1e40):  # the second: fallback
                xs = x * np.where(np.arange(f) == 4, scale, 1.0)
                ref = np.log1p((xs[:, None, :] - loc) ** 2 * weight).sum(axis=-1)
                if relative.size:
                    ref = ref - ref[:, :1]
                got = np.asarray(_log1p_sum(jnp.asarray(xs, dtype), table), np.float64)
                tol = 1e-5 if dtype == np.float32 else 1e-12
                # float32, relative: the difference of two sums near 1e13 (the fallback's
                # column at 1e6) keeps their absolute rounding
                atol = tol * (np.abs(ref).max() + 1) if relative.size else tol
                assert_allclose(got, ref, rtol=tol, atol=atol)


# ---------------------------------------------------------------------------- float32
@pytest.mark.parametrize("name", ["multinomial", "poisson", "gaussian"])
def test_float32_agrees_with_x64(name, scan, monkeypatch):
    """Default float32 against x64 on the same data, with counts above S (host tails)."""
    force_steps(monkeypatch, 2)
    rng = np.random.default_rng(11)
    # the shapes of the x64 tests above (8 Gaussian columns, 5 count columns, 16-row buckets),
    # so their float64 kernels are compiled once
    if name == "gaussian":
        X, Xn, family = (rng.normal(Y[:, None] % K, 1.0, (60, 8)), rng.normal(1, 1.5, (20, 8)),
                         bnb.Gaussian())
    else:
        X, Xn = count_data(12, big=BIG), count_data(13, n=15, big=((4, 2, 25.0),))
        Xn[6, 1] = np.nan
        family = bnb.Multinomial() if name == "multinomial" else bnb.Poisson()
    p32 = _fit(family, X).predict_proba(Xn)
    with jax.enable_x64(True):
        p64 = _fit(family, X).predict_proba(Xn)
    assert np.abs(p32 - p64).max() <= 1e-4


# ---------------------------------------------------------------------------- pieces
@pytest.mark.parametrize("name", ["multinomial", "poisson"])
def test_small_batches_take_one_step_and_stay_exact(x64, monkeypatch, name):
    """On an accelerator, a batch of few cells scores with S = 1 (the counts above one on the
    host), whatever its counts would choose: one compiled kernel for every small call. The
    answers are the closed form's, as with S chosen from the counts."""
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    chosen = []
    real = _exact.scores

    def spy(families, levels, joint, class_log_prior, tables, xs, *rest):
        chosen.append(tables[0].steps.shape[0] // xs[0].shape[1] + 1)
        return real(families, levels, joint, class_log_prior, tables, xs, *rest)

    monkeypatch.setattr(_exact, "scores", spy)
    X = count_data(8, big=BIG)
    Xn = 2.0 + np.minimum(count_data(9, n=12), 2.0)  # counts 2 to 4: S = 4 takes them whole
    Xn[2, 1], Xn[5, 3] = 57.0, 1000.0  # and two the host adds
    if name == "multinomial":
        clf, ref = _fit(bnb.Multinomial(), X), dirichlet_multinomial_joint(X, Y, Xn, np.ones(5))
    else:
        clf, ref = _fit(bnb.Poisson(), X), negative_binomial_joint(X, Y, Xn, 1.0, 0.1)
    assert _exact.choose_steps(Xn) > 1  # the counts alone would ask for more steps
    check(clf, Xn, ref)
    assert set(chosen) == {1}
    monkeypatch.setattr(_exact, "SMALL_BATCH_CELLS", 0)  # the same rows as a large batch
    check(clf, Xn, ref)
    assert chosen[-1] > 1


def test_a_cpu_takes_one_step_whatever_the_counts():
    rng = np.random.default_rng(14)
    for sample in (rng.integers(0, 2, (500, 50)), rng.poisson(4.0, (500, 50)),
                   rng.random((100, 10)), np.full((3, 3), np.nan)):
        assert _exact.choose_steps(sample) == 1


def test_accelerator_steps_leave_few_rows_to_the_host(monkeypatch):
    """On an accelerator ``S`` is the smallest choice past which at most
    ``ACCELERATOR_TAIL_ROWS`` of the sampled rows hold a count (or a fraction, or NaN): the
    products are nearly free there, the host's rows are not (an H200 spent 1.5-1.6 s of
    200,000 rows on the CPU rule's tails, 0.57 s at S = 16)."""
    import jax

    rng = np.random.default_rng(15)
    counts = rng.poisson(rng.gamma(2.0, 0.5, 200), (512, 200)).astype(np.float32)
    cpu = _exact.choose_steps(counts)
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    got = _exact.choose_steps(counts)
    rows_past = [np.count_nonzero(counts.max(axis=1) > s) for s in _exact.STEP_CHOICES]
    want = next(s for s, r in zip(_exact.STEP_CHOICES, rows_past, strict=True)
                if r <= _exact.ACCELERATOR_TAIL_ROWS * counts.shape[0])
    assert got == want and got > cpu
    assert _exact.choose_steps(rng.integers(0, 2, (500, 50))) == 1
    fractions = counts.copy()
    fractions[::8, 0] += 0.5  # an eighth of the rows: past every S
    assert _exact.choose_steps(fractions) == _exact.STEP_CHOICES[-1]
    assert _exact.choose_steps(np.zeros((0, 4))) == 1


@pytest.mark.parametrize("name", ["multinomial", "poisson"])
def test_accelerator_rule_and_chunks_stay_exact(x64, monkeypatch, name):
    """The accelerator's choices (``S`` from the rows, 32x larger chunks), taken on the CPU,
    against SciPy's Dirichlet-multinomial and negative binomial."""
    import jax

    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    monkeypatch.setattr(_exact, "SMALL_BATCH_CELLS", 0)
    X = count_data(16, big=BIG)
    # the shapes of the steps tests above (15 rows, a 16-row bucket): S = 32 is chosen here
    # (5 of 15 rows hold a count past 16, a fraction or NaN), so their kernels are reused
    Xn = count_data(17, n=15, nan=True, big=((2, 1, 75.0), (6, 0, 2000.0)))
    assert _exact.choose_steps(Xn) == 32
    if name == "multinomial":
        alpha = np.array([0.5, 1.0, 2.0, 0.3, 4.0])
        check(_fit(bnb.Multinomial(alpha=alpha), X), Xn,
              dirichlet_multinomial_joint(X, Y, Xn, alpha))
    else:
        family = bnb.Poisson(shape=np.array([2.0, 0.5, 1.0, 3.0, 0.7]), rate=0.2)
        check(_fit(family, X), Xn, negative_binomial_joint(X, Y, Xn, family.shape, 0.2))


def test_host_log_rising_against_exact_sums():
    """h(a, x) = sum_{t<x} log(1 + t/a) for integer x (math.fsum), and the log-Gamma
    difference where it does not cancel."""
    for a in (0.3, 1.0, 9.5, 10.0, 37.0, 1e4, 1e8):
        for x in (0, 1, 2, 5, 60, 700):
            ref = math.fsum(math.log1p(t / a) for t in range(1, x))
            assert abs(float(_sparse.log_rising(a, x)) - ref) <= 1e-12 * max(1.0, abs(ref))
    a, x = np.array([0.7, 3.0, 12.0]), np.array([0.5, 2.25, 7.75])
    assert_allclose(_sparse.log_rising(a, x),
                    gammaln(a + x) - gammaln(a) - x * np.log(a), rtol=1e-12, atol=1e-14)


def test_log_rising_of_counts_far_beyond_the_concentration(x64):
    """Past u = x / a = 1/4, h was a psi(u) (whose leading term is x^3 / (6 a^2)) less that
    term added back: at a = 12, x = 1e7 it cancelled to 357 nats off (positive log
    probabilities of a count under method='bayes'). Against the log-Gamma difference, exact
    to its own rounding here; both the host twin and the kernels' form, and whole models'
    joint scores (dense and sparse) against SciPy's predictives."""
    from bayesnb.fast._float32 import log_rising as kernel_log_rising

    a = np.array([12.0, 12.0, 1e3, 11.0, 1e6, 10.0])
    x = np.array([1e6, 1e7, 1e8, 1e9, 3e5, 100.0])
    ref = gammaln(a + x) - gammaln(a) - x * np.log(a)
    rounding = 4e-16 * (gammaln(a + x) + x * np.log(a))  # the reference's own
    assert np.all(np.abs(_sparse.log_rising(a, x) - ref) <= rounding + 1e-12)
    assert np.all(np.abs(np.asarray(kernel_log_rising(jnp.asarray(a), jnp.asarray(x))) - ref)
                  <= rounding + 1e-10)
    X = np.array([[1.0, 0, 2], [0, 1, 0], [3, 0, 0], [0, 2, 1], [1, 1, 1], [0, 0, 4]])
    y = np.array([0, 0, 0, 1, 1, 1])
    rows = np.array([[0.0, big, 1.0] for big in (1e5, 1e6, 1e7)])
    for family in (bnb.Multinomial(), bnb.Poisson()):
        clf = bnb.NaiveBayes(family, method="bayes").fit(X, y)
        ref = np.stack([np.log(0.5) + _predictive_reference(family, X[y == c], rows)
                        for c in (0, 1)], axis=1)
        for data in (rows, sparse.csr_matrix(rows)):
            assert_allclose(clf.predict_joint_log_proba(data), ref, rtol=1e-9)


def _predictive_reference(family, X_class, rows):
    """log p(row | class) of the exact predictive, from SciPy: Dirichlet-multinomial for a
    Multinomial (alpha = 1 + counts), per column the negative binomial of a Gamma(1, 0.1)
    rate for a Poisson."""
    if isinstance(family, bnb.Multinomial):
        alpha, n = 1.0 + X_class.sum(axis=0), rows.sum(axis=1)
        return (gammaln(n + 1) - gammaln(rows + 1).sum(axis=1) + gammaln(alpha.sum())
                - gammaln(n + alpha.sum()) + (gammaln(rows + alpha) - gammaln(alpha)).sum(axis=1))
    shape, rate = 1.0 + X_class.sum(axis=0), 0.1 + len(X_class)
    return st.nbinom.logpmf(rows, shape, rate / (rate + 1.0)).sum(axis=1)


@pytest.mark.parametrize("steps", [1, 2, 4, 32])
@pytest.mark.parametrize("integral", [True, False])
@pytest.mark.parametrize("positioned", [False, True], ids=["from x", "kernel positions"])
def test_dense_tail_against_math_fsum(steps, integral, positioned, monkeypatch):
    """The dense tail (counts read from the cumulative table up to its largest count, the
    rest term by term or by series) against :math:`\\sum_{t=steps}^{x-1}\\log(1 + t/a)` in
    ``math.fsum``, and :math:`h(a, x)` whole for a non-integer value; a small
    ``CUMULATIVE_ENTRIES`` makes the table stop at a count the data pass. ``positioned``: the
    host reads the score kernel's table positions (``_steps.tail_positions``), and the chunk
    itself once they mark a value the table lacks (only in the chunk with those values)."""
    monkeypatch.setattr(_sparse, "CUMULATIVE_ENTRIES", 3 * 4 * 20)  # counts up to 19
    monkeypatch.setattr(_sparse, "_BLOCK_ELEMENTS", 6)  # series in blocks of two entries
    rng = np.random.default_rng(40)
    a = rng.uniform(0.2, 50.0, (3, 4))
    x = rng.poisson(6.0, (30, 4)).astype(np.float32)
    x[2, 1], x[7, 3], x[9, 0] = 19.0, 20.0, 250.0  # at, past the table; the series
    x[11, 2] = np.nan
    if not integral:
        x[5, 0], x[8, 2] = 2.5, 0.25
    ref = np.zeros((30, 3))
    for i in range(30):
        for j in range(4):
            v = float(x[i, j])
            if math.isnan(v):
                continue
            for k in range(3):
                if v != math.floor(v):
                    ref[i, k] += gammaln(a[k, j] + v) - gammaln(a[k, j]) - v * math.log(a[k, j])
                else:
                    ref[i, k] += math.fsum(math.log1p(t / a[k, j])
                                           for t in range(steps, int(v)))
    positions = None
    if positioned:
        import jax.numpy as jnp

        from bayesnb.fast._steps import tail_positions

        top = _sparse.cumulative_top(3, 4)
        positions = np.asarray(jax.jit(tail_positions)(
            jnp.asarray(x), jnp.zeros(((steps - 1) * 4, 3), jnp.float32), np.int32(top)))
        below = np.where(np.isnan(x), 0.0, x)  # the rows whose counts the table holds
        clean = np.all((below <= top) & (below == np.floor(below)), axis=1)
        # a row the table holds takes its terms from the positions alone
        assert_allclose(_sparse.dense_rising_tail(a, x[clean] * np.nan, steps, integral,
                                                  positions[clean]),
                        ref[clean], rtol=1e-10, atol=1e-10)
    got = _sparse.dense_rising_tail(a, x, steps, integral=integral, positions=positions)
    assert_allclose(got, ref, rtol=1e-10, atol=1e-10)
    table = _sparse.cumulative_rising(a, steps)  # counts steps .. 19, or none past 32
    assert (table is None) if steps >= 19 else (table.shape == (20 - steps, 4, 3))


def _h_reference(a, v, start=1):
    """:math:`\\sum_{t=start}^{v-1}\\log(1 + t/a)` in ``math.fsum`` for an integer ``v``,
    else the whole log-Gamma difference."""
    if v != math.floor(v):
        return gammaln(a + v) - gammaln(a) - v * math.log(a)
    return math.fsum(math.log1p(t / a) for t in range(start, int(v)))


@pytest.mark.parametrize("path", ["one table", "deep rows", "deep rows of every column",
                                  "no table"])
@pytest.mark.parametrize("case", ["counts", "mostly ones", "impossible column"])
def test_sparse_tail_against_math_fsum(case, path, monkeypatch):
    """CSR input: :math:`\\sum_j x_j s_{kj} + h(a_{kj}, x_j)` per row and class, every
    stored value's h from the count table (counts up to 19 here), term by term past it, by
    the series for 250 and by log-Gamma for non-integer values, in blocks of two entries (so
    rows span blocks); explicit zeros and ones add no h. The table is read with rows for the
    counts 20 .. 64 of two columns, of every column, or of none, or not built at all for a
    call with fewer values than it would have rows. A slope of -inf (a column with no
    probability, whose values are all 0) takes the slope's product and the terms apart."""
    monkeypatch.setattr(_sparse, "CUMULATIVE_ENTRIES", 3 * 4 * 20)
    # 120 stored values: a table of counts up to 19 has 80 rows, one up to 63 has 256
    monkeypatch.setattr(_sparse, "LINEAR_ENTRIES", 3 * 4 * (20 if path != "no table" else 80))
    monkeypatch.setattr(_sparse, "LINEAR_DEEP_ENTRIES",
                        {"one table": 0, "deep rows": 2 * 45 * 3}.get(path, 1 << 19))
    monkeypatch.setattr(_sparse, "_linear", {})
    monkeypatch.setattr(_sparse, "_BLOCK_ELEMENTS", 6)
    rng = np.random.default_rng(41)
    a = rng.uniform(0.2, 50.0, (3, 4))
    slope = rng.normal(size=(3, 4))
    x = rng.poisson(0.3 if case == "mostly ones" else 3.0, (30, 4)).astype(float)
    x[2, 1], x[7, 3], x[9, 0], x[5, 0], x[8, 2] = 19.0, 20.0, 250.0, 2.5, 0.25
    x[11] = [30.0, 64.0, 33.0, 65.0]  # past the table: two of them past the deep rows too
    if case == "impossible column":
        slope[1, 2], x[:, 2] = -np.inf, 0.0
    # every entry stored, zeros included
    X = sparse.csr_matrix((x.ravel(), np.tile(np.arange(4), 30), np.arange(0, 121, 4)),
                          shape=x.shape)
    assert X.nnz == x.size
    ref = np.array([[sum(_h_reference(a[k, j], x[i, j]) + (x[i, j] * slope[k, j] if x[i, j]
                                                            else 0.0) for j in range(4))
                     for k in range(3)] for i in range(30)])
    owner = (a, slope)
    scores, totals = _sparse.linear_rising(X, owner, lambda: slope, a, totals=True)
    assert_allclose(scores, ref, rtol=1e-10, atol=1e-10)
    assert_array_equal(totals, [math.fsum(row) for row in x])
    assert _sparse.linear_rising(X, owner, lambda: slope, a)[1] is None
    if path == "no table":
        assert not _sparse._linear
    else:
        (_, table), = _sparse._linear.values()
        assert (table.table is None) == (case == "impossible column")
        if table.table is not None:
            assert (0 if table.deep is None else table.deep.columns.size) == {
                "one table": 0, "deep rows": 2, "deep rows of every column": 4}[path]


@pytest.mark.parametrize("limit", [5, 2**30], ids=["int32 rows", "int64 rows"])
def test_table_rows_against_a_loop(limit, monkeypatch):
    """Each stored value's row ``count * F + column`` of a table of counts below a limit, 0
    and listed apart for anything else (fractions, NaN, infinities, negative or huge values,
    counts at the limit) with its row, column and value, and the row totals, in blocks of
    whole rows of about three values (a longer row is a block of its own; empty rows among
    them); the rows in the matrix's index dtype unless the table's rows pass it."""
    monkeypatch.setattr(_sparse, "_ROWS_BLOCK", 3)
    values = np.array([0.0, 1.0, 4.0, 5.0, 2.5, np.nan, np.inf, -np.inf, -1.0, 3e10, 1e300,
                       2.0, 0.0, 4.999999, 3.0, 7.0, 1.0])
    cols = np.arange(values.size) % 4
    indptr = np.array([0, 5, 5, 11, 11, 11, 15, 16, 16, 17])
    X = sparse.csr_matrix((values, cols, indptr), shape=(indptr.size - 1, 4))
    assert X.indices.dtype == np.int32
    rows = _sparse._table_rows(X, limit, totals=True)
    listed = np.array([math.isfinite(v) and v == math.floor(v) and 0 <= v < limit
                       for v in values])
    row_of = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    assert_array_equal(rows.rest, np.flatnonzero(~listed))
    assert_array_equal(rows.rest_rows, row_of[~listed])
    assert_array_equal(rows.rest_cols, cols[~listed])
    assert_array_equal(rows.rest_values, values[~listed])
    assert_array_equal(rows.index, [int(v) * 4 + j if ok else 0
                                    for v, j, ok in zip(values, cols, listed, strict=True)])
    assert rows.index.dtype == (np.int32 if limit == 5 else np.int64)
    sums = [math.fsum(values[lo:hi]) if np.isfinite(values[lo:hi]).all() else np.nan
            for lo, hi in zip(indptr[:-1], indptr[1:], strict=True)]  # inf - inf: NaN
    assert_allclose(rows.totals, sums, rtol=1e-15, atol=0)
    assert _sparse._table_rows(X, limit).totals is None
    empty = _sparse._table_rows(sparse.csr_matrix((3, 4)), limit, totals=True)
    assert empty.index.size == empty.rest.size == 0 and not empty.totals.any()


def test_table_rows_of_deep_columns_against_a_loop(monkeypatch):
    """Past a table of counts 0 .. 4, columns 1 and 3 have rows for the counts 5 .. 7 (row
    ``20 + (count - 5) * 2 + rank``); their other values (fractions, NaN, negative, 8 and
    more) and the other columns' values past the table are listed apart, in blocks of
    about three values."""
    monkeypatch.setattr(_sparse, "_ROWS_BLOCK", 3)
    deep = _sparse.DeepColumns(np.array([1, 3]), np.array([-1, 0, -1, 1]), 5, 8)
    values = np.array([5.0, 5.0, 7.0, 7.0, 8.0, 6.5, np.nan, -6.0, 6.0, 2.0, 4.0, 9.0])
    cols = np.array([0, 1, 2, 3, 1, 3, 1, 3, 3, 1, 0, 0])
    X = sparse.csr_matrix((values, cols, np.array([0, 4, 4, 9, 12])), shape=(4, 4))
    rows = _sparse._table_rows(X, 5, deep=deep, n_table=26)
    expected, listed = [], []
    for v, j in zip(values, cols, strict=True):
        count = math.isfinite(v) and v == math.floor(v)
        if count and 0 <= v < 5:
            expected.append(int(v) * 4 + j)
        elif count and j in (1, 3) and 5 <= v < 8:
            expected.append(20 + (int(v) - 5) * 2 + (j == 3))
        else:
            expected.append(0)
            listed.append(len(expected) - 1)
    assert_array_equal(rows.index, expected)
    assert_array_equal(rows.rest, listed)
    assert_array_equal(rows.rest_rows, [0, 0, 2, 2, 2, 2, 3])
    assert_array_equal(rows.rest_values, values[listed])


@pytest.mark.parametrize("case", ["distinct values", "repeated counts",
                                  "repeated counts and a fraction"])
def test_host_terms_by_row_against_math_fsum(case, monkeypatch):
    """The host's terms summed by row: each distinct (column, value) evaluated once when
    counts repeat (found by a map for integer counts, by a sort otherwise), entry by entry
    when the values are mostly distinct (blocks of two)."""
    monkeypatch.setattr(_sparse, "_BLOCK_ELEMENTS", 6)
    rng = np.random.default_rng(43)
    a = rng.uniform(0.2, 50.0, (3, 5))
    rows = np.sort(rng.integers(0, 9, 40))
    cols = rng.integers(0, 5, 40)
    values = (rng.uniform(0.1, 30.0, 40) if case == "distinct values"
              else rng.integers(2, 9, 40).astype(float))
    if case != "repeated counts":
        values[3] = 7.5
    ref = np.zeros((10, 3))
    for r, j, v in zip(rows, cols, values, strict=True):
        ref[r] += [_h_reference(a[k, j], v, start=2) for k in range(3)]
    assert_allclose(_sparse.rising_rows(rows, cols, values, a, 10, 2), ref, rtol=1e-10,
                    atol=1e-10)


@pytest.mark.parametrize("totals", [np.repeat([0.0, 3.0, 100.0, 7.0], 10),
                                    np.repeat([0.5, 3.0, 100.25, 7.0], 10),
                                    np.random.default_rng(42).permutation(400)[:40].astype(float)],
                         ids=["shared totals", "shared fractional totals", "distinct totals"])
@pytest.mark.parametrize("owner", [None, "posterior"])
def test_row_totals_rising_against_math_fsum(totals, owner, monkeypatch):
    """h(A_k, n) per row and class, once per distinct total when rows share them (integer
    totals told apart by a count per value, others by a sort), or, given the posterior they
    come from, integer totals read from its table (built once: a second call reads it).
    Fractional totals are checked against SciPy's log-Gamma difference, to its own rounding:
    ``gammaln(2.5e5)`` is 2.9e6, so the difference holds about 6e-10 of absolute error."""
    monkeypatch.setattr(_sparse, "_rising_totals", {})
    a = np.array([12.0, 900.0, 2.5e5])
    ref = np.array([[_h_reference(ak, n) for ak in a] for n in totals])
    whole = np.array_equal(totals, np.floor(totals))
    posterior = None if owner is None else object()
    for _ in range(2):
        assert_allclose(_sparse.log_rising_by_row(a, totals, owner=posterior), ref, rtol=1e-11,
                        atol=1e-12 if whole else 2e-9)
    assert len(_sparse._rising_totals) == (owner is not None and whole)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("steps", [1, 2, 4])
def test_tail_positions_against_numpy(request, dtype, steps):
    """``tail_positions``: ``(x - S) F + j`` for an integer count ``S < x <= top``, 0 for a
    count up to ``S`` or NaN, -1 for a fraction or a count past ``top`` (float32 under the
    default policy, float64 under x64)."""

    from bayesnb.fast._steps import tail_positions

    if dtype == "float64":
        request.getfixturevalue("x64")

    top, f = 9, 6
    rng = np.random.default_rng(steps)
    x = rng.integers(0, 12, (30, f)).astype(dtype)
    x[0, 1], x[1, 2], x[2, 3], x[3, 4] = np.nan, 0.5, steps + 0.25, top + 1
    x[4, 5], x[5, 0] = top, steps
    got = np.asarray(jax.jit(tail_positions)(
        jnp.asarray(x), jnp.zeros(((steps - 1) * f, K), dtype), np.int32(top)))
    assert got.dtype == np.int32
    want = np.zeros(x.shape, np.int64)
    for (i, j), v in np.ndenumerate(x):
        if np.isnan(v) or (v == np.floor(v) and v <= steps):
            continue
        want[i, j] = (int(v) - steps) * f + j if v == np.floor(v) and v <= top else -1
    assert_allclose(got, want)
    assert got[0, 1] == 0 and got[1, 2] == -1 and got[2, 3] == -1 and got[3, 4] == -1
    assert got[4, 5] == (top - steps) * f + 5 and got[5, 0] == 0


@pytest.mark.parametrize("width", [7, 4095, 4096],
                         ids=["one product", "one product at its limit", "two products"])
@pytest.mark.parametrize("steps", [1, 4])
def test_tail_flags_against_numpy(width, steps):
    """Default float32. ``needs_tail`` flags rows with a count above ``S`` (1) or a value
    that is not an integer (2, whatever else the row holds), NaN being neither: against NumPy,
    with one weighted product (up to 4,095 columns: every row sum, at most ``F (F + 1)``, is
    an integer below 2**24) and with two products (4,096 columns or more in float32)."""

    from bayesnb.fast._steps import needs_tail

    rng = np.random.default_rng(width + steps)
    x = rng.integers(0, steps + 1, (40, width)).astype(np.float32)  # nothing above S yet
    x[1, 0] = x[2, -1] = steps + 1  # above S
    x[3, 2] = 0.5  # fractional
    x[4, 1], x[4, 3] = steps + 7, 2.25  # both: flagged as fractional
    x[5, :] = np.nan  # missing only
    x[6, 0], x[6, 1] = np.nan, steps + 1
    x[7, 1:] = steps + 3  # every value but the first above S
    x[8, :] = 1.5  # every value fractional
    table = jnp.zeros(((steps - 1) * width, K), jnp.float32)
    got = np.asarray(jax.jit(needs_tail)(jnp.asarray(x), table))
    with np.errstate(invalid="ignore"):
        fractional = np.any(~np.isnan(x) & (x != np.floor(x)), axis=1)
        above = np.any(~np.isnan(x) & (x > steps), axis=1)
    assert_allclose(got, np.where(fractional, 2, np.where(above, 1, 0)))
    assert got[[1, 2, 3, 4, 5, 6, 7, 8]].tolist() == [1, 1, 2, 2, 0, 1, 1, 2]
