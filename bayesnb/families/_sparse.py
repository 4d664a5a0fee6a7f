"""Host-side kernels for ``scipy.sparse`` input (Multinomial, Bernoulli, Poisson).

A sparse count matrix is never densified: statistics are per-class sums of the stored values
and plug-in scores ``X @ table.T`` (SciPy's CSR product), and the exact predictive densities are
evaluated on the non-zeros only, so memory stays proportional to the non-zeros plus the parameter
tables. Computation here is float64 NumPy/SciPy whatever JAX's dtype mode (measured: JAX's BCOO
was 3-15x slower than SciPy's CSR product for this, ``shared/MEASUREMENTS.md``).

Costs are kept at a few passes over ``X.data`` (``benchmarks/sparse.py``): validation is two
reductions (the offending column is searched for only once one fails), per-class sums scatter
each stored value once into its class's row (O(non-zeros), where ``X.T @ resp`` is
O(non-zeros x classes)), and the log-factorials of integer counts come from a table.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from scipy import sparse
from scipy.special import gammaln

from ._base import Schema

#: largest integer count read from the log-factorial table (uint16 codes)
_TABLE_MAX = int(np.iinfo(np.uint16).max)
#: stored values per block in the blocked passes
_BLOCK = 1 << 16


class Labels(NamedTuple):
    """The one-hot ``(n, K)`` ``resp`` of the dense kernels, kept as codes and row weights.

    The ``sparse_*`` statistics take either form; this one makes the per-class sums cost a
    scatter per stored value instead of a product with ``K`` columns.
    """

    codes: np.ndarray  # (n,) class index of every row
    weight: np.ndarray  # (n,) row weights
    n_classes: int


def row_weights(resp) -> np.ndarray:
    """``(n,)`` total weight of each row."""
    if isinstance(resp, Labels):
        return np.asarray(resp.weight, dtype=np.float64)
    return np.asarray(resp, dtype=np.float64).sum(axis=1)


def class_weights(resp) -> np.ndarray:
    """``(K,)`` total weight of each class."""
    if isinstance(resp, Labels):
        return np.bincount(resp.codes, weights=resp.weight, minlength=resp.n_classes)
    return np.asarray(resp, dtype=np.float64).sum(axis=0)


def check_sparse(X, schema: Schema, family: str, *, integer=False, binary=False):
    """Validate the stored values of a sparse block; return it as float64 CSR.

    A float64 CSR input is returned as is (no copy). The common case costs ``data.min()`` and
    ``data.max()`` (NaN propagates through both); the per-value checks below only run to name
    the column once those fail.
    """
    X = sparse.csr_matrix(X, dtype=np.float64)
    data = X.data
    if data.size == 0:
        return X
    lo, hi = data.min(), data.max()
    if binary:
        ok = lo == 1 and hi == 1 or (lo >= 0 and hi <= 1
                                     and np.all((data == 0) | (data == 1)))
    else:
        ok = lo >= 0 and hi < np.inf and not (integer and np.any(data != np.floor(data)))
    if ok:
        return X
    nan = np.isnan(data)
    if nan.any():
        col = schema.columns[int(X.indices[np.argmax(nan)])]
        raise ValueError(f"column {col!r}: missing values (NaN) are not supported in sparse "
                         f"input; pass a dense array or DataFrame for missing values.")
    checks = [(np.isinf(data), "infinite value"), (data < 0, f"{family} needs non-negative counts")]
    if integer:
        checks.append((data != np.floor(data), f"{family} needs integer counts"))
    if binary:
        checks.append(((data != 0) & (data != 1), f"{family} needs values in {{0, 1}}"))
    for bad, problem in checks:
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"column {schema.columns[int(X.indices[i])]!r}: {problem}, "
                             f"got {data[i]!r}.")
    raise AssertionError("unreachable: a failed range check names a value")  # pragma: no cover


def _row_of_each_value(X, per_row: np.ndarray) -> np.ndarray:
    """``per_row[i]`` repeated for every stored value of row ``i`` (CSR order)."""
    return np.repeat(per_row, np.diff(X.indptr))


def class_totals(X, resp) -> np.ndarray:
    """``resp.T @ X`` as a dense ``(K, F)`` float64 array."""
    if not isinstance(resp, Labels):
        return np.asarray((X.T @ np.asarray(resp, dtype=np.float64)).T)
    data = X.data
    if not np.all(resp.weight == 1):
        data = data * _row_of_each_value(X, np.asarray(resp.weight, dtype=np.float64))
    # a COO matrix with the class as row index: toarray adds duplicates in CSR order
    rows = _row_of_each_value(X, resp.codes)
    coo = sparse.coo_matrix((data, (rows, X.indices)), shape=(resp.n_classes, X.shape[1]))
    return coo.toarray()


def log_matmul(X, log_table: np.ndarray) -> np.ndarray:
    """``X @ log_table.T`` with ``0 * log 0 = 0``: an entry of -inf only counts where X > 0."""
    log_table = np.asarray(log_table, dtype=np.float64)
    finite = np.isfinite(log_table)
    if finite.all():
        return X @ np.ascontiguousarray(log_table.T)
    out = X @ np.ascontiguousarray(np.where(finite, log_table, 0.0).T)
    hits = X @ np.ascontiguousarray((~finite).T, dtype=np.float64)
    out[hits > 0] = -np.inf
    return out


def per_nonzero(X, values_of) -> np.ndarray:
    """Row sums ``(n, K)`` of ``values_of(columns, data) -> (K, nnz)`` over the non-zeros."""
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    values = values_of(X.indices, X.data)
    return np.stack([np.bincount(rows, weights=v, minlength=X.shape[0]) for v in values], axis=1)


@functools.cache
def _log_factorial_table() -> np.ndarray:
    """``log k!`` for ``k = 0 .. 65535`` (512 KiB, built once)."""
    return gammaln(np.arange(_TABLE_MAX + 1, dtype=np.float64) + 1.0)


def log_factorials(values: np.ndarray) -> np.ndarray:
    """``log Γ(x + 1)`` of a block of values; integer counts are read from a table."""
    if values.size and values.max() <= _TABLE_MAX:
        codes = values.astype(np.uint16)
        if np.array_equal(codes, values):
            return _log_factorial_table().take(codes)
    return gammaln(values + 1.0)


def _blocks(n: int):
    """Slices of ``_BLOCK`` stored values: a block's temporaries stay in cache and out of
    fresh pages (whole-array temporaries doubled the cost of this pass, measured)."""
    return (slice(a, a + _BLOCK) for a in range(0, n, _BLOCK))


def weighted_log_factorials(X, weight: np.ndarray) -> float:
    """``sum_i weight_i sum_j log Γ(x_ij + 1)`` over the stored values (validated, >= 0)."""
    data = X.data
    weight = np.asarray(weight, dtype=np.float64)
    if data.size == 0:
        return 0.0
    if weight.min() == weight.max():  # one weight (the unweighted fit): a plain sum
        return float(weight[0] * sum(log_factorials(data[b]).sum() for b in _blocks(data.size)))
    values = np.empty_like(data)
    for b in _blocks(data.size):
        values[b] = log_factorials(data[b])
    return float(values @ _row_of_each_value(X, weight))


def row_log_factorials(X) -> np.ndarray:
    """``sum_j log x_ij!`` per row."""
    if X.data.size == 0:
        return np.zeros(X.shape[0])
    rows = _row_of_each_value(X, np.arange(X.shape[0]))
    values = np.empty_like(X.data)
    for b in _blocks(values.size):
        values[b] = log_factorials(X.data[b])
    return np.bincount(rows, weights=values, minlength=X.shape[0])


def row_sums(X) -> np.ndarray:
    return np.asarray(X.sum(axis=1)).ravel()
