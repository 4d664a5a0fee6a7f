"""The ``bayesnb`` command line.

    bayesnb compare titanic              # ML vs MAP vs mean vs exact Bayes, 5-fold CV
    bayesnb compare data.csv --target y  # the same on your own CSV or Parquet file
    bayesnb fit titanic -o titanic.bnb   # fit and save a model (code-free file)
    bayesnb predict titanic.bnb new.csv  # predictions and class probabilities as CSV
    bayesnb show titanic.bnb             # priors, conditional tables and evidence
    bayesnb datasets                     # the built-in datasets

Errors in files, columns or options are printed as one line (exit status 2), not a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from . import datasets


def _read_table(source: str, target: str | None):
    if source in datasets.names():
        X, y = datasets.load(source)
        if target is not None and target != y.name:
            raise ValueError(f"dataset {source!r} has target {y.name!r}, not {target!r}.")
        return X, y
    frame, _ = _read_features(source)
    if target is None:
        raise ValueError("--target is required with a data file.")
    if target not in frame.columns:
        raise ValueError(f"column {target!r} is not in {source!r} "
                         f"(columns: {', '.join(map(str, frame.columns))}).")
    return frame.drop(columns=target), frame[target]


def _cmd_compare(args) -> int:
    from .compare import compare

    X, y = _read_table(args.data, args.target)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    features = _parse_families(args.family)
    if features is None and args.data in datasets.names():
        features = datasets.default_features(args.data)
    _check_family_columns(features, X)
    table = compare(X, y, methods=methods, features=features, cv=args.cv,
                    random_state=args.seed, class_alpha=args.class_alpha,
                    progress=not args.no_progress)
    # --- issue 15 section 3 (plots branch): compile_s, computed footnote, calibration table
    from .compare import zero_probability_note

    shown = ["accuracy", "log_loss", "brier", "ece", "entropy", "fit_s", "predict_s",
             "compile_s", "zero_prob_rows"]
    calibration = table.attrs["calibration"]
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(f"{args.data}: {len(y)} rows, {X.shape[1]} columns, {args.cv}-fold CV "
              f"(mean over folds; *_sd columns in --csv output)")
        print(table[shown].round(4).to_string())
        errors = table["error"][table["error"] != ""]
        for name, msg in errors.items():
            print(f"{name}: not fitted: {msg}")
        print("fit_s, predict_s: timed after a warm-up fit; compile_s: the warm-up's extra "
              "time (JAX compilation, shared by models of the same shapes).")
        note = zero_probability_note(table)
        if note:
            print(note)
        if len(calibration):
            print("\ncalibration, test rows of all folds per bin of the top class probability: "
                  "n rows, mean predicted (pred), observed accuracy (obs); a row with no "
                  "defined posterior is in the first bin, wrong:")
            cells = calibration[calibration["count"] > 0].assign(
                n=lambda t: t["count"].map("{:d}".format),
                pred=lambda t: t["mean_predicted"].map("{:.3f}".format),
                obs=lambda t: t["observed"].map("{:.3f}".format),
                bins=lambda t: [f"{lo:.1f}-{hi:.1f}"
                                for lo, hi in zip(t["lower"], t["upper"], strict=True)])
            wide = cells.pivot(index="bins", columns="model", values=["n", "pred", "obs"])
            wide = wide.swaplevel(axis=1)[list(dict.fromkeys(calibration["model"]))]
            print(wide.fillna("").to_string())
    if args.csv:
        table.to_csv(args.csv)
        print(f"wrote {args.csv}")
        path = Path(args.csv)
        calibration.to_csv(path.with_name(path.stem + ".calibration.csv"), index=False)
        print(f"wrote {path.with_name(path.stem + '.calibration.csv')}")
    # --- end of the plots branch's edit
    if args.plots:
        _write_plots(X, y, methods, features, args)
    return 0


def _write_plots(X, y, methods, features, args):
    """Reliability diagram on a held-out 30% and learning curves, as PNG files."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.model_selection import train_test_split

    from . import NaiveBayes
    from .compare import _posterior, learning_curves
    from .plots import learning_curves_plot, reliability_diagram

    out = Path(args.plots)
    out.mkdir(parents=True, exist_ok=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y,
                                              random_state=args.seed)
    probas, classes = {}, None
    for method in methods:
        try:
            model = NaiveBayes(features, method=method, class_alpha=args.class_alpha,
                               progress_bar=False).fit(X_tr, y_tr)
            # plots branch: rows with no defined posterior (all classes -inf) are all zeros
            probas[method] = _posterior(model.predict_joint_log_proba(X_te))
            classes = model.classes_
        except ValueError as err:
            print(f"{method}: left out of the reliability diagram: {err}")
    fig = reliability_diagram(y_te, probas, classes)
    fig.savefig(out / "reliability.png", bbox_inches="tight")
    n = len(y_tr)
    sizes = sorted({s for s in (10, 20, 40, 80, 160, 320, n) if s <= n})
    curves = learning_curves(X, y, methods=[m for m in methods if m != "mcmc"],
                             train_sizes=sizes, repeats=3, features=features,
                             random_state=args.seed, class_alpha=args.class_alpha,
                             progress=not args.no_progress)
    learning_curves_plot(curves).savefig(out / "learning_curves.png", bbox_inches="tight")
    plt.close("all")
    print(f"wrote {out / 'reliability.png'} and {out / 'learning_curves.png'}")


def _lse(scores):
    from scipy.special import logsumexp

    with np.errstate(invalid="ignore"):
        return logsumexp(scores, axis=1, keepdims=True)


def _parse_families(specs):
    """``["w1,w2=multinomial", "age=gaussian"]`` -> ``{column: family}``; one instance per
    spec, so the columns of one spec form one block."""
    from .families import REGISTRY

    features = {}
    # --- plots branch (issue 15 section 3): "--family multinomial" alone = every column
    if specs and len(specs) == 1 and "=" not in specs[0] and specs[0] in REGISTRY:
        return REGISTRY[specs[0]]()
    for spec in specs or []:
        if "=" not in spec and spec in REGISTRY:
            raise ValueError(f"--family {spec!r} (one family for every column) cannot be "
                             f"combined with other --family options.")
    # --- end of the plots branch's edit
    for spec in specs or []:
        columns, sep, name = spec.rpartition("=")
        if not sep or not columns or name not in REGISTRY:
            raise ValueError(f"--family {spec!r}: expected COLUMN[,COLUMN...]=FAMILY with "
                             f"FAMILY one of {', '.join(REGISTRY)}.")
        family = REGISTRY[name]()
        for col in columns.split(","):
            features[col] = family
    return features or None


def _check_family_columns(features, X):
    if isinstance(features, dict):
        for col in features:
            if col not in X.columns:
                raise ValueError(f"--family names column {col!r}, which is not in the data.")


def _cmd_fit(args) -> int:
    from . import NaiveBayes, save

    X, y = _read_table(args.data, args.target)
    features = _parse_families(args.family)
    if features is None and args.data in datasets.names():
        features = datasets.default_features(args.data)
    _check_family_columns(features, X)
    model = NaiveBayes(features, method=args.method, class_alpha=args.class_alpha).fit(X, y)
    save(model, args.output)
    print(f"fitted {args.method!r} on {len(y)} rows of {args.data}; "
          f"training accuracy {model.score(X, y):.4f}; wrote {args.output}")
    return 0


def _cmd_predict(args) -> int:
    from . import load

    model = load(args.model)
    if args.data in datasets.names():
        X, _ = datasets.load(args.data)
    else:
        X, _ = _read_features(args.data)
    proba = model.predict_proba(X)
    out = pd.DataFrame({"prediction": model.classes_[proba.argmax(axis=1)]}, index=X.index)
    for k, label in enumerate(model.classes_):
        out[f"p_{label}"] = proba[:, k]
    if args.interval:
        # credible intervals of p(class | x, theta) over the posterior of the parameters
        u = model.predict_uncertainty(X, interval=args.interval, num_draws=args.draws)
        for k, label in enumerate(model.classes_):
            out[f"lower_{label}"] = u["lower"][:, k]
            out[f"upper_{label}"] = u["upper"][:, k]
        out["entropy"] = u["entropy"]
        out["mutual_info"] = u["mutual_info"]
    if args.output:
        out.to_csv(args.output, index=False)
        print(f"wrote {len(out)} predictions to {args.output}")
    else:
        print(out.to_csv(index=False), end="")
    return 0


def _read_features(source):
    """A CSV or Parquet file as a DataFrame; bad paths and unreadable files are one-line
    errors."""
    path = Path(source)
    if not path.exists():
        raise ValueError(f"{source!r} is neither a file nor a built-in dataset "
                         f"({', '.join(datasets.names())}).")
    try:
        frame = pd.read_parquet(path) if path.suffix in (".parquet", ".pq") else pd.read_csv(path)
    except Exception as err:  # noqa: BLE001 - any reader failure is a bad file for the user
        raise ValueError(f"could not read {source!r}: {err}") from None
    return frame, None


def _cmd_show(args) -> int:
    from . import load

    model = load(args.model)
    print(model.summary())
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
    p.add_argument("--family", action="append", metavar="[COLS=]FAMILY",
                   help="declare a family, e.g. visits=poisson or w1,w2,w3=multinomial "
                   "(repeatable; other columns are inferred from their types), or one family "
                   "for every column, e.g. multinomial")
    p.add_argument("--csv", help="also write the full table (with spreads) to this CSV file, "
                   "and the calibration table beside it (NAME.calibration.csv)")
    p.add_argument("--plots", metavar="DIR", help="also write a reliability diagram and "
                   "learning curves (PNG, needs matplotlib) to this folder")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=_cmd_compare)

    p = sub.add_parser("fit", help="fit a model and save it",
                       description="Fit NaiveBayes and save it in bayesnb's code-free format.")
    p.add_argument("data", help="a CSV/Parquet file or a built-in dataset name")
    p.add_argument("--target", help="label column (required for a file)")
    p.add_argument("--method", default="mean", choices=["ml", "map", "mean", "bayes"])
    p.add_argument("--family", action="append", metavar="COLS=FAMILY",
                   help="declare a family, e.g. visits=poisson or w1,w2,w3=multinomial "
                   "(repeatable; other columns are inferred from their types)")
    p.add_argument("--class-alpha", type=float, default=1.0)
    p.add_argument("-o", "--output", required=True, help="model file to write (*.bnb)")
    p.set_defaults(run=_cmd_fit)

    p = sub.add_parser("predict", help="predict with a saved model",
                       description="Load a model file and write the predicted class and the "
                       "class probabilities of every row as CSV.")
    p.add_argument("model", help="a model file written by 'bayesnb fit'")
    p.add_argument("data", help="a CSV/Parquet file (or built-in dataset) with the columns")
    p.add_argument("-o", "--output", help="CSV file to write (default: standard output)")
    p.add_argument("--interval", type=float, default=0.9,
                   help="credible interval of each class probability over the posterior "
                   "(default: %(default)s; 0 to leave out)")
    p.add_argument("--draws", type=int, default=1000,
                   help="exact posterior draws for the intervals (MCMC models use theirs)")
    p.set_defaults(run=_cmd_predict)

    p = sub.add_parser("show", help="print a saved model",
                       description="Print a model's class priors, conditional tables and "
                       "log evidence.")
    p.add_argument("model", help="a model file")
    p.set_defaults(run=_cmd_show)

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
