"""The fitted model as one immutable value, and the pure functions that build it.

Everything a fit learns is a :class:`FittedModel`: the classes and their weighted counts, the
columns, and per block of columns its family, schema (category levels), prior and per-class
sufficient statistics. It is built only by the functions below, never changed in place:

* :func:`add_chunk` is a fit (``model=None``) or a conjugate update (``partial_fit``): the
  statistics of the chunk merged with the model's;
* :func:`chunk_statistics`, :func:`merge_statistics` and :func:`with_statistics` are the same
  steps apart, for chunked and Dask fits that compute statistics where the data are;
* :func:`merge_models` adds the statistics of models fitted on different data.

The estimator installs the result with one assignment (``NaiveBayes.fitted_``), so a fit that
fails leaves the estimator as it was, and a prediction running in another thread sees the old
or the new model, never a mixture.
"""

from __future__ import annotations

import dataclasses
import functools
from contextlib import nullcontext
from typing import Any, NamedTuple

import jax
import numpy as np

from ._blocks import block_positions, block_source, kernel_reads_raw, levels_of
from ._data import (
    FrameBlock,
    SparseRows,
    Table,
    declared_classes,
    declared_columns,
    encode_labels,
    factor_levels,
    labels_to_codes,
    resolve_features,
    sample_weight_array,
    weighed,
)
from ._joined_blocks import Joined, joined_blocks, joined_model
from .families import Family, Schema
from .families._base import float64_mode, host_f64
from .families._levels import _show
from .fast import _host, _kernels, float32_safe, form_of


class FittedBlock(NamedTuple):
    """One block of columns after fitting: everything a prediction or a saved model needs."""

    family: Family
    schema: Schema
    positions: tuple
    prior: Any  # the family's prior NamedTuple
    stats: Any  # per-class sufficient statistics (None for a model built from tables)


class NutsRun(NamedTuple):
    """NUTS draws of a fitted model: ``draws`` ``{site: (chains, draws, ...)}``, NumPyro's
    ``sample_stats`` (divergences, steps), and the settings ``key`` they were run with."""

    key: tuple
    draws: dict
    sample_stats: dict


@dataclasses.dataclass(frozen=True, eq=False)
class FittedModel:
    """What a fit learned: one immutable value.

    Attributes
    ----------
    classes : ndarray of shape (K,)
        Sorted labels.
    class_count : ndarray of shape (K,)
        Weighted number of training rows per class (float64).
    columns : tuple
        The input's column labels (names of a DataFrame, else positions).
    named : bool
        Whether a DataFrame's columns are matched by name (the fit's input was a DataFrame,
        whatever its column labels: strings, integers or a mix).
    blocks : tuple of FittedBlock
    stated : (log class prior, per-block tables) or None
        Set for a model built from stated tables (:func:`bayesnb.from_tables`): no statistics.
    unlabeled : tuple of encoded blocks or None
        Rows without a label (semi-supervised ``method="mcmc"``).
    nuts : NutsRun or None
        NUTS draws, for ``method="mcmc"``.
    """

    classes: np.ndarray
    class_count: np.ndarray
    columns: tuple
    named: bool
    blocks: tuple
    stated: tuple | None = None
    unlabeled: tuple | None = None
    nuts: NutsRun | None = None

    def __post_init__(self):
        # read-only views: an in-place edit of classes_, class_count_ or a block's statistics
        # would reach the saved file and the next partial_fit but not the cached scorer
        object.__setattr__(self, "classes", _read_only(self.classes))
        object.__setattr__(self, "class_count", _read_only(self.class_count))
        object.__setattr__(self, "blocks", tuple(_read_only_block(b) for b in self.blocks))

    def __setstate__(self, state: dict) -> None:  # pickle, joblib, deepcopy: views again
        self.__dict__.update(state)
        self.__post_init__()

    def replace(self, **changes) -> FittedModel:
        return dataclasses.replace(self, **changes)

    @property
    def families(self) -> tuple:
        return tuple(type(b.family) for b in self.blocks)


def _read_only(tree):
    """``tree`` with each NumPy array a read-only view of itself (the arrays themselves,
    which may be a caller's, keep their flags)."""
    def view(leaf):
        if not isinstance(leaf, np.ndarray) or not leaf.flags.writeable:
            return leaf
        leaf = leaf.view()
        leaf.flags.writeable = False
        return leaf

    if not any(isinstance(leaf, np.ndarray) and leaf.flags.writeable
               for leaf in jax.tree_util.tree_leaves(tree)):
        return tree  # a model's replace: its blocks are views already
    return jax.tree_util.tree_map(view, tree)


def _read_only_block(block: FittedBlock) -> FittedBlock:
    prior, stats = _read_only(block.prior), _read_only(block.stats)
    return block if prior is block.prior and stats is block.stats else block._replace(
        prior=prior, stats=stats)


# ---------------------------------------------------------------------- input checks
def check_weight(sample_weight, n_rows: int, part: bool = False) -> np.ndarray:
    """Per-row weights as float64 (ones when ``None``, the number for every row when one
    number), refused unless finite, >= 0, not all zero and, in float32, representable. With
    ``part`` the rows are one chunk or partition of a fit, whose weights may all be zero (the
    caller checks the fit's total: a batch fit takes such rows)."""
    if sample_weight is None:
        return np.ones(n_rows)
    w = sample_weight_array(sample_weight)
    if w.ndim == 0:  # one weight for every row, as scikit-learn takes it
        w = np.full(n_rows, w)
    if w.shape != (n_rows,):
        raise ValueError(f"sample_weight must have shape ({n_rows},), got {w.shape}.")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sample_weight must be finite and non-negative.")
    from .families._base import FLOAT32_SAFE

    if not float64_mode() and np.any(w > FLOAT32_SAFE):
        raise ValueError(f"sample_weight has values above {FLOAT32_SAFE:g}, too large for "
                         "float32 (the default dtype); rescale or enable JAX's x64 mode.")
    if n_rows and not part and not np.any(w > 0):
        raise ValueError("sample_weight is zero for every row: there is nothing to fit.")
    return w


# ---------------------------------------------------------------------- building the value
def add_chunk(model: FittedModel | None, features, table: Table, y, sample_weight=None,
              classes=None, *, infer_counts: bool = False, use_kernel: bool = False,
              part: bool = False, decay: float = 1.0,
              schema_from_every_row: bool = False) -> FittedModel:
    """``model`` updated with one chunk of rows, or (``model=None``) a new fit of it.

    A new fit learns the classes (or takes ``classes``), the block structure
    (``features``, inferred from dtypes where not given, counts as Poisson under
    ``infer_counts``) and the category levels; an update
    matches columns by name (DataFrames) or position and merges the chunk's statistics with
    the model's by each family's exact ``merge_stats``, so any chunking gives the batch fit.
    ``use_kernel`` infers numeric columns as KernelDensity instead of Gaussian (new fits).
    ``part``: the chunk is one part of a chunked or Dask fit, whose weights may all be zero
    (:func:`check_weight`). ``decay``: the model's statistics are scaled by it before the
    chunk's are added (:func:`decayed`).

    A row of weight 0 is no row (an integer weight is that many copies): it adds no level,
    decides no inferred family and is not read; its label still names a class, as in
    scikit-learn. A part (or an update) whose weights are all zero adds nothing to ``model``
    (``decay`` still applies). Under
    ``schema_from_every_row`` (a new fit) such rows still give levels and families: EM's
    first M-step, whose unlabelled rows weigh 0 but fix the schema the later steps share.
    """
    decay = check_decay(decay)
    if table.n_rows == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape=({table.n_rows}, "
                         f"{len(table.columns)})) while a minimum of 1 is required.")
    weight = check_weight(sample_weight, table.n_rows, part)
    if model is None:
        if classes is not None:
            classes, codes = declared_classes(classes), None
        else:
            classes, codes = encode_labels(y, table.n_rows)
    else:
        codes = None
    if codes is None:
        codes = labels_to_codes(y, model.classes if model is not None else classes)
    if codes.shape[0] != table.n_rows:
        raise ValueError(f"X has {table.n_rows} rows but y has {codes.shape[0]} labels.")
    if model is not None and not weight.any():  # a part of zero weights: no rows
        return decayed(model, decay)
    kept = None if schema_from_every_row else weighed(weight)
    if kept is not None:
        table, codes, weight = table.rows(kept), codes[kept], weight[kept]
    if model is None:
        specs = resolve_features(features, table, infer_counts, use_kernel=use_kernel)
        raws, blocks = [], []
        for spec in specs:
            raw = table.block(spec.columns, spec.positions,
                              on_device=kernel_reads_raw(spec.family),
                              sparse_path=form_of(spec.family).supports_sparse)
            schema = spec.family.learn_schema(_distinct_if_needed(spec.family, raw),
                                              spec.columns)
            if spec.family.learns_levels():  # a pandas category keeps its categories' order
                schema = schema._replace(levels=tuple(
                    learned if factor is None else factor for learned, factor in zip(
                        schema.levels, factor_levels(table, spec.positions), strict=True)))
            raws.append(raw)
            blocks.append(FittedBlock(spec.family, schema, spec.positions,
                                      spec.family.prior(schema), None))
        model = FittedModel(classes, np.zeros(len(classes)), table.columns,
                            table.frame is not None,
                            tuple(blocks))
        first = True
    else:
        if model.stated is not None:
            raise ValueError("a model built from stated tables (from_tables) has no statistics "
                             "to update; fit a model on data to update it with partial_fit.")
        declared = None if classes is None else declared_classes(classes, repeats=True)
        if declared is not None and (len(classes) != len(model.classes)
                                     or not np.array_equal(declared, model.classes)):
            raise ValueError(f"classes=[{_show(np.asarray(classes).tolist(), 10)}] differs "
                             f"from the classes of the model being updated, "
                             f"[{_show(model.classes.tolist(), 10)}]; declare every class on "
                             f"the first call.")
        raws = []
        for b, pos in zip(model.blocks, block_positions(model, table), strict=True):
            raws.append(table.block(b.schema.columns, pos, on_device=kernel_reads_raw(b.family),
                                    sparse_path=form_of(b.family).supports_sparse))
        check_same_families(model, features, table)
        first = False
    counts = np.bincount(codes, weights=weight, minlength=len(model.classes))
    stats = chunk_statistics(model.blocks, raws, codes, weight, len(model.classes))
    if not first:
        model = decayed(model, decay)
        stats = [type(b.family).merge_stats(b.stats, s)
                 for b, s in zip(model.blocks, stats, strict=True)]
    return model.replace(
        class_count=counts if first else model.class_count + counts,
        blocks=tuple(b._replace(stats=s) for b, s in zip(model.blocks, stats, strict=True)),
        nuts=None)


def check_same_families(model: FittedModel, features, table: Table) -> None:
    """Refuse an update under ``features`` that declare another family for a column than
    the model was fitted with (``features`` changed since the fit, by ``set_params``): the
    update would go on with the fitted families, silently not the declared ones."""
    if features is None:
        return
    declared = (dict.fromkeys(range(len(table.columns)), features)
                if isinstance(features, Family) else declared_columns(features, table))
    fitted = {column: b.family for b in model.blocks for column in b.schema.columns}
    for i, family in declared.items():
        was = fitted.get(table.columns[i])
        if was is not None and was != family:
            raise ValueError(f"features declares {family!r} for column {table.columns[i]!r}, "
                             f"but the model was fitted with {was!r} there (features changed "
                             f"after the fit, e.g. by set_params); an update goes on with the "
                             f"fitted families: call fit to fit the declared ones.")


def check_decay(decay) -> float:
    """``decay`` as a float, refused unless a number in (0, 1]."""
    if isinstance(decay, bool) or not isinstance(decay, int | float | np.integer | np.floating) \
            or not 0 < decay <= 1:
        raise ValueError(f"decay must be a number in (0, 1] (1: no forgetting), got {decay!r}.")
    return float(decay)


def decayed(model: FittedModel, gamma: float) -> FittedModel:
    """``model`` with every training weight multiplied by ``gamma`` (class counts and each
    family's ``scale_stats``): a power prior, pomegranate's ``inertia``. Updates that decay
    the old statistics by ``gamma`` before adding a chunk's equal one weighted fit in which
    a row weighs ``gamma ** (number of later chunks)`` (:func:`add_chunk`). A model holding
    unlabeled rows (semi-supervised ``method="mcmc"``) is refused for ``gamma < 1``: those rows
    have no statistics to scale."""
    if gamma == 1.0:
        return model
    if model.unlabeled is not None:
        # the unlabeled rows are rows, not statistics: they would keep weight 1 while every
        # other weight is multiplied by gamma
        raise ValueError(f"decay={gamma!r} multiplies every training weight, but this model "
                         f"holds {len(model.unlabeled[0])} unlabeled rows (a semi-supervised "
                         f"method='mcmc' fit) that cannot be down-weighted; use decay=1 or "
                         f"refit.")
    return model.replace(
        class_count=np.asarray(model.class_count, dtype=np.float64) * gamma, nuts=None,
        blocks=tuple(b._replace(stats=type(b.family).scale_stats(b.stats, gamma))
                     for b in model.blocks))


def _distinct_if_needed(family, raw):
    """What ``family.learn_schema`` reads: for a DataFrame's extension columns, the distinct
    values only (:meth:`FrameBlock.distinct`) where the family learns levels from them, so no
    block is converted to Python objects whole."""
    if isinstance(raw, FrameBlock | SparseRows) and \
            type(family).learn_schema is not Family.learn_schema:
        return raw.distinct()
    return raw


def chunk_statistics(blocks, raws, codes, weight, n_classes: int) -> list:
    """Per-class sufficient statistics of every block for one chunk of raw values: SciPy on
    the host (float64) for a sparse block (a family with a sparse path), else the streaming
    kernels (a sparse input's other blocks are read densified chunk by chunk:
    ``_data.SparseRows``). Blocks of one family and prior whose statistics all run along
    the columns are counted as one block and split back (:func:`joined_for_counting`)."""
    joined = joined_for_counting(blocks, raws)
    if joined is None:
        return _chunk_statistics(blocks, raws, codes, weight, n_classes)
    groups, joined_blocks_, joined_raws = joined
    return split_statistics(_chunk_statistics(joined_blocks_, joined_raws, codes, weight,
                                              n_classes), groups, blocks)


def split_statistics(stats, groups, blocks) -> list:
    """Every block's statistics from those of ``groups`` (:func:`joined_for_counting`): a
    joined group's cut along the columns at its blocks' widths."""
    out: list = [None] * len(blocks)
    for group, joined in zip(groups, stats, strict=True):
        edges = np.cumsum([0] + [len(blocks[i].schema.columns) for i in group.blocks])
        for i, lo, hi in zip(group.blocks, edges[:-1], edges[1:], strict=True):
            out[i] = joined if len(group.blocks) == 1 else jax.tree_util.tree_map(
                lambda a, lo=lo, hi=hi: a[..., lo:hi].copy(), joined)
    return out


def joined_for_counting(blocks, raws):
    """``(groups, blocks, raws)`` with joinable blocks (``_joined_blocks``) of one NumPy dtype
    and of a family whose statistics all have the columns on their last axis (none a sum over
    them) joined column-wise; None where none join. A model declared column by column then
    counts one block a family: 3,000 one-column Gaussian blocks stacked 3,000 inputs inside
    the statistics kernel (8 s)."""
    if len(blocks) < 2:
        return None
    groups = []
    for group in joined_blocks(blocks, [str(i) for i in range(len(blocks))]):
        dtypes = {raws[i].dtype if type(raws[i]) is np.ndarray else None for i in group.blocks}
        family = type(blocks[group.blocks[0]].family)
        if len(group.blocks) > 1 and (len(dtypes) > 1 or None in dtypes
                                      or dtypes.pop().kind not in "fiub"
                                      or not _stats_by_column(family)):
            groups.extend(Joined((i,), "") for i in group.blocks)
        else:
            groups.append(group)
    if len(groups) == len(blocks):
        return None
    return (groups, joined_model(blocks, groups),
            [raws[g.blocks[0]] if len(g.blocks) == 1 else
             np.concatenate([raws[i] for i in g.blocks], axis=1) for g in groups])


@functools.cache
def _stats_by_column(family) -> bool:
    """Whether every statistic of ``family`` has the columns on its last axis (so a joined
    block's statistics split back by columns), from their shapes for two columns."""
    x = jax.ShapeDtypeStruct((1, 2), np.float32)
    stats = jax.eval_shape(lambda v, r: family.suff_stats(v, r), x, x)
    return all(leaf.ndim >= 1 and leaf.shape[-1] == 2
               for leaf in jax.tree_util.tree_leaves(stats))


def _chunk_statistics(blocks, raws, codes, weight, n_classes: int) -> list:
    from scipy import sparse

    if _host.counted_on_host([b.family for b in blocks], raws, weight, n_classes):
        counted = _counted_on_host(blocks, raws, codes, weight, n_classes)
        if counted is not None:
            return counted
    out: list = [None] * len(blocks)
    if any(sparse.issparse(raw) for raw in raws):
        from .fast._sparse import Labels

        resp = Labels(codes, weight, n_classes)
        # float64 NumPy, as the dense kernels' statistics are: as float32 jax arrays, sparse
        # documents' evidence was 107 nats off (800 after 200 partial fits)
        for i, (b, raw) in enumerate(zip(blocks, raws, strict=True)):
            if sparse.issparse(raw):
                out[i] = host_f64(form_of(b.family).sparse_suff_stats(
                    b.family.encode(raw, b.schema), resp))
    # a nonparametric family's statistic is the sample itself: kept on the host in float64;
    # a host_counting family's are counts, taken on the host in float64 (nothing to compile)
    for i, (b, raw) in enumerate(zip(blocks, raws, strict=True)):
        if out[i] is None and b.family.nonparametric:
            out[i] = b.family.host_suff_stats(b.family.encode(raw, b.schema), codes, weight,
                                              n_classes)
        elif out[i] is None and form_of(b.family).host_counting:
            out[i] = _host.stream_stats(b, raw, codes, weight, n_classes)
    kernel = [i for i, s in enumerate(out) if s is None]
    if kernel:
        kernel_families = [blocks[i].family for i in kernel]
        wide = weighted_sums_need_float64(weight) or not float32_safe(kernel_families)
        with jax.enable_x64(True) if wide else nullcontext():
            sources = [block_source(blocks[i].family, raws[i], blocks[i].schema, "error")
                       for i in kernel]
            for i, s in zip(kernel, _kernels.stream_suff_stats(
                    tuple(type(blocks[i].family) for i in kernel),
                    tuple(levels_of(blocks[i].schema) for i in kernel),
                    n_classes, sources, codes, weight), strict=True):
                out[i] = s
    return out


def _counted_on_host(blocks, raws, codes, weight, n_classes: int) -> list | None:
    """Every block's statistics in float64 on the host (a small dense fit,
    ``_host.counted_on_host``), each block validated by its family's ``encode``; None where a
    missing value (NaN) reached a count family's sums, past what the family's maths take on
    the host (``_host.HOST_MATHS_ENTRIES``): the kernels' masked forms count it."""
    from .fast._sparse import Labels

    labels = Labels(codes, weight, n_classes)
    out = [host_f64(_host.host_stats(b.family, b.family.encode(raw, b.schema, dtype=np.float64),
                                     labels, _host.HOST_MATHS_ENTRIES))
           for b, raw in zip(blocks, raws, strict=True)]
    if any(np.isnan(leaf).any() for stats in out for leaf in stats):
        return None
    return out


def weighted_sums_need_float64(weight: np.ndarray) -> bool:
    """Whether a chunk's statistics are summed in float64 whatever the dtype policy: in
    float32 mode, when some weight is not 1.

    Unit weights leave integer counts' sums exact in float32, and every other sum within a
    float32 rounding of each value. A weight other than 1 rounds every weighted value, and the
    log evidence amplifies that: its terms (such as :math:`T \\log N` and
    :math:`\\log\\Gamma(T)` for a Poisson column's total ``T`` over ``N`` rows) are large
    numbers that mostly cancel. With weights drawn from U(0.5, 2), float32 statistics moved the
    evidence by 3.9 nats (Poisson counts near 100, 20,000 rows x 20 columns, 3 classes), 1,070
    nats (counts near 10^4) and 42 nats (Multinomial, counts near 10^4), against float64
    (``tests/test_float32_guarantee.py``, "evidence with sample weights"). Only the statistics
    pass runs in float64 (the scores stay in the dtype policy), and only for weighted chunks."""
    return not float64_mode() and not bool(np.all(weight == 1.0))


def statistics(model: FittedModel) -> tuple:
    """``(class_count, ((block 0 statistics...), ...))`` as plain NumPy arrays: what travels
    between processes (bit-exact whatever the receiver's JAX dtype mode)."""
    return (np.asarray(model.class_count, dtype=np.float64),
            tuple(tuple(np.asarray(leaf) for leaf in b.stats) for b in model.blocks))


def merge_statistics(families: tuple, a: tuple | None, b: tuple | None) -> tuple | None:
    """Statistics (as from :func:`statistics`) of the union of two sets of rows."""
    if a is None or b is None:
        return a if b is None else b
    blocks = []
    for family, sa, sb in zip(families, a[1], b[1], strict=True):
        merged = family.merge_stats(family.stats_type(*sa), family.stats_type(*sb))
        blocks.append(tuple(np.asarray(leaf) for leaf in merged))
    return a[0] + b[0], tuple(blocks)


def with_statistics(model: FittedModel, stats: tuple) -> FittedModel:
    """``model`` (its schema) with other statistics, as from :func:`statistics`."""
    count, blocks = stats
    return model.replace(
        class_count=np.asarray(count, dtype=np.float64), nuts=None,
        # NumPy, as fitting leaves them: float64 statistics keep float32 prediction exact
        blocks=tuple(b._replace(stats=type(b.family).stats_type(*map(np.asarray, s)))
                     for b, s in zip(model.blocks, blocks, strict=True)))


def zero_statistics(model: FittedModel) -> FittedModel:
    """``model``'s schema with zero statistics (NumPy), the start of a chunked fit."""
    def zeros(a):
        a = np.asarray(a)
        return np.zeros(a.shape, dtype=a.dtype)

    return model.replace(
        class_count=np.zeros(len(model.classes)), nuts=None,
        blocks=tuple(b._replace(stats=b.family.empty_stats() if b.family.nonparametric
                                else jax.tree_util.tree_map(zeros, b.stats))
                     for b in model.blocks))


def to_numpy(model: FittedModel) -> FittedModel:
    """The same model with every array as NumPy (to ship to other processes)."""
    as_np = lambda tree: jax.tree_util.tree_map(np.asarray, tree)  # noqa: E731
    return model.replace(
        blocks=tuple(b._replace(stats=as_np(b.stats), prior=as_np(b.prior))
                     for b in model.blocks),
        stated=as_np(model.stated), unlabeled=as_np(model.unlabeled))


def merge_models(models) -> FittedModel:
    """One fitted value from fits of the same specification on different data: the
    statistics add up (Gaussian moments merge exactly), so merging fits of the parts equals
    one fit of the union. Models holding unlabeled rows (semi-supervised ``method="mcmc"``)
    are refused: their rows are not statistics that add up."""
    first = models[0]
    for i, m in enumerate(models):
        if m.stated is not None:
            raise ValueError("a model built from stated tables has no statistics to merge.")
        if m.unlabeled is not None:
            # their encoded rows hold each model's own level codes: concatenating them is safe
            # only where the encodings match, and dropping them would silently fit other data
            raise ValueError(f"model {i} holds {len(m.unlabeled[0])} unlabeled rows (a "
                             f"semi-supervised method='mcmc' fit), which merge cannot add up; "
                             f"fit the union of the rows in one fit instead.")
        if i == 0:
            continue
        if not np.array_equal(m.classes, first.classes):
            raise ValueError(f"model {i} has classes {list(m.classes)}, model 0 has "
                             f"{list(first.classes)}; declare classes= in partial_fit.")
        if tuple(m.columns) != tuple(first.columns):
            what = ("the same columns in another order" if sorted(map(str, m.columns)) ==
                    sorted(map(str, first.columns)) else "other columns")
            raise ValueError(f"model {i} has {what} than model 0 ({list(m.columns)[:10]} "
                             f"against {list(first.columns)[:10]}); fit every part on the "
                             f"columns in one order.")
        if len(m.blocks) != len(first.blocks):
            raise ValueError(f"model {i} has {len(m.blocks)} blocks of columns, model 0 "
                             f"{len(first.blocks)}.")
        for a, b in zip(first.blocks, m.blocks, strict=True):
            if type(a.family) is not type(b.family) or a.family != b.family:
                raise ValueError(f"columns {list(a.schema.columns)}: model {i} uses "
                                 f"{b.family!r}, model 0 {a.family!r}.")
            if a.schema != b.schema:
                raise ValueError(f"columns {list(a.schema.columns)}: the category levels "
                                 f"differ between model 0 and model {i}; declare them with "
                                 f"Categorical(categories=...).")
    blocks = []
    for parts in zip(*(m.blocks for m in models), strict=True):
        stats = parts[0].stats
        for p in parts[1:]:
            stats = type(p.family).merge_stats(stats, p.stats)
        blocks.append(parts[0]._replace(stats=stats))
    return first.replace(class_count=sum(m.class_count for m in models), blocks=tuple(blocks),
                         unlabeled=None, nuts=None)


def check_conjugate(model: FittedModel, priors, what: str, data: bool = True,
                    sampled: bool = False) -> None:
    """Refuse a closed form where a prior replaces a conjugate one, a hyperparameter is a
    distribution (a hyperprior), the classes share a learned prior (``pooling``) or, when
    ``what`` reads the data (not the prior alone), unlabeled rows enter the posterior
    (semi-supervised MCMC: the statistics are the labelled rows'). ``sampled``: the model is
    an MCMC fit, whose draws are the way to its posterior (else method='mcmc' is)."""
    advice = ("summarise the draws (clf.mcmc_summary(), clf.to_arviz())" if sampled
              else "use method='mcmc'")
    if data and model.unlabeled is not None:
        raise ValueError(
            f"this model also holds {len(model.unlabeled[0])} unlabeled rows (semi-supervised "
            f"method='mcmc'), which enter its NUTS draws only: {what} would read the labelled "
            f"rows alone; summarise the draws (clf.mcmc_summary(), clf.to_arviz()).")
    if priors:
        raise ValueError(f"priors={sorted(priors)} replace conjugate priors, so there is no "
                         f"closed form: {what} is unavailable; {advice}.")
    for b in model.blocks:
        hyper = b.family.hyperpriors()
        if hyper:
            raise ValueError(
                f"columns {list(b.schema.columns)[:5]}: {type(b.family).__name__} has a "
                f"hyperprior on {', '.join(hyper)} (a distribution, not a value), which has "
                f"no closed form: {what} is unavailable; {advice}.")
        if b.family.pooling_prior() is not None:
            raise ValueError(
                f"columns {list(b.schema.columns)[:5]}: {type(b.family).__name__}(pooling="
                f"{b.family.pooling!r}) learns the classes' shared prior from the data, which "
                f"has no closed form: {what} is unavailable; {advice}.")


def check_parametric(model: FittedModel, what: str) -> None:
    """Refuse ``what`` (the evidence, posterior draws, MCMC) for a nonparametric block, which
    has no parameters to integrate or sample."""
    for b in model.blocks:
        if b.family.nonparametric:
            raise ValueError(
                f"columns {list(b.schema.columns)[:5]}: {type(b.family).__name__} is "
                f"nonparametric (the estimate is the training sample itself, with no parameters "
                f"to integrate or sample), so {what} is undefined for it; model these columns "
                f"with a parametric family such as Gaussian() for {what}.")


def split_unlabeled(X, y) -> tuple:
    """``(X_labeled, y_labeled, X_unlabeled or None)``: rows whose label is missing (None,
    NaN) kept apart, for semi-supervised fitting."""
    import pandas as pd

    from ._data import as_table

    if y is None:
        return X, y, None
    missing = pd.isna(pd.Series(np.asarray(y, dtype=object).reshape(-1))).to_numpy()
    if not missing.any():
        return X, y, None
    if missing.all():
        raise ValueError("every label is missing: at least one labeled row per class is "
                         "needed to name the classes.")
    table = as_table(X)
    if table.frame is not None:
        X_l, X_u = table.frame.iloc[~missing], table.frame.iloc[missing]
    elif table.sparse is not None:
        raise TypeError("semi-supervised fitting (missing labels under method='mcmc') needs "
                        "dense X: pass X.toarray().")
    else:
        X_l, X_u = table.array[~missing], table.array[missing]
    y_l = np.asarray(y, dtype=object).reshape(-1)[~missing]
    if not isinstance(y, pd.Series) and np.asarray(y).dtype != object:
        y_l = np.asarray(y).reshape(-1)[~missing]
    return X_l, y_l, X_u
