"""TreeAugmentedNB's settings and inputs against scikit-learn's conventions: ``alpha_ess`` must
be a number, ``feature_names_in_`` after a DataFrame fit, an array after a DataFrame fit read by
position with scikit-learn's warning, and the wording scikit-learn's own checks look for (NaN,
inf, the number of features). scikit-learn itself (CategoricalNB, its estimator checks) is the
reference for names and messages; the predictions read by position are compared with the same
rows as a DataFrame and with the model written out by hand (three columns: three trees)."""

from __future__ import annotations

import json
import re
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
from _tan_by_hand import by_hand
from sklearn.naive_bayes import CategoricalNB
from sklearn.utils.estimator_checks import (
    check_estimators_nan_inf,
    check_n_features_in_after_fitting,
)

import bayesnb as bnb

ESS = 1.0


def frame(n=40, seed=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.75, y, 1 - y)
    X = pd.DataFrame({"a": a, "b": np.where(rng.random(n) < 0.8, a, rng.integers(0, 3, n)),
                      "c": rng.integers(0, 2, n)})
    return X, y


def sklearn_message(fit, call) -> str:
    """The ValueError or UserWarning message of CategoricalNB for the same mistake, with
    TreeAugmentedNB's name in place of its own."""
    model = CategoricalNB().fit(*fit)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call(model)
        except ValueError as err:
            return str(err).replace("CategoricalNB", "TreeAugmentedNB")
    return str(caught[0].message).replace("CategoricalNB", "TreeAugmentedNB")


# ---------------------------------------------------------------------- alpha_ess
@pytest.mark.parametrize("alpha", ["1", True, np.True_, None, [1.0], 0, -1.0, np.nan, np.inf])
def test_alpha_ess_must_be_a_positive_number(alpha):
    X, y = frame()
    with pytest.raises(ValueError, match=re.escape(f"alpha_ess must be a positive number, got "
                                                   f"{alpha!r}.")):
        bnb.TreeAugmentedNB(alpha_ess=alpha).fit(X, y)


def test_an_alpha_ess_whose_cell_share_underflows_is_refused():
    """alpha_ess=1e-310 gave each pair cell alpha_ess / (V_i V_j), a subnormal whose log-Gamma
    sums were NaN, and the fit failed with "no spanning tree", about edges nobody forbade."""
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 3, (50, 4)), rng.integers(0, 2, 50)
    with pytest.raises(ValueError, match=re.escape(
            "alpha_ess=1e-310 is too small: its share of a cell of the largest pair table, "
            "alpha_ess / 9 = 1.11111e-311, is below float64's smallest normal number.")):
        bnb.TreeAugmentedNB(alpha_ess=1e-310).fit(X, y)
    p = bnb.TreeAugmentedNB(alpha_ess=1e-300).fit(X, y).predict_proba(X)
    assert np.all(np.isfinite(p)) and np.allclose(p.sum(axis=1), 1.0)


def test_numbers_of_any_type_are_the_same_alpha_ess():
    X, y = frame()
    want = bnb.TreeAugmentedNB(alpha_ess=2.0).fit(X, y).predict_proba(X)
    for alpha in (2, np.int64(2), np.float32(2.0)):
        np.testing.assert_array_equal(
            bnb.TreeAugmentedNB(alpha_ess=alpha).fit(X, y).predict_proba(X), want)


def test_a_model_file_whose_alpha_ess_is_text_is_refused(tmp_path):
    X, y = frame()
    path = bnb.TreeAugmentedNB().fit(X, y).save(tmp_path / "tan.bnb")
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    manifest = json.loads(members["manifest.json"])
    manifest["settings"]["alpha_ess"] = "1"
    bad = tmp_path / "bad.bnb"
    with zipfile.ZipFile(bad, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, json.dumps(manifest) if name == "manifest.json" else data)
    with pytest.raises(bnb.ModelFileError, match="alpha_ess must be a positive number"):
        bnb.TreeAugmentedNB.load(bad)


# ---------------------------------------------------------------------- feature names
def test_feature_names_in_as_scikit_learn_sets_it():
    X, y = frame()
    clf = bnb.TreeAugmentedNB()
    assert not hasattr(clf, "feature_names_in_")  # not fitted
    names = clf.fit(X, y).feature_names_in_
    reference = CategoricalNB().fit(X, y).feature_names_in_
    np.testing.assert_array_equal(names, reference)
    assert names.dtype == reference.dtype == object
    # no names: an array, or a DataFrame whose names are not all strings (as scikit-learn)
    for unnamed in (X.to_numpy(), X.set_axis([0, 1, 2], axis=1)):
        assert not hasattr(bnb.TreeAugmentedNB().fit(unnamed, y), "feature_names_in_")
        assert not hasattr(CategoricalNB().fit(unnamed, y), "feature_names_in_")


def test_an_array_after_a_dataframe_fit_is_read_by_position_with_scikit_learns_warning():
    X, y = frame()
    clf = bnb.TreeAugmentedNB(alpha_ess=ESS).fit(X, y)
    message = sklearn_message((X, y), lambda m: m.predict(X.to_numpy()[:3]))
    assert message == ("X does not have valid feature names, but TreeAugmentedNB was fitted "
                       "with feature names")
    want = by_hand(X.to_numpy(), y, [2, 3, 2], X.to_numpy()[:8], ESS)
    for rows in (X.to_numpy()[:8], X.to_numpy(dtype=object)[:8], X.to_numpy()[:8].tolist()):
        with pytest.warns(UserWarning, match=f"^{re.escape(message)}$"):
            got = clf.predict_proba(rows)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(X.head(8)), want, rtol=0, atol=1e-12)
    # a DataFrame is still matched by name, in any order
    np.testing.assert_array_equal(clf.predict_proba(X.head(8)[["c", "a", "b"]]),
                                  clf.predict_proba(X.head(8)))


def test_an_array_after_a_fit_without_string_names_is_read_by_position_silently():
    X, y = frame()
    numbered = X.set_axis([0, 1, 2], axis=1)
    clf = bnb.TreeAugmentedNB().fit(numbered, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scikit-learn has no names to warn about here either
        got = clf.predict_proba(X.to_numpy()[:5])
    np.testing.assert_array_equal(got, clf.predict_proba(numbered.head(5)))


def test_a_dataframe_after_an_array_fit_is_read_by_position_with_scikit_learns_warning():
    X, y = frame()
    clf = bnb.TreeAugmentedNB().fit(X.to_numpy(), y)
    message = sklearn_message((X.to_numpy(), y), lambda m: m.predict(X))
    assert message == ("X has feature names, but TreeAugmentedNB was fitted without feature "
                       "names")
    renamed = X.head(5).set_axis(["z", "y", "x"], axis=1)  # names play no part: positions
    with pytest.warns(UserWarning, match=f"^{re.escape(message)}$"):
        got = clf.predict_proba(renamed)
    np.testing.assert_array_equal(got, clf.predict_proba(X.to_numpy()[:5]))


def test_the_wrong_number_of_columns_is_said_in_scikit_learns_words():
    X, y = frame()
    wide = X.assign(d=X["a"]).to_numpy()
    message = sklearn_message((wide, y), lambda m: m.predict(X.to_numpy()))
    assert message == "X has 3 features, but TreeAugmentedNB is expecting 4 features as input."
    for fitted in (wide, X.assign(d=X["a"])):  # an array, or by position after a DataFrame
        clf = bnb.TreeAugmentedNB().fit(fitted, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the feature-names warning
            with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
                clf.predict(X.to_numpy())


# ---------------------------------------------------------------------- NaN and inf
@pytest.mark.parametrize("value, word", [(np.nan, "NaN"), (np.inf, "inf"), (-np.inf, "-inf")])
def test_nan_and_inf_are_named_at_fit_and_at_prediction(value, word):
    X, y = frame()
    bad = X.astype(float)
    bad.loc[4, "b"] = value
    with pytest.raises(ValueError, match=f"column 'b'.*{word}.*row 4"):
        bnb.TreeAugmentedNB().fit(bad, y)
    clf = bnb.TreeAugmentedNB().fit(X, y)
    with pytest.raises(ValueError, match=f"column 'b'.*{word}.*row 1"):
        clf.predict(bad.iloc[3:6])
    with pytest.raises(ValueError, match=f"column 1.*{word}.*row 4"):  # an array: positions
        bnb.TreeAugmentedNB().fit(bad.to_numpy(), y)


def test_scikit_learns_nan_inf_and_n_features_checks_pass():
    check_estimators_nan_inf("TreeAugmentedNB", bnb.TreeAugmentedNB())
    check_n_features_in_after_fitting("TreeAugmentedNB", bnb.TreeAugmentedNB())


def test_a_none_in_a_text_column_is_still_a_missing_value():
    X, y = frame()
    text = X.astype(str).astype(object)
    text.loc[2, "c"] = None
    with pytest.raises(ValueError, match=r"column 'c': 1 missing value\(s\) \(NaN or None, "
                       r"first in row 2\)"):
        bnb.TreeAugmentedNB().fit(text, y)


def test_a_nan_in_an_array_after_a_dataframe_fit_names_the_column_at_its_position():
    X, y = frame()
    clf = bnb.TreeAugmentedNB().fit(X, y)
    rows = X.to_numpy(dtype=float)[:3].copy()
    rows[1, 2] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(ValueError, match=r"column 'c': 1 missing value\(s\) \(NaN"):
            clf.predict(rows)
