r"""The exact count predictives' Gamma-function terms as products (score kernels).

For an integer count :math:`x \le S`,
:math:`h(a, x) = \log\Gamma(a + x) - \log\Gamma(a) - x\log a = \sum_{t=1}^{S-1} [x > t]\,
\log(1 + t/a)`, so the Dirichlet-multinomial and negative-binomial sums over a row's columns
are products of the indicator matrices :math:`[X > t]` with float64 tables
(``_sparse.step_tables``): no per-(row, class, column) log-Gamma. The counts this leaves out
(above ``S``, not integers) are few by the choice of ``S`` (``_exact.choose_steps``) and are
added on the host in float64 (``_sparse.dense_rising_tail``); :func:`needs_tail` tells the
host which rows have any, so it reads only those.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def n_steps(x: jax.Array, steps: jax.Array) -> int:
    """``S``, static: the tables hold ``S - 1`` blocks of the block's width."""
    return steps.shape[0] // x.shape[1] + 1 if x.shape[1] else 1


def integer(x: jax.Array) -> jax.Array:
    """Integer counts (NaN is not)."""
    return x == jnp.floor(x)


def step_sums(x: jax.Array, steps: jax.Array) -> jax.Array:
    r"""``(n, K)``: :math:`\sum_j \sum_{t=1}^{\min(x_{ij}, S)-1} \log(1 + t/a_{kj})` over
    the integer counts of ``x`` (NaN and non-integer values count as 0: the host adds their
    whole term, and the steps past ``S`` of larger counts), as one product of the stacked
    indicators."""
    s = n_steps(x, steps)
    if s <= 1:
        return jnp.zeros((x.shape[0], steps.shape[1]), steps.dtype)
    xr = jnp.where(integer(x), x, 0.0)
    hot = jnp.concatenate([(xr > t).astype(steps.dtype) for t in range(1, s)], axis=1)
    return hot @ steps


def needs_tail(x: jax.Array, steps: jax.Array) -> jax.Array:
    """``(n,)`` int8: per row, whether it holds a count the products do not finish: 0 none,
    1 integer counts above ``S`` only, 2 a value that is not an integer (the host reads only
    the rows flagged, and scans a row flagged 1 for counts above ``S`` alone)."""
    observed = ~jnp.isnan(x)
    above = jnp.any((x > n_steps(x, steps)) & observed, axis=1)
    fractional = jnp.any(~integer(x) & observed, axis=1)
    return jnp.maximum(above.astype(jnp.int8), 2 * fractional.astype(jnp.int8))
