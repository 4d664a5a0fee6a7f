"""Classes that share strength
============================

A rare class borrows strength from the others: ``Categorical(pooling="partial")``.

Help-desk tickets of five products, described by their channel and severity. Four products have
150 tickets each, the new "kiosk" only 3. Each product's tables were drawn around one shared
table (Dirichlet with concentration 20), as products of one company resemble each other. The
unpooled model (exact Bayes, a flat Dirichlet(1) prior per class) smooths kiosk's 3 tickets
toward uniform tables; the pooled one (NUTS) learns the shared table and how far products stray
from it, and smooths kiosk toward that. The script prints kiosk's tables against the truth and
the density each model gives 2,000 held-out kiosk tickets.

Data: simulated, printed at the start. ``--samples`` sets NUTS's warm-up and draws per chain
(2 chains; the tests and the gallery run ``--samples 200``).

Run it as a script::

    python examples/pooling.py
"""

import argparse
import warnings

import numpy as np
import pandas as pd

import bayesnb as bnb
from bayesnb.inference import ConvergenceWarning

LEVELS = {"channel": ["chat", "email", "phone", "web"], "severity": ["high", "low", "medium"]}
PRODUCTS = ["desktop", "kiosk", "laptop", "phone", "tablet"]


def tickets(rng, tables, product, n):
    return pd.DataFrame({col: rng.choice(LEVELS[col], n, p=tables[col][product])
                         for col in LEVELS})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(4)
    shared = {col: rng.dirichlet(np.full(len(v), 2.0)) for col, v in LEVELS.items()}
    tables = {col: {p: rng.dirichlet(20 * shared[col]) for p in PRODUCTS} for col in LEVELS}
    sizes = {p: 3 if p == "kiosk" else 150 for p in PRODUCTS}
    X = pd.concat([tickets(rng, tables, p, n) for p, n in sizes.items()], ignore_index=True)
    y = np.repeat(list(sizes), list(sizes.values()))
    held_out = tickets(rng, tables, "kiosk", 2000)
    print(f"data: simulated help-desk tickets, channel and severity of products "
          f"{', '.join(PRODUCTS)}; {len(y)} training tickets (kiosk: 3), 2000 held-out kiosk "
          f"tickets")

    unpooled = bnb.NaiveBayes(bnb.Categorical(), method="bayes").fit(X, y)
    pooled = bnb.NaiveBayes(bnb.Categorical(pooling="partial"), method="mcmc",
                            num_warmup=args.samples, num_samples=args.samples, num_chains=2,
                            progress_bar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # short chains in the tests
        pooled.fit(X, y)
    kiosk = list(pooled.classes_).index("kiosk")
    density = {"unpooled": 0.0, "pooled": 0.0}
    for col, levels in LEVELS.items():
        est = {"unpooled": unpooled.conditional_tables()[col].loc["kiosk", levels].to_numpy(),
               "pooled": pooled.draws_[f"categorical.{col}.probs"].mean(axis=(0, 1))[kiosk]}
        mean = pooled.draws_[f"categorical.{col}.shared_mean"].mean(axis=(0, 1))
        s = pooled.draws_[f"categorical.{col}.concentration"].ravel()
        print(f"kiosk's {col} table ({', '.join(levels)}):")
        print(f"  truth                  {_row(tables[col]['kiosk'])}")
        for name, table in est.items():
            error = np.abs(table - tables[col]["kiosk"]).sum()
            print(f"  {name:<22} {_row(table)}  (L1 error {error:.3f})")
            codes = pd.Categorical(held_out[col], categories=levels).codes
            density[name] += np.log(table[codes]).mean()
        print(f"  shared mean (pooled)   {_row(mean)}; learned concentration "
              f"{s.mean():.1f} (90% interval {np.quantile(s, 0.05):.1f} to "
              f"{np.quantile(s, 0.95):.1f}; the truth 20)")
    print(f"held-out kiosk tickets, mean log p(ticket | kiosk): unpooled "
          f"{density['unpooled']:.4f}, pooled {density['pooled']:.4f}")
    proba = pooled.predict_uncertainty(held_out.head(1))
    cells = ", ".join(f"P({c}) = {p:.3f}" for c, p in
                      zip(pooled.classes_, proba["proba"][0], strict=True))
    print(f"first held-out kiosk ticket ({', '.join(held_out.iloc[0])}), pooled: {cells}")


def _row(values):
    return " ".join(f"{v:.3f}" for v in values)


# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    main()
