"""Input checks of ``join_columns`` / ``JoinColumns`` and of ``explain`` /
``weight_of_evidence``.

* An array given to the joiner keeps its dtype: the columns it does not join stay numbers (a
  float array's measurements stay Gaussian in the ``Pipeline``), and the joined model equals
  the same data given as a DataFrame, and an independent computation (scikit-learn's
  ``GaussianNB`` for the measurements, the class frequencies of the joined values).
* ``JoinColumns`` has ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame) and
  refuses, at transform, columns other than those it was fitted on.
* ``explain`` and ``weight_of_evidence`` refuse a column the model does not know, as
  ``predict_proba`` does (its value would silently be left out of the explanation).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline

import bayesnb as bnb
from bayesnb.datasets import load_playtennis


# ---------------------------------------------------------------------- join_columns
@pytest.fixture(scope="module")
def copied_pair():
    """A discrete column, its copy, and two measurements; as an array and as a DataFrame."""
    rng = np.random.default_rng(0)
    n = 200
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.8, y, 1 - y)
    X = np.column_stack([a, a, rng.normal(y * 1.0, 1.0, n), rng.normal(size=n)])
    return X, pd.DataFrame(X, columns=["a", "b", "m1", "m2"]), y


def test_join_columns_on_an_array_keeps_the_other_columns_numbers(copied_pair):
    X, frame, _ = copied_pair
    out = bnb.join_columns(X, [(0, 1)])
    assert list(out.columns) == ["0&1", 2, 3]
    assert out["0&1"].dtype == object
    assert out[2].dtype == np.float64 and out[3].dtype == np.float64
    np.testing.assert_array_equal(out[[2, 3]].to_numpy(), X[:, 2:])
    # the joined values are those of the DataFrame form (1.0 written as 1)
    named = bnb.join_columns(frame, [("a", "b")])
    assert out["0&1"].tolist() == named["a&b"].tolist()
    assert set(out["0&1"]) <= {"0&0", "1&1"}
    # integer and boolean arrays keep their dtype too
    ints = bnb.join_columns(X.astype(np.int64)[:, :3], [(0, 1)])
    assert ints[2].dtype == np.int64
    flags = bnb.join_columns(X[:, :3] > 0.5, [(0, 1)])
    assert flags[2].dtype == bool and set(flags["0&1"]) <= {"False&False", "True&True"}


def test_join_columns_on_mixed_rows_keeps_each_cell():
    """Rows mixing text and numbers (NumPy would read every cell as text: 1.0 as '1.0')."""
    out = bnb.join_columns([["x", 1.0, 2.5], ["y", 0.0, 3.5]], [(0, 1)])
    assert out["0&1"].tolist() == ["x&1", "y&0"]
    assert out[2].tolist() == [2.5, 3.5] and all(isinstance(v, float) for v in out[2])


def test_join_columns_refuses_an_array_that_is_not_2d_or_sparse():
    from scipy import sparse

    with pytest.raises(ValueError, match=r"X must be 2-D.*\(3,\)\. Reshape your data"):
        bnb.join_columns(np.array([1.0, 2.0, 3.0]), [(0, 1)])
    with pytest.raises(ValueError, match="sparse input is not supported"):
        bnb.join_columns(sparse.csr_matrix(np.eye(3)), [(0, 1)])
    with pytest.raises(ValueError, match="sparse input is not supported"):
        bnb.JoinColumns([(0, 1)]).fit(sparse.csr_matrix(np.eye(3)))


def test_pipeline_on_an_array_equals_the_dataframe_and_gaussian_nb(copied_pair, x64):
    X, frame, y = copied_pair
    settings = dict(method="ml", class_alpha=0)
    on_array = make_pipeline(bnb.JoinColumns([(0, 1)]), bnb.NaiveBayes(**settings)).fit(X, y)
    on_frame = make_pipeline(bnb.JoinColumns([("a", "b")]),
                             bnb.NaiveBayes(**settings)).fit(frame, y)
    assert [(type(b.family).__name__, b.schema.columns) for b in on_array[-1].blocks_] == \
        [("Categorical", ("0&1",)), ("Gaussian", (2, 3))]
    proba = on_array.predict_proba(X)
    np.testing.assert_allclose(proba, on_frame.predict_proba(frame), rtol=1e-10)

    # independently: GaussianNB's joint log likelihood of the measurements (its class prior
    # the class frequencies, as class_alpha=0) plus the log frequency of the joined value
    sk = GaussianNB(var_smoothing=0.0).fit(X[:, 2:], y)
    joined = pd.Series([f"{int(u)}&{int(v)}" for u, v in X[:, :2]])
    freq = pd.crosstab(y, joined, normalize="index")  # p(a&b | class) by maximum likelihood
    joint = sk.predict_joint_log_proba(X[:, 2:]) + np.log(freq[joined].to_numpy().T)
    expected = np.exp(joint - np.logaddexp.reduce(joint, axis=1, keepdims=True))
    np.testing.assert_allclose(proba, expected, rtol=1e-6, atol=1e-12)


def test_new_measurement_values_are_not_unseen_levels(copied_pair):
    """The tester's report: every new measurement was a 'never seen' Categorical level."""
    X, _, y = copied_pair
    pipe = make_pipeline(bnb.JoinColumns([(0, 1)]), bnb.NaiveBayes()).fit(X, y)
    shifted = X[:3] + [0, 0, 0.001, 0.001]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an UnseenCategoryWarning fails the test
        proba = pipe.predict_proba(shifted)
    np.testing.assert_allclose(proba, pipe.predict_proba(X[:3]), atol=1e-2)


# ---------------------------------------------------------------------- JoinColumns
def test_join_columns_transformer_records_its_input(copied_pair):
    X, frame, y = copied_pair
    on_frame = bnb.JoinColumns([("a", "b")]).fit(frame, y)
    assert on_frame.n_features_in_ == 4
    assert on_frame.feature_names_in_.tolist() == ["a", "b", "m1", "m2"]
    assert on_frame.get_feature_names_out().tolist() == ["a&b", "m1", "m2"]
    on_array = bnb.JoinColumns([(0, 1)]).fit(X, y)
    assert on_array.n_features_in_ == 4
    assert not hasattr(on_array, "feature_names_in_")  # an array's columns have no names
    assert on_array.get_feature_names_out().tolist() == ["0&1", 2, 3]
    # refitted on an array, the names of an earlier DataFrame are gone
    refit = bnb.JoinColumns([(0, 1)]).fit(frame.set_axis(range(4), axis=1), y).fit(X, y)
    assert not hasattr(refit, "feature_names_in_") and refit.n_features_in_ == 4


#: scikit-learn's (and NaiveBayes's) message for a wrong number of columns
WIDTH = "X has {} features, but JoinColumns is expecting 4 features as input"


def test_join_columns_transformer_refuses_other_columns(copied_pair):
    X, frame, y = copied_pair
    on_array = bnb.JoinColumns([(0, 1)]).fit(X, y)
    with pytest.raises(ValueError, match=WIDTH.format(3)):
        on_array.transform(X[:, :3])
    with pytest.raises(ValueError, match=WIDTH.format(5)):
        on_array.transform(np.column_stack([X, X[:, :1]]))
    on_frame = bnb.JoinColumns([("a", "b")]).fit(frame, y)
    with pytest.raises(ValueError, match=r"has column\(s\) \['m3'\] it was not fitted on"):
        on_frame.transform(frame.assign(m3=1.0))
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['m2'\]"):
        on_frame.transform(frame.drop(columns="m2"))
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['m2'\] and has column\(s\) "
                                         r"\['m22'\]"):
        on_frame.transform(frame.rename(columns={"m2": "m22"}))
    with pytest.raises(ValueError, match=WIDTH.format(3)):
        on_frame.transform(X[:, :3])
    with pytest.raises(ValueError, match="input_features has 3 names"):
        on_frame.get_feature_names_out(["a", "b", "m1"])


def test_join_columns_transformer_matches_columns_by_name_or_position(copied_pair):
    X, frame, y = copied_pair
    on_frame = bnb.JoinColumns([("a", "b")]).fit(frame, y)
    expected = on_frame.transform(frame)
    # a DataFrame in another order is read by name; an array by position
    pd.testing.assert_frame_equal(on_frame.transform(frame[["m2", "b", "a", "m1"]]),
                                  expected[["m2", "a&b", "m1"]])
    pd.testing.assert_frame_equal(on_frame.transform(X), expected)
    on_array = bnb.JoinColumns([(0, 1)]).fit(X, y)
    pd.testing.assert_frame_equal(on_array.transform(frame),
                                  expected.set_axis(["0&1", 2, 3], axis=1))


# ---------------------------------------------------------------------- explain
@pytest.fixture(scope="module")
def tennis():
    days, play = load_playtennis()
    return days, play, bnb.NaiveBayes().fit(days, play)


def _as_row(days, form):
    row = days.head(1).assign(Humidityy="Normal")  # a misspelt copy: a column it does not know
    return {"DataFrame": row, "Series": row.iloc[0], "dict": row.iloc[0].to_dict()}[form]


@pytest.mark.parametrize("form", ["DataFrame", "Series", "dict"])
def test_explain_refuses_an_unknown_column_as_predict_proba_does(tennis, form):
    days, _, clf = tennis
    row = _as_row(days, form)
    with pytest.raises(ValueError, match=r"\['Humidityy'\] that the model was not fitted on") \
            as predicted:
        clf.predict_proba(days.head(1).assign(Humidityy="Normal"))
    with pytest.raises(ValueError, match=r"\['Humidityy'\] that the model was not fitted on") \
            as explained:
        clf.explain(row)
    assert str(explained.value) == str(predicted.value)
    with pytest.raises(ValueError, match=r"\['Humidityy'\] that the model was not fitted on"):
        clf.weight_of_evidence(row, "No", "Yes")


@pytest.mark.parametrize("form", ["DataFrame", "Series", "dict"])
def test_explain_reads_an_absent_column_as_missing_as_predict_proba_does(tennis, form):
    """A row without Humidity (and no unknown column): its factor is 1 in every class, with
    predict_proba's warning, and the posterior is predict_proba's of the same row."""
    from bayesnb._blocks import AbsentColumnWarning

    days, _, clf = tennis
    row = days.head(1).drop(columns="Humidity")
    given = {"DataFrame": row, "Series": row.iloc[0], "dict": row.iloc[0].to_dict()}[form]
    with pytest.warns(AbsentColumnWarning, match="Humidity"):
        factors = clf.explain(given)
    with pytest.warns(AbsentColumnWarning, match="Humidity"):
        proba = clf.predict_proba(row)
    np.testing.assert_array_equal(factors.loc["Humidity"].to_numpy(), [1.0, 1.0])
    np.testing.assert_allclose(factors.loc["posterior"].to_numpy(), proba[0], rtol=1e-12)
    with pytest.warns(AbsentColumnWarning, match="Humidity"):
        assert clf.weight_of_evidence(given, "No", "Yes")["Humidity"] == 0.0


@pytest.mark.parametrize("form", ["DataFrame", "Series", "dict"])
def test_explain_still_refuses_a_missing_column_naming_the_misspelling(tennis, form):
    days, _, clf = tennis
    row = _as_row(days, form)
    row = row.drop(columns="Humidity") if form == "DataFrame" else (
        row.drop("Humidity") if form == "Series" else
        {k: v for k, v in row.items() if k != "Humidity"})
    with pytest.raises(ValueError, match=r"'Humidity' seen at fit is missing.*'Humidityy'"):
        clf.explain(row)


@pytest.mark.parametrize("form", ["DataFrame", "Series", "dict"])
def test_explain_of_a_row_with_the_model_columns_is_unchanged(tennis, form):
    """The model's own columns, in any order, explain as before: the posterior is the
    prediction, and the weights of evidence sum to the posterior log odds."""
    days, _, clf = tennis
    row = days.iloc[[4], ::-1]  # the columns reversed
    x = {"DataFrame": row, "Series": row.iloc[0], "dict": row.iloc[0].to_dict()}[form]
    proba = clf.predict_proba(days.iloc[[4]])[0]
    explained = clf.explain(x)
    np.testing.assert_allclose(explained.loc["posterior"].to_numpy(), proba, rtol=1e-5)
    assert list(explained.index) == ["prior", *days.columns, "joint", "posterior"]
    woe = clf.weight_of_evidence(x, "No", "Yes")
    np.testing.assert_allclose(woe["posterior"], np.log(proba[0] / proba[1]), rtol=1e-4)
    np.testing.assert_allclose(woe.drop("posterior").sum(), woe["posterior"], rtol=1e-4)


def test_explain_of_an_array_model_still_reads_positions():
    days, play = load_playtennis()
    codes = days.apply(lambda c: c.astype("category").cat.codes).to_numpy()
    clf = bnb.NaiveBayes(bnb.Categorical()).fit(codes, play)
    explained = clf.explain(codes[0])
    np.testing.assert_allclose(explained.loc["posterior"].to_numpy(),
                               clf.predict_proba(codes[:1])[0], rtol=1e-5)
    with pytest.raises(ValueError, match="x has 5 values but the model has 4 columns"):
        clf.explain(np.append(codes[0], 0))
