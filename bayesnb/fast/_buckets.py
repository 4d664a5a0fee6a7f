"""Class counts padded to a few buckets, so that a new model compiles no kernel again.

JAX compiles a kernel once per static signature, and the class count is part of it: the
statistics kernel's one-hot and the score kernel's class prior and tables are shaped by it.
Without padding every new class count compiles both kernels again (about 2 s a model on a
2-core CPU: ``benchmarks/first_answer.py`` (c) fits 30 models of 2..31 classes). So the kernels
run over :func:`class_bucket` classes, and this module is the one place that pads and cuts:

* statistics: the one-hot covers the bucket, the padded classes get no row (every code is a
  real class) and their statistics are cut on the host before anything reads them
  (:func:`real_stats`);
* scores: each padded class reads a copy of class 0's table (finite scores, no NaN, and any
  bound taken over the classes, a maximum, is unchanged) and a class log prior of ``-inf``,
  so its probability is exactly 0: the row normaliser, the rounding bounds weighed by the class
  probabilities (``_kernels.class_weighted``) and the "every class impossible" check read the
  real classes only. The host cuts the scores back to the real classes (:func:`real_scores`).

A form declares where its tables and statistics index the classes (``FastForm.class_axes``)
and opts in with ``FastForm.class_buckets``; a family without such a form (the reference form,
Categorical's host counting) keeps kernels compiled for its exact class count.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: up to this many classes the buckets are powers of two and three quarters of them (two steps
#: per octave: ``_kernels.Labels.DOT_CLASSES``, the one-hot products' range, whose cost grows
#: with the classes); beyond, eight steps per octave
HALF_OCTAVE_CLASSES = 64


def class_bucket(k: int) -> int:
    """The class count the kernels are compiled for, given ``k`` real classes.

    ``k`` itself up to 2 (binary models pay no padding), 4 for 3 and 4, then the next of
    6, 8, 12, 16, 24, 32, 48, 64 (two steps per octave: at most half of ``k`` added, and 8
    buckets for 2..31 classes), then eight steps per octave (at most 1/8 of the octave's top
    added: a model of thousands of classes pays little memory or time for the padding)."""
    if k <= 2:
        return k
    top = 1 << (k - 1).bit_length()  # the next power of two
    if k <= HALF_OCTAVE_CLASSES:
        return top * 3 // 4 if top >= 8 and k <= top * 3 // 4 else top
    step = top >> 3
    return -(-k // step) * step


def kernel_classes(forms, k: int) -> int:
    """The class count kernels over the families of ``forms`` (their ``FastForm`` s) run
    with: :func:`class_bucket` when every form declares its layouts (``class_buckets``), else
    ``k``."""
    if all(form.class_buckets for form in forms):
        return class_bucket(k)
    return k


def leading(tree: NamedTuple, **axes) -> NamedTuple:
    """``tree``'s class axes (``FastForm.class_axes``): ``axes`` by field name (an int, or
    None for a class-free field), axis 0 for any other field of at least one dimension and
    None for a scalar (which indexes nothing)."""
    return type(tree)(*(axes[name] if name in axes else (0 if np.ndim(value) else None)
                        for name, value in zip(tree._fields, tree, strict=True)))


def _take(tree, axes, index: np.ndarray):
    return type(tree)(*(value if axis is None else np.take(np.asarray(value), index, axis=axis)
                        for value, axis in zip(tree, axes, strict=True)))


def pad_table(form, table, k: int, to: int):
    """A kernel ``table`` of ``k`` classes as ``to``: the padded classes copy class 0 (see the
    module docstring); the same table when nothing is padded."""
    if to == k:
        return table
    index = np.concatenate([np.arange(k), np.zeros(to - k, dtype=np.intp)])
    return _take(table, form.class_axes(table), index)


def pad_prior(class_log_prior, k: int, to: int) -> np.ndarray:
    """The class log prior with ``-inf`` for the padded classes: their probability is 0."""
    prior = np.asarray(class_log_prior, dtype=np.float64)
    return prior if to == k else np.concatenate([prior, np.full(to - k, -np.inf)])


def real_stats(form, stats, k: int, padded: int):
    """A chunk's statistics over ``padded`` classes cut to the ``k`` real ones."""
    if padded == k:
        return stats
    return _take(stats, form.class_axes(stats), np.arange(k))


def real_scores(scores: np.ndarray, k: int) -> np.ndarray:
    """``(m, K)`` scores of a padded kernel cut back to the ``k`` real classes (a view)."""
    return scores[:, :k]
