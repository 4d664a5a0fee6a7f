"""Issue 41, section 1: Gaussian and Categorical columns of a SciPy sparse matrix.

A sparse matrix is the dense array ``X.toarray()``: an implicit zero is the value 0 (not a
missing value), a stored NaN a missing value. Gaussian and Categorical have no sparse products;
they read the block densified a chunk of rows at a time (``_data.SparseRows``), so the fit and
every prediction equal those of ``X.toarray()``. ``features=None`` infers a sparse matrix's
count columns (non-negative integers) as Poisson and its other columns as Gaussian. References:
scikit-learn's GaussianNB and CategoricalNB on the dense array."""

import jax
import numpy as np
import pytest
from scipy import sparse
from sklearn.naive_bayes import CategoricalNB, GaussianNB

import bayesnb as bnb

N = 40


def gaussian_data(seed: int = 0, missing: bool = True):
    """Reals with half the cells exactly 0 (implicit zeros) and, if ``missing``, stored NaNs."""
    rng = np.random.default_rng(seed)
    y = np.arange(N) % 3
    X = rng.normal(1.0 + y[:, None], 1.5, (N, 4))
    X[rng.random((N, 4)) < 0.5] = 0.0
    if missing:
        X[[2, 7], [1, 3]] = np.nan
    return X, y


def category_data(seed: int = 1):
    """Level codes 0..3 (0 implicit in the sparse matrix), one stored NaN (missing)."""
    rng = np.random.default_rng(seed)
    y = np.arange(N) % 2
    X = np.where(rng.random((N, 3)) < 0.4, 0, rng.integers(1, 4, (N, 3))).astype(np.float64)
    X[y == 1, 0] = np.minimum(X[y == 1, 0] + 1, 3)  # the classes differ
    return X, y


def assert_same_fit(a, b, rtol):
    """Equal statistics (every field), plug-in tables and class counts."""
    for sa, sb in zip(a.blocks_, b.blocks_, strict=True):
        assert type(sa.family) is type(sb.family)
        assert sa.schema == sb.schema
        for u, v in zip(jax.tree_util.tree_leaves(sa.stats), jax.tree_util.tree_leaves(sb.stats),
                        strict=True):
            np.testing.assert_allclose(np.asarray(u, float), np.asarray(v, float), rtol=rtol,
                                       atol=rtol)
    np.testing.assert_array_equal(a.class_count_, b.class_count_)
    for col, table in a.conditional_tables().items():
        np.testing.assert_allclose(table.to_numpy(float), b.conditional_tables()[col].to_numpy(
            float), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("kind", ["gaussian", "categorical"])
@pytest.mark.parametrize("precision", ["x64", "float32"])
def test_sparse_equals_dense(kind, precision, request):
    if precision == "x64":
        request.getfixturevalue("x64")
    tol = 1e-12 if precision == "x64" else 2e-5
    X, y = gaussian_data() if kind == "gaussian" else category_data()
    family = bnb.Gaussian if kind == "gaussian" else bnb.Categorical
    for fmt in (sparse.csr_matrix, sparse.csc_matrix):
        Xs = fmt(X)
        assert Xs.nnz < X.size  # implicit zeros are there
        for method in ("ml", "map", "mean", "bayes"):
            kw = {"alpha": 2.0} if kind == "categorical" and method == "map" else {}
            sp = bnb.NaiveBayes(family(**kw), method=method).fit(Xs, y)
            dense = bnb.NaiveBayes(family(**kw), method=method).fit(X, y)
            assert_same_fit(sp, dense, tol)
            np.testing.assert_allclose(sp.predict_proba(Xs), dense.predict_proba(X), rtol=tol,
                                       atol=tol)
            np.testing.assert_allclose(sp.predict_joint_log_proba(Xs[:7]),
                                       dense.predict_joint_log_proba(X[:7]), rtol=tol)
            # a model fitted dense scores sparse rows as their dense array
            np.testing.assert_allclose(dense.predict_proba(Xs), dense.predict_proba(X),
                                       rtol=tol, atol=tol)


def test_implicit_zeros_are_values_and_nan_is_missing(x64):
    """Class 0: values {0, 0, 2} (two implicit zeros, one NaN left out): mean 2/3, ML variance
    8/9; hand computation, not the dense fit."""
    X = sparse.csr_matrix(np.array([[0.0], [2.0], [0.0], [np.nan], [5.0], [7.0]]))
    y = np.array([0, 0, 0, 0, 1, 1])
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml").fit(X, y)
    table = clf.conditional_tables()[0]
    np.testing.assert_allclose(table["mean"], [2 / 3, 6.0], rtol=1e-13)
    np.testing.assert_allclose(table["sd"], [np.sqrt(8 / 9), 1.0], rtol=1e-13)


def test_gaussian_matches_scikit_learn_on_the_dense_array(x64):
    X, y = gaussian_data(seed=3, missing=False)
    Xs = sparse.csr_matrix(X)
    ours = bnb.NaiveBayes(bnb.Gaussian(), method="ml").fit(Xs, y)
    theirs = GaussianNB(var_smoothing=0.0).fit(X, y)  # GaussianNB refuses sparse input
    np.testing.assert_allclose(ours.conditional_tables()[0]["mean"], theirs.theta_[:, 0],
                               rtol=1e-12)
    np.testing.assert_allclose(ours.conditional_tables()[2]["sd"] ** 2, theirs.var_[:, 2],
                               rtol=1e-11)
    test = sparse.csr_matrix(np.array([[0.0, 1.0, 0.0, 3.0], [2.5, 0.0, 0.0, 0.0]]))
    np.testing.assert_allclose(ours.predict_proba(test), theirs.predict_proba(test.toarray()),
                               rtol=1e-10, atol=1e-12)


def test_categorical_matches_scikit_learn_on_the_dense_array(x64):
    X, y = category_data(seed=4)
    Xs = sparse.csr_matrix(X)
    theirs = CategoricalNB(alpha=1.0).fit(X.astype(int), y)
    for method in ("mean", "bayes"):  # Dirichlet(1) posterior mean = CategoricalNB(alpha=1)
        ours = bnb.NaiveBayes(bnb.Categorical(), method=method, class_alpha=0).fit(Xs, y)
        np.testing.assert_allclose(ours.predict_proba(Xs), theirs.predict_proba(X.astype(int)),
                                   rtol=1e-12, atol=1e-14)
        for j in range(3):
            np.testing.assert_allclose(ours.conditional_tables()[j].to_numpy(float),
                                       np.exp(theirs.feature_log_prob_[j]), rtol=1e-12)


def test_inferred_families_of_a_sparse_matrix(x64):
    """features=None: count columns Poisson, other numbers Gaussian, whatever infer_counts."""
    X, y = gaussian_data(seed=5)
    counts = np.random.default_rng(5).poisson(2.0, (N, 2)).astype(np.float64)
    M = np.hstack([counts, X])
    for infer_counts in (False, True):
        clf = bnb.NaiveBayes(infer_counts=infer_counts).fit(sparse.csr_matrix(M), y)
        assert {type(b.family).__name__: b.schema.columns for b in clf.blocks_} == {
            "Poisson": (0, 1), "Gaussian": (2, 3, 4, 5)}
    features = {(0, 1): bnb.Poisson(), (2, 3, 4, 5): bnb.Gaussian()}
    for method in ("ml", "bayes"):
        sp = bnb.NaiveBayes(method=method).fit(sparse.csr_matrix(M), y)
        dense = bnb.NaiveBayes(features, method=method).fit(M, y)
        assert_same_fit(sp, dense, 1e-12)
        np.testing.assert_allclose(sp.predict_proba(sparse.csr_matrix(M)),
                                   dense.predict_proba(M), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(sp.predict_joint_log_proba(sparse.csr_matrix(M)),
                                   dense.predict_joint_log_proba(M), rtol=1e-12)
    assert sp.log_evidence() == pytest.approx(dense.log_evidence(), rel=1e-12)


def test_sparse_partial_fit_and_levels_from_implicit_zeros(x64):
    X, y = category_data(seed=6)
    Xs = sparse.csr_matrix(X)
    whole = bnb.NaiveBayes(bnb.Categorical(categories=[[0.0, 1.0, 2.0, 3.0]] * 3)).fit(Xs, y)
    parts = bnb.NaiveBayes(bnb.Categorical(categories=[[0.0, 1.0, 2.0, 3.0]] * 3))
    parts.partial_fit(Xs[:15], y[:15], classes=[0, 1]).partial_fit(Xs[15:], y[15:])
    assert_same_fit(parts, whole, 1e-12)
    only_zeros = sparse.csr_matrix((3, 1))  # no stored entry: the one level is 0
    clf = bnb.NaiveBayes(bnb.Categorical()).fit(only_zeros, [0, 1, 1])
    assert clf.blocks_[0].schema.levels == ((0.0,),)


def test_out_of_core_sparse_chunks(x64):
    """Sparse chunks with Categorical, Poisson and Gaussian columns fit as the batch does."""
    from bayesnb.outofcore import fit_chunks

    rng = np.random.default_rng(7)
    y = np.arange(N) % 2
    X = np.hstack([rng.poisson(2.0, (N, 1)), category_data(seed=7)[0][:, :1],
                   rng.normal(0.0, 1.0, (N, 1))])
    features = {1: bnb.Categorical()}
    chunks = [(sparse.csr_matrix(X[i:i + 10]), y[i:i + 10]) for i in range(0, N, 10)]
    parts = fit_chunks(bnb.NaiveBayes(features), chunks, progress=False)
    whole = bnb.NaiveBayes(features).fit(sparse.csr_matrix(X), y)
    assert_same_fit(parts, whole, 1e-12)
    whole_counts = np.abs(np.round(X))  # column 2 all counts in the first chunk only:
    X_first = np.vstack([whole_counts[:10], X[10:]])
    chunks = [(sparse.csr_matrix(X_first[i:i + 10]), y[i:i + 10]) for i in range(0, N, 10)]
    with pytest.raises(ValueError, match="column 2 holds a value that is not a non-negative"):
        fit_chunks(bnb.NaiveBayes(features), chunks, progress=False)
