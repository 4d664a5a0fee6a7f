"""Semi-supervised EM for the closed-form methods (``bayesnb.em``, Nigam et al. 2000).

References are independent of the code under test: an EM for a two-class diagonal Gaussian
mixture with labelled rows written here in NumPy (ML and MAP updates from Murphy 2007's
Normal-Gamma formulas), the observed-data log likelihood and log prior from ``scipy.stats``, and
the known gain of EM on a text-like mixture with a few labels.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning

import bayesnb as bnb
from bayesnb.em import fit_em, log_posterior


@pytest.fixture(scope="module")
def mixture():
    """Two overlapping diagonal Gaussian classes; 3 labelled rows per class, 300 unlabelled."""
    rng = np.random.default_rng(0)
    n = 306
    y = rng.integers(0, 2, n)
    X = rng.normal(np.where(y[:, None] == 1, [2.0, 0.5], [0.0, -1.0]), [1.0, 0.7])
    lab = np.r_[np.flatnonzero(y == 0)[:3], np.flatnonzero(y == 1)[:3]]
    unl = np.setdiff1d(np.arange(n), lab)
    return X[lab], y[lab], X[unl], y[unl]


def numpy_em(XL, yL, XU, lam, *, map_prior=None, iters=3000):
    """Reference EM. ``map_prior=(m, kappa, a, b, gamma)`` gives MAP updates (Normal-Gamma per
    class and column, Dirichlet(gamma) on the class proportions), else ML."""
    K = 2
    onehot = np.eye(K)[yL]
    resp = np.zeros((len(XU), K))
    Xc = np.vstack([XL, XU])
    for _ in range(iters):
        W = np.vstack([onehot, lam * resp])
        n = W.sum(axis=0)
        xbar = (W.T @ Xc) / n[:, None]
        m2 = np.stack([(W[:, k:k + 1] * (Xc - xbar[k]) ** 2).sum(axis=0) for k in range(K)])
        if map_prior is None:
            mu, var, pi = xbar, m2 / n[:, None], n / n.sum()
        else:
            m, kappa, a, b, gamma = map_prior
            kn = kappa + n[:, None]
            mu = (kappa * m + n[:, None] * xbar) / kn
            bn = b + 0.5 * m2 + kappa * n[:, None] * (xbar - m) ** 2 / (2 * kn)
            var = bn / (a + n[:, None] / 2 - 0.5)  # 1 / MAP precision
            pi = (n + gamma - 1) / (n.sum() + K * gamma - K)
        joint = np.log(pi) + np.stack(
            [stats.norm.logpdf(XU, mu[k], np.sqrt(var[k])).sum(axis=1) for k in range(K)], 1)
        new = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
        if np.max(np.abs(new - resp)) < 1e-13:
            break
        resp = new
    return mu, var, pi


def scipy_log_likelihood(XL, yL, XU, lam, mu, var, pi):
    """Observed-data log likelihood: labelled joints plus lam * unlabelled marginals."""
    def joint(X):
        return np.log(pi) + np.stack(
            [stats.norm.logpdf(X, mu[k], np.sqrt(var[k])).sum(axis=1) for k in range(2)], 1)
    return (joint(XL)[np.arange(len(yL)), yL].sum()
            + lam * logsumexp(joint(XU), axis=1).sum())


@pytest.mark.parametrize("lam", [1.0, 0.3])
def test_ml_em_matches_numpy_em(x64, mixture, lam):
    XL, yL, XU, _ = mixture
    clf, history = fit_em(bnb.NaiveBayes(method="ml"), XL, yL, XU, unlabeled_weight=lam,
                          tol=0.0, max_iter=500, return_history=True)
    assert history.converged
    mu, var, pi = numpy_em(XL, yL, XU, lam)
    np.testing.assert_allclose(clf.theta_, mu, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(clf.var_, var, rtol=1e-6)
    np.testing.assert_allclose(np.exp(clf.class_log_prior_), pi, rtol=1e-6)
    # the objective EM reports is the observed-data log likelihood (scipy.stats)
    ref = scipy_log_likelihood(XL, yL, XU, lam, clf.theta_, clf.var_,
                               np.exp(clf.class_log_prior_))
    assert history.log_posterior[-1] == pytest.approx(ref, rel=1e-10)
    assert log_posterior(clf, XL, yL, XU, unlabeled_weight=lam) == pytest.approx(ref,
                                                                                 rel=1e-10)


def test_map_em_matches_numpy_em_and_scipy_prior(x64, mixture):
    XL, yL, XU, _ = mixture
    prior = dict(loc=0.0, kappa=0.5, shape=2.0, rate=1.5)
    model = bnb.NaiveBayes(bnb.Gaussian(**prior), method="map", class_alpha=3.0)
    clf = fit_em(model, XL, yL, XU, tol=0.0, max_iter=500)
    mu, var, pi = numpy_em(XL, yL, XU, 1.0, map_prior=(0.0, 0.5, 2.0, 1.5, 3.0))
    np.testing.assert_allclose(clf.theta_, mu, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(clf.var_, var, rtol=1e-6)
    np.testing.assert_allclose(np.exp(clf.class_log_prior_), pi, rtol=1e-6)

    def scipy_objective(m):  # log likelihood + Normal-Gamma and Dirichlet log densities
        mu, var, pi = m.theta_, m.var_, np.exp(m.class_log_prior_)
        lam = 1.0 / var
        log_prior = (stats.gamma.logpdf(lam, prior["shape"], scale=1 / prior["rate"]).sum()
                     + stats.norm.logpdf(mu, prior["loc"],
                                         1 / np.sqrt(prior["kappa"] * lam)).sum()
                     + stats.dirichlet.logpdf(pi, [3.0, 3.0]))
        return scipy_log_likelihood(XL, yL, XU, 1.0, mu, var, pi) + log_prior

    # J is the scipy objective up to a constant: equal differences between two parameter sets
    labelled_only = bnb.NaiveBayes(bnb.Gaussian(**prior), method="map",
                                   class_alpha=3.0).fit(XL, yL)
    ours = log_posterior(clf, XL, yL, XU) - log_posterior(labelled_only, XL, yL, XU)
    assert ours == pytest.approx(scipy_objective(clf) - scipy_objective(labelled_only),
                                 rel=1e-9)
    assert ours > 0  # and the EM fixed point is better than the labelled fit


@pytest.mark.parametrize("method", ["ml", "map", "mean", "bayes"])
def test_log_posterior_never_decreases(x64, mixture, method):
    XL, yL, XU, _ = mixture
    _, history = fit_em(bnb.NaiveBayes(bnb.Gaussian(pooled=method == "map"), method=method),
                        XL, yL, XU, tol=1e-12, max_iter=300, return_history=True)
    steps = np.diff(history.log_posterior)
    assert len(steps) >= 3
    assert np.all(steps >= -1e-9 * np.abs(history.log_posterior[1:])), steps


def test_mean_em_is_map_em_under_the_shifted_prior(x64, mixture):
    """The posterior mean under shape a is the MAP under shape a + 1/2 (Gaussian) and
    class_alpha + 1: so their EMs reach the same point."""
    XL, yL, XU, _ = mixture
    mean = fit_em(bnb.NaiveBayes(bnb.Gaussian(shape=1.0), method="mean"), XL, yL, XU,
                  tol=0.0, max_iter=500)
    mode = fit_em(bnb.NaiveBayes(bnb.Gaussian(shape=1.5), method="map", class_alpha=2.0),
                  XL, yL, XU, tol=0.0, max_iter=500)
    np.testing.assert_allclose(mean.theta_, mode.theta_, rtol=1e-8)
    np.testing.assert_allclose(mean.var_, mode.var_, rtol=1e-8)
    np.testing.assert_allclose(mean.class_log_prior_, mode.class_log_prior_, rtol=1e-8)


def test_bayes_predicts_with_the_fixed_point_statistics(x64, mixture):
    XL, yL, XU, _ = mixture
    mean = fit_em(bnb.NaiveBayes(method="mean"), XL, yL, XU, tol=1e-12)
    exact = fit_em(bnb.NaiveBayes(method="bayes"), XL, yL, XU, tol=1e-12)
    assert exact.method == "bayes"
    for a, b in zip(mean.blocks_, exact.blocks_, strict=True):
        for u, v in zip(a.stats, b.stats, strict=True):
            np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-12)
    proba = exact.predict_proba(XU)  # the Student-t predictive of the soft-completed data
    np.testing.assert_allclose(proba, mean.set_params(method="bayes").predict_proba(XU),
                               rtol=1e-12)


def _topics(seed=0, V=120, K=3):
    rng = np.random.default_rng(seed)
    background = rng.dirichlet(np.full(V, 1.0))
    probs = 0.85 * background + 0.15 * rng.dirichlet(np.full(V, 0.1), K)

    def docs(n):
        y = rng.integers(0, K, n)
        lengths = rng.poisson(40, n) + 5
        return np.stack([rng.multinomial(lengths[i], probs[y[i]]) for i in range(n)]), y

    XL, yL = docs(40)
    lab = np.concatenate([np.flatnonzero(yL == k)[:2] for k in range(K)])
    XU, _ = docs(600)
    XT, yT = docs(600)
    return XL[lab], yL[lab], XU, XT, yT


def test_text_with_a_few_labels_gains_from_unlabelled_documents():
    """Nigam et al.'s case: 2 labelled documents per class and 600 unlabelled ones."""
    XL, yL, XU, XT, yT = _topics()
    labelled = bnb.NaiveBayes(bnb.Multinomial()).fit(XL, yL)
    base = np.mean(labelled.predict(XT) == yT)
    clf, history = fit_em(bnb.NaiveBayes(bnb.Multinomial()), XL, yL, XU, return_history=True)
    gained = np.mean(clf.predict(XT) == yT)
    assert history.converged
    assert gained > base + 0.15 and gained > 0.9, (base, gained)  # measured 0.71 -> 0.94
    assert np.all(np.diff(history.log_posterior) >= -1e-6 * np.abs(history.log_posterior[1:]))
    # the statistics hold the labelled rows plus lam * (every unlabelled row, split by class)
    total_words = XL.sum() + 0.5 * XU.sum()
    half = fit_em(bnb.NaiveBayes(bnb.Multinomial()), XL, yL, XU, unlabeled_weight=0.5)
    assert float(np.sum(half.feature_count_)) == pytest.approx(total_words, rel=1e-5)
    assert float(np.sum(half.class_count_)) == pytest.approx(len(XL) + 0.5 * len(XU),
                                                             rel=1e-5)


def test_dataframes_categorical_levels_and_weights(x64):
    rng = np.random.default_rng(3)
    n = 80
    y = np.where(rng.random(n) < 0.5, "p", "q")
    frame = pd.DataFrame({"colour": np.where(rng.random(n) < np.where(y == "p", 0.8, 0.2),
                                             "red", "blue"),
                          "size": rng.normal(np.where(y == "p", 1.0, -1.0))})
    XL, yL = frame.iloc[:10], y[:10]
    XU = frame.iloc[10:].copy()
    XU.loc[XU.index[0], "colour"] = "green"  # a level only the unlabelled rows show
    clf = fit_em(bnb.NaiveBayes(), XL, yL, XU, sample_weight=np.full(10, 2.0))
    assert clf.blocks_[0].schema.levels == (("blue", "green", "red"),)
    assert float(clf.class_count_.sum()) == pytest.approx(20 + 70, rel=1e-10)
    assert clf.predict(frame).shape == (n,)
    with pytest.raises(ValueError, match="unlabelled row 0 has probability zero in every "
                                         "class under method='ml'"):
        fit_em(bnb.NaiveBayes(method="ml"), XL, yL, XU)  # "green": ML gives it 0 everywhere


def test_refusals_and_zero_weight(x64, mixture):
    XL, yL, XU, _ = mixture
    with pytest.raises(ValueError, match="closed-form methods.*missing label"):
        fit_em(bnb.NaiveBayes(method="mcmc"), XL, yL, XU)
    with pytest.raises(ValueError, match="unlabeled_weight must be finite and >= 0"):
        fit_em(bnb.NaiveBayes(), XL, yL, XU, unlabeled_weight=-1)
    with pytest.raises(ValueError, match="columns of X"):
        fit_em(bnb.NaiveBayes(), XL, yL, XU[:, :1])
    with pytest.raises(ValueError, match="X_unlabeled has no rows"):
        fit_em(bnb.NaiveBayes(), XL, yL, XU[:0])
    # no labelled rows: scikit-learn's "Found array with 0 sample(s)" said nothing of EM
    with pytest.raises(ValueError, match="X has no labelled rows: EM starts from a labelled"):
        fit_em(bnb.NaiveBayes(), XL[:0], yL[:0], XU)
    none = fit_em(bnb.NaiveBayes(method="ml"), XL, yL, XU, unlabeled_weight=0.0)
    ref = bnb.NaiveBayes(method="ml").fit(XL, yL)
    np.testing.assert_allclose(none.theta_, ref.theta_, rtol=1e-12)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_em(bnb.NaiveBayes(method="ml"), XL, yL, XU, tol=0.0, max_iter=2)
    assert any(issubclass(w.category, ConvergenceWarning) for w in caught)


def test_feature_averaging_is_refused(x64, mixture):
    """Under feature_prior the M-step fitted one model while J scored the average over
    feature subsets: J fell by 1.07 at the second step, reported converged."""
    XL, yL, XU, _ = mixture
    for method in ("map", "mean"):
        with pytest.raises(ValueError, match="feature_prior averages the predictive"):
            fit_em(bnb.NaiveBayes(method=method, feature_prior=0.5), XL, yL, XU, tol=0.0)
