"""The fast form of :class:`~bayesnb.families.KernelDensity`: none is needed. Its statistic is
the training sample and its densities are computed on the host in float64 NumPy, so the
family's own maths already holds the float32 guarantee."""

from ..families.kde import KernelDensity
from . import FastForm, register


@register
class KernelDensityFast(FastForm):
    family = KernelDensity
