"""The jit-compiled numeric entry points and the row streaming that feeds them.

Naive Bayes is two kernels: per-class sufficient statistics (one pass over X) and class scores
(X against the parameter tables). Both are memory-bound, so the host never hands JAX a
full-size array: rows are encoded (validated and converted to the kernel dtype) one chunk of
about :data:`CHUNK_BYTES` at a time, and every chunk goes through one compiled kernel. A chunk
stays in cache between the host conversion and the kernel, full-size temporaries (NaN masks,
one-hot matrices, float64 copies) never exist, and peak extra memory is a few chunks plus the
``(n, K)`` output: a whole-array path would spend most of its time in copies, not in the
matmuls.

A float64 fit of forms with ``in_place_stats`` (the Multinomial) reads a C-contiguous
NumPy block where it lies instead (:class:`_InPlace`, :mod:`._in_place`): no copy at all.

On an accelerator every chunk budget is :data:`ACCELERATOR_BUDGET_SCALE` times the CPU's (no
cache to stay in; each chunk costs a launch and a wait), and a device-resident ``jax.Array`` is
sliced into chunks on its device (:class:`_DeviceChunks`) rather than copied through the host.

Families are static arguments (classes are hashable) and their parameters pytrees, so a kernel
compiles once per (families, chunk shape, dtype). Chunk row counts come from :func:`bucket`, so a
new batch of the same width does not re-trace (counted in :data:`TRACES`), and class counts from
``_buckets.class_bucket`` (padded classes impossible, cut on the host), so neither does a model
whose class count falls in a compiled bucket.

Float32 (JAX's default) never carries more than one chunk: each chunk's statistics go to the
host, where the families finish and merge them in float64 (``finish_stats``, ``merge_stats``),
and the plug-in and posterior tables are computed there in float64 too (``host_numeric``
families). The score kernels read tables in a shifted form (``kernel_table``: relative to a
reference class, with a float64 per-column shift subtracted from the raw values on the host), so
float32 never subtracts two large, nearly equal numbers. Statistics float32 cannot hold are taken
again in float64 (``float32_inexact``, counts beyond float32's integers); scores float32 cannot
hold are refused with an error naming the column (``kernel_table``, ``score_rounding``). Chunks are
sized by everything a kernel materialises per row, the ``(rows, classes)`` score arrays (and a
one-hot, for a family that still asks for one) included, so memory stays a few chunks plus the
``(n, K)`` output whatever ``K`` is.

Fit statistics are summed by label (:class:`Labels`): by products with the weighted
``(rows, classes)`` one-hot when there are few classes, by a blocked scatter-add per class when
there are many (its cost does not grow with the class count).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial, wraps
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..families._base import (
    FLOAT32_SAFE,
    FLOAT64_SAFE,
    cached_by_identity,
    float64_mode,
    host_f64,
)
from . import form_of
from ._buckets import kernel_classes, pad_prior, pad_table, real_scores, real_stats
from ._compiled import compiled, keep_bounded
from ._float32 import Float32Unrepresentable
from ._groups import per_block
from ._in_place import readable, rows_in_place
from ._steps import (
    LOG_FACTORIAL,
    all_small,
    chunk_bounds,
    small_count_log_factorials,
)

#: trace counter per kernel, read by the no-retrace tests ("accumulate" is no longer a kernel:
#: chunks are merged on the host in float64; kept at 0 for readers of the counter)
TRACES = {"suff_stats": 0, "accumulate": 0, "scores": 0}

#: bytes of encoded input per streamed chunk on the CPU: large enough to amortise a dispatch,
#: small enough to stay in cache between the host conversion and the kernel
CHUNK_BYTES = 8 << 20
#: how many times larger every chunk budget is on an accelerator (GPU, TPU): no cache to stay
#: in, and each chunk costs a launch and a wait (benchmarks/tune.py ACCELERATOR_BUDGET_SCALE)
ACCELERATOR_BUDGET_SCALE = 32


def budget_scale() -> int:
    """1 on the CPU, :data:`ACCELERATOR_BUDGET_SCALE` when JAX's default backend is an
    accelerator: the factor every chunk budget (bytes or elements) is multiplied by."""
    return 1 if jax.default_backend() == "cpu" else ACCELERATOR_BUDGET_SCALE


def full_float32(kernel: Callable) -> Callable:
    """``kernel`` traced with full float32 matmuls, whatever the backend (applied under
    ``jax.jit``, so it acts at trace time only and costs nothing per call).

    JAX's default matmul precision for float32 is the backend's fastest: exact float32 on CPU,
    but TF32 tensor cores (10-bit mantissas, relative error about 5e-4 per product) on Ampere
    and later NVIDIA GPUs and bfloat16 passes on TPU. TF32's errors in the class scores are
    about a hundred times float32's, far above the ``SCORE_ROUNDING_LIMIT`` the float32
    kernels promise, and can change an argmax. So every kernel asks for float32
    (``jax.default_matmul_precision("float32")``), which the CPU gives anyway (the same
    results, bit for bit). float64 (x64) matmuls are float64 on every backend."""

    @wraps(kernel)
    def traced(*args, **kwargs):
        with jax.default_matmul_precision("float32"):
            return kernel(*args, **kwargs)

    return traced


def bucket(n: int) -> int:
    """Padded row count: 64 at least (batches of 1..64 rows share one kernel: one compile
    instead of four; a one-row exact predictive of 1,000 columns, 20 classes pays 0.3 ms),
    powers of two up to 1024, then eight steps per octave (<= 12.5%)."""
    if n <= 1024:
        return max(64, 1 << (n - 1).bit_length())
    step = 1 << ((n - 1).bit_length() - 4)
    return -(-n // step) * step


def even_rows(n: int, most: int) -> int:
    """Rows per batch: at most ``most``, the ``n`` rows shared evenly by the batches (so the
    last batch is not a small remainder compiled apart)."""
    return max(1, -(-n // -(-n // most))) if n else most


def batch_bucket(m: int, most: int) -> int:
    """Padded row count of a batch of ``m`` rows, of batches of at most ``most``: as
    :func:`bucket`, but no more than ``most``'s power of two (8-row batches of a wide model
    padded to 64 did eight times the work)."""
    return min(bucket(m), 1 << (max(most, 1) - 1).bit_length())


def chunk_rows(n_rows: int, row_bytes: int, budget: int | None = None) -> int:
    """Rows per chunk: the power of two nearest (on a log scale) to ``budget`` bytes (default
    :data:`CHUNK_BYTES`; times :func:`budget_scale` on an accelerator), so within 0.71x-1.41x
    of it, at least 64, at most ``bucket(n_rows)``.

    Not the largest power of two within the budget: the ``(rows, classes)`` arrays a chunk
    adds to its input would often halve the chunk just past a power of two, doubling the
    dispatches and host steps."""
    budget = (CHUNK_BYTES if budget is None else budget) * budget_scale()
    fit = budget / max(row_bytes, 1)
    rows = 1 << max(int(fit).bit_length() - 1, 0)  # the largest power of two within
    if fit * fit >= 2.0 * rows * rows:  # beyond sqrt(2) * rows: the next one is nearer
        rows *= 2
    return min(max(64, rows), bucket(n_rows))


def balanced_rows(n_rows: int, rows: int) -> int:
    """``rows`` (the most a chunk may hold) lowered so the chunks share the rows evenly: the
    last chunk is then not mostly padding. Still one chunk shape per call, from
    :func:`bucket`."""
    chunks = -(-n_rows // max(rows, 1))
    return min(rows, bucket(-(-n_rows // max(chunks, 1))))


def _one_hot(codes, weights, n_classes, dtype):
    return jax.nn.one_hot(codes, n_classes, dtype=dtype) * weights[:, None].astype(dtype)


def _one_hot_t(codes, weights, n_classes, dtype):
    """The weighted one-hot built as ``(classes, rows)``, the float64 class sums' left
    operand: XLA:CPU's float64 product ``hot_t @ x`` is faster than ``hot.T @ x``. In
    float32 the two products cost the same and building ``hot_t`` does not pay, so float32
    keeps ``hot.T``."""
    hot = jnp.arange(n_classes, dtype=codes.dtype)[:, None] == codes[None, :]
    return hot.astype(dtype) * weights[None, :].astype(dtype)


class Labels:
    """A chunk's class labels inside the statistics kernel: weighted per-class sums and a
    gather of each row's class values.

    With few classes (at most :data:`DOT_CLASSES`) the sums are products with the weighted
    one-hot (in float64 built as ``(classes, rows)``, :func:`_one_hot_t`): a BLAS product
    reads the chunk once, where XLA:CPU's blocked scatter-add is several times slower at
    tens of classes. A float64 chunk whose weights are all 1 or 0 is the exception: one plain
    ``segment_sum`` of its rows, without weights or blocks, is faster than the product there
    (:meth:`sum`). With more classes the product's cost grows with the class count, so the
    sums are a blocked scatter-add (``jax.ops.segment_sum``), whose cost does not:
    O(rows x columns + classes x columns) per chunk."""

    #: up to this many classes the sums are products with the one-hot, beyond it a scatter-add,
    #: whose cost does not grow with the classes (benchmarks/tune.py DOT_CLASSES)
    DOT_CLASSES = 64
    #: a scatter-add sums each class's rows one after another, a float32 rounding each; the
    #: rows are split into up to this many blocks summed apart (then added): 16x shorter
    #: chains, as accurate as the one-hot products
    BLOCKS = 16

    def __init__(self, codes, weights, n_classes: int, dtype):
        self.codes, self.n_classes, self.dtype = codes, n_classes, dtype
        self.weights = weights.astype(dtype)
        self.by_product = n_classes <= self.DOT_CLASSES
        # built here, outside any branch a family traces (a cached tracer would leak out of it)
        # (XLA drops whichever of the two a kernel does not use)
        self._hot = (_one_hot(codes, self.weights, n_classes, dtype) if self.by_product
                     else None)
        self._hot_t = (_one_hot_t(codes, self.weights, n_classes, dtype)
                       if self.by_product and jnp.dtype(dtype) == jnp.float64 else None)
        if self.by_product:
            return
        rows = codes.shape[0]
        # blocks only while the per-block sums stay smaller than the chunk
        blocks = min(self.BLOCKS, max(rows // max(n_classes, 1), 1))
        self.blocks = 1 << (blocks.bit_length() - 1)
        if self.blocks > 1:
            block = (jnp.arange(rows, dtype=jnp.int32) * self.blocks) // rows
            self._segments = codes + n_classes * block
        else:
            self._segments = codes

    def _sum(self, values):
        k = self.n_classes
        sums = jax.ops.segment_sum(values, self._segments, num_segments=self.blocks * k)
        return sums if self.blocks == 1 else jnp.sum(
            sums.reshape((self.blocks, k) + values.shape[1:]), axis=0)

    def sum(self, values):
        """``(K, ...)``: per class, the weighted sum of ``values`` ``(rows, ...)``.

        In float64 a chunk whose weights are all 1 or 0 (an unweighted fit's, its padded last
        chunk included) is summed by one scatter-add without the weights instead of the
        product, its rows of weight 0 sent past the last class (``segment_sum`` drops them):
        XLA:CPU's ``segment_sum`` adds each row once, where the product makes ``K``
        multiply-adds an entry. The float32 products are as fast as the scatter-add, and keep
        their summation order."""
        if self.by_product:
            flat = values.reshape(values.shape[0], -1)
            if self._hot_t is None:
                sums = self.one_hot().T @ flat
            else:
                sums = jax.lax.cond(
                    jnp.all((self.weights == 1) | (self.weights == 0)),
                    lambda v: jax.ops.segment_sum(
                        v, jnp.where(self.weights == 0, self.n_classes, self.codes),
                        num_segments=self.n_classes),
                    lambda v: self._hot_t @ v, flat)
            return sums.reshape((self.n_classes,) + values.shape[1:])
        return self._sum(values * self.weights.reshape(
            self.weights.shape + (1,) * (values.ndim - 1)))

    def exact_sum(self, values):
        """:meth:`sum` where every partial sum is exact (integers the dtype holds), so their
        order does not matter: one plain scatter-add of the weighted rows, 3-9 times faster
        on XLA:CPU than the one-hot product at 300-1,000 columns and 24-64 classes (the
        blocked scatter-add keeps float32's rounding chains short, which exact sums need
        not)."""
        flat = values.reshape(values.shape[0], -1) * self.weights[:, None]
        sums = jax.ops.segment_sum(flat, self.codes, num_segments=self.n_classes)
        return sums.reshape((self.n_classes,) + values.shape[1:])

    def rows(self, start: int, stop: int) -> Labels:
        """The labels of rows ``start:stop`` (``_in_place.InPlaceRows``' parts)."""
        return Labels(self.codes[start:stop], self.weights[start:stop], self.n_classes,
                      self.dtype)

    def count(self):
        """``(K,)`` weighted number of rows per class."""
        if self.by_product:
            return jnp.sum(self.one_hot(), axis=0)
        return self._sum(self.weights)

    def gather(self, table):
        """``(rows, ...)``: each row's own entry of a per-class ``table`` ``(K, ...)``."""
        return table[self.codes]

    def one_hot(self):
        """The weighted ``(rows, K)`` one-hot (built once): the products' left operand, and
        what families without ``label_stats`` take."""
        if self._hot is None:
            self._hot = _one_hot(self.codes, self.weights, self.n_classes, self.dtype)
        return self._hot


def needs_one_hot(families) -> bool:
    """Whether a statistics kernel over ``families`` materialises the ``(rows, classes)``
    one-hot (a family without ``label_stats``): chunks are then sized by it."""
    return any(form_of(f).label_stats is None for f in families)


#: ``(rows, classes)`` arrays a fit chunk materialises per class (the weighted one-hot, the
#: plain one a family gathers class means with, one product): chunks are sized by them too
FIT_CLASS_ARRAYS = 3
#: ``(rows, classes)`` arrays a score chunk materialises per class: the float32 sums, shifted
#: and exponentiated scores, and the float64 copies the host finishes
SCORE_CLASS_BYTES = 3 * 4 + 2 * 8
#: elements of a ``(rows, classes, columns)`` temporary (exact predictive, a Gaussian's direct
#: form) per score chunk: 32 MiB in float32 (benchmarks/tune.py CLASS_COLUMN_ELEMENTS)
CLASS_COLUMN_ELEMENTS = 1 << 23


def _not_binary(x) -> jax.Array:
    """True when a chunk holds an observed value other than 0 and 1, by one reduction over
    the values' bits: 0 (of either sign) and 1 are three bit patterns, and NaN's magnitude
    lies above infinity's. Unlike float comparisons, this sees a subnormal value: XLA:CPU
    reads those as 0, so the min, max and fractional part let 1e-45 (float32) or 5e-324
    (float64) through as a 0. It is also cheaper than the three reductions."""
    if x.dtype not in (jnp.float32, jnp.float64):  # integer or boolean input: no subnormals
        return jnp.any((x != 0) & (x != 1))
    ints = jnp.int64 if x.dtype == jnp.float64 else jnp.int32
    bits = jax.lax.bitcast_convert_type(x, ints)
    magnitude = bits & jnp.asarray(np.iinfo(ints).max, ints)  # -0.0 is 0
    one, inf = (jax.lax.bitcast_convert_type(jnp.asarray(v, x.dtype), ints) for v in (1.0, np.inf))
    return jnp.any((magnitude != 0) & (bits != one) & (magnitude <= inf))


def invalid_values(family, x) -> jax.Array:
    """True when a chunk of raw numbers holds a value ``family`` rejects.

    Checked in the kernel, where the chunk is read anyway, by the min, max and largest
    fractional part read in one pass (``_steps.chunk_bounds``, which the families' own
    branches share; one bit reduction for 0/1 columns, :func:`_not_binary`; in the statistics
    kernel of a count family, the markers of its log-factorial pass, and the bounds only
    where a marker is set) instead of passes on the host; a hit sends the host to the
    family's ``encode``, which names the column and row. NaN is a missing value, never
    invalid. The squares must not overflow either
    (``FLOAT32_SAFE``, ``FLOAT64_SAFE``)."""
    return _checked_values(family, x)[0]


def _checked_values(family, x, statistics: bool = False) -> tuple[jax.Array, jax.Array]:
    """``(invalid, top)``: :func:`invalid_values` and the chunk's largest observed value, which
    the same reductions give (0 for a family whose values are not bounded here; an upper
    bound for a chunk of small counts). ``statistics``: in the statistics kernel, where a
    family whose form has ``small_count_markers`` reads its log-factorial pass's markers instead of
    the bounds (``_steps.small_count_log_factorials``)."""
    checks = family.value_checks
    if checks is None:
        return jnp.zeros((), dtype=bool), jnp.zeros((), x.dtype)
    if checks.get("binary"):
        return _not_binary(x), jnp.zeros((), x.dtype)
    integral = bool(checks.get("integer"))

    def bounds(v):  # one pass (``chunk_bounds``), shared with the families' own reductions
        lo, hi, frac = chunk_bounds(v)
        return lo, hi, frac if integral else jnp.zeros((), v.dtype)

    def bounds_of_observed(v):  # only with missing values: NaN would hide the rest
        missing = jnp.isnan(v)
        frac = (jnp.max(jnp.where(missing, 0.0, v - jnp.floor(v))) if integral
                else jnp.zeros((), v.dtype))
        return (jnp.min(jnp.where(missing, jnp.inf, v)),
                jnp.max(jnp.where(missing, -jnp.inf, v)), frac)

    def checked(v):
        lo, hi, frac = bounds(v)
        # XLA:CPU's min and max may skip or return NaN: either way a NaN result is redone masked
        lo, hi, frac = jax.lax.cond(jnp.isnan(lo) | jnp.isnan(hi) | jnp.isnan(frac),
                                    bounds_of_observed, lambda v: (lo, hi, frac), v)
        # float64: values whose squares overflow (``FLOAT64_SAFE``, reported by ``numeric_block``)
        limit = FLOAT32_SAFE if v.dtype == jnp.float32 else FLOAT64_SAFE
        bad = (lo < -limit) | (hi > limit) | (frac > 0)  # +-inf, overflow, fractions
        if checks.get("nonnegative"):
            bad |= lo < 0
        return bad, hi

    if not (statistics and form_of(family).small_count_markers):
        return checked(x)
    # the log-factorial pass marks every entry that is not an integer count below 256 (XLA
    # computes the expression once): a chunk without one needs no bounds pass of its own
    small = all_small(small_count_log_factorials(x))
    largest = jnp.asarray(LOG_FACTORIAL.shape[0] - 1, x.dtype)
    return jax.lax.cond(small, lambda v: (jnp.zeros((), bool), largest), checked, x)


@compiled(static_argnums=(0, 2))
@full_float32
def checked_on_device(family, raw, dtype):
    """A device-resident block of raw numbers in the kernel ``dtype``, and whether it holds a
    value ``family`` rejects (:func:`invalid_values`, on the converted values as the score
    kernels read them: ``_DeviceChunks`` converts the same way)."""
    x = raw.astype(dtype)
    return x, invalid_values(family, x)


#: float32 holds every integer below this exactly (its 24-bit significand)
FLOAT32_EXACT_INTEGERS = 2.0 ** 24


def _beyond_float32_counts(family, x, top) -> jax.Array:
    """True when a float32 chunk of a count family (non-negative values) holds a value of
    :data:`FLOAT32_EXACT_INTEGERS` or more: the conversion to float32 rounded such counts (a
    float64 or integer input of 16,777,217 reads 16,777,216), and their class totals and log
    factorials with them: probabilities move little, but ``log_evidence`` by many nats
    (``tests/test_float32_guarantee.py``, "counts beyond float32's integers"). The host then
    redoes the statistics in float64 (:func:`stream_suff_stats`)."""
    checks = family.value_checks or {}
    if x.dtype != jnp.float32 or not checks.get("nonnegative"):
        return jnp.zeros((), dtype=bool)
    return top >= FLOAT32_EXACT_INTEGERS


class NeedsFloat64(Exception):
    """A float32 statistics pass met counts float32 cannot hold (see
    :func:`_beyond_float32_counts`) or statistics it cannot represent (``float32_inexact``);
    :func:`stream_suff_stats` redoes it in float64."""


@compiled(static_argnums=(0, 1, 2))
@full_float32
def suff_stats(families, levels, n_classes, xs, codes, weights):
    """Per-class sufficient statistics of one chunk for every block (each family's chunk
    form, finished on the host by ``finish_stats``), and one ``(2 B,)`` boolean array for
    ``B`` blocks: per block whether the chunk holds an invalid value (see
    :func:`invalid_values`), then per block whether it holds counts beyond float32's integers
    (:func:`_beyond_float32_counts`)."""
    TRACES["suff_stats"] += 1
    labels = Labels(codes, weights, n_classes, jnp.result_type(float))

    def block(key, x):
        family, lv = key
        stats = (family.suff_stats(x, labels.one_hot(), lv) if form_of(family).label_stats is None
                 else form_of(family).label_stats(x, labels, lv))
        bad, top = _checked_values(family, x, statistics=True)
        return stats, bad, _beyond_float32_counts(family, x, top)

    done = per_block(block, tuple(zip(families, levels, strict=True)), xs)
    # one array, one read on the host (each scalar read alone is a wait of its own)
    return done.map(lambda r: r[0]), jnp.concatenate([done.map(lambda r: r[1]).ordered(),
                                                      done.map(lambda r: r[2]).ordered()])


@compiled(static_argnums=(0, 1))
def suff_stats_in_place(families, n_classes, xs, codes, weights):
    """:func:`suff_stats` of float64 chunks read where they lie (``_in_place.InPlaceRows``),
    by each form's ``in_place_stats``, and whether every block's values were ones those sums
    take (else the host redoes the chunk from a staging copy, whose kernel also checks the
    values)."""
    TRACES["suff_stats"] += 1
    labels = Labels(codes, weights, n_classes, jnp.result_type(float))
    results = per_block(lambda family, x: form_of(family).in_place_stats(x, labels), families, xs)
    return results.map(lambda r: r[0]), jnp.all(results.map(lambda r: r[1]).ordered())


@compiled(static_argnums=(0, 3))
@full_float32
def _estimate(family, prior, stats, method):
    return family.estimate(prior, stats, method)


@compiled(static_argnums=(0,))
@full_float32
def _posterior(family, prior, stats):
    return family.posterior(prior, stats)


def estimate(family, prior, stats, method):
    """A family's plug-in estimates: in float64 NumPy on the host when the family allows it
    (``host_numeric``: float32 statistics would round class means and rates), else as one
    compiled function (run op by op, each small operation would compile on its own and
    dominate a cold start)."""
    if form_of(family).host_numeric:
        with np.errstate(divide="ignore", invalid="ignore"):
            return _read_only(family.estimate(host_f64(prior), host_f64(stats), method))
    return _estimate(family, prior, stats, method)


def _read_only(tree):
    """Read-only views of a table's arrays: a fitted table never changes, so operands derived
    from it may be cached by identity (``_sparse.prepared``)."""
    def freeze(a):
        if not isinstance(a, np.ndarray):
            return a
        view = a.view()
        view.flags.writeable = False
        return view

    return jax.tree_util.tree_map(freeze, tree)


def posterior(family, prior, stats):
    """A family's conjugate posterior (see :func:`estimate`)."""
    if form_of(family).host_numeric:
        with np.errstate(divide="ignore", invalid="ignore"):
            return _read_only(family.posterior(host_f64(prior), host_f64(stats)))
    return _posterior(family, prior, stats)


@compiled(static_argnums=(0, 1, 2, 3))
@full_float32
def scores(families, levels, exact, kind, class_log_prior, tables, xs, n_valid=None):
    """Class scores of one chunk and their per-row log normaliser ``logsumexp``.

    ``kind`` (:func:`kernel_kind`): ``"joint"``, log p(x, c) with every family's class-free
    constant included; else the pair (the scores shifted by their row maximum, their
    exponentials), which every other output reads (:func:`chosen`: one compiled program
    serves ``predict``, ``predict_proba`` and ``predict_log_proba``); :func:`finish` turns
    them into float64 log p(c | x) and p(c | x) that sum to one to float64 precision. The
    plug-in likelihood is used, or the exact posterior predictive if ``exact``. A row whose
    normaliser is not finite has every class impossible; the caller reports it. The third
    output holds, for ``B`` blocks, ``B`` flags (1 where the block holds an invalid value,
    :func:`invalid_values`), then ``B`` bounds on the scores' float32 rounding, then the
    bound on the rounding of their sum (:func:`across_bound`). Blocks of one family and shape
    are scored together (``_groups.per_block``)."""
    TRACES["scores"] += 1
    out = jnp.broadcast_to(class_log_prior, (xs[0].shape[0], class_log_prior.shape[0]))
    keys = tuple(zip(families, levels, strict=True))

    def block_scores(key, table, x):
        family, lv = key
        return form_of(family).scores(table, x, lv, exact), invalid_values(family, x)

    scored = per_block(block_scores, keys, tables, xs)
    out, across = added_up(out, scored.map(lambda r: r[0]), kind == "joint")
    top = jnp.max(out, axis=1, keepdims=True)
    shifted = out - jnp.where(jnp.isfinite(top), top, 0.0)
    weight = jnp.exp(shifted)
    norm = jnp.log(jnp.sum(weight, axis=1)) + top[:, 0]
    # per block, the largest bound on its float32 rounding in the scores (kernel tables only)
    # (``n_valid`` rows are data, the rest padding)
    valid = (jnp.arange(xs[0].shape[0]) < (xs[0].shape[0] if n_valid is None else n_valid))
    # (``"partial"``: other blocks' scores are added on the host, which may give any class
    # the probability these blocks deny it, so per-class bounds are taken over every class)
    weigh = class_weighted if kind != "partial" else every_class

    def block_risk(key, table, x, scores):
        rounding = form_of(key[0]).score_rounding(table, x, scores)
        return jnp.max(jnp.where(valid, weigh(rounding, shifted), 0.0))

    risk = per_block(block_risk, keys, tables, xs, scored.map(lambda r: r[0])).ordered()
    # one array, one read on the host: each scalar read alone is a wait of its own (``_store``)
    bad = jnp.concatenate([scored.map(lambda r: r[1]).ordered().astype(out.dtype),
                           risk.astype(out.dtype),
                           across_bound(across, out, shifted, valid, weigh)[None]])
    if kind == "joint":
        constant = per_block(lambda key, x: key[0].log_normalizer(x), keys, xs).total()
        return out + constant[:, None], norm, bad
    return (shifted, weight), norm, bad


def added_up(out, scores, joint: bool):
    """``out`` plus every block's scores (``scores``: a ``_groups.Grouped``), and per row and
    class a bound on the float32 rounding of their sum (None for a single block, in float64,
    or for the joint density, which keeps every constant): each block's scores less their
    row's best (a class-free constant, so the classes' log-odds are unchanged) added up
    pairwise, and half an epsilon times the magnitudes of the sums that formed
    (``Grouped.pairwise_total``). Relative to the row's
    best, what the sums carry is what separates the classes: the Student-t's absolute log
    densities summed over 1,000 one-column blocks reached 1,500 nats on ordinary data."""
    if len(scores) == 1 or joint or float64_mode():
        return out + scores.total(), None

    def relative(s):
        best = jnp.max(jnp.where(jnp.isfinite(s), s, -jnp.inf), axis=-1, keepdims=True)
        return s - jnp.where(jnp.isfinite(best), best, 0.0)

    blocks, formed = scores.map(relative).pairwise_total()
    out = out + blocks
    return out, 0.5 * jnp.finfo(out.dtype).eps * (formed + jnp.abs(out))


def across_bound(rounding, out, shifted, valid, weigh) -> jax.Array:
    """The largest bound, over the valid rows, on the float32 rounding of the blocks' scores
    added up (``rounding``: from :func:`added_up`, None where there is nothing to bound),
    weighed as each block's own bound is. Each block's bound holds its own scores only:
    2,000 one-column blocks whose halves favoured opposite classes by 15 nats each carried
    the sums to 15,000 nats, and probabilities moved by 7.4e-4 unrefused (as one block,
    their drift is refused)."""
    if rounding is None:
        return jnp.zeros((), out.dtype)
    return jnp.max(jnp.where(valid, weigh(rounding, shifted), 0.0)).astype(out.dtype)


def kernel_kind(output: str) -> str:
    """The ``scores`` kernel serving ``output``: ``"joint"``, ``"partial"`` (scores another
    block's are added to: ``scoring``'s host-scored and sparse blocks) or ``"pair"``."""
    return output if output in ("joint", "partial") else "pair"


def every_class(rounding, log_weight, xp=jnp):
    """``(n,)`` a row's rounding bound over every class a block's scores leave possible (those
    of score -inf stay impossible whatever is added): no class weighed by a probability."""
    if rounding.ndim == 1:
        return rounding
    return xp.max(xp.where(xp.isfinite(log_weight), rounding, 0.0), axis=1)


def chosen(values, output: str):
    """What ``output`` reads of a ``scores`` kernel's values: the exponentials for
    ``"proba"``; the row-shifted scores for ``"scores"`` (log p(x, c) up to a constant per
    row: the same best class and, with the host-scored blocks added, the same
    probabilities), ``"partial"`` and ``"log_proba"``; the joint scores as they are."""
    if output == "joint":
        return values
    return values[1] if output == "proba" else values[0]


def class_weighted(rounding, log_weight, xp=jnp) -> jax.Array:
    r"""``(n,)`` a row's rounding bound from ``score_rounding``: as given (one bound ``r`` on
    every class's score, so probabilities move by at most ``r / 2``), or from per-class bounds
    ``r_k`` ``(n, K)`` weighed by the class probabilities (``log_weight`` the scores less each
    row's largest): to first order :math:`\delta p_k = p_k \sum_{l \ne k} p_l(\delta s_k -
    \delta s_l)`, so :math:`|\delta p_k| \le p_k(1 - p_k) r_k + p_k \sum_{l \ne k} p_l r_l`,
    and twice the largest of these is returned (the same scale: the limit keeps
    probabilities within half of it). A class with no probability may be far off without
    moving any. Each :math:`p_k` is taken as large as the bounds allow,
    :math:`\min(1, p_k e^{r_k + \max_l r_l})`: a class whose rounded score put it at
    probability 0 may hold all of it (a Dirichlet-multinomial score 62,000 nats off was so
    weighed to 0, and its row's class flipped). ``xp``: ``jax.numpy`` in a kernel, NumPy on
    the host (``_exact``)."""
    if rounding.ndim == 1:
        return rounding
    log_p = log_weight - xp.log(xp.sum(xp.exp(log_weight), axis=1, keepdims=True))
    # a class of score -inf (a zero probability estimate) holds none, exactly: its bound, inf
    # as its score, would make every class's NaN
    rounding = xp.where(xp.isfinite(log_weight), rounding, 0.0)
    reach = xp.max(rounding, axis=1, keepdims=True)
    p = xp.exp(xp.minimum(log_p + rounding + reach, 0.0))
    pr = xp.where(p > 0, p * rounding, 0.0)
    others = xp.sum(pr, axis=1, keepdims=True) - pr
    return 2 * xp.max((1 - p) * pr + p * others, axis=1)


def finish(values: np.ndarray, output: str) -> np.ndarray:
    """Float64 normalisation on the host of a chunk of ``scores`` output (``(m, K)``: cheap
    next to the kernel, which reads ``(m, F)``)."""
    values = np.array(values, dtype=np.float64)  # a new array, finished in place
    # row sums as a product with ones: NumPy's sum along rows of a few classes is slower
    ones = np.ones(values.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        if output == "proba":  # divided rather than exp(log p): each probability <= 1
            values /= (values @ ones)[:, None]
        elif output == "log_proba":
            values -= np.log(np.exp(values) @ ones)[:, None]
    return values


def pad_rows(x: np.ndarray, rows: int) -> np.ndarray:
    """Zero rows appended up to ``rows``: zeros are valid for every family, and padded rows
    carry zero weight (fit) or are cut from the output (scores)."""
    if x.shape[0] == rows:
        return x
    out = np.zeros((rows,) + x.shape[1:], dtype=x.dtype)
    out[: x.shape[0]] = x
    return out


class Source(NamedTuple):
    """One block as the streaming driver reads it.

    ``read(start, stop)`` returns rows ``start:stop``: the raw numbers when the kernel checks
    them (``invalid_values``), else the block already encoded by its family. ``dtype`` is what
    the kernel reads; ``report()`` raises the family's error for an invalid value (it encodes
    the whole block on the host: only ever run on failure)."""

    read: Callable[[int, int], np.ndarray]
    width: int
    dtype: np.dtype
    report: Callable[[], None]
    #: bytes the kernel works through per row (a one-hot block is wider than its codes)
    row_bytes: int = 0
    #: the block's column labels, for errors that name a column
    columns: tuple = ()
    #: ``read`` returns slices of a device-resident ``jax.Array`` (:class:`_DeviceChunks`)
    device: bool = False
    #: a host chunk's fixed work, in cells: the host chunks are made at least this large
    #: (``_host``; a DataFrame's extension columns are converted column by column)
    chunk_cost: int = 0


def aligned_empty(shape: tuple, dtype, align: int = 64) -> np.ndarray:
    """An uninitialised array whose data starts on an ``align``-byte boundary: XLA:CPU reads
    such a NumPy array in place, while an unaligned one is copied on every call."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(size + align, dtype=np.uint8)
    start = (-raw.ctypes.data) % align
    return raw[start:start + size].view(dtype).reshape(shape)


class _Staging:
    """Two aligned buffers per block that chunks are copied (and converted) into in turn.

    A chunk stays in cache from this copy to the kernel. Buffer ``i % 2`` is refilled for
    chunk ``i`` only after the caller has waited for chunk ``i - 2``'s kernel."""

    def __init__(self, sources: Sequence[Source], rows: int, shifts: Sequence | None = None):
        self.sources, self.rows = sources, rows
        # per block, a float64 value per column subtracted on the host before the conversion
        # to the kernel dtype (so float32 holds the deviations, not the offset), or None
        self.shifts = shifts if shifts is not None else [None] * len(sources)
        # the second of each pair only once a second chunk comes (most small calls have one)
        self.buffers = [[aligned_empty((rows, s.width), s.dtype), None] for s in sources]

    @staticmethod
    def first_row(start: int, stop: int) -> int:
        """The first row chunk ``start:stop`` reads (a short chunk is padded with copies of
        its last row, of weight 0)."""
        return start

    def fill(self, i: int, start: int, stop: int) -> tuple:
        m = stop - start
        out = []
        for source, pair, shift in zip(self.sources, self.buffers, self.shifts, strict=True):
            if pair[i % 2] is None:
                pair[i % 2] = aligned_empty(pair[0].shape, pair[0].dtype)
            buf = pair[i % 2]
            with np.errstate(over="ignore", invalid="ignore"):  # the kernel flags inf
                if shift is None:
                    np.copyto(buf[:m], source.read(start, stop), casting="unsafe")
                else:  # in float64, converted as it is stored: still one pass
                    np.subtract(source.read(start, stop), shift, out=buf[:m], casting="unsafe")
            if m < self.rows:  # copies of a row the family takes (0 may be outside its
                buf[m:] = buf[m - 1] if m else 0  # support: log 0 times weight 0 is NaN)
            out.append(buf)
        return tuple(out)


@compiled(static_argnums=(3, 4))
@full_float32
def _device_rows(x, start, shift, rows: int, dtype):
    """``rows`` rows of ``x`` from ``start`` (traced: one compiled slice for every chunk) in
    ``dtype``, minus ``shift`` unless it is None. No arithmetic without a shift: the values
    keep their bits (a subnormal that ``_not_binary`` must see would be flushed to 0)."""
    return _shifted(jax.lax.dynamic_slice_in_dim(x, start, rows), shift, dtype)


def _shifted(chunk, shift, dtype):
    chunk = chunk.astype(dtype)
    return chunk if shift is None else chunk - shift


class _DeviceChunks:
    """The chunks of device-resident blocks (``Source.device``), sliced, converted to the
    kernel dtype and shifted where they are: no copy through the host. Same interface and
    the same values as :class:`_Staging`: a shift is subtracted on the device only where that
    rounds as the host's float64 subtraction does (:meth:`usable`)."""

    def __init__(self, sources: Sequence[Source], rows: int, shifts: Sequence | None = None):
        shifts = [None] * len(sources) if shifts is None else shifts
        self.blocks = [s.read(0, None) for s in sources]
        self.dtypes = [np.dtype(s.dtype) for s in sources]
        self.shifts = [None if h is None else jnp.asarray(h, s.dtype)
                       for s, h in zip(sources, shifts, strict=True)]
        self.rows = rows

    first_row = staticmethod(_Staging.first_row)

    @staticmethod
    def usable(sources: Sequence[Source], shifts: Sequence | None = None) -> bool:
        """Every block on the device, and each shift one the device subtracts with the host's
        rounding: the kernel reads float64 (the input converts exactly, as on the host), or
        float32 input in float32 with a shift float32 holds (``_base.kernel_shift``: the
        exact difference, rounded once either way)."""
        if not sources or not all(s.device for s in sources):
            return False
        for source, shift in zip(sources, shifts or [None] * len(sources), strict=True):
            if shift is None or np.dtype(source.dtype) == np.float64:
                continue
            raw = source.read(0, 0).dtype
            if raw != source.dtype or not np.array_equal(
                    np.asarray(shift, dtype=np.float64),
                    np.asarray(shift, dtype=source.dtype).astype(np.float64)):
                return False
        return True

    def fill(self, i: int, start: int, stop: int) -> tuple:
        m = stop - start
        out = []
        for x, shift, dtype in zip(self.blocks, self.shifts, self.dtypes, strict=True):
            if m == self.rows:
                out.append(_device_rows(x, start, shift, self.rows, dtype))
            else:  # the last, short chunk: its last row repeated, as _Staging does
                out.append(jnp.pad(_shifted(x[start:stop], shift, dtype),
                                   ((0, self.rows - m), (0, 0)), mode="edge"))
        return tuple(out)


class _InPlace:
    """Float64 chunks read where they lie (:mod:`._in_place`), without the staging copy. A
    chunk shorter than the others is read as the block's last ``rows`` rows, those before it
    (which the previous chunk counted) weighted 0 (:meth:`first_row`): one kernel shape, and
    nothing padded."""

    def __init__(self, sources: Sequence[Source], rows: int):
        self.sources, self.rows = sources, rows

    @staticmethod
    def usable(sources: Sequence[Source], forms, rows: int, n_rows: int) -> bool:
        """On the CPU, in float64 (so with no shift), for forms with ``in_place_stats``, at
        least ``rows`` rows, every block a NumPy array the kernel reads as it is
        (``_in_place.readable``)."""
        return (budget_scale() == 1 and float64_mode() and n_rows >= rows
                and all(form.in_place_stats is not None for form in forms)
                and all(not s.device and np.dtype(s.dtype) == np.float64
                        and readable(s.read(0, rows)) for s in sources))

    def first_row(self, start: int, stop: int) -> int:
        return min(start, stop - self.rows)

    def fill(self, i: int, start: int, stop: int) -> tuple:
        first = self.first_row(start, stop)
        return tuple(rows_in_place(s.read(first, stop)) for s in self.sources)


def staging(sources: Sequence[Source], rows: int, shifts: Sequence | None = None):
    """How chunks reach the kernel: sliced on the device for device-resident blocks
    (:class:`_DeviceChunks`), else copied into host buffers (:class:`_Staging`)."""
    if _DeviceChunks.usable(sources, shifts):
        return _DeviceChunks(sources, rows, shifts)
    return _Staging(sources, rows, shifts)


def _report(sources: Sequence[Source], flags) -> None:
    for source, flag in zip(sources, flags, strict=True):
        if bool(flag):
            source.report()
            raise ValueError("invalid value in the input (not located).")


def _row_bytes(sources: Sequence[Source]) -> int:
    return sum(max(s.row_bytes, s.width * s.dtype.itemsize) for s in sources)


#: in float32, the most rows a fit chunk sums (its sums merged in float64 on the host): a
#: float32 product's rounding grows with the rows it adds, and a narrow one (a column's
#: values and its count) added 2**21 rows of a class with a relative error of 2.9e-4, which
#: moved a Gaussian's ``var_`` by 6.4e-4 and ``log_evidence`` by 596 nats (3e-6 at 2**16)
FLOAT32_FIT_ROWS = 1 << 16


def stream_suff_stats(families, levels, n_classes, sources, codes, weights):
    """Sufficient statistics of all rows as float64 NumPy arrays.

    Each chunk's statistics come from the kernel (in its dtype, over one chunk only) and are
    finished and merged on the host in float64 (each family's ``finish_stats`` and exact
    ``merge_stats``) while the next chunk computes, so float32 never accumulates across
    chunks. Chunks are sized by the input row and by the ``(rows, classes)`` arrays the kernel
    materialises, so memory stays a few chunks whatever the number of classes. In float32, a
    pass that meets counts beyond float32's integers (:func:`_beyond_float32_counts`), or
    whose statistics float32 inputs cannot represent (``float32_inexact``), is redone in
    float64, its float32 sources read as float64; a pass involving a form that declares
    ``float64_statistics`` runs so from the start."""
    keep_bounded()
    if float64_mode() or not any(form_of(f).float64_statistics for f in families):
        try:
            return _stream_suff_stats(families, levels, n_classes, sources, codes, weights)
        except NeedsFloat64:  # what float32 cannot hold: the whole pass again, in float64
            pass
    with jax.enable_x64(True):
        wide = [s._replace(dtype=np.dtype(np.float64)) if s.dtype == np.float32 else s
                for s in sources]
        return _stream_suff_stats(families, levels, n_classes, wide, codes, weights)


def _stream_suff_stats(families, levels, n_classes, sources, codes, weights):
    """:func:`stream_suff_stats` in the current dtype mode; in float32, raises
    :class:`NeedsFloat64` at the first chunk with counts beyond float32's integers, or after
    the pass when the statistics are beyond float32 (``float32_inexact``)."""
    n = codes.shape[0]
    dtype = np.dtype(jnp.result_type(float))
    forms = [form_of(f) for f in families]
    # the kernel's classes: a bucket, its padded classes cut from each chunk's statistics
    padded = kernel_classes(forms, n_classes)
    per_class = FIT_CLASS_ARRAYS * padded * dtype.itemsize if needs_one_hot(families) else 0
    x32 = not float64_mode()
    rows = chunk_rows(n, _row_bytes(sources) + per_class)
    rows = balanced_rows(n, min(rows, FLOAT32_FIT_ROWS) if x32 else rows)
    chunks = (_InPlace(sources, rows) if _InPlace.usable(sources, forms, rows, n)
              else staging(sources, rows))
    totals: list = [None] * len(families)
    accelerator = budget_scale() > 1

    def compute(i, start, stop):
        """Chunk ``i``'s kernel, dispatched, and whether it reads the chunk in place."""
        xs = chunks.fill(i, start, stop)  # chunk i - 2 was finished (and so waited for)
        first = chunks.first_row(start, stop)
        c = pad_rows(codes[first:stop].astype(np.int32, copy=False), rows)
        w = pad_rows(np.array(weights[first:stop], dtype=dtype), rows)
        w[:start - first] = 0  # rows an in-place chunk reads again: the previous one counted them
        if isinstance(chunks, _InPlace):
            return suff_stats_in_place(families, padded, xs, c, w), True
        result = suff_stats(families, levels, padded, xs, c, w)
        if accelerator:  # its copy to the host starts as soon as it is computed
            for leaf in jax.tree_util.tree_leaves(result):
                leaf.copy_to_host_async()
        return result, False

    def finish(result, in_place, i, start, stop):
        nonlocal chunks
        # on an accelerator every array of the chunk's result in one read (each array read
        # alone is a wait of its own there; on the CPU the reads are views)
        stats, checks = jax.device_get(result) if accelerator else result
        if in_place and bool(checks):  # complete: values the in-place sums take are valid
            checks = np.zeros(2 * len(families), dtype=bool)
        elif in_place:  # other values: this chunk and the next ones from copies, checked
            if isinstance(chunks, _InPlace):
                chunks = staging(sources, rows)
            stats, checks = compute(i, start, stop)[0]
        checks = np.asarray(checks)  # per block: an invalid value; then: beyond float32
        if checks[len(families):].any():
            raise NeedsFloat64
        if checks[:len(families)].any():  # refused now: not finished (an infinity gave NaN)
            _report(sources, checks[:len(families)])
        stats = host_f64(stats)  # NumPy: each block's statistics are views of its group's
        for b, family in enumerate(families):
            form = forms[b]
            chunk = real_stats(form, stats[b], n_classes, padded)
            chunk = form.refine_stats(chunk, partial(sources[b].read, start, stop))
            chunk = form.finish_stats(chunk)
            totals[b] = chunk if totals[b] is None else family.merge_stats(totals[b], chunk)

    pending = None
    for i, start in enumerate(range(0, n, rows)):
        stop = min(start + rows, n)
        result, in_place = compute(i, start, stop)
        if pending is not None:  # finish the previous chunk while this one computes
            finish(*pending)
        pending = (result, in_place, i, start, stop)
    finish(*pending)
    # statistics float32 could not hold are taken again in float64 rather than refused: a
    # chunked fit must take what a batch fit takes (``kernel_table`` refuses what scores cannot)
    if x32 and any(form_of(family).float32_inexact(stats)
                   for family, stats in zip(families, totals, strict=True)):
        raise NeedsFloat64
    return tuple(totals)


def _column(source: Source, j: int) -> str:
    columns = getattr(source, "columns", ())
    return f"column {columns[j]!r}" if len(columns) > j else f"column {j} of the block"


#: kernel tables by the identity of the fitted table they were built from (see ``_tables``)
_kernel_tables: dict = {}
#: class log priors padded and placed as the score kernel reads them, by the same identity
_placed_priors: dict = {}


def _tables(families, tables, exact: bool, joint: bool, sources=(), classes=(0, 0)):
    """Every block's table in the form its score kernel reads, and its host-side shift
    (``FastForm.kernel_table``), built in float64 once per fitted table and kept on the
    default device in the kernel dtype (placing it at every call cost a tenth of a small
    call); ``classes``: its ``(real, kernel)`` class counts, the table padded from the first
    to the second (``_buckets.pad_table``)."""
    def build(family, table):
        form = form_of(family)
        kernel, shift = form.kernel_table(table, exact, joint)
        return _placed(pad_table(form, kernel, *classes), None), shift

    device = jax.config.jax_default_device
    built = [cached_kernel_table(_kernel_tables, (family, exact, joint, classes, device), table,
                                 partial(build, family, table), sources, b)
             for b, (family, table) in enumerate(zip(families, tables, strict=True))]
    return tuple(k for k, _ in built), [shift for _, shift in built]


def cached_kernel_table(cache: dict, key, table, build, sources, b: int):
    """``(kernel, shift)`` of one block's fitted ``table``, from ``cache`` or by ``build()``
    (in float64 on the host; ``cached_by_identity``: a few models' worth), for the dtype mode
    of the call: a table built under x64 has no float32 rounding bound and passed no float32
    check. A table float32 cannot hold is refused naming block ``b``'s column
    (:func:`unrepresentable`)."""
    def checked_build():
        try:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return build()
        except Float32Unrepresentable as err:
            raise unrepresentable(err, sources, b) from None

    return cached_by_identity(cache, table, (*key, float64_mode()), checked_build, limit=32)


def unrepresentable(err: Float32Unrepresentable, sources, b: int) -> ValueError:
    """The error for a table float32 cannot hold, naming the column and the remedy."""
    where = (_column(sources[b], err.column) if b < len(sources)
             else f"column {err.column} of the block")
    return ValueError(f"{where}: {err.reason}; float32 (JAX's default dtype) cannot represent "
                      f"it. Enable x64: JAX_ENABLE_X64=1, or "
                      f"jax.config.update(\"jax_enable_x64\", True).")


def stream_scores(families, levels, exact, output, class_log_prior, tables, sources, n_rows,
                  n_classes, device_out: bool = False):
    """``(n, K)`` float64 scores and the ``(n,)`` log normaliser, chunk by chunk.

    With ``device_out``, device-resident blocks (:class:`_DeviceChunks`) give device-resident
    results (:func:`_device_results`): ``jax.Array`` s in the kernel dtype, normalised on the
    device, the chunks' flags read back once at the end.

    Chunk rows are bounded by the input row, the ``(rows, K)`` score arrays and, unless every
    family scores by products alone (``product_scores``, plug-in), a ``(rows, K, F)``
    temporary, so memory is a few chunks plus the ``(n, K)`` output."""
    keep_bounded()
    width = sum(s.width for s in sources)
    # the kernel's classes: a bucket, the padded classes impossible and cut from the output
    padded = kernel_classes([form_of(f) for f in families], n_classes)
    rows = chunk_rows(n_rows, _row_bytes(sources) + SCORE_CLASS_BYTES * padded)
    if exact or not all(form_of(f).product_scores for f in families):
        rows = min(rows, chunk_rows(n_rows, 1, budget=CLASS_COLUMN_ELEMENTS // max(
            padded * width, 1)))
    rows = balanced_rows(n_rows, rows)
    kernel_tables, shifts = _tables(families, tables, exact, output == "joint", sources,
                                    (n_classes, padded))
    chunks = staging(sources, rows, shifts)
    # once for the stream, not at every chunk's call
    class_log_prior = cached_by_identity(
        _placed_priors, class_log_prior,
        ("prior", padded, float64_mode(), jax.config.jax_default_device),
        lambda: _placed(pad_prior(class_log_prior, n_classes, padded), None), limit=32)
    if device_out and isinstance(chunks, _DeviceChunks):
        out, norm = _device_results(families, levels, exact, output, class_log_prior,
                                    kernel_tables, sources, chunks, n_rows, rows)
        return (out if padded == n_classes else out[:, :n_classes]), norm
    out = np.empty((n_rows, n_classes), dtype=np.float64)
    norm = np.empty(n_rows, dtype=np.float64)
    pending = None
    for i, start in enumerate(range(0, n_rows, rows)):
        stop = min(start + rows, n_rows)
        xs = chunks.fill(i, start, stop)  # chunk i - 2 was stored (and so waited for)
        result = scores(families, levels, exact, kernel_kind(output), class_log_prior,
                        kernel_tables, xs, np.int32(stop - start))
        if pending is not None:  # finish the previous chunk while this one computes
            _store(out, norm, output, sources, n_classes, *pending)
        pending = (start, stop, result)
    if pending is not None:
        _store(out, norm, output, sources, n_classes, *pending)
    return out, norm


#: a block whose scores' float32 rounding bound exceeds this is refused: probabilities move by
#: at most a quarter of the log-odds error, so 2e-4 keeps them within 1e-4 of float64's
SCORE_ROUNDING_LIMIT = 2e-4


class InexactScores(ValueError):
    """A block's float32 scores beyond the rounding limit (:func:`inexact_scores`)."""


def inexact_scores(source: Source, rounding: float) -> ValueError:
    """The refusal of a block whose float32 scores' rounding bound exceeds the limit."""
    return InexactScores(
        f"{_column(source, 0)} (and the rest of its block): values this large or this far "
        f"from the classes (or this many columns) make the float32 class scores inexact "
        f"(rounding up to {rounding:.2g} in a log probability); float32 (JAX's default dtype) "
        f"cannot represent them. Enable x64: JAX_ENABLE_X64=1, or jax.config.update("
        f"\"jax_enable_x64\", True).")


def inexact_sum(sources: Sequence[Source], rounding: float) -> ValueError:
    """The refusal of the blocks' scores added up, whose float32 rounding bound exceeds the
    limit (:func:`across_bound`)."""
    named = ", ".join(_column(s, 0) for s in sources[:3]) + (", ..." if len(sources) > 3 else "")
    return InexactScores(
        f"the class scores of {len(sources)} blocks ({named}) added up: their sums reach "
        f"values so large that float32 rounds the class scores by up to {rounding:.2g} in a "
        f"log probability; float32 (JAX's default dtype) cannot represent them. Declare "
        f"columns of one family as one block (one family object for all of them), or enable "
        f"x64: JAX_ENABLE_X64=1, or jax.config.update(\"jax_enable_x64\", True).")


def _device_results(families, levels, exact, output, class_log_prior, kernel_tables, sources,
                    chunks, n_rows: int, rows: int):
    """:func:`stream_scores` kept on the device: the tables placed there once in the kernel
    dtype (by :func:`stream_scores`), every chunk's kernel queued without a wait, the chunks' flags
    (invalid values, rounding bounds) read back once, and the results joined and normalised
    there (:func:`_join_on_device`): reading each chunk's results back and normalising them
    on the host, or copying the tables at every chunk's call, would cost far more than the
    kernels."""
    results = []
    for i, start in enumerate(range(0, n_rows, rows)):
        stop = min(start + rows, n_rows)
        results.append(scores(families, levels, exact, kernel_kind(output), class_log_prior,
                              kernel_tables, chunks.fill(i, start, stop),
                              np.int32(stop - start)))
    _check_score_flags(sources, np.asarray(jnp.stack([r[2] for r in results]),
                                           dtype=np.float64).max(axis=0))
    return _join_on_device(output, n_rows, tuple(chosen(r[0], output) for r in results),
                           tuple(r[1] for r in results))


def _placed(tree, device):
    """Every array of ``tree`` on ``device``, floating ones converted on the host to the
    kernel dtype first (as a kernel call converts NumPy float64 arguments, by the same
    rounding): copied once for a stream of chunks rather than at every call."""
    dtype = np.dtype(jnp.result_type(float))

    def place(a):
        host = np.asarray(a)
        return jax.device_put(host.astype(dtype) if host.dtype.kind == "f" else host, device)

    return jax.tree_util.tree_map(place, tree)


@compiled(static_argnums=(0, 1))
@full_float32
def _join_on_device(output: str, n_rows: int, values, norms):
    """The chunks' ``scores`` outputs joined into ``(n, K)`` and ``(n,)`` and finished as
    :func:`finish` does, in the kernel dtype: probabilities divided by their row sum, log
    probabilities less the log of it (rows sum to 1 to that dtype's precision)."""
    out = jnp.concatenate(values)[:n_rows]
    norm = jnp.concatenate(norms)[:n_rows]
    if output == "proba":
        out = out / jnp.sum(out, axis=1, keepdims=True)
    elif output == "log_proba":
        out = out - jnp.log(jnp.sum(jnp.exp(out), axis=1, keepdims=True))
    return out, norm


def _check_score_flags(sources, flags: np.ndarray) -> None:
    """Refuse what a ``scores`` kernel flagged (``flags``: per block an invalid value, then
    per block its float32 rounding bound, then the bound of their sum, :func:`across_bound`;
    over several chunks, their largest)."""
    b = len(sources)
    _report(sources, flags[:b])
    for source, r in zip(sources, flags[b:2 * b], strict=True):
        if r > SCORE_ROUNDING_LIMIT:
            raise inexact_scores(source, float(r))
    if flags[2 * b] > SCORE_ROUNDING_LIMIT:
        raise inexact_sum(sources, float(flags[2 * b]))


def _store(out, norm, output, sources, n_classes, start, stop, result):
    s, z, flags = result
    # the blocks' invalid-value flags, then their rounding bounds (``scores``), read at once:
    # each jax scalar read alone (``bool``, ``float``) is a wait of its own
    _check_score_flags(sources, np.asarray(flags, dtype=np.float64))
    s = chosen(s, output)
    out[start:stop] = finish(real_scores(np.asarray(s)[: stop - start], n_classes), output)
    norm[start:stop] = np.asarray(z)[: stop - start]
