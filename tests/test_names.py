"""Parameters are named by column: NumPyro sites, draws, ``priors=``, ArviZ variables, dims and
coordinates, ``mcmc_summary`` rows, plot labels and convergence warnings; model files written
when per-column sites were named by position still load, renamed.

The expected names are written out by hand from the data (PlayTennis: Outlook, Temperature,
Humidity, Wind; classes No, Yes), never derived from the code under test.
"""

import json
import warnings
import zipfile
from pathlib import Path

import jax
import jax.numpy as jnp
import matplotlib
import numpy as np
import numpyro.distributions as dist
import pandas as pd
import pytest
from numpyro import handlers

import bayesnb as bnb
from bayesnb import datasets
from bayesnb.inference import ConvergenceWarning, check_convergence
from bayesnb.model import model_and_data, with_priors

matplotlib.use("Agg")

DATA = Path(__file__).parent / "data"
TENNIS_SITES = {"class_probs", "categorical.Outlook.probs", "categorical.Temperature.probs",
                "categorical.Humidity.probs", "categorical.Wind.probs"}


@pytest.fixture(scope="module")
def tennis():
    X, y = datasets.load_playtennis()
    return X, y, bnb.NaiveBayes(method="bayes").fit(X, y)


def test_exact_draws_and_arviz_variables_are_named_by_column(tennis):
    import arviz as az

    X, y, clf = tennis
    assert set(clf.sample_posterior(10)) == TENNIS_SITES
    idata = clf.to_arviz(prior_draws=20)
    post = idata.posterior
    assert set(post.data_vars) == TENNIS_SITES
    assert post["categorical.Outlook.probs"].dims == ("chain", "draw", "class", "Outlook_level")
    assert list(post["Outlook_level"].values) == ["Overcast", "Rain", "Sunny"]
    assert list(post["Humidity_level"].values) == ["High", "Normal"]
    assert list(post["class"].values) == ["No", "Yes"]
    assert set(idata.prior.data_vars) == TENNIS_SITES
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one chain: ArviZ cannot compute r-hat
        rows = az.summary(idata, var_names=["categorical.Outlook.probs"], kind="stats").index
    assert list(rows) == [f"categorical.Outlook.probs[{c}, {v}]" for c in ("No", "Yes")
                          for v in ("Overcast", "Rain", "Sunny")]


def test_block_parameters_carry_column_names_in_their_feature_dimension():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"height cm": rng.normal(170, 10, 40), "weight.kg": rng.normal(70, 8, 40),
                      "smoker": rng.random(40) < 0.3})
    y = np.repeat(["a", "b"], 20)
    gauss = bnb.Gaussian()  # one family instance: one block of two columns
    clf = bnb.NaiveBayes({"height cm": gauss, "weight.kg": gauss, "smoker": bnb.Bernoulli()},
                         method="bayes").fit(X, y)
    post = clf.to_arviz(prior_draws=None).posterior
    assert post["gaussian.mean"].dims == ("chain", "draw", "class", "gaussian_feature")
    assert list(post["gaussian_feature"].values) == ["height cm", "weight.kg"]
    assert list(post["bernoulli_feature"].values) == ["smoker"]
    # a pooled precision is one per column, shared by the classes (docs/user_guide/mcmc.md)
    pooled = bnb.NaiveBayes(bnb.Gaussian(pooled=True), method="bayes").fit(X[["height cm"]], y)
    post = pooled.to_arviz(prior_draws=None).posterior
    assert post["gaussian.precision"].dims == ("chain", "draw", "gaussian_feature")
    assert post["gaussian.mean"].dims == ("chain", "draw", "class", "gaussian_feature")


def test_column_label_rule_for_arrays_and_ambiguous_names():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 3, (30, 2))
    y = np.repeat([0, 1], 15)
    # a NumPy array: columns 0, 1, ... so the sites keep the numbers
    arr = bnb.NaiveBayes(bnb.Categorical(), method="bayes").fit(codes, y)
    assert set(arr.sample_posterior(5)) == {"class_probs", "categorical.0.probs",
                                            "categorical.1.probs"}
    # the int 1 and the string "1" print alike: every column is named by its position
    frame = pd.DataFrame(codes.astype(str), columns=pd.Index([1, "1"], dtype=object))
    mixed = bnb.NaiveBayes(bnb.Categorical(), method="bayes").fit(frame, y)
    assert set(mixed.sample_posterior(5)) == {"class_probs", "categorical.0.probs",
                                              "categorical.1.probs"}
    assert mixed.to_arviz(prior_draws=None).posterior["categorical.1.probs"].dims[-1] == \
        "1_level"


def test_numpyro_program_and_priors_use_column_names(tennis):
    X, y, clf = tennis
    model, data = model_and_data(clf, X, y)
    trace = handlers.trace(handlers.seed(model, jax.random.PRNGKey(0))).get_trace(**data)
    latent = {k for k, s in trace.items() if s["type"] == "sample" and not s["is_observed"]}
    assert latent == TENNIS_SITES
    observed = {k for k, s in trace.items() if s["type"] == "sample" and s["is_observed"]}
    assert observed == {"y", "categorical.Outlook.x", "categorical.Temperature.x",
                        "categorical.Humidity.x", "categorical.Wind.x"}
    # a replacement prior keyed by the column's site reaches that site, and only it
    prior = dist.Dirichlet(jnp.array([5.0, 1.0, 1.0]))
    traced = handlers.trace(handlers.seed(with_priors(model, {"categorical.Outlook.probs":
                                                              prior}),
                                          jax.random.PRNGKey(0))).get_trace(**data)
    fn = traced["categorical.Outlook.probs"]["fn"]  # expanded over the two classes
    assert fn.batch_shape == (2,) and np.allclose(fn.base_dist.concentration, [5.0, 1.0, 1.0])
    # the other columns keep Categorical's default prior, Dirichlet(1, ..., 1)
    wind = traced["categorical.Wind.probs"]["fn"]
    assert np.allclose(getattr(wind, "base_dist", wind).concentration, 1.0)


def test_priors_naming_a_position_are_refused_with_the_sites_listed(tennis):
    X, y, _ = tennis
    clf = bnb.NaiveBayes(method="mcmc", num_warmup=5, num_samples=5, num_chains=1,
                         progress_bar=False,
                         priors={"categorical.0.probs": dist.Dirichlet(jnp.ones(3))})
    with pytest.raises(ValueError, match=r"'categorical\.0\.probs'.* named by the column: "
                                         r"'categorical\.Outlook\.probs'"):
        clf.fit(X, y)


def test_nuts_draws_summary_and_saved_file_are_named_by_column(tennis, tmp_path):
    X, y, _ = tennis
    clf = bnb.NaiveBayes(method="mcmc", num_warmup=10, num_samples=10, num_chains=1,
                         progress_bar=False,
                         priors={"categorical.Outlook.probs": dist.Dirichlet(jnp.ones(3) * 2)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # deliberately short chains
        clf.fit(X, y)
    assert set(clf.draws_) == TENNIS_SITES
    summary = clf.mcmc_summary()
    assert "categorical.Outlook.probs[No, Rain]" in summary.index
    assert "categorical.Wind.probs[Yes, Weak]" in summary.index
    path = bnb.save(clf, tmp_path / "named.bnb")
    with zipfile.ZipFile(path) as zf:
        manifest = json.loads(zf.read("manifest.json"))
    assert manifest["site_names"] == "column"
    assert set(manifest["draws"]["posterior"]) == TENNIS_SITES
    assert set(manifest["priors"]) == {"categorical.Outlook.probs"}
    loaded = bnb.load(path)
    for site in TENNIS_SITES:
        np.testing.assert_array_equal(loaded.draws_[site], clf.draws_[site])
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))


def test_a_file_with_positional_sites_still_loads_renamed():
    """Written by bayesnb at commit 84a322e: draws and a replacement prior keyed
    ``categorical.0.probs`` ... (0 = Outlook), and its predictions on PlayTennis."""
    path = DATA / "playtennis_mcmc_positional_sites.bnb"
    with zipfile.ZipFile(path) as zf:
        manifest = json.loads(zf.read("manifest.json"))
    assert "site_names" not in manifest and "categorical.0.probs" in manifest["priors"]
    model = bnb.load(path)
    assert set(model.draws_) == TENNIS_SITES
    assert set(model.priors) == {"categorical.Outlook.probs"}
    np.testing.assert_allclose(model.priors["categorical.Outlook.probs"].concentration,
                               [2.0, 2.0, 2.0])
    # Outlook's draws are the old position 0's: 3 levels, rows are simplex points
    outlook = np.asarray(model.draws_["categorical.Outlook.probs"])
    assert outlook.shape == (2, 50, 2, 3)
    np.testing.assert_allclose(outlook.sum(axis=-1), 1.0, rtol=1e-6)
    X, _ = datasets.load_playtennis()
    stored = pd.read_csv(DATA / "playtennis_mcmc_positional_sites.predictions.csv")
    np.testing.assert_allclose(model.predict_proba(X), stored.to_numpy(), rtol=1e-5)
    assert "categorical.Outlook.probs" in model.to_arviz(prior_draws=None).posterior


def test_trace_plot_legend_names_the_levels(tennis):
    import arviz as az
    import matplotlib.pyplot as plt

    X, y, clf = tennis
    idata = clf.to_arviz(prior_draws=None)
    axes = az.plot_trace(idata, var_names=["categorical.Outlook.probs"], legend=True)
    try:
        ax = axes[0, 0]
        assert ax.get_title() == "categorical.Outlook.probs"
        texts = [t.get_text() for t in ax.get_legend().get_texts()]
        assert texts == [f"{c}, {v}" for c in ("No", "Yes") for v in ("Overcast", "Rain",
                                                                      "Sunny")]
    finally:
        plt.close("all")


def test_posterior_density_plot_labels_the_entry_by_name(tennis):
    import matplotlib.pyplot as plt

    from bayesnb.plots import posterior_density_plot

    X, y, clf = tennis
    fig = posterior_density_plot(clf, "categorical.Outlook.probs", (0, 1), num_draws=200)
    try:
        assert fig.axes[0].get_xlabel() == "categorical.Outlook.probs[No, Rain]"
    finally:
        plt.close(fig)
    with pytest.raises(ValueError, match="categorical.Outlook.probs"):
        posterior_density_plot(clf, "categorical.0.probs", (0, 1), num_draws=20)


def test_convergence_warning_says_which_settings_to_raise():
    summary = pd.DataFrame({"r_hat": [1.03, 1.001], "ess_bulk": [150.0, 900.0],
                            "ess_tail": [300.0, 800.0]},
                           index=["categorical.Class.probs[No, 1st]", "class_probs[No]"])
    settings = dict(num_warmup=500, num_samples=300, num_chains=2)
    with pytest.warns(ConvergenceWarning) as record:
        problems = check_convergence(summary, {"diverging": np.zeros((2, 3), bool)},
                                     settings=settings)
    text = str(record[0].message)
    assert len(problems) == 2
    assert "r-hat up to 1.030 > 1.01 (categorical.Class.probs[No, 1st]" in text
    assert "ESS as low as 150 < 400 (categorical.Class.probs[No, 1st]" in text
    assert ("Raise num_chains to 4 (now 2) and num_warmup, num_samples to 1000, 1000 (now 500, "
            "300), e.g. NaiveBayes(method='mcmc', num_chains=4, num_warmup=1000, "
            "num_samples=1000)") in text
    assert "method='bayes'" in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        good = summary.assign(r_hat=1.001, ess_bulk=2000.0, ess_tail=2000.0)
        assert check_convergence(good, None, settings=settings) == []
    # just past the thresholds: shown with the digits that tell them apart
    close = summary.assign(r_hat=[1.0101, 1.0], ess_bulk=[399.6, 900.0], ess_tail=500.0)
    with pytest.warns(ConvergenceWarning, match=r"r-hat up to 1\.0101 > 1\.01 .*ESS as low "
                                                r"as 399\.6 < 400"):
        check_convergence(close, None, settings=settings)


def test_default_settings_are_four_chains_of_1000():
    params = bnb.NaiveBayes().get_params()
    assert (params["num_chains"], params["num_warmup"], params["num_samples"]) == (4, 1000, 1000)
