"""Wide categorical data (issue 12 section 2, issue 11 section 1).

The Categorical kernels build their one-hot per distinct level count, not per column, so
thousands of columns compile as fast as a few; the tables are computed in float64 and centred
per level so float32 scores of thousands of columns stay within 1e-4 of float64."""

import jax
import numpy as np
import pytest
from sklearn.naive_bayes import CategoricalNB

import bayesnb as bnb
from bayesnb.families.categorical import _level_groups, _one_hot


def _mixed_levels(n, n_levels, seed):
    """Columns with the given level counts, interleaved (groups are not contiguous)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    X = np.stack([rng.integers(0, v, size=n) for v in n_levels], axis=1)
    # a weak class signal in every column
    X = np.where(rng.random(X.shape) < 0.2, (y[:, None] + np.arange(X.shape[1])) % n_levels, X)
    return X, y


def test_grouped_one_hot_is_the_flat_indicator():
    """Entry ``order[i]`` of the flat layout is entry ``i`` of the grouped one-hot."""
    n_levels = (2, 3, 2, 4, 3, 2)
    codes = np.array([[0, 2, 1, 3, -1, 1], [1, 0, -2, 0, 2, 0]])
    grouped = np.asarray(_one_hot(codes, n_levels, np.float32))
    offset = np.concatenate([[0], np.cumsum(n_levels)[:-1]])
    flat = np.zeros((2, sum(n_levels)))
    for i, row in enumerate(codes):
        for j, c in enumerate(row):
            if c >= 0:  # missing (-1) and unseen (-2) match no level
                flat[i, offset[j] + c] = 1
    order = _level_groups(n_levels)[1]
    np.testing.assert_array_equal(grouped, flat[:, order])


@pytest.mark.parametrize("method", ["ml", "mean"])
def test_interleaved_level_counts_match_scikit_learn(x64, method):
    n_levels = tuple(np.random.default_rng(1).integers(2, 6, size=300))
    X, y = _mixed_levels(400, np.array(n_levels), 2)
    alpha = 1e-10 if method == "ml" else 1.0
    ref = CategoricalNB(alpha=alpha, force_alpha=True, min_categories=np.array(n_levels))
    ref.fit(X, y)
    clf = bnb.NaiveBayes(bnb.Categorical(categories=[list(range(v)) for v in n_levels]),
                         method=method).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X), atol=1e-7)
    for j in (0, 7, 299):  # the fitted tables, column by column, in the flat layout
        np.testing.assert_allclose(clf.feature_log_prob_[j], ref.feature_log_prob_[j],
                                   atol=1e-6 if method == "ml" else 1e-12)


@pytest.mark.parametrize("method", ["ml", "map", "mean", "bayes"])
def test_float32_agrees_with_float64_on_thousands_of_columns(method):
    """One rounding of log(n_k + A) shared by every column of class k, or float32 partial
    sums in the thousands, moved probabilities by 2.7e-4 at 800 columns before."""
    rng = np.random.default_rng(3)
    n, f = 600, 3000
    y = rng.integers(0, 4, size=n)
    X = rng.integers(0, 3, size=(n, f))
    X = np.where(rng.random((n, f)) < 0.02, (y[:, None] + np.arange(f)) % 3, X)
    Xt = rng.integers(0, 3, size=(200, f))
    family = bnb.Categorical(alpha=2.0)
    p32 = bnb.NaiveBayes(family, method=method).fit(X, y).predict_proba(Xt)
    with jax.enable_x64(True):
        p64 = bnb.NaiveBayes(family, method=method).fit(X, y).predict_proba(Xt)
    assert p64.max(axis=1).min() < 0.99  # the probabilities are not saturated
    np.testing.assert_allclose(p32, p64, atol=1e-4)


def test_joint_scores_keep_the_class_free_part(x64):
    """Centring is for class probabilities only: the joint keeps every factor (seed 003's
    PlayTennis products, 9/14 * 2/9 * 3/9 * 3/9 * 3/9 for Yes)."""
    from bayesnb.datasets import load_playtennis

    X, y = load_playtennis()
    clf = bnb.NaiveBayes(method="ml").fit(X, y)
    query = X.iloc[:0].copy()
    query.loc[0] = {"Outlook": "Sunny", "Temperature": "Cool", "Humidity": "High",
                    "Wind": "Strong"}
    joint = np.exp(clf.predict_joint_log_proba(query))[0]
    yes = joint[list(clf.classes_).index("Yes")]
    assert yes == pytest.approx(9 / 14 * 2 / 9 * 3 / 9 * 3 / 9 * 3 / 9, rel=1e-12)


def test_switching_dtype_mode_in_one_process():
    """The grouped one-hot's index constants are per dtype mode."""
    X, y = _mixed_levels(50, np.array([2, 3, 2, 3]), 4)
    p = []
    for x64 in (False, True, False):
        with jax.enable_x64(x64):
            p.append(bnb.NaiveBayes(bnb.Categorical()).fit(X, y).predict_proba(X))
    np.testing.assert_allclose(p[0], p[1], atol=1e-5)
    np.testing.assert_allclose(p[0], p[2], atol=0)
