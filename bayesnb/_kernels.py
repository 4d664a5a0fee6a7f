"""The jit-compiled numeric entry points: sufficient statistics and class scores.

Families are passed as static arguments (classes are hashable), their parameters as pytrees, so
each kernel compiles once per (families, shapes, dtypes) and is reused across calls. Row counts
are padded to a small set of bucket sizes so a new batch of the same width does not re-trace.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

#: trace counter per kernel, read by the no-retrace tests
TRACES = {"suff_stats": 0, "scores": 0}


@partial(jax.jit, static_argnums=(0, 3))
def suff_stats(family, x, resp, n_levels):
    TRACES["suff_stats"] += 1
    return family.suff_stats(x, resp, n_levels)


@partial(jax.jit, static_argnums=(0, 1))
def scores(families, exact, class_log_prior, tables, xs):
    """``(n, K)`` log p(c = k) + sum over blocks of log p(x_block | c = k), up to a class-free
    per-row constant: the plug-in likelihood, or the exact posterior predictive if ``exact``."""
    TRACES["scores"] += 1
    out = jnp.broadcast_to(class_log_prior, (xs[0].shape[0], class_log_prior.shape[0]))
    for family, table, x in zip(families, tables, xs, strict=True):
        out = out + (family.log_predictive(table, x) if exact else family.log_likelihood(table, x))
    return out


def bucket(n: int) -> int:
    """Padded row count: powers of two up to 1024, then eight steps per octave (<= 12.5%)."""
    if n <= 1024:
        return max(8, 1 << (n - 1).bit_length())
    step = 1 << ((n - 1).bit_length() - 4)
    return -(-n // step) * step


def pad_rows(x: np.ndarray, n: int) -> np.ndarray:
    """Zero rows appended up to ``n`` (zeros are valid for every family and are discarded)."""
    if x.shape[0] == n:
        return x
    pad = np.zeros((n - x.shape[0],) + x.shape[1:], dtype=x.dtype)
    return np.concatenate([x, pad])
