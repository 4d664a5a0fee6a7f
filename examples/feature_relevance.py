"""Which features matter?
======================

Exact Bayesian model averaging over all feature subsets.

``NaiveBayes(feature_prior=0.5)`` gives every column prior probability 0.5 of depending on the
class; otherwise it has one distribution shared by all classes. The evidence factorises by
column, so the average over all 2^F subsets is exact and costs about one fit (Dash & Cooper
2002): ``feature_relevance_`` holds each column's posterior probability of depending on the
class, and ``method="bayes"`` predicts with the model-averaged predictive.

The data: synthetic patients, two classes; 3 informative columns (a blood test, a symptom, a
smoking count) among 12 noise columns of the same kinds, which is where plain naive Bayes
over-fits.

Run it as a script::

    python examples/feature_relevance.py [--rows 200] [--noise 4]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from sklearn.metrics import log_loss

import bayesnb as bnb


def make_data(n: int, noise: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    columns = {
        "blood_test": rng.normal(np.where(y == 1, 1.0, 0.0), 1.0),
        "symptom": rng.random(n) < np.where(y == 1, 0.6, 0.3),
        "cigarettes": rng.poisson(np.where(y == 1, 4.0, 2.0)),
    }
    for i in range(noise):  # the same kinds of column, unrelated to the class
        columns[f"noise_test_{i}"] = rng.normal(0.0, 1.0, n)
        columns[f"noise_flag_{i}"] = rng.random(n) < 0.4
        columns[f"noise_count_{i}"] = rng.poisson(3.0, n)
    return pd.DataFrame(columns), np.where(y == 1, "ill", "well")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--noise", type=int, default=4)
    args = parser.parse_args(argv)

    X, y = make_data(args.rows, args.noise, seed=0)
    X_test, y_test = make_data(5000, args.noise, seed=1)
    print(f"data: synthetic patients, {args.rows} training rows, 3 informative and "
          f"{3 * args.noise} noise columns; 5000 held-out rows")
    poisson = bnb.Poisson()  # one instance: one block of count columns
    counts = {c: poisson for c in X.columns if "count" in c or c == "cigarettes"}
    plain = bnb.NaiveBayes(counts, method="bayes").fit(X, y)
    averaged = bnb.NaiveBayes(counts, method="bayes", feature_prior=0.5).fit(X, y)

    print("\nposterior probability that a column depends on the class:")
    print(averaged.feature_relevance_.round(4).to_string())
    print(f"\nlog evidence, plain naive Bayes:     {plain.log_evidence():.1f}")
    print(f"log evidence, averaged over subsets: {averaged.log_evidence():.1f}")
    probas = {name: clf.predict_proba(X_test) for name, clf in
              (("plain naive Bayes", plain), ("model-averaged", averaged))}
    for name, proba in probas.items():
        print(f"held-out log loss, {name}: {log_loss(y_test, proba, labels=plain.classes_):.4f}")
    print("\nfirst held-out row:")
    for name, proba in probas.items():
        print(f"  {name:18s} P(ill)={proba[0, 0]:.3f} P(well)={proba[0, 1]:.3f}")

# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    main()
