"""The command line in-process (``bayesnb.cli.main``): every mistake is one line on standard
error with exit status 2 and no traceback, warnings are one line each, and the options of
issue 15 (version, dataset descriptions, MCMC fits, progress bars, precision, unused columns)
do what they say."""

from __future__ import annotations

import io
import re
import zipfile

import numpy as np
import pandas as pd
import pytest

import bayesnb as bnb
from bayesnb import datasets
from bayesnb.cli import main


def call(capsys, *args):
    """``(exit status, stdout, stderr lines)`` of one in-process run."""
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, [line for line in out.err.splitlines() if line.strip()]


def assert_one_line_error(code, err, *fragments):
    assert code == 2, err
    assert len(err) == 1, err
    assert re.match(r"bayesnb( \w+)?: error: ", err[0]), err
    for fragment in fragments:
        assert fragment in err[0], err
    assert "Traceback" not in err[0]


@pytest.fixture(scope="module")
def titanic_csv(tmp_path_factory):
    X, y = datasets.load_titanic()
    path = tmp_path_factory.mktemp("data") / "titanic.csv"
    X.assign(Survived=y).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def titanic_model(tmp_path_factory, titanic_csv):
    path = tmp_path_factory.mktemp("models") / "titanic_ml.bnb"
    assert main(["fit", str(titanic_csv), "--target", "Survived", "--method", "ml",
                 "-o", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def tables_model(tmp_path_factory):
    """A model built from stated tables: it has no posterior."""
    path = tmp_path_factory.mktemp("models") / "tables.bnb"
    clf = bnb.from_tables({"a": 0.5, "b": 0.5},
                          categorical={"c": {"a": {"x": 0.5, "y": 0.5},
                                             "b": {"x": 0.2, "y": 0.8}}})
    bnb.save(clf, path)
    return path


# ---------------------------------------------------------------------- arguments
@pytest.mark.parametrize("args, fragment", [
    (["compare", "titanic", "--methods", ","], "at least one method"),
    (["compare", "titanic", "--methods", ""], "at least one method"),
    (["compare", "titanic", "--methods", "ml,magic"], "method must be one of"),
    (["compare", "titanic", "--methods", "ml,map,ml"], "'ml' is listed twice"),
    (["compare", "titanic", "--cv", "1"], "--cv: must be an integer of at least 2"),
    (["compare", "titanic", "--cv", "three"], "--cv: must be an integer of at least 2"),
    (["compare", "titanic", "--seed", "-1"], "--seed: must be a non-negative integer"),
    (["compare", "titanic", "--class-alpha", "-1"], "--class-alpha: must be a finite number"),
    (["compare", "titanic", "--class-alpha", "nan"], "--class-alpha: must be a finite number"),
    (["compare", "titanic", "--num-samples", "0"], "--num-samples: must be a positive"),
    (["predict", "{model}", "titanic", "--interval", "1.5"], "strictly between 0 and 1"),
    (["predict", "{model}", "titanic", "--interval", "-1"], "strictly between 0 and 1"),
    (["predict", "{model}", "titanic", "--interval", "1"], "strictly between 0 and 1"),
    (["predict", "{model}", "titanic", "--interval", "nan"], "strictly between 0 and 1"),
    (["predict", "{model}", "titanic", "--draws", "0"], "--draws: must be a positive integer"),
    (["predict", "{model}", "titanic", "--draws", "-5"], "--draws: must be a positive integer"),
    (["predict", "{model}", "titanic", "--draws", "2.5"], "--draws: must be a positive integer"),
    (["predict", "{model}", "titanic", "--precision", "0"], "--precision: must be a positive"),
    (["predict", "{model}", "titanic", "--precision", "40"], "1 to 17 significant digits"),
    (["fit", "titanic", "-o", "{tmp}/m.bnb", "--family", "Class"], "COLUMN[,COLUMN...]=FAMILY"),
    (["fit", "titanic", "-o", "{tmp}/m.bnb", "--family", "Class=gamma"], "FAMILY one of"),
    (["fit", "titanic", "-o", "{tmp}/m.bnb", "--family", "Class,=poisson"], "=FAMILY"),
    (["fit", "titanic", "-o", "{tmp}/m.bnb", "--method", "magic"], "invalid choice"),
    (["fit", "titanic", "-o", "{tmp}/m.bnb", "--num-chains", "0"], "--num-chains: must be"),
    (["fit", "titanic", "-o", "{tmp}/m.bnb", "--num-warmup", "-3"], "--num-warmup: must be"),
    (["fit", "titanic", "-o", "{tmp}/m.bnb", "--num-chains", "2"], "'mcmc' method only"),
    (["fit", "titanic", "-o", "{tmp}/m.bnb", "--seed", "3"], "'mcmc' method only"),
    (["fit", "titanic", "-o", "{tmp}/m.bnb", "--family", "Cabin=categorical"],
     "column 'Cabin'"),
    (["fit", "titanic", "-o", "{tmp}/m.bnb", "--family", "Class=categorical",
      "--family", "Class=categorical"], "two families"),
    (["fit", "titanic"], "-o/--output"),
    ([], "COMMAND"),
    (["frobnicate"], "invalid choice"),
])
def test_every_bad_argument_is_one_line_with_status_2(capsys, tmp_path, titanic_model, args,
                                                      fragment):
    args = [a.format(model=titanic_model, tmp=tmp_path) for a in args]
    code, out, err = call(capsys, *args)
    assert_one_line_error(code, err, fragment)
    assert out == ""


def test_predict_on_a_tables_model(capsys, tmp_path, tables_model):
    """``from_tables`` models have no posterior: the default leaves the intervals out (it
    used to fail with 'NoneType' object has no attribute 'alpha'); asking for them is a
    one-line error."""
    data = tmp_path / "new.csv"
    pd.DataFrame({"c": ["x", "y"]}).to_csv(data, index=False)
    code, out, err = call(capsys, "predict", tables_model, data)
    assert code == 0, err
    pred = pd.read_csv(io.StringIO(out))
    assert list(pred.columns) == ["prediction", "p_a", "p_b"]
    # by hand: p(a | x) = 0.5 * 0.5 / (0.5 * 0.5 + 0.5 * 0.2) = 5/7; p(a | y) = 5/13
    np.testing.assert_allclose(pred["p_a"], [5 / 7, 5 / 13], atol=5e-7)  # 6 digits
    code, _, err = call(capsys, "predict", tables_model, data, "--interval", "0.8")
    assert_one_line_error(code, err, "stated tables", "--interval 0")
    code, out, err = call(capsys, "predict", tables_model, data, "--interval", "0")
    assert code == 0 and err == [] and "lower_" not in out


@pytest.mark.parametrize("command", ["fit", "predict", "compare"])
def test_header_only_csv(capsys, tmp_path, titanic_model, command):
    empty = tmp_path / "empty.csv"
    empty.write_text("Class,Sex,Age,Survived\n")
    args = {"fit": ["fit", empty, "--target", "Survived", "-o", tmp_path / "m.bnb"],
            "predict": ["predict", titanic_model, empty],
            "compare": ["compare", empty, "--target", "Survived"]}[command]
    code, _, err = call(capsys, *args)
    assert_one_line_error(code, err, "no data rows", "Class, Sex, Age, Survived")


def test_a_file_with_only_the_target_column(capsys, tmp_path):
    path = tmp_path / "y.csv"
    pd.DataFrame({"y": [0, 1, 0]}).to_csv(path, index=False)
    code, _, err = call(capsys, "fit", path, "--target", "y", "-o", tmp_path / "m.bnb")
    assert_one_line_error(code, err, "only the target column")


def _rewrite_member(src, dst, member, array):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        assert member in zin.namelist()
        for name in zin.namelist():
            data = zin.read(name)
            if name == member:
                buf = io.BytesIO()
                np.save(buf, array)
                data = buf.getvalue()
            zout.writestr(name, data)


@pytest.mark.parametrize("member, array", [
    ("arrays/class_count.npy", np.array(["a", "b"])),
    ("arrays/block0/stats/counts.npy", np.full((2, 8), "x")),
    ("arrays/block0/stats/counts.npy", np.ones((2, 8), dtype=complex)),
    ("arrays/block0/prior/alpha.npy", np.ones(8, dtype=complex) * 1j),
])
def test_string_or_complex_arrays_in_a_model_file(capsys, tmp_path, titanic_model, member,
                                                  array):
    """Whatever the loader makes of a tampered array, the command line prints one line per
    message and no traceback; predicting with it is an error."""
    bad = tmp_path / "bad.bnb"
    _rewrite_member(titanic_model, bad, member, array)
    for args in (["show", bad], ["predict", bad, "titanic"]):
        code, _, err = call(capsys, *args)
        assert all(re.match(r"bayesnb \w+: (error|warning): ", line) for line in err), err
        assert sum(": error: " in line for line in err) <= 1, err
        assert code in (0, 2), err
    assert code == 2, err  # predict


def test_unexpected_failures_are_one_line_with_status_1(capsys, monkeypatch):
    import bayesnb.cli as cli

    def broken(args):
        raise RuntimeError("something\nbroke")

    monkeypatch.setattr(cli, "_cmd_datasets", broken)
    code, _, err = call(capsys, "datasets")
    assert code == 1
    assert err == ["bayesnb datasets: internal error: RuntimeError: something broke (set "
                   "BAYESNB_TRACEBACK=1 for the traceback, and please report it)"]


# ---------------------------------------------------------------------- warnings as lines
def test_unseen_category_is_a_one_line_warning(capsys, tmp_path, titanic_csv):
    model = tmp_path / "mean.bnb"
    assert main(["fit", str(titanic_csv), "--target", "Survived", "-o", str(model)]) == 0
    capsys.readouterr()
    new = tmp_path / "new.csv"
    pd.DataFrame({"Class": ["Crw", "1st"], "Sex": ["Male", "Female"],
                  "Age": ["Adult", "Adult"]}).to_csv(new, index=False)
    code, out, err = call(capsys, "predict", model, new, "--interval", "0")
    assert code == 0
    assert len(err) == 1 and err[0].startswith("bayesnb predict: warning: column 'Class'")
    assert "'Crw'" in err[0]
    assert len(pd.read_csv(io.StringIO(out))) == 2


def test_text_cell_in_a_numeric_column_is_a_one_line_warning(capsys, tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "d.csv"
    frame = pd.DataFrame({"x": rng.normal(size=30).round(3).astype(object),
                          "y": rng.choice(["a", "b"], 30)})
    frame.loc[7, "x"] = "abc"
    frame.to_csv(path, index=False)
    code, _, err = call(capsys, "fit", path, "--target", "y", "-o", tmp_path / "m.bnb")
    assert code == 0
    assert len(err) == 1 and err[0].startswith("bayesnb fit: warning: column 'x'")
    assert "'abc'" in err[0]


def test_unused_columns_at_prediction_are_reported(capsys, titanic_csv, titanic_model):
    """The training CSV still holds the target: that column is named, not silently
    ignored."""
    code, out, err = call(capsys, "predict", titanic_model, titanic_csv, "--interval", "0")
    assert code == 0
    assert len(err) == 1 and err[0].startswith("bayesnb predict: warning: 1 column(s)")
    assert "'Survived'" in err[0] and "'Class', 'Sex', 'Age'" in err[0]
    assert len(pd.read_csv(io.StringIO(out))) == 2201
    code, _, err = call(capsys, "predict", titanic_model, "titanic", "--interval", "0")
    assert code == 0 and err == []


def test_explain_reports_unused_columns_as_predict_does(capsys, tmp_path, titanic_csv,
                                                       titanic_model):
    """explain refused a file that predict takes (a column the model does not read): now the
    same warning, and the rows explained as without that column."""
    rows = pd.read_csv(titanic_csv).head(2)
    with_target, without = tmp_path / "with.csv", tmp_path / "without.csv"
    rows.to_csv(with_target, index=False)
    rows.drop(columns="Survived").to_csv(without, index=False)
    code, out, err = call(capsys, "explain", titanic_model, with_target)
    assert code == 0 and len(err) == 1, err
    assert err[0].startswith("bayesnb explain: warning: 1 column(s)") and "'Survived'" in err[0]
    assert (code, out) == call(capsys, "explain", titanic_model, without)[:2]


def test_a_file_of_no_model_column_names_both_headers(capsys, tmp_path, titanic_model):
    """Every column unknown (a misspelt header): said as such, not as an empty table."""
    path = tmp_path / "misspelt.csv"
    path.write_text("clazz,sex,age\n1st,Female,Adult\n")
    code, _, err = call(capsys, "predict", titanic_model, str(path))
    assert code == 2 and len(err) == 1
    assert re.search(r"none of the columns of .*misspelt.csv is one the model reads: it has "
                     r"'clazz', 'sex', 'age', the model reads 'Class', 'Sex', 'Age'", err[0])
    code, _, err = call(capsys, "explain", titanic_model, str(path))  # as predict says it
    assert code == 2 and len(err) == 1
    assert re.search(r"none of the columns of .*misspelt.csv is one the model reads", err[0])


# ---------------------------------------------------------------------- new options
def test_version(capsys):
    code, out, err = call(capsys, "--version")
    assert code == 0 and out.strip() == f"bayesnb {bnb.__version__}" and err == []


def test_datasets_describes_every_dataset(capsys):
    code, out, err = call(capsys, "datasets")
    assert code == 0 and err == []
    lines = out.strip().splitlines()
    assert [line.split()[0] for line in lines] == datasets.names()
    assert len(lines) == 8
    for line in lines:
        name = line.split()[0]
        X, y = datasets.load(name)
        rows, cols = re.search(r"(\d+) rows, (\d+) columns?", line).groups()
        assert (int(rows), int(cols)) == X.shape, line
        assert len(line.split(None, 1)[1]) > 40  # a description, not just the shape


def test_predict_writes_a_stated_precision(capsys, tmp_path, titanic_model):
    """e1071's posterior for a 2nd-class passenger with Sex and Age missing (seed 004):
    0.5859649 / 0.4140351, written with 6 significant digits by default."""
    new = tmp_path / "new.csv"
    pd.DataFrame({"Class": ["2nd"], "Sex": [None], "Age": [None]}).to_csv(new, index=False)
    code, out, _ = call(capsys, "predict", titanic_model, new)
    assert code == 0
    header, row = out.strip().splitlines()
    fields = dict(zip(header.split(","), row.split(","), strict=True))
    assert fields["p_No"] == "0.585965" and fields["p_Yes"] == "0.414035"
    for name, text in fields.items():
        if name != "prediction":
            digits = re.sub(r"^0\.0*|[.\-]|e.*$", "", text)
            assert len(digits) <= 6, (name, text)
    code, out, _ = call(capsys, "predict", titanic_model, new, "--precision", "3",
                        "--interval", "0")
    assert out.strip().splitlines()[1] == "No,0.586,0.414"


def test_fit_mcmc_with_its_settings_and_no_progress(capsys, tmp_path, monkeypatch):
    """``fit --method mcmc`` passes the NUTS settings through and saves the draws;
    ``--no-progress`` turns the sampler's bar off, and it is on without the option. (Whether
    tqdm then draws it depends on the terminal, so the setting the sampler receives is what is
    checked.)"""
    from bayesnb import _nuts

    bars = []

    class Recorded(BaseException):  # not an Exception: main's error handling lets it through
        pass

    sample = _nuts.sample

    def recording_sample(*args, progress_bar=True, **kwargs):
        bars.append(progress_bar)
        if recording_sample.stop:  # the setting is what is asked of this call; no second run
            raise Recorded
        return sample(*args, progress_bar=progress_bar, **kwargs)

    recording_sample.stop = False
    monkeypatch.setattr(_nuts, "sample", recording_sample)
    model = tmp_path / "mcmc.bnb"
    code, out, err = call(capsys, "fit", "temperature", "--method", "mcmc", "--num-warmup",
                          "20", "--num-samples", "15", "--num-chains", "2", "--seed", "7",
                          "--no-progress", "-o", model)
    assert code == 0, err
    assert all(line.startswith("bayesnb fit: warning: MCMC") for line in err), err
    # its advice in the command's options, not in Python (hunt 48)
    assert any("e.g. --num-chains 4 --num-warmup 1000 --num-samples 1000" in line
               for line in err), err
    assert "NaiveBayes(" not in "".join(err)
    assert "%|" not in "".join(err)
    assert bars == [False]
    loaded = bnb.load(model)
    assert (loaded.method, loaded.num_warmup, loaded.num_samples, loaded.num_chains,
            loaded.seed) == ("mcmc", 20, 15, 2, 7)
    assert all(v.shape[:2] == (2, 15) for v in loaded.draws_.values())
    recording_sample.stop = True
    with pytest.raises(Recorded):
        main(["fit", "temperature", "--method", "mcmc", "-o", str(tmp_path / "bar.bnb")])
    assert bars == [False, True]  # without --no-progress, the sampler is asked for its bar


def test_compare_summarises_unseen_categories_in_one_line(capsys, tmp_path):
    """Cross-validation on a small table: a fold's test rows can hold a level its training
    rows lack. One summary line, not one warning per fold and method."""
    path = tmp_path / "small.csv"
    pd.DataFrame({"colour": ["red", "blue", "red", "blue", "red", "blue", "green", "blue"],
                  "y": ["a", "a", "a", "a", "b", "b", "b", "b"]}).to_csv(path, index=False)
    code, out, err = call(capsys, "compare", path, "--target", "y", "--cv", "2",
                          "--methods", "mean,bayes", "--no-progress")
    assert code == 0, err
    assert len(err) == 1, err
    assert err[0].startswith("bayesnb compare: warning: compare: in ")
    assert "column 'colour'" in err[0]
    assert re.search(r"in \d+ of 4 fits \(models x folds\)", err[0]), err  # 2 methods x 2 folds
    assert "mean" in out and "bayes" in out


def test_compare_plots_pass_the_learning_curves_own_count_of_refits(capsys, tmp_path):
    """The learning curves warn once with their count of refits; the summary of the folds'
    warnings counted that as one fold and named "learning_curves" as a column."""
    path = tmp_path / "small.csv"
    rng = np.random.default_rng(0)  # eight levels of five rows: small subsets lack some
    pd.DataFrame({"colour": np.repeat(list("abcdefgh"), 5),
                  "y": rng.choice(["p", "q"], 40)}).to_csv(path, index=False)
    code, _, err = call(capsys, "compare", path, "--target", "y", "--cv", "2",
                        "--methods", "mean", "--plots", str(tmp_path / "plots"),
                        "--no-progress")
    assert code == 0, err
    curves = [line for line in err if "learning_curves: in " in line]
    assert len(curves) == 1 and re.search(r"in \d+ of \d+ refits", curves[0]), err
    assert not any("(learning_curves)" in line for line in err), err


def test_options_naming_the_target_say_it_is_the_target(tmp_path, capsys):
    """--id, --drop or --family naming the --target column said the column "is not in" the
    file, listing its columns without it (hunt 52)."""
    pd.DataFrame({"id": [1, 2, 3, 4], "x": [0.1, 0.5, 0.9, 1.2],
                  "label": ["a", "b", "a", "b"]}).to_csv(tmp_path / "t.csv", index=False)
    for option in ("--id", "--drop"):
        code, _, err = call(capsys, "fit", tmp_path / "t.csv", "--target", "label", option,
                            "label", "-o", tmp_path / "m.bnb")
        assert_one_line_error(code, err, f"{option} label: column 'label' is the target")
    code, _, err = call(capsys, "fit", tmp_path / "t.csv", "--target", "label", "--family",
                        "label=categorical", "-o", tmp_path / "m.bnb")
    assert_one_line_error(code, err, "--family names column 'label', the target")
    # a built-in dataset's target is implied
    code, _, err = call(capsys, "fit", "playtennis", "--drop", "PlayTennis", "-o",
                        tmp_path / "m.bnb")
    assert_one_line_error(code, err, "--drop PlayTennis: column 'PlayTennis' is the target")
