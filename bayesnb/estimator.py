"""``NaiveBayes``: a thin scikit-learn estimator over the fitted value and its scorer.

The data path: input handling (:mod:`bayesnb._data`) -> per-class sufficient statistics
(:mod:`bayesnb.fitted`, streamed through :mod:`bayesnb.fast._kernels`) -> the fitted value
(:class:`bayesnb.fitted.FittedModel`, installed in one assignment) -> a scorer for the method
(:mod:`bayesnb.scoring`, cached per fitted value and settings) -> probabilities. This module
holds the scikit-learn surface, the validation of the estimator's own parameters and that
cache; the NumPyro program (:mod:`bayesnb.model`) and draws (:mod:`bayesnb.inference`) are
reached through it for ``method="mcmc"`` and the Bayesian reports.

``METHODS`` lists the values of ``method``. One fit serves the four closed-form methods
(``set_params(method=...)`` refits nothing); ``"mcmc"`` runs NUTS.

Examples
--------
PlayTennis and the course notes' day (Sunny, Cool, High, Strong): MAP under the default
``alpha=1`` is ML, and for Categorical columns the exact predictive is the posterior mean.

>>> import pandas as pd, bayesnb as bnb
>>> from bayesnb.datasets import load_playtennis
>>> bnb.METHODS
('ml', 'map', 'mean', 'bayes', 'mcmc')
>>> days, play = load_playtennis()
>>> x = pd.DataFrame([["Sunny", "Cool", "High", "Strong"]], columns=days.columns)
>>> clf = bnb.NaiveBayes().fit(days, play)
>>> for method in bnb.METHODS[:4]:
...     print(method, clf.set_params(method=method).predict_proba(x).round(4))
ml [[0.7954 0.2046]]
map [[0.7954 0.2046]]
mean [[0.7353 0.2647]]
bayes [[0.7353 0.2647]]
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from . import credal, decisions
from ._blocks import encode_blocks, has_feature_names, input_kinds
from ._classes import by_class, by_label
from ._data import as_table
from ._labelled_draws import labelled
from ._missing_labels import labeled_rows
from ._sklearn_views import SklearnViewsMixin
from ._spec import SpecMixin, check_mcmc_settings, check_settings, freeze, owned, update_lock
from ._typing import ArrayLike, Data, Features
from .averaging import averaged_scorer, check_method
from .credal import CredalSets, PriorSensitivity
from .dask import is_dask
from .decisions import loss_matrix
from .explain import zeroing_columns
from .fitted import (
    FittedModel,
    NutsRun,
    add_chunk,
    check_conjugate,
    check_decay,
    check_parametric,
    decayed,
    merge_models,
)
from .reports import BayesianReports
from .scoring import DrawsScorer, TableScorer, answer, best_index, table_scorer

#: The values of ``NaiveBayes(method=...)``: maximum likelihood, posterior mode and posterior
#: mean plug-ins, the exact posterior predictive, and NUTS draws of the parameters.
METHODS = ("ml", "map", "mean", "bayes", "mcmc")


class NaiveBayes(BayesianReports, SklearnViewsMixin, SpecMixin, ClassifierMixin, BaseEstimator):
    """Naive Bayes with conjugate priors: ML, MAP, posterior-mean and exact Bayes classification.

    Parameters
    ----------
    features : Family, mapping or None, default=None
        One family for every column (``bnb.Multinomial()`` for a bag of words); a mapping
        ``{column: family}`` (a column name or position, or a tuple of them for one
        multivariate block) for mixed data, unmapped columns being inferred; or ``None`` to infer
        every column from its dtype: booleans -> Bernoulli, strings/objects/categories ->
        Categorical, numbers -> Gaussian.
    infer_counts : bool, default=False
        Infer a numeric column whose observed values are all non-negative integers (integer
        dtype, or floats that are whole numbers) as ``Poisson`` instead of ``Gaussian``: R
        naivebayes' ``usepoisson=TRUE``. Applies to inferred columns only (never to declared
        ones). ``partial_fit`` and ``fit_chunks`` decide from the first chunk; a later chunk
        with a value that is not a count in such a column is an error, not a different model.
    method : {"mean", "map", "ml", "bayes", "mcmc"}, default="mean"
        ``"ml"``: maximum likelihood plug-in. ``"map"``: posterior mode plug-in (an error where
        the prior has no mode, e.g. a concentration below 1). ``"mean"``: posterior-mean plug-in,
        i.e. Laplace/Lidstone smoothing with pseudo-count ``alpha`` (scikit-learn's ``alpha``).
        ``"bayes"``: the exact posterior predictive p(c | x, data), the parameters integrated out
        (Beta-Bernoulli, Dirichlet-categorical, Dirichlet-multinomial, Student-t, negative
        binomial). ``"mcmc"``: the same predictive averaged over NUTS draws of the parameters
        (``draws_``, ``mcmc_summary()``, ``to_arviz()``). MAP under concentration
        ``alpha + 1`` equals the posterior mean under ``alpha``: Laplace's add-one rule is the
        mean under ``alpha=1`` and the MAP under ``alpha=2``.
    class_alpha : float, array-like of shape (n_classes,) or mapping {label: float}, default=1.0
        Dirichlet prior on the class proportions. ``0`` uses the plain class frequencies under
        the closed-form methods (scikit-learn's and e1071's behaviour), at the price of an
        undefined evidence; what draws the class proportions (``"mcmc"``,
        ``sample_posterior``, ``predict_uncertainty``, ``to_arviz``) needs a proper prior,
        ``class_alpha > 0`` or a fixed ``class_prior``. Per-class values as for
        ``class_prior``.
    class_prior : array-like of shape (n_classes,) or mapping {label: probability}, optional
        Fixed class probabilities, used as given by every method (overrides ``class_alpha``).
        An array or list is read in the order of ``classes_`` (as scikit-learn's); a mapping
        or a pandas Series (``y.value_counts(normalize=True)``, another fit's
        ``class_prior_``) is matched by label, and must name every class and nothing else.
    feature_prior : float in (0, 1) or mapping {column: float}, optional
        Prior probability that a column depends on the class (:mod:`bayesnb.averaging`).
    priors : mapping {site: numpyro distribution}, optional
        Replace the conjugate prior of parameter sites, e.g.
        ``{"poisson.rate": dist.LogNormal(0, 1), "bernoulli.theta": dist.Kumaraswamy(2, 5)}``
        (sites as in ``to_arviz()``: ``"{family}.{parameter}"``, or
        ``"categorical.{column}.probs"`` per Categorical column; ``bayesnb.model`` lists
        them). Any distribution with the parameter's support and event shape; it is expanded
        over the classes and columns. Non-conjugate, so ``method="mcmc"`` is the only method.
        Hyperparameters of a family may also be distributions (a hyperprior: learned
        smoothing), e.g. ``Multinomial(alpha=dist.Gamma(1, 1))``.
    use_kernel : bool, default=False
        Infer numeric columns as ``KernelDensity()`` (a kernel density estimate per class)
        instead of ``Gaussian()``: R naivebayes' ``usekernel=TRUE``. Declared columns keep
        their family.
    num_warmup, num_samples, num_chains, seed, chain_method, progress_bar
        NUTS settings for ``method="mcmc"`` (``bayesnb._nuts``; ``chain_method`` "auto", the
        default, is a device per chain where there are as many, else "vectorized"). It draws
        from the NumPyro model's posterior (prediction averages the draws; on a conjugate
        model it converges to ``"bayes"``; for priors without a closed form). The
        defaults (4 chains of 1000 warm-up and 1000 kept draws, Stan's) are what r-hat needs
        to be judged (Vehtari et al. 2021: at least 4 chains, r-hat < 1.01, ESS >= 400); a
        ``ConvergenceWarning`` after the fit says which settings to raise.
    missing_label : {"unlabeled", "drop", "error"}, default="unlabeled"
        What a row whose label is missing (``None``, NaN, ``pd.NA``: what ``pandas.isna``
        calls missing) means to ``fit`` and ``partial_fit``. ``"unlabeled"``: an unlabeled row,
        which ``method="mcmc"`` uses (semi-supervised) and the closed-form methods and
        ``partial_fit`` refuse. ``"drop"``: left out of the fit, with a
        ``MissingLabelWarning`` counting the rows (R's behaviour). ``"error"``: refused under
        every method (:mod:`bayesnb._missing_labels`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique labels.
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of training rows per class.
    fitted_ : bayesnb.fitted.FittedModel
        Everything the fit learned, as one immutable value; the attributes below read it.
    blocks_ : tuple of FittedBlock
        Per block of columns: family, schema (columns, category levels), prior, statistics.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Present when ``X`` was a DataFrame with string column names.
    draws_, sample_stats_ : dict
        NUTS draws ``{site: (chains, draws, ...)}`` and their statistics (``method="mcmc"``).

    Notes
    -----
    dtype policy: kernels compute in JAX's default float type, float32 unless ``jax_enable_x64``
    is on (``JAX_ENABLE_X64=1`` or ``jax.config.update``), then float64. The library never turns
    x64 on by itself. Class probabilities leave the kernels as float64 NumPy arrays.

    Labelled results: what scikit-learn returns as an array (``predict``, ``predict_proba``,
    ``predict_log_proba``, ``predict_joint_log_proba``) is a NumPy array whatever ``X`` is.
    Structured results keep their arrays and add ``to_frame()``: ``predict_uncertainty(X)``
    and ``loo(X, y)`` give DataFrames indexed by the index of ``X`` (0..n-1 for an array),
    with columns ``(quantity, class)`` and ``loo_log_p``. Tables of the model (``explain``,
    ``class_prior_``, ``conditional_tables()``, ``posterior_tables()``) are DataFrames
    labelled by class and by column name (by position where the fit's ``X`` had no names).

    A fit, ``partial_fit``, ``fit_chunks`` or Dask fit builds a new ``fitted_`` aside and
    installs it in one assignment: on any error the estimator is as before the call, and a
    prediction in another thread sees the old or the new model, never a mixture.

    Examples
    --------
    Mitchell's PlayTennis days (the families are inferred: four Categorical columns) and the
    course notes' day x' = (Sunny, Cool, High, Strong):

    >>> import pandas as pd, bayesnb as bnb
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> clf = bnb.NaiveBayes(method="ml").fit(days, play)
    >>> clf.classes_
    array(['No', 'Yes'], dtype=object)
    >>> x = pd.DataFrame([["Sunny", "Cool", "High", "Strong"]], columns=days.columns)
    >>> clf.predict(x)
    array(['No'], dtype=object)
    >>> clf.predict_proba(x).round(4)  # 0.0206 / (0.0206 + 0.0053)
    array([[0.7954, 0.2046]])

    The same fit under another method, and a mixed specification:

    >>> clf.set_params(method="bayes").predict_proba(x).round(4)
    array([[0.7353, 0.2647]])
    >>> bnb.NaiveBayes({"age": bnb.Gaussian(pooled=True), "visits": bnb.Poisson()})
    ... # doctest: +NORMALIZE_WHITESPACE
    NaiveBayes(features={'age': Gaussian(loc=0.0, kappa=0.001, shape=1.0, rate=0.01, pooled=True,
                                         ddof=0),
                         'visits': Poisson(shape=1.0, rate=0.1)})
    """

    def __init__(self, features: Features = None, *, method: str = "mean",
                 class_alpha: float | ArrayLike = 1.0,
                 class_prior: ArrayLike | Mapping[Any, float] | None = None,
                 priors: Mapping[str, Any] | None = None, infer_counts: bool = False,
                 use_kernel: bool = False, num_warmup: int = 1000, num_samples: int = 1000,
                 num_chains: int = 4, seed: int = 0, chain_method: str = "auto",
                 progress_bar: bool = True,
                 feature_prior: float | Mapping[Any, float] | None = None,
                 missing_label: str = "unlabeled") -> None:
        self.features = features
        self.missing_label = missing_label
        self.infer_counts = infer_counts
        self.use_kernel = use_kernel
        self.priors = priors
        self.method = method
        self.class_alpha = class_alpha
        self.class_prior, self.feature_prior = class_prior, feature_prior
        self.num_warmup = num_warmup
        self.num_samples = num_samples
        self.num_chains = num_chains
        self.seed = seed
        self.chain_method = chain_method
        self.progress_bar = progress_bar

    # ------------------------------------------------------------------ fitting
    def fit(self, X: Data, y: ArrayLike, sample_weight: ArrayLike | None = None) -> NaiveBayes:
        """Fit from scratch: one pass that accumulates per-class sufficient statistics.

        Under ``method="mcmc"`` a missing label (None/NaN in ``y``) makes the row unlabeled:
        it enters the posterior through the marginal over classes (semi-supervised). The other
        methods need every label, unless ``missing_label="drop"`` leaves such rows out. A
        Dask array or DataFrame is fitted by a Dask reduction of sufficient statistics
        (:func:`bayesnb.dask.fit`), equal to the in-memory fit.
        Undefined estimates (ML, MAP) are reported now, and NUTS runs now.

        Parameters
        ----------
        X : array-like, DataFrame, sparse matrix or Dask collection of shape (n_samples, n_features)
            The rows; a DataFrame's columns are matched by name (``features`` may name them).
        y : array-like of shape (n_samples,)
            Labels: any sortable hashable values.
        sample_weight : array-like of shape (n_samples,), optional
            Frequency weights: an integer weight equals that many copies of the row; a row
            of weight 0 is left out (it adds no level and decides no inferred family; its
            label still names a class, as in scikit-learn).

        Returns
        -------
        NaiveBayes
            This estimator, fitted.

        Examples
        --------
        Integer weights equal duplicated rows:

        >>> import numpy as np, bayesnb as bnb
        >>> X = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 4.0], [4.0, 5.0], [5.0, 4.0], [7.0, 6.0]])
        >>> y = np.array(["a", "a", "a", "b", "b", "b"])
        >>> w = [2, 1, 1, 1, 1, 3]
        >>> weighted = bnb.NaiveBayes().fit(X, y, sample_weight=w)
        >>> weighted.class_count_
        array([4., 5.])
        >>> copies = bnb.NaiveBayes().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
        >>> bool(np.allclose(weighted.predict_proba(X), copies.predict_proba(X)))
        True"""
        self._check_method()  # before a Dask fit's reduction too: its settings are refused first
        if is_dask(X):
            from .dask import fit as dask_fit

            return dask_fit(self, X, y, sample_weight=sample_weight)
        X, y, sample_weight, X_unlabeled = labeled_rows(X, y, sample_weight, self.missing_label,
                                                        self.method)
        model = add_chunk(None, self.features, as_table(X), y, sample_weight,
                          infer_counts=self.infer_counts, use_kernel=self.use_kernel)
        if X_unlabeled is not None:
            model = model.replace(unlabeled=tuple(encode_blocks(model, X_unlabeled, "smooth")[0]))
        return self._install(model)

    def partial_fit(self, X: Data, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None, decay: float = 1.0) -> NaiveBayes:
        """Conjugate update with a new chunk: the statistics of all chunks are summed (Gaussian
        moments merged exactly), so any chunking gives the batch fit. Columns are matched by
        name for a DataFrame. ``classes`` declares every label up front (needed on the first
        call if a chunk may miss a class; later it must equal ``classes_``). ``features``
        must still declare the families the model was fitted with (changed by
        ``set_params``, it is refused: call ``fit`` for the new ones). Estimates that
        the data so far leave undefined (ML for a class not seen yet) are reported when the
        model is used to predict, not while it is still learning; NUTS (``method="mcmc"``)
        likewise runs at the first prediction after an update.

        A stream that drifts: ``decay=gamma`` in (0, 1] multiplies the statistics learned so
        far (every weight, class counts included) by ``gamma`` before this chunk's are added
        (a power prior; pomegranate's ``inertia`` is ``1 - gamma``), so after later chunks a
        row weighs ``gamma ** (number of chunks after its own)``: exactly that weighted fit.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, optional
            Every label, declared up front.
        sample_weight : array-like of shape (n_samples,), optional
        decay : float in (0, 1], default=1.0
            Factor on the statistics learned so far (1: every chunk counts alike).

        Returns
        -------
        NaiveBayes
            This estimator, updated.

        Examples
        --------
        Three chunks, one of which holds a single class, give the batch fit:

        >>> import numpy as np, bayesnb as bnb
        >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 0, 4]])
        >>> y = np.array(["finance", "finance", "sport", "sport"])
        >>> online = bnb.NaiveBayes(bnb.Multinomial())
        >>> for rows in ([0, 2], [1], [3]):
        ...     online = online.partial_fit(X[rows], y[rows], classes=["finance", "sport"])
        >>> online.feature_count_
        array([[5., 1., 1.],
               [1., 2., 7.]])
        >>> batch = bnb.NaiveBayes(bnb.Multinomial()).fit(X, y)
        >>> bool(np.allclose(online.predict_proba(X), batch.predict_proba(X)))
        True

        With ``decay=0.5`` the old counts are halved before each chunk is added:

        >>> drifting = bnb.NaiveBayes(bnb.Multinomial())
        >>> for rows in ([0, 2], [1], [3]):
        ...     drifting = drifting.partial_fit(X[rows], y[rows], classes=["finance", "sport"],
        ...                                     decay=0.5)
        >>> drifting.feature_count_  # rows 0, 2 weigh 1/4, row 1 weighs 1/2, row 3 weighs 1
        array([[1.75, 0.5 , 0.25],
               [1.  , 0.5 , 4.75]])"""
        self._check_method()
        X, y, sample_weight, _ = labeled_rows(X, (given := y), sample_weight,
                                              self.missing_label, self.method, partial=True,
                                              updating="fitted_" in self.__dict__)
        with update_lock(self):  # read, update, install as one: else concurrent rows are lost
            # an update's rows may all weigh 0 (no rows: only decay applies), as a chunk of
            # fit_chunks may, or all lack their label under "drop"; a first chunk must hold some
            model = (decayed(self.fitted_, check_decay(decay))
                     if np.size(y) == 0 < np.size(given) else
                     add_chunk(self.__dict__.get("fitted_"), self.features, as_table(X), y,
                               sample_weight, classes, infer_counts=self.infer_counts,
                               use_kernel=self.use_kernel, decay=decay,
                               part="fitted_" in self.__dict__))
            return self._install(model, prepare=False)

    def _install(self, model: FittedModel, prepare: bool = True):
        """Make ``model`` the fitted state, in one assignment. With ``prepare``, its scorer
        (undefined estimates refused, NUTS run) is built first, on a copy of the estimator,
        so that an error leaves this estimator untouched. The model's families are its own
        copies, not the objects given as ``features``."""
        model = owned(model, self.features)
        if prepare:
            candidate = copy.copy(self)
            candidate.__dict__ = {**self.__dict__, "fitted_": model}
            candidate._scorer()
            model = candidate.fitted_
        with update_lock(self):
            if prepare:
                self._cache = candidate._cache
            self.fitted_ = model
        return self

    def _check_method(self):
        check_settings(self.method, METHODS, self.priors, infer_counts=self.infer_counts,
                       use_kernel=self.use_kernel)
        check_method(self.method, self.feature_prior)
        if self.method == "mcmc":
            check_mcmc_settings(self._mcmc_settings())

    def __sklearn_is_fitted__(self) -> bool:
        return "fitted_" in self.__dict__

    # ------------------------------------------------------------------ fitted attributes
    def _fitted(self) -> FittedModel:
        check_is_fitted(self)
        return self.fitted_

    classes_ = property(lambda self: self._fitted().classes, doc="Sorted unique labels.")
    class_count_ = property(lambda self: self._fitted().class_count,
                            doc="Weighted number of training rows per class.")
    blocks_ = property(lambda self: self._fitted().blocks, doc="The fitted blocks.")
    n_features_in_ = property(lambda self: len(self._fitted().columns))

    @property
    def feature_names_in_(self) -> np.ndarray:
        model = self._fitted()
        if not has_feature_names(model.columns, model.named):
            raise AttributeError("feature_names_in_: X had no string column names at fit.")
        return np.asarray(model.columns, dtype=object)

    @property
    def n_unlabeled_(self) -> int:
        unlabeled = self._fitted().unlabeled
        if unlabeled is None:
            raise AttributeError("n_unlabeled_: the fit had no unlabeled rows.")
        return len(unlabeled[0])

    def _nuts(self) -> NutsRun:
        if self.method == "mcmc":  # NUTS runs now if an update has not run it yet, as predict
            self._scorer()
        nuts = self._fitted().nuts
        if nuts is None:
            raise AttributeError("no MCMC draws: fit with method='mcmc' first.")
        return nuts

    draws_ = property(lambda self: labelled(self._fitted(), self._nuts().draws),
                      doc="NUTS draws (method='mcmc'), labelled (``_labelled_draws.Draws``).")
    sample_stats_ = property(lambda self: self._nuts().sample_stats,
                             doc="NUTS statistics per draw: diverging, n_steps, energy, lp, "
                                 "step_size, tree_depth, acceptance_rate.")

    # ------------------------------------------------------------------ the method's scorer
    def _scorer(self):
        """The scorer of the fitted value under the current method and class settings, built
        once (NUTS runs here for ``method="mcmc"``) and cached with the value it scores."""
        model = self._fitted()
        self._check_method()
        if self.method == "mcmc" and model.stated is not None:
            raise ValueError("method='mcmc' needs data; this model was built from tables.")
        # every setting the scorer depends on (a stated model's tables serve every method)
        key = None if model.stated is not None else (self.method, repr(self.feature_prior),
                                                     self._nuts_key())
        cache = self.__dict__.get("_cache")
        if cache is not None and cache[0] is model and cache[1] == key:
            return cache[2]
        original = model
        if self.method == "mcmc":
            check_parametric(model, "method='mcmc'")
            model = self._with_nuts(model)
            scorer = DrawsScorer(model, self._class_setup()[1], model.nuts.draws)
        else:
            check_conjugate(model, self.priors, f"method={self.method!r}")
            args = (model, self.method, self._class_alpha_array(), self._class_prior_array())
            scorer = (table_scorer(*args) if self.feature_prior is None
                      else averaged_scorer(*args, self.feature_prior))
        self._cache = (model, key, scorer)
        with update_lock(self):  # unless an update has installed another model since
            if model is not original and self.__dict__.get("fitted_") is original:
                self.fitted_ = model  # the same data, now with the NUTS draws just run
        return scorer

    def _with_nuts(self, model: FittedModel) -> FittedModel:
        """``model`` with NUTS draws for the current settings (run unless already there)."""
        from .inference import check_convergence, diagnostics, run_nuts

        key = self._nuts_key()
        if model.nuts is not None and model.nuts.key == key:
            return model
        draws, stats = run_nuts(model, *self._class_setup(), self.priors,
                                **self._mcmc_settings())
        check_convergence(diagnostics(model, draws, stats), stats,
                          settings=self._mcmc_settings())
        return model.replace(nuts=NutsRun(key, draws, stats))

    def _mcmc_settings(self) -> dict:
        return dict(num_warmup=self.num_warmup, num_samples=self.num_samples,
                    num_chains=self.num_chains, seed=self.seed, chain_method=self.chain_method,
                    progress_bar=self.progress_bar)

    def _nuts_key(self) -> tuple:
        """What NUTS draws depend on besides the data: settings, class prior and priors."""
        priors = tuple(sorted((k, id(v)) for k, v in (self.priors or {}).items()))
        settings = {k: v for k, v in self._mcmc_settings().items() if k != "progress_bar"}
        # a mapping or Series keyed by label: in another order it is the same setting
        return (tuple(sorted(settings.items())), freeze(by_label(self.class_alpha)),
                freeze(by_label(self.class_prior)), priors)

    def _class_prior_array(self):
        """``class_prior`` in the order of ``classes_`` (a mapping or Series matched by label)."""
        return None if self.class_prior is None else by_class(self.class_prior, self.classes_,
                                                               "class_prior")

    def _class_alpha_array(self):
        """``class_alpha`` as given, or in the order of ``classes_`` where it names classes."""
        return by_class(self.class_alpha, self.classes_, "class_alpha")

    def _class_setup(self):
        from .model import class_setup  # NumPyro loads for draws and MCMC, not for a fit
        return class_setup(len(self.classes_), self._class_alpha_array(),
                           self._class_prior_array())

    def _unseen_rule(self) -> str:
        scorer = self._scorer()
        return scorer.unseen if isinstance(scorer, TableScorer) else "smooth"

    # ------------------------------------------------------------------ prediction
    def _predict(self, X, output: str, name: str):
        if is_dask(X):  # partition by partition, a Dask collection back
            from .dask import predict as dask_predict

            return dask_predict(self, X, name)
        scores, norm = self._scorer().scores(X, output)
        # a jax.Array X: a jax.Array back; stated tables (None) are read alike by every method
        return answer(X, scores, norm, None if self._fitted().stated is not None else self.method,
                      partial(zeroing_columns, self._fitted(), self._scorer(), X))

    def predict_joint_log_proba(self, X: Data) -> np.ndarray:
        """log p(x, c = k) for every row and class, normalising constants included (the
        "proportional posterior" of the seeds, e.g. PlayTennis' 0.0053 and 0.0206).

        Examples
        --------
        >>> import numpy as np, pandas as pd, bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="ml").fit(days, play)
        >>> x = pd.DataFrame([["Sunny", "Cool", "High", "Strong"]], columns=days.columns)
        >>> np.exp(clf.predict_joint_log_proba(x)).round(4)  # No, Yes
        array([[0.0206, 0.0053]])
        >>> round(9 / 14 * 2 / 9 * 3 / 9 * 3 / 9 * 3 / 9, 4)  # p(x, Yes) by hand
        0.0053"""
        return self._scorer().scores(X, "joint")[0]

    def predict_log_proba(self, X: Data) -> np.ndarray:
        """log p(c = k | x): plug-in or, under ``method="bayes"``, exact posterior predictive.

        Computed in log space: a probability too small for a float keeps its log (below,
        -1149.29, as ``scipy.stats.norm`` gives for the two classes' ML Gaussians).

        Examples
        --------
        >>> import numpy as np, bayesnb as bnb
        >>> X = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 4.0], [4.0, 5.0], [5.0, 4.0], [7.0, 6.0]])
        >>> clf = bnb.NaiveBayes(method="ml").fit(X, ["a", "a", "a", "b", "b", "b"])
        >>> clf.predict_log_proba([[3.5, 4.0]]).round(4)
        array([[-0.7891, -0.6056]])
        >>> clf.predict_proba([[50.0, 25.0]])  # p(a | x) underflows to 0 ...
        array([[0., 1.]])
        >>> clf.predict_log_proba([[50.0, 25.0]]).round(2)  # ... its log does not
        array([[-1149.29,     0.  ]])"""
        return self._predict(X, "log_proba", "predict_log_proba")

    def predict_proba(self, X: Data) -> np.ndarray:
        """p(c = k | x) for every row and class; rows sum to 1. A ``jax.Array`` X gives a
        ``jax.Array`` on its device in JAX's float dtype (``scoring.answer``).

        Examples
        --------
        Laplace smoothing (``method="mean"``, ``alpha=1``) on PlayTennis, checked by hand:

        >>> import pandas as pd, bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="mean").fit(days, play)
        >>> x = pd.DataFrame([["Sunny", "Cool", "High", "Strong"]], columns=days.columns)
        >>> clf.predict_proba(x).round(4)  # No, Yes
        array([[0.7353, 0.2647]])
        >>> yes = 10 / 16 * 3 / 12 * 4 / 12 * 4 / 11 * 4 / 11  # (count + 1) / (n + levels)
        >>> no = 6 / 16 * 4 / 8 * 2 / 8 * 5 / 7 * 4 / 7
        >>> round(no / (no + yes), 4)
        0.7353"""
        return self._predict(X, "proba", "predict_proba")

    def predict(self, X: Data) -> np.ndarray:
        """The class with the highest posterior probability (ties: the first in ``classes_``).

        Examples
        --------
        >>> import bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="ml").fit(days, play)
        >>> clf.predict(days.head(3))
        array(['No', 'No', 'Yes'], dtype=object)
        >>> round(clf.score(days, play), 4)  # 13 of the 14 training days
        0.9286"""
        if is_dask(X):
            return self._predict(X, "scores", "predict")
        return self.classes_[best_index(self._predict(X, "scores", "predict"))]

    # ------------------------------------------------------------------ decisions
    def expected_loss(self, X: Data, loss: ArrayLike | pd.DataFrame) -> np.ndarray:
        """Expected loss of choosing each class: ``rho[i, a] = sum_c L[c, a] p(c | x_i)``.

        ``p(c | x)`` is this estimator's ``predict_proba`` (the exact predictive under
        ``"bayes"``, the draws' average under ``"mcmc"``). ``loss`` is a ``(K, K)`` array
        ``L[true, chosen]`` in the order of ``classes_``, or a DataFrame labelled by class
        (index: true class, columns: chosen class) in any order; every entry must be a finite
        number (negative ones, gains, are allowed). An ``(n, K)`` NumPy array, as
        ``predict_proba``; ``pd.DataFrame(rho, columns=clf.classes_)`` labels it.
        :mod:`bayesnb.decisions` holds the maths.

        Examples
        --------
        >>> import numpy as np, pandas as pd, bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="bayes").fit(days, play)
        >>> x = pd.DataFrame([["Sunny", "Cool", "High", "Strong"]], columns=days.columns)
        >>> loss = pd.DataFrame({"No": [0, 4], "Yes": [1, 0]}, index=["No", "Yes"])
        >>> clf.expected_loss(x, loss=loss).round(4)  # choosing No wrongly costs 4
        array([[1.0587, 0.7353]])
        >>> p = clf.predict_proba(x)[0]  # No, Yes
        >>> round(float(4 * p[1]), 4), round(float(p[0]), 4)
        (1.0587, 0.7353)"""
        return decisions.expected_loss(self.predict_proba(X), loss_matrix(loss, self.classes_))

    def decide(self, X: Data, loss: ArrayLike | pd.DataFrame, reject_cost: float | None = None,
               reject_label: Any = None) -> np.ndarray:
        """The class of least expected loss for each row (ties within rounding: the more
        probable, then the first in ``classes_``), or ``reject_label`` where that least
        expected loss exceeds ``reject_cost`` (Chow's reject option). ``loss`` as in
        :meth:`expected_loss`; under the 0-1 loss ``1 - np.eye(K)`` this is ``predict``.

        Examples
        --------
        >>> import numpy as np, pandas as pd, bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="bayes").fit(days, play)
        >>> x = pd.DataFrame([["Sunny", "Cool", "High", "Strong"]], columns=days.columns)
        >>> clf.predict(x)
        array(['No'], dtype=object)
        >>> loss = pd.DataFrame({"No": [0, 4], "Yes": [1, 0]}, index=["No", "Yes"])
        >>> clf.decide(x, loss=loss)  # a missed Yes costs 4: 0.7353 < 4 * 0.2647
        array(['Yes'], dtype=object)
        >>> clf.decide(x, loss=loss, reject_cost=0.5, reject_label="ask")
        array(['ask'], dtype=object)"""
        return decisions.decide(self.predict_proba(X), loss_matrix(loss, self.classes_),
                                self.classes_, reject_cost, reject_label)

    def credal_predict(self, X: Data, s: float = 2.0) -> CredalSets:
        """The naive credal classifier's sets (Zaffalon 2002): per row, the classes that no
        other class dominates under the imprecise Dirichlet model of strength ``s`` (``a``
        dominates ``b`` when p(a, x) > p(b, x) under every prior of total concentration
        ``s`` for the class prior and every Bernoulli/Categorical/Multinomial prior). An
        ``(n, K)`` boolean array, with ``to_sets()`` (labels per row) and ``to_frame()``.
        Other families keep their stated prior (their exact predictive); models from
        tables, ``priors=``, hyperpriors and ``feature_prior`` are refused.
        :mod:`bayesnb.credal` holds the maths; the sets do not depend on ``method``.

        Examples
        --------
        PlayTennis' day (Sunny, Cool, High, Strong) is settled whatever the prior; with one
        value changed, 14 days no longer decide between the classes:

        >>> import pandas as pd, bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="bayes").fit(days, play)
        >>> x = pd.DataFrame([["Sunny", "Cool", "High", "Strong"],
        ...                   ["Sunny", "Cool", "Normal", "Strong"]], columns=days.columns)
        >>> sets = clf.credal_predict(x, s=0.5)
        >>> sets
        CredalSets([[ True, False],
                    [ True,  True]])
        >>> [sorted(labels) for labels in sets.to_sets()]
        [['No'], ['No', 'Yes']]"""
        return credal.credal_predict(self, X, s)

    def prior_sensitivity(self, X: Data, s: float = 2.0) -> PriorSensitivity:
        """Whether each row's prediction (``predict``) is the most probable class under every
        prior of the imprecise Dirichlet model of strength ``s`` (``robust``), and the range
        ``[lower, upper]`` of its posterior probability over that set: exact for Bernoulli
        and Categorical columns (the extremes are at extreme points of the priors), a range
        that can only be slightly too wide with a Multinomial block (see
        :mod:`bayesnb.credal`). A dict of (n,) arrays with ``to_frame()``. The same models
        as :meth:`credal_predict`.

        Examples
        --------
        >>> import pandas as pd, bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="bayes").fit(days, play)
        >>> x = pd.DataFrame([["Sunny", "Cool", "High", "Strong"],
        ...                   ["Sunny", "Cool", "Normal", "Strong"]], columns=days.columns)
        >>> clf.prior_sensitivity(x, s=0.5).to_frame().round(4)
          predicted  robust   lower   upper
        0        No    True  0.6114  0.8928
        1       Yes   False  0.4187  0.8252"""
        return credal.prior_sensitivity(self, X, s)

    def __sklearn_tags__(self):
        """scikit-learn's tags. What the input may hold depends on ``features``: one family
        reads every column (its values only), while ``None`` or a mapping infers (the other)
        columns, strings as Categorical and numbers as Gaussian."""
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True  # every family: a sparse path, or rows densified in chunks
        # (string stays True: False would make scikit-learn's check_dtype_object ask for NumPy's
        # TypeError wording where a family refuses a non-number in its own words)
        tags.input_tags.string = True
        tags.input_tags.categorical, counts = input_kinds(self.features)
        # counts or 0/1 values model the real-valued blobs of scikit-learn's checks poorly, as
        # its discrete naive Bayes do (MultinomialNB, BernoulliNB: poor_score)
        tags.input_tags.positive_only = tags.classifier_tags.poor_score = counts
        return tags


def merge(*models: NaiveBayes) -> NaiveBayes:
    """One model from several fits of the same specification on different data: the
    sufficient statistics add up (Gaussian moments merge exactly), so merging fits of the
    parts equals one fit of the union.

    The models must share classes, columns, families with equal hyperparameters and category
    levels (declare ``categories=`` and ``partial_fit(..., classes=)`` when parts may miss some).
    The result takes the first model's settings (method, class prior, MCMC options).

    Examples
    --------
    Fits of two parts of the rows merge into the fit of all of them:

    >>> import numpy as np, bayesnb as bnb
    >>> X = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 4.0], [4.0, 5.0], [5.0, 4.0], [7.0, 6.0]])
    >>> y = np.array(["a", "a", "a", "b", "b", "b"])
    >>> first = bnb.NaiveBayes(method="bayes").fit(X[[0, 1, 3]], y[[0, 1, 3]])
    >>> second = bnb.NaiveBayes(method="bayes").fit(X[[2, 4, 5]], y[[2, 4, 5]])
    >>> merged = bnb.merge(first, second)
    >>> merged.class_count_
    array([3., 3.])
    >>> whole = bnb.NaiveBayes(method="bayes").fit(X, y)
    >>> bool(np.allclose(merged.predict_proba(X), whole.predict_proba(X)))
    True
    """
    if not models:
        raise ValueError("merge needs at least one model.")
    merged = merge_models([m._fitted() for m in models])
    return clone(models[0])._install(merged, prepare=False)
