"""Credal classification: when do the data decide?
================================================

The naive credal classifier (Zaffalon 2002) asks, for each row, whether the prediction would
be the same under *every* prior of the imprecise Dirichlet model of strength ``s`` (all
Dirichlet priors of total concentration ``s`` on the class proportions and on every Categorical
table). ``clf.credal_predict(X, s)`` returns per row the classes no other class beats under all
those priors: one class when the data decide, several when the row is *indeterminate* (the
prior, not the data, would pick the class). ``clf.prior_sensitivity(X, s)`` gives the range of
the predicted class's posterior probability over the same priors.

The data: R's ``Titanic`` table (``bayesnb.datasets``, 2201 people, three Categorical columns:
class, sex, age). Models are fitted on random samples of growing size; the share of the 2201
people whose class (survived or not) is indeterminate drops as the sample grows.

Run it as a script::

    python examples/credal.py [--s 2] [--sizes 10 30 100 300 1000 2201] [--repeats 5]
"""

from __future__ import annotations

import argparse

import numpy as np

import bayesnb as bnb
from bayesnb import datasets


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--s", type=float, default=2.0, help="strength of the prior set")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 30, 100, 300, 1000, 2201])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    X, y = datasets.load("titanic")
    print(f"data: Titanic (bayesnb.datasets), {len(X)} people, columns {list(X.columns)}")
    # the levels are declared: a small sample may miss one, and under the imprecise model
    # the possible values are fixed in advance
    features = {c: bnb.Categorical(categories=sorted(X[c].unique())) for c in X.columns}
    rng = np.random.default_rng(0)
    print(f"\nshare of the {len(X)} people whose prediction is indeterminate (s = {args.s}; "
          f"mean over {args.repeats} random training samples of each size):")
    orders = [rng.permutation(len(X)) for _ in range(args.repeats)]
    for n in args.sizes:
        shares = []
        for order in orders:  # each sample is the first n people of one random order
            clf = bnb.NaiveBayes(features, method="bayes").fit(X.iloc[order[:n]],
                                                               y.iloc[order[:n]])
            shares.append(float((clf.credal_predict(X, s=args.s).sum(axis=1) > 1).mean()))
        print(f"  trained on {n:5d} people: {np.mean(shares):6.1%} indeterminate")

    n = args.sizes[len(args.sizes) // 2]
    clf = bnb.NaiveBayes(features, method="bayes").fit(X.iloc[orders[0][:n]],
                                                       y.iloc[orders[0][:n]])
    kinds = X.drop_duplicates().sort_values(list(X.columns)).reset_index(drop=True)
    sensitivity = clf.prior_sensitivity(kinds, s=args.s).to_frame()
    table = kinds.assign(**{"P(Survived=No)": clf.predict_proba(kinds)[:, 0].round(3),
                            "P(Survived=Yes)": clf.predict_proba(kinds)[:, 1].round(3),
                            "credal set": [sorted(c) for c in
                                           clf.credal_predict(kinds, s=args.s).to_sets()]})
    table = table.join(sensitivity[["robust", "lower", "upper"]].round(3))
    print(f"\neach kind of passenger, model trained on {n} people (lower/upper: the range of "
          f"the predicted class's probability over the priors):")
    print(table.to_string(index=False))

# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).


if __name__ == "__main__":
    main()
