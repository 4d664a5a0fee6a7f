"""A family plugs in by what it declares (issue 37): a family the rest of the package has never
heard of, registered under a new name, works with MCMC and ArviZ, simulation, EM,
``from_tables``, persistence, the dependence diagnostic, the linear view and the density plot.
Any table keyed by family name outside ``bayesnb/families/`` would fail here."""

import numpy as np
import pandas as pd
import pytest

import bayesnb as bnb
from bayesnb.families import REGISTRY


class Waiting(bnb.Exponential):
    """The Exponential model under a name no module outside ``families/`` knows."""

    name = "waiting_time"


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(REGISTRY, Waiting.name, Waiting)
    rng = np.random.default_rng(3)
    y = np.arange(40) % 2
    X = pd.DataFrame({"t": rng.exponential(1.0 + y), "u": rng.exponential(2.0 - y)})
    return X, y


@pytest.mark.filterwarnings("ignore::bayesnb.inference.ConvergenceWarning")  # a short chain
def test_mcmc_arviz_and_simulation(registered):
    X, y = registered
    clf = bnb.NaiveBayes(features=Waiting(2.0, 1.0), method="mcmc", num_warmup=100,
                         num_samples=100, num_chains=1, progress_bar=False).fit(X, y)
    assert clf.draws_["waiting_time.rate"].shape == (1, 100, 2, 2)
    idata = clf.to_arviz(prior_draws=None)
    assert list(idata.posterior["waiting_time.rate"].dims)[2:] == ["class",
                                                                  "waiting_time_feature"]
    sim = bnb.NaiveBayes(features=Waiting()).fit(X, y).simulate(5, num_draws=2)
    assert list(sim.columns) == ["t", "u", "y", "draw"] and (sim[["t", "u"]] >= 0).all().all()
    assert sim["t"].dtype.kind == "f"  # real values, not cast to counts


def test_em_from_tables_and_persistence(registered, tmp_path, x64):
    from bayesnb.em import fit_em

    X, y = registered
    clf = fit_em(bnb.NaiveBayes(features=Waiting(2.0, 1.0), method="map"), X[:20], y[:20],
                 X[20:])
    assert np.isfinite(clf.predict_proba(X)).all()
    tables = bnb.from_tables({0: 0.5, 1: 0.5}, waiting_time={"t": {0: 1.0, 1: 0.5}})
    assert tables.predict_proba(pd.DataFrame({"t": [0.0]}))[0, 0] == pytest.approx(2 / 3)
    fitted = bnb.NaiveBayes(features=Waiting(), method="bayes").fit(X, y)
    bnb.save(fitted, tmp_path / "m.bnb")
    np.testing.assert_array_equal(bnb.load(tmp_path / "m.bnb").predict_proba(X),
                                  fitted.predict_proba(X))
    with pytest.raises(TypeError, match="unexpected keyword argument 'nonsense'"):
        bnb.from_tables({0: 0.5, 1: 0.5}, nonsense={"t": {0: 1.0, 1: 0.5}})


def test_dependence_linear_view_and_density_plot(registered, x64):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from bayesnb.analysis import dependence, linear_weights
    from bayesnb.plots import density_plot

    X, y = registered
    X = X.assign(a=(X["t"] > 1).map({True: "hi", False: "lo"}))
    clf = bnb.NaiveBayes(features={"t": Waiting(), "u": Waiting(), "a": bnb.Categorical()},
                         method="mean").fit(X, y)
    report = dependence(clf, X, y)
    tested = report[report["method"] == "conditional on 'a'"]
    assert len(tested) == 2 and tested["log_bayes_factor"].notna().all()
    assert "no conjugate joint model" in report.set_index(["column_a", "column_b"]).loc[
        ("t", "u"), "skipped"]
    W, _ = linear_weights(clf)
    assert {"t", "u", "a=hi", "a=lo"} <= set(W.columns)
    fig = density_plot(clf, "t", X, y)
    assert fig.axes[0].get_title() == "t: Exponential per class"


class Coin(bnb.Bernoulli):
    """The Bernoulli model under a name no module outside ``families/`` knows."""

    name = "coin_flip"


def test_a_subclass_gets_its_own_reference_form_unless_the_form_serves_it():
    """A subclass may change the maths, so a family's fast form does not serve it unless the
    form declares ``serves_subclasses`` (the NegativeBinomial's, for its per-r classes)."""
    from bayesnb.fast import form_of

    assert form_of(Coin) is not form_of(bnb.Bernoulli)
    assert form_of(Coin).family is Coin and not form_of(Coin).float32_safe
    assert form_of(bnb.NegativeBinomial(2.0)).serves_subclasses


def test_credal_classification_reads_the_imprecise_declaration(registered, monkeypatch):
    monkeypatch.setitem(REGISTRY, Coin.name, Coin)
    X, y = registered
    X = X.assign(flag=(X["t"] > 1).astype(float))
    sets = [bnb.NaiveBayes({"t": Waiting(), "u": Waiting(), "flag": flag},
                           method="bayes").fit(X, y).credal_predict(X, s=1.0)
            for flag in (Coin(), bnb.Bernoulli())]
    np.testing.assert_array_equal(sets[0], sets[1])
    waiting_only = bnb.NaiveBayes(Waiting(), method="bayes").fit(X[["t", "u"]], y)
    with pytest.raises(ValueError, match="needs at least one Bernoulli, Categorical or"):
        waiting_only.credal_predict(X[["t", "u"]])


def test_an_incomplete_family_is_refused_when_made_naming_what_it_lacks():
    """The contract is abstract: a conjugate family without its predictive cannot be made
    (Python's TypeError lists the missing members), instead of failing deep in a fit."""

    class Unfinished(bnb.ConjugateFamily):
        name = "unfinished"
        encode = bnb.Exponential.encode
        prior = bnb.Exponential.prior
        estimate = staticmethod(bnb.Exponential.estimate)
        describe = staticmethod(bnb.Exponential.describe)

    with pytest.raises(TypeError, match="log_predictive"):
        Unfinished()
    assert {"suff_stats", "posterior", "log_evidence", "observe"} <= set(
        bnb.ConjugateFamily.__abstractmethods__)
    assert set(bnb.Family.__abstractmethods__) == {"encode", "prior", "estimate", "describe"}
    assert set(bnb.NonparametricFamily.__abstractmethods__) >= {"host_table",
                                                                "host_log_likelihood"}


def test_padding_rows_are_rows_the_family_takes():
    """A chunk shorter than the kernel's shape was padded with rows of 0 at weight 0; a family
    whose statistics take log x (written from its formulas, as the docs describe) summed
    0 * log 0 = NaN: NaN evidence and every row 'undefined' at 80 rows, fine at 64 (hunt 46).
    The padding rows now copy the chunk's last row."""
    from bayesnb.families._base import xp_of
    from bayesnb.families._moments import moments
    from bayesnb.families.gaussian import GaussianStats

    class UnguardedLogNormal(bnb.LogNormal):  # LogNormal's log(x) without its guard for 0
        @staticmethod
        def suff_stats(x, resp, n_levels=None):
            return GaussianStats(*moments(xp_of(x, resp).log(x), resp))

    rng = np.random.default_rng(0)
    X, y = rng.lognormal(0.0, 1.0, (80, 3)), np.repeat(["a", "b"], 40)
    reference = bnb.NaiveBayes(bnb.LogNormal(), method="bayes").fit(X, y)
    unguarded = bnb.NaiveBayes(UnguardedLogNormal(), method="bayes").fit(X, y)
    assert unguarded.log_evidence() == pytest.approx(reference.log_evidence(), rel=1e-12)
    np.testing.assert_allclose(unguarded.predict_proba(X), reference.predict_proba(X),
                               rtol=0, atol=1e-12)
