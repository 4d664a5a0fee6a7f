"""Conformance of every registered family (issue 37), fits and numerics: one table of checks,
run for each family in ``bayesnb.families.REGISTRY`` from what the family declares, so a new
family is tested by registering it, without new test code. The posterior and its sampling are
checked the same way in ``test_family_conformance_sampling.py``; the data of both come from
the family's own generative model (``_conformance.simulate``).

References are independent of the code under test: float32 against float64, weights against
duplicated rows, chunked, merged and decayed fits against one fit, a saved model against the
one saved, leave-one-out against refits on the other rows.
"""

import jax
import numpy as np
import pytest
from _conformance import FAMILIES, N_CLASSES, PARAMETRIC, fit, make, simulate
from hypothesis import given, settings
from hypothesis import strategies as st

import bayesnb as bnb
from bayesnb.fast import form_of


# ---------------------------------------------------------------------- numerics and fits
def _refusal(err: Exception) -> bool:
    text = str(err)
    return "float32" in text or "x64" in text


@pytest.mark.parametrize("cls", FAMILIES)
def test_float32_agrees_with_float64_or_refuses(cls):
    """Over scales 1e-3..1e8 and offsets, float32 probabilities are within 1e-4 of float64's,
    or float32 refuses with a message naming float32/x64. Close classes over 1,000 columns, so
    the probabilities are far from 0 and 1 and rounding would show."""
    # 1,000 columns as i.i.d. rows of 3 side by side (the classes share one distribution, so
    # rows are exchangeable): 51 rows of 3 make a row of 153 columns, 7 such draws (each its
    # own parameters) 1,071; the simulator program the other checks use (one compiled for a
    # wide shape was most of the test)
    y = simulate(cls, 40, shared=True, seed=5)[1]
    X = np.hstack([np.asarray(simulate(cls, 40 * 51, shared=True, seed=5 + d)[0]).reshape(40, -1)
                   for d in range(7)])[:, :1000]
    tried = 0
    for scale, offset in ((1.0, 0.0), (1e-3, 0.0), (1e8, 0.0), (1.0, 1e4), (1e3, 1e4)):
        try:
            Xs = np.asarray(X, dtype=np.float64) * scale + offset
            with jax.enable_x64(True):
                ref = {m: fit(cls, Xs, y, m).predict_proba(Xs) for m in ("mean", "bayes")}
        except (TypeError, ValueError):  # values the family does not take
            continue
        tried += 1
        for method, p64 in ref.items():
            try:
                p32 = fit(cls, Xs, y, method).predict_proba(Xs)
            except ValueError as err:
                assert _refusal(err), f"scale {scale}, offset {offset}: {err}"
                continue
            np.testing.assert_allclose(p32, p64, rtol=0, atol=1e-4,
                                       err_msg=f"{method}, scale {scale}, offset {offset}")
    assert tried


@pytest.mark.parametrize("cls", FAMILIES)
def test_integer_weights_equal_duplicated_rows(cls, x64):
    X, y = simulate(cls, 30, seed=6)
    w = np.random.default_rng(6).integers(1, 4, len(y))
    for method in ("mean", "bayes"):
        weighted = bnb.NaiveBayes(features=make(cls), method=method).fit(X, y, sample_weight=w)
        repeated = fit(cls, np.repeat(X, w, axis=0), np.repeat(y, w), method)
        np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X),
                                   rtol=1e-9, atol=1e-12)
        if cls.nonparametric:  # its statistics are the sample itself, rows kept once
            continue
        for a, b in zip(weighted.blocks_[0].stats, repeated.blocks_[0].stats, strict=True):
            np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                       rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("cls", FAMILIES)
def test_partial_fit_and_merge_equal_one_fit(cls, x64):
    X, y = simulate(cls, 40, seed=7)
    whole = fit(cls, X, y, "bayes")
    chunked = bnb.NaiveBayes(features=make(cls), method="bayes")
    for part in (slice(0, 25), slice(25, None)):
        chunked.partial_fit(X[part], y[part], classes=np.arange(N_CLASSES))
    merged = bnb.merge(fit(cls, X[:25], y[:25], "bayes"), fit(cls, X[25:], y[25:], "bayes"))
    expected = whole.predict_proba(X)
    for other in (chunked, merged):
        np.testing.assert_allclose(other.predict_proba(X), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("cls", FAMILIES)
def test_save_load_round_trip(cls, tmp_path):
    X, y = simulate(cls, 30, seed=8)
    for method in ("mean", "bayes"):
        clf = fit(cls, X, y, method)
        path = tmp_path / f"{method}.bnb"
        bnb.save(clf, path)
        back = bnb.load(path)
        np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))
        for a, b in zip(back.blocks_[0].stats, clf.blocks_[0].stats, strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("cls", FAMILIES)
def test_decayed_updates_equal_one_weighted_fit(cls):
    """``partial_fit(..., decay=gamma)`` over any chunking equals one fit whose rows weigh
    ``gamma ** (number of later chunks)`` (the family's ``scale_stats``), statistics and
    predictions alike."""
    n = 24
    X, y = simulate(cls, n, seed=9)
    families = {"features": make(cls), "method": "bayes" if not cls.nonparametric else "mean"}

    # cut points at multiples of 8: few chunk shapes, so few compilations
    @settings(max_examples=5, deadline=None, derandomize=True)
    @given(cuts=st.sets(st.sampled_from([8, 16])),
           gamma=st.floats(0.05, 1.0, allow_nan=False))
    def check(cuts, gamma):
        edges = [0, *sorted(cuts), n]
        chunks = list(zip(edges[:-1], edges[1:], strict=True))
        online = bnb.NaiveBayes(**families)
        weight = np.empty(n)
        for i, (a, b) in enumerate(chunks):
            online.partial_fit(X[a:b], y[a:b], classes=np.arange(N_CLASSES), decay=gamma)
            weight[a:b] = gamma ** (len(chunks) - 1 - i)
        batch = bnb.NaiveBayes(**families).fit(X, y, sample_weight=weight)
        np.testing.assert_allclose(online.class_count_, batch.class_count_, rtol=1e-12)
        # a nonparametric family's statistics are the sample, in another order when chunked
        for u, v in zip(*(() if cls.nonparametric else (online.blocks_[0].stats,
                                                         batch.blocks_[0].stats)), strict=True):
            np.testing.assert_allclose(np.asarray(u, dtype=float), np.asarray(v, dtype=float),
                                       rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(online.predict_proba(X), batch.predict_proba(X),
                                   rtol=1e-9, atol=1e-12)

    with jax.enable_x64(True):
        check()


def _rows(X, index):
    return X.iloc[index] if hasattr(X, "iloc") else X[index]


@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("cls", PARAMETRIC)
def test_loo_equals_refits_on_the_other_rows(cls, missing, x64, monkeypatch):
    """Exact leave-one-out, conditional and joint, under ``mean`` and ``bayes``, against
    refits on the other n - 1 rows: on the host where the family's form can count and score
    there (``loo.HOST_ROW_BLOCKS``), and by the kernels; complete, and with missing values."""
    from bayesnb import loo

    X, y = simulate(cls, 12, seed=10)
    assert np.bincount(y, minlength=N_CLASSES).min() >= 2  # no class left empty
    if missing:  # a value in four missing, none of row 0's
        if np.asarray(X).dtype.kind not in "biuf":
            pytest.skip("labels: a refit without a row may not have seen a level "
                        "(missing labels: tests/test_explain_loo.py)")
        X = np.asarray(X, dtype=np.float64)
        gone = np.random.default_rng(4).random(X.shape) < 0.25
        gone[0] = False
        X[gone] = np.nan
    for method in ("mean", "bayes"):
        expected = {"conditional": [], "joint": []}
        for i in range(len(y)):
            refit = fit(cls, _rows(X, np.arange(len(y)) != i), y[np.arange(len(y)) != i],
                        method)
            row, own = _rows(X, [i]), list(refit.classes_).index(y[i])
            expected["conditional"].append(refit.predict_log_proba(row)[0, own])
            expected["joint"].append(refit.predict_joint_log_proba(row)[0, own])
        clf = fit(cls, X, y, method)
        for bound in (loo.HOST_ROW_BLOCKS, -1):
            monkeypatch.setattr(loo, "HOST_ROW_BLOCKS", bound)
            for quantity, values in expected.items():
                np.testing.assert_allclose(clf.loo(X, y, quantity=quantity).pointwise, values,
                                           rtol=1e-9, atol=1e-9,
                                           err_msg=f"{method}, {quantity}, bound {bound}")


# the families whose fast form declares host maths
HOST_MATHS = [p for p in FAMILIES if form_of(p.values[0]).host_maths]


@pytest.mark.parametrize("cls", HOST_MATHS)
@pytest.mark.parametrize("method", ["mean", "bayes"])
def test_host_maths_agree_with_the_kernels(cls, method, x64, monkeypatch):
    """A form that declares ``host_maths`` has small tables fitted and scored by the family's
    own maths on float64 NumPy (``fast._host.HOST_MATHS_ENTRIES``), here with missing values,
    which a form's host products do not take: nothing traced, and the statistics, the
    probabilities and the joint densities of the float64 kernels' masked forms, which the
    checks above hold to their references."""
    from bayesnb.fast import _host, _kernels

    X, y = simulate(cls, 200, n_columns=4, seed=11)
    X = X.astype(np.float64)
    X[np.random.default_rng(3).random(X.shape) < 0.1] = np.nan
    before = dict(_kernels.TRACES)
    host = fit(cls, X, y, method=method)
    p_host, joint_host = host.predict_proba(X), host.predict_joint_log_proba(X)
    assert _kernels.TRACES == before
    monkeypatch.setattr(_host, "HOST_MATHS_ENTRIES", -1)
    streamed = []
    monkeypatch.setattr(_kernels, "stream_suff_stats", lambda *a, _f=_kernels.stream_suff_stats:
                        streamed.append(1) or _f(*a))
    kernels = fit(cls, X, y, method=method)
    assert streamed  # the kernels' masked forms counted it
    for a, b in zip(jax.tree.leaves(host.blocks_[0].stats),
                    jax.tree.leaves(kernels.blocks_[0].stats), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(p_host, kernels.predict_proba(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(joint_host, kernels.predict_joint_log_proba(X), rtol=1e-10,
                               atol=1e-9)
