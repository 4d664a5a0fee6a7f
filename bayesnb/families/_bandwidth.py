r"""R's bandwidth selectors for a kernel density (``KernelDensity(bandwidth=...)``), of weighted
samples. Names are read as R's ``density(bw=)`` reads them, case-insensitively.

* ``"nrd0"`` (R's default ``bw.nrd0``, Silverman's rule of thumb):
  :math:`0.9 \min(s, \mathrm{IQR}/1.34)\, n^{-1/5}`, with :math:`s` the standard deviation with
  divisor :math:`n - 1` and the IQR from R's default quantile type 7 (NumPy's ``"linear"``);
  as in R, where the minimum is 0 it falls back to :math:`s`, then to :math:`|x_1|`, then 1;
* ``"nrd"`` (R's ``bw.nrd``, Scott's rule; ``"scott"`` is the same rule under this library's
  earlier name): :math:`1.06 \min(s, \mathrm{IQR}/1.34)\, n^{-1/5}`, no fallback;
* ``"ucv"``, ``"bcv"`` (R's ``bw.ucv``, ``bw.bcv``): unbiased and biased cross-validation,
  minimised by R's ``optimize`` over :math:`[h_{max}/10, h_{max}]`,
  :math:`h_{max} = 1.144\, s\, n^{-1/5}`, with tolerance :math:`h_{max}/100`;
* ``"SJ"`` = ``"SJ-ste"``, ``"SJ-dpi"`` (R's ``bw.SJ``, Sheather & Jones: solve-the-equation
  by R's ``uniroot``, widening the interval as R does, or direct plug-in), with
  :math:`\min(s, \mathrm{IQR}/1.349)` as the scale;
* a positive number (or one per column): used as given.

The cross-validation and Sheather-Jones criteria read R's ``nb = 1000`` binned pair counts:
with :math:`d = 1.01\,(\max x - \min x)/1000`, value :math:`x_i` falls in bin
:math:`\operatorname{trunc}(x_i/d)` and ``cnt[k]`` counts the pairs :math:`i < j` whose bins are
:math:`k` apart (R's ``bw_den``; ``bw_den_binned`` above 500 values gives the same counts). The
searches are R's own (``families._r_brent``), so the results equal R's ``bw.*``, not merely
their optimum.

Weights are frequency weights throughout: :math:`n = \sum_i w_i`, the mean and :math:`s^2`
are weighted (divisor :math:`n - 1`), the quartiles are type 7 of the sample in which value
:math:`x_i` fills :math:`w_i` consecutive positions (a position :math:`t \in [0, n-1]` falls on
the value whose cumulative weight first exceeds it), and a bin holding total weight
:math:`c_b` contributes :math:`c_b c_{b'}` pairs with bin :math:`b'` and :math:`c_b (c_b-1)/2`
within itself, as R's ``bw_den_binned`` counts duplicates. With integer weights every selector
is therefore exactly R's on the sample with duplicated rows; a selector needs :math:`n > 1`
(R: at least 2 values).
"""

from __future__ import annotations

import numpy as np

from ._r_brent import optimize, uniroot

#: the rules by code (``KDESettings.rule``); codes 0-2 are those of earlier model files
RULES = {"fixed": 0, "nrd0": 1, "nrd": 2, "ucv": 3, "bcv": 4, "SJ-ste": 5, "SJ-dpi": 6}
#: the names accepted, lower-cased (R's ``tolower(bw)``), and the rule each names
NAMES = {"nrd0": "nrd0", "nrd": "nrd", "scott": "nrd", "ucv": "ucv", "bcv": "bcv",
         "sj": "SJ-ste", "sj-ste": "SJ-ste", "sj-dpi": "SJ-dpi"}
#: R's bin count (``nb = 1000L``) and its cut-off at sqrt(1000) bandwidths (``DELMAX``)
NB, DELMAX = 1000, 1000.0
SQRT_PI, INV_SQRT_2PI = float(np.sqrt(np.pi)), float(1 / np.sqrt(2 * np.pi))


class UndefinedBandwidth(ValueError):
    """A selector with no answer for this sample (R stops with the same reason)."""


def rule_code(name: str) -> int | None:
    """The code of a rule name (R's spelling, any case), or None."""
    rule = NAMES.get(name.lower()) if isinstance(name, str) else None
    return None if rule is None else RULES[rule]


def bandwidth_of(x: np.ndarray, w: np.ndarray, rule: int, given: float = np.nan) -> float:
    """The bandwidth of one weighted sample under ``rule``: NaN where it needs more weight
    than the sample has; raises :class:`UndefinedBandwidth` where R's selector stops."""
    if rule == RULES["fixed"]:
        return given
    n = float(w.sum())
    if not n > 1:
        return np.nan
    sd = _sd(x, w, n)
    q25, q75 = quantile7(x, w, (0.25, 0.75))
    if rule in (RULES["nrd0"], RULES["nrd"]):
        lo = min(sd, (q75 - q25) / 1.34)
        if rule == RULES["nrd0"]:
            if not lo:  # R's bw.nrd0: (lo <- hi) || (lo <- abs(x[1L])) || (lo <- 1.)
                lo = sd or abs(float(x[0])) or 1.0
            return 0.9 * lo * n ** -0.2
        return 1.06 * lo * n ** -0.2  # bw.nrd: no fallback
    if x.min() == x.max():
        return 0.0  # no spread: R's interval is [0, 0] (refused as a zero bandwidth)
    d, cnt = pair_counts(x, w)
    if rule in (RULES["ucv"], RULES["bcv"]):
        hmax = 1.144 * sd * n ** -0.2
        crit = _ucv if rule == RULES["ucv"] else _bcv
        return optimize(lambda h: crit(n, d, cnt, h), 0.1 * hmax, hmax, 0.1 * (0.1 * hmax))
    return _sj(n, d, cnt, min(sd, (q75 - q25) / 1.349), rule == RULES["SJ-dpi"])


def search_end_warning(x: np.ndarray, w: np.ndarray, rule: int, h: float) -> str | None:
    """R's warning for ``bw.ucv``/``bw.bcv``: the minimum is at an end of the search range
    (the criterion may decrease beyond it), or None."""
    if rule not in (RULES["ucv"], RULES["bcv"]) or not h > 0:
        return None
    n = float(w.sum())
    upper = 1.144 * _sd(x, w, n) * n ** -0.2
    lower = 0.1 * upper
    tol = 0.1 * lower
    if h < lower + tol or h > upper - tol:
        return (f"the {'ucv' if rule == RULES['ucv'] else 'bcv'} minimum occurred at one end "
                f"of R's range [{lower:.4g}, {upper:.4g}] (R warns the same)")
    return None


def _sd(x: np.ndarray, w: np.ndarray, n: float) -> float:
    if x.min() == x.max():
        return 0.0  # exactly, as R's two-pass var gives for a constant sample
    mean = float(w @ x) / n
    mean += float(w @ (x - mean)) / n  # R's refinement pass
    return float(np.sqrt(w @ (x - mean) ** 2 / (n - 1)))


def pair_counts(x: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray]:
    """R's bin width ``d`` and weighted pair counts ``cnt`` (length ``NB``), see above."""
    d = (float(x.max()) - float(x.min())) * 1.01 / NB
    bins = np.trunc(x / d)  # C's (int)(x / dd), and R's trunc(abs(x)/d) * sign(x)
    c = np.bincount((bins - bins.min()).astype(np.int64), weights=w)
    cnt = np.zeros(max(NB, c.size))
    cnt[0] = float(np.sum(c * (c - 1.0))) * 0.5  # pairs within a bin, not with oneself
    if c.size > 1:
        cnt[1:c.size] = np.correlate(c, c, "full")[c.size:]  # sum_i c[i] c[i + k]
    return d, cnt


def _terms(d: float, cnt: np.ndarray, h: float):
    """``delta = (i d / h)^2`` and the counts, up to R's ``DELMAX`` cut-off."""
    delta = np.arange(cnt.size) * d / h
    delta *= delta
    m = int(np.searchsorted(delta >= DELMAX, True))  # the loop's break: delta increases
    return delta[:m], cnt[:m]


def _ucv(n, d, cnt, h):  # R's bw_ucv
    delta, c = _terms(d, cnt, h)
    s = np.cumsum((np.exp(-delta / 4.0) - np.sqrt(8.0) * np.exp(-delta / 2.0)) * c)
    return (0.5 + (s[-1] if s.size else 0.0) / n) / (n * h * SQRT_PI)


def _bcv(n, d, cnt, h):  # R's bw_bcv
    delta, c = _terms(d, cnt, h)
    s = np.cumsum(np.exp(-delta / 4) * (delta * delta - 12 * delta + 12) * c)
    return (1 + (s[-1] if s.size else 0.0) / (32.0 * n)) / (2.0 * n * h * SQRT_PI)


def _phi(n, d, cnt, h, order):  # R's bw_phi4 (order 4) and bw_phi6 (order 6)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        delta, c = _terms(d, cnt, h)
        poly = (delta * delta - 6.0 * delta + 3.0 if order == 4 else
                delta * delta * delta - 15 * delta * delta + 45 * delta - 15)
        s = np.cumsum(np.exp(-delta / 2.0) * poly * c)
        s = 2.0 * (s[-1] if s.size else 0.0) + (3.0 * n if order == 4 else -15.0 * n)
        return float(s / (n * (n - 1) * h ** float(order + 1)) * INV_SQRT_2PI)


def _sj(n, d, cnt, scale, dpi: bool) -> float:
    """R's ``bw.SJ`` after the pair counts, with its errors."""
    a, b = 1.24 * scale * n ** (-1 / 7), 1.23 * scale * n ** (-1 / 9)
    c1 = 1 / (2 * SQRT_PI * n)
    td = -_phi(n, d, cnt, b, 6)
    if not (np.isfinite(td) and td > 0):
        raise UndefinedBandwidth("R's bw.SJ stops: sample is too sparse to find TD")
    with np.errstate(invalid="ignore", divide="ignore"):
        if dpi:
            h = float((c1 / _phi(n, d, cnt, (2.394 / (n * td)) ** (1 / 7), 4)) ** 0.2)
            if not np.isfinite(h):
                raise UndefinedBandwidth("R's bw.SJ(method = 'dpi') gives NaN: the estimated "
                                         "density functional is negative")
            return h
        alph2 = 1.357 * (_phi(n, d, cnt, a, 4) / td) ** (1 / 7)
    if not np.isfinite(alph2):
        raise UndefinedBandwidth("R's bw.SJ stops: sample is too sparse to find alph2")

    def fsd(h):
        with np.errstate(invalid="ignore", divide="ignore"):
            return (c1 / _phi(n, d, cnt, alph2 * h ** (5 / 7), 4)) ** 0.2 - h

    upper = 1.144 * scale * n ** -0.2
    lower = 0.1 * upper
    for itry in range(1, 101):  # R widens the interval, alternately, at most 99 times
        ends = fsd(lower) * fsd(upper)
        if np.isnan(ends):
            raise UndefinedBandwidth("R's bw.SJ stops: the equation is undefined (NaN) at an "
                                     "end of its interval")
        if not ends > 0:
            break
        if itry > 99:
            raise UndefinedBandwidth("R's bw.SJ stops: no solution in the specified range of "
                                     "bandwidths")
        if itry % 2:
            upper *= 1.2
        else:
            lower /= 1.2
    return uniroot(fsd, lower, upper, 0.1 * lower)  # R's tol = 0.1 * lower, read here


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
