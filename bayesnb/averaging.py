r"""Exact Bayesian model averaging over every subset of the features (``feature_prior=``).

A *structure* :math:`S` says, for each unit (a column, or a whole Multinomial block), whether
it depends on the class: dependent, it has class-specific parameters (the plain naive Bayes
model); independent, one parameter set shared by all classes, with the same family and prior
and the statistics summed over the classes. The prior makes each unit dependent with
probability :math:`p_j`, independently. Because the evidence factorises by unit (Dash and Cooper
2002; Wu, Sanner and Oliveira 2015), the sum over all :math:`2^F` structures is closed-form:

.. math::

    \frac{r_j}{1 - r_j} = \frac{p_j}{1 - p_j}\,
        \frac{Z_j^{\mathrm{class}}}{Z_j^{\mathrm{shared}}},
    \qquad
    \log \sum_S p(S)\,p(D \mid S) = \log p(y) + \sum_j
        \log\bigl[p_j Z_j^{\mathrm{class}} + (1 - p_j) Z_j^{\mathrm{shared}}\bigr],

with :math:`Z_j^{\mathrm{class}} = \prod_k p(X_{jk})` the unit's evidence with one parameter
set per class and :math:`Z_j^{\mathrm{shared}}` its evidence with the classes pooled;
:math:`r_j` is the posterior probability that unit :math:`j` depends on the class (the
``feature_relevance_``). The structures factor over units a posteriori too, so the
model-averaged predictive is a product of per-unit mixtures:

.. math::

    p(c \mid x, D) \propto p(c \mid D) \prod_j \bigl[r_j\, p(x_j \mid c, D)
        + (1 - r_j)\, p(x_j \mid D)\bigr],

where :math:`p(x_j \mid c, D)` is the unit's class-specific posterior predictive and
:math:`p(x_j \mid D)` the shared one (the same for every class, but mixed in per unit: it
does not cancel). ``method="bayes"`` scores exactly this. The plug-in methods (``ml``,
``map``, ``mean``) score the same mixture with the class-specific and shared plug-in densities
in place of the predictives, weighted by the same :math:`r_j`; the weights always come from the
exact evidence under the families' priors, also for ``ml`` (which uses no prior for the
parameters themselves), so a family prior without an evidence (a zero concentration) is
refused. Units left out of a mapping ``feature_prior`` have :math:`p_j = 1`: always dependent.

Everything is computed from the fitted statistics, in float64 (JAX's x64 mode inside this
module only), so weights, ``partial_fit``, ``merge``, saved models and Dask fits need nothing
more. Scores are computed per unit, vectorised over the columns of a block (the family's
arrays keep one column per last axis; Categorical columns are stacked per number of levels),
all blocks in one compiled function, rows in bounded chunks; sparse input is densified chunk
by chunk.

Examples
--------
PlayTennis' Outlook alone, each structure with prior 1/2: the predictive of a sunny day mixes
the class-specific Laplace predictives (count + 1) / (n_c + 3) with the shared one, 6 / 17,
by the relevance r:

>>> import pandas as pd, bayesnb as bnb
>>> from bayesnb.datasets import load_playtennis
>>> days, play = load_playtennis()
>>> clf = bnb.NaiveBayes(method="bayes", feature_prior=0.5).fit(days[["Outlook"]], play)
>>> r = clf.feature_relevance_["Outlook"]
>>> round(float(r), 4)
0.6753
>>> clf.predict_proba(pd.DataFrame({"Outlook": ["Sunny"]})).round(4)
array([[0.4891, 0.5109]])
>>> no = 6 / 16 * (r * 4 / 8 + (1 - r) * 6 / 17)  # 3 of the 5 "No" days were sunny
>>> yes = 10 / 16 * (r * 3 / 12 + (1 - r) * 6 / 17)  # 2 of the 9 "Yes" days
>>> round(float(no / (no + yes)), 4)
0.4891
"""

from __future__ import annotations

from functools import reduce
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ._blocks import dense_block, raw_blocks
from ._classes import class_log_prior
from .families._base import cached_by_identity, host_f64
from .fast._compiled import compiled
from .fast._kernels import batch_bucket, full_float32, pad_rows
from .fitted import FittedModel, check_conjugate, check_parametric


def check_method(method: str, feature_prior) -> None:
    """Refuse what model averaging does not cover yet (NUTS with the structures summed out)."""
    if method == "mcmc" and feature_prior is not None:
        raise ValueError("feature_prior with method='mcmc' is not supported yet; use "
                         "method='bayes' (the exact model-averaged predictive).")


def check_one_model(feature_prior, what: str) -> None:
    """Refuse ``what``, which is of one model (its parameters' posterior, draws, the rows it
    would generate), when ``feature_prior`` averages the predictive over feature subsets: the
    all-features model's answer would pass for the averaged model's."""
    if feature_prior is not None:
        raise ValueError(f"{what} is of one model; feature_prior averages over feature subsets "
                         f"(see feature_relevance_): set feature_prior=None for it.")


#: rows x classes x columns held at once while scoring
_BUDGET = 1 << 22


class BlockTerms(NamedTuple):
    """One block's units: how they are laid out, and their log evidences (float64)."""

    kind: str  # "columns" (vectorised over the last axis), "levels", "joint"
    keys: tuple  # per unit, its key in ``feature_relevance_``
    prior: tuple  # per group of units (levels) or one for the block: the prior
    stats: tuple  # the same: class-specific statistics (class-free totals zeroed)
    shared: tuple  # the same: the statistics summed over the classes
    levels: tuple  # per group: the static level count and its columns (levels), else None
    log_z_class: np.ndarray  # (units,)
    log_z_shared: np.ndarray  # (units,)
    constant: float  # the block's class-free terms (log x!, multinomial coefficients)


class Averaging(NamedTuple):
    """Every unit's prior and posterior inclusion log odds, and the block terms."""

    blocks: tuple  # of BlockTerms
    log_p: np.ndarray  # (units,) log p_j
    log_1mp: np.ndarray  # (units,) log(1 - p_j)

    @property
    def keys(self) -> list:
        return [k for b in self.blocks for k in b.keys]

    @property
    def log_z_class(self) -> np.ndarray:
        return np.concatenate([b.log_z_class for b in self.blocks])

    @property
    def log_z_shared(self) -> np.ndarray:
        return np.concatenate([b.log_z_shared for b in self.blocks])

    def log_odds(self) -> np.ndarray:
        """log r_j / (1 - r_j) (+inf for a unit with p_j = 1)."""
        with np.errstate(divide="ignore"):
            return self.log_p - self.log_1mp + self.log_z_class - self.log_z_shared

    def relevance(self) -> np.ndarray:
        """r_j, the posterior probability that unit j depends on the class."""
        return np.exp(-np.logaddexp(0.0, -self.log_odds()))

    def unit_log_evidence(self) -> np.ndarray:
        """log[p_j Z_j^class + (1 - p_j) Z_j^shared] per unit."""
        return np.logaddexp(self.log_p + self.log_z_class, self.log_1mp + self.log_z_shared)


# ---------------------------------------------------------------------- the units
def _zero_totals(stats):
    """Class-free totals (scalar statistics such as the sum of log x!) set to 0: they are
    the same under both hypotheses, and are added once per block instead (``constant``)."""
    return jax.tree_util.tree_map(
        lambda a: np.zeros_like(a) if np.ndim(a) == 0 else a, stats)


def _pooled(family, stats):
    """The statistics of all classes as one class (shape (1, ...)): the family's own
    ``merge_stats`` over the classes (Gaussian moments merge exactly)."""
    n_classes = np.shape(jax.tree_util.tree_leaves(stats)[0])[0]
    parts = [jax.tree_util.tree_map(lambda a, k=k: a[k:k + 1] if np.ndim(a) else a, stats)
             for k in range(n_classes)]
    first = jax.tree_util.tree_map(lambda a: a * 0 if np.ndim(a) == 0 else a, parts[0])
    return host_f64(reduce(family.merge_stats, parts[1:], first))


def _stack(trees):
    """Trees of equal shapes as one tree with a leading axis."""
    return jax.tree_util.tree_map(lambda *a: np.stack(a), *trees)


def _per_column(fn, *trees):
    """``fn`` applied to every column of ``trees`` (the last axis of every leaf that has one;
    scalar leaves are common to all columns), each column seen as a block of width 1; the
    results stacked on a leading column axis."""
    flat, defs = zip(*(jax.tree_util.tree_flatten(t) for t in trees), strict=True)
    axes = [[-1 if np.ndim(a) else None for a in leaves] for leaves in flat]

    def one(*leaf_lists):
        rebuilt = [jax.tree_util.tree_unflatten(
            d, [a[..., None] if ax is not None else a for a, ax in zip(ls, al, strict=True)])
            for d, ls, al in zip(defs, leaf_lists, axes, strict=True)]
        return fn(*rebuilt)

    return jax.vmap(one, in_axes=tuple(axes))(*flat)


@compiled(static_argnums=(0, 1, 2))
@full_float32
def _evidences(family, kind, levels, prior, priors, stats, shared, full):
    """Per unit the log evidence with class-specific and with shared parameters, and the
    block's own log evidence (one compiled function per block)."""
    if kind == "columns":
        z_class = _per_column(family.log_evidence, prior, stats[0])
        z_shared = _per_column(family.log_evidence, prior, shared[0])
    elif kind == "joint":
        z_class = family.log_evidence(priors[0], stats[0])[None]
        z_shared = family.log_evidence(priors[0], shared[0])[None]
    else:  # levels: per group of columns with as many levels, vectorised over columns
        n = sum(len(idx) for _, idx in levels)
        z_class, z_shared = jnp.zeros(n), jnp.zeros(n)
        for (_, idx), p, s, sh in zip(levels, priors, stats, shared, strict=True):
            at = np.asarray(idx)
            z_class = z_class.at[at].set(jax.vmap(family.log_evidence)(p, s))
            z_shared = z_shared.at[at].set(jax.vmap(family.log_evidence)(p, sh))
    return z_class, z_shared, family.log_evidence(prior, full)


def _block_terms(block) -> BlockTerms:
    """The units of one block and their evidences (x64 is on)."""
    family = type(block.family)
    prior, stats = host_f64(block.prior), host_f64(block.stats)
    zeroed = _zero_totals(stats)
    columns = tuple(block.schema.columns)
    if family.joint_columns:
        kind, keys, priors, stat_list = "joint", (columns,), (prior,), (zeroed,)
        levels = (None,)
    elif block.schema.levels:  # columns grouped by their number of levels, each stacked
        kind, keys, groups = "levels", columns, {}
        for j, lv in enumerate(block.schema.levels):
            groups.setdefault(len(lv), []).append(j)
        levels = tuple((n, tuple(idx)) for n, idx in groups.items())
        stacked = [[family.column_block(prior, zeroed, j, n) for j in idx] for n, idx in levels]
        priors = tuple(_stack([p for p, _ in g]) for g in stacked)
        stat_list = tuple(_stack([s for _, s in g]) for g in stacked)
        shared = tuple(_stack([_pooled(family, s) for _, s in g]) for g in stacked)
    else:
        kind, keys, priors, stat_list, levels = "columns", columns, (prior,), (zeroed,), (None,)
    if kind != "levels":
        shared = tuple(_pooled(family, s) for s in stat_list)
    z_class, z_shared, total = (np.asarray(a, np.float64) for a in _evidences(
        family, kind, levels, prior, priors if kind != "columns" else (), stat_list, shared,
        stats))
    bad = ~np.isfinite(z_class) | ~np.isfinite(z_shared)
    if bad.any():
        j = int(np.argmax(bad))
        raise ValueError(
            f"column {keys[j]!r}: its evidence under the {block.family!r} prior is not finite, "
            f"so its posterior inclusion probability is undefined; feature_prior needs a "
            f"proper prior (positive concentrations, shapes and rates) on every column.")
    constant = float(total) - float(np.sum(z_class))
    return BlockTerms(kind, keys, priors, stat_list, shared, levels, z_class, z_shared,
                      constant)


def resolve(feature_prior, blocks: tuple) -> np.ndarray:
    """Per unit, the prior inclusion probability p_j, validated; units a mapping leaves out
    get 1 (always dependent on the class)."""
    keys = [k for b in blocks for k in b.keys]

    def check(p, where):
        if isinstance(p, bool) or not isinstance(p, int | float | np.integer | np.floating):
            raise TypeError(f"feature_prior{where} must be a number in (0, 1), got {p!r}.")
        if not 0.0 < float(p) < 1.0:
            raise ValueError(f"feature_prior{where} must be in (0, 1) (the prior probability "
                             f"that the column depends on the class), got {p!r}.")
        return float(p)

    if not isinstance(feature_prior, dict):
        return np.full(len(keys), check(feature_prior, ""))
    index = {k: i for i, k in enumerate(keys)}
    in_block = {c: k for k in keys if isinstance(k, tuple) for c in k}
    out = np.ones(len(keys))
    for key, p in feature_prior.items():
        if isinstance(key, list):
            key = tuple(key)
        if key not in index:
            if not isinstance(key, tuple) and key in in_block:
                raise ValueError(
                    f"feature_prior names column {key!r}, which is part of the Multinomial "
                    f"block {in_block[key]!r}: a block depends on the class as a whole; "
                    f"give its prior under the key {in_block[key]!r}.")
            raise ValueError(f"feature_prior names column {key!r}, which is not a column of "
                             f"the model (columns: {keys[:10]}).")
        out[index[key]] = check(p, f"[{key!r}]")
    return out


def averaging(model: FittedModel, feature_prior, priors=None) -> Averaging:
    """The per-unit evidences and inclusion odds of ``model`` under ``feature_prior``."""
    if model.stated is not None:
        raise ValueError("feature_prior needs the training statistics; this model was built "
                         "from stated tables.")
    check_conjugate(model, priors, "feature_prior (exact model averaging)")
    check_parametric(model, "feature_prior (exact model averaging)")
    def terms():
        with jax.enable_x64(True):
            return tuple(_block_terms(b) for b in model.blocks)

    blocks = cached_by_identity(_cache, model, (), terms, limit=8)
    p = resolve(feature_prior, blocks)
    with np.errstate(divide="ignore"):
        return Averaging(blocks, np.log(p), np.log1p(-p))


#: block terms by the identity of the fitted model (a few models' worth)
_cache: dict = {}


def log_evidence(model: FittedModel, feature_prior, class_term: float, priors=None,
                 per_block: bool = False):
    """log sum_S p(S) p(y, X | S): the class term plus, per block, its class-free constant
    and its units' log[p_j Z_j^class + (1 - p_j) Z_j^shared]."""
    avg = averaging(model, feature_prior, priors)
    units = avg.unit_log_evidence()
    parts, start = {"class": class_term}, 0
    for block, terms in zip(model.blocks, avg.blocks, strict=True):
        stop = start + len(terms.keys)
        name = f"{block.family.name}{list(block.schema.columns)}"
        parts[name] = terms.constant + float(np.sum(units[start:stop]))
        start = stop
    if per_block:
        import pandas as pd

        return pd.Series(parts, name="log_evidence")
    return float(sum(parts.values()))


def relevance(model: FittedModel, feature_prior, priors=None):
    """``feature_relevance_``: a pandas Series of r_j indexed by column (a Multinomial block
    by the tuple of its columns)."""
    import pandas as pd

    avg = averaging(model, feature_prior, priors)
    index = pd.Index(avg.keys, dtype=object, tupleize_cols=False)
    return pd.Series(avg.relevance(), index=index, name="feature_relevance")


# ---------------------------------------------------------------------- the scorer
class AveragedScorer(NamedTuple):
    """Scores of the model averaged over structures: per unit a mixture of the
    class-specific and the shared predictive (``bayes``) or plug-in density."""

    model: FittedModel
    method: str
    exact: bool
    log_prior: np.ndarray  # (K,) log p(c | D)
    tables: tuple  # the plain model's tables (``conditional_tables``: class-specific)
    specs: tuple  # per group of blocks (kind, family class, per-unit level counts): static
    mixed: tuple  # (class tables, shared tables, log r, log(1 - r)), each per group
    unseen: str
    groups: tuple  # per group, its blocks (``_column_groups``)

    def scores(self, X, output: str) -> tuple[np.ndarray, np.ndarray]:
        from .scoring import log_normalizer, normalised

        raws, n = raw_blocks(self.model, X)
        n_classes = len(self.model.classes)
        out = np.broadcast_to(self.log_prior, (n, n_classes)).copy()
        with jax.enable_x64(True):
            xs = [b.family.encode(raw, b.schema, unseen=self.unseen)
                  for b, raw in zip(self.model.blocks, raws, strict=True)]
            width = max(sum(np.shape(x)[1] for x in xs), 1)
            rows = int(np.clip(_BUDGET // (n_classes * width), 8, 1 << 16))
            for start in range(0, n, rows):
                stop = min(n, start + rows)
                chunk = [dense_block(x[start:stop]) for x in xs]
                m = stop - start
                joined = [chunk[g[0]] if len(g) == 1 else np.concatenate(
                    [chunk[b] for b in g], axis=1) for g in self.groups]
                padded = tuple(jnp.asarray(pad_rows(x, batch_bucket(m, rows))) for x in joined)
                out[start:stop] += np.asarray(_mixture(
                    self.specs, self.method, *self.mixed, padded), np.float64)[:m]
                if output == "joint":
                    out[start:stop] += log_normalizer(self.model.blocks, chunk)
        return normalised(out, output)



def _score_fn(family, method):
    return family.log_predictive if method == "bayes" else family.log_likelihood


@compiled(static_argnums=(0, 1))
@full_float32
def _mixture(specs, method, tables_c, tables_s, log_r, log_1mr, xs):
    """``(m, K)``: the sum over units of log[r p(x | c) + (1 - r) p(x | shared)], every
    block in one compiled function (padded rows: a few sizes, so it compiles rarely)."""
    out = 0.0
    for (kind, family, levels), tc, ts, lr, l1, x in zip(specs, tables_c, tables_s, log_r,
                                                        log_1mr, xs, strict=True):
        score = _score_fn(family, method)
        if kind == "columns":
            def one(tc, ts, xj, score=score):
                return score(tc, xj), score(ts, xj)

            lc, ls = _per_column(one, tc[0], ts[0], x)  # (F, m, K), (F, m, 1)
            out = out + jnp.sum(jnp.logaddexp(lr[:, None, None] + lc,
                                              l1[:, None, None] + ls), axis=0)
            continue
        if kind == "joint":
            out = out + jnp.logaddexp(lr[0] + score(tc[0], x), l1[0] + score(ts[0], x))
            continue
        for (n, idx), tcg, tsg in zip(levels, tc, ts, strict=True):  # columns of n levels

            def column(tcj, tsj, xj, lrj, l1j, score=score, n=n):
                xj = xj[:, None]
                return jnp.logaddexp(lrj + score(tcj, xj, (n,)), l1j + score(tsj, xj, (n,)))

            at = np.asarray(idx)
            out = out + jnp.sum(jax.vmap(column, in_axes=(0, 0, 1, 0, 0))(
                tcg, tsg, x[:, at], lr[at], l1[at]), axis=0)
    return out


def averaged_scorer(model: FittedModel, method: str, class_alpha, class_prior,
                    feature_prior) -> AveragedScorer:
    """The scorer of ``method`` in {"ml", "map", "mean", "bayes"} averaged over structures.
    The plain scorer is built first for its checks (undefined estimates, priors without a
    mode), with the same messages."""
    from .scoring import table_scorer

    plain = table_scorer(model, method, class_alpha, class_prior)
    avg = averaging(model, feature_prior)
    log_odds = avg.log_odds()
    log_r, log_1mr = -np.logaddexp(0.0, -log_odds), -np.logaddexp(0.0, log_odds)
    specs, tables, start = [], [], 0
    with jax.enable_x64(True):
        for block, terms in zip(model.blocks, avg.blocks, strict=True):
            family = type(block.family)
            stop = start + len(terms.keys)

            def raw(prior, stats, family=family):
                if method == "bayes":
                    return family.posterior(prior, stats)
                return family.estimate(prior, stats, method)

            if terms.kind == "levels":  # stacked per group: one table per column
                raw = jax.vmap(raw)

            def table(prior, stats, raw=raw):
                with np.errstate(divide="ignore", invalid="ignore"):
                    return jax.tree_util.tree_map(jnp.asarray, host_f64(raw(prior, stats)))
            specs.append((terms.kind, family, terms.levels))
            tables.append((
                tuple(table(p, s) for p, s in zip(terms.prior, terms.stats, strict=True)),
                tuple(table(p, s) for p, s in zip(terms.prior, terms.shared, strict=True)),
                jnp.asarray(log_r[start:stop]), jnp.asarray(log_1mr[start:stop])))
            start = stop
    log_prior = class_log_prior(model.class_count, class_alpha, class_prior, method)
    groups, specs, tables = _column_groups(specs, tables)
    return AveragedScorer(model, method, plain.exact, np.asarray(log_prior, np.float64),
                          plain.tables, tuple(specs), tuple(zip(*tables, strict=True)),
                          "method='ml'" if method == "ml" else "smooth", groups)


def _column_groups(specs: list, tables: list) -> tuple:
    """Blocks of one family scored column by column (kind ``"columns"``) whose tables differ
    only along the columns (the last axis of every leaf that has one, the scalar leaves
    equal), as one: their tables and ``x`` concatenated along the columns. A model declared
    column by column traced one :func:`_mixture` part per block, and compiling it grew with
    their square (200 one-column blocks: 32 s). Returns the groups (block indices), their
    specs and tables."""
    def key(spec, table):
        if spec[0] != "columns":
            return None
        leaves, treedef = jax.tree_util.tree_flatten(table[:2])
        return (spec, treedef, tuple(
            np.shape(a)[:-1] if np.ndim(a) else np.asarray(a).tobytes() for a in leaves))

    groups: dict = {}
    for i, (spec, table) in enumerate(zip(specs, tables, strict=True)):
        k = key(spec, table)
        groups.setdefault(i if k is None else k, []).append(i)
    joined = []
    for members in groups.values():
        if len(members) == 1:
            joined.append(tables[members[0]])
            continue
        parts = [tables[i] for i in members]
        joined.append(jax.tree_util.tree_map(
            lambda *a: jnp.concatenate(a, axis=-1) if np.ndim(a[0]) else a[0], *parts))
    return (tuple(tuple(m) for m in groups.values()),
            [specs[m[0]] for m in groups.values()], joined)
