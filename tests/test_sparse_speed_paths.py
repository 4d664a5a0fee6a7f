"""The fast sparse code paths (per-class scatter sums, log-factorial table in blocks, one-product
Bernoulli scores, min/max validation, the NumPy logsumexp) against independent references:
dense NumPy/SciPy arithmetic, scikit-learn and ``scipy.special``.

Matrices here span several of the 65,536-value blocks, so block boundaries are exercised.
"""

import numpy as np
import pytest
from scipy import sparse
from scipy.special import gammaln, logsumexp
from sklearn.naive_bayes import BernoulliNB, MultinomialNB

import bayesnb as bnb
from bayesnb.families._base import Schema
from bayesnb.fast import _sparse, form_of
from bayesnb.scoring import logsumexp_rows as _logsumexp_rows


def text_like(seed=0, n=1500, v=3000, k=4, per_row=80):
    """Zipf-like integer counts (head words repeat, so some counts are large); every class
    present; one empty row and one count beyond the uint16 log-factorial table."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rng.shuffle(y)
    p = 1.0 / np.arange(1, v + 1)
    cols = rng.choice(v, size=(n, per_row), p=p / p.sum())
    rows = np.repeat(np.arange(n), per_row)
    X = sparse.csr_matrix((rng.integers(1, 4, n * per_row).astype(float), (rows, cols.ravel())),
                          shape=(n, v))
    X.sum_duplicates()
    X = X.tolil()
    X[5] = 0  # an empty row
    X[7, 3] = 70_000  # beyond the uint16 table
    X = X.tocsr()
    assert X.nnz > 65_536 or n * per_row < 100_000
    return X, y


def dense_reference_evidence(X, y, alpha, weight):
    """Dirichlet-multinomial evidence with the multinomial coefficients, by dense SciPy."""
    D = X.toarray()
    K = y.max() + 1
    resp = np.eye(K)[y] * weight[:, None]
    counts = resp.T @ D
    a0 = np.full(D.shape[1], alpha)
    a = a0 + counts
    per_class = gammaln(a0.sum()) - gammaln(a.sum(axis=1)) + np.sum(gammaln(a) - gammaln(a0),
                                                                     axis=1)
    coef = gammaln(D.sum(axis=1) + 1) - gammaln(D + 1).sum(axis=1)
    return per_class.sum() + weight @ coef


@pytest.mark.parametrize("weighted", [False, True])
def test_class_totals_from_labels_equal_dense_products(weighted):
    X, y = text_like()
    w = np.random.default_rng(3).uniform(0.5, 3, len(y)) if weighted else np.ones(len(y))
    expected = (np.eye(4)[y] * w[:, None]).T @ X.toarray()
    labels = _sparse.Labels(y.astype(np.int32), w, 4)
    np.testing.assert_allclose(_sparse.class_totals(X, labels), expected, rtol=1e-13)
    np.testing.assert_allclose(_sparse.class_weights(labels), np.bincount(y, weights=w))
    # the (n, K) array form takes the product path and agrees too
    np.testing.assert_allclose(_sparse.class_totals(X, np.eye(4)[y] * w[:, None]), expected,
                               rtol=1e-13)


def test_class_totals_sum_duplicate_entries():
    # a non-canonical CSR (the same column twice in a row) adds both values, as dense would
    X = sparse.csr_matrix((np.array([1.0, 2.0, 5.0]), np.array([1, 1, 0]), np.array([0, 2, 3])),
                          shape=(2, 3))
    totals = _sparse.class_totals(X, _sparse.Labels(np.array([0, 1], np.int32), np.ones(2), 2))
    np.testing.assert_array_equal(totals, [[0, 3, 0], [5, 0, 0]])


@pytest.mark.parametrize("kind", ["integer", "large", "fractional", "late fraction"])
def test_row_totals_match_dense_sums_and_gammaln(kind):
    X, _ = text_like(seed=1)
    data = X.data
    if kind == "large":
        data[::1000] += 100_000  # past the table: gammaln for those blocks
    elif kind == "fractional":
        data *= 0.37
    elif kind == "late fraction":
        data[-1] += 0.5  # one non-integer in the last block only
    D = X.toarray()
    sums, log_fact = _sparse.row_totals(X)
    np.testing.assert_allclose(sums, D.sum(axis=1), rtol=1e-14)
    np.testing.assert_allclose(log_fact, gammaln(D + 1).sum(axis=1), rtol=1e-13, atol=1e-12)
    assert sums[5] == 0 and log_fact[5] == 0  # the empty row


def test_row_totals_of_a_row_longer_than_a_block_and_of_no_values():
    X = sparse.csr_matrix(np.r_[np.zeros((2, 70_000)), np.ones((1, 70_000)) * 3,
                                np.zeros((1, 70_000))])
    sums, log_fact = _sparse.row_totals(X)
    np.testing.assert_allclose(sums, [0, 0, 210_000, 0])
    np.testing.assert_allclose(log_fact, [0, 0, 70_000 * np.log(6), 0], rtol=1e-13)
    empty = sparse.csr_matrix((3, 4))
    assert [t.tolist() for t in _sparse.row_totals(empty)] == [[0, 0, 0], [0, 0, 0]]


def test_log_factorials_of_integers_come_out_as_gammaln():
    values = np.array([0.0, 1.0, 2.0, 3.0, 170.0, 65_535.0])
    np.testing.assert_array_equal(_sparse.log_factorials(values), gammaln(values + 1))
    mixed = np.array([1.0, 2.5, 4.0])
    np.testing.assert_array_equal(_sparse.log_factorials(mixed), gammaln(mixed + 1))


@pytest.mark.parametrize("weighted", [False, True])
def test_multinomial_evidence_from_sparse_equals_dense_reference(weighted, x64):
    X, y = text_like(seed=2)
    w = np.random.default_rng(5).integers(1, 4, len(y)).astype(float) if weighted else None
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=0.7)).fit(X, y, sample_weight=w)
    reference = dense_reference_evidence(X, y, 0.7, np.ones(len(y)) if w is None else w)
    block = clf.log_evidence(per_block=True).iloc[1]
    assert block == pytest.approx(reference, rel=1e-12)


def test_multinomial_and_bernoulli_match_scikit_learn_on_several_blocks(x64):
    X, y = text_like(seed=3)
    ours = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), class_alpha=0).fit(X, y)
    theirs = MultinomialNB(alpha=1.0).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-10)
    np.testing.assert_array_equal(np.asarray(ours.blocks_[0].stats.counts), theirs.feature_count_)
    Xb = (X > 0).astype(float)
    ours = bnb.NaiveBayes(bnb.Bernoulli(alpha=1.0, beta=1.0), class_alpha=0).fit(Xb, y)
    theirs = BernoulliNB(alpha=1.0).fit(Xb, y)
    np.testing.assert_allclose(ours.predict_proba(Xb), theirs.predict_proba(Xb), atol=1e-10)
    np.testing.assert_allclose(ours.predict_log_proba(Xb), theirs.predict_log_proba(Xb),
                               rtol=1e-10, atol=1e-8)


@pytest.mark.parametrize("method", ["ml", "mean"])
def test_bernoulli_explicit_zeros_read_as_zeros(method, x64):
    X, y = text_like(seed=4, n=300, v=50, per_row=8)
    Xb = (X > 0).astype(float)
    stored = Xb.copy()
    stored.data[::3] = 0.0  # explicitly stored zeros: valid 0 values, not missing ones
    dense = stored.toarray()
    a = bnb.NaiveBayes(bnb.Bernoulli(), method=method).fit(dense, y)
    b = bnb.NaiveBayes(bnb.Bernoulli(), method=method).fit(stored, y)
    ja, jb = a.predict_joint_log_proba(dense), b.predict_joint_log_proba(stored)
    np.testing.assert_array_equal(np.isfinite(ja), np.isfinite(jb))
    np.testing.assert_allclose(np.where(np.isfinite(ja), ja, 0), np.where(np.isfinite(jb), jb, 0),
                               rtol=1e-10, atol=1e-9)


def test_bernoulli_scores_with_certain_columns_equal_dense_arithmetic():
    # p = 0 and p = 1 columns: a one where p = 0 or a zero where p = 1 is impossible (-inf)
    p = np.array([[0.0, 0.3, 1.0], [0.5, 1.0, 0.2]])
    with np.errstate(divide="ignore"):
        params = bnb.Bernoulli.params_type(np.log(p), np.log1p(-p))
        D = np.array([[0, 1, 1], [1, 0, 1], [0, 0, 0], [1, 1, 1]], dtype=float)
        expected = np.stack([np.where(D == 1, np.log(p[k]), np.log1p(-p[k])).sum(axis=1)
                             for k in range(2)], axis=1)
    got = form_of(bnb.Bernoulli).sparse_log_likelihood(params, sparse.csr_matrix(D))
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(expected))
    np.testing.assert_allclose(got[np.isfinite(got)], expected[np.isfinite(expected)],
                               rtol=1e-14)


@pytest.mark.parametrize("family, integer, binary, value, problem", [
    ("Multinomial", False, False, np.nan, "missing values"),
    ("Multinomial", False, False, np.inf, "infinite value"),
    ("Multinomial", False, False, -2.0, "non-negative"),
    ("Poisson", True, False, 2.5, "integer counts"),
    ("Bernoulli", False, True, 0.5, r"values in \{0, 1\}"),
    ("Bernoulli", False, True, 2.0, r"values in \{0, 1\}"),
])
def test_validation_names_the_column_of_a_late_bad_value(family, integer, binary, value,
                                                         problem):
    X, _ = text_like(seed=5)
    X.data[:] = 1.0
    X.data[-10] = value  # in the last block
    col = int(X.indices[-10])
    schema = Schema(tuple(f"w{j}" for j in range(X.shape[1])))
    with pytest.raises(ValueError, match=rf"column 'w{col}': .*{problem}"):
        _sparse.check_sparse(X, schema, family, integer=integer, binary=binary)


def test_validation_passes_float64_csr_through_and_converts_other_input():
    X, _ = text_like(seed=6, n=50, v=20, per_row=5)
    schema = Schema(tuple(range(20)))
    assert np.shares_memory(_sparse.check_sparse(X, schema, "Multinomial").data, X.data)
    ints = X.astype(np.int64).tocoo()
    out = _sparse.check_sparse(ints, schema, "Multinomial")
    assert out.format == "csr" and out.dtype == np.float64
    np.testing.assert_array_equal(out.toarray(), X.toarray())


def test_logsumexp_rows_equals_scipy():
    rng = np.random.default_rng(7)
    S = rng.normal(size=(500, 6)) * 300 - 2000
    S[3] = -np.inf  # every class impossible
    S[4, :3] = -np.inf
    S[5, 1] = np.nan
    S[6, 2] = np.inf
    with np.errstate(invalid="ignore"):
        expected = logsumexp(S, axis=1, keepdims=True)
    got = _logsumexp_rows(S)
    assert got.shape == (500, 1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(expected)],
                                  expected[~finite & ~np.isnan(expected)])
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-15)
    assert _logsumexp_rows(np.zeros((0, 3))).shape == (0, 1)


@pytest.mark.parametrize("output", ["proba", "log_proba"])
@pytest.mark.parametrize("rows", [None, 64], ids=["one chunk", "chunks of 64 rows"])
def test_normalised_equals_scipy(output, rows, monkeypatch):
    """``scoring.normalised`` (row chunk by row chunk, each transposed) against SciPy's
    softmax, log_softmax and logsumexp, with impossible classes, a row of them only, NaN, +inf
    and subnormal probabilities, under the default float32 policy."""
    from scipy.special import log_softmax, softmax

    from bayesnb import scoring

    if rows is not None:
        monkeypatch.setattr(scoring, "NORMALISE_ROWS", rows)  # 500 rows: 8 chunks, one short
    rng = np.random.default_rng(8)
    S = rng.normal(size=(500, 6)) * 300 - 2000
    S[3] = -np.inf
    S[4, :3] = -np.inf
    S[5, 1] = np.nan
    S[6, 2] = np.inf
    S[7] = [0.0, -30.0, -700.0, -745.0, 1.0, -1e-3]  # tiny probabilities, still normal
    with np.errstate(invalid="ignore", divide="ignore"):
        want = (softmax if output == "proba" else log_softmax)(S, axis=1)
        want_norm = logsumexp(S, axis=1)
    got, norm = scoring.normalised(S.copy(), output)
    # +inf: the other classes get 0 (log: -inf), its own NaN, where SciPy makes the row NaN
    assert np.isnan(got[6, 2]) and np.all(got[6, [0, 1, 3, 4, 5]] == (
        0.0 if output == "proba" else -np.inf))
    want[6], got[6] = 0.0, 0.0
    for g, w in ((got, want), (norm, want_norm)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        finite = np.isfinite(w)
        np.testing.assert_array_equal(g[~finite & ~np.isnan(w)], w[~finite & ~np.isnan(w)])
        np.testing.assert_allclose(g[finite], w[finite], rtol=1e-13, atol=0)
    assert got.dtype == np.float64 and got.shape == S.shape


@pytest.mark.parametrize("family", [bnb.Multinomial, bnb.Bernoulli])
def test_prepared_tables_follow_refits_and_are_released(family, x64):
    # the product operands are cached per fitted JAX table: a refit must not reuse stale ones
    X, y = text_like(seed=8, n=400, v=300, per_row=20)
    if family is bnb.Bernoulli:
        X = (X > 0).astype(float)
    clf = bnb.NaiveBayes(family())
    for seed in range(3):
        rows = np.random.default_rng(seed).permutation(len(y))[:250]
        clf.fit(X[rows], y[rows])
        clf.predict_proba(X[:5])  # fills the cache for this fit's tables
        fresh = bnb.NaiveBayes(family()).fit(X[rows].toarray(), y[rows])
        np.testing.assert_allclose(clf.predict_proba(X), fresh.predict_proba(X.toarray()),
                                   rtol=1e-9, atol=1e-12)
    keys = set(_sparse._prepared)
    tables = clf._scorer().tables[0]
    key = tuple(id(t) for t in tables) if family is bnb.Bernoulli else (id(tables.log_prob),)
    assert key in keys
    del clf, tables
    import gc

    gc.collect()
    assert key not in _sparse._prepared
