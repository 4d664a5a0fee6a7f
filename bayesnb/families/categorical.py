r"""Categorical likelihood with a Dirichlet prior: one die per class and column.

.. math::

    \boldsymbol\theta_{kj} \sim \mathrm{Dirichlet}(\boldsymbol\alpha_j), \qquad
    x_{ij} \mid c_i = k \sim \mathrm{Categorical}(\boldsymbol\theta_{kj}).

This is the right model for a many-valued attribute (Barber, seed 000, section 4: one-hot coding
into Bernoullis breaks the independence assumption). With :math:`n_{kjv}` the weighted count of
level :math:`v` of column :math:`j` in class :math:`k`, :math:`n_{kj} = \sum_v n_{kjv}` and
:math:`A_j = \sum_v \alpha_{jv}` over the :math:`V_j` levels:

* ML: :math:`n_{kjv}/n_{kj}` (the PlayTennis tables of seed 003, e1071's tables in seed 004);
* posterior mean: :math:`(n_{kjv} + \alpha_{jv})/(n_{kj} + A_j)`; with a symmetric
  :math:`\alpha = m/V_j` this is the m-estimate :math:`(n_c + m p)/(n + m)`, :math:`p = 1/V_j`
  (seed 003), and with :math:`\alpha` it is scikit-learn's ``CategoricalNB(alpha)``;
* MAP: :math:`(n_{kjv} + \alpha_{jv} - 1)/(n_{kj} + A_j - V_j)`, defined for :math:`\alpha\ge 1`;
  MAP under :math:`\alpha + 1` equals the posterior mean under :math:`\alpha`;
* posterior: Dirichlet(:math:`\boldsymbol\alpha_j + \mathbf n_{kj}`); the predictive of one new
  value is the posterior mean (Dirichlet-categorical);
* evidence: :math:`\sum_{kj} \log\Gamma(A_j) - \log\Gamma(A_j + n_{kj}) + \sum_v
  \log\Gamma(\alpha_{jv} + n_{kjv}) - \log\Gamma(\alpha_{jv})`.

A value never seen in training (and not declared with ``categories=``) is an error at fit and
under ML. Under ``mean``/``bayes`` it gets the probability a zero-count level would get,
:math:`\bar\alpha_j/(n_{kj} + A_j)` with :math:`\bar\alpha_j` the column's mean concentration
(the smoothed probability), and :math:`(\bar\alpha_j - 1)/(n_{kj} + A_j - V_j)` under MAP.
``Categorical(unseen=...)`` says whether that happens with a warning (``"warn"``, the default:
a misspelt value such as ``"Crw"`` should not pass unnoticed), silently (``"smooth"``) or not
at all (``"error"``).

Values are kept apart by type as well as value: Python's ``True == 1`` and ``hash(True) ==
hash(1)`` would merge a boolean and a number into one level, so a column (or a prediction)
that mixes booleans with numbers is refused with an error naming the column and both values.

Levels are laid out flat: column :math:`j` owns entries ``offset[j] : offset[j] + V_j`` of every
``(.., L)`` array, ``L = sum_j V_j``, so columns with 2 and 200 levels share one table.

A fit on labelled dense data counts on the host (:meth:`Categorical.host_stats`: one
``np.bincount``) and prediction looks the levels up there (:meth:`Categorical.host_scores`: a
sparse product with the float64 log tables), whatever JAX's dtype: exact, and with nothing to
compile, so thousands of columns cost no more on a first call than on later ones. The JAX
functions below serve the rest (soft labels in EM, leave-one-out, posterior draws, NUTS).
"""

from __future__ import annotations

import functools
import numbers
import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.scipy.special import gammaln, xlogy
from scipy import sparse

from ._base import (
    Family,
    Schema,
    broadcast_hyper,
    cached_by_identity,
    dirichlet_draws,
    dist,
    is_distribution,
    log_matmul,
    numpyro,
    pseudo_log,
)


def _level_groups(n_levels: tuple) -> tuple:
    """:func:`_grouping` of ``n_levels``, cached per dtype mode (JAX caches the constants it
    makes of NumPy index arrays: one made under float32 must not be reused under x64)."""
    return _grouping(n_levels, jax.config.jax_enable_x64)


@functools.lru_cache(maxsize=64)
def _grouping(n_levels: tuple, x64: bool) -> tuple:
    """Columns grouped by their level count, for a one-hot whose compiled size does not grow
    with the number of columns.

    Returns ``(groups, order)``: ``groups`` is ``((V, columns), ...)`` (``columns`` a NumPy
    index, or None for all columns in order), and ``order[i]`` is the flat-layout position of
    entry ``i`` of the grouped one-hot (None when the two layouts coincide)."""
    index = np.int64 if x64 else np.int32
    sizes = np.asarray(n_levels, dtype=index)
    offset = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    groups, order = [], []
    for v in dict.fromkeys(n_levels):  # level counts in first-seen order
        cols = np.flatnonzero(sizes == v).astype(index)
        groups.append((int(v), None if cols.size == sizes.size else cols))
        order.append((offset[cols][:, None] + np.arange(v, dtype=index)).reshape(-1))
    order = np.concatenate(order).astype(index) if order else np.zeros(0, dtype=index)
    same = np.array_equal(order, np.arange(order.size))
    return tuple(groups), None if same else order


def _one_hot(codes, n_levels: tuple, dtype) -> jax.Array:
    """``(n, L)`` indicator of each row's level, columns grouped by level count (see
    :func:`_level_groups`; missing and unseen values, codes -1 and -2, match nothing)."""
    # one broadcast comparison per distinct level count: compile time and memory stay flat
    # however many columns there are (genotype data: thousands of 3-level columns)
    n = codes.shape[0]
    parts = []
    for v, cols in _level_groups(n_levels)[0]:
        picked = codes if cols is None else codes[:, cols]
        parts.append((picked[:, :, None] == np.arange(v)).astype(dtype).reshape(n, -1))
    return parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=1)


def _to_flat(grouped: jax.Array, n_levels: tuple) -> jax.Array:
    """``(.., L)`` values in the grouped layout of :func:`_one_hot` -> the flat layout."""
    order = _level_groups(n_levels)[1]
    return grouped if order is None else grouped[..., np.argsort(order).astype(order.dtype)]


def _to_grouped(flat: jax.Array, n_levels: tuple) -> jax.Array:
    """``(.., L)`` values in the flat layout -> the grouped layout of :func:`_one_hot`."""
    order = _level_groups(n_levels)[1]
    return flat if order is None else flat[..., order]


def _integer_levels(levels: tuple, boolean: bool) -> list | None:
    """The levels as Python ints when all are integers (booleans for a boolean column)."""
    def fits(v):
        is_bool = isinstance(v, bool | np.bool_)
        return is_bool if boolean else isinstance(v, int | np.integer) and not is_bool
    if not all(fits(v) for v in levels):
        return None
    return [int(v) for v in levels]


#: what ``Categorical(unseen=...)`` accepts
UNSEEN_POLICIES = ("warn", "smooth", "error")


class UnseenCategoryWarning(UserWarning):
    """A category value never seen in training was scored with the smoothed probability of a
    zero-count level (``Categorical(unseen="warn")``, the default)."""


def _show(values, limit: int = 3) -> str:
    """The first ``limit`` values, as reprs, for a message."""
    values = [v.item() if isinstance(v, np.generic) else v for v in values]
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (f", ... ({len(values)} in all)" if len(values) > limit else "")


def bool_and_number(values) -> tuple | None:
    """The first boolean and the first (non-boolean) number among ``values`` (1-D, missing
    values removed), or None when they do not mix. Python's ``True == 1`` would merge them."""
    values = np.asarray(values, dtype=object)
    if pd.api.types.infer_dtype(values, skipna=True) not in ("mixed", "mixed-integer"):
        return None  # a fast Cython pass settles all-string, all-number and all-bool columns
    first_bool = first_number = None
    for v in values:
        if isinstance(v, bool | np.bool_):
            first_bool = v if first_bool is None else first_bool
        elif isinstance(v, numbers.Number):
            first_number = v if first_number is None else first_number
        if first_bool is not None and first_number is not None:
            return first_bool, first_number
    return None


def _refuse_mixing(values, col, levels=None) -> None:
    """A ``TypeError`` when a column mixes booleans and numbers (or, at prediction, brings
    booleans to number levels or numbers to boolean levels)."""
    advice = ("True == 1 in Python, so they would be one level; give the column one type "
              "(e.g. strings such as 'True' and '1').")
    mixed = bool_and_number(values)
    if mixed is not None:
        raise TypeError(f"column {col!r} mixes booleans and numbers ({_show(mixed)}); "
                        f"{advice}")
    if levels is None or not len(values):
        return
    kinds = _kinds(levels) & {"bool", "number"}
    if len(kinds) != 1:  # no boolean or number levels: nothing can merge with them
        return
    hit = _first_of_kind(values, "number" if kinds == {"bool"} else "bool")
    if hit is not None:
        raise TypeError(f"column {col!r}: value {_show([hit])} is a {_kind(hit)} but the "
                        f"column's levels are {_show(list(levels), 5)}; {advice}")


def _may_merge(levels) -> bool:
    """Whether a value could equal one of ``levels`` while differing in type: only booleans
    and numbers can (strings never equal them)."""
    kind = pd.api.types.infer_dtype(np.asarray(levels, dtype=object), skipna=True)
    return kind not in ("string", "bytes", "empty")


def _kind(v) -> str:
    if isinstance(v, bool | np.bool_):
        return "bool"
    return "number" if isinstance(v, numbers.Number) else "other"


def _kinds(values) -> set:
    return {_kind(v) for v in values}


def _first_of_kind(values, kind: str):
    values = np.asarray(values, dtype=object)
    inferred = pd.api.types.infer_dtype(values, skipna=True)
    if kind == "bool" and inferred not in ("boolean", "mixed", "mixed-integer"):
        return None
    if kind == "number" and inferred in ("string", "boolean", "empty", "bytes"):
        return None
    return next((v for v in values if _kind(v) == kind), None)


def _unhashable(values, col, rows=None) -> None:
    """A ``TypeError`` naming the column and row of the first value that cannot be a level
    (a list or dict in a cell); returns when every value hashes."""
    for i, v in enumerate(values):
        try:
            hash(v)
        except TypeError:
            row = i if rows is None else rows[i]
            raise TypeError(f"column {col!r}, row {row}: value {_show([v])} of type "
                            f"{type(v).__name__} cannot be a category (a cell must hold one "
                            f"string, number or boolean).") from None


def distinct_values(values, col) -> np.ndarray:
    """Distinct non-missing values of one column in first-seen order, refusing unhashable
    cells and booleans mixed with numbers (both with the column named)."""
    column = pd.Series(np.asarray(values, dtype=object), dtype=object)
    observed = column[~column.isna().to_numpy()]
    _refuse_mixing(observed.to_numpy(), col)
    try:
        return pd.unique(observed.to_numpy())
    except TypeError:
        _unhashable(observed.to_numpy(), col, observed.index.to_numpy())
        raise


#: widest integer range handled by a lookup table rather than by hashing object values
_LOOKUP_SPAN = 1 << 16
#: entries (and bins) per piece when counting on the host: temporaries of a few MB
_PIECE = 1 << 20


def _distinct_integers(values: np.ndarray) -> list | None:
    """Sorted distinct values of each column of an integer or boolean block, by counting
    (no object conversion); None when the block is not integer-valued or too wide.

    Counted in pieces of about :data:`_PIECE` entries and bins (columns in blocks, rows in
    chunks), so temporaries stay small however wide the block or the value range is; columns
    with the same values share one tuple (a genotype table has a handful of distinct ones)."""
    values = np.asarray(values)
    if values.ndim != 2 or values.dtype.kind not in "iub" or values.dtype == np.uint64 \
            or values.size == 0:
        return None
    lo, hi = int(values.min()), int(values.max())
    span = hi - lo + 1
    if span > _LOOKUP_SPAN:
        return None
    n_rows, n_cols = values.shape
    present = np.zeros((n_cols, span), dtype=bool)
    width = max(1, min(n_cols, _PIECE // span))  # columns per block: bins <= _PIECE
    rows = max(1, _PIECE // width)
    for c0 in range(0, n_cols, width):
        block = values[:, c0:c0 + width]
        w = block.shape[1]
        base = (np.arange(w, dtype=np.int64) * span - lo)[None, :]
        seen = np.zeros(w * span, dtype=bool)
        for r0 in range(0, n_rows, rows):
            seen |= np.bincount((block[r0:r0 + rows] + base).ravel(), minlength=w * span) > 0
        present[c0:c0 + w] = seen.reshape(w, span)
    cast = bool if values.dtype.kind == "b" else int
    distinct, which = np.unique(present, axis=0, return_inverse=True)
    found = [tuple(cast(v + lo) for v in np.flatnonzero(row)) for row in distinct]
    return [found[i] for i in which.reshape(-1)]


#: :func:`_code_lookup`'s results by the identity of a schema's levels
_lookups: dict = {}


def _code_lookup(levels: tuple, boolean: bool) -> tuple | None:
    """:func:`_build_lookup`, once per schema's levels and value kind."""
    return cached_by_identity(_lookups, levels, (boolean,),
                              lambda: _build_lookup(levels, boolean), limit=16)


def _build_lookup(levels: tuple, boolean: bool) -> tuple | None:
    """``(lo, sizes, encoded, table)`` for :func:`_integer_codes` (built once per set of levels:
    a type check per level of thousands of columns cost more than the lookup itself):
    ``encoded`` when every column's levels are ``0..V-1`` (codes are then the values), and
    ``table`` the lookup (None above :data:`_PIECE` x 16 entries). None when the levels are not
    small integers (booleans for a boolean block)."""
    checked: dict = {}  # columns often share one tuple of levels (_distinct_integers)
    ints = [checked[id(lv)] if id(lv) in checked else
            checked.setdefault(id(lv), _integer_levels(lv, boolean)) for lv in levels]
    if any(lv is None or not lv for lv in ints):
        return None
    sizes = np.array([len(lv) for lv in ints])
    try:
        flat = np.fromiter((v for lv in ints for v in lv), np.int64, count=int(sizes.sum()))
    except OverflowError:  # beyond int64: not a small range either
        return None
    lo, hi = int(flat.min()), int(flat.max())
    span = hi - lo + 1
    if span > _LOOKUP_SPAN:
        return None
    offset = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    within = np.arange(flat.size) - np.repeat(offset, sizes)  # each level's code
    sizes.flags.writeable = False
    encoded = lo == 0 and bool(np.all(flat == within))
    table = None
    if len(ints) * span <= 16 * _PIECE:
        table = np.full(len(ints) * span, UNSEEN, dtype=np.int32)
        table[np.repeat(np.arange(len(ints)) * span, sizes) + flat - lo] = within
        table.flags.writeable = False
    return lo, sizes, encoded, table


def _integer_codes(values: np.ndarray, levels: tuple) -> np.ndarray | None:
    """Codes of an integer or boolean block through one lookup table (UNSEEN outside the
    levels); None when the block or the levels are not small integers."""
    if values.ndim != 2 or values.dtype.kind not in "iub" or values.dtype == np.uint64 \
            or values.size == 0:
        return None
    lookup = _code_lookup(levels, values.dtype.kind == "b")
    if lookup is None:
        return None
    lo, sizes, encoded, table = lookup
    top = values.max(axis=0)
    v_lo, v_hi = int(values.min()), int(top.max())
    if encoded and v_lo >= 0 and np.all(top < sizes):
        return values.astype(np.int32)  # already label-encoded: the codes are the values
    if table is None:
        return None
    span = table.size // len(sizes)
    rel = values.astype(np.int64) - lo
    base = (np.arange(len(sizes)) * span)[None, :]
    if v_lo >= lo and v_hi - lo < span:
        return np.take(table, rel + base)
    inside = (rel >= 0) & (rel < span)
    return np.where(inside, np.take(table, np.where(inside, rel, 0) + base), UNSEEN)


def _unseen_values(col, levels, unknown, unseen: str, policy: str) -> None:
    """Refuse or report values outside a column's levels (``unseen``: what the method allows,
    ``policy``: the family's ``unseen=`` setting); returns when they are to be smoothed."""
    if unseen != "smooth":
        why = ("" if unseen == "error" else
               f" Under {unseen} it has probability zero in every class; use "
               f"method='mean', 'map' or 'bayes' (a prior gives it a probability).")
        raise ValueError(
            f"column {col!r}: value {_show([unknown[0]])} is not one of its categories "
            f"{list(levels)}; declare it with Categorical(categories=...) before "
            f"fitting.{why}")
    distinct = pd.unique(unknown)
    what = (f"column {col!r}: {len(distinct)} value(s) never seen in training "
            f"({_show(distinct)}, in {len(unknown)} row(s); the levels are "
            f"{_show(list(levels), 8)})")
    if policy == "error":
        raise ValueError(f"{what}; Categorical(unseen='error') refuses them. Check the "
                         f"spelling, or declare them with Categorical(categories=...).")
    if policy == "warn":
        warnings.warn(f"{what} get the smoothed probability of a zero-count level. Check the "
                      f"spelling; Categorical(unseen='smooth') accepts them silently, "
                      f"unseen='error' refuses them.", UnseenCategoryWarning, stacklevel=3)


class DirichletPrior(NamedTuple):
    alpha: jax.Array  # (L,) prior, or (K, L) posterior
    segment: jax.Array  # (L,) int: the column each flat level belongs to
    offset: jax.Array  # (F,) int: first flat level of each column
    unseen: jax.Array  # (F,) pseudo-count of a level never seen in training (mean alpha)


class CategoricalStats(NamedTuple):
    counts: jax.Array  # (K, L) weighted level counts


class CategoricalParams(NamedTuple):
    log_prob: jax.Array  # (K, L)
    offset: jax.Array  # (F,)
    log_unseen: jax.Array  # (K, F) log-probability of a value never seen in training


class CategoricalShifted(NamedTuple):
    """The float32 score kernel's form of a table (:meth:`Categorical.kernel_table`): log
    probabilities centred per level on their mean over the classes, in float64."""

    log_prob: jax.Array  # (K, L) log p(level | class) minus the level's mean over classes
    offset: jax.Array  # (F,)
    log_unseen: jax.Array  # (K, F) the same for a value never seen in training
    rounding: jax.Array  # () bound on the rounding of a row's scores (score_rounding)


def _is_level_list(entry) -> bool:
    """Whether an entry of ``categories`` is a column's list of levels rather than one level
    (strings and bytes are levels; lists, tuples, ranges, arrays, Series, sets are lists)."""
    if isinstance(entry, str | bytes):
        return False
    return isinstance(entry, list | tuple | range | set | frozenset | np.ndarray | pd.Index |
                      pd.Series)


#: code of a value outside the fitted levels (missing values are -1)
UNSEEN = -2


def _rounding(delta: np.ndarray, delta_unseen: np.ndarray, offset: np.ndarray) -> np.ndarray:
    r"""Bound on the float32 rounding of a row's scores,
    :math:`\epsilon \log_2(2F) \sqrt{\sum_j m_j^2}` with :math:`m_j` the largest finite
    :math:`|\delta|` of column :math:`j` (0 in float64 mode, where nothing is refused).

    The table entries are float64 values rounded once, and XLA sums the :math:`F` terms of a
    row in blocks, so the rounding grows like the root-sum-square of the terms times the depth
    of the summation; the float32 property tests check the agreement itself."""
    from ._base import float64_mode

    if float64_mode() or offset.size == 0:
        return np.zeros(())
    size = np.where(np.isfinite(delta), np.abs(delta), 0.0).max(axis=0)
    per_column = np.zeros(offset.size)  # (a column may have no level: no reduceat)
    np.maximum.at(per_column, np.searchsorted(offset, np.arange(size.size), "right") - 1, size)
    unseen = np.where(np.isfinite(delta_unseen), np.abs(delta_unseen), 0.0).max(axis=0)
    m = np.maximum(per_column, unseen)
    eps = float(np.finfo(np.float32).eps)
    return np.asarray(eps * np.log2(2 * offset.size) * np.sqrt(np.sum(m * m)))


def _host_log(values) -> np.ndarray:
    """``np.log`` with log 0 = -inf said by the result, not by a warning (ML tables)."""
    with np.errstate(divide="ignore"):
        return np.log(values)


def _centred(log_prob: np.ndarray) -> np.ndarray:
    """``log_prob`` minus, per level, its mean over the classes where finite (a level with
    probability zero in every class keeps -inf): a class-free shift of every row's scores."""
    finite = np.isfinite(log_prob)
    count = finite.sum(axis=0)
    mean = np.where(finite, log_prob, 0.0).sum(axis=0) / np.maximum(count, 1)
    return log_prob - mean


_ONES = np.ones(0)


def _ones(n: int) -> np.ndarray:
    """``n`` float64 ones, read-only, from one array kept between calls (fresh pages cost more
    here than the sparse product that reads them)."""
    global _ONES
    if _ONES.size < n:
        ones = np.ones(n)
        ones.flags.writeable = False
        _ONES = ones
    return _ONES[:n]


def _log_tables(table, exact: bool) -> tuple:
    """``(log_prob (K, L), offset (F,), log_unseen (K, F))`` in float64 of a plug-in table or,
    if ``exact``, of the posterior predictive (``table`` a posterior, as
    :meth:`Categorical.log_predictive` builds it)."""
    with np.errstate(divide="ignore"):
        if exact:
            alpha = np.asarray(table.alpha, dtype=np.float64)
            segment, offset = np.asarray(table.segment), np.asarray(table.offset)
            totals = np.stack([np.bincount(segment, weights=a, minlength=offset.size)
                               for a in alpha]).reshape(alpha.shape[0], offset.size)
            return (np.log(alpha) - np.log(totals[:, segment]), offset,
                    np.log(np.asarray(table.unseen, np.float64)) - np.log(totals))
        return (np.asarray(table.log_prob, dtype=np.float64), np.asarray(table.offset),
                np.asarray(table.log_unseen, dtype=np.float64))


class Categorical(Family):
    """Many-valued columns of any hashable values (strings, integers, booleans).

    Parameters
    ----------
    alpha : float, array-like of shape (n_columns,), or sequence of per-level arrays, default=1.0
        Dirichlet concentration. A scalar is symmetric over every column's levels; one value per
        column is symmetric within that column; a sequence of arrays gives each column's levels
        their own pseudo-counts (in the order of ``categories`` / the sorted levels).
    categories : sequence of sequences, or sequence of levels for one column, optional
        The levels of each column, declared up front: one list per column
        (``[["1st", "2nd"], ["F", "M"]]``), or for a Categorical of one column its levels
        directly (``["1st", "2nd", "3rd", "Crew"]``). By default the levels are the distinct
        values seen at fit time, sorted.
    unseen : {"warn", "smooth", "error"}, default="warn"
        What a value never seen in training (nor declared) means at prediction under the
        smoothing methods (``mean``, ``map``, ``bayes``, ``mcmc``): ``"smooth"`` gives it the
        probability of a zero-count level; ``"warn"`` (the default) does the same and issues an
        :class:`UnseenCategoryWarning` naming the column and the first such values, since a
        misspelling (``"Crw"`` for ``"Crew"``) would otherwise pass unnoticed; ``"error"``
        refuses it with a ``ValueError``. Under ``ml`` (and in a model built from tables) an
        unseen value is always an error: no estimate gives it a probability.
    """

    name = "categorical"
    nonnegative_stats = ("counts",)
    stated_tables = True
    column_sites = True
    predictive_is_plug_in = True
    sklearn_view = "categorical"
    integer_codes = True
    stats_type = CategoricalStats
    params_type = CategoricalParams
    _hyper = ("alpha", "categories", "unseen")
    #: tables in float64 on the host: one rounding of log(n_k + A) in float32 is shared by
    #: every column of class k, so over thousands of columns it would add up
    host_numeric = True
    #: counts and scores of labelled dense data on the host (``host_stats``, ``host_scores``):
    #: a compiled kernel cost 0.3-1.8 s of compilation on a first call with 2,000 columns,
    #: scikit-learn's whole fit and predict 0.5-1.5 s
    host_counting = True

    def __init__(self, alpha=1.0, categories=None, unseen="warn"):
        self.alpha = alpha
        self.categories = categories
        self.unseen = unseen

    def _unseen_policy(self) -> str:
        if not isinstance(self.unseen, str) or self.unseen not in UNSEEN_POLICIES:
            raise ValueError(f"Categorical: unseen must be one of {UNSEEN_POLICIES}, got "
                             f"{self.unseen!r}.")
        return self.unseen

    # ------------------------------------------------------------------ host side
    def learn_schema(self, values: np.ndarray, columns: tuple) -> Schema:
        self._unseen_policy()
        declared_levels = self._declared(columns)
        levels = []
        seen_integers = None if declared_levels is not None else _distinct_integers(values)
        for j, col in enumerate(columns):
            if seen_integers is not None:
                levels.append(seen_integers[j])
                continue
            if declared_levels is not None:
                declared = declared_levels[j]
                _refuse_mixing(np.asarray(declared, dtype=object), col)
                if len(set(declared)) != len(declared):
                    raise ValueError(f"column {col!r}: declared categories repeat a value.")
                levels.append(declared)
                continue
            seen = distinct_values(values[:, j], col)
            try:
                levels.append(tuple(sorted(seen)))
            except TypeError:  # mixed types that do not order: keep first-seen order
                levels.append(tuple(seen))
        return Schema(columns=tuple(columns), levels=tuple(levels))

    def _declared(self, columns: tuple) -> list[tuple] | None:
        """The declared levels, one tuple per column, or ``None``.

        ``categories`` is one sequence of levels per column (``[["a", "b"], [1, 2, 3]]``) or,
        for a single column, its levels directly (``["1st", "2nd", "3rd", "Crew"]``). A flat
        list for several columns is refused: it could mean the same levels for each column or
        a mistake, and the message says how to write either.
        """
        if self.categories is None:
            return None
        entries = list(self.categories)
        nested = [_is_level_list(e) for e in entries]
        if entries and not any(nested):  # a flat list of levels: the single-column form
            if len(columns) == 1:
                return [tuple(entries)]
            raise ValueError(
                f"Categorical: categories=[{_show(entries)}] is one list of levels, but this "
                f"Categorical has {len(columns)} columns {list(columns)[:5]}; give one list per "
                f"column (categories=[[...], [...], ...]; the same levels for all: "
                f"[levels] * {len(columns)}), or one Categorical per column in features=.")
        if not all(nested):
            raise ValueError(
                f"Categorical: categories mixes lists of levels and single values "
                f"({_show(entries)}); give one list of levels per column, or, for one column, "
                f"a flat list of its levels.")
        if len(entries) != len(columns):
            raise ValueError(
                f"Categorical: categories has {len(entries)} entries for the {len(columns)} "
                f"columns {list(columns)[:5]}; give one list of levels per column.")
        return [tuple(e) for e in entries]

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        policy = self._unseen_policy()
        codes = _integer_codes(np.asarray(values), schema.levels)
        if codes is not None and (not np.any(codes == UNSEEN) or
                                  (unseen == "smooth" and policy == "smooth")):
            return codes
        values = np.asarray(values, dtype=object)
        codes = np.full(values.shape, -1, dtype=np.int32)
        for j, (col, levels) in enumerate(zip(schema.columns, schema.levels, strict=True)):
            column = pd.Series(values[:, j], dtype=object)
            missing = column.isna().to_numpy()
            observed = column[~missing]
            if _may_merge(levels):  # string levels cannot be merged with anything
                _refuse_mixing(observed.to_numpy(), col, levels)
            try:
                index = pd.Index(levels, dtype=object).get_indexer(observed)
            except TypeError:
                _unhashable(observed.to_numpy(), col, observed.index.to_numpy())
                raise
            if np.any(index < 0):
                _unseen_values(col, levels, observed.to_numpy()[index < 0], unseen, policy)
            codes[~missing, j] = np.where(index < 0, UNSEEN, index)
        return codes

    def prior(self, schema: Schema) -> DirichletPrior:
        sizes = np.array([len(lv) for lv in schema.levels], dtype=np.int64)
        if np.any(sizes == 0):
            j = int(np.argmin(sizes))
            raise ValueError(f"column {schema.columns[j]!r}: no observed categories.")
        offset = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        segment = np.repeat(np.arange(len(sizes)), sizes)
        per_level = not is_distribution(self.alpha) and (isinstance(self.alpha, list | tuple) and
                     any(np.ndim(v) == 1 for v in self.alpha)) or np.ndim(self.alpha) == 2
        if per_level:
            if len(self.alpha) != len(sizes):
                raise ValueError(f"Categorical: alpha gives per-level values for "
                                 f"{len(self.alpha)} columns, the block has {len(sizes)}.")
            alpha = np.concatenate([
                broadcast_hyper(v, int(sizes[j]), f"alpha of column {schema.columns[j]!r} "
                                f"(one per level: {list(schema.levels[j])})", "Categorical")
                for j, v in enumerate(self.alpha)])
        else:
            alpha = broadcast_hyper(self.alpha, len(sizes), "alpha", "Categorical",
                                    columns=schema.columns)[segment]
        unseen = np.bincount(segment, weights=alpha) / sizes
        return DirichletPrior(alpha, segment.astype(np.int32), offset.astype(np.int32), unseen)

    @staticmethod
    def with_hyper(prior: DirichletPrior, name: str, value) -> DirichletPrior:
        ones_l, ones_f = jnp.ones(prior.alpha.shape[-1]), jnp.ones(prior.offset.shape[0])
        return prior._replace(alpha=value * ones_l, unseen=value * ones_f)

    def check_prior(self, prior: DirichletPrior, schema: Schema, method: str) -> None:
        if method == "map" and np.any(prior.alpha < 1):
            col = schema.columns[int(prior.segment[np.argmax(prior.alpha < 1)])]
            raise ValueError(
                f"column {col!r}: the Categorical MAP estimate needs every Dirichlet "
                f"concentration >= 1 (below 1 the density has no interior mode); use "
                f"method='mean' or raise alpha.")

    # ------------------------------------------------------------------ host side (counting)
    @staticmethod
    def host_stats(codes, labels, weight, n_classes: int, n_levels: tuple) -> CategoricalStats:
        r"""Weighted level counts :math:`n_{kjv}` of one chunk of codes, in float64.

        One ``np.bincount`` over the flat index :math:`k L + \mathrm{offset}_j + x_{ij}`
        (missing values, code -1, go to one more bin, dropped): exact, O(rows x columns) and
        nothing to compile, however many columns there are."""
        sizes = np.asarray(n_levels, dtype=np.int64)
        width = int(sizes.sum())
        bins = n_classes * width
        flat = codes + np.concatenate([[0], np.cumsum(sizes)[:-1]])  # int64
        flat += (np.asarray(labels, dtype=np.int64) * width)[:, None]
        if codes.size and codes.min() < 0:
            flat[codes < 0] = bins
        w = np.asarray(weight, dtype=np.float64)
        if w.size and w.min() == w.max():  # unweighted (or equal weights): integer counts
            counts = np.bincount(flat.reshape(-1), minlength=bins + 1)[:bins] * w[0]
        else:
            counts = np.bincount(flat.reshape(-1), weights=np.repeat(w, codes.shape[1]),
                                 minlength=bins + 1)[:bins]
        return CategoricalStats(counts.reshape(n_classes, width))

    @staticmethod
    def host_score_table(table, exact: bool) -> tuple:
        """``(lookup, offset)`` for :meth:`host_scores`: ``lookup`` ``(L + F + 1, K)`` holds
        in float64 log p(level | class) of every flat level, then per column that of a value
        unseen in training, then 0 (a missing value)."""
        log_prob, offset, log_unseen = _log_tables(table, exact)
        width, f = log_prob.shape[1], offset.size
        lookup = np.zeros((width + f + 1, log_prob.shape[0]))
        lookup[:width] = log_prob.T
        lookup[width:width + f] = log_unseen.T
        return lookup, offset

    @staticmethod
    def host_scores(prepared: tuple, codes) -> np.ndarray:
        r"""``(m, K)`` float64 :math:`\sum_j \log p(x_{ij} \mid k)` of a chunk of codes.

        A sparse product of the rows' indicators (one 1 per row and column, at its level's
        row of the lookup) with the lookup table: exact in float64, with no ``(rows, L)``
        one-hot and nothing to compile. A probability of 0 (ML) gives -inf, never NaN: only
        the stored ones are multiplied."""
        lookup, offset = prepared
        m, f = codes.shape
        index = np.int32 if max(lookup.shape[0], m * f) < 2**31 else np.int64
        flat = codes.astype(index, copy=False) + offset.astype(index)
        if codes.size and codes.min() < 0:
            width = lookup.shape[0] - f - 1
            other = np.where(codes == UNSEEN, width + np.arange(f, dtype=index),
                             width + f).astype(index)
            flat = np.where(codes >= 0, flat, other)
        indicators = sparse.csr_matrix(
            (_ones(m * f), flat.reshape(-1), np.arange(0, m * f + 1, f, dtype=index)),
            shape=(m, lookup.shape[0]), copy=False)
        return np.asarray(indicators @ lookup)

    # ------------------------------------------------------------------ numeric side
    @staticmethod
    def suff_stats(codes, resp, n_levels=None) -> CategoricalStats:
        return CategoricalStats(_to_flat(resp.T @ _one_hot(codes, n_levels, resp.dtype),
                                         n_levels))

    @staticmethod
    def _column_totals(values, prior: DirichletPrior):
        """Per-level total of its column: ``(.., L)`` -> ``(.., L)`` (NumPy in, NumPy out: the
        float64 host path of ``host_numeric``)."""
        f = prior.offset.shape[0]
        if isinstance(values, np.ndarray):
            segment = np.asarray(prior.segment)
            rows = values.reshape(-1, values.shape[-1])
            sums = np.stack([np.bincount(segment, weights=r, minlength=f) for r in rows])
            return sums.reshape(values.shape[:-1] + (f,))[..., segment]
        sums = jax.ops.segment_sum(jnp.moveaxis(values, -1, 0), prior.segment, num_segments=f)
        return jnp.moveaxis(sums, 0, -1)[..., prior.segment]

    @staticmethod
    def estimate(prior: DirichletPrior, stats: CategoricalStats, method: str):
        shift = {"ml": 0.0, "map": -1.0, "mean": 0.0}[method]
        pseudo = 0.0 if method == "ml" else prior.alpha + shift
        num = stats.counts + pseudo
        totals = Categorical._column_totals(num, prior)
        log = _host_log if isinstance(num, np.ndarray) else jnp.log
        log_prob = log(num) - log(totals)
        # an unseen value gets what a zero-count level with the column's mean pseudo-count gets
        unseen = 0.0 if method == "ml" else prior.unseen + shift
        log_unseen = log(unseen) - log(totals[:, prior.offset])
        return CategoricalParams(log_prob, prior.offset, log_unseen)

    @staticmethod
    def posterior(prior: DirichletPrior, stats: CategoricalStats) -> DirichletPrior:
        return DirichletPrior(prior.alpha + stats.counts, prior.segment, prior.offset,
                              prior.unseen)

    @staticmethod
    def log_likelihood(params: CategoricalParams, codes, n_levels=None) -> jax.Array:
        if n_levels is not None:
            # one comparison one-hot (n, L) and one matmul: on CPU 5-10x faster than a gather
            dtype = params.log_prob.dtype
            return (log_matmul(_one_hot(codes, n_levels, dtype),
                               _to_grouped(params.log_prob, n_levels))
                    + log_matmul((codes == UNSEEN).astype(dtype), params.log_unseen))
        observed = codes >= 0
        flat = jnp.where(observed, codes + params.offset, 0)
        picked = params.log_prob[:, flat]  # (K, n, F)
        picked = jnp.where(codes == UNSEEN, params.log_unseen[:, None, :], picked)
        return jnp.sum(jnp.where(codes != -1, picked, 0.0), axis=-1).T

    @staticmethod
    def kernel_table(table, exact: bool, joint: bool):
        r"""Log probabilities centred per level on their mean over the classes, in float64.

        A row's score sums one log probability per column; over thousands of columns the
        float32 partial sums grow to thousands while the classes differ in the fourth digit.
        Centring removes the class-free part of every term (the shift of a row's scores is the
        same for every class), so the partial sums stay of the size of the differences."""
        if joint:
            return table, None
        log_prob, offset, log_unseen = _log_tables(table, exact)
        delta, delta_unseen = _centred(log_prob), _centred(log_unseen)
        return CategoricalShifted(delta, offset, delta_unseen,
                                  _rounding(delta, delta_unseen, offset)), None

    @staticmethod
    def score_rounding(table, x, scores) -> jax.Array:
        """The table's bound for every row (:func:`_rounding`)."""
        if not isinstance(table, CategoricalShifted):
            return jnp.zeros(x.shape[0])
        return jnp.broadcast_to(table.rounding, (x.shape[0],))

    @staticmethod
    def log_predictive(posterior: DirichletPrior, codes, n_levels=None) -> jax.Array:
        if isinstance(posterior, CategoricalShifted):  # the kernel's form (kernel_table)
            return Categorical.log_likelihood(posterior, codes, n_levels)
        totals = Categorical._column_totals(posterior.alpha, posterior)
        log_prob = jnp.log(posterior.alpha) - jnp.log(totals)
        log_unseen = jnp.log(posterior.unseen) - jnp.log(totals[:, posterior.offset])
        return Categorical.log_likelihood(
            CategoricalParams(log_prob, posterior.offset, log_unseen), codes, n_levels)

    @staticmethod
    def log_evidence(prior: DirichletPrior, stats: CategoricalStats) -> jax.Array:
        post = Categorical.posterior(prior, stats)
        f = prior.offset.shape[0]
        per_level = gammaln(post.alpha) - gammaln(prior.alpha)
        a0 = jax.ops.segment_sum(prior.alpha, prior.segment, num_segments=f)
        n = jax.ops.segment_sum(stats.counts.T, prior.segment, num_segments=f).T
        return jnp.sum(per_level) + jnp.sum(gammaln(a0) - gammaln(a0 + n))

    @staticmethod
    def describe(params: CategoricalParams, schema: Schema, classes) -> dict:
        prob = np.exp(np.asarray(params.log_prob))
        offset = np.asarray(params.offset)
        return {col: pd.DataFrame(prob[:, offset[j]:offset[j] + len(levels)],
                                  index=pd.Index(classes, name="class"),
                                  columns=pd.Index(levels, name=col))
                for j, (col, levels) in enumerate(zip(schema.columns, schema.levels,
                                                      strict=True))}

    @staticmethod
    def from_tables(tables: dict, schema: Schema, classes) -> CategoricalParams:
        """``tables[column][class][level]`` is P(x = level | class); rows must sum to 1."""
        parts = []
        for col, levels in zip(schema.columns, schema.levels, strict=True):
            p = np.array([[float(tables[col][c].get(v, 0.0)) for v in levels] for c in classes])
            if np.any(p < 0) or not np.allclose(p.sum(axis=1), 1.0, atol=1e-6):
                raise ValueError(f"column {col!r}: each class's probabilities must be "
                                 f"non-negative and sum to 1, got sums {p.sum(axis=1)}.")
            parts.append(p)
        sizes = [len(lv) for lv in schema.levels]
        offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int32)
        with np.errstate(divide="ignore"):
            return CategoricalParams(jnp.asarray(np.log(np.concatenate(parts, axis=1))),
                                     jnp.asarray(offset),
                                     jnp.full((len(classes), len(sizes)), -jnp.inf))

    # ------------------------------------------------------------------ NumPyro
    @staticmethod
    def _split(alpha, prior: DirichletPrior):
        bounds = list(np.asarray(prior.offset)[1:])
        return jnp.split(alpha, bounds, axis=-1)

    @staticmethod
    def sample_params(prior: DirichletPrior, n_classes: int, site: str):
        params = {}
        with numpyro.plate("class", n_classes, dim=-1):
            for j, a in enumerate(Categorical._split(prior.alpha, prior)):
                params[f"{j}.probs"] = numpyro.sample(f"{site}.{j}.probs", dist.Dirichlet(a))
        return params

    @staticmethod
    def observe(params, codes, y, site: str, **kw) -> None:
        if codes is None:
            with numpyro.plate("row", y.shape[0], dim=-1):
                for j in range(sum(1 for k in params if k.endswith(".probs"))):
                    numpyro.sample(f"{site}.{j}.x", dist.Categorical(params[f"{j}.probs"][y]))
            return
        with numpyro.plate("row", codes.shape[0], dim=-1):
            for j in range(codes.shape[1]):
                probs = params[f"{j}.probs"]
                observed = codes[:, j] >= 0
                numpyro.sample(f"{site}.{j}.x", dist.Categorical(probs[y]).mask(observed),
                               obs=jnp.where(observed, codes[:, j], 0))

    @staticmethod
    def _flat(sample: dict, n_columns: int):
        return jnp.concatenate([sample[f"{j}.probs"] for j in range(n_columns)], axis=-1)

    @staticmethod
    def stats_log_likelihood(sample, stats: CategoricalStats) -> jax.Array:
        n_columns = sum(1 for k in sample if k.endswith(".probs"))
        return jnp.sum(xlogy(stats.counts, Categorical._flat(sample, n_columns)))

    @staticmethod
    def sample_posterior(rng, posterior: DirichletPrior, n: int) -> dict:
        alpha = np.asarray(posterior.alpha, dtype=np.float64)
        parts = np.split(alpha, np.asarray(posterior.offset)[1:], axis=-1)
        return {f"{j}.probs": dirichlet_draws(rng, a, n) for j, a in enumerate(parts)}

    @staticmethod
    def params_from_sample(sample, posterior: DirichletPrior) -> CategoricalParams:
        log_prob = jnp.log(Categorical._flat(sample, posterior.offset.shape[0]))
        # a value unseen in training has no parameter in a draw: it gets the exact predictive
        totals = Categorical._column_totals(posterior.alpha, posterior)
        log_unseen = jnp.log(posterior.unseen) - jnp.log(totals[:, posterior.offset])
        return CategoricalParams(log_prob, posterior.offset, log_unseen)

    @staticmethod
    def posterior_distributions(posterior: DirichletPrior) -> dict:
        return {f"{j}.probs": dist.Dirichlet(a)
                for j, a in enumerate(Categorical._split(posterior.alpha, posterior))}

    def param_dims(self, prior: DirichletPrior, schema: Schema) -> dict:
        return {f"{j}.probs": ("class", "level") for j in range(len(schema.columns))}

    def linear_terms(self, params: CategoricalParams, schema: Schema) -> tuple:
        """One weight per (column, level): the log probabilities, over one-hot codes."""
        labels = [f"{c}={v}" for c, levels in zip(schema.columns, schema.levels, strict=True)
                  for v in levels]
        log_prob = np.asarray(params.log_prob, dtype=np.float64)
        return log_prob, labels, np.zeros(log_prob.shape[0])

    def linear_features(self, x: np.ndarray, schema: Schema) -> np.ndarray:
        sizes = [len(lv) for lv in schema.levels]
        onehot = np.zeros((x.shape[0], sum(sizes)))
        offset = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        for j in range(x.shape[1]):
            seen = x[:, j] >= 0
            onehot[np.flatnonzero(seen), offset[j] + x[seen, j]] = 1.0
        return onehot

    def dependence_units(self, x, prior: dict, schema: Schema) -> list:
        units = []
        for j, col in enumerate(schema.columns):
            start, size = int(prior["offset"][j]), len(schema.levels[j])
            codes = x[:, j].astype(np.int64)
            units.append((col, "discrete", codes, codes >= 0,
                          {"alpha": prior["alpha"][start:start + size].astype(np.float64)}, ""))
        return units

    @staticmethod
    def column_block(prior: DirichletPrior, stats: CategoricalStats, j: int,
                     n_levels: int) -> tuple:
        """Column ``j`` in the flat level layout of a one-column block."""
        start = int(np.asarray(prior.offset)[j])
        cut = slice(start, start + n_levels)
        prior_j = prior._replace(alpha=np.asarray(prior.alpha)[cut],
                                 segment=np.zeros(n_levels, np.int32),
                                 offset=np.zeros(1, np.int32),
                                 unseen=np.asarray(prior.unseen)[j:j + 1])
        return prior_j, stats._replace(counts=np.asarray(stats.counts)[:, cut])

    def stated_schema(self, tables: dict, classes) -> Schema:
        """The levels of each column as the tables state them, in order."""
        return Schema(columns=tuple(tables), levels=tuple(
            tuple(dict.fromkeys(v for c in classes for v in tables[col][c])) for col in tables))

    def decode(self, values: np.ndarray, schema: Schema) -> np.ndarray:
        return np.stack([np.asarray(levels, dtype=object)[values[:, j]]
                         for j, levels in enumerate(schema.levels)], axis=1)

    @staticmethod
    def log_prior_at(prior: DirichletPrior, params: CategoricalParams, method: str,
                     n_classes: int) -> float:
        shift = -1.0 if method == "map" else 0.0
        return pseudo_log(np.asarray(prior.alpha) + shift, params.log_prob)
