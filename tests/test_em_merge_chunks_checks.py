"""EM leaves a failed call's estimator as it was and gives the labelled fit at weight 0;
log_bayes_factor refuses models fitted on other data; merge and decay refuse unlabeled rows;
fit_chunks honours missing_label="drop"."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

import bayesnb as bnb
from bayesnb._missing_labels import MissingLabelWarning
from bayesnb.analysis import log_bayes_factor
from bayesnb.em import fit_em
from bayesnb.outofcore import fit_chunks, read_csv_chunks

X_EM = pd.DataFrame({"c": ["a", "a", "b", "b", "a", "b"], "g": [0.1, 0.4, 2.0, 2.5, 0.3, 1.9]})
Y_EM = ["p", "p", "q", "q", "q", "p"]
U_EM = pd.DataFrame({"c": ["a", "b", "b", "a", "z"], "g": [0.2, 2.2, 1.8, 0.0, 1.0]})


# ---------------------------------------------------------------------- fit_em
def test_failed_fit_em_leaves_the_estimator_unchanged():
    clf = bnb.NaiveBayes(method="ml").fit(pd.DataFrame({"c": ["x", "y"]}), ["r", "s"])
    before, classes = clf.fitted_, list(clf.classes_)
    X = pd.DataFrame({"c": ["a", "b", "a", "b"]})
    U = pd.DataFrame({"c": ["a", "z"]})  # 'z' has probability zero in every class under ML
    with pytest.raises(ValueError, match="probability zero in every class"):
        fit_em(clf, X, ["p", "p", "q", "q"], U)
    assert clf.fitted_ is before
    assert list(clf.classes_) == classes
    assert clf.method == "ml"


def test_failed_fit_em_leaves_an_unfitted_estimator_unfitted():
    clf = bnb.NaiveBayes(method="ml")
    with pytest.raises(ValueError, match="probability zero in every class"):
        fit_em(clf, pd.DataFrame({"c": ["a", "b", "a", "b"]}), ["p", "p", "q", "q"],
               pd.DataFrame({"c": ["a", "z"]}))
    assert "fitted_" not in clf.__dict__


def test_fit_em_fits_the_callers_estimator_as_a_hand_written_em(x64):
    # Gaussian ML EM written with NumPy and scipy (as in fit_em's docstring)
    X, y = np.array([[0.0], [2.0], [4.0], [6.0]]), ["a", "a", "b", "b"]
    U = np.array([[0.5], [1.0], [1.5], [2.5], [2.8], [3.5], [5.0], [5.5], [7.0]])
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml")
    out = fit_em(clf, X, y, U, tol=1e-14, max_iter=2000)
    assert out is clf and "fitted_" in clf.__dict__  # the caller's object, now fitted
    x, u = X[:, 0], U[:, 0]
    labels, resp = np.array([[1.0, 1, 0, 0], [0, 0, 1, 1]]), np.zeros((2, len(u)))
    for _ in range(2000):
        w, v = np.hstack([labels, resp]), np.concatenate([x, u])
        n = w.sum(axis=1)
        mean, var = w @ v / n, w @ v**2 / n - (w @ v / n) ** 2
        joint = (n / n.sum())[:, None] * norm.pdf(u, mean[:, None], np.sqrt(var)[:, None])
        resp = joint / joint.sum(axis=0)
    np.testing.assert_allclose(clf.theta_.ravel(), mean, rtol=1e-6)
    np.testing.assert_allclose(clf.class_count_, n, rtol=1e-6)


# The values fit_em gave before it ran on a copy (commit 2fc0ced), printed in x64 by
#   with jax.enable_x64(True):
#       clf, h = fit_em(bnb.NaiveBayes(feats, method=method), X_EM, Y_EM, U_EM,
#                       unlabeled_weight=0.5, tol=1e-12, return_history=True)
#       print(clf.predict_proba(U_EM)[:, 0], clf.class_count_, h.n_iter, h.log_posterior[-1])
# with feats = {"c": bnb.Categorical(alpha=2.0)} under "map", else None.
BEFORE = {
    "map": ([0.8999697640626447, 0.06484223428944352, 0.1451026022414692,
             0.9199819062636823, 0.6150935259345877], [4.3224945002002, 4.1775054997998],
            10, -29.04060961345435),
    "mean": ([0.9293004144028789, 0.0379896740153612, 0.10666741092727736,
              0.9473029531674196, 0.6287299379027977], [4.324994953430964, 4.175005046569037],
             10, -29.685544371584527),
    "bayes": ([0.8891934986891212, 0.08891732232693421, 0.14620383798203898,
               0.8985875187998974, 0.6214597677226491], [4.324994953430964, 4.175005046569037],
              10, -29.685544371584527),
}


@pytest.mark.parametrize("method", sorted(BEFORE))
def test_fit_em_gives_the_same_answer_as_before(x64, method):
    feats = {"c": bnb.Categorical(alpha=2.0)} if method == "map" else None
    clf = bnb.NaiveBayes(feats, method=method)
    out, history = fit_em(clf, X_EM, Y_EM, U_EM, unlabeled_weight=0.5, tol=1e-12,
                          return_history=True)
    proba, counts, n_iter, last = BEFORE[method]
    assert out is clf and clf.method == method
    np.testing.assert_allclose(clf.predict_proba(U_EM)[:, 0], proba, rtol=1e-10)
    np.testing.assert_allclose(clf.class_count_, counts, rtol=1e-10)
    assert history.n_iter == n_iter
    assert history.log_posterior[-1] == pytest.approx(last, rel=1e-10)


def test_zero_unlabeled_weight_is_the_labelled_fit(x64):
    X = pd.DataFrame({"c": ["a", "a", "a", "b"], "g": [0.0, 1.0, 2.5, 3.0]})
    y = ["p", "p", "q", "q"]
    U = pd.DataFrame({"c": ["a", "z"], "g": [0.5, 9.0]})  # 'z' only in the unlabelled rows
    for method in ("ml", "map", "mean", "bayes"):
        em0, history = fit_em(bnb.NaiveBayes(method=method), X, y, U, unlabeled_weight=0,
                              return_history=True)
        labelled = bnb.NaiveBayes(method=method).fit(X, y)
        assert em0.fitted_.blocks[0].schema == labelled.fitted_.blocks[0].schema
        np.testing.assert_allclose(em0.predict_proba(X), labelled.predict_proba(X),
                                   rtol=0, atol=1e-12)
        assert em0.log_evidence() == pytest.approx(labelled.log_evidence(), rel=0, abs=1e-12)
        assert history.converged and history.n_iter == 0
        assert np.isfinite(history.log_posterior[0])


def test_zero_unlabeled_weight_with_sample_weight_is_the_weighted_fit(x64):
    X = pd.DataFrame({"c": ["a", "a", "b", "b"]})
    y, w = ["p", "p", "q", "q"], [1.0, 2.0, 0.5, 3.0]
    em0 = fit_em(bnb.NaiveBayes(), X, y, pd.DataFrame({"c": ["z"]}), unlabeled_weight=0.0,
                 sample_weight=w)
    labelled = bnb.NaiveBayes().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(em0.predict_proba(X), labelled.predict_proba(X), rtol=0,
                               atol=1e-12)
    assert em0.log_evidence() == pytest.approx(labelled.log_evidence(), rel=0, abs=1e-12)


# ---------------------------------------------------------------------- log_bayes_factor
@pytest.fixture(scope="module")
def titanic():
    from bayesnb.datasets import load_titanic

    return load_titanic()


def test_log_bayes_factor_refuses_other_columns(titanic):
    X, y = titanic
    a = bnb.NaiveBayes().fit(X, y)
    with pytest.raises(ValueError, match=r"same columns \(columns only in model_a: \['Sex'"):
        log_bayes_factor(a, bnb.NaiveBayes().fit(X[["Class"]], y))
    with pytest.raises(ValueError, match="same columns in another order"):
        log_bayes_factor(a, bnb.NaiveBayes().fit(X[["Age", "Sex", "Class"]], y))


def test_log_bayes_factor_refuses_other_class_counts(titanic):
    X, y = titanic
    a = bnb.NaiveBayes().fit(X, y)
    with pytest.raises(ValueError, match="same labels: class counts"):
        log_bayes_factor(a, bnb.NaiveBayes().fit(X[::2], y[::2]))


def test_log_bayes_factor_refuses_permuted_rows_under_a_shared_family(titanic):
    X, y = titanic
    a = bnb.NaiveBayes().fit(X, y)
    shuffled_y = bnb.NaiveBayes().fit(X, y.sample(frac=1, random_state=0).to_numpy())
    shuffled_x = bnb.NaiveBayes().fit(
        X.sample(frac=1, random_state=1).reset_index(drop=True), y)
    for b in (shuffled_y, shuffled_x):
        np.testing.assert_array_equal(a.class_count_, b.class_count_)
        with pytest.raises(ValueError, match="modelled by Categorical in both, have other"):
            log_bayes_factor(a, b)


def test_log_bayes_factor_accepts_other_hyperparameters_and_families(titanic):
    X, y = titanic
    a = bnb.NaiveBayes(bnb.Categorical(alpha=1.0)).fit(X, y)
    b = bnb.NaiveBayes(bnb.Categorical(alpha=10.0)).fit(X, y)
    assert log_bayes_factor(a, b) == pytest.approx(a.log_evidence() - b.log_evidence())
    rng = np.random.default_rng(0)
    counts = rng.poisson(3.0, size=(40, 2)).astype(float)
    labels = np.repeat(["u", "v"], 20)
    poisson = bnb.NaiveBayes(bnb.Poisson()).fit(counts, labels)
    gaussian = bnb.NaiveBayes(bnb.Gaussian()).fit(counts, labels)
    assert np.isfinite(log_bayes_factor(poisson, gaussian))


# ---------------------------------------------------------------------- unlabeled rows
@pytest.fixture(scope="module")
def semi_supervised():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(16, 1)) + np.repeat([0, 4], 8)[:, None]
    y = np.repeat(["a", "b"], 8).astype(object)
    y[[1, 2, 9]] = None
    kw = dict(method="mcmc", num_warmup=10, num_samples=10, num_chains=1, progress_bar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a 10-draw chain does not converge
        semi = bnb.NaiveBayes(bnb.Gaussian(), **kw).fit(X, y)
    labelled = bnb.NaiveBayes(bnb.Gaussian(), method="mean").fit(X[[0, 3, 8]], y[[0, 3, 8]])
    return semi, labelled, X


def test_merge_refuses_unlabeled_rows(semi_supervised):
    semi, labelled, _ = semi_supervised
    assert semi.n_unlabeled_ == 3
    with pytest.raises(ValueError, match="model 0 holds 3 unlabeled rows"):
        bnb.merge(semi, labelled)
    with pytest.raises(ValueError, match="model 1 holds 3 unlabeled rows"):
        bnb.merge(labelled, semi)


def test_decay_refuses_unlabeled_rows(semi_supervised):
    semi, _, X = semi_supervised
    before = semi.fitted_
    with pytest.raises(ValueError, match="decay=0.5 multiplies every training weight.*3 "
                                         "unlabeled rows"):
        semi.partial_fit(X[:2], ["a", "a"], decay=0.5)
    assert semi.fitted_ is before


# ---------------------------------------------------------------------- fit_chunks
def _dropping_data():
    rng = np.random.default_rng(0)
    # every level in the first chunk: a one-pass read learns the levels from it
    X = pd.DataFrame({"g": rng.normal(size=30), "c": np.resize(["x", "y", "z", "x"], 30)})
    y = pd.Series(rng.choice(["a", "b"], 30), dtype=object)
    y[[5, 12, 13]] = None
    X.loc[12, "c"] = "only-unlabelled"  # a level of a dropped row: not a level of the fit
    return X, y


def test_fit_chunks_drops_missing_labels_as_fit_does(x64):
    X, y = _dropping_data()
    seen = X.drop(index=12)  # row 12's level is unseen by either fit (a warning to predict)
    with pytest.warns(MissingLabelWarning, match="3 rows"):
        batch = bnb.NaiveBayes(missing_label="drop").fit(X, y)
    w = np.linspace(0.5, 2.0, 30)
    with pytest.warns(MissingLabelWarning):
        weighted = bnb.NaiveBayes(missing_label="drop").fit(X, y, sample_weight=w)
    parts = [(X[s:s + 10], y[s:s + 10]) for s in (0, 10, 20)]
    sources = {"list (two passes)": parts,
               "generator (one pass)": (p for p in parts),
               "one chunk all missing": [parts[0], (X[12:14], y[12:14]), (X[10:12], y[10:12]),
                                         (X[14:], y[14:])],
               # the first chunk left empty, skipped before the one pass starts
               "generator, first chunk all missing": iter(
                   [(X[12:14], y[12:14]), parts[0], (X[10:12], y[10:12]), (X[14:], y[14:])])}
    for what, chunks in sources.items():
        with pytest.warns(MissingLabelWarning, match="3 rows"):
            clf = fit_chunks(bnb.NaiveBayes(missing_label="drop"), chunks,
                             classes=["a", "b"] if "generator" in what else None,
                             progress=False)
        np.testing.assert_array_equal(clf.class_count_, batch.class_count_, err_msg=what)
        assert clf.fitted_.blocks[1].schema == batch.fitted_.blocks[1].schema, what
        np.testing.assert_allclose(clf.predict_proba(seen), batch.predict_proba(seen), rtol=0,
                                   atol=1e-12, err_msg=what)
    with pytest.warns(MissingLabelWarning):
        clf = fit_chunks(bnb.NaiveBayes(missing_label="drop"),
                         [(X[s:s + 10], y[s:s + 10], w[s:s + 10]) for s in (0, 10, 20)],
                         progress=False)
    np.testing.assert_allclose(clf.class_count_, weighted.class_count_, rtol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(seen), weighted.predict_proba(seen), rtol=0,
                               atol=1e-12)


def test_fit_chunks_drop_with_every_label_missing():
    X = pd.DataFrame({"g": [0.0, 1.0, 2.0]})
    y = pd.Series([None, None, None], dtype=object)
    with pytest.raises(ValueError, match="every label is missing"):
        fit_chunks(bnb.NaiveBayes(missing_label="drop"), [(X[:2], y[:2]), (X[2:], y[2:])],
                   progress=False)


@pytest.mark.parametrize("setting", ["unlabeled", "error"])
def test_fit_chunks_other_settings_still_refuse_missing_labels(setting):
    X, y = _dropping_data()
    with pytest.raises(ValueError, match="chunk 0: y has 1 missing labels"):
        fit_chunks(bnb.NaiveBayes(missing_label=setting), [(X[:10], y[:10]), (X[10:], y[10:])],
                   progress=False)


def test_read_csv_chunks_drops_empty_label_cells(tmp_path, x64):
    X, y = _dropping_data()
    path = tmp_path / "rows.csv"
    X.assign(label=y).to_csv(path, index=False)  # a missing label: an empty cell
    with pytest.warns(MissingLabelWarning, match="3 rows"):
        batch = bnb.NaiveBayes(missing_label="drop").fit(X, y)
    with pytest.warns(MissingLabelWarning, match="3 rows"):
        clf = fit_chunks(bnb.NaiveBayes(missing_label="drop"),
                         read_csv_chunks(path, "label", chunksize=7), progress=False)
    seen = X.drop(index=12)
    np.testing.assert_array_equal(clf.class_count_, batch.class_count_)
    np.testing.assert_allclose(clf.predict_proba(seen), batch.predict_proba(seen), rtol=0,
                               atol=1e-12)


def test_a_partial_fit_update_of_zero_weights_changes_nothing_but_the_decay(x64):
    """Rows of weight 0 are no rows: an update made only of them is taken (refused before,
    where fit and fit_chunks take the same rows), and ``decay`` still applies to the model;
    a first chunk of zero weights is refused (nothing to learn the columns from)."""
    X = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0, 0.5, 1.5], "c": list("uvuvuv")})
    y = np.array(["a", "a", "b", "b", "a", "b"])
    w = np.array([1.0, 2.0, 1.0, 1.0, 0.0, 0.0])
    online = bnb.NaiveBayes(method="bayes").partial_fit(X[:4], y[:4], sample_weight=w[:4],
                                                          classes=["a", "b"])
    online.partial_fit(X[4:], y[4:], sample_weight=w[4:])
    batch = bnb.NaiveBayes(method="bayes").fit(X, y, sample_weight=w)
    np.testing.assert_allclose(online.predict_proba(X), batch.predict_proba(X), rtol=1e-12)
    assert online.log_evidence() == pytest.approx(batch.log_evidence(), rel=1e-12)
    decayed = bnb.NaiveBayes(method="bayes").partial_fit(X[:4], y[:4], sample_weight=w[:4],
                                                           classes=["a", "b"])
    decayed.partial_fit(X[4:], y[4:], sample_weight=w[4:], decay=0.5)
    half = bnb.NaiveBayes(method="bayes").fit(X[:4], y[:4], sample_weight=0.5 * w[:4])
    np.testing.assert_allclose(decayed.predict_proba(X), half.predict_proba(X), rtol=1e-12)
    with pytest.raises(ValueError, match="zero for every row"):
        bnb.NaiveBayes().partial_fit(X[4:], y[4:], sample_weight=w[4:], classes=["a", "b"])


def test_fit_em_under_an_unsmoothed_map_points_to_a_way_that_works():
    """A level only the unlabelled rows show: MAP at alpha=1 is ML and cannot score it; the
    message told a MAP model to use 'map'. Its advice (alpha=2) fits."""
    X = pd.DataFrame({"c": ["p", "q", "p", "q"]})
    y = ["a", "b", "a", "b"]
    U = pd.DataFrame({"c": ["p", "new"]})
    with pytest.raises(ValueError, match=r"use method='mean', or 'map' with concentrations "
                                         r"above 1 \(alpha=2"):
        fit_em(bnb.NaiveBayes(method="map"), X, y, U)
    clf = fit_em(bnb.NaiveBayes({"c": bnb.Categorical(alpha=2.0)}, method="map"), X, y, U)
    assert np.all(np.isfinite(clf.predict_log_proba(U)))


def test_merge_of_parts_with_their_columns_in_another_order_says_so():
    X = pd.DataFrame({"g": [0.0, 1.0, 2.0, 3.0], "c": list("uvuv")})
    y = ["a", "b", "a", "b"]
    a = bnb.NaiveBayes().fit(X, y)
    b = bnb.NaiveBayes().fit(X[["c", "g"]], y)
    with pytest.raises(ValueError, match=r"model 1 has the same columns in another order than "
                                         r"model 0 \(\['c', 'g'\] against \['g', 'c'\]\)"):
        bnb.merge(a, b)
    with pytest.raises(ValueError, match=r"model 1 has other columns than model 0"):
        bnb.merge(a, bnb.NaiveBayes().fit(X.rename(columns={"c": "d"}), y))
