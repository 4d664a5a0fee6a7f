"""Issue 38, section 3: a DataFrame's extension columns (nullable, pyarrow, string, category)
are converted to Python objects chunk by chunk, not whole (it took +550 MB for a 103 MB
``Float64`` frame): peak memory stays within a small multiple of the frame's own size."""

import tracemalloc
import warnings

import jax
import numpy as np
import pandas as pd
import pytest

import bayesnb as bnb

N = 300_000


def numbers(rng):
    return {f"x{i}": rng.normal(size=N) for i in range(5)}


FRAMES = {
    "Float64": lambda rng: pd.DataFrame({k: pd.array(v, dtype="Float64")
                                         for k, v in numbers(rng).items()}),
    "Int64": lambda rng: pd.DataFrame({f"n{i}": pd.array(rng.poisson(4, N), dtype="Int64")
                                       for i in range(5)}),
    "pyarrow": pytest.param(lambda rng: pd.DataFrame(
        {k: pd.array(v, dtype="double[pyarrow]") for k, v in numbers(rng).items()}),
        marks=pytest.mark.skipif(not pytest.importorskip("pyarrow"), reason="pyarrow")),
}


def peaks(clf, X, y, warm=500):
    """Peak bytes traced during the fit and during ``predict_proba``, after fitting and
    predicting the first ``warm`` rows untraced (to compile outside the trace)."""
    clf.fit(X.iloc[:warm], y[:warm]).predict_proba(X.iloc[:warm])
    tracemalloc.start()
    try:
        clf.fit(X, y)
        fit = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        proba = clf.predict_proba(X)
        predict = tracemalloc.get_traced_memory()[1] - proba.nbytes
    finally:
        tracemalloc.stop()
    return fit, predict


@pytest.mark.parametrize("make", list(FRAMES.values()), ids=list(FRAMES))
def test_numeric_extension_columns_stream(make):
    rng = np.random.default_rng(11)
    X = make(rng)
    X.iloc[::97, 1] = pd.NA  # missing values stay missing
    y = rng.integers(0, 3, N)
    size = X.memory_usage(deep=True).sum()
    # warmed on every row: the kernels of the frame's own chunk shape (500 rows compiled
    # other ones, so the traced calls compiled again, slowly, under tracemalloc)
    fit, predict = peaks(bnb.NaiveBayes(), X, y, warm=N)
    # the whole frame as Python objects alone is 4x its size (8-byte pointers to 24-byte floats)
    assert fit < 1.5 * size, (fit, size)
    assert predict < 1.5 * size, (predict, size)
    # the same model as the frame with NumPy columns (NaN for missing), in float64
    part, labels = X.iloc[:5000], y[:5000]
    plain = part.astype("float64")
    with jax.enable_x64(True):
        np.testing.assert_allclose(bnb.NaiveBayes().fit(plain, labels).predict_proba(plain),
                                   bnb.NaiveBayes().fit(part, labels).predict_proba(part),
                                   rtol=1e-12)


@pytest.mark.parametrize("dtype", ["string", "category"])
def test_text_extension_columns_stream(dtype):
    """A Categorical block is encoded in chunks of about a million cells (``_host``), so past
    that the peak grows only by the labels' arrays, not by the frame as Python objects."""
    rng = np.random.default_rng(12)
    words = np.array(["north", "south", "east", "west", None], dtype=object)

    def frame(n):
        return pd.DataFrame({f"w{i}": pd.Series(words[rng.integers(0, 5, n)], dtype=dtype)
                             for i in range(5)}), rng.integers(0, 2, n)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        small = peaks(bnb.NaiveBayes(), *frame(N))
        large = peaks(bnb.NaiveBayes(), *frame(3 * N))
    for before, after in zip(small, large, strict=True):  # fit, predict
        assert after - before < 2 * N * 40, (before, after)  # 40 bytes a row more at most
    X, y = frame(2000)
    reference = X.astype(object).where(X.notna(), None)
    np.testing.assert_array_equal(bnb.NaiveBayes().fit(reference, y).predict_proba(reference),
                                  bnb.NaiveBayes().fit(X, y).predict_proba(X))
