r"""Show the working of one prediction: the factors naive Bayes multiplies, and the weight of
evidence of each column.

For a row :math:`x` and each class :math:`k` the prediction is

.. math::

    p(k \mid x) = \frac{p(k) \prod_j p(x_j \mid k)}{\sum_{k'} p(k') \prod_j p(x_j \mid k')},

and :func:`explain` lists its factors: ``"prior"`` :math:`p(k)`, one entry per column
:math:`p(x_j \mid k)` (a probability for a discrete column, a density for a continuous one),
``"joint"`` :math:`p(x, k)` (their product) and ``"posterior"`` :math:`p(k \mid x)`. The method
decides the numbers: the plug-in tables of ``ml``/``map``/``mean``, the stated tables of
:func:`bayesnb.from_tables`, and under ``bayes`` the exact predictives (the label's
:math:`(n_k+\gamma_k)/(N+\Gamma_0)`, each column's posterior predictive). A Multinomial block is
one random vector (a document's word counts), so it is one entry, keyed by the *tuple* of its
columns (as in :meth:`~bayesnb.NaiveBayes.conditional_tables`; select it with
``frame.loc[[key]]``); every other column is its own entry, keyed by its name. A missing value
drops out of the likelihood: its factor is exactly 1 (0 in log space), and the frame's
``attrs["missing"]`` lists those columns.

The weight of evidence of column :math:`j` for class :math:`a` against :math:`b` (I. J. Good) is
:math:`\log p(x_j \mid a) - \log p(x_j \mid b)`; the prior log odds plus the weights give the
posterior log odds :math:`\log p(a \mid x) - \log p(b \mid x)`.

Each factor is computed by the method's own scorer on copies of the row in which every other
column is missing, so the explanation is the prediction's arithmetic, not a second
implementation of it. ``method="mcmc"`` averages :math:`p(x, k \mid \theta)` over draws, which does
not factorise by column; it is refused (refit with ``method="bayes"``, the exact counterpart,
for an explanation).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import pandas as pd

from ._labels import plain
from .families._levels import _show
from .families.categorical import UnseenCategoryWarning
from .fitted import FittedModel

UNITS = {"nats": 1.0, "bits": 1.0 / np.log(2.0), "decibans": 10.0 / np.log(10.0)}


def entries(model: FittedModel) -> list[tuple[object, tuple]]:
    """``(key, columns)`` per factor, in the data's column order (a block's first column for
    a block): a Multinomial block as one entry keyed by the tuple of its columns, every other
    column alone, keyed by its name."""
    out = []
    for b in model.blocks:
        columns = tuple(b.schema.columns)
        if b.family.joint_columns:
            out.append((min(b.positions), columns, columns))
        else:
            out.extend((p, c, (c,)) for p, c in zip(b.positions, columns, strict=True))
    return [(key, columns) for _, key, columns in sorted(out, key=lambda e: e[0])]


def _dict_row(x, columns: list, named: bool) -> pd.Series:
    """One row given as ``{column: value}`` as a Series; a dict of several values per column
    (a dict of lists, several rows) is refused with what to pass instead."""
    several = [k for k, v in x.items() if not isinstance(v, str) and np.ndim(v) > 0]
    if several:
        raise ValueError(f"explain takes one row; x is a dict whose column {several[0]!r} "
                         f"holds {np.size(x[several[0]])} values. Pass one value per column, "
                         f"e.g. {{{columns[0]!r}: value, ...}}, or a DataFrame and one of "
                         f"its rows: X.iloc[i].")
    if not named:  # a model fitted on an array knows its columns by position only
        if set(x) != set(range(len(columns))):
            raise ValueError(f"this model was fitted on an array with {len(columns)} unnamed "
                             f"columns: give x as {{0: value, 1: value, ...}} (positions) or "
                             f"a list of {len(columns)} values, got keys {list(x)[:5]}.")
        return pd.Series([x[j] for j in range(len(columns))], dtype=object)
    return pd.Series(dict(x), dtype=object)


def one_row(model: FittedModel, x) -> pd.DataFrame:
    """``x`` (a Series, a dict ``{column: value}``, a one-row DataFrame, a 1-D sequence, a
    one-row 2-D array or sparse matrix) as a one-row DataFrame with the model's columns. A
    model fitted on named columns takes those (any order) as ``predict_proba`` does: a column
    it lacks is missing (warned about), an unknown column is refused."""
    from collections.abc import Mapping

    from scipy import sparse

    columns = list(model.columns)
    if isinstance(x, Mapping):
        x = _dict_row(x, columns, model.named)
    if isinstance(x, pd.DataFrame):
        if len(x) != 1:
            raise ValueError(f"explain takes one row, got {len(x)}; pass x.iloc[[i]].")
        frame = x.reset_index(drop=True)
        if model.named:
            return _in_order(_absent_added(model, frame), columns)
        return pd.DataFrame(frame.to_numpy(dtype=object), columns=columns) \
            if frame.shape[1] == len(columns) else _wrong_width(frame.shape[1], len(columns))
    if isinstance(x, pd.Series):
        if model.named:
            row = pd.DataFrame([x.to_numpy(dtype=object)], columns=x.index, dtype=object)
            return _in_order(_absent_added(model, row), columns)
        values = x.to_numpy(dtype=object)
    elif sparse.issparse(x):
        if x.ndim == 2 and x.shape[0] != 1:
            raise ValueError(f"explain takes one row, got {x.shape[0]}.")
        values = np.asarray(x.toarray()).reshape(-1)  # a 1-D sparse array is one row too
        _check_sparse_nan(model, values)
    else:
        values = np.asarray(x, dtype=object)
        if values.ndim == 2:
            if values.shape[0] != 1:
                raise ValueError(f"explain takes one row, got {values.shape[0]}.")
            values = values[0]
        if values.ndim != 1:
            raise ValueError(f"explain takes one row (1-D), got shape {values.shape}.")
    if len(values) != len(columns):
        _wrong_width(len(values), len(columns))
    return pd.DataFrame([list(values)], columns=columns)


def _check_sparse_nan(model: FittedModel, values: np.ndarray) -> None:
    """Refuse a sparse row's stored NaN where predict refuses it: in a column of a family
    that reads sparse input sparse (Multinomial, Bernoulli, Poisson); elsewhere it is a
    missing value (families.md)."""
    from .fast import form_of

    for block in model.blocks:
        if form_of(block.family).supports_sparse and np.isnan(
                values[list(block.positions)].astype(float)).any():
            raise ValueError("missing values (NaN) are not supported in sparse input for "
                             f"{type(block.family).__name__} columns; pass a dense row or a "
                             "Series for missing values.")


def _in_order(frame: pd.DataFrame, columns: list) -> pd.DataFrame:
    """``frame``'s columns in the model's order, by position: ``frame[columns]`` (and
    ``.loc``) read columns named ``[True, False]`` as a boolean mask."""
    return frame.iloc[:, frame.columns.get_indexer(pd.Index(columns, dtype=object))]


def _absent_added(model: FittedModel, row: pd.DataFrame) -> pd.DataFrame:
    """``row`` with the fitted columns it lacks as missing values (an
    ``AbsentColumnWarning``), as ``predict_proba`` reads it; an unknown column is refused."""
    from ._blocks import with_absent_columns
    from ._data import as_table

    row = with_absent_columns(model, as_table(row)).frame
    _check_columns(model, row.columns)
    return row


def _check_columns(model: FittedModel, names) -> None:
    """Refuse a row whose named columns are not the model's, with predict_proba's check and
    message (``block_positions``): a column the model does not know would be silently left
    out of the explanation."""
    from ._blocks import block_positions
    from ._data import as_table

    block_positions(model, as_table(pd.DataFrame(columns=pd.Index(list(names), dtype=object))))


def _wrong_width(got: int, want: int):
    raise ValueError(f"x has {got} values but the model has {want} columns.")


#: cells of masked rows scored at once by :func:`explain_row` (a row per entry, each as wide
#: as the model: 100,000 columns in one grid needed 75 GiB)
MASKED_CELLS = 1 << 22


def masked_rows(row: pd.DataFrame, keys: list, with_row: bool,
                numeric: bool = False) -> pd.DataFrame:
    """The row itself (``with_row``), then one copy per entry of ``keys`` (``entries``)
    with every other column missing (None; NaN in a ``numeric`` grid, which the families
    read five times faster than Python objects)."""
    dtype = np.float64 if numeric else object
    values = row.iloc[0].to_numpy(dtype=dtype)
    positions: dict = {}
    for j, c in enumerate(row.columns):
        positions.setdefault(c, []).append(j)
    # built as one array: a ``.loc`` assignment per entry was O(columns^2) (12 s at 3,000)
    grid = np.full((len(keys) + with_row, len(values)), np.nan if numeric else None,
                   dtype=dtype)
    if with_row:
        grid[0] = values
    for i, (_, cols) in enumerate(keys, start=int(with_row)):
        kept = [j for c in set(cols) for j in positions.get(c, ())]
        grid[i, kept] = values[kept]
    return pd.DataFrame(grid, columns=row.columns, dtype=dtype)


def zeroing_columns(model: FittedModel, scorer, X, i: int) -> str:
    """For the refusal of row ``i`` of ``X``, where every class has probability zero: the
    columns that zero them, each scored alone (the other columns missing; in a block of
    joint columns, such as the Multinomial's, each nonzero count alone, the block's other
    counts 0). Empty where the row cannot be scored so (draws, model averaging)."""
    from scipy import sparse

    from .scoring import TableScorer

    if not isinstance(scorer, TableScorer) or len(model.columns) ** 2 > MASKED_CELLS:
        return ""
    x = X[[i]] if sparse.issparse(X) else X.iloc[[i]] if isinstance(X, pd.DataFrame) else \
        np.asarray(X, dtype=object)[i]
    row = one_row(model, x)
    values = row.iloc[0]
    tried, grid = [], []
    for block in model.blocks:
        for c in block.schema.columns:
            cells = dict.fromkeys(block.schema.columns, 0) if block.family.joint_columns else {}
            if block.family.joint_columns and (_is_missing(values[c]) or values[c] == 0):
                continue
            tried.append(c)
            grid.append({**cells, c: values[c]})
    frame = pd.DataFrame([[g.get(c) for c in row.columns] for g in grid], columns=row.columns,
                         dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnseenCategoryWarning)
        zero = np.isneginf(np.asarray(scorer.scores(frame, "joint")[0], dtype=np.float64))
    everywhere = [c for c, z in zip(tried, zero, strict=True) if z.all()]
    if everywhere:
        shown = ", ".join(f"column {c!r} (value {plain(values[c])!r})" for c in everywhere[:3])
        return f": {shown} {'has' if len(everywhere) == 1 else 'have'} probability zero " \
               f"in every class"
    per_class = [f"column {c!r} (value {plain(values[c])!r}) zeroes class {plain(k)!r}"
                 for j, k in enumerate(model.classes) if zero[:, j].any()
                 for c in [tried[int(np.argmax(zero[:, j]))]]]
    return ": " + "; ".join(per_class[:5]) if per_class else ""


def refuse_draws():
    raise ValueError("method='mcmc' averages p(x, class | theta) over draws, which does not "
                     "factor column by column, so it has no per-column explanation; explain "
                     "the exact counterpart instead: clf.set_params(method='bayes') (same "
                     "fit), or 'mean' for the posterior-mean tables.")


def explain_row(model: FittedModel, scorer, x, *, log: bool = False) -> pd.DataFrame:
    """The factors of the prediction of one row (see the module docstring): a DataFrame with
    the classes as columns and ``"prior"``, one entry per column, ``"joint"`` and
    ``"posterior"`` as index; probabilities (densities for continuous columns), or their
    natural logs with ``log=True``."""
    from .averaging import AveragedScorer
    from .scoring import TableScorer

    if not isinstance(scorer, TableScorer | AveragedScorer):  # model averaging: per column,
        refuse_draws()  # the mixture of the class-specific and shared factors
    row = one_row(model, x)
    every = entries(model)
    step = max(1, MASKED_CELLS // max(1, row.shape[1]))  # rows of masked copies at a time
    # numbers in families of numbers: a float grid (a level is matched as the user wrote it)
    numeric = not any(b.family.learns_levels() for b in model.blocks) and all(
        isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_)
        for v in row.iloc[0])

    def scores(keys, with_row):
        return np.asarray(scorer.scores(masked_rows(row, keys, with_row, numeric),
                                        "joint")[0], dtype=np.float64)

    whole = scores([], True)  # warns of the row's unseen values, in its one row
    with warnings.catch_warnings():  # the masked copies would count them again
        warnings.simplefilter("ignore", UnseenCategoryWarning)
        joint = np.vstack([whole, *(scores(every[i:i + step], False)
                                    for i in range(0, len(every), step))])
    log_prior = np.asarray(scorer.log_prior, dtype=np.float64)
    keys = [k for k, _ in every]
    with np.errstate(invalid="ignore"):
        factors = joint[1:] - log_prior  # -inf - -inf (a class of prior 0) is undefined
    top = np.max(joint[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        posterior = joint[0] - (np.log(np.sum(np.exp(joint[0] - top))) + top) \
            if np.isfinite(top) else np.full_like(joint[0], np.nan)
    values = np.vstack([log_prior, factors, joint[0], posterior])
    index = pd.Index(["prior", *keys, "joint", "posterior"], dtype=object, name="factor")
    out = pd.DataFrame(values if log else np.exp(values), index=index,
                       columns=pd.Index(model.classes, name="class"))
    out.attrs["log"] = bool(log)
    out.attrs["missing"] = [c for c in row.columns if _is_missing(row.iloc[0][c])]
    return out


def _is_missing(value) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def weight_of_evidence(model: FittedModel, scorer, x, a, b, *, unit: str = "nats") -> pd.Series:
    """Per column, log p(x_j | a) - log p(x_j | b), with ``"prior"`` the prior log odds
    log p(a) - log p(b) first and ``"posterior"`` the posterior log odds log p(a | x) -
    log p(b | x) (their sum) last; in ``unit`` "nats" (natural log), "bits" or "decibans"
    (10 log10, Good's unit)."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {sorted(UNITS)}, got {unit!r}.")
    classes = list(model.classes)
    for label in (a, b):
        if label not in classes:
            raise ValueError(f"{label!r} is not a class of this model ({_show(classes, 10)}).")
    logs = explain_row(model, scorer, x, log=True)
    col_a, col_b = logs.columns[classes.index(a)], logs.columns[classes.index(b)]
    with np.errstate(invalid="ignore"):
        woe = (logs[col_a] - logs[col_b]).drop("joint") * UNITS[unit]
    woe.name = f"weight of evidence for {plain(a)!r} against {plain(b)!r} ({unit})"
    return woe


def report(clf, X, *, log: bool = False, versus=None) -> str:
    """The text ``bayesnb explain`` prints: per row of ``X``, the explanation and (with
    ``versus=(a, b)``) the weights of evidence."""
    rows = X if isinstance(X, pd.DataFrame) else pd.DataFrame(X)
    parts = []
    for i in range(len(rows)):
        row = rows.iloc[[i]]
        title = f"row {i} (method={clf.method!r}, {'log ' if log else ''}factors by class)"
        frame = clf.explain(row, log=log)
        parts += [title, frame.to_string()]
        if frame.attrs["missing"]:
            parts.append(f"missing (factor 1): {', '.join(map(str, frame.attrs['missing']))}")
        if versus is not None:
            a, b = _labels(clf.classes_, versus)
            parts += ["", clf.weight_of_evidence(row, a, b).to_frame().to_string()]
        parts.append("")
    return "\n".join(parts)


def _labels(classes, versus) -> tuple:
    """Class labels from ``versus`` (strings from the command line matched to the labels)."""
    out = []
    for v in versus:
        match = [c for c in classes if c == v or str(c) == str(v)]
        if not match:
            raise ValueError(f"{v!r} is not a class of this model "
                             f"({_show(list(classes), 10)}).")
        out.append(match[0])
    return tuple(out)
