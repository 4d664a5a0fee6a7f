"""TreeAugmentedNB refuses what NaiveBayes refuses, with the same messages: continuous labels,
complex numbers, all-zero weights, booleans mixed with numbers, unknown columns at prediction;
a sparse X and an edge prior that forbids every tree are refused clearly. Valid inputs of the
same shapes still give the probabilities of the model, written out by hand (three columns:
three trees, each one's evidence a sum of Dirichlet-multinomial terms)."""


import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from _tan_by_hand import by_hand

import bayesnb as bnb
from bayesnb._spanning_trees import max_spanning_tree

ESS = 1.5


def data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, 3))
    return X, rng.choice([0, 1], n)


def nb_error(fit):
    """The exception NaiveBayes raises for the same input (its message is the reference)."""
    try:
        fit(bnb.NaiveBayes(bnb.Categorical()))
    except (TypeError, ValueError) as err:
        return err
    raise AssertionError("NaiveBayes accepted it")


# ---------------------------------------------------------------------- labels
def test_continuous_labels_are_refused_as_naive_bayes_refuses_them():
    X, _ = data()
    y = np.random.default_rng(1).normal(size=len(X))
    with pytest.raises(ValueError, match="Unknown label type: continuous") as info:
        bnb.TreeAugmentedNB().fit(X, y)
    assert str(info.value) == str(nb_error(lambda nb: nb.fit(X, y)))
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        bnb.TreeAugmentedNB().fit(X, np.array([0.5, "a"] * 15, dtype=object))


def test_booleans_mixed_with_numbers_in_y_are_refused():
    X, _ = data(20)
    y = np.array([True, 1, 0, False] * 5, dtype=object)
    # TypeError, as NaiveBayes: the labels' types, not their values, are at fault
    with pytest.raises(TypeError, match=r"y mixes booleans and numbers \(True, 1\)") as info:
        bnb.TreeAugmentedNB().fit(X, y)
    assert str(info.value) == str(nb_error(lambda nb: nb.fit(X, y)))
    with pytest.raises(TypeError, match="y mixes booleans and numbers"):
        bnb.TreeAugmentedNB().fit(X, [True, 1, 0, False] * 5)


def test_missing_and_absent_labels_are_refused():
    X, y = data()
    with pytest.raises(ValueError, match="requires y to be passed"):
        bnb.TreeAugmentedNB().fit(X, None)
    with pytest.raises(ValueError, match=r"y has 1 missing labels \(first at row 2\)"):
        bnb.TreeAugmentedNB().fit(X, np.where(np.arange(30) == 2, np.nan, y))
    with pytest.raises(ValueError, match="X has 30 rows but y has 29 labels"):
        bnb.TreeAugmentedNB().fit(X, y[:-1])


# ---------------------------------------------------------------------- X
def test_complex_numbers_are_refused_at_fit_and_at_prediction():
    X, y = data()
    with pytest.raises(ValueError, match="Complex data not supported") as info:
        bnb.TreeAugmentedNB().fit(X.astype(complex), y)
    assert str(info.value) == str(nb_error(lambda nb: nb.fit(X.astype(complex), y)))
    frame = pd.DataFrame(X, columns=list("abc"))
    with pytest.raises(ValueError, match="column 'b': Complex data not supported"):
        bnb.TreeAugmentedNB().fit(frame.assign(b=frame["b"].astype(complex)), y)
    clf = bnb.TreeAugmentedNB().fit(X, y)
    with pytest.raises(ValueError, match="Complex data not supported"):
        clf.predict_proba(X[:2].astype(complex))


def test_booleans_mixed_with_numbers_in_a_column_are_refused():
    mixed = pd.DataFrame({"a": pd.Series([True, 1, 0, False] * 5, dtype=object),
                          "b": [0, 1] * 10})
    with pytest.raises(TypeError, match=r"column 'a' mixes booleans and numbers") as info:
        bnb.TreeAugmentedNB().fit(mixed, [0, 1] * 10)
    assert str(info.value) == str(nb_error(lambda nb: nb.fit(mixed, [0, 1] * 10)))


def test_booleans_against_number_levels_and_numbers_against_boolean_levels_are_refused():
    X, y = data()
    clf = bnb.TreeAugmentedNB().fit(X, y)
    with pytest.raises(TypeError, match=r"column 0: value True is a bool but the column's "
                                        r"levels are 0, 1, 2"):
        clf.predict_proba(X[:2] > 0)
    frame = pd.DataFrame({"flag": X[:, 0] > 0, "n": X[:, 1]})
    clf = bnb.TreeAugmentedNB().fit(frame, y)
    with pytest.raises(TypeError, match=r"column 'flag': value 1 is a number"):
        clf.predict_proba(frame.head(2).assign(flag=[1, 0]))


def test_an_unknown_column_at_prediction_is_refused():
    X, y = data()
    frame = pd.DataFrame(X, columns=list("abc"))
    clf = bnb.TreeAugmentedNB().fit(frame, y)
    with pytest.raises(ValueError, match=r"X has column\(s\) \['zzz'\] that the model was not "
                                         r"fitted on \(it reads \['a', 'b', 'c'\]\)"):
        clf.predict_proba(frame.head(2).assign(zzz=[100, 7]))
    with pytest.raises(ValueError, match=r"column 'c' of the fit is not in X, which has "
                                         r"column\(s\) \['cc'\]"):
        clf.predict_proba(frame.head(2).rename(columns={"c": "cc"}))


def test_a_sparse_matrix_is_refused_with_the_way_out():
    X, y = data()
    for make in (sp.csr_matrix, sp.csc_array):
        with pytest.raises(ValueError, match=r"scipy.sparse.*dense discrete columns.*"
                                             r"X.toarray\(\)"):
            bnb.TreeAugmentedNB().fit(make(X), y)
    clf = bnb.TreeAugmentedNB().fit(X, y)
    with pytest.raises(ValueError, match=r"X.toarray\(\)"):
        clf.predict_proba(sp.csr_matrix(X[:2]))


# ---------------------------------------------------------------------- weights, priors
@pytest.mark.parametrize("weight, message", [
    (np.zeros(30), "sample_weight is zero for every row: there is nothing to fit"),
    (np.r_[-1.0, np.ones(29)], "finite and non-negative"),
    (np.r_[np.nan, np.ones(29)], "finite and non-negative"),
    (np.ones(29), r"sample_weight must have shape \(30,\), got \(29,\)"),
    (["a"] * 30, "sample_weight must hold numbers"),
])
def test_sample_weights_are_checked_as_naive_bayes_checks_them(weight, message):
    X, y = data()
    with pytest.raises(ValueError, match=message) as info:
        bnb.TreeAugmentedNB().fit(X, y, sample_weight=weight)
    assert str(info.value) == str(nb_error(lambda nb: nb.fit(X, y, sample_weight=weight)))


def test_an_edge_prior_that_forbids_every_tree_gets_the_clear_message():
    X, y = data()
    disconnected = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0.0]])
    for prior in (np.zeros((3, 3)), disconnected):
        for tree in ("average", "map"):
            with pytest.raises(ValueError, match="edge_prior forbids every spanning tree"):
                bnb.TreeAugmentedNB(edge_prior=prior, tree=tree).fit(X, y)
    with pytest.raises(ValueError, match="no spanning tree"):
        max_spanning_tree(np.full((3, 3), -np.inf))
    assert max_spanning_tree(np.full((1, 1), -np.inf)) == []


# ---------------------------------------------------------------------- valid inputs
def test_valid_integer_string_and_boolean_columns_still_fit_and_predict_the_model():
    rng = np.random.default_rng(7)
    n = 40
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.7, y, 1 - y) + rng.integers(0, 2, n)  # levels 0, 1, 2
    s = np.array(["hi", "lo"])[np.where(rng.random(n) < 0.8, a % 2, rng.integers(0, 2, n))]
    b = rng.random(n) < np.where(y == 1, 0.7, 0.3)
    frame = pd.DataFrame({"n": a, "s": s, "b": b})
    codes = np.column_stack([a, (s == "lo").astype(int), b.astype(int)])  # sorted levels
    labels = np.array(["no", "yes"])[y]
    want = by_hand(codes, y, [3, 2, 2], codes[:6], ESS)

    clf = bnb.TreeAugmentedNB(alpha_ess=ESS).fit(frame, labels)
    np.testing.assert_allclose(clf.predict_proba(frame.head(6)), want, rtol=0, atol=1e-12)
    assert list(clf.classes_) == ["no", "yes"]
    assert clf.levels_ == ((0, 1, 2), ("hi", "lo"), (False, True))
    # columns matched by name in any order; positions for an array, object or not
    np.testing.assert_allclose(clf.predict_proba(frame.head(6)[["b", "n", "s"]]), want,
                               rtol=0, atol=1e-12)
    array = bnb.TreeAugmentedNB(alpha_ess=ESS).fit(frame.to_numpy(dtype=object), y)
    np.testing.assert_allclose(array.predict_proba(frame.head(6).to_numpy(dtype=object)), want,
                               rtol=0, atol=1e-12)
    listed = bnb.TreeAugmentedNB(alpha_ess=ESS).fit(frame.values.tolist(), labels.tolist())
    np.testing.assert_allclose(listed.predict_proba(frame.head(6).values.tolist()), want,
                               rtol=0, atol=1e-12)
    # whole-number floats, positive weights with zeros among them and boolean labels stay valid
    weighted = bnb.TreeAugmentedNB(alpha_ess=ESS).fit(
        frame.assign(n=a.astype(float)), y.astype(bool), sample_weight=(np.arange(n) > 0) * 1.0)
    dropped = by_hand(codes[1:], y[1:], [3, 2, 2], codes[:6], ESS)
    np.testing.assert_allclose(weighted.predict_proba(frame.head(6).assign(n=a[:6] * 1.0)),
                               dropped, rtol=0, atol=1e-12)
    assert weighted.classes_.tolist() == [False, True]


def test_the_advised_discretisation_fits_and_saves(tmp_path):
    """The refusal of non-whole numbers advised pandas.cut, whose Interval levels a TAN file
    cannot store: the advice now bins to numbers, and its model saves and loads exactly."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"u": rng.normal(size=60), "v": rng.integers(0, 3, 60)})
    y = np.where(X["u"] > 0, "p", "q")
    with pytest.raises(ValueError, match="not whole") as refused:
        bnb.TreeAugmentedNB().fit(X, y)
    advice = str(refused.value).split("e.g. ")[1].rstrip(".")
    binned = X.assign(u=eval(advice, {"pd": pd, "X": X}))  # noqa: S307
    clf = bnb.TreeAugmentedNB().fit(binned, y)
    loaded = bnb.TreeAugmentedNB.load(clf.save(tmp_path / "tan.bnb"))
    np.testing.assert_array_equal(loaded.predict_proba(binned), clf.predict_proba(binned))
