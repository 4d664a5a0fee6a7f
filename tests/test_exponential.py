"""The Exponential family (issue 37) against SciPy and hand formulas: rate ~ Gamma(a, b) (shape,
rate), x | rate ~ Exponential(rate); posterior Gamma(a + n, b + s), predictive Lomax."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import gammaln, logsumexp

import bayesnb as bnb

A, B = 2.0, 1.5


@pytest.fixture
def data():
    rng = np.random.default_rng(11)
    y = np.arange(60) % 3
    X = rng.exponential(1.0 / np.array([[0.5, 2.0], [1.0, 1.0], [3.0, 0.2]])[y])
    X[[4, 17], [0, 1]] = np.nan  # missing: drops out of its column only
    w = rng.integers(1, 4, len(y)).astype(float)
    return X, y, w


def _nw(X, y, w, k, j):
    keep = (y == k) & ~np.isnan(X[:, j])
    return w[keep].sum(), float(np.sum(w[keep] * X[keep, j]))


def test_estimates_match_the_formulas(data, x64):
    X, y, w = data
    expected = {"ml": lambda n, s: n / s, "map": lambda n, s: (A + n - 1) / (B + s),
                "mean": lambda n, s: (A + n) / (B + s)}
    for method, formula in expected.items():
        clf = bnb.NaiveBayes(features=bnb.Exponential(A, B), method=method).fit(
            X, y, sample_weight=w)
        rates = clf.conditional_tables()
        for k in range(3):
            for j in range(2):
                assert rates[j].loc[k, "rate"] == pytest.approx(formula(*_nw(X, y, w, k, j)),
                                                                rel=1e-12)
        # the plug-in probabilities are SciPy's Exponential densities times the class prior
        lp = clf.class_log_prior_[None, :] + sum(
            np.nan_to_num(stats.expon(scale=1 / rates[j]["rate"].to_numpy()).logpdf(
                X[:, [j]]), nan=0.0) for j in range(2))
        np.testing.assert_allclose(clf.predict_proba(X), np.exp(lp - logsumexp(
            lp, axis=1, keepdims=True)), rtol=1e-10)


def test_predictive_is_lomax_and_evidence_its_chain(data, x64):
    X, y, w = data
    clf = bnb.NaiveBayes(features=bnb.Exponential(A, B), method="bayes").fit(X, y)
    lp = np.tile(clf.class_log_prior_, (len(y), 1))
    for k in range(3):
        for j in range(2):
            n, s = _nw(X, y, np.ones(len(y)), k, j)
            lp[:, k] += np.nan_to_num(stats.lomax(c=A + n, scale=B + s).logpdf(X[:, j]),
                                      nan=0.0)
    np.testing.assert_allclose(clf.predict_proba(X), np.exp(lp - logsumexp(
        lp, axis=1, keepdims=True)), rtol=1e-9)
    chain = 0.0  # log p(X | y) = sum of sequential Lomax predictives, per class and column
    for k in range(3):
        for j in range(2):
            a, b = A, B
            for v in X[(y == k) & ~np.isnan(X[:, j]), j]:
                chain += stats.lomax(c=a, scale=b).logpdf(v)
                a, b = a + 1, b + v
    evidence = clf.log_evidence(per_block=True)
    assert evidence.iloc[1] == pytest.approx(chain, rel=1e-10)
    hand = sum(A * np.log(B) - gammaln(A) + gammaln(A + n) - (A + n) * np.log(B + s)
               for k in range(3) for j in range(2)
               for n, s in [_nw(X, y, np.ones(len(y)), k, j)])
    assert evidence.iloc[1] == pytest.approx(hand, rel=1e-12)


def test_posterior_draws_are_the_gamma_posterior(data, x64):
    X, y, _ = data
    clf = bnb.NaiveBayes(features=bnb.Exponential(A, B), method="bayes").fit(X, y)
    block = clf.blocks_[0]
    post = bnb.Exponential.posterior(block.prior, block.stats)
    draws = bnb.Exponential.sample_posterior(np.random.default_rng(0), post, 40_000)["rate"]
    ref = stats.gamma(np.asarray(post.shape), scale=1 / np.asarray(post.rate))
    n = draws.shape[0]
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - ref.mean()),
                                 5 * np.sqrt(ref.var() / n))
    for k, j in [(0, 0), (2, 1)]:
        assert stats.kstest(draws[:, k, j], stats.gamma(
            float(post.shape[k, j]), scale=1 / float(post.rate[k, j])).cdf).pvalue > 1e-3


def test_bad_values_and_priors_are_refused():
    X = np.array([[1.0, 2.0], [0.5, -0.1]])
    with pytest.raises(ValueError, match=r"column 1: Exponential needs non-negative values"):
        bnb.NaiveBayes(features=bnb.Exponential()).fit(X, [0, 1])
    with pytest.raises(ValueError, match=r"column 0: the Exponential MAP estimate needs Gamma "
                                         r"shape >= 1"):
        bnb.NaiveBayes(features=bnb.Exponential(shape=0.5), method="map").fit(abs(X), [0, 1])
    with pytest.raises(ValueError, match="Exponential: rate must be finite"):
        bnb.NaiveBayes(features=bnb.Exponential(rate=0.0)).fit(abs(X), [0, 1])
    with pytest.raises(ValueError, match="'t': Exponential rates must be positive"):
        bnb.from_tables({0: 0.5, 1: 0.5}, exponential={"t": {0: 1.0, 1: 0.0}})


def test_from_tables_predicts_with_the_stated_rates(x64):
    clf = bnb.from_tables({"a": 0.25, "b": 0.75}, exponential={"t": {"a": 2.0, "b": 0.5}})
    x = np.array([[0.1], [3.0]])
    joint = np.log([0.25, 0.75]) + stats.expon(scale=1 / np.array([2.0, 0.5])).logpdf(x)
    np.testing.assert_allclose(clf.predict_proba(x), np.exp(joint - logsumexp(
        joint, axis=1, keepdims=True)), rtol=1e-12)
    assert clf.conditional_tables()["t"]["rate"].tolist() == [2.0, 0.5]


def test_dependence_on_a_discrete_column_is_the_lomax_chain(x64):
    rng = np.random.default_rng(5)
    y = np.arange(40) % 2
    a = rng.integers(0, 2, 40)
    t = rng.exponential(1.0 + a)
    X = pd.DataFrame({"a": a.astype(str), "t": t})
    clf = bnb.NaiveBayes(features={"a": bnb.Categorical(), "t": bnb.Exponential(A, B)},
                         method="bayes").fit(X, y)
    from bayesnb.analysis import dependence

    report = dependence(clf, X, y)

    def chain(v):
        out, s = 0.0, 0.0
        for i, x in enumerate(v):
            out += stats.lomax(c=A + i, scale=B + s).logpdf(x)
            s += x
        return out

    expected = [sum(chain(t[(y == k) & (a == u)]) for u in (0, 1)) - chain(t[y == k])
                for k in (0, 1)]
    r = report.iloc[0]
    assert r["method"] == "conditional on 'a'"
    assert [r["class=0"], r["class=1"]] == pytest.approx(expected, rel=1e-9)


def test_linear_view_reproduces_predict(data, x64):
    from bayesnb.analysis import decision_function, linear_weights

    X, y, _ = data
    X = np.nan_to_num(X, nan=1.0)
    clf = bnb.NaiveBayes(features=bnb.Exponential(A, B)).fit(X, y)
    W, b = linear_weights(clf)
    rates = np.stack([clf.conditional_tables()[j]["rate"].to_numpy() for j in range(2)], 1)
    # per column the value's weight -rate, and log rate on its observed indicator
    np.testing.assert_allclose(W[["0", "1"]].to_numpy(), -rates, rtol=1e-12)
    np.testing.assert_allclose(W[["0:observed", "1:observed"]].to_numpy(), np.log(rates),
                               rtol=1e-12)
    assert (clf.classes_[decision_function(clf, X).argmax(axis=1)] == clf.predict(X)).all()


def test_dask_fit_equals_the_in_memory_fit(data, x64):
    da = pytest.importorskip("dask.array")
    X, y, _ = data
    X = np.nan_to_num(X, nan=1.0)
    spec = dict(features=bnb.Exponential(A, B), method="bayes")
    lazy = bnb.NaiveBayes(**spec).fit(da.from_array(X, chunks=(17, 2)),
                                      da.from_array(y, chunks=17))
    np.testing.assert_allclose(lazy.predict_proba(X),
                               bnb.NaiveBayes(**spec).fit(X, y).predict_proba(X), rtol=1e-12)
