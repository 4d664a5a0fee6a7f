"""Wide categorical data (issue 12 section 2, issue 11 section 1).

Dense fits and predictions count and look up on the host in float64 (nothing compiles, so
20,000 columns work and a first call costs what later ones do). The JAX kernels that remain
(soft labels, leave-one-out) build their one-hot per distinct level count, not per column, so
thousands of columns compile as fast as a few; their tables are computed in float64 and
centred per level so float32 scores of thousands of columns stay within 1e-4 of float64."""

import jax
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.naive_bayes import CategoricalNB

import bayesnb as bnb
from bayesnb.families._levels import _level_groups, _one_hot


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


# ---------------------------------------------------------------- host counting and scoring
# Dense Categorical blocks are counted (np.bincount) and scored (a sparse product with the
# log tables) on the host in float64, in row chunks (``bayesnb.fast._host``): the references below
# are scikit-learn and counts and sums written out with NumPy comparisons.


def _counts_by_hand(X, y, n_classes, n_levels, weight):
    """counts[k][j][v]: the weight of rows of class k whose column j holds level v."""
    return [[np.array([np.sum(weight[(y == k) & (X[:, j] == v)]) for v in range(n_levels[j])])
             for j in range(X.shape[1])] for k in range(n_classes)]


def test_weighted_counts_with_missing_values_are_exact():
    rng = np.random.default_rng(5)
    n_levels = (2, 3, 4, 3, 2)
    X, y = _mixed_levels(300, np.array(n_levels), 6)
    X = X.astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan  # missing values count nowhere
    weight = rng.random(300) * 3
    clf = bnb.NaiveBayes(bnb.Categorical(categories=[list(range(v)) for v in n_levels]),
                         method="mean").fit(X, y, sample_weight=weight)
    expected = _counts_by_hand(X, y, 3, n_levels, weight)
    for j in range(len(n_levels)):
        got = clf.category_count_[j]
        np.testing.assert_allclose(got, [expected[k][j] for k in range(3)], rtol=1e-13)


def test_weighted_fit_matches_scikit_learn(x64):
    n_levels = (3, 5, 2, 3, 4) * 20
    X, y = _mixed_levels(500, np.array(n_levels), 7)
    weight = np.random.default_rng(8).integers(0, 4, size=500).astype(float)
    ref = CategoricalNB(alpha=1.0, min_categories=np.array(n_levels)).fit(
        X, y, sample_weight=weight)
    clf = bnb.NaiveBayes(bnb.Categorical(categories=[list(range(v)) for v in n_levels]),
                         method="mean", class_alpha=0).fit(X, y, sample_weight=weight)
    for j in (0, 1, 4, 99):
        np.testing.assert_array_equal(clf.category_count_[j], ref.category_count_[j])
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize(("method", "alpha", "ref_alpha"),
                         [("map", 2.0, 1.0), ("bayes", 0.5, 0.5)])
def test_map_and_exact_predictive_match_scikit_learn(x64, method, alpha, ref_alpha):
    """MAP under alpha + 1 and the posterior predictive under alpha are scikit-learn's
    smoothed tables (the module docstring of ``families/categorical.py``)."""
    n_levels = tuple(np.random.default_rng(9).integers(2, 7, size=200))
    X, y = _mixed_levels(300, np.array(n_levels), 10)
    ref = CategoricalNB(alpha=ref_alpha, min_categories=np.array(n_levels)).fit(X, y)
    clf = bnb.NaiveBayes(bnb.Categorical(alpha=alpha,
                                         categories=[list(range(v)) for v in n_levels]),
                         method=method, class_alpha=0).fit(X, y)
    Xt, _ = _mixed_levels(100, np.array(n_levels), 11)
    np.testing.assert_allclose(clf.predict_proba(Xt), ref.predict_proba(Xt), atol=1e-12)
    np.testing.assert_allclose(clf.predict_joint_log_proba(Xt),
                               ref.predict_joint_log_proba(Xt), atol=1e-9)


def test_missing_and_unseen_values_at_prediction_by_hand(x64):
    """A missing value leaves its column out; an unseen one gets alpha / (n_kj + alpha V_j),
    from scikit-learn's counts."""
    n_levels = (3, 2, 4, 3)
    X, y = _mixed_levels(200, np.array(n_levels), 12)
    ref = CategoricalNB(alpha=1.0, min_categories=np.array(n_levels)).fit(X, y)
    clf = bnb.NaiveBayes(bnb.Categorical(unseen="smooth"), method="mean",
                         class_alpha=0).fit(X, y)
    Xt = np.array([[0, 1, 3, 2], [np.nan, 1, 9, 0], [7, np.nan, np.nan, 1],
                   [np.nan] * 4, [2, 0, 0, 0]], dtype=object)
    expected = np.tile(ref.class_log_prior_, (len(Xt), 1))
    for i, row in enumerate(Xt):
        for j, v in enumerate(row):
            if isinstance(v, float) and np.isnan(v):
                continue
            if v < n_levels[j]:
                expected[i] += ref.feature_log_prob_[j][:, v]
            else:
                n_kj = ref.category_count_[j].sum(axis=1)
                expected[i] += np.log(1.0 / (n_kj + n_levels[j]))
    expected = np.exp(expected - expected.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(clf.predict_proba(Xt), expected, atol=1e-12)


def test_chunks_do_not_change_the_answer_and_errors_name_the_row(monkeypatch):
    """Rows go through in chunks; chunk boundaries change nothing, and a bad value in a later
    chunk is reported at its row of the input."""
    from bayesnb.fast import _host

    X, y = _mixed_levels(250, np.array([3, 4, 2] * 5), 13)
    whole = bnb.NaiveBayes(bnb.Categorical()).fit(X, y)
    p_whole = whole.predict_proba(X)
    monkeypatch.setattr(_host, "CHUNK_ENTRIES", 7 * 15)  # 7 rows per chunk
    chunked = bnb.NaiveBayes(bnb.Categorical()).fit(X, y)
    for a, b in zip(whole.category_count_, chunked.category_count_, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(chunked.predict_proba(X), p_whole)
    bad = X.astype(object)
    bad[101, 4] = ["a", "list"]
    with pytest.raises(TypeError, match="row 101"):
        chunked.predict_proba(bad)


def test_float32_and_float64_agree_to_float64_precision():
    """The dense counts and scores are float64 on the host whatever JAX's dtype mode."""
    X, y = _mixed_levels(400, np.array([3, 2, 5, 4] * 250), 14)
    family = bnb.Categorical(alpha=0.7)
    for method in ("ml", "mean", "bayes"):
        p32 = bnb.NaiveBayes(family, method=method).fit(X, y).predict_proba(X)
        with jax.enable_x64(True):
            p64 = bnb.NaiveBayes(family, method=method).fit(X, y).predict_proba(X)
        np.testing.assert_allclose(p32, p64, rtol=0, atol=1e-12)


def test_twenty_thousand_columns(x64):
    """Wide data (issue 12 section 2) at a small row count, against counts and sums written
    out by hand (scikit-learn's per-column loops take seconds here)."""
    rng = np.random.default_rng(15)
    n, f, k = 60, 20_000, 3
    y = np.repeat(np.arange(k), n // k)
    X = rng.integers(0, 3, size=(n, f))
    clf = bnb.NaiveBayes(bnb.Categorical(alpha=1.0), method="mean", class_alpha=0).fit(X, y)
    counts = np.stack([np.stack([((X == v) & (y == c)[:, None]).sum(axis=0)
                                 for v in range(3)], axis=-1) for c in range(k)])  # (k, f, 3)
    log_prob = np.log(counts + 1.0) - np.log(counts.sum(axis=-1, keepdims=True) + 3.0)
    joint = np.log(np.bincount(y) / n) + np.stack(
        [log_prob[c, np.arange(f), X].sum(axis=1) for c in range(k)], axis=1)
    expected = np.exp(joint - joint.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    assert 0.01 < expected.max(axis=1).min() and expected.max(axis=1).max() > 0.9
    np.testing.assert_allclose(clf.predict_proba(X), expected, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0.5, -3.0, 2.0, 1e8, 7.25, np.nan, np.inf]), min_size=6,
                max_size=6), st.integers(0, 2**31 - 1))
def test_float_columns_encode_as_pandas_matches_them(cells, seed):
    """Float columns (NaN missing, as pandas reads integer columns with gaps) learn and encode
    their levels by NumPy's sorted search: the levels are the sorted distinct values, and the
    codes pandas' ``Index.get_indexer`` of the levels gives (-1 missing, unseen refused by
    name or, where smoothed, marked)."""
    from bayesnb.families._levels import UNSEEN, _float_codes, encode_levels, learn_levels

    rng = np.random.default_rng(seed)
    X = rng.permuted(np.array(cells * 2, dtype=np.float64).reshape(4, 3), axis=0)
    columns = ("a", "b", "c")
    levels = learn_levels(X, columns, None)
    for j, lv in enumerate(levels):
        seen = X[:, j][~np.isnan(X[:, j])]
        assert list(lv) == sorted(set(seen.tolist()))
    codes = encode_levels(X, columns, levels, "error", "error")
    assert _float_codes(X, levels) is not None  # NumPy's search, not pandas'
    for j, lv in enumerate(levels):
        expected = pd.Index(list(lv), dtype=object).get_indexer(X[:, j].astype(object))
        expected[np.isnan(X[:, j])] = -1
        np.testing.assert_array_equal(codes[:, j], expected)
    fewer = tuple(lv[1:] for lv in levels)  # each column's smallest value now unseen
    if any(len(lv) for lv in levels):
        j = next(j for j, lv in enumerate(levels) if len(lv))
        with pytest.raises(ValueError, match=rf"column '{columns[j]}'"):
            encode_levels(X, columns, fewer, "error", "error")
        smoothed = encode_levels(X, columns, fewer, "smooth", "smooth")
        assert np.all(smoothed[X[:, j] == levels[j][0], j] == UNSEEN)


def test_draw_tables_of_column_sites_are_each_draws_logs(x64):
    """A Categorical's tables of posterior draws (``_draws_host.draw_tables``: one NumPy call
    on all draws, where a vmap over thousands of sites compiled for seconds): draw d's table
    is the log of its columns' probabilities side by side, and the parameters that do not vary
    by draw (the offsets, an unseen value's exact predictive) are repeated along the draws."""
    from bayesnb._draws_host import draw_tables
    from bayesnb.inference import _flat
    from bayesnb.model import block_draws

    X, y = _mixed_levels(200, (2, 5, 3), seed=9)
    clf = bnb.NaiveBayes(bnb.Categorical(), method="bayes").fit(X, y)
    block = clf.fitted_.blocks[0]
    own = block_draws(_flat(clf.sample_posterior(50, seed=2)), clf.fitted_.blocks)[0]
    family = type(block.family)
    tables = draw_tables(family, own, family.posterior(block.prior, block.stats))
    for d in (0, 17, 49):
        by_hand = np.log(np.concatenate([own[f"{j}.probs"][d] for j in range(3)], axis=-1))
        np.testing.assert_allclose(np.asarray(tables.log_prob[d]), by_hand, rtol=1e-15)
        np.testing.assert_array_equal(np.asarray(tables.offset[d]), [0, 2, 7])
        np.testing.assert_array_equal(np.asarray(tables.log_unseen[d]),
                                      np.asarray(tables.log_unseen[0]))
