"""Helpers the family files share: validation of raw values, hyperparameters broadcast to a
block, float32 range checks, caches keyed by identity, and small numeric pieces (log-space
matmul, pseudo-count log priors, Dirichlet draws). The contract itself is ``_contract``.
"""

from __future__ import annotations

import importlib
import re
import sys
import warnings
from typing import Any, NamedTuple

import jax
import numpy as np

METHODS_PLUG_IN = ("ml", "map", "mean")


class _LazyModule:
    """A module imported at its first attribute access. A family's NumPyro statements serve
    MCMC, simulation and ArviZ only, so a fit or a prediction need not import NumPyro."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(self._name), attr)


numpyro = _LazyModule("numpyro")
dist = _LazyModule("numpyro.distributions")


class Schema(NamedTuple):
    """What a family learned about its columns at fit time, beyond the statistics."""

    columns: tuple  # column labels, in block order
    levels: tuple = ()  # per column, the tuple of category values (categorical only)


def cached_by_identity(cache: dict, obj: Any, key: tuple, build, limit: int) -> Any:
    """``build()``'s result for ``obj`` (a fitted table, a model, a schema's levels), kept in
    ``cache`` under ``(id(obj),) + key``. The entry keeps ``obj`` itself, so a recycled id
    cannot hit (equality would not do: ``(0, 1) == (False, True)``); past ``limit`` entries
    the oldest goes first."""
    full = (id(obj), *key)
    hit = cache.get(full)
    if hit is None or hit[0] is not obj:
        value = build()
        if len(cache) >= limit:
            cache.pop(next(iter(cache)), None)
        hit = cache[full] = (obj, value)
    return hit[1]


def is_cached(cache: dict, obj: Any, key: tuple = ()) -> bool:
    """Whether :func:`cached_by_identity` holds a value for ``obj`` and ``key``."""
    hit = cache.get((id(obj), *key))
    return hit is not None and hit[0] is obj


def xp_of(*trees) -> Any:
    """NumPy when every leaf of ``trees`` is a NumPy array or number (host float64), else
    ``jax.numpy`` (traced or device arrays)."""
    leaves = jax.tree_util.tree_leaves(trees)
    if all(isinstance(a, (np.ndarray, np.generic, float, int, bool)) for a in leaves):
        return np
    import jax.numpy as jnp

    return jnp


def gammaln_of(xp):
    """``gammaln`` of the array namespace ``xp`` (:func:`xp_of`): SciPy's for NumPy."""
    if xp is np:
        from scipy.special import gammaln

        return gammaln
    from jax.scipy.special import gammaln

    return gammaln


def stirling_tail(z):
    r""":math:`\omega(z) = \log\Gamma(z) - (z - \tfrac12)\log z + z - \tfrac12\log 2\pi`, by
    Stirling's series to :math:`z^{-9}` (the next term is below 2e-14 for :math:`z \ge 10`)."""
    zi = 1.0 / z
    z2 = zi * zi
    return zi * (1 / 12 - z2 * (1 / 360 - z2 * (1 / 1260 - z2 * (1 / 1680 - z2 / 1188))))


def log_gamma_ratio(z, d):
    r""":math:`\log\Gamma(z + d) - \log\Gamma(z)` for :math:`z, z + d > 0`, to its relative
    rounding: where both arguments are 10 or more, from Stirling's series,
    :math:`(z - \tfrac12)\log(1 + d/z) + d\log(z + d) - d + \omega(z + d) - \omega(z)`
    (:func:`stirling_tail`), which never forms the two large log-Gammas whose difference
    lost :math:`z\log z` times the rounding (4 nats at counts of 1e15); elsewhere the
    log-Gammas themselves."""
    xp = xp_of(z, d)
    z, d = xp.asarray(z, dtype=xp.result_type(z, d, 1.0)), xp.asarray(d)
    large = (z >= 10.0) & (z + d >= 10.0)
    zl = xp.where(large, z, 10.0)  # the other branch's arguments, kept finite
    dl = xp.where(large, d, 0.0)
    stirling = ((zl - 0.5) * xp.log1p(dl / zl) + dl * xp.log(zl + dl) - dl
                + stirling_tail(zl + dl) - stirling_tail(zl))
    gammaln = gammaln_of(xp)
    with np.errstate(invalid="ignore"):
        return xp.where(large, stirling, gammaln(z + d) - gammaln(z))


def _least_rounding(xp, *forms):
    """Of equal sums of terms, each element's from the form whose terms' absolute sum (its
    rounding's bound) is least: a form exact for one magnitude of the counts cancels at
    another."""
    values = [sum(terms) for terms in forms]
    bounds = [sum(xp.abs(v) for v in terms) for terms in forms]
    best, bound = values[0], bounds[0]
    for value, b in zip(values[1:], bounds[1:], strict=True):
        best, bound = xp.where(b < bound, value, best), xp.minimum(b, bound)
    return best


def log_beta_ratio(a, b, s, f):
    r""":math:`\log B(a + s, b + f) - \log B(a, b)` (a Beta posterior's evidence, the
    predictive of a beta negative binomial) as :math:`\log\Gamma` ratios (:func:`log_gamma_ratio`
    :math:`r`), in whichever of three equal forms rounds least: :math:`r(a, s) + r(b, f) -
    r(a + b, s + f)` (small increments of a large posterior), or pivoting on the larger side,
    :math:`r(a, s) + r(b, a) - r(b + f, a + s)` and its mirror (large counts of a small
    prior): the four log-Gammas of counts of 1e15 cancelled by whole nats."""
    xp = xp_of(a, b, s, f)
    r = log_gamma_ratio
    return _least_rounding(xp, (r(a, s), r(b, f), -r(a + b, s + f)),
                           (r(a, s), r(b, a), -r(b + f, a + s)),
                           (r(b, f), r(a, b), -r(a + s, b + f)))


def log_dirichlet_ratio(alpha, counts, observed=None):
    r""":math:`\log B(\boldsymbol\alpha + \mathbf N) - \log B(\boldsymbol\alpha)` along the
    last axis (:math:`B` the multivariate Beta: a Dirichlet posterior's evidence, the
    Dirichlet-multinomial predictive less its coefficient), with :func:`log_gamma_ratio`
    :math:`r`, in whichever of two equal forms rounds least: :math:`\sum_v r(\alpha_v, N_v) -
    r(A, N)` (small counts of a large posterior), or pivoting on the entry :math:`*` of largest
    :math:`\alpha + N`, :math:`\sum_{v \ne *} r(\alpha_v, N_v) + r(\alpha_*, A_-) -
    r(\alpha_* + N_*, A_- + N_-)` with :math:`A_-, N_-` the other entries' sums (counts of
    1e15 of one level, whose log-Gammas cancelled by whole nats). ``observed``: the entries
    that enter (the others, a missing count, add neither concentration nor count); none
    observed: 0."""
    xp = xp_of(alpha, counts)
    shape = xp.broadcast_shapes(xp.shape(alpha), xp.shape(counts))
    alpha, counts = xp.broadcast_to(alpha, shape), xp.broadcast_to(counts, shape)
    used = xp.ones(shape, dtype=bool) if observed is None else xp.broadcast_to(observed, shape)
    star = xp.arange(shape[-1]) == xp.argmax(xp.where(used, alpha + counts, -xp.inf),
                                               axis=-1)[..., None]
    star, rest = used & star, used & ~star

    def total(mask, v):
        return xp.sum(xp.where(mask, v, 0.0), axis=-1)

    a_star, n_star = total(star, alpha), total(star, counts)
    a_rest, n_rest = total(rest, alpha), total(rest, counts)
    some = a_star > 0  # a row with no observed entry has no factor
    a_star = xp.where(some, a_star, 1.0)
    each = log_gamma_ratio(xp.where(used, alpha, 1.0), counts)
    others, pivot = total(rest, each), total(star, each)
    r = log_gamma_ratio
    ratio = _least_rounding(xp, (others, pivot, -r(a_star + a_rest, n_star + n_rest)),
                            (others, r(a_star, a_rest), -r(a_star + n_star, a_rest + n_rest)))
    return xp.where(some, ratio, 0.0)


def xlogy_of(xp):
    """``xlogy`` of the array namespace ``xp`` (:func:`xp_of`): SciPy's for NumPy."""
    if xp is np:
        from scipy.special import xlogy

        return xlogy
    from jax.scipy.special import xlogy

    return xlogy


def _leaf_f64(a) -> np.ndarray:
    a = np.asarray(a)  # one conversion of a JAX array (each costs a few microseconds)
    return a if a.dtype.kind in "biu" or a.dtype == np.float64 else a.astype(np.float64)


def host_f64(tree) -> Any:
    """Every leaf as a float64 NumPy array (booleans and integer indices kept)."""
    return jax.tree_util.tree_map(_leaf_f64, tree)


def is_distribution(value: Any) -> bool:
    if "numpyro.distributions" not in sys.modules:  # no distribution can exist yet
        return False
    from numpyro.distributions import Distribution

    return isinstance(value, Distribution)


def checked_bool(value: Any, what: str) -> bool:
    """``value`` as a bool, refused unless True or False (a NumPy bool too), naming ``what``:
    ``bool("False")`` is True, so a string from a configuration file would silently switch
    the setting on."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{what} must be True or False, got {value!r} "
                         f"({type(value).__name__}).")
    return bool(value)


def _short(v: Any) -> str:
    import reprlib

    if is_distribution(v):
        return f"{type(v).__name__}(...)"
    if isinstance(v, np.ndarray) and v.ndim > 0:
        return f"array(shape={v.shape})"
    return reprlib.repr(v)


def broadcast_hyper(value: Any, n: int, name: str, family: str, *, positive: bool = True,
                    allow_zero: bool = False, columns: tuple | None = None,
                    squared: bool = False) -> np.ndarray:
    """A scalar or length-``n`` hyperparameter as a float64 array of shape ``(n,)``; an invalid
    entry is reported with its column when ``columns`` is given. In float32 its magnitude is
    held to ``FLOAT32_SAFE`` (the data's own limit), or to its square for a hyperparameter in
    the data's squared units (``squared``: a Gaussian's rate, which ``Gaussian(rate=1e22)`` for
    data near 1e11 needs).

    A NumPyro distribution in place of the value is a hyperprior (learned smoothing, MCMC
    only): the array then holds the hyperprior's mean as a placeholder, and the model samples
    the value (``Family.hyperpriors``)."""
    if is_distribution(value):
        if tuple(value.batch_shape) not in ((), (n,)) or value.event_shape:
            raise ValueError(f"{family}: {name}'s hyperprior {type(value).__name__} has shape "
                             f"{tuple(value.batch_shape) + tuple(value.event_shape)}; give a "
                             f"scalar one, or one of shape ({n},) (one per column, "
                             f".expand([{n}])).")
        lower = getattr(value.support, "lower_bound", None)
        if positive and (lower is None or np.any(np.asarray(lower) < 0)):
            raise ValueError(f"{family}: {name} must be positive, but its hyperprior "
                             f"{type(value).__name__} has support {value.support}, which "
                             f"holds other values; give one on the positive reals (Gamma, "
                             f"LogNormal, HalfNormal).")
        return np.full(n, float(np.mean(np.asarray(value.mean))))
    a = np.asarray(value)
    if a.dtype.kind not in "iuf":  # NumPy would read "1" as 1.0 and True as 1.0
        raise ValueError(f"{family}: {name} must be a number, one number per column or a "
                         f"NumPyro distribution (a hyperprior), got {_short(value)} "
                         f"({type(value).__name__}).")
    a = a.astype(np.float64)
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,):
        raise ValueError(
            f"{family}: {name} must be a scalar or have shape ({n},) (one value per column), "
            f"got shape {a.shape}."
        )
    limit = FLOAT32_SAFE**2 if squared else FLOAT32_SAFE
    bad = ~np.isfinite(a) | ((np.abs(a) > limit) & (not float64_mode()))
    if positive:
        bad |= (a < 0) if allow_zero else (a <= 0)
    if np.any(bad):
        j = int(np.argmax(bad))
        where = f"column {columns[j]!r}: " if columns is not None and len(columns) == n else ""
        sign = "" if not positive else " and non-negative" if allow_zero else " and positive"
        # the float32 hint only where the range is what failed, not the sign
        too_large = np.isfinite(a[j]) and abs(a[j]) > limit
        need = ("finite (within float32 range: enable x64 for larger)" if too_large
                else "finite") + sign
        # seed 001's "smoothing 0 is ML": the unsmoothed estimates are a method, not a prior
        unsmoothed = (" (0 gives no proper prior; the unsmoothed, maximum-likelihood "
                      "estimates are method='ml')" if positive and a[j] == 0 else "")
        raise ValueError(f"{where}{family}: {name} must be {need}, got {a[j]!r}{unsmoothed}.")
    return a


def numeric_block(values: np.ndarray, schema: Schema, family: str, dtype=None, *,
                  nonnegative: bool = False, binary: bool = False,
                  integer: bool = False, values_are: str = "counts") -> np.ndarray:
    """A block as floats with NaN for missing, in ``dtype`` (default float64), validated.

    Rejects non-numbers, +-inf, values beyond float32's safe range (in float32 mode) and,
    when asked, negative (said of ``values_are``), non-binary or non-integer values, naming
    the column and row.
    A numeric array is checked with a few reductions (min, max) and converted in one copy at
    most; only a failing block is searched value by value for the error message."""
    values = np.asarray(values)
    if (values.dtype.kind in "biuf" and values.ndim == 2 and values.size
            and _passes(values, nonnegative, binary, integer)):
        return values.astype(np.float64 if dtype is None else dtype, copy=False)
    if values.dtype.kind == "f":  # before +-inf is reported: the range is the first cause
        check_float64_range(values, schema.columns)
    x = _float64_block(values, schema, family)
    if values.dtype.kind != "f":
        check_float64_range(x, schema.columns)
    if nonnegative:
        first_bad(x < 0, schema, x, f"{family} needs non-negative {values_are}")
    if binary:
        first_bad(~np.isnan(x) & (x != 0) & (x != 1), schema, x,
                  f"{family} needs values in {{0, 1}} (or booleans)")
    if integer:
        first_bad(~np.isnan(x) & (x != np.floor(x)), schema, x, f"{family} needs integer counts")
    return x if dtype is None else x.astype(dtype)


#: entries per block of the host's 0/1 check (``_passes``): its boolean masks, 64 KiB each, stay
#: in cache (benchmarks/tune.py CHECK_BLOCK_ENTRIES)
CHECK_BLOCK_ENTRIES = 1 << 16


def _passes(x: np.ndarray, nonnegative: bool, binary: bool, integer: bool) -> bool:
    """True when a numeric block certainly passes every check (False: the caller searches it,
    NaN allowed there as missing)."""
    if binary and x.dtype.kind == "f":
        # every value a 0 or a 1 by two comparisons, where a range and a search for fractions
        # take four passes (NaN, a fraction or a subnormal value is neither); one ``all`` of
        # their union reads less than counting each; by blocks of rows whose masks stay in cache
        step = max(1, CHECK_BLOCK_ENTRIES // max(x.shape[1], 1))
        return all(bool(((b == 0) | (b == 1)).all())
                   for b in (x[i:i + step] for i in range(0, x.shape[0], step)))
    lo, hi = x.min(), x.max()
    if x.dtype.kind == "f" and (np.isnan(lo) or np.isnan(hi)):  # missing values: skip them
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN block
            lo, hi = np.nanmin(x), np.nanmax(x)
        if np.isnan(lo):
            return True
    lo, hi = float(lo), float(hi)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return False
    if not float64_mode() and max(-lo, hi) > FLOAT32_SAFE:
        return False
    if float64_mode() and max(-lo, hi) > FLOAT64_SAFE:
        return False
    if (nonnegative or binary) and lo < 0:
        return False
    if binary and (hi > 1 or (x.dtype.kind == "f" and np.any((x > 0) & (x < 1)))):
        return False
    if integer and x.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            return not np.any(x - np.floor(x) > 0)  # NaN compares False: missing is allowed
    return True


#: largest magnitude the float64 kernels take: squares of 1e150 (Gaussian sums of squares)
#: summed over 1e8 rows stay below float64's 1.8e308 (float32 has its own, smaller limit)
FLOAT64_SAFE = 1e150


def check_float64_range(block: np.ndarray, columns: tuple) -> None:
    """In x64 mode, refuse finite values whose squares would overflow float64, naming the
    column and row (they used to surface as "no observed value in this class" at 1e200 and
    as an "infinite value" at 1e307). Two reductions over float blocks; nothing in float32
    mode, where the families check against their own limit."""
    if block.dtype.kind != "f" or block.ndim != 2 or not block.size or not float64_mode():
        return
    with np.errstate(invalid="ignore"):
        hi, lo = np.fmax.reduce(block, axis=None), np.fmin.reduce(block, axis=None)
    if not max(abs(float(hi)), abs(float(lo))) > FLOAT64_SAFE:
        return
    with np.errstate(invalid="ignore"):
        big = np.isfinite(block) & (np.abs(block) > FLOAT64_SAFE)
    if big.any():  # +-inf alone is the family's to report ("infinite value")
        j = int(np.nonzero(big.any(axis=0))[0][0])
        i = int(np.argmax(big[:, j]))
        raise ValueError(
            f"column {columns[j]!r}: value {block[i, j]:.3g} (row {i}) is too large for the "
            f"computation: its square overflows float64 (values must stay within "
            f"+-{FLOAT64_SAFE:g}); rescale the column, e.g. divide it by a power of ten.")


def _float64_block(values: np.ndarray, schema: Schema, family: str) -> np.ndarray:
    """Float64 copy of a block with NaN for missing; rejects +-inf and non-numbers by column."""
    values = np.asarray(values)
    if values.dtype == object:  # None / pd.NA / NaT from a DataFrame mean "missing"
        import pandas as pd

        values = np.where(pd.isna(values), np.nan, values)
    try:
        x = np.asarray(values, dtype=np.float64)
    except OverflowError:  # a Python integer beyond float64 (10**400)
        for j, col in enumerate(schema.columns):
            for i, v in enumerate(values[:, j]):
                if isinstance(v, int) and abs(v) > sys.float_info.max:
                    raise ValueError(f"column {col!r}: an integer of {len(str(abs(v)))} "
                                     f"digits (row {i}) is too large for a float64 number; "
                                     f"rescale the column.") from None
        raise
    except (TypeError, ValueError):
        for j, col in enumerate(schema.columns):
            try:
                np.asarray(values[:, j], dtype=np.float64)
            except (TypeError, ValueError):
                example = _first_non_numeric(values[:, j])
                words = isinstance(example, str) and " " in example  # text, not a Timestamp
                raise TypeError(
                    f"column {col!r}: {family} needs numbers, got values such as {example!r}"
                    + (" (text: count its words first with scikit-learn's "
                       "sklearn.feature_extraction.text.CountVectorizer)." if words else ".")
                ) from None
        raise
    if x.ndim != 2:
        raise ValueError(f"{family}: expected a 2-D block, got shape {x.shape}.")
    if values.dtype == object:
        _check_numbers_as_text(values, schema.columns)
    inf = np.isinf(x)
    if inf.any():
        j = int(np.nonzero(inf.any(axis=0))[0][0])
        raise ValueError(
            f"column {schema.columns[j]!r}: infinite value ({x[inf.any(axis=1), j][0]}) "
            f"is not allowed; use NaN for a missing value."
        )
    check_float32_range(x, schema.columns, family)
    return x


#: largest magnitude whose square (Gaussian sums of squares) still fits in float32
FLOAT32_SAFE = 1e18


def float64_mode() -> bool:
    # what JAX makes of float64 (honours ``jax.enable_x64`` contexts): 0.4 us, where
    # ``jnp.result_type(float) == jnp.float64`` took 50-100 us, a few ms per fit in all
    return jax.dtypes.canonicalize_dtype(np.float64) == np.float64


def check_float32_range(x: np.ndarray, columns, family: str, limit: float = FLOAT32_SAFE):
    """In float32 mode, refuse values whose squares would overflow, naming the column."""
    if float64_mode():
        return
    with np.errstate(invalid="ignore"):
        big = np.abs(x) > limit
    if big.any():
        j = int(np.nonzero(big.any(axis=0))[0][0])
        raise ValueError(
            f"column {columns[j]!r}: {family} value {x[big[:, j], j][0]:.3g} is too large for "
            f"float32, the default dtype (limit {limit:g}); rescale the column or enable JAX's "
            f"x64 mode (JAX_ENABLE_X64=1).")


#: a number written as text: digits, an optional point and exponent (what pandas' CSV reader
#: reads as a number), without the underscores and the words nan and inf float() also takes
_DECIMAL = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")


def _check_numbers_as_text(values: np.ndarray, columns) -> None:
    """Refuse text cells of a numeric block that are not plain decimal numbers: float()
    read "1_000" as 1000 and the text "nan" as a missing value."""
    import pandas as pd

    for j, col in enumerate(columns):
        if pd.api.types.infer_dtype(values[:, j], skipna=True) not in (
                "string", "bytes", "mixed", "mixed-integer"):
            continue  # no text in the column (pandas' C scan)
        for i, v in enumerate(values[:, j]):
            if isinstance(v, str | bytes) and not _DECIMAL.fullmatch(
                    v if isinstance(v, str) else v.decode("ascii", "replace")):
                raise ValueError(
                    f"column {col!r}: the text {v!r} (row {i}) is not a number as written "
                    f"(digits, a point, an exponent); leave a missing value empty (None or "
                    f"NaN), or convert the column first, e.g. pd.to_numeric.")


def _first_non_numeric(col: np.ndarray) -> Any:
    for v in col:
        try:
            float(v)
        except (TypeError, ValueError):
            return v
    return None


def first_bad(mask: np.ndarray, schema: Schema, x: np.ndarray, problem: str) -> None:
    """Raise a ValueError naming the first column where ``mask`` is true."""
    if mask.any():
        j = int(np.nonzero(mask.any(axis=0))[0][0])
        i = int(np.nonzero(mask[:, j])[0][0])
        value = x[i, j]
        value = value.item() if isinstance(value, np.generic) else value  # not np.float64(..)
        raise ValueError(f"column {schema.columns[j]!r}: {problem}, got {value!r} (row {i}).")


def has_missing(x: jax.Array) -> jax.Array:
    """Whether a block holds a NaN, from one sum (the cheapest reduction; an inf also gives
    NaN there, which only sends a chunk the kernels reject anyway down the masked path)."""
    xp = xp_of(x)
    return xp.isnan(xp.sum(x))


def cond(pred, true_fun, false_fun, operand):
    """``jax.lax.cond`` in a traced family formula; a plain ``if`` on the host's float64 NumPy
    (:func:`xp_of`), so the same formula runs in both."""
    if xp_of(pred, operand) is np:
        return true_fun(operand) if pred else false_fun(operand)
    return jax.lax.cond(pred, true_fun, false_fun, operand)


def column_units(kind: str, x: np.ndarray, prior: dict, schema: Schema) -> list[tuple]:
    """``Family.dependence_units`` of a family of one real value per column: each column's
    values (NaN missing) and its hyperparameters (a scalar one shared)."""
    return [(col, kind, x[:, j].astype(np.float64), ~np.isnan(x[:, j]),
             {f: (v if v.ndim == 0 else v[j]).astype(np.float64) for f, v in prior.items()}, "")
            for j, col in enumerate(schema.columns)]


def observe_columns(fn, x, y, site: str, fill: float = 0.0) -> None:
    """NumPyro's ``"{site}.x"``: each row's values of a block under ``fn`` (a distribution of
    shape (rows, columns), the row's class picked), observed where ``x`` holds a value (a
    missing one masked out, its ``fill`` any value in the support), simulated when ``x`` is
    None."""
    if x is not None:
        observed = ~jax.numpy.isnan(x)
        fn, x = fn.mask(observed), jax.numpy.where(observed, x, fill)
    with numpyro.plate("row", y.shape[0], dim=-2), \
            numpyro.plate(f"{site}_feature", fn.batch_shape[-1], dim=-1):
        numpyro.sample(f"{site}.x", fn, obs=x)


def observed_pairs(per_value, per_observed, columns) -> tuple:
    """``linear_terms`` of a family whose column term is ``x * per_value + per_observed``
    (both ``(K, F)``): each column's two weights side by side, labelled ``"{column}"`` and
    ``"{column}:observed"`` (the default ``linear_features``' layout), and no bias."""
    per_value, per_observed = (np.asarray(v, dtype=np.float64) for v in (per_value, per_observed))
    both = np.stack([per_value, per_observed], axis=2).reshape(per_value.shape[0], -1)
    labels = [name for c in columns for name in (str(c), f"{c}:observed")]
    return both, labels, np.zeros(per_value.shape[0])


def pseudo_log(coefficient, log_value) -> float:
    """``sum c * log(theta)`` with ``0 * log 0 = 0`` (a zero estimate under a zero exponent):
    a conjugate prior's log density at an estimate (``Family.log_prior_at``)."""
    log_value = np.asarray(log_value, dtype=np.float64)
    c = np.broadcast_to(np.asarray(coefficient, dtype=np.float64), log_value.shape)
    with np.errstate(invalid="ignore"):
        terms = np.where(c == 0, 0.0, c * log_value)
    return float(np.sum(terms))


def dirichlet_draws(rng: np.random.Generator, alpha: np.ndarray, n: int) -> np.ndarray:
    """``n`` Dirichlet draws for every row of ``alpha`` (..., V), by normalised gammas."""
    g = rng.standard_gamma(np.broadcast_to(alpha, (n,) + np.shape(alpha)))
    return g / g.sum(axis=-1, keepdims=True)


def gamma_draws(rng: np.random.Generator, shape, rate, n: int) -> np.ndarray:
    """``n`` float64 draws of Gamma(``shape``, ``rate``) (rate parametrisation), elementwise."""
    shape, rate = (np.asarray(a, dtype=np.float64) for a in (shape, rate))
    return rng.standard_gamma(np.broadcast_to(shape, (n,) + shape.shape)) / rate


def beta_draws(rng: np.random.Generator, alpha, beta, n: int) -> np.ndarray:
    """``n`` float64 draws of Beta(``alpha``, ``beta``), elementwise."""
    alpha, beta = (np.asarray(a, dtype=np.float64) for a in (alpha, beta))
    return rng.beta(alpha, beta, size=(n,) + alpha.shape)


def log_matmul(x: jax.Array, log_table: jax.Array) -> jax.Array:
    """``x @ log_table.T`` for non-negative ``x``, with the convention ``0 * log 0 = 0``.

    ML and MAP tables hold ``-inf`` for events never seen; a plain matmul would turn ``0 * -inf``
    into NaN. The guarded path (one more matmul) only runs when the table has such entries.
    """
    xp = xp_of(x, log_table)

    def plain(t):
        return x @ t.T

    def guarded(t):
        finite = xp.isfinite(t)
        hits = x @ (~finite).astype(x.dtype).T
        return xp.where(hits > 0, -xp.inf, x @ xp.where(finite, t, 0.0).T)

    return cond(xp.all(xp.isfinite(log_table)), plain, guarded, log_table)


class GammaPrior(NamedTuple):
    """A Gamma(shape, rate) prior on a positive rate per column (Poisson, Exponential)."""

    shape: jax.Array  # (F,) prior, or (K, F) posterior
    rate: jax.Array


def gamma_prior(shape, rate, schema: Schema, family: str) -> GammaPrior:
    """The Gamma hyperparameters broadcast to the block's columns."""
    f, cols = len(schema.columns), schema.columns
    return GammaPrior(broadcast_hyper(shape, f, "shape", family, columns=cols),
                      broadcast_hyper(rate, f, "rate", family, columns=cols))


def check_beta_map(prior, schema: Schema, method: str, family: str) -> None:
    """Refuse MAP where a Beta parameter (``prior.alpha``, ``prior.beta``) is below 1: that
    Beta density has its mode at 0 or 1, or none at all."""
    bad = (prior.alpha < 1) | (prior.beta < 1)
    if method == "map" and np.any(bad):
        raise ValueError(
            f"column {schema.columns[int(np.argmax(bad))]!r}: the {family} MAP estimate "
            "needs alpha >= 1 and beta >= 1 (a Beta density with a parameter below 1 has its "
            "mode at 0 or 1 or none at all); use method='mean' or raise the concentration.")


def check_gamma_map(prior: GammaPrior, schema: Schema, method: str, family: str,
                    values: str) -> None:
    """Refuse MAP where a Gamma shape below 1 leaves a class with no ``values`` its mode at 0
    with infinite density."""
    if method == "map" and np.any(prior.shape < 1):
        raise ValueError(
            f"column {schema.columns[int(np.argmax(prior.shape < 1))]!r}: the {family} MAP "
            f"estimate needs Gamma shape >= 1 (below 1 the posterior of a class with no "
            f"{values} has its mode at 0 with infinite density); use method='mean' or raise "
            "shape.")


def gamma_log_prior_at(prior: GammaPrior, log_rate, rate, method: str) -> float:
    r""":math:`\sum (a - 1)\log\lambda - b\lambda` of the Gamma prior at plug-in rates
    (MAP; ``a`` under the mean): a family's ``log_prior_at``."""
    c = np.asarray(prior.shape) - (1.0 if method == "map" else 0.0)
    return pseudo_log(c, log_rate) - float(np.sum(np.asarray(prior.rate) * rate))


def sample_gamma_rates(prior: GammaPrior, n_classes: int, site: str) -> dict:
    """NumPyro's ``{site}.rate``: a Gamma rate per class and column."""
    with numpyro.plate(f"{site}_feature", prior.shape.shape[-1], dim=-1), \
            numpyro.plate("class", n_classes, dim=-2):
        return {"rate": numpyro.sample(f"{site}.rate", dist.Gamma(prior.shape, prior.rate))}


def imprecise_level_bounds(hits: np.ndarray, totals: np.ndarray, observed: np.ndarray,
                           sizes: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` ``(n, K)`` of the summed log predictive of discrete columns under the
    imprecise Dirichlet model of strength ``s``: column ``j``'s predictive of the row's value
    in class ``k`` is ``(hits + s t) / (totals + s)``, linear in the prior mass ``t`` in [0, 1]
    that the class's Dirichlet puts on that value, so its extremes are at ``t = 0`` (the mass
    on another value) and ``t = 1``; a column of one value has ``t = 1`` only (probability 1).

    ``hits`` (n, K, F) the class's weighted count of the row's value in each column,
    ``totals`` (K, F) the class's observed count of the column, ``observed`` (n, F) where the
    row has a value (a missing one contributes nothing), ``sizes`` (F,) values per column."""
    free = observed[:, None, :] & (np.asarray(sizes) > 1)[None, None, :]
    with np.errstate(divide="ignore"):  # a value the class never showed: lower bound 0
        lower = np.log(hits) - np.log(totals + s)[None]
        upper = np.log(hits + s) - np.log(totals + s)[None]
    return (np.where(free, lower, 0.0).sum(axis=2), np.where(free, upper, 0.0).sum(axis=2))


def rising_log_bounds(base: np.ndarray, x: np.ndarray, total: np.ndarray, s: float,
                      iterations: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` ``(n, K)`` of ``log G(A + s) - log G(A + s + L) + sum_v [log G(N_v + s t_v
    + x_v) - log G(N_v + s t_v)]`` over the probability simplex of ``t`` (a Dirichlet-multinomial
    log predictive under Dirichlet(s t); ``G`` the gamma function, ``L = sum_v x_v``).

    ``base`` (K, V) the counts N, ``x`` (n, V) the row's counts, ``total`` (K,) A = sum_v N_v.
    Each term g_v(t_v) is concave and increasing (for x_v > 0; 0 for x_v = 0). Least: a concave
    function's minimum over a simplex is at a vertex, all the mass on one column; exact. Greatest:
    by weak duality, for every lambda >= 0 it is at most lambda + sum_v max_[0, 1] (g_v(t) -
    lambda t); lambda is bisected (in logs, between the least slope at 1 and the greatest at 0)
    towards where the inner maximisers sum to 1 (each inner bisection starts from the bracket
    the multipliers on either side left, and stops once every row's sum is known to be above 1
    or not), and each inner maximum is bounded above from its bisection bracket [lo, hi] by
    g_v(hi) - lambda lo. So the greatest value returned is never
    below the true one (a dominance it implies holds), and exceeds it by the bisections'
    tolerance. Only the (row, column) entries with x_v > 0 are computed."""
    from scipy import sparse
    from scipy.special import digamma, gammaln

    x = np.asarray(x, dtype=np.float64)
    n, k = x.shape[0], len(total)
    rows, cols = np.nonzero(x > 0)
    count = x[rows, cols][:, None]  # (E, 1) the used entries
    a = np.asarray(base, dtype=np.float64).T[cols]  # (E, K)
    per_row = sparse.csr_matrix((np.ones(len(rows)), (rows, np.arange(len(rows)))),
                                shape=(n, len(rows)))  # sums entries into their rows
    length = x.sum(axis=1, keepdims=True)
    head = gammaln(total + s)[None] - gammaln(total[None] + s + length)  # (n, K)

    def g(t):
        with np.errstate(invalid="ignore", divide="ignore"):
            value = gammaln(a + s * t + count) - gammaln(a + s * t)
        return np.where(a + s * t > 0, value, -np.inf)

    small = count.size and np.all(count == np.round(count)) and count.max() <= 8

    def slope(t):
        z = a + s * t
        with np.errstate(invalid="ignore", divide="ignore"):
            if small:  # psi(z + x) - psi(z) = sum_{i < x} 1 / (z + i): no digamma
                value = 1.0 / z
                for i in range(1, int(count.max())):
                    value = value + np.where(count > i, 1.0 / (z + i), 0.0)
                value = s * value
            else:
                value = s * (digamma(z + count) - digamma(z))
        return np.where(z > 0, value, np.inf)

    # least: every term at 0 but one at 1, or all at 0 when the row leaves a column unused
    g0, g1 = g(np.zeros(1)), g(np.ones(1))
    finite0 = np.asarray(per_row @ np.where(np.isfinite(g0), g0, 0.0))  # (n, K)
    zeros0 = np.asarray(per_row @ (~np.isfinite(g0)).astype(float))
    f0, z0 = finite0[rows], zeros0[rows]
    vertex = np.where(np.isfinite(g0), np.where(z0 == 0, f0 - g0 + g1, -np.inf),
                      np.where(z0 == 1, f0 + g1, -np.inf))
    least = np.full((n, k), np.inf)
    np.minimum.at(least, rows, vertex)
    spare = (x > 0).sum(axis=1) < x.shape[1]  # a column the row does not use
    least = np.where(spare[:, None], np.minimum(least, np.where(zeros0 == 0, finite0, -np.inf)),
                     least)
    empty = np.bincount(rows, minlength=n) == 0
    lower = head + np.where(empty[:, None], 0.0, least)

    def inner(lam, lo, hi, steps, decide=False):
        """Per entry the bracket ``[lo, hi]`` of argmax_[0, 1] g(t) - lam t, bisected from
        the given one; with ``decide``, only until every row's sum of maximisers is known
        to be above 1 or not."""
        lo = np.where(s0 <= lam, 0.0, np.where(s1 >= lam, 1.0, lo))
        hi = np.where(s0 <= lam, 0.0, np.where(s1 >= lam, 1.0, hi))
        for _ in range(steps):
            if decide and not np.any((np.asarray(per_row @ lo) <= 1)
                                     & (np.asarray(per_row @ hi) > 1)):
                break
            mid = 0.5 * (lo + hi)
            rising = slope(mid) > lam
            lo, hi = np.where(rising, mid, lo), np.where(rising, hi, mid)
        return lo, hi

    s0, s1 = slope(np.zeros(1)), slope(np.ones(1))
    top, bottom = np.full((n, k), 0.0), np.full((n, k), np.inf)
    np.maximum.at(top, rows, np.where(np.isfinite(s0), s0, 0.0))
    np.minimum.at(bottom, rows, s1)
    top = np.maximum(top, np.where(np.isfinite(bottom), bottom, 1.0)) * 2.0 + 1e-300
    if np.isinf(s0).any():  # a column the class never showed: its slope at 0 is infinite
        top = np.maximum(top, np.max(s1, initial=1.0) * 1e12)
    log_lo = np.log(np.clip(np.where(np.isfinite(bottom), bottom, 1.0), 1e-300, None)) - 1.0
    log_hi = np.log(top)
    # the maximisers fall as lambda rises, so those at log_hi and at log_lo bracket the
    # maximisers of every lambda between: each bisection starts from that bracket
    below, above = np.zeros(a.shape), np.ones(a.shape)
    for _ in range(iterations):
        mid = 0.5 * (log_lo + log_hi)
        lo, hi = inner(np.exp(mid)[rows], below, above, iterations, decide=True)
        over = np.asarray(per_row @ hi) > 1  # lambda too small: too much mass
        log_lo, log_hi = np.where(over, mid, log_lo), np.where(over, log_hi, mid)
        above, below = np.where(over[rows], hi, above), np.where(over[rows], below, lo)
    lam = np.exp(log_hi)
    lo, hi = inner(lam[rows], np.zeros(a.shape), np.ones(a.shape), iterations)
    dual = lam + np.asarray(per_row @ (g(hi) - lam[rows] * lo))
    upper = head + np.where(empty[:, None], 0.0, dual)
    return lower, upper
