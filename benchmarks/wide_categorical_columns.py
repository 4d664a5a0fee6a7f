"""First fit + predict_proba on wide categorical data at any width (issue 12 section 2 asks for
20,000 columns), against scikit-learn's ``CategoricalNB(alpha=1.0)``, in one process.

    python benchmarks/wide_categorical_columns.py [--rows 5000] [--columns 20000] [--repeats 3]

Each repeat is a fresh estimator's first call on both sides, alternating (ours, sklearn,
sklearn, ours, ...); ``jax.clear_caches()`` goes before each of ours, both libraries are
imported before the first. Data: ``cases.categorical.make_categorical`` (int64 codes, 3
levels, 5 classes). Prints every time, the medians, their ratio and the argmax agreement.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases.categorical import make_categorical, ours, reference  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000)
    parser.add_argument("--columns", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y = make_categorical(args.rows, args.columns, 5, 3)
    import jax
    import sklearn.naive_bayes  # noqa: F401

    import bayesnb  # noqa: F401

    def mine():
        jax.clear_caches()
        return ours().fit(X, y).predict_proba(X)

    def theirs():
        return reference().fit(X, y).predict_proba(X)

    times: dict = {"ours": [], "sklearn": []}
    out: dict = {}
    for i in range(args.repeats):
        order = (("ours", mine), ("sklearn", theirs))
        for name, fn in order if i % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            out[name] = fn()
            times[name].append(time.perf_counter() - start)
    o, r = np.median(times["ours"]), np.median(times["sklearn"])
    agree = np.mean(out["ours"].argmax(1) == out["sklearn"].argmax(1))
    print(f"{args.rows:,} x {args.columns:,} (3 levels, 5 classes), first fit + predict_proba: "
          f"ours {', '.join(f'{t:.2f}' for t in times['ours'])} s; CategoricalNB "
          f"{', '.join(f'{t:.2f}' for t in times['sklearn'])} s; medians {o:.2f} / {r:.2f} s "
          f"= {o / r:.3f}x; argmax agree {100 * agree:.3f}%; max |dp| "
          f"{np.abs(out['ours'] - out['sklearn']).max():.1e}")


if __name__ == "__main__":
    main()
