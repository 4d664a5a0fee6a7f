"""Issue 13, sections 3 and 4: per-row explanations (``explain``, ``weight_of_evidence``, the
``bayesnb explain`` command) and exact leave-one-out (``loo``, the ``log_likelihood`` group of
``to_arviz``).

References are independent of the code under test: the course notes' PlayTennis numbers
(literals), hand computations from the raw data and scipy.stats densities for the factors, and
brute-force refits on n - 1 rows for leave-one-out.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path

import jax
import numpy as np
import pandas as pd
import pytest
from example_runner import run_example
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import bayesnb as bnb
from bayesnb import datasets
from bayesnb.cli import main as cli_main

ROOT = Path(__file__).resolve().parent.parent
SUNNY = pd.Series({"Outlook": "Sunny", "Temperature": "Cool", "Humidity": "High",
                   "Wind": "Strong"})


# ---------------------------------------------------------------------- explain
@pytest.fixture(scope="module")
def tennis():
    X, y = datasets.load_playtennis()
    return X, y, bnb.NaiveBayes(method="ml").fit(X, y)


def test_playtennis_factors_are_those_of_the_course_notes(tennis):
    _, _, clf = tennis
    frame = clf.explain(SUNNY)
    assert list(frame.columns) == ["No", "Yes"]
    assert list(frame.index) == ["prior", "Outlook", "Temperature", "Humidity", "Wind",
                                 "joint", "posterior"]
    yes, no = frame["Yes"], frame["No"]
    np.testing.assert_allclose(yes.iloc[:5], [9 / 14, 2 / 9, 3 / 9, 3 / 9, 3 / 9], rtol=1e-6)
    np.testing.assert_allclose(no.iloc[:5], [5 / 14, 3 / 5, 1 / 5, 4 / 5, 3 / 5], rtol=1e-6)
    assert f"{yes['joint']:.4f}" == "0.0053" and f"{no['joint']:.4f}" == "0.0206"
    np.testing.assert_allclose(frame.loc["posterior"], [0.0206 / (0.0206 + 0.0053),
                                                        0.0053 / (0.0206 + 0.0053)], atol=2e-3)
    logs = clf.explain(SUNNY, log=True)
    np.testing.assert_allclose(np.exp(logs.to_numpy()), frame.to_numpy(), rtol=1e-6)
    # every input form of one row gives the same explanation
    for x in (SUNNY.to_frame().T, list(SUNNY), np.array([list(SUNNY)], dtype=object)):
        np.testing.assert_allclose(clf.explain(x).to_numpy(), frame.to_numpy())


def test_a_missing_value_has_factor_one(tennis):
    _, _, clf = tennis
    x = SUNNY.copy()
    x["Wind"] = None
    frame = clf.explain(x)
    assert frame.attrs["missing"] == ["Wind"]
    np.testing.assert_array_equal(frame.loc["Wind"], [1.0, 1.0])
    np.testing.assert_allclose(frame.loc["joint", "Yes"], 9 / 14 * 2 / 9 * 3 / 9 * 3 / 9,
                               rtol=1e-6)


def test_weight_of_evidence_adds_up_to_the_posterior_log_odds(tennis):
    _, _, clf = tennis
    woe = clf.weight_of_evidence(SUNNY, "No", "Yes")
    assert list(woe.index) == ["prior", "Outlook", "Temperature", "Humidity", "Wind",
                               "posterior"]
    np.testing.assert_allclose(woe["Outlook"], np.log((3 / 5) / (2 / 9)), rtol=1e-6)
    np.testing.assert_allclose(woe["prior"], np.log(5 / 9), rtol=1e-6)
    p = clf.predict_proba(SUNNY.to_frame().T)[0]
    np.testing.assert_allclose(woe["posterior"], np.log(p[0] / p[1]), rtol=1e-6)
    np.testing.assert_allclose(woe.drop("posterior").sum(), woe["posterior"], rtol=1e-6)
    bans = clf.weight_of_evidence(SUNNY, "No", "Yes", unit="decibans")
    np.testing.assert_allclose(bans, 10 * np.log10(np.exp(woe)), rtol=1e-9)
    with pytest.raises(ValueError, match="'Maybe' is not a class"):
        clf.weight_of_evidence(SUNNY, "Maybe", "Yes")
    # numeric classes named as written (the CLI passes NumPy scalars: not np.int64(1))
    numeric = bnb.NaiveBayes(method="bayes").fit(*datasets.load_playtennis()[:1],
                                                  np.array([1, 2] * 7))
    assert numeric.weight_of_evidence(SUNNY, np.int64(1), np.int64(2)).name == (
        "weight of evidence for 1 against 2 (nats)")


def _mixed(n=24, seed=3):
    """A small mixed data set: Gaussian (one pooled), Categorical, Bernoulli, Poisson and a
    Multinomial block, three classes of n / 3 rows, a few missing values."""
    rng = np.random.default_rng(seed)
    k = np.repeat([0, 1, 2], n // 3)
    words = np.array([rng.multinomial(8, p) for p in np.array(
        [[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.2, 0.5]])[k]])
    X = pd.DataFrame({
        "g": rng.normal([-1.0, 0.0, 1.5], 1.0, size=(n, 3))[np.arange(n), k],
        "gp": rng.normal([0.0, 1.0, 2.0], 1.0, size=(n, 3))[np.arange(n), k],
        "c": np.array(["r", "s", "t"], dtype=object)[
            [rng.choice(3, p=p) for p in np.array([[.6, .3, .1], [.2, .5, .3], [.1, .3, .6]])[k]]],
        "b": rng.random(n) < np.array([0.3, 0.5, 0.8])[k],
        "p": rng.poisson(np.array([1.0, 3.0, 5.0])[k]).astype(np.int64),
        "w1": words[:, 0], "w2": words[:, 1], "w3": words[:, 2],
    })
    X.loc[2, "g"] = np.nan
    X.loc[13, "c"] = None
    y = np.array(["a", "b", "c"], dtype=object)[k]
    return X, y


def _features():
    words = bnb.Multinomial(alpha=1.0)
    return {"g": bnb.Gaussian(), "gp": bnb.Gaussian(pooled=True),
            "c": bnb.Categorical(categories=[["r", "s", "t"]]), "b": bnb.Bernoulli(),
            "p": bnb.Poisson(), "w1": words, "w2": words, "w3": words}


def test_explain_factors_against_hand_computation(x64):
    X, y = _mixed()
    clf = bnb.NaiveBayes(_features(), method="ml").fit(X, y)
    x = X.iloc[5]
    frame = clf.explain(x)
    assert list(frame.index) == ["prior", "g", "gp", "c", "b", "p", ("w1", "w2", "w3"),
                                 "joint", "posterior"]
    for label in ("a", "b", "c"):
        rows = X[y == label]
        g = rows["g"].dropna()
        np.testing.assert_allclose(frame.loc["g", label],
                                   stats.norm.pdf(x["g"], g.mean(), g.std(ddof=0)), rtol=1e-9)
        np.testing.assert_allclose(frame.loc["c", label],
                                   (rows["c"] == x["c"]).sum() / rows["c"].notna().sum())
        np.testing.assert_allclose(frame.loc["p", label],
                                   stats.poisson.pmf(x["p"], rows["p"].mean()), rtol=1e-9)
        counts = rows[["w1", "w2", "w3"]].sum().to_numpy()
        np.testing.assert_allclose(frame.loc[[("w1", "w2", "w3")], label].iloc[0],
                                   stats.multinomial.pmf(x[["w1", "w2", "w3"]].to_numpy(int), 8,
                                                         counts / counts.sum()), rtol=1e-9)
    # pooled variance: one sd per column, the class means apart
    resid = X["gp"] - X.groupby(y)["gp"].transform("mean")
    sd = np.sqrt(np.mean(resid**2))
    mean_b = X.loc[y == "b", "gp"].mean()
    np.testing.assert_allclose(frame.loc["gp", "b"], stats.norm.pdf(x["gp"], mean_b, sd),
                               rtol=1e-9)
    product = frame.iloc[:-2].prod()
    np.testing.assert_allclose(frame.loc["joint"], product, rtol=1e-9)
    np.testing.assert_allclose(frame.loc["joint"], np.exp(clf.predict_joint_log_proba(
        X.iloc[[5]])[0]), rtol=1e-9)
    np.testing.assert_allclose(frame.loc["posterior"], clf.predict_proba(X.iloc[[5]])[0],
                               rtol=1e-9)


def test_explain_under_bayes_shows_the_predictives(x64):
    X, y = _mixed()
    clf = bnb.NaiveBayes(_features(), method="bayes", class_alpha=1.0).fit(X, y)
    x = X.iloc[0]
    frame = clf.explain(x)
    n_a = (y == "a").sum()
    np.testing.assert_allclose(frame.loc["prior", "a"], (n_a + 1) / (len(y) + 3))
    rows = X[y == "a"]
    c = rows["c"].dropna()
    np.testing.assert_allclose(frame.loc["c", "a"], ((c == x["c"]).sum() + 1) / (len(c) + 3))
    # Normal-Gamma (loc 0, kappa 1e-3, shape 1, rate 0.01) -> Student-t, by hand
    g = rows["g"].dropna().to_numpy()
    n, mean = len(g), g.mean()
    kappa_n, a_n = 1e-3 + n, 1.0 + n / 2
    b_n = 0.01 + 0.5 * np.sum((g - mean) ** 2) + 1e-3 * n * mean**2 / (2 * kappa_n)
    loc_n = n * mean / kappa_n
    scale = np.sqrt(b_n * (kappa_n + 1) / (a_n * kappa_n))
    np.testing.assert_allclose(frame.loc["g", "a"],
                               stats.t.pdf(x["g"], 2 * a_n, loc_n, scale), rtol=1e-9)
    np.testing.assert_allclose(frame.loc["posterior"], clf.predict_proba(X.iloc[[0]])[0],
                               rtol=1e-9)


def test_an_unseen_value_is_counted_once_for_the_one_row_explained():
    """explain scores the row and its masked copies: a level never seen was said to be "in 2
    row(s)" of a one-row question (predict_proba said 1)."""
    from bayesnb.datasets import load_titanic

    X, y = load_titanic()
    clf = bnb.NaiveBayes(method="bayes").fit(X, y)
    row = pd.Series({"Class": "4th", "Sex": "Male", "Age": "Child"})
    for call in (lambda: clf.explain(row), lambda: clf.weight_of_evidence(row, "No", "Yes")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        said = [str(w.message) for w in caught if issubclass(w.category,
                                                              bnb.UnseenCategoryWarning)]
        assert len(said) == 1 and "('4th', in 1 row(s)" in said[0], said


def test_explain_refuses_mcmc(tennis):
    X, y, _ = tennis
    clf = bnb.NaiveBayes(method="bayes").fit(X, y).set_params(method="mcmc")
    with pytest.raises(ValueError, match="method='mcmc'.*per-column explanation"):
        clf.explain(SUNNY)


def test_cli_explain_prints_the_factors(tennis, tmp_path):
    X, y, clf = tennis
    bnb.save(clf, tmp_path / "tennis.bnb")
    SUNNY.to_frame().T.to_csv(tmp_path / "row.csv", index=False)
    printed, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(err):
        code = cli_main(["explain", str(tmp_path / "tennis.bnb"), str(tmp_path / "row.csv"),
                         "--versus", "No", "Yes"])  # the command, in this process
    assert code == 0, err.getvalue()
    stdout = printed.getvalue()
    assert "0.222222" in stdout and "0.005291" in stdout  # 2/9 and the joint
    assert "weight of evidence for 'No' against 'Yes'" in stdout


# ---------------------------------------------------------------------- leave-one-out
def _brute_force(features, method, X, y, weight=None, joint=False, **params):
    """log p(y_i | x_i) (or log p(x_i, y_i)) of row i under a refit on the other rows."""
    out = np.empty(len(y))
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        clf = bnb.NaiveBayes(features, method=method, **params).fit(
            X[keep], y[keep], sample_weight=None if weight is None else weight[keep])
        scores = (clf.predict_joint_log_proba if joint else clf.predict_log_proba)(
            X.iloc[[i]])[0]
        out[i] = scores[list(clf.classes_).index(y[i])]
    return out


@pytest.fixture(params=["host", "kernels"])
def loo_route(request, monkeypatch):
    """Leave-one-out on the host, row by row, with the kernels unreachable (this table's size,
    ``loo.HOST_ROW_BLOCKS``), or by the vectorised kernels (as tables past it are)."""
    from bayesnb import loo

    if request.param == "kernels":
        monkeypatch.setattr(loo, "HOST_ROW_BLOCKS", -1)
    else:
        def unreachable(*args, **kwargs):
            raise AssertionError("a small table's leave-one-out reached the kernels")

        monkeypatch.setattr(loo, "_scores", unreachable)
        monkeypatch.setattr(loo, "_statistics", unreachable)
    return request.param


@pytest.mark.parametrize("method", ["ml", "map", "mean", "bayes"])
def test_loo_equals_brute_force_refits(method, x64, loo_route):
    X, y = _mixed()
    params = {"class_alpha": 2.0} if method == "map" else {}
    clf = bnb.NaiveBayes(_features(), method=method, **params).fit(X, y)
    result = clf.loo(X, y)
    expected = _brute_force(_features(), method, X, y, **params)
    np.testing.assert_allclose(result.pointwise, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(result.elpd_loo, expected.sum(), rtol=1e-9)
    if np.all(np.isfinite(expected)):  # ML can give a row probability 0 (log -inf)
        np.testing.assert_allclose(result.se, np.sqrt(len(y) * np.var(expected)), rtol=1e-9)
    if method in ("ml", "bayes"):
        joint = clf.loo(X, y, quantity="joint")
        np.testing.assert_allclose(joint.pointwise, _brute_force(
            _features(), method, X, y, joint=True, **params), rtol=1e-9, atol=1e-9)


def test_loo_with_weights_and_fixed_class_prior(x64, loo_route):
    X, y = _mixed()
    weight = np.random.default_rng(0).uniform(0.5, 3.0, len(y))
    params = {"class_prior": [0.2, 0.3, 0.5]}
    clf = bnb.NaiveBayes(_features(), method="bayes", **params).fit(X, y, sample_weight=weight)
    result = clf.loo(X, y, sample_weight=weight)
    np.testing.assert_allclose(result.pointwise, _brute_force(
        _features(), "bayes", X, y, weight=weight, **params), rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="pass the same sample_weight"):
        clf.loo(X, y)


def test_loo_refuses_other_data_and_undefined_rows(x64, loo_route):
    X, y = _mixed()
    clf = bnb.NaiveBayes(_features(), method="mean").fit(X, y)
    with pytest.raises(ValueError, match="not the training data"):
        clf.loo(X.assign(g=X["g"] + 1.0), y)
    with pytest.raises(ValueError, match="not the training data"):
        clf.loo(X, np.roll(y, 1))
    with pytest.raises(ValueError, match="rows but y has"):
        clf.loo(X, y[:-1])
    # ML with a class of two rows: leaving one out leaves a single value (no ML variance)
    Xs = pd.DataFrame({"g": [0.0, 1.0, 5.0, 6.0, 7.0]})
    ys = np.array(["a", "a", "b", "b", "b"])
    with pytest.raises(ValueError, match="row 0: leaving it out leaves class 'a'"):
        bnb.NaiveBayes(method="ml").fit(Xs, ys).loo(Xs, ys)
    # a fit under missing_label="drop": its rows without a label were "label None is not one
    # of the classes"; the labelled rows give the brute-force answer
    gaps = np.array(["a", None, "b", "b", "b"], dtype=object)
    with pytest.warns(bnb.MissingLabelWarning):
        dropped = bnb.NaiveBayes(method="mean", missing_label="drop").fit(Xs, gaps)
    with pytest.raises(ValueError, match=r"y has 1 missing label\(s\) \(first at row 1\): "
                                         r"leave-one-out scores each row against its label"):
        dropped.loo(Xs, gaps)
    keep = np.array([g is not None for g in gaps])
    assert np.isfinite(dropped.loo(Xs[keep], gaps[keep]).elpd_loo)


def test_loo_in_float32_is_the_float64_answer(loo_route):
    """The fit may be float32; leave-one-out recomputes the statistics in float64."""
    X, y = _mixed()
    clf32 = bnb.NaiveBayes(_features(), method="bayes").fit(X, y)
    got = clf32.loo(X, y).pointwise
    import jax

    with jax.enable_x64(True):
        ref = bnb.NaiveBayes(_features(), method="bayes").fit(X, y).loo(X, y).pointwise
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_loo_permutes_with_the_rows(x64):
    X, y = _mixed()
    order = np.random.default_rng(1).permutation(len(y))
    a = bnb.NaiveBayes(_features(), method="mean").fit(X, y).loo(X, y).pointwise
    Xp, yp = X.iloc[order].reset_index(drop=True), y[order]
    b = bnb.NaiveBayes(_features(), method="mean").fit(Xp, yp).loo(Xp, yp).pointwise
    np.testing.assert_allclose(b, a[order], rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------- ArviZ
def _conjugate_data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    k = rng.integers(0, 2, n)
    X = pd.DataFrame({"g": rng.normal(1.5 * k, 1.0),
                      "c": np.array(["u", "v", "w"], dtype=object)[
                          [rng.choice(3, p=p) for p in np.array([[.6, .3, .1], [.2, .3, .5]])[k]]]})
    return X, np.array(["n", "p"], dtype=object)[k]


def test_az_loo_on_exact_draws_agrees_with_the_exact_loo(x64):
    import arviz as az

    X, y = _conjugate_data()
    clf = bnb.NaiveBayes(method="bayes").fit(X, y)
    exact = clf.loo(X, y, quantity="joint")
    idata = clf.to_arviz(clf.sample_posterior(4000, seed=1), prior_draws=None, X=X, y=y,
                         log_likelihood="joint")
    assert idata.log_likelihood["xy"].dims == ("chain", "draw", "row")
    psis = az.loo(idata, pointwise=True)
    assert abs(psis.elpd_loo - exact.elpd_loo) < psis.se
    assert abs(psis.elpd_loo - exact.elpd_loo) < 0.1  # PSIS is far better than its se here
    np.testing.assert_allclose(psis.loo_i.values, exact.pointwise, atol=0.1)
    with warnings.catch_warnings():  # ArviZ's WAIC reliability note is not under test
        warnings.simplefilter("ignore", UserWarning)
        assert np.isfinite(az.waic(idata).elpd_waic)


@pytest.mark.filterwarnings("ignore::bayesnb.inference.ConvergenceWarning")
def test_az_loo_and_compare_on_an_mcmc_fit():
    import arviz as az
    import jax

    X, y = _conjugate_data()
    clf = bnb.NaiveBayes(method="mcmc", num_warmup=200, num_samples=500, num_chains=1,
                         progress_bar=False, seed=0).fit(X, y)
    idata = clf.to_arviz(X=X, y=y, prior_draws=None, log_likelihood="joint")
    psis = az.loo(idata)
    with jax.enable_x64(True):
        exact = bnb.NaiveBayes(method="bayes").fit(X, y).loo(X, y, quantity="joint")
    assert abs(psis.elpd_loo - exact.elpd_loo) < psis.se
    conditional = clf.to_arviz(X=X, y=y, prior_draws=None, log_likelihood="conditional")
    assert list(conditional.log_likelihood.data_vars) == ["y_given_x"]
    with jax.enable_x64(True):
        bayes = bnb.NaiveBayes(method="bayes").fit(X, y)
        exact_draws = bayes.to_arviz(bayes.sample_posterior(500, seed=2), prior_draws=None,
                                     X=X, y=y, log_likelihood="joint")
    with warnings.catch_warnings():  # ArviZ's notes (Pareto k, pandas API) are not under test
        warnings.simplefilter("ignore")
        table = az.compare({"nuts": idata, "exact draws": exact_draws})
    assert set(table.index) == {"nuts", "exact draws"}
    assert abs(table["elpd_loo"].iloc[0] - table["elpd_loo"].iloc[1]) < psis.se
    with pytest.raises(ValueError, match="PSIS-LOO"):
        clf.loo(X, y)


# ---------------------------------------------------------------------- example and docs
def test_example_runs_and_the_docs_quote_it():
    stdout = run_example("explain_and_loo.py")
    page = (ROOT / "docs" / "user_guide" / "explain_loo.md").read_text()
    quoted_lines = [line for line in stdout.splitlines() if line.startswith("docs: ")]
    assert len(quoted_lines) >= 3, stdout
    for line in quoted_lines:
        quoted = line[len("docs: "):]
        assert quoted in page, quoted
    assert "0.0053" in stdout


# ---------------------------------------------------------------------- remove_stats
_values = st.lists(st.floats(-100, 100, allow_nan=False), min_size=0, max_size=6)


def _gaussian_stats(values):
    from bayesnb.families.gaussian import GaussianStats

    v = np.asarray(values, dtype=np.float64)
    mean = v.mean() if len(v) else 0.0
    return GaussianStats(np.array([[float(len(v))]]), np.array([[mean]]),
                         np.array([[np.sum((v - mean) ** 2)]]))


@settings(max_examples=60, deadline=None)
@given(_values, st.lists(st.floats(-100, 100, allow_nan=False), min_size=1, max_size=3))
def test_gaussian_remove_stats_undoes_merge_stats(kept, removed):
    """Statistics of a sample without a subset equal the subset-free sample's, computed by
    hand, to the rounding of the merged statistics (the downdate subtracts from them)."""
    from bayesnb.families.gaussian import Gaussian

    merged = Gaussian.merge_stats(_gaussian_stats(kept), _gaussian_stats(removed))
    got = Gaussian.remove_stats(merged, _gaussian_stats(removed))
    want = _gaussian_stats(kept)
    scale = 1e-9 * (1.0 + float(merged.m2[0, 0]))
    np.testing.assert_allclose(got.count, want.count)
    np.testing.assert_allclose(got.mean, want.mean, atol=1e-9 * 100)
    np.testing.assert_allclose(got.m2, want.m2, atol=scale)
    assert float(got.m2[0, 0]) >= 0.0


def test_loo_on_the_kernels_after_simulate(monkeypatch):
    """``simulate`` traces the NumPyro program with the fitted priors as constants, in
    float32; JAX keeps their device buffers by the arrays' identity. Leave-one-out then
    passes the fitted priors to its float64 kernels (the host's route turned off here): an
    XLA input mismatch (f32 buffer where f64 was compiled) before the simulation took copies.
    The answer is the exact leave-one-out by refitting without each row."""
    from bayesnb import loo

    rng = np.random.default_rng(3)
    n = 30
    y = np.arange(n) % 2
    X = rng.normal(y[:, None], 1.0, (n, 2))
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="bayes").fit(X, y)
    clf.simulate(5, seed=0)
    monkeypatch.setattr(loo, "HOST_ROW_BLOCKS", -1)
    got = clf.loo(X, y, quantity="joint").pointwise
    keep = np.ones(n, dtype=bool)
    for i in (0, 7, 29):
        keep[:] = True
        keep[i] = False
        refit = bnb.NaiveBayes(bnb.Gaussian(), method="bayes").fit(X[keep], y[keep])
        want = refit.predict_joint_log_proba(X[i:i + 1])[0, y[i]]
        assert got[i] == pytest.approx(want, rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("method", ["ml", "bayes"])
def test_loo_of_columns_declared_one_by_one_equals_brute_force_refits(method, x64, loo_route):
    """Six Gaussian columns declared one by one (their statistics counted as one block and
    split back, ``fitted.joined_for_counting``) and a Poisson pair: leave-one-out is the refit
    without each row."""
    rng = np.random.default_rng(4)
    y = np.repeat([0, 1, 2], 8)
    X = pd.DataFrame(rng.normal(y[:, None] * 0.7, 1.0, (24, 6)),
                     columns=[f"g{j}" for j in range(6)])
    X["p0"], X["p1"] = rng.poisson(2.0 + y), rng.poisson(1.0 + y)
    features = {f"g{j}": bnb.Gaussian() for j in range(6)} | {
        "p0": bnb.Poisson(), "p1": bnb.Poisson()}
    clf = bnb.NaiveBayes(features, method=method).fit(X, y)
    np.testing.assert_allclose(clf.loo(X, y).pointwise, _brute_force(features, method, X, y),
                               rtol=1e-9, atol=1e-9)


def test_loo_remakes_only_each_rows_own_class(x64, monkeypatch):
    """Leaving a row out changes its own class's statistics only: with 12 classes each row's
    own class is made again (with and without the row: two tables, whatever the number of
    classes), and the answer is still the refit without the row. A pooled precision
    (``couples_classes``) changes every class: each row remakes all 12 there."""
    from bayesnb import loo

    rng = np.random.default_rng(7)
    y = np.repeat(np.arange(12), 3)
    X = pd.DataFrame({"g": rng.normal(0.4 * y, 1.0), "gp": rng.normal(-0.3 * y, 1.0),
                      "c": rng.integers(0, 3, y.size).astype(str)})
    features = {"g": bnb.Gaussian(), "gp": bnb.Gaussian(pooled=True),
                "c": bnb.Categorical(alpha=1.0)}
    widths = []
    scores = loo._scores

    def counted(family, method, levels, prior, full, row, x):
        widths.append(np.shape(jax.tree_util.tree_leaves(full)[0])[1])
        return scores(family, method, levels, prior, full, row, x)

    monkeypatch.setattr(loo, "HOST_ROW_BLOCKS", -1)
    monkeypatch.setattr(loo, "_scores", counted)
    clf = bnb.NaiveBayes(features, method="bayes").fit(X, y)
    for quantity, joint in (("conditional", False), ("joint", True)):
        np.testing.assert_allclose(clf.loo(X, y, quantity=quantity).pointwise,
                                   _brute_force(features, "bayes", X, y, joint=joint),
                                   rtol=1e-9, atol=1e-9)
    assert sorted(set(widths)) == [2, 12]  # "g" and "c": 2; "gp": 12
    assert bnb.Gaussian(pooled=True).couples_classes() and not bnb.Gaussian().couples_classes()


@pytest.mark.parametrize("features", [{"g": bnb.Gaussian(pooled=True)},
                                      {"g": bnb.Gaussian(), "b": bnb.Bernoulli()}],
                         ids=["pooled-only", "independent"])
def test_loo_with_a_class_of_prior_zero_and_a_row_of_weight_zero(features, x64, loo_route):
    """A class of prior probability 0 stays impossible without any row (its full-data score
    less its prior is not read), and a row of weight 0 is left out by changing nothing, its
    value ruled out by its class under ML or not: both as the refits say."""
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1, 2], 6)
    b = (np.arange(18) % 2 == 0) | (y == 2)
    b[17] = False  # class 2's one row with b False, of weight 0: ML's theta is 1 without it
    X = pd.DataFrame({"g": rng.normal(y, 1.0), "b": b})[list(features)]
    weight = np.ones(18)
    weight[17] = 0.0
    params = {"class_prior": [0.5, 0.5, 0.0]}
    for method in ("ml", "bayes"):
        clf = bnb.NaiveBayes(features, method=method, **params).fit(X, y, sample_weight=weight)
        for joint in (False, True):
            got = clf.loo(X, y, sample_weight=weight,
                          quantity="joint" if joint else "conditional").pointwise
            want = _brute_force(features, method, X, y, weight=weight, joint=joint, **params)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("family, values", [
    (bnb.Categorical(), list("xyxyxyxyxyxy")), (bnb.Bernoulli(), [0, 1] * 6),
    (bnb.Multinomial(), [0, 1] * 6), (bnb.Poisson(), [0, 1] * 6)],
    ids=["categorical", "bernoulli", "multinomial", "poisson"])
def test_ml_loo_of_a_class_of_one_row_is_refused_naming_the_row(family, values, loo_route):
    """Without its only row, class 'c' has no ML table (0/0): the refit refuses it, and so
    does leave-one-out, on both routes (the kernels scored it -inf for the count families)."""
    X = pd.DataFrame({"v": values})
    y = list("aaaaaabbbbbc")
    clf = bnb.NaiveBayes(family, method="ml").fit(X, y)
    for quantity in ("conditional", "joint"):
        with pytest.raises(ValueError, match="row 11: leaving it out leaves class 'c'"):
            clf.loo(X, y, quantity=quantity)


def test_loo_of_a_float32_fit_whose_log_coefficient_float32_rounded(loo_route):
    """One count a row: the log multinomial coefficients are 0, which the float32 fit holds
    as -5.8e-5 over 200 rows (float32's rounding of log x!, about 1e-5 a row at most). The
    check that X, y are the training data took that for other data; it is the float64 LOO."""
    rng = np.random.default_rng(0)
    y = np.arange(200) % 2
    counts = np.zeros((200, 5))
    counts[np.arange(200), rng.integers(0, 5, 200)] = rng.integers(1, 30, 200)
    X = pd.DataFrame(counts, columns=[f"w{j}" for j in range(5)]).assign(
        c=np.array(["u", "v"])[rng.integers(0, 2, 200)])
    features = {"c": bnb.Categorical(), ("w0", "w1", "w2", "w3", "w4"): bnb.Multinomial()}
    got = bnb.NaiveBayes(features, method="bayes").fit(X, y).loo(X, y).pointwise
    with jax.enable_x64(True):
        want = bnb.NaiveBayes(features, method="bayes").fit(X, y).loo(X, y).pointwise
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_the_guide_says_ml_loo_of_playtennis_is_minus_infinity():
    """docs/user_guide/explain_loo.md: under ML a day can get probability 0 without itself:
    D6, the only No day with Temperature Cool and with Humidity Normal (the page said a day
    whose Outlook its class never shows: there is none, hunt 45)."""
    from bayesnb.datasets import load_playtennis

    days, play = load_playtennis()
    result = bnb.NaiveBayes(method="ml").fit(days, play).loo(days, play)
    assert result.elpd_loo == -np.inf and np.isnan(result.se)
    assert np.flatnonzero(np.isinf(np.asarray(result.pointwise))).tolist() == [5]  # D6
    no = days[play == "No"]
    assert (no["Temperature"] == "Cool").sum() == 1 and (no["Humidity"] == "Normal").sum() == 1
    assert no.loc[5, "Temperature"] == "Cool" and no.loc[5, "Humidity"] == "Normal"
    page = (Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "explain_loo.md")
    text = " ".join(page.read_text().split())
    assert "D6, the only No day with Temperature Cool and with Humidity Normal" in text
    assert "`clf.loo` is `-inf` there, with `se` NaN" in text


@pytest.mark.parametrize("family", [bnb.Gaussian(), bnb.LogNormal()], ids=["gaussian", "lognormal"])
@pytest.mark.parametrize("method", ["ml", "bayes"])
def test_loo_without_an_outlier_counts_its_class_again(family, method, x64, loo_route):
    """Class 0 is {1, 1 + d, 100}: without the 100 its spread is d / 2, which the downdate of
    the three values' moments lost to cancellation (relative errors up to 8e-5, and for d of
    1e-5 or less "undefined", the spread taken for 0). Such a class (``removal_condition``)
    is counted again from its other rows: the refit's answer."""
    for d in (1e-2, 1e-4, 1e-6):
        X = np.array([[1.0], [1.0 + d], [100.0], [3.0], [4.0], [6.0], [2.5]])
        y = np.array([0, 0, 0, 1, 1, 1, 1])
        features = {0: family}
        got = bnb.NaiveBayes(features, method=method).fit(X, y).loo(X, y, quantity="joint")
        want = _brute_force(features, method, pd.DataFrame(X), y, joint=True)
        np.testing.assert_allclose(got.pointwise, want, rtol=1e-12, err_msg=f"d={d}")
        with jax.enable_x64(False):  # a float32 fit: loo recounts in float64, the same
            fit32 = bnb.NaiveBayes(features, method=method).fit(X, y)
            np.testing.assert_allclose(fit32.loo(X, y, quantity="joint").pointwise, want,
                                       rtol=1e-12, err_msg=f"float32, d={d}")


@pytest.mark.parametrize("method", ["mean", "bayes"])
def test_a_row_of_weight_zero_with_a_level_of_its_own_is_scored_as_the_fit_predicts_it(
        method, x64, loo_route):
    """A row of weight 0 is no row: its level 'z' is not one of the fit's. Leaving it out
    changes nothing, so its value is the full fit's prediction (an unseen level, smoothed,
    warned about once); loo refused the training data instead."""
    from bayesnb.families.categorical import UnseenCategoryWarning

    X = pd.DataFrame({"c": list("xyxyxyxyxyxz"), "g": np.linspace(0.0, 1.0, 12)})
    y = np.array(list("aaaaaabbbbbb"))
    weight = np.ones(12)
    weight[11] = 0.0
    features = {"c": bnb.Categorical(), "g": bnb.Gaussian()}
    clf = bnb.NaiveBayes(features, method=method).fit(X, y, sample_weight=weight)
    for joint in (False, True):
        with pytest.warns(UnseenCategoryWarning, match="'z'") as caught:
            got = clf.loo(X, y, sample_weight=weight,
                          quantity="joint" if joint else "conditional").pointwise
        assert sum(issubclass(w.category, UnseenCategoryWarning) for w in caught) == 1
        with pytest.warns(UnseenCategoryWarning):
            want = _brute_force(features, method, X, y, weight=weight, joint=joint)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_explain_of_a_wide_row_scores_its_masked_copies_a_few_at_a_time(monkeypatch, x64):
    """explain scored one copy of the row per column, each as wide as the model, in one
    grid: 100,000 Bernoulli columns asked for 75 GiB. The copies are scored in chunks of
    bounded size (here forced to 7 rows); the factors are still Bernoulli's by hand:
    (ones + 1) / (rows + 2) for x = 1, its complement for x = 0, per class."""
    import bayesnb.explain as explain

    rng = np.random.default_rng(3)
    X = (rng.random((30, 40)) < 0.3).astype(float)
    y = np.repeat(["a", "b"], 15)
    clf = bnb.NaiveBayes(bnb.Bernoulli()).fit(X, y)
    monkeypatch.setattr(explain, "MASKED_CELLS", 7 * 40)
    factors = clf.explain(X[0])
    theta = np.stack([(X[y == c].sum(axis=0) + 1) / (15 + 2) for c in ("a", "b")], axis=1)
    expected = np.where(X[0][:, None] == 1, theta, 1 - theta)
    np.testing.assert_allclose(factors.iloc[1:41].to_numpy(), expected, rtol=1e-12)
    posterior = np.prod(expected, axis=0) * 0.5
    np.testing.assert_allclose(factors.loc["posterior"].to_numpy(),
                               posterior / posterior.sum(), rtol=1e-10)


def test_explain_columns_named_true_and_false(x64):
    """Columns named True/False (a pivot of a boolean): ``frame[[True, False]]`` is a boolean
    mask to pandas, and explain failed ("Item wrong length"). The factors against
    scipy.stats (ML Gaussian: mean 0.3, sd 0.2) and the counted levels."""
    X = pd.DataFrame({True: [0.1, 0.5, 1.2, 2.0], False: ["x", "y", "x", "y"]})
    clf = bnb.NaiveBayes(method="ml").fit(X, ["a", "a", "b", "b"])
    factors = clf.explain(X.iloc[[0]])
    assert list(factors.index) == ["prior", True, False, "joint", "posterior"]
    np.testing.assert_allclose(factors.iloc[1], [stats.norm.pdf(0.1, 0.3, 0.2),
                                                 stats.norm.pdf(0.1, 1.6, 0.4)])
    np.testing.assert_allclose(factors.iloc[2].to_numpy(dtype=float), [0.5, 0.5])
    np.testing.assert_allclose(factors.loc["posterior"], clf.predict_proba(X.iloc[[0]])[0])


def test_explain_and_tables_keep_the_data_column_order():
    """explain, weight_of_evidence, conditional_tables and summary listed the columns block by
    block (x1, x3, x2 for a Gaussian, a Categorical, a Gaussian column): now in the data's
    order, a Multinomial block at its first column (hunt 45)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x1": rng.normal(size=20), "x2": rng.choice(["a", "b"], 20),
                      "w1": rng.poisson(2, 20), "x3": rng.normal(size=20),
                      "w2": rng.poisson(2, 20)})
    y = rng.choice(["p", "q"], 20)
    words = bnb.Multinomial()
    clf = bnb.NaiveBayes({"w1": words, "w2": words}).fit(X, y)
    order = ["x1", "x2", ("w1", "w2"), "x3"]
    assert clf.explain(X.iloc[0]).index.tolist() == ["prior", *order, "joint", "posterior"]
    assert clf.weight_of_evidence(X.iloc[0], "p", "q").index.tolist() == [
        "prior", *order, "posterior"]
    assert list(clf.conditional_tables()) == order
    text = clf.summary()
    assert text.index("  x1") < text.index("  x2") < text.index("('w1', 'w2')") < text.index(
        "  x3")
