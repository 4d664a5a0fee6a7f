"""The dense kernels' forms chosen for speed (issue 12 section 3) against NumPy and hand counts.

- ``_kernels.Labels`` sums by products with the one-hot up to ``DOT_CLASSES`` classes (in
  float64, by one scatter-add when every weight is 1 or 0) and by a blocked scatter-add past it:
  each against NumPy's weighted sums.
- Bernoulli's chunk statistics take three branches (integer weights, fractional weights,
  missing values); the ML estimate of a column of all ones in a class must come out exactly
  1 in each, not a rounding away from it.
- Bernoulli scores through a float64-made linear table (``BernoulliLinear``) unless a
  probability is 0 or 1: plug-in and exact, complete and missing rows, against hand sums.
- The log multinomial coefficient's ``log x!`` row sums take a table gather whose markers
  flag every entry that is not an integer count below 256 (``_steps.small_count_log_factorials``),
  and ``gammaln`` where one is: both against SciPy, alone and across the chunks of one fit;
  every kind of such entry marked; the statistics kernel's value checks, which read those
  markers instead of a bounds pass, still refuse each bad value naming its column, in
  float32 and float64.
- A chunk's bounds (smallest, largest value, largest fractional part) come from one variadic
  reduction (``_steps.chunk_bounds``): against NumPy, and with missing values either NaN or
  the observed values' bounds.
- The float64 range check now runs in the kernels' value checks and in ``numeric_block``
  (not in a host pass over every block): a DataFrame, an array, fit and predict.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.special import gammaln, logsumexp

import bayesnb as bnb
from bayesnb.fast import _kernels

# the statistics kernels' own paths, however small the fit (fast._host.SMALL_FIT_CELLS)
pytestmark = pytest.mark.usefixtures("kernel_fits")


@pytest.mark.parametrize("weighting", ["fractional", "ones", "ones, padded", "ones and zeros"])
@pytest.mark.parametrize("n_classes", [3, 64, 65, 300])
def test_labels_sums_against_numpy(x64, n_classes, weighting):
    """Products (<= 64 classes; in float64 one scatter-add when every weight is 1 or 0) and
    the blocked scatter-add (more) give NumPy's weighted per-class sums and counts, for 1-d
    and 2-d values. A padded last chunk (zero rows of weight 0) and rows a caller weighs 0
    (their values not 0) take the scatter-add, those rows dropped; fractional weights take
    the product."""
    assert _kernels.Labels.DOT_CLASSES == 64
    rng = np.random.default_rng(n_classes)
    rows = 700
    codes = rng.integers(0, n_classes, rows).astype(np.int32)
    weights = rng.uniform(0.1, 3.0, rows) if weighting == "fractional" else np.ones(rows)
    values = rng.normal(size=(rows, 5, 2))
    if weighting == "ones, padded":
        weights[-60:], values[-60:], codes[-60:] = 0.0, 0.0, 0
    if weighting == "ones and zeros":
        weights[::3] = 0.0

    def sums(c, w, v):
        labels = _kernels.Labels(c, w, n_classes, jnp.float64)
        return labels.sum(v), labels.count(), labels.gather(labels.sum(v[:, 0, 0]))

    got_sum, got_count, got_gather = jax.jit(sums)(codes, weights, values)
    ref_sum = np.zeros((n_classes, 5, 2))
    np.add.at(ref_sum, codes, weights[:, None, None] * values)
    ref_count = np.bincount(codes, weights=weights, minlength=n_classes)
    assert_allclose(got_sum, ref_sum, rtol=1e-12, atol=1e-12)
    assert_allclose(got_count, ref_count, rtol=1e-12)
    assert_allclose(got_gather, ref_sum[codes, 0, 0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("values", ["integer", "fractional"])
def test_float32_class_totals_of_small_counts(values):
    """Default float32. A chunk whose sums fit below ``2**24`` takes the plain product only
    when its values are integers (then exact); fractional counts (term weights) keep the
    centred form. Against NumPy's float64 sums of the same float32 values: exact for
    integers, within 5e-8 for fractions (one plain float32 sum per chunk was 1.9e-7 off)."""
    rng = np.random.default_rng(12)
    n, f = 20_000, 50
    y = rng.integers(0, 3, n)
    x = rng.gamma(0.5, 3.0, (n, f))
    x = (np.floor(x) if values == "integer" else x + 0.1234567).astype(np.float32)
    assert x.max() * 2_048 < 2**24  # every chunk could take the plain product
    model = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0).fit(x, y)
    got = np.asarray(model.fitted_.blocks[0].stats.counts, np.float64)
    ref = np.stack([x.astype(np.float64)[y == c].sum(axis=0) for c in range(3)])
    if values == "integer":
        np.testing.assert_array_equal(got, ref)
    else:
        assert_allclose(got, ref, rtol=5e-8)


def test_float64_bernoulli_counts_over_chunks_equal_scikit_learn(x64):
    """A float64 fit of 0/1 rows over several chunks (each chunk's class sums one scatter-add
    of its rows, every weight 1; the last chunk partial): the class counts equal scikit-learn's
    ``feature_count_`` and ``class_count_`` exactly."""
    from sklearn.naive_bayes import BernoulliNB

    rng = np.random.default_rng(21)
    n, f, k = 12_503, 400, 10  # 40 MB of float64: chunks of about 8 MB
    y = rng.integers(0, k, n)
    X = (rng.random((n, f)) < rng.uniform(0.05, 0.95, (k, f))[y]).astype(np.float64)
    clf = bnb.NaiveBayes(bnb.Bernoulli(), method="mean", class_alpha=0).fit(X, y)
    sk = BernoulliNB(alpha=1.0, binarize=None).fit(X, y)
    np.testing.assert_array_equal(clf.feature_count_, sk.feature_count_)
    np.testing.assert_array_equal(clf.class_count_, sk.class_count_)


@pytest.mark.parametrize("weights", ["none", "integer", "fractional"])
@pytest.mark.parametrize("missing", [False, True])
def test_bernoulli_counts_and_an_all_ones_column(weights, missing):
    """Default float32. Hand counts of ones and observed values per class; column 0 is all
    ones in class 1, so its ML probability is exactly 1 (log(1 - p) = -inf, no 0/0 error)."""
    rng = np.random.default_rng(5)
    n = 90
    y = np.arange(n) % 3
    X = (rng.random((n, 4)) < 0.4).astype(float)
    X[y == 1, 0] = 1.0
    if missing:
        X[[2, 5, 9], [1, 3, 2]] = np.nan
    w = {"none": None, "integer": rng.integers(1, 4, n).astype(float),
         "fractional": rng.uniform(0.3, 1.7, n)}[weights]
    clf = bnb.NaiveBayes(bnb.Bernoulli(), method="ml").fit(X, y, sample_weight=w)
    stats = clf.blocks_[0].stats
    ww = np.ones(n) if w is None else w
    observed = ~np.isnan(X)
    for k in range(3):
        rows = y == k
        assert_allclose(stats.count[k], (ww[rows, None] * observed[rows]).sum(axis=0),
                        rtol=1e-6)
        assert_allclose(stats.ones[k], (ww[rows, None] * np.nan_to_num(X[rows])).sum(axis=0),
                        rtol=1e-6)
    assert stats.count[1, 0] == stats.ones[1, 0]  # exactly: count - ones is 0
    proba = clf.predict_proba(np.array([[0.0, 1.0, 0.0, 1.0]]))
    assert proba[0, 1] == 0.0  # a zero where class 1 has only ones


def _bernoulli_joint(X, y, Xn, alpha, beta):
    """log p(x, c) over each row's observed columns, by hand: the posterior mean, which is
    also the Beta-Bernoulli predictive."""
    out = np.zeros((len(Xn), 3))
    for k in range(3):
        xk = X[y == k]
        ones, count = np.nansum(xk, axis=0), np.sum(~np.isnan(xk), axis=0)
        p = (ones + alpha) / (count + alpha + beta)
        obs = ~np.isnan(Xn)
        xn = np.nan_to_num(Xn)
        out[:, k] = np.log(np.mean(y == k)) + np.sum(
            obs * (xn * np.log(p) + (1 - xn) * np.log1p(-p)), axis=1)
    return out


@pytest.mark.parametrize("method", ["mean", "bayes"])
@pytest.mark.parametrize("missing", [False, True])
def test_bernoulli_linear_table_against_hand_sums(x64, method, missing):
    rng = np.random.default_rng(8)
    y = np.arange(60) % 3
    X = (rng.random((60, 7)) < 0.2 + 0.25 * (y[:, None] == np.arange(7) % 3)).astype(float)
    Xn = (rng.random((25, 7)) < 0.5).astype(float)
    if missing:
        Xn[[1, 4, 4, 20], [0, 2, 6, 3]] = np.nan
    clf = bnb.NaiveBayes(bnb.Bernoulli(alpha=1.5, beta=0.5), method=method,
                         class_alpha=0).fit(X, y)
    joint = _bernoulli_joint(X, y, Xn, 1.5, 0.5)
    assert_allclose(clf.predict_joint_log_proba(Xn), joint, rtol=1e-10, atol=1e-10)
    assert_allclose(clf.predict_proba(Xn),
                    np.exp(joint - logsumexp(joint, axis=1, keepdims=True)), rtol=1e-9)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (1024, 1000), (5, 0)])
def test_chunk_bounds_against_numpy(request, dtype, shape):
    """``chunk_bounds`` gives NumPy's min, max and largest ``x - floor(x)`` of a chunk
    (negative values, fractions, integers, no columns); with a NaN each bound is NaN or the
    observed values' own (XLA:CPU's min and max may skip a NaN), as the value checks expect."""
    from bayesnb.fast._steps import chunk_bounds

    if dtype == "float64":
        request.getfixturevalue("x64")
    rng = np.random.default_rng(shape[0])
    x = np.round(rng.normal(0, 50, shape), 1).astype(dtype)
    got = [float(v) for v in jax.jit(chunk_bounds)(jnp.asarray(x))]
    if x.size == 0:
        assert got == [np.inf, -np.inf, -np.inf]
        return
    want = [x.min(), x.max(), (x - np.floor(x)).max()]
    assert got == [float(v) for v in want]
    assert float(jax.jit(chunk_bounds)(jnp.asarray(np.floor(x)))[2]) == 0.0
    x[0, 0] = np.nan
    observed = x[~np.isnan(x)]
    want = ([observed.min(), observed.max(), (observed - np.floor(observed)).max()]
            if observed.size else [np.inf, -np.inf, -np.inf])  # NaN skipped: nothing left
    for g, w in zip(jax.jit(chunk_bounds)(jnp.asarray(x)), want, strict=True):
        assert np.isnan(float(g)) or float(g) == float(w)


@pytest.mark.parametrize("top", [1.0, 4.0, 5.0, 8.0, 16.0, 17.0, 255.0, 256.0, 3.5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_factorial_row_sums_against_scipy(request, top, dtype):
    """Both paths of ``log_factorial_sum`` (the table below 256, gammaln past it or for a
    fraction), and ``log_normalizer``, against SciPy in float64."""
    from bayesnb.families.multinomial import Multinomial
    from bayesnb.fast._counts import log_factorial_sum

    if dtype == "float64":
        request.getfixturevalue("x64")
    rng = np.random.default_rng(int(top * 2))
    x = rng.integers(0, int(top) + 1, (300, 40)).astype(float)
    x[7, 3] = top  # the chunk's largest value, whatever the draw
    got = np.asarray(jax.jit(log_factorial_sum)(jnp.asarray(x, dtype)))
    want = gammaln(x + 1.0).sum(axis=1)
    rtol = 1e-6 if dtype == "float32" else 1e-13
    assert_allclose(got, want, rtol=rtol, atol=rtol)
    coef = np.asarray(jax.jit(Multinomial.log_normalizer)(jnp.asarray(x, dtype)))
    assert_allclose(coef, gammaln(x.sum(axis=1) + 1.0) - want, rtol=rtol, atol=rtol * 10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_small_count_markers(request, dtype):
    """``small_count_log_factorials``: a row of integer counts below 256 sums SciPy's
    ``log x!``; every other kind of entry (a fraction however small, a negative, 256 and
    above, NaN, infinities, float32's largest integers) marks its row, and ``all_small``
    says whether a chunk has a marked row."""
    from bayesnb.fast._steps import NOT_SMALL, all_small, small_count_log_factorials

    if dtype == "float64":
        request.getfixturevalue("x64")
    rng = np.random.default_rng(3)
    bad = [0.5, 1e-20, 255.5, -1.0, -0.5, -1e-30, 256.0, 300.0, 2.0 ** 24, np.nan, np.inf,
           -np.inf]
    x = rng.integers(0, 256, (len(bad) + 3, 50)).astype(float)
    x[-1, :] = 255.0
    x[-2, :] = 0.0
    for row, value in enumerate(bad):
        x[row, row] = value
    f = jax.jit(small_count_log_factorials)
    got = np.asarray(f(jnp.asarray(x, dtype)), dtype=np.float64)
    assert np.all(got[:len(bad)] >= NOT_SMALL), got
    rtol = 1e-6 if dtype == "float32" else 1e-14
    assert_allclose(got[len(bad):], gammaln(x[len(bad):] + 1.0).sum(axis=1), rtol=rtol)
    assert not bool(all_small(f(jnp.asarray(x, dtype))))
    assert bool(all_small(f(jnp.asarray(x[len(bad):], dtype))))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("family, value, problem", [
    ("Poisson", 2.5, "integer counts"),
    ("Poisson", 1e-20, "integer counts"),
    ("Poisson", -1.0, "non-negative"),
    ("Poisson", np.inf, "infinite value"),
    ("Poisson", -np.inf, "infinite value"),
    ("Multinomial", -0.5, "non-negative"),
    ("Multinomial", -1e-30, "non-negative"),
    ("Multinomial", np.inf, "infinite value"),
    ("Multinomial", -np.inf, "infinite value"),
    ("Multinomial", 1e300, "too large"),
])
def test_statistics_kernel_checks_refuse_a_bad_value_among_small_counts(
        request, monkeypatch, dtype, family, value, problem):
    """One bad value in the third of four 64-row chunks of small counts: the chunk's
    log-factorial markers send the value checks to their bounds, and the fit refuses the
    value naming its column (the other chunks' checks read only the markers)."""
    if dtype == "float64":
        request.getfixturevalue("x64")
    monkeypatch.setattr(_kernels, "CHUNK_BYTES", 1)  # 64-row chunks
    rng = np.random.default_rng(13)
    X = rng.poisson(1.0, (256, 5)).astype(float)
    X[150, 3] = value
    y = np.arange(256) % 2
    with pytest.raises(ValueError, match=rf"column 3: .*{problem}"):
        bnb.NaiveBayes(getattr(bnb, family)()).fit(X, y)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_coefficient_over_chunks_taking_every_branch(request, monkeypatch, dtype):
    """One Multinomial fit over 64-row chunks whose largest counts send them down different
    paths (the table up to 200, gammaln for 300 and for a fraction, and a missing value):
    the fitted log multinomial coefficient is SciPy's sum over the rows."""
    if dtype == "float64":
        request.getfixturevalue("x64")
    monkeypatch.setattr(_kernels, "CHUNK_BYTES", 1)  # 64-row chunks
    rng = np.random.default_rng(11)
    X = rng.integers(0, 3, (64 * 7, 6)).astype(float)
    for chunk, value in enumerate([4.0, 8.0, 16.0, 200.0, 300.0, 2.5]):
        X[64 * chunk + 5, chunk % 6] = value
    X[64 * 6 + 9, 2] = np.nan  # the last chunk: a missing count (counted as 0)
    y = np.arange(len(X)) % 3
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0)).fit(X, y)
    (block,) = clf.fitted_.blocks
    x0 = np.nan_to_num(X)
    want = np.sum(gammaln(x0.sum(axis=1) + 1.0) - gammaln(x0 + 1.0).sum(axis=1))
    rtol = 1e-6 if dtype == "float32" else 1e-13
    assert_allclose(float(block.stats.log_coef), want, rtol=rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("weights", [False, True])
def test_poisson_statistics_over_complete_and_missing_chunks(request, monkeypatch, dtype,
                                                             weights):
    """A Poisson fit over 64-row chunks, some complete (counted by the class weights) and
    some with missing values (counted by their observed flags), with large counts and
    fractional weights: per class the observed counts, the totals and the weighted sum of
    log x! against NumPy and SciPy sums in float64."""
    if dtype == "float64":
        request.getfixturevalue("x64")
    monkeypatch.setattr(_kernels, "CHUNK_BYTES", 1)  # 64-row chunks
    rng = np.random.default_rng(12)
    X = rng.poisson(2.0, (64 * 5, 4)).astype(float)
    X[64 * 1 + 3, 2] = 40.0  # a chunk past the selects (table lookup)
    X[[129, 135, 135], [0, 1, 3]] = np.nan  # chunks 2 and 4 have missing values, 0, 1, 3 none
    X[64 * 4 + 60, 1] = np.nan
    y = np.arange(len(X)) % 3
    w = rng.uniform(0.5, 2.0, len(X)) if weights else np.ones(len(X))
    clf = bnb.NaiveBayes(bnb.Poisson()).fit(X, y, sample_weight=w if weights else None)
    stats = clf.fitted_.blocks[0].stats
    observed, x0 = ~np.isnan(X), np.nan_to_num(X)
    rtol = 1e-6 if dtype == "float32" else 1e-12
    for k in range(3):
        rows = y == k
        assert_allclose(stats.count[k], (w[rows, None] * observed[rows]).sum(axis=0), rtol=rtol)
        assert_allclose(stats.total[k], (w[rows, None] * x0[rows]).sum(axis=0), rtol=rtol)
    assert_allclose(float(stats.log_factorial), np.sum(w[:, None] * gammaln(x0 + 1.0)),
                    rtol=rtol)


@pytest.mark.parametrize("container", ["array", "frame"])
@pytest.mark.parametrize("family", ["gaussian", "poisson", "multinomial"])
def test_float64_range_refused_in_the_kernel_checks(x64, container, family):
    """Values whose squares overflow float64 are refused naming the column, whichever
    family reads them and whether they arrive at fit or at predict."""
    make = {"gaussian": bnb.Gaussian, "poisson": bnb.Poisson,
            "multinomial": bnb.Multinomial}[family]
    X = np.array([[1.0, 2.0], [3.0, 4.0], [2.0, 1.0], [5.0, 2.0]])
    y = [0, 0, 1, 1]
    big = X.copy()
    big[2, 1] = 1e200

    def wrap(a):
        return pd.DataFrame(a, columns=["a", "b"]) if container == "frame" else a

    clf = bnb.NaiveBayes(make())
    with pytest.raises(ValueError, match=r"column .*(b|1).*too large.*overflows float64"):
        clf.fit(wrap(big), y)
    clf.fit(wrap(X), y)
    with pytest.raises(ValueError, match=r"column .*(b|1).*too large.*overflows float64"):
        clf.predict_proba(wrap(big))
