"""Sparse text-like counts: bayesnb on CSR vs scikit-learn, equality with dense, peak memory.

    python benchmarks/sparse.py                 # 20,000 x 50,000, ~100 non-zeros per row
    python benchmarks/sparse.py --rows 100000   # issue 6's 100,000 x 50,000 shape
    python benchmarks/sparse.py --quick

One process builds the CSR matrix, then fits and predicts with bayesnb (Multinomial, Bernoulli
on X > 0) and with scikit-learn's MultinomialNB / BernoulliNB on the same matrix, reporting
median times and their ratio. Equality with the dense path is checked on row chunks (a dense
20,000 x 50,000 float64 matrix would take 8 GB): the dense fit is a partial_fit over dense
chunks, and dense predictions of each chunk are compared with the sparse ones. Peak memory of
the sparse fit + predict is measured in a fresh subprocess next to the size of the
CSR matrix, one parameter table and the dense equivalent (tracemalloc's peak of the
allocations made during fit + predict_proba).
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
from scipy import sparse


def make_counts(rows, cols, nnz_per_row, classes=20, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, rows)
    # each class prefers its own slice of the vocabulary; Zipf-like word frequencies
    base = 1.0 / np.arange(1, cols + 1) ** 1.1
    indptr = np.arange(rows + 1) * nnz_per_row
    indices = np.empty(rows * nnz_per_row, dtype=np.int32)
    for k in range(classes):
        members = np.flatnonzero(y == k)
        p = base.copy()
        p[k * (cols // classes):(k + 1) * (cols // classes)] *= 20
        p /= p.sum()
        draws = rng.choice(cols, size=(len(members), nnz_per_row), p=p)
        for i, r in enumerate(members):
            indices[indptr[r]:indptr[r + 1]] = draws[i]
    data = rng.integers(1, 4, rows * nnz_per_row).astype(np.float64)
    X = sparse.csr_matrix((data, indices, indptr), shape=(rows, cols))
    X.sum_duplicates()
    return X, y


def timed(fn, repeats):
    fn()  # warm-up (compile, caches)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_memory_child(rows, cols, nnz):
    import tracemalloc

    import bayesnb as bnb

    X, y = make_counts(rows, cols, nnz)
    clf = bnb.NaiveBayes(bnb.Multinomial())
    clf.fit(X[:100], y[:100])  # compile and import everything first
    tracemalloc.start()
    clf.fit(X, y)
    clf.predict_proba(X)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    x_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    print(json.dumps({"peak_alloc_mb": peak / 2**20, "x_mb": x_bytes / 2**20,
                      "tables_mb": 20 * cols * 8 / 2**20,
                      "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--cols", type=int, default=50_000)
    parser.add_argument("--nnz", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.cols, args.nnz, args.repeats = 2000, 5000, 30, 1
    if args.child:
        return peak_memory_child(args.rows, args.cols, args.nnz)

    import jax
    from sklearn.naive_bayes import BernoulliNB, MultinomialNB

    import bayesnb as bnb

    X, y = make_counts(args.rows, args.cols, args.nnz)
    Xb = X.copy()
    Xb.data[:] = 1.0
    print(f"X: {X.shape[0]:,} x {X.shape[1]:,} CSR, {X.nnz:,} non-zeros "
          f"({(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20:.0f} MiB; "
          f"dense float64 would be {X.shape[0] * X.shape[1] * 8 / 2**30:.1f} GiB)")
    rows = []
    cases = [("Multinomial", bnb.Multinomial(), MultinomialNB(alpha=1.0), X),
             ("Bernoulli", bnb.Bernoulli(), BernoulliNB(alpha=1.0, binarize=None), Xb)]
    for name, family, sk, data in cases:
        ours = bnb.NaiveBayes(family, class_alpha=0)
        fit_ours = timed(lambda ours=ours, data=data: ours.fit(data, y), args.repeats)
        fit_sk = timed(lambda sk=sk, data=data: sk.fit(data, y), args.repeats)
        pred_ours = timed(lambda ours=ours, data=data: ours.predict_proba(data), args.repeats)
        pred_sk = timed(lambda sk=sk, data=data: sk.predict_proba(data), args.repeats)
        agree = float(np.mean(ours.predict(data) == sk.predict(data)))
        rows.append((name, "fit", fit_ours, fit_sk))
        rows.append((name, "predict_proba", pred_ours, pred_sk))
        print(f"{name}: labels agree with scikit-learn on {agree:.4%} of rows")

    print(f"\n{'case':<12} {'op':<14} {'bayesnb s':>10} {'sklearn s':>10} {'ratio':>7} "
          f"{'target':>7}")
    for name, op, a, b in rows:
        print(f"{name:<12} {op:<14} {a:>10.3f} {b:>10.3f} {a / b:>7.2f} {'<= 1.0':>7} "
              f"{'met' if a / b <= 1.0 else 'MISSED'}")

    # equality with the dense path, in row chunks (x64 so both paths are float64)
    with jax.enable_x64(True):
        sparse_fit = bnb.NaiveBayes(bnb.Multinomial(), method="bayes").fit(X, y)
        dense_fit = bnb.NaiveBayes(bnb.Multinomial(), method="bayes")
        chunk = 500 if args.cols > 10_000 else 2000
        for start in range(0, X.shape[0], chunk):
            dense_fit.partial_fit(X[start:start + chunk].toarray(), y[start:start + chunk],
                                  classes=np.arange(20))
        stats_diff = float(np.max(np.abs(np.asarray(sparse_fit.blocks_[0].stats.counts)
                                         - np.asarray(dense_fit.blocks_[0].stats.counts))))
        check = X[:200]
        proba_diff = float(np.max(np.abs(sparse_fit.predict_proba(check)
                                         - dense_fit.predict_proba(check.toarray()))))
        ev_diff = abs(sparse_fit.log_evidence() - dense_fit.log_evidence())
    print(f"\nsparse vs dense (float64, method='bayes'): max |count difference| {stats_diff:.2e}, "
          f"max |probability difference| on 200 rows {proba_diff:.2e}, "
          f"|log evidence difference| {ev_diff:.2e}")

    out = subprocess.run([sys.executable, __file__, "--child", "--rows", str(args.rows),
                          "--cols", str(args.cols), "--nnz", str(args.nnz)],
                         capture_output=True, text=True, check=True)
    mem = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"peak memory allocated during fit + predict_proba (tracemalloc, fresh process): "
          f"{mem['peak_alloc_mb']:.0f} MiB, next to X {mem['x_mb']:.0f} MiB and one "
          f"20 x {args.cols:,} float64 table {mem['tables_mb']:.0f} MiB (the dense X would "
          f"be {X.shape[0] * X.shape[1] * 8 / 2**20:,.0f} MiB)")


if __name__ == "__main__":
    main()
