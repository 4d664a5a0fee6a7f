"""The contract every likelihood family fulfils.

A family is one conjugate pair ``p(x | theta, c) p(theta)`` for the columns it covers. It is
split in two halves, as in scikit-learn's ``_BaseDiscreteNB`` and dynamax's components:

* **host side** (the instance): the prior hyperparameters the user gave, validation of the raw
  column values, and the fitted *schema* (e.g. the category levels of a categorical column);
* **numeric side** (static methods, pure and jittable): sufficient statistics, the closed-form
  estimates, the conjugate posterior, the log posterior predictive, the log evidence and the
  NumPyro sample statements. They take and return NamedTuples of arrays only.

Everything a fit, an update, a merge or a saved model needs is a function of the per-class
sufficient statistics and the prior, so the estimator never looks at the data twice.

Array conventions
-----------------
``K`` classes, ``F`` columns in the block, ``n`` rows. ``resp`` is the ``(n, K)`` matrix of row
weights per class (one-hot labels times sample weights), so every statistic is a weighted sum and
integer weights equal duplicated rows. Missing values are ``NaN`` in the encoded block (``-1`` for
categorical codes); they drop out of that column's statistics and likelihood only.

Log likelihoods returned by ``log_likelihood`` and ``log_predictive`` are ``(n, K)`` and exact *up
to a per-row constant that does not depend on the class* (scikit-learn's ``_joint_log_likelihood``
contract); ``log_normalizer`` returns that constant, so the two together give the full density.
"""

from __future__ import annotations

import copy
import importlib
import sys
import warnings
from typing import Any, ClassVar, NamedTuple

import jax
import numpy as np

METHODS_PLUG_IN = ("ml", "map", "mean")


class _LazyModule:
    """A module imported at its first attribute access. A family's NumPyro statements serve
    MCMC, simulation and ArviZ only; importing NumPyro up front costs 0.2-0.5 s of every cold
    start (``benchmarks/run.py``, coldstart)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(self._name), attr)


numpyro = _LazyModule("numpyro")
dist = _LazyModule("numpyro.distributions")


class Schema(NamedTuple):
    """What a family learned about its columns at fit time, beyond the statistics."""

    columns: tuple  # column labels, in block order
    levels: tuple = ()  # per column, the tuple of category values (categorical only)


class Family:
    """Base class: a likelihood family and its conjugate prior for a block of columns.

    Subclasses set ``name`` and implement the methods below. Hyperparameters are stored as given
    (scikit-learn style: ``__init__`` only stores); ``prior(schema)`` broadcasts them.
    """

    name: ClassVar[str]
    #: True when the block's columns form one random vector (Multinomial), so a block cannot be
    #: split column by column.
    joint_columns: ClassVar[bool] = False
    #: True when the family takes ``scipy.sparse`` input through the ``sparse_*`` methods
    supports_sparse: ClassVar[bool] = False
    #: for a family of numeric values, the checks ``encode`` applies (keys ``nonnegative``,
    #: ``binary``, ``integer``), so the kernels can run them on raw numbers instead of the
    #: host (``_kernels.invalid_values``); None when values must be encoded on the host. Key
    #: ``small_counts``: the family's statistics kernel sums the chunk's log factorials by
    #: ``_steps.small_count_log_factorials``, whose markers the checks then read instead of
    #: a bounds pass of their own
    value_checks: ClassVar[dict | None] = None
    #: True when ``encode`` returns integer codes rather than floats
    integer_codes: ClassVar[bool] = False
    #: True for a family without parameters whose statistic is the training sample itself
    #: (variable length: KernelDensity). Its statistics (``host_suff_stats``), scoring table
    #: (``host_table``) and scores (``host_log_likelihood``) are computed on the host, never by
    #: the fixed-shape kernels; the same table serves every closed-form method, and the
    #: evidence, posterior draws and MCMC are refused (``fitted.check_parametric``).
    nonparametric: ClassVar[bool] = False
    #: True for a parametric family whose statistics of labelled dense data are counts and
    #: whose scores are table lookups, both computed on the host in float64 NumPy
    #: (``host_stats``, ``host_score_table``, ``host_scores``; streamed by ``bayesnb._host``)
    #: instead of by the compiled kernels: exact, and nothing to compile however wide the
    #: block. The kernels still serve its other uses (soft labels, leave-one-out, draws).
    host_counting: ClassVar[bool] = False
    #: True when the plug-in score kernel (``log_likelihood`` of the ``kernel_table``) is
    #: products of the block with ``(classes, columns)`` tables only, with no
    #: ``(rows, classes, columns)`` temporary: its chunks are then sized by the input row
    #: alone (``_kernels.stream_scores``)
    product_scores: ClassVar[bool] = False
    #: names of the hyperparameters, in ``__init__`` order (for repr, get_params, persistence)
    _hyper: ClassVar[tuple[str, ...]] = ()
    #: the NamedTuple types of the statistics and plug-in parameters (persistence rebuilds them)
    stats_type: ClassVar[type]
    params_type: ClassVar[type]
    #: True when ``estimate``, ``posterior`` and ``merge_stats`` also run on NumPy arrays: the
    #: kernels then finish statistics and tables in float64 on the host whatever JAX's dtype,
    #: so float32 only ever holds one chunk's sums and the shifted tables a kernel reads
    host_numeric: ClassVar[bool] = False

    # ------------------------------------------------------------------ host side
    def encode(self, values: np.ndarray, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        """Validate one block of raw values and return the numeric array the kernels read.

        ``unseen`` says what a value outside the fitted levels means (categorical families):
        ``"error"`` (at fit, and under ML) or ``"smooth"`` (give it the prior's probability).
        ``dtype`` is the float type of the result (the kernels' dtype; float64 if None);
        families that encode to integer codes ignore it."""
        raise NotImplementedError

    def learn_schema(self, values: np.ndarray, columns: tuple) -> Schema:
        """Schema learned from the training block (categorical levels); default: columns only."""
        return Schema(columns=tuple(columns))

    def prior(self, schema: Schema) -> NamedTuple:
        """The hyperparameters broadcast to the block's shape, as a NamedTuple of arrays."""
        raise NotImplementedError

    def check_prior(self, prior: NamedTuple, schema: Schema, method: str) -> None:
        """Raise ``ValueError`` if ``method`` is undefined under this prior (MAP, alpha < 1)."""

    def hyperpriors(self) -> dict:
        """Hyperparameters given as NumPyro distributions (sampled by the model: MCMC only)."""
        return {k: v for k, v in self.get_params().items() if is_distribution(v)}

    @staticmethod
    def with_hyper(prior: NamedTuple, name: str, value) -> NamedTuple:
        """``prior`` with hyperparameter ``name`` set to a sampled (scalar) ``value``."""
        import jax.numpy as jnp

        return prior._replace(**{name: jnp.broadcast_to(value, np.shape(getattr(prior, name)))})

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Hyperparameters as given (scikit-learn's clone and repr use this)."""
        return {k: getattr(self, k) for k in self._hyper}

    def set_params(self, **params) -> Family:
        for k, v in params.items():
            if k not in self._hyper:
                raise ValueError(f"{type(self).__name__} has no hyperparameter {k!r}.")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={_short(v)}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __sklearn_clone__(self):
        # scikit-learn's contract: a new object with equal hyperparameters, so that set_params
        # on the clone (GridSearchCV's "features__alpha") leaves this one alone; the values
        # are shared (set_params rebinds them). NaiveBayes clones its whole ``features`` spec
        # at once, so one instance given to several columns stays one block in the clone.
        return copy.copy(self)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        a, b = self.get_params(), other.get_params()
        return all(a[k] is b[k] if is_distribution(a[k]) or is_distribution(b[k])
                   else np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a)

    __hash__ = object.__hash__  # identity: one instance covering several columns is one block

    # ------------------------------------------------------------------ numeric side (pure)
    @staticmethod
    def suff_stats(x: jax.Array, resp: jax.Array, n_levels: Any = None) -> NamedTuple:
        """Per-class sufficient statistics of one block (``resp``: the weighted ``(rows,
        classes)`` one-hot)."""
        raise NotImplementedError

    #: optional ``label_stats(x, labels, n_levels)``: the same chunk statistics as
    #: ``suff_stats``, summed by label (``labels`` is a ``_kernels.Labels``: per-class
    #: weighted sums by scatter, each row's class by gather) instead of products with the
    #: one-hot, so a fit's cost and memory do not grow with rows x classes. None: the
    #: kernel builds the one-hot and calls ``suff_stats``.
    label_stats: ClassVar[Any] = None

    @staticmethod
    def merge_stats(a: NamedTuple, b: NamedTuple) -> NamedTuple:
        """Statistics of the union of two data sets (sums, unless the family says otherwise)."""
        return jax.tree_util.tree_map(lambda u, v: u + v, a, b)

    @staticmethod
    def remove_stats(a: NamedTuple, b: NamedTuple) -> NamedTuple:
        """Statistics of data set ``a`` without its subset ``b``: the inverse of
        ``merge_stats`` (differences of sums unless the family says otherwise), elementwise,
        so any leading batch axes broadcast (exact leave-one-out, ``bayesnb.loo``)."""
        return jax.tree_util.tree_map(lambda u, v: u - v, a, b)

    @staticmethod
    def estimate(prior: NamedTuple, stats: NamedTuple, method: str) -> NamedTuple:
        """Plug-in parameters for ``method`` in {'ml', 'map', 'mean'}, in the form
        ``log_likelihood`` reads."""
        raise NotImplementedError

    @staticmethod
    def posterior(prior: NamedTuple, stats: NamedTuple) -> NamedTuple:
        """Conjugate posterior hyperparameters (same NamedTuple type as the prior, per class)."""
        raise NotImplementedError

    @staticmethod
    def log_likelihood(params: NamedTuple, x: jax.Array, n_levels=None) -> jax.Array:
        """``(n, K)`` plug-in log p(x_i | c = k, params), up to a class-free per-row constant.

        ``n_levels`` is the static per-column level count (categorical families; as in
        ``suff_stats``): with it a kernel can unroll over columns instead of gathering."""
        raise NotImplementedError

    @staticmethod
    def term_extent(params: NamedTuple) -> tuple | None:
        """``(scale (K, F), reach (K, F))`` with each column's log likelihood term and its
        float32 rounding at most ``scale * (|x| + reach)**2`` in magnitude, for a family whose
        terms are not linear in the raw values (a Gaussian's precision and mean); None
        otherwise. The predictive over draws bounds its float32 rounding with it
        (``inference.draws_rounding``)."""
        return None

    @staticmethod
    def linear_scores(params: NamedTuple) -> tuple | None:
        """``(weights (K, F), bias (K,))`` with ``log_likelihood(params, x) = x @ weights.T +
        bias`` for every ``x`` without missing values, wherever both are finite; None for a
        family whose scores are not linear in the raw values.

        The predictive over posterior draws stacks a chunk of draws' weights side by side and
        scores them with one matmul (``inference.predict_from_draws``); a family without this
        form is scored draw by draw through ``log_likelihood``."""
        return None

    @staticmethod
    def log_predictive(posterior: NamedTuple, x: jax.Array, n_levels=None) -> jax.Array:
        """``(n, K)`` exact log posterior predictive log p(x_i | c = k, data), up to a
        class-free per-row constant."""
        raise NotImplementedError

    @staticmethod
    def log_normalizer(x: jax.Array) -> jax.Array:
        """``(n,)`` the class-free constant left out of the two functions above."""
        return jax.numpy.zeros(x.shape[0])

    @staticmethod
    def log_evidence(prior: NamedTuple, stats: NamedTuple) -> jax.Array:
        """log p(X_block | y) with the parameters integrated out against the prior."""
        raise NotImplementedError

    @staticmethod
    def describe(params: NamedTuple, schema: Schema, classes) -> dict:
        """Plug-in parameters as tidy DataFrames (rows: classes), keyed by column."""
        raise NotImplementedError

    @staticmethod
    def from_tables(tables: dict, schema: Schema, classes) -> NamedTuple:
        """Inverse of ``describe``: plug-in parameters from stated probability tables."""
        raise NotImplementedError

    # ------------------------------------------------------------------ host side (nonparametric)
    @staticmethod
    def host_suff_stats(x: np.ndarray, codes: np.ndarray, weight: np.ndarray,
                        n_classes: int) -> NamedTuple:
        """Statistics of one encoded block (NumPy), for a ``nonparametric`` family."""
        raise NotImplementedError

    @staticmethod
    def empty_stats() -> NamedTuple:
        """The statistics of no rows, for a ``nonparametric`` family (chunked fits start
        from it)."""
        raise NotImplementedError

    def host_table(self, prior: NamedTuple, stats: NamedTuple, schema: Schema,
                   classes) -> NamedTuple:
        """The scoring table of a ``nonparametric`` family (any method), refusing an undefined
        one with an error naming the column and class."""
        raise NotImplementedError

    @staticmethod
    def host_log_likelihood(table: NamedTuple, x: np.ndarray) -> np.ndarray:
        """``(n, K)`` float64 log densities of an encoded block (NumPy), constants included."""
        raise NotImplementedError

    # ------------------------------------------------------------------ host side (counting)
    @staticmethod
    def host_stats(x: np.ndarray, codes: np.ndarray, weight: np.ndarray, n_classes: int,
                   n_levels: Any) -> NamedTuple:
        """Float64 statistics of one chunk of an encoded block (NumPy), for a
        ``host_counting`` family; chunks merge by ``merge_stats``."""
        raise NotImplementedError

    @staticmethod
    def host_score_table(table: NamedTuple, exact: bool) -> Any:
        """The float64 form of a fitted table (plug-in, or if ``exact`` a posterior) that
        ``host_scores`` reads, for a ``host_counting`` family."""
        raise NotImplementedError

    @staticmethod
    def host_scores(prepared: Any, x: np.ndarray) -> np.ndarray:
        """``(m, K)`` float64 log p(x_i | c = k) of one chunk of an encoded block, constants
        included, for a ``host_counting`` family."""
        raise NotImplementedError

    # ------------------------------------------------------------------ float32 safety
    @staticmethod
    def fit_shift(first: np.ndarray) -> np.ndarray | None:
        """A float64 per-column value subtracted from the raw numbers on the host before they
        are converted to the kernel dtype (``first`` is the first chunk), or None. The chunk
        statistics are then of the shifted values; ``finish_stats`` undoes the shift."""
        return None

    @staticmethod
    def finish_stats(stats: NamedTuple, shift: np.ndarray | None) -> NamedTuple:
        """One chunk's statistics (float64 NumPy) of the values shifted by ``fit_shift``."""
        return stats

    @staticmethod
    def refine_stats(stats: NamedTuple, read) -> NamedTuple:
        """One chunk's kernel statistics (float64 NumPy, before ``finish_stats``) with any
        part that float32 may have rounded too far recomputed in float64 on the host from the
        chunk's values (``read()``, lazily: most chunks never read them)."""
        return stats

    @staticmethod
    def float32_inexact(stats: NamedTuple, shift: np.ndarray | None) -> bool:
        """Whether float32 inputs cannot represent what the finished float64 ``stats``
        describe (e.g. a spread below float32's resolution at the values' magnitude). Only
        asked in float32 mode; the statistics pass is then redone in float64
        (``_kernels.stream_suff_stats``)."""
        return False

    @staticmethod
    def kernel_table(table: NamedTuple, exact: bool, joint: bool):
        """``(table, shift)``: the float64 ``table`` in the form the float32 score kernel
        reads, and a per-column shift subtracted from the raw values on the host (or None).

        The default is the table itself. Families whose log scores are large numbers that
        differ little between classes return them relative to a reference (the class-free part
        dropped, so only when ``joint`` is False), computed in float64 here, so float32 never
        subtracts two nearly equal large numbers."""
        return table, None

    @staticmethod
    def score_rounding(table, x: jax.Array, scores: jax.Array) -> jax.Array:
        """``(n,)`` bounds on the rounding error of the kernel's log scores of the rows of
        ``x`` under ``table``, or ``(n, K)`` per class (weighed by the class probabilities,
        ``_kernels.class_weighted``); the kernels refuse a block above
        ``_kernels.SCORE_ROUNDING_LIMIT``. ``scores`` are the family's own ``(n, K)`` kernel
        scores of ``x``: a float32 sum is rounded in proportion to the size its partial sums
        reach (:func:`sum_rounding`). Default 0: the family's scores are exact enough."""
        import jax.numpy as jnp

        return jnp.zeros(x.shape[0])

    # ------------------------------------------------------------------ NumPyro
    @staticmethod
    def sample_params(prior: NamedTuple, n_classes: int, site: str) -> NamedTuple:
        """NumPyro sample statements for the parameters, under a ``class`` plate."""
        raise NotImplementedError

    @staticmethod
    def observe(params: NamedTuple, x: jax.Array, y: jax.Array, site: str, **kw) -> None:
        """NumPyro observe statement for the block given labels ``y`` (missing values masked).
        With ``x=None`` the same statement samples the block (prior / posterior predictive
        simulation with ``numpyro.infer.Predictive``)."""
        raise NotImplementedError

    @staticmethod
    def stats_log_likelihood(sample: dict, stats: NamedTuple) -> jax.Array:
        """log p(X_block | y, theta) from the sufficient statistics alone (constants included),
        so NUTS scores K x F numbers per step instead of every row."""
        raise NotImplementedError

    @staticmethod
    def sample_posterior(rng: np.random.Generator, posterior: NamedTuple, n: int) -> dict:
        """``n`` i.i.d. draws from the conjugate posterior, keyed like ``sample_params``, each
        with a leading draw axis (NumPy's gamma sampler: 25-50x faster than JAX's on CPU)."""
        raise NotImplementedError

    @staticmethod
    def params_from_sample(sample: dict, posterior: NamedTuple) -> NamedTuple:
        """The plug-in table ``log_likelihood`` reads, for one draw of the parameters."""
        raise NotImplementedError

    @staticmethod
    def posterior_distributions(posterior: NamedTuple) -> dict:
        """The conjugate posterior as NumPyro distributions, keyed like ``sample_params``'s
        result (the sample site is ``f"{site}.{key}"``)."""
        raise NotImplementedError

    @classmethod
    def posterior_log_density(cls, posterior: NamedTuple, params: dict) -> jax.Array:
        """log p(params | data) under the conjugate posterior (a scalar)."""
        return sum(jax.numpy.sum(d.log_prob(params[k]))
                   for k, d in cls.posterior_distributions(posterior).items())


class Float32Unrepresentable(ValueError):
    """Raised by ``Family.kernel_table`` when float32 cannot represent what the table
    describes; ``column`` is the index in the block (the kernels add its name and the x64
    advice)."""

    def __init__(self, column: int, reason: str):
        super().__init__(reason)
        self.column, self.reason = column, reason


def cached_by_identity(cache: dict, obj: Any, key: tuple, build, limit: int) -> Any:
    """``build()``'s result for ``obj`` (a fitted table, a model, a schema's levels), kept in
    ``cache`` under ``(id(obj),) + key``. The entry keeps ``obj`` itself, so a recycled id
    cannot hit (equality would not do: ``(0, 1) == (False, True)``); past ``limit`` entries
    the oldest goes first."""
    full = (id(obj), *key)
    hit = cache.get(full)
    if hit is None or hit[0] is not obj:
        value = build()
        if len(cache) >= limit:
            cache.pop(next(iter(cache)), None)
        hit = cache[full] = (obj, value)
    return hit[1]


def is_cached(cache: dict, obj: Any, key: tuple = ()) -> bool:
    """Whether :func:`cached_by_identity` holds a value for ``obj`` and ``key``."""
    hit = cache.get((id(obj), *key))
    return hit is not None and hit[0] is obj


def xp_of(*trees) -> Any:
    """NumPy when every leaf of ``trees`` is a NumPy array or number (host float64), else
    ``jax.numpy`` (traced or device arrays)."""
    leaves = jax.tree_util.tree_leaves(trees)
    if all(isinstance(a, (np.ndarray, np.generic, float, int, bool)) for a in leaves):
        return np
    import jax.numpy as jnp

    return jnp


#: a float32 sum over ``n`` columns is rounded in its accumulation by up to about
#: ``SUM_ROUNDING * eps * log2(n)`` times the size its partial sums reach, which is at most
#: the result's size plus the terms' root sum of squares (mixed signs, :func:`centre`). On
#: XLA:CPU's products, per (row, class) against float64 (Multinomial scores; rows of 42 to
#: 5,000 non-zero counts): with the products' own rounding (twice epsilon times that root
#: sum of squares) it bounds the log-odds error to within 1.12x at worst, which the limit's
#: factor of two covers (``_kernels.SCORE_ROUNDING_LIMIT``). Tables relative to each
#: column's largest class had every term of one sign: documents of 1e6 tokens over 5,000
#: words of two close classes moved probabilities by 6.5e-4 unrefused.
SUM_ROUNDING = 0.5
#: a chunk whose one-bound-for-all-classes rounding stays below this (half the kernels'
#: ``SCORE_ROUNDING_LIMIT``: the class weighting then cannot exceed the limit) skips the
#: per-class bound's product (``Gaussian.score_rounding``, ``Multinomial.score_rounding``)
COARSE_ROUNDING = 1e-4


def sum_rounding(size: jax.Array, n_terms: int) -> jax.Array:
    """Bound on the accumulated rounding of float32 sums of ``n_terms`` per-column terms whose
    partial sums reach ``size`` (see :data:`SUM_ROUNDING`)."""
    eps = float(np.finfo(np.float32).eps)
    return SUM_ROUNDING * eps * float(np.log2(max(n_terms, 2))) * size


def _leaf_f64(a) -> np.ndarray:
    a = np.asarray(a)  # one conversion of a JAX array (each costs a few microseconds)
    return a if a.dtype.kind in "biu" or a.dtype == np.float64 else a.astype(np.float64)


def host_f64(tree) -> Any:
    """Every leaf as a float64 NumPy array (booleans and integer indices kept)."""
    return jax.tree_util.tree_map(_leaf_f64, tree)


def is_distribution(value: Any) -> bool:
    if "numpyro.distributions" not in sys.modules:  # no distribution can exist yet
        return False
    from numpyro.distributions import Distribution

    return isinstance(value, Distribution)


def _short(v: Any) -> str:
    import reprlib

    if is_distribution(v):
        return f"{type(v).__name__}(...)"
    if isinstance(v, np.ndarray) and v.ndim > 0:
        return f"array(shape={v.shape})"
    return reprlib.repr(v)


def broadcast_hyper(value: Any, n: int, name: str, family: str, *, positive: bool = True,
                    allow_zero: bool = False, columns: tuple | None = None,
                    squared: bool = False) -> np.ndarray:
    """A scalar or length-``n`` hyperparameter as a float64 array of shape ``(n,)``; an invalid
    entry is reported with its column when ``columns`` is given. In float32 its magnitude is
    held to ``FLOAT32_SAFE`` (the data's own limit), or to its square for a hyperparameter in
    the data's squared units (``squared``: a Gaussian's rate, which ``Gaussian(rate=1e22)`` for
    data near 1e11 needs).

    A NumPyro distribution in place of the value is a hyperprior (learned smoothing, MCMC
    only): the array then holds the hyperprior's mean as a placeholder, and the model samples
    the value (``Family.hyperpriors``)."""
    if is_distribution(value):
        return np.full(n, float(np.mean(np.asarray(value.mean))))
    a = np.asarray(value, dtype=np.float64)
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,):
        raise ValueError(
            f"{family}: {name} must be a scalar or have shape ({n},) (one value per column), "
            f"got shape {a.shape}."
        )
    limit = FLOAT32_SAFE**2 if squared else FLOAT32_SAFE
    bad = ~np.isfinite(a) | ((np.abs(a) > limit) & (not float64_mode()))
    if positive:
        bad |= (a < 0) if allow_zero else (a <= 0)
    if np.any(bad):
        j = int(np.argmax(bad))
        where = f"column {columns[j]!r}: " if columns is not None and len(columns) == n else ""
        need = ("finite (within float32 range: enable x64 for larger)" if np.isfinite(a[j])
                else "finite") + ("" if not positive else
                                  " and non-negative" if allow_zero else " and positive")
        raise ValueError(f"{where}{family}: {name} must be {need}, got {a[j]!r}.")
    return a


def numeric_block(values: np.ndarray, schema: Schema, family: str, dtype=None, *,
                  nonnegative: bool = False, binary: bool = False,
                  integer: bool = False) -> np.ndarray:
    """A block as floats with NaN for missing, in ``dtype`` (default float64), validated.

    Rejects non-numbers, +-inf, values beyond float32's safe range (in float32 mode) and,
    when asked, negative, non-binary or non-integer values, naming the column and row.
    A numeric array is checked with a few reductions (min, max) and converted in one copy at
    most; only a failing block is searched value by value for the error message."""
    values = np.asarray(values)
    if (values.dtype.kind in "biuf" and values.ndim == 2 and values.size
            and _passes(values, nonnegative, binary, integer)):
        return values.astype(np.float64 if dtype is None else dtype, copy=False)
    if values.dtype.kind == "f":  # before +-inf is reported: the range is the first cause
        check_float64_range(values, schema.columns)
    x = _float64_block(values, schema, family)
    if values.dtype.kind != "f":
        check_float64_range(x, schema.columns)
    if nonnegative:
        first_bad(x < 0, schema, x, f"{family} needs non-negative counts")
    if binary:
        first_bad(~np.isnan(x) & (x != 0) & (x != 1), schema, x,
                  f"{family} needs values in {{0, 1}} (or booleans)")
    if integer:
        first_bad(~np.isnan(x) & (x != np.floor(x)), schema, x, f"{family} needs integer counts")
    return x if dtype is None else x.astype(dtype)


def _passes(x: np.ndarray, nonnegative: bool, binary: bool, integer: bool) -> bool:
    """True when a numeric block certainly passes every check (NaN allowed as missing)."""
    lo, hi = x.min(), x.max()
    if x.dtype.kind == "f" and (np.isnan(lo) or np.isnan(hi)):  # missing values: skip them
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN block
            lo, hi = np.nanmin(x), np.nanmax(x)
        if np.isnan(lo):
            return True
    lo, hi = float(lo), float(hi)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return False
    if not float64_mode() and max(-lo, hi) > FLOAT32_SAFE:
        return False
    if float64_mode() and max(-lo, hi) > FLOAT64_SAFE:
        return False
    if (nonnegative or binary) and lo < 0:
        return False
    if binary and (hi > 1 or (x.dtype.kind == "f" and np.any((x > 0) & (x < 1)))):
        return False
    if integer and x.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            return not np.any(x - np.floor(x) > 0)  # NaN compares False: missing is allowed
    return True


#: largest magnitude the float64 kernels take: squares of 1e150 (Gaussian sums of squares)
#: summed over 1e8 rows stay below float64's 1.8e308 (float32 has its own, smaller limit)
FLOAT64_SAFE = 1e150


def check_float64_range(block: np.ndarray, columns: tuple) -> None:
    """In x64 mode, refuse finite values whose squares would overflow float64, naming the
    column and row (they used to surface as "no observed value in this class" at 1e200 and
    as an "infinite value" at 1e307). Two reductions over float blocks; nothing in float32
    mode, where the families check against their own limit."""
    if block.dtype.kind != "f" or block.ndim != 2 or not block.size or not float64_mode():
        return
    with np.errstate(invalid="ignore"):
        hi, lo = np.fmax.reduce(block, axis=None), np.fmin.reduce(block, axis=None)
    if not max(abs(float(hi)), abs(float(lo))) > FLOAT64_SAFE:
        return
    with np.errstate(invalid="ignore"):
        big = np.isfinite(block) & (np.abs(block) > FLOAT64_SAFE)
    if big.any():  # +-inf alone is the family's to report ("infinite value")
        j = int(np.nonzero(big.any(axis=0))[0][0])
        i = int(np.argmax(big[:, j]))
        raise ValueError(
            f"column {columns[j]!r}: value {block[i, j]:.3g} (row {i}) is too large for the "
            f"computation: its square overflows float64 (values must stay within "
            f"+-{FLOAT64_SAFE:g}); rescale the column, e.g. divide it by a power of ten.")


def _float64_block(values: np.ndarray, schema: Schema, family: str) -> np.ndarray:
    """Float64 copy of a block with NaN for missing; rejects +-inf and non-numbers by column."""
    values = np.asarray(values)
    if values.dtype == object:  # None / pd.NA / NaT from a DataFrame mean "missing"
        import pandas as pd

        values = np.where(pd.isna(values), np.nan, values)
    try:
        x = np.asarray(values, dtype=np.float64)
    except OverflowError:  # a Python integer beyond float64 (10**400)
        for j, col in enumerate(schema.columns):
            for i, v in enumerate(values[:, j]):
                if isinstance(v, int) and abs(v) > sys.float_info.max:
                    raise ValueError(f"column {col!r}: an integer of {len(str(abs(v)))} "
                                     f"digits (row {i}) is too large for a float64 number; "
                                     f"rescale the column.") from None
        raise
    except (TypeError, ValueError):
        for j, col in enumerate(schema.columns):
            try:
                np.asarray(values[:, j], dtype=np.float64)
            except (TypeError, ValueError):
                raise TypeError(
                    f"column {col!r}: {family} needs numbers, got values such as "
                    f"{_first_non_numeric(values[:, j])!r}."
                ) from None
        raise
    if x.ndim != 2:
        raise ValueError(f"{family}: expected a 2-D block, got shape {x.shape}.")
    inf = np.isinf(x)
    if inf.any():
        j = int(np.nonzero(inf.any(axis=0))[0][0])
        raise ValueError(
            f"column {schema.columns[j]!r}: infinite value ({x[inf.any(axis=1), j][0]}) "
            f"is not allowed; use NaN for a missing value."
        )
    check_float32_range(x, schema.columns, family)
    return x


#: largest magnitude whose square (Gaussian sums of squares) still fits in float32
FLOAT32_SAFE = 1e18


def float64_mode() -> bool:
    # what JAX makes of float64 (honours ``jax.enable_x64`` contexts): 0.4 us, where
    # ``jnp.result_type(float) == jnp.float64`` took 50-100 us, a few ms per fit in all
    return jax.dtypes.canonicalize_dtype(np.float64) == np.float64


def kernel_shift(shift: np.ndarray) -> np.ndarray:
    """A per-column shift for ``Family.kernel_table``, as float64 values float32 holds exactly
    in float32 mode. The host then subtracts it from float32 input with one rounding, the one a
    float32 subtraction on the device makes, so a device-resident block is shifted where it
    lives with the same result (``_kernels._DeviceChunks``); any value near the data centres
    it as well."""
    shift = np.asarray(shift, dtype=np.float64)
    return shift if float64_mode() else shift.astype(np.float32).astype(np.float64)


def check_float32_range(x: np.ndarray, columns, family: str, limit: float = FLOAT32_SAFE):
    """In float32 mode, refuse values whose squares would overflow, naming the column."""
    if float64_mode():
        return
    with np.errstate(invalid="ignore"):
        big = np.abs(x) > limit
    if big.any():
        j = int(np.nonzero(big.any(axis=0))[0][0])
        raise ValueError(
            f"column {columns[j]!r}: {family} value {x[big[:, j], j][0]:.3g} is too large for "
            f"float32, the default dtype (limit {limit:g}); rescale the column or enable JAX's "
            f"x64 mode (JAX_ENABLE_X64=1).")


def _first_non_numeric(col: np.ndarray) -> Any:
    for v in col:
        try:
            float(v)
        except (TypeError, ValueError):
            return v
    return None


def first_bad(mask: np.ndarray, schema: Schema, x: np.ndarray, problem: str) -> None:
    """Raise a ValueError naming the first column where ``mask`` is true."""
    if mask.any():
        j = int(np.nonzero(mask.any(axis=0))[0][0])
        i = int(np.nonzero(mask[:, j])[0][0])
        raise ValueError(f"column {schema.columns[j]!r}: {problem}, got {x[i, j]!r} (row {i}).")


def has_missing(x: jax.Array) -> jax.Array:
    """Whether a block holds a NaN, from one sum (the cheapest reduction; an inf also gives
    NaN there, which only sends a chunk the kernels reject anyway down the masked path)."""
    import jax.numpy as jnp

    return jnp.isnan(jnp.sum(x))


def dirichlet_draws(rng: np.random.Generator, alpha: np.ndarray, n: int) -> np.ndarray:
    """``n`` Dirichlet draws for every row of ``alpha`` (..., V), by normalised gammas."""
    g = rng.standard_gamma(np.broadcast_to(alpha, (n,) + np.shape(alpha)))
    return g / g.sum(axis=-1, keepdims=True)


def log_matmul(x: jax.Array, log_table: jax.Array) -> jax.Array:
    """``x @ log_table.T`` for non-negative ``x``, with the convention ``0 * log 0 = 0``.

    ML and MAP tables hold ``-inf`` for events never seen; a plain matmul would turn ``0 * -inf``
    into NaN. The guarded path (one more matmul) only runs when the table has such entries.
    """
    import jax.numpy as jnp

    def plain(t):
        return x @ t.T

    def guarded(t):
        finite = jnp.isfinite(t)
        hits = x @ (~finite).astype(x.dtype).T
        return jnp.where(hits > 0, -jnp.inf, x @ jnp.where(finite, t, 0.0).T)

    return jax.lax.cond(jnp.all(jnp.isfinite(log_table)), plain, guarded, log_table)


def log_rising(a: jax.Array, x: jax.Array, polynomial: bool = True) -> jax.Array:
    r"""``h(a, x) = log Γ(a + x) - log Γ(a) - x log a``, accurate to its own magnitude.

    The exact predictives of count families need :math:`\log Γ(a + x) - \log Γ(a)`; with
    ``a`` a large posterior count, both log-Gamma values are huge and their float32
    difference is noise. Split as :math:`x \log a + h(a, x)`, the first part is linear in
    ``x`` (taken relative to a reference class, in float64, by ``kernel_table``). For
    ``a >= 10`` Stirling's series gives :math:`h = \frac{x^2}{2a} - \frac{x^3}{6a^2} +
    a\,\psi(x/a) - \tfrac12\log(1 + x/a) + S(a + x) - S(a)` with :math:`\psi(u) =
    (1+u)\log(1+u) - u - u^2/2 + u^3/6` (its Taylor series below ``u = 1/4``, where the
    closed form cancels) and :math:`S(z) = \tfrac1{12z} - \tfrac1{360z^3} +
    \tfrac1{1260z^5}`; below 10, log-Gamma directly. With ``polynomial=False`` the two
    polynomial terms (``a >= 10`` only) are left out, for the caller to add from float64
    tables relative to a reference class (:func:`rising_polynomial`): they are the large,
    nearly class-free part when counts are large. In float64 mode they always stay in (and
    the tables hold zeros)."""
    import jax.numpy as jnp
    from jax.scipy.special import gammaln

    big = a >= 10.0
    ab = jnp.where(big, a, 10.0)
    u = x / ab
    l1p = jnp.log1p(u)
    us = jnp.minimum(u, 0.25)
    series = 0.0
    for k in range(18, 3, -1):  # sum_{k>=4} (-u)^k / (k (k - 1)), Horner's scheme
        series = series * us + (-1) ** k / (k * (k - 1))
    series = series * us**4
    tail = jnp.where(u < 0.25, series, (1.0 + u) * l1p - u - u * u * (0.5 - u / 6.0))

    def stirling_tail(z):
        zi = 1.0 / z
        z2 = zi * zi
        return zi * (1 / 12 - z2 * (1 / 360 - z2 / 1260))

    large = ab * tail - 0.5 * l1p + (stirling_tail(ab + x) - stirling_tail(ab))
    if polynomial or x.dtype == jnp.float64:  # float64 tables leave it here (see below)
        large = large + x * x / (2.0 * ab) - x**3 / (6.0 * ab * ab)
    a_small = jnp.where(big, 1.0, a)
    small = gammaln(a_small + x) - gammaln(a_small) - x * jnp.log(a_small)
    return jnp.where(big, large, small)


def class_sums(resp: jax.Array, x: jax.Array, observed: jax.Array | None = None) -> jax.Array:
    """``resp.T @ x`` in a chunk form float32 cannot spoil: ``(3, K, F)`` holding each class's
    weight, its mean and the sum of the rows' deviations from their own class mean, which
    :func:`finish_class_sums` adds up in float64 on the host. A float32 sum of counts in the
    millions is rounded; the deviations are small, so their sum keeps the digits the class
    totals (and the differences between classes' rates) depend on. A chunk whose sums are
    certainly exact (integer values and weights, ``max(x) * total weight < 2**24``, or
    ``2**53`` in float64) takes one product instead. Fractional values (a Multinomial of term
    weights) keep the centred form: their float32 class totals are within 2e-8 of float64,
    against 2e-7 for one plain sum per chunk. With missing values (``observed``, the 0/1 flags
    of ``x``'s entries, missing ones 0 in ``x``), the weights and means are per column over the
    observed entries and the missing ones have no deviation: centred on the mean of all rows,
    a missing entry's deviation was the whole mean, and Poisson counts near 1e5 lost 2 in a
    class total (26 nats of evidence). In float64 every chunk takes the one product, as
    scikit-learn's float64 fit does, and returns it alone, ``(K, F)``: its rounding, about
    1e-16 of a total, is what the centred form would leave too; the check the choice waits
    for kept the class sums from starting beside the chunk's other reductions, and the
    stacked weights and zeros cost the host 77 us a chunk to add up against 11 us (1,024 x
    1,000 documents, 20 classes)."""
    import jax.numpy as jnp

    if x.dtype == jnp.float64:
        return resp.T @ x

    def centred(x):
        if observed is None:
            weight = jnp.broadcast_to(jnp.sum(resp, axis=0)[:, None],
                                      (resp.shape[1], x.shape[1]))
        else:
            weight = resp.T @ observed
        mean = (resp.T @ x) / jnp.where(weight > 0, weight, 1.0)
        dev = x - (resp > 0).astype(x.dtype) @ mean  # each row against its own class
        if observed is not None:
            dev = dev * observed
        return jnp.stack([weight, mean, resp.T @ dev])

    def plain(x):  # every partial sum an integer the dtype holds: added exactly
        ones = jnp.ones((resp.shape[1], x.shape[1]), x.dtype)
        return jnp.stack([ones, resp.T @ x, jnp.zeros_like(ones)])

    exact = _integer_sums_exact(x, resp)
    return jax.lax.cond(exact, plain, centred, x)


def label_class_sums(labels, x: jax.Array, observed: jax.Array | None = None) -> jax.Array:
    """:func:`class_sums` summed by label (``labels``: a ``_kernels.Labels``): the same chunk
    form, by scatter-adds and a gather instead of products with the ``(rows, classes)``
    one-hot."""
    import jax.numpy as jnp

    if x.dtype == jnp.float64:  # as in class_sums
        return labels.sum(x)
    k, f = labels.n_classes, x.shape[1]

    def centred(x):
        if observed is None:
            first = labels.sum(jnp.concatenate([jnp.ones_like(x[:, :1]), x], axis=1))
            weight = jnp.broadcast_to(first[:, :1], (k, f))
        else:
            first = labels.sum(jnp.concatenate([observed, x], axis=1))
            weight = first[:, :f]
        mean = first[:, -f:] / jnp.where(weight > 0, weight, 1.0)
        dev = x - labels.gather(mean)  # each row against its own class
        if observed is not None:
            dev = dev * observed
        return jnp.stack([weight, mean, labels.sum(dev)])

    def plain(x):  # every partial sum an integer the dtype holds: added exactly
        ones = jnp.ones((k, f), x.dtype)
        return jnp.stack([ones, labels.sum(x), jnp.zeros_like(ones)])

    return jax.lax.cond(_integer_sums_exact(x, labels.weights), plain, centred, x)


def _integer_sums_exact(x: jax.Array, weights: jax.Array) -> jax.Array:
    """Whether every weighted sum of a chunk's rows is exact in its dtype: integer values and
    weights whose largest possible sum is below ``2**24`` in float32 (``2**53`` in float64),
    where adding integers is exact. The largest value and fractional part are the value
    checks' own reduction (``_steps.chunk_bounds``), so XLA computes them once."""
    import jax.numpy as jnp

    from ._steps import chunk_bounds

    _, top, frac = chunk_bounds(x)
    integral = (frac == 0) & jnp.all(weights == jnp.floor(weights))
    return integral & (top * jnp.sum(weights) < 2.0 ** (jnp.finfo(x.dtype).nmant + 1))


def finish_class_sums(sums: np.ndarray) -> np.ndarray:
    """The float64 class totals from :func:`class_sums`' chunk form (else ``sums`` itself: a
    float64 chunk's plain sums)."""
    sums = np.asarray(sums, dtype=np.float64)
    return sums[0] * sums[1] + sums[2] if sums.ndim == 3 else sums


def rising_polynomial(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The float64 coefficients of ``x**2`` and ``x**3`` that ``log_rising(...,
    polynomial=False)`` leaves out: ``1 / (2a)`` and ``-1 / (6 a**2)`` (0 where ``a < 10``,
    whose ``h`` is computed whole)."""
    big = (a >= 10.0) & (not float64_mode())  # float64 keeps them whole (its sums are exact
    inv = np.where(big, 1.0 / np.where(big, a, 1.0), 0.0)  # enough, and a row count far above
    return 0.5 * inv, -inv * inv / 6.0  # a would make them cancel)


def centre(table: np.ndarray) -> np.ndarray:
    """Per column, the mean of the finite entries over the classes (0 if none): what a linear
    table is taken relative to, so that each class's terms have both signs and a float32
    product's partial sums stay near the size of its result. Relative to the largest entry
    (:func:`reference`) every term of a class had one sign and the partial sums grew with
    the row: two close classes over 5,000 binary columns had scores near 300 whose rounding
    refused them (``sum_rounding``), though they were exact to 2e-5."""
    finite = np.isfinite(table)
    total = np.sum(np.where(finite, table, 0.0), axis=0)
    count = np.sum(finite, axis=0)
    return np.where(count > 0, total / np.maximum(count, 1), 0.0)


def reference(table: np.ndarray) -> np.ndarray:
    """Per column, the largest finite entry over the classes (0 if none): what a shifted
    table is taken relative to (a class-free constant per row)."""
    finite = np.isfinite(table)
    ref = np.max(np.where(finite, table, -np.inf), axis=0)
    return np.where(np.isfinite(ref), ref, 0.0)
