"""The LogNormal's form: no float32 kernels (its kernels compute in float64, as an unregistered
family's would), only its maths on the host: the Gaussian's on ``log x``, which runs on NumPy,
so small tables are fitted and scored there and compile nothing (``_host.HOST_MATHS_ENTRIES``)
and the tables are finished in float64 on the host."""

from __future__ import annotations

from ..families.lognormal import LogNormal
from . import FastForm, register


@register
class LogNormalFast(FastForm):
    family = LogNormal
    float32_safe = False
    host_numeric = True
    host_maths = True
