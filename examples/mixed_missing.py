"""Mixed data with missing values
==============================

Strings, booleans, floats and counts in one DataFrame.

Naive Bayes handles a missing attribute by leaving its factor out (Barber, seed 000): the
prediction marginalises the unobserved column, it does not impute it. This script fits a mixed
model on data with 20% of the cells missing, shows the inferred and declared families, and
checks that a prediction with a missing column equals the prediction of a model that never saw
that column.

Data: simulated, printed at the start: classes low, mid and high; columns region (strings),
member (nullable booleans), income (floats) and purchases (counts), 20% of cells missing.

It then draws every column per class beside its training data (``bayesnb.plots.density_plot``
with ``prob="marginal"``): bars for the discrete columns, densities for income.

Run it as a script::

    python examples/mixed_missing.py --out plots/
"""

import argparse
import tempfile

import numpy as np
import pandas as pd

import bayesnb as bnb


def make_data(rng, n):
    y = rng.choice(["low", "mid", "high"], n)
    k = pd.Series(y).map({"low": 0, "mid": 1, "high": 2}).to_numpy()
    X = pd.DataFrame({
        "region": rng.choice(["north", "south", "east", "west"], n),
        "member": rng.random(n) < 0.2 + 0.3 * k,
        "income": rng.normal(30 + 15 * k, 8.0),
        "purchases": rng.poisson(1 + 2 * k),
    })
    X["region"] = np.where(rng.random(n) < 0.5, ["north", "south", "east"][0], X["region"])
    mask = rng.random(X.shape) < 0.2
    return X.mask(mask), y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--out", "--plots", metavar="DIR", help="folder for columns.png; "
                        "default: a new temporary folder")
    args = parser.parse_args(argv)
    out = args.out or tempfile.mkdtemp(prefix="bayesnb-mixed_missing-")
    print(f"plots go to {out}/")
    rng = np.random.default_rng(1)
    X, y = make_data(rng, args.rows)
    X["member"] = X["member"].astype("boolean")  # nullable booleans keep their dtype
    print(f"data: simulated, {len(X)} rows, classes {', '.join(sorted(set(y)))}; columns "
          f"{', '.join(X.columns)}; {X.isna().mean().mean():.0%} of the cells are missing")
    clf = bnb.NaiveBayes({"purchases": bnb.Poisson()}, method="bayes").fit(X, y)
    for block in clf.blocks_:
        print(f"  {block.family!r:55} <- {list(block.schema.columns)}")
    X_test, y_test = make_data(rng, 1000)
    X_test["member"] = X_test["member"].astype("boolean")
    print(f"held-out accuracy: {clf.score(X_test, y_test):.3f}")

    row = X_test.iloc[[0]].copy()
    row["income"] = np.nan
    without = bnb.NaiveBayes({"purchases": bnb.Poisson()}, method="bayes").fit(
        X.drop(columns="income"), y)
    a = clf.predict_proba(row)
    b = without.predict_proba(row.drop(columns="income"))
    def cells(p):
        return ", ".join(f"P({c}) = {pk:.6f}" for c, pk in zip(clf.classes_, p[0], strict=True))

    print(f"income missing:         {cells(a)}")
    print(f"model without income:   {cells(b)}")
    assert np.allclose(a, b, atol=1e-5)
    write_plots(out, clf, X, y)


def write_plots(folder, clf, X, y):
    """Every column per class beside its training data, each class scaled by its prior
    (``prob="marginal"``): bars of P(class) P(value | class) beside the observed joint
    frequencies (hatched) for region, member and purchases, densities over histograms for
    income."""
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayesnb.plots import density_plot

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(2, 2, figsize=(13, 8), layout="constrained")
    for ax, column in zip(axes.flat, ["region", "member", "purchases", "income"], strict=True):
        density_plot(clf, column, X, y, prob="marginal", ax=ax)
    fig.savefig(out / "columns.png", bbox_inches="tight")
    print(f"wrote {out / 'columns.png'}")


# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    main()
