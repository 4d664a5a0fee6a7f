"""Float32 safety shared by the fast forms: tables taken relative to a reference (so float32
never subtracts two large, nearly equal numbers), chunk sums in a form float32 cannot spoil,
and bounds on the rounding of float32 sums (the kernels refuse what they cannot bound)."""

from __future__ import annotations

import jax
import numpy as np

from ..families._base import float64_mode


class Float32Unrepresentable(ValueError):
    """Raised by ``FastForm.kernel_table`` when float32 cannot represent what the table
    describes; ``column`` is the index in the block (the kernels add its name and the x64
    advice)."""

    def __init__(self, column: int, reason: str):
        super().__init__(reason)
        self.column, self.reason = column, reason


#: a float32 sum of ``n`` terms is rounded by up to ``SUM_ROUNDING * eps * log2(n)`` times the
#: size its partial sums reach (the result's plus the terms' root sum of squares, :func:`centre`)
SUM_ROUNDING = 0.5


#: a chunk whose one-bound-for-all-classes rounding stays below this (half the kernels'
#: ``SCORE_ROUNDING_LIMIT``: the class weighting then cannot exceed the limit) skips the
#: per-class bound's product (``GaussianFast.score_rounding``, ``MultinomialFast.score_rounding``)
COARSE_ROUNDING = 1e-4


def sum_rounding(size: jax.Array, n_terms: int) -> jax.Array:
    """Bound on the accumulated rounding of float32 sums of ``n_terms`` per-column terms whose
    partial sums reach ``size`` (see :data:`SUM_ROUNDING`)."""
    eps = float(np.finfo(np.float32).eps)
    return SUM_ROUNDING * eps * float(np.log2(max(n_terms, 2))) * size


#: contiguous blocks of columns whose row means :func:`block_drift` takes
DRIFT_BLOCKS = 8
#: blocks narrower than this skip :func:`block_drift` (it cost the 50-column benchmark cell
#: a third and more): their drift's rounding, about eps sqrt(F) times F terms of a few units,
#: stays under 1e-4, and values far out make the scores, which the bound holds, as large
DRIFT_COLUMNS = 64


def block_drift(x: jax.Array, table: jax.Array) -> jax.Array:
    r"""``(n, K)``: the largest :math:`|\sum_{j \le m} \bar x_{b(j)} t_{kj}|` over the prefixes
    ``m`` of the columns, :math:`\bar x_b` the row's mean over its block ``b`` of equal
    contiguous blocks (as many as divide the columns, up to :data:`DRIFT_BLOCKS`): how far a
    product's partial sums are carried by the row's offset from zero, block by block, along
    the table's own partial sums (exact block sums, and each block's largest partial sum
    within it). What is left, the values
    less their block's mean, has no such drift unless it follows the table's pattern within
    a block; its partial sums are left to the terms' root sum of squares."""
    import jax.numpy as jnp

    n, f = x.shape
    # equal blocks, so the means are one fused reduction of the row (no product, no copy)
    blocks = max(b for b in range(1, min(DRIFT_BLOCKS, f) + 1) if f % b == 0) if f else 1
    block = np.arange(f) // max(f // blocks, 1)
    first = np.arange(blocks) * (f // blocks)
    means = jnp.mean(x.reshape(n, blocks, f // blocks), axis=2)  # (n, B)
    sums = jnp.sum(table.reshape(table.shape[0], blocks, f // blocks), axis=2)  # (K, B)
    prefix = jnp.cumsum(table, axis=1)
    before = jnp.concatenate([jnp.zeros_like(prefix[:, :1]), prefix[:, :-1]], axis=1)
    within = jnp.abs(prefix - before[:, first][:, block])  # partial sums inside each block
    peak = jax.ops.segment_max(within.T, jnp.asarray(block), num_segments=blocks).T  # (K, B)
    carried = jnp.zeros((n, table.shape[0]), x.dtype)  # the partial sums before block b
    drift = carried
    for b in range(blocks):  # a few blocks: one fused loop (XLA's cumsum was 4x slower)
        drift = jnp.maximum(drift, jnp.abs(carried) + jnp.abs(means[:, b:b + 1]) * peak[:, b])
        carried = carried + means[:, b:b + 1] * sums[:, b]
    return drift


def kernel_shift(shift: np.ndarray) -> np.ndarray:
    """A per-column shift for ``FastForm.kernel_table``, as float64 values float32 holds exactly
    in float32 mode. The host then subtracts it from float32 input with one rounding, the one a
    float32 subtraction on the device makes, so a device-resident block is shifted where it
    lives with the same result (``_kernels._DeviceChunks``); any value near the data centres
    it as well."""
    shift = np.asarray(shift, dtype=np.float64)
    return shift if float64_mode() else shift.astype(np.float32).astype(np.float64)


def log_rising(a: jax.Array, x: jax.Array, polynomial: bool = True) -> jax.Array:
    r"""``h(a, x) = log Γ(a + x) - log Γ(a) - x log a``, accurate to its own magnitude.

    The exact predictives of count families need :math:`\log Γ(a + x) - \log Γ(a)`; with
    ``a`` a large posterior count, both log-Gamma values are huge and their float32
    difference is noise. Split as :math:`x \log a + h(a, x)`, the first part is linear in
    ``x`` (taken relative to a reference class, in float64, by ``kernel_table``). For
    ``a >= 10`` Stirling's series gives :math:`h = \frac{x^2}{2a} - \frac{x^3}{6a^2} +
    a\,\psi(x/a) - \tfrac12\log(1 + x/a) + S(a + x) - S(a)` with :math:`\psi(u) =
    (1+u)\log(1+u) - u - u^2/2 + u^3/6` (its Taylor series below ``u = 1/4``, where the
    closed form cancels) and :math:`S(z) = \tfrac1{12z} - \tfrac1{360z^3} +
    \tfrac1{1260z^5}`; below 10, log-Gamma directly. With ``polynomial=False`` the two
    polynomial terms (``a >= 10`` only) are left out, for the caller to add from float64
    tables relative to a reference class (:func:`rising_polynomial`): they are the large,
    nearly class-free part when counts are large. In float64 mode they always stay in (and
    the tables hold zeros)."""
    import jax.numpy as jnp
    from jax.scipy.special import gammaln

    big = a >= 10.0
    ab = jnp.where(big, a, 10.0)
    u = x / ab
    l1p = jnp.log1p(u)
    us = jnp.minimum(u, 0.25)
    series = 0.0
    for k in range(18, 3, -1):  # sum_{k>=4} (-u)^k / (k (k - 1)), Horner's scheme
        series = series * us + (-1) ** k / (k * (k - 1))
    series = series * us**4
    tail = jnp.where(u < 0.25, series, (1.0 + u) * l1p - u - u * u * (0.5 - u / 6.0))

    def stirling_tail(z):
        zi = 1.0 / z
        z2 = zi * zi
        return zi * (1 / 12 - z2 * (1 / 360 - z2 / 1260))

    large = ab * tail - 0.5 * l1p + (stirling_tail(ab + x) - stirling_tail(ab))
    if polynomial or x.dtype == jnp.float64:  # float64 tables leave it here (see below)
        # past u = 1/4 the closed form (a + x - 1/2) log(1 + u) - x: a psi(u) less its
        # polynomial would cancel (a = 12, x = 1e7: 357 nats off in float64)
        large = jnp.where(u < 0.25, large + x * x / (2.0 * ab) - x**3 / (6.0 * ab * ab),
                          (ab + x - 0.5) * l1p - x
                          + (stirling_tail(ab + x) - stirling_tail(ab)))
    a_small = jnp.where(big, 1.0, a)
    small = gammaln(a_small + x) - gammaln(a_small) - x * jnp.log(a_small)
    return jnp.where(big, large, small)


def label_class_sums(labels, x: jax.Array, observed: jax.Array | None = None) -> jax.Array:
    """A chunk's per-class sums of ``x`` by label (``labels``: a ``_kernels.Labels``) in a
    chunk form float32 cannot spoil: ``(4, K, F)`` holding each class's weight, its mean, the
    sum of the rows' deviations from their own class mean, which :func:`finish_class_sums`
    adds up in float64 on the host, and a flag where that sum may be rounded
    (:func:`_centred_form`). A float32 sum of counts in the millions is rounded; the
    deviations are small, so their sum keeps the digits the class totals (and the differences
    between classes' rates) depend on. A chunk whose sums are certainly exact (integer values
    and weights, ``max(x) * total weight < 2**24``) takes one plain scatter-add instead
    (``Labels.exact_sum``); another integer chunk is centred on its means rounded to
    integers, so that the deviations and their sums stay exact (the float32 means left small
    columns beside large ones, counts near 60 beside counts near 1e6, with totals 1e-6 off and
    ``log_evidence`` 1e-4), unless a class's deviations are so large that their float32 sum
    may be rounded (a class of counts near 0 and near 1e7: totals hundreds off,
    ``log_evidence`` thousands of nats), which the flag sends to the float64 redo. Fractional
    values (a Multinomial of term weights) keep the centred form, whose float32 class totals
    are closer to float64 than one plain sum per chunk. With missing values (``observed``,
    the 0/1 flags of ``x``'s entries, missing ones 0 in ``x``), the weights and means are per
    column over the observed entries and the missing ones have no deviation (centred on the
    mean of all rows, a missing entry's deviation would be the whole mean). In float64 every
    chunk is summed once, as scikit-learn's float64 fit does, and returned alone, ``(K, F)``:
    its rounding, about 1e-16 of a total, is what the centred form would leave too."""
    import jax.numpy as jnp

    if x.dtype == jnp.float64:
        return labels.sum(x)
    k, f = labels.n_classes, x.shape[1]

    def centred(x):
        if observed is None:
            first = labels.sum(jnp.concatenate([jnp.ones_like(x[:, :1]), x], axis=1))
            weight = jnp.broadcast_to(first[:, :1], (k, f))
        else:
            first = labels.sum(jnp.concatenate([observed, x], axis=1))
            weight = first[:, :f]
        mean = first[:, -f:] / jnp.where(weight > 0, weight, 1.0)
        mean = jnp.where(integral, jnp.round(mean), mean)  # integer deviations: exact sums
        dev = x - labels.gather(mean)  # each row against its own class
        if observed is not None:
            dev = dev * observed
        return _centred_form(weight, mean, labels.sum(dev), dev, integral)

    def plain(x):  # every partial sum an integer the dtype holds: added exactly
        ones = jnp.ones((k, f), x.dtype)
        return jnp.stack([ones, labels.exact_sum(x), jnp.zeros_like(ones),
                          jnp.zeros_like(ones)])

    integral, exact = _integer_sums_exact(x, labels.weights)
    return jax.lax.cond(exact, plain, centred, x)


#: an integer chunk's deviation sums are certainly exact in float32 while a bound on the sum
#: of their absolute values stays below this (``2**24``, halved for the bound's own rounding)
DEVIATIONS_EXACT = 2.0 ** 23


def _centred_form(weight, mean, sums, dev, integral) -> jax.Array:
    """The centred chunk form ``(4, K, F)`` from the deviations ``dev`` and their class sums
    ``sums``: the fourth row is 1 where an integer chunk's deviation sum may be rounded (a
    class's weight times the column's largest absolute deviation, which bounds every partial
    sum, reaches :data:`DEVIATIONS_EXACT`), which :func:`finish_class_sums` reports as NaN.
    One reduction over the chunk: a product of the absolute deviations, the exact bound,
    cost the fit of every chunk a third more."""
    import jax.numpy as jnp

    largest = jnp.max(jnp.abs(dev), axis=0)
    inexact = integral & (weight * largest[None, :] >= DEVIATIONS_EXACT)
    return jnp.stack([weight, mean, sums, inexact.astype(mean.dtype)])


def _integer_sums_exact(x: jax.Array, weights: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Whether a chunk's values and weights are all integers, and whether every weighted sum
    of its rows is then exact in its dtype: the largest possible sum is below ``2**24`` in
    float32 (``2**53`` in float64), where adding integers is exact. A chunk of integer counts
    below 256 says so by the log-factorial pass's markers (``_steps.all_small``: the count
    families' kernels take that pass anyway, and XLA computes it once); only another chunk
    reads its largest value and fractional part (``_steps.chunk_bounds``), which cost the
    statistics kernel about a third of its time."""
    import jax.numpy as jnp

    from ._steps import LOG_FACTORIAL, all_small, chunk_bounds, small_count_log_factorials

    def bounds(x):
        _, top, frac = chunk_bounds(x)
        return frac == 0, top

    def small(x):
        return jnp.asarray(True), jnp.asarray(LOG_FACTORIAL.shape[0] - 1, x.dtype)

    integral, top = jax.lax.cond(all_small(small_count_log_factorials(x)), small, bounds, x)
    integral = integral & jnp.all(weights == jnp.floor(weights))
    return integral, integral & (top * jnp.sum(weights) < 2.0 ** (jnp.finfo(x.dtype).nmant + 1))


def finish_class_sums(sums: np.ndarray) -> np.ndarray:
    """The float64 class totals from :func:`label_class_sums`' chunk form (else ``sums`` itself: a
    float64 chunk's plain sums); NaN where float32 may have rounded an integer chunk's sum,
    which the count families' ``float32_inexact`` sends to the float64 redo."""
    sums = np.asarray(sums, dtype=np.float64)
    if sums.ndim != 3:
        return sums
    return np.where(sums[3] > 0, np.nan, sums[0] * sums[1] + sums[2])


def rising_polynomial(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The float64 coefficients of ``x**2`` and ``x**3`` that ``log_rising(...,
    polynomial=False)`` leaves out: ``1 / (2a)`` and ``-1 / (6 a**2)`` (0 where ``a < 10``,
    whose ``h`` is computed whole)."""
    big = (a >= 10.0) & (not float64_mode())  # float64 keeps them whole (its sums are exact
    inv = np.where(big, 1.0 / np.where(big, a, 1.0), 0.0)  # enough, and a row count far above
    return 0.5 * inv, -inv * inv / 6.0  # a would make them cancel)


def centre(table: np.ndarray) -> np.ndarray:
    """Per column, the mean of the finite entries over the classes (0 if none): what a linear
    table is taken relative to, so that each class's terms have both signs and a float32
    product's partial sums stay near the size of its result. Relative to the largest entry
    (:func:`reference`) every term of a class would have one sign and the partial sums would
    grow with the row, so ``sum_rounding`` would refuse close classes whose scores are
    exact."""
    finite = np.isfinite(table)
    total = np.sum(np.where(finite, table, 0.0), axis=0)
    count = np.sum(finite, axis=0)
    return np.where(count > 0, total / np.maximum(count, 1), 0.0)


def reference(table: np.ndarray) -> np.ndarray:
    """Per column, the largest finite entry over the classes (0 if none): what a shifted
    table is taken relative to (a class-free constant per row)."""
    finite = np.isfinite(table)
    ref = np.max(np.where(finite, table, -np.inf), axis=0)
    return np.where(np.isfinite(ref), ref, 0.0)
