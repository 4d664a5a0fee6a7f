"""Blocks of one family taken as one block: NUTS and the scores over draws of a model declared
column by column.

A mapping ``{column: family}`` with a family object per column makes one block per column.
NumPyro traces each block's sample sites apart, and the scores over draws ran block by block:
with 30 one-column Gaussian blocks, NUTS compiled and ran in 24 s against 5.7 s for one block
of the same 30 columns, and ``predict_uncertainty`` took 3.1 s against 0.47 s
(``benchmarks/compile_bound.py``).

Blocks whose columns are independent given the class (not ``joint_columns``, no levels, no
per-column sites) keep every array of their prior, statistics and parameters with the columns
on the last axis; a scalar prior value is shared by the columns and a scalar statistic is a
sum over them (the layout ``averaging`` splits blocks by). Such blocks of one family class,
with equal scalar priors and no hyperprior, pooling or replaced prior, are joined column-wise
(:func:`join`): NUTS samples them as one block with the same log density and their draws are
split back under the blocks' own site names (:func:`split_draws`); the scores over draws read
them as one block (``model.joined_for_scoring``), and so does ``simulate``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np


class Joined(NamedTuple):
    """Blocks taken as one: their indices in the model and the site prefix they are
    sampled under (a block alone keeps its own)."""

    blocks: tuple[int, ...]
    site: str


def _joinable(block, replaced_keys: set) -> bool:
    """Whether a block may join others (see the module); ``replaced_keys``: its parameters
    whose prior the user replaced."""
    family = block.family
    if family.nonparametric:  # its statistic and table are the sample, not per column
        return False
    dims = family.param_dims(block.prior, block.schema)
    return (not family.joint_columns and not family.column_sites and not block.schema.levels
            and not family.hyperpriors() and family.pooling_prior() is None
            and not replaced_keys
            and all(d and d[-1] == "feature" for d in dims.values()))


def _key(block):
    """Blocks of equal keys join: the family class, the prior's and statistics' layout and
    the prior's scalar values (a Gaussian's ``pooled`` and ``ddof``)."""
    leaves, treedef = jax.tree_util.tree_flatten(block.prior)
    scalars = tuple((np.asarray(a).dtype.str, np.asarray(a).tobytes())
                    if np.ndim(a) == 0 else None for a in leaves)
    return (type(block.family), treedef, scalars,
            jax.tree_util.tree_structure(block.stats))


def joining_key(block):
    """The key a block joins others by (:func:`_key`), or None for a block that stays alone:
    blocks of one key share their parameters' layout and supports."""
    return _key(block) if _joinable(block, set()) else None


def joined_blocks(blocks, sites, replaced=()) -> tuple[Joined, ...]:
    """How the blocks are sampled: joinable blocks (see the module) of equal :func:`_key`
    as one, every other block alone; in the order of each group's first block. ``replaced``
    are the sites of user-replaced priors (``priors=``): their blocks stay alone."""
    replaced = set(replaced)
    groups: dict = {}
    for i, (block, site) in enumerate(zip(blocks, sites, strict=True)):
        own = {key for key in block.family.param_dims(block.prior, block.schema)
               if f"{site}.{key}" in replaced}
        key = _key(block) if _joinable(block, own) else ("alone", i)
        groups.setdefault(key, []).append(i)
    return tuple(Joined(tuple(g), sites[g[0]] if len(g) == 1 else f"{sites[g[0]]}..{sites[g[-1]]}")
                 for g in groups.values())


def join(parts, *, scalars: str):
    """The prior or statistics of blocks joined column-wise: leaves with a column axis
    concatenated along it (the last); scalar leaves kept (``scalars="shared"``: a prior's,
    equal in every part) or added up (``"summed"``: a statistic's)."""
    if len(parts) == 1:
        return parts[0]

    def leaf(*values):
        if np.ndim(values[0]) == 0:
            return values[0] if scalars == "shared" else sum(values[1:], values[0])
        return np.concatenate([np.asarray(v) for v in values], axis=-1)

    return jax.tree_util.tree_map(leaf, *parts)


def split_draws(draws: dict, groups, blocks, sites) -> dict:
    """NUTS draws ``{site: (chains, draws, ...)}`` of the joined model under the blocks' own
    sites: each joined parameter's last (column) axis cut at the blocks' widths."""
    out = dict(draws)
    for group in groups:
        if len(group.blocks) == 1:
            continue
        edges = np.cumsum([0] + [len(blocks[i].schema.columns) for i in group.blocks])
        keys = [name[len(group.site) + 1:] for name in draws
                if name.startswith(group.site + ".")]
        for key in keys:
            joined = out.pop(f"{group.site}.{key}")
            for i, lo, hi in zip(group.blocks, edges[:-1], edges[1:], strict=True):
                out[f"{sites[i]}.{key}"] = np.ascontiguousarray(joined[..., lo:hi])
    return dict(sorted(out.items()))  # by name, as the compiled sampler returns its sites


def join_draws(draws: dict, groups, blocks, sites) -> dict:
    """Draws under the blocks' own sites as the joined model's (the inverse of
    :func:`split_draws`): each joined group's parameters concatenated along the columns under
    the group's site."""
    out = dict(draws)
    for group in groups:
        if len(group.blocks) > 1:
            first = blocks[group.blocks[0]]
            for key in first.family.param_dims(first.prior, first.schema):
                out[f"{group.site}.{key}"] = np.concatenate(
                    [out.pop(f"{sites[i]}.{key}") for i in group.blocks], axis=-1)
    return out


def joined_model(blocks, groups) -> tuple:
    """The fitted blocks (``FittedBlock``) taken as ``groups``: each group one block of all
    its columns, its prior and statistics joined (:func:`join`); a block alone as given."""
    return tuple(_joined_block([blocks[i] for i in g.blocks]) for g in groups)


def _joined_block(parts):
    """Fitted blocks of one family as one block of all their columns (a block alone as
    given)."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    return first._replace(
        schema=first.schema._replace(columns=tuple(c for b in parts for c in b.schema.columns)),
        positions=tuple(p for b in parts for p in b.positions),
        prior=join([b.prior for b in parts], scalars="shared"),
        stats=None if first.stats is None else join([b.stats for b in parts],
                                                    scalars="summed"))
