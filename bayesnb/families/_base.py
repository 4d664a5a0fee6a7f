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
    #: for a family of numeric values, the checks ``encode`` applies (keys ``nonnegative``,
    #: ``binary``, ``integer``), so the kernels can run them on raw numbers instead of the
    #: host (``fast._kernels.invalid_values``); None when values must be encoded on the host
    value_checks: ClassVar[dict | None] = None
    #: True when ``encode`` returns integer codes rather than floats
    integer_codes: ClassVar[bool] = False
    #: True for a family without parameters whose statistic is the training sample itself
    #: (variable length: KernelDensity). Its statistics (``host_suff_stats``), scoring table
    #: (``host_table``) and scores (``host_log_likelihood``) are computed on the host, never by
    #: the fixed-shape kernels; the same table serves every closed-form method, and the
    #: evidence, posterior draws and MCMC are refused (``fitted.check_parametric``).
    nonparametric: ClassVar[bool] = False
    #: hyperparameters that are one smoothing strength together (a Beta(a, a)):
    #: ``analysis.empirical_bayes`` sets them all to the value it searches
    one_strength: ClassVar[tuple[str, ...]] = ()
    #: names of the hyperparameters, in ``__init__`` order (for repr, get_params, persistence)
    _hyper: ClassVar[tuple[str, ...]] = ()
    #: the NamedTuple types of the statistics and plug-in parameters (persistence rebuilds them)
    stats_type: ClassVar[type]
    params_type: ClassVar[type]

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

    #: plug-in parameters that must be positive (a Gaussian's precision): ``scoring`` refuses
    #: a class and column where the estimate is not
    positive_params: ClassVar[tuple[str, ...]] = ()

    @staticmethod
    def column_of(prior: NamedTuple, j: int) -> int:
        """The column of entry ``j`` of a parameter's last axis (Categorical lays levels out
        flat); default ``j``."""
        return j

    def declared_levels(self, columns: tuple) -> list[tuple] | None:
        """The levels the user declared for each of ``columns`` (one tuple per column), or
        None: a CSV column's cells are then read as their type (``bayesnb.outofcore``)."""
        return None

    def learns_levels(self) -> bool:
        """Whether ``learn_schema`` learns levels from the values (an out-of-core fit then
        reads every chunk once for them before the statistics pass)."""
        return False

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

    # ------------------------------------------------------------------ declared capabilities
    # What the rest of the package asks a family instead of switching on its name: a new
    # family declares these and plugs into MCMC, ArviZ, simulation, EM, persistence checks,
    # ``from_tables``, plots and the scikit-learn views without edits there.

    #: keys of ``sample_params``' result (NumPyro sites ``"{site}.{key}"``); their axes are
    #: ``param_dims``'
    param_names: ClassVar[tuple[str, ...]] = ()
    #: fields of ``stats_type`` that are sums of non-negative weights (or of squares): a model
    #: file holding a negative one is refused (``bayesnb.persistence``)
    nonnegative_stats: ClassVar[tuple[str, ...]] = ()
    #: True when ``from_tables`` builds the plug-in parameters from stated tables:
    #: ``bayesnb.from_tables`` then takes them under the keyword ``name``
    stated_tables: ClassVar[bool] = False
    #: True when each column has its own sites ``"{site}.{j}.{key}"`` (Categorical: columns of
    #: different level counts), so simulated values come column by column (``"{site}.{j}.x"``)
    column_sites: ClassVar[bool] = False
    #: for a family of real values with a density, its name in the title of
    #: ``plots.density_plot`` (which draws it per class); None: not drawn
    density_label: ClassVar[str | None] = None
    #: what ``feature_log_prob_``-style scikit-learn attributes read of this family
    #: (``bayesnb._sklearn_views``): None, or the naive Bayes it mirrors: ``"multinomial"``
    #: (``MultinomialNB``), ``"bernoulli"``, ``"categorical"``, ``"gaussian"``
    sklearn_view: ClassVar[str | None] = None
    #: True when the exact posterior predictive is the plug-in of the posterior mean
    #: (Bernoulli, Categorical), so ``method="bayes"`` has a linear view as ``"mean"`` does
    predictive_is_plug_in: ClassVar[bool] = False

    def param_dims(self, prior: NamedTuple, schema: Schema) -> dict[str, tuple[str, ...]]:
        """Each parameter site's axes by key, named ``"class"``, ``"feature"`` (the block's
        columns) or ``"level"`` (the levels of column ``j``, for a key ``"{j}.{name}"``), for
        ArviZ's dims and the public site names. Default: ``(class, feature)`` for each of
        ``param_names``."""
        return {k: ("class", "feature") for k in self.param_names}

    @staticmethod
    def density_scale(table: NamedTuple, j: int) -> tuple[np.ndarray, float]:
        """For a family with a ``density_label``: ``(points, spread)`` of column ``j`` under a
        plug-in (or nonparametric) table: values its class densities centre on (means, the
        stored sample) and their largest scale (sd, bandwidth). ``plots.density_plot`` draws
        three spreads beyond the points and the data."""
        raise NotImplementedError

    @staticmethod
    def stored_sample(table: NamedTuple, j: int, k: int) -> tuple | None:
        """``(values, weights)`` of column ``j`` in class ``k`` kept by a ``nonparametric``
        family's table (its training sample), drawn as a histogram by ``plots.density_plot``;
        a parametric family keeps none (``None``)."""
        return None

    def linear_terms(self, params: NamedTuple, schema: Schema) -> tuple | None:
        """``(weights (K, D), labels (D,), bias (K,))`` with log p(x | c = k) =
        ``linear_features(x) @ weights[k] + bias[k]`` plus a class-free term, for the linear
        view (``bayesnb.analysis.linear_weights``); None (the default) when the scores are
        not linear in the values. :func:`observed_pairs` builds the common layout."""
        return None

    def linear_features(self, x: np.ndarray, schema: Schema, params: NamedTuple) -> np.ndarray:
        """The encoded block as the design matrix of ``linear_terms``. Default: each value (0
        where missing) beside its ``"{column}:observed"`` indicator, so a missing value leaves
        out the column's whole term, as the model does."""
        x = np.asarray(x, dtype=np.float64)
        observed = ~np.isnan(x)
        return np.stack([np.where(observed, x, 0.0), observed], axis=2).reshape(x.shape[0], -1)

    def dependence_units(self, x: np.ndarray, prior: dict, schema: Schema) -> list[tuple]:
        """The block as the dependence diagnostic reads it (``bayesnb.dependence``): per unit
        (a column; the whole block for ``joint_columns``) ``(name, kind, values, observed,
        hyper, skip)``. ``kind`` is the conjugate model its pair factors know: ``"discrete"``
        (codes, -1 missing, under a Dirichlet ``alpha``), ``"gaussian"`` (Normal-Gamma),
        ``"poisson"`` (Gamma-Poisson), ``"exponential"`` (Gamma-Exponential),
        ``"multinomial"`` (Dirichlet-multinomial); None: listed, untested, for the reason
        ``skip``. ``prior``: the block's prior as float64 arrays by field. Default: None."""
        skip = (f"{type(self).__name__} has no closed-form evidence" if self.nonparametric else
                f"no conjugate joint model for {type(self).__name__}")
        return [(col, None, x[:, j], np.ones(len(x), dtype=bool), {}, skip)
                for j, col in enumerate(schema.columns)]

    @staticmethod
    def column_block(prior: NamedTuple, stats: NamedTuple, j: int,
                     n_levels: int) -> tuple[NamedTuple, NamedTuple]:
        """``(prior, stats)`` of column ``j`` as a block of its own, for a family whose schema
        has levels (``n_levels`` of them in column ``j``; ``bayesnb.averaging`` scores each
        column's inclusion with it). Families of one value per column need none: the
        averaging slices their last axis."""
        raise NotImplementedError

    #: what one class's entry of a stated table gives, in ``from_tables``' messages
    stated_cell: ClassVar[str] = "the value"

    def stated_numbers(self, cell) -> list[tuple[str, Any]]:
        """The numbers of one class's entry of a stated table, each with its name in messages
        (``bayesnb.from_tables`` refuses any that is not finite); a ``ValueError`` says what
        shape the entry must have. Default: the entry is one number, the ``stated_cell``."""
        return [(self.stated_cell, cell)]

    def stated_schema(self, tables: dict, classes) -> Schema:
        """The schema of a block built from stated tables ``tables[column][class]``
        (``bayesnb.from_tables``); default: the columns alone."""
        return Schema(columns=tuple(tables))

    def decode(self, values: np.ndarray, schema: Schema) -> np.ndarray:
        """Simulated ``(n, F)`` values as the raw column values a user would pass (category
        levels, integer counts); default: as they are."""
        return values

    @staticmethod
    def simulation_total(stats: NamedTuple) -> float | None:
        """The weighted total of the training values when a simulated row needs a stated
        total (a Multinomial document's length, which the model does not describe); None."""
        return None

    @classmethod
    def log_prior_at(cls, prior: NamedTuple, params: NamedTuple, method: str,
                     n_classes: int) -> float:
        """log p~(theta) of the conjugate prior at the plug-in estimate ``params`` (float64),
        up to a constant, written as pseudo-count exponents on the log parameters: ``alpha -
        1`` under MAP, ``alpha`` under the mean (whose plug-in is the MAP of a shifted
        prior); the EM objective's prior term (``bayesnb.em``, never called under ML)."""
        raise ValueError(f"EM does not know the prior of the {cls.name} family.")


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
                    f"{_first_non_numeric(values[:, j])!r}"
                    + (" (text: count its words first with scikit-learn's "
                       "sklearn.feature_extraction.text.CountVectorizer)." if " " in str(
                           _first_non_numeric(values[:, j])) else ".")
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


def column_units(kind: str, x: np.ndarray, prior: dict, schema: Schema) -> list[tuple]:
    """``Family.dependence_units`` of a family of one real value per column: each column's
    values (NaN missing) and its hyperparameters (a scalar one shared)."""
    return [(col, kind, x[:, j].astype(np.float64), ~np.isnan(x[:, j]),
             {f: (v if v.ndim == 0 else v[j]).astype(np.float64) for f, v in prior.items()}, "")
            for j, col in enumerate(schema.columns)]


def observed_pairs(per_value, per_observed, columns) -> tuple:
    """``linear_terms`` of a family whose column term is ``x * per_value + per_observed``
    (both ``(K, F)``): each column's two weights side by side, labelled ``"{column}"`` and
    ``"{column}:observed"`` (the default ``linear_features``' layout), and no bias."""
    per_value, per_observed = (np.asarray(v, dtype=np.float64) for v in (per_value, per_observed))
    both = np.stack([per_value, per_observed], axis=2).reshape(per_value.shape[0], -1)
    labels = [name for c in columns for name in (str(c), f"{c}:observed")]
    return both, labels, np.zeros(per_value.shape[0])


def pseudo_log(coefficient, log_value) -> float:
    """``sum c * log(theta)`` with ``0 * log 0 = 0`` (a zero estimate under a zero exponent):
    a conjugate prior's log density at an estimate (``Family.log_prior_at``)."""
    log_value = np.asarray(log_value, dtype=np.float64)
    c = np.broadcast_to(np.asarray(coefficient, dtype=np.float64), log_value.shape)
    with np.errstate(invalid="ignore"):
        terms = np.where(c == 0, 0.0, c * log_value)
    return float(np.sum(terms))


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


