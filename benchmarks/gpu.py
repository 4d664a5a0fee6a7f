r"""bayesnb on the accelerator: memory bandwidth reached, and the draws against one matmul.

Issue 12 section 5. Everything runs on ``jax.devices()[0]``: the GPU when JAX has one, else the
CPU, which the output then says in its first lines (CPU figures are not the GPU goal).

    python benchmarks/gpu.py                  # 2,000,000 x 1,000 float32 counts, 20 classes
    python benchmarks/gpu.py --quick          # 20,000 x 200: a smoke run, well under a minute
    python benchmarks/gpu.py --rows 500000 --repeats 7 --json gpu.json
    python benchmarks/gpu.py --peak-gbps 3350 # a peak of your own (GB/s), e.g. for a new device

Workloads, each one warm-up call (compiles) and ``--repeats`` timed calls (median), every call
waited for (host results, or ``block_until_ready``):

* **counting**: ``fit`` of ``NaiveBayes(Multinomial(alpha=1), method="mean", class_alpha=0)``
  (per-class sufficient statistics) on host NumPy X, streamed through the library's chunking,
  and the same from a device-resident ``jax.Array``;
* **plug-in predict**: ``predict_proba`` of that model on host NumPy X (every chunk's
  host-to-device copy is inside the timing), and the same from a device-resident ``jax.Array``
  (whether the library keeps it on the device or converts it to NumPy first is found out at run
  time and printed);
* the library's plug-in score kernel alone (``_kernels.scores``) over chunks already on the
  device, at the library's chunk size and at a large one: a diagnostic (no goal) that separates
  the kernel from the host streaming;
* **exact predictive**: ``predict_proba`` under ``method="bayes"`` on the first
  ``--bayes-rows`` rows (default 200,000: its host-side tails for large counts make it the
  slowest workload), and its ratio to the plug-in on the same rows (issue 12 section 1: <= 2x);
* **posterior predictive over draws**: ``method="mcmc"``'s scorer (``scoring.DrawsScorer``) on
  exact conjugate posterior draws, as ``cases/draws.py`` does, against one jitted ``X @ W`` of
  the same FLOPs with X and W on the same device (goal <= 1.5x).

Bandwidth: bytes moved are X read once plus the ``(n, K)`` output in the kernel dtype (counting:
X plus the labels), over the median time, as GB/s (1e9 bytes/s) and as a fraction of the
device's peak memory bandwidth (:data:`PEAK`, NVIDIA's data sheets; ``--peak-gbps`` overrides)
and of measured references in the same process: a jitted ``x.sum()`` over X on the device (reads
X once), a jitted ``x + 1`` (reads and writes X) and ``jax.device_put`` of host X (the
host-to-device ceiling every host-streamed workload is under). Goal: >= 50% of peak for plug-in
predict and counting.

Exactness, beside every figure: argmax agreement and the largest |p_ours - p_ref| on the first
``CHECK_ROWS`` rows against float64 NumPy/SciPy computed from class counts summed in float64
NumPy (plug-in: log pi + x @ log theta with theta the posterior mean; exact: the
Dirichlet-multinomial; draws: ``cases.draws``'s reference from the draws), and for counting the
fitted per-class counts against those float64 counts.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from harness import agreement, call, fmt_s, machine, pair, progress_printer  # noqa: E402

#: peak memory bandwidth (bytes/s) by ``device_kind`` (lower case, first match wins), and where
#: each number is from
PEAK = (
    (("h200",), 4.8e12, "NVIDIA H200 data sheet: 4.8 TB/s HBM3e"),
    (("h100", "nvl"), 3.9e12, "NVIDIA H100 data sheet: H100 NVL 3.9 TB/s"),
    (("h100", "pcie"), 2.0e12, "NVIDIA H100 data sheet: H100 PCIe 2.0 TB/s"),
    (("h100",), 3.35e12, "NVIDIA H100 data sheet: H100 SXM 3.35 TB/s"),
    (("a100", "80gb", "pcie"), 1.935e12, "NVIDIA A100 data sheet: A100 80GB PCIe 1,935 GB/s"),
    (("a100", "80gb"), 2.039e12, "NVIDIA A100 data sheet: A100 80GB SXM 2,039 GB/s"),
    (("a100",), 1.555e12, "NVIDIA A100 data sheet: A100 40GB 1,555 GB/s"),
)
#: plug-in predict and counting must reach this fraction of the peak (issue 12 section 5)
BANDWIDTH_GOAL = 0.5
#: posterior predictive over draws / one matmul of the same FLOPs (issue 12 section 5)
DRAWS_GOAL = 1.5
#: exact / plug-in predict_proba (issue 12 section 1, Multinomial)
EXACT_TARGET = 2.0
AGREE_MIN = 0.999

#: (rows, columns, classes); rows scored under "bayes" (its host tails make it the slowest
#: workload: a tenth of the rows, like-for-like with the plug-in on the same rows); draws:
#: (rows, draws); rows checked against float64 (the draws' NumPy reference is an einsum over
#: draws x rows x classes x columns: 200 rows, as ``cases/draws.py``)
FULL = {"shape": (2_000_000, 1_000, 20), "bayes": 200_000, "draws": (10_000, 1_000),
        "check": 2_000, "draws_check": 200}
QUICK = {"shape": (20_000, 200, 20), "bayes": 20_000, "draws": (1_000, 100), "check": 500,
         "draws_check": 200}
#: rows per chunk of the large device-resident chunks (1 GB of float32 at 1,000 columns)
BIG_CHUNK = 1 << 18


# ---------------------------------------------------------------------------------- device
def device_info(peak_gbps: float | None):
    """The device, its peak bandwidth in bytes/s (or None) and where that number is from."""
    import jax

    dev = jax.devices()[0]
    kind = getattr(dev, "device_kind", "?")
    if peak_gbps is not None:
        return dev, kind, peak_gbps * 1e9, "--peak-gbps"
    low = kind.lower()
    for keys, peak, source in PEAK:
        if all(k in low for k in keys):
            return dev, kind, peak, source
    return dev, kind, None, f"no peak on record for device_kind {kind!r} (pass --peak-gbps)"


def library_precision() -> str | None:
    """The float32 matmul precision the library's kernels ask for: "float32" when they are
    wrapped in ``_kernels.full_float32``, else None (JAX's default)."""
    from bayesnb.fast import _kernels

    return "float32" if hasattr(_kernels, "full_float32") else None


def matmul_precision() -> str:
    import jax

    value = jax.config.jax_default_matmul_precision
    default = ("unset: the backend's fastest, full float32 on CPU, TF32 tensor cores on "
               "Ampere and later NVIDIA GPUs" if value is None else repr(value))
    ours = library_precision()
    return (f"jax_default_matmul_precision {default}; the library's float32 kernels: "
            + ("full float32 (_kernels.full_float32, precision HIGHEST)" if ours else
               "JAX's default") + "; the draws' reference matmul: the same as the library's")


# ---------------------------------------------------------------------------------- data
def make_counts(n, f, k, seed=0, threads=None):
    """float32 Poisson counts (mean about 1 per entry), rates per class within about 5% of a
    common base so the classes overlap (the probabilities checked are not all 0 or 1).
    Generated in row blocks by ``threads`` independent streams into one preallocated array."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    base = rng.gamma(2.0, 0.5, f)
    rate = base * np.exp(0.05 * rng.standard_normal((k, f)))
    X = np.empty((n, f), dtype=np.float32)
    block = 16_384
    starts = range(0, n, block)
    seeds = np.random.SeedSequence(seed + 1).spawn(len(starts))

    def fill(i):
        s = starts[i]
        e = min(s + block, n)
        X[s:e] = np.random.default_rng(seeds[i]).poisson(rate[y[s:e]])

    with ThreadPoolExecutor(threads or os.cpu_count() or 1) as pool:
        list(pool.map(fill, range(len(starts))))
    return X, y


def class_counts64(X, y, k, block=65_536):
    """``(K, F)`` per-class column sums in float64 NumPy, block by block (no full float64 copy)."""
    counts = np.zeros((k, X.shape[1]))
    for s in range(0, X.shape[0], block):
        hot = np.zeros((min(block, X.shape[0] - s), k))
        hot[np.arange(hot.shape[0]), y[s:s + block]] = 1.0
        counts += hot.T @ X[s:s + block].astype(np.float64)
    return counts


def _softmax(score):
    from scipy.special import logsumexp

    return np.exp(score - logsumexp(score, axis=1, keepdims=True))


def plugin_reference(X, y, counts, rows, alpha=1.0):
    """float64 p(c | x) under the posterior-mean multinomial and the class frequencies."""
    k = counts.shape[0]
    theta = (counts + alpha) / (counts.sum(axis=1, keepdims=True) + alpha * counts.shape[1])
    log_prior = np.log(np.bincount(y, minlength=k) / len(y))
    return _softmax(log_prior + X[:rows].astype(np.float64) @ np.log(theta).T)


def exact_reference(X, y, counts, rows, alpha=1.0):
    """float64 SciPy Dirichlet-multinomial p(c | x, data) (the class-free coefficient
    cancels), as ``cases/bayes.py`` computes it."""
    from scipy.special import gammaln

    k = counts.shape[0]
    a = counts + alpha
    xs = X[:rows].astype(np.float64)
    n = xs.sum(axis=1, keepdims=True)
    score = (np.log(np.bincount(y, minlength=k) / len(y)) + gammaln(a.sum(axis=1))
             - gammaln(a.sum(axis=1) + n)
             + (gammaln(a[None] + xs[:, None]) - gammaln(a)[None]).sum(axis=-1))
    return _softmax(score)


# ---------------------------------------------------------------------------------- measuring
def timed(fn, repeats):
    """One warm-up call, then ``repeats`` timed calls: (first Call, steady Calls)."""
    first = call(fn)
    first.out = None
    steady = [call(fn) for _ in range(repeats)]
    for c in steady[:-1]:
        c.out = None
    return first, steady


def median_s(calls):
    return statistics.median(c.seconds for c in calls)


class Results:
    """The rows printed and written to ``--json``."""

    def __init__(self, peak, reference_bps):
        self.peak, self.reference_bps = peak, reference_bps
        self.rows, self.ratios = [], []

    def bandwidth(self, name, first, steady, nbytes, goal, agree=None, dp=None, note=""):
        t = median_s(steady)
        bps = nbytes / t
        frac = None if self.peak is None else bps / self.peak
        status = ("WRONG" if agree is not None and agree < AGREE_MIN else
                  "-" if goal is None else
                  "n/a (no peak)" if frac is None else
                  "met" if frac >= goal else "missed")
        self.rows.append(dict(workload=name, seconds=t, first_s=first.seconds,
                              compile_s=first.compile_s, bytes=nbytes, gbps=bps / 1e9,
                              of_peak=frac, of_reference=bps / self.reference_bps,
                              goal=goal, status=status, agree=agree, max_abs_dp=dp, note=note))

    def ratio(self, name, ours_s, ref_s, ref_name, goal, agree, dp, note=""):
        r = ours_s / ref_s
        status = ("WRONG" if agree is not None and agree < AGREE_MIN else
                  "met" if r <= goal else "missed")
        self.ratios.append(dict(ratio=name, ours_s=ours_s, reference_s=ref_s,
                                reference=ref_name, value=r, goal=goal, status=status,
                                agree=agree, max_abs_dp=dp, note=note))


def _pct(v):
    return "-" if v is None else f"{100 * v:.1f}%"


def _agree(a):
    return "-" if a is None else f"{100 * a:.3f}%"


def _dp(d):
    return "-" if d is None else f"{d:.1e}"


# ---------------------------------------------------------------------------------- workloads
def bandwidth_references(Xd, X, repeats):
    """Measured references: jitted sum and copy of X on the device, device_put of host X."""
    import jax

    total = jax.jit(lambda a: a.sum())
    plus = jax.jit(lambda a: a + 1.0)
    out = []
    first, steady = timed(lambda: total(Xd), repeats)
    out.append(("on-device reduction: jitted x.sum() over X on the device (reads X)",
                median_s(steady), Xd.nbytes))

    def copy_once():
        r = plus(Xd)
        r.block_until_ready()
        r.delete()  # one 8 GB temporary at a time

    first, steady = timed(copy_once, repeats)
    out.append(("on-device copy: jitted x + 1 (reads and writes X)", median_s(steady),
                2 * Xd.nbytes))

    # the plug-in's product alone: X against a (F, K) table at the kernels' precision
    W = jax.device_put(np.random.default_rng(3).standard_normal((Xd.shape[1], 20))
                       .astype(np.float32), Xd.devices().pop())
    precision = library_precision()

    def product(a, b):
        with jax.default_matmul_precision(precision):
            return a @ b

    skinny = jax.jit(product)
    first, steady = timed(lambda: skinny(Xd, W).block_until_ready(), repeats)
    out.append(("on-device product: jitted X @ W, W (F, 20), the plug-in's matmul alone at the "
                "kernels' precision (reads X)", median_s(steady), Xd.nbytes))

    dev = Xd.devices().pop() if hasattr(Xd, "devices") else None

    def upload():
        r = jax.device_put(X, dev)
        r.block_until_ready()
        r.delete()

    first, steady = timed(upload, repeats)
    out.append(("host-to-device: jax.device_put(X) from host NumPy (the ceiling of every "
                "host-streamed workload)", median_s(steady), X.nbytes))
    return out


def kernel_alone(clf, Xd, rows, repeats, check, ref):
    """The library's plug-in score kernel over chunks of ``rows`` rows already on the device:
    (first Call, steady Calls, argmax agreement, max |dp| on the check rows)."""
    import jax
    import jax.numpy as jnp

    from bayesnb import _blocks
    from bayesnb.fast import _kernels

    block = clf.fitted_.blocks[0]
    scorer = clf._scorer()
    fams, levels = (type(block.family),), (_blocks.levels_of(block.schema),)
    tables, shifts = _kernels._tables(fams, scorer.tables, False, False)
    if any(s is not None for s in shifts):
        raise RuntimeError("this family's kernel reads shifted input; not measured")
    n = Xd.shape[0]
    pad = -n % rows
    Xp = jnp.pad(Xd, ((0, pad), (0, 0))) if pad else Xd
    chunks = [Xp[s:s + rows] for s in range(0, n + pad, rows)]
    jax.block_until_ready(chunks)
    del Xp
    valid = np.int32(rows)

    def run():
        return [_kernels.chosen(_kernels.scores(fams, levels, False, False, scorer.log_prior,
                                                tables, (c,), valid)[0], "proba")
                for c in chunks]

    first, steady = timed(run, repeats)
    head = np.concatenate([np.asarray(p) for p in steady[-1].out[: -(-check // rows)]])[:check]
    agree, dp = agreement(_kernels.finish(head, "proba"), ref)
    steady[-1].out = None
    for c in chunks:
        c.delete()
    return first, steady, agree, dp


def library_chunk_rows(n, f, k, itemsize):
    """The chunk rows ``_kernels.stream_scores`` picks for the plug-in Multinomial (its
    formula: a family that scores by products alone, ``product_scores``, is not bounded by
    the ``(rows, K, F)`` temporary)."""
    from bayesnb.fast import _kernels

    rows = _kernels.chunk_rows(n, f * itemsize + _kernels.SCORE_CLASS_BYTES * k)
    return _kernels.balanced_rows(n, rows)


def draws_vs_matmul(X, y, rows, n_draws, repeats, check, progress):
    """``method="mcmc"``'s scorer on exact posterior draws against one jitted matmul of the
    same FLOPs on the device (as ``cases/draws.py``), from host NumPy X and from a
    device-resident ``jax.Array`` X: ``[(label, Pair, agree, dp, note)]``, one per input."""
    import jax
    from cases.draws import reference_draws, reference_predictive

    import bayesnb as bnb
    from bayesnb.scoring import DrawsScorer

    Xs, ys = np.ascontiguousarray(X[:rows]), y[:rows]
    f, k = Xs.shape[1], len(np.unique(y))
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="bayes").fit(Xs, ys)
    draws = clf.sample_posterior(n_draws, seed=1)
    scorer = DrawsScorer(clf.fitted_, clf._class_setup()[1], draws)
    rng = np.random.default_rng(2)
    dev = jax.devices()[0]
    Xd = jax.device_put(Xs, dev)
    W = jax.device_put(rng.standard_normal((f, n_draws * k)).astype(np.float32), dev)
    # the reference at the precision the library's kernels use (full float32 against TF32
    # would compare different arithmetic); JAX's default precision is timed for information
    precision = library_precision()

    def product(a, b):
        with jax.default_matmul_precision(precision):
            return a @ b

    matmul, fastest = jax.jit(product), jax.jit(lambda a, b: a @ b)
    progress(f"draws: {rows:,} rows x {f:,} features x {n_draws:,} draws x {k} classes")
    ref, _ = reference_predictive(reference_draws("multinomial", Xs, draws, check))
    gflop = 2 * rows * f * n_draws * k / 1e9
    out = []
    for label, rows_in in (("host NumPy X (its host-to-device copies included)", Xs),
                           ("device-resident jax.Array X", Xd)):
        p = pair(lambda rows_in=rows_in: scorer.scores(rows_in, "proba")[0],
                 lambda: matmul(Xd, W), repeats)
        _, steady = timed(lambda: fastest(Xd, W), repeats)
        default_s = median_s(steady)
        agree, dp = agreement(np.asarray(p.ours_out)[:check], ref)
        note = (f"{rows:,} rows x {f:,} features x {n_draws:,} draws x {k} classes "
                f"({gflop:,.0f} GFLOP); ours from {label}, the matmul X @ W with X and W "
                f"({f:,} x {n_draws * k:,}) already on the device; the scorer's draws laid "
                f"out at its first call (kept, as the estimator keeps its scorer); check: "
                f"float64 NumPy from the draws on {check} rows; the matmul at "
                + ("full float32 (HIGHEST)" if precision else "JAX's default precision")
                + f"; at JAX's default precision (TF32 on recent NVIDIA GPUs, float32 on CPU) "
                f"it takes {fmt_s(default_s)}: ours / that = {p.ours_s / default_s:.2f}x, "
                f"information")
        out.append((label.split(" (")[0], p, agree, dp, note))
    return out


def profile_calls(clf, X, y, rows, n_draws, progress) -> str:
    """cProfile's top entries (cumulative time) for one warm call each of the draws' scorer,
    the device-resident fit and the device-resident ``predict_proba``: which host steps a
    call waits on (device work shows as the waits: ``block_until_ready``, ``__array__``)."""
    import cProfile
    import io
    import pstats

    import jax

    import bayesnb as bnb
    from bayesnb.scoring import DrawsScorer

    Xs, ys = np.ascontiguousarray(X[:rows]), y[:rows]
    exact = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="bayes").fit(Xs, ys)
    scorer = DrawsScorer(exact.fitted_, exact._class_setup()[1],
                         exact.sample_posterior(n_draws, seed=1))
    Xd = jax.device_put(X)
    Xsd = jax.device_put(Xs)
    calls = (("posterior predictive over draws, host X", lambda: scorer.scores(Xs, "proba")),
             ("posterior predictive over draws, device-resident X",
              lambda: scorer.scores(Xsd, "proba")),
             ("fit, device-resident X", lambda: clf.fit(Xd, y)),
             ("predict_proba, device-resident X",
              lambda: clf.predict_proba(Xd).block_until_ready()))
    out = io.StringIO()
    for name, fn in calls:
        progress(f"profile: {name}")
        fn()  # warm
        prof = cProfile.Profile()
        prof.runcall(fn)
        out.write(f"### {name}\n\n```\n")
        pstats.Stats(prof, stream=out).strip_dirs().sort_stats("cumulative").print_stats(16)
        out.write("```\n\n")
    Xd.delete()
    return out.getvalue()


# ---------------------------------------------------------------------------------- main
def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small shapes (CPU smoke run)")
    p.add_argument("--rows", type=int, help="rows of X (default 2,000,000; quick 20,000)")
    p.add_argument("--cols", type=int, help="count columns (default 1,000; quick 200)")
    p.add_argument("--classes", type=int, help="classes (default 20)")
    p.add_argument("--bayes-rows", type=int,
                   help="rows scored under method='bayes' (default 200,000; quick: all)")
    p.add_argument("--draws-rows", type=int, help="rows for the draws (default 10,000)")
    p.add_argument("--draws", type=int, help="posterior draws (default 1,000; quick 100)")
    p.add_argument("--repeats", type=int, help="timed calls after the warm-up (default 5; "
                   "quick 2)")
    p.add_argument("--peak-gbps", type=float, help="peak memory bandwidth, GB/s (overrides "
                   "the data-sheet table)")
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    p.add_argument("--profile", action="store_true", help="also print where one call of the "
                   "posterior predictive over draws, of the device-resident fit and of the "
                   "device-resident predict_proba spends its time (cProfile, host side)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    t0 = time.perf_counter()
    progress = progress_printer()
    harness.FREEZE_SURVIVORS = args.quick

    import jax

    import bayesnb as bnb
    from bayesnb import _data
    from bayesnb.fast import _kernels

    cfg = QUICK if args.quick else FULL
    n, f, k = cfg["shape"]
    n, f, k = args.rows or n, args.cols or f, args.classes or k
    d_rows, n_draws = cfg["draws"]
    d_rows, n_draws = min(args.draws_rows or d_rows, n), args.draws or n_draws
    check = min(cfg["check"], n, d_rows)
    bayes_rows = min(args.bayes_rows or cfg["bayes"], n)
    repeats = args.repeats or (2 if args.quick else 5)
    dev, kind, peak, peak_source = device_info(args.peak_gbps)

    print("# bayesnb on the accelerator (issue 12 section 5)" + (" (--quick)" if args.quick
                                                                  else ""))
    if dev.platform == "cpu":
        print(f"NO GPU: jax.devices()[0] is {dev} (platform cpu, device_kind {kind!r}); "
              f"every figure below is a CPU figure, not the GPU goal.")
    print(f"device: {dev} (platform {dev.platform}, device_kind {kind!r}); peak memory "
          f"bandwidth: " + ("unknown" if peak is None else f"{peak / 1e9:,.0f} GB/s")
          + f" ({peak_source})")
    print("; ".join(f"{a}: {b}" for a, b in machine().items()))
    print(f"matmul precision: {matmul_precision()}")
    print(f"repeats: one warm-up call, then {repeats} timed calls (median)", flush=True)

    progress(f"data: {n:,} x {f:,} float32 counts, {k} classes")
    t = time.perf_counter()
    X, y = make_counts(n, f, k)
    gen_s = time.perf_counter() - t
    t = time.perf_counter()
    counts = class_counts64(X, y, k)
    print(f"data: {n:,} x {f:,} float32 Poisson counts, {k} classes ({X.nbytes / 1e9:.2f} GB), "
          f"generated in {gen_s:.1f} s; float64 NumPy class counts in "
          f"{time.perf_counter() - t:.1f} s", flush=True)
    ref_plugin = plugin_reference(X, y, counts, check)

    Xd = jax.device_put(X, dev)
    Xd.block_until_ready()
    held = _data.as_table(Xd).array
    converted = isinstance(held, np.ndarray)
    accepts = ("a jax.Array input is converted to NumPy by the library "
               "(bayesnb/_data.as_table: np.asarray), i.e. copied from the device to the host "
               "and then streamed back chunk by chunk like host NumPy X" if converted else
               f"a jax.Array input is held as {type(held).__name__} (not converted to NumPy)")
    del held
    print(f"device-resident input: {accepts}", flush=True)

    progress("measured references")
    refs = bandwidth_references(Xd, X, repeats)
    reference_bps = refs[0][2] / refs[0][1]
    res = Results(peak, reference_bps)
    out_bytes = n * k * 4  # the (n, K) scores the kernel writes, float32

    progress("counting (fit)")
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0)
    first, steady = timed(lambda: clf.fit(X, y), repeats)
    fitted_counts = np.asarray(clf.fitted_.blocks[0].stats.counts, dtype=np.float64)
    count_diff = float(np.max(np.abs(fitted_counts - counts)))
    agree, dp = agreement(clf.predict_proba(X[:check]), ref_plugin)
    res.bandwidth("counting: fit (per-class sufficient statistics), host NumPy X streamed",
                  first, steady, X.nbytes + y.nbytes, BANDWIDTH_GOAL, agree, dp,
                  f"class counts vs float64 NumPy (all rows): max |diff| {count_diff:g}; "
                  f"argmax/dp: the fitted model's predict_proba on {check} rows")

    progress("counting (fit), device-resident jax.Array")
    first, steady = timed(lambda: clf.fit(Xd, y), repeats)
    device_counts = np.asarray(clf.fitted_.blocks[0].stats.counts, dtype=np.float64)
    count_diff = float(np.max(np.abs(device_counts - counts)))
    agree, dp = agreement(clf.predict_proba(X[:check]), ref_plugin)
    res.bandwidth("counting: fit (per-class sufficient statistics), device-resident jax.Array X"
                  + (" (converted to NumPy by the library: device-to-host copy first)"
                     if converted else ""), first, steady, X.nbytes + y.nbytes,
                  BANDWIDTH_GOAL, agree, dp,
                  f"class counts vs float64 NumPy (all rows): max |diff| {count_diff:g}")

    progress("plug-in predict_proba, host NumPy")
    first, steady = timed(lambda: clf.predict_proba(X), repeats)
    host_out = steady[-1].out
    agree, dp = agreement(host_out[:check], ref_plugin)
    res.bandwidth("plug-in predict_proba, host NumPy X streamed (host-to-device copies "
                  "included)", first, steady, X.nbytes + out_bytes, BANDWIDTH_GOAL, agree, dp)

    progress("plug-in predict_proba, device-resident jax.Array")
    first, steady = timed(lambda: clf.predict_proba(Xd), repeats)
    device_out = np.asarray(steady[-1].out, dtype=np.float64)  # a jax.Array, float32
    agree, dp = agreement(device_out[:check], ref_plugin)
    same = float(np.max(np.abs(device_out - host_out)))
    res.bandwidth("plug-in predict_proba, device-resident jax.Array X"
                  + (" (converted to NumPy by the library: device-to-host copy first)"
                     if converted else ""), first, steady, X.nbytes + out_bytes,
                  BANDWIDTH_GOAL, agree, dp,
                  f"returns a {type(steady[-1].out).__name__} ({steady[-1].out.dtype}, "
                  f"normalised on the device); max |dp| against the host-NumPy call: {same:.1e}")
    del device_out
    del host_out
    steady[-1].out = None

    itemsize = X.dtype.itemsize
    for label, rows in (("library chunk", library_chunk_rows(n, f, k, itemsize)),
                        ("large chunk", min(BIG_CHUNK, _kernels.bucket(n)))):
        progress(f"score kernel alone, device-resident chunks of {rows:,} rows")
        name = (f"diagnostic: the library's score kernel alone on device-resident chunks of "
                f"{rows:,} rows ({label})")
        try:
            first, steady, agree, dp = kernel_alone(clf, Xd, rows, repeats, check, ref_plugin)
        except Exception as err:  # internals moved: say so, measure the rest
            print(f"{name}: n/a ({type(err).__name__}: {str(err)[:80]})")
            continue
        res.bandwidth(name, first, steady, X.nbytes + out_bytes, None, agree, dp,
                      f"{-(-n // rows):,} kernel calls, outputs left on the device")

    progress(f"exact predictive (method='bayes') on {bayes_rows:,} rows")
    exact = copy.deepcopy(clf).set_params(method="bayes")
    Xb = X[:bayes_rows]
    p = pair(lambda: exact.predict_proba(Xb), lambda: clf.predict_proba(Xb), repeats)
    agree, dp = agreement(p.ours_out[:check], exact_reference(X, y, counts, check))
    res.bandwidth(f"exact predict_proba (method='bayes'), host NumPy X, {bayes_rows:,} rows",
                  p.ours_first, p.ours, Xb.nbytes + bayes_rows * k * 4, None, agree, dp,
                  f"check: float64 SciPy Dirichlet-multinomial on {check} rows")
    res.ratio(f"exact / plug-in predict_proba on the same {bayes_rows:,} rows", p.ours_s,
              p.ref_s, "plug-in (method='mean')", EXACT_TARGET, agree, dp,
              "issue 12 section 1's target")
    p = None

    Xd.delete()  # its device memory, before the draws
    progress("posterior predictive over draws vs one matmul")
    for label, p, agree, dp, note in draws_vs_matmul(X, y, d_rows, n_draws, repeats,
                                                     min(cfg["draws_check"], d_rows),
                                                     progress):
        res.ratio(f"posterior predictive over {n_draws:,} draws ({d_rows:,} rows, {label}) "
                  f"/ one matmul of the same FLOPs", p.ours_s, p.ref_s,
                  "jitted X @ W on the device", DRAWS_GOAL, agree, dp, note)

    if args.profile:
        profiles = profile_calls(clf, X, y, d_rows, n_draws, progress)

    print("\n## Measured bandwidth references (same process)\n")
    print("| reference | median | bytes | GB/s | of peak |")
    print("|---|---|---|---|---|")
    for name, s, nbytes in refs:
        bps = nbytes / s
        print(f"| {name} | {fmt_s(s)} | {nbytes / 1e9:,.2f} GB | {bps / 1e9:,.1f} | "
              f"{_pct(None if peak is None else bps / peak)} |")

    print("\n## Workloads\n")
    head = ["workload", "median", "first call (compile)", "bytes moved", "GB/s", "of peak",
            "of measured x.sum()", "goal", "status", "argmax agree", "max |dp|"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in res.rows:
        print("| " + " | ".join([
            r["workload"], fmt_s(r["seconds"]), f"{fmt_s(r['first_s'])} "
            f"({fmt_s(r['compile_s'])})", f"{r['bytes'] / 1e9:,.2f} GB", f"{r['gbps']:,.1f}",
            _pct(r["of_peak"]), _pct(r["of_reference"]),
            "-" if r["goal"] is None else f">= {100 * r['goal']:.0f}% of peak", r["status"],
            _agree(r["agree"]), _dp(r["max_abs_dp"])]) + " |")
    notes = [f"{r['workload']}: {r['note']}" for r in res.rows if r["note"]]
    if notes:
        print("\n" + "\n".join(f"- {x}" for x in notes))

    print("\n## Ratios (ours / reference, one process)\n")
    for r in res.ratios:
        print(f"- {r['ratio']}: {r['value']:.2f}x ({fmt_s(r['ours_s'])} / "
              f"{fmt_s(r['reference_s'])} {r['reference']}; goal <= {r['goal']:g}x): "
              f"{r['status']}; argmax agree {_agree(r['agree'])}, max |dp| {_dp(r['max_abs_dp'])}")
        print(f"  ({r['note']})")
    print("\nbytes moved: X read once plus the (n, K) float32 output (counting: X plus the "
          "labels); GB/s = bytes / median time; of peak: against the peak above; status: met "
          f"if >= {100 * BANDWIDTH_GOAL:.0f}% of peak and argmax agreement >= "
          f"{100 * AGREE_MIN:.1f}%.")
    if dev.platform == "cpu":
        print("NO GPU: these are CPU figures (the GPU goal was not measured).")
    if args.profile:
        print("\n## Where one call spends its time (cProfile, cumulative, host side)\n")
        print(profiles)
    print(f"total wall time: {time.perf_counter() - t0:.0f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": str(dev), "platform": dev.platform, "device_kind": kind,
                       "peak_bytes_per_s": peak, "peak_source": peak_source,
                       "matmul_precision": matmul_precision(), "shape": [n, f, k],
                       "repeats": repeats, "jax_array_converted_to_numpy": converted,
                       "references": [dict(reference=a, seconds=b, bytes=c) for a, b, c in refs],
                       "workloads": res.rows, "ratios": res.ratios}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
