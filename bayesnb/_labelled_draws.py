"""Posterior draws that remember what their axes are.

Draws are ``{site: array (chains, draws, ...)}``, and a site's array is read by position: its
class axis in the order of ``classes_``, a block's column axis in the block's column order, a
Categorical's level axis in the order of its levels. Two models can share every site name and
shape and still differ in those orders (the same labels sorted otherwise, a pandas category's
own order, the columns of a block given in another order), and draws of one read by the other
would be silently wrong. The draws bayesnb hands out (``sample_posterior``, ``draws_``) are
:class:`Draws`: a ``dict`` that also holds the labels it was drawn for, checked by
:func:`check_draw_labels` wherever draws are read (``predict_uncertainty``, ``to_arviz``).
A plain mapping (``dict(draws)``, the user's own draws) is read by position, as documented.
"""

from __future__ import annotations

from typing import NamedTuple

import jax

from ._labels import plain


class DrawLabels(NamedTuple):
    """The labels of a model's draw axes: its classes, and per block (by site prefix) its
    columns and, for Categorical columns, each column's levels."""

    classes: tuple
    blocks: tuple  # ((site prefix, columns, levels), ...): hashable, as pytree metadata is


class Draws(dict):
    """Posterior draws ``{site: array (chains, draws, ...)}`` with ``labels``
    (:class:`DrawLabels`), the classes, columns and levels their axes were drawn for.

    Examples
    --------
    >>> import bayesnb as bnb
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> draws = bnb.NaiveBayes().fit(days, play).sample_posterior(10)
    >>> isinstance(draws, dict), draws.labels.classes
    (True, ('No', 'Yes'))
    >>> prefix, columns, levels = draws.labels.blocks[0]
    >>> prefix, columns[0], levels[0]  # the levels of Outlook, in the order drawn
    ('categorical', 'Outlook', ('Overcast', 'Rain', 'Sunny'))"""

    def __init__(self, sites, labels: DrawLabels):
        super().__init__(sites)
        self.labels = labels


def _flatten(draws: Draws):
    sites = sorted(draws)  # as JAX flattens a dict
    return [draws[site] for site in sites], (tuple(sites), draws.labels)


def _unflatten(meta, arrays) -> Draws:
    sites, labels = meta
    return Draws(zip(sites, arrays, strict=True), labels)


# a pytree node like a dict, its labels kept: tree_map over draws gives labelled draws
jax.tree_util.register_pytree_node(Draws, _flatten, _unflatten)


def draw_labels(model) -> DrawLabels:
    """The :class:`DrawLabels` of a fitted model (``FittedModel``)."""
    from .model import block_sites

    blocks = tuple((prefix, _plain(b.schema.columns), tuple(_plain(lv) for lv in b.schema.levels))
                   for prefix, b in zip(block_sites(model.blocks), model.blocks, strict=True))
    return DrawLabels(_plain(model.classes), blocks)


def labelled(model, draws: dict) -> Draws:
    """``draws`` of ``model`` as :class:`Draws` (the arrays themselves, not copies)."""
    return Draws(draws, draw_labels(model))


def check_draw_labels(model, draws) -> None:
    """Refuse :class:`Draws` drawn for other classes, columns or levels than ``model``'s (or
    the same ones in another order), naming the first difference; a plain mapping passes
    (it is read by position)."""
    if not isinstance(draws, Draws):
        return
    mine, theirs = draw_labels(model), draws.labels
    how = ("; draws are read by position, so these would be misread (pass dict(draws) to "
           "read them by position regardless).")
    if theirs.classes != mine.classes:
        raise ValueError(f"draws were drawn for the classes {list(theirs.classes)}, in that "
                         f"order; this model's classes_ are {list(mine.classes)}{how}")
    drawn = {prefix: (columns, levels) for prefix, columns, levels in theirs.blocks}
    for prefix, columns, levels in mine.blocks:
        other = drawn.get(prefix)
        if other is None:
            continue  # a site this model reads and they lack is refused by its name
        if other[0] != columns:
            raise ValueError(f"draws were drawn for block {prefix!r} with the columns "
                             f"{list(other[0])}; this model's block {prefix!r} has "
                             f"{list(columns)}{how}")
        for column, got, want in zip(columns, other[1], levels, strict=False):
            if got != want:
                raise ValueError(f"draws were drawn for column {column!r} with the levels "
                                 f"{list(got)}; this model's levels of {column!r} are "
                                 f"{list(want)}{how}")


def _plain(values) -> tuple:
    """Labels as a tuple of Python values (a NumPy scalar as its Python value)."""
    return tuple(plain(v) for v in values)
