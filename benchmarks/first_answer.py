"""Time to a first answer, each figure from fresh processes (the median of ``--runs``):

    python benchmarks/first_answer.py            # 5 runs of each; 30 models of 2..31 classes
    python benchmarks/first_answer.py --quick    # 1 run, 4 models (a smoke run)

(a) ``import bayesnb`` against ``import sklearn.naive_bayes`` and ``import jax``.
(b) import + first Gaussian fit + first ``predict_proba`` on a 150 x 4, 3-class table: bayesnb
    with its compiled-kernel cache warm (filled by an untimed run first; under ``--quick``
    with one run, by the cold run), cold (a new, empty folder each run) and off
    (``BAYESNB_COMPILATION_CACHE=0``), against scikit-learn's ``GaussianNB`` doing the same;
    the cases take turns, one run each, so the machine's slow spells fall on all of them.
(c) 30 models with 2..31 classes fitted (+ ``predict_proba``) in one process: the wall time of
    the fits (mostly compilation) and the growth of resident memory, with the cache off, cold
    and warm (one process each).
(d), (e) small tables of 12 column counts (300 rows, 5..16 columns, 3 classes) in one
    process, cache off: Multinomial (counts) and Gaussian fit + ``predict_proba`` of each,
    against scikit-learn's ``MultinomialNB`` and ``GaussianNB``.
(f) a first fit and the first analysis calls after it, timed one after another in a fresh
    process: ``log_evidence``, ``predict_joint_log_proba``, ``explain`` of a row, exact ``loo``,
    ``simulate`` of 20 rows and ``predict_uncertainty`` of 10 (1,000 draws), on small tables
    (one with missing counts), with the cache off and warm.

``--small-fit-cells N``, ``--host-maths-entries N``, ``--loo-host-row-blocks N`` and
``--host-draw-entries N`` set ``bayesnb.fast._host``'s ``SMALL_FIT_CELLS`` and
``HOST_MATHS_ENTRIES``, ``bayesnb.loo``'s ``HOST_ROW_BLOCKS`` and ``bayesnb._draws_host``'s
``HOST_DRAW_ENTRIES`` in every bayesnb child (``-1``: the kernels fit, score, leave out and
average over draws for every table), to measure those constants again.

Seconds are wall clock inside the child (``perf_counter`` around the statements) and, for (a),
of the whole process as well (interpreter start included). The children run with no JAX cache
configured from outside; each cache folder is a temporary one, deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

IMPORTS = ("jax", "sklearn.naive_bayes", "bayesnb")

#: the child of (b): prints import, fit, predict_proba and total seconds
FIRST = """
import time
t0 = time.perf_counter()
{imports}
t1 = time.perf_counter()
{setup}
import numpy as np
rng = np.random.default_rng(0)
y = np.repeat(np.arange(3), 50)
X = rng.normal(y[:, None] * [1.0, 0.5, 2.0, -1.0], 1.0)
clf = {estimator}.fit(X, y)
t2 = time.perf_counter()
p = clf.predict_proba(X)
t3 = time.perf_counter()
assert p.shape == (150, 3) and abs(p.sum() - 150) < 1e-3
print(t1 - t0, t2 - t1, t3 - t2, t3 - t0)
"""
#: what every bayesnb child runs after ``import bayesnb as bnb`` (:func:`main` sets it)
SETUP: list[str] = []


def ours_first() -> str:
    return FIRST.format(imports="import bayesnb as bnb", setup="\n".join(SETUP),
                        estimator="bnb.NaiveBayes(features=bnb.Gaussian(), method='ml')")


THEIRS = FIRST.format(imports="from sklearn.naive_bayes import GaussianNB", setup="",
                      estimator="GaussianNB()")

#: the child of (c): prints total fit seconds and RSS growth in MB
MANY = """
import time
import numpy as np
import bayesnb as bnb
{setup}

def rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")

bnb.NaiveBayes  # the estimator's modules loaded before memory is counted
rng = np.random.default_rng(0)
start, seconds = rss_mb(), 0.0
for k in range({first}, {last} + 1):
    y = np.arange(300) % k
    X = rng.normal(y[:, None] * [1.0, -0.5, 2.0], 1.0)
    t0 = time.perf_counter()
    bnb.NaiveBayes(features=bnb.Gaussian(), method="mean").fit(X, y).predict_proba(X[:50])
    seconds += time.perf_counter() - t0
print(seconds, rss_mb() - start)
"""


#: the child of (d) and (e): prints the seconds of all fits + predict_proba
COLUMNS = """
import time
import numpy as np
{setup}
rng = np.random.default_rng(0)
y = np.arange(300) % 3
X = {data}
seconds = 0.0
for width in range(5, 17):
    t0 = time.perf_counter()
    p = {estimator}.fit(X[:, :width], y).predict_proba(X[:, :width])
    seconds += time.perf_counter() - t0
    assert p.shape == (300, 3)
print(seconds)
"""


#: the child of (f): prints the seconds of the first fit and of each first analysis call after it
ANALYSIS = """
import time
import numpy as np
import bayesnb as bnb
{setup}
{data}
clf = bnb.NaiveBayes({features})
row = X.iloc[0] if hasattr(X, "iloc") else X[0]
seconds = []
for call in (lambda: clf.fit(X, y), clf.log_evidence, lambda: clf.predict_joint_log_proba(X),
             lambda: clf.explain(row), lambda: clf.loo(X, y), lambda: clf.simulate(20),
             lambda: clf.predict_uncertainty(X[:10])):
    t0 = time.perf_counter()
    call()
    seconds.append(time.perf_counter() - t0)
print(*seconds)
"""

#: (f): table, its data, the estimator's features
ANALYSIS_TABLES = {
    "Gaussian, 500 x 4": ("rng = np.random.default_rng(0); y = np.arange(500) % 3\n"
                          "X = rng.normal(y[:, None], 1.0, size=(500, 4))", "bnb.Gaussian()"),
    "Multinomial, 500 x 20": ("rng = np.random.default_rng(0); y = np.arange(500) % 3\n"
                              "X = rng.poisson(1.0 + y[:, None], size=(500, 20)).astype(float)",
                              "bnb.Multinomial()"),
    "Titanic, 2,201 x 3 (categorical)": ("from bayesnb.datasets import load_titanic\n"
                                         "X, y = load_titanic()", ""),
    "Poisson, 500 x 8, 5% missing": ("rng = np.random.default_rng(0); y = np.arange(500) % 3\n"
                                     "X = rng.poisson(1.0 + y[:, None], (500, 8)) * 1.0\n"
                                     "X[rng.random(X.shape) < 0.05] = np.nan", "bnb.Poisson()"),
}


def child_env(cache: str | None) -> dict:
    """This checkout on the path, no JAX cache from outside, bayesnb's cache in ``cache``
    (``"0"``: off; ``None``: the variable unset)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE", "BAYESNB_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    if cache is not None:
        env["BAYESNB_COMPILATION_CACHE"] = cache
    return env


def run(code: str, cache: str | None) -> tuple[list[float], float]:
    """The numbers ``code`` prints, and the process's wall clock."""
    import time

    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=child_env(cache), timeout=900, check=False)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"child failed:\n{out.stderr[-3000:]}")
    return [float(v) for v in out.stdout.split()], wall


def median_of(runs: list[list[float]]) -> list[float]:
    return [statistics.median(column) for column in zip(*runs, strict=True)]


def imports(n_runs: int, scratch: Path) -> None:
    print("\n(a) import, fresh process (seconds; median of", n_runs, "runs)\n")
    print("| module | import | process wall | ratio to jax |")
    print("| --- | --- | --- | --- |")
    rows = {}
    for module in IMPORTS:
        code = f"import time; t0 = time.perf_counter(); import {module}; " \
               "print(time.perf_counter() - t0)"
        results = [run(code, str(scratch / "imports")) for _ in range(n_runs)]
        rows[module] = (statistics.median(r[0][0] for r in results),
                        statistics.median(r[1] for r in results))
    for module, (inside, wall) in rows.items():
        print(f"| `import {module}` | {inside:.2f} | {wall:.2f} | "
              f"{inside / rows['jax'][0]:.2f}x |")


def first_answer(n_runs: int, scratch: Path, quick: bool = False) -> None:
    print("\n(b) import + first Gaussian fit + first predict_proba, 150 x 4, fresh process "
          f"(seconds; median of {n_runs} runs)\n")
    warm = scratch / "warm"
    cases = {"bayesnb, cache warm": lambda i: str(warm),
             "bayesnb, cache cold": lambda i: str(scratch / f"cold{i}"),
             "bayesnb, cache off": lambda i: "0"}
    order = list(cases)
    if quick and n_runs == 1:  # the one cold run fills the warm folder: one process fewer
        cases["bayesnb, cache cold"] = lambda i: str(warm)
        order = ["bayesnb, cache cold", "bayesnb, cache warm", "bayesnb, cache off"]
    else:
        run(ours_first(), str(warm))  # fills the warm folder, untimed
    # one run of every case in turn, n_runs times: a slow spell of the machine falls on all
    runs = {name: [] for name in [*order, "scikit-learn GaussianNB"]}
    for i in range(n_runs):
        for name in order:
            runs[name].append(run(ours_first(), cases[name](i))[0])
        runs["scikit-learn GaussianNB"].append(run(THEIRS, "0")[0])
    rows = {name: median_of(runs[name]) for name in [*cases, "scikit-learn GaussianNB"]}
    reference = rows["scikit-learn GaussianNB"][3]
    print("| case | import | fit | predict_proba | total | total / scikit-learn |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, (imp, fit, proba, total) in rows.items():
        print(f"| {name} | {imp:.2f} | {fit:.2f} | {proba:.2f} | {total:.2f} | "
              f"{total / reference:.2f}x |")


def many_models(first: int, last: int, scratch: Path) -> None:
    print(f"\n(c) {last - first + 1} Gaussian models of {first}..{last} classes in one process "
          "(fit + predict_proba; one process each)\n")
    code = MANY.format(first=first, last=last, setup="\n".join(SETUP))
    folder = str(scratch / "many")
    rows = {"cache off": run(code, "0")[0],
            "cache cold": run(code, folder)[0],
            "cache warm (a second process)": run(code, folder)[0]}
    print("| case | fit seconds, all models | RSS growth MB |")
    print("| --- | --- | --- |")
    for name, (seconds, grown) in rows.items():
        print(f"| {name} | {seconds:.1f} | {grown:.0f} |")


#: (d) and (e): family, data, scikit-learn's estimator
TABLES = {
    "(d) 12 small count tables": (
        "Multinomial", "rng.poisson(2.0, size=(300, 16)).astype(np.float32)", "MultinomialNB"),
    "(e) 12 small real-valued tables": (
        "Gaussian", "rng.normal(y[:, None], 1.0, size=(300, 16))", "GaussianNB"),
}


def column_counts(n_runs: int) -> None:
    for title, (family, data, reference) in TABLES.items():
        print(f"\n{title} (300 rows, 5..16 columns) in one process: {family} fit + "
              f"predict_proba, cache off (seconds, all tables; median of {n_runs} runs)\n")
        setup = "\n".join(["import bayesnb as bnb", *SETUP,
                           "bnb.NaiveBayes  # the estimator's modules, imported untimed"])
        ours = COLUMNS.format(setup=setup, data=data,
                              estimator=f"bnb.NaiveBayes(bnb.{family}())")
        theirs = COLUMNS.format(setup=f"from sklearn.naive_bayes import {reference}",
                                data=data, estimator=f"{reference}()")
        runs: dict = {"bayesnb": [], f"scikit-learn {reference}": []}
        for _ in range(n_runs):
            runs["bayesnb"].append(run(ours, "0")[0][0])
            runs[f"scikit-learn {reference}"].append(run(theirs, "0")[0][0])
        rows = {name: statistics.median(values) for name, values in runs.items()}
        print("| case | seconds, all tables | / scikit-learn |")
        print("| --- | --- | --- |")
        for name, seconds in rows.items():
            print(f"| {name} | {seconds:.3f} | "
                  f"{seconds / rows[f'scikit-learn {reference}']:.1f}x |")


def analysis_calls(n_runs: int, scratch: Path) -> None:
    print("\n(f) first analysis calls after a fit, fresh process each (seconds; median of "
          f"{n_runs} runs)\n")
    print("| table | cache | fit | log_evidence | predict_joint_log_proba | explain | loo | "
          "simulate | predict_uncertainty |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for title, (data, features) in ANALYSIS_TABLES.items():
        code = ANALYSIS.format(setup="\n".join(SETUP), data=data, features=features)
        warm = str(scratch / f"analysis{len(title)}")
        run(code, warm)  # fills the warm folder, untimed
        for cache, folder in (("off", "0"), ("warm", warm)):
            seconds = median_of([run(code, folder)[0] for _ in range(n_runs)])
            print(f"| {title} | {cache} | " + " | ".join(f"{s:.3f}" for s in seconds) + " |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per figure")
    parser.add_argument("--classes", type=int, nargs=2,
                        help="first and last number of classes in (c) (default 2 31)")
    parser.add_argument("--quick", action="store_true", help="1 run, 2..5 classes")
    parser.add_argument("--small-fit-cells", type=int, default=None,
                        help="bayesnb.fast._host.SMALL_FIT_CELLS in the children (-1: none)")
    parser.add_argument("--host-maths-entries", type=int, default=None,
                        help="bayesnb.fast._host.HOST_MATHS_ENTRIES in the children "
                             "(-1: none)")
    parser.add_argument("--loo-host-row-blocks", type=int, default=None,
                        help="bayesnb.loo.HOST_ROW_BLOCKS in the children (-1: none)")
    parser.add_argument("--host-draw-entries", type=int, default=None,
                        help="bayesnb._draws_host.HOST_DRAW_ENTRIES in the children (-1: none)")
    args = parser.parse_args(argv)
    for name, value in (("SMALL_FIT_CELLS", args.small_fit_cells),
                        ("HOST_MATHS_ENTRIES", args.host_maths_entries)):
        if value is not None:
            SETUP.extend(["import bayesnb.fast._host", f"bayesnb.fast._host.{name} = {value}"])
    if args.loo_host_row_blocks is not None:
        SETUP.extend(["import bayesnb.loo", f"bayesnb.loo.HOST_ROW_BLOCKS = "
                      f"{args.loo_host_row_blocks}"])
    if args.host_draw_entries is not None:
        SETUP.extend(["import bayesnb._draws_host", f"bayesnb._draws_host.HOST_DRAW_ENTRIES = "
                      f"{args.host_draw_entries}"])
    if args.quick:
        args.runs = 1
    args.classes = args.classes or ((2, 5) if args.quick else (2, 31))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    scratch = Path(tempfile.mkdtemp(prefix="bayesnb-first-answer-"))
    try:
        imports(args.runs, scratch)
        first_answer(args.runs, scratch, args.quick)
        many_models(*args.classes, scratch)
        column_counts(args.runs)
        analysis_calls(args.runs, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
