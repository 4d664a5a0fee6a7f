"""Linear view and empirical Bayes, against direct computation."""

import numpy as np
import pytest
from sklearn.model_selection import train_test_split

import bayesnb as bnb
from bayesnb import datasets
from bayesnb.analysis import decision_function, empirical_bayes, linear_weights


@pytest.mark.parametrize("family, data", [
    (bnb.Multinomial(alpha=0.7), "digits"),
    (bnb.Bernoulli(alpha=1.0, beta=2.0), "digits_binary"),
    (bnb.Gaussian(pooled=True), "iris"),
])
@pytest.mark.parametrize("method", ["mean", "map"])
def test_linear_weights_reproduce_predict_on_held_out_rows(family, data, method, x64):
    name = "digits" if data.startswith("digits") else data
    X, y = datasets.load(name)
    if data == "digits_binary":
        X = (X > 7).astype(float)
    if method == "map" and not isinstance(family, bnb.Gaussian):
        family = type(family)(**{**family.get_params(), "alpha": 2.0})
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    clf = bnb.NaiveBayes(family, method=method).fit(X_train, y_train)
    scores = decision_function(clf, X_test)
    np.testing.assert_array_equal(clf.classes_[scores.argmax(axis=1)], clf.predict(X_test))
    # and the scores are the joint log probabilities up to a per-row constant
    diff = clf.predict_joint_log_proba(X_test) - scores
    np.testing.assert_allclose(diff - diff[:, :1], 0.0, atol=1e-8)


def test_categorical_one_hot_weights_and_mixed_blocks(x64):
    X, y = datasets.load_titanic()
    clf = bnb.NaiveBayes(method="mean").fit(X, y)
    W, b = linear_weights(clf)
    assert "Class=2nd" in W.columns and list(W.index) == ["No", "Yes"]
    scores = decision_function(clf, X)
    assert (clf.classes_[scores.argmax(axis=1)] == clf.predict(X)).all()
    with pytest.raises(ValueError, match="pooled"):
        linear_weights(bnb.NaiveBayes(bnb.Gaussian()).fit(*datasets.load("iris")))


def test_empirical_bayes_alpha_is_the_evidence_maximiser(x64):
    X, y = datasets.load("digits")
    X, y = X.iloc[:300], y.iloc[:300]
    best, model = empirical_bayes(bnb.NaiveBayes(bnb.Multinomial()), X, y)
    grid = np.exp(np.linspace(np.log(0.01), np.log(100), 81))
    evidence = [bnb.NaiveBayes(bnb.Multinomial(alpha=a)).fit(X, y).log_evidence() for a in grid]
    i = int(np.argmax(evidence))
    assert grid[max(i - 1, 0)] <= best <= grid[min(i + 1, len(grid) - 1)]
    assert model.log_evidence() >= max(evidence) - 1e-6
    assert model.blocks_[0].family.alpha == pytest.approx(best)


def test_empirical_bayes_with_a_mapping(x64):
    X, y = datasets.load_titanic()
    best, model = empirical_bayes(bnb.NaiveBayes({"Class": bnb.Categorical()}), X, y)
    near = [bnb.NaiveBayes({"Class": bnb.Categorical(alpha=a)}).fit(X, y).log_evidence()
            for a in (best * 0.9, best * 1.1)]
    assert model.log_evidence() >= max(near)


def test_empirical_bayes_on_inferred_families(x64):
    """Issue 15: families inferred from dtypes (features=None) are resolved and searched; a
    Gaussian column (no alpha) leaves the answer as on the categorical columns alone."""
    X, y = datasets.load_titanic()
    best, model = empirical_bayes(bnb.NaiveBayes(method="bayes"), X, y)
    grid = np.exp(np.linspace(np.log(0.5), np.log(2.0), 9))  # explicit fits, by hand
    evidence = [bnb.NaiveBayes(bnb.Categorical(alpha=a), method="bayes").fit(X, y)
                .log_evidence() for a in grid]
    i = int(np.argmax(evidence))
    assert 0 < i < len(grid) - 1 and grid[i - 1] <= best <= grid[i + 1]
    assert model.log_evidence() >= max(evidence)
    assert model.method == "bayes" and model.blocks_[0].family.alpha == pytest.approx(best)
    np.testing.assert_allclose(model.predict_proba(X), bnb.NaiveBayes(
        bnb.Categorical(alpha=best), method="bayes").fit(X, y).predict_proba(X), rtol=1e-12)
    mixed = X.assign(noise=np.random.default_rng(0).normal(size=len(X)))
    best_mixed, fitted = empirical_bayes(bnb.NaiveBayes(), mixed, y)
    assert best_mixed == pytest.approx(best, rel=1e-4)
    assert sorted(type(b.family).__name__ for b in fitted.blocks_) == ["Categorical", "Gaussian"]
