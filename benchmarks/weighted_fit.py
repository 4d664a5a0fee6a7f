"""What a weighted fit costs in float32 mode, where its statistics are summed in float64
(``fitted.weighted_sums_need_float64``): a fresh estimator's ``fit`` without weights and with
weights from U(0.5, 2), alternating in one process, medians of ``--repeats`` calls, as a ratio.
Beside it, the check that pays for it: the weighted fit's ``log_evidence`` against the same fit
in x64.

    python benchmarks/weighted_fit.py [--rows 50000] [--repeats 5]
"""

import argparse
import statistics
import time

import jax
import numpy as np

from bayesnb import Gaussian, Multinomial, NaiveBayes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n = args.rows
    cases = [("multinomial", Multinomial, rng.poisson(0.5, (n, 1000)).astype(np.float32)),
             ("gaussian", Gaussian, rng.normal(size=(n, 100)).astype(np.float32))]
    y = rng.integers(0, 20, n)
    w = rng.uniform(0.5, 2.0, n)
    print(f"{n} rows, 20 classes, float32 X, JAX's default dtype (float32)")
    for name, make, X in cases:
        for weight in (None, w):  # compile both kernels first
            NaiveBayes(make()).fit(X, y, sample_weight=weight)
        times: dict = {"unweighted": [], "weighted": []}
        for _ in range(args.repeats):
            for key, weight in (("unweighted", None), ("weighted", w)):
                start = time.perf_counter()
                NaiveBayes(make()).fit(X, y, sample_weight=weight)
                times[key].append(time.perf_counter() - start)
        med = {k: statistics.median(v) for k, v in times.items()}
        evidence = NaiveBayes(make(), method="bayes").fit(X, y, sample_weight=w).log_evidence()
        with jax.enable_x64(True):
            reference = NaiveBayes(make(), method="bayes").fit(
                X, y, sample_weight=w).log_evidence()
        print(f"{name:12s} {X.shape[1]:5d} columns: unweighted {med['unweighted'] * 1e3:7.1f} ms,"
              f" weighted {med['weighted'] * 1e3:7.1f} ms, weighted / unweighted "
              f"{med['weighted'] / med['unweighted']:.2f}x; weighted log_evidence "
              f"{evidence:.6f}, x64 {reference:.6f}, |difference| {abs(evidence - reference):.3g}")


if __name__ == "__main__":
    main()
