"""scikit-learn conventions the estimator follows, each checked against scikit-learn itself or a
hand computation:

* per-class settings: a ``class_prior`` or ``class_alpha`` given as a mapping or a pandas Series
  is matched to ``classes_`` by label (as a dict always was), an array by position (as
  scikit-learn's ``priors``); labels that are not classes, or classes left out, are refused;
* feature names: fitting and predicting with and without DataFrame column names warns as
  ``sklearn.utils.validation._check_feature_names`` does, in its words;
* tags: what the input may hold follows the chosen family, so ``check_estimator`` runs a
  Multinomial model on the data it runs ``MultinomialNB`` on.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.base import clone
from sklearn.naive_bayes import GaussianNB, MultinomialNB
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesnb as bnb
from bayesnb._classes import class_log_evidence, class_log_prior
from bayesnb.model import model_and_data_for_simulation

RNG = np.random.default_rng(4)


def _spam(n: int = 200):
    """Labels ham/spam (classes_ ['ham', 'spam']) and a numeric column that tells them apart."""
    y = np.where(RNG.random(n) < 0.75, "ham", "spam")
    X = pd.DataFrame({"w": RNG.normal(size=n) + 2.0 * (y == "spam")})
    return X, y


# ------------------------------------------------------------------ class_prior, class_alpha
@pytest.mark.parametrize("given", [
    pd.Series({"spam": 0.275, "ham": 0.725}),  # not in classes_ order
    pd.Series({"ham": 0.725, "spam": 0.275}),
    {"spam": 0.275, "ham": 0.725},
])
def test_a_labelled_class_prior_is_matched_by_label(x64, given):
    """GaussianNB's ``priors`` are in classes_ order: ham 0.725, spam 0.275."""
    X, y = _spam()
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_prior=given).fit(X, y)
    sk = GaussianNB(priors=[0.725, 0.275], var_smoothing=0.0).fit(X, y)
    assert list(clf.classes_) == ["ham", "spam"]
    np.testing.assert_allclose(clf.class_prior_.to_numpy(), [0.725, 0.275], rtol=0, atol=1e-15)
    np.testing.assert_allclose(clf.predict_proba(X), sk.predict_proba(X), rtol=1e-9, atol=1e-12)


def test_a_value_counts_series_as_class_prior_is_the_frequencies(x64):
    """``y.value_counts(normalize=True)`` is ordered by frequency, not by label: as the prior it
    must give each class its own frequency (GaussianNB's default ``priors``)."""
    X, y = _spam()
    prior = pd.Series(y).value_counts(normalize=True).sort_values()  # spam first
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_prior=prior).fit(X, y)
    sk = GaussianNB(var_smoothing=0.0).fit(X, y)
    np.testing.assert_allclose(clf.class_prior_.to_numpy(), sk.class_prior_, rtol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(X), sk.predict_proba(X), rtol=1e-9, atol=1e-12)


def test_an_array_class_prior_stays_positional(x64):
    """A list is in classes_ order, as MultinomialNB's ``class_prior``."""
    X = RNG.poisson(2.0, size=(60, 4))
    y = np.array(["b", "a", "c"])[np.arange(60) % 3]
    prior = [0.5, 0.3, 0.2]  # a, b, c
    clf = bnb.NaiveBayes(bnb.Multinomial(), class_prior=prior).fit(X, y)
    sk = MultinomialNB(class_prior=prior).fit(X, y)
    np.testing.assert_allclose(clf.class_prior_.to_numpy(), prior, rtol=0, atol=1e-15)
    np.testing.assert_allclose(clf.predict_proba(X), sk.predict_proba(X), rtol=1e-9, atol=1e-12)


def test_another_fits_class_prior_carries_over_by_label(x64):
    """``class_prior_`` (a Series indexed by class) given back, reordered, is the same prior."""
    X, y = _spam()
    first = bnb.NaiveBayes(bnb.Gaussian(), method="ml").fit(X, y)
    again = bnb.NaiveBayes(bnb.Gaussian(), method="ml",
                           class_prior=first.class_prior_.iloc[::-1]).fit(X, y)
    np.testing.assert_allclose(again.predict_proba(X), first.predict_proba(X), rtol=1e-12)


def test_a_labelled_class_alpha_is_matched_by_label(x64):
    """The posterior mean of the class proportions, by hand: (n_k + alpha_k) / (N + sum alpha)."""
    X, y = _spam()
    n = np.array([np.sum(y == "ham"), np.sum(y == "spam")], dtype=float)
    alpha = pd.Series({"spam": 30.0, "ham": 1.0})
    clf = bnb.NaiveBayes(bnb.Gaussian(), class_alpha=alpha).fit(X, y)
    np.testing.assert_allclose(clf.class_prior_.to_numpy(),
                               (n + [1.0, 30.0]) / (n.sum() + 31.0), rtol=1e-12)
    as_dict = bnb.NaiveBayes(bnb.Gaussian(), class_alpha=alpha.to_dict()).fit(X, y)
    np.testing.assert_allclose(as_dict.predict_proba(X), clf.predict_proba(X), rtol=1e-12)


def test_every_report_reads_a_labelled_class_alpha_by_label(x64, tmp_path):
    """Evidence, exact leave-one-out, EM's objective, the class log prior and a saved file
    take a Series ``class_alpha`` as its labels say, as they take the same values in
    ``classes_`` order; the class evidence against its Dirichlet-multinomial formula."""
    from scipy.special import gammaln

    from bayesnb.em import fit_em, log_posterior

    X, y = _spam()
    labelled = bnb.NaiveBayes(method="mean", class_alpha=pd.Series({"spam": 3.0, "ham": 1.0}))
    ordered = bnb.NaiveBayes(method="mean", class_alpha=[1.0, 3.0])
    labelled.fit(X, y), ordered.fit(X, y)
    n = np.array([np.sum(y == "ham"), np.sum(y == "spam")], dtype=float)
    a = np.array([1.0, 3.0])
    by_hand = gammaln(a.sum()) - gammaln(a.sum() + n.sum()) + np.sum(gammaln(a + n) - gammaln(a))
    assert labelled.log_evidence(per_block=True)["class"] == pytest.approx(by_hand, rel=1e-12)
    assert labelled.log_evidence() == pytest.approx(ordered.log_evidence(), rel=1e-13)
    assert labelled.loo(X, y).elpd_loo == pytest.approx(ordered.loo(X, y).elpd_loo, rel=1e-13)
    np.testing.assert_allclose(labelled.class_log_prior_, ordered.class_log_prior_, rtol=1e-15)
    assert log_posterior(labelled, X[:100], y[:100], X[100:]) == pytest.approx(
        log_posterior(ordered, X[:100], y[:100], X[100:]), rel=1e-13)
    em = [fit_em(clone(m), X[:100], y[:100], X[100:]) for m in (labelled, ordered)]
    np.testing.assert_allclose(em[0].predict_proba(X), em[1].predict_proba(X), rtol=1e-12)
    bnb.save(labelled, tmp_path / "m.bnb")
    np.testing.assert_allclose(bnb.load(tmp_path / "m.bnb").predict_proba(X),
                               ordered.predict_proba(X), rtol=1e-13)


def test_the_draws_model_gets_the_class_settings_by_label():
    """The NumPyro model (method='mcmc', simulation) reads the same matched vectors."""
    X, y = _spam(40)
    prior = bnb.NaiveBayes(bnb.Gaussian(), class_prior=pd.Series({"spam": 0.2, "ham": 0.8}))
    np.testing.assert_array_equal(
        model_and_data_for_simulation(prior.fit(X, y))[1]["class_prior"], [0.8, 0.2])
    alpha = bnb.NaiveBayes(bnb.Gaussian(), class_alpha=pd.Series({"spam": 5.0, "ham": 2.0}))
    np.testing.assert_array_equal(
        model_and_data_for_simulation(alpha.fit(X, y))[1]["class_alpha"], [2.0, 5.0])


def test_reordering_a_series_prior_is_a_new_setting():
    """The cached scorer is keyed by label: the same numbers on swapped labels are another
    prior, not a cache hit."""
    X, y = _spam()
    clf = bnb.NaiveBayes(bnb.Gaussian(), class_prior=pd.Series({"ham": 0.9, "spam": 0.1}))
    clf.fit(X, y)
    before = clf.class_prior_.to_numpy()
    clf.set_params(class_prior=pd.Series({"spam": 0.9, "ham": 0.1}))
    np.testing.assert_allclose(before, [0.9, 0.1])
    np.testing.assert_allclose(clf.class_prior_.to_numpy(), [0.1, 0.9])


@pytest.mark.parametrize("setting, given, named", [
    ("class_prior", {0: 0.3, 1: 0.3, 2: 0.4}, r"names \[2\], which are not classes"),
    ("class_prior", pd.Series({"0": 0.25, "1": 0.75}),
     r"names \['0', '1'\], which are not classes, and gives no value for class\(es\) \[0, 1\]"),
    ("class_prior", {1: 1.0}, r"gives no value for class\(es\) \[0\]"),
    ("class_alpha", pd.Series({0: 1.0, 1: 1.0, 7: 1.0}), r"names \[7\]"),
    ("class_alpha", {1: 2.0}, r"gives no value for class\(es\) \[0\]"),
], ids=["extra", "labels-of-another-type", "missing", "alpha-extra", "alpha-missing"])
def test_labels_that_are_not_the_classes_are_refused_by_name(setting, given, named):
    X = RNG.normal(size=(20, 2))
    y = np.arange(20) % 2
    pattern = f"{setting} is matched to the classes by label: .*{named}"
    with pytest.raises(ValueError, match=pattern):
        bnb.NaiveBayes(bnb.Gaussian(), **{setting: given}).fit(X, y)


def test_a_series_naming_a_class_twice_is_refused():
    X = RNG.normal(size=(20, 1))
    y = np.arange(20) % 2
    twice = pd.Series([0.5, 0.25, 0.25], index=[0, 1, 1])
    with pytest.raises(ValueError, match=r"class_prior names label\(s\) \[1\] more than once"):
        bnb.NaiveBayes(bnb.Gaussian(), class_prior=twice).fit(X, y)


def test_a_labelled_setting_is_never_read_by_position():
    """Where only the number of classes is known, a Series cannot be placed: refused, not read
    in its own order."""
    counts = np.array([3.0, 1.0])
    with pytest.raises(ValueError, match="class_prior given by label"):
        class_log_prior(counts, 1.0, pd.Series({"b": 0.9, "a": 0.1}), "mean")
    with pytest.raises(ValueError, match="class_alpha given by label"):
        class_log_evidence(counts, {"a": 1.0, "b": 2.0}, None)


# ------------------------------------------------------------------ feature names
def _name_warnings(estimator, fits, X):
    """The feature-name warnings of fitting on each of ``fits`` (partial_fit after the first)
    and predicting ``X``, the estimator's class name written as ``EST``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(*fits[0])
        for chunk in fits[1:]:
            estimator.partial_fit(*chunk)
        if X is not None:
            estimator.predict_proba(X)
    name = type(estimator).__name__
    return [(w.category, str(w.message).replace(name, "EST")) for w in caught
            if "feature names" in str(w.message)]


FRAME = pd.DataFrame(RNG.poisson(3.0, size=(40, 3)).astype(float), columns=["a", "b", "c"])
LABELS = np.arange(40) % 2
INT_NAMED = FRAME.set_axis([0, 1, 2], axis=1)

SCENARIOS = {  # fit on, predict on
    "array then frame": (FRAME.to_numpy(), FRAME),
    "frame then array": (FRAME, FRAME.to_numpy()),
    "frame then frame": (FRAME, FRAME),
    "array then array": (FRAME.to_numpy(), FRAME.to_numpy()),
    "integer names then array": (INT_NAMED, FRAME.to_numpy()),
    "array then integer names": (FRAME.to_numpy(), INT_NAMED),
    "frame then sparse": (FRAME, sparse.csr_matrix(FRAME.to_numpy())),
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_feature_name_warnings_are_scikit_learns(scenario):
    fit_on, predict_on = SCENARIOS[scenario]
    ours = _name_warnings(bnb.NaiveBayes(bnb.Multinomial()), [(fit_on, LABELS)], predict_on)
    theirs = _name_warnings(MultinomialNB(), [(fit_on, LABELS)], predict_on)
    assert ours == theirs
    assert bool(ours) == (scenario in ("array then frame", "frame then array",
                                       "frame then sparse"))


def test_the_warnings_read_as_scikit_learn_writes_them():
    """GaussianNB's own messages, with the estimator's name."""
    clf = bnb.NaiveBayes(bnb.Gaussian())
    assert _name_warnings(clf, [(FRAME.to_numpy(), LABELS)], FRAME) == [
        (UserWarning, "X has feature names, but EST was fitted without feature names")]
    assert _name_warnings(clf, [(FRAME, LABELS)], FRAME.to_numpy()) == [
        (UserWarning, "X does not have valid feature names, but EST was fitted with feature "
                      "names")]
    assert _name_warnings(GaussianNB(), [(FRAME, LABELS)], FRAME.to_numpy()) == \
        _name_warnings(clf, [(FRAME, LABELS)], FRAME.to_numpy())


def test_a_partial_fit_chunk_without_names_warns_as_multinomialnb():
    chunks = [(FRAME.iloc[:20], LABELS[:20]), (FRAME.iloc[20:].to_numpy(), LABELS[20:])]
    first, rest = chunks[0], chunks[1:]
    ours = _name_warnings(bnb.NaiveBayes(bnb.Multinomial()), [first, *rest], None)
    sk = MultinomialNB().partial_fit(*first, classes=[0, 1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sk.partial_fit(*rest[0])
    theirs = [(w.category, str(w.message).replace("MultinomialNB", "EST")) for w in caught]
    assert ours == theirs and len(ours) == 1


def test_columns_are_still_read_by_position_after_the_warning(x64):
    """Only a warning: a frame with names after an array fit is read by position, as
    scikit-learn reads it."""
    clf = bnb.NaiveBayes(bnb.Multinomial(), class_alpha=0).fit(FRAME.to_numpy(), LABELS)
    sk = MultinomialNB().fit(FRAME.to_numpy(), LABELS)
    swapped = FRAME[["c", "a", "b"]]
    with pytest.warns(UserWarning, match="X has feature names"):
        ours = clf.predict_proba(swapped)
    with pytest.warns(UserWarning, match="X has feature names"):
        theirs = sk.predict_proba(swapped)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    np.testing.assert_allclose(ours, clf.predict_proba(swapped.to_numpy()), rtol=0, atol=0)


def test_a_model_from_stated_tables_takes_rows_without_a_warning(x64):
    """``from_tables`` was fitted on nothing: rows in its stated column order are its documented
    input (bayesnb.coursework), checked against the normal densities by hand."""
    clf = bnb.from_tables({"a": 0.25, "b": 0.75},
                          gaussian={"t": {"a": (0.0, 1.0), "b": (2.0, 0.5)}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        proba = clf.predict_proba([[0.5], [1.5]])
    x = np.array([0.5, 1.5])
    joint = np.column_stack([0.25 * np.exp(-x ** 2 / 2), 0.75 * 2 * np.exp(-2 * (x - 2) ** 2)])
    np.testing.assert_allclose(proba, joint / joint.sum(axis=1, keepdims=True), rtol=1e-12)


# ------------------------------------------------------------------ tags
def _input_tags(estimator):
    tags = get_tags(estimator)
    return (tags.input_tags.positive_only, tags.input_tags.categorical,
            tags.classifier_tags.poor_score)


def test_a_multinomial_model_has_multinomialnbs_tags():
    assert _input_tags(bnb.NaiveBayes(bnb.Multinomial())) == _input_tags(MultinomialNB())


@pytest.mark.parametrize("features, expected", [
    (bnb.Poisson(), (True, False, True)),
    (bnb.NegativeBinomial(r=2.0), (True, False, True)),
    (bnb.Bernoulli(), (True, False, True)),
    (bnb.Gaussian(), (False, False, False)),
    (bnb.KernelDensity(), (False, False, False)),
    (bnb.Categorical(), (False, True, False)),  # any values, negative numbers too
    (None, (False, True, False)),  # strings are inferred Categorical
    ({"a": bnb.Multinomial()}, (False, True, False)),  # the other columns inferred
])
def test_tags_follow_the_families(features, expected):
    assert _input_tags(bnb.NaiveBayes(features)) == expected


def _with_a_negative_value(family) -> np.ndarray:
    """Eight rows of values the family takes, the first made -1."""
    if isinstance(family, bnb.Bernoulli):
        X = np.tile([[0.0, 1.0], [1.0, 0.0]], (4, 1))
    else:
        X = np.array([[1, 2], [3, 0], [2, 2], [0, 1], [4, 1], [1, 3], [2, 0], [3, 3]], float)
    X[0, 0] = -1.0
    return X


FAMILIES = [bnb.Multinomial(), bnb.Poisson(), bnb.NegativeBinomial(r=2.0), bnb.Bernoulli(),
            bnb.Gaussian(), bnb.KernelDensity(), bnb.Categorical()]


@pytest.mark.parametrize("family", FAMILIES + [bnb.Exponential(), bnb.LogNormal()],
                         ids=lambda f: type(f).__name__)
def test_positive_only_says_whether_a_negative_value_is_refused(family):
    clf = bnb.NaiveBayes(family)
    X, y = _with_a_negative_value(family), np.arange(8) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Categorical: levels seen in one class only
        try:
            clf.fit(X, y)
            refused = False
        except ValueError:
            refused = True
    assert refused == get_tags(clf).input_tags.positive_only


MULTINOMIAL_REASONS = {
    "check_positive_only_tag_during_fit": (
        "the negative count is refused (ValueError), in the family's words, which name the "
        "column and row, not scikit-learn's 'Negative values in data' (bayesnb.families "
        "numeric_block)"),
}


@parametrize_with_checks([bnb.NaiveBayes(bnb.Multinomial()),
                          bnb.NaiveBayes(bnb.Multinomial(), method="bayes")],
                         expected_failed_checks=lambda est: MULTINOMIAL_REASONS)
def test_check_estimator_multinomial(estimator, check, x64):
    """The checks MultinomialNB passes, on the data its tags ask for (counts: positive_only,
    a poor score on blobs), in float64 mode..."""
    check(estimator)


@parametrize_with_checks([bnb.NaiveBayes(bnb.Multinomial())],
                         expected_failed_checks=lambda est: MULTINOMIAL_REASONS)
def test_check_estimator_multinomial_default_float32(estimator, check):
    """... and in the default float32 mode."""
    check(estimator)
