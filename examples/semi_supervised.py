"""Semi-supervised Naive Bayes
===========================

Unlabeled rows sharpen the posterior.

Two Gaussian classes with means -1 and +1. Only a handful of rows carry a label; the others
have ``y = NaN``. Under ``method="mcmc"`` an unlabeled row enters the posterior through the
marginal over classes, log sum_k pi_k p(x | theta_k) (the Stan User's Guide's naive Bayes
chapter), so the class means are pinned down far more tightly than from the labeled rows
alone. The script prints both posteriors next to the truth, and the predictive class
probabilities of a few points under each fit.

Data: simulated, printed at the start: classes "minus" (mean -1) and "plus" (mean +1), two
Gaussian columns with sd 1, ``--labeled`` labelled and ``--unlabeled`` unlabelled rows.
``--samples`` sets NUTS's draws (warm-up half of it).

Run it as a script::

    python examples/semi_supervised.py --labeled 8 --unlabeled 400
"""

import argparse

import numpy as np
import pandas as pd

import bayesnb as bnb


def simulate(rng, n):
    y = rng.integers(0, 2, n)
    return rng.normal(np.where(y == 0, -1.0, 1.0)[:, None], 1.0, (n, 2)), y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--labeled", type=int, default=8)
    parser.add_argument("--unlabeled", type=int, default=400)
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    X_l, y_l = simulate(rng, args.labeled)
    X_u, _ = simulate(rng, args.unlabeled)
    X = np.vstack([X_l, X_u])
    names = np.array(["minus", "plus"], dtype=object)
    y_l = names[y_l]
    y = np.concatenate([y_l, np.full(args.unlabeled, np.nan, dtype=object)])
    print(f"data: simulated, classes minus (mean -1) and plus (mean +1), 2 Gaussian columns; "
          f"{args.labeled} labelled rows ({', '.join(y_l)}) and {args.unlabeled} unlabelled")
    points = np.array([[-1.0, -1.0], [0.0, 0.0], [0.5, 0.5]])
    settings = dict(method="mcmc", num_warmup=args.samples // 2, num_samples=args.samples,
                    num_chains=1, progress_bar=False)
    rows, probs = [], []
    for name, data in (("labeled only", (X_l, y_l)), ("labeled + unlabeled", (X, y))):
        clf = bnb.NaiveBayes(bnb.Gaussian(rate=1.0), **settings).fit(*data)
        means = clf.draws_["gaussian.mean"].reshape(-1, 2, 2)
        for k, truth in enumerate((-1.0, 1.0)):
            rows.append({"fit": name, "class": clf.classes_[k], "true mean": truth,
                         "posterior mean": means[:, k, 0].mean(),
                         "posterior sd": means[:, k, 0].std()})
        for x, p in zip(points, clf.predict_proba(points), strict=True):
            probs.append({"fit": name, "x": f"({x[0]:g}, {x[1]:g})",
                          **{f"P({c})": pk for c, pk in zip(clf.classes_, p, strict=True)}})
    print(pd.DataFrame(rows).set_index(["fit", "class"]).round(3))
    print(pd.DataFrame(probs).set_index(["fit", "x"]).round(3))


# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    main()
