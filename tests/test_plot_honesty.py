"""Plots and tables that do not mislead (issue 15, section 3): the figures are read back from
their artists, the tables checked against hand computations."""

import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_hex

import bayesnb as bnb
from bayesnb import cli, datasets
from bayesnb.compare import (
    calibration_table,
    classification_metrics,
    compare,
    learning_curves,
    zero_probability_note,
)
from bayesnb.families.categorical import UnseenCategoryWarning
from bayesnb.plots import METRIC_RANGES, learning_curves_plot, method_style, reliability_diagram

matplotlib.use("Agg")


def small_categorical(n=120, seed=0):
    """Two classes; level 'z' of column c is rare in both, so small training sets often lack
    it in one class (MAP with alpha = 1 gives it 0 there) or in both (ML cannot score it)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, "a", "b")
    c = np.where(y == "a", rng.choice(["x", "y", "z"], n, p=[0.75, 0.17, 0.08]),
                 rng.choice(["x", "y", "z"], n, p=[0.2, 0.72, 0.08]))
    d = np.where(rng.random(n) < np.where(y == "a", 0.7, 0.3), "p", "q")
    return pd.DataFrame({"c": c, "d": d}), pd.Series(y, name="label")


def curves_frame():
    """Hand-made learning curves: ML's log loss infinite at 10 and 20 rows, two of five ML
    repeats failed at 10 rows, every one at 5; bands that would leave [0, 1]."""
    rows = []
    for method in ("ml", "map", "mean", "bayes"):
        for n, acc, acc_sd, ll, failed in ((5, np.nan, np.nan, np.nan, 5),
                                           (10, 0.97, 0.2, np.inf, 2),
                                           (20, 0.05, 0.3, np.inf, 0),
                                           (40, 0.5, 0.1, 0.6, 0)):
            if method != "ml":
                acc, ll, failed = (0.6 if np.isnan(acc) else acc), (
                    0.7 if not np.isfinite(ll) else ll), 0
            for metric, mean, sd in (("accuracy", acc, acc_sd), ("log_loss", ll, 0.9),
                                     ("brier", 0.3, 0.5)):
                if method == "ml" and n == 5:
                    mean, sd = np.nan, np.nan
                rows.append({"n_train": n, "method": method, "metric": metric, "mean": mean,
                             "sd": np.nan if not np.isfinite(mean) else sd, "repeats": 5,
                             "failed": failed, "infinite": int(np.isinf(mean)),
                             "unscored_rows": 0, "failure": None})
    return pd.DataFrame(rows)


def panel(fig, title):
    (ax,) = [a for a in fig.axes if a.get_title() == title]
    return ax


def data_lines(ax):
    """Lines drawn in data coordinates (the curves, not the edge markers)."""
    return [ln for ln in ax.get_lines() if ln.get_transform() == ax.transData]


def test_no_finite_line_stands_in_for_an_infinite_value():
    curves = curves_frame()
    fig = learning_curves_plot(curves)
    ax = panel(fig, "log_loss")
    infinite_x = {10.0, 20.0}
    for line in data_lines(ax):
        x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        at_inf = np.isin(x, list(infinite_x))
        if line.get_color() == to_hex(method_style("ml")["color"]):
            assert at_inf.any() and np.isnan(y[at_inf]).all()  # the curve breaks there
        assert not np.isinf(y).any()
    # the infinite values are markers on the top edge (axes y = 1), in ML's colour
    marks = [ln for ln in ax.get_lines() if ln.get_gid() == "infinite"]
    assert len(marks) == 1
    assert set(np.asarray(marks[0].get_xdata(), float)) == infinite_x
    assert np.all(np.asarray(marks[0].get_ydata()) == 1.0)
    assert marks[0].get_transform() != ax.transData
    assert to_hex(marks[0].get_color()) == to_hex(method_style("ml")["color"])
    labels = [t for t in ax.texts if t.get_gid() == "inf_label"]
    assert sorted(t.xy[0] for t in labels) == sorted(infinite_x)
    assert all(t.get_text() == "inf" for t in labels)
    # and the explanation is in the legend
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(t.startswith("inf:") for t in legend)


def test_bands_stay_within_the_metric_range():
    fig = learning_curves_plot(curves_frame())
    for metric in ("accuracy", "log_loss", "brier"):
        low, high = METRIC_RANGES[metric]
        bands = [c for c in panel(fig, metric).collections if isinstance(c, PolyCollection)]
        assert bands
        for band in bands:
            y = np.concatenate([p.vertices[:, 1] for p in band.get_paths()])
            assert y.min() >= low - 1e-12 and y.max() <= high + 1e-12
    # accuracy 0.97 +- 0.2 and 0.05 +- 0.3 reach the range's edges, not past them
    y = np.concatenate([p.vertices[:, 1] for band in panel(fig, "accuracy").collections
                        if isinstance(band, PolyCollection) for p in band.get_paths()])
    assert y.max() == pytest.approx(1.0) and y.min() == pytest.approx(0.0)


def test_failed_repeats_are_counted_and_shown():
    fig = learning_curves_plot(curves_frame())
    ax = panel(fig, "accuracy")
    failed = sorted(t.get_text() for t in ax.texts if t.get_gid() == "failed")
    assert failed == ["2/5 failed", "5/5 failed"]
    everything = [ln for ln in ax.get_lines() if ln.get_gid() == "all_failed"]
    assert [list(ln.get_xdata()) for ln in everything] == [[5.0]]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "ml (7 of 20 repeats failed)" in legend
    assert "map" in legend  # no failures, no note
    # the mean at 10 rows is drawn (over the 3 fitted repeats) with its count beside it
    (ml,) = [ln for ln in data_lines(ax)
             if to_hex(ln.get_color()) == to_hex(method_style("ml")["color"])]
    x, y = np.asarray(ml.get_xdata(), float), np.asarray(ml.get_ydata(), float)
    assert np.isnan(y[x == 5]).all() and y[x == 10] == pytest.approx(0.97)


def test_one_colour_per_method_in_every_figure():
    curves = curves_frame()
    proba = np.array([[0.8, 0.2], [0.3, 0.7], [0.55, 0.45]])
    figures = [learning_curves_plot(curves),
               reliability_diagram(["a", "b", "b"], {m: proba for m in
                                                     ("bayes", "ml", "mean", "map")},
                                   classes=["a", "b"])]
    colours = {}
    for fig in figures:
        for ax in fig.axes:
            for line in data_lines(ax):
                name = line.get_label()
                if name.startswith("_") or name == "calibrated":
                    continue
                colours.setdefault(name.split(" (")[0], set()).add(to_hex(line.get_color()))
    assert set(colours) == {"ml", "map", "mean", "bayes"}
    for name, seen in colours.items():
        assert seen == {to_hex(method_style(name)["color"])}, name
    assert len({c for seen in colours.values() for c in seen}) == 4
    # a named model keeps its colour whatever the order it comes in
    assert method_style("my model") == method_style("my model")


def test_learning_curves_return_failed_repeats_counted_by_refitting(x64):
    from sklearn.model_selection import train_test_split

    X, y = small_categorical()
    sizes, repeats = (6, 12), 3
    with pytest.warns(UnseenCategoryWarning, match="learning_curves: in"):  # one, gathered
        curves = learning_curves(X, y, methods=("ml", "map"), train_sizes=sizes,
                                 repeats=repeats)
    warnings.simplefilter("ignore", UnseenCategoryWarning)  # the refits by hand below
    # the same draws by hand: count the refits that raise, and the infinite log losses
    pool, test = train_test_split(np.arange(len(y)), test_size=0.3, stratify=y,
                                  random_state=0)
    rng = np.random.default_rng(0)
    expected = {}
    for n in sizes:
        for _ in range(repeats):
            train = rng.choice(pool, size=n, replace=False)
            for method in ("ml", "map"):
                key = (n, method)
                failed, infinite = expected.get(key, (0, 0))
                try:
                    clf = bnb.NaiveBayes(method=method).fit(X.iloc[train], y.iloc[train])
                    joint = clf.predict_joint_log_proba(X.iloc[test])
                except ValueError:
                    expected[key] = (failed + 1, infinite)
                    continue
                known = np.isin(y.iloc[test], clf.classes_)
                codes = np.searchsorted(clf.classes_, y.iloc[test][known])
                zero = np.any(np.isneginf(joint[known][np.arange(known.sum()), codes]))
                expected[key] = (failed, infinite + int(zero))
    got = curves[curves["metric"] == "log_loss"].set_index(["n_train", "method"])
    for key, (failed, infinite) in expected.items():
        assert got.loc[key, "failed"] == failed, key
        assert got.loc[key, "infinite"] == infinite, key
        assert got.loc[key, "repeats"] == repeats
        assert np.isinf(got.loc[key, "mean"]) == (infinite > 0)
    assert got["failed"].sum() > 0
    assert got.loc[(slice(None), "map"), "infinite"].sum() > 0  # MAP alpha = 1 is ML
    for message in got.loc[got["failed"] > 0, "failure"]:
        assert "column 'c'" in message  # the first failure's reason travels with the count


def test_zero_probability_footnote_names_map_with_alpha_one(x64):
    X, y = small_categorical(60, seed=3)
    table = compare(X, y, methods=("ml", "map", "mean"), cv=3)
    # by hand: a zero probability for the true class under MAP with alpha = 1 (= ML) means a
    # value of the row never seen with its class in the training fold
    from sklearn.model_selection import StratifiedKFold

    zero = 0
    for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y):
        tr, te = X.iloc[train].assign(y=y.iloc[train]), X.iloc[test].assign(y=y.iloc[test])
        seen = {(col, v, k) for col in ("c", "d") for v, k in zip(tr[col], tr["y"], strict=True)}
        zero += sum(any((col, r[col], r["y"]) not in seen for col in ("c", "d"))
                    for _, r in te.iterrows())
    assert zero > 0
    assert table.loc["map", "zero_prob_rows"] == zero
    note = zero_probability_note(table)
    assert f"map ({zero} rows)" in note and "None under mean." in note
    assert "alpha of 1" in note
    # with alpha = 2 MAP smooths: the note no longer names it
    smoothed = compare(X, y, methods=(), models={
        "map": bnb.NaiveBayes(bnb.Categorical(alpha=2.0), method="map"),
        "mean": bnb.NaiveBayes(method="mean")}, cv=3)
    assert zero_probability_note(smoothed) is None


def test_compile_time_is_reported_apart_from_fit_time(monkeypatch):
    import bayesnb.compare as cmp

    now = [0.0]
    monkeypatch.setattr(cmp, "_clock", lambda: now[0])
    first = [True]

    class Slow(bnb.NaiveBayes):
        """The first fit 'compiles' for 10 s, every fit takes 1 s, a prediction 0.5 s."""

        def fit(self, X, y, sample_weight=None):
            now[0] += 1.0 + (10.0 if first[0] else 0.0)
            first[0] = False
            return super().fit(X, y, sample_weight)

        def predict_joint_log_proba(self, X):
            now[0] += 0.5
            return super().predict_joint_log_proba(X)

    X, y = datasets.load_playtennis()
    table = compare(X, y, methods=(), models={"slow": Slow(method="mean")}, cv=2)
    assert table.loc["slow", "fit_s"] == 1.0 and table.loc["slow", "fit_s_sd"] == 0.0
    assert table.loc["slow", "predict_s"] == 0.5
    assert table.loc["slow", "compile_s"] == 10.0
    cold = compare(X, y, methods=(), models={"slow": Slow(method="mean")}, cv=2,
                   warm_up=False)
    assert np.isnan(cold.loc["slow", "compile_s"])


def hand_calibration(proba, codes, n_bins):
    """np.histogram binning of the top probability: counts, mean confidence, accuracy."""
    confidence = proba.max(axis=1)
    correct = (proba.argmax(axis=1) == codes).astype(float)
    edges = np.linspace(0, 1, n_bins + 1)
    count, _ = np.histogram(confidence, edges)
    conf_sum, _ = np.histogram(confidence, edges, weights=confidence)
    hit_sum, _ = np.histogram(confidence, edges, weights=correct)
    with np.errstate(invalid="ignore"):
        return count, conf_sum / count, hit_sum / count


def test_calibration_table_against_numpy_binning():
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(500, 3)) * 1.5
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    codes = rng.integers(0, 3, 500)
    table = calibration_table(proba, codes, n_bins=8)
    count, pred, obs = hand_calibration(proba, codes, 8)
    assert list(table.index) == list(range(8))
    np.testing.assert_array_equal(table["count"], count)
    np.testing.assert_allclose(table["mean_predicted"], pred, rtol=1e-12)
    np.testing.assert_allclose(table["observed"], obs, rtol=1e-12)
    np.testing.assert_allclose(table["lower"], np.linspace(0, 1, 9)[:-1])
    ece = np.nansum(count / 500 * np.abs(obs - pred))
    assert classification_metrics(np.log(proba), codes, n_bins=8)["ece"] == pytest.approx(ece)


def test_compare_returns_the_pooled_calibration_table(x64):
    from sklearn.model_selection import StratifiedKFold

    X, y = datasets.load_titanic()
    X, y = X.iloc[::4], y.iloc[::4]
    table = compare(X, y, methods=("mean",), cv=3)
    calibration = table.attrs["calibration"]
    assert list(calibration.columns) == ["model", "bin", "lower", "upper", "count",
                                         "mean_predicted", "observed"]
    probas, codes = [], []
    for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y):
        clf = bnb.NaiveBayes(method="mean").fit(X.iloc[train], y.iloc[train])
        probas.append(clf.predict_proba(X.iloc[test]))
        codes.append(np.searchsorted(clf.classes_, y.iloc[test]))
    count, pred, obs = hand_calibration(np.concatenate(probas), np.concatenate(codes), 10)
    mine = calibration[calibration["model"] == "mean"]
    np.testing.assert_array_equal(mine["count"], count)
    full = count > 0
    np.testing.assert_allclose(mine["mean_predicted"][full], pred[full], rtol=1e-9)
    np.testing.assert_allclose(mine["observed"][full], obs[full], rtol=1e-12)


def test_digits_default_family_is_multinomial():
    spec = datasets.default_features("digits")
    assert isinstance(spec, bnb.Multinomial)
    assert "Multinomial" in datasets.default_features.__doc__
    assert "digits" in datasets.__doc__ and "Multinomial" in datasets.__doc__


def test_cli_compare_digits_and_one_family_for_every_column(tmp_path, capsys):
    # digits under its default: log loss a few nats, not the ~100 of near-constant Gaussians
    assert cli.main(["compare", "digits", "--cv", "2", "--methods", "mean",
                     "--no-progress", "--csv", str(tmp_path / "d.csv")]) == 0
    out = capsys.readouterr().out
    table = pd.read_csv(tmp_path / "d.csv", index_col=0)
    assert table.loc["mean", "log_loss"] < 5 and table.loc["mean", "accuracy"] > 0.85
    assert "compile_s" in out and "calibration" in out
    assert (tmp_path / "d.calibration.csv").exists()
    # --family FAMILY alone declares it for every column of a file
    rng = np.random.default_rng(0)
    y = np.repeat(["u", "v"], 30)
    counts = rng.poisson(np.where(y[:, None] == "u", [1, 4, 2], [4, 1, 2]))
    frame = pd.DataFrame(counts, columns=["w1", "w2", "w3"]).assign(y=y)
    frame.to_csv(tmp_path / "counts.csv", index=False)
    assert cli.main(["compare", str(tmp_path / "counts.csv"), "--target", "y", "--family",
                     "multinomial", "--cv", "2", "--methods", "mean", "--no-progress"]) == 0
    args = cli.build_parser().parse_args(["compare", "x.csv", "--family", "multinomial"])
    assert isinstance(cli._features(args, frame), bnb.Multinomial)
    capsys.readouterr()
    assert cli.main(["compare", str(tmp_path / "counts.csv"), "--target", "y", "--family",
                     "multinomial", "--family", "w1=poisson", "--no-progress"]) == 2
    assert "cannot be combined" in capsys.readouterr().err


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 5), st.integers(1, 12))
def test_calibration_table_ignores_the_order_of_the_classes(seed, k, n_bins):
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.ones(k), size=40)
    codes = rng.integers(0, k, 40)
    order = rng.permutation(k)
    table = calibration_table(proba, codes, n_bins)
    permuted = calibration_table(proba[:, order], np.argsort(order)[codes], n_bins)
    pd.testing.assert_frame_equal(table, permuted)
    assert table["count"].sum() == 40
    full = table[table["count"] > 0]
    assert ((full["mean_predicted"] >= 1 / k - 1e-12) & (full["observed"].between(0, 1))).all()


def test_cli_footnote_names_the_methods_that_gave_zero_probabilities(capsys):
    assert cli.main(["compare", "playtennis", "--cv", "3", "--methods", "ml,map,mean",
                     "--no-progress"]) == 0
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if ln.startswith("zero_prob_rows:")]
    assert "ml (" in line and "map (" in line and "None under mean." in line
    assert "the priors do not" not in out


def test_reliability_diagram_shows_the_rows_behind_each_point():
    rng = np.random.default_rng(2)
    proba = rng.dirichlet([2, 2], size=50)
    y = np.where(rng.random(50) < proba[:, 1], "b", "a")
    fig = reliability_diagram(y, {"mean": proba}, classes=["a", "b"], n_bins=5)
    diagram, counts = fig.axes
    codes = (y == "b").astype(int)
    confidence = proba.max(axis=1)
    expected, _ = np.histogram(confidence, np.linspace(0, 1, 6))
    (stairs,) = counts.patches
    np.testing.assert_array_equal(stairs.get_data().values, expected)
    (line,) = [ln for ln in diagram.get_lines() if ln.get_label() == "mean"]
    hit = (proba.argmax(axis=1) == codes).astype(float)
    full = expected > 0
    observed = np.histogram(confidence, np.linspace(0, 1, 6), weights=hit)[0][full] / \
        expected[full]
    np.testing.assert_allclose(line.get_ydata(), observed)


def test_rows_without_a_posterior_are_counted_not_drawn_at_the_origin():
    proba = np.array([[0.9, 0.1], [0.0, 0.0], [0.3, 0.7], [0.0, 0.0]])
    fig = reliability_diagram(["a", "a", "b", "b"], {"ml": proba}, classes=["a", "b"])
    (line,) = [ln for ln in fig.axes[0].get_lines() if ln.get_label().startswith("ml")]
    assert line.get_label() == "ml (2 rows without a posterior not drawn)"
    assert sorted(line.get_xdata()) == [0.7, 0.9]
    assert fig.axes[1].patches[0].get_data().values.sum() == 2


def test_density_plot_of_an_mcmc_model_draws_the_closed_form_means(x64):
    """Its curves are those of ``conditional_tables()``: the posterior means in closed form,
    which the NUTS draws estimate, the same as under ``"bayes"`` (it raised AttributeError)."""
    from bayesnb.plots import density_plot

    X, y = datasets.load_temperature()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a short run: the curves do not read its draws
        mcmc = bnb.NaiveBayes(method="mcmc", num_warmup=20, num_samples=20, num_chains=1,
                              progress_bar=False).fit(X, y)
    exact = bnb.NaiveBayes(method="bayes").fit(X, y)
    for prob in ("conditional", "marginal"):
        a = density_plot(mcmc, "Temperature", prob=prob)
        b = density_plot(exact, "Temperature", prob=prob)
        lines_a, lines_b = a.axes[0].get_lines(), b.axes[0].get_lines()
        assert len(lines_a) == len(lines_b) == len(exact.classes_)
        scale = (mcmc.class_prior_ / exact.class_prior_).to_numpy() if prob == "marginal" \
            else np.ones(2)
        for k, (la, lb) in enumerate(zip(lines_a, lines_b, strict=True)):
            np.testing.assert_allclose(la.get_ydata(), lb.get_ydata() * scale[k], rtol=1e-12)


def test_density_plot_of_a_positive_family_starts_at_zero(x64):
    """No stretch of zero density below the support; the curve is SciPy's density at the
    fitted rate."""
    from scipy import stats

    from bayesnb.plots import density_plot

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"wait": np.r_[rng.exponential(1, 50), rng.exponential(3, 50)]})
    y = np.repeat(["a", "b"], 50)
    clf = bnb.NaiveBayes(bnb.Exponential(), method="mean").fit(X, y)
    rates = clf.conditional_tables()["wait"]["rate"]
    for k, line in enumerate(density_plot(clf, "wait", X, y).axes[0].get_lines()):
        x = line.get_xdata()
        assert x.min() == 0.0
        np.testing.assert_allclose(line.get_ydata(), stats.expon(scale=1 / rates.iloc[k]).pdf(x),
                                   rtol=1e-10)


def test_count_tick_labels_of_a_wide_range_do_not_crowd():
    """A Poisson column over 100 values labels every k-th bar (at most 12 labels), each
    label still the count under its bar."""
    from bayesnb.plots import density_plot

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"mg": np.r_[rng.poisson(95, 60), rng.poisson(120, 60)]})
    y = np.repeat(["a", "b"], 60)
    ax = density_plot(bnb.NaiveBayes(bnb.Poisson()).fit(X, y), "mg", X, y).axes[0]
    labels = [int(t.get_text()) for t in ax.get_xticklabels()]
    assert 6 <= len(labels) <= 12
    low = labels[0] - ax.get_xticks()[0]  # positions are 0, 1, ... from the smallest count
    assert all(label - tick == low for label, tick in zip(labels, ax.get_xticks(), strict=True))


# ---------------------------------------------------------------- pictures that cannot mislead
def test_named_models_in_one_figure_are_told_apart():
    """Models named other than the five methods took a colour by a hash of their name, five
    colours and one marker: "alpha=0.5", "alpha=1" and "alpha=2" were three identical olive
    lines. In one figure each now has its own look, whatever the order of the names."""
    from bayesnb.plots import figure_styles

    y = np.array(["a", "b", "b", "a"])
    proba = np.array([[0.8, 0.2], [0.3, 0.7], [0.4, 0.6], [0.6, 0.4]])
    names = ["alpha=0.5", "alpha=1", "alpha=2", "pooled", "kde", "nb", "tan", "ml"]
    fig = reliability_diagram(y, dict.fromkeys(names, proba), classes=["a", "b"])
    looks = {(to_hex(line.get_color()), line.get_marker()) for line in fig.axes[0].get_lines()
             if line.get_label().split(" (")[0] in names}
    assert len(looks) == len(names)
    assert figure_styles(names) == figure_styles(names[::-1])
    assert figure_styles(["ml"])["ml"] == method_style("ml")


def test_reliability_diagram_checks_the_probabilities():
    y = np.array(["a", "b", "c", "a"])
    two = np.array([[0.8, 0.2], [0.3, 0.7], [0.4, 0.6], [0.6, 0.4]])
    with pytest.raises(ValueError, match=r"probas\['m'\] has shape \(4, 2\).*\(4, 3\)"):
        reliability_diagram(y, {"m": two}, classes=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"has shape \(3, 2\).*4 rows in y_true"):
        reliability_diagram(y[[0, 0, 0, 0]], {"m": two[:3]}, classes=["a", "b"])
    with pytest.raises(ValueError, match=r"row 1 sums to 1.3, not 1"):
        reliability_diagram(y[[0, 0, 0, 0]], {"m": two + [[0, 0], [0.3, 0], [0, 0], [0, 0]]},
                            classes=["a", "b"])


def test_posterior_density_plot_needs_one_entry():
    """The default index () on class_probs crashed in matplotlib; a partial index overlaid
    one histogram per level, unlabelled."""
    from bayesnb.plots import posterior_density_plot

    days, play = datasets.load_playtennis()
    clf = bnb.NaiveBayes(method="bayes").fit(days, play)
    with pytest.raises(ValueError, match=r"index \(\) has 0 entries.*\(class\)"):
        posterior_density_plot(clf, "class_probs")
    with pytest.raises(ValueError, match=r"has 1 entries.*\(class, Outlook_level\)"):
        posterior_density_plot(clf, "categorical.Outlook.probs", ("No",))
    fig = posterior_density_plot(clf, "class_probs", ("No",))
    assert fig.axes[0].get_xlabel() == "class_probs[No]"


def test_density_plot_refuses_labels_of_no_class_and_puts_counts_at_their_value():
    from bayesnb.plots import density_plot

    X = pd.DataFrame({"visits": [0, 1, 1, 2, 3, 2, 45, 1]})
    y = np.array(["a", "a", "a", "a", "b", "b", "b", "b"])
    clf = bnb.NaiveBayes({"visits": bnb.Poisson()}, method="ml").fit(X, y)
    with pytest.raises(ValueError, match=r"y holds 'A', which is not one of the classes"):
        density_plot(clf, "visits", X, np.char.upper(y))
    fig = density_plot(clf, "visits", X, y)
    observed = [bar for container in fig.axes[0].containers for bar in container
                if container.get_label() == "b (observed)" and bar.get_height() > 0]
    # the count 45 is drawn at 45, not in the slot after the last count of the support
    assert max(bar.get_x() + bar.get_width() / 2 for bar in observed) == pytest.approx(45, abs=0.5)


def test_labels_say_the_numbers_they_were_given():
    """0.999 was labelled a "100% interval" and limit=1.5 "clipped at ±2"."""
    from bayesnb.analysis import dependence
    from bayesnb.plots import credible_intervals_plot

    days, play = datasets.load_playtennis()
    clf = bnb.NaiveBayes(method="bayes").fit(days, play)
    fig = credible_intervals_plot(clf, days, interval=0.999, num_draws=200)
    assert "99.9% interval" in " ".join(fig.axes[0].get_legend_handles_labels()[1])
    with pytest.raises(ValueError, match=r"class_label='yes' is not one of the classes"):
        credible_intervals_plot(clf, days, class_label="yes", num_draws=200)
    report = dependence(bnb.NaiveBayes(), days.assign(Windy=days["Wind"]), play)
    fig = bnb.dependence_heatmap(report, limit=1.5)
    assert "clipped at ±1.5)" in fig.axes[1].get_ylabel()
    for bad in (-1, 0, np.nan):
        with pytest.raises(ValueError, match="limit must be a positive number"):
            bnb.dependence_heatmap(report, limit=bad)
    with pytest.raises(ValueError, match="report must be the DataFrame of"):
        bnb.dependence_heatmap(pd.DataFrame({"a": [1.0]}))


def test_learning_curves_plot_draws_only_metrics_it_has():
    curves = curves_frame()
    with pytest.raises(ValueError, match=r"metrics must name metrics of curves.*'logloss'"):
        learning_curves_plot(curves, metrics=("accuracy", "logloss"))
    with pytest.raises(ValueError, match="got 'none'"):
        learning_curves_plot(curves, metrics=())
