"""Measuring one operation side by side with its reference, and printing the rows.

Used by ``run.py`` and the case modules in ``cases/``. Each timed call resets the kernel's
resident-memory high-water mark first (``/proc/self/clear_refs``), counts the seconds JAX spends
compiling during it (``jax.monitoring``) and the kernel CPU time (``getrusage``). ``pair`` runs
ours and the reference alternately (ours, ref, ref, ours, ...) so that drifting machine load
hits both sides alike.
"""

from __future__ import annotations

import contextlib
import gc
import os
import platform
import resource
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

DTYPES = ("float32", "float64")
#: ours / scikit-learn must be at most this (issue 6, issue 12 section 3)
TARGET = {"float32": 0.5, "float64": 1.0}
COLDSTART_TARGET_S = 3.0
AGREE_MIN = 0.999


# ---------------------------------------------------------------------------------- context
@dataclass
class Context:
    """What a case needs to know about this run."""

    quick: bool
    dtypes: tuple[str, ...]
    repeats: int  # steady calls per side after the warm-up call
    repeats_big: int  # the same, for the 200,000 x 1,000 cases
    progress: Callable[[str], None] = print
    extra: dict = field(default_factory=dict)  # printed below the table, written to --json

    def pick(self, full, quick):
        return quick if self.quick else full


@dataclass(frozen=True)
class Case:
    """One benchmark case: ``run`` returns its table rows; ``profile`` (optional) returns
    ``[(title, [(stage label, seconds), ...]), ...]`` for ``--profile``."""

    name: str
    run: Callable[[Context], list]
    full: tuple | None = None  # the shape the full run uses (for other scripts and the notes)
    quick_shape: tuple | None = None
    profile: Callable[[Context], list] | None = None
    in_quick: bool = True  # False: skipped under --quick unless named with --only


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


_MEMORY: Memory | None = None
_CLOCK: CompileClock | None = None


def progress_printer() -> Callable[[str], None]:
    """A function printing a message to stderr with the seconds since it was made."""
    start = time.perf_counter()

    def progress(msg: str) -> None:
        import sys

        print(f"[{time.perf_counter() - start:6.1f} s] {msg}", file=sys.stderr, flush=True)

    return progress


def instruments() -> tuple[Memory, CompileClock]:
    """The process's memory meter and compile clock, created on first use."""
    global _MEMORY, _CLOCK
    if _MEMORY is None:
        _MEMORY, _CLOCK = Memory(), CompileClock()
    return _MEMORY, _CLOCK


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


def median_time(fn: Callable, repeats: int) -> float:
    """Median wall seconds of ``repeats`` calls after one warm-up call (the probe scripts'
    plain timing, without ``call``'s memory and compile instruments)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def alternating_medians(variants: dict, repeats: int) -> dict:
    """Median wall seconds of each of ``variants`` (name: call), after one warm-up call each,
    the variants called in turn ``repeats`` times (the part-by-part probe scripts); each call
    waits for its JAX results."""
    import jax

    for fn in variants.values():
        jax.block_until_ready(fn())
    times: dict = {name: [] for name in variants}
    for _ in range(repeats):
        for name, fn in variants.items():
            t0 = time.perf_counter()
            jax.block_until_ready(fn())
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def print_ratios(title: str, times: dict, base: str) -> None:
    """A section of :func:`alternating_medians`' times, each as a ratio to ``base``'s."""
    print(f"\n## {title}")
    for name, t in times.items():
        print(f"{t * 1e3:8.3f} ms  {t / times[base]:5.2f}x  {name}")


def collect_garbage() -> None:
    """Collect earlier calls' garbage before a timed call. The first time, everything alive
    then (the imported modules, mostly) goes into the collector's permanent generation
    (``gc.freeze``), so each later collection scans only what was made since. With
    :data:`FREEZE_SURVIVORS` (``--quick``) every collection's survivors are frozen too."""
    global _FROZEN
    gc.collect()
    if not _FROZEN or FREEZE_SURVIVORS:
        gc.freeze()
        _FROZEN = True


_FROZEN = False
#: freeze every collection's survivors (JAX's kernel caches, rescanned by each collection); set
#: under ``--quick`` only, since garbage frozen this way is never freed
FREEZE_SURVIVORS = False


def call(fn: Callable) -> Call:
    memory, clock = instruments()
    collect_garbage()
    base = memory.start()
    c0 = clock.total
    r0 = resource.getrusage(resource.RUSAGE_SELF).ru_stime
    gc.disable()  # as timeit does: a collection of earlier garbage is not this call's cost
    try:
        t0 = time.perf_counter()
        out = sync(fn())
        dt = time.perf_counter() - t0
    finally:
        gc.enable()
    sys_s = resource.getrusage(resource.RUSAGE_SELF).ru_stime - r0
    return Call(dt, memory.peak_since(base), clock.total - c0, sys_s, out)


@dataclass
class Pair:
    """First calls and steady-state medians of ours and a reference, measured alternately."""

    ours_first: Call
    ref_first: Call
    ours: list
    ref: list

    def _median(self, side, attr):
        return statistics.median(getattr(c, attr) for c in side)

    @property
    def ours_s(self):
        return self._median(self.ours, "seconds")

    @property
    def ref_s(self):
        return self._median(self.ref, "seconds")

    @property
    def ours_peak(self):
        return self._median(self.ours, "peak_bytes")

    @property
    def ref_peak(self):
        return self._median(self.ref, "peak_bytes")

    @property
    def ours_sys(self):
        return self._median(self.ours, "sys_s")

    @property
    def ref_sys(self):
        return self._median(self.ref, "sys_s")

    @property
    def steady_compile_s(self):
        return sum(c.compile_s for c in self.ours)

    @property
    def ours_out(self):
        return self.ours[-1].out

    @property
    def ref_out(self):
        return self.ref[-1].out


#: untimed calls per side after the first, before the timed ones: glibc's malloc serves a large
#: block from fresh pages until it has freed one as large, so the calls after the first (which
#: compiles) page-fault their new temporaries (1,700 faults, 2-5 ms a call of a 3-4 ms fit)
SETTLE_CALLS = 2


def pair(ours: Callable, ref: Callable, repeats: int) -> Pair:
    first_o = call(ours)
    first_r = call(ref)
    for _ in range(SETTLE_CALLS):
        call(ours)
        call(ref)
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


def agreement(p, q) -> tuple[float, float]:
    """Fraction of rows whose argmax agrees, and the largest absolute probability difference."""
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


# ---------------------------------------------------------------------------------- rows
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


def fit_and_proba(name, X, y, make_ours, make_ref, dtype, repeats, reference, target=None):
    """fit and predict_proba, ours against the reference estimator, on the same array.

    ``reference`` is the reference's constructor as written in the notes (its settings)."""
    target = TARGET[dtype] if target is None else target
    with policy(dtype):
        ours, ref = make_ours(), make_ref()
        fit = pair(lambda: ours.fit(X, y), lambda: ref.fit(X, y), repeats)
        proba = pair(lambda: ours.predict_proba(X), lambda: ref.predict_proba(X), repeats)
        agree, dp = agreement(proba.ours_out, proba.ref_out)
    note = f"{'x'.join(str(s) for s in X.shape)} {X.dtype}; reference {reference}"
    return [row_from(fit, name, dtype, "fit", "sklearn", target, agree, dp, X.nbytes, note),
            row_from(proba, name, dtype, "predict_proba", "sklearn", target, agree, dp,
                     X.nbytes, note)]


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
    from importlib.metadata import version

    import jax
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
    memory, _ = instruments()
    # NumPyro's version from its metadata: importing it would cost 1 s, for the version alone
    return {"nproc": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "jax": jax.__version__, "numpyro": version("numpyro"),
            "sklearn": sklearn.__version__, "numpy": np.__version__, "scipy": scipy.__version__,
            "pandas": pandas.__version__, "bayesnb commit": rev,
            "peak RSS": "per call (clear_refs)" if memory.resettable else "unavailable"}
