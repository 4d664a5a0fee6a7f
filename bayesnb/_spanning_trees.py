r"""Sums over the spanning trees of a weighted graph, in log space (the matrix-tree theorem).

For a complete graph on :math:`F` vertices with edge weights :math:`W_{ij} \ge 0`, Kirchhoff's
matrix-tree theorem gives :math:`Z(W) = \sum_T \prod_{(i,j) \in T} W_{ij} = \det M`, where
:math:`M` is the weighted Laplacian :math:`L = \mathrm{diag}(W\mathbf 1) - W` with one vertex's
row and column removed (Meila & Jaakkola 2000, "Tractable Bayesian learning of tree belief
networks"). The weights here are Bayes factors, :math:`\log W` ranging over thousands, so
:math:`M` is as ill-conditioned as a matrix can be: an LU factorisation (``slogdet``) of a graph
whose heavy edges form clusters joined by light ones subtracts nearly equal diagonal entries and
returns noise, and :math:`\exp(\log W - \max)` underflows to a disconnected graph. Neither is
used.

Instead the vertices are eliminated one by one without a single subtraction (the
Grassmann-Taksar-Heyman form of Gaussian elimination, Kron reduction of the graph): eliminating
vertex :math:`v` with pivot :math:`d_v = g_v + \sum_k W_{vk}` (:math:`g` the weights to the
removed vertex, the "ground") leaves a Laplacian of the same form,

.. math::

    W'_{ij} = W_{ij} + W_{iv} W_{jv} / d_v, \qquad g'_i = g_i + W_{iv} g_v / d_v, \qquad
    \det M = \prod_v d_v,

sums of positive terms only, computed here with ``logaddexp``: every quantity keeps its
relative accuracy whatever the range of the weights. The same elimination gives
:math:`M = L D L^\top` with :math:`L = I - N`, :math:`N \ge 0` strictly lower triangular, so
:math:`L^{-1} = I + N + N^2 + \dots \ge 0` and the diagonal of :math:`M^{-1}` are sums of
positive terms too. With vertex :math:`r` grounded, :math:`(M_r^{-1})_{ii}` is the effective
resistance between :math:`i` and :math:`r`, and the posterior probability of an edge is
:math:`P(e_{ir}) = W_{ir} (M_r^{-1})_{ii}` (the form without the cancelling
:math:`M^{-1}_{ii} + M^{-1}_{jj} - 2 M^{-1}_{ij}`). Everything is float64 NumPy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.linalg import solve_triangular
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.special import logsumexp


def _eliminate(log_w, log_g):
    """Log-space elimination of every vertex, in order, of the batched graphs ``log_w``
    (B, n, n; the diagonal is ignored) grounded through ``log_g`` (B, n). Returns the log
    pivots (B, n) and the log multipliers ``log N[b, i, k] = log W^{(k)}_{ik} - log d_k`` for
    ``i > k`` (B, n, n; ``-inf`` elsewhere)."""
    w = np.array(log_w, dtype=np.float64)
    g = np.array(log_g, dtype=np.float64)
    b, n = g.shape
    log_d = np.empty((b, n))
    log_n = np.full((b, n, n), -np.inf)
    with np.errstate(invalid="ignore"):  # -inf - -inf where an edge is absent: masked below
        for k in range(n):
            row = np.concatenate([g[:, k:k + 1], w[:, k, k + 1:]], axis=1)
            log_d[:, k] = logsumexp(row, axis=1)
            a = w[:, k + 1:, k] - log_d[:, k:k + 1]  # log W_ik / d_k
            a = np.where(np.isnan(a), -np.inf, a)
            log_n[:, k + 1:, k] = a
            w[:, k + 1:, k + 1:] = np.logaddexp(w[:, k + 1:, k + 1:],
                                                a[:, :, None] + w[:, None, k, k + 1:])
            g[:, k + 1:] = np.logaddexp(g[:, k + 1:], a + g[:, k:k + 1])
    return log_d, log_n


def _grounded(log_weights, root: int):
    """The graph without vertex ``root``: its weights and its vertices' weights to ``root``."""
    keep = [v for v in range(log_weights.shape[-1]) if v != root]
    return (log_weights[..., keep, :][..., :, keep], log_weights[..., keep, root])


def log_tree_sum(log_weights) -> np.ndarray:
    r""":math:`\log \sum_T \prod_{(i,j) \in T} W_{ij}` over the spanning trees of the complete
    graph with log edge weights ``log_weights`` (..., F, F), symmetric, diagonal ignored,
    ``-inf`` for an absent edge. Returns shape ``(...)``; ``-inf`` if there is no spanning
    tree. One vertex: 0 (the empty tree)."""
    log_weights = np.asarray(log_weights, dtype=np.float64)
    shape, f = log_weights.shape[:-2], log_weights.shape[-1]
    if f <= 1:
        return np.zeros(shape)
    w, g = _grounded(log_weights.reshape(-1, f, f), f - 1)
    log_d, _ = _eliminate(w, g)
    return log_d.sum(axis=1).reshape(shape)


#: the range the ratios of :func:`log_tree_ratio` stay in, else the row goes the log-space way
_RATIO_RANGE = 1e60
#: shares of :class:`Plan` below this are 0
_TINY = 1e-280


class Plan(NamedTuple):
    """The elimination of one graph (:func:`elimination_plan`), as the float64 fractions that
    :func:`log_tree_ratio` mixes: per step ``k``, the share of each remaining vertex (and of
    the ground, last) in the pivot, ``share[k]`` (m + 1,); the share of each remaining weight
    (m edges, then the ground) that it had before the step, ``keep[k]`` (m, m + 1), and that
    the step added, ``add[k]`` (computed in log space, not as ``1 - keep``: a share below the
    float64 epsilon counts when the ratio it multiplies is large)."""

    log_weights: np.ndarray
    share: tuple
    keep: tuple
    add: tuple


def elimination_plan(log_weights) -> Plan:
    """Eliminate the graph ``log_weights`` (F, F) once, recording the fractions
    :func:`log_tree_ratio` needs (vertex ``F - 1`` grounded, as in :func:`log_tree_sum`)."""
    log_weights = np.asarray(log_weights, dtype=np.float64)
    f = log_weights.shape[0]
    w, g = (np.array(a) for a in _grounded(log_weights, f - 1))
    share, keep, add = [], [], []
    with np.errstate(invalid="ignore"):
        for k in range(f - 1):
            row = np.concatenate([w[k, k + 1:], g[k:k + 1]])
            log_d = logsumexp(row)
            share.append(np.exp(row - log_d))
            a = w[k + 1:, k] - log_d
            step_w, step_g = a[:, None] + w[None, k, k + 1:], a + g[k]
            new_w = np.logaddexp(w[k + 1:, k + 1:], step_w)
            new_g = np.logaddexp(g[k + 1:], step_g)
            added = np.nan_to_num(np.exp(step_w - new_w), nan=0.0)
            np.fill_diagonal(added, 0.0)
            add.append(np.column_stack([added, np.nan_to_num(np.exp(step_g - new_g), nan=0.0)]))
            # an edge absent before and after (-inf - -inf): keep it as it is
            kept = np.nan_to_num(np.exp(w[k + 1:, k + 1:] - new_w), nan=1.0)
            np.fill_diagonal(kept, 1.0)  # a vertex has no edge to itself: its ratio stays 1
            keep.append(np.column_stack([kept, np.nan_to_num(np.exp(g[k + 1:] - new_g),
                                                             nan=1.0)]))
            w[k + 1:, k + 1:], g[k + 1:] = new_w, new_g
    # shares this small cannot count against ratios within _RATIO_RANGE; as subnormal
    # numbers they would slow every product a hundredfold
    share, keep, add = ([np.where(x < _TINY, 0.0, x) for x in part]
                        for part in (share, keep, add))
    return Plan(log_weights, tuple(share), tuple(keep), tuple(add))




def log_tree_ratio(plan: Plan, log_ratios) -> np.ndarray:
    r""":math:`\log Z(W \circ R) - \log Z(W)` for the graph of ``plan`` and a batch of edge
    factors ``log_ratios`` (F, F, B), the batch last (symmetric, the diagonal 0).

    The elimination of :math:`W \circ R` is that of :math:`W` with every weight multiplied by a
    ratio :math:`\rho` that the steps mix: the pivot's ratio is the :math:`W`-weighted mean
    :math:`\delta_k = \sum_j s_{kj} \rho_{kj}` of its edges' ratios, and a new weight's ratio
    is the mix :math:`\rho'_{ij} = \kappa_{ij} \rho_{ij} + (1 - \kappa_{ij})
    \rho_{ik}\rho_{jk}/\delta_k` with :math:`W`'s own shares :math:`s, \kappa` (computed once
    in log space, :func:`elimination_plan`). So the result is :math:`\sum_k \log\delta_k`,
    in float64 with convex combinations of moderate numbers only: as exact as the log-space
    elimination at the cost of a linear one. A row whose ratios leave
    ``[1/_RATIO_RANGE, _RATIO_RANGE]`` is computed by :func:`log_tree_sum` instead."""
    log_ratios = np.asarray(log_ratios, dtype=np.float64)
    f, b = log_ratios.shape[0], log_ratios.shape[-1]
    if f <= 1:
        return np.zeros(b)
    bad = ~np.all(np.abs(log_ratios) < np.log(_RATIO_RANGE), axis=(0, 1))
    # the batch last: every (i, j) entry is one contiguous run of B numbers; by symmetry only
    # the upper triangle (j > i, the ground last) is kept up to date, a row at a time
    with np.errstate(over="ignore", under="ignore"):
        rho = np.exp(log_ratios)
    out = np.zeros(b)
    scratch = np.empty((f, b))
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        for k in range(f - 1):
            edge = rho[k, k + 1:]  # (m + 1, B): the remaining vertices, then the ground
            delta = plan.share[k] @ edge
            out += np.log(delta)
            # every ratio is read once as a pivot's edge (or ground) here: checked here
            bad |= ~(np.all((edge > 1 / _RATIO_RANGE) & (edge < _RATIO_RANGE), axis=0)
                     & (delta > 1 / _RATIO_RANGE) & (delta < _RATIO_RANGE))
            a = edge[:-1] / delta  # rho_ik / delta_k
            keep, add = plan.keep[k], plan.add[k]
            for i in range(f - 2 - k):  # row k + 1 + i, from its diagonal to the ground
                row, tmp = rho[k + 1 + i, k + 1 + i:], scratch[:f - 1 - k - i]
                np.multiply(edge[i:], a[i], out=tmp)
                tmp *= add[i, i:, None]
                row *= keep[i, i:, None]
                row += tmp
    if bad.any():
        out[bad] = (log_tree_sum(plan.log_weights + np.moveaxis(log_ratios[..., bad], -1, 0))
                    - log_tree_sum(plan.log_weights))
    return out


def log_edge_marginals(log_weights) -> np.ndarray:
    r"""Log posterior probability of each edge under :math:`p(T) \propto \prod_{e \in T} W_e`:
    ``log P[i, j]`` (F, F), symmetric, ``-inf`` on the diagonal. Each row of the result is
    computed with its own vertex grounded (module docs), the :math:`F` groundings batched;
    the probabilities of all edges sum to :math:`F - 1`."""
    log_weights = np.asarray(log_weights, dtype=np.float64)
    f = log_weights.shape[-1]
    out = np.full((f, f), -np.inf)
    if f <= 1:
        return out
    parts = [_grounded(log_weights, r) for r in range(f)]
    w = np.stack([p[0] for p in parts])
    g = np.stack([p[1] for p in parts])
    log_d, log_n = _eliminate(w, g)
    n = f - 1
    # X = L^{-1} >= 0 with L = I - N: N holds each pivot's shares (in [0, 1], so linear float64
    # keeps them), and forward substitution only adds positive terms
    eye = np.eye(n)
    log_resistance = np.empty((f, n))
    with np.errstate(divide="ignore"):
        for r in range(f):
            x = solve_triangular(eye - np.exp(log_n[r]), eye, lower=True, unit_diagonal=True)
            # diag(M^{-1})_i = sum_k X_ki^2 / d_k: the effective resistance between i and r
            log_resistance[r] = logsumexp(2.0 * np.log(x) - log_d[r][:, None], axis=0)
    for r in range(f):
        keep = [v for v in range(f) if v != r]
        out[r, keep] = log_weights[keep, r] + log_resistance[r]
    return np.minimum(out, 0.0)  # a probability: rounding may put a certain edge at 1 + eps


def max_spanning_tree(log_weights) -> list[tuple[int, int]]:
    """The spanning tree with the largest sum of ``log_weights`` (F, F), as sorted ``(i, j)``
    pairs with ``i < j``; ``-inf`` edges are never used. SciPy's minimum spanning tree of the
    weights reflected below their maximum (every tree has F - 1 edges, so the shift does not
    change which tree wins; SciPy reads a 0 as no edge, hence the positive offset)."""
    lw = np.asarray(log_weights, dtype=np.float64)
    f = lw.shape[0]
    finite = np.isfinite(lw) & ~np.eye(f, dtype=bool)
    if f <= 1:
        return []
    if not finite.any():  # every edge forbidden: no tree, and no maximum to reflect below
        raise ValueError("the allowed edges do not connect every column: no spanning tree.")
    top = lw[finite].max()
    cost = np.where(finite, (top - lw) + 1.0, 0.0)
    tree = minimum_spanning_tree(np.triu(cost)).tocoo()
    edges = sorted((min(i, j), max(i, j)) for i, j in zip(tree.row.tolist(), tree.col.tolist(),
                                                             strict=True))
    if len(edges) != f - 1:
        raise ValueError("the allowed edges do not connect every column: no spanning tree.")
    return edges
