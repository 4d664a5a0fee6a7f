"""The levels of categorical columns: validation and encoding to integer codes.

A level is any hashable value, kept apart by type as well as value (Python's ``True == 1``
would merge a boolean and a number into one level), laid out flat (column ``j`` owns entries
``offset[j] : offset[j] + V_j`` of every ``(.., L)`` array). Integer and boolean columns are
encoded through one lookup table; others through pandas' hashing."""

from __future__ import annotations

import functools
import numbers
import re
import warnings
from collections.abc import Mapping

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from ._base import Schema, broadcast_hyper, cached_by_identity, is_distribution, log_matmul

#: code of a value outside the fitted levels (missing values are -1)
UNSEEN = -2


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


def flat_layout(sizes) -> tuple[np.ndarray, np.ndarray]:
    """``(offset, segment)`` of the flat layout of columns with ``sizes`` levels: the first
    flat entry of each column, and the column of each flat entry (int32)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int32)
    return offset, np.repeat(np.arange(len(sizes)), sizes).astype(np.int32)


def column_sums(values, segment, n_columns: int):
    """Each column's sum of its flat entries, ``(.., L) -> (.., F)`` (NumPy in, NumPy out:
    float64 on the host; JAX otherwise)."""
    if isinstance(values, np.ndarray):
        segment = np.asarray(segment)
        rows = values.reshape(-1, values.shape[-1])
        sums = np.stack([np.bincount(segment, weights=r, minlength=n_columns) for r in rows])
        return sums.reshape(values.shape[:-1] + (n_columns,))
    sums = jax.ops.segment_sum(jnp.moveaxis(values, -1, 0), segment, num_segments=n_columns)
    return jnp.moveaxis(sums, 0, -1)


def column_pivot(values, segment, n_columns: int):
    """``(.., L)`` booleans: in each column, its first entry of largest value (one per
    column), by segment maxima (``jax.ops.segment_max`` when traced)."""
    idx = np.arange(values.shape[-1])
    if isinstance(values, np.ndarray):
        segment = np.asarray(segment)
        top = np.full(values.shape[:-1] + (n_columns,), -np.inf)
        np.maximum.at(np.moveaxis(top, -1, 0), segment, np.moveaxis(values, -1, 0))
        first = np.full(values.shape[:-1] + (n_columns,), values.shape[-1])
        np.minimum.at(np.moveaxis(first, -1, 0), segment,
                      np.moveaxis(np.where(values == top[..., segment], idx, values.shape[-1]),
                                  -1, 0))
        return idx == first[..., segment]

    def per_column(op, v):
        return jnp.moveaxis(op(jnp.moveaxis(v, -1, 0), segment, num_segments=n_columns), 0, -1)

    top = per_column(jax.ops.segment_max, values)
    first = per_column(jax.ops.segment_min, jnp.where(values == top[..., segment], idx,
                                                      values.shape[-1]))
    return idx == first[..., segment]


def column_totals(values, segment, n_columns: int):
    """Each flat entry's column total, ``(.., L) -> (.., L)`` (:func:`column_sums`)."""
    return column_sums(values, segment, n_columns)[..., segment]


def split_levels(flat, offset) -> list:
    """The per-column pieces of a flat ``(.., L)`` array."""
    xp = np if isinstance(flat, np.ndarray) else jnp
    return xp.split(flat, [int(o) for o in np.asarray(offset)[1:]], axis=-1)


def by_level_count(pieces) -> dict[int, list[int]]:
    """Column indices by their number of levels (the pieces' last axis), in order: the
    columns sampled as one site (``fast.categorical``'s ``sample_params_batched``)."""
    out: dict[int, list[int]] = {}
    for j, piece in enumerate(pieces):
        out.setdefault(int(np.shape(piece)[-1]), []).append(j)
    return out


def join_levels(pieces) -> jax.Array:
    """The inverse of :func:`split_levels` (NumPy for NumPy pieces)."""
    xp = np if all(isinstance(p, np.ndarray) for p in pieces) else jnp
    return xp.concatenate(pieces, axis=-1)


def flat_one_hot(codes: np.ndarray, sizes) -> np.ndarray:
    """Float64 one-hot of integer codes in the flat layout; missing and unseen codes (< 0) are
    rows of zeros in their column."""
    offset, _ = flat_layout(sizes)
    onehot = np.zeros((codes.shape[0], int(np.sum(sizes))))
    for j in range(codes.shape[1]):
        seen = codes[:, j] >= 0
        onehot[np.flatnonzero(seen), offset[j] + codes[seen, j]] = 1.0
    return onehot


def level_values(value, schema, name: str, family: str) -> np.ndarray:
    """A hyperparameter in the flat layout: a scalar (every level), one value per column
    (symmetric within it), or a sequence of per-level arrays (in each column's level order)."""
    sizes = [len(lv) for lv in schema.levels]
    per_level = not is_distribution(value) and (isinstance(value, list | tuple) and any(
        np.ndim(v) == 1 for v in value)) or np.ndim(value) == 2
    # per-level values are a nested list, one inner list per column in that column's level
    # order; the errors show the layout expected, with the actual levels
    shown = ", ".join("[" + ", ".join(f"<{v}>" for v in lv[:6]) + (", ..." if len(lv) > 6
                                                                     else "") + "]"
                      for lv in schema.levels[:3]) + (", ..." if len(sizes) > 3 else "")
    layout = ("; for one value per level give a nested list, one list per column, each in "
              f"the column's level order: [{shown}]")
    if not per_level:
        try:
            return broadcast_hyper(value, len(sizes), name, family,
                                   columns=schema.columns)[flat_layout(sizes)[1]]
        except ValueError as err:  # the layout helps a value of the wrong shape only
            wrong_shape = np.ndim(value) != 0 and np.shape(value) != (len(sizes),)
            raise ValueError(f"{str(err).rstrip('.')}{layout if wrong_shape else ''}.") from None
    if len(value) != len(sizes):
        raise ValueError(f"{family}: {name} gives per-level values for {len(value)} columns, "
                         f"the block has {len(sizes)}{layout}.")
    try:
        return np.concatenate([
            broadcast_hyper(v, sizes[j], f"{name} of column {schema.columns[j]!r} (one per "
                            f"level: {list(schema.levels[j])})", family)
            for j, v in enumerate(value)])
    except ValueError as err:
        raise ValueError(f"{str(err).rstrip('.')}{layout}.") from None


def host_log(values) -> np.ndarray:
    """``np.log`` with log 0 = -inf said by the result, not by a warning (ML tables)."""
    with np.errstate(divide="ignore"):
        return np.log(values)


def level_tables(prob: np.ndarray, schema, classes) -> dict:
    """A ``(K, L)`` flat table as one DataFrame per column (classes x levels)."""
    offset, _ = flat_layout([len(lv) for lv in schema.levels])
    return {col: pd.DataFrame(prob[:, offset[j]:offset[j] + len(levels)],
                              index=pd.Index(classes, name="class"),
                              columns=pd.Index(levels, name=col))
            for j, (col, levels) in enumerate(zip(schema.columns, schema.levels, strict=True))}


def tables_to_levels(tables: dict, schema, classes) -> np.ndarray:
    """The ``(K, L)`` flat table of stated ``tables[column][class][level]`` probabilities,
    each class's row of a column non-negative and summing to 1 (an absent level is 0)."""
    parts = []
    for col, levels in zip(schema.columns, schema.levels, strict=True):
        p = np.array([[float(tables[col][c].get(v, 0.0)) for v in levels] for c in classes])
        if np.any(p < 0):
            k, v = map(int, np.argwhere(p < 0)[0])
            raise ValueError(f"column {col!r}, class {classes[k]!r}: the probability of "
                             f"{levels[v]!r} is {p[k, v]:g}; probabilities are non-negative.")
        off = ~np.isclose(p.sum(axis=1), 1.0, atol=1e-6)
        if off.any():
            k = int(np.argmax(off))
            raise ValueError(f"column {col!r}, class {classes[k]!r}: the probabilities sum "
                             f"to {p[k].sum():.10g}, not 1 (to within about 1e-5); a rounded table "
                             f"must be normalised first (each divided by their sum).")
        parts.append(p)
    return np.concatenate(parts, axis=1)


def _unseen_scored(log_unseen) -> np.ndarray:
    """Per column, whether a value unseen in training has a probability in every class."""
    return np.isfinite(np.asarray(log_unseen)).all(axis=0)


def one_hot_terms(log_prob, log_unseen, schema) -> tuple:
    """The linear view ``(weights, labels, bias)`` of a level table over one-hot codes: one
    weight per (column, level), and ``"col=<unseen>"`` where an unseen value is scored."""
    labels = [f"{c}={v}" for c, levels in zip(schema.columns, schema.levels, strict=True)
              for v in levels]
    scored = _unseen_scored(log_unseen)
    labels += [f"{c}=<unseen>" for c, ok in zip(schema.columns, scored, strict=True) if ok]
    weights = np.concatenate([np.asarray(log_prob, dtype=np.float64),
                              np.asarray(log_unseen, dtype=np.float64)[:, scored]], axis=1)
    return weights, labels, np.zeros(weights.shape[0])


def one_hot_features(codes: np.ndarray, schema, log_unseen) -> np.ndarray:
    """The features of :func:`one_hot_terms` for integer codes."""
    onehot = flat_one_hot(codes, [len(lv) for lv in schema.levels])
    scored, unseen = _unseen_scored(log_unseen), np.asarray(codes) == UNSEEN
    if np.any(unseen[:, ~scored]):
        col = schema.columns[int(np.argmax(unseen.any(axis=0) & ~scored))]
        raise ValueError(f"column {col!r}: a value unseen in training has probability zero "
                         "in every class under this method; the linear view cannot score "
                         "it (a smoothed method can).")
    return np.concatenate([onehot, unseen[:, scored].astype(np.float64)], axis=1)


def decode_levels(codes: np.ndarray, levels_of: tuple) -> np.ndarray:
    """The level values of integer codes, an object array of the codes' shape."""
    return np.stack([np.asarray(levels, dtype=object)[codes[:, j]]
                     for j, levels in enumerate(levels_of)], axis=1)


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
    zero-count level (``Categorical(unseen="warn")``, the default).

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> import bayesnb as bnb
    >>> clf = bnb.NaiveBayes().fit(pd.DataFrame({"colour": ["red", "blue"]}), [0, 1])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     proba = clf.predict_proba(pd.DataFrame({"colour": ["green"]}))
    >>> [w.category is bnb.UnseenCategoryWarning for w in caught], proba.round(2).tolist()
    ([True], [[0.5, 0.5]])
    """


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


#: text that Python reads as a number (no ``_`` separators, no ``nan`` or ``inf``)
_NUMBER_TEXT = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")


def _reads_as(text: str, number) -> bool:
    """Whether ``text`` writes ``number``: an integer's digits exactly, else the same float."""
    stripped = text.strip()
    if isinstance(number, numbers.Integral) and stripped.lstrip("+-").isdigit():
        return int(stripped) == number
    try:
        return float(stripped) == float(number)
    except OverflowError:
        return False


def number_and_its_text(values, levels) -> tuple | None:
    """A number among ``levels`` and a string among ``values`` (1-D, missing values removed)
    that writes it (``3`` and ``'3'``), or None: ``'3' != 3``, so such a value is not the
    level it names."""
    values = np.asarray(values, dtype=object)
    if pd.api.types.infer_dtype(values, skipna=True) not in ("mixed", "mixed-integer", "string"):
        return None  # a fast Cython pass settles columns without strings
    found = [v for v in levels if _kind(v) == "number" and isinstance(v, numbers.Real)]
    if not found:
        return None
    texts = [v for v in values if isinstance(v, str)]
    if not texts:
        return None
    # parse every string at once (C speed); only those equal to a number as floats are read
    # exactly (an integer past 2**53 is not every float's neighbour)
    parsed = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(float)
    with np.errstate(over="ignore"):
        targets = np.array([float(v) if abs(v) < 1e308 else np.inf for v in found])
    hits = np.flatnonzero(np.isin(parsed, targets))
    for i in hits:
        text = texts[i]
        if not _NUMBER_TEXT.fullmatch(text):
            continue
        for number in found:
            if _reads_as(text, number):
                return number, text
    return None


def _refuse_mixing(values, col, levels=None) -> None:
    """A ``TypeError`` when a column mixes booleans and numbers (or, at prediction, brings
    booleans to number levels, numbers to boolean levels or strings that write numbers to
    number levels). Numbers and strings that write them may be levels side by side (``1``
    and ``'1'``, two levels, labelled apart: ``inference.level_coords``)."""
    advice = ("True == 1 in Python, so they would be one level; give the column one type "
              "(e.g. strings such as 'True' and '1').")
    mixed = bool_and_number(values)
    if mixed is not None:
        raise TypeError(f"column {col!r} mixes booleans and numbers ({_show(mixed)}); "
                        f"{advice}")
    if levels is None or not len(values):
        return
    kinds = _kinds(levels) & {"bool", "number"}
    if kinds == {"number"} and not any(isinstance(v, str) for v in levels):
        clash = number_and_its_text(values, levels)
        if clash is not None:
            raise TypeError(f"column {col!r}: value {_show(clash[1:])} is text but the column's "
                            f"levels are numbers ({_show(list(levels), 5)}); pass numbers "
                            f"(pandas' to_numeric).")
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


def _distinct_floats(column: np.ndarray) -> list | None:
    """Sorted distinct values of a float column, NaN missing, by NumPy (pandas' hashing of
    object values took 0.2 ms a column); None for other columns, or where a zero is -0.0
    (pandas keeps the sign first seen, NumPy's sort either)."""
    if column.dtype.kind != "f":
        return None
    observed = column[~np.isnan(column)]
    if np.any(np.signbit(observed) & (observed == 0)):
        return None
    return np.unique(observed).tolist()


def _plain_number(v) -> bool:
    return (isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_)
            and float(v) == v)


def _float_codes(values: np.ndarray, levels_of: tuple) -> np.ndarray | None:
    """Codes of a float block (NaN missing, UNSEEN outside the levels) by a sorted search of
    each column's levels; None where the block is not float or a column's levels are not all
    numbers float64 holds exactly (booleans too: they fall to the checks of mixing)."""
    if values.ndim != 2 or values.dtype.kind != "f" or values.size == 0:
        return None
    codes = np.full(values.shape, -1, dtype=np.int32)
    for j, levels in enumerate(levels_of):
        if not all(_plain_number(v) for v in levels):
            return None
        held = np.asarray(levels, dtype=np.float64)
        order = np.argsort(held, kind="stable")
        ranked = held[order]
        column = values[:, j]
        at = np.minimum(np.searchsorted(ranked, column), max(len(ranked) - 1, 0))
        found = ranked[at] == column if len(ranked) else np.zeros(len(column), bool)
        observed = ~np.isnan(column)
        codes[:, j] = np.where(found, order[at] if len(ranked) else 0,
                               np.where(observed, UNSEEN, -1))
    return codes


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


#: the ``unseen`` rule of a prediction from draws whose concentration is learned
LEARNED_CONCENTRATION = "learned concentration"


def _unseen_values(col, levels, unknown, unseen: str, policy: str) -> None:
    """Refuse or report values outside a column's levels (``unseen``: what the method allows,
    ``policy``: the family's ``unseen=`` setting); returns when they are to be smoothed."""
    if unseen != "smooth":
        why = ("" if unseen == "error" else
               " The stated tables give it no probability in any class; state one for it "
               "(from_tables) to predict such rows." if unseen == "stated tables" else
               " Under method='mcmc' a value outside the levels gets a zero-count level's "
               "probability under the learned concentration, which the draws hold only for "
               "the declared levels (a hyperprior or pooling on alpha)."
               if unseen == LEARNED_CONCENTRATION else
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


def _is_level_list(entry) -> bool:
    """Whether an entry of ``categories`` is a column's list of levels rather than one level
    (strings and bytes are levels; lists, tuples, ranges, arrays, Series, sets are lists)."""
    if isinstance(entry, str | bytes):
        return False
    return isinstance(entry, list | tuple | range | set | frozenset | np.ndarray | pd.Index |
                      pd.Series)


def declared_levels(categories, columns: tuple) -> list[tuple] | None:
    """The declared levels, one tuple per column, or ``None``.

    ``categories`` is one sequence of levels per column (``[["a", "b"], [1, 2, 3]]``) or,
    for a single column, its levels directly (``["1st", "2nd", "3rd", "Crew"]``). A flat
    list for several columns is refused: it could mean the same levels for each column or
    a mistake, and the message says how to write either.
    """
    if categories is None:
        return None
    if isinstance(categories, str | bytes | Mapping) or not np.iterable(categories):
        # list("SML") would make each character a level
        what = f"the {type(categories).__name__} {categories!r}"[:120]
        raise ValueError(
            f"Categorical: categories must be a list (tuple, array) of levels, or one list "
            f"per column, got {what} for the column(s) {list(columns)[:5]}; e.g. "
            f"categories=['S', 'M', 'L'].")
    entries = list(categories)
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


def learn_levels(values: np.ndarray, columns: tuple, declared_levels: list | None) -> tuple:
    """Per column its levels: the declared ones (checked), else the distinct values seen,
    sorted where they order."""
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
                repeated = [v for k, v in enumerate(declared) if v in declared[:k]]
                raise ValueError(f"column {col!r}: declared categories repeat a value "
                                 f"({_show(repeated[:3])}); list each level once.")
            levels.append(declared)
            continue
        seen = _distinct_floats(values[:, j])
        if seen is None:
            seen = distinct_values(values[:, j], col)
        try:
            levels.append(tuple(sorted(seen)))
        except TypeError:  # mixed types that do not order: keep first-seen order
            levels.append(tuple(seen))
    return tuple(levels)


def encode_levels(values, columns: tuple, levels_of: tuple, unseen: str, policy: str) -> np.ndarray:
    """Integer codes of a block's values: a level's index, -1 for missing, ``UNSEEN`` for a
    value outside the levels (refused or warned about as ``unseen`` and ``policy`` say)."""
    codes = _integer_codes(np.asarray(values), levels_of)
    if codes is None:
        codes = _float_codes(np.asarray(values), levels_of)
    if codes is not None and (not np.any(codes == UNSEEN) or
                              (unseen == "smooth" and policy == "smooth")):
        return codes
    values = np.asarray(values, dtype=object)
    codes = np.full(values.shape, -1, dtype=np.int32)
    indexes = cached_by_identity(_LEVEL_INDEXES, levels_of, (), lambda: tuple(
        pd.Index(levels, dtype=object) for levels in levels_of), limit=64)
    for j, (col, levels) in enumerate(zip(columns, levels_of, strict=True)):
        missing = pd.isna(values[:, j])  # NumPy, not a Series per column (wide tables)
        observed = values[~missing, j]
        if _may_merge(levels):  # string levels cannot be merged with anything
            _refuse_mixing(observed, col, levels)
        try:
            index = indexes[j].get_indexer(observed)
        except TypeError:
            _unhashable(observed, col, np.flatnonzero(~missing))
            raise
        if np.any(index < 0):
            _unseen_values(col, levels, observed[index < 0], unseen, policy)
        codes[~missing, j] = np.where(index < 0, UNSEEN, index)
    return codes


#: each column's index of its levels, by the identity of a fitted schema's levels
_LEVEL_INDEXES: dict = {}


def dependence_units(x, prior: dict, schema) -> list:
    """Each column as the dependence diagnostic reads it: its codes under its levels'
    Dirichlet ``alpha`` (``Capabilities.dependence_units``)."""
    units = []
    for j, col in enumerate(schema.columns):
        start, size = int(prior["offset"][j]), len(schema.levels[j])
        codes = x[:, j].astype(np.int64)
        units.append((col, "discrete", codes, codes >= 0,
                      {"alpha": prior["alpha"][start:start + size].astype(np.float64)}, ""))
    return units


def stated_numbers(cell) -> list:
    """The probabilities of one class's entry of a stated table, named by level."""
    if not isinstance(cell, Mapping):
        raise ValueError("must map each level to its probability")
    return [(f"level {level!r}", p) for level, p in cell.items()]


def stated_schema(tables: dict, classes):
    """The levels of each column as the stated tables give them, in order."""
    return Schema(columns=tuple(tables), levels=tuple(
        tuple(dict.fromkeys(v for c in classes for v in tables[col][c])) for col in tables))


def column_block(prior, stats, j: int, n_levels: int) -> tuple:
    """``(prior, stats)`` of column ``j`` (``n_levels`` levels) in the flat level layout of a
    one-column block (``Capabilities.column_block``)."""
    cut = slice(int(np.asarray(prior.offset)[j]), int(np.asarray(prior.offset)[j]) + n_levels)
    return (type(prior)(np.asarray(prior.alpha)[cut], *flat_layout([n_levels])[::-1],
                        np.asarray(prior.unseen)[j:j + 1]),
            stats._replace(counts=np.asarray(stats.counts)[:, cut]))


def level_hits(prior, stats, codes) -> tuple:
    """``(hits, totals, observed, sizes)`` of rows of level codes (-1 missing): each value's
    count per class ``(n, K, F)``, each class's column totals ``(K, F)``, which values are
    observed ``(n, F)`` and each column's number of levels ``(F,)``, in float64."""
    codes = np.asarray(codes, dtype=np.int64)
    counts = np.asarray(stats.counts, dtype=np.float64)  # (K, L)
    offset, segment = np.asarray(prior.offset), np.asarray(prior.segment)
    sizes = np.bincount(segment, minlength=len(offset))
    totals = np.stack([np.bincount(segment, weights=row, minlength=len(offset))
                       for row in counts])
    observed = codes >= 0
    flat = offset[None, :] + np.where(observed, codes, 0)  # the flat level of each value
    return np.moveaxis(counts[:, flat], 0, 1), totals, observed, sizes


def one_hot_log_likelihood(params, codes, n_levels: tuple) -> jax.Array:
    """``(n, K)`` sum over columns of ``params.log_prob`` at each code (``log_unseen`` at
    ``UNSEEN``, 0 where missing) as one comparison one-hot ``(n, L)`` and one matmul: on a
    CPU 5-10x faster than a gather."""
    dtype = params.log_prob.dtype
    return (log_matmul(_one_hot(codes, n_levels, dtype), _to_grouped(params.log_prob, n_levels))
            + log_matmul((codes == UNSEEN).astype(dtype), params.log_unseen))


def stated_log_tables(tables: dict, schema, classes) -> tuple:
    """``(log_prob, offset, log_unseen)`` of stated ``tables[column][class][level]``
    probabilities: a value outside the stated levels has probability 0."""
    log_prob = host_log(tables_to_levels(tables, schema, classes))  # float64, as fits
    offset, _ = flat_layout([len(lv) for lv in schema.levels])
    return log_prob, np.asarray(offset), np.full((len(classes), len(offset)), -np.inf)


class LevelledColumns:
    """What a family of level-valued columns (``Categorical``) declares about its columns'
    levels: learning and declaring them, encoding and decoding values, the flat layout's
    bookkeeping for other modules. The family's ``categories`` and ``unseen`` settings."""

    pmf_label = "Categorical"
    dependence_units = staticmethod(dependence_units)
    column_block = staticmethod(column_block)
    stated_numbers = staticmethod(stated_numbers)
    stated_schema = staticmethod(stated_schema)

    def check_settings(self) -> str:
        if not isinstance(self.unseen, str) or self.unseen not in UNSEEN_POLICIES:
            raise ValueError(f"Categorical: unseen must be one of {UNSEEN_POLICIES}, got "
                             f"{self.unseen!r}.")
        return self.unseen

    def learn_schema(self, values: np.ndarray, columns: tuple) -> Schema:
        self.check_settings()
        declared = declared_levels(self.categories, columns)
        return Schema(columns=tuple(columns), levels=learn_levels(values, columns, declared))

    @staticmethod
    def column_of(prior, j: int) -> int:
        return int(np.asarray(prior.segment)[j])

    def declared_levels(self, columns: tuple) -> list[tuple] | None:
        return declared_levels(self.categories, columns)

    def learns_levels(self) -> bool:
        return self.categories is None

    def encode(self, values, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        return encode_levels(values, schema.columns, schema.levels, unseen,
                             self.check_settings())

    def decode(self, values: np.ndarray, schema: Schema) -> np.ndarray:
        return decode_levels(values, schema.levels)

    def pmf_support(self, table, schema: Schema, j: int) -> tuple:
        """Every level of column ``j``: its code and its value."""
        return np.arange(len(schema.levels[j])), [str(v) for v in schema.levels[j]]
