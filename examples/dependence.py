"""Is the naive assumption safe?
=============================

Find dependent columns, then model them jointly.

Barber's pitfall (seed 000, section 4): an attribute with M states coded "1-of-M" as M binary
columns, and a column exported twice, break naive Bayes' independence given the class. The model
then counts the same evidence several times and its probabilities become overconfident.
``bayesnb.analysis.dependence`` weighs every pair of columns (log Bayes factor, > 0 favours
"dependent given the class"); ``bayesnb.JoinColumns`` acts on it in one line (Kononenko's
semi-naive Bayes: each dependent group becomes one Categorical column of combined levels).

Run it as a script::

    python examples/dependence.py [--rows 600] [--plot dependence.png]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from sklearn.metrics import brier_score_loss, log_loss
from sklearn.pipeline import make_pipeline

import bayesnb as bnb
from bayesnb.analysis import dependence


def make_data(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Two classes; age band (3 states, coded one-hot), smoker (exported twice), region and a
    blood test, all independent given the class."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    age = np.where(y == 1, rng.choice(3, n, p=[0.15, 0.35, 0.5]),
                   rng.choice(3, n, p=[0.45, 0.35, 0.2]))
    smoker = rng.random(n) < np.where(y == 1, 0.6, 0.3)
    X = pd.DataFrame({
        "age_0_10": age == 0, "age_10_20": age == 1, "age_20_plus": age == 2,
        "smoker": smoker, "smoker_copy": smoker.copy(),
        "region": rng.choice(["north", "south", "east", "west"], n),
        "blood_test": rng.normal(np.where(y == 1, 1.0, 0.0), 1.5),
    })
    return X, y


def calibration_gap(y, proba) -> float:
    """Expected calibration error over 10 confidence bins: the row-weighted mean of
    |accuracy - mean confidence| of the predicted class."""
    confidence, correct = proba.max(axis=1), proba.argmax(axis=1) == y
    bins = np.minimum((confidence * 10).astype(int), 9)
    return float(sum(np.sum(bins == b) * abs(correct[bins == b].mean()
                                             - confidence[bins == b].mean())
                     for b in np.unique(bins)) / len(y))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rows", type=int, default=600)
    parser.add_argument("--plot", default=None, help="save the heat map here (PNG)")
    args = parser.parse_args(argv)
    X, y = make_data(args.rows, seed=0)
    X_test, y_test = make_data(20_000, seed=1)

    print(f"data: synthetic patients (seed 0), {args.rows} training and {len(y_test)} held-out "
          f"rows; a one-hot age band and a smoker column exported twice")
    naive = bnb.NaiveBayes(method="mean").fit(X, y)
    report = dependence(naive, X, y)
    pd.set_option("display.width", 120)
    print("pairs, strongest evidence of dependence given the class first:")
    print(report[["column_a", "column_b", "log_bayes_factor", "method"]].head(6)
          .to_string(index=False, float_format="%.1f"))
    print("largest log Bayes factor among the independent pairs: "
          f"{report['log_bayes_factor'].iloc[4:].max():.1f}")

    # the remedy, in one line: join what the report found dependent
    joined = make_pipeline(bnb.JoinColumns(report), bnb.NaiveBayes(method="mean")).fit(X, y)
    print("joined groups:", joined[0].groups_)

    print(f"\nheld-out ({len(y_test)} rows)   log loss   Brier   calibration gap   accuracy")
    for name, proba in [("naive (one-hot, copy)", naive.predict_proba(X_test)),
                        ("joined", joined.predict_proba(X_test))]:
        print(f"{name:<24} {log_loss(y_test, proba):9.4f} "
              f"{brier_score_loss(y_test, proba[:, 1]):7.4f} {calibration_gap(y_test, proba):11.4f}"
              f" {np.mean(proba.argmax(axis=1) == y_test):14.4f}")

    if args.plot:
        fig = bnb.dependence_heatmap(report)
        fig.savefig(args.plot, dpi=110)
        print(f"heat map: {args.plot}")


# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    main()
