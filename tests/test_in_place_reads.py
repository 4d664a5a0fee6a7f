"""Float64 fits whose statistics kernel reads the user's array where it lies
(``fast._in_place``: an aligned body and two edge rows, no staging copy): the same class
totals and log multinomial coefficient as a float64 NumPy / SciPy computation, at every
alignment of the array, in every chunk (the last one reading rows the previous one counted);
chunks with other values than small integer counts redone from copies, and invalid values
refused by row and column wherever they lie; the staging copy wherever the array cannot be
read in place."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import gammaln

import bayesnb as bnb
from bayesnb.fast import _host, _in_place, _kernels


def reference(X, y, k, w=None):
    """Class totals and the weighted sum of the rows' log multinomial coefficients (missing
    counts add nothing), in float64 NumPy and SciPy."""
    w = np.ones(len(y)) if w is None else w
    x = np.nan_to_num(X, nan=0.0)
    counts = np.zeros((k, X.shape[1]))
    np.add.at(counts, y, w[:, None] * x)
    coef = gammaln(x.sum(axis=1) + 1.0) - gammaln(x + 1.0).sum(axis=1)
    return counts, float(w @ coef)


def at_offset(X, offset: int) -> np.ndarray:
    """A copy of ``X`` starting ``offset`` float64 values into a fresh buffer: each offset
    puts the chunks' first 64-byte boundary at another column."""
    buf = np.empty(X.size + 8)
    out = buf[offset:offset + X.size].reshape(X.shape)
    out[...] = X
    return out


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of a few hundred rows: several per fit, the last one overlapping the one before."""
    monkeypatch.setattr(_kernels, "CHUNK_BYTES", 1 << 16)
    monkeypatch.setattr(_host, "counted_on_host", lambda *args: False)


def spy(monkeypatch) -> dict:
    """Counts the chunks read in place and the staging buffers made."""
    seen = {"in place": 0, "staged": 0}
    fill, staging = _kernels._InPlace.fill, _kernels._Staging.__init__

    def counted_fill(self, *args):
        seen["in place"] += 1
        return fill(self, *args)

    def counted_staging(self, *args, **kwargs):
        seen["staged"] += 1
        return staging(self, *args, **kwargs)

    monkeypatch.setattr(_kernels._InPlace, "fill", counted_fill)
    monkeypatch.setattr(_kernels._Staging, "__init__", counted_staging)
    return seen


def fitted_stats(X, y, w=None):
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0)).fit(X, y, sample_weight=w)
    return clf.blocks_[0].stats


def counts_data(n, f, seed=0, fraction=False, missing=False):
    rng = np.random.default_rng(seed)
    X = rng.poisson(rng.gamma(1.0, 1.5, f), (n, f)).astype(np.float64)
    if fraction:
        X[rng.random(X.shape) < 0.1] += 0.37
    if missing:
        X[rng.random(X.shape) < 0.02] = np.nan
    return X, rng.integers(0, 4, n)


@pytest.mark.parametrize("offset", range(8))
@pytest.mark.parametrize("case", ["counts", "fractions", "missing", "weights", "zero weights"])
def test_in_place_fit_matches_the_float64_reference(x64, small_chunks, monkeypatch, offset,
                                                     case):
    X, y = counts_data(1000, 30, seed=offset, fraction=case == "fractions",
                       missing=case == "missing")
    rng = np.random.default_rng(offset)
    w = None
    if case == "weights":
        w = rng.integers(0, 5, len(y)).astype(np.float64)
    elif case == "zero weights":
        w = (rng.random(len(y)) < 0.8).astype(np.float64)
    seen = spy(monkeypatch)
    stats = fitted_stats(at_offset(X, offset), y, w)
    # 4 chunks of 256 rows, the last from row 744; values other than small integer counts
    # send the first chunk (and, dispatched before its result came, the second) to copies
    copied = case in ("fractions", "missing")
    assert seen == ({"in place": 2, "staged": 1} if copied else {"in place": 4, "staged": 0})
    counts, coef = reference(X, y, 4, w)
    np.testing.assert_allclose(stats.counts, counts, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(stats.log_coef, coef, rtol=1e-12)


@pytest.mark.parametrize("offset", [0, 3, 7])
@pytest.mark.parametrize("row, column", [(0, 0), (0, 6), (0, 29), (255, 0), (255, 29),
                                         (256, 2), (743, 29), (744, 0), (760, 5), (999, 29),
                                         (999, 0)])
def test_invalid_counts_are_refused_by_row_and_column_wherever_they_lie(
        x64, small_chunks, offset, row, column):
    X, y = counts_data(1000, 30)
    X[row, column] = -1.0
    with pytest.raises(ValueError, match=rf"column {column}: .*non-negative.*\(row {row}\)"):
        fitted_stats(at_offset(X, offset), y)


@pytest.mark.parametrize("row, column", [(0, 0), (255, 29), (750, 3), (999, 29)])
def test_missing_counts_at_the_edges(x64, small_chunks, row, column):
    X, y = counts_data(1000, 30)
    X[row, column] = np.nan
    counts, coef = reference(X, y, 4)
    stats = fitted_stats(at_offset(X, 5), y)
    np.testing.assert_allclose(stats.counts, counts, rtol=1e-13)
    np.testing.assert_allclose(stats.log_coef, coef, rtol=1e-12)


@pytest.mark.parametrize("case", ["7 columns", "Fortran order", "every other column",
                                  "float32 input", "one short chunk"])
def test_staging_where_the_array_cannot_be_read_in_place(x64, small_chunks, monkeypatch,
                                                         case):
    X, y = counts_data(1000, 30)
    if case == "7 columns":
        X = X[:, :7].copy()
    elif case == "Fortran order":
        X = np.asfortranarray(X)
    elif case == "every other column":
        X = counts_data(1000, 60)[0][:, ::2]
    elif case == "float32 input":
        X = X.astype(np.float32)
    elif case == "one short chunk":
        X, y = X[:200], y[:200]
    seen = spy(monkeypatch)
    stats = fitted_stats(X, y)
    assert seen["in place"] == 0 and seen["staged"] == 1
    counts, coef = reference(np.asarray(X, dtype=np.float64), y, 4)
    np.testing.assert_allclose(stats.counts, counts, rtol=1e-13)
    np.testing.assert_allclose(stats.log_coef, coef, rtol=1e-12)


def test_the_body_is_a_view_of_the_array():
    X = at_offset(np.arange(40.0 * 9).reshape(40, 9), 3)
    rows = _in_place.rows_in_place(X)
    s = int(rows.shift)
    assert rows.body.ctypes.data % 64 == 0 and np.shares_memory(rows.body, X)
    np.testing.assert_array_equal(rows.body[0], np.concatenate([X[0, s:], X[1, :s]]))
    np.testing.assert_array_equal(rows.edges[0, :s], X[0, :s])
    np.testing.assert_array_equal(rows.edges[1, s:], X[-1, s:])
    assert not rows.edges[0, s:].any() and not rows.edges[1, :s].any()


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(300, 1200), f=st.integers(8, 48), offset=st.integers(0, 7),
       seed=st.integers(0, 2 ** 16), fraction=st.booleans(), missing=st.booleans())
def test_in_place_sums_equal_the_reference(x64, small_chunks, n, f, offset, seed, fraction,
                                           missing):
    X, y = counts_data(n, f, seed, fraction, missing)
    stats = fitted_stats(at_offset(X, offset), y)
    counts, coef = reference(X, y, len(np.unique(y)))
    np.testing.assert_allclose(stats.counts, counts[np.unique(y)], rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(stats.log_coef, coef, rtol=1e-12)


@pytest.mark.parametrize("classes, weighted", [(100, False), (100, True), (3, True)])
def test_many_classes_and_fractional_weights(x64, monkeypatch, classes, weighted):
    # 100 classes: the class sums by blocked scatter-adds (past Labels.DOT_CLASSES)
    rng = np.random.default_rng(classes)
    X = rng.poisson(0.7, (20000, 50)).astype(np.float64)
    y = rng.integers(0, classes, len(X))
    w = rng.random(len(X)) * 3 if weighted else None
    seen = spy(monkeypatch)
    stats = fitted_stats(at_offset(X, 3), y, w)
    assert seen == {"in place": 2, "staged": 0}
    counts, coef = reference(X, y, classes, w)
    np.testing.assert_allclose(stats.counts, counts, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(stats.log_coef, coef, rtol=1e-12)
