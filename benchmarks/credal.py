"""Time ``credal_predict`` and ``prior_sensitivity`` (the naive credal classifier,
``bayesnb.credal``) against ``predict_proba(method="bayes")`` on the same rows.

Every timing comes with an exactness check: the credal sets must equal a float64 NumPy
reference written from the formula (class counts and per-column value counts taken with
``np.add.at`` from the training codes, a dominates b iff n_a prod_j n_aj(x_j) / (n_aj + s) >
(n_b + s) prod_j (n_bj(x_j) + s) / (n_bj + s), in logs); a row that differs is printed as a
disagreement.

Usage::

    PYTHONPATH=$PWD python benchmarks/credal.py            # 1,000 x 100, 3 levels, 3 classes
    PYTHONPATH=$PWD python benchmarks/credal.py --quick    # 200 x 20 (a smoke run)
    ... --rows N --cols N --levels N --classes N --train N --s S --repeats N
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import bayesnb as bnb


def make_data(rows: int, cols: int, levels: int, classes: int, seed: int):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(levels), size=(classes, cols))  # class x column x level
    y = rng.integers(0, classes, rows)
    u = rng.random((rows, cols, 1))
    X = (u > probs[y].cumsum(axis=2)).sum(axis=2)
    return np.minimum(X, levels - 1), y


def reference_sets(X_train, y_train, X, levels: int, classes: int, s: float) -> np.ndarray:
    """The credal sets from the formula, in float64 NumPy."""
    cols = X_train.shape[1]
    counts = np.zeros((classes, cols, levels))
    np.add.at(counts, (y_train[:, None], np.arange(cols)[None, :], X_train), 1.0)
    n = np.bincount(y_train, minlength=classes).astype(float)
    hits = counts[:, np.arange(cols)[None, :], X]  # (K, rows, F)
    totals = counts.sum(axis=2)[:, None, :]
    with np.errstate(divide="ignore"):
        lower = np.log(n)[:, None] + (np.log(hits) - np.log(totals + s)).sum(axis=2)
    upper = np.log(n + s)[:, None] + (np.log(hits + s) - np.log(totals + s)).sum(axis=2)
    return (upper >= lower.max(axis=0, keepdims=True)).T


def median_seconds(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--cols", type=int, default=100)
    parser.add_argument("--levels", type=int, default=3)
    parser.add_argument("--classes", type=int, default=3)
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--s", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="200 x 20, 3 repeats")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.cols, args.train, args.repeats = 200, 20, 300, 3

    X_train, y_train = make_data(args.train, args.cols, args.levels, args.classes, seed=0)
    X, _ = make_data(args.rows, args.cols, args.levels, args.classes, seed=1)
    levels = [list(range(args.levels))] * args.cols
    clf = bnb.NaiveBayes(bnb.Categorical(categories=levels), method="bayes").fit(X_train, y_train)
    print(f"credal_predict: {args.rows} x {args.cols} Categorical columns, {args.levels} "
          f"levels, {args.classes} classes, trained on {args.train} rows, s = {args.s}; "
          f"medians of {args.repeats} calls after one warm-up")
    cells = {"credal_predict": lambda: clf.credal_predict(X, s=args.s),
             "prior_sensitivity": lambda: clf.prior_sensitivity(X, s=args.s),
             "predict_proba (bayes)": lambda: clf.predict_proba(X)}
    for call in cells.values():
        call()  # warm-up (the bayes predictive's kernels compile here)
    seconds = {name: median_seconds(call, args.repeats) for name, call in cells.items()}
    sets = np.asarray(clf.credal_predict(X, s=args.s))
    expected = reference_sets(X_train, y_train, X, args.levels, args.classes, args.s)
    agree = float((sets == expected).all(axis=1).mean())
    print("| call | seconds | / predict_proba | rows per second |")
    print("| --- | --- | --- | --- |")
    for name, sec in seconds.items():
        print(f"| {name} | {sec:.4f} | {sec / seconds['predict_proba (bayes)']:.2f}x | "
              f"{args.rows / sec:,.0f} |")
    print(f"credal sets equal to the float64 NumPy reference on {agree:.3%} of rows; "
          f"indeterminate rows: {float((sets.sum(axis=1) > 1).mean()):.1%}")
    if agree < 1.0:
        raise SystemExit("disagreement with the reference")
    multinomial_cell(args)


def multinomial_cell(args) -> None:
    """A Multinomial block (word counts, Poisson 0.3 a cell): its greatest predictive is found
    by bisection, so it is timed apart on fewer rows. Its check: every row's set holds the class
    that wins under one prior of the set, Dirichlet(s / V) on the words and (s / K) on the
    classes (``method="bayes"`` under those concentrations)."""
    rows = max(20, args.rows // 5)
    rng = np.random.default_rng(2)
    y_train = rng.integers(0, args.classes, args.train)
    rates = rng.gamma(1.0, 0.3, size=(args.classes, args.cols))
    X_train = rng.poisson(rates[y_train])
    X = rng.poisson(rates[rng.integers(0, args.classes, rows)])
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="bayes").fit(X_train, y_train)
    inside = bnb.NaiveBayes(bnb.Multinomial(alpha=args.s / args.cols), method="bayes",
                            class_alpha=args.s / args.classes).fit(X_train, y_train)
    clf.credal_predict(X[:2], s=args.s)  # warm-up
    sec = median_seconds(lambda: clf.credal_predict(X, s=args.s), max(1, args.repeats // 2))
    sets = np.asarray(clf.credal_predict(X, s=args.s))
    winner = inside.predict_proba(X).argmax(axis=1)
    held = float(sets[np.arange(rows), winner].mean())
    print(f"\nMultinomial block: {rows} x {args.cols} word counts, {args.classes} classes: "
          f"credal_predict {sec:.3f} s ({rows / sec:,.0f} rows per second); the sets hold the "
          f"class of a prior inside the set on {held:.3%} of rows; indeterminate rows: "
          f"{float((sets.sum(axis=1) > 1).mean()):.1%}")
    if held < 1.0:
        raise SystemExit("a set misses the class of a prior inside the set")


if __name__ == "__main__":
    main()
