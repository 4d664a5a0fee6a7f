"""Which dependencies do the data support? Tree-augmented naive Bayes
===================================================================

Naive Bayes assumes every column independent of the others given the class. Tree-augmented
naive Bayes lets each column depend on one other column too, along a spanning tree of the
columns; ``bnb.TreeAugmentedNB`` averages exactly over all of the F^(F-2) trees (the
matrix-tree theorem), and reports the posterior probability of every edge: the dependencies
the data support. Here seven symptoms of two illnesses, where chills follow fever, fatigue
follows chills and a sore throat follows a cough whatever the illness, and the season and the
region tell little.

Run it as a script::

    python examples/tree_augmented.py [--rows 1500]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from sklearn.metrics import log_loss

import bayesnb as bnb


def make_data(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Two illnesses and seven discrete symptoms; four of them depend on another symptom."""
    rng = np.random.default_rng(seed)
    flu = rng.random(n) < 0.4
    fever = rng.random(n) < np.where(flu, 0.8, 0.3)
    chills = np.where(rng.random(n) < 0.85, fever, ~fever)
    fatigue = np.where(rng.random(n) < 0.8, chills, rng.random(n) < 0.5)
    cough = rng.random(n) < np.where(flu, 0.6, 0.7)
    sore_throat = np.where(rng.random(n) < 0.75, cough, ~cough)
    season = np.where(rng.random(n) < np.where(flu, 0.6, 0.4), "winter",
                      rng.choice(["spring", "summer", "autumn"], n))
    X = pd.DataFrame({"fever": fever, "chills": chills, "fatigue": fatigue, "cough": cough,
                      "sore_throat": sore_throat, "season": season,
                      "region": rng.choice(["north", "south", "east"], n)})
    return X, np.where(flu, "flu", "cold")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rows", type=int, default=1500)
    args = parser.parse_args(argv)
    X, y = make_data(args.rows, seed=0)
    X_test, y_test = make_data(20_000, seed=1)
    print(f"data: synthetic patients (seed 0), {args.rows} training and {len(y_test)} held-out "
          "rows, 7 discrete symptoms")

    tan = bnb.TreeAugmentedNB().fit(X, y)  # averaged over all 7^5 = 16807 trees
    p, bf = tan.edge_probability_, tan.edge_log_bayes_factor_
    edges = sorted(((p.iloc[i, j], bf.iloc[i, j], p.index[i], p.columns[j])
                    for i in range(len(p)) for j in range(i + 1, len(p))), reverse=True)
    # a tree must connect every column: an edge joining two independent groups is probable
    # without being supported, which its log Bayes factor (below 0 or near it) tells
    print("edges with posterior probability > 0.5      P(edge)   log Bayes factor")
    for prob, factor, a, b in edges:
        if prob > 0.5:
            print(f"  {a:<12} - {b:<12} {prob:20.3f} {factor:18.1f}")
    print(f"most probable tree: {bnb.TreeAugmentedNB(tree='map').fit(X, y).tree_}")

    naive = bnb.NaiveBayes(bnb.Categorical(), method="bayes").fit(X, y)
    print(f"\nheld-out log loss ({len(y_test)} rows)")
    models = [("naive Bayes", naive), ("TAN, most probable tree",
                                       bnb.TreeAugmentedNB(tree="map").fit(X, y)),
              ("TAN, averaged over trees", tan)]
    for name, model in models:
        print(f"  {name:<26} {log_loss(y_test, model.predict_proba(X_test)):.4f}")
    row = X_test.iloc[[0]]
    proba = tan.predict_proba(row)[0]
    print(f"first held-out patient: P(cold) = {proba[0]:.3f}, P(flu) = {proba[1]:.3f} "
          f"(naive Bayes: P(flu) = {naive.predict_proba(row)[0, 1]:.3f})")


# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    main()
