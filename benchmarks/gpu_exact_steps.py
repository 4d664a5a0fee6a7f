r"""The exact predictive's indicator steps ``S`` on an accelerator (issue 12 sections 1 and 5).

On the CPU, ``_exact.choose_steps`` weighs one more indicator product against the host's work
on the counts past ``S``. On a GPU the products are nearly free, and the host's tails are what
the call waits on, so there ``S`` is the smallest choice that leaves at most
``_exact.ACCELERATOR_TAIL_ROWS`` of the sampled rows to the host (``_exact._accelerator_steps``).
This script times both rules in one process on ``jax.devices()[0]``, alternating calls, against
the plug-in on the same rows. It checks each rule against the float64 SciPy
Dirichlet-multinomial (``gpu.exact_reference``), and the plug-in against float64 NumPy
(``gpu.plugin_reference``):

    python benchmarks/gpu_exact_steps.py                  # 200,000 x 1,000 float32 counts
    python benchmarks/gpu_exact_steps.py --rows 20000 --repeats 3
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpu import class_counts64, exact_reference, make_counts, plugin_reference  # noqa: E402
from harness import agreement  # noqa: E402

CHECK = 2_000


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--cols", type=int, default=1_000)
    p.add_argument("--classes", type=int, default=20)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)

    import jax

    import bayesnb as bnb
    from bayesnb.fast import _exact, _kernels

    dev = jax.devices()[0]
    print(f"device: {dev} (platform {dev.platform}, "
          f"device_kind {getattr(dev, 'device_kind', '?')!r})")
    X, y = make_counts(args.rows, args.cols, args.classes)
    counts = class_counts64(X, y, args.classes)
    check = min(CHECK, args.rows)
    refs = {"plug-in": plugin_reference(X, y, counts, check),
            "exact": exact_reference(X, y, counts, check)}
    plug = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0).fit(X, y)
    exact = copy.deepcopy(plug).set_params(method="bayes")
    accelerator = _kernels.budget_scale() > 1

    def rule(on_accelerator: bool):
        def choose(sample):
            scale = _kernels.budget_scale
            _kernels.budget_scale = lambda: (_kernels.ACCELERATOR_BUDGET_SCALE
                                             if on_accelerator else 1)
            try:
                return choose_steps(sample)
            finally:
                _kernels.budget_scale = scale
        return choose

    choose_steps = _exact.choose_steps
    sample = X[:_exact.SAMPLE_ROWS]
    variants = {"plug-in (method='mean')": (None, lambda: plug.predict_proba(X))}
    for name, on_acc in (("exact, accelerator rule", True), ("exact, CPU rule", False)):
        pick = rule(on_acc)
        variants[f"{name} (S = {pick(sample)})"] = (pick, lambda: exact.predict_proba(X))

    def run(pick, fn):
        _exact.choose_steps = pick or choose_steps
        try:
            t = time.perf_counter()
            out = fn()
            return time.perf_counter() - t, out
        finally:
            _exact.choose_steps = choose_steps

    times = {name: [] for name in variants}
    outs = {}
    for name, (pick, fn) in variants.items():  # warm-up: compiles
        outs[name] = run(pick, fn)[1]
    for _ in range(args.repeats):
        for name, (pick, fn) in variants.items():
            times[name].append(run(pick, fn)[0])
    plug_s = statistics.median(times["plug-in (method='mean')"])
    print(f"{args.rows:,} x {args.cols:,} float32 Poisson counts, {args.classes} classes; "
          f"this backend {'is' if accelerator else 'is not'} an accelerator; medians of "
          f"{args.repeats} alternating calls after one warm-up each\n")
    print("| variant | median | / plug-in | argmax agree | max |dp| vs float64 NumPy/SciPy |")
    print("|---|---|---|---|---|")
    for name, ts in times.items():
        agree, dp = agreement(outs[name][:check], refs[name.split(" (")[0].split(",")[0]])
        print(f"| {name} | {1e3 * statistics.median(ts):,.0f} ms | "
              f"{statistics.median(ts) / plug_s:.2f}x | {100 * agree:.3f}% | {dp:.1e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
