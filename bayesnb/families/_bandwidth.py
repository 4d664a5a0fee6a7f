r"""R's bandwidth rules for a kernel density (``KernelDensity(bandwidth=...)``), of weighted
samples.

* ``"nrd0"`` (R's default ``bw.nrd0``, Silverman's rule of thumb):
  :math:`0.9 \min(s, \mathrm{IQR}/1.34)\, n^{-1/5}`, with :math:`s` the standard deviation with
  divisor :math:`n - 1` and the IQR from R's default quantile type 7 (NumPy's ``"linear"``);
  as in R, where the minimum is 0 it falls back to :math:`s`, then to :math:`|x_1|`, then 1;
* ``"scott"`` (R's ``bw.nrd``): :math:`1.06 \min(s, \mathrm{IQR}/1.34)\, n^{-1/5}`, no
  fallback (a zero bandwidth is an error);
* a positive number (or one per column): used as given.

Weights are frequency weights: :math:`n = \sum_i w_i`, the mean and :math:`s^2` are weighted
(divisor :math:`n - 1`), and the quartiles are type 7 of the sample in which value
:math:`x_i` fills :math:`w_i` consecutive positions (a position :math:`t \in [0, n-1]` falls on
the value whose cumulative weight first exceeds it). With integer weights this is exactly the
sample with duplicated rows; a rule bandwidth needs :math:`n > 1` (R: at least 2 values).
"""

from __future__ import annotations

import numpy as np

#: the rules by code (``KDESettings.rule``)
RULES = {"fixed": 0, "nrd0": 1, "scott": 2}


def bandwidth_of(x: np.ndarray, w: np.ndarray, rule: int, given: float = np.nan) -> float:
    """The bandwidth of one weighted sample under ``rule`` (NaN where undefined)."""
    if rule == RULES["fixed"]:
        return given
    n = float(w.sum())
    if not n > 1:
        return np.nan
    if x.min() == x.max():
        sd = 0.0  # exactly, as R's two-pass var gives for a constant sample
    else:
        mean = float(w @ x) / n
        mean += float(w @ (x - mean)) / n  # R's refinement pass
        sd = float(np.sqrt(w @ (x - mean) ** 2 / (n - 1)))
    q25, q75 = quantile7(x, w, (0.25, 0.75))
    lo = min(sd, (q75 - q25) / 1.34)
    if rule == RULES["nrd0"]:
        if not lo:  # R's bw.nrd0: (lo <- hi) || (lo <- abs(x[1L])) || (lo <- 1.)
            lo = sd or abs(float(x[0])) or 1.0
        return 0.9 * lo * n ** -0.2
    return 1.06 * lo * n ** -0.2  # bw.nrd: no fallback


def quantile7(x: np.ndarray, w: np.ndarray, probs) -> list[float]:
    """R's default quantile (type 7) of the sample where ``x[i]`` fills ``w[i]`` positions:
    with ``n = sum(w)``, position ``h = (n - 1) p`` (0-based) is interpolated between the values
    at ``floor(h)`` and ``floor(h) + 1`` by R's ``(1 - f) lo + f hi``."""
    order = np.argsort(x, kind="stable")
    xs, cum = x[order], np.cumsum(w[order])
    n = cum[-1]

    def at(t):  # the value at 0-based position t: first cumulative weight above t
        return xs[min(int(np.searchsorted(cum, t, side="right")), len(xs) - 1)]

    out = []
    for p in probs:
        h = (n - 1) * p
        lo = np.floor(h)
        q, hi = at(lo), at(lo + 1)
        f = h - lo
        out.append(float((1 - f) * q + f * hi) if f > 0 and hi != q else float(q))
    return out
