"""Fitting from data that do not fit in memory: an iterator of chunks, or a CSV file read in
chunks, with memory bounded by one chunk. :mod:`bayesnb.dask` runs the same steps over the
partitions of a Dask collection.

A fit needs only the per-class sufficient statistics of every block of columns, and those add up
over chunks (``NaiveBayes.partial_fit`` merges them; Gaussian moments exactly by Chan's update),
so a chunked fit is the batch fit. What chunks cannot decide one at a time is the *schema*: the
sorted class labels and, for every ``Categorical`` column without declared ``categories=``, its
levels. Those are learned first, by a cheap pass that keeps only the distinct labels and values
(``scan``); the model is then set up with exactly the classes and levels an in-memory ``fit`` of
the whole data would learn (same ordering: sorted, or first-seen where values do not sort), with
zero statistics (``template``), and every chunk is added to it with ``partial_fit``.

With a re-iterable source (a list, :class:`CSVChunks`, or a callable that returns a fresh
iterator) ``fit_chunks`` makes the two passes. A one-shot iterator (a generator, a database
cursor) is read once: classes and levels come from ``classes=`` and ``Categorical(categories=)``
where declared, else from the first chunk, and a later chunk with a label or level outside them is
an error naming the chunk, the column and the value (never a silently different model).
"""

from __future__ import annotations

import copy
import itertools
import os
import stat
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from . import fitted
from ._data import (
    FrameBlock,
    SparseRows,
    _refuse_mixed_labels,
    as_table,
    declared_classes,
    encode_labels,
    labels_to_codes,
    resolve_features,
    weighed,
)
from ._labels import plain
from ._missing_labels import MissingLabelWarning, check_row_order, keep_rows, missing_labels
from ._progress import progress_bar
from .families._levels import _show, bool_and_number, distinct_values

if TYPE_CHECKING:
    import bayesnb

    from ._typing import ArrayLike


class Chunk(NamedTuple):
    """One piece of the training data: ``X`` (array, DataFrame or sparse matrix), labels ``y``
    and optional per-row ``sample_weight``."""

    X: Any
    y: Any
    sample_weight: Any = None


class Layout(NamedTuple):
    """What the column types say, read from one chunk (or a Dask collection's ``_meta``).

    ``families``: per block, the family type and its columns (a later chunk whose dtypes would
    give other families is refused). ``level_blocks``: ``(columns, positions)`` of every block
    whose levels are learned from the data (Categorical without declared ``categories``).
    ``dtypes``: column -> dtype name, for error messages."""

    families: tuple
    level_blocks: tuple
    dtypes: dict


class Summary(NamedTuple):
    """What the scan pass keeps of some chunks: the sorted distinct labels, per level block and
    column the distinct non-missing values in first-seen order, the row count, and the first row
    of the first non-empty chunk (with its dtypes; the template is built from it)."""

    labels: np.ndarray
    levels: tuple
    n_rows: int
    head: Any
    columns: tuple = ()  # per level block, its columns (for messages)
    weighed: bool = True  # whether any row has a weight other than 0 (its levels are read)


# ---------------------------------------------------------------------- schema
def layout(features, X, infer_counts: bool = False, *, use_kernel: bool = False,
           sample_weight=None) -> Layout:
    """The block structure ``NaiveBayes(features=features, infer_counts=infer_counts)`` gives
    to data shaped like ``X`` (its rows of weight 0 left out, as ``fit`` leaves them out)."""
    table = weighed_rows(as_table(X), sample_weight)
    specs = resolve_features(features, table, infer_counts, use_kernel=use_kernel,
                             warn=False)  # warned once, by the first chunk's fit
    level_blocks = tuple((s.columns, s.positions) for s in specs if s.family.learns_levels())
    dtypes = ({c: str(t) for c, t in table.frame.dtypes.items()} if table.frame is not None
              else {})
    return Layout(tuple((type(s.family), s.columns) for s in specs), level_blocks, dtypes)


def check_layout(expected: Layout, features, X, where: str, infer_counts: bool = False, *,
                 use_kernel: bool = False, sample_weight=None) -> None:
    """Refuse a chunk whose dtypes would make a column another family than in the first chunk
    (e.g. a CSV column read as numbers in one chunk and as strings in another).

    Under ``infer_counts`` the first chunk decides which columns are counts: a later chunk may
    look like counts in a column the first chunk made Gaussian (the data as a whole fail the
    rule, as the first chunk does), but a value that is not a count in a column made Poisson
    is an error (a batch fit would have made it Gaussian)."""
    first = {c: fam for fam, cols in expected.families for c in cols}
    table = as_table(X)
    columns = table.columns
    missing = [c for c in first if c not in set(columns)]
    extra = [c for c in columns if c not in first]
    if missing or extra:
        what = "; ".join(part for part in (
            f"column(s) {missing[:10]} of the first chunk are missing" if missing else "",
            f"column(s) {extra[:10]} are not in the first chunk" if extra else "") if part)
        raise ValueError(f"{where}: {what}; every chunk needs the first chunk's columns "
                         f"{list(first)[:20]}.")
    got = _in_chunk(where, layout, features, X, infer_counts, use_kernel=use_kernel,
                    sample_weight=sample_weight)
    if got.families == expected.families:
        return
    now = {c: fam for fam, cols in got.families for c in cols}
    frame = table.frame
    if frame is not None:  # a column with no value in this chunk has no type to compare
        empty = {c for c in frame.columns if frame[c].isna().all()}
        now = {c: first[c] if c in empty and c in first else fam for c, fam in now.items()}
        if empty and now == first and list(got.dtypes) == list(expected.dtypes):
            return  # (the same columns, in the same order)
    if infer_counts or table.sparse is not None:  # counts inferred: the first chunk decides
        from .families import Gaussian, Poisson

        broken = next((c for c in first if first[c] is Poisson and now.get(c) is Gaussian),
                      None)
        if broken is not None:
            raise ValueError(
                f"{where}: column {broken!r} holds a value that is not a non-negative integer, "
                f"but {'infer_counts=True' if infer_counts else 'the count rule of sparse X'} "
                f"made it Poisson from the first chunk, whose values are "
                f"all counts; declare its family (features={{{broken!r}: bnb.Gaussian()}}) or "
                f"put such a value in the first chunk.")
        now = {c: first[c] if first.get(c) is Gaussian and fam is Poisson else fam
               for c, fam in now.items()}
        if now == first:
            return
    col = next((c for c in first if now.get(c) is not first[c]), None)
    if col is None:
        order, order_first = list(got.dtypes), list(expected.dtypes)
        if order != order_first:
            moved = next(c for c, d in zip(order, order_first, strict=False) if c != d)
            raise ValueError(
                f"{where}: the columns are in another order than in the first chunk (column "
                f"{moved!r} is at position {order.index(moved)}, in the first chunk at "
                f"{order_first.index(moved)}; this chunk: {order[:20]}, the first: "
                f"{order_first[:20]}); give every chunk the first chunk's column order.")
        blocks = [list(cols) for _, cols in got.families]
        blocks_first = [list(cols) for _, cols in expected.families]
        raise ValueError(f"{where}: its columns form the blocks {blocks[:10]}, the first "
                         f"chunk's {blocks_first[:10]}.")
    raise ValueError(
        f"{where}: column {col!r} has dtype {got.dtypes.get(col, '?')} and would be modelled "
        f"as {now[col].__name__}, where the first chunk's dtype "
        f"{expected.dtypes.get(col, '?')} made it {first[col].__name__}; give the column one "
        f"dtype in every chunk (read_csv_chunks(..., dtype=...)) or declare its family with "
        f"features=.")


def summarise(lay: Layout, X, y, sample_weight=None) -> Summary | None:
    """Distinct labels (validated as ``fit`` validates them) and distinct values of the level
    columns of one chunk, those of its rows of weight 0 left out as ``fit`` leaves them out
    (their labels kept); ``None`` for an empty chunk."""
    table = as_table(X)
    n = table.n_rows
    if n == 0:
        return None
    labels, _ = encode_labels(y, n)
    table = weighed_rows(table, sample_weight, none_if_all_zero=True)
    any_weight = table.n_rows > 0
    levels = []
    for columns, positions in lay.level_blocks:
        # what learn_schema reads in a batch fit
        values = table.block(columns, positions, sparse_path=False)
        if isinstance(values, FrameBlock | SparseRows):
            values = values.distinct()
        levels.append(tuple(distinct_values(values[:, j], col)
                            for j, col in enumerate(columns)))
    return Summary(labels, tuple(levels), n, _head(X),
                   tuple(columns for columns, _ in lay.level_blocks), any_weight)


def weighed_rows(table, sample_weight, *, none_if_all_zero: bool = False):
    """``table`` without its rows of weight 0 (no rows at all for a fit: they add no level
    and decide no family); where every row weighs 0, ``table`` itself, or with
    ``none_if_all_zero`` none of its rows. A weight of another length is left for the fit to
    refuse."""
    if sample_weight is None:
        return table
    weight = np.asarray(sample_weight).reshape(-1)
    if len(weight) != table.n_rows or weight.dtype.kind not in "biuf":
        return table
    if none_if_all_zero and not weight.any():
        return table.rows(np.empty(0, np.intp))
    kept = weighed(weight)
    return table if kept is None else table.rows(kept)


def combine(a: Summary | None, b: Summary | None) -> Summary | None:
    """The summary of the chunks of ``a`` followed by those of ``b``."""
    if a is None or b is None:
        return a if b is None else b
    _refuse_mixed_labels(b.labels, a.labels)  # True in one chunk, 1 in another
    both = np.concatenate([a.labels, b.labels])
    labels, _ = encode_labels(both, len(both))
    levels = tuple(tuple(_first_seen(np.concatenate([u, v]), col)
                         for col, u, v in zip(cols, ua, ub, strict=True))
                   for cols, ua, ub in zip(a.columns, a.levels, b.levels, strict=True))
    return Summary(labels, levels, a.n_rows + b.n_rows, a.head, a.columns,
                   a.weighed or b.weighed)


def check_weighed(summary: Summary) -> None:
    """Refuse data whose rows all weigh 0, as a batch fit does (before their levels, of no
    row, are missed)."""
    if not summary.weighed:
        raise ValueError("sample_weight is zero for every row: there is nothing to fit.")


def _first_seen(values, col) -> np.ndarray:
    """Distinct values in first-seen order (of already distinct parts: no missing values)."""
    values = np.asarray(values, dtype=object)
    mixed = bool_and_number(values)
    if mixed is not None:
        raise TypeError(f"column {col!r} mixes booleans and numbers across chunks "
                        f"({mixed[0]!r}, {mixed[1]!r}): True == 1 in Python, so they would be "
                        f"one level; give the column one type (e.g. strings).")
    return pd.unique(values)


def _head(X):
    if isinstance(X, pd.DataFrame):
        return X.iloc[:1].reset_index(drop=True)
    return X[:1].copy()


def start(features, lay: Layout, summary: Summary, classes=None,
          infer_counts: bool = False, *, use_kernel: bool = False) -> fitted.FittedModel:
    """A fitted value with the global classes and levels and zero statistics: the template
    every chunk's statistics are computed under.

    The classes and levels are learned by a fit of synthetic rows that hold every label and
    every level once in the order ``summary`` saw them, so the schema is what a batch fit of
    all the data learns; the statistics of those rows are then set to zero (NumPy arrays, so
    the template travels between processes without JAX-dtype changes)."""
    labels = summary.labels if classes is None else declared_classes(classes)
    if classes is not None:
        labels_to_codes(summary.labels, labels)  # a label outside classes= is named here
    sizes = [len(v) for block in summary.levels for v in block]
    n = max([len(labels), 1, *sizes])
    X = _synthetic(summary.head, lay, summary.levels, n, infer_counts)
    y = labels[np.arange(n) % len(labels)]
    model = fitted.add_chunk(None, features, as_table(X), y, classes=labels,
                             infer_counts=infer_counts, use_kernel=use_kernel)
    return fitted.zero_statistics(model)


def _synthetic(head, lay: Layout, levels: tuple, n: int, infer_counts: bool = False):
    """``n`` copies of the first row with every level column cycling through its levels."""
    from scipy import sparse

    if sparse.issparse(head):  # built dense and read back sparse; counts always inferred
        return sparse.csr_matrix(_synthetic(head.toarray(), lay, levels, n, True))
    if isinstance(head, pd.DataFrame):
        X = head.iloc[np.zeros(n, dtype=np.intp)].reset_index(drop=True)
        for (_, positions), block in zip(lay.level_blocks, levels, strict=True):
            for p, values in zip(positions, block, strict=True):
                dtype = head.dtypes.iloc[p]  # a pandas category keeps its categories' order
                if isinstance(dtype, pd.CategoricalDtype):
                    dtype = _all_categories(dtype, values)
                X.isetitem(p, pd.Series(_cycle(values, n, None), dtype=dtype if isinstance(
                    dtype, pd.CategoricalDtype) else object))
        return _not_counts(X, lay) if infer_counts else X
    X = np.repeat(np.asarray(head), n, axis=0)
    for (_, positions), block in zip(lay.level_blocks, levels, strict=True):
        for p, values in zip(positions, block, strict=True):
            X[:, p] = _cycle(values, n, None if X.dtype == object else np.nan)
    return _not_counts(X, lay) if infer_counts else X


def _all_categories(dtype: pd.CategoricalDtype, values) -> pd.CategoricalDtype:
    """The first chunk's categories, or where the scanned chunks hold others (each chunk read
    with its own, as ``read_csv(dtype="category")`` reads them) all of them, sorted where
    they order, as one read of the whole file sorts them."""
    known = set(dtype.categories)
    extra = [v for v in values if v not in known]
    if not extra:
        return dtype
    every = [*dtype.categories, *extra]
    try:
        every = sorted(every)
    except TypeError:  # unorderable labels: the first chunk's, then the others as scanned
        pass
    return pd.CategoricalDtype(every, ordered=dtype.ordered)


def _not_counts(X, lay: Layout):
    """Under ``infer_counts``, the synthetic rows repeat the first row, which may look like
    counts in a column the first chunk made Gaussian: one value of such a column is set to -1
    (not a count; the template's statistics are zeroed anyway), so the template infers the
    first chunk's families."""
    from .families import Gaussian

    position = {c: i for i, c in enumerate(as_table(X).columns)}
    gaussian = [position[c] for fam, cols in lay.families if fam is Gaussian for c in cols]
    if not gaussian:
        return X
    if isinstance(X, pd.DataFrame):
        for p in gaussian:
            if pd.api.types.is_numeric_dtype(X.dtypes.iloc[p]):
                X.iloc[0, p] = -1
        return X
    if X.dtype.kind in "iuf":
        X = X.astype(np.result_type(X.dtype, np.int8))  # unsigned cannot hold -1
        X[0, gaussian] = -1
    return X


def _cycle(values, n: int, missing) -> list:
    values = list(values)
    return [values[i % len(values)] for i in range(n)] if values else [missing] * n


def chunk_stats(template: fitted.FittedModel, X, y, sample_weight=None) -> tuple | None:
    """Sufficient statistics of one chunk under ``template``'s schema, as plain NumPy arrays
    (:func:`bayesnb.fitted.statistics`); ``None`` if it is empty. A chunk whose weights are
    all zero is taken, as a batch fit takes such rows (:func:`check_total` checks the sum)."""
    table = as_table(X)
    if table.n_rows == 0:
        return None
    model = fitted.add_chunk(template, None, table, y, sample_weight, part=True)
    return fitted.statistics(model)


def check_total(stats: tuple) -> None:
    """Refuse merged statistics (:func:`chunk_stats`) whose rows all had zero weight, as a
    batch fit refuses them."""
    if not np.any(np.asarray(stats[0]) > 0):
        raise ValueError("sample_weight is zero for every row: there is nothing to fit.")


# ---------------------------------------------------------------------- iterators of chunks
def fit_chunks(model: bayesnb.NaiveBayes, chunks: Iterable[tuple] | Callable[[], Iterable[tuple]],
               *, classes: ArrayLike | None = None, progress: bool = True,
               total: int | None = None) -> bayesnb.NaiveBayes:
    """Fit ``model`` (a ``NaiveBayes``, in place) from chunks of data, holding one at a time.

    Parameters
    ----------
    model : NaiveBayes
        Its settings are used; any previous fit is discarded (as ``fit`` does). Under its
        ``missing_label="drop"``, rows whose label is missing (None, NaN, ``pd.NA``) are left
        out of every pass, with one ``MissingLabelWarning`` counting them, as ``fit`` does;
        under the other settings such a row is refused.
    chunks : iterable of (X, y) or (X, y, sample_weight), or a callable returning one
        A list, :class:`CSVChunks`, or a function returning a fresh iterator is read twice: a
        scan for the classes and the levels of Categorical columns, then the fit. A one-shot
        iterator (a generator, a database cursor, :class:`CSVChunks` of a pipe or FIFO) is
        read once: classes and levels come from
        ``classes=`` and ``Categorical(categories=...)`` where declared, else from the first
        chunk, and a later chunk with another label or level raises a ``ValueError`` naming
        it. The scan is skipped when ``classes`` is given and no Categorical column needs its
        levels learned. From :class:`CSVChunks`, a Categorical column's cells are read as one
        type in every chunk: as text throughout when a chunk holds text in it (scanned again,
        as one ``pd.read_csv`` of the file reads it), as the type of declared ``categories``.
    classes : array-like, optional
        Every label, declared up front (as ``partial_fit(classes=)``).
    progress : bool, default=True
        A tqdm progress bar over chunks (with the row count) for each pass.
    total : int, optional
        The number of chunks, for the bar (taken from ``len(chunks)`` where it has one).

    Returns
    -------
    model : NaiveBayes
        Fitted: its classes, levels and sufficient statistics are those of one ``fit`` on the
        concatenated chunks (counts exactly; Gaussian moments up to rounding, ~1e-15 relative).
        As ``fit`` does, undefined estimates (ML, MAP) are reported now and NUTS runs now.

    Examples
    --------
    Titanic in chunks of 500 rows (the first chunks hold only passengers who died; a list is
    scanned for every class first):

    >>> import numpy as np, bayesnb as bnb
    >>> from bayesnb.outofcore import fit_chunks
    >>> from bayesnb.datasets import load_titanic
    >>> X, y = load_titanic()
    >>> chunks = [(X[i:i + 500], y[i:i + 500]) for i in range(0, len(y), 500)]
    >>> clf = fit_chunks(bnb.NaiveBayes(), chunks, progress=False)
    >>> clf.class_count_
    array([1490.,  711.])
    >>> whole = bnb.NaiveBayes().fit(X, y)
    >>> bool(np.allclose(clf.predict_proba(X), whole.predict_proba(X)))
    True
    """
    if total is None and hasattr(chunks, "__len__"):
        total = len(chunks)
    iterator, fresh = _open(chunks)
    # missing_label='drop' leaves rows without a label out of every pass, as fit does; the
    # other settings refuse them (fit_chunks has no unlabeled rows for method='mcmc')
    drop = getattr(model, "missing_label", None) == "drop"
    first, skipped, dropped_first = None, 0, []
    for item in iterator:
        first = labelled_chunk(_as_chunk(item, skipped), drop, dropped_first)
        if as_table(first.X).n_rows:
            break
        skipped += 1
    if first is None:
        raise ValueError("chunks is empty: there is nothing to fit.")
    if dropped_first and as_table(first.X).n_rows == 0:
        refuse_all_dropped(sum(dropped_first))
    counts = getattr(model, "infer_counts", False)  # the first chunk decides (check_layout)
    kernel = getattr(model, "use_kernel", False)
    lay = _in_chunk(skipped, layout, model.features, first.X, counts, use_kernel=kernel,
                    sample_weight=first.sample_weight)
    if as_table(first.X).n_rows == 0:
        raise ValueError("every chunk is empty: there is nothing to fit.")
    if isinstance(chunks, CSVChunks) and chunks.rereadable:
        # declared categories: their cells read as their type (a pipe cannot be read again:
        # its cells are read as pandas parses each chunk)
        typed = chunks.read_as(_declared_levels(model.features, first.X))
        if typed.read_csv_kwargs != chunks.read_csv_kwargs or typed.levels != chunks.levels:
            getattr(iterator, "close", lambda: None)()
            return fit_chunks(model, typed, classes=classes, progress=progress, total=total)
    two_pass = fresh is not None and (classes is None or bool(lay.level_blocks))
    summary = None if two_pass else _in_chunk(skipped, summarise, lay, first.X, first.y,
                                              first.sample_weight)
    if summary is not None and not summary.weighed and lay.level_blocks:
        raise ValueError(f"chunk {skipped}: every row weighs 0, and a one-shot iterator takes "
                         f"the levels of the columns {list(lay.level_blocks[0][0])[:5]} from "
                         f"its first chunk; declare them (Categorical(categories=...)) or pass "
                         f"a list or a callable returning a fresh iterator (two passes).")
    items, first = chain([first], iterator), None  # hold no chunk beyond the current one
    if two_pass:
        summary = _scan(lay, model.features, items, skipped, progress_bar(total, progress, "scan"),
                        counts, kernel, drop)
        text = _text_and_numbers(summary) if isinstance(chunks, CSVChunks) else []
        if text:  # pandas read a column as numbers in some chunks, as text in others
            chunks = chunks.read_as(dict.fromkeys(text, ("",)))  # all text, as read_csv
            fresh = chunks.__iter__
            summary = _scan(lay, model.features, fresh(), 0,
                            progress_bar(total, progress, "scan"), counts, kernel, drop)
        check_weighed(summary)
        stream, offset = fresh(), 0
    else:
        stream, offset = items, skipped
    template = start(model.features, lay, summary, classes, counts, use_kernel=kernel)
    one_shot = None if two_pass else (template.classes, template.blocks)
    families = template.families
    stats = None
    bar = progress_bar(total, progress, "fit")
    rows = 0
    # rows dropped from chunks this pass reads (one pass: the first pass's too)
    dropped = [] if two_pass else dropped_first
    for i, item in enumerate(stream, start=offset):
        chunk = labelled_chunk(_as_chunk(item, i), drop, dropped)
        check_layout(lay, model.features, chunk.X, f"chunk {i}", counts, use_kernel=kernel,
                     sample_weight=chunk.sample_weight)
        n = as_table(chunk.X).n_rows
        if n:
            if one_shot is not None:
                _check_known(lay, one_shot, chunk, i)
            part = _in_chunk(i, chunk_stats, template, chunk.X, chunk.y, chunk.sample_weight)
            stats = fitted.merge_statistics(families, stats, part)
        rows += n
        bar.update(1)
        bar.set_postfix(rows=rows, refresh=False)
    bar.close()
    if stats is None:
        raise ValueError("every chunk is empty: there is nothing to fit.")
    check_total(stats)
    warn_dropped(sum(dropped), stacklevel=3)
    # as fit: undefined estimates are reported and NUTS runs before the model is installed
    return model._install(fitted.with_statistics(template, stats))


def _open(chunks) -> tuple[Iterator, Callable[[], Iterator] | None]:
    """An iterator over ``chunks`` and, when it can be read again, a way to do so."""
    if callable(chunks) and not isinstance(chunks, Iterable):
        return iter(chunks()), lambda: iter(chunks())
    if not isinstance(chunks, Iterable):
        raise TypeError(f"chunks must be an iterable of (X, y) tuples or a callable returning "
                        f"one, got {type(chunks).__name__}.")
    iterator = iter(chunks)
    if iterator is chunks or not getattr(chunks, "rereadable", True):
        return iterator, None
    return iterator, lambda: iter(chunks)


def _in_chunk(i, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, its ValueError or TypeError prefixed with ``chunk i:`` (or
    with ``i`` itself when it is a string such as ``"partition 3"``)."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, TypeError) as err:
        message = f"{i if isinstance(i, str) else f'chunk {i}'}: {err}"
        try:
            prefixed = type(err)(message)
        except TypeError:  # an exception type with other constructor arguments
            prefixed = (TypeError if isinstance(err, TypeError) else ValueError)(message)
        raise prefixed from err


def refuse_all_dropped(n: int) -> None:
    raise ValueError(f"y has {n} missing labels (None, NaN or pd.NA) and no other: every "
                     f"label is missing, so missing_label='drop' leaves nothing to fit.")


def warn_dropped(n: int, stacklevel: int) -> None:
    """One warning for the ``n`` rows a chunked fit left out (none when ``n`` is 0)."""
    if n:
        warnings.warn(f"y has {n} missing labels (None, NaN or pd.NA): missing_label='drop' "
                      f"leaves these {n} rows out of the fit (as R's naivebayes does).",
                      MissingLabelWarning, stacklevel=stacklevel)


def labelled_chunk(chunk: Chunk, drop: bool, dropped: list) -> Chunk:
    """``chunk`` without its rows whose label is missing when ``drop``
    (``missing_label="drop"``, as ``fit`` leaves them out), their number appended to
    ``dropped``. A ``y`` of another length than ``X`` is left as it is, for the fit's own
    error."""
    if not drop:
        return chunk
    missing = missing_labels(chunk.y)
    if missing is None or not missing.any() or len(missing) != as_table(chunk.X).n_rows:
        return chunk
    dropped.append(int(missing.sum()))
    return Chunk(*keep_rows(chunk.X, chunk.y, chunk.sample_weight, ~missing))


def _as_chunk(item, i: int) -> Chunk:
    if isinstance(item, tuple) and len(item) in (2, 3):
        chunk = Chunk(*item)
        for name, values in (("y", chunk.y), ("sample_weight", chunk.sample_weight)):
            try:
                check_row_order(chunk.X, values, name)
            except ValueError as err:
                raise ValueError(f"chunk {i}: {err}") from None
        return chunk
    raise TypeError(f"chunk {i}: expected a tuple (X, y) or (X, y, sample_weight), got "
                    f"{type(item).__name__}.")


def _scan(lay, features, items, offset, bar, infer_counts: bool = False,
          use_kernel: bool = False, drop: bool = False) -> Summary:
    summary, rows = None, 0
    for i, item in enumerate(items, start=offset):
        chunk = labelled_chunk(_as_chunk(item, i), drop, [])
        check_layout(lay, features, chunk.X, f"chunk {i}", infer_counts, use_kernel=use_kernel,
                     sample_weight=chunk.sample_weight)
        part = _in_chunk(i, summarise, lay, chunk.X, chunk.y, chunk.sample_weight)
        summary = _in_chunk(i, combine, summary, part)
        rows += 0 if part is None else part.n_rows
        bar.update(1)
        bar.set_postfix(rows=rows, refresh=False)
    bar.close()
    return summary


def _declared_levels(features, X) -> dict:
    """``{column: levels}`` of the columns whose levels ``features`` declares
    (``Categorical(categories=...)``), for data shaped like ``X``."""
    out = {}
    for spec in resolve_features(features, as_table(X), warn=False):
        out.update(zip(spec.columns, spec.family.declared_levels(spec.columns) or (),
                       strict=False))
    return out


def _text_and_numbers(summary: Summary) -> list:
    """The level columns holding both text and other values (numbers, booleans): read from a
    CSV, the chunks parsed the column as numbers where every cell was a number, as text
    elsewhere; a batch ``read_csv`` reads such a column as text throughout."""
    out = []
    for columns, block in zip(summary.columns, summary.levels, strict=True):
        for col, values in zip(columns, block, strict=True):
            kinds = {isinstance(v, str) for v in values}
            if len(kinds) == 2:
                out.append(col)
    return out


def _check_known(lay: Layout, known, chunk: Chunk, i: int) -> None:
    """One-shot reading: a label or level the model was not set up with is an error."""
    classes, blocks = known
    part = _in_chunk(i, summarise, lay, chunk.X, chunk.y, chunk.sample_weight)
    advice = ("a one-shot iterator is read once, so the classes and levels are the first "
              "chunk's unless declared; declare them (classes=..., Categorical(categories="
              "...)) or pass a list or a callable returning a fresh iterator (two passes).")
    new = [v for v in part.labels if v not in set(classes.tolist())]
    if new:
        raise ValueError(f"chunk {i}: label {plain(new[0])!r} is not one of the classes "
                         f"[{_show([plain(c) for c in classes], 10)}]; {advice}")
    schemas = {tuple(b.schema.columns): b.schema for b in blocks}
    for (columns, _), values in zip(lay.level_blocks, part.levels, strict=True):
        schema = schemas[tuple(columns)]
        for col, levels, seen in zip(columns, schema.levels, values, strict=True):
            index = pd.Index(levels, dtype=object).get_indexer(pd.Index(seen, dtype=object))
            if np.any(index < 0):
                raise ValueError(f"chunk {i}: column {col!r}: value "
                                 f"{plain(seen[index < 0][0])!r} is not one of its levels "
                                 f"{[plain(v) for v in levels]}; {advice}")


# ---------------------------------------------------------------------- files
class CSVChunks:
    """A CSV file as a re-iterable source of ``(X, y)`` chunks (``pandas.read_csv`` with
    ``chunksize``): each iteration opens the file anew, so :func:`fit_chunks` can make its two
    passes, and memory holds one chunk.

    Parameters
    ----------
    path : str or Path
    target : str
        The label column; the other columns (or ``usecols``) are ``X``.
    chunksize : int, default=100_000
        Rows per chunk.
    **read_csv_kwargs
        Passed to ``pandas.read_csv`` (``dtype=``, ``usecols=``, ``sep=``, ...). pandas infers
        dtypes chunk by chunk; where a column could read differently in different chunks (a
        string column whose values look numeric in some chunk), give its ``dtype`` so every
        chunk reads it as one batch ``read_csv`` would. A chunk whose dtypes would change a
        column's family is refused with an error naming the column.
    """

    def __init__(self, path, target: str, *, chunksize: int = 100_000, **read_csv_kwargs):
        if int(chunksize) < 1:
            raise ValueError(f"chunksize must be a positive number of rows, got {chunksize!r}.")
        self.path = Path(path)
        self.target = target
        self.chunksize = int(chunksize)
        self.read_csv_kwargs = read_csv_kwargs
        self.levels: dict = {}  # column -> a model's levels, whose type its cells are read as
        self._opened = False

    def read_as(self, levels: Mapping) -> CSVChunks:
        """The same file with the cells of each column of ``levels`` (column -> a model's
        category levels) read as the type of those levels (:func:`text_dtypes`,
        :func:`cells_as_levels`), whatever type pandas would infer for a chunk."""
        out = copy.copy(self)
        out.levels = {**self.levels, **levels}
        out.read_csv_kwargs = text_dtypes(self.read_csv_kwargs, out.levels)
        return out

    @property
    def rereadable(self) -> bool:
        """Whether the file can be read twice: False for a pipe, FIFO, socket or terminal
        (``/dev/stdin``), whose data are gone once read; :func:`fit_chunks` then reads it once."""
        try:
            mode = os.stat(self.path).st_mode
        except OSError:
            return True  # a missing file: read_csv says so
        return not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode))

    def __iter__(self) -> Iterator[tuple[pd.DataFrame, pd.Series]]:
        if self._opened and not self.rereadable:
            # opening a FIFO again would wait for a writer that never comes
            raise ValueError(f"{self.path} is a pipe or FIFO: it can be read only once. "
                             "Declare classes= and Categorical(categories=...) so that "
                             "fit_chunks reads it once, or save it to a file first.")
        self._opened = True
        try:
            reader = pd.read_csv(self.path, chunksize=self.chunksize, **self.read_csv_kwargs)
        except pd.errors.EmptyDataError:
            raise ValueError(f"{self.path}: the file is empty (not even a header).") from None
        except ValueError as err:  # parser and decoding errors (UnicodeDecodeError is one)
            raise ValueError(f"{self.path}: could not read the header: "
                             f"{_one_line(err)}") from None
        with reader:
            for i in itertools.count():
                try:
                    frame = next(reader)
                except StopIteration:
                    return
                except ValueError as err:
                    lo, hi = i * self.chunksize + 1, (i + 1) * self.chunksize
                    raise ValueError(f"{self.path}: chunk {i} (data rows {lo}-{hi}) could not "
                                     f"be read: {_one_line(err)}") from None
                if self.target not in frame.columns:
                    raise ValueError(f"{self.path}: no column {self.target!r} (columns: "
                                     f"{list(frame.columns)[:20]}).")
                frame = cells_as_levels(frame, self.levels)
                yield frame.drop(columns=self.target), frame[self.target]

    def __repr__(self) -> str:
        return f"CSVChunks({str(self.path)!r}, target={self.target!r}, chunksize={self.chunksize})"


def model_levels(blocks) -> dict:
    """``{column: levels}`` of every column of ``blocks`` (fitted blocks) with category
    levels (Categorical)."""
    return {c: tuple(levels) for b in blocks
            for c, levels in zip(b.schema.columns, b.schema.levels, strict=False)}


def _level_kind(levels) -> type | None:
    """``str``, ``bool`` or ``float`` (numbers) when every level is of that kind, else None."""
    if not levels:
        return None
    if all(isinstance(v, str) for v in levels):
        return str
    if all(isinstance(v, bool | np.bool_) for v in levels):
        return bool
    if all(isinstance(v, int | float | np.integer | np.floating)
           and not isinstance(v, bool | np.bool_) for v in levels):
        return float
    return None


def text_dtypes(read_csv_kwargs: dict, levels: Mapping) -> dict:
    """``read_csv_kwargs`` with ``dtype=str`` for each column whose levels are all text: a
    CSV cell is text, and pandas parses a chunk (or a file) whose cells of that column are
    all numbers as numbers (``1`` where the model knows ``"1"``; ``"01"`` would be lost).
    A dtype or converter the caller gave keeps its columns."""
    text = [c for c, lv in levels.items() if _level_kind(lv) is str]
    dtype = read_csv_kwargs.get("dtype")
    if not text or (dtype is not None and not isinstance(dtype, Mapping)):
        return read_csv_kwargs
    taken = set(read_csv_kwargs.get("converters") or {}) | set(dtype or {})
    extra = {c: str for c in text if c not in taken}
    return {**read_csv_kwargs, "dtype": {**(dtype or {}), **extra}} if extra \
        else read_csv_kwargs


def cells_as_levels(frame: pd.DataFrame, levels: Mapping) -> pd.DataFrame:
    """``frame`` with the text cells of each column whose levels are numbers (or booleans)
    read as numbers (booleans): pandas reads a CSV column of codes as text when one cell is
    text (``"1"``, ``"2"``, ``"x"``), where the model knows ``1`` and ``2``. A cell that does
    not parse stays text (an unseen value, reported as the model's ``unseen`` rule says)."""
    out = frame
    for col, lv in levels.items():
        kind = _level_kind(lv)
        if kind in (None, str) or col not in frame.columns or \
                pd.api.types.is_numeric_dtype(frame[col].dtype):  # parsed already (or bool)
            continue
        cells = frame[col]
        parsed = {v: _parse(v, kind) for v in pd.unique(cells.to_numpy())
                  if isinstance(v, str)}
        if all(p is v for v, p in parsed.items()):
            continue
        if out is frame:
            out = frame.copy()
        out[col] = pd.Series([parsed.get(v, v) if isinstance(v, str) else v for v in cells],
                             index=cells.index, dtype=object)
    return out


#: the spellings pandas reads as booleans
_BOOLEANS = {"true": True, "false": False}


def _parse(text: str, kind: type):
    """``text`` as a number (an ``int`` where it is one) or a boolean, else ``text``."""
    if kind is bool:
        return _BOOLEANS.get(text.strip().lower(), text)
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            continue
    return text


def _one_line(err: BaseException) -> str:
    """An exception's message on one line (parser messages can span several)."""
    return " ".join(str(err).split()) or type(err).__name__


def read_csv_chunks(path: str | os.PathLike[str], target: str, *, chunksize: int = 100_000,
                    **read_csv_kwargs: Any) -> CSVChunks:
    """``CSVChunks(path, target, chunksize=..., **read_csv_kwargs)``: a CSV file as chunks for
    :func:`fit_chunks`, e.g. ``fit_chunks(NaiveBayes(), read_csv_chunks("big.csv", "y"))``.

    Examples
    --------
    >>> import os, tempfile, numpy as np, bayesnb as bnb
    >>> from bayesnb.outofcore import fit_chunks, read_csv_chunks
    >>> from bayesnb.datasets import load_titanic
    >>> X, y = load_titanic()
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "titanic.csv")
    ...     X.assign(Survived=y).to_csv(path, index=False)
    ...     chunks = read_csv_chunks(path, "Survived", chunksize=500)
    ...     clf = fit_chunks(bnb.NaiveBayes(), chunks, progress=False)
    >>> clf.class_count_
    array([1490.,  711.])
    >>> bool(np.allclose(clf.predict_proba(X), bnb.NaiveBayes().fit(X, y).predict_proba(X)))
    True"""
    return CSVChunks(path, target, chunksize=chunksize, **read_csv_kwargs)
