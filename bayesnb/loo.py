r"""Exact leave-one-out for the closed-form methods, and per-row log likelihoods of draws.

Leaving row :math:`i` out of a conjugate fit needs no refit: the fit is a function of the
per-class sufficient statistics, so the statistics without row :math:`i` are the class's
statistics with the row's own removed (each family's ``remove_stats``, the inverse of its
``merge_stats``; the row's label only changes its own class). Row :math:`i` is then scored under
the same method from the downdated statistics, the class term included:

.. math::

    \log p(y_i \mid x_i, D_{-i}) = \log p(x_i, y_i \mid D_{-i})
        - \log \sum_k p(x_i, k \mid D_{-i}),

with :math:`p(x, k \mid D_{-i})` the plug-in tables of ``ml``/``map``/``mean`` estimated from
:math:`D_{-i}`, or under ``bayes`` the exact posterior predictive given :math:`D_{-i}` (the
label predictive :math:`(n_k + \gamma_k)/(N + \Gamma_0)` and each family's predictive).
``quantity="joint"`` gives :math:`\log p(x_i, y_i \mid D_{-i})` instead: the generative
model's LOO, the quantity PSIS-LOO (``az.loo``) estimates from the ``log_likelihood`` group of
:meth:`bayesnb.NaiveBayes.to_arviz` with ``log_likelihood="joint"``, whose entries are
:math:`\log p(x_i, y_i \mid \theta)` (the default group holds
:math:`\log p(y_i \mid x_i, \theta)`, for comparing models that read different columns).

Only row i's own class changes, so the other classes keep the full data's tables: every row
is scored once under those (as a prediction), and only its own class's score is made again
without it (every class's, where a family's classes share a table: ``couples_classes``).
On the kernels' route everything is vectorised over rows (in bounded chunks); all of it is
computed in float64 (JAX's x64 mode inside this module only), from the training data's
statistics recomputed here in float64, so the float32 default dtype never enters the result.
A row keeps its full weight: leaving it out removes all of it, and the sum over rows is
unweighted. (PSIS-LOO of a weighted fit estimates these values only through the recipe of the
user guide: ``to_arviz``'s group, with or without ``sample_weight``, makes ``az.loo`` score
another quantity; see :meth:`bayesnb.NaiveBayes.to_arviz`.)
"""

from __future__ import annotations

import dataclasses
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from scipy import sparse

from ._blocks import dense_block, levels_of, raw_blocks
from ._classes import class_log_prior
from ._data import labels_to_codes
from ._missing_labels import missing_labels
from .families._base import host_f64
from .families._levels import _show
from .families.categorical import UnseenCategoryWarning
from .fast import _host, _kernels, form_of
from .fast._compiled import compiled
from .fast._kernels import batch_bucket, bucket, even_rows, full_float32, pad_rows
from .fast._sparse import Labels
from .fitted import (
    FittedModel,
    check_parametric,
    check_weight,
    chunk_statistics,
    joined_for_counting,
    split_statistics,
)
from .scoring import logsumexp_rows, table_scorer

#: rows x classes x (block width) elements held at once while scoring left-out rows
_BUDGET = 1 << 22
#: left-out rows whose statistics are computed in one pass (each row its own "class")
_ROWS = 1024
#: a table of at most this many rows x blocks is left out row by row on the host in float64
#: where every block can be counted and scored there (:func:`_on_host`), compiling nothing:
#: the host took 0.03-0.09 ms a row and block, the kernels' first call 0.7-1.2 s with the
#: compilation cache cold and 0.18-0.21 s warm (``benchmarks/first_answer.py`` (f))
HOST_ROW_BLOCKS = 1 << 12
#: left-out rows a chunk of the host's holds
_HOST_CHUNK_ROWS = 128
#: a row whose removal amplifies its class's rounding more than this (``removal_condition``:
#: 2e-12 relative in float64) has the class counted again without it
RECOUNT_CONDITION = 1e4

QUANTITIES = ("conditional", "joint")


@dataclasses.dataclass(frozen=True)
class LooResult:
    """Exact leave-one-out of a fitted model on its training rows.

    Attributes
    ----------
    pointwise : ndarray of shape (n,)
        ``log p(y_i | x_i, D without row i)`` (``quantity="conditional"``) or
        ``log p(x_i, y_i | D without row i)`` (``"joint"``), natural log.
    elpd_loo : float
        Their sum (ArviZ's ``elpd_loo``).
    se : float
        Its standard error, ``sqrt(n * var(pointwise))`` as ``az.loo`` reports it (NaN when
        a row has probability zero, log -inf, which ``ml`` and ``map`` can give).
    method, quantity : str
    index : pandas.Index or None
        The labels of the rows: the index of ``X`` when it was a DataFrame, else None
        (positions 0..n-1); :meth:`to_frame`'s index.

    Examples
    --------
    >>> import bayesnb as bnb
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> result = bnb.NaiveBayes(method="bayes").fit(days, play).loo(days, play)
    >>> result.n, round(result.elpd_loo, 4), round(float(result.pointwise.sum()), 4)
    (14, -10.2993, -10.2993)
    >>> result.to_frame().head(3).round(4)
       loo_log_p
    0    -0.7242
    1    -0.3400
    2    -0.5899
    """

    pointwise: np.ndarray
    elpd_loo: float
    se: float
    method: str
    quantity: str
    index: pd.Index | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def n(self) -> int:
        return len(self.pointwise)

    def to_frame(self) -> pd.DataFrame:
        """The pointwise values as a one-column DataFrame (``loo_log_p``), one row per
        training row, indexed as the ``X`` given to ``loo`` (0..n-1 for an array)."""
        index = self.index if self.index is not None else pd.RangeIndex(self.n)
        return pd.DataFrame({"loo_log_p": self.pointwise}, index=index)

    def __repr__(self) -> str:
        what = ("log p(y_i | x_i, D_-i)" if self.quantity == "conditional"
                else "log p(x_i, y_i | D_-i)")
        return (f"Exact leave-one-out (method={self.method!r}, {what}, n={self.n}): "
                f"elpd_loo={self.elpd_loo:.4f} (se {self.se:.4f})")


def leave_one_out(model: FittedModel, method: str, class_alpha, class_prior, X, y,
                  sample_weight=None, quantity: str = "conditional") -> LooResult:
    """Exact leave-one-out of ``model`` (fitted on ``X``, ``y``, ``sample_weight``) under
    ``method`` in {"ml", "map", "mean", "bayes"}; see the module docstring.

    Raises a ValueError when ``X``, ``y`` (and the weights) are not the training data (their
    statistics differ from the model's), and when leaving a row out leaves its class without a
    defined estimate (``ml`` with a class of one row, say), naming the row.
    """
    if quantity not in QUANTITIES:
        raise ValueError(f"quantity must be one of {QUANTITIES}, got {quantity!r}.")
    if model.stated is not None:
        raise ValueError("this model was built from stated tables: it has no training data "
                         "to leave rows out of.")
    kernel = next((b for b in model.blocks if b.family.nonparametric), None)
    if kernel is not None:  # defined, by refits: not computed here
        raise ValueError(f"columns {list(kernel.schema.columns)[:5]}: leave-one-out of a "
                         f"{type(kernel.family).__name__} column is not computed in closed "
                         f"form (its bandwidth rule would run again without each row); refit "
                         f"without each row, or model these columns with a parametric family.")
    raws, n = raw_blocks(model, X)
    missing = missing_labels(y)
    if missing is not None and missing.any():
        raise ValueError(f"y has {int(missing.sum())} missing label(s) (first at row "
                         f"{int(np.argmax(missing))}): leave-one-out scores each row against "
                         f"its label, so give the labelled rows the model was fitted on "
                         f"(missing_label='drop' left the others out of the fit).")
    codes = labels_to_codes(y, model.classes)
    if codes.shape[0] != n:
        raise ValueError(f"X has {n} rows but y has {codes.shape[0]} labels.")
    weight = check_weight(sample_weight, n)
    n_classes = len(model.classes)
    counts = np.bincount(codes, weights=weight, minlength=n_classes)
    # a row of weight 0 is no row (its value may be one the fit never saw): leaving it out
    # changes nothing, so it is scored as the full fit predicts it
    live, all_codes = np.flatnonzero(weight > 0), codes
    if live.size < n:
        raws, codes, weight = [r[live] for r in raws], codes[live], weight[live]
    with jax.enable_x64(True):
        xs = [b.family.encode(raw, b.schema) for b, raw in zip(model.blocks, raws, strict=True)]
        host = live.size * len(model.blocks) <= HOST_ROW_BLOCKS and _on_host(model, xs)
        full = (_host_statistics(model, xs, codes, weight, n_classes) if host else
                _statistics(model, raws, xs, codes, weight, n_classes))
        _check_training_data(model, full, counts, sample_weight is None)
        kept = _full_data_scores(model, method, class_alpha, class_prior, full, counts, X, n)
        pointwise = np.empty(n)
        if live.size < n:
            dead = np.setdiff1d(np.arange(n), live)
            pointwise[dead] = _weightless_rows(model, method, class_alpha, class_prior, full,
                                               counts, X, all_codes, dead, quantity)

        def without(b: int, i: int):  # block b's statistics of row i's class without row i
            return _class_without(model.blocks[b], xs[b], codes, weight, i)

        width = sum(np.shape(r)[1] for r in raws) + 1
        coupled = any(b.family.couples_classes() for b in model.blocks)
        step = int(np.clip(_BUDGET // (width * (n_classes if coupled else 1) + n_classes),
                           8, _ROWS))
        # the host's one-hot of a chunk's rows as classes has step**2 entries
        step = min(step, _HOST_CHUNK_ROWS) if host else step
        for start in range(0, live.size, step):
            stop = min(live.size, start + step)
            rows = live[start:stop]
            pointwise[rows] = _left_out(model, method, class_alpha, class_prior, full, counts,
                                        kept[rows], [r[start:stop] for r in raws],
                                        [x[start:stop] for x in xs], codes[start:stop],
                                        weight[start:stop], quantity, start, rows, host, without)
    total = float(np.sum(pointwise))
    se = float(np.sqrt(n * np.var(pointwise))) if np.all(np.isfinite(pointwise)) else np.nan
    index = X.index if isinstance(X, pd.DataFrame) else None
    return LooResult(pointwise, total, se, method, quantity, index)


def _check_training_data(model, full, counts, unweighted: bool) -> None:
    """Refuse data whose class counts or statistics are not the model's (float32 fits agree
    to about 1e-6 relative; 1e-4 leaves room)."""
    if not np.allclose(counts, model.class_count, rtol=1e-9, atol=1e-9):
        hint = (" If the model was fitted with sample_weight, pass the same sample_weight "
                "again." if unweighted else "")
        k = int(np.argmax(~np.isclose(counts, model.class_count, rtol=1e-9, atol=1e-9)))
        label = model.classes[k].item() if isinstance(model.classes[k], np.generic) \
            else model.classes[k]
        raise ValueError(
            f"X, y are not the training data of this model: the (weighted) class counts are "
            f"[{_show(counts.tolist(), 10)}], the model's "
            f"[{_show(np.asarray(model.class_count).tolist(), 10)}] (first difference: class "
            f"{label!r}, {counts[k]:g} against {model.class_count[k]:g}). Leave-one-out needs "
            f"exactly the rows the model was fitted on, with the same sample_weight.{hint}")
    for block, stats in zip(model.blocks, full, strict=True):
        for name, mine, theirs in zip(type(stats)._fields, stats, block.stats, strict=True):
            mine, theirs = np.asarray(mine, np.float64), np.asarray(theirs, np.float64)
            scale = float(np.max(np.abs(theirs))) if theirs.size else 0.0
            # a class-free total (log coefficients) near 0: float32 rounds it by up to about
            # 1e-5 a row (``fast._counts.coefficient_rows``)
            floor = 1e-5 * float(np.sum(counts)) if theirs.ndim == 0 else 0.0
            if mine.shape != theirs.shape or not np.allclose(
                    mine, theirs, rtol=1e-4, atol=1e-6 * scale + floor + 1e-12):
                raise ValueError(
                    f"columns {list(block.schema.columns)[:5]}: X, y are not the training data "
                    f"of this model (the {block.family.name} statistic {name!r} differs). "
                    f"Leave-one-out needs exactly the rows (and sample_weight) the model was "
                    f"fitted on.")


def _statistics(model, raws, xs, codes, weight, n_classes) -> tuple:
    """Per-class statistics of the rows (float64): the fit's own kernels, fed the blocks
    encoded once (the fit's chunk-by-chunk encoding is most of the cost here); sparse input
    takes the fit's sparse path."""
    if any(sparse.issparse(x) for x in xs):
        return tuple(chunk_statistics(model.blocks, raws, codes, weight, n_classes))
    blocks, joined = model.blocks, joined_for_counting(model.blocks, xs)
    if joined is not None:  # blocks declared column by column, counted as one
        groups, blocks, xs = joined
    sources = []
    for b, x in zip(blocks, xs, strict=True):
        dtype = np.dtype(np.int32) if b.family.integer_codes else np.dtype(np.float64)
        one_hot = sum(len(lv) for lv in b.schema.levels) * 8
        sources.append(_kernels.Source(lambda start, stop, x=x: x[start:stop], x.shape[1],
                                       dtype, lambda: None, one_hot,
                                       columns=tuple(b.schema.columns)))
    stats = _kernels.stream_suff_stats(tuple(type(b.family) for b in blocks),
                                       tuple(levels_of(b.schema) for b in blocks),
                                       n_classes, sources, codes, weight)
    return tuple(stats) if joined is None else tuple(split_statistics(stats, groups,
                                                                      model.blocks))


def _on_host(model, xs) -> bool:
    """Whether every block can be counted and scored on the host in float64
    (``_host.scorable``)."""
    return all(_host.scorable(b.family, x) for b, x in zip(model.blocks, xs, strict=True))


def _host_statistics(model, xs, codes, weight, n_classes) -> tuple:
    """Per-class statistics of the encoded blocks ``xs`` on the host (float64, :func:`_on_host`)."""
    return tuple(_block_host_statistics(b, x, codes, weight, n_classes)
                 for b, x in zip(model.blocks, xs, strict=True))


def _block_host_statistics(block, x, codes, weight, n_classes):
    """One block's per-class statistics of the encoded ``x`` on the host (float64)."""
    form = form_of(block.family)
    if form.host_counting:
        return form.host_stats(x, codes, weight, n_classes, levels_of(block.schema))
    return host_f64(_host.host_stats(block.family, x, Labels(codes, weight, n_classes)))


def _class_without(block, x, codes, weight, i: int):
    """Block statistics of row ``i``'s class without row ``i``, counted from its other rows
    (float64, on the host): where removing the row from the class's statistics cancels."""
    rows = np.flatnonzero(codes == codes[i])
    rows = rows[rows != i]
    stats = _block_host_statistics(block, x[rows], np.zeros(len(rows), np.int64), weight[rows], 1)
    return type(stats)(*(np.asarray(leaf, np.float64)[0] if np.ndim(leaf) else leaf
                         for leaf in stats))


def _left_out(model, method, class_alpha, class_prior, full, counts, kept, raws, xs, codes,
              weight, quantity, first_row, row_index, host, without) -> np.ndarray:
    """The pointwise values of one chunk of rows (float64; x64 is on), on the host if
    ``host`` (:func:`_on_host`). ``kept``: the rows' scores under the full data's tables,
    constants included, class prior left out; ``first_row``: the chunk's first row among
    those of positive weight (``without``'s), ``row_index``: its rows in ``X``.

    Leaving row i out changes only its own class's statistics, so every other class keeps
    the full data's table: only the row's own class is made again without it, O(rows x
    columns) on top of one prediction, and its score changes by the difference of the
    family's own scores under the two tables. A family whose classes share a table
    (``couples_classes``: a pooled precision) has every class made again for every row."""
    m, n_classes = len(codes), len(model.classes)
    hot = np.eye(n_classes)[codes]  # (m, K): each row's own class
    # each row's statistics: the chunk's rows as so many "classes" of one row each
    rows = (_host_statistics(model, xs, np.arange(m), weight, m) if host else
            _statistics(model, raws, xs, np.arange(m), weight, bucket(m)))
    scores = kept + class_log_prior(counts - weight[:, None] * hot, class_alpha, class_prior,
                                    method)
    for b, (block, stats, row_stats, x) in enumerate(zip(model.blocks, full, rows, xs,
                                                         strict=True)):
        x = dense_block(x)
        if block.family.couples_classes():  # not in ``kept``
            scores += (_host_row_scores if host else _downdated_scores)(
                block, method, *_every_class(stats, row_stats, hot), x)
            scores += np.asarray(type(block.family).log_normalizer(x), np.float64)[:, None]
        else:
            own, removed = _own_class(stats, row_stats, codes)
            condition = type(block.family).removal_condition(own, removed)
            for r in np.flatnonzero(condition > RECOUNT_CONDITION) if condition is not None else ():
                for leaf, exact in zip(own, without(b, first_row + r), strict=True):
                    if np.ndim(leaf) >= 2:  # the class counted again, nothing left to remove
                        leaf[r, 0] = exact
                for leaf in removed:
                    if np.ndim(leaf) >= 2:
                        leaf[r, 0] = 0.0
            both = (_host_own_class_scores if host else _downdated_scores)(
                block, method, own, removed, x)
            scores[np.arange(m), codes] += _change(both[:, 0], both[:, 1])
    own = scores[np.arange(m), codes]
    if quantity == "joint":
        out = own
    else:
        top = np.max(scores, axis=1)
        shift = np.where(np.isfinite(top), top, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = own - (np.log(np.sum(np.exp(scores - shift[:, None]), axis=1)) + shift)
    bad = np.isnan(out) | (out == np.inf)
    if method == "ml":  # a class left without rows has no ML table (0/0), whatever it scores
        bad |= (weight > 0) & (counts[codes] - weight <= 0)
    if bad.any():
        i = int(np.argmax(bad))
        label = model.classes[codes[i]]
        label = label.item() if isinstance(label, np.generic) else label
        raise ValueError(
            f"row {row_index[i]}: leaving it out leaves class {label!r} without a defined "
            f"estimate under method={method!r} (no other observed value, or zero spread, "
            f"in some column; or every class has probability zero), so its leave-one-out "
            f"probability is undefined; use method='mean' or 'bayes'.")
    return out


def _weightless_rows(model, method, class_alpha, class_prior, full, counts, X, codes, dead,
                     quantity) -> np.ndarray:
    """The pointwise values of the rows ``dead`` of weight 0: the full fit's own
    log p(y_i | x_i) or log p(x_i, y_i), as ``predict_log_proba`` gives them (a value the fit
    never saw scored by the model's rule for unseen levels)."""
    scorer = _full_fit_scorer(model, method, class_alpha, class_prior, full, counts)
    with warnings.catch_warnings():  # an unseen value: said once, by the first prediction
        warnings.simplefilter("ignore", UnseenCategoryWarning)
        scores = scorer.scores(X, "joint")[0][dead]
    own = scores[np.arange(len(dead)), codes[dead]]
    if quantity == "joint":
        return own
    with np.errstate(invalid="ignore"):  # -inf less -inf: no class possible, NaN
        return own - logsumexp_rows(scores)[:, 0]


def _change(left_out: np.ndarray, full: np.ndarray) -> np.ndarray:
    """What leaving the row out changes in a score: 0 where it changes nothing (a row of
    weight 0, whose value its class may rule out: -inf both)."""
    with np.errstate(invalid="ignore"):
        return np.where(left_out == full, 0.0, left_out - full)


def _every_class(stats, row_stats, hot) -> tuple:
    """Per row, every class's statistics ``(m, K, ...)``, and the row's own in its class (0
    elsewhere), for ``remove_stats``; a class-free total (log coefficients, ``ndim`` 0) is
    not downdated."""
    m = hot.shape[0]

    def pair(full_leaf, row_leaf):
        full_leaf = np.asarray(full_leaf, np.float64)
        if full_leaf.ndim == 0:
            return np.broadcast_to(full_leaf, (m,)), np.zeros(m)
        own = hot.reshape(hot.shape + (1,) * (full_leaf.ndim - 1))
        row_leaf = np.asarray(row_leaf, np.float64)[:m]
        return np.broadcast_to(full_leaf, (m,) + full_leaf.shape), own * row_leaf[:, None]

    pairs = [pair(f, r) for f, r in zip(stats, row_stats, strict=True)]
    return type(stats)(*(p[0] for p in pairs)), type(stats)(*(p[1] for p in pairs))


def _own_class(stats, row_stats, codes) -> tuple:
    """Per row, its own class's statistics twice, as a table of two classes ``(m, 2, ...)``,
    and the row's own in the first (0 in the second), for ``remove_stats``: the class
    without the row, and with it."""
    m = len(codes)

    def pair(full_leaf, row_leaf):
        full_leaf = np.asarray(full_leaf, np.float64)
        if full_leaf.ndim == 0:
            return np.broadcast_to(full_leaf, (m,)), np.zeros(m)
        row_leaf = np.asarray(row_leaf, np.float64)[:m, None]
        return (np.repeat(full_leaf[codes][:, None], 2, axis=1),
                np.concatenate([row_leaf, np.zeros_like(row_leaf)], axis=1))

    pairs = [pair(f, r) for f, r in zip(stats, row_stats, strict=True)]
    return type(stats)(*(p[0] for p in pairs)), type(stats)(*(p[1] for p in pairs))


def _full_data_scores(model, method, class_alpha, class_prior, full, counts, X,
                      n: int) -> np.ndarray:
    """``(n, K)`` the ``n`` rows' joint scores under the tables of the full data's statistics
    ``full`` (as a prediction makes them, constants included), less the class prior, summed
    over the blocks whose classes have tables of their own (not ``couples_classes``)."""
    if all(b.family.couples_classes() for b in model.blocks):
        return np.zeros((n, len(counts)))
    scorer = _full_fit_scorer(model, method, class_alpha, class_prior, full, counts,
                              own_tables_only=True)
    joint = scorer.scores(X, "joint")[0]
    # a class of prior probability 0 keeps it without the row: -inf, whatever its scores
    with np.errstate(invalid="ignore"):  # -inf less -inf
        return np.where(np.isneginf(scorer.log_prior), -np.inf, joint - scorer.log_prior)


def _full_fit_scorer(model, method, class_alpha, class_prior, full, counts,
                     own_tables_only: bool = False):
    """The prediction scorer of ``model`` with the statistics ``full`` (recounted in
    float64), of its blocks whose classes have tables of their own with ``own_tables_only``."""
    blocks = tuple(b._replace(stats=s) for b, s in zip(model.blocks, full, strict=True)
                   if not (own_tables_only and b.family.couples_classes()))
    return table_scorer(model.replace(blocks=blocks, class_count=counts), method, class_alpha,
                        class_prior)


def _downdated_scores(block, method, full, row, x) -> np.ndarray:
    """``(m, K')`` row i's scores under the tables of ``full[i]`` less ``row[i]`` (per row
    ``K'`` classes: every class, or its own with and without the row), compiled."""
    m, rows = x.shape[0], bucket(x.shape[0])  # padded to a few sizes: compiled once for them
    out = _scores(type(block.family), method, levels_of(block.schema), block.prior,
                  type(full)(*(pad_rows(leaf, rows) for leaf in full)),
                  type(row)(*(pad_rows(leaf, rows) for leaf in row)), pad_rows(x, rows))
    return np.asarray(out, dtype=np.float64)[:m]


def _host_own_class_scores(block, method, full, row, x) -> np.ndarray:
    """:func:`_downdated_scores` of the rows' own classes (:func:`_own_class`) on the host:
    the ``m`` rows' tables of two classes each as one table of ``2 m`` classes (the family's
    classes are independent), every row scored under all of them and its own two read off,
    one call a chunk (at most ``_HOST_CHUNK_ROWS`` rows) rather than one a row."""
    m = x.shape[0]
    kept = type(block.family).remove_stats(full, row)
    # (m, 2, ...) leaves as (2 m, ...); a class-free total, the same in every row, once
    flat = type(kept)(*(leaf.reshape((2 * m,) + leaf.shape[2:]) if np.ndim(leaf) >= 2
                        else np.asarray(leaf)[0] for leaf in kept))
    scores = _host_table_scores(block, method, host_f64(block.prior), flat, x)
    return scores.reshape(m, m, 2)[np.arange(m), np.arange(m)]


def _host_row_scores(block, method, full, row, x) -> np.ndarray:
    """:func:`_downdated_scores` on the host, row by row (a family that ``couples_classes``:
    each row's classes make one table)."""
    kept = type(block.family).remove_stats(full, row)
    prior = host_f64(block.prior)
    return np.stack([_host_table_scores(block, method, prior, jax.tree_util.tree_map(
        lambda leaf, i=i: leaf[i], kept), x[i:i + 1])[0] for i in range(x.shape[0])])


def _host_table_scores(block, method: str, prior, kept, x) -> np.ndarray:
    """``(n, K)`` float64 scores of the rows ``x`` under the method's table from the
    statistics ``kept`` (the data without a row), by ``_host.host_scores``."""
    family, exact = type(block.family), method == "bayes"
    # ml/map may leave a class ruled out (log 0) or undefined (NaN): the caller names the row
    with np.errstate(divide="ignore", invalid="ignore"):
        table = family.posterior(prior, kept) if exact else family.estimate(prior, kept, method)
        return np.asarray(_host.host_scores(block.family, table, x, exact), np.float64)


@compiled(static_argnums=(0, 1, 2))
@full_float32
def _scores(family, method, levels, prior, full, row, x):
    """Per row: the statistics without the row (``remove_stats``), the method's table from
    them, and the row's log score under every class."""
    kept = family.remove_stats(full, row)

    def one(s, xi):
        if method == "bayes":
            return family.log_predictive(family.posterior(prior, s), xi[None], levels)[0]
        return family.log_likelihood(family.estimate(prior, s, method), xi[None], levels)[0]

    return jax.vmap(one)(kept, x)


# ---------------------------------------------------------------------- draws (ArviZ)
def draws_log_likelihood(model: FittedModel, class_prior, draws: dict, X, y,
                         quantity: str = "joint", sample_weight=None) -> np.ndarray:
    r"""``(chains, draws, n)``: per posterior draw :math:`\theta_s` and row,
    :math:`\log p(x_i, y_i \mid \theta_s)` (``"joint"``: the class term and every block,
    constants included) or :math:`\log p(y_i \mid x_i, \theta_s)` (``"conditional"``), for
    the ``log_likelihood`` group of ArviZ (PSIS-LOO, WAIC). ``class_prior`` is the fixed
    class probabilities, or None when they are drawn (site ``class_probs``).

    With ``sample_weight``, row i's values are multiplied by :math:`w_i`: its factor
    :math:`p(\cdot \mid \theta)^{w_i}` in the weighted likelihood the draws came from, so
    PSIS's ratios :math:`p^{-w_i}` leave the row out with all its weight, as
    :func:`leave_one_out` does; PSIS-LOO then estimates
    :math:`\log E[p(\cdot \mid \theta)^{w_i} \mid D_{-i}]`, the whole weighted row
    predicted (see ``NaiveBayes.to_arviz``). Rows with a missing label are refused: their
    label cannot be scored."""
    from ._missing_labels import missing_labels
    from .model import block_draws, joined_for_scoring

    if quantity not in QUANTITIES:
        raise ValueError(f"quantity must be one of {QUANTITIES}, got {quantity!r}.")
    check_parametric(model, "per-draw log likelihoods")
    raws, n = raw_blocks(model, X)
    missing = missing_labels(y)
    if missing.any():
        raise ValueError(
            f"y has {int(missing.sum())} missing labels (None, NaN or pd.NA; first at row "
            f"{int(np.argmax(missing))}): the log_likelihood group scores each row's label, "
            f"so it needs labelled rows. Pass the labelled ones, e.g. X[keep], y[keep] with "
            f"keep = pd.notna(y); the unlabeled rows stay in the posterior the draws come "
            f"from, so az.loo leaves out each labelled row with them kept.")
    codes = labels_to_codes(y, model.classes)
    if codes.shape[0] != n:
        raise ValueError(f"X has {n} rows but y has {codes.shape[0]} labels.")
    weight = None if sample_weight is None else check_weight(sample_weight, n)
    shape = next(iter(draws.values())).shape[:2]
    n_draws = shape[0] * shape[1]
    with jax.enable_x64(True):
        xs = []
        for b, raw in zip(model.blocks, raws, strict=True):
            x = b.family.encode(raw, b.schema, unseen="smooth")
            xs.append(dense_block(x))
        # blocks of one family as one wider block (``_joined_blocks``): one program for them
        blocks, draws, xs = joined_for_scoring(model.blocks, draws, xs)
        flat = {k: np.asarray(v).reshape((-1,) + np.shape(v)[2:]) for k, v in draws.items()}
        class_lp = (np.log(flat["class_probs"]) if class_prior is None else
                    np.broadcast_to(np.log(class_prior), (n_draws, len(model.classes))))
        tables = tuple(
            _draw_tables(type(b.family), type(b.family).posterior(b.prior, b.stats), own)
            for b, own in zip(blocks, block_draws(flat, blocks), strict=True))
        families = tuple(type(b.family) for b in blocks)
        levels = tuple(levels_of(b.schema) for b in blocks)
        width = sum(x.shape[1] for x in xs) + len(model.classes)
        rows = even_rows(n, max(8, _BUDGET // max(1, n_draws * width)))
        out = np.empty((n_draws, n))
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            m = batch_bucket(stop - start, rows)
            s = _draw_scores(families, levels, quantity == "joint", jnp.asarray(class_lp),
                             tables, tuple(jnp.asarray(pad_rows(x[start:stop], m)) for x in xs),
                             jnp.asarray(pad_rows(codes[start:stop], m)))
            out[:, start:stop] = np.asarray(s, dtype=np.float64)[:, :stop - start]
    if weight is not None:  # a row of weight 0 is no factor of the likelihood: 0, not 0 * -inf
        out = np.where(weight > 0, weight * out, 0.0)
    return out.reshape(shape + (n,))


def _draw_tables(family, posterior, sample):
    """The plug-in table of every draw (a leading draw axis): compiled, or for a family with
    a site per column built on the host (``_draws_host.draw_tables``)."""
    if family.column_sites:
        from ._draws_host import draw_tables  # NumPyro's import: not for the exact LOO

        return draw_tables(family, sample, posterior)
    return _vmapped_tables(family, posterior, jax.tree_util.tree_map(jnp.asarray, sample))


@compiled(static_argnums=0)
@full_float32
def _vmapped_tables(family, posterior, sample):
    return jax.vmap(lambda one: family.params_from_sample(one, posterior))(sample)


@compiled(static_argnums=(0, 1, 2))
@full_float32
def _draw_scores(families, levels, joint, class_lp, tables, xs, codes):
    """``(S, m)``: log p(x_i, y_i | theta_s) (``joint``) or log p(y_i | x_i, theta_s)."""

    def one_draw(lp, tabs):
        s = lp[None, :] + sum(form_of(f).log_likelihood(t, x, v) for f, t, x, v in
                              zip(families, tabs, xs, levels, strict=True))
        own = jnp.take_along_axis(s, codes[:, None], axis=1)[:, 0]
        if joint:
            return own + sum(f.log_normalizer(x) for f, x in zip(families, xs, strict=True))
        return own - jax.nn.logsumexp(s, axis=1)

    return jax.vmap(one_draw)(class_lp, tables)
