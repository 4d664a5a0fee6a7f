"""Blocks counted and scored on the host in float64 NumPy, streamed in row chunks.

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
from . import form_of

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
    for start, stop in _bounds(codes.shape[0], source.width, 8 * bins):
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
    for start, stop in _bounds(n_rows, source.width):
        out[start:stop] = form_of(family).host_scores(prepared, source.read(start, stop))
    return out
