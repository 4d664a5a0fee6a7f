"""Plots render to real PNGs headlessly; learning curves and Bayes factors against direct
computation."""

import matplotlib
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, log_loss

import bayesnb as bnb
from bayesnb import datasets
from bayesnb.analysis import log_bayes_factor
from bayesnb.compare import learning_curves
from bayesnb.plots import (
    credible_intervals_plot,
    learning_curves_plot,
    plug_in_value,
    posterior_density_plot,
    reliability_diagram,
)

matplotlib.use("Agg")


def save(fig, tmp_path, name):
    import matplotlib.pyplot as plt

    path = tmp_path / f"{name}.png"
    fig.savefig(path)
    plt.close(fig)
    assert path.stat().st_size > 5000  # a real image, not an empty canvas
    return path


def test_reliability_diagram_and_credible_intervals(tmp_path):
    X, y = datasets.load_titanic()
    probas = {m: bnb.NaiveBayes(method=m).fit(X, y).predict_proba(X) for m in ("ml", "bayes")}
    fig = reliability_diagram(y, probas, classes=["No", "Yes"])
    assert len(fig.axes[0].lines) == 3  # diagonal + two models
    save(fig, tmp_path, "reliability")
    clf = bnb.NaiveBayes(method="bayes").fit(X, y)
    save(credible_intervals_plot(clf, X.drop_duplicates(), class_label="Yes", num_draws=300),
         tmp_path, "intervals")


def test_posterior_density_marks_ml_map_mean(tmp_path, x64):
    X, y = datasets.load_playtennis()
    clf = bnb.NaiveBayes(bnb.Categorical(alpha=2.0), method="bayes").fit(X, y)
    fig = posterior_density_plot(clf, "categorical.Outlook.probs", (0, 1))
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any(t.startswith("ML") for t in labels) and any(t.startswith("MAP") for t in labels)
    save(fig, tmp_path, "posterior")
    # the marked values are the textbook formulas: class No (5 rows), Outlook = Rain (2 of 5)
    assert plug_in_value(clf, "categorical.Outlook.probs", (0, 1), "ml") == pytest.approx(2 / 5)
    assert plug_in_value(clf, "categorical.Outlook.probs", (0, 1), "mean") == pytest.approx(4 / 11)
    assert plug_in_value(clf, "categorical.Outlook.probs", (0, 1), "map") == pytest.approx(3 / 8)
    assert plug_in_value(clf, "class_probs", (1,), "ml") == pytest.approx(9 / 14)


def test_posterior_density_marks_every_family_by_its_declared_sites(tmp_path, x64):
    """posterior_density_plot read the plug-in values through a table of built-in parameter
    names: a NegativeBinomial 'prob' was an "unknown parameter site" (it was in the list the
    error printed), a pooled Gaussian precision a TypeError, and a new family's sites failed
    alike (hunt 46). Each family declares plug_in_sites; the values are the hand formulas."""
    rng = np.random.default_rng(0)
    y = np.repeat(["a", "b"], 20)
    X = pd.DataFrame({"nb": rng.poisson(3, 40), "g": rng.normal(size=40)})
    clf = bnb.NaiveBayes({"nb": bnb.NegativeBinomial(r=2.0), "g": bnb.Gaussian(pooled=True)},
                         method="bayes").fit(X, y)
    a = X["nb"].to_numpy()[y == "a"]  # Beta(1 + r n, 1 + sum x): its mean and mode
    assert plug_in_value(clf, "negative_binomial.prob", (0, 0), "mean") == pytest.approx(
        (1 + 2 * 20) / (2 + 2 * 20 + a.sum()), rel=1e-12)
    assert plug_in_value(clf, "negative_binomial.prob", (0, 0), "ml") == pytest.approx(
        2 * 20 / (2 * 20 + a.sum()), rel=1e-12)
    g = [X["g"].to_numpy()[y == c] for c in ("a", "b")]
    m2 = sum(((v - v.mean()) ** 2).sum() for v in g)
    spread = sum(((v - v.mean()) ** 2).sum() / 2 + 1e-3 * 20 * v.mean() ** 2 / (2 * (1e-3 + 20))
                 for v in g)  # the Normal-Gamma rate's data terms, loc 0, kappa 1e-3
    assert plug_in_value(clf, "gaussian.precision", (0,), "ml") == pytest.approx(40 / m2)
    assert plug_in_value(clf, "gaussian.precision", (0,), "mean") == pytest.approx(
        (1 + 20) / (0.01 + spread), rel=1e-12)
    # a family whose table lacks its sites' values says so (it was swallowed: no marker)
    from bayesnb.families._contract import ConjugateFamily

    class Unmarked(bnb.Bernoulli):
        plug_in_sites = ConjugateFamily.plug_in_sites

    flags = bnb.NaiveBayes(Unmarked(), method="bayes").fit(np.array([[0], [1], [1]]), [0, 1, 1])
    with pytest.raises(ValueError, match="plug-in table has no field 'theta'"):
        plug_in_value(flags, "bernoulli.theta", (0, 0), "mean")
    fig = posterior_density_plot(clf, "negative_binomial.prob", ("a", "nb"), num_draws=300)
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()][1].startswith("ML 0.")
    save(fig, tmp_path, "negative_binomial")


def test_learning_curves_match_direct_computation_and_plot(tmp_path, x64):
    X, y = datasets.load("iris")
    curves = learning_curves(X, y, methods=("ml", "bayes"), train_sizes=(6, 30),
                             repeats=3, features=bnb.Gaussian(), random_state=0)
    assert set(curves["metric"]) == {"accuracy", "log_loss", "brier", "ece", "entropy"}
    assert set(curves["n_train"]) == {6, 30}
    # recompute one point by hand with scikit-learn's metrics
    from sklearn.model_selection import train_test_split

    index = np.arange(len(y))
    pool, test = train_test_split(index, test_size=0.3, stratify=y, random_state=0)
    rng = np.random.default_rng(0)
    for _ in range(3):  # the size-6 subsets come first in the random stream
        rng.choice(pool, size=6, replace=False)
    accuracies, losses = [], []
    for _ in range(3):
        train = rng.choice(pool, size=30, replace=False)
        clf = bnb.NaiveBayes(bnb.Gaussian(), method="bayes").fit(X.iloc[train], y.iloc[train])
        p = clf.predict_proba(X.iloc[test])
        accuracies.append(accuracy_score(y.iloc[test], clf.classes_[p.argmax(axis=1)]))
        # scikit-learn's log_loss clips p at machine epsilon; the table reports it unclipped
        log_p = clf.predict_log_proba(X.iloc[test])
        codes = np.searchsorted(clf.classes_, y.iloc[test])
        losses.append(-np.mean(log_p[np.arange(len(codes)), codes]))
        assert losses[-1] >= log_loss(y.iloc[test], p, labels=clf.classes_) - 1e-12
    row = curves.set_index(["n_train", "method", "metric"])
    assert row.loc[(30, "bayes", "accuracy"), "mean"] == pytest.approx(np.mean(accuracies))
    assert row.loc[(30, "bayes", "log_loss"), "mean"] == pytest.approx(np.mean(losses))
    save(learning_curves_plot(curves), tmp_path, "curves")


def test_bayes_factor_prefers_the_true_variance_structure(x64):
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 200)
    X = rng.normal(0.0, np.where(y == 0, 1.0, 3.0))[:, None]  # class variances differ
    per_class = bnb.NaiveBayes(bnb.Gaussian()).fit(X, y)
    pooled = bnb.NaiveBayes(bnb.Gaussian(pooled=True)).fit(X, y)
    assert log_bayes_factor(per_class, pooled) > 4.6  # decisive
    same = rng.normal(0.0, 1.0, 400)[:, None]
    assert log_bayes_factor(bnb.NaiveBayes(bnb.Gaussian(pooled=True)).fit(same, y),
                            bnb.NaiveBayes(bnb.Gaussian()).fit(same, y)) > 0
    counts = rng.poisson(np.where(y == 0, 2.0, 5.0))[:, None].astype(float)
    poisson = bnb.NaiveBayes(bnb.Poisson()).fit(counts, y)
    gaussian = bnb.NaiveBayes(bnb.Gaussian()).fit(counts, y)
    # the log Bayes factor is the difference of the two evidences
    assert log_bayes_factor(poisson, gaussian) == pytest.approx(
        poisson.log_evidence() - gaussian.log_evidence())
    with pytest.raises(ValueError, match="same labels"):
        log_bayes_factor(per_class, bnb.NaiveBayes(bnb.Gaussian()).fit(X[:10], y[:10]))
    # the same columns in another order: the statistics, kept in column order, cannot be
    # checked against each other, which the message says (it said "not comparable", hunt 47;
    # accepting them skipped the check, hunt 49), with the way to compare them
    days, play = datasets.load_playtennis()
    a = bnb.NaiveBayes().fit(days, play)
    b = bnb.NaiveBayes().fit(days[days.columns[::-1]], play)
    with pytest.raises(ValueError, match=r"same columns in another order, so whether they saw "
                                         r"the same data cannot be checked"):
        log_bayes_factor(a, b)
    b = bnb.NaiveBayes().fit(days[list(a.feature_names_in_)], play)  # the advice works
    assert log_bayes_factor(a, b) == pytest.approx(0.0, abs=1e-9)
