"""Draws and their reports, checked against independent references: PSIS-LOO of weighted fits
(``to_arviz(sample_weight=...)``) against refits' log evidences, ``predict_uncertainty(...,
given_x=True)`` against NumPy's own computation from the same draws, the ``log_likelihood``
group of a semi-supervised fit, and the NUTS ``sample_stats`` against NumPyro's own sampler
and ArviZ's diagnostics."""

import itertools
import warnings

import jax
import numpy as np
import pandas as pd
import pytest
from _bernoulli_draws import bernoulli_draws
from scipy import stats
from scipy.special import entr, logsumexp

import bayesnb as bnb
from bayesnb.inference import ConvergenceWarning


def _arviz():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz

    return arviz


az = _arviz()


def quiet_loo(idata):
    """``az.loo`` pointwise, its notes (Pareto k, xarray) silenced: the k is checked here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return az.loo(idata, pointwise=True)


# ---------------------------------------------------------------- weighted PSIS-LOO
FEATURES = {0: bnb.Gaussian(), 1: bnb.Bernoulli()}


def two_columns(n, seed=14):
    rng = np.random.default_rng(seed)
    y = np.array(["a", "b"] * (n // 2))
    codes = (y == "b").astype(int)
    X = np.column_stack([rng.normal(codes * 1.0, 1.0, n),
                         rng.binomial(1, 0.3 + 0.4 * codes)]).astype(float)
    return X, y


def evidence(X, y, w):
    """log p(X, y) of a weighted fit: the closed form, an independent route from the draws."""
    return bnb.NaiveBayes(FEATURES, method="bayes").fit(X, y, sample_weight=w).log_evidence()


def with_weight(w, i, value):
    w = np.array(w, dtype=float)
    w[i] = value
    return w


def test_unweighted_group_of_a_weighted_fit_leaves_one_copy_out(x64):
    """Without ``sample_weight`` the group holds one copy's log p(x_i, y_i | theta): az.loo
    leaves one unit of weight out, log p(x_i, y_i | D with w_i - 1), by refits, not the whole
    row as ``loo(X, y, sample_weight)`` does (the numbers the user guide quotes)."""
    X, y = two_columns(40)
    w = np.full(40, 5.0)
    clf = bnb.NaiveBayes(FEATURES, method="bayes").fit(X, y, sample_weight=w)
    idata = clf.to_arviz(clf.sample_posterior(4000, seed=0), prior_draws=None, X=X, y=y,
                         log_likelihood="joint")
    psis = quiet_loo(idata)
    full = evidence(X, y, w)
    one_copy = np.array([full - evidence(X, y, with_weight(w, i, 4.0)) for i in range(40)])
    assert np.all(psis.pareto_k.values < 0.7)
    np.testing.assert_allclose(psis.loo_i.values, one_copy, atol=0.02)
    assert round(psis.elpd_loo, 1) == round(one_copy.sum(), 1) == -115.5
    exact = clf.loo(X, y, sample_weight=w, quantity="joint").elpd_loo
    assert round(exact, 2) == -122.93  # the whole row out: another quantity
    assert abs(psis.elpd_loo - exact) > 5 * psis.se / np.sqrt(40)


def test_weighted_joint_group_leaves_the_whole_row_out(x64):
    """With ``sample_weight`` the group holds w_i log p(x_i, y_i | theta): az.loo estimates the
    evidence ratio log p(D) - log p(D without row i) (refits), and the smoothed weights of that
    group applied to one copy give ``loo(X, y, sample_weight, quantity="joint")``, which is
    log p(D_-i + one copy) - log p(D_-i) by refits; non-integer weights."""
    X, y = two_columns(40)
    w = np.random.default_rng(1).uniform(0.3, 3.0, 40)
    clf = bnb.NaiveBayes(FEATURES, method="bayes").fit(X, y, sample_weight=w)
    draws = clf.sample_posterior(8000, seed=0)
    idata = clf.to_arviz(draws, prior_draws=None, X=X, y=y, log_likelihood="joint",
                         sample_weight=w)
    psis = quiet_loo(idata)
    k = psis.pareto_k.values
    assert np.mean(k < 0.7) >= 0.9
    full = evidence(X, y, w)
    without = np.array([evidence(X, y, with_weight(w, i, 0.0)) for i in range(40)])
    one = np.array([evidence(X, y, with_weight(w, i, 1.0)) for i in range(40)])
    np.testing.assert_allclose(psis.loo_i.values[k < 0.7], (full - without)[k < 0.7],
                               atol=0.05)
    # loo's own values from the same group (the user guide's recipe)
    ll = idata.log_likelihood["xy"].values.reshape(-1, 40).T
    log_weights, k_rows = az.psislw(-ll)
    recipe = logsumexp(log_weights + ll / w[:, None], axis=1)
    exact = clf.loo(X, y, sample_weight=w, quantity="joint").pointwise
    np.testing.assert_allclose(exact, one - without, atol=1e-8)  # loo itself, by refits
    np.testing.assert_allclose(recipe[k_rows < 0.7], exact[k_rows < 0.7], atol=0.05)
    # and the conditional value as the ratio of two such estimates (joint and x)
    cond = clf.to_arviz(draws, prior_draws=None, X=X, y=y).log_likelihood["y_given_x"]
    log_x = ll / w[:, None] - cond.values.reshape(-1, 40).T
    ratio = recipe - logsumexp(log_weights + log_x, axis=1)
    exact_cond = clf.loo(X, y, sample_weight=w).pointwise
    np.testing.assert_allclose(ratio[k_rows < 0.7], exact_cond[k_rows < 0.7], atol=0.05)


def test_weighted_conditional_group_predicts_the_copies_labels(x64):
    """The conditional group with integer weights: az.loo estimates the log probability that
    the w_i copies of x_i all get label y_i given the data without row i, by refits: the
    evidence with the row against the evidences of every labelling of its copies."""
    X, y = two_columns(30)
    w = np.random.default_rng(2).integers(1, 3, 30).astype(float)
    clf = bnb.NaiveBayes(FEATURES, method="bayes").fit(X, y, sample_weight=w)
    idata = clf.to_arviz(clf.sample_posterior(8000, seed=0), prior_draws=None, X=X, y=y,
                         sample_weight=w)
    psis = quiet_loo(idata)
    full = evidence(X, y, w)
    expected = []
    for i in range(30):
        rest = with_weight(w, i, 0.0)
        copies = int(w[i])
        labellings = [evidence(np.vstack([X, np.repeat(X[i:i + 1], copies, axis=0)]),
                               np.r_[y, list(labels)], np.r_[rest, np.ones(copies)])
                      for labels in itertools.product("ab", repeat=copies)]
        expected.append(full - logsumexp(labellings))
    k = psis.pareto_k.values
    assert np.mean(k < 0.7) >= 0.9
    np.testing.assert_allclose(psis.loo_i.values[k < 0.7], np.array(expected)[k < 0.7],
                               atol=0.03)


def test_weights_of_one_change_nothing_and_zero_weight_rows_are_no_factor(x64):
    X, y = two_columns(20)
    w = np.ones(20)
    clf = bnb.NaiveBayes(FEATURES, method="bayes").fit(X, y)
    draws = clf.sample_posterior(200, seed=1)
    plain = clf.to_arviz(draws, prior_draws=None, X=X, y=y).log_likelihood["y_given_x"]
    ones = clf.to_arviz(draws, prior_draws=None, X=X, y=y,
                        sample_weight=w).log_likelihood["y_given_x"]
    np.testing.assert_array_equal(ones.values, plain.values)
    halves = clf.to_arviz(draws, prior_draws=None, X=X, y=y, log_likelihood="joint",
                          sample_weight=with_weight(w / 2, 3, 0.0)).log_likelihood["xy"]
    joint = clf.to_arviz(draws, prior_draws=None, X=X, y=y,
                         log_likelihood="joint").log_likelihood["xy"]
    np.testing.assert_allclose(np.delete(halves.values, 3, axis=2),
                               np.delete(joint.values, 3, axis=2) / 2, rtol=1e-12)
    assert np.all(halves.values[..., 3] == 0.0)
    with pytest.raises(ValueError, match="pass X and y"):
        clf.to_arviz(draws, sample_weight=w)
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        clf.to_arviz(draws, X=X, y=y, sample_weight=w[:5])


# ---------------------------------------------------------------- predict_uncertainty
def reference_given_x(draws, rows, interval):
    """Every field of ``given_x=True`` from the draws by NumPy: the scores by hand, the
    weights p(x | theta_d) normalised, the weighted quantiles by ``np.quantile``'s own."""
    k = draws["class_probs"].shape[-1]
    pi = draws["class_probs"].reshape(-1, k)
    theta = draws["bernoulli.theta"].reshape((-1,) + draws["bernoulli.theta"].shape[2:])
    x = rows[None, :, None, :]
    cell = np.where(x == 1, np.log(theta[:, None]), np.log1p(-theta[:, None]))
    s = np.log(pi)[:, None, :] + np.where(np.isnan(x), 0.0, cell).sum(axis=3)  # (D, n, K)
    log_x = logsumexp(s, axis=2)  # (D, n)
    p = np.exp(s - log_x[..., None])
    w = np.exp(log_x - logsumexp(log_x, axis=0))  # (D, n)
    proba = np.einsum("dn,dnk->nk", w, p)
    aleatoric = np.einsum("dn,dn->n", w, entr(p).sum(axis=2))
    q = [(1 - interval) / 2, (1 + interval) / 2]
    band = np.array([[np.quantile(p[:, i, c], q, weights=w[:, i], method="inverted_cdf")
                      for c in range(k)] for i in range(rows.shape[0])])  # (n, K, 2)
    entropy = entr(proba).sum(axis=1)
    return {"proba": proba, "lower": band[..., 0], "upper": band[..., 1], "entropy": entropy,
            "aleatoric": aleatoric, "mutual_info": entropy - aleatoric,
            "ess": 1 / np.sum(w * w, axis=0)}


@pytest.mark.parametrize("route", ["host", "kernels"])
@pytest.mark.parametrize("seed", [0, 1])
def test_given_x_decomposes_the_predictive_under_the_reweighted_draws(x64, monkeypatch,
                                                                      route, seed):
    """Hand-made draws: with ``given_x=True`` ``proba`` is the p(x | theta)-weighted mean of
    p(c | x, theta), ``entropy`` its entropy, ``aleatoric`` the weighted mean entropy, the band
    the weighted quantiles and ``ess`` Kish's, as NumPy computes them; on the host's route and
    the kernels'."""
    from bayesnb import _draws_host, inference

    monkeypatch.setattr(_draws_host, "HOST_DRAW_ENTRIES", 1 << 30 if route == "host" else -1)
    monkeypatch.setattr(inference, "_DRAWS_BUDGET", 1)  # the kernels' rows in batches of 7
    clf, draws, rows = bernoulli_draws(seed)
    u = clf.predict_uncertainty(rows, draws=draws, interval=0.8, given_x=True)
    ref = reference_given_x(draws, rows, 0.8)
    assert list(u) == ["proba", "lower", "upper", "entropy", "aleatoric", "mutual_info", "ess"]
    for key, value in ref.items():
        np.testing.assert_allclose(u[key], value, rtol=1e-9, atol=1e-12, err_msg=key)
    np.testing.assert_allclose(u["entropy"], entr(u["proba"]).sum(axis=1), rtol=1e-12)
    assert np.all(u["mutual_info"] >= 0)
    assert np.all((1 <= u["ess"]) & (u["ess"] <= 80))
    # the default is unchanged: the draws as they are, no ess
    plain = clf.predict_uncertainty(rows, draws=draws, interval=0.8)
    assert "ess" not in plain
    np.testing.assert_array_equal(plain["proba"], u["proba"])


def test_given_x_in_float32_agrees_with_float64(kernel_draws):
    """The kernels' float32 route of ``given_x`` against the float64 reference."""
    clf, draws, rows = bernoulli_draws(3)
    u = clf.predict_uncertainty(rows, draws=draws, interval=0.8, given_x=True)
    ref = reference_given_x(draws, rows, 0.8)
    for key in ("proba", "entropy", "aleatoric", "mutual_info"):
        np.testing.assert_allclose(u[key], ref[key], atol=2e-5, err_msg=key)
    np.testing.assert_allclose(u["ess"], ref["ess"], rtol=1e-4)
    # quantiles select a draw: a rounding may pick a neighbour, so a band within the draws'
    # own range and nearly every entry the reference's
    close = np.isclose(u["lower"], ref["lower"], atol=2e-5)
    assert close.mean() > 0.95


def test_given_x_tells_a_row_unlike_the_data_by_its_ess(x64):
    """A Gaussian fitted on 12 rows: far out (x = 9) the default's band leaves ``proba`` out
    and its ``entropy`` is not ``proba``'s; ``given_x`` decomposes ``proba``'s own entropy
    and its ess shows the few draws it rests on (the user guide's numbers)."""
    rng = np.random.default_rng(15)
    y = np.array(["a"] * 6 + ["b"] * 6)
    X = np.r_[rng.normal(0, 1, 6), rng.normal(3, 1, 6)][:, None]
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="bayes").fit(X, y)
    rows = np.array([[1.5], [9.0]])
    plain = clf.predict_uncertainty(rows, num_draws=4000, seed=0)
    assert round(plain["proba"][1, 0], 4) == 0.0015 and plain["upper"][1, 0] < 3e-5
    assert abs(plain["entropy"][1] - entr(plain["proba"][1]).sum()) > 0.05
    given = clf.predict_uncertainty(rows, num_draws=4000, seed=0, given_x=True)
    np.testing.assert_allclose(given["entropy"], entr(given["proba"]).sum(axis=1), rtol=1e-12)
    assert np.round(given["ess"]).tolist() == [3016, 51]


def test_given_x_from_nuts_draws_and_its_checks():
    """Under ``method="mcmc"`` (the scorer's prepared tables): the same coherent fields."""
    rng = np.random.default_rng(5)
    y = np.array(["a", "b"] * 20)
    X = rng.normal(np.where(y == "a", 0.0, 1.5)[:, None], 1.0, (40, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = bnb.NaiveBayes(bnb.Gaussian(), method="mcmc", num_warmup=150, num_samples=150,
                             num_chains=1, progress_bar=False).fit(X, y)
    u = clf.predict_uncertainty(X[:10], given_x=True)
    np.testing.assert_allclose(u["proba"], clf.predict_uncertainty(X[:10])["proba"],
                               rtol=1e-6)
    np.testing.assert_allclose(u["entropy"], entr(u["proba"]).sum(axis=1), rtol=1e-9)
    assert np.all(u["mutual_info"] >= 0) and np.all(u["lower"] <= u["upper"])
    assert np.all((1 <= u["ess"]) & (u["ess"] <= 150 * (1 + 1e-9)))
    with pytest.raises(ValueError, match="given_x must be True or False"):
        clf.predict_uncertainty(X[:2], given_x="yes")


# ---------------------------------------------------------------- semi-supervised LOO
@pytest.fixture(scope="module")
def semi_supervised():
    rng = np.random.default_rng(8)
    classes = rng.integers(0, 2, 30)
    df = pd.DataFrame({"g": rng.normal(np.where(classes == 1, 2.0, -1.0), 1.0),
                       "bern": rng.binomial(1, np.where(classes == 1, 0.8, 0.2)).astype(float)})
    y = np.where(classes == 1, "b", "a").astype(object)
    y[12:] = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = bnb.NaiveBayes({"g": bnb.Gaussian(), "bern": bnb.Bernoulli()}, method="mcmc",
                             num_warmup=150, num_samples=150, num_chains=1,
                             progress_bar=False).fit(df, y)
    return clf, df, y


def test_log_likelihood_group_refuses_unlabeled_rows_and_scores_the_labelled(semi_supervised):
    """Missing labels (None, NaN) are refused saying what to pass; the labelled rows' group is
    log p(y_i | x_i, theta) of each draw, as scipy computes it from the draws."""
    clf, df, y = semi_supervised
    assert clf.n_unlabeled_ == 18
    with pytest.raises(ValueError, match=r"18 missing labels .*first at row 12.*labelled rows"):
        clf.to_arviz(X=df, y=y)
    numeric = np.where(y == "b", 1.0, np.where(y == "a", 0.0, np.nan))
    with pytest.raises(ValueError, match="missing labels"):
        clf.to_arviz(X=df, y=numeric, log_likelihood="joint")
    keep = pd.notna(y)
    group = clf.to_arviz(X=df[keep], y=y[keep], prior_draws=None).log_likelihood["y_given_x"]
    assert group.shape == (1, 150, 12)
    d = clf.draws_
    g, b = df["g"].to_numpy()[keep], df["bern"].to_numpy()[keep]
    scores = (np.log(d["class_probs"])[:, :, None, :]
              + stats.norm.logpdf(g[None, None, :, None], d["gaussian.mean"][..., 0][:, :, None],
                                  1 / np.sqrt(d["gaussian.precision"][..., 0][:, :, None]))
              + stats.bernoulli.logpmf(b[None, None, :, None],
                                       d["bernoulli.theta"][..., 0][:, :, None]))
    codes = (y[keep] == "b").astype(int)
    own = np.take_along_axis(scores, codes[None, None, :, None], axis=3)[..., 0]
    np.testing.assert_allclose(group.values, own - logsumexp(scores, axis=3), rtol=1e-9,
                               atol=1e-12)
    assert np.isfinite(quiet_loo(clf.to_arviz(X=df[keep], y=y[keep])).elpd_loo)


def test_closed_forms_of_a_semi_supervised_fit_are_refused(semi_supervised):
    """The closed forms read the labelled rows' statistics: conditional_tables, summary's
    tables, log_evidence, posterior_tables and sample_posterior gave the labelled-only
    posterior (class means -0.99/1.04) beside NUTS draws that hold the unlabeled rows too
    (-1.86/1.93, the semi-supervised posterior), unsaid. Now each refuses, pointing to the
    draws; summary prints the draws' class probabilities and says why there are no tables.
    The reference is a fit of the labelled rows alone under method='bayes'."""
    clf, df, y = semi_supervised
    keep = pd.notna(y)
    labelled = bnb.NaiveBayes({"g": bnb.Gaussian(), "bern": bnb.Bernoulli()},
                              method="bayes").fit(df[keep], y[keep].astype(str))
    assert not np.allclose(clf.draws_["gaussian.mean"].mean(axis=(0, 1))[:, 0],
                           labelled.posterior_tables()["g"]["loc"].to_numpy(), atol=0.05)
    for report in (clf.conditional_tables, clf.log_evidence, clf.posterior_tables,
                   lambda: clf.sample_posterior(10)):
        with pytest.raises(ValueError, match="18 unlabeled rows.*mcmc_summary"):
            report()
    text = clf.summary()
    assert "none in closed form" in text and "the mean of the NUTS draws" in text
    prior = clf.sample_posterior(10, prior=True)  # the prior reads no data: still drawn
    assert prior["class_probs"].shape == (1, 10, 2)


# ---------------------------------------------------------------- NUTS sample_stats
NAMES = ["diverging", "n_steps", "energy", "lp", "step_size", "tree_depth", "acceptance_rate"]


def gaussian_data():
    rng = np.random.default_rng(19)
    y = np.array(["a", "b"] * 10)
    return rng.normal(np.where(y == "a", 0.0, 2.0), 1.0)[:, None], y


def test_sample_stats_are_numpyros_for_the_same_seed(monkeypatch):
    """The fields of every kept transition are those NumPyro's own ``MCMC`` records (its
    ``extra_fields``) for the same density, seed and start (``init_to_uniform``, drawn as
    ``MCMC`` draws it), under ArviZ's names: ``lp`` is minus the potential energy. A short run:
    the two programs round differently, and NUTS magnifies roundings over many steps."""
    from jax.flatten_util import ravel_pytree
    from numpyro.infer import MCMC, NUTS, init_to_uniform
    from numpyro.infer.util import initialize_model, potential_energy

    from bayesnb import _nuts

    seen = {}
    real = _nuts.sample

    def spy(model, static, data, **settings):
        seen.update(model=model, kwargs={**static, **data})
        return real(model, static, data, **settings)

    monkeypatch.setattr(_nuts, "sample", spy)
    x, y = gaussian_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = bnb.NaiveBayes(bnb.Gaussian(), method="mcmc", num_warmup=10, num_samples=30,
                             num_chains=1, progress_bar=False, seed=3).fit(x, y)
    with jax.enable_x64(True):
        model, kwargs = seen["model"], seen["kwargs"]
        chain_key, start_key = jax.random.split(jax.random.PRNGKey(3))
        start = initialize_model(start_key, model, model_kwargs=kwargs,
                                 init_strategy=init_to_uniform).param_info.z
        flat, unravel = ravel_pytree(start)
        mcmc = MCMC(NUTS(potential_fn=lambda v: potential_energy(model, (), kwargs,
                                                                 unravel(v))),
                    num_warmup=10, num_samples=30, progress_bar=False)
        mcmc.run(chain_key, init_params=flat,
                 extra_fields=("energy", "potential_energy", "accept_prob", "num_steps",
                               "adapt_state.step_size", "diverging"))
        theirs = {k: np.asarray(v) for k, v in mcmc.get_extra_fields(group_by_chain=True)
                  .items()}
    ours = clf.sample_stats_
    assert list(ours) == NAMES
    for name, (field, sign) in {"energy": ("energy", 1), "lp": ("potential_energy", -1),
                                "acceptance_rate": ("accept_prob", 1),
                                "step_size": ("adapt_state.step_size", 1)}.items():
        np.testing.assert_allclose(ours[name], sign * theirs[field], rtol=1e-9, err_msg=name)
    np.testing.assert_array_equal(ours["n_steps"], theirs["num_steps"])
    np.testing.assert_array_equal(ours["diverging"], theirs["diverging"])
    # ArviZ's from_numpyro: the depth of a tree of n_steps leapfrog steps
    np.testing.assert_array_equal(ours["tree_depth"],
                                  np.floor(np.log2(theirs["num_steps"])).astype(int) + 1)


def test_arviz_energy_diagnostics_work_and_survive_a_model_file(tmp_path):
    """``az.bfmi`` is its formula over the exported energy, per chain; ``az.plot_energy``
    runs; the fields are saved and loaded with the model."""
    x, y = gaussian_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = bnb.NaiveBayes(bnb.Gaussian(), method="mcmc", num_warmup=150, num_samples=150,
                             num_chains=2, progress_bar=False).fit(x, y)
    idata = clf.to_arviz(prior_draws=None)
    assert list(idata.sample_stats.data_vars) == NAMES
    energy = clf.sample_stats_["energy"]
    assert energy.shape == (2, 150)
    # Betancourt's E-BFMI: sum of squared energy changes over the energy's sum of squares
    bfmi = (np.sum(np.diff(energy, axis=1) ** 2, axis=1)
            / np.sum((energy - energy.mean(axis=1, keepdims=True)) ** 2, axis=1))
    np.testing.assert_allclose(az.bfmi(idata), bfmi, rtol=1e-12)
    az.plot_energy(idata)
    stats_ = clf.sample_stats_
    assert np.all(energy >= -stats_["lp"] - 1e-9)  # the kinetic energy is >= 0
    assert np.all((0 <= stats_["acceptance_rate"]) & (stats_["acceptance_rate"] <= 1))
    # the step size is fixed once the warm-up ends, one per chain
    assert np.all(stats_["step_size"] == stats_["step_size"][:, :1])
    loaded = bnb.load(bnb.save(clf, tmp_path / "m.bnb"))
    for name in NAMES:
        np.testing.assert_array_equal(loaded.sample_stats_[name], stats_[name], err_msg=name)
    np.testing.assert_allclose(az.bfmi(loaded.to_arviz(prior_draws=None)), bfmi, rtol=1e-12)


def test_draws_after_partial_fit_run_nuts_as_predict_would():
    """``draws_`` after ``partial_fit`` under ``method="mcmc"`` runs NUTS (as the first
    prediction would) instead of saying the model was not fitted with MCMC; the class
    proportions' draws centre on the exact Dirichlet posterior mean."""
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(60, 2)), rng.integers(0, 2, 60)
    clf = bnb.NaiveBayes(method="mcmc", num_warmup=200, num_samples=300, num_chains=1,
                         progress_bar=False)
    clf.partial_fit(X[:30], y[:30], classes=[0, 1])
    clf.partial_fit(X[30:], y[30:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a short chain, on purpose
        probs = np.asarray(clf.draws_["class_probs"]).reshape(-1, 2)
    n = np.bincount(y, minlength=2)
    exact = (n + 1.0) / (n.sum() + 2.0)  # Dirichlet(1, 1) posterior mean
    sd = np.sqrt(exact * (1 - exact) / (n.sum() + 3.0))
    assert np.all(np.abs(probs.mean(axis=0) - exact) < 4 * sd / np.sqrt(50))
    assert set(clf.sample_stats_) >= {"diverging", "energy", "step_size"}


def test_the_default_settings_on_titanic_meet_the_diagnostics_mcmc_md_quotes():
    """docs/user_guide/mcmc.md: the defaults (4 x (1,000 + 1,000)) on Titanic give r-hat below
    1.01 and bulk and tail ESS above 1,500 (seed 0; ArviZ's own r-hat and ESS)."""
    from bayesnb.datasets import load_titanic

    X, y = load_titanic()
    summary = bnb.NaiveBayes(method="mcmc", seed=0, progress_bar=False).fit(X, y).mcmc_summary()
    assert summary["r_hat"].max() < 1.01
    assert summary["ess_bulk"].min() > 1500 and summary["ess_tail"].min() > 1500
