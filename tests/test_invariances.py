"""Invariances every family and method must respect (property-based, with hypothesis).

(a) the order of the training rows does not matter; (b) renaming the labels permutes
``classes_`` and the probability columns and nothing else; (c) an integer sample weight equals
duplicated rows; (d) ``partial_fit`` over any chunking equals one ``fit``; (e) a feature column
that is missing throughout changes nothing; (f) wherever values are missing in a chunked fit,
the count families' statistics are the sums over the observed values. Plus: a second
prediction batch of the same width whose row count falls in the same bucket does not re-trace
the scoring kernel.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import bayesnb as bnb
from bayesnb.fast import _kernels

# hypothesis imports its patch writer (libcst) only when a test fails; under the project's
# warnings-as-errors a DeprecationWarning raised by that import turns the failure report into
# an INTERNALERROR that stops the session, so import it once here, quietly
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        import hypothesis.extra._patching  # noqa: F401
    except ImportError:  # pragma: no cover - libcst not installed
        pass

N, K = 24, 3
Y = np.arange(N) % K  # eight rows per class
CAT_LEVELS = [("a", "b", "c"), ("p", "q")]
EXTRA_LEVELS = ("x", "y")

SETTINGS = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
seeds = st.integers(0, 2**32 - 1)
RTOL = 1e-10


def make_family(name, extra_at=None):
    """The family under test with non-default priors; ``extra_at`` is where an extra column is
    inserted (Categorical needs its categories declared)."""
    if name == "bernoulli":
        return bnb.Bernoulli(alpha=0.7, beta=1.3)
    if name == "categorical":
        cats = list(CAT_LEVELS)
        if extra_at is not None:
            cats.insert(extra_at, EXTRA_LEVELS)
        return bnb.Categorical(alpha=0.6, categories=cats)
    if name == "gaussian":
        return bnb.Gaussian(loc=0.1, kappa=0.5, shape=1.5, rate=0.4)
    if name == "gaussian_pooled":
        return bnb.Gaussian(loc=0.1, kappa=0.5, shape=1.5, rate=0.4, pooled=True)
    if name == "poisson":
        return bnb.Poisson(shape=1.5, rate=0.4)
    if name == "multinomial":
        return bnb.Multinomial(alpha=0.8)
    raise AssertionError(name)


def make_data(name, seed, n=N, y=Y):
    rng = np.random.default_rng(seed)
    if name == "bernoulli":
        return (rng.random((n, 3)) < np.array([[0.2, 0.5, 0.8], [0.7, 0.3, 0.5],
                                               [0.5, 0.5, 0.1]])[y]).astype(float)
    if name == "categorical":
        X = np.empty((n, 2), dtype=object)
        for j, lv in enumerate(CAT_LEVELS):
            X[:, j] = rng.choice(np.array(lv, dtype=object), n)
        return X
    if name.startswith("gaussian"):
        return rng.normal(size=(n, 3)) + np.array([[0, 1, 2], [1, 0, -1], [-1, 2, 0.5]])[y]
    if name == "poisson":
        return rng.poisson(np.array([[1, 3, 5], [4, 1, 2], [2, 2, 0.5]])[y]).astype(float)
    if name == "multinomial":
        return rng.poisson(np.array([[1, 3, 5, 2], [4, 1, 2, 2], [2, 2, 1, 3]])[y]).astype(float)
    raise AssertionError(name)


FAMILIES = ["bernoulli", "categorical", "gaussian", "gaussian_pooled", "poisson", "multinomial"]
METHODS = ["ml", "mean", "bayes"]
CASES = [(f, m) for f in FAMILIES for m in METHODS]


def test_rows(name, method, X, seed):
    """Rows to score: the training rows under ML (every row then has a class of positive
    likelihood), else also fresh rows."""
    if method == "ml":
        return X
    return np.concatenate([X[:5], make_data(name, seed + 1, n=6, y=Y[:6])])


test_rows.__test__ = False  # a helper, not a test


def fit(name, method, X, y=Y, extra_at=None, sample_weight=None):
    return bnb.NaiveBayes(features=make_family(name, extra_at), method=method).fit(
        X, y, sample_weight=sample_weight)


def assert_same_predictions(a, b, Xa, Xb=None, rtol=RTOL, evidence=True):
    Xb = Xa if Xb is None else Xb
    pa, pb = a.predict_proba(Xa), b.predict_proba(Xb)
    assert_allclose(pa, pb, rtol=rtol, atol=1e-13)
    top = np.sort(pa, axis=1)
    clear = top[:, -1] - top[:, -2] > 1e-8  # ties may break either way
    assert np.array_equal(a.predict(Xa)[clear], b.predict(Xb)[clear])
    if evidence:
        assert_allclose(a.log_evidence(), b.log_evidence(), rtol=rtol)


# ---------------------------------------------------------------------------- (a) row order
@pytest.mark.parametrize(("name", "method"), CASES)
@SETTINGS
@given(seed=seeds, perm=st.permutations(range(N)))
def test_row_order_does_not_matter(x64, name, method, seed, perm):
    X = make_data(name, seed)
    perm = np.asarray(perm)
    a = fit(name, method, X)
    b = fit(name, method, X[perm], Y[perm])
    assert_same_predictions(a, b, test_rows(name, method, X, seed))
    assert_allclose(a.class_count_, b.class_count_)


# ---------------------------------------------------------------------------- (b) labels
NAMES = ["ant", "bee", "cat"]


@pytest.mark.parametrize(("name", "method"), CASES)
@SETTINGS
@given(seed=seeds, names=st.permutations(NAMES), as_strings=st.booleans())
def test_renaming_labels_permutes_classes(x64, name, method, seed, names, as_strings):
    X = make_data(name, seed)
    Xt = test_rows(name, method, X, seed)
    # ints -> strings, or ints -> other ints (10, 20, 30 in a drawn order)
    labels = np.array(names, dtype=object) if as_strings else \
        np.array([10 * (NAMES.index(v) + 1) for v in names])
    a = fit(name, method, X)
    b = fit(name, method, X, labels[Y])
    assert list(b.classes_) == sorted(labels.tolist())
    column = [list(b.classes_).index(labels[k]) for k in range(K)]
    pa, pb = a.predict_proba(Xt), b.predict_proba(Xt)
    assert_allclose(pb[:, column], pa, rtol=RTOL, atol=1e-13)
    assert_allclose(b.predict_joint_log_proba(Xt)[:, column], a.predict_joint_log_proba(Xt),
                    rtol=RTOL)
    assert_allclose(b.class_count_[column], a.class_count_)
    top = np.sort(pa, axis=1)
    clear = top[:, -1] - top[:, -2] > 1e-8
    assert np.array_equal(b.predict(Xt)[clear], labels[a.predict(Xt)][clear])
    assert_allclose(a.log_evidence(), b.log_evidence(), rtol=RTOL)


# ---------------------------------------------------------------------------- (c) weights
W0 = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3])
assert len(W0) == N  # a fixed multiset, so the duplicated data always has the same length
# 32 duplicated rows: the row bucket of the N = 24 fits (one compiled statistics kernel)
assert W0.sum() == 32


@pytest.mark.parametrize(("name", "method"), CASES)
@SETTINGS
@given(seed=seeds, order=st.permutations(range(N)))
def test_integer_weights_equal_duplicated_rows(x64, name, method, seed, order):
    X = make_data(name, seed)
    w = W0[np.asarray(order)]
    a = fit(name, method, X, sample_weight=w)
    b = fit(name, method, np.repeat(X, w, axis=0), np.repeat(Y, w))
    assert_allclose(a.class_count_, b.class_count_)
    # under ML only the rows the fit saw are sure to have a class of positive likelihood (a
    # zero-weight row's values may be unseen: then every class is impossible)
    rows = test_rows(name, method, X[w > 0] if method == "ml" else X, seed)
    assert_same_predictions(a, b, rows)
    # float weights that are integers in disguise, too
    c = fit(name, method, X, sample_weight=w.astype(float))
    assert_same_predictions(a, c, rows)


def test_a_zero_weight_row_is_no_row(x64):
    """Weight 0 is zero copies: a level only such a row holds is no level, a value only it
    holds decides no family, and an update may hold a value the model has never seen there;
    the row's label still names a class, as in scikit-learn (its count 0)."""
    X = pd.DataFrame({"a": ["x", "x", "x", "y", "y", "z"], "n": [0, 1, 2, 0, 3, 2.5]})
    y = np.array([0, 0, 0, 1, 1, 2])
    w = np.array([1, 1, 1, 1, 1, 0])
    weighted = bnb.NaiveBayes(infer_counts=True).fit(X, y, sample_weight=w)
    removed = bnb.NaiveBayes(infer_counts=True).partial_fit(X[:5], y[:5], classes=[0, 1, 2])
    assert [type(b.family).__name__ for b in weighted.blocks_] == ["Categorical", "Poisson"]
    assert list(weighted.conditional_tables()["a"].columns) == ["x", "y"]
    assert_allclose(weighted.class_count_, [3, 2, 0])
    rows = X[:5]
    assert_allclose(weighted.predict_proba(rows), removed.predict_proba(rows), rtol=1e-13)
    assert_allclose(weighted.log_evidence(), removed.log_evidence(), rtol=1e-13)
    weighted.partial_fit(pd.DataFrame({"a": ["x", "q"], "n": [1, -4]}), [0, 1],
                         sample_weight=[1, 0])  # an unseen level, a negative count: weight 0
    removed.partial_fit(pd.DataFrame({"a": ["x"], "n": [1]}), [0])
    assert_allclose(weighted.predict_proba(rows), removed.predict_proba(rows), rtol=1e-13)


# ---------------------------------------------------------------------------- (d) partial_fit
@pytest.mark.parametrize(("name", "method"), CASES)
@SETTINGS
@given(seed=seeds, perm=st.permutations(range(N)),
       cuts=st.sets(st.sampled_from(range(3, N, 3)), max_size=5))
def test_partial_fit_equals_fit(x64, name, method, seed, perm, cuts):
    # cuts on a grid of 3 rows keep the number of distinct chunk shapes (each compiles the
    # statistics kernel once) small; the one-row chunk is covered by the moment-merge test
    X = make_data(name, seed)
    perm = np.asarray(perm)
    Xp, yp = X[perm], Y[perm]
    if method == "ml":
        # under ML an estimate is undefined until a class has data (two values for a Gaussian
        # variance), and partial_fit checks that after every chunk; see the dedicated test
        # below for a chunk that misses a class
        first = max(int(np.nonzero(yp == k)[0][1]) for k in range(K)) + 1
        cuts = {c for c in cuts if c >= first}
    bounds = [0, *sorted(cuts), N]
    inc = bnb.NaiveBayes(features=make_family(name), method=method)
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        inc.partial_fit(Xp[lo:hi], yp[lo:hi], classes=np.arange(K))
    batch = fit(name, method, X)
    assert_allclose(inc.class_count_, batch.class_count_)
    assert_same_predictions(inc, batch, test_rows(name, method, X, seed), rtol=1e-9)


@pytest.mark.parametrize("name", FAMILIES)
def test_partial_fit_ml_chunk_without_a_class(x64, name):
    """``classes=`` is documented for chunks that miss a class; under ML the estimate of that
    class is undefined only until its data arrive, so the stream must still be accepted and
    end equal to the batch fit."""
    X = make_data(name, 0)
    order = np.argsort(Y == 2, kind="stable")  # classes 0 and 1 first, then class 2
    Xo, yo = X[order], Y[order]
    inc = bnb.NaiveBayes(features=make_family(name), method="ml")
    inc.partial_fit(Xo[:16], yo[:16], classes=np.arange(K))
    inc.partial_fit(Xo[16:], yo[16:])
    assert_same_predictions(inc, fit(name, "ml", X), X, rtol=1e-9)


def test_ml_pooled_gaussian_class_without_data_is_undefined(x64):
    """With no row of a class the ML mean of that class is 0/0, whether or not the variance
    is pooled: it must be reported as undefined, not silently taken as 0."""
    X = make_data("gaussian", 0)
    seen = Y != 2
    for pooled in (False, True):
        clf = bnb.NaiveBayes(features=bnb.Gaussian(pooled=pooled), method="ml")
        with pytest.raises(ValueError, match="class"):
            clf.partial_fit(X[seen], Y[seen], classes=np.arange(K))
            clf.predict_proba(X)


def test_partial_fit_gaussian_moment_merge_large_offset(x64):
    """The pairwise (Chan et al.) merge stays exact for data far from zero."""
    rng = np.random.default_rng(0)
    X = 1e6 + rng.normal(size=(N, 2))
    inc = bnb.NaiveBayes(features=bnb.Gaussian(loc=1e6, rate=1.0), method="bayes")
    for lo, hi in [(0, 5), (5, 6), (6, 17), (17, N)]:
        inc.partial_fit(X[lo:hi], Y[lo:hi], classes=np.arange(K))
    batch = bnb.NaiveBayes(features=bnb.Gaussian(loc=1e6, rate=1.0), method="bayes").fit(X, Y)
    assert_allclose(inc.blocks_[0].stats.m2, batch.blocks_[0].stats.m2, rtol=1e-9)
    assert_same_predictions(inc, batch, X, rtol=1e-9)


# ---------------------------------------------------------------------------- (e) missing column
E_CASES = [(f, m) for f, m in CASES if m != "ml" or f == "multinomial"]


@pytest.mark.parametrize(("name", "method"), E_CASES)
@SETTINGS
@given(seed=seeds, data=st.data())
def test_all_missing_column_changes_nothing(x64, name, method, seed, data):
    X = make_data(name, seed)
    at = data.draw(st.integers(0, X.shape[1]), label="position")
    blank = np.full((N, 1), None if name == "categorical" else np.nan, dtype=X.dtype)
    Xe = np.concatenate([X[:, :at], blank, X[:, at:]], axis=1)
    Xt = test_rows(name, method, X, seed)
    Xte = np.concatenate([Xt[:, :at], np.full((len(Xt), 1), np.nan), Xt[:, at:]], axis=1)
    if name == "categorical":
        Xte = Xte.astype(object)
    a = fit(name, method, X)
    b = fit(name, method, Xe, extra_at=at)
    # the evidence of a multinomial block counts the column as zero words (documented)
    assert_same_predictions(a, b, Xt, Xte, evidence=name != "multinomial")


# ---------------------------------------------------------------------------- no re-tracing
# every family in float64; the default float32 mode for two of them (one per kernel kind)
RETRACE_CASES = [(f, m, True) for f in FAMILIES for m in ("mean", "bayes")] + [
    ("gaussian", "mean", False), ("categorical", "bayes", False)]


@pytest.mark.parametrize(("name", "method", "x64_mode"), RETRACE_CASES)
def test_no_retrace_within_a_bucket(request, monkeypatch, kernel_fits, name, method, x64_mode):
    if x64_mode:
        request.getfixturevalue("x64")
    from bayesnb.fast import _host

    monkeypatch.setattr(_host, "scored_on_host", lambda *args: False)  # the score kernels
    X = make_data(name, 0)
    clf = fit(name, method, X)
    Xt = make_data(name, 1, n=30, y=np.arange(30) % K)
    # bucket 64: each output (probabilities, log-probabilities, joint) compiles at most once
    clf.predict_proba(Xt[:9])
    clf.predict(Xt[:9])
    clf.predict_joint_log_proba(Xt[:9])
    before = _kernels.TRACES["scores"]
    for rows in (13, 16, 10):  # same width, same bucket
        clf.predict_proba(Xt[:rows])
        clf.predict(Xt[:rows])
        clf.predict_joint_log_proba(Xt[:rows])
    assert _kernels.TRACES["scores"] == before
    assert _kernels.bucket(1) == _kernels.bucket(9) == _kernels.bucket(16) == 64
    # a refit on new data of the same shapes reuses the compiled kernel as well
    clf2 = fit(name, method, make_data(name, 2))
    clf2.predict_proba(Xt[:12])
    assert _kernels.TRACES["scores"] == before


@pytest.mark.parametrize("name", FAMILIES)
def test_no_retrace_of_the_fit_kernels(x64, kernel_fits, name):
    """Fitting streams rows through one compiled statistics kernel per chunk shape: another
    fit or update with a batch of the same width and bucket does not trace again, and a batch
    of several chunks reuses the same two kernels (first chunk, then accumulate)."""
    X = make_data(name, 0)
    fit(name, "mean", X[:13], y=Y[:13]).partial_fit(X[:13], Y[:13])
    before = dict(_kernels.TRACES)
    fit(name, "mean", X[:10], y=Y[:10]).partial_fit(X[:16], Y[:16])  # bucket 16 again
    assert _kernels.TRACES == before
    big, labels = np.concatenate([X] * 40)[:900], np.resize(Y, 900)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_kernels, "CHUNK_BYTES", 256 * 8)  # 256-row chunks: 4 per batch
        many = fit(name, "mean", big, y=labels)
        traced = dict(_kernels.TRACES)
        many.partial_fit(big[::-1], labels[::-1])
        assert _kernels.TRACES == traced
    one = fit(name, "mean", np.concatenate([big, big]), y=np.concatenate([labels, labels]))
    assert_same_predictions(many, one, X, rtol=1e-9)


# ------------------------------------------------- (f) missing values anywhere in a chunked fit
CHUNKED_ROWS = 64 * 3  # three 64-row chunks with CHUNK_BYTES = 1


@pytest.mark.parametrize("name", ["multinomial", "poisson", "bernoulli"])
@SETTINGS
@given(seed=seeds, holes=st.sets(st.tuples(st.integers(0, CHUNKED_ROWS - 1),
                                            st.integers(0, 4)), max_size=8),
       weighted=st.booleans())
def test_count_statistics_wherever_values_are_missing(x64, name, seed, holes, weighted):
    """Wherever the missing values fall (no chunk, one, several, several in one row), a fit
    over 64-row chunks gives per class the float64 sums NumPy and SciPy compute from the data.
    A complete chunk's statistics are computed outside the missing-value branch, so one with a
    NaN must be redone with it left out and a complete one must be kept as it is."""
    from scipy.special import gammaln

    rng = np.random.default_rng(seed)
    X = rng.poisson(1.5, (CHUNKED_ROWS, 5)).astype(float)
    X[rng.integers(CHUNKED_ROWS), rng.integers(5)] = rng.integers(9, 40)  # past the steps
    if name == "bernoulli":
        X = (X > 1).astype(float)
    for row, col in holes:
        X[row, col] = np.nan
    y = np.arange(CHUNKED_ROWS) % K
    w = rng.uniform(0.5, 2.0, CHUNKED_ROWS) if weighted else np.ones(CHUNKED_ROWS)
    family = {"multinomial": bnb.Multinomial, "poisson": bnb.Poisson,
              "bernoulli": bnb.Bernoulli}[name]()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_kernels, "CHUNK_BYTES", 1)  # 64-row chunks
        clf = bnb.NaiveBayes(family).fit(X, y, sample_weight=w if weighted else None)
    stats = clf.fitted_.blocks[0].stats
    observed, x0 = ~np.isnan(X), np.nan_to_num(X)
    per_class = {k: (w[y == k, None] * x0[y == k]).sum(axis=0) for k in range(K)}
    seen = {k: (w[y == k, None] * observed[y == k]).sum(axis=0) for k in range(K)}
    for k in range(K):
        if name == "multinomial":
            assert_allclose(stats.counts[k], per_class[k], rtol=1e-12)
        else:
            assert_allclose(stats.count[k], seen[k], rtol=1e-12)
            assert_allclose(stats.ones[k] if name == "bernoulli" else stats.total[k],
                            per_class[k], rtol=1e-12)
    if name == "multinomial":
        coef = gammaln(x0.sum(axis=1) + 1.0) - gammaln(x0 + 1.0).sum(axis=1)
        assert_allclose(float(stats.log_coef), np.sum(w * coef), rtol=1e-12)
    if name == "poisson":
        assert_allclose(float(stats.log_factorial), np.sum(w[:, None] * gammaln(x0 + 1.0)),
                        rtol=1e-12)
