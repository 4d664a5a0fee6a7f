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

from collections.abc import Mapping

import numpy as np

from .estimator import NaiveBayes
from .families import Bernoulli, Categorical, Gaussian, Poisson, Schema
from .fitted import FittedBlock, FittedModel

_KINDS = (("categorical", Categorical), ("bernoulli", Bernoulli), ("gaussian", Gaussian),
          ("poisson", Poisson))


def from_tables(class_prior: Mapping, *, categorical: Mapping | None = None,
                bernoulli: Mapping | None = None, gaussian: Mapping | None = None,
                poisson: Mapping | None = None, columns=None) -> NaiveBayes:
    """A fitted ``NaiveBayes`` whose parameters are the given tables.

    Parameters
    ----------
    class_prior : mapping {class: probability}
        p(c); the classes are its keys (sorted, as ``classes_`` always is).
    categorical : mapping {column: {class: {level: probability}}}, optional
    bernoulli : mapping {column: {class: P(x = 1 | class)}}, optional
    gaussian : mapping {column: {class: (mean, sd)}}, optional
    poisson : mapping {column: {class: rate}}, optional
    columns : sequence, optional
        Column order for array input; default: the order the columns are given above
        (categorical, bernoulli, gaussian, poisson). DataFrames are matched by name.

    Returns
    -------
    NaiveBayes
        Predicts with the stated numbers (``method="ml"``: they are used as given). It has no
        data, so it has no posterior and no evidence.
    """
    classes = np.array(sorted(class_prior), dtype=object)
    prior = np.array([float(class_prior[c]) for c in classes])
    if np.any(prior < 0) or not np.isclose(prior.sum(), 1.0):
        raise ValueError(f"class_prior must be non-negative and sum to 1, got {prior.sum()}.")
    given = {"categorical": categorical, "bernoulli": bernoulli, "gaussian": gaussian,
             "poisson": poisson}
    order = list(columns) if columns is not None else [
        col for kind, _ in _KINDS for col in (given[kind] or {})]
    if len(set(order)) != len(order):
        raise ValueError("a column appears in more than one table.")
    position = {c: i for i, c in enumerate(order)}

    blocks, tables = [], []
    for kind, family_cls in _KINDS:
        spec = given[kind]
        if not spec:
            continue
        for col, per_class in spec.items():
            absent = [c for c in classes if c not in per_class]
            if absent:
                raise ValueError(f"column {col!r}: no entry for class {absent[0]!r}.")
            if col not in position:
                raise ValueError(f"column {col!r} is not in columns={order}.")
        cols = tuple(spec)
        levels = ()
        if kind == "categorical":
            levels = tuple(tuple(dict.fromkeys(v for c in classes for v in spec[col][c]))
                           for col in cols)
        schema = Schema(columns=cols, levels=levels)
        blocks.append(FittedBlock(family_cls(), schema, tuple(position[c] for c in cols),
                                  None, None))
        tables.append(family_cls.from_tables(spec, schema, classes))

    missing = [c for c in order if all(c not in (given[k] or {}) for k, _ in _KINDS)]
    if missing:
        raise ValueError(f"column {missing[0]!r} has no table.")
    clf = NaiveBayes(features={c: b.family for b in blocks for c in b.schema.columns},
                     method="ml", class_prior=dict(zip(classes, prior, strict=True)))
    with np.errstate(divide="ignore"):
        log_prior = np.log(prior)
    # the tables name their columns: a DataFrame is matched by name, whatever the labels' type
    return clf._install(FittedModel(classes, np.zeros(len(classes)), tuple(order), True,
                                    tuple(blocks), stated=(log_prior, tuple(tables))))
