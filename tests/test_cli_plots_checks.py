"""Checks of the command line's reading of CSV files (labels written differently that parse as
one number, other separators, missing labels, one warning per row set under --interval),
``posterior_`` on a model of stated tables, ``density_plot`` with many classes, and the
coursework page's Beta prior and temperature standard deviations, each against expectations
computed apart from the code under test."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

import bayesnb as bnb
from bayesnb.cli import main
from bayesnb.datasets import load_temperature

matplotlib.use("Agg")

COURSEWORK = Path(__file__).resolve().parents[1] / "docs" / "coursework.md"


def call(capsys, *args):
    """``(exit status, stdout, stderr lines)`` of one in-process run."""
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, [line for line in out.err.splitlines() if line.strip()]


# ------------------------------------------------------------- labels that parse as one number
def test_labels_written_differently_stay_distinct_classes(tmp_path, capsys):
    data = tmp_path / "zeros.csv"
    data.write_text("x,label\na,01\nb,1\na,01\nb,1\na,2\nb,02\n")
    model = tmp_path / "zeros.bnb"
    code, out, err = call(capsys, "fit", data, "--target", "label", "--method", "ml",
                          "-o", model)
    assert code == 0, err
    # the four texts of the file are four classes, as the API fits them from the text
    assert list(bnb.load(model).classes_) == ["01", "02", "1", "2"]
    assert len(err) == 1 and err[0].startswith("bayesnb fit: warning: "), err
    assert "'label'" in err[0] and "'01'" in err[0] and "'1'" in err[0], err
    # predictions name the classes by the file's text
    code, out, err = call(capsys, "predict", model, data)
    assert code == 0, err
    assert out.splitlines()[0] == "prediction,p_01,p_02,p_1,p_2"


def test_codes_of_a_categorical_column_written_differently_stay_distinct_levels(tmp_path,
                                                                              capsys):
    """Zip codes "01234" (always class a) and "1234" (always b) in a column declared
    Categorical were read as numbers, one level 1234: the column that separates the classes
    predicted 0.5/0.5. The reference: the API fitted on the file's text."""
    data = tmp_path / "zips.csv"
    data.write_text("zip,label\n01234,a\n01234,a\n01234,a\n1234,b\n1234,b\n1234,b\n"
                    "02139,a\n02139,b\n")
    model = tmp_path / "zips.bnb"
    code, _, err = call(capsys, "fit", data, "--target", "label", "--family", "zip=categorical",
                        "-o", model)
    assert code == 0, err
    assert len(err) == 1 and "codes '01234' and '1234'" in err[0] and "3 levels" in err[0], err
    text = pd.read_csv(data, dtype=str)
    api = bnb.NaiveBayes({"zip": bnb.Categorical()}).fit(text[["zip"]], text["label"])
    rows = pd.DataFrame({"zip": ["01234", "1234"]})
    np.testing.assert_array_equal(bnb.load(model).predict_proba(rows), api.predict_proba(rows))
    code, out, err = call(capsys, "predict", model, data)
    assert code == 0, err
    assert out.splitlines()[1].startswith("a,") and out.splitlines()[4].startswith("b,"), out


def test_integer_labels_with_an_empty_cell_stay_integers(tmp_path, capsys):
    """pandas reads an integer column with an empty cell as floats: the classes were 1.0
    and 2.0, the predictions' header p_1.0, and a loss file written with the data's labels
    was refused."""
    data = tmp_path / "d.csv"
    data.write_text("x,y\na,1\na,1\nb,2\nb,2\na,\n")
    (tmp_path / "loss.csv").write_text("true,1,2\n1,0,1\n2,1,0\n")
    (tmp_path / "new.csv").write_text("x\na\nb\n")
    model = tmp_path / "d.bnb"
    code, _, err = call(capsys, "fit", data, "--target", "y", "--missing-label", "drop",
                        "-o", model)
    assert code == 0, err
    classes = bnb.load(model).classes_
    assert classes.dtype.kind == "i" and list(classes) == [1, 2]
    code, out, err = call(capsys, "predict", model, tmp_path / "new.csv", "--loss",
                          tmp_path / "loss.csv")
    assert code == 0, err
    assert out.splitlines()[0].startswith("prediction,p_1,p_2,")
    assert [line.split(",")[-1] for line in out.splitlines()[1:]] == ["1", "2"]


def test_labels_that_parse_without_merging_stay_numbers(tmp_path, capsys):
    data = tmp_path / "codes.csv"
    data.write_text("x,label\na,1\nb,2\na,1\nb,2\n")
    model = tmp_path / "codes.bnb"
    code, _, err = call(capsys, "fit", data, "--target", "label", "-o", model)
    assert code == 0 and err == [], err
    classes = bnb.load(model).classes_
    assert classes.dtype.kind == "i" and list(classes) == [1, 2]


def test_numbers_written_two_ways_in_compare_are_kept_apart(tmp_path, capsys):
    rows = [("a", "1.0"), ("b", "1"), ("a", "2")] * 4
    data = tmp_path / "floats.csv"
    data.write_text("x,label\n" + "".join(f"{x},{lab}\n" for x, lab in rows))
    code, out, err = call(capsys, "compare", data, "--target", "label", "--methods", "ml",
                          "--cv", "2", "--no-progress")
    assert code == 0, err
    assert any("'1.0' and '1'" in line for line in err), err


# ------------------------------------------------------------- posterior of stated tables
def test_posterior_of_stated_tables_is_a_clear_error():
    clf = bnb.from_tables({"S": 7 / 13, "E": 6 / 13},
                          bernoulli={"x1": {"S": 1.0, "E": 0.5}})
    with pytest.raises(ValueError, match="built from stated tables"):
        clf.posterior_tables()
    with pytest.raises(ValueError, match="built from stated tables"):
        clf.posterior_  # noqa: B018 - the property is what is checked


# ------------------------------------------------------------- density_plot, many classes
def _many_classes(n: int):
    rng = np.random.default_rng(0)
    k = rng.integers(0, n, 40 * n)
    k[:n] = np.arange(n)  # every class present
    y = np.array([f"c{i:02d}" for i in k])
    X = pd.DataFrame({"g": rng.normal(k, 1.0), "b": rng.random(len(k)) < k / n})
    return bnb.NaiveBayes(method="mean").fit(X, y), X, y


def _legend_inside(fig) -> bool:
    fig.canvas.draw()
    legend = fig.axes[0].get_legend().get_window_extent()
    box = fig.bbox
    return (box.x0 <= legend.x0 and legend.x1 <= box.x1 and box.y0 <= legend.y0
            and legend.y1 <= box.y1)


@pytest.mark.parametrize("n", [3, 12, 25])
def test_density_plot_gives_each_class_its_own_colour(n, tmp_path):
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from bayesnb.plots import density_plot

    clf, X, y = _many_classes(n)
    fig = density_plot(clf, "g", X, y)
    lines = fig.axes[0].get_lines()
    assert len(lines) == n
    assert len({to_hex(line.get_color()) for line in lines}) == n
    if n <= 10:  # few classes keep matplotlib's default cycle, C0, C1, ...
        assert [to_hex(line.get_color()) for line in lines] == [to_hex(f"C{k}")
                                                                for k in range(n)]
    assert _legend_inside(fig)
    fig.savefig(tmp_path / "g.png")
    plt.close(fig)

    fig = density_plot(clf, "b", X, y)
    bars = fig.axes[0].containers  # per class: the model's bars, then the observed ones
    assert len(bars) == 2 * n
    assert len({to_hex(c.patches[0].get_facecolor()) for c in bars[0::2]}) == n
    assert len(fig.axes[0].get_legend().get_texts()) == 2 * n
    assert _legend_inside(fig)
    plt.close(fig)


# ------------------------------------------------------------- missing labels
def test_missing_label_option_follows_the_advice(tmp_path, capsys):
    data = tmp_path / "misslab.csv"
    data.write_text("x,label\na,u\nb,v\na,\nb,v\na,u\n")
    model = tmp_path / "m.bnb"
    code, _, err = call(capsys, "fit", data, "--target", "label", "-o", model)
    assert code == 2 and len(err) == 1 and "--missing-label drop" in err[0], err
    code, out, err = call(capsys, "fit", data, "--target", "label", "--missing-label", "drop",
                          "-o", model)
    assert code == 0, err
    assert "on 4 rows" in out and "training accuracy 1.0000" in out, out
    assert list(bnb.load(model).classes_) == ["u", "v"]
    code, _, err = call(capsys, "fit", data, "--target", "label", "--missing-label", "error",
                        "-o", model)
    assert code == 2 and "--missing-label error refuses them" in err[0], err
    code, out, _ = call(capsys, "fit", "--help")
    assert "--missing-label" in out and "drop" in out


def test_missing_label_drop_in_compare(tmp_path, capsys):
    rows = [("a", "u"), ("b", "v")] * 6 + [("a", "")]
    data = tmp_path / "misslab.csv"
    data.write_text("x,label\n" + "".join(f"{x},{lab}\n" for x, lab in rows))
    code, _, err = call(capsys, "compare", data, "--target", "label", "--methods", "ml",
                        "--cv", "2", "--no-progress")
    assert code == 2 and "--missing-label drop" in err[0], err
    code, out, err = call(capsys, "compare", data, "--target", "label", "--methods", "ml",
                          "--cv", "2", "--no-progress", "--missing-label", "drop")
    assert code == 0, err
    assert "12 rows" in out  # the 13th row, without a label, is left out
    assert any("1 row(s)" in line for line in err), err


# ------------------------------------------------------------- one warning under --interval
def test_predict_interval_warns_once_per_unseen_value(tmp_path, capsys):
    model = tmp_path / "ti.bnb"
    assert main(["fit", "titanic", "--method", "bayes", "-o", str(model)]) == 0
    rows = tmp_path / "rows.csv"
    rows.write_text("Class,Sex,Age\n1st,Male,Kid\n")  # Kid: not a level of Age
    capsys.readouterr()
    for extra in ([], ["--interval", "0.9", "--draws", "50"]):
        code, _, err = call(capsys, "predict", model, rows, *extra)
        assert code == 0, err
        assert sum("never seen in training" in line for line in err) == 1, (extra, err)


# ------------------------------------------------------------- other separators
def test_semicolon_file_is_named_and_read_with_sep(tmp_path, capsys):
    data = tmp_path / "semi.csv"
    data.write_text("x;label\na;u\nb;v\na;u\nb;v\n")
    model = tmp_path / "semi.bnb"
    code, _, err = call(capsys, "fit", data, "--target", "label", "-o", model)
    assert code == 2 and len(err) == 1, err
    assert "separator" in err[0] and "--sep ';'" in err[0], err
    code, _, err = call(capsys, "fit", data, "--target", "label", "--sep", ";", "-o", model)
    assert code == 0, err
    code, _, err = call(capsys, "predict", model, data)
    assert code == 2 and "--sep ';'" in err[0], err
    code, out, err = call(capsys, "predict", model, data, "--sep", ";")
    assert code == 0, err
    assert out.splitlines()[1:] == ["u,0.75,0.25", "v,0.25,0.75"] * 2


def test_tab_separator_by_name(tmp_path, capsys):
    data = tmp_path / "tabs.tsv"
    data.write_text("x\tlabel\na\tu\nb\tv\n")
    model = tmp_path / "tabs.bnb"
    code, _, err = call(capsys, "fit", data, "--target", "label", "-o", model)
    assert code == 2 and "--sep '\\t'" in err[0], err
    for name in ("tab", "\\t", "\t"):
        code, _, err = call(capsys, "fit", data, "--target", "label", "--sep", name,
                            "-o", model)
        assert code == 0, (name, err)
    code, _, err = call(capsys, "fit", data, "--target", "label", "--sep", ";;", "-o", model)
    assert code == 2 and "--sep" in err[0], err


# ------------------------------------------------------------- the coursework page
def test_coursework_states_the_symmetric_beta_prior():
    text = " ".join(COURSEWORK.read_text(encoding="utf-8").split())
    assert "`Bernoulli(alpha=M, beta=M)`" in text
    assert "`Bernoulli(alpha=...)` sets α" not in text
    # Barber's smoothed estimate (n_j + M) / (n_c + 2M): all seven Scots like shortbread
    english = [[0, 0, 1, 1, 1], [1, 0, 1, 1, 0], [1, 1, 0, 0, 1], [1, 1, 0, 0, 0],
               [0, 1, 0, 1, 1], [0, 0, 0, 0, 0]]
    scottish = [[1, 1, 1, 1, 1], [1, 1, 1, 1, 0], [1, 0, 1, 0, 0], [1, 1, 0, 1, 1],
                [1, 1, 0, 1, 0], [1, 0, 0, 0, 1], [1, 0, 0, 1, 0]]
    X, y = np.array(english + scottish), np.array(["E"] * 6 + ["S"] * 7)
    for m in (0.5, 2.0, 3.0):
        clf = bnb.NaiveBayes(bnb.Bernoulli(alpha=m, beta=m), method="mean",
                             class_alpha=0).fit(X, y)
        assert clf.conditional_tables()[0].loc["S", 1] == pytest.approx((7 + m) / (7 + 2 * m))


def test_coursework_temperature_standard_deviations_are_the_quoted_ones():
    text = " ".join(COURSEWORK.read_text(encoding="utf-8").split())
    assert "`Gaussian(ddof=1)`" in text
    quoted = re.search(r"σ = ([\d.]+) for Yes, ([\d.]+) for No; the 1/N values are ([\d.]+) "
                       r"and ([\d.]+)", text)
    assert quoted, "the page's sentence on the printed standard deviations"
    yes1, no1, yes0, no0 = map(float, quoted.groups())
    X, y = load_temperature()
    t = X["Temperature"].to_numpy()
    labels = np.asarray(y)
    # by hand: numpy's 1/(N-1) and 1/N standard deviations of each class's temperatures
    assert round(float(np.std(t[labels == "Yes"], ddof=1)), 2) == yes1
    assert round(float(np.std(t[labels == "No"], ddof=1)), 2) == no1
    assert round(float(np.std(t[labels == "Yes"], ddof=0)), 2) == yes0
    assert round(float(np.std(t[labels == "No"], ddof=0)), 2) == no0
    printed = bnb.NaiveBayes(bnb.Gaussian(ddof=1), method="ml").fit(X, y)
    sd = printed.conditional_tables()["Temperature"]["sd"]
    assert (round(float(sd["Yes"]), 2), round(float(sd["No"]), 2)) == (yes1, no1)
    default = bnb.NaiveBayes(method="ml").fit(X, y).conditional_tables()["Temperature"]["sd"]
    assert (round(float(default["Yes"]), 2), round(float(default["No"]), 2)) == (yes0, no0)
