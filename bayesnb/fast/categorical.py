"""The fast form of :class:`~bayesnb.families.Categorical`: labelled dense data counted and
scored on the host in float64 (one ``np.bincount``; a sparse product of each row's level
indicators with the log tables: exact, and nothing to compile however many columns), and the
kernels' tables centred per level with their float32 rounding bound."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from scipy import sparse

from ..families._base import dist, float64_mode, numpyro
from ..families._levels import UNSEEN, by_level_count, split_levels
from ..families.categorical import Categorical, CategoricalStats, DirichletPrior
from . import FastForm, register


class CategoricalShifted(NamedTuple):
    """The float32 score kernel's form of a table (:meth:`CategoricalFast.kernel_table`): log
    probabilities centred per level on their mean over the classes, in float64."""

    log_prob: jax.Array  # (K, L) log p(level | class) minus the level's mean over classes
    offset: jax.Array  # (F,)
    log_unseen: jax.Array  # (K, F) the same for a value never seen in training
    rounding: jax.Array  # () bound on the rounding of a row's scores (score_rounding)


def _rounding(delta: np.ndarray, delta_unseen: np.ndarray, offset: np.ndarray) -> np.ndarray:
    r"""Bound on the float32 rounding of a row's scores,
    :math:`\epsilon \log_2(2F) \sqrt{\sum_j m_j^2}` with :math:`m_j` the largest finite
    :math:`|\delta|` of column :math:`j` (0 in float64 mode, where nothing is refused).

    The table entries are float64 values rounded once, and XLA sums the :math:`F` terms of a
    row in blocks, so the rounding grows like the root-sum-square of the terms times the depth
    of the summation; the float32 property tests check the agreement itself."""
    if float64_mode() or offset.size == 0:
        return np.zeros(())
    size = np.where(np.isfinite(delta), np.abs(delta), 0.0).max(axis=0)
    per_column = np.zeros(offset.size)  # (a column may have no level: no reduceat)
    np.maximum.at(per_column, np.searchsorted(offset, np.arange(size.size), "right") - 1, size)
    unseen = np.where(np.isfinite(delta_unseen), np.abs(delta_unseen), 0.0).max(axis=0)
    m = np.maximum(per_column, unseen)
    eps = float(np.finfo(np.float32).eps)
    return np.asarray(eps * np.log2(2 * offset.size) * np.sqrt(np.sum(m * m)))


def _centred(log_prob: np.ndarray) -> np.ndarray:
    """``log_prob`` minus, per level, its mean over the classes where finite (a level with
    probability zero in every class keeps -inf): a class-free shift of every row's scores."""
    finite = np.isfinite(log_prob)
    count = finite.sum(axis=0)
    mean = np.where(finite, log_prob, 0.0).sum(axis=0) / np.maximum(count, 1)
    return log_prob - mean


_ONES = np.ones(0)


def _ones(n: int) -> np.ndarray:
    """``n`` float64 ones, read-only, from one array kept between calls (fresh pages cost more
    here than the sparse product that reads them)."""
    global _ONES
    if _ONES.size < n:
        ones = np.ones(n)
        ones.flags.writeable = False
        _ONES = ones
    return _ONES[:n]


def _log_tables(table, exact: bool) -> tuple:
    """``(log_prob (K, L), offset (F,), log_unseen (K, F))`` in float64 of a plug-in table or,
    if ``exact``, of the posterior predictive (``table`` a posterior, as
    :meth:`Categorical.log_predictive` builds it)."""
    with np.errstate(divide="ignore"):
        if exact:
            alpha = np.asarray(table.alpha, dtype=np.float64)
            segment, offset = np.asarray(table.segment), np.asarray(table.offset)
            totals = np.stack([np.bincount(segment, weights=a, minlength=offset.size)
                               for a in alpha]).reshape(alpha.shape[0], offset.size)
            return (np.log(alpha) - np.log(totals[:, segment]), offset,
                    np.log(np.asarray(table.unseen, np.float64)) - np.log(totals))
        return (np.asarray(table.log_prob, dtype=np.float64), np.asarray(table.offset),
                np.asarray(table.log_unseen, dtype=np.float64))


@register
class CategoricalFast(FastForm):
    family = Categorical
    #: tables in float64 on the host: one rounding of log(n_k + A) in float32 is shared by
    #: every column of class k, so over thousands of columns it would add up
    host_numeric = True
    #: counts and scores of labelled dense data on the host: a compiled kernel over many
    #: columns would cost more to compile than the host takes to count
    host_counting = True
    batched_sites = True

    @staticmethod
    def sample_params_batched(prior: DirichletPrior, n_classes: int, site: str) -> dict:
        """``Categorical.sample_params``, the columns of one level count ``L`` as one site
        ``"{site}.#{L}levels.probs"`` of shape ``(K, columns, L)`` (a column alone keeps
        its own site; ``#`` keeps the name apart from a column's): the same density, for
        NUTS, which traced and compiled each column's site apart (0.5 s a column)."""
        pieces = split_levels(prior.alpha, prior.offset)
        params = {}
        for n_levels, columns in by_level_count(pieces).items():
            if len(columns) == 1:
                with numpyro.plate("class", n_classes, dim=-1):
                    params[f"{columns[0]}.probs"] = numpyro.sample(
                        f"{site}.{columns[0]}.probs", dist.Dirichlet(pieces[columns[0]]))
                continue
            with numpyro.plate(f"{site}.#{n_levels}levels_columns", len(columns), dim=-1), \
                    numpyro.plate(f"{site}.#{n_levels}levels_class", n_classes, dim=-2):
                probs = numpyro.sample(f"{site}.#{n_levels}levels.probs", dist.Dirichlet(
                    jnp.stack([pieces[j] for j in columns])))
            params.update({f"{j}.probs": probs[:, g, :] for g, j in enumerate(columns)})
        return params

    @staticmethod
    def observe_batched(params, y, site: str, **kw) -> None:
        """``Categorical.observe``'s simulation (no values given), the columns of one level count
        ``L`` as one site ``"{site}.#{L}levels.x"`` of shape ``(rows, columns)``."""
        pieces = [params[f"{j}.probs"] for j in range(sum(k.endswith(".probs")
                                                          for k in params))]
        for n_levels, columns in by_level_count(pieces).items():
            if len(columns) == 1:
                with numpyro.plate("row", y.shape[0], dim=-1):
                    numpyro.sample(f"{site}.{columns[0]}.x",
                                   dist.Categorical(pieces[columns[0]][y]))
                continue
            probs = jnp.stack([pieces[j] for j in columns], axis=-2)  # (K, columns, L)
            with numpyro.plate(f"{site}.#{n_levels}levels_columns", len(columns), dim=-1), \
                    numpyro.plate(f"{site}.#{n_levels}levels_row", y.shape[0], dim=-2):
                numpyro.sample(f"{site}.#{n_levels}levels.x", dist.Categorical(probs[y]))

    @staticmethod
    def unbatched_draws(draws: dict, prior) -> dict:
        """Draws of the batched sites (:meth:`sample_params_batched`, :meth:`observe_batched`:
        one site for the columns of one level count; keys relative to the block's site,
        leading draw axes) under ``sample_params``' and ``observe``'s per-column keys."""
        pieces = split_levels(np.asarray(prior.alpha), prior.offset)
        out = dict(draws)
        for n_levels, columns in by_level_count(pieces).items():
            for name, axis in (("probs", -2), ("x", -1)):
                batch = out.pop(f"#{n_levels}levels.{name}", None)
                if batch is not None:
                    out.update({f"{j}.{name}": np.ascontiguousarray(np.take(batch, g, axis))
                                for g, j in enumerate(columns)})
        return out

    @staticmethod
    def batched_draws(draws: dict, prior) -> dict:
        """The inverse of ``unbatched_draws`` for the parameters: each level count's
        columns' ``probs`` stacked under the batched site."""
        pieces = split_levels(np.asarray(prior.alpha), prior.offset)
        out = dict(draws)
        for n_levels, columns in by_level_count(pieces).items():
            if len(columns) > 1:
                out[f"#{n_levels}levels.probs"] = np.stack(
                    [out.pop(f"{j}.probs") for j in columns], axis=-2)
        return out


    @staticmethod
    def host_stats(codes, labels, weight, n_classes: int, n_levels: tuple) -> CategoricalStats:
        r"""Weighted level counts :math:`n_{kjv}` of one chunk of codes, in float64.

        One ``np.bincount`` over the flat index :math:`k L + \mathrm{offset}_j + x_{ij}`
        (missing values, code -1, go to one more bin, dropped): exact, O(rows x columns) and
        nothing to compile, however many columns there are."""
        sizes = np.asarray(n_levels, dtype=np.int64)
        width = int(sizes.sum())
        bins = n_classes * width
        flat = codes + np.concatenate([[0], np.cumsum(sizes)[:-1]])  # int64
        flat += (np.asarray(labels, dtype=np.int64) * width)[:, None]
        if codes.size and codes.min() < 0:
            flat[codes < 0] = bins
        w = np.asarray(weight, dtype=np.float64)
        if w.size and w.min() == w.max():  # unweighted (or equal weights): integer counts
            counts = np.bincount(flat.reshape(-1), minlength=bins + 1)[:bins] * w[0]
        else:
            counts = np.bincount(flat.reshape(-1), weights=np.repeat(w, codes.shape[1]),
                                 minlength=bins + 1)[:bins]
        return CategoricalStats(counts.reshape(n_classes, width))

    @staticmethod
    def host_score_table(table, exact: bool) -> tuple:
        """``(lookup, offset)`` for :meth:`host_scores`: ``lookup`` ``(L + F + 1, K)`` holds
        in float64 log p(level | class) of every flat level, then per column that of a value
        unseen in training, then 0 (a missing value)."""
        log_prob, offset, log_unseen = _log_tables(table, exact)
        width, f = log_prob.shape[1], offset.size
        lookup = np.zeros((width + f + 1, log_prob.shape[0]))
        lookup[:width] = log_prob.T
        lookup[width:width + f] = log_unseen.T
        return lookup, offset

    @staticmethod
    def host_scores(prepared: tuple, codes) -> np.ndarray:
        r"""``(m, K)`` float64 :math:`\sum_j \log p(x_{ij} \mid k)` of a chunk of codes.

        A sparse product of the rows' indicators (one 1 per row and column, at its level's
        row of the lookup) with the lookup table: exact in float64, with no ``(rows, L)``
        one-hot and nothing to compile. A probability of 0 (ML) gives -inf, never NaN: only
        the stored ones are multiplied."""
        lookup, offset = prepared
        m, f = codes.shape
        index = np.int32 if max(lookup.shape[0], m * f) < 2**31 else np.int64
        flat = codes.astype(index, copy=False) + offset.astype(index)
        if codes.size and codes.min() < 0:
            width = lookup.shape[0] - f - 1
            other = np.where(codes == UNSEEN, width + np.arange(f, dtype=index),
                             width + f).astype(index)
            flat = np.where(codes >= 0, flat, other)
        indicators = sparse.csr_matrix(
            (_ones(m * f), flat.reshape(-1), np.arange(0, m * f + 1, f, dtype=index)),
            shape=(m, lookup.shape[0]), copy=False)
        return np.asarray(indicators @ lookup)

    @staticmethod
    def kernel_table(table, exact: bool, joint: bool):
        r"""Log probabilities centred per level on their mean over the classes, in float64.

        A row's score sums one log probability per column; over thousands of columns the
        float32 partial sums grow to thousands while the classes differ in the fourth digit.
        Centring removes the class-free part of every term (the shift of a row's scores is the
        same for every class), so the partial sums stay of the size of the differences."""
        if joint:
            return table, None
        log_prob, offset, log_unseen = _log_tables(table, exact)
        delta, delta_unseen = _centred(log_prob), _centred(log_unseen)
        return CategoricalShifted(delta, offset, delta_unseen,
                                  _rounding(delta, delta_unseen, offset)), None

    @staticmethod
    def score_rounding(table, x, scores) -> jax.Array:
        """The table's bound for every row (:func:`_rounding`)."""
        if not isinstance(table, CategoricalShifted):
            return jnp.zeros(x.shape[0])
        return jnp.broadcast_to(table.rounding, (x.shape[0],))


    @staticmethod
    def scores(table, x, n_levels, exact: bool) -> jax.Array:
        if isinstance(table, CategoricalShifted) or not exact:  # same fields as the params
            return Categorical.log_likelihood(table, x, n_levels)
        return Categorical.log_predictive(table, x, n_levels)  # the joint density's posterior
