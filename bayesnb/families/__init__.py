"""Likelihood families: one conjugate pair per file, listed once in ``REGISTRY``.

``REGISTRY`` maps each family's ``name`` (as model files and ``from_tables`` keywords spell
it) to its class.

Examples
--------
>>> import bayesnb as bnb
>>> sorted(bnb.REGISTRY)
['bernoulli', 'categorical', 'exponential', 'gaussian', 'kde', 'lognormal', 'multinomial',
 'negative_binomial', 'poisson']
>>> bnb.REGISTRY["gaussian"] is bnb.Gaussian
True
>>> bnb.REGISTRY["kde"]()
KernelDensity(bandwidth='nrd0', adjust=1.0, kernel='gaussian')
"""

from ._base import Schema
from ._contract import ConjugateFamily, Family, NonparametricFamily
from .bernoulli import Bernoulli
from .categorical import Categorical
from .exponential import Exponential
from .gaussian import Gaussian
from .kde import KernelDensity
from .lognormal import LogNormal
from .multinomial import Multinomial
from .negative_binomial import NegativeBinomial
from .poisson import Poisson

#: Each family's ``name`` (as model files and ``from_tables`` keywords spell it) and its class;
#: adding a family is one file and one line here.
REGISTRY: dict[str, type[Family]] = {
    cls.name: cls for cls in (Bernoulli, Categorical, Multinomial, Gaussian, Poisson,
                              KernelDensity, Exponential, LogNormal,
                              NegativeBinomial)
}

__all__ = ["REGISTRY", "Bernoulli", "Categorical", "ConjugateFamily", "Exponential", "Family",
           "Gaussian", "KernelDensity", "LogNormal", "Multinomial", "NegativeBinomial",
           "NonparametricFamily", "Poisson", "Schema"]
