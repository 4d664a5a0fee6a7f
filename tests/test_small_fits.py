"""Small dense fits of the count families compile nothing (``fast._host.SMALL_FIT_CELLS``).

A dense fit of at most ``SMALL_FIT_CELLS`` cells of Multinomial, Poisson or Bernoulli columns
is counted by the forms' float64 host products in either dtype, so a table with a column count
no kernel was compiled for answers without compiling (a statistics kernel for a new shape
compiled in 0.55-0.75 s). Checked here: nothing is traced, the statistics equal
scikit-learn's and the log evidence a float64 computation written from the conjugate formulas
(SciPy's ``gammaln``), integer weights equal duplicated rows, that fractional weights still
reach the kernels, and that missing counts are counted, scored and explained by the families'
own maths on the host (past ``HOST_MATHS_ENTRIES`` by the kernels' masked forms).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln, logsumexp
from sklearn.naive_bayes import BernoulliNB, MultinomialNB

import bayesnb as bnb
from bayesnb.fast import _host, _kernels

FAMILIES = {"multinomial": bnb.Multinomial, "poisson": bnb.Poisson, "bernoulli": bnb.Bernoulli}


def _data(name: str, rows: int = 120, cols: int = 13, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, rows)
    x = rng.poisson(1.5, size=(rows, cols)).astype(np.float32)
    return ((x > 1).astype(np.float32) if name == "bernoulli" else x), y


def _kernel_passes(monkeypatch) -> list:
    """Records each statistics pass the kernels stream (``_kernels.stream_suff_stats``)."""
    passes = []
    stream = _kernels.stream_suff_stats

    def counted(*args):
        passes.append(1)
        return stream(*args)

    monkeypatch.setattr(_kernels, "stream_suff_stats", counted)
    return passes


def _multinomial_log_evidence(x, y, alpha: float = 1.0) -> float:
    """log p(X | y) of Dirichlet(alpha)-multinomial columns, float64, from the formulas:
    sum_i log(n_i! / prod_v x_iv!) + sum_k [log B(alpha + s_k) - log B(alpha)]."""
    x = np.asarray(x, dtype=np.float64)
    out = np.sum(gammaln(x.sum(axis=1) + 1.0)) - np.sum(gammaln(x + 1.0))
    for k in np.unique(y):
        s = x[y == k].sum(axis=0) + alpha
        out += (np.sum(gammaln(s)) - gammaln(s.sum())
                - (x.shape[1] * gammaln(alpha) - gammaln(x.shape[1] * alpha)))
    return float(out)


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_small_fit_and_predict_compile_nothing(name, dtype, request):
    if dtype == "float64":
        request.getfixturevalue("x64")
    x, y = _data(name, cols=17 if dtype == "float32" else 19)  # widths no other test uses
    assert x.size <= _host.SMALL_FIT_CELLS
    before = dict(_kernels.TRACES)
    clf = bnb.NaiveBayes(FAMILIES[name]()).fit(x, y)
    clf.predict_proba(x)
    assert _kernels.TRACES == before


def test_multinomial_small_fit_against_sklearn_and_formulas(x64):
    x, y = _data("multinomial")
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0).fit(x, y)
    ref = MultinomialNB(alpha=1.0).fit(x, y)
    np.testing.assert_array_equal(clf.feature_count_, ref.feature_count_)
    np.testing.assert_allclose(clf.predict_proba(x), ref.predict_proba(x), rtol=1e-12, atol=0)
    feature_part = clf.set_params(class_alpha=1.0).log_evidence(per_block=True).iloc[1]
    np.testing.assert_allclose(feature_part, _multinomial_log_evidence(x, y), rtol=1e-13)


def test_float32_small_fit_matches_float64_evidence(x64):
    """The host counts in float64 whatever the dtype policy: the float32 fit's evidence is the
    float64 one (the float32 kernels' coefficient rounds each row's log factorials)."""
    import jax

    x, y = _data("multinomial")
    with jax.enable_x64(False):
        low = bnb.NaiveBayes(bnb.Multinomial()).fit(x, y).log_evidence()
    high = bnb.NaiveBayes(bnb.Multinomial()).fit(x.astype(np.float64), y).log_evidence()
    np.testing.assert_allclose(low, high, rtol=1e-12)


def test_bernoulli_small_fit_against_sklearn():
    x, y = _data("bernoulli")
    clf = bnb.NaiveBayes(bnb.Bernoulli(alpha=1.0), method="mean", class_alpha=0).fit(x, y)
    ref = BernoulliNB(alpha=1.0, binarize=None).fit(x, y)
    np.testing.assert_array_equal(clf.feature_count_, ref.feature_count_)
    np.testing.assert_allclose(clf.predict_proba(x), ref.predict_proba(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", FAMILIES)
def test_integer_weights_are_duplicated_rows(name):
    x, y = _data(name, rows=40)
    w = np.random.default_rng(1).integers(0, 4, len(y))
    weighted = bnb.NaiveBayes(FAMILIES[name]()).fit(x, y, sample_weight=w)
    copies = bnb.NaiveBayes(FAMILIES[name]()).fit(np.repeat(x, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.predict_proba(x), copies.predict_proba(x),
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(weighted.log_evidence(), copies.log_evidence(), rtol=1e-12)


def test_fractional_weights_reach_the_kernels(monkeypatch):
    """The host takes integer weights only: fractional weights (whose BLAS order would round
    a class total away from its weight) are counted by the kernels, as before."""
    x, y = _data("multinomial", cols=23)
    w = np.linspace(0.5, 2.0, len(y))
    passes = _kernel_passes(monkeypatch)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0)
    clf.fit(x, y, sample_weight=w)
    assert len(passes) == 1
    np.testing.assert_allclose(clf.feature_count_,
                               MultinomialNB(alpha=1.0).fit(x, y, sample_weight=w).feature_count_,
                               rtol=1e-6)


@pytest.mark.parametrize("name", ["multinomial", "poisson", "bernoulli"])
def test_missing_counts_are_counted_by_the_family_maths_or_the_kernels(name, monkeypatch):
    """A missing count (NaN) adds nothing to its column's sums. A small fit counts it by the
    family's own ``suff_stats`` on the host (the products do not take NaN), compiling nothing;
    past ``_host.HOST_MATHS_ENTRIES`` (here forced) the kernels' masked forms count it. Both
    checked against NumPy's ``nansum`` and the observed-value counts."""
    x, y = _data(name, cols=23)
    missing = x.astype(np.float64)
    missing[3, 4] = missing[7, 0] = np.nan
    observed = [(~np.isnan(missing[y == k])).sum(axis=0) for k in range(3)]
    totals = [np.nansum(missing[y == k], axis=0) for k in range(3)]
    passes = _kernel_passes(monkeypatch)
    for bound, kernel_passes in ((_host.HOST_MATHS_ENTRIES, 0), (-1, 1)):
        monkeypatch.setattr(_host, "HOST_MATHS_ENTRIES", bound)
        stats = bnb.NaiveBayes(FAMILIES[name]()).fit(missing, y).fitted_.blocks[0].stats
        assert len(passes) == kernel_passes
        if name == "multinomial":
            np.testing.assert_allclose(stats.counts, totals, rtol=1e-6)
        elif name == "poisson":
            np.testing.assert_allclose(stats.total, totals, rtol=1e-6)
            np.testing.assert_allclose(stats.count, observed, rtol=1e-6)
        else:
            np.testing.assert_allclose(stats.ones, totals, rtol=1e-6)
            np.testing.assert_allclose(stats.count, observed, rtol=1e-6)
        passes.clear()


@pytest.mark.parametrize("name", FAMILIES)
def test_small_fit_refuses_bad_values_naming_the_cell(name):
    x, y = _data(name)
    x[5, 3] = -1.0
    with pytest.raises(ValueError, match=r"column 3: .*\(row 5\)"):
        bnb.NaiveBayes(FAMILIES[name]()).fit(x, y)


def test_past_the_threshold_the_kernels_count(monkeypatch):
    x, y = _data("poisson", cols=29)
    passes = _kernel_passes(monkeypatch)
    monkeypatch.setattr(_host, "SMALL_FIT_CELLS", x.size)
    bnb.NaiveBayes(bnb.Poisson()).fit(x, y)
    assert passes == []  # at the threshold: the host
    monkeypatch.setattr(_host, "SMALL_FIT_CELLS", x.size - 1)
    clf = bnb.NaiveBayes(bnb.Poisson()).fit(x, y)
    assert len(passes) == 1
    sums = np.stack([x[y == k].sum(axis=0) for k in range(3)]).astype(np.float64)
    np.testing.assert_allclose(clf.fitted_.blocks[0].stats.total, sums, rtol=0)


def test_the_numerics_page_quotes_the_threshold():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs/user_guide/numerics.md").read_text()
    assert _host.SMALL_FIT_CELLS == 16_384
    assert page.count("16,384 cells") == 2


@pytest.mark.parametrize("case", ["multinomial 1e7 per row", "poisson mean 1e6"])
def test_float32_small_fit_of_large_counts_against_scipy(case):
    """Default float32, counts in the millions (the float32 kernels' hardest case for the
    evidence, ``tests/test_evidence.py``): a fit this small is counted on the host in
    float64, its evidence SciPy's to float64's rounding of the terms that cancel (their
    sum about 2.6e10; the float32 kernels' bound is 1e-9 of the result plus 5e-3)."""
    from test_evidence import _count_evidence_reference

    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 100)
    if case == "multinomial 1e7 per row":
        X, family = rng.multinomial(10**7, rng.dirichlet(np.ones(10)), 200), "multinomial"
    else:
        X, family = rng.poisson(1e6, (200, 10)), "poisson"
    assert X.size <= _host.SMALL_FIT_CELLS
    block = bnb.Multinomial() if family == "multinomial" else bnb.Poisson()
    got = bnb.NaiveBayes(block).fit(X.astype(np.float32), y).log_evidence(per_block=True).iloc[1]
    ref = _count_evidence_reference(family, X.astype(np.float32), y)
    scale = np.sum(gammaln(X + 1.0))  # the terms that cancel: about 2.6e10 here
    assert abs(got - ref) <= 1e-14 * scale, (got, ref)


@pytest.mark.parametrize("scale", [1e-3, 1e5])
def test_float32_small_fit_of_fractional_counts_against_float64_numpy(scale):
    """Default float32, term weights (fractional counts) far below and far above 1: the host
    counts the float32 values in float64, so the class totals are NumPy's float64 sums of
    them and the block evidence is the conjugate formula (SciPy's ``gammaln``) on them."""
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, 150)
    x = (scale * rng.gamma(0.7, 2.0, (150, 20))).astype(np.float32)
    assert x.size <= _host.SMALL_FIT_CELLS
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=1.0).fit(x, y)
    wide = x.astype(np.float64)
    totals = np.stack([wide[y == k].sum(axis=0) for k in range(3)])
    np.testing.assert_allclose(clf.feature_count_, totals, rtol=1e-13)
    scale_of_terms = np.sum(np.abs(gammaln(wide + 1.0))) + np.sum(gammaln(wide.sum(axis=1) + 1))
    got = clf.log_evidence(per_block=True).iloc[1]
    ref = _multinomial_log_evidence(wide, y)
    assert abs(got - ref) <= 1e-13 * (abs(ref) + scale_of_terms), (got, ref)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["bernoulli", "poisson"])
@pytest.mark.parametrize("method", ["mean", "bayes"])
def test_small_tables_with_missing_values_compile_nothing(name, method, dtype, request):
    """A small table with missing values is fitted, scored and explained by the family's own
    maths on the host (the products take complete blocks only), compiling nothing, in float64
    whatever the dtype policy. Against SciPy's pmfs of the observed values: Bernoulli with the
    posterior-mean theta (its posterior predictive too), Poisson with the posterior-mean rate,
    or its negative binomial posterior predictive; a missing value adds nothing (``explain``:
    a factor of 1)."""
    if dtype == "float64":
        request.getfixturevalue("x64")
    x, y = _data(name, cols=19)
    x = x.astype(np.float64)
    x[np.random.default_rng(1).random(x.shape) < 0.1] = np.nan
    row = int(np.argmax(np.isnan(x).any(axis=1)))
    before = dict(_kernels.TRACES)
    clf = bnb.NaiveBayes(FAMILIES[name](), method=method, class_alpha=0).fit(x, y)
    proba, factors = clf.predict_proba(x[:30]), clf.explain(x[row], log=True)
    assert _kernels.TRACES == before
    observed = ~np.isnan(x)
    count = np.stack([observed[y == k].sum(axis=0) for k in range(3)])
    total = np.stack([np.nansum(x[y == k], axis=0) for k in range(3)])
    if name == "bernoulli":  # Beta(1, 1): the predictive is the plug-in of the mean
        dist = stats.bernoulli((total + 1.0) / (count + 2.0))
    elif method == "mean":  # Gamma(1, 0.1)
        dist = stats.poisson((1.0 + total) / (0.1 + count))
    else:
        dist = stats.nbinom(1.0 + total, (0.1 + count) / (1.1 + count))
    per_column = np.where(observed[:, None, :], dist.logpmf(np.nan_to_num(x)[:, None, :]), 0.0)
    joint = np.log(np.bincount(y) / len(y)) + per_column.sum(axis=2)
    expected = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))[:30]
    np.testing.assert_allclose(proba, expected, rtol=1e-10, atol=1e-14)
    columns = factors.drop(index=["prior", "joint", "posterior"])
    np.testing.assert_allclose(columns.to_numpy(), per_column[row].T, rtol=1e-10, atol=1e-14)
