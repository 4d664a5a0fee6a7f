"""ML vs MAP vs posterior mean vs exact Bayes on small data
========================================================

With few training rows the methods part ways: maximum likelihood gives zero probabilities (and
infinite log loss) to values a class never showed, the posterior mean smooths them, and the
exact posterior predictive also widens Gaussian and count predictions (Student-t, negative
binomial) to account for the uncertainty in the parameters. This script draws small training
sets from a known mixed-type model, scores each method on a large test set, and prints the
median over repetitions (the learning curves draw the same medians), then one test row's class
probabilities under each method.

Data: simulated, printed at the start: classes "no" and "yes", a 4-level categorical
(``colour``), a Gaussian (``size``) and a Poisson count (``visits``); 5,000 test rows. The
reliability diagram and learning curves go to ``--out`` (default: a new temporary folder whose
name is printed).

Run it as a script::

    python examples/ml_map_bayes.py --train-sizes 10 20 40 --repeats 20 --out plots/
"""

import argparse
import tempfile

import numpy as np
import pandas as pd

import bayesnb as bnb
from bayesnb.compare import classification_metrics


def simulate(rng, n):
    """Two classes; a 4-level categorical, a Gaussian and a Poisson column."""
    y = rng.integers(0, 2, n)
    colour = np.where(y == 0, rng.choice(list("abcd"), n, p=[0.6, 0.3, 0.08, 0.02]),
                      rng.choice(list("abcd"), n, p=[0.1, 0.2, 0.3, 0.4]))
    size = rng.normal(np.where(y == 0, 0.0, 1.0), np.where(y == 0, 1.0, 2.0))
    visits = rng.poisson(np.where(y == 0, 1.0, 3.0))
    X = pd.DataFrame({"colour": colour, "size": size, "visits": visits})
    return X, np.where(y == 0, "no", "yes")


#: the methods compared, and the metrics of the table and of the learning curves
METHODS = ("ml", "map", "mean", "bayes")
METRICS = ("accuracy", "log_loss", "brier", "zero_prob_rows")
TEST_ROWS = 5000


def run(train_sizes, repeats, seed=0):
    """Per training size, ``repeats`` new simulated training sets, every method fitted on
    each and scored on the same simulated test rows; the medians over repeats (the table and
    the learning curves both show them), and the first test row's probabilities."""
    from bayesnb.compare import summarise_repeats

    rng = np.random.default_rng(seed)
    X_test, y_test = simulate(rng, TEST_ROWS)
    spec = {"colour": bnb.Categorical(categories=[list("abcd")]), "visits": bnb.Poisson()}
    records, last = [], {}
    for n in train_sizes:
        for r in range(repeats):
            X, y = simulate(rng, n)
            for method in METHODS:
                record = {"n_train": n, "method": method, "repeat": r, "unscored_rows": 0}
                clf = bnb.NaiveBayes(spec, method=method)
                try:  # e.g. one class only, or the ML variance of a class seen once: undefined
                    if len(set(y)) < 2:
                        raise ValueError("the training set holds one class")
                    clf.fit(X, y)
                except ValueError as err:
                    records.append({**record, "failed": 1, "failure": str(err)})
                    continue
                codes = np.searchsorted(clf.classes_, y_test)
                m = classification_metrics(clf.predict_joint_log_proba(X_test), codes)
                records.append({**record, "failed": 0, "failure": None,
                                **{k: m[k] for k in METRICS}})
                last[method] = (n, clf)
    curves = summarise_repeats(pd.DataFrame(records), METRICS)
    curves.attrs["evaluation"] = (f"training rows: a new simulated set of each size per "
                                  f"repeat ({repeats} repeats); test rows: the same "
                                  f"{TEST_ROWS} simulated rows")
    table = curves.pivot(index=["n_train", "method"], columns="metric", values="median")
    table = table[list(METRICS)].join(
        curves[curves["metric"] == "accuracy"].set_index(["n_train", "method"])[["failed"]]
        .rename(columns={"failed": "failed_fits"}))
    row = X_test.head(1)
    probs = pd.DataFrame({f"{m} (trained on {n} rows)": clf.predict_proba(row)[0]
                          for m, (n, clf) in last.items()},
                         index=[f"P({c})" for c in next(iter(last.values()))[1].classes_]).T
    return table, curves, row, probs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--train-sizes", type=int, nargs="+", default=[8, 16, 32, 128])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", "--plots", metavar="DIR", help="folder for the reliability "
                        "diagram and learning curves (PNG); default: a new temporary folder")
    args = parser.parse_args(argv)
    out = args.out or tempfile.mkdtemp(prefix="bayesnb-ml_map_bayes-")
    print(f"plots go to {out}/")
    print("data: simulated, classes no and yes; columns colour (4 levels), size (Gaussian), "
          f"visits (Poisson); training sizes {args.train_sizes}, {args.repeats} repeats each, "
          f"{TEST_ROWS} test rows")
    table, curves, row, probs = run(args.train_sizes, args.repeats)
    with pd.option_context("display.width", 120):
        print("medians over the repeats that could be fitted (learning_curves.png draws the "
              "same medians); log loss is inf when ML gave a test row's class probability 0; "
              "failed_fits: repeats where the method could not be fitted (or the training set held "
              "one class)")
        print(table.round(4))
        print(f"\nfirst test row {row.round(3).to_dict('records')[0]}, each method's last fit:")
        print(probs.round(4))
    write_plots(out, args.train_sizes, curves)


def write_plots(folder, train_sizes, curves):
    """Reliability of the smoothing methods trained on the smallest size, and the learning
    curves of the table (its medians, with the quartiles over repeats as band)."""
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    from bayesnb.plots import learning_curves_plot, reliability_diagram

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    X, y = simulate(rng, 3000)
    spec = {"colour": bnb.Categorical(categories=[list("abcd")]), "visits": bnb.Poisson()}
    n_small = max(train_sizes[0], 16)
    X_small, y_small = simulate(rng, n_small)
    probas = {}
    for method in ("mean", "bayes"):
        clf = bnb.NaiveBayes(spec, method=method).fit(X_small, y_small)
        probas[method] = clf.predict_proba(X)
    reliability_diagram(y, probas, clf.classes_, evaluation=(
        f"trained on {n_small} simulated rows, scored on {len(y)} new simulated rows")
        ).savefig(out / "reliability.png", bbox_inches="tight")
    learning_curves_plot(curves, metrics=("accuracy", "log_loss", "brier"),
                         statistic="median").savefig(out / "learning_curves.png",
                                                     bbox_inches="tight")
    print(f"wrote {out / 'reliability.png'} and {out / 'learning_curves.png'}")


# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    main()
