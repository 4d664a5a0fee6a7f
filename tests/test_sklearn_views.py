"""scikit-learn's fitted attribute names (``bayesnb._sklearn_views``) against scikit-learn's own
estimators fitted on the same data, in float64 (the ``x64`` fixture).

* ``MultinomialNB(alpha=a)`` == ``Multinomial(alpha=a)``, ``method="mean"``, ``class_alpha=0``;
* ``BernoulliNB(alpha=a, binarize=None)`` == ``Bernoulli(alpha=a, beta=a)``, ``method="mean"``;
* ``CategoricalNB(alpha=a)`` == ``Categorical(alpha=a)`` with the same levels;
* ``GaussianNB(var_smoothing=0)`` == ``Gaussian()`` under ``method="ml"`` (the 1/N variance);
* ``GaussianNB()`` (``var_smoothing=1e-9``) == the recipe of docs/coming_from_sklearn.md (a MAP
  prior and weights).
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB, MultinomialNB

import bayesnb as bnb

TOL = 1e-10


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:600], y[:600]


def _close(a, b, tol=TOL):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), b, rtol=tol, atol=tol)


@pytest.mark.parametrize("alpha", [0.5, 1.0])
def test_multinomial_views_match_multinomialnb(x64, digits, alpha):
    X, y = digits
    sk = MultinomialNB(alpha=alpha).fit(X, y)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=alpha), method="mean", class_alpha=0).fit(X, y)
    assert clf.feature_count_.shape == sk.feature_count_.shape == (10, 64)
    _close(clf.feature_count_, sk.feature_count_)
    _close(clf.feature_log_prob_, sk.feature_log_prob_)
    _close(clf.class_log_prior_, sk.class_log_prior_)
    _close(clf.class_count_, sk.class_count_)
    assert clf.n_features_in_ == sk.n_features_in_
    # MAP under alpha + 1 is the same table (docs/user_guide/methods.md's identity)
    clf.set_params(method="map", features=bnb.Multinomial(alpha=alpha + 1)).fit(X, y)
    _close(clf.feature_log_prob_, sk.feature_log_prob_)


def test_multinomial_views_per_method(x64, digits):
    """ML is the plain frequency (hand formula); "bayes" shows the posterior mean."""
    X, y = digits
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=2.0), method="ml").fit(X, y)
    counts = np.stack([X[y == k].sum(axis=0) for k in range(10)])
    with np.errstate(divide="ignore"):
        _close(clf.feature_log_prob_, np.log(counts / counts.sum(axis=1, keepdims=True)))
    clf.set_params(method="bayes")
    _close(clf.feature_log_prob_, np.log((counts + 2) / (counts + 2).sum(axis=1,
                                                                         keepdims=True)))
    n = np.bincount(y)
    _close(clf.class_log_prior_, np.log((n + 1) / (n + 1).sum()))  # class_alpha=1: Laplace


def test_bernoulli_views_match_bernoullinb(x64, digits):
    X, y = digits
    Xb = (X > 4).astype(np.float64)
    sk = BernoulliNB(alpha=1.0, binarize=None).fit(Xb, y)
    clf = bnb.NaiveBayes(bnb.Bernoulli(), method="mean", class_alpha=0).fit(Xb, y)
    _close(clf.feature_count_, sk.feature_count_)
    _close(clf.feature_log_prob_, sk.feature_log_prob_)
    _close(clf.class_log_prior_, sk.class_log_prior_)
    # booleans are inferred Bernoulli: the same views without declaring the family
    inferred = bnb.NaiveBayes(class_alpha=0).fit(Xb.astype(bool), y)
    _close(inferred.feature_log_prob_, sk.feature_log_prob_)


def test_categorical_views_match_categoricalnb(x64):
    X, y = load_iris(return_X_y=True)
    edges = np.quantile(X, [0.25, 0.5, 0.75], axis=0)
    Xc = np.column_stack([np.digitize(X[:, j], edges[:, j]) for j in range(4)])
    sk = CategoricalNB(alpha=1.0).fit(Xc, y)
    clf = bnb.NaiveBayes(bnb.Categorical(), class_alpha=0).fit(Xc, y)
    assert isinstance(clf.category_count_, list) and len(clf.category_count_) == 4
    for ours, ref in zip(clf.category_count_, sk.category_count_, strict=True):
        assert ours.shape == ref.shape
        _close(ours, ref)
    for ours, ref in zip(clf.feature_log_prob_, sk.feature_log_prob_, strict=True):
        _close(ours, ref)
    _close(clf.class_log_prior_, sk.class_log_prior_)


def test_categorical_declared_levels_give_categoricalnb_shape(x64):
    """CategoricalNB's levels are 0..max; a level absent from the data is declared."""
    X = np.array([[0, 2], [2, 1], [2, 2], [0, 0], [1, 2]])
    y = np.array([0, 0, 1, 1, 1])
    sk = CategoricalNB(alpha=0.5, min_categories=4).fit(X, y)
    clf = bnb.NaiveBayes(bnb.Categorical(alpha=0.5, categories=[range(4)] * 2),
                         class_alpha=0).fit(X, y)
    for ours, ref in zip(clf.category_count_, sk.category_count_, strict=True):
        assert ours.shape == ref.shape == (2, 4)
        _close(ours, ref)
    for ours, ref in zip(clf.feature_log_prob_, sk.feature_log_prob_, strict=True):
        _close(ours, ref)


@pytest.mark.parametrize("load", [load_iris, load_wine])
def test_gaussian_views_match_gaussiannb(x64, load):
    X, y = load(return_X_y=True)
    sk = GaussianNB(var_smoothing=0.0).fit(X, y)
    clf = bnb.NaiveBayes(method="ml", class_alpha=0).fit(X, y)  # numbers: inferred Gaussian
    assert clf.theta_.shape == sk.theta_.shape
    _close(clf.theta_, sk.theta_)
    _close(clf.var_, sk.var_, tol=1e-9)
    _close(clf.class_log_prior_, np.log(sk.class_prior_))


def test_gaussian_pooled_var_is_broadcast(x64):
    X, y = load_iris(return_X_y=True)
    clf = bnb.NaiveBayes(bnb.Gaussian(pooled=True), method="ml").fit(X, y)
    m2 = sum(((X[y == k] - X[y == k].mean(axis=0)) ** 2).sum(axis=0) for k in range(3))
    _close(clf.var_, np.broadcast_to(m2 / len(X), (3, 4)))


def _gaussiannb_recipe(X, y, var_smoothing=1e-9):
    """The recipe of docs/coming_from_sklearn.md: GaussianNB(var_smoothing) as a bayesnb MAP fit."""
    eps = var_smoothing * np.var(X, axis=0).max()
    classes, counts = np.unique(y, return_counts=True)
    weight = 1.0 / counts[np.searchsorted(classes, y)]  # every class weighs 1 in all
    clf = bnb.NaiveBayes(bnb.Gaussian(kappa=1e-20, shape=0.5, rate=eps / 2), method="map",
                         class_prior=counts / counts.sum())
    return clf.fit(X, y, sample_weight=weight)


@pytest.mark.parametrize("load", [load_iris, load_wine])
def test_gaussiannb_default_var_smoothing_recipe(x64, load):
    X, y = load(return_X_y=True)
    X = X * np.linspace(1.0, 50.0, X.shape[1])  # unequal column scales: eps matters
    sk = GaussianNB().fit(X, y)  # var_smoothing=1e-9
    clf = _gaussiannb_recipe(X, y)
    _close(clf.theta_, sk.theta_, tol=1e-9)
    _close(clf.var_, sk.var_, tol=1e-9)
    np.testing.assert_allclose(clf.predict_proba(X), sk.predict_proba(X), rtol=0, atol=1e-9)


def test_gaussiannb_recipe_where_var_smoothing_decides(x64):
    """A constant column in one class: ML is undefined, GaussianNB's epsilon is the variance,
    and the recipe reproduces it."""
    X, y = load_iris(return_X_y=True)
    X = X.copy()
    X[y == 0, 1] = 3.0
    sk = GaussianNB(var_smoothing=1e-3).fit(X, y)
    clf = _gaussiannb_recipe(X, y, var_smoothing=1e-3)
    _close(clf.var_, sk.var_, tol=1e-9)
    np.testing.assert_allclose(clf.predict_proba(X), sk.predict_proba(X), rtol=0, atol=1e-9)
    _close(clf.var_[0, 1], 1e-3 * np.var(X, axis=0).max(), tol=1e-12)  # epsilon alone


def test_views_are_absent_where_undefined():
    X = pd.DataFrame({"a": [0.5, 1.5, 2.0, 3.0], "b": ["u", "v", "u", "v"]})
    y = [0, 1, 0, 1]
    unfitted = bnb.NaiveBayes()
    for name in ("theta_", "var_", "feature_log_prob_", "class_log_prior_"):
        assert not hasattr(unfitted, name)
    mixed = bnb.NaiveBayes().fit(X, y)
    with pytest.raises(AttributeError, match="one family.*2 blocks"):
        _ = mixed.theta_
    assert not hasattr(mixed, "feature_log_prob_")
    gaussian = bnb.NaiveBayes().fit(X[["a"]], y)
    assert hasattr(gaussian, "theta_") and not hasattr(gaussian, "feature_count_")
    with pytest.raises(AttributeError, match="family is Gaussian"):
        _ = gaussian.feature_count_
    categorical = bnb.NaiveBayes().fit(X[["b"]], y)
    assert not hasattr(categorical, "theta_") and hasattr(categorical, "category_count_")
    assert not hasattr(categorical, "feature_count_")
    tables = bnb.from_tables({0: 0.5, 1: 0.5}, gaussian={"a": {0: (0, 1), 1: (1, 1)}})
    assert not hasattr(tables, "theta_")


def test_views_follow_refits_and_are_read_only(x64):
    X, y = load_iris(return_X_y=True)
    clf = bnb.NaiveBayes(method="ml").partial_fit(X[:75], y[:75], classes=[0, 1, 2])
    clf.partial_fit(X[75:], y[75:])
    sk = GaussianNB(var_smoothing=0.0).fit(X, y)
    _close(clf.theta_, sk.theta_)
    with pytest.raises(AttributeError):
        clf.theta_ = np.zeros((3, 4))


def test_fitted_arrays_are_read_only():
    """class_count_ and feature_count_ were the model's own arrays: editing one in place left
    the cached scorer predicting the old model (0.506) while the saved file predicted the
    edited one (0.990) and the next partial_fit built on it (hunt 44). They are read-only
    views now; the caller's arrays keep their flags."""
    rng = np.random.default_rng(27)
    X, y = rng.poisson(2, (10, 3)), np.array(["a", "b"] * 5)
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="ml").fit(X, y)
    before = clf.predict_proba(X[:1])
    for array in (clf.class_count_, clf.feature_count_, clf.blocks_[0].stats.counts,
                  clf.blocks_[0].prior.alpha):
        with pytest.raises(ValueError, match="read-only"):
            array[0] *= 100
    with pytest.raises(ValueError, match="read-only"):  # a relabelled class (hunt 50)
        clf.classes_[0] = "z"
    copied = pickle.loads(pickle.dumps(clf))  # joblib, deepcopy: read-only again
    for array in (copied.classes_, copied.class_count_, copied.feature_count_):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = array[1]
    assert np.array_equal(clf.predict_proba(X[:1]), before)
    assert clf.predict(X[:1]).tolist() == [clf.classes_[int(before[0].argmax())]]
    clf.partial_fit(X[:1], y[:1])  # an update builds new arrays
    assert clf.class_count_.tolist() == [6.0, 5.0]
    alpha = np.array([1.0, 2.0, 3.0])  # a caller's array stays writable
    bnb.NaiveBayes(bnb.Multinomial(alpha=alpha)).fit(X, y)
    assert alpha.flags.writeable
