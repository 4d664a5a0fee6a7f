r"""scikit-learn's fitted attribute names, as read-only views of a fitted ``NaiveBayes``.

A user of ``MultinomialNB``, ``BernoulliNB``, ``CategoricalNB`` or ``GaussianNB`` looks for
``feature_log_prob_``, ``theta_`` and the like. Where a model has one family (one block of
columns), these properties give them with scikit-learn's names and shapes, computed only from the
public fitted state (``classes_``, ``class_count_``, ``blocks_``) and the estimator's settings
(``method``, ``class_alpha``, ``class_prior``). They are views: recomputed at each access, never
stored, so they follow ``set_params(method=...)`` and ``partial_fit``.

Which table a view shows depends on ``method``:

* ``"ml"``, ``"map"``, ``"mean"``: the plug-in estimate that prediction uses,
  ``type(block.family).estimate(prior, stats, method)``;
* ``"bayes"``: the posterior mean (the ``"mean"`` estimate). For Bernoulli and Categorical
  columns it is exactly the predictive that ``"bayes"`` scores with; for Multinomial it is the
  predictive probability of one more word (a whole document is scored by the
  Dirichlet-multinomial); for Gaussian it is the plug-in N(posterior mean of mu, 1 / posterior
  mean of lambda), where ``"bayes"`` scores with a Student-t;
* ``"mcmc"`` (and models built from stated tables, which keep no statistics): no view; the
  attribute raises ``AttributeError`` (``hasattr`` is False), see ``draws_`` or
  ``conditional_tables()``.

Attributes (``K`` classes, ``F`` columns):

* ``class_log_prior_`` (K,): log p(c) as the method uses it (``class_alpha=0`` gives the class
  frequencies, scikit-learn's ``fit_prior=True``);
* ``feature_count_`` (K, F), Multinomial and Bernoulli: the weighted count of each word per class,
  or the weighted number of ones (scikit-learn's definitions; missing values count nothing);
* ``feature_log_prob_``: Multinomial (K, F) log P(word j | c); Bernoulli (K, F) log P(x_j = 1 | c);
  Categorical, as ``CategoricalNB``, a list of F arrays (K, V_j) of log P(x_j = level | c);
* ``category_count_``, Categorical: a list of F arrays (K, V_j) of weighted level counts, the
  levels in the order of ``blocks_[0].schema.levels[j]`` (sorted distinct values, a pandas
  ``category`` column's categories in their order, or the declared ``categories=``;
  ``CategoricalNB`` always uses 0..max, so declare ``categories=[range(m)]`` to
  get its exact shape when a level is absent from the data);
* ``n_categories_`` (F,), Categorical: the number of levels of each column (``CategoricalNB``'s,
  which counts 0..max);
* ``epsilon_``, Gaussian: the variance added to every ``var_``, ``0.0`` (``GaussianNB`` adds
  ``var_smoothing`` times the largest variance; here the prior does the smoothing);
* ``theta_``, ``var_`` (K, F), Gaussian: the plug-in mean and variance (``1 / precision``;
  broadcast over classes under ``pooled=True``). Under ``"ml"`` ``var_`` is the 1/N variance,
  ``GaussianNB(var_smoothing=0)``'s.
"""

from __future__ import annotations

import numpy as np

from ._classes import class_log_prior

#: methods whose view is the plug-in table of that method
_PLUG_IN = {"ml": "ml", "map": "map", "mean": "mean", "bayes": "mean"}


class SklearnViewsMixin:
    """scikit-learn's fitted attribute names on a single-family ``NaiveBayes`` (module docs)."""

    # ------------------------------------------------------------------ helpers
    def _sk_block(self, *families: str):
        """The model's only block; AttributeError when unfitted, with several blocks, or with a
        family other than ``families`` (so ``hasattr`` is False)."""
        fitted = self.__dict__.get("fitted_")
        blocks = None if fitted is None else fitted.blocks
        if blocks is None:
            raise AttributeError(f"this {type(self).__name__} is not fitted yet: the "
                                 "scikit-learn views need a fit.")
        if len(blocks) != 1:
            names = sorted({b.family.name for b in blocks})
            raise AttributeError(
                f"the scikit-learn views exist for a model with one family; this one has "
                f"{len(blocks)} blocks ({', '.join(names)}): read blocks_ or "
                f"conditional_tables() instead.")
        block = blocks[0]
        if families and block.family.sklearn_view not in families:
            raise AttributeError(
                f"this view exists for {' and '.join(f.capitalize() for f in families)} "
                f"models; this model's family is {type(block.family).__name__}.")
        return block

    def _sk_params(self, block):
        """The block's plug-in table for the current method (module docs)."""
        method = self.method
        if method not in _PLUG_IN:
            raise AttributeError(
                f"method={method!r} has no plug-in table, so there is no scikit-learn view; "
                f"see draws_ (NUTS) or use method='mean' or 'bayes'.")
        if block.stats is None:
            raise AttributeError("this model was built from stated tables and keeps no "
                                 "statistics; its parameters are conditional_tables().")
        estimate = _PLUG_IN[method]
        family = type(block.family)
        if estimate != "ml":  # MAP needs alpha >= 1: say so rather than show NaN
            block.family.check_prior(block.prior, block.schema, estimate)
        block.family.check_estimate(block.prior, block.stats, block.schema, self.classes_,
                                    estimate)
        params = family.estimate(block.prior, block.stats, estimate)
        return type(params)(*(np.asarray(leaf, dtype=np.float64) for leaf in params))

    # ------------------------------------------------------------------ class prior
    @property
    def class_log_prior_(self) -> np.ndarray:
        """(n_classes,) log p(c) under the current method (``class_alpha``/``class_prior``).

        Examples
        --------
        ``class_alpha=0``: the class frequencies, as scikit-learn's ``fit_prior=True``:

        >>> import numpy as np, bayesnb as bnb
        >>> from sklearn.naive_bayes import MultinomialNB
        >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 0, 4]])
        >>> y = ["finance", "finance", "sport", "sport"]
        >>> clf = bnb.NaiveBayes(bnb.Multinomial(), class_alpha=0).fit(X, y)
        >>> sk = MultinomialNB().fit(X, y)
        >>> clf.class_log_prior_, sk.class_log_prior_
        (array([-0.69314718, -0.69314718]), array([-0.69314718, -0.69314718]))"""
        if "fitted_" not in self.__dict__:
            raise AttributeError(f"this {type(self).__name__} is not fitted yet.")
        method = self.method
        if method not in _PLUG_IN:
            raise AttributeError(f"method={method!r} has no plug-in class prior.")
        return class_log_prior(self.class_count_, self._class_alpha_array(),
                               self._class_prior_array(), method)

    # ------------------------------------------------------------------ discrete families
    @property
    def feature_count_(self) -> np.ndarray:
        """(n_classes, n_features) weighted word counts (Multinomial) or numbers of ones
        (Bernoulli) per class, as ``MultinomialNB``/``BernoulliNB``.

        Examples
        --------
        >>> import numpy as np, bayesnb as bnb
        >>> from sklearn.naive_bayes import MultinomialNB
        >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 0, 4]])
        >>> y = ["finance", "finance", "sport", "sport"]
        >>> clf = bnb.NaiveBayes(bnb.Multinomial(), class_alpha=0).fit(X, y)
        >>> sk = MultinomialNB().fit(X, y)
        >>> clf.feature_count_
        array([[5., 1., 1.],
               [1., 2., 7.]])
        >>> bool(np.array_equal(clf.feature_count_, sk.feature_count_))
        True"""
        block = self._sk_block("multinomial", "bernoulli")
        if block.stats is None:
            raise AttributeError("this model was built from stated tables and keeps no counts.")
        multinomial = block.family.sklearn_view == "multinomial"
        leaf = block.stats.counts if multinomial else block.stats.ones
        return np.asarray(leaf, dtype=np.float64)

    @property
    def feature_log_prob_(self) -> np.ndarray | list[np.ndarray]:
        """Multinomial: (n_classes, n_features) log P(word | c); Bernoulli: log P(x = 1 | c);
        Categorical: a list of (n_classes, n_levels_j) arrays of log P(level | c).

        Examples
        --------
        >>> import numpy as np, bayesnb as bnb
        >>> from sklearn.naive_bayes import MultinomialNB
        >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 0, 4]])
        >>> y = ["finance", "finance", "sport", "sport"]
        >>> clf = bnb.NaiveBayes(bnb.Multinomial(), class_alpha=0).fit(X, y)
        >>> sk = MultinomialNB().fit(X, y)
        >>> np.exp(clf.feature_log_prob_).round(4)  # finance: (5 + 1) / (7 + 3), ...
        array([[0.6   , 0.2   , 0.2   ],
               [0.1538, 0.2308, 0.6154]])
        >>> bool(np.allclose(clf.feature_log_prob_, sk.feature_log_prob_))
        True"""
        block = self._sk_block("multinomial", "bernoulli", "categorical")
        params = self._sk_params(block)
        name = block.family.sklearn_view
        if name == "multinomial":
            return params.log_prob
        if name == "bernoulli":
            return params.log_p
        return _split_levels(params.log_prob, block)

    @property
    def category_count_(self) -> list[np.ndarray]:
        """Categorical: a list of (n_classes, n_levels_j) arrays of weighted level counts.

        Examples
        --------
        As ``CategoricalNB`` on integer codes (here every level 0..max appears):

        >>> import numpy as np, bayesnb as bnb
        >>> from sklearn.naive_bayes import CategoricalNB
        >>> X, y = np.array([[0, 1], [0, 2], [1, 2], [2, 0]]), ["a", "a", "b", "b"]
        >>> clf = bnb.NaiveBayes(bnb.Categorical(), class_alpha=0).fit(X, y)
        >>> clf.category_count_
        [array([[2., 0., 0.],
               [0., 1., 1.]]), array([[0., 1., 1.],
               [1., 0., 1.]])]
        >>> sk = CategoricalNB().fit(X, y)
        >>> all(np.allclose(a, b) for a, b in zip(clf.feature_log_prob_, sk.feature_log_prob_))
        True"""
        block = self._sk_block("categorical")
        if block.stats is None:
            raise AttributeError("this model was built from stated tables and keeps no counts.")
        return _split_levels(np.asarray(block.stats.counts, dtype=np.float64), block)

    @property
    def n_categories_(self) -> np.ndarray:
        """Categorical: (n_features,) the number of levels of each column, as
        ``CategoricalNB.n_categories_``.

        Examples
        --------
        >>> import numpy as np, bayesnb as bnb
        >>> from sklearn.naive_bayes import CategoricalNB
        >>> X, y = np.array([[0, 1], [0, 2], [1, 2], [2, 0]]), ["a", "a", "b", "b"]
        >>> bnb.NaiveBayes(bnb.Categorical()).fit(X, y).n_categories_
        array([3, 3])
        >>> CategoricalNB().fit(X, y).n_categories_
        array([3, 3])"""
        block = self._sk_block("categorical")
        return np.array([len(levels) for levels in block.schema.levels], dtype=np.int64)

    # ------------------------------------------------------------------ Gaussian
    @property
    def epsilon_(self) -> float:
        """Gaussian: the variance added to every variance for stability, as
        ``GaussianNB.epsilon_``: ``0.0``, since the Normal-Gamma prior (methods ``"map"``,
        ``"mean"``, ``"bayes"``) is what keeps a variance away from zero here, and ``"ml"``
        refuses a zero one.

        Examples
        --------
        >>> import numpy as np, bayesnb as bnb
        >>> from sklearn.naive_bayes import GaussianNB
        >>> X = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 4.0], [4.0, 5.0], [5.0, 4.0], [7.0, 6.0]])
        >>> y = ["a", "a", "a", "b", "b", "b"]
        >>> bnb.NaiveBayes(bnb.Gaussian()).fit(X, y).epsilon_
        0.0
        >>> float(GaussianNB(var_smoothing=0).fit(X, y).epsilon_)
        0.0"""
        self._sk_block("gaussian")
        return 0.0

    @property
    def theta_(self) -> np.ndarray:
        """(n_classes, n_features) Gaussian plug-in means, as ``GaussianNB.theta_``.

        Examples
        --------
        >>> import numpy as np, bayesnb as bnb
        >>> from sklearn.naive_bayes import GaussianNB
        >>> X = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 4.0], [4.0, 5.0], [5.0, 4.0], [7.0, 6.0]])
        >>> y = ["a", "a", "a", "b", "b", "b"]
        >>> clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml").fit(X, y)
        >>> sk = GaussianNB(var_smoothing=0).fit(X, y)
        >>> clf.theta_.round(4)
        array([[2.    , 3.    ],
               [5.3333, 5.    ]])
        >>> bool(np.allclose(clf.theta_, sk.theta_))
        True"""
        return self._sk_params(self._sk_block("gaussian")).mean

    @property
    def var_(self) -> np.ndarray:
        """(n_classes, n_features) Gaussian plug-in variances (1 / precision), as
        ``GaussianNB.var_``; under ``method="ml"`` the 1/N variance.

        Examples
        --------
        >>> import numpy as np, bayesnb as bnb
        >>> from sklearn.naive_bayes import GaussianNB
        >>> X = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 4.0], [4.0, 5.0], [5.0, 4.0], [7.0, 6.0]])
        >>> y = ["a", "a", "a", "b", "b", "b"]
        >>> clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml").fit(X, y)
        >>> sk = GaussianNB(var_smoothing=0).fit(X, y)
        >>> clf.var_.round(4)
        array([[0.6667, 0.6667],
               [1.5556, 0.6667]])
        >>> bool(np.allclose(clf.var_, sk.var_))
        True"""
        precision = self._sk_params(self._sk_block("gaussian")).precision
        with np.errstate(divide="ignore"):
            return 1.0 / precision


def _split_levels(flat: np.ndarray, block) -> list:
    """A (K, L) flat Categorical table as one (K, V_j) array per column."""
    sizes = [len(levels) for levels in block.schema.levels]
    return [np.array(part) for part in np.split(flat, np.cumsum(sizes)[:-1], axis=1)]
