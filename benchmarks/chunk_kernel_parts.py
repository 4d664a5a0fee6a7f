"""What one chunk of the count families' statistics kernel costs, part by part (issue 12 section
3: the Multinomial fit, whose float64 cell is still missed).

On one staged chunk of ``run.py``'s Multinomial documents (the library's chunk: 8 MB, 1,024
rows x 1,000 columns in float64, 2,048 in float32), each variant jit-compiled alone and timed
alternating with the others (medians), as a ratio to one read of the chunk (``x.sum()``):

- the chunk's bounds (smallest, largest value, largest fractional part: what the value checks
  and the branches need) as three reductions, and as one variadic reduction
  (``_steps.chunk_bounds``, what the kernels use);
- the row sums of ``log x!`` on chunks whose largest count is 4, 8 and 16, by 3 steps, by 8
  and 16 selects and by the table gather (the branches a bounds pass chose among until stop
  34), and by the gather whose markers flag any entry that is not an integer below 256
  (``_steps.small_count_log_factorials``: what ``multinomial.log_factorial_sum`` and the
  statistics kernel's value checks read since stop 35, without a bounds pass);
- the library's whole statistics kernel (``_kernels.suff_stats``), the class sums alone as
  the one-hot product and as one scatter-add (``segment_sum``: what a float64 chunk whose
  weights are all 1 takes, ``_kernels.Labels.sum``), and the staging copy of one chunk from
  X (``np.copyto``, as ``_kernels._Staging`` makes it).

Every variant's answer is checked (bounds against NumPy, ``log x!`` sums against SciPy, the
kernel's class sums against NumPy's product) and a wrong one fails the script.

Usage::

    python benchmarks/chunk_kernel_parts.py [--x64] [--repeats 300]
"""

import argparse
import sys
from pathlib import Path

import numpy as np

#: chunks of X (384 MiB): the staging copies cycle through them
CHUNKS = 48


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--x64", action="store_true", help="float64 policy")
    parser.add_argument("--repeats", type=int, default=300)
    args = parser.parse_args()

    import jax

    jax.config.update("jax_enable_x64", args.x64)
    import jax.numpy as jnp
    from scipy.special import gammaln

    from bayesnb.families import multinomial
    from bayesnb.fast import _kernels
    from bayesnb.fast._steps import (
        LOG_FACTORIAL,
        chunk_bounds,
        row_sums,
        small_count_log_factorials,
    )

    sys.path.insert(0, str(Path(__file__).parent))
    from harness import alternating_medians, print_ratios
    from run import make_multinomial

    dtype = np.dtype(np.float64 if args.x64 else np.float32)
    width, k = 1_000, 20
    rows = _kernels.chunk_rows(1 << 30, width * dtype.itemsize)
    X, y = make_multinomial(CHUNKS * rows, width, k)  # the copies cycle through X
    X = X.astype(dtype)
    chunk = _kernels.aligned_empty((rows, width), dtype)
    chunk[:] = X[rows:2 * rows]
    codes, weights = y[rows:2 * rows].astype(np.int32), np.ones(rows, dtype)
    table = LOG_FACTORIAL

    def timed(variants: dict) -> dict:
        return alternating_medians(variants, args.repeats)

    print(f"# one {rows:,} x {width:,} {dtype.name} chunk ({chunk.nbytes / 2**20:.0f} MiB), "
          f"{k} classes; jax {jax.__version__}; medians of {args.repeats}, alternating; "
          "ratios to one read of the chunk")

    read = jax.jit(lambda x: x.sum())
    three = jax.jit(lambda x: (x.min(), x.max(), (x - jnp.floor(x)).max()))
    one = jax.jit(chunk_bounds)
    want = (chunk.min(), chunk.max(), (chunk - np.floor(chunk)).max())
    for name, f in (("three reductions", three), ("one pass", one)):
        got = tuple(float(v) for v in f(chunk))
        if got != tuple(float(v) for v in want):
            sys.exit(f"bounds by {name}: {got} != NumPy's {want}")
    print_ratios("the chunk's bounds (min, max, largest fractional part)",
           timed({"one read (x.sum())": lambda: read(chunk),
                  "three reductions": lambda: three(chunk),
                  "one variadic reduction (chunk_bounds)": lambda: one(chunk)}),
           "one read (x.sum())")

    def steps(x):
        out = jnp.zeros_like(x)
        for t in range(1, 4):
            out = out + jnp.where(x > t, float(np.log1p(t)), 0.0)
        return row_sums(out)

    def selected(x, values):  # stop 34's binary search of selects, exact table values
        def pick(lo, hi):
            if hi - lo == 1:
                return jnp.asarray(values[lo], x.dtype)
            mid = (lo + hi) // 2
            return jnp.where(x >= mid, pick(mid, hi), pick(lo, mid))
        return pick(0, len(values))

    forms = {
        "3 steps": (4, jax.jit(steps)),
        "8 selects": (8, jax.jit(lambda x: row_sums(selected(x, table[:9])))),
        "16 selects": (16, jax.jit(lambda x: row_sums(selected(x, table[:17])))),
        "table gather": (255, jax.jit(lambda x: row_sums(jnp.take(
            jnp.asarray(table, x.dtype), x.astype(jnp.int32), mode="clip")))),
        "marked gather (small_count_log_factorials)": (255, jax.jit(small_count_log_factorials)),
    }
    rng = np.random.default_rng(0)
    rtol = 1e-12 if args.x64 else 1e-5
    for top in (4, 8, 16):
        counts = _kernels.aligned_empty((rows, width), dtype)
        counts[:] = np.minimum(rng.poisson(0.12, (rows, width))
                               * rng.integers(1, top + 1, (rows, width)), top)
        counts[0, 0] = top
        expected = gammaln(counts.astype(np.float64) + 1.0).sum(axis=1)
        usable = {name: f for name, (limit, f) in forms.items() if top <= limit}
        for name, f in usable.items():
            got = np.asarray(f(counts), dtype=np.float64)
            if not np.allclose(got, expected, rtol=rtol, atol=rtol):
                sys.exit(f"log x! row sums by {name}, counts up to {top}: not SciPy's")
        variants = {"one read (x.sum())": lambda c=counts: read(c)}
        variants.update({name: (lambda f=f, c=counts: f(c)) for name, f in usable.items()})
        print_ratios(f"row sums of log x!, counts up to {top}", timed(variants),
                     "one read (x.sum())")

    def kernel():
        return _kernels.suff_stats((multinomial.Multinomial,), (None,), k, (chunk,), codes,
                                   weights)

    product = jax.jit(lambda x, c, w: _kernels._one_hot_t(c, w, k, x.dtype) @ x)
    scatter = jax.jit(lambda x, c: jax.ops.segment_sum(x, c, num_segments=k))
    stats, _ = kernel()
    sums = multinomial.finish_class_sums(np.asarray(stats[0].counts))
    hot = np.zeros((rows, k))
    hot[np.arange(rows), codes] = 1.0
    expected = hot.T @ chunk.astype(np.float64)
    for name, got in (("kernel's", sums), ("product's", product(chunk, codes, weights)),
                      ("scatter-add's", scatter(chunk, codes))):
        if not np.allclose(np.asarray(got, dtype=np.float64), expected, rtol=1e-12, atol=0):
            sys.exit(f"the {name} class sums are not NumPy's product")
    staging = _kernels.aligned_empty((rows, width), dtype)
    starts = iter(range(0, 10**9))

    def copy():  # a chunk of X not read for CHUNKS copies, as in a fit's stream
        start = (next(starts) % CHUNKS) * rows
        np.copyto(staging, X[start:start + rows])

    print_ratios("the Multinomial statistics kernel",
           timed({"one read (x.sum())": lambda: read(chunk),
                  "whole kernel (_kernels.suff_stats)": kernel,
                  "its class sums alone, one-hot product": lambda: product(chunk, codes,
                                                                           weights),
                  "its class sums alone, scatter-add": lambda: scatter(chunk, codes),
                  "staging copy of a chunk (np.copyto)": copy}),
           "one read (x.sum())")


if __name__ == "__main__":
    main()
