"""R's one-dimensional optimisers, ported step for step: ``optimize()`` (``Brent_fmin`` in R's
``src/library/stats/src/optimize.c``) and ``uniroot()`` (``R_zeroin2`` in ``zeroin.c``).

R's bandwidth selectors ``bw.ucv``, ``bw.bcv`` and ``bw.SJ`` stop these searches at a loose
tolerance (a tenth of the lower end of the interval), so the bandwidth they return depends on
the exact sequence of points the search visits: matching R to 1e-6 needs the same algorithm,
not merely another minimiser or root finder. Non-finite function values are replaced as R's
``fcn1``/``fcn2`` do (by the largest double, keeping the sign of -Inf for root finding).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable

DBL_EPSILON = sys.float_info.epsilon
DBL_MAX = sys.float_info.max


def _finite_min(f: Callable[[float], float]) -> Callable[[float], float]:
    def g(x: float) -> float:  # R's fcn1: NA/Inf replaced by the maximum positive value
        v = float(f(x))
        return v if math.isfinite(v) else DBL_MAX
    return g


def _finite_root(f: Callable[[float], float]) -> Callable[[float], float]:
    def g(x: float) -> float:  # R's fcn2: -Inf keeps its sign
        v = float(f(x))
        if math.isfinite(v):
            return v
        return -DBL_MAX if v == -math.inf else DBL_MAX
    return g


def optimize(f: Callable[[float], float], lower: float, upper: float, tol: float) -> float:
    """R's ``optimize(f, c(lower, upper), tol = tol)$minimum`` (Brent's golden section and
    parabolic interpolation)."""
    f = _finite_min(f)
    c = (3.0 - math.sqrt(5.0)) * 0.5
    eps = math.sqrt(DBL_EPSILON)
    a, b = lower, upper
    v = w = x = a + c * (b - a)
    d = e = 0.0
    fx = fv = fw = f(x)
    tol3 = tol / 3.0
    while True:
        xm = (a + b) * 0.5
        tol1 = eps * abs(x) + tol3
        t2 = tol1 * 2.0
        if abs(x - xm) <= t2 - (b - a) * 0.5:
            return x
        p = q = r = 0.0
        if abs(e) > tol1:  # fit a parabola
            r = (x - w) * (fx - fv)
            q = (x - v) * (fx - fw)
            p = (x - v) * q - (x - w) * r
            q = (q - r) * 2.0
            if q > 0.0:
                p = -p
            else:
                q = -q
            r = e
            e = d
        if abs(p) >= abs(q * 0.5 * r) or p <= q * (a - x) or p >= q * (b - x):
            e = (b - x) if x < xm else (a - x)  # a golden-section step
            d = c * e
        else:  # a parabolic-interpolation step
            d = p / q
            u = x + d
            if u - a < t2 or b - u < t2:  # not too close to the ends
                d = tol1
                if x >= xm:
                    d = -d
        if abs(d) >= tol1:
            u = x + d
        elif d > 0.0:
            u = x + tol1
        else:
            u = x - tol1
        fu = f(u)
        if fu <= fx:
            if u < x:
                b = x
            else:
                a = x
            v, w, x = w, x, u
            fv, fw, fx = fw, fx, fu
        else:
            if u < x:
                a = u
            else:
                b = u
            if fu <= fw or w == x:
                v, fv = w, fw
                w, fw = u, fu
            elif fu <= fv or v == x or v == w:
                v, fv = u, fu


def uniroot(f: Callable[[float], float], lower: float, upper: float, tol: float,
            maxiter: int = 1000) -> float:
    """R's ``uniroot(f, c(lower, upper), tol = tol)$root`` (no interval extension): raises
    ``ValueError`` where ``f`` has the same sign at both ends, as R stops."""
    f = _finite_root(f)
    fa, fb = f(lower), f(upper)
    if not (math.copysign(1, fa) * math.copysign(1, fb) <= 0 or fa == 0 or fb == 0):
        raise ValueError("f() values at end points not of opposite sign")
    a, b = lower, upper
    c, fc = a, fa
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    for _ in range(maxiter + 1):
        prev_step = b - a
        if abs(fc) < abs(fb):  # b the best approximation
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol_act = 2 * DBL_EPSILON * abs(b) + tol / 2
        new_step = (c - b) / 2
        if abs(new_step) <= tol_act or fb == 0.0:
            return b
        if abs(prev_step) >= tol_act and abs(fa) > abs(fb):  # interpolation may be tried
            cb = c - b
            if a == c:  # linear interpolation
                t1 = fb / fa
                p = cb * t1
                q = 1.0 - t1
            else:  # inverse quadratic interpolation
                q, t1, t2 = fa / fc, fb / fc, fb / fa
                p = t2 * (cb * q * (q - t1) - (b - a) * (t1 - 1.0))
                q = (q - 1.0) * (t1 - 1.0) * (t2 - 1.0)
            if p > 0.0:
                q = -q
            else:
                p = -p
            if p < (0.75 * cb * q - abs(tol_act * q) / 2) and p < abs(prev_step * q / 2):
                new_step = p / q
        if abs(new_step) < tol_act:
            new_step = tol_act if new_step > 0.0 else -tol_act
        a, fa = b, fb
        b += new_step
        fb = f(b)
        if (fb > 0 and fc > 0) or (fb < 0 and fc < 0):
            c, fc = a, fa
    return b  # R warns "_NOT_ converged" and returns the last approximation
