"""The LogNormal family (issue 41) against SciPy and numerical integration: log x follows the
Gaussian family's Normal-Gamma model; plug-in densities are ``scipy.stats.lognorm``, the
predictive the Student-t of log x times the Jacobian 1/x, the evidence a double integral."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats
from scipy.special import logsumexp

import bayesnb as bnb

LOC, KAPPA, SHAPE, RATE = 0.5, 2.0, 3.0, 1.5


@pytest.fixture
def data():
    rng = np.random.default_rng(5)
    y = np.arange(40) % 2
    X = np.exp(rng.normal(np.array([[0.0, 1.0], [1.0, -0.5]])[y], np.array([0.8, 1.3])))
    X[[3, 10], [0, 1]] = np.nan  # missing: drops out of its column only
    w = rng.integers(1, 4, len(y)).astype(float)
    return X, y, w


def _logs(X, y, w, k, j):
    keep = (y == k) & ~np.isnan(X[:, j])
    return np.log(X[keep, j]), w[keep]


def _normal_gamma_posterior(ell, w):
    """Murphy (2007) section 3, written out here: (m', kappa', a', b')."""
    n = w.sum()
    mean = np.sum(w * ell) / n
    m2 = np.sum(w * (ell - mean) ** 2)
    kappa_n = KAPPA + n
    return ((KAPPA * LOC + n * mean) / kappa_n, kappa_n, SHAPE + n / 2,
            RATE + m2 / 2 + KAPPA * n * (mean - LOC) ** 2 / (2 * kappa_n))


def test_plug_in_estimates_are_scipy_lognormals(data, x64):
    X, y, w = data
    family = bnb.LogNormal(LOC, KAPPA, SHAPE, RATE)
    for method in ("ml", "map", "mean"):
        clf = bnb.NaiveBayes(features=family, method=method).fit(X, y, sample_weight=w)
        tables = clf.conditional_tables()
        lp = np.tile(clf.class_log_prior_, (len(y), 1))
        for k in range(2):
            for j in range(2):
                ell, wk = _logs(X, y, w, k, j)
                if method == "ml":
                    mu = np.sum(wk * ell) / wk.sum()
                    sd = np.sqrt(np.sum(wk * (ell - mu) ** 2) / wk.sum())
                else:
                    mu, _, a, b = _normal_gamma_posterior(ell, wk)
                    sd = np.sqrt(b / (a - 0.5 if method == "map" else a))
                assert tables[j].loc[k, "meanlog"] == pytest.approx(mu, rel=1e-10)
                assert tables[j].loc[k, "sdlog"] == pytest.approx(sd, rel=1e-10)
                lp[:, k] += np.nan_to_num(stats.lognorm(s=sd, scale=np.exp(mu)).logpdf(
                    X[:, j]), nan=0.0)
        np.testing.assert_allclose(clf.predict_proba(X), np.exp(lp - logsumexp(
            lp, axis=1, keepdims=True)), rtol=1e-9)
        joint = clf.predict_joint_log_proba(X)  # densities of x itself, Jacobian included
        np.testing.assert_allclose(joint, lp, rtol=1e-10)


def test_predictive_is_the_t_of_log_x_with_its_jacobian(data, x64):
    X, y, _ = data
    clf = bnb.NaiveBayes(features=bnb.LogNormal(LOC, KAPPA, SHAPE, RATE),
                         method="bayes").fit(X, y)
    lp = np.tile(clf.class_log_prior_, (len(y), 1))
    for k in range(2):
        for j in range(2):
            m, kappa, a, b = _normal_gamma_posterior(*_logs(X, y, np.ones(len(y)), k, j))
            t = stats.t(df=2 * a, loc=m, scale=np.sqrt(b * (kappa + 1) / (a * kappa)))
            lp[:, k] += np.nan_to_num(t.logpdf(np.log(X[:, j])) - np.log(X[:, j]), nan=0.0)
    np.testing.assert_allclose(clf.predict_joint_log_proba(X), lp, rtol=1e-10)


def test_evidence_is_the_integral_over_mean_and_precision(x64):
    """log p(X | y) against a double integral of the likelihood of the raw values (the
    log-normal density, Jacobian included) under the Normal-Gamma prior, per class."""
    X = np.array([[0.6], [1.4], [2.2], [3.0], [9.0], [5.5]])
    y = np.array([0, 0, 0, 1, 1, 1])
    clf = bnb.NaiveBayes(features=bnb.LogNormal(LOC, KAPPA, SHAPE, RATE)).fit(X, y)
    total = 0.0
    for k in range(2):
        x = X[y == k, 0]

        def integrand(mu, lam, x=x):  # the densities written out: scipy's objects are slow
            log_prior = (SHAPE * math.log(RATE) - math.lgamma(SHAPE) + (SHAPE - 1) * math.log(lam)
                         - RATE * lam + 0.5 * math.log(KAPPA * lam / (2 * math.pi))
                         - 0.5 * KAPPA * lam * (mu - LOC) ** 2)
            log_lik = sum(0.5 * math.log(lam / (2 * math.pi)) - math.log(v)
                          - 0.5 * lam * (math.log(v) - mu) ** 2 for v in x)
            return math.exp(log_prior + log_lik)

        value, err = integrate.dblquad(integrand, 0, 40, -10, 10, epsabs=0, epsrel=1e-9)
        assert err < 1e-7 * value
        total += np.log(value)
    assert clf.log_evidence(per_block=True).iloc[1] == pytest.approx(total, rel=1e-7)


def test_values_that_are_not_positive_are_refused_naming_the_column():
    X = pd.DataFrame({"income": [1.0, 2.0, 3.0, 4.0], "size": [1.0, 0.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match=r"column 'size': LogNormal needs positive values.*"
                                         r"got .*0\.0\)? \(row 1\)"):
        bnb.NaiveBayes(features=bnb.LogNormal()).fit(X, [0, 0, 1, 1])
    clf = bnb.NaiveBayes(features=bnb.LogNormal()).fit(X.assign(size=X["size"] + 1), [0, 0, 1, 1])
    with pytest.raises(ValueError, match=r"column 'income': LogNormal needs positive"):
        clf.predict(pd.DataFrame({"income": [-2.0], "size": [1.0]}))


def test_dtype_inference_never_picks_the_new_families():
    """Positive real columns stay Gaussian and whole numbers Poisson under infer_counts=True:
    LogNormal and NegativeBinomial are chosen by name only."""
    X = pd.DataFrame({"income": np.exp([0.1, 1.2, 2.3, 3.4]), "visits": [0, 3, 1, 8]})
    for infer, counts in ((False, "Gaussian"), (True, "Poisson")):
        clf = bnb.NaiveBayes(infer_counts=infer).fit(X, [0, 0, 1, 1])
        names = {c: type(b.family).__name__ for b in clf.blocks_ for c in b.schema.columns}
        assert names == {"income": "Gaussian", "visits": counts}


def test_loo_explain_and_averaging_agree_with_refits(data, x64):
    """Exact leave-one-out against refits without each row; ``explain``'s column factors are
    SciPy's densities; feature averaging with a column certainly in is the plain model."""
    X, y, _ = data
    X, y = X[:12], y[:12]
    clf = bnb.NaiveBayes(features=bnb.LogNormal(LOC, KAPPA, SHAPE, RATE),
                         method="bayes").fit(X, y)
    refits = [np.log(bnb.NaiveBayes(features=bnb.LogNormal(LOC, KAPPA, SHAPE, RATE),
                                    method="bayes").fit(np.delete(X, i, 0), np.delete(y, i))
                     .predict_proba(X[i:i + 1])[0, y[i]]) for i in range(len(y))]
    np.testing.assert_allclose(clf.loo(X, y).pointwise, refits, rtol=1e-9)
    mean = clf.set_params(method="ml")
    factors = mean.explain(X[0])
    table = mean.conditional_tables()[1]
    expected = stats.lognorm(s=table["sdlog"], scale=np.exp(table["meanlog"])).pdf(X[0, 1])
    np.testing.assert_allclose(factors.loc[1].to_numpy(dtype=float), expected, rtol=1e-9)
    sure = bnb.NaiveBayes(features=bnb.LogNormal(LOC, KAPPA, SHAPE, RATE), method="bayes",
                          feature_prior=1.0 - 1e-12).fit(X, y)
    np.testing.assert_allclose(sure.predict_proba(X), clf.set_params(
        method="bayes").predict_proba(X), rtol=1e-6)
