"""Host-side input handling: tables, labels and the column -> family specification.

Nothing here is traced by JAX: validation and label encoding happen before any kernel runs, so
every error can name the column and the value at fault.

Family inference (``features=None``, and columns a mapping leaves out) follows R's e1071:

* boolean columns -> :class:`~bayesnb.Bernoulli`;
* object, string and pandas ``category`` columns -> :class:`~bayesnb.Categorical`;
* numeric columns (integer or float) -> :class:`~bayesnb.Gaussian`.

Counts are not guessed by default: declare :class:`~bayesnb.Poisson` or
:class:`~bayesnb.Multinomial`. With ``infer_counts=True`` (R naivebayes' ``usepoisson=TRUE``) a
numeric column whose observed values are all non-negative integers (:func:`count_columns`) is
inferred as :class:`~bayesnb.Poisson` instead of Gaussian. A SciPy sparse matrix is read that
way always (a sparse matrix of whole numbers is most often counts): its count columns are
Poisson, its other columns Gaussian.

A sparse matrix is read as ``X.toarray()`` would be: an implicit zero is the value 0 and a
stored NaN a missing value. Families with a sparse path (``FastForm.supports_sparse``:
Multinomial, Bernoulli, Poisson) read the stored entries; the others (Gaussian, Categorical,
...) read the block through :class:`SparseRows`, densified a chunk of rows at a time.

A column of numbers with a few text cells (one ``"abc"`` in a numeric CSV column makes pandas
read the whole column as strings) is inferred Categorical with an
:class:`InferredCategoricalWarning` naming the column and the text values; so is a column of
numbers held as Python objects (``df.to_numpy()`` of a frame with a text column).

Labels and category values are kept apart by type: booleans mixed with numbers (``True == 1``
in Python) are refused rather than merged.
"""

from __future__ import annotations

import functools
import numbers
import warnings
from collections.abc import Mapping
from typing import Any, NamedTuple

import jax
import numpy as np
import pandas as pd

from .families import Bernoulli, Categorical, Family, Gaussian, KernelDensity, Poisson
from .families._levels import _show, bool_and_number


class InferredCategoricalWarning(UserWarning):
    """A column of numbers was inferred Categorical: a few of its values are text, or its
    numbers are held as objects rather than in a numeric dtype.

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> import bayesnb as bnb
    >>> X = pd.DataFrame({"dose": [1.5, 2.0, "n/a", 3.5]}, dtype=object)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     clf = bnb.NaiveBayes().fit(X, [0, 0, 1, 1])
    >>> [w.category is bnb.InferredCategoricalWarning for w in caught]
    [True]
    >>> type(clf.blocks_[0].family).__name__
    'Categorical'
    """


class Table(NamedTuple):
    """A 2-D input with column labels; ``frame`` is set when the input was a DataFrame,
    ``sparse`` (CSR) when it was a ``scipy.sparse`` matrix or array. ``array`` is a
    ``jax.Array`` when the input was one (it stays in the device's memory, see
    :meth:`block`), else NumPy."""

    columns: tuple
    frame: pd.DataFrame | None
    array: np.ndarray | None
    sparse: Any = None
    layout: FrameLayout | None = None  # a DataFrame's column kinds, read once (:meth:`block`)

    @property
    def n_rows(self) -> int:
        if self.sparse is not None:
            return self.sparse.shape[0]
        return len(self.frame) if self.frame is not None else self.array.shape[0]

    def rows(self, keep: np.ndarray) -> Table:
        """The table of the rows at the indices ``keep``, its columns as they are."""
        if self.sparse is not None:
            return self._replace(sparse=self.sparse[keep])
        if self.frame is not None:
            frame = self.frame.iloc[keep]
            return self._replace(frame=frame, layout=FrameLayout(frame))
        return self._replace(array=self.array[keep])

    def block(self, columns: tuple, positions: tuple, on_device: bool = False,
              sparse_path: bool = True) -> np.ndarray:
        """The columns at ``positions``. A device-resident ``jax.Array`` input is copied to
        the host as NumPy, unless ``on_device``: then the block stays a ``jax.Array`` (for
        the kernels, which read it in place: :func:`bayesnb._blocks.block_source`). A sparse
        input's block is a CSR matrix when the family reading it has a sparse path
        (``sparse_path``), else the same columns densified chunk by chunk
        (:class:`SparseRows`)."""
        if self.sparse is not None:
            if list(positions) == list(range(self.sparse.shape[1])):
                block = self.sparse
            else:
                block = self.sparse[:, list(positions)]
            return block if sparse_path else SparseRows(block)
        if self.frame is not None:
            block = self.layout.block(self.frame, list(positions))
            if isinstance(block, FrameBlock):
                return block
        elif list(positions) == list(range(self.array.shape[1])):
            block = self.array  # the whole table: no copy (encode validates without mutating)
        else:
            block = self.array[:, list(positions)]
        if isinstance(block, jax.Array) and not on_device:
            return np.asarray(block)
        # values too large for float64's squares are refused where the block is read: by
        # the kernels' checks, or by the family's encode (``numeric_block``)
        return block


class FrameLayout:
    """A DataFrame's column kinds, read from its ``dtypes`` once per table rather than once
    per block (0.2 ms a block: 0.6 s a call of a model declared column by column, 2,000
    blocks), and when every column holds one numeric dtype, the frame's values, which the
    blocks are then taken from."""

    def __init__(self, frame: pd.DataFrame):
        self.dtypes = dtypes = list(frame.dtypes)  # frame.dtypes is a new Series at each call
        self.extension = np.array([isinstance(t, pd.api.extensions.ExtensionDtype)
                                   for t in dtypes], dtype=bool)
        self.objects = self.extension | np.array(
            [_time_kind(t) is not None  # (pandas' numeric check raises on Arrow intervals)
             or not (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t))
             for t in dtypes], dtype=bool)
        self.one_dtype = not self.objects.any() and all(t == dtypes[0] for t in dtypes)
        self._values = None

    def block(self, frame: pd.DataFrame, positions: list):
        """``frame.iloc[:, positions]`` as :meth:`Table.block` reads it: a
        :class:`FrameBlock` where a column holds an extension dtype (converted to Python
        objects chunk by chunk, when read), an object array where one holds other values
        than numbers, else the numbers."""
        if self.extension[positions].any():
            return FrameBlock(frame.iloc[:, positions])
        if self.objects[positions].any():
            return frame.iloc[:, positions].astype(object).to_numpy()
        if not self.one_dtype:
            block = frame.iloc[:, positions]
            # integers beyond 2**53 beside floats: as Python ints, which floats would merge
            return block.astype(object).to_numpy() if _rounds_integers(block) else \
                block.to_numpy()
        if self._values is None:
            self._values = frame.to_numpy()
        return (self._values if positions == list(range(self._values.shape[1]))
                else self._values[:, positions])


def _rounds_integers(block: pd.DataFrame) -> bool:
    """Whether ``block.to_numpy()`` would round integers: its common dtype is a float (or
    int64 beside uint64) and a 64-bit integer column holds a value beyond 2**53."""
    dtypes = list(block.dtypes)
    if np.result_type(*dtypes).kind != "f":
        return False
    return any(t.kind in "iu" and t.itemsize == 8 and len(block)
               and max(abs(int(block.iloc[:, j].min())), abs(int(block.iloc[:, j].max())))
               > 2 ** 53 for j, t in enumerate(dtypes))


class FrameBlock:
    """The columns of a DataFrame holding pandas extension dtypes (nullable, pyarrow,
    string, category), read as the object block ``frame.astype(object).to_numpy()`` without
    building it: a slice of rows converts those rows only, so the streaming readers
    (``_blocks.block_source``) hold one chunk of Python objects at a time rather than the
    whole table (several times the frame's own size). ``np.asarray`` gives the whole block."""

    def __init__(self, frame: pd.DataFrame):
        self.frame = frame
        self.shape = frame.shape
        self.ndim = 2
        self.dtype = np.dtype(object)
        self.size = frame.shape[0] * frame.shape[1]

    def __len__(self) -> int:
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        block = _as_objects(self.frame)
        return block if dtype is None else block.astype(dtype)

    def __getitem__(self, key):
        rows, rest = (key[0], key[1:]) if isinstance(key, tuple) else (key, ())
        if isinstance(rows, slice) and (not rest or isinstance(rest[0], slice | int)):
            # rows first (a chunk), then the columns asked for: only they are converted
            part = self.frame.iloc[rows]
            if rest:
                part = part.iloc[:, [rest[0]] if isinstance(rest[0], int) else rest[0]]
            block = _as_objects(part)
            return block[:, 0] if rest and isinstance(rest[0], int) else block
        return np.asarray(self)[key]

    def distinct(self) -> np.ndarray:
        """An object block with the same distinct values per column (missing ones included)
        as the whole block, each column padded by repeating its first value: what a
        Categorical learns its levels from, without converting every row."""
        try:
            uniques = [_as_objects(pd.Series(self.frame.iloc[:, j].unique()).to_frame())[:, 0]
                       for j in range(self.shape[1])]
        except TypeError:  # unhashable cells (pyarrow lists): the whole block names them
            return np.asarray(self)
        rows = max(len(u) for u in uniques)
        out = np.empty((rows, self.shape[1]), dtype=object)
        for j, u in enumerate(uniques):
            out[:, j] = np.concatenate([u, np.repeat(u[:1], rows - len(u))])
        return out


def _as_objects(frame: pd.DataFrame) -> np.ndarray:
    """``frame.astype(object).to_numpy()``, with text and category columns built from their
    distinct values (``pd.factorize``): each cell then points at one of a few Python objects
    instead of a new one per cell (seconds and gigabytes on millions of string cells)."""
    out = np.empty(frame.shape, dtype=object)
    for j in range(frame.shape[1]):
        column = frame.iloc[:, j]
        if isinstance(column.dtype, pd.CategoricalDtype | pd.StringDtype):
            codes, distinct = pd.factorize(column.array, use_na_sentinel=True)
            values = np.append(np.asarray(distinct.astype(object), dtype=object),
                               np.array([_missing_cell(column.dtype)], dtype=object))
            out[:, j] = values[codes]  # code -1: the appended missing value
        else:
            out[:, j] = column.astype(object).to_numpy()
    return out


@functools.lru_cache(maxsize=64)
def _missing_cell(dtype):
    """The missing value as ``astype(object)`` spells it in a column of ``dtype`` (pd.NA for
    text, NaN for a category), found once per dtype (per column it cost 0.25 ms: a second
    of a 4,000-column frame)."""
    return pd.Series([None], dtype=dtype).astype(object).iloc[0]


class SparseRows:
    """The columns of a SciPy sparse (CSR) input read as the dense block ``X.toarray()``
    without building it, for a family with no sparse path (Gaussian, Categorical): an implicit
    zero is the value 0, a stored NaN a missing value. A slice of rows densifies those rows
    only, so the streaming readers (``_blocks.block_source``, ``fast._host``) hold one chunk at
    a time: memory about ``rows x columns x 8`` bytes per chunk, the chunk sized by
    ``fast._kernels.CHUNK_BYTES`` (8 MiB on a CPU) or ``fast._host.CHUNK_ENTRIES`` cells, and
    never the whole ``(n, F)`` block. ``np.asarray`` gives the whole block (paths that encode a
    block at once: MCMC predictions, leave-one-out, explanations)."""

    def __init__(self, csr):
        self.csr = csr
        self.shape = csr.shape
        self.ndim = 2
        self.dtype = csr.dtype
        self.size = csr.shape[0] * csr.shape[1]

    def __len__(self) -> int:
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        block = self.csr.toarray()
        return block if dtype is None else block.astype(dtype)

    def __getitem__(self, key):
        rows, rest = (key[0], key[1:]) if isinstance(key, tuple) else (key, ())
        if isinstance(rows, slice):  # densify the rows asked for only (a chunk)
            block = self.csr[rows].toarray()
            return block[(slice(None), *rest)] if rest else block
        return np.asarray(self)[key]

    def distinct(self) -> np.ndarray:
        """A block with the same distinct values per column (NaN included) as the dense block,
        each column padded by repeating its first value: the stored values, and 0 where a
        column has an implicit zero. What a Categorical learns its levels from."""
        csc = self.csr.tocsc()
        uniques = []
        for j in range(self.shape[1]):
            stored = csc.data[csc.indptr[j]:csc.indptr[j + 1]]
            if len(stored) < self.shape[0]:  # an implicit zero
                stored = np.concatenate([stored, np.zeros(1, dtype=stored.dtype)])
            uniques.append(np.unique(stored))
        rows = max(len(u) for u in uniques)
        out = np.empty((rows, self.shape[1]), dtype=self.dtype)
        for j, u in enumerate(uniques):
            out[:, j] = np.concatenate([u, np.repeat(u[:1], rows - len(u))])
        return out


def as_table(X: Any) -> Table:
    """Wrap array-likes and DataFrames; reject what is not a 2-D table with a clear error."""
    if isinstance(X, pd.DataFrame):
        if X.shape[1] == 0:
            raise ValueError(f"0 feature(s) (shape={X.shape}) while a minimum of 1 is required.")
        complex_cols = [c for c, t in X.dtypes.items()
                        if _time_kind(t) is None and pd.api.types.is_complex_dtype(t)]
        if complex_cols:
            raise ValueError(f"column {complex_cols[0]!r}: Complex data not supported.")
        if X.columns.has_duplicates:
            dup = X.columns[X.columns.duplicated()][0]
            raise ValueError(f"column {dup!r} appears more than once in X.")
        return Table(tuple(X.columns), X, None, layout=FrameLayout(X))
    if isinstance(X, pd.Series):
        raise ValueError("X must be 2-D (rows x columns); got a pandas Series. Use "
                         "X.to_frame() for a single column, X.to_frame().T for a single row "
                         "(such as df.iloc[0]; or df.iloc[[0]]).")
    from scipy import sparse

    if sparse.issparse(X):
        if X.ndim != 2:  # a 1-D sparse array (csr_array(X)[i]): one row, or one column?
            raise ValueError(f"X must be 2-D (rows x columns); got a 1-D sparse array of shape "
                             f"{X.shape}. Use X.reshape(1, -1) for a single row.")
        if X.shape[1] == 0:
            raise ValueError(f"0 feature(s) (shape={X.shape}) while a minimum of 1 is required.")
        if X.dtype.kind not in "biuf":
            raise TypeError(f"sparse X has unsupported dtype {X.dtype}; expected numbers.")
        return Table(tuple(range(X.shape[1])), None, None, canonical_csr(X))
    if isinstance(X, jax.Array):  # left where it is: a GPU's memory is read in place
        arr = X
    else:
        try:
            arr = np.asarray(X)
            if arr.dtype.kind in "US" and not isinstance(X, np.ndarray):
                arr = np.array(X, dtype=object)  # a NaN among strings stays a missing value
        except ValueError as err:  # ragged nested lists
            raise ValueError(f"X could not be read as a 2-D table: {err}") from None
    if arr.dtype.kind == "c":
        raise ValueError("Complex data not supported: X holds complex numbers.")
    if arr.dtype.kind not in "USObiuf":
        raise TypeError(f"X has unsupported dtype {arr.dtype}; expected numbers, booleans "
                        "or objects.")
    if arr.ndim == 1 and any(isinstance(v, str) and " " in v for v in arr[:100]):
        # documents, not a column: reshape(-1, 1) would lead to "needs numbers" next
        raise ValueError(f"X is 1-D text (documents such as {_first_text(arr)!r}), not a "
                         "table: turn the documents into word counts first, e.g. with "
                         "scikit-learn's sklearn.feature_extraction.text.CountVectorizer "
                         "(then bnb.Multinomial() models the counts).")
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-D (rows x columns), got an array of shape {arr.shape}. "
                         "Reshape your data with X.reshape(-1, 1) for a single column or "
                         "X.reshape(1, -1) for a single row.")
    if arr.shape[1] == 0:
        raise ValueError(f"0 feature(s) (shape={arr.shape}) while a minimum of 1 is required.")
    if arr.dtype.kind in "US":
        arr = arr.astype(object)
    return Table(tuple(range(arr.shape[1])), None, arr)


def _first_text(arr) -> str:
    text = next(v for v in arr if isinstance(v, str) and " " in v)
    text = str(text)
    return text if len(text) <= 40 else text[:37] + "..."


def canonical_csr(X) -> Any:
    """``X`` as a CSR matrix in canonical form: sorted column indices and one stored entry
    per cell. SciPy defines a cell stored as several entries as their sum, and the sparse
    kernels read entries one by one (a Bernoulli 1 stored as 0.5 + 0.5, a count split in
    two), so duplicates are summed, on a copy: the user's matrix is never changed."""
    from scipy import sparse

    csr = sparse.csr_matrix(X)  # shares the arrays of a CSR input
    if not csr.has_canonical_format:
        csr = csr.copy()
        csr.sum_duplicates()
    return csr


def encode_labels(y: Any, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique labels and the integer code of every row."""
    if y is None:
        raise ValueError("NaiveBayes requires y to be passed, but the target y is None.")
    if isinstance(y, list | tuple):  # keep NaN a NaN: NumPy would turn ["x", nan] into strings
        if not any(isinstance(v, list | tuple | np.ndarray) for v in y):
            _refuse_mixed_labels(np.array(y, dtype=object))  # NumPy would turn True into 1
        strings = [isinstance(v, str) for v in y]
        # only strings: NumPy's text dtype, as scikit-learn's classes_ have
        y = np.array(y, dtype=object) if any(strings) and not all(strings) else np.asarray(y)
    y = np.asarray(y.to_numpy() if isinstance(y, pd.Series | pd.Index) else y)
    if y.ndim == 2 and y.shape[1] == 1:
        import warnings

        from sklearn.exceptions import DataConversionWarning

        warnings.warn("A column-vector y was passed when a 1d array was expected; it is "
                      "read as y.ravel().", DataConversionWarning, stacklevel=3)
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one label per row), got shape {y.shape}.")
    if y.shape[0] != n_rows:
        raise ValueError(f"X has {n_rows} rows but y has {y.shape[0]} labels.")
    if n_rows == 0:
        raise ValueError("cannot fit on 0 rows.")
    missing = (np.zeros(y.shape, dtype=bool) if y.dtype.kind in "biu"  # never missing
               else np.isnan(y) if y.dtype.kind == "f"
               else pd.isna(pd.Series(y, dtype=object)).to_numpy())
    if missing.any():
        raise ValueError(f"y has {int(missing.sum())} missing labels (first at row "
                         f"{int(np.argmax(missing))}); labels must be observed here "
                         f"(NaiveBayes(missing_label='drop') leaves such rows out).")
    if y.dtype == object:
        _refuse_mixed_labels(y)
        numbers = np.array([isinstance(v, float | np.floating) for v in y])
        if numbers.any():
            floats = np.array([float(v) for v in y[numbers]])
            if not np.all(np.isfinite(floats)):
                raise ValueError("y has non-finite labels.")
            if np.any(floats != np.round(floats)):
                raise ValueError("Unknown label type: continuous. y holds non-integer numbers; "
                                 "Naive Bayes needs class labels.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y has non-finite labels.")
    if y.dtype.kind == "f" and np.any(y != np.round(y)):
        raise ValueError("Unknown label type: continuous. y holds non-integer numbers; "
                         "Naive Bayes needs class labels (classification, not regression).")
    small = _small_int_labels(y)
    if small is not None:
        return small
    try:
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError:
        raise TypeError("labels in y must be mutually comparable so they can be sorted "
                        f"(got types {sorted({type(v).__name__ for v in y})}).") from None
    return classes, codes.reshape(-1).astype(np.int32)


def _refuse_mixed_labels(y: np.ndarray, classes: np.ndarray | None = None) -> None:
    """Booleans and numbers in one label vector (or against the fitted classes) would merge,
    ``True == 1`` in Python: refuse them."""
    y = np.asarray(y)
    if classes is None:
        mixed = bool_and_number(y[~pd.isna(y)]) if y.dtype == object else None
        where = "y"
    else:
        classes = np.asarray(classes)
        kinds = {y.dtype.kind, classes.dtype.kind}
        if "O" not in kinds and ("b" not in kinds or len(kinds) == 1):
            return
        both = np.concatenate([classes.astype(object), y.astype(object)])
        mixed = bool_and_number(both[~pd.isna(both)])
        where = f"y with the classes {classes.tolist()}"
    if mixed is not None:
        raise TypeError(f"{where} mixes booleans and numbers ({_show(mixed)}): True == 1 in "
                        "Python, so they would be one class; give the labels one type "
                        "(e.g. strings).")


def weighed(weight: np.ndarray) -> np.ndarray | None:
    """The indices of the rows whose weight is not 0 where some, not all, are 0; else None.
    A row of weight 0 is no row (an integer weight is that many copies): it adds no level and
    decides no inferred family."""
    kept = np.flatnonzero(weight)
    return kept if 0 < len(kept) < len(weight) else None


def sample_weight_array(sample_weight: Any) -> np.ndarray:
    """``sample_weight`` as float64; anything that is not numbers is an error naming it."""
    try:
        return np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        flat = np.asarray(sample_weight, dtype=object).reshape(-1)
        bad = next((v for v in flat if not _is_number(v)), flat[0] if flat.size else None)
        raise ValueError(f"sample_weight must hold numbers (one non-negative weight per row), "
                         f"got {_show([bad])} of type {type(bad).__name__}.") from None


def _is_number(v) -> bool:
    try:
        float(v)
    except OverflowError:  # an integer beyond float64 is still a number
        return True
    except (TypeError, ValueError):
        return False
    return True


def _small_int_labels(y: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``np.unique(y, return_inverse=True)`` in O(n) for integer labels in a range no wider
    than the rows (a count per value instead of a sort: a few ms per fit), else None."""
    if y.dtype.kind not in "iu" or y.size == 0:
        return None
    lo, hi = int(y.min()), int(y.max())
    if hi - lo > max(y.size, 1024) or max(-lo, hi) > 2**62:
        return None
    offset = y.astype(np.intp) - lo  # in intp: int8 labels minus their minimum may overflow
    present = np.bincount(offset, minlength=hi - lo + 1) > 0
    index = np.cumsum(present, dtype=np.int32) - 1
    classes = (np.flatnonzero(present) + lo).astype(y.dtype)
    return classes, index[offset]


def labels_to_codes(y: Any, classes: np.ndarray) -> np.ndarray:
    """Codes of ``y`` in fitted ``classes``; unknown labels are an error naming the label."""
    if y is None:
        raise ValueError("NaiveBayes requires y to be passed, but the target y is None.")
    y = np.asarray(y.to_numpy() if isinstance(y, pd.Series | pd.Index) else y).reshape(-1)
    _refuse_mixed_labels(y, classes)
    index = pd.Index(classes, dtype=object).get_indexer(pd.Index(y, dtype=object))
    if np.any(index < 0):
        i = int(np.argmax(index < 0))  # tolist: plain Python values, not np.str_
        label, shown = y[i:i + 1].tolist()[0], np.asarray(classes).tolist()
        kinds = (f" (of type {type(label).__name__}; the classes are of type "
                 f"{type(shown[0]).__name__})" if shown and type(label) is not type(shown[0])
                 else "")
        raise ValueError(f"label {label!r} is not one of the classes "
                         f"[{_show(shown, 10)}]{kinds}.")
    return index.astype(np.int32)


def declared_classes(classes: Any, repeats: bool = False) -> np.ndarray:
    """``classes=`` (every label, declared up front) as its sorted labels: a list, tuple,
    array or pandas Series of distinct labels (``repeats``: or not), none missing; anything
    else is refused."""
    if isinstance(classes, str | bytes | set | frozenset | dict) or np.ndim(classes) != 1:
        raise ValueError(f"classes must be a list or 1-D array of labels, got "
                         f"{type(classes).__name__} {_show([classes])}.")
    # a list as encode_labels reads y's (a NaN stays one); an array keeps its dtype
    values = (classes.to_numpy() if isinstance(classes, pd.Series | pd.Index) else
              classes if isinstance(classes, np.ndarray | list | tuple) else list(classes))
    missing = pd.isna(pd.Series(list(values), dtype=object)).to_numpy()
    if missing.any():
        raise ValueError(f"classes has a missing label (None, NaN or pd.NA) at position "
                         f"{int(np.argmax(missing))}; every class needs a label.")
    declared, _ = encode_labels(values, len(values))
    if len(declared) != len(values) and not repeats:
        raise ValueError("classes has repeated labels.")
    return declared


class BlockSpec(NamedTuple):
    family: Family
    columns: tuple  # column labels
    positions: tuple  # column positions in X


def infer_family(table: Table, position: int, infer_counts=False, *,
                 use_kernel: bool = False, warn: bool = True) -> Family:
    """The default family of one column (module docstring).

    ``infer_counts``: ``True`` to infer a column of non-negative integers as Poisson (the rule
    of :func:`count_columns`), or that function's mask for the whole table, already computed.
    ``use_kernel``: other numbers are KernelDensity instead of Gaussian (R naivebayes'
    ``usekernel=TRUE``). ``warn=False`` leaves out the :class:`InferredCategoricalWarning`
    (layout checks of every chunk)."""
    counts = infer_counts if isinstance(infer_counts, np.ndarray) else (
        count_columns(table, (position,)) if infer_counts or table.sparse is not None
        else None)

    def numeric() -> Family:
        if counts is not None and counts[position]:
            return Poisson()
        return KernelDensity() if use_kernel else Gaussian()

    if table.frame is not None:
        dtype = table.layout.dtypes[position]
        _refuse_times(dtype, table.columns[position], table.frame.iloc[:, position])
        if pd.api.types.is_bool_dtype(dtype):
            return Bernoulli()
        if pd.api.types.is_numeric_dtype(dtype):
            return numeric()
        if warn and not isinstance(dtype, pd.CategoricalDtype):  # a pandas category is meant
            _warn_if_mostly_numbers(table.frame.iloc[:, position], table.columns[position])
        return Categorical()
    if table.sparse is not None:  # booleans (Bernoulli, as dense), counts (Poisson), numbers
        return Bernoulli() if table.sparse.dtype.kind == "b" else numeric()
    kind = table.array.dtype.kind
    if kind == "b":
        return Bernoulli()
    if kind in "iuf":
        return numeric()
    if warn:
        _warn_if_mostly_numbers(table.array[:, position], table.columns[position])
    return Categorical()


def _python_objects(dtype) -> bool:
    """NumPy's object dtype (pandas' own checks raise on some Arrow dtypes)."""
    return isinstance(dtype, np.dtype) and dtype.kind == "O"


def _time_kind(dtype, values=None) -> str | None:
    """``"duration"``, ``"calendar"`` (Arrow's month-day-nanosecond intervals), ``"interval"``,
    ``"time"`` (of day), ``"period"`` (Python objects) or ``"instant"`` for a column of dates,
    times, durations, periods or intervals: NumPy, pandas or Arrow dtypes, or, given
    ``values``, an object column of such Python values (as ``pd.read_parquet`` returns Arrow
    dates and times). Else None."""
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        arrow = dtype.pyarrow_dtype
        if pa.types.is_duration(arrow):
            return "duration"
        if pa.types.is_interval(arrow):  # months, days and nanoseconds
            return "calendar"
        if pa.types.is_time(arrow):
            return "time"
        return "instant" if pa.types.is_temporal(arrow) else None
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "duration"
    if isinstance(dtype, pd.IntervalDtype):
        return "interval"
    if pd.api.types.is_datetime64_any_dtype(dtype) or isinstance(dtype, pd.PeriodDtype):
        return "instant"
    if values is not None and _python_objects(dtype):
        kind = pd.api.types.infer_dtype(values, skipna=True)
        return {"timedelta": "duration", "timedelta64": "duration", "interval": "interval",
                "date": "instant", "time": "time", "datetime": "instant",
                "datetime64": "instant", "period": "period"}.get(kind)
    return None


def _refuse_times(dtype, column, values=None) -> None:
    """Refuse to infer a family for dates, times, durations, periods and intervals
    (:func:`_time_kind`): as categories, every instant would be a level of its own that no
    later row shares (a row's identity, not a feature)."""
    kind = _time_kind(dtype, values)
    if kind is None:
        return
    each = f"X[{column!r}].map(lambda v: {{}}, na_action='ignore')"  # missing values stay so
    example = {"duration": f"pd.to_timedelta(X[{column!r}]).dt.total_seconds()",
               "interval": f"pd.IntervalIndex(X[{column!r}]).mid",
               "calendar": each.format("30 * v.months + v.days + v.nanoseconds / 8.64e13"),
               "time": each.format("v.hour + v.minute / 60"),
               "period": each.format("v.day_of_week"),
               "instant": (f"pd.to_datetime(X[{column!r}])" if _python_objects(dtype) else
                           f"X[{column!r}]") + ".dt.day_of_week or the days since a date"}[kind]
    shown = "Python date, time or period" if _python_objects(dtype) else dtype
    # (pandas cannot check an Arrow interval column for any family: numbers first)
    declare = "" if kind == "calendar" else ", or declare its family in features"
    raise ValueError(
        f"column {column!r} holds {shown} values, for which no family is inferred (as "
        f"categories every instant would be its own level, shared by no later row); turn "
        f"it into numbers or categories first, e.g. {example}{declare}.")


def factor_levels(table: Table, positions: tuple) -> list[tuple | None]:
    """Per column at ``positions``: the categories of a pandas ``category`` column, in their
    order and all of them (observed or not), as R keeps a factor's levels; None for any other
    column (whose levels are learned from the values, sorted where they order)."""
    if table.frame is None:
        return [None] * len(positions)
    dtypes = table.layout.dtypes
    return [tuple(dtypes[p].categories.tolist())
            if isinstance(dtypes[p], pd.CategoricalDtype) else None for p in positions]


def count_columns(table: Table, positions=None) -> np.ndarray:
    """Which columns hold counts under ``infer_counts=True``: a numeric (not boolean) column
    whose observed values are all non-negative integers. Integer and float dtypes alike (a
    CSV column of whole numbers with a gap is read as floats); NaN is missing and ignored, so
    a column with no observed value passes. The rule is a "for all": a column that fails it on
    part of the data fails it on the whole (the chunked fits rely on this).

    Returns a boolean mask over all columns; only ``positions`` (default: all) are examined,
    the others are False."""
    n_cols = len(table.columns)
    mask = np.zeros(n_cols, dtype=bool)
    wanted = range(n_cols) if positions is None else positions
    if table.sparse is not None:  # one pass over the stored values (zeros are counts)
        data, cols = table.sparse.data, table.sparse.indices
        with np.errstate(invalid="ignore"):  # as _all_counts: NaN missing, inf not a count
            bad = (~np.isnan(data) & ~((data >= 0) & np.isfinite(data) & (data == np.floor(data)))
                   if data.dtype.kind == "f" else data < 0)
        broken = np.zeros(n_cols, dtype=bool)
        broken[cols[bad]] = True
        for p in wanted:
            mask[p] = not broken[p]
        return mask
    for p in wanted:
        if table.frame is not None:
            dtype = table.layout.dtypes[p]
            if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
                continue
            try:
                values = table.frame.iloc[:, p].to_numpy(dtype=np.float64, na_value=np.nan)
            except (TypeError, ValueError):  # numeric to pandas but not numbers (timedelta)
                continue
        else:
            if table.array.dtype.kind not in "iuf":
                continue
            values = table.array[:, p]
        mask[p] = _all_counts(np.asarray(values))
    return mask


def _all_counts(values: np.ndarray) -> bool:
    """Every observed value a finite non-negative integer (NaN: missing)."""
    if values.dtype.kind in "iu":
        return values.size == 0 or int(values.min()) >= 0
    observed = values[~np.isnan(values)]
    return bool(np.all(np.isfinite(observed)) and np.all(observed >= 0)
                and np.all(observed == np.floor(observed)))


#: values looked at before deciding a text column holds no numbers at all (a cheap exit)
_NUMBER_PROBE = 2000
_FLOAT_MAX = float(np.finfo(np.float64).max)  # a Python float: compared with any int


def _warn_if_mostly_numbers(values: np.ndarray | pd.Series, column) -> None:
    """Warn when most distinct values of a column inferred Categorical read as numbers and
    some do not: most likely a numeric column with a stray text cell. A Series is read in its
    own dtype (a text column is not converted to Python objects whole)."""
    values = values if isinstance(values, pd.Series) else pd.Series(values, dtype=object)
    head = values.iloc[:_NUMBER_PROBE].astype(object)
    if not _numbers(head).any():  # ordinary text: no number in the first values
        return
    try:
        distinct = np.asarray(values.dropna().unique(), dtype=object)
    except TypeError:  # unhashable cells: Categorical reports them with the row
        return
    numeric = _numbers(pd.Series(distinct, dtype=object))
    if numeric.all():
        _warn_if_numbers_as_objects(distinct, column)
        return
    if numeric.sum() <= (~numeric).sum():  # numbers must be the majority
        return
    text = distinct[~numeric]
    warnings.warn(
        f"column {column!r} is modelled as Categorical because {len(text)} of its "
        f"{len(distinct)} distinct values are not numbers ({_show(text)}) while the other "
        f"{int(numeric.sum())} are; if the column is numeric, correct those cells (NaN or an "
        f"empty cell is a missing value). Declaring its family, e.g. "
        f"features={{{column!r}: bnb.Categorical()}}, silences this.",
        InferredCategoricalWarning, stacklevel=7)  # the caller of fit


def _warn_if_numbers_as_objects(distinct: np.ndarray, column) -> None:
    """Warn when every value of a column inferred Categorical is a number held as a Python or
    NumPy number object (not text): what ``df.to_numpy()`` of a frame with a text column makes
    of its numeric columns, which a numeric dtype would model as numbers."""
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_)
               for v in distinct):
        return  # text that reads as numbers ("01", "02"): codes, most likely categorical
    if not all(abs(v) <= _FLOAT_MAX for v in distinct):
        return  # 10**500 has no numeric dtype: a code, categorical
    warnings.warn(
        f"column {column!r} holds only numbers, but in an object (not numeric) dtype, so it is "
        f"modelled as Categorical with one level per distinct value ({len(distinct)} levels); "
        f"give it a numeric dtype (e.g. fit on the DataFrame rather than df.to_numpy(), or "
        f"X.astype(float)) to model it as numbers. Declaring its family, e.g. "
        f"features={{{column!r}: bnb.Categorical()}}, silences this.",
        InferredCategoricalWarning, stacklevel=8)  # the caller of fit


def _numbers(values: pd.Series) -> np.ndarray:
    """Which values are numbers or read as one (booleans and missing values are not)."""
    values = values[~values.isna().to_numpy()] if len(values) else values
    try:
        parsed = pd.to_numeric(values, errors="coerce")
    except (TypeError, ValueError, OverflowError):  # a list or dict in a cell: not a number;
        # an integer beyond float64 (10**400) is one, which pandas cannot convert
        parsed = pd.Series([v if _is_number(v) else np.nan for v in values], dtype=object)
    is_bool = np.array([isinstance(v, bool | np.bool_) for v in values], dtype=bool)
    return parsed.notna().to_numpy() & ~is_bool


def resolve_features(features: Any, table: Table, infer_counts: bool = False, *,
                     use_kernel: bool = False, warn: bool = True) -> list[BlockSpec]:
    """Turn ``features`` (None, one family, or a mapping) into blocks of columns.

    One family instance is one block: a Multinomial mapped to several columns (or given for all)
    models them as one count vector. Inferred columns of the same kind share a block; with
    ``infer_counts`` a column of non-negative integers is inferred Poisson (:func:`count_columns`).
    """
    columns = table.columns
    if isinstance(features, Family):
        specs = [BlockSpec(features, columns, tuple(range(len(columns))))]
    else:  # names to positions only here: one dict for every column of a wide table
        position = {c: i for i, c in enumerate(columns)}
        specs = _resolve_mapping(features, table, columns, position, infer_counts, use_kernel,
                                 warn)
    return specs


def _resolve_mapping(features, table: Table, columns: tuple, position: dict,
                     infer_counts: bool = False, use_kernel: bool = False,
                     warn: bool = True) -> list[BlockSpec]:
    if features is not None and not isinstance(features, Mapping):
        raise TypeError("features must be None, a family such as bnb.Gaussian(), or a mapping "
                        f"{{column: family}}; got {type(features).__name__}.")
    chosen = declared_columns(features, table, position)
    inferred: dict[type, Family] = {}
    groups: dict[int, list[int]] = {}  # id(family) -> positions
    families: dict[int, Family] = {}
    for i, fam in chosen.items():  # mapping order
        families[id(fam)] = fam
        groups.setdefault(id(fam), []).append(i)
    rest = [i for i in range(len(columns)) if i not in chosen]
    # one pass for sparse X, whose count columns are always inferred as counts
    counts = count_columns(table, rest) if infer_counts or table.sparse is not None else False
    for i in rest:  # the rest, in column order
        guess = infer_family(table, i, counts, use_kernel=use_kernel, warn=warn)
        fam = inferred.setdefault(type(guess), guess)
        families[id(fam)] = fam
        groups.setdefault(id(fam), []).append(i)
    return [BlockSpec(families[k], tuple(columns[i] for i in pos), tuple(pos))
            for k, pos in groups.items()]


def declared_columns(features, table: Table, position: dict | None = None) -> dict:
    """``{column position: family}`` of the columns a ``features`` mapping declares (a key
    names a column, a list or tuple of columns, or a frame's column position), in the order
    the mapping lists them, so per-column hyperparameter arrays line up with what the user
    wrote."""
    columns = table.columns
    if position is None:
        position = {c: i for i, c in enumerate(columns)}
    chosen: dict[int, Family] = {}
    for key, fam in (features or {}).items():
        if not isinstance(fam, Family):
            raise TypeError(f"features[{key!r}] must be a family such as bnb.Categorical(), "
                            f"got {fam!r}.")
        keys = list(key) if isinstance(key, list) or (
            isinstance(key, tuple) and key not in position) else [key]
        for k in keys:
            if k in position:
                i = position[k]
            elif isinstance(k, int | np.integer) and 0 <= k < len(columns) and \
                    table.frame is not None and k not in position:
                i = int(k)
            else:
                raise ValueError(f"features names column {k!r}, which is not in X "
                                 f"(columns: {list(columns)[:20]}).")
            if i in chosen:
                raise ValueError(f"column {columns[i]!r} is given two families.")
            chosen[i] = fam
    return chosen
