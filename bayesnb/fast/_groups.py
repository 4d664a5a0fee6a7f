"""Blocks of one form computed together inside a kernel.

A kernel traced each block's computation once per block. A model declared column by column
(``{column: family}`` over hundreds of columns) then gave XLA hundreds of copies of one
computation, whose compile time grows faster than their number: 100 one-column Poisson blocks
took 19 s to compile the statistics kernel, 100 Gaussian blocks 5 s the score kernel.
:func:`per_block` computes the blocks that share a family, its static arguments and the shapes
and dtypes of their arrays as one ``jax.vmap`` of that computation: one copy for XLA however
many blocks share it. Its results stay stacked a group (:class:`Grouped`, a pytree a kernel
returns as it is): slicing each block's out inside the kernel cost as much compile time again.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import jax
import jax.numpy as jnp
import numpy as np


def _signature(key: Hashable, args: tuple) -> tuple:
    leaves, tree = jax.tree_util.tree_flatten(args)
    return key, tree, tuple((jnp.shape(a), jnp.result_type(a)) for a in leaves)


def _shapes(arg, b: int):
    """Block ``b``'s argument, or for a :class:`Grouped` one its shapes and dtypes only."""
    if isinstance(arg, Grouped):
        g, _ = arg._where[b]
        return jax.tree_util.tree_map(lambda leaf: jax.ShapeDtypeStruct(leaf.shape[1:],
                                                                        leaf.dtype),
                                      arg.results[g])
    return arg[b]


def groups(keys: Sequence[Hashable], *per_block: Sequence) -> list[list[int]]:
    """Block indices grouped by key and by the shapes and dtypes of their arguments
    (``per_block``: per argument, one value a block), in order of first appearance."""
    found: dict = {}
    for b, key in enumerate(keys):
        found.setdefault(_signature(key, tuple(_shapes(arg, b) for arg in per_block)),
                         []).append(b)
    return list(found.values())


@jax.tree_util.register_pytree_node_class
class Grouped(Sequence):
    """Per-block results held as one result a group, each array with the group's blocks along
    a new leading axis. ``grouped[b]`` is block ``b``'s (a slice: read it on the host, after
    the kernel, as NumPy arrays)."""

    def __init__(self, results: tuple, members: tuple[tuple[int, ...], ...]):
        self.results, self.members = tuple(results), members
        self._where = {b: (g, i) for g, group in enumerate(members) for i, b in enumerate(group)}

    def tree_flatten(self):
        return self.results, self.members

    @classmethod
    def tree_unflatten(cls, members, results):
        return cls(results, members)

    def __len__(self) -> int:
        return len(self._where)

    def __getitem__(self, b: int):
        if b not in self._where:
            raise IndexError(f"block {b} of {len(self)}")
        g, i = self._where[b]
        return jax.tree_util.tree_map(lambda leaf: leaf[i], self.results[g])

    def map(self, fn: Callable) -> Grouped:
        """``fn`` of every block's result (applied to each group's stacked results)."""
        return Grouped(tuple(fn(r) for r in self.results), self.members)

    def ordered(self) -> jax.Array:
        """A result that is one array a block, as ``(blocks, ...)`` in block order."""
        stacked = jnp.concatenate(self.results)
        order = np.argsort(np.concatenate(self.members), kind="stable")
        return stacked if np.array_equal(order, np.arange(len(order))) else stacked[order]

    def total(self) -> jax.Array:
        """A result that is one array a block, summed over the blocks."""
        return sum(jnp.sum(r, axis=0) for r in self.results)

    def pairwise_total(self) -> tuple[jax.Array, jax.Array]:
        """A result that is one array a block, summed over the blocks pairwise, and elementwise
        the magnitudes of the blocks' results and of every sum that formed, added up: a float
        addition (or the subtraction that made a block's result) rounds by at most half an
        epsilon of its result, so half an epsilon times them bounds the total's rounding (to
        first order), in the order the total was taken."""
        stacked = jnp.concatenate(self.results) if len(self.results) > 1 else self.results[0]
        formed = jnp.sum(jnp.abs(stacked), axis=0)  # the blocks' own, as they came
        while stacked.shape[0] > 1:
            if stacked.shape[0] % 2:
                stacked = jnp.concatenate([stacked, jnp.zeros_like(stacked[:1])])
            stacked = stacked[0::2] + stacked[1::2]
            formed = formed + jnp.sum(jnp.abs(stacked), axis=0)
        return stacked[0], formed


def per_block(fn: Callable, keys: Sequence[Hashable], *per_block: Sequence) -> Grouped:
    """``fn(keys[b], *(arg[b] for arg in per_block))`` for every block ``b`` inside a traced
    kernel, each group of :func:`groups` computed by one vmapped call of ``fn`` over its
    blocks' arguments stacked (pytrees of arrays; None where a block has none); a block alone
    in its group is computed as it is. ``fn`` may close over arrays every block shares (a
    chunk's labels)."""
    members = [tuple(group) for group in groups(keys, *per_block)]
    results = []
    for group in members:
        key = keys[group[0]]
        if len(group) == 1:
            result = fn(key, *(arg[group[0]] for arg in per_block))
            results.append(jax.tree_util.tree_map(lambda leaf: jnp.asarray(leaf)[None], result))
        else:
            stacked = [_stacked(arg, group) for arg in per_block]
            results.append(jax.vmap(lambda *args, key=key: fn(key, *args))(*stacked))
    return Grouped(tuple(results), tuple(members))


def _stacked(arg, group: tuple[int, ...]):
    """The arguments of ``group``'s blocks, stacked: a :class:`Grouped` argument computed
    over the same groups (an earlier :func:`per_block`'s results) as it is."""
    if isinstance(arg, Grouped) and group in arg.members:
        return arg.results[arg.members.index(group)]
    return jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *(arg[b] for b in group))
