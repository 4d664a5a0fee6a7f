"""Answers that belong to another model are refused, and a changed setting is never ignored:
reports of one model under ``feature_prior``, the scorer's cache against every setting it
depends on, models built from stated tables, and the linear view of a Multinomial row with a
missing count."""

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import MultinomialNB

import bayesnb as bnb
from bayesnb.analysis import decision_function, encode_linear


@pytest.fixture(scope="module")
def averaged():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 120)
    X = pd.DataFrame({"signal": rng.normal(y, 1.0), "noise": rng.normal(0.0, 1.0, 120)})
    return bnb.NaiveBayes(method="bayes", feature_prior=0.5).fit(X, y), X, y


ONE_MODEL = {
    "exact leave-one-out": lambda clf, X, y: clf.loo(X, y),
    "predict_uncertainty": lambda clf, X, y: clf.predict_uncertainty(X.head(3)),
    "sample_posterior": lambda clf, X, y: clf.sample_posterior(10),
    "simulate": lambda clf, X, y: clf.simulate(3),
    "to_arviz": lambda clf, X, y: clf.to_arviz(prior_draws=None),
}


@pytest.mark.parametrize("what", sorted(ONE_MODEL))
def test_reports_of_one_model_refuse_feature_averaging(averaged, what):
    # each of these would answer for the all-features model (loo: -18.51 where refits of the
    # averaged model gave -22.67), not for the averaged predictive the model predicts with
    clf, X, y = averaged
    with pytest.raises(ValueError, match=f"{what} is of one model; feature_prior averages"):
        ONE_MODEL[what](clf, X, y)


def test_predict_uncertainty_refuses_feature_averaging_with_given_draws(averaged):
    clf, X, y = averaged
    draws = bnb.NaiveBayes(method="bayes").fit(X, y).sample_posterior(20)
    with pytest.raises(ValueError, match="predict_uncertainty is of one model"):
        clf.predict_uncertainty(X.head(3), draws=draws)


def test_non_conjugate_priors_set_after_a_fit_are_not_ignored():
    rng = np.random.default_rng(1)
    X = rng.poisson(3.0, size=(40, 2)).astype(float)
    y = rng.integers(0, 2, 40)
    clf = bnb.NaiveBayes(bnb.Poisson(), method="bayes").fit(X, y)
    clf.predict_proba(X[:2])  # the closed-form scorer, cached
    import numpyro.distributions as dist

    clf.set_params(priors={"poisson.rate": dist.LogNormal(0.0, 1.0)})
    with pytest.raises(ValueError, match="replace conjugate priors"):
        clf.predict_proba(X[:2])


def test_nuts_settings_changed_after_a_run_take_effect():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2, size=(30, 2))
    y = rng.integers(0, 2, 30)
    clf = bnb.NaiveBayes(bnb.Bernoulli(), method="mcmc", num_warmup=40, num_samples=20,
                         num_chains=1, progress_bar=False)
    with pytest.warns(Warning):  # so short a run warns that it may not have converged
        clf.fit(X, y)
    assert clf.draws_["class_probs"].shape[:2] == (1, 20)
    clf.set_params(num_samples=30)
    with pytest.warns(Warning):
        clf.predict_proba(X[:2])
    assert clf.draws_["class_probs"].shape[:2] == (1, 30)
    clf.set_params(progress_bar=True, num_samples=30)  # what the draws do not depend on
    before = clf.fitted_.nuts
    clf.set_params(progress_bar=False)
    clf.predict_proba(X[:2])
    assert clf.fitted_.nuts is before


@pytest.fixture
def stated():
    categorical = {"Outlook": {"Yes": {"Sunny": 2 / 9, "Overcast": 4 / 9, "Rain": 3 / 9},
                               "No": {"Sunny": 3 / 5, "Overcast": 0.0, "Rain": 2 / 5}}}
    return bnb.from_tables({"Yes": 9 / 14, "No": 5 / 14}, categorical=categorical)


def test_a_model_from_stated_tables_refuses_updates_and_mcmc(stated):
    rows = pd.DataFrame({"Outlook": ["Sunny", "Rain"]})
    with pytest.raises(ValueError, match="stated tables .* no statistics to update"):
        stated.partial_fit(rows, ["Yes", "No"])
    # the stated tables serve every closed-form method (float32 by default)
    expected = (9 / 14 * 2 / 9) / (9 / 14 * 2 / 9 + 5 / 14 * 3 / 5)
    for method in ("ml", "bayes"):
        proba = stated.set_params(method=method).predict_proba(rows.head(1))
        assert proba[0, list(stated.classes_).index("Yes")] == pytest.approx(expected, rel=1e-6)
    with pytest.raises(ValueError, match="stated tables give it no probability"):
        stated.predict_proba(pd.DataFrame({"Outlook": ["Foggy"]}))  # not: change the method
    stated.set_params(method="mcmc")
    with pytest.raises(ValueError, match="method='mcmc' needs data"):
        stated.predict_proba(rows)


def test_stated_tables_refuse_what_they_cannot_mean():
    """A negative probability was reported by its (correct) row sums; an entry for a class
    not in class_prior (a misspelt "yes") was ignored; a row the tables rule out in every
    class advised another method, which gives the same tables and the same refusal."""
    prior = {"Yes": 0.5, "No": 0.5}
    with pytest.raises(ValueError, match=r"column 'o', class 'Yes': the probability of 'b' is "
                                         r"-0.5; probabilities are non-negative"):
        bnb.from_tables(prior, categorical={"o": {"Yes": {"a": 1.5, "b": -0.5},
                                                  "No": {"a": 0.5, "b": 0.5}}})
    with pytest.raises(ValueError, match=r"column 'o': an entry for 'yes', which is not a class "
                                         r"of class_prior \('No', 'Yes'\)"):
        bnb.from_tables(prior, bernoulli={"o": {"Yes": 0.9, "No": 0.5, "yes": 0.1}})
    clf = bnb.from_tables(prior, bernoulli={"o": {"Yes": 1.0, "No": 1.0}})
    for method in ("ml", "mean", "bayes"):
        with pytest.raises(ValueError, match="the stated tables give every class probability "
                                             "zero .* no method changes stated tables") as info:
            clf.set_params(method=method).predict_proba([[0]])
        assert "Use method" not in str(info.value)


def test_stated_class_prior_as_a_series_and_rounded_tables():
    """A pandas Series class_prior (what value_counts(normalize=True) gives, and what
    NaiveBayes(class_prior=...) takes) failed with a bare KeyError: sorted() walked its
    values, read as classes (hunt 45). Rounded tables are refused naming the class and how to
    fix them."""
    outlook = {"Outlook": {"Yes": {"Sunny": 2 / 9, "Overcast": 4 / 9, "Rain": 3 / 9},
                           "No": {"Sunny": 3 / 5, "Overcast": 0.0, "Rain": 2 / 5}}}
    play = pd.Series(["Yes"] * 9 + ["No"] * 5)
    clf = bnb.from_tables(play.value_counts(normalize=True), categorical=outlook)
    proba = clf.predict_proba(pd.DataFrame({"Outlook": ["Sunny"]}))
    no = 5 / 14 * 3 / 5  # by hand: p(No) p(Sunny | No), against Yes's 9 / 14 * 2 / 9
    np.testing.assert_allclose(proba[0], [no / (no + 1 / 7), 1 / 7 / (no + 1 / 7)], rtol=1e-6)
    with pytest.raises(TypeError, match="class_prior must map each class to its probability"):
        bnb.from_tables([9 / 14, 5 / 14], categorical=outlook)
    with pytest.raises(ValueError, match="class_prior names class 'Yes' more than once"):
        bnb.from_tables(pd.Series([0.3, 0.2, 0.5], index=["Yes", "Yes", "No"]),
                        categorical=outlook)
    rounded = {"Outlook": {"Yes": {"Sunny": 0.222, "Overcast": 0.444, "Rain": 0.333},
                           "No": {"Sunny": 0.6, "Overcast": 0.0, "Rain": 0.4}}}
    with pytest.raises(ValueError, match=r"column 'Outlook', class 'Yes': the probabilities sum "
                                         r"to 0.999, not 1 .* normalised first"):
        bnb.from_tables({"Yes": 9 / 14, "No": 5 / 14}, categorical=rounded)
    with pytest.raises(ValueError, match=r"sum to 1 \(to within 1e-5\), got a sum of 0.999; "
                                         r"a rounded prior must be normalised first"):
        bnb.from_tables({"a": 0.333, "b": 0.333, "c": 0.333},
                        bernoulli={"x": {"a": 0.1, "b": 0.2, "c": 0.3}})


def test_linear_view_refuses_a_missing_multinomial_count():
    X = np.array([[8, 1, 1], [8, 1, 1], [8, 1, 1], [1, 5, 4], [1, 4, 5]], dtype=float)
    y = np.array(["a", "a", "a", "b", "b"])
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0).fit(X, y)
    # complete rows: scikit-learn's joint log likelihood (the same model), up to a row constant
    rows = np.array([[3.0, 1.0, 0.0], [0.0, 2.0, 2.0], [1.0, 1.0, 1.0]])
    reference = MultinomialNB(alpha=1.0).fit(X, y).predict_joint_log_proba(rows)
    scores = decision_function(clf, rows)
    np.testing.assert_allclose(scores - scores[:, :1], reference - reference[:, :1],
                               rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="column 0: row 1 has a missing count"):
        encode_linear(clf, np.array([[1.0, 1.0, 1.0], [np.nan, 1.0, 1.0]]))
    with pytest.raises(ValueError, match="missing count"):
        decision_function(clf, np.array([[np.nan, 1.0, 1.0]]))


@pytest.mark.parametrize("family", [bnb.Multinomial(), bnb.Bernoulli(), bnb.Poisson()])
def test_sparse_products_refuse_a_stored_nan(family):
    # docs/user_guide/families.md: these read the stored entries only and refuse a stored NaN
    from scipy import sparse

    X = np.array([[1.0, 0.0], [np.nan, 1.0], [0.0, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="column 0: missing values"):
        bnb.NaiveBayes(family).fit(sparse.csr_matrix(X), [0, 0, 1, 1])


def test_a_stored_nan_is_missing_for_densified_families():
    from scipy import sparse
    from sklearn.naive_bayes import GaussianNB

    X = np.array([[1.0, 0.5], [np.nan, 1.0], [0.0, 1.5], [2.0, 0.0], [3.0, 2.5], [2.5, 0.5]])
    y = [0, 0, 0, 1, 1, 1]
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0)
    got = clf.fit(sparse.csr_matrix(X), y).predict_proba(np.array([[1.0, 1.0]]))
    # the missing value leaves its row out of column 0's statistics: scikit-learn's GaussianNB
    # on each column's observed rows, multiplied out by hand
    mean0 = [np.mean([1.0, 0.0]), np.mean([2.0, 3.0, 2.5])]
    var0 = [np.var([1.0, 0.0]), np.var([2.0, 3.0, 2.5])]
    col1 = GaussianNB(var_smoothing=0).fit(X[:, 1:], y)
    from scipy.stats import norm

    joint = np.log([0.5, 0.5]) + norm.logpdf(1.0, mean0, np.sqrt(var0)) + \
        col1.predict_joint_log_proba(np.array([[1.0]]))[0] - np.log(col1.class_prior_)
    np.testing.assert_allclose(got[0], np.exp(joint - np.logaddexp.reduce(joint)), rtol=1e-5)


def test_an_estimate_beyond_float64_says_to_rescale(x64):
    """Values of 1e-320 under a prior rate of 1e-320: the Exponential rate overflows. The
    refusal said 'the posterior mode is at the boundary ... use method="mean"', under
    method='mean' too; under 'bayes' it blamed unseen values only."""
    X = 1e-320 * np.array([[0.5], [1.5], [4.0], [6.0]])
    for method in ("ml", "mean"):
        with pytest.raises(ValueError, match=r"an estimate beyond float64's range \(log_rate = "
                                             r"inf.*Rescale the column") as info:
            bnb.NaiveBayes(bnb.Exponential(rate=1e-320), method=method).fit(X, [0, 0, 1, 1])
        assert "use method='mean'" not in str(info.value)
    with pytest.raises(ValueError, match="a density below about 1e-308 is 0: rescale"):
        bnb.NaiveBayes(bnb.Exponential(rate=1e-320), method="bayes").fit(
            X, [0, 0, 1, 1]).predict_proba(X[:2])
