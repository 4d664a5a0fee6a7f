"""Issue 38, section 1, "Analysis results that disagree with the model": each analysis gives
the answer its name promises, checked against independent computations (by hand, NumPy,
SciPy), or refuses."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesnb as bnb
from bayesnb.analysis import decision_function, encode_linear, linear_weights

FEW = settings(max_examples=20, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture])


# ---------------------------------------------------------------- the linear view
def bernoulli_frame(rng, n, f):
    y = rng.integers(0, 3, n)
    p = rng.uniform(0.1, 0.9, (3, f))
    return pd.DataFrame((rng.random((n, f)) < p[y]).astype(float),
                        columns=[f"b{j}" for j in range(f)]), y


def gaussian_frame(rng, n, f):
    y = rng.integers(0, 3, n)
    mu = rng.normal(0, 2, (3, f))
    return pd.DataFrame(mu[y] + rng.normal(size=(n, f)), columns=[f"g{j}" for j in range(f)]), y


def with_missing(rng, X, share):
    X = X.copy()
    X[rng.random(X.shape) < share] = np.nan
    return X


@FEW
@given(seed=st.integers(0, 2**31 - 1), f=st.integers(1, 5), share=st.floats(0.1, 0.7),
       kind=st.sampled_from(["bernoulli", "gaussian", "both"]),
       method=st.sampled_from(["mean", "map", "bayes"]))
def test_decision_function_agrees_with_predict_on_rows_with_missing_values(
        x64, seed, f, share, kind, method):
    rng = np.random.default_rng(seed)
    parts, features = [], {}
    if kind in ("bernoulli", "both"):
        Xb, y = bernoulli_frame(rng, 120, f)
        parts.append(Xb)
        features.update({c: bnb.Bernoulli(alpha=2.0, beta=1.5) for c in Xb.columns})
    if kind in ("gaussian", "both"):
        Xg, y_g = gaussian_frame(rng, 120, f)
        y = y_g if kind == "gaussian" else y
        parts.append(Xg)
        family = bnb.Gaussian(pooled=True)
        features.update({c: family for c in Xg.columns})
    if kind == "both":
        features = {**{c: bnb.Bernoulli(alpha=2.0, beta=1.5) for c in parts[0].columns},
                    **dict.fromkeys(parts[1].columns, family)}
    if method == "bayes" and kind != "bernoulli":
        method = "mean"  # the Gaussian predictive is a Student-t: not linear
    X = pd.concat(parts, axis=1)
    clf = bnb.NaiveBayes(features, method=method).fit(X, y)
    X_test = pd.concat([with_missing(rng, X.iloc[:60], share),
                        X.iloc[:5].map(lambda v: np.nan)])  # rows missing every value
    scores = decision_function(clf, X_test)
    joint = clf.predict_joint_log_proba(X_test)
    diff = joint - scores
    np.testing.assert_allclose(diff - diff[:, :1], 0.0, atol=1e-9)
    margin = np.sort(joint, axis=1)
    clear = margin[:, -1] - margin[:, -2] > 1e-9
    np.testing.assert_array_equal(clf.classes_[scores.argmax(axis=1)][clear],
                                  clf.predict(X_test)[clear])
    W, b = linear_weights(clf)
    np.testing.assert_allclose(encode_linear(clf, X_test).to_numpy() @ W.to_numpy().T
                               + b.to_numpy(), scores, rtol=1e-12, atol=1e-12)


def test_bernoulli_linear_view_by_hand(x64):
    """Stated tables: the scores are log p(c) + the log factors of the observed values only."""
    p = {"a": {"no": 0.2, "yes": 0.7}, "b": {"no": 0.6, "yes": 0.1}}
    clf = bnb.from_tables({"no": 0.3, "yes": 0.7}, bernoulli=p)
    X = np.array([[1.0, np.nan], [np.nan, 0.0], [np.nan, np.nan], [0.0, 1.0]])
    scores = decision_function(clf, X)

    def by_hand(row, klass):
        s = np.log({"no": 0.3, "yes": 0.7}[klass])
        for value, column in zip(row, "ab", strict=True):
            if not np.isnan(value):
                q = p[column][klass]
                s += np.log(q if value == 1 else 1 - q)
        return s

    expected = np.array([[by_hand(r, k) for k in ("no", "yes")] for r in X])
    np.testing.assert_allclose(scores, expected, rtol=1e-12)
    # row 1 ([1, missing]): 0.3 * 0.2 < 0.7 * 0.7; row 2 ([missing, 0]): 0.3 * 0.4 < 0.7 * 0.9
    assert list(clf.predict(X)) == list(np.array(["no", "yes"])[expected.argmax(axis=1)])
    W, _ = linear_weights(clf)
    assert list(W.columns) == ["a", "a:observed", "b", "b:observed"]
    np.testing.assert_allclose(W.loc["yes", "b:observed"], np.log(0.9), rtol=1e-12)


def test_pooled_gaussian_linear_view_by_hand(x64):
    """A pooled Gaussian fitted by ML: the factor of an observed x is
    -lam (x - mu_k)^2 / 2 (up to class-free terms), that of a missing one nothing."""
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1], 30)
    X = pd.DataFrame({"u": rng.normal(y * 1.5, 1.0), "v": rng.normal(-y, 1.0)})
    clf = bnb.NaiveBayes(bnb.Gaussian(pooled=True), method="ml").fit(X, y)
    mu = np.array([X[y == k].mean().to_numpy() for k in (0, 1)])
    resid = X.to_numpy() - mu[y]
    lam = 1.0 / (resid ** 2).mean(axis=0)  # the pooled ML variance, per column
    rows = np.array([[0.4, np.nan], [np.nan, -2.0], [1.0, 0.5]])
    hand = np.log(0.5) + np.nansum(-0.5 * lam * (rows[:, None, :] - mu[None]) ** 2, axis=2)
    scores = decision_function(clf, rows)
    diff = hand - scores
    np.testing.assert_allclose(diff - diff[:, :1], 0.0, atol=1e-9)
    assert list(clf.predict(rows)) == list(hand.argmax(axis=1))
