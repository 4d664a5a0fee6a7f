"""Memory and time with many classes (issue 11, section 5): 40,000 rows x 3 columns and
10,000 or 20,000 classes (four or two rows per class).

A 1 MB input used to take +2.2 GB (+6.6 GB with 20,000 classes) to fit, because chunks were
sized by the input row alone while the kernel materialised a ``(rows, classes)`` one-hot per
chunk. Every case runs in its own subprocess, and its peak extra memory is the peak resident
set during the call (``VmHWM``, reset through ``/proc/self/clear_refs``) less the resident set
before it, after the data exist and the kernels are compiled (a warm-up on the same shapes).
scikit-learn's ``GaussianNB`` is the reference, on the same data in its own subprocess.

Usage::

    python benchmarks/many_classes.py              # 10,000 and 20,000 classes
    python benchmarks/many_classes.py --classes 5000 --rows 20000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import numpy as np
rows, classes, which, op = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
rng = np.random.default_rng(0)
X = rng.normal(size=(rows, 3))
y = np.arange(rows) % classes
Xp = X[:1000]

def peak():
    # VmHWM, the peak resident set, which writing 5 to clear_refs resets (Linux); elsewhere
    # ru_maxrss, the lifetime peak (then a call below the warm-up's peak reads as 0)
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:
        pass


def rss():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))

if which == "bayesnb":
    import bayesnb as bnb
    make = lambda: bnb.NaiveBayes(method="mean")
else:
    from sklearn.naive_bayes import GaussianNB
    make = lambda: GaussianNB()
warm = make().fit(X.copy(), y)  # compile (bayesnb) and page in the libraries
warm.predict_proba(Xp.copy())
del warm
model = make().fit(X, y) if op != "fit" else None
reset_peak(); before = rss(); t = time.perf_counter()
result = make().fit(X, y) if op == "fit" else model.predict_proba(Xp)
elapsed = time.perf_counter() - t
print(json.dumps({"seconds": elapsed, "extra_mb": (peak() - before) / 2**10}))
"""


def run(rows: int, classes: int, which: str, op: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(rows), str(classes), which, op],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=40_000)
    parser.add_argument("--classes", type=int, action="append")
    args = parser.parse_args(argv)
    print("| rows x cols | classes | op | bayesnb | GaussianNB | ratio | bayesnb peak extra MB "
          "| GaussianNB peak extra MB | (n, K) output MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for classes in args.classes or [10_000, 20_000]:
        for op in ("fit", "predict_proba"):
            ours, ref = run(args.rows, classes, "bayesnb", op), run(args.rows, classes,
                                                                     "sklearn", op)
            output = 0 if op == "fit" else 1000 * classes * 8 / 2**20
            label = "fit" if op == "fit" else "predict_proba (1,000 rows)"
            print(f"| {args.rows:,} x 3 | {classes:,} | {label} | {ours['seconds'] * 1e3:,.0f} ms"
                  f" | {ref['seconds'] * 1e3:,.0f} ms | {ours['seconds'] / ref['seconds']:.2f}x"
                  f" | {ours['extra_mb']:,.0f} | {ref['extra_mb']:,.0f} | {output:,.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()
