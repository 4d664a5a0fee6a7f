"""Agreement with scikit-learn's naive Bayes estimators on its shipped data sets.

Every comparison is against an independent implementation (scikit-learn), in float64 (the ``x64``
fixture), to 1e-6:

* ``MultinomialNB(alpha=a)``  == ``Multinomial(alpha=a)``, ``method="mean"``, ``class_alpha=0``
  and == ``Multinomial(alpha=a + 1)``, ``method="map"`` (MAP under a + 1 is the mean under a);
* ``BernoulliNB(alpha=a)``    == ``Bernoulli(alpha=a, beta=a)`` (mean; MAP with a + 1);
* ``CategoricalNB(alpha=a)``  == ``Categorical(alpha=a)`` with the same level sets (mean; MAP);
* ``GaussianNB(var_smoothing=0)`` == ``Gaussian`` under ``method="ml"`` (1/N variance).

``class_alpha=0`` gives the class frequencies, which is scikit-learn's ``fit_prior=True``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB, MultinomialNB

import bayesnb as bnb

ALPHAS = [0.5, 1.0, 2.0]
TOL = 1e-6
DIGIT_NAMES = np.array(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                        "nine"])


# ---------------------------------------------------------------------------- data
@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X, y  # counts 0..16, 64 columns, 10 classes


@pytest.fixture(scope="module")
def digits_split(digits):
    X, y = digits
    return train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)


def _iris_binned():
    """Iris discretised into its per-column quartiles: levels 0..3, every level present."""
    X, y = load_iris(return_X_y=True)
    edges = np.quantile(X, [0.25, 0.5, 0.75], axis=0)
    Xc = np.column_stack([np.digitize(X[:, j], edges[:, j]) for j in range(X.shape[1])])
    return Xc.astype(np.int64), y


GAUSSIAN_SETS = {"iris": load_iris, "breast_cancer": load_breast_cancer, "wine": load_wine}


# ---------------------------------------------------------------------------- helpers
def assert_agree(clf, sk, X, tol=TOL):
    """Same classes, class prior, probabilities, log-probabilities and labels."""
    np.testing.assert_array_equal(clf.classes_, sk.classes_)
    np.testing.assert_allclose(clf.class_prior_.to_numpy(), np.exp(sk.class_log_prior_)
                               if hasattr(sk, "class_log_prior_") else sk.class_prior_,
                               rtol=0, atol=tol)
    proba, ref_proba = clf.predict_proba(X), sk.predict_proba(X)
    assert proba.shape == ref_proba.shape
    np.testing.assert_allclose(proba, ref_proba, rtol=0, atol=tol)
    log_proba, ref_log = clf.predict_log_proba(X), sk.predict_log_proba(X)
    assert np.all(np.isfinite(ref_log)), "reference has -inf; compare probabilities instead"
    np.testing.assert_allclose(log_proba, ref_log, rtol=0, atol=tol)
    np.testing.assert_array_equal(clf.predict(X), sk.predict(X))
    assert clf.score(X, sk.predict(X)) == 1.0


def multinomial_table(clf, columns):
    return clf.conditional_tables()[tuple(columns)]


# ---------------------------------------------------------------------------- Multinomial
@pytest.mark.parametrize("alpha", ALPHAS)
def test_multinomial_mean_matches_multinomialnb(x64, digits, alpha):
    X, y = digits
    sk = MultinomialNB(alpha=alpha).fit(X, y)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=alpha), method="mean", class_alpha=0).fit(X, y)
    assert_agree(clf, sk, X)
    table = multinomial_table(clf, range(X.shape[1]))
    assert table.shape == sk.feature_log_prob_.shape
    np.testing.assert_allclose(np.log(table.to_numpy()), sk.feature_log_prob_, rtol=0, atol=TOL)


def test_multinomial_joint_log_proba_adds_the_multinomial_coefficient(x64, digits):
    """docs/coming_from_sklearn.md: the true log p(x, c) is MultinomialNB's plus each row's
    log(n! / prod x_j!), the same in every class."""
    from scipy.special import gammaln

    X, y = digits
    sk = MultinomialNB().fit(X, y)
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="mean", class_alpha=0).fit(X, y)
    coefficient = gammaln(X.sum(axis=1) + 1) - gammaln(X + 1).sum(axis=1)
    np.testing.assert_allclose(clf.predict_joint_log_proba(X),
                               sk.predict_joint_log_proba(X) + coefficient[:, None], rtol=1e-12)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_multinomial_map_alpha_plus_one_matches_multinomialnb(x64, digits, alpha):
    X, y = digits
    sk = MultinomialNB(alpha=alpha).fit(X, y)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=alpha + 1.0), method="map", class_alpha=0).fit(X, y)
    assert_agree(clf, sk, X)
    table = multinomial_table(clf, range(X.shape[1]))
    np.testing.assert_allclose(np.log(table.to_numpy()), sk.feature_log_prob_, rtol=0, atol=TOL)


@pytest.mark.parametrize("method, offset", [("mean", 0.0), ("map", 1.0)])
def test_multinomial_held_out(x64, digits_split, method, offset):
    X_train, X_test, y_train, y_test = digits_split
    sk = MultinomialNB(alpha=1.0).fit(X_train, y_train)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0 + offset), method=method,
                         class_alpha=0).fit(X_train, y_train)
    assert_agree(clf, sk, X_test)
    assert clf.score(X_test, y_test) == pytest.approx(sk.score(X_test, y_test), abs=0)
    assert clf.score(X_test, y_test) > 0.8


def test_multinomial_sample_weight_matches(x64, digits):
    X, y = digits
    w = np.random.default_rng(0).integers(0, 4, size=len(y)).astype(float)
    sk = MultinomialNB(alpha=1.0).fit(X, y, sample_weight=w)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), class_alpha=0).fit(X, y, sample_weight=w)
    assert_agree(clf, sk, X)
    # integer weights are duplicated rows
    rep = np.repeat(np.arange(len(y)), w.astype(int))
    sk_rep = MultinomialNB(alpha=1.0).fit(X[rep], y[rep])
    np.testing.assert_allclose(clf.predict_proba(X), sk_rep.predict_proba(X), rtol=0, atol=TOL)


def test_multinomial_fixed_class_prior_matches(x64, digits):
    X, y = digits
    prior = np.linspace(1.0, 2.0, 10)
    prior /= prior.sum()
    sk = MultinomialNB(alpha=1.0, class_prior=prior).fit(X, y)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), class_prior=prior).fit(X, y)
    assert_agree(clf, sk, X)


def test_multinomial_partial_fit_matches(x64, digits):
    X, y = digits
    sk = MultinomialNB(alpha=0.5)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=0.5), class_alpha=0)
    for chunk in np.array_split(np.arange(len(y)), 3):
        sk.partial_fit(X[chunk], y[chunk], classes=np.arange(10))
        clf.partial_fit(X[chunk], y[chunk], classes=np.arange(10))
    assert_agree(clf, sk, X)


# ---------------------------------------------------------------------------- Bernoulli
@pytest.fixture(scope="module")
def digits_binary(digits):
    X, y = digits
    return (X > 7).astype(np.float64), y


@pytest.mark.parametrize("alpha", ALPHAS)
def test_bernoulli_mean_matches_bernoullinb(x64, digits_binary, alpha):
    X, y = digits_binary
    sk = BernoulliNB(alpha=alpha, binarize=None).fit(X, y)
    clf = bnb.NaiveBayes(bnb.Bernoulli(alpha=alpha, beta=alpha), method="mean",
                         class_alpha=0).fit(X, y)
    assert_agree(clf, sk, X)
    tables = clf.conditional_tables()
    p1 = np.column_stack([tables[j][1].to_numpy() for j in range(X.shape[1])])
    p0 = np.column_stack([tables[j][0].to_numpy() for j in range(X.shape[1])])
    np.testing.assert_allclose(np.log(p1), sk.feature_log_prob_, rtol=0, atol=TOL)
    np.testing.assert_allclose(p0 + p1, 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_bernoulli_map_alpha_plus_one_matches_bernoullinb(x64, digits_binary, alpha):
    X, y = digits_binary
    sk = BernoulliNB(alpha=alpha, binarize=None).fit(X, y)
    clf = bnb.NaiveBayes(bnb.Bernoulli(alpha=alpha + 1, beta=alpha + 1), method="map",
                         class_alpha=0).fit(X, y)
    assert_agree(clf, sk, X)


def test_bernoulli_boolean_input_and_held_out(x64, digits):
    X, y = digits
    X_train, X_test, y_train, y_test = train_test_split(X > 7, y, test_size=0.3,
                                                        random_state=1, stratify=y)
    sk = BernoulliNB(alpha=1.0, binarize=None).fit(X_train.astype(float), y_train)
    # a boolean array is inferred as Bernoulli(1, 1) by default
    clf = bnb.NaiveBayes(class_alpha=0).fit(X_train, y_train)
    assert [type(b.family) for b in clf.blocks_] == [bnb.Bernoulli]
    assert_agree(clf, sk, X_test.astype(float))
    np.testing.assert_allclose(clf.predict_proba(X_test), sk.predict_proba(X_test.astype(float)),
                               rtol=0, atol=TOL)
    assert clf.score(X_test, y_test) > 0.8


# ---------------------------------------------------------------------------- Categorical
@pytest.mark.parametrize("alpha", ALPHAS)
def test_categorical_mean_matches_categoricalnb_on_digits(x64, digits, alpha):
    X, y = digits
    X = X.astype(np.int64)
    # CategoricalNB's levels of column j are 0..max_j: declare exactly those
    n_cat = X.max(axis=0) + 1
    sk = CategoricalNB(alpha=alpha).fit(X, y)
    np.testing.assert_array_equal(sk.n_categories_, n_cat)
    clf = bnb.NaiveBayes(bnb.Categorical(alpha=alpha, categories=[range(v) for v in n_cat]),
                         method="mean", class_alpha=0).fit(X, y)
    assert_agree(clf, sk, X)
    tables = clf.conditional_tables()
    for j in range(X.shape[1]):
        assert list(tables[j].columns) == list(range(n_cat[j]))
        np.testing.assert_allclose(np.log(tables[j].to_numpy()), sk.feature_log_prob_[j],
                                   rtol=0, atol=TOL)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_categorical_map_alpha_plus_one_matches_categoricalnb(x64, digits, alpha):
    X, y = digits
    X = X.astype(np.int64)
    sk = CategoricalNB(alpha=alpha, min_categories=17).fit(X, y)
    clf = bnb.NaiveBayes(bnb.Categorical(alpha=alpha + 1, categories=[range(17)] * X.shape[1]),
                         method="map", class_alpha=0).fit(X, y)
    assert_agree(clf, sk, X)


def test_categorical_held_out_digits(x64, digits_split):
    X_train, X_test, y_train, y_test = (a.astype(np.int64) for a in digits_split)
    sk = CategoricalNB(alpha=1.0, min_categories=17).fit(X_train, y_train)
    clf = bnb.NaiveBayes(bnb.Categorical(alpha=1.0, categories=[range(17)] * X_train.shape[1]),
                         class_alpha=0).fit(X_train, y_train)
    assert_agree(clf, sk, X_test)
    assert clf.score(X_test, y_test) > 0.8


@pytest.mark.parametrize("method, offset", [("mean", 0.0), ("map", 1.0)])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_categorical_iris_binned_default_levels(x64, method, offset, alpha):
    """With every level 0..max present in every column, the default (seen, sorted) levels are
    CategoricalNB's levels, so no declaration is needed."""
    X, y = _iris_binned()
    sk = CategoricalNB(alpha=alpha).fit(X, y)
    clf = bnb.NaiveBayes(bnb.Categorical(alpha=alpha + offset), method=method,
                         class_alpha=0).fit(X, y)
    (block,) = clf.blocks_
    assert block.schema.levels == tuple(tuple(range(v)) for v in sk.n_categories_)
    assert_agree(clf, sk, X)


def test_categorical_string_levels_and_dataframe(x64):
    """The same iris bins written as strings in a DataFrame, with string labels."""
    X, y = _iris_binned()
    names = np.array(["setosa", "versicolor", "virginica"])
    frame = pd.DataFrame({f"c{j}": np.char.add("L", X[:, j].astype(str)).astype(object)
                          for j in range(X.shape[1])})
    sk = CategoricalNB(alpha=1.0).fit(X, names[y])
    clf = bnb.NaiveBayes(class_alpha=0).fit(frame, pd.Series(names[y]))  # inferred Categorical
    assert [type(b.family) for b in clf.blocks_] == [bnb.Categorical]
    np.testing.assert_array_equal(clf.classes_, sk.classes_)
    np.testing.assert_allclose(clf.predict_proba(frame), sk.predict_proba(X), rtol=0, atol=TOL)
    np.testing.assert_allclose(clf.predict_log_proba(frame), sk.predict_log_proba(X),
                               rtol=0, atol=TOL)
    np.testing.assert_array_equal(clf.predict(frame), sk.predict(X))


# ---------------------------------------------------------------------------- Gaussian
@pytest.mark.parametrize("name", sorted(GAUSSIAN_SETS))
def test_gaussian_ml_matches_gaussiannb(x64, name):
    X, y = GAUSSIAN_SETS[name](return_X_y=True)
    sk = GaussianNB(var_smoothing=0.0).fit(X, y)
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0).fit(X, y)
    assert_agree(clf, sk, X)
    tables = clf.conditional_tables()
    mean = np.column_stack([tables[j]["mean"].to_numpy() for j in range(X.shape[1])])
    sd = np.column_stack([tables[j]["sd"].to_numpy() for j in range(X.shape[1])])
    np.testing.assert_allclose(mean, sk.theta_, rtol=1e-9, atol=0)
    np.testing.assert_allclose(sd**2, sk.var_, rtol=1e-9, atol=0)


@pytest.mark.parametrize("name", sorted(GAUSSIAN_SETS))
def test_gaussian_ml_held_out(x64, name):
    X, y = GAUSSIAN_SETS[name](return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0,
                                                        stratify=y)
    sk = GaussianNB(var_smoothing=0.0).fit(X_train, y_train)
    # numeric columns are inferred Gaussian by default
    clf = bnb.NaiveBayes(method="ml", class_alpha=0).fit(X_train, y_train)
    assert [type(b.family) for b in clf.blocks_] == [bnb.Gaussian]
    assert_agree(clf, sk, X_test)
    assert clf.score(X_test, y_test) == sk.score(X_test, y_test)


@pytest.mark.parametrize("name", sorted(GAUSSIAN_SETS))
def test_gaussian_dataframe_and_string_labels(x64, name):
    data = GAUSSIAN_SETS[name](as_frame=True)
    frame, target = data.data, data.target
    labels = pd.Series(np.asarray(data.target_names)[target.to_numpy()], name="label")
    sk = GaussianNB(var_smoothing=0.0).fit(frame.to_numpy(), labels.to_numpy())
    clf = bnb.NaiveBayes(method="ml", class_alpha=0).fit(frame, labels)
    np.testing.assert_array_equal(clf.classes_, sk.classes_)
    np.testing.assert_array_equal(clf.feature_names_in_, np.asarray(frame.columns))
    # columns reordered at predict: matched by name
    shuffled = frame[frame.columns[::-1]]
    np.testing.assert_allclose(clf.predict_proba(shuffled), sk.predict_proba(frame.to_numpy()),
                               rtol=0, atol=TOL)
    # an array after a DataFrame fit: read by position, with scikit-learn's warning
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        assert_agree(clf, sk, frame.to_numpy())
    tables = clf.conditional_tables()
    for j, col in enumerate(frame.columns):
        np.testing.assert_allclose(tables[col]["mean"].to_numpy(), sk.theta_[:, j], rtol=1e-9)
        np.testing.assert_allclose(tables[col]["sd"].to_numpy() ** 2, sk.var_[:, j], rtol=1e-9)


def test_multinomial_dataframe_and_string_labels(x64, digits):
    X, y = digits
    frame = pd.DataFrame(X, columns=[f"px{j}" for j in range(X.shape[1])])
    labels = DIGIT_NAMES[y]
    sk = MultinomialNB(alpha=1.0).fit(X, labels)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), class_alpha=0).fit(frame, labels)
    np.testing.assert_array_equal(clf.classes_, sk.classes_)
    np.testing.assert_allclose(clf.predict_proba(frame), sk.predict_proba(X), rtol=0, atol=TOL)
    np.testing.assert_allclose(clf.predict_log_proba(frame), sk.predict_log_proba(X),
                               rtol=0, atol=TOL)
    np.testing.assert_array_equal(clf.predict(frame), sk.predict(X))
    table = clf.conditional_tables()[tuple(frame.columns)]
    np.testing.assert_allclose(np.log(table.to_numpy()), sk.feature_log_prob_, rtol=0, atol=TOL)
    # the same numbers as the integer-label, plain-array fit, classes permuted by name
    plain = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), class_alpha=0).fit(X, y)
    order = np.argsort(DIGIT_NAMES)
    np.testing.assert_allclose(clf.predict_proba(frame), plain.predict_proba(X)[:, order],
                               rtol=0, atol=1e-12)


def test_default_float32_close_to_sklearn(digits):
    """Without x64 the kernels run in float32; the numbers are still close to scikit-learn."""
    X, y = digits
    sk = MultinomialNB(alpha=1.0).fit(X, y)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), class_alpha=0).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.dtype == np.float64
    np.testing.assert_allclose(proba, sk.predict_proba(X), rtol=0, atol=1e-3)
    assert np.mean(clf.predict(X) == sk.predict(X)) > 0.999


@pytest.mark.parametrize("labels", [["spam", "ham", "eggs"], [True, False, True], [3, 1, 2]],
                         ids=["strings", "bools", "ints"])
def test_labels_given_as_a_python_list_keep_scikit_learns_dtype(labels):
    """``classes_`` and ``predict`` of labels given as a Python list have the dtype
    GaussianNB's have (NumPy's text dtype for strings, not object)."""
    rng = np.random.default_rng(0)
    y = [labels[i] for i in rng.integers(0, len(labels), 40)]
    X = rng.normal(size=(40, 2))
    ours, reference = bnb.NaiveBayes().fit(X, y), GaussianNB().fit(X, y)
    assert ours.classes_.dtype == reference.classes_.dtype
    np.testing.assert_array_equal(ours.classes_, reference.classes_)
    assert ours.predict(X).dtype == reference.predict(X).dtype


def test_one_number_as_sample_weight_weighs_every_row_as_scikit_learn_does(x64, digits):
    X, y = digits
    ours = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0)
    ours.fit(X, y, sample_weight=2.5)
    reference = MultinomialNB(alpha=1.0).fit(X, y, sample_weight=2.5)
    np.testing.assert_allclose(ours.class_count_, reference.class_count_, rtol=1e-15)
    np.testing.assert_allclose(ours.feature_count_, reference.feature_count_, rtol=1e-15)
    np.testing.assert_allclose(ours.predict_proba(X), reference.predict_proba(X), atol=1e-12)
    with pytest.raises(ValueError, match="non-negative"):
        bnb.NaiveBayes().fit(X, y, sample_weight=-1.0)
