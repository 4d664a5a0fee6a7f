"""Small dense plug-in and exact calls scored by the forms' float64 host products
(``fast._host.scored_on_host``) instead of the streamed kernels: the same answers as
scikit-learn and SciPy, in either dtype mode, at either side of the size limit; errors that
name the row of the whole block; missing counts left to the kernels' masked forms."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import gammaln, logsumexp
from sklearn.naive_bayes import BernoulliNB, MultinomialNB

import bayesnb as bnb
from bayesnb.fast import _exact, _host, _kernels


def _counts(n=600, f=40, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    rates = rng.gamma(1.0, 2.0, (k, f))
    return rng.poisson(rates[y]).astype(np.float64), y


def use_kernels(monkeypatch) -> None:
    """Send every dense call to the streamed kernels, as calls past the size limit go."""
    monkeypatch.setattr(_host, "scored_on_host", lambda *args: False)
    monkeypatch.setattr(_host, "counted_on_host", lambda *args: False)


@pytest.fixture(params=["host", "kernels"])
def route(request, monkeypatch):
    """Every test by both routes: the host products, then the kernels."""
    if request.param == "kernels":
        use_kernels(monkeypatch)
    return request.param


def _spy(monkeypatch) -> list:
    """Records a call of the kernels' plug-in or exact streams."""
    calls = []
    for module, name in ((_kernels, "stream_scores"), (_exact, "stream")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name,
                            lambda *a, _real=real, **k: calls.append(1) or _real(*a, **k))
    return calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_multinomial_matches_multinomialnb(x64, route, dtype, monkeypatch):
    X, y = _counts()
    calls = _spy(monkeypatch)
    ours = bnb.NaiveBayes(bnb.Multinomial(alpha=0.5), method="mean", class_alpha=0).fit(X, y)
    ref = MultinomialNB(alpha=0.5).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X.astype(dtype)), ref.predict_proba(X),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), rtol=1e-12)
    assert bool(calls) == (route == "kernels")


def test_bernoulli_matches_bernoullinb(x64, route):
    rng = np.random.default_rng(1)
    X = (rng.random((500, 30)) < 0.3).astype(np.float64)
    y = rng.integers(0, 4, 500)
    ours = bnb.NaiveBayes(bnb.Bernoulli(alpha=1.0, beta=1.0), method="mean",
                          class_alpha=0).fit(X, y)
    ref = BernoulliNB(alpha=1.0, binarize=None).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=1e-12,
                               atol=1e-14)


def test_poisson_ml_joint_matches_scipy(x64, route):
    """The joint density, constants included, against SciPy's Poisson pmf with the classes'
    ML rates; a class that never saw a count in a column is impossible for a row with one."""
    X, y = _counts(n=90, f=6, k=3, seed=2)
    X[y == 0, 2] = 0.0  # class 0 never counts in column 2: its ML rate is 0
    model = bnb.NaiveBayes(bnb.Poisson(), method="ml", class_alpha=0).fit(X, y)
    rates = np.stack([X[y == c].mean(axis=0) for c in range(3)])
    prior = np.log(np.bincount(y) / len(y))
    expected = prior + np.stack([stats.poisson.logpmf(X, rates[c]).sum(axis=1)
                                 for c in range(3)], axis=1)
    joint = model.predict_joint_log_proba(X)
    np.testing.assert_allclose(joint, expected, rtol=1e-12)
    assert np.isneginf(joint[X[:, 2] > 0, 0]).all()


@pytest.mark.parametrize("family", ["multinomial", "poisson", "bernoulli"])
def test_a_small_joint_runs_on_numpy_against_scipy(monkeypatch, family):
    """``predict_joint_log_proba`` of a small count table adds the families' ``log_normalizer``
    on the host's float64 NumPy, in the default dtype policy: with ``jax.numpy`` unreachable
    from the family modules, SciPy's pmfs with the ML tables (as JAX operations, a first joint
    compiled each one: 0.1-0.4 s)."""
    import bayesnb.families as families

    X, y = _counts(n=60, f=5, k=3, seed=4)
    X = (X > 1).astype(float) if family == "bernoulli" else X
    clf = bnb.NaiveBayes(getattr(bnb, family.title())(), method="mean", class_alpha=0).fit(X, y)
    monkeypatch.setattr(getattr(families, family), "jnp", None)
    joint = clf.predict_joint_log_proba(X)
    prior = np.log(np.bincount(y) / len(y))
    # the posterior means under the default priors: Dirichlet(1), Gamma(1, 0.1), Beta(1, 1)
    sums, n = np.stack([X[y == c].sum(axis=0) for c in range(3)]), np.bincount(y)[:, None]
    if family == "multinomial":
        theta = (sums + 1.0) / (sums + 1.0).sum(axis=1, keepdims=True)
        pmf = [stats.multinomial.logpmf(X, X.sum(axis=1), theta[c]) for c in range(3)]
    elif family == "poisson":
        rate = (sums + 1.0) / (n + 0.1)
        pmf = [stats.poisson.logpmf(X, rate[c]).sum(axis=1) for c in range(3)]
    else:
        p1 = (sums + 1.0) / (n + 2.0)
        pmf = [stats.bernoulli.logpmf(X, p1[c]).sum(axis=1) for c in range(3)]
    np.testing.assert_allclose(joint, prior + np.stack(pmf, axis=1), rtol=1e-12)


def test_an_invalid_value_names_the_row_of_the_block(route):
    """A negative count past the first chunk: the error names its row in the whole input."""
    X, y = _counts(n=4000, f=200, k=2)  # 800,000 cells: chunks of 1,310 rows
    model = bnb.NaiveBayes(bnb.Multinomial()).fit(X, y)
    X[3001, 17] = -1.0
    with pytest.raises(ValueError, match=r"column 17.*row 3001|row 3001.*column 17"):
        model.predict_proba(X)


def test_bernoulli_ml_impossible_values_match_scipy(x64, route):
    """ML tables with p = 0 and p = 1 columns: a 1 (or a 0) there is impossible for the class,
    as SciPy's Bernoulli pmf says; fitted with integer weights, which equal duplicated rows."""
    rng = np.random.default_rng(4)
    X = (rng.random((60, 5)) < 0.5).astype(np.float64)
    y = np.arange(60) % 2
    X[y == 0, 1] = 0.0  # class 0: p = 0 in column 1
    X[y == 1, 3] = 1.0  # class 1: p = 1 in column 3
    w = rng.integers(1, 4, 60)
    model = bnb.NaiveBayes(bnb.Bernoulli(), method="ml", class_alpha=0).fit(X, y,
                                                                           sample_weight=w)
    Xd, yd = np.repeat(X, w, axis=0), np.repeat(y, w)
    p = np.stack([Xd[yd == c].mean(axis=0) for c in range(2)])
    prior = np.log(np.bincount(yd) / len(yd))
    Xt = (rng.random((40, 5)) < 0.5).astype(np.float64)
    with np.errstate(divide="ignore"):
        expected = prior + np.stack([stats.bernoulli.logpmf(Xt, p[c]).sum(axis=1)
                                     for c in range(2)], axis=1)
    defined = np.isfinite(expected).any(axis=1)
    np.testing.assert_allclose(model.predict_joint_log_proba(Xt[defined]), expected[defined],
                               rtol=1e-12)


def test_missing_bernoulli_values_are_counted_by_the_kernels(x64):
    """A NaN in a small dense Bernoulli fit: the host's sums give up on it (their NaN) and
    the kernels count the observed values only, per column."""
    rng = np.random.default_rng(5)
    X = (rng.random((50, 3)) < 0.5).astype(np.float64)
    y = np.arange(50) % 2
    X[7, 2] = np.nan
    model = bnb.NaiveBayes(bnb.Bernoulli(alpha=1.0, beta=1.0), method="mean",
                           class_alpha=0).fit(X, y)
    p = np.stack([(np.nansum(X[y == c], axis=0) + 1.0)
                  / ((~np.isnan(X[y == c])).sum(axis=0) + 2.0) for c in range(2)])
    x = np.array([[1.0, 0.0, 1.0]])
    log_p = np.log([0.5, 0.5]) + np.log(np.where(x == 1, p, 1 - p)).sum(axis=1)
    np.testing.assert_allclose(model.predict_proba(x)[0], np.exp(log_p - np.logaddexp.reduce(
        log_p)), rtol=1e-12)


def test_float32_mode_is_within_the_guarantee(route):
    """Default float32 mode: the host's products answer in float64 (scikit-learn's float64
    probabilities to 1e-12), the kernels within the float32 guarantee (1e-4)."""
    X, y = _counts(n=400, f=60, k=4, seed=6)
    ours = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0).fit(X, y)
    expected = MultinomialNB(alpha=1.0).fit(X, y).predict_proba(X)
    got = ours.predict_proba(X.astype(np.float32))
    np.testing.assert_allclose(got, expected, rtol=0,
                               atol=1e-12 if route == "host" else 1e-4)


# ------------------------------------------------------------------ the exact predictive
def _exact_data(seed, n):
    """Counts with what the host's exact form reads apart: counts past its cumulative table
    (64 here), fractions below and above 1, an empty row."""
    X, y = _counts(n=n, f=6, k=3, seed=seed)
    X[3, 0], X[5, 4], X[8, 2] = 311.0, 1000.0, 70.0
    X[::7, 1] += 0.37
    X[10, 5] = 0.25
    X[2] = 0.0
    return X, y


def dirichlet_multinomial_scores(X, y, Xn, alpha):
    """log p(c) + log p(x | c, data) of the Dirichlet-multinomial by the Gamma function, the
    class-free coefficient included (SciPy's ``dirichlet_multinomial`` agrees on integer rows)."""
    a = np.stack([alpha + X[y == c].sum(axis=0) for c in range(3)])
    n = Xn.sum(axis=1, keepdims=True)
    out = (np.log(np.bincount(y) / len(y)) + gammaln(n + 1) - gammaln(Xn + 1).sum(axis=1,
           keepdims=True) + gammaln(a.sum(axis=1)) - gammaln(a.sum(axis=1) + n)
           + (gammaln(a[None] + Xn[:, None]) - gammaln(a)[None]).sum(axis=-1))
    whole = np.flatnonzero((Xn == np.round(Xn)).all(axis=1) & (n[:, 0] > 0))
    for i in whole[:5]:
        np.testing.assert_allclose(
            out[i] - np.log(np.bincount(y) / len(y)),
            [stats.dirichlet_multinomial.logpmf(Xn[i], a[c], int(n[i, 0])) for c in range(3)],
            rtol=1e-9)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exact_multinomial_matches_the_dirichlet_multinomial(x64, route, dtype, monkeypatch):
    """``method="bayes"``: the Dirichlet-multinomial predictive, large and fractional counts
    included, by either route (the host's reads counts past its table by the series)."""
    X, y = _exact_data(7, 90)
    Xn = _exact_data(8, 30)[0].astype(dtype)
    alpha = np.array([0.5, 1.0, 2.0, 0.3, 4.0, 1.5])
    calls = _spy(monkeypatch)
    model = bnb.NaiveBayes(bnb.Multinomial(alpha=alpha), method="bayes", class_alpha=0).fit(X, y)
    joint = dirichlet_multinomial_scores(X, y, Xn.astype(np.float64), alpha)
    np.testing.assert_allclose(model.predict_joint_log_proba(Xn), joint, rtol=1e-11)
    np.testing.assert_allclose(model.predict_proba(Xn),
                               np.exp(joint - logsumexp(joint, axis=1, keepdims=True)),
                               rtol=1e-10, atol=1e-14)
    assert bool(calls) == (route == "kernels")


def test_exact_poisson_matches_the_negative_binomial(x64, route, monkeypatch):
    """``method="bayes"`` for Poisson counts: SciPy's negative binomial with the posterior's
    shape and rate, large counts included."""
    X, y = _exact_data(9, 90)
    X, Xn = np.floor(X), np.floor(_exact_data(10, 30)[0])  # the negative binomial's integers
    shape = np.array([2.0, 0.5, 1.0, 3.0, 0.7, 1.0])
    calls = _spy(monkeypatch)
    model = bnb.NaiveBayes(bnb.Poisson(shape=shape, rate=0.2), method="bayes",
                           class_alpha=0).fit(X, y)
    joint = np.log(np.bincount(y) / len(y)) + np.stack([
        stats.nbinom.logpmf(Xn, shape + X[y == c].sum(axis=0),
                            (0.2 + (y == c).sum()) / (1.2 + (y == c).sum())).sum(axis=1)
        for c in range(3)], axis=1)
    np.testing.assert_allclose(model.predict_joint_log_proba(Xn), joint, rtol=1e-11)
    np.testing.assert_allclose(model.predict_proba(Xn),
                               np.exp(joint - logsumexp(joint, axis=1, keepdims=True)),
                               rtol=1e-10, atol=1e-14)
    assert bool(calls) == (route == "kernels")


@pytest.mark.parametrize("maths_route", ["family maths", "kernels"])
@pytest.mark.parametrize("method", ["mean", "bayes"])
def test_missing_counts_take_the_family_maths_or_the_masked_forms(x64, monkeypatch, method,
                                                                  maths_route):
    """A NaN count is missing: the host products do not take it, so a small call is scored
    by the family's own maths on the host and a call past ``_host.HOST_MATHS_ENTRIES`` (here
    forced) by the kernels' masked forms. Both checked against the formulas of the observed
    columns: the plug-in renormalises the class's word probabilities over them, the exact
    predictive is their Dirichlet-multinomial."""
    X, y = _counts(n=90, f=6, k=3, seed=11)
    model = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method=method, class_alpha=0).fit(X, y)
    calls = _spy(monkeypatch)
    if maths_route == "kernels":
        monkeypatch.setattr(_host, "HOST_MATHS_ENTRIES", -1)
    Xm = X[:4].copy()
    Xm[1, 2] = np.nan
    proba = model.predict_proba(Xm)
    assert bool(calls) == (maths_route == "kernels")
    observed = ~np.isnan(Xm[1])
    x = Xm[1:2, observed]
    if method == "bayes":
        log_p = dirichlet_multinomial_scores(X[:, observed], y, x, np.ones(5))[0]
    else:
        counts = np.stack([X[y == c].sum(axis=0) for c in range(3)]) + 1.0
        theta = counts / counts.sum(axis=1, keepdims=True)
        mass = theta[:, observed].sum(axis=1)
        log_p = (np.log(np.bincount(y) / len(y))
                 + x[0] @ np.log(theta[:, observed] / mass[:, None]).T)
    np.testing.assert_allclose(proba[1], np.exp(log_p - logsumexp(log_p)), rtol=1e-10)


@settings(max_examples=15, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), family=st.sampled_from(["multinomial", "poisson"]),
       fractions=st.booleans())
def test_exact_routes_agree(x64, seed, family, fractions):
    """The host's exact form and the kernels' (indicator steps plus host tails, each checked
    against SciPy in ``test_exact_fast_paths``) give the same probabilities on random counts:
    small and large (past the host's cumulative table), fractional where the family allows."""
    rng = np.random.default_rng(seed)
    y = np.arange(40) % 3
    X = rng.poisson(rng.gamma(1.0, 3.0, (3, 5))[y]).astype(np.float64)
    X[rng.random(X.shape) < 0.05] = rng.integers(60, 400)
    if fractions and family == "multinomial":
        X[rng.random(X.shape) < 0.2] += rng.random()
    made = (bnb.Multinomial(alpha=rng.uniform(0.1, 3.0, 5)) if family == "multinomial"
            else bnb.Poisson(shape=rng.uniform(0.2, 3.0, 5), rate=rng.uniform(0.05, 2.0)))
    model = bnb.NaiveBayes(made, method="bayes", class_alpha=0).fit(X, y)
    host = model.predict_proba(X)
    with mock.patch.object(_host, "scored_on_host", lambda *args: False):
        kernels = model.predict_proba(X)
    np.testing.assert_allclose(host, kernels, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e4], ids=["small", "unit", "large"])
def test_exact_float32_mode_matches_float64_references(route, scale):
    """Default float32 mode, ``method="bayes"``: Multinomial counts scaled by 1e-3 (fractional
    term weights), 1 and 1e4 (counts past the cumulative table, row totals in the tens of
    thousands), against the Dirichlet-multinomial computed in float64 by the Gamma function:
    the host's products answer in float64 (1e-10), the kernels within the float32 guarantee
    (1e-4) or refuse."""
    X, y = _counts(n=120, f=6, k=3, seed=12)
    X = (X * scale).astype(np.float32).astype(np.float64)  # values float32 holds exactly
    Xn = X[:40]
    alpha = np.array([0.5, 1.0, 2.0, 0.3, 4.0, 1.5])
    model = bnb.NaiveBayes(bnb.Multinomial(alpha=alpha), method="bayes", class_alpha=0).fit(X, y)
    joint = dirichlet_multinomial_scores(X, y, Xn, alpha)
    expected = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
    try:
        got = model.predict_proba(Xn.astype(np.float32))
    except ValueError as err:  # the kernels may refuse what float32 cannot hold
        assert route == "kernels" and "x64" in str(err)
        return
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10 if route == "host" else 1e-4)
