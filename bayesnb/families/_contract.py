"""The contract every likelihood family fulfils: what it must state, and what it may declare.

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

import abc
import copy
import inspect
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import jax
import numpy as np

from ._base import Schema, _short, is_distribution, xp_of

if TYPE_CHECKING:
    import pandas as pd


class Capabilities:
    """What the rest of the package asks a family instead of switching on its name.

    Every member but ``param_names`` has a working default (or is only read when a flag
    above it is set), so a new family declares only what it has: a family with levels,
    hyperpriors for EM, per-column sample sites, stated tables, a linear view, a density plot
    or a dependence model. A :class:`ConjugateFamily` states ``param_names`` (or overrides
    ``param_dims``, as Categorical does): its class is refused without either.
    """

    # --------------------------------- levels and values (encoding, simulation, out-of-core typing)
    #: True when the block's columns form one random vector (Multinomial), so a block cannot be
    #: split column by column. False (and no ``column_sites``): the columns are independent given
    #: the class, every array of the prior, statistics and parameters has them on its last
    #: axis, a scalar prior is shared by them and a scalar statistic sums over them
    #: (``averaging`` splits such blocks, NUTS joins them: ``_joined_blocks``)
    joint_columns: ClassVar[bool] = False

    #: for a family of numeric values, the checks ``encode`` applies (keys ``nonnegative``,
    #: ``binary``, ``integer``), so the kernels can run them on raw numbers instead of the
    #: host (``fast._kernels.invalid_values``); None when values must be encoded on the host
    value_checks: ClassVar[dict | None] = None

    #: True when ``encode`` returns integer codes rather than floats
    integer_codes: ClassVar[bool] = False

    #: the statistic holding the weighted number of observed values per class and column,
    #: ``(K, F)``, which no class's count exceeds (model files are checked against it)
    observed_count: ClassVar[str | None] = None

    def observed_counts(self, prior: NamedTuple, stats: NamedTuple) -> np.ndarray | None:
        """``(K, F)`` the weighted number of observed values per class and column (at most
        the class's count), or None where the statistics hold no such number."""
        return None if self.observed_count is None else np.asarray(
            getattr(stats, self.observed_count))

    #: True when ``encode`` refuses negative values though no ``value_checks`` say so (values
    #: encoded on the host: Exponential, LogNormal); scikit-learn's ``positive_only`` tag
    refuses_negative: ClassVar[bool] = False

    def learn_schema(self, values: np.ndarray, columns: tuple) -> Schema:
        """Schema learned from the training block (categorical levels); default: columns only."""
        return Schema(columns=tuple(columns))

    def check_estimate(self, prior: NamedTuple, stats: NamedTuple, schema: Schema, classes,
                       method: str) -> None:
        """Refuse (``ValueError``, naming the column and class) a plug-in estimate that the
        family's own settings leave undefined for these statistics (Gaussian's ``ddof``: a
        class with no more than ``ddof`` values); checked before ``estimate``. Default: none
        (a 0/0 or a zero variance is reported by ``scoring.check_defined``)."""

    def check_settings(self) -> None:
        """Refuse (``ValueError``) a setting read only when scoring (Categorical's ``unseen``):
        a model file holding a bad one is then refused when read, not at its first
        prediction. Default: none."""

    def declared_levels(self, columns: tuple) -> list[tuple] | None:
        """The levels the user declared for each of ``columns`` (one tuple per column), or
        None: a CSV column's cells are then read as their type (``bayesnb.outofcore``)."""
        return None

    def learns_levels(self) -> bool:
        """Whether ``learn_schema`` learns levels from the values (an out-of-core fit then
        reads every chunk once for them before the statistics pass)."""
        return False

    @staticmethod
    def column_of(prior: NamedTuple, j: int) -> int:
        """The column of entry ``j`` of a parameter's last axis (Categorical lays levels out
        flat); default ``j``."""
        return j

    def decode(self, values: np.ndarray, schema: Schema) -> np.ndarray:
        """Simulated ``(n, F)`` values as the raw column values a user would pass (category
        levels, integer counts); default: as they are."""
        return values

    # -------------------------------------- hyperparameters (MCMC hyperpriors, EM, empirical Bayes)
    #: hyperparameters that are one smoothing strength together (a Beta(a, a)):
    #: ``analysis.empirical_bayes`` sets them all to the value it searches
    one_strength: ClassVar[tuple[str, ...]] = ()

    #: hyperparameters that are Dirichlet or Beta concentrations (``alpha - 1`` pseudo-counts
    #: under MAP): all 1, the prior is flat and MAP is ML (``compare``'s note on equal models)
    concentrations: ClassVar[tuple[str, ...]] = ()

    def hyperpriors(self) -> dict:
        """Hyperparameters given as NumPyro distributions (sampled by the model: MCMC only)."""
        return {k: v for k, v in self.get_params().items() if is_distribution(v)}

    @staticmethod
    def with_hyper(prior: NamedTuple, name: str, value) -> NamedTuple:
        """``prior`` with hyperparameter ``name`` set to a sampled (scalar) ``value``."""
        import jax.numpy as jnp

        return prior._replace(**{name: jnp.broadcast_to(value, np.shape(getattr(prior, name)))})

    def pooling_prior(self) -> NamedTuple | None:
        """The hyperprior under which the classes share strength (``pooling="partial"``,
        ``families._pooling``: each class's table drawn around a shared mean with a learned
        concentration; MCMC only, every closed form refuses it), passed to
        ``sample_pooled``; None (the default): each class has the family's fixed prior."""
        return None

    @staticmethod
    def sample_pooled(prior: NamedTuple, pooling: NamedTuple, site: str) -> NamedTuple:
        """NumPyro statements of a pooled block's shared mean and concentration (sites
        ``"{site}.shared_mean"``, ``"{site}.concentration"``, or ``"{site}.{j}.…"`` per
        column), returning ``prior`` with the classes' concentrations they give, which
        ``sample_params`` then reads; called only when ``pooling_prior`` is not None."""
        raise NotImplementedError

    def couples_classes(self) -> bool:
        """Whether a class's closed-form table reads other classes' statistics (Gaussian's
        ``pooled`` precision), so leaving a row out (``bayesnb.loo``) changes every class's
        table and not only its own. Default: False."""
        return False

    @classmethod
    def log_prior_at(cls, prior: NamedTuple, params: NamedTuple, method: str,
                     n_classes: int) -> float:
        """log p~(theta) of the conjugate prior at the plug-in estimate ``params`` (float64),
        up to a constant, written as pseudo-count exponents on the log parameters: ``alpha -
        1`` under MAP, ``alpha`` under the mean (whose plug-in is the MAP of a shifted
        prior); the EM objective's prior term (``bayesnb.em``, never called under ML)."""
        raise ValueError(f"EM does not know the prior of the {cls.name} family.")

    # ------------------------------------------------ imprecise Dirichlet model (bayesnb.credal)
    #: True when the family's parameters have Dirichlet (or Beta) priors over a finite set of
    #: values and it declares ``imprecise_log_predictive`` (Bernoulli, Categorical,
    #: Multinomial); the other families keep their stated prior in ``bayesnb.credal``
    imprecise: ClassVar[bool] = False

    @staticmethod
    def imprecise_log_predictive(prior: NamedTuple, stats: NamedTuple, x: np.ndarray,
                                 s: float) -> tuple[np.ndarray, np.ndarray]:
        """For an ``imprecise`` family, under the imprecise Dirichlet model of strength ``s``
        (every class's prior ranging, independently of the other classes', over all Dirichlet
        priors of total concentration ``s``), ``(lower, upper)``, each ``(n, K)`` float64: the
        least and the greatest log posterior predictive log p(x_i | c = k, data) of the
        encoded block ``x`` over that set, both up to the same class-free constant
        (``bayesnb.credal``); where the greatest is not at an extreme point of the priors, a
        bound never below it (a dominance found must hold). ``prior`` gives only the layout
        (Categorical's levels)."""
        raise NotImplementedError

    # -------------------------------- parameter sites (MCMC, ArviZ, persistence checks, simulation)
    #: keys of ``sample_params``' result (NumPyro sites ``"{site}.{key}"``); their axes are
    #: ``param_dims``'. No working default: ``()`` serves only a family without parameters
    #: (nonparametric) or one that overrides ``param_dims``; a conjugate family states it
    param_names: ClassVar[tuple[str, ...]] = ()

    def param_dims(self, prior: NamedTuple, schema: Schema) -> dict[str, tuple[str, ...]]:
        """Each parameter site's axes by key, named ``"class"``, ``"feature"`` (the block's
        columns) or ``"level"`` (the levels of column ``j``, for a key ``"{j}.{name}"``), for
        ArviZ's dims and the public site names. Default: ``(class, feature)`` for each of
        ``param_names``."""
        return {k: ("class", "feature") for k in self.param_names}

    def plug_in_sites(self, prior: NamedTuple, params: NamedTuple) -> dict[str, np.ndarray]:
        """The plug-in table ``params`` as values of the parameter sites, keyed and shaped as
        ``param_dims`` (``posterior_density_plot`` marks them on the draws). Default: the
        table's field of each of ``param_names``; a table of other fields (logs) declares
        its own."""
        missing = [k for k in self.param_names if k not in params._fields]
        if missing:
            raise ValueError(f"the {self.name} family's plug-in table has no field "
                             f"{missing[0]!r} (it has {list(params._fields)}); the family "
                             f"declares plug_in_sites to give its sites' values.")
        return {k: np.asarray(getattr(params, k)) for k in self.param_names}

    #: True when each column has its own sites ``"{site}.{j}.{key}"`` (Categorical: columns of
    #: different level counts), so simulated values come column by column (``"{site}.{j}.x"``);
    #: ``params_from_sample`` then also takes NumPy draws along a leading axis of every site
    #: (``_draws_host.draw_tables`` makes the tables of thousands of sites in one call)
    column_sites: ClassVar[bool] = False

    #: plug-in parameters that must be positive (a Gaussian's precision): ``scoring`` refuses
    #: a class and column where the estimate is not
    positive_params: ClassVar[tuple[str, ...]] = ()

    #: fields of ``stats_type`` that are sums of non-negative weights (or of squares): a model
    #: file holding a negative one is refused (``bayesnb.persistence``)
    nonnegative_stats: ClassVar[tuple[str, ...]] = ()

    #: fields an earlier release kept in ``params_type`` (and so in the stated tables of model
    #: files) that this one derives when scoring: a file holding one still loads
    retired_params: ClassVar[tuple[str, ...]] = ()

    @staticmethod
    def simulation_total(stats: NamedTuple) -> float | None:
        """The weighted total of the training values when a simulated row needs a stated
        total (a Multinomial document's length, which the model does not describe); None."""
        return None

    # ---------------------------------------------------------- stated tables (bayesnb.from_tables)
    #: True when ``from_tables`` builds the plug-in parameters from stated tables:
    #: ``bayesnb.from_tables`` then takes them under the keyword ``name``
    stated_tables: ClassVar[bool] = False

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

    @staticmethod
    def from_tables(tables: dict, schema: Schema, classes) -> NamedTuple:
        """Inverse of ``describe``: plug-in parameters from stated probability tables."""
        raise NotImplementedError

    @staticmethod
    def stated_cell_of(row: pd.Series) -> Any:
        """One class's entry of a stated table from its row of ``describe``'s table, as
        ``from_tables`` reads it: a model file of stated tables must survive that round trip
        (so unnormalised probabilities are refused). Default: the row's one number."""
        return float(row.iloc[0])

    # -------------------- views (scikit-learn attributes, linear weights, density plot, dependence)
    #: what ``feature_log_prob_``-style scikit-learn attributes read of this family
    #: (``bayesnb._sklearn_views``): None, or the naive Bayes it mirrors: ``"multinomial"``
    #: (``MultinomialNB``), ``"bernoulli"``, ``"categorical"``, ``"gaussian"``
    sklearn_view: ClassVar[str | None] = None

    #: True when the exact posterior predictive is the plug-in of the posterior mean
    #: (Bernoulli, Categorical), so ``method="bayes"`` has a linear view as ``"mean"`` does
    predictive_is_plug_in: ClassVar[bool] = False

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

    #: for a family of real values with a density, its name in the title of
    #: ``plots.density_plot`` (which draws it per class); None: not drawn
    density_label: ClassVar[str | None] = None

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

    #: for a family of discrete values, its name in the title of ``plots.density_plot``, which
    #: draws its probability mass per class as bars at the values ``pmf_support`` gives; None:
    #: not drawn as bars
    pmf_label: ClassVar[str | None] = None

    def pmf_support(self, table: NamedTuple, schema: Schema, j: int) -> tuple[np.ndarray, list]:
        """For a family with a ``pmf_label``: ``(values, labels)`` of column ``j`` under a
        plug-in ``table``: the encoded values (as ``encode`` returns them: level codes,
        numbers) whose probabilities ``plots.density_plot`` draws, and their names on the
        axis. It draws any other value seen in the data beside them."""
        raise NotImplementedError

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


def _abstract(cls: type) -> bool:
    """Whether ``cls`` keeps an abstract member: ``abc.ABCMeta``'s own rule, since
    ``__init_subclass__`` runs before ABCMeta sets ``__abstractmethods__``."""
    names = set(vars(cls)).union(*(getattr(b, "__abstractmethods__", ()) for b in cls.__bases__))
    return any(getattr(getattr(cls, n, None), "__isabstractmethod__", False) for n in names)


def _init_parameters(cls: type) -> tuple[str, ...]:
    """The named parameters of ``cls.__init__`` after ``self`` (no ``*args``/``**kwargs``)."""
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(p.name for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
                 if p.kind in named)


#: the class attributes every concrete family states, and what each is
REQUIRED = {"name": "its name in model files and sample sites, REGISTRY's key",
            "stats_type": "the NamedTuple type of its statistics",
            "params_type": "the NamedTuple type of its plug-in parameters",
            "_hyper": "the names of its __init__'s parameters, in order"}


def check_declarations(cls: type) -> None:
    """Refuse (``TypeError``, naming each) a concrete family class that leaves out a class
    attribute of :data:`REQUIRED`, a conjugate one with neither ``param_names`` nor its own
    ``param_dims``, or one whose ``_hyper`` is not its ``__init__``'s parameters in order.

    Left out, each failed far from its cause: no ``_hyper``, a hyperprior stood in by its
    mean and empty ``get_params``; no ``param_names``, an MCMC model that predicts nothing;
    no ``name`` or ``stats_type``, a model file that cannot be written or read."""
    missing = {a: what for a, what in REQUIRED.items() if not hasattr(cls, a)}
    if (issubclass(cls, ConjugateFamily) and not cls.param_names
            and cls.param_dims is Capabilities.param_dims):
        missing["param_names"] = ("the keys of sample_params' result, e.g. ('rate',); or "
                                  "override param_dims")
    if missing:
        raise TypeError(f"{cls.__name__} does not state "
                        + "; ".join(f"{a} ({what})" for a, what in missing.items())
                        + ": every concrete family states name, stats_type, params_type and "
                          "_hyper, a conjugate one param_names too.")
    params = _init_parameters(cls)
    if tuple(cls._hyper) != params:
        raise TypeError(
            f"{cls.__name__}._hyper is {tuple(cls._hyper)!r} but its __init__ takes {params!r}: "
            f"_hyper names the hyperparameters, exactly __init__'s parameters in order "
            f"(get_params, repr, model files and hyperpriors read it).")


class Family(Capabilities, abc.ABC):
    """A likelihood family for a block of columns: what every family states.

    Subclass :class:`ConjugateFamily` (a conjugate pair with closed forms) or
    :class:`NonparametricFamily` (a family whose statistic is the sample). Hyperparameters are
    stored as given (scikit-learn style: ``__init__`` only stores, each under its own name);
    ``prior(schema)`` broadcasts them.

    A concrete subclass states the class attributes ``name``, ``stats_type``,
    ``params_type`` and ``_hyper`` (its ``__init__``'s parameters, in order), and a
    conjugate one ``param_names`` (or its own ``param_dims``); a class without them is a
    ``TypeError`` when it is made (:func:`check_declarations`), as one without an abstract
    method is when it is instantiated.

    Examples
    --------
    Every family is a ``Family``; its hyperparameters are scikit-learn parameters:

    >>> import bayesnb as bnb
    >>> family = bnb.Gaussian(rate=0.5)
    >>> isinstance(family, bnb.Family), family.name
    (True, 'gaussian')
    >>> family.get_params()
    {'loc': 0.0, 'kappa': 0.001, 'shape': 1.0, 'rate': 0.5, 'pooled': False, 'ddof': 0}
    >>> family.set_params(pooled=True)
    Gaussian(loc=0.0, kappa=0.001, shape=1.0, rate=0.5, pooled=True, ddof=0)
    """

    #: the family's name in model files, site names and ``from_tables`` keywords
    #: (``REGISTRY``'s key)
    name: ClassVar[str]

    #: names of the hyperparameters: exactly the parameters of ``__init__``, in order (for
    #: repr, get_params, clone, persistence, and the hyperpriors the model samples); no
    #: default, so a family cannot leave it out and lose them
    _hyper: ClassVar[tuple[str, ...]]

    #: hyperparameters that ``repr`` shows only when they differ from ``__init__``'s default
    #: (settings added later, such as ``pooling``, so the usual repr stays short)
    _hyper_if_set: ClassVar[tuple[str, ...]] = ()

    #: the NamedTuple types of the statistics and plug-in parameters (persistence rebuilds them)
    stats_type: ClassVar[type]

    params_type: ClassVar[type]

    #: True for a family without parameters whose statistic is the training sample itself
    #: (variable length: KernelDensity). Its statistics (``host_suff_stats``), scoring table
    #: (``host_table``) and scores (``host_log_likelihood``) are computed on the host, never by
    #: the fixed-shape kernels; the same table serves every closed-form method, and the
    #: evidence, posterior draws and MCMC are refused (``fitted.check_parametric``).
    nonparametric: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs) -> None:
        # checked where the family is written, not when a model file is saved or read
        super().__init_subclass__(**kwargs)
        if not _abstract(cls):
            check_declarations(cls)

    @abc.abstractmethod
    def encode(self, values: np.ndarray, schema: Schema, *, unseen: str = "error",
               dtype=None) -> np.ndarray:
        """Validate one block of raw values and return the numeric array the kernels read.

        ``unseen`` says what a value outside the fitted levels means (categorical families):
        ``"error"`` (at fit, and under ML) or ``"smooth"`` (give it the prior's probability).
        ``dtype`` is the float type of the result (the kernels' dtype; float64 if None);
        families that encode to integer codes ignore it."""

    @abc.abstractmethod
    def prior(self, schema: Schema) -> NamedTuple:
        """The hyperparameters broadcast to the block's shape, as a NamedTuple of arrays."""

    @staticmethod
    @abc.abstractmethod
    def estimate(prior: NamedTuple, stats: NamedTuple, method: str) -> NamedTuple:
        """Plug-in parameters for ``method`` in {'ml', 'map', 'mean'}, in the form
        ``log_likelihood`` reads."""

    @staticmethod
    @abc.abstractmethod
    def describe(params: NamedTuple, schema: Schema, classes) -> dict:
        """Plug-in parameters as tidy DataFrames (rows: classes), keyed by column."""

    def check_prior(self, prior: NamedTuple, schema: Schema, method: str) -> None:
        """Raise ``ValueError`` if ``method`` is undefined under this prior (MAP, alpha < 1)."""

    @staticmethod
    def merge_stats(a: NamedTuple, b: NamedTuple) -> NamedTuple:
        """Statistics of the union of two data sets (sums, unless the family says otherwise)."""
        return jax.tree_util.tree_map(lambda u, v: u + v, a, b)

    @staticmethod
    def scale_stats(stats: NamedTuple, gamma: float) -> NamedTuple:
        """The statistics of the same rows with every weight multiplied by ``gamma`` (a power
        prior: ``partial_fit(..., decay=gamma)`` scales the old statistics before adding a
        chunk's). Default: every field is a weighted sum, so it is scaled; a family whose
        statistics are not all weighted sums says otherwise (Gaussian's mean, KernelDensity's
        sample)."""
        return jax.tree_util.tree_map(lambda u: u * gamma, stats)

    # ---------------------------------------- hyperparameters as scikit-learn reads them (provided)
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
        defaults = inspect.signature(type(self).__init__).parameters
        args = ", ".join(f"{k}={_short(v)}" for k, v in self.get_params().items()
                         if k not in self._hyper_if_set
                         or not np.array_equal(np.asarray(v), np.asarray(defaults[k].default)))
        return f"{type(self).__name__}({args})"

    def __sklearn_clone__(self):
        # scikit-learn's contract: a new object with equal (shared) hyperparameters, so that
        # set_params on the clone (GridSearchCV's "features__alpha") leaves this one alone
        return copy.copy(self)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        a, b = self.get_params(), other.get_params()
        return all(a[k] is b[k] if is_distribution(a[k]) or is_distribution(b[k])
                   else _same_value(a[k], b[k]) for k in a)

    __hash__ = object.__hash__  # identity: one instance covering several columns is one block


def _same_value(a, b) -> bool:
    """Whether two hyperparameter values are equal: arrays element by element, sequences
    item by item (a Categorical's ``categories`` per column may differ in length)."""
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same_value(u, v) for u, v in zip(a, b, strict=True))
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except ValueError:  # ragged on one side only
        return False


class ConjugateFamily(Family):
    """A conjugate pair ``p(x | theta, c) p(theta)``: closed-form statistics, estimates,
    posterior, predictive and evidence, and the NumPyro statements of the same model.

    Examples
    --------
    The numeric side is static and pure: here the Beta posterior of a fitted Bernoulli block,
    Beta(alpha + ones, beta + zeros) per class and column:

    >>> import numpy as np, bayesnb as bnb
    >>> sorted(c.__name__ for c in bnb.REGISTRY.values() if issubclass(c, bnb.ConjugateFamily))
    ['Bernoulli', 'Categorical', 'Exponential', 'Gaussian', 'LogNormal', 'Multinomial',
     'NegativeBinomial', 'Poisson']
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    >>> clf = bnb.NaiveBayes(bnb.Bernoulli()).fit(X, ["spam", "spam", "ham", "ham"])
    >>> block = clf.blocks_[0]
    >>> posterior = bnb.Bernoulli.posterior(block.prior, block.stats)
    >>> np.asarray(posterior.alpha), np.asarray(posterior.beta)  # rows ham, spam
    (array([[1., 2.],
           [3., 2.]]), array([[3., 2.],
           [1., 2.]]))"""

    # --------------------------------- statistics, posterior, predictive, evidence (pure, jittable)
    @staticmethod
    @abc.abstractmethod
    def suff_stats(x: jax.Array, resp: jax.Array, n_levels: Any = None) -> NamedTuple:
        """Per-class sufficient statistics of one block (``resp``: the weighted ``(rows,
        classes)`` one-hot). A chunk may end in copies of its last row of weight 0."""

    @staticmethod
    def remove_stats(a: NamedTuple, b: NamedTuple) -> NamedTuple:
        """Statistics of data set ``a`` without its subset ``b``: the inverse of
        ``merge_stats`` (differences of sums unless the family says otherwise), elementwise,
        so any leading batch axes broadcast (exact leave-one-out, ``bayesnb.loo``)."""
        return jax.tree_util.tree_map(lambda u, v: u - v, a, b)

    @staticmethod
    def removal_condition(a: NamedTuple, b: NamedTuple) -> np.ndarray | None:
        """Per leading row of the NumPy statistics ``a`` and ``b`` (``(m, ...)``), how many
        times ``remove_stats(a, b)`` amplifies the rounding of ``a``, where its difference
        cancels (a Gaussian's :math:`M_2` without an outlier): ``bayesnb.loo`` counts such a
        class again from its rows. None (the default): removal does not cancel."""
        return None

    @staticmethod
    @abc.abstractmethod
    def posterior(prior: NamedTuple, stats: NamedTuple) -> NamedTuple:
        """Conjugate posterior hyperparameters (same NamedTuple type as the prior, per class)."""

    @staticmethod
    @abc.abstractmethod
    def log_likelihood(params: NamedTuple, x: jax.Array, n_levels=None) -> jax.Array:
        """``(n, K)`` plug-in log p(x_i | c = k, params), up to a class-free per-row constant.

        ``n_levels`` is the static per-column level count (categorical families; as in
        ``suff_stats``): with it a kernel can unroll over columns instead of gathering."""

    @staticmethod
    @abc.abstractmethod
    def log_predictive(posterior: NamedTuple, x: jax.Array, n_levels=None) -> jax.Array:
        """``(n, K)`` exact log posterior predictive log p(x_i | c = k, data), up to a
        class-free per-row constant."""

    @staticmethod
    def log_normalizer(x: jax.Array) -> jax.Array:
        """``(n,)`` the class-free constant left out of the two functions above."""
        return xp_of(x).zeros(x.shape[0])

    @staticmethod
    @abc.abstractmethod
    def log_evidence(prior: NamedTuple, stats: NamedTuple) -> jax.Array:
        """log p(X_block | y) with the parameters integrated out against the prior."""

    # ------------------------------------------------------------------ NumPyro and posterior draws
    @staticmethod
    @abc.abstractmethod
    def sample_params(prior: NamedTuple, n_classes: int, site: str) -> NamedTuple:
        """NumPyro sample statements for the parameters, under a ``class`` plate."""

    @staticmethod
    @abc.abstractmethod
    def observe(params: NamedTuple, x: jax.Array, y: jax.Array, site: str, **kw) -> None:
        """NumPyro observe statement for the block given labels ``y`` (missing values masked).
        With ``x=None`` the same statement samples the block (prior / posterior predictive
        simulation with ``numpyro.infer.Predictive``)."""

    @staticmethod
    @abc.abstractmethod
    def stats_log_likelihood(sample: dict, stats: NamedTuple) -> jax.Array:
        """log p(X_block | y, theta) from the sufficient statistics alone (constants included),
        so NUTS scores K x F numbers per step instead of every row."""

    @staticmethod
    @abc.abstractmethod
    def sample_posterior(rng: np.random.Generator, posterior: NamedTuple, n: int) -> dict:
        """``n`` i.i.d. draws from the conjugate posterior, keyed like ``sample_params``, each
        with a leading draw axis (NumPy's gamma sampler: 25-50x faster than JAX's on CPU)."""

    @staticmethod
    @abc.abstractmethod
    def params_from_sample(sample: dict, posterior: NamedTuple) -> NamedTuple:
        """The plug-in table ``log_likelihood`` reads, for one draw of the parameters."""

    @staticmethod
    @abc.abstractmethod
    def posterior_distributions(posterior: NamedTuple) -> dict:
        """The conjugate posterior as NumPyro distributions, keyed like ``sample_params``'s
        result (the sample site is ``f"{site}.{key}"``)."""

    @classmethod
    def posterior_log_density(cls, posterior: NamedTuple, params: dict) -> jax.Array:
        """log p(params | data) under the conjugate posterior (a scalar)."""
        return sum(jax.numpy.sum(d.log_prob(params[k]))
                   for k, d in cls.posterior_distributions(posterior).items())


class NonparametricFamily(Family):
    """A family without parameters whose statistic is the training sample itself (variable
    length: KernelDensity). Its statistics, scoring table and scores are computed on the host,
    never by the fixed-shape kernels; the same table serves every closed-form method, and the
    evidence, posterior draws and MCMC are refused (``fitted.check_parametric``).

    Examples
    --------
    >>> import pandas as pd, bayesnb as bnb
    >>> issubclass(bnb.KernelDensity, bnb.NonparametricFamily)
    True
    >>> X = pd.DataFrame({"t": [0.0, 2.0, 5.0, 7.0]})
    >>> clf = bnb.NaiveBayes(bnb.KernelDensity(bandwidth=1.0)).fit(X, ["a", "a", "b", "b"])
    >>> clf.predict(pd.DataFrame({"t": [1.5, 6.5]})).tolist()
    ['a', 'b']
    >>> clf.log_evidence()
    Traceback (most recent call last):
    ...
    ValueError: columns ['t']: KernelDensity is nonparametric (...), so the evidence ..."""

    nonparametric = True

    @staticmethod
    @abc.abstractmethod
    def host_suff_stats(x: np.ndarray, codes: np.ndarray, weight: np.ndarray,
                        n_classes: int) -> NamedTuple:
        """Statistics of one encoded block (NumPy), for a ``nonparametric`` family."""

    @staticmethod
    @abc.abstractmethod
    def empty_stats() -> NamedTuple:
        """The statistics of no rows, for a ``nonparametric`` family (chunked fits start
        from it)."""

    @abc.abstractmethod
    def host_table(self, prior: NamedTuple, stats: NamedTuple, schema: Schema,
                   classes) -> NamedTuple:
        """The scoring table of a ``nonparametric`` family (any method), refusing an undefined
        one with an error naming the column and class."""

    @staticmethod
    @abc.abstractmethod
    def host_log_likelihood(table: NamedTuple, x: np.ndarray) -> np.ndarray:
        """``(n, K)`` float64 log densities of an encoded block (NumPy), constants included."""
