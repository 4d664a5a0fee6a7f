"""The NegativeBinomial family (issue 41) against SciPy and numerical integration: x | p ~
scipy.stats.nbinom(r, p) with r known, p ~ Beta(alpha, beta); posterior Beta(alpha + n r,
beta + sum x), predictive beta negative binomial (``scipy.stats.betanbinom`` for an integer r,
an integral over p otherwise), evidence an integral over p."""

import copy
import pickle

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats
from sklearn.base import clone

import bayesnb as bnb

R, A, B = np.array([3.0, 2.5]), 2.0, 1.5  # an integer r, and one that is not


@pytest.fixture
def data():
    rng = np.random.default_rng(9)
    y = np.arange(40) % 2
    X = rng.negative_binomial(R, np.array([[0.6, 0.3], [0.25, 0.5]])[y]).astype(float)
    X[[2, 9], [0, 1]] = np.nan  # missing: drops out of its column only
    w = rng.integers(1, 4, len(y)).astype(float)
    return X, y, w


def _ns(X, y, w, k, j):
    keep = (y == k) & ~np.isnan(X[:, j])
    return w[keep].sum() * R[j], float(np.sum(w[keep] * X[keep, j]))


def test_estimates_are_scipy_negative_binomials(data, x64):
    X, y, w = data
    expected = {"ml": lambda s, f: s / (s + f),
                "map": lambda s, f: (A + s - 1) / (A + B + s + f - 2),
                "mean": lambda s, f: (A + s) / (A + B + s + f)}
    for method, formula in expected.items():
        clf = bnb.NaiveBayes(features=bnb.NegativeBinomial(R, A, B), method=method).fit(
            X, y, sample_weight=w)
        tables = clf.conditional_tables()
        lp = np.tile(clf.class_log_prior_, (len(y), 1))
        for k in range(2):
            for j in range(2):
                p = formula(*_ns(X, y, w, k, j))
                assert tables[j].loc[k, "prob"] == pytest.approx(p, rel=1e-12)
                lp[:, k] += np.nan_to_num(stats.nbinom(R[j], p).logpmf(X[:, j]), nan=0.0)
        np.testing.assert_allclose(clf.predict_joint_log_proba(X), lp, rtol=1e-10)


def _predictive(x, r, a, b):
    """p(x | data) as the integral of nbinom(x; r, p) against Beta(a, b) over p."""
    value, _ = integrate.quad(lambda p: stats.nbinom(r, p).pmf(x) * stats.beta(a, b).pdf(p),
                              0, 1, epsabs=0, epsrel=1e-12, limit=200)
    return value


@pytest.mark.parametrize("route", ["host", "kernels"])
def test_predictive_is_beta_negative_binomial(data, x64, route, monkeypatch):
    """On both routes: a small table by the family's maths on the host, compiling nothing
    (its form serves every per-r class), and by the kernels (``HOST_MATHS_ENTRIES`` forced)."""
    from bayesnb.fast import _host, _kernels, form_of

    assert form_of(bnb.NegativeBinomial(R)) is form_of(bnb.NegativeBinomial(2.0))
    assert form_of(bnb.NegativeBinomial(R)).host_maths
    if route == "kernels":
        monkeypatch.setattr(_host, "HOST_MATHS_ENTRIES", -1)
    X, y, _ = data
    before = dict(_kernels.TRACES)
    streamed = []
    monkeypatch.setattr(_kernels, "stream_suff_stats", lambda *a, _f=_kernels.stream_suff_stats:
                        streamed.append(1) or _f(*a))
    clf = bnb.NaiveBayes(features=bnb.NegativeBinomial(R, A, B), method="bayes").fit(X, y)
    rows = X[:6]
    assert bool(streamed) == (route == "kernels")
    if route == "host":
        clf.predict_joint_log_proba(rows)
        assert _kernels.TRACES == before
    lp = np.tile(clf.class_log_prior_, (len(rows), 1))
    for k in range(2):
        s, f = _ns(X, y, np.ones(len(y)), 0 + k, 0)
        lp[:, k] += np.nan_to_num(stats.betanbinom(int(R[0]), A + s, B + f).logpmf(rows[:, 0]),
                                  nan=0.0)  # r = 3: SciPy's own beta negative binomial
        s, f = _ns(X, y, np.ones(len(y)), k, 1)
        lp[:, k] += [0.0 if np.isnan(v) else np.log(_predictive(v, R[1], A + s, B + f))
                     for v in rows[:, 1]]  # r = 2.5: the integral over p
    np.testing.assert_allclose(clf.predict_joint_log_proba(rows), lp, rtol=1e-9)


def test_evidence_is_the_integral_over_p(x64):
    X = np.array([[0, 4], [2, 1], [5, 0], [1, 7], [3, 2], [8, 3]], dtype=float)
    y = np.array([0, 0, 0, 1, 1, 1])
    clf = bnb.NaiveBayes(features=bnb.NegativeBinomial(R, A, B)).fit(X, y)
    total = 0.0
    for k in range(2):
        for j in range(2):
            x = X[y == k, j]
            value, _ = integrate.quad(lambda p, x=x, j=j: np.prod(stats.nbinom(R[j], p).pmf(x))
                                      * stats.beta(A, B).pdf(p), 0, 1, epsabs=0, epsrel=1e-12)
            total += np.log(value)
    assert clf.log_evidence(per_block=True).iloc[1] == pytest.approx(total, rel=1e-9)


@pytest.mark.parametrize("scale", [1e9, 1e12, 1e15])
def test_counts_far_beyond_the_prior_against_mpmath(scale, x64):
    """Counts of 1e15: log B(alpha', beta') as log-Gamma differences lost 4 nats a term, and
    log(1 - p) as log f - log(s + f) lost x times its rounding (p(class | x) 0.75 off under
    'mean', 0.96 under 'bayes', the evidence 185 nats). Against 50-digit mpmath."""
    import mpmath
    from scipy.special import logsumexp

    mpmath.mp.dps = 50
    rng = np.random.default_rng(0)
    y = np.arange(40) % 2
    X = (rng.geometric(np.where(y == 0, 1.0, 1.3)[:, None] / scale * np.ones((1, 3)))
         - 1).astype(float)
    rows, r = X[:4], 1.5
    clf = bnb.NaiveBayes(bnb.NegativeBinomial(r=r), method="bayes").fit(X, y)

    def log_beta(u, v):
        return mpmath.loggamma(u) + mpmath.loggamma(v) - mpmath.loggamma(u + v)

    def log_coef(x):  # log binom(x + r - 1, x)
        x = mpmath.mpf(x)
        return mpmath.loggamma(x + r) - mpmath.loggamma(r) - mpmath.loggamma(x + 1)

    a = {k: 1 + r * np.sum(y == k) for k in (0, 1)}
    b = {k: 1 + X[y == k].sum(axis=0) for k in (0, 1)}
    evidence = float(sum(log_beta(a[k], mpmath.mpf(b[k][j])) - log_beta(1, 1)
                         for k in (0, 1) for j in range(3)) + sum(log_coef(x) for x in X.flat))
    assert clf.log_evidence(per_block=True).iloc[1] == pytest.approx(evidence, rel=1e-12)
    for method in ("mean", "bayes"):
        joint = np.zeros((4, 2))
        for k in (0, 1):
            for j in range(3):
                for i, x in enumerate(rows[:, j]):
                    if method == "bayes":
                        term = log_coef(x) + log_beta(a[k] + r, mpmath.mpf(b[k][j]) + x) \
                            - log_beta(a[k], mpmath.mpf(b[k][j]))
                    else:
                        p = mpmath.mpf(a[k]) / (a[k] + mpmath.mpf(b[k][j]))
                        term = log_coef(x) + r * mpmath.log(p) + x * mpmath.log1p(-p)
                    joint[i, k] += float(term)
        joint += np.log([(np.sum(y == k) + 1) / 42 for k in (0, 1)])
        expected = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
        proba = clf.set_params(method=method).predict_proba(rows)
        np.testing.assert_allclose(proba, expected, atol=1e-9)


def test_bad_counts_and_bad_r_are_refused_naming_the_column():
    X = pd.DataFrame({"visits": [0.0, 2.0, 1.0, 4.0], "calls": [1.0, 0.5, 2.0, 3.0]})
    with pytest.raises(ValueError, match=r"column 'calls': NegativeBinomial needs integer "
                                         r"counts, got .*0\.5\)? \(row 1\)"):
        bnb.NaiveBayes(features=bnb.NegativeBinomial(2.0)).fit(X, [0, 0, 1, 1])
    with pytest.raises(ValueError, match="column 'visits': NegativeBinomial needs non-negative"):
        bnb.NaiveBayes(features=bnb.NegativeBinomial(2.0)).fit(X.assign(visits=-X["visits"],
                                                                        calls=1), [0, 0, 1, 1])
    with pytest.raises(TypeError, match="needs r, the known number of successes"):
        bnb.NegativeBinomial()
    with pytest.raises(ValueError, match="r must be a positive finite number"):
        bnb.NegativeBinomial(r=0.0)
    with pytest.raises(ValueError, match=r"r must be a scalar or have shape \(2,\)"):
        bnb.NaiveBayes(features=bnb.NegativeBinomial([1.0, 2.0, 3.0])).fit(
            X.assign(calls=1), [0, 0, 1, 1])
    with pytest.raises(TypeError, match="it takes no hyperprior"):
        import numpyro.distributions as dist

        bnb.NegativeBinomial(r=dist.Gamma(2.0, 1.0))


def test_one_class_per_r_survives_copies_clones_and_files(data, tmp_path, x64):
    X, y, _ = data
    family = bnb.NegativeBinomial(R, A, B)
    assert type(family) is type(bnb.NegativeBinomial([3.0, 2.5]))
    assert isinstance(family, bnb.NegativeBinomial) and type(family).__name__ == "NegativeBinomial"
    for other in (copy.copy(family), copy.deepcopy(family), pickle.loads(pickle.dumps(family)),
                  clone(bnb.NaiveBayes(features=family)).features):
        assert type(other) is type(family) and other == family
    assert type(family.set_params(r=4.0)) is type(bnb.NegativeBinomial(4.0))
    clf = bnb.NaiveBayes(features=bnb.NegativeBinomial(R, A, B), method="bayes").fit(X, y)
    bnb.save(clf, tmp_path / "m.bnb")
    back = bnb.load(tmp_path / "m.bnb")
    assert back.blocks_[0].family == clf.blocks_[0].family
    np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))


@pytest.mark.filterwarnings("ignore::bayesnb.inference.ConvergenceWarning")  # a short chain
def test_mcmc_with_a_hyperprior_and_arviz(data):
    import numpyro.distributions as dist

    X, y, _ = data
    clf = bnb.NaiveBayes(features=bnb.NegativeBinomial(R, alpha=dist.Gamma(2.0, 1.0)),
                         method="mcmc", num_warmup=150, num_samples=150, num_chains=1,
                         progress_bar=False, seed=0).fit(X, y)
    assert clf.draws_["negative_binomial.prob"].shape == (1, 150, 2, 2)
    assert "negative_binomial.alpha" in clf.draws_
    posterior = clf.to_arviz(prior_draws=None).posterior["negative_binomial.prob"]
    assert list(posterior.dims)[2:] == ["class", "negative_binomial_feature"]
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba)) and np.mean(proba.argmax(1) == y) > 0.6
