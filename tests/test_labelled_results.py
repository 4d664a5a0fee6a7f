"""Labelled results (issue 40, point 6): arrays stay arrays; structured results and tables
carry the classes, the column names and the rows' index, with the unlabelled numbers."""

import numpy as np
import pandas as pd
import pytest

import bayesnb as bnb
from bayesnb.analysis import decision_function, encode_linear, linear_weights

CLASSES = ["no", "yes"]


def mixed(n=80, seed=0, index=None):
    """Two named classes; a Categorical, a Gaussian, a Bernoulli, a Poisson column and a
    two-word Multinomial block, under a string index unless ``index`` is given."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.45, "yes", "no")
    yes = y == "yes"
    X = pd.DataFrame({
        "colour": np.where(yes, rng.choice(["red", "green", "blue"], n, p=[.6, .3, .1]),
                           rng.choice(["red", "green", "blue"], n, p=[.2, .3, .5])),
        "size": rng.normal(np.where(yes, 1.0, -0.5), 1.0),
        "flag": (rng.random(n) < np.where(yes, 0.7, 0.3)).astype(float),
        "visits": rng.poisson(np.where(yes, 3.0, 1.0)),
        "w1": rng.poisson(np.where(yes, 4.0, 1.0)),
        "w2": rng.poisson(np.where(yes, 1.0, 3.0)),
    }, index=[f"row-{i}" for i in range(n)][::-1] if index is None else index)
    return X, y


def spec(named=True):
    cols = ["colour", "size", "flag", "visits", "w1", "w2"]
    key = (lambda c: c) if named else cols.index
    return {key("colour"): bnb.Categorical(), key("size"): bnb.Gaussian(),
            key("flag"): bnb.Bernoulli(alpha=2.0, beta=1.5),
            key("visits"): bnb.Poisson(), (key("w1"), key("w2")): bnb.Multinomial()}


def fitted(method="bayes"):
    """The same model fitted on the DataFrame and on its values (an object array)."""
    X, y = mixed()
    named = bnb.NaiveBayes(spec(), method=method).fit(X, y)
    plain = bnb.NaiveBayes(spec(named=False), method=method).fit(
        X.to_numpy(dtype=object), y)
    return X, y, named, plain


# ---------------------------------------------------------------- predict_uncertainty
def test_predict_uncertainty_stays_numpy_and_to_frame_labels_the_same_numbers(x64):
    X, y, named, plain = fitted()
    test = X.iloc[5:25]
    # the same seed draws the same numbers for both (their sites are named differently)
    u = named.predict_uncertainty(test, draws=named.sample_posterior(300, seed=3),
                                  interval=0.8)
    v = plain.predict_uncertainty(test.to_numpy(dtype=object),
                                  draws=plain.sample_posterior(300, seed=3), interval=0.8)
    assert list(u) == list(v) == ["proba", "lower", "upper", "entropy", "aleatoric",
                                  "mutual_info"]
    for key in u:  # the dict's values are NumPy arrays whatever the input, and equal
        assert type(u[key]) is np.ndarray and type(v[key]) is np.ndarray, key
        np.testing.assert_array_equal(u[key], v[key], err_msg=key)
    # the predictive is the model's (independent path: predict_proba under "bayes" is exact)
    np.testing.assert_allclose(u["proba"], named.predict_proba(test), atol=0.05)

    frame = u.to_frame()
    assert list(frame.index) == list(test.index)  # strings, in the input's (reversed) order
    assert frame.columns.names == ["quantity", "class"]
    for key in ("proba", "lower", "upper"):
        part = frame[key]
        assert list(part.columns) == CLASSES
        np.testing.assert_array_equal(part.to_numpy(), u[key])
    for key in ("entropy", "aleatoric", "mutual_info"):
        assert isinstance(frame[key], pd.Series)
        np.testing.assert_array_equal(frame[key].to_numpy(), u[key])
    assert frame.loc["row-70", ("proba", "yes")] == u["proba"][list(test.index).index(
        "row-70"), 1]

    plain_frame = v.to_frame()  # an array's rows are its positions
    pd.testing.assert_index_equal(plain_frame.index, pd.RangeIndex(len(test)))
    np.testing.assert_array_equal(plain_frame.to_numpy(), frame.to_numpy())


def test_predict_uncertainty_keeps_an_integer_index_that_is_not_positions(x64):
    X, y = mixed(index=np.arange(100, 180)[::-1])
    clf = bnb.NaiveBayes(spec(), method="mean").fit(X, y)
    test = X.iloc[[3, 0, 7]]
    frame = clf.predict_uncertainty(test, num_draws=50).to_frame()
    assert list(frame.index) == [176, 179, 172]


# ---------------------------------------------------------------- leave-one-out
def test_loo_to_frame_is_indexed_as_x(x64):
    X, y, named, plain = fitted("mean")
    a, b = named.loo(X, y), plain.loo(X.to_numpy(dtype=object), y)
    assert type(a.pointwise) is np.ndarray and type(b.pointwise) is np.ndarray
    np.testing.assert_array_equal(a.pointwise, b.pointwise)
    assert (a.elpd_loo, a.se) == (b.elpd_loo, b.se)
    frame = a.to_frame()
    pd.testing.assert_index_equal(frame.index, X.index)
    np.testing.assert_array_equal(frame["loo_log_p"].to_numpy(), a.pointwise)
    pd.testing.assert_index_equal(b.to_frame().index, pd.RangeIndex(len(y)))
    assert "index" not in repr(a)


# ---------------------------------------------------------------- posterior_
def test_posterior_tables_label_posterior_with_classes_columns_and_levels(x64):
    X, y, named, plain = fitted()
    tables = named.posterior_tables()
    assert set(tables) == {"colour", "size", "flag", "visits", ("w1", "w2")}
    for frame in tables.values():
        assert list(frame.index) == CLASSES and frame.index.name == "class"
    yes, no = y == "yes", y == "no"
    # by hand from the data: Dirichlet(1) + level counts, Beta(2, 1.5) + ones and zeros
    colour = tables["colour"]["alpha"]
    assert list(colour.columns) == ["blue", "green", "red"]
    for label, rows in (("no", no), ("yes", yes)):
        counts = X.loc[rows, "colour"].value_counts()
        np.testing.assert_array_equal(colour.loc[label], [1 + counts.get(v, 0)
                                                          for v in colour.columns])
        ones = X.loc[rows, "flag"].sum()
        assert tables["flag"].loc[label, "alpha"] == 2.0 + ones
        assert tables["flag"].loc[label, "beta"] == 1.5 + rows.sum() - ones
        words = tables[("w1", "w2")]["alpha"]
        np.testing.assert_array_equal(words.loc[label], 1 + X.loc[rows, ["w1", "w2"]].sum())
    assert list(tables["flag"].columns) == ["alpha", "beta"]
    assert list(tables["visits"].columns) == ["shape", "rate"]
    assert list(tables["size"].columns) == ["loc", "kappa", "shape", "rate"]
    assert list(tables[("w1", "w2")]["alpha"].columns) == ["w1", "w2"]
    # every number is posterior_'s own, and an array fit's tables are the same by position
    by_block = dict(zip([tuple(b.schema.columns) for b in named.blocks_], named.posterior_,
                        strict=True))
    np.testing.assert_array_equal(tables["size"]["kappa"],
                                  np.asarray(by_block[("size",)].kappa)[:, 0])
    np.testing.assert_array_equal(tables["visits"]["rate"],
                                  np.asarray(by_block[("visits",)].rate)[:, 0])
    plain_tables = plain.posterior_tables()
    assert set(plain_tables) == {0, 1, 2, 3, (4, 5)}
    for key, frame in tables.items():
        other = plain_tables[(4, 5) if key == ("w1", "w2") else list(X.columns).index(key)]
        np.testing.assert_array_equal(frame.to_numpy(), other.to_numpy())
    # the NamedTuples themselves are unchanged
    assert all(hasattr(p, "_fields") for p in named.posterior_)


# ---------------------------------------------------------------- the linear view
def test_encode_linear_is_labelled_and_decision_function_stays_numpy(x64):
    rng = np.random.default_rng(4)
    n = 60
    y = np.where(rng.random(n) < 0.5, "yes", "no")
    X = pd.DataFrame({"colour": rng.choice(["red", "blue"], n),
                      "flag": (rng.random(n) < np.where(y == "yes", .7, .3)).astype(float)},
                     index=pd.Index([f"id{i:02d}" for i in range(n)], name="id"))
    features = {"colour": bnb.Categorical(), "flag": bnb.Bernoulli()}
    named = bnb.NaiveBayes(features, method="mean").fit(X, y)
    plain = bnb.NaiveBayes({0: bnb.Categorical(), 1: bnb.Bernoulli()}, method="mean").fit(
        X.to_numpy(dtype=object), y)
    test = X.iloc[::-3]
    enc = encode_linear(named, test)
    W, b = linear_weights(named)
    assert list(enc.columns) == list(W.columns)
    assert list(enc.columns) == ["colour=blue", "colour=red", "colour=<unseen>", "flag",
                                 "flag:observed"]
    pd.testing.assert_index_equal(enc.index, test.index)
    plain_enc = encode_linear(plain, test.to_numpy(dtype=object))
    pd.testing.assert_index_equal(plain_enc.index, pd.RangeIndex(len(test)))
    np.testing.assert_array_equal(plain_enc.to_numpy(), enc.to_numpy())
    scores = decision_function(named, test)
    assert type(scores) is np.ndarray
    np.testing.assert_array_equal(scores, decision_function(plain, test.to_numpy(dtype=object)))
    np.testing.assert_allclose(scores, enc.to_numpy() @ W.to_numpy().T + b.to_numpy())


def test_predictions_stay_numpy_for_a_dataframe_fit():
    X, y = mixed()
    clf = bnb.NaiveBayes(spec(), method="mean").fit(X, y)
    for out in (clf.predict(X), clf.predict_proba(X), clf.predict_log_proba(X),
                clf.predict_joint_log_proba(X)):
        assert type(out) is np.ndarray


@pytest.mark.parametrize("method", ["mean", "bayes"])
def test_explain_is_labelled_by_class_and_column(method, x64):
    X, y, named, plain = fitted(method)
    row = X.loc["row-3"]
    a, b = named.explain(row), plain.explain(list(row))
    assert list(a.columns) == CLASSES
    assert list(a.index) == ["prior", "colour", "size", "flag", "visits", ("w1", "w2"),
                             "joint", "posterior"]
    np.testing.assert_allclose(a.loc["posterior"], named.predict_proba(X.loc[["row-3"]])[0],
                               rtol=1e-9)
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
