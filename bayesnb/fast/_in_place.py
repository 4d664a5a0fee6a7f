r"""Chunks a float64 statistics kernel reads where they lie, without the staging copy.

XLA:CPU reads a NumPy array in place only when its data start on a 64-byte boundary; NumPy's
start 16 bytes past one, so each chunk of a user's array is first copied into an aligned buffer
(``_kernels._Staging``), which took a fifth to a quarter of a small float64 Multinomial fit. A
C-contiguous float64 chunk ``x`` of ``R`` rows and ``V`` columns is read from its first
boundary instead, ``s < 8`` values in (:func:`rows_in_place`):

* ``body``, ``(R - 1, V)``: row ``i`` is ``x[i, s:]`` followed by ``x[i + 1, :s]``, a view of
  the same memory, which the kernel reads in place;
* ``edges``, ``(2, V)``: what the body leaves out, where it lies: ``x[0, :s]`` in the first
  row and ``x[R - 1, s:]`` in the second, every other entry 0 (a copy of two rows).

Row sums and class sums of an elementwise function that is 0 at 0 (the count families' values
and log factorials) follow from sums over the body and the edges (:class:`InPlaceRows`). A
fast form whose statistics are such sums declares ``FastForm.in_place_stats``, which computes
them on an :class:`InPlaceRows` chunk and says whether the chunk held only values it takes
(the Multinomial: integer counts below 256); the driver redoes any other chunk, and the rest
of the pass, from staging copies (``_kernels._stream_suff_stats``), whose kernel also checks
the values. The float32 kernels keep the staging copy: their chunk forms centre each row on
its own class (``_float32.label_class_sums``), which the wrapped columns would take from the
next row.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ._steps import row_sums

#: XLA:CPU reads an array in place from this boundary (bytes)
ALIGNMENT = 64
#: float64 values at most between a chunk's start and its first boundary, plus one: the
#: body's wrapped columns lie among its last ``WINDOW``
WINDOW = ALIGNMENT // 8


class InPlaceRows(NamedTuple):
    """A chunk of ``R`` rows as its aligned body and its two edges (see the module)."""

    body: jax.Array  # (R - 1, V): row i is x[i, s:] then x[i + 1, :s]
    edges: jax.Array  # (2, V): x[0, :s] and x[R - 1, s:] in place, the rest 0
    shift: jax.Array  # () int32: s

    def map(self, f) -> InPlaceRows:
        """``f`` applied to every entry; ``f(0)`` must be 0 (the edges' padding)."""
        return self._replace(body=f(self.body), edges=f(self.edges))

    def _wrapped(self, values: jax.Array) -> jax.Array:
        """``(R - 1, WINDOW)``: the body's last columns, 0 but where they hold the next
        row's first ``s`` values."""
        window = values[:, values.shape[1] - WINDOW:]
        return jnp.where(jnp.arange(WINDOW) >= WINDOW - self.shift, window, 0.0)

    def row_sums(self) -> jax.Array:
        """``(R,)`` the chunk's row sums: the body's rows less their wrapped part, which
        belongs to the next row, and the edges at both ends."""
        whole = row_sums(self.body)
        wrapped = row_sums(self._wrapped(self.body))
        edges = row_sums(self.edges)
        return (jnp.concatenate([whole - wrapped, edges[1:]])
                + jnp.concatenate([edges[:1], wrapped]))

    def class_sums(self, labels) -> jax.Array:
        """``(K, V)`` per class the weighted column sums (``labels``: the chunk's
        ``_kernels.Labels``), in float64: the body's rows by their own labels, its wrapped
        entries moved to the next row's, then the edges; body column ``u`` is the chunk's
        column ``(u + s) mod V``."""
        n, k = labels.codes.shape[0], labels.n_classes

        def by_label(values, rows):  # a few values a row: one weighted scatter-add
            return jax.ops.segment_sum(values * labels.weights[rows, None], labels.codes[rows],
                                       num_segments=k)

        wrapped = self._wrapped(self.body)
        sums = labels.rows(0, n - 1).sum(self.body)
        moved = by_label(wrapped, np.s_[1:]) - by_label(wrapped, np.s_[:-1])
        sums = sums.at[:, -WINDOW:].add(moved)
        return jnp.roll(sums, self.shift, axis=1) + by_label(self.edges, np.array([0, n - 1]))


def readable(chunk) -> bool:
    """Whether :func:`rows_in_place` can read ``chunk`` (a source's first chunk; the others of
    the same array then can too): a C-contiguous float64 NumPy array of at least
    :data:`WINDOW` columns, its data on a multiple of 8 bytes."""
    return (isinstance(chunk, np.ndarray) and chunk.dtype == np.float64 and chunk.ndim == 2
            and chunk.flags.c_contiguous and chunk.shape[1] >= WINDOW
            and chunk.shape[0] >= 2 and chunk.ctypes.data % 8 == 0)


def rows_in_place(chunk: np.ndarray) -> InPlaceRows:
    """``chunk`` (:func:`readable`) as its aligned body (a view) and its edges."""
    rows, width = chunk.shape
    s = (-chunk.ctypes.data) % ALIGNMENT // 8
    body = chunk.reshape(-1)[s:s + (rows - 1) * width].reshape(rows - 1, width)
    edges = np.zeros((2, width))
    edges[0, :s] = chunk[0, :s]
    edges[1, s:] = chunk[-1, s:]
    return InPlaceRows(body, edges, np.int32(s))
