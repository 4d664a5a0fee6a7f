"""Issue 38, "Columns matched by position": any DataFrame is matched by name, whatever its
column labels' type (integers, a mix of strings and integers), in ``partial_fit`` and in
prediction; a DataFrame with a column the model was not fitted on is an error naming it."""

import jax
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayesnb as bnb

#: column labels that are not all strings (pd.DataFrame(array) gives the first)
LABELS = [[0, 1, 2, 3], [3, 1, 0, 2], ["a", 1, "b", 2], [10, "x", 2.5, "y"]]


def frame(labels, seed: int, n: int = 40) -> tuple[pd.DataFrame, np.ndarray]:
    """Three numeric columns on different scales and one text column; the classes differ
    in every column, so a column merged into another changes the answer."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    data = {labels[0]: rng.normal(5 * y, 1.0),
            labels[1]: rng.normal(100 - 40 * y, 3.0),
            labels[2]: rng.normal(-20 + 2 * y, 0.5),
            labels[3]: np.where(rng.random(n) < 0.8, np.where(y == 1, "u", "v"), "w")}
    return pd.DataFrame(data, columns=pd.Index(labels, dtype=object)), y


def model():
    return bnb.NaiveBayes(method="bayes")


@settings(max_examples=20, deadline=None)
@given(labels=st.sampled_from(LABELS), order=st.permutations(range(4)),
       seed=st.integers(0, 2**16))
def test_predictions_do_not_depend_on_the_column_order(labels, order, seed):
    X, y = frame(labels, seed)
    clf = model().fit(X, y)
    X_new, _ = frame(labels, seed + 1, n=15)
    permuted = X_new.iloc[:, list(order)]
    np.testing.assert_array_equal(clf.predict_proba(permuted), clf.predict_proba(X_new))
    # the reference: the same data with string labels, matched by name before this issue
    named = {c: f"c{i}" for i, c in enumerate(labels)}
    ref = model().fit(X.rename(columns=named), y)
    np.testing.assert_allclose(clf.predict_proba(permuted),
                               ref.predict_proba(X_new.rename(columns=named)), atol=1e-6)


@settings(max_examples=20, deadline=None)
@given(labels=st.sampled_from(LABELS), order=st.permutations(range(4)),
       seed=st.integers(0, 2**16))
def test_partial_fit_merges_a_permuted_chunk_into_its_own_columns(labels, order, seed):
    X, y = frame(labels, seed, n=60)
    first, second = slice(0, 30), slice(30, 60)
    with jax.enable_x64(True):  # the x64 fixture, inside hypothesis' examples
        clf = model().partial_fit(X.iloc[first], y[first])
        clf.partial_fit(X.iloc[second, list(order)], y[second])
        batch = model().fit(X, y)  # one fit of all the rows, in their own order
        for a, b in zip(clf.blocks_, batch.blocks_, strict=True):
            assert a.schema == b.schema
            for s, t in zip(a.stats, b.stats, strict=True):
                np.testing.assert_allclose(np.asarray(s), np.asarray(t), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(clf.predict_proba(X), batch.predict_proba(X), atol=1e-9)


def test_class_means_of_a_permuted_integer_labelled_chunk(x64):
    """The per-class means against NumPy's: a chunk in another column order is merged by
    name, not into the column at its position."""
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 25)
    values = np.column_stack([np.where(y == 1, 7.0, -3.0) + rng.normal(0, 0.1, 50),
                              np.where(y == 1, 0.0, 50.0) + rng.normal(0, 0.1, 50)])
    X = pd.DataFrame(values)  # columns 0 and 1
    clf = bnb.NaiveBayes().partial_fit(X.iloc[:20], y[:20], classes=[0, 1])
    clf.partial_fit(X.iloc[20:, [1, 0]], y[20:])
    stats = clf.blocks_[0].stats  # Gaussian: per class and column count, mean, m2
    expected = np.array([values[y == k].mean(axis=0) for k in (0, 1)])
    np.testing.assert_allclose(np.asarray(stats.mean), expected, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(stats.count), [[25, 25], [25, 25]])


@pytest.mark.parametrize("labels", [LABELS[0], LABELS[2], ["p", "q", "r", "s"]])
def test_a_column_the_model_lacks_is_an_error_naming_it(labels):
    X, y = frame(labels, 0)
    clf = model().fit(X, y)
    extra = X.assign(**{"zz": 1.0})
    with pytest.raises(ValueError, match=r"\['zz'\].*not fitted on"):
        clf.partial_fit(extra, y)
    with pytest.raises(ValueError, match=r"\['zz'\].*not fitted on"):
        clf.predict_proba(extra)
    with pytest.raises(ValueError, match=r"\['zz'\].*not fitted on"):
        clf.predict(extra)
    np.testing.assert_array_equal(clf.class_count_, [20, 20])  # the refused update: nothing


def test_feature_names_are_only_string_names():
    X, y = frame(LABELS[0], 0)
    assert not hasattr(model().fit(X, y), "feature_names_in_")
    X, y = frame(["p", "q", "r", "s"], 0)
    assert list(model().fit(X, y).feature_names_in_) == ["p", "q", "r", "s"]


def test_a_numpy_array_is_still_matched_by_position():
    X, y = frame(LABELS[1], 0)
    clf = model().fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X.to_numpy(dtype=object)),
                               clf.predict_proba(X), rtol=1e-4)


def test_a_saved_model_keeps_matching_by_name(tmp_path):
    X, y = frame(LABELS[2], 5)
    clf = model().fit(X, y)
    loaded = bnb.load(bnb.save(clf, tmp_path / "m.bnb"))
    permuted = X.iloc[:, [2, 0, 3, 1]]
    np.testing.assert_allclose(loaded.predict_proba(permuted), clf.predict_proba(X),
                               atol=1e-6)
