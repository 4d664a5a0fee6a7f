"""Issue 38, "Dask X with an in-memory y": ``dd.from_pandas`` keeps a frame's rows in index
order, so a pandas ``y`` or ``sample_weight`` is aligned on X's index, not cut by position;
one whose index does not hold X's row labels is refused."""

import jax
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

dd = pytest.importorskip("dask.dataframe")

from test_outofcore import assert_same_fit  # noqa: E402

import bayesnb as bnb  # noqa: E402


def shuffled(seed: int, n: int = 60):
    """A frame whose index is a shuffled range (as after a shuffle or a sample), labels that
    depend on the features, and weights."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": rng.normal(4 * y, 1.0), "b": rng.normal(-3 * y, 0.5),
                      "c": np.where(rng.random(n) < 0.8, np.where(y == 1, "p", "q"), "r")},
                     index=rng.permutation(n) + 1000)
    return X, pd.Series(np.array(["no", "yes"])[y], index=X.index, name="y"), \
        pd.Series(rng.choice([0.5, 1.0, 1.5, 2.0, 3.25], n), index=X.index)  # exact sums


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), npartitions=st.integers(1, 4), weighted=st.booleans())
def test_a_pandas_y_is_aligned_on_the_index_of_a_shuffled_frame(seed, npartitions, weighted):
    X, y, w = shuffled(seed)
    dX = dd.from_pandas(X, npartitions=npartitions)  # rows sorted by index
    rng = np.random.default_rng(seed + 1)
    # y and the weights in yet other row orders: only their index says which row is which
    y_other = y.iloc[rng.permutation(len(y))]
    w_other = w.iloc[rng.permutation(len(w))] if weighted else None
    with jax.enable_x64(True):  # the x64 fixture, inside hypothesis' examples
        model = bnb.NaiveBayes().fit(dX, y_other, sample_weight=w_other)
        # the in-memory fit of the same rows in Dask's order (so sums round alike)
        rows = X.sort_index().index
        batch = bnb.NaiveBayes().fit(X.loc[rows], y.loc[rows],
                                     sample_weight=w.loc[rows] if weighted else None)
        assert_same_fit(model, batch, rtol=1e-12)
        # the reference: per-class (weighted) means of column "a" by NumPy
        weights = w.to_numpy() if weighted else np.ones(len(y))
        means = [np.average(X["a"][y == c], weights=weights[(y == c).to_numpy()])
                 for c in ("no", "yes")]
        gaussian = next(b for b in model.blocks_ if "a" in b.schema.columns)
        j = list(gaussian.schema.columns).index("a")
        np.testing.assert_allclose(np.asarray(gaussian.stats.mean)[:, j], means, rtol=1e-12)
        np.testing.assert_allclose(model.predict_proba(X), batch.predict_proba(X), rtol=1e-9)


def test_a_numpy_y_follows_the_rows_of_x_in_partition_order(x64):
    """What docs/user_guide/outofcore.md says: a NumPy y is read in X.compute()'s row order."""
    X, y, _ = shuffled(7)
    dX = dd.from_pandas(X, npartitions=3)
    in_order = y.loc[dX.index.compute()].to_numpy()
    model = bnb.NaiveBayes().fit(dX, in_order)
    assert_same_fit(model, bnb.NaiveBayes().fit(X, y), rtol=1e-12)


def test_a_pandas_y_that_cannot_be_aligned_is_refused():
    X, y, w = shuffled(3)
    dX = dd.from_pandas(X, npartitions=2)
    with pytest.raises(ValueError, match=r"y is a pandas Series whose index lacks X's row "
                                         r"label"):
        bnb.NaiveBayes().fit(dX, y.reset_index(drop=True))  # positions 0..59, not labels
    with pytest.raises(ValueError, match=r"sample_weight .*index lacks X's row label 1007"):
        bnb.NaiveBayes().fit(dX, y, sample_weight=w.rename(index={1007: 5}))
    repeated = y.set_axis(np.r_[y.index[:-1], y.index[0]])
    with pytest.raises(ValueError, match="repeated labels"):
        bnb.NaiveBayes().fit(dX, repeated)
    with pytest.raises(ValueError, match="X has 60 rows but y has 59"):
        bnb.NaiveBayes().fit(dX, y.iloc[1:])
