r"""The exact count predictives' Gamma-function terms as products (score kernels).

For an integer count :math:`x \le S`,
:math:`h(a, x) = \log\Gamma(a + x) - \log\Gamma(a) - x\log a = \sum_{t=1}^{S-1} [x > t]\,
\log(1 + t/a)`, so the Dirichlet-multinomial and negative-binomial sums over a row's columns
are products of the indicator matrices :math:`[X > t]` with float64 tables
(``_sparse.step_tables``): no per-(row, class, column) log-Gamma. The counts this leaves out
(above ``S``, not integers) are few by the choice of ``S`` (``_exact.choose_steps``) and are
added on the host in float64 (``_sparse.dense_rising_tail``); :func:`needs_tail` tells the
host which rows have any, so it reads only those, and where most rows do,
:func:`tail_positions` gives each count's row of the host's table.

The chunk reductions the statistics and score kernels share live here too: :func:`row_sums`,
:func:`chunk_bounds` and :func:`small_count_log_factorials`, each called by every part of a
kernel that needs it (XLA computes identical expressions once).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import gammaln as np_gammaln

#: :math:`\log k!` for ``k < 256`` (``gammaln``'s own float64 values): the log factorials of
#: the usual small integer counts, looked up (:func:`small_count_log_factorials`)
LOG_FACTORIAL = np_gammaln(np.arange(256) + 1.0)
#: what an entry other than a small count adds to its row in :func:`small_count_log_factorials`
NOT_SMALL = 2.0 ** 60


def n_steps(x: jax.Array, steps: jax.Array) -> int:
    """``S``, static: the tables hold ``S - 1`` blocks of the block's width."""
    return steps.shape[0] // x.shape[1] + 1 if x.shape[1] else 1


def integer(x: jax.Array) -> jax.Array:
    """Integer counts (NaN is not)."""
    return x == jnp.floor(x)


def step_sums(x: jax.Array, steps: jax.Array) -> jax.Array:
    r"""``(n, K)``: :math:`\sum_j \sum_{t=1}^{\min(x_{ij}, S)-1} \log(1 + t/a_{kj})` over
    the integer counts of ``x`` (NaN and non-integer values count as 0: the host adds their
    whole term, and the steps past ``S`` of larger counts), as one product of the stacked
    indicators."""
    s = n_steps(x, steps)
    if s <= 1:
        return jnp.zeros((x.shape[0], steps.shape[1]), steps.dtype)
    xr = jnp.where(integer(x), x, 0.0)
    hot = jnp.concatenate([(xr > t).astype(steps.dtype) for t in range(1, s)], axis=1)
    return hot @ steps


def row_sums(x: jax.Array) -> jax.Array:
    """``(n,)`` row sums as a product with ones. On XLA:CPU the product is as fast as a row
    reduction for a plain array, and faster when the rows sum an expression (the log-factorial
    lookup)."""
    return x @ jnp.ones((x.shape[1],), x.dtype)


def small_count_log_factorials(x: jax.Array, table: np.ndarray = LOG_FACTORIAL) -> jax.Array:
    r"""``(n,)`` row sums of ``table[x]`` (:math:`\log x!`, :data:`LOG_FACTORIAL`) for integer
    counts ``0 <= x < len(table)``; any other entry (a fraction, a negative or larger value,
    NaN, infinity) adds :data:`NOT_SMALL` to its row instead, so the same pass tells whether
    the chunk holds small counts only (:func:`all_small`): what the Multinomial and Poisson
    statistics kernels need for their exact evidence, and what their value checks need to
    know (``_kernels.invalid_values``), without the bounds pass (:func:`chunk_bounds`).

    One gather of a table with a marker at each end: cheaper than a bounds pass followed by
    selects, and it spares the statistics kernel's value checks a bounds pass of their own."""
    return row_sums(marked_log_factorials(x, table))


def marked_log_factorials(x: jax.Array, table: np.ndarray = LOG_FACTORIAL) -> jax.Array:
    """:func:`small_count_log_factorials` entry by entry: ``table[x]``, or :data:`NOT_SMALL`
    for an entry that is not an integer count below ``len(table)`` (0 at 0)."""
    inside = jnp.clip(x, -1.0, float(table.shape[0])) + 1.0  # -1 and len(table): the markers
    index = jnp.where(x == jnp.floor(x), inside, 0.0).astype(jnp.int32)  # NaN: a marker
    marked = np.concatenate([[NOT_SMALL], table, [NOT_SMALL]])
    return jnp.take(jnp.asarray(marked, x.dtype), index, mode="clip")


def all_small(sums: jax.Array) -> jax.Array:
    """Whether no row of :func:`small_count_log_factorials` holds a marker: every entry of the
    chunk is an integer count below the table's length (a row's sum of the table's values
    stays far below :data:`NOT_SMALL`)."""
    return jnp.max(sums, initial=0.0) < NOT_SMALL / 2


def chunk_bounds(x: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    r"""``(lo, hi, frac)``: a chunk's smallest and largest value and its largest fractional
    part :math:`\max(x - \lfloor x \rfloor)`. Each is reduced along the rows first, then over
    the ``(F,)`` results: XLA:CPU vectorises a reduction along the rows over the columns, two
    to three times faster than one variadic reduction or one along each row (and XLA
    computes each only where it is read). A NaN may make any of them NaN, or be skipped
    (XLA:CPU's min and max do either): callers with missing values redo them masked."""
    def reduce(f, v, empty):  # ``empty``: what an empty chunk gives
        return f(f(v, axis=0, initial=empty), initial=empty)

    return (reduce(jnp.min, x, jnp.inf), reduce(jnp.max, x, -jnp.inf),
            reduce(jnp.max, x - jnp.floor(x), -jnp.inf))


def tail_positions(x: jax.Array, steps: jax.Array, top: jax.Array) -> jax.Array:
    """``(n, F)`` int32: where the host's cumulative table (``_sparse.cumulative_rising``,
    counts ``S .. top``) holds each entry's terms past ``S``, for a chunk the host scans whole
    (``_exact.scans_whole``): ``(x - S) F + j`` for an integer count ``S < x <= top`` in
    column ``j``, 0 for an entry the products finish (a count up to ``S``, NaN), -1 for one
    the table does not hold (a fraction, a count past ``top``: the host then reads the chunk
    itself). The host lists the nonzero positions and sums their table rows, without
    comparing, gathering and indexing the chunk's values itself."""
    s = n_steps(x, steps)
    held = integer(x) & (x <= top)  # its terms are the products' or the table's (not NaN)
    listed = held & (x > s)
    f = x.shape[1]
    position = ((jnp.where(listed, x, s) - s).astype(jnp.int32) * f
                + jnp.arange(f, dtype=jnp.int32))
    return jnp.where(listed, position, jnp.where(held | jnp.isnan(x), 0, -1))


def needs_tail(x: jax.Array, steps: jax.Array) -> jax.Array:
    """``(n,)`` int8: per row, whether it holds a count the products do not finish: 0 none,
    1 integer counts above ``S`` only, 2 a value that is not an integer (the host reads only
    the rows flagged, and scans a row flagged 1 for counts above ``S`` alone).

    Both are counted by one product with ones, a fractional value weighing ``F + 1``: on
    XLA:CPU two row reductions (``any``) would cost more than the plug-in's own product.
    A float32 sum is exact below ``2**24``, so a block of 4,096 columns or more (float32)
    counts the two apart."""
    observed = ~jnp.isnan(x)
    above = (x > n_steps(x, steps)) & observed
    fractional = ~integer(x) & observed
    f = x.shape[1]
    if f * (f + 2) >= 2 ** (jnp.finfo(x.dtype).nmant + 1):  # sums no longer exact
        n_above = row_sums(above.astype(x.dtype))
        n_fractional = row_sums(fractional.astype(x.dtype))
        return jnp.where(n_fractional > 0, 2, jnp.where(n_above > 0, 1, 0)).astype(jnp.int8)
    # a row's sum is its count above S (at most F) plus F + 1 per fractional value
    total = row_sums(jnp.where(fractional, f + 1.0, jnp.where(above, 1.0, 0.0)).astype(x.dtype))
    return jnp.where(total > f, 2, jnp.where(total > 0, 1, 0)).astype(jnp.int8)
