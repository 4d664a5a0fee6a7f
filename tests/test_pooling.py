"""Classes that share strength (``pooling="partial"``) against the exact posterior.

The hierarchy: per block a shared mean m ~ Dirichlet(1) (Beta(1, 1)), a concentration
s ~ Gamma(1, 0.1) and per class theta_k ~ Dirichlet(s m) (Beta(s m, s (1 - m))). Given (m, s)
the tables are conjugate, so the exact posterior moments of m, s and theta are integrals over
(m, s) alone, computed here by Gauss-Legendre quadrature from the counts with scipy's gammaln.
bayesnb's NUTS (on sufficient statistics, its own compiled programs) must give the same
posterior means and sds within 4 Monte Carlo standard errors (ArviZ's ``mcse`` of its draws).
"""

import warnings

import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import bayesnb as bnb
from bayesnb.inference import ConvergenceWarning

#: 2 x 1000 draws: the exact reference has no Monte Carlo error, so the 4-MCSE bounds are
#: bayesnb's own MCSE alone (the single-row classes' heavy-tailed tables need the draws)
MCMC = dict(method="mcmc", num_warmup=500, num_samples=1000, num_chains=2, progress_bar=False)
POOLED = ("Categorical", "Bernoulli", "Multinomial")


def _quiet_fit(clf, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # its ESS bar is not under test here
        return clf.fit(X, y)


def _arviz():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz

    return arviz


CLASSES = ["big0", "big1", "big2", "one0", "one1"]


def mixed_data(seed=0, n=1000):
    """Three classes of ``n`` rows and two of one row: a colour (Categorical), a flag
    (Bernoulli) and three word counts (one Multinomial block)."""
    rng = np.random.default_rng(seed)
    colour_p = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.45, 0.35, 0.2]])
    flag_p, rate = np.array([0.2, 0.5, 0.4]), np.array([[2, 3, 1], [3, 3, 2], [4, 3, 3]])
    frames = [pd.DataFrame({"colour": rng.choice(["blue", "green", "red"], n, p=colour_p[k]),
                            "flag": (rng.random(n) < flag_p[k]).astype(int),
                            **{f"w{j}": rng.poisson(rate[k, j], n) for j in range(3)}})
              for k in range(3)]
    frames.append(pd.DataFrame({"colour": ["red", "red"], "flag": [1, 1], "w0": [0, 6],
                                "w1": [0, 0], "w2": [6, 0]}))
    X = pd.concat(frames, ignore_index=True)
    y = np.array([c for c in CLASSES[:3] for _ in range(n)] + CLASSES[3:])
    words = bnb.Multinomial(pooling="partial")
    features = {"colour": bnb.Categorical(pooling="partial"),
                "flag": bnb.Bernoulli(pooling="partial"), "w0": words, "w1": words, "w2": words}
    return X, y, features


@pytest.fixture(scope="module")
def mixed():
    X, y, features = mixed_data()
    clf = _quiet_fit(bnb.NaiveBayes(features, seed=1, **MCMC), X, y)
    return X, y, clf


def _nodes(n, lo, hi):
    """Gauss-Legendre nodes and weights on [lo, hi]."""
    x, w = np.polynomial.legendre.leggauss(n)
    return lo + (hi - lo) * (x + 1) / 2, w * (hi - lo) / 2


def exact_moments(counts, n_m=60, n_s=100):
    """Posterior means and sds of m, s and every class's theta of one pooled block, by
    quadrature. ``counts``: (class, level) counts; the flag's are (ones, zeros).

    Given (m, s) a class's table is Dirichlet(s m + n_k), and its rows' likelihood integrated
    over the table is B(s m + n_k) / B(s m) (the rows' multinomial coefficients are
    constants). So the posterior of (m, s) is the product over classes times the Gamma(1, 0.1)
    prior of s (m's flat prior is a constant); it is integrated by Gauss-Legendre over m (on
    the simplex by stick breaking) and over log s, and theta's moments are the Dirichlet's,
    averaged over that grid (measured: twice the nodes move no moment by 1e-9 relative)."""
    from scipy.special import gammaln

    counts = np.asarray(counts, dtype=np.float64)
    log_s, w_log_s = _nodes(n_s, np.log(1e-3), np.log(1e4))
    s, w_s = np.exp(log_s), w_log_s * np.exp(log_s)
    a, w_a = _nodes(n_m, 0.0, 1.0)
    if counts.shape[1] == 2:
        m, w_m = np.stack([a, 1 - a], -1), w_a
    else:  # m = (a, (1 - a) b, (1 - a)(1 - b)): Jacobian 1 - a
        A, B = np.meshgrid(a, a, indexing="ij")
        m = np.stack([A, (1 - A) * B, (1 - A) * (1 - B)], -1).reshape(-1, 3)
        w_m = (w_a[:, None] * w_a[None, :] * (1 - A)).ravel()
    alpha = s[:, None, None] * m[None]  # (s node, m node, level)
    log_w = np.log(w_s)[:, None] + np.log(w_m)[None] - 0.1 * s[:, None]
    for n in counts:
        log_w += ((gammaln(s) - gammaln(s + n.sum()))[:, None]
                  + (gammaln(alpha + n) - gammaln(alpha)).sum(-1))
    w = np.exp(log_w - log_w.max())
    w /= w.sum()

    def mean_sd(x, x2):
        e1, e2 = (np.tensordot(w, v, axes=([0, 1], [0, 1])) for v in (x, x2))
        return e1, np.sqrt(e2 - e1**2)

    post = alpha[:, :, None, :] + counts  # (s node, m node, class, level)
    total = (s[:, None] + counts.sum(1))[:, None, :, None]
    s_grid = np.broadcast_to(s[:, None], w.shape)
    return {"m": mean_sd(np.broadcast_to(m, alpha.shape), np.broadcast_to(m**2, alpha.shape)),
            "s": mean_sd(s_grid, s_grid**2),
            "theta": mean_sd(post / total, post * (post + 1) / (total * (total + 1)))}


@pytest.fixture(scope="module")
def reference(mixed):
    """{reference site: (mean, sd)} of the exact posterior, by quadrature from the counts
    (class proportions left out: their posterior is independent of the tables')."""
    X, y, _ = mixed
    colour = pd.crosstab(y, X["colour"]).loc[CLASSES, ["blue", "green", "red"]].to_numpy()
    ones = X.groupby(y)["flag"].agg(["sum", "count"]).loc[CLASSES].to_numpy()
    flag = np.stack([ones[:, 0], ones[:, 1] - ones[:, 0]], -1)
    words = X.groupby(y)[["w0", "w1", "w2"]].sum().loc[CLASSES].to_numpy()
    out = {}
    for block, counts in (("colour", colour), ("flag", flag), ("words", words)):
        for part, (mean, sd) in exact_moments(counts).items():
            if block == "flag" and part != "s":  # theta and m: the probability of a one
                mean, sd = mean[..., 0], sd[..., 0]
            out[f"{block}.{part}"] = (mean, sd)
    return out


#: bayesnb's site, the reference's, and how bayesnb's draws map onto the reference's shape
SITES = [
    ("categorical.colour.probs", "colour.theta", lambda a: a),
    ("categorical.colour.shared_mean", "colour.m", lambda a: a),
    ("categorical.colour.concentration", "colour.s", lambda a: a),
    ("bernoulli.theta", "flag.theta", lambda a: a[..., 0]),
    ("bernoulli.shared_mean", "flag.m", lambda a: a[..., 0]),
    ("bernoulli.concentration", "flag.s", lambda a: a[..., 0]),
    ("multinomial.probs", "words.theta", lambda a: a),
    ("multinomial.shared_mean", "words.m", lambda a: a),
    ("multinomial.concentration", "words.s", lambda a: a),
]


def _moments(draws):
    """Per variable: (mean, sd, MCSE of the mean, MCSE of the sd), by ArviZ."""
    az = _arviz()
    data = az.convert_to_dataset({k: np.asarray(v) for k, v in draws.items()})
    mean, sd = data.mean(("chain", "draw")), data.std(("chain", "draw"))
    mc_mean, mc_sd = az.mcse(data, method="mean"), az.mcse(data, method="sd")
    return {k: tuple(np.asarray(d[k]) for d in (mean, sd, mc_mean, mc_sd)) for k in draws}


def test_posterior_moments_equal_the_exact_posterior_by_quadrature(mixed, reference):
    _, _, clf = mixed
    ours = _moments({ref: to_ref(clf.draws_[site]) for site, ref, to_ref in SITES})
    for site, ref, _ in SITES:
        (m1, s1, e1, f1), (m2, s2) = ours[ref], reference[ref]
        assert m1.shape == m2.shape, site
        assert np.all(np.abs(m1 - m2) <= 4 * e1), (site, m1, m2, e1)
        assert np.all(np.abs(s1 - s2) <= 4 * f1), (site, s1, s2, f1)


def test_arviz_dims_name_the_pooled_sites(mixed):
    X, _, clf = mixed
    post = clf.to_arviz().posterior
    assert post["categorical.colour.shared_mean"].dims == ("chain", "draw", "colour_level")
    assert post["categorical.colour.concentration"].dims == ("chain", "draw")
    assert post["categorical.colour.probs"].dims == ("chain", "draw", "class", "colour_level")
    assert post["bernoulli.shared_mean"].dims == ("chain", "draw", "bernoulli_feature")
    assert post["bernoulli.concentration"].dims == ("chain", "draw", "bernoulli_feature")
    assert post["multinomial.shared_mean"].dims == ("chain", "draw", "multinomial_feature")
    assert post["multinomial.concentration"].dims == ("chain", "draw")
    assert post["colour_level"].values.tolist() == ["blue", "green", "red"]
    assert post["multinomial_feature"].values.tolist() == ["w0", "w1", "w2"]
    summary = clf.mcmc_summary()
    assert "categorical.colour.shared_mean[blue]" in summary.index


def test_plots_and_simulation_read_the_pooled_sites(mixed):
    from bayesnb.plots import posterior_density_plot

    _, _, clf = mixed
    fig = posterior_density_plot(clf, "categorical.colour.shared_mean", ("red",))
    assert fig.axes[0].get_xlabel() == "categorical.colour.shared_mean[red]"
    # a learned prior has no closed-form plug-in estimate to mark
    assert fig.axes[0].get_legend_handles_labels()[1] == ["posterior draws"]
    rows = clf.simulate(4, seed=0)  # the posterior predictive through the pooled program
    assert rows.columns.tolist() == ["colour", "flag", "w0", "w1", "w2", "y", "draw"]
    assert set(rows["y"]) <= set(CLASSES) and set(rows["colour"]) <= {"blue", "green", "red"}


def test_save_load_round_trip_keeps_the_draws_and_predictions(mixed, tmp_path):
    X, _, clf = mixed
    loaded = bnb.load(bnb.save(clf, tmp_path / "pooled.bnb"))
    assert sorted(loaded.draws_) == sorted(clf.draws_)
    for site, value in clf.draws_.items():
        np.testing.assert_array_equal(loaded.draws_[site], value)
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    a, b = clf.predict_uncertainty(X[:5]), loaded.predict_uncertainty(X[:5])
    for key in ("proba", "lower", "upper", "mutual_info"):
        np.testing.assert_array_equal(a[key], b[key])
    assert a["lower"].shape == (5, len(CLASSES)) and np.all(a["lower"] <= a["upper"])
    assert [b.family.pooling for b in loaded.blocks_] == ["partial"] * 3
    assert repr(loaded.blocks_[0].family) == \
        "Categorical(alpha=1.0, categories=None, unseen='warn', pooling='partial')"


def test_a_model_file_with_the_wrong_shape_of_a_pooled_site_is_refused(mixed, tmp_path):
    import io
    import json
    import zipfile

    _, _, clf = mixed
    path = bnb.save(clf, tmp_path / "pooled.bnb")
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    name = json.loads(members["manifest.json"])["draws"]["posterior"][
        "categorical.colour.concentration"]
    buffer = io.BytesIO()  # the concentration's draws as a (chains, draws, 3) array
    np.save(buffer, clf.draws_["categorical.colour.shared_mean"])
    members[f"arrays/{name}.npy"] = buffer.getvalue()
    bad = tmp_path / "bad.bnb"
    with zipfile.ZipFile(bad, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    with pytest.raises(ValueError, match="concentration"):
        bnb.load(bad)


def _conjugate_means(X, y):
    """Unpooled posterior means under the flat priors, by hand from the counts: (n_kv + 1) /
    (n_k + 3) for the colour and the words, (ones + 1) / (n_k + 2) for the flag."""
    out = {}
    colour = pd.crosstab(y, X["colour"]).loc[CLASSES, ["blue", "green", "red"]].to_numpy()
    out["categorical.colour"] = (colour + 1) / (colour.sum(1, keepdims=True) + 3)
    ones = X.groupby(y)["flag"].agg(["sum", "count"]).loc[CLASSES].to_numpy()
    out["bernoulli"] = ((ones[:, 0] + 1) / (ones[:, 1] + 2))[:, None]
    words = X.groupby(y)[["w0", "w1", "w2"]].sum().loc[CLASSES].to_numpy()
    out["multinomial"] = (words + 1) / (words.sum(1, keepdims=True) + 3)
    return out


@pytest.mark.parametrize("block, table", [("categorical.colour", "probs"),
                                          ("bernoulli", "theta"), ("multinomial", "probs")])
def test_many_rows_keep_their_own_tables_and_a_single_row_is_shrunk_to_the_shared_mean(
        mixed, block, table):
    """The classes of 1,000 rows: pooled posterior means within 0.01 of the unpooled conjugate
    ones. The classes of one row: their tables lie nearer the shared mean than their unpooled
    posterior means do (they borrow strength from the other classes)."""
    X, y, clf = mixed
    assert clf.classes_.tolist() == CLASSES
    theta = clf.draws_[f"{block}.{table}"].mean(axis=(0, 1))  # (class, level or column)
    shared = clf.draws_[f"{block}.shared_mean"].mean(axis=(0, 1))
    conjugate = _conjugate_means(X, y)[block]
    big = np.array([c.startswith("big") for c in CLASSES])
    assert np.abs(theta[big] - conjugate[big]).max() < 0.01
    near_pooled = np.abs(theta[~big] - shared).sum(axis=1)
    near_unpooled = np.abs(conjugate[~big] - shared).sum(axis=1)
    assert np.all(near_pooled < near_unpooled), (near_pooled, near_unpooled)


@pytest.mark.parametrize("family", POOLED)
@pytest.mark.parametrize("method", ["ml", "map", "mean", "bayes"])
def test_closed_form_methods_refuse_pooling_naming_mcmc(family, method):
    X = pd.DataFrame({"a": [0, 1, 1, 0], "b": [1, 1, 0, 0]})
    features = getattr(bnb, family)(pooling="partial")
    clf = bnb.NaiveBayes(features, method=method)
    with pytest.raises(ValueError, match=r"pooling='partial'.*use method='mcmc'"):
        clf.fit(X, ["u", "u", "v", "v"])
    assert "fitted_" not in clf.__dict__


@pytest.mark.parametrize("family", POOLED)
def test_bad_pooling_settings_are_refused_naming_them(family):
    import numpyro.distributions as dist

    X, y = pd.DataFrame({"a": [0, 1, 1, 0], "b": [1, 1, 0, 0]}), ["u", "u", "v", "v"]
    cls = getattr(bnb, family)
    with pytest.raises(ValueError, match=r"pooling must be one of \('none', 'partial'\)"):
        bnb.NaiveBayes(cls(pooling="full"), **MCMC).fit(X, y)
    with pytest.raises(ValueError, match="pooling_concentration must be"):
        bnb.NaiveBayes(cls(pooling="partial", pooling_concentration=(1.0, 0.0)), **MCMC).fit(X, y)
    with pytest.raises(ValueError, match="alpha is the prior of the shared mean"):
        bnb.NaiveBayes(cls(alpha=dist.Gamma(1.0, 1.0), pooling="partial"), **MCMC).fit(X, y)
    # a Gamma prior of mean 1e600 (or 1e-600): every transition diverged, the chain stood still
    for extreme in ((1e300, 1e-300), (1e-300, 1e300)):
        with pytest.raises(ValueError, match=r"Gamma prior of mean .* within 1e-30 to 1e30"):
            bnb.NaiveBayes(cls(pooling="partial", pooling_concentration=extreme),
                           **MCMC).fit(X, y)
    assert repr(cls()) == repr(cls(pooling="none"))  # the default stays out of the repr
    assert "pooling_concentration=(2.0, 0.5)" in repr(cls(pooling="partial",
                                                          pooling_concentration=(2.0, 0.5)))


def test_pooled_and_unpooled_models_do_not_share_a_nuts_program(monkeypatch):
    """The NUTS programs are keyed by the model's structure: a pooled block's prior is part of
    it, so the two models' keys differ (and neither reads the other's saved program)."""
    from bayesnb import _nuts

    seen = []

    def capture(model, static, data, **settings):
        layout, numbers = _nuts._split(data)
        key = _nuts._Settings(model, tuple(static.items()), layout, settings["num_warmup"],
                              0.8, "vectorized", 1)
        seen.append(_nuts._structure_key(key, jnp.zeros((2, 2), jnp.uint32), numbers))
        raise RuntimeError("captured")

    monkeypatch.setattr(_nuts, "sample", capture)
    X, y = pd.DataFrame({"a": [0, 1, 1, 0], "b": [1, 1, 0, 0]}), ["u", "u", "v", "v"]
    for pooling in ("none", "partial", "none"):
        with pytest.raises(RuntimeError, match="captured"):
            bnb.NaiveBayes(bnb.Bernoulli(pooling=pooling), **MCMC).fit(X, y)
    assert None not in seen
    assert seen[0] == seen[2] != seen[1]


def test_closed_form_reports_on_a_pooled_mcmc_fit_point_to_the_draws(mixed):
    X, _, clf = mixed
    with pytest.raises(ValueError, match="no closed-form mean"):
        clf.conditional_tables()
    with pytest.raises(ValueError, match=r"unavailable; summarise the draws \(clf.mcmc_summary"):
        clf.log_evidence()  # an MCMC fit: the draws, not "use method='mcmc'"
    text = clf.summary()  # it raised: no print-out for the models that need MCMC
    assert "none in closed form (conditional tables under method='mcmc'" in text
    assert "log evidence: undefined" in text
    assert "prior" not in clf.to_arviz().groups()


def test_an_unseen_value_under_a_learned_concentration_is_refused(mixed):
    """Under pooling (or a hyperprior on alpha) a value outside the levels was scored with
    the placeholder alpha, not the learned one (0.77 where a declared zero-count level gives
    0.54): it is refused, naming the way out."""
    _, _, clf = mixed
    row = pd.DataFrame({"colour": ["purple"], "flag": [1], "w0": [1], "w1": [0], "w2": [2]})
    with pytest.raises(ValueError, match=r"'purple' is not one of its categories.*declare it "
                                         r"with Categorical\(categories=\.\.\.\).*learned "
                                         r"concentration"):
        clf.predict_proba(row)


def test_priors_over_a_pooled_or_hyperprior_block_are_refused():
    """priors= replacing the parameters' prior of a pooled block (or one with a hyperprior)
    cut the pooling sites off from the data: they were reported as posteriors while staying
    at their prior."""
    import numpyro.distributions as dist

    X = pd.DataFrame({"a": ["x", "y", "z", "x"], "w0": [1, 0, 2, 3], "w1": [0, 2, 1, 1]})
    y = ["u", "u", "v", "v"]
    cases = [({"a": bnb.Categorical(pooling="partial")},
              {"categorical.a.probs": dist.Dirichlet(jnp.ones(3))}, "has pooling"),
             ({("w0", "w1"): bnb.Multinomial(alpha=dist.Gamma(2.0, 1.0))},
              {"multinomial.probs": dist.Dirichlet(jnp.ones(2))}, "has a hyperprior")]
    for features, priors, why in cases:
        with pytest.raises(ValueError, match=f"priors replaces the prior of .*{why}"):
            bnb.NaiveBayes(features, priors=priors, **{**MCMC, "num_warmup": 10,
                                                        "num_samples": 10}).fit(
                X[[c for key in features for c in ([key] if isinstance(key, str) else key)]], y)


def test_a_hyperprior_per_column_on_categorical_alpha():
    """Categorical(alpha=Gamma(2, 1).expand([2])) on two columns crashed inside NUTS
    (incompatible shapes (2,), (5,)): each column's draw is its levels' concentration."""
    from bayesnb.families import Categorical

    prior = Categorical().prior(Categorical().learn_schema(
        np.array([["x", "p"], ["y", "q"], ["z", "p"]], dtype=object), ("a", "b")))
    given = Categorical.with_hyper(prior, "alpha", jnp.array([2.0, 3.0]))
    np.testing.assert_array_equal(given.alpha, [2.0, 2.0, 2.0, 3.0, 3.0])
    np.testing.assert_array_equal(given.unseen, [2.0, 3.0])
    np.testing.assert_array_equal(Categorical.with_hyper(prior, "alpha", 0.5).alpha, [0.5] * 5)
