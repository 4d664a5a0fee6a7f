"""Float32-safe chunk statistics of count columns, shared by the Multinomial and Poisson
forms: each chunk's log factorials and row totals as exact parts the host adds up in float64
(:func:`coefficient_rows`, :func:`finish_coefficient`), and what float32 would round too far
recomputed on the host (:func:`refine_coefficient`)."""

from __future__ import annotations

from functools import cache

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import gammaln
from scipy.special import gammaln as np_gammaln

from ..families._base import float64_mode
from ._steps import LOG_FACTORIAL, all_small, row_sums, small_count_log_factorials


def log_factorial_sum(x: jax.Array) -> jax.Array:
    r"""``(n,)`` row sums of :math:`\log\Gamma(x + 1)` for non-negative ``x``.

    A chunk of integer counts below 256 takes them from the table in one gather
    (``_steps.small_count_log_factorials``, whose pass also says whether the chunk is such a
    chunk); any other chunk takes ``gammaln``, many times slower. The gather alone, with its
    markers, costs less than a bounds pass choosing among cheaper branches would."""
    sums = small_count_log_factorials(x)
    return _or_gammaln(x, sums, all_small(sums))


def _or_gammaln(x, sums, small) -> jax.Array:
    return jax.lax.cond(small, lambda x: sums, lambda x: row_sums(gammaln(x + 1.0)), x)


#: :data:`LOG_FACTORIAL` in two parts for float32 (:func:`coefficient_rows`): ``HIGH`` on a
#: grid of 1/256, so a row's sum of them is exact in float32 below :data:`HIGH_EXACT`, and
#: ``LOW`` the rest, under 1/512 in magnitude
_LOG_FACTORIAL_HIGH = np.round(LOG_FACTORIAL * 256.0) / 256.0
_LOG_FACTORIAL_LOW = LOG_FACTORIAL - _LOG_FACTORIAL_HIGH
#: a float32 row sum of multiples of 1/256 is exact below 2^16 (24 bits of mantissa)
HIGH_EXACT = 2.0 ** 16


def coefficient_rows(weights, totals, x) -> jax.Array:
    r"""``(5, rows)``: a chunk's row weights :math:`w_i`, row totals :math:`n_i`, and
    :math:`r_i = \sum_v \log x_{iv}!` as two parts :math:`r_i = h_i + l_i` with a flag that
    says whether the parts are exact, the kernel's form of a weighted sum of log multinomial
    coefficients (or of log factorials); ``x`` is the chunk with missing counts as 0. The
    host adds them up in float64 (:func:`finish_coefficient`): in float32 a kernel's own
    weighted sum of :math:`\log n_i! - r_i` would repeat the same rounding in every row, and
    be off by several nats over many rows (by thousands for counts in the millions).

    A float32 :math:`r_i` is itself rounded by about one unit in its last place, the same
    way in row after row. Where that matters (a row's :math:`r_i` past
    :data:`COEFFICIENT_FLOAT32_MAX`) and the chunk holds integer counts below 256, the
    kernel sums :math:`\log x!` in two parts instead: :math:`h` on a grid of 1/256, whose row
    sums are exact in float32 below :data:`HIGH_EXACT`, and the remainder :math:`l`, under
    1/512 an entry, whose row sums float32 rounds by about 1e-6 at 1,000 columns (against
    about 1e-5 a row accepted below :data:`COEFFICIENT_FLOAT32_MAX`). Other chunks are
    recomputed on the host (:func:`refine_coefficient`), which is far slower than the two
    parts, so the kernel avoids it where it can."""
    sums = small_count_log_factorials(x)  # shared with the value checks (XLA: one pass)
    small = all_small(sums)
    r = _or_gammaln(x, sums, small)
    if x.dtype != jnp.float32:  # float64: one part, never refined
        return float64_coefficient_rows(weights, totals, r)
    zero = jnp.zeros_like(r)
    split = (jnp.max(r) > COEFFICIENT_FLOAT32_MAX) & small
    high, low = jax.lax.cond(
        split, lambda x: (small_count_log_factorials(x, _LOG_FACTORIAL_HIGH),
                          small_count_log_factorials(x, _LOG_FACTORIAL_LOW)),
        lambda x: (r, zero), x)
    return jnp.stack([weights, totals, high, low,
                      jnp.broadcast_to(split, r.shape).astype(r.dtype)])


def float64_coefficient_rows(weights, totals, r) -> jax.Array:
    """:func:`coefficient_rows` of a float64 chunk whose :math:`r_i` are known."""
    zero = jnp.zeros_like(r)
    return jnp.stack([weights, totals, r, zero, zero])


#: float32 rounds an :math:`r_i` (or :math:`n_i \log n_i`) past this alike in row after row:
#: such chunks take it in two parts (:func:`coefficient_rows`) or on the host in float64
COEFFICIENT_FLOAT32_MAX = 128.0


def refine_coefficient(rows: np.ndarray, read) -> np.ndarray:
    """``rows`` (:func:`coefficient_rows`, float64 on the host) with :math:`n_i` and
    :math:`r_i` recomputed in float64 from the chunk (``read()``, its values as the kernel
    read them, missing counts as 0) when float32 may have rounded them by more than about 1e-5
    a row (:data:`COEFFICIENT_FLOAT32_MAX`) and the kernel's two parts are not exact; as they
    are otherwise (and in float64 mode)."""
    if float64_mode():
        return rows
    totals, high, low, split = rows[1], rows[2], rows[3], rows[4]
    fractional = totals != np.floor(totals)
    size = high + low + np.where(fractional, totals * np.log1p(np.abs(totals)), 0.0)
    if not np.max(size, initial=0.0) > COEFFICIENT_FLOAT32_MAX:
        return rows
    if np.all(split > 0) and np.max(high, initial=0.0) < HIGH_EXACT:
        return rows  # integer counts (so integer totals): the parts are exact
    x = np.asarray(read())
    if x.dtype.kind == "f" and np.isnan(x).any():
        x = np.where(np.isnan(x), 0, x)
    out = rows.copy()
    out[1, :x.shape[0]] = x.sum(axis=1, dtype=np.float64)
    out[3] = 0.0
    # (a chunk the kernel flagged, -inf or a negative count, was refused before this)
    if x.max(initial=0) < LOG_FACTORIAL.shape[0] and np.array_equal(x, np.floor(x)):
        # the float64 table: cheaper than gammaln
        out[2, :x.shape[0]] = np.take(LOG_FACTORIAL, x.astype(np.intp)).sum(axis=1)
    else:
        out[2, :x.shape[0]] = np_gammaln(x.astype(np.float64) + 1.0).sum(axis=1)
    return out


def finish_coefficient(rows, with_totals: bool) -> np.float64:
    r"""float64 :math:`\sum_i w_i(\log n_i! - r_i)` (``with_totals``: the Multinomial's log
    coefficient) or :math:`\sum_i w_i r_i` (the Poisson's log factorials) from
    :func:`coefficient_rows`."""
    w, n, high, low, _ = np.asarray(rows, dtype=np.float64)
    r = high + low
    return np.float64(w @ (log_factorial(n) - r) if with_totals else w @ r)


#: row totals below this take :math:`\log n!` from a float64 table (:func:`log_factorial`)
TOTALS_TABLE = 1 << 16


@cache
def _totals_table() -> np.ndarray:
    return np_gammaln(np.arange(TOTALS_TABLE) + 1.0)


def log_factorial(n: np.ndarray) -> np.ndarray:
    r"""float64 :math:`\log n!` of row totals: looked up (the table holds ``gammaln``'s own
    values) when they are integers below :data:`TOTALS_TABLE`, else ``gammaln(n + 1)``, which
    would be a large part of a device-resident fit's host time."""
    if n.size and n.min() >= 0 and n.max() < TOTALS_TABLE:
        index = n.astype(np.intp)
        if np.array_equal(index, n):
            return _totals_table()[index]
    return np_gammaln(n + 1.0)
