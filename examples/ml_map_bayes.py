"""ML vs MAP vs posterior mean vs exact Bayes on small data
========================================================

With few training rows the methods part ways: maximum likelihood gives zero probabilities (and
infinite log loss) to values a class never showed, the posterior mean smooths them, and the
exact posterior predictive also widens Gaussian and count predictions (Student-t, negative
binomial) to account for the uncertainty in the parameters. This script draws small training
sets from a known mixed-type model, scores each method on a large test set, and prints the
average over repetitions, then one test row's class probabilities under each method.

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


def run(train_sizes, repeats, seed=0):
    rng = np.random.default_rng(seed)
    X_test, y_test = simulate(rng, 5000)
    spec = {"colour": bnb.Categorical(categories=[list("abcd")]), "visits": bnb.Poisson()}
    rows, last = [], {}
    for n in train_sizes:
        for _ in range(repeats):
            X, y = simulate(rng, n)
            if len(set(y)) < 2:
                continue
            for method in ("ml", "map", "mean", "bayes"):
                clf = bnb.NaiveBayes(spec, method=method)
                try:
                    clf.fit(X, y)
                except ValueError:  # e.g. ML variance of a class seen once: undefined
                    rows.append({"n": n, "method": method, "undefined_fit": 1})
                    continue
                codes = np.searchsorted(clf.classes_, y_test)
                m = classification_metrics(clf.predict_joint_log_proba(X_test), codes)
                rows.append({"n": n, "method": method, "undefined_fit": 0, **m})
                last[method] = (n, clf)
    table = pd.DataFrame(rows).groupby(["n", "method"]).agg(
        accuracy=("accuracy", "mean"), log_loss=("log_loss", "median"),
        brier=("brier", "mean"), zero_prob_rows=("zero_prob_rows", "mean"),
        undefined_fits=("undefined_fit", "sum"))
    row = X_test.head(1)
    probs = pd.DataFrame({f"{m} (trained on {n} rows)": clf.predict_proba(row)[0]
                          for m, (n, clf) in last.items()},
                         index=[f"P({c})" for c in next(iter(last.values()))[1].classes_]).T
    return table, row, probs


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
          "5000 test rows")
    table, row, probs = run(args.train_sizes, args.repeats)
    with pd.option_context("display.width", 120):
        print("median log loss is inf when ML gave a test row's class probability 0")
        print(table.round(4))
        print(f"\nfirst test row {row.round(3).to_dict('records')[0]}, each method's last fit:")
        print(probs.round(4))
    write_plots(out, args.train_sizes, args.repeats)


def write_plots(folder, train_sizes, repeats):
    """Reliability of each method trained on the smallest size, and learning curves."""
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    from bayesnb.compare import learning_curves
    from bayesnb.plots import learning_curves_plot, reliability_diagram

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    X, y = simulate(rng, 3000)
    spec = {"colour": bnb.Categorical(categories=[list("abcd")]), "visits": bnb.Poisson()}
    X_small, y_small = simulate(rng, max(train_sizes[0], 16))
    probas = {}
    for method in ("mean", "bayes"):
        clf = bnb.NaiveBayes(spec, method=method).fit(X_small, y_small)
        probas[method] = clf.predict_proba(X)
    reliability_diagram(y, probas, clf.classes_).savefig(out / "reliability.png",
                                                         bbox_inches="tight")
    curves = learning_curves(X, y, train_sizes=train_sizes, repeats=repeats, features=spec,
                             test_size=0.5)
    learning_curves_plot(curves).savefig(out / "learning_curves.png", bbox_inches="tight")
    print(f"wrote {out / 'reliability.png'} and {out / 'learning_curves.png'}")


# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    main()
