"""Compilation and memory of many models in one process: what a service fitting small models
of different shapes pays.

    python benchmarks/compile_bound.py                  # 30 models, 2..31 classes
    python benchmarks/compile_bound.py --max-executables 1000000   # no bound, to compare

Each model is a fresh ``NaiveBayes`` (Gaussian and Categorical columns) fitted on 300 rows
with its own number of classes, then asked for ``predict_proba``: every one needs kernels of
a new shape. Printed per model: seconds (fit + predict, mostly compilation), the resident
memory of the process and the executables the package's kernels hold
(``bayesnb.fast._compiled``); then the totals.

Then one more model's first ``predict_proba`` on small batches (``--batches``, rows): the
seconds of each first call and the score kernels it compiled (rows are padded to a bucket,
``bayesnb.fast._kernels.bucket``, so a batch in a bucket already compiled compiles nothing).
The kernels score those batches however small they are (the host would score a Gaussian
table this small without compiling: ``bayesnb.fast._host.HOST_MATHS_ENTRIES``, set to -1).

Last, one model declared column by column (``--blocks``: that many one-column blocks, a family
object each, on 5,000 rows), Gaussian and then Poisson: the seconds of its fit and first
``predict_proba`` and of their compilation (the kernels compute a family's blocks together,
``bayesnb.fast._groups``). Then NUTS (``method="mcmc"``, 2 chains x (500 + 500)) on a model of
``--nuts-blocks`` one-column Gaussian blocks and on one block of the same columns (300 rows):
the seconds of each fit and of its ``predict_uncertainty`` on 2,000 rows, a first call and
another (NUTS and the draws' scoring take the blocks as one, ``bayesnb._joined_blocks``).
``--nuts-categorical N``: NUTS, 1 chain x (50 + 50), on one Categorical block of N columns of
5, 3 and 2 levels, the fit's seconds (nearly all tracing and compiling). Run with
``BAYESNB_COMPILATION_CACHE=0`` to time compilation rather than the cache.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--classes", type=int, nargs=2, default=(2, 31),
                        help="first and last number of classes")
    parser.add_argument("--max-executables", type=int, default=None,
                        help="the bound to use (default: the package's)")
    parser.add_argument("--batches", type=int, nargs="*", default=(1, 5, 12, 30, 64),
                        help="rows of the small batches predicted after the models")
    parser.add_argument("--blocks", type=int, default=100,
                        help="columns of the model declared column by column (0: none)")
    parser.add_argument("--nuts-blocks", type=int, default=30,
                        help="columns of the NUTS model declared column by column (0: none)")
    parser.add_argument("--nuts-categorical", type=int, default=0,
                        help="Categorical columns of a NUTS model, 1 chain x (50 + 50) (0: none)")
    args = parser.parse_args(argv)

    import bayesnb as bnb
    from bayesnb.fast import _compiled, _host

    _host.HOST_MATHS_ENTRIES = -1  # what is measured here is the kernels

    if args.max_executables is not None:
        _compiled.MAX_EXECUTABLES = args.max_executables
    rng = np.random.default_rng(0)
    start_rss = rss_mb()
    times, peaks = [], []
    print(f"bound: {_compiled.MAX_EXECUTABLES} executables; start RSS {start_rss:.0f} MB")
    print(f"{'classes':>7} {'seconds':>8} {'RSS MB':>8} {'executables':>11}")
    for k in range(args.classes[0], args.classes[1] + 1):
        y = np.arange(300) % k
        X = pd.DataFrame({"x": rng.normal(y, 1.0), "z": rng.normal(-y, 2.0),
                          "c": np.array(list("abc"))[rng.integers(0, 3, 300)]})
        t0 = time.perf_counter()
        clf = bnb.NaiveBayes(method="mean").fit(X, y)
        clf.predict_proba(X.head(50))
        times.append(time.perf_counter() - t0)
        peaks.append(rss_mb())
        print(f"{k:>7} {times[-1]:>8.2f} {peaks[-1]:>8.0f} {_compiled.executables():>11}")
    print(f"models: {len(times)}; seconds: total {sum(times):.1f}, median "
          f"{np.median(times):.2f}; RSS: +{peaks[-1] - start_rss:.0f} MB at the end, "
          f"+{max(peaks) - start_rss:.0f} MB at most")
    if args.batches:
        small_batches(bnb, rng, args.batches)
    if args.blocks:
        declared_column_by_column(bnb, rng, args.blocks)
    if args.nuts_blocks:
        nuts_column_by_column(bnb, rng, args.nuts_blocks)
    if args.nuts_categorical:
        nuts_categorical(bnb, rng, args.nuts_categorical)


def small_batches(bnb, rng, batches) -> None:
    from bayesnb.fast import _kernels

    # three Gaussian columns: a score kernel none of the models above compiled
    y = np.arange(300) % 4
    X = pd.DataFrame({"x": rng.normal(y, 1.0), "z": rng.normal(-y, 2.0),
                      "w": rng.normal(size=300)})
    clf = bnb.NaiveBayes(method="mean").fit(X, y)
    print(f"\nfirst predict_proba on small batches (4 classes, 3 Gaussian columns)\n"
          f"{'rows':>7} {'seconds':>8} {'compiled':>8}")
    for rows in batches:
        traces, t0 = _kernels.TRACES["scores"], time.perf_counter()
        clf.predict_proba(X.head(rows))
        print(f"{rows:>7} {time.perf_counter() - t0:>8.3f} "
              f"{_kernels.TRACES['scores'] - traces:>8}")


def declared_column_by_column(bnb, rng, n_blocks: int) -> None:
    import jax.monitoring

    compiling = [0.0]

    def listen(name, duration, **_):
        if name == "/jax/core/compile/backend_compile_duration":
            compiling[0] += duration

    jax.monitoring.register_event_duration_secs_listener(listen)
    y = np.arange(5000) % 3
    print(f"\none model of {n_blocks} one-column blocks, 5,000 rows, 3 classes\n"
          f"{'family':>8} {'fit s':>8} {'predict s':>9} {'compiling s':>11}")
    for name in ("Gaussian", "Poisson"):
        X = (rng.normal(y[:, None], 1.0, (5000, n_blocks)) if name == "Gaussian"
             else rng.poisson(1.0 + y[:, None], (5000, n_blocks)).astype(float))
        family = getattr(bnb, name)
        compiling[0], t0 = 0.0, time.perf_counter()
        clf = bnb.NaiveBayes({c: family() for c in range(n_blocks)}, method="mean").fit(X, y)
        t1 = time.perf_counter()
        clf.predict_proba(X)
        print(f"{name:>8} {t1 - t0:>8.2f} {time.perf_counter() - t1:>9.2f} "
              f"{compiling[0]:>11.2f}")


def nuts_column_by_column(bnb, rng, n_blocks: int) -> None:
    import warnings

    y = np.arange(300) % 3
    X = pd.DataFrame(rng.normal(0.5 * y[:, None], 1.0, (300, n_blocks)),
                     columns=[f"c{j}" for j in range(n_blocks)])
    X_new = pd.DataFrame(rng.normal(0.0, 1.0, (2000, n_blocks)), columns=X.columns)
    print(f"\nNUTS, 2 chains x (500 + 500), {n_blocks} Gaussian columns, 300 rows, 3 classes; "
          f"predict_uncertainty of 2,000 rows over the 1,000 draws, a first call and again\n"
          f"{'declared':>22} {'fit s':>8} {'first s':>9} {'again s':>9}")
    for label, features in ((f"{n_blocks} one-column blocks", {c: bnb.Gaussian() for c in X}),
                            ("one block", bnb.Gaussian())):
        clf = bnb.NaiveBayes(features, method="mcmc", num_warmup=500, num_samples=500,
                             num_chains=2, progress_bar=False)
        t0 = time.perf_counter()
        with warnings.catch_warnings():  # short chains: r-hat and ESS are not the point here
            warnings.simplefilter("ignore")
            clf.fit(X, y)
        t1 = time.perf_counter()
        clf.predict_uncertainty(X_new)
        t2 = time.perf_counter()
        clf.predict_uncertainty(X_new)
        print(f"{label:>22} {t1 - t0:>8.2f} {t2 - t1:>9.2f} {time.perf_counter() - t2:>9.2f}")


def nuts_categorical(bnb, rng, n_columns: int) -> None:
    """NUTS on one Categorical block of ``n_columns`` columns of 5, 3 and 2 levels: the fit's
    seconds are nearly all tracing and compiling (``Categorical.sample_params_batched``
    samples the columns of one level count as one site)."""
    import warnings

    y = np.arange(200) % 2
    X = pd.DataFrame({f"c{j}": rng.integers(0, (5, 3, 2)[j % 3], 200).astype(str)
                      for j in range(n_columns)})
    clf = bnb.NaiveBayes(bnb.Categorical(), method="mcmc", num_warmup=50, num_samples=50,
                         num_chains=1, progress_bar=False)
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # short chains: r-hat and ESS are not the point here
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    print(f"\nNUTS, 1 chain x (50 + 50), {n_columns} Categorical columns (5, 3, 2 levels), "
          f"200 rows: fit {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
