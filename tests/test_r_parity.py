"""Parity with R's naive Bayes (issue 41): missing labels, R's ``sd()`` variance, factor level
order, fitted columns absent at prediction, scikit-learn's ``n_categories_``/``epsilon_`` and
decayed streams.

References: R's printed output (e1071 1.7-13 on R 4.x; the R code is beside each literal),
scikit-learn, ``scipy.stats.norm`` and hand computation.
"""

import os
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.naive_bayes import CategoricalNB, GaussianNB

import bayesnb as bnb
from bayesnb._blocks import AbsentColumnWarning
from bayesnb._missing_labels import MissingLabelWarning
from bayesnb.datasets import load_temperature

MODELS = os.path.join(os.path.dirname(__file__), os.pardir, "models")

# ---------------------------------------------------------------------- R's printed output
# library(e1071); options(digits = 15)
# m <- naiveBayes(Species ~ ., data = iris); m$tables     (columns: mean, sd)
IRIS_MEAN = np.array([[5.006, 3.428, 1.462, 0.246],
                      [5.936, 2.770, 4.260, 1.326],
                      [6.588, 2.974, 5.552, 2.026]])
IRIS_SD = np.array([[0.352489687213451, 0.379064369096289, 0.173663996480184, 0.105385589380046],
                    [0.516171147063863, 0.313798323378411, 0.469910977239958, 0.197752680004544],
                    [0.635879593274432, 0.322496638172637, 0.551894695663983, 0.274650055636667]])
# predict(m, iris[c(1, 51, 101, 71, 84, 134), ], type = "raw")
IRIS_ROWS = [0, 50, 100, 70, 83, 133]
IRIS_RAW = np.array([[1.00000000000000e+00, 2.98130936140825e-18, 2.15237312183092e-25],
                     [4.89304818423551e-107, 8.01865280411382e-01, 1.98134719588618e-01],
                     [3.99375466646338e-249, 1.03103165161645e-10, 9.99999999896897e-01],
                     [1.05334129596044e-127, 1.60936052482134e-01, 8.39063947517866e-01],
                     [1.08730157056145e-132, 6.13435476698860e-01, 3.86564523301140e-01],
                     [1.12861321606463e-128, 7.11894831466586e-01, 2.88105168533414e-01]])
# Two columns absent at prediction: e1071 reads them as NA (with a "type mismatch" warning)
# predict(m, iris[c(1, 51, 101), c("Sepal.Length", "Petal.Length")], type = "raw")
IRIS_ABSENT = np.array([[9.99999999320999e-01, 6.78994452481650e-10, 6.39048558131462e-15],
                        [5.83638742323024e-82, 3.11736237611561e-01, 6.88263762388439e-01],
                        [5.56255887266123e-151, 1.82800565665371e-03, 9.98171994343346e-01]])
# Seed 003's temperatures, two more rows with a missing label (R leaves them out):
# t <- data.frame(T = c(25.2, 19.3, 18.5, 21.7, 20.1, 24.3, 22.8, 23.1, 19.8,
#                       27.3, 30.1, 17.4, 29.5, 15.1, 40, 10),
#                 P = factor(c(rep("Yes", 9), rep("No", 5), NA, NA)))
# m <- naiveBayes(P ~ T, data = t); m$apriori; m$tables
TEMP_APRIORI = {"No": 5, "Yes": 9}
TEMP_TABLE = {"No": (23.8800000000000, 7.08956980359175),
              "Yes": (21.6444444444444, 2.35377946668284)}
# predict(m, data.frame(T = c(16, 22, 28)), type = "raw")   (columns No, Yes)
TEMP_QUERY = [16.0, 22.0, 28.0]
TEMP_RAW = np.array([[0.638114204134854, 0.361885795865146],
                     [0.152627558988153, 0.847372441011847],
                     [0.856455153413324, 0.143544846586676]])
# A factor whose levels are not sorted, one of them unused:
# d <- data.frame(u = factor(c("low", "high", "mid", "low", "high", "low"),
#                            levels = c("low", "mid", "high", "none")),
#                 y = factor(c("p", "p", "p", "q", "q", "q")))
# m <- naiveBayes(y ~ u, data = d, laplace = 1); m$tables$u
FACTOR_LEVELS = ["low", "mid", "high", "none"]
FACTOR_TABLE = np.array([[0.285714285714286, 0.285714285714286, 0.285714285714286,
                          0.142857142857143],
                         [0.428571428571429, 0.142857142857143, 0.285714285714286,
                          0.142857142857143]])
# predict(m, data.frame(u = factor(c("low", "mid", "high", "none"), levels = levels(d$u))),
#         type = "raw")
FACTOR_RAW = np.array([[0.4, 0.6], [0.666666666666667, 0.333333333333333], [0.5, 0.5],
                       [0.5, 0.5]])


def r_like(**kw):
    """e1071's naiveBayes: plug-in estimates, class frequencies as the class prior, R's sd()."""
    return bnb.NaiveBayes(bnb.Gaussian(ddof=1), method="ml", class_alpha=0, **kw)


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True, as_frame=True)


# ---------------------------------------------------------------------- 2. ddof
def test_ddof_one_reproduces_e1071_on_iris(iris, x64):
    X, y = iris
    clf = r_like().fit(X, y)
    np.testing.assert_allclose(clf.theta_, IRIS_MEAN, rtol=1e-13)
    np.testing.assert_allclose(np.sqrt(clf.var_), IRIS_SD, rtol=1e-12)
    proba = clf.predict_proba(X.iloc[IRIS_ROWS])
    np.testing.assert_allclose(np.log(proba), np.log(IRIS_RAW), rtol=1e-9, atol=1e-12)
    # by hand with scipy: sum of log N(x | mean, sd) per class, equal class frequencies
    rows = X.iloc[IRIS_ROWS].to_numpy()
    log_joint = np.stack([stats.norm.logpdf(rows, IRIS_MEAN[k], IRIS_SD[k]).sum(axis=1)
                          for k in range(3)], axis=1) + np.log(1 / 3)
    hand = np.exp(log_joint - np.logaddexp.reduce(log_joint, axis=1, keepdims=True))
    np.testing.assert_allclose(proba, hand, rtol=1e-9, atol=1e-300)


def test_ddof_reproduces_the_seed_temperature_sigmas(x64):
    # seed 003 prints mu_yes = 21.64, sigma_yes = 2.35, mu_no = 23.88, sigma_no = 7.09: its
    # formula says 1/N, but those sigmas are the n - 1 ones (1/N gives 2.22 and 6.34)
    X, y = load_temperature()
    tables = r_like().fit(X, y).conditional_tables()["Temperature"].round(2)
    assert tables.loc["Yes"].tolist() == [21.64, 2.35]
    assert tables.loc["No"].tolist() == [23.88, 7.09]
    ml = bnb.NaiveBayes(method="ml").fit(X, y).conditional_tables()["Temperature"].round(2)
    assert ml["sd"].tolist() == [6.34, 2.22]  # ddof=0: the 1/N variance


def test_ddof_changes_only_the_ml_estimate(iris, x64):
    X, y = iris
    for method in ("map", "mean", "bayes"):
        a = bnb.NaiveBayes(bnb.Gaussian(ddof=1), method=method).fit(X, y)
        b = bnb.NaiveBayes(bnb.Gaussian(), method=method).fit(X, y)
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    pooled = bnb.NaiveBayes(bnb.Gaussian(pooled=True, ddof=1), method="ml").fit(X, y)
    resid = X.to_numpy() - X.groupby(y).transform("mean").to_numpy()  # LDA's unbiased variance
    np.testing.assert_allclose(pooled.var_[0], (resid**2).sum(axis=0) / (len(X) - 3), rtol=1e-12)


def test_ddof_with_too_few_rows_is_an_error_naming_column_and_class():
    X = pd.DataFrame({"t": [1.0, 2.0, 3.0, 4.0, 5.0]})
    y = ["a", "a", "b", "c", "c"]
    with pytest.raises(ValueError, match=r"column 't', class 'b': 1 observed value.*ddof=1"):
        bnb.NaiveBayes(bnb.Gaussian(ddof=1), method="ml").fit(X, y)
    bnb.NaiveBayes(bnb.Gaussian(ddof=1), method="mean").fit(X, y)  # the prior fills the gap
    for bad in (-1, float("nan"), "1", True):
        with pytest.raises(ValueError, match="ddof must be a finite number >= 0"):
            bnb.NaiveBayes(bnb.Gaussian(ddof=bad)).fit(X, y)


def test_ddof_is_saved_and_old_files_load_with_ddof_zero(iris, tmp_path, x64):
    X, y = iris
    clf = r_like().fit(X, y)
    loaded = bnb.load(bnb.save(clf, tmp_path / "r.bnb"))
    assert loaded.blocks_[0].family.ddof == 1
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    old = bnb.load(os.path.join(MODELS, "iris_pooled_map_v1.bnb"))  # written before ddof
    assert old.blocks_[0].family.ddof == 0
    sk = GaussianNB(var_smoothing=0).fit(X, y)  # its pooled ML variance is the 1/N one
    resid = X.to_numpy() - sk.theta_[y.to_numpy()]
    old.set_params(method="ml")
    np.testing.assert_allclose(old.var_[0], (resid**2).mean(axis=0), rtol=1e-12)


# ---------------------------------------------------------------------- 1. missing labels
def temperature_with_missing(missing):
    X, y = load_temperature()
    X = pd.concat([X, pd.DataFrame({"Temperature": [40.0, 10.0]})], ignore_index=True)
    y = pd.Series([*y.tolist(), missing, missing], dtype=object)
    return X, y


@pytest.mark.parametrize("missing", [None, np.nan, pd.NA])
def test_drop_leaves_missing_labels_out_as_r_does(missing, x64):
    X, y = temperature_with_missing(missing)
    with pytest.warns(MissingLabelWarning, match=r"2 missing labels.*these 2 rows out"):
        clf = r_like(missing_label="drop").fit(X, y)
    assert dict(zip(clf.classes_, clf.class_count_, strict=True)) == TEMP_APRIORI
    tables = clf.conditional_tables()["Temperature"]
    for label, (mean, sd) in TEMP_TABLE.items():
        np.testing.assert_allclose(tables.loc[label].to_numpy(), [mean, sd], rtol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(pd.DataFrame({"Temperature": TEMP_QUERY})),
                               TEMP_RAW, rtol=1e-12)


def test_drop_in_partial_fit_and_the_other_settings(x64):
    X, y = temperature_with_missing(np.nan)
    online = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0, missing_label="drop")
    with pytest.warns(MissingLabelWarning, match="2 missing labels"):
        for part in (slice(0, 7), slice(7, None)):
            online.partial_fit(X[part], y[part], classes=["No", "Yes"])
    kept = y.notna().to_numpy()
    sk = GaussianNB(var_smoothing=0).fit(X[kept], y[kept].astype(str))
    np.testing.assert_allclose(online.predict_proba(X), sk.predict_proba(X), rtol=1e-10)
    with pytest.raises(ValueError, match=r"2 missing labels.*row 14.*missing_label='drop'"):
        bnb.NaiveBayes().fit(X, y)  # the default under a closed-form method
    with pytest.raises(ValueError, match="partial_fit needs every label"):
        bnb.NaiveBayes().partial_fit(X, y)
    with pytest.raises(ValueError, match="missing_label='error' refuses them"):
        bnb.NaiveBayes(method="mcmc", missing_label="error").fit(X, y)  # before any NUTS
    with pytest.raises(ValueError, match="every label is missing"):
        bnb.NaiveBayes(missing_label="drop").fit(X[14:], y[14:])
    with pytest.raises(ValueError, match="missing_label must be one of"):
        bnb.NaiveBayes(missing_label="skip").fit(X, y)


def test_drop_update_with_every_label_missing_adds_nothing(x64):
    """An update whose labels are all missing keeps no rows under "drop", as an update of
    weight-0 rows: the model is the fit without it (decay still applies); a first call of
    such rows is refused (nothing to fit)."""
    X, y = temperature_with_missing(None)  # rows 14 and 15 lack their label
    online = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0, missing_label="drop")
    online.partial_fit(X[:14], y[:14])
    with pytest.warns(MissingLabelWarning, match="leaves them all out, so this update adds"):
        online.partial_fit(X[14:], y[14:])
    sk = GaussianNB(var_smoothing=0).fit(X[:14], y[:14].astype(str))
    np.testing.assert_allclose(online.predict_proba(X), sk.predict_proba(X), rtol=1e-10)
    with pytest.warns(MissingLabelWarning):
        online.partial_fit(X[14:], y[14:], decay=0.5)
    np.testing.assert_allclose(online.class_count_, sk.class_count_ / 2, rtol=1e-15)
    with pytest.raises(ValueError, match="every label is missing"):
        bnb.NaiveBayes(missing_label="drop").partial_fit(X[14:], y[14:])


def test_missing_label_is_a_parameter_and_saved(tmp_path):
    X, y = temperature_with_missing(None)
    clf = bnb.NaiveBayes(missing_label="drop")
    assert clf.get_params()["missing_label"] == "drop"
    assert clone(clf).missing_label == "drop"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingLabelWarning)
        clf.fit(X, y)
    assert bnb.load(bnb.save(clf, tmp_path / "m.bnb")).missing_label == "drop"
    old = bnb.load(os.path.join(MODELS, "temperature_bayes_v1.bnb"))  # written before it
    assert old.missing_label == "unlabeled"


# ---------------------------------------------------------------------- 3. level order
def test_a_pandas_category_keeps_its_levels_in_order_as_an_r_factor(x64):
    u = pd.Categorical(["low", "high", "mid", "low", "high", "low"], categories=FACTOR_LEVELS)
    X, y = pd.DataFrame({"u": u}), ["p", "p", "p", "q", "q", "q"]
    clf = bnb.NaiveBayes(method="mean", class_alpha=0).fit(X, y)  # laplace = 1
    table = clf.conditional_tables()["u"]
    assert table.columns.tolist() == FACTOR_LEVELS  # the unused level "none" included
    np.testing.assert_allclose(table.to_numpy(), FACTOR_TABLE, rtol=1e-12)
    query = pd.DataFrame({"u": pd.Categorical(FACTOR_LEVELS, categories=FACTOR_LEVELS)})
    np.testing.assert_allclose(clf.predict_proba(query), FACTOR_RAW, rtol=1e-12)
    assert list(clf.posterior_tables()["u"].columns.get_level_values(-1)[:4]) == FACTOR_LEVELS


def test_category_order_against_categorical_nb(x64):
    rng = np.random.default_rng(3)
    unordered, ordered = ["low", "mid", "high"], ["c", "b", "a"]
    X = pd.DataFrame({
        "u": pd.Categorical(rng.choice(unordered, 40), categories=unordered),
        "o": pd.Categorical(rng.choice(ordered, 40), categories=ordered, ordered=True),
        "s": rng.choice(["z", "y", "x"], 40),  # text: sorted levels, as before
    })
    y = rng.choice(["p", "q"], 40)
    clf = bnb.NaiveBayes(method="mean", class_alpha=0).fit(X, y)
    assert clf.blocks_[0].schema.levels == (tuple(unordered), tuple(ordered), ("x", "y", "z"))
    # CategoricalNB with the explicit mapping level -> code (the categories' order)
    codes = np.column_stack([X["u"].cat.codes, X["o"].cat.codes,
                             X["s"].map({"x": 0, "y": 1, "z": 2})])
    sk = CategoricalNB(alpha=1.0).fit(codes, y)
    for ours, theirs in zip(clf.feature_log_prob_, sk.feature_log_prob_, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(X), sk.predict_proba(codes), rtol=1e-12)
    assert clf.conditional_tables()["o"].columns.tolist() == ordered


# ---------------------------------------------------------------------- 4. absent columns
def test_an_absent_column_is_missing_in_every_row(iris, x64):
    X, y = iris
    clf = bnb.NaiveBayes(method="ml", class_alpha=0).fit(X, y)
    gone = ["petal width (cm)", "sepal width (cm)"]
    with pytest.warns(AbsentColumnWarning, match=r"2 column\(s\).*sepal width.*petal width"):
        proba = clf.predict_proba(X.drop(columns=gone))
    nan = X.assign(**{c: np.nan for c in gone})
    np.testing.assert_array_equal(proba, clf.predict_proba(nan))
    sk = GaussianNB(var_smoothing=0).fit(X.drop(columns=gone), y)  # fitted without them
    np.testing.assert_allclose(proba, sk.predict_proba(X.drop(columns=gone)), rtol=1e-9,
                               atol=1e-300)
    with pytest.raises(ValueError, match=r"'sepal width \(cm\)' seen at fit is missing from "
                                         r"X, which has column\(s\) \['other'\]"):
        clf.predict(X.drop(columns=gone).assign(other=1.0))  # a misspelt name: refused
    with pytest.raises(ValueError, match=r"\['other'\] that the model was not fitted on"):
        clf.predict(X.assign(other=1.0))  # an unknown column: refused, as before


def test_absent_columns_as_e1071_reads_them(iris, x64):
    X, y = iris
    clf = r_like().fit(X, y)
    with pytest.warns(AbsentColumnWarning):
        proba = clf.predict_proba(X.iloc[[0, 50, 100]][["sepal length (cm)",
                                                          "petal length (cm)"]])
    np.testing.assert_allclose(np.log(proba), np.log(IRIS_ABSENT), rtol=1e-9, atol=1e-12)


def test_an_absent_categorical_column_in_a_mixed_model(x64):
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"g": rng.normal(size=30), "c": rng.choice(["x", "y"], 30),
                      "b": rng.random(30) < 0.5})
    y = rng.choice(["p", "q"], 30)
    for method in ("mean", "bayes"):
        clf = bnb.NaiveBayes(method=method).fit(X, y)
        without = bnb.NaiveBayes(method=method).fit(X[["g", "b"]], y)
        with pytest.warns(AbsentColumnWarning, match=r"\['c'\]"):
            proba = clf.predict_proba(X[["b", "g"]])
        np.testing.assert_allclose(proba, without.predict_proba(X[["g", "b"]]), rtol=1e-12)


# ---------------------------------------------------------------------- 5. sklearn attributes
def test_n_categories_and_epsilon_as_scikit_learn(iris):
    X = np.array([[0, 1, 4], [0, 2, 4], [1, 2, 3], [2, 0, 4], [1, 0, 3]])
    y = ["a", "a", "b", "b", "a"]
    clf = bnb.NaiveBayes(bnb.Categorical()).fit(X, y)
    sk = CategoricalNB().fit(X - X.min(axis=0), y)  # codes 0..max, as CategoricalNB counts
    np.testing.assert_array_equal(clf.n_categories_, sk.n_categories_)
    assert clf.n_categories_.dtype == sk.n_categories_.dtype
    Xi, yi = iris
    g = bnb.NaiveBayes(bnb.Gaussian()).fit(Xi, yi)
    assert g.epsilon_ == GaussianNB(var_smoothing=0).fit(Xi, yi).epsilon_ == 0.0
    assert isinstance(g.epsilon_, float)
    assert not hasattr(clf, "epsilon_") and not hasattr(g, "n_categories_")


# ---------------------------------------------------------------------- 6. decay
def test_decay_refusals_merge_and_model_files(tmp_path, x64):
    X, y = load_temperature()
    clf = bnb.NaiveBayes(method="bayes")
    for bad in (0, 1.5, -0.5, float("nan"), "0.5", True):
        with pytest.raises(ValueError, match=r"decay must be a number in \(0, 1\]"):
            clf.partial_fit(X, y, decay=bad)
    a = bnb.NaiveBayes(method="bayes").partial_fit(X[:7], y[:7], classes=["No", "Yes"])
    a.partial_fit(X[7:], y[7:], decay=0.5)
    w = np.r_[np.full(7, 0.5), np.ones(len(X) - 7)]
    np.testing.assert_allclose(a.class_count_, np.bincount(y == "Yes", weights=w), rtol=1e-15)
    b = bnb.NaiveBayes(method="bayes").fit(X, y)
    merged = bnb.merge(a, b)
    both = bnb.NaiveBayes(method="bayes").fit(pd.concat([X, X]), pd.concat([y, y]),
                                              sample_weight=np.r_[w, np.ones(len(X))])
    np.testing.assert_allclose(merged.predict_proba(X), both.predict_proba(X), rtol=1e-12)
    loaded = bnb.load(bnb.save(a, tmp_path / "decayed.bnb"))
    np.testing.assert_array_equal(loaded.predict_proba(X), a.predict_proba(X))


def test_chunked_fits_keep_the_category_order(x64):
    from bayesnb.outofcore import fit_chunks

    rng = np.random.default_rng(5)
    X = pd.DataFrame({"u": pd.Categorical(rng.choice(FACTOR_LEVELS[:3], 30),
                                          categories=FACTOR_LEVELS)})
    y = pd.Series(rng.choice(["p", "q"], 30))
    chunks = [(X.iloc[i:i + 10], y.iloc[i:i + 10]) for i in range(0, 30, 10)]
    chunked = fit_chunks(bnb.NaiveBayes(), chunks, progress=False)
    batch = bnb.NaiveBayes().fit(X, y)
    assert chunked.blocks_[0].schema.levels == batch.blocks_[0].schema.levels \
        == (tuple(FACTOR_LEVELS),)
    # posterior mean with alpha = 1 over the 4 levels, by hand
    counts = pd.crosstab(y, X["u"], dropna=False).reindex(columns=FACTOR_LEVELS, fill_value=0)
    hand = (counts + 1).div(counts.sum(axis=1) + 4, axis=0)
    np.testing.assert_allclose(chunked.conditional_tables()["u"].to_numpy(), hand.to_numpy(),
                               rtol=1e-12)


def test_an_empty_update_and_an_update_without_y_are_still_refused():
    """An update whose labels are all missing adds nothing under "drop"; an update of no
    rows, or without y, is still an error (as scikit-learn's partial_fit)."""
    online = bnb.NaiveBayes(missing_label="drop").partial_fit([[1.0], [2.0]], ["a", "b"])
    with pytest.raises(ValueError, match="0 sample"):
        online.partial_fit(np.zeros((0, 1)), [])
    with pytest.raises(ValueError, match="requires y to be passed"):
        online.partial_fit([[1.0]], None)
