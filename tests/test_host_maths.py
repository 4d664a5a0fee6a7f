"""Small Gaussian tables are fitted and scored by the family's own maths on the host
(``fast._host.HOST_MATHS_ENTRIES``, the form's ``host_maths``): nothing compiles.

A dense call of at most ``HOST_MATHS_ENTRIES`` rows x columns x classes of Gaussian columns
runs ``Gaussian.suff_stats``, ``log_likelihood`` and ``log_predictive`` on float64 NumPy in
either dtype, so a table with a column count no kernel was compiled for answers without
compiling (a new shape's kernels compiled in 0.6-0.7 s). Checked here against independent
references: scikit-learn's ``GaussianNB``, NumPy's ``nanmean``/``nanvar``, SciPy's normal and
Student-t densities written from the Normal-Gamma formulas; that integer weights equal
duplicated rows and partial fits one fit; that bad values are refused naming the cell; and that
past the threshold the kernels fit and score.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp
from sklearn.naive_bayes import GaussianNB

import bayesnb as bnb
from bayesnb.fast import _host, _kernels


def _data(rows: int = 120, cols: int = 7, seed: int = 0, offset: float = 0.0,
          scale: float = 1.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, rows)
    spread = 1.0 + 0.3 * y[:, None]
    x = offset + scale * rng.normal(y[:, None] * np.linspace(-1.0, 1.0, cols), spread)
    return x, y


def _kernel_calls(monkeypatch) -> list:
    """Records each pass the kernels stream: ``"fit"`` (``stream_suff_stats``) and
    ``"score"`` (``stream_scores``)."""
    calls = []
    for name, label in (("stream_suff_stats", "fit"), ("stream_scores", "score")):
        original = getattr(_kernels, name)

        def spy(*args, _original=original, _label=label, **kwargs):
            calls.append(_label)
            return _original(*args, **kwargs)

        monkeypatch.setattr(_kernels, name, spy)
    return calls


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_small_gaussian_fit_and_predict_compile_nothing(dtype, request):
    if dtype == "float64":
        request.getfixturevalue("x64")
    x, y = _data(cols=31 if dtype == "float32" else 37)  # widths no other test uses
    assert x.size * 3 <= _host.HOST_MATHS_ENTRIES
    before = dict(_kernels.TRACES)
    bnb.NaiveBayes(bnb.Gaussian(), method="ml").fit(x, y).predict_proba(x)
    bnb.NaiveBayes(bnb.Gaussian(), method="bayes").fit(x, y).predict_proba(x)
    assert _kernels.TRACES == before


def test_default_float32_against_sklearn(monkeypatch):
    """Under the default float32 policy the host computes in float64: scikit-learn's float64
    ``GaussianNB(var_smoothing=0)`` to float64 rounding, at a large offset and a small scale
    (which the float32 kernels, whose Gaussian statistics are float64's, score or refuse)."""
    calls = _kernel_calls(monkeypatch)
    for offset, scale in [(0.0, 1.0), (1e6, 1e-3), (-3e4, 1e4)]:
        x, y = _data(offset=offset, scale=scale)
        clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0).fit(x, y)
        ref = GaussianNB(var_smoothing=0.0).fit(x, y)
        np.testing.assert_allclose(clf.theta_, ref.theta_, rtol=1e-13)
        np.testing.assert_allclose(clf.var_, ref.var_, rtol=1e-9)
        np.testing.assert_allclose(clf.predict_log_proba(x), ref.predict_log_proba(x),
                                   rtol=1e-9, atol=1e-9)
    assert calls == []


def _student_t_log_proba(x, y, prior=(0.0, 1e-3, 1.0, 0.01), class_alpha=1.0):
    """log p(c | x) under the exact posterior predictive, float64, from the Normal-Gamma
    formulas (Murphy 2007, section 3) with SciPy's Student-t; NaN columns are left out."""
    m0, k0, a0, b0 = prior
    classes = np.unique(y)
    joint = np.zeros((x.shape[0], len(classes)))
    for k in classes:
        xk = x[y == k]
        n = np.sum(~np.isnan(xk), axis=0)
        mean = np.nanmean(xk, axis=0)
        m2 = np.nansum((xk - mean) ** 2, axis=0)
        kn, an = k0 + n, a0 + n / 2
        mn = (k0 * m0 + n * mean) / kn
        bn = b0 + m2 / 2 + k0 * n * (mean - m0) ** 2 / (2 * kn)
        t = stats.t(df=2 * an, loc=mn, scale=np.sqrt(bn * (kn + 1) / (an * kn)))
        joint[:, k] = np.nansum(t.logpdf(x), axis=1) + np.log(
            (np.sum(y == k) + class_alpha) / (len(y) + len(classes) * class_alpha))
    return joint - logsumexp(joint, axis=1, keepdims=True)


def test_bayes_predictive_against_scipy_student_t(monkeypatch):
    calls = _kernel_calls(monkeypatch)
    x, y = _data(rows=60, cols=5, offset=50.0, scale=3.0)
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="bayes").fit(x, y)
    np.testing.assert_allclose(clf.predict_log_proba(x), _student_t_log_proba(x, y),
                               rtol=1e-9, atol=1e-9)
    assert calls == []


def test_missing_values_against_numpy_and_scipy(monkeypatch):
    """NaN is a missing value: the class moments are NumPy's ``nanmean``/``nanvar`` and a
    row's scores sum the normal log densities of its observed columns only."""
    calls = _kernel_calls(monkeypatch)
    x, y = _data(rows=90, cols=6, seed=2)
    rng = np.random.default_rng(3)
    x[rng.random(x.shape) < 0.15] = np.nan
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0).fit(x, y)
    mean = np.stack([np.nanmean(x[y == k], axis=0) for k in range(3)])
    var = np.stack([np.nanvar(x[y == k], axis=0) for k in range(3)])
    np.testing.assert_allclose(clf.theta_, mean, rtol=1e-13)
    np.testing.assert_allclose(clf.var_, var, rtol=1e-12)
    joint = np.stack([np.nansum(stats.norm(mean[k], np.sqrt(var[k])).logpdf(x), axis=1)
                      + np.log(np.mean(y == k)) for k in range(3)], axis=1)
    np.testing.assert_allclose(clf.predict_log_proba(x),
                               joint - logsumexp(joint, axis=1, keepdims=True),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(
        clf.set_params(method="bayes", class_alpha=1.0).predict_log_proba(x),
        _student_t_log_proba(x, y), rtol=1e-9, atol=1e-9)
    assert calls == []


def test_mixed_gaussian_and_count_columns_against_references(monkeypatch):
    """A small table of Gaussian and Multinomial columns, both blocks on the host (the counts
    by their products): the ML joint scores are scikit-learn's ``GaussianNB`` plus the counts'
    hand-computed ML multinomial log likelihood."""
    calls = _kernel_calls(monkeypatch)
    x, y = _data(rows=100, cols=3, seed=4)
    counts = np.random.default_rng(5).poisson(1.0 + y[:, None], (100, 4)).astype(np.float64)
    clf = bnb.NaiveBayes(features={(0, 1, 2): bnb.Gaussian(), (3, 4, 5, 6): bnb.Multinomial()},
                         method="ml", class_alpha=0).fit(np.hstack([x, counts]), y)
    totals = np.stack([counts[y == k].sum(axis=0) for k in range(3)])
    log_theta = np.log(totals / totals.sum(axis=1, keepdims=True))
    joint = (GaussianNB(var_smoothing=0.0).fit(x, y).predict_joint_log_proba(x)
             + counts @ log_theta.T)
    np.testing.assert_allclose(clf.predict_log_proba(np.hstack([x, counts])),
                               joint - logsumexp(joint, axis=1, keepdims=True),
                               rtol=1e-9, atol=1e-9)
    assert calls == []


def test_evidence_and_joint_of_a_small_table_use_no_jax(monkeypatch):
    """``log_evidence`` and ``predict_joint_log_proba`` of a small table run the family's
    maths on NumPy too (no JAX operation to compile): the evidence is the chain of the
    sequential Student-t predictives (SciPy), the joint scikit-learn's."""
    from bayesnb.families import gaussian

    x, y = _data(rows=40, cols=3, seed=9)
    ml = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0).fit(x, y)
    clf = bnb.NaiveBayes(bnb.Gaussian()).fit(x, y)
    monkeypatch.setattr(gaussian, "jnp", None)  # the family's maths may not reach for JAX
    np.testing.assert_allclose(
        ml.predict_joint_log_proba(x),
        GaussianNB(var_smoothing=0.0).fit(x, y).predict_joint_log_proba(x), rtol=1e-12)
    m0, k0, a0, b0 = 0.0, 1e-3, 1.0, 0.01
    chain = 0.0
    for k in range(3):
        for column in x[y == k].T:
            for i, value in enumerate(column):
                seen = column[:i]
                n, mean = len(seen), seen.mean() if i else 0.0
                kn, an = k0 + n, a0 + n / 2
                mn = (k0 * m0 + n * mean) / kn
                bn = b0 + ((seen - mean) ** 2).sum() / 2 + k0 * n * (mean - m0) ** 2 / (2 * kn)
                chain += stats.t(2 * an, mn, np.sqrt(bn * (kn + 1) / (an * kn))).logpdf(value)
    np.testing.assert_allclose(clf.log_evidence(per_block=True).iloc[1], chain, rtol=1e-12)


def test_explain_of_a_small_table_against_scipy(monkeypatch):
    """``explain`` scores the row and its masked copies (an object array, None for a missing
    value) on the host too: each column's factor is SciPy's normal density."""
    calls = _kernel_calls(monkeypatch)
    x, y = _data(rows=60, cols=4, seed=12)
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0).fit(x, y)
    factors = clf.explain(x[:1])
    for j in range(4):
        np.testing.assert_allclose(factors.loc[j].to_numpy(dtype=float),
                                   stats.norm(clf.theta_[:, j], np.sqrt(clf.var_[:, j]))
                                   .pdf(x[0, j]), rtol=1e-12)
    assert calls == []


def test_integer_weights_are_duplicated_rows_and_partial_fits_one_fit():
    x, y = _data(rows=50, cols=4, seed=6)
    w = np.random.default_rng(7).integers(1, 4, len(y))
    weighted = bnb.NaiveBayes(bnb.Gaussian()).fit(x, y, sample_weight=w)
    copies = bnb.NaiveBayes(bnb.Gaussian()).fit(np.repeat(x, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.predict_proba(x), copies.predict_proba(x),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(weighted.log_evidence(), copies.log_evidence(), rtol=1e-12)
    parts = bnb.NaiveBayes(bnb.Gaussian())
    parts.partial_fit(x[:20], y[:20], classes=[0, 1, 2])
    parts.partial_fit(x[20:], y[20:])
    whole = bnb.NaiveBayes(bnb.Gaussian()).fit(x, y)
    np.testing.assert_allclose(parts.var_, whole.var_, rtol=1e-12)
    np.testing.assert_allclose(parts.log_evidence(), whole.log_evidence(), rtol=1e-12)


def test_small_table_refuses_bad_values_naming_the_column():
    x, y = _data()
    x[5, 3] = np.inf
    message = r"column 3: infinite value \(inf\) is not allowed; use NaN for a missing value"
    with pytest.raises(ValueError, match=message):
        bnb.NaiveBayes(bnb.Gaussian()).fit(x, y)
    clf = bnb.NaiveBayes(bnb.Gaussian()).fit(*_data())
    with pytest.raises(ValueError, match=message):
        clf.predict_proba(x)


def test_past_the_threshold_the_kernels_fit_and_score(monkeypatch):
    x, y = _data(rows=40, cols=41)
    entries = x.size * 3
    calls = _kernel_calls(monkeypatch)
    monkeypatch.setattr(_host, "HOST_MATHS_ENTRIES", entries)
    at = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0).fit(x, y)
    at.predict_proba(x)
    assert calls == []  # at the threshold: the host
    monkeypatch.setattr(_host, "HOST_MATHS_ENTRIES", entries - 1)
    past = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0).fit(x, y)
    proba = past.predict_proba(x)
    assert calls == ["fit", "score"]
    ref = GaussianNB(var_smoothing=0.0).fit(x, y)
    np.testing.assert_allclose(past.var_, ref.var_, rtol=1e-5)
    np.testing.assert_allclose(proba, ref.predict_proba(x), atol=1e-4)


def test_each_threshold_bounds_its_own_kind_of_block(monkeypatch):
    """``HOST_MATHS_ENTRIES`` bounds the Gaussian blocks and ``SMALL_FIT_CELLS`` the count
    blocks: turning one kind off (-1) leaves a table of the other kind on the host."""
    x, y = _data(rows=60, cols=5)
    counts = np.random.default_rng(8).poisson(2.0, (60, 5)).astype(np.float64)
    calls = _kernel_calls(monkeypatch)
    monkeypatch.setattr(_host, "HOST_MATHS_ENTRIES", -1)
    bnb.NaiveBayes(bnb.Multinomial()).fit(counts, y).predict_proba(counts)
    assert calls == []
    monkeypatch.setattr(_host, "HOST_MATHS_ENTRIES", 1 << 16)
    monkeypatch.setattr(_host, "SMALL_FIT_CELLS", -1)
    bnb.NaiveBayes(bnb.Gaussian()).fit(x, y).predict_proba(x)
    assert calls == []
    mixed = np.hstack([x, counts])
    bnb.NaiveBayes(features={tuple(range(5)): bnb.Gaussian(),
                             tuple(range(5, 10)): bnb.Multinomial()}).fit(mixed, y)
    assert calls == ["fit"]  # the count block's bound is off: the kernels fit both


def test_the_numerics_page_quotes_the_threshold():
    page = (Path(__file__).resolve().parents[1] / "docs/user_guide/numerics.md").read_text()
    assert _host.HOST_MATHS_ENTRIES == 65_536
    assert "at most 65,536 rows x columns x classes" in page
    assert 1_000 * 20 * 3 <= _host.HOST_MATHS_ENTRIES  # the page's example
