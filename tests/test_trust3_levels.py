"""Issue 38, "One column, two level types": a CSV cell is text, and pandas parses a column of
codes as numbers in a chunk (or a file) where every cell is a number, as text elsewhere. A
Categorical column's cells are read as the model's level type in every chunk of a chunked fit
and in every command of the CLI."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from test_outofcore import assert_same_fit

import bayesnb as bnb
from bayesnb.cli import main
from bayesnb.outofcore import fit_chunks, read_csv_chunks


def codes_csv(path, seed: int, n: int = 48, text_at: int | None = 40, padded=False):
    """Two code columns (the second zero-padded when ``padded``: "010" is not "10"), a
    number and a label; ``text_at``: the row where one cell of the second is text."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    code = np.where(rng.random(n) < 0.75, 1 + 2 * y, 2 + 3 * rng.integers(0, 2, n))
    lines = ["g,grade,x,y"]
    for i in range(n):
        grade = 10 * (1 + y[i]) + int(rng.integers(0, 2))
        grade = "n/a?" if i == text_at else f"{grade:03d}" if padded else str(grade)
        lines.append(f"{code[i]},{grade},{rng.normal(2.0 * y[i]):.4f},{'ab'[y[i]]}")
    path.write_text("\n".join(lines) + "\n")
    return path


FEATURES = lambda: {"g": bnb.Categorical(), "grade": bnb.Categorical()}  # noqa: E731


def batch(path, method="bayes"):
    frame = pd.read_csv(path)
    return bnb.NaiveBayes(FEATURES(), method=method).fit(frame.drop(columns="y"),
                                                         frame["y"])


@pytest.mark.parametrize("chunksize, text_at, padded", [
    (10, 40, True),  # the text cell in the last chunk, the first chunks all codes
    (10, 3, False),  # in the first chunk: the later chunks parse as numbers
    (16, 20, True),
    (100, 40, True),  # one chunk: nothing to reconcile
])
def test_chunked_fit_of_a_code_column_with_a_text_cell_is_the_batch_fit(
        tmp_path, chunksize, text_at, padded, x64):
    path = codes_csv(tmp_path / "d.csv", chunksize + text_at, text_at=text_at, padded=padded)
    ref = batch(path)
    (grade,) = [b.schema.levels[0] for b in ref.blocks_ if b.schema.columns == ("grade",)]
    assert all(isinstance(v, str) for v in grade)  # one text cell: read_csv reads text
    model = fit_chunks(bnb.NaiveBayes(FEATURES(), method="bayes"),
                       read_csv_chunks(path, "y", chunksize=chunksize), progress=False)
    assert_same_fit(model, ref, rtol=1e-12)
    frame = pd.read_csv(path)
    np.testing.assert_allclose(model.predict_proba(frame.drop(columns="y")),
                               ref.predict_proba(frame.drop(columns="y")), rtol=1e-12)


def test_declared_text_categories_read_a_chunk_of_codes_as_text(tmp_path, x64):
    """Declared levels "1", "3", ... (and classes: one pass over the file): a chunk whose
    cells are all codes is read as text, as the levels are."""
    path = codes_csv(tmp_path / "d.csv", 5, text_at=None)
    frame = pd.read_csv(path, dtype={"g": str, "grade": str})
    categories = [sorted(frame["g"].unique()), sorted(frame["grade"].unique())]
    features = {"g": bnb.Categorical(categories=categories[0]),
                "grade": bnb.Categorical(categories=categories[1])}
    model = fit_chunks(bnb.NaiveBayes(features, method="bayes"),
                       read_csv_chunks(path, "y", chunksize=7),
                       classes=np.array(["a", "b"], dtype=object),
                       progress=False)
    ref = bnb.NaiveBayes({"g": bnb.Categorical(categories=categories[0]),
                          "grade": bnb.Categorical(categories=categories[1])},
                         method="bayes").fit(frame.drop(columns="y"), frame["y"])
    assert_same_fit(model, ref, rtol=1e-12)


def call(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, [line for line in out.err.splitlines() if line.strip()]


def test_cli_predict_reads_a_code_column_as_fit_read_it(capsys, tmp_path):
    """Fit read the code column as text (one text cell); the rows to predict hold codes only,
    which pandas alone parses as integers. The CLI's probabilities are the Python API's on
    the same cells as text."""
    train = codes_csv(tmp_path / "train.csv", 11, padded=True)
    rows = codes_csv(tmp_path / "rows.csv", 12, n=15, text_at=None, padded=True)
    model = tmp_path / "m.bnb"
    code, _, err = call(capsys, "fit", train, "--target", "y", "--method", "bayes",
                        "--family", "g=categorical", "--family", "grade=categorical",
                        "-o", model)
    assert code == 0, err
    code, out, err = call(capsys, "predict", model, rows, "--interval", "0",
                          "--precision", "17")
    assert code == 0, err
    assert not any("unseen" in line or "not one of" in line for line in err), err
    got = pd.read_csv(io.StringIO(out))
    X_new = pd.read_csv(rows, dtype={"grade": str}).drop(columns="y")  # as fit read them
    ref = batch(train).predict_proba(X_new)
    np.testing.assert_allclose(got[["p_a", "p_b"]].to_numpy(), ref, rtol=1e-6)
    assert got["p_a"].round(6).nunique() > 2  # the rows are told apart, not all "unseen"


def test_cli_predict_reads_text_codes_as_the_numbers_fit_learned(capsys, tmp_path):
    """Fit read the code columns as integers; a text cell in the rows to predict makes pandas
    read its column as text: the other cells are still the integers the model knows."""
    train = codes_csv(tmp_path / "train.csv", 21, text_at=None)
    rows = codes_csv(tmp_path / "rows.csv", 22, n=15, text_at=6)
    model = tmp_path / "m.bnb"
    code, _, err = call(capsys, "fit", train, "--target", "y", "--method", "bayes",
                        "--family", "g=categorical", "--family", "grade=categorical",
                        "-o", model)
    assert code == 0, err
    code, out, err = call(capsys, "predict", model, rows, "--interval", "0",
                          "--precision", "17")
    assert code == 0, err
    unseen = [line for line in err if "never seen" in line]
    assert len(unseen) == 1 and "1 value(s)" in unseen[0] and "'n/a?'" in unseen[0], err
    got = pd.read_csv(io.StringIO(out))
    X_new = pd.read_csv(rows).drop(columns="y")
    assert not pd.api.types.is_numeric_dtype(X_new["grade"])  # pandas alone: text
    clf = batch(train)
    known = np.arange(len(X_new)) != 6
    X_int = X_new[known].astype({"grade": np.int64})
    np.testing.assert_allclose(got[["p_a", "p_b"]].to_numpy()[known],
                               clf.predict_proba(X_int), rtol=1e-6)


def test_one_categorical_over_integer_codes_beyond_2_53_and_floats(x64):
    """An int64 column of codes 2**53 and 2**53 + 1 beside a float64 column in one
    Categorical: the block was read as float64, the two codes one level, p = [0.5, 0.5].
    By hand (method='mean', alpha=1, class_alpha=1): p(q | x) = 0.75^2 / (0.75^2 + 0.25^2)."""
    big = 2 ** 53
    X = pd.DataFrame({"code": np.array([big, big + 1, big, big + 1], dtype=np.int64),
                      "f": [0.5, 1.5, 0.5, 1.5]})
    clf = bnb.NaiveBayes(bnb.Categorical(), method="mean").fit(X, ["p", "q", "p", "q"])
    assert list(clf.conditional_tables()["code"].columns) == [big, big + 1]
    np.testing.assert_allclose(clf.predict_proba(X.iloc[[1]]), [[0.1, 0.9]], rtol=1e-12)
    # and a model fitted on an Int64 column reads plain int64 codes beside floats alike
    exact = bnb.NaiveBayes(bnb.Categorical(), method="mean").fit(
        X.astype({"code": "Int64"}), ["p", "q", "p", "q"])
    np.testing.assert_allclose(exact.predict_proba(X.iloc[[1]]), [[0.1, 0.9]], rtol=1e-12)
