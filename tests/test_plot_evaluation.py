"""Plots say which evaluation they draw, agree with the tables printed beside them, show
methods whose curves coincide, and keep their legends off the data (issue 40, point 4)."""

import importlib.util
import re

import matplotlib
import numpy as np
import pandas as pd
import pytest
from example_runner import EXAMPLES

import bayesnb as bnb
from bayesnb import cli, datasets
from bayesnb import compare as bnb_compare
from bayesnb import plots as bnb_plots
from bayesnb.compare import compare, learning_curves, summarise_repeats
from bayesnb.plots import (
    credible_intervals_plot,
    density_plot,
    learning_curves_plot,
    posterior_density_plot,
    reliability_diagram,
)

matplotlib.use("Agg")


def one_line(text: str) -> str:
    return " ".join(text.split())


def categorical_csv(path, n=150, seed=3):
    """Two classes and two categorical columns: ML scores every test row (no value is absent
    from both classes of a training fold)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, "a", "b")
    c = np.where(y == "a", rng.choice(["x", "y", "z"], n, p=[.6, .3, .1]),
                 rng.choice(["x", "y", "z"], n, p=[.2, .5, .3]))
    d = np.where(rng.random(n) < np.where(y == "a", 0.7, 0.3), "p", "q")
    pd.DataFrame({"c": c, "d": d, "label": y}).to_csv(path, index=False)


def capture(monkeypatch, name):
    """Keep every figure the CLI or an example draws with ``bayesnb.plots.{name}``."""
    made, draw = [], getattr(bnb_plots, name)

    def keep(*args, **kw):
        made.append(draw(*args, **kw))
        return made[-1]

    monkeypatch.setattr(bnb_plots, name, keep)
    return made


def drawn(ax, name):
    """The data line of a model in a diagram (its label starts with the name)."""
    (line,) = [ln for ln in ax.get_lines() if ln.get_label().split(" (")[0] == name]
    return line


# ---------------------------------------------------------------- the CLI's compare
def test_cli_reliability_diagram_draws_the_calibration_table_of_the_same_cv(
        tmp_path, capsys, monkeypatch, x64):
    categorical_csv(tmp_path / "d.csv")
    diagrams = capture(monkeypatch, "reliability_diagram")
    curves = capture(monkeypatch, "learning_curves_plot")
    settings, real = [], bnb_compare.learning_curves
    monkeypatch.setattr(bnb_compare, "learning_curves",
                        lambda *a, **kw: settings.append(kw) or real(*a, **kw))
    assert cli.main(["compare", str(tmp_path / "d.csv"), "--target", "label", "--cv", "4",
                     "--seed", "2", "--methods", "ml,map,mean,bayes", "--no-progress",
                     "--infer-counts", "--csv", str(tmp_path / "t.csv"),
                     "--plots", str(tmp_path / "plots")]) == 0
    out = capsys.readouterr().out
    evaluation = ("4-fold stratified CV (random_state=2): the out-of-fold predictions of all "
                  "150 rows")
    # the table's header, the calibration table's header and the diagram's title say it
    assert out.splitlines()[0].endswith(f"d.csv: 150 rows, 2 columns; {evaluation}; metrics: "
                                        "mean over folds (*_sd columns in --csv output)")
    header = one_line(out[out.index("calibration ("):out.index("wrong:")])
    assert header.startswith(f"calibration ({evaluation}; reliability.png draws these rows)")
    (fig,) = diagrams
    assert one_line(fig.axes[0].get_title()) == f"Reliability diagram {evaluation}"
    # and the diagram's points are the calibration table's, model by model
    table = pd.read_csv(tmp_path / "t.calibration.csv")
    for name, rows in table.groupby("model"):
        assert rows["count"][rows["upper"] <= 0.5].sum() == 0  # every row had a posterior
        full = rows[rows["count"] > 0]
        line = drawn(fig.axes[0], name)
        np.testing.assert_allclose(line.get_xdata(), full["mean_predicted"], rtol=1e-12)
        np.testing.assert_allclose(line.get_ydata(), full["observed"], rtol=1e-12)
        assert (tmp_path / "plots" / "reliability.png").stat().st_size > 5000
    # the learning curves are another evaluation, and say so
    (fig,) = curves
    title = one_line(fig.texts[0].get_text())  # the suptitle
    assert title.startswith("Learning curves: mean over repeats, band: mean +- 1 sd")
    assert "test rows: one stratified 30% hold-out split (45 rows, random_state=2)" in title
    assert "training rows: 3 random subsets of each size" in title
    # of the table's models: the same settings
    ((kw,),) = [settings]
    assert kw["infer_counts"] is True and kw["class_alpha"] == 1.0


def test_compare_says_which_rows_it_scored(x64):
    X, y = datasets.load_playtennis()
    table = compare(X, y, methods=("mean",), cv=2, random_state=5)
    assert table.attrs["evaluation"] == ("2-fold stratified CV (random_state=5): the "
                                         "out-of-fold predictions of all 14 rows")
    split = (np.arange(10), np.arange(10, 14))
    assert compare(X, y, methods=("mean",), split=split).attrs["evaluation"] == \
        "one given split: 4 test rows"


# ---------------------------------------------------------------- coinciding methods
def test_coinciding_curves_are_said_in_the_legend_and_drawn_apart():
    proba = np.array([[0.8, 0.2], [0.3, 0.7], [0.55, 0.45], [0.9, 0.1]])
    other = np.array([[0.6, 0.4], [0.3, 0.7], [0.55, 0.45], [0.9, 0.1]])
    fig = reliability_diagram(["a", "b", "b", "a"], {"map": proba, "ml": proba, "mean": other},
                              classes=["a", "b"], evaluation="by hand")
    ax = fig.axes[0]
    assert drawn(ax, "ml").get_label() == "ml"  # drawn first: the reference
    assert drawn(ax, "map").get_label() == "map (= ml here: the same points)"
    assert drawn(ax, "mean").get_label() == "mean"
    assert drawn(ax, "ml").get_linestyle() == "-" and drawn(ax, "map").get_linestyle() == "--"
    assert "by hand" in ax.get_title()


def curves_by_hand():
    """Per-repeat records: ML and MAP the same wherever both were fitted (every ML repeat
    failed at 10 rows), an infinite log loss in one repeat of each at 20 rows."""
    rng = np.random.default_rng(0)
    records = []
    for n in (10, 20, 40):
        for r in range(5):
            acc, loss = rng.uniform(0.5, 0.9), rng.uniform(0.3, 0.9)
            for method in ("ml", "map", "mean"):
                failed = method == "ml" and n == 10
                value = {"accuracy": acc, "log_loss": np.inf if (
                    method != "mean" and n == 20 and r == 1) else loss}
                if method == "mean":
                    value = {k: v + 0.01 for k, v in value.items()}
                records.append({"n_train": n, "method": method, "repeat": r,
                                "failed": int(failed), "unscored_rows": 0,
                                "failure": "undefined" if failed else None,
                                **({} if failed else value)})
    return pd.DataFrame(records)


def test_summarise_repeats_medians_and_quartiles_against_numpy():
    records = curves_by_hand()
    curves = summarise_repeats(records, ["accuracy", "log_loss"])
    for (n, method, metric), row in curves.set_index(["n_train", "method", "metric"]).iterrows():
        part = records[(records["n_train"] == n) & (records["method"] == method)]
        values = np.sort(part[metric].dropna().to_numpy())
        assert row["repeats"] == len(part) and row["failed"] == part["failed"].sum()
        if not len(values):  # every repeat failed: no value
            assert np.isnan(row[["mean", "median", "q25", "q75"]].to_numpy(dtype=float)).all()
            continue
        assert row["median"] == np.median(values)  # NumPy's median: inf where it is inf
        # the empirical quartiles: the ceil(q m)-th smallest observed value
        assert row["q25"] == values[int(np.ceil(0.25 * len(values))) - 1]
        assert row["q75"] == values[int(np.ceil(0.75 * len(values))) - 1]
    ml20 = curves.set_index(["n_train", "method", "metric"]).loc[(20, "ml", "log_loss")]
    # one infinite repeat of five: an infinite mean, finite median and quartiles
    assert ml20["mean"] == np.inf
    assert np.isfinite(ml20[["median", "q25", "q75"]].to_numpy(dtype=float)).all()


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_learning_curves_plot_draws_and_names_its_statistic(statistic):
    curves = summarise_repeats(curves_by_hand(), ["accuracy", "log_loss"])
    curves.attrs["evaluation"] = "test rows: by hand"
    fig = learning_curves_plot(curves, metrics=("accuracy", "log_loss"), statistic=statistic)
    title = fig.texts[0].get_text()
    band = {"mean": "mean +- 1 sd", "median": "quartiles (q25 to q75)"}[statistic]
    assert title.startswith(f"Learning curves: {statistic} over repeats, band: {band}")
    assert title.endswith("test rows: by hand")
    for ax, metric in zip(fig.axes, ("accuracy", "log_loss"), strict=True):
        assert ax.get_ylabel() == f"{metric} ({statistic})"
        part = curves[curves["metric"] == metric].set_index(["method", "n_train"])
        for method in ("ml", "map", "mean"):
            line = drawn(ax, method)
            expected = part.loc[method, statistic].sort_index().to_numpy()
            np.testing.assert_array_equal(
                line.get_ydata(), np.where(np.isfinite(expected), expected, np.nan))
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    # ML has no value at 10 rows, so MAP equals it wherever both have one, not at every size
    assert "map (= ml here: the same values wherever both have one)" in legend
    assert "mean" in legend and "ml (5 of 15 repeats failed)" in legend
    styles = {drawn(fig.axes[0], m).get_label().split(" (")[0]:
              drawn(fig.axes[0], m).get_linestyle() for m in ("ml", "map", "mean")}
    assert styles == {"ml": "-", "map": "--", "mean": "-"}


def test_learning_curves_say_their_hold_out_split(x64):
    X, y = datasets.load_titanic()
    curves = learning_curves(X, y, methods=("mean",), train_sizes=(400,), repeats=2,
                             test_size=0.25, random_state=4)
    assert curves.attrs["evaluation"] == (
        "test rows: one stratified 25% hold-out split (551 rows, random_state=4); training "
        "rows: 2 random subsets of each size from the others")
    with pytest.raises(ValueError, match="statistic must be one of"):
        learning_curves_plot(curves, statistic="mode")


# ---------------------------------------------------------------- the example's table
def test_ml_map_bayes_plots_the_medians_its_table_prints(tmp_path, monkeypatch, capsys, x64):
    spec = importlib.util.spec_from_file_location("ml_map_bayes", EXAMPLES / "ml_map_bayes.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    table, curves, _, _ = example.run([8, 32], 3)
    figures = capture(monkeypatch, "learning_curves_plot")
    example.write_plots(tmp_path, [8, 32], curves)
    capsys.readouterr()
    (fig,) = figures
    assert "median over repeats" in fig.texts[0].get_text()
    assert "test rows: the same 5000 simulated rows" in one_line(fig.texts[0].get_text())
    for ax, metric in zip(fig.axes, ("accuracy", "log_loss", "brier"), strict=True):
        for method in ("ml", "map", "mean", "bayes"):
            printed = table[metric].xs(method, level="method").sort_index().to_numpy()
            np.testing.assert_array_equal(drawn(ax, method).get_ydata(),
                                          np.where(np.isfinite(printed), printed, np.nan))


# ---------------------------------------------------------------- legends off the data
def overlaps(fig, ax, legend) -> bool:
    fig.canvas.draw()
    a, b = ax.get_window_extent(), legend.get_window_extent()
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_legends_are_outside_the_axes(x64):
    X, y = datasets.load_titanic()
    clf = bnb.NaiveBayes(method="bayes").fit(X, y)
    proba = clf.predict_proba(X)
    figures = [reliability_diagram(y, {"bayes": proba}, classes=clf.classes_),
               credible_intervals_plot(clf, X.drop_duplicates(), num_draws=100),
               posterior_density_plot(clf, "class_probs", (0,), num_draws=200)]
    rng = np.random.default_rng(0)
    Xg = pd.DataFrame({"g": rng.normal(np.repeat([0.0, 2.0], 40), 1.0)})
    yg = np.repeat(["u", "v"], 40)
    figures.append(density_plot(bnb.NaiveBayes().fit(Xg, yg), "g", Xg, yg))
    for fig in figures:
        ax = fig.axes[0]
        assert not overlaps(fig, ax, ax.get_legend())


def test_mcmc_arviz_trace_legends_are_below_the_traces(x64):
    spec = importlib.util.spec_from_file_location("mcmc_arviz", EXAMPLES / "mcmc_arviz.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    X, y = datasets.load_titanic()
    exact = bnb.NaiveBayes(method="bayes").fit(X, y)
    idata = exact.to_arviz(draws=exact.sample_posterior(50, num_chains=2), prior_draws=None)
    axes = example.trace_plot(idata, "categorical.Sex.probs")
    legends = [(ax, ax.get_legend()) for ax in np.ravel(axes) if ax.get_legend()]
    assert len(legends) == 2
    labels = [t.get_text() for t in legends[0][1].get_texts()]
    assert labels == ["No, Female", "No, Male", "Yes, Female", "Yes, Male"]
    for ax, legend in legends:
        assert not overlaps(ax.figure, ax, legend)
    assert re.search("chain", legends[1][1].get_title().get_text())
