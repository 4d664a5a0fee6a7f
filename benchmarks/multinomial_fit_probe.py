"""Where the Multinomial fit's time goes (issue 6's one missed CPU target).

Times, side by side in one process on ``run.py``'s Multinomial data (200,000 x 1,000 counts, 20
classes), scikit-learn's ``MultinomialNB.fit`` and ours three ways:

- as shipped;
- with the staging copies timed (``_kernels._Staging.fill``: NumPy arrays are 16 bytes off a
  64-byte boundary, so XLA cannot alias them and each chunk is copied once);
- with the exact evidence's log multinomial coefficient replaced by zeros (the statistics
  kernel's ``coefficient_rows``; the value checks then take their own bounds pass, as they
  did before the log-factorial pass's markers served them). This variant is a probe only: its
  evidence is wrong.

Usage::

    python benchmarks/multinomial_fit_probe.py            # float32 policy
    python benchmarks/multinomial_fit_probe.py --x64      # float64 policy
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--x64", action="store_true", help="float64 policy")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    import jax

    if args.x64:
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from sklearn.naive_bayes import MultinomialNB

    import bayesnb as bnb
    from bayesnb.families import multinomial
    from bayesnb.fast import _kernels

    sys.path.insert(0, str(Path(__file__).parent))
    from harness import median_time
    from run import FULL, make_multinomial

    X, y = make_multinomial(*FULL["multinomial"])
    if args.x64:
        X = X.astype(np.float64)

    def ours():
        return bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0).fit(X, y)

    sk = median_time(lambda: MultinomialNB(alpha=1.0).fit(X, y), args.repeats)
    full = median_time(ours, args.repeats)

    copying = []
    fill = _kernels._Staging.fill

    def timed_fill(self, *a):
        t0 = time.perf_counter()
        out = fill(self, *a)
        copying[-1] += time.perf_counter() - t0
        return out

    _kernels._Staging.fill = timed_fill
    for _ in range(args.repeats):
        copying.append(0.0)
        ours()
    _kernels._Staging.fill = fill

    # the statistics kernel's coefficient rows as zeros, and its value checks by their own
    # bounds pass (they read the log-factorial pass's markers otherwise)
    rows_of, checks = multinomial.coefficient_rows, multinomial.Multinomial.value_checks
    multinomial.coefficient_rows = lambda w, n, x: jnp.zeros((5, x.shape[0]), x.dtype)
    multinomial.Multinomial.value_checks = {"nonnegative": True}
    jax.clear_caches()
    without = median_time(ours, args.repeats)
    multinomial.coefficient_rows, multinomial.Multinomial.value_checks = rows_of, checks
    jax.clear_caches()

    dtype = "float64" if args.x64 else "float32"
    print(f"Multinomial fit, {dtype}, {X.shape[0]:,} x {X.shape[1]:,} (medians of "
          f"{args.repeats}; ratios to scikit-learn measured in this run)")
    print("  scikit-learn MultinomialNB.fit     1.00x")
    print(f"  ours                               {full / sk:.2f}x")
    print(f"  ours, staging copies only          {statistics.median(copying) / sk:.2f}x")
    print(f"  ours without the log coefficient   {without / sk:.2f}x   (probe: evidence wrong)")


if __name__ == "__main__":
    main()
