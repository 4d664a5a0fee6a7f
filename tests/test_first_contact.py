"""Issue 40: the friction a new user meets first, each fixed and checked here.

References are independent of the code under test: hand computations from the raw PlayTennis
rows (pandas counts), scikit-learn's ``cross_val_score`` and NumPy's random generator.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import jax
import numpy as np
import pandas as pd
import pytest
from numpyro.infer import Predictive
from sklearn.model_selection import cross_val_score

import bayesnb as bnb
from bayesnb import datasets
from bayesnb.families.categorical import UnseenCategoryWarning
from bayesnb.model import model_and_data

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tennis():
    X, y = datasets.load_playtennis()
    return X, y, bnb.NaiveBayes(method="ml").fit(X, y)


def _ml_log_likelihood_by_hand(X: pd.DataFrame, y: pd.Series) -> float:
    """sum_i log p(y_i) + sum_j log p(x_ij | y_i) with relative frequencies (the ML fit)."""
    total = 0.0
    for _, rows in X.groupby(y):
        n_c = len(rows)
        total += n_c * np.log(n_c / len(y))
        for col in X.columns:
            counts = rows[col].value_counts()
            total += float(np.sum(counts * np.log(counts / n_c)))
    return total


# ---------------------------------------------------------------------- summary
def test_summary_labels_the_evidence_and_prints_the_ml_log_likelihood(tennis):
    X, y, clf = tennis
    text = clf.summary(X, y)
    by_hand = _ml_log_likelihood_by_hand(X, y)
    assert by_hand == pytest.approx(-54.184002, abs=1e-6)  # the number the issue quotes
    line = next(t for t in text.splitlines() if t.startswith("log-likelihood at the fitted"))
    assert f"{by_hand:.6f}" in line and "method='ml'" in line
    evidence = next(t for t in text.splitlines() if t.startswith("log evidence"))
    assert f"{clf.log_evidence():.6f}" in evidence and "-65.357526" in evidence
    assert "marginal likelihood" in evidence and "integrated out" in evidence
    # without the rows, it says how to get the number instead of printing the evidence alone
    assert "summary(X, y)" in clf.summary()
    # the exact Bayes predictive has no single fitted parameter: said, not a number
    bayes = clf.set_params(method="bayes").summary(X, y)
    assert "log-likelihood at the fitted parameters (method='bayes'): none" in bayes
    clf.set_params(method="ml")


# ---------------------------------------------------------------------- explain
def test_explain_takes_a_dict_row_as_one_row(tennis):
    X, _, clf = tennis
    row = X.iloc[0]
    expected = clf.explain(row)
    pd.testing.assert_frame_equal(clf.explain(row.to_dict()), expected)
    # the keys' order does not matter: the model's columns are read by name
    shuffled = dict(reversed(list(row.to_dict().items())))
    pd.testing.assert_frame_equal(clf.explain(shuffled), expected)


def test_explain_refuses_a_dict_of_columns_saying_what_to_pass(tennis):
    X, _, clf = tennis
    with pytest.raises(ValueError, match=r"one row.*'Outlook' holds 3 values.*X\.iloc\[i\]"):
        clf.explain(X.head(3).to_dict(orient="list"))


def test_explain_dict_row_of_an_array_model_by_position():
    X = np.array([[0, 1], [1, 1], [1, 0], [0, 0]])
    clf = bnb.NaiveBayes(bnb.Bernoulli()).fit(X, [0, 0, 1, 1])
    pd.testing.assert_frame_equal(clf.explain({1: 1, 0: 0}), clf.explain([0, 1]))
    with pytest.raises(ValueError, match=r"2 unnamed columns.*\{0: value"):
        clf.explain({"a": 0, "b": 1})


# ---------------------------------------------------------------------- per-level priors
def test_per_level_prior_error_shows_the_nested_sorted_layout(tennis):
    X, y, _ = tennis
    layout = "[[<Overcast>, <Rain>, <Sunny>]]"
    with pytest.raises(ValueError, match="nested list") as flat:
        bnb.NaiveBayes({"Outlook": bnb.Categorical(alpha=[1.0, 2.0, 3.0])}).fit(X, y)
    assert "sorted level order" in str(flat.value) and layout in str(flat.value)
    with pytest.raises(ValueError, match="sorted level order") as short:
        bnb.NaiveBayes({"Outlook": bnb.Categorical(alpha=[[1.0, 2.0]])}).fit(X, y)
    assert layout in str(short.value)
    # the layout the message shows is the one that works: sorted levels, one list per column
    clf = bnb.NaiveBayes({"Outlook": bnb.Categorical(alpha=[[1.0, 2.0, 3.0]])},
                         method="mean").fit(X, y)
    yes = y == "Yes"
    counts = X.loc[yes, "Outlook"].value_counts().reindex(["Overcast", "Rain", "Sunny"],
                                                           fill_value=0)
    by_hand = (counts + [1.0, 2.0, 3.0]) / (counts.sum() + 6.0)
    np.testing.assert_allclose(clf.conditional_tables()["Outlook"].loc["Yes"], by_hand,
                               rtol=1e-6)


# ---------------------------------------------------------------------- raw text
def test_raw_text_points_to_count_vectorizer():
    docs = np.array(["the cat sat", "a dog ran", "the cat ran", "a dog sat"])
    labels = [0, 1, 0, 1]
    with pytest.raises(ValueError, match="CountVectorizer") as err:
        bnb.NaiveBayes(bnb.Multinomial()).fit(docs, labels)
    assert "reshape(-1, 1)" not in str(err.value)  # that advice leads to a second error
    with pytest.raises(TypeError, match="CountVectorizer"):
        bnb.NaiveBayes(bnb.Multinomial()).fit(docs.reshape(-1, 1), labels)
    # a 1-D array of numbers keeps scikit-learn's reshape advice
    with pytest.raises(ValueError, match=r"reshape\(-1, 1\)"):
        bnb.NaiveBayes().fit(np.arange(4.0), labels)


# ---------------------------------------------------------------------- NumPyro Predictive
def test_predictive_with_y_none_samples_labels(tennis):
    X, y, clf = tennis
    model, kwargs = model_and_data(clf, X, None)
    assert kwargs["y"] is None
    out = Predictive(model, num_samples=200)(jax.random.PRNGKey(0), **kwargs)
    labels = np.asarray(out["y"])
    assert labels.shape == (200, len(X))
    assert set(np.unique(labels)) <= {0, 1}
    # y is drawn from the prior class proportions (a flat Dirichlet): mean share 1/2
    assert abs(labels.mean() - 0.5) < 0.05
    # the same with the labels given and then dropped (the opaque TypeError of issue 40)
    model, kwargs = model_and_data(clf, X, y)
    kwargs["y"] = None
    assert np.asarray(Predictive(model, num_samples=2)(jax.random.PRNGKey(1), **kwargs)["y"]
                      ).shape == (2, len(X))


def test_model_with_nothing_to_size_the_rows_says_what_to_give(tennis):
    _, _, clf = tennis
    from bayesnb.model import model_and_data_for_simulation

    model, kwargs = model_and_data_for_simulation(clf)
    with pytest.raises(ValueError, match="n_rows=N"):
        Predictive(model, num_samples=1)(jax.random.PRNGKey(0), **kwargs)


# ---------------------------------------------------------------------- load_titanic
def test_load_titanic_default_order_and_shuffle():
    X, y = datasets.load_titanic()
    # the default is R's table order, sorted by the label (documented, kept)
    assert list(y.iloc[[0, 1489, 1490, 2200]]) == ["No", "No", "Yes", "Yes"]
    assert (y != y.shift()).sum() == 2
    with warnings.catch_warnings():  # a label-sorted fold meets levels its training lacks
        warnings.simplefilter("ignore", UnseenCategoryWarning)
        scores = cross_val_score(bnb.NaiveBayes(), X, y, cv=3)
    np.testing.assert_allclose(scores, [0.44, 0.78, 0.85], atol=0.01)  # the docstring's
    Xs, ys = datasets.load_titanic(shuffle=True, random_state=0)
    order = np.random.default_rng(0).permutation(len(X))
    pd.testing.assert_frame_equal(Xs, X.iloc[order].reset_index(drop=True))
    pd.testing.assert_series_equal(ys, y.iloc[order].reset_index(drop=True))
    assert cross_val_score(bnb.NaiveBayes(), Xs, ys, cv=3).min() > 0.75
    assert "sorted by the label" in datasets.load_titanic.__doc__


# ---------------------------------------------------------------------- py.typed
def test_package_is_marked_typed():
    assert (ROOT / "bayesnb" / "py.typed").is_file()
    text = (ROOT / "pyproject.toml").read_text()
    assert 'bayesnb = ["py.typed"]' in text
