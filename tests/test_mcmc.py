"""MCMC against the closed forms, the draws' predictive against exact Bayes, and ArviZ.

The conjugate posterior gives every parameter's exact mean and sd (moments of the Beta,
Dirichlet, Gamma and Normal-Gamma distributions, computed here with scipy.stats); NUTS on the
NumPyro model must reproduce them within Monte Carlo error.
"""

import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayesnb as bnb
from bayesnb.inference import ConvergenceWarning
from bayesnb.model import block_sites

matplotlib.use("Agg")


def mixed_data(seed=0, n=150):
    rng = np.random.default_rng(seed)
    y = rng.choice(["a", "b"], n)
    k = (y == "b").astype(int)
    X = pd.DataFrame({
        "flag": rng.random(n) < 0.3 + 0.4 * k,
        "colour": rng.choice(["red", "green", "blue"], n),
        "size": rng.normal(2.0 * k, 1.0 + k),
        "visits": rng.poisson(1 + 2 * k).astype(float),
        "w0": rng.poisson(2 + k), "w1": rng.poisson(1 + 2 * k), "w2": rng.poisson(1, n),
    })
    bag = bnb.Multinomial()
    features = {"visits": bnb.Poisson(), "size": bnb.Gaussian(kappa=0.1, rate=1.0),
                "w0": bag, "w1": bag, "w2": bag}
    return X, y, features


def closed_form_moments(clf):
    """{site: (mean, sd)} of every parameter under the exact conjugate posterior."""
    out = {}
    gamma = 1.0 + clf.class_count_
    d = stats.dirichlet(gamma)
    out["class_probs"] = (d.mean(), np.sqrt(d.var()))
    for block, site, post in zip(clf.blocks_, block_sites(clf), clf.posterior_, strict=True):
        post = type(post)(*(np.asarray(a, dtype=np.float64) for a in post))
        name = block.family.name
        if name == "bernoulli":
            b = stats.beta(np.asarray(post.alpha), np.asarray(post.beta))
            out[f"{site}.theta"] = (b.mean(), b.std())
        elif name == "poisson":
            g = stats.gamma(np.asarray(post.shape), scale=1.0 / np.asarray(post.rate))
            out[f"{site}.rate"] = (g.mean(), g.std())
        elif name == "multinomial":
            a = np.asarray(post.alpha)
            mean = a / a.sum(axis=1, keepdims=True)
            out[f"{site}.probs"] = (mean, np.sqrt(mean * (1 - mean) / (a.sum(1, keepdims=True)
                                                                       + 1)))
        elif name == "categorical":
            a = np.asarray(post.alpha)
            for col, part in zip(block.schema.columns,
                                 np.split(a, np.asarray(post.offset).astype(int)[1:], axis=1),
                                 strict=True):
                mean = part / part.sum(axis=1, keepdims=True)
                out[f"{site}.{col}.probs"] = (mean, np.sqrt(mean * (1 - mean) /
                                                            (part.sum(1, keepdims=True) + 1)))
        elif name == "gaussian":
            a, b = np.asarray(post.shape), np.asarray(post.rate)
            kappa, loc = np.asarray(post.kappa), np.asarray(post.loc)
            g = stats.gamma(a, scale=1.0 / b)
            out[f"{site}.precision"] = (g.mean(), g.std())
            # the marginal of the mean is Student-t with 2a dof, scale sqrt(b / (a kappa))
            t = stats.t(2 * a, loc=loc, scale=np.sqrt(b / (a * kappa)))
            out[f"{site}.mean"] = (t.mean(), t.std())
    return out


NUM_SAMPLES = 700


@pytest.fixture(scope="module")
def mcmc_fit():
    X, y, features = mixed_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        # the shortest run whose r-hat and ESS leave the 4-MCSE / 10% checks below a margin
        clf = bnb.NaiveBayes(features, method="mcmc", num_warmup=300, num_samples=NUM_SAMPLES,
                             num_chains=2, seed=1, progress_bar=False).fit(X, y)
    return X, y, features, clf


def test_mcmc_agrees_with_the_closed_form(mcmc_fit):
    X, y, features, clf = mcmc_fit
    summary = clf.mcmc_summary()
    assert summary["r_hat"].max() < 1.01
    assert int(clf.sample_stats_["diverging"].sum()) == 0
    moments = closed_form_moments(clf)
    assert set(moments) == set(clf.draws_)
    checked = 0
    for site, (mean, sd) in moments.items():
        draws = clf.draws_[site].reshape((-1,) + clf.draws_[site].shape[2:])
        rows = summary[summary.index.str.startswith(site + "[") | (summary.index == site)]
        mcse = rows["mcse_mean"].to_numpy().reshape(np.shape(mean))
        np.testing.assert_array_less(np.abs(draws.mean(axis=0) - mean), 4 * mcse + 1e-12,
                                     err_msg=site)
        np.testing.assert_allclose(draws.std(axis=0), sd, rtol=0.10, err_msg=site)
        checked += np.size(mean)
    assert checked == 22  # 2 class + 2 Bernoulli + 6 categorical + 4 Gaussian + 2 Poisson + 6 words


def test_mcmc_predictive_agrees_with_exact_bayes(mcmc_fit):
    X, y, features, clf = mcmc_fit
    rng = np.random.default_rng(5)
    X_new, _, _ = mixed_data(seed=7, n=60)
    X_new.loc[rng.random(60) < 0.2, "size"] = np.nan
    exact = bnb.NaiveBayes(features, method="bayes").fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X_new), exact.predict_proba(X_new), atol=0.02)
    assert (clf.predict(X_new) == exact.predict(X_new)).mean() > 0.95


def test_exact_sampler_matches_the_closed_form(x64):
    X, y, features = mixed_data()
    clf = bnb.NaiveBayes(features, method="bayes").fit(X, y)
    draws = clf.sample_posterior(20000, seed=3)
    for site, (mean, sd) in closed_form_moments(clf).items():
        d = draws[site][0]
        np.testing.assert_allclose(d.mean(axis=0), mean, atol=5 * np.max(sd) / np.sqrt(20000)
                                   + 1e-12, err_msg=site)
        np.testing.assert_allclose(d.std(axis=0), sd, rtol=0.05, err_msg=site)
    # and its predictive over draws converges to the exact predictive
    u = clf.predict_uncertainty(X.head(20), draws=draws)
    np.testing.assert_allclose(u["proba"], clf.predict_proba(X.head(20)), atol=0.01)


def test_predict_uncertainty_shapes_and_ranges(mcmc_fit, monkeypatch):
    X, y, features, clf = mcmc_fit
    u = clf.predict_uncertainty(X.head(25), interval=0.8)
    assert u["proba"].shape == u["lower"].shape == u["upper"].shape == (25, 2)
    assert np.all(u["lower"] <= u["upper"])
    np.testing.assert_allclose(u["proba"].sum(axis=1), 1.0)
    assert np.all(u["mutual_info"] >= 0) and np.all(u["mutual_info"] <= u["entropy"] + 1e-9)
    assert np.all(u["entropy"] <= np.log(2) + 1e-12)
    # batching over rows (bounded memory) does not change the answer
    import bayesnb.inference as inference

    monkeypatch.setattr(inference, "_DRAWS_BUDGET", 2000 * 10)
    small = clf.predict_uncertainty(X.head(25), interval=0.8)
    for key in u:  # float32 kernels: a different batch shape reorders XLA's reductions
        np.testing.assert_allclose(small[key], u[key], rtol=1e-4, atol=1e-6)


def test_arviz_export_has_named_dims_and_plots(mcmc_fit, tmp_path):
    import arviz as az
    import matplotlib.pyplot as plt

    X, y, features, clf = mcmc_fit
    idata = clf.to_arviz()
    for group in ("posterior", "sample_stats", "prior", "observed_data"):
        assert hasattr(idata, group), group
    post = idata.posterior
    assert list(post["class"].values) == ["a", "b"]
    assert list(post["categorical.colour.probs"].dims) == ["chain", "draw", "class",
                                                           "colour_level"]
    assert list(post["colour_level"].values) == ["blue", "green", "red"]
    assert list(post["multinomial_feature"].values) == ["w0", "w1", "w2"]
    assert post["gaussian.mean"].sizes == {"chain": 2, "draw": NUM_SAMPLES, "class": 2,
                                           "gaussian_feature": 1}
    summary = az.summary(idata, var_names=["class_probs", "bernoulli.theta"])
    assert "class_probs[a]" in summary.index and "bernoulli.theta[b, flag]" in summary.index
    for plot in (lambda: az.plot_posterior(idata, var_names=["class_probs"]),
                 lambda: az.plot_forest(idata, var_names=["poisson.rate"]),
                 lambda: az.plot_trace(idata, var_names=["gaussian.mean"])):
        plot()
        path = tmp_path / "plot.png"
        plt.gcf().savefig(path)
        plt.close("all")
        assert path.stat().st_size > 1000
    # the exact sampler lays beside MCMC in one forest plot
    exact = bnb.NaiveBayes(features, method="bayes").fit(X, y).to_arviz(prior_draws=None)
    az.plot_forest([idata, exact], model_names=["NUTS", "exact"], var_names=["class_probs"])
    plt.close("all")


def test_short_chains_warn_and_name_the_worst_parameters():
    X, y, features = mixed_data()  # mcmc_fit's rows: its statistics' kernels are compiled
    with pytest.warns(ConvergenceWarning, match=r"ESS as low as .*\(.*\["):
        bnb.NaiveBayes(features, method="mcmc", num_warmup=20, num_samples=30, num_chains=1,
                       progress_bar=False).fit(X, y)


def test_mcmc_refuses_improper_class_prior():
    X, y, features = mixed_data()  # mcmc_fit's rows: its statistics' kernels are compiled
    with pytest.raises(ValueError, match="class_alpha > 0"):
        bnb.NaiveBayes(features, method="mcmc", class_alpha=0.0, progress_bar=False).fit(X, y)


def test_prior_and_posterior_predictive_simulation(x64):
    X, y, features = mixed_data()
    clf = bnb.NaiveBayes(features, method="bayes").fit(X, y)
    # one simulation (every new number of rows or draws compiles the simulation program again)
    sim = big = clf.simulate(200, num_draws=40, seed=3)  # average over posterior draws
    assert sim.shape == (8000, X.shape[1] + 2)
    assert list(sim.columns) == [*X.columns, "y", "draw"]
    assert set(sim["colour"]) <= {"red", "green", "blue"}
    assert set(sim["y"]) <= {"a", "b"} and set(sim["draw"]) == set(range(40))
    assert set(sim["flag"]) <= {0, 1}
    for col in ("visits", "w0", "w1", "w2"):
        assert sim[col].dtype.kind == "i" and (sim[col] >= 0).all()
    assert sim["size"].dtype.kind == "f"
    # the posterior predictive reproduces the data's class-conditional structure
    for label in ("a", "b"):
        train, fake = X[y == label], big[big["y"] == label]
        assert abs(fake["size"].mean() - train["size"].mean()) < 0.25
        assert abs(fake["visits"].mean() - train["visits"].mean()) < 0.3
        assert abs(fake["flag"].mean() - train["flag"].mean()) < 0.1
    assert abs((big["y"] == "b").mean() - (y == "b").mean()) < 0.1
    # a document length is not modelled: rows have the requested number of words (a new
    # total_count is a new program, compiled once)
    words = clf.simulate(200, num_draws=40, seed=3, total_count=25)[["w0", "w1", "w2"]]
    assert len(words) == 8000 and (words.sum(axis=1) == 25).all()
    # the shape of to_arviz's prior predictive in test_arviz_predictive_groups (compiled once)
    prior = clf.simulate(15, posterior=False, num_draws=200)
    assert prior.shape == (3000, X.shape[1] + 2) and set(prior["colour"]) <= {"red", "green",
                                                                                "blue"}


def test_a_model_of_the_same_structure_simulates_with_the_program_already_compiled(
        monkeypatch):
    from bayesnb.fast import _compiled
    from bayesnb.model import _simulated

    monkeypatch.setattr(_compiled, "MAX_EXECUTABLES", 10**6)  # nothing dropped meanwhile
    rng = np.random.default_rng(4)
    y = np.arange(60) % 2
    X = rng.normal(y[:, None] * [1.0, -1.0], 1.0)
    near = bnb.NaiveBayes(bnb.Gaussian(), method="bayes").fit(X, y).simulate(30, seed=1)
    held = _simulated._cache_size()
    # other data, the same structure and hyperparameters: the same program, its own draws
    far = bnb.NaiveBayes(bnb.Gaussian(), method="bayes").fit(X + 100.0, y).simulate(30, seed=1)
    assert _simulated._cache_size() == held
    assert abs(near[[0, 1]].to_numpy().mean()) < 2.0
    assert abs(far[[0, 1]].to_numpy().mean() - 100.0) < 2.0


def test_mcmc_simulation_uses_the_nuts_draws(mcmc_fit):
    X, y, features, clf = mcmc_fit
    sim = clf.simulate(20, num_draws=4)
    assert sim.shape == (80, X.shape[1] + 2)


def test_semi_supervised_unlabeled_rows_sharpen_the_posterior():
    rng = np.random.default_rng(0)

    def draw(n):
        labels = rng.integers(0, 2, n)
        return rng.normal(np.where(labels == 0, -1.0, 1.0)[:, None], 1.0, (n, 2)), labels

    X_l, y_l = draw(8)
    X_u, _ = draw(300)
    settings = dict(method="mcmc", num_warmup=200, num_samples=300, num_chains=1,
                    progress_bar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        labeled = bnb.NaiveBayes(bnb.Gaussian(rate=1.0), **settings).fit(X_l, y_l)
        semi = bnb.NaiveBayes(bnb.Gaussian(rate=1.0), **settings).fit(
            np.vstack([X_l, X_u]), np.concatenate([y_l.astype(float), np.full(300, np.nan)]))
    assert semi.n_unlabeled_ == 300
    means_l = labeled.draws_["gaussian.mean"].reshape(-1, 2, 2)
    means_s = semi.draws_["gaussian.mean"].reshape(-1, 2, 2)
    truth = np.array([[-1.0, -1.0], [1.0, 1.0]])
    # the known answer: unlabeled rows pull the class means to the truth and shrink the sd
    assert np.all(np.abs(means_s.mean(axis=0) - truth) < 0.3)
    assert np.all(means_s.std(axis=0) < 0.5 * means_l.std(axis=0))
    assert np.abs(means_s.mean(axis=0) - truth).mean() < np.abs(means_l.mean(axis=0)
                                                                 - truth).mean()
    with pytest.raises(ValueError, match="missing labels"):
        bnb.NaiveBayes(method="bayes").fit(np.vstack([X_l, X_u[:3]]),
                                           np.concatenate([y_l, [np.nan] * 3]))


def test_learned_smoothing_beats_a_fixed_alpha_on_held_out_data():
    import numpyro.distributions as dist
    from sklearn.metrics import log_loss

    rng = np.random.default_rng(0)
    theta = rng.dirichlet(np.full(60, 0.1), size=2)  # each class uses few words: alpha << 1

    def corpus(n):
        labels = rng.integers(0, 2, n)
        return np.stack([rng.multinomial(3, theta[k]) for k in labels]).astype(float), labels

    X, y = corpus(40)
    X_test, y_test = corpus(3000)
    fixed = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="bayes").fit(X, y)
    learned = bnb.NaiveBayes(bnb.Multinomial(alpha=dist.Gamma(1.0, 1.0)), method="mcmc",
                             num_warmup=200, num_samples=200, num_chains=1, progress_bar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        learned.fit(X, y)
    alpha = learned.draws_["multinomial.alpha"]
    assert alpha.mean() < 0.5  # the data ask for much less smoothing than Laplace's 1
    assert log_loss(y_test, learned.predict_proba(X_test)) < \
        0.9 * log_loss(y_test, fixed.predict_proba(X_test))
    # a hyperprior has no closed form: the other methods say so
    for method in ("mean", "bayes"):
        with pytest.raises(ValueError, match="hyperprior on alpha"):
            bnb.NaiveBayes(bnb.Multinomial(alpha=dist.Gamma(1.0, 1.0)), method=method).fit(X, y)
    with pytest.raises(ValueError, match="hyperprior"):
        learned.log_evidence()


def test_arviz_1x_datatree_export_when_arviz_base_is_installed():
    azb = pytest.importorskip("arviz_base")
    X, y, features = mixed_data()  # mcmc_fit's rows: its statistics' kernels are compiled
    clf = bnb.NaiveBayes(features, method="bayes").fit(X, y)
    tree = clf.to_arviz(backend=azb, prior_draws=100)
    assert {"posterior", "prior", "observed_data"} <= set(tree.children)
    post = tree["posterior"]
    assert list(post["class"].values) == ["a", "b"]
    assert post["categorical.colour.probs"].dims == ("chain", "draw", "class", "colour_level")


def test_non_conjugate_parameter_prior_matches_numerical_integration():
    import numpyro.distributions as dist
    from scipy import integrate
    from scipy.special import logit

    rng = np.random.default_rng(4)
    y = np.repeat([0, 1], [12, 9])
    X = (rng.random((21, 2)) < np.where(y[:, None] == 0, 0.2, 0.7)).astype(float)
    prior = dist.TransformedDistribution(dist.Normal(0.0, 1.5),
                                         dist.transforms.SigmoidTransform())  # logit-normal
    clf = bnb.NaiveBayes(bnb.Bernoulli(), method="mcmc", priors={"bernoulli.theta": prior},
                         num_warmup=300, num_samples=600, num_chains=2, seed=3,
                         progress_bar=False).fit(X, y)
    theta = clf.draws_["bernoulli.theta"].reshape(-1, 2, 2)
    summary = clf.mcmc_summary()
    for k in range(2):
        for j in range(2):
            ones = X[y == k, j].sum()
            zeros = (y == k).sum() - ones

            def density(t, ones=ones, zeros=zeros):  # logit-normal prior x likelihood
                z = logit(t)
                return np.exp(-z * z / (2 * 1.5**2)) / (t * (1 - t)) * t**ones * (1 - t)**zeros

            norm = integrate.quad(density, 0, 1)[0]
            mean = integrate.quad(lambda t, d=density: t * d(t), 0, 1)[0] / norm
            mcse = summary.loc[f"bernoulli.theta[{k}, {j}]", "mcse_mean"]
            assert abs(theta[:, k, j].mean() - mean) < 4 * mcse
    with pytest.raises(ValueError, match="no closed form"):
        bnb.NaiveBayes(bnb.Bernoulli(), method="bayes",
                       priors={"bernoulli.theta": prior}).fit(X, y)
    with pytest.raises(ValueError, match="support"):
        bnb.NaiveBayes(bnb.Bernoulli(), method="mcmc", progress_bar=False,
                       priors={"bernoulli.theta": dist.Normal(0, 1)}).fit(X, y)
    with pytest.raises(ValueError, match="not a parameter site"):
        bnb.NaiveBayes(bnb.Bernoulli(), method="mcmc", progress_bar=False,
                       priors={"poisson.rate": dist.LogNormal(0, 1)}).fit(X, y)


def test_arviz_predictive_groups(x64):
    X, y, features = mixed_data()  # the data (and shapes) of the other float64 tests
    clf = bnb.NaiveBayes(features, method="bayes").fit(X, y)
    idata = clf.to_arviz(predictive_rows=15, prior_draws=50)
    for group in ("posterior", "prior", "posterior_predictive", "prior_predictive"):
        assert hasattr(idata, group), group
    pp = idata.posterior_predictive
    assert pp["y"].dims == ("chain", "draw", "row") and pp["y"].sizes["row"] == 15
    assert list(pp["bernoulli.x"].dims) == ["chain", "draw", "row", "bernoulli_feature"]
    assert list(pp["bernoulli_feature"].values) == ["flag"]
    assert set(np.unique(pp["categorical.colour.x"].values)) <= {0, 1, 2}


def test_categorical_columns_of_one_level_count_are_sampled_as_one_site(monkeypatch):
    """NUTS samples the Categorical columns that share a level count as one Dirichlet site
    (``CategoricalFast.sample_params_batched``: the same density, a few sites to trace and
    compile, not one a column) and hands the draws back under each column's own site:
    named by column, each within 4 MCSE of its exact Dirichlet posterior mean."""
    from bayesnb import _nuts

    rng = np.random.default_rng(5)
    n = 120
    y = rng.choice(["a", "b"], n)
    k = (y == "b").astype(int)
    X = pd.DataFrame({
        "c1": rng.choice(["p", "q", "r"], n), "two": rng.choice(["s", "t"], n),
        "c2": np.where(k == 1, rng.choice(["p", "q", "r"], n), "p"),
        "c3": rng.choice(["x", "y", "z"], n, p=[0.6, 0.3, 0.1])})
    seen = []
    real = _nuts.sample

    def spy(model, static, data, **settings):
        draws, extra = real(model, static, data, **settings)
        seen.append({name: draws[name].shape[2:] for name in draws})  # the sampled sites
        return draws, extra

    monkeypatch.setattr(_nuts, "sample", spy)
    clf = bnb.NaiveBayes(bnb.Categorical(), method="mcmc", num_warmup=300, num_samples=500,
                         num_chains=2, seed=2, progress_bar=False).fit(X, y)
    assert seen == [{"class_probs": (2,), "categorical.#3levels.probs": (2, 3, 3),
                     "categorical.two.probs": (2, 2)}]
    moments = closed_form_moments(clf)
    assert set(clf.draws_) == set(moments) == {
        "class_probs", "categorical.c1.probs", "categorical.two.probs",
        "categorical.c2.probs", "categorical.c3.probs"}
    summary = clf.mcmc_summary()
    for site, (mean, sd) in moments.items():
        draws = clf.draws_[site].reshape((-1,) + clf.draws_[site].shape[2:])
        assert draws.shape[1:] == np.shape(mean), site
        rows = summary[summary.index.str.startswith(site + "[") | (summary.index == site)]
        mcse = rows["mcse_mean"].to_numpy().reshape(np.shape(mean))
        np.testing.assert_array_less(np.abs(draws.mean(axis=0) - mean), 4 * mcse + 1e-12,
                                     err_msg=site)
        np.testing.assert_allclose(draws.std(axis=0), sd, rtol=0.15, err_msg=site)


@pytest.mark.parametrize("posterior", [True, False])
def test_categorical_columns_of_one_level_count_are_simulated_as_one_site(posterior,
                                                                         monkeypatch):
    """``simulate`` draws a Categorical's columns of one level count as one site too (a
    site a column compiled for 0.4 s each): the program's sites, and each column's level
    frequencies per class against its exact predictive (posterior: the Dirichlet posterior's
    mean; prior: uniform)."""
    from bayesnb import model

    rng = np.random.default_rng(6)
    n = 90
    y = rng.choice(["a", "b"], n)
    X = pd.DataFrame({"c1": rng.choice(["p", "q", "r"], n), "two": rng.choice(["s", "t"], n),
                      "c2": np.where(y == "b", rng.choice(["p", "q", "r"], n), "p"),
                      "c3": rng.choice(["x", "y", "z"], n, p=[0.6, 0.3, 0.1])})
    clf = bnb.NaiveBayes(bnb.Categorical(), method="bayes").fit(X, y)
    seen = []
    real = model._simulated

    def spy(*args):
        out = real(*args)
        seen.append({k for k in out if k.endswith(".x")})
        return out

    monkeypatch.setattr(model, "_simulated", spy)
    sim = clf.simulate(60, posterior=posterior, num_draws=400, seed=1)
    assert seen == [{"categorical.#3levels.x", "categorical.two.x"}]
    assert list(sim.columns) == ["c1", "two", "c2", "c3", "y", "draw"]
    post = clf.posterior_[0]
    alpha = np.asarray(post.alpha if posterior else clf.fitted_.blocks[0].prior.alpha,
                       dtype=float)
    alpha = np.broadcast_to(alpha, (2,) + alpha.shape[-1:])
    edges = np.asarray(post.offset).astype(int)
    for j, (col, levels) in enumerate(zip(X.columns, clf.blocks_[0].schema.levels,
                                          strict=True)):
        part = alpha[:, edges[j]:edges[j] + len(levels)]
        exact = part / part.sum(axis=1, keepdims=True)
        for k, label in enumerate(clf.classes_):
            values = sim.loc[sim["y"] == label, col]
            freq = [np.mean(values == v) for v in levels]
            np.testing.assert_allclose(freq, exact[k], atol=0.06, err_msg=f"{col}, {label}")
