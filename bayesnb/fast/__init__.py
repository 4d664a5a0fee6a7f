"""The fast layer: speed and float32 safety, kept apart from the statistical models.

A family (``bayesnb.families``) is the statistical model only: its statistics, estimates,
posterior, predictive and evidence, written as the maths reads. This package computes them at
scale: rows streamed through compiled kernels (:mod:`._kernels`), the count families' exact
predictive by indicator products and host tails (:mod:`._exact`), host-side counting
(:mod:`._host`) and SciPy sparse products (:mod:`._sparse`).

A family opts in by registering a :class:`FastForm` here (one public module of this package per
family, imported at the first look-up): the chunk form of its statistics and how float32 may
round them, the table its score kernel reads and a bound on the rounding of those scores, its
sparse and host paths. Every member has a default: the family's reference maths.

**Correct by default.** JAX computes in float32 unless x64 is enabled. A registered form
promises that its float32 results are within the library's bound of float64 or refused; a
family with no registered form makes no such promise, so every computation that involves it
runs in float64 (:func:`reference_precision`): its reference maths is then exact to float64,
and the float32 guarantee holds for every family, the next one included.
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
from typing import Any, ClassVar

import jax

from ..families._base import float64_mode
from ..families._contract import Family


class FastForm:
    """How the fast layer computes one family; subclass it and :func:`register` it.

    The defaults compute the family's reference maths as written: statistics by its
    ``suff_stats`` against the weighted one-hot, scores by its ``log_likelihood`` or
    ``log_predictive``, no rounding bound. A subclass overrides what it makes faster or safer
    in float32, with the same results."""

    #: the family this form computes
    family: ClassVar[type[Family]]
    #: False for the reference form of an unregistered family: computed in float64
    float32_safe: ClassVar[bool] = True

    # ------------------------------------------------------------------ statistics
    #: ``label_stats(x, labels, n_levels)``: a chunk's statistics summed by label (a
    #: ``_kernels.Labels``), without the ``(rows, classes)`` one-hot; None: the kernel builds
    #: the one-hot and calls the family's ``suff_stats``
    label_stats: ClassVar[Any] = None
    #: True when the statistics kernel sums each chunk's log factorials by
    #: ``_steps.small_count_log_factorials``: the value checks then read its markers instead of
    #: a bounds pass of their own
    small_count_markers: ClassVar[bool] = False
    #: ``in_place_stats(rows, labels) -> (stats, complete)``: ``label_stats`` of a float64
    #: chunk read where it lies (``_in_place.InPlaceRows``: a NumPy block, no staging copy),
    #: and whether its values were all ones these sums take and the family accepts (else the
    #: chunk is redone from a copy, whose kernel checks them); None: chunks are copied
    in_place_stats: ClassVar[Any] = None
    #: True when the family's ``estimate``, ``posterior`` and ``merge_stats`` also run on
    #: NumPy arrays: tables are then finished in float64 on the host whatever JAX's dtype
    host_numeric: ClassVar[bool] = False
    #: True when float32 sums cannot hold what the statistics feed, so that every statistics
    #: pass involving the family runs in float64 (float32 input converted exactly), as a
    #: weighted fit's does: a score that multiplies a statistic's relative rounding by a large
    #: factor (a Gaussian precision times (x - mean)^2 / 2) would carry it into the probabilities
    float64_statistics: ClassVar[bool] = False

    @staticmethod
    def finish_stats(stats):
        """One chunk's kernel statistics (float64 NumPy) in the family's form."""
        return stats

    @staticmethod
    def refine_stats(stats, read):
        """One chunk's kernel statistics with any part float32 may have rounded too far
        recomputed in float64 from the chunk's values (``read()``, lazily)."""
        return stats

    @staticmethod
    def float32_inexact(stats) -> bool:
        """Whether float32 inputs cannot represent what the finished ``stats`` describe; the
        statistics pass is then redone in float64."""
        return False

    # ------------------------------------------------------------------ scores
    #: True when the plug-in score kernel is products of the block with ``(classes,
    #: columns)`` tables only (no ``(rows, classes, columns)`` temporary)
    product_scores: ClassVar[bool] = False

    @staticmethod
    def kernel_table(table, exact: bool, joint: bool):
        """``(table, shift)``: the float64 fitted ``table`` in the form :meth:`scores` reads
        (built on the host), and a per-column shift subtracted from the raw values (or None).
        ``joint``: the class-free constants must stay in."""
        return table, None

    @classmethod
    def scores(cls, table, x, n_levels, exact: bool):
        """``(n, K)`` log p(x | c) of a chunk from a :meth:`kernel_table` (up to a class-free
        per-row constant unless the table was built ``joint``)."""
        if exact:
            return cls.family.log_predictive(table, x, n_levels)
        return cls.family.log_likelihood(table, x, n_levels)

    @classmethod
    def log_likelihood(cls, params, x, n_levels=None):
        """``(n, K)`` the family's ``log_likelihood`` of a plug-in table that no
        :meth:`kernel_table` prepared (scored draw by draw: the predictive over draws, per-draw
        log likelihoods, the semi-supervised NUTS term)."""
        return cls.family.log_likelihood(params, x, n_levels)

    #: row features per column that :meth:`draws_log_likelihood` computes once for every draw
    #: of a chunk (0: it scores draw by draw, a ``(rows, columns)`` temporary per draw)
    shared_draw_features: ClassVar[int] = 0

    @classmethod
    def draws_log_likelihood(cls, tables, x):
        """``(n, S, K)``: :meth:`log_likelihood` of ``S`` draws' tables (every leaf with a
        leading draw axis). Default: draw by draw."""
        import jax.numpy as jnp

        return jnp.moveaxis(jax.vmap(lambda t: cls.log_likelihood(t, x))(tables), 0, 1)

    @staticmethod
    def score_rounding(table, x, scores):
        """``(n,)`` or ``(n, K)`` bounds on the float32 rounding of :meth:`scores`; the kernels
        refuse a block above ``_kernels.SCORE_ROUNDING_LIMIT``. Default 0 (float64)."""
        import jax.numpy as jnp

        return jnp.zeros(x.shape[0])

    #: True when the plug-in scores are linear in x (:meth:`linear_scores`): the predictive
    #: over draws stacks draws' weights into one product (``inference.predict_from_draws``)
    linear_in_x: ClassVar[bool] = False
    #: True when each column's float32 term is bounded by :meth:`term_extent` (scores
    #: quadratic in x); with neither flag, draws are scored one by one in float64 (there is
    #: no bound: Categorical's lookups, summed over 3,000 columns, moved bands by 1.1e-4)
    quadratic_in_x: ClassVar[bool] = False

    @staticmethod
    def linear_scores(params) -> tuple:
        """``(weights (K, F), bias (K,))`` with ``log_likelihood(params, x) = x @ weights.T +
        bias`` for complete rows (``linear_in_x`` forms)."""
        raise NotImplementedError

    @staticmethod
    def term_extent(params) -> tuple:
        """``(scale, reach)`` bounding each column's float32 term by ``scale * (|x| +
        reach)**2`` (``quadratic_in_x`` forms; ``inference.draws_rounding``)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ class buckets
    #: True when :meth:`class_axes` declares every layout of this form's chunk statistics and
    #: kernel tables: its kernels then run over a bucket of classes (``_buckets``), so a model
    #: whose class count falls in a compiled bucket compiles nothing. False (the reference
    #: form's default): kernels involving the family compile for each class count
    class_buckets: ClassVar[bool] = False

    @staticmethod
    def class_axes(tree):
        """Per field of ``tree`` (one chunk's statistics from the statistics kernel, or a
        :meth:`kernel_table`), the axis that indexes the classes, or None for a class-free
        field (``_buckets.leading``). Default: axis 0 of every field of at least one
        dimension, the families' ``(K, ...)`` layout; read only where :attr:`class_buckets`."""
        from ._buckets import leading

        return leading(tree)

    # ------------------------------------------------------------------ other paths
    #: statistics and scores of labelled dense data counted on the host in float64
    #: (``host_stats``, ``host_score_table``, ``host_scores``; :mod:`._host`)
    host_counting: ClassVar[bool] = False
    #: the exact predictive as the plug-in product plus indicator products and a host tail
    #: (``exact_table``, ``host_tail``; :mod:`._exact`)
    exact_host_tail: ClassVar[bool] = False
    #: ``scipy.sparse`` input through ``sparse_suff_stats``, ``sparse_log_likelihood``,
    #: ``sparse_log_predictive`` and ``sparse_log_normalizer``, which also take the dense
    #: float64 blocks of small calls (``_host.scored_on_host``); without it a sparse block
    #: is read densified a chunk of rows at a time (``_data.SparseRows``) by the dense paths
    supports_sparse: ClassVar[bool] = False
    #: True when ``sparse_suff_stats`` takes a dense block as it is and is the cheaper
    #: statistics up to ``_host.HOST_PRODUCT_CELLS`` in float64 (products alone, no per-entry
    #: function such as a log-factorial); any form with host products counts a fit of up to
    #: ``_host.SMALL_FIT_CELLS`` there (``_host.counted_on_host``, ``host_block``)
    dense_host_stats: ClassVar[bool] = False
    #: True when the family's ``suff_stats``, ``log_likelihood``, ``log_predictive`` and
    #: ``log_normalizer`` run on float64 NumPy as written (``families._base.xp_of``): small
    #: dense fits and calls (``_host.HOST_MATHS_ENTRIES``) are then computed by them on the
    #: host, compiling nothing (for a form with host products, only blocks with missing
    #: values, whose products are NaN: ``_host.host_stats``, ``_host.host_scores``)
    host_maths: ClassVar[bool] = False
    #: True when the form also serves every subclass of its family (a class made per value
    #: of a likelihood constant, ``NegativeBinomial``'s per-``r`` classes, shares the family's
    #: maths); False: a subclass gets its own reference form
    serves_subclasses: ClassVar[bool] = False

    # ------------------------------------------------------------------ NumPyro sites
    #: True when NUTS and simulation sample the family's columns batched
    #: (:meth:`sample_params_batched`: one site for many columns, the family's density; a
    #: site per column is traced and compiled apart) and the draws are mapped to and from
    #: the family's own sites (:meth:`unbatched_draws`, :meth:`batched_draws`)
    batched_sites: ClassVar[bool] = False

    @staticmethod
    def sample_params_batched(prior, n_classes: int, site: str) -> dict:
        """The family's ``sample_params`` with its columns batched into a few sites."""
        raise NotImplementedError

    @staticmethod
    def observe_batched(params: dict, y, site: str, **kw) -> None:
        """The family's ``observe`` simulating (no values) with the columns batched."""
        raise NotImplementedError

    @staticmethod
    def unbatched_draws(draws: dict, prior) -> dict:
        """Draws of the batched sites (keys relative to the block's site, leading draw
        axes) under the family's own per-column keys."""
        raise NotImplementedError

    @staticmethod
    def batched_draws(draws: dict, prior) -> dict:
        """The inverse of :meth:`unbatched_draws` for the parameters' draws."""
        raise NotImplementedError


_FORMS: dict[type, type[FastForm]] = {}
_loaded: list[bool] = []


def register(form: type[FastForm]) -> type[FastForm]:
    """Register ``form`` for ``form.family`` (usable as a class decorator)."""
    _FORMS[form.family] = form
    return form


def form_of(family) -> type[FastForm]:
    """The registered form of ``family`` (a class or an instance), else its reference form:
    the family's own maths, computed in float64 (``float32_safe`` False)."""
    if not _loaded:
        for module in pkgutil.iter_modules(__path__):  # each public module registers a form
            if not module.name.startswith("_"):
                importlib.import_module(f"{__name__}.{module.name}")
        _loaded.append(True)
    cls = family if isinstance(family, type) else type(family)
    form = _FORMS.get(cls)
    if form is None:
        served = [_FORMS[base] for base in cls.__mro__[1:]
                  if base in _FORMS and _FORMS[base].serves_subclasses]
        form = _FORMS[cls] = served[0] if served else type(
            f"{cls.__name__}Reference", (FastForm,), {"family": cls, "float32_safe": False})
    return form


def float32_safe(families) -> bool:
    """Whether every family has a form whose float32 results the library bounds."""
    return all(form_of(f).float32_safe for f in families)


def reference_precision(families):
    """A context in which computations involving ``families`` are correct: JAX's float64 when
    float32 is the dtype and some family has no float32-safe form, else nothing changes."""
    if float64_mode() or float32_safe(families):
        return contextlib.nullcontext()
    return jax.enable_x64(True)


__all__ = ["FastForm", "float32_safe", "form_of", "reference_precision", "register"]
