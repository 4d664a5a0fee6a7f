"""A fit completes or changes nothing; updates match columns by name and check what they are
told (issue: trust, sections 2 and 3)."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

import bayesnb as bnb
from bayesnb.outofcore import fit_chunks


def _state(clf):
    """Everything an estimator holds, for an exact before/after comparison."""
    return dict(clf.__dict__)


def _assert_unchanged(clf, before):
    after = _state(clf)
    assert after.keys() == before.keys()
    for key, value in before.items():
        assert after[key] is value, key  # the very same objects: bit for bit


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(7)


def test_failed_fit_of_a_new_estimator_leaves_it_unfitted():
    clf = bnb.NaiveBayes(method="ml")
    with pytest.raises(ValueError, match="zero variance"):
        clf.fit([[0.0], [1.0], [2.0]], [0, 1, 2])  # one row per class: no ML variance
    assert not hasattr(clf, "classes_") and not hasattr(clf, "class_count_")
    with pytest.raises(ValueError, match="repeated labels"):
        clf.partial_fit([[0.0], [1.0]], [0, 1], classes=[0, 1, 1])


def test_failed_fit_leaves_a_fitted_estimator_exactly_as_it_was(rng):
    X = rng.normal(size=(40, 3))
    y = np.repeat([0, 1], 20)
    clf = bnb.NaiveBayes(method="ml").fit(X, y)
    proba = clf.predict_proba(X)
    before = _state(clf)
    with pytest.raises(ValueError, match="zero variance"):
        clf.fit([[0.0], [1.0], [2.0]], [0, 1, 2])
    _assert_unchanged(clf, before)
    with pytest.raises(ValueError):
        clf.fit(np.where(np.arange(120).reshape(40, 3) == 50, np.inf, X), y)  # a bad value
    _assert_unchanged(clf, before)
    np.testing.assert_array_equal(clf.predict_proba(X), proba)


def test_failed_partial_fit_changes_nothing(rng):
    X = rng.poisson(3.0, size=(30, 4)).astype(float)
    y = np.repeat([0, 1, 2], 10)
    clf = bnb.NaiveBayes(bnb.Poisson()).partial_fit(X, y)
    before = _state(clf)
    bad = X.copy()
    bad[17, 2] = -1.0  # a negative count deep in the chunk
    with pytest.raises(ValueError, match="negative"):
        clf.partial_fit(bad, y)
    _assert_unchanged(clf, before)
    with pytest.raises(ValueError, match="unknown|not in|label"):
        clf.partial_fit(X[:3], ["a", "b", "c"])
    _assert_unchanged(clf, before)


@pytest.mark.parametrize("prefitted", [False, True])
def test_fit_chunks_failing_at_chunk_3_changes_nothing(rng, prefitted):
    X = rng.normal(size=(60, 2))
    y = np.repeat([0, 1], 30)[rng.permutation(60)]
    chunks = [(X[i:i + 15], y[i:i + 15]) for i in range(0, 60, 15)]
    bad = chunks[2][0].copy()
    bad[4, 1] = np.inf
    chunks[2] = (bad, chunks[2][1])
    clf = bnb.NaiveBayes()
    if prefitted:
        clf.fit(X[:10], y[:10])
    before = _state(clf)
    with pytest.raises(ValueError, match="chunk 2"):
        fit_chunks(clf, chunks, progress=False)
    _assert_unchanged(clf, before)
    one_shot = iter(chunks)
    with pytest.raises(ValueError, match="chunk 2"):
        fit_chunks(clf, one_shot, classes=[0, 1], progress=False)
    _assert_unchanged(clf, before)


def test_read_csv_chunks_fit_failing_late_changes_nothing(tmp_path, rng):
    frame = pd.DataFrame({"a": rng.normal(size=50), "b": rng.normal(size=50),
                          "y": np.repeat(["u", "v"], 25)})
    frame.loc[43, "y"] = None  # a missing label in the last chunk
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    clf = bnb.NaiveBayes().fit(frame[["a", "b"]].iloc[:10], frame["y"].iloc[:10])
    before = _state(clf)
    with pytest.raises(ValueError):
        fit_chunks(clf, bnb.outofcore.read_csv_chunks(path, "y", chunksize=20), progress=False)
    _assert_unchanged(clf, before)


def test_concurrent_predict_sees_the_old_or_the_new_model(rng):
    X1, X2 = rng.normal(size=(200, 3)), rng.normal(2.0, 1.0, size=(200, 3))
    y1 = np.repeat([0, 1], 100)
    y2 = np.repeat([0, 1, 2, 3], 50)
    grid = rng.normal(size=(50, 3))
    answers = [bnb.NaiveBayes().fit(X1, y1).predict_proba(grid),
               bnb.NaiveBayes().fit(X2, y2).predict_proba(grid)]
    clf = bnb.NaiveBayes().fit(X1, y1)
    errors, seen = [], []
    stop = threading.Event()

    def predict():
        while not stop.is_set():
            try:
                seen.append(clf.predict_proba(grid))
            except Exception as err:  # noqa: BLE001 - any error is the failure under test
                errors.append(err)
                return

    threads = [threading.Thread(target=predict) for _ in range(2)]
    for t in threads:
        t.start()
    for i in range(30):
        clf.fit(X2, y2) if i % 2 == 0 else clf.fit(X1, y1)
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert seen
    for p in seen:
        assert any(p.shape == a.shape and np.allclose(p, a, rtol=0, atol=1e-6)
                   for a in answers)


def test_partial_fit_matches_dataframe_columns_by_name(rng):
    df = pd.DataFrame({"a": rng.normal(0.0, 1.0, 80), "b": rng.normal(5.0, 2.0, 80)})
    y = np.tile([0, 1], 40)
    batch = bnb.NaiveBayes(method="ml").fit(df, y)
    m = bnb.NaiveBayes(method="ml").partial_fit(df.iloc[:40], y[:40], classes=[0, 1])
    m.partial_fit(df.iloc[40:][["b", "a"]], y[40:])  # the same columns, another order
    for col in ("a", "b"):
        np.testing.assert_allclose(m.conditional_tables()[col].to_numpy(),
                                   batch.conditional_tables()[col].to_numpy(), rtol=1e-5)
    # independent reference: the class means of column a
    np.testing.assert_allclose(m.conditional_tables()["a"]["mean"].to_numpy(),
                               [df["a"][y == k].mean() for k in (0, 1)], rtol=1e-5)
    with pytest.raises(ValueError, match="'b'.*missing"):
        m.partial_fit(df[["a"]], y)


def test_partial_fit_classes_must_match_on_later_calls(rng):
    X = rng.normal(size=(20, 2))
    y = np.tile([0, 1], 10)
    m = bnb.NaiveBayes().partial_fit(X, y, classes=[0, 1, 2])
    m.partial_fit(X, y, classes=[2, 1, 0])  # the same set, any order: accepted
    before = _state(m)
    with pytest.raises(ValueError, match="differs from the classes"):
        m.partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="differs from the classes"):
        m.partial_fit(X, y, classes=[0, 1, 1])
    _assert_unchanged(m, before)


def test_partial_fit_refuses_features_changed_since_the_fit(rng):
    """``set_params(features=...)`` after a fit, then an update: the update would go on with
    the fitted families (scikit-learn's ``MultinomialNB`` takes the new ``alpha``), so it is
    refused, naming the column, and the model is unchanged; unchanged features pass."""
    X = rng.poisson(2.0, size=(20, 3)).astype(float)
    y = np.tile([0, 1], 10)
    m = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0)).fit(X, y)
    fitted = m.fitted_
    m.set_params(features__alpha=50.0)
    with pytest.raises(ValueError, match=r"declares Multinomial\(alpha=50.0\) for column 0, "
                                         r"but the model was fitted with Multinomial\(alpha=1.0"):
        m.partial_fit(X, y)
    m.set_params(features=bnb.Gaussian())
    with pytest.raises(ValueError, match="call fit to fit the declared ones"):
        m.partial_fit(X, y)
    assert m.fitted_ is fitted
    m.set_params(features=bnb.Multinomial(alpha=1.0)).partial_fit(X, y)  # equal: an update
    assert m.class_count_.tolist() == [20, 20]
    frame = pd.DataFrame({"a": list("xyxy"), "b": list("uuvw")})
    ragged = {("a", "b"): bnb.Categorical(categories=[["x", "y"], ["u", "v", "w"]])}
    c = bnb.NaiveBayes(ragged).fit(frame, [0, 1, 0, 1])
    c.set_params(features={("a", "b"): bnb.Categorical(categories=[["x", "y"], ["u", "v", "w"]])})
    c.partial_fit(frame, [0, 1, 0, 1])  # per-column categories of other lengths compare
    assert c.class_count_.tolist() == [4, 4]
