"""The ``bayesnb`` command line.

    bayesnb compare titanic              # ML vs MAP vs mean vs exact Bayes, 5-fold CV
    bayesnb compare data.csv --target y  # the same on your own CSV or Parquet file
    bayesnb fit titanic -o titanic.bnb   # fit and save a model (code-free file)
    bayesnb fit titanic --method mcmc --num-chains 4 -o titanic.bnb   # NUTS draws, saved
    bayesnb predict titanic.bnb new.csv  # predictions and class probabilities as CSV
    bayesnb show titanic.bnb             # priors, conditional tables and evidence
    bayesnb explain titanic.bnb rows.csv # the factors of each row's prediction
    bayesnb datasets                     # the built-in datasets, one line each
    bayesnb --version

Every mistake in a file, a column or an option is one line on standard error, ``bayesnb
COMMAND: error: ...``, with exit status 2 (never a traceback); arguments are checked when they
are parsed. Warnings (an unseen category, a column read as categorical because of a few text
cells, target labels or a Categorical column's codes kept as text because as numbers two
would be one class or level ("01" and "1"),
unused columns at prediction, MCMC convergence) are one line each, ``bayesnb COMMAND:
warning: ...``. An unexpected failure (a bug) is one line too, with exit status 1; set
``BAYESNB_TRACEBACK=1`` to see its traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from . import __version__, datasets
from ._files import atomic_file, same_file

#: what ``--methods`` and ``fit --method`` accept (``bayesnb.METHODS``, without importing JAX)
METHODS = ("ml", "map", "mean", "bayes", "mcmc")
#: the default of ``predict --interval`` for models with a posterior
DEFAULT_INTERVAL = 0.9


# ---------------------------------------------------------------------- argument types
def _integer(text: str, low: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < low:
        need = {0: "a non-negative integer", 1: "a positive integer"}.get(
            low, f"an integer of at least {low}")
        raise argparse.ArgumentTypeError(f"must be {need}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    return _integer(text, 1)


def non_negative_int(text: str) -> int:
    return _integer(text, 0)


def folds(text: str) -> int:
    return _integer(text, 2)


def interval(text: str) -> float:
    """A central credible mass in (0, 1); 0 leaves the intervals out."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value == 0 or 0 < value < 1):
        raise argparse.ArgumentTypeError(
            f"must be a probability strictly between 0 and 1 (e.g. 0.9; 0 leaves the "
            f"intervals out), got {text!r}")
    return value


def concentration(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


def precision(text: str) -> int:
    value = _integer(text, 1)
    if value > 17:  # float64 round-trips with 17 significant digits; more would be noise
        raise argparse.ArgumentTypeError(f"must be 1 to 17 significant digits, got {text!r}")
    return value


def method_list(text: str) -> list[str]:
    """``"ml,map"`` -> ``["ml", "map"]``: at least one, each known, none twice."""
    methods = [m.strip() for m in text.split(",") if m.strip()]
    if not methods:
        raise argparse.ArgumentTypeError(f"give at least one method of {', '.join(METHODS)}, "
                                         f"comma-separated; got {text!r}")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise argparse.ArgumentTypeError(f"method must be one of {METHODS}, got {unknown[0]!r}")
    twice = [m for i, m in enumerate(methods) if m in methods[:i]]
    if twice:
        raise argparse.ArgumentTypeError(f"method {twice[0]!r} is listed twice")
    return methods


def family_spec(text: str) -> tuple[list[str], str, dict]:
    """``"w1,w2=multinomial:alpha=0.5"`` -> ``(["w1", "w2"], "multinomial", {"alpha": 0.5})``;
    a bare family (``"multinomial"``, ``"gaussian:shape=2,rate=0.1"``: every column) has no
    columns. Hyperparameters are checked against the family's ``_hyper`` declaration."""
    from .families import REGISTRY

    names = "|".join(map(re.escape, REGISTRY))
    # the shortest column list that leaves FAMILY[:HYPER] (a column name may hold "=")
    match = re.fullmatch(rf"(?:(?P<cols>.+?)=)?(?P<family>{names})(?::(?P<hyper>.*))?", text)
    cols = match and match["cols"]
    columns = cols.split(",") if cols else []
    if not match or any(not c for c in columns):
        raise argparse.ArgumentTypeError(
            f"expected FAMILY[:KEY=VALUE,...] or COLUMN[,COLUMN...]=FAMILY[:KEY=VALUE,...] "
            f"with FAMILY one of {', '.join(REGISTRY)}, got {text!r}")
    family = REGISTRY[match["family"]]
    return columns, match["family"], _hyperparameters(match["hyper"], family, text)


def _hyperparameters(text: str | None, family, spec: str) -> dict:
    """``"shape=2,rate=0.1"`` as ``{"shape": 2.0, "rate": 0.1}``, each key one the family
    declares (``family._hyper``); numbers, true/false, or text (a KDE bandwidth rule or kernel)."""
    if text is None:
        return {}
    accepted = ", ".join(family._hyper) or "none"
    out = {}
    for item in text.split(","):
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not key or not value:
            raise argparse.ArgumentTypeError(
                f"{spec!r}: expected KEY=VALUE after ':', got {item!r} (hyperparameters "
                f"of {family.name}: {accepted})")
        if key not in family._hyper:
            raise argparse.ArgumentTypeError(
                f"{spec!r}: {family.name} has no hyperparameter {key!r}; its "
                f"hyperparameters are {accepted}")
        if key in out:
            raise argparse.ArgumentTypeError(f"{spec!r}: hyperparameter {key!r} given twice")
        out[key] = _scalar(value)
    return out


def _scalar(text: str):
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return float(text)
    except ValueError:
        return text


def finite_number(text: str) -> float:
    """A finite number (``--reject-cost``)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number (e.g. 0.3), got {text!r}")
    return value


def probability(text: str) -> float:
    """A probability strictly between 0 and 1 (``--feature-prior``)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(
            f"must be a probability strictly between 0 and 1 (e.g. 0.5), got {text!r}")
    return value


def separator(text: str) -> str:
    """A CSV field separator: one character; ``\\t`` or ``tab`` is a tab (``--sep``)."""
    value = {"\\t": "\t", "tab": "\t"}.get(text, text)
    if len(value) != 1 or value in "\"\r\n":
        raise argparse.ArgumentTypeError(
            f"must be one character, e.g. ';' or '\\t' (a tab), got {text!r}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (argparse prints the usage first)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)\n")


# ---------------------------------------------------------------------- reading data
class Csv(NamedTuple):
    """How a CSV file is read (``--sep``, ``--decimal``, ``--keep-na-text``)."""

    sep: str = ","
    #: only an empty cell is a missing value (pandas reads NA, None, null, N/A, nan, ... as
    #: missing too)
    keep_na_text: bool = False
    #: the decimal mark of numbers (``,`` in the CSV exports of many locales)
    decimal: str = "."

    def kwargs(self) -> dict:
        return {"sep": self.sep, "decimal": self.decimal,
                **({"keep_default_na": False, "na_values": [""]} if self.keep_na_text else {})}


#: a comma-separated file read by pandas' rules
COMMA = Csv()


def _csv(args) -> Csv:
    if args.decimal == args.sep == ",":
        raise ValueError("--decimal ',' is also the field separator (--sep); give another "
                         "--sep, such as ';'.")
    return Csv(args.sep, args.keep_na_text, args.decimal)


def _read_table(source: str, target: str | None, csv: Csv = COMMA):
    if source in datasets.names():
        X, y = datasets.load(source)
        if target is not None and target != y.name:
            raise ValueError(f"dataset {source!r} has target {y.name!r}, not {target!r}.")
        return X, y
    frame = _read_features(source, csv=csv)
    if target is None:
        raise ValueError("--target is required with a data file.")
    if target not in frame.columns:
        raise ValueError(f"column {target!r} is not in {source!r} "
                         f"(columns: {', '.join(map(str, frame.columns))})"
                         f"{_separator_hint(frame.columns, csv.sep)}.")
    if frame.shape[1] == 1:
        raise ValueError(f"{source!r} has only the target column {target!r}: no feature "
                         f"to fit on.")
    return frame.drop(columns=target), _as_written(source, target, frame[target], csv)


def _separator_hint(columns, sep: str) -> str:
    """``"; ... give --sep ';'"`` when a file read with ``sep`` has one column whose name
    holds another usual separator (a ``;`` or tab-separated file read with ``,``), else ""."""
    if len(columns) != 1:
        return ""
    name = str(columns[0])
    found = [c for c in (";", "\t", ",", "|") if c != sep and c in name]
    if not found:
        return ""
    shown = "\\t" if found[0] == "\t" else found[0]
    return (f"; the file seems to use another separator than {sep!r}: its one column name "
            f"{name!r} holds '{shown}', so give --sep '{shown}'")


def _as_written(source: str, column, values: pd.Series, csv: Csv,
                kind: tuple = ("labels", "class", "classes")) -> pd.Series:
    """A column of labels (the target) or of codes (a Categorical column) as read, unless
    reading it as numbers (or booleans) merges values that the file writes differently
    ("01" and "1" both 1): then the file's text, so each stays its own class or level, with
    a warning naming an example. Values that parse without merging are kept as parsed
    (integer classes stay integers, an empty cell among them too)."""
    if Path(source).suffix in (".parquet", ".pq") or not (
            pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)):
        return values  # Parquet keeps its types; text was not parsed
    text = pd.read_csv(source, usecols=[column], dtype=str, **csv.kwargs())[column]
    text.index = values.index
    whole = values.dropna()
    if values.dtype.kind == "f" and len(whole) < len(values) and np.all(
            whole == np.floor(whole)) and not text.str.contains(r"[.eE]", na=False).any():
        values = values.astype("Int64")  # integers with an empty cell, which read as floats
    if text.nunique() == values.nunique():
        return values
    pairs = pd.DataFrame({"text": text, "value": values}).dropna().drop_duplicates()
    merged = pairs[pairs["value"].duplicated(keep=False)]
    value = merged["value"].iloc[0]
    example = " and ".join(map(repr, merged.loc[merged["value"] == value, "text"][:3]))
    many, one, all_ = kind
    warnings.warn(f"column {column!r} of {source}: {many} {example} read as numbers would be "
                  f"one {one} ({value}); the {many} are kept as the file's text, so they are "
                  f"{text.nunique()} {all_}, not {values.nunique()}.", UserWarning,
                  stacklevel=2)
    return text


def _codes_as_written(source: str, X: pd.DataFrame, features, csv: Csv) -> pd.DataFrame:
    """``X`` with each column that ``--family`` gives a family of levels (Categorical) read
    as :func:`_as_written` reads the target: codes such as zip codes "01234" and "1234"
    stay two levels."""
    if features is None or source in datasets.names():
        return X
    families = features if isinstance(features, dict) else dict.fromkeys(X.columns, features)
    X = X.copy()
    for column, family in families.items():
        if family.learns_levels():
            X[column] = _as_written(source, column, X[column], csv, ("codes", "level", "levels"))
    return X


def _read_rows(source: str, model, csv: Csv = COMMA) -> pd.DataFrame:
    """The rows to predict or explain: a built-in dataset's features, or a file's columns,
    each Categorical column's cells read as the type of ``model``'s levels (a column of
    codes that ``fit`` read as text is read as text, whatever its cells look like)."""
    if source in datasets.names():
        return datasets.load(source)[0]
    from .outofcore import cells_as_levels, model_levels

    levels = model_levels(model.blocks_)
    frame = _headers_as_columns(_read_features(source, levels, csv=csv), model)
    hint = _separator_hint(frame.columns, csv.sep)
    named = model.fitted_.named
    if hint and not (named and frame.columns[0] in set(model.fitted_.columns)):
        raise ValueError(f"{source!r} has one column, {frame.columns[0]!r}, which the model "
                         f"does not read{hint}.")
    return cells_as_levels(frame, levels)


def _headers_as_columns(frame: pd.DataFrame, model) -> pd.DataFrame:
    """``frame`` with each header that writes a column label of ``model`` that is not text
    (a model fitted on ``pd.DataFrame(array)`` reads columns 0, 1, ...; a CSV header is
    text) named by that label."""
    if not model.fitted_.named:
        return frame
    known = set(model.fitted_.columns)
    labels = {str(c): c for c in known if not isinstance(c, str)}
    renamed = {h: labels[h] for h in frame.columns if h in labels and h not in known}
    return frame.rename(columns=renamed) if renamed else frame


def _read_features(source, levels=None, csv: Csv = COMMA) -> pd.DataFrame:
    """A CSV or Parquet file as a DataFrame; bad paths, unreadable files and files without
    data rows are one-line errors. ``levels`` (column -> a model's levels): a CSV column
    whose levels are text is read as text (:func:`bayesnb.outofcore.text_dtypes`); ``csv``:
    how a CSV is read (:class:`Csv`). A text column some of whose cells pandas reads as
    missing (NA, None, ...) gets a warning that says so (:func:`_warn_missing_text`)."""
    path = Path(source)
    if not path.exists():
        raise ValueError(f"{source!r} is neither a file nor a built-in dataset "
                         f"({', '.join(datasets.names())}).")
    try:
        if path.suffix in (".parquet", ".pq"):
            frame = pd.read_parquet(path)
        else:
            from .outofcore import text_dtypes

            frame = pd.read_csv(path, **text_dtypes(csv.kwargs(), levels or {}))
    except Exception as err:  # noqa: BLE001 - any reader failure is a bad file for the user
        raise ValueError(f"could not read {source!r}: {err}") from None
    if len(frame) == 0:
        raise ValueError(f"{source!r} has no data rows (columns: "
                         f"{', '.join(map(str, frame.columns)) or 'none'}).")
    if path.suffix not in (".parquet", ".pq"):
        _warn_decimal_mark(source, frame, csv, levels or {})
        if not csv.keep_na_text:
            _warn_missing_text(source, frame, csv)
    return frame


#: per decimal mark, a cell that reads as a number written with it ("23,61", "-0.5", "7"),
#: and one that could be a whole number with thousands separators ("12,500", "1.250.000")
_NUMBER_WITH = {",": r"^\s*[+-]?\d+(,\d+)?\s*$", ".": r"^\s*[+-]?\d+(\.\d+)?\s*$"}
_THOUSANDS = {",": r"^\s*[+-]?\d{1,3}(,\d{3})+\s*$", ".": r"^\s*[+-]?\d{1,3}(\.\d{3})+\s*$"}


def _warn_decimal_mark(source, frame: pd.DataFrame, csv: Csv, levels) -> None:
    """Warn about each text column whose cells are all numbers written with the other
    decimal mark than ``--decimal`` (some with one, not all of them possibly thousands
    separators): read as text, such a column would be a Categorical of one level per value,
    fitted without complaint and useless on new rows."""
    other = "," if csv.decimal == "." else "."
    if other == csv.sep:
        return
    for column in frame.columns:
        values = frame[column]
        if pd.api.types.is_numeric_dtype(values) or column in levels:
            continue
        cells = values.dropna().astype(str)
        marked = cells[cells.str.contains(other, regex=False)]
        if len(marked) and cells.str.match(_NUMBER_WITH[other]).all() \
                and not marked.str.match(_THOUSANDS[other]).all():
            advice = "give --decimal ','" if other == "," else "leave out --decimal ','"
            warnings.warn(f"column {column!r} of {source}: its cells (such as "
                          f"{marked.iloc[0]!r}) look like numbers with a decimal "
                          f"{'comma' if other == ',' else 'point'}, so they are read as text "
                          f"(a Categorical column, one level per value); {advice} to read "
                          f"them as numbers.", UserWarning, stacklevel=2)


def _warn_missing_text(source, frame: pd.DataFrame, csv: Csv) -> None:
    """Warn about each text column (the target too) with cells that pandas reads as missing
    although the file writes something there ("NA", "None", "null", ...): a level or a label
    of that name would silently be a missing value."""
    columns = [c for c in frame.columns
               if not pd.api.types.is_numeric_dtype(frame[c]) and frame[c].isna().any()]
    if not columns:
        return
    text = pd.read_csv(source, usecols=columns, dtype=str, keep_default_na=False, sep=csv.sep)
    for column in columns:
        written = text[column].to_numpy()[frame[column].isna().to_numpy()]
        written = written[written != ""]
        if written.size:
            tokens = ", ".join(map(repr, pd.unique(written)[:3]))
            warnings.warn(f"column {column!r} of {source}: {written.size} cells written "
                          f"{tokens} are read as missing values (pandas' rule for CSV "
                          f"cells); if that is a level or a label, give --keep-na-text, which "
                          f"reads only an empty cell as missing (a numeric column with such "
                          f"cells is then text).", UserWarning, stacklevel=2)


def _features(args, X):
    """The ``--family`` specification as ``{column: family}`` (one instance per option, so
    the columns of one option form one block), else the dataset's default, else None."""
    from .families import REGISTRY

    features = {}
    specs = args.family or []
    if any(not columns for columns, _, _ in specs):  # one family for every column
        if len(specs) > 1:
            raise ValueError("--family FAMILY (one family for every column) cannot be "
                             "combined with other --family options.")
        return REGISTRY[specs[0][1]](**specs[0][2])
    target = _target(args) if specs else None
    for columns, name, hyper in specs:
        family = REGISTRY[name](**hyper)
        for col in columns:
            if col == target:
                raise ValueError(f"--family names column {col!r}, the target: the labels "
                                 f"are modelled by the class prior, not a family.")
            if col not in X.columns:
                raise ValueError(f"--family names column {col!r}, which is not in the data.")
            if col in features:
                raise ValueError(f"--family gives column {col!r} two families.")
            features[col] = family
    if features:
        return features
    return datasets.default_features(args.data) if args.data in datasets.names() else None


def _model_params(args) -> dict:
    """NaiveBayes settings of the inference options shared by ``compare`` and ``fit``."""
    params = {}
    if args.use_kernel:
        params["use_kernel"] = True
    if args.infer_counts:
        params["infer_counts"] = True
    if args.feature_prior is not None:
        params["feature_prior"] = args.feature_prior
    return params


def _target(args):
    """The target column of a command that fits: ``--target``, or a built-in dataset's."""
    if not hasattr(args, "target"):
        return None
    if args.target is None and args.data in datasets.names():
        return datasets.load(args.data)[1].name
    return args.target


def _drop_columns(X, args, source: str, *, keep_id: bool = False):
    """``X`` without the ``--drop`` columns and the ``--id`` columns (returned apart, a
    DataFrame, or None): each must be in the data."""
    id_columns = list(getattr(args, "id", None) or [])
    names = list(args.drop or []) + id_columns
    target = _target(args) if names else None
    for option, col in [("--drop", c) for c in args.drop or []] + [("--id", c)
                                                                   for c in id_columns]:
        if col == target:
            raise ValueError(f"{option} {col}: column {col!r} is the target; it cannot be "
                             f"left out of the features too (it is not one).")
        if col not in X.columns:
            raise ValueError(f"{option} {col}: column {col!r} is not in {source} (columns: "
                             f"{', '.join(map(str, X.columns))}).")
    ids = X[id_columns] if id_columns else None
    X = X.drop(columns=names)
    if X.shape[1] == 0:
        raise ValueError(f"--drop/--id leave no column of {source} to model.")
    return (X, ids) if keep_id else X


#: rows from which a column of distinct integers (20) or strings (10) is taken for an
#: identifier: fewer distinct integers are common by chance; ten distinct strings are ten
#: levels seen once each (the seed's PlayTennis table and its Day column, D1..D14)
IDENTIFIER_ROWS = {"integers": 20, "strings": 10}


def _warn_identifiers(X, source: str) -> None:
    """Warn about a modelled column that looks like a row identifier: all distinct integers
    or all distinct strings (as many values as rows), in a file of at least
    :data:`IDENTIFIER_ROWS` rows."""
    if len(X) < min(IDENTIFIER_ROWS.values()):
        return
    for col in X.columns:
        values = X[col]
        if values.isna().any() or values.nunique() != len(values):
            continue
        if pd.api.types.is_integer_dtype(values):
            kind = "integers"
        elif pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values):
            # decimals read as text (a numeric column with a stray text cell) are distinct
            # measurements, not identifiers
            numbers = pd.to_numeric(values.astype(str), errors="coerce")
            if (numbers.notna() & (numbers % 1 != 0)).any():
                continue
            kind = "strings"
        else:
            continue
        if len(X) < IDENTIFIER_ROWS[kind]:
            continue
        warnings.warn(f"column {col!r} of {source} looks like a row identifier (all "
                      f"{len(values)} values are distinct {kind}) and is modelled as a "
                      f"feature; leave it out with --drop {col} (or --id {col}, which "
                      f"predict also writes beside each prediction).", UserWarning,
                      stacklevel=2)


def _mcmc_params(args, method_used: bool) -> dict:
    """NaiveBayes settings from the MCMC options (refused when no method uses them)."""
    given = {k: getattr(args, k) for k in ("num_warmup", "num_samples", "num_chains")
             if getattr(args, k) is not None}
    if given and not method_used:
        option = "--" + next(iter(given)).replace("_", "-")
        raise ValueError(f"{option} applies to the 'mcmc' method only.")
    return {**given, "progress_bar": not args.no_progress}


# ---------------------------------------------------------------------- commands
def _wrap(text: str, width: int = 100) -> str:
    """Footnotes wrapped for a terminal, each paragraph (a leading newline kept) apart."""
    import textwrap

    return "\n".join(textwrap.fill(part, width) if part else part
                     for part in text.split("\n"))


def _cmd_compare(args) -> int:
    from .compare import _compare

    X, y = _read_table(args.data, args.target, _csv(args))
    X, y = _labelled_rows(X, y, args, args.data, scored=True)
    X = _drop_columns(X, args, args.data)
    _warn_identifiers(X, args.data)
    methods = args.methods
    features = _features(args, X)
    X = _codes_as_written(args.data, X, features, _csv(args))
    params = {**_mcmc_params(args, "mcmc" in methods), **_model_params(args)}
    # the table, its calibration table and the reliability diagram are one evaluation: the
    # out-of-fold predictions of these folds
    table, pooled = _compare(X, y, methods, features=features, models=None, cv=args.cv,
                             split=None, random_state=args.seed, progress=not args.no_progress,
                             warm_up=True, n_bins=10, class_alpha=args.class_alpha,
                             seed=args.seed, **params)
    evaluation = table.attrs["evaluation"]
    # the report: metrics, timings with compile_s, the computed footnotes, a calibration table
    from .compare import identical_note, zero_probability_note

    shown = ["accuracy", "log_loss", "brier", "ece", "entropy", "zero_prob_rows"]
    timings = ["fit_s", "predict_s", "compile_s"]
    calibration = table.attrs["calibration"]
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(f"{args.data}: {len(y)} rows, {X.shape[1]} columns; {evaluation}; metrics: "
              f"mean over folds (*_sd columns in --csv output)")
        print(table[shown].round(4).to_string())
        errors = table["error"][table["error"] != ""]
        for name, msg in errors.items():
            print(f"{name}: not fitted: {msg}")
        # the first command a newcomer runs: each column said, and coinciding rows explained
        print(_wrap("accuracy: share of test rows predicted right; log_loss: mean -log "
                    "p(true class | x), lower is better; brier: mean squared distance between "
                    "the probabilities and the one-hot truth; ece: expected calibration "
                    "error, |observed accuracy - mean top probability| over 10 confidence bins, "
                    "weighted by the rows in each, per fold and averaged over the folds (the "
                    "calibration table below pools the folds); entropy: mean entropy of "
                    "p(class | x) in nats, how unsure the predictions are."))
        for line in identical_note(table):  # one line per note, like the zero note below
            print(line)
        note = zero_probability_note(table)
        if note:
            print(note)
        if len(calibration):
            print(_wrap(f"\ncalibration ({evaluation}{PLOTTED if args.plots else ''}), per "
                        f"bin of the top class probability: n rows, mean predicted (pred), "
                        f"observed accuracy (obs); a row with no defined posterior is in the "
                        f"first bin, wrong:"))
            cells = calibration[calibration["count"] > 0].assign(
                n=lambda t: t["count"].map("{:d}".format),
                pred=lambda t: t["mean_predicted"].map("{:.3f}".format),
                obs=lambda t: t["observed"].map("{:.3f}".format),
                bins=lambda t: [f"{lo:.1f}-{hi:.1f}"
                                for lo, hi in zip(t["lower"], t["upper"], strict=True)])
            wide = cells.pivot(index="bins", columns="model", values=["n", "pred", "obs"])
            wide = wide.swaplevel(axis=1)[list(dict.fromkeys(calibration["model"]))]
            print(wide.fillna("").to_string())
        # timings last: they describe this machine, not the methods' statistical quality
        print(_wrap("\ntimings in seconds (fit_s, predict_s: timed after a warm-up fit; "
                    "compile_s: the warm-up's extra time, JAX compilation, shared by models "
                    "of the same shapes):"))
        print(table[timings].round(4).to_string())
    if args.csv:
        table.to_csv(args.csv)
        print(f"wrote {args.csv}")
        path = Path(args.csv)
        calibration.to_csv(path.with_name(path.stem + ".calibration.csv"), index=False)
        print(f"wrote {path.with_name(path.stem + '.calibration.csv')}")
    if args.plots:
        _write_plots(X, y, methods, features, args, pooled, evaluation)
    return 0


#: the calibration table's header says that the reliability diagram draws its rows
PLOTTED = "; reliability.png draws these rows"


def _write_plots(X, y, methods, features, args, pooled: dict, evaluation: str):
    """The reliability diagram of the comparison's own out-of-fold predictions (the rows of
    the printed calibration table) and learning curves (their own hold-out split, said in
    their title), as PNG files."""
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .compare import learning_curves
    from .plots import learning_curves_plot, reliability_diagram

    out = Path(args.plots)
    out.mkdir(parents=True, exist_ok=True)
    for name in methods:
        if name not in pooled:
            print(f"{name}: left out of the reliability diagram (not scored on every fold)")
    written = []
    if pooled:
        codes = next(iter(pooled.values()))[1]  # every model's folds are the same rows
        classes = np.arange(next(iter(pooled.values()))[0].shape[1])
        fig = reliability_diagram(codes, {name: proba for name, (proba, _) in pooled.items()},
                                  classes, evaluation=evaluation)
        fig.savefig(out / "reliability.png", bbox_inches="tight")
        written.append(out / "reliability.png")
    rows = len(y) - int(np.ceil(0.3 * len(y)))  # left for training by the 30% test split
    sizes = sorted({s for s in (10, 20, 40, 80, 160, 320, rows) if s <= rows})
    curves = learning_curves(X, y, methods=[m for m in methods if m != "mcmc"],
                             train_sizes=sizes, repeats=3, features=features, test_size=0.3,
                             random_state=args.seed, class_alpha=args.class_alpha,
                             progress=not args.no_progress, **_model_params(args))
    learning_curves_plot(curves).savefig(out / "learning_curves.png", bbox_inches="tight")
    written.append(out / "learning_curves.png")
    plt.close("all")
    print(f"wrote {' and '.join(map(str, written))}")


def _cmd_fit(args) -> int:
    from . import NaiveBayes, save

    _check_output(args.output, args.data)
    X, y = _read_table(args.data, args.target, _csv(args))
    X = _drop_columns(X, args, args.data)
    _warn_identifiers(X, args.data)
    features = _features(args, X)
    X = _codes_as_written(args.data, X, features, _csv(args))
    params = {**_mcmc_params(args, args.method == "mcmc"), **_model_params(args)}
    if args.seed is not None:
        if args.method != "mcmc":
            raise ValueError("--seed applies to the 'mcmc' method only.")
        params["seed"] = args.seed
    if args.missing_label is not None:
        params["missing_label"] = args.missing_label
    if args.missing_label != "drop":  # refused here, so the advice names the option
        _labelled_rows(X, y, args, args.data, scored=args.method != "mcmc")
    model = NaiveBayes(features, method=args.method, class_alpha=args.class_alpha,
                       **params).fit(X, y)
    save(model, args.output)
    # the accuracy of the rows that have a label (dropped or unlabeled rows have none)
    labelled = ~pd.isna(pd.Series(np.asarray(y, dtype=object))).to_numpy()
    accuracy = (model.score(X, y) if labelled.all()
                else model.score(X[labelled], np.asarray(y)[labelled]))
    rows = int(labelled.sum()) if args.missing_label == "drop" else len(y)
    print(f"fitted {args.method!r} on {rows} rows of {args.data}; training accuracy "
          f"{accuracy:.4f}; wrote {args.output}")
    return 0


def _labelled_rows(X, y, args, source: str, scored: bool):
    """``(X, y)`` as ``--missing-label`` says for rows whose target cell is empty, where each
    row must have a label (``scored``: compare scores every row, and only ``--method mcmc``
    fits on unlabeled rows): ``drop`` leaves them out (said in a warning), ``error`` or no
    option refuses them with the option that would leave them out."""
    from ._missing_labels import missing_labels

    missing = missing_labels(y)
    if missing is None or not missing.any() or not (scored or args.missing_label == "error"):
        return X, y
    n, first = int(missing.sum()), int(np.argmax(missing))
    what = f"the target column has {n} missing label(s) (first at row {first})"
    if args.missing_label != "drop":
        why = ("--missing-label error refuses them" if args.missing_label == "error"
               else "--missing-label drop leaves such rows out" + (
                   "" if args.command == "compare" else
                   " (R's behaviour), --method mcmc uses them as unlabeled rows"))
        raise ValueError(f"{what}; {why}.")
    if missing.all():
        raise ValueError(f"{what}: every label is missing, so --missing-label drop leaves "
                         f"no row.")
    warnings.warn(f"{what}: --missing-label drop leaves these {n} row(s) of {source} out.",
                  UserWarning, stacklevel=2)
    return X[~missing], y[~missing]


def _cmd_predict(args) -> int:
    from . import load

    if args.output:
        _check_output(args.output, args.model, args.data)
    model = load(args.model)
    X = _read_rows(args.data, model, _csv(args))
    X, ids = _drop_columns(X, args, args.data, keep_id=True)
    X = _used_columns(model, X, args.data)
    has_posterior = all(b.stats is not None for b in model.blocks_)
    # intervals cost posterior draws (seconds per row batch): computed only when asked
    level = args.interval or 0
    if level and not has_posterior:
        raise ValueError("--interval: this model was built from stated tables (from_tables), "
                         "so it has no posterior to draw intervals from; leave --interval "
                         "out or give --interval 0.")
    proba = model.predict_proba(X)
    # labels as objects: the probabilities' float_format would round float labels
    out = pd.DataFrame({"prediction": model.classes_[proba.argmax(axis=1)].astype(object)},
                       index=X.index)
    if ids is not None:  # the ids first, so the predictions join back to the rows
        out = pd.concat([ids, out], axis=1)
    for k, label in enumerate(model.classes_):
        out[f"p_{label}"] = proba[:, k]
    if args.loss is not None or args.reject_cost is not None:
        _add_decisions(out, model, proba, args)
    if level:
        # credible intervals of p(class | x, theta) over the posterior of the parameters
        from .families.categorical import UnseenCategoryWarning

        with warnings.catch_warnings():  # predict_proba said them already: once per row set
            warnings.simplefilter("ignore", UnseenCategoryWarning)
            u = model.predict_uncertainty(X, interval=level, num_draws=args.draws)
        for k, label in enumerate(model.classes_):
            out[f"lower_{label}"] = u["lower"][:, k]
            out[f"upper_{label}"] = u["upper"][:, k]
        out["entropy"] = u["entropy"]
        out["mutual_info"] = u["mutual_info"]
    # probabilities leave the kernels in the model's float type (float32 by default): a
    # stated number of significant digits keeps its rounding noise (0.33333331) out of the file
    float_format = f"%.{args.precision}g"
    if args.output:
        with atomic_file(args.output, "w") as f:
            out.to_csv(f, index=False, float_format=float_format)
        print(f"wrote {len(out)} predictions to {args.output}")
    else:
        print(out.to_csv(index=False, float_format=float_format), end="")
    return 0


def _add_decisions(out: pd.DataFrame, model, proba, args) -> None:
    """The columns of ``--loss`` / ``--reject-cost``: each choice's expected loss and the
    decision of least expected loss (``--reject-label`` where it exceeds the reject cost)."""
    from .decisions import decide, expected_loss, loss_matrix

    classes = model.classes_
    loss = (_read_loss(args.loss, classes, _csv(args)) if args.loss is not None
            else 1.0 - pd.DataFrame(np.eye(len(classes)), index=classes, columns=classes))
    if args.reject_cost is not None and args.reject_label in {str(c) for c in classes}:
        raise ValueError(f"--reject-label {args.reject_label!r} is a class label; choose "
                         f"another word for a rejected row.")
    matrix = loss_matrix(loss, classes)
    for k, label in enumerate(classes):
        out[f"expected_loss_{label}"] = expected_loss(proba, matrix)[:, k]
    out["decision"] = decide(proba, matrix, classes, args.reject_cost, args.reject_label)


def _read_loss(source: str, classes, csv: Csv = COMMA) -> pd.DataFrame:
    """A loss CSV: class labels as header (chosen class) and first column (true class), read
    with the data's ``--sep`` and ``--decimal``. The file's labels are text; each is matched
    to the class whose text it is."""
    path = Path(source)
    if not path.exists():
        raise ValueError(f"--loss: {source!r} is not a file.")
    try:
        frame = pd.read_csv(path, index_col=0, dtype=str, keep_default_na=False, sep=csv.sep)
    except Exception as err:  # noqa: BLE001 - any reader failure is a bad file for the user
        raise ValueError(f"--loss: could not read {source!r}: {err}") from None
    by_text = {str(c): c for c in classes}

    def label(text, where):
        if str(text).strip() not in by_text:
            raise ValueError(f"--loss {source}: {where} label {text!r} is not a class of the "
                             f"model ({', '.join(by_text)}).")
        return by_text[str(text).strip()]

    frame.index = [label(v, "row") for v in frame.index]
    frame.columns = [label(v, "column") for v in frame.columns]
    try:
        return frame.apply(lambda col: pd.to_numeric(col.str.strip().str.replace(
            csv.decimal, ".", regex=False)))
    except ValueError as err:
        raise ValueError(f"--loss {source}: every entry must be a number ({err}).") from None


def _check_output(output: str, *inputs: str) -> None:
    """``-o`` may not name a file the command reads: it would be replaced by the output."""
    for source in inputs:
        if same_file(output, source):
            raise ValueError(f"-o {output!r} names the input file {source!r}; write the "
                             "output to another file.")


def _used_columns(model, X, source):
    """The columns of the data the model reads; the others are said (a warning), not
    silently ignored, and left out (the model refuses a DataFrame with columns it lacks)."""
    if not isinstance(X, pd.DataFrame) or not model.fitted_.named:
        return X
    columns = model.fitted_.columns
    known = set(columns)
    extra = [c for c in X.columns if c not in known]
    if extra and len(extra) == X.shape[1]:
        raise ValueError(f"none of the columns of {source} is one the model reads: it has "
                         f"{', '.join(map(repr, extra[:20]))}, the model reads "
                         f"{', '.join(map(repr, list(columns)[:20]))} (a misspelt header, or "
                         f"another file?).")
    if extra:
        warnings.warn(f"{len(extra)} column(s) of {source} are not used by the model and are "
                      f"ignored: {', '.join(map(repr, extra[:20]))}"
                      f"{', ...' if len(extra) > 20 else ''} (the model reads "
                      f"{', '.join(map(repr, list(columns)[:20]))}).",
                      UserWarning, stacklevel=2)
        X = X[[c for c in X.columns if c in known]]
    return X


def _cmd_show(args) -> int:
    from . import load

    model = load(args.model)
    print(model.summary())
    return 0


# ---- explain: each row's prediction factored by column (the logic is in bayesnb/explain.py)
def _cmd_explain(args) -> int:
    from . import load
    from .explain import report

    model = load(args.model)
    X = _drop_columns(_read_rows(args.data, model, _csv(args)), args, args.data)
    X = _used_columns(model, X, args.data)  # as predict: other columns said and left out
    print(report(model, X, log=args.log, versus=args.versus), end="")
    return 0
# ---- end explain


def _cmd_datasets(args) -> int:
    names = datasets.names()
    width = max(map(len, names))
    for name in names:
        print(f"{name:<{width}}  {datasets.describe(name)}")
    return 0


# ---------------------------------------------------------------------- parser
def _add_family(p):
    p.add_argument("--family", action="append", metavar="[COLS=]FAMILY[:KEY=VALUE,...]",
                   type=family_spec,
                   help="declare a family, e.g. visits=poisson or w1,w2,w3=multinomial "
                   "(repeatable; other columns are inferred from their types), or one family "
                   "for every column, e.g. multinomial; hyperparameters after a colon, e.g. "
                   "w1,w2=multinomial:alpha=0.5 or age=gaussian:shape=2,rate=0.1")


def _add_columns(p, id_help: str):
    p.add_argument("--drop", action="append", metavar="COL",
                   help="leave this column of the data out (repeatable)")
    p.add_argument("--id", action="append", metavar="COL", help=id_help + " (repeatable)")


def _add_inference(p):
    p.add_argument("--use-kernel", action="store_true",
                   help="infer numeric columns as KernelDensity instead of Gaussian (R "
                   "naivebayes' usekernel=TRUE)")
    p.add_argument("--infer-counts", action="store_true",
                   help="infer numeric columns of non-negative integers as Poisson (R "
                   "naivebayes' usepoisson=TRUE)")
    p.add_argument("--feature-prior", type=probability, metavar="P",
                   help="prior probability that each column depends on the class: average "
                   "over which columns matter (see bayesnb.averaging)")


def _add_sep(p):
    p.add_argument("--sep", type=separator, default=",", metavar="CHAR",
                   help="the field separator of a CSV file, e.g. ';' or '\\t' (a tab; also "
                   "'tab') (default: ',')")
    p.add_argument("--decimal", choices=(".", ","), default=".",
                   help="the decimal mark of a CSV file's numbers: ',' for 23,61 (with "
                   "--sep ';', as many locales export) (default: '.')")
    p.add_argument("--keep-na-text", action="store_true",
                   help="read only an empty CSV cell as a missing value; by default a cell "
                   "written NA, None, null, N/A, nan, ... is missing too (pandas' rule), so a "
                   "level or label of that name needs this (a numeric column with such "
                   "cells is then text)")


def _add_missing_label(p):
    p.add_argument("--missing-label", choices=("error", "drop"), default=None,
                   help="rows whose target cell is empty: 'drop' leaves them out (R "
                   "naivebayes' behaviour); 'error' refuses them (default: refused, except "
                   "that fit --method mcmc uses them as unlabeled rows)")


def _add_no_progress(p, what: str = "no progress bars"):
    p.add_argument("--no-progress", action="store_true", help=what)


def _add_mcmc(p):
    g = p.add_argument_group("MCMC (method 'mcmc': NumPyro's NUTS)")
    g.add_argument("--num-warmup", type=non_negative_int, metavar="N",
                   help="warm-up (adaptation) iterations per chain (default: 1000)")
    g.add_argument("--num-samples", type=positive_int, metavar="N",
                   help="draws kept per chain (default: 1000)")
    g.add_argument("--num-chains", type=positive_int, metavar="N",
                   help="chains, run side by side (vectorized; default: 4)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bayesnb", description="Naive Bayes with conjugate priors: ML, MAP, posterior "
        "mean and exact Bayes, side by side.")
    parser.add_argument("--version", action="version", version=f"bayesnb {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("compare", help="cross-validated comparison of methods",
                       description="Fit every method on the same folds and print accuracy, "
                       "log loss, Brier score, calibration error and predictive entropy.")
    p.add_argument("data", help="a CSV/Parquet file or a built-in dataset name "
                   f"({', '.join(datasets.names())})")
    p.add_argument("--target", help="label column (required for a file)")
    _add_sep(p)
    _add_missing_label(p)
    p.add_argument("--methods", default=method_list("ml,map,mean,bayes"), type=method_list,
                   metavar="M1,M2,...", help=f"comma-separated methods, of {', '.join(METHODS)} "
                   "(default: ml,map,mean,bayes)")
    p.add_argument("--cv", type=folds, default=5, help="number of folds, at least 2 "
                   "(default: %(default)s)")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed of the fold shuffling and of NUTS (default: %(default)s)")
    p.add_argument("--class-alpha", type=concentration, default=1.0,
                   help="Dirichlet prior on class proportions (default: %(default)s)")
    _add_family(p)
    p.add_argument("--csv", help="also write the full table (with spreads) to this CSV file, "
                   "and the calibration table beside it (NAME.calibration.csv)")
    p.add_argument("--plots", metavar="DIR", help="also write a reliability diagram (of the "
                   "cross-validation above: the calibration table's rows) and learning curves "
                   "(a 30%% hold-out split of their own) as PNG files to this folder (needs "
                   "matplotlib)")
    _add_columns(p, "an identifier column: not a feature (as --drop)")
    _add_inference(p)
    _add_no_progress(p)
    _add_mcmc(p)
    p.set_defaults(run=_cmd_compare)

    p = sub.add_parser("fit", help="fit a model and save it",
                       description="Fit NaiveBayes and save it in bayesnb's code-free format "
                       "(an MCMC fit saves its draws).")
    p.add_argument("data", help="a CSV/Parquet file or a built-in dataset name")
    p.add_argument("--target", help="label column (required for a file)")
    _add_sep(p)
    _add_missing_label(p)
    p.add_argument("--method", default="mean", choices=METHODS,
                   help="estimation method (default: %(default)s)")
    _add_family(p)
    p.add_argument("--class-alpha", type=concentration, default=1.0,
                   help="Dirichlet prior on class proportions (default: %(default)s)")
    p.add_argument("-o", "--output", required=True, help="model file to write (*.bnb)")
    _add_columns(p, "an identifier column: not a feature (as --drop)")
    _add_inference(p)
    _add_no_progress(p, "no progress bar (the sampler's, under --method mcmc)")
    _add_mcmc(p)
    p.add_argument("--seed", type=non_negative_int, help="NUTS seed (default: 0)")
    p.set_defaults(run=_cmd_fit)

    p = sub.add_parser("predict", help="predict with a saved model",
                       description="Load a model file and write the predicted class and the "
                       "class probabilities of every row as CSV.")
    p.add_argument("model", help="a model file written by 'bayesnb fit'")
    p.add_argument("data", help="a CSV/Parquet file (or built-in dataset) with the columns")
    _add_sep(p)
    p.add_argument("-o", "--output", help="CSV file to write (default: standard output)")
    p.add_argument("--interval", type=interval, nargs="?", const=DEFAULT_INTERVAL,
                   default=None, metavar="MASS",
                   help="also write a central credible interval of each class probability "
                   "over the posterior (and the predictive entropy and mutual information), "
                   f"of mass MASS in (0, 1) (--interval alone: {DEFAULT_INTERVAL}); off by "
                   "default, since drawing from the posterior takes seconds")
    p.add_argument("--draws", type=positive_int, default=1000,
                   help="exact posterior draws for the intervals (MCMC models use theirs; "
                   "default: %(default)s)")
    p.add_argument("--precision", type=precision, default=6, metavar="DIGITS",
                   help="significant digits of the probabilities written (default: "
                   "%(default)s)")
    p.add_argument("--loss", metavar="FILE.csv",
                   help="a loss matrix as CSV (header: the chosen class; first column: the "
                   "true class; labels as classes_): also write each choice's expected loss "
                   "(expected_loss_<class>) and the decision of least expected loss")
    p.add_argument("--reject-cost", type=finite_number, metavar="R",
                   help="reject a row (decision: --reject-label) whose least expected loss "
                   "exceeds R; without --loss, the 0-1 loss (reject when the largest class "
                   "probability is below 1 - R)")
    p.add_argument("--reject-label", default="reject", metavar="TEXT",
                   help="the decision written for a rejected row (default: %(default)s)")
    _add_columns(p, "an identifier column: not read by the model, written first in the "
                 "output so the predictions join back to the rows")
    _add_no_progress(p, "accepted for symmetry with the other commands (predict shows no "
                     "progress bar)")
    p.set_defaults(run=_cmd_predict)

    p = sub.add_parser("show", help="print a saved model",
                       description="Print a model's class priors, conditional tables and "
                       "log evidence.")
    p.add_argument("model", help="a model file")
    _add_no_progress(p, "accepted for symmetry with the other commands (show shows no "
                     "progress bar)")
    p.set_defaults(run=_cmd_show)

    # ---- explain: each row's prediction factored by column
    p = sub.add_parser("explain", help="show the factors of each row's prediction",
                       description="Per row: p(class), each column's p(x_j | class), the "
                       "joint p(x, class) and p(class | x) (see NaiveBayes.explain).")
    p.add_argument("model", help="a model file")
    p.add_argument("data", help="a CSV/Parquet file with one or more rows to explain")
    _add_sep(p)
    p.add_argument("--log", action="store_true", help="natural logs instead of probabilities")
    p.add_argument("--versus", nargs=2, metavar=("A", "B"),
                   help="also the weight of evidence of each column for class A against B")
    p.add_argument("--drop", action="append", metavar="COL",
                   help="leave this column of the data out (repeatable)")
    _add_no_progress(p, "accepted for symmetry with the other commands (explain shows no "
                     "progress bar)")
    p.set_defaults(run=_cmd_explain)
    # ---- end explain

    p = sub.add_parser("datasets", help="list the built-in datasets",
                       description="The built-in datasets, one line each: rows, columns, "
                       "target and source.")
    _add_no_progress(p, "accepted for symmetry with the other commands")
    p.set_defaults(run=_cmd_datasets)
    return parser


# ---------------------------------------------------------------------- entry point
def _one_line(message) -> str:
    """A message on one line: messages that quote arrays or parser output span several."""
    if isinstance(message, KeyError) and message.args:
        message = message.args[0]
    return " ".join(str(message).split())


@contextlib.contextmanager
def _warnings_as_lines(prog: str):
    """Warnings printed as one ``PROG: warning: ...`` line each (not file:line plus source),
    each message once; library deprecations are not the user's business. (``compare`` and
    the learning curves gather their folds' unseen-category warnings into one themselves.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
            warnings.simplefilter("ignore", category)

        def show(message, category, filename, lineno, file=None, line=None):
            suggested = getattr(message, "suggested", None)  # MCMC advice: as options
            if suggested:
                from .inference import suggestion_call

                call = suggestion_call(suggested)
                options = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in suggested.items())
                message = str(message).replace(call, options)
            print(f"{prog}: warning: {_one_line(message)}", file=sys.stderr)

        warnings.showwarning = show
        yield


def _stdout_to_devnull() -> None:
    """Point stdout at the null device after its reader closed the pipe, so that Python's
    flush at exit raises no second ``BrokenPipeError`` (the Python docs' "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a file (redirected in-process)
        pass


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 a mistake, 1 a bug)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help, --version, or a bad argument (one line printed)
        return done.code if isinstance(done.code, int) else 0 if done.code is None else 2
    prog = f"bayesnb {args.command}"
    with _warnings_as_lines(prog):
        try:
            status = args.run(args)
            sys.stdout.flush()  # a closed pipe raises here, not at exit
            return status
        except BrokenPipeError:  # `bayesnb compare ... | head`: the reader stopped, no error
            _stdout_to_devnull()
            return 0
        except (ValueError, TypeError, KeyError, OSError) as err:
            print(f"{prog}: error: {_one_line(err)}", file=sys.stderr)
            return 2
        except Exception as err:  # noqa: BLE001 - a bug: still one line unless asked for more
            if os.environ.get("BAYESNB_TRACEBACK"):
                raise
            print(f"{prog}: internal error: {type(err).__name__}: {_one_line(err)} "
                  f"(set BAYESNB_TRACEBACK=1 for the traceback, and please report it)",
                  file=sys.stderr)
            return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
