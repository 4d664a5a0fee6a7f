"""Blocks counted and scored on the host in float64 NumPy: small dense calls of the families
with host products or host maths (:func:`scored_on_host`, :func:`counted_on_host`), and,
streamed in row chunks, the host-counting families.

A ``host_counting`` family (Categorical) has counts for statistics and table lookups for
scores: ``np.bincount`` and a sparse product give both exactly in float64 and compile nothing,
so a first call costs what later ones do however many columns there are (a compiled kernel
over thousands of categorical columns would take longer to compile than the whole fit and
predict take here). Rows are read through the block's :class:`_kernels.Source` (encoded chunk by
chunk, errors naming the row of the block), in chunks of about :data:`CHUNK_ENTRIES` cells,
so temporaries stay a few MB plus the ``(n, K)`` output.
"""

from __future__ import annotations

import numpy as np

from .._blocks import block_source, levels_of
from ..families._base import float64_mode, host_f64
from . import form_of
from ._kernels import budget_scale

#: a dense call of at most this many cells is scored by the host's float64 products (and, in
#: float64, a Bernoulli fit counted) (benchmarks/tune.py HOST_PRODUCT_CELLS)
HOST_PRODUCT_CELLS = 1 << 22


#: a dense call of at most this many entries (rows x columns x classes, ``(n, K, F)``
#: temporaries) of the families with host maths (``FastForm.host_maths``: Gaussian, LogNormal,
#: NegativeBinomial; the count families' blocks with missing values) is fitted and scored by
#: the family's own maths in float64 NumPy and compiles nothing: a new shape's kernels
#: compiled in 0.6-0.7 s, and compiled they were no faster up to about 64,000 entries
#: (benchmarks/first_answer.py (b), (c) and (e), ``--host-maths-entries``)
HOST_MATHS_ENTRIES = 1 << 16


def _small_dense(families, raws, n_classes: int, product_cells: int) -> bool:
    """On the CPU, every block a NumPy array (of numbers, or of objects such as ``explain``'s
    rows with None for a missing value, which the family's ``encode`` converts and checks as
    it does for the kernels), and every family with host products
    (``supports_sparse``; at most ``product_cells`` cells of their blocks in all) or host maths
    (``host_maths``; at most :data:`HOST_MATHS_ENTRIES` entries)."""
    if budget_scale() != 1 or not all(isinstance(raw, np.ndarray) and raw.dtype.kind in "biufO"
                                      for raw in raws):
        return False
    cells = entries = 0
    for family, raw in zip(families, raws, strict=True):
        form = form_of(family)
        if form.supports_sparse:
            cells += raw.size
        elif form.host_maths:
            entries += raw.size * n_classes
        else:
            return False
    # each bound applies where there are blocks of its kind (a bound of -1 turns its kind off)
    return (not cells or cells <= product_cells) and (not entries or entries <= HOST_MATHS_ENTRIES)


def scored_on_host(families, raws, n_classes: int) -> bool:
    """Whether a dense call is scored on the host in float64 rather than streamed through the
    kernels: by its forms' products (the sparse path's ``sparse_log_likelihood``, one BLAS
    product a block, in row chunks, and for the exact predictive ``sparse_log_predictive``,
    which adds the listed counts past 1) up to :data:`HOST_PRODUCT_CELLS` cells, where the
    kernels' fixed costs (the copy into aligned buffers, the dispatch) outweigh their product,
    or by the families' own maths (:data:`HOST_MATHS_ENTRIES`). Past it the kernels' float32
    product wins, and the exact count predictive's step products beat the host's listing of
    every count past 1. Float64 answers are within any float32 bound."""
    return _small_dense(families, raws, n_classes, HOST_PRODUCT_CELLS)


#: a dense fit of at most this many cells, of forms with host products, is counted on the
#: host in either dtype and compiles nothing: a statistics kernel for a new shape compiled in
#: 0.55-0.75 s (Multinomial, Poisson), and even compiled it was slower up to about 20,000
#: cells (benchmarks/first_answer.py (d), ``--small-fit-cells``)
SMALL_FIT_CELLS = 1 << 14


def counted_on_host(families, raws, weight: np.ndarray, n_classes: int) -> bool:
    """Whether a dense fit is counted on the host in float64, with integer row weights: by its
    forms' products (``sparse_suff_stats``; :func:`host_block` gives them the block) up to
    :data:`SMALL_FIT_CELLS` cells in either dtype, and in float64 up to
    :data:`HOST_PRODUCT_CELLS` for forms that declare ``dense_host_stats`` (past it the
    kernels' chunked statistics win; in float32 the kernels' float32 sums are the cheaper), or
    by the families' own ``suff_stats`` (:data:`HOST_MATHS_ENTRIES`). The products' sums are
    exact in any order, so a column of ones counts exactly its class's weight, as an ML
    estimate of 1 needs (BLAS's order differs from the class weights' ``bincount``:
    fractional weights left 1e-16 between them)."""
    if not (bool(np.all(weight == np.floor(weight))) and weight.sum() < 2.0 ** 53):
        return False
    return (_small_dense(families, raws, n_classes, SMALL_FIT_CELLS)
            or (float64_mode() and all(form_of(f).dense_host_stats for f in families)
                and _small_dense(families, raws, n_classes, HOST_PRODUCT_CELLS)))


def _has_nan(stats) -> bool:
    return any(np.isnan(leaf).any() for leaf in stats)


def _maths_take(family, x, n_classes: int, maths_entries: int | None) -> bool:
    """Whether a block of a form with host products and host maths, whose products met a
    missing count (NaN), is redone by its family's maths: within ``maths_entries`` rows x
    columns x classes (None: any size)."""
    return (form_of(family).host_maths and isinstance(x, np.ndarray)
            and (maths_entries is None or x.size * n_classes <= maths_entries))


def host_stats(family, values: np.ndarray, labels, maths_entries: int | None = None):
    """A validated dense block's float64 statistics (:func:`counted_on_host`): its family's
    ``suff_stats`` against the weighted one-hot of ``labels`` (``_sparse.Labels``) for a
    ``host_maths`` form without host products, else its form's ``sparse_suff_stats`` (of the
    block as it is where the form declares ``dense_host_stats``, else as CSR), which a
    missing count makes NaN: such a block is counted by the family's maths where they take
    it (``host_maths``, within ``maths_entries``), else left NaN for the kernels."""
    form = form_of(family)
    if form.supports_sparse:  # the products; a missing count makes its sums NaN
        stats = form.sparse_suff_stats(host_block(family, values), labels)
        if not (_has_nan(stats)
                and _maths_take(family, values, labels.n_classes, maths_entries)):
            return stats
    return type(family).suff_stats(values, labels.one_hot())


def scorable(family, x) -> bool:
    """Whether :func:`host_scores` scores the encoded block ``x``: a dense NumPy block of a
    form that counts on the host (``host_counting``), runs its family's maths there
    (``host_maths``: for a form with host products, a block with missing counts), or has
    host products (``supports_sparse``) and no missing count."""
    form = form_of(family)
    if not isinstance(x, np.ndarray):
        return False
    # the NaN pass only where it decides
    return (form.host_counting or form.host_maths
            or (form.supports_sparse and not (x.dtype.kind == "f" and np.isnan(x).any())))


def host_scores(family, table, x, exact: bool, maths_entries: int | None = None) -> np.ndarray:
    """``(n, K)`` float64 log p(x | c) of a validated block (float64 values, dense or sparse
    for forms with host products; codes for host counting), a fresh array: the exact
    predictive if ``exact``, else the plug-in, by the form's lookups (``host_counting``), the
    family's own ``log_predictive`` or ``log_likelihood`` (``host_maths`` without host
    products), or the form's ``sparse_log_predictive`` or ``sparse_log_likelihood``, whose
    rows with a missing count are NaN: such a block is scored by the family's maths where
    they take it (``host_maths``, within ``maths_entries``), else left NaN for the kernels."""
    form = form_of(family)
    if form.host_counting:
        return form.host_scores(form.host_score_table(table, exact), x)
    if form.supports_sparse:  # the products; a missing count makes its rows NaN
        scores = (form.sparse_log_predictive(table, x) if exact
                  else form.sparse_log_likelihood(table, x))
        if not (np.isnan(scores).any()
                and _maths_take(family, x, scores.shape[1], maths_entries)):
            return scores
    table, maths = host_f64(table), type(family)
    # a zero precision or an ML rate of 0: log 0, a class ruled out
    with np.errstate(divide="ignore"):
        return (maths.log_predictive if exact else maths.log_likelihood)(table, x)


def host_block(family, values: np.ndarray):
    """A validated dense block as its form's ``sparse_suff_stats`` takes it: as it is where
    the form declares ``dense_host_stats``, else as CSR."""
    if form_of(family).dense_host_stats:
        return values
    from scipy import sparse

    return sparse.csr_array(values)


#: cells of a :func:`scored_on_host` chunk: its float64 rows stay in a core's cache from
#: the checks to the product (benchmarks/tune.py PRODUCT_CHUNK_CELLS)
PRODUCT_CHUNK_CELLS = 1 << 19


def product_chunks(n_rows: int, width: int):
    """Row ranges of about :data:`PRODUCT_CHUNK_CELLS` cells for the host's products."""
    rows = max(1, PRODUCT_CHUNK_CELLS // max(width, 1))
    return ((start, min(start + rows, n_rows)) for start in range(0, n_rows, rows))


#: cells per chunk: the codes, flat indices and indicator values of a chunk stay a few MB
#: (benchmarks/tune.py CHUNK_ENTRIES)
CHUNK_ENTRIES = 1 << 20


#: at most this many cells per chunk, however large a chunk's fixed cost
MAX_CHUNK_ENTRIES = 1 << 24


def _bounds(n_rows: int, width: int, entries: int = 0):
    """Row ranges of about ``max(CHUNK_ENTRIES, entries)`` cells (``entries``: what a chunk
    costs besides its cells, times 8: a chunk's counts have classes x levels bins, more than
    a chunk of 20,000 columns holds rows' cells)."""
    cells = min(max(CHUNK_ENTRIES, entries), MAX_CHUNK_ENTRIES)
    rows = max(1, cells // max(width, 1))
    return ((start, min(start + rows, n_rows)) for start in range(0, n_rows, rows))


def stream_stats(block, raw, codes: np.ndarray, weight: np.ndarray, n_classes: int):
    """A block's statistics (float64 NumPy) over all rows of ``raw``, chunk by chunk."""
    family, schema = block.family, block.schema
    source = block_source(family, raw, schema, "error")
    levels, total = levels_of(schema), None
    bins = n_classes * sum(levels or ())
    for start, stop in _bounds(codes.shape[0], source.width, 8 * bins + source.chunk_cost):
        chunk = form_of(family).host_stats(source.read(start, stop), codes[start:stop],
                                  weight[start:stop], n_classes, levels)
        total = chunk if total is None else family.merge_stats(total, chunk)
    return total


def stream_scores(block, table, raw, n_rows: int, n_classes: int, unseen: str,
                  exact: bool) -> np.ndarray:
    """``(n, K)`` float64 log p(x_i | c = k) of a block (constants included), chunk by chunk;
    ``unseen`` says what a category level unseen in training means (``Categorical.encode``)."""
    family = block.family
    source = block_source(family, raw, block.schema, unseen)
    prepared = form_of(family).host_score_table(table, exact)
    out = np.empty((n_rows, n_classes))
    for start, stop in _bounds(n_rows, source.width, source.chunk_cost):
        out[start:stop] = form_of(family).host_scores(prepared, source.read(start, stop))
    return out
