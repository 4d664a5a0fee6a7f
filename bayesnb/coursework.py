"""Build a classifier from stated probabilities, as coursework states them.

Textbook exercises give the class priors and conditional probability tables, not the data
(Barber's Scottish/English example, seed 000; PlayTennis, seed 003; e1071's Titanic print-out,
seed 004). ``from_tables`` turns those numbers into a ``NaiveBayes`` that predicts with exactly
them, so a student can check each step:

>>> import bayesnb as bnb
>>> clf = bnb.from_tables(
...     {"Yes": 9 / 14, "No": 5 / 14},
...     categorical={"Outlook": {"Yes": {"Sunny": 2 / 9, "Overcast": 4 / 9, "Rain": 3 / 9},
...                              "No": {"Sunny": 3 / 5, "Overcast": 0.0, "Rain": 2 / 5}}})
>>> clf.predict([["Sunny"]])
array(['No'], dtype=object)
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .estimator import NaiveBayes
from .families import REGISTRY
from .fitted import FittedBlock, FittedModel


def from_tables(class_prior: Mapping[Hashable, float], *, columns: Sequence[Hashable] | None = None,
                **tables: Mapping[Hashable, Mapping[Hashable, Any]]) -> NaiveBayes:
    """A fitted ``NaiveBayes`` whose parameters are the given tables.

    Parameters
    ----------
    class_prior : mapping {class: probability}
        p(c); the classes are its keys (sorted, as ``classes_`` always is).
    columns : sequence, optional
        Column order for array input; default: the order the columns are given in the tables
        below. DataFrames are matched by name.
    **tables : mapping {column: {class: entry}}
        One keyword per family, its ``name`` (every family that declares ``stated_tables``),
        with the entry its ``from_tables`` reads:

        * ``categorical``: ``{level: probability}``;
        * ``bernoulli``: P(x = 1 | class);
        * ``gaussian``: ``(mean, sd)``;
        * ``poisson``: the rate; ``exponential``: the rate (1 / mean).

    Returns
    -------
    NaiveBayes
        Predicts with the stated numbers (``method="ml"``: they are used as given). It has no
        data, so it has no posterior and no evidence.

    Examples
    --------
    PlayTennis' Outlook table and a Gaussian temperature per class, checked by hand:

    >>> import pandas as pd, bayesnb as bnb
    >>> from scipy.stats import norm
    >>> clf = bnb.from_tables(
    ...     {"Yes": 9 / 14, "No": 5 / 14},
    ...     categorical={"Outlook": {"Yes": {"Sunny": 2 / 9, "Overcast": 4 / 9, "Rain": 3 / 9},
    ...                              "No": {"Sunny": 3 / 5, "Overcast": 0.0, "Rain": 2 / 5}}},
    ...     gaussian={"Temperature": {"Yes": (21.0, 3.0), "No": (24.0, 4.0)}})
    >>> days = pd.DataFrame({"Outlook": ["Sunny", "Overcast"], "Temperature": [22.0, 30.0]})
    >>> clf.predict_proba(days).round(4)  # No, Yes; p(Overcast | No) = 0 is used as stated
    array([[0.5121, 0.4879],
           [0.    , 1.    ]])
    >>> yes = 9 / 14 * 2 / 9 * norm.pdf(22.0, 21.0, 3.0)  # (mean, sd) = (21, 3)
    >>> no = 5 / 14 * 3 / 5 * norm.pdf(22.0, 24.0, 4.0)
    >>> round(float(no / (no + yes)), 4)
    0.5121
    """
    stated = [name for name, cls in REGISTRY.items() if cls.stated_tables]
    unknown = [kind for kind in tables if kind not in stated]
    if unknown:
        raise TypeError(f"from_tables() got an unexpected keyword argument {unknown[0]!r} "
                        f"(tables can be stated for {', '.join(stated)}).")
    if isinstance(class_prior, pd.Series):  # indexed by class, as NaiveBayes takes it
        if class_prior.index.has_duplicates:
            raise ValueError(f"from_tables: class_prior names class "
                             f"{class_prior.index[class_prior.index.duplicated()][0]!r} more "
                             f"than once.")
        class_prior = dict(class_prior.items())
    if not isinstance(class_prior, Mapping):
        raise TypeError(f"from_tables: class_prior must map each class to its probability "
                        f"(a dict, or a pandas Series indexed by class), got "
                        f"{type(class_prior).__name__}: the classes are its keys.")
    classes = np.array(sorted(class_prior), dtype=object)
    prior = np.array([_finite(class_prior[c], f"class_prior, class {c!r}") for c in classes])
    if np.any(prior < 0) or not np.isclose(prior.sum(), 1.0):
        raise ValueError(f"class_prior must be non-negative and sum to 1 (to within 1e-5), "
                         f"got a sum of {prior.sum():.10g}; a rounded prior must be normalised "
                         f"first (each divided by their sum).")
    given = {kind: spec for kind, spec in tables.items() if spec}
    order = list(columns) if columns is not None else [
        col for spec in given.values() for col in spec]
    if len(set(order)) != len(order):
        raise ValueError("a column appears in more than one table.")
    position = {c: i for i, c in enumerate(order)}
    known = set(class_prior)

    blocks, params = [], []
    for kind, spec in given.items():
        family_cls = REGISTRY[kind]
        family = family_cls()
        for col, per_class in spec.items():
            absent = [c for c in classes if c not in per_class]
            if absent:
                raise ValueError(f"column {col!r}: no entry for class {absent[0]!r}.")
            unknown = [c for c in per_class if c not in known]
            if unknown:  # a misspelt class would be read as no class at all
                raise ValueError(f"column {col!r}: an entry for {unknown[0]!r}, which is not a "
                                 f"class of class_prior ({', '.join(map(repr, classes))}).")
            if col not in position:
                raise ValueError(f"column {col!r} is not in columns={order}.")
            for c in classes:
                _check_cells(family, kind, col, c, per_class[c])
        schema = family.stated_schema(spec, classes)
        blocks.append(FittedBlock(family, schema, tuple(position[c] for c in schema.columns),
                                  None, None))
        params.append(family_cls.from_tables(spec, schema, classes))

    missing = [c for c in order if all(c not in spec for spec in given.values())]
    if missing:
        raise ValueError(f"column {missing[0]!r} has no table.")
    clf = NaiveBayes(features={c: b.family for b in blocks for c in b.schema.columns},
                     method="ml", class_prior=dict(zip(classes, prior, strict=True)))
    with np.errstate(divide="ignore"):
        log_prior = np.log(prior)
    # the tables name their columns: a DataFrame is matched by name, whatever the labels' type
    return clf._install(FittedModel(classes, np.zeros(len(classes)), tuple(order), True,
                                    tuple(blocks), stated=(log_prior, tuple(params))))


def _finite(value, where: str) -> float:
    """``value`` as a float; NaN, infinities and non-numbers are errors naming ``where``
    (a NaN compares false with every bound, so the range checks downstream would pass it)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"from_tables: {where} is {value!r}, not a number.") from None
    if not np.isfinite(number):
        raise ValueError(f"from_tables: {where} is {number}; every stated number must be "
                         "finite.")
    return number


def _check_cells(family, kind: str, col, klass, cell) -> None:
    """Every number of one class's entry in one table is finite (the family names them)."""
    where = f"{kind} table, column {col!r}, class {klass!r}"
    try:
        numbers = family.stated_numbers(cell)
    except ValueError as err:
        raise ValueError(f"from_tables: {where} {err}.") from None
    for part, value in numbers:
        _finite(value, f"{where}, {part}")
