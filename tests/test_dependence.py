"""Dependence diagnostics (bayesnb.dependence, analysis.dependence), the joining remedy
(bayesnb.joining) and the heat map, against independent computations: Bayes factors written out
as gammaln sums by hand, Normal-Wishart and Normal-Gamma evidences as chain-rule products of
scipy's posterior predictives (Student-t, negative binomial, Dirichlet-multinomial)."""

import re
from math import lgamma, sqrt
from pathlib import Path

import jax
import matplotlib
import numpy as np
import pandas as pd
import pytest
from example_runner import run_example
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.base import clone
from sklearn.pipeline import make_pipeline

import bayesnb as bnb
from bayesnb.analysis import dependence
from bayesnb.dependence import Unit, normal_wishart_log_evidence, pair_factor

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parent.parent


def row(report, a, b):
    """The report's row for the pair {a, b}, in either order."""
    hit = report[((report.column_a == a) & (report.column_b == b))
                 | ((report.column_a == b) & (report.column_b == a))]
    assert len(hit) == 1, (a, b)
    return hit.iloc[0]


# ---------------------------------------------------------------------- discrete pairs by hand
def test_two_categorical_columns_by_hand():
    # class 0: (x,p) (x,p) (y,q) (x,r); class 1: (y,q) (y,q) (x,p); one row missing a
    X = pd.DataFrame({"a": ["x", "x", "y", "x", "y", "y", "x", None],
                      "b": ["p", "p", "q", "r", "q", "q", "p", "r"]})
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    clf = bnb.NaiveBayes(features={"a": bnb.Categorical(alpha=1.0),
                                   "b": bnb.Categorical(alpha=1.0)}).fit(X, y)
    report = dependence(clf, X, y)
    # alpha_a = (1, 1), alpha_b = (1, 1, 1): N' = sqrt(2 * 3), every cell sqrt(6)/6
    n_prime, c = sqrt(6.0), sqrt(6.0) / 6.0
    class0 = ((lgamma(n_prime) - lgamma(n_prime + 4) + lgamma(c + 2) + 2 * lgamma(c + 1)
               - 3 * lgamma(c))
              - (lgamma(2) - lgamma(6) + lgamma(4) + lgamma(2))  # a: x 3, y 1
              - (lgamma(3) - lgamma(7) + lgamma(3) + lgamma(2) + lgamma(2)))  # b: 2, 1, 1
    class1 = ((lgamma(n_prime) - lgamma(n_prime + 3) + lgamma(c + 2) + lgamma(c + 1)
               - 2 * lgamma(c))
              - (lgamma(2) - lgamma(5) + lgamma(2) + lgamma(3))  # a: x 1, y 2
              - (lgamma(3) - lgamma(6) + lgamma(2) + lgamma(3)))  # b: 1, 2, 0
    r = report.iloc[0]
    assert r["class=0"] == pytest.approx(class0, rel=1e-12)
    assert r["class=1"] == pytest.approx(class1, rel=1e-12)
    assert r["log_bayes_factor"] == pytest.approx(class0 + class1, rel=1e-12)
    assert r["rows"] == 7 and r["method"] == "joint Dirichlet" and r["skipped"] == ""


def test_two_bernoulli_columns_by_hand():
    # Beta(alpha=2, beta=3) on both: levels (0, 1) carry (3, 2), A = 5, cells 5 p(u) p(v)
    X = pd.DataFrame({"u": [1, 1, 0, 1, 0, 1], "v": [1, 1, 0, 0, 1, 0]})
    y = np.array([0, 0, 0, 0, 1, 1])
    fam = bnb.Bernoulli(alpha=2.0, beta=3.0)
    clf = bnb.NaiveBayes(features={"u": fam, "v": fam}).fit(X, y)
    r = dependence(clf, X, y).iloc[0]
    a00, a01, a10, a11 = 1.8, 1.2, 1.2, 0.8
    # class 0: (1,1) twice, (0,0), (1,0)
    joint = (lgamma(5) - lgamma(9) + lgamma(a11 + 2) - lgamma(a11) + lgamma(a00 + 1)
             - lgamma(a00) + lgamma(a10 + 1) - lgamma(a10))
    u = lgamma(5) - lgamma(9) + lgamma(2 + 3) - lgamma(2) + lgamma(3 + 1) - lgamma(3)
    v = lgamma(5) - lgamma(9) + lgamma(2 + 2) - lgamma(2) + lgamma(3 + 2) - lgamma(3)
    assert r["class=0"] == pytest.approx(joint - u - v, rel=1e-12)
    # class 1: (0,1), (1,0)
    joint1 = (lgamma(5) - lgamma(7) + lgamma(a01 + 1) - lgamma(a01) + lgamma(a10 + 1)
              - lgamma(a10))
    one = lgamma(5) - lgamma(7) + lgamma(3) - lgamma(2) + lgamma(4) - lgamma(3)
    assert r["class=1"] == pytest.approx(joint1 - 2 * one, rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1), st.integers(0, 1)),
                min_size=1, max_size=30),
       st.floats(0.2, 5.0), st.floats(0.2, 5.0))
def test_joint_dirichlet_factor_is_symmetric(rows, alpha_a, alpha_b):
    """Swapping the two columns transposes the table: the factor must not change."""
    data = np.array(rows)
    y, a, b = data[:, 0] % 2, data[:, 1], data[:, 2]
    ua = Unit("a", "discrete", a, np.ones(len(a), bool), {"alpha": np.array([alpha_a, 1.0])})
    ub = Unit("b", "discrete", b, np.ones(len(b), bool), {"alpha": np.array([alpha_b, 2.0])})
    ab, ba = pair_factor(ua, ub, y, 2), pair_factor(ub, ua, y, 2)
    np.testing.assert_allclose(ab[0], ba[0], rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------- Normal-Wishart
def chain_mvt(x, loc, kappa, nu, psi):
    """log p(x_1..x_n) as a product of Student-t posterior predictives, one rank-one update at
    a time (Murphy 2007, eq. 258)."""
    d = x.shape[1]
    m, total = np.array(loc, float), 0.0
    psi = np.array(psi, float)
    for xi in x:
        dof = nu - d + 1
        total += stats.multivariate_t(loc=m, shape=psi * (kappa + 1) / (kappa * dof),
                                      df=dof).logpdf(xi)
        dev = xi - m
        psi = psi + kappa / (kappa + 1) * np.outer(dev, dev)
        m = (kappa * m + xi) / (kappa + 1)
        kappa, nu = kappa + 1, nu + 1
    return total


def chain_t(x, loc, kappa, shape, rate):
    """The Normal-Gamma column's log evidence, a product of 1-D Student-t predictives."""
    total = 0.0
    for xi in x:
        total += stats.t(df=2 * shape, loc=loc,
                         scale=np.sqrt(rate * (kappa + 1) / (shape * kappa))).logpdf(xi)
        rate += kappa * (xi - loc) ** 2 / (2 * (kappa + 1))
        loc = (kappa * loc + xi) / (kappa + 1)
        kappa, shape = kappa + 1, shape + 0.5
    return total


def test_normal_wishart_evidence_is_the_chain_of_predictives():
    rng = np.random.default_rng(3)
    x = rng.multivariate_normal([1.0, -2.0], [[2.0, 1.2], [1.2, 1.0]], size=7)
    loc, kappa, nu, psi = np.array([0.5, 0.0]), 0.3, 4.5, np.array([[1.5, 0.2], [0.2, 0.7]])
    dev = x - x.mean(axis=0)
    got = normal_wishart_log_evidence([7], x.mean(axis=0)[None], (dev.T @ dev)[None], loc,
                                      kappa, nu, psi)
    assert got[0] == pytest.approx(chain_mvt(x, loc, kappa, nu, psi), rel=1e-10)


def test_pooled_normal_wishart_evidence_is_the_chain_of_predictives():
    """One covariance shared by two groups: each new row's predictive uses the shared (nu,
    Psi) and its own group's (kappa, m)."""
    rng = np.random.default_rng(4)
    xs = [rng.normal(size=(4, 2)) + 3.0, rng.normal(size=(5, 2))]
    loc, kappa, nu, psi = np.zeros(2), 0.5, 3.0, np.eye(2) * 2.0
    expected, ms, ks = 0.0, [loc.copy(), loc.copy()], [kappa, kappa]
    order = [(0, i) for i in range(4)] + [(1, i) for i in range(5)]
    for g, i in order[::2] + order[1::2]:  # interleaved: the order must not matter
        xi, dof = xs[g][i], nu - 1
        expected += stats.multivariate_t(loc=ms[g], shape=psi * (ks[g] + 1) / (ks[g] * dof),
                                         df=dof).logpdf(xi)
        dev = xi - ms[g]
        psi = psi + ks[g] / (ks[g] + 1) * np.outer(dev, dev)
        ms[g] = (ks[g] * ms[g] + xi) / (ks[g] + 1)
        ks[g], nu = ks[g] + 1, nu + 1
    n = [4, 5]
    means = np.array([x.mean(axis=0) for x in xs])
    scatters = np.array([(x - x.mean(0)).T @ (x - x.mean(0)) for x in xs])
    got = normal_wishart_log_evidence(n, means, scatters, loc, kappa, 3.0, np.eye(2) * 2.0,
                                      pooled=True)
    assert got[0] == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("pooled", [False, True])
def test_gaussian_pair_against_predictive_chains(pooled):
    """The documented prior mapping: nu = 1 + a_1 + a_2, Psi = diag(2 b), kappa, m from the
    columns; the independent side is each column's Normal-Gamma. A row missing one value is
    left out of the pair."""
    rng = np.random.default_rng(5)
    n = 12
    y = np.repeat([0, 1], n // 2)
    g1 = rng.normal(y * 2.0, 1.0)
    g2 = 0.7 * g1 + rng.normal(0, 0.5, n)
    g2[3] = np.nan
    X = pd.DataFrame({"g1": g1, "g2": g2})
    fam = bnb.Gaussian(loc=[0.5, -1.0], kappa=0.5, shape=2.0, rate=[0.5, 2.0], pooled=pooled)
    clf = bnb.NaiveBayes(features=fam).fit(X, y)
    r = dependence(clf, X, y).iloc[0]
    keep = ~np.isnan(g2)
    xs = [np.stack([g1, g2], 1)[keep & (y == k)] for k in (0, 1)]
    if not pooled:
        per_class = [chain_mvt(x, [0.5, -1.0], 0.5, 5.0, np.diag([1.0, 4.0]))
                     - chain_t(x[:, 0], 0.5, 0.5, 2.0, 0.5) - chain_t(x[:, 1], -1.0, 0.5, 2.0, 2.0)
                     for x in xs]
        assert [r["class=0"], r["class=1"]] == pytest.approx(per_class, rel=1e-9)
        assert r["log_bayes_factor"] == pytest.approx(sum(per_class), rel=1e-9)
    else:
        assert np.isnan(r["class=0"]) and "pooled" in r["method"]
        assert np.isfinite(r["log_bayes_factor"])
    assert r["rows"] == n - 1


def test_pooled_gaussian_pair_in_one_dimension_matches_the_pooled_normal_gamma():
    """The d = 1 path (the independent side) under pooled=True against a predictive chain with
    one shared (shape, rate) and a (kappa, m) per class."""
    from bayesnb.dependence import _gaussian_evidence

    rng = np.random.default_rng(6)
    x, g = rng.normal(size=9), np.array([0, 1, 0, 1, 1, 0, 0, 1, 1])
    unit = Unit("g", "gaussian", x, np.ones(9, bool),
                {"loc": np.array(0.2), "kappa": np.array(0.4), "shape": np.array(1.5),
                 "rate": np.array(0.8), "pooled": np.array(True)})
    shape, rate, locs, kappas, expected = 1.5, 0.8, [0.2, 0.2], [0.4, 0.4], 0.0
    for xi, k in zip(x, g, strict=True):
        expected += stats.t(df=2 * shape, loc=locs[k], scale=np.sqrt(
            rate * (kappas[k] + 1) / (shape * kappas[k]))).logpdf(xi)
        rate += kappas[k] * (xi - locs[k]) ** 2 / (2 * (kappas[k] + 1))
        locs[k] = (kappas[k] * locs[k] + xi) / (kappas[k] + 1)
        kappas[k], shape = kappas[k] + 1, shape + 0.5
    assert _gaussian_evidence(unit, x, g, 2, True)[0] == pytest.approx(expected, rel=1e-10)


# ---------------------------------------------------------------------- conditional pairs
def test_discrete_against_gaussian_poisson_and_multinomial():
    """Each (class, level) cell has the second column's own prior; the discrete column's
    evidence cancels. References: predictive chains (Student-t, negative binomial,
    Dirichlet-multinomial) per cell minus per class."""
    rng = np.random.default_rng(7)
    n = 16
    y = np.repeat([0, 1], n // 2)
    a = rng.choice(["s", "t"], n)
    g = rng.normal(np.where(a == "s", 1.0, -1.0), 1.0)
    p = rng.poisson(np.where(a == "s", 4.0, 1.0))
    w = rng.poisson(2.0, size=(n, 3))
    X = pd.DataFrame({"a": a, "g": g, "p": p, "w1": w[:, 0], "w2": w[:, 1], "w3": w[:, 2]})
    multi = bnb.Multinomial(alpha=[0.5, 1.0, 2.0])
    clf = bnb.NaiveBayes(features={
        "a": bnb.Categorical(), "g": bnb.Gaussian(loc=0.0, kappa=0.2, shape=1.5, rate=0.7),
        "p": bnb.Poisson(shape=2.0, rate=0.5), "w1": multi, "w2": multi, "w3": multi}).fit(X, y)
    report = dependence(clf, X, y)

    def nb_chain(x, shape, rate):
        total = 0.0
        for xi in x:
            total += stats.nbinom(n=shape, p=rate / (rate + 1)).logpmf(xi)
            shape, rate = shape + xi, rate + 1
        return total

    def dm_chain(rows, alpha):
        total, alpha = 0.0, np.array(alpha, float)
        for r in rows:
            total += stats.dirichlet_multinomial(alpha, r.sum()).logpmf(r)
            alpha = alpha + r
        return total

    refs = {"g": lambda x: chain_t(x, 0.0, 0.2, 1.5, 0.7),
            "p": lambda x: nb_chain(x, 2.0, 0.5),
            ("w1", "w2", "w3"): lambda x: dm_chain(x, [0.5, 1.0, 2.0])}
    data = {"g": g, "p": p, ("w1", "w2", "w3"): w}
    for name, ref in refs.items():
        expected = [sum(ref(data[name][(y == k) & (a == u)]) for u in ("s", "t"))
                    - ref(data[name][y == k]) for k in (0, 1)]
        r = row(report, "a", name)
        assert [r["class=0"], r["class=1"]] == pytest.approx(expected, rel=1e-9), name
        assert r["method"] == "conditional on 'a'"
    # pairs without a closed form are listed, never dropped
    for other in ("p", ("w1", "w2", "w3")):
        r = row(report, "g", other)
        assert np.isnan(r["log_bayes_factor"]) and "no conjugate joint model" in r["skipped"]
    assert report["log_bayes_factor"].isna().to_numpy()[-3:].all()  # listed last
    assert len(report) == 6  # 4 units: a, g, p and the Multinomial block


# ---------------------------------------------------------------------- synthetic ranking
@pytest.fixture(scope="module")
def synthetic():
    rng = np.random.default_rng(11)
    n = 600
    y = rng.integers(0, 2, n)
    smoker = (rng.random(n) < np.where(y == 1, 0.7, 0.3)).astype(int)
    g1 = rng.normal(y * 1.5, 1.0)
    X = pd.DataFrame({
        "smoker": smoker, "smoker_copy": smoker.copy(),
        "colour": rng.choice(["r", "g", "b"], n),
        "flag": (rng.random(n) < 0.4).astype(int),
        "g1": g1, "g2": g1 + rng.normal(0, 0.2, n),  # strongly correlated within each class
        "g3": rng.normal(y, 1.0),
    })
    features = {"smoker": bnb.Bernoulli(), "smoker_copy": bnb.Bernoulli(),
                "flag": bnb.Bernoulli(), "colour": bnb.Categorical()}
    clf = bnb.NaiveBayes(features=features).fit(X, y)
    return clf, X, y


def test_copied_and_correlated_pairs_rank_first(synthetic):
    clf, X, y = synthetic
    report = dependence(clf, X, y)
    top = {frozenset((a, b)) for a, b in zip(report.column_a[:2], report.column_b[:2],
                                             strict=True)}
    assert top == {frozenset(("smoker", "smoker_copy")), frozenset(("g1", "g2"))}
    assert (report.log_bayes_factor[:2] > 10).all()
    assert (report.log_bayes_factor[2:] < 0).all()
    assert len(report) == 21 and report.skipped.eq("").all()


def test_same_factors_in_float32_and_float64_mode(synthetic):
    """The diagnostic is float64 NumPy whatever JAX's dtype: fits in either mode agree."""
    clf, X, y = synthetic
    base = dependence(clf, X, y).log_bayes_factor.to_numpy()
    with jax.enable_x64(True):
        wide = dependence(bnb.NaiveBayes(features=clf.features), X, y)
    np.testing.assert_allclose(wide.log_bayes_factor.to_numpy(), base, rtol=1e-12)


def test_errors_name_the_problem(synthetic):
    clf, X, y = synthetic
    with pytest.raises(ValueError, match="'nope' is not a column"):
        dependence(clf, X, y, columns=["smoker", "nope"])
    with pytest.raises(ValueError, match="labels for"):
        dependence(clf, X, y[:-1])
    sub = dependence(clf, X, y, columns=["g1", "g2", "g3"])
    assert len(sub) == 3


# ---------------------------------------------------------------------- the remedy
def test_join_columns_values_missing_and_errors():
    X = pd.DataFrame({"a": [1.0, 0.0, np.nan, 1.0], "b": ["x", "y", "x", None],
                      "c": [True, False, True, True]})
    out = bnb.join_columns(X, [("a", "b")])
    assert list(out.columns) == ["a&b", "c"]
    assert out["a&b"].iloc[0] == "1&x" and out["a&b"].iloc[1] == "0&y"  # 1.0 written as 1
    assert out["a&b"].iloc[2:].isna().all()  # any member missing -> missing
    with pytest.raises(ValueError, match="contain '&'"):
        bnb.join_columns(pd.DataFrame({"a": ["x&", "x"], "b": ["y", "&y"]}), [("a", "b")])
    with pytest.raises(ValueError, match="'zz'"):
        bnb.join_columns(X, [("a", "zz")])
    with pytest.raises(ValueError, match="two groups"):
        bnb.join_columns(X, [("a", "b"), ("b", "c")])


def test_joined_pipeline_equals_the_categorical_coding_and_survives_save(tmp_path):
    """Joining a one-hot coded attribute and a copied column gives exactly the model of the
    coding Barber recommends (one Categorical, the column once) under a uniform prior; the
    report's groups are found in one line; the fitted NaiveBayes saves and loads."""
    rng = np.random.default_rng(2)
    n = 300
    y = rng.integers(0, 2, n)
    age = np.where(y == 1, rng.choice(3, n, p=[0.2, 0.3, 0.5]), rng.choice(3, n))
    flag = rng.random(n) < np.where(y == 1, 0.7, 0.2)
    X = pd.DataFrame({"age0": age == 0, "age1": age == 1, "age2": age == 2,
                      "flag": flag, "flag_copy": flag.copy(), "z": rng.normal(y, 1.0)})
    naive = bnb.NaiveBayes(method="mean").fit(X, y)
    report = dependence(naive, X, y)
    pipe = make_pipeline(bnb.JoinColumns(report), bnb.NaiveBayes(method="mean")).fit(X, y)
    assert sorted(pipe[0].groups_) == [("age0", "age1", "age2"), ("flag", "flag_copy")]
    coded = pd.DataFrame({"age": [f"{a == 0}&{a == 1}&{a == 2}" for a in age],
                          "flag": flag, "z": X["z"]})
    right = bnb.NaiveBayes(method="mean", features={"flag": bnb.Bernoulli()}).fit(coded, y)
    # Beta(1, 1) on the flag is Dirichlet(1, 1) on its two joined levels; the same for age
    proba = pipe.predict_proba(X)
    np.testing.assert_allclose(proba, right.predict_proba(coded), rtol=1e-5)
    naive_proba = naive.predict_proba(X)  # overconfident: further from 1/2 on average
    assert np.abs(naive_proba - 0.5).mean() > np.abs(proba - 0.5).mean()
    path = bnb.save(pipe[-1], tmp_path / "joined.bnb")
    np.testing.assert_array_equal(bnb.load(path).predict_proba(pipe[0].transform(X)), proba)
    assert list(pipe[0].get_feature_names_out()) == ["age0&age1&age2", "flag&flag_copy", "z"]
    refit = clone(pipe[0]).fit(X)  # a scikit-learn estimator: clones and refits alike
    assert refit.groups_ == pipe[0].groups_


# ---------------------------------------------------------------------- heat map, example
def test_heatmap_is_symmetric_in_model_order(synthetic, tmp_path):
    from bayesnb.dependence_plot import dependence_matrix

    clf, X, y = synthetic
    report = dependence(clf, X, y)
    m = dependence_matrix(report)
    assert list(m.columns) == list(X.columns)
    np.testing.assert_array_equal(m.to_numpy(), m.to_numpy().T)
    assert np.isnan(np.diag(m.to_numpy())).all()
    assert m.loc["smoker", "smoker_copy"] == row(report, "smoker", "smoker_copy").log_bayes_factor
    fig = bnb.dependence_heatmap(report)
    fig.savefig(tmp_path / "heat.png")
    assert (tmp_path / "heat.png").stat().st_size > 0


def test_example_and_docs_numbers(tmp_path):
    """examples/dependence.py runs, and the numbers the user guide's dependence page quotes are
    what it prints."""
    text = run_example("dependence.py", ["--plot", tmp_path / "dep.png"], tmp_path)
    section = (ROOT / "docs" / "user_guide" / "dependence.md").read_text()
    naive = re.search(r"naive \(one-hot, copy\)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", text)
    joined = re.search(r"joined\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", text)
    assert float(naive[1]) > float(joined[1]) and float(naive[3]) > float(joined[3])
    for quoted in (naive[1], joined[1], naive[3], joined[3]):
        assert quoted in section, quoted
    assert "smoker smoker_copy             385.2" in text and "385" in section
    assert (tmp_path / "dep.png").exists()
