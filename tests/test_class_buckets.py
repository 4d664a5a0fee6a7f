"""Issue 39: the kernels run over a bucket of class counts (``bayesnb.fast._buckets``), so a
model whose class count falls in a compiled bucket compiles nothing, and the padded classes
change no answer: scikit-learn's, SciPy's and hand sums agree to 1e-12 in x64 for padded
(3, 5, 7 classes: buckets 4, 6, 8) and unpadded (4, 8) models, and float32 stays within the
library's tolerance."""

import numpy as np
import pytest
import scipy.stats as st
from numpy.testing import assert_allclose
from scipy.special import gammaln, logsumexp
from sklearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB

import bayesnb as bnb
from bayesnb.fast import _kernels
from bayesnb.fast._buckets import class_bucket

# the statistics kernels' own paths, however small the fit (fast._host.SMALL_FIT_CELLS)
pytestmark = pytest.mark.usefixtures("kernel_fits")

N = 96
CLASS_COUNTS = [3, 4, 5, 7, 8]  # 4 and 8: exactly a bucket's size, nothing padded


def data(name: str, k: int, seed: int = 0):
    rng = np.random.default_rng(seed + 10 * k)
    y = np.arange(N) % k
    shift = y[:, None] * np.array([1.0, -0.5, 2.0]) / k
    if name == "gaussian":
        X = rng.normal(3 * shift, 1.0)
    elif name == "bernoulli":
        X = (rng.random((N, 3)) < 0.2 + 0.6 * np.abs(shift) / 2).astype(float)
    else:  # counts
        X = rng.poisson(1.0 + 2 * np.abs(shift)).astype(float)
    return X, y


FAMILIES = {"gaussian": bnb.Gaussian, "multinomial": bnb.Multinomial,
            "bernoulli": bnb.Bernoulli, "poisson": bnb.Poisson}


def test_the_bucket_rule():
    assert [class_bucket(k) for k in (1, 2, 3, 4, 5, 8, 9, 13, 20, 33, 64)] == [
        1, 2, 4, 4, 6, 8, 12, 16, 24, 48, 64]  # two steps per octave up to 64
    assert class_bucket(65) == class_bucket(80) == 80  # eight steps per octave past 64
    for k in range(1, 3000):
        b = class_bucket(k)
        assert b >= k and class_bucket(b) == b  # a bucket is its own bucket
        if k > 64:
            assert b - k < (1 << (k - 1).bit_length()) // 8
        elif k > 4:
            assert 2 * b <= 3 * k  # at most half added


@pytest.mark.parametrize("name, method", [("gaussian", "ml"), ("gaussian", "bayes"),
                                          ("multinomial", "mean"), ("bernoulli", "mean"),
                                          ("bernoulli", "bayes"), ("poisson", "mean")])
def test_a_model_in_a_compiled_bucket_traces_nothing(name, method):
    """Nine classes compile the bucket of twelve; eleven classes then trace no kernel: not the
    statistics, not the probabilities, not the joint density (float32, JAX's default)."""
    def run(k):
        X, y = data(name, k)
        clf = bnb.NaiveBayes(FAMILIES[name](), method=method).fit(X, y)
        return clf.predict_proba(X[:40]), clf.predict_joint_log_proba(X[:40])

    run(9)
    before = dict(_kernels.TRACES)
    proba, joint = run(11)
    assert _kernels.TRACES == before
    assert proba.shape == joint.shape == (40, 11)
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    assert np.all(np.isfinite(joint))


def _gaussian(k):
    X, y = data("gaussian", k)
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0).fit(X, y)
    return clf, GaussianNB(var_smoothing=0.0).fit(X, y), X, np.zeros(N)


def _multinomial(k):
    X, y = data("multinomial", k)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0).fit(X, y)
    # scikit-learn's joint leaves out each row's log multinomial coefficient (class-free)
    coefficient = gammaln(X.sum(axis=1) + 1) - gammaln(X + 1).sum(axis=1)
    return clf, MultinomialNB(alpha=1.0).fit(X, y), X, coefficient


def _bernoulli(k):
    X, y = data("bernoulli", k)
    clf = bnb.NaiveBayes(bnb.Bernoulli(alpha=1.0), method="mean", class_alpha=0).fit(X, y)
    return clf, BernoulliNB(alpha=1.0, binarize=None).fit(X, y), X, np.zeros(N)


@pytest.mark.parametrize("make, k", [(_gaussian, k) for k in CLASS_COUNTS]
                         + [(_multinomial, k) for k in CLASS_COUNTS] + [(_bernoulli, 5)],
                         ids=[f"{name}-{k}" for name in ("gaussian", "multinomial")
                              for k in CLASS_COUNTS] + ["bernoulli-5"])
def test_padded_models_equal_scikit_learn_in_x64(x64, make, k):
    clf, sk, X, constant = make(k)
    assert_allclose(clf.predict_joint_log_proba(X),
                    sk.predict_joint_log_proba(X) + constant[:, None], rtol=1e-12)
    assert_allclose(clf.predict_proba(X), sk.predict_proba(X), rtol=1e-12, atol=1e-13)
    assert_allclose(clf.predict_log_proba(X), sk.predict_log_proba(X), rtol=1e-12)


@pytest.mark.parametrize("make", [_gaussian, _multinomial], ids=["gaussian", "multinomial"])
@pytest.mark.parametrize("k", [3, 7])
def test_padded_models_in_float32_stay_within_the_tolerance(make, k):
    clf, sk, X, _ = make(k)
    assert_allclose(clf.predict_proba(X), sk.predict_proba(X), rtol=0, atol=1e-5)
    assert (clf.predict(X) == sk.predict(X)).mean() > 0.99


@pytest.mark.parametrize("k", [7])
def test_poisson_ml_equals_hand_sums_in_x64(x64, k):
    X, y = data("poisson", k)
    clf = bnb.NaiveBayes(bnb.Poisson(), method="ml", class_alpha=0).fit(X, y)
    rates = np.stack([X[y == c].mean(axis=0) for c in range(k)])
    joint = np.log(np.bincount(y) / N) + np.stack(
        [st.poisson.logpmf(X, rates[c]).sum(axis=1) for c in range(k)], axis=1)
    assert_allclose(clf.predict_joint_log_proba(X), joint, rtol=1e-12)
    assert_allclose(clf.predict_proba(X), np.exp(joint - logsumexp(joint, axis=1, keepdims=True)),
                    rtol=1e-12, atol=1e-13)


def student_t_joint(X, y, k, Xn):
    """log p(x, c) under the posterior predictive of the Normal-Gamma prior's defaults (loc 0,
    kappa 1, shape 1, rate 1) with a uniform class prior, by scipy.stats.t."""
    out = np.full((len(Xn), k), -np.log(k))
    for c in range(k):
        xk = X[y == c]
        n, mean = len(xk), xk.mean(axis=0)
        m2 = ((xk - mean) ** 2).sum(axis=0)
        kn, an = 1.0 + n, 1.0 + n / 2
        bn = 1.0 + m2 / 2 + n * mean**2 / (2 * kn)
        out[:, c] += st.t.logpdf(Xn, 2 * an, n * mean / kn,
                                 np.sqrt(bn * (kn + 1) / (an * kn))).sum(axis=1)
    return out


@pytest.mark.parametrize("k", [5])
def test_gaussian_bayes_equals_student_t_in_x64(x64, k):
    X, y = data("gaussian", k)
    family = bnb.Gaussian(loc=0.0, kappa=1.0, shape=1.0, rate=1.0)
    clf = bnb.NaiveBayes(family, method="bayes", class_prior=np.full(k, 1.0 / k))
    clf.fit(X, y)
    joint = student_t_joint(X, y, k, X)
    assert_allclose(clf.predict_joint_log_proba(X), joint, rtol=1e-12)
    assert_allclose(clf.predict_proba(X), np.exp(joint - logsumexp(joint, axis=1, keepdims=True)),
                    rtol=1e-11, atol=1e-13)
