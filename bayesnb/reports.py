"""What a fitted ``NaiveBayes`` reports beyond its predictions: the evidence, posterior draws
(exact or NUTS) and the predictive uncertainty they give, simulation from the NumPyro program,
ArviZ export, and the fitted tables in the style of R's ``naiveBayes``.

:class:`BayesianReports` is a mixin of :class:`bayesnb.NaiveBayes`; it reads the fitted value
(``fitted_``) and the method's scorer, and writes nothing.
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

import jax
import numpy as np
import pandas as pd

from ._classes import class_log_evidence
from ._labelled_draws import check_draw_labels, labelled
from ._labels import PredictiveUncertainty, row_index
from .averaging import check_one_model, relevance
from .averaging import log_evidence as averaged_log_evidence
from .families._base import host_f64
from .fitted import check_conjugate, check_parametric
from .scoring import DrawsScorer

if TYPE_CHECKING:
    from ._typing import ArrayLike, Data, Row
    from .loo import LooResult


class BayesianReports:
    """Evidence, draws, uncertainty, simulation, ArviZ and tables of a fitted model."""

    def log_evidence(self, per_block: bool = False) -> float | pd.Series:
        """Log marginal likelihood log p(y, X) of the training data under the priors.

        With ``per_block=True``, a pandas Series with the class term and each block's term
        log p(X_block | y), which add up to the total. With ``feature_prior``, the evidence
        averaged over all subsets of the features, log sum_S p(S) p(y, X | S) (each block's
        term then sums its columns' log[p Z_class + (1 - p) Z_shared]).

        Examples
        --------
        PlayTennis under the default uniform priors, each term checked with scipy: the labels
        are Dirichlet-categorical, and so is each column within each class.

        >>> import numpy as np, pandas as pd, bayesnb as bnb
        >>> from scipy.special import gammaln
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes().fit(days, play)
        >>> round(clf.log_evidence(), 4)
        -65.3575
        >>> clf.log_evidence(per_block=True).round(4)
        class                                                       -10.3100
        categorical['Outlook', 'Temperature', 'Humidity', 'Wind']   -55.0476
        Name: log_evidence, dtype: float64
        >>> def dirichlet(counts):  # log p(counts) under Dirichlet(1, ..., 1)
        ...     v, n = len(counts), counts.sum()
        ...     return gammaln(v) - gammaln(v + n) + np.sum(gammaln(1 + counts))
        >>> round(float(dirichlet(play.value_counts().to_numpy())), 4)
        -10.31
        >>> tables = [pd.crosstab(play, days[column]).to_numpy() for column in days]
        >>> round(float(sum(dirichlet(row) for table in tables for row in table)), 4)
        -55.0476
        """
        model = self._fitted()
        if model.stated is not None:
            raise ValueError("this model was built from stated tables; it has no data and so "
                             "no evidence.")
        check_conjugate(model, self.priors, "the closed-form evidence",
                        sampled=self.method == "mcmc")
        check_parametric(model, "the evidence")
        parts = {"class": class_log_evidence(model.class_count, self._class_alpha_array(),
                                             self._class_prior_array())}
        if getattr(self, "feature_prior", None) is not None:  # averaged over structures
            return averaged_log_evidence(model, self.feature_prior, parts["class"],
                                         self.priors, per_block)
        # float64 whatever the dtype policy: the log Gamma terms of the class totals nearly
        # cancel (float32 put a Multinomial evidence of counts in the millions 56% off)
        with jax.enable_x64(True):
            for b in model.blocks:
                name = f"{b.family.name}{list(b.schema.columns)}"
                parts[name] = float(type(b.family).log_evidence(host_f64(b.prior),
                                                                host_f64(b.stats)))
        if per_block:
            return pd.Series(parts, name="log_evidence")
        return float(sum(parts.values()))

    @property
    def feature_relevance_(self) -> pd.Series:
        """Posterior probability that each column depends on the class, averaged exactly over
        all subsets of the features (``feature_prior``; see :mod:`bayesnb.averaging`):
        indexed by column name, a Multinomial block by the tuple of its columns.

        Examples
        --------
        Each column's term is its own: with prior 1/2, Outlook's relevance is Z_class /
        (Z_class + Z_shared), its Dirichlet evidence with one table per class against one table
        for both (scipy checks it):

        >>> import numpy as np, pandas as pd, bayesnb as bnb
        >>> from scipy.special import gammaln
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(feature_prior=0.5).fit(days, play)
        >>> clf.feature_relevance_.round(4)
        Outlook        0.6753
        Temperature    0.3662
        Humidity       0.6714
        Wind           0.4719
        Name: feature_relevance, dtype: float64
        >>> def dirichlet(counts):  # log p(counts) under Dirichlet(1, ..., 1)
        ...     return gammaln(len(counts)) - gammaln(len(counts) + counts.sum()) + np.sum(
        ...         gammaln(1 + counts))
        >>> table = pd.crosstab(play, days["Outlook"]).to_numpy()
        >>> z_class, z_shared = sum(map(dirichlet, table)), dirichlet(table.sum(axis=0))
        >>> round(float(1 / (1 + np.exp(z_shared - z_class))), 4)
        0.6753"""
        if getattr(self, "feature_prior", None) is None:
            raise AttributeError("feature_relevance_: set feature_prior (e.g. 0.5) to average "
                                 "over the feature subsets.")
        return relevance(self._fitted(), self.feature_prior, self.priors)

    def sample_posterior(self, num_draws: int = 1000, seed: int = 0, num_chains: int = 1, *,
                         prior: bool = False) -> dict[str, np.ndarray]:
        """I.i.d. draws from the exact conjugate posterior (or the prior), in the same format as
        the NUTS draws ``draws_``: ``{site: array (chains, draws, ...)}``, a ``dict`` that
        also holds the classes, columns and levels its axes were drawn for (``labels``), so
        that another model laid out otherwise refuses them (:meth:`predict_uncertainty`).

        Examples
        --------
        >>> import bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes().fit(days, play)
        >>> draws = clf.sample_posterior(4000, seed=0)
        >>> for site, values in draws.items():  # (chains, draws, classes, ...)
        ...     print(site, values.shape)
        class_probs (1, 4000, 2)
        categorical.Outlook.probs (1, 4000, 2, 3)
        categorical.Temperature.probs (1, 4000, 2, 3)
        categorical.Humidity.probs (1, 4000, 2, 2)
        categorical.Wind.probs (1, 4000, 2, 2)
        >>> draws["class_probs"].mean(axis=(0, 1)).round(2)  # estimates 6 / 16, 10 / 16
        array([0.37, 0.63])"""
        from .inference import exact_draws

        model = self._fitted()
        check_one_model(self.feature_prior, "sample_posterior")
        _check_count("num_draws", num_draws)
        _check_count("num_chains", num_chains)
        if model.stated is not None:
            raise ValueError("this model was built from stated tables (from_tables): it has "
                             "no posterior, so no posterior draws (sample_posterior, to_arviz, "
                             "predict_uncertainty); fit a model on data for those.")
        check_conjugate(model, self.priors, "exact prior draws" if prior else
                        "exact posterior draws", data=not prior, sampled=self.method == "mcmc")
        check_parametric(model, "posterior draws")
        return labelled(model, exact_draws(model, *self._class_setup(), num_draws, seed,
                                           num_chains, prior=prior))

    def _posterior_draws(self, num_draws=1000, seed=0) -> dict:
        """The NUTS draws under ``method="mcmc"``, else ``num_draws`` exact conjugate draws."""
        if self.method == "mcmc":
            return self._scorer().draws
        return self.sample_posterior(num_draws, seed)

    def predict_uncertainty(self, X: Data, *, interval: float = 0.9,
                            draws: Mapping[str, ArrayLike] | None = None, num_draws: int = 1000,
                            seed: int = 0, given_x: bool = False) -> dict[str, np.ndarray]:
        """Posterior predictive classification with its uncertainty, from draws.

        Uses ``draws`` if given, else the NUTS draws under ``method="mcmc"``, else
        ``num_draws`` exact conjugate draws theta_d of p(theta | data). Given ``draws`` are
        read by site and position: the class axis in the order of ``classes_``, a block's
        columns in its order, a Categorical's ``probs`` in this model's level order
        (``conditional_tables``). Draws from :meth:`sample_posterior` or ``draws_`` remember
        the classes, columns and levels they were drawn for, and are refused by a model laid
        out otherwise (other labels, or the same ones in another order); a plain ``dict`` is
        read by position.

        ``proba`` (n, K) is the posterior predictive p(c | x, data) = E[p(x, c | theta)] /
        E[p(x | theta)] over the draws (what ``predict_proba`` gives under ``"bayes"``, up to
        Monte Carlo error). A generative model learns about theta from x itself, so this is
        the mean of p(c | x, theta) over p(theta | data, x), the draws weighted by
        w_d = p(x | theta_d) / sum_d' p(x | theta_d'), not over the draws as they are. The
        other fields describe p(c | x, theta) over the draws, in nats, under one of two
        posteriors:

        * ``given_x=False`` (default): p(theta | data), each draw counting once; how far the
          classifiers the training data allow disagree at x, whatever x is. ``lower`` and
          ``upper`` (n, K) are the central ``interval`` of p(c | x, theta_d); ``entropy``
          (n,) is H[mean_d p(c | x, theta_d)], the entropy of the draws' average classifier,
          which is not ``proba``; ``aleatoric`` mean_d H[p(c | x, theta_d)]; ``mutual_info``
          = ``entropy`` - ``aleatoric`` >= 0. ``proba`` may fall outside the band: for a row
          unlike the training data p(x | theta) favours a few draws the band leaves out.
        * ``given_x=True``: p(theta | data, x), the draws weighted by w_d, the posterior
          ``proba`` averages over, so the fields decompose ``proba`` itself: ``entropy`` is
          H[``proba``], ``aleatoric`` sum_d w_d H[p(c | x, theta_d)] (what the parameters,
          known exactly, would leave), ``mutual_info`` = ``entropy`` - ``aleatoric`` >= 0
          the mutual information of the label and theta given x and the data (the
          epistemic part), ``lower``/``upper`` the weighted quantiles (the inverse of the
          weighted empirical CDF; ``proba`` is the weighted mean, which a skewed spread may
          still leave outside the central band). Adds ``ess`` (n,), Kish's effective number of draws
          1 / sum_d w_d**2: many columns, or a row unlike the training data, put the
          weight on a few draws, and then these fields, and ``proba`` itself, rest on those
          few (more draws, or ``predict_proba`` under ``"bayes"``, the exact ``proba``).

        ``given_x=True`` is the uncertainty of the prediction ``proba`` itself: read it where
        ``ess`` is large. The default answers another question, how much the data leave the
        classifier undetermined at x, and every draw counts there, however unusual x is.
        ``given_x=True`` is computed in float64 whatever the dtype: its weighted quantiles
        step from one draw's value to the next, and a weight rounded in float32 can move a
        bound by a whole step.

        Its ``to_frame()`` gives the same numbers labelled: rows by the index of ``X``
        (0..n-1 for an array), columns ``(quantity, class)`` with the labels of ``classes_``.
        The draws are streamed in chunks (one matmul per chunk for Multinomial, Bernoulli and
        Poisson blocks), so the predictive needs memory for the rows x classes sums and one
        chunk; the band (and ``given_x``) needs every draw of a row and is computed in
        batches of rows. A small call (at most ``bayesnb._draws_host.HOST_DRAW_ENTRIES``
        rows x draws x classes x columns) is computed at once on the host in float64,
        compiling nothing.

        Examples
        --------
        The course notes' day: a 90% band of p(c | x, theta) around the predictive:

        >>> import numpy as np, pandas as pd, bayesnb as bnb
        >>> from scipy.special import entr
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="bayes").fit(days, play)
        >>> x = pd.DataFrame([["Sunny", "Cool", "High", "Strong"]], columns=days.columns)
        >>> u = clf.predict_uncertainty(x, interval=0.9, seed=0)
        >>> sorted(u)
        ['aleatoric', 'entropy', 'lower', 'mutual_info', 'proba', 'upper']
        >>> u["proba"].round(2)  # 1000 draws estimate the exact predictive ...
        array([[0.72, 0.28]])
        >>> clf.predict_proba(x).round(2)  # ... which is
        array([[0.74, 0.26]])
        >>> u["lower"].round(2), u["upper"].round(2)
        (array([[0.2 , 0.04]]), array([[0.96, 0.8 ]]))
        >>> bool(np.allclose(u["entropy"], u["aleatoric"] + u["mutual_info"]))
        True

        Given x, the same draws weighted by p(x | theta): ``entropy`` is ``proba``'s.

        >>> g = clf.predict_uncertainty(x, interval=0.9, seed=0, given_x=True)
        >>> bool(np.allclose(g["proba"], u["proba"]))
        True
        >>> bool(np.allclose(g["entropy"], entr(g["proba"]).sum(axis=1)))
        True
        >>> g["lower"].round(2), g["upper"].round(2)
        (array([[0.25, 0.03]]), array([[0.97, 0.75]]))
        >>> g["ess"].round()  # of the 1000 draws: p(x | theta) varies little over them
        array([644.])
        """
        from .inference import predict_rows

        self._fitted()
        check_one_model(self.feature_prior, "predict_uncertainty")
        real = isinstance(interval, numbers.Real) and not isinstance(interval, bool)
        if not (real and 0 < interval < 1):
            raise ValueError(f"interval must be a number strictly between 0 and 1 (the central "
                             f"credible mass of the band), got {interval!r}.")
        _check_count("num_draws", num_draws)
        if draws is not None:
            _check_draw_sites(self.fitted_, self._class_setup()[1], draws)
        prepared = None  # the NUTS scorer's draws are laid out once, in its ``prepared``
        if draws is None:
            draws = self._posterior_draws(num_draws, seed)
            if self.method == "mcmc":
                prepared = self._scorer().prepared
        if not isinstance(given_x, bool | np.bool_):
            raise ValueError(f"given_x must be True or False, got {given_x!r}.")
        result = predict_rows(self.fitted_, self._class_setup()[1], draws, X,
                              self._unseen_rule(), interval=interval, prepared=prepared,
                              given_x=bool(given_x))
        result.pop("log_joint")
        n = np.shape(result["entropy"])[0]
        return PredictiveUncertainty(result, self.classes_, row_index(X, n))

    def simulate(self, n_rows: int, *, posterior: bool = True, num_draws: int = 1, seed: int = 0,
                 total_count: int | None = None) -> pd.DataFrame:
        """Synthetic (X, y) from the posterior (or, with ``posterior=False``, the prior)
        predictive of the NumPyro model: a DataFrame with this model's columns, category
        values and labels (column ``"y"``), and a ``"draw"`` column; see
        :func:`bayesnb.model.simulate`.

        Examples
        --------
        >>> import bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="bayes").fit(days, play)
        >>> clf.simulate(4, seed=0)
            Outlook Temperature Humidity    Wind    y  draw
        0      Rain         Hot     High    Weak   No     0
        1      Rain        Mild   Normal    Weak   No     0
        2  Overcast         Hot     High  Strong  Yes     0
        3     Sunny        Cool   Normal    Weak  Yes     0"""
        from .model import simulate

        self._fitted()
        check_one_model(self.feature_prior, "simulate")
        _check_count("n_rows", n_rows)
        _check_count("num_draws", num_draws)
        if total_count is not None:
            _check_count("total_count", total_count)
        return simulate(self, n_rows, posterior=posterior, num_draws=num_draws, seed=seed,
                        total_count=total_count)

    def mcmc_summary(self) -> pd.DataFrame:
        """ArviZ summary of the NUTS draws: mean, sd, HDI, MCSE, ESS (bulk, tail), r-hat.

        One row per parameter entry, named by site and coordinates (see :meth:`to_arviz`),
        e.g. ``class_probs[No]``, ``categorical.Class.probs[No, 1st]``,
        ``gaussian.mean[setosa, sepal_length]``.

        Examples
        --------
        One short chain, enough to show the table (far too short to judge convergence, so
        its ``ConvergenceWarning`` is silenced here; the defaults run 4 chains of 1000):

        >>> import warnings
        >>> import numpy as np, bayesnb as bnb
        >>> from bayesnb.inference import ConvergenceWarning
        >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
        >>> clf = bnb.NaiveBayes(bnb.Bernoulli(), method="mcmc", num_warmup=50, num_samples=50,
        ...                      num_chains=1, progress_bar=False)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", ConvergenceWarning)
        ...     clf = clf.fit(X, ["spam", "spam", "ham", "ham"])
        >>> table = clf.mcmc_summary()
        >>> for parameter in table.index:
        ...     print(parameter)
        bernoulli.theta[ham, 0]
        bernoulli.theta[ham, 1]
        bernoulli.theta[spam, 0]
        bernoulli.theta[spam, 1]
        class_probs[ham]
        class_probs[spam]
        >>> table.columns.tolist()
        ['mean', 'sd', 'hdi_3%', 'hdi_97%', 'mcse_mean', 'mcse_sd', 'ess_bulk', 'ess_tail', 'r_hat']
        """
        from .inference import diagnostics

        nuts = self._nuts()
        return diagnostics(self.fitted_, nuts.draws, nuts.sample_stats)

    def to_arviz(self, draws: Mapping[str, ArrayLike] | None = None, *,
                 prior_draws: int | None = 500, seed: int = 0, backend: ModuleType | None = None,
                 predictive_rows: int | None = None, X: Data | None = None,
                 y: ArrayLike | None = None, log_likelihood: str = "conditional",
                 sample_weight: ArrayLike | None = None) -> Any:
        """Export draws to ArviZ (``InferenceData`` with arviz 0.x, ``DataTree`` with 1.x).

        Groups: posterior, sample_stats (NUTS), prior, observed_data (the class counts) and,
        with ``predictive_rows``, posterior_predictive and prior_predictive. Variables are the
        sites of the NumPyro program (named in ``bayesnb.model``), with named dims and coords:

        * ``class_probs``, dims ``(class,)``;
        * ``"{block}.{parameter}"`` (``bernoulli.theta``, ``gaussian.mean``, ...), dims
          ``(class, "{block}_feature")``, the feature coordinate holding the column names (a
          parameter the classes share, such as ``Gaussian(pooled=True)``'s ``precision``:
          ``("{block}_feature",)``);
        * ``"categorical.{column}.probs"``, dims ``(class, "{column}_level")``, the level
          coordinate holding the column's levels.

        So ``az.summary`` rows read ``categorical.Class.probs[No, 1st]``, plot titles name the
        column, and ``az.plot_trace(idata, var_names=["categorical.Class.probs"],
        legend=True)`` labels each (class, level) line.

        Parameters
        ----------
        draws : dict, optional
            ``{site: array (chains, draws, ...)}`` (e.g. from :meth:`sample_posterior`;
            read by position, and refused if drawn for other classes, columns or levels, as
            in :meth:`predict_uncertainty`); default: the NUTS draws under
            ``method="mcmc"`` (with their sample_stats), else 1000 exact conjugate draws.
        prior_draws : int or None, default=500
            Number of i.i.d. draws from the prior for the ``prior`` group (conjugate models;
            ``None``, ``0`` or a model with replacement priors or hyperpriors: no prior
            group).
        seed : int, default=0
            Seed of the exact, prior and predictive draws.
        backend : module, optional
            The module whose ``from_dict`` builds the result; ``arviz_base`` builds an arviz
            1.x ``DataTree`` on any Python.
        predictive_rows : int, optional
            Add ``posterior_predictive`` and ``prior_predictive`` groups (``None`` or ``0``:
            none): ``predictive_rows``
            synthetic rows per draw, simulated from the NumPyro program by
            ``numpyro.infer.Predictive`` (as :meth:`simulate`) for up to 200 draws (one chain)
            of the model's own posterior (NUTS under ``method="mcmc"``, else exact; not
            ``draws``) and of its prior. Variables are encoded: ``y`` the label codes (indices
            into ``classes_``), ``"categorical.{column}.x"`` the level codes (indices into the
            column's levels), dims ``(row,)``; ``"{block}.x"`` the values of the block's
            columns, dims ``(row, "{block}_feature")``. ``None`` (default): no predictive
            groups.
        X, y : array-like, optional
            The training rows: add a ``log_likelihood`` group for ``az.loo``, ``az.waic`` and
            ``az.compare``, one variable with dims ``(chain, draw, row)`` holding per draw
            log p(y_i | x_i, theta) (``log_likelihood="conditional"``, the default: the
            log of ``predict_proba`` at the true label under theta) or
            log p(x_i, y_i | theta) (``"joint"``, the generative model's likelihood of row i).
            For a fit without ``sample_weight``, ``az.loo`` then estimates what
            ``loo(X, y, quantity=...)`` computes exactly. The variable is named
            ``"y_given_x"`` or ``"xy"``, whatever the parameters are called. Every label
            must be present: after a semi-supervised fit pass the labelled rows (the
            unlabeled ones stay in the posterior).
        sample_weight : array-like of shape (n,), optional
            The fit's weights. PSIS-LOO removes from the posterior the factor the group holds
            for row i. Without weights that factor is one copy of the row: on a weighted fit
            ``az.loo`` then leaves out one unit of each row's weight (for an integer weight,
            one of the row's copies: exact LOO of the data with every row repeated w_i times;
            for a weight below 1, more than the row holds), not the whole row as
            ``loo(X, y, sample_weight)`` does. With ``sample_weight`` the group holds
            w_i log p(. | theta), the row's factor in the weighted likelihood: ``az.loo``
            leaves each row out with all its weight, as ``loo`` does, and scores the whole
            weighted row, log E[p(. | theta)^w_i] over the posterior without that factor (for
            the joint, the evidence ratio log p(X, y) - log p(X, y without row i); for the
            conditional, the labels of the row's copies given their x, which stays in);
            ``loo`` scores one copy, so the two agree when every weight is 1. The user guide
            (Explanations and exact leave-one-out) gets ``loo``'s values from these draws.
        log_likelihood : {"conditional", "joint"}, default="conditional"
            Which per-row likelihood the ``log_likelihood`` group holds. Compare models with
            different columns (``az.compare``) on the conditional one: the same labels
            given the same rows, whatever columns a model reads. The joint one includes
            p(x_i | theta) of each model's own columns, so models with different columns would
            be scored on different data (a model with fewer columns has a larger density of
            less data and would look better).

        Examples
        --------
        Exact conjugate draws (``method="bayes"``), with the levels as coordinates:

        >>> import bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="bayes").fit(days, play)
        >>> idata = clf.to_arviz(seed=0)
        >>> outlook = idata.posterior["categorical.Outlook.probs"]
        >>> outlook.dims
        ('chain', 'draw', 'class', 'Outlook_level')
        >>> outlook.mean(("chain", "draw")).round(2).to_pandas()  # closed form: 1/8, 3/8, 1/2
        Outlook_level  Overcast  Rain  Sunny
        class
        No                 0.12  0.39   0.49
        Yes                0.43  0.33   0.25
        """
        from .inference import to_inference_data
        from .model import simulate_sites

        model = self._fitted()
        check_one_model(self.feature_prior, "to_arviz")
        for name, value in (("prior_draws", prior_draws), ("predictive_rows", predictive_rows)):
            if not (value is None or isinstance(value, numbers.Integral) and value == 0):
                _check_count(name, value)  # None or 0: no such group
        sample_stats = None
        if draws is None:
            draws = self._posterior_draws(1000, seed)
            sample_stats = self.fitted_.nuts.sample_stats if self.method == "mcmc" else None
        else:
            _check_draw_sites(model, self._class_setup()[1], draws)
        conjugate = not self.priors and not any(b.family.hyperpriors() or b.family.pooling_prior()
                                                for b in model.blocks)
        prior = (self.sample_posterior(prior_draws, seed + 1, prior=True)
                 if prior_draws and conjugate else None)
        predictive = None
        if predictive_rows:
            n = min(200, next(iter(draws.values())).shape[1])
            predictive = {group: simulate_sites(self, predictive_rows, posterior=posterior,
                                                num_draws=n, seed=seed)
                          for group, posterior in (("posterior_predictive", True),
                                                   ("prior_predictive", False))}
        log_lik = None
        if sample_weight is not None and X is None:
            raise ValueError("sample_weight weights the rows of the log_likelihood group: "
                             "pass X and y too.")
        if X is not None or y is not None:  # per-row, per-draw log likelihoods (for LOO)
            from .loo import draws_log_likelihood

            if X is None or y is None:
                raise ValueError("the log_likelihood group needs both X and y.")
            if log_likelihood not in ("conditional", "joint"):
                raise ValueError(f"log_likelihood must be 'conditional' (log p(y | x, theta)) "
                                 f"or 'joint' (log p(x, y | theta)), got {log_likelihood!r}.")
            values = draws_log_likelihood(model, self._class_setup()[1], draws, X, y,
                                          log_likelihood, sample_weight)
            log_lik = {"xy" if log_likelihood == "joint" else "y_given_x": values}
        return to_inference_data(self.fitted_, draws, sample_stats, prior, backend=backend,
                                 predictive=predictive, log_likelihood=log_lik)

    # ------------------------------------------------------------------ explanations, LOO
    def explain(self, x: Row, *, log: bool = False) -> pd.DataFrame:
        """The factors of the prediction of one row ``x``: a DataFrame with the classes as
        columns and, as index, ``"prior"`` p(c), each column's p(x_j | c) (a density for a
        continuous column; a Multinomial block is one entry keyed by the tuple of its
        columns), ``"joint"`` p(x, c) (their product) and ``"posterior"`` p(c | x). Under
        ``method="bayes"`` the factors are the exact predictives. ``log=True`` gives natural
        logs. A missing value's factor is 1 (log 0); ``attrs["missing"]`` lists those columns.
        ``method="mcmc"`` is refused (its draw average does not factor by column). See
        :mod:`bayesnb.explain`.

        Examples
        --------
        The course notes' day x' = (Sunny, Cool, High, Strong): p(x', Yes) = 9/14 x 2/9 x 3/9 x
        3/9 x 3/9.

        >>> import pandas as pd, bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="ml").fit(days, play)
        >>> x = pd.Series({"Outlook": "Sunny", "Temperature": "Cool", "Humidity": "High",
        ...                "Wind": "Strong"})
        >>> clf.explain(x).round(4)
        class            No     Yes
        factor
        prior        0.3571  0.6429
        Outlook      0.6000  0.2222
        Temperature  0.2000  0.3333
        Humidity     0.8000  0.3333
        Wind         0.6000  0.3333
        joint        0.0206  0.0053
        posterior    0.7954  0.2046"""
        from .explain import explain_row, refuse_draws

        if self.method == "mcmc":
            refuse_draws()
        return explain_row(self._fitted(), self._scorer(), x, log=log)

    def weight_of_evidence(self, x: Row, a: Hashable, b: Hashable, *,
                           unit: str = "nats") -> pd.Series:
        """Per column of one row ``x``, the weight of evidence for class ``a`` against ``b``,
        log p(x_j | a) - log p(x_j | b), between ``"prior"`` (the prior log odds) and
        ``"posterior"`` (the posterior log odds, the sum of everything above it); ``unit``
        "nats", "bits" or "decibans".

        Examples
        --------
        >>> import numpy as np, pandas as pd, bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="ml").fit(days, play)
        >>> x = pd.Series({"Outlook": "Sunny", "Temperature": "Cool", "Humidity": "High",
        ...                "Wind": "Strong"})
        >>> clf.weight_of_evidence(x, "No", "Yes").round(4)
        factor
        prior         -0.5878
        Outlook        0.9933
        Temperature   -0.5108
        Humidity       0.8755
        Wind           0.5878
        posterior      1.3579
        Name: weight of evidence for 'No' against 'Yes' (nats), dtype: float64
        >>> round(float(np.log(3 / 5) - np.log(2 / 9)), 4)  # Outlook: p(Sunny | No) = 3/5
        0.9933"""
        from .explain import refuse_draws, weight_of_evidence

        if self.method == "mcmc":
            refuse_draws()
        return weight_of_evidence(self._fitted(), self._scorer(), x, a, b, unit=unit)

    def loo(self, X: Data, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
            quantity: str = "conditional") -> LooResult:
        """Exact leave-one-out on the training rows, without refitting: per row
        log p(y_i | x_i, D without row i) (``quantity="joint"``: log p(x_i, y_i | D without
        row i)) under the current closed-form method, their sum ``elpd_loo`` and its standard
        error ``se`` (as ``az.loo`` reports them). ``X, y`` and ``sample_weight`` must be
        those of the fit (checked against the model's statistics). Costs about one
        prediction. ``method="mcmc"``: use ``az.loo(clf.to_arviz(X=X, y=y))`` (a weighted
        row is then left out otherwise: see :meth:`to_arviz`'s ``sample_weight``). See
        :mod:`bayesnb.loo`.

        Examples
        --------
        Checked against 14 refits, each without one day:

        >>> import numpy as np, bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> from sklearn.base import clone
        >>> clf = bnb.NaiveBayes(method="mean").fit(days, play)
        >>> result = clf.loo(days, play)
        >>> round(result.elpd_loo, 4), round(result.se, 4)
        (-10.2993, 2.3986)
        >>> codes = np.searchsorted(clf.classes_, play)
        >>> refits = [clone(clf).fit(days.drop(index=i), play.drop(index=i)) for i in days.index]
        >>> round(float(sum(np.log(m.predict_proba(days.loc[[i]])[0, codes[i]])
        ...                 for i, m in zip(days.index, refits))), 4)
        -10.2993"""
        from .loo import leave_one_out

        model = self._fitted()
        check_one_model(self.feature_prior, "exact leave-one-out")
        if self.method == "mcmc":
            raise ValueError("exact leave-one-out is for the closed-form methods ('ml', 'map', "
                             "'mean', 'bayes'); for method='mcmc' use PSIS-LOO: "
                             "az.loo(clf.to_arviz(X=X, y=y)).")
        self._scorer()  # the method's checks (undefined full-data estimates, priors)
        return leave_one_out(model, self.method, self._class_alpha_array(),
                             self._class_prior_array(),
                             X, y, sample_weight, quantity)

    @property
    def posterior_(self) -> list[NamedTuple]:
        """Conjugate posterior hyperparameters per block (whatever ``method`` is), as the
        families' NamedTuples of arrays; :meth:`posterior_tables` labels them.

        Raises
        ------
        ValueError
            For a model built from stated tables (:func:`bayesnb.from_tables`), which has no
            posterior, and where a prior has no closed-form posterior.

        Examples
        --------
        Beta(1 + ones, 1 + zeros) per class (rows ham, spam) and column:

        >>> import numpy as np, bayesnb as bnb
        >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
        >>> clf = bnb.NaiveBayes(bnb.Bernoulli()).fit(X, ["spam", "spam", "ham", "ham"])
        >>> (posterior,) = clf.posterior_
        >>> np.asarray(posterior.alpha), np.asarray(posterior.beta)
        (array([[1., 2.],
               [3., 2.]]), array([[3., 2.],
               [1., 2.]]))"""
        model = self._fitted()
        if model.stated is not None:  # no statistics: the posterior would read None
            raise ValueError("this model was built from stated tables (from_tables): it has "
                             "no posterior, so no posterior hyperparameters (posterior_, "
                             "posterior_tables); its parameters are conditional_tables().")
        check_conjugate(model, self.priors, "the conjugate posterior",
                        sampled=self.method == "mcmc")
        return [type(b.family).posterior(b.prior, b.stats) for b in model.blocks]

    def posterior_tables(self) -> dict:
        """:attr:`posterior_` labelled: per column, the conjugate posterior's hyperparameters
        as a DataFrame indexed by class (the same numbers, float64).

        Keys are as in :meth:`conditional_tables`: a column's name (its position when the fit's
        ``X`` had no names), a Multinomial block the tuple of its columns. A column's frame has
        one column per hyperparameter (Beta's ``alpha``, ``beta``; the Normal-gamma's ``loc``,
        ``kappa``, ``shape``, ``rate``; the Gamma's ``shape``, ``rate``); a Categorical column's
        and a Multinomial block's have two column levels, ``(hyperparameter, level)`` and
        ``(hyperparameter, column)``, so ``tables["Class"]["alpha"]`` is classes x levels.
        Entries of ``posterior_`` that are not per class (a Categorical's level layout, the
        Gaussian's ``pooled`` flag) are left out.

        Examples
        --------
        Beta(1 + ones, 1 + zeros) per class, the column ``free`` by name:

        >>> import pandas as pd, bayesnb as bnb
        >>> X = pd.DataFrame({"free": [1, 1, 0, 0], "win": [0, 1, 1, 0]})
        >>> clf = bnb.NaiveBayes(bnb.Bernoulli()).fit(X, ["spam", "spam", "ham", "ham"])
        >>> clf.posterior_tables()["free"]
        hyperparameter  alpha  beta
        class
        ham               1.0   3.0
        spam              3.0   1.0
        """
        classes = pd.Index(self.classes_, name="class")
        out = {}
        for block, post in zip(self.blocks_, self.posterior_, strict=True):
            out.update(_posterior_frames(block, post, classes))
        return out

    @property
    def class_prior_(self) -> pd.Series:
        """p(c) used by the current method, indexed by class (under ``method="mcmc"``: the
        fixed ``class_prior``, else the mean of the NUTS draws of ``class_probs``).

        Examples
        --------
        >>> import bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="mean").fit(days, play)
        >>> clf.class_prior_  # (5 + 1) / (14 + 2), (9 + 1) / 16
        No     0.375
        Yes    0.625
        Name: prior, dtype: float64
        >>> clf.set_params(method="ml").class_prior_.round(4)  # 5 / 14, 9 / 14
        No     0.3571
        Yes    0.6429
        Name: prior, dtype: float64"""
        scorer = self._scorer()
        if isinstance(scorer, DrawsScorer):
            prior = (scorer.class_prior if scorer.class_prior is not None
                     else np.asarray(scorer.draws["class_probs"]).mean(axis=(0, 1)))
            return pd.Series(np.asarray(prior, dtype=np.float64), index=self.classes_,
                             name="prior")
        return pd.Series(np.exp(np.asarray(scorer.log_prior, dtype=np.float64)),
                         index=self.classes_, name="prior")

    def conditional_tables(self) -> dict[Hashable, pd.DataFrame]:
        """Per column, the fitted conditional distribution as a tidy DataFrame (rows: classes),
        like R's ``naiveBayes`` print-out: level probabilities for Categorical and Bernoulli,
        mean and sd for Gaussian, rate for Poisson, word probabilities for a Multinomial block
        (keyed by the tuple of its columns). Under ``method="bayes"`` the posterior means are
        shown (for Bernoulli and Categorical they are the exact predictive); under
        ``method="mcmc"`` the posterior means in closed form, which the NUTS draws estimate
        (``mcmc_summary()`` summarises the draws themselves).

        Examples
        --------
        >>> import bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> clf = bnb.NaiveBayes(method="ml").fit(days, play)
        >>> tables = clf.conditional_tables()
        >>> list(tables)
        ['Outlook', 'Temperature', 'Humidity', 'Wind']
        >>> tables["Outlook"].round(4)  # e.g. p(Sunny | Yes) = 2/9
        Outlook  Overcast    Rain   Sunny
        class
        No         0.0000  0.4000  0.6000
        Yes        0.4444  0.3333  0.2222"""
        from .explain import entries

        tables, exact = self._shown_tables()
        out = {}
        for b, table in zip(self.blocks_, tables, strict=True):
            params = type(b.family).estimate(b.prior, b.stats, "mean") if exact else table
            tables = type(b.family).describe(params, b.schema, self.classes_)
            out.update({k: v.astype(np.float64) for k, v in tables.items()})
        rank = {key: i for i, (key, _) in enumerate(entries(self._fitted()))}  # data's order
        return dict(sorted(out.items(), key=lambda item: rank.get(item[0], len(rank))))

    def _shown_tables(self) -> tuple[list, bool]:
        """``(tables, exact)``: per block the current method's plug-in tables, or with
        ``exact`` the posterior means in closed form are shown instead (``"bayes"``, and
        ``"mcmc"``, whose draws they are the mean of)."""
        scorer = self._scorer()
        if isinstance(scorer, DrawsScorer):
            _check_closed_form_means(self.fitted_, self.priors)
            return [None] * len(self.blocks_), True
        return scorer.tables, scorer.exact

    def summary(self, X: Data | None = None, y: ArrayLike | None = None) -> str:
        """A text print-out in the style of R's e1071 ``naiveBayes``.

        Parameters
        ----------
        X, y : array-like, optional
            The training rows and labels. With them, under ``method`` "ml", "map" or "mean",
            the print-out also gives the log-likelihood at the fitted parameters,
            :math:`\\sum_i \\log p(x_i, y_i \\mid \\hat\\theta)` (normalising constants
            included; what a statistics course calls the ML log-likelihood under "ml").

        Returns
        -------
        str
            Class priors, conditional tables, and each summary number labelled with what it
            is: the log evidence is the log marginal likelihood :math:`\\log p(X, y)` under
            the priors, the parameters integrated out (whatever ``method`` is), not the
            log-likelihood at the fitted parameters.

        Examples
        --------
        >>> import bayesnb as bnb
        >>> from bayesnb.datasets import load_playtennis
        >>> days, play = load_playtennis()
        >>> outlook = days[["Outlook"]]
        >>> print(bnb.NaiveBayes(method="ml").fit(outlook, play).summary(outlook, play))
        Naive Bayes classifier (method='ml')
        <BLANKLINE>
        A-priori probabilities:
              No      Yes
        0.357143 0.642857
        <BLANKLINE>
        Conditional probabilities:
          Outlook
        Outlook  Overcast      Rain     Sunny
        class
        No       0.000000  0.400000  0.600000
        Yes      0.444444  0.333333  0.222222
        <BLANKLINE>
        log evidence: -26.803260 (log marginal likelihood log p(X, y) under the priors, ...)
        log-likelihood at the fitted parameters (method='ml'): -22.037363 (sum over rows of ...)
        <BLANKLINE>
        Per-row working: clf.explain(x) lists the factors ...
        """
        header = ("Naive Bayes classifier (stated tables, from_tables: every method predicts "
                  "with them)" if self._fitted().stated is not None else
                  f"Naive Bayes classifier (method={self.method!r})")
        lines = [header, "", "A-priori probabilities:",
                 self.class_prior_.to_frame().T.to_string(index=False), "",
                 "Conditional probabilities:"]
        scorer = self._scorer()
        closed = None
        try:
            tables = self.conditional_tables()
        except ValueError as err:  # an MCMC fit whose posterior has no closed-form means
            if not isinstance(scorer, DrawsScorer):
                raise
            tables, closed = {}, err
        if isinstance(scorer, DrawsScorer):  # two sources: say which is which
            source = ("the fixed class_prior" if scorer.class_prior is not None
                      else "the mean of the NUTS draws")
            tables_are = ("" if closed is not None else ", the conditional ones the posterior "
                          "means in closed form, which the draws estimate")
            lines[1:1] = [f"(method='mcmc': the a-priori probabilities are {source}"
                          f"{tables_are}; clf.mcmc_summary() summarises the draws)"]
        if closed is not None:
            lines += [f"  none in closed form ({closed})", ""]
        for col, frame in tables.items():
            lines += [f"  {col}", frame.to_string(), ""]
        if getattr(self, "feature_prior", None) is not None:
            lines += ["Posterior probability that each column depends on the class "
                      "(feature_prior; the tables above are the class-specific parameters):",
                      self.feature_relevance_.to_string(), ""]
        try:
            lines.append(f"log evidence: {self.log_evidence():.6f} (log marginal likelihood "
                         f"log p(X, y) under the priors, the parameters integrated out; the "
                         f"same under every method)")
        except ValueError as err:
            lines.append(f"log evidence: undefined ({err})")
        lines.append(_fitted_log_likelihood_line(self, X, y))
        lines += ["", "Per-row working: clf.explain(x) lists the factors p(c), p(x_j | c), "
                  "p(x, c) and p(c | x) of one prediction (bayesnb explain MODEL ROWS.csv); "
                  "clf.weight_of_evidence(x, a, b) each column's log odds for a against b."]
        return "\n".join(lines)


def _check_count(name: str, value) -> None:
    """Refuse a count that is not a positive integer, naming the argument: NumPy and NumPyro
    would otherwise fail with their own messages (a broadcast shape, a plate's assertion)."""
    if not (isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)
            and value > 0):
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")


def _check_draw_sites(model, class_prior, draws) -> None:
    """Refuse ``draws`` that lack a site the prediction reads (``class_probs`` unless the class
    probabilities are fixed, and every block parameter), naming the missing and expected ones:
    otherwise the first absent site surfaces as a bare ``KeyError`` deep in the scoring."""
    from .model import parameter_sites

    if not isinstance(draws, Mapping):
        raise ValueError(f"draws must be a mapping {{site: array (chains, draws, ...)}}, got "
                         f"{type(draws).__name__}.")
    check_draw_labels(model, draws)
    expected = ((["class_probs"] if class_prior is None else [])
                + list(parameter_sites(model.blocks)))
    missing = [site for site in expected if site not in draws]
    if missing:
        raise ValueError(f"draws lacks the site(s) {missing}; predicting from draws needs "
                         f"{expected} (e.g. from sample_posterior or draws_).")
    lead = None
    groups: list = []  # [support, shape, sites]: each group checked in one call
    for site, (shape, support) in _draw_layout(model, class_prior).items():
        got = np.shape(draws[site])
        if len(got) < 2 or got[2:] != shape or got[:2] != (lead or got[:2]):
            same = f", (chains, draws) {lead} as the sites before it" if lead else ""
            raise ValueError(f"draws[{site!r}] has shape {got}; this model's {site!r} is laid "
                             f"out (chains, draws) + {shape}{same}.")
        lead = got[:2]
        if support is not None:  # constraints compare equal but do not all hash
            group = next((g for g in groups if g[0] == support and g[1] == shape), None)
            if group is None:
                groups.append(group := [support, shape, []])
            group[2].append(site)
    for support, _, sites in groups:
        _check_support(support, sites, draws)


def _check_support(support, sites: list, draws) -> None:
    """Refuse a draw outside ``support`` (a NumPyro constraint) among ``sites`` of one shape,
    stacked: one check for the group, however many sites (a Categorical's column each)."""
    values = np.stack([np.asarray(draws[site], dtype=np.float64) for site in sites])
    with jax.enable_x64(True):  # a simplex's sum checked to 1e-6: float64's, not float32
        inside = np.asarray(support.check(jax.numpy.asarray(values)), bool)
    if support.event_dim == 0:  # a boundary value (a gamma draw underflowing to 0)
        inside = inside | (values == 0)
    if not inside.all():
        at = np.unravel_index(int(np.argmin(inside)), inside.shape)
        raise ValueError(f"draws[{sites[at[0]]!r}] holds a value outside the parameter's "
                         f"support ({support}) at index {tuple(map(int, at[1:]))}.")


def _draw_layout(model, class_prior) -> dict:
    """Per site a model's draws hold: its shape after (chains, draws), from the family's
    declared ``param_dims``, and its support (a NumPyro constraint; None for a model built
    from tables, which has no posterior to read it from)."""
    import numpyro.distributions as dist

    from ._joined_blocks import joining_key
    from .model import parameter_sites

    k = len(model.classes)
    layout = {} if class_prior is not None else {
        "class_probs": ((k,), dist.constraints.simplex)}
    supports: dict = {}
    dims: dict = {}  # per block: a dict over its sites, built once (thousands of columns)
    joined: dict = {}  # blocks that join (one family, one scalar prior) share their supports
    for site, (i, key) in parameter_sites(model.blocks).items():
        block = model.blocks[i]
        family = type(block.family)
        if i not in supports:
            group = joining_key(block)
            if group is not None and group in joined:
                supports[i] = joined[group]
            else:
                supports[i] = {} if block.stats is None else {
                    name: d.support for name, d in family.posterior_distributions(
                        family.posterior(host_f64(block.prior), host_f64(block.stats))).items()}
                if group is not None:
                    joined[group] = supports[i]
            dims[i] = block.family.param_dims(block.prior, block.schema)
        head = key.partition(".")[0]
        size = {"class": k, "feature": len(block.schema.columns),
                "level": len(block.schema.levels[int(head)]) if head.isdigit() else None}
        layout[site] = tuple(size[d] for d in dims[i][key]), supports[i].get(key)
    return layout


def _fitted_log_likelihood_line(clf, X, y) -> str:
    """The summary's line on the log-likelihood at the fitted parameters: its value from the
    training rows, or how to get it (the model keeps statistics, not rows)."""
    stated = clf.fitted_.stated is not None  # every method predicts with the stated tables
    label = ("log-likelihood at the stated tables (from_tables)" if stated else
             f"log-likelihood at the fitted parameters (method={clf.method!r})")
    if not stated and clf.method not in ("ml", "map", "mean"):
        return (f"{label}: none (method={clf.method!r} predicts with the parameters "
                f"integrated out; set_params(method='ml') for the ML fit's)")
    if X is None or y is None:
        rows = "rows and their labels" if stated else "the training rows"
        return f"{label}: pass {rows}, summary(X, y), to print it"
    from ._data import labels_to_codes

    codes = labels_to_codes(y, clf.classes_)
    joint = np.asarray(clf.predict_joint_log_proba(X), dtype=np.float64)
    value = float(joint[np.arange(len(codes)), codes].sum())
    return f"{label}: {value:.6f} (sum over rows of log p(x_i, y_i | theta_hat))"


def _posterior_frames(block, post, classes: pd.Index) -> dict:
    """One block's posterior hyperparameters (its (K, F) or (K, levels) leaves) as
    ``{key: DataFrame}``, keyed and labelled as ``NaiveBayes.posterior_tables`` says."""
    columns = list(block.schema.columns)
    leaves = {name: np.asarray(leaf, dtype=np.float64)
              for name, leaf in zip(post._fields, post, strict=True)
              if np.ndim(leaf) == 2 and np.shape(leaf)[0] == len(classes)}

    def wide(parts: dict, inner: list, level: str) -> pd.DataFrame:
        labels = pd.MultiIndex.from_product([list(parts), inner],
                                            names=["hyperparameter", level])
        return pd.DataFrame(np.hstack(list(parts.values())), index=classes, columns=labels)

    if block.family.joint_columns:  # one random vector: one entry, a column per word
        return {tuple(columns): wide(leaves, columns, "column")}
    if block.schema.levels:  # Categorical: each column's levels are a slice of the flat axis
        out, start = {}, 0
        for col, levels in zip(columns, block.schema.levels, strict=True):
            stop = start + len(levels)
            out[col] = wide({k: v[:, start:stop] for k, v in leaves.items()}, list(levels),
                            "level")
            start = stop
        return out
    return {col: pd.DataFrame({k: v[:, j] for k, v in leaves.items()}, index=classes)
            .rename_axis(columns="hyperparameter") for j, col in enumerate(columns)}


def _check_closed_form_means(model, priors) -> None:
    """The conditional tables of an MCMC fit are closed-form posterior means: refuse them
    where a replacement prior, a hyperprior or pooling leaves none, pointing to the draws."""
    if model.unlabeled is not None:
        raise ValueError(f"conditional tables under method='mcmc' with {len(model.unlabeled[0])} "
                         f"unlabeled rows: their closed-form means would read the labelled "
                         f"rows alone, which the draws do not; summarise the draws with "
                         f"clf.mcmc_summary() (or az.summary(clf.to_arviz())).")
    hyper = [b for b in model.blocks if b.family.hyperpriors() or b.family.pooling_prior()]
    if priors or hyper:
        what = (f"priors={sorted(priors)}" if priors else
                f"the {'hyperprior' if hyper[0].family.hyperpriors() else 'pooled prior'} "
                f"of {type(hyper[0].family).__name__} columns "
                f"{list(hyper[0].schema.columns)[:5]}")
        raise ValueError(f"conditional tables under method='mcmc' with {what}: the posterior "
                         f"has no closed-form mean; summarise the draws with "
                         f"clf.mcmc_summary() (or az.summary(clf.to_arviz())).")
