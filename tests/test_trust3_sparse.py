"""Issue 38, "Non-canonical sparse matrices": SciPy defines a cell stored as several entries as
their sum. A CSR matrix with duplicate entries and unsorted column indices is read in its
canonical form, on a copy, by fit, partial_fit and every prediction; the user's matrix is
never changed."""

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

import bayesnb as bnb

N_ROWS, N_COLS = 18, 6
FAMILIES = {"multinomial": bnb.Multinomial, "poisson": bnb.Poisson, "bernoulli": bnb.Bernoulli}


def data(family: str, seed: int):
    """A canonical CSR matrix (counts, or 0/1 for Bernoulli) and two classes that differ."""
    rng = np.random.default_rng(seed)
    y = np.arange(N_ROWS) % 2
    rates = np.where(y[:, None] == 1, np.linspace(0.3, 3, N_COLS), np.linspace(3, 0.3, N_COLS))
    counts = rng.poisson(rates)
    if family == "bernoulli":
        counts = (counts > 1).astype(np.int64)
    X = sparse.csr_matrix(counts.astype(np.float64))
    X.eliminate_zeros()
    return X, y


def split(value: float, family: str, rng) -> list[float]:
    """Entries summing exactly to ``value``: integer parts of a count, binary fractions of a
    Bernoulli 1."""
    if family == "bernoulli":
        return [[1.0], [0.5, 0.5], [0.25, 0.75], [1.0, 0.0], [0.75, 0.125, 0.125]][
            rng.integers(5)]
    k = int(rng.integers(1, 4))
    return [float(p) for p in rng.multinomial(int(value), np.ones(k) / k)]


def noncanonical(X, family: str, seed: int):
    """The same cells, each stored entry split into several (and stray explicit zeros),
    every row's entries shuffled: duplicates and unsorted indices."""
    rng = np.random.default_rng(seed)
    data, indices, indptr = [], [], [0]
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        entries = [(p, j) for v, j in zip(X.data[lo:hi], X.indices[lo:hi], strict=True)
                   for p in split(v, family, rng)]
        entries += [(0.0, int(rng.integers(X.shape[1])))] * int(rng.integers(0, 2))
        order = rng.permutation(len(entries))
        data += [entries[k][0] for k in order]
        indices += [entries[k][1] for k in order]
        indptr.append(len(data))
    out = sparse.csr_matrix((np.array(data), np.array(indices, dtype=np.int32),
                             np.array(indptr, dtype=np.int32)), shape=X.shape)
    np.testing.assert_array_equal(out.toarray(), X.toarray())  # SciPy: the same cells
    return out


def arrays(X) -> tuple:
    return X.data.copy(), X.indices.copy(), X.indptr.copy()


@settings(max_examples=20, deadline=None)
@given(family=st.sampled_from(sorted(FAMILIES)), method=st.sampled_from(["bayes", "mean"]),
       seed=st.integers(0, 2**16))
def test_duplicates_and_unsorted_indices_read_as_their_sums(family, method, seed):
    X, y = data(family, seed)
    X_dup = noncanonical(X, family, seed + 1)
    assert not X_dup.has_canonical_format
    before = arrays(X_dup)
    with jax.enable_x64(True):  # the x64 fixture, inside hypothesis' examples
        model = lambda: bnb.NaiveBayes(FAMILIES[family](), method=method)  # noqa: E731
        canonical = model().fit(X, y)
        fitted = model().fit(X_dup, y)
        for s, t in zip(fitted.blocks_[0].stats, canonical.blocks_[0].stats, strict=True):
            np.testing.assert_array_equal(np.asarray(s), np.asarray(t))
        # the reference: the same cells as a dense array (the dense kernels)
        dense = model().fit(X.toarray(), y)
        for predict in ("predict_proba", "predict_log_proba", "predict_joint_log_proba"):
            got = getattr(fitted, predict)(X_dup)
            np.testing.assert_allclose(got, getattr(canonical, predict)(X), rtol=1e-12)
            np.testing.assert_allclose(got, getattr(dense, predict)(X.toarray()), rtol=1e-9,
                                       atol=1e-12)
        np.testing.assert_array_equal(fitted.predict(X_dup), canonical.predict(X))
        # partial_fit: two non-canonical chunks give the canonical batch fit
        half = N_ROWS // 2
        chunked = model().partial_fit(X_dup[:half], y[:half], classes=[0, 1])
        chunked.partial_fit(X_dup[half:], y[half:])
        np.testing.assert_allclose(chunked.predict_proba(X_dup), canonical.predict_proba(X),
                                   rtol=1e-12)
    for a, b in zip(arrays(X_dup), before, strict=True):  # the user's matrix is unchanged
        np.testing.assert_array_equal(a, b)
    assert not X_dup.has_canonical_format


@pytest.mark.parametrize("kind", ["csr_array", "csc_matrix"])
def test_a_bernoulli_one_in_two_halves_is_a_one(kind):
    """A Bernoulli 1 stored as 0.5 + 0.5 (or 0.25 + 0.75) is a 1, in CSR arrays and in CSC
    matrices (converted to canonical CSR too)."""
    y = np.array([0, 1, 0, 1])
    dense = np.array([[0, 1], [1, 0], [0, 1], [1, 0]], dtype=float)
    if kind == "csr_array":  # rows 0 and 2 store column 1 twice
        X = sparse.csr_array((np.array([0.5, 0.5, 1.0, 0.25, 0.75, 1.0]),
                              np.array([1, 1, 0, 1, 1, 0]), np.array([0, 2, 3, 5, 6])),
                             shape=(4, 2))
    else:  # column 0 stores row 1 twice, column 1 rows 2, 0, 0 (unsorted)
        X = sparse.csc_matrix((np.array([0.5, 0.5, 1.0, 1.0, 0.5, 0.5]),
                               np.array([1, 1, 3, 2, 0, 0]), np.array([0, 3, 6])),
                              shape=(4, 2))
    np.testing.assert_array_equal(X.toarray(), dense)
    clf = bnb.NaiveBayes(bnb.Bernoulli(), method="bayes").fit(X, y)
    ref = bnb.NaiveBayes(bnb.Bernoulli(), method="bayes").fit(dense, y)
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(dense), rtol=1e-5)
