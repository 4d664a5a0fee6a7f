"""Issue 38, section 4: clear one-line errors and first-contact crashes."""

import copy
import warnings

import matplotlib
import numpy as np
import numpyro.distributions as dist
import pandas as pd
import pytest

import bayesnb as bnb
import bayesnb.inference as inference
from bayesnb import datasets
from bayesnb.cli import main as cli_main

matplotlib.use("Agg")


def one_line(err) -> str:
    text = str(err.value)
    assert "\n" not in text, text
    return text


# ---------------------------------------------------------------- values that cannot be held
@pytest.mark.parametrize("level", [np.inf, -np.inf])
def test_a_non_finite_level_is_refused_at_save_naming_the_column(tmp_path, level):
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"grade": rng.choice([1.5, 2.5, level], 30), "w": rng.normal(size=30)})
    clf = bnb.NaiveBayes({"grade": bnb.Categorical()}).fit(X, np.arange(30) % 3)
    with pytest.raises(ValueError) as err:
        bnb.save(clf, tmp_path / "m.bnb")
    assert "column 'grade'" in one_line(err) and "finite" in str(err.value)
    assert not (tmp_path / "m.bnb").exists()


@pytest.mark.parametrize("family", [bnb.Gaussian(), bnb.Poisson(), bnb.KernelDensity()],
                         ids=["gaussian", "poisson", "kde"])
def test_an_integer_beyond_float64_names_column_and_row(family):
    X = pd.DataFrame({"n": [3, 1, 4, -7 * 10**320, 5, 9], "m": [1.0, 2, 3, 4, 5, 6]})
    with pytest.raises(ValueError) as err:
        bnb.NaiveBayes({"n": family}).fit(X, [0, 1, 0, 1, 0, 1])
    assert "column 'n'" in one_line(err) and "row 3" in str(err.value)
    fitted = bnb.NaiveBayes({"n": family}).fit(X.drop(index=3), [0, 1, 0, 1, 0])
    with pytest.raises(ValueError) as err:
        fitted.predict(pd.DataFrame({"n": [2, 10**330], "m": [1.0, 2.0]}))
    assert "column 'n'" in one_line(err) and "row 1" in str(err.value)


def test_an_inferred_column_with_a_huge_integer_is_categorical():
    X = pd.DataFrame({"code": [2, 10**500, 2, 7], "v": [0.1, 0.2, 0.3, 0.4]})
    clf = bnb.NaiveBayes().fit(X, [0, 1, 0, 1])
    assert clf.blocks_[0].family.name == "categorical"
    assert clf.predict_proba(X).shape == (4, 2)


# ---------------------------------------------------------------- kernel density bandwidths
def test_a_value_beyond_a_tiny_bandwidth_names_the_column_not_another_method():
    rng = np.random.default_rng(7)
    X = pd.DataFrame({"near": rng.normal(size=24), "far": rng.normal(size=24)})
    y = np.arange(24) % 2
    for method in ("mean", "bayes", "ml"):
        clf = bnb.NaiveBayes({"near": bnb.KernelDensity(), "far": bnb.KernelDensity(
            bandwidth=1e-250)}, method=method).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no overflow warnings on the way
            with pytest.raises(ValueError) as err:
                clf.predict_proba(pd.DataFrame({"near": [0.1, 0.2], "far": [0.0, 0.5]}))
        text = one_line(err)
        assert "column 'far'" in text and "bandwidth" in text and "method='" not in text
        # the joint density is an answer: log 0
        joint = clf.predict_joint_log_proba(pd.DataFrame({"near": [0.1], "far": [0.5]}))
        assert np.all(joint == -np.inf)


# ---------------------------------------------------------------- MCMC first contact
@pytest.fixture(scope="module")
def mcmc_fit():
    X, y = datasets.load_playtennis()
    clf = bnb.NaiveBayes(method="mcmc", num_warmup=100, num_samples=200, num_chains=1,
                         progress_bar=False)
    with pytest.warns(inference.ConvergenceWarning):
        clf.fit(X, y)
    return clf, X, y


def test_conditional_tables_of_an_mcmc_fit_are_the_posterior_means(mcmc_fit):
    clf, X, y = mcmc_fit
    tables = clf.conditional_tables()
    for column in X.columns:
        counts = pd.crosstab(y, X[column])  # Dirichlet(1) posterior means by hand
        means = (counts + 1).div(counts.sum(axis=1) + counts.shape[1], axis=0)
        got = tables[column].loc[means.index, means.columns]
        np.testing.assert_allclose(got.to_numpy(), means.to_numpy(), rtol=1e-12)
        # the draws estimate the same means
        draws = clf.draws_[f"categorical.{column}.probs"].mean(axis=(0, 1))
        np.testing.assert_allclose(draws, tables[column].to_numpy(), atol=0.08)


def test_class_prior_and_summary_of_an_mcmc_fit(mcmc_fit):
    clf, X, y = mcmc_fit
    np.testing.assert_allclose(clf.class_prior_.to_numpy(),
                               clf.draws_["class_probs"].mean(axis=(0, 1)))
    counts = pd.Series(y).value_counts().sort_index()
    np.testing.assert_allclose(clf.class_prior_.to_numpy(), (counts + 1) / (len(y) + 2),
                               atol=0.06)
    text = clf.summary()
    assert "method='mcmc'" in text and "Outlook" in text
    # the print-out says where each of its two kinds of numbers comes from
    assert "a-priori probabilities are the mean of the NUTS draws" in text
    assert "conditional ones the posterior means in closed form" in text
    fixed = copy.deepcopy(clf).set_params(class_prior=[0.3, 0.7])
    with warnings.catch_warnings():  # the short chains' warning, again for the new prior
        warnings.simplefilter("ignore", inference.ConvergenceWarning)
        assert "a-priori probabilities are the fixed class_prior" in fixed.summary()
    assert "closed form" not in copy.deepcopy(clf).set_params(method="ml").summary()


def test_cli_show_prints_an_mcmc_model_file(mcmc_fit, tmp_path, capsys):
    clf, _, _ = mcmc_fit
    path = bnb.save(clf, tmp_path / "m.bnb")
    assert cli_main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "A-priori probabilities" in out and "Humidity" in out


def test_conditional_tables_with_a_hyperprior_point_to_the_draws():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"n": rng.poisson(2, 30)})
    clf = bnb.NaiveBayes(bnb.Poisson(shape=dist.Gamma(2.0, 1.0)), method="mcmc",
                         num_warmup=30, num_samples=30, num_chains=1, progress_bar=False)
    with pytest.warns(inference.ConvergenceWarning):
        clf.fit(X, np.arange(30) % 2)
    with pytest.raises(ValueError) as err:
        clf.conditional_tables()
    assert "mcmc_summary" in one_line(err) and "hyperprior" in str(err.value)


def test_a_hyperprior_on_the_poisson_rate_is_refused_in_one_line():
    X = pd.DataFrame({"n": np.arange(20) % 5})
    clf = bnb.NaiveBayes(bnb.Poisson(rate=dist.Gamma(2.0, 1.0)), method="mcmc",
                         num_warmup=10, num_samples=10, num_chains=1, progress_bar=False)
    with pytest.raises(ValueError) as err:
        clf.fit(X, np.arange(20) % 2)
    assert "'poisson.rate'" in one_line(err)
    assert "fitted_" not in clf.__dict__


# ---------------------------------------------------------------- tables and plots
def test_a_from_tables_model_has_no_posterior_draws():
    clf = bnb.from_tables({"u": 0.3, "v": 0.7}, gaussian={"h": {"u": (1.0, 2.0),
                                                               "v": (0.0, 1.0)}})
    for call in (clf.to_arviz, clf.sample_posterior,
                 lambda: clf.predict_uncertainty(pd.DataFrame({"h": [0.5]}))):
        with pytest.raises(ValueError) as err:
            call()
        assert "from_tables" in one_line(err)


def test_posterior_density_plot_reads_labels_like_positions():
    from bayesnb.plots import posterior_density_plot

    X, y = datasets.load_titanic()
    clf = bnb.NaiveBayes(method="bayes").fit(X, y)
    by_label = posterior_density_plot(clf, "categorical.Sex.probs", ("No", "Female"), seed=3)
    by_position = posterior_density_plot(clf, "categorical.Sex.probs", (0, 0), seed=3)
    heights = [[p.get_height() for p in fig.axes[0].patches] for fig in (by_label, by_position)]
    assert heights[0] == heights[1]
    assert by_label.axes[0].get_xlabel() == "categorical.Sex.probs[No, Female]"
    for bad, word in ((("No", "Unknown"), "'Unknown'"), (("Maybe", "Male"), "'Maybe'"),
                      ((0, 7), "position 7"), ((0, 0, 0), "3 entries")):
        with pytest.raises(ValueError) as err:
            posterior_density_plot(clf, "categorical.Sex.probs", bad)
        assert word in one_line(err)
    import matplotlib.pyplot as plt

    plt.close("all")
