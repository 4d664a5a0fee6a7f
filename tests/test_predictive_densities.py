"""Every posterior predictive density and plug-in estimate against an independent reference.

The references are written here from the raw data: conjugate updates by hand (Murphy 2007 for
the Normal-Gamma), densities from ``scipy.stats`` (betabinom, dirichlet_multinomial, t, nbinom,
norm, poisson, multinomial) or from the Gamma function. Nothing is read back from the library
except the quantity under test.
"""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
import scipy.stats as st
from numpy.testing import assert_allclose
from scipy.special import gammaln, logsumexp

import bayesnb as bnb
from bayesnb.families.categorical import UnseenCategoryWarning

K = 3
CLASSES = np.arange(K)
N = 18
Y = np.random.default_rng(123).permutation(np.arange(N) % K)  # six rows per class
RTOL = 1e-10


# ---------------------------------------------------------------------------- helpers
def isna(col) -> np.ndarray:
    return pd.isna(pd.Series(np.asarray(col, dtype=object), dtype=object)).to_numpy()


def class_groups(col, y):
    """The observed values of one column, per class."""
    col = np.asarray(col)
    miss = isna(col)
    return [col[(y == k) & ~miss] for k in CLASSES]


def class_log_predictive(y, gamma):
    """log (n_k + gamma_k) / (N + sum gamma): the predictive of the next label."""
    counts = np.bincount(y, minlength=K).astype(float)
    gamma = np.broadcast_to(np.asarray(gamma, float), (K,))
    return np.log(counts + gamma) - np.log(counts.sum() + gamma.sum())


def block_full_log_predictive(clf, Xnew, index=0):
    """The library's full per-class log predictive of one block: log_predictive + normaliser."""
    block = clf.blocks_[index]
    fam = type(block.family)
    raw = np.asarray(Xnew, dtype=object if fam is bnb.Categorical else float)
    x = jnp.asarray(block.family.encode(raw, block.schema))
    post = clf.posterior_[index]
    out = np.asarray(fam.log_predictive(post, x)) + np.asarray(fam.log_normalizer(x))[:, None]
    return np.asarray(out, dtype=np.float64)


def check_joint(clf, Xnew, ref_block_sum, gamma, y=Y):
    """predict_joint_log_proba and predict_proba against the hand assembly."""
    joint = class_log_predictive(y, gamma) + ref_block_sum
    assert_allclose(clf.predict_joint_log_proba(Xnew), joint, rtol=RTOL, atol=1e-12)
    proba = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
    assert_allclose(clf.predict_proba(Xnew), proba, rtol=1e-9, atol=1e-14)


# ---------------------------------------------------------------------------- hand references
def hand_bernoulli(X, y, Xnew, alpha, beta):
    F = X.shape[1]
    a_post, b_post = np.zeros((K, F)), np.zeros((K, F))
    ref = np.zeros((len(Xnew), K))
    for j in range(F):
        for k, g in enumerate(class_groups(X[:, j], y)):
            a_post[k, j] = alpha[j] + g.sum()
            b_post[k, j] = beta[j] + len(g) - g.sum()
            obs = ~np.isnan(Xnew[:, j])
            ref[obs, k] += st.betabinom(1, a_post[k, j], b_post[k, j]).logpmf(Xnew[obs, j])
    return (a_post, b_post), ref


def hand_categorical(X, y, Xnew, levels, alpha):
    """``levels[j]`` the sorted levels of column j, ``alpha[j]`` its per-level prior."""
    post = []
    ref = np.zeros((len(Xnew), K))
    for j, (lv, a) in enumerate(zip(levels, alpha, strict=True)):
        a = np.broadcast_to(np.asarray(a, float), (len(lv),))
        post_j = np.zeros((K, len(lv)))
        for k, g in enumerate(class_groups(X[:, j], y)):
            counts = np.array([np.sum(g == v) for v in lv], dtype=float)
            post_j[k] = a + counts
            for i, v in enumerate(Xnew[:, j]):
                if isna([v])[0]:
                    continue
                onehot = np.array([float(v == u) for u in lv])
                dm = st.dirichlet_multinomial.logpmf(onehot, post_j[k], 1)
                mean = np.log(post_j[k][lv.index(v)] / post_j[k].sum())  # Dirichlet mean
                assert_allclose(dm, mean, rtol=1e-12)
                ref[i, k] += dm
        post.append(post_j)
    return post, ref


def hand_multinomial(X, y, Xnew, alpha):
    """Posterior Dirichlet and the Dirichlet-multinomial of each new row over its observed
    columns (scipy), plus the same through the Gamma function (non-integer counts too)."""
    X0 = np.nan_to_num(X, nan=0.0)
    a_post = np.array([alpha + X0[y == k].sum(axis=0) for k in CLASSES])
    ref_scipy = np.full((len(Xnew), K), np.nan)
    ref_gamma = np.zeros((len(Xnew), K))
    for i, row in enumerate(Xnew):
        obs = ~np.isnan(row)
        x, n = row[obs], row[obs].sum()
        if not obs.any():  # nothing observed: probability one
            ref_scipy[i] = ref_gamma[i] = 0.0
            continue
        for k in CLASSES:
            a = a_post[k, obs]
            ref_gamma[i, k] = (gammaln(n + 1) - np.sum(gammaln(x + 1)) + gammaln(a.sum())
                               - gammaln(a.sum() + n) + np.sum(gammaln(a + x) - gammaln(a)))
            if np.all(x == np.round(x)):
                ref_scipy[i, k] = st.dirichlet_multinomial.logpmf(x, a, int(n))
    return a_post, ref_scipy, ref_gamma


def hand_normal_gamma(X, y, loc, kappa, shape, rate, pooled):
    """Murphy (2007) eqs. 86-89, with b' in the uncentred form
    b + (sum x^2 + kappa m^2 - kappa' m'^2) / 2 (pooled: one shape/rate per column)."""
    F = X.shape[1]
    kn, mn, an, bn = (np.zeros((K, F)) for _ in range(4))
    for j in range(F):
        groups = class_groups(X[:, j], y)
        for k, g in enumerate(groups):
            n = len(g)
            kn[k, j] = kappa[j] + n
            mn[k, j] = (kappa[j] * loc[j] + g.sum()) / kn[k, j]
            an[k, j] = shape[j] + n / 2
            bn[k, j] = rate[j] + 0.5 * (np.sum(g**2) + kappa[j] * loc[j] ** 2
                                        - kn[k, j] * mn[k, j] ** 2)
            # the centred form of the same update (Murphy eq. 88)
            if n:
                centred = (rate[j] + 0.5 * np.sum((g - g.mean()) ** 2)
                           + kappa[j] * n * (g.mean() - loc[j]) ** 2 / (2 * kn[k, j]))
                assert_allclose(bn[k, j], centred, rtol=1e-10)
        if pooled:
            an[:, j] = shape[j] + sum(len(g) for g in groups) / 2
            bn[:, j] = rate[j] + np.sum(bn[:, j] - rate[j])
    return mn, kn, an, bn


def hand_gaussian(X, y, Xnew, loc, kappa, shape, rate, pooled):
    mn, kn, an, bn = hand_normal_gamma(X, y, loc, kappa, shape, rate, pooled)
    ref = np.zeros((len(Xnew), K))
    for j in range(X.shape[1]):
        obs = ~np.isnan(Xnew[:, j])
        for k in CLASSES:
            t = st.t(df=2 * an[k, j], loc=mn[k, j],
                     scale=np.sqrt(bn[k, j] * (kn[k, j] + 1) / (an[k, j] * kn[k, j])))
            ref[obs, k] += t.logpdf(Xnew[obs, j])
    return (mn, kn, an, bn), ref


def hand_poisson(X, y, Xnew, shape, rate):
    F = X.shape[1]
    a_post, b_post = np.zeros((K, F)), np.zeros((K, F))
    ref = np.zeros((len(Xnew), K))
    for j in range(F):
        obs = ~np.isnan(Xnew[:, j])
        for k, g in enumerate(class_groups(X[:, j], y)):
            a_post[k, j] = shape[j] + g.sum()
            b_post[k, j] = rate[j] + len(g)
            nb = st.nbinom(n=a_post[k, j], p=b_post[k, j] / (b_post[k, j] + 1))
            ref[obs, k] += nb.logpmf(Xnew[obs, j])
    return (a_post, b_post), ref


# ---------------------------------------------------------------------------- data
def bernoulli_data(seed=0, nan=0.0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (N, 3)).astype(float)
    X[rng.random(X.shape) < nan] = np.nan
    Xnew = np.array(list(itertools.product([0.0, 1.0], repeat=3)))
    return X, Xnew


def categorical_data(seed=1, nan=0.0):
    rng = np.random.default_rng(seed)
    levels = [("a", "b", "c"), ("lo", "mid", "top", "zz"), ("no", "yes")]
    X = np.empty((N, 3), dtype=object)
    for j, lv in enumerate(levels):
        X[:, j] = rng.choice(lv, N)
    X[rng.random(X.shape) < nan] = None
    for j, lv in enumerate(levels):
        X[: len(lv), j] = lv  # every level seen at fit
    Xnew = np.empty((8, 3), dtype=object)
    for j, lv in enumerate(levels):
        Xnew[:, j] = rng.choice(lv, 8)
    return X, Xnew, levels


def gaussian_data(seed=2, nan=0.0):
    rng = np.random.default_rng(seed)
    shift = np.array([[-1.0, 0.5], [0.0, 2.0], [1.5, -0.5]])
    X = rng.normal(size=(N, 2)) * np.array([1.0, 0.4]) + shift[Y]
    X[rng.random(X.shape) < nan] = np.nan
    Xnew = rng.normal(size=(7, 2)) * 1.5
    return X, Xnew


def poisson_data(seed=3, nan=0.0):
    rng = np.random.default_rng(seed)
    X = rng.poisson(np.array([[1.0, 4.0], [3.0, 0.5], [6.0, 2.0]])[Y]).astype(float)
    X[rng.random(X.shape) < nan] = np.nan
    Xnew = np.array([[0, 0], [1, 7], [3, 2], [12, 0], [5, 5], [2, 1]], dtype=float)
    return X, Xnew


def multinomial_data(seed=4):
    rng = np.random.default_rng(seed)
    probs = np.array([[0.5, 0.2, 0.2, 0.1], [0.1, 0.1, 0.3, 0.5], [0.25, 0.25, 0.25, 0.25]])
    X = np.array([rng.multinomial(rng.integers(0, 9), probs[k]) for k in Y], dtype=float)
    Xnew = np.array([[0, 0, 0, 0], [1, 0, 0, 0], [3, 1, 0, 2], [0, 5, 1, 1], [2, 2, 2, 2]],
                    dtype=float)
    return X, Xnew


BERN = dict(alpha=np.array([0.5, 2.0, 3.5]), beta=np.array([1.5, 0.7, 2.0]))
CAT_ALPHA = [np.array([0.5, 1.0, 2.5]), np.array([1.0, 3.0, 0.2, 1.0]), np.array([4.0, 0.6])]
GAUSS = dict(loc=np.array([0.3, -1.0]), kappa=np.array([0.5, 2.0]),
             shape=np.array([2.0, 1.5]), rate=np.array([0.5, 3.0]))
POIS = dict(shape=np.array([2.0, 0.5]), rate=np.array([0.5, 3.0]))
MULT_ALPHA = np.array([0.5, 1.0, 2.0, 3.0])
GAMMA = np.array([0.5, 1.5, 3.0])


def fit(family, X, y=Y, method="bayes", class_alpha=GAMMA):
    return bnb.NaiveBayes(features=family, method=method, class_alpha=class_alpha).fit(X, y)


# ---------------------------------------------------------------------------- exact Bayes
def test_class_predictive_is_dirichlet_mean(x64):
    X, _ = bernoulli_data()
    clf = fit(bnb.Bernoulli(), X)
    counts = np.bincount(Y, minlength=K)
    assert_allclose(clf.class_count_, counts)
    assert_allclose(clf.class_prior_.to_numpy(), (counts + GAMMA) / (N + GAMMA.sum()),
                    rtol=1e-12)


def test_bernoulli_predictive_is_beta_binomial(x64):
    X, Xnew = bernoulli_data()
    clf = fit(bnb.Bernoulli(**BERN), X)
    (a_post, b_post), ref = hand_bernoulli(X, Y, Xnew, BERN["alpha"], BERN["beta"])
    post = clf.posterior_[0]
    assert_allclose(post.alpha, a_post, rtol=1e-12)
    assert_allclose(post.beta, b_post, rtol=1e-12)
    assert_allclose(block_full_log_predictive(clf, Xnew), ref, rtol=RTOL)
    check_joint(clf, Xnew, ref, GAMMA)


@pytest.mark.parametrize("alpha_kind", ["per_level", "per_column", "scalar"])
def test_categorical_predictive_is_dirichlet_categorical(x64, alpha_kind):
    X, Xnew, levels = categorical_data()
    if alpha_kind == "per_level":
        alpha, hand_alpha = CAT_ALPHA, CAT_ALPHA
    elif alpha_kind == "per_column":
        alpha = np.array([0.4, 2.0, 1.3])
        hand_alpha = [np.full(len(lv), a) for lv, a in zip(levels, alpha, strict=True)]
    else:
        alpha, hand_alpha = 0.7, [np.full(len(lv), 0.7) for lv in levels]
    clf = fit(bnb.Categorical(alpha=alpha), X)
    assert clf.blocks_[0].schema.levels == tuple(levels)
    post, ref = hand_categorical(X, Y, Xnew, levels, hand_alpha)
    lib_post = np.asarray(clf.posterior_[0].alpha)
    assert_allclose(lib_post, np.concatenate(post, axis=1), rtol=1e-12)
    assert_allclose(block_full_log_predictive(clf, Xnew), ref, rtol=RTOL)
    check_joint(clf, Xnew, ref, GAMMA)


def test_categorical_per_level_alpha_with_equal_level_counts(x64):
    """Per-level pseudo-counts must work when every column has the same number of levels
    (and for a single column), not only for ragged level counts."""
    rng = np.random.default_rng(5)
    X = rng.choice(["p", "q"], (N, 2)).astype(object)
    X[:2] = [["p", "p"], ["q", "q"]]
    alpha = [np.array([0.5, 3.0]), np.array([2.0, 1.2])]
    clf = fit(bnb.Categorical(alpha=alpha), X)
    Xnew = np.array([["p", "q"], ["q", "p"], ["q", "q"]], dtype=object)
    post, ref = hand_categorical(X, Y, Xnew, [("p", "q"), ("p", "q")], alpha)
    assert_allclose(np.asarray(clf.posterior_[0].alpha), np.concatenate(post, axis=1))
    assert_allclose(block_full_log_predictive(clf, Xnew), ref, rtol=RTOL)
    one = fit(bnb.Categorical(alpha=[np.array([0.5, 3.0])]), X[:, :1])
    assert_allclose(np.asarray(one.posterior_[0].alpha), post[0])


def test_multinomial_predictive_is_dirichlet_multinomial(x64):
    X, Xnew = multinomial_data()
    clf = fit(bnb.Multinomial(alpha=MULT_ALPHA), X)
    a_post, ref_scipy, ref_gamma = hand_multinomial(X, Y, Xnew, MULT_ALPHA)
    assert_allclose(clf.posterior_[0].alpha, a_post, rtol=1e-12)
    assert_allclose(ref_scipy, ref_gamma, rtol=1e-10, atol=1e-12)  # the two references agree
    lib = block_full_log_predictive(clf, Xnew)
    assert_allclose(lib, ref_scipy, rtol=RTOL, atol=1e-12)
    assert_allclose(lib[0], 0.0, atol=1e-12)  # an empty document has probability one
    check_joint(clf, Xnew, ref_scipy, GAMMA)


def test_multinomial_predictive_non_integer_counts(x64):
    """tf-idf style weights: the Gamma-function form of the Dirichlet-multinomial."""
    X, _ = multinomial_data()
    rng = np.random.default_rng(6)
    X = X * rng.uniform(0.3, 1.7, X.shape)
    Xnew = rng.uniform(0, 3, (5, 4))
    clf = fit(bnb.Multinomial(alpha=MULT_ALPHA), X)
    a_post, _, ref_gamma = hand_multinomial(X, Y, Xnew, MULT_ALPHA)
    assert_allclose(clf.posterior_[0].alpha, a_post, rtol=1e-12)
    assert_allclose(block_full_log_predictive(clf, Xnew), ref_gamma, rtol=RTOL)
    check_joint(clf, Xnew, ref_gamma, GAMMA)


@pytest.mark.parametrize("pooled", [False, True])
def test_gaussian_predictive_is_student_t(x64, pooled):
    X, Xnew = gaussian_data()
    clf = fit(bnb.Gaussian(**GAUSS, pooled=pooled), X)
    (mn, kn, an, bn), ref = hand_gaussian(X, Y, Xnew, **GAUSS, pooled=pooled)
    post = clf.posterior_[0]
    assert_allclose(post.loc, mn, rtol=1e-12, atol=1e-14)
    assert_allclose(post.kappa, kn, rtol=1e-12)
    assert_allclose(post.shape, an, rtol=1e-12)
    assert_allclose(post.rate, bn, rtol=1e-10)
    assert_allclose(block_full_log_predictive(clf, Xnew), ref, rtol=RTOL)
    check_joint(clf, Xnew, ref, GAMMA)


def test_gaussian_default_prior_predictive(x64):
    """The documented default prior loc=0, kappa=1e-3, shape=1, rate=0.01."""
    X, Xnew = gaussian_data(seed=7)
    clf = fit(bnb.Gaussian(), X)
    ones = np.ones(2)
    _, ref = hand_gaussian(X, Y, Xnew, 0 * ones, 1e-3 * ones, ones, 0.01 * ones, False)
    assert_allclose(block_full_log_predictive(clf, Xnew), ref, rtol=1e-9)


def test_poisson_predictive_is_negative_binomial(x64):
    X, Xnew = poisson_data()
    clf = fit(bnb.Poisson(**POIS), X)
    (a_post, b_post), ref = hand_poisson(X, Y, Xnew, **POIS)
    post = clf.posterior_[0]
    assert_allclose(post.shape, a_post, rtol=1e-12)
    assert_allclose(post.rate, b_post, rtol=1e-12)
    assert_allclose(block_full_log_predictive(clf, Xnew), ref, rtol=RTOL)
    check_joint(clf, Xnew, ref, GAMMA)


def _mixed_frame(seed=8, n=N):
    rng = np.random.default_rng(seed)
    Xb, _ = bernoulli_data(seed)
    Xc, _, levels = categorical_data(seed)
    Xg, _ = gaussian_data(seed)
    Xp, _ = poisson_data(seed)
    Xm, _ = multinomial_data(seed)
    frame = pd.DataFrame({
        "b0": Xb[:, 0], "b1": Xb[:, 1], "c0": Xc[:, 0], "c1": Xc[:, 1], "g_pooled": Xg[:, 0],
        "g_class": Xg[:, 1], "p0": Xp[:, 0], "m0": Xm[:, 0], "m1": Xm[:, 1], "m2": Xm[:, 2],
    })
    new = frame.sample(6, random_state=seed).reset_index(drop=True)
    new["g_pooled"] = rng.normal(size=6)
    new["g_class"] = rng.normal(size=6)
    return frame, new, levels


def test_mixed_model_exact_bayes_probabilities(x64):
    frame, new, levels = _mixed_frame()
    gp = dict(loc=0.3, kappa=0.5, shape=2.0, rate=0.5)
    gc = dict(loc=-1.0, kappa=2.0, shape=1.5, rate=3.0)
    features = {
        ("b0", "b1"): bnb.Bernoulli(alpha=[0.5, 2.0], beta=[1.5, 0.7]),
        ("c0", "c1"): bnb.Categorical(alpha=[0.4, 2.0]),
        "g_pooled": bnb.Gaussian(**gp, pooled=True),
        "g_class": bnb.Gaussian(**gc),
        "p0": bnb.Poisson(shape=2.0, rate=0.5),
        ("m0", "m1", "m2"): bnb.Multinomial(alpha=[0.5, 1.0, 2.0]),
    }
    clf = bnb.NaiveBayes(features=features, method="bayes", class_alpha=GAMMA).fit(frame, Y)
    assert len(clf.blocks_) == 6

    def arr(cols):
        return frame[cols].to_numpy(dtype=float), new[cols].to_numpy(dtype=float)

    total = np.zeros((len(new), K))
    X, Xn = arr(["b0", "b1"])
    total += hand_bernoulli(X, Y, Xn, [0.5, 2.0], [1.5, 0.7])[1]
    total += hand_categorical(frame[["c0", "c1"]].to_numpy(object), Y,
                              new[["c0", "c1"]].to_numpy(object), levels[:2],
                              [np.full(3, 0.4), np.full(4, 2.0)])[1]
    X, Xn = arr(["g_pooled"])
    total += hand_gaussian(X, Y, Xn, *([v] for v in gp.values()), pooled=True)[1]
    X, Xn = arr(["g_class"])
    total += hand_gaussian(X, Y, Xn, *([v] for v in gc.values()), pooled=False)[1]
    X, Xn = arr(["p0"])
    total += hand_poisson(X, Y, Xn, [2.0], [0.5])[1]
    X, Xn = arr(["m0", "m1", "m2"])
    total += hand_multinomial(X, Y, Xn, np.array([0.5, 1.0, 2.0]))[1]
    check_joint(clf, new, total, GAMMA)
    # and column order of the new frame does not matter
    assert_allclose(clf.predict_proba(new[new.columns[::-1]]), clf.predict_proba(new),
                    rtol=1e-12)


# ---------------------------------------------------------------------------- plug-in methods
def class_log_plugin(y, gamma, method):
    counts = np.bincount(y, minlength=K).astype(float)
    pseudo = {"ml": 0.0, "map": gamma - 1.0, "mean": gamma}[method]
    return np.log(counts + pseudo) - np.log(np.sum(counts + pseudo))


METHODS = ["ml", "map", "mean"]
G_MAP = np.array([1.5, 2.0, 3.0])  # class concentration with a mode


def check_plugin_joint(clf, Xnew, ref_block_sum, method):
    joint = class_log_plugin(Y, G_MAP, method) + ref_block_sum
    assert_allclose(clf.predict_joint_log_proba(Xnew), joint, rtol=RTOL, atol=1e-12)
    assert_allclose(clf.class_prior_.to_numpy(), np.exp(class_log_plugin(Y, G_MAP, method)),
                    rtol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_bernoulli_plugin(x64, method):
    X, Xnew = bernoulli_data()
    alpha, beta = np.array([1.0, 2.0, 3.5]), np.array([1.5, 1.2, 2.0])
    clf = fit(bnb.Bernoulli(alpha=alpha, beta=beta), X, method=method, class_alpha=G_MAP)
    s = np.array([X[Y == k].sum(axis=0) for k in CLASSES])
    n = np.array([(Y == k).sum() for k in CLASSES], dtype=float)[:, None]
    p = {"ml": s / n, "map": (s + alpha - 1) / (n + alpha + beta - 2),
         "mean": (s + alpha) / (n + alpha + beta)}[method]
    tables = clf.conditional_tables()
    for j in range(3):
        assert_allclose(tables[j][1].to_numpy(), p[:, j], rtol=1e-12)
        assert_allclose(tables[j][0].to_numpy(), 1 - p[:, j], rtol=1e-12)
    ref = sum(st.bernoulli(p[None, :, j]).logpmf(Xnew[:, None, j]) for j in range(3))
    check_plugin_joint(clf, Xnew, ref, method)


@pytest.mark.parametrize("method", METHODS)
def test_categorical_plugin(x64, method):
    X, Xnew, levels = categorical_data()
    alpha = [np.array([1.0, 1.5, 2.5]), np.array([1.0, 3.0, 1.2, 1.0]), np.array([4.0, 1.6])]
    clf = fit(bnb.Categorical(alpha=alpha), X, method=method, class_alpha=G_MAP)
    tables = clf.conditional_tables()
    ref = np.zeros((len(Xnew), K))
    for j, (lv, a) in enumerate(zip(levels, alpha, strict=True)):
        counts = np.array([[np.sum(g == v) for v in lv] for g in class_groups(X[:, j], Y)],
                          dtype=float)
        pseudo = {"ml": 0.0, "map": a - 1, "mean": a}[method]
        p = (counts + pseudo) / (counts + pseudo).sum(axis=1, keepdims=True)
        assert list(tables[j].columns) == list(lv)
        assert_allclose(tables[j].to_numpy(), p, rtol=1e-12)
        codes = np.array([lv.index(v) for v in Xnew[:, j]])
        with np.errstate(divide="ignore"):
            ref += np.log(p[:, codes].T)
    check_plugin_joint(clf, Xnew, ref, method)


@pytest.mark.parametrize("method", METHODS)
def test_multinomial_plugin(x64, method):
    X, Xnew = multinomial_data()
    alpha = np.array([1.0, 1.5, 2.0, 3.0])
    clf = fit(bnb.Multinomial(alpha=alpha), X, method=method, class_alpha=G_MAP)
    totals = np.array([X[Y == k].sum(axis=0) for k in CLASSES])
    pseudo = {"ml": 0.0, "map": alpha - 1, "mean": alpha}[method]
    p = (totals + pseudo) / (totals + pseudo).sum(axis=1, keepdims=True)
    table = clf.conditional_tables()[(0, 1, 2, 3)]
    assert_allclose(table.to_numpy(), p, rtol=1e-12)
    ref = np.array([[st.multinomial(int(row.sum()), p[k]).logpmf(row) for k in CLASSES]
                    for row in Xnew])
    check_plugin_joint(clf, Xnew, ref, method)


@pytest.mark.parametrize("pooled", [False, True])
@pytest.mark.parametrize("method", METHODS)
def test_gaussian_plugin(x64, method, pooled):
    X, Xnew = gaussian_data()
    clf = fit(bnb.Gaussian(**GAUSS, pooled=pooled), X, method=method, class_alpha=G_MAP)
    if method == "ml":
        groups = [class_groups(X[:, j], Y) for j in range(2)]
        mean = np.array([[g.mean() for g in gs] for gs in groups]).T
        if pooled:
            var = np.array([sum(np.sum((g - g.mean()) ** 2) for g in gs) / N for gs in groups])
            var = np.broadcast_to(var, (K, 2))
        else:
            var = np.array([[g.var() for g in gs] for gs in groups]).T  # the 1/n variance
        precision = 1 / var
    else:
        mean, _, an, bn = hand_normal_gamma(X, Y, **GAUSS, pooled=pooled)
        if method == "mean":
            precision = an / bn
        else:
            precision = (an - 1 + K / 2) / bn if pooled else (an - 0.5) / bn
    tables = clf.conditional_tables()
    for j in range(2):
        assert_allclose(tables[j]["mean"].to_numpy(), mean[:, j], rtol=1e-12, atol=1e-14)
        assert_allclose(tables[j]["sd"].to_numpy(), precision[:, j] ** -0.5, rtol=1e-10)
    ref = sum(st.norm(mean[None, :, j], precision[None, :, j] ** -0.5).logpdf(Xnew[:, None, j])
              for j in range(2))
    check_plugin_joint(clf, Xnew, ref, method)


@pytest.mark.parametrize("method", METHODS)
def test_poisson_plugin(x64, method):
    X, Xnew = poisson_data()
    shape, rate = np.array([2.0, 1.0]), np.array([0.5, 3.0])
    clf = fit(bnb.Poisson(shape=shape, rate=rate), X, method=method, class_alpha=G_MAP)
    S = np.array([X[Y == k].sum(axis=0) for k in CLASSES])
    n = np.array([(Y == k).sum() for k in CLASSES], dtype=float)[:, None]
    lam = {"ml": S / n, "map": (shape + S - 1) / (rate + n),
           "mean": (shape + S) / (rate + n)}[method]
    tables = clf.conditional_tables()
    for j in range(2):
        assert_allclose(tables[j]["rate"].to_numpy(), lam[:, j], rtol=1e-12)
    ref = sum(st.poisson(lam[None, :, j]).logpmf(Xnew[:, None, j]) for j in range(2))
    check_plugin_joint(clf, Xnew, ref, method)


def test_map_under_alpha_plus_one_equals_mean(x64):
    """Documented identity: MAP under concentration alpha + 1 is the posterior mean under
    alpha (Bernoulli, Categorical, Multinomial)."""
    X, Xnew = bernoulli_data()
    a = fit(bnb.Bernoulli(alpha=0.5, beta=2.0), X, method="mean", class_alpha=G_MAP)
    b = fit(bnb.Bernoulli(alpha=1.5, beta=3.0), X, method="map", class_alpha=G_MAP + 1)
    assert_allclose(a.predict_proba(Xnew), b.predict_proba(Xnew), rtol=1e-12)
    X, _ = multinomial_data()
    a = fit(bnb.Multinomial(alpha=0.5), X, method="mean", class_alpha=G_MAP)
    b = fit(bnb.Multinomial(alpha=1.5), X, method="map", class_alpha=G_MAP + 1)
    assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-12)


# ---------------------------------------------------------------------------- missing values
NAN_CASES = ["bernoulli", "categorical", "gaussian", "gaussian_pooled", "poisson"]


def _nan_case(name):
    """(family factory, X, Xnew with NaN, hand reference fn(X, y, Xnew) -> (n, K))."""
    if name == "bernoulli":
        X, Xnew = bernoulli_data(nan=0.25)
        return (lambda: bnb.Bernoulli(**BERN)), X, Xnew, \
            lambda X, y, Xn: hand_bernoulli(X, y, Xn, BERN["alpha"], BERN["beta"])[1]
    if name == "categorical":
        X, Xnew, levels = categorical_data(nan=0.25)
        Xnew[0, 0] = None
        Xnew[1, 1:] = None
        Xnew[2, :] = np.nan
        alpha = np.array([0.4, 2.0, 1.3])
        per_level = [np.full(len(lv), a) for lv, a in zip(levels, alpha, strict=True)]
        return (lambda: bnb.Categorical(alpha=alpha)), X, Xnew, \
            lambda X, y, Xn: hand_categorical(X, y, Xn, levels, per_level)[1]
    if name.startswith("gaussian"):
        pooled = name.endswith("pooled")
        X, Xnew = gaussian_data(nan=0.25)
        return (lambda: bnb.Gaussian(**GAUSS, pooled=pooled)), X, Xnew, \
            lambda X, y, Xn: hand_gaussian(X, y, Xn, **GAUSS, pooled=pooled)[1]
    X, Xnew = poisson_data(nan=0.25)
    return (lambda: bnb.Poisson(**POIS)), X, Xnew, \
        lambda X, y, Xn: hand_poisson(X, y, Xn, **POIS)[1]


def _with_nan_rows(Xnew):
    Xnew = Xnew.copy()
    Xnew[0, 0] = np.nan
    Xnew[1, 1:] = np.nan
    Xnew[2, :] = np.nan
    return Xnew


def _sub_hyper(family, j):
    """The family's hyperparameters restricted to column j."""
    params = family.get_params()
    out = {}
    for k, v in params.items():
        if k == "categories" or k == "pooled":
            out[k] = v
        elif np.ndim(v) == 0:
            out[k] = v
        elif isinstance(v, list):  # per-level Categorical alpha
            out[k] = [v[j]]
        else:
            out[k] = np.asarray(v)[j:j + 1]
    return out


@pytest.mark.parametrize("name", NAN_CASES)
def test_missing_values_drop_out(x64, name):
    make, X, Xnew, hand = _nan_case(name)
    if name != "categorical":
        Xnew = _with_nan_rows(Xnew)
    assert isna(X.ravel()).any()
    clf = fit(make(), X)
    post = clf.posterior_[0]
    # the exact predictive of rows with missing entries: only observed entries count
    ref = hand(X, Y, Xnew)
    assert_allclose(block_full_log_predictive(clf, Xnew), ref, rtol=RTOL, atol=1e-12)
    check_joint(clf, Xnew, ref, GAMMA)
    assert_allclose(block_full_log_predictive(clf, Xnew)[2], 0.0)  # nothing observed
    # each column equals a one-column fit on the rows where that column is observed
    family = make()
    for j in range(X.shape[1]):
        keep = ~isna(X[:, j])
        sub = fit(type(family)(**_sub_hyper(family, j)), X[keep][:, [j]], Y[keep])
        sub_post = sub.posterior_[0]
        if name == "categorical":
            off = np.asarray(post.offset)
            width = np.asarray(sub_post.alpha).shape[1]
            assert_allclose(np.asarray(post.alpha)[:, off[j]:off[j] + width],
                            sub_post.alpha, rtol=1e-12)
        else:
            for leaf, sub_leaf in zip(post, sub_post, strict=True):
                if np.ndim(leaf) == 2:
                    assert_allclose(np.asarray(leaf)[:, j], np.asarray(sub_leaf)[:, 0],
                                    rtol=1e-10, atol=1e-14)
        for method in ("mean", "ml"):
            clf_m = fit(make(), X, method=method)
            sub_m = fit(type(family)(**_sub_hyper(family, j)), X[keep][:, [j]], Y[keep],
                        method=method)
            col = clf.blocks_[0].schema.columns[j]
            assert_allclose(clf_m.conditional_tables()[col].to_numpy(dtype=float),
                            sub_m.conditional_tables()[0].to_numpy(dtype=float), rtol=1e-10)


def test_multinomial_missing_values(x64):
    """A NaN count adds nothing to its column's totals; at prediction the row is scored as a
    Dirichlet-multinomial over its observed columns (the model without the missing ones)."""
    X, Xnew = multinomial_data()
    X_nan = X.copy()
    rng = np.random.default_rng(9)
    X_nan[rng.random(X.shape) < 0.2] = np.nan
    clf = fit(bnb.Multinomial(alpha=MULT_ALPHA), X_nan)
    assert_allclose(clf.posterior_[0].alpha,
                    fit(bnb.Multinomial(alpha=MULT_ALPHA), np.nan_to_num(X_nan)).posterior_[0]
                    .alpha, rtol=1e-12)
    Xnew = np.vstack([Xnew, [[np.nan, 2, 1, 0], [1, np.nan, np.nan, 3], [0, np.nan, 0, 0]]])
    a_post, ref_scipy, ref_gamma = hand_multinomial(X_nan, Y, Xnew, MULT_ALPHA)
    assert_allclose(ref_scipy, ref_gamma, rtol=1e-10, atol=1e-12)
    assert_allclose(block_full_log_predictive(clf, Xnew), ref_scipy, rtol=RTOL, atol=1e-12)
    check_joint(clf, Xnew, ref_scipy, GAMMA)
    # a column missing throughout: same as the model fitted and scored without it
    X_gone = X.copy()
    X_gone[:, 2] = np.nan
    Xnew_gone = Xnew[:5].copy()
    Xnew_gone[:, 2] = np.nan
    keep = [0, 1, 3]
    for method in ("bayes", "mean", "map", "ml"):
        alpha = MULT_ALPHA + (1.0 if method == "map" else 0.0)
        full = fit(bnb.Multinomial(alpha=alpha), X_gone, method=method, class_alpha=G_MAP)
        small = fit(bnb.Multinomial(alpha=alpha[keep]), X[:, keep], method=method,
                    class_alpha=G_MAP)
        assert_allclose(full.predict_proba(Xnew_gone), small.predict_proba(Xnew_gone[:, keep]),
                        rtol=1e-10)
        if method != "bayes":  # the plug-in: multinomial over the observed columns
            table = small.conditional_tables()[(0, 1, 2)].to_numpy()
            ref = np.array([[st.multinomial(int(r.sum()), table[k]).logpmf(r)
                             for k in CLASSES] for r in Xnew_gone[:, keep]])
            assert_allclose(full.predict_joint_log_proba(Xnew_gone),
                            ref + np.log(small.class_prior_.to_numpy()), rtol=1e-10)


@pytest.mark.parametrize("method", ["bayes", "mean", "ml"])
def test_multinomial_row_with_every_count_missing(x64, method):
    """A row with nothing observed carries no information: its predictive is 1 and its class
    probabilities are the class prior (as for every other family)."""
    X, _ = multinomial_data()
    clf = fit(bnb.Multinomial(alpha=MULT_ALPHA), X, method=method)
    Xnew = np.array([[np.nan] * 4, [1.0, 0.0, 2.0, 0.0]])
    joint = clf.predict_joint_log_proba(Xnew)
    assert_allclose(joint[0], np.log(clf.class_prior_.to_numpy()), rtol=1e-12)
    assert_allclose(clf.predict_proba(Xnew)[0], clf.class_prior_.to_numpy(), rtol=1e-12)


@pytest.mark.parametrize("method", ["bayes", "mean", "map"])
def test_categorical_value_never_seen_gets_the_documented_probability(x64, method):
    """Documented: a value outside the fitted levels gets abar_j / (n_kj + A_j) under
    mean/bayes, with abar_j the column's mean concentration, and (abar_j - 1)/(n_kj + A_j - V_j)
    under MAP; the other columns are scored as usual."""
    X, Xnew, levels = categorical_data()
    alpha = [np.array([1.0, 1.5, 2.5]), np.array([1.0, 3.0, 1.2, 1.0]), np.array([4.0, 1.6])]
    clf = fit(bnb.Categorical(alpha=alpha), X, method=method, class_alpha=G_MAP)
    Xnew = Xnew.copy()
    Xnew[:, 0] = "never-seen"
    _, ref_rest = hand_categorical(X[:, 1:], Y, Xnew[:, 1:], levels[1:], alpha[1:])
    if method != "bayes":  # plug-in: the other columns by their plug-in tables
        tables = clf.conditional_tables()
        ref_rest = sum(np.log(tables[j].loc[:, list(Xnew[:, j])].to_numpy().T)
                       for j in (1, 2))
    n_k0 = np.array([len(g) for g in class_groups(X[:, 0], Y)], dtype=float)
    abar, A, V = alpha[0].mean(), alpha[0].sum(), len(alpha[0])
    p_unseen = (abar - 1) / (n_k0 + A - V) if method == "map" else abar / (n_k0 + A)
    joint = class_log_plugin(Y, G_MAP, "mean" if method == "bayes" else method) \
        + np.log(p_unseen)[None, :] + ref_rest
    with pytest.warns(UnseenCategoryWarning, match="never-seen"):  # Categorical(unseen="warn")
        got = clf.predict_joint_log_proba(Xnew)
    assert_allclose(got, joint, rtol=RTOL)


def test_categorical_value_never_seen_is_an_error_under_ml(x64):
    X, Xnew, _ = categorical_data()
    clf = fit(bnb.Categorical(), X, method="ml")
    Xnew = Xnew.copy()
    Xnew[0, 0] = "never-seen"
    with pytest.raises(ValueError, match="never-seen"):
        clf.predict_proba(Xnew)


@pytest.mark.parametrize("weight", [1e12, 1e15])
def test_gaussian_predictive_of_heavy_classes_against_mpmath(weight, x64):
    """Classes of weight 1e15: the Student-t's log Gamma((dof + 1)/2) - log Gamma(dof/2) at
    dof = 2e15, two values of 3e16, cancelled (p(class | x) 0.42 off, a positive log
    density), on the host and in the kernels alike. Against 50-digit mpmath."""
    import mpmath

    mpmath.mp.dps = 50
    X, y = np.array([[0.0], [1.0], [0.3], [1.4]]), np.array([0, 0, 1, 1])
    w = np.array([weight, weight, 0.3 * weight, 0.3 * weight])
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="bayes", class_prior=[0.5, 0.5]).fit(
        X, y, sample_weight=w)
    post = clf.posterior_[0]
    x = mpmath.mpf(0.5)
    joint = []
    for k in range(2):
        a, b, kappa, loc = (mpmath.mpf(float(np.asarray(v)[k, 0]))
                            for v in (post.shape, post.rate, post.kappa, post.loc))
        dof, scale2 = 2 * a, b * (kappa + 1) / (a * kappa)
        joint.append(float(mpmath.log(0.5) + mpmath.loggamma((dof + 1) / 2)
                           - mpmath.loggamma(dof / 2) - mpmath.log(dof * mpmath.pi * scale2) / 2
                           - (dof + 1) / 2 * mpmath.log1p((x - loc) ** 2 / (dof * scale2))))
    expected = np.exp(np.array(joint) - np.logaddexp(*joint))
    assert_allclose(clf.predict_joint_log_proba([[0.5]])[0], joint, rtol=1e-12)
    # 40,000 rows are scored by the kernels
    assert_allclose(clf.predict_proba(np.full((40_000, 1), 0.5))[0], expected, atol=1e-12)


@pytest.mark.parametrize("scale", [1e12, 1e15])
def test_multinomial_predictive_of_huge_counts_against_mpmath(scale, x64):
    """Training counts of 1e15 (a posterior concentration of 1e15) and a row of small counts,
    or the reverse: log-Gamma differences of the concentrations cost p(class | x) 0.5, and a
    log probability came out at +16. Against 50-digit mpmath, with and without a missing
    count, on the host and in the kernels."""
    import mpmath

    mpmath.mp.dps = 50
    X = np.round(scale * np.array([[1.0, 2.0, 3.0, 0.5], [1.1, 2.0, 2.9, 0.5]]))
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="bayes").fit(X, [0, 1])
    for row in ([3.0, 5.0, 9.0, 1.0], [3.0, 5.0, 9.0, np.nan], [1e5, 0.0, 2.0, 1.0]):
        seen = [j for j in range(4) if not np.isnan(row[j])]
        xs = [mpmath.mpf(row[j]) for j in seen]
        joint = []
        for k in range(2):
            a = [1 + mpmath.mpf(X[k, j]) for j in seen]
            joint.append(float(mpmath.log(0.5) + mpmath.loggamma(sum(a))
                               - mpmath.loggamma(sum(a) + sum(xs))
                               + sum(mpmath.loggamma(u + v) - mpmath.loggamma(u)
                                     for u, v in zip(a, xs, strict=True))
                               + mpmath.loggamma(sum(xs) + 1)
                               - sum(mpmath.loggamma(v + 1) for v in xs)))
        expected = np.exp(np.array(joint) - np.logaddexp(*joint))
        assert_allclose(clf.predict_joint_log_proba([row])[0], joint, rtol=1e-12, atol=1e-9)
        assert_allclose(clf.predict_proba(np.array([row] * 40_000))[0], expected, atol=1e-9)


@pytest.mark.parametrize("scale, bound", [(1e9, 2e-6), (1e12, 1e-3)])
def test_poisson_scores_of_huge_counts(scale, bound, x64):
    """The limit docs/user_guide/numerics.md states: Poisson's scores take a count times a
    log rate per class, so p(class | x) is about 1e-6 off at counts of 1e9 and up to 1e-3 at
    1e12 (against 50-digit mpmath), under 'mean' and 'bayes'."""
    import mpmath

    mpmath.mp.dps = 50
    sd = scale ** 0.5
    X = np.round(np.array([[scale], [scale + 1.65 * sd]]))
    x = np.round((scale + 1) / 1.1 + 0.3 * sd)
    for method in ("mean", "bayes"):
        clf = bnb.NaiveBayes(bnb.Poisson(), method=method).fit(X, [0, 1])
        joint = []
        for k in range(2):
            a, b, v = 1 + mpmath.mpf(X[k, 0]), mpmath.mpf(0.1) + 1, mpmath.mpf(x)
            if method == "bayes":
                joint.append(mpmath.loggamma(v + a) - mpmath.loggamma(a)
                             + a * mpmath.log(b / (b + 1)) - v * mpmath.log(b + 1))
            else:
                joint.append(v * mpmath.log(a / b) - a / b)
        expected = 1 / (1 + mpmath.exp(joint[1] - joint[0]))
        got = clf.predict_proba([[x]])[0, 0]
        assert abs(got - float(expected)) < bound


@pytest.mark.parametrize("scale, bound", [(1e9, 1e-6), (1e12, 1e-3)])
def test_multinomial_scores_of_huge_counts(scale, bound, x64):
    """The same limit for Multinomial rows (docs/user_guide/numerics.md): their scores take
    each count times a log probability per class (plug-in) or a log concentration ratio
    (exact), so for a row of 1e12 counts whose classes are an O(1) log-odds apart p(class | x)
    is up to 1e-3 off (measured 1.7e-4), and at 1e15 0.2 (against 50-digit mpmath)."""
    import mpmath

    mpmath.mp.dps = 50
    d = scale ** -0.5  # the classes' shares differ so that the log-odds stay near 1
    X = np.round(np.array([[0.5, 0.3, 0.2], [0.5 + d, 0.3 - d, 0.2]]) * scale)
    x = np.round(np.array([0.5 + 0.6 * d, 0.3 - 0.6 * d, 0.2]) * scale)
    xs = [mpmath.mpf(v) for v in x]
    for method in ("mean", "bayes"):
        clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method=method).fit(X, [0, 1])
        joint = []
        for k in range(2):
            a = [1 + mpmath.mpf(v) for v in X[k]]
            if method == "mean":
                joint.append(sum(v * mpmath.log(u / sum(a)) for u, v in zip(a, xs, strict=True)))
            else:
                joint.append(mpmath.loggamma(sum(a)) - mpmath.loggamma(sum(a) + sum(xs))
                             + sum(mpmath.loggamma(u + v) - mpmath.loggamma(u)
                                   for u, v in zip(a, xs, strict=True)))
        expected = 1 / (1 + mpmath.exp(joint[1] - joint[0]))
        assert 0.3 < expected < 0.5  # the classes are close: what the test is about
        got = clf.predict_proba([x])[0, 0]
        assert abs(got - float(expected)) < bound
