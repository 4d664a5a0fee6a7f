"""Category values never seen in training: a defined, documented behaviour per method."""

import numpy as np
import pandas as pd
import pytest

import bayesnb as bnb


@pytest.fixture
def data():
    X = pd.DataFrame({"colour": ["red", "red", "blue", "green", "blue", "blue", "red"]})
    y = np.array(["a", "a", "a", "a", "b", "b", "b"])
    return X, y


@pytest.mark.parametrize("method, alpha", [("mean", 1.0), ("bayes", 0.5), ("map", 2.0)])
def test_unseen_value_gets_the_zero_count_probability(data, method, alpha, x64):
    X, y = data
    clf = bnb.NaiveBayes(bnb.Categorical(alpha=alpha), method=method, class_alpha=1.0).fit(X, y)
    shift = -1.0 if method == "map" else 0.0
    # by hand: class a has 4 rows, class b 3; 3 levels; an unseen level is a zero count
    p_unseen = {"a": (alpha + shift) / (4 + 3 * (alpha + shift)),
                "b": (alpha + shift) / (3 + 3 * (alpha + shift))}
    prior = {"a": (4 + 1 + shift) / (7 + 2 * (1 + shift)),
             "b": (3 + 1 + shift) / (7 + 2 * (1 + shift))}
    if method != "map":
        prior = {"a": 5 / 9, "b": 4 / 9}
    joint = np.array([prior[c] * p_unseen[c] for c in ("a", "b")])
    got = clf.predict_proba(pd.DataFrame({"colour": ["purple"]}))[0]
    np.testing.assert_allclose(got, joint / joint.sum(), rtol=1e-12)


def test_unseen_value_under_ml_names_column_and_value(data):
    X, y = data
    clf = bnb.NaiveBayes(method="ml").fit(X, y)
    with pytest.raises(ValueError, match=r"column 'colour': value 'purple'.*method='ml'"):
        clf.predict(pd.DataFrame({"colour": ["purple"]}))


def test_unseen_value_at_fit_time_asks_for_declared_categories(data):
    X, y = data
    clf = bnb.NaiveBayes(method="mean").fit(X, y)
    with pytest.raises(ValueError, match="categories="):
        clf.partial_fit(pd.DataFrame({"colour": ["purple"]}), ["a"])


def test_declared_categories_make_the_value_a_level(data, x64):
    X, y = data
    clf = bnb.NaiveBayes(bnb.Categorical(categories=[["red", "blue", "green", "purple"]]),
                         method="ml").fit(X, y)
    table = clf.conditional_tables()["colour"]
    assert list(table.columns) == ["red", "blue", "green", "purple"]
    assert table.loc["a", "purple"] == 0.0
    with pytest.raises(ValueError, match="every class has probability zero"):
        clf.predict_proba(pd.DataFrame({"colour": ["purple"]}))
    smoothed = bnb.NaiveBayes(bnb.Categorical(categories=[["red", "blue", "green", "purple"]]),
                              method="mean", class_alpha=0).fit(X, y)
    np.testing.assert_allclose(smoothed.conditional_tables()["colour"].loc["b", "purple"],
                               1 / (3 + 4))
