"""Issue 41, section 1: ``density_plot`` draws every family and ``prob="marginal"``.

Discrete families (Bernoulli, Categorical, Poisson) are drawn as bars of the class-conditional
probabilities beside the observed weighted frequencies; the heights are read back from the
matplotlib artists and compared with hand counts and scipy.stats. ``prob="marginal"`` scales
each class by its prior (R naivebayes' ``plot(..., prob = "marginal")``)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayesnb as bnb

pytest.importorskip("matplotlib")
import matplotlib  # noqa: E402

matplotlib.use("Agg")
from bayesnb.plots import density_plot  # noqa: E402

Y = np.array(["a"] * 6 + ["b"] * 4)
VISITS = np.array([0, 1, 1, 2, 4, 1, 3, 5, 3, 6])
CLICKED = np.array([0, 0, 1, 0, 0, 1, 1, 1, 0, 1])
COLOUR = np.array(["red", "red", "blue", "red", "green", "blue",
                   "green", "green", "blue", "green"], dtype=object)
WEIGHT = np.array([1.0, 2.0, 1.0, 1.0, 0.5, 1.0, 1.0, 3.0, 1.0, 1.0])


@pytest.fixture
def data():
    X = pd.DataFrame({"visits": VISITS, "clicked": CLICKED, "colour": COLOUR})
    features = {"visits": bnb.Poisson(), "clicked": bnb.Bernoulli(),
                "colour": bnb.Categorical()}
    return X, features


def bars(fig) -> dict:
    """Every bar container of the plot by its label: the heights drawn."""
    return {c.get_label(): np.array([b.get_height() for b in c]) for c in fig.axes[0].containers}


def ticks(fig) -> list:
    return [t.get_text() for t in fig.axes[0].get_xticklabels()]


def weighted_frequency(values, labels, weight, cls, support):
    inside = labels == cls
    return np.array([weight[inside & (values == v)].sum() for v in support]) / weight[
        inside].sum()


def test_poisson_bars_are_the_pmf_and_the_weighted_frequencies(data, x64):
    X, features = data
    clf = bnb.NaiveBayes(features, method="ml").fit(X, Y, sample_weight=WEIGHT)
    fig = density_plot(clf, "visits", X, Y, sample_weight=WEIGHT)
    heights = bars(fig)
    # a bar a count from 0, drawn at its count (a count far beyond the rest, far away); the
    # ticks inside the axes are integers, each label its position's count
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    shown = [(t.get_text().replace("\N{MINUS SIGN}", "-"), p) for t, p in
             zip(ax.get_xticklabels(), ax.get_xticks(), strict=True) if low <= p <= high]
    assert shown and all(int(label) == p for label, p in shown)
    assert low < 0 < min(p for _, p in shown) + 1
    support = np.arange(len(heights["a"]))
    assert support[-1] >= 6  # every count seen is drawn
    for cls in ("a", "b"):
        inside = Y == cls
        rate = np.sum(WEIGHT[inside] * VISITS[inside]) / WEIGHT[inside].sum()  # weighted ML
        np.testing.assert_allclose(heights[cls], stats.poisson.pmf(support, rate), rtol=1e-12)
        np.testing.assert_allclose(heights[f"{cls} (observed)"],
                                   weighted_frequency(VISITS, Y, WEIGHT, cls, support),
                                   rtol=1e-12)
    assert fig.axes[0].get_title() == "visits: Poisson per class"


def test_bernoulli_and_categorical_bars_under_mean_and_bayes(data, x64):
    X, features = data
    for method in ("mean", "bayes"):  # bayes draws the posterior mean (its predictive here)
        clf = bnb.NaiveBayes(features, method=method).fit(X, Y)
        fig = density_plot(clf, "clicked", X, Y)
        assert ticks(fig) == ["0", "1"]
        heights = bars(fig)
        # Beta(1, 1) posterior mean: (ones + 1) / (rows + 2); a: 2 ones of 6, b: 3 of 4
        np.testing.assert_allclose(heights["a"], [5 / 8, 3 / 8], rtol=1e-12)
        np.testing.assert_allclose(heights["b"], [2 / 6, 4 / 6], rtol=1e-12)
        np.testing.assert_allclose(heights["a (observed)"], [4 / 6, 2 / 6], rtol=1e-12)
        fig = density_plot(clf, "colour", X, Y)
        assert ticks(fig) == ["blue", "green", "red"]
        heights = bars(fig)
        # Dirichlet(1, 1, 1) posterior mean: (count + 1) / (rows + 3); a: 2, 1, 3 of 6
        np.testing.assert_allclose(heights["a"], [3 / 9, 2 / 9, 4 / 9], rtol=1e-12)
        np.testing.assert_allclose(heights["b"], [2 / 7, 4 / 7, 1 / 7], rtol=1e-12)
        np.testing.assert_allclose(heights["b (observed)"], [1 / 4, 3 / 4, 0.0], atol=1e-15)


def test_marginal_is_conditional_times_the_class_prior(data, x64):
    X, features = data
    for class_alpha, prior in ((0.0, [0.6, 0.4]), (1.0, [7 / 12, 5 / 12])):
        clf = bnb.NaiveBayes(features, method="mean", class_alpha=class_alpha).fit(X, Y)
        np.testing.assert_allclose(np.exp(clf.class_log_prior_), prior, rtol=1e-12)
        for column in ("visits", "clicked", "colour"):
            conditional = bars(density_plot(clf, column, X, Y))
            fig = density_plot(clf, column, X, Y, prob="marginal")
            marginal = bars(fig)
            assert fig.axes[0].get_title().endswith(", times P(class)")
            for k, cls in enumerate(("a", "b")):
                np.testing.assert_allclose(marginal[cls], conditional[cls] * prior[k],
                                           rtol=1e-12)
                # the data as joint frequencies: 6 and 4 of the 10 rows
                np.testing.assert_allclose(marginal[f"{cls} (observed)"],
                                           conditional[f"{cls} (observed)"] * [0.6, 0.4][k],
                                           rtol=1e-12)


def test_marginal_density_curves_and_histograms(x64):
    rng = np.random.default_rng(0)
    y = np.repeat(["u", "v"], [30, 10])
    X = pd.DataFrame({"t": np.r_[rng.normal(0, 1, 30), rng.normal(3, 0.5, 10)]})
    clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml").fit(X, y)
    fig = density_plot(clf, "t", X, y, prob="marginal", bins=8)
    ax = fig.axes[0]
    for k, (line, cls) in enumerate(zip(ax.get_lines(), ("u", "v"), strict=True)):
        t = X["t"].to_numpy()[y == cls]
        x, curve = line.get_data()
        expected = stats.norm.pdf(x, t.mean(), t.std()) * [0.75, 0.25][k]
        np.testing.assert_allclose(curve, expected, rtol=1e-10, atol=1e-300)
        histogram = ax.containers[k]  # bars of equal width: their area is the class's share
        area = sum(b.get_height() * b.get_width() for b in histogram)
        assert area == pytest.approx([0.75, 0.25][k], rel=1e-12)


def test_errors():
    X = np.array([[1, 0], [0, 2], [3, 1], [0, 1]])
    clf = bnb.NaiveBayes(bnb.Multinomial()).fit(X, [0, 0, 1, 1])
    with pytest.raises(ValueError, match="prob must be one of"):
        density_plot(bnb.NaiveBayes(bnb.Poisson()).fit(X, [0, 0, 1, 1]), 0, prob="joint")
    with pytest.raises(ValueError, match=r"draws the columns of .*Bernoulli.*not Multinomial"):
        density_plot(clf, 0)
    poisson = bnb.NaiveBayes(bnb.Poisson()).fit(X, [0, 0, 1, 1])
    for given in ({"X": X}, {"y": [0, 0, 1, 1]}):  # the data's bars silently left out before
        with pytest.raises(ValueError, match="pass both X and y"):
            density_plot(poisson, 0, **given)


def test_sparse_training_data_draws_as_dense(x64):
    from scipy import sparse

    X = np.column_stack([VISITS, CLICKED]).astype(np.float64)
    features = {0: bnb.Poisson(), 1: bnb.Bernoulli()}
    clf = bnb.NaiveBayes(features, method="ml").fit(X, Y)
    for column in (0, 1):
        dense = bars(density_plot(clf, column, X, Y))
        drawn = bars(density_plot(clf, column, sparse.csr_matrix(X), Y))
        assert drawn.keys() == dense.keys()
        for label, heights in dense.items():
            np.testing.assert_allclose(drawn[label], heights, rtol=1e-15)
