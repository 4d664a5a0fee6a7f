"""Re-measure a tuned constant of the package: its shipped value against alternatives.

    python benchmarks/tune.py --list                      # the constants, their cells, values
    python benchmarks/tune.py NORMALISE_ROWS              # default alternatives, full shapes
    python benchmarks/tune.py LINEAR_DEEP_ENTRIES --values shipped 0 --runs 5
    python benchmarks/tune.py CHUNK_BYTES --cell bernoulli-predict --x64 --quick
    python benchmarks/tune.py bayesnb.fast._host.PRODUCT_CHUNK_CELLS --cell bernoulli-predict \\
        --values shipped 65536 4194304                    # any module constant, by its path

A cell is one operation of a ``run.py`` (or ``sparse.py``) case on that case's data, next to
its reference (scikit-learn, or the plug-in for the exact predictive), both timed in the same
process; ``gaussian-uncertainty`` is ``predict_uncertainty`` of 80 rows over 1,000 draws, next
to ``predict_proba`` of the same rows. Each value of the constant runs in a fresh subprocess
(kernels read some constants when they are traced, and tables built from others are cached per
fitted model, so a value is only measured cleanly from a cold start): one warm-up call of each
side, then ``--repeats`` alternating calls, medians. The values run in turn, ``--runs`` times,
their order reversed every other round. Printed per value: the medians over the runs of ours,
of the reference and of their ratio, the ratio against the shipped value's, and the argmax
agreement of the predictions with the shipped value's (a value must not change the answers).

A constant earns its place when the shipped value beats every alternative by at least 10% on
some cell (``benchmarks/README.md``, "Tuned constants").
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: name -> (attribute paths patched together, cells, default values). "shipped" is the value
#: in the package, not patched. A name imported into other modules is patched in each.
CONSTANTS = {
    "ACCELERATOR_TAIL_ROWS": (["bayesnb.fast._exact.ACCELERATOR_TAIL_ROWS"], ["poisson-bayes"],
                              ["shipped", "0.0", "0.25", "1.0"]),
    "CHUNK_BYTES": (["bayesnb.fast._kernels.CHUNK_BYTES"],
                    ["multinomial-fit", "multinomial-predict", "bernoulli-fit",
                     "bernoulli-predict"], ["shipped", "4 << 20", "16 << 20"]),
    "ACCELERATOR_BUDGET_SCALE": (["bayesnb.fast._kernels.ACCELERATOR_BUDGET_SCALE"],
                                 ["multinomial-predict", "multinomial-fit"],
                                 ["shipped", "1", "8", "128"]),
    "DOT_CLASSES": (["bayesnb.fast._kernels.Labels.DOT_CLASSES"],
                    ["multinomial-fit", "bernoulli-fit", "gaussian-fit"], ["shipped", "0"]),
    "COARSE_ROUNDING": (["bayesnb.fast._float32.COARSE_ROUNDING",
                         "bayesnb.fast.gaussian.COARSE_ROUNDING",
                         "bayesnb.fast.multinomial.COARSE_ROUNDING"],
                        ["multinomial-predict", "gaussian-predict"], ["shipped", "0.0"]),
    "SUM_ROUNDING": (["bayesnb.fast._float32.SUM_ROUNDING"],
                     ["multinomial-predict", "gaussian-predict"], ["shipped", "0.25", "1.0"]),
    "NORMALISE_ROWS": (["bayesnb.scoring.NORMALISE_ROWS"],
                       ["poisson-bayes", "multinomial-predict"], ["shipped", "1024", "16384"]),
    "_BLOCK": (["bayesnb.fast._sparse._BLOCK"], ["csr-fit", "csr-predict"],
               ["shipped", "1 << 14", "1 << 18"]),
    "_BLOCK_ELEMENTS": (["bayesnb.fast._sparse._BLOCK_ELEMENTS"],
                        ["csr-bayes", "poisson-bayes"], ["shipped", "1 << 14", "1 << 22"]),
    "_TERMWISE_MAX": (["bayesnb.fast._sparse._TERMWISE_MAX"],
                      ["csr-bayes", "poisson-bayes"], ["shipped", "0", "16", "256"]),
    "CUMULATIVE_COUNTS": (["bayesnb.fast._sparse.CUMULATIVE_COUNTS"],
                          ["poisson-bayes", "csr-bayes"], ["shipped", "16", "128"]),
    "CUMULATIVE_ENTRIES": (["bayesnb.fast._sparse.CUMULATIVE_ENTRIES"],
                           ["poisson-bayes"], ["shipped", "1 << 20", "1 << 24"]),
    "LINEAR_ENTRIES": (["bayesnb.fast._sparse.LINEAR_ENTRIES"], ["csr-bayes"],
                       ["shipped", "1 << 22", "1 << 24", "1 << 25"]),
    "LINEAR_DEEP_ENTRIES": (["bayesnb.fast._sparse.LINEAR_DEEP_ENTRIES"], ["csr-bayes"],
                            ["shipped", "0", "1 << 21"]),
    "_ROWS_BLOCK": (["bayesnb.fast._sparse._ROWS_BLOCK"], ["csr-bayes"],
                    ["shipped", "1 << 15", "1 << 19"]),
    "CLASS_COLUMN_ELEMENTS": (["bayesnb.fast._kernels.CLASS_COLUMN_ELEMENTS"],
                              ["gaussian-bayes", "multinomial-bayes"],
                              ["shipped", "1 << 21", "1 << 25"]),
    "RELATIVE_COLUMNS": (["bayesnb.fast.gaussian.RELATIVE_COLUMNS"], ["gaussian-bayes"],
                         ["shipped", "0"]),
    "HOST_PRODUCT_CELLS": (["bayesnb.fast._host.HOST_PRODUCT_CELLS"],
                           ["multinomial-predict", "bernoulli-fit", "bernoulli-predict",
                            "multinomial-bayes", "poisson-bayes"],
                           ["shipped", "-1", "1 << 20", "1 << 24"]),
    "TOTALS_ENTRIES": (["bayesnb.fast._sparse.TOTALS_ENTRIES"],
                       ["multinomial-bayes", "csr-bayes"], ["shipped", "0"]),
    "PRODUCT_CHUNK_CELLS": (["bayesnb.fast._host.PRODUCT_CHUNK_CELLS"],
                            ["multinomial-predict", "bernoulli-predict"],
                            ["shipped", "1 << 16", "1 << 22"]),
    "CHUNK_ENTRIES": (["bayesnb.fast._host.CHUNK_ENTRIES"],
                      ["categorical-fit", "categorical-predict"],
                      ["shipped", "1 << 18", "1 << 22"]),
    "HOST_DRAW_ENTRIES": (["bayesnb._draws_host.HOST_DRAW_ENTRIES"],
                          ["gaussian-uncertainty"], ["shipped", "-1"]),
    "FRAME_COLUMN_CELLS": (["bayesnb._blocks.FRAME_COLUMN_CELLS"],
                           ["textframe-fit", "textframe-predict"], ["shipped", "0", "1 << 13"]),
    "CHECK_BLOCK_ENTRIES": (["bayesnb.families._base.CHECK_BLOCK_ENTRIES"],
                            ["bernoulli-predict", "bernoulli-fit"],
                            ["shipped", "1 << 40", "1 << 14", "1 << 18"]),
}

#: cell -> (data, operation, reference). The data of a ``run.py`` case (``bayes``: that case's
#: shapes) or ``sparse.py``'s CSR
CELLS = {
    **{f"{fam}-{op}": (fam, op, "sklearn")
       for fam in ("multinomial", "bernoulli", "gaussian", "categorical")
       for op in ("fit", "predict")},
    **{f"{fam}-bayes": (fam, "bayes", "mean") for fam in ("multinomial", "poisson", "gaussian")},
    "csr-bayes": ("csr", "bayes", "mean"),
    "csr-fit": ("csr", "fit", "sklearn"),
    "csr-predict": ("csr", "predict", "sklearn"),
    "gaussian-uncertainty": ("gaussian", "uncertainty", "predict_proba"),
    "textframe-fit": ("textframe", "fit", "sklearn"),
    "textframe-predict": ("textframe", "predict", "sklearn"),
}
#: the uncertainty cell: a fit of ``UNCERTAINTY_FIT`` rows (3 classes, 4 Gaussian columns) and
#: ``predict_uncertainty`` of its first ``UNCERTAINTY_ROWS`` over ``UNCERTAINTY_DRAWS`` exact
#: draws, against its plug-in ``predict_proba`` of the same rows
UNCERTAINTY_FIT, UNCERTAINTY_ROWS, UNCERTAINTY_DRAWS = 500, 80, 1000
#: ``sparse.py``'s shapes: rows, columns, stored values per row
CSR_FULL, CSR_QUICK = (100_000, 50_000, 100), (2_000, 5_000, 30)
#: the text-frame cells: a DataFrame of pandas text columns (3 levels, 2 classes), rows x
#: columns, against scikit-learn's route for text, OrdinalEncoder then CategoricalNB
TEXT_FULL, TEXT_QUICK = (300, 8_000), (300, 2_000)


# ------------------------------------------------------------------------------ the child
def load(data: str, op: str, quick: bool, dtype: str):
    """``(X, y, ours, reference)``: a cell's data and unfitted estimators (for the exact
    predictive, ``ours`` under ``method="bayes"`` and no reference: the plug-in is its copy)."""
    import numpy as np

    import bayesnb as bnb

    if data == "csr":  # float64 CSR in both policies, as sparse.py
        from sklearn.naive_bayes import MultinomialNB
        from sparse import make_counts

        X, y = make_counts(*(CSR_QUICK if quick else CSR_FULL))
        method = "bayes" if op == "bayes" else "mean"
        return (X, y, bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method=method, class_alpha=0),
                MultinomialNB(alpha=1.0))
    if data == "textframe":
        import pandas as pd
        from sklearn.naive_bayes import CategoricalNB
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OrdinalEncoder

        rng = np.random.default_rng(0)
        n, f = TEXT_QUICK if quick else TEXT_FULL
        words = np.array(["a", "b", "c"], dtype=object)
        X = pd.DataFrame(words[rng.integers(0, 3, (n, f))],
                         columns=[f"c{j}" for j in range(f)]).astype("string")
        return (X, rng.integers(0, 2, n), bnb.NaiveBayes(bnb.Categorical(alpha=1.0), class_alpha=0),
                make_pipeline(OrdinalEncoder(), CategoricalNB(alpha=1.0)))
    if op == "uncertainty":
        rng = np.random.default_rng(0)
        y = np.arange(UNCERTAINTY_FIT) % 3
        X = rng.normal(y[:, None], 1.0, size=(UNCERTAINTY_FIT, 4)).astype(dtype)
        return X, y, bnb.NaiveBayes(bnb.Gaussian(), method="bayes"), None
    if op == "bayes":
        from cases import bayes

        n, f, k, _ = (bayes.QUICK if quick else bayes.FULL)[data]
        make, family, _ = bayes._families()[data]
        X, y = make(n, f, k)
        X = X.astype(np.float64 if dtype == "float64" else np.float32)
        return X, y, bnb.NaiveBayes(family(), method="bayes", class_alpha=0), None
    case = importlib.import_module(f"cases.{data}")
    X, y = getattr(case, f"make_{data}")(*(case.QUICK if quick else case.FULL))
    return case.as_dtype(X, dtype), y, case.ours(), case.reference()


def patch(paths: list[str], value) -> object:
    """Set every attribute path to ``value``; returns the shipped value (of the first)."""
    shipped = None
    for i, path in enumerate(paths):
        parts = path.split(".")
        for cut in range(len(parts) - 1, 0, -1):  # the longest importable module prefix
            try:
                owner = importlib.import_module(".".join(parts[:cut]))
                break
            except ModuleNotFoundError:
                continue
        for attr in parts[cut:-1]:
            owner = getattr(owner, attr)
        if not hasattr(owner, parts[-1]):
            raise SystemExit(f"{path} does not exist: the constant moved or was removed; "
                             "update CONSTANTS in benchmarks/tune.py")
        if i == 0:
            shipped = getattr(owner, parts[-1])
        if value is not SHIPPED:
            setattr(owner, parts[-1], value)
    return shipped


SHIPPED = object()


def evaluate(text: str):
    """A value given on the command line: a Python literal or arithmetic (``4 << 20``,
    ``2**62``, ``None``); no names."""
    code = compile(text, "<value>", "eval")
    if code.co_names:
        raise SystemExit(f"value {text!r}: only literals and arithmetic")
    return eval(code, {"__builtins__": {}})


def child(spec: dict) -> dict:
    """One value on one cell: medians of ours and the reference, and our predictions."""
    import copy

    import numpy as np
    from harness import policy

    value = SHIPPED if spec["value"] == "shipped" else evaluate(spec["value"])
    shipped = patch(spec["paths"], value)
    data, op, ref_side = CELLS[spec["cell"]]
    X, y, ours_est, ref_est = load(data, op, spec["quick"], spec["dtype"])
    # the rows whose labels are compared; under --quick every row, as the predict cells score
    # them and as ``run.py --quick`` does (a kernel shape compiled already)
    rows = X if spec["quick"] else X[:2_000]
    with policy(spec["dtype"]):
        if op == "bayes":  # exact / plug-in on the same fitted statistics
            ours_est.fit(X, y)
            ref_est = copy.deepcopy(ours_est).set_params(method=ref_side)
            ours_call, ref_call = (lambda: ours_est.predict_proba(X)), (
                lambda: ref_est.predict_proba(X))
        elif op == "uncertainty":  # later calls in one process, on fixed draws
            ours_est.fit(X, y)
            draws = ours_est.sample_posterior(UNCERTAINTY_DRAWS, seed=0)
            rows = X[:UNCERTAINTY_ROWS]
            ours_call, ref_call = (
                lambda: ours_est.predict_uncertainty(rows, draws=draws)), (
                lambda: ours_est.predict_proba(rows))
            answer = lambda: ours_call()["proba"]  # noqa: E731 - the call's own answer
        elif op == "fit":
            ours_call, ref_call = (lambda: ours_est.fit(X, y)), (lambda: ref_est.fit(X, y))
        else:
            ours_est.fit(X, y)
            ref_est.fit(X, y)
            ours_call, ref_call = (lambda: ours_est.predict_proba(X)), (
                lambda: ref_est.predict_proba(X))
        ours_call(), ref_call()  # warm-up: compiles, builds the cached tables
        times = {"ours": [], "ref": []}
        for i in range(spec["repeats"]):
            pair = [("ours", ours_call), ("ref", ref_call)]
            for side, call in (pair if i % 2 == 0 else pair[::-1]):
                start = time.perf_counter()
                call()
                times[side].append(time.perf_counter() - start)
        if op != "uncertainty":
            answer = lambda: ours_est.predict_proba(rows)  # noqa: E731
        labels = np.asarray(answer()).argmax(axis=1)
    return {"ours": statistics.median(times["ours"]), "ref": statistics.median(times["ref"]),
            "labels": labels.tolist(), "shipped": repr(shipped)}


# ----------------------------------------------------------------------------- the parent
def measure(paths, cell, values, args) -> None:
    results: dict = {v: [] for v in values}
    for r in range(args.runs):
        for value in (values if r % 2 == 0 else values[::-1]):
            spec = {"paths": paths, "cell": cell, "value": value, "quick": args.quick,
                    "dtype": "float64" if args.x64 else "float32", "repeats": args.repeats}
            out = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)],
                                 capture_output=True, text=True, check=False)
            if out.returncode != 0:
                raise SystemExit(f"{cell}, value {value}: the child failed\n{out.stderr[-3000:]}")
            results[value].append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"  run {r + 1}/{args.runs}, {value}: ours {1e3 * results[value][-1]['ours']:.1f}"
                  f" ms", file=sys.stderr, flush=True)
    shipped = results[values[0]][0]
    ref_name = CELLS[cell][2]
    print(f"\n{cell} ({'float64' if args.x64 else 'float32'}"
          f"{', quick' if args.quick else ''}): {paths[0]}, shipped = {shipped['shipped']}; "
          f"medians over {args.runs} runs of {args.repeats} alternating calls")
    print(f"| value | ours | {ref_name} | ours / {ref_name} | / shipped's ratio | argmax agree "
          f"with shipped |\n|---|---|---|---|---|---|")
    base = statistics.median(x["ours"] / x["ref"] for x in results[values[0]])
    for value in values:
        rs = results[value]
        ratio = statistics.median(x["ours"] / x["ref"] for x in rs)
        agree = sum(a == b for a, b in zip(rs[0]["labels"], shipped["labels"], strict=True)) / max(
            len(shipped["labels"]), 1)
        print(f"| {value} | {1e3 * statistics.median(x['ours'] for x in rs):,.1f} ms | "
              f"{1e3 * statistics.median(x['ref'] for x in rs):,.1f} ms | {ratio:.3f}x | "
              f"{ratio / base:.3f} | {100 * agree:.3f}% |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("constant", nargs="?", help="a name from --list, or a module attribute path")
    p.add_argument("--list", action="store_true", help="the constants, cells and values")
    p.add_argument("--cell", action="append", choices=sorted(CELLS), metavar="CELL",
                   help=f"measure this cell (repeatable; default: the constant's): "
                        f"{', '.join(sorted(CELLS))}")
    p.add_argument("--values", nargs="+", help="values as Python literals; 'shipped' first "
                   "(added if missing)")
    p.add_argument("--runs", type=int, default=3, help="subprocesses per value (default 3)")
    p.add_argument("--repeats", type=int, default=5, help="timed calls per side and run")
    p.add_argument("--x64", action="store_true", help="float64 policy (default float32)")
    p.add_argument("--quick", action="store_true", help="the cases' --quick shapes (smoke run)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    if args.list or not args.constant:
        for name, (paths, cells, values) in CONSTANTS.items():
            print(f"{name}: {', '.join(paths)}\n    cells {', '.join(cells)}; "
                  f"values {', '.join(values)}")
        return 0
    if args.constant in CONSTANTS:
        paths, cells, values = CONSTANTS[args.constant]
    elif "." in args.constant and args.cell:
        paths, cells, values = [args.constant], args.cell, ["shipped"]
    else:
        p.error(f"{args.constant!r}: not in --list; give a module attribute path and --cell")
    cells = args.cell or cells
    values = args.values or values
    values = values if values[0] == "shipped" else ["shipped", *values]
    for cell in cells:
        measure(paths, cell, values, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
