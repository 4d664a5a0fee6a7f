"""How the kernels read the blocks of columns of an input table."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from ._data import FrameBlock, SparseRows, Table, as_table
from .families import Family, Schema
from .fast import _kernels, form_of

#: bytes a cell of a pandas extension column takes once converted to a Python object (the
#: pointer, a float or str object, pandas' temporaries): what sizes the chunks of such a block
OBJECT_CELL_BYTES = 64
#: a host chunk of such a block holds at least this many rows' worth of cells per column:
#: each chunk converts and encodes every column anew, at a cost per column of about that many
#: cells (benchmarks/tune.py FRAME_COLUMN_CELLS)
FRAME_COLUMN_CELLS = 1 << 10


def levels_of(schema: Schema):
    """Per column the number of category levels (``None`` for a non-categorical block)."""
    return tuple(len(lv) for lv in schema.levels) or None


def kernel_reads_raw(family) -> bool:
    """Whether the kernels read this family's raw numbers themselves (checking them,
    ``value_checks``), so a device-resident block can stay on the device."""
    return (family.value_checks is not None and not family.nonparametric
            and not form_of(family).host_counting)


def input_kinds(features) -> tuple[bool, bool]:
    """What a specification ``features`` reads, for scikit-learn's tags: ``(levels, counts)``.

    ``levels``: category levels (strings, any values) in some column: ``None`` or a mapping
    infers (the other) columns, strings as Categorical; one family reads levels where it
    encodes them as codes (``integer_codes``). ``counts``: every column refuses negative
    values: one family whose declared value checks require non-negative or 0/1 values, or
    that declares it refuses negative values where it encodes them on the host."""
    if not isinstance(features, Family):
        return True, False
    checks = features.value_checks or {}
    return bool(features.integer_codes), bool(checks.get("nonnegative") or checks.get("binary")
                                               or features.refuses_negative)


def block_source(family, raw, schema: Schema, unseen: str) -> _kernels.Source:
    """How the streaming kernels read one block. Raw numbers go straight to the kernel, which
    checks them itself (a ``jax.Array`` block is read in place, on its device); anything else
    (strings, objects, categorical values) is validated and encoded on the host chunk by
    chunk."""
    dtype = np.dtype(jnp.result_type(float))
    if isinstance(raw, jax.Array) and not (kernel_reads_raw(family)
                                           and raw.dtype.kind in "biuf"):
        raw = np.asarray(raw)  # encoded on the host

    def report():  # encoding the whole block names the column and row of the bad value
        family.encode(np.asarray(raw), schema, unseen=unseen)

    if family.value_checks is not None and isinstance(raw, np.ndarray | jax.Array) \
            and raw.ndim == 2 and raw.dtype.kind in "biuf":
        return _kernels.Source(lambda start, stop: raw[start:stop], raw.shape[1], dtype, report,
                               columns=tuple(schema.columns),  # errors name the column
                               device=isinstance(raw, jax.Array))

    # numbers are encoded in float64: the kernels shift them on the host before float32 rounds
    # them (1e4 + N(0, 1) rounded first gave variances 3e-4 off); codes in the kernel dtype
    def encode(start, stop):
        try:  # the dtype when read: a float32 pass may be redone in float64 (_kernels)
            return family.encode(raw[start:stop], schema, unseen=unseen,
                                 dtype=np.dtype(jnp.result_type(float)) if family.integer_codes
                                 else np.dtype(np.float64))
        except (TypeError, ValueError):
            if start > 0:  # report the row of the block, not of the chunk
                report()
            raise

    kernel_dtype = np.dtype(np.int32) if family.integer_codes else dtype
    # the kernels expand codes to a one-hot row of every level: size the chunks by that
    row_bytes = sum(len(lv) for lv in schema.levels) * dtype.itemsize
    chunk_cost = 0
    if isinstance(raw, FrameBlock):  # each chunk is converted to Python objects first,
        row_bytes = max(row_bytes, raw.shape[1] * OBJECT_CELL_BYTES)  # column by column
        chunk_cost = raw.shape[1] * FRAME_COLUMN_CELLS
    if isinstance(raw, SparseRows):  # each chunk is densified in float64 first
        row_bytes = max(row_bytes, raw.shape[1] * 8)
    return _kernels.Source(encode, raw.shape[1], kernel_dtype, report, row_bytes,
                           columns=tuple(schema.columns),  # errors name the column
                           chunk_cost=chunk_cost)


def block_positions(model, table: Table) -> list[tuple]:
    """Where every block's columns are in ``table``: by name when the model was fitted on a
    DataFrame and ``table`` is one (any order, whatever the labels' type), else by position
    (the same number of columns), with scikit-learn's warning where one of the two had feature
    names and the other had not (:func:`warn_feature_names`). A DataFrame with a column the
    model was not fitted on is refused: its values would be silently left out."""
    if table.frame is not None and model.named:
        order = {c: i for i, c in enumerate(table.columns)}
        known = set(model.columns)
        extra = [c for c in table.columns if c not in known]
        missing = [c for c in model.columns if c not in order]
        if missing:  # (at prediction only with an unknown column too: with_absent_columns)
            also = (f", which has column(s) {extra[:10]} that the model was not fitted on "
                    f"(a misspelt name?)" if extra else "")
            raise ValueError(f"column {missing[0]!r} seen at fit is missing from X{also}.")
        if extra:
            raise ValueError(f"X has column(s) {extra[:10]} that the model was not fitted on "
                             f"(it reads {list(model.columns)[:20]}); their values would be "
                             f"ignored: drop them, or fit a model with them.")
        return [tuple(order[c] for c in b.schema.columns) for b in model.blocks]
    if len(table.columns) != len(model.columns):
        raise ValueError(f"X has {len(table.columns)} features, but NaiveBayes is expecting "
                         f"{len(model.columns)} features as input.")
    if model.stated is None:  # a from_tables model was fitted on nothing: rows in the order of
        # its stated columns are its documented input
        warn_feature_names(has_feature_names(model.columns, model.named),
                           has_feature_names(table.columns, table.frame is not None),
                           "NaiveBayes", stacklevel=3)
    return [b.positions for b in model.blocks]


def has_feature_names(columns, frame: bool) -> bool:
    """Whether a table's columns are feature names as scikit-learn counts them
    (``sklearn.utils.validation._get_feature_names``): a DataFrame's, all of them strings."""
    return frame and len(columns) > 0 and all(isinstance(c, str) for c in columns)


#: the messages of :func:`warn_feature_names` (a prediction reading ``X`` a second time, its
#: blocks scored apart, leaves out the repeat by them)
FEATURE_NAMES_WARNING = r"X (has|does not have valid) feature names"


def warn_feature_names(fitted: bool, given: bool, estimator: str, stacklevel: int = 2) -> None:
    """scikit-learn's ``UserWarning`` (its words) where a fit and an input matched by position
    disagree on having feature names (:func:`has_feature_names`): the columns may not be the
    ones the model read."""
    if given and not fitted:
        warnings.warn(f"X has feature names, but {estimator} was fitted without feature names",
                      UserWarning, stacklevel=stacklevel + 1)
    elif fitted and not given:
        warnings.warn(f"X does not have valid feature names, but {estimator} was fitted with "
                      f"feature names", UserWarning, stacklevel=stacklevel + 1)


class AbsentColumnWarning(UserWarning):
    """A DataFrame to predict lacks columns the model was fitted on: they are treated as
    missing in every row.

    Examples
    --------
    >>> import warnings
    >>> import bayesnb as bnb
    >>> from bayesnb.datasets import load_titanic
    >>> X, y = load_titanic()
    >>> clf = bnb.NaiveBayes().fit(X, y)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     proba = clf.predict_proba(X.drop(columns="Age").head(1))
    >>> [w.category is bnb.AbsentColumnWarning for w in caught]
    [True]
    """


def with_absent_columns(model, table: Table) -> Table:
    """``table`` with every fitted column it lacks added as missing (NaN) in every row, and an
    :class:`AbsentColumnWarning` naming them (R naivebayes' ``predict``, which uses the
    features it finds). Missing values are marginalised out, so this equals a model fitted
    without those columns. Only a DataFrame's columns matched by name can be absent; a column
    the model does not know is still refused (:func:`block_positions`)."""
    if table.frame is None or not model.named:
        return table
    present, known = set(table.columns), set(model.columns)
    absent = [c for c in model.columns if c not in present]
    if not absent or any(c not in known for c in table.columns):
        return table  # nothing absent, or an unknown column, which block_positions refuses
    warnings.warn(f"X lacks {len(absent)} column(s) the model was fitted on "
                  f"({absent[:10]}{', ...' if len(absent) > 10 else ''}): they are treated as "
                  f"missing in every row, as if the model had been fitted without them.",
                  AbsentColumnWarning, stacklevel=5)
    filler = pd.DataFrame(np.full((table.n_rows, len(absent)), np.nan), index=table.frame.index,
                          columns=pd.Index(absent, dtype=object))
    return as_table(pd.concat([table.frame, filler], axis=1))


def raw_blocks(model, X, on_device: bool = False) -> tuple[list, int]:
    """Every block's raw values in ``X`` (columns matched as :func:`block_positions` says; a
    fitted column absent from a DataFrame is missing in every row, :func:`with_absent_columns`)
    and the number of rows; with ``on_device``, the blocks of a device-resident ``jax.Array``
    that the kernels read raw (:func:`kernel_reads_raw`) stay on the device."""
    table = with_absent_columns(model, as_table(X))
    return ([table.block(b.schema.columns, pos,
                         on_device=on_device and kernel_reads_raw(b.family),
                         sparse_path=form_of(b.family).supports_sparse)
             for b, pos in zip(model.blocks, block_positions(model, table), strict=True)],
            table.n_rows)


def dense_block(x) -> np.ndarray:
    """An encoded block as a NumPy array: the sparse paths keep a SciPy matrix, which
    ``np.asarray`` would wrap as one object (the dense-input block it stands for)."""
    from scipy import sparse

    return x.toarray() if sparse.issparse(x) else np.asarray(x)


def encode_blocks(model, X, unseen: str) -> tuple[list, int]:
    """Every block of ``X`` encoded by its family (category codes, validated numbers; a
    SciPy matrix where the family keeps sparse input sparse: :func:`dense_block`)."""
    raws, n = raw_blocks(model, X)
    return [b.family.encode(raw, b.schema, unseen=unseen)
            for b, raw in zip(model.blocks, raws, strict=True)], n
