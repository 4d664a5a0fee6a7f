"""The ``bayesnb`` command line.

    bayesnb compare titanic              # ML vs MAP vs mean vs exact Bayes, 5-fold CV
    bayesnb compare data.csv --target y  # the same on your own CSV or Parquet file
    bayesnb datasets                     # the built-in datasets

Errors in files, columns or options are printed as one line (exit status 2), not a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from . import datasets


def _read_table(source: str, target: str | None):
    if source in datasets.names():
        X, y = datasets.load(source)
        if target is not None and target != y.name:
            raise ValueError(f"dataset {source!r} has target {y.name!r}, not {target!r}.")
        return X, y
    path = Path(source)
    if not path.exists():
        raise ValueError(f"{source!r} is neither a file nor a built-in dataset "
                         f"({', '.join(datasets.names())}).")
    if target is None:
        raise ValueError("--target is required with a data file.")
    try:
        frame = pd.read_parquet(path) if path.suffix in (".parquet", ".pq") else pd.read_csv(path)
    except Exception as err:  # noqa: BLE001 - any reader failure is a bad file for the user
        raise ValueError(f"could not read {source!r}: {err}") from None
    if target not in frame.columns:
        raise ValueError(f"column {target!r} is not in {source!r} "
                         f"(columns: {', '.join(map(str, frame.columns))}).")
    return frame.drop(columns=target), frame[target]


def _cmd_compare(args) -> int:
    from .compare import compare

    X, y = _read_table(args.data, args.target)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    table = compare(X, y, methods=methods, cv=args.cv, random_state=args.seed,
                    class_alpha=args.class_alpha)
    shown = ["accuracy", "log_loss", "brier", "ece", "entropy", "fit_s", "predict_s",
             "zero_prob_rows"]
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(f"{args.data}: {len(y)} rows, {X.shape[1]} columns, {args.cv}-fold CV "
              f"(mean over folds; *_sd columns in --csv output)")
        print(table[shown].round(4).to_string())
        errors = table["error"][table["error"] != ""]
        for name, msg in errors.items():
            print(f"{name}: not fitted: {msg}")
        if table["zero_prob_rows"].fillna(0).gt(0).any():
            print("zero_prob_rows: test rows whose true class got probability 0 (infinite "
                  "log loss); the unsmoothed ML estimate does this, the priors do not.")
    if args.csv:
        table.to_csv(args.csv)
        print(f"wrote {args.csv}")
    return 0


def _cmd_datasets(args) -> int:
    for name in datasets.names():
        print(name)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayesnb", description="Naive Bayes with conjugate priors: ML, MAP, posterior "
        "mean and exact Bayes, side by side.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("compare", help="cross-validated comparison of methods",
                       description="Fit every method on the same folds and print accuracy, "
                       "log loss, Brier score, calibration error and predictive entropy.")
    p.add_argument("data", help="a CSV/Parquet file or a built-in dataset name "
                   f"({', '.join(datasets.names())})")
    p.add_argument("--target", help="label column (required for a file)")
    p.add_argument("--methods", default="ml,map,mean,bayes",
                   help="comma-separated methods (default: %(default)s)")
    p.add_argument("--cv", type=int, default=5, help="number of folds (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="fold shuffling seed")
    p.add_argument("--class-alpha", type=float, default=1.0,
                   help="Dirichlet prior on class proportions (default: %(default)s)")
    p.add_argument("--csv", help="also write the full table (with spreads) to this CSV file")
    p.set_defaults(run=_cmd_compare)

    p = sub.add_parser("datasets", help="list the built-in datasets")
    p.set_defaults(run=_cmd_datasets)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "cv", 2) < 2:
        parser.error("--cv must be at least 2")
    try:
        return args.run(args)
    except (ValueError, TypeError, OSError) as err:
        print(f"bayesnb {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
