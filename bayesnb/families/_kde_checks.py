"""KernelDensity's checks: its settings, a stored sample, and the scoring table's undefined
bandwidths (refused, naming the column, the class and R's reason) and cross-validated
bandwidths at an end of R's search range (warned, as R warns)."""

from __future__ import annotations

import warnings

import numpy as np

from ._bandwidth import RULES, UndefinedBandwidth, bandwidth_of, search_end_warning


def positive(value, n: int, name: str, columns) -> np.ndarray:
    """``value`` as one finite positive float per column, or a ``ValueError`` naming it."""
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"KernelDensity: {name} must be a positive number, got "
                         f"{value!r}.") from None
    a = np.full(n, float(a)) if a.ndim == 0 else a
    if a.shape != (n,):
        raise ValueError(f"KernelDensity: {name} must be a scalar or have shape ({n},) (one "
                         f"value per column), got shape {a.shape}.")
    bad = ~(np.isfinite(a) & (a > 0))
    if bad.any():
        j = int(np.argmax(bad))
        raise ValueError(f"column {columns[j]!r}: KernelDensity: {name} must be finite and "
                         f"positive, got {a[j]!r}.")
    return a


def check_stats(stats: tuple, n_columns: int, n_classes: int) -> None:
    """Refuse an inconsistent sample (e.g. from a damaged model file)."""
    value, column, klass, weight = (np.asarray(a) for a in stats)
    m = value.shape
    if any(np.shape(a) != m or np.ndim(a) != 1 for a in (column, klass, weight)):
        raise ValueError("KernelDensity statistics: value, column, klass and weight must be "
                         "1-D arrays of one length.")
    if column.size and (column.min() < 0 or column.max() >= n_columns or klass.min() < 0
                        or klass.max() >= n_classes):
        raise ValueError("KernelDensity statistics: a column or class index is out of range.")
    if not (np.all(np.isfinite(value)) and np.all(np.isfinite(weight)) and np.all(weight > 0)):
        raise ValueError("KernelDensity statistics: values and weights must be finite, "
                         "weights positive.")


def check_table(setting, prior, table, schema, classes, group) -> None:
    """Refuse a class and column with no density; warn where R's ``bw.ucv``/``bw.bcv`` warn.
    ``setting`` is the ``bandwidth`` as given, ``group(table, j, k, K)`` a class's sample."""
    rules, bad = np.asarray(prior.rule), ~(table.bandwidth > 0)
    for k, j in np.argwhere(bad | np.isin(rules, (RULES["ucv"], RULES["bcv"]))[None, :]):
        v, w = group(table, j, k, len(classes))
        n, rule, h = table.count[k, j], setting, table.bandwidth[k, j]
        where = f"column {schema.columns[j]!r}, class {_label(classes[k])!r}"
        if not bad[k, j]:  # R's warning for a cross-validated bandwidth at a search end
            note = search_end_warning(v, w, int(rules[j]), h / prior.adjust[j])
            if note:
                warnings.warn(f"{where}: bandwidth {rule!r}: {note}.", stacklevel=2)
            continue
        try:
            reason = ("no observed value in this class" if n == 0 else
                      f"bandwidth {rule!r} needs a total weight above 1 (R: at least 2 "
                      f"values), got {n:g}" if n <= 1 else
                      f"bandwidth {rule!r} is 0 (no spread in the class's values: IQR "
                      f"or sd 0); use "
                      f"'nrd0' (which falls back as R's does) or a number"
                      if bandwidth_of(v, w, int(rules[j])) == 0 else "undefined")
        except UndefinedBandwidth as err:
            reason = f"bandwidth {rule!r}: {err}"
        raise ValueError(f"{where}: {reason}, so the kernel density is undefined. "
                         f"KernelDensity has no prior to fill the gap; give more data or a "
                         f"numeric bandwidth.")


def _label(c):
    return c.item() if isinstance(c, np.generic) else c
