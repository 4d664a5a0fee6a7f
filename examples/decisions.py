"""Decisions under a loss, with a reject option
=============================================

Act on the predictive probabilities: choose the class of least expected loss, and hand the
doubtful rows to a person.

``clf.decide(X, loss=L)`` returns for each row the class ``a`` that minimises the expected
loss ``sum_c L[c, a] p(c | x)`` (``L[true, chosen]``); with ``reject_cost=r`` a row whose least
expected loss exceeds ``r`` gets ``reject_label`` instead (Chow's rule): referring a case costs
``r``, less than the risk of deciding it.

The data: scikit-learn's Wisconsin breast cancer biopsies (``bayesnb.datasets``, 569 rows);
four of its 30 measurements (Gaussian columns): the 30 are strongly correlated, which makes
naive Bayes's probabilities overconfident, and an expected loss is only as good as the
probabilities. Half of the rows train, the other half are decided. Missing a malignant tumour
is taken to cost 10 times a false alarm.

Run it as a script::

    python examples/decisions.py [--miss-cost 10] [--reject-cost 0.2]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

import bayesnb as bnb
from bayesnb import datasets


def report(name: str, y_true, decided, loss: pd.DataFrame, reject_cost: float) -> None:
    """The confusion table and the total cost of one way of deciding."""
    decided = pd.Series(decided, index=y_true.index).fillna("referred")
    table = pd.crosstab(y_true.rename("true"), decided.rename("decided"))
    referred = decided == "referred"
    cost = sum(loss.loc[t, d] for t, d in zip(y_true[~referred], decided[~referred],
                                              strict=True))
    cost += reject_cost * referred.sum()
    print(f"\n{name}: total cost {cost:.1f} over {len(y_true)} biopsies "
          f"({referred.sum()} referred)")
    print(table.to_string())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--miss-cost", type=float, default=10.0,
                        help="loss of calling a malignant tumour benign (a false alarm costs 1)")
    parser.add_argument("--reject-cost", type=float, default=0.2,
                        help="cost of referring a biopsy to a pathologist")
    args = parser.parse_args(argv)

    X, target = datasets.load("breast_cancer")
    X = X[["worst radius", "worst texture", "worst smoothness", "worst concave points"]]
    y = target.map({0: "malignant", 1: "benign"}).rename("diagnosis")
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, stratify=y,
                                                        random_state=0)
    print(f"data: breast cancer biopsies (bayesnb.datasets), 4 measurements, {len(X_train)} "
          f"to train, {len(X_test)} to decide")
    clf = bnb.NaiveBayes(method="bayes").fit(X_train, y_train)
    loss = pd.DataFrame([[0.0, 1.0], [args.miss_cost, 0.0]],  # rows: true, columns: chosen
                        index=["benign", "malignant"], columns=["benign", "malignant"])
    print("loss (rows: true class, columns: decision):")
    print(loss.to_string())

    proba = clf.predict_proba(X_test)
    rho = clf.expected_loss(X_test, loss=loss)
    print("\nfirst three biopsies:")
    for i in range(3):
        print(f"  P(benign)={proba[i, 0]:.4f} P(malignant)={proba[i, 1]:.4f}  expected loss "
              f"benign={rho[i, 0]:.3f} malignant={rho[i, 1]:.3f}")

    report("most probable class (predict)", y_test, clf.predict(X_test), loss,
           args.reject_cost)
    report("least expected loss (decide)", y_test, clf.decide(X_test, loss=loss), loss,
           args.reject_cost)
    decided = clf.decide(X_test, loss=loss, reject_cost=args.reject_cost)
    report(f"least expected loss, referring above {args.reject_cost}", y_test, decided, loss,
           args.reject_cost)
    referred = np.array([d is None for d in decided])
    print(f"\nreferred biopsies: largest class probability between "
          f"{proba[referred].max(axis=1).min():.3f} and {proba[referred].max(axis=1).max():.3f}")

# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).


if __name__ == "__main__":
    main()
