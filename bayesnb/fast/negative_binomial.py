"""The NegativeBinomial's form: no float32 kernels (its kernels compute in float64, as an
unregistered family's would), only its maths on the host, which runs on NumPy, so small tables
are fitted and scored there and compile nothing (``_host.HOST_MATHS_ENTRIES``) and the tables
are finished in float64 on the host. It serves the family's per-``r`` classes."""

from __future__ import annotations

from ..families.negative_binomial import NegativeBinomial
from . import FastForm, register


@register
class NegativeBinomialFast(FastForm):
    family = NegativeBinomial
    float32_safe = False
    host_numeric = True
    host_maths = True
    serves_subclasses = True
