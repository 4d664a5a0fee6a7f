"""bayesnb against scikit-learn at its fastest correct settings, side by side in one process.

Every row times one operation of one case: our steady-state median (the first call, which
compiles, is a warm-up and is reported on its own), the reference's median on the same array in
the same process, the ratio ours / reference and the target. The calls alternate (ours,
reference, reference, ours, ...) so drifting machine load hits both sides alike. Read the
ratios, not the absolute times: on a shared 2-vCPU machine the same script moves by 0.4x-1.7x
between runs (``README.md``, "What bounds each figure").

A fast wrong answer cannot pass: a row is "met" only if the argmax of our ``predict_proba``
equals the reference's on at least 99.9% of rows (for ``method="bayes"``: a float64 SciPy
computation of the exact predictive on a sample of rows).

The cases live in ``cases/``, one module each (data maker, our estimator, the reference and its
settings); this file only parses options, runs the chosen cases and prints the table. The
measuring is in ``harness.py``, ``--profile``'s stages in ``profiling.py``.

Usage::

    python benchmarks/run.py                       # full run, about 10 minutes
    python benchmarks/run.py --quick               # small shapes, under a minute
    python benchmarks/run.py --only gaussian --only coldstart --repeats 5
    python benchmarks/run.py --dtype float32       # one dtype policy only
    python benchmarks/run.py --profile --only multinomial   # where the time goes, by stage
    python benchmarks/run.py --json results.json   # also write the rows as JSON

Cases (``--only``): multinomial, bayes, bernoulli, gaussian, categorical, wide_categorical,
draws (not in ``--quick`` unless named), coldstart.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from cases import REGISTRY  # noqa: E402
from harness import DTYPES, Context, fmt_s, machine, progress_printer, table  # noqa: E402

CASES = tuple(REGISTRY)


def parse(argv):
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
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    t_start = time.perf_counter()
    harness.FREEZE_SURVIVORS = args.quick
    progress = progress_printer()

    ctx = Context(quick=args.quick,
                  dtypes=DTYPES if args.dtype == "both" else (args.dtype,),
                  repeats=args.repeats or (1 if args.quick else 3),
                  # the 200,000 x 1,000 cases take seconds per call: fewer repeats
                  repeats_big=args.repeats or (1 if args.quick else 2),
                  progress=progress)
    chosen = [case for name, case in REGISTRY.items()
              if (name in args.only if args.only else case.in_quick or not args.quick)]

    info = machine()
    print("# bayesnb benchmarks" + (" (--quick)" if args.quick else ""))
    print("; ".join(f"{k}: {v}" for k, v in info.items()), flush=True)
    print(f"repeats: {ctx.repeats} steady calls per side after one warm-up call and "
          f"{harness.SETTLE_CALLS} untimed settling calls "
          f"({ctx.repeats_big} for multinomial and bernoulli); "
          f"dtype policies: {', '.join(ctx.dtypes)}\n", flush=True)

    if args.profile:
        from profiling import print_profile

        for case in chosen:
            if case.profile is not None:
                for title, stages in case.profile(ctx):
                    print_profile(title, stages)
        return 0

    rows = []
    for case in chosen:
        rows += case.run(ctx)

    print(table(rows))
    notes = dict.fromkeys(f"{r.case} {r.dtype}: {r.note}" for r in rows if r.note)
    if notes:
        print("\n" + "\n".join(f"- {n}" for n in notes))
    if "coldstart_phases_s" in ctx.extra:
        print("\ncold start phases inside the subprocess (median): " +
              ", ".join(f"{k} {fmt_s(v)}" for k, v in ctx.extra["coldstart_phases_s"].items()))
    print("\nours: steady-state median (compile excluded). first call: the warm-up call's wall "
          "time, (of which JAX trace+lower+compile). peak MB: extra resident memory during one "
          "steady call. status: met if ratio <= target and argmax agreement >= 99.9%.")
    print(f"total wall time: {time.perf_counter() - t_start:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "quick": args.quick, "repeats": ctx.repeats,
                       "rows": [asdict(r) | {"ratio": r.ratio, "status": r.status}
                                for r in rows], **ctx.extra}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
