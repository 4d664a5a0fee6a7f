"""bayesnb against scikit-learn on the shapes of issue 6, side by side in one process.

Every row times one operation of one case: our steady-state median (the first call, which
compiles, is a warm-up and is reported on its own), scikit-learn's median on the same array in
the same process, the ratio ours / scikit-learn and the target. The calls alternate (ours,
scikit-learn, scikit-learn, ours, ...) so drifting machine load hits both sides alike. Read the
ratios, not the absolute times: on a shared 2-vCPU machine the same script moves by 0.4x-1.7x
between runs (see /work/shared/MEASUREMENTS.md).

A fast wrong answer cannot pass: a row is "met" only if the argmax of our ``predict_proba``
equals scikit-learn's on at least 99.9% of rows (for ``method="bayes"``: a float64 SciPy
reference of the Dirichlet-multinomial predictive on a sample of rows).

Usage::

    python benchmarks/run.py                       # full run, about 8-10 minutes
    python benchmarks/run.py --quick               # small shapes, a few seconds of work
    python benchmarks/run.py --only gaussian --only coldstart --repeats 5
    python benchmarks/run.py --dtype float32       # one dtype policy only
    python benchmarks/run.py --profile --only multinomial   # where the time goes, by stage
    python benchmarks/run.py --json results.json   # also write the rows as JSON

Cases (``--only``): multinomial, bernoulli, gaussian, categorical, bayes, coldstart.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gc
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

CASES = ("multinomial", "bernoulli", "gaussian", "categorical", "bayes", "coldstart")
DTYPES = ("float32", "float64")
#: ours / scikit-learn must be at most this (issue 6)
TARGET = {"float32": 0.5, "float64": 1.0}
COLDSTART_TARGET_S = 3.0
AGREE_MIN = 0.999

#: (rows, columns, classes[, levels]) per case; "bayes" is the number of rows scored exactly
FULL = {"multinomial": (200_000, 1_000, 20), "bernoulli": (200_000, 1_000, 10),
        "gaussian": (1_000_000, 50, 10), "categorical": (1_000_000, 20, 5, 5),
        "bayes": 5_000, "bayes_check": 300, "coldstart_runs": 3, "repeats": 3,
        "repeats_big": 2}
QUICK = {"multinomial": (5_000, 300, 20), "bernoulli": (5_000, 300, 10),
         "gaussian": (20_000, 50, 10), "categorical": (20_000, 20, 5, 5),
         "bayes": 500, "bayes_check": 200, "coldstart_runs": 1, "repeats": 1,
         "repeats_big": 1}


# ---------------------------------------------------------------------------------- machinery
class Memory:
    """Peak resident memory of one call: the kernel's high-water mark is reset before the call
    (``/proc/self/clear_refs``), so the peak is that call's, not the process's history."""

    def __init__(self):
        self.resettable = False
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.resettable = self._status("VmHWM") is not None
        except OSError:
            pass

    @staticmethod
    def _status(key: str) -> int | None:
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        return int(line.split()[1]) * 1024
        except OSError:
            return None
        return None

    def start(self) -> int:
        if self.resettable:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        return self._status("VmRSS") or 0

    def peak_since(self, base: int) -> float:
        """Extra bytes above the resident size at ``start`` (NaN where unmeasurable)."""
        if not self.resettable:
            return float("nan")
        return float(max((self._status("VmHWM") or 0) - base, 0))


class CompileClock:
    """Seconds JAX spends tracing, lowering and compiling (``jax.monitoring`` events)."""

    def __init__(self):
        import jax.monitoring

        self.total = 0.0
        jax.monitoring.register_event_duration_secs_listener(self._listen)

    def _listen(self, name, duration, **_):
        if name.startswith("/jax/core/compile/"):
            self.total += duration


MEMORY: Memory | None = None
CLOCK: CompileClock | None = None


def sync(out):
    """Wait for JAX's asynchronous dispatch so the clock sees the whole computation."""
    import jax

    leaves = out
    if hasattr(out, "blocks_"):
        leaves = [b.stats for b in out.blocks_]
    with contextlib.suppress(Exception):
        jax.block_until_ready(leaves)
    return out


@dataclass
class Call:
    seconds: float
    peak_bytes: float
    compile_s: float
    sys_s: float  # kernel time (page faults on fresh memory, mostly)
    out: object = field(repr=False, default=None)


def call(fn: Callable) -> Call:
    gc.collect()
    base = MEMORY.start()
    c0 = CLOCK.total
    r0 = resource.getrusage(resource.RUSAGE_SELF).ru_stime
    t0 = time.perf_counter()
    out = sync(fn())
    dt = time.perf_counter() - t0
    sys_s = resource.getrusage(resource.RUSAGE_SELF).ru_stime - r0
    return Call(dt, MEMORY.peak_since(base), CLOCK.total - c0, sys_s, out)


@dataclass
class Pair:
    """First calls and steady-state medians of ours and a reference, measured alternately."""

    ours_first: Call
    ref_first: Call
    ours: list
    ref: list

    @property
    def ours_s(self):
        return statistics.median(c.seconds for c in self.ours)

    @property
    def ref_s(self):
        return statistics.median(c.seconds for c in self.ref)

    @property
    def ours_peak(self):
        return statistics.median(c.peak_bytes for c in self.ours)

    @property
    def ref_peak(self):
        return statistics.median(c.peak_bytes for c in self.ref)

    @property
    def ours_sys(self):
        return statistics.median(c.sys_s for c in self.ours)

    @property
    def ref_sys(self):
        return statistics.median(c.sys_s for c in self.ref)

    @property
    def steady_compile_s(self):
        return sum(c.compile_s for c in self.ours)

    @property
    def ours_out(self):
        return self.ours[-1].out

    @property
    def ref_out(self):
        return self.ref[-1].out


def pair(ours: Callable, ref: Callable, repeats: int) -> Pair:
    first_o = call(ours)
    first_r = call(ref)
    o, r = [], []
    for i in range(repeats):
        if i % 2 == 0:
            o.append(call(ours))
            r.append(call(ref))
        else:
            r.append(call(ref))
            o.append(call(ours))
    # keep only the outputs of the last calls alive
    for c in o[:-1] + r[:-1] + [first_o, first_r]:
        c.out = None
    return Pair(first_o, first_r, o, r)


@dataclass
class Row:
    case: str
    dtype: str
    op: str
    ours_s: float
    ref_s: float
    ref_name: str  # what the reference is ("sklearn", "our mean", ...)
    target: float | None  # max ratio; None: no target (information only)
    agree: float | None  # fraction of rows with the reference's argmax
    max_abs_dp: float | None  # largest |p_ours - p_ref| over rows and classes
    first_s: float
    compile_s: float
    ours_peak_mb: float
    ref_peak_mb: float
    input_mb: float
    ours_sys_s: float = float("nan")
    ref_sys_s: float = float("nan")
    steady_compile_s: float = 0.0
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.ours_s / self.ref_s if self.ref_s > 0 else float("nan")

    @property
    def status(self) -> str:
        if self.agree is not None and self.agree < AGREE_MIN:
            return "WRONG"
        if self.target is None:
            return "n/a"
        return "met" if self.ratio <= self.target else "missed"


def row_from(pair_: Pair, case, dtype, op, ref_name, target, agree, dp, input_bytes, note=""):
    return Row(case, dtype, op, pair_.ours_s, pair_.ref_s, ref_name, target, agree, dp,
               pair_.ours_first.seconds, pair_.ours_first.compile_s, pair_.ours_peak / 2**20,
               pair_.ref_peak / 2**20, input_bytes / 2**20, pair_.ours_sys, pair_.ref_sys,
               pair_.steady_compile_s, note)


def agreement(p, q) -> tuple[float, float]:
    p, q = np.asarray(p), np.asarray(q)
    return float(np.mean(p.argmax(axis=1) == q.argmax(axis=1))), float(np.max(np.abs(p - q)))


@contextlib.contextmanager
def policy(dtype: str):
    """float32: JAX's default; float64: ``with jax.enable_x64(True)`` around fit and predict."""
    import jax

    if dtype == "float64":
        with jax.enable_x64(True):
            yield
    else:
        yield


# ---------------------------------------------------------------------------------- data
def make_multinomial(n, v, k, doc_len=100, seed=0):
    """Bag-of-words counts: ``doc_len`` words per row drawn from a per-class Dirichlet(0.5)
    word distribution (about 9% of the entries are non-zero, counts up to ~10)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    cdf = np.cumsum(rng.dirichlet(np.full(v, 0.5), size=k), axis=1)
    cdf[:, -1] = 1.0
    x = np.empty((n, v), dtype=np.float32)
    for s in range(0, n, 20_000):
        yy = y[s:s + 20_000]
        m = len(yy)
        u = rng.random((m, doc_len))
        idx = np.empty((m, doc_len), dtype=np.int64)
        for c in range(k):
            rows = yy == c
            idx[rows] = np.searchsorted(cdf[c], u[rows])
        flat = (np.arange(m)[:, None] * v + idx).ravel()
        x[s:s + m] = np.bincount(flat, minlength=m * v).reshape(m, v)
    return x, y


def make_bernoulli(n, v, k, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = rng.uniform(0.05, 0.95, (k, v)).astype(np.float32)
    x = np.empty((n, v), dtype=np.float32)
    for s in range(0, n, 20_000):
        yy = y[s:s + 20_000]
        x[s:s + len(yy)] = rng.random((len(yy), v), dtype=np.float32) < p[yy]
    return x, y


def make_gaussian(n, f, k, seed=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    mu = rng.normal(0.0, 1.0, (k, f))
    sd = rng.uniform(0.5, 2.0, (k, f))
    x = np.empty((n, f), dtype=np.float64)
    for s in range(0, n, 100_000):
        yy = y[s:s + 100_000]
        x[s:s + len(yy)] = mu[yy] + sd[yy] * rng.standard_normal((len(yy), f))
    return x, y


def make_categorical(n, f, k, levels, seed=3):
    """Integer codes 0..levels-1 (int64, as a user's label-encoded table would be)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    cdf = np.cumsum(rng.dirichlet(np.ones(levels), size=(k, f)), axis=-1)  # (k, f, L)
    x = np.empty((n, f), dtype=np.int64)
    for s in range(0, n, 100_000):
        yy = y[s:s + 100_000]
        u = rng.random((len(yy), f, 1))
        x[s:s + len(yy)] = np.minimum((u > cdf[yy]).sum(axis=-1), levels - 1)
    return x, y


# ---------------------------------------------------------------------------------- cases
def discrete_case(name, X, y, make_ours, make_ref, dtype, repeats) -> list[Row]:
    """fit and predict_proba, ours against the reference estimator, on the same array."""
    with policy(dtype):
        ours, ref = make_ours(), make_ref()
        fit = pair(lambda: ours.fit(X, y), lambda: ref.fit(X, y), repeats)
        proba = pair(lambda: ours.predict_proba(X), lambda: ref.predict_proba(X), repeats)
        agree, dp = agreement(proba.ours_out, proba.ref_out)
    shape = "x".join(str(s) for s in X.shape)
    return [row_from(fit, name, dtype, "fit", "sklearn", TARGET[dtype], agree, dp, X.nbytes,
                     f"{shape} {X.dtype}"),
            row_from(proba, name, dtype, "predict_proba", "sklearn", TARGET[dtype], agree, dp,
                     X.nbytes, f"{shape} {X.dtype}")]


def dirichlet_multinomial_reference(X, y, rows, n_classes):
    """float64 SciPy log p(c | x, data) under Dirichlet(1) word priors and class frequencies."""
    from scipy.special import gammaln, logsumexp

    X64 = np.asarray(X, dtype=np.float64)
    counts = np.zeros((n_classes, X.shape[1]))
    for c in range(n_classes):
        counts[c] = X64[y == c].sum(axis=0)
    a = counts + 1.0
    freq = np.bincount(y, minlength=n_classes) / len(y)
    xs = X64[:rows]
    n = xs.sum(axis=1, keepdims=True)
    score = (np.log(freq) + gammaln(a.sum(axis=1)) - gammaln(a.sum(axis=1) + n)
             + (gammaln(a[None] + xs[:, None]) - gammaln(a)[None]).sum(axis=-1))
    return np.exp(score - logsumexp(score, axis=1, keepdims=True))


def run_multinomial(shape, dtype, repeats, do_mean, do_bayes, bayes_rows, check_rows, data):
    from sklearn.naive_bayes import MultinomialNB

    import bayesnb as bnb

    X, y = data
    if dtype == "float64":
        X = X.astype(np.float64)
    rows = []
    if do_mean:
        rows += discrete_case(
            "multinomial", X, y,
            lambda: bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0),
            lambda: MultinomialNB(alpha=1.0), dtype, repeats)
    if do_bayes:
        k = shape[2]
        with policy(dtype):
            # fit is the same pass for every method (only the tables made from the statistics
            # differ), so fit once and score the same statistics both ways
            bayes = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="bayes", class_alpha=0)
            bayes.fit(X, y)
            mean = copy.deepcopy(bayes).set_params(method="mean")
            Xs = X[:bayes_rows]
            proba = pair(lambda: bayes.predict_proba(Xs), lambda: mean.predict_proba(Xs),
                         repeats)
        ref = dirichlet_multinomial_reference(X, y, check_rows, k)
        agree, dp = agreement(proba.ours_out[:check_rows], ref)
        rows.append(row_from(proba, "multinomial bayes", dtype,
                             f"predict_proba ({bayes_rows:,} rows)", "our mean", None, agree,
                             dp, Xs.nbytes, f"fit as method='mean'; argmax agreement and max "
                             f"|dp| against a float64 SciPy reference on {check_rows} rows"))
    return rows


def run_bernoulli(shape, dtype, repeats, data):
    from sklearn.naive_bayes import BernoulliNB

    import bayesnb as bnb

    X, y = data
    if dtype == "float64":
        X = X.astype(np.float64)
    return discrete_case(
        "bernoulli", X, y,
        lambda: bnb.NaiveBayes(bnb.Bernoulli(alpha=1.0, beta=1.0), method="mean",
                               class_alpha=0),
        lambda: BernoulliNB(alpha=1.0), dtype, repeats)


def run_gaussian(shape, dtype, repeats, data):
    from sklearn.naive_bayes import GaussianNB

    import bayesnb as bnb

    X, y = data
    X = X.astype(np.float32) if dtype == "float32" else X
    return discrete_case(
        "gaussian", X, y,
        lambda: bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0),
        lambda: GaussianNB(var_smoothing=0.0), dtype, repeats)


def run_categorical(shape, dtype, repeats, data):
    from sklearn.naive_bayes import CategoricalNB

    import bayesnb as bnb

    X, y = data
    return discrete_case(
        "categorical", X, y,
        lambda: bnb.NaiveBayes(bnb.Categorical(alpha=1.0), method="mean", class_alpha=0),
        lambda: CategoricalNB(alpha=1.0), dtype, repeats)


COLD_OURS = """
import json, time
t0 = time.perf_counter()
import pandas as pd
import bayesnb as bnb
from bayesnb.datasets import load_playtennis
t1 = time.perf_counter()
X, y = load_playtennis()
t2 = time.perf_counter()
clf = bnb.NaiveBayes(method="ml").fit(X, y)
t3 = time.perf_counter()
q = pd.DataFrame([["Sunny", "Cool", "High", "Strong"]], columns=X.columns)
label = clf.predict(q)[0]
joint = clf.predict_joint_log_proba(q)
t4 = time.perf_counter()
print(json.dumps({"label": str(label), "import": t1 - t0, "load": t2 - t1, "fit": t3 - t2,
                  "predict": t4 - t3}))
"""

COLD_SKLEARN = """
import json, time
t0 = time.perf_counter()
import pandas as pd
from sklearn.naive_bayes import CategoricalNB
from sklearn.preprocessing import OrdinalEncoder
from bayesnb.datasets import load_playtennis
t1 = time.perf_counter()
X, y = load_playtennis()
t2 = time.perf_counter()
enc = OrdinalEncoder().fit(X)
clf = CategoricalNB(alpha=1e-10, force_alpha=True).fit(enc.transform(X), y)
t3 = time.perf_counter()
q = pd.DataFrame([["Sunny", "Cool", "High", "Strong"]], columns=X.columns)
label = clf.predict(enc.transform(q))[0]
t4 = time.perf_counter()
print(json.dumps({"label": str(label), "import": t1 - t0, "load": t2 - t1, "fit": t3 - t2,
                  "predict": t4 - t3}))
"""


def cold(code: str) -> tuple[float, dict]:
    env = dict(os.environ)
    env.pop("JAX_ENABLE_X64", None)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=False)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"cold-start subprocess failed:\n{out.stderr[-2000:]}")
    return wall, json.loads(out.stdout.strip().splitlines()[-1])


def run_coldstart(runs: int, with_sklearn: bool = True) -> tuple[list[Row], dict]:
    ours, refs, phases = [], [], []
    for _ in range(runs):
        w, ph = cold(COLD_OURS)
        ours.append(w)
        phases.append(ph)
        refs.append(cold(COLD_SKLEARN)[0] if with_sklearn else float("nan"))
    labels = {p["label"] for p in phases}
    right = labels == {"No"}  # seed 003: x' = (Sunny, Cool, High, Strong) is a "No" day
    med = {k: statistics.median(p[k] for p in phases) for k in ("import", "load", "fit",
                                                                "predict")}
    row = Row("coldstart", "float32", "python -c: import+fit+predict PlayTennis",
              statistics.median(ours), statistics.median(refs), "sklearn", None,
              1.0 if right else 0.0, None, ours[0], float("nan"), float("nan"), float("nan"),
              float("nan"), note=f"target < {COLDSTART_TARGET_S:g} s wall")
    return [row], med


# ---------------------------------------------------------------------------------- output
def fmt_s(s: float) -> str:
    if s != s:  # NaN
        return "-"
    return f"{s * 1e3:,.0f} ms" if s < 10 else f"{s:,.1f} s"


def fmt_mb(b: float) -> str:
    return "-" if b != b else f"{b:,.0f}"


def table(rows: list[Row]) -> str:
    head = ["case", "dtype", "op", "ours", "reference", "ratio", "target", "status",
            "first call (compile)", "peak MB ours / ref", "sys s ours / ref", "X MB",
            "argmax agree", "max |dp|"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if r.case == "coldstart":
            ratio = "-" if r.ratio != r.ratio else f"{r.ratio:.2f}x"
            target = f"< {COLDSTART_TARGET_S:g} s"
            status = ("WRONG" if r.agree == 0 else
                      "met" if r.ours_s < COLDSTART_TARGET_S else "missed")
            first = fmt_s(r.first_s)
        else:
            ratio = f"{r.ratio:.2f}x"
            target = "-" if r.target is None else f"<= {r.target:g}x"
            status = r.status
            first = f"{fmt_s(r.first_s)} ({fmt_s(r.compile_s)})"
            if r.steady_compile_s > 0.001:
                first += f" RETRACED {fmt_s(r.steady_compile_s)}"
        peak = "-" if r.ours_peak_mb != r.ours_peak_mb else \
            f"{fmt_mb(r.ours_peak_mb)} / {fmt_mb(r.ref_peak_mb)}"
        sys_t = "-" if r.ours_sys_s != r.ours_sys_s else \
            f"{r.ours_sys_s:.2f} / {r.ref_sys_s:.2f}"
        agree = "-" if r.agree is None else f"{100 * r.agree:.3f}%"
        dp = "-" if r.max_abs_dp is None else f"{r.max_abs_dp:.1e}"
        lines.append("| " + " | ".join([
            r.case, r.dtype, r.op, fmt_s(r.ours_s), f"{fmt_s(r.ref_s)} ({r.ref_name})", ratio,
            target, status, first, peak, sys_t, fmt_mb(r.input_mb), agree, dp]) + " |")
    return "\n".join(lines)


def machine() -> dict:
    import jax
    import numpyro
    import pandas
    import scipy
    import sklearn

    model = "unknown"
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    rev = "unknown"
    with contextlib.suppress(Exception):
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=False).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "bayesnb"],
                               capture_output=True, text=True, check=False).stdout.strip()
        rev = head + (" + uncommitted changes in bayesnb/" if dirty else "")
    return {"nproc": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "jax": jax.__version__, "numpyro": numpyro.__version__,
            "sklearn": sklearn.__version__, "numpy": np.__version__, "scipy": scipy.__version__,
            "pandas": pandas.__version__, "bayesnb commit": rev,
            "peak RSS": "per call (clear_refs)" if MEMORY.resettable else "unavailable"}


# ---------------------------------------------------------------------------------- profile
def _med(fn, repeats):
    out, ts = None, []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        out = sync(fn())
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def aligned_empty(shape, dtype, align=64):
    """An uninitialised array whose data start on a 64-byte boundary: ``jax.device_put`` then
    shares the memory instead of copying it (CPU backend)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    buf = np.empty(nbytes + align, dtype=np.uint8)
    off = (-buf.ctypes.data) % align
    return buf[off:off + nbytes].view(dtype).reshape(shape)


def chunk_rows(row_bytes: int) -> int:
    """Rows per streamed chunk: about 8 MB of input (stays in cache), a power of two."""
    c = max(1, (8 << 20) // max(row_bytes, 1))
    return int(min(16384, max(1024, 1 << (c.bit_length() - 1))))


def stream(X, dtype, kernel, consts=(), y=None, n_out=None):
    """The design the prototypes test: rows go through ONE reused 64-byte-aligned buffer of
    ``chunk_rows`` rows in the kernel dtype (converted while copying), which ``jax`` reads
    without a copy; one compiled shape, no padding of the whole array, no fresh n x F memory.
    With ``y``: sums the kernel's per-chunk statistics (fit). Otherwise: writes the kernel's
    (chunk, n_out) output into a float64 result (predict)."""
    import jax

    n, f = X.shape
    c = chunk_rows(f * np.dtype(dtype).itemsize)
    buf = aligned_empty((c, f), dtype)
    codes = np.empty(c, dtype=np.int32)
    out = np.empty((n, n_out)) if y is None else None
    acc = None
    for s in range(0, n, c):
        m = min(c, n - s)
        np.copyto(buf[:m], X[s:s + m], casting="unsafe")
        if m < c:
            buf[m:] = 0
        if y is None:
            out[s:s + m] = np.asarray(kernel(buf, *consts))[:m]
        else:
            codes[:m] = y[s:s + m]
            codes[m:] = -1  # one_hot(-1) is a zero row: padding rows count for nothing
            r = jax.block_until_ready(kernel(buf, codes, *consts))  # buf is reused next
            acc = r if acc is None else jax.tree_util.tree_map(lambda u, v: u + v, acc, r)
    return out if y is None else acc


def prototypes(name, X, y, k, ref):
    """Streamed prototypes of fit and predict_proba for one case (plain JAX, tables taken from
    the fitted scikit-learn ``ref`` so the output can be checked), and host-side alternatives.
    Returns {label: callable}; a predict prototype's last output is checked against ``ref``."""
    import jax
    import jax.numpy as jnp

    ft = jnp.result_type(float)
    X = np.asarray(X)
    f = X.shape[1]
    out = {}

    def softmax(s):
        return jnp.exp(jax.nn.log_softmax(s, axis=1))

    if name in ("multinomial", "bernoulli"):
        if name == "multinomial":
            w, b = ref.feature_log_prob_, ref.class_log_prior_
        else:  # x log p + (1 - x) log(1 - p) = x (log p - log(1 - p)) + sum log(1 - p)
            lp, l1p = ref.feature_log_prob_, np.log1p(-np.exp(ref.feature_log_prob_))
            w, b = lp - l1p, l1p.sum(axis=1) + ref.class_log_prior_
        w, b = jnp.asarray(w, ft), jnp.asarray(b, ft)
        pk = jax.jit(lambda x, w, b: softmax(x @ w.T + b))
        fk = jax.jit(lambda x, c: (jax.nn.one_hot(c, k, dtype=x.dtype).T @ x, jnp.min(x),
                                   jnp.sum(x)))
        out["PROTOTYPE streamed predict_proba (matmul + log_softmax in the kernel)"] = \
            lambda: stream(X, ft, pk, (w, b), n_out=k)
        out["PROTOTYPE streamed fit (counts + min/sum checks)"] = lambda: stream(X, ft, fk, y=y)
        if name == "multinomial":
            from scipy.special import gammaln

            lut = jnp.asarray(gammaln(np.arange(257.0) + 1.0), ft)
            fk2 = jax.jit(lambda x, c: (
                jax.nn.one_hot(c, k, dtype=x.dtype).T @ x, jnp.min(x), jnp.sum(x),
                jnp.sum(jnp.take(lut, jnp.clip(x, 0, 256).astype(jnp.int32)))))
            out["PROTOTYPE streamed fit + log_coef by a log-factorial lookup table"] = \
                lambda: stream(X, ft, fk2, y=y)
            xn = X
            out["host: log_coef = sum gammaln(x + 1) over entries > 1 only (numpy)"] = \
                lambda: gammaln(xn[xn > 1] + 1.0).sum()
    elif name == "gaussian":
        lam = jnp.asarray(1.0 / ref.var_, ft)
        mu = jnp.asarray(ref.theta_, ft)
        c0 = jnp.asarray(np.log(ref.class_prior_) - 0.5 * np.sum(
            np.log(2 * np.pi * ref.var_) + ref.theta_ ** 2 / ref.var_, axis=1), ft)
        pk = jax.jit(lambda x, lam, mu, c0: softmax(
            -0.5 * (x * x) @ lam.T + x @ (lam * mu).T + c0))
        center = jnp.asarray(X[:1000].mean(axis=0), ft)

        def fit_chunk(x, c, center):
            r = jax.nn.one_hot(c, k, dtype=x.dtype)
            d = x - center
            return r.sum(axis=0), r.T @ d, r.T @ (d * d)

        fk = jax.jit(fit_chunk)
        out["PROTOTYPE streamed predict_proba (2 matmuls + log_softmax in the kernel)"] = \
            lambda: stream(X, ft, pk, (lam, mu, c0), n_out=k)
        out["PROTOTYPE streamed fit (centred sums per class)"] = \
            lambda: stream(X, ft, fk, (center,), y=y)
    elif name == "categorical":
        levels = int(X.max()) + 1
        lv = jnp.arange(levels, dtype=jnp.int32)
        tab = jnp.asarray(np.concatenate(ref.feature_log_prob_, axis=1), ft)  # (K, F*L)
        prior = jnp.asarray(ref.class_log_prior_, ft)

        def onehot(x):
            return (x[:, :, None] == lv).reshape(x.shape[0], f * levels).astype(ft)

        pk = jax.jit(lambda x, t, p: softmax(onehot(x) @ t.T + p))
        fk = jax.jit(lambda x, c: jax.nn.one_hot(c, k, dtype=ft).T @ onehot(x))
        out["PROTOTYPE streamed predict_proba (level one-hot @ table + log_softmax)"] = \
            lambda: stream(X, np.int32, pk, (tab, prior), n_out=k)
        out["PROTOTYPE streamed fit (class one-hot.T @ level one-hot)"] = \
            lambda: stream(X, np.int32, fk, y=y)
        out["host: levels by np.unique per column (what learn_schema could do)"] = \
            lambda: [np.unique(X[:, j]) for j in range(f)]
        out["host: levels by np.bincount per column (small non-negative ints)"] = \
            lambda: [np.flatnonzero(np.bincount(X[:, j])) for j in range(f)]
        out["host: codes by np.searchsorted per column (what encode could do)"] = \
            lambda: [np.searchsorted(np.arange(levels), X[:, j]) for j in range(f)]
        out["host: X.astype(object) (the first step of Categorical.encode)"] = \
            lambda: X.astype(object)

    if X.dtype.kind == "f":
        out["host: checks by reductions x.min(), x.max(), isnan(x.sum())"] = \
            lambda: (X.min(), X.max(), np.isnan(X.sum()))
        xa = aligned_empty(X.shape, ft)
        out["host: copy X into a NEW 64-byte-aligned array (fresh pages)"] = \
            lambda: np.copyto(aligned_empty(X.shape, ft), X, casting="unsafe")
        out["host: copy X into an EXISTING aligned array (pages already mapped)"] = \
            lambda: np.copyto(xa, X, casting="unsafe")
        out["jax.device_put(aligned array in the kernel dtype): zero-copy"] = \
            lambda: jax.device_put(xa)
        out["jax.device_put(X as given): XLA copies (and converts)"] = lambda: jax.device_put(X)
    scores = np.random.default_rng(0).normal(size=(X.shape[0], k)) * 50
    out["host: scipy.special.logsumexp on an (n, K) float64 array"] = \
        lambda: __import__("scipy.special").special.logsumexp(scores, axis=1, keepdims=True)

    def lse(a):
        m = a.max(axis=1, keepdims=True)
        return np.log(np.exp(a - m).sum(axis=1, keepdims=True)) + m

    out["host: max-shifted numpy logsumexp on the same array"] = lambda: lse(scores)
    return out


def exact_bayes_prototype(X, y, k, rows):
    """Dirichlet-multinomial predictive for integer counts as matmuls:
    sum_v lgamma(a_kv + x_v) - lgamma(a_kv) = sum_{c=1..max x} [x >= c] @ log(a + c - 1).T."""
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import gammaln

    ft = jnp.result_type(float)
    counts = np.zeros((k, X.shape[1]))
    for c in range(k):
        counts[c] = X[y == c].sum(axis=0)
    a = jnp.asarray(counts + 1.0, ft)
    lp = jnp.asarray(np.log(np.bincount(y, minlength=k) / len(y)), ft)

    @jax.jit
    def kernel(x, a, lp, m):
        def body(c, acc):
            return acc + (x >= c).astype(x.dtype) @ jnp.log(a + (c - 1)).T
        per = jax.lax.fori_loop(1, m + 1, body, jnp.zeros((x.shape[0], a.shape[0]), x.dtype))
        a0, n = a.sum(axis=1), x.sum(axis=1, keepdims=True)
        return jnp.exp(jax.nn.log_softmax(lp + gammaln(a0) - gammaln(a0 + n) + per, axis=1))

    xs = np.asarray(X[:rows], dtype=ft)
    m = int(xs.max())
    return lambda: np.asarray(kernel(xs, a, lp, m), dtype=np.float64)


def profile_case(name, X, y, family, method, k, dtype, repeats,
                 make_ref) -> list[tuple[str, float]]:
    """Stage-by-stage times of our fit and predict_proba, through the library's internals as of
    this commit (a stage whose internals moved reports 'n/a')."""
    import jax.numpy as jnp

    import bayesnb as bnb
    from bayesnb import _data, _kernels, estimator

    res: list[tuple[str, float]] = []

    def stage(label, fn):
        try:
            if label.startswith("PROTOTYPE"):
                sync(fn())  # compile first: prototypes are timed in steady state like ours
            t, out = _med(fn, repeats)
        except Exception as err:  # internals changed under us
            res.append((f"{label}  [n/a: {type(err).__name__}: {str(err)[:60]}]", float("nan")))
            return None
        res.append((label, t))
        return out

    with policy(dtype):
        clf = bnb.NaiveBayes(family, method=method, class_alpha=0)
        clf.fit(X, y)
        clf.predict_proba(X)  # warm every kernel
        t, _ = _med(lambda: clf.fit(X, y), repeats)
        res.append(("FIT total (measured)", t))
        table = stage("  as_table(X)", lambda: _data.as_table(X))
        enc = stage("  encode_labels(y)", lambda: _data.encode_labels(y, len(y)))
        spec = _data.resolve_features(clf.features, table)[0] if table is not None else None
        raw = stage("  Table.block (column selection)",
                    lambda: table.block(spec.columns, spec.positions)) if spec else None
        schema = stage("  family.learn_schema", lambda: spec.family.learn_schema(
            raw, spec.columns)) if raw is not None else None
        if enc is not None and schema is not None:
            codes, weight = enc[1], np.ones(len(y), dtype=jnp.result_type(float))
            fams, levels = (type(spec.family),), (estimator._levels(schema),)
            sources = [estimator._source(spec.family, raw, schema, "error")]
            stage("  stream_suff_stats (staging copies + kernels, as fit calls it)",
                  lambda: _kernels.stream_suff_stats(fams, levels, k, sources, codes, weight))
            streamed_halves(stage, _kernels, sources, len(y), lambda xs, c, w: (
                _kernels.suff_stats(fams, levels, k, xs, c, w)), codes, weight)
        stage("  _prediction_state (estimates, checks)",
              lambda: (clf.__dict__.pop("_state", None), clf._prediction_state()))

        t, _ = _med(lambda: clf.predict_proba(X), repeats)
        res.append(("PREDICT_PROBA total (measured)", t))
        blocks = stage("  _raw_blocks (as_table, column selection, unseen levels)",
                       lambda: clf._raw_blocks(X))
        if blocks is not None:
            (raw,), unseen, n = blocks
            block = clf.blocks_[0]
            fams, exact, log_prior, tables = clf._prediction_state()
            levels = (estimator._levels(block.schema),)
            sources = [estimator._source(block.family, raw, block.schema, unseen)]
            stage("  stream_scores (staging copies + kernels + float64 finish)",
                  lambda: _kernels.stream_scores(fams, levels, exact, "proba", log_prior,
                                                 tables, sources, n, k))
            streamed_halves(stage, _kernels, sources, n, lambda xs, c, w: _kernels.scores(
                fams, levels, exact, "proba", log_prior, tables, xs))
        ref = make_ref()
        t_fit, _ = _med(lambda: ref.fit(X, y), repeats)
        t_pp, q = _med(lambda: ref.predict_proba(X), repeats)
        res.append(("SKLEARN fit, same process", t_fit))
        res.append(("SKLEARN predict_proba, same process", t_pp))
        for label, fn in prototypes(name, X, y, k, ref).items():
            out = stage(label, fn)
            if label.startswith("PROTOTYPE") and "predict" in label and out is not None:
                res[-1] = (res[-1][0] + f"  [argmax agrees with sklearn on "
                           f"{100 * np.mean(out.argmax(1) == q.argmax(1)):.3f}%]", res[-1][1])
        if name == "multinomial":
            rows = min(5_000, len(y))
            Xs = X[:rows]
            clf.set_params(method="bayes")
            clf.predict_proba(Xs)
            stage(f"method='bayes' predict_proba, first {rows} rows (library)",
                  lambda: clf.predict_proba(Xs))
            proto = exact_bayes_prototype(X, y, k, rows)
            proto()
            p = stage(f"PROTOTYPE exact Bayes as [X >= c] matmuls, first {rows} rows", proto)
            if p is not None:
                refp = dirichlet_multinomial_reference(X, y, min(300, rows), k)
                agree, dp = agreement(p[:len(refp)], refp)
                res[-1] = (res[-1][0] + f"  [vs float64 SciPy: argmax {100 * agree:.1f}%, "
                           f"max |dp| {dp:.1e}]", res[-1][1])
    return res


def streamed_halves(stage, _kernels, sources, n, kernel, codes=None, weight=None):
    """The two halves of a streamed pass, timed apart: every chunk's staging copy, and the
    kernel run as many times on one chunk already on the device (cache-warm: a lower bound)."""
    import jax

    rows = _kernels.chunk_rows(n, _kernels._row_bytes(sources))
    chunks = range(0, n, rows)
    staging = _kernels._Staging(sources, rows)
    stage(f"    of which staging copies ({len(chunks)} chunks of {rows} rows)",
          lambda: [staging.fill(i, s, min(s + rows, n)) for i, s in enumerate(chunks)])
    xs = tuple(jax.device_put(x) for x in staging.fill(0, 0, min(rows, n)))
    c = w = None
    if codes is not None:
        c = jax.device_put(_kernels.pad_rows(codes[:rows].astype(np.int32), rows))
        w = jax.device_put(_kernels.pad_rows(weight[:rows], rows))
    stage(f"    of which kernel, one device-resident chunk x {len(chunks)}",
          lambda: [sync(kernel(xs, c, w)) for _ in chunks])


def profile_coldstart(runs: int) -> list[tuple[str, float]]:
    res = []
    for label, code in [("python -c pass", "pass"), ("import numpy", "import numpy"),
                        ("import pandas", "import pandas"), ("import jax", "import jax"),
                        ("import jax, numpyro", "import jax, numpyro, numpyro.distributions"),
                        ("import sklearn.base", "import sklearn.base"),
                        ("import bayesnb", "import bayesnb")]:
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            ts.append(time.perf_counter() - t0)
        res.append((f"subprocess: {label}", statistics.median(ts)))
    phases = [cold(COLD_OURS)[1] for _ in range(runs)]
    for k in ("import", "load", "fit", "predict"):
        res.append((f"PlayTennis script phase: {k}", statistics.median(p[k] for p in phases)))
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import bayesnb"],
                         capture_output=True, text=True, check=True).stderr
    cum: dict[str, int] = {}
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            cum.setdefault(parts[2].strip(), int(parts[1]))
    for mod in ("bayesnb", "bayesnb.estimator", "bayesnb.families", "bayesnb.coursework",
                "bayesnb.persistence", "jax", "numpyro", "numpyro.distributions", "pandas",
                "scipy.stats", "sklearn.base", "arviz"):
        if mod in cum:
            res.append((f"-X importtime cumulative (first import): {mod}", cum[mod] / 1e6))
    return res


# ---------------------------------------------------------------------------------- main
def main(argv=None) -> int:
    global MEMORY, CLOCK

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small shapes (smoke run)")
    parser.add_argument("--only", action="append", choices=CASES, metavar="NAME",
                        help=f"run only this case (repeatable): {', '.join(CASES)}")
    parser.add_argument("--repeats", type=int, default=None,
                        help="steady-state calls per side after the warm-up call "
                             "(default: 3, and 2 for the 200,000 x 1,000 cases; quick: 1)")
    parser.add_argument("--dtype", choices=(*DTYPES, "both"), default="both",
                        help="dtype policy: float32 (JAX default), float64 (enable_x64)")
    parser.add_argument("--profile", action="store_true",
                        help="stage-by-stage breakdown of our fit/predict instead of the table")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = parser.parse_args(argv)

    t_start = time.perf_counter()
    cfg = QUICK if args.quick else FULL
    repeats = args.repeats or cfg["repeats"]
    # the 200,000 x 1,000 cases take seconds per call: fewer repeats keep the run near 8 min
    repeats_big = args.repeats or cfg["repeats_big"]
    only = set(args.only or CASES)
    dtypes = DTYPES if args.dtype == "both" else (args.dtype,)

    MEMORY = Memory()
    CLOCK = CompileClock()
    info = machine()
    print("# bayesnb benchmarks" + (" (--quick)" if args.quick else ""))
    print("; ".join(f"{k}: {v}" for k, v in info.items()), flush=True)
    print(f"repeats: {repeats} steady calls per side after one warm-up call "
          f"({repeats_big} for multinomial and bernoulli); "
          f"dtype policies: {', '.join(dtypes)}\n", flush=True)

    if args.profile:
        return run_profile(args, cfg, only, dtypes, repeats)

    rows: list[Row] = []
    extra: dict = {}

    def progress(msg):
        print(f"[{time.perf_counter() - t_start:6.1f} s] {msg}", file=sys.stderr, flush=True)

    if only & {"multinomial", "bayes"}:
        shape = cfg["multinomial"]
        progress(f"multinomial data {shape}")
        data = make_multinomial(*shape)
        for dt in dtypes:
            progress(f"multinomial {dt}")
            rows += run_multinomial(shape, dt, repeats_big, "multinomial" in only, "bayes" in only,
                                    cfg["bayes"], cfg["bayes_check"], data)
        del data
    if "bernoulli" in only:
        shape = cfg["bernoulli"]
        progress(f"bernoulli data {shape}")
        data = make_bernoulli(*shape)
        for dt in dtypes:
            progress(f"bernoulli {dt}")
            rows += run_bernoulli(shape, dt, repeats_big, data)
        del data
    if "gaussian" in only:
        shape = cfg["gaussian"]
        progress(f"gaussian data {shape}")
        data = make_gaussian(*shape)
        for dt in dtypes:
            progress(f"gaussian {dt}")
            rows += run_gaussian(shape, dt, repeats, data)
        del data
    if "categorical" in only:
        shape = cfg["categorical"]
        progress(f"categorical data {shape}")
        data = make_categorical(*shape)
        for dt in dtypes:
            progress(f"categorical {dt}")
            rows += run_categorical(shape, dt, repeats, data)
        del data
    if "coldstart" in only:
        progress("cold start")
        cs_rows, extra["coldstart_phases_s"] = run_coldstart(cfg["coldstart_runs"],
                                                             with_sklearn=not args.quick)
        rows += cs_rows

    print(table(rows))
    notes = dict.fromkeys(f"{r.case} {r.dtype}: {r.note}" for r in rows if r.note)
    if notes:
        print("\n" + "\n".join(f"- {n}" for n in notes))
    if "coldstart_phases_s" in extra:
        ph = extra["coldstart_phases_s"]
        print("\ncold start phases inside the subprocess (median): " +
              ", ".join(f"{k} {fmt_s(v)}" for k, v in ph.items()))
    print("\nours: steady-state median (compile excluded). first call: the warm-up call's wall "
          "time, (of which JAX trace+lower+compile). peak MB: extra resident memory during one "
          "steady call. status: met if ratio <= target and argmax agreement >= 99.9%.")
    total = time.perf_counter() - t_start
    print(f"total wall time: {total:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "quick": args.quick, "repeats": repeats,
                       "rows": [asdict(r) | {"ratio": r.ratio, "status": r.status}
                                for r in rows], **extra}, f, indent=1)
    return 0


def run_profile(args, cfg, only, dtypes, repeats) -> int:
    from sklearn.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB, MultinomialNB

    import bayesnb as bnb

    specs = {
        "multinomial": (make_multinomial, lambda: bnb.Multinomial(alpha=1.0), "mean",
                        lambda: MultinomialNB(alpha=1.0)),
        "bernoulli": (make_bernoulli, lambda: bnb.Bernoulli(alpha=1.0, beta=1.0), "mean",
                      lambda: BernoulliNB(alpha=1.0)),
        "gaussian": (make_gaussian, lambda: bnb.Gaussian(), "ml",
                     lambda: GaussianNB(var_smoothing=0.0)),
        "categorical": (make_categorical, lambda: bnb.Categorical(alpha=1.0), "mean",
                        lambda: CategoricalNB(alpha=1.0)),
    }
    for name, (make, family, method, make_ref) in specs.items():
        if name not in only:
            continue
        shape = cfg[name]
        X, y = make(*shape)
        for dt in dtypes:
            Xd = X
            if name == "gaussian" and dt == "float32":
                Xd = X.astype(np.float32)
            elif name in ("multinomial", "bernoulli") and dt == "float64":
                Xd = X.astype(np.float64)
            res = profile_case(name, Xd, y, family(), method, shape[2], dt, repeats, make_ref)
            print(f"## {name} {dt}: X {Xd.shape} {Xd.dtype} ({Xd.nbytes / 2**20:,.0f} MB)")
            for label, t in res:
                print(f"  {fmt_s(t):>10}  {label}")
            print(flush=True)
            del Xd
    if "coldstart" in only:
        print("## cold start")
        for label, t in profile_coldstart(cfg["coldstart_runs"]):
            print(f"  {fmt_s(t):>10}  {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
