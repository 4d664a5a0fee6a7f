"""NUTS effective samples per second next to the exact conjugate sampler's draws per second.

    python benchmarks/mcmc.py          # Bernoulli 2 x 20, Multinomial 4 x 500; 2 x (1000 + 1000)
    python benchmarks/mcmc.py --quick  # Multinomial 4 x 50; 2 x (200 + 200)
    python benchmarks/mcmc.py --quick --samples 20   # a smoke run

Both samplers draw from the same posterior (the conjugate one), in one process. NUTS runs on the
sufficient-statistic model in float64 (bayesnb.inference). ESS is ArviZ's minimum bulk ESS
over all parameters; NUTS time includes warm-up, and its compile time is reported apart
(measured as the wall time of a 2 + 2 draw run). Exact draws are i.i.d.: their ESS is their
number. Two chains, run one after the other, so r-hat is defined.
"""

import argparse
import time

import numpy as np

import bayesnb as bnb


def bernoulli_data(rng, n=2000, f=20):
    y = rng.integers(0, 2, n)
    p = np.where(y[:, None] == 0, 0.3, 0.6) * rng.uniform(0.5, 1.5, f)
    return (rng.random((n, f)) < np.clip(p, 0.01, 0.99)).astype(float), y, bnb.Bernoulli()


def multinomial_data(rng, n=2000, v=500):
    y = rng.integers(0, 4, n)
    probs = rng.dirichlet(np.ones(v) * 0.5, size=4)
    X = np.stack([rng.multinomial(50, probs[k]) for k in y]).astype(float)
    return X, y, bnb.Multinomial()


def bench(name, X, y, family, warmup, samples):
    quick = bnb.NaiveBayes(family, method="mcmc", num_warmup=2, num_samples=2,
                           progress_bar=False)
    import warnings

    from bayesnb.inference import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        quick.fit(X, y)
        compile_s = time.perf_counter() - start
        start = time.perf_counter()
        clf = bnb.NaiveBayes(family, method="mcmc", num_warmup=warmup, num_samples=samples,
                             num_chains=2, progress_bar=False).fit(X, y)
        nuts_s = time.perf_counter() - start
    summary = clf.mcmc_summary()
    ess = float(summary["ess_bulk"].min())
    divergences = int(clf.sample_stats_["diverging"].sum())
    start = time.perf_counter()
    draws = clf.sample_posterior(samples, seed=1, num_chains=2)
    exact_s = time.perf_counter() - start
    n_params = sum(v[0, 0].size for v in draws.values())
    return {"model": name, "parameters": n_params, "nuts_s": nuts_s, "compile_s": compile_s,
            "min_ess": ess, "nuts_ess_per_s": ess / nuts_s, "divergences": divergences,
            "max_rhat": float(summary["r_hat"].max()) if summary["r_hat"].notna().any()
            else float("nan"),
            "exact_draws_per_s": 2 * samples / exact_s,
            "exact_vs_nuts": (2 * samples / exact_s) / (ess / nuts_s)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Multinomial 4 x 50, 200 + 200")
    parser.add_argument("--samples", type=int, help="warm-up and draws per chain")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    warmup = samples = args.samples or (200 if args.quick else 1000)
    rows = [bench("Bernoulli 2 classes x 20", *bernoulli_data(rng), warmup, samples),
            bench("Multinomial 4 classes x 500" if not args.quick else "Multinomial 4 x 50",
                  *multinomial_data(rng, v=50 if args.quick else 500), warmup, samples)]
    import pandas as pd

    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(pd.DataFrame(rows).set_index("model").round(2).to_string())


if __name__ == "__main__":
    main()
