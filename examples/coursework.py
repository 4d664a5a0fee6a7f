"""Coursework walkthrough
======================

The worked examples of the course notes, step by step.

Reproduces, from the data or from the stated numbers:

* PlayTennis (seed 003): the conditional probability tables and the scores 0.0053 / 0.0206;
* the continuous temperature example: per-class mean and (1/N) standard deviation;
* Barber's Scottish/English example (seed 000): p(S | x*) = 0.8076, and the exact zero under
  maximum likelihood for x = (0, 1, 1, 1, 1), which smoothing (a Beta prior) removes;
* e1071's Titanic print-out (seed 004) and the posterior for a 2nd-class passenger.

Run it as a script::

    python examples/coursework.py
"""

import argparse

import numpy as np
import pandas as pd

import bayesnb as bnb
from bayesnb import datasets


def playtennis():
    X, y = datasets.load_playtennis()
    print(f"data: PlayTennis (bayesnb.datasets.load_playtennis), {len(X)} days")
    clf = bnb.NaiveBayes(method="ml").fit(X, y)
    print(clf.summary())
    x = pd.DataFrame([["Sunny", "Cool", "High", "Strong"]], columns=X.columns)
    joint = np.exp(clf.predict_joint_log_proba(x))[0]
    for label, p in zip(clf.classes_, joint, strict=True):
        print(f"  p(x', PlayTennis={label}) = {p:.4f}")
    print(f"  prediction: {clf.predict(x)[0]}\n")


def temperature():
    X, y = datasets.load_temperature()
    print(f"data: temperature (bayesnb.datasets.load_temperature), {len(X)} days")
    clf = bnb.NaiveBayes(method="ml").fit(X, y)
    print("Temperature, Gaussian ML (1/N variance):")
    print(clf.conditional_tables()["Temperature"].round(2), "\n")


def barber():
    stated = {"x1": (1, 1 / 2), "x2": (4 / 7, 1 / 2), "x3": (3 / 7, 1 / 3), "x4": (5 / 7, 1 / 2),
              "x5": (3 / 7, 1 / 2)}
    print("data: Barber's stated probabilities, then a 13-person table with those frequencies")
    clf = bnb.from_tables({"S": 7 / 13, "E": 6 / 13},
                          bernoulli={c: {"S": s, "E": e} for c, (s, e) in stated.items()})
    s = list(clf.classes_).index("S")
    for x in ([1, 0, 1, 1, 0], [0, 1, 1, 1, 1]):
        print(f"  Barber, stated probabilities: p(S | x={x}) = "
              f"{clf.predict_proba([x])[0, s]:.4f}")
    # a 13-person data set with exactly the stated frequencies, fitted three ways
    english = [[0, 0, 1, 1, 1], [1, 0, 1, 1, 0], [1, 1, 0, 0, 1], [1, 1, 0, 0, 0],
               [0, 1, 0, 1, 1], [0, 0, 0, 0, 0]]
    scottish = [[1, 1, 1, 1, 1], [1, 1, 1, 1, 0], [1, 0, 1, 0, 0], [1, 1, 0, 1, 1],
                [1, 1, 0, 1, 0], [1, 0, 0, 0, 1], [1, 0, 0, 1, 0]]
    X = np.array(english + scottish)
    y = np.array(["E"] * 6 + ["S"] * 7)
    for method in ("ml", "mean", "bayes"):
        p = bnb.NaiveBayes(bnb.Bernoulli(), method=method, class_alpha=1.0).fit(X, y)
        print(f"  fitted, method={method!r:7}: p(S | x=(0,1,1,1,1)) = "
              f"{p.predict_proba([[0, 1, 1, 1, 1]])[0, 1]:.4f}")
    print()


def titanic():
    X, y = datasets.load_titanic()
    print(f"data: Titanic (bayesnb.datasets.load_titanic), {len(X)} passengers")
    clf = bnb.NaiveBayes(method="ml").fit(X, y)
    print(clf.summary())
    second = pd.DataFrame({"Class": ["2nd", "2nd"], "Sex": [None, None],
                           "Age": [None, "Child"]})
    print("2nd class (Sex, Age unknown) and 2nd-class child:")
    print(pd.DataFrame(clf.predict_proba(second), columns=clf.classes_,
                       index=["2nd", "2nd child"]).round(7))


def main(argv=None):
    argparse.ArgumentParser(description=__doc__.partition("\n")[0]).parse_args(argv)
    playtennis()
    temperature()
    barber()
    titanic()


# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    main()
