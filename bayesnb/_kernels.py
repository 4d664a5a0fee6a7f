"""The jit-compiled numeric entry points and the row streaming that feeds them.

Naive Bayes is two kernels: per-class sufficient statistics (one pass over X) and class scores
(X against the parameter tables). Both are memory-bound, so the host never hands JAX a
full-size array: rows are encoded (validated and converted to the kernel dtype) one chunk of
about :data:`CHUNK_BYTES` at a time, and every chunk goes through one compiled kernel. A chunk
stays in cache between the host conversion and the kernel, full-size temporaries (NaN masks,
one-hot matrices, float64 copies) never exist, and peak extra memory is a few chunks plus the
``(n, K)`` output. Measured in ``benchmarks/run.py --profile``: the whole-array path spent most
of its time in copies, not in the matmuls.

Families are static arguments (classes are hashable) and their parameters pytrees, so a kernel
compiles once per (families, chunk shape, dtype). Chunk row counts come from :func:`bucket`, so a
new batch of the same width does not re-trace (counted in :data:`TRACES`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

#: trace counter per kernel, read by the no-retrace tests
TRACES = {"suff_stats": 0, "accumulate": 0, "scores": 0}

#: bytes of encoded input per streamed chunk: large enough to amortise a dispatch, small
#: enough to stay in cache between the host conversion and the kernel
CHUNK_BYTES = 8 << 20


def bucket(n: int) -> int:
    """Padded row count: powers of two up to 1024, then eight steps per octave (<= 12.5%)."""
    if n <= 1024:
        return max(8, 1 << (n - 1).bit_length())
    step = 1 << ((n - 1).bit_length() - 4)
    return -(-n // step) * step


def chunk_rows(n_rows: int, row_bytes: int, budget: int | None = None) -> int:
    """Rows per chunk: a power of two holding about ``budget`` bytes (default
    :data:`CHUNK_BYTES`), at least 64, at most ``bucket(n_rows)``."""
    budget = CHUNK_BYTES if budget is None else budget
    rows = max(64, 1 << max(int(budget // max(row_bytes, 1)).bit_length() - 1, 0))
    return min(rows, bucket(n_rows))


def _one_hot(codes, weights, n_classes, dtype):
    return jax.nn.one_hot(codes, n_classes, dtype=dtype) * weights[:, None].astype(dtype)


def _block_stats(families, levels, n_classes, xs, codes, weights):
    resp = _one_hot(codes, weights, n_classes, jnp.result_type(float))
    return tuple(f.suff_stats(x, resp, lv) for f, lv, x in zip(families, levels, xs, strict=True))


@partial(jax.jit, static_argnums=(0, 1, 2))
def suff_stats(families, levels, n_classes, xs, codes, weights):
    """Per-class sufficient statistics of one chunk, for every block."""
    TRACES["suff_stats"] += 1
    return _block_stats(families, levels, n_classes, xs, codes, weights)


@partial(jax.jit, static_argnums=(0, 1, 2), donate_argnums=(3,))
def accumulate(families, levels, n_classes, stats, xs, codes, weights):
    """``stats`` merged with the statistics of one more chunk (each family's exact merge)."""
    TRACES["accumulate"] += 1
    new = _block_stats(families, levels, n_classes, xs, codes, weights)
    return tuple(f.merge_stats(a, b) for f, a, b in zip(families, stats, new, strict=True))


@partial(jax.jit, static_argnums=(0, 1, 2, 3))
def scores(families, levels, exact, output, class_log_prior, tables, xs):
    """Class scores of one chunk and their per-row log normaliser ``logsumexp``.

    ``output`` is ``"scores"`` (log p(x, c) up to a class-free constant), ``"joint"`` (every
    family's class-free constant included), ``"log_proba"`` (the scores shifted by their row
    maximum) or ``"proba"`` (the exponential of those); :func:`finish` turns the last two
    into float64 log p(c | x) and p(c | x) that sum to one to float64 precision. The plug-in
    likelihood is used, or the exact posterior predictive if ``exact``. A row whose normaliser
    is not finite has every class impossible; the caller reports it."""
    TRACES["scores"] += 1
    out = jnp.broadcast_to(class_log_prior, (xs[0].shape[0], class_log_prior.shape[0]))
    for family, lv, table, x in zip(families, levels, tables, xs, strict=True):
        out = out + (family.log_predictive(table, x, lv) if exact
                     else family.log_likelihood(table, x, lv))
    top = jnp.max(out, axis=1, keepdims=True)
    shifted = out - jnp.where(jnp.isfinite(top), top, 0.0)
    weight = jnp.exp(shifted)
    norm = jnp.log(jnp.sum(weight, axis=1)) + top[:, 0]
    if output == "joint":
        constant = sum(f.log_normalizer(x) for f, x in zip(families, xs, strict=True))
        return out + constant[:, None], norm
    return {"scores": out, "log_proba": shifted, "proba": weight}[output], norm


def finish(values: np.ndarray, output: str) -> np.ndarray:
    """Float64 normalisation on the host of a chunk of ``scores`` output (``(m, K)``: cheap
    next to the kernel, which reads ``(m, F)``)."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if output == "proba":  # divided rather than exp(log p): each probability <= 1
            return values / np.sum(values, axis=1, keepdims=True)
        if output == "log_proba":
            return values - np.log(np.sum(np.exp(values), axis=1, keepdims=True))
    return values


def pad_rows(x: np.ndarray, rows: int) -> np.ndarray:
    """Zero rows appended up to ``rows``: zeros are valid for every family, and padded rows
    carry zero weight (fit) or are cut from the output (scores)."""
    if x.shape[0] == rows:
        return x
    out = np.zeros((rows,) + x.shape[1:], dtype=x.dtype)
    out[: x.shape[0]] = x
    return out


def stream_chunks(n_rows: int, rows: int, encoders: Sequence[Callable]):
    """Yield ``(start, stop, xs)``: every block encoded for rows ``start:stop``, padded to
    ``rows`` rows. ``encoders[b](start, stop)`` returns block ``b``'s encoded rows."""
    for start in range(0, n_rows, rows):
        stop = min(start + rows, n_rows)
        yield start, stop, tuple(pad_rows(enc(start, stop), rows) for enc in encoders)


def stream_suff_stats(families, levels, n_classes, encoders, row_bytes, codes, weights):
    """Sufficient statistics of all rows, accumulated chunk by chunk on the device."""
    n = codes.shape[0]
    rows = chunk_rows(n, row_bytes)
    dtype = np.dtype(jnp.result_type(float))
    stats = None
    for start, stop, xs in stream_chunks(n, rows, encoders):
        c = pad_rows(codes[start:stop].astype(np.int32, copy=False), rows)
        w = pad_rows(np.asarray(weights[start:stop], dtype=dtype), rows)
        if stats is None:
            stats = suff_stats(families, levels, n_classes, xs, c, w)
        else:
            stats = accumulate(families, levels, n_classes, stats, xs, c, w)
    return stats


def stream_scores(families, levels, exact, output, class_log_prior, tables, encoders, n_rows,
                  row_bytes, n_classes, max_rows=None):
    """``(n, K)`` float64 scores and the ``(n,)`` log normaliser, chunk by chunk."""
    rows = chunk_rows(n_rows, row_bytes)
    if max_rows is not None:
        rows = min(rows, chunk_rows(n_rows, 1, budget=max_rows))
    out = np.empty((n_rows, n_classes), dtype=np.float64)
    norm = np.empty(n_rows, dtype=np.float64)
    pending = None
    for start, stop, xs in stream_chunks(n_rows, rows, encoders):
        result = scores(families, levels, exact, output, class_log_prior, tables, xs)
        if pending is not None:  # finish the previous chunk while this one computes
            _store(out, norm, output, *pending)
        pending = (start, stop, result)
    if pending is not None:
        _store(out, norm, output, *pending)
    return out, norm


def _store(out, norm, output, start, stop, result):
    s, z = result
    out[start:stop] = finish(np.asarray(s)[: stop - start], output)
    norm[start:stop] = np.asarray(z)[: stop - start]
