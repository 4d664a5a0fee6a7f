"""Issue 38, section 2: scikit-learn's clone contract for families (GridSearchCV never rewrites
the caller's family objects; a fitted model owns its copies) and thread-safe updates."""

import threading

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

import bayesnb as bnb


def counts(seed=0, n=90, width=4):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.poisson(1.0 + y[:, None] * np.arange(1, width + 1) / width, (n, width))
    return X, y


def test_grid_search_leaves_the_callers_family_alone(tmp_path):
    X, y = counts()
    bag = bnb.Multinomial(alpha=0.7)
    grid = GridSearchCV(bnb.NaiveBayes(bag), {"features__alpha": [0.05, 3.0]}, cv=3).fit(X, y)
    assert bag.alpha == 0.7
    assert grid.best_estimator_.features is not bag
    assert grid.best_estimator_.features.alpha in (0.05, 3.0)


def test_a_fitted_model_owns_its_families(tmp_path):
    X, y = counts(1)
    rate = bnb.Poisson(shape=2.0, rate=1.0)
    clf = bnb.NaiveBayes(rate, method="bayes").fit(X, y)
    before = clf.predict_proba(X)
    rate.set_params(shape=40.0)
    assert clf.blocks_[0].family.shape == 2.0
    np.testing.assert_array_equal(clf.predict_proba(X), before)
    loaded = bnb.load(bnb.save(clf, tmp_path / "m.bnb"))  # its file loads (prior agrees)
    np.testing.assert_array_equal(loaded.predict_proba(X), before)
    # a later fit reads the family as it is then
    assert clf.fit(X, y).blocks_[0].family.shape == 40.0


def test_clone_keeps_one_instance_per_block_and_copies_it():
    X, y = counts(2, width=5)
    frame = pd.DataFrame(X, columns=list("abcde"))
    bag, flag = bnb.Multinomial(alpha=0.5), bnb.Poisson()
    clf = bnb.NaiveBayes({"a": bag, "b": bag, "c": bag, "d": flag, "e": flag})
    twin = clone(clf)
    f = twin.features
    assert f["a"] is f["b"] is f["c"] and f["d"] is f["e"]
    assert f["a"] is not bag and f["d"] is not flag and f["a"] == bag
    twin.set_params(features={**f})
    f["a"].set_params(alpha=9.0)
    assert bag.alpha == 0.5
    fitted = twin.fit(frame, y)
    assert len(fitted.blocks_) == 2  # the shared instance is still one block
    assert fitted.blocks_[0].family.alpha == 9.0 and clf.features["a"].alpha == 0.5


def test_cloning_a_family_gives_an_equal_new_object():
    fam = bnb.Gaussian(pooled=True)
    twin = clone(fam)
    assert twin is not fam and twin == fam
    twin.set_params(pooled=False)
    assert fam.pooled is True


# ---------------------------------------------------------------- threads
@pytest.mark.parametrize("threads", [4, 6])
def test_concurrent_partial_fit_keeps_every_row(threads):
    rng = np.random.default_rng(threads)
    n = 3_000
    X = pd.DataFrame({"g": rng.normal(size=n), "c": rng.choice(["x", "y", "z"], n)})
    y = rng.integers(0, 2, n)
    clf = bnb.NaiveBayes()
    clf.partial_fit(X.iloc[:10], y[:10], classes=[0, 1])
    parts = np.array_split(np.arange(10, n), threads * 8)
    barrier = threading.Barrier(threads)
    errors = []

    def work(mine):
        barrier.wait()
        try:
            for idx in mine:
                clf.partial_fit(X.iloc[idx], y[idx])
        except Exception as err:  # noqa: BLE001 - reported by the assertion below
            errors.append(err)

    workers = [threading.Thread(target=work, args=(parts[i::threads],)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors
    np.testing.assert_array_equal(clf.class_count_, np.bincount(y, minlength=2))
    batch = bnb.NaiveBayes().fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), batch.predict_proba(X), rtol=1e-5,
                               atol=1e-6)
