"""NUTS on Titanic: bayesnb's fit against a hand-written NumPyro model, fresh processes.

    python benchmarks/mcmc.py                      # 4 x (1000 + 1000), medians of 3 runs
    python benchmarks/mcmc.py --quick              # 4 x (200 + 200), one run
    python benchmarks/mcmc.py --quick --samples 20 # a smoke run

Each run of each sampler is a new Python process (first run: compilation included), the
samplers interleaved run by run. Four runs of the same posterior (R's Titanic table:
Class, Sex, Age -> Survived; Dirichlet(1) priors on the class and every column's levels):

* ``bayesnb``: ``NaiveBayes(method="mcmc", progress_bar=False).fit(X, y)``, the defaults
  (its time includes its convergence check), in an empty compiled-kernel cache folder;
* ``bayesnb warm``: the same fit in a second process on the folder the first one filled
  (compiled executables and saved NUTS programs read, not made);
* ``numpyro sequential`` / ``numpyro vectorized``: the plain per-row NumPyro model a user
  writes (``numpyro_model`` below), ``MCMC(NUTS(model))`` with NumPyro's default
  ``chain_method`` and with ``"vectorized"``; the time is ``mcmc.run``.

Imports (bayesnb's estimator, NumPyro) happen before each timer. Printed per sampler, medians
over the runs: fit seconds, its ratio to ``numpyro sequential``, ArviZ's minimum bulk ESS over
all parameters and that per second of fit, the divergences, the largest r-hat, and the child's
peak resident memory (``ru_maxrss``, MB).
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

SAMPLERS = ("bayesnb", "bayesnb warm", "numpyro sequential", "numpyro vectorized")


def numpyro_model(xs, y, levels, n_classes):
    """The model as a NumPyro user writes it: every row's label and values observed."""
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    pi = numpyro.sample("class_probs", dist.Dirichlet(jnp.ones(n_classes)))
    thetas = [numpyro.sample(f"theta{j}", dist.Dirichlet(jnp.ones((n_classes, n))))
              for j, n in enumerate(levels)]
    with numpyro.plate("rows", xs.shape[0]):
        numpyro.sample("y", dist.Categorical(pi), obs=y)
        for j, theta in enumerate(thetas):
            numpyro.sample(f"x{j}", dist.Categorical(theta[y]), obs=xs[:, j])


def child(sampler, warmup, samples, chains):
    """One fit in this process: a dict of its time, draws' diagnostics and peak memory."""
    import warnings

    import numpy as np

    from bayesnb.datasets import load_titanic

    X, y = load_titanic()
    if sampler.startswith("bayesnb"):
        import bayesnb as bnb
        from bayesnb.inference import ConvergenceWarning

        bnb.NaiveBayes  # noqa: B018 - the estimator's module (scikit-learn's base) loads untimed

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            start = time.perf_counter()
            clf = bnb.NaiveBayes(method="mcmc", num_warmup=warmup, num_samples=samples,
                                 num_chains=chains, progress_bar=False).fit(X, y)
            seconds = time.perf_counter() - start
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        draws, diverging = clf.draws_, clf.sample_stats_["diverging"]
    else:
        import jax
        import jax.numpy as jnp
        from numpyro.infer import MCMC, NUTS

        codes = [np.unique(X[c].astype(str), return_inverse=True) for c in X.columns]
        xs = jnp.asarray(np.stack([c[1] for c in codes], axis=1))
        labels = jnp.asarray(np.unique(y.astype(str), return_inverse=True)[1])
        levels = tuple(len(c[0]) for c in codes)
        method = "vectorized" if sampler.endswith("vectorized") else "sequential"
        start = time.perf_counter()
        mcmc = MCMC(NUTS(numpyro_model), num_warmup=warmup, num_samples=samples,
                    num_chains=chains, chain_method=method, progress_bar=False)
        mcmc.run(jax.random.PRNGKey(0), xs, labels, levels, int(labels.max()) + 1,
                 extra_fields=("diverging",))
        seconds = time.perf_counter() - start
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        draws = {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}
        diverging = np.asarray(mcmc.get_extra_fields(group_by_chain=True)["diverging"])
    ess, rhat = diagnostics(draws)
    return {"fit_s": seconds, "min_ess_bulk": ess, "divergences": int(np.sum(diverging)),
            "max_rhat": rhat, "peak_rss_mb": rss}


def diagnostics(draws):
    """ArviZ's minimum bulk ESS and largest r-hat over every scalar parameter (r-hat NaN with
    one chain)."""
    import warnings

    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import arviz as az

        summary = az.summary(az.from_dict(posterior={k: np.asarray(v, dtype=np.float64)
                                                     for k, v in draws.items()}),
                             kind="diagnostics", round_to="none")
    return float(summary["ess_bulk"].min()), float(summary["r_hat"].max())


def run_child(sampler, warmup, samples, chains, cache):
    """One child in the compiled-kernel cache folder ``cache`` (importing bayesnb turns JAX's
    persistent cache on for every program of the process, NumPyro's too)."""
    out = subprocess.run([sys.executable, __file__, "--child", sampler, "--warmup",
                          str(warmup), "--samples", str(samples), "--chains", str(chains)],
                         capture_output=True, text=True, check=False,
                         env={**os.environ, "BAYESNB_COMPILATION_CACHE": cache})
    if out.returncode:
        raise RuntimeError(f"{sampler} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_once(warmup, samples, chains) -> dict:
    """Every sampler once: each a first run in an empty cache folder of its own, except
    ``bayesnb warm``, a second process on the folder ``bayesnb`` filled."""
    out, folders = {}, {}
    try:
        for sampler in SAMPLERS:
            if sampler not in folders:
                key = "bayesnb" if sampler == "bayesnb warm" else sampler
                folders.setdefault(key, tempfile.mkdtemp(prefix="bayesnb-mcmc-bench-"))
            folder = folders["bayesnb" if sampler == "bayesnb warm" else sampler]
            out[sampler] = run_child(sampler, warmup, samples, chains, folder)
    finally:
        for folder in folders.values():
            shutil.rmtree(folder, ignore_errors=True)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 x (200 + 200), one run")
    parser.add_argument("--samples", type=int, help="warm-up and draws per chain")
    parser.add_argument("--warmup", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--runs", type=int, help="runs per sampler (default 3, quick 1)")
    parser.add_argument("--child", choices=SAMPLERS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    samples = args.samples or (200 if args.quick else 1000)
    warmup = args.warmup if args.warmup is not None else samples
    if args.child:
        print(json.dumps(child(args.child, warmup, samples, args.chains)))
        return
    runs = args.runs or (1 if args.quick else 3)
    results = {s: [] for s in SAMPLERS}
    for _ in range(runs):
        for sampler, result in run_once(warmup, samples, args.chains).items():
            results[sampler].append(result)
    import numpy as np
    import pandas as pd

    rows = {s: {k: float(np.median([r[k] for r in rs])) for k in rs[0]}
            for s, rs in results.items()}
    for row in rows.values():
        row["vs_numpyro_sequential"] = row["fit_s"] / rows["numpyro sequential"]["fit_s"]
        row["ess_per_s"] = row["min_ess_bulk"] / row["fit_s"]
    table = pd.DataFrame(rows).T[["fit_s", "vs_numpyro_sequential", "min_ess_bulk",
                                  "ess_per_s", "divergences", "max_rhat", "peak_rss_mb"]]
    print(f"Titanic, {args.chains} chains x ({warmup} warm-up + {samples} draws), medians "
          f"of {runs} run(s), each in a new process")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.round(3).to_string())


if __name__ == "__main__":
    main()
