"""scipy.sparse input equals dense input; a missing feature equals the model without it."""

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer
from sklearn.naive_bayes import MultinomialNB
from sklearn.pipeline import make_pipeline

import bayesnb as bnb

SPARSE_FAMILIES = {"multinomial": lambda: bnb.Multinomial(alpha=1.5),
                   "poisson": lambda: bnb.Poisson(shape=2.0, rate=0.5),
                   "bernoulli": lambda: bnb.Bernoulli(alpha=1.5, beta=2.0)}


def counts(seed=0, n=200, v=60, k=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = rng.poisson(0.2 + 1.5 * (np.arange(v) % k == y[:, None]), (n, v)).astype(float)
    return X, y


@pytest.mark.parametrize("name", sorted(SPARSE_FAMILIES))
@pytest.mark.parametrize("method", ["ml", "map", "mean", "bayes"])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_equals_dense(name, method, fmt, x64):
    X, y = counts()
    if name == "bernoulli":
        X = (X > 0).astype(float)
    Xs = sparse.csr_matrix(X).asformat(fmt)
    w = np.random.default_rng(1).integers(1, 4, len(y)).astype(float)
    dense = bnb.NaiveBayes(SPARSE_FAMILIES[name](), method=method).fit(X, y, sample_weight=w)
    sp = bnb.NaiveBayes(SPARSE_FAMILIES[name](), method=method).fit(Xs, y, sample_weight=w)
    X_new, _ = counts(seed=2, n=50)
    if name == "bernoulli":
        X_new = (X_new > 0).astype(float)
    a = dense.predict_joint_log_proba(X_new)
    b = sp.predict_joint_log_proba(sparse.csr_matrix(X_new))
    np.testing.assert_array_equal(np.isfinite(a), np.isfinite(b))
    np.testing.assert_allclose(np.where(np.isfinite(a), a, 0), np.where(np.isfinite(b), b, 0),
                               rtol=1e-10, atol=1e-9)
    if method != "ml" or name == "multinomial":
        np.testing.assert_allclose(sp.predict_proba(sparse.csr_matrix(X_new)),
                                   dense.predict_proba(X_new), rtol=1e-9, atol=1e-12)
    assert sp.log_evidence() == pytest.approx(dense.log_evidence(), rel=1e-12)


def test_sparse_partial_fit_and_refusals():
    X, y = counts()
    Xs = sparse.csr_matrix(X)
    clf = bnb.NaiveBayes(bnb.Multinomial())
    clf.partial_fit(Xs[:100], y[:100], classes=[0, 1, 2]).partial_fit(Xs[100:], y[100:])
    whole = bnb.NaiveBayes(bnb.Multinomial()).fit(Xs, y)
    np.testing.assert_allclose(clf.predict_proba(Xs), whole.predict_proba(Xs), rtol=1e-5)
    # features=None infers a sparse matrix of counts as counts (issue 41), not Gaussian
    assert {type(b.family).__name__ for b in bnb.NaiveBayes().fit(Xs, y).blocks_} == {"Poisson"}
    bad = Xs.copy()
    bad.data[3] = -1.0
    with pytest.raises(ValueError, match=r"column \d+: Multinomial needs non-negative"):
        bnb.NaiveBayes(bnb.Multinomial()).fit(bad, y)
    with pytest.raises(ValueError, match="values in"):
        bnb.NaiveBayes(bnb.Bernoulli()).fit(Xs, y)
    nan = Xs.copy()
    nan.data[0] = np.nan
    with pytest.raises(ValueError, match="missing values"):
        bnb.NaiveBayes(bnb.Poisson()).fit(nan, y)


def test_count_vectorizer_pipeline_matches_scikit_learn(x64):
    docs = ["the cat sat on the mat", "dogs chase cats", "the stock market fell",
            "shares and bonds rallied", "a cat and a dog", "markets and stocks",
            "my dog ate the homework", "investors sold shares"]
    labels = ["pets", "pets", "money", "money", "pets", "money", "pets", "money"]
    ours = make_pipeline(CountVectorizer(), bnb.NaiveBayes(bnb.Multinomial(alpha=1.0),
                                                           class_alpha=0)).fit(docs, labels)
    theirs = make_pipeline(CountVectorizer(), MultinomialNB(alpha=1.0)).fit(docs, labels)
    test = ["a dog and a cat", "the market and shares"]
    np.testing.assert_allclose(ours.predict_proba(test), theirs.predict_proba(test), atol=1e-10)
    hashed = make_pipeline(HashingVectorizer(n_features=2**12, alternate_sign=False,
                                             norm=None),
                           bnb.NaiveBayes(bnb.Multinomial(), method="bayes")).fit(docs, labels)
    assert list(hashed.predict(test)) == ["pets", "money"]


# --------------------------------------------------------------------- missing = marginalised
def family_data(name, rng, n=120):
    y = rng.integers(0, 2, n)
    shift = y[:, None]
    if name == "bernoulli":
        return (rng.random((n, 3)) < 0.3 + 0.4 * shift).astype(float), y, bnb.Bernoulli()
    if name == "categorical":
        return rng.choice(["u", "v", "w"], (n, 3)).astype(object), y, bnb.Categorical()
    if name == "gaussian":
        return rng.normal(shift, 1.0, (n, 3)), y, bnb.Gaussian()
    if name == "gaussian_pooled":
        return rng.normal(shift, 1.0, (n, 3)), y, bnb.Gaussian(pooled=True)
    if name == "poisson":
        return rng.poisson(1 + shift, (n, 3)).astype(float), y, bnb.Poisson()
    return rng.poisson(1 + shift * np.array([1, 0, 2]), (n, 3)).astype(float), y, \
        bnb.Multinomial()


@pytest.mark.parametrize("name", ["bernoulli", "categorical", "gaussian", "gaussian_pooled",
                                  "poisson", "multinomial"])
@pytest.mark.parametrize("method", ["ml", "map", "mean", "bayes"])
def test_missing_feature_equals_model_without_that_column(name, method, x64):
    X, y, family = family_data(name, np.random.default_rng(3))
    if method == "map" and name == "poisson":
        family = bnb.Poisson(shape=2.0)
    if method == "map" and name in ("bernoulli", "categorical", "multinomial"):
        family = type(family)(alpha=2.0)
    full = bnb.NaiveBayes(family, method=method).fit(X, y)
    rows = X[:10].copy()
    rows[:, 1] = np.nan if rows.dtype != object else None
    without = bnb.NaiveBayes(family, method=method).fit(np.delete(X, 1, axis=1), y)
    np.testing.assert_allclose(full.predict_proba(rows),
                               without.predict_proba(np.delete(rows, 1, axis=1)),
                               rtol=1e-10, atol=1e-12)


def test_titanic_class_only_reproduces_e1071(x64):
    from bayesnb.datasets import load_titanic

    X, y = load_titanic()
    clf = bnb.NaiveBayes(method="ml").fit(X, y)
    p = clf.predict_proba(pd.DataFrame({"Class": ["2nd"], "Sex": [np.nan], "Age": [np.nan]}))
    np.testing.assert_allclose(p[0], [0.5859649, 0.4140351], atol=5e-8)


def test_sparse_input_infers_families_as_the_same_data_dense():
    """A boolean sparse matrix was inferred Poisson (dense booleans: Bernoulli), with other
    probabilities; one stored NaN made a sparse count column Gaussian, silently (NaN is
    missing in the count rule): it is Poisson, and the sparse path's refusal of a missing
    value names the column."""
    rng = np.random.default_rng(0)
    X = rng.random((30, 3)) < 0.4
    y = np.where(rng.random(30) < 0.5, "a", "b")
    dense = bnb.NaiveBayes().fit(X, y)
    sparse_fit = bnb.NaiveBayes().fit(sparse.csr_matrix(X), y)
    assert [type(b.family) for b in sparse_fit.blocks_] == [bnb.Bernoulli]
    np.testing.assert_allclose(sparse_fit.predict_proba(sparse.csr_matrix(X)),
                               dense.predict_proba(X), rtol=1e-12)
    counts = sparse.csr_matrix(np.array([[1.0, 0.0], [np.nan, 2.0], [3.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"column 0: missing values \(NaN\) are not supported "
                                         r"in sparse input"):
        bnb.NaiveBayes().fit(counts, ["a", "a", "b", "b"])


def test_a_one_dimensional_sparse_row():
    """SciPy's 1-D sparse arrays (csr_array(X)[i]): explain takes one as a row, as a 1-D
    NumPy row ("explain takes one row, got 3" counted its columns), and predict asks for a
    2-D X ("0 feature(s)" it said)."""
    X = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0], [2.0, 1.0, 0.0], [0.0, 2.0, 2.0]])
    clf = bnb.NaiveBayes(bnb.Multinomial()).fit(X, ["a", "a", "b", "b"])
    row = sparse.csr_array(X)[0]
    if row.ndim == 1:  # SciPy >= 1.15 indexes a sparse array to 1-D
        np.testing.assert_array_equal(clf.explain(row).to_numpy(), clf.explain(X[0]).to_numpy())
        with pytest.raises(ValueError, match=r"X must be 2-D.*1-D sparse array of shape \(3,\)"):
            clf.predict(row)
    gap = sparse.csr_matrix(np.array([[1.0, np.nan, 2.0]]))  # predict refuses it: so explain
    for call in (clf.predict_proba, clf.explain):
        with pytest.raises(ValueError, match=r"missing values \(NaN\) are not supported in "
                                             r"sparse input"):
            call(gap)


def test_sparse_values_beyond_float64s_squares_are_refused_as_dense_ones():
    """Dense input refuses a count of 1e200 (its square overflows float64); sparse input took
    it and returned NaN joint scores under method='bayes', unrefused."""
    X = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0], [2.0, 1.0, 0.0], [0.0, 2.0, 2.0]])
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="bayes").fit(X, ["a", "a", "b", "b"])
    huge = np.array([[0.0, 1e200, 1.0]])
    for data in (huge, sparse.csr_matrix(huge)):
        with pytest.raises(ValueError, match=r"column 1: .*too large for the computation"):
            clf.predict_joint_log_proba(data)


@pytest.mark.parametrize("family, bad, message", [
    (bnb.Multinomial(), -1.0, "column 1: Multinomial needs non-negative counts, got -1.0 (row 2)."),
    (bnb.Poisson(), -1.0, "column 1: Poisson needs non-negative counts, got -1.0 (row 2)."),
    # a negative value in a Bernoulli column was "needs non-negative counts", without a row
    (bnb.Bernoulli(), -1.0, "column 1: Bernoulli needs values in {0, 1} (or booleans), got -1.0 "
                            "(row 2)."),
    (bnb.Bernoulli(), 3.0, "column 1: Bernoulli needs values in {0, 1} (or booleans), got 3.0 "
                           "(row 2)."),
])
def test_sparse_and_dense_bad_values_are_named_alike(family, bad, message):
    """A bad stored value is named by column and row, in the same words as in a dense block,
    and shown as a number (NumPy 2 printed ``np.float64(-1.0)`` in the dense message)."""
    X = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, bad, 0.0]])
    for data in (X, sparse.csr_matrix(X)):
        with pytest.raises(ValueError) as info:
            bnb.NaiveBayes(family).fit(data, ["a", "b", "a"])
        assert str(info.value) == message


@pytest.mark.parametrize("family", [bnb.Bernoulli, bnb.Multinomial, bnb.Poisson])
def test_analysis_helpers_read_sparse_input_as_its_dense_array(family):
    """dependence, encode_linear, decision_function and model_and_data wrapped the sparse
    families' SciPy block with np.asarray (one object): IndexError, 'setting an array
    element with a sequence'. Each now equals its answer on the dense array."""
    from bayesnb import analysis
    from bayesnb.model import model_and_data

    rng = np.random.default_rng(0)
    X = (rng.poisson(1.5, size=(60, 5)) * (rng.random((60, 5)) < 0.6)).astype(float)
    X = (X > 0).astype(float) if family is bnb.Bernoulli else X
    y = rng.integers(0, 2, 60)
    clf = bnb.NaiveBayes(family(), method="mean").fit(X, y)
    S = sparse.csr_matrix(X)
    pd.testing.assert_frame_equal(analysis.dependence(clf, S, y), analysis.dependence(clf, X, y))
    pd.testing.assert_frame_equal(analysis.encode_linear(clf, S), analysis.encode_linear(clf, X))
    np.testing.assert_array_equal(analysis.decision_function(clf, S),
                                  analysis.decision_function(clf, X))
    np.testing.assert_array_equal(model_and_data(clf, S, y)[1]["xs"][0],
                                  model_and_data(clf, X, y)[1]["xs"][0])


def test_predictions_over_draws_ask_for_dense_input():
    """families.md: predictions over posterior draws refuse a sparse matrix of the sparse
    families, saying what to do (the message named method='mcmc' under 'mean' too); a
    semi-supervised fit refuses one for every family; the dense array is answered."""
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(30, 4)).astype(float)
    y = rng.integers(0, 2, 30)
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="mean").fit(X, y)
    with pytest.raises(TypeError, match=r"predictions over posterior draws \(method='mcmc', "
                                        r"predict_uncertainty\) read dense input.*X.toarray"):
        clf.predict_uncertainty(sparse.csr_matrix(X[:3]), num_draws=10)
    assert clf.predict_uncertainty(X[:3], num_draws=10)["proba"].shape == (3, 2)
    labels = np.where(np.arange(30) % 3 == 0, None, y.astype(object))
    semi = bnb.NaiveBayes(bnb.Gaussian(), method="mcmc", num_warmup=10, num_samples=10,
                          num_chains=1, progress_bar=False)
    with pytest.raises(TypeError, match="semi-supervised fitting .* needs dense X: pass "
                                        r"X.toarray\(\)"):
        semi.fit(sparse.csr_matrix(X), labels)


def test_explain_reads_a_sparse_rows_stored_nan_as_predict_does():
    """A stored NaN is a missing value for Gaussian and Categorical columns (families.md):
    explain refused it where predict_proba and loo read it; the explanation equals the dense
    row's. For Multinomial columns predict refuses it, and so does explain."""
    X = np.array([[0, 2.5], [np.nan, 0], [0, 0], [4, 1], [3.5, 0], [5, 3]])
    y = [0, 0, 0, 1, 1, 1]
    clf = bnb.NaiveBayes(bnb.Gaussian()).fit(sparse.csr_matrix(X), y)
    row = sparse.csr_matrix(X[1:2])
    pd.testing.assert_frame_equal(clf.explain(row), clf.explain(X[1:2]))
    pd.testing.assert_series_equal(clf.weight_of_evidence(row, 0, 1),
                                   clf.weight_of_evidence(X[1:2], 0, 1))
    counts = bnb.NaiveBayes(bnb.Multinomial()).fit(np.nan_to_num(X), y)
    with pytest.raises(ValueError, match="not supported in sparse input for Multinomial"):
        counts.explain(row)
