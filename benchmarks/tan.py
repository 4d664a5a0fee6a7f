"""Tree-augmented naive Bayes averaged over all spanning trees (``bnb.TreeAugmentedNB``):

    python benchmarks/tan.py            # 50 columns x 10,000 rows (fit), 10,000 rows predicted
    python benchmarks/tan.py --quick    # 20 columns x 2,000 rows (a smoke run)

Times ``tree="average"``'s fit and ``predict_proba`` (the sum over all F^(F-2) trees per row and
class), the posterior edge probabilities, ``tree="map"`` and a Categorical ``NaiveBayes`` on the
same data (median of ``--repeats``, wall clock). Exactness: the averaged predictive of the first
``--check`` rows is recomputed by the log-space elimination of every row's weight matrix
(``bayesnb._spanning_trees.log_tree_sum``, the slow path the fast one replaces), and the largest
probability difference is printed ("met" below 1e-9). The data are binary and 3-level columns
along a random tree, with the class on every column, so the Bayes factors run into the
hundreds: beyond ``exp``'s range, the case the log-space matrix-tree code is for.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import bayesnb as bnb
from bayesnb._spanning_trees import log_tree_sum
from bayesnb.tan import edge_ratios, encode_rows


def make_data(n: int, f: int, seed: int):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    parent = [None] + [int(rng.integers(0, i)) for i in range(1, f)]
    X = np.empty((n, f), dtype=np.int64)
    X[:, 0] = np.where(rng.random(n) < 0.7, y, 1 - y)
    for i in range(1, f):
        levels = 2 + i % 2
        copy = rng.random(n) < 0.8
        X[:, i] = np.where(copy, (X[:, parent[i]] + y * (rng.random(n) < 0.2)) % levels,
                           rng.integers(0, levels, n))
    return X, y


def timed(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--cols", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--check", type=int, default=200)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.cols, args.repeats, args.check = 2_000, 20, 1, 50
    X, y = make_data(args.rows, args.cols, seed=0)
    X_new, _ = make_data(args.rows, args.cols, seed=1)
    print(f"data: {args.rows} rows x {args.cols} columns (2 and 3 levels, along a random tree), "
          f"2 classes; {len(X_new)} rows predicted; median of {args.repeats}")

    t_fit, tan = timed(lambda: bnb.TreeAugmentedNB().fit(X, y), args.repeats)
    t_pred, proba = timed(lambda: tan.predict_proba(X_new), args.repeats)
    t_edges, _ = timed(lambda: tan.__dict__.pop("_edge_cache", None) or tan.edge_probability_,
                       args.repeats)
    best = bnb.TreeAugmentedNB(tree="map")
    t_map_fit, _ = timed(lambda: best.fit(X, y), args.repeats)
    t_map_pred, _ = timed(lambda: best.predict_proba(X_new), args.repeats)
    naive = bnb.NaiveBayes(bnb.Categorical(), method="bayes")
    t_nb_fit, _ = timed(lambda: naive.fit(X, y), args.repeats)
    t_nb_pred, _ = timed(lambda: naive.predict_proba(X_new), args.repeats)
    w = tan.edge_log_bayes_factor_.to_numpy()
    print(f"log Bayes factors of the pairs: {w.min():.1f} to {w.max():.1f}")

    print("\n| model | fit s | predict_proba s |")
    print("| --- | --- | --- |")
    print(f"| TAN averaged over all trees | {t_fit:.2f} | {t_pred:.2f} |")
    print(f"| TAN, most probable tree | {t_map_fit:.2f} | {t_map_pred:.2f} |")
    print(f"| NaiveBayes(Categorical(), method='bayes') | {t_nb_fit:.2f} | {t_nb_pred:.2f} |")
    print(f"edge_probability_ (all {args.cols * (args.cols - 1) // 2} edges): {t_edges:.2f} s")

    # the reference: each row's sum over trees by the log-space elimination of W o R_x
    post, k = tan.posterior_, len(tan.classes_)
    codes = encode_rows(X_new[:args.check], tan.columns_, tan.named_, tan.levels_)
    base = sum(post.log_q[i][:, codes[:, i]].T for i in range(args.cols))
    ratios = np.moveaxis(edge_ratios(post, codes), (0, 1), (2, 3))  # (K, n, F, F)
    joint = (base + log_tree_sum(post.log_weights + ratios).T - post.log_z
             + np.log((tan.class_count_ + 1.0) / (tan.class_count_.sum() + k)))
    reference = np.exp(joint - np.logaddexp.reduce(joint, axis=1, keepdims=True))
    gap = float(np.abs(reference - proba[:args.check]).max())
    print(f"largest |p - p_reference| over {args.check} rows: {gap:.1e} "
          f"({'met' if gap < 1e-9 else 'missed'})")


if __name__ == "__main__":
    main()
