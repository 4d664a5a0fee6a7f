"""Where the float64 Bernoulli fit's time goes, and why reading X in place does not save it
(issue 12 section 3: every dense cell <= 1.0x scikit-learn in x64).

Times, side by side in one process under x64 on ``run.py``'s Bernoulli data (200,000 x 1,000
0/1 values as float64, 10 classes), each as a ratio to scikit-learn's
``BernoulliNB(alpha=1.0, binarize=None).fit``:

- ours as shipped (``NaiveBayes(Bernoulli(), method="mean").fit``);
- the statistics kernel over chunks staged the library's way: each chunk copied into a
  64-byte-aligned buffer (NumPy arrays start 16 bytes off such a boundary, so XLA:CPU copies
  them itself otherwise), then ``_kernels.suff_stats``;
- the same kernel fed 64-byte-aligned windows of X read in place, no copy. A window starts a
  few values before its chunk, so its rows straddle two of X's rows and its statistics are
  wrong: this variant is a timing probe only;
- the staging copies alone;
- NumPy's class-sum product ``Y.T @ X`` alone (OpenBLAS), the product scikit-learn makes;
- scikit-learn's structure with our check: the kernel's value check alone
  (``_kernels._not_binary``) on the aligned windows (a check does not care which row a value
  is in), beside NumPy's per-chunk ``Y.T @ X`` read in place; and that check alone.

The kernel reads a staged chunk from cache several times (the value check, the product, the
missing-value sum); reading X in place makes each of those reads a read from memory, which
costs more than the one copy saves. The last line checks our class counts against
scikit-learn's ``feature_count_``.

Usage::

    python benchmarks/float64_fit_probe.py [--rows 200000] [--repeats 5]
"""

import argparse
import sys
from pathlib import Path

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    import jax

    jax.config.update("jax_enable_x64", True)
    from sklearn.naive_bayes import BernoulliNB

    import bayesnb as bnb
    from bayesnb.families.bernoulli import Bernoulli
    from bayesnb.fast import _kernels

    sys.path.insert(0, str(Path(__file__).parent))
    from harness import median_time
    from run import FULL, make_bernoulli

    _, width, k = FULL["bernoulli"]
    X, y = make_bernoulli(args.rows, width, k)
    X = X.astype(np.float64)
    n = 1024  # the library's float64 chunk for 1,000 columns (8 MiB)
    starts = range(n, (args.rows // n) * n - n, n)  # whole chunks with a row on either side
    codes = y.astype(np.int32)
    weights = np.ones(n)
    buffers = [_kernels.aligned_empty((n, width), np.float64) for _ in range(2)]
    flat = X.reshape(-1)
    lead = (X.ctypes.data % 64) // X.itemsize  # values from the aligned address to X's start

    def kernel(chunk, start):
        return _kernels.suff_stats((Bernoulli,), (None,), k, (chunk,), codes[start:start + n],
                                   weights)

    def stream(chunk_at):
        pending = None
        for i, start in enumerate(starts):
            result = kernel(chunk_at(i, start), start)
            if pending is not None:
                jax.block_until_ready(pending)
            pending = result
        jax.block_until_ready(pending)

    def staged(i, start):
        buffer = buffers[i % 2]
        np.copyto(buffer, X[start:start + n])
        return buffer

    def window(i, start):
        view = flat[start * width - lead:start * width - lead + n * width].reshape(n, width)
        assert view.ctypes.data % 64 == 0
        return view

    def copies():
        for i, start in enumerate(starts):
            staged(i, start)

    hot = np.zeros((args.rows, k))
    hot[np.arange(args.rows), y] = 1.0
    check = jax.jit(_kernels._not_binary)

    def checked_products(products=True):
        pending, sums = None, np.zeros((k, width))
        for i, start in enumerate(starts):
            flag = check(window(i, start))
            if products:
                sums += hot[start:start + n].T @ X[start:start + n]
            if pending is not None:
                jax.block_until_ready(pending)
            pending = flag
        jax.block_until_ready(pending)
        return sums
    reference = BernoulliNB(alpha=1.0, binarize=None)
    ours = bnb.NaiveBayes(bnb.Bernoulli(), method="mean", class_alpha=0)
    cases = [
        ("scikit-learn BernoulliNB(alpha=1.0, binarize=None).fit", lambda: reference.fit(X, y)),
        ("ours as shipped: NaiveBayes(Bernoulli()).fit", lambda: ours.fit(X, y)),
        ("statistics kernel on staged chunks (copy + kernel)", lambda: stream(staged)),
        ("statistics kernel on aligned windows of X (no copy; timing only)",
         lambda: stream(window)),
        ("the staging copies alone", copies),
        ("NumPy Y.T @ X alone (OpenBLAS)", lambda: hot.T @ X),
        ("value check on aligned windows + NumPy per-chunk Y.T @ X in place",
         checked_products),
        ("value check on aligned windows alone", lambda: checked_products(False)),
    ]
    print(f"# float64 Bernoulli fit, {args.rows:,} x {width:,}, {k} classes, chunks of {n} "
          f"rows; X starts {X.ctypes.data % 64} bytes past a 64-byte boundary; medians of "
          f"{args.repeats}")
    times = {}
    for name, call in cases:
        times[name] = median_time(call, args.repeats)
    base = times[cases[0][0]]
    for name, _ in cases:
        print(f"{times[name] * 1e3:9.0f} ms  {times[name] / base:5.2f}x  {name}")
    counts = np.asarray(ours.fitted_.blocks[0].stats.ones)
    diff = float(np.max(np.abs(counts - reference.feature_count_)))
    print(f"class counts: max |ours - scikit-learn feature_count_| = {diff:.1e}")


if __name__ == "__main__":
    main()
