"""The ``bayesnb`` command line end to end on real CSV files, and ``compare``'s metrics
checked against scikit-learn's own metric functions.

One test runs the installed console script as a real process (the entry point and its exit
status); the others call the same ``main`` in this process, which is what the script runs, so the
suite does not pay an interpreter start and a cold JAX compile per command."""

import contextlib
import io
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss
from sklearn.model_selection import StratifiedKFold

import bayesnb as bnb
from bayesnb import datasets
from bayesnb.cli import main
from bayesnb.compare import classification_metrics, compare


def console_script():
    found = shutil.which("bayesnb") or str(Path(sys.executable).parent / "bayesnb")
    if not Path(found).exists():
        pytest.skip("the bayesnb console script is not installed (pip install .)")
    return found


def run(*args):
    """The command's exit status, stdout and stderr, run in this process through ``main``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def test_the_console_script_runs_as_a_process(tmp_path):
    """The installed ``bayesnb`` script: its help, a fit, and a mistake's exit status 2."""
    script = console_script()
    help_ = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=180,
                           check=False)
    assert help_.returncode == 0 and "usage: bayesnb" in help_.stdout, help_.stderr
    fit = subprocess.run([script, "fit", "playtennis", "-o", str(tmp_path / "m.bnb")],
                         capture_output=True, text=True, timeout=180, check=False)
    assert fit.returncode == 0 and "fitted 'mean' on 14 rows" in fit.stdout, fit.stderr
    bad = subprocess.run([script, "show", str(tmp_path / "missing.bnb")], capture_output=True,
                         text=True, timeout=180, check=False)
    assert bad.returncode == 2 and "No such file" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.fixture
def titanic_csv(tmp_path):
    X, y = datasets.load_titanic()
    path = tmp_path / "titanic.csv"
    X.assign(Survived=y).to_csv(path, index=False)
    return path


def test_help_on_every_command():
    for args in ([], ["compare"], ["fit"], ["predict"], ["show"], ["datasets"]):
        out = run(*args, "--help")
        assert out.returncode == 0, out.stderr
        assert "usage: bayesnb" in out.stdout


def test_compare_on_a_csv_file(titanic_csv, tmp_path):
    out = run("compare", titanic_csv, "--target", "Survived", "--cv", "3", "--csv",
              tmp_path / "t.csv")
    assert out.returncode == 0, out.stderr
    for method in ("ml", "map", "mean", "bayes"):
        assert method in out.stdout
    table = pd.read_csv(tmp_path / "t.csv", index_col=0)
    assert table.loc[["ml", "map", "mean", "bayes"], "accuracy"].between(0.7, 0.85).all()


def test_compare_writes_plots(tmp_path):
    out = run("compare", "titanic", "--cv", "3", "--plots", tmp_path / "plots", "--no-progress")
    assert out.returncode == 0, out.stderr
    for name in ("reliability.png", "learning_curves.png"):
        assert (tmp_path / "plots" / name).stat().st_size > 5000


def test_compare_builtin_dataset_reports_infinite_ml_log_loss():
    out = run("compare", "playtennis", "--cv", "3")
    assert out.returncode == 0, out.stderr
    assert "inf" in out.stdout and "zero_prob_rows" in out.stdout


def test_fit_predict_show_round_trip(titanic_csv, tmp_path):
    model = tmp_path / "m.bnb"
    out = run("fit", titanic_csv, "--target", "Survived", "--method", "ml", "-o", model)
    assert out.returncode == 0, out.stderr
    new = tmp_path / "new.csv"
    pd.DataFrame({"Class": ["2nd", "1st"], "Sex": [None, "Female"],
                  "Age": [None, "Adult"]}).to_csv(new, index=False)
    out = run("predict", model, new, "-o", tmp_path / "pred.csv", "--precision", "10",
              "--interval")  # intervals only when asked (issue 40)
    assert out.returncode == 0, out.stderr
    pred = pd.read_csv(tmp_path / "pred.csv")
    assert list(pred.columns) == ["prediction", "p_No", "p_Yes", "lower_No", "upper_No",
                                  "lower_Yes", "upper_Yes", "entropy", "mutual_info"]
    assert (pred["lower_Yes"] <= pred["upper_Yes"]).all()
    # e1071's posterior for a 2nd-class passenger (Downie notes), Sex and Age missing
    np.testing.assert_allclose(pred.loc[0, ["p_No", "p_Yes"]], [0.5859649, 0.4140351],
                               atol=2e-7)
    assert pred.loc[1, "prediction"] == "Yes"
    out = run("show", model)
    assert out.returncode == 0 and "0.676965" in out.stdout and "log evidence" in out.stdout


def test_fit_with_declared_families(tmp_path):
    rng = np.random.default_rng(0)
    y = rng.choice(["a", "b"], 80)
    frame = pd.DataFrame({"w1": rng.poisson(2, 80), "w2": rng.poisson(3, 80),
                          "n": rng.poisson(1, 80), "label": y})
    frame.to_csv(tmp_path / "d.csv", index=False)
    out = run("fit", tmp_path / "d.csv", "--target", "label", "--family", "w1,w2=multinomial",
              "--family", "n=poisson", "-o", tmp_path / "m.bnb")
    assert out.returncode == 0, out.stderr
    names = sorted(b.family.name for b in bnb.load(tmp_path / "m.bnb").blocks_)
    assert names == ["multinomial", "poisson"]


@pytest.mark.parametrize("args, message", [
    (["compare", "no_such_file.csv", "--target", "y"], "neither a file nor a built-in"),
    (["compare", "{csv}", "--target", "nope"], "column 'nope' is not in"),
    (["compare", "{csv}"], "--target is required"),
    (["compare", "titanic", "--methods", "ml,magic"], "method must be one of"),
    (["fit", "{csv}", "--target", "Survived", "--family", "Class=poisson", "-o", "{tmp}/m.bnb"],
     "column 'Class'"),
    (["fit", "{csv}", "--target", "Survived", "--family", "Class=nonsense", "-o", "{tmp}/m.bnb"],
     "FAMILY one of"),
    (["fit", "{csv}", "--target", "Survived", "--method", "map", "--class-alpha", "0.5",
      "-o", "{tmp}/m.bnb"], "class_alpha >= 1"),
    (["predict", "{csv}", "{csv}"], "corrupt or truncated model file"),
    (["show", "{tmp}/missing.bnb"], "No such file"),
    (["compare", "{bad}", "--target", "y"], "could not read"),
])
def test_error_paths_are_one_line_messages(args, message, titanic_csv, tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    args = [a.format(csv=titanic_csv, tmp=tmp_path, bad=bad) for a in args]
    out = run(*args)
    assert out.returncode == 2
    assert message in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


def test_predict_with_an_unknown_category_is_a_clear_error(titanic_csv, tmp_path):
    run("fit", titanic_csv, "--target", "Survived", "--method", "ml", "-o", tmp_path / "m.bnb")
    pd.DataFrame({"Class": ["Steerage"], "Sex": ["Male"], "Age": ["Adult"]}).to_csv(
        tmp_path / "new.csv", index=False)
    out = run("predict", tmp_path / "m.bnb", tmp_path / "new.csv")
    assert out.returncode == 2 and "'Steerage'" in out.stderr and "Class" in out.stderr


def test_metrics_match_scikit_learn():
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(200, 3)) * 2
    y = rng.integers(0, 3, 200)
    m = classification_metrics(logits, y)
    prob = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    assert m["accuracy"] == pytest.approx(accuracy_score(y, prob.argmax(axis=1)))
    assert m["log_loss"] == pytest.approx(log_loss(y, prob, labels=[0, 1, 2]), rel=1e-9)
    onehot = np.eye(3)[y]
    assert m["brier"] == pytest.approx(np.mean(np.sum((prob - onehot) ** 2, axis=1)))
    # scikit-learn's binary Brier score is the one-class version: half the multi-class sum
    binary = classification_metrics(logits[:, :2], (y > 0).astype(int))
    p2 = np.exp(logits[:, 1]) / np.exp(logits[:, :2]).sum(axis=1)
    assert binary["brier"] == pytest.approx(2 * brier_score_loss((y > 0).astype(int), p2))
    assert m["entropy"] == pytest.approx(np.mean(-np.sum(prob * np.log(prob), axis=1)))


def test_zero_probability_is_an_infinite_log_loss_not_a_crash():
    log_joint = np.array([[0.0, -np.inf], [-1.0, -2.0], [-np.inf, -np.inf]])
    m = classification_metrics(log_joint, np.array([1, 0, 0]))
    assert m["log_loss"] == np.inf
    assert m["zero_prob_rows"] == 2 and m["undefined_rows"] == 1


def test_compare_table_equals_direct_scikit_learn_computation(x64):
    X, y = datasets.load_titanic()
    table = compare(X, y, methods=("ml", "mean", "bayes"), cv=4, random_state=1)
    for method in ("ml", "mean", "bayes"):
        acc, ll = [], []
        for train, test in StratifiedKFold(4, shuffle=True, random_state=1).split(X, y):
            clf = bnb.NaiveBayes(method=method).fit(X.iloc[train], y.iloc[train])
            prob = clf.predict_proba(X.iloc[test])
            acc.append(accuracy_score(y.iloc[test], clf.classes_[prob.argmax(axis=1)]))
            ll.append(log_loss(y.iloc[test], prob, labels=clf.classes_))
        assert table.loc[method, "accuracy"] == pytest.approx(np.mean(acc), rel=1e-12)
        assert table.loc[method, "log_loss"] == pytest.approx(np.mean(ll), rel=1e-9)
        assert table.loc[method, "accuracy_sd"] == pytest.approx(np.std(acc, ddof=1), rel=1e-9)
    assert set(table.columns) >= {"brier", "ece", "entropy", "fit_s", "predict_s", "error"}


def test_compare_with_missing_labels_drops_them_only_when_told(x64):
    """Missing labels reached StratifiedKFold, whose "Supported target types are: ('binary',
    'multiclass'). Got 'unknown'" came with and without missing_label='drop'. Dropped, the
    table is the labelled rows' table."""
    X, y = datasets.load_titanic()
    gaps = y.astype(object).copy()
    gaps.iloc[[0, 5, 700]] = None
    with pytest.raises(ValueError, match=r"y has 3 missing label\(s\) \(first at row 0\); "
                                         r".*missing_label='drop' leaves such rows out"):
        compare(X, gaps, methods=("mean",), cv=3, random_state=0)
    with pytest.warns(bnb.MissingLabelWarning, match="leaves these 3 row"):
        dropped = compare(X, gaps, methods=("mean",), cv=3, random_state=0,
                          missing_label="drop")
    keep = gaps.notna().to_numpy()
    direct = compare(X[keep], y[keep], methods=("mean",), cv=3, random_state=0)
    for metric in ("accuracy", "log_loss", "brier"):
        assert dropped.loc["mean", metric] == direct.loc["mean", metric]


def test_compare_on_a_scikit_learn_dataset_including_mcmc(x64):
    import warnings

    from bayesnb.inference import ConvergenceWarning

    X, y = datasets.load("iris")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # deliberately short chains
        table = compare(X, y, methods=("ml", "map", "mean", "bayes", "mcmc"), cv=3,
                        features=bnb.Gaussian(), num_warmup=150, num_samples=150,
                        num_chains=1, progress_bar=False, warm_up=False)  # no second NUTS run
    assert list(table.index) == ["ml", "map", "mean", "bayes", "mcmc"]
    assert (table["error"] == "").all()
    for method in ("ml", "bayes"):
        accuracies = []
        for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y):
            clf = bnb.NaiveBayes(bnb.Gaussian(), method=method).fit(X.iloc[train], y.iloc[train])
            accuracies.append(accuracy_score(y.iloc[test], clf.predict(X.iloc[test])))
        assert table.loc[method, "accuracy"] == pytest.approx(np.mean(accuracies))
    assert abs(table.loc["mcmc", "accuracy"] - table.loc["bayes", "accuracy"]) < 0.05


def test_compare_warns_once_with_its_count_of_fits_that_met_an_unseen_level():
    """Folds whose training rows lack a test row's level: one warning, counting the fits
    (models x folds, the warm-up fit not counted again), naming the column."""
    import warnings

    from bayesnb.families.categorical import UnseenCategoryWarning

    X = pd.DataFrame({"colour": ["red", "blue", "red", "blue", "red", "blue", "green", "blue"]})
    y = np.array(["a", "a", "a", "a", "b", "b", "b", "b"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compare(X, y, ["mean", "bayes"], cv=2)
    unseen = [w for w in caught if issubclass(w.category, UnseenCategoryWarning)]
    assert len(unseen) == 1, [str(w.message) for w in caught]
    # "green" is in one row: the fold that tests it lacks it, under both methods
    assert str(unseen[0].message).startswith("compare: in 2 of 4 fits (models x folds)")
    assert "column 'colour'" in str(unseen[0].message)


def test_predict_writes_float_labels_as_labels(tmp_path, capsys):
    """A target read as floats (1234567.0): --precision's float format rounded the prediction
    column too, so two classes printed as the same text, 1.23457e+06."""
    data = tmp_path / "labels.csv"
    data.write_text("x,label\n1,1234567.0\n2,1234567.0\n8,1234568.0\n9,1234568.0\n")
    assert main(["fit", str(data), "--target", "label", "-o", str(tmp_path / "m.bnb")]) == 0
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "m.bnb"), str(data), "--precision", "2"]) == 0
    out = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype={"prediction": str})
    assert out["prediction"].tolist() == ["1234567.0", "1234567.0", "1234568.0", "1234568.0"]


def test_compare_and_learning_curves_take_sparse_rows():
    """compare and learning_curves took a fold's rows by np.asarray(X)[idx]: a SciPy sparse X
    (which fit accepts) became a 0-d object array, an IndexError (hunt 47). Its folds are
    sparse rows now, scored as the dense array is."""
    import scipy.sparse as sp

    from bayesnb.compare import compare, learning_curves

    rng = np.random.default_rng(0)
    X, y = rng.poisson(1.0, (120, 20)), rng.integers(0, 2, 120)
    scores = ["accuracy", "log_loss", "brier"]
    sparse = compare(sp.csr_matrix(X), y, ["ml", "mean"], features=bnb.Multinomial())
    dense = compare(X, y, ["ml", "mean"], features=bnb.Multinomial())
    pd.testing.assert_frame_equal(sparse[scores], dense[scores], rtol=1e-12)
    curves = [learning_curves(data, y, ["mean"], features=bnb.Multinomial(),
                              train_sizes=(10, 40), repeats=2)
              for data in (sp.csr_matrix(X), X)]
    pd.testing.assert_frame_equal(curves[0], curves[1], rtol=1e-12)
