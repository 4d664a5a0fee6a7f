"""From a fitted model to class scores: one scorer per (fitted model, method).

A method turns the fitted value into a *scorer* once:

* :class:`TableScorer` for parameter tables: the plug-in estimates of ``ml``, ``map`` and
  ``mean`` (undefined ones refused here, naming the column and class), stated tables
  (:func:`bayesnb.from_tables`), or the exact conjugate posteriors of ``bayes`` (each family's
  posterior predictive);
* :class:`DrawsScorer` for posterior draws (``mcmc``): p(x, c | data) averaged over them.

Every prediction goes through ``scorer.scores(table, output)``. Whether the input is dense
(streamed through the compiled kernels) or SciPy-sparse (each family's sparse products) is
decided inside, by the data and the family.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from scipy import sparse

from ._blocks import (
    FEATURE_NAMES_WARNING,
    block_source,
    levels_of,
    raw_blocks,
    with_absent_columns,
)
from ._classes import class_log_prior
from ._data import as_table
from ._joined_blocks import join, joined_blocks, joined_model
from .families._base import float64_mode
from .fast import (
    _exact,
    _host,
    _kernels,
    float32_safe,
    form_of,
    reference_precision,
)
from .fast._compiled import compiled
from .fast._kernels import full_float32
from .fitted import FittedBlock, FittedModel


class TableScorer(NamedTuple):
    """Scores from one table per block: plug-in estimates or exact posteriors (``exact``)."""

    model: FittedModel
    exact: bool
    log_prior: np.ndarray  # (K,) float64 (a kernel receives it in its dtype)
    tables: tuple
    unseen: str  # what a category level unseen in training means (see Categorical.encode)
    joined: TableScorer | None = None  # the same scores with blocks joined (``_joined``)

    def scores(self, X, output: str) -> tuple[np.ndarray, np.ndarray]:
        """``(n, K)`` scores (``output`` as in ``_kernels.chosen``: "scores", log p(x, c) up
        to a constant per row; "joint"; "proba"; "log_proba"; or "partial": scores others
        are added to) and the per-row log normaliser of the class scores (only its
        finiteness is read: :func:`check_rows_defined`).

        The joint density is computed in float64 whatever the dtype: its class-free constants
        (log x!, log n!, the reference class's terms) are large numbers whose float32
        rounding swamps what separates the classes (Poisson counts near 1e6: -48 against
        SciPy's -43.53), and the kernels' rounding bound covers only the shifted scores. So
        is everything, in float32, for a model with a family the fast layer has no
        float32-safe form for (``fast.float32_safe``)."""
        if self.joined is not None:
            try:
                return self.joined.scores(X, output)
            except _kernels.InexactScores:  # the blocks apart: their own bounds, or a refusal
                pass                         # that names them
        if not float64_mode() and (output == "joint" or
                                   not float32_safe(self.model.families)):
            with jax.enable_x64(True):
                return self.scores(X, output)
        blocks = self.model.blocks
        # a device-resident jax.Array stays on its device for the streamed kernels; the exact
        # count predictive's host tails and the host-scored blocks read NumPy
        on_device = not (self.exact and any(_exact.counted(f) for f in self.model.families))
        # the fitted columns a DataFrame lacks are added (warned about) here, once: the blocks
        # scored apart below (``_partial_scores``, ``_sparse_scores``) read X again
        X = absent_added(self.model, X)
        raws, n = raw_blocks(self.model, X, on_device=on_device)
        if any(sparse.issparse(raw) for raw in raws):
            return self._sparse_scores(X, raws, output)
        n_classes = len(self.model.classes)
        if n == 0:
            return np.zeros((0, n_classes)), np.zeros(0)
        if _host.scored_on_host(self.model.families, raws, n_classes):
            answered = self._dense_host_scores(raws, output)
            if answered is not None:
                return answered
        host = [i for i, b in enumerate(blocks)
                if b.family.nonparametric or form_of(b.family).host_counting]
        if host:  # scored on the host, added to the kernel's scores of the other blocks
            total = self._host_scores(blocks[host[0]], self.tables[host[0]], raws[host[0]], n,
                                      output)
            for i in host[1:]:
                total += self._host_scores(blocks[i], self.tables[i], raws[i], n, output)
            rest = [i for i in range(len(blocks)) if i not in host]
            scores = self._partial_scores(X, rest, output) if rest else self.log_prior
            total += np.asarray(scores)  # in place (one (n, K) array, normalised in place)
            return normalised(total, output, out=total)
        sources = [block_source(b.family, raw, b.schema, self.unseen)
                   for b, raw in zip(blocks, raws, strict=True)]
        levels = tuple(levels_of(b.schema) for b in blocks)
        if self.exact and any(_exact.counted(f) for f in self.model.families):
            # indicator products and host tails (see ``_exact``), normalised after the tails
            return normalised(_exact.stream(self.model.families, levels, output == "joint",
                                            self.log_prior, self.tables, sources, n,
                                            n_classes, added=output == "partial"), output)
        # the plug-in, or an exact predictive with no host tail: normalised in the kernel; a
        # device-resident X gets device-resident scores where every block streams there
        return _kernels.stream_scores(self.model.families, levels, self.exact, output,
                                      self.log_prior, self.tables, sources, n, n_classes,
                                      device_out=isinstance(X, jax.Array)
                                      and output not in ("joint", "partial"))

    def _partial_scores(self, X, rest: list, output: str):
        """The prior and blocks ``rest`` 's scores, to which the caller adds the others': in
        float32 where their rounding bounds over every class allow it, else in float64 (the
        added scores may give any class the probability these blocks deny it)."""
        scorer = self._replace(model=self.model.replace(blocks=tuple(
            self.model.blocks[i] for i in rest)), tables=tuple(self.tables[i] for i in rest))
        output = "joint" if output == "joint" else "partial"
        with warnings.catch_warnings():  # X read again: its feature-names warning was given
            warnings.filterwarnings("ignore", FEATURE_NAMES_WARNING, UserWarning)
            try:
                return scorer.scores(X, output)[0]
            except _kernels.InexactScores:
                with jax.enable_x64(True):
                    return scorer.scores(X, output)[0]

    def _host_scores(self, block, table, raw, n: int, output: str) -> np.ndarray:
        """``(n, K)`` float64 log p(x | c) of a block scored on the host, constants included:
        a new array (the caller adds to it in place)."""
        if block.family.nonparametric:
            x = block.family.encode(raw, block.schema)
            with np.errstate(over="ignore"):  # far beyond a tiny bandwidth: a density of 0
                scores = np.array(block.family.host_log_likelihood(table, x), dtype=np.float64)
            if output != "joint":  # log p(x, c) = -inf is an answer; p(c | x) = 0/0 is not
                _check_some_density(block, table, x, scores)
            return scores
        return _host.stream_scores(block, table, raw, n, len(self.model.classes), self.unseen,
                                   self.exact)

    def _dense_host_scores(self, raws, output):
        """Scores of dense blocks in float64 on the host (``_host.host_scores``: the forms'
        products, or the families' own maths), in row chunks that stay in cache
        (``_host.product_chunks``), each block's chunk validated by its family's ``encode``
        (an error names the row of the block); None where a missing count (NaN) reached a
        row's normaliser, past what the family's maths take on the host
        (:data:`_host.HOST_MATHS_ENTRIES`): the kernels' masked forms score it."""
        blocks = self.model.blocks
        n, n_classes = raws[0].shape[0], len(self.model.classes)
        out, norm = np.empty((n, n_classes)), np.empty(n)
        for start, stop in _host.product_chunks(n, sum(raw.shape[1] for raw in raws)):
            xs = [_encoded_rows(block, raw, start, stop, self.unseen)
                  for block, raw in zip(blocks, raws, strict=True)]
            scores = self.log_prior
            for block, table, x in zip(blocks, self.tables, xs, strict=True):
                block_scores = self._host_block_scores(block, table, x,
                                                       _host.HOST_MATHS_ENTRIES)
                block_scores += scores  # in place: the products are fresh arrays
                scores = block_scores
            if output == "joint":
                scores += log_normalizer(blocks, xs)
            out[start:stop], norm[start:stop] = normalised(scores, output, out=scores)
            # a missing count's NaN reaches its row's normaliser (every other score is a
            # number or -inf: the products' impossible classes)
            if np.isnan(norm[start:stop]).any():
                return None
        return out, norm

    def _host_block_scores(self, block, table, x, maths_entries: int | None = None
                           ) -> np.ndarray:
        """``(n, K)`` float64 log p(x | c) of a block on the host (``_host.host_scores``, a
        missing count by the family's maths within ``maths_entries``), a fresh array: the
        exact predictive or the plug-in, of a sparse or a dense float64 ``x``."""
        return _host.host_scores(block.family, table, x, self.exact, maths_entries)

    def _sparse_scores(self, X, raws, output):
        """Scores of a sparse input: the sparse blocks by their form's sparse products, the
        others (read densified chunk by chunk, ``_data.SparseRows``) by the dense path."""
        blocks = self.model.blocks
        at = [i for i, raw in enumerate(raws) if sparse.issparse(raw)]
        rest = [i for i in range(len(blocks)) if i not in at]
        scores = np.asarray(self.log_prior, dtype=np.float64)
        if rest:  # the prior and the dense blocks (their constants too, for "joint")
            scores = np.asarray(self._partial_scores(X, rest, output), dtype=np.float64)
        xs = [blocks[i].family.encode(raws[i], blocks[i].schema, unseen=self.unseen)
              for i in at]
        for i, x in zip(at, xs, strict=True):
            block_scores = self._host_block_scores(blocks[i], self.tables[i], x)
            block_scores += scores  # in place: the (n, K) products are fresh arrays
            scores = block_scores
        if output == "joint":
            scores = scores + log_normalizer([blocks[i] for i in at], xs)
        return normalised(scores, output)


def absent_added(model, X):
    """A DataFrame ``X`` with the fitted columns it lacks added as missing in every row, and one
    ``AbsentColumnWarning`` (:func:`bayesnb._blocks.with_absent_columns`); other input as
    given. Reading the result again (``raw_blocks``) adds nothing and warns no more, so a
    prediction that reads X twice (blocks scored apart) warns once (the draws' predictive
    does the same, ``inference._absent_added``)."""
    if not isinstance(X, pd.DataFrame):
        return X
    return with_absent_columns(model, as_table(X)).frame


class DrawsScorer:
    """Scores averaged over posterior draws: log E_theta[p(x, c | theta)].

    The draws never change, so what depends on them alone (their tables laid out for the
    products, the extremes of the float32 rounding bound) is built at the first prediction
    and kept in ``prepared`` (``inference.predict_from_draws``), not rebuilt per call."""

    def __init__(self, model: FittedModel, class_prior: np.ndarray | None, draws: dict):
        self.model = model
        self.class_prior = class_prior  # fixed class probabilities, else drawn ("class_probs")
        self.draws = draws
        self.prepared: dict = {}

    def scores(self, X, output: str) -> tuple[np.ndarray, np.ndarray]:
        from .inference import encode_dense, predict_from_draws, predict_rows
        from .model import joined_for_scoring

        if output == "joint":  # in float64 whatever the dtype, as ``TableScorer.scores``
            with jax.enable_x64(True):
                xs = encode_dense(self.model, X, "smooth")
                blocks, draws, joined = joined_for_scoring(self.model.blocks, self.draws, xs)
                joint = predict_from_draws(blocks, self.class_prior, draws, joined,
                                           interval=None, prepared=self.prepared,
                                           joint_only=True)["log_joint"]
                return normalised(joint + log_normalizer(self.model.blocks, xs), output)
        joint = predict_rows(self.model, self.class_prior, self.draws, X, "smooth",
                             interval=None, prepared=self.prepared,
                             joint_only=True)["log_joint"]
        return normalised(joint, output)


def table_scorer(model: FittedModel, method: str, class_alpha, class_prior) -> TableScorer:
    """The scorer of a closed-form method (``ml``, ``map``, ``mean``, ``bayes``), or of the
    stated tables of a model built from them (whatever ``method`` is)."""
    if model.stated is not None:
        log_prior, tables = model.stated
        return TableScorer(model, False, _host_f64(log_prior), tuple(tables),
                           "stated tables")
    log_prior = class_log_prior(model.class_count, class_alpha, class_prior, method)
    with reference_precision(model.families):
        tables = tuple(_table(block, model.classes, method) for block in model.blocks)
    scorer = TableScorer(model, method == "bayes", _host_f64(log_prior), tables,
                         "method='ml'" if method == "ml" else "smooth")
    return scorer._replace(joined=_joined(scorer))


def _joined(scorer: TableScorer) -> TableScorer | None:
    """``scorer`` with its joinable blocks joined column-wise (``_joined_blocks``), their
    tables concatenated along the columns; None where nothing joins. A model declared column
    by column then streams one table a family: 1,000 one-column Gaussian blocks made the
    kernels take 4,000 arguments and compile for 4.5 s."""
    blocks = scorer.model.blocks
    if len(blocks) < 2:
        return None
    groups = joined_blocks(blocks, [str(i) for i in range(len(blocks))])
    if len(groups) == len(blocks):
        return None
    return scorer._replace(
        model=scorer.model.replace(blocks=joined_model(blocks, groups)),
        tables=tuple(join([scorer.tables[i] for i in g.blocks], scalars="shared")
                     for g in groups))


def _table(block: FittedBlock, classes, method: str):
    """One block's scoring table: its plug-in estimates, or its posterior for ``bayes``."""
    family = type(block.family)
    if family.nonparametric:  # no parameters: one table, the sample, for every method
        return block.family.host_table(block.prior, block.stats, block.schema, classes)
    if method == "bayes":
        return _kernels.posterior(family, block.prior, block.stats)
    block.family.check_prior(block.prior, block.schema, method)
    block.family.check_estimate(block.prior, block.stats, block.schema, classes, method)
    params = _kernels.estimate(family, block.prior, block.stats, method)
    check_defined(params, block, classes, method)
    return params


def _host_f64(values) -> np.ndarray:
    """A read-only float64 NumPy copy: host-side scores keep float64, and a kernel converts its
    arguments to its dtype without compiling (``jnp.asarray`` would compile a conversion)."""
    out = np.array(values, dtype=np.float64)
    out.flags.writeable = False
    return out


def check_defined(params, block: FittedBlock, classes, method: str) -> None:
    """Raise a ValueError naming the column and class where a plug-in estimate is undefined:
    0/0 under ML (no observed value), a MAP whose prior pseudo-counts are not positive (a
    concentration of at most 1 that the class's data do not lift), a zero variance, or a
    non-positive precision."""
    columns, family = block.schema.columns, block.family
    for name, leaf in zip(type(params)._fields, params, strict=True):
        leaf = np.asarray(leaf)
        if leaf.ndim != 2 or leaf.shape[0] != len(classes):
            continue
        undefined = np.isnan(leaf)
        degenerate = (leaf == np.inf) | ((leaf <= 0) if name in family.positive_params
                                         else False)
        bad = undefined | degenerate
        if not bad.any():
            continue
        k, j = map(int, np.argwhere(bad)[0])
        col = columns[family.column_of(block.prior, j)]
        remedy = ("The data give no information there; use method='mean' or 'bayes' (the "
                  "prior fills the gap).")
        if undefined[k, j] and method == "map":
            # the mode's pseudo-counts are concentration - 1: a prior below 1 (or a flat one
            # and no data) leaves a numerator or denominator at or below 0, not a 0/0 of data
            reason = "the posterior mode is undefined or on the boundary"
            remedy = ("The prior's concentration is at most 1 here (a pseudo-count of zero or "
                      "below) and the class's data do not lift it; use method='mean' or "
                      "'bayes', or a prior concentration of at least 1.")
        elif undefined[k, j]:
            reason = "no observed value in this class, so the estimate is 0/0"
        elif name in family.positive_params and method == "ml":
            reason = ("zero variance (every value of the class equal, a single value, or "
                      "a spread too small for float64 to square: then rescale the column)")
            # Barber's 0/1 table as integers: the advice to smooth a Gaussian gave 0.979
            remedy += (" A column of 0/1 values or of category codes is better declared "
                       "Bernoulli() or Categorical() (features=...) than modelled as numbers.")
        elif leaf[k, j] == np.inf:  # e.g. the rate of values of 1e-320
            reason = (f"an estimate beyond float64's range ({name} = inf: values too close to "
                      f"0, or too large, for float64 to hold it)")
            remedy = "Rescale the column (or model it on a log scale)."
        else:
            reason = "no defined estimate (the posterior mode is at the boundary)"
        label = classes[k].item() if isinstance(classes[k], np.generic) else classes[k]
        raise ValueError(
            f"column {col!r}, class {label!r}: {reason} under method={method!r} "
            f"({block.family.name} {name}). {remedy}")


def _check_some_density(block, table, x: np.ndarray, scores: np.ndarray) -> None:
    """Refuse rows whose value has density 0 in every class of a nonparametric block (a
    value farther from every training value than its kernel reaches: beyond a compact
    kernel's support, or where a tiny bandwidth underflows), naming the column and the rows:
    no method's smoothing changes a kernel density."""
    zero = ~np.isfinite(scores).any(axis=1)
    if not zero.any():
        return
    rows = np.flatnonzero(zero)
    i = int(rows[0])

    def impossible(j) -> bool:  # the row's value in column j alone, the others missing
        alone = np.full((1, x.shape[1]), np.nan)
        alone[0, j] = x[i, j]
        with np.errstate(over="ignore"):
            return not np.isfinite(block.family.host_log_likelihood(table, alone)).any()

    shown = ", ".join(map(str, rows[:10])) + (", ..." if rows.size > 10 else "")
    j = next((j for j in range(x.shape[1]) if impossible(j)), None)
    if j is None:  # no column alone rules every class out: together they do
        columns = ", ".join(map(repr, block.schema.columns[:10]))
        raise ValueError(
            f"row {i} ({rows.size} such rows: {shown}): columns {columns} together leave "
            f"every class density 0 (each column's value is reached by the kernels of some "
            f"class, but no class reaches them all), so p(class | x) is undefined under every "
            f"method. Use a larger bandwidth (adjust) or a kernel of unbounded support "
            f"(kernel='gaussian').")
    column = block.schema.columns[j]
    widest = float(np.nanmax(table.bandwidth[:, j]))
    adjust = float(np.broadcast_to(np.asarray(block.family.adjust, dtype=np.float64),
                                   (x.shape[1],))[j])
    raise ValueError(
        f"column {column!r}: the value {x[i, j]:.6g} (row {i}; {rows.size} such rows: "
        f"{shown}) has density 0 in every class: {block.family!r} (bandwidth at most "
        f"{widest:.3g}) does not reach it from the training values, so p(class | x) is "
        f"undefined under every method. Use a larger bandwidth (e.g. adjust={2 * adjust:g}) "
        f"or a kernel of unbounded support (kernel='gaussian').")


def check_rows_defined(norm: np.ndarray, method: str | None, culprits=None) -> None:
    """Refuse rows where every class has probability zero (p(class | x) is 0/0). A
    device-resident ``norm`` is checked on its device (one flag read back). ``method``:
    None for a model of stated tables (``from_tables``), which every method reads as given.
    ``culprits(i)``: the message's account of the columns that zero row ``i``'s classes."""
    if isinstance(norm, jax.Array):
        if bool(_all_finite(norm)):
            return
        norm = np.asarray(norm)
    impossible = ~np.isfinite(norm)
    if np.any(impossible) and method is None:
        i = int(np.argmax(impossible))
        raise ValueError(
            f"row {i}: the stated tables give every class probability zero "
            f"({int(impossible.sum())} such rows), so p(class | x) is undefined; no method "
            f"changes stated tables: state a probability above 0 for the row's values in "
            f"some class.")
    if np.any(impossible):
        i = int(np.argmax(impossible))
        advice = {"ml": "Use method='mean', 'bayes', or 'map' with a concentration above 1.",
                  "map": "Use method='mean' or 'bayes' (under 'map' a concentration above 1 "
                         "smooths too)."}.get(method, "Under this method only a prior of "
                                                  "concentration 0 gives a zero probability.")
        if not float64_mode() and method not in ("ml", "map"):
            advice += (" In float32 (JAX's default dtype) a probability below about 1e-38 is "
                       "0: for a model with probabilities that small, enable x64: "
                       "jax.config.update(\"jax_enable_x64\", True).")
        elif method not in ("ml", "map"):
            advice += (" In float64 a density below about 1e-308 is 0: rescale a column of "
                       "values that extreme.")
        raise ValueError(
            f"row {i}: every class has probability zero under method={method!r} "
            f"({int(impossible.sum())} such rows), so p(class | x) is undefined"
            f"{_account(culprits, i)}; a value never seen in training meets an "
            f"unsmoothed estimate. {advice}")


def _account(culprits, i: int) -> str:
    """``culprits(i)``, or nothing where it cannot tell (the refusal itself stands)."""
    try:
        return culprits(i) if culprits else ""
    except (TypeError, ValueError, KeyError, IndexError):
        return ""


def _encoded_rows(block, raw, start: int, stop: int, unseen: str) -> np.ndarray:
    """Rows ``start:stop`` of a dense block validated and converted to float64 by its family;
    an invalid value is reported from the whole block, so the error names its row there."""
    try:
        return block.family.encode(raw[start:stop], block.schema, unseen=unseen,
                                   dtype=np.float64)
    except (TypeError, ValueError):
        if start > 0:
            block.family.encode(raw, block.schema, unseen=unseen)
        raise


def answer(X, scores, norm, method: str | None, culprits=None):
    """A prediction's ``scores`` as the estimator returns them: refused where a row is
    undefined (:func:`check_rows_defined`), and of ``X``'s kind. For a ``jax.Array`` ``X``
    a ``jax.Array`` on its device, as scikit-learn's array-API mode returns the input's kind:
    device-resident results (``_kernels._device_results``: normalised there, so rows sum to 1
    to its precision) in JAX's float dtype, host results (NumPy float64: the
    host-scored blocks, the exact count predictive, the draws) converted to JAX's float dtype
    (float32 unless x64 is enabled) there. NumPy, pandas and other input: float64 NumPy."""
    check_rows_defined(norm, method, culprits)  # an undefined posterior has no best class
    if isinstance(scores, jax.Array):  # float64 if redone so (``fast.float32_safe``)
        return scores.astype(jnp.result_type(float))
    if not isinstance(X, jax.Array):
        return scores
    return jax.device_put(np.asarray(scores, dtype=jnp.result_type(float)),
                          next(iter(X.devices())))


def best_index(scores) -> np.ndarray:
    """Per row, the index of the highest score (ties: the first); a ``jax.Array`` 's on its
    device, only the indices read back."""
    if isinstance(scores, jax.Array):
        return np.asarray(jnp.argmax(scores, axis=1))
    return np.argmax(scores, axis=1)


@compiled
@full_float32
def _all_finite(x):
    return jnp.all(jnp.isfinite(x))


def log_normalizer(blocks, xs) -> np.ndarray:
    """``(n, 1)``: the class-free constants the class scores leave out, in float64 whatever
    the dtype (log x! of counts near 1e6 is about 1.3e7: float32 keeps it to within 1)."""
    with jax.enable_x64(True):  # families written with jax.numpy still compute in float64
        total = sum(form_of(b.family).sparse_log_normalizer(x) if sparse.issparse(x) else
                    np.asarray(type(b.family).log_normalizer(np.asarray(x, dtype=np.float64)),
                               dtype=np.float64)
                    for b, x in zip(blocks, xs, strict=True))
    return np.reshape(total, (-1, 1))


#: rows normalised at a time on the host, so the passes over a chunk stay in cache
#: (re-measure with ``benchmarks/tune.py NORMALISE_ROWS``)
NORMALISE_ROWS = 1 << 12


def normalised(scores: np.ndarray, output: str,
               out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Host-side counterpart of ``_kernels.scores`` (host, sparse and draw-averaged paths):
    the scores (``"scores"``, ``"joint"``), p(c | x) (``"proba"``: exponentials of the scores
    shifted by the row maximum, divided by their sum) or log p(c | x) (``"log_proba"``), and
    the per-row log normaliser; row chunk by row chunk (whole-array passes over a tall
    ``(n, K)`` array leave the cache), each chunk transposed (:func:`_normalised_rows`).
    ``out`` (float64, ``scores`` itself allowed) receives the probabilities."""
    scores = np.asarray(scores, dtype=np.float64)
    if output in ("scores", "joint", "partial") or scores.size == 0:
        norm = logsumexp_rows(scores)[:, 0]
        if output in ("scores", "joint", "partial"):
            return scores, norm
        return _kernels.finish(scores, output), norm
    out = np.empty_like(scores) if out is None else out
    norm = np.empty(scores.shape[0])
    for start in range(0, scores.shape[0], NORMALISE_ROWS):
        rows = slice(start, start + NORMALISE_ROWS)
        out[rows], norm[rows] = _normalised_rows(scores[rows], output)
    return out, norm


def _normalised_rows(scores: np.ndarray, output: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`normalised`'s values (a transposed view) and log normaliser of a chunk of rows,
    computed on its transpose ``(K, rows)``: NumPy's reductions over the classes then run
    along the first axis, faster than over a short last axis."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        shifted = scores.T.copy()
        top = shifted.max(axis=0)
        shift = np.where(np.isfinite(top), top, 0.0)
        shifted -= shift
        weight = np.exp(shifted)
        total = weight.sum(axis=0)
        if output == "proba":
            weight /= total
            values = weight
        else:
            shifted -= np.log(total)
            values = shifted
        return values.T, np.log(total) + shift


def logsumexp_rows(scores) -> np.ndarray:
    """``log sum_k exp(scores[:, k])`` as an ``(n, 1)`` column, shifted by the row maximum.

    Equal to ``scipy.special.logsumexp(scores, axis=1, keepdims=True)`` (a row of -inf gives
    -inf, a NaN gives NaN) at a fraction of its cost on tall, narrow score matrices.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return np.full((scores.shape[0], 1), -np.inf)
    out = np.empty(scores.shape[0])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for start in range(0, scores.shape[0], NORMALISE_ROWS):  # chunks stay in cache
            rows = slice(start, start + NORMALISE_ROWS)
            shifted = scores[rows].T.copy()  # as in ``_normalised_rows``
            top = shifted.max(axis=0)
            shift = np.where(np.isfinite(top), top, 0.0)
            shifted -= shift
            out[rows] = np.log(np.exp(shifted).sum(axis=0)) + shift
    return out[:, None]
