"""Family hyperparameters of the wrong type are refused instead of silently changing the model.

* ``Gaussian(pooled=...)`` takes ``True`` or ``False`` only (a NumPy bool too): ``"False"``
  (a string from a configuration file) used to give the *pooled* model, ``bool("False")``.
* ``Categorical(categories=...)`` takes a list (tuple, array) of levels: a string used to be
  split into its characters (``"SML"`` -> levels S, M, L), and a repeated level is refused
  naming it.

Valid values give the same models as before, checked against independent computations
(scikit-learn's ``GaussianNB`` and ``CategoricalNB``, NumPy's pooled variance).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import CategoricalNB, GaussianNB

import bayesnb as bnb


@pytest.fixture(scope="module")
def measurements():
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], 20)
    X = rng.normal(loc=y[:, None] * [1.0, -0.5], scale=[1.0, 2.0], size=(60, 2))
    return X, y


# ---------------------------------------------------------------------- Gaussian(pooled=)
@pytest.mark.parametrize("value", ["False", "True", "no", 0, 1, 1.0, None, [True]])
def test_gaussian_pooled_must_be_a_bool(measurements, value):
    X, y = measurements
    with pytest.raises(ValueError, match="Gaussian: pooled must be True or False, got "
                                         + re.escape(repr(value))):
        bnb.NaiveBayes(bnb.Gaussian(pooled=value)).fit(X, y)


def test_gaussian_pooled_false_is_gaussian_nb(measurements, x64):
    X, y = measurements
    sk = GaussianNB(var_smoothing=0.0).fit(X, y)
    for flag in (False, np.False_):
        clf = bnb.NaiveBayes(bnb.Gaussian(pooled=flag), method="ml", class_alpha=0).fit(X, y)
        np.testing.assert_allclose(clf.var_, sk.var_, rtol=1e-10)
        np.testing.assert_allclose(clf.predict_proba(X), sk.predict_proba(X), rtol=1e-8)


def test_gaussian_pooled_true_shares_the_1_over_n_variance(measurements, x64):
    X, y = measurements
    means = np.stack([X[y == k].mean(axis=0) for k in range(3)])
    pooled_var = ((X - means[y]) ** 2).sum(axis=0) / len(X)  # sum of M2 over all rows
    for flag in (True, np.True_):
        clf = bnb.NaiveBayes(bnb.Gaussian(pooled=flag), method="ml", class_alpha=0).fit(X, y)
        np.testing.assert_allclose(clf.var_, np.tile(pooled_var, (3, 1)), rtol=1e-10)
        np.testing.assert_allclose(clf.theta_, means, rtol=1e-10)
    # and the unpooled model differs: the flag is read, not ignored
    unpooled = bnb.NaiveBayes(bnb.Gaussian(pooled=False), method="ml", class_alpha=0).fit(X, y)
    assert not np.allclose(unpooled.var_, clf.var_)


def test_saved_pooled_model_loads(measurements, tmp_path):
    X, y = measurements
    clf = bnb.NaiveBayes(bnb.Gaussian(pooled=np.True_)).fit(X, y)
    loaded = bnb.load(bnb.save(clf, tmp_path / "pooled.bnb"))
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))


# ---------------------------------------------------------------------- Categorical(categories=)
@pytest.fixture(scope="module")
def sizes():
    X = pd.DataFrame({"size": ["S", "M", "L", "S", "M", "L", "S", "M", "S", "L"]})
    y = np.array(["a", "b", "a", "b", "a", "b", "a", "a", "b", "b"])
    return X, y


@pytest.mark.parametrize("value, shown", [("SML", "the str 'SML'"), (b"SML", "the bytes b'SML'"),
                                          ({"S": 0, "M": 1}, "the dict"), (3, "the int 3")])
def test_categorical_categories_must_be_a_list_of_levels(sizes, value, shown):
    X, y = sizes
    with pytest.raises(ValueError, match=r"Categorical: categories must be a list .*got "
                                         + re.escape(shown)):
        bnb.NaiveBayes(bnb.Categorical(categories=value)).fit(X, y)


def test_categorical_string_categories_are_not_split_into_characters(sizes):
    """'lowhigh' used to fail only by chance ('h' repeats), with a message about repeats."""
    X = pd.DataFrame({"grade": ["low", "high"] * 4})
    with pytest.raises(ValueError, match=r"got the str 'lowhigh' for the column\(s\) "
                                         r"\['grade'\]"):
        bnb.NaiveBayes(bnb.Categorical(categories="lowhigh")).fit(X, ["a", "b"] * 4)


def test_categorical_repeated_levels_are_refused_naming_them(sizes):
    X, y = sizes
    with pytest.raises(ValueError, match=r"column 'size': declared categories repeat a value "
                                         r"\('S'\); list each level once"):
        bnb.NaiveBayes(bnb.Categorical(categories=["S", "M", "S", "L"])).fit(X, y)
    two = X.assign(colour=["r", "g"] * 5)
    with pytest.raises(ValueError, match=r"column 'colour': declared categories repeat a value "
                                         r"\('g'\)"):
        bnb.NaiveBayes(bnb.Categorical(categories=[["S", "M", "L"], ["r", "g", "g"]])).fit(
            two, y)


@pytest.mark.parametrize("form", [list, tuple, np.array, pd.Index])
def test_categorical_valid_categories_are_categorical_nb(sizes, form, x64):
    """A list, tuple, array or Index of levels declares them in that order; the model is
    scikit-learn's CategoricalNB (mean under alpha, class frequencies as the prior)."""
    X, y = sizes
    levels = ["S", "M", "L"]
    clf = bnb.NaiveBayes(bnb.Categorical(categories=form(levels), alpha=1.0), method="mean",
                         class_alpha=0).fit(X, y)
    assert [str(v) for v in clf.blocks_[0].schema.levels[0]] == levels
    codes = X["size"].map({v: i for i, v in enumerate(levels)}).to_numpy()[:, None]
    sk = CategoricalNB(alpha=1.0).fit(codes, y)
    np.testing.assert_allclose(clf.predict_proba(X), sk.predict_proba(codes), rtol=1e-8)


# ---------------------------------------------------------------------- numeric hyperparameters
@pytest.mark.parametrize("family", [
    lambda v: bnb.Categorical(alpha=v), lambda v: bnb.Bernoulli(beta=v),
    lambda v: bnb.Gaussian(loc=v), lambda v: bnb.Multinomial(alpha=v)],
    ids=["Categorical.alpha", "Bernoulli.beta", "Gaussian.loc", "Multinomial.alpha"])
@pytest.mark.parametrize("value", ["1", True, ["1", "2"]], ids=["text", "bool", "texts"])
def test_numeric_hyperparameters_refuse_text_and_booleans(measurements, family, value):
    """NumPy reads ``"1"`` and ``True`` as 1.0: a setting read from a configuration file as
    text, or a flag passed by mistake, was a prior of strength one. Refused, naming it."""
    X, y = measurements
    X = (X > 0).astype(int)  # 0/1: counts, levels, binary values and numbers alike
    with pytest.raises(ValueError, match=r"must be a number.*got"):
        bnb.NaiveBayes(family(value)).fit(X, y)
    bnb.NaiveBayes(family(np.float32(2.0))).fit(X, y)  # a NumPy number is a number


def test_hyperpriors_need_the_hyperparameters_support_and_shape():
    """Multinomial(alpha=Normal(0, 1)) was taken: half the draws of alpha were negative,
    where the Dirichlet is undefined, and each chain froze on one value (r-hat 2.6, a generic
    warning only). A hyperprior of another shape than the columns failed in JAX broadcasting.
    Both are refused before any sampling, naming the hyperparameter."""
    from numpyro import distributions as dist

    X = pd.DataFrame({"a": [1, 0, 2, 3], "b": [0, 2, 1, 0], "c": [2, 1, 0, 1]})
    y = ["u", "u", "v", "v"]
    mcmc = {"method": "mcmc", "num_warmup": 10, "num_samples": 10, "num_chains": 1,
            "progress_bar": False}
    with pytest.raises(ValueError, match=r"Multinomial: alpha must be positive, but its "
                                         r"hyperprior Normal has support Real\(\)"):
        bnb.NaiveBayes(bnb.Multinomial(alpha=dist.Normal(0.0, 1.0)), **mcmc).fit(X, y)
    with pytest.raises(ValueError, match=r"Poisson: shape's hyperprior .* has shape \(5,\); "
                                         r"give a scalar one, or one of shape \(3,\)"):
        bnb.NaiveBayes(bnb.Poisson(shape=dist.Gamma(2.0, 1.0).expand([5])), **mcmc).fit(X, y)
    # a location may be anywhere: a Normal hyperprior on a Gaussian's loc is its support
    family = bnb.Gaussian(loc=dist.Normal(0.0, 1.0))
    assert family.prior(bnb.families.Schema(columns=("a",))).loc.shape == (1,)


def test_a_per_column_hyperprior_is_labelled_by_column_and_warnings_point_here():
    """A hyperprior of one value per column had ArviZ's dim "poisson.shape_dim_0" (coords 0,
    1, 2): now the block's feature dim with the column names. The short chains' convergence
    warning is attributed to the caller's line (it named estimator.py); a misspelt
    log_likelihood names that argument (it said "quantity")."""
    import warnings

    from numpyro import distributions as dist

    X = pd.DataFrame({"w1": [1, 0, 2, 3], "w2": [0, 2, 1, 0], "w3": [2, 1, 0, 1]})
    y = ["u", "u", "v", "v"]
    clf = bnb.NaiveBayes(bnb.Poisson(shape=dist.Gamma(2.0, 1.0).expand([3])), method="mcmc",
                         num_warmup=20, num_samples=20, num_chains=1, progress_bar=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X, y)
    convergence = [w for w in caught if w.category is bnb.ConvergenceWarning]
    assert convergence and all(w.filename == __file__ for w in convergence)
    shape = clf.to_arviz(prior_draws=None).posterior["poisson.shape"]
    assert shape.dims == ("chain", "draw", "poisson_feature")
    assert shape.coords["poisson_feature"].values.tolist() == ["w1", "w2", "w3"]
    with pytest.raises(ValueError, match="log_likelihood must be 'conditional'"):
        clf.to_arviz(X=X, y=y, log_likelihood="marginal")
