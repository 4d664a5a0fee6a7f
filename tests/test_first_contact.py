"""Issue 40: the friction a new user meets first, each fixed and checked here.

References are independent of the code under test: hand computations from the raw PlayTennis
rows (pandas counts), scikit-learn's ``cross_val_score`` and NumPy's random generator.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import jax
import numpy as np
import pandas as pd
import pytest
from numpyro.infer import Predictive
from sklearn.model_selection import cross_val_score

import bayesnb as bnb
from bayesnb import datasets
from bayesnb.families.categorical import UnseenCategoryWarning
from bayesnb.model import model_and_data

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tennis():
    X, y = datasets.load_playtennis()
    return X, y, bnb.NaiveBayes(method="ml").fit(X, y)


def _ml_log_likelihood_by_hand(X: pd.DataFrame, y: pd.Series) -> float:
    """sum_i log p(y_i) + sum_j log p(x_ij | y_i) with relative frequencies (the ML fit)."""
    total = 0.0
    for _, rows in X.groupby(y):
        n_c = len(rows)
        total += n_c * np.log(n_c / len(y))
        for col in X.columns:
            counts = rows[col].value_counts()
            total += float(np.sum(counts * np.log(counts / n_c)))
    return total


# ---------------------------------------------------------------------- summary
def test_summary_labels_the_evidence_and_prints_the_ml_log_likelihood(tennis):
    X, y, clf = tennis
    text = clf.summary(X, y)
    by_hand = _ml_log_likelihood_by_hand(X, y)
    assert by_hand == pytest.approx(-54.184002, abs=1e-6)  # the number the issue quotes
    line = next(t for t in text.splitlines() if t.startswith("log-likelihood at the fitted"))
    assert f"{by_hand:.6f}" in line and "method='ml'" in line
    evidence = next(t for t in text.splitlines() if t.startswith("log evidence"))
    assert f"{clf.log_evidence():.6f}" in evidence and "-65.357526" in evidence
    assert "marginal likelihood" in evidence and "integrated out" in evidence
    # without the rows, it says how to get the number instead of printing the evidence alone
    assert "summary(X, y)" in clf.summary()
    # the exact Bayes predictive has no single fitted parameter: said, not a number
    bayes = clf.set_params(method="bayes").summary(X, y)
    assert "log-likelihood at the fitted parameters (method='bayes'): none" in bayes
    clf.set_params(method="ml")


# ---------------------------------------------------------------------- explain
def test_explain_takes_a_dict_row_as_one_row(tennis):
    X, _, clf = tennis
    row = X.iloc[0]
    expected = clf.explain(row)
    pd.testing.assert_frame_equal(clf.explain(row.to_dict()), expected)
    # the keys' order does not matter: the model's columns are read by name
    shuffled = dict(reversed(list(row.to_dict().items())))
    pd.testing.assert_frame_equal(clf.explain(shuffled), expected)


def test_explain_refuses_a_dict_of_columns_saying_what_to_pass(tennis):
    X, _, clf = tennis
    with pytest.raises(ValueError, match=r"one row.*'Outlook' holds 3 values.*X\.iloc\[i\]"):
        clf.explain(X.head(3).to_dict(orient="list"))


def test_explain_dict_row_of_an_array_model_by_position():
    X = np.array([[0, 1], [1, 1], [1, 0], [0, 0]])
    clf = bnb.NaiveBayes(bnb.Bernoulli()).fit(X, [0, 0, 1, 1])
    pd.testing.assert_frame_equal(clf.explain({1: 1, 0: 0}), clf.explain([0, 1]))
    with pytest.raises(ValueError, match=r"2 unnamed columns.*\{0: value"):
        clf.explain({"a": 0, "b": 1})


# ---------------------------------------------------------------------- per-level priors
def test_per_level_prior_error_shows_the_nested_sorted_layout(tennis):
    X, y, _ = tennis
    layout = "[[<Overcast>, <Rain>, <Sunny>]]"
    with pytest.raises(ValueError, match="nested list") as flat:
        bnb.NaiveBayes({"Outlook": bnb.Categorical(alpha=[1.0, 2.0, 3.0])}).fit(X, y)
    assert "the column's level order" in str(flat.value) and layout in str(flat.value)
    with pytest.raises(ValueError, match="level order") as short:
        bnb.NaiveBayes({"Outlook": bnb.Categorical(alpha=[[1.0, 2.0]])}).fit(X, y)
    assert layout in str(short.value)
    # the layout the message shows is the one that works: sorted levels, one list per column
    clf = bnb.NaiveBayes({"Outlook": bnb.Categorical(alpha=[[1.0, 2.0, 3.0]])},
                         method="mean").fit(X, y)
    yes = y == "Yes"
    counts = X.loc[yes, "Outlook"].value_counts().reindex(["Overcast", "Rain", "Sunny"],
                                                           fill_value=0)
    by_hand = (counts + [1.0, 2.0, 3.0]) / (counts.sum() + 6.0)
    np.testing.assert_allclose(clf.conditional_tables()["Outlook"].loc["Yes"], by_hand,
                               rtol=1e-6)
    # a pandas category column keeps its categories' order, which the message shows (it said
    # "sorted level order" beside this unsorted layout)
    ordered = X.assign(Outlook=pd.Categorical(X["Outlook"], categories=["Sunny", "Rain",
                                                                         "Overcast"]))
    with pytest.raises(ValueError, match=r"level order: \[\[<Sunny>, <Rain>, <Overcast>\]\]"):
        bnb.NaiveBayes({"Outlook": bnb.Categorical(alpha=[1.0, 2.0, 3.0])}).fit(ordered, y)


# ---------------------------------------------------------------------- raw text
def test_raw_text_points_to_count_vectorizer():
    docs = np.array(["the cat sat", "a dog ran", "the cat ran", "a dog sat"])
    labels = [0, 1, 0, 1]
    with pytest.raises(ValueError, match="CountVectorizer") as err:
        bnb.NaiveBayes(bnb.Multinomial()).fit(docs, labels)
    assert "reshape(-1, 1)" not in str(err.value)  # that advice leads to a second error
    with pytest.raises(TypeError, match="CountVectorizer"):
        bnb.NaiveBayes(bnb.Multinomial()).fit(docs.reshape(-1, 1), labels)
    # a 1-D array of numbers keeps scikit-learn's reshape advice
    with pytest.raises(ValueError, match=r"reshape\(-1, 1\)"):
        bnb.NaiveBayes().fit(np.arange(4.0), labels)


# ---------------------------------------------------------------------- NumPyro Predictive
def test_predictive_with_y_none_samples_labels(tennis):
    X, y, clf = tennis
    model, kwargs = model_and_data(clf, X, None)
    assert kwargs["y"] is None
    out = Predictive(model, num_samples=200)(jax.random.PRNGKey(0), **kwargs)
    labels = np.asarray(out["y"])
    assert labels.shape == (200, len(X))
    assert set(np.unique(labels)) <= {0, 1}
    # y is drawn from the prior class proportions (a flat Dirichlet): mean share 1/2
    assert abs(labels.mean() - 0.5) < 0.05
    # the same with the labels given and then dropped (the opaque TypeError of issue 40)
    model, kwargs = model_and_data(clf, X, y)
    kwargs["y"] = None
    # 200 draws again: the program compiled above (JAX's persistent cache), not a new one
    assert np.asarray(Predictive(model, num_samples=200)(jax.random.PRNGKey(1), **kwargs)["y"]
                      ).shape == (200, len(X))


def test_model_with_nothing_to_size_the_rows_says_what_to_give(tennis):
    _, _, clf = tennis
    from bayesnb.model import model_and_data_for_simulation

    model, kwargs = model_and_data_for_simulation(clf)
    with pytest.raises(ValueError, match="n_rows=N"):
        Predictive(model, num_samples=1)(jax.random.PRNGKey(0), **kwargs)


# ---------------------------------------------------------------------- load_titanic
def test_load_titanic_default_order_and_shuffle():
    X, y = datasets.load_titanic()
    # the default is R's table order, sorted by the label (documented, kept)
    assert list(y.iloc[[0, 1489, 1490, 2200]]) == ["No", "No", "Yes", "Yes"]
    assert (y != y.shift()).sum() == 2
    with warnings.catch_warnings():  # a label-sorted fold meets levels its training lacks
        warnings.simplefilter("ignore", UnseenCategoryWarning)
        scores = cross_val_score(bnb.NaiveBayes(), X, y, cv=3)
    np.testing.assert_allclose(scores, [0.44, 0.78, 0.85], atol=0.01)  # the docstring's
    Xs, ys = datasets.load_titanic(shuffle=True, random_state=0)
    order = np.random.default_rng(0).permutation(len(X))
    pd.testing.assert_frame_equal(Xs, X.iloc[order].reset_index(drop=True))
    pd.testing.assert_series_equal(ys, y.iloc[order].reset_index(drop=True))
    assert cross_val_score(bnb.NaiveBayes(), Xs, ys, cv=3).min() > 0.75
    assert "sorted by the label" in datasets.load_titanic.__doc__


# ---------------------------------------------------------------------- py.typed
def test_package_is_marked_typed():
    assert (ROOT / "bayesnb" / "py.typed").is_file()
    text = (ROOT / "pyproject.toml").read_text()
    assert 'bayesnb = ["py.typed"]' in text


# ---------------------------------------------------------------------- the CLI on real files
def call(capsys, *args):
    """``(exit status, stdout, stderr lines)`` of one in-process ``bayesnb`` run."""
    from bayesnb.cli import main

    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, [line for line in out.err.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def real_file(tmp_path_factory):
    """A CSV as users have them: an id column, a Gaussian, a count and two word counts."""
    rng = np.random.default_rng(0)
    n = 60
    y = rng.choice(["a", "b"], n)
    frame = pd.DataFrame({"id": np.arange(1000, 1000 + n),
                          "x": rng.normal(np.where(y == "a", 0.0, 2.0)),
                          "k": rng.poisson(np.where(y == "a", 1, 4)),
                          "w1": rng.poisson(2, n), "w2": rng.poisson(3, n), "y": y})
    path = tmp_path_factory.mktemp("data") / "d.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_cli_warns_about_an_identifier_column_and_drop_or_id_leave_it_out(
        real_file, tmp_path, capsys):
    path, frame = real_file
    code, _, err = call(capsys, "fit", path, "--target", "y", "-o", tmp_path / "m.bnb")
    assert code == 0
    (warning,) = [e for e in err if "identifier" in e]
    assert "'id'" in warning and "60 values are distinct integers" in warning
    assert "--drop id" in warning and "--id id" in warning
    assert "id" in bnb.load(tmp_path / "m.bnb").fitted_.columns  # warned, still modelled
    for option in ("--drop", "--id"):
        code, _, err = call(capsys, "fit", path, "--target", "y", option, "id",
                            "-o", tmp_path / "m.bnb")
        assert code == 0 and err == []
        assert list(bnb.load(tmp_path / "m.bnb").fitted_.columns) == ["x", "k", "w1", "w2"]
    # distinct text ids too, and --drop is repeatable
    named = frame.assign(name=[f"p{i}" for i in range(len(frame))])
    named.to_csv(tmp_path / "named.csv", index=False)
    code, _, err = call(capsys, "fit", tmp_path / "named.csv", "--target", "y", "--drop", "id",
                        "-o", tmp_path / "m.bnb")
    assert code == 0 and any("'name'" in e and "distinct strings" in e for e in err)
    code, _, err = call(capsys, "fit", tmp_path / "named.csv", "--target", "y", "--drop", "id",
                        "--drop", "name", "-o", tmp_path / "m.bnb")
    assert code == 0 and err == []
    code, _, err = call(capsys, "fit", path, "--target", "y", "--drop", "nope",
                        "-o", tmp_path / "m.bnb")
    assert code == 2 and "--drop nope" in err[0] and "not in" in err[0]


def test_cli_warns_about_the_seed_playtennis_day_column(tmp_path, capsys):
    """The seed's PlayTennis table (14 rows) has a Day column, D1..D14: modelled silently as
    a feature, it moved p(No) of a new day from 0.735314 to 0.770796 (hunt 45); strings are
    now taken for an identifier from 10 rows, integers still from 20."""
    from bayesnb.datasets import load_playtennis

    days, play = load_playtennis()
    frame = days.assign(Day=[f"D{i}" for i in range(1, 15)], PlayTennis=play)
    frame.to_csv(tmp_path / "tennis.csv", index=False)
    code, _, err = call(capsys, "fit", tmp_path / "tennis.csv", "--target", "PlayTennis",
                        "-o", tmp_path / "m.bnb")
    assert code == 0 and any("'Day'" in e and "14 values are distinct strings" in e
                             for e in err)
    frame.assign(Day=range(14)).to_csv(tmp_path / "numbered.csv", index=False)
    code, _, err = call(capsys, "fit", tmp_path / "numbered.csv", "--target", "PlayTennis",
                        "-o", tmp_path / "m.bnb")
    assert code == 0 and not any("identifier" in e for e in err)


def test_cli_predict_id_column_comes_first_and_joins_back(real_file, tmp_path, capsys):
    path, frame = real_file
    model = tmp_path / "m.bnb"
    assert call(capsys, "fit", path, "--target", "y", "--id", "id", "-o", model)[0] == 0
    rows = frame.drop(columns="y").iloc[[5, 0, 17]]
    rows.to_csv(tmp_path / "new.csv", index=False)
    code, out, err = call(capsys, "predict", model, tmp_path / "new.csv", "--id", "id",
                          "--precision", "12")
    assert code == 0 and err == []
    pred = pd.read_csv(io.StringIO(out))
    assert list(pred.columns) == ["id", "prediction", "p_a", "p_b"]  # no intervals unasked
    assert list(pred["id"]) == list(rows["id"])
    # the same numbers as the library fitted without the id column
    clf = bnb.NaiveBayes().fit(frame.drop(columns=["id", "y"]), frame["y"])
    np.testing.assert_allclose(pred[["p_a", "p_b"]],
                               clf.predict_proba(rows.drop(columns="id")), rtol=1e-5)
    # two identifiers: both kept out of the features, both first (a second --id replaced the
    # first, which was then modelled as a feature)
    two = tmp_path / "two.bnb"
    assert call(capsys, "fit", path, "--target", "y", "--id", "id", "--id", "k", "-o",
                two)[0] == 0
    assert bnb.load(two).feature_names_in_.tolist() == ["x", "w1", "w2"]
    code, out, err = call(capsys, "predict", two, tmp_path / "new.csv", "--id", "id", "--id",
                          "k")
    assert code == 0 and err == []
    pred = pd.read_csv(io.StringIO(out))
    assert list(pred.columns[:3]) == ["id", "k", "prediction"]
    assert list(pred["k"]) == list(rows["k"])


def test_cli_predict_computes_intervals_only_when_asked(real_file, tmp_path, capsys):
    path, frame = real_file
    model = tmp_path / "m.bnb"
    assert call(capsys, "fit", path, "--target", "y", "--drop", "id", "-o", model)[0] == 0
    frame.drop(columns=["id", "y"]).head(3).to_csv(tmp_path / "new.csv", index=False)
    code, out, _ = call(capsys, "predict", model, tmp_path / "new.csv")
    assert code == 0 and "lower_" not in out and "entropy" not in out
    for args, mass in ((["--interval"], 0.9), (["--interval", "0.5"], 0.5)):
        code, out, _ = call(capsys, "predict", model, tmp_path / "new.csv", *args)
        pred = pd.read_csv(io.StringIO(out))
        assert code == 0 and {"lower_a", "upper_a", "entropy", "mutual_info"} <= set(pred)
        # a central interval of mass m: its width grows with m (a coarse, independent check)
        assert (pred["lower_a"] <= pred["p_a"] + 0.05).all() and (
            pred["p_a"] <= pred["upper_a"] + 0.05).all(), mass


def test_cli_family_hyperparameters(real_file, tmp_path, capsys):
    path, frame = real_file
    model = tmp_path / "m.bnb"
    code, _, err = call(capsys, "fit", path, "--target", "y", "--drop", "id", "--method", "mean",
                        "--family", "w1,w2=multinomial:alpha=0.5",
                        "--family", "x=gaussian:shape=2,rate=0.1,pooled=true", "-o", model)
    assert code == 0, err
    clf = bnb.load(model)
    families = {c: b.family for b in clf.blocks_ for c in b.schema.columns}
    assert families["w1"].alpha == 0.5 and families["w1"] is families["w2"]
    g = families["x"]
    assert (g.shape, g.rate, g.pooled) == (2.0, 0.1, True)
    # the Multinomial table is Lidstone's (count + 0.5) / (total + 0.5 V), by hand
    words = frame[frame["y"] == "a"][["w1", "w2"]].sum()
    by_hand = (words + 0.5) / (words.sum() + 1.0)
    table = clf.conditional_tables()[("w1", "w2")]
    np.testing.assert_allclose(np.asarray(table.loc["a"], dtype=float), by_hand, rtol=1e-5)


@pytest.mark.parametrize("family", ["multinomial", "gaussian", "poisson", "categorical",
                                    "bernoulli", "kde", "exponential"])
def test_cli_family_hyperparameter_errors_list_the_declared_ones(family, capsys):
    from bayesnb.families import REGISTRY

    if family not in REGISTRY:  # the KDE's registry name
        family = next(n for n, c in REGISTRY.items() if c.__name__ == "KernelDensity")
    code, _, err = call(capsys, "fit", "titanic", "--family", f"Class={family}:nope=1",
                        "-o", "unused.bnb")
    assert code == 2 and len(err) == 1
    assert f"{family} has no hyperparameter 'nope'" in err[0]
    assert ", ".join(REGISTRY[family]._hyper) in err[0]  # from the family's declaration
    code, _, err = call(capsys, "fit", "titanic", "--family", f"{family}:alpha", "-o", "u.bnb")
    assert code == 2 and "KEY=VALUE" in err[0]


def test_cli_inference_options_reach_naive_bayes(real_file, tmp_path, capsys):
    path, _ = real_file
    model = tmp_path / "m.bnb"
    assert call(capsys, "fit", path, "--target", "y", "--drop", "id", "--infer-counts",
                "-o", model)[0] == 0
    names = {c: b.family.name for b in bnb.load(model).blocks_ for c in b.schema.columns}
    assert names["k"] == "poisson" and names["x"] == "gaussian"
    assert call(capsys, "fit", path, "--target", "y", "--drop", "id", "--use-kernel",
                "-o", model)[0] == 0
    assert {type(b.family).__name__ for b in bnb.load(model).blocks_} == {"KernelDensity"}
    assert call(capsys, "fit", path, "--target", "y", "--drop", "id", "--feature-prior", "0.3",
                "-o", model)[0] == 0
    assert bnb.load(model).feature_prior == 0.3
    code, _, err = call(capsys, "fit", path, "--target", "y", "--feature-prior", "1", "-o", model)
    assert code == 2 and "strictly between 0 and 1" in err[0]


@pytest.mark.parametrize("command", ["compare titanic", "fit titanic -o m.bnb",
                                     "predict m.bnb titanic", "show m.bnb",
                                     "explain m.bnb rows.csv", "datasets"])
def test_every_command_accepts_no_progress(command):
    from bayesnb.cli import build_parser

    args = build_parser().parse_args(command.split() + ["--no-progress"])
    assert args.no_progress is True


def test_compare_titanic_explains_its_columns_and_why_methods_coincide(capsys):
    code, out, _ = call(capsys, "compare", "titanic", "--cv", "3", "--no-progress")
    assert code == 0
    lines = out.splitlines()
    for column in ("accuracy:", "log_loss:", "brier:", "ece: expected calibration error",
                   "entropy: mean entropy"):
        assert column in " ".join(lines)
    (ml_map,) = [ln for ln in lines if ln.startswith("ml = map:")]
    assert "flat priors" in ml_map and "is ML" in ml_map
    (mean_bayes,) = [ln for ln in lines if ln.startswith("mean = bayes:")]
    assert "posterior predictive" in mean_bayes
    header = next(ln for ln in lines if "accuracy" in ln and "log_loss" in ln)
    assert "fit_s" not in header  # the timings come last, in a table of their own
    assert lines.index(header) < next(i for i, ln in enumerate(lines) if "fit_s" in ln)
    assert max(i for i, ln in enumerate(lines) if "calibration" in ln) < next(
        i for i, ln in enumerate(lines) if "fit_s" in ln)
    # the claim checked directly: ML and MAP (flat priors), mean and Bayes give the same
    # probabilities on Titanic
    X, y = datasets.load_titanic()
    p = {m: bnb.NaiveBayes(method=m).fit(X, y).predict_proba(X) for m in
         ("ml", "map", "mean", "bayes")}
    np.testing.assert_allclose(p["ml"], p["map"], atol=1e-6)
    np.testing.assert_allclose(p["mean"], p["bayes"], atol=1e-6)
    assert np.abs(p["ml"] - p["mean"]).max() > 1e-4


def test_compare_says_nothing_when_methods_differ_and_no_reason_when_unknown():
    from bayesnb.compare import compare, identical_note

    X, y = datasets.load_titanic()
    X, y = X.iloc[::4], y.iloc[::4]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnseenCategoryWarning)
        # class_alpha 2 makes MAP's class term differ from ML's: no ml = map line
        table = compare(X, y, methods=("ml", "map", "mean", "bayes"), cv=3, class_alpha=2.0)
    notes = identical_note(table)
    assert not any(n.startswith("ml = map") for n in notes)
    assert any(n.startswith("mean = bayes") for n in notes)
    iris = datasets.load("iris")
    table = compare(*iris, methods=("mean", "bayes"), cv=3)  # Student-t is not the plug-in
    assert identical_note(table) == []


def test_cli_text_read_as_missing_is_told_and_keep_na_text_keeps_it(tmp_path, capsys):
    """pandas reads CSV cells written NA, None, null, nan ... as missing: a region column of
    levels NA and EU lost its level NA silently (training accuracy 0.55), classes None and
    Severe became one class under --missing-label drop, and a loss file naming the class
    None failed (hunt 47). fit warns naming the cells; --keep-na-text keeps them."""
    rng = np.random.default_rng(0)
    y = rng.choice(["None", "Severe"], 60)
    region = np.where(y == "None", rng.choice(["NA", "EU"], 60, p=[0.9, 0.1]),
                      rng.choice(["NA", "EU"], 60, p=[0.1, 0.9]))
    pd.DataFrame({"region": region, "x": rng.normal(size=60), "y": y}).to_csv(
        tmp_path / "d.csv", index=False)
    model = tmp_path / "m.bnb"
    code, _, err = call(capsys, "fit", tmp_path / "d.csv", "--target", "y", "-o", model)
    assert code == 2 and "missing label" in err[-1]
    n_na, n_none = int((region == "NA").sum()), int((y == "None").sum())
    assert any(f"column 'region' of {tmp_path / 'd.csv'}: {n_na} cells written 'NA' are read "
               f"as missing values" in e and "--keep-na-text" in e for e in err)
    assert any("column 'y'" in e and f"{n_none} cells written 'None'" in e for e in err)
    code, _, err = call(capsys, "fit", tmp_path / "d.csv", "--target", "y", "--keep-na-text",
                        "-o", model)
    assert code == 0 and not any("missing" in e for e in err)
    clf = bnb.load(model)
    assert clf.classes_.tolist() == ["None", "Severe"]
    by_hand = pd.crosstab(y, region, normalize="index")  # ML tables against the file's counts
    assert clf.set_params(method="ml").conditional_tables()["region"].loc["None", "NA"] == \
        pytest.approx(by_hand.loc["None", "NA"])
    (tmp_path / "loss.csv").write_text(",None,Severe\nNone,0,1\nSevere,5,0\n")
    code, out, err = call(capsys, "predict", model, tmp_path / "d.csv", "--keep-na-text",
                          "--loss", tmp_path / "loss.csv")
    assert code == 0 and "expected_loss_None" in out.splitlines()[0]


def test_cli_decimal_commas_are_told_and_read_with_decimal(tmp_path, capsys, x64):
    """A ';'-separated CSV with decimal commas (many locales' export) read its numbers as
    text: a Categorical of one level per value, fitted with training accuracy 0.95 and no
    warning, predicting the class prior on new rows (hunt 52). fit warns naming the column;
    --decimal ',' reads them as numbers, as pandas' read_csv(decimal=',') does."""
    rng = np.random.default_rng(0)
    y = rng.choice(["ja", "nein"], 40)
    temp = np.round(np.where(y == "ja", 20, 24) + rng.normal(0, 3, 40), 2)
    pd.DataFrame({"temp": temp, "target": y}).to_csv(tmp_path / "d.csv", sep=";",
                                                     decimal=",", index=False)
    pd.DataFrame({"temp": [19.5, 25.25]}).to_csv(tmp_path / "new.csv", sep=";", decimal=",",
                                                 index=False)
    model = tmp_path / "m.bnb"
    code, _, err = call(capsys, "fit", tmp_path / "d.csv", "--sep", ";", "--target", "target",
                        "-o", model)
    assert code == 0 and any("column 'temp'" in e and "decimal comma" in e
                             and "--decimal ','" in e for e in err)
    code, _, err = call(capsys, "fit", tmp_path / "d.csv", "--sep", ";", "--decimal", ",",
                        "--target", "target", "-o", model)
    assert code == 0 and not any("decimal" in e for e in err)
    code, out, _ = call(capsys, "predict", model, tmp_path / "new.csv", "--sep", ";",
                        "--decimal", ",")
    reference = bnb.NaiveBayes().fit(pd.DataFrame({"temp": temp}), y).predict_proba(
        pd.DataFrame({"temp": [19.5, 25.25]}))
    got = pd.read_csv(io.StringIO(out))[["p_ja", "p_nein"]].to_numpy()
    np.testing.assert_allclose(got, reference, rtol=1e-5)
    code, _, err = call(capsys, "fit", tmp_path / "d.csv", "--decimal", ",", "--target",
                        "target", "-o", model)
    assert code == 2 and "--decimal ',' is also the field separator" in err[-1]
    # the mirror case: decimal points read with --decimal ',' (review of hunt 52's fix)
    pd.DataFrame({"temp": temp, "target": y}).to_csv(tmp_path / "p.csv", sep=";", index=False)
    code, _, err = call(capsys, "fit", tmp_path / "p.csv", "--sep", ";", "--decimal", ",",
                        "--target", "target", "-o", model)
    assert code == 0 and any("decimal point" in e and "leave out --decimal ','" in e
                             for e in err)
    # whole numbers with thousands separators are no decimal commas; '.' may separate fields
    pd.DataFrame({"n": ["12,500", "3,000", "1,250"] * 4, "target": list("ab") * 6}).to_csv(
        tmp_path / "t.csv", sep=";", index=False)
    code, _, err = call(capsys, "fit", tmp_path / "t.csv", "--sep", ";", "--target", "target",
                        "-o", model)
    assert code == 0 and not any("decimal" in e for e in err)
    (tmp_path / "dot.csv").write_text("x.target\n1.a\n2.b\n1.a\n2.b\n")
    code, _, err = call(capsys, "fit", tmp_path / "dot.csv", "--sep", ".", "--target", "target",
                        "-o", model)
    assert code == 0, err


def test_cli_reads_a_csv_for_a_model_of_integer_column_labels(tmp_path, capsys):
    """A model fitted in Python on pd.DataFrame(array) reads columns 0 and 1; a CSV header is
    text ('0', '1'), so bayesnb predict matched nothing (hunt 52). Headers that write the
    model's labels are read as them."""
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(40, 2)))
    y = np.where(X[0] + 0.3 * rng.normal(size=40) > 0, "a", "b")
    model = bnb.save(bnb.NaiveBayes().fit(X, y), tmp_path / "m.bnb")
    X.iloc[:3].to_csv(tmp_path / "new.csv", index=False)
    code, out, err = call(capsys, "predict", model, tmp_path / "new.csv")
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))[["p_a", "p_b"]].to_numpy()
    np.testing.assert_allclose(got, bnb.load(model).predict_proba(X.iloc[:3]), rtol=1e-5)


def test_cli_loss_file_is_read_with_the_data_separator(tmp_path, capsys):
    """predict --loss read its file with ',' whatever --sep said (review of hunt 52's fix): a
    ';' loss file with decimal commas is read as the data are."""
    rng = np.random.default_rng(0)
    y = rng.choice(["ja", "nein"], 30)
    x = np.where(y == "ja", 1.0, 3.0) + rng.normal(size=30)
    pd.DataFrame({"x": x, "y": y}).to_csv(tmp_path / "d.csv", sep=";", decimal=",", index=False)
    model = tmp_path / "m.bnb"
    code, _, err = call(capsys, "fit", tmp_path / "d.csv", "--sep", ";", "--decimal", ",",
                        "--target", "y", "-o", model)
    assert code == 0, err
    (tmp_path / "loss.csv").write_text(";ja;nein\nja;0;2,5\nnein;1,5;0\n")
    code, out, err = call(capsys, "predict", model, tmp_path / "d.csv", "--sep", ";",
                          "--decimal", ",", "--loss", tmp_path / "loss.csv")
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out))
    proba = table[["p_ja", "p_nein"]].to_numpy()
    np.testing.assert_allclose(table["expected_loss_ja"], 1.5 * proba[:, 1], rtol=1e-5)
    np.testing.assert_allclose(table["expected_loss_nein"], 2.5 * proba[:, 0], rtol=1e-5)
