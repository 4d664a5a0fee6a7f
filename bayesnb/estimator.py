"""``NaiveBayes``: a thin scikit-learn estimator over the families' pure functions.

Fitting is one pass over the data that accumulates per-class sufficient statistics for every
block of columns; each method (``ml``, ``map``, ``mean``, ``bayes``) is then a function of those
statistics and the priors, computed on the host (tables are tiny) and handed to the jit-compiled
scoring kernel.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from . import _kernels
from ._classes import class_log_evidence, class_log_prior
from ._data import (
    as_table,
    encode_labels,
    labels_to_codes,
    resolve_features,
)
from .families import Family, Schema

METHODS = ("ml", "map", "mean", "bayes", "mcmc")

#: rows x classes x columns elements held at once by the exact (Student-t, Dirichlet-multinomial,
#: negative binomial) scorers, which cannot be written as a matmul
_EXACT_BUDGET = 1 << 24


class FittedBlock(NamedTuple):
    """One block of columns after fitting: everything a prediction or a saved model needs."""

    family: Family
    schema: Schema
    positions: tuple
    prior: Any  # the family's prior NamedTuple
    stats: Any  # per-class sufficient statistics (None for a model built from tables)


class NaiveBayes(ClassifierMixin, BaseEstimator):
    """Naive Bayes with conjugate priors: ML, MAP, posterior-mean and exact Bayes classification.

    Parameters
    ----------
    features : Family, mapping or None, default=None
        One family for every column (``bnb.Multinomial()`` for a bag of words); a mapping
        ``{column: family}`` (a column name or position, or a list of them for one
        multivariate block) for mixed data, unmapped columns being inferred; or ``None`` to infer
        every column from its dtype: booleans -> Bernoulli, strings/objects/categories ->
        Categorical, numbers -> Gaussian.
    method : {"mean", "map", "ml", "bayes"}, default="mean"
        ``"ml"``: maximum likelihood plug-in. ``"map"``: posterior mode plug-in (an error where
        the prior has no mode, e.g. a concentration below 1). ``"mean"``: posterior-mean plug-in,
        i.e. Laplace/Lidstone smoothing with pseudo-count ``alpha`` (scikit-learn's ``alpha``).
        ``"bayes"``: the exact posterior predictive p(c | x, data), the parameters integrated out
        (Beta-Bernoulli, Dirichlet-categorical, Dirichlet-multinomial, Student-t, negative
        binomial). ``"mcmc"``: the same predictive averaged over NUTS draws of the parameters
        (``draws_``, ``mcmc_summary()``, ``to_arviz()``). MAP under concentration
        ``alpha + 1`` equals the posterior mean under ``alpha``: Laplace's add-one rule is the
        mean under ``alpha=1`` and the MAP under ``alpha=2``.
    class_alpha : float or array-like of shape (n_classes,), default=1.0
        Dirichlet prior on the class proportions. ``0`` uses the plain class frequencies under
        every method (scikit-learn's and e1071's behaviour), at the price of an undefined
        evidence.
    class_prior : array-like of shape (n_classes,) or mapping {label: probability}, optional
        Fixed class probabilities, used as given by every method (overrides ``class_alpha``).
    priors : mapping {site: numpyro distribution}, optional
        Replace the conjugate prior of parameter sites, e.g.
        ``{"poisson.rate": dist.LogNormal(0, 1), "bernoulli.theta": dist.Kumaraswamy(2, 5)}``
        (sites as in ``to_arviz()``/``bayesnb.model``: ``"{family}.{parameter}"``). Any
        distribution with the parameter's support and event shape; it is expanded over the
        classes and columns. Non-conjugate, so ``method="mcmc"`` is the only method.
        Hyperparameters of a family may also be distributions (a hyperprior: learned
        smoothing), e.g. ``Multinomial(alpha=dist.Gamma(1, 1))``.
    num_warmup, num_samples, num_chains, seed, chain_method, progress_bar
        NUTS settings for ``method="mcmc"`` (NumPyro's ``MCMC``; ``chain_method`` one of
        "sequential", "parallel", "vectorized"). ``"mcmc"`` draws from the posterior of the
        NumPyro model by NUTS; prediction averages over the draws. On a conjugate model it
        converges to ``"bayes"``; it is the method for priors without a closed form.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique labels.
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of training rows per class.
    blocks_ : list of FittedBlock
        Per block of columns: family, schema (columns, category levels), prior, statistics.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Present when ``X`` was a DataFrame with string column names.

    Notes
    -----
    dtype policy: kernels compute in JAX's default float type, float32 unless ``jax_enable_x64``
    is on (``JAX_ENABLE_X64=1`` or ``jax.config.update``), then float64. The library never turns
    x64 on by itself. Class probabilities leave the kernels as float64 NumPy arrays.
    """

    def __init__(self, features=None, *, method="mean", class_alpha=1.0, class_prior=None,
                 priors=None, num_warmup=1000, num_samples=1000, num_chains=1, seed=0,
                 chain_method="sequential", progress_bar=True):
        self.features = features
        self.priors = priors
        self.method = method
        self.class_alpha = class_alpha
        self.class_prior = class_prior
        self.num_warmup = num_warmup
        self.num_samples = num_samples
        self.num_chains = num_chains
        self.seed = seed
        self.chain_method = chain_method
        self.progress_bar = progress_bar

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y, sample_weight=None):
        """Fit from scratch: one pass that accumulates per-class sufficient statistics.

        Under ``method="mcmc"`` a missing label (None/NaN in ``y``) makes the row unlabeled:
        it enters the posterior through the marginal over classes (semi-supervised). The other
        methods need every label. A Dask array or DataFrame is fitted by a Dask reduction of
        sufficient statistics (:func:`bayesnb.dask.fit`), equal to the in-memory fit."""
        if _is_dask(X):
            from .dask import fit as dask_fit

            return dask_fit(self, X, y, sample_weight=sample_weight)
        for attr in ("classes_", "blocks_", "class_count_", "_state", "_unlabeled"):
            self.__dict__.pop(attr, None)
        X, y, X_unlabeled = self._split_unlabeled(X, y)
        if X_unlabeled is not None and sample_weight is not None:
            raise ValueError("sample_weight with unlabeled rows is not supported.")
        self.partial_fit(X, y, classes=None, sample_weight=sample_weight)
        if X_unlabeled is not None:
            self._unlabeled, _ = self._encoded_blocks(X_unlabeled)
            self.n_unlabeled_ = len(self._unlabeled[0])
        self._prediction_state()  # surface undefined estimates (ML, MAP) and run NUTS now
        return self

    def _split_unlabeled(self, X, y):
        """Under method="mcmc", rows with a missing label are kept apart (semi-supervised)."""
        if self.method != "mcmc" or y is None:
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
            raise TypeError("semi-supervised fitting needs dense X.")
        else:
            X_l, X_u = table.array[~missing], table.array[missing]
        y_l = np.asarray(y, dtype=object).reshape(-1)[~missing]
        if not isinstance(y, pd.Series) and np.asarray(y).dtype != object:
            y_l = np.asarray(y).reshape(-1)[~missing]
        return X_l, y_l, X_u

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Conjugate update with a new chunk: the statistics of all chunks are summed (Gaussian
        moments merged exactly), so any chunking gives the batch fit. ``classes`` declares every
        label up front (needed on the first call if a chunk may miss a class). Estimates that
        the data so far leave undefined (ML for a class not seen yet) are reported when the
        model is used to predict, not while it is still learning; NUTS (``method="mcmc"``)
        likewise runs at the first prediction after an update."""
        self._check_method()
        table = as_table(X)
        if table.n_rows == 0:
            raise ValueError(f"Found array with 0 sample(s) (shape=({table.n_rows}, "
                             f"{len(table.columns)})) while a minimum of 1 is required.")
        first = not hasattr(self, "blocks_")
        if first:
            if classes is not None:
                classes = np.asarray(classes)
                declared, _ = encode_labels(classes, len(classes))
                if len(declared) != len(classes):
                    raise ValueError("classes has repeated labels.")
                self.classes_ = declared
                codes = labels_to_codes(y, self.classes_)
            else:
                self.classes_, codes = encode_labels(y, table.n_rows)
            self._set_columns(table)
        else:
            self._check_columns(table)
            codes = labels_to_codes(y, self.classes_)
        if codes.shape[0] != table.n_rows:
            raise ValueError(f"X has {table.n_rows} rows but y has {codes.shape[0]} labels.")
        weight = self._check_weight(sample_weight, table.n_rows)
        n_classes = len(self.classes_)
        counts = np.bincount(codes, weights=weight, minlength=n_classes)
        if first:
            specs = [(spec.family, spec.columns, spec.positions, None)
                     for spec in resolve_features(self.features, table)]
        else:
            specs = [(b.family, b.schema.columns, b.positions, b.schema) for b in self.blocks_]
        families, raws, schemas = [], [], []
        for family, columns, positions, schema in specs:
            if table.sparse is not None and not family.supports_sparse:
                raise TypeError(f"{family!r} does not take sparse input.")
            raw = table.block(columns, positions)
            families.append(family)
            raws.append(raw)
            schemas.append(schema or family.learn_schema(raw, columns))
        if table.sparse is not None:  # SciPy on the host, float64; resp stays codes + weights
            from .families._sparse import Labels

            resp = Labels(codes, weight, n_classes)
            new_stats = [jax.tree_util.tree_map(
                jnp.asarray, family.sparse_suff_stats(family.encode(raw, schema), resp))
                for family, raw, schema in zip(families, raws, schemas, strict=True)]
        else:
            sources = [_source(family, raw, schema, "error")
                       for family, raw, schema in zip(families, raws, schemas, strict=True)]
            new_stats = _kernels.stream_suff_stats(
                tuple(type(f) for f in families), tuple(_levels(s) for s in schemas),
                n_classes, sources, codes, weight)
        if first:
            blocks = [FittedBlock(family, schema, positions, family.prior(schema), stats)
                      for (family, _, positions, _), schema, stats
                      in zip(specs, schemas, new_stats, strict=True)]
            self.class_count_ = counts
        else:
            blocks = [block._replace(stats=block.family.merge_stats(block.stats, stats))
                      for block, stats in zip(self.blocks_, new_stats, strict=True)]
            self.class_count_ = self.class_count_ + counts
        self.blocks_ = blocks
        for attr in ("_state", "draws_", "sample_stats_", "_draws_key"):
            self.__dict__.pop(attr, None)
        return self

    def _check_method(self):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}.")

    def _set_columns(self, table):
        self.n_features_in_ = len(table.columns)
        if table.frame is not None and all(isinstance(c, str) for c in table.columns):
            self.feature_names_in_ = np.asarray(table.columns, dtype=object)
        else:
            self.__dict__.pop("feature_names_in_", None)
        self._columns = table.columns

    def _check_columns(self, table):
        if table.frame is not None and hasattr(self, "feature_names_in_"):
            missing = [c for c in self._columns if c not in table.columns]
            if missing:
                raise ValueError(f"column {missing[0]!r} seen at fit is missing from X.")
            return
        if len(table.columns) != self.n_features_in_:
            raise ValueError(f"X has {len(table.columns)} features, but NaiveBayes is expecting "
                             f"{self.n_features_in_} features as input.")

    @staticmethod
    def _check_weight(sample_weight, n_rows):
        if sample_weight is None:
            return np.ones(n_rows)
        from ._data import sample_weight_array  # names sample_weight when it is not numbers

        w = sample_weight_array(sample_weight)
        if w.shape != (n_rows,):
            raise ValueError(f"sample_weight must have shape ({n_rows},), got {w.shape}.")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("sample_weight must be finite and non-negative.")
        from .families._base import FLOAT32_SAFE, float64_mode

        if not float64_mode() and np.any(w > FLOAT32_SAFE):
            raise ValueError(f"sample_weight has values above {FLOAT32_SAFE:g}, too large for "
                             "float32 (the default dtype); rescale or enable JAX's x64 mode.")
        if n_rows and not np.any(w > 0):
            raise ValueError("sample_weight is zero for every row: there is nothing to fit.")
        return w

    # ------------------------------------------------------------------ the method's tables
    def _prediction_state(self):
        """(families, exact, class log prior, per-block tables) for the current method."""
        check_is_fitted(self, "blocks_")
        self._check_method()
        key = (self.method, _freeze(self.class_alpha), _freeze(self.class_prior))
        cached = self.__dict__.get("_state")
        if cached is not None and (cached[0] == key or cached[0] == "tables"):
            return cached[1]
        method = self.method
        if method != "mcmc":
            self._check_conjugate(f"method={method!r}")
        if method == "mcmc":
            self._ensure_draws()
            state = ("mcmc", None, None, None)
            self._state = (key, state)
            return state
        log_prior = class_log_prior(self.class_count_, self.class_alpha,
                                    self._class_prior_array(), method)
        tables = []
        for block in self.blocks_:
            family = type(block.family)
            if method == "bayes":
                tables.append(_kernels.posterior(family, block.prior, block.stats))
                continue
            block.family.check_prior(block.prior, block.schema, method)
            params = _kernels.estimate(family, block.prior, block.stats, method)
            _check_defined(params, block, self.classes_, method)
            tables.append(params)
        state = (tuple(type(b.family) for b in self.blocks_), method == "bayes",
                 jnp.asarray(log_prior), tuple(tables))
        self._state = (key, state)
        return state

    def _check_conjugate(self, what: str):
        if self.priors:
            raise ValueError(f"priors={sorted(self.priors)} replace conjugate priors, so there "
                             f"is no closed form: {what} is unavailable; use method='mcmc'.")
        for b in self.blocks_:
            hyper = b.family.hyperpriors()
            if hyper:
                raise ValueError(
                    f"columns {list(b.schema.columns)[:5]}: {type(b.family).__name__} has a "
                    f"hyperprior on {', '.join(hyper)} (a distribution, not a value), which has "
                    f"no closed form: {what} is unavailable; use method='mcmc'.")

    def _mcmc_settings(self):
        return dict(num_warmup=self.num_warmup, num_samples=self.num_samples,
                    num_chains=self.num_chains, seed=self.seed, chain_method=self.chain_method,
                    progress_bar=self.progress_bar)

    def _draws_cache_key(self):
        priors = tuple(sorted((k, id(v)) for k, v in (self.priors or {}).items()))
        return (tuple(sorted(self._mcmc_settings().items())), _freeze(self.class_alpha),
                _freeze(self.class_prior), priors)

    def _ensure_draws(self):
        """Run NUTS (once per fit and settings) and warn if the diagnostics look bad."""
        from .inference import check_convergence, run_nuts

        key = self._draws_cache_key()
        if self.__dict__.get("_draws_key") == key:
            return
        if any(b.stats is None for b in self.blocks_):
            raise ValueError("method='mcmc' needs data; this model was built from tables.")
        if self.priors:
            from .model import block_sites

            sites = {f"{s}.{k}" for b, s in zip(self.blocks_, block_sites(self), strict=True)
                     for k in _param_keys(b)} | {"class_probs"}
            unknown = sorted(set(self.priors) - sites)
            if unknown:
                raise ValueError(f"priors names {unknown[0]!r}, which is not a parameter "
                                 f"site of this model (sites: {sorted(sites)}).")
        self.draws_, self.sample_stats_ = run_nuts(
            self, **self._mcmc_settings(), unlabeled=self.__dict__.get("_unlabeled"))
        self._draws_key = key
        check_convergence(self.mcmc_summary(), self.sample_stats_)

    def _class_prior_array(self):
        if self.class_prior is None or not isinstance(self.class_prior, dict):
            return self.class_prior
        missing = [c for c in self.classes_ if c not in self.class_prior]
        if missing:
            raise ValueError(f"class_prior gives no probability for class {missing[0]!r}.")
        return np.array([self.class_prior[c] for c in self.classes_], dtype=np.float64)

    # ------------------------------------------------------------------ prediction
    def _raw_blocks(self, X):
        """Every block's raw values in ``X`` (columns matched by name for a DataFrame), and
        what an unseen category means under this model."""
        table = as_table(X)
        self._check_columns(table)
        if table.frame is not None and hasattr(self, "feature_names_in_"):
            order = {c: i for i, c in enumerate(table.columns)}
            positions = [tuple(order[c] for c in b.schema.columns) for b in self.blocks_]
        else:
            positions = [b.positions for b in self.blocks_]
        tables_model = self.__dict__.get("_state", (None,))[0] == "tables"
        unseen = ("stated tables" if tables_model else "method='ml'" if self.method == "ml"
                  else "smooth")
        raws = [table.block(b.schema.columns, pos)
                for b, pos in zip(self.blocks_, positions, strict=True)]
        return raws, unseen, table.n_rows

    def _encoded_blocks(self, X):
        raws, unseen, n = self._raw_blocks(X)
        xs = [b.family.encode(raw, b.schema, unseen=unseen)
              for b, raw in zip(self.blocks_, raws, strict=True)]
        return xs, n

    def _scores(self, X, output: str) -> tuple[np.ndarray, np.ndarray]:
        """``(n, K)`` scores (see ``_kernels.scores`` for ``output``) and the per-row log
        normaliser of the class scores."""
        families, exact, log_prior, tables = self._prediction_state()
        if families == "mcmc":
            from .inference import predict_from_draws

            encoded = self._encoded_blocks(X)
            if any(sparse.issparse(x) for x in encoded[0]):
                raise TypeError("method='mcmc' predicts from dense input; densify X or use "
                                "method='bayes' (the exact predictive) with sparse input.")
            joint = predict_from_draws(self, X, self.draws_, encoded=encoded)["log_joint"]
            if output == "joint":
                joint = joint + self._log_normalizer(encoded[0])
            return _normalised(joint, output)
        raws, unseen, n = self._raw_blocks(X)
        if any(sparse.issparse(raw) for raw in raws):
            xs = [b.family.encode(raw, b.schema, unseen=unseen)
                  for b, raw in zip(self.blocks_, raws, strict=True)]
            scores = np.asarray(log_prior, dtype=np.float64)
            for block, table, x in zip(self.blocks_, tables, xs, strict=True):
                family = type(block.family)
                if not sparse.issparse(x):
                    raise TypeError("mixing sparse and dense blocks is not supported.")
                block_scores = (family.sparse_log_predictive(table, x) if exact
                                else family.sparse_log_likelihood(table, x))
                block_scores += scores  # in place: the (n, K) products are fresh arrays
                scores = block_scores
            if output == "joint":
                scores = scores + self._log_normalizer(xs)
            return _normalised(scores, output)
        n_classes = len(self.classes_)
        if n == 0:
            return np.zeros((0, n_classes)), np.zeros(0)
        sources = [_source(b.family, raw, b.schema, unseen)
                   for b, raw in zip(self.blocks_, raws, strict=True)]
        width = sum(raw.shape[1] for raw in raws) * n_classes
        max_rows = max(256, _EXACT_BUDGET // max(width, 1)) if exact else None
        levels = tuple(_levels(b.schema) for b in self.blocks_)
        if output == "joint" and all(type(b.family).log_normalizer is Family.log_normalizer
                                     for b in self.blocks_):
            output = "scores"  # no class-free constants: the same compiled kernel serves both
        return _kernels.stream_scores(families, levels, exact, output, log_prior, tables,
                                      sources, n, n_classes, max_rows=max_rows)

    def _log_normalizer(self, xs) -> np.ndarray:
        """``(n, 1)``: the class-free constants the class scores leave out."""
        total = sum(type(b.family).sparse_log_normalizer(x) if sparse.issparse(x) else
                    np.asarray(type(b.family).log_normalizer(jnp.asarray(x)), dtype=np.float64)
                    for b, x in zip(self.blocks_, xs, strict=True))
        return np.reshape(total, (-1, 1))

    def predict_joint_log_proba(self, X) -> np.ndarray:
        """log p(x, c = k) for every row and class, normalising constants included (the
        "proportional posterior" of the seeds, e.g. PlayTennis' 0.0053 and 0.0206)."""
        return self._scores(X, "joint")[0]

    def predict_log_proba(self, X) -> np.ndarray:
        """log p(c = k | x): plug-in or, under ``method="bayes"``, exact posterior predictive."""
        if _is_dask(X):  # partition by partition, a Dask collection back
            from .dask import predict as dask_predict

            return dask_predict(self, X, "predict_log_proba")
        log_proba, norm = self._scores(X, "log_proba")
        self._check_defined(norm)
        return log_proba

    def _check_defined(self, norm):
        impossible = ~np.isfinite(norm)
        if np.any(impossible):
            i = int(np.argmax(impossible))
            raise ValueError(
                f"row {i}: every class has probability zero under method={self.method!r} "
                f"({int(impossible.sum())} such rows), so p(class | x) is undefined; a value "
                f"never seen in training meets an unsmoothed estimate. Use method='mean', "
                f"'map' or 'bayes'.")

    def predict_proba(self, X) -> np.ndarray:
        """p(c = k | x) for every row and class; rows sum to 1."""
        if _is_dask(X):  # partition by partition, a Dask collection back
            from .dask import predict as dask_predict

            return dask_predict(self, X, "predict_proba")
        proba, norm = self._scores(X, "proba")
        self._check_defined(norm)
        return proba

    def predict(self, X) -> np.ndarray:
        """The class with the highest posterior probability (ties: the first in ``classes_``)."""
        if _is_dask(X):  # partition by partition, a Dask collection back
            from .dask import predict as dask_predict

            return dask_predict(self, X, "predict")
        scores, norm = self._scores(X, "scores")
        self._check_defined(norm)  # an undefined posterior has no most probable class
        return self.classes_[np.argmax(scores, axis=1)]

    # ------------------------------------------------------------------ Bayesian quantities
    def log_evidence(self, per_block: bool = False):
        """Log marginal likelihood log p(y, X) of the training data under the priors.

        With ``per_block=True``, a pandas Series with the class term and each block's term
        log p(X_block | y), which add up to the total.
        """
        check_is_fitted(self, "blocks_")
        if any(b.stats is None for b in self.blocks_):
            raise ValueError("this model was built from stated tables; it has no data and so "
                             "no evidence.")
        self._check_conjugate("the closed-form evidence")
        parts = {"class": class_log_evidence(self.class_count_, self.class_alpha,
                                             self._class_prior_array())}
        for b in self.blocks_:
            name = f"{b.family.name}{list(b.schema.columns)}"
            parts[name] = float(type(b.family).log_evidence(b.prior, b.stats))
        if per_block:
            return pd.Series(parts, name="log_evidence")
        return float(sum(parts.values()))

    def sample_posterior(self, num_draws=1000, seed=0, num_chains=1, *, prior=False) -> dict:
        """I.i.d. draws from the exact conjugate posterior (or the prior), in the same format as
        the NUTS draws ``draws_``: ``{site: array (chains, draws, ...)}``."""
        from .inference import exact_draws

        check_is_fitted(self, "blocks_")
        return exact_draws(self, num_draws, seed, num_chains, prior=prior)

    def predict_uncertainty(self, X, *, interval=0.9, draws=None, num_draws=1000, seed=0):
        """Posterior predictive classification with its uncertainty, from draws.

        Uses ``draws`` if given, else the NUTS draws under ``method="mcmc"``, else
        ``num_draws`` exact conjugate draws. Returns a dict of arrays: ``proba`` (n, K) the
        predictive p(c | x, data); ``lower``/``upper`` (n, K) the central ``interval`` of
        p(c | x, theta) over the posterior; ``entropy`` (n,) of the predictive; and
        ``mutual_info`` (n,) between the label and the parameters (epistemic uncertainty).
        One jit-compiled function vmapped over draws, batched over rows.
        """
        from .inference import predict_from_draws

        check_is_fitted(self, "blocks_")
        if draws is None:
            if self.method == "mcmc":
                self._prediction_state()
                draws = self.draws_
            else:
                draws = self.sample_posterior(num_draws, seed)
        result = predict_from_draws(self, X, draws, interval=interval)
        result.pop("log_joint")
        return result

    def simulate(self, n_rows: int, *, posterior: bool = True, num_draws: int = 1, seed: int = 0,
                 total_count: int | None = None) -> pd.DataFrame:
        """Synthetic (X, y) from the posterior (or, with ``posterior=False``, the prior)
        predictive of the NumPyro model: a DataFrame with this model's columns, category
        values and labels (column ``"y"``), and a ``"draw"`` column; see
        :func:`bayesnb.model.simulate`."""
        from .model import simulate

        check_is_fitted(self, "blocks_")
        return simulate(self, n_rows, posterior=posterior, num_draws=num_draws, seed=seed,
                        total_count=total_count)

    def mcmc_summary(self):
        """ArviZ summary of the NUTS draws: mean, sd, HDI, MCSE, ESS (bulk, tail), r-hat."""
        from .inference import diagnostics

        if "draws_" not in self.__dict__:
            raise ValueError("no MCMC draws: fit with method='mcmc' first.")
        return diagnostics(self, self.draws_, self.sample_stats_)

    def to_arviz(self, draws=None, *, prior_draws: int | None = 500, seed=0, backend=None,
                 predictive_rows: int | None = None):
        """Export draws to ArviZ (``InferenceData`` with arviz 0.x, ``DataTree`` with 1.x).

        ``draws`` defaults to the NUTS draws (``method="mcmc"``) or else 1000 exact conjugate
        draws; groups: posterior, sample_stats (NUTS), prior (``prior_draws`` i.i.d. draws from
        the prior), observed_data; dims and coords name classes, columns and levels.
        ``backend=arviz_base`` builds an arviz 1.x DataTree on any Python.
        ``predictive_rows=n`` adds prior_predictive and posterior_predictive groups: ``n``
        synthetic rows per draw from the model (encoded: label and category codes; dims
        ``row`` and the block's columns)."""
        from .inference import to_inference_data

        check_is_fitted(self, "blocks_")
        sample_stats = None
        if draws is None:
            if self.method == "mcmc":
                self._prediction_state()
                draws, sample_stats = self.draws_, self.sample_stats_
            else:
                draws = self.sample_posterior(1000, seed)
        prior = (self.sample_posterior(prior_draws, seed + 1, prior=True)
                 if prior_draws and not self.priors and not any(
                     b.family.hyperpriors() for b in self.blocks_) else None)
        predictive = None
        if predictive_rows:
            from .model import simulate_sites

            n_draws = min(200, next(iter(draws.values())).shape[1])
            predictive = {
                "posterior_predictive": simulate_sites(self, predictive_rows, num_draws=n_draws,
                                                       seed=seed),
                "prior_predictive": simulate_sites(self, predictive_rows, posterior=False,
                                                   num_draws=n_draws, seed=seed)}
        return to_inference_data(self, draws, sample_stats, prior, backend=backend,
                                 predictive=predictive)

    @property
    def posterior_(self) -> list:
        """Conjugate posterior hyperparameters per block (whatever ``method`` is)."""
        check_is_fitted(self, "blocks_")
        self._check_conjugate("the conjugate posterior")
        return [type(b.family).posterior(b.prior, b.stats) for b in self.blocks_]

    @property
    def class_prior_(self) -> pd.Series:
        """p(c) used by the current method, indexed by class."""
        _, _, log_prior, _ = self._prediction_state()
        return pd.Series(np.exp(np.asarray(log_prior, dtype=np.float64)), index=self.classes_,
                         name="prior")

    def conditional_tables(self) -> dict:
        """Per column, the fitted conditional distribution as a tidy DataFrame (rows: classes),
        like R's ``naiveBayes`` print-out: level probabilities for Categorical and Bernoulli,
        mean and sd for Gaussian, rate for Poisson, word probabilities for a Multinomial block
        (keyed by the tuple of its columns). Under ``method="bayes"`` the posterior means are
        shown (for Bernoulli and Categorical they are the exact predictive)."""
        families, exact, _, tables = self._prediction_state()
        out = {}
        for b, table in zip(self.blocks_, tables, strict=True):
            params = type(b.family).estimate(b.prior, b.stats, "mean") if exact else table
            tables = type(b.family).describe(params, b.schema, self.classes_)
            out.update({k: v.astype(np.float64) for k, v in tables.items()})
        return out

    def summary(self) -> str:
        """A text print-out in the style of R's e1071 ``naiveBayes``."""
        lines = [f"Naive Bayes classifier (method={self.method!r})", "", "A-priori probabilities:",
                 self.class_prior_.to_frame().T.to_string(index=False), "",
                 "Conditional probabilities:"]
        for col, frame in self.conditional_tables().items():
            lines += [f"  {col}", frame.to_string(), ""]
        try:
            lines.append(f"log evidence: {self.log_evidence():.6f}")
        except ValueError as err:
            lines.append(f"log evidence: undefined ({err})")
        return "\n".join(lines)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags


def _is_dask(X) -> bool:
    """A Dask collection? Dask is optional and is not imported unless already loaded."""
    import sys

    if "dask" not in sys.modules:
        return False
    from dask import is_dask_collection

    return is_dask_collection(X)


def _param_keys(block) -> list:
    """The parameter names a block samples (its NumPyro sites without the block prefix)."""
    name = block.family.name
    if name == "categorical":
        return [f"{j}.probs" for j in range(len(block.schema.columns))]
    return {"bernoulli": ["theta"], "multinomial": ["probs"], "poisson": ["rate"],
            "gaussian": ["mean", "precision"]}[name]


def _source(family, raw, schema: Schema, unseen: str) -> _kernels.Source:
    """How the streaming kernels read one block. Raw numbers go straight to the kernel, which
    checks them itself; anything else (strings, objects, categorical values) is validated and
    encoded on the host chunk by chunk."""
    dtype = np.dtype(jnp.result_type(float))

    def report():  # encoding the whole block names the column and row of the bad value
        family.encode(raw, schema, unseen=unseen)

    if family.value_checks is not None and isinstance(raw, np.ndarray) and raw.ndim == 2 \
            and raw.dtype.kind in "biuf":
        return _kernels.Source(lambda start, stop: raw[start:stop], raw.shape[1], dtype, report)

    def encode(start, stop):
        try:
            return family.encode(raw[start:stop], schema, unseen=unseen, dtype=dtype)
        except (TypeError, ValueError):
            if start > 0:  # report the row of the block, not of the chunk
                report()
            raise

    kernel_dtype = np.dtype(np.int32) if family.integer_codes else dtype
    # the kernels expand codes to a one-hot row of every level: size the chunks by that
    one_hot = sum(len(lv) for lv in schema.levels) * dtype.itemsize
    return _kernels.Source(encode, raw.shape[1], kernel_dtype, report, one_hot)


def _normalised(scores: np.ndarray, output: str) -> tuple[np.ndarray, np.ndarray]:
    """Host-side counterpart of ``_kernels.scores`` (sparse and MCMC paths)."""
    norm = _logsumexp_rows(scores)[:, 0]
    if output in ("scores", "joint"):
        return scores, norm
    top = np.max(scores, axis=1, keepdims=True) if scores.size else scores[:, :1]
    shifted = scores - np.where(np.isfinite(top), top, 0.0)
    return _kernels.finish(np.exp(shifted) if output == "proba" else shifted, output), norm


def _logsumexp_rows(scores) -> np.ndarray:
    """``log sum_k exp(scores[:, k])`` as an ``(n, 1)`` column, shifted by the row maximum.

    Equal to ``scipy.special.logsumexp(scores, axis=1, keepdims=True)`` (a row of -inf gives
    -inf, a NaN gives NaN) at a fraction of its cost on tall, narrow score matrices.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return np.full((scores.shape[0], 1), -np.inf)
    top = scores.max(axis=1, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.log(np.exp(scores - shift).sum(axis=1, keepdims=True)) + shift


def _levels(schema: Schema):
    return tuple(len(lv) for lv in schema.levels) or None


def _freeze(value):
    if isinstance(value, dict):
        return tuple(sorted((repr(k), float(v)) for k, v in value.items()))
    if value is None:
        return None
    a = np.asarray(value, dtype=np.float64)
    return a.tobytes() + str(a.shape).encode()


def _check_defined(params, block: FittedBlock, classes, method: str):
    """Raise a ValueError naming the column and class where a plug-in estimate is undefined:
    0/0 under ML (no observed value), a zero variance, or a non-positive precision."""
    columns = block.schema.columns
    segment = getattr(block.prior, "segment", None)
    for name, leaf in zip(type(params)._fields, params, strict=True):
        leaf = np.asarray(leaf)
        if leaf.ndim != 2 or leaf.shape[0] != len(classes):
            continue
        undefined = np.isnan(leaf)
        degenerate = (leaf == np.inf) | ((leaf <= 0) if name == "precision" else False)
        bad = undefined | degenerate
        if not bad.any():
            continue
        k, j = map(int, np.argwhere(bad)[0])
        col = columns[int(segment[j])] if segment is not None else columns[j]
        if undefined[k, j]:
            reason = "no observed value in this class, so the estimate is 0/0"
        elif name == "precision" and method == "ml":
            reason = "zero variance (every value of the class equal, or a single value)"
        else:
            reason = "no defined estimate (the posterior mode is at the boundary)"
        label = classes[k].item() if isinstance(classes[k], np.generic) else classes[k]
        raise ValueError(
            f"column {col!r}, class {label!r}: {reason} under method={method!r} "
            f"({block.family.name} {name}). The data give no information there; use "
            f"method='mean' or 'bayes' (the prior fills the gap).")


def merge(*models: NaiveBayes) -> NaiveBayes:
    """One model from several fits of the same specification on different data: the
    sufficient statistics add up (Gaussian moments merge exactly), so merging fits of the
    parts equals one fit of the union.

    The models must share classes, columns, families with equal hyperparameters and category
    levels (declare ``categories=`` and ``partial_fit(..., classes=)`` when parts may miss some).
    The result takes the first model's settings (method, class prior, MCMC options).
    """
    if not models:
        raise ValueError("merge needs at least one model.")
    for m in models:
        check_is_fitted(m, "blocks_")
        if any(b.stats is None for b in m.blocks_):
            raise ValueError("a model built from stated tables has no statistics to merge.")
    first = models[0]
    for i, m in enumerate(models[1:], start=1):
        if not np.array_equal(m.classes_, first.classes_):
            raise ValueError(f"model {i} has classes {list(m.classes_)}, model 0 has "
                             f"{list(first.classes_)}; declare classes= in partial_fit.")
        if len(m.blocks_) != len(first.blocks_) or tuple(m._columns) != tuple(first._columns):
            raise ValueError(f"model {i} has other columns or blocks than model 0.")
        for a, b in zip(first.blocks_, m.blocks_, strict=True):
            if type(a.family) is not type(b.family) or a.family != b.family:
                raise ValueError(f"columns {list(a.schema.columns)}: model {i} uses "
                                 f"{b.family!r}, model 0 {a.family!r}.")
            if a.schema != b.schema:
                raise ValueError(f"columns {list(a.schema.columns)}: the category levels differ "
                                 f"between model 0 and model {i}; declare them with "
                                 f"Categorical(categories=...).")
    merged = clone(first)
    merged.classes_ = first.classes_
    merged.n_features_in_ = first.n_features_in_
    merged._columns = first._columns
    if hasattr(first, "feature_names_in_"):
        merged.feature_names_in_ = first.feature_names_in_
    merged.class_count_ = sum(m.class_count_ for m in models)
    blocks = []
    for parts in zip(*(m.blocks_ for m in models), strict=True):
        stats = parts[0].stats
        for p in parts[1:]:
            stats = type(p.family).merge_stats(stats, p.stats)
        blocks.append(parts[0]._replace(stats=stats))
    merged.blocks_ = blocks
    return merged
