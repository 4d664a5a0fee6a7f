r"""The exact posterior predictive (``method="bayes"``) scored chunk by chunk.

The count families' predictives (Dirichlet-multinomial, negative binomial) hold
:math:`\log\Gamma(a + x) - \log\Gamma(a)` per (row, class, column). For an integer count it is
:math:`\sum_{t<x}\log(a + t) = x\log a + \sum_{t=1}^{x-1}\log(1 + t/a)`, so a row's sum over
columns is the plug-in's product for the first term plus products of the indicator matrices
:math:`[X > t]`, ``t = 1 .. S - 1``, with float64 tables (``fast._steps``): with 0/1
counts, one product in all. On a CPU ``S = 1``; on an accelerator ``S`` is chosen per call
from a sample of the rows (:func:`choose_steps`, a power of two so a kernel compiles once per
choice; ``S = 1`` for a small batch, :data:`SMALL_BATCH_CELLS`). The counts above ``S`` (and
non-integer counts) are added on the host in float64 (each family's ``host_tail``, from a
cumulative table per fitted table): on a CPU the kernel gives each count's position in that
table (``tail_positions``) and the host lists them and sums the table's rows; on an
accelerator, whose ``S`` leaves few rows past it, the host reads only the rows the kernel
flags (``needs_tail``), :func:`scans_whole`.
A model without a count family never comes here: its exact predictive has no host part and
streams through ``_kernels.stream_scores`` like the plug-in (``scoring.TableScorer``); a
Student-t block beside a count family is scored in the same kernel (``Gaussian.log_predictive``).

Chunks are streamed as in ``_kernels.stream_scores`` (the same staging, value checks and
float32 rounding bounds); the scores are normalised on the host in float64, after the tails.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from . import _kernels, _sparse, form_of
from ._compiled import compiled, keep_bounded
from ._groups import per_block
from ._kernels import full_float32
from ._steps import needs_tail, tail_positions

#: the indicator steps ``S`` a kernel may be compiled for (on an accelerator)
STEP_CHOICES = (1, 2, 4, 8, 16, 32)
#: on an accelerator a product is nearly free next to the host's work on a row past ``S``, so
#: ``S`` is the smallest choice that leaves at most this share of the sampled rows to the host
ACCELERATOR_TAIL_ROWS = 1.0 / 64
#: rows of the input read to choose ``S``, at most :data:`SAMPLE_CELLS` values in all: cheap
#: next to the predictive itself
SAMPLE_ROWS = 512
SAMPLE_CELLS = 1 << 16
#: a batch of at most this many cells scores with ``S = 1``: compiling a kernel for another
#: ``S`` costs more than the host's terms of so few counts, and one-row loops would compile many
SMALL_BATCH_CELLS = 1 << 14


def choose_steps(sample) -> int:
    """``S`` for a block from a sample of its rows: 1 on a CPU, where the host's table reads
    of the counts past ``S`` cost no more than the indicator products that would take them;
    on an accelerator the smallest :data:`STEP_CHOICES` entry past which at most
    :data:`ACCELERATOR_TAIL_ROWS` of the sampled rows hold a count (or a fraction, or a
    missing value), else the largest."""
    x = np.asarray(sample)
    if _kernels.budget_scale() == 1 or x.shape[0] == 0:
        return 1
    with np.errstate(invalid="ignore"):  # a row holding a fraction or NaN is past every S
        top = np.where(np.any(x != np.floor(x), axis=1), np.inf,
                       np.max(np.where(np.isnan(x), 0, x), axis=1, initial=0))
    for s in STEP_CHOICES:
        if np.count_nonzero(top > s) <= ACCELERATOR_TAIL_ROWS * x.shape[0]:
            return s
    return STEP_CHOICES[-1]


def scans_whole() -> bool:
    """Whether the host scans every chunk of a counted block for its tail, from the kernel's
    table positions (``tail_positions``), rather than the rows the kernel flags
    (``needs_tail``): on a CPU, where ``S = 1`` leaves most rows of counts past it (the flags
    were 1.2-1.4 times slower on Poisson counts, the whole scan 1.15 times on 0/1 counts)."""
    return _kernels.budget_scale() == 1


def counted(family) -> bool:
    """Whether a family (class) scores its exact predictive through indicator steps."""
    return form_of(family).exact_host_tail


#: kernel tables by the identity of the fitted table, the joint flag and the steps
_cache: dict = {}


def _step_table(family, table, steps: int, joint: bool):
    """A counted family's indicator-step table; it needs no host-side shift."""
    return form_of(family).exact_table(table, steps, joint), None


def kernel_tables(families, tables, joint: bool, steps, sources):
    """Every block's exact table as the kernel reads it, and its host-side shift."""
    built = []
    for b, (family, table, s) in enumerate(zip(families, tables, steps, strict=True)):
        build = (partial(_step_table, family, table, s, joint) if s is not None
                 else partial(form_of(family).kernel_table, table, True, joint))
        built.append(_kernels.cached_kernel_table(_cache, (family, joint, s), table,
                                                  build, sources, b))
    return tuple(k for k, _ in built), [shift for _, shift in built]


@compiled(static_argnums=(0, 1, 2, 7))
@full_float32
def scores(families, levels, joint, class_log_prior, tables, xs, n_valid, whole=None,
           tops=None):
    """One chunk: exact class scores (joint: with every class-free constant), per block
    the rows whose tail the host must add (``needs_tail``; for a block the host scans whole,
    ``whole[b]``, every entry's position in the host's cumulative table of counts up to
    ``tops[b]``, ``tail_positions``), the value checks (one flag per block, stacked), the
    float32 rounding bounds per block and, per row and class, that of the blocks' sum
    (``_kernels.added_up``; empty for one block)."""
    whole = (False,) * len(xs) if whole is None else whole
    tops = (0,) * len(xs) if tops is None else tops
    out = jnp.broadcast_to(class_log_prior, (xs[0].shape[0], class_log_prior.shape[0]))
    valid = jnp.arange(xs[0].shape[0]) < n_valid

    def block(key, table, x, top):
        family, lv, scans_whole = key
        own = form_of(family).scores(table, x, lv, True)
        tail = ((tail_positions(x, table.steps, top) if scans_whole
                 else needs_tail(x, table.steps))
                if counted(family) else jnp.zeros((0,), jnp.int8))
        # per row (and class): the host weighs them by the class probabilities once it has
        # added the tails, which may still move those (``store``)
        r = form_of(family).score_rounding(table, x, own)
        risk = jnp.where(valid[:, None] if r.ndim == 2 else valid, r, 0.0)
        if joint:  # every class-free constant too
            own = own + family.log_normalizer(x)[:, None]
        return own, tail, _kernels.invalid_values(family, x), risk

    done = per_block(block, tuple(zip(families, levels, whole, strict=True)), tables, xs, tops)
    out, across = _kernels.added_up(out, done.map(lambda r: r[0]), joint)
    # per row and class, the bound of the blocks' sum (``_kernels.across_bound``), weighed on
    # the host as the blocks' own
    across = (jnp.zeros((0, 0), out.dtype) if across is None
              else jnp.where(valid[:, None], across, 0.0))
    # one array, one read on the host (``_kernels._store``)
    return (out, done.map(lambda r: r[1]), done.map(lambda r: r[2]).ordered(),
            done.map(lambda r: r[3]), across)


def stream(families, levels, joint, class_log_prior, tables, sources, n_rows, n_classes,
           added: bool = False):
    """``(n, K)`` float64 exact class scores (log p(x, c) up to a class-free constant, or
    with every constant if ``joint``), chunk by chunk; the host adds each chunk's tail while
    the next chunk computes. The caller normalises them (``scoring.normalised``). With
    ``added``, the caller adds other blocks' scores: per-class rounding bounds are taken over
    every class (``_kernels.kernel_kind``)."""
    keep_bounded()
    small = n_rows * sum(s.width for s in sources) <= SMALL_BATCH_CELLS
    sample = [min(n_rows, SAMPLE_ROWS, max(1, SAMPLE_CELLS // max(s.width, 1))) for s in sources]
    samples = [s.read(0, m) if counted(f) else None
               for f, s, m in zip(families, sources, sample, strict=True)]
    steps = [(1 if small else choose_steps(x)) if counted(f) else None
             for f, x in zip(families, samples, strict=True)]
    whole = tuple(st is not None and scans_whole() for st in steps)
    ktables, shifts = kernel_tables(families, tables, joint, steps, sources)
    tops = tuple(np.int32(_sparse.cumulative_top(n_classes, s.width)) for s in sources)
    # per row: the input, the stacked indicators, the int32 table positions and the (rows, K)
    # scores; the Student-t kernel's (rows, K, F) expression is bounded by a chunk as well
    row_bytes = sum(s.width * (s.dtype.itemsize * (st or 1) + 4 * w) for s, st, w in
                    zip(sources, steps, whole, strict=True))
    row_bytes += _kernels.SCORE_CLASS_BYTES * n_classes
    rows = _kernels.chunk_rows(n_rows, row_bytes)
    wide = sum(s.width for s, st in zip(sources, steps, strict=True) if st is None)
    if wide:
        rows = min(rows, _kernels.chunk_rows(n_rows, 1, budget=(
            _kernels.CLASS_COLUMN_ELEMENTS // max(n_classes * wide, 1))))
    out = np.empty((n_rows, n_classes), dtype=np.float64)
    staging = _kernels._Staging(sources, rows, shifts)

    def weighed(start, stop, r):
        """The largest of a block's bounds ``r``, per class weighed by the probabilities the
        tails left."""
        r = np.asarray(r)[: stop - start]
        if r.size == 0 or r.max() <= _kernels.SCORE_ROUNDING_LIMIT:
            return 0.0
        if r.ndim == 2:
            chunk = out[start:stop]
            weigh = _kernels.every_class if added else _kernels.class_weighted
            r = weigh(r, chunk - np.max(chunk, axis=1, keepdims=True), xp=np)
        return float(r.max())

    def check_rounding(start, stop, risk, across):
        for source, r in zip(sources, risk, strict=True):
            if (largest := weighed(start, stop, r)) > _kernels.SCORE_ROUNDING_LIMIT:
                raise _kernels.inexact_scores(source, largest)
        if (largest := weighed(start, stop, across)) > _kernels.SCORE_ROUNDING_LIMIT:
            raise _kernels.inexact_sum(sources, largest)

    def store(start, stop, result):
        s, tails, bad, risk, across = result
        tails, risk = jax.tree_util.tree_map(np.asarray, (tails, risk))  # blocks: NumPy views
        _kernels._report(sources, np.asarray(bad))
        out[start:stop] = np.asarray(s)[: stop - start]
        for b, flags in enumerate(tails):
            if whole[b]:  # every row, from the kernel's positions of its counts
                out[start:stop] += form_of(families[b]).host_tail(
                    ktables[b], sources[b].read(start, stop), steps[b],
                    positions=np.asarray(flags)[: stop - start])
                continue
            flags = np.asarray(flags)[: stop - start]
            rows = np.flatnonzero(flags)
            if not rows.size:
                continue
            integral = not np.any(flags[rows] == 2)
            if 2 * rows.size > flags.size:  # most rows: the chunk as it is, not a copy
                out[start:stop] += form_of(families[b]).host_tail(
                    ktables[b], sources[b].read(start, stop), steps[b], integral=integral)
            else:  # only the rows with a count past the steps (or not an integer)
                out[start + rows] += form_of(families[b]).host_tail(
                    ktables[b], sources[b].read(start, stop)[rows], steps[b],
                    integral=integral)
        check_rounding(start, stop, risk, across)

    pending = None
    for i, start in enumerate(range(0, n_rows, rows)):
        stop = min(start + rows, n_rows)
        xs = staging.fill(i, start, stop)  # chunk i - 2 was stored (and so waited for)
        result = scores(families, levels, joint, class_log_prior, ktables, xs,
                        np.int32(stop - start), whole, tops)
        if pending is not None:  # finish the previous chunk while this one computes
            store(*pending)
        pending = (start, stop, result)
    if pending is not None:
        store(*pending)
    return out
