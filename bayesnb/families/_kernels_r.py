r"""The kernels of R's ``density(kernel=)``, scaled as R scales them so that the bandwidth
:math:`h` is the kernel's standard deviation, in log space.

With :math:`a = c\,h` the half-width of the support and :math:`t = (x - x_i)/a`, R's
``density.default`` writes (``|x - x_i| < a``, else 0; the Gaussian has no support limit):

* gaussian: :math:`\phi((x - x_i)/h)/h`;
* rectangular (:math:`c = \sqrt 3`): :math:`1/(2a)`;
* triangular (:math:`c = \sqrt 6`): :math:`(1 - |t|)/a`;
* epanechnikov (:math:`c = \sqrt 5`): :math:`\tfrac34 (1 - t^2)/a`;
* biweight (:math:`c = \sqrt 7`): :math:`\tfrac{15}{16} (1 - t^2)^2/a`;
* cosine (:math:`c = 1/\sqrt{1/3 - 2/\pi^2}`): :math:`(1 + \cos \pi t)/(2a)`;
* optcosine (:math:`c = 1/\sqrt{1 - 8/\pi^2}`): :math:`\tfrac\pi4 \cos(\pi t/2)/a`.

Each is computed as ``log_shape(t) - log(a) - const``: ``log1p`` keeps the shapes accurate near
the support's edge, and the cosine's :math:`1 + \cos \pi t` is written
:math:`2\cos^2(\pi t/2)`, which does not cancel there. Outside the support (``|t| >= 1``, R's
strict inequality) the log kernel is ``-inf``.
"""

from __future__ import annotations

import numpy as np

#: the kernels by code (``KDESettings.kernel``), in R's order
KERNELS = ("gaussian", "epanechnikov", "rectangular", "triangular", "biweight", "cosine",
           "optcosine")
#: support half-width in bandwidths (R's ``a / bw``); the Gaussian's is unbounded
SUPPORT = {"gaussian": np.inf, "rectangular": np.sqrt(3.0), "triangular": np.sqrt(6.0),
           "epanechnikov": np.sqrt(5.0), "biweight": np.sqrt(7.0),
           "cosine": 1 / np.sqrt(1 / 3 - 2 / np.pi ** 2),
           "optcosine": 1 / np.sqrt(1 - 8 / np.pi ** 2)}
#: ``-log`` of the constant factor of each compact kernel's shape (``1/a`` apart)
_LOG_FACTOR = {"rectangular": np.log(0.5), "triangular": 0.0, "epanechnikov": np.log(0.75),
               "biweight": np.log(15 / 16), "cosine": 0.0, "optcosine": np.log(np.pi / 4)}


def kernel_code(name: str) -> int | None:
    """The code of a kernel name, or None."""
    return KERNELS.index(name) if name in KERNELS else None


def log_norm(kernel: int) -> float:
    """The constant subtracted from ``log_shape`` besides ``log h``: ``log c - log factor``
    (the Gaussian's ``log sqrt(2 pi)``)."""
    name = KERNELS[kernel]
    if name == "gaussian":
        return float(0.5 * np.log(2 * np.pi))
    return float(np.log(SUPPORT[name]) - _LOG_FACTOR[name])


def log_shape(kernel: int, z: np.ndarray) -> None:
    """Replace ``z = (x - x_i)/h`` by the log of the kernel's shape, in place."""
    name = KERNELS[kernel]
    if name == "gaussian":
        z *= z
        z *= -0.5
        return
    t = np.abs(z, out=z)
    t /= SUPPORT[name]
    inside = t < 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "rectangular":
            t[...] = 0.0
        elif name == "triangular":
            np.log1p(-t, out=t)
        elif name in ("epanechnikov", "biweight"):
            t *= t
            np.log1p(-t, out=t)
            if name == "biweight":
                t *= 2.0
        else:  # cosine: 2 log cos(pi t / 2); optcosine: log cos(pi t / 2)
            t *= np.pi / 2
            np.cos(t, out=t)
            np.log(t, out=t)
            if name == "cosine":
                t *= 2.0
    t[~inside] = -np.inf
