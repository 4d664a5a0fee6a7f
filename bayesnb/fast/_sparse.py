"""Host-side kernels for ``scipy.sparse`` input (Multinomial, Bernoulli, Poisson), whose
products and exact predictives also score the dense float64 blocks of small calls
(``_host.scored_on_host``).

A sparse count matrix is never densified: statistics are per-class sums of the stored values
and plug-in scores ``X @ table.T`` (SciPy's CSR product), and the exact predictive densities are
evaluated on the non-zeros only, so memory stays proportional to the non-zeros plus the parameter
tables. Computation here is float64 NumPy/SciPy whatever JAX's dtype mode (JAX's BCOO product
is slower than SciPy's CSR product for this).

Costs are kept at a few passes over ``X.data``: validation is two reductions (the offending
column is searched for only once one fails), per-class sums scatter each stored value once into
its class's row (O(non-zeros), where ``X.T @ resp`` is O(non-zeros x classes)), and the
log-factorials of integer counts come from a table.
"""

from __future__ import annotations

import functools
import weakref
from typing import NamedTuple

import jax
import numpy as np
from scipy import sparse
from scipy.special import gammaln

from ..families._base import FLOAT64_SAFE, Schema, stirling_tail

#: largest integer count read from the log-factorial table (uint16 codes)
_TABLE_MAX = int(np.iinfo(np.uint16).max)
#: stored values per block in the blocked row passes: a block's temporaries stay in the cache
#: (re-measure with benchmarks/tune.py _BLOCK)
_BLOCK = 1 << 16


class Labels(NamedTuple):
    """The one-hot ``(n, K)`` ``resp`` of the dense kernels, kept as codes and row weights.

    The ``sparse_*`` statistics take either form; this one makes the per-class sums cost a
    scatter per stored value instead of a product with ``K`` columns.
    """

    codes: np.ndarray  # (n,) class index of every row
    weight: np.ndarray  # (n,) row weights
    n_classes: int

    def one_hot(self) -> np.ndarray:
        """``(n, K)`` float64: the weighted one-hot ``resp`` these codes and weights stand for."""
        hot = np.zeros((self.codes.shape[0], self.n_classes))
        hot[np.arange(self.codes.shape[0]), self.codes] = self.weight
        return hot


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
    else:  # the sparse paths compute in float64: its range, as a dense block's in x64
        ok = lo >= 0 and hi <= FLOAT64_SAFE and not (integer and
                                                     np.any(data != np.floor(data)))
    if ok:
        return X
    def where(i):  # the column and row of stored value i
        row = int(np.searchsorted(X.indptr, i, side="right")) - 1
        return f"column {schema.columns[int(X.indices[i])]!r}", f"row {row}"

    nan = np.isnan(data)
    if nan.any():
        col, row = where(int(np.argmax(nan)))
        raise ValueError(f"{col}: missing values (NaN) are not supported in sparse input "
                         f"({row}); pass a dense array or DataFrame for missing values.")
    checks = [(np.isinf(data), "infinite value")]
    if binary:  # as a dense block says it (a negative value is not 0 or 1 either)
        checks.append(((data != 0) & (data != 1), f"{family} needs values in {{0, 1}} "
                                                  f"(or booleans)"))
    else:
        checks += [(data < 0, f"{family} needs non-negative counts"),
                   (data > FLOAT64_SAFE, f"too large for the computation: its square overflows "
                                         f"float64 (values must stay within "
                                         f"+-{FLOAT64_SAFE:g}); rescale the column")]
    if integer:
        checks.append((data != np.floor(data), f"{family} needs integer counts"))
    for bad, problem in checks:
        if bad.any():
            i = int(np.argmax(bad))
            col, row = where(i)
            raise ValueError(f"{col}: {problem}, got {float(data[i])!r} ({row}).")
    raise AssertionError("unreachable: a failed range check names a value")  # pragma: no cover


def _row_of_each_value(X, per_row: np.ndarray) -> np.ndarray:
    """``per_row[i]`` repeated for every stored value of row ``i`` (CSR order)."""
    return np.repeat(per_row, np.diff(X.indptr))


def class_totals(X, resp) -> np.ndarray:
    """``resp.T @ X`` as a dense ``(K, F)`` float64 array."""
    if not isinstance(resp, Labels):
        return np.asarray((X.T @ np.asarray(resp, dtype=np.float64)).T)
    if not sparse.issparse(X):  # a dense block (``_host.counted_on_host``): one product
        return resp.one_hot().T @ X
    data = X.data
    if not np.all(resp.weight == 1):
        data = data * _row_of_each_value(X, np.asarray(resp.weight, dtype=np.float64))
    # a COO matrix with the class as row index: toarray adds duplicates in CSR order, into an
    # output it zeroes itself (out=), not np.zeros' lazily zeroed pages, whose cost varies
    rows = _row_of_each_value(X, resp.codes)
    coo = sparse.coo_matrix((data, (rows, X.indices)), shape=(resp.n_classes, X.shape[1]))
    return coo.toarray(out=np.empty(coo.shape))


#: prepared product operands by the ids of the JAX tables they were built from
_prepared: dict[tuple, tuple] = {}


def prepared(tables: tuple, build):
    """``build()``, computed once per tuple of JAX arrays and reused while they live.

    JAX arrays and read-only NumPy arrays (the host-computed tables, ``_kernels.estimate``) are
    immutable, so an operand derived from a fitted table (float64, transposed, infinities split
    off: a few passes over ``(K, F)``) stays valid as long as the table. The entry goes when
    any of the tables is freed. Other arrays (writable NumPy tables may change in place) are
    prepared on every call.
    """
    if not all(isinstance(t, jax.Array) or (isinstance(t, np.ndarray) and not t.flags.writeable)
               for t in tables):
        return build()
    key = tuple(id(t) for t in tables)
    hit = _prepared.get(key)
    if hit is not None and all(ref() is t for ref, t in zip(hit[0], tables, strict=True)):
        return hit[1]
    value = build()
    _prepared[key] = (tuple(weakref.ref(t) for t in tables), value)
    for t in tables:
        weakref.finalize(t, _prepared.pop, key, None)
    return value


class Operand(NamedTuple):
    """A ``(K, F)`` table as both products read it (:func:`times`)."""

    by_rows: np.ndarray  # (F, K) C-contiguous: SciPy's sparse product
    by_classes: np.ndarray  # (K, F) C-contiguous: the dense product

    @classmethod
    def of(cls, table) -> Operand:
        # copies, never the table itself: a cached operand must not keep its table alive
        table = np.asarray(table, dtype=np.float64)
        return cls(np.array(table.T, order="C"), np.array(table, order="C"))


def times(X, operand: Operand) -> np.ndarray:
    """``(n, K)``: ``X @ table.T``. A dense X's product is taken as ``(table @ X.T).T`` (an
    F-ordered view): OpenBLAS computes a product with a short left operand faster (0.72
    against 1.0 ms for 5,000 x 300 float64 rows and 10 classes); a sparse X's by SciPy."""
    if isinstance(X, np.ndarray):
        return (operand.by_classes @ X.T).T
    return X @ operand.by_rows


def log_matmul(X, log_table) -> np.ndarray:
    """``X @ log_table.T`` with ``0 * log 0 = 0``: an entry of -inf only counts where X > 0."""

    def operands():
        table = np.asarray(log_table, dtype=np.float64)
        finite = np.isfinite(table)
        if finite.all():
            return Operand.of(table), None
        return Operand.of(np.where(finite, table, 0.0)), Operand.of((~finite).astype(float))

    weights, impossible = prepared((log_table,), operands)
    out = times(X, weights)
    if impossible is not None:
        out[times(X, impossible) > 0] = -np.inf
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


def _row_blocks(X, block: int = _BLOCK):
    """Row ranges of about ``block`` stored values each (a longer row is a block of its own):
    a block's temporaries stay in cache and out of fresh pages."""
    cuts = np.searchsorted(X.indptr, np.arange(block, X.nnz, block), side="right") - 1
    bounds = np.unique(np.concatenate([[0], cuts, [X.shape[0]]]))
    return zip(bounds[:-1], bounds[1:], strict=True)


def row_totals(X) -> tuple[np.ndarray, np.ndarray]:
    """Per row, ``sum_j x_ij`` and ``sum_j log Γ(x_ij + 1)`` over the stored values, in one
    blocked pass (the Multinomial coefficient and the Poisson normaliser need both or one)."""
    n = X.shape[0]
    sums, log_fact = np.zeros(n), np.zeros(n)
    indptr, data = X.indptr, X.data
    for r0, r1 in _row_blocks(X):
        a, b = indptr[r0], indptr[r1]
        if a == b:
            continue
        starts = indptr[r0:r1] - a
        filled = starts < indptr[r0 + 1:r1 + 1] - a  # reduceat needs non-empty segments
        at = starts[filled]
        values = data[a:b]
        sums[r0:r1][filled] = np.add.reduceat(values, at)
        log_fact[r0:r1][filled] = np.add.reduceat(log_factorials(values), at)
    return sums, log_fact


# ------------------------------------------------------------------ exact count predictives
def log_rising(a, x) -> np.ndarray:
    r"""float64 :math:`h(a, x) = \log\Gamma(a + x) - \log\Gamma(a) - x\log a` for ``a > 0``,
    ``x >= 0`` (broadcast), accurate to its own magnitude.

    The NumPy twin of ``families._base.log_rising`` (which runs in the kernels' dtype): below
    ``a = 10`` log-Gamma directly; above, Stirling's series with two more terms (truncation
    below 1e-13 at ``a = 10``), so large ``a`` do not cancel two huge log-Gamma values. With
    integer ``x`` it equals :math:`\sum_{t=1}^{x-1}\log(1 + t/a)`."""
    a = np.asarray(a, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    big = a >= 10.0
    ab = np.where(big, a, 10.0)
    u = x / ab
    l1p = np.log1p(u)
    us = np.minimum(u, 0.25)
    series = np.zeros_like(us)
    for k in range(_series_degree(us), 3, -1):  # sum_{k>=4} (-u)^k / (k (k - 1)), Horner
        series = series * us + (-1) ** k / (k * (k - 1))
    series = series * us**4
    with np.errstate(invalid="ignore"):
        tail = np.where(u < 0.25, series, (1.0 + u) * l1p - u - u * u * (0.5 - u / 6.0))

    # past u = 1/4 the closed form (a + x - 1/2) log(1 + u) - x: a psi(u) less its u^3 term
    # would cancel (a = 12, x = 1e7: 357 nats off)
    with np.errstate(invalid="ignore"):
        near = (ab * tail - 0.5 * l1p + x * x / (2.0 * ab) - x**3 / (6.0 * ab * ab))
    large = (np.where(u < 0.25, near, (ab + x - 0.5) * l1p - x)
             + (stirling_tail(ab + x) - stirling_tail(ab)))
    if np.all(big):  # the usual case for posterior totals: no log-Gamma to evaluate
        return large
    a_small = np.where(big, 1.0, a)
    small = gammaln(a_small + x) - gammaln(a_small) - x * np.log(a_small)
    return np.where(big, large, small)


def _series_degree(us: np.ndarray) -> int:
    """The last power of ``log_rising``'s series its largest ``u`` below 1/4 needs (the
    others take the closed form): the next term,
    :math:`u^{k+1} / ((k + 1) k)`, below ``1e-16`` times the leading :math:`u^2 / 2` (24 at
    ``u = 1/4``; 7 at the ``u`` of documents against a class total, ``1e-3``)."""
    top = float(np.max(us, initial=0.0, where=us < 0.25))  # the rest take the closed form
    degree = 4
    while degree < 24 and 2.0 * top ** (degree - 1) > 1e-16 * (degree + 1) * degree:
        degree += 1
    return degree


#: float64 entries (8 MiB) of a posterior's table of :func:`log_rising` by integer row total
#: (:func:`log_rising_by_row`), a memory bound
TOTALS_ENTRIES = 1 << 20
#: those tables by the identity of the posterior they come from
_rising_totals: dict = {}


def log_rising_by_row(a: np.ndarray, n: np.ndarray, owner=None) -> np.ndarray:
    """``(rows, K)``: :func:`log_rising` of the ``(K,)`` totals ``a`` and every row's total
    ``n`` (``(rows,)``). Integer totals below a power of two that keeps the table within
    :data:`TOTALS_ENTRIES` are read from a table built once per ``owner`` (the posterior
    ``a`` comes from): a row's part then costs a lookup where the series costs more than
    the plug-in's whole product. Other totals are evaluated once per distinct value when
    rows share them (documents of a few lengths), told apart by a count per value, which is
    cheaper than a sort."""
    from .._data import _small_int_labels
    from ..families._base import cached_by_identity

    integral = (n.size > 0 and 0 <= n.min() and n.max() < 2**62
                and np.array_equal(n, np.floor(n)))
    if integral and owner is not None:
        rows = 1 << int(n.max()).bit_length()  # a power of two above the largest total
        if rows * a.size <= TOTALS_ENTRIES:
            table = cached_by_identity(
                _rising_totals, owner, (rows,),
                lambda: log_rising(a, np.arange(rows, dtype=np.float64)[:, None]), limit=4)
            return table[n.astype(np.intp)]
    small = _small_int_labels(n.astype(np.int64)) if integral else None
    totals, inverse = ((small[0].astype(np.float64), small[1]) if small is not None
                       else np.unique(n, return_inverse=True))
    if 2 * totals.size > n.size:
        return log_rising(a, n[:, None])
    return log_rising(a, totals[:, None])[inverse.ravel()]


#: integer counts up to this many steps past the start are summed term by term (one log1p a
#: step: small counts cost a few, the series always its full length), larger ones take
#: ``log_rising``'s series (benchmarks/tune.py _TERMWISE_MAX --quick --cell csr-bayes)
_TERMWISE_MAX = 64


def _rising_values(a: np.ndarray, x: np.ndarray, start: int = 1) -> np.ndarray:
    r"""``(K, E)``: for ``a`` of shape (K, E) and counts ``x`` of shape (E,), the part of
    ``log_rising(a, x)`` past ``start`` steps: :math:`\sum_{t=start}^{x-1}\log(1 + t/a)` for
    an integer count (0 at or below ``start``; the kernel's indicator products hold the rest),
    the whole :math:`h(a, x)` for any other value. Integer counts are expanded into one
    (entry, step) pair per term and summed in one pass."""
    out = np.zeros(a.shape)
    integer = x == np.floor(x)
    whole = np.flatnonzero(~integer | (x - start > _TERMWISE_MAX))
    if whole.size:
        out[:, whole] = log_rising(a[:, whole], x[whole])
        past = whole[integer[whole]]  # a large count: its first steps are the kernel's
        if past.size and start > 1:  # h(a, 1) = 0
            out[:, past] -= log_rising(a[:, past], float(start))
    terms = np.flatnonzero(integer & (x > start) & (x - start <= _TERMWISE_MAX))
    if terms.size:
        counts = (x[terms] - start).astype(np.int64)
        first = np.cumsum(counts) - counts
        entry = np.repeat(terms, counts)
        step = start + np.arange(entry.size) - np.repeat(first, counts)
        out[:, terms] = np.add.reduceat(np.log1p(step / a[:, entry]), first, axis=1)
    return out


def rising_rows(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, a: np.ndarray,
                n_rows: int, start: int = 1, slope: np.ndarray | None = None) -> np.ndarray:
    """``(n_rows, K)``: per row, the sum of ``log_rising(a[:, col], value)`` over the listed
    entries (``rows`` sorted, as NumPy's ``nonzero`` and CSR order give them), past
    ``start`` steps for integer counts (:func:`_rising_values`), plus ``value * slope[:, col]``
    when slopes (K, F) are given (the predictive's linear part, in the same sums).

    Each distinct (column, value) pair is evaluated once, in blocks that stay in cache, and
    the rows' sums are one sparse product, since counts repeat within a column. Values that are
    mostly distinct (tf-idf weights) are evaluated entry by entry, in blocks."""
    if rows.size == 0:
        return np.zeros((n_rows, a.shape[0]))
    pair, c, v = _distinct_pairs(cols, values)
    block = max(1, _BLOCK_ELEMENTS // max(a.shape[0], 1))
    if 2 * c.size > rows.size:  # mostly distinct (scaled, tf-idf values)
        out = np.zeros((n_rows, a.shape[0]))
        for lo in range(0, rows.size, block):  # entry by entry, summed block by block
            r = rows[lo:lo + block]
            terms = _with_slope(_rising_values(a[:, cols[lo:lo + block]],
                                               values[lo:lo + block], start),
                                slope, cols[lo:lo + block], values[lo:lo + block])
            starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
            # a row may go on in the next block, so its sums are added (one per row here)
            out[r[starts]] += np.add.reduceat(terms, starts, axis=1).T
        return out
    terms = np.empty((c.size, a.shape[0]))
    for lo in range(0, c.size, block):
        terms[lo:lo + block] = _with_slope(_rising_values(a[:, c[lo:lo + block]],
                                                          v[lo:lo + block], start),
                                           slope, c[lo:lo + block], v[lo:lo + block]).T
    picks = sparse.csr_matrix((np.ones(rows.size), pair, _row_starts(rows, n_rows)),
                              shape=(n_rows, c.size))
    return picks @ terms


def _with_slope(terms: np.ndarray, slope: np.ndarray | None, cols: np.ndarray,
                values: np.ndarray) -> np.ndarray:
    """``(K, E)`` terms plus each entry's ``value * slope[:, col]`` (in place), if slopes."""
    if slope is not None:
        terms += values * slope[:, cols]
    return terms


def _row_starts(rows: np.ndarray, n_rows: int) -> np.ndarray:
    """A CSR ``indptr`` for entries listed in row order: the running count of entries per
    row (cheaper than a binary search per row when rows are many)."""
    starts = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=starts[1:])
    return starts


def _distinct_pairs(cols: np.ndarray, values: np.ndarray) -> tuple:
    """Per entry the index of its (column, value) pair among the distinct pairs, and those
    pairs' columns and values, by one sort (a NaN is a pair of its own)."""
    order = np.lexsort((values, cols))
    c, v = cols[order], values[order]
    first = np.r_[True, (c[1:] != c[:-1]) | (v[1:] != v[:-1])]
    pair = np.empty(values.size, dtype=np.int64)
    pair[order] = np.cumsum(first) - 1
    return pair, c[first], v[first]


#: (classes x pairs) values per block of :func:`rising_rows`: ``log_rising``'s temporaries
#: stay in the cache (benchmarks/tune.py _BLOCK_ELEMENTS)
_BLOCK_ELEMENTS = 1 << 16


#: counts up to this are read from a per-table cumulative sum (:func:`cumulative_rising`);
#: larger ones are rare enough to sum term by term (benchmarks/tune.py CUMULATIVE_COUNTS)
CUMULATIVE_COUNTS = 64
#: float64 entries a cumulative table may hold (32 MiB): ``(counts + 1) x columns x classes``,
#: a memory bound (benchmarks/tune.py CUMULATIVE_ENTRIES)
CUMULATIVE_ENTRIES = 1 << 22
#: cumulative tables by the identity of the concentration array they were built from
_cumulative: dict = {}


def cumulative_rising(a: np.ndarray, start: int = 1) -> np.ndarray | None:
    r"""``(M - start + 1, F, K)`` float64, entry ``[m - start, j, k]`` :math:`=
    \sum_{t=start}^{m-1}\log(1 + t / a_{kj})` (0 for ``m <= start``): the terms of a count
    ``m`` past the score kernel's ``start`` steps, for a concentration ``a`` of shape (K, F).
    Built once per fitted table and ``start`` (:func:`cached_by_identity`), with ``M`` the
    largest count that keeps it within :data:`CUMULATIVE_ENTRIES` (at most
    :data:`CUMULATIVE_COUNTS`); None if that is not above ``start``. The dense tail then reads
    a count's terms as one entry per class instead of one ``log1p`` per (class, step).
    Starting the table at ``start`` rather than at 1 makes the per-row sum one sparse product
    instead of two (the difference of two entries)."""
    from ..families._base import cached_by_identity

    return cached_by_identity(_cumulative, a, (start,), lambda: _cumulative_table(a, start),
                              limit=8)


def cumulative_top(k: int, f: int) -> int:
    """The largest count :func:`cumulative_rising`'s table holds for ``k`` classes and ``f``
    columns (the score kernel lists the counts up to it, ``_steps.tail_positions``)."""
    return min(CUMULATIVE_COUNTS, CUMULATIVE_ENTRIES // max(k * f, 1) - 1)


def _cumulative_table(a: np.ndarray, start: int, top: int | None = None) -> np.ndarray | None:
    """:func:`cumulative_rising`'s table, built (not cached), for counts up to ``top``
    (default: :func:`cumulative_top`)."""
    k, f = a.shape
    m = cumulative_top(k, f) if top is None else top
    if m <= start:
        return None
    steps = np.arange(start, m, dtype=np.float64)[:, None, None]
    cum = np.zeros((m - start + 1, f, k))
    np.cumsum(np.log1p(steps / np.asarray(a, np.float64).T[None]), axis=0, out=cum[1:])
    return cum


def dense_rising_tail(a: np.ndarray, x: np.ndarray, steps: int,
                      integral: bool = False, positions: np.ndarray | None = None) -> np.ndarray:
    r"""``(n, K)`` float64: the part of :math:`\sum_j h(a_{kj}, x_{ij})` that the score
    kernel's indicator products leave out of a dense chunk: the steps of integer counts past
    ``steps``, and the whole ``h`` of non-integer values (:func:`rising_sums`; see
    ``step_tables``). ``integral``: the caller knows every value is an integer (or NaN), so
    only the counts above ``steps`` are looked for. ``positions``: the kernel's table
    positions of the chunk's counts (``_steps.tail_positions``), read instead of ``x`` unless
    they mark a value the table does not hold."""
    if positions is not None:
        cum = cumulative_rising(a, steps)
        tail = None if cum is None else _positioned_tail(positions, cum)
        if tail is not None:
            return tail
    x = np.ascontiguousarray(x)  # found in its own dtype (comparisons are exact in float32)
    if integral:
        cum = cumulative_rising(a, steps)
        if cum is not None and max(x.size, cum.shape[0] * x.shape[1]) < 2 ** 31:
            tail = _listed_tail(x, steps, cum)
            if tail is not None:
                return tail
    flat = x.reshape(-1)
    with np.errstate(invalid="ignore"):
        tail = flat > steps
        if not integral:
            tail |= flat != np.floor(flat)
            tail &= ~np.isnan(flat)
    where = np.flatnonzero(tail)
    rows = where // x.shape[1]
    cols = where - rows * x.shape[1]  # cheaper than a second integer division
    return rising_sums(rows, cols, flat[where].astype(np.float64), a, x.shape[0], steps,
                       integral)


def _listed_tail(x: np.ndarray, steps: int, cum: np.ndarray) -> np.ndarray | None:
    """:func:`dense_rising_tail` of integer counts (NaN allowed) that the cumulative table
    ``cum`` holds, as one sparse product whose structure comes from the chunk in int32: the
    row pointers and the columns from the positions (no row index, no int64 division), which
    is cheaper than :func:`rising_sums`. None if a count is past the table."""
    n, f = x.shape
    past = x > steps
    where = np.flatnonzero(past).astype(np.int32)
    values = x.reshape(-1)[where]
    if values.size and values.max() >= steps + cum.shape[0]:
        return None
    index = (values.astype(np.int32) - np.int32(steps)) * np.int32(f) + where % np.int32(f)
    return _table_row_sums(index, _flat_row_starts(where, n, f), cum)


def _positioned_tail(positions: np.ndarray, cum: np.ndarray) -> np.ndarray | None:
    """:func:`dense_rising_tail` from the score kernel's ``(n, F)`` int32 table positions
    (``_steps.tail_positions``: ``(count - S) F + column`` for a count the table holds, 0 for
    none, -1 for a value it does not hold). The kernel finds and indexes the counts as it
    reads the chunk, so the host's part is only the listing and the sparse product (less than
    :func:`_listed_tail`'s). None if a value is not in ``cum``."""
    n, f = positions.shape
    # nonzero of a boolean mask: cheaper than of the int32 positions themselves
    where = np.flatnonzero(positions != 0)
    index = positions.reshape(-1)[where]
    if index.size and (index.min() < 0 or index.max() >= cum.shape[0] * cum.shape[1]):
        return None
    return _table_row_sums(index, _flat_row_starts(where, n, f), cum)


def _flat_row_starts(where: np.ndarray, n: int, f: int) -> np.ndarray:
    """CSR row pointers of the sorted flat positions ``where`` in an ``(n, f)`` chunk, by a
    binary search for each row's first (cheaper than per-row counts)."""
    return np.searchsorted(where, np.arange(0, n * f + 1, f, dtype=where.dtype)).astype(np.int32)


def _table_row_sums(index: np.ndarray, starts: np.ndarray, cum: np.ndarray) -> np.ndarray:
    """``(n, K)``: per row, the sum of the rows ``index`` (``(count - start) * F + column``)
    of the cumulative table ``cum`` (:func:`cumulative_rising`), listed row by row with CSR
    row pointers ``starts``: one sparse product, cheaper than a gather and a segment sum."""
    picks = sparse.csr_matrix((np.ones(index.size), index, starts),
                              shape=(starts.size - 1, cum.shape[0] * cum.shape[1]))
    return picks @ cum.reshape(-1, cum.shape[2])


def rising_sums(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, a: np.ndarray,
                n_rows: int, start: int, integral: bool = False) -> np.ndarray:
    r"""``(n_rows, K)`` float64: per row, the sum over the listed entries (``rows`` sorted;
    every value an integer above ``start``, or not an integer) of
    :math:`\sum_{t=start}^{x-1}\log(1 + t/a_{k,col})` for an integer count and the whole
    :math:`h(a_{k,col}, x)` for any other value. Counts the cumulative table holds
    (:func:`cumulative_rising`) are read from it; the rest go through :func:`rising_rows`.
    ``integral``: the caller knows every value is an integer."""
    cum = cumulative_rising(a, start)
    if cum is None:
        return rising_rows(rows, cols, values, a, n_rows, start)
    limit = start + cum.shape[0]  # counts below it are in the table
    if integral and (values.size == 0 or values.max() < limit):  # the usual case: no copies
        out = np.zeros((n_rows, a.shape[0]))
    else:
        listed = (values < limit) & (values == np.floor(values))
        out = rising_rows(rows[~listed], cols[~listed], values[~listed], a, n_rows, start)
        rows, cols, values = rows[listed], cols[listed], values[listed]
    if rows.size:
        index = (values.astype(np.int64) - start) * cum.shape[1] + cols
        out += _table_row_sums(index, _row_starts(rows, n_rows), cum)
    return out


def step_tables(a: np.ndarray, steps: int, shift: bool) -> np.ndarray:
    r"""``((steps - 1) F, K)`` float64: row block ``t - 1`` holds :math:`\log(1 + t / a_{kj})`
    (transposed), ``t = 1 .. steps - 1``. For an integer count ``x <= steps``,
    :math:`h(a, x) = \sum_{t=1}^{x-1} \log(1 + t/a) = \sum_t [x > t] \log(1 + t/a)`, so the
    counts' Gamma-function terms are products of indicator matrices with these tables. With
    ``shift`` each (step, column) is taken relative to its largest class (a class-free
    constant per row, dropped where only class differences matter)."""
    t = np.arange(1, steps, dtype=np.float64)[:, None, None]  # (S, 1, 1)
    table = np.log1p(t / a[None])  # (S, K, F)
    if shift:
        table = table - table.max(axis=1, keepdims=True)
    return np.ascontiguousarray(table.transpose(0, 2, 1).reshape(-1, a.shape[0]))


#: float64 entries (64 MiB) of ``linear_rising``'s count-by-column table, built once per fitted
#: posterior: deep enough for the counts of large vocabularies (benchmarks/tune.py LINEAR_ENTRIES)
LINEAR_ENTRIES = 1 << 23
#: float64 entries (4 MiB) of extra rows for the larger counts of the most frequent columns,
#: where large counts gather (benchmarks/tune.py LINEAR_DEEP_ENTRIES)
LINEAR_DEEP_ENTRIES = 1 << 19


#: per fitted posterior, the slopes and count-by-column table of ``linear_rising`` (by
#: identity); up to 68 MiB each
_linear: dict = {}


class DeepColumns(NamedTuple):
    """The columns whose counts ``first <= m < stop`` have rows of their own in a linear table,
    after its ``first`` count blocks of F rows: row ``first F + (m - first) * columns.size
    + rank``."""

    columns: np.ndarray  #: the columns, sorted
    rank: np.ndarray  #: per column of the matrix (F), its place among them, -1 if not one
    first: int
    stop: int

    def rows(self, values: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which of these values (float64, with their columns) the rows hold, and those rows."""
        rank = self.rank[cols]
        with np.errstate(invalid="ignore"):  # NaN is held nowhere
            held = (rank >= 0) & (values >= self.first) & (values < self.stop) & (
                values == np.floor(values))
        at = np.flatnonzero(held)
        return held, (self.first * self.rank.size + (values[at].astype(np.int64) - self.first)
                      * self.columns.size + rank[at])


class LinearTable(NamedTuple):
    """``linear_rising``'s state for one fitted posterior."""

    slope: np.ndarray  #: (K, F)
    table: np.ndarray | None  #: rows by count and column
    counts: int  #: the table's first blocks hold counts 0 .. counts - 1 of every column
    deep: DeepColumns | None  #: ... and its last rows, larger counts of a few columns


def linear_rising(X, owner, slope_of, a: np.ndarray,
                  totals: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    r"""``(n, K)``: :math:`\sum_j x_{ij} s_{kj} + h(a_{kj}, x_{ij})` over the stored values
    of a CSR matrix, for slopes ``s = slope_of()`` and concentrations ``a`` of shape (K, F),
    both derived from the fitted posterior ``owner`` (they are made once per posterior, by
    its identity): the count families' exact predictive but for per-class constants. Each
    stored integer count ``m`` the table holds picks row ``(m, j)`` of one table,
    :math:`(m s_{kj} + \sum_{t<m}\log(1 + t/a_{kj})) / m` (0 for ``m = 0``), through the
    matrix's own structure and weighed by its own values (no array of ones): one sparse
    product where the slope's product and the terms' would be two. Other values (not
    integers, past the table) take :func:`rising_rows`, their slopes' part included, but for
    the larger counts of the columns with the largest posterior counts, which have rows of
    their own after the table's (:data:`LINEAR_DEEP_ENTRIES`); slopes of -inf (a column
    without probability) take :func:`log_matmul` and :func:`sparse_rising`. Returned with
    the float64 row totals :math:`\sum_j x_{ij}` when ``totals`` (None otherwise), summed
    in the pass that finds the table rows while each block of values is in cache.

    A call with fewer stored values than the table would have rows, before any call has
    built it, takes every value through :func:`rising_rows` instead: building the table
    would cost far more than those few values. A dense block (the host's products for small
    dense calls, ``fast._host.scored_on_host``) takes :func:`_dense_linear_rising`."""
    from ..families._base import cached_by_identity, is_cached

    if not sparse.issparse(X):
        return _dense_linear_rising(X, owner, slope_of, a, totals)
    k, f = a.shape
    if X.nnz < _linear_counts(k, f) * f and not is_cached(_linear, owner):
        slope = np.asarray(slope_of(), dtype=np.float64)
        if not np.all(np.isfinite(slope)):
            return log_matmul(X, slope) + sparse_rising(X, a), _row_totals_if(X, totals)
        return (rising_rows(_row_of_each_value(X, np.arange(X.shape[0])), X.indices,
                            X.data.astype(np.float64), a, X.shape[0], 1, slope=slope),
                _row_totals_if(X, totals))

    def build():
        slope = np.ascontiguousarray(slope_of(), dtype=np.float64)
        m = _linear_counts(k, f)
        if m <= 2 or not np.all(np.isfinite(slope)):
            return LinearTable(slope, None, 0, None)
        deep = _deep_columns(a, m)
        extra = 0 if deep is None else (deep.stop - deep.first) * deep.columns.size
        table = np.empty((m * f + extra, k))
        _linear_block(a, slope, 0, m, out=table[:m * f])
        if deep is not None:
            _linear_block(a[:, deep.columns], slope[:, deep.columns], deep.first, deep.stop,
                          out=table[m * f:])
        return LinearTable(slope, table, m, deep)

    slope, table, counts, deep = cached_by_identity(_linear, owner, (), build, limit=4)
    if table is None:
        return log_matmul(X, slope) + sparse_rising(X, a), _row_totals_if(X, totals)
    data, n = X.data, X.shape[0]
    n_table = table.shape[0]
    rows = _table_rows(X, counts, totals, deep, n_table)
    # the stored values weigh the picks, unless one past the table would make 0 * inf
    weights = (data if data.dtype == np.float64 and np.isfinite(rows.rest_values).all()
               else _zeroed(data, rows.rest))
    picks = sparse.csr_matrix((weights, rows.index, X.indptr), shape=(n, n_table))
    out = picks @ table
    if rows.rest.size:
        out += rising_rows(rows.rest_rows, rows.rest_cols, rows.rest_values, a, n, 1,
                           slope=slope)
    return out, rows.totals


#: the dense predictives' slopes, read-only (their product operands are then kept, ``prepared``),
#: by the identity of the posterior they come from
_dense_slopes: dict = {}


def _dense_linear_rising(X, owner, slope_of, a: np.ndarray, totals: bool):
    """:func:`linear_rising` of a dense float64 block: the slopes' BLAS product (with a row of
    ones for the row totals) and the values past 1 (:func:`_dense_rising`): a dense block's
    CSR form would cost more than the whole predictive."""
    from ..families._base import cached_by_identity

    k = a.shape[0]

    def build():
        slope = np.array(slope_of(), dtype=np.float64)  # a copy of its own, made read-only
        if totals:
            slope = np.concatenate([slope, np.ones((1, slope.shape[1]))])
        slope.flags.writeable = False  # so that its product operands are kept (``prepared``)
        return slope

    product = log_matmul(X, cached_by_identity(_dense_slopes, owner, (totals,), build, limit=4))
    out = np.ascontiguousarray(product[:, :k])
    out += _dense_rising(a, X)
    return out, (product[:, k] if totals else None)


def _dense_rising(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    r"""``(n, K)``: :math:`\sum_j h(a_{kj}, x_{ij})` of a dense float64 block. Only values
    other than 0 and 1 are listed (:math:`h(a, 0) = h(a, 1) = 0`); when they are integer
    counts the cumulative table holds (:func:`cumulative_rising`), one sparse product reads
    them, else :func:`rising_sums` (a NaN gives NaN: the caller's kernels score it)."""
    n, f = x.shape
    flat = x.reshape(-1)
    listed = flat != 0
    listed &= flat != 1
    where = np.flatnonzero(listed)
    values = flat[where]
    cum = cumulative_rising(a, 1)
    if (cum is not None and (values.size == 0 or values.max() < 1 + cum.shape[0])
            and np.array_equal(values, np.floor(values))):
        index = (values.astype(np.intp) - 1) * f + where % f
        return _table_row_sums(index, _flat_row_starts(where, n, f), cum)
    rows = where // f
    return rising_sums(rows, where - rows * f, values, a, n, 1)


def _row_totals_if(X, totals: bool) -> np.ndarray | None:
    return np.asarray(X.sum(axis=1, dtype=np.float64)).ravel() if totals else None


def _linear_counts(k: int, f: int) -> int:
    """``M``: a ``linear_rising`` table of K classes and F columns holds counts 0 .. M - 1
    (its rows are ``M F``), within :data:`LINEAR_ENTRIES`."""
    return min(CUMULATIVE_COUNTS, LINEAR_ENTRIES // max(k * f, 1) - 1) + 1


def _linear_block(a: np.ndarray, slope: np.ndarray, first: int, stop: int,
                  out: np.ndarray) -> None:
    r"""Writes ``out``, ``((stop - first) F, K)`` float64, row ``(m - first) F + j``:
    :math:`(m s_{kj} + \sum_{t<m}\log(1 + t/a_{kj})) / m` for counts ``first <= m < stop``
    (0 for ``m = 0``), for concentrations ``a`` and slopes ``s`` of shape (K, F). Each row is
    divided by its count since each pick is weighed by the matrix's stored value."""
    k, f = a.shape
    cum = _cumulative_table(a, 1, stop - 1)  # (stop - 1, F, K): counts 1 .. stop - 1
    low = max(first, 1)
    counts = np.arange(low, stop, dtype=np.float64)[:, None, None]
    block = out.reshape(stop - first, f, k)
    block[:low - first] = 0.0
    np.add(counts * slope.T[None], cum[low - 1:], out=block[low - first:])
    block[low - first:] /= counts


def _deep_columns(a: np.ndarray, counts: int) -> DeepColumns | None:
    """The columns of largest posterior count ``sum_k a_kj`` given rows for their counts
    ``counts .. CUMULATIVE_COUNTS`` after a table of ``counts`` blocks, as many as
    :data:`LINEAR_DEEP_ENTRIES` allow; None if none (or no counts) would be."""
    k, f = a.shape
    stop = CUMULATIVE_COUNTS + 1
    width = min(f, LINEAR_DEEP_ENTRIES // max((stop - counts) * k, 1))
    if counts >= stop or width == 0:
        return None
    mass = a.sum(axis=0)
    columns = (np.arange(f) if width == f
               else np.sort(np.argpartition(-mass, width - 1)[:width]))
    rank = np.full(f, -1, dtype=np.int64)
    rank[columns] = np.arange(width)
    return DeepColumns(columns, rank, counts, stop)


#: stored values per block of :func:`_table_rows`: its temporaries stay in cache
#: (benchmarks/tune.py _ROWS_BLOCK)
_ROWS_BLOCK = 1 << 17


class TableRows(NamedTuple):
    """Where a CSR matrix's stored values sit in a table by (count, column)."""

    index: np.ndarray  #: per stored value, its table row (0, a row of zeros, for the rest)
    rest: np.ndarray  #: positions of the values the table does not hold
    rest_rows: np.ndarray  #: ... their rows
    rest_cols: np.ndarray  #: ... their columns
    rest_values: np.ndarray  #: ... and their values, in float64
    totals: np.ndarray | None  #: float64 row totals of all stored values, if asked for


def _table_rows(X, limit: int, totals: bool = False, deep: DeepColumns | None = None,
                n_table: int | None = None) -> TableRows:
    """Per stored value of a CSR matrix, its row ``count * F + column`` in a table by (count,
    column) of ``limit`` counts, and the values that are not integer counts below ``limit``
    (with their rows, columns and values), but for those ``deep`` gives rows of their own
    (in a table of ``n_table`` rows); with ``totals``, each row's sum. In blocks of
    whole rows that stay in cache, in place, so a block's other values and row sums are read
    while it is there rather than in separate passes. The index has the matrix's own index
    dtype where the table's rows fit it (no index array widened)."""
    data, indices, indptr, f = X.data, X.indices, X.indptr, X.shape[1]
    dtype = (indices.dtype if max(limit * f, n_table or 0) <= np.iinfo(indices.dtype).max
             else np.dtype(np.int64))
    unsigned = dtype.str.replace("i", "u")  # unsigned, a negative count is past the table too
    index = np.empty(data.size, dtype=dtype)
    sums = np.zeros(X.shape[0]) if totals else None
    blocks = list(_row_blocks(X, _ROWS_BLOCK))
    longest = max((indptr[r1] - indptr[r0] for r0, r1 in blocks), default=0)
    other, past = np.empty(longest, dtype=bool), np.empty(longest, dtype=bool)
    found = []
    with np.errstate(invalid="ignore", over="ignore"):
        for r0, r1 in blocks:
            lo, hi = indptr[r0], indptr[r1]
            if lo == hi:
                continue
            d, ix, ot, pa = data[lo:hi], index[lo:hi], other[:hi - lo], past[:hi - lo]
            np.copyto(ix, d, casting="unsafe")  # NaN, inf and huge values cast to anything
            np.not_equal(ix, d, out=ot)  # ... and are not integers here
            np.greater_equal(ix.view(unsigned), limit, out=pa)
            ot |= pa
            np.multiply(ix, dtype.type(f), out=ix)
            np.add(ix, indices[lo:hi], out=ix)
            starts = indptr[r0:r1] - lo
            if totals:
                filled = starts < indptr[r0 + 1:r1 + 1] - lo  # reduceat needs non-empty rows
                sums[r0:r1][filled] = np.add.reduceat(d, starts[filled], dtype=np.float64)
            if ot.any():
                at = np.flatnonzero(ot)
                cols, values = indices[lo:hi][at], d[at].astype(np.float64)
                if deep is not None:
                    held, deep_rows = deep.rows(values, cols)
                    ix[at[held]] = deep_rows
                    at, cols, values = at[~held], cols[~held], values[~held]
                ix[at] = 0
                found.append((at + lo, r0 + np.searchsorted(starts, at, side="right") - 1,
                              cols, values))
    rest, rest_rows, rest_cols, rest_values = (
        (np.concatenate(parts) for parts in zip(*found, strict=True)) if found else
        (np.empty(0, np.intp), np.empty(0, np.intp), np.empty(0, indices.dtype), np.empty(0)))
    return TableRows(index, rest, rest_rows, rest_cols, rest_values, sums)


def _zeroed(data: np.ndarray, where: np.ndarray) -> np.ndarray:
    """A float64 copy of ``data`` with zeros at ``where``."""
    out = data.astype(np.float64)
    out[where] = 0.0
    return out


def sparse_rising(X, a: np.ndarray) -> np.ndarray:
    """``(n, K)``: :math:`\\sum_j h(a_{kj}, x_{ij})` over the stored values of a CSR matrix
    (:func:`linear_rising` without its table); an integer count up to 1 has ``h = 0``, so
    only the other values are evaluated (:func:`rising_sums`)."""
    data = X.data
    with np.errstate(invalid="ignore"):
        keep = np.flatnonzero((data > 1) | (data != np.floor(data)))  # NaN kept: h is NaN
    rows = _row_of_each_value(X, np.arange(X.shape[0]))[keep]
    return rising_sums(rows, X.indices[keep], data[keep].astype(np.float64), a, X.shape[0], 1)
