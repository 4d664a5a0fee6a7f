"""Arguments refused with a ValueError that names them (report methods' counts and draws,
``priors=`` values, the estimator's boolean switches), a closed output pipe that is not an
error for the command line, one ``AbsentColumnWarning`` per prediction, and MCMC on a
Categorical column whose levels print alike."""

import os
import re
import subprocess
import sys
import warnings

import arviz as az
import numpy as np
import numpyro.distributions as dist
import pandas as pd
import pytest
import scipy.stats

import bayesnb as bnb
from bayesnb._blocks import AbsentColumnWarning
from bayesnb.datasets import load_playtennis
from bayesnb.inference import ConvergenceWarning, level_coords

SHORT_MCMC = dict(method="mcmc", num_warmup=50, num_samples=50, num_chains=1,
                  progress_bar=False)


@pytest.fixture(scope="module")
def tennis():
    days, play = load_playtennis()
    return days, bnb.NaiveBayes(method="bayes").fit(days, play)


# ---------------------------------------------------------------- report methods' counts
@pytest.mark.parametrize("value", [0, -1, 2.0, "5", True, None])
def test_sample_posterior_counts_must_be_positive_integers(tennis, value):
    _, clf = tennis
    with pytest.raises(ValueError, match="num_draws must be a positive integer, got "
                                         + re.escape(repr(value))):
        clf.sample_posterior(value)
    with pytest.raises(ValueError, match="num_chains must be a positive integer"):
        clf.sample_posterior(10, num_chains=value)


@pytest.mark.parametrize("value", [0, -5, 1.5])
def test_predict_uncertainty_num_draws_must_be_a_positive_integer(tennis, value):
    days, clf = tennis
    with pytest.raises(ValueError, match="num_draws must be a positive integer, got "
                                         + re.escape(repr(value))):
        clf.predict_uncertainty(days.head(2), num_draws=value)


def test_predict_uncertainty_names_the_sites_draws_lack(tennis):
    days, clf = tennis
    draws = {"class_probs": np.full((1, 3, 2), 0.5)}
    with pytest.raises(ValueError, match=r"draws lacks the site\(s\) \['categorical\.Outlook"
                                         r"\.probs'.*needs \['class_probs', "):
        clf.predict_uncertainty(days.head(2), draws=draws)
    with pytest.raises(ValueError, match="draws must be a mapping"):
        clf.predict_uncertainty(days.head(2), draws=[np.zeros(3)])


def _draws_with(draws, site, value):
    return {**draws, site: value}


def test_predict_uncertainty_refuses_draws_of_another_layout_or_support(tennis):
    """User draws of the wrong shape (fewer draws at one site, a missing level, no chain
    axis) or outside a parameter's support (a negative probability, a class-probability row
    not summing to 1, NaN, a negative Poisson rate) name the site and the problem; the
    library's own draws, with a rate drawn as exactly 0, pass."""
    days, clf = tennis
    draws = clf.sample_posterior(6, num_chains=2, seed=0)
    site = "categorical.Outlook.probs"
    bad = {"(2, 4, 2, 3)": _draws_with(draws, site, draws[site][:, :4]),
           "(2, 6, 2, 2)": _draws_with(draws, site, draws[site][..., :2]),
           "(6, 2, 3)": _draws_with(draws, site, draws[site][0]),
           "(2, 6, 3)": _draws_with(draws, "class_probs", np.full((2, 6, 3), 1 / 3))}
    for shape, given in bad.items():
        with pytest.raises(ValueError, match=re.escape(f"has shape {shape}")):
            clf.predict_uncertainty(days.head(2), draws=given)
        with pytest.raises(ValueError, match=re.escape(f"has shape {shape}")):
            clf.to_arviz(given, prior_draws=None)
    negative = draws[site].copy()
    negative[1, 2, 0] = [-0.1, 0.6, 0.5]
    unnormalised = draws["class_probs"] * 1.01
    missing = draws[site].copy()
    missing[0, 0, 1, 2] = np.nan
    for name, given in ((site, negative), ("class_probs", unnormalised), (site, missing)):
        with pytest.raises(ValueError, match=re.escape(f"draws[{name!r}] holds a value "
                                                       "outside the parameter's support")):
            clf.predict_uncertainty(days.head(2), draws=_draws_with(draws, name, given))
    rng = np.random.default_rng(1)
    y = np.arange(40) % 2
    counts = np.column_stack([rng.poisson(3.0, 40), rng.poisson(1.0 + y)])
    poisson = bnb.NaiveBayes(bnb.Poisson(), method="bayes").fit(counts, y)
    rates = poisson.sample_posterior(5, seed=0)
    zero = rates["poisson.rate"].copy()
    zero[0, 1, 0, 0] = 0.0  # a gamma draw underflowing: the support's boundary, kept
    with np.errstate(divide="ignore"):  # log 0 = -inf: that draw rules out counts above 0
        proba = poisson.predict_uncertainty(counts[:3], draws=_draws_with(
            rates, "poisson.rate", zero))["proba"]
    assert np.isfinite(proba).all() and proba.shape == (3, 2)
    zero[0, 1, 0, 0] = -1e-3
    with pytest.raises(ValueError, match=r"'poisson\.rate'\] holds a value outside .* at "
                                         r"index \(0, 1, 0, 0\)"):
        poisson.predict_uncertainty(counts[:3], draws=_draws_with(rates, "poisson.rate", zero))


def test_draws_of_many_sites_are_checked_once_per_support_and_shape(monkeypatch):
    """A Categorical of 300 columns has 300 probability sites: their support is checked
    stacked, once per (support, shape) (a check per site, and the support read from a
    posterior split in JAX, took 57 s at 3,000 columns), and a value outside it still names
    its own site and index."""
    from bayesnb import reports

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (60, 300))
    X[:3] = np.arange(3)[:, None]  # every level in every column
    y = np.arange(60) % 2
    clf = bnb.NaiveBayes(bnb.Categorical(), method="bayes").fit(X, y)
    draws = clf.sample_posterior(4, seed=0)
    checked = []
    check = reports._check_support
    monkeypatch.setattr(reports, "_check_support",
                        lambda support, sites, d: (checked.append(len(sites)),
                                                   check(support, sites, d)))
    clf.predict_uncertainty(X[:2], draws=draws)
    assert sorted(checked) == [1, 300]  # class_probs; the 300 columns' probs
    site = "categorical.217.probs"
    bad = draws[site].copy()
    bad[0, 3, 1] = [0.5, 0.6, -0.1]
    with pytest.raises(ValueError, match=re.escape(f"draws[{site!r}] holds a value outside "
                                                   "the parameter's support")
                       + r".* at index \(0, 3, 1\)"):  # the simplex: a row
        clf.predict_uncertainty(X[:2], draws=_draws_with(draws, site, bad))


def test_blocks_declared_column_by_column_share_their_supports(monkeypatch):
    """Blocks that join (one family, one scalar prior: 40 one-column Gaussians) read their
    parameters' supports from one posterior (a posterior's distributions per block were 1.2
    s of a 3,000-block ``to_arviz``); a value outside them still names its own block's
    site."""
    from bayesnb.families.gaussian import Gaussian

    calls = []
    real = Gaussian.posterior_distributions
    monkeypatch.setattr(Gaussian, "posterior_distributions",
                        staticmethod(lambda post: calls.append(1) or real(post)))
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(50, 40)), columns=[f"g{j}" for j in range(40)])
    y = np.arange(50) % 2
    clf = bnb.NaiveBayes({c: bnb.Gaussian() for c in X.columns}, method="bayes").fit(X, y)
    draws = clf.sample_posterior(4, seed=0)
    clf.predict_uncertainty(X.head(2), draws=draws)
    assert len(calls) == 1
    site = [s for s in draws if s.endswith(".precision")][-1]
    bad = draws[site].copy()
    bad[0, 2, 1, 0] = -1.0
    with pytest.raises(ValueError, match=re.escape(f"draws[{site!r}] holds a value outside "
                                                   "the parameter's support")):
        clf.predict_uncertainty(X.head(2), draws=_draws_with(draws, site, bad))


def test_predict_uncertainty_takes_complete_draws(tennis):
    days, clf = tennis
    draws = clf.sample_posterior(50, seed=1)
    got = clf.predict_uncertainty(days.head(2), draws=draws)
    assert np.allclose(got["proba"].sum(axis=1), 1.0)


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(n_rows=0), "n_rows must be a positive integer, got 0"),
    (dict(n_rows=-1), "n_rows must be a positive integer, got -1"),
    (dict(n_rows=2.5), "n_rows must be a positive integer, got 2.5"),
    (dict(n_rows=3, num_draws=0), "num_draws must be a positive integer, got 0"),
    (dict(n_rows=3, total_count=-1), "total_count must be a positive integer, got -1"),
    (dict(n_rows=3, total_count=0), "total_count must be a positive integer, got 0"),
])
def test_simulate_counts_must_be_positive_integers(tennis, kwargs, message):
    _, clf = tennis
    with pytest.raises(ValueError, match=re.escape(message)):
        clf.simulate(**kwargs)


def test_simulate_still_takes_numpy_integers(tennis):
    _, clf = tennis
    rows = clf.simulate(np.int64(3), num_draws=np.int32(2), seed=0)
    assert len(rows) == 6 and rows["draw"].tolist() == [0, 0, 0, 1, 1, 1]


@pytest.mark.parametrize("name", ["prior_draws", "predictive_rows"])
def test_to_arviz_counts_must_be_positive_integers(tennis, name):
    _, clf = tennis
    with pytest.raises(ValueError, match=f"{name} must be a positive integer, got -1"):
        clf.to_arviz(**{name: -1})


# ---------------------------------------------------------------- priors= values
@pytest.mark.parametrize(("prior", "shown"), [
    (3.0, "a float: 3.0"),
    ("Normal(0,1)", "a str: 'Normal(0,1)'"),
    (scipy.stats.norm(0, 10), "a scipy.stats."),
])
def test_priors_values_must_be_numpyro_distributions(prior, shown):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"g": rng.normal(size=40)})
    y = rng.choice(["a", "b"], 40)
    clf = bnb.NaiveBayes(priors={"gaussian.mean": prior}, **SHORT_MCMC)
    with pytest.raises(ValueError, match=r"priors\['gaussian\.mean'\] must be a NumPyro "
                                         r"distribution.*got " + re.escape(shown)):
        clf.fit(X, y)


def test_priors_must_be_a_mapping():
    X = pd.DataFrame({"g": np.arange(8.0)})
    with pytest.raises(ValueError, match="priors must be a mapping"):
        bnb.NaiveBayes(priors=[dist.Normal(0.0, 1.0)], **SHORT_MCMC).fit(X, ["a", "b"] * 4)


def test_a_non_distribution_prior_is_named_under_any_method():
    """Under a closed-form method too (which refuses replacement priors), the value's type is
    what is wrong first."""
    X = pd.DataFrame({"g": np.arange(8.0)})
    with pytest.raises(ValueError, match=r"priors\['gaussian\.mean'\].*got a float"):
        bnb.NaiveBayes(priors={"gaussian.mean": 0.0}, method="bayes").fit(X, ["a", "b"] * 4)


def test_a_distribution_of_the_wrong_support_is_still_refused_by_its_support():
    """The support was compared as text inside the traced program: the message printed JAX
    tracers for the bounds, and a truncated or bounded prior on a rate (TruncatedNormal(low=0),
    Uniform(0, 100)) was refused (hunt 48). A support within the parameter's is taken."""
    X = pd.DataFrame({"g": np.arange(8.0)})
    clf = bnb.NaiveBayes(priors={"gaussian.precision": dist.Normal(0.0, 1.0)}, **SHORT_MCMC)
    with pytest.raises(ValueError, match=r"prior for 'gaussian.precision': its support is Real "
                                         r"\[-inf, inf\], not within the parameter's, Positive "
                                         r"\[0, inf\]\.$"):
        clf.fit(X, ["a", "b"] * 4)
    counts = pd.DataFrame({"c": np.random.default_rng(0).poisson(3, 40)})
    y = ["a", "b"] * 20
    for prior in (dist.TruncatedNormal(5.0, 2.0, low=0.0), dist.Uniform(0.0, 100.0)):
        with warnings.catch_warnings():  # 50 draws: their ESS is not the point here
            warnings.simplefilter("ignore", bnb.ConvergenceWarning)
            fitted = bnb.NaiveBayes(bnb.Poisson(), priors={"poisson.rate": prior},
                                    **SHORT_MCMC).fit(counts, y)
        rates = np.asarray(fitted.draws_["poisson.rate"])
        assert rates.min() > 0 and np.all(np.isfinite(rates))
    with pytest.raises(ValueError, match=r"its support is Interval \[-1, 100\], not within"):
        bnb.NaiveBayes(bnb.Poisson(), priors={"poisson.rate": dist.Uniform(-1.0, 100.0)},
                       **SHORT_MCMC).fit(counts, y)
    # integers within the bounds are no density on a rate; class_probs needs a simplex; a
    # pooled site is refused for its pooling (review of the change: hunt 49)
    refused = [({"poisson.rate": dist.Poisson(3.0)}, "IntegerNonnegative"),
               ({"class_probs": dist.Normal(0.5, 1.0).expand([2]).to_event(1)},
                "not within the parameter's, Simplex")]
    for priors, message in refused:
        with pytest.raises(ValueError, match=message):
            bnb.NaiveBayes(bnb.Poisson(), priors=priors, **SHORT_MCMC).fit(counts, y)
    levels = pd.DataFrame({"c": np.random.default_rng(0).choice(["u", "v", "w"], 40)})
    with pytest.raises(ValueError, match="whose Categorical block has pooling"):
        bnb.NaiveBayes(bnb.Categorical(pooling="partial"), **SHORT_MCMC, priors={
            "categorical.c.shared_mean": dist.Dirichlet(np.ones(3))}).fit(levels, y)


# ---------------------------------------------------------------- the estimator's switches
@pytest.mark.parametrize("name", ["infer_counts", "use_kernel"])
@pytest.mark.parametrize("value", ["False", "True", 0, 1, None])
def test_switches_must_be_booleans(name, value):
    X = pd.DataFrame({"n": [1, 2, 3, 4, 0, 2, 5, 1]})
    y = ["a", "b"] * 4
    with pytest.raises(ValueError, match=f"{name} must be True or False, got "
                                         + re.escape(repr(value))):
        bnb.NaiveBayes(**{name: value}).fit(X, y)
    with pytest.raises(ValueError, match=rf"{name} must be True or False"):
        bnb.NaiveBayes(**{name: value}).partial_fit(X, y, classes=["a", "b"])


@pytest.mark.parametrize(("kwargs", "family"), [
    (dict(infer_counts=np.bool_(True)), "Poisson"), (dict(infer_counts=False), "Gaussian"),
    (dict(use_kernel=True), "KernelDensity"), (dict(use_kernel=np.bool_(False)), "Gaussian"),
])
def test_real_booleans_switch(kwargs, family):
    X = pd.DataFrame({"n": [1, 2, 3, 4, 0, 2, 5, 1]})
    clf = bnb.NaiveBayes(**kwargs).fit(X, ["a", "b"] * 4)
    assert [type(b.family).__name__ for b in clf.blocks_] == [family]


# ---------------------------------------------------------------- the command line
def test_a_closed_output_pipe_is_not_an_error():
    """``bayesnb compare titanic | head -1``: the reader stops after a line; the command
    exits 0 with nothing on stderr (no "Broken pipe")."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # the first line leaves before the CV runs
    with subprocess.Popen(
            [sys.executable, "-m", "bayesnb.cli", "compare", "titanic", "--cv", "2",
             "--methods", "ml", "--no-progress"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:
        try:
            first = proc.stdout.readline()
            proc.stdout.close()  # as `head -1` does, while the command still has to write
            err = proc.stderr.read().decode()
            code = proc.wait(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert first.startswith(b"titanic:")
    assert code == 0, err
    assert "Broken pipe" not in err and "Errno 32" not in err, err


# ---------------------------------------------------------------- absent columns: one warning
@pytest.mark.parametrize("method", ["ml", "bayes", "mcmc"])
def test_an_absent_column_of_a_mixed_model_warns_once(method):
    """Blocks scored apart (here the Poisson block on the host), or a float64 retry of the
    draws' predictive, read X again: still one warning per prediction."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.normal(size=40), "city": rng.choice(["A", "B"], 40),
                      "visits": rng.poisson(3.0, size=40)})
    y = rng.choice(["p", "q"], 40)
    settings = SHORT_MCMC if method == "mcmc" else dict(method=method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = bnb.NaiveBayes({"age": bnb.Gaussian(), "city": bnb.Categorical(),
                              "visits": bnb.Poisson()}, **settings).fit(X, y)
    lacking = X.drop(columns="city").head(3)
    calls = ["predict_proba", "predict_joint_log_proba"] + (
        ["predict_uncertainty"] if method != "ml" else [])
    for predict in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = getattr(clf, predict)(lacking)
        absent = [w for w in caught if issubclass(w.category, AbsentColumnWarning)]
        assert len(absent) == 1, (predict, [str(w.message) for w in absent])
        assert "['city']" in str(absent[0].message)
        if predict == "predict_proba" and method != "mcmc":  # a model fitted without it
            expected = bnb.NaiveBayes({"age": bnb.Gaussian(), "visits": bnb.Poisson()},
                                      method=method).fit(X.drop(columns="city"), y)
            assert np.allclose(got, expected.predict_proba(lacking))


# ---------------------------------------------------------------- levels that print alike
def test_level_coords_tell_levels_that_print_alike_apart():
    assert level_coords(("a", "b")) == ["a", "b"]
    assert level_coords((1, 2)) == [1, 2]
    assert level_coords((1, "1", 2)) == ["1 (int)", "1 (str)", "2"]

    def printing_one():  # a new class each call, all named "One"
        class One:
            def __str__(self):
                return "1"
        return One()

    assert level_coords((1, "1", printing_one())) == ["1 (int)", "1 (str)", "1 (One)"]
    # same string, same type name: told apart by position
    assert level_coords(("a", printing_one(), printing_one())) == ["a", "1 (#1)", "1 (#2)"]


def test_mcmc_and_arviz_with_levels_that_print_alike():
    rng = np.random.default_rng(0)
    y = rng.choice(["a", "b"], 60)
    X = pd.DataFrame({"c": pd.Series([1, "1", 2] * 20, dtype=object)})
    exact = bnb.NaiveBayes(method="bayes").fit(X, y)
    idata = exact.to_arviz(seed=0)
    assert idata.posterior.coords["c_level"].values.tolist() == ["1 (int)", "1 (str)", "2"]
    table = az.summary(idata)
    assert "categorical.c.probs[a, 1 (str)]" in table.index
    with pytest.warns(ConvergenceWarning):
        clf = bnb.NaiveBayes(**SHORT_MCMC).fit(X, y)
    summary = clf.mcmc_summary()
    assert {"categorical.c.probs[a, 1 (int)]", "categorical.c.probs[b, 2]"} <= set(summary.index)
    assert np.allclose(clf.predict_proba(X.head(3)).sum(axis=1), 1.0)


def test_a_hyperparameter_of_the_wrong_sign_is_told_so_without_the_float32_hint():
    """The float32 range is named only where the range failed, not the sign."""
    X, y = np.ones((4, 2)), [0, 1, 0, 1]
    with pytest.raises(ValueError, match=r"column 0: Multinomial: alpha must be finite and "
                                         r"positive, got np.float64\(0.0\) \(0 gives no proper "
                                         r"prior; the unsmoothed, maximum-likelihood estimates "
                                         r"are method='ml'\)\.$"):
        bnb.NaiveBayes(bnb.Multinomial(alpha=0.0)).fit(X, y)
    with pytest.raises(ValueError, match=r"alpha must be finite and positive, got "
                                         r"np.float64\(-1.0\)\.$"):  # no level layout here
        bnb.NaiveBayes(bnb.Categorical(alpha=-1.0)).fit(X.astype(str), y)
    with pytest.raises(ValueError, match=r"kappa must be finite \(within float32 range: enable "
                                         r"x64 for larger\) and positive, got np.float64\(1e\+30"):
        bnb.NaiveBayes(bnb.Gaussian(kappa=1e30)).fit(X, y)


def test_a_class_of_prior_zero_is_never_predicted_and_warns_nothing():
    rng = np.random.default_rng(0)
    X, y = rng.poisson(2, (30, 3)), np.array(["a", "b", "c"])[np.arange(30) % 3]
    for method in ("ml", "map", "mean", "bayes"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            clf = bnb.NaiveBayes(bnb.Multinomial(), method=method,
                                 class_prior=[0.0, 0.5, 0.5]).fit(X, y)
            p = clf.predict_proba(X)
        assert np.all(p[:, 0] == 0) and np.allclose(p.sum(axis=1), 1)
        assert "a" not in set(clf.predict(X))
