"""Decisions under a stated loss (``NaiveBayes.decide``/``expected_loss``, ``bayesnb
predict --loss``) against hand computation on scikit-learn's probabilities.

References: ``MultinomialNB(alpha=1)`` equals ``NaiveBayes(Multinomial(alpha=1), method="mean",
class_alpha=0)``, and ``GaussianNB(var_smoothing=0)`` equals ``method="ml"`` with
``class_alpha=0``; the expected loss is summed by explicit loops over the true class, and the
decision is the first minimiser found by a loop (the tie rule, written out)."""

import contextlib
import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.naive_bayes import GaussianNB, MultinomialNB

import bayesnb as bnb
from bayesnb.cli import main
from bayesnb.decisions import decide

RNG = np.random.default_rng(7)
X_COUNTS = RNG.integers(0, 5, size=(40, 4))
Y3 = np.array(["ham", "spam", "work"])[RNG.integers(0, 3, size=40)]
X_REAL = RNG.normal(size=(30, 2)) + np.repeat([[0.0, 0.0], [1.0, 0.5]], 15, axis=0)
Y2 = np.repeat(["a", "b"], 15)
LOSS3 = np.array([[0.0, 2.0, 1.0],   # true ham: choosing spam costs 2
                  [10.0, 0.0, 3.0],  # true spam: choosing ham costs 10
                  [1.0, 4.0, 0.0]])


def hand_expected_loss(proba, loss):
    out = np.zeros_like(proba)
    for i in range(proba.shape[0]):
        for a in range(proba.shape[1]):
            out[i, a] = sum(loss[c, a] * proba[i, c] for c in range(proba.shape[1]))
    return out


def hand_decide(rho, classes, cost=None, label=None):
    out = []
    for row in rho:
        best = 0
        for a in range(1, len(row)):
            if row[a] < row[best]:  # strictly smaller: an equal later one never wins
                best = a
        out.append(label if cost is not None and row[best] > cost else classes[best])
    return out


@pytest.fixture(scope="module")
def multinomial():
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0)
    return clf.fit(X_COUNTS, Y3), MultinomialNB(alpha=1.0).fit(X_COUNTS, Y3)


def test_expected_loss_and_decision_equal_hand_computation_on_sklearn_probabilities(
        multinomial, x64):
    clf, reference = multinomial
    proba = reference.predict_proba(X_COUNTS)
    rho = hand_expected_loss(proba, LOSS3)
    np.testing.assert_allclose(clf.expected_loss(X_COUNTS, loss=LOSS3), rho, rtol=1e-6)
    decided = clf.decide(X_COUNTS, loss=LOSS3)
    assert decided.tolist() == hand_decide(rho, list(reference.classes_))
    # the loss moves decisions away from predict: a missed "spam" is the dear mistake
    assert (decided != clf.predict(X_COUNTS)).any()


def test_gaussian_decisions_equal_sklearn_gaussian_nb(x64):
    clf = bnb.NaiveBayes(method="ml", class_alpha=0).fit(X_REAL, Y2)
    proba = GaussianNB(var_smoothing=0.0).fit(X_REAL, Y2).predict_proba(X_REAL)
    loss = np.array([[0.0, 1.0], [3.0, 0.0]])
    rho = hand_expected_loss(proba, loss)
    np.testing.assert_allclose(clf.expected_loss(X_REAL, loss=loss), rho, rtol=1e-6,
                               atol=1e-12)
    assert clf.decide(X_REAL, loss=loss).tolist() == hand_decide(rho, ["a", "b"])


def test_a_labelled_loss_in_another_order_is_reordered(multinomial):
    clf, _ = multinomial
    order = ["work", "ham", "spam"]
    labelled = pd.DataFrame(LOSS3, index=["ham", "spam", "work"],
                            columns=["ham", "spam", "work"]).loc[order, order[::-1]]
    np.testing.assert_array_equal(clf.expected_loss(X_COUNTS, loss=labelled),
                                  clf.expected_loss(X_COUNTS, loss=LOSS3))
    assert clf.decide(X_COUNTS, loss=labelled).tolist() == \
        clf.decide(X_COUNTS, loss=LOSS3).tolist()


def test_a_labelled_loss_of_boolean_classes_is_reordered_by_label():
    """Classes False and True: ``.loc[[False, True]]`` is a mask, which kept one row and
    column (refused as the wrong shape); the labels are read as labels, in any order."""
    X = np.array([[0.0], [0.2], [1.0], [1.2], [0.9], [0.1]])
    y = np.array([False, False, True, True, True, False])
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml").fit(X, y)
    plain = np.array([[0.0, 10.0], [1.0, 0.0]])  # rows: true False, True
    for order in ([False, True], [True, False]):
        at = [int(v) for v in order]  # row and column of each label in ``plain``
        labelled = pd.DataFrame(plain[np.ix_(at, at)], index=order, columns=order)
        np.testing.assert_array_equal(clf.expected_loss(X, loss=labelled),
                                      clf.predict_proba(X) @ plain)
        assert clf.decide(X, loss=labelled).tolist() == clf.decide(X, loss=plain).tolist()


def test_ties_go_to_the_first_class():
    clf = bnb.NaiveBayes(bnb.Bernoulli(), method="mean").fit([[0], [1]], ["x", "y"])
    # the two classes are symmetric at every row: p = (0.5, 0.5) for a missing value
    x = np.array([[np.nan], [0.0]])
    np.testing.assert_allclose(clf.predict_proba(x)[0], [0.5, 0.5])
    assert clf.decide(x[:1], loss=1 - np.eye(2)).tolist() == ["x"]
    # equal columns of the loss: every row ties, and the more probable class is chosen
    same = np.array([[1.0, 1.0], [2.0, 2.0]])
    assert clf.decide(np.array([[np.nan], [0.0], [1.0]]), loss=same).tolist() == ["x", "x", "y"]


def test_an_exact_tie_of_probabilities_is_decided_as_predict_decides_it():
    """p = (2, 4, 1, 4) / 11: b and d tie exactly, but ``proba @ loss`` summed their other
    classes in different orders (0.6363636363636364 against ...62), so the 0-1 loss chose d
    where predict chose b."""
    X, y = np.array([[0, 0], [0, 0], [1, 1], [0, 1]]), np.array(["d", "b", "c", "a"])
    clf = bnb.NaiveBayes(bnb.Categorical(categories=[[0, 1]] * 2), method="mean").fit(X, y)
    proba = clf.predict_proba([[0, 0]])
    assert proba[0, 1] == proba[0, 3]
    assert clf.predict([[0, 0]]).tolist() == clf.decide([[0, 0]], 1 - np.eye(4)).tolist() == ["b"]
    p = np.array([[2, 4, 1, 4]]) / 11.0
    assert decide(p, 1 - np.eye(4), np.array(list("abcd"))).tolist() == ["b"]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=2, max_size=6))
def test_zero_one_decisions_are_the_first_most_probable_class(weights):
    """Probabilities of small integer weights, full of exact ties: the 0-1 loss decides as
    ``np.argmax`` (the first of the most probable)."""
    p = np.array([weights], dtype=np.float64) / sum(weights)
    classes = np.arange(len(weights))
    assert decide(p, 1 - np.eye(len(weights)), classes).tolist() == [int(np.argmax(p))]


def test_reject_option_follows_hand_computation(multinomial, x64):
    clf, reference = multinomial
    rho = hand_expected_loss(reference.predict_proba(X_COUNTS), LOSS3)
    cost = float(np.median(rho.min(axis=1)))
    decided = clf.decide(X_COUNTS, loss=LOSS3, reject_cost=cost, reject_label="review")
    assert decided.tolist() == hand_decide(rho, list(reference.classes_), cost, "review")
    assert 0 < (decided == "review").sum() < len(decided)
    # default reject label: None
    assert clf.decide(X_COUNTS, loss=LOSS3, reject_cost=-1.0).tolist() == [None] * 40


def test_chow_rule_under_the_zero_one_loss(multinomial):
    clf, _ = multinomial
    proba = clf.predict_proba(X_COUNTS)
    decided = clf.decide(X_COUNTS, loss=1 - np.eye(3), reject_cost=0.4, reject_label="?")
    expected = np.where(proba.max(axis=1) < 0.6, "?", clf.predict(X_COUNTS))
    assert decided.tolist() == expected.tolist()


@settings(max_examples=5, deadline=None)
@given(st.floats(0.1, 100.0))
def test_zero_one_loss_is_predict(multinomial, scale):
    clf, _ = multinomial
    loss = scale * (1 - np.eye(3))  # any positive multiple of the 0-1 loss
    assert clf.decide(X_COUNTS, loss=loss).tolist() == clf.predict(X_COUNTS).tolist()


def test_gains_as_negative_losses(multinomial):
    clf, _ = multinomial
    gain = -np.diag([1.0, 5.0, 1.0])  # a found spam is worth 5
    rho = clf.expected_loss(X_COUNTS, loss=gain)
    np.testing.assert_allclose(rho, -clf.predict_proba(X_COUNTS) * [1.0, 5.0, 1.0])
    assert set(clf.decide(X_COUNTS, loss=gain)) <= {"ham", "spam", "work"}


@pytest.mark.parametrize("loss, message", [
    (np.zeros((2, 2)), r"shape \(3, 3\)"),
    (np.full((3, 3), np.nan),
     r"loss\['ham', 'ham'\] is nan: every loss must be a finite number"),
    ([[0, 1, "x"], [1, 0, 1], [1, 1, 0]], "array of numbers"),
    (pd.DataFrame(np.zeros((2, 2)), index=["ham", "spam"], columns=["ham", "spam"]),
     r"index \(true class\) gives no entry for class\(es\) \['work'\]"),
    (pd.DataFrame(np.zeros((3, 3)), index=["ham", "spam", "work"],
                  columns=["ham", "spam", "wrk"]),
     r"columns \(chosen class\) has label\(s\) \['wrk'\] that are not classes"),
])
def test_bad_losses_are_clear_errors(multinomial, loss, message):
    clf, _ = multinomial
    with pytest.raises(ValueError, match=message):
        clf.decide(X_COUNTS[:2], loss=loss)


@pytest.mark.parametrize("cost", [np.inf, "0.5", True])
def test_bad_reject_costs_are_refused(multinomial, cost):
    clf, _ = multinomial
    with pytest.raises(ValueError, match="reject_cost must be a finite number"):
        clf.decide(X_COUNTS[:2], loss=LOSS3, reject_cost=cost)


def _cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def test_cli_predict_with_a_loss_file(tmp_path):
    model, loss_file = tmp_path / "pt.bnb", tmp_path / "loss.csv"
    assert _cli("fit", "playtennis", "--method", "bayes", "-o", model)[0] == 0
    loss_file.write_text("true,Yes,No\nYes,0,4\nNo,1,0\n")  # header and rows in another order
    code, out, _ = _cli("predict", model, "playtennis", "--loss", loss_file,
                        "--reject-cost", "0.5", "--reject-label", "ask")
    assert code == 0
    table = pd.read_csv(io.StringIO(out))
    p_no, p_yes = table["p_No"].to_numpy(), table["p_Yes"].to_numpy()
    np.testing.assert_allclose(table["expected_loss_No"], 4 * p_yes, rtol=1e-5)
    np.testing.assert_allclose(table["expected_loss_Yes"], 1 * p_no, rtol=1e-5)
    rho = np.column_stack([4 * p_yes, p_no])
    expected = np.where(rho.min(axis=1) > 0.5, "ask",
                        np.array(["No", "Yes"])[rho.argmin(axis=1)])
    assert table["decision"].tolist() == expected.tolist()
    code, _, err = _cli("predict", model, "playtennis", "--loss", tmp_path / "none.csv")
    assert code == 2 and "--loss: " in err and "is not a file" in err
    loss_file.write_text(",No,Maybe\nNo,0,1\nYes,4,0\n")
    code, _, err = _cli("predict", model, "playtennis", "--loss", loss_file)
    assert code == 2 and "column label 'Maybe' is not a class of the model" in err


def test_the_tie_window_is_the_rounding_of_each_row_not_of_the_largest_loss():
    """The window of ties was 2 K eps max|L| for every row: one loss of 1e8 (a catastrophic,
    here improbable, class) made choices 1e-7 apart ties, and the more probable class won
    with an expected loss 3e-9 above the other's (hunt 47). The window is now each row's
    rounding, 2 K eps max_a sum_c |p_c L_ca|; exact ties still go to the more probable."""
    from bayesnb.decisions import decide

    classes = np.array(["a", "b", "c"])
    p = np.array([[0.5 + 1e-9, 0.5 - 1e-9, 0.0], [0.5, 0.5, 0.0]])
    loss = np.array([[0, 1, 1], [1 + 1e-8, 0, 1], [1e8, 1e8, 0]])
    assert (p @ loss)[0, 0] - (p @ loss)[0, 1] == pytest.approx(3e-9, rel=1e-3)
    assert decide(p[:1], loss, classes).tolist() == ["b"]
    tie = np.array([[0, 1], [1, 0]])  # 0-1 loss, an exact tie: the first of the most probable
    assert decide(np.array([[0.5, 0.5]]), tie, classes[:2]).tolist() == ["a"]


def test_a_reject_label_that_is_a_class_is_refused():
    """NaiveBayes.decide(..., reject_label=<a class>) returned ['a', 'a'] for a rejected row
    and a row of class a (the CLI refused it; hunt 47)."""
    X, y = np.array([[0.0], [0.1], [1.0], [1.1]]), np.array(["a", "a", "b", "b"])
    clf = bnb.NaiveBayes(method="ml").fit(X, y)
    loss = np.array([[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="reject_label='a' is a class label"):
        clf.decide(np.array([[0.55], [0.0]]), loss=loss, reject_cost=0.2, reject_label="a")
    got = clf.decide(np.array([[0.55], [0.0]]), loss=loss, reject_cost=0.2, reject_label="?")
    assert got.tolist() == ["?", "a"]
