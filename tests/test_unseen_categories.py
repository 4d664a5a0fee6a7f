"""Category values never seen in training: a defined, documented behaviour per method."""

import numpy as np
import pandas as pd
import pytest

import bayesnb as bnb
from bayesnb.families.categorical import UnseenCategoryWarning


@pytest.fixture
def data():
    X = pd.DataFrame({"colour": ["red", "red", "blue", "green", "blue", "blue", "red"]})
    y = np.array(["a", "a", "a", "a", "b", "b", "b"])
    return X, y


@pytest.mark.parametrize("method, alpha", [("mean", 1.0), ("bayes", 0.5), ("map", 2.0)])
def test_unseen_value_gets_the_zero_count_probability(data, method, alpha, x64):
    X, y = data
    clf = bnb.NaiveBayes(bnb.Categorical(alpha=alpha), method=method, class_alpha=1.0).fit(X, y)
    shift = -1.0 if method == "map" else 0.0
    # by hand: class a has 4 rows, class b 3; 3 levels; an unseen level is a zero count
    p_unseen = {"a": (alpha + shift) / (4 + 3 * (alpha + shift)),
                "b": (alpha + shift) / (3 + 3 * (alpha + shift))}
    prior = {"a": (4 + 1 + shift) / (7 + 2 * (1 + shift)),
             "b": (3 + 1 + shift) / (7 + 2 * (1 + shift))}
    if method != "map":
        prior = {"a": 5 / 9, "b": 4 / 9}
    joint = np.array([prior[c] * p_unseen[c] for c in ("a", "b")])
    with pytest.warns(UnseenCategoryWarning, match=r"column 'colour'.*'purple'"):
        got = clf.predict_proba(pd.DataFrame({"colour": ["purple"]}))[0]
    np.testing.assert_allclose(got, joint / joint.sum(), rtol=1e-12)
    # unseen="smooth": the same number, silently
    quiet = bnb.NaiveBayes(bnb.Categorical(alpha=alpha, unseen="smooth"), method=method,
                           class_alpha=1.0).fit(X, y)
    np.testing.assert_allclose(quiet.predict_proba(pd.DataFrame({"colour": ["purple"]}))[0],
                               joint / joint.sum(), rtol=1e-12)


def test_unseen_value_under_ml_names_column_and_value(data):
    X, y = data
    clf = bnb.NaiveBayes(method="ml").fit(X, y)
    with pytest.raises(ValueError, match=r"column 'colour': value 'purple'.*method='ml'"):
        clf.predict(pd.DataFrame({"colour": ["purple"]}))


def test_unseen_value_at_fit_time_asks_for_declared_categories(data):
    X, y = data
    clf = bnb.NaiveBayes(method="mean").fit(X, y)
    with pytest.raises(ValueError, match="categories="):
        clf.partial_fit(pd.DataFrame({"colour": ["purple"]}), ["a"])


def test_declared_categories_make_the_value_a_level(data, x64):
    X, y = data
    clf = bnb.NaiveBayes(bnb.Categorical(categories=[["red", "blue", "green", "purple"]]),
                         method="ml").fit(X, y)
    table = clf.conditional_tables()["colour"]
    assert list(table.columns) == ["red", "blue", "green", "purple"]
    assert table.loc["a", "purple"] == 0.0
    with pytest.raises(ValueError, match="every class has probability zero"):
        clf.predict_proba(pd.DataFrame({"colour": ["purple"]}))
    smoothed = bnb.NaiveBayes(bnb.Categorical(categories=[["red", "blue", "green", "purple"]]),
                              method="mean", class_alpha=0).fit(X, y)
    np.testing.assert_allclose(smoothed.conditional_tables()["colour"].loc["b", "purple"],
                               1 / (3 + 4))


# ---------------------------------------------------------------------- Categorical(unseen=)
TITANIC_CLASSES = ["1st", "2nd", "3rd", "Crew"]


@pytest.fixture(scope="module")
def classes_data():
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"Class": rng.choice(TITANIC_CLASSES, 60), "Sex": rng.choice(["M", "F"], 60)})
    y = rng.choice(["No", "Yes"], 60)
    return X, y


@pytest.mark.parametrize("method", ["mean", "map", "bayes"])
def test_misspelt_category_warns_by_default(classes_data, method):
    """The default unseen="warn": the misspelling "Crw" is scored (as a zero-count level) and
    named in a warning, with its column and the other offending values."""
    X, y = classes_data
    clf = bnb.NaiveBayes(bnb.Categorical(alpha=2.0), method=method).fit(X, y)  # MAP needs > 1
    assert clf.blocks_[0].family.unseen == "warn"
    new = pd.DataFrame({"Class": ["Crw", "1st", "Crw", "4th"], "Sex": ["M", "F", "F", "M"]})
    with pytest.warns(UnseenCategoryWarning) as caught:
        proba = clf.predict_proba(new)
    (message,) = {str(w.message) for w in caught}
    assert "column 'Class'" in message and "'Crw'" in message and "'4th'" in message
    assert "3 row(s)" in message and "2 value(s)" in message
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # the scores are those of the silent policy
    silent = bnb.NaiveBayes(bnb.Categorical(alpha=2.0, unseen="smooth"), method=method).fit(X, y)
    np.testing.assert_allclose(silent.predict_proba(new), proba, rtol=1e-6)


def test_unseen_error_policy_refuses(classes_data):
    X, y = classes_data
    clf = bnb.NaiveBayes(bnb.Categorical(unseen="error")).fit(X, y)
    with pytest.raises(ValueError, match=r"column 'Class'.*'Crw'.*unseen='error'"):
        clf.predict(pd.DataFrame({"Class": ["Crw"], "Sex": ["M"]}))
    clf.predict(pd.DataFrame({"Class": ["Crew"], "Sex": ["M"]}))  # known values are fine


def test_unseen_policy_on_integer_levels():
    """Integer columns take a lookup-table fast path: the policy applies there too."""
    X = np.array([[0], [1], [2], [1], [0], [2]])
    y = [0, 0, 0, 1, 1, 1]
    clf = bnb.NaiveBayes(bnb.Categorical()).fit(X, y)
    with pytest.warns(UnseenCategoryWarning, match=r"column 0.*\b7\b"):
        clf.predict(np.array([[7], [1]]))
    strict = bnb.NaiveBayes(bnb.Categorical(unseen="error")).fit(X, y)
    with pytest.raises(ValueError, match=r"column 0.*\b7\b"):
        strict.predict(np.array([[7], [1]]))


def test_unseen_policy_must_be_known(classes_data):
    X, y = classes_data
    with pytest.raises(ValueError, match=r"unseen must be one of.*'sometimes'"):
        bnb.NaiveBayes(bnb.Categorical(unseen="sometimes")).fit(X, y)


def test_unseen_policy_survives_save_and_load(classes_data, tmp_path):
    X, y = classes_data
    clf = bnb.NaiveBayes(bnb.Categorical(unseen="error")).fit(X, y)
    bnb.save(clf, tmp_path / "m.bnb")
    loaded = bnb.load(tmp_path / "m.bnb")
    with pytest.raises(ValueError, match="unseen='error'"):
        loaded.predict(pd.DataFrame({"Class": ["Crw"], "Sex": ["M"]}))


def test_files_without_the_policy_load_with_the_default():
    """Model files written before ``unseen=`` existed have no such hyperparameter: they load
    with the documented default, "warn"."""
    from pathlib import Path

    old = sorted((Path(__file__).parent.parent / "models").glob("*_v1.bnb"))
    assert old, "the stored v1 model files are missing"
    for path in old:
        model = bnb.load(path)
        for block in model.blocks_:
            if block.family.name == "categorical":
                assert block.family.unseen == "warn"


def test_an_mcmc_prediction_warns_once_per_unseen_value():
    """Its float64 retry (the float32 rounding bound refused) encodes the rows again: the
    warning was given twice."""
    import warnings

    days, play = bnb.datasets.load_playtennis()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a short run, not converged
        clf = bnb.NaiveBayes(method="mcmc", num_warmup=20, num_samples=20, num_chains=1,
                             progress_bar=False).fit(days, play)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.predict_proba(days.head(1).assign(Outlook="Foggy"))
    assert [type(w.message).__name__ for w in caught] == ["UnseenCategoryWarning"]
