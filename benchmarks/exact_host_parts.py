"""What the exact predictive (``method="bayes"``) spends on the host, part by part (issue 12
section 1: the Poisson float64 dense cell, at the 2x line at stop 32).

On ``run.py``'s Poisson counts (20,000 x 200, 20 classes, rates from Gamma(2, 1)), fitted as
its ``bayes`` case fits them, in the float64 policy (``--x32``: float32):

- one chunk's host tail (the terms of the counts past ``S``, from the cumulative table):
  found by the host in the chunk itself (``_sparse._listed_tail``, stop 32) and from the score
  kernel's table positions (``_sparse._positioned_tail``, stop 33), and the positions'
  elementwise pass in a kernel of its own (``_steps.tail_positions``);
- the normalisation of the 20,000 x 20 float64 exact scores: as at stop 32 (NumPy's passes
  over ``(rows, K)`` chunks, copied here) and now (``scoring.normalised``: each chunk
  transposed, the reductions over the classes along its first axis);
- the whole ``predict_proba``: as stop 32 made it (the tail found in the chunk, NumPy's
  normalisation: both restored by patching), as it is now, and the plug-in (``"mean"``), the
  reference of ``run.py``'s ratio.

Every part's answer is checked (the tails against SciPy's log-Gamma differences, the
normalisations against ``scipy.special.softmax``, the two ``predict_proba`` against each
other) and a wrong one fails the script. Timings: medians of ``--repeats`` calls, the variants
of a section alternating.

Usage::

    python benchmarks/exact_host_parts.py [--x32] [--repeats 200]
"""

import argparse
import copy
import sys
from pathlib import Path

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--x32", action="store_true", help="float32 policy (default: float64)")
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()

    import jax

    jax.config.update("jax_enable_x64", not args.x32)
    import jax.numpy as jnp
    from scipy.special import gammaln, softmax

    import bayesnb as bnb
    from bayesnb import scoring
    from bayesnb.fast import _exact, _sparse
    from bayesnb.fast._steps import tail_positions

    sys.path.insert(0, str(Path(__file__).parent))
    from cases.bayes import FULL, POISSON_PRIOR, make_poisson
    from harness import alternating_medians, print_ratios

    n, f, k, _ = FULL["poisson"]
    X, y = make_poisson(n, f, k)
    X = X.astype(np.float32 if args.x32 else np.float64)
    exact = bnb.NaiveBayes(bnb.Poisson(**POISSON_PRIOR), method="bayes", class_alpha=0).fit(X, y)
    mean = copy.deepcopy(exact).set_params(method="mean")
    # the posterior Gamma shapes, (K, F): the prior's plus each class's column totals
    a = POISSON_PRIOR["shape"] + np.stack([X[y == c].sum(axis=0, dtype=np.float64)
                                           for c in range(k)])
    steps = _exact.choose_steps(X[:min(_exact.SAMPLE_ROWS, _exact.SAMPLE_CELLS // f)])
    rows = 2048
    x = np.ascontiguousarray(X[rows:2 * rows])

    def timed(variants: dict) -> dict:
        return alternating_medians(variants, args.repeats)

    past = x.astype(np.float64) > steps
    print(f"# Poisson counts {n:,} x {f:,}, {k} classes, {x.dtype.name} policy; S = {steps}; "
          f"{past.mean():.0%} of a chunk's counts past S; jax {jax.__version__}; medians of "
          f"{args.repeats}, alternating")

    # the tail: sum over t = S .. x - 1 of log(1 + t / a) = the log-Gamma difference
    x64 = x.astype(np.float64)
    terms = np.where(past[:, None, :], gammaln(a[None] + x64[:, None, :])
                     - gammaln(a[None] + steps) - (x64[:, None, :] - steps) * np.log(a[None]),
                     0.0)
    expected = terms.sum(axis=2)
    cum = _sparse.cumulative_rising(a, steps)
    top = np.int32(_sparse.cumulative_top(k, f))
    table = jnp.zeros(((steps - 1) * f, k), x.dtype)
    positions_kernel = jax.jit(tail_positions)
    positions = np.asarray(positions_kernel(x, table, top))
    variants = {"found in the chunk (_listed_tail, stop 32)": lambda: _sparse._listed_tail(
                    x, steps, cum),
                "from the kernel's positions (_positioned_tail)": lambda: _sparse.
                _positioned_tail(positions, cum)}
    for name, call in variants.items():
        if not np.allclose(call(), expected, rtol=1e-9, atol=1e-9):
            sys.exit(f"the tail {name}: not SciPy's")
    variants["the positions' pass alone (tail_positions, a kernel of its own)"] = (
        lambda: positions_kernel(x, table, top))
    print_ratios(f"one {rows:,}-row chunk's host tail", timed(variants),
           "found in the chunk (_listed_tail, stop 32)")

    scores = np.asarray(exact.predict_joint_log_proba(X), dtype=np.float64)
    want = softmax(scores, axis=1)

    variants = {"(rows, K) chunks (stop 32)": lambda: stop_32_normalised(scores, "proba")[0],
                "transposed chunks (scoring.normalised)": lambda: scoring.normalised(
                    scores, "proba")[0]}
    for name, call in variants.items():
        if not np.allclose(call(), want, rtol=1e-12, atol=0):
            sys.exit(f"normalised by {name}: not SciPy's softmax")
    print_ratios(f"normalising the {n:,} x {k} float64 exact scores", timed(variants),
           "(rows, K) chunks (stop 32)")

    real_tail, real_normalised = _sparse.dense_rising_tail, scoring.normalised

    def from_chunk(a, x, steps, integral=False, positions=None):
        if positions is None:
            return real_tail(a, x, steps, integral)
        return real_tail(a, x, steps, bool(positions.min(initial=0) >= 0))

    def as_stop_32():
        _sparse.dense_rising_tail, scoring.normalised = from_chunk, stop_32_normalised
        try:
            return exact.predict_proba(X)
        finally:
            _sparse.dense_rising_tail, scoring.normalised = real_tail, real_normalised

    if not np.allclose(as_stop_32(), exact.predict_proba(X), rtol=1e-12, atol=1e-300):
        sys.exit("predict_proba as at stop 32 and now differ")
    print_ratios(f"predict_proba of the {n:,} rows",
           timed({"plug-in (method='mean')": lambda: mean.predict_proba(X),
                  "exact, as at stop 32 (tail found in the chunk, NumPy's normalisation)":
                      as_stop_32,
                  "exact, now": lambda: exact.predict_proba(X)}),
           "plug-in (method='mean')")


def stop_32_normalised(scores, output, out=None):
    """``scoring.normalised`` as at stop 32 (``"proba"`` and ``"log_proba"``): NumPy's passes
    over ``(rows, K)`` chunks of 16,384 rows, the reductions along the short last axis."""
    scores = np.asarray(scores, dtype=np.float64)
    out = np.empty_like(scores) if out is None else out
    norm = np.empty(scores.shape[0])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for start in range(0, scores.shape[0], 1 << 14):
            rows = slice(start, start + (1 << 14))
            top = scores[rows].max(axis=1, keepdims=True)
            shift = np.where(np.isfinite(top), top, 0.0)
            shifted = scores[rows] - shift
            weight = np.exp(shifted)
            total = weight.sum(axis=1, keepdims=True)
            norm[rows] = (np.log(total) + shift)[:, 0]
            out[rows] = weight / total if output == "proba" else shifted - np.log(total)
    return out, norm


if __name__ == "__main__":
    main()
