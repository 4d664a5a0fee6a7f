"""Host-side kernels for ``scipy.sparse`` input (Multinomial, Bernoulli, Poisson).

A sparse count matrix is never densified: statistics are ``X.T @ resp`` and plug-in scores
``X @ table.T`` (SciPy's CSR products), and the exact predictive densities are evaluated on the
non-zeros only, so memory stays proportional to the non-zeros plus the parameter tables.
Computation here is float64 NumPy/SciPy whatever JAX's dtype mode (measured: JAX's BCOO was
3-15x slower than SciPy's CSR product for this, ``shared/MEASUREMENTS.md``).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.special import gammaln

from ._base import Schema


def check_sparse(X, schema: Schema, family: str, *, integer=False, binary=False):
    """Validate the stored values of a CSR block; return it as float64 CSR."""
    X = sparse.csr_matrix(X, dtype=np.float64)
    data = X.data
    if np.isnan(data).any():
        col = schema.columns[int(X.indices[np.argmax(np.isnan(data))])]
        raise ValueError(f"column {col!r}: missing values (NaN) are not supported in sparse "
                         f"input; pass a dense array or DataFrame for missing values.")
    checks = [(np.isinf(data), "infinite value"), (data < 0, f"{family} needs non-negative counts")]
    if integer:
        checks.append((data != np.floor(data), f"{family} needs integer counts"))
    if binary:
        checks.append((data != 1, f"{family} needs values in {{0, 1}}"))
    for bad, problem in checks:
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"column {schema.columns[int(X.indices[i])]!r}: {problem}, "
                             f"got {data[i]!r}.")
    return X


def class_totals(X, resp: np.ndarray) -> np.ndarray:
    """``resp.T @ X`` as a dense ``(K, F)`` array."""
    return np.asarray((X.T @ resp).T)


def log_matmul(X, log_table: np.ndarray) -> np.ndarray:
    """``X @ log_table.T`` with ``0 * log 0 = 0``: an entry of -inf only counts where X > 0."""
    log_table = np.asarray(log_table, dtype=np.float64)
    finite = np.isfinite(log_table)
    out = np.asarray(X @ np.where(finite, log_table, 0.0).T)
    if not finite.all():
        hits = np.asarray(X @ (~finite).astype(np.float64).T)
        out = np.where(hits > 0, -np.inf, out)
    return out


def per_nonzero(X, values_of) -> np.ndarray:
    """Row sums ``(n, K)`` of ``values_of(columns, data) -> (K, nnz)`` over the non-zeros."""
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    values = values_of(X.indices, X.data)
    return np.stack([np.bincount(rows, weights=v, minlength=X.shape[0]) for v in values], axis=1)


def row_log_factorials(X) -> np.ndarray:
    """``sum_j log x_ij!`` per row."""
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    return np.bincount(rows, weights=gammaln(X.data + 1.0), minlength=X.shape[0])


def row_sums(X) -> np.ndarray:
    return np.asarray(X.sum(axis=1)).ravel()
